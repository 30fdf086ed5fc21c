"""The tokenizer.json loader's outline (``_core.hf_outline``): a file that goes to the pipeline is read
without Python objects for its ``model.vocab`` and ``model.merges``, which stay unread
(``bytepair._io.UnreadDict`` / ``UnreadList``) until something uses them. Its description is the
document as Python's own reader gives it, its ids Hugging Face's; irregular files are read whole as
before, with the same errors."""

from __future__ import annotations

import copy
import json
import pickle
import threading
import warnings

import pytest
import tokenizers

from bytepair import Tokenizer, _core
from bytepair._io import UnreadDict, UnreadList, parse_json
from bytepair.errors import FormatError
from bytepair.formats import hf
from bytepair.formats.convert import BYTE_TO_UNICODE

TEXTS = ["Hello world! Don't  stop   12345 naïve café 日本語 😀\n\n  tabs\tand  spaces ",
         "def f(x):\n    return x ** 2  # square\n", "ＦＵＬＬＷＩＤＴＨ 한국어 текст"]


def _unread(d):
    model = d["model"]
    return [k for k in ("vocab", "merges") if isinstance(dict.get(model, k), (UnreadDict, UnreadList))
            and dict.get(model, k)._source is not None]


@pytest.mark.parametrize("name", ["llama3", "deepseek-v3", "claude", "gpt-neox-olmo", "qwen2"])
def test_published_files_load_unread_with_hf_ids_and_the_same_description(published_tokenizers, name):
    path = published_tokenizers[name]
    text = open(path, encoding="utf-8").read()
    tok = Tokenizer.load(path)
    assert _unread(tok.spec.description) == ["vocab", "merges"]  # loading did not read them
    theirs = tokenizers.Tokenizer.from_file(path)
    for t in TEXTS:
        assert tok.encode_ordinary(t) == theirs.encode(t, add_special_tokens=False).ids
        assert tok.encode(t, add_special_tokens=True) == theirs.encode(t, add_special_tokens=True).ids
    whole = json.loads(text)
    assert tok.spec.description == whole  # reads them: the document as Python's reader has it
    assert list(tok.spec.description["model"]) == list(whole["model"])  # in the file's order
    assert Tokenizer.from_dict(json.loads(json.dumps(tok.to_dict()))).encode_ordinary(TEXTS[0]) == \
        theirs.encode(TEXTS[0], add_special_tokens=False).ids


def _doc(vocab, merges, **top):
    d = {"version": "1.0", "added_tokens": [], "normalizer": {"type": "NFC"},
         "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
         "post_processor": None, "decoder": dict(hf.BYTE_LEVEL_DECODER),
         "model": {"type": "BPE", "dropout": None, "vocab": vocab, "merges": merges}}
    d.update(top)
    return d


def _byte_vocab():
    return {c: b for b, c in BYTE_TO_UNICODE.items()} | {"Ġa": 256, "Ġab": 257}


def test_the_outline_is_the_document_python_reads():
    vocab = _byte_vocab()
    for text in [
        json.dumps(_doc(vocab, ["Ġ a", "Ġa b"])),
        json.dumps(_doc(vocab, [["Ġ", "a"], ["Ġa", "b"]]), ensure_ascii=False, indent=2),
        # the model first, escapes, a "vocab" key elsewhere, brackets inside strings
        '{"model": {"merges": [["\\u0120", "a"]], "x": {"vocab": "]}"}, "vocab": ' + json.dumps(vocab)
        + '}, "added_tokens": [{"id": 258, "content": "Ġa", "special": true}], "y": [1.5e3, null, true, "\\""]}',
    ]:
        d = hf._outlined(text, "f")
        assert d is not None and _unread(d) == ["vocab", "merges"]
        assert d == json.loads(text) and json.dumps(d) == json.dumps(json.loads(text))
    text = json.dumps(_doc(vocab, ["Ġ a"], added_tokens=[{"id": 1, "content": "Ġa"}]), ensure_ascii=False)
    d = hf._outlined(text, "f")
    vocab_facts, merge_facts = dict(d["model"]["vocab"].facts), dict(d["model"]["merges"].facts)
    spans = vocab_facts.pop("bytes"), merge_facts.pop("bytes")
    assert vocab_facts == {"n_vocab": 258, "dense": True, "added_in_vocab": {"Ġa": 256}}
    assert merge_facts == {"n_merges": 1}
    assert hf._repeats(d["model"]["merges"]) is False and d["model"]["merges"].facts["repeats"] is False
    assert [json.loads(text.encode()[a:b]) for a, b in spans] == [vocab, ["Ġ a"]]


@pytest.mark.parametrize("text", [
    '{"model": {"vocab": {"a": 0, "a": 1}, "merges": []}}',      # a token twice: Python keeps the last
    '{"model": {"vocab": {"a": 0, "b": 0}, "merges": []}}',      # an id twice
    '{"model": {"vocab": {"a": 0, "": 1}, "merges": []}}',       # an empty token
    '{"model": {"vocab": {"a": 0.0}, "merges": []}}',
    '{"model": {"vocab": {"a": -1}, "merges": []}}',
    '{"model": {"vocab": {"a": 0}, "merges": ["a"], "merges": []}}',
    '{"model": {"vocab": {"a": 0}, "merges": [["a"]]}}',
    '{"model": {"vocab": {"a": 0}, "merges": [1]}}',
    '{"model": {"vocab": {"a": 0}}}',                            # no merges
    '{"model": {"vocab": {"\\ud800": 0}, "merges": []}}',        # a lone surrogate
    '{"model": {"vocab": {"a": 0}, "merges": []}, "model": 1}',
    '{"model": {"vocab": {"a": 0}, "merges": []}} x',
    '{"model": {"vocab": {"a": 0}, "merges": []}, "x": [}',
    '[1]',
])
def test_irregular_documents_are_read_whole_as_before(text):
    assert hf._outlined(text, "f") is None


@pytest.mark.parametrize("text", [
    json.dumps(_doc({"a": 0}, [])).replace(', "merges": []', ""),  # HF refuses a BPE model without merges
    json.dumps(_doc({"a": 0, "b": 0}, [])),
    json.dumps(_doc({"a": 0}, [])).replace('"type": "NFC"}', '"type": "NFC"'),  # invalid JSON
    json.dumps(_doc({"a": 0}, [])) + " x",
    json.dumps(_doc({"\ud800": 0}, [])),
    json.dumps(_doc({"a": 0}, [["a", "b", "c"]])),
])
def test_refusals_are_the_whole_readings(text):
    try:
        whole = hf.loads(text, "f.json")
    except FormatError as e:
        refusal = str(e)
    else:
        refusal = None
    # the same document with its outline turned off: read whole, as before
    real = _core.hf_outline
    _core.hf_outline = lambda text: None
    try:
        try:
            hf.loads(text, "f.json")
            before = None
        except FormatError as e:
            before = str(e)
    finally:
        _core.hf_outline = real
    assert refusal == before and (refusal is None or refusal.startswith("f.json"))
    if refusal is None:
        assert isinstance(whole.description, dict)


def test_holes_and_added_tokens_from_the_facts_are_those_of_the_vocabulary():
    vocab = _byte_vocab()
    cases = [
        [],
        [{"id": 258, "content": "<x>"}],
        [{"id": 300, "content": "<x>"}, {"id": 301, "content": "<y>"}],  # HF gives 258, 259
        [{"id": 256, "content": "Ġa"}, {"id": 258, "content": "<x>"}],
        [{"id": 258, "content": "<x>"}, {"id": 259, "content": "<x>"}, {"id": 260, "content": ""}],
    ]
    for added in cases:
        text = json.dumps(_doc(vocab, ["Ġ a", "Ġa b"], added_tokens=added))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast = hf._pipeline_holes(hf._outlined(text, "f"), "f")
            whole = hf._pipeline_holes(json.loads(text), "f")
        assert fast == whole
    sparse = dict(vocab, **{"Ġab": 300})
    text = json.dumps(_doc(sparse, ["Ġ a", "Ġa b"], added_tokens=[{"id": 5, "content": "<x>"}]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its id is not HF's
        assert hf._pipeline_holes(hf._outlined(text, "f"), "f") == hf._pipeline_holes(json.loads(text), "f") != frozenset()


def test_a_merge_list_making_a_token_twice_is_known_unread():
    vocab = _byte_vocab() | {"ab": 258}
    for merges, twice in [(["Ġ a", "Ġa b", "a b"], False), (["Ġ a", "Ġa b", ["Ġ", "a"]], True),
                          (["Ġ a", "Ġa b", "Ġa  b"], False)]:
        d = hf._outlined(json.dumps(_doc(vocab, merges)), "f")
        assert hf._merges_make_a_token_twice(d) is twice
        assert _unread(d) == ["vocab", "merges"]
        assert hf._merges_make_a_token_twice(json.loads(json.dumps(_doc(vocab, merges)))) is twice
        # a byte-level file without a normalizer: found by the outline itself
        d = hf._outlined(_byte_doc(vocab, merges), "f")
        assert d["model"]["merges"].facts["repeats"] is twice and hf._merges_make_a_token_twice(d) is twice


def _unread_pair():
    text = '{"v": {"a": 0, "b": 1}, "m": [["a", "b"], "a b"]}'
    parent = {}
    parent["v"] = UnreadDict(text, (text.index("{", 1), text.index("}") + 1), parent, "v")
    parent["m"] = UnreadList(text, (text.index("[["), len(text) - 1), parent, "m")
    return parent, json.loads(text)


def test_unread_containers_behave_as_the_plain_values():
    for use in [json.dumps, lambda p: json.dumps(p, indent=1, sort_keys=True), repr, str,
                lambda p: pickle.loads(pickle.dumps(p)), copy.deepcopy, copy.copy,
                lambda p: (dict(p["v"]), {**p["v"]}, sorted(p["v"].items()), len(p["v"]), "a" in p["v"]),
                lambda p: (list(p["m"]), tuple(p["m"]), len(p["m"]), p["m"][1], p["m"] + [1], p["m"][::-1]),
                lambda p: ",".join(m if isinstance(m, str) else m[0] for m in p["m"])]:
        unread, plain = _unread_pair()
        assert use(unread) == use(plain)
    a, plain = _unread_pair()
    b, _ = _unread_pair()
    assert a == b == plain and plain == a and a["v"] == plain["v"] and plain["m"] == b["m"]
    assert b["m"] != ["a b"] and not (a["v"] != plain["v"])
    c, _ = _unread_pair()
    v = c["v"]
    assert v.read() == plain["v"] and type(c["v"]) is dict and v["b"] == 1  # the parent then holds a plain dict


def test_unread_containers_are_read_once_across_threads():
    for _ in range(20):
        p, plain = _unread_pair()
        m, v = p["m"], p["v"]
        barrier = threading.Barrier(4)
        out = []

        def use():
            barrier.wait()
            out.append((len(m), len(v), list(m)))

        threads = [threading.Thread(target=use) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert out == [(2, 2, plain["m"])] * 4


def test_the_core_checks_refuse_unread_containers():
    p, _ = _unread_pair()
    assert _core.merges_repeat_a_token(p["m"]) is None and _core.hf_vocab_ok(p["v"]) is False
    assert _core.byte_vocab(p["v"], {}, [], False) == ("irregular",)
    assert hf._repeats(p["m"]) is None  # no facts: the core's answer


def test_a_pipeline_file_parses_as_parse_json_names_its_faults():
    text = json.dumps(_doc({"a": 0}, []))
    assert hf._outlined(text, "f") == parse_json(text, "f")


def _both_ways(text, run=lambda text, d: hf.loads(text, "f.json")):
    """``run`` (hf.loads of ``text`` by default) as the spec (or the error's text) and its warnings, with the
    outline (``d``: the outlined document) and read whole without it (``d``: Python's reading)."""
    out = []
    real = _core.hf_outline
    for outline in (real, lambda text: None):
        _core.hf_outline = outline
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                d = hf._outlined(text, "f.json") or parse_json(text, "f.json")
                out.append((run(text, d), [str(w.message) for w in caught]))
        except FormatError as e:
            out.append(str(e))
        finally:
            _core.hf_outline = real
    return out


def _byte_doc(vocab, merges, **top):
    return json.dumps(_doc(vocab, merges, normalizer=None, **top), ensure_ascii=False)


@pytest.mark.parametrize("vocab, merges, top, fault", [
    ({}, ["Ġ a", "Ġa b"], {}, None),
    ({}, [["Ġ", "a"], ["Ġa", "b"]], {"added_tokens": [{"id": 9, "content": "<x>", "special": True}]}, None),
    ({"<x>": 258}, [["Ġ", "a"], ["Ġa", "b"]], {"added_tokens": [{"id": 258, "content": "<x>", "special": True}]}, None),
    ({"zz": 258}, ["Ġ a", "Ġa b"], {}, None),                        # a token no merge makes leaves
    ({"ĠĠ": 258, "ĠĠĠ": 259}, ["Ġ a", "Ġa b", "Ġ Ġ", "Ġ ĠĠ"], {}, "which bytepair's rule makes from (258, 32)"),
    ({}, ["Ġa b", "Ġ a"], {}, "whose id is lower"),
    ({}, ["Ġ a", "Ġ ab"], {}, "which is not in the vocabulary"),
    ({}, ["Ġ a", "a \u2581"], {}, "not in GPT-2's byte-to-unicode map"),
    ({"\u2581x": 258}, ["Ġ a", "Ġa b"], {}, "not in GPT-2's byte-to-unicode map"),
    ({}, ["Ġ a", "Ġa  b"], {}, "one space"),
    ({}, ["Ġ a", ["Ġa", ""]], {}, "pair of non-empty strings"),
])
def test_the_byte_model_read_by_the_core_is_the_whole_reading(vocab, merges, top, fault):
    text = _byte_doc(_byte_vocab() | vocab, merges, **top)
    assert _both_ways(text)[0] == _both_ways(text)[1]  # the byte model, or the pipeline when it refuses
    fast, whole = _both_ways(text, lambda text, d: hf._load_models(d, "f.json", None, None))
    assert fast == whole
    if fault is None:
        spec = fast[0]
        assert spec.model == "byte" and spec.built is not None
    else:
        assert isinstance(fast, str) and fault in fast, fast


def test_gpt2_as_hf_writes_it_reads_the_same_both_ways(vocab_paths, tmp_path):
    from peer_files import hf_gpt2_json

    theirs = hf_gpt2_json(vocab_paths["gpt2/vocab.json"], vocab_paths["gpt2/merges.txt"], str(tmp_path / "t.json"))
    text = (tmp_path / "t.json").read_text(encoding="utf-8")
    fast, whole = _both_ways(text)
    assert fast == whole and fast[0].tokens == whole[0].tokens and fast[0].decode_skips == whole[0].decode_skips
    tok = Tokenizer.from_spec(fast[0])
    for t in TEXTS:
        assert tok.encode_ordinary(t) == theirs.encode(t, add_special_tokens=False).ids


def test_a_pipeline_tokenizer_with_an_unread_description_pickles_and_saves(tmp_path):
    text = json.dumps(_doc(_byte_vocab(), ["Ġ a", "Ġa b"]))
    path = tmp_path / "t.json"
    path.write_text(text, encoding="utf-8")
    tok = Tokenizer.load(str(path))
    assert _unread(tok.spec.description) == ["vocab", "merges"]
    theirs = tokenizers.Tokenizer.from_file(str(path))
    again = pickle.loads(pickle.dumps(tok))
    tok.save(str(tmp_path / "saved.json"), format="hf")
    saved = Tokenizer.load(str(tmp_path / "saved.json"))
    for t in TEXTS:
        ids = theirs.encode(t, add_special_tokens=False).ids
        assert tok.encode_ordinary(t) == again.encode_ordinary(t) == saved.encode_ordinary(t) == ids
    assert again.spec.description == json.loads(text) == tok.spec.description


def _outcome(run):
    try:
        spec = run()
    except Exception as e:  # noqa: BLE001 - the refusal's class and words are compared
        return type(e).__name__, str(e)
    tok = Tokenizer.from_spec(spec)
    return spec.model, tok.n_vocab, [tok.encode_ordinary(t) for t in TEXTS]


@pytest.mark.parametrize("text", [
    json.dumps(_doc(_byte_vocab(), ["Ġ a", "Ġa b"])),
    json.dumps(_doc(_byte_vocab(), [["Ġ", "a"], ["Ġa", "b"]], normalizer=None), ensure_ascii=False),
    json.dumps(_doc(_byte_vocab() | {"é": 258}, ["Ġ a", "Ġa b"], normalizer=None), ensure_ascii=False, indent=2),
    json.dumps(_doc(_byte_vocab() | {"ab": 258}, ["Ġ a", "Ġa b", ["a", "b"]], normalizer=None)),
    json.dumps(_doc({"a": 0}, [])).replace(', "merges": []', ""),
    json.dumps(_doc({"a": 0, "b": 0}, [])),
    json.dumps(_doc({"\ud800": 0}, [])),
    json.dumps(_doc({"a": 0}, [["a", "b", "c"]])),
    json.dumps(_doc({"a": 0}, [])) + " x",
])
def test_the_files_bytes_load_as_its_text(text):
    """``load`` hands the file's bytes to the core (no str of the whole file): the same tokenizer or
    the same refusal as the text gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _outcome(lambda: hf.loads(text.encode("utf-8"), "f.json")) == _outcome(lambda: hf.loads(text, "f.json"))


def test_bytes_that_are_not_utf8_are_named_as_before(tmp_path):
    from bytepair.formats.magic import decode_text

    for data in [b'{"model": {"vocab": {"\xff": 0}, "merges": []}}', b"PK\x03\x04\xff" + b"x" * 60]:
        path = tmp_path / "tokenizer.json"
        path.write_bytes(data)
        with pytest.raises(Exception) as got:
            hf.load(str(path))
        with pytest.raises(Exception) as expected:
            decode_text(data, str(path), "tokenizer.json")
        assert (type(got.value), str(got.value)) == (type(expected.value), str(expected.value))
