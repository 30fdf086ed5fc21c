"""A byte model and the same tokenizer as a pipeline, side by side in one run
(``Tokenizer.as_pipeline``): does a pipeline that is exactly a byte-model
configuration encode at the byte model's speed on the pipeline engine?

For each byte tokenizer (cl100k_base's ``.tiktoken``, GPT-2's published
``vocab.json`` + ``merges.txt``, GPT-2's in RoBERTa's layout with a trimming
``ByteLevel`` post-processor, which ``Tokenizer.load`` routes to the
pipeline), four encoders of the same ids (checked equal first):

- ``byte``: the byte model (``Tokenizer``);
- ``pipeline``: ``Tokenizer.from_spec(tok.as_pipeline())``, a
  ``PipelineTokenizer`` (the pipeline engine, its split written in Hugging
  Face's dialect of the pattern and run by the preset's lexer);
- ``pipeline engine``: the same description's core called directly
  (``CorePipeline.encode``), without the Python layer;
- ``HF``: Hugging Face ``tokenizers`` on the same ``tokenizer.json``.

Each encodes the documents one by one (one thread), then as one batch (every
core); the encoders take turns in each of ``--repeat`` rounds, best time kept. Texts: Python's reference documentation and tests/data/multilingual.txt
cut into ~2 KB documents (``benches/bench_pipeline.py``'s ``documents``).

Usage: ``python benches/bench_one_engine.py [--mb 2] [--repeat 3]``; prints a
Markdown table (MB/s, and each encoder / byte model).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


sys.path.insert(0, HERE)
import bench_pipeline  # noqa: E402  (its documents and its module loader)

_module = bench_pipeline._module


def _best(fs, repeat):
    """The best time of each function, the functions taking turns in every round (a shared machine's load
    then weighs on all of them alike)."""
    import bytepair

    best = {k: float("inf") for k in fs}
    for _ in range(repeat):
        for k, f in fs.items():
            bytepair._core.clear_caches()  # cold piece caches on every run, for every encoder
            t = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import tokenizers

    import bytepair
    from bytepair import Tokenizer

    docs, _ = bench_pipeline.documents(args.mb, "mixed")
    vocabs = _module(os.path.join(ROOT, "scripts", "get_vocabs.py"), "get_vocabs").get_vocabs()
    mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6

    gpt2 = Tokenizer.load(vocabs["gpt2/vocab.json"], format="gpt2")
    roberta = gpt2.as_pipeline().description
    roberta["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                 "use_regex": True}
    cases = [
        ("cl100k_base", Tokenizer.from_tiktoken(vocabs["cl100k_base.tiktoken"])),
        ("gpt2", gpt2),
        ("gpt2, RoBERTa layout (trim_offsets)", Tokenizer.from_spec(
            bytepair.formats.hf.loads(json.dumps(roberta)))),
    ]
    rows = []
    for name, tok in cases:
        if tok.model == "pipeline":  # the loaded file: its byte model is the one the pipeline found
            pipe, desc = tok, tok.spec.description
            byte = Tokenizer.from_spec(bytepair.formats.hf.byte_model_of(desc))
        else:
            byte, pipe = tok, Tokenizer.from_spec(tok.as_pipeline())
            desc = pipe.spec.description
        assert pipe._byte_spec is not None, name  # a byte-model configuration
        hf = tokenizers.Tokenizer.from_str(json.dumps(desc))
        engine = pipe._core
        want = [byte.encode_ordinary(d) for d in docs]
        assert [pipe.encode_ordinary(d) for d in docs] == want
        assert [engine.encode(d, False, True) for d in docs] == want
        assert [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)] == want
        single = {
            "byte": lambda: [byte.encode_ordinary(d) for d in docs],
            "pipeline": lambda: [pipe.encode_ordinary(d) for d in docs],
            "pipeline engine": lambda: [engine.encode(d, False, True) for d in docs],
            "HF": lambda: [hf.encode(d, add_special_tokens=False) for d in docs],
        }
        batch = {
            "byte": lambda: byte.encode_ordinary_batch(docs),
            "pipeline": lambda: pipe.encode_ordinary_batch(docs),
            "pipeline engine": lambda: engine.encode_batch(docs, False, True),
            "HF": lambda: hf.encode_batch(docs, add_special_tokens=False),
        }
        for mode, fs in (("one by one", single), ("batch", batch)):
            speeds = {k: mb / t for k, t in _best(fs, args.repeat).items()}
            rows.append((name, mode, speeds))
            print(name, mode, {k: round(v, 1) for k, v in speeds.items()}, file=sys.stderr)

    keys = ["byte", "pipeline", "pipeline engine", "HF"]
    print(f"{len(docs)} documents, {mb:.1f} MB; MB/s (x byte model), best of {args.repeat}\n")
    print("| tokenizer | mode | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for name, mode, speeds in rows:
        cells = [f"{speeds[k]:.1f} ({speeds[k] / speeds['byte']:.2f}x)" for k in keys]
        print(f"| {name} | {mode} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
