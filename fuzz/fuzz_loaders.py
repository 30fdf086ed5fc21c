#!/usr/bin/env python3
"""Coverage-guided fuzzing of bytepair's loaders with atheris (libFuzzer).

    python fuzz/fuzz_loaders.py VARIANT [libFuzzer options] [CORPUS_DIR ...]

VARIANT is a key of ``LOADER`` in tests/test_fuzz_structural.py (bytepair,
bytepair-char, bytepair-ranks, hf, hf-char, tiktoken, gpt2-vocab,
gpt2-merges, subword-nmt, counts, gguf), or ``all``: then the first byte of an
input picks the variant and the rest is the file. Every input becomes that
file (the other GPT-2 file stays valid) and goes through the check the
hypothesis fuzzers use: it loads and is usable, or a ``BytepairError``
names the file. Anything else (another exception, a failed check) is a
crash: libFuzzer prints it and saves the input as ``crash-<sha1>``.

The valid files seed the corpus (an empty or missing CORPUS_DIR gets them)
and a dictionary of hostile values guides the mutations. Unless given,
``-rss_limit_mb=2048`` and ``-timeout=60`` apply. libFuzzer ends with
"Done N runs": the number of inputs tried. With BYTEPAIR_FUZZ_COUNTS=path,
the inputs per loader are also written there (JSON) as the run goes.

    python fuzz/fuzz_loaders.py tiktoken -runs=100000
    python fuzz/fuzz_loaders.py all -max_total_time=600 /tmp/corpus
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
import warnings

import atheris

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

with atheris.instrument_imports(include=["bytepair"]):
    import bytepair  # noqa: F401
    import bytepair.counts  # noqa: F401
    import bytepair.formats.gguf  # noqa: F401
    import bytepair.formats.gpt2  # noqa: F401
    import bytepair.formats.hf  # noqa: F401
    import bytepair.formats.native  # noqa: F401
    import bytepair.formats.subword_nmt  # noqa: F401
    import bytepair.formats.tiktoken  # noqa: F401

import test_fuzz_structural as T  # noqa: E402

HOSTILE = [b'"\\ud800"', b'"\\udfff"', b"4294967294", b"4294967295", b"1000000000", b"18446744073709551615",
           b"1e400", b"NaN", b"null", b"[[[[[[[[", b'{"": ', b'"merges"', b'"merge_ids"', b'"tokens_base64"',
           b'"special_tokens"', b'"added_tokens"', b'"base"', b'"end_of_word"', b'"pattern"', b'"vocab"',
           b'"pre_tokenizer"', b'"ByteLevel"', b'"Split"', b"#version: 0.2", b"</w>", "Ġ".encode(), b"=", b"\t",
           b"\\t", b"\\\\", b"\x00", b"\xff", b"(a+)+$", b'"<|endoftext|>"']


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in [*T.LOADER, "all"]:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join([*T.LOADER, 'all'])}}} [libFuzzer options] [corpus dir ...]")
    variant = sys.argv[1]
    variants = list(T.LOADER) if variant == "all" else [variant]
    flags = [a for a in sys.argv[2:] if a.startswith("-")]
    corpora = [a for a in sys.argv[2:] if not a.startswith("-")]
    work = pathlib.Path(tempfile.mkdtemp(prefix="bytepair-fuzz-"))
    (work / "valid").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        valid = T.build_valid(work / "valid")
    if not corpora:
        corpora = [str(work / "corpus")]
    for corpus in corpora:
        if os.path.isfile(corpus):  # inputs to run once each (libFuzzer's replay of crash files)
            continue
        os.makedirs(corpus, exist_ok=True)
        if not os.listdir(corpus):
            for k, v in enumerate(variants):
                seed = valid[v][T.FILE_NAME[v]]
                (pathlib.Path(corpus) / f"seed-{v}").write_bytes(bytes([k]) + seed if variant == "all" else seed)
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
        T.check(v, folder, {**valid[v], T.FILE_NAME[v]: data})
        if counts_path:
            with open(counts_path, "w") as f:
                json.dump(dict(T.COUNTS), f)

    atheris.Setup([sys.argv[0], *flags, *corpora], test_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
