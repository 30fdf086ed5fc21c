"""Resource limits and kill safety.

1. Streaming encoding (``Tokenizer.encode_stream`` / ``encode_file`` /
   ``bytepair encode --input/-o``): random texts cut into random tiny blocks
   give exactly the ids (and errors) of ``encode`` on the whole text, for
   both models and every kind of pre-tokenizer.
2. ``max_memory``: training refuses, with a ``ResourceError``, a corpus
   whose estimated need exceeds the limit, before allocating it.
3. Kill safety: SIGKILL or SIGINT in the middle of ``bytepair train``,
   ``data count-words`` and ``data encode-dataset`` leaves the previous
   output byte-identical and no temporary file.

Peak-memory figures (a 1 GB document, the estimate against measured RSS)
are measured by ``benches/bench_memory.py``, not here.
"""

from __future__ import annotations

import dataclasses
import io
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer
from bytepair._io import read_text
from bytepair.cli import main
from bytepair.errors import BytepairError, InputError

PIECES = ["a", "b", "Z", "'s", "'", " ", "  ", "\n", "\r\n", "\t", "\x1c", "1", "234", ".", "!?", "é", "你",
          "<|", "<|eot|>", "|>", "<|e", "\u3000", "🙂", "ab", "ba", "the"]
SPECIALS = ["<|eot|>", "<|e"]
TRAIN_TEXT = ("the cat's 1234 toys <|eot|> ab ba aab bba. Zé 你好 🙂!\n\n" * 30)

# (model, pattern, extra training options); every kind of pre-tokenizer:
# str.split() (char model), the gpt2 and cl100k lexers, o200k and a custom regex
KINDS = {
    "char-split": ("char", None, {"byte_fallback": True}),
    "char-split-no-fallback": ("char", None, {}),
    "char-regex": ("char", r"\w+|[^\w\s]+|\s+", {"byte_fallback": True, "end_of_word_fused": True}),
    "byte-gpt2": ("byte", "gpt2", {}),
    "byte-cl100k": ("byte", "cl100k", {}),
    "byte-o200k": ("byte", "o200k", {}),
    "byte-custom": ("byte", r"\S+|\s+", {}),
    # Hugging Face's default ByteLevel(): a space before each stretch of text between special tokens
    "byte-hf-prefix-space": ("byte", "hf-gpt2", {}),
}


@pytest.fixture(scope="module")
def toks():
    import warnings

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (model, pattern, extra) in KINDS.items():
            if pattern == "hf-gpt2":
                from bytepair.formats.hf import HF_GPT2_PATTERN as pattern
            out[name] = Tokenizer.train(TRAIN_TEXT, model=model, pattern=pattern, num_merges=60,
                                        special_tokens=SPECIALS, **extra)
    out["byte-hf-prefix-space"] = Tokenizer.from_spec(
        dataclasses.replace(out["byte-hf-prefix-space"].spec, add_prefix_space=True))
    return out


OPTIONS = [
    {"allowed_special": "all"},
    {"allowed_special": {"<|eot|>"}},  # "<|e" stays disallowed
    {"allowed_special": set(), "disallowed_special": ()},  # encode_ordinary
    {"allowed_special": set(), "disallowed_special": {"<|e", "|>"}},  # an explicit set, with a non-special string
    {"allowed_special": {"<|e"}, "disallowed_special": ()},
    {"allowed_special": "all", "dropout": 0.3, "seed": 5},
]


def outcome(fn):
    """The ids, or the error's class and message."""
    try:
        return fn()
    except BytepairError as e:
        return (type(e).__name__, str(e))


def cut(text: str, sizes):
    """``text`` in consecutive blocks of the given sizes (cycled)."""
    out, i, k = [], 0, 0
    while i < len(text):
        out.append(text[i : i + sizes[k % len(sizes)]])
        i += sizes[k % len(sizes)]
        k += 1
    return out


texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
block_sizes = st.lists(st.integers(1, 9), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, sizes=block_sizes, kind=st.sampled_from(sorted(KINDS)), opt=st.sampled_from(range(len(OPTIONS))))
def test_stream_equals_whole_text(toks, text, sizes, kind, opt):
    tok, options = toks[kind], OPTIONS[opt]
    whole = outcome(lambda: tok.encode(text, **options))
    streamed = outcome(lambda: [i for ids in tok.encode_stream(cut(text, sizes), **options) for i in ids])
    assert streamed == whole


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, block=st.integers(1, 9), kind=st.sampled_from(sorted(KINDS)), opt=st.sampled_from(range(len(OPTIONS))),
       fmt=st.sampled_from(["npy", "text"]))
def test_encode_file_equals_whole_text(toks, text, block, kind, opt, fmt):
    """Bytes read ``block`` at a time (characters cut in the middle)."""
    import numpy as np

    tok, options = toks[kind], OPTIONS[opt]
    whole = outcome(lambda: tok.encode(text, **options))
    out = io.BytesIO()
    n = outcome(lambda: tok.encode_file(io.BytesIO(text.encode()), out, block_bytes=block, format=fmt, **options))
    if isinstance(whole, tuple):
        assert n == whole
        return
    ids = np.load(io.BytesIO(out.getvalue())).tolist() if fmt == "npy" else [int(w) for w in out.getvalue().split()]
    assert (n, ids) == (len(whole), whole)
    if fmt == "npy":
        assert np.load(io.BytesIO(out.getvalue())).dtype == np.uint16
    else:
        assert out.getvalue().endswith(b"\n") and out.getvalue().count(b"\n") == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(st.sampled_from([b"a", b" ", b"\xc3\xa9", b"\xe4\xbd\xa0", b"\xff", b"\xc3", b"\x80", b"\n",
                                       b"\xf0\x9f\x99\x82", b"<|eot|>"]), max_size=30).map(b"".join),
       block=st.integers(1, 7), errors=st.sampled_from(["strict", "replace"]), kind=st.sampled_from(sorted(KINDS)))
def test_invalid_utf8_as_the_cli_reads_it(toks, tmp_path_factory, data, block, errors, kind):
    """Invalid UTF-8: the error (file name, byte offset) or the replaced text
    of the existing whole-file reading (``_io.read_text``)."""
    tok = toks[kind]
    path = tmp_path_factory.mktemp("u") / "in.txt"
    path.write_bytes(data)
    whole = outcome(lambda: tok.encode(read_text(path, errors), allowed_special="all"))
    out = io.BytesIO()
    streamed = outcome(lambda: tok.encode_file(str(path), out, block_bytes=block, errors=errors, format="text",
                                               allowed_special="all"))
    if isinstance(whole, tuple):
        assert streamed == whole
    else:
        assert [int(w) for w in out.getvalue().split()] == whole


def test_lone_surrogates_are_replaced_as_encode_does(toks):
    tok = toks["byte-cl100k"]
    text = "a\ud83d\ude42b \ud800 c"  # a surrogate pair (as Python may hold it) and a lone one
    for sizes in ([1], [2], [3], [100]):
        assert [i for ids in tok.encode_stream(cut(text, sizes)) for i in ids] == tok.encode(text)


def test_unknown_character_error_names_the_position_in_the_whole_text(toks):
    tok = toks["char-split-no-fallback"]
    text = "the cat " * 50 + "the Q cat"
    with pytest.raises(BytepairError) as whole:
        tok.encode(text)
    with pytest.raises(BytepairError) as streamed:
        for _ in tok.encode_stream(cut(text, [7])):
            pass
    assert str(streamed.value) == str(whole.value) and "position 404" in str(whole.value)


def test_one_huge_word_is_linear(toks):
    """A 4 MB text without a space in 1 KB blocks: the stream waits for the
    word's end without rescanning it at every block (the settling is only
    tried again once the held text has doubled)."""
    import time

    tok = toks["char-split"]
    text = "ab" * (2 << 20) + " the"
    t0 = time.perf_counter()
    whole = tok.encode(text)
    t_whole = time.perf_counter() - t0
    t0 = time.perf_counter()
    streamed = [i for ids in tok.encode_stream(cut(text, [1024])) for i in ids]
    t_stream = time.perf_counter() - t0
    assert streamed == whole
    # quadratic rescanning would cost 4096 blocks x 2 MB on average: minutes, not ~ the whole-text time
    assert t_stream < 10 * t_whole + 2


# ---------------------------------------------------------------- the CLI


@pytest.fixture()
def tok_file(tmp_path, toks):
    path = tmp_path / "tok.json"
    toks["byte-cl100k"].save(str(path))
    return path


def test_cli_input_output_npy_and_text(tmp_path, tok_file, toks, capsys):
    import numpy as np

    tok = toks["byte-cl100k"]
    text = TRAIN_TEXT * 20
    src = tmp_path / "doc.txt"
    src.write_text(text, encoding="utf-8")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(tmp_path / "ids.npy"),
                 "--allowed-special", "all"]) == 0
    assert np.load(tmp_path / "ids.npy").tolist() == tok.encode(text, allowed_special="all")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(tmp_path / "ids.txt"), "--ordinary"]) == 0
    assert (tmp_path / "ids.txt").read_text() == " ".join(map(str, tok.encode_ordinary(text))) + "\n"
    out = io.StringIO()
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "--ordinary"], out=out) == 0
    assert out.getvalue() == (tmp_path / "ids.txt").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.txt", "ids.npy", "ids.txt", "tok.json"]


@pytest.mark.parametrize("content, message", [
    (b"ok " * 1000 + b"\xff", "invalid UTF-8 at byte offset 3000 (line 1, byte 0xFF)"),
    ("the <|eot|> end".encode(), "pass --allowed-special"),
])
def test_cli_errors_leave_no_output(tmp_path, tok_file, capsys, content, message):
    src = tmp_path / "doc.txt"
    src.write_bytes(content)
    out = tmp_path / "ids.npy"
    out.write_bytes(b"previous")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.txt", "ids.npy", "tok.json"]


def test_cli_replace(tmp_path, tok_file, toks):
    src = tmp_path / "doc.txt"
    src.write_bytes(b"caf\xff \xc3")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(tmp_path / "ids.txt"),
                 "--errors", "replace"]) == 0
    assert (tmp_path / "ids.txt").read_text().split() == [str(i) for i in toks["byte-cl100k"].encode("caf\ufffd \ufffd")]


def test_cli_usage(tmp_path, tok_file, capsys):
    with pytest.raises(SystemExit) as e:
        main(["encode", "-t", str(tok_file), "TEXT", "--input", "x.txt"])
    assert e.value.code == 2
    assert main(["encode", "-t", str(tok_file), "--input", "-", "--to", "npy"]) == 1
    assert "-o OUT.npy" in capsys.readouterr().err


def test_uint32_when_the_vocabulary_is_large():
    import numpy as np
    import warnings

    words = {f"w{i:05d}x": 1 for i in range(70_000)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = Tokenizer.train(words, vocab_size=66_000, pattern=r"\S+|\s+")
    out = io.BytesIO()
    text = " ".join(tok.decode([i]) for i in range(65_990, 66_000)) + " " + " ".join(random.Random(0).sample(sorted(words), 500))
    tok.encode_file(io.BytesIO(text.encode()), out, format="npy", block_bytes=100)
    a = np.load(io.BytesIO(out.getvalue()))
    assert a.dtype == np.uint32 and a.tolist() == tok.encode(text) and max(a) >= 65536


# ---------------------------------------------------------------- max_memory

import bytepair.limits as limits  # noqa: E402
from bytepair.errors import ResourceError  # noqa: E402

CORPUS = " ".join(f"word{i} the cat sat on mat{i % 97}" for i in range(3000))


def test_estimate_follows_the_table_sizes():
    """256 bytes a distinct word + 20 an initial symbol, the sizes counted
    here independently of the core."""
    from bytepair.counts import count_words  # noqa: F401
    from bytepair.training import _count_words
    from bytepair.patterns import resolve_pattern

    words = CORPUS.split() + ["naïve", "你好"]
    text = " ".join(words)
    distinct = list(dict.fromkeys(words))
    char_counts = _count_words(text, None, [])
    n_chars = sum(len(w) for w in distinct)
    per_word, per_symbol = limits.BYTES_PER_WORD, limits.BYTES_PER_SYMBOL
    assert limits.estimate_training_bytes(char_counts, "char", "</w>", False) == \
        per_word * len(distinct) + per_symbol * (n_chars + len(distinct))
    assert limits.estimate_training_bytes(char_counts, "char", "</w>", True) == \
        per_word * len(distinct) + per_symbol * n_chars
    byte_counts = _count_words(text, resolve_pattern("cl100k"), [])
    pieces = list(dict.fromkeys(w for w, _ in byte_counts.items()))
    assert limits.estimate_training_bytes(byte_counts, "byte") == \
        per_word * len(pieces) + per_symbol * sum(len(p.encode()) for p in pieces)


@pytest.mark.parametrize("model", ["byte", "char"])
def test_tiny_max_memory_is_a_resource_error(model):
    with pytest.raises(ResourceError) as e:
        Tokenizer.train(CORPUS, model=model, num_merges=50, max_memory=10_000)
    message = str(e.value)
    assert "needs about" in message and "max_memory is 10.0 KB" in message and "max_bytes=" in message
    assert "train_from_counts" in message and "\n" not in message and "--" not in message


@pytest.mark.parametrize("model", ["byte", "char"])
def test_generous_max_memory_trains_normally(model):
    reference = Tokenizer.train(CORPUS, model=model, num_merges=50)
    assert Tokenizer.train(CORPUS, model=model, num_merges=50, max_memory="64G").merges == reference.merges
    assert Tokenizer.train(CORPUS, model=model, num_merges=50, max_memory="none").merges == reference.merges


def test_default_limit_is_the_available_memory(monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 1000)
    with pytest.raises(ResourceError, match=r"only 1\.0 KB is available \(MemAvailable\)"):
        Tokenizer.train(CORPUS, num_merges=5)
    monkeypatch.setattr(limits, "available_memory", lambda: None)  # unreadable: no check
    assert len(Tokenizer.train(CORPUS, num_merges=5).merges) == 5


def test_continued_training_is_checked_too():
    tok = Tokenizer.train(CORPUS, num_merges=5)
    with pytest.raises(ResourceError):
        Tokenizer.train(CORPUS, init=tok, num_merges=5, max_memory=1000)


@pytest.mark.parametrize("bad", ["lots", "-5G", 0, -1, True, 1.5])
def test_bad_max_memory_values(bad):
    with pytest.raises(ResourceError):
        Tokenizer.train({"ab": 1}, max_memory=bad)


def test_parse_memory():
    assert limits.parse_memory("2GiB") == 2 * 2**30 and limits.parse_memory("1.5g") == 1_500_000_000
    assert limits.parse_memory("100MB") == 100_000_000 and limits.parse_memory("OFF") is None


def test_counting_stops_early_when_the_words_so_far_do_not_fit(tmp_path, monkeypatch):
    """train_from_files checks while counting: it stops long before the end."""
    import bytepair.counts as counts

    monkeypatch.setattr(counts, "_CHECK_EVERY", 10_000)
    path = tmp_path / "c.jsonl"
    with open(path, "w") as fh:
        for i in range(20_000):
            letters = "".join(chr(97 + (i // 26**k) % 26) for k in range(4))
            fh.write('{"text": "%s and some more words %s"}\n' % (letters, letters[::-1].upper()))
    with pytest.raises(ResourceError, match="words counted so far") as e:
        Tokenizer.train_from_files([str(path)], num_merges=10, max_memory=limits.process_memory() + 1_000_000)
    import re

    so_far = int(re.search(r"\(([\d,]+) distinct words", str(e.value)).group(1).replace(",", ""))
    total = len(Tokenizer.train_from_files([str(path)], num_merges=10, max_memory="none").merges) and \
        len(counts.count_words([str(path)], "cl100k"))
    assert 0 < so_far < total / 4


def test_cli_max_memory(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    out = tmp_path / "tok.json"
    out.write_bytes(b"previous")
    assert main(["train", str(corpus), "--merges", "20", "--max-memory", "10K", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("bytepair train: error: training needs about") and len(err.strip().splitlines()) == 1
    assert "--max-memory is 10.0 KB" in err and "--max-bytes" in err and "train --from-counts" in err
    assert out.read_bytes() == b"previous" and sorted(p.name for p in tmp_path.iterdir()) == ["c.txt", "tok.json"]
    assert main(["train", str(corpus), "--merges", "20", "--max-memory", "nonsense", "-o", str(out)]) == 1
    assert "not a size" in capsys.readouterr().err
    assert main(["train", str(corpus), "--merges", "20", "--max-memory", "8G", "-o", str(out)]) == 0
    assert Tokenizer.load(str(out)).merges == Tokenizer.train([CORPUS], num_merges=20).merges


# ---------------------------------------------------------------- kill safety

import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from childproc import default_sigint  # noqa: E402


def random_words(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join("".join(rng.choice(letters) for _ in range(rng.randint(3, 12))) for _ in range(n))


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory):
    """~3 MB of random words: merging to 150k tokens takes many seconds."""
    path = tmp_path_factory.mktemp("big") / "big.txt"
    path.write_text(random_words(400_000), encoding="utf-8")
    return path


def listing(folder):
    return sorted(p.name for p in folder.iterdir())


def interrupt_at(argv, stage, sig, timeout=120):
    """Runs ``python -m bytepair ARGV --progress json``, sends ``sig`` when
    the first JSON progress line of ``stage`` appears, returns the exit
    status (the run must not have finished by itself)."""
    proc = subprocess.Popen([sys.executable, "-m", "bytepair", *map(str, argv), "--progress", "json"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            preexec_fn=default_sigint)
    try:
        for line in proc.stderr:
            if line.startswith("{") and f'"stage": "{stage}"' in line:
                break
        proc.send_signal(sig)
        rest = proc.stderr.read()
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    expected = -signal.SIGKILL if sig == signal.SIGKILL else 130
    assert proc.returncode == expected, f"exit status {proc.returncode}: the run was not interrupted mid-way\n{rest}"
    assert "Traceback" not in rest
    return proc.returncode


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_kill_during_training_keeps_the_previous_tokenizer(tmp_path, big_corpus, sig):
    out = tmp_path / "tok.json"
    Tokenizer.train(random_words(500, seed=1), num_merges=20).save(str(out))
    before, names = out.read_bytes(), listing(tmp_path)
    interrupt_at(["train", big_corpus, "--vocab-size", 150_000, "-o", out], "merge", sig)
    assert out.read_bytes() == before
    assert listing(tmp_path) == names  # no temporary file


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_kill_during_count_words_keeps_the_previous_counts(tmp_path, big_corpus, sig):
    from bytepair.counts import count_words, save_counts

    out = tmp_path / "c.counts"
    save_counts(out, count_words([str(big_corpus)], "cl100k", max_bytes=10_000), "cl100k")
    before, names = out.read_bytes(), listing(tmp_path)
    # 15 x 3 MB: the first progress line comes after 4 MB, long before the end
    interrupt_at(["count-words", *[big_corpus] * 15, "-o", out], "count", sig)
    assert out.read_bytes() == before
    assert listing(tmp_path) == names


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_kill_during_encode_dataset_then_resume(tmp_path, big_corpus, sig):
    """Killed once shards are being written: no OUTDIR appears; a temporary
    file left by the kill (planted here, as a SIGKILL in the middle of a
    write leaves one) is gone after the resumed run, whose shards equal an
    uninterrupted run's."""
    tok_path = tmp_path / "tok.json"
    Tokenizer.train(random_words(5000, seed=2), num_merges=200, special_tokens=["<|endoftext|>"]).save(str(tok_path))
    out = tmp_path / "out"
    argv = ["encode-dataset", "-t", tok_path, *[big_corpus] * 2, "-o", out, "--shard-mb", "0.2", "--append-eot"]
    proc = subprocess.Popen([sys.executable, "-m", "bytepair", *map(str, argv)], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, preexec_fn=default_sigint)
    marker = tmp_path / "out.partial" / "shard_000002.json"
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert proc.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 130), proc.stderr.read()
    assert not out.exists()
    (tmp_path / "out.partial" / ".bytepair-stale.tmp").write_bytes(b"half a shard")
    assert main([str(a) for a in argv]) == 0
    ref = tmp_path / "ref"
    assert main([str(a) for a in argv[:-5]] + ["-o", str(ref), "--shard-mb", "0.2", "--append-eot"]) == 0
    assert listing(out) == listing(ref) and not [n for n in listing(out) if n.startswith(".bytepair-")]
    for name in listing(ref):
        if name.endswith(".npy"):
            assert (out / name).read_bytes() == (ref / name).read_bytes()


def test_cli_encode_progress_and_count_are_streamed(tmp_path, tok_file, toks, capsys):
    import json

    text = TRAIN_TEXT * 3000  # ~170 KB in 1 MB blocks is one block; use a small block size through the API
    src = tmp_path / "doc.txt"
    src.write_text(text, encoding="utf-8")
    seen = []
    n = toks["byte-cl100k"].encode_file(str(src), str(tmp_path / "ids.txt"), block_bytes=10_000, allowed_special="all",
                                        progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert n == len(toks["byte-cl100k"].encode(text, allowed_special="all"))
    size = len(text.encode())
    assert seen[-1] == ("encode", size, size) and len(seen) > 10
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(tmp_path / "ids.npy"),
                 "--allowed-special", "all", "--progress", "json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().err.splitlines() if x.startswith("{")]
    assert lines and lines[-1]["stage"] == "encode" and lines[-1]["done"] == size
    out = io.StringIO()
    assert main(["count", "-t", str(tok_file), str(src)], out=out) == 0
    assert out.getvalue() == f"{toks['byte-cl100k'].count(text)}\t{src}\n"


def test_counting_one_huge_word_is_linear(tmp_path, monkeypatch):
    """8 MB without a space, read in 1 KB blocks: counted like the whole text,
    without rescanning the held word at every block (which took minutes)."""
    import time

    import bytepair.corpus as corpus
    from bytepair.counts import count_words
    from bytepair.training import _count_words

    text = "ab" * (4 << 20) + " the end"
    path = tmp_path / "word.txt"
    path.write_text(text, encoding="ascii")
    t0 = time.perf_counter()
    whole = _count_words(text, None, []).items()
    t_whole = time.perf_counter() - t0
    monkeypatch.setattr(corpus, "BLOCK_BYTES", 1024)
    t0 = time.perf_counter()
    streamed = count_words([str(path)], None).items()
    t_stream = time.perf_counter() - t0
    assert streamed == whole == [("ab" * (4 << 20), 1), ("the", 1), ("end", 1)]
    assert t_stream < 20 * t_whole + 3
