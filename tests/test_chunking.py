"""Token-aware chunking, truncation and limited counting (``bytepair.chunking``).

Every count is checked against the tokenizer's own encoder (the number of
ids ``encode_ordinary`` gives for the piece alone), on random texts built
from paragraphs, lines, sentences, words, multibyte characters and emoji,
for a byte model, a char model with byte fallback, and two published
Hugging Face pipelines (Llama 3's byte-level file, Mistral's SentencePiece
layout with Metaspace and byte fallback). Properties:

- chunks: each fits ``max_tokens``; without overlap they join to the text;
  with overlap each starts inside the previous one and the shared stretch
  fits ``overlap``; a chunk never passes over a better kind of natural
  boundary that fits, nor stops short of the end when the rest fits;
- truncate: the prefix fits and one more character does not;
- count(limit): equals ``min(count, limit + 1)``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import BytepairError, Tokenizer
from bytepair.chunking import LEVELS, chunk_spans


@pytest.fixture(scope="module")
def toks(real_texts, published_tokenizers):
    sample = real_texts[:6]
    return {
        "byte": Tokenizer.train(sample, vocab_size=700, pattern="cl100k", special_tokens=["<|endoftext|>"]),
        "char": Tokenizer.train(sample, model="char", num_merges=400, byte_fallback=True),
        "llama3": Tokenizer.load(published_tokenizers["llama3"]),
        "mistral": Tokenizer.load(published_tokenizers["mistral-v3-metaspace"]),
    }


KINDS = ["byte", "char", "llama3", "mistral"]


def n_tokens(tok, text):
    """The oracle: ids of the text alone (special-token text as text)."""
    return len(tok.encode_ordinary(text))


WORDS = st.sampled_from(["the", "cat", "sat", "naïve", "café", "日本語", "😀", "Mr.", "x", "lowest",
                         "tokenization", "ab", "...", "<|endoftext|>", "a" * 30, "ééé"])
SEPS = st.sampled_from([" ", " ", " ", "  ", ". ", "! ", "\n", "\n\n", "\n \n", "\t", "。"])
TEXTS = st.lists(st.tuples(WORDS, SEPS), max_size=60).map(lambda parts: "".join(w + s for w, s in parts)) | st.text(
    alphabet=st.sampled_from("ab .\n é日😀"), max_size=120)


def boundaries(text, level):
    return {m.end() for m in LEVELS[level][1].finditer(text)}


def level_of(text, pos):
    for i in range(len(LEVELS)):
        if pos in boundaries(text, i):
            return i
    return len(LEVELS)


def check_chunks(tok, text, max_tokens, overlap=0):
    try:
        spans = list(chunk_spans(tok, text, max_tokens, overlap))
    except BytepairError as e:
        # only when a chunk must start with a character that alone does not fit
        pos = int(re.search(r"at position (\d+) cannot start a chunk", str(e)).group(1))
        assert n_tokens(tok, text[pos]) > max_tokens
        return []
    assert [text[s:e] for s, e, _ in spans] == list(tok.chunk(text, max_tokens, overlap))
    if not text:
        assert spans == []
        return spans
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for k, (s, e, n) in enumerate(spans):
        piece = text[s:e]
        assert s < e
        assert n == n_tokens(tok, piece) <= max_tokens, (k, piece)
        if e == len(text):
            assert k == len(spans) - 1
            continue
        # not the last: the rest does not fit, and no better boundary kind was passed over
        assert n_tokens(tok, text[s:]) > max_tokens
        mine = level_of(text, e)
        for better in range(mine):
            before = [b for b in boundaries(text, better) if s < b < e]
            if before:
                assert n_tokens(tok, text[s:max(before)]) > max_tokens, (k, LEVELS[better][0], piece)
        ns, ne, _ = spans[k + 1]
        if overlap == 0:
            assert ns == e
        else:
            assert s < ns <= e < ne
            assert n_tokens(tok, text[ns:e]) <= overlap
    if overlap == 0:
        assert "".join(text[s:e] for s, e, _ in spans) == text
    return spans


def check_truncate(tok, text, max_tokens):
    prefix = tok.truncate(text, max_tokens)
    assert text.startswith(prefix)
    assert n_tokens(tok, prefix) <= max_tokens
    if len(prefix) < len(text):
        assert n_tokens(tok, text[: len(prefix) + 1]) > max_tokens
    return prefix


SETTINGS = dict(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("kind", KINDS)
@settings(**SETTINGS)
@given(text=TEXTS, max_tokens=st.integers(4, 40))
def test_chunks_fit_and_cover(toks, kind, text, max_tokens):
    check_chunks(toks[kind], text, max_tokens)


@pytest.mark.parametrize("kind", KINDS)
@settings(**SETTINGS)
@given(text=TEXTS, max_tokens=st.integers(6, 40), data=st.data())
def test_chunks_with_overlap(toks, kind, text, max_tokens, data):
    overlap = data.draw(st.integers(1, max_tokens // 2))
    check_chunks(toks[kind], text, max_tokens, overlap)


@pytest.mark.parametrize("kind", KINDS)
@settings(**SETTINGS)
@given(text=TEXTS, max_tokens=st.integers(1, 40))
def test_truncate_is_the_longest_prefix(toks, kind, text, max_tokens):
    check_truncate(toks[kind], text, max_tokens)


@pytest.mark.parametrize("kind", KINDS)
@settings(**SETTINGS)
@given(text=TEXTS, limit=st.integers(0, 60))
def test_count_with_limit(toks, kind, text, limit):
    tok = toks[kind]
    assert tok.count(text, limit=limit) == min(n_tokens(tok, text), limit + 1)
    assert tok.count(text) == n_tokens(tok, text)


@pytest.mark.parametrize("kind", KINDS)
def test_real_documents(toks, real_texts, kind):
    tok = toks[kind]
    for doc in real_texts[:3]:
        doc = doc[:20000]
        for max_tokens in (50, 300):
            spans = check_chunks(tok, doc, max_tokens)
            # natural boundaries are used: prose chunks end at one, nearly always
            ends = [level_of(doc, e) for _, e, _ in spans[:-1]]
            assert sum(level < len(LEVELS) for level in ends) >= 0.9 * len(ends)
        check_chunks(tok, doc[:5000], 100, overlap=20)
        check_truncate(tok, doc, 100)


def test_count_with_limit_on_a_long_text_stops_early(toks):
    """The byte model stops after the first blocks: the long text's count is
    limit + 1 whatever follows (here a tail the char model could not even
    encode without fallback is never reached)."""
    tok = toks["byte"]
    text = "word " * 2_000_000
    assert tok.count(text, limit=10) == 11
    assert tok.count("word " * 3, limit=10) == n_tokens(tok, "word " * 3)


def test_long_word_is_cut_between_tokens(toks):
    for kind in KINDS:
        tok = toks[kind]
        text = "abcdefghij" * 40
        spans = check_chunks(tok, text, 7)
        assert len(spans) > 1


def test_character_longer_than_max_tokens_is_an_error(toks):
    tok = Tokenizer.train("abc", vocab_size=256)  # no merges: an emoji is 4 byte tokens
    assert tok.truncate("😀x", 3) == ""
    with pytest.raises(BytepairError, match=r"'😀' \(U\+1F600\) at position 2 .* max_tokens=3"):
        list(tok.chunk("ab😀", 3))


@pytest.mark.parametrize("args, message", [
    ((0,), "max_tokens must be an integer >= 1"),
    ((5, 5), "overlap must be an integer from 0 to max_tokens - 1"),
    ((5, -1), "overlap must be"),
    (("5",), "max_tokens must be"),
])
def test_bad_arguments(toks, args, message):
    with pytest.raises(BytepairError, match=message):
        list(toks["byte"].chunk("text", *args))


def test_bad_limit_and_text(toks):
    with pytest.raises(BytepairError, match="limit must be"):
        toks["byte"].count("x", limit=-1)
    with pytest.raises(TypeError):
        toks["byte"].truncate(b"x", 3)


def test_cli_writes_json_lines(toks, tmp_path):
    tok_path = tmp_path / "tok.json"
    toks["byte"].save(str(tok_path))
    doc = tmp_path / "doc.txt"
    text = "First paragraph. It has two sentences.\n\nSecond one, a bit longer than the first.\n" * 5
    doc.write_text(text, encoding="utf-8")
    out = tmp_path / "chunks.jsonl"
    r = subprocess.run([sys.executable, "-m", "bytepair", "chunk", "-t", str(tok_path), str(doc), "--max-tokens", "30",
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert "".join(r["text"] for r in rows) == text
    expected = list(chunk_spans(toks["byte"], text, 30))
    assert [(r["start"], r["end"], r["tokens"]) for r in rows] == expected
    assert all(r["file"] == str(doc) for r in rows) and [r["chunk"] for r in rows] == list(range(len(rows)))
    # stdin, printed
    r = subprocess.run([sys.executable, "-m", "bytepair", "chunk", "-t", str(tok_path), "--max-tokens", "30",
                        "--overlap", "5"], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(r["start"], r["end"], r["tokens"]) for r in rows] == list(chunk_spans(toks["byte"], text, 30, 5))
    r = subprocess.run([sys.executable, "-m", "bytepair", "chunk", "-t", str(tok_path), "--max-tokens", "0"],
                       input=text, capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "max_tokens must be" in r.stderr
