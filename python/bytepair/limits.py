"""Limits and input checks, below the API: the memory training may use, and
the checks every entry point applies to texts, ids, patterns and special
tokens (written once here; the core repeats none of them in Python).

**Memory.** Estimate what merging needs from the word counts, and refuse
with a clear ``ResourceError`` rather than be killed.

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

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from bytepair.errors import BytepairError, PatternError, ResourceError, TokenIdTypeError

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
        f"this process already holds {_fmt(held)}), but {have}: train on less text (max_bytes=), or count the "
        "words anywhere (bytepair.counts.count_words, on Dask with client=, adding counts files up with "
        "bytepair.counts.merge_counts) and Tokenizer.train_from_counts on a machine with more memory; "
        "max_memory='none' skips this check (the estimate is within about 1.3x of what training uses)"
    )


# ---------------------------------------------------------------- input checks

SpecialTokens = Union[Sequence[str], Mapping[str, int]]

# ids index dense tables (here and in the core): a few unused ids are fine,
# ids far above the number of tokens would allocate from what a file declares
MAX_UNUSED_IDS = 2**20

# what the core is given to compile: its regex engine needs ~350 bytes per
# character of a pattern, and its special-token matcher is built in time
# quadratic in the length of a repetitive special token ("aaa...")
MAX_PATTERN_CHARS = 2**16
MAX_SPECIAL_TOKEN_BYTES = 4096


def check_unused_ids(used: int, largest: int) -> None:
    """``BytepairError`` when ``used`` ids whose largest is ``largest`` leave
    more than ``MAX_UNUSED_IDS`` ids unused.

    >>> check_unused_ids(3, 2)
    >>> check_unused_ids(3, 2**21)
    Traceback (most recent call last):
    bytepair.errors.BytepairError: the id 2097152 is far above the 3 ids in use: it leaves 2097150 ids unused, and at most 1048576 may be (ids index a table)
    """
    if largest + 1 - used > MAX_UNUSED_IDS:
        raise BytepairError(
            f"the id {largest} is far above the {used} ids in use: it leaves {largest + 1 - used} ids unused, "
            f"and at most {MAX_UNUSED_IDS} may be (ids index a table)"
        )


def check_text_limits(pattern: Optional[str], special_tokens: Iterable[str]) -> None:
    """``BytepairError`` for a pattern or a special token far longer than any real one.

    >>> check_text_limits("x" * 10, ["<|endoftext|>"])
    """
    if isinstance(pattern, str) and len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pattern is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS} may be")
    for text in special_tokens:
        if isinstance(text, str) and len(text) * 4 > MAX_SPECIAL_TOKEN_BYTES:
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_SPECIAL_TOKEN_BYTES:
                raise BytepairError(
                    f"the special token {text[:40]!r}... is {size} bytes long; at most {MAX_SPECIAL_TOKEN_BYTES} may be"
                )


def special_names(special_tokens: Optional[SpecialTokens], unk_token: Optional[str] = None,
                  error: type = BytepairError) -> List[str]:
    """The special tokens' texts in order (a str is one token); ``unk_token``
    is one of them, added first when a sequence lacks it (an explicit
    mapping must hold it).

    >>> special_names(["<a>", "<b>"], unk_token="<unk>")
    ['<unk>', '<a>', '<b>']
    """
    if not special_tokens:
        names: List[str] = []
    elif isinstance(special_tokens, str):
        names = [special_tokens]
    else:
        names = list(special_tokens)
    if unk_token is not None and unk_token not in names:
        if isinstance(special_tokens, Mapping):
            raise error(f"unk_token {unk_token!r} must be one of the explicit special tokens")
        names = [unk_token] + names
    return names


def special_ids(special_tokens: Optional[SpecialTokens], first_id: int) -> Dict[str, int]:
    """Special tokens as {text: id}: a mapping is taken as is (checked), a
    sequence is numbered from ``first_id`` in order.

    >>> special_ids(["<a>", "<b>", "<a>"], 10)
    {'<a>': 10, '<b>': 11}
    """
    if not special_tokens:
        return {}
    if isinstance(special_tokens, str):
        special_tokens = [special_tokens]
    out: Dict[str, int] = {}
    if isinstance(special_tokens, Mapping):
        for text, id_ in special_tokens.items():
            if not isinstance(text, str) or not text:
                raise BytepairError(f"special token {text!r} must be a non-empty string")
            if isinstance(id_, bool) or not isinstance(id_, int) or id_ < 0 or id_ >= 2**32 - 1:
                raise BytepairError(f"special token {text!r} has an invalid id {id_!r}")
            out[text] = id_
        if len(set(out.values())) != len(out):
            raise BytepairError("two special tokens share one id")
        return out
    for text in special_tokens:
        if not isinstance(text, str) or not text:
            raise BytepairError(f"special token {text!r} must be a non-empty string")
        if text not in out:
            out[text] = first_id + len(out)
    return out


def check_text(text: Any) -> str:
    """``text`` if it is a str, else ``TypeError``.

    >>> check_text("a")
    'a'
    """
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return text


def replace_surrogates(text: str) -> str:
    """Lone surrogates (not valid in UTF-8) become U+FFFD, as tiktoken does.

    >>> replace_surrogates("a" + chr(0xD800) + "b")
    'a\ufffdb'
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def surrogate_safe(fn: Callable[..., Any], text: Any, *args: Any) -> Any:
    """``fn(text, *args)``; a text holding lone surrogates is retried with
    them replaced (the check costs nothing when there are none).

    >>> surrogate_safe(lambda t: t.encode("utf-8"), chr(0xD800))
    b'\xef\xbf\xbd'
    """
    try:
        return fn(check_text(text), *args)
    except UnicodeEncodeError:
        return fn(replace_surrogates(text), *args)


def surrogate_safe_batch(fn: Callable[..., Any], texts: Iterable[Any], *args: Any) -> Any:
    """``fn(texts, *args)`` for a batch, ``fn`` being a core call that takes
    a sequence of ``str``. When it refuses the batch (a text that is not a
    str, lone surrogates, an iterable that is not a sequence: it reads none
    of it then), every text is checked, and the batch retried with lone
    surrogates replaced if one holds any. A batch of plain texts thus costs
    no Python step per text.

    >>> surrogate_safe_batch(lambda ts: [len(t) for t in ts], ["ab", "c"])
    [2, 1]
    """
    if isinstance(texts, (list, tuple)):
        try:
            return fn(texts, *args)
        except (TypeError, UnicodeEncodeError):
            pass  # named or replaced below
    texts = [check_text(t) for t in texts]
    try:
        return fn(texts, *args)
    except UnicodeEncodeError:
        return fn([replace_surrogates(t) for t in texts], *args)


def dropout_args(dropout: Any, seed: Any) -> Tuple[float, int]:
    """BPE-dropout's probability and seed, checked, as the core takes them.

    >>> dropout_args(0.5, -1)
    (0.5, 18446744073709551615)
    """
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
        raise BytepairError(f"dropout must be a probability between 0 and 1, got {dropout!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BytepairError(f"seed must be an integer, got {seed!r}")
    return float(dropout), seed % 2**64


def check_ids(ids: Iterable[Any]) -> List[int]:
    """Token ids as a list of ints; anything else is ``TokenIdTypeError`` (a ``TypeError``) naming its position.

    >>> check_ids([1, 2])
    [1, 2]
    """
    if type(ids) is list and set(map(type, ids)) <= _INT_ONLY:
        return ids  # the usual case, checked in C (an isinstance per id cost more than decoding them)
    return [check_id(id_, i) for i, id_ in enumerate(ids)]


_INT_ONLY = {int}  # exactly int: bool and other Integral types take check_id's path


def check_id(id_: Any, position: Optional[int] = None) -> int:
    """One token id as an int; anything else is ``TokenIdTypeError`` (a ``TypeError``, as in
    tiktoken and Hugging Face), naming ``position`` when given.

    >>> check_id(7)
    7
    """
    if isinstance(id_, bool) or not isinstance(id_, numbers.Integral):
        where = "" if position is None else f" at position {position}"
        raise TokenIdTypeError(f"token id {id_!r}{where} is not an integer")
    return int(id_)
