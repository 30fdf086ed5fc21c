"""Unicode classes of bytepair's pipeline against Hugging Face's, over every
code point (surrogates aside): HF runs ``Split`` regexes in Oniguruma and its
other pre-tokenizers and normalizers with Rust std / unicode crates; bytepair
translates the regexes (``regex_dialects.from_onig``) for fancy-regex
(regex-syntax's Unicode 16 tables). Each class is run over one text holding
every code point, as a ``Split`` that removes what it matches in bytepair, and
as a ``Replace`` normalizer that removes it in HF (the same Oniguruma regex,
search and leftmost match as HF's ``Split``, without a Python tuple per piece:
three times cheaper); the pre-tokenizers and normalizers are run over the same
text.
docs/decisions.md "Unicode versions" says what was measured.
"""

from __future__ import annotations

import functools
import json

import pytest
import tokenizers
from tokenizers import Regex, normalizers, pre_tokenizers

from bytepair.errors import FormatError
from bytepair.pipeline import from_hf_json

TEXT = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)

CLASSES = [
    r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{M}", r"\p{N}", r"\p{Nd}", r"\p{P}", r"\p{S}", r"\p{Z}", r"\p{C}", r"\s",
    r"\d", r"\w", r"\W", r"[\w]", r"[\W]", r"[^\w\s]", r"\p{Word}", r"\p{Han}", r"\p{Alpha}", r"\p{Punct}",
    r"\p{Graph}", r"\p{Print}", r"\p{XDigit}", r"[[:alpha:]]", r"[[:alnum:]]", r"[[:digit:]]", r"[[:space:]]",
    r"[[:upper:]]", r"[[:lower:]]", r"[[:word:]]", r"[[:cntrl:]]", r"[[:graph:]]", r"[[:print:]]", r"[[:blank:]]",
    r"[[:punct:]]", r"[[:^alpha:]]", r"(?i)\p{Lu}", r"(?i)\p{L}", r"(?i)[\p{Lu}\p{Lt}]", r"(?i)\w", r"\pL",
]


def _bytepair(pre=None, norm=None):
    desc = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": pre, "normalizer": norm,
            "decoder": None, "added_tokens": []}
    return from_hf_json(json.dumps(desc))


def _hf(pre=None, norm=None):
    return tokenizers.Tokenizer.from_str(json.dumps(
        {"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": pre,
         "normalizer": norm}))


def _pieces(tok, text):
    return [p for _id, _norm, items in tok._core.pre_tokenize(text) for p, _ in items]


@functools.lru_cache(maxsize=None)
def _chunks():
    # the text in 8 parts, so that a failure names a smaller range
    step = len(TEXT) // 8 + 1
    return [TEXT[i:i + step] for i in range(0, len(TEXT), step)]


@pytest.mark.parametrize("cls", CLASSES)
def test_class_over_every_code_point(cls):
    pre = {"type": "Split", "pattern": {"Regex": cls}, "behavior": "Removed", "invert": False}
    hf = normalizers.Replace(Regex(cls), "")
    tok = _bytepair(pre)
    for chunk in _chunks():
        left_hf, left_bp = hf.normalize_str(chunk), "".join(_pieces(tok, chunk))
        if left_hf == left_bp:
            # the same text left is the same set of code points: building the two sets (~100k characters each)
            # was most of this test's time, and is only needed when the texts differ
            continue
        diff = sorted(set(left_hf) ^ set(left_bp))
        assert not diff, f"{cls}: {len(diff)} code points differ, first {[f'U+{ord(c):04X}' for c in diff[:8]]}"


@pytest.mark.parametrize("pre", [
    {"type": "Whitespace"}, {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Isolated"},
    {"type": "Digits", "individual_digits": True}, {"type": "Digits", "individual_digits": False},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
], ids=lambda p: p["type"] + str(p.get("individual_digits", "")))
def test_pre_tokenizer_over_every_code_point(pre):
    tok, hf = _bytepair(pre), _hf(pre).pre_tokenizer
    for chunk in _chunks():
        assert _pieces(tok, chunk) == [p for p, _ in hf.pre_tokenize_str(chunk)]


@pytest.mark.parametrize("norm", [
    {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"}, {"type": "Lowercase"},
    {"type": "StripAccents"}, {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]},
], ids=lambda n: n["type"] + "".join(x["type"] for x in n.get("normalizers", [])))
def test_normalizer_over_every_code_point(norm):
    tok, hf = _bytepair(None, norm), _hf(None, norm).normalizer
    text = "|".join(TEXT)  # each code point alone (no composition across them)
    got = "".join(n for _id, n, _items in tok._core.pre_tokenize(text))
    want = hf.normalize_str(text)
    if got != want:
        a, b = got.split("|"), want.split("|")
        bad = [f"U+{ord(c):04X}" for c, x, y in zip(TEXT, a, b) if x != y][:8]
        pytest.fail(f"{len(a)} vs {len(b)} parts; first code points that differ: {bad}")


ASCII = "".join(chr(cp) for cp in range(0x20, 0x7F)) + "\t\n"


@pytest.mark.parametrize("cls", [r"[a~~b]", r"[~~]", r"[!-~~]", r"[+--]", r"[--/]", r"[a-z--]", r"[\w--\d]"])
def test_class_set_operators_of_fancy_regex(cls):
    """``--`` and ``~~`` are class difference and symmetric difference in fancy-regex but text (or ranges) in
    Oniguruma: a class holding them is run with HF's meaning or refused naming the regex, never with
    fancy-regex's."""
    pre = {"type": "Split", "pattern": {"Regex": cls}, "behavior": "Removed", "invert": False}
    try:
        hf = pre_tokenizers.Split(Regex(cls), behavior="removed")
    except Exception:  # Oniguruma refuses it too
        hf = None
    try:
        tok = _bytepair(pre)
    except FormatError as e:
        assert repr(cls) in str(e) and "\n" not in str(e)
        return
    assert hf is not None, f"{cls}: Oniguruma refuses it, bytepair loaded it"
    left_hf = set("".join(p for p, _ in hf.pre_tokenize_str(ASCII)))
    assert set("".join(_pieces(tok, ASCII))) == left_hf, cls
