#!/usr/bin/env python3
"""Encoding at the frontier: bytepair against gigatoken, fastokens,
toktok-rs, kitoken and tokie (and tiktoken, the reference for ids) with
cl100k_base, one process per tool and stage, on the workloads below.

    python benches/bench_frontier.py --quick   # 1 MB slices, 1 repetition
    python benches/bench_frontier.py           # 10 MB slices, 3 repetitions

Each corpus gives three disjoint texts A, B, C of ``--mb`` MB each, cut into
documents of at most 4 KB at line ends. Stages (each a fresh process, pinned to
its CPUs; repetitions are fresh processes too, medians reported):

- ``single`` (1 thread): A per document (cold: fresh process), then B per
  document (steady state: warmed on A), B again (warm: same documents), B
  again into numpy arrays where the tool has a per-document numpy call, then
  C as one call (long text, warmed on other text);
- ``long`` (1 thread): A as one call, cold;
- ``batch`` (1 and 2 threads, the process pinned to that many CPUs): the batch call on A (cold), on B (steady) as
  lists, on C into one flat array, a count of C, and C cut into lines of at
  most 50 bytes as lists (or flat where the tool has no list batch).

Times: the process's CPU time for 1-thread rows (a shared machine's other
processes then cost little), wall time for 2-thread rows.

Cache memory: the process's resident memory (``/proc/self/statm``) after the
tool is loaded and after the stage, and what the tool itself reports
(bytepair ``cache_info``, fastokens ``segment_cache_stats``, toktok
``memory_bytes``; kitoken and tokie report none). Ids: a digest of every
document's ids (and of each long call and batch) is compared with tiktoken's;
a cell whose ids differ says so and is left out of the ratio, and a list after
the tables names each tool and row that differs (with the first differing
document). Writes the "frontier" section of docs/benchmarks.md.

How each peer loads cl100k_base offline: gigatoken, fastokens and kitoken
from the .tiktoken file (kitoken with its own reading of the cl100k regex, its
special tokens not split out of the text, as in ``encode_ordinary``), toktok
from its built-in copy, tokie from the HF tokenizer.json that bytepair exports
(``common.hf_cl100k_json``) without its added tokens (tokie reads neither the
.tiktoken file nor, offline, a name).

``--tokenizer FILE`` compares pipelines on a tokenizer.json (HF tokenizers is
the reference for ids) or on a SentencePiece ``.model`` (the sentencepiece
library is the reference; bytepair, gigatoken and kitoken load the .model,
fastokens, tokie and HF its Llama 2 tokenizer.json layout); no tool adds BOS
or EOS (see :func:`load_sentencepiece`).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
from common import CL100K, CL100K_SPECIALS, MB, median, table  # noqa: E402

TOOLS = ["bytepair", "gigatoken", "fastokens", "toktok", "kitoken", "tokie", "bpe-openai", "hf", "tiktoken"]
PIPELINE_TOOLS = ["bytepair", "gigatoken", "fastokens", "kitoken", "tokie", "hf"]
SPM_TOOLS = ["bytepair", "gigatoken", "kitoken", "fastokens", "tokie", "hf", "sentencepiece"]
PEERS = ["gigatoken", "fastokens", "toktok", "kitoken", "tokie", "bpe-openai"]
LABEL = {"bytepair": "bytepair", "bytepair-base": "bytepair (baseline)", "gigatoken": "gigatoken", "fastokens": "fastokens", "toktok": "toktok-rs",
         "kitoken": "kitoken", "tokie": "tokie", "tiktoken": "tiktoken", "hf": "HF tokenizers",
         "sentencepiece": "sentencepiece", "bpe-openai": "bpe-openai"}
DIST = {"toktok": "toktok-rs", "hf": "tokenizers"}  # PyPI names where they differ from the tool's
PYTHON = [sys.executable]  # the interpreter whose bytepair is measured (--python)
DOC_BYTES = 4096
LINE_BYTES = 50

# (row key, stage, threads, description)
ROWS = [
    ("cold", "single", 1, "each document once, 1 thread (cold)"),
    ("steady", "single", 1, "the next documents after warming on others, 1 thread (steady state)"),
    ("warm", "single", 1, "the same documents again, 1 thread (warm)"),
    ("warm-np", "single", 1, "the same documents again into numpy, 1 thread (warm)"),
    ("long-cold", "long", 1, "the whole text as one call, cold"),
    ("long-steady", "single", 1, "the whole text as one call, warmed on other text"),
    ("batch-cold@1", "batch", 1, "a batch of all documents, 1 thread (cold)"),
    ("batch-cold@2", "batch", 2, "a batch of all documents, 2 threads (cold)"),
    ("batch@1", "batch", 1, "a batch of all documents, 1 thread (steady)"),
    ("batch@2", "batch", 2, "a batch of all documents, 2 threads (steady)"),
    ("flat@2", "batch", 2, "a batch into one flat array, 2 threads (steady)"),
    ("count@2", "batch", 2, "counting a batch, 2 threads (warm)"),
    ("lines@1", "batch", 1, "a batch of 50-byte lines, 1 thread (warm)"),
    ("lines@2", "batch", 2, "a batch of 50-byte lines, 2 threads (warm)"),
]


# ======================================================================= text


def is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF
            or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF or 0x3000 <= o <= 0x303F or 0x1100 <= o <= 0x11FF)


def cjk_path(mb: float) -> str:
    """data/bench/cjk-*.txt: the documents of the multilingual corpus (its
    index) in which at least 30% of the characters are CJK, kana or Hangul
    (GNOME help, Debian manuals and man pages in Chinese, Japanese, Korean),
    in corpus order."""
    common.ensure_corpora(["multi"])
    corpus = os.path.join(common.CORPORA, "multi.txt")
    path = os.path.join(common.WORK, "slices", common._corpus_id("multi"), "cjk.txt")
    if not os.path.exists(path):
        out = []
        with open(corpus, "rb") as fh:
            data = fh.read()
        with open(os.path.join(common.CORPORA, "multi.index.tsv"), encoding="utf-8") as fh:
            for line in fh:
                f = line.split("\t")
                if not f[0].isdigit():
                    continue
                doc = data[int(f[0]):int(f[0]) + int(f[1])].decode("utf-8", "replace")
                letters = [c for c in doc if not c.isspace()]
                if letters and sum(map(is_cjk, letters)) >= 0.3 * len(letters):
                    out.append(doc if doc.endswith("\n") else doc + "\n")
        common._write(path, "".join(out).encode("utf-8"))
    return path


def corpus_file(name: str, mb: float) -> str:
    if name == "cjk":
        return cjk_path(mb)
    common.ensure_corpora([name])
    return common.slice_path(name, 3 * mb)


def documents(text: str, size: int):
    """``text`` as documents of at most ``size`` bytes, cut at line ends (a
    longer line is its own document)."""
    out, cur, n = [], [], 0
    for line in text.splitlines(keepends=True):
        k = len(line.encode("utf-8"))
        if cur and n + k > size:
            out.append("".join(cur))
            cur, n = [], 0
        cur.append(line)
        n += k
    if cur:
        out.append("".join(cur))
    return out


def short_lines(text: str, size: int = LINE_BYTES):
    """The lines of ``text``, longer ones cut into pieces of at most ``size``
    bytes (at character boundaries)."""
    out = []
    for line in text.splitlines(keepends=True):
        while len(line.encode("utf-8")) > size:
            k = size
            while len(line[:k].encode("utf-8")) > size:
                k -= 1
            out.append(line[:k])
            line = line[k:]
        if line:
            out.append(line)
    return out


def texts_of(corpus: str, mb: float):
    """(A, B, C): three disjoint runs of documents of about ``mb`` MB each."""
    with open(corpus_file(corpus, mb), encoding="utf-8") as fh:
        text = fh.read()
    docs = documents(text, DOC_BYTES)
    parts, cur, n = [], [], 0
    for d in docs:
        cur.append(d)
        n += len(d.encode("utf-8"))
        if n >= mb * MB:
            parts.append(cur)
            cur, n = [], 0
            if len(parts) == 3:
                break
    else:
        parts.append(cur)
    if len(parts) < 3 or not parts[2]:
        # a small corpus (CJK): three equal thirds
        k = len(docs) // 3
        parts = [docs[:k], docs[k:2 * k], docs[2 * k:3 * k]]
    return parts[0], parts[1], parts[2]


# ======================================================================= tools


def _bytepair_pipeline_calls(bytepair, tok) -> dict:
    """bytepair's calls on a pipeline (a tokenizer.json or a .model), no special tokens added."""
    return {"one": lambda s: tok.encode(s, add_special_tokens=False),
            "np": lambda s: tok.encode_to_numpy(s, add_special_tokens=False),
            "batch": lambda ts: tok.encode_batch(ts, add_special_tokens=False),
            "flat": lambda ts: tok.encode_batch_to_numpy(ts, add_special_tokens=False),
            "count": tok.count_batch,
            "cache": lambda: bytepair._core.cache_info()[1] + bytepair._core.cache_info()[5]}


def _gigatoken_calls(g) -> dict:
    """gigatoken's calls on a loaded ``gigatoken.Tokenizer``."""
    return {"one": lambda s: g.encode(s).tolist(), "np": g.encode, "batch": g.encode_batch_list, "flat": g.encode_batch}


def _kitoken_calls(k) -> dict:
    """kitoken's calls on a loaded ``Kitoken``."""
    return {"one": k.encode, "batch": k.encode_all}


def load_pipeline(tool: str, path: str, threads: int):
    """``load`` for a tokenizer.json (``--tokenizer``): bytepair's pipeline
    engine, gigatoken, fastokens, kitoken, tokie and HF tokenizers (the
    reference for ids); no special tokens added."""
    t = {}
    if tool == "bytepair":
        import bytepair

        tok = bytepair.Tokenizer.load(path)
        assert tok.model == "pipeline", tok.model
        t.update(_bytepair_pipeline_calls(bytepair, tok))
    elif tool == "gigatoken":
        import gigatoken

        t.update(_gigatoken_calls(gigatoken.Tokenizer(path)))
    elif tool == "fastokens":
        import fastokens

        f = fastokens.Tokenizer.from_file(path)
        t["one"] = lambda s: f.encode(s, add_special_tokens=False).ids
        t["batch"] = lambda ts: [e.ids for e in f.encode_batch(ts, add_special_tokens=False)]
        t["flat"] = lambda ts: f.encode_batch_flat(ts, add_special_tokens=False)
    elif tool == "kitoken":
        import kitoken

        t.update(_kitoken_calls(kitoken.Kitoken.from_tokenizers_file(path)))
    elif tool == "tokie":
        import tokie

        tk = tokie.Tokenizer.from_json(path)
        t["one"] = lambda s: tk.encode(s, add_special_tokens=False).ids
        t["batch"] = lambda ts: [e.ids for e in tk.encode_batch(ts, add_special_tokens=False)]
        t["count"] = tk.count_tokens_batch
    elif tool == "hf":
        import tokenizers

        h = tokenizers.Tokenizer.from_file(path)
        t["one"] = lambda s: h.encode(s, add_special_tokens=False).ids
        t["batch"] = lambda ts: [e.ids for e in h.encode_batch(ts, add_special_tokens=False)]
        t["flat"] = t["batch"]  # not timed: the reference of the flat rows' ids
        t["count"] = lambda ts: [len(x) for x in t["batch"](ts)]  # not timed: the count rows' reference
    else:
        raise ValueError(tool)
    t["one"]("warm up")
    return t


def is_sentencepiece(path: str) -> bool:
    """Whether ``path`` is a SentencePiece model (a protobuf whose first field,
    the pieces, starts with byte 0x0A), not a tokenizer.json or a tiktoken
    file (Llama 3's ``tokenizer.model`` is base64 text)."""
    if path.endswith(".json"):
        return False
    with open(path, "rb") as fh:
        return fh.read(1) == b"\n"


def sentencepiece_hf_json(path: str) -> str:
    """data/bench/spm-<hash>-legacy.json: the SentencePiece model at ``path``
    in the ``tokenizer.json`` layout that transformers' LlamaConverter writes
    for Llama 2 / Mistral ("legacy": Prepend + Replace normalizers, byte
    fallback; ``scripts/get_tokenizers.py``'s ``sentencepiece_json``), for
    the tools that read no ``.model`` (fastokens, tokie, HF tokenizers)."""
    with open(path, "rb") as fh:
        h = hashlib.sha256(fh.read()).hexdigest()[:12]
    out = os.path.join(common.WORK, "spm-%s-legacy.json" % h)
    if not os.path.exists(out):
        spec = importlib.util.spec_from_file_location(
            "get_tokenizers", os.path.join(common.ROOT, "scripts", "get_tokenizers.py"))
        gt = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gt)
        d = gt.sentencepiece_json(path, "legacy")
        common._write(out, json.dumps(d, ensure_ascii=False).encode("utf-8"))
    return out


def load_sentencepiece(tool: str, path: str, threads: int):
    """``load`` for a SentencePiece ``.model`` (``--tokenizer``): bytepair
    (``Tokenizer.load``), gigatoken (``Tokenizer.from_sentencepiece``),
    kitoken (``Kitoken.from_sentencepiece_file``) and the ``sentencepiece``
    library itself (the reference for ids); fastokens, tokie and HF
    tokenizers read no ``.model``, so they get the Llama 2 ``tokenizer.json``
    layout of the same model (:func:`sentencepiece_hf_json`). No BOS or EOS
    on any tool: sentencepiece's ``encode`` adds none by default, bytepair,
    fastokens, tokie and HF are called with ``add_special_tokens=False``,
    gigatoken's and kitoken's calls add none."""
    t = {}
    if tool == "bytepair":
        import bytepair

        t.update(_bytepair_pipeline_calls(bytepair, bytepair.Tokenizer.load(path)))
    elif tool == "gigatoken":
        import gigatoken

        t.update(_gigatoken_calls(gigatoken.Tokenizer.from_sentencepiece(path)))
    elif tool == "kitoken":
        import kitoken

        t.update(_kitoken_calls(kitoken.Kitoken.from_sentencepiece_file(path)))
    elif tool == "sentencepiece":
        import sentencepiece

        sp = sentencepiece.SentencePieceProcessor(model_file=path)  # add_bos/add_eos default off
        t["one"] = sp.encode
        t["batch"] = lambda ts: sp.encode(ts, num_threads=threads)
        t["flat"] = t["batch"]  # not timed: the reference of the flat rows' ids
        t["count"] = lambda ts: [len(x) for x in t["batch"](ts)]  # not timed: the count rows' reference
    elif tool in ("fastokens", "tokie", "hf"):
        t = load_pipeline(tool, sentencepiece_hf_json(path), threads)
        if tool == "hf":
            del t["flat"], t["count"]  # those were the reference's untimed calls in the tokenizer.json mode
        return t
    else:
        raise ValueError(tool)
    t["one"]("warm up")
    return t


def tokie_cl100k_json(vocab: str) -> str:
    """data/bench/hf-cl100k-ordinary.json: bytepair's HF export of
    cl100k_base (``common.hf_cl100k_json``) without its added tokens, so that
    tokie, which reads only tokenizer.json (or its own .tkz), encodes special
    token text as ordinary text, like ``encode_ordinary``."""
    out = os.path.join(common.WORK, "hf-cl100k-ordinary.json")
    if not os.path.exists(out):
        with open(common.hf_cl100k_json(vocab), encoding="utf-8") as fh:
            spec = json.load(fh)
        spec["added_tokens"] = []
        common._write(out, json.dumps(spec, ensure_ascii=False).encode("utf-8"))
    return out


def load(tool: str, vocab: str, threads: int):
    """A dict of the tool's calls (missing keys: the tool has no such call):
    one(text) -> ids, np(text) -> array, batch(texts) -> [ids],
    flat(texts) -> flat ids, count(texts) -> [n], cache() -> bytes or None."""
    t = {}
    if vocab.endswith(".json"):
        return load_pipeline(tool, vocab, threads)
    if is_sentencepiece(vocab):
        return load_sentencepiece(tool, vocab, threads)
    if tool == "bytepair":
        import bytepair

        tok = common.load_bytepair_cl100k(bytepair, vocab)
        t["one"] = tok.encode_ordinary
        t["np"] = lambda s: tok.encode_to_numpy(s, disallowed_special=())
        t["batch"] = tok.encode_ordinary_batch
        t["flat"] = lambda ts: tok.encode_batch_to_numpy(ts, disallowed_special=())
        t["count"] = tok.count_batch
        t["cache"] = lambda: bytepair._core.cache_info()[1] + bytepair._core.cache_info()[5]
    elif tool == "gigatoken":
        import gigatoken

        g = gigatoken.Tokenizer.from_tiktoken(vocab)  # the file name says cl100k_base
        tk = g.as_tiktoken()
        t["one"] = tk.encode_ordinary
        t["np"] = g.encode
        t["batch"] = g.encode_batch_list
        t["flat"] = g.encode_batch
    elif tool == "fastokens":
        import fastokens

        f = fastokens.Tokenizer.from_tiktoken(vocab, pattern=CL100K, special_tokens=CL100K_SPECIALS)
        t["one"] = lambda s: f.encode_ordinary(s).ids
        t["batch"] = lambda ts: [e.ids for e in f.encode_batch(ts)]
        t["flat"] = f.encode_batch_flat

        def cache():
            s = f.segment_cache_stats()
            return None if s is None else s.get("bytes")

        t["cache"] = cache
    elif tool == "toktok":
        import toktok

        k = toktok._encoding("cl100k_base")
        t["one"] = k.encode_ordinary
        t["np"] = k.encode_to_numpy
        t["flat"] = lambda ts: k.encode_batch_to_numpy(ts, threads=threads)
        t["count"] = lambda ts: k.count_batch(ts, threads=threads)
        t["cache"] = lambda: k.memory_bytes
    elif tool == "kitoken":
        import kitoken

        k = kitoken.Kitoken.from_tiktoken_file(vocab)  # its own cl100k regex and special tokens
        spec = k.definition()
        for s in spec["specials"]:
            s["extract"] = False  # special token text encoded as ordinary text, as encode_ordinary does
        k.set_definition(spec)
        t["one"] = k.encode
        t["batch"] = k.encode_all
    elif tool == "tokie":
        import tokie

        tk = tokie.Tokenizer.from_json(tokie_cl100k_json(vocab))
        t["one"] = lambda s: tk.encode(s, add_special_tokens=False).ids
        t["batch"] = lambda ts: [e.ids for e in tk.encode_batch(ts, add_special_tokens=False)]
        t["count"] = tk.count_tokens_batch
    elif tool == "bpe-openai":
        import bpe_openai

        enc = bpe_openai.get_encoding("cl100k_base")  # its own copy of cl100k_base
        t["one"] = enc.encode_ordinary
        t["batch"] = lambda ts: enc.encode_ordinary_batch(ts, num_threads=threads)
    elif tool == "hf":
        h = common.load_hf_cl100k(vocab)
        t["one"] = lambda s: h.encode(s, add_special_tokens=False).ids
        t["batch"] = lambda ts: [e.ids for e in h.encode_batch(ts, add_special_tokens=False)]
    elif tool == "tiktoken":
        enc = common.load_tiktoken_cl100k(vocab)
        t["one"] = enc.encode_ordinary
        t["np"] = lambda s: enc.encode_to_numpy(s, disallowed_special=())
        t["batch"] = lambda ts: enc.encode_ordinary_batch(ts, num_threads=threads)
        # not timed calls of tiktoken: the references of the flat and count rows' ids
        t["flat"] = t["batch"]
        t["count"] = lambda ts: [len(x) for x in t["batch"](ts)]
    else:
        raise ValueError(tool)
    t["one"]("warm up")
    return t


def per_document(out):
    """A batch call's result as one id sequence per document: lists as they
    are, an awkward array row by row, (ids, offsets) buffers or arrays split."""
    import numpy

    if isinstance(out, tuple) and len(out) == 2:
        ids, offs = out
        ids = numpy.frombuffer(ids, dtype=numpy.uint32) if isinstance(ids, bytes) else numpy.asarray(ids)
        offs = numpy.frombuffer(offs, dtype=numpy.uint64) if isinstance(offs, bytes) else numpy.asarray(offs)
        return [ids[int(offs[k]):int(offs[k + 1])] for k in range(len(offs) - 1)]
    if type(out).__module__.startswith("awkward"):
        import awkward

        return [awkward.to_numpy(x) for x in out]
    return out


def digest(ids) -> str:
    """A short digest of a sequence of ids (list, numpy or awkward array)."""
    if hasattr(ids, "tobytes"):
        import numpy

        b = numpy.asarray(ids, dtype=numpy.uint32).tobytes()
    elif type(ids).__module__.startswith("awkward"):
        import awkward
        import numpy

        b = numpy.asarray(awkward.flatten(ids), dtype=numpy.uint32).tobytes()
    else:
        b = array("I", ids).tobytes()
    return hashlib.blake2b(b, digest_size=8).hexdigest()


def rss() -> int:
    gc.collect()
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def job(spec: dict) -> dict:
    """One stage of one tool on one corpus in this process."""
    tool, stage, threads = spec["tool"], spec["stage"], spec["threads"]
    importlib.import_module("numpy")  # before timing: a tool importing it lazily is not charged the import

    A, B, C = texts_of(spec["corpus"], spec["mb"])
    if tool == "bytepair-base":  # --baseline: the bytepair package of that folder
        sys.path.insert(0, os.environ["BYTEPAIR_BASELINE"])
        import bytepair

        assert bytepair.__file__.startswith(os.environ["BYTEPAIR_BASELINE"] + os.sep), bytepair.__file__
        tool = "bytepair"
    nb = lambda docs: sum(len(d.encode("utf-8")) for d in docs)  # noqa: E731
    t = load(tool, spec["vocab"], threads)
    res = {"seconds": {}, "bytes": {}, "ids": {}}
    rss0 = rss()

    def timed(row, fn, arg, nbytes, per_doc=False):
        c0, t0 = time.process_time(), time.perf_counter()
        out = [fn(x) for x in arg] if per_doc else fn(arg)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        # one thread: CPU time (robust to other processes on a shared machine); more: wall time
        res["seconds"][row] = cpu if threads == 1 else wall
        res.setdefault("wall", {})[row] = wall
        res["bytes"][row] = nbytes
        if per_doc:
            res["ids"][row] = [digest(x) for x in out]
        elif row.startswith("count"):
            res["ids"][row] = [digest(list(out))]
        elif row.startswith(("batch", "lines", "flat")):
            res["ids"][row] = [digest(x) for x in per_document(out)]
        else:
            res["ids"][row] = [digest(out)]

    if stage == "single":
        timed("cold", t["one"], A, nb(A), per_doc=True)
        timed("steady", t["one"], B, nb(B), per_doc=True)
        timed("warm", t["one"], B, nb(B), per_doc=True)
        if "np" in t:
            timed("warm-np", t["np"], B, nb(B), per_doc=True)
        timed("long-steady", t["one"], "".join(C), nb(C))
    elif stage == "long":
        timed("long-cold", t["one"], "".join(A), nb(A))
    elif stage == "batch":
        at = "@%d" % threads
        lines = short_lines("".join(C))
        if "batch" in t:
            timed("batch-cold" + at, t["batch"], A, nb(A))
            timed("batch" + at, t["batch"], B, nb(B))
        elif "flat" in t:  # the tool's only batch call
            timed("batch-cold" + at, t["flat"], A, nb(A))
            timed("batch" + at, t["flat"], B, nb(B))
        if "flat" in t:
            timed("flat" + at, t["flat"], C, nb(C))
        if "count" in t:
            timed("count" + at, t["count"], C, nb(C))
        timed("lines" + at, t["batch"] if "batch" in t else t["flat"], lines, nb(lines))
        res["via_flat"] = "batch" not in t
    res["rss_before"] = rss0
    res["rss_after"] = rss()
    cache = t.get("cache")
    res["cache"] = cache() if cache else None
    return res


# ======================================================================= running


def run(spec: dict, python: str, timeout: float) -> dict:
    threads = spec["threads"]
    cpus = sorted(os.sched_getaffinity(0))[:threads]
    env = common.job_env(threads)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([python, os.path.abspath(__file__), "--job", json.dumps(spec)], stdout=out, stderr=err,
                             env=env, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            return {"error": "timeout after %.0f s" % timeout}
        out.seek(0)
        err.seek(0)
        lines = [x for x in out.read().decode().splitlines() if x.startswith("RESULT ")]
        if p.returncode or not lines:
            tail = (err.read().decode("utf-8", "replace").strip().splitlines() or ["exit %d" % p.returncode])[-1]
            return {"error": tail[:200]}
        return json.loads(lines[-1][7:])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--job"]:
        print("RESULT " + json.dumps(job(json.loads(argv[1]))), flush=True)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="en,multi,code,cjk")
    ap.add_argument("--mb", type=float, help="MB of each of the three texts per corpus (default 10; --quick 1)")
    ap.add_argument("--reps", type=int, help="repetitions (fresh processes), medians (default 3; --quick 1)")
    ap.add_argument("--tools", help="default: %s (with --tokenizer: %s; with a SentencePiece .model: %s)" % (
        ",".join(TOOLS), ",".join(PIPELINE_TOOLS), ",".join(SPM_TOOLS)))
    ap.add_argument("--tokenizer", help="a tokenizer.json or a SentencePiece .model: compare pipelines on it (HF "
                    "tokenizers, or for a .model the sentencepiece library, is the reference for ids) instead of "
                    "cl100k_base")
    ap.add_argument("--stages", default="single,long,batch")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the jobs (bytepair's build)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--label", help="a note on the bytepair build (e.g. the commit a wheel was built from)")
    ap.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    ap.add_argument("--plot", help="write a PNG here: MB/s per tool per corpus, at 1 and 2 threads")
    ap.add_argument("--baseline", help="a folder holding another build's bytepair package (a copy of python/bytepair "
                    "with its _core): measured in the same run as the tool bytepair-base")
    a = ap.parse_args(argv)
    PYTHON[0] = a.python
    a.mb = a.mb or (1.0 if a.quick else 10.0)
    a.reps = a.reps or (1 if a.quick else 3)
    t_start = time.time()
    corpora = [c for c in a.corpora.split(",") if c]
    spm_mode = bool(a.tokenizer) and is_sentencepiece(a.tokenizer)
    a.tools = a.tools or ",".join(SPM_TOOLS if spm_mode else PIPELINE_TOOLS if a.tokenizer else TOOLS)
    tools = [t for t in a.tools.split(",") if t]
    if a.baseline:
        if not os.path.isfile(os.path.join(a.baseline, "bytepair", "__init__.py")):
            # the folder is put first on sys.path: without a package inside, the jobs would import the other build
            ap.error(f"--baseline {a.baseline}: no bytepair package inside (give the folder that holds it)")
        os.environ["BYTEPAIR_BASELINE"] = os.path.abspath(a.baseline)
        tools.insert(tools.index("bytepair") + 1 if "bytepair" in tools else 0, "bytepair-base")
    stages = [s for s in a.stages.split(",") if s]
    vocab = os.path.abspath(a.tokenizer) if a.tokenizer else common.cl100k_path()
    ref_tool = "sentencepiece" if spm_mode else "hf" if a.tokenizer else "tiktoken"
    if spm_mode and any(t in tools for t in ("fastokens", "tokie", "hf")):
        sentencepiece_hf_json(vocab)  # written once, before the jobs
        for t in ("fastokens", "tokie", "hf"):
            LABEL[t] += " (tokenizer.json)"
    sizes = {}
    for c in corpora:
        A, B, C = texts_of(c, a.mb)
        sizes[c] = tuple(sum(len(d.encode("utf-8")) for d in x) for x in (A, B, C)) + (len(A),)
    times = defaultdict(list)  # (corpus, tool, row) -> [seconds]
    nbytes = {}
    ids = {}  # (corpus, tool, row) -> digests (first repetition)
    mem = defaultdict(list)  # (corpus, tool, stage@threads) -> [(rss growth, tool's own figure)]
    errors = {}
    plan = [(s, th) for s in stages for th in ((1, 2) if s == "batch" else (1,))]
    for rep in range(a.reps):
        order = tools[rep % len(tools):] + tools[:rep % len(tools)]
        for c in corpora:
            for tool in order:
                if tool == ref_tool and rep > 0:
                    continue  # the reference: ids once
                for stage, th in plan:
                    spec = {"tool": tool, "corpus": c, "stage": stage, "threads": th, "mb": a.mb, "vocab": vocab}
                    r = run(spec, a.python, a.timeout)
                    if "error" in r:
                        errors[(c, tool, stage, th)] = r["error"]
                        print("  %s %s %s@%d: %s" % (c, tool, stage, th, r["error"]), flush=True)
                        continue
                    for row, s in r["seconds"].items():
                        times[(c, tool, row)].append(s)
                        nbytes[(c, row)] = r["bytes"][row]
                        ids.setdefault((c, tool, row), r["ids"][row])
                    mem[(c, tool, "%s@%d" % (stage, th))].append((r["rss_after"] - r["rss_before"], r["cache"],
                                                                   r["rss_before"]))
                    print("  rep %d %-5s %-9s %s@%d: %s" % (rep + 1, c, tool, stage, th, ", ".join(
                        "%s %.1f MB/s" % (row, r["bytes"][row] / MB / s) for row, s in r["seconds"].items())),
                        flush=True)
    lines = report(a, argv, corpora, tools, sizes, times, nbytes, ids, mem, errors, t_start, ref_tool)
    print("\n".join(lines))
    name = os.path.basename(os.path.dirname(vocab)) if a.tokenizer else ""
    if spm_mode:
        name += "-" + os.path.basename(vocab)
    shown = os.path.relpath(vocab, common.ROOT) if a.tokenizer else "cl100k_base"
    page, memory = page_tables(argv, corpora, tools, times, nbytes, ids, mem, ref_tool, shown)
    if a.plot:
        plot(a.plot, corpora, tools, times, nbytes, shown)
        page += ["![Encoding with %s: MB/s per tool and corpus, 1 and 2 threads](%s)" % (
            shown, common.doc_link(a.plot)), ""]
        print("wrote %s" % a.plot)
    print("\n".join(page + memory))
    if not a.no_doc:
        common.update_doc("encode-" + (name or "cl100k"), page)
        common.update_doc("encode-" + (name or "cl100k") + "-memory", memory)
        print("wrote the encoding section of %s" % os.path.relpath(common.DOC, common.ROOT))
    return 0


# the two rows a user asks about: one document at a time, and a batch on two threads
PAGE_ROWS = [("steady", "1 thread"), ("batch@2", "2 threads")]


def _version(tool):
    if tool.startswith("bytepair"):
        return common.bytepair_version(PYTHON[0])
    return common.dist_version(DIST.get(tool, tool))


def _mbs(times, nbytes, c, tool, row):
    ts = times.get((c, tool, row))
    return nbytes[(c, row)] / MB / median(ts) if ts else None


def page_tables(argv, corpora, tools, times, nbytes, ids, mem, ref_tool, shown):
    """The page's tables: MB/s at 1 and 2 threads; and memory. Each says its run."""
    run = common.run_line(["benches/bench_frontier.py"] + argv)
    out = ["### Encoding speed with %s: MB of text per second" % shown, "",
           run + " 1 thread: one call per document (at most %d bytes), after warming on other documents, CPU "
           "time; 2 threads: one batch call on all documents, wall time. Cells: MB/s (bytepair's speed / the "
           "tool's); ids: identical to %s's on every document of both rows, or where they differ." % (
               DOC_BYTES, LABEL[ref_tool]), ""]
    rows = []
    for tool in tools:
        row = [LABEL[tool], _version(tool)]
        for c in corpora:
            for key, _ in PAGE_ROWS:
                if (c, key) not in nbytes:
                    row.append("-")
                    continue
                x, base = _mbs(times, nbytes, c, tool, key), _mbs(times, nbytes, c, "bytepair", key)
                row.append("-" if x is None else "%.1f" % x + (" (%.2fx)" % (base / x) if base else ""))
        if tool == ref_tool:
            row.append("the reference")
        else:
            bad = [(c, key) for c in corpora for key, _ in PAGE_ROWS
                   if (c, tool, key) in ids and (c, ref_tool, key) in ids and ids[(c, tool, key)] != ids[(c, ref_tool, key)]]
            seen = any((c, tool, key) in ids for c in corpora for key, _ in PAGE_ROWS)
            row.append("not checked" if not seen else "identical" if not bad else
                       "differ on " + ", ".join("%s %s" % (c, dict(PAGE_ROWS)[k]) for c, k in bad))
        rows.append(row)
    out += table(["tool", "version"] + ["%s, %s" % (c, label) for c in corpora for _, label in PAGE_ROWS] + ["ids"],
                 rows)
    out.append("")
    memory = ["### Memory while encoding with %s: resident set of the process, MB" % shown, "",
            run + " Loaded: after loading the tokenizer (the interpreter and numpy included); batch growth: "
            "what the 2-thread batch stage added (caches, the outputs Python holds).", ""]
    rows = []
    for tool in tools:
        row = [LABEL[tool], _version(tool)]
        for c in corpora:
            m = mem.get((c, tool, "batch@2"))
            row += ["%.0f" % (m[0][2] / MB), "%.0f" % (median([x[0] for x in m]) / MB)] if m else ["-", "-"]
        rows.append(row)
    memory += table(["tool", "version"] + ["%s, %s" % (c, what) for c in corpora for what in ("loaded", "batch growth")],
                    rows)
    memory.append("")
    return out, memory


def plot(path, corpora, tools, times, nbytes, shown):
    panels = []
    for key, label in PAGE_ROWS:
        series = {LABEL[t]: [_mbs(times, nbytes, c, t, key) if (c, key) in nbytes else None for c in corpora]
                  for t in tools}
        panels.append({"kind": "bars", "groups": corpora, "series": series, "ylabel": "MB/s (higher is better)",
                       "title": "%s, %s" % (shown, label)})
    common.plot(path, panels, "Encoding with %s" % shown)


def report(a, argv, corpora, tools, sizes, times, nbytes, ids, mem, errors, t_start, ref_tool="tiktoken"):
    lines = common.header(["benches/bench_frontier.py"] + argv, a.python, a.label)
    from importlib.metadata import PackageNotFoundError, version

    vs = []
    for t in tools:
        if t.startswith("bytepair"):
            continue
        try:
            vs.append("%s %s" % (DIST.get(t, t), version(DIST.get(t, t))))
        except PackageNotFoundError:
            vs.append("%s (not installed)" % DIST.get(t, t))
    lines.append("- frontier peers: " + ", ".join(vs))
    if a.tokenizer and ref_tool == "sentencepiece":
        lines.append("- tokenizer: %s, a SentencePiece model (ids checked against the sentencepiece library's "
                     "`SentencePieceProcessor(model_file=...).encode`); loaded from the .model by bytepair "
                     "(`Tokenizer.load`), gigatoken (`Tokenizer.from_sentencepiece`) and kitoken "
                     "(`Kitoken.from_sentencepiece_file`); fastokens, tokie and HF tokenizers read no .model and "
                     "get its Llama 2 `tokenizer.json` layout (transformers' LlamaConverter, \"legacy\": Prepend + "
                     "Replace normalizers; `scripts/get_tokenizers.py`'s `sentencepiece_json`), marked "
                     "\"(tokenizer.json)\"" % a.tokenizer)
        lines.append("- no BOS/EOS on any tool: sentencepiece's `encode` adds none by default; bytepair, fastokens, "
                     "tokie and HF are called with `add_special_tokens=False`; gigatoken's and kitoken's calls add "
                     "none. Control-token text in the input (`<s>`, `</s>`) is ordinary text to sentencepiece; "
                     "gigatoken matches it as the control token (its ids then differ)")
    elif a.tokenizer:
        lines.append("- tokenizer: %s (ids checked against HF tokenizers)" % a.tokenizer)
    lines.append("- times: CPU time of the job process for 1-thread rows, wall time for 2-thread rows")
    lines.append("- text: per corpus three disjoint texts A, B, C of %g MB in documents of at most %d bytes; "
                 "%d repetition(s) (fresh processes), medians; total run time %.0f s" % (
                     a.mb, DOC_BYTES, a.reps, time.time() - t_start))
    lines.append("- " + "; ".join("%s: %.2f + %.2f + %.2f MB, %d documents in A" % (
        (c,) + tuple(x / MB for x in sizes[c][:3]) + (sizes[c][3],)) for c in corpora))
    if errors:
        lines.append("- failed: " + "; ".join("%s %s %s@%d: %s" % (k + (v,)) for k, v in errors.items()))
    lines.append("")
    peers = [t for t in tools if t in PEERS]
    cols = [t for t in tools if t != ref_tool] + ([ref_tool] if ref_tool in tools else [])
    differ = defaultdict(list)  # tool -> [(corpus, row, documents differing, documents, first)]

    def same_ids(c, t, key):
        """None (no reference or no result), True or False."""
        ref, mine = ids.get((c, ref_tool, key)), ids.get((c, t, key))
        if t == ref_tool or ref is None or mine is None:
            return None
        if mine == ref:
            return True
        bad = [k for k, (x, y) in enumerate(zip(mine, ref)) if x != y]
        differ[t].append((c, key, len(bad) + abs(len(mine) - len(ref)), len(ref), bad[0] if bad else min(
            len(mine), len(ref))))
        return False

    giga_col = ref_tool == "sentencepiece" and "gigatoken" in cols and "bytepair" in cols
    if giga_col:
        lines.append("bytepair / gigatoken: the ratio to the one peer here that loads the same .model file (`*`: "
                     "gigatoken's ids differ on that row)")
        lines.append("")
    for c in corpora:
        lines.append("### %s: MB/s (ratio: bytepair / fastest peer whose ids are identical)" % c)
        lines.append("")
        rows = []
        for key, _stage, _th, desc in ROWS:
            if (c, key) not in nbytes:
                continue
            mbs = {}
            for t in cols:
                if t == ref_tool and key.startswith(("flat", "count")):
                    continue  # not a tiktoken call: the reference of the ids only
                ts = times.get((c, t, key))
                if ts:
                    mbs[t] = nbytes[(c, key)] / MB / median(ts)
            same = {t: same_ids(c, t, key) for t in cols}
            # a peer whose ids differ is not the yardstick: its speed is that of another tokenization
            fair = [p for p in peers if p in mbs and same[p] is not False]
            best = max((mbs[p], p) for p in fair) if fair else None
            row = [desc]
            for t in cols:
                cell = "%.1f" % mbs[t] if t in mbs else "-"
                if same[t] is False:
                    bad = differ[t][-1]
                    cell += " (ids differ: %d/%d)" % (bad[2], bad[3])
                row.append(cell)
            row.append("%.2fx (%s)" % (mbs["bytepair"] / best[0], LABEL[best[1]])
                       if best and "bytepair" in mbs else "-")
            if "bytepair-base" in cols:
                row.append("%.2fx" % (mbs["bytepair-base"] / best[0]) if best and "bytepair-base" in mbs else "-")
            if giga_col:  # the goal's yardstick on a .model: the peer that loads the same file
                row.append("%.2fx" % (mbs["bytepair"] / mbs["gigatoken"]) + ("*" if same["gigatoken"] is False else "")
                           if "bytepair" in mbs and "gigatoken" in mbs else "-")
            rows.append(row)
        base_col = ["baseline / fastest peer"] if "bytepair-base" in cols else []
        base_col += ["bytepair / gigatoken"] if giga_col else []
        lines += table(["workload"] + [LABEL[t] for t in cols] + ["bytepair / fastest peer"] + base_col, rows)
        lines.append("")
        b1, b2 = times.get((c, "bytepair", "batch@1")), times.get((c, "bytepair", "batch@2"))
        scal = []
        for t in cols:
            for what in ("batch", "lines"):
                x1, x2 = times.get((c, t, what + "@1")), times.get((c, t, what + "@2"))
                if x1 and x2:
                    scal.append("%s %s %.2fx" % (LABEL[t], what, median(x1) / median(x2)))
        if scal and b1 and b2:
            lines.append("2 threads / 1 thread (goal >= 1.8x): " + "; ".join(scal))
            lines.append("")
    # ids
    lines.append("### Ids against %s" % LABEL[ref_tool])
    lines.append("")
    for t in cols:
        if t == ref_tool:
            continue
        checked = [(c, key) for c in corpora for key, *_ in ROWS if (c, t, key) in ids and (c, ref_tool, key) in ids]
        if not checked:
            lines.append("- %s: not checked (no result)" % LABEL[t])
        elif not differ[t]:
            lines.append("- %s: identical on every row of %s" % (LABEL[t], ", ".join(
                c for c in corpora if any(x[0] == c for x in checked))))
        else:
            bad_c = sorted({x[0] for x in differ[t]}, key=corpora.index)
            good_c = [c for c in corpora if c not in bad_c and any(x[0] == c for x in checked)]
            lines.append("- %s: ids differ on %s%s (rows: documents differing / documents, first differing "
                         "document; 1/1 is the one long call or count)" % (
                             LABEL[t], ", ".join(bad_c), "; identical on " + ", ".join(good_c) if good_c else ""))
            for c in bad_c:
                rows_c = [x for x in differ[t] if x[0] == c]
                lines.append("  - %s: %s; identical on %d other row(s)" % (c, ", ".join(
                    "%s %d/%d" % (key, n, m) + (" (#%d)" % first if m > 1 else "") for _, key, n, m, first in rows_c),
                    sum(1 for x in checked if x[0] == c) - len(rows_c)))
    lines.append("")
    # cache memory
    lines.append("### Cache memory (MB): resident memory growth over the stage / the tool's own figure")
    lines.append("")
    stages = sorted({k[2] for k in mem})
    rows = []
    for t in cols:
        for st in stages:
            cells = []
            for c in corpora:
                m = mem.get((c, t, st))
                if not m:
                    cells.append("-")
                    continue
                grow = median([x[0] for x in m]) / MB
                own = m[0][1]
                cells.append("%.1f" % grow + (" / %.1f" % (own / MB) if isinstance(own, (int, float)) else ""))
            rows.append([LABEL[t], st] + cells)
    lines += table(["tool", "stage@threads"] + corpora, rows)
    lines.append("")
    lines.append("Growth includes the outputs Python still holds and allocator slack; bytepair's own figure is its "
                 "per-thread piece caches and word maps (`_core.cache_info()[1]` and `[5]`, bounded by `set_cache_bytes`), toktok-rs's "
                 "`memory_bytes()` (its whole tokenizer), fastokens' segment cache (off unless enabled); "
                 "gigatoken, kitoken and tokie report no figure (tokie keeps per-worker caches, sized by "
                 "`TOKIE_CACHE_BITS`), so only their growth shows what they cache.")
    lines.append("")
    return lines


if __name__ == "__main__":
    sys.exit(main())
