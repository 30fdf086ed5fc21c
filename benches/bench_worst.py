"""Worst cases stay linear: one long piece of n bytes, then of 8n bytes.

Patterns such as ``\\p{L}+`` make a text of one repeated letter pair one
pre-token, so all of it goes to the model's merge loop. For each tokenizer
kind this times ``encode`` of an adversarial text of n bytes and of 8n bytes
in one process per row (the tokenizer loaded, one short warm-up encode, then
``--reps`` rounds of four timed encodes at n and one at 8n, interleaved so
that other processes on a shared machine slow both sizes alike; the median
CPU time of each size kept), and reports time(8n) / time(n): linear is 8,
the goal at most 10.

Cases (each about n bytes): ``ab`` ("ab" repeated), ``a-run`` (one letter),
``cjk`` (one CJK character repeated), ``digits`` ("7" repeated: one piece
where the pattern lets digit runs be long, pieces of three elsewhere),
``random-word`` (seeded random lowercase letters, no space), ``spaces`` (one
space repeated: one piece of SentencePiece's ``▁`` symbols, whose merges once
re-sorted a queue bucket at every step).

Tokenizers: cl100k_base and o200k_base ``.tiktoken`` (the byte model), Llama 3,
DeepSeek V3 and Qwen2's layout as ``tokenizer.json`` (the pipeline BPE),
Mistral's SentencePiece ``tokenizer.model.v1``, ``tekken`` (mistral_common's
``tekken_240911.json``), and a char model trained here on 2 MB of
``data/corpora/en.txt`` with byte fallback (made once, in ``data/bench/``). A file that is missing
is skipped. ``--peers`` adds each file's own library on the same texts
(tiktoken, HF tokenizers, sentencepiece; tiktoken is quadratic on such
pieces, so every job has ``--timeout``).

Usage::

    python benches/bench_worst.py                       # n = 250 KB and 2 MB, every kind, every case
    python benches/bench_worst.py --kinds llama3,cl100k --cases ab --reps 5 --peers
    python benches/bench_worst.py --n 100000 --timeout 20
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCABS = os.path.join(ROOT, "data", "vocabs")
WORK = os.path.join(ROOT, "data", "bench")

CASES = ["ab", "a-run", "cjk", "digits", "random-word", "spaces"]


def text_of(case: str, n: int) -> str:
    """About ``n`` bytes of the case's text (deterministic)."""
    if case == "ab":
        return "ab" * (n // 2)
    if case == "a-run":
        return "a" * n
    if case == "cjk":
        return "\u4e2d" * (n // 3)
    if case == "digits":
        return "7" * n
    if case == "spaces":
        return " " * n
    if case == "random-word":
        import random

        rng = random.Random(0)
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    raise SystemExit("unknown case %r" % case)


def _mistral_data() -> str:
    import importlib.util

    spec = importlib.util.find_spec("mistral_common")
    return os.path.join(os.path.dirname(spec.origin), "data") if spec else ""


def _script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def qwen2_path() -> str:
    """Qwen's vocabulary in Qwen2's tokenizer.json layout (scripts/get_tokenizers.py's ``qwen2_json``), made once."""
    out = os.path.join(WORK, "worst-qwen2.json")
    if not os.path.exists(out):
        d = _script("get_tokenizers").qwen2_json(os.path.join(VOCABS, "qwen", "qwen.tiktoken"))
        os.makedirs(WORK, exist_ok=True)
        with open(out + ".tmp", "w", encoding="utf-8") as f:
            json.dump(d, f, ensure_ascii=False)
        os.replace(out + ".tmp", out)
    return out


def char_path() -> str:
    """A char model trained on the first 2 MB of data/corpora/en.txt (8,000 tokens, byte fallback for the
    characters it never saw), made once."""
    out = os.path.join(WORK, "worst-char-bf.json")
    if not os.path.exists(out):
        import bytepair

        with open(os.path.join(ROOT, "data", "corpora", "en.txt"), encoding="utf-8") as f:
            corpus = f.read(2_000_000)
        tok = bytepair.Tokenizer.train(corpus, model="char", vocab_size=8000, byte_fallback=True)
        os.makedirs(WORK, exist_ok=True)
        tok.save(out + ".tmp.json")
        os.replace(out + ".tmp.json", out)
    return out


# name -> (path, how bytepair loads it, the peer that owns the format)
KINDS = {
    "cl100k": (lambda: os.path.join(VOCABS, "cl100k_base.tiktoken"), "tiktoken:cl100k", "tiktoken"),
    "o200k": (lambda: os.path.join(VOCABS, "o200k_base.tiktoken"), "tiktoken:o200k", "tiktoken"),
    "llama3": (lambda: os.path.join(VOCABS, "llama3", "tokenizer.json"), "load", "hf"),
    "deepseek-v3": (lambda: os.path.join(VOCABS, "deepseek", "tokenizer.json"), "load", "hf"),
    "qwen2": (qwen2_path, "load", "hf"),
    "mistral-sp": (lambda: os.path.join(VOCABS, "mistral", "tokenizer.model.v1"), "load", "sentencepiece"),
    "tekken": (lambda: os.path.join(_mistral_data(), "tekken_240911.json"), "load", "mistral_common"),
    "char": (char_path, "load", None),
}


# ======================================================================= one job (its own process)


def _loader(tool: str, path: str, how: str):
    """An encode function of ``tool`` for the file."""
    if tool == "bytepair":
        from bytepair import Tokenizer

        if how.startswith("tiktoken:"):
            tok = Tokenizer.from_tiktoken(path, pattern=how.split(":")[1])
        else:
            tok = Tokenizer.load(path)
        return tok.encode
    if tool == "tiktoken":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from bytepair import PRESETS  # the owners' patterns, copied from tiktoken

        enc = tiktoken.Encoding("bench", pat_str=PRESETS[how.split(":")[1]],
                                mergeable_ranks=load_tiktoken_bpe(path), special_tokens={})
        return enc.encode_ordinary
    if tool == "hf":
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(path)
        return lambda t: tok.encode(t, add_special_tokens=False).ids
    if tool == "sentencepiece":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=path)
        return sp.encode
    if tool == "mistral_common":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tk = Tekkenizer.from_file(path)
        return lambda t: tk.encode(t, bos=False, eos=False)
    raise SystemExit("unknown tool %r" % tool)


def job(spec: dict) -> None:
    """Times encodes of the case's text at n and at 8n, interleaved (``reps`` rounds of four at n, then one at 8n),
    so that whatever else runs on the machine slows both sizes alike; each time is printed as it is taken, so a
    job stopped by the timeout still gives what it measured."""
    encode = _loader(spec["tool"], spec["path"], spec["how"])
    encode("warm up: a short text, once")
    small, large = text_of(spec["case"], spec["n"]), text_of(spec["case"], 8 * spec["n"])
    for _ in range(spec["reps"]):
        for size, text in (("n", small),) * 4 + (("8n", large),):
            c0 = time.process_time()  # CPU time of the process: other processes inflate the wall time
            count = len(encode(text))
            print("SAMPLE %s %r %d" % (size, time.process_time() - c0, count), flush=True)


def run_job(spec: dict, timeout: float) -> list:
    """One job's result per size, n then 8n: the median CPU seconds and the id count, or the error."""
    try:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--job", json.dumps(spec)],
                           capture_output=True, text=True, timeout=timeout)
        out, error = p.stdout, None if p.returncode == 0 else (
            (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1][:160])
    except subprocess.TimeoutExpired as e:  # its stdout is bytes even with text=True
        out, error = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    samples: dict = {"n": [], "8n": []}
    ids: dict = {}
    for line in out.splitlines():
        if line.startswith("SAMPLE "):
            _, size, seconds, count = line.split()
            samples[size].append(float(seconds))
            ids[size] = int(count)
    wanted = {"n": 4 * spec["reps"], "8n": spec["reps"]}
    return [{"seconds": statistics.median(samples[size]), "ids": ids[size]}
            if len(samples[size]) == wanted[size] else {"error": error or "no result"} for size in ("n", "8n")]


# ======================================================================= the report


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--job", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=250_000, help="bytes of the small text (default 250000); the large has 8n")
    ap.add_argument("--reps", type=int, default=3, help="timed encodes per job, median kept (default 3)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="tokenizer kinds (default: all): " + ",".join(KINDS))
    ap.add_argument("--cases", default=",".join(CASES), help="cases (default: all): " + ",".join(CASES))
    ap.add_argument("--peers", action="store_true", help="also each file's own library")
    ap.add_argument("--timeout", type=float, default=60, help="seconds allowed per job (default 60)")
    a = ap.parse_args(argv)
    if a.job:
        job(json.loads(a.job))
        return 0
    print("# Worst cases: time(8n) / time(n), n = %d bytes, CPU time, median of %d encodes at n and %d at 8n, "
          "interleaved in one process per row" % (a.n, 4 * a.reps, a.reps))
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    print()
    print("| tokenizer | tool | case | ids at n | s at n | s at 8n | ratio |")
    print("|---|---|---|---:|---:|---:|---:|")
    worst = 0.0
    for kind in a.kinds.split(","):
        path_of, how, peer = KINDS[kind]
        try:
            path = path_of()
        except Exception as e:  # a file that cannot be made here: skipped, said why
            print("| %s | - | - | skipped: %s |" % (kind, str(e)[:80]))
            continue
        if not os.path.exists(path):
            print("| %s | - | - | skipped: no %s |" % (kind, os.path.relpath(path, ROOT)))
            continue
        tools = ["bytepair"] + ([peer] if a.peers and peer else [])
        for case in a.cases.split(","):
            for tool in tools:
                # four times the encodes at n (each an eighth of the work): as steady a median as at 8n
                r = run_job({"tool": tool, "path": path, "how": how, "case": case, "n": a.n, "reps": a.reps}, a.timeout)
                cells = []
                for x in r:
                    cells.append("%.4f" % x["seconds"] if "error" not in x else
                                 "> %.0f s" % a.timeout if x["error"] == "timeout" else "failed: " + x["error"])
                ratio = r[1]["seconds"] / r[0]["seconds"] if all("error" not in x for x in r) else None
                if tool == "bytepair" and ratio:
                    worst = max(worst, ratio)
                print("| %s | %s | %s | %s | %s | %s | %s |" % (
                    kind, tool, case, r[0].get("ids", "-"), cells[0], cells[1],
                    "%.1fx" % ratio if ratio else "-"), flush=True)
    print()
    print("load average at end: %.2f %.2f %.2f; bytepair's largest ratio %.1fx" % (os.getloadavg() + (worst,)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
