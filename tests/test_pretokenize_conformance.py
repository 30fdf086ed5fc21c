"""The Rust pre-tokenizer against Python's ``regex`` module: for every preset
(gpt2, cl100k, o200k) the pieces of ``bytepair._core.split_words(text,
pattern)`` must equal ``regex.findall(pattern, text)`` with tiktoken's
pattern string, on real text, on every code point, and on hypothesis
strings. (o200k has no vocabulary here, so this is its conformance test.)

Unicode versions: ``regex`` 2025.10.22 and later match ``\\p{L}``, ``\\p{N}``
and ``\\p{M}`` with newer tables (Unicode 17 and on) than Rust's regex
(bytepair's core, and tiktoken's: Unicode 16.0). The code points whose
properties differ (``tests/unicode_versions.py``: ``CHANGED``, derived by
running both engines on every code point) are left out of the comparisons;
every other code point must agree. With ``regex`` 2025.9.18 ``CHANGED`` is
empty and every code point is compared.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import PRESETS, _core
from unicode_versions import CHANGED, CLASSES, stable_text

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


CONTEXT = "{c}a{c}{c} "


@functools.lru_cache(maxsize=None)
def _code_point_blocks():
    """[(code points, their text)] in blocks of 32768: the same for every preset, so built once (building them
    was about a quarter of each test's time)."""
    cps = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and chr(cp) not in CHANGED]
    blocks = [cps[i : i + 32768] for i in range(0, len(cps), 32768)]
    return [(block, _in_context(block)) for block in blocks]


def _in_context(cps):
    """Each code point of ``cps`` in CONTEXT, joined: the text compared."""
    return "".join(CONTEXT.format(c=chr(cp)) for cp in cps)


@pytest.mark.parametrize("name", NAMES)
def test_every_code_point(name):
    """Each code point (surrogates aside) alone, doubled, after a letter and
    before a space; blocks of code points at once, the first differing
    block then one code point at a time."""
    pattern = PATTERNS[name]
    compiled = regex.compile(pattern)
    for block, text in _code_point_blocks():
        if compiled.findall(text) != _core.split_words(text, pattern):
            break
    else:
        return

    def differing(cps):  # bisection: split_words compiles the pattern on every call
        text = _in_context(cps)
        if compiled.findall(text) == _core.split_words(text, pattern):
            return []
        if len(cps) == 1:
            return cps
        first = differing(cps[: len(cps) // 2])
        return first if len(first) >= 12 else first + differing(cps[len(cps) // 2 :])

    bad = differing(block)
    example = CONTEXT.format(c=chr(bad[0])) if bad else text
    raise AssertionError(
        f"{name}: code points split differently by Rust and regex {regex.__version__}: "
        + ", ".join(f"U+{cp:04X}" for cp in bad[:12])
        + f"{' ...' if len(bad) > 12 else ''}; e.g. {example!r}: rust {_core.split_words(example, pattern)!r}"
        + f" vs regex {compiled.findall(example)!r}"
        + f" (code points outside the {len(CHANGED)} whose Unicode properties differ between the engines)"
    )


def test_changed_code_points_follow_the_regex_version():
    """``CHANGED`` is empty with a ``regex`` on Unicode 16 tables (before
    2025.10.22); with a later one it holds U+088F (ARABIC LETTER NOON WITH
    RING ABOVE, new in Unicode 17.0), a letter for ``regex`` only, which the
    engines then split differently."""
    old_tables = tuple(int(x) for x in importlib.metadata.version("regex").split(".")[:3]) < (2025, 10, 22)
    if old_tables:
        assert CHANGED == frozenset()
        return
    assert "\u088f" in CHANGED
    assert regex.findall(r"\p{L}+", "a\u088fb") == ["a\u088fb"]
    assert _core.split_words_regex("a\u088fb", r"\p{L}+") == ["a", "b"]


def test_changed_covers_every_class_the_presets_use():
    used = set(regex.findall(r"\\p\{\w+\}|\\[sw]", "".join(PATTERNS.values())))
    assert used <= set(CLASSES), used - set(CLASSES)


WHITESPACE = list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff")
OTHERS = list("aZéß日'’\"09._-/!😀\u0301ـ") + ["'s", "'LL", "'Ve", "123456"]
mixes = st.lists(st.sampled_from(WHITESPACE + OTHERS), max_size=40).map("".join)
runs = st.lists(st.tuples(st.sampled_from(WHITESPACE + OTHERS), st.integers(1, 300)), min_size=1, max_size=5).map(
    lambda parts: "".join(s * n for s, n in parts)
)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(text=stable_text())
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
