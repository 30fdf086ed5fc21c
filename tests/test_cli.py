"""The command line: every command in-process, bad input as one-line errors
with the right exit status and no output file left, and one real
subprocess run of the installed entry points."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bytepair import Tokenizer
from bytepair.cli import main
from cli_runner import run

TEXT = "the cat sat on the mat. the dog sat on the log! <|endoftext|> naïve café 🙂\n" * 5


@pytest.fixture()
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture()
def model(tmp_path, corpus):
    out = tmp_path / "tok.json"
    status, _ = run("train", corpus, "--vocab-size", 300, "--special", "<|endoftext|>", "-o", out)
    assert status == 0
    return out


def test_train_encode_decode_count(model, corpus, capsys):
    tok = Tokenizer.load(str(model))
    status, out = run("encode", "-t", model, "the cat sat")
    assert status == 0 and out.split() == [str(i) for i in tok.encode("the cat sat")]
    status, text = run("decode", "-t", model, *out.split())
    assert text == "the cat sat\n"
    status, out = run("count", "-t", model, corpus, corpus)
    n = tok.count(TEXT)
    assert out.splitlines() == [f"{n}\t{corpus}", f"{n}\t{corpus}", f"{2 * n}\ttotal"]
    status, out = run("tokenize", "-t", model, "the cat")
    assert out.split() == ["the", "cat"]


def test_stdin_inputs(model):
    status, out = run("encode", "-t", model, stdin="the mat".encode())
    assert status == 0 and out.strip()
    status, text = run("decode", "-t", model, stdin=out.encode())
    assert text == "the mat\n"
    status, out = run("count", "-t", model, "-", stdin=b"<|endoftext|>")
    assert status == 0 and int(out.split()[0]) > 1  # special text counted as plain text


def test_special_tokens_in_the_cli(model, capsys):
    status, _ = run("encode", "-t", model, "a <|endoftext|>")
    assert status == 1
    err = capsys.readouterr().err
    assert "--allowed-special" in err and len(err.strip().splitlines()) == 1
    tok = Tokenizer.load(str(model))
    status, out = run("encode", "-t", model, "a <|endoftext|>", "--allowed-special", "all")
    assert int(out.split()[-1]) == tok.special_tokens["<|endoftext|>"]
    status, out = run("encode", "-t", model, "a <|endoftext|>", "--ordinary")
    assert status == 0 and out.split() == [str(i) for i in tok.encode_ordinary("a <|endoftext|>")]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "{missing}", "-o", "{out}"], "no such file"),
        (["train", "{bad_utf8}", "-o", "{out}"], "invalid UTF-8 at byte offset 3"),
        (["train", "{empty}", "-o", "{out}"], "empty"),
        (["train", "{corpus}", "--vocab-size", "10", "-o", "{out}"], "--vocab-size 10"),
        (["train", "{corpus}", "--merges", "-5", "-o", "{out}"], "--merges must be"),
        (["train", "{corpus}", "--pattern", "(", "-o", "{out}"], "invalid regex"),
        (["train", "{corpus}", "-o", "{nofolder}"], "does not exist"),
        (["decode", "-t", "{model}", "99999"], "99999"),
        (["decode", "-t", "{model}", "-3"], "-3"),
        (["decode", "-t", "{model}", "abc"], "not a token id"),
        (["encode", "-t", "{missing}", "x"], "no such tokenizer"),
        (["encode", "-t", "{corpus}", "x"], "not a valid bytepair tokenizer"),
    ],
)
def test_bad_input_is_one_line_exit_1(tmp_path, corpus, model, capsys, argv, message):
    (tmp_path / "bad.txt").write_bytes(b"abc\xff def")
    (tmp_path / "empty.txt").write_bytes(b"")
    names = {
        "missing": tmp_path / "missing.txt",
        "bad_utf8": tmp_path / "bad.txt",
        "empty": tmp_path / "empty.txt",
        "corpus": corpus,
        "model": model,
        "out": tmp_path / "out.json",
        "nofolder": tmp_path / "no" / "such" / "out.json",
    }
    status, _ = run(*[a.format(**names) for a in argv])
    err = capsys.readouterr().err
    assert status == 1
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".bytepair-")] == []


def test_replace_invalid_utf8(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc\xff abc abc")
    status, _ = run("train", bad, "--errors", "replace", "-o", tmp_path / "t.json")
    assert status == 0


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main(["frobnicate"])
    assert e.value.code == 2


def test_help_texts_are_complete(capsys):
    for cmd in ("train", "encode", "tokenize", "decode", "count"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert "usage: bytepair " + cmd in capsys.readouterr().out


def test_subprocess_smoke(tmp_path, corpus):
    """The installed console script and python -m bytepair, for real."""
    out = tmp_path / "t.json"
    done = subprocess.run(
        ["bytepair", "train", str(corpus), "--merges", "20", "--trace", "-o", str(out)],
        capture_output=True, text=True, check=True,
    )
    assert done.stdout.startswith("merge 1: ")
    done = subprocess.run(
        [sys.executable, "-m", "bytepair", "encode", "-t", str(out), "the cat"],
        capture_output=True, text=True, check=True,
    )
    ids = done.stdout.split()
    done = subprocess.run(
        [sys.executable, "-m", "bytepair", "decode", "-t", str(out), *ids], capture_output=True, text=True, check=True
    )
    assert done.stdout == "the cat\n"
    bad = subprocess.run(["bytepair", "decode", "-t", str(out), "77777"], capture_output=True, text=True)
    assert bad.returncode == 1 and "77777" in bad.stderr and "Traceback" not in bad.stderr


def test_a_bad_output_path_fails_before_training(tmp_path, capsys):
    """`-o` naming a folder, or a file in a missing folder, is refused before
    any counting starts (no progress line), not after the whole job."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat " * 50, encoding="utf-8")
    for out, message in [(tmp_path, "it is a folder"), (tmp_path / "no" / "t.json", "does not exist")]:
        assert main(["train", str(corpus), "--vocab-size", "270", "--progress", "json", "-o", str(out)]) == 1
        err = capsys.readouterr().err
        assert message in err and '"stage"' not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]
