"""What a user meets on the command line: an output that cannot be written
fails before the work and names the user's path; a closed pipe ends quietly;
defaults and names follow the peers' (Hugging Face's vocabulary size, HF's
``tokenizer.json`` name, tiktoken's encoding names, ``--format``); unknown
options print the command's usage; typos in ``--allowed-special`` are
refused; progress totals and logs; messages in the CLI's own spelling;
``serve``'s 405 and first line; ``tokenize``'s pieces as tiktoken gives them."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from bytepair import Tokenizer
from bytepair._io import atomic_write_text
from bytepair.encodings import ENCODINGS
from bytepair.errors import InputError
from bytepair.formats import detect
from cli_runner import run
from conftest import write_tokenizer_json_with_moved_added_tokens

TEXT = "the cat sat on the mat. the dog sat on the log! <|endoftext|> naïve café 🙂\n" * 20
UNWRITABLE = "/sys/bytepair-test-out"  # sysfs: no file can be created there, not even by root


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture()
def model(tmp_path, corpus):
    out = tmp_path / "tok.json"
    assert run("train", corpus, "--vocab-size", 300, "--special", "<|endoftext|>", "-o", out)[0] == 0
    return out


# ---------------------------------------------------------------- outputs checked before the work


def _writing_commands(d):
    """Every command that writes a file or folder, with its output at ``{out}``."""
    tok, corpus = d["model"], d["corpus"]
    return {
        "train": ["train", corpus, "--vocab-size", "300", "-o", "{out}.json"],
        "train-gpt2": ["train", corpus, "--vocab-size", "300", "--to", "gpt2", "-o", "{out}"],
        "encode": ["encode", "-t", tok, "-i", corpus, "-o", "{out}.npy"],
        "chunk": ["chunk", "-t", tok, corpus, "-n", "20", "-o", "{out}.jsonl"],
        "convert": ["convert", tok, "{out}-tokenizer.json"],
        "convert-transformers": ["convert", tok, "{out}", "--to", "transformers"],
        "count-words": ["count-words", corpus, "-o", "{out}.counts"],
        "encode-dataset": ["encode-dataset", "-t", tok, corpus, "-o", "{out}"],
        "show": ["show", "-t", tok, "the cat", "--html", "{out}.html"],
        "compare": ["compare", "-t", tok, corpus, "--plot", "{out}.png"],
    }


COMMANDS_THAT_WRITE = ["train", "train-gpt2", "encode", "chunk", "convert", "convert-transformers", "count-words",
                       "encode-dataset", "show", "compare"]


@pytest.mark.parametrize("name", COMMANDS_THAT_WRITE)
def test_an_unwritable_output_fails_before_the_work_naming_the_users_path(name, model, corpus, monkeypatch, capsys):
    argv = [str(a).format(out=UNWRITABLE) for a in _writing_commands({"model": model, "corpus": corpus})[name]]
    output = next(a for a in argv if a.startswith(UNWRITABLE))

    def no_work(*args, **kwargs):
        raise AssertionError("the work started before the output was checked")

    # reading the corpus or the tokenizer is the start of the work
    monkeypatch.setattr(Tokenizer, "load", no_work)
    monkeypatch.setattr(Tokenizer, "train_from_files", no_work)
    capsys.readouterr()
    status, out = run(*argv)
    err = capsys.readouterr().err
    assert status == 1 and out == "", err
    assert f"cannot write {output}" in err and ".tmp" not in err and ".bytepair-" not in err
    assert len(err.splitlines()) == 1


def test_atomic_writes_name_the_users_path():
    with pytest.raises(InputError) as e:
        atomic_write_text(UNWRITABLE + ".txt", "x")
    assert f"cannot write {UNWRITABLE}.txt" in str(e.value) and ".tmp" not in str(e.value)


# ---------------------------------------------------------------- a closed pipe


@pytest.mark.parametrize("argv", [
    ["inspect", "-t", "{tok}"],
    ["inspect", "-t", "{tok}", "--vocab"],
    ["encode", "-t", "{tok}", "the cat"],
    ["encode", "-t", "{tok}", "-i", "{corpus}", "--ordinary"],
    ["tokenize", "-t", "{tok}", "the cat"],
    ["explain", "-t", "{tok}", "the cat"],
    ["chunk", "-t", "{tok}", "{corpus}", "-n", "20"],
    ["count", "-t", "{tok}", "{corpus}"],
    ["decode", "-t", "{tok}", "1", "2"],
])
def test_a_closed_pipe_ends_quietly(argv, model, corpus):
    """``bytepair inspect ... | head -1``: no message, the status of a
    program that SIGPIPE ends (what the shell reports for ``cat``)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([sys.executable, "-m", "bytepair", *[a.format(tok=model, corpus=corpus) for a in argv]],
                              stdout=write_end, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=60)
    finally:
        os.close(write_end)
    assert proc.stderr == b"" and proc.returncode == 128 + 13, proc.stderr.decode()
    # the status of cat in the same place
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        cat = subprocess.run(["cat", str(corpus)], stdout=write_end, stderr=subprocess.DEVNULL, timeout=60)
    finally:
        os.close(write_end)
    assert cat.returncode in (-13, 128 + 13)


# ---------------------------------------------------------------- train's default size


def test_train_without_a_size_uses_hugging_faces_default(corpus, tmp_path, monkeypatch, capsys):
    trainers = pytest.importorskip("tokenizers.trainers")  # in the test extra: never skipped in CI
    expected = trainers.BpeTrainer().vocab_size
    seen = {}
    real = Tokenizer.train_from_files

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(Tokenizer, "train_from_files", spy)
    assert run("train", corpus, "-o", tmp_path / "t.json")[0] == 0
    assert seen["vocab_size"] == expected
    with pytest.raises(SystemExit):
        run("train", "--help")
    assert re.search(rf"default\s+{expected}\b", capsys.readouterr().out)
    # --merges alone still means that many merges
    assert run("train", corpus, "--merges", "5", "-o", tmp_path / "m.json")[0] == 0
    assert len(Tokenizer.load(str(tmp_path / "m.json")).merges) == 5


def test_init_without_a_size_is_refused(model, corpus, tmp_path, capsys):
    assert run("train", corpus, "--init", model, "-o", tmp_path / "t.json")[0] == 1
    err = capsys.readouterr().err
    assert "--vocab-size" in err and "--merges" in err and not (tmp_path / "t.json").exists()


# ---------------------------------------------------------------- count --limit


def test_count_limit_is_the_apis(model, corpus, tmp_path):
    tok = Tokenizer.load(str(model))
    second = tmp_path / "short.txt"
    second.write_text("the cat", encoding="utf-8")
    for limit in (0, 3, tok.count(TEXT) - 1, tok.count(TEXT), 10**9):
        status, out = run("count", "-t", model, corpus, second, "--limit", limit, "--json")
        assert status == 0
        files = json.loads(out)["files"]
        assert files == {str(corpus): tok.count(TEXT, limit=limit), str(second): tok.count("the cat", limit=limit)}


def test_count_limit_must_not_be_negative(model, corpus, capsys):
    assert run("count", "-t", model, corpus, "--limit", "-1")[0] == 1
    assert "--limit" in capsys.readouterr().err


# ---------------------------------------------------------------- names


def test_encode_dataset_takes_format_for_the_tokenizer(model, corpus, tmp_path, capsys):
    np = pytest.importorskip("numpy")
    tok = Tokenizer.load(str(model))
    want = tok.encode_ordinary(TEXT)
    assert run("encode-dataset", "-t", model, "--format", "bytepair", corpus, "-o", tmp_path / "a", "--to", "u32")[0] == 0
    assert np.memmap(tmp_path / "a" / "shard_000000.u32", dtype=np.uint32, mode="r").tolist() == want
    # the earlier spellings still work: --tokenizer-format, and --format with a shard format
    assert run("encode-dataset", "-t", model, "--tokenizer-format", "bytepair", corpus, "-o", tmp_path / "b",
               "--format", "u32")[0] == 0
    assert np.memmap(tmp_path / "b" / "shard_000000.u32", dtype=np.uint32, mode="r").tolist() == want
    assert "--to u32" in capsys.readouterr().err
    # but --tokenizer-format is no longer advertised
    with pytest.raises(SystemExit):
        run("encode-dataset", "--help")
    help_text = capsys.readouterr().out
    assert "--tokenizer-format" not in help_text and "--format" in help_text and "--to" in help_text


@pytest.mark.parametrize("name", ["tokenizer.json", "y-tokenizer.json", "gpt2_tokenizer.json"])
def test_convert_writes_hugging_faces_format_for_names_ending_in_tokenizer_json(name, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")  # in the test extra: never skipped in CI
    tok = Tokenizer.train(TEXT, vocab_size=280, pattern="gpt2", special_tokens=["<|endoftext|>"])
    source = tmp_path / "x.json"
    tok.save(str(source))
    out = tmp_path / name
    assert run("convert", source, out)[0] == 0
    assert detect(str(out)) == "hf"
    theirs = tokenizers.Tokenizer.from_file(str(out))
    text = "the cat sat on the log, naïve 🙂"
    assert theirs.encode(text).ids == tok.encode(text)
    # other .json names stay native
    assert run("convert", out, tmp_path / "tok.json")[0] == 0
    assert detect(str(tmp_path / "tok.json")) == "bytepair"


@pytest.mark.parametrize("name, fmt", [("tokenizer.json", "hf"), ("x-tokenizer.json", "hf"), ("tok.json", "bytepair"),
                                       ("tok.tiktoken", "tiktoken")])
def test_train_writes_the_format_of_outs_name_as_convert_does(name, fmt, corpus, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")  # in the test extra: never skipped in CI
    out = tmp_path / name
    assert run("train", corpus, "--vocab-size", "280", "--special", "<|endoftext|>", "-o", out)[0] == 0
    assert detect(str(out)) == fmt
    ours = Tokenizer.train([TEXT], vocab_size=280, special_tokens=["<|endoftext|>"])
    text = "the cat sat on the log, naïve 🙂"
    if fmt == "hf":
        assert tokenizers.Tokenizer.from_file(str(out)).encode(text).ids == ours.encode(text)
    else:
        assert Tokenizer.load(str(out), pattern=ours.pattern).encode(text) == ours.encode(text)
    # --to still wins over the name
    assert run("train", corpus, "--vocab-size", "280", "--to", "bytepair", "-o", tmp_path / "y-tokenizer.json")[0] == 0
    assert detect(str(tmp_path / "y-tokenizer.json")) == "bytepair"


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@pytest.fixture()
def tiktoken_cache(tmp_path, monkeypatch, vocab_paths):
    """tiktoken's cache (TIKTOKEN_CACHE_DIR) with the real cl100k file under tiktoken's name; no network."""
    tiktoken = pytest.importorskip("tiktoken")  # in the test extra: never skipped in CI
    import tiktoken.load
    import tiktoken.registry
    folder = tmp_path / "tiktoken-cache"
    folder.mkdir()
    shutil.copy(vocab_paths["cl100k_base.tiktoken"], folder / _sha1(ENCODINGS["cl100k_base"].url))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)

    def refuse(*args, **kwargs):
        raise AssertionError(f"download attempted: {args[:1]}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(tiktoken.load, "read_file", refuse)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    return tiktoken


def test_t_takes_tiktokens_encoding_names(tiktoken_cache, tmp_path, monkeypatch, capsys):
    enc = tiktoken_cache.get_encoding("cl100k_base")
    text = "hello world <|endoftext|> naïve 🙂 12345"
    status, out = run("encode", "-t", "cl100k_base", "--allowed-special", "all", "--", text)
    assert status == 0 and out.split() == [str(i) for i in enc.encode(text, allowed_special="all")]
    assert run("count", "-t", "cl100k_base", stdin=text.encode())[1].split("\t")[0] == str(len(enc.encode_ordinary(text)))
    # the name brings its own pattern: another one is a contradiction
    assert run("encode", "-t", "cl100k_base", "--pattern", "gpt2", "x")[0] == 1
    assert "--pattern" in capsys.readouterr().err
    # a file of that name in the way is the file
    here = tmp_path / "here"
    here.mkdir()
    Tokenizer.train(TEXT, vocab_size=270).save(str(here / "cl100k_base"))
    monkeypatch.chdir(here)
    mine = Tokenizer.load("cl100k_base").encode("the cat")
    assert mine != enc.encode("the cat")
    assert run("encode", "-t", "cl100k_base", "the cat")[1].split() == [str(i) for i in mine]


def test_a_missing_encoding_file_says_what_works_on_the_cli(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: pytest.fail("download attempted"))
    assert run("encode", "-t", "o200k_base", "x")[0] == 1
    err = capsys.readouterr().err
    assert "o200k_base.tiktoken is not on this machine" in err and "download=True" not in err


# ---------------------------------------------------------------- usage and typos


@pytest.mark.parametrize("command", ["count", "train", "encode-dataset", "serve"])
def test_unknown_options_print_the_commands_usage(command, capsys):
    with pytest.raises(SystemExit) as e:
        run(command, "-t", "tok.json", "-o", "x", "a.txt", "--no-such-option")
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith(f"usage: bytepair {command} ") and "--no-such-option" in err


@pytest.mark.parametrize("command", ["encode", "show"])
@pytest.mark.parametrize("typo", ["al", "<|endoftxt|>"])
def test_typos_in_allowed_special_are_refused(command, typo, model, capsys):
    capsys.readouterr()
    status, out = run(command, "-t", model, "--allowed-special", typo, "a <|endoftext|> b")
    err = capsys.readouterr().err
    assert status == 1 and out == ""
    assert f"--allowed-special {typo}:" in err and "(known: all, <|endoftext|>)" in err
    # the right names still work
    assert run(command, "-t", model, "--allowed-special", "<|endoftext|>", "a <|endoftext|> b")[0] == 0


# ---------------------------------------------------------------- progress


def test_the_count_total_is_the_capped_size(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT * 10, encoding="utf-8")
    assert os.path.getsize(corpus) > 5000
    assert run("train", corpus, "--merges", "5", "--max-bytes", "5000", "--progress", "json", "-o", tmp_path / "t.json")[0] == 0
    counts = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith('{"stage": "count"')]
    assert counts and {c["total"] for c in counts} == {5000} and counts[-1]["done"] == 5000


def test_no_escape_codes_in_a_log(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT * 10, encoding="utf-8")
    log = tmp_path / "log.txt"
    with open(log, "wb") as f:
        subprocess.run([sys.executable, "-m", "bytepair", "train", str(corpus), "--merges", "20", "--progress", "bar",
                        "-o", str(tmp_path / "t.json")], stderr=f, stdout=subprocess.DEVNULL, check=True, timeout=60)
    text = log.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\r" not in text
    assert "merge: 20/20 merges (100%)" in text.splitlines()


# ---------------------------------------------------------------- each side's spelling


def test_messages_name_the_cli_options_on_the_cli_and_the_parameters_in_python(corpus, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"the cat \xff sat")
    with pytest.raises(InputError) as e:
        Tokenizer.train_from_files([str(bad)])
    assert "errors='replace'" in str(e.value) and "--errors" not in str(e.value)
    capsys.readouterr()
    assert run("train", bad, "--merges", "3", "-o", tmp_path / "t.json")[0] == 1
    err = capsys.readouterr().err
    assert "--errors replace" in err and "errors='replace'" not in err
    assert run("train", corpus, "--vocab-size", "10", "-o", tmp_path / "t.json")[0] == 1
    err = capsys.readouterr().err
    assert "--vocab-size 10" in err and "vocab_size" not in err


def test_library_messages_name_parameters_and_the_cli_names_options(corpus, tmp_path, capsys):
    from bytepair.counts import count_words, save_counts
    from bytepair.dataset import encode_dataset
    from bytepair.distributed import connect
    from bytepair.errors import BytepairError

    split_counts = tmp_path / "split.counts"
    save_counts(split_counts, count_words([corpus]), None)  # counted with str.split(): no regex for the byte model
    no_eot = tmp_path / "no-eot.json"
    Tokenizer.train(TEXT, num_merges=5).save(str(no_eot))
    out = tmp_path / "out"
    cases = [  # (the call, its command, what Python says, what the CLI says)
        (lambda: Tokenizer.train_from_files([str(corpus)], num_merges=5, max_memory=1000),
         ["train", corpus, "--merges", "5", "--max-memory", "1000", "-o", out],
         ["max_bytes=", "client=", "Tokenizer.train_from_counts", "max_memory='none'"],
         ["--max-bytes", "--dask", "bytepair count-words", "count-words --merge", "train --from-counts",
          "--max-memory none"]),
        (lambda: Tokenizer.train_from_counts(str(split_counts), num_merges=5),
         ["train", "--from-counts", split_counts, "-o", out], ["pattern=", "model='char'"], ["--pattern", "--model char"]),
        (lambda: encode_dataset(Tokenizer.load(str(no_eot)), [corpus], out, append_eot=True),
         ["encode-dataset", "-t", no_eot, corpus, "-o", out, "--append-eot"], ["append_eot='TOK'"], ["--eot-token TOK"]),
        (lambda: connect("local:0").__enter__(), ["count-words", corpus, "--dask", "local:0", "-o", out],
         ["address='local:0'"], ["--dask local:0"]),
    ]
    for call, argv, api_names, cli_names in cases:
        with pytest.raises(BytepairError) as e:
            call()
        message = str(e.value)
        assert all(name in message for name in api_names) and " --" not in message and "(--" not in message, message
        capsys.readouterr()
        assert run(*argv)[0] == 1
        err = capsys.readouterr().err
        assert all(name in err for name in cli_names) and not any(name in err for name in api_names), err
        assert not out.exists()


# ---------------------------------------------------------------- serve


@pytest.fixture()
def served(model):
    from bytepair.cli.serve import make_server

    server = make_server({"tok.json": Tokenizer.load(str(model))}, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("method, path, allowed", [("GET", "api/tokenize", "POST"), ("GET", "api/explain", "POST"),
                                                   ("POST", "api/tokenizers", "GET")])
def test_the_wrong_method_is_405_naming_the_right_one(served, method, path, allowed):
    request = urllib.request.Request(served.url + path, method=method, data=b"{}" if method == "POST" else None,
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(request, timeout=10)
    assert e.value.code == 405
    assert allowed in e.value.headers["Allow"]
    assert f"use {allowed}" in json.loads(e.value.read())["error"]


def test_serves_first_line_is_the_address(model):
    proc = subprocess.Popen([sys.executable, "-m", "bytepair", "serve", "-t", str(model), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        box = {}
        reader = threading.Thread(target=lambda: box.setdefault("line", proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout=30)
        line = box.get("line", b"").decode()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\n", line), line
        with urllib.request.urlopen(line.strip() + "api/tokenizers", timeout=10) as r:
            assert json.load(r)["tokenizers"][0]["name"] == "tok.json"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


# ---------------------------------------------------------------- tokenize


def _unescape(line: str) -> bytes:
    """A line of ``bytepair tokenize`` back to the piece's bytes."""
    out = bytearray()
    i = 0
    while i < len(line):
        if line[i] == "\\":
            kind = line[i + 1]
            if kind == "x":
                out.append(int(line[i + 2:i + 4], 16))
                i += 4
                continue
            if kind == "u":
                out += chr(int(line[i + 2:i + 6], 16)).encode("utf-8")
                i += 6
                continue
            out += {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\"}[kind]
            i += 2
            continue
        out += line[i].encode("utf-8")
        i += 1
    return bytes(out)


def test_tokenize_prints_tiktokens_pieces_one_per_line(tiktoken_cache):
    enc = tiktoken_cache.get_encoding("cl100k_base")
    text = "Hello  world\n\tback\\slash 🙂🙂 naïve 中文字 \x07 \x85 \\x41 end"
    want = [enc.decode_single_token_bytes(t) for t in enc.encode_ordinary(text)]
    assert any(b" " in p for p in want)  # pieces hold spaces: a space cannot separate them
    status, out = run("tokenize", "-t", "cl100k_base", "--", text)
    assert status == 0 and out.endswith("\n")
    assert [_unescape(line) for line in out[:-1].split("\n")] == want

    status, out = run("tokenize", "-t", "cl100k_base", "--json", "--", text)

    def as_json(piece: bytes):
        try:
            return piece.decode("utf-8")
        except UnicodeDecodeError:
            return list(piece)

    got = json.loads(out)
    assert got == [as_json(p) for p in want]
    assert any(isinstance(p, list) for p in got) and "Hello" in got  # both kinds occur in this text


# ---------------------------------------------------------------- a text file named *.model


def test_a_text_file_named_model_is_refused_as_not_sentencepiece(tmp_path, capsys):
    spm = pytest.importorskip("sentencepiece")  # in the test extra: never skipped in CI
    path = tmp_path / "tokenizer.model"
    path.write_text("hello\nworld\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="ModelProto"):  # sentencepiece refuses it too
        spm.SentencePieceProcessor(model_file=str(path))
    assert run("encode", "-t", path, "hi")[0] == 1
    err = capsys.readouterr().err
    assert "SentencePiece" in err and "ModelProto" in err and "invalid JSON" not in err


def test_a_library_warning_is_one_cli_line(tmp_path, capsys):
    """A warning the library gives while a command runs (here: added tokens Hugging Face moves to other ids) is
    printed as ``bytepair <command>: warning: ...``, one line, not as Python prints it (its file, line number and
    source line); the ids are printed all the same."""
    path = tmp_path / "tokenizer.json"
    write_tokenizer_json_with_moved_added_tokens(path, 3)
    status, out = run("encode", "-t", path, "hi")
    assert status == 0 and out.split() == ["104", "105"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("bytepair encode: warning: ") and "says id 900" in err[0] and "2 more" in err[0]
