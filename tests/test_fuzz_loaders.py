"""Hostile model files: every loader, fed mutated versions of valid files
(truncation, bit flips, inserted and deleted bytes), either loads or raises a
``BytepairError`` (FormatError/InputError); never another exception.

The number of inputs per format is FUZZ_EXAMPLES (default 200); the test
summary says how many each loader got. The structure-aware mutations are in
test_fuzz_structural.py."""

from __future__ import annotations

import os
import pathlib
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer
from bytepair.counts import load_counts, save_counts

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "200"))
TEXT = "the cat sat on the mat, the dog sat on the log. naïve café 🙂 <|endoftext|>\n" * 3


def _valid_files(root: pathlib.Path):
    byte = Tokenizer.train(TEXT, vocab_size=300, special_tokens=["<|endoftext|>"])
    char = Tokenizer.train(TEXT, model="char", num_merges=20, end_of_word_fused=True)
    files = {}
    byte.save(str(root / "native.json"))
    files["bytepair"] = root / "native.json"
    byte.save(str(root / "tok.tiktoken"), format="tiktoken")
    files["tiktoken"] = root / "tok.tiktoken"
    byte.save(str(root / "tokenizer.json"), format="hf")
    files["hf"] = root / "tokenizer.json"
    char.save(str(root / "codes.txt"), format="subword-nmt")
    files["subword-nmt"] = root / "codes.txt"
    byte.save(str(root / "gpt2"), format="gpt2")
    files["gpt2-vocab"] = root / "gpt2" / "vocab.json"
    files["gpt2-merges"] = root / "gpt2" / "merges.txt"
    counts = bytepair._core.WordCounts(None, [])
    counts.add_documents([TEXT])
    save_counts(str(root / "c.counts"), counts, None)
    files["counts"] = root / "c.counts"
    return files


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    root = tmp_path_factory.mktemp("valid")
    return {name: path.read_bytes() for name, path in _valid_files(root).items()}


mutation = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)), min_size=1, max_size=8)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.binary(min_size=1, max_size=12)),
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 40)),
    st.tuples(st.just("replace"), st.floats(0, 1), st.sampled_from([b"-1", b"99999999999", b"null", b"[]", b"{}", b'"x"', b"\xff", b"\x00", b"1e400", b"[[[[[[[[", b"0"])),
)


def mutate(data: bytes, m) -> bytes:
    kind = m[0]
    at = lambda f: min(int(f * len(data)), max(len(data) - 1, 0))  # noqa: E731
    if kind == "truncate":
        return data[: at(m[1])]
    if kind == "flip":
        out = bytearray(data)
        for f, bit in m[1]:
            if out:
                out[at(f)] ^= 1 << bit
        return bytes(out)
    if kind == "insert":
        i = at(m[1])
        return data[:i] + m[2] + data[i:]
    if kind == "delete":
        i = at(m[1])
        return data[:i] + data[i + m[2]:]
    i = at(m[1])
    return data[:i] + m[2] + data[i + len(m[2]):]


def load(name: str, folder: pathlib.Path, data: bytes):
    if name.startswith("gpt2"):
        target = folder / "gpt2"
        target.mkdir(exist_ok=True)
        valid = _VALID[name.replace("vocab", "merges") if name.endswith("vocab") else name.replace("merges", "vocab")]
        (target / ("vocab.json" if name.endswith("vocab") else "merges.txt")).write_bytes(data)
        (target / ("merges.txt" if name.endswith("vocab") else "vocab.json")).write_bytes(valid)
        return Tokenizer.load(str(target), format="gpt2")
    path = folder / {"bytepair": "x.json", "tiktoken": "x.tiktoken", "hf": "tokenizer.json",
                     "subword-nmt": "codes.txt", "counts": "x.counts"}[name]
    path.write_bytes(data)
    if name == "counts":
        return load_counts(str(path))
    return Tokenizer.load(str(path), format=name)


_VALID: dict = {}


@pytest.mark.parametrize("name", ["bytepair", "tiktoken", "hf", "subword-nmt", "gpt2-vocab", "gpt2-merges", "counts"])
def test_mutated_files_load_or_fail_cleanly(name, valid, tmp_path_factory, record_property):
    _VALID.update(valid)
    folder = tmp_path_factory.mktemp(name)
    ran = []

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(m=mutation)
    def check(m):
        ran.append(1)
        data = mutate(valid[name], m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tok = load(name, folder, data)
                # what loads is usable (a vocabulary may lack a byte: that is an EncodeError)
                if isinstance(tok, Tokenizer):
                    tok.decode(tok.encode_ordinary("the cat"))
            except bytepair.BytepairError:
                return

    check()
    # the summary adds these up per loader (tests/conftest.py)
    record_property("fuzz_inputs", {name.split("-")[0] if name.startswith("gpt2") else name: len(ran)})
