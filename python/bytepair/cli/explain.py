"""``bytepair explain -t TOK WORD``: how a word (or any text) is encoded,
step by step, as seed 001's "Encoding a new word": the pre-tokens, each
one's starting symbols, every merge applied with its rank and the symbols
after it, byte fallback, the tokens and their ids (see
:mod:`bytepair.explain`). ``--json`` prints the same as one JSON object.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> sub.choices["explain"].parse_args(["-t", "tok.json", "lowest"]).text
'lowest'
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from bytepair.cli.common import load, text_arg
from bytepair.cli.options import add_described, tokenizer_options, wrap


def run(args: argparse.Namespace, out: TextIO) -> int:
    tok = load(args.tokenizer, args)
    explanation = tok.explain(text_arg(args))
    if args.json:
        print(json.dumps(explanation.to_dict(), ensure_ascii=False), file=out)
    else:
        print(explanation, file=out)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "explain",
        help="show how a word is encoded, merge by merge",
        description=wrap(
            "Show how TEXT (or standard input) is encoded: its pre-tokens (for Hugging Face pipelines, "
            "the normalized text first), each one's starting symbols, every merge applied with its rank "
            "and the symbols after it, byte fallback, then the tokens and their ids (those of "
            "encode --ordinary). Spaces print as ␣.",
        ),
        epilog=(
            "examples:\n"
            "  bytepair explain -t tok.json quickest\n"
            "  bytepair explain -t tokenizer.json ' tokenization' --json"
        ),
    )
    tokenizer_options(p)
    p.add_argument("text", nargs="?", metavar="TEXT", help="the word or text (default: standard input)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)
