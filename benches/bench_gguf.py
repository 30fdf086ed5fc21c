"""bytepair against llama.cpp's own tokenizer (``llama_tokenize`` through llama-cpp-python's C bindings,
tests/llama_cpp_ref.py) on GGUF files, side by side in one run: each document in turn on one thread (llama.cpp's
tokenize has no batch call), then bytepair's batch on every core; ids checked equal first (parse_special and
add BOS, llama.cpp's ``tokenize(text, add_special=True, parse_special=True)``). Files: llama.cpp's
ggml-vocab-*.gguf test files (scripts/get_gguf_vocabs.py), llama-bpe and llama-spm by default. Texts
(``--text``): ``english`` (Python's reference documentation), ``multilingual`` (tests/data/multilingual.txt),
``code`` (the standard library's source), in documents of about 2 KB.

Usage: ``python benches/bench_gguf.py [--files llama-bpe,llama-spm,qwen2] [--mb 2] [--repeat 3]
[--text english,multilingual,code]``; prints a Markdown table (MB/s and bytepair / llama.cpp ratios).
llama.cpp's speed depends on how llama-cpp-python was built (CI builds it unoptimised, to build fast): run
this against a release build (``pip install llama-cpp-python``) for the figures that count.
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
    args = ap.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
