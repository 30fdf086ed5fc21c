"""bytepair's pipeline engine against Hugging Face ``tokenizers`` on the same
``tokenizer.json`` files (those of tests/test_pipeline_hf.py, fetched by
scripts/get_tokenizers.py), in one run: encode each document in turn (one
thread), then the whole list as a batch (``encode_batch``, every core), ids
checked equal first. Text: tests/data/multilingual.txt and Python's
reference documentation, cut into documents of about 2 KB.

Usage: ``python benches/bench_pipeline.py [--mb 4] [--repeat 3]``; prints a
Markdown table (MB/s and bytepair / HF ratios).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def documents(mb: float):
    import pydoc_data.topics

    texts = [open(os.path.join(ROOT, "tests", "data", "multilingual.txt"), encoding="utf-8").read()]
    texts += [pydoc_data.topics.topics[k] for k in sorted(pydoc_data.topics.topics)]
    whole = "\n".join(texts)
    docs, size, i = [], 0, 0
    while size < mb * 1e6:
        doc = whole[i:i + 2000]
        i = (i + 2000) % max(1, len(whole) - 2000)
        docs.append(doc)
        size += len(doc.encode("utf-8"))
    return docs, size


def files(folder):
    g = _module(os.path.join(ROOT, "scripts", "get_tokenizers.py"), "get_tokenizers")
    paths = g.get_tokenizers()
    out = {"llama3": paths["llama3/tokenizer.json"], "deepseek-v3": paths["deepseek/tokenizer.json"]}
    for name, d in [("mistral-v1 (SentencePiece layout)", g.sentencepiece_json(paths["mistral/tokenizer.model.v1"])),
                    ("qwen2 layout (NFC)", g.qwen2_json(paths["qwen/qwen.tiktoken"]))]:
        p = os.path.join(folder, name.split()[0] + ".json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(d, f, ensure_ascii=False)
        out[name] = p
    return out


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    import tokenizers

    import bytepair
    from bytepair import _core

    docs, size = documents(args.mb)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, path in files(folder).items():
            bp = bytepair.Tokenizer.load(path)
            hf = tokenizers.Tokenizer.from_file(path)
            assert bp.encode_batch(docs) == [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)], name

            def bp_single():
                for d in docs:
                    bp.encode(d)

            def hf_single():
                for d in docs:
                    hf.encode(d, add_special_tokens=False)

            _core.clear_pipeline_caches()
            r = [best(bp_single, args.repeat), best(hf_single, args.repeat),
                 best(lambda: bp.encode_batch(docs), args.repeat),
                 best(lambda: hf.encode_batch(docs, add_special_tokens=False), args.repeat)]
            mbs = [size / 1e6 / t for t in r]
            rows.append((name, mbs))
    print(f"{size / 1e6:.1f} MB in {len(docs)} documents, {os.cpu_count()} cores, tokenizers {tokenizers.__version__}\n")
    print("| tokenizer.json | bytepair 1 thread MB/s | HF 1 thread MB/s | ratio | bytepair batch MB/s | HF batch MB/s | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, (a, b, c, d) in rows:
        print(f"| {name} | {a:.1f} | {b:.1f} | {a / b:.2f}x | {c:.1f} | {d:.1f} | {c / d:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
