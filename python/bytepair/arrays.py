"""Ids as numpy arrays, filled by the core with no Python list in between,
and the knob of the core's piece cache.

numpy is optional: it is imported only when an array is asked for (install
it with ``pip install numpy`` or ``pip install "bytepair[numpy]"``); the
core hands over plain bytes, which ``numpy.frombuffer`` wraps without a
copy. Like tiktoken's ``encode_to_numpy``, the arrays are read-only views of
those bytes (``arr.copy()`` gives a writable one).

>>> import bytepair
>>> tok = bytepair.Tokenizer.train("hello world " * 10, num_merges=8)
>>> arr = tok.encode_to_numpy("hello world")
>>> str(arr.dtype), arr.tolist() == tok.encode("hello world")
('uint32', True)
>>> ids, offsets = tok.encode_batch_to_numpy(["hello", "world", ""])
>>> [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(3)] == tok.encode_batch(["hello", "world", ""])
True
>>> tok.decode(arr)
'hello world'
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Tuple

from bytepair import _core

DEFAULT_CACHE_BYTES = 4 << 20


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is in the test extra
        raise ImportError("arrays need numpy: pip install numpy (or pip install 'bytepair[numpy]')") from None
    return numpy


@functools.lru_cache(maxsize=None)
def _dtype(name: str) -> Any:
    """numpy's dtype object of ``name``, made once (``frombuffer`` parses a dtype string on every call: half
    the cost of wrapping a short document's ids).

    >>> str(_dtype("uint32"))
    'uint32'
    """
    return _numpy().dtype(name)


def ids_array(buffer: bytes) -> Any:
    """A read-only uint32 array over the bytes of native-endian ids.

    >>> ids_array(bytes(8)).tolist()
    [0, 0]
    """
    return _numpy().frombuffer(buffer, dtype=_dtype("uint32"))


def flat_arrays(ids: bytes, offsets: bytes) -> Tuple[Any, Any]:
    """(ids as uint32, offsets as uint64) over the core's two buffers.

    >>> [a.tolist() for a in flat_arrays(bytes(4), bytes(16))]
    [[0], [0, 0]]
    """
    np = _numpy()
    return np.frombuffer(ids, dtype=_dtype("uint32")), np.frombuffer(offsets, dtype=_dtype("uint64"))


def as_id_buffer(ids: Any) -> Any:
    """The bytes of native uint32 ids when ``ids`` is a numpy integer array
    whose values all fit (else None: the caller checks them one by one and
    reports the bad one).

    >>> import numpy as np
    >>> as_id_buffer(np.array([1, 2], dtype=np.int64)) == np.array([1, 2], dtype=np.uint32).tobytes()
    True
    >>> as_id_buffer([1, 2]) is None, as_id_buffer(np.array([-1])) is None
    (True, True)
    """
    if type(ids).__module__ != "numpy" or not hasattr(ids, "dtype") or getattr(ids, "ndim", 0) != 1:
        return None
    np = _numpy()
    if ids.dtype.kind not in "iu":
        return None
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= 2**32):
        return None
    return np.ascontiguousarray(ids, dtype=np.uint32).tobytes()


def set_cache_size(nbytes: int) -> int:
    """Sets the budget of the core's cache of encoded pieces, per thread,
    in bytes (0 turns it off; at most 1 GB); returns the size in force
    (half of it a front table of 32-byte word slots, the rest long pieces
    and 64-byte slots). Default 4 MB, about 65,000 words in the front;
    the word maps of pipelines and SentencePiece models
    get four times as much (see :func:`cache_info`). Ids never depend on
    them; they only save the merging of pieces seen before, kept across
    calls and batches.

    >>> set_cache_size(1 << 20)
    1048576
    >>> set_cache_size(DEFAULT_CACHE_BYTES)
    4194304
    """
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise ValueError(f"the cache size must be a number of bytes >= 0, got {nbytes!r}")
    return int(_core.set_cache_bytes(min(nbytes, 1 << 30)))


def cache_info() -> Dict[str, int]:
    """The caches of encoded pieces: ``size`` (the piece slots' budget per
    thread, bytes), ``allocated`` (bytes held by all threads' piece slots
    now), this thread's ``hits`` and ``misses``; ``word_map_size`` (the
    word maps' budget per thread: four times the slots', as a word costs
    more than a slot) and ``word_maps`` (bytes held now by all threads'
    word maps: the words of pipelines that the slots do not hold, and of
    SentencePiece models). ``set_cache_size`` sets both budgets.

    >>> sorted(cache_info())
    ['allocated', 'hits', 'misses', 'size', 'word_map_size', 'word_maps']
    """
    size, allocated, hits, misses, word_map_size, word_maps = _core.cache_info()
    return {"size": size, "allocated": allocated, "hits": hits, "misses": misses, "word_map_size": word_map_size,
            "word_maps": word_maps}


def clear_cache() -> None:
    """Empties every thread's piece cache and word map (for timing cold starts).

    >>> clear_cache()
    """
    _core.clear_caches()
