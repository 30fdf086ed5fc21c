#!/usr/bin/env python3
"""Post-training set-up benchmark: from a trained byte model's merges to a
ready tokenizer (``Tokenizer.from_spec`` of the description training returns).

    python benches/bench_setup.py                                   # 32768 and 131072 merges on 20 MB of multi
    python benches/bench_setup.py --python before=/tmp/old/bin/python --python after=.venv/bin/python

Each size is trained once per interpreter (``tie_break="pair-id"``); the
merges and the ids of a held-out text must be the same under every
interpreter, or the run stops. Then each repetition times, in a fresh process
per interpreter and size (alternating), the set-up alone: the description is
read from the native file first, untimed. Ratios compare every interpreter
with the first one, in the same run. Writes the "setup" section of
docs/benchmarks.md (``--no-doc``: print only).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
from common import fmt_x, median, table  # noqa: E402

# what one fresh process does: train (mode "train") or time the set-up (mode "setup")
CHILD = r"""
import hashlib, json, pathlib, sys, time
from bytepair import Tokenizer, spec as specs
job = json.loads(sys.argv[1])
sample = open(job["heldout"], encoding="utf-8").read()[:1000000]  # a million characters are enough to check
if job["mode"] == "train":
    tok = Tokenizer.train(pathlib.Path(job["corpus"]), num_merges=job["merges"], tie_break="pair-id")
    tok.save(job["model"])
    result = {"merges": hashlib.sha256(json.dumps(tok.spec.merge_ids).encode()).hexdigest()}
else:
    with open(job["model"], encoding="utf-8") as fh:
        description = specs.from_dict(json.load(fh))
    t0, c0 = time.perf_counter(), time.process_time()
    tok = Tokenizer.from_spec(description)
    result = {"setup": time.perf_counter() - t0, "cpu": time.process_time() - c0}
result["ids"] = hashlib.sha256(json.dumps(tok.encode_ordinary(sample)).encode()).hexdigest()
print("RESULT " + json.dumps(result))
"""


def run(python, job):
    r = subprocess.run([python, "-c", CHILD, json.dumps(job)], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise SystemExit("%s failed: %s" % (python, (r.stderr.strip().splitlines() or ["no output"])[-1]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="multi")
    ap.add_argument("--mb", type=float, default=20, help="slice of the corpus to train on (default 20 MB)")
    ap.add_argument("--merges", type=int, nargs="+", default=[32768, 131072])
    ap.add_argument("--python", action="append", metavar="[LABEL=]PY",
                    help="an interpreter whose bytepair is measured (repeatable; the first is the baseline)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args(argv)
    pythons = []
    for item in args.python or ["bytepair=" + sys.executable]:
        label, _, path = item.rpartition("=")
        pythons.append((label or path, path))
    common.ensure_corpora([args.corpus])
    corpus, heldout = common.slice_path(args.corpus, args.mb), common.heldout_path(args.corpus)
    models = os.path.join(common.WORK, "models")
    os.makedirs(models, exist_ok=True)
    digests = {}
    for n in args.merges:
        for label, py in pythons:
            name = "setup-%s-%gMB-%d-%s.json" % (args.corpus, args.mb, n, hashlib.sha1(py.encode()).hexdigest()[:8])
            job = {"mode": "train", "corpus": corpus, "heldout": heldout, "merges": n,
                   "model": os.path.join(models, name)}
            print("training %d merges with %s ..." % (n, label), flush=True)
            got = run(py, job)
            if digests.setdefault(n, got) != got:
                raise SystemExit("%s gives other merges or ids at %d merges than %s" % (label, n, pythons[0][0]))
    times = {(label, n): [] for label, _ in pythons for n in args.merges}
    cpu = {(label, n): [] for label, _ in pythons for n in args.merges}
    for rep in range(args.repeat):
        for n in args.merges:
            for label, py in pythons:
                name = "setup-%s-%gMB-%d-%s.json" % (args.corpus, args.mb, n,
                                                     hashlib.sha1(py.encode()).hexdigest()[:8])
                got = run(py, {"mode": "setup", "heldout": heldout, "model": os.path.join(models, name)})
                if got["ids"] != digests[n]["ids"]:
                    raise SystemExit("%s encodes the held-out text otherwise after set-up" % label)
                times[(label, n)].append(got["setup"])
                cpu[(label, n)].append(got["cpu"])
        print("repetition %d/%d done" % (rep + 1, args.repeat), flush=True)
    base = pythons[0][0]
    # wall time is what a user waits; CPU time (the set-up runs on one thread) is the steadier figure on a
    # loaded machine, where waiting for a core inflates the wall time of whichever process is unlucky
    head = ["merges", "measure"] + ["%s (median of %d)" % (label, args.repeat) for label, _ in pythons] + \
        ["%s / %s" % (base, label) for label, _ in pythons[1:]]
    rows = []
    for n in args.merges:
        for what, figures in (("wall", times), ("CPU", cpu)):
            row = [n, what] + ["%.0f ms" % (1000 * median(figures[(label, n)])) for label, _ in pythons]
            row += [fmt_x(median(figures[(base, n)]) / median(figures[(label, n)])) for label, _ in pythons[1:]]
            rows.append(row)
    lines = ["## Post-training set-up (merges -> ready tokenizer)", ""]
    lines += common.header(sys.argv, pythons[-1][1])
    lines += ["- interpreters: " + "; ".join("%s = `%s`" % p for p in pythons),
              "- corpus: %s, %g MB slice; merges and held-out ids identical under every interpreter" % (
                  args.corpus, args.mb), ""]
    lines += table(head, rows) + [""]
    print("\n".join(lines))
    if not args.no_doc:
        common.update_doc("setup", lines)


if __name__ == "__main__":
    main()
