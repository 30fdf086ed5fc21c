"""encode-dataset's shard formats (issue 16): llm.c / modded-nanogpt ``.bin``
shards read back with those projects' own reader code, raw ``u16``/``u32``
files read with ``np.memmap``, ``npy``; the same ids in every format,
resumable and atomic as the default.

The readers below follow llm.c's ``dev/data/fineweb.py`` / ``train_gpt2.py``
(``_peek_data_shard``, ``_load_data_shard``: 256 int32 header, magic
20240520, version 1, uint16 tokens) and llm.c's llama-3 variant (20240801,
version 7, uint32), written here from their published code.
"""

from __future__ import annotations

import glob
import json
import os

import numpy as np
import pytest
import tiktoken

import bytepair.dataset as dataset
from bytepair import BytepairError, InputError, Tokenizer
from bytepair.cli import main
from bytepair.dataset import documents, encode_dataset, load_shards, read_shard
from test_dataset import Crash, crash_at, make_inputs, shard_bytes

TEXT = "The cat's toy; we'll see.\n\n  def f(x):\r\n\treturn x**2  # 12345 naïve café 🙂 你好\n"


# ---------------------------------------------------------------- the projects' readers


def llmc_load_data_shard(filename):
    """modded-nanogpt / llm.c train_gpt2.py: the gpt-2 (uint16) shard reader."""
    with open(filename, "rb") as f:
        header = np.frombuffer(f.read(256 * 4), dtype=np.int32)
        assert header[0] == 20240520, "magic number mismatch in the data .bin file"
        assert header[1] == 1, "unsupported version"
        ntok = header[2]
        tokens = np.frombuffer(f.read(), dtype=np.uint16)
    assert len(tokens) == ntok, "number of tokens read does not match header?"
    return tokens


def llmc_load_llama3_shard(filename):
    """llm.c's llama-3 reader: uint32 tokens after a 20240801 / version 7 header."""
    with open(filename, "rb") as f:
        header = np.frombuffer(f.read(256 * 4), dtype=np.int32)
        assert header[0] == 20240801, "magic number mismatch in the data .bin file"
        assert header[1] == 7, "unsupported version"
        ntok = header[2]
        tokens = np.frombuffer(f.read(), dtype=np.uint32)
    assert len(tokens) == ntok, "number of tokens read does not match header?"
    return tokens


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train([TEXT * 20, "the cat sat on the mat " * 50], vocab_size=300,
                           special_tokens=["<|endoftext|>"])


def expected_stream(tok, docs):
    return np.array([i for d in docs for i in tok.encode_ordinary(d) + [tok.eot_token]], dtype=np.int64)


@pytest.mark.parametrize("fmt", ["bin", "u16", "u32", "npy"])
def test_every_format_holds_the_same_ids(tmp_path, tok, fmt):
    paths, docs = make_inputs(str(tmp_path))
    m = encode_dataset(tok, paths, tmp_path / "out", append_eot=True, shard_tokens=700, shard_format=fmt)
    files = sorted(glob.glob(str(tmp_path / "out" / f"shard_??????.{fmt}")))
    assert [os.path.basename(f) for f in files] == [s["file"] for s in m["shards"]] and len(files) > 3
    if fmt == "bin":
        arrays = [llmc_load_data_shard(f) for f in files]
    elif fmt == "npy":
        arrays = [np.load(f) for f in files]
    else:
        arrays = [np.memmap(f, dtype=np.uint16 if fmt == "u16" else np.uint32, mode="r") for f in files]
    assert all(len(a) == 700 for a in arrays[:-1])
    assert np.array_equal(np.concatenate(arrays).astype(np.int64), expected_stream(tok, docs))
    assert m["format"] == fmt and m["dtype"] == ("uint32" if fmt == "u32" else "uint16")
    # the library's own readers: documents, load_shards, read_shard
    assert [d.tolist() for d in documents(tmp_path / "out")] == [tok.encode_ordinary(d) + [tok.eot_token] for d in docs]
    _, shards, _ = load_shards(tmp_path / "out")
    assert all(np.array_equal(a, b) for a, b in zip(shards, arrays))
    for s in m["shards"]:
        assert s["tokens"] == len(read_shard(tmp_path / "out" / s["file"]))


def test_bin_with_a_large_vocabulary_is_llama3_uint32(tmp_path, vocab_paths):
    """cl100k_base (100277 ids): llm.c's uint32 shards, ids equal tiktoken's."""
    import tiktoken.load
    import tiktoken_ext.openai_public as openai_public

    path = vocab_paths["cl100k_base.tiktoken"]
    tok = Tokenizer.load(path, format="tiktoken")
    # tiktoken's own cl100k_base, its loader pointed at the local file
    real = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda url, expected_hash=None: tiktoken.load.load_tiktoken_bpe(path, expected_hash)
    try:
        enc = tiktoken.Encoding(**openai_public.cl100k_base())
    finally:
        openai_public.load_tiktoken_bpe = real
    docs = [TEXT, "ünïcödé " * 100, "", "x" * 3000]
    for i, d in enumerate(docs):
        (tmp_path / f"d{i}.txt").write_text(d, encoding="utf-8", newline="")
    out = tmp_path / "out"
    encode_dataset(tok, sorted(map(str, tmp_path.glob("d*.txt"))), out, append_eot=True, shard_tokens=1000,
                   shard_format="bin")
    got = np.concatenate([llmc_load_llama3_shard(f) for f in sorted(glob.glob(str(out / "shard_*.bin")))])
    want = [i for d in docs for i in enc.encode_ordinary(d) + [enc.eot_token]]
    assert got.tolist() == want
    with pytest.raises(AssertionError, match="magic"):  # and the gpt-2 reader refuses it, as in llm.c
        llmc_load_data_shard(str(out / "shard_000000.bin"))


@pytest.mark.parametrize("fmt", ["bin", "u16"])
@pytest.mark.parametrize("n", [2, 9, 30])
def test_resume_after_a_crash_gives_the_same_shards(tmp_path, tok, monkeypatch, fmt, n):
    paths, _ = make_inputs(str(tmp_path))
    opts = dict(append_eot=True, shard_tokens=700, unit_bytes=2000, piece_tokens=300, shard_format=fmt)
    encode_dataset(tok, paths, tmp_path / "ref", **opts)
    ref = shard_bytes(tmp_path / "ref")
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        crash_at(m, n)
        with pytest.raises(Crash):
            encode_dataset(tok, paths, out, **opts)
    assert not out.exists()  # the output appears whole or not at all
    encode_dataset(tok, paths, out, **opts)
    assert shard_bytes(out) == ref
    assert json.load(open(out / "manifest.json")) == json.load(open(tmp_path / "ref" / "manifest.json"))
    assert not [p for p in os.listdir(out) if p.startswith(".bytepair-")]


def test_a_run_in_another_format_does_not_resume_this_one(tmp_path, tok, monkeypatch):
    paths, _ = make_inputs(str(tmp_path))
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        crash_at(m, 9)
        with pytest.raises(Crash):
            encode_dataset(tok, paths, out, shard_tokens=700, shard_format="bin")
    with pytest.raises(InputError, match="other inputs, tokenizer or settings"):
        encode_dataset(tok, paths, out, shard_tokens=700, shard_format="u32")


def test_format_errors(tmp_path, vocab_paths, tok):
    big = Tokenizer.load(vocab_paths["cl100k_base.tiktoken"], format="tiktoken")
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(BytepairError, match="u16 holds ids below 65536"):
        encode_dataset(big, [tmp_path / "a.txt"], tmp_path / "o1", shard_format="u16")
    with pytest.raises(BytepairError, match="unknown shard format"):
        encode_dataset(tok, [tmp_path / "a.txt"], tmp_path / "o2", shard_format="parquet")
    with pytest.raises(BytepairError, match="fewer than 2\\*\\*31"):
        encode_dataset(tok, [tmp_path / "a.txt"], tmp_path / "o3", shard_format="bin", shard_tokens=2**31)
    # a damaged .bin is named, not misread
    bad = tmp_path / "bad.bin"
    bad.write_bytes(np.array([20240520, 1, 10] + [0] * 253, np.int32).tobytes() + b"\0\0" * 9)
    with pytest.raises(InputError, match="header says 10 ids"):
        read_shard(bad)
    bad.write_bytes(b"\0" * 1030)
    with pytest.raises(InputError, match="not an llm.c token shard"):
        read_shard(bad)


def test_cli_format_bin(tmp_path, tok, capsys):
    tok.save(str(tmp_path / "tok.json"))
    docs = ["hello world", "the cat sat on the mat"]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8")
    assert main(["encode-dataset", "-t", str(tmp_path / "tok.json"), str(tmp_path / "a.jsonl"), "-o",
                 str(tmp_path / "data"), "--append-eot", "--format", "bin", "--shard-mb", "0.00002"]) == 0
    files = sorted(glob.glob(str(tmp_path / "data" / "shard_*.bin")))
    want = expected_stream(tok, docs).tolist()
    assert len(want) > 10 and len(files) == -(-len(want) // 10)  # 10 ids of 2 bytes a shard
    assert np.concatenate([llmc_load_data_shard(f) for f in files]).tolist() == want
    assert f"into {len(files)} shards" in capsys.readouterr().err
    # the tokenizer's own format option is --tokenizer-format here
    assert main(["encode-dataset", "-t", str(tmp_path / "tok.json"), "--tokenizer-format", "bytepair",
                 str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "data2"), "--format", "u32"]) == 0
    assert np.memmap(tmp_path / "data2" / "shard_000000.u32", dtype=np.uint32, mode="r").tolist() == [
        i for d in docs for i in tok.encode_ordinary(d)]
