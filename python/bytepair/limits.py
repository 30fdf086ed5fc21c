"""Memory limits of training: estimate what merging needs from the word
counts, and refuse with a clear ``ResourceError`` rather than be killed.

Training memory is set by the distinct words, not by the corpus: the
trainer holds every symbol of every distinct word in one linked array
(symbol, neighbours, word: 16 bytes) plus, per adjacent pair, its count,
its queue entry and the list of its positions.
Its peak is reached when the pairs are first counted (later merges mostly
reuse that memory; the vocabulary size hardly matters), so it is estimated
from two numbers of the table (``WordCounts.sizes()``)::

    extra = 308 bytes x distinct words + 24 bytes x their initial symbols

(symbols: bytes in the byte model; characters, plus one end-of-word marker
per word when it is a separate symbol, in the char model).

**Calibration.** The two constants are a least-squares fit, rounded up, of
the peak RSS that training added (VmHWM after training minus VmRSS before,
with the peak reset through ``/proc/self/clear_refs``) on slices of 10 to
100 MB of the ``en``, ``code`` and ``multi`` corpora of
``scripts/make_corpora.py``, both models, vocabularies 8k to 64k: the
estimate was within 0.75x to 1.2x of the measured growth on each. The
trainer's rework (flat linked symbols, per-pair positions) moved the 60 MB
slices to 0.82x-1.01x, so both constants were raised by a fifth (1.0x-1.2x
there, erring on the side of stopping early). ``benches/bench_memory.py``
measures it again and writes the ratio to ``docs/scale.md``.

The limit is ``max_memory`` bytes for the whole process (what it holds now
plus the estimate), by default what it holds now plus the machine's
available memory (``MemAvailable`` of ``/proc/meminfo``; no check where that
cannot be read).

>>> parse_memory("8G"), parse_memory("500M"), parse_memory(1024), parse_memory("none")
(8000000000, 500000000, 1024, None)
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from bytepair.errors import ResourceError

BYTES_PER_WORD = 308
BYTES_PER_SYMBOL = 24
UNLIMITED = ("none", "off", "unlimited")

MemoryLimit = Union[None, int, str]


def _proc_kb(path: str, key: str) -> Optional[int]:
    try:
        with open(path, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_memory() -> Optional[int]:
    """The machine's available memory in bytes (``MemAvailable``), or None."""
    return _proc_kb("/proc/meminfo", "MemAvailable")


def process_memory() -> int:
    """This process's resident memory in bytes (``VmRSS``; 0 if unknown)."""
    return _proc_kb("/proc/self/status", "VmRSS") or 0


_DECIMAL = {"K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_BINARY = {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def _size_value(text: str) -> float:
    """The number of bytes a size string spells (may be negative or
    fractional: the callers decide); ValueError when it spells none."""
    upper = text.strip().upper()
    for suffix, mult in _BINARY.items():
        if upper.endswith(suffix):
            value = float(upper[: -len(suffix)]) * mult
            break
    else:
        upper = upper.removesuffix("B")
        mult = _DECIMAL.get(upper[-1:], 1)
        value = float(upper[:-1] if upper[-1:] in _DECIMAL else upper) * mult
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text!r} is not a finite size")
    return value


def parse_size(text: str) -> int:
    """A byte count: a number with an optional suffix, ``K``, ``M``, ``G``,
    ``T`` (powers of 1000) or ``KiB``, ``MiB``, ``GiB``, ``TiB`` (powers of
    1024), and an optional ``B``, in any case. The one size grammar of the
    library and the command line (``--max-bytes``; ``max_memory`` through
    :func:`parse_memory`). Raises ValueError for anything else, and for a
    negative size.

    >>> parse_size("10M"), parse_size("1500"), parse_size("2G"), parse_size("1GiB"), parse_size("3kb")
    (10000000, 1500, 2000000000, 1073741824, 3000)
    """
    try:
        value = _size_value(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a size (e.g. 500000, 10M, 2G)") from None
    if value < 0:
        raise ValueError(f"{text!r} is not a size (e.g. 500000, 10M, 2G)")
    return int(value)


def parse_memory(value: MemoryLimit) -> Optional[int]:
    """``max_memory`` as bytes: an int, or a size such as ``"8G"``, ``"500M"``
    (:func:`parse_size`: powers of 1000; ``GiB``/``MiB`` for powers of 1024);
    ``"none"`` turns the check off (None)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ResourceError(f"max_memory must be a number of bytes or a size like '8G', got {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise ResourceError(f"max_memory must be positive, got {value}")
        return value
    if isinstance(value, str):
        if value.strip().lower() in UNLIMITED:
            return None
        try:
            n = _size_value(value)
        except ValueError:
            raise ResourceError(f"max_memory {value!r} is not a size (e.g. 8G, 500M, 'none')") from None
        if not n > 0:
            raise ResourceError(f"max_memory {value!r} must be positive")
        return int(n)
    raise ResourceError(f"max_memory must be a number of bytes or a size like '8G', got {value!r}")


def symbols(counts: Any, model: str, end_of_word: Optional[str], fused: bool) -> Tuple[int, int]:
    """(distinct words, their initial symbols) of a word-count table."""
    words, n_bytes, n_chars = counts.sizes()
    if model == "byte":
        return words, n_bytes
    return words, n_chars + (words if end_of_word and not fused else 0)


def estimate_training_bytes(counts: Any, model: str = "byte", end_of_word: Optional[str] = None,
                            fused: bool = False) -> int:
    """Bytes that training on ``counts`` adds to the process (see the module
    docstring for the model and its calibration)."""
    words, syms = symbols(counts, model, end_of_word, fused)
    return BYTES_PER_WORD * words + BYTES_PER_SYMBOL * syms


def _fmt(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def check_training_memory(counts: Any, model: str, end_of_word: Optional[str], fused: bool,
                          max_memory: MemoryLimit = None, *, during: str = "training") -> None:
    """Raises ``ResourceError`` when the process would need more than the
    limit to train on ``counts`` (``max_memory``: bytes, a size string,
    ``"none"``; None: what the process holds plus ``MemAvailable``)."""
    explicit = max_memory is not None
    if explicit:
        limit = parse_memory(max_memory)
        if limit is None:
            return
        available = None
    else:
        available = available_memory()
        if available is None:
            return
    held = process_memory()
    extra = estimate_training_bytes(counts, model, end_of_word, fused)
    words, syms = symbols(counts, model, end_of_word, fused)
    if explicit:
        if held + extra <= limit:
            return
        have = f"max_memory is {_fmt(limit)}"
    else:
        if extra <= available:
            return
        have = f"only {_fmt(available)} is available (MemAvailable)"
    unit = "bytes" if model == "byte" else "characters"
    raise ResourceError(
        f"{during} needs about {_fmt(extra)} more memory ({words:,} distinct words, {syms:,} {unit} in them; "
        f"this process already holds {_fmt(held)}), but {have}: train on less text (--max-bytes / max_bytes=), "
        "or count the words anywhere (bytepair count-words, on Dask with --dask, merging counts files with "
        "--merge) and train --from-counts on a machine with more memory; --max-memory none skips this check "
        "(the estimate is within about 1.3x of what training uses)"
    )
