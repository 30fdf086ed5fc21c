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

3. **One long document** (``--parts long``): a single line of ``--long``
   MB (default 100 and 1000: the ``en`` corpus with its newlines turned into
   spaces, repeated), encoded with ``Tokenizer.encode_file`` (read in 1 MB
   blocks, ids written to a ``.npy`` as they are settled); peak RSS against
   ``encode`` of the text read whole (the smallest size only) and the ids
   compared. The documents are written to ``--tmp`` and removed afterwards.
4. **Training-memory estimate** (``--parts estimate``): what training adds
   to the process's peak RSS (VmHWM after training minus VmRSS before it,
   the peak reset through ``/proc/self/clear_refs`` after counting) next to
   ``bytepair.limits.estimate_training_bytes``, on slices of the ``en``,
   ``code`` and ``multi`` corpora, both models.

Results go to ``docs/scale.md`` (and stdout): parts 1-2 in one block, 3-4
in another, each rewritten only when its parts run. Every job runs in its
own process with both cores.
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
    if kind == "encode_long":
        tok = bytepair.Tokenizer.load(spec["tok"])
        t0 = time.perf_counter()
        n = tok.encode_file(spec["path"], spec["out"])
        seconds = time.perf_counter() - t0
        rss = peak_rss_mb()  # before hashing the output: mapping or reading it whole would count its pages
        import hashlib

        import numpy as np

        h = hashlib.sha256()
        with open(spec["out"], "rb") as fh:
            np.lib.format.read_magic(fh)
            np.lib.format.read_array_header_1_0(fh)
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return {"seconds": seconds, "tokens": n, "sha": h.hexdigest()[:12], "encode_rss_mb": rss}
    if kind == "encode_long_whole":
        import numpy as np

        tok = bytepair.Tokenizer.load(spec["tok"])
        t0 = time.perf_counter()
        with open(spec["path"], encoding="utf-8") as fh:
            ids = tok.encode(fh.read())
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "tokens": len(ids), "sha": _sha_ids(np.array(ids, dtype=np.uint16))}
    if kind == "estimate":
        from bytepair.counts import count_words
        from bytepair.limits import estimate_training_bytes, process_memory
        import warnings

        pattern = "cl100k" if spec["model"] == "byte" else None
        counts = count_words([spec["path"]], pattern)
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset VmHWM to the current RSS
        before = process_memory()
        estimate = estimate_training_bytes(counts, spec["model"], "</w>" if spec["model"] == "char" else None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bytepair.Tokenizer.train(counts, model=spec["model"], pattern=pattern, vocab_size=spec["vocab"],
                                     max_memory="none")
        words, n_bytes, n_chars = counts.sizes()
        return {"before_mb": before / 2**20, "extra_mb": peak_rss_mb() - before / 2**20,
                "estimate_mb": estimate / 2**20, "words": words, "bytes": n_bytes}
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


def _sha_ids(ids) -> str:
    import hashlib

    return hashlib.sha256(memoryview(ids).cast("B")).hexdigest()[:12]


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
    ap.add_argument("--parts", default="scale,long,estimate",
                    help="what to run: scale (1-2), long (3), estimate (4); comma-separated (default all)")
    ap.add_argument("--long", default="100,1000", help="sizes in MB of the long documents (default 100,1000)")
    ap.add_argument("--tmp", default=tempfile.gettempdir(), help="folder for the long documents (removed after)")
    ap.add_argument("--estimate-mb", type=float, default=60, help="corpus slices for the estimate, MB (default 60)")
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    if args.job:
        result = job(json.loads(args.job))
        result["rss_mb"] = peak_rss_mb()
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    if args.quick:
        args.small, args.big, args.dataset_mb, args.long, args.estimate_mb = 2, 40, 10, "10,40", 10
    t_start = time.perf_counter()
    common.ensure_corpora(["en"])
    os.makedirs(WORK, exist_ok=True)
    if parts & {"long", "estimate"}:
        text = limits_parts(args, parts, t_start, argv)
        print("\n" + text)
        if not args.no_doc:
            write_doc(text, "limits")
    if "scale" not in parts:
        return 0
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


def long_document(size_mb: float, folder: str) -> str:
    """One line of ``size_mb`` MB: the en corpus with newlines as spaces, repeated."""
    path = os.path.join(folder, "bytepair-long-%gMB.txt" % size_mb)
    target = int(size_mb * MB)
    with open(os.path.join(common.CORPORA, "en.txt"), "rb") as fh:
        block = fh.read(min(target, 100 * MB)).replace(b"\r", b" ").replace(b"\n", b" ")
    block = block[: len(block.decode("utf-8", "ignore").encode())]
    with open(path, "wb") as out:
        written = 0
        while written < target:
            chunk = block[: target - written]
            chunk = chunk[: len(chunk.decode("utf-8", "ignore").encode())] or block[:1]
            out.write(chunk)
            written += len(chunk)
    return path


def limits_parts(args, parts, t_start, argv) -> str:
    """Parts 3 and 4: their Markdown."""
    script = os.path.relpath(os.path.abspath(__file__), common.ROOT)
    lines = common.header([script] + (sys.argv[1:] if argv is None else list(argv)), args.python, args.label)
    small = common.slice_path("en", args.small)
    tok_path = os.path.join(WORK, "tok-%gMB-%d.json" % (args.small, args.vocab))
    if "long" in parts:
        if not os.path.exists(tok_path):
            run({"kind": "train_tok", "path": small, "vocab": args.vocab, "out": tok_path, "label": "tokenizer"},
                args.python)
        rows = []
        same = []
        sizes = [float(x) for x in args.long.split(",")]
        print("one long document:", flush=True)
        for mb in sizes:
            path = long_document(mb, args.tmp)
            out = path[:-4] + ".npy"
            try:
                r = run({"kind": "encode_long", "tok": tok_path, "path": path, "out": out,
                         "label": "%g MB, encode_file" % mb}, args.python)
                rows.append(["%g MB, one line" % mb, "`encode_file(path, ids.npy)`", "%.1f s" % r["seconds"],
                             "%.1f" % (mb / r["seconds"]), "%d" % r["tokens"], "%.0f" % r["encode_rss_mb"],
                             "%.0f" % (os.path.getsize(out) / MB)])
                if mb == sizes[0]:
                    w = run({"kind": "encode_long_whole", "tok": tok_path, "path": path,
                             "label": "%g MB, read whole" % mb}, args.python)
                    rows.append(["%g MB, one line" % mb, "`encode(open(path).read())`", "%.1f s" % w["seconds"],
                                 "%.1f" % (mb / w["seconds"]), "%d" % w["tokens"], "%.0f" % w["rss_mb"], "-"])
                    same.append(w["sha"] == r["sha"] and w["tokens"] == r["tokens"])
            finally:
                for p in (path, out):
                    if os.path.exists(p):
                        os.unlink(p)
        lines += ["", "### One long document: %s MB on a single line" % " and ".join("%g" % m for m in sizes), "",
                  "The `en` corpus with its newlines turned into spaces, repeated to size: one document, one line; "
                  "vocabulary %d (uint16 ids), cl100k pattern. `encode_file` reads 1 MB blocks and writes the ids "
                  "to a `.npy` as they are settled (`bytepair encode -t TOK --input FILE -o ids.npy`). Peak RSS of "
                  "the whole process (VmHWM) when encoding ends, Python included; the ids go to the file, not to memory." % args.vocab,
                  ""]
        lines += common.table(["document", "how", "time", "MB/s", "tokens", "peak RSS (MB)", "ids file (MB)"], rows)
        lines += ["", "Streamed ids equal `encode` of the whole text (sha256 of the uint16 ids): %s." % (
            "yes" if same and all(same) else "NO")]
    if "estimate" in parts:
        rows = []
        ratios = []
        print("training-memory estimate:", flush=True)
        for corpus in ("en", "code", "multi"):
            common.ensure_corpora([corpus])
            path = common.slice_path(corpus, args.estimate_mb)
            for model in ("byte", "char"):
                r = run({"kind": "estimate", "path": path, "model": model, "vocab": args.vocab,
                         "label": "%s %g MB %s" % (corpus, args.estimate_mb, model)}, args.python)
                ratio = r["estimate_mb"] / r["extra_mb"]
                ratios.append(ratio)
                rows.append(["%s, %g MB" % (corpus, args.estimate_mb), model, "%d" % r["words"], "%d" % r["bytes"],
                             "%.0f" % r["before_mb"], "%.0f" % r["extra_mb"], "%.0f" % r["estimate_mb"],
                             "%.2f" % ratio])
        lines += ["", "### Training memory: estimate against measurement", "",
                  "What training (vocabulary %d) adds to the process's peak RSS once the words are counted "
                  "(VmHWM after training minus VmRSS before, the peak reset with `/proc/self/clear_refs`), next to "
                  "`bytepair.limits.estimate_training_bytes` (308 bytes a distinct word + 24 an initial symbol: "
                  "bytes in the byte model, characters plus the end-of-word marker in the char model), which "
                  "`train --max-memory` / `max_memory=` compare with the limit before merging." % args.vocab, ""]
        lines += common.table(["corpus slice", "model", "distinct words", "their bytes", "RSS before (MB)",
                               "training adds (MB)", "estimate (MB)", "estimate / measured"], rows)
        lines += ["", "The estimate is within %.2fx to %.2fx of the measured growth." % (min(ratios), max(ratios))]
    lines.append("")
    lines.append("- total run time %.0f s" % (time.perf_counter() - t_start))
    return "\n".join(lines)


DOC_HEAD = """# Scale: streaming training and dataset encoding

Written by `python benches/bench_memory.py` (each section gives its date and full command); see `docs/cluster.md` for
running on a real cluster. Numbers come from one run on the machine named
below; other processes on it inflate times (see the load averages).
"""


TITLES = {"scale": "Streaming and dataset encoding", "limits": "Resource limits: one long document, training memory"}


def write_doc(text: str, block: str = "scale") -> None:
    begin, end = "<!-- %s:begin -->" % block, "<!-- %s:end -->" % block
    body = "%s\n## %s\n\n%s\n%s" % (begin, TITLES[block], text, end)
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
