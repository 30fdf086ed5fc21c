"""The options that several commands share, each defined once here, and
``CliError``. This module imports nothing from the other ``bytepair.cli``
modules: the commands import it, never the other way round.

- ``-t/--tokenizer`` with ``--format`` and ``--pattern`` (:func:`tokenizer_options`);
- ``--errors`` (:func:`errors_option`), ``--progress`` (:func:`progress_option`);
- ``--field``, ``--column``, ``--max-bytes``, ``--dask`` (:func:`reading_options`);
- argument types: :func:`size` (``bytepair.limits.parse_size``), :func:`positive_float`.

>>> import argparse
>>> p = argparse.ArgumentParser()
>>> tokenizer_options(p, multiple=True, read_input=False)
>>> p.parse_args(["-t", "a.json", "-t", "b.json"]).tokenizer
['a.json', 'b.json']
>>> p = argparse.ArgumentParser(); reading_options(p); progress_option(p)
>>> args = p.parse_args(["--max-bytes", "10M", "--progress", "json"])
>>> args.max_bytes, args.progress
(10000000, 'json')
"""

from __future__ import annotations

import argparse
import re
import textwrap
from typing import Sequence

from bytepair.limits import parse_size
from bytepair.progress import PROGRESS_CHOICES


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


# the API's parameter names in messages and the CLI options that set them
API_TO_OPTION = {
    "vocab_size": "--vocab-size", "num_merges": "--merges", "min_frequency": "--min-frequency",
    "max_token_length": "--max-token-length", "tie_break": "--tie-break", "max_memory": "--max-memory",
    "max_bytes": "--max-bytes", "allowed_special": "--allowed-special", "unk_token": "--unk-token",
    "byte_fallback": "--byte-fallback", "end_of_word": "--end-of-word", "transition": "--transition",
    "superword": "--superword", "errors": "--errors", "pattern": "--pattern", "shard_format": "--to",
    "field": "--field", "column": "--column", "client": "--dask", "special_tokens": "--special",
    "required_tokens": "--required-token", "init": "--init",
    "model": "--model", "append_eot": "--eot-token", "address": "--dask",
}
# the API's functions in messages and the commands (or options) that do the same
API_TO_COMMAND = {
    "bytepair.counts.count_words": "bytepair count-words", "bytepair.counts.merge_counts": "count-words --merge",
    "Tokenizer.train_from_counts": "train --from-counts",
}
# names that are words too, or options of only some commands: only as ``name=value`` / ``name=``
_ONLY_WITH_VALUE = {"errors", "pattern", "field", "column", "client", "special_tokens", "transition", "superword",
                    "init", "model", "address", "append_eot"}
_API_NAME = re.compile(
    r"\b(?:(" + "|".join(n for n in API_TO_OPTION if n not in _ONLY_WITH_VALUE) + r")\b|("
    + "|".join(API_TO_OPTION) + r")(?==))"
    r"(?:=(?:'([^']*)'|\"([^\"]*)\"|([^\s,;:)]*)))?"
)


def cli_spelling(message: str) -> str:
    """An API message with its parameter names spelled as the CLI's
    options (``vocab_size=10`` -> ``--vocab-size 10``, ``errors='replace'``
    -> ``--errors replace``), so that each side names what its user types.

    >>> cli_spelling("vocab_size 10 is smaller than 256 (use errors='replace' to replace invalid bytes)")
    '--vocab-size 10 is smaller than 256 (use --errors replace to replace invalid bytes)'
    >>> cli_spelling("superword=True needs transition= and vocab_size=, not num_merges=")
    '--superword needs --transition and --vocab-size, not --merges'
    >>> cli_spelling("count with bytepair.counts.count_words, then Tokenizer.train_from_counts")
    'count with bytepair count-words, then train --from-counts'
    """
    def option(m: "re.Match[str]") -> str:
        flag = API_TO_OPTION[m.group(1) or m.group(2)]
        value = next((v for v in m.groups()[2:] if v is not None), "")
        return flag if value in ("", "True") else f"{flag} {value}"

    for function, command in API_TO_COMMAND.items():
        message = message.replace(function, command)
    return _API_NAME.sub(option, message)


TOKENIZER_HELP = ("tokenizer file: native JSON, HF tokenizer.json or a transformers folder, .tiktoken (--pattern "
                  "for an unknown one), SentencePiece .model, tekken.json, a GGUF model file (.gguf: its tokenizer "
                  "only), a GPT-2 folder (vocab.json + merges.txt, or OpenAI's encoder.json + vocab.bpe) or "
                  "subword-nmt codes; or one of tiktoken's encoding "
                  "names (cl100k_base, o200k_base, ...: its file already on this machine, as get_encoding)")
FORMAT_HELP = "format of TOK (detected when omitted)"
PATTERN_HELP = "pre-tokenizer for formats that do not store one (e.g. .tiktoken): gpt2, cl100k, o200k or a regex"
ERRORS_HELP = "invalid UTF-8 in the input: stop with an error (default) or replace it"
PROGRESS_HELP = ("progress on stderr: a bar (also bare --progress; auto: when stderr is a terminal), "
                 "JSON lines, or none")


def errors_option(p: argparse.ArgumentParser) -> None:
    """``--errors strict|replace``: what to do with invalid UTF-8 input."""
    p.add_argument("--errors", choices=["strict", "replace"], default="strict", help=ERRORS_HELP)


def progress_option(p: argparse.ArgumentParser, *, default: str = "auto", help: str = PROGRESS_HELP) -> None:  # noqa: A002
    """``--progress [bar|json|none|auto]`` (bare: ``bar``; see ``bytepair.cli.parser.bare_progress``)."""
    p.add_argument("--progress", choices=PROGRESS_CHOICES, nargs="?", const="bar", default=default, help=help)


def tokenizer_options(p: argparse.ArgumentParser, *, multiple: bool = False, read_input: bool = True,
                      old_format_names: Sequence[str] = ()) -> None:
    """``-t TOK`` plus ``--format``/``--pattern`` (and ``--errors`` when the
    command reads text).

    ``multiple=True`` makes ``-t`` repeatable (``args.tokenizer`` is then a
    list). ``old_format_names`` are hidden aliases of ``--format`` that
    earlier versions used (encode-dataset's ``--tokenizer-format``)."""
    if multiple:
        p.add_argument("-t", "--tokenizer", required=True, action="append", metavar="TOK",
                       help=TOKENIZER_HELP + "; repeat -t for several tokenizers")
    else:
        p.add_argument("-t", "--tokenizer", required=True, metavar="TOK", help=TOKENIZER_HELP)
    p.add_argument("--format", dest="format", default=None,
                   help=FORMAT_HELP + " (the same for every -t)" if multiple else FORMAT_HELP)
    for alias in old_format_names:  # earlier spellings, still accepted, no longer listed
        p.add_argument(alias, dest="format", default=None, help=argparse.SUPPRESS)
    p.add_argument("--pattern", default=None, help=PATTERN_HELP)
    if read_input:
        errors_option(p)


def size(text: str) -> int:
    """An argument type: a byte count (``bytepair.limits.parse_size``: 500000,
    10M, 2G, 1GiB); argparse reports a bad one as a usage error.

    >>> size("2G")
    2000000000
    """
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def positive_float(text: str) -> float:
    """An argument type: a number above 0.

    >>> positive_float("1.5")
    1.5
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def reading_options(p: argparse.ArgumentParser, *, max_bytes: bool = True) -> None:
    """``--field``, ``--column`` (JSONL, Parquet), ``--max-bytes`` and ``--dask``:
    how the streaming commands read their FILEs."""
    p.add_argument("--field", metavar="F",
                   help="read JSONL: one document per line, the string field F (default for *.jsonl: text)")
    p.add_argument("--column", metavar="C", help="Parquet files: the text column C (default: text)")
    if max_bytes:
        p.add_argument("--max-bytes", type=size, metavar="N",
                       help="read only the first N bytes of text of the inputs, in order (K/M/G suffixes: 10M)")
    p.add_argument("--dask", metavar="ADDR",
                   help="run on Dask: 'local' (a 2-worker cluster here; local:N for N workers) or tcp://host:8786")


def add_described(sub: "argparse._SubParsersAction", name: str, **kwargs) -> argparse.ArgumentParser:
    """A subcommand whose description (filled by :func:`wrap`) and epilog
    (examples) are printed as written.

    >>> sub = argparse.ArgumentParser(prog="bytepair").add_subparsers()
    >>> add_described(sub, "x", help="h", description=wrap("d")).formatter_class.__name__
    'RawDescriptionHelpFormatter'
    """
    return sub.add_parser(name, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)


def wrap(*paragraphs: str) -> str:
    """Paragraphs filled to 78 columns, for descriptions shown with
    ``argparse.RawDescriptionHelpFormatter`` (which keeps the examples of
    the epilog as written).

    >>> wrap("a  b", "c")
    'a b\\n\\nc'
    """
    return "\n\n".join(textwrap.fill(" ".join(p.split()), 78) for p in paragraphs)
