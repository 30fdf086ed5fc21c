#!/usr/bin/env python3
"""Scale: peak memory of streaming training, and dataset-encoding throughput.

    python benches/bench_memory.py [--quick] [--python PY] [--label TEXT] [--no-doc]

1. **Training memory.** A slice of real English text (``--small`` MB of the
   ``en`` corpus of ``scripts/make_corpora.py``) and the same slice repeated
   to ``--big`` MB (so both have exactly the same vocabulary of words), each
   trained with ``Tokenizer.train_from_files`` (read in 1 MB blocks) to
   ``--vocab`` tokens in a fresh process; peak RSS (VmHWM). For
   contrast, the same files read whole and given to ``Tokenizer.train`` as
   one string (what ``bytepair train`` did before streaming), and the big
   corpus as JSONL documents (counted in parallel batches).
2. **Dataset encoding.** The first ``--dataset-mb`` MB of ``en`` cut into its
   documents, written as 8 JSONL files, encoded with ``encode_dataset``
   (shards of 100 MB) locally (all cores) and on a Dask ``LocalCluster`` of 2
   worker processes (cluster start-up timed apart), next to the upper bound
   of ``encode_ordinary_batch`` on the documents already in memory.

Results go to ``docs/scale.md`` (and stdout). Every job runs in its own
process with both cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402  (benches/common.py: corpora, slices, machine information)

WORK = os.path.join(common.WORK, "scale")
DOC = os.path.join(common.ROOT, "docs", "scale.md")
MB = common.MB


# ======================================================================= jobs (run in their own process)


def job(spec: Dict) -> Dict:
    import bytepair

    kind = spec["kind"]
    if kind == "train_files":
        t0 = time.perf_counter()
        from bytepair.counts import train_from_files

        tok = train_from_files(spec["paths"], vocab_size=spec["vocab"])
        return {"seconds": time.perf_counter() - t0, "merges": len(tok.merge_counts), "sha": _sha(tok)}
    if kind == "train_whole":
        t0 = time.perf_counter()
        docs = [open(p, encoding="utf-8").read() for p in spec["paths"]]
        tok = bytepair.Tokenizer.train(docs, vocab_size=spec["vocab"])
        return {"seconds": time.perf_counter() - t0, "merges": len(tok.merge_counts), "sha": _sha(tok)}
    if kind == "train_tok":
        from bytepair.counts import train_from_files

        tok = train_from_files([spec["path"]], vocab_size=spec["vocab"], special_tokens=["<|endoftext|>"])
        tok.save(spec["out"])
        return {}
    if kind == "encode":
        from bytepair.dataset import encode_dataset

        tok = bytepair.Tokenizer.load(spec["tok"])
        shutil.rmtree(spec["out"], ignore_errors=True)
        shutil.rmtree(spec["out"] + ".partial", ignore_errors=True)
        if spec.get("dask"):
            from bytepair.distributed import connect

            t0 = time.perf_counter()
            with connect(spec["dask"]) as client:
                client.wait_for_workers(int(spec["dask"].split(":")[1]) if ":" in spec["dask"] else 2)
                startup = time.perf_counter() - t0
                t1 = time.perf_counter()
                m = encode_dataset(tok, spec["paths"], spec["out"], append_eot=True, client=client)
                seconds = time.perf_counter() - t1
                workers = client.run(peak_rss_mb)
        else:
            startup, workers = 0.0, {}
            t1 = time.perf_counter()
            m = encode_dataset(tok, spec["paths"], spec["out"], append_eot=True)
            seconds = time.perf_counter() - t1
        return {"seconds": seconds, "startup": startup, "tokens": m["tokens"], "docs": m["documents"],
                "shards": m["n_shards"], "shas": [s["sha256"] for s in m["shards"]],
                "workers_mb": sorted(workers.values())}
    if kind == "encode_memory":
        tok = bytepair.Tokenizer.load(spec["tok"])
        docs = []
        for p in spec["paths"]:
            with open(p, encoding="utf-8") as fh:
                docs.extend(json.loads(line)["text"] for line in fh)
        t0 = time.perf_counter()
        n = 0
        for i in range(0, len(docs), 2000):
            n += sum(len(ids) + 1 for ids in tok.encode_ordinary_batch(docs[i : i + 2000]))
        return {"seconds": time.perf_counter() - t0, "tokens": n, "docs": len(docs)}
    raise ValueError(kind)


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM). Not ``wait4``'s ``ru_maxrss``: on
    Linux that starts from the parent's RSS at fork time, so a job started by
    a parent holding 250 MB would never show less than 250 MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _sha(tok) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(tok.to_dict(), sort_keys=True).encode()).hexdigest()[:12]


def run(spec: Dict, python: str, reps: int = 1) -> Dict:
    """``spec`` in ``reps`` new processes: the result of the fastest, with
    its wall time, and the largest peak RSS (MB)."""
    results = [run_once(spec, python) for _ in range(reps)]
    best = min(results, key=lambda r: r.get("seconds", r["wall"]))
    best["rss_mb"] = max(r["rss_mb"] for r in results)
    return best


def run_once(spec: Dict, python: str) -> Dict:
    """``spec`` in a new process: its result, wall time and peak RSS (MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([python, os.path.abspath(__file__), "--job", json.dumps(spec)], stdout=out,
                                stderr=err, env=dict(os.environ, PYTHONHASHSEED="0"))
        _, status, _ = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode("utf-8", "replace")
    res = None
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
    if os.waitstatus_to_exitcode(status) != 0 or res is None:
        raise RuntimeError("job %s failed: %s" % (spec["kind"], stderr.strip()[-2000:]))
    res.update(wall=wall, rss_mb=res["rss_mb"])
    print("  %-14s %-60s %7.2f s  %7.0f MB" % (spec["kind"], spec.get("label", ""), wall, res["rss_mb"]), flush=True)
    return res


# ======================================================================= inputs


def documents_of(text_path: str, index_path: str, limit: int) -> List[str]:
    """The documents of a corpus file (by its index), up to ``limit`` bytes."""
    with open(text_path, "rb") as fh:
        data = fh.read(limit)
    docs = []
    with open(index_path, encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            off, length = (int(x) for x in line.split("\t")[:2])
            if off + length > len(data):
                break
            docs.append(data[off : off + length].decode("utf-8"))
    return docs


def write_jsonl(path: str, docs: List[str], repeat: int = 1) -> None:
    if os.path.exists(path):
        return
    lines = "".join(json.dumps({"text": d}, ensure_ascii=False) + "\n" for d in docs)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        for _ in range(repeat):
            fh.write(lines)
    os.replace(path + ".tmp", path)


def repeated(path: str, times: int) -> str:
    out = os.path.join(WORK, "%s-x%d.txt" % (os.path.basename(path)[:-4], times))
    if not os.path.exists(out):
        with open(path, "rb") as fh:
            data = fh.read()
        with open(out + ".tmp", "wb") as fh:
            for _ in range(times):
                fh.write(data)
        os.replace(out + ".tmp", out)
    return out


# ======================================================================= main


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="2 MB vs 40 MB, 10 MB dataset")
    ap.add_argument("--small", type=float, default=10, help="small corpus, MB (default 10)")
    ap.add_argument("--big", type=float, default=400, help="big corpus, MB (default 400)")
    ap.add_argument("--vocab", type=int, default=32768, help="vocabulary size (default 32768)")
    ap.add_argument("--dataset-mb", type=float, default=100, help="text encoded into a dataset, MB (default 100)")
    ap.add_argument("--reps", type=int, default=2, help="runs of each job; the fastest is reported (default 2)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter whose bytepair is measured")
    ap.add_argument("--label", help="what the measured bytepair is (e.g. 'release wheel of commit abc1234')")
    ap.add_argument("--no-doc", action="store_true", help="print only; do not write docs/scale.md")
    args = ap.parse_args(argv)
    if args.job:
        result = job(json.loads(args.job))
        result["rss_mb"] = peak_rss_mb()
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    if args.quick:
        args.small, args.big, args.dataset_mb = 2, 40, 10
    t_start = time.perf_counter()
    common.ensure_corpora(["en"])
    os.makedirs(WORK, exist_ok=True)
    corpus = os.path.join(common.CORPORA, "en.txt")
    index = os.path.join(common.CORPORA, "en.index.tsv")

    # ---------------------------------------------------------------- 1. training memory
    small = common.slice_path("en", args.small)
    times = max(1, round(args.big / args.small))
    big = repeated(small, times)
    small_docs = documents_of(small, index, os.path.getsize(small))
    big_jsonl = os.path.join(WORK, "en-%gMB-x%d.jsonl" % (args.small, times))
    write_jsonl(big_jsonl, small_docs, times)
    print("training, vocabulary %d:" % args.vocab, flush=True)
    rows = []
    results = {}
    for label, kind, path in [
        ("%g MB text file, streamed" % args.small, "train_files", small),
        ("%g MB text file (the same %g MB x%d), streamed" % (args.small * times, args.small, times), "train_files", big),
        ("%g MB as %d JSONL documents, streamed" % (args.small * times, len(small_docs) * times), "train_files",
         big_jsonl),
        ("%g MB text file, read whole" % args.small, "train_whole", small),
        ("%g MB text file, read whole" % (args.small * times), "train_whole", big),
    ]:
        r = run({"kind": kind, "paths": [path], "vocab": args.vocab, "label": label}, args.python, args.reps)
        results[label] = r
        size = os.path.getsize(path) / MB
        rows.append([label, "`train_from_files`" if kind == "train_files" else "`train([text])`",
                     "%.0f" % size, "%.1f s" % r["wall"], "%.0f" % r["rss_mb"], r["sha"]])
    r_small, r_big, _, r_small_whole, r_big_whole = (results[row[0]] for row in rows)
    same = r_small["sha"] == r_small_whole["sha"] and r_big["sha"] == r_big_whole["sha"]

    # ---------------------------------------------------------------- 2. dataset encoding
    ds_docs = documents_of(corpus, index, int(args.dataset_mb * MB))
    ds_bytes = sum(len(d.encode()) for d in ds_docs)
    ds_files = []
    per = (len(ds_docs) + 7) // 8
    for i in range(8):
        ds_files.append(os.path.join(WORK, "en-%gMB-part%d.jsonl" % (args.dataset_mb, i)))
        write_jsonl(ds_files[-1], ds_docs[i * per : (i + 1) * per])
    tok_path = os.path.join(WORK, "tok-%gMB-%d.json" % (args.small, args.vocab))
    run({"kind": "train_tok", "path": small, "vocab": args.vocab, "out": tok_path, "label": "tokenizer"}, args.python)
    print("dataset encoding, %d documents, %.0f MB:" % (len(ds_docs), ds_bytes / MB), flush=True)
    enc_rows = []
    enc = {}
    for label, spec in [
        ("`encode_ordinary_batch`, documents in memory (upper bound)", {"kind": "encode_memory"}),
        ("`encode_dataset`, local (2 cores)", {"kind": "encode"}),
        ("`encode_dataset`, Dask LocalCluster, 2 worker processes", {"kind": "encode", "dask": "local:2"}),
        ("`encode_dataset`, Dask LocalCluster, 1 worker process", {"kind": "encode", "dask": "local:1"}),
    ]:
        out = os.path.join(WORK, "dataset-out")
        r = run(dict(spec, tok=tok_path, paths=ds_files, out=out, label=label), args.python, args.reps)
        enc[label] = r
        enc_rows.append([label, "%.1f s" % r["seconds"], "%.1f" % (ds_bytes / MB / r["seconds"]),
                         "%.2f" % (r["tokens"] / r["seconds"] / 1e6),
                         "%.1f s" % r["startup"] if r.get("startup") else "-", "%.0f" % r["rss_mb"],
                         ", ".join("%.0f" % w for w in r.get("workers_mb", [])) or "-"])
    shard_shas = [r["shas"] for r in enc.values() if "shas" in r]
    identical = all(s == shard_shas[0] for s in shard_shas)
    shutil.rmtree(os.path.join(WORK, "dataset-out"), ignore_errors=True)
    n_tokens = next(r["tokens"] for r in enc.values() if "shards" in r)
    n_shards = next(r["shards"] for r in enc.values() if "shards" in r)

    # ---------------------------------------------------------------- report
    script = os.path.relpath(os.path.abspath(__file__), common.ROOT)
    lines = common.header([script] + (sys.argv[1:] if argv is None else list(argv)), args.python, args.label)
    lines.append("- total run time %.0f s" % (time.perf_counter() - t_start))
    lines += [
        "",
        "### Training memory: %g MB vs %g MB of the same text" % (args.small, args.small * times),
        "",
        "The big corpus is the small one repeated %d times, so both have exactly the same distinct words; "
        "vocabulary %d, cl100k pattern, tie-break `first`; the fastest of %d runs. Peak RSS of the whole process (Python included), "
        "from `/proc/self/status` (VmHWM) at the end of the job; time includes start-up and reading." % (
            times, args.vocab, args.reps),
        "",
    ]
    lines += common.table(["input", "how", "MB", "time", "peak RSS (MB)", "tokenizer (sha256 prefix)"], rows)
    lines += [
        "",
        "Streaming keeps memory flat: peak RSS grows with the distinct words, not with the corpus (the %g MB "
        "file needs %.0f MB, the %g MB one %.0f MB), while reading the text whole needs %.0f MB. Streamed and "
        "whole-text training give the same tokenizer (sha256 of its JSON): %s." % (
            args.small, r_small["rss_mb"], args.small * times, r_big["rss_mb"], r_big_whole["rss_mb"],
            "yes" if same else "NO"),
        "",
        "### Dataset encoding: %.0f MB of English, %d documents, %d tokens" % (ds_bytes / MB, len(ds_docs), n_tokens),
        "",
        "8 JSONL files, `append_eot=True`, vocabulary %d (uint16 ids), shards of 100 MB (%d shard%s). The Dask "
        "runs include reading, encoding in the workers, writing pieces and cutting shards in the client; the "
        "cluster's start-up is timed apart; the fastest of %d runs." % (args.vocab, n_shards, "" if n_shards == 1 else "s",
                                                                  args.reps),
        "",
    ]
    lines += common.table(["run", "time", "MB/s", "M tokens/s", "cluster start-up", "peak RSS (MB)",
                           "workers' peak RSS (MB)"], enc_rows)
    lines += ["", "Shards byte-identical across the local and Dask runs: %s." % ("yes" if identical else "NO")]
    text = "\n".join(lines)
    print("\n" + text)
    if not args.no_doc:
        write_doc(text)
    return 0


DOC_HEAD = """# Scale: streaming training and dataset encoding

Written by `benches/bench_memory.py` (issue 5); see `docs/cluster.md` for
running on a real cluster. Numbers come from one run on the machine named
below; other processes on it inflate times (see the load averages).
"""


def write_doc(text: str) -> None:
    begin, end = "<!-- scale:begin -->", "<!-- scale:end -->"
    body = "%s\n## Streaming and dataset encoding\n\n%s\n%s" % (begin, text, end)
    doc = DOC_HEAD
    if os.path.exists(DOC):
        with open(DOC, encoding="utf-8") as fh:
            doc = fh.read()
    if begin in doc and end in doc:
        doc = doc[: doc.index(begin)] + body + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + body + "\n"
    with open(DOC + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(doc)
    os.replace(DOC + ".tmp", DOC)


if __name__ == "__main__":
    sys.exit(main())
