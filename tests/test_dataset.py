"""Dataset encoding: the ids of every document equal encode_ordinary (plus
the end-of-text token), shards are exact cuts of the token stream that do
not depend on how the work was split, interrupted runs resume to the same
bytes, and the output appears atomically."""

from __future__ import annotations

import glob
import gzip
import hashlib
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import bytepair.dataset as dataset
from bytepair import BytepairError, EncodeError, InputError, Tokenizer
from bytepair.cli import main
from bytepair.dataset import documents, encode_dataset, load_shards, tokenizer_hash

TEXT = "The cat's toy; we'll see.\n\n  def f(x):\r\n\treturn x**2  # 12345 naïve café 🙂 你好 <|endoftext|>\n"
PIECES = ["a", "Z", "'s", "'", " ", "  ", "\n", "\r\n", "\t", "1", "234", ".", "!?", "é", "你", "<|endoftext|>",
          "🙂", "don't", "the", " cat", "x\n/", "\u3000", "A", "'LL"]


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train([TEXT * 20, "the cat sat on the mat " * 50], vocab_size=300, special_tokens=["<|endoftext|>"])


@pytest.fixture()
def small(monkeypatch):
    """Tiny batches, segments and blocks, so every code path runs on small inputs."""
    import bytepair.corpus as corpus

    monkeypatch.setattr(dataset, "BIG_DOC_CHARS", 300)
    monkeypatch.setattr(dataset, "SEGMENT_CHARS", 97)
    monkeypatch.setattr(dataset, "BATCH_CHARS", 500)
    monkeypatch.setattr(corpus, "BLOCK_BYTES", 1000)


def make_inputs(folder, seed=0):
    """Plain text (small and large), JSONL (gzip), Parquet, with empty documents."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)

    def doc(n):
        return "".join(PIECES[i] for i in rng.integers(0, len(PIECES), n))

    docs, paths = [], []
    for i, n in enumerate([40, 5000, 0, 300]):
        paths.append(os.path.join(folder, f"t{i}.txt"))
        docs.append(doc(n))
        with open(paths[-1], "w", encoding="utf-8", newline="") as fh:
            fh.write(docs[-1])
    jl = [doc(int(n)) for n in rng.integers(0, 200, 30)] + [doc(2000), ""]
    paths.append(os.path.join(folder, "d.jsonl.gz"))
    with open(paths[-1], "wb") as fh:
        fh.write(gzip.compress("".join(json.dumps({"text": d}) + "\n" for d in jl).encode()))
    docs += jl
    pqd = [doc(int(n)) for n in rng.integers(0, 100, 25)]
    paths.append(os.path.join(folder, "p.parquet"))
    pq.write_table(pa.table({"text": pqd}), paths[-1], row_group_size=7)
    docs += pqd
    return paths, docs


def shard_bytes(outdir):
    return {os.path.basename(p): open(p, "rb").read() for p in sorted(glob.glob(os.path.join(outdir, "shard_*")))}


# ---------------------------------------------------------------- ids


@pytest.mark.parametrize("eot", [False, True])
def test_ids_equal_encode_ordinary(tmp_path, tok, small, eot):
    paths, docs = make_inputs(str(tmp_path))
    out = tmp_path / "out"
    manifest = encode_dataset(tok, paths, out, append_eot=eot, shard_tokens=1000)
    got = list(documents(out))
    assert len(got) == len(docs) == manifest["documents"]
    for ids, text in zip(got, docs):
        expected = tok.encode_ordinary(text) + ([tok.eot_token] if eot else [])
        assert ids.tolist() == expected
    assert manifest["tokens"] == sum(len(ids) for ids in got)
    _, shards, indexes = load_shards(out)
    assert [len(s) for s in shards[:-1]] == [1000] * (len(shards) - 1) and 0 < len(shards[-1]) <= 1000
    assert all(s.dtype == np.uint16 for s in shards)
    assert sum(len(i) for i in indexes) == len(docs)
    assert not os.path.exists(str(out) + ".partial")


@pytest.mark.parametrize("model, pattern", [("byte", "gpt2"), ("byte", "o200k"), ("byte", r"\p{L}+|\s+|[^\s\p{L}]+"),
                                            ("byte", r"\b\w+\b|\W"), ("char", None)])
def test_patterns_and_models(tmp_path, small, model, pattern):
    paths, docs = make_inputs(str(tmp_path), seed=3)
    opts = dict(byte_fallback=True) if model == "char" else {}
    tok = Tokenizer.train(docs, model=model, pattern=pattern, vocab_size=500, **opts)
    encode_dataset(tok, paths, tmp_path / "out", shard_tokens=777)
    for ids, text in zip(documents(tmp_path / "out"), docs):
        assert ids.tolist() == tok.encode_ordinary(text)


@settings(max_examples=60, deadline=None)
@given(text=st.lists(st.sampled_from(PIECES), max_size=300).map("".join), seg=st.integers(1, 40),
       pattern=st.sampled_from(["cl100k", "gpt2", "o200k", "hf-prefix-space"]))
def test_segmented_encoding_equals_encode_ordinary(tmp_path_factory, tok, text, seg, pattern):
    """A long document is cut where the pre-tokenizer cuts anyway: the ids are those of the whole document.
    (With Hugging Face's add_prefix_space, which changes how the first words split, it is encoded whole.)"""
    if pattern == "hf-prefix-space":
        from bytepair.formats.hf import HF_GPT2_PATTERN

        t = Tokenizer.from_dict({**Tokenizer.train([TEXT], pattern=HF_GPT2_PATTERN, vocab_size=300).to_dict(),
                                 "add_prefix_space": True})
    else:
        t = tok if pattern == "cl100k" else Tokenizer.train([TEXT], pattern=pattern, vocab_size=300)
    path = tmp_path_factory.mktemp("seg") / "d.txt"
    path.write_text(text, encoding="utf-8", newline="")
    old = dataset.BIG_DOC_CHARS, dataset.SEGMENT_CHARS
    dataset.BIG_DOC_CHARS, dataset.SEGMENT_CHARS = 0, seg
    try:
        enc = dataset._Encoder(t, None, "uint32")
        chunks = list(enc.chunks([dataset.Source(str(path))], 0, dataset.Position(0), "strict"))
    finally:
        dataset.BIG_DOC_CHARS, dataset.SEGMENT_CHARS = old
    assert np.concatenate([c[0] for c in chunks]).tolist() == t.encode_ordinary(text)
    assert sum(len(c[1]) for c in chunks) == 1


def test_uint32_when_the_vocabulary_is_large(tmp_path):
    tok = Tokenizer.train(TEXT, vocab_size=300, special_tokens={"<|endoftext|>": 70000})
    p = tmp_path / "a.txt"
    p.write_text(TEXT, encoding="utf-8")
    m = encode_dataset(tok, [p], tmp_path / "out", append_eot=True)
    _, shards, _ = load_shards(tmp_path / "out")
    assert m["dtype"] == "uint32" and shards[0].dtype == np.uint32 and shards[0][-1] == 70000


def test_manifest(tmp_path, tok):
    paths, docs = make_inputs(str(tmp_path))
    m = encode_dataset(tok, paths, tmp_path / "out", append_eot="<|endoftext|>", shard_tokens=2000)
    on_disk = json.load(open(tmp_path / "out" / "manifest.json"))
    assert on_disk == m
    assert m["tokenizer_sha256"] == hashlib.sha256(json.dumps(tok.to_dict(), sort_keys=True).encode()).hexdigest()
    assert m["tokenizer_sha256"] == tokenizer_hash(tok)
    assert m["inputs"] == [{"path": p, "size": os.path.getsize(p)} for p in paths]
    assert m["documents"] == len(docs) and m["eot_token"] == tok.eot_token and m["dtype"] == "uint16"
    assert m["n_shards"] == len(m["shards"]) == len(glob.glob(str(tmp_path / "out" / "shard_*.idx.npy")))
    for s in m["shards"]:
        assert hashlib.sha256(open(tmp_path / "out" / s["file"], "rb").read()).hexdigest() == s["sha256"]
    assert sorted(os.listdir(tmp_path / "out")) == sorted(
        ["manifest.json"] + [s["file"] for s in m["shards"]] + [s["index"] for s in m["shards"]]
    )
    assert [s["first_document"] for s in m["shards"]] == list(np.cumsum([0] + [s["documents"] for s in m["shards"]])[:-1])


# ---------------------------------------------------------------- determinism


def test_shards_do_not_depend_on_how_the_work_is_split(tmp_path, tok, small):
    paths, _ = make_inputs(str(tmp_path))
    ref = None
    for i, (unit_bytes, piece_tokens) in enumerate([(1, 50), (10**9, 10**9), (3000, 333), (1, 1)]):
        out = tmp_path / f"out{i}"
        encode_dataset(tok, paths, out, append_eot=True, shard_tokens=900, unit_bytes=unit_bytes,
                       piece_tokens=piece_tokens)
        got = shard_bytes(out)
        assert ref is None or got == ref
        ref = got


def test_empty_documents_at_shard_boundaries(tmp_path):
    """Documents that start exactly at a boundary go to the later shard; trailing empty ones stay in the last."""
    tok = Tokenizer.train("ab ab ab", vocab_size=257)
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"text": t}) + "\n" for t in ["ab", "", "ab", "", ""]), encoding="utf-8")
    n = len(tok.encode_ordinary("ab"))
    encode_dataset(tok, [p], tmp_path / "out", shard_tokens=n)
    _, shards, indexes = load_shards(tmp_path / "out")
    assert [len(s) for s in shards] == [n, n]
    assert [i.tolist() for i in indexes] == [[0], [0, 0, n, n]]
    assert [d.tolist() for d in documents(tmp_path / "out")] == [[256], [], [256], [], []]
    # nothing at all: one empty shard that still lists the documents
    q = tmp_path / "e.jsonl"
    q.write_text('{"text": ""}\n{"text": ""}\n', encoding="utf-8")
    m = encode_dataset(tok, [q], tmp_path / "out2")
    assert m["n_shards"] == 1 and m["tokens"] == 0 and m["documents"] == 2


# ---------------------------------------------------------------- resume and atomicity


class Crash(Exception):
    pass


def crash_at(monkeypatch, n):
    """Make the n-th file write (shard, index, piece or sidecar) fail, as a crash would."""
    calls = [0]
    real_save, real_json = dataset._atomic_save, dataset._atomic_json

    def counting(real):
        def wrapped(*a, **k):
            calls[0] += 1
            if calls[0] == n:
                raise Crash(f"crash at write {n}")
            return real(*a, **k)
        return wrapped

    monkeypatch.setattr(dataset, "_atomic_save", counting(real_save))
    monkeypatch.setattr(dataset, "_atomic_json", counting(real_json))
    return calls


@pytest.mark.parametrize("n", [2, 5, 9, 17, 30, 46, 61])
def test_resume_after_a_crash_gives_the_same_shards(tmp_path, tok, small, monkeypatch, n):
    paths, _ = make_inputs(str(tmp_path))
    opts = dict(append_eot=True, shard_tokens=700, unit_bytes=2000, piece_tokens=300)
    encode_dataset(tok, paths, tmp_path / "ref", **opts)
    ref = shard_bytes(tmp_path / "ref")
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        crash_at(m, n)
        with pytest.raises(Crash):
            encode_dataset(tok, paths, out, **opts)
    assert not out.exists() and os.path.isdir(str(out) + ".partial")
    finished = {p: os.stat(p).st_mtime_ns for p in glob.glob(str(out) + ".partial/shard_*.npy")
                if os.path.exists(p[: -len(".npy")] + ".json")}
    pieces = set(glob.glob(str(out) + ".partial/parts/u*/p*.json"))
    # the rerun never writes a finished shard again, and never encodes a finished piece again
    written = []
    real_json = dataset._atomic_json

    def spy(path, data):
        written.append(path)
        return real_json(path, data)

    with monkeypatch.context() as m:
        m.setattr(dataset, "_atomic_json", spy)
        encode_dataset(tok, paths, out, **opts)
    assert shard_bytes(out) == ref
    for p, mtime in finished.items():
        assert os.stat(os.path.join(str(out), os.path.basename(p))).st_mtime_ns == mtime
    assert pieces.isdisjoint(written)
    assert json.load(open(out / "manifest.json")) == json.load(open(tmp_path / "ref" / "manifest.json"))


def test_resume_after_a_crash_at_the_manifest(tmp_path, tok, small, monkeypatch):
    """Killed after the last shard, before the manifest (the last write): the
    rerun redoes the last shard from the pieces, which must still be there
    (they were deleted with the last shard: the rerun failed on a missing
    piece file, found by tests/test_kill_random.py)."""
    paths, _ = make_inputs(str(tmp_path))
    opts = dict(append_eot=True, shard_tokens=700, unit_bytes=2000, piece_tokens=300)
    with monkeypatch.context() as m:
        calls = crash_at(m, 10**9)
        encode_dataset(tok, paths, tmp_path / "ref", **opts)
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        crash_at(m, calls[0])  # the manifest
        with pytest.raises(Crash):
            encode_dataset(tok, paths, out, **opts)
    assert os.path.exists(str(out) + ".partial") and not os.path.exists(str(out) + ".partial/manifest.json")
    encode_dataset(tok, paths, out, **opts)
    assert shard_bytes(out) == shard_bytes(tmp_path / "ref")
    assert json.load(open(out / "manifest.json")) == json.load(open(tmp_path / "ref" / "manifest.json"))


def test_resume_after_kill(tmp_path, tok):
    """A real SIGKILL in the middle of a run, then the same command again."""
    paths, _ = make_inputs(str(tmp_path))
    tok.save(str(tmp_path / "tok.json"))
    out = tmp_path / "out"
    script = textwrap.dedent("""
        import os, signal, sys
        import bytepair.dataset as d
        real = d._Assembler._write
        n = [0]
        def write(self, *a, **k):
            real(self, *a, **k)
            n[0] += 1
            if n[0] == 3:
                os.kill(os.getpid(), signal.SIGKILL)
        d._Assembler._write = write
        from bytepair.cli import main
        sys.exit(main(sys.argv[1:]))
    """)
    argv = ["encode-dataset", "-t", str(tmp_path / "tok.json"), *paths, "-o", str(out), "--shard-mb", "0.001",
            "--append-eot"]
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True)
    assert done.returncode == -9
    assert not out.exists() and len(glob.glob(str(out) + ".partial/shard_*.json")) == 3
    assert main(argv) == 0
    assert main([*argv[:3], *paths, "-o", str(tmp_path / "ref"), "--shard-mb", "0.001",
                 "--append-eot"]) == 0
    assert shard_bytes(out) == shard_bytes(tmp_path / "ref")


def test_finished_output_is_kept_and_others_refused(tmp_path, tok):
    paths, _ = make_inputs(str(tmp_path))
    out = tmp_path / "out"
    m = encode_dataset(tok, paths, out, shard_tokens=5000)
    before = {p: os.stat(p).st_mtime_ns for p in glob.glob(str(out / "*"))}
    assert encode_dataset(tok, paths, out, shard_tokens=5000) == m
    assert {p: os.stat(p).st_mtime_ns for p in glob.glob(str(out / "*"))} == before
    with pytest.raises(InputError, match="holds another dataset"):
        encode_dataset(tok, paths, out, shard_tokens=4000)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(InputError, match="exists and is not empty"):
        encode_dataset(tok, paths, tmp_path / "full")
    (tmp_path / "empty").mkdir()
    encode_dataset(tok, paths, tmp_path / "empty")
    assert (tmp_path / "empty" / "manifest.json").exists()


def test_partial_run_with_other_settings_is_refused(tmp_path, tok, monkeypatch):
    paths, _ = make_inputs(str(tmp_path))
    with monkeypatch.context() as m:
        crash_at(m, 4)
        with pytest.raises(Crash):
            encode_dataset(tok, paths, tmp_path / "out", shard_tokens=100)
    with pytest.raises(InputError, match="an unfinished run with other inputs"):
        encode_dataset(tok, paths, tmp_path / "out", shard_tokens=200)
    with pytest.raises(InputError, match="an unfinished run with other inputs"):
        encode_dataset(tok, paths[:-1], tmp_path / "out", shard_tokens=100)


# ---------------------------------------------------------------- errors and CLI


def test_errors(tmp_path, tok):
    p = tmp_path / "a.txt"
    p.write_text("hello", encoding="utf-8")
    plain = Tokenizer.train("hello world", vocab_size=260)
    with pytest.raises(BytepairError, match="no <|endoftext|> special token"):
        encode_dataset(plain, [p], tmp_path / "o1", append_eot=True)
    with pytest.raises(BytepairError, match="is not a special token"):
        encode_dataset(tok, [p], tmp_path / "o2", append_eot="<|nope|>")
    with pytest.raises(InputError, match="standard input"):
        encode_dataset(tok, ["-"], tmp_path / "o3")
    with pytest.raises(InputError, match="no such file"):
        encode_dataset(tok, [tmp_path / "missing.txt"], tmp_path / "o4")
    with pytest.raises(InputError, match="does not exist"):
        encode_dataset(tok, [p], tmp_path / "no" / "o5")
    char = Tokenizer.train("abc abc", model="char")
    q = tmp_path / "q.jsonl"
    q.write_text('{"text": "abc"}\n{"text": "abz"}\n', encoding="utf-8")
    with pytest.raises(EncodeError, match="q.jsonl: document 1: character \"z\""):
        encode_dataset(char, [q], tmp_path / "o6")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff")
    with pytest.raises(InputError, match="invalid UTF-8 at byte offset 3"):
        encode_dataset(tok, [bad], tmp_path / "o7")
    m = encode_dataset(tok, [bad], tmp_path / "o8", errors="replace")
    assert next(documents(tmp_path / "o8")).tolist() == tok.encode_ordinary("ok \ufffd")
    assert m["documents"] == 1


def test_cli_encode_dataset(tmp_path, tok, capsys):
    paths, docs = make_inputs(str(tmp_path))
    tok.save(str(tmp_path / "tok.json"))
    out = tmp_path / "out"
    status = main(["encode-dataset", "-t", str(tmp_path / "tok.json"), *paths, "-o", str(out), "--append-eot",
                   "--shard-mb", "0.004", "--progress", "json"])
    err = capsys.readouterr().err
    assert status == 0, err
    assert f"encoded {len(docs)} documents" in err and '"stage": "encode"' in err
    m = json.load(open(out / "manifest.json"))
    assert m["shard_tokens"] == 2000 and m["eot_token"] == tok.eot_token
    got = list(documents(out))
    assert [g.tolist() for g in got] == [tok.encode_ordinary(d) + [tok.eot_token] for d in docs]
    # errors are one line
    status = main(["encode-dataset", "-t", str(tmp_path / "tok.json"), str(tmp_path / "nope.txt"), "-o",
                   str(tmp_path / "o2")])
    err = capsys.readouterr().err
    assert status == 1 and "no such file" in err and len(err.strip().splitlines()) == 1
