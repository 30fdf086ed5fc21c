#!/usr/bin/env python3
"""Conformance sweep: every published tokenizer reachable here (tests/published_oracles.py)
against its own library on hostile-but-valid text (tests/hostile_text.py).

Usage: ``nice python scripts/sweep_published.py [-n N] [--seed S] [--only SUBSTR] [--no-offsets]``.
Prints, per tokenizer, the number of texts compared and the mismatches, each
shrunk to a minimal text (characters removed while the difference remains).
Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

from hostile_text import hostile_texts  # noqa: E402
from published_oracles import OracleFailed, cases, compare  # noqa: E402


def shrink(kind, tok, oracle, text, offsets):
    """Remove chunks, then single characters, while a difference remains."""
    def bad(t):
        try:
            return compare(kind, tok, oracle, t, offsets) is not None
        except OracleFailed:
            return False
        except Exception:  # noqa: BLE001
            return True
    step = max(1, len(text) // 2)
    while step >= 1:
        i = 0
        while i < len(text):
            cand = text[:i] + text[i + step:]
            if bad(cand):
                text = cand
            else:
                i += step
        step //= 2
    return text


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-offsets", action="store_true")
    ap.add_argument("--max-report", type=int, default=5)
    args = ap.parse_args()
    failed = False
    total = 0
    for name, case in cases().items():
        if args.only and args.only not in name:
            continue
        t0 = time.time()
        try:
            tok, oracle = case.load()
        except Exception as e:  # noqa: BLE001
            print(f"{name}: LOAD FAILED {type(e).__name__}: {e}")
            failed = True
            continue
        texts = hostile_texts(args.seed, args.n, case.specials())
        bad = []
        oracle_failed = []
        for text in texts:
            try:
                diff = compare(case.kind, tok, oracle, text, not args.no_offsets)
            except OracleFailed as e:
                oracle_failed.append((text, str(e)))
                continue
            except Exception as e:  # noqa: BLE001
                diff = f"raised {type(e).__name__}: {e}"
            if diff is not None:
                bad.append((text, diff))
        total += len(texts) - len(oracle_failed)
        print(f"{name}: {len(texts) - len(oracle_failed)} texts compared, {len(bad)} differ"
              f" ({len(oracle_failed)} the library itself fails on; {time.time() - t0:.0f} s)", flush=True)
        for text, err in oracle_failed[:2]:
            print(f"    library fails: {text[:60]!r}: {err}")
        seen = set()
        for text, diff in bad[: args.max_report * 4]:
            small = shrink(case.kind, tok, oracle, text, not args.no_offsets)
            if small in seen:
                continue
            seen.add(small)
            try:
                d = compare(case.kind, tok, oracle, small, not args.no_offsets)
            except Exception as e:  # noqa: BLE001
                d = f"raised {type(e).__name__}: {e}"
            print(f"    {small!r}: {d}", flush=True)
            if len(seen) >= args.max_report:
                break
        failed |= bool(bad)
    print(f"total: {total} texts compared")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
