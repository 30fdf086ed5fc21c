"""The string-free route of byte-level pipelines (src/pipeline/fast.rs: one
regex split or several, then bytes looked up in the per-thread piece cache) against
Hugging Face ``tokenizers`` on published tokenizer.json files: cold, warm
(every text encoded twice, so the second pass is all cache hits), with a
tiny cache (evictions on every text), in batches, and next to the offsets
route (which does not take it)."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest
import tokenizers

import bytepair
from bytepair import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]
EDGE = ["", " ", "  leading and trailing  ", "Hello world! 12345 1234567", "don't I'll WE'VE", "\t\ttabs\r\n\n",
        "日本語のテキスト", "e\u0301 café", "emoji 🤗🏳️‍🌈", "a\u00a0b\u3000c", "x" * 300, "🤗" * 40,
        "<|begin_of_text|>x<|end_of_text|>", "\n  \n\n   end  ",
        # not in NFC / NFKC: decomposed accents, Hangul jamo, compatibility characters, a singleton
        "cafe\u0301 n\u0303o \u1100\u1161\u11a8", "\ufb01le \uff26\uff55\uff4c\uff4c \u2460 \u00bd \u212b x\u0327\u0301"]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("get_tokenizers", ROOT / "scripts" / "get_tokenizers.py")
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    p = g.get_tokenizers()
    llama = p["llama3/tokenizer.json"]
    # the GPT-2 shape: ByteLevel with its own regex, no Split
    d = json.loads(pathlib.Path(llama).read_text(encoding="utf-8"))
    d["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    gpt2_shape = tmp_path_factory.mktemp("fast") / "bytelevel-regex.json"
    gpt2_shape.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    # several isolated splits in a row (DeepSeek V3's shape) under an empty normalizer Sequence: each later
    # split runs on every piece of the one before, so its lookahead stops at the piece's end
    d = json.loads(pathlib.Path(llama).read_text(encoding="utf-8"))
    split = d["pre_tokenizer"]["pretokenizers"][0]
    d["normalizer"] = {"type": "Sequence", "normalizers": []}
    d["pre_tokenizer"]["pretokenizers"] = [
        {"type": "Split", "pattern": {"Regex": "[ \\t]{2,}|\\p{P}"}, "behavior": "Isolated", "invert": False},
        {"type": "Split", "pattern": {"Regex": "[0-9]{1,4}|e(?= )"}, "behavior": "Isolated", "invert": False},
        split] + d["pre_tokenizer"]["pretokenizers"][1:]
    splits = tmp_path_factory.mktemp("fast") / "split-sequence.json"
    splits.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    # Unicode normal forms in front (Qwen 2's NFC; NFKC, which also changes compatibility characters, inside a
    # Sequence): the route runs on the normalized text
    forms = {}
    for name, normalizer in (("nfc", {"type": "NFC"}),
                             ("nfkc-sequence", {"type": "Sequence", "normalizers": [{"type": "NFKC"}]})):
        d = json.loads(pathlib.Path(llama).read_text(encoding="utf-8"))
        d["normalizer"] = normalizer
        forms[name] = tmp_path_factory.mktemp("fast") / f"{name}.json"
        forms[name].write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    return {"llama3": llama, "deepseek-v3": p["deepseek/tokenizer.json"], "bytelevel-regex": str(gpt2_shape),
            "split-sequence": str(splits), **{k: str(v) for k, v in forms.items()}}


@pytest.fixture(scope="module")
def texts(real_texts):
    lines = [line for doc in real_texts[:3] for line in doc.splitlines(keepends=True)]
    return lines[:600] + EDGE + [real_texts[0][:8000]]


@pytest.mark.parametrize("name", ["llama3", "deepseek-v3", "bytelevel-regex", "split-sequence", "nfc", "nfkc-sequence"])
@pytest.mark.parametrize("cache_bytes", [4 << 20, 256])
def test_fast_route_gives_hfs_ids_cold_and_warm(paths, texts, name, cache_bytes):
    tok = bytepair.Tokenizer.load(paths[name])
    theirs = tokenizers.Tokenizer.from_file(paths[name])
    want = [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)]
    old = _core.cache_info()[0]
    _core.set_cache_bytes(cache_bytes)
    try:
        _core.clear_pipeline_caches()
        for _ in range(2):  # cold, then warm
            assert [tok.encode(t) for t in texts] == want
        assert tok.encode_batch(texts) == want
        # the offsets route (no fast path) agrees with the same cache in place
        ids, spans = tok.encode_with_offsets(texts[-1])
        e = theirs.encode(texts[-1], add_special_tokens=False)
        assert ids == e.ids and spans == e.offsets
    finally:
        _core.set_cache_bytes(old)
