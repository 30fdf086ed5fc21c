"""``Tokenizer.decode_stream`` against Hugging Face's
``tokenizers.decoders.DecodeStream`` on bytepair's own ``tokenizer.json``
export: the same return value (text or ``None``) at every step, on random id
sequences and on the encodings of multilingual and emoji text, with and
without ``skip_special_tokens`` and a prompt (``ids=``). And on every prefix:
the pieces so far, joined, equal ``decode`` of the ids so far whenever the
step returned text (and are a prefix of it otherwise); byte-fallback tokens
of the char model (which Hugging Face's export cannot hold) are checked by
that property."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers.decoders import DecodeStream as HFDecodeStream

from bytepair import Tokenizer, UnknownTokenError

SPECIALS = ["<|endoftext|>", "<pad>"]
EMOJI = "😀👍🏽 👨‍👩‍👧‍👦 🇯🇵 ❤️‍🔥 é ñ 日本語 한국어 ελληνικά العربية हिन्दी \ufffd ok\n"


@pytest.fixture(scope="module")
def pairs(real_texts, vocab_paths, tmp_path_factory):
    """{name: (bytepair, tokenizers.Tokenizer of bytepair's export)}: a byte
    model trained on multilingual text (few merges: many partial-character
    tokens), one with more merges, and the real gpt2 vocabulary."""
    folder = str(tmp_path_factory.mktemp("decode-stream"))
    out = {}
    toks = {
        "small": Tokenizer.train(real_texts[:3], vocab_size=300, pattern="cl100k", special_tokens=SPECIALS),
        "large": Tokenizer.train(real_texts[:40], vocab_size=1500, pattern="o200k", special_tokens=SPECIALS),
        "gpt2": Tokenizer.load(vocab_paths["gpt2.tiktoken"]),
    }
    for name, tok in toks.items():
        path = os.path.join(folder, name + ".json")
        tok.save(path, format="hf")
        out[name] = (tok, tokenizers.Tokenizer.from_file(path))
    return out


NAMES = ["small", "large", "gpt2"]


def _run_both(tok, theirs, ids, skip=False, prompt=None, every_prefix=True):
    ours = tok.decode_stream(skip_special_tokens=skip, ids=prompt)
    hf = HFDecodeStream(ids=prompt, skip_special_tokens=skip) if prompt is not None else HFDecodeStream(skip_special_tokens=skip)
    specials = set(tok.special_tokens.values()) if skip else set()
    shown = ""
    for k, id_ in enumerate(ids):
        got, expected = ours.step(id_), hf.step(theirs, id_)
        assert got == expected, (k, id_, got, expected)
        shown += got or ""
        if prompt is None and (every_prefix or k == len(ids) - 1):
            whole = tok.decode([i for i in ids[: k + 1] if i not in specials])
            if got is not None:
                assert shown == whole, k
            else:
                assert whole.startswith(shown), k


@pytest.mark.parametrize("name", NAMES)
def test_multilingual_and_emoji_encodings(pairs, real_texts, name):
    tok, theirs = pairs[name]
    lines = [EMOJI] + real_texts[0].splitlines(keepends=True)
    for line in lines:
        ids = tok.encode(line)
        _run_both(tok, theirs, ids)
    # one long stream of the whole multilingual document, specials between lines
    ids = []
    for line in lines:
        ids += tok.encode(line) + [tok.special_tokens["<|endoftext|>"]]
    _run_both(tok, theirs, ids, every_prefix=False)
    _run_both(tok, theirs, ids, skip=True, every_prefix=False)


def _random_ids(tok):
    return st.lists(st.integers(0, tok.n_vocab - 1), max_size=40)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_random_ids(pairs, name, data):
    tok, theirs = pairs[name]
    ids = data.draw(_random_ids(tok))
    skip = data.draw(st.booleans())
    _run_both(tok, theirs, ids, skip=skip)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_with_a_prompt(pairs, name, data):
    tok, theirs = pairs[name]
    prompt = data.draw(_random_ids(tok))
    ids = data.draw(_random_ids(tok))
    _run_both(tok, theirs, ids, prompt=prompt)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_generated_text(pairs, name, text):
    tok, theirs = pairs[name]
    # the text as text: Hypothesis also draws string constants of the code under test, "<|endoftext|>" among them
    _run_both(tok, theirs, tok.encode(text, disallowed_special=()))


def test_byte_tokens_of_one_character_return_none_until_complete(pairs):
    tok, theirs = pairs["small"]
    stream = tok.decode_stream()
    assert [stream.step(b) for b in "👍".encode("utf-8")] == [None, None, None, "👍"]


def test_char_model_byte_fallback_on_every_prefix(real_texts):
    tok = Tokenizer.train(real_texts[0][:3000], model="char", end_of_word=None, num_merges=50, byte_fallback=True)
    # 😀 was never seen: four byte-fallback tokens, each completing no character until the last
    assert [tok.decode_single_token_bytes(i) for i in tok.encode("😀")] == [b"<0xF0>", b"<0x9F>", b"<0x98>", b"<0x80>"]
    stream = tok.decode_stream()
    assert [stream.step(i) for i in tok.encode("😀")] == [None, None, None, "😀"]
    for text in ["日本語 😀 abc", real_texts[0][:2000], EMOJI]:
        ids = tok.encode(text)
        stream = tok.decode_stream()
        shown = ""
        for k, id_ in enumerate(ids):
            got = stream.step(id_)
            whole = tok.decode(ids[: k + 1])
            shown += got or ""
            if got is not None:
                assert shown == whole
            else:
                assert whole.startswith(shown) and whole.endswith("\ufffd")
        assert shown == tok.decode(ids)


def test_numpy_ids_and_bad_ids(pairs):
    tok, _ = pairs["small"]
    stream = tok.decode_stream()
    assert stream.step(np.uint32(104)) == "h"
    with pytest.raises(UnknownTokenError):
        stream.step(10**9)
    with pytest.raises(UnknownTokenError):
        stream.step("h")
    with pytest.raises(UnknownTokenError):
        tok.decode_stream(ids=[-1])


@pytest.mark.parametrize("name", ["tekken", "sentencepiece"])
def test_skipping_specials_in_a_stream_decodes_as_decode(name):
    """With ``skip_special_tokens``, the pieces a stream returns join to ``decode(ids, skip_special_tokens=True)``,
    also where the owner decodes the bytes on the two sides of a special token apart (mistral_common's groups,
    sentencepiece's control pieces): a character's bytes split by one never join."""
    import glob

    import mistral_common

    data = os.path.join(os.path.dirname(mistral_common.__file__), "data")
    path = sorted(glob.glob(os.path.join(data, "tekken*.json" if name == "tekken" else "*.model.v1")))[0]
    tok = Tokenizer.load(path)
    byte = {b: tok.encode_single_token(bytes([b])) if name == "tekken" else tok.token_to_id(f"<0x{b:02X}>")
            for b in range(256)}
    special = tok.special_tokens["</s>"]
    for char in ["Р", "中", "😀"]:
        raw = char.encode()
        for cut in range(1, len(raw)):
            ids = [byte[b] for b in raw[:cut]] + [special] + [byte[b] for b in raw[cut:]] + tok.encode_ordinary(" ok")
            stream = tok.decode_stream(skip_special_tokens=True)
            pieces = [t for t in map(stream.step, ids) if t is not None]
            assert "".join(pieces) == tok.decode(ids, skip_special_tokens=True), (char, cut)
            assert "\ufffd" in "".join(pieces)
