"""GGUF tokenizers against llama.cpp itself (its C API through llama-cpp-python, built from its sdist in CI:
tests/llama_cpp_ref.py): every BPE-family ggml-vocab file bytepair loads gives llama.cpp's ids on thousands of
generated hostile texts, with and without parsing special tokens and adding BOS, and llama.cpp's decoding; the
files and pre-tokenizer types bytepair cannot run exactly are refused by name; a GGUF written by bytepair loads
in llama.cpp with bytepair's ids."""

import os
import random

import pytest

from hostile_text import hostile_texts
from llama_cpp_ref import LlamaVocab

from bytepair import Tokenizer
from bytepair.errors import FormatError
from bytepair.formats import gguf

# every byte-level (gpt2) and SentencePiece (llama) file of llama.cpp's test set that bytepair loads
EXACT = ["llama-bpe", "llama-spm", "qwen2", "qwen35", "deepseek-llm", "deepseek-coder", "gpt-2", "mpt", "starcoder",
         "refact", "command-r", "aquila", "baichuan", "gpt-neox"]
# the ones bytepair refuses, each with what its message names
REFUSED = {"falcon": "'>>TITLE<<' and '<|endoftext|>' overlap", "phi-3": "strip the whitespace after them"}
TEXTS = int(os.environ.get("BYTEPAIR_GGUF_TEXTS", "2000"))


def texts_for(tok, seed):
    """Hostile texts with the file's special and user-defined tokens mixed in, plus short prose."""
    specials = sorted(tok.added_tokens)[:40]
    rng = random.Random(seed)
    words = ["Hello", " world", "'s", " 123456", "\n\n", "  ", "日本語", " café", "\t", "ſ", "İ", "🦙", " ' ", " ,",
             " 're", " ?"]
    prose = ["".join(rng.choice(words) for _ in range(rng.randrange(1, 12))) for _ in range(TEXTS // 4)]
    return hostile_texts(seed, TEXTS, specials) + prose


@pytest.mark.parametrize("name", EXACT)
def test_ids_and_decoding_equal_llama_cpp(gguf_paths, gguf_tokenizer, name):
    path = gguf_paths[f"ggml-vocab-{name}.gguf"]
    tok = gguf_tokenizer(name)
    ref = LlamaVocab(path)
    texts = texts_for(tok, sum(map(ord, name)))
    assert len(texts) >= TEXTS
    plain = tok.encode_ordinary_batch(texts)
    plain_bos = tok.encode_ordinary_batch(texts, add_special_tokens=True)
    parsed = tok.encode_batch(texts, add_special_tokens=False)
    parsed_bos = tok.encode_batch(texts, add_special_tokens=True)
    for k, text in enumerate(texts):
        assert plain[k] == ref.tokenize(text, False, False), (k, text)
        assert plain_bos[k] == ref.tokenize(text, True, False), (k, text)
        assert parsed[k] == ref.tokenize(text, False, True), (k, text)
        assert parsed_bos[k] == ref.tokenize(text, True, True), (k, text)
        ids = parsed_bos[k]
        assert tok.decode_bytes(ids, skip_special_tokens=True) == ref.detokenize(ids, False, False), (k, text)
        assert tok.decode_bytes(ids) == ref.detokenize(ids, False, True), (k, text)
        assert tok.decode(ids) == ref.detokenize(ids, False, True).decode("utf-8", "replace"), (k, text)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_files_bytepair_cannot_run_exactly_are_refused(gguf_paths, name):
    with pytest.raises(FormatError, match=REFUSED[name]):
        Tokenizer.load(gguf_paths[f"ggml-vocab-{name}.gguf"])
    LlamaVocab(gguf_paths[f"ggml-vocab-{name}.gguf"])  # llama.cpp loads it: the refusal is bytepair's


def test_falcon_pre_type_equals_llama_cpp_and_why_its_file_is_refused(gguf_paths, monkeypatch):
    """Falcon's file is refused for its overlapping special tokens; with that check off, its pre-tokenizer type
    (checked, so that other files of that type load) gives llama.cpp's ids on every generated text, and the
    overlap itself is where the two differ."""
    path = gguf_paths["ggml-vocab-falcon.gguf"]
    monkeypatch.setattr(gguf, "_overlapping_specials", lambda *args: None)
    tok, ref = Tokenizer.load(path), LlamaVocab(path)
    texts = texts_for(tok, 7)
    for k, ids in enumerate(tok.encode_batch(texts, add_special_tokens=True)):
        assert ids == ref.tokenize(texts[k], True, True), (k, texts[k])
        assert tok.decode_bytes(ids, skip_special_tokens=True) == ref.detokenize(ids, False, False), (k, texts[k])
    for k, ids in enumerate(tok.encode_ordinary_batch(texts)):
        assert ids == ref.tokenize(texts[k], False, False), (k, texts[k])
    overlap = "x>>TITLE<<|endoftext|>y"
    assert tok.encode(overlap, add_special_tokens=False) != ref.tokenize(overlap, False, True)


def test_written_gguf_loads_in_llama_cpp(tmp_path):
    corpus = " ".join(hostile_texts(5, 300)) + " hello world, it's 2024!\n" * 50
    tok = Tokenizer.train(corpus, num_merges=400, pattern="gpt2", special_tokens=["<|endoftext|>"])
    path = str(tmp_path / "trained.gguf")
    tok.save(path, format="gguf")
    ref = LlamaVocab(path)
    loaded = Tokenizer.load(path)
    for text in hostile_texts(6, 2000, ["<|endoftext|>"]):
        assert ref.tokenize(text, False, True) == tok.encode(text, allowed_special="all"), text
        assert ref.tokenize(text, False, False) == tok.encode_ordinary(text), text
        assert loaded.encode(text, add_special_tokens=False) == ref.tokenize(text, False, True), text
