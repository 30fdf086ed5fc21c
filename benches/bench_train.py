#!/usr/bin/env python3
"""Training benchmark: bytepair against its peers on the same corpora.

    python benches/bench_train.py            # the full run (see --help for the knobs)
    python benches/bench_train.py --quick    # one repetition on small slices, a minute or two

Every job is one whole process (read the file, pre-tokenize, count, merge,
write the result), run alone, pinned to the CPUs of its thread setting; the
tools alternate inside each repetition, and the tables show medians. See
benches/README.md for what is measured and how the peers are configured.
Writes the "train" section of docs/benchmarks.md and prints the same.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
from common import MB, fmt_s, fmt_x, median, run_job, table  # noqa: E402

TOOLS = ["bytepair", "bytepair-first", "bytepair-char", "bytepair-serial", "rustbpe", "hf", "bpeasy", "sentencepiece", "youtokentome",
         "flashbpe", "fast-bpe-rs", "ffbpe", "gigatoken"]
LABEL = {
    "bytepair": "bytepair (byte, pair-id)",
    "bytepair-first": "bytepair (byte, first)",
    "bytepair-char": "bytepair (char model)",
    "bytepair-serial": "bytepair (byte, pair-id, merge loop on one thread)",
    "rustbpe": "rustbpe",
    "hf": "HF tokenizers",
    "bpeasy": "bpeasy",
    "sentencepiece": "sentencepiece (BPE)",
    "youtokentome": "youtokentome",
    "flashbpe": "flashbpe",
    "fast-bpe-rs": "fast-bpe-rs",
    "ffbpe": "ffbpe (own pre-tokenizer)",
    "gigatoken": "gigatoken train_bpe (own pre-tokenizer)",
}
IMPORT = {"bytepair": "bytepair", "bytepair-first": "bytepair", "bytepair-char": "bytepair", "bytepair-serial": "bytepair", "rustbpe": "rustbpe",
          "hf": "tokenizers", "bpeasy": "bpeasy", "sentencepiece": "sentencepiece", "youtokentome": "youtokentome",
          "flashbpe": "flashbpe", "fast-bpe-rs": "fast_bpe_rs", "ffbpe": "ffbpe", "gigatoken": "gigatoken"}
EXT = {"hf": ".json", "rustbpe": ".tiktoken", "bpeasy": ".tiktoken", "sentencepiece": "", "youtokentome": ".yttm",
       "flashbpe": ".tiktoken", "fast-bpe-rs": "", "ffbpe": "", "gigatoken": ""}
PEERS = ["rustbpe", "hf", "bpeasy", "sentencepiece", "youtokentome", "flashbpe", "fast-bpe-rs", "ffbpe", "gigatoken"]
PYTHON = [sys.executable]  # the interpreter whose bytepair is measured (--python)
WORST_TRAIN = ["ordinary", "a-run", "digits", "punct-run", "emoji", "no-space"]


def available(tools, python):
    """{tool: None if importable, else the reason}."""
    out = {}
    for t in tools:
        r = subprocess.run([python, "-c", "import " + IMPORT[t]], capture_output=True, text=True)
        out[t] = None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["import failed"])[-1]
    return out


def model_path(corpus, size, threads, vocab, tool):
    d = os.path.join(common.WORK, "models")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "%s-%gMB-%dt-v%d-%s%s" % (corpus, size, threads, vocab, tool, EXT.get(tool, ".json")))


def side_bench(script, args, python, timeout):
    """The report of another training benchmark of this folder (parity-aware
    or SuperBPE training), run now with ``args``, as lines of this report."""
    cmd = [python, os.path.join(HERE, script)] + shlex.split(args)
    print("running %s ..." % " ".join(cmd[1:]), flush=True)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout * 4)
    except subprocess.TimeoutExpired:
        return ["### %s: abandoned after %.0f s" % (script, timeout * 4), ""]
    if r.returncode != 0:
        return ["### %s failed (exit %d): %s" % (script, r.returncode, r.stderr.strip()[-500:]), ""]
    out = r.stdout.rstrip("\n").splitlines()
    # the script's own heading becomes a subsection of this report
    out = ["#" + l if l.startswith("## ") else l for l in out]
    if not out or not out[0].startswith("#"):
        out = ["### %s" % " ".join(["benches/" + script] + shlex.split(args)), ""] + out
    return out + ["", "(command: `python benches/%s %s`)" % (script, args), ""]


def parse_list(s, kind=float):
    return [kind(x) for x in s.split(",") if x.strip()]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="en,multi,code", help="corpora of the main table (default en,multi,code)")
    ap.add_argument("--sizes", help="slice sizes in MB for the main table (default 50; --quick 2)")
    ap.add_argument("--threads", default="2,1", help="thread settings (default 2,1)")
    ap.add_argument("--reps", type=int, help="repetitions; medians are reported (default 3; --quick 1)")
    ap.add_argument("--tools", default=",".join(t for t in TOOLS if t != "gigatoken"),
                    help="tools to run (default: all installed but gigatoken, minutes per MB at 32768)")
    ap.add_argument("--vocab", default="32768", help="vocabulary sizes, comma-separated (default 32768; the issue's "
                    "large settings: 131072,262144)")
    ap.add_argument("--linearity", help="sizes (MB) of the linearity check on --linearity-corpus "
                    "(default 10,50,100; --quick 1,2,4; '' to skip)")
    ap.add_argument("--linearity-corpus", default="en", help="corpus of the linearity check; NAME-grown is NAME "
                    "grown to 3300 MB of distinct text by scripts/grow_corpus.py (e.g. en-grown with --linearity "
                    "100,300,1000,3000)")
    ap.add_argument("--linearity-tools", default="bytepair,bytepair-first,rustbpe")
    ap.add_argument("--worst-n", type=int, help="bytes of each worst-case training input "
                    "(default 10**7; --quick 10**5; 0 to skip)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds before a job is abandoned")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs the jobs")
    ap.add_argument("--quick", action="store_true", help="1 repetition, 2 MB slices, linearity 1,2,4 MB, worst 1e5")
    ap.add_argument("--worst-reps", type=int, default=1, help="repetitions of the worst cases (default 1)")
    ap.add_argument("--label", help="a note on the bytepair build, printed with it (e.g. the commit a wheel was built from)")
    ap.add_argument("--parity", action="store_true", help="also run benches/bench_parity.py (bytepair's "
                    "train_parity against HF's ParityBpeTrainer) in this run and report it")
    ap.add_argument("--parity-args", default="", help="arguments for bench_parity.py (e.g. '--merges 16384')")
    ap.add_argument("--superword", action="store_true", help="also run benches/bench_superword.py (SuperBPE "
                    "against plain BPE at equal vocabulary; no peer offers it from a registry) and report it")
    ap.add_argument("--superword-args", default="", help="arguments for bench_superword.py")
    ap.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    ap.add_argument("--plot", help="write a PNG here: MB/s per tool per corpus, and time against slice size "
                                   "(the linearity slices)")
    a = ap.parse_args(argv)
    PYTHON[0] = a.python
    for name, full, quick in (("reps", 3, 1), ("sizes", "50", "2"), ("linearity", "10,50,100", "1,2,4"),
                              ("worst_n", 10**7, 10**5)):
        if getattr(a, name) is None:
            setattr(a, name, quick if a.quick else full)
    corpora = [c for c in a.corpora.split(",") if c]
    sizes = parse_list(a.sizes)
    vocabs = parse_list(a.vocab, int)
    threads = parse_list(a.threads, int)
    lin_sizes = parse_list(a.linearity)
    tools = [t for t in a.tools.split(",") if t]
    unknown = [t for t in tools if t not in IMPORT]
    if unknown:
        ap.error("unknown tools: " + ", ".join(unknown))
    t_start = time.time()

    common.ensure_corpora(sorted(set(corpora + ([a.linearity_corpus] if lin_sizes else []))))
    missing = available(tools, a.python)
    for t, why in missing.items():
        if why:
            print("skipping %s: %s" % (t, why), flush=True)
    tools = [t for t in tools if not missing[t]]
    lin_tools = [t for t in a.linearity_tools.split(",") if t in tools]

    # ---- the jobs: (corpus, size, threads) settings, tools alternating inside each repetition
    settings = [(c, s, th, v) for c in corpora for s in sizes for v in vocabs for th in threads]
    lin_settings = [(a.linearity_corpus, s, max(threads), vocabs[0]) for s in lin_sizes]
    results = defaultdict(list)  # (corpus, size, threads, vocab, tool) -> [job results]
    heldout = {}

    def run(setting, tool, rep):
        corpus, size, th, vocab = setting
        spec = {"kind": "train", "tool": tool, "input": common.slice_path(corpus, size), "vocab": vocab,
                "out": model_path(corpus, size, th, vocab, tool), "pattern": common.CL100K}
        r = run_job(spec, th, a.python, a.timeout)
        results[(corpus, size, th, vocab, tool)].append(r)
        if r.get("version"):
            RAN_VERSION[tool] = r["version"]
        status = r.get("error") or "%.2f s, %.0f MB" % (r["wall"], r["rss_mb"])
        print("  rep %d  %-6s %5g MB %dt v%-6d %-15s %s" % (rep + 1, corpus, size, th, vocab, tool, status),
              flush=True)

    for rep in range(a.reps):
        order = tools[rep % len(tools):] + tools[:rep % len(tools)]  # rotate so no tool always runs first
        for setting in settings:
            for tool in order:
                run(setting, tool, rep)
        for setting in lin_settings:
            for tool in [t for t in order if t in lin_tools]:
                if setting not in settings:
                    run(setting, tool, rep)

    # ---- compression on held-out text, and the exactness check, from the first repetition's outputs
    bpt = {}
    exact = {}
    for corpus in corpora:
        ho = common.heldout_path(corpus)
        heldout[corpus] = os.path.getsize(ho)
        for size in sizes:
            th = max(threads)
            for vocab in vocabs:
                for tool in tools:
                    if any("error" in r for r in results[(corpus, size, th, vocab, tool)][:1]):
                        continue
                    r = run_job({"kind": "bpt", "tool": tool, "out": model_path(corpus, size, th, vocab, tool),
                                 "heldout": ho, "pattern": common.CL100K}, 2, a.python, a.timeout)
                    bpt[(corpus, size, vocab, tool)] = r.get("bytes_per_token")
                    if "error" in r:
                        print("  bytes/token %s %s: %s" % (corpus, tool, r["error"]), flush=True)
                if "bytepair" in tools and "rustbpe" in tools:
                    r = run_job({"kind": "merges", "bytepair": model_path(corpus, size, th, vocab, "bytepair"),
                                 "rustbpe": model_path(corpus, size, th, vocab, "rustbpe")}, 1, a.python, a.timeout)
                    exact[(corpus, size, vocab)] = r

    # ---- worst cases: training on one long synthetic document
    worst = defaultdict(list)
    if a.worst_n:
        ordinary = common.heldout_path("en")
        wtools = [t for t in ("bytepair", "bytepair-first", "rustbpe") if t in tools]
        for rep in range(a.worst_reps):
            for case in WORST_TRAIN:
                for tool in wtools:
                    r = run_job({"kind": "train_text", "tool": tool, "case": case, "n": a.worst_n,
                                 "ordinary": ordinary, "vocab": vocabs[0]}, max(threads), a.python,
                                min(a.timeout, 300))
                    worst[(case, tool)].append(r)
                    print("  rep %d  worst %-10s %-15s %s" % (rep + 1, case, tool, r.get("error") or
                                                             "%.2f s" % r["seconds"]), flush=True)

    # ---- report
    lines = common.header(["benches/bench_train.py"] + argv, a.python, a.label)
    lines.append("- settings: vocabulary %s, byte-level tools use the cl100k regex, %d repetition(s) (medians), "
                 "total run time %.0f s" % (", ".join(map(str, vocabs)), a.reps, time.time() - t_start))
    routes = sorted({r["route"] for rs in results.values() for r in rs if "route" in r})
    if routes:
        lines.append("- bytepair's input: " + ", ".join(
            {"path": "the slice's path (lines read and cut by its core)", "lines": "the slice's lines (a Python list)"}[x]
            for x in routes))
    skipped = {t: why for t, why in missing.items() if why}
    if skipped:
        lines.append("- skipped: " + "; ".join("%s (%s)" % kv for kv in skipped.items()))
    lines.append("")

    def med(key, field="wall"):
        rs = [r[field] for r in results.get(key, []) if "error" not in r]
        return median(rs) if rs else None

    def err(key):
        es = [r["error"] for r in results.get(key, []) if "error" in r]
        return es[0] if es else None

    summary = []
    for corpus, size, th, vocab in settings:
        mb = os.path.getsize(common.slice_path(corpus, size)) / MB
        lines.append("### Training: %s, %g MB slice (%.1f MB), vocabulary %d, %d thread%s" % (
            corpus, size, mb, vocab, th, "s" if th > 1 else ""))
        lines.append("")
        base = med((corpus, size, th, vocab, "bytepair"))
        base_rss = med((corpus, size, th, vocab, "bytepair"), "rss_mb")
        rows = []
        for tool in tools:
            key = (corpus, size, th, vocab, tool)
            t, rss = med(key), med(key, "rss_mb")
            if t is None:
                rows.append([LABEL[tool], "failed: %s" % (err(key) or "?")] + [""] * 6)
                continue
            b = bpt.get((corpus, size, vocab, tool))
            rows.append([LABEL[tool], fmt_s(t), "%.1f" % (mb / t), "%.0f" % rss,
                         fmt_x(t / base) if base else "-", fmt_x(rss / base_rss) if base_rss else "-",
                         results[key][0].get("vocab", ""), "%.3f" % b if b else "-"])
        lines += table(["tool", "time", "MB/s", "peak RSS (MB)", "time / bytepair", "RSS / bytepair", "vocab",
                        "held-out bytes/token"], rows)
        lines.append("")
        peers = [(med((corpus, size, th, vocab, p)), p) for p in PEERS if med((corpus, size, th, vocab, p))]
        if base and peers:
            fastest = min(peers)
            rss = {p: med((corpus, size, th, vocab, p), "rss_mb") for _, p in peers}
            lean = min(rss, key=rss.get)
            s = ("%s %gMB v%d %dt: fastest peer %s %s = %.2fx bytepair's time (goal %s); peak RSS %.0f MB vs "
                 "leanest peer %s %.0f MB" % (corpus, size, vocab, th, fastest[1], fmt_s(fastest[0]),
                                              fastest[0] / base, ">= 3x" if th > 1 or vocab > 32768 else ">= 2x",
                                              base_rss, lean, rss[lean]))
            if "hf" in rss:
                s += ", vs HF %.2fx (goal <= 0.5x)" % (base_rss / rss["hf"])
            first = med((corpus, size, th, vocab, "bytepair-first"))
            if first:
                s += "; first / pair-id = %.2fx (goal <= 1.2x)" % (first / base)
            char = med((corpus, size, th, vocab, "bytepair-char"))
            if char:
                s += "; char / byte = %.2fx (goal <= 1x)" % (char / base)
            one = med((corpus, size, 1, vocab, "bytepair"))
            if th > 1 and one:
                s += "; 1 thread / %d threads = %.2fx" % (th, one / base)
            summary.append(s)
    if summary:
        lines.append("Against the goals (the target after each ratio; ratios of medians):")
        lines.append("")
        lines += ["- " + s for s in summary]
        lines.append("")

    if exact:
        lines.append("### Exactness: bytepair `tie_break=\"pair-id\"` merges vs rustbpe's mergeable ranks")
        lines.append("")
        rows = []
        for (corpus, size, vocab), r in sorted(exact.items()):
            if "error" in r:
                rows.append([corpus, "%g MB" % size, vocab, "error: %s" % r["error"], ""])
            elif r["equal"]:
                rows.append([corpus, "%g MB" % size, vocab, "yes", "%d merges identical" % r["n_bytepair"]])
            else:
                rows.append([corpus, "%g MB" % size, vocab, "no", "first difference at merge %d: bytepair %s, rustbpe %s "
                             "(%d vs %d merges)" % (r["first_difference"], r["bytepair"], r["rustbpe"],
                                                    r["n_bytepair"], r["n_rustbpe"])])
        lines += table(["corpus", "slice", "vocabulary", "identical", "detail"], rows)
        lines.append("")

    if lin_settings:
        lines.append("### Linearity: %s slices, vocabulary %d, %d threads" % (a.linearity_corpus, vocabs[0],
                                                                              max(threads)))
        lines.append("")
        rows = []
        worst_ratio = {}
        for corpus, size, th, vocab in lin_settings:
            mb = os.path.getsize(common.slice_path(corpus, size)) / MB
            row = ["%g MB" % size]
            for tool in lin_tools:
                t, rss = med((corpus, size, th, vocab, tool)), med((corpus, size, th, vocab, tool), "rss_mb")
                t0 = med((corpus, lin_sizes[0], th, vocab, tool))
                mb0 = os.path.getsize(common.slice_path(corpus, lin_sizes[0])) / MB
                if t and t0:
                    worst_ratio[tool] = max(worst_ratio.get(tool, 0), (t / mb) / (t0 / mb0))
                row.append("%s (%.3f s/MB, %s), %.0f MB" % (fmt_s(t), t / mb, fmt_x((t / mb) / (t0 / mb0))
                                                             if t0 else "-", rss) if t else "-")
            rows.append(row)
        lines += table(["slice"] + ["%s: time (s/MB, per-MB time vs smallest), peak RSS" % LABEL[t]
                                    for t in lin_tools], rows)
        lines.append("")
        if worst_ratio:
            lines.append("Largest per-MB time against the smallest slice (goal <= 1.3x): " + ", ".join(
                "%s %s" % (LABEL[t], fmt_x(r)) for t, r in worst_ratio.items()))
            lines.append("")

    if worst:
        lines.append("### Training worst cases: one document of %d bytes, %d threads (time inside the process)" %
                     (a.worst_n, max(threads)))
        lines.append("")
        wtools = [t for t in ("bytepair", "bytepair-first", "rustbpe") if t in tools]
        rows = []
        for case in WORST_TRAIN:
            row = [common.WORST_CASES[case]]
            for tool in wtools:
                rs = [r for r in worst[(case, tool)] if "error" not in r]
                if not rs:
                    row.append("failed: %s" % worst[(case, tool)][0].get("error"))
                    continue
                t = median([r["seconds"] for r in rs])
                o = [r["seconds"] for r in worst[("ordinary", tool)] if "error" not in r]
                per = t / rs[0]["bytes"] * 1e9
                row.append("%s, %.0f ns/byte, %s ordinary, vocab %d" % (
                    fmt_s(t), per, fmt_x(t / median(o)) if o else "-", rs[0]["vocab"]))
            rows.append(row)
        lines += table(["input"] + [LABEL[t] for t in wtools], rows)
        lines.append("")

    for flag, script, extra in ((a.parity, "bench_parity.py", a.parity_args),
                                (a.superword, "bench_superword.py", a.superword_args)):
        if flag:
            lines += side_bench(script, extra, a.python, a.timeout)

    print("\n".join(lines))
    page, memory = page_tables(argv, a, corpora, sizes, vocabs, threads, tools, lin_settings, lin_tools, med, bpt,
                               exact)
    if a.plot:
        plot(a.plot, corpora, sizes[0], vocabs[0], threads, tools, lin_settings, lin_tools, med)
        page += ["![Training: MB/s per tool and corpus; time against slice size](%s)" % common.doc_link(a.plot), ""]
        print("wrote %s" % a.plot)
    print("\n".join(page + memory))
    if not a.no_doc:
        common.update_doc("train", page)
        common.update_doc("train-memory", memory)
        print("wrote the training section of %s" % os.path.relpath(common.DOC, common.ROOT))
    return 0


# a tool's version as its job reported it (sentencepiece: the module the job imported, which a re-run compares
# with the release that carries its development head's faster BPE trainer)
RAN_VERSION = {}


def version(tool):
    if tool.startswith("bytepair"):
        return common.bytepair_version(PYTHON[0])
    if tool in RAN_VERSION:
        return "%s (as run)" % RAN_VERSION[tool]
    return common.dist_version({"hf": "tokenizers"}.get(tool, tool))


def page_tables(argv, a, corpora, sizes, vocabs, threads, tools, lin_settings, lin_tools, med, bpt, exact):
    """The page's tables: training speed and time against slice size; and peak memory. Each says its run."""
    size, vocab, top = sizes[0], vocabs[0], max(threads)
    run = common.run_line(["benches/bench_train.py"] + argv)
    mb = {c: os.path.getsize(common.slice_path(c, size)) / MB for c in corpora}
    out = ["### Training speed: MB of text per second, vocabulary %d, %g MB slices" % (vocab, size), "",
           run + " Cells: MB/s (the tool's time / bytepair's); held-out bytes per token from the %d-thread "
           "model of %s (more is better)." % (top, corpora[0]), ""]
    rows = []
    for tool in tools:
        row = [LABEL[tool], version(tool)]
        for c in corpora:
            for th in threads:
                t, base = med((c, size, th, vocab, tool)), med((c, size, th, vocab, "bytepair"))
                row.append("-" if t is None else "%.2f" % (mb[c] / t) + (" (%s)" % fmt_x(t / base) if base else ""))
        b = bpt.get((corpora[0], size, vocab, tool))
        row.append("%.3f" % b if b else "-")
        rows.append(row)
    out += table(["tool", "version"] + ["%s, %d thread%s" % (c, th, "s" if th > 1 else "") for c in corpora
                                        for th in threads] + ["bytes/token"], rows)
    out.append("")
    same = [k for k, r in exact.items() if r.get("equal")]
    if exact:
        out += ["Merges identical to rustbpe's (bytepair `tie_break=\"pair-id\"`): %d of %d settings (%s)." % (
            len(same), len(exact), ", ".join("%s %g MB" % (c, s_) for c, s_, _ in sorted(exact))), ""]
    memory = ["### Peak memory while training: resident set of the whole process, MB", "",
            run + " Cells: MB (the tool's peak / bytepair's).", ""]
    rows = []
    for tool in tools:
        row = [LABEL[tool], version(tool)]
        for c in corpora:
            r, base = med((c, size, top, vocab, tool), "rss_mb"), med((c, size, top, vocab, "bytepair"), "rss_mb")
            row.append("-" if r is None else "%.0f" % r + (" (%s)" % fmt_x(r / base) if base else ""))
        rows.append(row)
    memory += table(["tool", "version"] + ["%s, %g MB, %d threads" % (c, size, top) for c in corpora], rows)
    memory.append("")
    if lin_settings:
        corpus = lin_settings[0][0]
        out += ["### Training time against corpus size: %s slices, vocabulary %d, %d threads, seconds" % (
            corpus, vocab, top), "", run, ""]
        rows = []
        for tool in lin_tools:
            row = [LABEL[tool], version(tool)]
            for setting in lin_settings:
                t = med(setting + (tool,))
                row.append(fmt_s(t))
            rows.append(row)
        out += table(["tool", "version"] + ["%g MB" % s_ for _, s_, _, _ in lin_settings], rows)
        out.append("")
    return out, memory


def plot(path, corpora, size, vocab, threads, tools, lin_settings, lin_tools, med):
    top = max(threads)
    mb = {c: os.path.getsize(common.slice_path(c, size)) / MB for c in corpora}
    series = {}
    for tool in tools:
        ts = [med((c, size, top, vocab, tool)) for c in corpora]
        series[LABEL[tool]] = [mb[c] / t if t else None for c, t in zip(corpora, ts)]
    panels = [{"kind": "bars", "groups": corpora, "series": series, "ylabel": "MB/s (higher is better)",
               "title": "%g MB slices, vocabulary %d, %d threads" % (size, vocab, top)}]
    if lin_settings:
        lines = {}
        for tool in lin_tools:
            pts = []
            for setting in lin_settings:
                t = med(setting + (tool,))
                if t:
                    pts.append((os.path.getsize(common.slice_path(setting[0], setting[1])) / MB, t))
            lines[LABEL[tool]] = pts
        panels.append({"kind": "lines", "series": lines, "xlabel": "slice of %s (MB)" % lin_settings[0][0],
                       "ylabel": "seconds (lower is better)", "title": "training time against corpus size, %d threads"
                       % top})
    common.plot(path, panels, "Training a byte-level BPE tokenizer")


if __name__ == "__main__":
    sys.exit(main())
