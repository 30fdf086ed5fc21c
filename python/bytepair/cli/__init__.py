"""The ``bytepair`` command line: train, encode, tokenize, decode, count,
and the tools (show, inspect, compare, serve, count-words, encode-dataset,
convert, chunk, explain).

Errors are one line on stderr with exit status 1 (2 for usage errors);
outputs are written atomically.

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

import sys
from typing import Callable, Optional, Sequence, TextIO

from bytepair.cli.options import CliError
from bytepair.cli.parser import COMMANDS, bare_progress, build_parser
from bytepair.errors import BytepairError

__all__ = ["main", "build_parser", "bare_progress", "CliError", "COMMANDS"]


def main(argv: Optional[Sequence[str]] = None, out: Optional[TextIO] = None) -> int:
    """Run the CLI; returns the exit status.

    >>> main(["train", "--help"])  # doctest: +SKIP
    """
    parser = build_parser()
    args = parser.parse_args(bare_progress(sys.argv[1:] if argv is None else list(argv)))
    run: Callable[..., int] = args.run
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
