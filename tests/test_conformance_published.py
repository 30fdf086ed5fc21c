"""Every published tokenizer reachable here against its own library on
hostile-but-valid text (tests/hostile_text.py: every plane, combining stacks,
emoji sequences, RTL, NFKC-sensitive characters, controls, line breaks of
every kind, whitespace runs, digits of every script, contractions, the
tokenizer's own added/special token strings with spaces around them).

Oracles (tests/published_oracles.py): HF ``tokenizers`` for ``tokenizer.json``
(ids with and without special tokens, offsets, decode with and without
skipping special tokens), ``sentencepiece`` for ``.model`` (ids, BOS ids,
offsets, decode), ``mistral_common`` for ``tekken.json`` (ids, BOS/EOS,
decode), ``tiktoken`` for ``.tiktoken`` (ids, decode). Variants of Llama 3's
file reach what published files rarely use: a Split pattern with Oniguruma's
classes (``\\w``, POSIX brackets, ``\\pL``, ``(?i)\\p{Lu}``), and added tokens
of every lstrip/rstrip/single_word/normalized/special combination.
``scripts/sweep_published.py`` runs the same with tens of thousands of texts.
"""

from __future__ import annotations

import functools

import pytest

from hostile_text import hostile_texts
from published_oracles import OracleFailed, cases, compare

CASES = cases()
N = 250


@functools.lru_cache(maxsize=1)  # one tokenizer and its oracle at a time: all 24 held ~1.6 GB in the test process
def loaded(name):
    return CASES[name].load()


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_text_equals_own_library(name):
    tok, oracle = loaded(name)
    case = CASES[name]
    diffs, compared = [], 0
    for text in hostile_texts(12, N, case.specials()):
        try:
            d = compare(case.kind, tok, oracle, text)
        except OracleFailed:
            continue  # HF itself panics ("AddedVocabulary bad split"): nothing to compare
        compared += 1
        if d is not None:
            diffs.append((text, d))
    assert compared >= N * 0.9, f"{N - compared} texts the library itself fails on"
    assert not diffs, f"{len(diffs)} of {compared} differ; first: {diffs[0]!r}"


# minimal texts of the mismatches the sweep found (each failed before its fix)
@pytest.mark.parametrize("name,text", [
    ("hf:llama3-onig-classes", " \u00a0"),  # [[:space:]] is Unicode in Oniguruma, ASCII in regex-syntax
    ("hf:llama3-added-options", "😀  "),  # "  " (lstrip) inside 😀's rstrip: HF drops it (was an empty token)
])
def test_found_mismatches(name, text):
    tok, oracle = loaded(name)
    assert compare(CASES[name].kind, tok, oracle, text) is None


@functools.lru_cache(maxsize=None)
def removing(pattern):
    """Tortoise's file (small: fast to load) whose pre-tokenizer first removes what ``pattern`` matches
    (so a class that holds a character in one library and not in the other changes the ids)."""
    import json

    import tokenizers

    from bytepair import Tokenizer
    from published_oracles import _paths, _written

    d = json.load(open(_paths()["tortoise/tokenizer.json"], encoding="utf-8"))
    d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Removed", "invert": False}, d["pre_tokenizer"]]}
    path = _written("tortoise-removing-" + str(abs(hash(pattern))), d)
    return Tokenizer.load(path), tokenizers.Tokenizer.from_file(path)


# Oniguruma's meaning of each (measured over every code point: tests/test_unicode_classes_hf.py)
@pytest.mark.parametrize("pattern,text", [
    (r"\w", "m\u00b2 \u00bd"),  # a bare \w holds ²³¹¼½¾ ...
    (r"\w", "a\u200db\u200c"),  # ... and not the joiners
    (r"\W", "m\u00b2\u200d"),
    (r"[\w]", "a\u200db"),  # in a class \w only lacks the joiners
    (r"[^\W\d]", "a\u200db\u00b2"),
    (r"\p{Word}", "x\u00b9"),
    (r"[[:punct:]]", "a\u00a2b+c"),  # POSIX brackets are Unicode classes
    (r"[[:alpha:]]", "\u00e9t\u00e9 1"),
    (r"[[:space:]]", "a\u00a0b\u3000c"),
    (r"[[:^alnum:]]", "\u0661 x \u00e9"),
    (r"[[:upper:][:digit:]]", "\u00c9a\u0663"),
    (r"\p{Graph}", "a\u00adb \u0600"),
    (r"\pL", "pLa"),  # \pL is the text "pL"
    (r"(?i:\p{Lu})", "aAbB"),  # a bare \p{..} is not case-folded under (?i)
    (r"(?i)\p{L}", "a\u0345b"),
])
def test_oniguruma_classes(pattern, text):
    tok, oracle = removing(pattern)
    e = oracle.encode(text)
    assert tok.encode(text) == e.ids
    assert tok.encode_with_offsets(text) == (e.ids, e.offsets)


def test_word_boundary_is_refused():
    from bytepair.errors import BytepairError

    with pytest.raises(BytepairError, match=r"word boundary '\\\\b' at offset 0 uses Oniguruma's word"):
        removing(r"\bx")


def test_rstrip_over_a_longer_match_does_not_panic():
    # HF panics ("AddedVocabulary bad split") when a later match ends inside an rstrip; bytepair drops it,
    # as HF drops one that ends where the rstrip ends
    tok, oracle = loaded("hf:llama3-added-options")
    with pytest.raises(BaseException, match="bad split"):
        oracle.encode("😀    ")
    assert tok.encode("😀    ") == oracle.encode("😀 ").ids
    assert tok.encode_with_offsets("😀    ")[0] == oracle.encode("😀 ").ids
