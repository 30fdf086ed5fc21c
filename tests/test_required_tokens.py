"""Seeded training (Tokenizer.train(..., required_tokens=[...]), bytepair train
--required-token): both models against the pure-Python reference, continued
training, the exports read back by Hugging Face tokenizers, and the CLI
against the API."""

from __future__ import annotations

import os
import warnings

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer
from bytepair import reference as ref
from cli_runner import run

EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_word = st.text(alphabet="abдé", min_size=1, max_size=5)


@SETTINGS
@given(docs=st.lists(st.lists(_word, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=4),
       required=st.lists(_word, min_size=1, max_size=3), num_merges=st.integers(0, 15),
       tie_break=st.sampled_from(ref.TIE_BREAKS))
def test_core_matches_reference(docs, required, num_merges, tie_break):
    kw = dict(num_merges=num_merges, required_tokens=required, tie_break=tie_break, pattern=r"\S+|\s+")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.TrainingWarning)
        expected = ref.train(docs, **kw)
        core = Tokenizer.train(docs, **kw)
    assert core.merges == expected.merges
    text = " ".join(docs + required)
    assert core.encode(text) == expected.encode(text)
    for token in required:
        assert len(expected.encode(token)) == 1
        assert core.encode(token) == expected.encode(token)


# the char model's marker settings (the seeds' separate </w>, subword-nmt's fused one, none), fallbacks, specials
_CHAR_SETTINGS = st.sampled_from([
    dict(), dict(end_of_word="_"), dict(end_of_word=None), dict(end_of_word_fused=True),
    dict(byte_fallback=True), dict(unk_token="<unk>", special_tokens=["<s>"]),
])


@SETTINGS
@given(docs=st.lists(st.lists(_word, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=4),
       required=st.lists(st.text(alphabet="abдéx_", min_size=1, max_size=5), min_size=1, max_size=3),
       num_merges=st.integers(0, 15), tie_break=st.sampled_from(ref.TIE_BREAKS), char=_CHAR_SETTINGS)
def test_char_model_matches_reference(docs, required, num_merges, tie_break, char):
    # "x" and "_" are never in the corpus: required tokens bring their characters into the alphabet
    kw = dict(model="char", num_merges=num_merges, required_tokens=required, tie_break=tie_break, **char)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.TrainingWarning)
        expected = ref.train(docs, **kw)
        core = Tokenizer.train(docs, **kw)
    assert core.merges == expected.merges
    assert core.special_tokens == expected.special_tokens
    text = " ".join(docs + required)
    assert core.encode(text) == expected.encode(text)
    for token in required:
        assert len(expected.encode(token)) == 1
        assert core.encode(token) == expected.encode(token)


@pytest.mark.parametrize("char", [dict(end_of_word=None), dict(end_of_word_fused=True),
                                  dict(end_of_word_fused=True, unk_token="<unk>")])
def test_char_model_kept_by_continued_training_and_the_export(tmp_path, char):
    tok = Tokenizer.train(["the cat sat on the mat"] * 3, model="char", num_merges=10, required_tokens=["дом", "xyz"],
                          special_tokens=["<s>"], **char)
    ids = {t: tok.encode(t) for t in ("дом", "xyz")}
    assert all(len(v) == 1 for v in ids.values())
    more = Tokenizer.train(["дом xyz tom tom not not cats"], init=tok, num_merges=3)
    assert len(more.merges) == len(tok.merges) + 3 and {t: more.encode(t) for t in ids} == ids
    path = tmp_path / "tok.json"
    more.save(str(path), format="hf")  # HF's BPE holds a fused marker (end_of_word_suffix) or none
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert {t: hf.encode(t).ids for t in ids} == ids
    native = tmp_path / "native.json"
    more.save(str(native))
    assert {t: Tokenizer.load(str(native)).encode(t) for t in ids} == ids


def test_kept_by_continued_training_and_the_exports(tmp_path):
    tok = Tokenizer.train(["the cat sat on the mat"] * 3, num_merges=12, required_tokens=["дом", "xyz"])
    ids = {t: tok.encode(t) for t in ("дом", "xyz")}
    assert all(len(v) == 1 for v in ids.values())
    more = Tokenizer.train(["дом xyz dog dog"], init=tok, num_merges=3)
    assert {t: more.encode(t) for t in ids} == ids
    path = tmp_path / "tok.json"
    more.save(str(path), format="hf")
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert {t: hf.encode(t).ids for t in ids} == ids
    tiktoken_path = tmp_path / "tok.tiktoken"
    more.save(str(tiktoken_path), format="tiktoken")
    back = Tokenizer.from_tiktoken(str(tiktoken_path), pattern=more.pattern)
    assert {t: back.encode(t) for t in ids} == ids


def test_bad_required_tokens_are_refused():
    with pytest.raises(bytepair.TrainingError, match="more than one piece"):
        Tokenizer.train("a b", num_merges=2, required_tokens=["a b"])
    with pytest.raises(bytepair.TrainingError, match="more than one piece"):
        Tokenizer.train("a b", model="char", num_merges=2, required_tokens=["a b"])
    with pytest.raises(bytepair.TrainingError, match="from scratch"):
        Tokenizer.train("a b", init=Tokenizer.train("a b", num_merges=1), num_merges=2, required_tokens=["ab"])
    with pytest.raises(bytepair.TrainingError, match="non-empty"):
        Tokenizer.train("a b", num_merges=2, required_tokens=[""])


@pytest.mark.parametrize("model", ["byte", "char"])
def test_cli_required_tokens_match_the_api_and_the_reference(tmp_path, model):
    text = "the cat sat on the mat\nдом кот дом\n" * 3
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(text, encoding="utf-8")
    out = tmp_path / "tok.json"
    status, _ = run("train", corpus, "-o", out, "--model", model, "--merges", 14,
                    "--required-token", "xyz", "--required-token", "дом")
    assert status == 0
    cli = Tokenizer.load(str(out))
    kw = dict(model=model, num_merges=14, required_tokens=["xyz", "дом"])
    api = Tokenizer.train([text], **kw)  # the CLI reads each file as one document
    assert cli.merges == api.merges == ref.train([text], **kw).merges
    assert cli.encode("xyz дом") == api.encode("xyz дом")
    assert len(cli.encode("xyz")) == 1


def test_cli_required_token_errors_name_the_option(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a b c\n", encoding="utf-8")
    status, _ = run("train", corpus, "-o", tmp_path / "t.json", "--merges", 2, "--required-token", "a b")
    err = capsys.readouterr().err
    assert status == 1 and "more than one piece" in err and "--special" in err and "special_tokens" not in err
    status, _ = run("train", "-o", tmp_path / "t.json", "--merges", 2, "--required-token", "ab",
                    "--parity", f"en={corpus}", "--parity", f"de={corpus}")
    assert status == 1 and "--required-token" in capsys.readouterr().err
    Tokenizer.train("a b c", num_merges=1).save(str(tmp_path / "init.json"))
    status, _ = run("train", corpus, "-o", tmp_path / "t.json", "--merges", 2, "--required-token", "ab",
                    "--init", tmp_path / "init.json")
    err = capsys.readouterr().err
    assert status == 1 and "--required-token" in err and "--init" in err and "init=" not in err
    assert not (tmp_path / "t.json").exists()
