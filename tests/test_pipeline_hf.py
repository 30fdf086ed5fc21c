"""Hugging Face pipelines run by bytepair's core (``bytepair.pipeline``)
against ``tokenizers`` itself (the oracle):

- published files fetched with pinned sha256 by ``scripts/get_tokenizers.py``:
  Llama 3 and DeepSeek V3 ``tokenizer.json``; Mistral's SentencePiece BPE
  models in the two Llama 2 / Mistral layouts (Prepend + Replace
  normalizers, or a Metaspace pre-tokenizer; byte fallback); Qwen's
  vocabulary in Qwen2's layout (NFC). Ids (with and without special
  tokens), decoding (skipping special tokens or not) and offsets, on the
  multilingual sample, Python's documentation and edge cases;
- random pipelines (normalizer x pre-tokenizer sequence x model options x
  added tokens) trained by ``tokenizers`` on random text, compared on random
  text (hypothesis).
"""

from __future__ import annotations

import json
import pathlib

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers

from bytepair import FormatError, Tokenizer, UnsupportedComponentError
from bytepair.pipeline import from_hf_json

ROOT = pathlib.Path(__file__).resolve().parents[1]

EDGE = ["", " ", "  leading and trailing  ", "Hello world! 12345 1234567", "don't I'll WE'VE", "\t\ttabs\r\n\n",
        "日本語のテキスト", "ﬁ ① Ⅸ Ｆｕｌｌ", "e\u0301 café", "<s>hi</s>", "<|begin_of_text|>x<|end_of_text|>",
        "<|endoftext|>a<|im_start|>", "emoji 🤗🏳️‍🌈", "\u2581 already", "a\u00a0b\u3000c", "x" * 300, "🤗" * 40]


@pytest.fixture(scope="session")
def published(published_tokenizers):
    """{name: path of a tokenizer.json}"""
    return published_tokenizers


@pytest.fixture(scope="session")
def texts(real_texts):
    lines = [line for doc in real_texts[:2] for line in doc.splitlines(keepends=True)]
    return lines[:400] + EDGE + [real_texts[0][:5000]]


NAMES = ["llama3", "deepseek-v3", "mistral-v1-legacy", "mistral-v3-metaspace", "qwen2", "claude", "gpt-neox-olmo",
         "tortoise"]


@pytest.mark.parametrize("name", NAMES)
def test_published_ids_decoding_offsets_equal_hf(published, texts, name):
    tok = Tokenizer.load(published[name])
    theirs = tokenizers.Tokenizer.from_file(published[name])
    assert tok.model == "pipeline"
    for text in texts:
        for add in (False, True):
            e = theirs.encode(text, add_special_tokens=add)
            assert tok.encode(text, add_special_tokens=add) == e.ids, (add, text[:100])
            ids, spans = tok.encode_with_offsets(text, add_special_tokens=add)
            assert ids == e.ids and spans == e.offsets, (add, text[:100])
        for skip in (False, True):
            assert tok.decode(e.ids, skip_special_tokens=skip) == theirs.decode(e.ids, skip_special_tokens=skip)
    batch = tok.encode_batch(texts, add_special_tokens=False)
    assert batch == [e.ids for e in theirs.encode_batch(texts, add_special_tokens=False)]
    assert tok.count(texts[0]) == len(theirs.encode(texts[0], add_special_tokens=False).ids)
    assert tok.n_vocab == theirs.get_vocab_size(with_added_tokens=True)


@pytest.mark.parametrize("name", ["llama3", "mistral-v1-legacy"])
def test_published_save_round_trips(published, texts, name, tmp_path):
    """The native file stores the description; the hf export is the same
    pipeline, and Hugging Face loads it with the same ids."""
    tok = Tokenizer.load(published[name])
    tok.save(str(tmp_path / "native.json"))
    again = Tokenizer.load(str(tmp_path / "native.json"))
    tok.save(str(tmp_path / "tokenizer.json"), format="hf")
    exported = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in texts[:100] + EDGE:
        expected = tok.encode(text, add_special_tokens=True)
        assert again.encode(text, add_special_tokens=True) == expected
        assert exported.encode(text).ids == expected
    import pickle

    assert pickle.loads(pickle.dumps(tok)).encode(texts[0]) == tok.encode(texts[0])


def test_special_tokens_and_ordinary(published):
    """Added tokens are always matched (HF); encode_ordinary leaves the
    special ones as text."""
    tok = Tokenizer.load(published["llama3"])
    theirs = tokenizers.Tokenizer.from_file(published["llama3"])
    text = "<|begin_of_text|>hi"
    assert tok.encode(text, add_special_tokens=False) == theirs.encode(text, add_special_tokens=False).ids
    assert tok.encode_ordinary(text) != tok.encode(text, add_special_tokens=False)
    assert tok.decode(tok.encode_ordinary(text)) == text
    assert tok.special_tokens["<|begin_of_text|>"] == theirs.token_to_id("<|begin_of_text|>")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["model"].update(type="Unigram"), r"model.*Unigram.*not supported"),
        (lambda d: d.update(normalizer={"type": "BertNormalizer"}), r"normalizer.*BertNormalizer.*not supported"),
        (lambda d: d.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [{"type": "UnicodeScripts"}]}),
         r"pretokenizers\[0\].*UnicodeScripts.*not supported"),
        (lambda d: d.update(decoder={"type": "CTC"}), r"decoder.*CTC.*not supported"),
        (lambda d: d.update(post_processor={"type": "Nope"}), r"post_processor.*Nope.*not supported"),
        (lambda d: d.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": r"(a)\1"}, "behavior": "Isolated",
                                           "invert": False}), r"pre_tokenizer.*cannot be run exactly"),
    ],
)
def test_unsupported_components_are_named_in_one_line(published, tmp_path, change, message):
    """A part the engine lacks is an UnsupportedComponentError (a FormatError) naming the file and the part,
    told from a malformed file by its class, not its message."""
    d = json.loads(pathlib.Path(published["mistral-v1-legacy"]).read_text(encoding="utf-8"))
    change(d)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(UnsupportedComponentError, match=message) as info:
        Tokenizer.load(str(path))
    assert "\n" not in str(info.value) and str(info.value).startswith(str(path))
    assert isinstance(info.value, FormatError)


def test_a_malformed_file_is_not_called_unsupported(published, tmp_path):
    d = json.loads(pathlib.Path(published["mistral-v1-legacy"]).read_text(encoding="utf-8"))
    d["model"]["merges"] = "not a list"
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        Tokenizer.load(str(path))
    assert not isinstance(info.value, UnsupportedComponentError)


def test_catastrophic_regex_is_a_clear_error():
    """A Split regex that backtracks without end is refused at load (a
    repeated alternation in a backtracking pattern, issue 17); one that
    backtracks polynomially stops with a PatternError while encoding."""
    from bytepair import PatternError

    desc = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
            "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(a|aa)+(?=b)c"}, "behavior": "Isolated", "invert": False}}
    with pytest.raises(PatternError, match="backtrack"):
        from_hf_json(json.dumps(desc))
    desc["pre_tokenizer"]["pattern"]["Regex"] = "a*a*a*a*(?=b)c|a"
    tok = from_hf_json(json.dumps(desc))
    with pytest.raises(PatternError, match="backtrack"):
        tok.encode("a" * 3000)


def test_untrusted_charsmap_is_refused():
    import base64

    desc = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
            "normalizer": {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(b"\xff\x00\x00\x00ab").decode()}}
    with pytest.raises(FormatError, match="precompiled_charsmap"):
        from_hf_json(json.dumps(desc))


# ---------------------------------------------------------------- random pipelines

ALPHABET = "aabbcAB1 2３ é\u0301ﬁ!.,'\n\t-x▁日本"
text_st = st.text(alphabet=ALPHABET, max_size=40)

NORMALIZERS = [
    None, normalizers.NFC(), normalizers.NFD(), normalizers.NFKC(), normalizers.NFKD(), normalizers.Lowercase(),
    normalizers.Strip(), normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents()]),
    normalizers.Replace(" ", "▁"), normalizers.Replace(Regex("[0-9]+"), "#"), normalizers.Prepend("▁"),
    normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]),
    normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]),
]
BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]
pre_st = st.one_of(
    st.builds(lambda a, r: pre_tokenizers.ByteLevel(add_prefix_space=a, use_regex=r), st.booleans(), st.booleans()),
    st.builds(lambda p, b, i: pre_tokenizers.Split(p, b, invert=i),
              st.sampled_from([" ", "a", Regex(r"\s+"), Regex(r"\p{L}+|\p{N}"), Regex(r"[^\s\p{L}]+")]),
              st.sampled_from(BEHAVIORS), st.booleans()),
    st.builds(lambda s, sp: pre_tokenizers.Metaspace(prepend_scheme=s, split=sp),
              st.sampled_from(["always", "first", "never"]), st.booleans()),
    st.builds(pre_tokenizers.Digits, st.booleans()),
    st.builds(pre_tokenizers.Punctuation, st.sampled_from(BEHAVIORS)),
    st.just(pre_tokenizers.Whitespace()), st.just(pre_tokenizers.WhitespaceSplit()),
    st.just(pre_tokenizers.CharDelimiterSplit("x")), st.just(pre_tokenizers.BertPreTokenizer()),
)
added_st = st.lists(
    st.builds(lambda c, s, n, l, r, w: tokenizers.AddedToken(c, special=s, normalized=n, lstrip=l, rstrip=r, single_word=w),
              st.sampled_from(["<s>", "ab", "[X]", "é", "▁a", " b"]), st.booleans(), st.booleans(), st.booleans(),
              st.booleans(), st.booleans()),
    max_size=3,
)


_COMPARED: list = []
_SKIPPED: list = []


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    corpus=st.lists(text_st, min_size=1, max_size=8),
    normalizer=st.sampled_from(NORMALIZERS),
    pres=st.lists(pre_st, max_size=3),
    vocab_size=st.integers(20, 80),
    options=st.fixed_dictionaries({
        "unk": st.booleans(), "fuse_unk": st.booleans(), "prefix": st.booleans(), "suffix": st.booleans(),
        "ignore_merges": st.booleans(), "byte_fallback": st.booleans()}),
    added=added_st,
    probes=st.lists(text_st, min_size=1, max_size=6),
    post=st.tuples(st.sampled_from(["none", "bytelevel", "roberta", "template", "sequence"]), st.booleans(),
                   st.booleans()),
)
def test_random_pipelines_equal_hf(corpus, normalizer, pres, vocab_size, options, added, probes, post):
    byte_level = any(isinstance(p, pre_tokenizers.ByteLevel) for p in pres)
    model_opts = {"fuse_unk": options["fuse_unk"], "ignore_merges": options["ignore_merges"],
                  "byte_fallback": options["byte_fallback"]}
    if options["unk"]:
        model_opts["unk_token"] = "[UNK]"
    if options["prefix"] and not byte_level:
        model_opts["continuing_subword_prefix"] = "##"
    if options["suffix"] and not byte_level:
        model_opts["end_of_word_suffix"] = "</w>"
    model = models.BPE(**model_opts)
    hf = tokenizers.Tokenizer(model)
    if normalizer is not None:
        hf.normalizer = normalizer
    if pres:
        hf.pre_tokenizer = pre_tokenizers.Sequence(pres)
    kwargs = {}
    if options["prefix"] and not byte_level:
        kwargs["continuing_subword_prefix"] = "##"
    if options["suffix"] and not byte_level:
        kwargs["end_of_word_suffix"] = "</w>"
    alphabet = pre_tokenizers.ByteLevel.alphabet() if byte_level else []
    specials = ["[UNK]"] if options["unk"] else []
    if options["byte_fallback"]:
        specials += [f"<0x{b:02X}>" for b in b"ab \xc3\xa9"]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size + len(alphabet) + len(specials), special_tokens=specials,
                                  initial_alphabet=alphabet, show_progress=False, **kwargs)
    hf.train_from_iterator(corpus, trainer)
    if any(isinstance(p, pre_tokenizers.ByteLevel) for p in pres):
        hf.decoder = decoders.ByteLevel()
    elif any(isinstance(p, pre_tokenizers.Metaspace) for p in pres):
        hf.decoder = decoders.Metaspace()
    elif options["suffix"]:
        hf.decoder = decoders.BPEDecoder(suffix="</w>")
    elif options["byte_fallback"]:
        hf.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                        decoders.Strip(" ", 1, 0)])
    hf.add_tokens(added)
    hf.post_processor = _post_processor(hf, *post)
    try:
        text = hf.to_str()
        hf = tokenizers.Tokenizer.from_str(text)  # what HF itself loads from the file
    except Exception as e:  # a combination HF cannot serialize or load: nothing to compare
        _SKIPPED.append(str(e))
        return
    _COMPARED.append(1)
    tok = from_hf_json(text)
    assert isinstance(tok, Tokenizer) and tok.model == "pipeline"
    for probe in probes + corpus:
        try:
            expected = hf.encode(probe, add_special_tokens=False)
        except Exception:
            with pytest.raises(Exception):
                tok.encode(probe, add_special_tokens=False)
            continue
        assert tok.encode(probe, add_special_tokens=False) == expected.ids, probe
        ids, spans = tok.encode_with_offsets(probe, add_special_tokens=False)
        assert spans == expected.offsets, probe
        with_specials = hf.encode(probe, add_special_tokens=True)
        assert tok.encode_with_offsets(probe, add_special_tokens=True) == (with_specials.ids, with_specials.offsets)
        for skip in (False, True):
            assert tok.decode(expected.ids, skip_special_tokens=skip) == hf.decode(expected.ids, skip_special_tokens=skip)


def _post_processor(hf, kind, trim_offsets, add_prefix_space):
    """A post-processor of ``kind`` whose special tokens are the vocabulary's ids 0 and 1."""
    first, second = hf.id_to_token(0), hf.id_to_token(1)
    byte_level = processors.ByteLevel(trim_offsets=trim_offsets, add_prefix_space=add_prefix_space)
    if kind == "none" or first is None or second is None:  # "none", or a vocabulary of fewer than two tokens
        return None
    if kind == "bytelevel":
        return byte_level
    if kind == "roberta":
        return processors.RobertaProcessing((second, 1), (first, 0), trim_offsets=trim_offsets,
                                            add_prefix_space=add_prefix_space)
    if any(c.isspace() or c in ":$" for c in first + second):  # not expressible in a template string
        return byte_level
    template = processors.TemplateProcessing(single=f"{first} $A {second}", special_tokens=[(first, 0), (second, 1)])
    return template if kind == "template" else processors.Sequence([byte_level, template])


def test_trimmed_offsets_use_the_models_token_where_an_added_token_has_the_same_id():
    """Found by test_random_pipelines_equal_hf in CI: an added token (`" b"`, normalized) that is also a
    model token, under Prepend("▁"), is not matched in the text (its normalized content is `"▁ b"`); the
    model makes it, and ByteLevel's offset trimming reads HF's token string, the model's `" b"`, whose leading
    space leaves the span (id_to_token gives the added token's normalized content instead)."""
    corpus = ["Aa b1", "112.-B"]
    hf = tokenizers.Tokenizer(models.BPE(end_of_word_suffix="</w>"))
    hf.normalizer = normalizers.Prepend("▁")
    hf.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=20, end_of_word_suffix="</w>", show_progress=False))
    hf.add_tokens([tokenizers.AddedToken(" b", normalized=True)])
    hf.post_processor = processors.ByteLevel(trim_offsets=True, add_prefix_space=False)
    text = hf.to_str()
    hf, tok = tokenizers.Tokenizer.from_str(text), from_hf_json(text)
    for probe in corpus + ["Aa  b1", " b b", "x b"]:
        expected = hf.encode(probe, add_special_tokens=False)
        assert tok.encode_with_offsets(probe, add_special_tokens=False) == (expected.ids, expected.offsets), probe


def test_random_pipelines_were_compared():
    """Most generated pipelines reach the comparison (runs after the property)."""
    assert len(_COMPARED) >= 30, (len(_COMPARED), _SKIPPED[:3])
