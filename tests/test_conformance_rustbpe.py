"""Training parity with rustbpe (karpathy/rustbpe, on PyPI): with
``tie_break="pair-id"``, the same pattern and the same vocabulary size,
bytepair learns exactly rustbpe's mergeable ranks, on real text."""

from __future__ import annotations

import pytest
import rustbpe

from bytepair import PRESETS, Tokenizer


def _rustbpe_ranks(docs, vocab_size, pattern):
    r = rustbpe.Tokenizer()
    r.train_from_iterator(iter(docs), vocab_size, pattern=pattern)
    assert r.get_pattern() == pattern
    return {bytes(b): i for b, i in r.get_mergeable_ranks()}


def _bytepair_ranks(docs, vocab_size, pattern):
    tok = Tokenizer.train(docs, vocab_size=vocab_size, pattern=pattern, tie_break="pair-id")
    return {b: i for i, b in tok.vocab().items()}


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
@pytest.mark.parametrize("vocab_size", [300, 1200])
def test_ranks_equal_on_real_text(real_texts, name, vocab_size):
    pattern = PRESETS[name]
    docs = real_texts[:300]
    expected = _rustbpe_ranks(docs, vocab_size, pattern)
    assert len(expected) == vocab_size
    assert _bytepair_ranks(docs, vocab_size, pattern) == expected


def test_ranks_equal_large_vocabulary(real_texts):
    """All the real text, 8000 tokens: long merge chains and many ties."""
    expected = _rustbpe_ranks(real_texts, 8000, PRESETS["cl100k"])
    assert _bytepair_ranks(real_texts, 8000, PRESETS["cl100k"]) == expected


def test_ranks_equal_multilingual_only(real_texts):
    """The multilingual sample alone: multi-byte characters, few repeats, ties everywhere."""
    docs = real_texts[:1]
    expected = _rustbpe_ranks(docs, 600, PRESETS["cl100k"])
    assert _bytepair_ranks(docs, 600, PRESETS["cl100k"]) == expected


def test_default_rule_is_not_pair_id(real_texts):
    """The check above is not vacuous: the default "first" rule breaks ties
    differently and learns other ranks on the same text."""
    docs = real_texts[:1]
    first = Tokenizer.train(docs, vocab_size=600, pattern="cl100k")
    assert {b: i for i, b in first.vocab().items()} != _rustbpe_ranks(docs, 600, PRESETS["cl100k"])
