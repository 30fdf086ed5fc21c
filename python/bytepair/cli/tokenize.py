"""``bytepair tokenize``: the pieces of TEXT (or standard input),
space-separated (``--json``: a JSON list, byte pieces as lists of byte
values).

>>> show_piece(b"ab\\xff"), show_piece("low</w>")
('ab\\\\xff', 'low</w>')
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO, Union

from bytepair.cli.common import load, text_arg
from bytepair.cli.options import tokenizer_options


def show_piece(piece: Union[str, bytes]) -> str:
    """A piece as printed: bytes that are not UTF-8 as ``\\xNN``."""
    return piece.decode("utf-8", "backslashreplace") if isinstance(piece, bytes) else piece


def run(args: argparse.Namespace, out: TextIO) -> int:
    tok = load(args.tokenizer, args)
    pieces = tok.tokenize(text_arg(args))
    if args.json:
        shown = [p if isinstance(p, str) else list(p) for p in pieces]
        print(json.dumps(shown, ensure_ascii=False), file=out)
    else:
        print(" ".join(show_piece(p) for p in pieces), file=out)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("tokenize", help="text to token pieces", description="Print the pieces of TEXT, space-separated.")
    tokenizer_options(p)
    p.add_argument("text", nargs="?", metavar="TEXT", help="text to tokenize (default: standard input)")
    p.add_argument("--json", action="store_true", help="print a JSON list (byte pieces as lists of byte values)")
    p.set_defaults(run=run)
