"""``bytepair decode``: token ids (arguments, or standard input) to text.

>>> parse_ids(["1", "22"])
[1, 22]
"""

from __future__ import annotations

import argparse
from typing import List, Sequence, TextIO

from bytepair.cli.common import load, read_input
from bytepair.cli.options import CliError, tokenizer_options


def parse_ids(words: Sequence[str]) -> List[int]:
    """Token ids from words; a word that is not an integer is an error."""
    ids = []
    for w in words:
        try:
            ids.append(int(w))
        except ValueError:
            raise CliError(f"{w!r} is not a token id (ids are integers)") from None
    return ids


def run(args: argparse.Namespace, out: TextIO) -> int:
    tok = load(args.tokenizer, args)
    words = args.ids if args.ids else read_input("-", args.errors).split()
    ids = parse_ids(words)
    try:
        text = tok.decode(ids, errors=args.decode_errors, skip_special_tokens=args.skip_special_tokens)
    except UnicodeDecodeError as e:
        raise CliError(
            f"the tokens' bytes are not valid UTF-8 at byte offset {e.start} (byte 0x{e.object[e.start]:02X}): "
            "use --decode-errors replace (the default), backslashreplace or ignore"
        ) from None
    out.write(text + ("" if args.no_newline else "\n"))
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("decode", help="token ids to text", description="Print the text of token ids.")
    tokenizer_options(p)
    p.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: read from standard input)")
    p.add_argument("--decode-errors", default="replace", choices=["replace", "strict", "backslashreplace", "ignore"],
                   help="what to do with invalid UTF-8 in the decoded bytes (default replace)")
    p.add_argument("-n", "--no-newline", action="store_true", help="do not print a final newline")
    p.add_argument("--skip-special-tokens", action="store_true",
                   help="leave special tokens out of the text (default: written as their text)")
    p.set_defaults(run=run)
