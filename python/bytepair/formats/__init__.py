"""Tokenizer files: the native JSON format and the formats of other tools.

Each format module has ``save(tok, path)`` and ``load(path, pattern=None,
special_tokens=None)``, which returns the file's checked description
(:mod:`bytepair.spec`) for ``Tokenizer.load`` to build; :func:`load` detects
the format when not given.

>>> sorted(FORMATS)[:1]
['bytepair']
"""

from __future__ import annotations

import importlib
import os
import re
from typing import Any, Mapping, Optional

from bytepair.errors import BytepairError, FormatError, ResourceError
from bytepair.formats.gguf import check_decoding_kept, looks_like_gguf
from bytepair.formats.magic import named_format
from bytepair.formats.sentencepiece import looks_like_model

MAX_MESSAGE = 2000  # characters of a load error kept (the middle of a longer one is left out)

# format name -> module under bytepair.formats
FORMATS = {
    "bytepair": "native",
    "tiktoken": "tiktoken",
    "hf": "hf",
    "gpt2": "gpt2",
    "subword-nmt": "subword_nmt",
    "transformers": "transformers",  # a folder: tokenizer.json + tokenizer_config.json + special_tokens_map.json
    "sentencepiece": "sentencepiece",
    "tekken": "tekken",
    "gguf": "gguf",  # llama.cpp / ollama model files: the tokenizer in the metadata
}


def _module(fmt: str) -> Any:
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}: use one of {', '.join(sorted(FORMATS))}")
    return importlib.import_module(f"bytepair.formats.{FORMATS[fmt]}")


def detect(path: str) -> str:
    """Guess a file's format from its content (and name): a folder holding
    ``tokenizer.json`` is ``transformers``; another folder, or a file named
    ``vocab.json``/``merges.txt`` (or OpenAI's ``encoder.json``/``vocab.bpe``),
    or a ``#version`` file of byte-level merges (``Ġ``, no ``</w>``), is ``gpt2``; ``GGUF`` magic is ``gguf``; a SentencePiece ``ModelProto`` is ``sentencepiece``; JSON is native when its first key is
    ``"bytepair"``, ``tekken`` when it has Mistral's ``config`` with
    ``default_num_special_tokens``, else ``hf``; ``*.tiktoken`` or lines of
    ``base64 rank`` are ``tiktoken``; other ``#version`` files or lines of two
    symbols are ``subword-nmt``. Binary data that is none of these is refused in one
    line (:class:`FormatError`); other text is tried as the native format
    (whose loader says what is wrong with it).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "ranks")
    >>> _ = open(path, "w").write("IQ== 0\\nIg== 1\\n")
    >>> detect(path)
    'tiktoken'
    """
    if os.path.isdir(path):
        return "transformers" if os.path.isfile(os.path.join(path, "tokenizer.json")) else "gpt2"
    name = os.path.basename(path)
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return "bytepair"
    if name in ("vocab.json", "merges.txt", "encoder.json", "vocab.bpe"):  # Hugging Face's and OpenAI's names
        return "gpt2"
    if looks_like_gguf(head):
        return "gguf"
    stripped = head.lstrip()
    if stripped.startswith(b"{"):
        native = re.match(rb'\{\s*"bytepair"\s*:', stripped) or (b'"bytepair"' in head and b'"pre_tokenizer"' not in head)
        if native:
            return "bytepair"
        if b'"default_num_special_tokens"' in head or (b'"config"' in head and b'"token_bytes"' in head):
            return "tekken"
        return "hf"

    if looks_like_model(head):
        return "sentencepiece"
    if name.endswith(".tiktoken"):
        return "tiktoken"
    if stripped.startswith(b"#version"):
        # GPT-2's merges (byte-level: Ġ for a space) carry the same header as subword-nmt's codes (</w>)
        return "gpt2" if "Ġ".encode() in head and b"</w>" not in head else "subword-nmt"
    lines = head.split(b"\n")[:-1] or head.split(b"\n")
    lines = [line.rstrip(b"\r") for line in lines if line.strip()][:20]
    if lines and all(re.fullmatch(rb"[A-Za-z0-9+/]*=*\s+[0-9]+", line) for line in lines):
        return "tiktoken"
    if lines and all(len(line.split(b" ")) == 2 for line in lines):
        return "gpt2" if "Ġ".encode() in head and b"</w>" not in head else "subword-nmt"
    if _binary(head):
        kind = named_format(head)
        raise FormatError(
            f"{path}: " + (f"{kind}, not a tokenizer file bytepair reads" if kind else
                           f"binary data ({len(head)}+ bytes starting {head[:8].hex(' ')}) that is not a tokenizer file "
                           "bytepair knows (a GGUF model, a SentencePiece .model protobuf, JSON, .tiktoken, GPT-2 merges or "
                           "subword-nmt codes)")
        )
    if name.endswith(".model"):
        raise FormatError(f"{path}: a .model file is a SentencePiece model (a binary ModelProto) or, as Llama 3's, "
                          "a tiktoken file (lines of 'base64 rank'), and this text file is neither")
    return "bytepair"


def _binary(head: bytes) -> bool:
    """NUL bytes or invalid UTF-8 (a character cut at the end of ``head`` is fine)."""
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start < len(head) - 3
    return False


def save(tok: Any, path: str, format: str = "bytepair") -> None:
    """Write ``tok`` to ``path`` in ``format`` (atomically)."""
    # bytepair and gguf keep llama.cpp's decoding of a GGUF file's tokenizer; transformers.save checks it itself
    # (save_pretrained goes there directly)
    if format not in ("bytepair", "gguf", "transformers"):
        check_decoding_kept(tok, f"the {format!r} format")
    _module(format).save(tok, os.fspath(path))


def load(
    path: str,
    format: Optional[str] = None,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> Any:
    """The description of a tokenizer file (``Tokenizer.load`` builds it);
    ``format`` is detected when None."""
    path = os.fspath(path)
    fmt = format or detect(path)
    try:
        return _module(fmt).load(path, pattern=pattern, special_tokens=special_tokens)
    except BytepairError as e:
        message = str(e)
        if len(message) <= MAX_MESSAGE or type(e).__init__ is not BytepairError.__init__:
            raise
        # a message quoting a hostile file's 10 MB token stays readable (and one line)
        raise type(e)(message[: MAX_MESSAGE // 2] + f" [... {len(message) - MAX_MESSAGE} characters left out ...] "
                      + message[-MAX_MESSAGE // 2:]) from None
    except MemoryError:  # one line, as every other refusal (the size limits keep this rare)
        try:
            size = f"{os.path.getsize(path)} bytes"
        except OSError:
            size = "its size unknown"
        raise ResourceError(f"{path}: not enough memory to load this file ({size})") from None
