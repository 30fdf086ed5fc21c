"""Encoding whole datasets into shards of token ids.

:func:`encode_dataset` reads the documents of the inputs in order
(:mod:`bytepair.corpus`), encodes each with ``encode_ordinary`` (plus an
end-of-text token if asked) and writes the concatenated ids as shards::

    OUTDIR/
      manifest.json              tokenizer hash, inputs, counts, every shard (written last)
      shard_000000.npy           token ids, uint16 when n_vocab <= 65536 else uint32
      shard_000000.idx.npy       int64: offset in the shard where each document starting in it starts
      shard_000001.npy ...

**Formats** (``shard_format``, ``--format``): ``npy`` (the default) as
above; ``bin``, the ``.bin`` shards of llm.c and modded-nanogpt: a header
of 256 little-endian int32 (magic, version, token count; llm.c's
``write_datafile``: 20240520 / 1 for uint16 tokens, 20240801 / 7 for
uint32) then the tokens; ``u16`` / ``u32``, the raw tokens (``np.memmap``
them; ``u16`` needs n_vocab <= 65536). The index files and the manifest are
the same for every format; :func:`read_shard` reads any of them.

**Shards.** The ids of all documents, in input order, form one stream;
shard ``k`` holds ids ``k*S .. (k+1)*S - 1`` of it (``S`` = ``shard_tokens``,
about 100 MB by default), the last shard the rest. A document may continue
in the next shard: the index lists where each document *starts* (a
document starting exactly at a shard boundary is in the later shard; the
last shard also lists empty documents at its end). Entry ``i`` of the
concatenated indexes is document ``i`` of the inputs. Shards therefore
depend only on the inputs, the tokenizer and ``S``: never on the number of
workers, the units of work, or interruptions.

**Work.** The inputs are cut into units (consecutive files of at least
~16 MB); each unit is encoded into *pieces* of at most ``piece_tokens`` ids
(``OUTDIR.partial/parts/``), and the pieces are cut into shards in order.
Locally, units are encoded one after another with all cores (the core's
``encode_ordinary_batch`` runs in parallel without the GIL); with a Dask
client, units are tasks on the workers (which need the input files and the
output folder on shared storage) and this process cuts the shards. A
document longer than ~1 MB is encoded in segments cut where the
pre-tokenizer would cut anyway (found with the core's streaming word
counter), so its ids equal ``encode_ordinary`` of the whole document while
memory stays small.

**Atomicity and resume.** Everything is written into ``OUTDIR.partial``:
each shard and piece through a temporary file and a rename, with a small
JSON sidecar written last that marks it finished and says where the next
one starts. ``manifest.json`` is written last, then ``OUTDIR.partial`` is
renamed to ``OUTDIR``: ``OUTDIR`` appears complete or not at all. Rerunning
the same command after an interruption (a crash, Ctrl-C, a lost worker)
continues from the finished shards and pieces: nothing finished is encoded
or written again. A run with other inputs, tokenizer or shard size refuses
to touch another run's ``OUTDIR.partial``. A run stopped by bad input (a
``BytepairError``: invalid UTF-8, an unknown character) removes the
``OUTDIR.partial`` it began, since no rerun could resume it (not with Dask).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from bytepair._io import atomic_open, atomic_write_text
from bytepair.corpus import Source, group_units, read_parts, sources as make_sources
from bytepair.errors import BytepairError, EncodeError, InputError
from bytepair.progress import make_reporter
from bytepair.patterns import preset_name
from bytepair.distributed import check_sources, import_distributed, result_of
from bytepair import _core

FORMAT_VERSION = 1
SHARD_BYTES = 100_000_000
UNIT_BYTES = 16 << 20
PIECE_TOKENS = 1 << 23
BATCH_CHARS = 4 << 20  # whole documents encoded per parallel batch
BIG_DOC_CHARS = 1 << 20  # longer documents are encoded in segments
SEGMENT_CHARS = 1 << 18  # about this long

PathLike = Union[str, "os.PathLike[str]"]


def _np():
    try:
        import numpy
    except ImportError:
        raise BytepairError("dataset encoding needs numpy: pip install 'bytepair[dataset]'") from None
    return numpy


def tokenizer_hash(tok: Any) -> str:
    """sha256 of the tokenizer's native JSON (``to_dict``, keys sorted)."""
    return hashlib.sha256(json.dumps(tok.to_dict(), sort_keys=True).encode("utf-8")).hexdigest()


def dtype_for(tok: Any) -> str:
    """``uint16`` when every id fits (n_vocab <= 65536), else ``uint32``."""
    return "uint16" if tok.n_vocab <= 65536 else "uint32"


SHARD_FORMATS = ("npy", "bin", "u16", "u32")
# llm.c dev/data/data_common.py HEADERS_INFO: "gpt-2" (uint16) and "llama-3" (uint32)
BIN_HEADERS = {"uint16": (20240520, 1), "uint32": (20240801, 7)}
BIN_HEADER_INTS = 256


def shard_dtype(tok: Any, shard_format: str = "npy") -> str:
    """The dtype of the shards of ``tok`` in ``shard_format``: ``u16`` and
    ``u32`` say it, ``npy`` and ``bin`` take :func:`dtype_for`.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train(["low lower lowest"], num_merges=3)
    >>> shard_dtype(tok, "bin"), shard_dtype(tok, "u32")
    ('uint16', 'uint32')
    """
    if shard_format not in SHARD_FORMATS:
        raise BytepairError(f"unknown shard format {shard_format!r}: use one of {', '.join(SHARD_FORMATS)}")
    if shard_format == "u16":
        if tok.n_vocab > 65536:
            raise BytepairError(f"u16 holds ids below 65536, the tokenizer has {tok.n_vocab}: use shard_format='u32'")
        return "uint16"
    if shard_format == "u32":
        return "uint32"
    return dtype_for(tok)


def shard_suffix(shard_format: str) -> str:
    """The file name suffix of a shard: ``.npy``, ``.bin``, ``.u16``, ``.u32``."""
    return "." + shard_format


def read_shard(path: PathLike, shard_format: Optional[str] = None, dtype: Optional[str] = None) -> Any:
    """The ids of one shard file, memory-mapped, in any format (taken from
    the suffix unless given; raw ``u16``/``u32`` files need no ``dtype``).
    A ``.bin`` header is checked against the file: magic, version, count.

    >>> import numpy as np, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "s.bin")
    >>> _atomic_save(path, np.array([5, 6, 7], np.uint16), "bin")
    >>> read_shard(path).tolist()
    [5, 6, 7]
    """
    np = _np()
    path = os.fspath(path)
    fmt = shard_format or os.path.splitext(path)[1].lstrip(".")
    if fmt == "npy":
        return np.load(path, mmap_mode="r")
    if fmt in ("u16", "u32"):
        dt = np.dtype(dtype or ("uint16" if fmt == "u16" else "uint32"))
        if os.path.getsize(path) % dt.itemsize:
            raise InputError(f"{path}: its size is not a whole number of {dt} ids")
        return np.memmap(path, dtype=dt, mode="r") if os.path.getsize(path) else np.zeros(0, dt)
    if fmt != "bin":
        raise InputError(f"{path}: unknown shard format {fmt!r}")
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        header = np.frombuffer(fh.read(BIN_HEADER_INTS * 4), dtype="<i4")
    found = {v: k for k, v in BIN_HEADERS.items()}.get((int(header[0]), int(header[1])) if len(header) == BIN_HEADER_INTS else None)
    if found is None:
        raise InputError(f"{path}: not an llm.c token shard (no 256-int32 header with a known magic and version)")
    dt = np.dtype(found)
    count = int(header[2])
    if count < 0 or size != BIN_HEADER_INTS * 4 + count * dt.itemsize:
        raise InputError(f"{path}: the header says {count} ids, the file holds {(size - BIN_HEADER_INTS * 4) / dt.itemsize:g}")
    if count == 0:
        return np.zeros(0, dt)
    return np.memmap(path, dtype=dt, mode="r", offset=BIN_HEADER_INTS * 4, shape=(count,))


def _splittable(pattern: Optional[str]) -> bool:
    """Whether a document can be encoded in segments with this pre-tokenizer:
    matching at a word boundary must not look behind it (the presets and
    ``str.split()`` don't; a custom regex with lookbehind, anchors or word
    boundaries is encoded whole)."""
    if pattern is None:
        return True

    if preset_name(pattern):
        return True
    import re

    return re.search(r"\(\?<|\\[bBAGKZz]|(?<!\[)\^", pattern) is None


# ---------------------------------------------------------------- files


def _atomic_save(path: str, array: Any, shard_format: str = "npy") -> None:
    """Writes ``array`` to ``path`` atomically: ``npy``, llm.c's ``bin`` or raw ids."""
    np = _np()
    array = np.ascontiguousarray(array)
    with atomic_open(path) as fh:
        if shard_format == "npy":
            np.lib.format.write_array(fh, array, allow_pickle=False)
            return
        if shard_format == "bin":
            if len(array) >= 2**31:  # llm.c: "token count too large"
                raise BytepairError(f"{path}: an llm.c shard holds fewer than 2**31 ids, not {len(array)}")
            header = np.zeros(BIN_HEADER_INTS, dtype="<i4")
            header[0], header[1] = BIN_HEADERS[array.dtype.name]
            header[2] = len(array)
            fh.write(header.tobytes())
        fh.write(array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes())


def _atomic_json(path: str, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")


def _read_json(path: str) -> Optional[Dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: unreadable ({e}): remove the folder to start again") from None


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _piece_base(partial: str, u: int, j: int) -> str:
    return os.path.join(partial, "parts", f"u{u:06d}", f"p{j:06d}")


def _unit_dir(partial: str, u: int) -> str:
    return os.path.join(partial, "parts", f"u{u:06d}")


def _shard_base(folder: str, k: int) -> str:
    return os.path.join(folder, f"shard_{k:06d}")


# ---------------------------------------------------------------- encoding one unit


@dataclass
class Position:
    """Where reading starts again: input ``file`` (index in the run),
    document ``doc`` of that file, character ``char`` of that document."""

    file: int
    doc: int = 0
    char: int = 0

    def as_list(self) -> List[int]:
        return [self.file, self.doc, self.char]


class _Encoder:
    """Ids of documents in order, in chunks: (ids, document starts, position
    after the chunk)."""

    def __init__(self, tok: Any, eot: Optional[int], dtype: str) -> None:
        self.tok = tok
        self.eot = eot
        self.np = _np()
        self.dtype = self.np.dtype(dtype)
        # a prefix space (HF's add_prefix_space) changes how a segment's first words split: encode whole
        self.split = _splittable(tok.pattern) and not tok.add_prefix_space

    def _array(self, lists: Sequence[Sequence[int]]) -> Any:
        np = self.np
        if not lists:
            return np.zeros(0, self.dtype)
        return np.concatenate([np.array(ids, dtype=self.dtype) for ids in lists])  # 2x np.fromiter(chain)

    def _encode_batch(self, texts: List[str], where: Callable[[int], str]) -> List[List[int]]:
        try:
            return self.tok.encode_ordinary_batch(texts)
        except EncodeError:
            for i, t in enumerate(texts):  # find the culprit to name it
                try:
                    self.tok.encode_ordinary(t)
                except EncodeError as e:
                    raise EncodeError(f"{where(i)}: {e}") from None
            raise

    def chunks(self, srcs: Sequence[Source], first: int, start: Position, errors: str) -> Iterator[Tuple[Any, Any, Position]]:
        """Chunks of the inputs ``srcs`` (run indexes ``first``...) from ``start``."""

        np = self.np
        docs: List[str] = []
        doc_at: List[Tuple[str, int]] = []
        size = 0
        after = start

        def flush():
            lists = self._encode_batch(docs, lambda i: f"{doc_at[i][0]}: document {doc_at[i][1]}")
            if self.eot is not None:
                for ids in lists:
                    ids.append(self.eot)
            lengths = np.fromiter((len(ids) for ids in lists), dtype=np.int64, count=len(lists))
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
            return self._array(lists), starts

        for f in range(start.file, first + len(srcs)):
            src = srcs[f - first]
            doc0, char0 = (start.doc, start.char) if f == start.file else (0, 0)
            carry, carry_at, whole = "", 0, []  # the document being segmented
            next_try = 0  # len(carry) at which a cut is looked for again (doubles while none is found)
            begins = False  # its start is not in a chunk yet
            for part in read_parts(src, errors, start_doc=doc0, start_char=char0):
                if part.offset == 0 and part.final and len(part.text) <= BIG_DOC_CHARS:
                    docs.append(part.text)
                    doc_at.append((src.name, part.doc))
                    size += len(part.text)
                    after = Position(f, part.doc + 1, 0)
                    if size >= BATCH_CHARS:
                        ids, starts = flush()
                        yield ids, starts, after
                        docs, doc_at, size = [], [], 0
                    continue
                if docs:
                    ids, starts = flush()
                    yield ids, starts, after
                    docs, doc_at, size = [], [], 0
                begins = begins or part.offset == 0
                where = f"{src.name}: document {part.doc}"
                if not self.split:  # hold the document, encode it whole
                    whole.append(part.text)
                    if not part.final:
                        continue
                    jobs = [("".join(whole), None)]
                    whole = []
                else:
                    if not carry:
                        carry_at = part.offset
                    scratch = _core.WordCounts(self.tok.pattern, [])
                    jobs = []
                    text = part.text
                    for i in range(0, max(len(text), 1), SEGMENT_CHARS):
                        carry += text[i : i + SEGMENT_CHARS]
                        if len(carry) < next_try:
                            continue  # one long word: wait until it has doubled (linear, not quadratic)
                        n = scratch.add_text_prefix(carry)
                        next_try = 2 * (len(carry) - n) if 2 * (len(carry) - n) > len(carry) else 0
                        if n:
                            jobs.append((carry, n))
                            carry, carry_at = carry[n:], carry_at + n
                    if part.final:
                        jobs.append((carry, None))
                        carry = ""
                texts = [t for t, _ in jobs] + [t[n:] for t, n in jobs if n is not None]
                lists = self._encode_batch(texts, lambda i: where)
                tails = iter(lists[len(jobs):])
                out = []
                for (t, n), ids in zip(jobs, lists):
                    out.append(ids if n is None else ids[: len(ids) - len(next(tails))])
                if part.final and self.eot is not None:
                    out.append([self.eot])
                if part.final or out:
                    starts = np.zeros(1 if begins else 0, np.int64)
                    after = Position(f, part.doc + 1, 0) if part.final else Position(f, part.doc, carry_at)
                    begins = False
                    yield self._array(out), starts, after
            if docs and f == first + len(srcs) - 1:
                ids, starts = flush()
                yield ids, starts, after
                docs, doc_at, size = [], [], 0


def encode_unit(
    tok: Any,
    srcs: Sequence[Source],
    first: int,
    u: int,
    partial: str,
    *,
    eot: Optional[int],
    dtype: str,
    errors: str = "strict",
    piece_tokens: int = PIECE_TOKENS,
    on_piece: Optional[Callable[[int, int, Any, Any], None]] = None,
) -> Dict[str, Any]:
    """Encodes unit ``u`` (the inputs ``srcs``, run indexes ``first``...)
    into pieces under ``partial/parts``, continuing after the pieces already
    finished; ``on_piece(u, j, ids, starts)`` sees each new piece. Runs on a
    Dask worker or here. Returns the unit's summary (also written as
    ``done.json``)."""
    np = _np()
    folder = _unit_dir(partial, u)
    os.makedirs(folder, exist_ok=True)
    done = _read_json(os.path.join(folder, "done.json"))
    if done is not None:
        return done
    j, start = 0, Position(first)
    while True:
        side = _read_json(_piece_base(partial, u, j) + ".json")
        if side is None:
            break
        start = Position(*side["end"])
        j += 1
    encoder = _Encoder(tok, eot, dtype)
    ids_parts: List[Any] = []
    start_parts: List[Any] = []
    n_tokens = 0

    def write(j: int, end: Position) -> None:
        ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, encoder.dtype)
        starts = np.concatenate(start_parts) if start_parts else np.zeros(0, np.int64)
        base = _piece_base(partial, u, j)
        _atomic_save(base + ".npy", ids)
        _atomic_save(base + ".docs.npy", starts)
        _atomic_json(base + ".json", {"tokens": int(len(ids)), "docs": int(len(starts)), "end": end.as_list()})
        if on_piece is not None:
            on_piece(u, j, ids, starts)

    if start.file < first + len(srcs):
        end = start
        for ids, starts, end in encoder.chunks(srcs, first, start, errors):
            start_parts.append(starts + n_tokens)
            ids_parts.append(ids)
            n_tokens += len(ids)
            if n_tokens >= piece_tokens:
                write(j, end)
                j, ids_parts, start_parts, n_tokens = j + 1, [], [], 0
        if ids_parts:
            write(j, end)
            j += 1
    tokens = docs = 0
    for i in range(j):
        side = _read_json(_piece_base(partial, u, i) + ".json") or {}
        tokens += side.get("tokens", 0)
        docs += side.get("docs", 0)
    summary = {"pieces": j, "tokens": tokens, "docs": docs}
    _atomic_json(os.path.join(folder, "done.json"), summary)
    return summary


# ---------------------------------------------------------------- cutting shards


class _Assembler:
    """Cuts the pieces, fed in order, into shards of exactly ``S`` ids (the
    last one shorter), continuing after the shards already finished."""

    def __init__(self, partial: str, S: int, dtype: str, shard_format: str = "npy") -> None:
        self.np = _np()
        self.shard_format = shard_format
        self.folder = self.partial = partial
        self.S, self.dtype = S, self.np.dtype(dtype)
        self.k = 0
        self.tokens_before = self.docs_before = 0
        self.pos = (0, 0, 0, 0)  # unit, piece, token offset, documents of that piece already taken
        while True:
            side = _read_json(_shard_base(self.folder, self.k) + ".json")
            if side is None or side.get("last"):
                break
            self.pos = tuple(side["next"])  # type: ignore[assignment]
            self.tokens_before = side["tokens_before"] + side["tokens"]
            self.docs_before = side["docs_before"] + side["docs"]
            self.k += 1
        self.buf: List[Any] = []
        self.buf_len = 0
        self.starts: List[Any] = []
        self.consumed: List[Tuple[int, int]] = []

    def wants(self, u: int, j: int) -> bool:
        return (u, j) >= self.pos[:2]

    def feed(self, u: int, j: int, ids: Any, starts: Any) -> None:
        np = self.np
        if not self.wants(u, j):
            return
        off, skip = (self.pos[2], self.pos[3]) if (u, j) == self.pos[:2] else (0, 0)
        piece_starts = starts[skip:]
        base = self.buf_len - off  # piece offset t is buffer offset t + base
        self.buf.append(ids[off:])
        self.starts.append(piece_starts + base)
        self.buf_len += len(ids) - off
        while self.buf_len > self.S:
            data = np.concatenate(self.buf)
            doc_starts = np.concatenate(self.starts)
            inside = doc_starts < self.S
            cut_in_piece = self.S - base
            taken = skip + int((piece_starts < cut_in_piece).sum())  # this piece's documents now in shards
            self._write(data[: self.S], doc_starts[inside], next_pos=(u, j, cut_in_piece, taken))
            self.buf = [data[self.S :]]
            self.starts = [doc_starts[~inside] - self.S]
            self.buf_len -= self.S
            base -= self.S
        self.consumed.append((u, j))

    def _write(self, data: Any, doc_starts: Any, next_pos: Tuple[int, int, int, int], last: bool = False) -> None:
        base = _shard_base(self.folder, self.k)
        shard_path = base + shard_suffix(self.shard_format)
        _atomic_save(shard_path, data.astype(self.dtype, copy=False), self.shard_format)
        _atomic_save(base + ".idx.npy", doc_starts.astype(self.np.int64, copy=False))
        side = {
            "shard": self.k,
            "tokens": int(len(data)),
            "docs": int(len(doc_starts)),
            "tokens_before": self.tokens_before,
            "docs_before": self.docs_before,
            "sha256": _sha256_file(shard_path),
            "next": list(next_pos),
            "last": last,
        }
        _atomic_json(base + ".json", side)
        self.tokens_before += len(data)
        self.docs_before += len(doc_starts)
        self.pos = next_pos
        self.k += 1
        # pieces wholly inside finished shards are no longer needed; after the last shard they stay until
        # the run is published: a run killed before its manifest redoes the last shard from them
        if last:
            return
        for u, j in self.consumed:
            if (u, j) < next_pos[:2]:
                for ext in (".npy", ".docs.npy"):
                    try:
                        os.unlink(_piece_base(self.partial, u, j) + ext)
                    except FileNotFoundError:
                        pass
        self.consumed = [p for p in self.consumed if p >= next_pos[:2]]

    def feed_from_disk(self, u: int, j: int) -> None:
        if not self.wants(u, j):
            return
        np = self.np
        base = _piece_base(self.partial, u, j)
        self.feed(u, j, np.load(base + ".npy"), np.load(base + ".docs.npy"))

    def finish(self) -> None:
        np = self.np
        data = np.concatenate(self.buf) if self.buf else np.zeros(0, self.dtype)
        doc_starts = np.concatenate(self.starts) if self.starts else np.zeros(0, np.int64)
        if self.k == 0 or len(data) or len(doc_starts):
            self._write(data, doc_starts, next_pos=(1 << 62, 0, 0, 0), last=True)


# ---------------------------------------------------------------- the run


def _eot_id(tok: Any, append_eot: Union[bool, str, int, None]) -> Optional[int]:
    if append_eot is None or append_eot is False:
        return None
    if append_eot is True:
        if tok.eot_token is None:
            raise BytepairError(
                "the tokenizer has no <|endoftext|> special token: name the token to append (append_eot='TOK')"
            )
        return int(tok.eot_token)
    if isinstance(append_eot, str):
        if append_eot not in tok.special_tokens:
            raise BytepairError(f"{append_eot!r} is not a special token of the tokenizer")
        return int(tok.special_tokens[append_eot])
    if isinstance(append_eot, int) and not isinstance(append_eot, bool) and 0 <= append_eot < tok.n_vocab:
        return append_eot
    raise BytepairError(f"append_eot must be True, a special token or an id, got {append_eot!r}")


def _plan(tok: Any, srcs: Sequence[Source], **options: Any) -> Dict[str, Any]:
    inputs = []
    for s in srcs:
        try:
            st = os.stat(s.path)
        except FileNotFoundError:
            raise InputError(f"{s.path}: no such file") from None
        text_from = s.field if s.kind == "jsonl" else s.column if s.kind == "parquet" else None
        inputs.append([os.path.abspath(s.path), s.kind, s.compression, text_from, st.st_size, st.st_mtime_ns])
    return {"bytepair_dataset_plan": FORMAT_VERSION, "tokenizer_sha256": tokenizer_hash(tok), "inputs": inputs, **options}


def encode_dataset(
    tok: Any,
    paths: Iterable[PathLike],
    outdir: PathLike,
    *,
    append_eot: Union[bool, str, int] = False,
    shard_tokens: Optional[int] = None,
    field: Optional[str] = None,
    column: Optional[str] = None,
    errors: str = "strict",
    client: Any = None,
    progress: Any = None,
    unit_bytes: Optional[int] = None,
    piece_tokens: Optional[int] = None,
    shard_format: str = "npy",
) -> Dict[str, Any]:
    """Encodes the documents of ``paths`` into shards in ``outdir`` (see the
    module docstring) and returns the manifest.

    ``append_eot``: ``True`` appends ``tok.eot_token`` after every document,
    a string appends that special token. ``shard_tokens`` defaults to 100 MB
    of ids. ``field``/``column``/``errors`` choose how inputs are read
    (:mod:`bytepair.corpus`). ``client``, a ``dask.distributed.Client``,
    encodes units on its workers (same bytes). If ``outdir`` is already the
    finished output of the same run, it is left as it is. ``shard_format``:
    ``npy``, ``bin`` (llm.c / modded-nanogpt), ``u16`` or ``u32`` (raw).

    >>> import os, tempfile
    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train(["the cat sat on the mat"] * 3, num_merges=5, special_tokens=["<|endoftext|>"])
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "a.txt"), "w") as f:
    ...     _ = f.write("the cat")
    >>> m = encode_dataset(tok, [os.path.join(folder, "a.txt")], os.path.join(folder, "out"),
    ...                    append_eot=True, shard_format="bin")
    >>> m["shards"][0]["file"], read_shard(os.path.join(folder, "out", "shard_000000.bin")).tolist() == tok.encode_ordinary("the cat") + [tok.eot_token]
    ('shard_000000.bin', True)
    """
    np = _np()

    report = make_reporter(progress)
    eot = _eot_id(tok, append_eot)
    dtype = shard_dtype(tok, shard_format)
    itemsize = np.dtype(dtype).itemsize
    S = shard_tokens if shard_tokens is not None else SHARD_BYTES // itemsize
    if isinstance(S, bool) or not isinstance(S, int) or S < 1:
        raise BytepairError(f"shard_tokens must be a positive integer, got {shard_tokens!r}")
    if shard_format == "bin" and S >= 2**31:
        raise BytepairError(f"an llm.c shard holds fewer than 2**31 ids: shard_tokens {S} is too large")
    unit_bytes = unit_bytes or UNIT_BYTES
    piece_tokens = piece_tokens or min(S, PIECE_TOKENS)
    srcs = make_sources([os.fspath(p) for p in paths], field=field, column=column)
    if not srcs:
        raise InputError("no input files")
    for s in srcs:
        if s.path == "-":
            raise InputError("encode-dataset reads files (standard input cannot be resumed): give file names")
    plan = _plan(tok, srcs, shard_tokens=S, dtype=dtype, eot=eot, errors=errors,
                 unit_bytes=unit_bytes, piece_tokens=piece_tokens,
                 **({"shard_format": shard_format} if shard_format != "npy" else {}))

    final = os.path.abspath(os.fspath(outdir)).rstrip(os.sep)
    partial = final + ".partial"
    manifest_path = os.path.join(final, "manifest.json")
    if os.path.exists(manifest_path):
        manifest = _read_json(manifest_path) or {}
        if manifest.get("plan") == plan:
            return manifest
        raise InputError(f"{outdir}: holds another dataset (a different tokenizer, inputs or settings): "
                         "remove it or choose another output folder")
    if os.path.exists(final) and (not os.path.isdir(final) or os.listdir(final)):
        raise InputError(f"{outdir}: exists and is not empty: remove it or choose another output folder")
    parent = os.path.dirname(final)
    if not os.path.isdir(parent):
        raise InputError(f"cannot write {outdir}: folder {parent} does not exist")
    fresh = False
    if os.path.exists(partial):
        done = _read_json(os.path.join(partial, "manifest.json"))
        if done is not None and done.get("plan") == plan:  # stopped while publishing
            _publish(partial, final)
            return done
        old = _read_json(os.path.join(partial, "plan.json"))
        parts = os.path.join(partial, "parts")
        if old is None and not (os.path.isdir(parts) and os.listdir(parts)):
            # a run killed between creating the folder and writing its plan: nothing was done yet
            os.makedirs(parts, exist_ok=True)
            fresh = True
            _atomic_json(os.path.join(partial, "plan.json"), plan)
        elif old != plan:
            raise InputError(f"{partial}: an unfinished run with other inputs, tokenizer or settings is there: "
                             "remove it to start again")
    else:
        os.makedirs(os.path.join(partial, "parts"))
        fresh = True
        _atomic_json(os.path.join(partial, "plan.json"), plan)

    try:
        units = group_units(srcs, unit_bytes)
        firsts = [unit[0] for unit in units]
        asm = _Assembler(partial, S, dtype, shard_format)
        total = sum(s.size() or 0 for s in srcs)
        done_bytes = [0]

        def progressed(u: int) -> None:
            done_bytes[0] += sum(srcs[i].size() or 0 for i in units[u])
            if report:
                report("encode", done_bytes[0], total)

        def feed_unit_from_disk(u: int, summary: Dict[str, Any]) -> None:
            for j in range(summary["pieces"]):
                asm.feed_from_disk(u, j)

        if client is None:
            for u, unit in enumerate(units):
                summary = _read_json(os.path.join(_unit_dir(partial, u), "done.json"))
                if summary is None:
                    # pieces finished before an interruption go first, then the new ones as they come
                    j = 0
                    while _read_json(_piece_base(partial, u, j) + ".json") is not None:
                        asm.feed_from_disk(u, j)
                        j += 1
                    summary = encode_unit(tok, [srcs[i] for i in unit], firsts[u], u, partial, eot=eot, dtype=dtype,
                                          errors=errors, piece_tokens=piece_tokens, on_piece=asm.feed)
                else:
                    feed_unit_from_disk(u, summary)
                progressed(u)
        else:

            import_distributed()
            abs_srcs = check_sources(srcs)
            tok_future = client.scatter(tok, broadcast=True)

            def submit(u: int, tok_data: Any) -> Any:
                return client.submit(encode_unit, tok_data, [abs_srcs[i] for i in units[u]], firsts[u], u, partial,
                                     eot=eot, dtype=dtype, errors=errors, piece_tokens=piece_tokens, pure=False)

            futures: Dict[int, Any] = {}
            for u in range(len(units)):
                if not os.path.exists(os.path.join(_unit_dir(partial, u), "done.json")):
                    futures[u] = submit(u, tok_future)
            try:
                for u in range(len(units)):
                    if u in futures:
                        # a unit the scheduler forgot (its worker killed) runs again, the tokenizer sent anew
                        summary = result_of(futures.pop(u),
                                            resubmit=lambda u=u: submit(u, client.scatter(tok, broadcast=True)))
                    else:
                        summary = _read_json(os.path.join(_unit_dir(partial, u), "done.json")) or {}
                    feed_unit_from_disk(u, summary)
                    progressed(u)
            finally:
                for fut in futures.values():
                    fut.cancel()
        asm.finish()

        # the manifest, then the folder appears whole
        shards = []
        docs = tokens = 0
        for k in range(asm.k):
            side = _read_json(_shard_base(partial, k) + ".json") or {}
            shards.append({
                "file": f"shard_{k:06d}{shard_suffix(shard_format)}",
                "index": f"shard_{k:06d}.idx.npy",
                "tokens": side["tokens"],
                "documents": side["docs"],
                "first_document": side["docs_before"],
                "first_token": side["tokens_before"],
                "sha256": side["sha256"],
            })
            docs += side["docs"]
            tokens += side["tokens"]
        manifest = {
            "bytepair_dataset": FORMAT_VERSION,
            "tokenizer_sha256": plan["tokenizer_sha256"],
            "n_vocab": tok.n_vocab,
            "dtype": dtype,
            "format": shard_format,
            "eot_token": eot,
            "shard_tokens": S,
            "inputs": [{"path": s.path, "size": s.size()} for s in srcs],
            "documents": docs,
            "tokens": tokens,
            "n_shards": len(shards),
            "shards": shards,
            "plan": plan,
        }
        _atomic_json(os.path.join(partial, "manifest.json"), manifest)
        _publish(partial, final)
        return manifest
    except BytepairError:
        # bad input (invalid UTF-8, an unknown character...): the same command fails again and
        # one with other inputs or settings cannot resume, so a folder this run began is of no use
        # (with Dask, tasks already running may still write into it: it is left alone)
        if fresh and client is None:
            shutil.rmtree(partial, ignore_errors=True)
        raise


def _publish(partial: str, final: str) -> None:
    """Removes the work files of a finished run and renames the folder."""
    shutil.rmtree(os.path.join(partial, "parts"), ignore_errors=True)
    for name in os.listdir(partial):
        # a temporary file left by a run killed while writing (SIGKILL cannot clean up)
        stale = name.startswith(".bytepair-") and name.endswith(".tmp")
        if stale or name == "plan.json" or (name.startswith("shard_") and name.endswith(".json")):
            os.unlink(os.path.join(partial, name))
    os.replace(partial, final)


def load_shards(outdir: PathLike) -> Tuple[Dict[str, Any], List[Any], List[Any]]:
    """The manifest, the shards (memory-mapped) and their indexes of a
    finished output folder."""
    np = _np()
    outdir = os.fspath(outdir)
    manifest = _read_json(os.path.join(outdir, "manifest.json"))
    if manifest is None:
        raise InputError(f"{outdir}: no manifest.json (not a finished bytepair dataset)")
    fmt = manifest.get("format", "npy")
    shards = [read_shard(os.path.join(outdir, s["file"]), fmt, manifest.get("dtype")) for s in manifest["shards"]]
    indexes = [np.load(os.path.join(outdir, s["index"])) for s in manifest["shards"]]
    return manifest, shards, indexes


def documents(outdir: PathLike) -> Iterator[Any]:
    """The ids of each document of a finished dataset, in input order
    (a document that spans shards is joined)."""
    np = _np()
    _, shards, indexes = load_shards(outdir)
    current: Optional[List[Any]] = None  # the document still open
    for data, starts in zip(shards, indexes):
        bounds = [int(b) for b in starts] + [len(data)]
        if current is not None:
            current.append(np.asarray(data[: bounds[0]]))
        for a, b in zip(bounds[:-1], bounds[1:]):
            if current is not None:
                yield np.concatenate(current)
            current = [np.asarray(data[a:b])]
    if current is not None:
        yield np.concatenate(current)
