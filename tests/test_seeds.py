"""Every output printed in the three seeds, reproduced byte for byte by the
reference, the public API (Rust core) and the command line. Expectations
are parsed from the seed texts themselves (tests/seeds.py)."""

from __future__ import annotations

import io

import pytest

import bytepair
from bytepair import reference
from bytepair.cli import main

from seeds import seed_000, seed_001, seed_002

IMPLEMENTATIONS = {"reference": reference, "core": bytepair.Tokenizer}
S0, S1, S2 = seed_000(), seed_001(), seed_002()


def seed_000_train(impl):
    return impl.train(S0.corpus, model="char", end_of_word="_", tie_break="alphabetical", num_merges=6)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS.values(), ids=IMPLEMENTATIONS.keys())
def test_seed_000_trace_and_final_words(impl):
    tok = seed_000_train(impl)
    assert tok.trace() == S0.trace
    assert tok.merges == S0.merges
    # the final words are the training words under the learned merges
    assert [" ".join(tok.tokenize(w)) for w in S0.corpus] == S0.final_words


@pytest.mark.parametrize("impl", IMPLEMENTATIONS.values(), ids=IMPLEMENTATIONS.keys())
def test_seed_000_tokenize_new_words(impl):
    tok = impl.from_merges(S0.merges, model="char", end_of_word="_")
    for word, pieces in S0.tokenized.items():
        assert tok.tokenize(word) == pieces
        # the printed line itself
        assert f"{word:8} -> {tok.tokenize(word)}  ({len(pieces)} tokens)".startswith(f"{word:8} -> {pieces}")


@pytest.mark.parametrize("impl", IMPLEMENTATIONS.values(), ids=IMPLEMENTATIONS.keys())
def test_seed_001_rules_encode_and_decode(impl):
    assert len(S1.rules) == 10
    tok = impl.from_merges(S1.rules, model="char", end_of_word="<w>", alphabet="abcdefghijklmnopqrstuvwxyz")
    for word, pieces in S1.encoded.items():
        assert tuple(tok.tokenize(word)) == pieces
        assert tok.decode(tok.encode(word)) == word
    # seed 001's decode: "".join(tokens).replace("<w>", "")
    assert tok.decode(tok.encode("quickest")) == "".join(S1.encoded["quickest"]).replace("<w>", "")


@pytest.mark.parametrize("impl", IMPLEMENTATIONS.values(), ids=IMPLEMENTATIONS.keys())
def test_seed_001_rules_are_learned(impl):
    """Seed 001's trainer (max over counts, first occurrence on ties) learns
    rules whose first steps behave like the printed ones on a corpus where
    the and dog are frequent; the printed rules come from an unknown corpus,
    so only the mechanism is checked here: merges follow first occurrence."""
    tok = impl.train({"the": 5, "dog": 3, "quick": 1}, model="char", end_of_word="<w>", num_merges=3)
    assert tok.merges == [("t", "h"), ("th", "e"), ("the", "<w>")]


@pytest.mark.parametrize("impl", IMPLEMENTATIONS.values(), ids=IMPLEMENTATIONS.keys())
def test_seed_002_merges_and_final_words(impl):
    tok = impl.train(S2.corpus, model="char", end_of_word=None, num_merges=5)
    assert tok.merges == S2.merges
    assert [tuple(tok.tokenize(w)) for w in S2.corpus] == S2.final_words
    printed = [f"{k} merge {m}" for k, m in enumerate(tok.merges, 1)]
    assert printed == [f"{k} merge {m}" for k, m in enumerate(S2.merges, 1)]


# ---------------------------------------------------------------- the CLI


def run_cli(*argv):
    out = io.StringIO()
    status = main(list(argv), out=out)
    return status, out.getvalue()


def test_seed_000_through_the_cli(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(" ".join(S0.corpus) + "\n", encoding="utf-8")
    model = tmp_path / "seed000.json"
    status, out = run_cli(
        "train", str(corpus), "--model", "char", "--end-of-word", "_",
        "--tie-break", "alphabetical", "--merges", "6", "--trace", "-o", str(model),
    )
    assert status == 0
    assert out.splitlines() == S0.trace
    for word, pieces in S0.tokenized.items():
        status, out = run_cli("tokenize", "-t", str(model), word)
        assert status == 0 and out.splitlines() == list(pieces)
    status, out = run_cli("tokenize", "-t", str(model), " ".join(S0.corpus))
    assert out.split() == " ".join(S0.final_words).split()


def test_seed_001_and_002_through_the_cli(tmp_path):
    # seed 002: a corpus with the seed's word counts, no marker
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(" ".join(w for w, n in S2.corpus.items() for _ in range(n)), encoding="utf-8")
    model = tmp_path / "seed002.json"
    status, out = run_cli("train", str(corpus), "--model", "char", "--no-end-of-word", "--merges", "5", "--trace", "-o", str(model))
    assert status == 0
    assert [line.split(" -> ")[0] for line in out.splitlines()] == [
        f"merge {k}: {a} + {b}" for k, (a, b) in enumerate(S2.merges, 1)
    ]
    status, out = run_cli("tokenize", "-t", str(model), " ".join(S2.corpus))
    assert out.split() == [p for word in S2.final_words for p in word]

    # seed 001: the ten rules, saved and used through the CLI
    tok = bytepair.Tokenizer.from_merges(S1.rules, model="char", end_of_word="<w>", alphabet="abcdefghijklmnopqrstuvwxyz")
    path = tmp_path / "seed001.json"
    tok.save(str(path))
    for word, pieces in S1.encoded.items():
        status, out = run_cli("tokenize", "-t", str(path), word)
        assert out.split() == list(pieces)
        status, ids = run_cli("encode", "-t", str(path), word)
        status, text = run_cli("decode", "-t", str(path), *ids.split())
        assert status == 0 and text == word + "\n"
