"""SentencePiece BPE ``.model`` files run by bytepair (``Tokenizer.load``)
against ``sentencepiece.SentencePieceProcessor`` itself: ids, decoding and
offsets (``encode(..., return_type="proto")`` begin/end bytes).

Models: the SentencePiece BPE models mistral_common ships, and small models
that ``SentencePieceTrainer`` trains here on generated multilingual corpora
with random combinations of the trainer options (seeded, so a failure names
its configuration); some are then edited through sentencepiece's own
``sentencepiece_model_pb2`` (unused pieces, tied scores) to reach the
encoder's rarer paths. Text: hypothesis over an alphabet of the corpus's
characters, unknown ones, spaces of every kind, NFKC-sensitive characters,
user-defined and control symbols.
"""

from __future__ import annotations

import functools
import glob
import io
import os
import random

import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings, strategies as st
from sentencepiece import sentencepiece_model_pb2

from bytepair import Tokenizer
from bytepair.errors import FormatError

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = open(os.path.join(HERE, "data", "multilingual.txt"), encoding="utf-8").read().splitlines()
MISTRAL = sorted(glob.glob(os.path.join(os.path.dirname(__import__("mistral_common").__file__), "data", "*.model*")))

SCRIPTS = ["abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "абвгдежзийклмнопрстуфхцчшщыэюя",
           "αβγδεζηθικλμνξοπρστυφχψω", "日本語中文字漢", "ひらがなカタカナ", "한국어글자", "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
           "अआइईउऊएऐओऔकखगघ", "0123456789", ".,;:!?()[]{}\"'-_/\\@#$%&*+=<>|~^`"]
# characters whose normalization differs between the rules, and spaces of every kind
TRICKY = ["ﬁ", "①", "Ａ", "ｶ", "\u3000", "\u00a0", "\u2009", "e\u0301", "é", "Å", "ß", "İ", "ǅ", "\u200b", "\u00ad",
          "\ufeff", "\t", "\n", "\r", "  ", "   ", "😀", "🎉", "\U0001f9ff", "\x00", "\x7f", "\ue000", "\U0010ffff",
          "ꙮ", "ᚠ", "〜", "…", "™", "½", "²", "Ⅻ", "ｱ", "\u2581", "▁▁"]
USER = ["<tag>", "ab", "\u2581x", "12", "[[", "日本", "a b"]
CONTROL = ["<ctl>", "[SEP]", "<|im|>", "|"]


def corpus(rng: random.Random) -> list:
    out = list(LINES)
    for _ in range(300):
        words = []
        for _ in range(rng.randint(1, 12)):
            alphabet = rng.choice(SCRIPTS)
            words.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))))
            if rng.random() < 0.1:
                words.append(rng.choice(TRICKY))
        out.append(rng.choice([" ", " ", "  ", ""]).join(words))
    return out


def config(seed: int) -> dict:
    rng = random.Random(seed)
    c = dict(
        byte_fallback=rng.random() < 0.5,
        add_dummy_prefix=rng.random() < 0.7,
        remove_extra_whitespaces=rng.random() < 0.5,
        split_by_whitespace=rng.random() < 0.7,
        split_digits=rng.random() < 0.5,
        split_by_unicode_script=rng.random() < 0.7,
        treat_whitespace_as_suffix=rng.random() < 0.25,
        allow_whitespace_only_pieces=rng.random() < 0.3,
        max_sentencepiece_length=rng.choice([2, 4, 8, 16]),
        normalization_rule_name=rng.choice(["identity", "nmt_nfkc", "nfkc", "nmt_nfkc_cf"]),
        character_coverage=rng.choice([1.0, 0.9995, 0.98]),
    )
    c["vocab_size"] = rng.choice([900, 1400, 2200]) + (256 if c["byte_fallback"] else 0)
    if rng.random() < 0.5:
        c["user_defined_symbols"] = rng.sample(USER, rng.randint(1, 4))
    if rng.random() < 0.5:
        c["control_symbols"] = rng.sample(CONTROL, rng.randint(1, 3))
    if rng.random() < 0.2:
        c["unk_surface"] = rng.choice(["<?>", "", "\u2047"])
    return c


@functools.lru_cache(maxsize=None)
def trained(seed: int) -> bytes:
    rng = random.Random(seed)
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus(rng)), model_writer=out, model_type="bpe",
                                   minloglevel=3, hard_vocab_limit=False, num_threads=1, **config(seed))
    data = out.getvalue()
    if seed % 4 == 3:  # edited: some pieces unused, scores tied in groups
        m = sentencepiece_model_pb2.ModelProto()
        m.ParseFromString(data)
        normal = [p for p in m.pieces if p.type == 1 and len(p.piece) > 1]
        for p in rng.sample(normal, len(normal) // 8):
            p.type = 5
        for p in m.pieces:
            if p.type == 1 and rng.random() < 0.5:
                p.score = float(int(p.score / 7))
        data = m.SerializeToString()
    return data


SEEDS = list(range(24))


@functools.lru_cache(maxsize=None)
def loaded(which):
    if isinstance(which, int):
        data = trained(which)
        path = os.path.join(_tmp(), f"seed{which}.model")
        with open(path, "wb") as f:
            f.write(data)
    else:
        path = MISTRAL[int(which.split(":")[1])]
    return Tokenizer.load(path), spm.SentencePieceProcessor(model_file=path)


@functools.lru_cache(maxsize=None)
def _tmp():
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="bytepair-sp-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def sp_offsets(proc, text):
    """sentencepiece's begin/end bytes as character offsets."""
    data = text.encode("utf-8")
    ch = lambda i: len(data[:i].decode("utf-8", "ignore"))  # noqa: E731
    return [(ch(p.begin), ch(p.end)) for p in proc.encode(text, return_type="proto").pieces]


def check(tok, proc, text):
    ids = proc.encode(text)
    assert tok.encode(text) == ids, text
    got_ids, offsets = tok.encode_with_offsets(text)
    assert got_ids == ids
    assert offsets == sp_offsets(proc, text), text
    assert tok.decode(ids) == proc.decode(ids), ids
    if 0 <= proc.bos_id() < proc.get_piece_size():
        assert tok.encode(text, add_special_tokens=True) == proc.encode(text, add_bos=True)


def alphabet(which):
    chars = sorted(set("".join(LINES)) | set("".join(SCRIPTS)))
    return st.one_of(st.sampled_from(chars), st.sampled_from(TRICKY + USER + CONTROL + [" ", " ", "  "]),
                     st.characters(blacklist_categories=("Cs",)))


TEXT = st.lists(alphabet(None), max_size=60).map("".join)
WHICH = [f"mistral:{i}" for i in range(len(MISTRAL))] + SEEDS


def test_mistral_models_are_present():
    assert len(MISTRAL) == 5


@pytest.mark.parametrize("which", WHICH)
def test_fixed_texts(which):
    tok, proc = loaded(which)
    for text in LINES + ["", " ", "  x  ", "x" * 300, "ab " * 100, "\n".join(LINES), " ".join(TRICKY + USER + CONTROL)]:
        check(tok, proc, text)


@pytest.mark.parametrize("which", WHICH)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT)
def test_generated_text(which, text):
    tok, proc = loaded(which)
    check(tok, proc, text)


@pytest.mark.parametrize("which", WHICH)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_decode_of_any_ids(which, data):
    """Any ids: control, unknown, byte and user-defined pieces in any order."""
    tok, proc = loaded(which)
    n = proc.get_piece_size()
    ids = data.draw(st.lists(st.integers(min_value=0, max_value=n - 1), max_size=30))
    assert tok.decode(ids) == proc.decode(ids)


@pytest.mark.parametrize("which", WHICH)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_skipping_specials_keeps_the_bytes_around_them_apart(which, data):
    """``skip_special_tokens=True`` drops the control pieces as sentencepiece's own decode drops them: the
    byte pieces of one character on the two sides of a control piece are decoded apart (never joined into
    the character), whatever sits around them."""
    tok, proc = loaded(which)
    n = proc.get_piece_size()
    controls = [i for i in range(n) if proc.is_control(i)]
    byte_ids = {b: proc.piece_to_id(f"<0x{b:02X}>") for b in range(256)}
    if not controls or any(proc.id_to_piece(i) != f"<0x{b:02X}>" for b, i in byte_ids.items()):
        return  # no control pieces, or no byte pieces to split a character with
    char = data.draw(st.characters(min_codepoint=0x80, exclude_categories=("Cs",)))
    raw = char.encode("utf-8")
    cut = data.draw(st.integers(min_value=1, max_value=len(raw) - 1))
    around = data.draw(st.lists(st.integers(min_value=0, max_value=n - 1), max_size=4))
    ids = around + [byte_ids[b] for b in raw[:cut]] + [data.draw(st.sampled_from(controls))] + \
        [byte_ids[b] for b in raw[cut:]] + around
    kept = [i for i in ids if not proc.is_control(i)]  # what skip_special_tokens drops besides: <unk>
    if proc.unk_id() not in kept:
        assert tok.decode(ids, skip_special_tokens=True) == proc.decode(ids)


def test_configurations_cover_the_options():
    """The seeded configurations reach every option both ways."""
    cs = [config(s) for s in SEEDS]
    for key in ["byte_fallback", "add_dummy_prefix", "remove_extra_whitespaces", "split_by_whitespace",
                "split_digits", "split_by_unicode_script", "treat_whitespace_as_suffix"]:
        assert {c[key] for c in cs} == {True, False}, key
    assert {c["normalization_rule_name"] for c in cs} == {"identity", "nmt_nfkc", "nfkc", "nmt_nfkc_cf"}
    assert any("user_defined_symbols" in c for c in cs) and any("control_symbols" in c for c in cs)
    assert any(c["character_coverage"] < 1 and not c["byte_fallback"] for c in cs)  # <unk> from text
    assert len({c["max_sentencepiece_length"] for c in cs}) > 2


def test_unigram_refused(tmp_path):
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES * 3), model_writer=out, model_type="unigram",
                                   vocab_size=1000, minloglevel=3, hard_vocab_limit=False, num_threads=1)
    path = tmp_path / "uni.model"
    path.write_bytes(out.getvalue())
    with pytest.raises(FormatError, match=r"uni.model: a SentencePiece Unigram model; bytepair reads SentencePiece BPE"):
        Tokenizer.load(str(path))


def test_special_tokens_listed_and_skipped():
    tok, proc = loaded("mistral:4")
    assert tok.special_tokens["<s>"] == proc.bos_id() and tok.special_tokens["<unk>"] == proc.unk_id()
    ids = proc.encode("hello world", add_bos=True, add_eos=True)
    assert tok.decode(ids, skip_special_tokens=True) == proc.decode(ids) == "hello world"
    assert tok.encode("<s>") == proc.encode("<s>")  # control text is never matched


def test_native_and_hf_files(tmp_path):
    """The native file keeps sentencepiece's stages; the tokenizer.json export is run by HF with the same ids
    (Mistral v1 needs no extension); a model HF cannot run exactly is refused on export, naming why."""
    import tokenizers

    tok, proc = loaded("mistral:4")
    tok.save(str(tmp_path / "native.json"))
    back = Tokenizer.load(str(tmp_path / "native.json"))
    tok.save(str(tmp_path / "tokenizer.json"), format="hf")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    hf.encode_special_tokens = True
    for text in LINES + [" ".join(TRICKY)]:
        ids = proc.encode(text)
        assert back.encode(text) == ids and back.encode_with_offsets(text)[1] == sp_offsets(proc, text)
        assert hf.encode(text, add_special_tokens=False).ids == ids
        assert hf.encode(text).ids == proc.encode(text, add_bos=True)
    user = next(s for s in SEEDS if "user_defined_symbols" in config(s))
    with pytest.raises(FormatError, match="user-defined pieces"):
        loaded(user)[0].save(str(tmp_path / "user.json"), format="hf")


def test_cli_reads_model_files(capsys):
    from bytepair.cli import main

    text = "Hello  world 123 😀"
    assert main(["encode", "-t", MISTRAL[4], text]) == 0
    proc = loaded("mistral:4")[1]
    assert [int(x) for x in capsys.readouterr().out.split()] == proc.encode(text)
