"""Word counts: counting a corpus in blocks, and the counts file.

Training needs only the table of distinct words (pre-tokenizer pieces) with
their counts, in order of first appearance. :func:`count_words` builds it
from files read a block at a time (:mod:`bytepair.corpus`), so memory grows
with the number of distinct words, never with the size of the corpus; a
Dask client spreads the files over workers (:mod:`bytepair.distributed`)
with the same result.

The table is saved as a **counts file** (``.counts``, or gzip-compressed
when the name ends in ``.gz``)::

    {"bytepair_counts": 1, "pattern": "...", "pattern_preset": "cl100k", "special_tokens": [], "words": 3, "total": 7, ...}
    4<TAB>the
    2<TAB> cat
    1<TAB>a\\tb

The first line is a JSON header: format version, the pre-tokenizer regex
(``null`` for ``str.split()``) and the special tokens that cut the text
(both must match the tokenizer trained from it), the number of distinct
words, the sum of the counts, and how much text was read. Then one line per
word in first-appearance order: the count, a tab, and the word with ``\\``,
tab, newline and carriage return written as ``\\\\``, ``\\t``, ``\\n``,
``\\r``. The file is UTF-8; lines end with ``\\n``.

Counts files merge (:func:`merge_counts`): merging the counts of corpus
parts in order gives the counts of the concatenated corpus, first
appearances included, so training from them gives exactly the tokenizer
that training on the whole corpus gives.

>>> import os, tempfile
>>> counts = count_words([], pattern=None)
>>> counts.add_word("low", 5); counts.add_word("a\\tb", 2)
>>> path = os.path.join(tempfile.mkdtemp(), "c.counts")
>>> save_counts(path, counts, pattern=None)
>>> open(path).read().splitlines()[1:]
['5\\tlow', '2\\ta\\\\tb']
>>> load_counts(path).items()
[('low', 5), ('a\\tb', 2)]
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from bytepair import _core
from bytepair._io import atomic_open, check_json_text
from bytepair.corpus import TEXT, Budget, Part, Source, group_units, read_parts, sources as make_sources
from bytepair.distributed import UNIT_BYTES, check_sources, import_distributed, result_of
from bytepair.errors import BytepairError, FormatError, InputError, TrainingError
from bytepair.limits import check_text_limits, special_names
from bytepair.patterns import preset_name, resolve_pattern
from bytepair.progress import make_reporter

FORMAT_VERSION = 1
BATCH_CHARS = 8 << 20  # whole documents are handed to the core in batches of about this size
_REPORT_EVERY = 4 << 20
_CHECK_EVERY = 64 << 20  # input bytes between memory checks while counting for training
_UNSET: Any = object()
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}
_NEEDS_ESCAPE = re.compile(r"[\\\t\n\r]")
_ESCAPE_SEQ = re.compile(r"\\(.?)", re.S)

PathLike = Union[str, "os.PathLike[str]"]


# ---------------------------------------------------------------- counting


class _Counter:
    """Feeds parts of documents to a word-count table: whole documents in
    parallel batches, long documents block by block (``add_text_prefix``).
    The unsettled end of a long document is kept as a list of blocks and
    settling is tried again only once it has doubled, so a document that is
    one huge word (hundreds of MB without a space) costs linear time, not
    a rescan of the held text at every block."""

    def __init__(self, counts: "_core.WordCounts", report=None, total: Optional[int] = None,
                 memory_check: Optional[Callable[[Any], None]] = None) -> None:
        self.counts = counts
        self.memory_check = memory_check
        self._checked = 0
        self.batch: List[str] = []
        self.size = 0
        self.held: List[str] = []  # the unsettled end of a long document, in blocks
        self.held_chars = 0
        self.next_try = 0  # held_chars at which settling is tried again
        self.documents = 0
        self.bytes = 0
        self.report = report
        self.total = total
        self._reported = 0

    def add(self, part: Part) -> None:
        if part.offset == 0 and part.final and not self.held:
            self.batch.append(part.text)
            self.size += len(part.text)
            if self.size >= BATCH_CHARS:
                self.flush()
        else:
            self.flush()
            self.held.append(part.text)
            self.held_chars += len(part.text)
            if part.final:
                self.counts.add_documents(["".join(self.held)])
                self.held, self.held_chars, self.next_try = [], 0, 0
            elif self.held_chars >= self.next_try:
                carry = "".join(self.held)
                used = self.counts.add_text_prefix(carry)
                rest = carry[used:]
                self.held, self.held_chars = ([rest] if rest else []), len(rest)
                # little settled (one long word): wait until the held text has doubled
                self.next_try = 2 * len(rest) if 2 * len(rest) > len(carry) else 0
        self.documents += part.final
        self.bytes += part.raw
        if self.memory_check and self.bytes - self._checked >= _CHECK_EVERY:
            self._checked = self.bytes
            self.flush()
            self.memory_check(self.counts)
        if self.report and self.bytes - self._reported >= _REPORT_EVERY:
            self._reported = self.bytes
            self.report("count", self.bytes, self.total)

    def flush(self) -> None:
        if self.batch:
            self.counts.add_documents(self.batch)
            self.batch, self.size = [], 0

    def finish(self) -> None:
        self.flush()
        if self.held:  # a document cut short by an error cannot reach here; keep it exact anyway
            self.counts.add_documents(["".join(self.held)])
            self.held, self.held_chars, self.next_try = [], 0, 0
        if self.report:
            self.report("count", self.bytes, self.total if self.total is not None else self.bytes)


def count_sources(
    srcs: Sequence[Source],
    pattern: Optional[str],
    special_tokens: Sequence[str] = (),
    errors: str = "strict",
    budget: Optional[Budget] = None,
    report=None,
    memory_check: Optional[Callable[[Any], None]] = None,
) -> Tuple["_core.WordCounts", Dict[str, int]]:
    """Counts ``srcs`` in order in this process; returns the table and
    ``{"documents": n, "bytes": n}``."""
    counts = _core.WordCounts(pattern, list(special_tokens))
    sizes = [s.size() for s in srcs]
    total = sum(sizes) if srcs and all(n is not None for n in sizes) and not any(s.compression for s in srcs) else None
    budget = budget or Budget(None)
    if total is not None and budget.left is not None:
        total = min(total, budget.left)  # --max-bytes: the bar ends where reading stops
    counter = _Counter(counts, report, total, memory_check)
    for src in srcs:
        if budget.exhausted:
            break
        for part in read_parts(src, errors, budget):
            counter.add(part)
    counter.finish()
    return counts, {"documents": counter.documents, "bytes": counter.bytes}


def count_words(
    paths: Iterable[PathLike],
    pattern: Optional[str] = None,
    special_tokens: Sequence[str] = (),
    *,
    field: Optional[str] = None,
    column: Optional[str] = None,
    max_bytes: Optional[int] = None,
    errors: str = "strict",
    client: Any = None,
    workdir: Optional[PathLike] = None,
    progress: Any = None,
    stats: Optional[Dict[str, Any]] = None,
    memory_check: Optional[Callable[[Any], None]] = None,
) -> "_core.WordCounts":
    """The word counts of the files ``paths`` (each file one document for
    plain text; see :mod:`bytepair.corpus` for JSONL, Parquet, compression,
    ``-`` and ``max_bytes``), in order of first appearance.

    ``pattern`` is the pre-tokenizer (a preset name or a regex; ``None`` is
    ``str.split()``); it and ``special_tokens`` must be the ones of the
    tokenizer that will be trained (:func:`train_from_files` takes care of
    it). ``client`` (a ``dask.distributed.Client``) counts the files on its
    workers; ``workdir`` (a folder all workers and this process share) makes
    them hand their tables over as counts files instead of in messages.
    ``stats``, a dict, receives the number of documents and bytes read.
    ``memory_check(table)`` is called every 64 MB of input while counting
    here (not on Dask): training uses it to stop early with a
    ``ResourceError`` once the words so far would not fit.

    >>> count_words([], pattern=None).items()
    []
    """
    regex = resolve_pattern(pattern)
    specials = special_names(special_tokens)
    srcs = make_sources([os.fspath(p) for p in paths], field=field, column=column)
    if client is not None:
        counts, info = _count_on_dask(client, srcs, regex, specials, errors=errors, max_bytes=max_bytes,
                                     workdir=workdir, report=make_reporter(progress))
    else:
        counts, info = count_sources(srcs, regex, specials, errors, Budget(max_bytes), make_reporter(progress),
                                     memory_check)
    if stats is not None:
        stats.update(info, files=len(srcs))
    return counts


# ---------------------------------------------------------------- the counts file


def _escape(word: str) -> str:
    if _NEEDS_ESCAPE.search(word) is None:
        return word
    return _NEEDS_ESCAPE.sub(lambda m: _ESCAPES[m.group()], word)


def _unescape(word: str, where: str) -> str:
    def one(m: "re.Match[str]") -> str:
        c = m.group(1)
        if c not in _UNESCAPES:
            raise FormatError(f"{where}: unknown escape \\{c} in the word (only \\\\ \\t \\n \\r are used)")
        return _UNESCAPES[c]

    return _ESCAPE_SEQ.sub(one, word)


def make_header(
    counts: "_core.WordCounts",
    pattern: Optional[str],
    special_tokens: Sequence[str] = (),
    items: Optional[List[Tuple[str, int]]] = None,
    **meta: Any,
) -> Dict[str, Any]:
    """The JSON header of a counts file for ``counts``."""
    regex = resolve_pattern(pattern)
    items = counts.items() if items is None else items
    header: Dict[str, Any] = {
        "bytepair_counts": FORMAT_VERSION,
        "pattern": regex,
        "pattern_preset": preset_name(regex),
        "special_tokens": special_names(special_tokens),
        "words": len(items),
        "total": sum(c for _, c in items),
    }
    header.update({k: v for k, v in meta.items() if v is not None})
    return header


def save_counts(
    path: PathLike,
    counts: "_core.WordCounts",
    pattern: Optional[str],
    special_tokens: Sequence[str] = (),
    **meta: Any,
) -> None:
    """Write ``counts`` (made with ``pattern`` and ``special_tokens``) to
    ``path``, atomically; gzip-compressed when ``path`` ends in ``.gz``.
    ``meta`` (e.g. ``documents=``, ``bytes=``) goes into the header."""
    path = os.fspath(path)
    items = counts.items()
    header = make_header(counts, pattern, special_tokens, items, **meta)
    with atomic_open(path) as raw:
        fh = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) if path.endswith(".gz") else raw
        fh.write((json.dumps(header) + "\n").encode("utf-8"))
        for start in range(0, len(items), 65536):
            chunk = items[start : start + 65536]
            fh.write("".join(f"{c}\t{_escape(w)}\n" for w, c in chunk).encode("utf-8"))
        if fh is not raw:
            fh.close()


def _open_counts(path: str):
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such counts file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, not a counts file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    if fh.read(2) == b"\x1f\x8b":
        fh.seek(0)
        return gzip.GzipFile(fileobj=fh, mode="rb")
    fh.seek(0)
    return fh


def _parse_header(line: bytes, path: str) -> Dict[str, Any]:
    try:
        text = line.decode("utf-8")
        header = json.loads(text)
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, or an integer of over 4300 digits
        header = None
    if not isinstance(header, dict) or "bytepair_counts" not in header:
        raise FormatError(f"{path}: line 1: not a bytepair counts file (no JSON header with 'bytepair_counts')")
    check_json_text(text, header, f"{path}: line 1")
    if header["bytepair_counts"] != FORMAT_VERSION:
        raise FormatError(f"{path}: line 1: counts format version {header['bytepair_counts']!r} is not supported "
                          f"(this bytepair reads version {FORMAT_VERSION})")
    pattern = header.get("pattern")
    specials = header.get("special_tokens", [])
    if pattern is not None and not isinstance(pattern, str):
        raise FormatError(f"{path}: line 1: 'pattern' must be a string or null")
    if not isinstance(specials, list) or not all(isinstance(t, str) and t for t in specials):
        raise FormatError(f"{path}: line 1: 'special_tokens' must be a list of non-empty strings")
    try:
        check_text_limits(pattern, specials)
    except BytepairError as e:
        raise FormatError(f"{path}: line 1: {e}") from None
    for key in ("words", "total"):
        if key in header and (isinstance(header[key], bool) or not isinstance(header[key], int) or header[key] < 0):
            raise FormatError(f"{path}: line 1: {key!r} must be a non-negative integer")
    return header


def read_header(path: PathLike) -> Dict[str, Any]:
    """The JSON header of a counts file (checked)."""
    path = os.fspath(path)
    fh = _open_counts(path)
    try:
        line = fh.readline()
    except (OSError, EOFError, zlib.error) as e:  # damaged gzip data is a zlib.error
        raise FormatError(f"{path}: line 1: cannot read: {e}") from None
    finally:
        fh.close()
    return _parse_header(line, path)


def read_counts(path: PathLike, into: Optional["_core.WordCounts"] = None) -> Tuple[Dict[str, Any], "_core.WordCounts"]:
    """The header and table of a counts file. ``into`` adds the words to an
    existing table instead (as :func:`merge_counts` does). Any malformed
    line raises ``FormatError`` naming the file and line."""
    path = os.fspath(path)
    fh = _open_counts(path)
    lineno = 0
    try:
        header = _parse_header(fh.readline(), path)
        try:
            table = _core.WordCounts(header.get("pattern"), list(header.get("special_tokens", [])))
        except BytepairError as e:  # the pattern is not a valid regex
            raise FormatError(f"{path}: line 1: {e}") from None
        n = total = 0
        lineno = 1
        for lineno, line in enumerate(fh, 2):
            if not line.endswith(b"\n"):
                raise FormatError(f"{path}: line {lineno}: the file ends in the middle of a line (truncated?)")
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            count_text, tab, word_raw = line.partition(b"\t")
            if not tab:
                raise FormatError(f"{path}: line {lineno}: expected 'count<TAB>word'")
            if not count_text.isdigit() or count_text.startswith(b"0"):
                raise FormatError(f"{path}: line {lineno}: the count {count_text[:20]!r} is not a positive integer")
            count = int(count_text) if len(count_text) <= 20 else 2**64  # no leading zeros: over 20 digits is >= 2**64
            if count >= 2**64:
                raise FormatError(f"{path}: line {lineno}: the count does not fit in 64 bits")
            try:
                word = word_raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise FormatError(f"{path}: line {lineno}: invalid UTF-8 at byte {e.start} of the word") from None
            if "\\" in word:
                word = _unescape(word, f"{path}: line {lineno}")
            if not word:
                raise FormatError(f"{path}: line {lineno}: empty word")
            before = len(table)
            try:
                table.add_word(word, count)
            except BytepairError:  # only a repeated word's counts can overflow 64 bits: reported next
                pass
            if len(table) == before:
                raise FormatError(f"{path}: line {lineno}: the word {word[:40]!r} appears twice")
            n += 1
            total += count
    except (OSError, EOFError, zlib.error) as e:
        raise FormatError(f"{path}: line {lineno + 1}: cannot read: {e}") from None
    finally:
        fh.close()
    if "words" in header and header["words"] != n:
        raise FormatError(f"{path}: line {lineno + 1}: the file holds {n} words but its header says "
                          f"{header['words']} (truncated?)")
    if "total" in header and header["total"] != total:
        raise FormatError(f"{path}: line {lineno + 1}: the counts add up to {total} but the header says {header['total']}")
    if into is not None:
        try:
            into.merge(table)
        except BytepairError as e:  # a word's count over the files merged overflows 64 bits
            raise type(e)(f"{path}: {e} (added to the files before it)") from None
        return header, into
    return header, table


def _same_settings(a: Dict[str, Any], b: Dict[str, Any]) -> bool:
    return a.get("pattern") == b.get("pattern") and sorted(a.get("special_tokens", [])) == sorted(
        b.get("special_tokens", [])
    )


def _describe(pattern: Optional[str]) -> str:
    if pattern is None:
        return "str.split()"
    return preset_name(pattern) or f"the regex {pattern[:60]!r}"


def check_settings(header: Dict[str, Any], pattern: Optional[str], special_tokens: Sequence[str], name: str) -> None:
    """``TrainingError`` unless the counts of ``header`` were made with
    ``pattern`` and ``special_tokens`` (what training will use)."""
    if header.get("pattern") != pattern:
        raise TrainingError(
            f"{name} was counted with the pre-tokenizer {_describe(header.get('pattern'))}, but training uses "
            f"{_describe(pattern)}: train with the same pattern=, or count again"
        )
    if sorted(header.get("special_tokens", [])) != sorted(special_tokens):
        raise TrainingError(
            f"{name} was counted with the special tokens {header.get('special_tokens', [])}, but training uses "
            f"{list(special_tokens)}: train with the same special_tokens=, or count again"
        )


def load_counts(
    path: PathLike, pattern: Optional[str] = _UNSET, special_tokens: Sequence[str] = _UNSET
) -> "_core.WordCounts":
    """The word-count table of a counts file, for ``Tokenizer.train``.
    Given ``pattern`` (preset or regex, ``None`` for ``str.split()``) and/or
    ``special_tokens``, also checks that the file was made with them
    (``TrainingError`` otherwise)."""
    header, table = read_counts(path)
    if pattern is not _UNSET or special_tokens is not _UNSET:
        check_settings(
            header,
            resolve_pattern(pattern) if pattern is not _UNSET else header.get("pattern"),
            special_names(special_tokens) if special_tokens is not _UNSET else header.get("special_tokens", []),
            os.fspath(path),
        )
    return table


def merge_counts_with_header(paths: Sequence[PathLike]) -> Tuple[Dict[str, Any], "_core.WordCounts"]:
    """:func:`merge_counts`, with the header the merged file should have."""
    if not paths:
        raise InputError("no counts files to merge")
    header, table = read_counts(paths[0])
    first = os.fspath(paths[0])
    sums = {k: header.get(k) for k in ("documents", "bytes", "files")}
    for p in paths[1:]:
        h = read_header(p)
        if not _same_settings(header, h):
            raise FormatError(
                f"{os.fspath(p)}: line 1: counted with another pre-tokenizer or other special tokens than {first} "
                "(counts merge only when both are the same)"
            )
        h, table = read_counts(p, into=table)
        for k in sums:
            sums[k] = sums[k] + h[k] if isinstance(sums[k], int) and isinstance(h.get(k), int) else None
    merged = {"pattern": header.get("pattern"), "special_tokens": header.get("special_tokens", []), **sums}
    return merged, table


def merge_counts(paths: Sequence[PathLike]) -> "_core.WordCounts":
    """The counts files ``paths`` added up in order: a word first seen in a
    later file comes after every word of the earlier ones, so merging the
    counts of corpus parts in corpus order gives the counts of the whole
    corpus. Files made with another pattern or other special tokens than the
    first raise ``FormatError``."""
    return merge_counts_with_header(paths)[1]


# ---------------------------------------------------------------- counting on Dask


def _caps(srcs: Sequence[Source], max_bytes: Optional[int]) -> List[Optional[int]]:
    """Each input's share of ``max_bytes`` (inputs are read in order, so the
    cap falls in one file; only plain uncompressed text has a known size)."""
    if max_bytes is None:
        return [None] * len(srcs)
    Budget(max_bytes)  # checks the value
    caps: List[Optional[int]] = []
    left = max_bytes
    for s in srcs:
        if s.kind != TEXT or s.compression:
            raise InputError(
                f"{s.path}: max_bytes= with a Dask client needs uncompressed plain text files (their sizes tell "
                "where the cap falls); count without client=, or decompress"
            )
        size = s.size() or 0
        caps.append(min(size, left))
        left -= caps[-1]
    return caps


# ---------------------------------------------------------------- counting


def count_unit(
    srcs: Sequence[Source],
    caps: Sequence[Optional[int]],
    pattern: Optional[str],
    special_tokens: Sequence[str],
    errors: str = "strict",
    out_path: Optional[str] = None,
) -> Tuple[Any, Dict[str, int]]:
    """A worker's task: the counts of one unit's files, read in order, as a
    list of ``(word, count)`` items, or written to ``out_path`` (a counts
    file) whose path is returned instead."""
    counts = _core.WordCounts(pattern, list(special_tokens))
    counter = _Counter(counts)
    for src, cap in zip(srcs, caps):
        if cap == 0:
            continue
        for part in read_parts(src, errors, Budget(cap)):
            counter.add(part)
    counter.finish()
    info = {"documents": counter.documents, "bytes": counter.bytes}
    if out_path is not None:
        save_counts(out_path, counts, pattern, special_tokens, **info)
        return out_path, info
    return counts.items(), info


def _count_on_dask(
    client: Any,
    srcs: Sequence[Source],
    pattern: Optional[str],
    special_tokens: Sequence[str],
    *,
    errors: str = "strict",
    max_bytes: Optional[int] = None,
    workdir: Optional[str] = None,
    report: Any = None,
    unit_bytes: Optional[int] = None,
) -> Tuple[Any, Dict[str, int]]:
    """Counts ``srcs`` on the workers of ``client``, one task per unit, and
    adds the tables up here in unit order: the same table (order included)
    as counting here. With ``workdir`` (shared by the workers and this
    process) tables come back as counts files."""
    import_distributed()
    srcs = check_sources(srcs)
    caps = _caps(srcs, max_bytes)
    units = group_units(srcs, unit_bytes or UNIT_BYTES)
    if workdir is not None:
        workdir = os.path.abspath(os.fspath(workdir))
        os.makedirs(workdir, exist_ok=True)
    def submit(u: int) -> Any:
        out = os.path.join(workdir, f"unit-{u:06d}-{os.getpid()}.counts") if workdir else None
        return client.submit(count_unit, [srcs[i] for i in units[u]], [caps[i] for i in units[u]], pattern,
                             list(special_tokens), errors, out, pure=False)

    futures = [submit(u) for u in range(len(units))]
    counts = _core.WordCounts(pattern, list(special_tokens))
    info = {"documents": 0, "bytes": 0}
    total = sum(s.size() or 0 for s in srcs) if not any(s.compression for s in srcs) else None
    if total is not None and max_bytes is not None:
        total = min(total, max_bytes)
    try:
        for u, fut in enumerate(futures):
            result, unit_info = result_of(fut, resubmit=lambda u=u: submit(u))  # a unit the scheduler forgot: again
            fut.release()
            if workdir is not None:
                read_counts(result, into=counts)
                os.unlink(result)
            else:
                for word, n in result:
                    counts.add_word(word, n)
            del result
            for k in info:
                info[k] += unit_info[k]
            if report:
                report("count", info["bytes"], total)
    finally:
        for fut in futures:
            fut.cancel()
    if report:
        report("count", info["bytes"], total if total is not None else info["bytes"])
    return counts, info
