"""bytepair against subword-nmt (``learn-bpe`` / ``apply-bpe``).

What is true, and what these tests prove:

- Codes learned by subword-nmt on real text, loaded by bytepair, segment
  every word exactly as ``apply-bpe`` does; and codes saved by bytepair are
  applied by ``apply-bpe`` exactly as bytepair segments.
- The two application rules are not the same in general. ``apply-bpe``
  repeatedly merges the pair of lowest rank; bytepair's char model applies
  each merge in turn over the whole word. They agree whenever no merge makes
  a symbol that an earlier merge uses (``reapplied_merges(codes) == []``),
  which can only happen when two merges make the same string. Codes where
  that happens load with apply-bpe's rule (``merge_rule="lowest-rank"``):
  a hypothesis property checks that imported codes of every kind segment
  exactly as apply-bpe, and the smallest case where the rules differ is
  pinned below.
- ``apply-bpe`` splits a line on spaces only (a tab or a no-break space is
  part of a word); imported codes split the same way, checked on whole
  lines with every kind of whitespace.
"""

from __future__ import annotations

import io
import itertools
import os
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from subword_nmt.apply_bpe import BPE, encode
from subword_nmt.learn_bpe import learn_bpe

from bytepair import FormatError, Tokenizer, TrainingError
from bytepair.formats import subword_nmt as sn

EXAMPLES = int(os.environ.get("BYTEPAIR_CONFORMANCE_EXAMPLES", "250"))


def _apply(bpe: BPE, words):
    """subword-nmt's output for words: pieces joined with '@@ '."""
    return bpe.segment_tokens(words)


def _mine(tok, words):
    """bytepair's pieces written as apply-bpe writes them: '@@' after every
    piece but a word's last, the end-of-word marker dropped."""
    out = []
    for word in words:
        pieces = tok.tokenize(word)
        last = pieces[-1]
        if last.endswith(sn.MARKER):
            last = last[: -len(sn.MARKER)]
        if not last:  # version 0.1: the marker was a piece of its own
            pieces = pieces[:-1]
            last = pieces[-1]
        out += [p + "@@" for p in pieces[:-1]] + [last]
    return out


def _lines(texts):
    return [" ".join(line.split()) for doc in texts for line in doc.splitlines()]


@pytest.fixture(scope="module")
def learned(real_texts):
    """(codes text, subword-nmt BPE, bytepair tokenizer), learned by
    subword-nmt on real text."""
    corpus = "\n".join(_lines(real_texts[:45]))
    out = io.StringIO()
    learn_bpe(io.StringIO(corpus), out, 3000, min_frequency=2)
    codes = out.getvalue()
    return codes, BPE(io.StringIO(codes)), Tokenizer.from_spec(sn.loads(codes, "learned.codes"))


def test_learned_codes_are_version_0_2_and_plain(learned):
    codes, _, tok = learned
    assert codes.startswith("#version: 0.2\n")
    assert tok.end_of_word == "</w>" and tok.end_of_word_fused and tok.pattern == sn.APPLY_BPE_WORDS
    merges = sn.parse(codes, "x")[1]
    assert len(tok.merges) == len(merges) > 2000
    assert sn.reapplied_merges(merges) == []


def test_learned_codes_segment_every_word_as_apply_bpe(learned, real_texts):
    _, bpe, tok = learned
    words = sorted({w for doc in real_texts for w in doc.split()})
    assert _mine(tok, words) == _apply(bpe, words)


def test_learned_codes_segment_lines_as_apply_bpe(learned, real_texts):
    _, bpe, tok = learned
    for line in _lines(real_texts[45:])[:3000]:
        assert " ".join(_mine(tok, line.split())) == bpe.process_line(line)


def _mine_line(tok, line):
    """bytepair's segmentation of a whole line, written as apply-bpe's
    ``segment`` writes it."""
    out = []
    for piece in tok.tokenize(line):
        out.append(piece[: -len(sn.MARKER)] + " " if piece.endswith(sn.MARKER) else piece + "@@ ")
    return "".join(out).rstrip(" ")


WHITESPACE = [" ", "  ", "\t", "\xa0", "\u3000", "\x0c", "\x1c", "\u2009", " \t "]


def test_learned_codes_split_lines_as_apply_bpe(learned, real_texts):
    """Lines whose words are separated by any whitespace: apply-bpe splits
    on spaces only, and so do imported codes."""
    _, bpe, tok = learned
    for k, line in enumerate(_lines(real_texts[45:])[:1500]):
        words = line.split(" ")
        mixed = "".join(w + WHITESPACE[(k + i) % len(WHITESPACE)] for i, w in enumerate(words))
        assert _mine_line(tok, mixed) == bpe.segment(mixed), mixed


@settings(max_examples=EXAMPLES, deadline=None)
@given(line=st.lists(st.sampled_from(list("theandis") + WHITESPACE + ["\u00e9", "\r", "\n"]), max_size=40).map("".join))
def test_learned_codes_split_hypothesis_lines_as_apply_bpe(learned, line):
    """apply-bpe reads lines with universal newlines: '\\r' and '\\n' end a
    line (and a word); compared line by line."""
    _, bpe, tok = learned
    lines = line.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert _mine_line(tok, line) == " ".join(x for x in (bpe.segment(x) for x in lines) if x)


def test_bytepair_codes_are_applied_by_subword_nmt(real_texts, tmp_path):
    tok = Tokenizer.train(real_texts[:30], model="char", num_merges=2500, end_of_word="</w>", end_of_word_fused=True)
    path = tmp_path / "bytepair.codes"
    tok.save(str(path), format="subword-nmt")
    with open(path, encoding="utf-8") as f:
        bpe = BPE(f)
    words = sorted({w for doc in real_texts for w in doc.split()})
    assert _mine(tok, words) == _apply(bpe, words)
    back = Tokenizer.load(str(path))  # detected from the header
    assert back.tokenize(" ".join(words)) == tok.tokenize(" ".join(words))


def test_version_0_1_codes_separate_marker(real_texts, tmp_path):
    """No header: subword-nmt's version 0.1, '</w>' a symbol of its own."""
    tok = Tokenizer.train(real_texts[:20], model="char", num_merges=1500, end_of_word="</w>")
    path = tmp_path / "v01.codes"
    tok.save(str(path), format="subword-nmt")
    text = path.read_text(encoding="utf-8")
    assert not text.startswith("#version")
    with open(path, encoding="utf-8") as f:
        bpe = BPE(f)
    assert bpe.version == (0, 1)
    words = sorted({w for doc in real_texts for w in doc.split()})
    assert _mine(tok, words) == _apply(bpe, words)
    back = Tokenizer.load(str(path), format="subword-nmt")
    assert not back.end_of_word_fused and back.tokenize(" ".join(words)) == tok.tokenize(" ".join(words))


# ---------------------------------------------------------------- where the rules differ


MINIMAL = "#version: 0.2\nc c\nc cc\nccc b</w>\ncc c\n"


def test_the_smallest_difference():
    """'cccb': c c c b</w> -> (rank 0) cc c b</w> -> (rank 3) ccc b</w>.
    apply-bpe then merges (ccc, b</w>), whose rank 2 is lower than 3; the
    in-order rule has passed merge 2 already and stops. Imported codes use
    apply-bpe's rule."""
    merges = sn.parse(MINIMAL, "x")[1]
    assert sn.reapplied_merges(merges) == [(3, 2)]
    bpe = BPE(io.StringIO(MINIMAL))
    assert _apply(bpe, ["cccb"]) == ["cccb"]
    in_order = Tokenizer.from_merges(merges, model="char", end_of_word="</w>", end_of_word_fused=True, alphabet="bc")
    assert _mine(in_order, ["cccb"]) == ["ccc@@", "b"]
    tok = Tokenizer.from_spec(sn.loads(MINIMAL))
    assert tok.merge_rule == "lowest-rank"
    assert _mine(tok, ["cccb"]) == ["cccb"]


@st.composite
def codes_and_words(draw):
    """Random codes over a small alphabet (every symbol a character or made
    earlier, as learn-bpe's are), often with a string made a second time
    from other parts after a merge has used it; and random words."""
    alphabet = "abc"
    symbols = list(alphabet) + [c + "</w>" for c in alphabet]
    merges = []

    def add(pair):
        if pair not in merges:
            merges.append(pair)
            symbols.append(pair[0] + pair[1])

    for _ in range(draw(st.integers(1, 10))):
        left = draw(st.sampled_from([s for s in symbols if not s.endswith("</w>")]))
        add((left, draw(st.sampled_from(symbols))))
        remakes = [(s[:k], s[k:]) for s in symbols for k in range(1, len(s) - 1)
                   if s[:k] in symbols and s[k:] in symbols and not s[:k].endswith("</w>")
                   and (s[:k], s[k:]) not in merges]
        if remakes and draw(st.booleans()):
            left, right = draw(st.sampled_from(remakes))
            if not right.endswith("</w>"):
                add((left + right, draw(st.sampled_from(symbols))))
            add((left, right))
    words = draw(st.lists(st.text(alphabet=alphabet, min_size=1, max_size=40), min_size=1, max_size=20))
    return merges, words


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(case=codes_and_words())
def test_imported_codes_segment_as_apply_bpe(case):
    merges, words = case
    codes = "#version: 0.2\n" + "".join(f"{l} {r}\n" for l, r in merges)
    tok = Tokenizer.from_spec(sn.loads(codes))
    ranks = {pair: i for i, pair in reversed(list(enumerate(merges)))}
    reverse = {l + r: (l, r) for l, r in merges}
    for word in words:
        expected = list(encode(word, ranks, reverse, None, "@@", (0, 2), {}))
        pieces = tok.tokenize(word)
        assert pieces[:-1] + [pieces[-1][: -len(sn.MARKER)]] == expected, (merges, word)


def test_exhaustive_small_words_for_the_minimal_codes():
    """Every word of up to 7 letters from {b, c}: imported codes segment each
    as apply-bpe does, and the in-order rule differs exactly for the words
    ending in b after a run of 3 or 5 c's (the run's pairs leave 'cc c',
    merge 3 makes 'ccc' and apply-bpe goes back to merge 2)."""
    tok = Tokenizer.from_spec(sn.loads(MINIMAL))
    in_order = Tokenizer.from_merges(sn.parse(MINIMAL, "x")[1], model="char", end_of_word="</w>",
                                     end_of_word_fused=True, alphabet="bc")
    bpe = BPE(io.StringIO(MINIMAL))
    differing = 0
    for n in range(1, 8):
        for letters in itertools.product("bc", repeat=n):
            word = "".join(letters)
            assert _mine(tok, [word]) == _apply(bpe, [word]), word
            run = re.search(r"(?<!c)(c*)b$", word)
            expected_same = not (run and len(run.group(1)) in (3, 5))
            assert (_mine(in_order, [word]) == _apply(bpe, [word])) == expected_same, word
            differing += not expected_same
    assert differing == 10


def test_codes_with_reapplied_merges_round_trip_and_warn(tmp_path):
    """The lowest-rank rule is kept by the native format; writing codes from
    an in-order tokenizer whose merges differ under apply-bpe warns."""
    tok = Tokenizer.from_spec(sn.loads(MINIMAL))
    tok.save(str(tmp_path / "native.json"))
    back = Tokenizer.load(str(tmp_path / "native.json"))
    assert back.merge_rule == "lowest-rank" and back.tokenize("cccb cccccb") == tok.tokenize("cccb cccccb")
    assert sn.dumps(tok) == MINIMAL  # apply-bpe's own rule: nothing to warn about
    in_order = Tokenizer.from_merges(sn.parse(MINIMAL, "x")[1], model="char", end_of_word="</w>",
                                     end_of_word_fused=True, alphabet="bc")
    with pytest.warns(UserWarning, match="merge 4 makes a symbol that merge 3 uses"):
        sn.dumps(in_order)
    with pytest.raises(FormatError, match="merge 4 makes a symbol that merge 3 uses"):
        tok.save(str(tmp_path / "tokenizer.json"), format="hf")
    with pytest.raises(TrainingError, match="lowest-rank"):
        Tokenizer.train("cccb", init=tok, num_merges=1)


# ---------------------------------------------------------------- what cannot be written or read


def test_codes_cannot_hold_other_models(real_texts, tmp_path):
    byte = Tokenizer.train(real_texts[:2], vocab_size=300)
    char_regex = Tokenizer.train(real_texts[:2], model="char", num_merges=20, pattern=r"\w+", end_of_word_fused=True)
    char_marker = Tokenizer.train(real_texts[:2], model="char", num_merges=20, end_of_word="_", end_of_word_fused=True)
    char_special = Tokenizer.train(real_texts[:2], model="char", num_merges=20, special_tokens=["<s>"], end_of_word_fused=True)
    for tok, message in [(byte, "char-model"), (char_regex, "pattern"), (char_marker, "'</w>'"), (char_special, "special")]:
        with pytest.raises(FormatError, match=message):
            tok.save(str(tmp_path / "x.codes"), format="subword-nmt")
    assert not os.listdir(tmp_path)
