"""bytepair against each tokenizer file's own library, side by side:

- ``tokenizer.json`` files (those of tests/test_pipeline_hf.py, fetched by
  scripts/get_tokenizers.py) against Hugging Face ``tokenizers``;
- SentencePiece BPE ``.model`` files (the five mistral_common ships; v1 is
  the Llama 2 layout) against ``sentencepiece``;
- ``tekken.json`` files (mistral_common's) against mistral_common's
  ``Tekkenizer``;

in one run: encode each document in turn (one thread), then the whole list
as a batch (every core; ``sentencepiece`` with ``num_threads=-1``,
``Tekkenizer`` has no batch call), ids checked equal first. Texts
(``--text``): ``english`` (Python's reference documentation), ``multilingual``
(tests/data/multilingual.txt, 15 scripts), ``code`` (the Python standard
library's source), each cut into documents of about 2 KB.

Usage: ``python benches/bench_pipeline.py [--mb 4] [--repeat 3] [--only json,model,tekken]
[--text english,multilingual,code]``; prints Markdown tables (MB/s and
bytepair / peer ratios).
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


def documents(mb: float, kind: str = "mixed"):
    import pydoc_data.topics

    multilingual = open(os.path.join(ROOT, "tests", "data", "multilingual.txt"), encoding="utf-8").read()
    english = [pydoc_data.topics.topics[k] for k in sorted(pydoc_data.topics.topics)]
    if kind == "mixed":
        texts = [multilingual] + english
    elif kind == "english":
        texts = english
    elif kind == "multilingual":
        texts = [multilingual]
    elif kind == "code":
        import glob as _glob

        texts = [open(p, encoding="utf-8", errors="replace").read()
                 for p in sorted(_glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))[:80]]
    else:
        raise SystemExit(f"unknown --text {kind!r}")
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


def _bench(name, docs, size, repeat, bp_one, peer_one, bp_batch, peer_batch):
    from bytepair import _core

    def run(one):
        def f():
            for d in docs:
                one(d)
        return f

    _core.clear_caches()
    r = [best(run(bp_one), repeat), best(run(peer_one), repeat),
         best(lambda: bp_batch(docs), repeat), best(lambda: peer_batch(docs), repeat) if peer_batch else None]
    return name, [size / 1e6 / t if t else None for t in r]


def json_rows(docs, size, repeat, folder):
    import tokenizers

    import bytepair

    rows = []
    for name, path in files(folder).items():
        bp = bytepair.Tokenizer.load(path)
        hf = tokenizers.Tokenizer.from_file(path)
        assert bp.encode_batch(docs) == [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)], name
        rows.append(_bench(name, docs, size, repeat, bp.encode, lambda d: hf.encode(d, add_special_tokens=False),
                           bp.encode_batch, lambda ds: hf.encode_batch(ds, add_special_tokens=False)))
    return rows


def mistral_files(pattern):
    import glob

    import mistral_common

    return sorted(glob.glob(os.path.join(os.path.dirname(mistral_common.__file__), "data", pattern)))


def model_rows(docs, size, repeat):
    import sentencepiece as spm

    import bytepair

    rows = []
    for path in mistral_files("*.model*"):
        bp = bytepair.Tokenizer.load(path)
        sp = spm.SentencePieceProcessor(model_file=path)
        assert bp.encode_batch(docs) == sp.encode(docs), path
        rows.append(_bench(os.path.basename(path), docs, size, repeat, bp.encode, sp.encode, bp.encode_batch,
                           lambda ds: sp.encode(ds, num_threads=-1)))
    return rows


def tekken_rows(docs, size, repeat):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    import bytepair

    rows = []
    for path in mistral_files("tekken*.json"):
        bp = bytepair.Tokenizer.load(path)
        mt = Tekkenizer.from_file(path)
        assert [bp.encode_ordinary(d) for d in docs] == [mt.encode(d, bos=False, eos=False) for d in docs], path
        rows.append(_bench(os.path.basename(path), docs, size, repeat, bp.encode_ordinary,
                           lambda d: mt.encode(d, bos=False, eos=False), bp.encode_ordinary_batch, None))
    return rows


def table(title, peer, rows):
    print(f"| {title} | bytepair 1 thread MB/s | {peer} 1 thread MB/s | ratio | bytepair batch MB/s "
          f"| {peer} batch MB/s | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, (a, b, c, d) in rows:
        batch = f"{d:.1f} | {c / d:.2f}x" if d else "(no batch call) | "
        print(f"| {name} | {a:.1f} | {b:.1f} | {a / b:.2f}x | {c:.1f} | {batch} |")
    print()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=4.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="json,model,tekken")
    ap.add_argument("--text", default="english,multilingual,code")
    args = ap.parse_args(argv)
    import tokenizers

    only = args.only.split(",")
    print(f"{os.cpu_count()} cores, tokenizers {tokenizers.__version__}\n")
    for kind in args.text.split(","):
        docs, size = documents(args.mb, kind)
        print(f"### {kind}: {size / 1e6:.1f} MB in {len(docs)} documents\n")
        if "json" in only:
            with tempfile.TemporaryDirectory() as folder:
                table("tokenizer.json", "HF tokenizers", json_rows(docs, size, args.repeat, folder))
        if "model" in only:
            table("SentencePiece .model", "sentencepiece", model_rows(docs, size, args.repeat))
        if "tekken" in only:
            table("tekken.json", "mistral_common", tekken_rows(docs, size, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
