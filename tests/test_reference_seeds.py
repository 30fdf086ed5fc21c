"""The pure-Python reference (bytepair.reference) against the three seed texts.

The expected outputs below are copied verbatim from tests/data/seeds/: they
are the independent source of truth. The unit tests after them check the
reference's own rules (tie-breaks, byte round trip, errors, special tokens)
on corpora small enough to work out by hand.

Run: PYTHONPATH=python python -m pytest tests/test_reference_seeds.py -q
"""

import importlib
import pathlib
import re
import string
import sys
import types
import warnings

import pytest


def _load_reference():
    """import bytepair.reference without needing the compiled extension"""
    try:
        return importlib.import_module("bytepair.reference")
    except ImportError:
        pass
    # bytepair/__init__.py failed (e.g. bytepair._core is not built): load the
    # package directory without running __init__.py, then drop the stand-in so
    # that later imports of the real package behave as before.
    for name in [n for n in sys.modules if n == "bytepair" or n.startswith("bytepair.")]:
        del sys.modules[name]
    stub = types.ModuleType("bytepair")
    stub.__path__ = [str(pathlib.Path(__file__).resolve().parents[1] / "python" / "bytepair")]
    sys.modules["bytepair"] = stub
    try:
        return importlib.import_module("bytepair.reference")
    finally:
        del sys.modules["bytepair"]


ref = _load_reference()
errors = sys.modules["bytepair.errors"]


# -----------------------------------------------------------------------------
# seed 000: alphabetical tie-break, "_" marker, 6 merges

SEED_000_CORPUS = ["lower", "lowest", "newer", "newest", "wider", "low", "new"]

SEED_000_TRACE = """\
merge 1: w + e -> we  (count 4)
merge 2: l + o -> lo  (count 3)
merge 3: n + e -> ne  (count 3)
merge 4: r + _ -> r_  (count 3)
merge 5: lo + we -> lowe  (count 2)
merge 6: ne + we -> newe  (count 2)

lowe r_
lowe s t _
newe r_
newe s t _
w i d e r_
lo w _
ne w _"""

SEED_000_MERGES = [("w", "e"), ("l", "o"), ("n", "e"), ("r", "_"), ("lo", "we"), ("ne", "we")]

SEED_000_TOKENIZE = """\
lower    -> ['lowe', 'r_']  (2 tokens)
slower   -> ['s', 'lowe', 'r_']  (3 tokens)
newest   -> ['newe', 's', 't', '_']  (4 tokens)
renew    -> ['r', 'e', 'ne', 'w', '_']  (5 tokens)"""


def seed_000_model():
    return ref.train(SEED_000_CORPUS, model="char", end_of_word="_",
                     tie_break="alphabetical", num_merges=6)


def test_seed_000_trace_and_words():
    m = seed_000_model()
    printed = "\n".join(m.trace() + [""] + [" ".join(w) for w in m.words])
    assert printed == SEED_000_TRACE
    assert m.merges == SEED_000_MERGES
    assert m.merge_counts == [4, 3, 3, 3, 2, 2]


def test_seed_000_tokenize():
    m = ref.from_merges(SEED_000_MERGES, model="char", end_of_word="_")
    lines = []
    for w in ["lower", "slower", "newest", "renew"]:
        t = m.tokenize(w)
        lines.append(f"{w:8} -> {t}  ({len(t)} tokens)")
    assert "\n".join(lines) == SEED_000_TOKENIZE
    # the trained model segments the same way
    trained = seed_000_model()
    for w in ["lower", "slower", "newest", "renew"]:
        assert trained.tokenize(w) == m.tokenize(w)


def test_seed_000_ids_and_decode():
    m = seed_000_model()
    # alphabet d e i l n o r s t w (sorted), then the marker, then the merges
    assert [m.vocab[i] for i in range(m.n_vocab)] == list("deilnorstw") + ["_", "we", "lo", "ne", "r_", "lowe", "newe"]
    assert m.encode("lower newest") == [15, 14, 16, 7, 8, 10]
    assert m.decode(m.encode("lower newest")) == "lower newest"
    assert m.decode(m.encode("  wider\n low  ")) == "wider low"


# -----------------------------------------------------------------------------
# seed 001: "<w>" marker, the ten printed rules applied to new words

SEED_001_RULES = """\
 1. 't'   + 'h'   → 'th'
 2. 'th'  + 'e'   → 'the'
 3. 'the' + '<w>' → 'the<w>'
 4. 's'   + '<w>' → 's<w>'
 5. 'n'   + '<w>' → 'n<w>'
 6. 't'   + '<w>' → 't<w>'
 7. 'd'   + 'o'   → 'do'
 8. 'do'  + 'g'   → 'dog'
 9. 'dog' + '<w>' → 'dog<w>'
10. 'q'   + 'u'   → 'qu'"""

SEED_001_ENCODED = """\
quickest    → ('qu', 'i', 'c', 'k', 'e', 's', 't<w>')
smallest    → ('s', 'm', 'a', 'l', 'l', 'e', 's', 't<w>')
thermometer → ('the', 'r', 'm', 'o', 'm', 'e', 't', 'e', 'r', '<w>')
dog         → ('dog<w>',)"""


def seed_001_rules():
    rules = []
    for line in SEED_001_RULES.splitlines():
        left, right, merged = re.fullmatch(r"\s*\d+\. '(.*)'\s+\+ '(.*)'\s+→ '(.*)'", line).groups()
        assert left + right == merged
        rules.append((left, right))
    return rules


def seed_001_model():
    return ref.from_merges(seed_001_rules(), model="char", end_of_word="<w>",
                           alphabet=string.ascii_lowercase)


def test_seed_001_encode():
    m = seed_001_model()
    words = ["quickest", "smallest", "thermometer", "dog"]
    lines = [f"{w:<11} → {tuple(m.tokenize(w))}" for w in words]
    assert "\n".join(lines) == SEED_001_ENCODED
    for w in words:
        assert m.decode(m.encode(w)) == w


def test_seed_001_ids_and_decode():
    m = seed_001_model()
    # a..z are 0..25, the marker 26, the ten merges 27..36
    assert m.vocab[0] == "a" and m.vocab[25] == "z" and m.vocab[26] == "<w>"
    assert [m.vocab[27 + k] for k in range(10)] == [a + b for a, b in seed_001_rules()]
    assert m.n_vocab == 37
    assert m.encode("dog") == [35]
    # seed 001's decode is the one-word case; several words get one space between them
    assert m.decode(m.encode("the quickest dog")) == "the quickest dog"


# -----------------------------------------------------------------------------
# seed 002: word counts, no marker, "first" tie-break (Counter.most_common)

SEED_002_OUTPUT = """\
1 merge ('e', 's')
2 merge ('es', 't')
3 merge ('l', 'o')
4 merge ('lo', 'w')
5 merge ('n', 'e')
[('low',), ('low', 'e', 'r'), ('ne', 'w', 'est'), ('w', 'i', 'd', 'est')]"""


def test_seed_002_merges_and_words():
    m = ref.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, model="char",
                  end_of_word=None, num_merges=5)
    lines = [f"{k} merge {pair}" for k, pair in enumerate(m.merges, 1)]
    lines.append(str(m.words))
    assert "\n".join(lines) == SEED_002_OUTPUT
    # no marker: words are concatenated on decode (lossy, as in the seed)
    assert m.decode(m.encode("low newest")) == "lownewest"


# -----------------------------------------------------------------------------
# tie-break rules, worked out by hand


def test_tie_breaks_first_vs_id():
    # {"yz": 5, "xy": 2, "xyz": 2}, no marker. alphabet x=0 y=1 z=2.
    # step 1: (y,z) = 5 + 2 = 7, (x,y) = 2 + 2 = 4 -> merge y+z (id 3), every rule.
    # step 2: words [yz] [x y] [x yz]: (x,y) = 2, (x,yz) = 2, a tie.
    #   first: (x,y) occurs first (word "xy" comes before "xyz")
    #   alphabetical: "xy" -> [-120,-121] vs "xyz" -> [-120,-121,-122]: the longer list is larger -> (x,yz)
    #   pair-id: (0,1) < (0,3) -> (x,y)
    corpus = {"yz": 5, "xy": 2, "xyz": 2}
    second = {}
    for rule in ("first", "alphabetical", "pair-id"):
        m = ref.train(corpus, model="char", end_of_word=None, num_merges=2, tie_break=rule)
        assert m.merges[0] == ("y", "z")
        second[rule] = m.merges[1]
    assert second == {"first": ("x", "y"), "alphabetical": ("x", "yz"), "pair-id": ("x", "y")}


def test_tie_breaks_all_differ_from_first():
    # {"ab": 5, "bd": 2, "abc": 2}, no marker. alphabet a=0 b=1 c=2 d=3.
    # step 1: (a,b) = 5 + 2 = 7 wins -> "ab" (id 4).
    # step 2: words [ab] [b d] [ab c]: (b,d) = 2, (ab,c) = 2, a tie.
    #   first: (b,d) (word "bd" comes first)
    #   alphabetical: "abc" [-97,...] beats "bd" [-98,...] -> (ab,c)
    #   pair-id: (1,3) < (4,2) -> (b,d)
    # and {"ab": 5, "abc": 2, "bd": 2}: first becomes (ab,c), pair-id stays (b,d).
    def second(corpus, rule):
        return ref.train(corpus, model="char", end_of_word=None, num_merges=2, tie_break=rule).merges[1]

    c1 = {"ab": 5, "bd": 2, "abc": 2}
    assert [second(c1, r) for r in ("first", "alphabetical", "pair-id")] == [("b", "d"), ("ab", "c"), ("b", "d")]
    c2 = {"ab": 5, "abc": 2, "bd": 2}
    assert [second(c2, r) for r in ("first", "alphabetical", "pair-id")] == [("ab", "c"), ("ab", "c"), ("b", "d")]


def test_tie_breaks_byte_model():
    # {"cd": 1, "ab": 1}: (c,d) and (a,b) both count 1.
    # first: (c,d); alphabetical: bytes 97,98 < 99,100 -> (a,b); pair-id: ids are byte values -> (a,b)
    got = {r: ref.train({"cd": 1, "ab": 1}, model="byte", num_merges=1, tie_break=r).merges
           for r in ("first", "alphabetical", "pair-id")}
    assert got == {"first": [(b"c", b"d")], "alphabetical": [(b"a", b"b")], "pair-id": [(b"a", b"b")]}


def test_pair_counts_every_position_and_no_overlap():
    # "aaa" holds (a,a) twice; merging gives "aa a"
    m = ref.train({"aaa": 3}, model="char", end_of_word=None, num_merges=1)
    assert m.merge_counts == [6]
    assert m.words == [("aa", "a")]


# -----------------------------------------------------------------------------
# byte model


def test_byte_model_round_trip():
    corpus = ["안녕하세요 세계", "hello hello world", "👋🏽 🎉 emoji 👋🏽", "tabs\tand\nnewlines  "]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.TrainingWarning)
        m = ref.train(corpus, model="byte", vocab_size=300)
    assert m.pattern == "cl100k"
    assert 256 < m.n_vocab <= 300
    for s in ["안녕하세요", "👋🏽 hi 🎉", "", "hello world\n\n  x", "\x00\xff unseen ünïcödé"]:
        ids = m.encode(s)
        assert m.decode(ids) == s
        assert m.decode_bytes(ids) == s.encode("utf-8")
        assert b"".join(m.tokenize(s)) == s.encode("utf-8")
    assert m.encode("") == []


def test_byte_model_ids_and_tiktoken_rule():
    # merge k is 256 + k; without a pattern the whole text is one piece.
    m = ref.from_merges([(b"a", b"b"), (b"b", b"c"), (b"ab", b"c")], model="byte")
    assert m.vocab[256] == b"ab" and m.vocab[258] == b"abc"
    assert m.encode("abc") == [258]           # the piece is itself a token
    # "bcab": (b,c)=257, (c,a) none, (a,b)=256 -> ab first (lowest id): b c ab; then (b,c)=257 -> bc ab
    assert m.encode("bcab") == [257, 256]
    assert m.trace()[0] == "merge 1: a + b -> ab"


def test_byte_trace_escapes_invalid_utf8():
    m = ref.train({"é": 2}, model="byte", pattern="gpt2")
    # each token printed on its own: the halves are invalid UTF-8, the merge is "é"
    assert m.trace() == ["merge 1: \\xc3 + \\xa9 -> é  (count 2)"]


# -----------------------------------------------------------------------------
# char model: unknown characters


def test_char_unknown_characters():
    m = seed_001_model()
    assert m.tokenize("dog!") == ["dog", "!", "<w>"]      # tokenize never fails
    with pytest.raises(errors.EncodeError, match=r"'!' at position 7"):
        m.encode("the dog!")
    fb = ref.from_merges(seed_001_rules(), end_of_word="<w>", alphabet=string.ascii_lowercase, byte_fallback=True)
    # ids: a..z 0..25, <w> 26, <0x00>..<0xFF> 27..282, merges 283..
    assert fb.vocab[27] == "<0x00>" and fb.vocab[27 + 0x41] == "<0x41>"
    ids = fb.encode("dog é")
    assert ids[-3:] == [27 + 0xC3, 27 + 0xA9, 26]
    assert fb.decode(ids) == "dog é"
    unk = ref.from_merges(seed_001_rules(), end_of_word="<w>", alphabet=string.ascii_lowercase,
                          special_tokens=["<unk>"], unk_token="<unk>")
    assert unk.encode("é") == [unk.special_tokens["<unk>"], 26]


# -----------------------------------------------------------------------------
# errors


def test_error_empty_corpus():
    for corpus in ([], "", ["   ", "\n"], {}):
        with pytest.raises(errors.TrainingError, match="empty corpus"):
            ref.train(corpus, model="char")
    with pytest.raises(errors.TrainingError, match="empty corpus"):
        ref.train(["<|eot|>"], model="byte", special_tokens=["<|eot|>"])


def test_error_vocab_size_too_small():
    with pytest.raises(errors.TrainingError, match="vocab_size=256"):
        ref.train("hello", model="byte", vocab_size=256, special_tokens=["<|eot|>"])   # needs 257
    ref.train("hello", model="byte", vocab_size=257, special_tokens=["<|eot|>"])        # zero merges is fine
    with pytest.raises(errors.TrainingError):
        ref.train(SEED_000_CORPUS, model="char", end_of_word="_", vocab_size=10)        # 10 letters + marker = 11


def test_error_bad_options():
    bad = [dict(num_merges=-1), dict(min_frequency=0), dict(tie_break="random"), dict(model="word")]
    for kwargs in bad:
        with pytest.raises(errors.TrainingError):
            ref.train(["low"], **{"model": "char", **kwargs})
    with pytest.raises(errors.TrainingError, match="positive"):
        ref.train({"low": 0}, model="char")
    with pytest.raises(errors.PatternError):
        ref.train(["low"], model="byte", pattern="(")


def test_error_unknown_id():
    m = seed_000_model()
    with pytest.raises(errors.UnknownTokenError, match="17") as info:
        m.decode([1, 17])
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)


def test_disallowed_special_token_message():
    m = ref.train("hello world", model="byte", num_merges=3, special_tokens=["<|eot|>"])
    expected = (
        "Encountered text corresponding to disallowed special token '<|eot|>'.\n"
        "If you want this text to be encoded as a special token, pass it to `allowed_special`, "
        "e.g. `allowed_special={'<|eot|>', ...}`.\n"
        "If you want this text to be encoded as normal text, disable the check for this token by passing "
        "`disallowed_special=(enc.special_tokens_set - {'<|eot|>'})`.\n"
        "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
    )
    with pytest.raises(errors.DisallowedSpecialError) as info:
        m.encode("hi <|eot|>")
    assert str(info.value) == expected
    eot = m.special_tokens["<|eot|>"]
    assert eot == 256 + 3
    assert m.encode("hi<|eot|>", allowed_special="all")[-1] == eot
    assert m.encode("hi<|eot|>", allowed_special={"<|eot|>"}) == m.encode_ordinary("hi") + [eot]
    plain = m.encode("hi<|eot|>", disallowed_special=())
    assert eot not in plain and plain == m.encode_ordinary("hi<|eot|>")
    assert m.decode(m.encode("a<|eot|>b", allowed_special="all")) == "a<|eot|>b"


# -----------------------------------------------------------------------------
# special tokens


def test_special_tokens_cut_words_in_training():
    m = ref.train(["hello<|eot|>world"], model="char", end_of_word=None, num_merges=0,
                  special_tokens=["<|eot|>"])
    assert m.words == [tuple("hello"), tuple("world")]
    assert ref.count_words("ab<|x|>ab", special_tokens=["<|x|>"]) == {"ab": 2}
    # without the special token its characters are part of a word
    assert ref.count_words("ab<|x|>ab") == {"ab<|x|>ab": 1}


def test_special_token_ids_and_longest_match():
    m = ref.train({"ab": 3}, model="byte", num_merges=1, special_tokens=["<|a|>", "<|a|>b"])
    assert m.special_tokens == {"<|a|>": 257, "<|a|>b": 258}
    assert m.vocab[258] == b"<|a|>b" and m.n_vocab == 259
    # at one position the longest special token wins
    assert m.encode("<|a|>b", allowed_special="all") == [258]
    explicit = ref.train({"ab": 3}, model="byte", num_merges=1, special_tokens={"<|eot|>": 1000})
    assert explicit.special_tokens == {"<|eot|>": 1000} and explicit.n_vocab == 1001
    with pytest.raises(errors.TrainingError):
        ref.train({"ab": 3}, model="byte", num_merges=1, special_tokens={"<|eot|>": 100})   # a byte's id


def test_warning_when_training_stops_early():
    with pytest.warns(errors.TrainingWarning, match=r"after 1 merges .*no adjacent pair"):
        m = ref.train(["ab"], model="char", end_of_word=None, num_merges=5)
    assert m.merges == [("a", "b")]
    with pytest.warns(errors.TrainingWarning, match="min_frequency=3"):
        ref.train({"ab": 2}, model="char", end_of_word=None, vocab_size=10, min_frequency=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ref.train(["ab"], model="char", end_of_word=None)   # no target: merging until done is not early


def test_fused_marker():
    m = ref.train(["low", "lowest"], model="char", end_of_word="</w>", end_of_word_fused=True, num_merges=2)
    # initial symbols l o w</w> and l o w e s t</w>; base sorted as strings
    assert [m.vocab[i] for i in range(7)] == ["e", "l", "o", "s", "t</w>", "w", "w</w>"]
    assert m.merges == [("l", "o"), ("lo", "w</w>")]
    assert m.tokenize("low lot") == ["low</w>", "lo", "t</w>"]
    assert m.decode(m.encode("low lowest")) == "low lowest"
