#!/usr/bin/env python3
"""Coverage-guided fuzzing (atheris, libFuzzer) of the loaders issue 12's
pipeline work added: Hugging Face ``tokenizer.json`` pipelines (normalizers,
Metaspace, byte fallback, precompiled charsmaps, Split regexes), SentencePiece
``.model`` files (protobuf, then their pipeline description) and Mistral's
``tekken.json``.

    python fuzz/fuzz_pipelines.py VARIANT [libFuzzer options] [CORPUS_DIR ...]

VARIANT is one of ``VARIANTS`` or ``all`` (then the first byte of an input
picks the variant and the rest is the file). Every input becomes that file
and goes through :func:`check`: it loads and is usable (a sample encodes,
decodes, counts, and ``count`` equals the number of ids), or a
``BytepairError`` names the file on its first line. Anything else (another
exception, a failed check, a Rust panic, over ``-rss_limit_mb`` of memory,
an input running over ``-timeout`` seconds) is a crash: libFuzzer prints it
and saves the input as ``crash-<sha1>``.

Small valid files seed the corpus (built here: a SentencePiece BPE model
trained by ``sentencepiece`` with byte fallback and a small custom charsmap,
its two ``transformers`` layouts, a byte-level pipeline with NFC and a Split
regex, a tekken.json); a dictionary of hostile values guides the mutations.
Unless given, ``-rss_limit_mb=2048`` and ``-timeout=60`` apply. libFuzzer
ends with "Done N runs". With BYTEPAIR_FUZZ_COUNTS=path the inputs per
variant are written there (JSON) as the run goes.

    python fuzz/fuzz_pipelines.py all -runs=100000
    python fuzz/fuzz_pipelines.py sentencepiece -max_total_time=600 /tmp/corpus
    python fuzz/fuzz_pipelines.py all crash-<sha1>    # replay an input
"""

from __future__ import annotations

import base64
import collections
import importlib.util
import io
import json
import os
import pathlib
import sys
import tempfile
import warnings
from typing import Any, Dict

import atheris

ROOT = pathlib.Path(__file__).resolve().parents[1]

with atheris.instrument_imports(include=["bytepair"]):
    import bytepair  # noqa: F401
    import bytepair.formats.hf  # noqa: F401
    import bytepair.formats.sentencepiece  # noqa: F401
    import bytepair.formats.tekken  # noqa: F401
    import bytepair.pipeline  # noqa: F401

from bytepair import BytepairError, Tokenizer  # noqa: E402
from bytepair.formats.sentencepiece import read_model, to_hf_json  # noqa: E402
from bytepair.spec import PipelineSpec  # noqa: E402

VARIANTS = ["hf-pipeline", "hf-metaspace", "hf-legacy", "sentencepiece", "tekken"]
FILE_NAME = {"hf-pipeline": "tokenizer.json", "hf-metaspace": "tokenizer.json", "hf-legacy": "tokenizer.json",
             "sentencepiece": "tokenizer.model", "tekken": "tekken.json"}
SAMPLE = "the cat sat on the mat, naïve café 🙂 Ａ① <s> x\u00a0y\n\tz 12345  "
HOSTILE = [b'"\\ud800"', b"4294967295", b"1e400", b"NaN", b"null", b"[[[[[[[[", b'{"type": "Sequence", ',
           b'"normalizers": [', b'"pretokenizers": [', b'"Regex"', b'"String"', b'"Precompiled"',
           b'"precompiled_charsmap"', b'"Metaspace"', b'"prepend_scheme"', b'"first"', b'"ByteFallback"',
           b'"byte_fallback"', b'"<0x00>"', b'"Split"', b'"behavior"', b'"Isolated"', b'"Replace"', b'"NFKC"',
           b'"Strip"', b'"Fuse"', b'"TemplateProcessing"', b'"added_tokens"', b'"special": true',
           b'"default_num_special_tokens"', b'"default_vocab_size"', b'"token_bytes"', b'"rank"',
           b"(a+)+$", b"(?=a)", b"(?!\\\\S)", b"\\\\p{L}", "▁".encode(), b"\x0a\xff\xff\xff\xff\x0f", b"\x12\x00",
           b"\x1a\x00", b"\x08\x02", b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"]
COUNTS: collections.Counter = collections.Counter()


def _get_tokenizers() -> Any:
    spec = importlib.util.spec_from_file_location("get_tokenizers", ROOT / "scripts" / "get_tokenizers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def build_seeds(work: pathlib.Path) -> Dict[str, bytes]:
    """variant -> a small valid file."""
    import sentencepiece as spm

    rules = work / "rules.tsv"
    rules.write_text("41\t61\n42\t62\nFF21\t41\n2460\t31\n")
    model = io.BytesIO()
    text = ["hello world the cat sat on the mat Ａ ① naïve café 🙂 12345"] * 200
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text), model_writer=model, vocab_size=300,
                                   model_type="bpe", byte_fallback=True, normalization_rule_tsv=str(rules),
                                   character_coverage=1.0, minloglevel=2)
    sp_path = work / "tiny.model"
    sp_path.write_bytes(model.getvalue())
    gt = _get_tokenizers()
    seeds = {"sentencepiece": model.getvalue()}
    seeds["hf-legacy"] = json.dumps(gt.sentencepiece_json(str(sp_path), "legacy"), ensure_ascii=False).encode()
    seeds["hf-metaspace"] = json.dumps(gt.sentencepiece_json(str(sp_path), "metaspace"), ensure_ascii=False).encode()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = Tokenizer.train(" ".join(text[:20]), vocab_size=300)
    tok.save(str(work / "byte.json"), format="hf")
    d = json.loads((work / "byte.json").read_text())
    d["normalizer"] = {"type": "NFC"}
    d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\s+(?!\S)|\s+|\p{L}+|\p{N}{1,3}|[^\s\p{L}\p{N}]+"},
         "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    seeds["hf-pipeline"] = json.dumps(d, ensure_ascii=False).encode()
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None} for i in range(256)]
    for k, w in enumerate([b"th", b"the", b" c", b"at", b" the"]):
        vocab.append({"rank": 256 + k, "token_bytes": base64.b64encode(w).decode(), "token_str": None})
    specials = [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(["<unk>", "<s>", "</s>"])]
    seeds["tekken"] = json.dumps({"config": {"pattern": r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+",
                                             "default_vocab_size": 271, "default_num_special_tokens": 10,
                                             "version": "v7"},
                                  "vocab": vocab, "special_tokens": specials}).encode()
    return seeds


def load(variant: str, path: str) -> Any:
    if variant == "sentencepiece":
        sp = read_model(path)
        return Tokenizer(PipelineSpec(to_hf_json(sp), path))
    return Tokenizer.load(path, format="tekken" if variant == "tekken" else "hf")


def use(tok: Any) -> None:
    """What loads must be usable."""
    try:
        ids = tok.encode(SAMPLE)
    except BytepairError:  # e.g. a character without a token and no fallback
        return
    assert all(isinstance(i, int) and 0 <= i < tok.n_vocab for i in ids), ids[:20]
    tok.decode(ids)
    ordinary = tok.encode_ordinary(SAMPLE)
    assert tok.count(SAMPLE) == len(ordinary)
    assert tok.encode_batch([SAMPLE, SAMPLE[:7]]) == [tok.encode(SAMPLE), tok.encode(SAMPLE[:7])]


def check(variant: str, folder: pathlib.Path, data: bytes) -> str:
    """One input: 'loaded' (and used) or 'rejected' (a BytepairError naming
    the file on its first line); anything else propagates."""
    COUNTS[variant] += 1
    path = folder / FILE_NAME[variant]
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tok = load(variant, str(path))
        except BytepairError as e:
            first = str(e).split("\n", 1)[0]
            assert str(path) in first, f"{type(e).__name__} does not name the file: {str(e)[:500]}"
            return "rejected"
        use(tok)
    return "loaded"


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in [*VARIANTS, "all"]:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join([*VARIANTS, 'all'])}}} [libFuzzer options] [corpus dir ...]")
    variant = sys.argv[1]
    variants = VARIANTS if variant == "all" else [variant]
    flags = [a for a in sys.argv[2:] if a.startswith("-")]
    corpora = [a for a in sys.argv[2:] if not a.startswith("-")]
    work = pathlib.Path(tempfile.mkdtemp(prefix="bytepair-fuzz-pipelines-"))
    seeds = build_seeds(work)
    if not corpora:
        corpora = [str(work / "corpus")]
    for corpus in corpora:
        if os.path.isfile(corpus):  # inputs to run once each (libFuzzer's replay of crash files)
            continue
        os.makedirs(corpus, exist_ok=True)
        if not os.listdir(corpus):
            for k, v in enumerate(variants):
                (pathlib.Path(corpus) / f"seed-{v}").write_bytes(bytes([k]) + seeds[v] if variant == "all" else seeds[v])
    (work / "hostile.dict").write_text("".join('"' + "".join("\\x%02x" % b for b in w) + '"\n' for w in HOSTILE))
    defaults = {"-rss_limit_mb": "2048", "-timeout": "60", "-dict": str(work / "hostile.dict")}
    flags += [f"{k}={v}" for k, v in defaults.items() if not any(f.startswith(k + "=") for f in flags)]
    counts_path = os.environ.get("BYTEPAIR_FUZZ_COUNTS")
    folder = work / "inputs"
    folder.mkdir()

    def test_one(data: bytes) -> None:
        v = variant
        if variant == "all":
            if not data:
                return
            v, data = variants[data[0] % len(variants)], data[1:]
        check(v, folder, data)
        if counts_path:
            with open(counts_path, "w") as f:
                json.dump(dict(COUNTS), f)

    atheris.Setup([sys.argv[0], *flags, *corpora], test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
