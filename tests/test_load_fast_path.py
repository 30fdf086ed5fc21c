"""The loaders' one-pass core path (``_core.byte_vocab``, ``_core.tiktoken_ranks``, ``_core.hf_vocab_ok``,
``_core.merges_repeat_a_token``) against the checked Python path it replaces: the same ids, merges and
tokens on the real files, and the same errors, word for word, on every fault, with Hugging Face refusing
the malformed merges that bytepair refuses."""

from __future__ import annotations

import json
import os

import pytest
import tokenizers

from bytepair import Tokenizer, _core
from bytepair.errors import FormatError
from bytepair.formats import hf, tiktoken
from bytepair.formats.convert import BYTE_TO_UNICODE, byte_ranks, _checked_byte_ranks

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCABS = os.path.join(ROOT, "data", "vocabs")
WHERE = ("f: vocab", lambda k: f"f: merge {k}")


def _both(vocab, specials, merges, ignore_merges=False):
    """(fast result or error text, checked result or error text)."""
    out = []
    for run in (lambda: byte_ranks(vocab, specials, merges, *WHERE, ignore_merges),
                lambda: _checked_byte_ranks(vocab, specials, [tuple(m.split(" ") if isinstance(m, str) else m) for m in merges], *WHERE, ignore_merges)):
        try:
            ids, triples = run()
            out.append((ids, [tuple(t) for t in triples]))
        except FormatError as e:
            out.append(str(e))
    return out


BYTES = {c: b for b, c in BYTE_TO_UNICODE.items()}
BASE = dict(BYTES) | {"Ġa": 256, "Ġab": 257, "zz": 258}


@pytest.mark.parametrize("vocab, specials, merges, ignore_merges, fault", [
    (BASE, {}, [["Ġ", "a"], ["Ġa", "b"]], False, None),
    (BASE, {}, [["Ġ", "a"], ["Ġa", "b"]], True, "made by no merge"),  # "zz" under ignore_merges
    (BASE, {}, [["Ġ", "a"], ["Ġ", "ab"]], False, "uses 'ab', which is not in the vocabulary"),
    (BASE, {}, [["q", "a"]], False, "makes 'qa', which is not in the vocabulary"),
    (BASE, {}, [["Ġ", "a"], ["Ġa", "b"], ["Ġ", "a"]], False, "f: merge 0 makes already"),
    (BASE, {}, [["Ġa", "b"], ["Ġ", "a"]], False, "whose id is lower"),
    ({k: v for k, v in BASE.items() if v != 200} | {"Ġb": 200}, {}, [["Ġ", "a"], ["Ġ", "b"]], False,
     "whose id is lower"),
    (BASE, {}, [["Ġ", "a"], ["a", "\u2581"]], False, "not in GPT-2's byte-to-unicode map"),
    (BASE | {"\u2581x": 259}, {}, [["Ġ", "a"]], False, "not in GPT-2's byte-to-unicode map"),
    (BASE, {"<|x|>": 100}, [["Ġ", "a"]], False, "which is also the id of"),
    (BASE | {"<|x|>": 259}, {"<|x|>": 259}, [["Ġ", "a"], ["Ġa", "b"]], False, None),  # a special leaves the vocab
], ids=["ok", "unmade-ignore-merges", "unknown-part", "unknown-merged", "made-twice", "part-made-later",
        "id-order", "merge-char", "vocab-char", "special-id-taken", "special-in-vocab"])
def test_fast_path_gives_the_checked_paths_result_and_errors(vocab, specials, merges, ignore_merges, fault):
    fast, checked = _both(vocab, specials, merges, ignore_merges)
    assert fast == checked
    if fault is None:
        assert isinstance(fast, tuple)
    else:
        assert isinstance(fast, str) and fault in fast, fast


def test_legacy_merge_strings_read_as_pairs():
    merges = ["Ġ a", "Ġa b"]
    assert byte_ranks(BASE, {}, merges, *WHERE, False) == byte_ranks(BASE, {}, [m.split() for m in merges], *WHERE, False)
    parsed = []
    with pytest.raises(FormatError, match="merge 1 makes already"):  # the fault names the raw item's sides
        byte_ranks(BASE, {}, ["Ġ a", "Ġa b", "Ġa b"], *WHERE, False, parse_merges=lambda: parsed)
    # an irregular item is left to the parse, which names it
    with pytest.raises(FormatError, match="bad merge"):
        byte_ranks(BASE, {}, ["Ġ  a"], *WHERE, False, parse_merges=lambda: (_ for _ in ()).throw(FormatError("bad merge")))


def test_gpt2_files_load_the_same_both_ways():
    vocab = json.load(open(os.path.join(VOCABS, "gpt2", "vocab.json"), encoding="utf-8"))
    lines = open(os.path.join(VOCABS, "gpt2", "merges.txt"), encoding="utf-8").read().splitlines()[1:]
    merges = [tuple(line.split(" ")) for line in lines if line]
    specials = {"<|endoftext|>": 50256}
    fast, checked = _both(vocab, specials, merges)
    assert fast == checked and len(fast[1]) == 50000


def test_llama3_merge_refusal_is_the_checked_paths():
    d = json.load(open(os.path.join(VOCABS, "llama3", "tokenizer.json"), encoding="utf-8"))
    model = d["model"]
    added = {a["content"]: a["id"] for a in d["added_tokens"]}
    fast, checked = _both(model["vocab"], added, model["merges"], True)
    assert fast == checked and "makes already" in fast
    assert _core.merges_repeat_a_token(model["merges"]) is True


def _made_twice(merges):
    """The Python reading of ``merges_repeat_a_token``: the texts ``left + right`` repeat (byte_model_of's look)."""
    made = [m.replace(" ", "", 1) if isinstance(m, str) else "".join(m) for m in merges]
    return len(set(made)) != len(made)


@pytest.mark.parametrize("merges", [
    ["a b", "ab c", "a bc"], ["a b", "a c"], [["a", "b"], ("a", "b")], [["a", "bc"], "ab c"], ["a  b", "a b"],
    ["ab", "a b"], ["a b c", "ab c"], ["", " "], [["", "ab"], ["a", "b"]], ["\ud800 a", "\ud800a"], ["Ġ Ġ", "ĠĠ"],
    ["😀 x", "😀x y"], [],
])
def test_merge_repeat_look_agrees_with_python(merges):
    assert _core.merges_repeat_a_token(merges) is _made_twice(merges)


@pytest.mark.parametrize("merges", [["a b", ["a", 1]], ["a b", ["a", "b", "c"]], [1], [None, "a b"], [b"a b"]])
def test_merge_repeat_look_leaves_other_items_to_python(merges):
    assert _core.merges_repeat_a_token(merges) is None


def _first_underived_in_python(core, triples):
    """check_merges_derived's comparison as Python wrote it: the first merge that is not merge_triples()'s."""
    derived = {t: (l, r) for l, r, t in core.merge_triples()}
    return next(((k, derived.get(m)) for k, (l, r, m) in enumerate(triples) if derived.get(m) != (l, r)), None)


@pytest.mark.parametrize("triples", [
    [(97, 98, 256), (256, 99, 257)], [(97, 98, 256), (97, 99, 257)], [(98, 97, 256)], [(97, 98, 256), (97, 98, 300)],
    [(97, 98, 256), (256, 99, 257), (97, 98, 256)], [],
])
def test_underived_merge_look_agrees_with_python(triples):
    from bytepair.spec import build_core, from_byte_vocab

    core = build_core(from_byte_vocab({b: bytes([b]) for b in range(256)} | {256: b"ab", 257: b"abc"}, "gpt2", {}))
    assert core.first_underived(triples) == _first_underived_in_python(core, triples)


def test_underived_merge_look_on_gpt2():
    from bytepair.spec import build_core, from_byte_vocab

    vocab = json.load(open(os.path.join(VOCABS, "gpt2", "vocab.json"), encoding="utf-8"))
    lines = open(os.path.join(VOCABS, "gpt2", "merges.txt"), encoding="utf-8").read().splitlines()[1:]
    ids, triples = byte_ranks(vocab, {"<|endoftext|>": 50256}, [tuple(x.split(" ")) for x in lines if x], *WHERE, False)
    core = build_core(from_byte_vocab(ids, "gpt2", {"<|endoftext|>": 50256}))
    assert core.first_underived(triples) is None is _first_underived_in_python(core, triples)
    bad = [*triples[:100], (triples[100][1], triples[100][0], triples[100][2]), *triples[101:]]
    assert core.first_underived(bad) == _first_underived_in_python(core, bad) != None  # noqa: E711


@pytest.mark.parametrize("name", ["gpt2.tiktoken", "cl100k_base.tiktoken", "whisper/multilingual.tiktoken"])
def test_tiktoken_lines_read_the_same_both_ways(name):
    data = open(os.path.join(VOCABS, name), "rb").read()
    assert _core.tiktoken_ranks(data) == tiktoken._parse_fast(data)


@pytest.mark.parametrize("data", [b"YQ== 0\r\nYg== 1\r\n", b"YQ== 0\nYg== 0\n", b"YQ== 0\nYQ== 1\n", b"YQ==\t0\n",
                                  b"YR== 0\n", b"YQ== 0\n \n", b"YQ== 4294967295\n", b"YQ== +1\n", b"=== 0\n"])
def test_irregular_tiktoken_lines_go_to_the_python_reading(data):
    assert _core.tiktoken_ranks(data) is None
    try:
        expected = tiktoken._parse_fast(data) or tiktoken._parse_checked(data, "f")
    except FormatError as e:
        expected = str(e)
    try:
        got = tiktoken.parse(data, "f")
    except FormatError as e:
        got = str(e)
    assert got == expected


@pytest.mark.parametrize("vocab, ok", [
    ({"a": 0, "b": 1}, True), ({"a": 0, "b": 0}, False), ({"a": True}, False), ({"a": -1}, False),
    ({"a": 2**32 - 1}, False), ({"": 0}, False), ({"a": 1.0}, False), ({"a": 2**32 - 2}, True),
])
def test_vocab_check_agrees_with_the_python_check(vocab, ok):
    assert _core.hf_vocab_ok(vocab) is ok
    try:
        hf._vocab({"vocab": vocab}, hf._Fail("f"))
        python_ok = True
    except FormatError:
        python_ok = False
    assert python_ok is ok


def _file(tmp_path, merges) -> str:
    d = {"model": {"type": "BPE", "vocab": {c: b for c, b in BASE.items()}, "merges": merges},
         "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
         "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("merges", [[["Ġ", "a", "b"]], ["Ġ a b"], [["Ġ", 3]], ["Ġa"], [["Ġ", "q"]]],
                         ids=["three-sides", "legacy-three-sides", "not-a-string", "no-space", "unknown-merged"])
def test_malformed_merges_are_refused_as_hugging_face_refuses_them(tmp_path, merges):
    path = _file(tmp_path, merges)
    with pytest.raises(Exception):
        tokenizers.Tokenizer.from_file(path)
    with pytest.raises(FormatError, match=r"merges\[0\]"):
        Tokenizer.load(path)


def test_a_good_file_loads_with_hugging_faces_ids(tmp_path):
    path = _file(tmp_path, [["Ġ", "a"], ["Ġa", "b"]])
    ours, theirs = Tokenizer.load(path), tokenizers.Tokenizer.from_file(path)
    for text in [" ab", "a ab  ab", " a", ""]:
        assert ours.encode(text) == theirs.encode(text, add_special_tokens=False).ids
    assert ours.model == "byte"  # the fast path took it (not the pipeline)
