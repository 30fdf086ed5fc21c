"""Encoding one long text with bounded memory: blocks in, ids out.

``Tokenizer.encode_stream(blocks)`` encodes a text given as consecutive
pieces and yields the ids as soon as more text can no longer change them
(the core keeps only the unfinished end: the last two words and a possible
start of a special token; it finds the cut with the same code as streaming
word counting). ``Tokenizer.encode_file`` reads a file a block at a time
(:func:`bytepair.corpus.text_blocks`: UTF-8 checked, invalid bytes named by
their byte offset) and writes the ids as it goes, atomically:

- ``npy``: a NumPy array, ``uint16`` when every id fits (``n_vocab <=
  65536``), else ``uint32``, as the shards of ``encode-dataset``;
- ``text``: the ids as decimal numbers separated by spaces, one line, as
  ``bytepair encode`` prints them.

The ids (and any error) are exactly those of ``Tokenizer.encode`` on the
whole text with the same options. Memory is the block size plus the
longest word, never the text.

>>> import io
>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("the cat sat on the mat " * 10, num_merges=8)
>>> out = io.BytesIO()
>>> tok.encode_file(io.BytesIO(b"the cat sat"), out, format="text")
3
>>> out.getvalue().decode().split() == [str(i) for i in tok.encode("the cat sat")]
True
"""

from __future__ import annotations

import array
import os
import sys
from typing import IO, Any, BinaryIO, Iterable, Iterator, List, Optional, Union

from bytepair.errors import BytepairError
from bytepair.limits import check_text, replace_surrogates
from bytepair.corpus import Source, source, text_blocks
from bytepair._io import atomic_open

FORMATS = ("npy", "text")
_NPY_HEADER_BYTES = 128  # fixed, so the length can be written at the end

PathOrFile = Union[str, "os.PathLike[str]", BinaryIO, IO[bytes]]


def encode_stream(tok: Any, blocks: Iterable[str], allowed: Any, disallowed: Any,
                  dropout: Optional[tuple] = None, add: bool = False) -> Iterator[List[int]]:
    """The ids of the text ``"".join(blocks)``, list by list (see
    ``Tokenizer.encode_stream``); ``allowed``/``disallowed``/``add`` as the
    core takes them (a list, or None for all)."""

    stream = tok._core.stream(allowed, disallowed, dropout, add)
    held = ""  # a high surrogate at the end of a block pairs with the next block's start
    for block in blocks:
        block = held + check_text(block)
        held = ""
        if block and "\ud800" <= block[-1] <= "\udbff":
            block, held = block[:-1], block[-1]
        try:
            ids = stream.feed(block)
        except UnicodeEncodeError:
            ids = stream.feed(replace_surrogates(block))
        if ids:
            yield ids
    if held:
        yield stream.feed(replace_surrogates(held))
    yield stream.finish()


def npy_header(dtype: str, n: int) -> bytes:
    """A version 1.0 ``.npy`` header of exactly 128 bytes for a 1-D array
    of ``n`` items of ``dtype`` (``"uint16"``/``"uint32"``, little-endian).

    >>> h = npy_header("uint16", 3); len(h), h[:6]
    (128, b'\\x93NUMPY')
    """
    descr = {"uint16": "<u2", "uint32": "<u4"}[dtype]
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, n)
    text = text.ljust(_NPY_HEADER_BYTES - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + (len(text)).to_bytes(2, "little") + text.encode("latin-1")


class IdsWriter:
    """Writes ids to a binary file as ``npy`` or ``text`` (see the module
    docstring); ``close()`` completes the file (the npy length, the text's
    final newline). An npy file must be seekable (its header is written
    last)."""

    def __init__(self, fh: Union[BinaryIO, IO[bytes]], format: str, n_vocab: int) -> None:
        if format not in FORMATS:
            raise BytepairError(f"unknown ids format {format!r}: use 'npy' or 'text'")
        self.fh, self.format, self.n = fh, format, 0
        self.dtype = "uint16" if n_vocab <= 65536 else "uint32"
        self._code = "H" if self.dtype == "uint16" else "I"
        if array.array(self._code).itemsize != (2 if self.dtype == "uint16" else 4):  # pragma: no cover
            self._code = "L"
        if format == "npy":
            try:
                self.start = fh.tell()
                fh.write(npy_header(self.dtype, 0))
            except (OSError, AttributeError):
                raise BytepairError("npy output needs a seekable file (write to a path, or use format='text')") from None

    def write(self, ids: List[int]) -> None:
        if not ids:
            return
        if self.format == "npy":
            a = array.array(self._code, ids)
            if sys.byteorder == "big":  # pragma: no cover
                a.byteswap()
            self.fh.write(a.tobytes())
        else:
            self.fh.write(((" " if self.n else "") + " ".join(map(str, ids))).encode("ascii"))
        self.n += len(ids)

    def close(self) -> None:
        if self.format == "npy":
            end = self.fh.tell()
            self.fh.seek(self.start)
            self.fh.write(npy_header(self.dtype, self.n))
            self.fh.seek(end)
        else:
            self.fh.write(b"\n")


def format_for(output: Any, format: Optional[str]) -> str:
    """``format``, or the one ``output``'s name implies (``.npy``: npy; else text)."""
    if format is not None:
        if format not in FORMATS:
            raise BytepairError(f"unknown ids format {format!r}: use 'npy' or 'text'")
        return format
    if isinstance(output, (str, os.PathLike)) and os.fspath(output).lower().endswith(".npy"):
        return "npy"
    return "text"


def write_ids(output: PathOrFile, chunks: Iterable[List[int]], format: Optional[str], n_vocab: int) -> int:
    """Writes the ids of ``chunks`` to ``output`` (a path: atomically, via a
    temporary file and a rename; or an open binary file); returns how many."""

    fmt = format_for(output, format)
    if isinstance(output, (str, os.PathLike)):
        with atomic_open(output) as fh:
            return _write_all(fh, chunks, fmt, n_vocab)
    return _write_all(output, chunks, fmt, n_vocab)


def _write_all(fh: Any, chunks: Iterable[List[int]], fmt: str, n_vocab: int) -> int:
    writer = IdsWriter(fh, fmt, n_vocab)
    for ids in chunks:
        writer.write(ids)
    writer.close()
    return writer.n


def file_blocks(input: PathOrFile, errors: str = "strict", block_bytes: Optional[int] = None,
                report: Any = None) -> Iterator[str]:
    """The text of ``input`` (a path, ``-`` for stdin, or an open binary
    file), block by block; ``.gz``/``.zst`` paths are decompressed.
    ``report("encode", bytes done, total)`` follows progress."""

    if isinstance(input, (str, os.PathLike)):
        path = os.fspath(input)
        src = source(path) if path != "-" else Source("-")
        fh = None
    else:
        src, fh = Source(getattr(input, "name", "<file>") if isinstance(getattr(input, "name", None), str)
                         else "<file>"), input
    total = src.size() if fh is None and not src.compression else None
    done = 0
    for text in text_blocks(src, errors, block_bytes, fh):
        if report is not None:
            done += len(text.encode("utf-8")) if not text.isascii() else len(text)
            report("encode", done, total)
        yield text
