"""``bytepair train --superword --transition T FILE...``: SuperBPE training
from the command line (``Tokenizer.train(superword=True, transition=T)``);
a helper of :mod:`bytepair.cli.train`.

>>> import argparse
>>> p = argparse.ArgumentParser(); add_superword_options(p)
>>> p.parse_args(["--superword", "--transition", "180000"]).transition
180000
"""

from __future__ import annotations

import argparse
import warnings

from bytepair.cli.common import count_files
from bytepair.cli.options import CliError
from bytepair.errors import TrainingWarning
from bytepair.patterns import resolve_pattern
from bytepair.tokenizer import Tokenizer


def add_superword_options(p: argparse.ArgumentParser) -> None:
    """The SuperBPE options of ``bytepair train``."""
    g = p.add_argument_group("SuperBPE (arXiv 2503.13423): tokens that bridge spaces")
    g.add_argument("--superword", action="store_true",
                   help="train in two stages: plain BPE up to --transition tokens, then on with the 'superbpe' "
                        "pattern (tokens may span several words) up to --vocab-size; byte model only")
    g.add_argument("--transition", type=int, metavar="T", help="vocabulary size at which stage 2 starts")


def train_superword_from_args(args: argparse.Namespace) -> Tokenizer:
    """The tokenizer of ``bytepair train --superword ...``: FILEs are counted
    as ``bytepair train`` counts them (streamed; ``--dask``), once per stage."""

    if getattr(args, "from_counts", None) or getattr(args, "init", None):
        raise CliError("--superword trains from FILEs: drop --from-counts and --init")
    if args.merges is not None or args.vocab_size is None or args.transition is None:
        raise CliError("--superword needs --transition T and --vocab-size N (not --merges)")
    if args.model != "byte":
        raise CliError("--superword trains a byte model")
    if not args.files or "-" in args.files:
        raise CliError("--superword needs FILE... (standard input cannot be read twice)")
    if not 0 <= args.transition <= args.vocab_size:
        raise CliError(f"--transition {args.transition} must be between 0 and --vocab-size {args.vocab_size}")
    pattern = resolve_pattern(args.pattern if args.pattern is not None else "cl100k")
    specials = args.special or ()
    options = dict(min_frequency=args.min_frequency, tie_break=args.tie_break, max_token_length=args.max_token_length,
                   progress=args.progress)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)  # stage 1 may run out of pairs: stage 2 goes on
        stage1 = Tokenizer.train(count_files(args, args.files, pattern, specials), vocab_size=args.transition,
                                 pattern=pattern, special_tokens=specials, **options)
    table = count_files(args, args.files, resolve_pattern("superbpe"), specials)
    return Tokenizer.train(table, init=stage1, pattern="superbpe", vocab_size=args.vocab_size, **options)
