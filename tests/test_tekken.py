"""Mistral's tekken.json: ids and decoding equal to mistral_common's Tekkenizer
(the two files mistral_common ships), special tokens included; refusals."""

from __future__ import annotations

import base64
import functools
import glob
import json
import os

import pytest
from hypothesis import given, settings, strategies as st
from mistral_common.tokens.tokenizers.tekken import SpecialTokenPolicy, Tekkenizer

from bytepair import Tokenizer
from bytepair.errors import FormatError
from bytepair.formats import detect

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = open(os.path.join(HERE, "data", "multilingual.txt"), encoding="utf-8").read().splitlines()
EDGE = ["", " ", "<s>[INST] hi [/INST]</s>", "<SPECIAL_20>", "  \n\n x 12345 😀", "\t\t\r\n", "ab" * 500,
        "日本語のテキスト", "don't I'LL we've", "a/b//c\n/", "\x00\x01", "\U0010ffff"]
FILES = sorted(glob.glob(os.path.join(os.path.dirname(__import__("mistral_common").__file__), "data", "tekken*.json")))


@functools.lru_cache(maxsize=None)
def pair(i: int):
    return Tokenizer.load(FILES[i]), Tekkenizer.from_file(FILES[i])


def test_files_are_present_and_detected():
    assert len(FILES) == 2
    for f in FILES:
        assert detect(f) == "tekken"


@pytest.mark.parametrize("i", [0, 1])
def test_ids_and_decode_equal_mistral(i):
    tok, mt = pair(i)
    for text in LINES + EDGE:
        ids = mt.encode(text, bos=False, eos=False)
        assert tok.encode_ordinary(text) == ids, text
        assert tok.encode(text, disallowed_special=()) == ids, text
        assert tok.decode(ids) == mt.decode(ids), text
        with_specials = [mt.bos_id] + ids + [3, mt.eos_id] + ids
        assert tok.decode(with_specials) == mt.decode(with_specials, special_token_policy=SpecialTokenPolicy.KEEP)


@pytest.mark.parametrize("i", [0, 1])
def test_special_tokens_and_sizes(i):
    tok, mt = pair(i)
    assert tok.special_tokens["<s>"] == mt.bos_id and tok.special_tokens["</s>"] == mt.eos_id
    assert len(tok.special_tokens) == mt.num_special_tokens
    for k in (0, 1, 19, 20, 999):
        assert tok.decode([k]) == mt.id_to_piece(k)
    assert tok.n_vocab == mt.n_words
    for k in (1000, 1255, 1256, 5000, mt.n_words - 1):
        assert tok.decode_bytes([k]) == mt.id_to_byte_piece(k), k
    assert tok.encode("<s>hi", allowed_special="all")[0] == mt.bos_id


@pytest.mark.parametrize("i", [0, 1])
@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab AB 12\t\n\r/'s") + ["😀", "日", "é", "\u3000", "ß", "ǅ", "\u0301",
                                                                           "\U0001f9ff", "١", "Ω"]), max_size=60))
def test_generated_text(i, text):
    tok, mt = pair(i)
    ids = mt.encode(text, bos=False, eos=False)
    assert tok.encode_ordinary(text) == ids
    assert tok.decode(ids) == mt.decode(ids)


def small(tmp_path, **over):
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None} for i in range(256)]
    vocab.append({"rank": 256, "token_bytes": base64.b64encode(b"ab").decode(), "token_str": "ab"})
    d = {"config": {"pattern": r"\w+|\s+|.", "default_vocab_size": 277, "default_num_special_tokens": 20,
                    "version": "v3"}, "vocab": vocab}
    for k, v in over.items():
        if k in d["config"]:
            d["config"][k] = v
        else:
            d[k] = v
    path = tmp_path / "tekken.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    return str(path)


def test_small_file_equals_mistral(tmp_path):
    path = small(tmp_path, default_vocab_size=276)  # the vocab cut to 256 ranks: "ab" is gone
    tok, mt = Tokenizer.load(path), Tekkenizer.from_file(path)
    assert tok.encode_ordinary("ab ab") == mt.encode("ab ab", False, False)
    specials = [{"rank": k, "token_str": f"<t{k}>", "is_control": True} for k in range(3)]
    path = small(tmp_path, special_tokens=specials, default_num_special_tokens=5, default_vocab_size=262)
    tok, mt = Tokenizer.load(path), Tekkenizer.from_file(path)
    assert tok.encode_ordinary("ab ab") == mt.encode("ab ab", False, False)
    assert tok.decode([0, 4, 261]) == mt.decode([0, 4, 261], special_token_policy=SpecialTokenPolicy.KEEP)


@pytest.mark.parametrize("over, message", [
    (dict(default_vocab_size=300), "inconsistent counts: default_vocab_size 300"),
    (dict(default_vocab_size=10), "inconsistent counts: default_vocab_size 10"),
    (dict(default_num_special_tokens=5, default_vocab_size=262), "inconsistent counts: 20 special tokens listed but default_num_special_tokens is 5"),
    (dict(special_tokens=[{"rank": 0, "token_str": "<s>"}, {"rank": 1, "token_str": "<s>"}]), "listed twice"),
    (dict(default_vocab_size="x"), "default_vocab_size must be an integer"),
    (dict(pattern=None), "config.pattern must be a string"),
])
def test_refused(tmp_path, over, message):
    path = small(tmp_path, **over)
    with pytest.raises(FormatError, match=message):
        Tokenizer.load(path)
    with pytest.raises((AssertionError, ValueError, KeyError, TypeError)):
        Tekkenizer.from_file(path)  # mistral_common refuses them too


def test_special_rank_must_be_its_place(tmp_path):
    # mistral_common loads it but disagrees with itself (decode says id 0 is "<s>", get_special_token says 1)
    path = small(tmp_path, special_tokens=[{"rank": 1, "token_str": "<s>"}])
    with pytest.raises(FormatError, match=r"special_tokens\[0\] must have rank 0"):
        Tokenizer.load(path)
    mt = Tekkenizer.from_file(path)
    assert mt.decode([0], special_token_policy=SpecialTokenPolicy.KEEP) == "<s>" and mt.get_special_token("<s>") == 1


def test_refused_vocab_entries(tmp_path):
    path = small(tmp_path)
    d = json.loads(open(path).read())
    d["vocab"][5]["token_bytes"] = base64.b64encode(b"x").decode()
    open(path, "w").write(json.dumps(d))
    with pytest.raises(FormatError, match=r"vocab\[5\] must be the byte 0x05"):
        Tokenizer.load(path)
    d["vocab"][5]["token_bytes"] = base64.b64encode(b"\x05").decode()
    d["vocab"][256]["token_bytes"] = base64.b64encode(b"a").decode()
    open(path, "w").write(json.dumps(d))
    with pytest.raises(FormatError, match=r"vocab\[256\] repeats vocab\[97\]"):
        Tokenizer.load(path)


@pytest.mark.parametrize("i", [0, 1])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_skipping_specials_decodes_the_groups_apart_as_mistral(i, data):
    """``decode(ids, skip_special_tokens=True)`` is mistral_common's ``decode(IGNORE)``: the ids between two
    special tokens are decoded apart, so a character's bytes on the two sides of one are never joined."""
    tok, mt = pair(i)
    char = data.draw(st.characters(min_codepoint=0x80, exclude_categories=("Cs",)))
    raw = char.encode("utf-8")
    cut = data.draw(st.integers(min_value=1, max_value=len(raw) - 1))
    special = data.draw(st.integers(min_value=0, max_value=mt.num_special_tokens - 1))
    around = data.draw(st.lists(st.integers(min_value=0, max_value=mt.n_words - 1), max_size=4))
    ids = around + [mt.num_special_tokens + b for b in raw[:cut]] + [special] + \
        [mt.num_special_tokens + b for b in raw[cut:]] + around
    assert tok.decode(ids, skip_special_tokens=True) == mt.decode(ids, special_token_policy=SpecialTokenPolicy.IGNORE)
    assert tok.decode(ids) == mt.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)
