"""The SentencePiece-style char model (word-start marker ``▁``, spaces kept,
byte fallback; :mod:`bytepair.word_start`): trained by bytepair, exported as
``tokenizer.json`` and a ``transformers`` folder, and run by HF
``tokenizers`` and ``transformers`` with bytepair's ids and decoding on
hypothesis text (characters never seen in training included, which need the
byte fallback). Training is checked against the pure-Python reference
(:mod:`bytepair.reference`) trained on the same normalized words.
"""

from __future__ import annotations

import functools
import json
import os
import re

import pytest
import tokenizers
import transformers
from hypothesis import given, settings, strategies as st

from bytepair import Tokenizer, reference
from bytepair.errors import TrainingError
from bytepair.word_start import MARKER, normalize, word_pattern

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = open(os.path.join(HERE, "data", "multilingual.txt"), encoding="utf-8").read().splitlines()
SPECIALS = ["<unk>", "<s>", "</s>"]


@functools.lru_cache(maxsize=None)
def trained(vocab_size: int = 1500):
    return Tokenizer.train(LINES * 2, model="char", word_start=MARKER, vocab_size=vocab_size,
                           special_tokens=SPECIALS)


@functools.lru_cache(maxsize=None)
def exported(tmp: str):
    tok = trained()
    path = os.path.join(tmp, "tokenizer.json")
    tok.save(path, format="hf")
    folder = os.path.join(tmp, "folder")
    tok.save_pretrained(folder, bos="<s>", eos="</s>", unk="<unk>")
    hf = tokenizers.Tokenizer.from_file(path)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=path)
    auto = transformers.AutoTokenizer.from_pretrained(folder)
    return tok, hf, fast, auto


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    return exported(str(tmp_path_factory.mktemp("ws")))


def check(four, text):
    tok, hf, fast, auto = four
    ids = tok.encode(text, add_special_tokens=False)
    assert hf.encode(text, add_special_tokens=False).ids == ids, text
    assert fast.encode(text, add_special_tokens=False) == ids, text
    assert auto(text, add_special_tokens=False)["input_ids"] == ids, text
    assert tok.decode(ids) == hf.decode(ids, skip_special_tokens=False)
    assert tok.decode(ids) == fast.decode(ids, clean_up_tokenization_spaces=False)
    return ids


def test_layout(four):
    tok = four[0]
    d = json.loads(tok.to_hf_json())
    assert d["pre_tokenizer"] is None and d["model"]["byte_fallback"] is True
    assert [n["type"] for n in d["normalizer"]["normalizers"]] == ["Prepend", "Replace"]
    assert tok.n_vocab == 1500
    vocab = tok.vocab()
    pieces = [t for t in vocab.values() if MARKER in t]
    assert pieces and all(re.fullmatch(f"{MARKER}*[^{MARKER}]*", t) for t in pieces)  # word-start marker only
    assert [vocab[tok.special_tokens[s]] for s in SPECIALS] == SPECIALS


def test_corpus_texts(four):
    for text in LINES + ["", " ", "  a  b  ", "x" * 300, "\n\n", "😀🎉 ꙮ\U0010ffff", "日本語 テキスト"]:
        check(four, text)


def test_unseen_characters_fall_back_to_bytes(four):
    tok = four[0]
    ids = check(four, "ꙮ")
    assert [tok.vocab()[i] for i in ids] == ["\u2581", "<0xEA>", "<0x99>", "<0xAE>"]
    assert tok.decode(ids) == "ꙮ"


TEXT = st.lists(st.one_of(st.sampled_from(sorted(set("".join(LINES)))), st.sampled_from([" ", "  ", "\n", "\t"]),
                          st.characters(blacklist_categories=("Cs",))), max_size=50).map("".join)


@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_generated_text(four, text):
    ids = check(four, text)
    assert four[0].decode(ids) == text  # byte fallback: every text round-trips


def test_special_tokens_are_matched_as_hf(four):
    tok, hf, fast, auto = four
    text = "<s>hello</s> world<unk>"
    ids = check(four, text)
    assert tok.special_tokens["<s>"] in ids and auto.bos_token_id == tok.special_tokens["<s>"]


def test_training_equals_reference():
    """The merges are the reference's on the normalized text cut by the word pattern."""
    texts = LINES[:20]
    tok = Tokenizer.train(texts, model="char", word_start=MARKER, num_merges=150)
    ref = reference.train([normalize(t) for t in texts], model="char", num_merges=150, pattern=word_pattern(),
                          end_of_word=None, byte_fallback=True)
    assert [tuple(m) for m in tok.merges] == [tuple(m) for m in ref.merges]


def test_refusals():
    with pytest.raises(TrainingError, match="word_start= is an option of the char model"):
        Tokenizer.train("a b", model="byte", word_start=MARKER)
    with pytest.raises(TrainingError, match="marker must be one character"):
        Tokenizer.train("a b", model="char", word_start="ab")
