"""Token-aware chunking and truncation: what users reach for semchunk,
LangChain's ``TokenTextSplitter`` or rust-gems' ``bpe`` to do.

- :func:`chunk_spans` (``Tokenizer.chunk``) cuts a text into pieces of at most
  ``max_tokens`` tokens each, at the best natural boundary that fits: after a
  blank line (paragraph), else after a line break, else after a sentence's
  final punctuation, else before a run of whitespace (a word), else between
  two tokens. Without overlap the chunks cover the text exactly:
  ``"".join(chunks) == text``.
- :func:`truncate` returns the longest prefix that fits in ``max_tokens``
  tokens: ``count(prefix) <= max_tokens`` and one more character would not fit.
- :func:`count_limited` (``Tokenizer.count(text, limit=N)``) returns
  ``min(count(text), N + 1)``, and stops encoding as soon as the count is
  known to pass ``N``.

Token counts are those of ``Tokenizer.count``: each chunk's count is the
number of ids ``encode_ordinary(chunk)`` gives (special-token text counted
as plain text). Every chunk's count is checked by encoding the chunk itself,
so the promise holds although BPE counts are not additive (a word cut in two
may need more tokens than it did whole). The work is linear in the text: the
text is encoded a window at a time (each window a small multiple of a
chunk), and each chunk is counted about once more.

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("the cat sat on the mat. " * 50, num_merges=12)
>>> text = "The cat sat.\\n\\nThe mat sat on the cat. The end."
>>> chunks = list(tok.chunk(text, max_tokens=8))
>>> "".join(chunks) == text and all(tok.count(c) <= 8 for c in chunks)
True
>>> chunks[0]
'The cat sat.\\n\\n'
>>> tok.count(tok.truncate(text, 5)) <= 5
True
>>> tok.count(text, limit=3)
4
"""

from __future__ import annotations

import bisect
import itertools
import re
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from bytepair.errors import BytepairError
from bytepair.limits import replace_surrogates
from bytepair.stream import encode_stream

# natural boundaries, best first; each gives the cut positions it allows
# (the end of the match): a paragraph ends after its blank line(s), a line
# after its line break, a sentence after its final punctuation (the space
# that follows starts the next chunk, as a byte-level BPE token carries its
# leading space), a word before the whitespace that follows it
LEVELS: List[Tuple[str, "re.Pattern[str]"]] = [
    ("paragraph", re.compile(r"\n(?:[^\S\n]*\n)+")),
    ("line", re.compile(r"\n")),
    ("sentence", re.compile(r"[.!?\u2026]+[\"')\]\u201d\u2019]*(?=\s)|[\u3002\uff01\uff1f]+")),
    ("word", re.compile(r"(?<=\S)(?=\s)")),
]
_TRIES_PER_LEVEL = 3  # cut positions of one kind tried (last first) before a lesser kind
_MIN_WINDOW = 256  # characters


def _counter(tok: Any) -> Callable[[str], int]:
    """``tok``'s count of a text (special-token text as plain text)."""
    return tok._core.count


def _token_ends(tok: Any, text: str) -> List[int]:
    """The character offset where each token of ``text`` ends (special-token
    text as plain text); used as an estimate only, every cut is counted."""
    _, spans = tok._core.encode_with_offsets(text, [], [])
    ends, last = [], 0
    for _, end in spans:
        last = max(last, end)  # offsets of normalized pipelines may step back
        ends.append(last)
    return ends


# every token's length in bytes, per tokenizer (kept as long as it lives)
_LENGTHS: "weakref.WeakKeyDictionary[Any, List[int]]" = weakref.WeakKeyDictionary()


class _ByteModelEnds:
    """Token ends in characters for the byte model, from the ids alone: the
    tokens' byte lengths summed (a table built once per tokenizer), turned
    into characters only where asked (a token that ends inside a character
    ends, here, where that character starts)."""

    def __init__(self, tok: Any, text: str) -> None:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = replace_surrogates(text).encode("utf-8")
        lengths = _LENGTHS.get(tok)
        if lengths is None:
            lengths = _LENGTHS[tok] = [len(tok._core.token_bytes(i) or b"") for i in range(tok.n_vocab)]
        self.data, self.ascii = data, len(data) == len(text)
        self.byte_ends = list(itertools.accumulate(map(lengths.__getitem__, tok._core.encode_ordinary(
            text if self.ascii else data.decode("utf-8")))))
        self._chars: Dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.byte_ends)

    def __getitem__(self, j: int) -> int:
        b = self.byte_ends[j]
        if self.ascii:
            return b
        c = self._chars.get(b)
        if c is None:
            c = self._chars[b] = len(self.data[:b].decode("utf-8", "ignore"))
        return c

    def __iter__(self) -> Iterator[int]:
        return (self[j] for j in range(len(self)))


def _ends(tok: Any, text: str) -> Sequence[int]:
    """Token ends (characters) of ``text``: from the ids alone for the byte
    model (fast), from the offsets otherwise (char model: words and markers;
    pipelines: normalized text; HF's prefix space)."""
    if tok.model != "pipeline" and tok.model == "byte" and not tok.add_prefix_space:
        return _ByteModelEnds(tok, text)
    return _token_ends(tok, text)


def _check_max(max_tokens: Any, name: str = "max_tokens") -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise BytepairError(f"{name} must be an integer >= 1, got {max_tokens!r}")
    return max_tokens


def _check_str(text: Any) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return text


class _Windows:
    """Token ends of ``text[pos:pos + w]`` for a window ``w`` that holds more
    than ``max_tokens`` tokens (or reaches the end of the text); ``w`` starts
    from the characters per token seen so far, and doubles when too short."""

    def __init__(self, tok: Any, text: str, max_tokens: int) -> None:
        self.tok, self.text, self.max_tokens = tok, text, max_tokens
        self.chars_per_token = 4.0

    def at(self, pos: int) -> Tuple[Sequence[int], int]:
        """(token ends relative to ``pos``, end of the window)."""
        n = len(self.text)
        want = self.max_tokens + 16  # tokens near a window's end may differ from the whole text's
        width = max(_MIN_WINDOW, int(want * self.chars_per_token * 1.25))
        while True:
            end = min(n, pos + width)
            ends = _ends(self.tok, self.text[pos:end])
            if end == n or len(ends) > want:
                if ends:
                    self.chars_per_token = max(0.25, (end - pos) / len(ends))
                return ends, end
            width *= 2


def _longest_prefix(text: str, pos: int, max_tokens: int, ends: Sequence[int], window_end: int,
                    count: Callable[[str], int]) -> int:
    """The largest ``k >= pos`` found from the estimate ``ends`` with
    ``count(text[pos:k]) <= max_tokens`` and, unless ``k`` is the end of the
    text, ``count(text[pos:k + 1]) > max_tokens`` (a prefix one character
    longer does not fit). ``pos`` itself when not even one character fits."""
    n = len(text)

    def fits(k: int) -> bool:
        return count(text[pos:k]) <= max_tokens

    if len(ends) <= max_tokens and window_end == n:
        j, k = len(ends), n
    else:
        j = min(max_tokens, len(ends))
        k = pos + ends[j - 1] if j else pos
    # step back, token by token of the estimate, until it fits
    while k > pos and not fits(k):
        while j > 0 and pos + ends[j - 1] >= k:
            j -= 1
        k = pos + ends[j - 1] if j else pos
    # step forward while one more character fits (galloping: a long run that
    # adds no token, such as spaces in the char model, costs a few counts)
    while k < n and fits(k + 1):
        k += 1
        step = 2
        while k + step <= n and fits(k + step):
            k += step
            step *= 2
    return k


def truncate(tok: Any, text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` that fits in ``max_tokens`` tokens:
    ``count(prefix) <= max_tokens``, and the prefix one character longer
    does not fit (``text`` itself when it fits). BPE counts of prefixes are
    not monotone (a character can complete a merge), so a still longer
    prefix may fit again; the prefix returned is the one reached from the
    tokens of ``text``, about ``max_tokens`` of them. ``""`` when not even
    the first character fits.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("hello world " * 20, num_merges=10)
    >>> truncate(tok, "hello world hello world", 2)
    'hello world'
    """
    text = _check_str(text)
    max_tokens = _check_max(max_tokens)
    if not text:
        return text
    ends, window_end = _Windows(tok, text, max_tokens).at(0)
    return text[: _longest_prefix(text, 0, max_tokens, ends, window_end, _counter(tok))]


_RUN_CHARS = frozenset(".!?\u2026\"')]\u201d\u2019\u3002\uff01\uff1f")


def _scan_start(text: str, pos: int) -> int:
    """Where to start looking for boundaries after ``pos`` so that a match
    that began before ``pos`` (a run of blank lines, of final punctuation)
    is found as a search of the whole text finds it: the start of the run
    of whitespace and punctuation that holds ``pos``."""
    while pos > 0 and (text[pos - 1].isspace() or text[pos - 1] in _RUN_CHARS):
        pos -= 1
    return pos


def _best_cut(text: str, pos: int, k: int, max_tokens: int, count: Callable[[str], int]) -> Optional[int]:
    """The last cut in ``(pos, k]`` (``k``: the longest prefix that fits)
    at the best kind of natural boundary that has one which fits, or None."""
    n = len(text)
    scan = _scan_start(text, pos)
    for _, pattern in LEVELS:
        cuts = [m.end() for m in pattern.finditer(text, scan, min(n, k + 1)) if pos < m.end() <= k]
        for cut in cuts[::-1][:_TRIES_PER_LEVEL]:
            if cut == k or count(text[pos:cut]) <= max_tokens:
                return cut
    return None


def _too_long(text: str, pos: int, max_tokens: int) -> BytepairError:
    char = text[pos]
    return BytepairError(
        f"the character {char!r} (U+{ord(char):04X}) at position {pos} cannot start a chunk: "
        f"it needs more than max_tokens={max_tokens} tokens"
    )


def chunk_spans(tok: Any, text: str, max_tokens: int, overlap: int = 0) -> Iterator[Tuple[int, int, int]]:
    """``(start, end, tokens)`` of each chunk of ``text``: ``text[start:end]``
    has ``tokens <= max_tokens`` tokens (``count``). The first chunk starts
    at 0, the last ends at ``len(text)``; each starts where the previous one
    ended, or with ``overlap`` (a number of tokens, below ``max_tokens``) at
    the earliest natural boundary (else token boundary) whose stretch up to
    the previous end fits in ``overlap`` tokens. A chunk ends at the best
    kind of natural boundary that fits: paragraph, line, sentence, word, in
    that order, at the last boundary of that kind before the longest prefix
    that fits (:func:`truncate`'s); the rest of the text when it fits; the
    longest prefix that fits when no natural boundary does. ``BytepairError`` when one character alone needs more
    than ``max_tokens`` tokens. An empty text has no chunk.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("one two three four five six " * 30, num_merges=20)
    >>> text = "one two three four five six"
    >>> [text[s:e] for s, e, _ in chunk_spans(tok, text, 3)]
    ['one two three', ' four five six']
    >>> [text[s:e] for s, e, _ in chunk_spans(tok, text, 4, overlap=1)]
    ['one two three four', ' four five six']
    """
    text = _check_str(text)
    max_tokens = _check_max(max_tokens)
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < max_tokens:
        raise BytepairError(f"overlap must be an integer from 0 to max_tokens - 1 ({max_tokens - 1}), got {overlap!r}")
    count = _counter(tok)
    windows = _Windows(tok, text, max_tokens)
    n, pos, previous_end = len(text), 0, 0
    while pos < n:
        ends, window_end = windows.at(pos)
        k = _longest_prefix(text, pos, max_tokens, ends, window_end, count)
        cut = k if k == n else _best_cut(text, pos, k, max_tokens, count)
        if cut is None:
            cut = k  # no natural boundary fits: between two tokens
        if cut <= previous_end and pos < previous_end:
            pos = previous_end  # the overlap left no room to move on: this chunk starts without it
            continue
        if cut == pos:
            raise _too_long(text, pos, max_tokens)
        tokens = count(text[pos:cut])
        yield pos, cut, tokens
        if cut == n:
            return
        previous_end = cut
        pos = _overlap_start(text, pos, cut, overlap, ends, count) if overlap else cut


def _overlap_start(text: str, start: int, end: int, overlap: int, ends: Sequence[int],
                   count: Callable[[str], int]) -> int:
    """The earliest position in ``(start, end]`` at a natural boundary (any
    kind), else at a token end of the estimate, from which ``text[p:end]``
    fits in ``overlap`` tokens; ``end`` when none is found nearby."""
    m = bisect.bisect_right(ends, end - start)  # tokens of the chunk, by the estimate (ends do not decrease)
    first = start + ends[m - overlap - 1] if m > overlap else start + 1
    first = max(first, start + 1)
    candidates = set()
    scan = _scan_start(text, first)
    for _, pattern in LEVELS:
        candidates.update(x.end() for x in pattern.finditer(text, scan, end) if first <= x.end() < end)
    tried = 0
    for p in sorted(candidates):
        if count(text[p:end]) <= overlap:
            return p
        tried += 1
        if tried >= _TRIES_PER_LEVEL:
            break
    for j in range(max(0, m - overlap - 1), m):
        p = start + ends[j]
        if first <= p < end and count(text[p:end]) <= overlap:
            return p
    return end


def chunk(tok: Any, text: str, max_tokens: int, overlap: int = 0) -> Iterator[str]:
    """The chunks of :func:`chunk_spans` as strings.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("a b c d " * 20, num_merges=4)
    >>> list(chunk(tok, "a b\\nc d", 3))
    ['a b\\n', 'c d']
    """
    for start, end, _ in chunk_spans(tok, text, max_tokens, overlap):
        yield text[start:end]


def count_limited(tok: Any, text: str, limit: int) -> int:
    """``min(count(text), limit + 1)``: the exact count when it is at most
    ``limit``, else ``limit + 1``. The byte and char models encode the text
    a block at a time (blocks doubling from 4096 characters, the ids of the
    whole text as ``encode_stream`` settles them) and stop as soon as more
    than ``limit`` tokens are settled; Hugging Face pipelines count the
    whole text (their pre-tokenizers and normalizers give no safe place to
    stop).

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("a b c d " * 20, num_merges=4)
    >>> count_limited(tok, "a b c d", 2), count_limited(tok, "a b c d", 100) == tok.count("a b c d")
    (3, True)
    """
    text = _check_str(text)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise BytepairError(f"limit must be an integer >= 0, got {limit!r}")
    if tok.model == "pipeline":
        return min(len(tok.encode_ordinary(text)), limit + 1)
    def blocks() -> Iterator[str]:
        pos, size = 0, 4096
        while pos < len(text):
            yield text[pos:pos + size]
            pos += size
            size = min(size * 2, 1 << 22)

    total = 0
    stream = encode_stream(tok, blocks(), [], [], None)
    try:
        for ids in stream:
            total += len(ids)
            if total > limit:
                return limit + 1
    finally:
        stream.close()
    return total
