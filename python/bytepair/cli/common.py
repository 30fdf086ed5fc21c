"""What the commands share at run time: loading the tokenizer of ``-t``,
reading FILEs and TEXT, glob patterns, short labels for tokenizer files, the
Dask client of ``--dask``, and the training choices that several commands
read from their options (pattern, end-of-word marker, counting FILEs).

>>> labels(["x/tok.json", "y/tok.json", "z.json"])
['x/tok.json', 'y/tok.json', 'z.json']
>>> labels(["a.json", "a.json"])
['a.json (1)', 'a.json (2)']
>>> expand_paths(["-", "no-such-file.txt"])
['-', 'no-such-file.txt']
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence

from bytepair._io import check_writable, decode_utf8, read_bytes
from bytepair.cli.options import CliError
from bytepair.counts import count_words
from bytepair.distributed import connect  # imports Dask only when connecting
from bytepair.encodings import get_encoding, list_encoding_names
from bytepair.errors import InputError
from bytepair.tokenizer import Tokenizer

GLOB_CHARS = "*?["
FOLDER_FORMATS = ("gpt2", "transformers")  # output formats written as a folder


def guess_format(path: str) -> Optional[str]:
    """The format an output name suggests, or None (the one rule of every
    command that writes a tokenizer: ``convert``, ``train -o``): ``*.tiktoken``;
    ``*tokenizer.json`` (``tokenizer.json``, ``gpt2-tokenizer.json``: Hugging
    Face's name, with any prefix); ``*tekken.json``; ``*.model``
    (SentencePiece); another ``*.json`` is native; ``*.codes`` is subword-nmt.

    >>> guess_format("x/cl100k.tiktoken"), guess_format("tokenizer.json"), guess_format("tok.json")
    ('tiktoken', 'hf', 'bytepair')
    >>> guess_format("y-tokenizer.json"), guess_format("tekken.json"), guess_format("m.model")
    ('hf', 'tekken', 'sentencepiece')
    """
    name = os.path.basename(os.path.normpath(path)).lower()
    for ending, fmt in NAME_ENDINGS:
        if name.endswith(ending):
            return fmt
    return None


# an output name's ending -> its format, the first that matches
NAME_ENDINGS = [(".tiktoken", "tiktoken"), (".gguf", "gguf"), ("tokenizer.json", "hf"), ("tekken.json", "tekken"),
                (".model", "sentencepiece"), (".json", "bytepair"), (".codes", "subword-nmt")]


def load(path: str, args: argparse.Namespace) -> Tokenizer:
    """The tokenizer file ``path`` (any supported format), with the
    ``--format`` and ``--pattern`` of ``args``; a name of tiktoken's
    (``cl100k_base``, ...) that is not a file is that encoding, as
    ``bytepair.get_encoding`` gives it (from files already on the machine)."""
    if not os.path.lexists(path):
        if path in list_encoding_names():
            return named_encoding(path, args)
        raise CliError(f"{path}: no such tokenizer file (nor one of tiktoken's encodings: "
                       f"{', '.join(list_encoding_names())})")
    return Tokenizer.load(path, format=args.format, pattern=args.pattern)


def named_encoding(name: str, args: argparse.Namespace) -> Tokenizer:
    """``-t NAME`` for one of tiktoken's encodings: ``get_encoding(NAME)``,
    which brings its own pattern and special tokens (so ``--format`` and
    ``--pattern`` would contradict it) and never downloads.

    >>> named_encoding("cl100k_base", argparse.Namespace(format=None, pattern="gpt2"))
    Traceback (most recent call last):
    ...
    bytepair.cli.options.CliError: -t cl100k_base is tiktoken's encoding of that name, with its own pattern and special tokens: drop --format and --pattern (or give a file)
    """
    if getattr(args, "format", None) not in (None, "tiktoken") or getattr(args, "pattern", None) is not None:
        raise CliError(f"-t {name} is tiktoken's encoding of that name, with its own pattern and special tokens: "
                       "drop --format and --pattern (or give a file)")
    try:
        return get_encoding(name)
    except InputError as e:
        # the API's advice ends with get_encoding(..., download=True), which the CLI does not offer
        raise CliError(str(e).split(", or call get_encoding(")[0]) from None


def check_output(path: str, folder: bool = False) -> None:
    """``CliError`` naming ``path`` unless the command can write it (a file,
    or with ``folder=True`` a folder to create or fill): checked before the
    work starts, so that a bad ``-o`` fails at once, not after hours.

    >>> check_output("/no/such/folder/tok.json")
    Traceback (most recent call last):
    ...
    bytepair.cli.options.CliError: cannot write /no/such/folder/tok.json: folder /no/such/folder does not exist
    """
    try:
        check_writable(path, folder_output=folder)
    except InputError as e:
        raise CliError(str(e)) from None


def check_allowed_special(tok: Tokenizer, names: Sequence[str]) -> None:
    """``CliError`` for a name of ``--allowed-special`` (other than ``all``)
    that is not one of ``tok``'s special tokens, naming the known ones: a
    typo would otherwise leave that token's text encoded as plain text.

    >>> tok = Tokenizer.train("a b", num_merges=0, special_tokens=["<|endoftext|>"])
    >>> check_allowed_special(tok, ["al"])
    Traceback (most recent call last):
    ...
    bytepair.cli.options.CliError: --allowed-special al: not a special token of this tokenizer (known: all, <|endoftext|>)
    """
    unknown = [n for n in names if n != "all" and n not in tok.special_tokens]
    if not unknown:
        return
    if not tok.special_tokens:
        raise CliError(f"--allowed-special {unknown[0]}: this tokenizer has no special tokens")
    known = ", ".join(sorted(tok.special_tokens)[:20])
    more = f" and {len(tok.special_tokens) - 20} more" if len(tok.special_tokens) > 20 else ""
    raise CliError(f"--allowed-special {unknown[0]}: not a special token of this tokenizer (known: all, {known}{more})")


def read_input(path: str, errors: str) -> str:
    """A file (or ``-`` for stdin) as text, UTF-8 checked with its name."""
    if path == "-":
        return decode_utf8(sys.stdin.buffer.read(), "<stdin>", errors)
    return decode_utf8(read_bytes(path), path, errors)


def text_arg(args: argparse.Namespace) -> str:
    """The TEXT argument, or standard input when it is absent."""
    if args.text is not None:
        try:
            # invalid UTF-8 in the command line arrives as lone surrogates (surrogateescape):
            # checked like a file's bytes, with --errors
            raw = args.text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return args.text
        return decode_utf8(raw, "TEXT argument", args.errors)
    return read_input("-", args.errors)


def labels(paths: Sequence[str]) -> List[str]:
    """Short names for tokenizer files: the file name, or the path as given
    when two files share a name."""
    names = [os.path.basename(p) or p for p in paths]
    out = []
    for path, name in zip(paths, names):
        out.append(name if names.count(name) == 1 else path)
    # still equal (the same path twice): number them
    repeated = {name for name in out if out.count(name) > 1}
    seen: Dict[str, int] = {}
    for i, name in enumerate(out):
        if name in repeated:
            seen[name] = seen.get(name, 0) + 1
            out[i] = f"{name} ({seen[name]})"
    return out


def expand_paths(paths: Sequence[str]) -> List[str]:
    """Input paths with glob patterns expanded (``*``, ``?``, ``[...]``, and
    ``**`` for any depth of folders), each pattern's matches sorted; only
    files match. ``-`` (standard input) and paths without pattern characters,
    or that name an existing file, are kept as they are. A pattern that
    matches no file is an error (``CliError``)."""
    out: List[str] = []
    for path in paths:
        if path == "-" or not any(c in path for c in GLOB_CHARS) or os.path.exists(path):
            out.append(path)
            continue
        matches = sorted(m for m in glob.glob(path, recursive=True) if os.path.isfile(m))
        if not matches:
            raise CliError(f"{path}: no file matches this pattern")
        out.extend(matches)
    return out


@contextlib.contextmanager
def dask_client(address: Optional[str]) -> Iterator[Any]:
    """The Dask client of ``--dask ADDR`` (None without it), closed on exit."""
    if not address:
        yield None
        return
    with connect(address) as client:
        yield client


def training_pattern(args: argparse.Namespace, default: Optional[str]) -> Optional[str]:
    """The pattern that ``--pattern`` asks training for: ``default`` when it
    is not given; none for the char model's ``none`` or ``split``
    (whitespace split)."""
    if args.model == "char" and args.pattern in ("none", "split"):
        return None
    return args.pattern if args.pattern is not None else default


def end_of_word(args: argparse.Namespace) -> Optional[str]:
    """The char model's end-of-word marker of ``--end-of-word`` /
    ``--no-end-of-word`` (None: no marker)."""
    return None if args.end_of_word in ("", None) or args.no_end_of_word else args.end_of_word


def count_files(args: argparse.Namespace, files: Sequence[str], pattern: Optional[str], specials: Sequence[str]):
    """The word counts of FILEs as ``bytepair train`` reads them (each file a
    document; JSONL/Parquet with --field/--column, compressed, --max-bytes),
    streamed, on Dask with ``--dask``."""
    with dask_client(getattr(args, "dask", None)) as client:
        return count_words(expand_paths(list(files)), pattern, list(specials), field=args.field, column=args.column,
                           max_bytes=args.max_bytes, errors=args.errors, client=client)
