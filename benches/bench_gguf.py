"""bytepair against llama.cpp's own tokenizer (``llama_tokenize`` through ctypes on the llama.cpp of
xllamacpp's prebuilt release wheel, tests/llama_cpp_ref.py) on GGUF files, side by side in one run: each document in turn on one thread (llama.cpp's
tokenize has no batch call), then bytepair's batch on every core; ids checked equal first (parse_special and
add BOS, llama.cpp's ``tokenize(text, add_special=True, parse_special=True)``). Files: llama.cpp's
ggml-vocab-*.gguf test files (scripts/get_gguf_vocabs.py), llama-bpe and llama-spm by default. Texts
(``--text``): ``english`` (Python's reference documentation), ``multilingual`` (tests/data/multilingual.txt),
``code`` (the standard library's source), in documents of about 2 KB.

Usage: ``python benches/bench_gguf.py [--files llama-bpe,llama-spm,qwen2] [--mb 2] [--repeat 3]
[--text english,multilingual,code]``; prints a Markdown table (MB/s and bytepair / llama.cpp ratios).

``--load`` times loading instead: each file copied as the tokenizer of a 40 GB model (the vocabulary-only file
followed by 40 GB of sparse "tensor" bytes, which neither tool may read), then loaded in a fresh process per
repetition, the tools alternating: bytepair's ``Tokenizer.load`` and llama.cpp's ``llama_model_load_from_file``
with ``vocab_only`` (the load call alone, wall seconds, min and median; peak RSS from ``VmHWM``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", default="llama-bpe,llama-spm")
    ap.add_argument("--mb", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--text", default="english,multilingual,code")
    ap.add_argument("--load", action="store_true", help="time loading (a 40 GB model's file) instead of encoding")
    args = ap.parse_args(argv)
    if args.load:
        return load_times(args.files.split(","), args.repeat)

    from llama_cpp_ref import LlamaVocab

    from bytepair import Tokenizer

    pipeline = _module(os.path.join(HERE, "bench_pipeline.py"), "bench_pipeline")
    paths = _module(os.path.join(ROOT, "scripts", "get_gguf_vocabs.py"), "get_gguf_vocabs").get_gguf_vocabs()
    rows = []
    for name in args.files.split(","):
        path = paths[f"ggml-vocab-{name}.gguf"]
        tok, ref = Tokenizer.load(path), LlamaVocab(path)
        for kind in args.text.split(","):
            docs, size = pipeline.documents(args.mb, kind)
            ours = tok.encode_batch(docs, add_special_tokens=True)
            for doc, ids in zip(docs, ours):
                if ids != ref.tokenize(doc, True, True):
                    raise SystemExit(f"{name}: ids differ from llama.cpp's on a {kind} document: {doc[:80]!r}")
            one = pipeline.best(lambda: [tok.encode(d, add_special_tokens=True) for d in docs], args.repeat)
            batch = pipeline.best(lambda: tok.encode_batch(docs, add_special_tokens=True), args.repeat)
            peer = pipeline.best(lambda: [ref.tokenize(d, True, True) for d in docs], args.repeat)
            mb = size / 1e6
            rows.append((name, kind, mb / one, mb / batch, mb / peer, peer / one, peer / batch))
    print(f"{len(docs)} documents of about 2 KB per text, {args.mb} MB; best of {args.repeat}; ids equal to llama.cpp's\n")
    print("| file | text | bytepair 1 thread MB/s | bytepair batch MB/s | llama.cpp MB/s | ratio 1 thread | ratio batch |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.1f}x | {r[6]:.1f}x |")
    return 0


LOAD_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
tool, path = sys.argv[1:3]
if tool == "bytepair":
    from bytepair import Tokenizer
    start = time.perf_counter()
    Tokenizer.load(path)
else:
    from llama_cpp_ref import LlamaVocab
    start = time.perf_counter()
    LlamaVocab(path)
seconds = time.perf_counter() - start
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({"seconds": seconds, "peak_mb": hwm / 1024}))
"""

MODEL_BYTES = 40 << 30  # the size of the model file each vocabulary is put in


def load_times(names, repeat):
    """Load each file as a 40 GB model's, ``repeat`` times per tool in fresh processes, and print a table."""
    import json
    import shutil
    import statistics
    import subprocess
    import tempfile

    paths = _module(os.path.join(ROOT, "scripts", "get_gguf_vocabs.py"), "get_gguf_vocabs").get_gguf_vocabs()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            big = os.path.join(tmp, f"{name}.gguf")
            shutil.copyfile(paths[f"ggml-vocab-{name}.gguf"], big)
            with open(big, "r+b") as f:
                f.truncate(MODEL_BYTES)  # sparse: no disk used, and nothing to read unless a tool reads it
            runs = {"bytepair": [], "llama.cpp": []}
            for _ in range(repeat):
                for tool in runs:
                    out = subprocess.run([sys.executable, "-c", LOAD_CHILD, tool, big, os.path.join(ROOT, "tests")],
                                         capture_output=True, text=True, check=True)
                    runs[tool].append(json.loads(out.stdout.strip().splitlines()[-1]))
            rows.append((name, *(f(r["seconds"] for r in runs[t]) for t in runs for f in (min, statistics.median)),
                         *(max(r["peak_mb"] for r in runs[t]) for t in runs)))
    print(f"load of each vocabulary as the tokenizer of a {MODEL_BYTES >> 30} GB model file; {repeat} fresh processes "
          "per tool, alternating; seconds of the load call\n")
    print("| file | bytepair min | bytepair median | llama.cpp min | llama.cpp median | bytepair / llama.cpp (medians) "
          "| bytepair peak RSS MB | llama.cpp peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.3f} | {r[2]:.3f} | {r[3]:.3f} | {r[4]:.3f} | {r[2] / r[4]:.2f}x | {r[5]:.0f} | "
              f"{r[6]:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
