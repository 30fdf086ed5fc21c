"""Merging a missed piece from whole characters and cutting it where no token
crosses (src/model/atoms.rs), against the owners: tiktoken on cl100k_base, Hugging
Face ``tokenizers`` on Llama 3, Qwen 2 and DeepSeek V3. The texts are built from
the vocabulary itself: its one-character tokens (the atoms' candidates) and, around
them, the fragment tokens (a token that starts or ends inside a character), put
across a character's end as the rule's condition 3 must catch."""

from __future__ import annotations

import os

import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.formats.convert import UNICODE_TO_BYTE
from test_conformance_tiktoken import _reference as tiktoken_reference

EXAMPLES = int(os.environ.get("BYTEPAIR_CONFORMANCE_EXAMPLES", "250"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MOST = 400  # of each kind of text part


def _every(items, most=MOST):
    """At most ``most`` of ``items`` (sorted), spread evenly: the same parts on every run."""
    items = sorted(set(items))
    step = max(1, len(items) // most)
    return items[::step][:most]


def _text_parts(token_bytes):
    """Parts to build texts from: the non-ASCII characters of the Basic Multilingual Plane that are whole
    tokens, and for fragment tokens a text that puts the fragment across such a character's end (the
    character, then what completes a token starting inside it; or what completes a token ending inside
    it, then the character)."""
    whole = [t.decode() for t in token_bytes if len(t) in (2, 3) and _one_char(t)]
    starting, ending = {}, {}  # proper prefix / suffix of a whole character's bytes -> those characters
    for c in whole:
        b = c.encode()
        for i in range(1, len(b)):
            starting.setdefault(b[:i], []).append(c)
            ending.setdefault(b[i:], []).append(c)
    contexts = []
    for t in token_bytes:
        lead = len(t) - len(t.lstrip(bytes(range(0x80, 0xC0))))
        for k in range(1, min(lead, 3) + 1):  # a tail: the end of a character, then more
            rest = _completed(t[k:], starting)
            if rest and t[:k] in ending:
                contexts.append(ending[t[:k]][0] + rest)
        for p in range(max(0, len(t) - 3), len(t)):  # a head: more, then the start of a character
            if t[p] >= 0xC0 and t[p:] in starting and p > 0:
                head = _decoded(t[:p])
                if head:
                    contexts.append(head + starting[t[p:]][0])
    return _every(whole), _every(contexts)


def _one_char(b):
    try:
        return len(b.decode()) == 1
    except UnicodeDecodeError:
        return False


def _decoded(b):
    try:
        return b.decode()
    except UnicodeDecodeError:
        return None


def _completed(b, starting):
    """``b`` as text, a character cut at its end completed by a whole character that starts so; None when
    ``b`` starts inside a character or holds other invalid bytes."""
    for cut in range(len(b), max(-1, len(b) - 4), -1):
        head = _decoded(b[:cut])
        if head is not None and (cut == len(b) or b[cut:] in starting):
            return head + (starting[b[cut:]][0] if cut < len(b) else "")
    return None


def _texts(parts):
    whole, contexts = parts
    pool = whole + contexts + [" ", "a", "x1", "。"]
    return st.lists(st.sampled_from(pool), min_size=1, max_size=14).map("".join)


@pytest.fixture(scope="module")
def cl100k(vocab_paths):
    path = vocab_paths["cl100k_base.tiktoken"]
    reference = tiktoken_reference(openai_public.cl100k_base, path)
    tokens = list(tiktoken.load.load_tiktoken_bpe(path))
    return bytepair.Tokenizer.load(path, format="tiktoken"), reference, _text_parts(tokens)


@pytest.fixture(scope="module", params=["llama3", "qwen2", "deepseek-v3"])
def pipeline(request, published_tokenizers):
    path = published_tokenizers[request.param]
    reference = tokenizers.Tokenizer.from_file(path)
    tokens = [bytes(UNICODE_TO_BYTE[c] for c in t) for t in reference.get_vocab()
              if all(c in UNICODE_TO_BYTE for c in t)]
    return bytepair.Tokenizer.load(path), reference, _text_parts(tokens)


def test_the_vocabularies_have_parts_of_both_kinds(cl100k, pipeline):
    # the texts reach the rule: many whole characters, and fragments across their ends
    for _, _, (whole, contexts) in (cl100k, pipeline):
        assert len(whole) > 300 and len(contexts) > 50, (len(whole), len(contexts))


@SETTINGS
@given(data=st.data())
def test_tiktoken_ids(cl100k, data):
    tok, reference, parts = cl100k
    text = data.draw(_texts(parts))
    assert tok.encode(text) == reference.encode_ordinary(text), text


@SETTINGS
@given(data=st.data())
def test_hugging_face_ids(pipeline, data):
    tok, reference, parts = pipeline
    text = data.draw(_texts(parts))
    assert tok.encode(text, add_special_tokens=False) == reference.encode(text, add_special_tokens=False).ids, text


def test_real_multilingual_text(cl100k, pipeline, real_texts):
    # the multilingual sample (about 30 languages and scripts), line by line and whole
    text = real_texts[0]
    for tok, reference, _ in (cl100k, pipeline):
        for text in [*text.splitlines(), text]:
            want = (reference.encode_ordinary(text) if isinstance(reference, tiktoken.Encoding)
                    else reference.encode(text, add_special_tokens=False).ids)
            assert tok.encode(text, add_special_tokens=False) == want
