"""One benchmark job, run in a fresh process by the bench scripts:

    python benches/jobs.py '{"kind": "train", "tool": "rustbpe", ...}'

so that its wall time and peak RSS are that job's alone (the parent measures
both with ``os.wait4``). The last line printed is ``RESULT {json}``.

Kinds:
- ``train``: read the input file, train with ``tool``, write the result to
  ``out`` (whole process: read, pre-tokenize, count, merge, write).
- ``bpt``: load a trained tokenizer from ``out`` and count the tokens of the
  held-out file (bytes per token).
- ``merges``: compare bytepair's merges (a saved tokenizer) with rustbpe's
  ranks (a tiktoken file).
- ``encode``: load cl100k_base in ``tool`` and time the encoding of a text
  (worst cases; the ordinary encode benchmark runs in-process).

Every tool's import is inside its branch: a peer that is not installed fails
only its own jobs.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import CL100K, CL100K_HF  # noqa: E402


def read_lines(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines(keepends=True)


def write_tiktoken(ranks, path):
    """{bytes: rank} as a .tiktoken file (base64 token, space, rank)."""
    with open(path, "wb") as fh:
        for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
            fh.write(base64.b64encode(tok) + b" " + str(rank).encode() + b"\n")


def read_tiktoken(path):
    out = {}
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                tok, rank = line.split()
                out[base64.b64decode(tok)] = int(rank)
    return out


# ------------------------------------------------------------------ training


def train(spec):
    tool, path, out, vocab, threads = spec["tool"], spec["input"], spec["out"], spec["vocab"], spec["threads"]
    pattern = spec.get("pattern", CL100K)
    info = {}
    if tool.startswith("bytepair"):
        import pathlib

        import bytepair

        # the file route (the same lines, read and cut by bytepair's core) where the build has it
        if hasattr(bytepair._core.WordCounts, "add_lines") and not spec.get("lines"):
            corpus = pathlib.Path(path)
            info["route"] = "path"
        else:
            corpus = read_lines(path)
            info["route"] = "lines"
        if tool == "bytepair-serial":  # the merge loop on one thread (counting stays parallel)
            bytepair._core._set_parallel_merge(2**62, 1)
        if tool == "bytepair-char":
            tok = bytepair.Tokenizer.train(corpus, model="char", vocab_size=vocab)
        else:
            tie = {"bytepair": "pair-id", "bytepair-first": "first", "bytepair-serial": "pair-id"}[tool]
            tok = bytepair.Tokenizer.train(corpus, vocab_size=vocab, pattern=pattern, tie_break=tie)
        tok.save(out)
        info["vocab"] = tok.n_vocab
    elif tool == "rustbpe":
        import rustbpe

        lines = read_lines(path)
        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter(lines), vocab, pattern=pattern)
        ranks = dict(tok.get_mergeable_ranks())
        write_tiktoken(ranks, out)
        info["vocab"] = len(ranks)
    elif tool == "bpeasy":
        import bpeasy

        lines = read_lines(path)
        ranks = bpeasy.train_bpe(iter(lines), pattern, 128, vocab)
        write_tiktoken(ranks, out)
        info["vocab"] = len(ranks)
    elif tool == "hf":
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(CL100K_HF if pattern == CL100K else pattern), behavior="isolated"),
             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=0, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        if spec.get("lines"):
            lines = read_lines(path)
            tok.train_from_iterator(lines, trainer, length=len(lines))
        else:  # HF's own file route (lines read in Rust, in parallel), as bytepair gets its own
            tok.train([path], trainer)
        tok.save(out)
        info["vocab"] = tok.get_vocab_size()
    elif tool == "sentencepiece":
        import sentencepiece as spm

        # BPE on the raw file; byte_fallback so that it is lossless like the byte-level tools
        spm.SentencePieceTrainer.train(
            input=path, model_prefix=out, vocab_size=vocab, model_type="bpe", num_threads=threads,
            byte_fallback=True, input_sentence_size=0, hard_vocab_limit=False, minloglevel=2)
        import sentencepiece

        info["vocab"] = sentencepiece.SentencePieceProcessor(model_file=out + ".model").get_piece_size()
        info["version"] = sentencepiece.__version__  # the one this job ran (the tables name it)
    elif tool == "youtokentome":
        import youtokentome as yttm

        bpe = yttm.BPE.train(data=path, model=out, vocab_size=vocab, n_threads=threads)
        info["vocab"] = bpe.vocab_size()
    elif tool == "flashbpe":  # rustbpe's interface: lines, the cl100k regex, mergeable ranks
        import flashbpe

        tok = flashbpe.Tokenizer()
        tok.train_from_iterator(iter(read_lines(path)), vocab, pattern=pattern)
        ranks = dict(tok.get_mergeable_ranks())
        write_tiktoken(ranks, out)
        info["vocab"] = len(ranks)
    elif tool == "fast-bpe-rs":  # lines and the cl100k regex; the model is not written (no file format)
        import fast_bpe_rs

        fast_bpe_rs.BPE(pattern).train(vocab, read_lines(path))
        info["vocab"] = vocab
    elif tool == "ffbpe":  # lines, its own default pre-tokenizer
        import ffbpe

        model = ffbpe.train_bpe(iter(read_lines(path)), vocab_size=vocab)
        info["vocab"] = len(model.vocab)
    elif tool == "gigatoken":  # gigatoken.train_bpe on the file's path, its own pre-tokenizer
        import gigatoken

        vocab_table, _ = gigatoken.train_bpe(path, vocab, [])
        info["vocab"] = len(vocab_table)
    else:
        raise SystemExit(f"unknown tool {tool}")
    return info


# ------------------------------------------------------------------ compression


def count_tokens(tool, out, lines, pattern=CL100K):
    if tool.startswith("bytepair"):
        import bytepair

        tok = bytepair.Tokenizer.load(out)
        if tool == "bytepair-char":  # tokenize keeps characters never seen in training as pieces
            return sum(len(tok.tokenize(t)) for t in lines)
        return sum(len(ids) for ids in tok.encode_ordinary_batch(lines))
    if tool in ("rustbpe", "bpeasy", "flashbpe"):
        import tiktoken

        enc = tiktoken.Encoding(tool, pat_str=pattern, mergeable_ranks=read_tiktoken(out), special_tokens={})
        return sum(len(ids) for ids in enc.encode_ordinary_batch(lines, num_threads=2))
    if tool == "hf":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(out)
        return sum(len(e.ids) for e in tok.encode_batch(lines, add_special_tokens=False))
    if tool == "sentencepiece":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=out + ".model")
        return sum(len(ids) for ids in sp.encode([t.rstrip("\n") for t in lines]))
    if tool == "youtokentome":
        import youtokentome as yttm

        bpe = yttm.BPE(model=out)
        return sum(len(ids) for ids in bpe.encode([t.rstrip("\n") for t in lines], output_type=yttm.OutputType.ID))
    raise SystemExit(f"unknown tool {tool}")


def bpt(spec):
    lines = read_lines(spec["heldout"])
    n_bytes = sum(len(t.encode("utf-8")) for t in lines)
    n_tok = count_tokens(spec["tool"], spec["out"], lines, spec.get("pattern", CL100K))
    return {"bytes": n_bytes, "tokens": n_tok, "bytes_per_token": n_bytes / max(n_tok, 1)}


# ------------------------------------------------------------------ exactness


def merges(spec):
    """bytepair's merged tokens, in order, against rustbpe's tokens by rank."""
    import bytepair

    ours = [left + right for left, right in bytepair.Tokenizer.load(spec["bytepair"]).merges]
    ranks = read_tiktoken(spec["rustbpe"])
    theirs = [tok for tok, r in sorted(ranks.items(), key=lambda kv: kv[1]) if r >= 256]
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
    if first is None and len(ours) != len(theirs):
        first = min(len(ours), len(theirs))
    res = {"equal": first is None, "n_bytepair": len(ours), "n_rustbpe": len(theirs)}
    if first is not None:
        res["first_difference"] = first + 1
        res["bytepair"] = repr(ours[first]) if first < len(ours) else None
        res["rustbpe"] = repr(theirs[first]) if first < len(theirs) else None
    return res


# ------------------------------------------------------------------ encoding


def load_encoder(tool, vocab_path):
    """A function text -> ids for cl100k_base in tool."""
    if tool == "bytepair":
        import bytepair

        from common import load_bytepair_cl100k

        return load_bytepair_cl100k(bytepair, vocab_path).encode_ordinary
    if tool == "tiktoken":
        from common import load_tiktoken_cl100k

        return load_tiktoken_cl100k(vocab_path).encode_ordinary
    if tool == "bpe-openai":
        import bpe_openai

        # the raw binding: the Encoding wrapper refuses texts of 1,000,000 characters or more
        backend = bpe_openai.get_encoding("cl100k_base")._backend
        return lambda t: list(backend.encode(t))
    if tool == "hf":
        from common import load_hf_cl100k

        tok = load_hf_cl100k(vocab_path)
        return lambda t: tok.encode(t, add_special_tokens=False).ids
    raise SystemExit(f"unknown tool {tool}")


def encode(spec):
    from common import worst_case_text

    enc = load_encoder(spec["tool"], spec["vocab_path"])
    text = worst_case_text(spec["case"], spec["n"], spec.get("ordinary"))
    t0 = time.perf_counter()
    ids = enc(text)
    dt = time.perf_counter() - t0
    return {"seconds": dt, "tokens": len(ids), "bytes": len(text.encode("utf-8"))}


def train_text(spec):
    """Training on one synthetic text (a worst case), timed inside the process."""
    from common import worst_case_text

    text = worst_case_text(spec["case"], spec["n"], spec.get("ordinary"))
    tool, vocab = spec["tool"], spec["vocab"]
    t0 = time.perf_counter()
    if tool.startswith("bytepair"):
        import warnings

        import bytepair

        tie = {"bytepair": "pair-id", "bytepair-first": "first"}[tool]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tok = bytepair.Tokenizer.train([text], vocab_size=vocab, pattern=CL100K, tie_break=tie)
        n = tok.n_vocab
    elif tool == "rustbpe":
        import rustbpe

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter([text]), vocab, pattern=CL100K)
        n = len(tok.get_mergeable_ranks())
    else:
        raise SystemExit(f"unknown tool {tool}")
    return {"seconds": time.perf_counter() - t0, "vocab": n, "bytes": len(text.encode("utf-8"))}


KINDS = {"train": train, "bpt": bpt, "merges": merges, "encode": encode, "train_text": train_text}

if __name__ == "__main__":
    spec = json.loads(sys.argv[1])
    t0 = time.perf_counter()
    result = KINDS[spec["kind"]](spec)
    result["inner_seconds"] = time.perf_counter() - t0
    print("RESULT " + json.dumps(result), flush=True)
