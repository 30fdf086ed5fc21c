"""``bytepair train --parity LANG=FILE ...``: parity-aware training from the
command line (:meth:`bytepair.Tokenizer.train_parity`); a helper of
:mod:`bytepair.cli.train`.

>>> pairs(["en=a.txt", "de=b.txt", "en=c.txt"], "--parity")
{'en': ['a.txt', 'c.txt'], 'de': ['b.txt']}
"""

from __future__ import annotations

import argparse
from typing import Dict, List, Optional, Sequence

from bytepair.cli.common import count_files, end_of_word, training_pattern
from bytepair.cli.options import CliError
from bytepair.patterns import default_pattern
from bytepair.tokenizer import Tokenizer


def add_parity_options(p: argparse.ArgumentParser) -> None:
    """The parity options of ``bytepair train``."""
    g = p.add_argument_group("parity-aware training (arXiv 2508.04796, HF's ParityBpeTrainer)")
    g.add_argument("--parity", action="append", metavar="LANG=FILE",
                   help="a training file of language LANG (repeat: one or more per language); each merge goes "
                        "to the language compressed worst so far. Replaces FILE...")
    g.add_argument("--dev", action="append", metavar="LANG=FILE",
                   help="development text of LANG (ideally parallel across languages) that measures compression")
    g.add_argument("--ratio", action="append", metavar="LANG=R",
                   help="target compression ratio of LANG (without --dev): a higher R gives LANG more merges")
    g.add_argument("--variant", choices=["base", "window"], default="base",
                   help="base: always the worst language; window: a language that took more than ALPHA/languages "
                        "of the last WINDOW merges gives way (default base)")
    g.add_argument("--global-merges", type=int, default=0, metavar="N",
                   help="the first N merges are plain BPE over all languages together (default 0)")
    g.add_argument("--window-size", type=int, default=100, metavar="WINDOW", help="window variant (default 100)")
    g.add_argument("--alpha", type=float, default=2.0, help="window variant (default 2.0)")


def pairs(values: Sequence[str], option: str) -> Dict[str, List[str]]:
    """``LANG=VALUE`` arguments grouped by language, in first-appearance order."""

    out: Dict[str, List[str]] = {}
    for v in values:
        lang, sep, value = v.partition("=")
        if not sep or not lang or not value:
            raise CliError(f"{option} {v!r}: expected LANG=VALUE")
        out.setdefault(lang, []).append(value)
    return out


def train_parity_from_args(args: argparse.Namespace) -> Tokenizer:
    """The tokenizer of ``bytepair train --parity ...``: each language's FILEs
    are counted as ``bytepair train`` counts its FILEs (streamed; ``--dask``)."""

    if args.files or getattr(args, "from_counts", None) or getattr(args, "init", None):
        raise CliError("--parity gives the training files: drop FILE..., --from-counts and --init")
    train = pairs(args.parity, "--parity")
    dev: Optional[Dict[str, List[str]]] = pairs(args.dev, "--dev") if args.dev else None
    if dev is not None and sorted(dev) != sorted(train):
        raise CliError(f"--dev must give every language of --parity ({', '.join(train)}), and no other")
    ratio = None
    if args.ratio:
        given = pairs(args.ratio, "--ratio")
        try:
            ratio = {lang: float(v[-1]) for lang, v in given.items()}
        except ValueError as e:
            raise CliError(f"--ratio: {e}") from None
    pattern = training_pattern(args, "default")
    regex, specials = default_pattern(pattern, args.model), args.special or ()
    corpora = {lang: count_files(args, files, regex, specials) for lang, files in train.items()}
    dev_corpora = {lang: count_files(args, dev[lang], regex, specials) for lang in train} if dev else None
    return Tokenizer.train_parity(
        corpora, dev=dev_corpora, ratio=ratio, variant=args.variant, global_merges=args.global_merges,
        window_size=args.window_size, alpha=args.alpha, model=args.model, vocab_size=args.vocab_size,
        num_merges=args.merges, min_frequency=args.min_frequency, pattern=pattern, end_of_word=end_of_word(args),
        end_of_word_fused=args.fused, tie_break=args.tie_break, special_tokens=args.special or (),
        max_token_length=args.max_token_length, progress=args.progress,
    )
