"""Long pieces (2 to 6 merge windows, one pre-token each) encoded by the core
== by the owning library (tiktoken, Hugging Face tokenizers, sentencepiece)
or the pure-Python reference (the char model).

Pieces of 2 * 16384 symbols or more are merged a window at a time
(src/model/window.rs); the texts are the adversarial ones where merges
cascade across window ends: one letter repeated, short units repeated (with
an odd letter now and then), random letters over two or three letters, runs
of one CJK character. Every text is seeded, so a failure names its case.
"""

from __future__ import annotations

import json
import os
import random

import pytest

from bytepair import PRESETS, Tokenizer
from bytepair import reference as ref

WINDOW = 16384  # src/model/window.rs


def long_texts(seed: int, count: int, low: int = 2 * WINDOW + 100, high: int = 5 * WINDOW):
    """``count`` adversarial one-piece texts of ``low`` to ``high`` characters, as (name, text)."""
    rng = random.Random(seed)
    out = []
    for k in range(count):
        n = rng.randrange(low, high)
        kind = k % 6
        if kind == 0:
            text = rng.choice("ab7") * n
        elif kind == 1:
            unit = "".join(rng.choice("abc") for _ in range(rng.randrange(2, 6)))
            text = (unit * (n // len(unit) + 1))[:n]
        elif kind == 2:
            unit = rng.choice(["ab", "aab", "abb", "aaab"])
            chars = list((unit * (n // len(unit) + 1))[:n])
            for _ in range(n // 1000):
                chars[rng.randrange(n)] = rng.choice("abcxyz")
            text = "".join(chars)
        elif kind == 3:
            text = "".join(rng.choice("ab") for _ in range(n))
        elif kind == 4:
            text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
        else:
            text = rng.choice("\u4e2d\u6587\u3042") * (n // 3)
        out.append((f"seed {seed}, text {k} ({kind}, {len(text)} chars)", text))
    return out


def _first_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"first difference at id {i}: {g} != {w} (of {len(got)} / {len(want)} ids)"
    return f"lengths {len(got)} != {len(want)}"


@pytest.mark.slow
@pytest.mark.parametrize("name,preset", [("cl100k_base.tiktoken", "cl100k"), ("o200k_base.tiktoken", "o200k")])
def test_byte_model_long_pieces_equal_tiktoken(vocab_paths, name, preset):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    # o200k_base comes with the published files (scripts/get_published.py), next to cl100k_base
    path = os.path.join(os.path.dirname(vocab_paths["cl100k_base.tiktoken"]), name)
    if not os.path.exists(path):
        pytest.skip(f"{name} is not fetched here")
    tok = Tokenizer.from_tiktoken(path, pattern=preset)
    enc = tiktoken.Encoding(preset, pat_str=PRESETS[preset], mergeable_ranks=load_tiktoken_bpe(path), special_tokens={})
    # tiktoken merges a piece in quadratic time: pieces of 2 to 2.5 windows
    for case, text in long_texts(1, 6, high=2 * WINDOW + WINDOW // 2):
        got, want = tok.encode_ordinary(text), enc.encode_ordinary(text)
        assert got == want, f"{case}: {_first_difference(got, want)}"


@pytest.mark.parametrize("name", ["llama3", "deepseek-v3", "qwen2", "mistral-v1-legacy"])
def test_pipeline_long_pieces_equal_hf(published_tokenizers, name):
    tokenizers = pytest.importorskip("tokenizers")
    path = published_tokenizers[name]
    tok, hf = Tokenizer.load(path), tokenizers.Tokenizer.from_file(path)
    for case, text in long_texts(2, 6):
        got, want = tok.encode(text), hf.encode(text, add_special_tokens=False).ids
        assert got == want, f"{name}, {case}: {_first_difference(got, want)}"


def test_sentencepiece_long_pieces_equal_sentencepiece(published_tokenizers):
    spm = pytest.importorskip("sentencepiece")
    path = published_tokenizers["raw"]["mistral/tokenizer.model.v1"]
    tok, sp = Tokenizer.load(path), spm.SentencePieceProcessor(model_file=path)
    for case, text in long_texts(3, 6):
        got, want = tok.encode(text), sp.encode(text)
        assert got == want, f"{case}: {_first_difference(got, want)}"


@pytest.mark.parametrize("end_of_word", [None, "</w>"])
def test_char_model_long_words_equal_reference(end_of_word):
    # a char model trained on text over the texts' letters; the reference
    # applies its merges one by one over the whole word (40 scans of it)
    rng = random.Random(4)
    corpus = [" ".join("".join(rng.choice("aabbc") for _ in range(rng.randrange(1, 9))) for _ in range(200))
              for _ in range(5)] + ["abababab aaaa abcabc \u4e2d\u4e2d\u4e2d\u6587\u3042"]
    settings = dict(model="char", num_merges=40, end_of_word=end_of_word)
    r = ref.train(corpus, **settings)
    c = Tokenizer.train(corpus, **settings)
    assert json.dumps(c.merges) == json.dumps(r.merges)
    for case, text in long_texts(5, 6):
        text = "".join(ch for ch in text if ch in "abc\u4e2d\u6587\u3042") or "ab" * WINDOW
        got, want = c.encode_ordinary(text), r.encode_ordinary(text)
        assert got == want, f"{case}: {_first_difference(got, want)}"
