"""Peak memory and time of loading very large vocabularies (issue 17).

For each format (Hugging Face ``tokenizer.json`` as a pipeline and as a byte
model, ``.tiktoken``, bytepair's native JSON) a file with N vocabulary
entries (no merges beyond what the format needs) is written, then loaded
by ``Tokenizer.load`` in a fresh child process, which reports its peak RSS
(``ru_maxrss``, includes the interpreter: about 30 MiB) and the load time;
the child then encodes a short text so the tables are really built.

    python benches/bench_vocab_load.py                 # 10^6 and 10^7 entries
    python benches/bench_vocab_load.py --sizes 1000000 --formats hf-pipeline
    python benches/bench_vocab_load.py --profile hf-pipeline --sizes 1000000
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import List

CHILD = textwrap.dedent(r"""
    import json, resource, sys, time
    path, profile = sys.argv[1], sys.argv[2] == "1"
    from bytepair import Tokenizer
    t0 = time.perf_counter()
    if profile:
        import cProfile, pstats
        cProfile.run("tok = Tokenizer.load(path)", "/tmp/bench_vocab_load.prof")
        pstats.Stats("/tmp/bench_vocab_load.prof").sort_stats("cumulative").print_stats(25)
    else:
        tok = Tokenizer.load(path)
    seconds = time.perf_counter() - t0
    ids = tok.encode_ordinary("hello world")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "peak_rss": rss, "ids": len(ids)}))
""")


def byte_chars() -> List[str]:
    bs = [*range(33, 127), *range(161, 173), *range(174, 256)]
    cs = list(bs)
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + len(cs) - 188)
    return [chr(c) for _, c in sorted(zip(bs, cs))]


def write_hf(path: Path, n: int, pipeline: bool) -> None:
    head = {"version": "1.0", "added_tokens": [],
            "normalizer": {"type": "NFC"} if pipeline else None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                              "use_regex": True},
            "decoder": {"type": "ByteLevel"}}
    with open(path, "w") as f:
        f.write(json.dumps(head)[:-1] + ', "model": {"type": "BPE", "merges": [], "vocab": {')
        f.write(",".join(f"{json.dumps(c)}:{i}" for i, c in enumerate(byte_chars())))
        step = 1 << 16
        for start in range(256, n, step):
            f.write("," + ",".join(f'"t{i}":{i}' for i in range(start, min(n, start + step))))
        f.write("}}}")


def write_tiktoken(path: Path, n: int) -> None:
    with open(path, "w") as f:
        f.write("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
        step = 1 << 16
        for start in range(256, n, step):
            f.write("".join(f"{base64.b64encode(b't%d' % i).decode()} {i}\n" for i in range(start, min(n, start + step))))


def write_native(path: Path, n: int) -> None:
    """A native file: its vocabulary is the byte alphabet plus merges, so
    N entries are N - 256 merges: first every pair of bytes (2-byte tokens),
    then pairs of those (4-byte tokens), all distinct."""
    from bytepair import Tokenizer

    d = Tokenizer.train("hello world " * 10, vocab_size=257).to_dict()
    keys = [k for k in d if k not in ("merges",)]

    def merge(k: int) -> str:
        if k < 65536:
            return f"[{k >> 8},{k & 255}]"
        j = k - 65536
        return f"[{256 + (j >> 16)},{256 + (j & 65535)}]"

    with open(path, "w") as f:
        f.write("{" + ",".join(f"{json.dumps(k)}:{json.dumps(d[k])}" for k in keys) + ',"merges":[')
        step = 1 << 16
        for start in range(0, n - 256, step):
            f.write(("," if start else "") + ",".join(merge(k) for k in range(start, min(n - 256, start + step))))
        f.write("]}")


WRITERS = {
    "hf-pipeline": ("tokenizer.json", lambda p, n: write_hf(p, n, True)),
    "hf-byte": ("tokenizer.json", lambda p, n: write_hf(p, n, False)),
    "tiktoken": ("vocab.tiktoken", write_tiktoken),
    "native": ("model.json", write_native),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--formats", default=",".join(WRITERS))
    ap.add_argument("--profile", default="", help="a format to run under cProfile (prints the top calls)")
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    formats = [args.profile] if args.profile else args.formats.split(",")
    print(f"{'format':<12} {'entries':>10} {'file MB':>8} {'load s':>8} {'peak RSS MiB':>13} {'x file':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            for fmt in formats:
                name, write = WRITERS[fmt]
                path = Path(tmp) / name
                write(path, n)
                size = os.path.getsize(path)
                try:
                    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), "1" if args.profile else "0"],
                                          capture_output=True, text=True, timeout=args.timeout)
                except subprocess.TimeoutExpired:
                    print(f"{fmt:<12} {n:>10} {size / 1e6:>8.1f} {'>' + str(int(args.timeout)):>8}", flush=True)
                    continue
                if args.profile:
                    print(proc.stdout[:6000])
                try:
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                except (IndexError, ValueError):
                    print(f"{fmt:<12} {n:>10} failed: {proc.stderr.strip().splitlines()[-1:]}", flush=True)
                    continue
                mib = r["peak_rss"] / 2**20
                print(f"{fmt:<12} {n:>10} {size / 1e6:>8.1f} {r['seconds']:>8.1f} {mib:>13.0f} "
                      f"{r['peak_rss'] / size:>7.1f}", flush=True)
                path.unlink()


if __name__ == "__main__":
    main()
