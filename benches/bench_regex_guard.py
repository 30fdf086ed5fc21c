"""Encoding time of hostile pre-tokenizer patterns on long texts (issue 17).

Each (pattern, text) pair runs in a child process with a time limit: a
native tokenizer whose ``pattern`` is replaced encodes the text, and the
line says how long it took and whether it ended with ids or with the
regex guard's ``PatternError`` (src/pretok/regex_guard.rs). Patterns the ``regex``
crate runs alone are bounded by the count of bytes their searches read
(64 per byte of text plus 1 MiB); patterns that need fancy-regex's
backtracking VM by their backtracking steps (256 per byte plus 10^6). A
pattern whose cost would hide inside the VM's calls to the ``regex`` crate
(a lookahead, atomic group or delegated piece of unbounded length) is
refused at load; ``\s+(?!\S)|\s+`` runs without the VM.

    python benches/bench_regex_guard.py            # 1 MB and 10 MB
    python benches/bench_regex_guard.py --quick    # 100 KB and 1 MB
    python benches/bench_regex_guard.py --published  # published patterns on runs of one character
    python benches/bench_regex_guard.py --ordinary   # published patterns' speed on ordinary text
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(r"""
    import json, sys, time
    from bytepair import BytepairError, Tokenizer
    pattern, unit, times, tail = json.loads(sys.argv[1])
    d = Tokenizer.train("hello world aaa bbb the cat sat on the mat " * 40, vocab_size=280).to_dict()
    d["pattern"] = pattern
    text = unit * times + tail
    t0 = time.perf_counter()
    try:
        tok = Tokenizer.from_dict(d)  # a pattern refused at load fails here
        n = len(tok.encode_ordinary(text))
        out = f"{n} ids"
    except BytepairError as e:
        out = f"{type(e).__name__}: {str(e)[:60]}..."
    print(json.dumps([time.perf_counter() - t0, out]))
""")

PATTERNS = [
    # the regex crate alone: counted, bounded
    (r"(a+)+$|[\s\S]", "$ alternative, fails at the end"),
    (r"a+b|[\s\S]", "alternative that fails after the run"),
    (r"a+b|\s+|\S+", "same, the short alternative takes the run"),
    (r"\s+|\w+|[^\w\s]+", "ordinary (Whitespace-like)"),
    # fancy-regex's VM: backtracking steps counted
    (r"a+(?=b)|[\s\S]", "lookahead after a repetition (VM steps)"),
    (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+", "GPT-2 (published)"),
    # the VM's calls into the regex crate are not counted: a piece of unbounded length there is refused at load
    (r"(?=a+b)|[\s\S]", "lookahead that reads the run and fails (refused at load since issue 17's check_vm)"),
    (r"a(?:[ab]*c)?|(?=x)y", "unbounded delegate beside a hard branch (refused at load)"),
]

ORDINARY = textwrap.dedent(r"""
    import json, sys, time
    from bytepair import Tokenizer
    import tokenizers
    pattern, para, size = json.loads(sys.argv[1])
    text = para * (size // len(para.encode()))
    tok = Tokenizer.train("hello world aaa bbb the cat sat on the mat " * 40, vocab_size=280)
    d = tok.to_dict()
    d["pattern"] = pattern
    tok = Tokenizer.from_dict(d)
    pre = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated")
    best = {}
    for _ in range(3):
        t0 = time.perf_counter(); tok.encode_ordinary(text); t1 = time.perf_counter()
        pre.pre_tokenize_str(text); t2 = time.perf_counter()
        best["bytepair"] = min(best.get("bytepair", 1e9), t1 - t0)
        best["hf_split"] = min(best.get("hf_split", 1e9), t2 - t1)
    best["mb"] = len(text.encode()) / 1e6
    print(json.dumps(best))
""")


def ordinary(size: int) -> None:
    """Encoding speed of published patterns on ordinary mixed text (the rewrite of `\\s+(?!\\S)|\\s+` must not
    slow it): bytepair's encode_ordinary (pre-tokenizing and BPE) beside HF's Split pre-tokenizer alone."""
    para = ("The quick brown fox, isn't it?  It jumped over 12345 lazy dogs.\n\n\tIndented line;  "
            "café naïve 日本語 — done!   \n")
    print(f"{'pattern':<12} {'MB':>5} {'bytepair s':>11} {'MB/s':>7} {'HF Split s':>11}")
    for name in ("llama3", "o200k/tekken-like"):
        out = subprocess.run([sys.executable, "-c", ORDINARY, json.dumps([PUBLISHED[name], para, size])],
                             capture_output=True, text=True, check=True)
        best = json.loads(out.stdout.strip().splitlines()[-1])
        mb = best["mb"]
        print(f"{name:<12} {mb:5.1f} {best['bytepair']:11.3f} {mb / best['bytepair']:7.1f} {best['hf_split']:11.3f}",
              flush=True)


PUBLISHED = {
    "llama3": r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
              r"\s*[\r\n]+|\s+(?!\S)|\s+",
    "o200k/tekken-like": r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
                         r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
                         r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
                         r"[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    "bert-like": r"\w+|[^\w\s]+",
}
RUNS = [" ", "a", "A", "1", "'", "\n", " \n", "\t ", "-"]


def published(sizes, limit: float) -> None:
    """Published pattern shapes on texts that are one character (or pair) repeated."""
    print(f"{'pattern':<20} {'text':>16} {'seconds':>8}  result")
    for name, pattern in PUBLISHED.items():
        for unit in RUNS:
            for size in sizes:
                spec = json.dumps([pattern, unit, size // len(unit), "x"])
                label = f"{size // 1000} KB {unit!r}"
                try:
                    proc = subprocess.run([sys.executable, "-c", CHILD, spec], capture_output=True, text=True,
                                          timeout=limit)
                    seconds, out = json.loads(proc.stdout.strip().splitlines()[-1])
                    line = f"{seconds:8.2f}  {out}"
                except subprocess.TimeoutExpired:
                    line = f"{'>' + str(int(limit)):>8}  (stopped: no answer)"
                print(f"{name:<20} {label:>16} {line}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--limit", type=float, default=120.0, help="seconds before a run counts as a hang")
    ap.add_argument("--published", action="store_true")
    ap.add_argument("--ordinary", action="store_true", help="speed on ordinary text (MB/s)")
    args = ap.parse_args()
    if args.ordinary:
        ordinary(2_000_000 if args.quick else 10_000_000)
        return
    sizes = [100_000, 1_000_000] if args.quick else [1_000_000, 10_000_000]
    if args.published:
        published(sizes, args.limit)
        return
    print(f"{'pattern':<60} {'text':>16} {'seconds':>8}  result")
    for pattern, what in PATTERNS:
        for size in sizes:
            for tail in ("", "b"):
                spec = json.dumps([pattern, "a", size, tail])
                label = f"{size // 1000} KB a{'+b' if tail else ''}"
                try:
                    proc = subprocess.run([sys.executable, "-c", CHILD, spec], capture_output=True, text=True,
                                          timeout=args.limit)
                    seconds, out = json.loads(proc.stdout.strip().splitlines()[-1])
                    line = f"{seconds:8.2f}  {out}"
                except subprocess.TimeoutExpired:
                    line = f"{'>' + str(int(args.limit)):>8}  (stopped: no answer)"
                except (IndexError, ValueError):
                    line = f"{'?':>8}  child failed: {proc.stderr.strip().splitlines()[-1:]}"
                print(f"{pattern[:58]:<60} {label:>16} {line}", flush=True)
        print(f"  ^ {what}", flush=True)


if __name__ == "__main__":
    main()
