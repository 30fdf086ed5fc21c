"""The three seed texts (tests/data/seeds/, copied from the project's
origin) parsed into their inputs and printed outputs. The expectations are
read from the texts themselves, so they are independent of our code.
"""

from __future__ import annotations

import ast
import pathlib
import re
from dataclasses import dataclass
from typing import Dict, List, Tuple

SEEDS = pathlib.Path(__file__).parent / "data" / "seeds"


def _text(prefix: str) -> str:
    (path,) = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8")


def _literal_after(text: str, marker: str, last: bool = False):
    """The Python literal assigned right after ``marker`` (e.g. 'corpus = '),
    at its first (or last) occurrence."""
    start = (text.rindex(marker) if last else text.index(marker)) + len(marker)
    # literals here span one line
    return ast.literal_eval(text[start:].splitlines()[0])


@dataclass
class Seed000:
    corpus: List[str]
    trace: List[str]
    final_words: List[str]
    merges: List[Tuple[str, str]]
    tokenized: Dict[str, List[str]]


@dataclass
class Seed001:
    rules: List[Tuple[str, str]]
    encoded: Dict[str, Tuple[str, ...]]


@dataclass
class Seed002:
    corpus: Dict[str, int]
    merges: List[Tuple[str, str]]
    final_words: List[Tuple[str, ...]]


def seed_000() -> Seed000:
    text = _text("000")
    outputs = text.split("\nOutput\n")
    train_out = outputs[1].split("Tokenizing a New Word")[0].strip().splitlines()
    trace = [line for line in train_out if line.startswith("merge ")]
    words = [line for line in train_out if line and not line.startswith("merge ")]
    tokenized = {}
    for line in outputs[2].strip().splitlines():
        m = re.match(r"(\S+)\s+-> (\[.*\])  \(\d+ tokens\)$", line)
        assert m, line
        tokenized[m.group(1)] = ast.literal_eval(m.group(2))
    return Seed000(
        corpus=_literal_after(text, "corpus = "),
        trace=trace,
        final_words=words,
        merges=_literal_after(text, "merges = ", last=True),
        tokenized=tokenized,
    )


def seed_001() -> Seed001:
    text = _text("001")
    rules = []
    for m in re.finditer(r"^\s*\d+\. '([^']+)'\s+\+ '([^']+)'\s+→", text, re.M):
        rules.append((m.group(1), m.group(2)))
    encoded = {}
    for m in re.finditer(r"^(\w+)\s+→ (\(.*\))$", text, re.M):
        encoded[m.group(1)] = ast.literal_eval(m.group(2))
    return Seed001(rules=rules, encoded=encoded)


def seed_002() -> Seed002:
    text = _text("002")
    merges = [ast.literal_eval(m.group(1)) for m in re.finditer(r"^\d+ merge (\(.*\))$", text, re.M)]
    final = ast.literal_eval(re.search(r"^(\[\(.*\)\])$", text, re.M).group(1))
    return Seed002(corpus=_literal_after(text, "corpus = "), merges=merges, final_words=final)
