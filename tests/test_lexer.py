"""The hand-written lexers of the gpt2 and cl100k presets give exactly the
words of the regex engine (fancy-regex, as tiktoken uses) on generated and
real text."""

from __future__ import annotations

import glob
import sysconfig

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import _core
from bytepair.patterns import PRESETS

TRICKY = "aZsSſdDmMtTlLvVeErR'’ \u00a0\u3000\t\r\n\x0b\x0c\x85\u2028\x1c.,!?-/()\"_#1234567890٣০१²½éßЖשمر你こカ한\u0301\u093f🙂👍🏽𝔘𝟘"


@pytest.mark.parametrize("preset", ["gpt2", "cl100k"])
@settings(max_examples=1500, deadline=None)
@given(text=st.text(alphabet=TRICKY, max_size=60) | st.text(max_size=60))
def test_lexer_equals_regex_on_generated_text(preset, text):
    pattern = PRESETS[preset]
    assert _core.split_words(text, pattern) == _core.split_words_regex(text, pattern)


@pytest.mark.parametrize("preset", ["gpt2", "cl100k"])
def test_lexer_equals_regex_on_real_text(preset):
    files = sorted(glob.glob(sysconfig.get_path("stdlib") + "/*.py"))[:40]
    text = "".join(open(f, encoding="utf-8", errors="replace").read() for f in files)
    pattern = PRESETS[preset]
    assert _core.split_words(text, pattern) == _core.split_words_regex(text, pattern)
