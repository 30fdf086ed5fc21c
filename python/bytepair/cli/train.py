"""``bytepair train``: learn a tokenizer from text files (each file one
document), read a block at a time (on Dask with ``--dask``), or from counts
files (``--from-counts``); ``--init`` continues training a tokenizer,
``--parity`` trains parity-aware (:mod:`bytepair.cli.parity`) and
``--superword`` trains SuperBPE (:mod:`bytepair.cli.superword`).

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> args = sub.choices["train"].parse_args(["c.txt", "-o", "t.json", "--vocab-size", "300", "--max-bytes", "1M"])
>>> args.files, args.vocab_size, args.max_bytes, args.progress
(['c.txt'], 300, 1000000, 'auto')
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any, TextIO

from bytepair.cli.common import (FOLDER_FORMATS, check_output, dask_client, end_of_word, expand_paths, guess_format,
                                 training_pattern)
from bytepair.cli.options import CliError, cli_spelling, errors_option, progress_option, reading_options
from bytepair.cli.parity import add_parity_options, train_parity_from_args
from bytepair.cli.superword import add_superword_options, train_superword_from_args
from bytepair.errors import TrainingWarning
from bytepair.formats import FORMATS
from bytepair.tokenizer import Tokenizer


# the vocabulary size without --vocab-size or --merges: Hugging Face's BpeTrainer's default (tokenizers)
DEFAULT_VOCAB_SIZE = 30000


def run(args: argparse.Namespace, out: TextIO) -> int:
    # the output and its format fail before training, not after; OUT's name gives the format as for convert
    # (a name ending in tokenizer.json is Hugging Face's), native JSON when the name says nothing
    args.to = args.to or guess_format(args.output) or "bytepair"
    if args.to not in FORMATS:
        raise CliError(f"unknown format {args.to!r} for --to: use one of {', '.join(sorted(FORMATS))}")
    check_output(args.output, folder=args.to in FOLDER_FORMATS)
    init = None
    if args.init:
        if not os.path.lexists(args.init):
            raise CliError(f"{args.init}: no such tokenizer file")
        init = Tokenizer.load(args.init)
    if args.vocab_size is None and args.merges is None:
        if init is not None:
            raise CliError("--init continues training: say how far, with --vocab-size N (the new total) or --merges N")
        args.vocab_size = DEFAULT_VOCAB_SIZE
    if args.required_token and (args.parity or args.superword):
        raise CliError("--required-token applies to plain training, not to --parity or --superword")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TrainingWarning)
        if args.parity:
            args.tie_break = args.tie_break or "max-string"
            tok = train_parity_from_args(args)
        elif args.superword:
            args.tie_break = args.tie_break or "first"
            tok = train_superword_from_args(args)
        else:
            if args.transition is not None:
                raise CliError("--transition applies only with --superword")
            args.tie_break = args.tie_break or "first"
            tok = train_tokenizer(args, init)
    for w in caught:
        print(f"bytepair: warning: {cli_spelling(str(w.message))}", file=sys.stderr)
    if args.trace:
        for line in tok.trace():
            print(line, file=out)
    tok.save(args.output, format=args.to)
    if not args.trace:
        print(f"trained {len(tok.merge_counts)} merges, {tok.n_vocab} tokens: wrote {args.output}", file=sys.stderr)
    return 0


def train_tokenizer(args: argparse.Namespace, init: Any = None) -> Tokenizer:
    """The tokenizer that ``bytepair train`` makes: FILEs read in blocks
    (on Dask with ``--dask``), or counts files (``--from-counts``)."""
    options = dict(vocab_size=args.vocab_size, num_merges=args.merges, min_frequency=args.min_frequency,
                   tie_break=args.tie_break, max_token_length=args.max_token_length, progress=args.progress,
                   max_memory=args.max_memory)
    if args.required_token:  # the API refuses them with init= (continued training keeps the ones it has)
        options.update(required_tokens=args.required_token)
    if init is None:
        options.update(model=args.model, end_of_word=end_of_word(args), end_of_word_fused=args.fused,
                       byte_fallback=args.byte_fallback, unk_token=args.unk_token)
    else:
        options.update(init=init)
    if args.from_counts:
        if args.files:
            raise CliError("give either FILEs or --from-counts, not both (merge them with bytepair count-words)")
        if args.max_bytes is not None or args.field or args.column or args.dask:
            raise CliError("--field, --column, --max-bytes and --dask apply to FILEs, not to --from-counts")
        if init is None:
            if args.pattern is not None:
                options["pattern"] = training_pattern(args, None)
            if args.special:
                options["special_tokens"] = args.special
        return Tokenizer.train_from_counts(args.from_counts, **options)
    files = expand_paths(args.files)
    if not files:
        raise CliError("nothing to train on: give FILE... (or - for standard input) or --from-counts COUNTS")
    if init is None:
        options.update(pattern=training_pattern(args, "default"), special_tokens=args.special or ())
    with dask_client(args.dask) as client:
        return Tokenizer.train_from_files(files, client=client, field=args.field, column=args.column,
                                max_bytes=args.max_bytes, errors=args.errors, **options)


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser("train", help="learn merges from text files",
                       description="Learn a BPE tokenizer from text files (each file is one document).")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="UTF-8 text files (one document each; JSONL with --field, Parquet with --column, "
                        ".gz/.zst compressed); - reads standard input")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the tokenizer")
    p.add_argument("--to", default=None, metavar="FMT",
                   help="output format (default: from OUT's name, as for convert: *tokenizer.json is Hugging "
                        "Face's, *.tiktoken tiktoken's, ...; native bytepair JSON for other names)")
    p.add_argument("--model", choices=["byte", "char"], default="byte", help="byte-level (default) or character-level BPE")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--vocab-size", type=int, metavar="N",
                      help=f"stop when the vocabulary has N tokens, special tokens included (default {DEFAULT_VOCAB_SIZE}, "
                           "as Hugging Face's BpeTrainer; training stops earlier, with a warning, when no pair is left)")
    size.add_argument("--merges", type=int, metavar="N", help="stop after N merges")
    p.add_argument("--min-frequency", type=int, default=1, metavar="N", help="stop when no pair occurs N times (default 1)")
    p.add_argument("--pattern", default=None,
                   help="pre-tokenizer: gpt2, cl100k (byte default), o200k, a regex; char model default: whitespace split")
    p.add_argument("--end-of-word", default="</w>", metavar="S", help="char model end-of-word marker (default </w>; '' for none)")
    p.add_argument("--no-end-of-word", action="store_true", help="char model without an end-of-word marker")
    p.add_argument("--fused", action="store_true", help="glue the marker to the last character (subword-nmt style)")
    p.add_argument("--tie-break", choices=["first", "alphabetical", "pair-id", "max-string"], default=None,
                   help="how equal counts are ordered (default first; with --parity max-string, HF's rule)")
    p.add_argument("--special", action="append", metavar="TOK", help="a special token (repeatable)")
    p.add_argument("--required-token", action="append", metavar="TOK",
                   help="a string made one token before training, which training may merge further (repeatable; "
                        "cut as text, unlike --special; the pattern must keep it one piece)")
    p.add_argument("--byte-fallback", action="store_true", help="char model: add <0xNN> tokens for unseen characters")
    p.add_argument("--unk-token", default=None, metavar="TOK", help="char model: token for unseen characters")
    p.add_argument("--max-token-length", type=int, metavar="N",
                   help="never merge into a token longer than N (characters in the char model, bytes in the byte model)")
    p.add_argument("--init", metavar="TOK",
                   help="continue training this tokenizer: its ids, merges and settings are kept, new merges follow")
    p.add_argument("--trace", action="store_true", help="print each merge as it is learned (seed 000's format)")
    progress_option(p)
    errors_option(p)
    # the streaming options
    reading_options(p)
    p.add_argument("--max-memory", metavar="SIZE", default=None,
                   help="memory the whole process may use (e.g. 8G, 500M; 'none': no check). Before merging (and "
                        "every 64 MB while counting), the need is estimated from the distinct words and training "
                        "stops with an error if it would not fit; default: what is held plus MemAvailable")
    p.add_argument("--from-counts", action="append", metavar="COUNTS",
                   help="train from a counts file of bytepair count-words instead of FILEs "
                        "(repeat to merge several, in order)")
    add_parity_options(p)
    add_superword_options(p)
    p.set_defaults(run=run)
