"""Hugging Face's and tiktoken's names of the vocabulary (bytepair/vocabulary.py), each against the
peer's answer on the same file: ``tokenizers`` and ``transformers`` on ``tokenizer.json`` files (a
pipeline, and one on the byte model's route) and on the Hugging Face conversion of a ``.tiktoken`` file
(transformers' ``TikTokenConverter``), tiktoken on ``.tiktoken`` files, mistral_common on tekken.json."""

from __future__ import annotations

import random

import pytest
import tokenizers
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
from peer_files import TEKKEN, hf_gpt2_json, tiktoken_encoding

from bytepair import Tokenizer, UnknownTokenError


@pytest.fixture(scope="module")
def gpt2_tiktoken(vocab_paths):
    path = vocab_paths["gpt2.tiktoken"]
    return Tokenizer.load(path), tiktoken_encoding("r50k_base", path)


@pytest.fixture(scope="module")
def hf_files(published_tokenizers, vocab_paths, tmp_path_factory):
    """{name: (bytepair, tokenizers.Tokenizer, path)}: Llama 3's tokenizer.json (a pipeline), Hugging
    Face's tokenizer.json of GPT-2's files (the byte model's route), and transformers' conversion of
    GPT-2's .tiktoken file (the same .tiktoken loaded by bytepair)."""
    from transformers.convert_slow_tokenizer import TikTokenConverter
    out = {}
    path = published_tokenizers["llama3"]
    out["llama3"] = (Tokenizer.load(path), tokenizers.Tokenizer.from_file(path), path)
    path = str(tmp_path_factory.mktemp("names") / "tokenizer.json")
    hf = hf_gpt2_json(vocab_paths["gpt2/vocab.json"], vocab_paths["gpt2/merges.txt"], path)
    out["byte route"] = (Tokenizer.load(path), hf, path)
    assert out["byte route"][0].model == "byte"
    converted = TikTokenConverter(vocab_file=vocab_paths["gpt2.tiktoken"], extra_special_tokens=["<|endoftext|>"])
    out["tiktoken"] = (Tokenizer.load(vocab_paths["gpt2.tiktoken"]), converted.converted(), None)
    return out


@pytest.mark.parametrize("name", ["llama3", "byte route", "tiktoken"])
def test_hf_names_equal_hf(hf_files, name):
    tok, hf, _ = hf_files[name]
    vocab = hf.get_vocab()
    assert tok.get_vocab() == vocab
    assert tok.vocab_size == hf.get_vocab_size() == len(tok)
    rng = random.Random(7)
    tokens = rng.sample(sorted(vocab), 300) + ["no such token", ""]
    for token in tokens:
        assert tok.token_to_id(token) == hf.token_to_id(token), token
    for id_ in rng.sample(range(tok.n_vocab), 300) + [tok.n_vocab, tok.n_vocab + 5]:
        assert tok.id_to_token(id_) == hf.id_to_token(id_), id_
    batch = [hf.encode(t).ids for t in ["Hello world", "<|endoftext|> x", "héllo 😀"]]
    for skip in (False, True):
        assert tok.decode_batch(batch, skip_special_tokens=skip) == hf.decode_batch(batch, skip_special_tokens=skip)


def test_len_equals_transformers(hf_files):
    from transformers import PreTrainedTokenizerFast
    for name in ("llama3", "byte route"):
        tok, _, path = hf_files[name]
        assert len(tok) == len(PreTrainedTokenizerFast(tokenizer_file=path)), name


def test_tiktoken_names_equal_tiktoken(gpt2_tiktoken):
    tok, enc = gpt2_tiktoken
    assert tok.max_token_value == enc.max_token_value and tok.n_vocab == enc.n_vocab
    assert tok.eot_token == enc.eot_token and tok.special_tokens_set == enc.special_tokens_set
    rng = random.Random(3)
    for id_ in rng.sample(range(enc.n_vocab - 1), 300):
        raw = enc.decode_single_token_bytes(id_)
        assert tok.encode_single_token(raw) == enc.encode_single_token(raw) == id_
        assert tok.vocab[id_] == raw
    assert tok.encode_single_token("<|endoftext|>") == enc.encode_single_token("<|endoftext|>")
    assert tok.encode_single_token(" world") == enc.encode_single_token(" world")
    for missing in (b" no such token", "<|fim_prefix|>"):
        with pytest.raises(KeyError):
            enc.encode_single_token(missing)
        with pytest.raises(UnknownTokenError):
            tok.encode_single_token(missing)
    batch = enc.encode_batch(["hello world", "héllo"]) + [[enc.eot_token, 995]]
    assert tok.decode_batch(batch) == enc.decode_batch(batch)
    half = [[enc.encode_single_token(b"\xc3")]]  # half of a UTF-8 character
    assert tok.decode_batch(half) == enc.decode_batch(half)
    with pytest.raises(UnicodeDecodeError):
        enc.decode_batch(half, errors="strict")
    with pytest.raises(UnicodeDecodeError):
        tok.decode_batch(half, errors="strict")


@pytest.mark.parametrize("i", [0, 1])
def test_names_on_tekken_equal_mistral_common(i):
    tok, mt = Tokenizer.load(TEKKEN[i]), Tekkenizer.from_file(TEKKEN[i])
    assert len(tok) == tok.vocab_size == mt.n_words and tok.max_token_value == mt.n_words - 1
    for id_ in (mt.num_special_tokens, 1255, 5000, mt.n_words - 1):
        assert tok.encode_single_token(mt.id_to_byte_piece(id_)) == id_
        assert tok.vocab[id_] == mt.id_to_byte_piece(id_)
    assert tok.encode_single_token("<s>") == mt.bos_id


def test_vocab_is_a_read_only_mapping_and_still_callable(gpt2_tiktoken):
    tok, enc = gpt2_tiktoken
    mapping = tok.vocab
    old = tok.vocab()
    assert type(old) is dict and old == dict(mapping) and len(mapping) == enc.n_vocab
    old[0] = b"changed"  # the copy is the caller's
    assert tok.vocab[0] == enc.decode_single_token_bytes(0)
    with pytest.raises(TypeError):
        mapping[0] = b"x"  # type: ignore[index]
    # both are attributes now: vocab a mapping, merges a list
    from collections.abc import Mapping
    assert isinstance(tok.vocab, Mapping) and isinstance(tok.merges, list)
