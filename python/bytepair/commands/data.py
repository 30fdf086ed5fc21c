"""``bytepair count-words`` and ``bytepair encode-dataset``, plus the
streaming options of ``bytepair train`` (``--field``, ``--column``,
``--max-bytes``, ``--from-counts``, ``--dask``).

Inputs are read a block at a time (:mod:`bytepair.corpus`): plain text
(one file, one document), JSONL, Parquet, gzip/zstd, ``-`` for stdin.

>>> parse_size("10M"), parse_size("1500"), parse_size("2G")
(10000000, 1500, 2000000000)
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any, Iterator, List, Optional, TextIO

from bytepair.commands._common import expand_paths, tokenizer_options, wrap
from bytepair.progress import PROGRESS_CHOICES

_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def parse_size(text: str) -> int:
    """A byte count with an optional K, M, G or T suffix (powers of 1000)."""
    t = text.strip().upper().removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] else ""
    number = t[: len(t) - len(unit)]
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 500000, 10M, 2G)") from None
    if value < 0 or value != value:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 500000, 10M, 2G)")
    return int(value)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def _reading_options(p: argparse.ArgumentParser, *, max_bytes: bool = True) -> None:
    p.add_argument("--field", metavar="F",
                   help="read JSONL: one document per line, the string field F (default for *.jsonl: text)")
    p.add_argument("--column", metavar="C", help="Parquet files: the text column C (default: text)")
    if max_bytes:
        p.add_argument("--max-bytes", type=parse_size, metavar="N",
                       help="read only the first N bytes of text of the inputs, in order (K/M/G suffixes: 10M)")
    p.add_argument("--dask", metavar="ADDR",
                   help="run on Dask: 'local' (a 2-worker cluster here; local:N for N workers) or tcp://host:8786")


def _progress_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", choices=PROGRESS_CHOICES, nargs="?", const="bar", default="auto",
                   help="progress on stderr: a bar (also bare --progress; auto: when stderr is a terminal), JSON lines, or none")


@contextlib.contextmanager
def _client(address: Optional[str]) -> Iterator[Any]:
    if not address:
        yield None
        return
    from bytepair.distributed import connect

    with connect(address) as client:
        yield client


def _settings(args: argparse.Namespace):
    """Pattern and special tokens for counting, as ``bytepair train`` would
    train with the same options."""
    from bytepair.training import resolve

    pattern = args.pattern if args.pattern is not None else "default"
    if args.model == "char" and args.pattern in ("none", "split"):
        pattern = None
    settings = resolve(args.model, pattern=pattern, special_tokens=args.special or (),
                       unk_token=getattr(args, "unk_token", None))
    return settings.regex, settings.specials


# ---------------------------------------------------------------- count-words


def cmd_count_words(args: argparse.Namespace, out: TextIO) -> int:
    from bytepair.cli import CliError
    from bytepair.counts import check_settings, count_words, merge_counts_with_header, save_counts

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
            with _client(args.dask) as client:
                more = count_words(files, pattern, specials, field=args.field, column=args.column,
                                   max_bytes=args.max_bytes, errors=args.errors, client=client,
                                   progress=args.progress, stats=stats)
            counts.merge(more)
            for k in meta:
                meta[k] = meta[k] + stats[k] if isinstance(meta[k], int) else None
    else:
        pattern, specials = _settings(args)
        with _client(args.dask) as client:
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


# ---------------------------------------------------------------- encode-dataset


def cmd_encode_dataset(args: argparse.Namespace, out: TextIO) -> int:
    from bytepair.commands._common import load
    from bytepair.dataset import encode_dataset, shard_dtype

    tok = load(args.tokenizer, args)
    files = expand_paths(args.files)
    append: Any = args.eot_token if args.eot_token else bool(args.append_eot)
    shard_tokens = None
    if args.shard_mb is not None:
        import numpy

        itemsize = numpy.dtype(shard_dtype(tok, args.shard_format)).itemsize
        shard_tokens = max(1, int(args.shard_mb * 1_000_000) // itemsize)
    with _client(args.dask) as client:
        manifest = encode_dataset(tok, files, args.output, append_eot=append, shard_tokens=shard_tokens,
                                  field=args.field, column=args.column, errors=args.errors, client=client,
                                  progress=args.progress, shard_format=args.shard_format)
    print(f"encoded {manifest['documents']} documents, {manifest['tokens']} tokens ({manifest['dtype']}) "
          f"into {manifest['n_shards']} shards: wrote {args.output}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- train


def add_train_options(p: argparse.ArgumentParser) -> None:
    """The streaming options of ``bytepair train``."""
    _reading_options(p)
    p.add_argument("--max-memory", metavar="SIZE", default=None,
                   help="memory the whole process may use (e.g. 8G, 500M; 'none': no check). Before merging (and "
                        "every 64 MB while counting), the need is estimated from the distinct words and training "
                        "stops with an error if it would not fit; default: what is held plus MemAvailable")
    p.add_argument("--from-counts", action="append", metavar="COUNTS",
                   help="train from a counts file of bytepair count-words instead of FILEs "
                        "(repeat to merge several, in order)")


def train_tokenizer(args: argparse.Namespace, init: Any = None):
    """The tokenizer that ``bytepair train`` makes: FILEs read in blocks
    (on Dask with ``--dask``), or counts files (``--from-counts``)."""
    from bytepair.cli import CliError
    from bytepair.tokenizer import Tokenizer

    options = dict(vocab_size=args.vocab_size, num_merges=args.merges, min_frequency=args.min_frequency,
                   tie_break=args.tie_break, max_token_length=args.max_token_length, progress=args.progress,
                   max_memory=args.max_memory)
    if init is None:
        end_of_word = None if args.end_of_word in ("", None) or args.no_end_of_word else args.end_of_word
        options.update(model=args.model, end_of_word=end_of_word, end_of_word_fused=args.fused,
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
                options["pattern"] = None if args.model == "char" and args.pattern in ("none", "split") else args.pattern
            if args.special:
                options["special_tokens"] = args.special
        return Tokenizer.train_from_counts(args.from_counts, **options)
    files = expand_paths(args.files)
    if not files:
        raise CliError("nothing to train on: give FILE... (or - for standard input) or --from-counts COUNTS")
    if init is None:
        pattern = args.pattern if args.pattern is not None else "default"
        if args.model == "char" and args.pattern in ("none", "split"):
            pattern = None
        options.update(pattern=pattern, special_tokens=args.special or ())
    with _client(args.dask) as client:
        return Tokenizer.train_from_files(files, client=client, field=args.field, column=args.column,
                                max_bytes=args.max_bytes, errors=args.errors, **options)


# ---------------------------------------------------------------- parsers


def register(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "count-words", help="count the words of files into a counts file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
    _reading_options(p)
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="invalid UTF-8 in the input: stop with an error (default) or replace it")
    _progress_option(p)
    p.set_defaults(run=cmd_count_words)

    p = sub.add_parser(
        "encode-dataset", help="encode files into shards of token ids (.npy)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=wrap(
            "Encode the documents of FILEs (encode_ordinary, plus an end-of-text token with --append-eot) "
            "into OUTDIR: shard_NNNNNN.npy (token ids, uint16 when the vocabulary fits, else uint32; "
            "--shard-mb MB each, the last one shorter), shard_NNNNNN.idx.npy (where each document starts) "
            "and manifest.json. Shards depend only on the inputs, the tokenizer and the shard size.",
            "The output is built in OUTDIR.partial and renamed when complete; after an interruption, run "
            "the same command again to continue where it stopped.",
        ),
        epilog="examples:\n"
               "  bytepair encode-dataset -t tok.json corpus/*.txt -o data --append-eot\n"
               "  bytepair encode-dataset -t tok.json corpus/*.txt -o data --append-eot --format bin  # llm.c\n"
               "  bytepair encode-dataset -t tok.json shards/*.parquet --column text --dask tcp://sched:8786 -o data",
    )
    tokenizer_options(p, format_option="--tokenizer-format")
    p.add_argument("files", nargs="+", metavar="FILE", help="text, JSONL or Parquet files (.gz/.zst compressed or not)")
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="output folder (must not exist, or be empty)")
    p.add_argument("--append-eot", action="store_true", help="append <|endoftext|> after every document")
    p.add_argument("--eot-token", metavar="TOK", help="append this special token after every document")
    p.add_argument("--shard-mb", type=_positive_float, metavar="MB",
                   help="shard size in MB of ids (default 100)")
    p.add_argument("--format", dest="shard_format", choices=["npy", "bin", "u16", "u32"], default="npy",
                   help="shard files: .npy (default); .bin, llm.c / modded-nanogpt shards (256 x int32 header: "
                        "magic 20240520 version 1 for uint16 ids, 20240801 version 7 for uint32); "
                        ".u16 / .u32, raw ids to np.memmap (the tokenizer's format: --tokenizer-format)")
    _reading_options(p, max_bytes=False)
    _progress_option(p)
    p.set_defaults(run=cmd_encode_dataset)


__all__: List[str] = ["register", "add_train_options", "train_tokenizer", "parse_size"]
