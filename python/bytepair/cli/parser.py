"""The ``bytepair`` argument parser: one subcommand per module of
``bytepair.cli`` (``COMMANDS``, in the order ``bytepair --help`` lists
them). Each command module has ``add_parser(subparsers)``, which adds its
parser and sets ``run=function(args, out) -> int`` as its default.

>>> sorted(build_parser().parse_args(["count", "-t", "tok.json", "a.txt"]).files)
['a.txt']
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import List, Sequence

from bytepair import __version__
from bytepair.cli import (
    chunk,
    compare,
    convert,
    count,
    count_words,
    decode,
    encode,
    encode_dataset,
    explain,
    inspect,
    serve,
    show,
    tokenize,
    train,
)
from bytepair.progress import PROGRESS_CHOICES

_MODULES = (train, encode, tokenize, decode, count, show, inspect, compare, serve, count_words, encode_dataset,
            convert, chunk, explain)
COMMANDS: List[str] = [m.__name__ for m in _MODULES]


def build_parser() -> ArgumentParser:
    """The parser of every command."""
    parser = ArgumentParser(
        prog="bytepair",
        description="Train byte-pair-encoding tokenizers and encode, decode and count tokens.",
    )
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _MODULES:
        module.add_parser(sub)
    for command in sub.choices.values():  # main() prints the command's own usage for unknown options
        command.set_defaults(command_parser=command)
    return parser


def bare_progress(argv: Sequence[str]) -> List[str]:
    """``--progress`` given without a value means ``--progress=bar`` (as users
    type ``rsync --progress``), also when a file or text follows it.

    >>> bare_progress(["train", "--progress", "corpus.txt", "-o", "t.json"])
    ['train', '--progress=bar', 'corpus.txt', '-o', 't.json']
    >>> bare_progress(["train", "c.txt", "--progress", "json"])
    ['train', 'c.txt', '--progress', 'json']
    """
    out: List[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            return out + list(argv[i:])
        following = argv[i + 1] if i + 1 < len(argv) else None
        out.append("--progress=bar" if arg == "--progress" and following not in PROGRESS_CHOICES else arg)
    return out
