"""Reading inputs for training and dataset encoding, a block at a time.

An input is one of

- a **plain text** file: the whole file is one document, read in blocks of
  1 MB through an incremental UTF-8 decoder (so it is never held
  whole); invalid UTF-8 raises ``InputError`` with the file name and the
  byte offset, unless ``errors="replace"``;
- a **JSONL** file (``*.jsonl``, ``*.ndjson``, ``*.json``, or any file when
  ``field`` is given): one document per line, the string ``field``
  (default ``"text"``) of each line's object; blank lines are skipped; bad
  JSON or a missing field raises ``InputError`` naming the file and line;
- a **Parquet** file (``*.parquet``, ``*.pq``): one document per row, the
  string column ``column`` (default ``"text"``), read one record batch at a
  time with pyarrow;
- a **gzip** (``*.gz``) or **zstd** (``*.zst``, ``*.zstd``) compressed text
  or JSONL file (zstd needs the ``zstandard`` package);
- ``-``: standard input, as plain text (or JSONL when ``field`` is given).

``max_bytes`` keeps only the start of the corpus (as nanochat's character
cap does): inputs are read in order until ``max_bytes`` bytes of text have
been taken; the document where the cap falls is cut there (at a character
boundary) and nothing after it is read. Bytes are the file's bytes for
plain text (after decompression) and the UTF-8 bytes of each document's
text for JSONL and Parquet.

>>> import os, tempfile
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.jsonl")
>>> _ = open(p, "w").write('{"text": "hello"}\\n\\n{"text": "world"}\\n')
>>> [(part.doc, part.text, part.final) for part in read_parts(source(p))]
[(0, 'hello', True), (1, 'world', True)]
"""

from __future__ import annotations

import codecs
import io
import json
import os
import sys
from dataclasses import dataclass
from typing import BinaryIO, Iterator, List, Optional, Sequence

from bytepair.errors import InputError

BLOCK_BYTES = 1 << 20  # raw bytes read at a time from a plain text file (4 MB costs ~20 MB more RSS, no faster)
PARQUET_BATCH_ROWS = 1024

TEXT, JSONL, PARQUET = "text", "jsonl", "parquet"
_JSONL_EXT = (".jsonl", ".ndjson", ".json")
_PARQUET_EXT = (".parquet", ".pq")
_COMPRESSION_EXT = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}
_REPLACE_HINT = "(use errors='replace' to replace invalid bytes)"


@dataclass(frozen=True)
class Source:
    """One input: its path (``-`` for stdin), kind, compression and the
    JSONL field or Parquet column that holds the text."""

    path: str
    kind: str = TEXT
    compression: Optional[str] = None
    field: str = "text"
    column: str = "text"

    @property
    def name(self) -> str:
        return "<stdin>" if self.path == "-" else self.path

    def size(self) -> Optional[int]:
        """Size on disk in bytes (None for stdin or a missing file)."""
        if self.path == "-":
            return None
        try:
            return os.path.getsize(self.path)
        except OSError:
            return None


def source(path: str, field: Optional[str] = None, column: Optional[str] = None) -> Source:
    """The :class:`Source` for ``path``: kind and compression from its name;
    ``field`` makes any non-Parquet file JSONL.

    >>> source("a.jsonl.zst")
    Source(path='a.jsonl.zst', kind='jsonl', compression='zstd', field='text', column='text')
    >>> source("notes.txt.gz").kind, source("x.txt", field="body").kind, source("t.parquet").kind
    ('text', 'jsonl', 'parquet')
    """
    path = os.fspath(path)
    lower = path.lower()
    compression = None
    for ext, comp in _COMPRESSION_EXT.items():
        if lower.endswith(ext):
            compression, lower = comp, lower[: -len(ext)]
            break
    if lower.endswith(_PARQUET_EXT):
        if compression:
            raise InputError(f"{path}: compressed Parquet files are not supported (Parquet compresses its own pages)")
        kind = PARQUET
    elif lower.endswith(_JSONL_EXT) or field is not None:
        kind = JSONL
    else:
        kind = TEXT
    if column is not None and kind != PARQUET:
        raise InputError(f"{path}: column= applies to Parquet files (*.parquet); use field= for JSONL")
    return Source(path, kind, compression, field or "text", column or "text")


def sources(paths: Sequence[str], field: Optional[str] = None, column: Optional[str] = None) -> List[Source]:
    """:func:`source` of each path; ``column`` only applies to the Parquet ones."""
    out = []
    for p in paths:
        s = source(p, field=field)
        if column is not None and s.kind == PARQUET:
            s = Source(s.path, s.kind, s.compression, s.field, column)
        out.append(s)
    return out


@dataclass
class Part:
    """A piece of a document: ``text`` starts at character ``offset`` of
    document ``doc`` (its index in the file) and ``final`` says the document
    ends with it. ``raw`` is the number of input bytes it took."""

    doc: int
    offset: int
    text: str
    final: bool
    raw: int = 0


class Budget:
    """The ``max_bytes`` cap shared by all the inputs of one run."""

    def __init__(self, max_bytes: Optional[int]) -> None:
        if max_bytes is not None and (isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0):
            raise InputError(f"max_bytes must be a non-negative integer, got {max_bytes!r}")
        self.left = max_bytes

    @property
    def exhausted(self) -> bool:
        return self.left is not None and self.left <= 0

    def take(self, n: int) -> int:
        """How many of ``n`` bytes may still be read (and take them)."""
        if self.left is None:
            return n
        n = min(n, self.left)
        self.left -= n
        return n


_TRIM_BYTES = 4 << 20  # heap memory is handed back to the OS after this much plain text
_malloc_trim = None


def release_memory() -> None:
    """Hand freed heap memory back to the OS (glibc's ``malloc_trim``; a
    no-op elsewhere). Reading a long file block by block frees and allocates
    megabyte-sized buffers, on both sides of the core; glibc then raises its
    mmap threshold and keeps the freed blocks in the heap, fragmented, so
    without this the process's RSS grows with the file (by ~350 MB over a
    400 MB file) although nothing is kept. Costs ~1 ms per call."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL(None).malloc_trim
            _malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError, ImportError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


# ---------------------------------------------------------------- opening


def open_binary(src: Source) -> BinaryIO:
    """The input's (decompressed) bytes as a binary stream."""
    if src.path == "-":
        return sys.stdin.buffer
    try:
        fh = open(src.path, "rb")
    except FileNotFoundError:
        raise InputError(f"{src.path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{src.path}: is a folder, not a file") from None
    except OSError as e:
        raise InputError(f"{src.path}: cannot read: {e.strerror or e}") from None
    if src.compression == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    if src.compression == "zstd":
        try:
            import zstandard
        except ImportError:
            fh.close()
            raise InputError(f"{src.path}: reading .zst files needs the zstandard package (pip install 'bytepair[zstd]')") from None
        reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True, closefd=True)
        return io.BufferedReader(reader, 1 << 20)  # type: ignore[arg-type]
    return fh


def _decompress_errors():
    import gzip
    import zlib

    errs = [gzip.BadGzipFile, zlib.error, EOFError]
    try:
        import zstandard

        errs.append(zstandard.ZstdError)
    except ImportError:
        pass
    return tuple(errs)


def _read(fh: BinaryIO, n: int, src: Source) -> bytes:
    try:
        return fh.read(n)
    except _decompress_errors() as e:
        raise InputError(f"{src.path}: not a valid {src.compression} file: {e}") from None


# ---------------------------------------------------------------- reading


def read_parts(
    src: Source,
    errors: str = "strict",
    budget: Optional[Budget] = None,
    start_doc: int = 0,
    start_char: int = 0,
    block_bytes: Optional[int] = None,
) -> Iterator[Part]:
    """The documents of ``src`` in order, as :class:`Part` s: one per
    document for JSONL and Parquet, blocks of about ``block_bytes`` for plain
    text. ``start_doc``/``start_char`` skip what comes before that document
    and character (to resume); ``budget`` applies ``max_bytes``."""
    if errors not in ("strict", "replace"):
        raise InputError(f"errors must be 'strict' or 'replace', got {errors!r}")
    budget = budget or Budget(None)
    if src.kind == TEXT:
        return _text_parts(src, errors, budget, start_doc, start_char, block_bytes or BLOCK_BYTES)
    if src.kind == JSONL:
        return _skip_chars(_jsonl_parts(src, errors, budget, start_doc), start_char)
    return _skip_chars(_parquet_parts(src, errors, budget, start_doc), start_char)


def text_blocks(src: Source, errors: str = "strict", block_bytes: Optional[int] = None,
                fh: Optional[BinaryIO] = None) -> Iterator[str]:
    """The text of ``src`` read as one plain-text document, in blocks of
    about ``block_bytes`` (1 MB): what ``read_parts`` gives for a text file
    (invalid UTF-8 raises ``InputError`` with the byte offset unless
    ``errors="replace"``). ``fh``: read this open binary file instead of
    opening ``src.path`` (it is not closed).

    >>> import io
    >>> list(text_blocks(Source("x"), fh=io.BytesIO("héllo".encode()), block_bytes=2))
    ['h', 'él', 'lo', '']
    """
    if errors not in ("strict", "replace"):
        raise InputError(f"errors must be 'strict' or 'replace', got {errors!r}")
    text_src = Source(src.path, TEXT, src.compression)
    for part in _text_parts(text_src, errors, Budget(None), 0, 0, block_bytes or BLOCK_BYTES, fh):
        yield part.text


def _skip_chars(parts: Iterator[Part], start_char: int) -> Iterator[Part]:
    """Whole documents, the first cut at ``start_char``."""
    for part in parts:
        if start_char:
            part = Part(part.doc, start_char, part.text[start_char:], part.final, part.raw)
            start_char = 0
        yield part


def _text_parts(src: Source, errors: str, budget: Budget, start_doc: int, start_char: int, block: int,
                given: Optional[BinaryIO] = None) -> Iterator[Part]:
    if start_doc > 0 or budget.exhausted:
        return  # a text file is one document
    fh = given if given is not None else open_binary(src)
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    done = 0  # raw bytes decoded so far
    chars = 0  # characters produced so far
    newlines = 0  # in the text decoded so far (error messages name the line)
    since_trim = 0
    cut = False
    try:
        while True:
            if budget.exhausted:
                raw, cut = b"", True
            else:
                raw = _read(fh, block, src)
                allowed = budget.take(len(raw))
                if allowed < len(raw):
                    raw, cut = raw[:allowed], True
            final = not raw or cut
            pending = len(decoder.getstate()[0])
            try:
                # at the cap, a character cut in two is dropped, not an error
                text = decoder.decode(raw, final=final and not cut)
            except UnicodeDecodeError as e:
                at = done - pending + e.start
                bad = e.object[e.start]
                line = newlines + e.object.count(b"\n", 0, e.start) + 1
                where = " (after decompression)" if src.compression else ""
                raise InputError(
                    f"{src.name}: invalid UTF-8 at byte offset {at}{where} (line {line}, byte 0x{bad:02X}) "
                    f"{_REPLACE_HINT}"
                ) from None
            done += len(raw)
            newlines += text.count("\n")
            if start_char:
                skip = min(start_char, len(text))
                text, start_char = text[skip:], start_char - skip
                chars += skip
            if text or final:
                yield Part(0, chars, text, final, len(raw))
                chars += len(text)
            if final:
                return
            since_trim += len(raw)
            if since_trim >= _TRIM_BYTES:
                release_memory()
                since_trim = 0
    finally:
        if fh is not sys.stdin.buffer and fh is not given:
            fh.close()


def _check_str(doc: str, src: Source, where: str, errors: str) -> str:
    """``doc`` as text the core accepts: lone surrogates (from JSON escapes)
    are an error, or replaced."""
    if doc.isascii():
        return doc
    try:
        doc.encode("utf-8")
        return doc
    except UnicodeEncodeError:
        if errors == "replace":
            return doc.encode("utf-8", "replace").decode("utf-8")
        raise InputError(f"{src.name}: {where}: the text holds a lone surrogate (an invalid \\ud800-\\udfff escape) {_REPLACE_HINT}") from None


def _capped(doc: str, budget: Budget) -> Optional[str]:
    """``doc`` cut to what the budget allows (None when nothing is left)."""
    if budget.left is None:
        return doc
    if budget.exhausted:
        return None
    n = len(doc) if doc.isascii() else len(doc.encode("utf-8"))
    allowed = budget.take(n)
    if allowed < n:
        doc = doc.encode("utf-8")[:allowed].decode("utf-8", "ignore")
        budget.left = 0
    return doc


def _jsonl_parts(src: Source, errors: str, budget: Budget, start_doc: int) -> Iterator[Part]:
    fh = open_binary(src)
    doc = 0
    offset = 0  # byte offset of the line
    try:
        lineno = 0
        while True:
            if budget.exhausted:
                return
            try:
                line = fh.readline()
            except _decompress_errors() as e:
                raise InputError(f"{src.path}: not a valid {src.compression} file: {e}") from None
            if not line:
                return
            lineno += 1
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            if doc < start_doc:
                doc += 1
                continue
            try:
                text = line.decode("utf-8", errors)
            except UnicodeDecodeError as e:
                raise InputError(
                    f"{src.name}: line {lineno}: invalid UTF-8 at byte offset {start + e.start} "
                    f"(byte 0x{line[e.start]:02X}) {_REPLACE_HINT}"
                ) from None
            try:
                record = json.loads(text)
            except json.JSONDecodeError as e:
                raise InputError(f"{src.name}: line {lineno}: invalid JSON ({e.msg}, column {e.colno})") from None
            if not isinstance(record, dict):
                raise InputError(f"{src.name}: line {lineno}: expected a JSON object, got {type(record).__name__}")
            if src.field not in record:
                keys = ", ".join(sorted(map(str, record))[:8]) or "none"
                raise InputError(f"{src.name}: line {lineno}: no field {src.field!r} (fields: {keys}; choose one with field=)")
            value = record[src.field]
            if not isinstance(value, str):
                raise InputError(f"{src.name}: line {lineno}: field {src.field!r} is {type(value).__name__}, not a string")
            value = _capped(_check_str(value, src, f"line {lineno}", errors), budget)
            if value is None:
                return
            yield Part(doc, 0, value, True, len(line))
            doc += 1
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _parquet_parts(src: Source, errors: str, budget: Budget, start_doc: int) -> Iterator[Part]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{src.path}: reading Parquet files needs pyarrow (pip install 'bytepair[parquet]')") from None
    if not os.path.exists(src.path):
        raise InputError(f"{src.path}: no such file")
    try:
        pf = pq.ParquetFile(src.path)
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"{src.path}: not a readable Parquet file: {e}") from None
    names = pf.schema_arrow.names
    if src.column not in names:
        raise InputError(f"{src.path}: no column {src.column!r} (columns: {', '.join(names[:8])}; choose one with column=)")
    kind = pf.schema_arrow.field(src.column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
            or pa.types.is_large_binary(kind) or str(kind) in ("string_view", "binary_view")):
        raise InputError(f"{src.path}: column {src.column!r} holds {kind}, not text")
    row = 0
    try:
        for rg in range(pf.metadata.num_row_groups):
            n = pf.metadata.row_group(rg).num_rows
            if row + n <= start_doc:
                row += n
                continue
            for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, row_groups=[rg], columns=[src.column]):
                for value in batch.column(0).to_pylist():
                    if row < start_doc:
                        row += 1
                        continue
                    if value is None:
                        raise InputError(f"{src.path}: row {row}: column {src.column!r} is null")
                    if isinstance(value, bytes):
                        try:
                            value = value.decode("utf-8", errors)
                        except UnicodeDecodeError as e:
                            raise InputError(
                                f"{src.path}: row {row}: invalid UTF-8 at byte offset {e.start} {_REPLACE_HINT}"
                            ) from None
                    value = _capped(_check_str(value, src, f"row {row}", errors), budget)
                    if value is None:
                        return
                    yield Part(row, 0, value, True, len(value))
                    row += 1
    except pa.ArrowException as e:
        raise InputError(f"{src.path}: cannot read Parquet data: {e}") from None


def iter_documents(src: Source, errors: str = "strict", budget: Optional[Budget] = None) -> Iterator[str]:
    """Whole documents of ``src`` (a plain text file is joined from its
    blocks: use :func:`read_parts` to keep memory small)."""
    pieces: List[str] = []
    for part in read_parts(src, errors, budget):
        pieces.append(part.text)
        if part.final:
            yield "".join(pieces)
            pieces = []


def group_units(srcs: Sequence[Source], unit_bytes: int) -> List[List[int]]:
    """Consecutive inputs grouped into units of work of at least
    ``unit_bytes`` on disk (a larger file is a unit of its own): the tasks
    that the Dask engine hands out. Depends only on the inputs' sizes.

    >>> group_units([Source("-")] * 3, 10)
    [[0, 1, 2]]
    """
    units: List[List[int]] = []
    current: List[int] = []
    size = 0
    for i, s in enumerate(srcs):
        current.append(i)
        size += s.size() or 0
        if size >= unit_bytes:
            units.append(current)
            current, size = [], 0
    if current:
        units.append(current)
    return units
