"""The ``bytepair`` command line: train, encode, tokenize, decode, count.

Every command calls only the public API. Errors are one line on stderr with
exit status 1 (2 for usage errors); outputs are written atomically.

>>> main(["--version"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Callable, List, Optional, Sequence, TextIO

from bytepair import __version__
from bytepair._io import decode_utf8, read_bytes
from bytepair.errors import BytepairError, DisallowedSpecialError, TrainingWarning
from bytepair.progress import PROGRESS_CHOICES
from bytepair.tokenizer import Tokenizer


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def _read_input(path: str, errors: str) -> str:
    """A file (or ``-`` for stdin) as text, UTF-8 checked with its name."""
    if path == "-":
        return decode_utf8(sys.stdin.buffer.read(), "<stdin>", errors)
    return decode_utf8(read_bytes(path), path, errors)


def _text_arg(args: argparse.Namespace) -> str:
    """The TEXT argument, or standard input when it is absent."""
    if args.text is not None:
        try:
            # invalid UTF-8 in the command line arrives as lone surrogates (surrogateescape):
            # checked like a file's bytes, with --errors
            raw = args.text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return args.text
        return decode_utf8(raw, "TEXT argument", args.errors)
    return _read_input("-", args.errors)


def _load(args: argparse.Namespace) -> Tokenizer:
    """The tokenizer named by ``-t`` (any supported format)."""
    if not os.path.lexists(args.tokenizer):
        raise CliError(f"{args.tokenizer}: no such tokenizer file")
    return Tokenizer.load(args.tokenizer, format=args.format, pattern=args.pattern)


def _show_piece(piece) -> str:
    return piece.decode("utf-8", "backslashreplace") if isinstance(piece, bytes) else piece


def _special_options(args: argparse.Namespace):
    allowed = "all" if "all" in (args.allowed_special or []) else set(args.allowed_special or [])
    return allowed


# ---------------------------------------------------------------- commands


def cmd_train(args: argparse.Namespace, out: TextIO) -> int:
    from bytepair._io import check_writable
    from bytepair.commands.data import train_tokenizer

    if args.to != "gpt2":  # a folder, created when written
        check_writable(args.output)  # fail before training, not after
    init = None
    if args.init:
        if not os.path.lexists(args.init):
            raise CliError(f"{args.init}: no such tokenizer file")
        init = Tokenizer.load(args.init)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TrainingWarning)
        if args.parity:
            from bytepair.commands.parity import train_parity_from_args

            args.tie_break = args.tie_break or "max-string"
            tok = train_parity_from_args(args)
        elif args.superword:
            from bytepair.commands.superword import train_superword_from_args

            args.tie_break = args.tie_break or "first"
            tok = train_superword_from_args(args)
        else:
            if args.transition is not None:
                raise CliError("--transition applies only with --superword")
            args.tie_break = args.tie_break or "first"
            tok = train_tokenizer(args, init)
    return _finish_training(args, tok, caught, out)


def _finish_training(args: argparse.Namespace, tok: Tokenizer, caught, out: TextIO) -> int:
    for w in caught:
        print(f"bytepair: warning: {w.message}", file=sys.stderr)
    if args.trace:
        for line in tok.trace():
            print(line, file=out)
    tok.save(args.output, format=args.to)
    if not args.trace:
        print(f"trained {len(tok.merge_counts)} merges, {tok.n_vocab} tokens: wrote {args.output}", file=sys.stderr)
    return 0


def _disallowed(e: DisallowedSpecialError) -> CliError:
    token = e.args[1] if len(e.args) > 1 else str(e).split("token ", 1)[-1].split(".\n")[0]
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


def cmd_encode(args: argparse.Namespace, out: TextIO) -> int:
    tok = _load(args)
    if args.input is not None or args.output is not None:
        return _encode_streaming(args, tok, out)
    text = _text_arg(args)
    if args.ordinary:
        ids = tok.encode_ordinary(text)
    else:
        try:
            ids = tok.encode(text, allowed_special=_special_options(args), dropout=args.dropout, seed=args.seed)
        except DisallowedSpecialError as e:
            raise _disallowed(e) from None
    print(" ".join(map(str, ids)), file=out)
    return 0


def _encode_streaming(args: argparse.Namespace, tok: Tokenizer, out: TextIO) -> int:
    """``encode --input FILE`` / ``-o OUT``: the input read a block at a
    time, the ids written as they are settled (OUT atomically)."""
    from bytepair.progress import make_reporter
    from bytepair.stream import file_blocks, format_for, write_ids

    fmt = format_for(args.output, args.to)
    if args.output is None and fmt == "npy":
        raise CliError("--to npy writes a file: give -o OUT.npy")
    report = make_reporter(args.progress)
    blocks = [args.text] if args.text is not None else file_blocks(args.input or "-", args.errors, report=report)
    options = dict(allowed_special=set(), disallowed_special=()) if args.ordinary else dict(
        allowed_special=_special_options(args), dropout=args.dropout, seed=args.seed)
    chunks = tok.encode_stream(blocks, **options)
    try:
        if args.output is None:
            write_ids(_TextSink(out), chunks, fmt, tok.n_vocab)  # type: ignore[arg-type]
            return 0
        n = write_ids(args.output, chunks, fmt, tok.n_vocab)
    except DisallowedSpecialError as e:
        raise _disallowed(e) from None
    print(f"encoded {n} tokens ({fmt}): wrote {args.output}", file=sys.stderr)
    return 0


def cmd_tokenize(args: argparse.Namespace, out: TextIO) -> int:
    tok = _load(args)
    pieces = tok.tokenize(_text_arg(args))
    if args.json:
        shown = [p if isinstance(p, str) else list(p) for p in pieces]
        print(json.dumps(shown, ensure_ascii=False), file=out)
    else:
        print(" ".join(_show_piece(p) for p in pieces), file=out)
    return 0


def _parse_ids(words: Sequence[str]) -> List[int]:
    ids = []
    for w in words:
        try:
            ids.append(int(w))
        except ValueError:
            raise CliError(f"{w!r} is not a token id (ids are integers)") from None
    return ids


def cmd_decode(args: argparse.Namespace, out: TextIO) -> int:
    tok = _load(args)
    words = args.ids if args.ids else _read_input("-", args.errors).split()
    ids = _parse_ids(words)
    try:
        text = tok.decode(ids, errors=args.decode_errors)
    except UnicodeDecodeError as e:
        raise CliError(
            f"the tokens' bytes are not valid UTF-8 at byte offset {e.start} (byte 0x{e.object[e.start]:02X}): "
            "use --decode-errors replace (the default), backslashreplace or ignore"
        ) from None
    out.write(text + ("" if args.no_newline else "\n"))
    return 0


def cmd_count(args: argparse.Namespace, out: TextIO) -> int:
    tok = _load(args)
    from bytepair.commands._common import expand_paths

    from bytepair.stream import file_blocks

    results = []
    for path in expand_paths(args.files or ["-"]):
        # streamed, as tok.count(text) of the whole file, in bounded memory
        ids = tok.encode_stream(file_blocks(path, args.errors), allowed_special=set(), disallowed_special=())
        results.append((path, sum(len(chunk) for chunk in ids)))
    if args.json:
        total = sum(n for _, n in results)
        print(json.dumps({"files": {p: n for p, n in results}, "total": total}), file=out)
        return 0
    for path, n in results:
        print(f"{n}\t{path}", file=out)
    if len(results) > 1:
        print(f"{sum(n for _, n in results)}\ttotal", file=out)
    return 0


# ---------------------------------------------------------------- parser


def _tokenizer_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-t", "--tokenizer", required=True, metavar="TOK",
                   help="tokenizer file: native JSON, HF tokenizer.json, .tiktoken (--pattern for an unknown one), "
                        "a GPT-2 folder (vocab.json + merges.txt) or subword-nmt codes")
    p.add_argument("--format", default=None, help="format of TOK (detected when omitted)")
    p.add_argument("--pattern", default=None,
                   help="pre-tokenizer for formats that do not store one (e.g. .tiktoken): gpt2, cl100k, o200k or a regex")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="invalid UTF-8 in the input: stop with an error (default) or replace it")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bytepair",
        description="Train byte-pair-encoding tokenizers and encode, decode and count tokens.",
    )
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("train", help="learn merges from text files",
                       description="Learn a BPE tokenizer from text files (each file is one document).")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="UTF-8 text files (one document each; JSONL with --field, Parquet with --column, "
                        ".gz/.zst compressed); - reads standard input")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the tokenizer")
    p.add_argument("--to", default="bytepair", metavar="FMT", help="output format (default: bytepair JSON)")
    p.add_argument("--model", choices=["byte", "char"], default="byte", help="byte-level (default) or character-level BPE")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--vocab-size", type=int, metavar="N", help="stop when the vocabulary has N tokens (all counted)")
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
    p.add_argument("--byte-fallback", action="store_true", help="char model: add <0xNN> tokens for unseen characters")
    p.add_argument("--unk-token", default=None, metavar="TOK", help="char model: token for unseen characters")
    p.add_argument("--max-token-length", type=int, metavar="N",
                   help="never merge into a token longer than N (characters in the char model, bytes in the byte model)")
    p.add_argument("--init", metavar="TOK",
                   help="continue training this tokenizer: its ids, merges and settings are kept, new merges follow")
    p.add_argument("--trace", action="store_true", help="print each merge as it is learned (seed 000's format)")
    p.add_argument("--progress", choices=PROGRESS_CHOICES, nargs="?", const="bar", default="auto",
                   help="progress on stderr: a bar (also bare --progress; auto: when stderr is a terminal), JSON lines, or none")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="invalid UTF-8 in the input: stop with an error (default) or replace it")
    from bytepair.commands.data import add_train_options

    add_train_options(p)
    from bytepair.commands.parity import add_parity_options

    add_parity_options(p)
    from bytepair.commands.superword import add_superword_options

    add_superword_options(p)
    p.set_defaults(run=cmd_train)

    p = sub.add_parser(
        "encode", help="text to token ids",
        description="Print the ids of TEXT (or standard input). With --input FILE or -o OUT the input is read a "
                    "block at a time and the ids are written as they are settled, so a text of any size "
                    "(a single 1 GB document) encodes in bounded memory, with the same ids.")
    _tokenizer_options(p)
    source = p.add_mutually_exclusive_group()
    source.add_argument("text", nargs="?", metavar="TEXT", help="text to encode (default: standard input)")
    source.add_argument("-i", "--input", metavar="FILE",
                        help="encode this file as one text, read a block at a time (.gz/.zst decompressed; - for stdin)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the ids to OUT (atomically) instead of printing them: a .npy array (uint16 when the "
                        "vocabulary fits, else uint32, like encode-dataset shards) or, for other names, text ids")
    p.add_argument("--to", choices=["npy", "text"], default=None,
                   help="format of the ids written by -o (default: npy for *.npy, else text)")
    p.add_argument("--progress", choices=PROGRESS_CHOICES, nargs="?", const="bar", default="none",
                   help="with --input: progress on stderr (bytes read): a bar (also bare --progress), JSON lines, or none (default)")
    p.add_argument("--allowed-special", action="append", metavar="TOK",
                   help="encode this special token's text as the token ('all' for every one); repeatable")
    p.add_argument("--ordinary", action="store_true", help="treat special-token text as plain text")
    p.add_argument("--dropout", type=float, default=None, metavar="P",
                   help="BPE-dropout: skip each candidate merge with probability P (lossless)")
    p.add_argument("--seed", type=int, default=0, help="seed of --dropout (same seed, same ids)")
    p.set_defaults(run=cmd_encode)

    p = sub.add_parser("tokenize", help="text to token pieces", description="Print the pieces of TEXT, space-separated.")
    _tokenizer_options(p)
    p.add_argument("text", nargs="?", metavar="TEXT", help="text to tokenize (default: standard input)")
    p.add_argument("--json", action="store_true", help="print a JSON list (byte pieces as lists of byte values)")
    p.set_defaults(run=cmd_tokenize)

    p = sub.add_parser("decode", help="token ids to text", description="Print the text of token ids.")
    _tokenizer_options(p)
    p.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: read from standard input)")
    p.add_argument("--decode-errors", default="replace", choices=["replace", "strict", "backslashreplace", "ignore"],
                   help="what to do with invalid UTF-8 in the decoded bytes (default replace)")
    p.add_argument("-n", "--no-newline", action="store_true", help="do not print a final newline")
    p.set_defaults(run=cmd_decode)

    p = sub.add_parser("count", help="count tokens in files",
                       description="Count tokens (special-token text counts as plain text).")
    _tokenizer_options(p)
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="files or glob patterns ('*.txt', '**' for any depth; quote them) to count (default: standard input)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=cmd_count)

    import importlib

    from bytepair.commands import COMMANDS

    for name in COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def bare_progress(argv: Sequence[str]) -> List[str]:
    """``--progress`` given without a value means ``--progress=bar`` (as users
    type ``rsync --progress``), also when a file or text follows it.

    >>> bare_progress(["train", "--progress", "corpus.txt", "-o", "t.json"])
    ['train', '--progress=bar', 'corpus.txt', '-o', 't.json']
    >>> bare_progress(["train", "c.txt", "--progress", "json"])
    ['train', 'c.txt', '--progress', 'json']
    """
    out: List[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            return out + list(argv[i:])
        following = argv[i + 1] if i + 1 < len(argv) else None
        out.append("--progress=bar" if arg == "--progress" and following not in PROGRESS_CHOICES else arg)
    return out


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None) -> int:
    """Run the CLI; returns the exit status.

    >>> main(["train", "--help"])  # doctest: +SKIP
    """
    parser = build_parser()
    args = parser.parse_args(bare_progress(sys.argv[1:] if argv is None else list(argv)))
    run: Callable[[argparse.Namespace, TextIO], int] = args.run
    try:
        return run(args, out or sys.stdout)
    except (BytepairError, CliError) as e:
        message = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"bytepair {args.command}: error: {message}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"bytepair {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"bytepair {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
