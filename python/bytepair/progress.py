"""Progress reports for long operations (counting words, merging).

A reporter is a callable ``report(stage, done, total)``; ``make_reporter``
builds one from a user's choice: ``"bar"`` (tqdm on stderr; when stderr is
not a terminal, a log, plain lines instead: one per stage every
``LINE_SECONDS`` and at its end, without the cursor moves of a bar),
``"json"`` (one JSON object per line on stderr, for logs), ``"auto"`` (a bar
when stderr is a terminal, else nothing), ``None``/``"none"`` (nothing), or
any callable.

>>> lines = []
>>> report = make_reporter(lambda stage, done, total: lines.append((stage, done, total)))
>>> report("merge", 1, 10); lines
[('merge', 1, 10)]
>>> import io
>>> log = io.StringIO()  # not a terminal: a bar's plain lines
>>> bar = make_reporter("bar", log); bar("merge", 10, 10); log.getvalue()
'merge: 10/10 merges (100%)\\n'
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable, Dict, Optional, TextIO, Union

Reporter = Callable[[str, int, Optional[int]], None]
UNITS = {"count": "B", "merge": "merges", "encode": "B"}
# the CLI's --progress values (a bare --progress means "bar")
PROGRESS_CHOICES = ["auto", "bar", "json", "none"]


class _Bars:
    """One tqdm bar per stage, on stderr."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.bars: Dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: Optional[int]) -> None:
        from tqdm import tqdm

        bar = self.bars.get(stage)
        if bar is None:
            unit = UNITS.get(stage, "it")
            bar = self.bars[stage] = tqdm(
                total=total, desc=stage, unit=unit, unit_scale=unit == "B", file=self.stream, leave=False
            )
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)
        if total is not None and done >= total:
            bar.close()


LINE_SECONDS = 10.0  # how often a plain progress line is written


def _size(n: int, unit: str) -> str:
    """``n`` as tqdm writes it: bytes with a K/M/G prefix, other units as numbers."""
    if unit != "B":
        return str(n)
    value = float(n)
    for prefix in ("", "k", "M", "G", "T"):
        if abs(value) < 999.5 or prefix == "T":
            return f"{value:.3g}{prefix}" if prefix else str(n)
        value /= 1000
    return str(n)


class _PlainLines:
    """``stage: done/total unit (pct)`` lines for a stderr that is not a
    terminal: no carriage returns or escape codes in a log."""

    def __init__(self, stream: TextIO, every: float = LINE_SECONDS) -> None:
        self.stream = stream
        self.every = every
        self.last: Dict[str, float] = {}
        self.finished: set = set()

    def __call__(self, stage: str, done: int, total: Optional[int]) -> None:
        if stage in self.finished:
            return
        now = time.monotonic()
        end = total is not None and done >= total
        if not end and now - self.last.get(stage, -self.every) < self.every:
            return
        self.last[stage] = now
        unit = UNITS.get(stage, "it")
        line = f"{stage}: {_size(done, unit)}"
        if total is not None:
            line += f"/{_size(total, unit)}"
        line += f" {unit}" if unit != "B" else "B"
        if total:
            line += f" ({100 * done // total}%)"
        if end:
            self.finished.add(stage)
        self.stream.write(line + "\n")
        self.stream.flush()


class _JsonLines:
    """``{"stage": ..., "done": ..., "total": ..., "seconds": ...}`` per update."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.start = time.monotonic()

    def __call__(self, stage: str, done: int, total: Optional[int]) -> None:
        record = {"stage": stage, "done": done, "total": total, "seconds": round(time.monotonic() - self.start, 3)}
        self.stream.write(json.dumps(record) + "\n")
        self.stream.flush()


def make_reporter(choice: Union[None, bool, str, Reporter], stream: Optional[TextIO] = None) -> Optional[Reporter]:
    """The reporter for ``choice`` (see the module docstring), or None."""
    stream = stream or sys.stderr
    if choice is None or choice is False or choice == "none":
        return None
    if callable(choice):
        return choice
    if choice == "auto":
        choice = "bar" if getattr(stream, "isatty", lambda: False)() else "none"
        if choice == "none":
            return None
    if choice is True or choice == "bar":
        return _Bars(stream) if getattr(stream, "isatty", lambda: False)() else _PlainLines(stream)
    if choice == "json":
        return _JsonLines(stream)
    raise ValueError(f"unknown progress mode {choice!r}: use 'auto', 'bar', 'json' or 'none'")
