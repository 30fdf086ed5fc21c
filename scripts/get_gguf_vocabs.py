#!/usr/bin/env python3
"""Fetch llama.cpp's vocabulary-only GGUF test files for the GGUF tests.

llama.cpp ships ``models/ggml-vocab-*.gguf`` (a model's tokenizer without
its tensors) with ``.inp``/``.out`` files of test texts and the ids
llama.cpp gives them; the sdist of ``llama-cpp-python==0.3.36`` carries them
under ``vendor/llama.cpp/models/``. The sdist is fetched with
``pip download --no-deps --no-binary llama-cpp-python`` (nothing is built or
installed), checked against the sha256 pinned below, and those files are
extracted into ``CACHE`` (default ``data/gguf``; ``BYTEPAIR_GGUF`` overrides
it). Idempotent: the archive is cached in ``CACHE/.archives``.

Usage: ``python scripts/get_gguf_vocabs.py [CACHE]``; from Python:
``get_gguf_vocabs(folder) -> {name: path}``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tarfile
from typing import Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CACHE = os.path.join(ROOT, "data", "gguf")

REQUIREMENT = "llama-cpp-python==0.3.36"
ARCHIVE = "llama_cpp_python-0.3.36.tar.gz"
SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
MEMBERS = "llama_cpp_python-0.3.36/vendor/llama.cpp/models/"


def _get_vocabs():
    spec = importlib.util.spec_from_file_location("get_vocabs", os.path.join(ROOT, "scripts", "get_vocabs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def get_gguf_vocabs(cache: str = "") -> Dict[str, str]:
    """Fetch (if needed) the sdist, check it, and extract every
    ``ggml-vocab-*`` file; ``{file name: path}``."""
    gv = _get_vocabs()
    cache = cache or os.environ.get("BYTEPAIR_GGUF") or DEFAULT_CACHE
    vocab = gv.Vocab(ARCHIVE, REQUIREMENT, ["--no-binary", "llama-cpp-python"], ARCHIVE, "", SHA256)
    with gv._fetch_lock(cache):  # test workers ask at once: one downloads, the others wait for its file
        archive = gv._archive(vocab, os.path.join(cache, ".archives"))
    digest = gv._sha256(archive)
    if digest != SHA256:
        raise gv.FetchError(f"{archive} has sha256 {digest}, expected {SHA256}")
    paths = {}
    with tarfile.open(archive) as t:
        for m in t.getmembers():
            name = os.path.basename(m.name)
            if not (m.isfile() and m.name.startswith(MEMBERS) and name.startswith("ggml-vocab-")):
                continue
            path = os.path.join(cache, name)
            if not os.path.exists(path) or os.path.getsize(path) != m.size:
                data = t.extractfile(m).read()
                os.makedirs(cache, exist_ok=True)
                gv._write_atomically(path, data)
            paths[name] = path
    if not paths:
        raise gv.FetchError(f"{archive} holds no {MEMBERS}ggml-vocab-* files")
    return paths


def main(argv: List[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: get_gguf_vocabs.py [CACHE]  (default: data/gguf, or $BYTEPAIR_GGUF)", file=sys.stderr)
        return 2
    try:
        paths = get_gguf_vocabs(argv[0] if argv else "")
    except Exception as e:  # FetchError, or a broken archive
        print(f"get_gguf_vocabs: {e}", file=sys.stderr)
        return 1
    for path in paths.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
