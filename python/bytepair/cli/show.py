"""``bytepair show``: a text with its token boundaries made visible.

On a terminal each token gets the next of five background colours; without
colour (a pipe, ``--color never``, or ``NO_COLOR`` set) each token is in
brackets. ``--ids`` adds a line with each token's id (in its token's
colour). ``--html FILE`` writes a standalone page instead: one ``<span>``
per token, its id on hover.

Byte-model tokens that hold only part of a UTF-8 character (an emoji may be
four one-byte tokens) are grouped with their neighbours until the bytes make
whole characters: such a group is one coloured piece showing all its ids
(``240+159+153+130``). ``--partial replace`` shows each token alone, its
incomplete character as U+FFFD, ``--partial hex`` as ``\\xNN`` escapes.
Char-model pieces are shown as the characters they cover; an end-of-word
marker that is a token on its own is shown as the marker (dimmed).

Examples::

    $ bytepair show -t tok.json "the cat sat"
    $ bytepair show -t tok.json --ids --color never "the cat sat"
    [the][ cat][ sat]
    1820 8415 7731
    $ bytepair show -t tok.json --html tokens.html < essay.txt
    $ bytepair show -t tok.json --allowed-special all "hi<|endoftext|>"

>>> import io
>>> from bytepair import Tokenizer
>>> from bytepair.cli._pieces import pieces
>>> tok = Tokenizer.train("the cat sat on the mat " * 20, vocab_size=266)
>>> print(render_terminal(pieces(tok, "the cat"), ids=True, colour=False), end="")
[the][ cat]
258 261
"""

from __future__ import annotations

import argparse
import html
import os
import sys
from typing import Sequence, TextIO

from bytepair._io import atomic_write_text
from bytepair.cli._pieces import (
    HTML_STYLE,
    PARTIAL_MODES,
    Piece,
    all_ids,
    ansi,
    ansi_ids,
    html_ids,
    html_spans,
    pieces,
    plain,
)
from bytepair.cli.common import check_allowed_special, check_output, load, text_arg
from bytepair.cli.options import add_described, tokenizer_options, wrap


def use_colour(choice: str, out: TextIO) -> bool:
    """``--color``: always, never, or auto (a terminal, and NO_COLOR unset)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def render_terminal(ps: Sequence[Piece], *, ids: bool, colour: bool) -> str:
    """The pieces (and their ids when ``ids``), ending with one newline."""
    text = ansi(ps) if colour else plain(ps)
    if not text.endswith("\n"):
        text += "\n"
    if ids:
        text += ansi_ids(ps, colour) + "\n"
    return text


def render_html(ps: Sequence[Piece], *, title: str, ids: bool) -> str:
    """A standalone HTML page: the text as one ``<span>`` per token (id in
    the ``title``, shown on hover), and the id list when ``ids``."""
    n = len(all_ids(ps))
    chars = sum(p.end - p.start for p in ps)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>bytepair show: {html.escape(title)}</title>",
        f"<style>{HTML_STYLE}</style></head><body>",
        "<h1>bytepair show</h1>",
        f'<p class="meta">tokenizer <b>{html.escape(title)}</b>: <span id="count">{n}</span> tokens, '
        f"{chars} characters. Hover over a token to see its id.</p>",
        f'<div class="tokens" id="tokens">{html_spans(ps)}</div>',
    ]
    if ids:
        parts.append(f'<h2>ids</h2><div class="ids" id="ids">{html_ids(ps)}</div>')
    parts.append("</body></html>\n")
    return "\n".join(parts)


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.html:
        check_output(args.html)
    tok = load(args.tokenizer, args)
    text = text_arg(args)
    allowed = args.allowed_special or []
    check_allowed_special(tok, allowed)
    ps = pieces(tok, text, allowed_special="all" if "all" in allowed else allowed, partial=args.partial)
    if args.html:
        atomic_write_text(args.html, render_html(ps, title=os.path.basename(args.tokenizer), ids=args.ids))
        print(f"{len(all_ids(ps))} tokens: wrote {args.html}", file=sys.stderr)
        return 0
    out.write(render_terminal(ps, ids=args.ids, colour=use_colour(args.color, out)))
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "show",
        help="the text with its token boundaries in colour (or as HTML)",
        description=wrap(
            "Print TEXT (or standard input) with token boundaries in alternating colours, or in "
            "brackets without colour; --ids adds a line with the ids, --html FILE writes a page "
            "instead. Special-token text is plain text unless --allowed-special names it.",
            "Byte model: tokens that hold only part of a UTF-8 character are grouped with "
            "their neighbours into whole characters (one piece showing all their ids, e.g. "
            "240+159+153+130); --partial replace shows each such token alone with U+FFFD, "
            "--partial hex with \\xNN escapes. Char model: pieces are shown as the characters "
            "they cover; an end-of-word marker that is a token on its own is shown as the marker.",
        ),
        epilog=(
            "examples:\n"
            "  bytepair show -t tok.json \"the cat sat\"\n"
            "  bytepair show -t tok.json --ids --color never \"the cat sat\"\n"
            "  bytepair show -t tok.json --html tokens.html < essay.txt"
        ),
    )
    tokenizer_options(p)
    p.add_argument("text", nargs="?", metavar="TEXT", help="text to show (default: standard input)")
    p.add_argument("--ids", action="store_true",
                   help="also print each token's id (ids of a grouped piece joined by '+', '?' for none)")
    p.add_argument("--html", metavar="FILE",
                   help="write a standalone HTML page (one <span> per token, its id on hover) instead of printing")
    p.add_argument("--partial", choices=PARTIAL_MODES, default="group",
                   help="byte model, tokens that hold part of a UTF-8 character: group them into whole "
                        "characters (default), or show each alone with U+FFFD (replace) or \\xNN escapes (hex)")
    p.add_argument("--allowed-special", action="append", metavar="TOK",
                   help="show this special token's text as the special token ('all' for every one); repeatable")
    p.add_argument("--color", "--colour", choices=["auto", "always", "never"], default="auto",
                   help="colour the tokens: auto (default: on a terminal, unless NO_COLOR is set), always, never")
    p.set_defaults(run=run)
