"""Llama 3's and Qwen2's splits, and Hugging Face's ``ByteLevel(use_regex=True)``
regex (gpt2's, written differently), run by the core's hand-written lexers
(src/pretok/lexer.rs) give Hugging Face ``tokenizers``' ids and offsets (the oracle).

The core picks a lexer by the exact text of a Split regex (after its
Oniguruma translation), so each tokenizer is checked twice: as published
(the lexer) and with its regex written differently but meaning the same
(``(?:...)`` around it: the regex engine). Tokenizers: Llama 3's published
``tokenizer.json`` (no normalizer: ids go through the byte-level fast route,
offsets through the general one), Qwen's vocabulary in Qwen2's layout (NFC:
the general route) and without its normalizer (the fast route), and a BPE
trained across every boundary behind each split (see ``_trained``). The byte
models with the ``llama3`` / ``qwen2`` presets are checked against tiktoken
built as each family's code builds it.

Texts: hypothesis-generated mixes of whitespace runs with newlines (also at
the very end, where Llama 3's split differs from cl100k's), digit runs of
several systems, apostrophes followed by every case of the contraction
letters, non-ASCII letters, marks and numbers, punctuation and emoji; and
real documents cut into paragraphs.

``ByteLevel(use_regex=True)`` pipelines: Claude's (NFKC) and GPT-NeoX's (OLMo's
file: NFC, a ByteLevel post-processor) as published (the gpt2 lexer), and a BPE
trained with no split put behind ``ByteLevel(use_regex=True)``; each also with
the ByteLevel regex moved into a ``Split`` of ``(?:...)`` before
``ByteLevel(use_regex=False)`` (the regex engine), which HF runs the same way.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import random

import pytest
import tiktoken
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe
from tokenizers import Regex, decoders, models, pre_tokenizers, trainers

from bytepair import PRESETS, Tokenizer
from bytepair.pipeline import from_hf_json
from unicode_versions import CHANGED

# generated texts per tokenizer: the property tests' cases, 300 in a developer run, 1000 in CI (BYTEPAIR_EXAMPLES)
EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SPACES = [" ", "  ", "\t", "\n", "\n\n", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\u00a0", "\u2028", "\u3000"]
PIECES = (
    SPACES
    # apostrophes, and every case of the contraction letters (ſ folds to s)
    + ["'", "’", "'s", "'S", "'ſ", "'t", "'T", "'re", "'RE", "'rE", "'Re", "'ve", "'VE", "'vE", "'m", "'M",
       "'ll", "'LL", "'lL", "'Ll", "'d", "'D", "s", "S", "ſ", "t", "T", "l", "L", "x"]
    # digits: ASCII runs of every length up to 8, other systems, other numbers
    + ["0", "1", "12", "123", "1234", "12345678", "١٢٣", "০১", "१२३४", "²", "½", "Ⅻ", "𝟘𝟙", "①"]
    # letters, marks, punctuation, symbols
    + ["a", "Hello", " world", "Ж", "жизнь", "日本語", "é", "e\u0301", "\u093f", "\u0301", "ß", "ǅ", "Ω", "مرحبا",
       "한국어", ".", "!?", "...", "\"", "(", ")", "-", "_", "/", "#", "😀", "🤗", "👍🏽", "\u200d"]
)
# characters of the categories the patterns test, from Python's tables (older than or equal to the core's and
# Hugging Face's), without those whose class differs between Unicode versions
CHARS = st.characters(categories=["L", "M", "N", "P", "S", "Zs", "Zl", "Zp"], exclude_characters=CHANGED)
TEXT = st.tuples(
    st.lists(st.sampled_from(PIECES) | CHARS, max_size=40).map("".join),
    st.lists(st.sampled_from(SPACES), max_size=4).map("".join),
).map("".join)


def _regex_of(d: dict) -> str:
    (split,) = [p for p in d["pre_tokenizer"]["pretokenizers"] if p["type"] == "Split"]
    return split["pattern"]["Regex"]


# Hugging Face's ByteLevel(use_regex=True) regex (tokenizers' byte_level.rs)
HF_BYTE_LEVEL = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def _variant(d: dict, regex: bool, normalizer: bool) -> dict:
    # a shallow copy: the vocabulary and merges are shared, only the pre-tokenizer and normalizer are replaced
    d = dict(d)
    if regex and d["pre_tokenizer"]["type"] == "ByteLevel":
        d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "(?:" + HF_BYTE_LEVEL + ")"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    elif regex:
        d["pre_tokenizer"] = json.loads(json.dumps(d["pre_tokenizer"]))
        (split,) = [p for p in d["pre_tokenizer"]["pretokenizers"] if p["type"] == "Split"]
        split["pattern"]["Regex"] = "(?:" + split["pattern"]["Regex"] + ")"
    if not normalizer:
        d["normalizer"] = None
    return d


def _trained(pattern) -> dict:
    """A byte-level BPE trained by ``tokenizers`` on generated text with no
    split at all (so that merges cross every boundary the pattern makes:
    whitespace after a newline, digits, apostrophes), then put behind the
    Split of ``pattern`` (Isolated) + ByteLevel, as Llama 3's: every piece
    boundary shows in the ids. (The published vocabularies have no token
    that holds a newline and then other whitespace, so there the end-of-text
    rule changes pieces, never ids.)"""
    rng = random.Random(0)
    corpus = ["".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 30))) for _ in range(4000)]
    t = tokenizers.Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    t.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=1500, show_progress=False,
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if pattern is None:  # HF's own ByteLevel regex
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        t.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), "isolated"),
                                                   pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    t.decoder = decoders.ByteLevel()
    return json.loads(t.to_str())


@pytest.fixture(scope="module")
def descriptions(published_tokenizers):
    llama3 = json.load(open(published_tokenizers["llama3"], encoding="utf-8"))
    qwen2 = json.load(open(published_tokenizers["qwen2"], encoding="utf-8"))
    byte_level = {name: json.load(open(published_tokenizers[name], encoding="utf-8"))
                  for name in ("claude", "gpt-neox-olmo")}
    return {"llama3": llama3, "qwen2": qwen2, **byte_level, "trained-byte-level": _trained(None),
            "trained-llama3": _trained(PRESETS["llama3"]), "trained-qwen2": _trained(PRESETS["qwen2"])}


VARIANTS = [  # (name, base, regex engine, keep the normalizer)
    ("llama3", "llama3", False, True), ("llama3-regex", "llama3", True, True),
    ("qwen2", "qwen2", False, True), ("qwen2-regex", "qwen2", True, True),
    ("qwen2-no-nfc", "qwen2", False, False), ("qwen2-no-nfc-regex", "qwen2", True, False),
    ("trained-llama3", "trained-llama3", False, True), ("trained-llama3-regex", "trained-llama3", True, True),
    ("trained-qwen2", "trained-qwen2", False, True), ("trained-qwen2-regex", "trained-qwen2", True, True),
    ("claude", "claude", False, True), ("claude-regex", "claude", True, True),
    ("gpt-neox-olmo", "gpt-neox-olmo", False, True), ("gpt-neox-olmo-regex", "gpt-neox-olmo", True, True),
    ("trained-byte-level", "trained-byte-level", False, True),
    ("trained-byte-level-regex", "trained-byte-level", True, True),
]


@pytest.fixture(scope="module")
def pairs(descriptions):
    """{variant: (bytepair's tokenizer, HF's)}, each built from the same JSON."""
    out = {}
    for name, base, regex, normalizer in VARIANTS:
        text = json.dumps(_variant(descriptions[base], regex, normalizer), ensure_ascii=False)
        out[name] = (from_hf_json(text), tokenizers.Tokenizer.from_str(text))
    return out


def test_the_published_splits_are_the_lexed_presets(descriptions):
    # the Split regex as published (Llama 3) and as Qwen2's tokenizer.json writes it: the presets' exact text
    for name in ("llama3", "qwen2", "trained-llama3", "trained-qwen2"):
        assert _regex_of(descriptions[name]) == PRESETS[name.replace("trained-", "")]
    assert descriptions["llama3"]["normalizer"] is None
    assert descriptions["qwen2"]["normalizer"] == {"type": "NFC"}
    # the ByteLevel pipelines: HF's own regex, with a Unicode normal form before it
    for name, form in [("claude", "NFKC"), ("gpt-neox-olmo", "NFC"), ("trained-byte-level", None)]:
        pre = descriptions[name]["pre_tokenizer"]
        assert pre["type"] == "ByteLevel" and pre.get("use_regex", True) and not pre["add_prefix_space"], name
        assert (descriptions[name]["normalizer"] or {}).get("type") == form, name


def same(pair, text: str) -> None:
    tok, hf = pair
    e = hf.encode(text, add_special_tokens=False)
    assert tok.encode(text) == e.ids, text
    ids, offsets = tok.encode_with_offsets(text)
    assert ids == e.ids and offsets == e.offsets, text


@pytest.mark.parametrize("name", [v[0] for v in VARIANTS])
def test_ids_and_offsets_equal_hf_on_edge_texts(pairs, name):
    edges = ["", " ", "\n", "a \n\t ", "x\n  ", "x \n", "x\n\n\n", "x\r\n \u00a0", "12345 1234567 ١٢٣٤",
             "It's I'M we'LL they'Re you'VE she'D don'T 'ſ", "end  \n\n  \t", "  \n  x  \n  "]
    for text in edges:
        same(pairs[name], text)


@pytest.mark.parametrize("name", [v[0] for v in VARIANTS])
@settings(max_examples=EXAMPLES, deadline=None)
@given(text=TEXT)
def test_ids_and_offsets_equal_hf_on_generated_text(pairs, name, text):
    same(pairs[name], text)


@pytest.mark.parametrize("name", ["llama3", "qwen2-no-nfc", "trained-llama3", "trained-qwen2", "claude", "gpt-neox-olmo",
                                  "trained-byte-level"])
def test_ids_equal_hf_on_real_text(pairs, real_texts, name):
    tok, hf = pairs[name]
    parts = [p for doc in real_texts[:6] for p in doc.split("\n\n")]
    # with the whitespace that ended each paragraph, so that many end in a run with newlines
    parts = [p + "\n\n " for p in parts[:300]] + parts[300:600]
    assert tok.encode_batch(parts) == [e.ids for e in hf.encode_batch(parts, add_special_tokens=False)]


@functools.lru_cache(maxsize=None)
def byte_models(paths: tuple):
    out = {}
    for name, path in paths:
        enc = tiktoken.Encoding(name, pat_str=PRESETS[name], mergeable_ranks=load_tiktoken_bpe(path),
                                special_tokens={})
        out[name] = (Tokenizer.from_tiktoken(path, pattern=name), enc)
    return out


@pytest.fixture(scope="module")
def byte_pairs(published_tokenizers):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location("get_published", os.path.join(root, "scripts", "get_published.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    p = module.get_published()
    return byte_models((("llama3", p["llama3/tokenizer.model"]), ("qwen2", published_tokenizers["raw"]["qwen/qwen.tiktoken"])))


@pytest.mark.parametrize("name", ["llama3", "qwen2"])
@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_byte_model_ids_equal_tiktoken(byte_pairs, name, text):
    tok, enc = byte_pairs[name]
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text
