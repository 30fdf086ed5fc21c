"""Every command's ``-t`` takes a published tokenizer.json pipeline (detected
by content) and gives Hugging Face ``tokenizers``' ids: encode (argument,
--input, -o npy, --ordinary, --allowed-special), tokenize, decode, count,
show, compare and convert. The oracle is ``tokenizers.Tokenizer`` on the same
file."""

from __future__ import annotations

import functools
import io
import json

import numpy as np
import pytest
import tokenizers

from bytepair import Tokenizer
from bytepair.cli import main

TEXT = "Hello   world, naïve café! 日本語のテキスト 🙂 123456\n\tΚαλημέρα κόσμε"


@pytest.fixture(scope="module")
def published(published_tokenizers):
    return published_tokenizers


def run(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out) == 0
    return out.getvalue()


@functools.lru_cache(maxsize=None)
def hf_tokenizer(path: str) -> tokenizers.Tokenizer:
    """HF's tokenizer of ``path``, loaded once per file (Llama 3's takes half a second)."""
    return tokenizers.Tokenizer.from_file(path)


def hf_ids(path: str, text: str, add_special_tokens: bool = False):
    return hf_tokenizer(path).encode(text, add_special_tokens=add_special_tokens).ids


@pytest.mark.parametrize("name", ["llama3", "tortoise", "claude"])
def test_encode_decode_count_equal_hf(published, name, tmp_path):
    path = published[name]
    expected = hf_ids(path, TEXT)
    assert run("encode", "-t", path, "--", TEXT).split() == [str(i) for i in expected]
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    assert run("encode", "-t", path, "--input", str(tmp_path / "in.txt")).split() == [str(i) for i in expected]
    run("encode", "-t", path, "--input", str(tmp_path / "in.txt"), "-o", str(tmp_path / "ids.npy"))
    assert np.load(tmp_path / "ids.npy").tolist() == expected
    assert run("count", "-t", path, str(tmp_path / "in.txt")).split("\t")[0] == str(len(expected))
    decoded = hf_tokenizer(path).decode(expected, skip_special_tokens=False)
    assert run("decode", "-t", path, *map(str, expected)) == decoded + "\n"
    tokens = json.loads(run("tokenize", "-t", path, "--json", "--", TEXT))
    assert len(tokens) == len(expected)


def test_special_tokens_follow_the_cli_options(published):
    path = published["llama3"]
    text = "a<|begin_of_text|>b"
    special = hf_ids(path, text)
    assert 128000 in special
    assert run("encode", "-t", path, "--allowed-special", "all", "--", text).split() == [str(i) for i in special]
    as_text = run("encode", "-t", path, "--ordinary", "--", text).split()
    assert "128000" not in as_text and len(as_text) > len(special)


@pytest.mark.parametrize("name", ["llama3", "tortoise"])
def test_show_and_compare_cover_the_text(published, name, tmp_path):
    path = published[name]
    shown = run("show", "-t", path, "--", TEXT)
    assert shown.strip()
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    table = run("compare", "-t", path, str(tmp_path / "in.txt"))
    counts = [line.split() for line in table.splitlines() if " all " in line]
    assert counts and int(counts[0][5]) == len(hf_ids(path, TEXT))


def test_pieces_of_a_pipeline_tile_the_text(published):
    from bytepair.cli._pieces import all_ids, pieces

    for name in ("llama3", "tortoise", "claude"):
        tok = Tokenizer.load(published[name])
        ps = pieces(tok, TEXT)
        assert "".join(p.text for p in ps) == TEXT
        assert all_ids(ps) == hf_ids(published[name], TEXT)


def test_convert_round_trips(published, tmp_path):
    path = published["llama3"]
    run("convert", path, str(tmp_path / "native.json"))
    run("convert", str(tmp_path / "native.json"), str(tmp_path / "tokenizer.json"), "--to", "hf")
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert again.encode(TEXT, add_special_tokens=False).ids == hf_ids(path, TEXT)
    assert Tokenizer.load(str(tmp_path / "native.json")).encode(TEXT) == hf_ids(path, TEXT)
