"""``bytepair train --superword --transition T FILE...``: SuperBPE training
from the command line (``Tokenizer.train(superword=True, transition=T)``).

>>> import argparse
>>> p = argparse.ArgumentParser(); add_superword_options(p)
>>> p.parse_args(["--superword", "--transition", "180000"]).transition
180000
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def add_superword_options(p: argparse.ArgumentParser) -> None:
    """The SuperBPE options of ``bytepair train``."""
    g = p.add_argument_group("SuperBPE (arXiv 2503.13423): tokens that bridge spaces")
    g.add_argument("--superword", action="store_true",
                   help="train in two stages: plain BPE up to --transition tokens, then on with the 'superbpe' "
                        "pattern (tokens may span several words) up to --vocab-size; byte model only")
    g.add_argument("--transition", type=int, metavar="T", help="vocabulary size at which stage 2 starts")


def train_superword_from_args(args: argparse.Namespace) -> Any:
    """The tokenizer of ``bytepair train --superword ...``: FILEs are read
    whole (both stages read them), each line a document."""
    import pathlib

    from bytepair.cli import CliError
    from bytepair.commands.parity import _read_lines
    from bytepair.tokenizer import Tokenizer

    if getattr(args, "from_counts", None) or getattr(args, "init", None) or getattr(args, "dask", None):
        raise CliError("--superword trains from FILEs: drop --from-counts, --init and --dask")
    if args.merges is not None or args.vocab_size is None or args.transition is None:
        raise CliError("--superword needs --transition T and --vocab-size N (not --merges)")
    if not args.files or "-" in args.files:
        raise CliError("--superword needs FILE... (standard input cannot be read twice)")
    if len(args.files) == 1 and args.errors == "strict" and os.path.isfile(args.files[0]):
        corpus: Any = pathlib.Path(args.files[0])
    else:
        corpus = _read_lines(args.files, args.errors)
    pattern = args.pattern if args.pattern is not None else "default"
    return Tokenizer.train(
        corpus, model=args.model, vocab_size=args.vocab_size, min_frequency=args.min_frequency, pattern=pattern,
        tie_break=args.tie_break, special_tokens=args.special or (), max_token_length=args.max_token_length,
        progress=args.progress, superword=True, transition=args.transition,
    )
