#!/usr/bin/env python3
"""SuperBPE against plain BPE at equal vocabulary: compression on held-out
text (bytes per token), training time, encoding speed.

    python benches/bench_superword.py --corpus data/corpora/en.txt --mb 5 --sizes 8192,32768

Trains on the first MB of the corpus (lines as documents), holds out the next
2 MB; plain BPE and SuperBPE (``superword=True``, ``transition`` = 0.9 x the
vocabulary, the paper's best ratio at 200k) use the same pattern (o200k).
The SuperBPE fork of HF tokenizers is not on PyPI, so there is no peer row.
"""

from __future__ import annotations

import argparse
import os
import time

import bytepair

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=os.path.join(ROOT, "data", "corpora", "en.txt"))
    ap.add_argument("--mb", type=float, default=5)
    ap.add_argument("--sizes", default="8192,32768")
    ap.add_argument("--ratio", type=float, default=0.9, help="transition / vocabulary size")
    ap.add_argument("--pattern", default="o200k")
    args = ap.parse_args()
    cut = int(args.mb * 1e6)
    with open(args.corpus, "rb") as fh:
        data = fh.read(cut + 2_000_000).decode("utf-8", "ignore")
    train = data[:cut].splitlines(keepends=True)
    held = data[cut:]
    n = len(held.encode())
    print("| corpus | vocab | transition | plain bytes/token | SuperBPE bytes/token | fewer tokens | "
          "train s (plain / super) | encode MB/s (plain / super) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for v in (int(x) for x in args.sizes.split(",")):
        t = int(v * args.ratio)
        t0 = time.perf_counter()
        plain = bytepair.Tokenizer.train(train, vocab_size=v, pattern=args.pattern)
        t1 = time.perf_counter()
        sup = bytepair.Tokenizer.train(train, vocab_size=v, superword=True, transition=t, pattern=args.pattern)
        t2 = time.perf_counter()
        speeds = []
        counts = []
        for tok in (plain, sup):
            tok.encode(held[:100_000])  # warm the caches
            e0 = time.perf_counter()
            counts.append(len(tok.encode(held)))
            speeds.append(n / 1e6 / (time.perf_counter() - e0))
        a, b = counts
        print(f"| {os.path.basename(args.corpus)} {args.mb:g} MB | {v} | {t} | {n / a:.3f} | {n / b:.3f} | "
              f"{100 * (1 - b / a):.1f}% | {t1 - t0:.1f} / {t2 - t1:.1f} | {speeds[0]:.1f} / {speeds[1]:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
