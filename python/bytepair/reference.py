"""The pure-Python reference implementation of bytepair (the oracle).

Everything here is written to be read, not to be fast: training recounts every
pair at every step, exactly like the seed texts do, and encoding applies the
merges one after the other. The Rust core must give the same answers.

A whole session, on seed 000's corpus:

>>> m = train(["lower", "lowest", "newer", "newest", "wider", "low", "new"],
...           model="char", end_of_word="_", tie_break="alphabetical", num_merges=6)
>>> m.trace()[0]
'merge 1: w + e -> we  (count 4)'
>>> m.tokenize("slower")
['s', 'lowe', 'r_']
>>> m.decode(m.encode("lower newest"))
'lower newest'

This module only imports ``bytepair.errors`` and ``bytepair.patterns`` from
the package, never the compiled extension.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Mapping

import regex

from bytepair.errors import (
    BytepairError,
    DisallowedSpecialError,
    EncodeError,
    FormatError,
    PatternError,
    TrainingError,
    TrainingWarning,
    UnknownTokenError,
)
from bytepair.patterns import resolve_pattern

MODELS = ("char", "byte")
TIE_BREAKS = ("first", "alphabetical", "pair-id", "max-string")
_DEFAULT = object()  # stands for "the model's default pattern" in train()


# -----------------------------------------------------------------------------
# words


def _compile(pattern):
    """compile a pattern (preset name or regex), turning regex errors into PatternError"""
    if not isinstance(pattern, str):
        raise PatternError(f"pattern must be a string or None, not {type(pattern).__name__}")
    try:
        return regex.compile(resolve_pattern(pattern))
    except regex.error as e:
        raise PatternError(f"invalid pattern {pattern!r}: {e}") from None


def _word_spans(text, pattern):
    """
    the words of text with their start index, e.g.
    _word_spans("hi  you", None) -> [(0, "hi"), (4, "you")]
    pattern None is str.split(); empty regex matches are dropped.
    """
    if pattern is None:
        spans, pos = [], 0
        for word in text.split():
            # a word starts at the first non-space character after the previous one
            start = text.index(word, pos)
            spans.append((start, word))
            pos = start + len(word)
        return spans
    return [(m.start(), m.group()) for m in _compile(pattern).finditer(text) if m.group()]


def split_words(text, pattern=None):
    """
    split text into words (pre-tokenization), e.g.
    split_words("the  cat sat", None) -> ["the", "cat", "sat"]
    split_words("the cat", "gpt2") -> ["the", " cat"]
    pattern None is str.split(); otherwise regex.findall (preset names allowed).
    """
    return [word for _, word in _word_spans(text, pattern)]


def _split_specials(text, special_tokens):
    """
    cut text at special-token text, e.g.
    _split_specials("a<|x|>b<|x|>", ["<|x|>"]) -> ["a", "b", ""]
    the leftmost special wins; at the same position the longest one.
    """
    segments, start = [], 0
    while True:
        hit = _find_special(text, special_tokens, start)
        if hit is None:
            segments.append(text[start:])
            return segments
        segments.append(text[start:hit[0]])
        start = hit[0] + len(hit[1])


def _find_special(text, tokens, start):
    """
    the first special token in text at or after start, as (index, token), e.g.
    _find_special("ab<|a|><|ab|>", ["<|ab|>", "<|a|>"], 0) -> (2, "<|a|>")
    at the same index the longest token wins; None if there is none.
    """
    best = None
    for token in tokens:
        i = text.find(token, start)
        if i != -1 and (best is None or (i, -len(token)) < (best[0], -len(best[1]))):
            best = (i, token)
    return best


def _valid_text(text):
    """
    lone surrogates (not valid in UTF-8) become U+FFFD, as in tiktoken, e.g.
    _valid_text("a\\ud800b") -> "a\\ufffdb"
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _count(documents, split, special_tokens):
    """count words of documents (a str or iterable of str); split maps a segment to words"""
    if isinstance(documents, str):
        documents = [documents]
    counts = {}
    for doc in documents:
        if not isinstance(doc, str):
            raise TrainingError(f"documents must be str, not {type(doc).__name__}")
        for segment in _split_specials(_valid_text(doc), special_tokens):
            for word in split(segment):
                counts[word] = counts.get(word, 0) + 1
    return counts


def count_words(documents, pattern=None, special_tokens=()):
    """
    count the words of a document (str) or of documents (iterable of str), e.g.
    count_words(["low low", "lower"]) -> {"low": 2, "lower": 1}
    count_words("ab<|x|>ab", special_tokens=["<|x|>"]) -> {"ab": 2}
    special-token text cuts the documents first and never enters a word.
    the dict is in order of first appearance.
    """
    return _count(documents, lambda s: split_words(s, pattern), list(special_tokens))


# -----------------------------------------------------------------------------
# symbols, pairs and merges


def initial_symbols(word, model="char", end_of_word="</w>", end_of_word_fused=False):
    """
    the symbols a word starts as, e.g.
    initial_symbols("low", end_of_word="_") -> ["l", "o", "w", "_"]
    initial_symbols("low", end_of_word="</w>", end_of_word_fused=True) -> ["l", "o", "w</w>"]
    initial_symbols("low", end_of_word=None) -> ["l", "o", "w"]
    initial_symbols("hé", model="byte") -> [b"h", b"\\xc3", b"\\xa9"]
    """
    if model == "byte":
        return [bytes([b]) for b in word.encode("utf-8")]
    if end_of_word is None:
        return list(word)
    if end_of_word_fused:
        return list(word[:-1]) + [word[-1] + end_of_word]
    return list(word) + [end_of_word]


def get_pair_counts(words):
    """
    count adjacent pairs over (symbols, count) words, in order of first occurrence, e.g.
    get_pair_counts([(["a", "a", "a"], 2), (["a", "b"], 1)]) -> {("a", "a"): 4, ("a", "b"): 1}
    """
    counts = {}
    for symbols, n in words:
        for pair in zip(symbols, symbols[1:]):
            counts[pair] = counts.get(pair, 0) + n
    return counts


def derive_merges(tokens):
    """
    The merges of a byte vocabulary given as ranks (``tokens[id]`` the bytes
    of that id, or None): each multi-byte token split in two by running BPE
    on its bytes with the lower ranks only, as (left id, right id, id); a
    token that BPE does not end in two known parts has no merge. Bytes given
    twice take their larger id.

    >>> derive_merges([b"a", b"b", b"c", b"ab", b"abc"])
    [(0, 1, 3), (3, 2, 4)]
    """
    ranks = {b: i for i, b in enumerate(tokens) if b is not None}
    out = []
    for rank, token in enumerate(tokens):
        if token is None or len(token) < 2:
            continue
        parts = [token[i:i + 1] for i in range(len(token))]
        while len(parts) > 2:
            best = None
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < rank and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        if len(parts) == 2 and parts[0] in ranks and parts[1] in ranks:
            out.append((ranks[parts[0]], ranks[parts[1]], rank))
    return out


def merge_lowest_first(parts, rank_of, dropout=None, steps=None):
    """
    tiktoken's rule (and Hugging Face's, with pair ranks): again and again,
    merge the adjacent pair of lowest rank, the leftmost on ties, one
    occurrence at a time, until no pair has a rank; rank_of(left, right) is
    the rank or None, e.g. with tiktoken's ranks (a token's rank is its id):
    merge_lowest_first([b"a", b"b", b"c"], lambda l, r: {b"ab": 256, b"bc": 257}.get(l + r)) -> [b"ab", b"c"]
    with dropout, each candidate pair (left to right) is dropped when
    dropout.drop() says so. steps (a list) receives (rank, index, parts after
    the merge) for every merge, in order.
    """
    parts = list(parts)
    while True:
        best = None  # (rank, index)
        for i in range(len(parts) - 1):
            rank = rank_of(parts[i], parts[i + 1])
            if rank is not None and not (dropout and dropout.drop()) and (best is None or rank < best[0]):
                best = (rank, i)
        if best is None:
            return parts
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
        if steps is not None:
            steps.append((best[0], i, list(parts)))


def merge_lowest_rank(symbols, ranks, dropout=None, steps=None):
    """
    subword-nmt's apply-bpe rule: again and again, merge the adjacent pair of
    lowest rank (ranks: pair -> its first index) at all its occurrences, left
    to right without overlap, e.g. with codes "c c", "c cc", "ccc b", "cc c":
    merge_lowest_rank(list("cccb"), {("c","c"): 0, ("c","cc"): 1, ("ccc","b"): 2, ("cc","c"): 3}) -> ["cccb"]
    (the in-order rule stops at ["ccc", "b"]: merge 2 came before merge 3 made "ccc").
    with dropout, at each step each pair that has a rank is dropped when
    dropout.drop() says so (left to right); when all are dropped, the word is done.
    steps (a list) receives (rank, symbols after the merge) for each rank applied.
    """
    while True:
        pairs = [(ranks[p], i) for i, p in enumerate(zip(symbols, symbols[1:]))
                 if p in ranks and not (dropout and dropout.drop())]
        if not pairs:
            return symbols
        best = min(pairs)[0]
        out, i = [], 0
        for rank, j in pairs:
            if rank != best or j < i:
                continue
            out += symbols[i:j] + [symbols[j] + symbols[j + 1]]
            i = j + 2
        symbols = out + symbols[i:]
        if steps is not None:
            steps.append((best, list(symbols)))


def merge(symbols, pair, dropout=None):
    """
    replace every occurrence of pair in symbols, left to right without overlap, e.g.
    merge(["a", "a", "a"], ("a", "a")) -> ["aa", "a"]
    with dropout (a Dropout), each occurrence is skipped when dropout.drop() says so.
    """
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair and not (dropout and dropout.drop()):
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


class Dropout:
    """
    BPE-dropout's coin: drop() is True with probability p. the draws come from
    splitmix64 seeded once per encode call, so a seed fixes the segmentation, e.g.
    Dropout(0.0, seed=1).drop() -> False;  Dropout(1.0, seed=1).drop() -> True
    """

    def __init__(self, p, seed):
        self.p, self.state = p, seed % 2**64

    def drop(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) % 2**64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        z ^= z >> 31
        return (z >> 11) * 2.0**-53 < self.p


def _codes(token):
    """code points of a str, byte values of a bytes: _codes("ab") -> [97, 98]"""
    return list(token) if isinstance(token, bytes) else [ord(c) for c in token]


def _gpt2_chars():
    """GPT-2's byte -> printable character map (HF ByteLevel): printable bytes are themselves"""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    extra = [b for b in range(256) if b not in keep]
    return {b: chr(c) for b, c in zip(keep + extra, keep + [256 + i for i in range(len(extra))])}


_GPT2_CHARS = _gpt2_chars()


def _printable(token):
    """a token as HF's vocabulary prints it: str as is, bytes through GPT-2's map, e.g.
    _printable(b" a") -> "Ġa" """
    return "".join(_GPT2_CHARS[b] for b in token) if isinstance(token, bytes) else token


def best_pair(counts, tie_break="first", ids=None):
    """
    the pair to merge next: the highest count, ties broken by tie_break, e.g. with
    counts = {("c", "d"): 2, ("a", "b"): 2}:
    "first" -> ("c", "d")          (dict order = order of first occurrence)
    "alphabetical" -> ("a", "b")   (max of (count, [-ord(c) for c in left + right]))
    "pair-id" -> ("a", "b")        (smallest (left id, right id); ids maps symbol -> id)
    "max-string" -> ("c", "d")     (greatest (left, right) as strings: subword-nmt's learn_bpe and
                                    HF's ParityBpeTrainer; bytes compare in their GPT-2 printable form)
    pairs still tied after "alphabetical" fall back to "first" (max keeps the first).
    """
    if tie_break == "first":
        return max(counts, key=counts.get)
    if tie_break == "alphabetical":
        return max(counts, key=lambda p: (counts[p], [-c for c in _codes(p[0] + p[1])]))
    if tie_break == "pair-id":
        return max(counts, key=lambda p: (counts[p], -ids[p[0]], -ids[p[1]]))
    if tie_break == "max-string":
        return max(counts, key=lambda p: (counts[p], _printable(p[0]), _printable(p[1])))
    raise TrainingError(f"unknown tie_break {tie_break!r}; expected one of {', '.join(TIE_BREAKS)}")


# -----------------------------------------------------------------------------
# training


def check_train_settings(model, end_of_word, tie_break, num_merges, vocab_size, min_frequency,
                         max_token_length) -> None:
    """The checks every trainer makes of its shared settings (TrainingError).

    >>> check_train_settings("byte", None, "nope", None, 300, 1, None)
    Traceback (most recent call last):
    ...
    bytepair.errors.TrainingError: unknown tie_break 'nope'; expected one of first, alphabetical, pair-id, max-string
    """
    _check_settings(model, end_of_word, TrainingError)
    if tie_break not in TIE_BREAKS:
        raise TrainingError(f"unknown tie_break {tie_break!r}; expected one of {', '.join(TIE_BREAKS)}")
    _check_int("num_merges", num_merges, 0)
    _check_int("vocab_size", vocab_size, 0)
    _check_int("min_frequency", min_frequency, 1)
    _check_int("max_token_length", max_token_length, 1)


def _check_int(name, value, minimum):
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TrainingError(f"{name} must be an integer, not {value!r}")
    if value < minimum:
        raise TrainingError(f"{name} must be at least {minimum}, got {value}")


def _check_settings(model, end_of_word, error):
    if model not in MODELS:
        raise error(f"unknown model {model!r}; expected 'char' or 'byte'")
    if model == "char" and end_of_word is not None:
        if not isinstance(end_of_word, str) or not end_of_word:
            raise error(f"end_of_word must be a non-empty string or None, got {end_of_word!r}")


def _special_list(special_tokens, error):
    """the special-token texts of a sequence or mapping, validated"""
    if isinstance(special_tokens, str):
        raise error("special_tokens must be a sequence or mapping of strings, not a single string")
    tokens = list(special_tokens)
    for token in tokens:
        if not isinstance(token, str) or not token:
            raise error(f"special tokens must be non-empty strings, got {token!r}")
    if len(set(tokens)) != len(tokens):
        raise error(f"duplicate special token in {tokens!r}")
    return tokens


def train(corpus, model="byte", vocab_size=None, num_merges=None, min_frequency=1,
          pattern=_DEFAULT, end_of_word="</w>", end_of_word_fused=False,
          tie_break="first", special_tokens=(), byte_fallback=False, unk_token=None,
          max_token_length=None, init=None, superword=False, transition=None, required_tokens=()):
    """
    learn merges from a corpus, e.g.
    train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, model="char",
          end_of_word=None, num_merges=2).merges -> [("e", "s"), ("es", "t")]

    corpus: a str (one document), an iterable of str documents, or a mapping
    word -> count (keys are words as-is). pattern defaults to "cl100k" in the
    byte model and None (str.split) in the char model; the byte model needs one.
    each step: count pairs over the words (weighted by word count), pick the
    best by tie_break, merge it everywhere. stop after num_merges, at
    vocab_size (base + marker + byte fallback + merges + specials), or when no
    pair occurs min_frequency times (a TrainingWarning if a target was missed).
    max_token_length: pairs whose merged token would be longer (in characters
    of its text in the char model, marker included; in bytes in the byte
    model) are never merged.
    init: a Model to continue (see continue_training); pattern, when given,
    replaces init's.
    superword=True (SuperBPE, arXiv 2503.13423; byte model): stage 1 trains as
    usual up to vocabulary size `transition`, stage 2 continues it on the same
    corpus with the "superbpe" pattern (tokens may cross spaces) up to
    vocab_size.
    required_tokens: each string is read as one word (its initial symbols, the
    char model's marker included) and, in turn, the merges of its first two
    pieces (under the merges so far) are made until it is one token; its
    characters join the char model's alphabet. then training continues from
    them (continue_training); num_merges and vocab_size count them too.
    """
    if required_tokens and (init is not None or superword):
        raise TrainingError("required_tokens= is an option of training from scratch (without init= or superword=)")
    if superword:
        if init is not None or isinstance(corpus, Mapping) or model != "byte":
            raise TrainingError("superword=True trains a byte model from documents (not word counts), without init=")
        _check_int("transition", transition, 0)
        _check_int("vocab_size", vocab_size, 0)
        if transition is None or vocab_size is None or num_merges is not None:
            raise TrainingError("superword=True needs transition= and vocab_size= (vocabulary sizes), not num_merges=")
        if transition > vocab_size:
            raise TrainingError(f"transition={transition} is above vocab_size={vocab_size}")
        corpus = [corpus] if isinstance(corpus, str) else list(corpus)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingWarning)  # stage 1 may run out of pairs: stage 2 goes on
            stage1 = train(corpus, model, vocab_size=transition, min_frequency=min_frequency, pattern=pattern,
                           tie_break=tie_break, special_tokens=special_tokens, max_token_length=max_token_length)
        return continue_training(stage1, corpus, vocab_size, None, min_frequency, tie_break, max_token_length,
                                 pattern="superbpe")
    if transition is not None:
        raise TrainingError("transition= applies only with superword=True")
    if init is not None:
        if special_tokens or byte_fallback or unk_token is not None:
            raise TrainingError("with init=, special tokens and fallback settings come from the initial model")
        return continue_training(init, corpus, vocab_size, num_merges, min_frequency, tie_break,
                                 max_token_length, pattern)
    check_train_settings(model, end_of_word, tie_break, num_merges, vocab_size, min_frequency, max_token_length)
    if model == "byte":
        if byte_fallback or unk_token is not None:
            raise TrainingError("byte_fallback and unk_token only apply to the char model")
        end_of_word, end_of_word_fused = None, False
    if pattern is _DEFAULT:
        pattern = "cl100k" if model == "byte" else None
    if model == "byte" and pattern is None:
        raise TrainingError("the byte model needs a pattern (a preset name or a regex)")
    if pattern is not None:
        _compile(pattern)  # fail early on a bad regex
    specials = _special_list(special_tokens, TrainingError)

    # 1. words and their counts, in order of first appearance
    if isinstance(corpus, Mapping):
        counts = {}
        for word, n in corpus.items():
            if not isinstance(word, str) or not word:
                raise TrainingError(f"word-count keys must be non-empty strings, got {word!r}")
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise TrainingError(f"the count of {word!r} must be a positive integer, got {n!r}")
            word = _valid_text(word)
            counts[word] = counts.get(word, 0) + n
    else:
        counts = _count(corpus, lambda s: split_words(s, pattern), specials)
    if not counts:
        raise TrainingError("empty corpus: no words to train on")
    words = [(initial_symbols(w, model, end_of_word, end_of_word_fused), n) for w, n in counts.items()]
    seeds = _required_symbols(required_tokens, specials, model, pattern, end_of_word, end_of_word_fused)

    # 2. the base vocabulary (required tokens' characters too) and the id of every symbol (for tie_break="pair-id")
    if model == "byte":
        base = [bytes([b]) for b in range(256)]
    elif end_of_word is not None and end_of_word_fused:
        base = sorted({s for symbols in [*(symbols for symbols, _ in words), *seeds] for s in symbols})
    else:
        base = sorted({c for w in [*counts, *required_tokens] for c in w})
        if end_of_word is not None and end_of_word not in base:
            base.append(end_of_word)
    if required_tokens:
        merges = []
        for symbols in seeds:
            for pair in merges:
                symbols = merge(symbols, pair)
            while len(symbols) > 1:
                merges.append((symbols[0], symbols[1]))
                symbols = merge(symbols, merges[-1])
        seeded = Model(model, base, merges, special_tokens=special_tokens, pattern=pattern, end_of_word=end_of_word,
                       end_of_word_fused=end_of_word_fused, byte_fallback=byte_fallback, unk_token=unk_token,
                       error=TrainingError)
        left = None if num_merges is None else max(0, num_merges - len(merges))
        return continue_training(seeded, counts, vocab_size, left, min_frequency, tie_break, max_token_length)
    ids = {s: i for i, s in enumerate(base)}
    next_id = len(base) + (256 if byte_fallback else 0)
    size_without_merges = next_id + len(specials)
    if vocab_size is not None and vocab_size < size_without_merges:
        raise TrainingError(
            f"vocab_size={vocab_size} is below the size without any merge ({size_without_merges}: "
            f"{len(base)} base symbols" + (" + 256 byte-fallback tokens" if byte_fallback else "")
            + f" + {len(specials)} special tokens)")
    limit = num_merges
    if vocab_size is not None:
        limit = vocab_size - size_without_merges if limit is None else min(limit, vocab_size - size_without_merges)

    # 3. merge, one pair at a time, recounting everything each step
    merges, merge_counts, words, stopped = merge_loop(words, limit, min_frequency, tie_break, ids, next_id,
                                                      max_token_length)
    if stopped and limit is not None:
        target = f"num_merges={num_merges}" if limit == num_merges else f"vocab_size={vocab_size}"
        warnings.warn(f"training stopped after {len(merges)} merges (of {limit} for {target}): {stopped}",
                      TrainingWarning, stacklevel=2)

    return Model(model, base, merges, merge_counts=merge_counts,
                 words=[tuple(symbols) for symbols, _ in words],
                 special_tokens=special_tokens, pattern=pattern, end_of_word=end_of_word,
                 end_of_word_fused=end_of_word_fused, byte_fallback=byte_fallback,
                 unk_token=unk_token, error=TrainingError)


def _required_symbols(required_tokens, specials, model, pattern, end_of_word, end_of_word_fused):
    """
    the initial symbols of each required token, read as one word, e.g.
    _required_symbols(["ab"], [], "char", None, "_", False) -> [["a", "b", "_"]]
    a token that the pattern cuts, or that is a special token, is refused.
    """
    if isinstance(required_tokens, str):
        raise TrainingError("required_tokens must be a list of strings, not one str")
    out = []
    for token in required_tokens:
        if not isinstance(token, str) or not token:
            raise TrainingError(f"required_tokens must be non-empty strings, got {token!r}")
        if token in specials:
            raise TrainingError(f"required token {token!r} is also a special token")
        if split_words(token, pattern) != [token]:
            raise TrainingError(f"required token {token!r} is more than one piece under the pattern")
        out.append(initial_symbols(token, model, end_of_word, end_of_word_fused))
    return out


def merge_loop(words, limit, min_frequency, tie_break, ids, next_id, max_token_length=None, known=None):
    """
    the training loop: count pairs over (symbols, count) words, merge the best
    one everywhere, repeat; stop after limit merges (None: no limit) or when no
    pair is left or reaches min_frequency. ids (symbol -> id, for "pair-id")
    gains merge k as next_id + k. with known, pairs with a symbol outside it
    are never counted (and merged symbols join it). returns (merges, their
    counts, the final words, why it stopped early or None), e.g.
    merge_loop([(["a", "b"], 2)], None, 1, "first", {"a": 0, "b": 1}, 2)
        -> ([("a", "b")], [2], [(["ab"], 2)], "no adjacent pair is left to merge")
    """
    merges, merge_counts = [], []
    while limit is None or len(merges) < limit:
        pair_counts = get_pair_counts(words)
        if known is not None:
            pair_counts = {p: n for p, n in pair_counts.items() if p[0] in known and p[1] in known}
        if max_token_length is not None:
            pair_counts = {p: n for p, n in pair_counts.items() if len(p[0] + p[1]) <= max_token_length}
        if not pair_counts:
            return merges, merge_counts, words, "no adjacent pair is left to merge"
        pair = best_pair(pair_counts, tie_break, ids)
        if pair_counts[pair] < min_frequency:
            return merges, merge_counts, words, f"no pair occurs at least min_frequency={min_frequency} times"
        merges.append(pair)
        merge_counts.append(pair_counts[pair])
        ids.setdefault(pair[0] + pair[1], next_id + len(merges) - 1)
        if known is not None:
            known.add(pair[0] + pair[1])
        words = [(merge(symbols, pair), n) for symbols, n in words]
    return merges, merge_counts, words, None


def continue_training(init, corpus, vocab_size=None, num_merges=None, min_frequency=1,
                      tie_break="first", max_token_length=None, pattern=_DEFAULT):
    """
    add merges to the model init, keeping every id and merge it has, e.g.
    m = train("low lower", model="char", num_merges=2)   # l+o, lo+w
    continue_training(m, "lowest lowest", num_merges=1).merges[-1] -> ("low", "e")

    init's settings (model, pattern, marker, special tokens) stay. the words of
    the corpus start as init's merges segment them (applied in order, as in
    training); pairs with a symbol outside init's vocabulary (a character it
    never saw) are never counted. new merges take the ids after init's last id;
    vocab_size counts init's ids too, num_merges only new merges.
    pattern (default: init's) pre-tokenizes the corpus and becomes the new
    model's pattern (SuperBPE's stage 2 continues with a pattern that lets
    tokens cross spaces).
    """
    if pattern is _DEFAULT:
        pattern = init.pattern
    elif pattern is not None:
        _compile(pattern)
        pattern = resolve_pattern(pattern)
    if init.model == "byte" and pattern is None:
        raise TrainingError("the byte model needs a pattern (a preset name or a regex)")
    _check_int("num_merges", num_merges, 0)
    _check_int("vocab_size", vocab_size, 0)
    _check_int("min_frequency", min_frequency, 1)
    _check_int("max_token_length", max_token_length, 1)
    if isinstance(corpus, Mapping):
        counts = dict(corpus)
    else:
        counts = _count(corpus, lambda s: split_words(s, pattern), list(init.special_tokens))
    if not counts:
        raise TrainingError("empty corpus: no words to train on")
    specials = set(init.special_tokens.values())
    fallback = range(init._fallback_start, init._fallback_start + 256) if init.byte_fallback else range(0)
    known = {t for i, t in init.vocab.items() if i not in specials and i not in fallback}
    words = []
    for w, n in counts.items():
        if init.model == "byte":
            symbols = [bytes([b]) for b in w.encode("utf-8")]
        else:
            symbols = initial_symbols(w, "char", init.end_of_word, init.end_of_word_fused)
        for pair in init.merges:
            symbols = merge(symbols, pair)
        words.append((symbols, n))
    ids = dict(init._ids)
    next_id = init.n_vocab
    if vocab_size is not None and vocab_size < init.n_vocab:
        raise TrainingError(f"vocab_size={vocab_size} is below the initial model's size ({init.n_vocab})")
    limit = num_merges
    if vocab_size is not None:
        limit = vocab_size - init.n_vocab if limit is None else min(limit, vocab_size - init.n_vocab)
    merges, merge_counts, words, stopped = merge_loop(words, limit, min_frequency, tie_break, ids, next_id,
                                                      max_token_length, known)
    if stopped and limit is not None:
        warnings.warn(f"continued training stopped after {len(merges)} new merges: {stopped}",
                      TrainingWarning, stacklevel=3)
    n_old = len(init.merges)
    old_ids = [init._ids_of_merge[k] for k in range(n_old)]
    base = [init.vocab[i] for i in range(init._base_size)]
    return Model(init.model, base, init.merges + merges,
                 merge_counts=list(init.merge_counts) + [None] * (n_old - len(init.merge_counts)) + merge_counts,
                 words=[tuple(symbols) for symbols, _ in words], special_tokens=dict(init.special_tokens),
                 pattern=pattern, end_of_word=init.end_of_word, end_of_word_fused=init.end_of_word_fused,
                 byte_fallback=init.byte_fallback, unk_token=init.unk_token, error=TrainingError,
                 merge_ids=old_ids + list(range(next_id, next_id + len(merges))))


def from_merges(merges, model="char", end_of_word="</w>", end_of_word_fused=False, pattern=_DEFAULT,
                alphabet=None, special_tokens=(), byte_fallback=False, unk_token=None):
    """
    build a model from merges learned elsewhere, e.g.
    from_merges([("w", "e"), ("l", "o")], end_of_word="_").tokenize("lowe") -> ["lo", "we", "_"]

    char model: merges are (str, str); the base alphabet is `alphabet` if given,
    else the characters of the merge symbols with the marker removed. with a
    fused marker every character also gets its fused form ("t</w>").
    byte model: merges are (bytes, bytes); merge k gets id 256 + k.
    every merge side must be a base symbol or the result of an earlier merge.
    """
    _check_settings(model, end_of_word, BytepairError)
    if pattern is _DEFAULT:
        pattern = "cl100k" if model == "byte" else None
    if model == "byte":
        if byte_fallback or unk_token is not None:
            raise BytepairError("byte_fallback and unk_token only apply to the char model")
        if pattern is None:
            raise BytepairError("the byte model needs a pattern (a preset name or a regex)")
        end_of_word, end_of_word_fused = None, False
    fused = end_of_word is not None and end_of_word_fused

    checked, kind = [], bytes if model == "byte" else str
    for k, m in enumerate(merges, 1):
        if model == "byte" and isinstance(m, (tuple, list)):
            m = tuple(bytes(s) if isinstance(s, (bytes, bytearray)) else s for s in m)
        if not isinstance(m, (tuple, list)) or len(m) != 2 or not all(isinstance(s, kind) and s for s in m):
            raise FormatError(f"merge {k}: expected a pair of non-empty {kind.__name__}, got {m!r}")
        checked.append(tuple(m))

    if model == "byte":
        base = [bytes([b]) for b in range(256)]
    else:
        if alphabet is not None:
            chars = set()
            for c in alphabet:
                if not isinstance(c, str) or len(c) != 1:
                    raise BytepairError(f"alphabet must hold single characters, got {c!r}")
                chars.add(c)
        else:
            strip = (lambda s: s.replace(end_of_word, "")) if end_of_word is not None else (lambda s: s)
            chars = {c for pair in checked for s in pair for c in strip(s)}
        if fused:
            base = sorted(chars | {c + end_of_word for c in chars})
        else:
            base = sorted(chars)
            if end_of_word is not None and end_of_word not in chars:
                base.append(end_of_word)

    known = set(base)
    for k, (left, right) in enumerate(checked, 1):
        for side in (left, right):
            if side not in known:
                raise FormatError(f"merge {k}: {side!r} is neither a base symbol nor the result of an earlier merge")
        known.add(left + right)

    return Model(model, base, checked, special_tokens=special_tokens, pattern=pattern,
                 end_of_word=end_of_word, end_of_word_fused=end_of_word_fused,
                 byte_fallback=byte_fallback, unk_token=unk_token, error=BytepairError)


# -----------------------------------------------------------------------------
# the model


def _show(token):
    """how a token prints in a trace: bytes as utf-8 with invalid bytes escaped"""
    return token.decode("utf-8", "backslashreplace") if isinstance(token, bytes) else token


class Model:
    """
    a trained (or loaded) tokenizer, e.g.
    m = from_merges([("t", "h"), ("th", "e")], end_of_word="<w>", alphabet="the")
    m.vocab -> {0: "e", 1: "h", 2: "t", 3: "<w>", 4: "th", 5: "the"}
    m.encode("the") -> [5, 3];  m.decode([5, 3, 2]) -> "the t"

    ids: char model: base symbols (alphabet sorted by code point, then the
    separate marker), then "<0x00>".."<0xFF>" if byte_fallback, then merges,
    then special tokens. byte model: bytes 0-255, merge k as 256 + k, specials.
    a token string made by two different merges takes the smaller id.
    """

    def __init__(self, model, base, merges, merge_counts=(), words=(), special_tokens=(),
                 pattern=None, end_of_word=None, end_of_word_fused=False, byte_fallback=False,
                 unk_token=None, error=BytepairError, merge_ids=None, merge_rule="in-order"):
        self.model = model
        self.merge_rule = merge_rule
        self.merges = list(merges)
        self.merge_counts = list(merge_counts)
        self.words = list(words)
        self.pattern = pattern
        self.end_of_word = end_of_word
        self.end_of_word_fused = bool(end_of_word_fused)
        self.byte_fallback = bool(byte_fallback)
        self.unk_token = unk_token
        if pattern is not None:
            _compile(pattern)

        # regular tokens: base, byte fallback, merges
        self.vocab = {i: s for i, s in enumerate(base)}
        self._fallback_start = len(self.vocab)
        if byte_fallback:
            for b in range(256):
                self.vocab[len(self.vocab)] = f"<0x{b:02X}>"
        # merge k is the next id, or merge_ids[k] after continued training
        self._base_size = len(base)
        self._ids_of_merge = []
        for k, (left, right) in enumerate(self.merges):
            self._ids_of_merge.append(merge_ids[k] if merge_ids else len(self.vocab))
            self.vocab[self._ids_of_merge[-1]] = left + right
        n_regular = max(self.vocab, default=-1) + 1
        # token -> smallest id, for encoding (byte-fallback tokens are looked up by byte, not text)
        self._ids = {}
        for i, token in self.vocab.items():
            if not (byte_fallback and self._fallback_start <= i < self._fallback_start + 256):
                self._ids.setdefault(token, i)

        # special tokens: after the merges in order, or explicit ids from a mapping;
        # the unknown token is a special token, added first when not listed
        tokens = _special_list(special_tokens, error)
        if unk_token is not None and unk_token not in tokens:
            if isinstance(special_tokens, Mapping):
                raise error(f"unk_token {unk_token!r} must be one of the explicit special tokens")
            tokens = [unk_token] + tokens
            special_tokens = tokens
        if isinstance(special_tokens, Mapping):
            self.special_tokens = {}
            for token in tokens:
                i = special_tokens[token]
                if isinstance(i, bool) or not isinstance(i, int) or i < 0 or i in self.vocab:
                    raise error(f"special token {token!r}: id {i!r} must be an integer >= {n_regular} "
                                f"(the ids below belong to regular tokens)")
                if i in self.special_tokens.values():
                    raise error(f"special token {token!r}: id {i} is already taken by another special token")
                self.special_tokens[token] = i
        else:
            self.special_tokens = {token: n_regular + k for k, token in enumerate(tokens)}
        for token, i in self.special_tokens.items():
            self.vocab[i] = token.encode("utf-8") if model == "byte" else token
        self.n_vocab = max(self.vocab, default=-1) + 1

        # the unknown token: a special token, or else a regular one
        self._unk_id = None
        if unk_token is not None:
            self._unk_id = self.special_tokens[unk_token]

    def __repr__(self):
        return f"<reference.Model {self.model} n_vocab={self.n_vocab} merges={len(self.merges)}>"

    def trace(self):
        """
        one line per merge, seed 000's format, e.g.
        ["merge 1: w + e -> we  (count 4)", ...]
        models built by from_merges have no counts: the "(count n)" part is left out.
        """
        lines = []
        for k, (left, right) in enumerate(self.merges, 1):
            line = f"merge {k}: {_show(left)} + {_show(right)} -> {_show(left + right)}"
            if k <= len(self.merge_counts) and self.merge_counts[k - 1] is not None:
                line += f"  (count {self.merge_counts[k - 1]})"
            lines.append(line)
        return lines

    # --- text to pieces

    def _words(self, text):
        """(start, word) pairs of a text without special tokens"""
        return _word_spans(text, self.pattern)

    def _segment(self, word, dropout=None):
        """char model: apply the merges in training order, each over the whole word
        (or by subword-nmt's rule, merge_rule="lowest-rank")"""
        symbols = initial_symbols(word, "char", self.end_of_word, self.end_of_word_fused)
        if self.merge_rule == "lowest-rank":
            ranks = {}
            for k, pair in enumerate(self.merges):
                ranks.setdefault(pair, k)
            return merge_lowest_rank(symbols, ranks, dropout)
        for pair in self.merges:
            symbols = merge(symbols, pair, dropout)
        return symbols

    def _bpe(self, piece, dropout=None):
        """
        byte model, tiktoken's rule: a piece that is a token is that token; else
        from single bytes, repeatedly merge the adjacent pair whose concatenation
        has the lowest id (leftmost on ties) until no concatenation is a token.
        with dropout (BPE-dropout): no whole-piece lookup, and at each step every
        candidate pair, left to right, is dropped when dropout.drop() says so.
        """
        if dropout is None and piece in self._ids:
            return [self._ids[piece]]
        parts = merge_lowest_first([bytes([b]) for b in piece], lambda left, right: self._ids.get(left + right), dropout)
        return [self._ids[p] for p in parts]

    def tokenize(self, text):
        """
        the pieces of a text, special-token text treated as plain text, e.g.
        seed 000: tokenize("slower") -> ["s", "lowe", "r_"]
        char model: list of str, unknown characters kept as pieces (never fails);
        byte model: list of bytes.
        """
        if self.model == "byte":
            return [self.vocab[i] for i in self.encode_ordinary(text)]
        return [piece for _, word in self._words(_valid_text(text)) for piece in self._segment(word)]

    # --- encoding

    def _unknown(self, piece, index):
        """ids for a char-model piece that is not in the vocabulary"""
        if self.byte_fallback:
            return [self._fallback_start + b for b in piece.encode("utf-8")]
        if self._unk_id is not None:
            return [self._unk_id]
        raise EncodeError(f"character {piece[0]!r} at position {index} is not in the vocabulary "
                          f"(train with byte_fallback=True or set unk_token to encode unseen characters)")

    def _encode_chunk(self, text, offset, dropout=None):
        """ids of a text without special tokens; offset is where it starts in the full text"""
        ids = []
        for start, word in self._words(text):
            if self.model == "byte":
                ids.extend(self._bpe(word.encode("utf-8"), dropout))
                continue
            index = offset + start
            for piece in self._segment(word, dropout):
                ids.extend([self._ids[piece]] if piece in self._ids else self._unknown(piece, index))
                index += len(piece)
        return ids

    def encode_ordinary(self, text):
        """ids of text, special-token text encoded as plain text, e.g. seed 000: "lower" -> [15, 14]"""
        return self._encode_chunk(_valid_text(text), 0)

    def encode(self, text, allowed_special=frozenset(), disallowed_special="all", dropout=None, seed=0):
        """
        ids of text with tiktoken's special-token semantics, e.g. with "<|eot|>" special:
        encode("a<|eot|>")                           -> DisallowedSpecialError
        encode("a<|eot|>", allowed_special="all")    -> [..., id of <|eot|>]
        encode("a<|eot|>", disallowed_special=())    -> same as encode_ordinary
        allowed special text becomes its id (leftmost match, the longest at one position).
        dropout=p: BPE-dropout with probability p, deterministic for a seed.
        """
        text = _valid_text(text)
        coin = Dropout(dropout, seed) if dropout else None
        specials = set(self.special_tokens)
        allowed = specials if allowed_special == "all" else specials & set(allowed_special)
        disallowed = specials - allowed if disallowed_special == "all" else set(disallowed_special)
        if disallowed:
            hit = _find_special(text, disallowed, 0)
            if hit is not None:
                raise DisallowedSpecialError(_disallowed_message(hit[1]))
        ids, start = [], 0
        while True:
            hit = _find_special(text, allowed, start)
            end = len(text) if hit is None else hit[0]
            ids.extend(self._encode_chunk(text[start:end], start, coin))
            if hit is None:
                return ids
            ids.append(self.special_tokens[hit[1]])
            start = hit[0] + len(hit[1])

    # --- decoding

    def _check_id(self, i):
        if i not in self.vocab:
            raise UnknownTokenError(f"unknown token id {i!r}: not in the vocabulary (n_vocab={self.n_vocab})")

    def decode_bytes(self, ids):
        """
        the raw bytes of ids, e.g. seed 001: [qu, i, c, k, e, s, t<w>] -> b"quickest"
        char model: every end-of-word marker is a word boundary: one space between
        words, none at the start or end, consecutive boundaries give one space.
        byte-fallback tokens give their byte; special tokens their text, verbatim.
        """
        ids = list(ids)
        for i in ids:
            self._check_id(i)
        if self.model == "byte":
            return b"".join(self.vocab[i] for i in ids)
        specials = set(self.special_tokens.values())
        fallback = range(self._fallback_start, self._fallback_start + 256) if self.byte_fallback else range(0)
        marker = self.end_of_word.encode("utf-8") if self.end_of_word is not None else None

        def raw(i):
            return bytes([i - self._fallback_start]) if i in fallback else self.vocab[i].encode("utf-8")

        # runs of ordinary tokens are joined, then cut at every marker (None = word boundary);
        # special tokens are written verbatim
        items = []
        for is_special, run in itertools.groupby(ids, key=lambda i: i in specials):
            data = b"".join(raw(i) for i in run)
            if is_special or marker is None:
                items.append(data)
                continue
            for k, part in enumerate(data.split(marker)):
                if k > 0:
                    items.append(None)
                items.append(part)
        # one space per group of boundaries, none at the start or the end
        out, boundary = b"", False
        for item in items:
            if item is None:
                boundary = True
            elif item:
                if boundary and out:
                    out += b" "
                out += item
                boundary = False
        return out

    def decode(self, ids, errors="replace"):
        """text of ids: decode_bytes(ids) as utf-8 with `errors`, e.g. [15, 14] -> "lower" (seed 000)"""
        return self.decode_bytes(ids).decode("utf-8", errors)


def _disallowed_message(token):
    """tiktoken's error message for disallowed special-token text, word for word"""
    return (
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        "If you want this text to be encoded as a special token, "
        f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
        f"If you want this text to be encoded as normal text, disable the check for this token "
        f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
