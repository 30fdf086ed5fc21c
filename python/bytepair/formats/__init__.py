"""Tokenizer files: the native JSON format and the formats of other tools.

Each format module has ``save(tok, path)`` and ``load(path, pattern=None,
special_tokens=None)``; :func:`load` detects the format when not given.

>>> sorted(FORMATS)[:1]
['bytepair']
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Mapping, Optional

from bytepair.errors import FormatError

# format name -> module under bytepair.formats
FORMATS = {"bytepair": "native"}


def _module(fmt: str) -> Any:
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}: use one of {', '.join(sorted(FORMATS))}")
    return importlib.import_module(f"bytepair.formats.{FORMATS[fmt]}")


def detect(path: str) -> str:
    """Guess a file's format from its name and first bytes."""
    if os.path.isdir(path):
        return "gpt2"
    name = os.path.basename(path)
    if name.endswith(".tiktoken"):
        return "tiktoken"
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return "bytepair"
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        return "hf" if b'"bytepair"' not in head else "bytepair"
    if stripped.startswith(b"#version"):
        return "subword-nmt"
    return "bytepair"


def save(tok: Any, path: str, format: str = "bytepair") -> None:
    """Write ``tok`` to ``path`` in ``format`` (atomically)."""
    _module(format).save(tok, os.fspath(path))


def load(
    path: str,
    format: Optional[str] = None,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> Any:
    """Read a tokenizer; ``format`` is detected when None."""
    path = os.fspath(path)
    fmt = format or detect(path)
    return _module(fmt).load(path, pattern=pattern, special_tokens=special_tokens)
