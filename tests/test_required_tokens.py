"""Seeded training (Tokenizer.train(..., required_tokens=[...])): the core
against the pure-Python reference, continued training, and the exports read
back by Hugging Face tokenizers."""

from __future__ import annotations

import os
import warnings

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer
from bytepair import reference as ref

EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_word = st.text(alphabet="abдé", min_size=1, max_size=5)


@SETTINGS
@given(docs=st.lists(st.lists(_word, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=4),
       required=st.lists(_word, min_size=1, max_size=3), num_merges=st.integers(0, 15),
       tie_break=st.sampled_from(ref.TIE_BREAKS))
def test_core_matches_reference(docs, required, num_merges, tie_break):
    kw = dict(num_merges=num_merges, required_tokens=required, tie_break=tie_break, pattern=r"\S+|\s+")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.TrainingWarning)
        expected = ref.train(docs, **kw)
        core = Tokenizer.train(docs, **kw)
    assert core.merges == expected.merges
    text = " ".join(docs + required)
    assert core.encode(text) == expected.encode(text)
    for token in required:
        assert len(expected.encode(token)) == 1
        assert core.encode(token) == expected.encode(token)


def test_kept_by_continued_training_and_the_exports(tmp_path):
    tok = Tokenizer.train(["the cat sat on the mat"] * 3, num_merges=12, required_tokens=["дом", "xyz"])
    ids = {t: tok.encode(t) for t in ("дом", "xyz")}
    assert all(len(v) == 1 for v in ids.values())
    more = Tokenizer.train(["дом xyz dog dog"], init=tok, num_merges=3)
    assert {t: more.encode(t) for t in ids} == ids
    path = tmp_path / "tok.json"
    more.save(str(path), format="hf")
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert {t: hf.encode(t).ids for t in ids} == ids
    tiktoken_path = tmp_path / "tok.tiktoken"
    more.save(str(tiktoken_path), format="tiktoken")
    back = Tokenizer.from_tiktoken(str(tiktoken_path), pattern=more.pattern)
    assert {t: back.encode(t) for t in ids} == ids


def test_bad_required_tokens_are_refused():
    with pytest.raises(bytepair.TrainingError, match="more than one piece"):
        Tokenizer.train("a b", num_merges=2, required_tokens=["a b"])
    with pytest.raises(bytepair.TrainingError, match="byte model"):
        Tokenizer.train("a b", model="char", num_merges=2, required_tokens=["ab"])
    with pytest.raises(bytepair.TrainingError, match="non-empty"):
        Tokenizer.train("a b", num_merges=2, required_tokens=[""])
