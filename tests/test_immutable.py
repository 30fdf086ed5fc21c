"""A Tokenizer is an immutable product of one description (``tok.spec``):
setting or deleting an attribute raises, the description is frozen, and a
changed description builds a new tokenizer (the old one unchanged)."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

from bytepair import Tokenizer
from bytepair.spec import ModelSpec, PipelineSpec, checked, from_dict, to_dict

TEXT = "the cat sat on the mat, the dog sat on the log " * 5
PIPELINE = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
            "pre_tokenizer": {"type": "WhitespaceSplit"}}


@pytest.fixture(scope="module", params=["byte", "char", "pipeline"])
def tok(request):
    if request.param == "pipeline":
        return Tokenizer.from_dict({"bytepair": 1, "model": "pipeline", "pipeline": PIPELINE})
    return Tokenizer.train(TEXT, model=request.param, num_merges=10, special_tokens=["<s>"])


ATTRIBUTES = ["model", "pattern", "special_tokens", "merge_counts", "end_of_word", "end_of_word_fused",
              "byte_fallback", "unk_token", "add_prefix_space", "merge_rule", "parity_stats", "spec", "_spec",
              "_core", "anything_new"]


@pytest.mark.parametrize("name", ATTRIBUTES)
def test_setting_or_deleting_an_attribute_raises(tok, name):
    probe = "ab ab" if tok.model == "pipeline" else "the cat"
    before = tok.encode_ordinary(probe)
    with pytest.raises(AttributeError, match="immutable"):
        setattr(tok, name, None)
    with pytest.raises(AttributeError, match="immutable"):
        delattr(tok, name)
    assert tok.encode_ordinary(probe) == before


def test_the_description_is_frozen(tok):
    with pytest.raises(dataclasses.FrozenInstanceError):
        tok.spec.pattern = "gpt2"  # type: ignore[misc]
    copy = tok.special_tokens
    copy["<new>"] = 10**6
    assert "<new>" not in tok.special_tokens  # a copy, not the tokenizer's own table


def test_a_changed_description_builds_a_new_tokenizer():
    char = Tokenizer.train(TEXT, model="char", num_merges=10)
    other = Tokenizer.from_spec(dataclasses.replace(char.spec, merge_rule="lowest-rank"))
    assert (char.merge_rule, other.merge_rule) == ("in-order", "lowest-rank")
    byte = Tokenizer.train(TEXT, num_merges=10)
    spaced = Tokenizer.from_spec(dataclasses.replace(byte.spec, add_prefix_space=True))
    assert spaced.encode("cat") == byte.encode(" cat") != byte.encode("cat")


def test_descriptions_round_trip_and_pickle(tok):
    assert from_dict(to_dict(tok.spec)) == tok.spec
    again = pickle.loads(pickle.dumps(tok))
    assert type(again) is type(tok) and again.to_dict() == tok.to_dict()
    probe = "ab ab" if tok.model == "pipeline" else TEXT
    assert again.encode_ordinary(probe) == tok.encode_ordinary(probe)
    with pytest.raises(AttributeError):
        again.pattern = "gpt2"


def test_from_spec_runs_each_kind_of_description():
    assert Tokenizer.from_spec(PipelineSpec(PIPELINE)).model == "pipeline"
    assert type(Tokenizer.from_spec(ModelSpec("byte", "\\S+|\\s+"))) is Tokenizer
    with pytest.raises(Exception, match="not a tokenizer description"):
        Tokenizer.from_spec(json.dumps(PIPELINE))


def test_a_checked_core_never_outlives_a_change():
    """A loader's description carries the core it built to check it; a
    replaced description is built anew, never with the old core."""
    spec = checked(ModelSpec("byte", "\\S+|\\s+", merge_ids=((97, 98),)))
    assert spec.built is not None
    longer = dataclasses.replace(spec, merge_ids=((97, 98), (256, 99)))
    assert longer.built is None
    assert Tokenizer.from_spec(longer).encode("abc") == [257]
