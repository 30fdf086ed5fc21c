"""A ``tokenizer.json`` whose ids have holes (GPT-NeoX's, MPT's and Command-R's vocabularies have ids with
no token): Hugging Face decodes such an id to nothing, and so does bytepair, on the byte model's route and on
the pipeline's. An id at or above the vocabulary's size still raises (docs/decisions.md)."""

from __future__ import annotations

import base64

import numpy as np
import pytest
import tokenizers
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors

from bytepair import Tokenizer, UnknownTokenError


def holed_tokenizer(route: str) -> tokenizers.Tokenizer:
    """A byte-level BPE with ids 258-299 unassigned, a special token, and on the pipeline route a
    normalizer and a template that the byte model cannot run."""
    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    vocab.update({"ab": 300, "abc": 301, "Ġab": 302})
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=[("a", "b"), ("ab", "c"), ("Ġ", "ab")]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|end|>"])
    if route == "pipeline":
        tok.normalizer = normalizers.NFC()
        tok.post_processor = processors.TemplateProcessing(single="$A <|end|>", special_tokens=[("<|end|>", 303)])
    return tok


@pytest.mark.parametrize("route", ["byte", "pipeline"])
def test_holes_decode_to_nothing_as_in_hf(tmp_path, route):
    hf = holed_tokenizer(route)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = Tokenizer.load(str(path))
    assert (tok.model == "pipeline") is (route == "pipeline")
    holes = [i for i in range(tok.n_vocab) if hf.id_to_token(i) is None]
    assert holes, "the case has holes"
    text = "abc ab<|end|>"
    ids = hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, add_special_tokens=False) == ids
    cases = [[holes[0]], ids[:1] + holes[:3] + ids[1:], holes + ids, []]
    for case in cases:
        for skip in (False, True):
            expected = hf.decode(case, skip_special_tokens=skip)
            assert tok.decode(case, skip_special_tokens=skip) == expected
            assert tok.decode(np.array(case, dtype=np.int64), skip_special_tokens=skip) == expected
            assert tok.decode_bytes(case, skip_special_tokens=skip) == expected.encode()


@pytest.mark.parametrize("route", ["byte", "pipeline"])
def test_an_id_beyond_the_vocabulary_still_raises(tmp_path, route):
    """HF gives '' for an id past the last token too; that id cannot come from this tokenizer, so bytepair
    says so instead of dropping it."""
    hf = holed_tokenizer(route)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = Tokenizer.load(str(path))
    assert hf.decode([tok.n_vocab + 5]) == ""
    with pytest.raises(UnknownTokenError, match=str(tok.n_vocab + 5)):
        tok.decode([97, tok.n_vocab + 5])


def test_a_tiktoken_file_keeps_raising_for_a_hole(tmp_path):
    """tiktoken raises KeyError for an id with no token; a tiktoken-format file keeps that owner's rule."""
    import tiktoken

    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"ab"] = 300
    enc = tiktoken.Encoding("holed", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={})
    with pytest.raises(KeyError):
        enc.decode([280])
    path = tmp_path / "holed.tiktoken"
    path.write_text("".join(f"{base64.b64encode(b).decode()} {i}\n" for b, i in ranks.items()))
    tok = Tokenizer.load(str(path), pattern=r"\S+|\s+")
    assert tok.encode("ab a") == enc.encode("ab a")
    with pytest.raises(UnknownTokenError):
        tok.decode([280])


@pytest.mark.parametrize("route", ["byte", "pipeline"])
def test_the_native_file_keeps_the_holes_rule(tmp_path, route):
    hf = holed_tokenizer(route)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    Tokenizer.load(str(path)).save(str(tmp_path / "native.json"))
    again = Tokenizer.load(str(tmp_path / "native.json"))
    holes = [i for i in range(again.n_vocab) if hf.id_to_token(i) is None]
    assert again.decode([300, *holes, 301]) == hf.decode([300, *holes, 301])


@pytest.mark.parametrize("normalizer", [None, {"type": "NFC"}])
def test_a_hostile_id_far_above_the_rest_is_refused_without_a_huge_allocation(tmp_path, normalizer):
    """Finding the holes of a vocabulary must not build a set of 2**31 ids: in a child limited to 2 GB of
    address space, the file is refused with a FormatError (the fuzz harness once ran out of memory here)."""
    import json
    import subprocess
    import sys

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    vocab["ab"] = 2**31
    desc = {"model": {"type": "BPE", "vocab": vocab, "merges": [["a", "b"]]}, "normalizer": normalizer,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(desc), encoding="utf-8")
    child = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); import bytepair\n"
             "try:\n    bytepair.Tokenizer.load(sys.argv[1])\nexcept bytepair.FormatError as e:\n    print('refused', e)\n")
    done = subprocess.run([sys.executable, "-c", child, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("refused"), done.stdout + done.stderr[-2000:]
