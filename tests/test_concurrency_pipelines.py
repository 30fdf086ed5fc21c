"""One tokenizer shared by 8 threads, for every pipeline kind (issue 17,
item 5): each thread encodes, decodes and counts every text (in its own
order, single texts and batches), and every result must equal the one a
single thread got before, on every text.

Kinds, from real published files (scripts/get_tokenizers.py, pinned
sha256; mistral_common's own data files):

- Hugging Face ``tokenizer.json`` pipelines: Llama 3 (Split + ByteLevel),
  DeepSeek V3 (three Splits), Qwen2 (NFC normalizer), Mistral v1 in the
  legacy layout (Prepend + Replace normalizers, byte fallback) and v3 in the
  Metaspace layout (Metaspace pre-tokenizer, byte fallback);
- a SentencePiece ``.model`` (Mistral v1) through bytepair's own pipeline
  description of it (``formats.sentencepiece.to_hf_json``), and a model with
  a precompiled ``nmt_nfkc`` charsmap (trained here by ``sentencepiece``);
- ``tekken.json`` (mistral_common's tekken_240911.json);
- Claude's ``tokenizer.json`` (NFKC normalizer, ByteLevel without regex), GPT-NeoX/OLMo's (NFC, ByteLevel with
  its regex, offsets trimmed by the ByteLevel post-processor) and Tortoise TTS's (Whitespace pre-tokenizer, unk
  token, char-level BPE without byte fallback).
"""

from __future__ import annotations

import io
import json
import pathlib
import random
import threading
from typing import Any, Dict, List, Tuple

import pytest

from bytepair import Tokenizer
from bytepair.formats.sentencepiece import parse_model, read_model, to_hf_json
from bytepair.pipeline import from_hf_json

ROOT = pathlib.Path(__file__).resolve().parents[1]
MISTRAL_DATA = pathlib.Path(__import__("mistral_common").__file__).parent / "data"
THREADS = 8
EDGE = ["", " ", "  leading and trailing  ", "Hello world! 12345 1234567", "don't I'll WE'VE", "\t\ttabs\r\n\n",
        "日本語のテキスト", "ﬁ ① Ⅸ Ｆｕｌｌ", "e\u0301 café", "<s>hi</s>", "<|begin_of_text|>x<|end_of_text|>",
        "emoji 🤗🏳️‍🌈", "\u2581 already", "a\u00a0b\u3000c", "x" * 300, "🤗" * 40, "\x00\x01 控制"]


NAMES = ["llama3", "deepseek-v3", "mistral-v1-legacy", "mistral-v3-metaspace", "qwen2", "claude", "gpt-neox-olmo",
         "tortoise"]


@pytest.fixture(scope="module")
def kinds(published_tokenizers) -> Dict[str, Tokenizer]:
    out: Dict[str, Tokenizer] = {name: Tokenizer.load(published_tokenizers[name]) for name in NAMES}
    out["sentencepiece-model"] = from_hf_json(json.dumps(to_hf_json(read_model(str(MISTRAL_DATA / "tokenizer.model.v1")))))
    import sentencepiece as spm

    model = io.BytesIO()
    corpus = [line for line in (ROOT / "tests" / "data" / "multilingual.txt").read_text("utf-8").splitlines() if line]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus * 3), model_writer=model, vocab_size=2000,
                                   model_type="bpe", byte_fallback=True, normalization_rule_name="nmt_nfkc",
                                   character_coverage=0.995, minloglevel=3, num_threads=1)
    sp = parse_model(model.getvalue(), "nfkc.model")
    assert sp.precompiled_charsmap  # the Precompiled normalizer is there
    out["sentencepiece-nfkc-charsmap"] = from_hf_json(json.dumps(to_hf_json(sp)))
    out["tekken"] = Tokenizer.load(str(MISTRAL_DATA / "tekken_240911.json"))
    for name, tok in out.items():
        assert tok.model == ("byte" if name == "tekken" else "pipeline"), (name, tok.model)
    return out


@pytest.fixture(scope="module")
def texts(real_texts) -> List[str]:
    lines = [line for doc in real_texts for line in doc.splitlines(keepends=True)]
    rng = random.Random(5)
    return rng.sample(lines, min(300, len(lines))) + EDGE + [real_texts[0][:4000]]


Result = Tuple[Any, ...]


def results(tok: Tokenizer, text: str) -> Result:
    """What one text gives: ids (text only; for pipelines also with the
    post-processor's specials), the decoded ids, the count."""
    ids = tok.encode_ordinary(text)
    extra = tok.encode(text, add_special_tokens=True) if tok.model == "pipeline" else None
    return ids, tok.decode(ids), tok.count(text), extra


KINDS = ["llama3", "deepseek-v3", "qwen2", "mistral-v1-legacy", "mistral-v3-metaspace", "sentencepiece-model",
         "sentencepiece-nfkc-charsmap", "tekken", "claude", "gpt-neox-olmo", "tortoise"]


@pytest.mark.parametrize("kind", KINDS)
def test_eight_threads_equal_one(kinds, texts, kind):
    tok = kinds[kind]
    expected = [results(tok, t) for t in texts]  # one thread, before any other
    expected_batch = tok.encode_ordinary_batch(texts)
    assert expected_batch == [e[0] for e in expected]
    expected_counts = tok.count_batch(texts)
    assert expected_counts == [e[2] for e in expected]
    start = threading.Barrier(THREADS)
    mismatches: List[str] = []
    errors: List[BaseException] = []

    def work(seed: int) -> None:
        try:
            order = list(range(len(texts)))
            random.Random(seed).shuffle(order)
            start.wait(timeout=60)
            for k in order:
                got = results(tok, texts[k])
                if got != expected[k]:
                    mismatches.append(f"thread {seed}, text {k} {texts[k][:40]!r}")
            chunk = [texts[k] for k in order[:64]]
            if tok.encode_ordinary_batch(chunk) != [expected[k][0] for k in order[:64]]:
                mismatches.append(f"thread {seed}: encode_ordinary_batch")
            if tok.count_batch(chunk) != [expected[k][2] for k in order[:64]]:
                mismatches.append(f"thread {seed}: count_batch")
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    assert not errors, repr(errors[0])
    assert not mismatches, mismatches[:5]
