"""The hand-written lexers of the gpt2, cl100k, llama3, qwen2, o200k, tekken and qwen3.5 presets give
exactly the words of the regex engine (fancy-regex, as tiktoken uses) on
generated and real text, also where a text ends in a run of whitespace with
newlines in it (cl100k's ``\\s++$``, which llama3's and qwen2's lack)."""

from __future__ import annotations

import glob
import os
import sysconfig

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import _core
from bytepair.patterns import PRESETS

TRICKY = "aZsSſdDmMtTlLvVeErRÀΩǅʰー'’ \u00a0\u3000\t\r\n\x0b\x0c\x85\u2028\x1c.,!?-/()\"_#1234567890٣০१²½éßЖשمر你こカ한\u0301\u093f🙂👍🏽𝔘𝟘"


LEXED = ["gpt2", "cl100k", "llama3", "qwen2", "o200k", "tekken", "qwen3.5"]
# twice the property tests' cases per preset: 600 in a developer run, 2000 in CI (BYTEPAIR_EXAMPLES); the Rust
# unit tests compare the same lexers with the same regexes on 30,000 generated texts each
EXAMPLES = 2 * int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SPACES = " \t\r\n\x0b\x0c\x85\u00a0\u2028\u3000"


@pytest.mark.parametrize("preset", LEXED)
@settings(max_examples=EXAMPLES, deadline=None)
@given(text=st.text(alphabet=TRICKY, max_size=60) | st.text(max_size=60)
       | st.tuples(st.text(alphabet=TRICKY, max_size=30), st.text(alphabet=SPACES, min_size=1, max_size=6)).map("".join))
def test_lexer_equals_regex_on_generated_text(preset, text):
    pattern = PRESETS[preset]
    assert _core.split_words(text, pattern) == _core.split_words_regex(text, pattern)


# ASCII classes as the 64-byte masks see them (src/pretok/lexer_bits.rs), and the characters that hand a text
# back to each preset's step: texts made of runs of them cross the masks' blocks at every kind of boundary
ASCII_CLASSES = ["abzq", "ABZQ", "sSmMtT", " ", "\t\x0b\x0c", "\r\n", ".,!-_(~", "/", "0123456789", "\x00\x1f\x7f"]
UNREADABLE = "'\u2019é\u00a0\x85\u2028中٣\u0301ǅʰ🙂"


@st.composite
def runs_of_classes(draw):
    """A text of up to 40 runs, each 1 to 70 characters of one class (an unreadable character now and then)."""
    parts = []
    for _ in range(draw(st.integers(0, 40))):
        alphabet = draw(st.sampled_from(ASCII_CLASSES + [UNREADABLE]))
        length = draw(st.integers(1, 70 if alphabet != UNREADABLE else 2))
        parts.append(draw(st.text(alphabet=alphabet, min_size=length, max_size=length)))
    return "".join(parts)


@pytest.mark.parametrize("preset", LEXED)
@settings(max_examples=EXAMPLES, deadline=None)
@given(text=runs_of_classes())
def test_lexer_equals_regex_on_long_runs_of_every_class(preset, text):
    pattern = PRESETS[preset]
    assert _core.split_words(text, pattern) == _core.split_words_regex(text, pattern)


@pytest.mark.parametrize("preset", LEXED)
def test_lexer_equals_regex_on_real_text(preset):
    files = sorted(glob.glob(sysconfig.get_path("stdlib") + "/*.py"))[:40]
    text = "".join(open(f, encoding="utf-8", errors="replace").read() for f in files)
    pattern = PRESETS[preset]
    assert _core.split_words(text, pattern) == _core.split_words_regex(text, pattern)


@pytest.mark.parametrize("preset", LEXED + ["llama4"])
def test_the_lexed_presets_run_on_their_lexer(preset):
    # else the tests above would compare the regex engine with itself
    assert _core.pattern_lexer(PRESETS[preset]) is not None
    # the same expression written another way runs on the same lexer; another expression does not
    assert _core.pattern_lexer("(?:" + PRESETS[preset] + ")") == _core.pattern_lexer(PRESETS[preset])
    assert _core.pattern_lexer("(?:" + PRESETS[preset] + ")|x") is None


def _spellings():
    """Each lexed preset written as the regex engine reads it the same: Hugging Face's dialect of a possessive
    count and of the end of text (what bytepair's own tokenizer.json export writes), and a group around it."""
    out = []
    for preset in LEXED:
        p = PRESETS[preset]
        hf = p.replace("\\p{N}{1,3}+", "(?>\\p{N}{1,3})").replace("\\s++$", "\\s++\\z")
        out += [(preset, "(?:" + p + ")")] + ([(preset, hf)] if hf != p else [])
    return out


@pytest.mark.parametrize("preset, spelling", _spellings())
@settings(max_examples=EXAMPLES // 4, deadline=None)
@given(text=st.text(alphabet=TRICKY, max_size=60) | st.text(max_size=60)
       | st.tuples(st.text(alphabet=TRICKY, max_size=30), st.text(alphabet=SPACES, min_size=1, max_size=6)).map("".join))
def test_another_spelling_runs_on_the_lexer_with_the_regexs_words(preset, spelling, text):
    assert _core.pattern_lexer(spelling) == _core.pattern_lexer(PRESETS[preset])
    assert _core.split_words(text, spelling) == _core.split_words_regex(text, spelling)
