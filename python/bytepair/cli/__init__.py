"""The ``bytepair`` command line: train, encode, tokenize, decode, count,
and the tools (show, inspect, compare, serve, count-words, encode-dataset,
convert, chunk, explain).

Errors are one line on stderr with exit status 1 (2 for usage errors,
printed with the usage of the command), and warnings one line each
(``bytepair <command>: warning: ...``, not Python's file and source line); outputs are checked before the work
starts and written atomically. A closed pipe (``bytepair inspect ... | head``)
ends the command quietly with status 141, as a program killed by SIGPIPE
(``cat``, ``grep``) ends.

Imports point one way: :mod:`bytepair.cli.parser` imports one module per
command; a command imports the shared options and ``CliError``
(:mod:`bytepair.cli.options`, which imports no other CLI module), the
run-time helpers (:mod:`bytepair.cli.common`), display helpers
(``_pieces``, ``_http``) and the library: the public API (``Tokenizer``,
``bytepair.formats``, ``counts``, ``dataset``, ``stream``, ``chunking``,
...) and the file helpers of ``bytepair._io``.

>>> main(["decode", "-t", "no-such-tokenizer.json", "1"])  # the error is printed on stderr
1
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Callable, Optional, Sequence, TextIO

from bytepair.cli.options import CliError, cli_spelling
from bytepair.cli.parser import COMMANDS, bare_progress, build_parser
from bytepair.errors import BytepairError

__all__ = ["main", "build_parser", "bare_progress", "CliError", "COMMANDS"]

BROKEN_PIPE_STATUS = 128 + 13  # what the shell reports for a program killed by SIGPIPE


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None) -> int:
    """Run the CLI; returns the exit status.

    >>> main(["train", "--help"])  # doctest: +SKIP
    """
    parser = build_parser()
    args, extra = parser.parse_known_args(bare_progress(sys.argv[1:] if argv is None else list(argv)))
    if extra:  # the command's usage, not the top-level one
        args.command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
    run: Callable[..., int] = args.run
    stdout = out or sys.stdout
    try:
        with warnings.catch_warnings():  # restores Python's own printing afterwards
            warnings.showwarning = _warning_printer(args.command)
            status = run(args, stdout)
        stdout.flush()  # a closed pipe shows here for a short output, not at exit
        return status
    except BrokenPipeError:
        _silence(stdout)
        return BROKEN_PIPE_STATUS
    except CliError as e:
        return _fail(args.command, str(e), type(e).__name__)
    except BytepairError as e:
        return _fail(args.command, cli_spelling(str(e)), type(e).__name__)
    except OSError as e:
        return _fail(args.command, str(e), type(e).__name__)
    except KeyboardInterrupt:
        print(f"bytepair {args.command}: interrupted", file=sys.stderr)
        return 130


def _warning_printer(command: str) -> Callable[..., None]:
    """``warnings.showwarning`` for the CLI: the library's warnings as one line each, spelled for the CLI.

    >>> _warning_printer("encode")(UserWarning("use errors='replace'"), UserWarning, "f.py", 1, sys.stdout)
    bytepair encode: warning: use --errors replace
    """
    def show(message: Warning, category: type, filename: str, lineno: int, file: Optional[TextIO] = None,
             line: Optional[str] = None) -> None:
        try:
            print(f"bytepair {command}: warning: {cli_spelling(str(message))}", file=file or sys.stderr)
        except BrokenPipeError:
            pass
    return show


def _fail(command: str, message: str, name: str) -> int:
    first = message.splitlines()[0] if message else name
    try:
        print(f"bytepair {command}: error: {first}", file=sys.stderr)
    except BrokenPipeError:
        pass
    return 1


def _silence(stdout: TextIO) -> None:
    """After a closed pipe: the rest of the output goes nowhere, so that
    Python's flush at exit does not report the pipe again."""
    try:
        fd = stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (a caller's StringIO)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
