"""A byte or char model and its pipeline description (``Tokenizer.as_pipeline``)
are one tokenizer: ``Tokenizer.from_spec(tok.as_pipeline())`` (the core's
pipeline engine) gives the model's ids (``encode`` with special tokens
allowed, ``encode_ordinary``), ``decode``, offsets and ``count`` on random
text, and Hugging Face ``tokenizers`` (the independent oracle) loading the
same description gives the same ids, offsets and decoding. Tokenizers: trained byte and
char models on small random corpora with random special tokens, ranks-table
byte models (tiktoken-like tables), HF's prefix space, byte fallback, unknown
tokens, and the seeds' tokenizers (tests/seeds.py)."""

from __future__ import annotations

import json

import pytest
import tokenizers
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import bytepair
from bytepair import Tokenizer, _core, spec as specs
from bytepair.errors import EncodeError, FormatError
from bytepair.formats.hf import HF_GPT2_PATTERN, _NO_SPLIT
from bytepair.pipeline import from_hf_json
from seeds import seed_000, seed_001, seed_002
from unicode_versions import stable_text

SPECIALS = ["<|endoftext|>", "<s>", "</s>", "<|im_start|>", "[SEP]", "<pad>"]
# characters that make words, spaces and byte splits: ASCII, Latin-1, Greek, CJK, an emoji, whitespace of
# every kind (tab, line breaks, no-break space, ideographic space)
ALPHABET = "aabbcdeelnorstw  ..,!'0123éüßαβγ中文🙂\t\n\r\u00a0\u3000_<>/"

pytestmark = pytest.mark.filterwarnings("ignore::bytepair.errors.TrainingWarning")

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                          HealthCheck.data_too_large])


def corpus_strategy():
    return st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=30), min_size=1, max_size=12)


def text_strategy(specials):
    """Random text: the corpus alphabet, any stable Unicode, and the special tokens' strings."""
    pieces = [st.text(alphabet=ALPHABET, max_size=12), stable_text(max_size=6), st.sampled_from([" ", "  ", "\n\n"])]
    if specials:
        pieces.append(st.sampled_from(specials))
    return st.lists(st.one_of(*pieces), max_size=8).map("".join)


def hf_of(spec):
    return tokenizers.Tokenizer.from_str(json.dumps(spec.description))


def _unless_refused(tok, f):
    """``f()``, or None where the model refuses the text: a char model without byte fallback or unknown token
    refuses characters outside its alphabet, where a pipeline (and HF) drops them (docs/decisions.md, "A byte
    or char model as a pipeline")."""
    try:
        return f()
    except EncodeError:
        assert tok.model == "char" and not tok.byte_fallback and tok.unk_token is None
        return None


def assert_same(tok, text):
    """``tok`` and its pipeline (and HF on that pipeline) agree on ``text``."""
    pipe = Tokenizer.from_spec(tok.as_pipeline())
    assert pipe.model == "pipeline"
    hf = hf_of(pipe.spec)
    ids = _unless_refused(tok, lambda: tok.encode(text, allowed_special="all"))
    if ids is not None:
        assert pipe.encode(text, allowed_special="all") == ids
        theirs = hf.encode(text, add_special_tokens=False)
        assert theirs.ids == ids
        spans = tok.encode_with_offsets(text, allowed_special="all")
        assert pipe.encode_with_offsets(text, allowed_special="all") == spans
        assert theirs.offsets == spans[1]
        assert pipe.decode(ids) == tok.decode(ids)
        assert hf.decode(ids, skip_special_tokens=False) == tok.decode(ids)
        assert pipe.encode_batch([text, text[:3]], allowed_special="all") == [
            pipe.encode(text, allowed_special="all"), pipe.encode(text[:3], allowed_special="all")]
    ordinary = _unless_refused(tok, lambda: tok.encode_ordinary(text))
    if ordinary is not None:
        assert pipe.encode_ordinary(text) == ordinary
        assert pipe.count(text) == tok.count(text) == len(ordinary)


def _pipeline_or_refused(tok):
    """The description, or None when it is refused for a reason as_pipeline documents."""
    try:
        return tok.as_pipeline()
    except FormatError as e:
        reasons = ("two merges made the same", "makes a symbol that merge", "is not made by any merge",
                   "byte fallback and a fused end-of-word marker")
        assert any(r in str(e) for r in reasons), str(e)
        return None


@SETTINGS
@given(corpus=corpus_strategy(), n=st.integers(0, 40), specials=st.lists(st.sampled_from(SPECIALS), unique=True,
                                                                            max_size=3),
       pattern=st.sampled_from(["cl100k", "gpt2", "o200k", HF_GPT2_PATTERN, r"\w+|[^\w\s]+|\s+"]), data=st.data())
def test_trained_byte_model(corpus, n, specials, pattern, data):
    tok = Tokenizer.train(corpus, model="byte", num_merges=n, special_tokens=specials, pattern=pattern)
    assume(_pipeline_or_refused(tok) is not None)
    for _ in range(3):
        assert_same(tok, data.draw(text_strategy(specials)))


@SETTINGS
@given(corpus=corpus_strategy(), n=st.integers(0, 40), specials=st.lists(st.sampled_from(SPECIALS), unique=True,
                                                                            max_size=3),
       prefix=st.booleans(), drop=st.integers(0, 6), data=st.data())
def test_ranks_table_byte_model(corpus, n, specials, prefix, drop, data):
    """tiktoken-like tables (ids as ranks, merges derived by the core), with HF's prefix space; a table with
    a token taken out has tokens no merge makes: refused, naming one."""
    trained = Tokenizer.train(corpus, model="byte", num_merges=n)
    table = {i: b for i, b in trained.vocab().items()}
    multi = sorted(i for i, b in table.items() if len(b) > 1)
    if drop and multi:
        del table[multi[(drop - 1) % len(multi)]]
        table = dict(enumerate(table[k] for k in sorted(table)))  # ids stay in rank order, without a gap
    pattern = data.draw(st.sampled_from([HF_GPT2_PATTERN, _NO_SPLIT] if prefix else ["cl100k", "gpt2", "o200k"]))
    specials = {s: len(table) + k for k, s in enumerate(specials)}
    tok = Tokenizer.from_spec(specs.from_byte_vocab(table, pattern, specials, add_prefix_space=prefix))
    assume(_pipeline_or_refused(tok) is not None)
    for _ in range(3):
        assert_same(tok, data.draw(text_strategy(list(specials))))


@SETTINGS
@given(corpus=corpus_strategy().filter(lambda docs: any(not c.isspace() for d in docs for c in d)),  # a word
       n=st.integers(0, 40), specials=st.lists(st.sampled_from(SPECIALS), unique=True, max_size=3),
       eow=st.sampled_from([None, "</w>", "@"]), pattern=st.sampled_from(["default", "gpt2"]), data=st.data())
def test_trained_char_model(corpus, n, specials, eow, pattern, data):
    # byte fallback with a fused marker is refused (test_byte_fallback_with_a_fused_marker_is_refused)
    fallback = data.draw(st.sampled_from(["none", "unk"] if eow else ["none", "bytes", "unk"]))
    unk = "<unk>" if fallback == "unk" else None
    tok = Tokenizer.train(corpus, model="char", num_merges=n, end_of_word=eow, end_of_word_fused=eow is not None,
                          special_tokens=specials + ([unk] if unk else []), byte_fallback=fallback == "bytes",
                          unk_token=unk, pattern=pattern)
    if data.draw(st.booleans()):  # the same merges under subword-nmt's rule (HF's, when no merge remakes a symbol)
        tok = Tokenizer.from_merges(tok.merges, model="char", end_of_word=eow, end_of_word_fused=eow is not None,
                                    alphabet=set("".join(corpus)), special_tokens=specials + ([unk] if unk else []),
                                    byte_fallback=fallback == "bytes", unk_token=unk, pattern=pattern,
                                    merge_rule="lowest-rank")
    assume(_pipeline_or_refused(tok) is not None)
    for _ in range(3):
        assert_same(tok, data.draw(text_strategy(specials + ([unk] if unk else []))))


@pytest.mark.parametrize("text", ["low lower lowest", "  the  quick\tbrown\n\nfox ", "naïve café 中文 🙂", ""])
def test_seed_002_tokenizer(text):
    """Seed 002's tokenizer (no marker) is the same as a pipeline; its printed merges are the oracle's input."""
    s2 = seed_002()
    tok = Tokenizer.train(s2.corpus, model="char", end_of_word=None, num_merges=5)
    assert tok.merges == s2.merges
    letters = Tokenizer.from_merges(s2.merges, model="char", end_of_word=None,
                                    alphabet=set("".join(s2.corpus)) | set(text) - set(" \t\n"))
    for t in (tok, letters):
        assert_same(t, text)


def test_seeds_000_and_001_are_refused_with_the_reason():
    """A separate end-of-word marker (seeds 000 and 001) is a symbol of its own that no pipeline's BPE model
    has: refused, naming it, never approximated."""
    for merges, eow in ((seed_000().merges, "_"), (seed_001().rules, "<w>")):
        tok = Tokenizer.from_merges(merges, model="char", end_of_word=eow)
        with pytest.raises(FormatError, match="separate symbol"):
            tok.as_pipeline()


def test_lowest_rank_merges_are_refused():
    """subword-nmt codes in which a merge remakes a symbol an earlier merge uses (merge_rule 'lowest-rank'):
    HF ranks pairs once, so it is refused with the reason."""
    tok = Tokenizer.from_merges([("a", "b"), ("b", "c"), ("a", "bc"), ("ab", "c")], model="char", end_of_word=None,
                                merge_rule="lowest-rank")
    with pytest.raises(FormatError, match="two merges made the same|makes a symbol that merge"):
        tok.as_pipeline()


def test_prefix_space_with_a_split_is_refused():
    table = {i: bytes([i]) for i in range(256)}
    tok = Tokenizer.from_spec(specs.from_byte_vocab(table, "cl100k", add_prefix_space=True))
    with pytest.raises(FormatError, match="add_prefix_space"):
        tok.as_pipeline()


def test_a_pipeline_is_its_own_description():
    tok = Tokenizer.train("hello world " * 4, num_merges=3)
    pipe = Tokenizer.from_spec(tok.as_pipeline())
    assert pipe.as_pipeline() is pipe.spec
    assert bytepair.Tokenizer.from_dict(pipe.to_dict()).encode("hello world") == tok.encode("hello world")


def test_byte_fallback_with_a_fused_marker_is_refused():
    """HF falls back to the bytes of the last character and the marker together (the ids agree) but gives the
    marker's bytes offsets past the word: refused, naming it. The pipeline engine runs such a file with HF's
    ids and without a panic."""
    tok = Tokenizer.train("low lower lowest newer " * 5, model="char", end_of_word="</w>", end_of_word_fused=True,
                          num_merges=10, byte_fallback=True)
    with pytest.raises(FormatError, match="byte fallback and a fused end-of-word marker"):
        tok.as_pipeline()
    plain = Tokenizer.train("low lower lowest newer " * 5, model="char", end_of_word="</w>",
                            end_of_word_fused=True, num_merges=10)
    d = plain.as_pipeline().description
    d["model"]["byte_fallback"] = True
    for b in range(256):
        d["model"]["vocab"].setdefault(f"<0x{b:02X}>", len(d["model"]["vocab"]))
    hf = tokenizers.Tokenizer.from_str(json.dumps(d))
    pipe = from_hf_json(json.dumps(d))
    for text in ["low€ €x lowé", "€", "a€ b"]:
        ids, spans = pipe.encode_with_offsets(text)
        assert ids == hf.encode(text, add_special_tokens=False).ids
        assert all(0 <= s <= e <= len(text) for s, e in spans)


# ---------------------------------------------------------------- one engine for the byte configuration


def test_byte_configurations_convert_and_their_split_runs_on_the_lexer(published_tokenizers):
    """A pipeline that is exactly a byte-model configuration converts to the byte model (``to_tiktoken``,
    ``save`` as tiktoken or gpt2); the others (a char model, Llama 3's merges where several pairs make one
    token, a normalizer) do not. Every pipeline encodes on the pipeline engine, whose split in Hugging Face's
    dialect of the pattern runs on the preset's lexer, as the byte model's does."""
    byte = Tokenizer.train("hello world " * 4, num_merges=5, special_tokens=["<|endoftext|>"])
    char = Tokenizer.train("hello world " * 4, model="char", end_of_word=None, num_merges=5)
    assert Tokenizer.from_spec(byte.as_pipeline())._byte_spec is not None
    assert Tokenizer.from_spec(char.as_pipeline())._byte_spec is None
    for name in ("llama3", "gpt-neox-olmo"):
        assert Tokenizer.load(published_tokenizers[name])._byte_spec is None
    split = byte.as_pipeline().description["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    assert split != byte.pattern and _core.pattern_lexer(split) == _core.pattern_lexer(byte.pattern) is not None


@SETTINGS
@given(corpus=corpus_strategy(), n=st.integers(0, 30), plain=st.lists(st.sampled_from(["hello", "ab", " c", "中"]),
                                                                         unique=True, max_size=2),
       template=st.booleans(), data=st.data())
def test_a_byte_configuration_pipeline_gives_hfs_ids(corpus, n, plain, template, data):
    """A pipeline that is a byte-model configuration gives HF's ids on every call: added tokens that are not
    special are matched by encode_ordinary too, special ones only by encode, and a template post-processor
    adds its BOS."""
    tok = Tokenizer.train(corpus, model="byte", num_merges=n, special_tokens=["<s>", "</s>"])
    d = tok.as_pipeline().description
    vocab = d["model"]["vocab"]
    next_id = max(vocab.values()) + 1
    for text in plain:  # the ids HF gives them: the vocabulary's, else the next ones
        id_ = vocab.get(text, next_id)
        next_id += text not in vocab
        d["added_tokens"].append({"id": id_, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                                  "normalized": False, "special": False})
    if template:
        d["post_processor"] = {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                               "special_tokens": {"<s>": {"id": "<s>", "ids": [d["model"]["vocab"]["<s>"]],
                                                          "tokens": ["<s>"]}}}
    pipe = from_hf_json(json.dumps(d))
    hf = tokenizers.Tokenizer.from_str(json.dumps(d))
    for _ in range(3):
        text = data.draw(text_strategy(["<s>", "</s>", *plain]))
        for add in (False, True):
            ids = hf.encode(text, add_special_tokens=add).ids
            assert pipe.encode(text, add_special_tokens=add) == ids
            assert pipe._core.encode(text, None, [], add) == ids
            assert pipe.encode_batch([text], add_special_tokens=add) == [ids]
        ordinary = pipe._core.encode(text, [], [])
        assert pipe.encode_ordinary(text) == ordinary == pipe.encode_ordinary_batch([text])[0]
        assert pipe.count(text) == len(ordinary) == pipe.count_batch([text])[0]


@pytest.mark.parametrize("tokens", [
    [("<|a|>", True, False), ("x<|a", False, True)],  # a normalized token overlapping a special one's start
    [("bc", True, False), ("abc", False, True)],      # a special token inside a normalized one
    [("bc", False, False), ("abcd", False, True)],    # non-special, normalized=false, inside a normalized one
    [("abcd", False, True), ("bc", False, False)],
])
@pytest.mark.parametrize("post", [None, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                         "use_regex": False}])
def test_added_tokens_with_and_without_normalized_match_as_hf(tokens, post):
    """Hugging Face matches the added tokens with ``normalized=false`` first, then the others in the gaps; one
    leftmost-longest pass over all of them (the byte model's) differs where a token of one kind overlaps one
    of the other, so such files are run by the pipeline engine: ids and offsets equal HF's (the byte model
    route, ``post=None``, and the byte core of a pipeline, a trimming post-processor)."""
    tok = Tokenizer.train("hello world " * 4, num_merges=6)
    d = dict(tok.as_pipeline().description, post_processor=post)
    size = len(d["model"]["vocab"])
    d["added_tokens"] = [{"id": size + k, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": norm, "special": special} for k, (c, special, norm) in enumerate(tokens)]
    text_json = json.dumps(d)
    hf = tokenizers.Tokenizer.from_str(text_json)
    ours = Tokenizer.from_spec(bytepair.formats.hf.loads(text_json))
    for text in ["x<|a|>", "zx<|a|>y", "abcd", "xabcd", "abc bc", "abcdabcd"]:
        e = hf.encode(text, add_special_tokens=False)
        assert ours.encode(text, allowed_special="all") == e.ids, text
        assert ours.encode_with_offsets(text, allowed_special="all") == (e.ids, e.offsets), text


def test_an_added_token_the_merges_make_stays_on_the_pipeline_engine():
    """hypothesis found it: a non-special added token "ab" that the merge (a, b) also makes."""
    tok = Tokenizer.train(["ab"], model="byte", num_merges=1, special_tokens=["<s>", "</s>"])
    d = tok.as_pipeline().description
    d["added_tokens"].append({"id": d["model"]["vocab"]["ab"], "content": "ab", "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False, "special": False})
    pipe = from_hf_json(json.dumps(d))
    hf = tokenizers.Tokenizer.from_str(json.dumps(d))
    for text in ["ab", "abab <s>ab", " a b ab</s>", "xaby"]:
        for add in (False, True):
            assert pipe.encode(text, add_special_tokens=add) == hf.encode(text, add_special_tokens=add).ids
