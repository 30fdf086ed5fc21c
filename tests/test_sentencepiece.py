"""SentencePiece BPE ``.model`` files: reading (protobuf), the pipeline
description (Hugging Face schema) run by HF ``tokenizers`` against
``sentencepiece`` itself, the reference decoder, offsets, refusals.

Models: the five SentencePiece BPE models that mistral_common ships, and
small models trained here by sentencepiece with each normalizer option.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import io
import json
import os

import pytest
import sentencepiece as spm
import tokenizers
from hypothesis import given, settings, strategies as st

from bytepair.errors import FormatError
from bytepair.formats import detect
from bytepair.formats.sentencepiece import (
    SP_BYTE,
    SP_CONTROL,
    hf_compatible,
    parse_model,
    read_model,
    sp_decode,
    to_hf_json,
)

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = open(os.path.join(HERE, "data", "multilingual.txt"), encoding="utf-8").read().splitlines()
EDGE = ["", " ", "  ", "x ", " x", "  hello  world  ", "a\tb\n c\r\nd", "123456 7 89", "😀🎉 emoji 🧿",
        "日本語のテキスト", "<s> x </s>", "[INST] hi [/INST]", "\x00\x01\x7f", "\U0010ffff\uffff\ue000",
        "ꙮꙮ ᚠᛇ", "\u3000\u00a0\u2009 spaces", "\n\n\n", "x" * 300, "ab " * 100]
TEXTS = LINES + EDGE

MISTRAL = sorted(glob.glob(os.path.join(os.path.dirname(__import__("mistral_common").__file__), "data", "*.model*")))

# trainer options of the small models; each must be one SentencePiece BPE model HF can run
CONFIGS = {
    "default": {},
    "identity-keep-spaces": dict(normalization_rule_name="identity", remove_extra_whitespaces=False),
    "nmt_nfkc-bytes": dict(normalization_rule_name="nmt_nfkc", byte_fallback=True),
    "nfkc-no-prefix": dict(normalization_rule_name="nfkc", add_dummy_prefix=False),
    "identity-bytes-digits": dict(normalization_rule_name="identity", add_dummy_prefix=False,
                                  remove_extra_whitespaces=False, byte_fallback=True, split_digits=True),
    "unk-coverage": dict(character_coverage=0.98),
    "nmt_nfkc_cf": dict(normalization_rule_name="nmt_nfkc_cf"),
}


@functools.lru_cache(maxsize=None)
def trained(name: str, **extra) -> bytes:
    out = io.BytesIO()
    opts = dict(CONFIGS.get(name, {}), **{k: list(v) if isinstance(v, tuple) else v for k, v in extra.items()})
    spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES * 3), model_writer=out, model_type="bpe",
                                   vocab_size=1200, minloglevel=3, hard_vocab_limit=False, num_threads=1, **opts)
    return out.getvalue()


def model_bytes(which: str) -> bytes:
    if which.startswith("mistral:"):
        return open(MISTRAL[int(which.split(":")[1])], "rb").read()
    return trained(which)


ALL = [f"mistral:{i}" for i in range(len(MISTRAL))] + list(CONFIGS)


@functools.lru_cache(maxsize=None)
def pair(which: str):
    data = model_bytes(which)
    sp = parse_model(data, which)
    # HF cannot match user-defined pieces as SentencePiece does (the `frozen` extension); on texts
    # without them (the tests skip the others) they act as pieces never made from text: control pieces
    plain = dataclasses.replace(sp, types=[SP_CONTROL if t == 4 else t for t in sp.types])
    hf = tokenizers.Tokenizer.from_str(json.dumps(to_hf_json(plain)))
    hf.encode_special_tokens = True  # SentencePiece never matches control pieces in text
    return sp, hf, spm.SentencePieceProcessor(model_proto=data)


def test_mistral_models_are_present():
    assert len(MISTRAL) == 5  # mistral_common 1.x ships v1, v2, v3, v7, v7m1


def without_user_defined(which: str, text: str) -> bool:
    sp = pair(which)[0]
    return not any(p in text for p, t in zip(sp.pieces, sp.types) if t == 4)


@pytest.mark.parametrize("which", ALL)
def test_encode_ids_equal_sentencepiece(which):
    sp, hf, proc = pair(which)
    n = 0
    for text in TEXTS:
        if not without_user_defined(which, text):
            continue
        assert hf.encode(text, add_special_tokens=False).ids == proc.encode(text), (which, text)
        n += 1
    assert n >= len(TEXTS) - 2


@pytest.mark.parametrize("which", ALL)
def test_reference_decode_equals_sentencepiece(which):
    sp, hf, proc = pair(which)
    for text in TEXTS:
        ids = proc.encode(text)
        assert sp_decode(sp, ids) == proc.decode(ids), (which, text)


@pytest.mark.parametrize("which", ["mistral:0", "mistral:2", "identity-bytes-digits", "unk-coverage", "default"])
@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(min_value=0, max_value=1199), max_size=30))
def test_reference_decode_of_any_ids(which, ids):
    """Any ids, control, unknown, byte and user-defined pieces in any order."""
    sp, hf, proc = pair(which)
    ids = [i % len(sp.pieces) for i in ids] + [i for i, t in enumerate(sp.types) if t == SP_BYTE][:3]
    assert sp_decode(sp, ids) == proc.decode(ids)


@pytest.mark.parametrize("which", [w for w in ALL if w.startswith("mistral") or "bytes" in w])
def test_hf_decoder_equals_sentencepiece_without_unk(which):
    """With byte fallback no <unk> comes from text: HF's decoders decode as SentencePiece
    (control pieces skipped as special tokens)."""
    sp, hf, proc = pair(which)
    for text in TEXTS:
        ids = proc.encode(text)
        assert hf.decode(ids, skip_special_tokens=True) == proc.decode(ids), (which, text)


TEXT_ALPHABET = st.sampled_from(list("ab c  d\t\n12 3 456") + ["😀", "日", "本", "é", "e\u0301", "\u3000", "\u00a0",
                                                               "ꙮ", "\x00", "\U0001f9ff", "ﬁ", "①", "Ａ", "  "])
TEXT = st.lists(TEXT_ALPHABET, max_size=40).map("".join)


@pytest.mark.parametrize("which", ["mistral:0", "mistral:2", "mistral:4"] + list(CONFIGS))
@settings(max_examples=40, deadline=None)
@given(text=TEXT)
def test_generated_text(which, text):
    sp, hf, proc = pair(which)
    ids = proc.encode(text)
    assert hf.encode(text, add_special_tokens=False).ids == ids
    assert sp_decode(sp, ids) == proc.decode(ids)


def sp_offsets(proc, text):
    data = text.encode("utf-8")
    ch = lambda i: len(data[:i].decode("utf-8", "ignore"))  # noqa: E731
    return [(ch(p.begin), ch(p.end)) for p in proc.encode(text, return_type="proto").pieces]


def hf_offsets_with_sp_rules(sp, hf, text):
    """HF's offsets with the two rules of sp-extensions.md: a dummy-prefix ``▁`` token alone
    spans nothing; byte-fallback pieces of one character: all but the last span nothing."""
    enc = hf.encode(text, add_special_tokens=False)
    out = list(enc.offsets)
    toks = enc.tokens
    for k, tok in enumerate(toks):
        if k == 0 and sp.add_dummy_prefix and tok == "\u2581":
            out[k] = (out[k][0], out[k][0])
        if tok.startswith("<0x") and k + 1 < len(toks) and toks[k + 1].startswith("<0x") and out[k + 1] == out[k]:
            out[k] = (out[k][0], out[k][0])
    return out


@pytest.mark.parametrize("which", ["mistral:0", "mistral:4", "identity-bytes-digits", "identity-keep-spaces"])
def test_offsets_rules(which):
    sp, hf, proc = pair(which)
    for text in LINES + ["x", " x", "😀a", "日本 😀"]:
        assert hf_offsets_with_sp_rules(sp, hf, text) == sp_offsets(proc, text), (which, text)


def test_mistral_spec_fields():
    sp = read_model(MISTRAL[-1])  # tokenizer.model.v1
    assert (sp.byte_fallback, sp.split_digits, sp.normalizer_name, sp.add_dummy_prefix,
            sp.remove_extra_whitespaces) == (True, True, "identity", True, False)
    assert len(sp.pieces) == 32000 and sp.types.count(SP_CONTROL) == 2
    assert detect(MISTRAL[-1]) == "sentencepiece"


def test_extensions_are_named():
    sp = parse_model(trained("user", user_defined_symbols=("<tag>", "ab"), remove_extra_whitespaces=False), "u")
    assert any("frozen" in why for why in hf_compatible(sp))
    with pytest.raises(FormatError, match="user-defined pieces"):
        to_hf_json(sp)
    d = to_hf_json(sp, extensions=True)
    assert d["model"]["frozen"] == ["<tag>", "ab"] and d["decoder"]["type"] == "SentencePiece"
    sp = parse_model(trained("suffix", treat_whitespace_as_suffix=True), "s")
    assert to_hf_json(sp, extensions=True)["normalizer"]["normalizers"][-2] == {"type": "Append", "append": "\u2581"}


def test_unigram_refused(tmp_path):
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES * 3), model_writer=out, model_type="unigram",
                                   vocab_size=1000, minloglevel=3, hard_vocab_limit=False, num_threads=1)
    path = tmp_path / "uni.model"
    path.write_bytes(out.getvalue())
    with pytest.raises(FormatError, match=r"uni.model: a SentencePiece Unigram model; bytepair reads SentencePiece BPE"):
        read_model(str(path))


@pytest.mark.parametrize("cut", [1, 7, 100, 5000])
def test_truncated_or_lying_lengths(tmp_path, cut):
    data = open(MISTRAL[0], "rb").read()
    path = tmp_path / "cut.model"
    path.write_bytes(data[:cut])
    with pytest.raises(FormatError, match="cut.model: not a"):
        read_model(str(path))


def test_lying_length_prefix(tmp_path):
    # field 1 claims 2**31 bytes: protobuf refuses it without allocating them
    path = tmp_path / "lie.model"
    path.write_bytes(bytes([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x0A, 0x01, 0x61]))
    with pytest.raises(FormatError, match="lie.model: not a SentencePiece model"):
        read_model(str(path))


def test_not_protobuf(tmp_path):
    path = tmp_path / "junk.model"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(FormatError, match="junk.model: not a SentencePiece model"):
        read_model(str(path))


def test_bad_piece_types(tmp_path):
    sp = parse_model(trained("default"), "d")
    assert sp.types[0] == 2
    # byte pieces without byte_fallback: SentencePiece itself refuses the model
    data = bytearray(trained("default"))
    import google.protobuf  # noqa: F401  (the test extra installs protobuf)
    from bytepair.formats.sentencepiece import _classes

    m = _classes()()
    m.ParseFromString(bytes(data))
    m.pieces.add(piece=b"<0x41>", score=0.0, type=6)
    path = tmp_path / "bytes.model"
    path.write_bytes(m.SerializeToString())
    with pytest.raises(FormatError, match="byte pieces although byte_fallback is false"):
        read_model(str(path))
    with pytest.raises(RuntimeError):
        spm.SentencePieceProcessor(model_file=str(path))
