"""bytepair against Hugging Face ``tokenizers``:

- export: ``tokenizers.Tokenizer.from_file`` on bytepair's ``tokenizer.json``
  gives bytepair's ids (real cl100k_base and gpt2 vocabularies, trained byte
  models with every preset and with custom patterns, fused-marker and
  marker-less char models);
- import: bytepair on a ``tokenizer.json`` that ``tokenizers`` trained itself
  (default ``ByteLevel`` pre-tokenizer with ``use_regex=true``; Llama 3-style
  ``Split`` + ``ByteLevel``; legacy ``"a b"`` merges) gives Hugging Face's
  ids;
- what cannot be exact is refused with a ``FormatError``.

Ids are compared with ``encode(text, allowed_special="all")`` on bytepair's
side: Hugging Face always splits its added tokens out of the text.
"""

from __future__ import annotations

import json
import os
import warnings

import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import decoders, models, pre_tokenizers, trainers

from bytepair.spec import from_byte_vocab
from bytepair import FormatError, Tokenizer, TrainingError
from bytepair.formats import hf
from bytepair.formats.convert import unicode_to_bytes

EXAMPLES = int(os.environ.get("BYTEPAIR_CONFORMANCE_EXAMPLES", "250"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None)
SPECIALS = ["<|endoftext|>", "<pad>", "<|im start|>"]
LLAMA3 = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def _export(tok, folder, name):
    path = os.path.join(folder, name + ".json")
    tok.save(path, format="hf")
    return path


def _same(bp, theirs, text):
    assert bp.encode(text, allowed_special="all") == theirs.encode(text).ids, repr(text[:200])


def _same_docs(bp, theirs, docs):
    got = bp.encode_batch(docs, allowed_special="all")
    expected = [e.ids for e in theirs.encode_batch(docs)]
    for doc, a, b in zip(docs, got, expected):
        assert a == b, repr(doc[:200])


def _lines(docs):
    return [line for doc in docs for line in doc.splitlines(keepends=True)]


# ---------------------------------------------------------------- byte models exported


@pytest.fixture(scope="module")
def exported_real(vocab_paths, tmp_path_factory):
    """{name: (bytepair, tokenizers.Tokenizer from bytepair's export)} for
    the real vocabularies."""
    folder = str(tmp_path_factory.mktemp("hf-real"))
    out = {}
    for name in ("cl100k_base", "gpt2"):
        tok = Tokenizer.load(vocab_paths[f"{name}.tiktoken"])
        out[name] = (tok, tokenizers.Tokenizer.from_file(_export(tok, folder, name)))
    return out


@pytest.fixture(scope="module")
def exported_trained(real_texts, tmp_path_factory):
    """Byte models trained by bytepair, one per kind of pattern, exported."""
    folder = str(tmp_path_factory.mktemp("hf-trained"))
    patterns = {
        "gpt2": "gpt2",
        "cl100k": "cl100k",
        "o200k": "o200k",
        "hf-gpt2": hf.HF_GPT2_PATTERN,  # exported as ByteLevel(use_regex=true)
        "llama3": LLAMA3,
        "gappy": r"\p{L}+|\p{N}",  # does not cover the text: spaces and punctuation are dropped
    }
    out = {}
    for name, pattern in patterns.items():
        tok = Tokenizer.train(real_texts[:40], vocab_size=900, pattern=pattern, special_tokens=SPECIALS)
        out[name] = (tok, tokenizers.Tokenizer.from_file(_export(tok, folder, name)))
    return out


REAL = ["cl100k_base", "gpt2"]
TRAINED = ["gpt2", "cl100k", "o200k", "hf-gpt2", "llama3", "gappy"]


@pytest.mark.parametrize("name", REAL)
def test_export_real_vocabulary_real_text(exported_real, real_texts, name):
    bp, theirs = exported_real[name]
    _same_docs(bp, theirs, real_texts)
    _same_docs(bp, theirs, _lines(real_texts[:1] + real_texts[-4:]))


@pytest.mark.parametrize("name", REAL)
def test_export_real_vocabulary_special_tokens(exported_real, real_texts, name):
    bp, theirs = exported_real[name]
    for text in sorted(bp.special_tokens):
        _same(bp, theirs, f"a{text}b {text}{text}\n{real_texts[0][:300]}{text}")
    assert {t: theirs.token_to_id(t) for t in bp.special_tokens} == bp.special_tokens
    assert theirs.get_vocab_size() == len(bp.vocab())  # cl100k has unused ids: n_vocab is larger


@pytest.mark.parametrize("name", TRAINED)
def test_export_trained_real_text(exported_trained, real_texts, name):
    bp, theirs = exported_trained[name]
    docs = [doc + SPECIALS[i % 3] + doc[:100] for i, doc in enumerate(real_texts[40:])]
    _same_docs(bp, theirs, docs)
    _same_docs(bp, theirs, _lines(real_texts[:1]))


def test_export_uses_bytelevel_regex_for_hf_pattern(exported_trained, tmp_path):
    bp, _ = exported_trained["hf-gpt2"]
    d = hf.to_json(bp)
    assert d["pre_tokenizer"] == {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    d = hf.to_json(exported_trained["cl100k"][0])
    split = d["pre_tokenizer"]["pretokenizers"][0]
    assert split["behavior"] == "Isolated" and r"(?>\p{N}{1,3})" in split["pattern"]["Regex"]


WHITESPACE = list(" \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u1680\u2000\u200a\u200b\u2028\u3000\ufeff")
OTHERS = list("aZéß日'’\"09._-/!😀\u0301ـ") + ["'s", "'LL", "123456", " the"]
mixes = st.lists(st.sampled_from(WHITESPACE + OTHERS), max_size=40).map("".join)
runs = st.lists(st.tuples(st.sampled_from(WHITESPACE + OTHERS), st.integers(1, 300)), min_size=1, max_size=4).map(
    lambda parts: "".join(s * n for s, n in parts)
)
with_specials = st.lists(st.one_of(st.text(max_size=15), st.sampled_from(SPECIALS)), max_size=6).map("".join)


@pytest.mark.parametrize("name", REAL)
@SETTINGS
@given(text=st.one_of(st.text(), mixes, runs))
def test_export_real_vocabulary_hypothesis(exported_real, name, text):
    bp, theirs = exported_real[name]
    _same(bp, theirs, text)


@pytest.mark.parametrize("name", TRAINED)
@SETTINGS
@given(text=st.one_of(st.text(), mixes, runs, with_specials))
def test_export_trained_hypothesis(exported_trained, name, text):
    bp, theirs = exported_trained[name]
    _same(bp, theirs, text)


# ---------------------------------------------------------------- char models exported


CHAR_KINDS = {
    "fused": dict(end_of_word="</w>", end_of_word_fused=True),
    "fused-custom-marker": dict(end_of_word="<eow>", end_of_word_fused=True),
    "no-marker": dict(end_of_word=None),
    "fused-regex": dict(end_of_word="</w>", end_of_word_fused=True, pattern=r"\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+"),
}


@pytest.fixture(scope="module")
def exported_char(real_texts, tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("hf-char"))
    out = {}
    for name, kwargs in CHAR_KINDS.items():
        tok = Tokenizer.train(real_texts[:20], model="char", num_merges=1500, special_tokens=SPECIALS[:2], **kwargs)
        out[name] = (tok, tokenizers.Tokenizer.from_file(_export(tok, folder, name)))
    return out


def _encodable(bp, text):
    try:
        return bp.encode(text, allowed_special="all")
    except ValueError:
        return None  # a character (or fused final form) never seen: bytepair raises, HF drops it


@pytest.mark.parametrize("name", sorted(CHAR_KINDS))
def test_export_char_real_text(exported_char, real_texts, name):
    bp, theirs = exported_char[name]
    compared = 0
    for text in _lines(real_texts[:25]):
        ids = _encodable(bp, text)
        if ids is not None:
            assert ids == theirs.encode(text).ids, repr(text)
            compared += 1
    assert compared > 500


@pytest.fixture(scope="module")
def char_alphabets(exported_char):
    """{name: the single-character tokens of its vocabulary, sorted, + WHITESPACE}: built once per tokenizer,
    not on every hypothesis example (it was about half of each example's time)."""
    return {name: sorted({c for t in bp.vocab().values() for c in t if len(t) == 1}) + WHITESPACE
            for name, (bp, _) in exported_char.items()}


@pytest.mark.parametrize("name", sorted(CHAR_KINDS))
@SETTINGS
@given(data=st.data())
def test_export_char_hypothesis(exported_char, char_alphabets, name, data):
    bp, theirs = exported_char[name]
    alphabet = char_alphabets[name]
    text = data.draw(st.lists(st.one_of(st.sampled_from(alphabet), st.sampled_from(SPECIALS[:2])), max_size=40).map("".join))
    ids = _encodable(bp, text)
    if ids is not None:
        assert ids == theirs.encode(text).ids


def test_export_char_unknown_is_an_error_not_a_silent_drop(exported_char):
    bp, theirs = exported_char["fused"]
    with pytest.raises(ValueError):
        bp.encode("\U0001d54f")
    assert theirs.encode("\U0001d54f").ids == []  # what Hugging Face does


def test_export_separate_marker_is_refused(real_texts, tmp_path):
    tok = Tokenizer.train(real_texts[:3], model="char", num_merges=50, end_of_word="</w>")
    with pytest.raises(FormatError, match="end_of_word_suffix"):
        tok.save(str(tmp_path / "t.json"), format="hf")
    assert not os.listdir(tmp_path)


# ---------------------------------------------------------------- import of HF-trained files


def _hf_train(texts, pre_tokenizer, vocab_size=3000, alphabet=True, specials=SPECIALS, model=None):
    tok = tokenizers.Tokenizer(model or models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    kwargs = {"initial_alphabet": pre_tokenizers.ByteLevel.alphabet()} if alphabet else {}
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, show_progress=False, **kwargs)
    tok.train_from_iterator(texts, trainer)
    return tok


HF_TRAINED = {
    # HF's default byte-level setup (use_regex=true: HF's GPT-2 regex), without the prefix space
    "bytelevel": lambda texts: _hf_train(texts, pre_tokenizers.ByteLevel(add_prefix_space=False)),
    # HF's plain default, ByteLevel(): add_prefix_space=true, a space before each stretch of text
    "bytelevel-default": lambda texts: _hf_train(texts, pre_tokenizers.ByteLevel()),
    # the same without the regex: each stretch between added tokens, with its space, is one piece
    "bytelevel-prefix-no-regex": lambda texts: _hf_train(
        texts, pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False), vocab_size=1500
    ),
    # trained without the 256-byte initial alphabet: only the bytes seen get tokens
    "bytelevel-seen-bytes": lambda texts: _hf_train(
        texts, pre_tokenizers.ByteLevel(add_prefix_space=False), alphabet=False
    ),
    # Llama 3's layout: Split(regex, Isolated) + ByteLevel(use_regex=false), ignore_merges
    "llama3": lambda texts: _hf_train(
        texts,
        pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(tokenizers.Regex(LLAMA3), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        ),
        model=models.BPE(ignore_merges=True),
    ),
}


@pytest.fixture(scope="module")
def imported(real_texts, tmp_path_factory):
    """{name: (bytepair import, the HF tokenizer that trained it)}; trained
    on the first half of the real text, compared on the other half."""
    folder = tmp_path_factory.mktemp("hf-import")
    out = {}
    for name, make in HF_TRAINED.items():
        theirs = make(real_texts[: len(real_texts) // 2])
        path = str(folder / f"{name}.json")
        theirs.save(path)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out[name] = (Tokenizer.load(path), tokenizers.Tokenizer.from_file(path))
    return out


@pytest.mark.parametrize("name", sorted(HF_TRAINED))
def test_import_hf_trained_real_text(imported, real_texts, name):
    bp, theirs = imported[name]
    docs = real_texts[len(real_texts) // 2 :]
    if name == "bytelevel-seen-bytes":
        docs = [d for d in docs if _encodable(bp, d) is not None]
    _same_docs(bp, theirs, docs)
    _same_docs(bp, theirs, [d + "<pad><|endoftext|>x<|im start|>" for d in docs[:10]])


@pytest.mark.parametrize("name", sorted(HF_TRAINED))
def test_import_hf_trained_add_special_tokens(imported, real_texts, name):
    """HF's default ``encode(text)`` (add_special_tokens=True) on every imported file: these have no
    post-processor that adds tokens, so bytepair's ``encode(..., add_special_tokens=True)`` is the same."""
    bp, theirs = imported[name]
    docs = [d[:2000] for d in real_texts[len(real_texts) // 2:]]
    if name == "bytelevel-seen-bytes":
        docs = [d for d in docs if _encodable(bp, d) is not None]
    for doc in docs:
        assert bp.encode(doc, add_special_tokens=True) == theirs.encode(doc).ids
    assert bp.encode_batch(docs, add_special_tokens=True) == [e.ids for e in theirs.encode_batch(docs)]


@pytest.mark.parametrize("name", sorted(HF_TRAINED))
@SETTINGS
@given(text=st.one_of(st.text(), mixes, runs, with_specials))
def test_import_hf_trained_hypothesis(imported, name, text):
    bp, theirs = imported[name]
    if name == "bytelevel-seen-bytes" and _encodable(bp, text) is None:
        return  # a byte the training text never had: bytepair raises, HF drops it
    _same(bp, theirs, text)


def test_import_keeps_hf_ids(imported):
    bp, theirs = imported["bytelevel"]
    assert bp.special_tokens == {t: theirs.token_to_id(t) for t in SPECIALS}
    for token, id_ in list(theirs.get_vocab().items())[:2000]:
        if token not in SPECIALS:
            assert bp.decode_single_token_bytes(id_) == unicode_to_bytes(token, "x", "y")


def test_import_legacy_string_merges(imported, tmp_path, real_texts):
    _, theirs = imported["bytelevel"]
    d = json.loads(theirs.to_str())
    d["model"]["merges"] = [" ".join(m) for m in d["model"]["merges"]]
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    bp = Tokenizer.load(str(path))
    legacy = tokenizers.Tokenizer.from_file(str(path))
    _same_docs(bp, legacy, real_texts[-10:])
    _same_docs(bp, theirs, real_texts[-10:])


def test_import_then_export_round_trip(imported, tmp_path, real_texts):
    bp, theirs = imported["llama3"]
    again = tokenizers.Tokenizer.from_file(_export(bp, str(tmp_path), "again"))
    _same_docs(bp, again, real_texts[-20:])
    back = Tokenizer.load(str(tmp_path / "again.json"))
    assert back.encode_batch(real_texts[-20:], allowed_special="all") == bp.encode_batch(real_texts[-20:], allowed_special="all")


# ---------------------------------------------------------------- refused on import


def _variant(imported, tmp_path, change, name="variant"):
    _, theirs = imported["bytelevel"]
    d = json.loads(theirs.to_str())
    change(d)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    return str(path)


def test_add_prefix_space_is_kept(imported, tmp_path, real_texts):
    """Hugging Face's default ByteLevel() has add_prefix_space=true: a space
    goes before every stretch of text that does not start with one. The
    import keeps it (the ids differ without it), the native format stores
    it, and an export gives Hugging Face the same ids again."""
    bp, theirs = imported["bytelevel-default"]
    assert bp.add_prefix_space
    specials = set(bp.special_tokens.values())
    plain = Tokenizer.from_spec(from_byte_vocab(
        {i: t for i, t in bp.vocab().items() if i not in specials}, bp.pattern, bp.special_tokens
    ))
    assert plain.encode("hello") != bp.encode("hello") == theirs.encode("hello").ids  # the difference is real
    native = tmp_path / "native.json"
    bp.save(str(native))
    again = Tokenizer.load(str(native))
    assert again.add_prefix_space
    docs = real_texts[-20:] + ["", "<pad>", "<pad><pad>x", "x<pad> y", "\tz"]
    assert again.encode_batch(docs, allowed_special="all") == bp.encode_batch(docs, allowed_special="all")
    exported = tokenizers.Tokenizer.from_file(_export(bp, str(tmp_path), "exported"))
    _same_docs(bp, exported, docs)


def test_add_prefix_space_offsets_cover_the_text(imported):
    """The added space, when it is a token of its own, spans the character it goes before, as in HF
    (NormalizedString::prepend); every other span is the text's own."""
    bp, theirs = imported["bytelevel-default"]
    for text in ["hello world", "x<pad>y", "\nnew line", " lead", "\n\n"]:
        ids, spans = bp.encode_with_offsets(text, allowed_special="all")
        e = theirs.encode(text, add_special_tokens=False)
        assert (ids, spans) == (e.ids, e.offsets)


def test_add_prefix_space_cannot_be_written_where_it_has_no_place(imported, tmp_path):
    bp, _ = imported["bytelevel-default"]
    for fmt in ("tiktoken", "gpt2"):
        with pytest.raises(FormatError, match="add_prefix_space"):
            bp.save(str(tmp_path / f"out.{fmt}"), format=fmt)
    with pytest.raises(FormatError, match="add_prefix_space"):
        bp.to_tiktoken()
    with pytest.raises(TrainingError, match="add_prefix_space"):
        Tokenizer.train("more text", init=bp, num_merges=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def _same_as_hf_pipeline(path, docs):
    """A file the byte and char models refuse runs as a pipeline
    (bytepair.pipeline) with Hugging Face's ids and decoding."""
    bp = Tokenizer.load(path)
    theirs = tokenizers.Tokenizer.from_file(path)
    assert bp.model == "pipeline"
    for doc in docs:
        expected = theirs.encode(doc, add_special_tokens=False).ids
        assert bp.encode(doc, add_special_tokens=False) == expected, repr(doc[:200])
        assert bp.decode(expected) == theirs.decode(expected, skip_special_tokens=False), repr(doc[:200])


def test_add_prefix_space_after_a_split_is_exact(imported, tmp_path, real_texts):
    """After a Split, Hugging Face puts the space before every piece: the
    byte model does not, so such a file runs as a pipeline, with HF's ids."""
    def change(d):
        d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False}]}
    path = _variant(imported, tmp_path, change)
    _same_as_hf_pipeline(path, _lines(real_texts[:3])[:300] + ["", "<pad>x y", " a  b "])


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["model"].update(type="WordPiece"), "only BPE"),
        (lambda d: d["model"]["merges"].append(["Ġ", "zzzz"]), "not in the vocabulary"),
        (lambda d: d["model"].update(merges=[["a", "b", "c"]]), r"merges\[0\]"),
    ],
)
def test_inexact_constructs_are_refused(imported, tmp_path, change, message):
    with pytest.raises(FormatError, match=message):
        Tokenizer.load(_variant(imported, tmp_path, change))


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(normalizer={"type": "NFC"}),
        lambda d: d["added_tokens"][0].update(lstrip=True),
        lambda d: d.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}]}),
        lambda d: d.update(pre_tokenizer={"type": "Whitespace"}),
        lambda d: d["model"]["merges"].append(d["model"]["merges"][5]),
        lambda d: d["model"]["merges"].insert(0, d["model"]["merges"].pop(500)),
    ],
    ids=["nfc", "lstrip", "two-regex-splits", "whitespace", "duplicate-merge", "merge-order"],
)
def test_constructs_once_refused_are_exact_as_pipelines(imported, tmp_path, real_texts, change):
    """These were refused before the pipeline engine; they now load and give
    Hugging Face's ids and decoding."""
    docs = _lines(real_texts[:3])[:300] + ["", "x <pad> y", "<pad><pad>", "Ｆｕｌｌ ﬁ café"]
    _same_as_hf_pipeline(_variant(imported, tmp_path, change), docs)


def test_dropout_runs_as_a_pipeline(imported, tmp_path, real_texts):
    """BPE-dropout is random in both libraries: the ids differ run to run,
    but they always decode to the text, as Hugging Face's do."""
    path = _variant(imported, tmp_path, lambda d: d["model"].update(dropout=0.1))
    bp = Tokenizer.load(path)
    theirs = tokenizers.Tokenizer.from_file(path)
    for doc in _lines(real_texts[:1])[:100]:
        assert bp.decode(bp.encode(doc)) == theirs.decode(theirs.encode(doc, add_special_tokens=False).ids)


def test_post_processor_that_adds_tokens_runs_as_a_pipeline(imported, tmp_path, real_texts):
    def change(d):
        d["post_processor"] = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [0], "tokens": ["<|endoftext|>"]}},
        }

    path = _variant(imported, tmp_path, change)
    bp = Tokenizer.load(path)
    theirs = tokenizers.Tokenizer.from_file(path)
    text = real_texts[-1][:500]
    assert theirs.encode(text).ids[0] == 0
    for add in (False, True):
        assert bp.encode(text, add_special_tokens=add) == theirs.encode(text, add_special_tokens=add).ids
    # given a pattern, the byte model runs it without the post-processor, and says so
    with pytest.warns(UserWarning, match="add_special_tokens=False"):
        byte = Tokenizer.load(path, pattern="gpt2")
    assert byte.encode(text) == theirs.encode(text, add_special_tokens=False).ids


# ---------------------------------------------------------------- GPT-2 files (vocab.json + merges.txt)


def _hf_from_gpt2_files(folder):
    """What Hugging Face builds from GPT-2's two files (GPT2TokenizerFast's
    pipeline, without the prefix space)."""
    tok = tokenizers.Tokenizer(models.BPE.from_file(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.add_special_tokens(["<|endoftext|>"])
    return tok


def test_real_gpt2_files_read_by_both(vocab_paths, real_texts):
    folder = os.path.dirname(vocab_paths["gpt2/vocab.json"])
    _same_docs(Tokenizer.load(folder), _hf_from_gpt2_files(folder), real_texts)


def test_gpt2_files_written_by_bytepair_read_by_hf(real_texts, tmp_path):
    tok = Tokenizer.train(real_texts[:40], vocab_size=1500, pattern=hf.HF_GPT2_PATTERN, special_tokens=["<|endoftext|>"])
    tok.save(str(tmp_path / "files"), format="gpt2")
    theirs = _hf_from_gpt2_files(str(tmp_path / "files"))
    _same_docs(tok, theirs, [d + "<|endoftext|>" + d[:50] for d in real_texts[40:]])
