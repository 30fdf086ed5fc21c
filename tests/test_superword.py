"""SuperBPE (Tokenizer.train(superword=True, transition=t)) and continued
training with a new pattern: the core against the pure-Python reference on
random corpora; stage 1 equals plain BPE at the transition size; the result
exports to a tokenizer.json that Hugging Face encodes with the same ids.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
import regex
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer
from bytepair import reference as ref
from bytepair.patterns import SUPERBPE

EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DATA = Path(__file__).parent / "data"

docs = st.lists(st.text(alphabet="ab ,.1\n", min_size=1, max_size=30), min_size=1, max_size=6)


def both(*args, **kwargs):
    out = []
    for impl in (ref.train, Tokenizer.train):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                r = impl(*args, **kwargs)
            except bytepair.BytepairError as e:
                r = type(e)
        out.append((r, sorted({type(w.message).__name__ for w in caught})))
    (r, rw), (c, cw) = out
    if isinstance(r, type) or isinstance(c, type):
        assert r == c, f"reference gave {r!r}, core gave {c!r}"
        return None, None
    assert rw == cw
    return r, c


@SETTINGS
@given(corpus=docs, transition=st.integers(256, 266), extra=st.integers(0, 12),
       tie_break=st.sampled_from(ref.TIE_BREAKS), pattern=st.sampled_from(["gpt2", "cl100k", r"\S+|\s+"]))
def test_superword_core_matches_reference(corpus, transition, extra, tie_break, pattern):
    r, c = both(corpus, vocab_size=transition + extra, superword=True, transition=transition, tie_break=tie_break,
                pattern=pattern)
    if r is None:
        return
    assert c.merges == r.merges
    assert c.pattern == r.pattern == SUPERBPE
    text = "".join(corpus)
    assert c.encode(text) == r.encode(text)
    assert c.decode(c.encode(text)) == text


@SETTINGS
@given(corpus=docs, transition=st.integers(256, 270), extra=st.integers(0, 10),
       tie_break=st.sampled_from(["first", "pair-id", "max-string"]))
def test_stage_one_is_plain_bpe_at_the_transition(corpus, transition, extra, tie_break):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.TrainingWarning)
        plain = Tokenizer.train(corpus, vocab_size=transition, tie_break=tie_break)
        sup = Tokenizer.train(corpus, vocab_size=transition + extra, superword=True, transition=transition,
                              tie_break=tie_break)
    assert sup.merges[: len(plain.merges)] == plain.merges
    if len(plain.merges) == transition - 256:  # stage 1 reached the transition: every id is kept
        assert all(sup.encode(t.decode("utf-8", "replace")) == plain.encode(t.decode("utf-8", "replace"))
                   for t in (bytes([b]) for b in range(32, 127)))


@SETTINGS
@given(corpus=docs, more=docs, n1=st.integers(0, 8), n2=st.integers(0, 8),
       p1=st.sampled_from(["gpt2", r"\S+|\s+"]), p2=st.sampled_from(["superbpe", "cl100k", r"[ab]+|."]))
def test_continued_training_with_a_new_pattern(corpus, more, n1, n2, p1, p2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bytepair.TrainingWarning)
        r0 = ref.train(corpus, num_merges=n1, pattern=p1)
        c0 = Tokenizer.train(corpus, num_merges=n1, pattern=p1)
    out = []
    for impl, init in ((ref.train, r0), (Tokenizer.train, c0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bytepair.TrainingWarning)
            try:
                out.append(impl(more, init=init, pattern=p2, num_merges=n2))
            except bytepair.BytepairError as e:
                out.append(type(e))
    r, c = out
    if isinstance(r, type) or isinstance(c, type):
        assert r == c
        return
    assert c.merges == r.merges
    assert c.pattern == r.pattern
    text = "".join(more)
    assert c.encode(text) == r.encode(text)


def _texts():
    return [l for l in (DATA / "multilingual.txt").read_text(encoding="utf-8").splitlines(keepends=True) if l.strip()]


def test_superwords_cross_spaces_and_compress_better():
    texts = _texts() * 3
    plain = Tokenizer.train(texts, vocab_size=1200, pattern="gpt2")
    sup = Tokenizer.train(texts, vocab_size=1200, superword=True, transition=900, pattern="gpt2")
    assert any(b" " in (l + r)[1:] for l, r in sup.merges[600:])  # a token bridging a space
    assert not any(b" " in (l + r)[1:].strip(b" ") for l, r in plain.merges)
    text = "".join(_texts())
    assert len(sup.encode(text)) < len(plain.encode(text))
    assert sup.decode(sup.encode(text)) == text


def test_superbpe_pattern_is_the_authors_split():
    # the authors' stage 2: HF Split(regex, "isolated"): matches and the stretches between them are pieces
    authors = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"
    pre = tokenizers.pre_tokenizers.Split(tokenizers.Regex(authors), behavior="isolated")
    for text in _texts() + ["By the way, it cost 1234 dollars!! Really...\n  ok  end  ", "a  b\tc\n\nd"]:
        assert [p for p, _ in pre.pre_tokenize_str(text)] == regex.findall(SUPERBPE, text)


def test_hf_export_encodes_alike(tmp_path):
    texts = _texts() * 3
    sup = Tokenizer.train(texts, vocab_size=1100, superword=True, transition=800, pattern="gpt2")
    path = tmp_path / "tokenizer.json"
    sup.save(str(path), format="hf")
    theirs = tokenizers.Tokenizer.from_file(str(path))
    for text in _texts() + ["by the way, it is 12345 euros!!", "  spaces   and\ttabs\n"]:
        assert theirs.encode(text, add_special_tokens=False).ids == sup.encode(text)
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_file=str(path))
    text = "".join(_texts())
    assert fast.encode(text, add_special_tokens=False) == sup.encode(text)


def test_bad_superword_arguments():
    with pytest.raises(bytepair.TrainingError, match="transition"):
        Tokenizer.train("a b", vocab_size=300, superword=True)
    with pytest.raises(bytepair.TrainingError, match="above"):
        Tokenizer.train("a b", vocab_size=300, superword=True, transition=400)
    with pytest.raises(bytepair.TrainingError, match="only with superword"):
        Tokenizer.train("a b", vocab_size=300, transition=280)
    with pytest.raises(bytepair.TrainingError, match="byte model"):
        Tokenizer.train("a b", model="char", vocab_size=300, superword=True, transition=280)
    with pytest.raises(bytepair.TrainingError, match="word counts"):
        Tokenizer.train({"a": 1}, vocab_size=300, superword=True, transition=280)
    tok = Tokenizer.train("a b a b", num_merges=1)
    with pytest.raises(bytepair.TrainingError, match="model='char' cannot apply"):
        Tokenizer.train("a b", init=tok, model="char")


def test_cli_superword_equals_the_api(tmp_path, capsys):
    from bytepair.cli import main

    f = tmp_path / "c.txt"
    f.write_text("".join(_texts() * 3), encoding="utf-8")
    out = tmp_path / "t.json"
    assert main(["train", str(f), "--superword", "--transition", "800", "--vocab-size", "1000", "--pattern", "gpt2",
                 "--progress", "none", "-o", str(out)]) == 0
    api = Tokenizer.train([f.read_text(encoding="utf-8")], vocab_size=1000, superword=True, transition=800,
                          pattern="gpt2")  # as bytepair train FILE: the file is one document
    loaded = Tokenizer.load(str(out))
    assert loaded.merges == api.merges and loaded.pattern == SUPERBPE
    assert main(["train", str(f), "--transition", "800", "--vocab-size", "1000", "-o", str(out)]) == 1
    assert "--transition applies only with --superword" in capsys.readouterr().err
    assert main(["train", str(f), "--superword", "--merges", "10", "-o", str(out)]) == 1
    assert "--superword needs" in capsys.readouterr().err


def test_core_splitter_equals_the_regex():
    # the core's hand-written superbpe splitter against the regex module on real and tricky text
    from bytepair import _core

    texts = _texts() + ["By the way, it cost 1234 dollars!! Really...\n  ok  end  ", " \u00a0 x  \t y\r\n\r\n/ // ,,a",
                        "٣٤৫ 12345 a1b2 --> <-- ... !? ¿¡ \u3000\u3000x"]
    for text in texts + ["".join(texts)]:
        assert _core.split_words(text, SUPERBPE) == regex.findall(SUPERBPE, text)
