"""The Dask engine on a LocalCluster of 2 worker processes: counting,
training and dataset encoding give exactly what they give without Dask."""

from __future__ import annotations

import glob
import gzip
import io
import json
import os

import numpy as np
import pytest

import bytepair.dataset as dataset
import bytepair.distributed as distributed
from bytepair import InputError, Tokenizer
from bytepair.cli import main
from bytepair.counts import count_words, load_counts, read_header
from bytepair.dataset import documents, encode_dataset

TEXT = "The cat's toy; we'll see.\n\n  def f(x):\r\n\treturn x**2  # 12345 naïve café 🙂 你好 <|endoftext|>\n"


@pytest.fixture(scope="module")
def client():
    with distributed.connect("local") as c:
        assert len(c.scheduler_info()["workers"]) == 2
        yield c


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Text files (one over 1 MB, so that it is read in blocks and encoded in segments), JSONL.gz, Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("inputs")
    rng = np.random.default_rng(7)
    words = TEXT.split(" ") + ["<|endoftext|>", "\n", "zebra", "Ünïcödé"]

    def doc(n):
        return " ".join(words[i] for i in rng.integers(0, len(words), n))

    paths, docs = [], []
    for i, n in enumerate([3000, 200_000, 0, 500, 40]):
        docs.append(doc(n))
        paths.append(str(folder / f"t{i}.txt"))
        with open(paths[-1], "w", encoding="utf-8", newline="") as fh:
            fh.write(docs[-1])
    jl = [doc(int(n)) for n in rng.integers(0, 300, 40)]
    paths.append(str(folder / "d.jsonl.gz"))
    with open(paths[-1], "wb") as fh:
        fh.write(gzip.compress("".join(json.dumps({"text": d}) + "\n" for d in jl).encode()))
    pqd = [doc(int(n)) for n in rng.integers(0, 300, 30)]
    paths.append(str(folder / "p.parquet"))
    pq.write_table(pa.table({"text": pqd}), paths[-1], row_group_size=8)
    return paths, docs + jl + pqd


@pytest.fixture(scope="module")
def tok(inputs):
    return Tokenizer.train(inputs[1][:3], vocab_size=350, special_tokens=["<|endoftext|>"])


@pytest.mark.parametrize("unit_bytes", [1, 10**9])
def test_counts_equal_local_counts(client, inputs, unit_bytes, monkeypatch, tmp_path):
    paths, _ = inputs
    monkeypatch.setattr(distributed, "UNIT_BYTES", unit_bytes)
    local_stats, dask_stats = {}, {}
    local = count_words(paths, "cl100k", ["<|endoftext|>"], stats=local_stats)
    on_dask = count_words(paths, "cl100k", ["<|endoftext|>"], client=client, stats=dask_stats)
    assert on_dask.items() == local.items()
    assert dask_stats == local_stats
    # tables handed over as counts files in a shared folder
    shared = count_words(paths, "cl100k", ["<|endoftext|>"], client=client, workdir=tmp_path / "shared")
    assert shared.items() == local.items()
    assert os.listdir(tmp_path / "shared") == []


@pytest.mark.parametrize("model", ["byte", "char"])
def test_training_equals_local_training(client, inputs, model, monkeypatch):
    paths, docs = inputs
    monkeypatch.setattr(distributed, "UNIT_BYTES", 1)
    opts = dict(model=model, vocab_size=350 if model == "byte" else 100, special_tokens=["<|endoftext|>"])
    expected = Tokenizer.train(docs, **opts).to_dict()
    assert Tokenizer.train_from_files(paths, client=client, **opts).to_dict() == expected
    assert Tokenizer.train_from_files(paths, **opts).to_dict() == expected


def test_max_bytes_on_dask(client, inputs):
    paths, _ = inputs
    texts = [p for p in paths if p.endswith(".txt")]
    for cap in [0, 100, 3000, 10**9]:
        assert count_words(texts, None, max_bytes=cap, client=client).items() == count_words(texts, None, max_bytes=cap).items()
    with pytest.raises(InputError, match="max_bytes= with a Dask client needs uncompressed plain text"):
        count_words(paths, None, max_bytes=100, client=client)


def test_worker_errors_reach_the_caller(client, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc\xffdef")
    with pytest.raises(InputError, match="bad.txt: invalid UTF-8 at byte offset 3"):
        count_words([bad], None, client=client)
    with pytest.raises(InputError, match="no such file"):
        count_words([tmp_path / "missing.txt"], None, client=client)
    with pytest.raises(InputError, match="standard input"):
        count_words(["-"], None, client=client)


def test_dataset_on_dask_is_byte_identical(client, inputs, tok, tmp_path):
    paths, docs = inputs
    opts = dict(append_eot=True, shard_tokens=4096, unit_bytes=1, piece_tokens=1000)
    local = encode_dataset(tok, paths, tmp_path / "local", **opts)
    on_dask = encode_dataset(tok, paths, tmp_path / "dask", client=client, **opts)
    assert on_dask == local
    names = sorted(os.listdir(tmp_path / "local"))
    assert names == sorted(os.listdir(tmp_path / "dask")) and len(names) > 20
    for name in names:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes(), name
    got = list(documents(tmp_path / "dask"))
    assert len(got) == len(docs)
    for ids, text in zip(got, docs):
        assert ids.tolist() == tok.encode_ordinary(text) + [tok.eot_token]
    # other units of work (one unit for everything): the same bytes
    one = encode_dataset(tok, paths, tmp_path / "one", client=client, append_eot=True, shard_tokens=4096)
    assert [s["sha256"] for s in one["shards"]] == [s["sha256"] for s in local["shards"]]


def test_dask_resumes_a_local_run(client, inputs, tok, tmp_path, monkeypatch):
    paths, _ = inputs
    opts = dict(shard_tokens=3000, unit_bytes=1, piece_tokens=700)
    ref = encode_dataset(tok, paths, tmp_path / "ref", **opts)
    calls = [0]
    real = dataset._atomic_json

    def crash(path, data):
        calls[0] += 1
        if calls[0] == 25:
            raise RuntimeError("crash")
        return real(path, data)

    with monkeypatch.context() as m:
        m.setattr(dataset, "_atomic_json", crash)
        with pytest.raises(RuntimeError):
            encode_dataset(tok, paths, tmp_path / "out", **opts)
    assert glob.glob(str(tmp_path / "out.partial" / "shard_*.json"))
    assert encode_dataset(tok, paths, tmp_path / "out", client=client, **opts) == ref


def run_cli(*argv):
    out = io.StringIO()
    return main([str(a) for a in argv], out=out)


def test_cli_dask_local(inputs, tmp_path, capsys):
    """--dask local starts (and stops) its own cluster."""
    paths, docs = inputs
    t1, t2 = tmp_path / "t1.json", tmp_path / "t2.json"
    assert run_cli("train", *paths, "--dask", "local", "--vocab-size", "500", "-o", t1) == 0
    assert run_cli("train", *paths, "--vocab-size", "500", "-o", t2) == 0
    assert t1.read_bytes() == t2.read_bytes()
    c = tmp_path / "c.counts"
    assert run_cli("count-words", *paths, "--dask", "local:1", "-o", c) == 0
    assert read_header(c)["documents"] == len(docs)
    assert load_counts(c).items() == count_words(paths, "cl100k").items()
    err = capsys.readouterr().err
    assert "Traceback" not in err
