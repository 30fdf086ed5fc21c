"""A bare ``--progress`` means ``--progress bar`` in every command that takes it (issue 16)."""

from __future__ import annotations

import argparse

import pytest

from bytepair import Tokenizer
from bytepair.cli import bare_progress, build_parser, main


def commands_with_progress():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(name for name, p in sub.choices.items() if any("--progress" in a.option_strings for a in p._actions))


def test_the_commands_with_progress():
    assert {"train", "encode", "count-words", "encode-dataset"} <= set(commands_with_progress())


@pytest.mark.parametrize("command", commands_with_progress())
@pytest.mark.parametrize("where", ["last", "before a file", "before an option"])
def test_bare_progress_parses_as_bar(command, where):
    required = {"train": ["c.txt", "-o", "t.json"], "encode": ["-t", "t.json", "-i", "c.txt"],
                "count-words": ["c.txt", "-o", "c.counts"], "encode-dataset": ["-t", "t.json", "c.txt", "-o", "d"]}
    rest = required.get(command, ["c.txt", "-o", "out"])
    if where == "last":
        argv = [command, *rest, "--progress"]
    elif where == "before a file":
        argv = [command, *rest[:-2], "--progress", *rest[-2:]] if command != "encode" else [command, "--progress", "hi", "-t", "t.json"]
    else:
        argv = [command, "--progress", *rest]
    args = build_parser().parse_args(bare_progress(argv))
    assert args.progress == "bar"
    # the value given explicitly keeps its meaning, and a file named after the option is not eaten
    for value in ("json", "none", "auto", "bar"):
        assert build_parser().parse_args(bare_progress([command, *rest, "--progress", value])).progress == value


def test_bare_progress_keeps_what_follows_double_dash():
    assert bare_progress(["encode", "-t", "t.json", "--", "--progress"]) == ["encode", "-t", "t.json", "--", "--progress"]


def test_train_with_a_bare_progress_draws_a_bar(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest newer newest wider " * 200, encoding="utf-8")
    out = tmp_path / "t.json"
    assert main(["train", "--progress", str(corpus), "--merges", "10", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    # stderr is not a terminal here: the bar's plain-line form, both stages, ending at 100%
    assert "\r" not in err and "\x1b" not in err
    assert "merge: 10/10 merges (100%)" in err and "count: " in err
    assert Tokenizer.load(str(out)).n_vocab == 256 + 10
