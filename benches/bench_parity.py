#!/usr/bin/env python3
"""Parity-aware training benchmark: bytepair's ``Tokenizer.train_parity``
against Hugging Face's ``ParityBpeTrainer`` (tokenizers 0.23) on the same
languages, dev set and settings, plus plain BPE on the same text for the
fairness comparison.

    python benches/bench_parity.py                 # 13 languages, 16384 merges
    python benches/bench_parity.py --merges 4000 --langs de,ru,ja

Data: the GNOME help pages of ``data/corpora/multi.txt`` (built by
scripts/make_corpora.py; ``--corpora DIR`` to read them elsewhere), one
language per locale. The same page exists in every language, so pages
held out in every language form a *parallel* dev set (``--dev-pages``);
the other pages are the training text. Both trainers get the dev set, the
GPT-2 pre-tokenizer (HF: ``ByteLevel(add_prefix_space=False)``) and the
HF tie rule (bytepair: ``tie_break="max-string"``).

Each job is a fresh process (wall time and peak RSS from ``wait4``),
pinned to ``--threads`` CPUs. Reported: time, peak RSS, whether the merges
are identical, and on the dev set the per-language token costs: their Gini
coefficient (the paper's parity measure) and the total tokens, for parity
training and for plain BPE (bytepair ``Tokenizer.train`` on all training
text with the same number of merges).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LANGS = "de,fr,es,ru,uk,el,ko,ja,zh_CN,ta,mr,gu,fa"


def load_pages(corpora, langs):
    """{lang: {page: text}} of the GNOME help pages of multi.txt."""
    want = set(langs)
    pages = {l: {} for l in langs}
    with open(os.path.join(corpora, "multi.index.tsv"), encoding="utf-8") as idx, \
            open(os.path.join(corpora, "multi.txt"), "rb") as data:
        next(idx)
        for line in idx:
            offset, length, source, path = line.rstrip("\n").split("\t")
            if source != "gnome-help":
                continue
            lang, _, page = path.partition("/gnome-help/")
            if lang in want:
                data.seek(int(offset))
                pages[lang][page] = data.read(int(length)).decode("utf-8")
    return pages


def split(pages, dev_pages):
    """(train, dev) lines per language: dev = the first dev_pages pages (sorted) present in every language."""
    common = sorted(set.intersection(*(set(p) for p in pages.values())))
    dev_names = set(common[:dev_pages])
    train, dev = {}, {}
    for lang, p in pages.items():
        train[lang] = [l for name in sorted(p) if name not in dev_names for l in p[name].splitlines(keepends=True)]
        dev[lang] = [l for name in sorted(dev_names) for l in p[name].splitlines(keepends=True)]
    return train, dev


def job(spec):
    """One job in this process; prints RESULT {json}."""
    with open(spec["data"], encoding="utf-8") as fh:
        data = json.load(fh)
    train, dev = data["train"], data["dev"]
    t0 = time.perf_counter()
    if spec["tool"] == "bytepair-parity":
        import bytepair

        tok = bytepair.Tokenizer.train_parity(train, dev=dev, num_merges=spec["merges"], pattern="gpt2")
        merges = [(l.hex(), r.hex()) for l, r in tok.merges]
        count = lambda lines: sum(tok.count_batch(lines))  # noqa: E731
    elif spec["tool"] == "bytepair-plain":
        import bytepair

        tok = bytepair.Tokenizer.train([l for v in train.values() for l in v], num_merges=spec["merges"],
                                       pattern="gpt2", tie_break="max-string")
        merges = [(l.hex(), r.hex()) for l, r in tok.merges]
        count = lambda lines: sum(tok.count_batch(lines))  # noqa: E731
    elif spec["tool"] == "hf-parity":
        import tokenizers
        from tokenizers import pre_tokenizers, trainers

        tok = tokenizers.Tokenizer(tokenizers.models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.ParityBpeTrainer(num_merges=spec["merges"], show_progress=False, min_frequency=1)
        trainer.train_from_iterator(tok, [iter(v) for v in train.values()],
                                    dev_iterators=[iter(v) for v in dev.values()])
        byte_of = {c: b for b, c in _gpt2_chars().items()}
        merges = [(bytes(byte_of[c] for c in l).hex(), bytes(byte_of[c] for c in r).hex())
                  for l, r in json.loads(tok.to_str())["model"]["merges"]]
        count = lambda lines: sum(len(e.ids) for e in tok.encode_batch(lines))  # noqa: E731
    else:
        raise SystemExit("unknown tool " + spec["tool"])
    seconds = time.perf_counter() - t0
    costs = {lang: count(lines) for lang, lines in dev.items()}
    print("RESULT " + json.dumps({"train_s": seconds, "merges": merges, "costs": costs}))


def _gpt2_chars():
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    extra = [b for b in range(256) if b not in keep]
    return {b: chr(c) for b, c in zip(keep + extra, keep + [256 + i for i in range(len(extra))])}


def run(spec, threads):
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, __file__, "--job", json.dumps(spec)], stdout=out, stderr=err,
                                env=env, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        _, status, rusage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        lines = [l for l in out.read().decode().splitlines() if l.startswith("RESULT ")]
        if os.waitstatus_to_exitcode(status) != 0 or not lines:
            raise SystemExit(f"{spec['tool']} failed: {err.read().decode()[-2000:]}")
    res = json.loads(lines[-1][7:])
    res.update(wall=wall, rss_mb=rusage.ru_maxrss / 1024)
    return res


def gini(xs):
    mean = sum(xs) / len(xs)
    return sum(abs(a - b) for a in xs for b in xs) / (2 * len(xs) ** 2 * mean)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default=os.path.join(ROOT, "data", "corpora"))
    ap.add_argument("--langs", default=LANGS)
    ap.add_argument("--merges", type=int, default=16384)
    ap.add_argument("--dev-pages", type=int, default=40)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.job:
        return job(json.loads(args.job))
    langs = args.langs.split(",")
    train, dev = split(load_pages(args.corpora, langs), args.dev_pages)
    mb = sum(len(l.encode()) for v in train.values() for l in v) / 1e6
    dev_mb = sum(len(l.encode()) for v in dev.values() for l in v) / 1e6
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump({"train": train, "dev": dev}, fh)
        data = fh.name
    try:
        results = {}
        for tool in ("bytepair-parity", "hf-parity", "bytepair-plain"):
            runs = [run({"tool": tool, "data": data, "merges": args.merges}, args.threads) for _ in range(args.reps)]
            best = min(runs, key=lambda r: r["train_s"])
            best["train_s"] = sorted(r["train_s"] for r in runs)[len(runs) // 2]
            best["rss_mb"] = max(r["rss_mb"] for r in runs)
            results[tool] = best
    finally:
        os.unlink(data)
    same = results["bytepair-parity"]["merges"] == results["hf-parity"]["merges"]
    print(f"## Parity-aware training ({len(langs)} languages: {', '.join(langs)})\n")
    print(f"Training text {mb:.1f} MB (GNOME help, data/corpora/multi.txt), parallel dev set {dev_mb:.2f} MB "
          f"({args.dev_pages} pages in every language), {args.merges} merges, GPT-2 pre-tokenizer, "
          f"{args.threads} thread(s), median of {args.reps}; load average at start {os.getloadavg()[0]:.1f}.\n")
    print("| trainer | train time (s) | peak RSS (MB) | dev tokens | Gini of per-language dev tokens |")
    print("|---|---:|---:|---:|---:|")
    names = {"bytepair-parity": "bytepair train_parity", "hf-parity": "HF ParityBpeTrainer",
             "bytepair-plain": "plain BPE (bytepair train, same merges count)"}
    for tool, r in results.items():
        costs = [r["costs"][l] for l in langs]
        print(f"| {names[tool]} | {r['train_s']:.2f} | {r['rss_mb']:.0f} | {sum(costs)} | {gini(costs):.4f} |")
    bp, hf = results["bytepair-parity"], results["hf-parity"]
    print(f"\nbytepair vs HF: {hf['train_s'] / bp['train_s']:.1f}x faster, {hf['rss_mb'] / bp['rss_mb']:.1f}x less "
          f"peak memory; identical merges: {same}.")
    plain = results["bytepair-plain"]
    g_plain = gini([plain["costs"][l] for l in langs])
    g_par = gini([bp["costs"][l] for l in langs])
    print(f"Gini {g_plain:.4f} (plain) -> {g_par:.4f} (parity): {100 * (1 - g_par / g_plain):.0f}% lower; "
          f"total dev tokens {sum(bp['costs'].values()) / sum(plain['costs'].values()):.3f}x plain BPE's.")
    print("\nPer-language dev tokens (plain -> parity): " + ", ".join(
        f"{l} {plain['costs'][l]} -> {bp['costs'][l]}" for l in langs))


if __name__ == "__main__":
    main()
