"""The string-free route of byte-level pipelines (src/pipeline/fast.rs: one
regex split or several, then bytes looked up in the per-thread piece cache) against
Hugging Face ``tokenizers`` on published tokenizer.json files: cold, warm
(every text encoded twice, so the second pass is all cache hits), with a
tiny cache (evictions on every text), in batches, and next to the offsets
route (which does not take it)."""

from __future__ import annotations

import importlib.util
import itertools
import json
import pathlib

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core
from bytepair.formats.convert import BYTE_TO_UNICODE, UNICODE_TO_BYTE
from bytepair.pipeline import from_hf_json

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
def deepseek(paths):
    return bytepair.Tokenizer.load(paths["deepseek-v3"]), tokenizers.Tokenizer.from_file(paths["deepseek-v3"])


@pytest.fixture(scope="module")
def texts(real_texts):
    lines = [line for doc in real_texts[:3] for line in doc.splitlines(keepends=True)]
    return lines[:600] + EDGE + [real_texts[0][:8000]]


@pytest.fixture(scope="module")
def with_hf_ids(paths, texts):
    """``with_hf_ids(name)``: bytepair's and HF's tokenizers of ``paths[name]`` and HF's ids of ``texts``,
    loaded and computed once for both cache sizes (the same files, the same oracle)."""
    done = {}

    def get(name):
        if name not in done:
            theirs = tokenizers.Tokenizer.from_file(paths[name])
            done[name] = (bytepair.Tokenizer.load(paths[name]), theirs,
                          [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)])
        return done[name]
    return get


@pytest.mark.parametrize("name", ["llama3", "deepseek-v3", "bytelevel-regex", "split-sequence", "nfc", "nfkc-sequence"])
@pytest.mark.parametrize("cache_bytes", [4 << 20, 256])
def test_fast_route_gives_hfs_ids_cold_and_warm(with_hf_ids, texts, name, cache_bytes):
    tok, theirs, want = with_hf_ids(name)
    old = _core.cache_info()[0]
    _core.set_cache_bytes(cache_bytes)
    try:
        _core.clear_caches()
        for _ in range(2):  # cold, then warm
            assert [tok.encode(t, add_special_tokens=False) for t in texts] == want
        assert tok.encode_batch(texts, add_special_tokens=False) == want
        # the offsets route (no fast path) agrees with the same cache in place
        ids, spans = tok.encode_with_offsets(texts[-1], add_special_tokens=False)
        e = theirs.encode(texts[-1], add_special_tokens=False)
        assert ids == e.ids and spans == e.offsets
    finally:
        _core.set_cache_bytes(old)


@pytest.mark.parametrize("name", ["llama3", "deepseek-v3", "nfc"])
def test_numpy_routes_give_hfs_ids(paths, texts, name):
    """``encode_to_numpy`` and ``encode_batch_to_numpy`` of a pipeline are
    filled by the core (no list between) and hold HF's ids, with and
    without the post-processor's tokens."""
    tok = bytepair.Tokenizer.load(paths[name])
    theirs = tokenizers.Tokenizer.from_file(paths[name])
    some = texts[:200] + EDGE
    for add in (False, True):
        want = [e.ids for e in theirs.encode_batch(some, add_special_tokens=add)]
        assert [tok.encode_to_numpy(t, add_special_tokens=add).tolist() for t in some[:50]] == want[:50]
        ids, offsets = tok.encode_batch_to_numpy(some, add_special_tokens=add)
        assert offsets.tolist() == list(itertools.accumulate(map(len, want), initial=0))
        assert ids.tolist() == [i for w in want for i in w]


def test_numpy_routes_of_a_byte_configuration_pipeline(texts):
    """A pipeline that is a byte-model configuration (a trained byte model's own
    description) fills its arrays with HF's ids."""
    tok = bytepair.Tokenizer.train("\n".join(texts[:300]), num_merges=300, pattern="gpt2")
    text = json.dumps(tok.as_pipeline().description, ensure_ascii=False)
    pipe, theirs = from_hf_json(text), tokenizers.Tokenizer.from_str(text)
    assert pipe._byte_spec is not None
    want = [e.ids for e in theirs.encode_batch(texts[:100], add_special_tokens=False)]
    assert [pipe.encode_to_numpy(t).tolist() for t in texts[:100]] == want
    ids, offsets = pipe.encode_batch_to_numpy(texts[:100])
    assert ids.tolist() == [i for w in want for i in w] and offsets[-1] == len(ids)


# characters of every class DeepSeek V3's three splits tell apart (src/pretok/lexer_deepseek.rs), and runs of them
_DEEPSEEK_PARTS = list("aZé\u0301\u30991٣²½Ⅻ.,'(-!$+^`~日本ア・ー゛ぁ\u3040 \t\n\r\u00a0\u3000\u0085\u200d\u0000🤗𝐀") + [
    "12345", "1234567", " word", "'s", ".com", " (.x", "日本語", "カタカナー", "  ", "\r\n", " \n\n", "!!\n", "ab\u0301c"]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(st.lists(st.sampled_from(_DEEPSEEK_PARTS), max_size=16).map("".join), min_size=1, max_size=8))
def test_deepseeks_lexed_splits_give_hfs_ids_on_generated_text(deepseek, texts):
    tok, theirs = deepseek
    for text in texts:
        assert tok.encode(text) == theirs.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("name", ["llama3", "deepseek-v3"])
def test_one_long_text_cut_for_the_threads_gives_hfs_ids(lexed_pairs, real_texts, name):
    # 160 KiB and more: cut at a newline before a letter and the parts encoded in parallel
    tok, theirs = lexed_pairs[name]
    text = "".join(real_texts)
    assert len(text) >= 160 << 10
    assert tok.encode(text, add_special_tokens=False) == theirs.encode(text, add_special_tokens=False).ids
    assert tok.count(text) == len(theirs.encode(text, add_special_tokens=False).ids)


# runs of every ASCII class that the 64-byte masks of src/pretok/lexer_bits.rs tell apart (and of the characters
# they leave to each preset's step), a few characters each: word starts at every offset of a block
_CLASS_RUNS = ["abzq", "ABZQ", "sStT", " ", "\t\x0b\x0c", "\r\n", ".,!-_(~$^`", "/", "0123456789", "\x00\x1f\x7f", "'",
               "é\xa0日本"]


@pytest.fixture(scope="module")
def lexed_pairs(paths):
    """bytepair's and HF's tokenizers of the three shapes whose splits run on the masks."""
    return {name: (bytepair.Tokenizer.load(paths[name]), tokenizers.Tokenizer.from_file(paths[name]))
            for name in ["llama3", "deepseek-v3", "bytelevel-regex"]}


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.tuples(st.sampled_from(_CLASS_RUNS), st.integers(1, 12), st.randoms(use_true_random=False)),
                      max_size=60),
       name=st.sampled_from(["llama3", "deepseek-v3", "bytelevel-regex"]))
def test_runs_of_every_ascii_class_give_hfs_ids(lexed_pairs, parts, name):
    text = "".join("".join(r.choice(c) for _ in range(n)) for c, n, r in parts)
    tok, theirs = lexed_pairs[name]
    assert tok.encode(text, add_special_tokens=False) == theirs.encode(text, add_special_tokens=False).ids, text


# ---------------------------------------------------------------- generated byte-level models
# The route's tables on raw bytes (src/model/bpe.rs `RawBytes`) against HF on models built at random: merges
# in any order (a merge may use a token that a later merge makes), two merges making the same token (as in
# Llama 3's file), ignore_merges both ways, pieces longer than the piece cache's and the stack loop's limits,
# bytes without a token.

_PIECE_TEXTS = st.text(alphabet="aab c\u00e9\u65e5!\n", max_size=120)
_SPLITS = [r"'s|\p{L}+| ?[^\s\p{L}]+|\s+",
           r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), n_merges=st.integers(0, 60), ignore_merges=st.booleans(), split=st.sampled_from(_SPLITS),
       cache_bytes=st.sampled_from([4 << 20, 256, 0]))
def test_generated_byte_level_models_equal_hf(data, n_merges, ignore_merges, split, cache_bytes):
    # sometimes a second split of any behavior (a GGUF file cuts before a character whose byte is missing with
    # MergedWithNext): the fast route runs it too
    later = data.draw(st.one_of(st.none(), st.tuples(
        st.sampled_from(["b", "[\u00e9!]", r"\s", "ab"]),
        st.sampled_from(["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]),
        st.booleans())))
    assert set(BYTE_TO_UNICODE.values()) == set(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    # the bytes of the texts' characters first, so that merges among them occur
    common = sorted({b for ch in "ab c\u00e9\u65e5!" for b in ch.encode()})
    ids = data.draw(st.permutations(range(256)))
    # bytes whose character has no token (GPT-NeoX lacks 0xC0, 0xC1, 0xF5-0xFF): HF drops such a character;
    # the route sends a piece holding one to the mapped-character one. Each hole also gets a whole token
    # holding it (its text's character and "b"), which no merge makes.
    holes = data.draw(st.sets(st.sampled_from(common), max_size=2)) | {0xC0, 0xF5}
    vocab = {BYTE_TO_UNICODE[b]: ids[b] for b in range(256) if b not in holes}
    tokens = [BYTE_TO_UNICODE[b] for b in common if b not in holes]
    hole_texts = [ch + "b" for ch in "ab c\u00e9\u65e5!" if holes & set(ch.encode())]
    for t in hole_texts:
        vocab["".join(BYTE_TO_UNICODE[b] for b in t.encode())] = max(vocab.values()) + 1
    merges = []
    for _ in range(n_merges):
        left, right = data.draw(st.sampled_from(tokens)), data.draw(st.sampled_from(tokens))
        merges.append((left, right))
        made = left + right
        if made not in vocab:
            vocab[made] = max(vocab.values()) + 1
            tokens.append(made)
    if merges and data.draw(st.booleans()):  # a merge moved earlier than the merges making its parts
        merges.insert(0, merges.pop())
    # duplicates of a pair are dropped (HF keeps the last: not what this test is about)
    merges = list(dict.fromkeys(merges))
    description = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": split}, "behavior": "Isolated", "invert": False},
            *([] if later is None else
              [{"type": "Split", "pattern": {"Regex": later[0]}, "behavior": later[1], "invert": later[2]}]),
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                            "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": vocab, "merges": [list(m) for m in merges]}}
    text = json.dumps(description, ensure_ascii=False)
    theirs = tokenizers.Tokenizer.from_str(text)
    tok = from_hf_json(text)
    probes = data.draw(st.lists(_PIECE_TEXTS, min_size=1, max_size=6))
    probes.append("".join(data.draw(st.sampled_from(["ab", "a", "b", "\u00e9", "!"])) for _ in range(90)))
    probes += hole_texts
    # the made tokens' own text: whole-word lookups (ignore_merges) against what the merges reach
    for token in tokens[len(common):]:
        try:
            probes.append(bytes(UNICODE_TO_BYTE[c] for c in token).decode("utf-8"))
        except UnicodeDecodeError:
            pass
    old = _core.cache_info()[0]
    _core.set_cache_bytes(cache_bytes)
    try:
        _core.clear_caches()
        for _ in range(2):  # cold, then warm
            for probe in probes:
                want = theirs.encode(probe, add_special_tokens=False).ids
                assert tok._core.encode(probe, None, []) == want, probe  # the pipeline engine itself
                assert tok.encode(probe) == want, probe
    finally:
        _core.set_cache_bytes(old)


# Added tokens on the string-free route (`Pipeline::encode_ids_into`: the text cut around them in place, each part
# encoded straight into the ids) against HF, with every flag of an added token, a BOS/EOS template both ways, and
# special-token text as text (`ordinary`) against the offsets route, which cuts the text the general way.
_ADDED_CONTENTS = ["<s>", "ab", " b", "\u00e9", "!\n", "c c", "<|x|>"]
# "e\u0301" is "\u00e9" once NFC composes it: such a text is cut the general way
_ADDED_TEXTS = st.lists(st.sampled_from(["a", "a", "b", " ", "c", "\u00e9", "e\u0301", "!", "\n", "<", "|", "x", ">", "s"]),
                        max_size=40).map("".join)
# the normalizers the route allows: none (Llama 3), an empty sequence (DeepSeek V3), NFC (Qwen 2)
_ROUTE_NORMALIZERS = [None, {"type": "Sequence", "normalizers": []}, {"type": "NFC"},
                      {"type": "Sequence", "normalizers": [{"type": "NFKC"}]}]


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), template=st.booleans(), normalizer=st.sampled_from(_ROUTE_NORMALIZERS))
def test_added_tokens_on_the_string_free_route_equal_hf(data, template, normalizer):
    vocab = {c: i for i, c in enumerate(sorted(BYTE_TO_UNICODE.values()))}
    merges = [("a", "b"), ("Ġ", "b"), ("c", "Ġ")]
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    contents = data.draw(st.lists(st.sampled_from(_ADDED_CONTENTS), unique=True, max_size=5))
    added = [{"id": len(vocab) + k, "content": c, "single_word": data.draw(st.booleans()),
              "lstrip": data.draw(st.booleans()), "rstrip": data.draw(st.booleans()),
              "normalized": data.draw(st.booleans()), "special": data.draw(st.booleans())}
             for k, c in enumerate(contents)]
    bos = len(vocab) + len(added)
    added.append({"id": bos, "content": "<bos>", "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True})
    post = None if not template else {
        "type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                                                 {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<bos>": {"id": "<bos>", "ids": [bos], "tokens": ["<bos>"]}}}
    description = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": normalizer,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": _SPLITS[1]}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": post, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [list(m) for m in merges]}}
    text = json.dumps(description, ensure_ascii=False)
    theirs = tokenizers.Tokenizer.from_str(text)
    tok = from_hf_json(text)
    probes = data.draw(st.lists(_ADDED_TEXTS, min_size=1, max_size=6)) + [" ".join(contents) + " ab<s>c c!\n e\u0301"]
    assert tok._core.encode("ab", None, []) == theirs.encode("ab", add_special_tokens=False).ids
    for probe in probes:
        for add in (False, True):
            want = theirs.encode(probe, add_special_tokens=add).ids
            assert tok._core.encode(probe, None, [], add) == want, (probe, add)
            assert tok._core.count(probe) == len(tok._core.encode(probe, [], []))
            assert tok._core.encode_batch([probe, probe], None, [], add) == [want, want]
            # special-token text as text: the string-free route against the offsets route
            ordinary = tok._core.encode(probe, [], [], add)
            assert ordinary == tok._core.encode_with_offsets(probe, [], [], add)[0], (probe, add)
