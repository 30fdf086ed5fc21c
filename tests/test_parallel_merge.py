"""The merge loop's parallel path (src/train/trainer.rs `merge_parallel`: one
merge's occurrences rewritten in runs cut at word starts, the pair counts
updated from the runs' notes in order) gives exactly the merges of the
one-thread loop and of the pure-Python reference.

Real training runs only merges of at least 1024 positions in parallel; the
internal knob `_core._set_parallel_merge(min_positions, runs)` lowers that
to every merge here and fixes the number of runs (so the parallel path runs
whatever the machine's core count: runs are rayon tasks).
"""

from __future__ import annotations

import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core
from bytepair import reference as ref

EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])
SERIAL = (2**62, 1)  # no merge has that many positions: the one-thread loop only


@pytest.fixture
def knob():
    """Sets the parallel merge knob for one test; restores it after."""
    saved = _core._set_parallel_merge(*SERIAL)
    _core._set_parallel_merge(*saved)
    yield lambda min_positions, runs: _core._set_parallel_merge(min_positions, runs)
    _core._set_parallel_merge(*saved)


def trained(knob_setting, set_knob, *args, **kwargs):
    set_knob(*knob_setting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "stopped after n merges": alike for all
        return bytepair.Tokenizer.train(*args, **kwargs)


words = st.text(alphabet="aab\u00e9 ", min_size=1, max_size=20)
docs = st.lists(words, min_size=1, max_size=25).filter(lambda d: any(w.strip() for w in d))  # not empty


@SETTINGS
@given(docs=docs, model=st.sampled_from(["char", "byte"]),
       tie_break=st.sampled_from(["first", "alphabetical", "pair-id", "max-string"]),
       runs=st.integers(2, 7), min_positions=st.integers(1, 4))
def test_parallel_merges_equal_serial_and_reference(knob, docs, model, tie_break, runs, min_positions):
    kwargs = {"end_of_word": "_"} if model == "char" else {"pattern": r"[ab]+|."}
    kwargs.update(model=model, tie_break=tie_break, num_merges=40)
    serial = trained(SERIAL, knob, docs, **kwargs)
    parallel = trained((min_positions, runs), knob, docs, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ref.train(docs, **kwargs)
    assert serial.merges == want.merges
    assert parallel.merges == want.merges
    assert parallel.merge_counts == want.merge_counts == serial.merge_counts


@SETTINGS
@given(counts=st.dictionaries(st.text(alphabet="ab", min_size=1, max_size=12), st.integers(1, 2**40),
                              min_size=1, max_size=12),
       runs=st.integers(2, 5))
def test_parallel_merges_with_counts_beyond_32_bits(knob, counts, runs):
    """Word counts of 2^32 or more are found by position in the runs too."""
    kwargs = dict(model="byte", pattern=r"[ab]+|.", tie_break="first", num_merges=30)
    serial = trained(SERIAL, knob, counts, **kwargs)
    parallel = trained((1, runs), knob, counts, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ref.train(counts, **kwargs)
    assert serial.merges == parallel.merges == want.merges
    assert parallel.merge_counts == want.merge_counts


def test_parallel_merges_on_real_text(knob):
    """A multilingual sample at a few hundred merges: long position lists
    cut into many runs, runs that hold no occurrence, overlapping pairs."""
    path = os.path.join(os.path.dirname(__file__), "data")
    sample = sorted(f for f in os.listdir(path) if "multi" in f)
    assert sample, "tests/data has a multilingual sample"
    with open(os.path.join(path, sample[0]), encoding="utf-8") as fh:
        text = fh.read()
    kwargs = dict(model="byte", vocab_size=256 + 400, tie_break="first")
    serial = trained(SERIAL, knob, text, **kwargs)
    for setting in ((1, 2), (8, 5), (64, 16)):
        assert trained(setting, knob, text, **kwargs).merges == serial.merges
    char = dict(model="char", num_merges=300, tie_break="pair-id")
    assert trained((1, 3), knob, text, **char).merges == trained(SERIAL, knob, text, **char).merges


def test_knob_returns_the_previous_setting(knob):
    knob(5, 3)
    assert _core._set_parallel_merge(7, 0) == (5, 3)
    assert _core._set_parallel_merge(1024, 0) == (7, 0)
