"""``bytepair tokenize``: the pieces of TEXT (or standard input), one per
line, as ``inspect`` writes tokens but with spaces as they are: newline,
tab, carriage return, other control characters and bytes that are not UTF-8
are escaped (``\\n``, ``\\t``, ``\\r``, ``\\xNN``) and a backslash is
doubled, so that every line is one piece and every byte shows.
``--json`` prints a JSON list: a piece whose bytes are UTF-8 as its string,
another (part of a character, in byte models) as the list of its byte
values.

>>> show_piece(b"ab\\xff"), show_piece("low</w>"), show_piece(" a\\nb")
('ab\\\\xff', 'low</w>', ' a\\\\nb')
>>> json_piece(" caf\\xc3\\xa9".encode("latin-1")), json_piece(b"\\xe4\\xbd")
(' café', [228, 189])
"""

from __future__ import annotations

import argparse
import json
from typing import List, TextIO, Union

from bytepair.cli.common import load, text_arg
from bytepair.cli.inspect import show_token
from bytepair.cli.options import tokenizer_options


def show_piece(piece: Union[str, bytes]) -> str:
    """A piece as one line: spaces as they are, other invisible bytes escaped."""
    return show_token(piece, space=" ")


def json_piece(piece: Union[str, bytes]) -> Union[str, List[int]]:
    """A piece in ``--json``: its text when it is UTF-8, else its byte values."""
    if isinstance(piece, str):
        return piece
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return list(piece)


def run(args: argparse.Namespace, out: TextIO) -> int:
    tok = load(args.tokenizer, args)
    pieces = tok.tokenize(text_arg(args))
    if args.json:
        print(json.dumps([json_piece(p) for p in pieces], ensure_ascii=False), file=out)
    else:
        out.write("".join(show_piece(p) + "\n" for p in pieces))
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("tokenize", help="text to token pieces",
                       description="Print the pieces of TEXT, one per line (newline, tab, other control "
                                   "characters and bytes that are not UTF-8 escaped as \\n, \\t, \\xNN; "
                                   "a backslash doubled).")
    tokenizer_options(p)
    p.add_argument("text", nargs="?", metavar="TEXT", help="text to tokenize (default: standard input)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list of strings (a piece that is not UTF-8, part of a character: "
                        "the list of its byte values)")
    p.set_defaults(run=run)
