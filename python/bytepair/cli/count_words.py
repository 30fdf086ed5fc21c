"""``bytepair count-words``: the words (pre-tokenizer pieces) of FILEs,
read a block at a time (:mod:`bytepair.corpus`: plain text, one file one
document, JSONL, Parquet, gzip/zstd, ``-`` for stdin; on Dask with
``--dask``), written as a counts file that ``bytepair train --from-counts``
trains on; ``--merge`` adds counts files up.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> args = sub.choices["count-words"].parse_args(["a.txt", "-o", "a.counts", "--max-bytes", "2G"])
>>> args.files, args.max_bytes, args.model
(['a.txt'], 2000000000, 'byte')
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from bytepair.cli.common import check_output, dask_client, expand_paths, training_pattern
from bytepair.cli.options import CliError, add_described, errors_option, progress_option, reading_options, wrap
from bytepair.counts import check_settings, count_words, merge_counts_with_header, save_counts
from bytepair.training import resolve


def _settings(args: argparse.Namespace):
    """Pattern and special tokens for counting, as ``bytepair train`` would
    train with the same options."""
    settings = resolve(args.model, pattern=training_pattern(args, "default"), special_tokens=args.special or (),
                       unk_token=getattr(args, "unk_token", None))
    return settings.regex, settings.specials


def run(args: argparse.Namespace, out: TextIO) -> int:
    check_output(args.output)
    files = expand_paths(args.files)
    if not files and not args.merge:
        raise CliError("nothing to count: give FILE... and/or --merge COUNTS...")
    stats: dict = {}
    if args.merge:
        header, counts = merge_counts_with_header(args.merge)
        pattern, specials = header.get("pattern"), list(header.get("special_tokens", []))
        if args.pattern is not None or args.special or args.model != "byte":
            check_settings(header, *_settings(args), name=args.merge[0])
        meta = {k: header.get(k) for k in ("documents", "bytes", "files")}
        if files:
            with dask_client(args.dask) as client:
                more = count_words(files, pattern, specials, field=args.field, column=args.column,
                                   max_bytes=args.max_bytes, errors=args.errors, client=client,
                                   progress=args.progress, stats=stats)
            counts.merge(more)
            for k in meta:
                meta[k] = meta[k] + stats[k] if isinstance(meta[k], int) else None
    else:
        pattern, specials = _settings(args)
        with dask_client(args.dask) as client:
            counts = count_words(files, pattern, specials, field=args.field, column=args.column,
                                 max_bytes=args.max_bytes, errors=args.errors, client=client,
                                 progress=args.progress, stats=stats)
        meta = stats
    save_counts(args.output, counts, pattern, specials, **meta)
    items = len(counts)
    docs = meta.get("documents")
    print(f"counted {items} distinct words" + (f" in {docs} documents" if docs is not None else "")
          + f": wrote {args.output}", file=sys.stderr)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "count-words", help="count the words of files into a counts file",
        description=wrap(
            "Count the words (pre-tokenizer pieces) of FILEs, read a block at a time, and write the table "
            "(word, count, in order of first appearance) as a counts file (gzip-compressed if OUT ends in "
            ".gz). Train from it with bytepair train --from-counts: the tokenizer is exactly the one that "
            "training on the FILEs gives. --merge adds counts files up in order (then FILEs after them).",
            "Use the --model, --pattern and --special options that training will use.",
        ),
        epilog="examples:\n"
               "  bytepair count-words part1/*.txt -o part1.counts\n"
               "  bytepair count-words --merge part1.counts part2.counts -o all.counts\n"
               "  bytepair count-words data.jsonl.zst --field text --dask local -o data.counts.gz\n"
               "  bytepair train --from-counts all.counts --vocab-size 32000 -o tok.json",
    )
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="text, JSONL (.jsonl) or Parquet files, .gz/.zst compressed or not; - for stdin")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the counts file to write")
    p.add_argument("--merge", nargs="+", metavar="COUNTS", help="counts files to add up, in order")
    p.add_argument("--model", choices=["byte", "char"], default="byte",
                   help="the model the counts are for: its default pattern (byte: cl100k; char: whitespace)")
    p.add_argument("--pattern", default=None, help="pre-tokenizer: gpt2, cl100k, o200k or a regex (as for train)")
    p.add_argument("--special", action="append", metavar="TOK", help="a special token that cuts the text (repeatable)")
    reading_options(p)
    errors_option(p)
    progress_option(p)
    p.set_defaults(run=run)
