"""The Rust pre-tokenizer against Python's ``regex`` module: for every preset
(gpt2, cl100k, o200k) the pieces of ``bytepair._core.split_words(text,
pattern)`` must equal ``regex.findall(pattern, text)`` with tiktoken's
pattern string, on real text, on every code point, and on hypothesis
strings. (o200k has no vocabulary here, so this is its conformance test.)

Known difference: ``regex`` 2025.10.22 and later match ``\\p{L}``, ``\\p{N}``
and ``\\p{M}`` with Unicode 17.0 tables; Rust's regex (bytepair's core, and
tiktoken's) uses Unicode 16.0. The ~4,700 characters new in Unicode 17 are
then split differently (U+088F is a letter for ``regex`` only). With
``regex`` 2025.9.18 every code point agrees. These tests do not hide that:
they fail on such a ``regex`` with a message naming the characters.
"""

from __future__ import annotations

import os

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import PRESETS, _core

EXAMPLES = int(os.environ.get("BYTEPAIR_CONFORMANCE_EXAMPLES", "250"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None)
NAMES = ["gpt2", "cl100k", "o200k"]


def _tiktoken_pattern(name: str) -> str:
    """The pattern string as tiktoken itself defines it (its encoding
    constructor, called with a stub instead of the vocabulary download)."""
    import tiktoken_ext.openai_public as op

    constructor = {"gpt2": op.r50k_base, "cl100k": op.cl100k_base, "o200k": op.o200k_base}[name]
    real = op.load_tiktoken_bpe
    op.load_tiktoken_bpe = lambda *args, **kwargs: {}
    try:
        return constructor()["pat_str"]
    finally:
        op.load_tiktoken_bpe = real


PATTERNS = {name: _tiktoken_pattern(name) for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_presets_are_tiktokens_patterns(name):
    assert PRESETS[name] == PATTERNS[name]


def _compare(name: str, text: str) -> None:
    pattern = PATTERNS[name]
    expected = regex.findall(pattern, text)
    got = _core.split_words(text, pattern)
    if got != expected:
        for i, (a, b) in enumerate(zip(got, expected)):
            if a != b:
                break
        else:
            i = min(len(got), len(expected))
        raise AssertionError(
            f"{name}: pieces differ from regex.findall at piece {i}: rust {got[i:i + 3]!r} vs regex {expected[i:i + 3]!r}"
        )


@pytest.mark.parametrize("name", NAMES)
def test_real_text(name, real_texts):
    for doc in real_texts:
        _compare(name, doc)


@pytest.mark.parametrize("name", NAMES)
def test_every_code_point(name):
    """Each code point (surrogates aside) alone, doubled, after a letter and
    before a space; blocks of code points at once, the first differing
    block then one code point at a time."""
    pattern = PATTERNS[name]
    compiled = regex.compile(pattern)
    context = "{c}a{c}{c} "
    cps = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    for i in range(0, len(cps), 32768):
        block = cps[i : i + 32768]
        text = "".join(context.format(c=chr(cp)) for cp in block)
        if compiled.findall(text) != _core.split_words(text, pattern):
            break
    else:
        return

    def differing(cps):  # bisection: split_words compiles the pattern on every call
        text = "".join(context.format(c=chr(cp)) for cp in cps)
        if compiled.findall(text) == _core.split_words(text, pattern):
            return []
        if len(cps) == 1:
            return cps
        first = differing(cps[: len(cps) // 2])
        return first if len(first) >= 12 else first + differing(cps[len(cps) // 2 :])

    bad = differing(block)
    example = context.format(c=chr(bad[0])) if bad else text
    raise AssertionError(
        f"{name}: code points split differently by Rust and regex {regex.__version__}: "
        + ", ".join(f"U+{cp:04X}" for cp in bad[:12])
        + f"{' ...' if len(bad) > 12 else ''}; e.g. {example!r}: rust {_core.split_words(example, pattern)!r}"
        + f" vs regex {compiled.findall(example)!r}"
        + " (regex 2025.10.22 and later use Unicode 17.0 tables, Rust's regex and tiktoken Unicode 16.0)"
    )


def test_unicode_17_letter_agrees():
    """U+088F (ARABIC LETTER NOON WITH RING ABOVE, new in Unicode 17.0): one
    piece for both engines only if they use the same Unicode version."""
    text = "a\u088fb"
    for name in NAMES:
        _compare(name, text)


WHITESPACE = list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff")
OTHERS = list("aZéß日'’\"09._-/!😀\u0301ـ") + ["'s", "'LL", "'Ve", "123456"]
mixes = st.lists(st.sampled_from(WHITESPACE + OTHERS), max_size=40).map("".join)
runs = st.lists(st.tuples(st.sampled_from(WHITESPACE + OTHERS), st.integers(1, 300)), min_size=1, max_size=5).map(
    lambda parts: "".join(s * n for s, n in parts)
)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(text=st.text())
def test_hypothesis_text(name, text):
    _compare(name, text)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(text=mixes)
def test_hypothesis_whitespace_and_contractions(name, text):
    _compare(name, text)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(text=runs)
def test_hypothesis_long_runs(name, text):
    _compare(name, text)
