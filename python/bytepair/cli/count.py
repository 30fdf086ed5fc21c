"""``bytepair count``: the tokens of files (glob patterns expanded) or of
standard input, each file streamed as ``tok.count(text)`` of the whole file
would count it (special-token text as plain text). With ``--limit N`` a
file is read only until it has more than N tokens, and its count is then
N + 1, as ``tok.count(text, limit=N)`` gives.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> sub.choices["count"].parse_args(["-t", "tok.json", "a.txt", "b.txt", "--json"]).files
['a.txt', 'b.txt']
"""

from __future__ import annotations

import argparse
import json
from typing import Iterable, Optional, Sequence, TextIO

from bytepair.cli.common import expand_paths, load
from bytepair.cli.options import CliError, tokenizer_options
from bytepair.stream import file_blocks


def streamed_count(chunks: Iterable[Sequence[int]], limit: Optional[int]) -> int:
    """The number of ids in ``chunks``; with ``limit``, ``min(n, limit + 1)``,
    reading no further chunk once more than ``limit`` are settled.

    >>> streamed_count([[1, 2], [3], [4, 5]], None), streamed_count([[1, 2], [3], [4, 5]], 2)
    (5, 3)
    """
    n = 0
    for chunk in chunks:
        n += len(chunk)
        if limit is not None and n > limit:
            return limit + 1
    return n


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.limit is not None and args.limit < 0:
        raise CliError("--limit must be 0 or more")
    tok = load(args.tokenizer, args)
    results = []
    for path in expand_paths(args.files or ["-"]):
        # streamed, as tok.count(text) of the whole file, in bounded memory
        ids = tok.encode_stream(file_blocks(path, args.errors), allowed_special=set(), disallowed_special=())
        results.append((path, streamed_count(ids, args.limit)))
    if args.json:
        total = sum(n for _, n in results)
        print(json.dumps({"files": {p: n for p, n in results}, "total": total}), file=out)
        return 0
    for path, n in results:
        print(f"{n}\t{path}", file=out)
    if len(results) > 1:
        print(f"{sum(n for _, n in results)}\ttotal", file=out)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("count", help="count tokens in files",
                       description="Count tokens (special-token text counts as plain text).")
    tokenizer_options(p)
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="files or glob patterns ('*.txt', '**' for any depth; quote them) to count (default: standard input)")
    p.add_argument("--limit", type=int, metavar="N",
                   help="stop counting a file once it has more than N tokens: its count is then N+1 "
                        "(as the API's count(text, limit=N))")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run)
