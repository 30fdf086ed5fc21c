"""``bytepair encode``: text to token ids. TEXT (or standard input) is
printed as ids; with ``--input FILE`` or ``-o OUT`` the input is read a block
at a time and the ids are written as they are settled (``bytepair.stream``),
so a text of any size encodes in bounded memory, with the same ids.

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> args = sub.choices["encode"].parse_args(["-t", "tok.json", "hi", "--allowed-special", "all"])
>>> args.text, allowed_special(args), args.progress
('hi', 'all', 'none')
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from bytepair.cli.common import check_allowed_special, check_output, load, text_arg
from bytepair.cli.options import CliError, progress_option, tokenizer_options
from bytepair.errors import DisallowedSpecialError
from bytepair.progress import make_reporter
from bytepair.stream import file_blocks, format_for, write_ids
from bytepair.tokenizer import Tokenizer


def allowed_special(args: argparse.Namespace):
    """``--allowed-special``: ``"all"``, or the set of tokens named."""
    return "all" if "all" in (args.allowed_special or []) else set(args.allowed_special or [])


def _disallowed(e: DisallowedSpecialError) -> CliError:
    token = json.dumps(e.args[1], ensure_ascii=False)  # the error carries the token; quoted for the shell
    return CliError(
        f"the text holds special-token text {token}: pass --allowed-special {token} "
        "to encode it as the special token, or --ordinary to encode it as plain text"
    )


class _TextSink:
    """A binary-file face for a text stream (ids printed as they come)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def write(self, data: bytes) -> int:
        return self.out.write(data.decode("ascii"))


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.output is not None:
        check_output(args.output)
    tok = load(args.tokenizer, args)
    check_allowed_special(tok, args.allowed_special or [])
    if args.input is not None or args.output is not None:
        return _encode_streaming(args, tok, out)
    text = text_arg(args)
    if args.ordinary:
        ids = tok.encode_ordinary(text, add_special_tokens=args.add_special_tokens)
    else:
        try:
            ids = tok.encode(text, allowed_special=allowed_special(args), dropout=args.dropout, seed=args.seed,
                             add_special_tokens=args.add_special_tokens)
        except DisallowedSpecialError as e:
            raise _disallowed(e) from None
    print(" ".join(map(str, ids)), file=out)
    return 0


def _encode_streaming(args: argparse.Namespace, tok: Tokenizer, out: TextIO) -> int:
    """``encode --input FILE`` / ``-o OUT``: the input read a block at a
    time, the ids written as they are settled (OUT atomically)."""
    fmt = format_for(args.output, args.to)
    if args.output is None and fmt == "npy":
        raise CliError("--to npy writes a file: give -o OUT.npy")
    report = make_reporter(args.progress)
    blocks = [args.text] if args.text is not None else file_blocks(args.input or "-", args.errors, report=report)
    options = dict(allowed_special=set(), disallowed_special=()) if args.ordinary else dict(
        allowed_special=allowed_special(args), dropout=args.dropout, seed=args.seed)
    chunks = tok.encode_stream(blocks, add_special_tokens=args.add_special_tokens, **options)
    try:
        if args.output is None:
            write_ids(_TextSink(out), chunks, fmt, tok.n_vocab)  # type: ignore[arg-type]
            return 0
        n = write_ids(args.output, chunks, fmt, tok.n_vocab)
    except DisallowedSpecialError as e:
        raise _disallowed(e) from None
    print(f"encoded {n} tokens ({fmt}): wrote {args.output}", file=sys.stderr)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = sub.add_parser(
        "encode", help="text to token ids",
        description="Print the ids of TEXT (or standard input). With --input FILE or -o OUT the input is read a "
                    "block at a time and the ids are written as they are settled, so a text of any size "
                    "(a single 1 GB document) encodes in bounded memory, with the same ids.")
    tokenizer_options(p)
    source = p.add_mutually_exclusive_group()
    source.add_argument("text", nargs="?", metavar="TEXT", help="text to encode (default: standard input)")
    source.add_argument("-i", "--input", metavar="FILE",
                        help="encode this file as one text, read a block at a time (.gz/.zst decompressed; - for stdin)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the ids to OUT (atomically) instead of printing them: a .npy array (uint16 when the "
                        "vocabulary fits, else uint32, like encode-dataset shards) or, for other names, text ids")
    p.add_argument("--to", choices=["npy", "text"], default=None,
                   help="format of the ids written by -o (default: npy for *.npy, else text)")
    progress_option(p, default="none", help="with --input: progress on stderr (bytes read): a bar (also bare "
                                            "--progress), JSON lines, or none (default)")
    p.add_argument("--allowed-special", action="append", metavar="TOK",
                   help="encode this special token's text as the token ('all' for every one); repeatable")
    p.add_argument("--ordinary", action="store_true", help="treat special-token text as plain text")
    p.add_argument("--add-special-tokens", action="store_true",
                   help="add the tokens the model's owner adds around a text (BOS/EOS: a tokenizer.json's "
                        "post-processor, a .model's BOS, tekken.json's BOS; nothing for tiktoken files)")
    p.add_argument("--dropout", type=float, default=None, metavar="P",
                   help="BPE-dropout: skip each candidate merge with probability P (lossless)")
    p.add_argument("--seed", type=int, default=0, help="seed of --dropout (same seed, same ids)")
    p.set_defaults(run=run)
