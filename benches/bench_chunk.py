"""Token-aware chunking, truncation and limited counting:
is it linear in the text, and how does it compare with semchunk?

Text: Python's reference documentation (``pydoc_data.topics``, English prose
with code) and tests/data/multilingual.txt, repeated to 1 MB and 4 MB.
Tokenizers: cl100k_base (bytepair's byte model, from the ``.tiktoken`` file
that ``scripts/get_vocabs.py`` fetches) and Llama 3's ``tokenizer.json`` (a
pipeline, ``scripts/get_tokenizers.py``).

Rows: ``chunk`` (512 tokens, no overlap; and with 64 tokens of overlap),
``truncate`` to 1,000 tokens, ``count(limit=1000)`` against the full
``count``, and semchunk 4 (``semchunk.chunkerify`` with tiktoken's cl100k
encoder as its token counter, same 512-token chunks) when installed. Times
are the best of ``--repeat`` runs; the 4 MB / 1 MB ratio is 4 for a linear
method.

    python benches/bench_chunk.py [--repeat 3] [--no-semchunk]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MB = 1_000_000


def _module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text_of(size: int) -> str:
    import pydoc_data.topics

    base = "\n\n".join(pydoc_data.topics.topics[k] for k in sorted(pydoc_data.topics.topics))
    with open(os.path.join(ROOT, "tests", "data", "multilingual.txt"), encoding="utf-8") as fh:
        base += "\n\n" + fh.read()
    return (base * (size // len(base) + 1))[:size]


def best(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-semchunk", action="store_true")
    args = parser.parse_args()

    from bytepair import Tokenizer

    cl100k = _module("scripts/get_vocabs.py", "get_vocabs").get_vocabs()["cl100k_base.tiktoken"]
    llama3 = _module("scripts/get_tokenizers.py", "get_tokenizers").get_tokenizers()["llama3/tokenizer.json"]
    toks = {"cl100k (byte)": Tokenizer.from_tiktoken(cl100k), "llama3 (pipeline)": Tokenizer.load(llama3)}
    texts = {size: text_of(size) for size in (1 * MB, 4 * MB)}

    rows = []
    for name, tok in toks.items():
        cases = [
            ("chunk 512", lambda t: sum(1 for _ in tok.chunk(t, 512))),
            ("chunk 512, overlap 64", lambda t: sum(1 for _ in tok.chunk(t, 512, overlap=64))),
            ("encode (reference point)", lambda t: len(tok.encode_ordinary(t))),
            ("truncate 1000", lambda t: len(tok.truncate(t, 1000))),
            ("count(limit=1000)", lambda t: tok.count(t, limit=1000)),
            ("count", lambda t: tok.count(t)),
        ]
        for label, fn in cases:
            timings = {size: best(lambda: fn(text), args.repeat) for size, text in texts.items()}
            rows.append((name, label, timings))
            print(_row(rows[-1]), flush=True)

    if not args.no_semchunk:
        try:
            import semchunk
        except ImportError:
            print("semchunk is not installed: pip install semchunk (or --no-semchunk)", file=sys.stderr)
        else:
            enc = toks["cl100k (byte)"].to_tiktoken()
            chunker = semchunk.chunkerify(lambda s: len(enc.encode_ordinary(s)), 512)
            timings = {size: best(lambda: len(chunker(text)), 1) for size, text in texts.items()}
            rows.append(("cl100k (tiktoken)", "semchunk 4 chunk 512", timings))
            print(_row(rows[-1]), flush=True)
    print()
    print("| tokenizer | operation | 1 MB (s) | 4 MB (s) | 4 MB / 1 MB | result at 1 MB |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(_row(row))
    return 0


def _row(row) -> str:
    name, label, timings = row
    (t1, r1), (t4, _) = timings[1 * MB], timings[4 * MB]
    return f"| {name} | {label} | {t1:.3f} | {t4:.3f} | {t4 / t1:.2f} | {r1} |"


if __name__ == "__main__":
    sys.exit(main())
