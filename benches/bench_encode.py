#!/usr/bin/env python3
"""Encoding benchmark with cl100k_base: bytepair against tiktoken, bpe-openai
and Hugging Face tokenizers, on the same text, with identical ids checked.

    python benches/bench_encode.py            # 10 MB of each corpus, 3 repetitions, worst cases of 10**7 bytes
    python benches/bench_encode.py --quick    # 1 MB, 1 repetition, worst cases of 10**6 bytes

The text is cut into documents of at most 64 KB (at line ends). One thread:
``encode_ordinary`` on each document in turn. Two threads: the batch call
(``encode_ordinary_batch``; tiktoken and bpe-openai with ``num_threads=2``;
HF ``encode_batch``). Worst cases run in a process of their own per tool,
with a time limit (bpe-openai through its raw binding there: its Encoding
wrapper refuses texts of a million characters or more).
Writes the "encode" section of docs/benchmarks.md and prints the same.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
from common import MB, fmt_s, fmt_x, median, run_job, table  # noqa: E402

TOOLS = ["bytepair", "tiktoken", "bpe-openai", "hf"]
LABEL = {"bytepair": "bytepair", "tiktoken": "tiktoken", "bpe-openai": "bpe-openai", "hf": "HF tokenizers"}
WORST = ["ordinary", "a-run", "digit-run", "digits", "punct-run", "emoji", "no-space"]
BLOCK = 64 * 1024


def blocks(path, mb):
    """The first ``mb`` MB of a file as documents of at most 64 KB (line ends)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read(int(mb * MB))
    out, cur, size = [], [], 0
    for line in text.splitlines(keepends=True):
        n = len(line.encode("utf-8"))
        if cur and size + n > BLOCK:
            out.append("".join(cur))
            cur, size = [], 0
        cur.append(line)
        size += n
    if cur:
        out.append("".join(cur))
    return out


def load(tool, vocab):
    """(single(text) -> ids, batch(texts) -> [ids], cold() -> None, load
    seconds) for one tool; ``cold`` empties the tool's cache of encoded
    pieces (bytepair's and HF's), so that every timed pass starts cold rather
    than reusing what an earlier pass over the same text cached."""
    t0 = time.perf_counter()
    cold = lambda: None  # noqa: E731
    if tool == "bytepair":
        import bytepair

        tok = common.load_bytepair_cl100k(bytepair, vocab)
        single, batch = tok.encode_ordinary, tok.encode_ordinary_batch
        cold = getattr(bytepair._core, "clear_caches", cold)
    elif tool == "tiktoken":
        enc = common.load_tiktoken_cl100k(vocab)
        single, batch = enc.encode_ordinary, lambda ts: enc.encode_ordinary_batch(ts, num_threads=2)
    elif tool == "bpe-openai":
        import bpe_openai

        enc = bpe_openai.get_encoding("cl100k_base")
        single, batch = enc.encode_ordinary, lambda ts: enc.encode_ordinary_batch(ts, num_threads=2)
    elif tool == "hf":
        tok = common.load_hf_cl100k(vocab)
        single = lambda t: tok.encode(t, add_special_tokens=False).ids  # noqa: E731
        batch = lambda ts: [e.ids for e in tok.encode_batch(ts, add_special_tokens=False)]  # noqa: E731
        cold = getattr(tok.model, "_clear_cache", cold)
    else:
        raise ValueError(tool)
    single("warm up")
    return single, batch, cold, time.perf_counter() - t0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="en,multi,code")
    ap.add_argument("--mb", type=float, help="MB of each corpus to encode (default 10; --quick 1)")
    ap.add_argument("--reps", type=int, help="repetitions, medians reported (default 3; --quick 1)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--worst-n", type=int, help="bytes of each worst-case input (default 10**7; --quick 10**6; 0: skip)")
    ap.add_argument("--worst-timeout", type=float, default=30, help="seconds allowed per worst-case job (default 30)")
    ap.add_argument("--python", default=sys.executable, help="interpreter to run under (re-executes itself)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worst-reps", type=int, default=1, help="repetitions of the worst cases (default 1)")
    ap.add_argument("--label", help="a note on the bytepair build, printed with it (e.g. the commit a wheel was built from)")
    ap.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    a = ap.parse_args(argv)
    if os.path.realpath(a.python) != os.path.realpath(sys.executable) and not os.environ.get("BYTEPAIR_BENCH_CHILD"):
        env = dict(os.environ, BYTEPAIR_BENCH_CHILD="1")
        return subprocess.run([a.python, os.path.abspath(__file__)] + argv, env=env).returncode
    for name, full, quick in (("mb", 10.0, 1.0), ("reps", 3, 1), ("worst_n", 10**7, 10**6)):
        if getattr(a, name) is None:
            setattr(a, name, quick if a.quick else full)
    corpora = [c for c in a.corpora.split(",") if c]
    t_start = time.time()
    common.ensure_corpora(corpora)
    vocab = common.cl100k_path()

    tools, skipped = [], {}
    loaded = {}
    for t in [t for t in a.tools.split(",") if t]:
        try:
            loaded[t] = load(t, vocab)
            tools.append(t)
        except Exception as e:  # a peer that is not installed or cannot load cl100k_base
            skipped[t] = "%s: %s" % (type(e).__name__, e)
            print("skipping %s: %s" % (t, skipped[t]), flush=True)

    docs = {c: blocks(common.slice_path(c, max(a.mb, 1)), a.mb) for c in corpora}
    nbytes = {c: sum(len(d.encode("utf-8")) for d in docs[c]) for c in corpora}
    single_t = defaultdict(list)
    batch_t = defaultdict(list)
    mismatch = {}
    ref = {}
    if "tiktoken" in loaded:
        for c in corpora:
            ref[c] = loaded["tiktoken"][1](docs[c])
    for rep in range(a.reps):
        order = tools[rep % len(tools):] + tools[:rep % len(tools)]
        for c in corpora:
            for t in order:
                single, batch, cold, _ = loaded[t]
                cold()
                t0 = time.perf_counter()
                out = [single(d) for d in docs[c]]
                single_t[(c, t)].append(time.perf_counter() - t0)
                cold()
                t0 = time.perf_counter()
                out_b = batch(docs[c])
                batch_t[(c, t)].append(time.perf_counter() - t0)
                if rep == 0 and c in ref:
                    bad = sum(1 for x, y in zip(out, ref[c]) if x != y)
                    bad_b = sum(1 for x, y in zip(out_b, ref[c]) if x != y)
                    mismatch[(c, t)] = (bad, bad_b, len(docs[c]))
                print("  rep %d  %-6s %-11s 1 thread %.3f s, batch %.3f s" % (
                    rep + 1, c, t, single_t[(c, t)][-1], batch_t[(c, t)][-1]), flush=True)

    worst = defaultdict(list)
    if a.worst_n:
        ordinary = common.heldout_path("en")
        for rep in range(a.worst_reps):
            for case in WORST:
                for t in tools:
                    r = run_job({"kind": "encode", "tool": t, "case": case, "n": a.worst_n, "ordinary": ordinary,
                                 "vocab_path": vocab}, 1, a.python, a.worst_timeout)
                    worst[(case, t)].append(r)
                    print("  rep %d  worst %-10s %-11s %s" % (rep + 1, case, t, r.get("error") or
                                                             "%.3f s" % r["seconds"]), flush=True)

    lines = common.header(["benches/bench_encode.py"] + argv, a.python, a.label)
    lines.append("- text: the first %g MB of each corpus in documents of at most 64 KB; %d repetition(s), medians; "
                 "total run time %.0f s" % (a.mb, a.reps, time.time() - t_start))
    if skipped:
        lines.append("- skipped: " + "; ".join("%s (%s)" % kv for kv in skipped.items()))
    lines.append("- load time of cl100k_base: " + ", ".join("%s %.2f s" % (t, loaded[t][3]) for t in tools))
    lines.append("")
    summary = []
    for c in corpora:
        lines.append("### Encoding cl100k_base: %s (%.1f MB, %d documents)" % (c, nbytes[c] / MB, len(docs[c])))
        lines.append("")
        rows = []
        mbs = nbytes[c] / MB
        b1 = median(single_t[(c, "bytepair")]) if "bytepair" in tools else None
        b2 = median(batch_t[(c, "bytepair")]) if "bytepair" in tools else None
        for t in tools:
            s1, s2 = median(single_t[(c, t)]), median(batch_t[(c, t)])
            mm = mismatch.get((c, t))
            ids = "-" if mm is None else ("identical" if mm[0] == mm[1] == 0 else
                                          "%d / %d documents differ (batch: %d)" % (mm[0], mm[2], mm[1]))
            rows.append([LABEL[t], "%.1f" % (mbs / s1), "%.1f" % (mbs / s2),
                         fmt_x(s1 / b1) if b1 else "-", fmt_x(s2 / b2) if b2 else "-", ids])
        lines += table(["tool", "MB/s, 1 thread (encode_ordinary)", "MB/s, 2 threads (batch)",
                        "time / bytepair, 1 thread", "time / bytepair, batch", "ids vs tiktoken"], rows)
        lines.append("")
        if b1 and "tiktoken" in tools:
            s = "%s: tiktoken / bytepair = %.2fx (1 thread), %.2fx (batch) (goal >= 3x)" % (
                c, median(single_t[(c, "tiktoken")]) / b1, median(batch_t[(c, "tiktoken")]) / b2)
            if "bpe-openai" in tools:
                s += "; bpe-openai / bytepair = %.2fx (1 thread) (goal >= 2x)" % (median(single_t[(c, "bpe-openai")]) / b1)
            if "hf" in tools:
                s += "; HF / bytepair = %.2fx (1 thread), %.2fx (batch) (goal > 1x)" % (
                    median(single_t[(c, "hf")]) / b1, median(batch_t[(c, "hf")]) / b2)
            summary.append(s)
    if summary:
        lines.append("Against the goals (the target after each ratio; ratios of medians, > 1 means bytepair is faster):")
        lines.append("")
        lines += ["- " + s for s in summary]
        lines.append("")
    if worst:
        lines.append("### Encoding worst cases: %d bytes each, one thread, one process per tool (limit %.0f s)" % (
            a.worst_n, a.worst_timeout))
        lines.append("")
        rows = []
        for case in WORST:
            row = [common.WORST_CASES[case]]
            for t in tools:
                rs = [r for r in worst[(case, t)] if "error" not in r]
                if not rs:
                    e = worst[(case, t)][0].get("error", "?")
                    row.append("> %.0f s (time limit)" % a.worst_timeout if e.startswith("timeout") else "failed: " + e)
                    continue
                sec = median([r["seconds"] for r in rs])
                o = [r["seconds"] for r in worst[("ordinary", t)] if "error" not in r]
                row.append("%s, %.0f ns/byte, %s ordinary" % (fmt_s(sec), sec / rs[0]["bytes"] * 1e9,
                                                                fmt_x(sec / median(o)) if o else "-"))
            rows.append(row)
        lines += table(["input"] + [LABEL[t] for t in tools], rows)
        lines.append("")
    print("\n".join(lines))
    if not a.no_doc:
        common.update_doc("encode", ["## Encoding", ""] + lines)
        print("wrote the encoding section of %s" % os.path.relpath(common.DOC, common.ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
