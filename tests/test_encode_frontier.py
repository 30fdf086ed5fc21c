"""The fast encoding routes against tiktoken on the real cl100k_base: the
piece cache (any size, warm or cold, gives the ids tiktoken gives), batches
split by bytes, ``count``/``count_batch``, ``encode_to_numpy``,
``encode_batch_to_numpy`` and ``decode`` of numpy arrays.

The reference is tiktoken's own Encoding built by ``tiktoken_ext`` (as in
test_conformance_tiktoken.py), so it shares nothing with bytepair.
"""

from __future__ import annotations

import os
import random
import sys
import threading

import numpy as np
import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import DisallowedSpecialError, Tokenizer, UnknownTokenError
from bytepair.formats import tiktoken as tt

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = int(os.environ.get("BYTEPAIR_CONFORMANCE_EXAMPLES", "250"))


@pytest.fixture(scope="module")
def cl100k(vocab_paths):
    path = vocab_paths["cl100k_base.tiktoken"]
    real = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda url, expected_hash=None: tiktoken.load.load_tiktoken_bpe(path, expected_hash)
    try:
        enc = tiktoken.Encoding(**openai_public.cl100k_base())
    finally:
        openai_public.load_tiktoken_bpe = real
    return Tokenizer.from_tiktoken(path), enc


@pytest.fixture(scope="module")
def lines():
    with open(os.path.join(HERE, "data", "multilingual.txt"), encoding="utf-8") as fh:
        return fh.read().splitlines(keepends=True)


@pytest.fixture
def cache_size():
    """Restores the default cache size after a test changes it."""
    yield
    bytepair.set_cache_size(bytepair.arrays.DEFAULT_CACHE_BYTES)


def _noisy(lines, seed, n):
    """Lines with random words spliced in: pieces seen once, many evictions."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        line = rng.choice(lines)
        words = line.split(" ")
        rng.shuffle(words)
        extra = "".join(rng.choice("abcxyzéж中😀 0123") for _ in range(rng.randrange(20)))
        out.append(" ".join(words) + extra)
    return out


@pytest.mark.parametrize("size", [0, 128, 4096, 1 << 16, 4 << 20])
def test_every_cache_size_gives_tiktokens_ids_cold_and_warm(cl100k, lines, cache_size, size):
    tok, enc = cl100k
    assert bytepair.set_cache_size(size) == (size // 64 if size >= 128 else 0) * 64
    texts = lines + _noisy(lines, size, 600)
    want = [enc.encode_ordinary(t) for t in texts]
    bytepair.clear_cache()
    assert [tok.encode_ordinary(t) for t in texts] == want  # cold, then filling
    assert [tok.encode_ordinary(t) for t in texts] == want  # warm (and evicting, when small)
    assert tok.encode_ordinary_batch(texts) == want  # other threads' caches
    info = bytepair.cache_info()
    assert info["size"] == bytepair.set_cache_size(size)
    if size >= 4096:
        assert info["hits"] > 0


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.text(alphabet="ab c\n1é中😀'!", max_size=30), min_size=1, max_size=12), st.sampled_from([128, 1024, 1 << 20]))
def test_cached_and_uncached_encodings_agree(cl100k, texts, size):
    tok, enc = cl100k
    try:
        bytepair.set_cache_size(0)
        uncached = [tok.encode_ordinary(t) for t in texts]
        bytepair.set_cache_size(size)
        first = [tok.encode_ordinary(t) for t in texts]
        again = [tok.encode_ordinary(t) for t in reversed(texts)][::-1]
    finally:
        bytepair.set_cache_size(bytepair.arrays.DEFAULT_CACHE_BYTES)
    assert uncached == first == again == [enc.encode_ordinary(t) for t in texts]


def test_two_vocabularies_share_a_threads_cache(cl100k, vocab_paths, lines):
    tok, enc = cl100k
    gpt2 = Tokenizer.load(vocab_paths["gpt2.tiktoken"], format="tiktoken")
    for line in lines[:200]:
        assert tok.encode_ordinary(line) == enc.encode_ordinary(line)
        g = gpt2.encode_ordinary(line)
        assert gpt2.decode(g) == line
        assert tok.encode_ordinary(line) == enc.encode_ordinary(line)


def test_batches_of_short_and_long_documents(cl100k, lines):
    tok, enc = cl100k
    short = [line[:50] for line in lines] * 20  # thousands of 50-byte documents
    mixed = short[:500] + ["".join(lines)] + short[500:900] + [""] * 10
    for texts in (short, mixed):
        want = enc.encode_ordinary_batch(texts)
        assert tok.encode_ordinary_batch(texts) == want
        assert tok.encode_batch(texts) == enc.encode_batch(texts)
        assert tok.count_batch(texts) == [len(w) for w in want]
        ids, offsets = tok.encode_batch_to_numpy(texts)
        assert offsets.dtype == np.uint64 and len(offsets) == len(texts) + 1 and offsets[0] == 0
        assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == want


def test_a_big_batch_holds_one_reference_per_id_and_gives_them_back(cl100k, lines):
    """A batch of many ids has its lists filled on every thread, each id's references taken afterwards (in
    one place): every list item is a reference of its own, and dropping the lists gives each one back."""
    tok, enc = cl100k
    texts = lines * 40
    first = tok.encode_batch(texts)
    assert first == enc.encode_batch(texts) and sum(map(len, first)) >= 1 << 16
    counts = {}
    for doc in first:
        for x in doc:
            counts[x] = counts.get(x, 0) + 1
    probe = next(doc[i] for doc in first for i in range(len(doc)) if doc[i] >= 256 and counts[doc[i]] > 100)
    before = sys.getrefcount(probe)
    second = tok.encode_batch(texts)
    assert all(x is probe for doc in second for x in doc if x == probe)  # the tokenizer's own int, shared
    assert sys.getrefcount(probe) == before + counts[probe]
    del second
    assert sys.getrefcount(probe) == before


def test_count(cl100k, lines):
    tok, enc = cl100k
    for line in lines[:300] + ["", "<|endoftext|> x", "\ud800 lone surrogate"]:
        assert tok.count(line) == len(enc.encode_ordinary(line))


def test_batch_errors_name_the_first_bad_document(cl100k, lines):
    tok, enc = cl100k
    texts = [line[:50] for line in lines] * (4000 // len(lines) + 1)
    texts[3001] = "hello <|endoftext|>"
    with pytest.raises(DisallowedSpecialError) as ours:
        tok.encode_batch(texts)
    with pytest.raises(ValueError) as theirs:
        enc.encode_batch(texts)
    assert "<|endoftext|>" in str(ours.value) and "<|endoftext|>" in str(theirs.value)
    with pytest.raises(DisallowedSpecialError):
        tok.encode_batch_to_numpy(texts)
    assert tok.encode_batch(texts, allowed_special="all") == enc.encode_batch(texts, allowed_special="all")


def test_encode_to_numpy_is_tiktokens(cl100k, lines):
    tok, enc = cl100k
    for text in lines[:100] + ["", "a<|endoftext|>b<|fim_prefix|>"]:
        for kw in ({"disallowed_special": ()}, {"allowed_special": "all"}, {"allowed_special": {"<|endoftext|>"}, "disallowed_special": ()}):
            ours, theirs = tok.encode_to_numpy(text, **kw), enc.encode_to_numpy(text, **kw)
            assert ours.dtype == theirs.dtype == np.uint32
            assert ours.tolist() == theirs.tolist()
            assert ours.flags.writeable == theirs.flags.writeable
    for kw in ({}, {"allowed_special": {"<|fim_prefix|>"}}):
        with pytest.raises(ValueError):
            enc.encode_to_numpy("a<|endoftext|>", **kw)
        with pytest.raises(DisallowedSpecialError):
            tok.encode_to_numpy("a<|endoftext|>", **kw)


def test_encode_batch_to_numpy_is_tiktokens_batch(cl100k, lines):
    tok, enc = cl100k
    texts = lines[:400]
    want = enc.encode_batch(texts, allowed_special="all")
    ids, offsets = tok.encode_batch_to_numpy(texts, allowed_special="all")
    assert ids.dtype == np.uint32
    assert np.array_equal(ids, np.concatenate([enc.encode_to_numpy(t, allowed_special="all") for t in texts]))
    assert offsets.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()
    empty_ids, empty_offsets = tok.encode_batch_to_numpy([])
    assert empty_ids.size == 0 and empty_offsets.tolist() == [0]


def test_decode_accepts_numpy_arrays(cl100k, lines):
    tok, enc = cl100k
    text = "".join(lines[:50])
    ids = enc.encode(text)
    for dtype in (np.uint32, np.int64, np.int32, np.uint64):
        arr = np.array(ids, dtype=dtype)
        assert tok.decode(arr) == enc.decode(ids) == text
        assert tok.decode_bytes(arr[::2]) == enc.decode_bytes(ids[::2])  # strided
    small = np.array([40, 1097], dtype=np.uint16)
    assert tok.decode(small) == enc.decode([40, 1097])
    assert tok.decode(np.array([], dtype=np.int64)) == ""
    for bad in (np.array([1, -1]), np.array([1, 2**40]), np.array([1, tok.n_vocab + 5]), np.array([1.0, 2.0])):
        with pytest.raises(UnknownTokenError):
            tok.decode(bad)


def test_threads_sharing_one_tokenizer_keep_their_caches_apart(cl100k, lines):
    tok, enc = cl100k
    texts = _noisy(lines, 7, 400)
    want = [enc.encode_ordinary(t) for t in texts]
    errors = []

    def work(k):
        order = texts[k::3] + texts[:k]
        for t in order:
            if tok.encode_ordinary(t) != enc.encode_ordinary(t):
                errors.append(t)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [tok.encode_ordinary(t) for t in texts] == want


def test_cache_size_is_checked():
    for bad in (-1, 1.5, "4MB", True):
        with pytest.raises(ValueError):
            bytepair.set_cache_size(bad)


def test_encode_batch_to_numpy_with_no_special_rules_is_ordinary(cl100k, lines):
    # nothing allowed, nothing disallowed: special-token text is plain text (the core's ordinary route)
    tok, enc = cl100k
    texts = lines[:300] + ["a<|endoftext|>b<|fim_prefix|>", "", "<|endofprompt|>"]
    ids, offsets = tok.encode_batch_to_numpy(texts, disallowed_special=())
    want = enc.encode_ordinary_batch(texts)
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == want
    assert tok.encode_to_numpy(texts[-3], disallowed_special=()).tolist() == enc.encode_ordinary(texts[-3])


def test_word_maps_are_bounded_cleared_and_reported(published_tokenizers, lines, cache_size):
    """SentencePiece's word map (one map with the pipeline BPE's) holds at most the per-thread budget,
    is emptied by clear_cache() and by a new budget, and its bytes are in cache_info(); ids never depend
    on it (sentencepiece is the oracle). Run on a new thread, whose map starts empty and goes with it."""
    import sentencepiece

    path = published_tokenizers["raw"]["mistral/tokenizer.model.v1"]
    tok = Tokenizer.load(path)
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    texts = [t for t in lines if t.strip()][:300]
    want = [sp.encode(t) for t in texts]
    budget = 1 << 14  # the word maps get four times this
    seen = {}

    def held():
        return bytepair.cache_info()["word_maps"]

    def work():
        bytepair.set_cache_size(budget)
        seen["map_budget"] = bytepair.cache_info()["word_map_size"]
        base = held()  # other threads' maps (untouched while this runs)
        seen["ids"] = [tok.encode(t, add_special_tokens=False) for t in texts]
        seen["full"] = held() - base
        seen["again"] = [tok.encode(t, add_special_tokens=False) for t in texts]
        bytepair.clear_cache()
        tok.encode("a b", add_special_tokens=False)
        seen["cleared"] = held() - base
        bytepair.set_cache_size(0)
        seen["off_ids"] = [tok.encode(t, add_special_tokens=False) for t in texts[:50]]
        seen["off"] = held() - base
        seen["base"] = base

    before = held()
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen["ids"] == seen["again"] == want
    assert seen["off_ids"] == want[:50]
    assert seen["map_budget"] == 4 * budget
    assert 0 < seen["full"] <= 4 * budget  # the texts' words overflow the budget: emptied when full
    assert 0 < seen["cleared"] < 1000 < seen["full"]  # emptied, then the words of "a b"
    assert seen["off"] == 0  # no budget: nothing kept (and a new budget emptied the map)
    assert held() == before  # the thread's map went with it
