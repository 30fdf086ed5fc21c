"""``bytepair inspect``: a tokenizer's merges and vocabulary, searchable.

Merges are printed in training order as ``[a][b] -> [ab] id`` (``id`` is
the merged token's id); ``--vocab`` prints every token as ``id [token]``
instead (special tokens marked ``(special)``). In both, tokens are written
so that every byte is visible: a space as ``␣``, newline, tab and carriage
return as ``\\n``, ``\\t``, ``\\r``, other control characters and invalid
UTF-8 bytes as ``\\xNN`` (the C1 controls U+0080-U+009F as ``\\u00NN``, as
they are two bytes), and a backslash as ``\\\\``.

``--grep REGEX`` keeps the lines whose token (the merged token for merges)
matches REGEX (Python ``regex`` syntax, searched anywhere in the token's
plain text: a space is a space there, invalid bytes are ``\\xNN``);
``--limit N`` prints at most N lines; ``--json`` prints a JSON list.

Examples::

    $ bytepair inspect -t tok.json --limit 3
    [␣][t] -> [␣t] 256
    [h][e] -> [he] 257
    [␣t][he] -> [␣the] 258
    $ bytepair inspect -t tok.json --grep '^ the'
    $ bytepair inspect -t tok.json --vocab --grep '\\p{Cyrillic}' --limit 20

>>> show_token(b" a\\xff\\\\")
'␣a\\\\xff\\\\\\\\'
>>> show_token("low</w>")
'low</w>'
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, Iterator, List, Optional, TextIO, Tuple, Union

from bytepair.cli.common import load
from bytepair.cli.options import CliError, add_described, tokenizer_options, wrap
from bytepair.tokenizer import Tokenizer

_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def show_token(token: Union[str, bytes], space: str = "␣") -> str:
    """A token with every byte visible (see the module docstring); a space
    as ``space``."""
    if isinstance(token, bytes):
        token = token.decode("utf-8", "surrogateescape")
    out = []
    for ch in token:
        code = ord(ch)
        if ch == " ":
            out.append(space)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # an invalid byte (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F:  # a C1 control as \u00NN: \xNN is one byte, U+0085 is two
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def plain_token(token: Union[str, bytes]) -> str:
    """A token's text as ``--grep`` searches it and ``--json`` prints it."""
    return token.decode("utf-8", "backslashreplace") if isinstance(token, bytes) else token


def merge_ids(tok: Tokenizer, merges: List[Tuple[Any, Any]], vocab: Dict[int, Any]) -> List[Optional[int]]:
    """The id of each merge's token: the last ``len(merges)`` ordinary ids
    when they spell the merges in order (tokenizers trained or built from
    merges), else the smallest ordinary id with the merged text."""
    specials = set(tok.special_tokens.values())
    ordinary = [i for i in sorted(vocab) if i not in specials]
    tail = ordinary[len(ordinary) - len(merges):] if len(merges) <= len(ordinary) else []
    if len(tail) == len(merges) and all(vocab[i] == a + b for i, (a, b) in zip(tail, merges)):
        return list(tail)
    by_text: Dict[Any, int] = {}
    for i in ordinary:
        by_text.setdefault(vocab[i], i)
    return [by_text.get(a + b) for a, b in merges]


def _merge_rows(tok: Tokenizer) -> Iterator[Dict[str, Any]]:
    merges = tok.merges
    vocab = tok.vocab()
    for k, ((a, b), id_) in enumerate(zip(merges, merge_ids(tok, merges, vocab)), 1):
        yield {"rank": k, "left": a, "right": b, "token": a + b, "id": id_}


def _vocab_rows(tok: Tokenizer) -> Iterator[Dict[str, Any]]:
    specials = set(tok.special_tokens.values())
    for id_, t in sorted(tok.vocab().items()):
        yield {"id": id_, "token": t, "special": id_ in specials}


def run(args: argparse.Namespace, out: TextIO) -> int:
    import regex  # third-party, slow to import: only when inspecting

    if args.limit is not None and args.limit < 0:
        raise CliError("--limit must be 0 or more")
    pattern = None
    if args.grep is not None:
        try:
            pattern = regex.compile(args.grep)
        except regex.error as e:
            raise CliError(f"--grep {args.grep!r} is not a valid regular expression: {e}") from None
    tok = load(args.tokenizer, args)
    rows = _vocab_rows(tok) if args.vocab else _merge_rows(tok)
    shown: List[Dict[str, Any]] = []
    for row in rows:
        if args.limit is not None and len(shown) >= args.limit:
            break
        if pattern is not None and not pattern.search(plain_token(row["token"])):
            continue
        shown.append(row)
    if args.json:
        items = []
        for row in shown:
            item = dict(row)
            for key in ("left", "right", "token"):
                if key in item:
                    item[key] = plain_token(item[key])
            items.append(item)
        print(json.dumps(items, ensure_ascii=False, indent=1), file=out)
        return 0
    for row in shown:
        if args.vocab:
            mark = " (special)" if row["special"] else ""
            print(f"{row['id']} [{show_token(row['token'])}]{mark}", file=out)
        else:
            id_ = "?" if row["id"] is None else row["id"]
            a, b, t = (show_token(row[k]) for k in ("left", "right", "token"))
            print(f"[{a}][{b}] -> [{t}] {id_}", file=out)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "inspect",
        help="list the merges or the vocabulary, searchable",
        description=wrap(
            "Print the merges in order as [a][b] -> [ab] id (id: the merged token's id), or with "
            "--vocab every token as 'id [token]' (special tokens marked). Tokens are written with "
            "every byte visible: space as ␣, \\n \\t \\r, other control characters and invalid "
            "UTF-8 bytes as \\xNN, backslash as \\\\.",
        ),
        epilog=(
            "examples:\n"
            "  bytepair inspect -t tok.json --limit 10\n"
            "  bytepair inspect -t tok.json --grep '^ the'\n"
            "  bytepair inspect -t tok.json --vocab --grep '\\p{Cyrillic}' --limit 20\n"
            "  bytepair inspect -t tok.json --vocab --json > vocab.json"
        ),
    )
    tokenizer_options(p, read_input=False)
    p.add_argument("--vocab", action="store_true", help="list the vocabulary (id and token) instead of the merges")
    p.add_argument("--grep", metavar="REGEX",
                   help="only tokens (for merges: the merged token) that REGEX matches anywhere; Python "
                        "'regex' syntax (\\p{Script} works), searched in the token's plain text "
                        "(a space is a space, invalid bytes are \\xNN)")
    p.add_argument("--limit", type=int, metavar="N", help="print at most N lines (after --grep)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list: merges as {rank, left, right, token, id}, the vocabulary as "
                        "{id, token, special}; invalid UTF-8 bytes as \\xNN")
    p.set_defaults(run=run)
