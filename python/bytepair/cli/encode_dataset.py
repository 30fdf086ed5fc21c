"""``bytepair encode-dataset``: the documents of FILEs encoded into shards
of token ids (``.npy``, llm.c ``.bin``, raw ``.u16``/``.u32``) with an
index and a manifest (:mod:`bytepair.dataset`), resumable, on Dask with
``--dask``.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> args = sub.choices["encode-dataset"].parse_args(["-t", "tok.json", "a.txt", "-o", "data", "--to", "bin"])
>>> args.shard_format, args.format, args.progress
('bin', None, 'auto')
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from bytepair.cli.common import check_output, dask_client, expand_paths, load
from bytepair.cli.options import CliError, add_described, positive_float, progress_option, reading_options, tokenizer_options, wrap
from bytepair.dataset import encode_dataset, shard_dtype


SHARD_FORMATS = ["npy", "bin", "u16", "u32"]


def shard_format(args: argparse.Namespace) -> str:
    """``--to``; ``--format`` with a shard format's name is read as ``--to``
    (with a note), as earlier versions had it, since no tokenizer format has
    such a name.

    >>> shard_format(argparse.Namespace(format=None, shard_format="bin"))
    'bin'
    >>> shard_format(argparse.Namespace(format=None, shard_format=None))
    'npy'
    """
    if args.format in SHARD_FORMATS:
        if args.shard_format is not None:
            raise CliError(f"--format {args.format} is a shard format: give it once, as --to {args.format}")
        print(f"bytepair encode-dataset: note: --format now names the tokenizer's format; "
              f"read --format {args.format} as --to {args.format}", file=sys.stderr)
        args.shard_format, args.format = args.format, None
    return args.shard_format or "npy"


def run(args: argparse.Namespace, out: TextIO) -> int:
    args.shard_format = shard_format(args)
    check_output(args.output, folder=True)
    tok = load(args.tokenizer, args)
    files = expand_paths(args.files)
    append: Any = args.eot_token if args.eot_token else bool(args.append_eot)
    shard_tokens = None
    if args.shard_mb is not None:
        import numpy  # only for --shard-mb (numpy is slow to import)

        itemsize = numpy.dtype(shard_dtype(tok, args.shard_format)).itemsize
        shard_tokens = max(1, int(args.shard_mb * 1_000_000) // itemsize)
    with dask_client(args.dask) as client:
        manifest = encode_dataset(tok, files, args.output, append_eot=append, shard_tokens=shard_tokens,
                                  field=args.field, column=args.column, errors=args.errors, client=client,
                                  progress=args.progress, shard_format=args.shard_format)
    print(f"encoded {manifest['documents']} documents, {manifest['tokens']} tokens ({manifest['dtype']}) "
          f"into {manifest['n_shards']} shards: wrote {args.output}", file=sys.stderr)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "encode-dataset", help="encode files into shards of token ids (.npy)",
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
               "  bytepair encode-dataset -t tok.json corpus/*.txt -o data --append-eot --to bin  # llm.c\n"
               "  bytepair encode-dataset -t tok.json shards/*.parquet --column text --dask tcp://sched:8786 -o data",
    )
    tokenizer_options(p, old_format_names=["--tokenizer-format"])
    p.add_argument("files", nargs="+", metavar="FILE", help="text, JSONL or Parquet files (.gz/.zst compressed or not)")
    p.add_argument("-o", "--output", required=True, metavar="OUTDIR", help="output folder (must not exist, or be empty)")
    p.add_argument("--append-eot", action="store_true", help="append <|endoftext|> after every document")
    p.add_argument("--eot-token", metavar="TOK", help="append this special token after every document")
    p.add_argument("--shard-mb", type=positive_float, metavar="MB",
                   help="shard size in MB of ids (default 100)")
    p.add_argument("--to", dest="shard_format", choices=SHARD_FORMATS, default=None,
                   help="shard files: .npy (default); .bin, llm.c / modded-nanogpt shards (256 x int32 header: "
                        "magic 20240520 version 1 for uint16 ids, 20240801 version 7 for uint32); "
                        ".u16 / .u32, raw ids to np.memmap (the tokenizer's format is --format, as in every command)")
    reading_options(p, max_bytes=False)
    progress_option(p)
    p.set_defaults(run=run)
