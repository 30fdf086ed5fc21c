"""Helpers shared by the commands in this package: tokenizer options and
loading (as ``bytepair.cli`` does it), input files with glob patterns, and
short labels for tokenizer files.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> tokenizer_options(p, multiple=True, read_input=False)
>>> p.parse_args(["-t", "a.json", "-t", "b.json"]).tokenizer
['a.json', 'b.json']
>>> labels(["x/tok.json", "y/tok.json", "z.json"])
['x/tok.json', 'y/tok.json', 'z.json']
>>> labels(["a.json", "a.json"])
['a.json (1)', 'a.json (2)']
"""

from __future__ import annotations

import argparse
import glob
import os
from typing import Dict, List, Sequence

from bytepair.tokenizer import Tokenizer

GLOB_CHARS = "*?["


def tokenizer_options(p: argparse.ArgumentParser, *, multiple: bool = False, read_input: bool = True,
                      format_option: str = "--format") -> None:
    """``-t TOK`` plus ``--format``/``--pattern`` (and ``--errors`` when the
    command reads text), with the help texts of ``bytepair.cli``.

    ``multiple=True`` makes ``-t`` repeatable (``args.tokenizer`` is then a
    list). ``format_option`` names the tokenizer's format option where the
    command's own ``--format`` means something else (encode-dataset's shards)."""
    from bytepair.cli import _tokenizer_options

    if not multiple and read_input and format_option == "--format":
        _tokenizer_options(p)
        return
    scratch = argparse.ArgumentParser(add_help=False)
    _tokenizer_options(scratch)
    helps = {a.dest: a.help for a in scratch._actions}
    if multiple:
        p.add_argument("-t", "--tokenizer", required=True, action="append", metavar="TOK",
                       help=helps["tokenizer"] + "; repeat -t for several tokenizers")
    else:
        p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=helps["tokenizer"])
    p.add_argument(format_option, dest="format", default=None,
                   help=helps["format"] + " (the same for every -t)" if multiple else helps["format"])
    p.add_argument("--pattern", default=None, help=helps["pattern"])
    if read_input:
        p.add_argument("--errors", choices=["strict", "replace"], default="strict", help=helps["errors"])


def load(path: str, args: argparse.Namespace) -> Tokenizer:
    """The tokenizer file ``path``, loaded as ``bytepair.cli._load`` does
    with the ``--format`` and ``--pattern`` of ``args``."""
    from bytepair.cli import _load

    return _load(argparse.Namespace(tokenizer=path, format=args.format, pattern=args.pattern))


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
    matches no file is an error (``bytepair.cli.CliError``).

    >>> expand_paths(["-", "no-such-file.txt"])
    ['-', 'no-such-file.txt']
    """
    from bytepair.cli import CliError

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


def wrap(*paragraphs: str) -> str:
    """Paragraphs filled to 78 columns, for descriptions shown with
    ``argparse.RawDescriptionHelpFormatter`` (which keeps the examples of
    the epilog as written)."""
    import textwrap

    return "\n\n".join(textwrap.fill(" ".join(p.split()), 78) for p in paragraphs)
