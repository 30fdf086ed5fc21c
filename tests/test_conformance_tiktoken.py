"""bytepair against tiktoken on the real cl100k_base and gpt2 (r50k_base)
vocabularies: identical ids from encode, encode_ordinary, encode_batch and
special-token handling, on real multilingual text and on hypothesis strings.

The reference is built by tiktoken itself (``tiktoken_ext.openai_public``'s
own constructors, reading the sha256-checked local files), so it shares
nothing with bytepair: not the patterns, not the special tokens, not the
file reader.
"""

from __future__ import annotations

import os

import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import PRESETS, DisallowedSpecialError, Tokenizer
from bytepair.formats import tiktoken as tt

EXAMPLES = int(os.environ.get("BYTEPAIR_CONFORMANCE_EXAMPLES", "250"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None)

VOCABS = {"cl100k_base": ("cl100k_base.tiktoken", openai_public.cl100k_base),
          "gpt2": ("gpt2.tiktoken", openai_public.r50k_base)}  # whisper's gpt2.tiktoken is r50k_base.tiktoken


def _reference(constructor, path):
    """tiktoken's own Encoding, its loader pointed at the local file."""
    real = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda url, expected_hash=None: tiktoken.load.load_tiktoken_bpe(path, expected_hash)
    try:
        return tiktoken.Encoding(**constructor())
    finally:
        openai_public.load_tiktoken_bpe = real


@pytest.fixture(scope="module", params=sorted(VOCABS))
def pair(request, vocab_paths):
    """(bytepair Tokenizer, tiktoken Encoding) for one vocabulary."""
    file, constructor = VOCABS[request.param]
    path = vocab_paths[file]
    return Tokenizer.load(path, format="tiktoken"), _reference(constructor, path)


@pytest.fixture(scope="module")
def cl100k(vocab_paths):
    path = vocab_paths["cl100k_base.tiktoken"]
    return Tokenizer.from_tiktoken(path), _reference(openai_public.cl100k_base, path)


def test_known_vocabularies_get_tiktokens_pattern_and_specials(pair):
    tok, enc = pair
    assert tok.pattern == enc._pat_str
    assert tok.special_tokens == enc._special_tokens
    assert tok.n_vocab == enc.n_vocab


def test_vocabulary_is_tiktokens(pair):
    tok, enc = pair
    ranks = {b: i for i, b in tok.vocab().items() if i not in tok.special_tokens.values()}
    assert ranks == enc._mergeable_ranks


def test_explicit_pattern_and_specials_override(vocab_paths):
    tok = Tokenizer.from_tiktoken(vocab_paths["gpt2.tiktoken"], pattern="cl100k", special_tokens={"<|x|>": 60000})
    assert tok.special_tokens == {"<|x|>": 60000}
    assert tok.pattern == PRESETS["cl100k"]


# ---------------------------------------------------------------- real text


def test_real_text_encode_ordinary(pair, real_texts):
    tok, enc = pair
    for doc in real_texts:
        assert tok.encode_ordinary(doc) == enc.encode_ordinary(doc)


def test_one_long_text_cut_for_the_threads(pair, real_texts):
    # 160 KiB and more: cut at a newline before a letter and the parts encoded in parallel (cl100k; r50k's words
    # may not be cut so, it runs on one thread), the same ids as one pass
    tok, enc = pair
    text = "".join(real_texts)
    assert len(text) >= 160 << 10
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.count(text) == len(enc.encode_ordinary(text))
    assert tok.encode_ordinary_batch([text, text[7:]]) == enc.encode_ordinary_batch([text, text[7:]])


def test_real_text_line_by_line(pair, real_texts):
    tok, enc = pair
    lines = [line for doc in real_texts[:1] + real_texts[-4:] for line in doc.splitlines(keepends=True)]
    assert tok.encode_batch(lines) == enc.encode_batch(lines)
    assert tok.encode_ordinary_batch(lines) == enc.encode_ordinary_batch(lines)


def test_real_text_with_special_tokens(pair, real_texts):
    tok, enc = pair
    specials = sorted(enc.special_tokens_set)
    docs = [doc + specials[i % len(specials)] + doc[: 200] for i, doc in enumerate(real_texts[:40])]
    for doc in docs:
        assert tok.encode(doc, allowed_special="all") == enc.encode(doc, allowed_special="all")
        assert tok.encode(doc, disallowed_special=()) == enc.encode(doc, disallowed_special=())
        assert tok.encode(doc, allowed_special={specials[0]}, disallowed_special=()) == enc.encode(
            doc, allowed_special={specials[0]}, disallowed_special=()
        )
    assert tok.encode_batch(docs, allowed_special="all") == enc.encode_batch(docs, allowed_special="all")


def test_disallowed_special_raises_like_tiktoken(pair):
    tok, enc = pair
    text = "hello <|endoftext|> world"
    with pytest.raises(ValueError):
        enc.encode(text)
    with pytest.raises(DisallowedSpecialError, match="allowed_special"):
        tok.encode(text)
    with pytest.raises(DisallowedSpecialError):
        tok.encode_batch(["fine", text])
    # allowed but another special is disallowed
    if len(enc.special_tokens_set) > 1:
        other = sorted(enc.special_tokens_set - {"<|endoftext|>"})[0]
        with pytest.raises(ValueError):
            enc.encode(text + other, allowed_special={"<|endoftext|>"})
        with pytest.raises(DisallowedSpecialError):
            tok.encode(text + other, allowed_special={"<|endoftext|>"})
    assert tok.encode(text, allowed_special={"<|endoftext|>"}) == enc.encode(text, allowed_special={"<|endoftext|>"})


def test_decode_equals_tiktoken(pair, real_texts):
    tok, enc = pair
    ids = enc.encode(real_texts[0])
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)
    assert tok.decode(ids) == enc.decode(ids) == real_texts[0]
    cut = ids[:7] + [ids[7] + 1] if len(ids) > 8 else ids
    assert tok.decode(cut) == enc.decode(cut)


# ---------------------------------------------------------------- generated text

WHITESPACE = list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2009\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff")
OTHERS = list("aZé日本ß'’\"0123456789._-/\\!?¿😀👍🏽\u0301ـ")
mixes = st.text(alphabet=st.sampled_from(WHITESPACE + OTHERS), max_size=60)
runs = st.lists(
    st.tuples(st.sampled_from(WHITESPACE + OTHERS + ["ab", " the", "'s", "123"]), st.integers(1, 400)),
    min_size=1,
    max_size=5,
).map(lambda parts: "".join(s * n for s, n in parts))


@SETTINGS
@given(text=st.text())
def test_hypothesis_text(pair, text):
    tok, enc = pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())


@SETTINGS
@given(text=mixes)
def test_hypothesis_whitespace_mixes(pair, text):
    tok, enc = pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


@SETTINGS
@given(text=runs)
def test_hypothesis_long_runs(pair, text):
    tok, enc = pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


# Runs of every ASCII class the 64-byte masks of src/pretok/lexer_bits.rs tell apart, a few characters each, so
# that the words' starts fall at every offset of a block and next to every other class
ASCII_CLASSES = ["abzq", "ABZQ", "sStT", " ", "\t\x0b\x0c", "\r\n", ".,!-_(~", "/", "0123456789", "\x00\x1f\x7f", "'", "é\xa0中"]
class_runs = st.lists(st.tuples(st.sampled_from(ASCII_CLASSES), st.integers(1, 12), st.randoms(use_true_random=False)),
                      max_size=60).map(lambda parts: "".join("".join(r.choice(c) for _ in range(n)) for c, n, r in parts))


@SETTINGS
@given(text=class_runs)
def test_hypothesis_runs_of_every_ascii_class(pair, text):
    tok, enc = pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.count(text) == len(enc.encode_ordinary(text))


# One long piece (no whitespace), past the 128 bytes where bytepair leaves
# tiktoken's quadratic loop for its bucket queue: a unit repeated (ties on
# every step), random letters, punctuation, digits (pieces of 3), emoji.
UNITS = ["a", "ab", "aab", "xyz", "é", "日本", "ß", "!", "!\"#$%&()*+,-./", "...", "=-", "7", "12", "😀", "👍🏽", "_"]
long_pieces = st.one_of(
    st.tuples(st.sampled_from(UNITS), st.integers(130, 3000)).map(lambda t: t[0] * t[1]),
    st.text(alphabet="abcdefghij", min_size=130, max_size=2000),
    st.text(alphabet="etaoinshrdlu", min_size=130, max_size=2000),
    st.text(alphabet="!?.,;:-_=+*/", min_size=130, max_size=2000),
    st.lists(st.sampled_from(UNITS[:8]), min_size=60, max_size=600).map("".join),
)


@SETTINGS
@given(text=long_pieces)
def test_hypothesis_long_pieces(pair, text):
    tok, enc = pair
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


@settings(max_examples=max(EXAMPLES // 2, 20), deadline=None)
@given(data=st.data())
def test_hypothesis_special_tokens(pair, data):
    tok, enc = pair
    specials = sorted(enc.special_tokens_set)
    parts = data.draw(st.lists(st.one_of(st.text(max_size=20), st.sampled_from(specials)), max_size=8))
    text = "".join(parts)
    allowed = data.draw(st.one_of(st.just("all"), st.sets(st.sampled_from(specials))))
    for kwargs in ({"allowed_special": allowed, "disallowed_special": ()}, {"allowed_special": allowed}):
        try:
            expected = enc.encode(text, **kwargs)
        except ValueError:
            with pytest.raises(DisallowedSpecialError):
                tok.encode(text, **kwargs)
        else:
            assert tok.encode(text, **kwargs) == expected
    assert tok.encode_batch([text, text[::-1]], allowed_special="all") == enc.encode_batch(
        [text, text[::-1]], allowed_special="all"
    )


def test_lone_surrogates_are_replaced_as_tiktoken_does(cl100k):
    """tiktoken encodes a str holding lone surrogates after replacing them
    with U+FFFD (and joining surrogate pairs); bytepair gives tiktoken's
    ids for every str."""
    tok, enc = cl100k
    for text in ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ud83d"]:
        assert tok.encode(text) == enc.encode(text)
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)


# ---------------------------------------------------------------- files and to_tiktoken


def test_save_writes_the_original_file_back(pair, vocab_paths, tmp_path):
    tok, enc = pair
    name = "cl100k_base.tiktoken" if enc.name == "cl100k_base" else "gpt2.tiktoken"
    out = tmp_path / name
    tok.save(str(out), format="tiktoken")
    assert out.read_bytes() == open(vocab_paths[name], "rb").read()


def test_to_tiktoken_encodes_identically(pair, real_texts):
    tok, enc = pair
    mine = tt.to_tiktoken(tok)
    assert mine._mergeable_ranks == enc._mergeable_ranks
    assert mine.special_tokens_set == enc.special_tokens_set
    for doc in real_texts[:3]:
        assert mine.encode(doc) == enc.encode(doc) == tok.encode(doc)


def test_trained_tokenizer_round_trips_through_tiktoken(real_texts, tmp_path):
    tok = Tokenizer.train(real_texts[:30], vocab_size=700, pattern="gpt2", special_tokens=["<|endoftext|>"])
    enc = tt.to_tiktoken(tok)
    path = tmp_path / "t.tiktoken"
    tok.save(str(path), format="tiktoken")
    back = Tokenizer.load(str(path), pattern="gpt2", special_tokens=tok.special_tokens)
    for doc in real_texts[30:40]:
        doc = doc + "<|endoftext|>"
        assert tok.encode(doc, allowed_special="all") == enc.encode(doc, allowed_special="all")
        assert back.encode(doc, allowed_special="all") == enc.encode(doc, allowed_special="all")
