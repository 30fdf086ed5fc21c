#!/usr/bin/env python3
"""Grow a benchmark corpus to gigabytes of distinct text.

    python scripts/grow_corpus.py data/corpora/en.txt data/corpora/en-grown.txt --mb 3300

Pass 0 copies the source's documents (``X.index.tsv`` from
scripts/make_corpora.py; without it, blank-line-separated blocks) as they are;
each later pass writes every document again, in a new order, with about a
sixth of its distinct words of four or more word characters changed the way
typing changes them (two neighbouring characters swapped, one doubled or one
dropped), each change chosen by that pass's random generator. So no document
repeats, the text keeps the source's mix of languages, scripts, spacing and
punctuation, and new word types keep appearing as the corpus grows, as they
do in real text, rather than the word table being the source's times a
constant. Deterministic for a given source, size and ``--seed``; written to a
temporary file and renamed, so a stopped run leaves nothing half-written.
A document that comes out as an earlier one is varied again or left out.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import sys
from typing import Iterator, List

MB = 1 << 20
WORD = re.compile(r"(\w{4,})")
CHANGED_FRACTION = 1 / 6
RETRIES = 8


def documents(path: str) -> List[bytes]:
    """The source's documents: from its index when there is one."""
    with open(path, "rb") as fh:
        data = fh.read()
    index = path[: -len(".txt")] + ".index.tsv" if path.endswith(".txt") else None
    if index and os.path.exists(index):
        out = []
        with open(index, encoding="utf-8") as fh:
            next(fh)
            for line in fh:
                offset, length = line.split("\t", 2)[:2]
                out.append(data[int(offset): int(offset) + int(length)])
        return out
    return [d for d in data.split(b"\n\n") if d]


def typo(word: str, rng: random.Random) -> str:
    """``word`` with one typing slip: a swap, a doubled or a dropped character."""
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == 1:
        return word[:i] + word[i] + word[i:]
    return word[:i] + word[i + 1:]


def varied(doc: str, rng: random.Random) -> str:
    """``doc`` with about CHANGED_FRACTION of its distinct long words slipped."""
    parts = WORD.split(doc)
    words = sorted(set(parts[1::2]))  # sorted: the same choices on every run
    change = {w: typo(w, rng) for w in words if rng.random() < CHANGED_FRACTION}
    if change:
        parts[1::2] = [change.get(w, w) for w in parts[1::2]]
    return "".join(parts)


def grown(docs: List[bytes], size: int, seed: int) -> Iterator[bytes]:
    """Documents (newline-joined by the caller) until ``size`` bytes are given;
    a document that came out exactly as an earlier one (a short one whose
    words all stayed, or one without long words) is varied again, up to
    RETRIES times, and otherwise left out, so none repeats."""
    given = 0
    pass_no = 0
    seen = set()  # 16-byte digests: about 10^5 documents a gigabyte
    while given < size:
        rng = random.Random(seed * 1_000_003 + pass_no)
        order = list(range(len(docs)))
        if pass_no:
            rng.shuffle(order)
        added = 0
        for i in order:
            doc = docs[i]
            for _ in range(RETRIES + 1 if pass_no else 1):
                digest = hashlib.blake2b(doc, digest_size=16).digest()
                if digest not in seen or pass_no == 0:  # pass 0: the source as it is
                    break
                doc = varied(docs[i].decode("utf-8"), rng).encode("utf-8")
            else:
                continue
            seen.add(digest)
            added += 1
            yield doc
            given += len(doc) + 1
            if given >= size:
                return
        if not added:
            raise ValueError("the source cannot be varied into new documents (no words of 4 or more characters?)")
        pass_no += 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", help="a corpus of scripts/make_corpora.py (its .index.tsv is used when present)")
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=3300, help="size of the output in MiB (default 3300)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if a.mb <= 0:
        ap.error("--mb must be positive")
    docs = documents(a.source)
    if not docs:
        ap.error("%s has no documents" % a.source)
    tmp = a.out + ".tmp"
    with open(tmp, "wb") as fh:
        first = True
        for doc in grown(docs, int(a.mb * MB), a.seed):
            if not first:
                fh.write(b"\n")
            fh.write(doc)
            first = False
    os.replace(tmp, a.out)
    print("%s: %.1f MB from %s" % (a.out, os.path.getsize(a.out) / MB, a.source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
