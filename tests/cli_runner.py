"""The command line run in-process for tests: ``run(*argv, stdin=b"")`` ->
(exit status, standard output), with standard input fed from bytes."""

import io
import sys

from bytepair.cli import main


def run(*argv, stdin: bytes = b""):
    out = io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        status = main([str(a) for a in argv], out=out)
    finally:
        sys.stdin = old_stdin
    return status, out.getvalue()
