"""``bytepair chunk -t TOK FILE... --max-tokens N``: token-aware chunks as
JSON lines, one object per chunk::

    {"file": "a.txt", "chunk": 0, "start": 0, "end": 812, "tokens": 198, "text": "..."}

``start``/``end`` are character offsets in the file's text, ``tokens`` the
chunk's own count (at most N). Chunks end at the best natural boundary that
fits (paragraph, line, sentence, word; see :mod:`bytepair.chunking`);
without ``--overlap`` a file's chunks join to its text exactly. Each file is
one document (``-``: standard input, the default); ``-o OUT`` writes the
lines atomically instead of printing them.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> sub.choices["chunk"].parse_args(["-t", "tok.json", "a.txt", "--max-tokens", "512"]).max_tokens
512
"""

from __future__ import annotations

import argparse
import io
import json
from typing import TextIO

from bytepair._io import atomic_open
from bytepair.chunking import chunk_spans
from bytepair.cli.common import check_output, expand_paths, load, read_input
from bytepair.cli.options import add_described, tokenizer_options, wrap


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.output:
        check_output(args.output)
    tok = load(args.tokenizer, args)
    buffer = io.StringIO() if args.output else None
    sink = buffer if buffer is not None else out
    for path in expand_paths(args.files or ["-"]):
        text = read_input(path, args.errors)
        name = "<stdin>" if path == "-" else path
        for k, (start, end, tokens) in enumerate(chunk_spans(tok, text, args.max_tokens, args.overlap)):
            row = {"file": name, "chunk": k, "start": start, "end": end, "tokens": tokens, "text": text[start:end]}
            sink.write(json.dumps(row, ensure_ascii=False) + "\n")
    if buffer is not None:
        with atomic_open(args.output) as fh:
            fh.write(buffer.getvalue().encode("utf-8"))
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "chunk",
        help="cut texts into chunks of at most N tokens (JSON lines)",
        description=wrap(
            "Cut each FILE (one document; - or nothing: standard input) into chunks of at most N tokens, "
            "ending at the best natural boundary that fits: paragraph, line, sentence, word, in that "
            "order, else between two tokens. Prints one JSON object per chunk: file, chunk (its number), "
            "start and end (character offsets), tokens, text. Without --overlap the chunks of a file "
            "join to its text exactly.",
        ),
        epilog=(
            "examples:\n"
            "  bytepair chunk -t tok.json README.md --max-tokens 512\n"
            "  bytepair chunk -t tokenizer.json 'docs/**/*.md' --max-tokens 256 --overlap 32 -o chunks.jsonl"
        ),
    )
    tokenizer_options(p)
    p.add_argument("files", nargs="*", metavar="FILE", help="text files or glob patterns (default: standard input)")
    p.add_argument("-n", "--max-tokens", type=int, required=True, metavar="N", help="at most N tokens per chunk")
    p.add_argument("--overlap", type=int, default=0, metavar="K",
                   help="each chunk starts about K tokens (fewer than N) before the previous one ended")
    p.add_argument("-o", "--output", metavar="OUT", help="write the JSON lines to OUT (atomically)")
    p.set_defaults(run=run)
