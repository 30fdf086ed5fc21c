"""The Rust core against the pure-Python reference, on random corpora over
tiny alphabets (ties and overlapping pairs on every step), for both models,
every tie-break rule and the marker settings; then on a slice of real text.

The number of generated cases is set by the hypothesis profile (see
conftest.py): BYTEPAIR_EXAMPLES overrides it.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference as ref

EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ALPHABETS = ["ab", "ab ", "aab \n", "abc ", "aé b", "a\u3000b\x1c", "xyz_\t", "ab<w>", "🙂a "]
PATTERNS = ["gpt2", "cl100k", "o200k", r"\S+|\s+", r"[ab]+|."]


def run_both(fn_name, *args, **kwargs):
    """Call the reference and the core; both must succeed alike or raise the
    same exception class. Returns (reference result, core result)."""
    results = []
    for impl in (getattr(ref, fn_name), getattr(bytepair.Tokenizer, fn_name)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = impl(*args, **kwargs)
            except bytepair.BytepairError as e:
                out = type(e)
        results.append((out, sorted({type(w.message).__name__ for w in caught})))
    (r, r_warn), (c, c_warn) = results
    if isinstance(r, type) or isinstance(c, type):
        assert r == c, f"reference gave {r!r}, core gave {c!r}"
        return None, None
    assert r_warn == c_warn
    return r, c


def same_encoding(r, c, text):
    """tokenize, encode and decode agree on one text."""
    assert c.tokenize(text) == r.tokenize(text)
    try:
        r_ids = r.encode_ordinary(text)
    except bytepair.BytepairError as e:
        with pytest.raises(type(e)):
            c.encode_ordinary(text)
        return
    assert c.encode_ordinary(text) == r_ids
    assert c.decode_bytes(r_ids) == r.decode_bytes(r_ids)
    # BPE-dropout: the same draws in the same order give the same ids
    for p, seed in ((0.3, 1), (0.7, 12345), (1.0, 5)):
        want = r.encode(text, disallowed_special=(), dropout=p, seed=seed)
        assert c.encode(text, disallowed_special=(), dropout=p, seed=seed) == want
        assert c.decode_bytes(want) == c.decode_bytes(r_ids)


def same_model(r, c):
    assert c.merges == r.merges
    assert c.merge_counts == r.merge_counts
    assert c.vocab() == r.vocab
    assert c.n_vocab == r.n_vocab
    assert c.special_tokens == r.special_tokens
    assert c.trace() == r.trace()


corpora = st.sampled_from(ALPHABETS).flatmap(
    lambda alphabet: st.tuples(
        st.lists(st.text(alphabet=alphabet, max_size=24), min_size=1, max_size=8),
        st.text(alphabet=alphabet + "qé", max_size=30),
    )
)


@SETTINGS
@given(
    data=corpora,
    tie_break=st.sampled_from(["first", "alphabetical", "pair-id", "max-string"]),
    end_of_word=st.sampled_from([None, "_", "</w>", "<w>"]),
    fused=st.booleans(),
    num_merges=st.none() | st.integers(0, 40),
    min_frequency=st.integers(1, 3),
    byte_fallback=st.booleans(),
    pattern=st.sampled_from([None, None, r"\S+|\s+"]),
    max_len=st.none() | st.integers(1, 6),
)
def test_char_model(data, tie_break, end_of_word, fused, num_merges, min_frequency, byte_fallback, pattern, max_len):
    docs, probe = data
    r, c = run_both(
        "train",
        docs,
        model="char",
        num_merges=num_merges,
        min_frequency=min_frequency,
        tie_break=tie_break,
        end_of_word=end_of_word,
        end_of_word_fused=fused,
        byte_fallback=byte_fallback,
        pattern=pattern,
        max_token_length=max_len,
    )
    if r is None:
        return
    same_model(r, c)
    for text in docs + [probe]:
        same_encoding(r, c, text)


@SETTINGS
@given(
    data=corpora,
    tie_break=st.sampled_from(["first", "alphabetical", "pair-id", "max-string"]),
    pattern=st.sampled_from(PATTERNS),
    size=st.none() | st.integers(250, 320),
    min_frequency=st.integers(1, 3),
    specials=st.sampled_from([(), ("<w>",), ("b",), ("<|endoftext|>", "ab")]),
    max_len=st.none() | st.integers(1, 7),
)
def test_byte_model(data, tie_break, pattern, size, min_frequency, specials, max_len):
    docs, probe = data
    r, c = run_both(
        "train",
        docs,
        model="byte",
        vocab_size=size,
        min_frequency=min_frequency,
        tie_break=tie_break,
        pattern=pattern,
        special_tokens=specials,
        max_token_length=max_len,
    )
    if r is None:
        return
    same_model(r, c)
    for text in docs + [probe]:
        same_encoding(r, c, text)
        for allowed in ("all", set(specials[:1])):
            try:
                want = r.encode(text, allowed_special=allowed)
            except bytepair.DisallowedSpecialError:
                with pytest.raises(bytepair.DisallowedSpecialError):
                    c.encode(text, allowed_special=allowed)
                continue
            assert c.encode(text, allowed_special=allowed) == want
            assert c.decode_bytes(want) == r.decode_bytes(want)


@SETTINGS
@given(
    words=st.lists(st.text(alphabet="aab", min_size=2, max_size=16), min_size=1, max_size=10),
    counts=st.lists(st.integers(1, 3), min_size=10, max_size=10),
    model=st.sampled_from(["char", "byte"]),
    num_merges=st.integers(5, 60),
)
def test_first_rule_when_merges_respell_a_symbol(words, counts, model, num_merges):
    """Runs of few letters with small, tying counts: two merges often spell
    one text (a + aa, aa + a), so a merge adds occurrences to pairs that
    already exist, possibly before their recorded first occurrence (the
    `first` rule's bookkeeping must still pick the earliest)."""
    table = {}
    for w, n in zip(words, counts):
        table[w] = table.get(w, 0) + n
    kwargs = {"end_of_word": None} if model == "char" else {"pattern": r"[ab]+|."}
    r, c = run_both("train", table, model=model, tie_break="first", num_merges=num_merges, **kwargs)
    if r is not None:
        same_model(r, c)


@SETTINGS
@given(
    counts=st.dictionaries(st.text(alphabet="abc", min_size=1, max_size=7), st.integers(1, 2**40), min_size=1, max_size=8),
    tie_break=st.sampled_from(["first", "alphabetical", "pair-id", "max-string"]),
    model=st.sampled_from(["char", "byte"]),
)
def test_word_count_mappings_and_large_counts(counts, tie_break, model):
    kwargs = {"end_of_word": "</w>"} if model == "char" else {"pattern": "gpt2"}
    r, c = run_both("train", counts, model=model, tie_break=tie_break, num_merges=20, **kwargs)
    if r is not None:
        same_model(r, c)


@SETTINGS
@given(
    merges=st.lists(st.tuples(st.sampled_from(["a", "b", "ab", "ba", "aa", "bab"]), st.sampled_from(["a", "b", "ab", "b_"])), max_size=10),
    text=st.text(alphabet="ab _", max_size=30) | st.text(alphabet="ab", min_size=33, max_size=90),
    fused=st.booleans(),
    rule=st.sampled_from(["in-order", "lowest-rank"]),
)
def test_from_merges(merges, text, fused, rule):
    """Also under subword-nmt's lowest-rank rule, and with words long enough
    for the core's heap (more than 32 symbols)."""
    r, c = run_both("from_merges", merges, model="char", end_of_word="_", end_of_word_fused=fused, alphabet="ab")
    if r is None:
        return
    r.merge_rule = rule
    c = bytepair.Tokenizer.from_spec(dataclasses.replace(c.spec, merge_rule=rule))
    assert c.vocab() == r.vocab
    same_encoding(r, c, text)


@st.composite
def growing_merges(draw):
    """Merges over a, b where every symbol is a character or made by an
    earlier merge (as learned codes are), often with a string that one merge
    makes, a later one uses and a still later one makes again from other
    parts: the case where the two rules differ."""
    symbols = ["a", "b"]
    merges = []

    def add(pair):
        if pair not in merges:
            merges.append(pair)
            symbols.append(pair[0] + pair[1])

    for _ in range(draw(st.integers(1, 14))):
        add((draw(st.sampled_from(symbols)), draw(st.sampled_from(symbols))))
        remakes = [(s[:k], s[k:]) for s in symbols for k in range(1, len(s))
                   if s[:k] in symbols and s[k:] in symbols and (s[:k], s[k:]) not in merges]
        if remakes and draw(st.booleans()):
            left, right = draw(st.sampled_from(remakes))
            add((left + right, draw(st.sampled_from(symbols))))  # uses the string...
            add((left, right))  # ...which a later merge makes again
    return merges


@SETTINGS
@given(
    merges=growing_merges(),
    text=st.text(alphabet="ab ", max_size=40) | st.text(alphabet="ab", min_size=33, max_size=120),
    rule=st.sampled_from(["in-order", "lowest-rank"]),
)
def test_merge_rules(merges, text, rule):
    """Both rules of applying char merges (subword-nmt's lowest-rank one
    included), with dropout and with words long enough for the core's heap."""
    r, c = run_both("from_merges", merges, model="char", end_of_word=None, alphabet="ab")
    r.merge_rule = rule
    c = bytepair.Tokenizer.from_spec(dataclasses.replace(c.spec, merge_rule=rule))
    same_encoding(r, c, text)


# Long words (char model, over 32 symbols) and long pieces (byte model, over
# 128 bytes) take the core's bucket-queue merging; the corpora above make
# none. A short unit repeated makes equal-rank pairs on every step.
long_words = st.tuples(
    st.text(alphabet="abc", min_size=1, max_size=5),
    st.integers(130, 400),
    st.text(alphabet="abc", max_size=40),
).map(lambda t: (t[0] * t[1])[: t[1]] + t[2])


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    docs=st.lists(st.text(alphabet="abc ", min_size=1, max_size=40), min_size=1, max_size=6),
    word=long_words,
    model=st.sampled_from(["char", "byte"]),
    num_merges=st.integers(3, 60),
)
def test_long_words_and_pieces(docs, word, model, num_merges):
    kwargs = {"end_of_word": "</w>"} if model == "char" else {"pattern": "gpt2"}
    r, c = run_both("train", docs + [word], model=model, num_merges=num_merges, **kwargs)
    if r is None:
        return
    assert len(word) > 128  # one piece (gpt2) or word (str.split()) on the long path
    for text in (word, word + " " + word[::-1]):
        assert c.tokenize(text) == r.tokenize(text)
        assert c.encode_ordinary(text) == r.encode_ordinary(text)
        if model == "char":  # the byte model's dropout does not use the long path
            for p, seed in ((0.3, 1), (0.7, 99)):
                assert c.encode(text, dropout=p, seed=seed) == r.encode(text, dropout=p, seed=seed)


@pytest.mark.parametrize("byte_fallback", [False, True])
def test_fused_marker_that_is_also_a_character(byte_fallback):
    """Marker '_' fused, and '_' in the text: the merge x + '_' makes the
    text of the initial symbol x + marker, which the word 'x' then is
    (found by hypothesis at 1,000 examples)."""
    r, c = run_both("train", ["x__", "yx__"], model="char", end_of_word="_", end_of_word_fused=True,
                    byte_fallback=byte_fallback)
    same_model(r, c)
    for text in ["x", "yx", "xx", "x_", "x_ x"]:
        same_encoding(r, c, text)


@pytest.mark.parametrize("model", ["char", "byte"])
def test_lone_surrogates_become_replacement_characters(model):
    """A lone surrogate (from Python; not valid UTF-8) is U+FFFD, as in
    tiktoken, in training corpora, word counts and encoded text alike."""
    docs = ["ab\ud800 ab \udfffab", "ab ab"]
    r, c = run_both("train", docs, model=model, num_merges=4)
    same_model(r, c)
    assert "\ufffd" in "".join(t if isinstance(t, str) else t.decode("utf-8", "replace") for t in c.vocab().values())
    for text in ["ab\ud800", "\udc00 ab", "ab\ufffd"]:
        same_encoding(r, c, text)
    r, c = run_both("train", {"a\ud800": 2, "a\ud801": 3, "ab": 1}, model=model, num_merges=3)
    same_model(r, c)


def real_text() -> str:
    """About 60 KB of real English and code: the standard library's own
    sources, which exist wherever Python does."""
    import argparse
    import textwrap

    return (inspect.getsource(textwrap) + inspect.getsource(argparse))[:60_000]


@pytest.mark.parametrize("tie_break", ["first", "alphabetical", "pair-id", "max-string"])
@pytest.mark.parametrize("model", ["char", "byte"])
def test_real_text(model, tie_break):
    text = real_text()
    docs = text.split("\n\n")
    kwargs = {"end_of_word": "</w>"} if model == "char" else {"pattern": "cl100k"}
    r = ref.train(docs, model=model, num_merges=150, tie_break=tie_break, **kwargs)
    c = bytepair.Tokenizer.train(docs, model=model, num_merges=150, tie_break=tie_break, **kwargs)
    same_model(r, c)
    sample = text[-3000:]
    assert c.encode_ordinary(sample) == r.encode_ordinary(sample)


@SETTINGS
@given(
    first=corpora,
    second=corpora,
    model=st.sampled_from(["char", "byte"]),
    tie_break=st.sampled_from(["first", "alphabetical", "pair-id", "max-string"]),
    n1=st.integers(0, 12),
    n2=st.none() | st.integers(0, 15),
    specials=st.sampled_from([(), ("<w>",)]),
    fused=st.booleans(),
)
def test_continued_training(first, second, model, tie_break, n1, n2, specials, fused):
    kwargs = {"end_of_word": "</w>", "end_of_word_fused": fused} if model == "char" else {"pattern": "gpt2"}
    r0, c0 = run_both("train", first[0], model=model, num_merges=n1, tie_break=tie_break,
                      special_tokens=specials, **kwargs)
    if r0 is None:
        return
    same_model(r0, c0)
    docs, probe = second
    results = []
    for impl, init in ((ref, r0), (bytepair.Tokenizer, c0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(impl.train(docs, num_merges=n2, tie_break=tie_break, init=init))
            except bytepair.BytepairError as e:
                results.append(type(e))
    r, c = results
    if isinstance(r, type) or isinstance(c, type):
        assert r == c
        return
    same_model(r, c)
    # every id of the initial tokenizer is kept
    assert {i: t for i, t in c.vocab().items() if i in c0.vocab()} == c0.vocab()
    for text in docs + [probe]:
        same_encoding(r, c, text)
