"""``CoreTokenizer.merge_triples()`` (every merge as (left id, right id,
merged id)) against what the description says independently: the merges a
model was given (``spec.merge_ids`` with their ids), and, for a byte model
given as ranks (tiktoken files), the pure-Python reference's
``derive_merges`` (each multi-byte token split in two by BPE with the lower
ranks only).

On trained byte and char models, on the real gpt2 and cl100k_base ranks, on
saved ``.tiktoken`` files, on continued training, and on random rank tables
(hypothesis: missing byte tokens, the same bytes at two ids, special tokens).
"""

from __future__ import annotations

import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer, _core
from bytepair.reference import derive_merges
from bytepair.spec import from_byte_vocab
from bytepair.errors import FormatError, TrainingError, TrainingWarning

EXAMPLES = int(os.environ.get("BYTEPAIR_EXAMPLES", "300"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ALPHABETS = ["ab", "ab ", "aab \n", "abc ", "aé b", "xyz_\t", "🙂a "]

corpora = st.sampled_from(ALPHABETS).flatmap(
    lambda alphabet: st.lists(st.text(alphabet=alphabet, max_size=24), min_size=1, max_size=8)
)


def _specials(tok):
    return sorted(tok.special_tokens.items(), key=lambda kv: kv[1])


def _table(tok):
    """Every id's bytes, None for special tokens (a byte model's rank table)."""
    specials = set(tok.special_tokens.values())
    return [None if i in specials else tok._core.token_bytes(i) for i in range(tok.n_vocab)]


def _given(tok):
    """The merges of the description with their ids: consecutive after the
    ids given one by one, unless ``merge_results`` lists them."""
    spec = tok.spec
    merges = spec.merge_ids or ()
    first = spec.n_fixed - len(merges)
    ids = spec.merge_results if spec.merge_results is not None else range(first, first + len(merges))
    return [(l, r, i) for (l, r), i in zip(merges, ids)]


def _table_core(tok):
    """A core built from the byte model's rank table alone (merges derived)."""
    return _core.CoreTokenizer.byte(_table(tok), tok.pattern, _specials(tok), add_prefix_space=tok.add_prefix_space)


def _train(docs, model, **options):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingWarning)  # ran out of pairs: fewer merges
            return Tokenizer.train(docs, model=model, **options)
    except TrainingError as e:  # a corpus of empty texts has nothing to train on
        assert "empty" in str(e)
        return None


@SETTINGS
@given(
    docs=corpora,
    merges=st.integers(0, 40),
    tie_break=st.sampled_from(["pair-id", "first", "alphabetical"]),
    specials=st.booleans(),
)
def test_trained_byte_models(docs, merges, tie_break, specials):
    tok = _train(docs, "byte", num_merges=merges, tie_break=tie_break,
                 special_tokens=["<|endoftext|>"] if specials else None)
    if tok is None:
        return
    assert tok._core.merge_triples() == _given(tok)
    # the core built from the token table alone derives them, as the
    # reference does on the same table
    assert _table_core(tok).merge_triples() == derive_merges(_table(tok))


@SETTINGS
@given(
    docs=corpora,
    merges=st.integers(0, 40),
    marker=st.sampled_from([None, "</w>", "_"]),
    fused=st.booleans(),
    byte_fallback=st.booleans(),
)
def test_trained_char_models(docs, merges, marker, fused, byte_fallback):
    tok = _train(docs, "char", num_merges=merges, end_of_word=marker, end_of_word_fused=fused,
                 byte_fallback=byte_fallback, special_tokens=["<s>"])
    if tok is None:
        return
    assert tok._core.merge_triples() == _given(tok)


@pytest.mark.parametrize("name", ["gpt2.tiktoken", "cl100k_base.tiktoken"])
def test_real_tiktoken_ranks(vocab_paths, name):
    tok = Tokenizer.load(vocab_paths[name], format="tiktoken")
    assert tok.spec.merge_ids is None  # a rank table: merges are derived
    got = tok._core.merge_triples()
    assert got == derive_merges(list(tok.spec.tokens))
    assert len(got) > 49_000  # nearly every multi-byte token splits


def test_saved_tiktoken_file_and_continued_training(tmp_path):
    text = open(os.path.join(os.path.dirname(__file__), "data", "multilingual.txt"), encoding="utf-8").read()
    half = len(text) // 2
    trained = Tokenizer.train(text[:half], num_merges=300)
    path = tmp_path / "trained.tiktoken"
    trained.save(str(path), format="tiktoken")
    loaded = Tokenizer.load(str(path), format="tiktoken")
    assert loaded.spec.merge_ids is None
    assert loaded._core.merge_triples() == derive_merges(list(loaded.spec.tokens))
    # continued training of a rank table: the derived merges, then new ones
    # with explicit ids
    more = Tokenizer.train(text[half:], num_merges=50, init=loaded)
    assert more.spec.merge_results is not None
    assert more._core.merge_triples() == _given(more)
    assert _given(more)[:len(derive_merges(list(loaded.spec.tokens)))] == derive_merges(list(loaded.spec.tokens))


rank_tables = st.tuples(
    st.lists(st.binary(min_size=2, max_size=6).map(lambda b: bytes(x % 4 + 97 for x in b)), max_size=40),
    st.sets(st.integers(97, 100), max_size=2),  # byte tokens left out
    st.lists(st.integers(0, 39), max_size=3),  # tokens given a second id
    st.booleans(),
)


@SETTINGS
@given(table=rank_tables)
def test_random_rank_tables(table):
    extra, missing, again, specials = table
    tokens = {b: bytes([b]) for b in range(256) if b not in missing}
    for t in extra:
        tokens[len(tokens) + len(missing)] = t
    for k in again:
        if k < len(extra):
            tokens[len(tokens) + len(missing)] = extra[k]
    special = {"<|x|>": len(tokens) + len(missing) + 3} if specials else None
    tok = Tokenizer.from_spec(from_byte_vocab(tokens, "cl100k", special))
    assert tok._core.merge_triples() == derive_merges(list(tok.spec.tokens))


def test_byte_merges_are_checked():
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b"abc"]
    ok = _core.CoreTokenizer.byte(tokens, "cl100k", [], merges=[(97, 98), (256, 99)])
    assert ok.merge_triples() == [(97, 98, 256), (256, 99, 257)]
    ids = _core.CoreTokenizer.byte(tokens, "cl100k", [], merges=[(97, 98)], merge_ids=[256])
    assert ids.merge_triples() == [(97, 98, 256)]
    with pytest.raises(FormatError, match="merge 2"):
        _core.CoreTokenizer.byte(tokens, "cl100k", [], merges=[(97, 98), (256, 100)])
    with pytest.raises(FormatError, match="unknown id"):
        _core.CoreTokenizer.byte(tokens, "cl100k", [], merges=[(97, 999)])
    with pytest.raises(FormatError, match="one id per merge"):
        _core.CoreTokenizer.byte(tokens, "cl100k", [], merges=[(97, 98)], merge_ids=[256, 257])
    with pytest.raises(FormatError, match="without merges"):
        _core.CoreTokenizer.byte(tokens, "cl100k", [], merge_ids=[256])
    # a special token is not a merge's part or result
    with pytest.raises(FormatError, match="merge 1"):
        _core.CoreTokenizer.byte(tokens[:256], "cl100k", [("ab", 256)], merges=[(97, 98)])


def test_byte_model_from_merges_alone_equals_the_table_route():
    # the core's own byte table (byte_merges) against the table joined here from the merges
    text = open(os.path.join(os.path.dirname(__file__), "data", "multilingual.txt"), encoding="utf-8").read()
    tok = Tokenizer.train(text, num_merges=400, special_tokens=["<|x|>"])
    first = Tokenizer.train(text[: len(text) // 2], num_merges=100, special_tokens=["<|y|>"])
    more = Tokenizer.train(text, init=first, num_merges=50)  # merge ids above the specials' are not consecutive
    for t in (tok, more):
        merges, results = list(t.spec.merge_ids), t.spec.merge_results
        table = [bytes([b]) for b in range(256)] + [None] * (max(results or [0]) + len(merges))
        for k, (l, r) in enumerate(merges):
            table[results[k] if results else 256 + k] = table[l] + table[r]
        while table[-1] is None:
            table.pop()
        specials = sorted(t.special_tokens.items(), key=lambda kv: kv[1])
        joined = _core.CoreTokenizer.byte(table, t.pattern, specials, merges=merges,
                                          merge_ids=None if results is None else list(results))
        core = _core.CoreTokenizer.byte_merges(merges, t.pattern, specials,
                                               merge_ids=None if results is None else list(results))
        assert core.n_vocab == joined.n_vocab
        assert [core.token_bytes(i) for i in range(core.n_vocab)] == [joined.token_bytes(i) for i in range(joined.n_vocab)]
        assert core.merge_triples() == joined.merge_triples()
        assert core.encode_ordinary(text) == joined.encode_ordinary(text)


def test_byte_merges_alone_are_checked():
    with pytest.raises(FormatError, match="merge 2 refers to an unknown id"):
        _core.CoreTokenizer.byte_merges([(97, 98), (256, 999)], "cl100k", [])
    with pytest.raises(FormatError, match="merge 2 has id 256, which is already taken"):
        _core.CoreTokenizer.byte_merges([(97, 98), (97, 99)], "cl100k", [], merge_ids=[256, 256])
    with pytest.raises(FormatError, match="one id per merge"):
        _core.CoreTokenizer.byte_merges([(97, 98)], "cl100k", [], merge_ids=[256, 257])
    with pytest.raises(FormatError, match="unused"):  # refused before a table of 2**31 ids is allocated
        _core.CoreTokenizer.byte_merges([(97, 98)], "cl100k", [], merge_ids=[2**31])
    with pytest.raises(FormatError, match="reuses id 256"):
        _core.CoreTokenizer.byte_merges([(97, 98)], "cl100k", [("<s>", 256)])


def test_continued_char_training():
    text = open(os.path.join(os.path.dirname(__file__), "data", "multilingual.txt"), encoding="utf-8").read()
    half = len(text) // 2
    first = Tokenizer.train(text[:half], model="char", num_merges=200, special_tokens=["<s>"])
    more = Tokenizer.train(text[half:], num_merges=50, init=first)
    assert more.model == "char" and more.spec.merge_results is not None
    assert more._core.merge_triples() == _given(more)
    assert len(_given(more)) > len(_given(first))
