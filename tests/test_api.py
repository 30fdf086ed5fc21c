"""The public API: round trips, special tokens, save/load, errors."""

from __future__ import annotations

import copy
import json
import pickle
import warnings

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer, reference

TEXT = (
    "The quick brown fox jumps over the lazy dog. Le renard brun saute par-dessus le chien. "
    "Быстрая коричневая лиса. 敏捷的棕色狐狸跳过了懒狗。 素早い茶色の狐。 빠른 갈색 여우. "
    "🦊🐶 naïve café 12345 3.14159 it's we'll they're\n\n\tdef f(x):\n        return x**2\n"
)
SPECIALS = ["<|endoftext|>", "<|fim_prefix|>"]


@pytest.fixture(scope="module")
def byte_tok():
    return Tokenizer.train([TEXT] * 3, vocab_size=400, special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def char_tok():
    return Tokenizer.train(TEXT, model="char", num_merges=80, byte_fallback=True)


# ---------------------------------------------------------------- round trips


_BYTE = Tokenizer.train([TEXT] * 3, vocab_size=400, special_tokens=SPECIALS)


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_byte_round_trip_any_unicode(text):
    tok = _BYTE
    assert tok.decode(tok.encode_ordinary(text)) == text
    assert tok.encode_ordinary(text) == tok.encode(text, disallowed_special=())
    assert tok.count(text) == len(tok.encode_ordinary(text))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40), max_size=6))
def test_char_round_trip_whitespace_normalised(words):
    text = " ".join(words)
    # the marker's own text reads as a word boundary (docs/decisions.md)
    assume("</w>" not in text)
    tok = Tokenizer.train(TEXT, model="char", num_merges=80, byte_fallback=True)
    ids = tok.encode(text)
    assert tok.decode(ids) == " ".join(text.split())


def test_char_round_trip_of_training_text(char_tok):
    assert char_tok.decode(char_tok.encode(TEXT)) == " ".join(TEXT.split())


def test_long_runs_stay_exact():
    tok = _BYTE
    for text in ["a" * 100_000, "1" * 50_000, "!" * 50_000, "🙂" * 20_000, " " * 30_000]:
        ids = tok.encode_ordinary(text)
        assert tok.decode(ids) == text
    r = reference.train([TEXT] * 3, vocab_size=400, special_tokens=SPECIALS)
    probe = "aaaa" * 300 + "ab" * 200
    assert tok.encode_ordinary(probe) == r.encode_ordinary(probe)


# ---------------------------------------------------------------- special tokens


def test_special_tokens_follow_tiktoken(byte_tok):
    eot = byte_tok.special_tokens["<|endoftext|>"]
    assert eot == byte_tok.n_vocab - 2
    text = "hi <|endoftext|> there"
    with pytest.raises(bytepair.DisallowedSpecialError) as e:
        byte_tok.encode(text)
    assert "allowed_special" in str(e.value) and "<|endoftext|>" in str(e.value)
    assert isinstance(e.value, ValueError)
    ids = byte_tok.encode(text, allowed_special="all")
    assert eot in ids
    assert byte_tok.encode(text, allowed_special={"<|endoftext|>"}) == ids
    assert byte_tok.encode(text, disallowed_special=()) == byte_tok.encode_ordinary(text)
    assert eot not in byte_tok.encode_ordinary(text)
    assert byte_tok.decode(ids) == text
    # only the named token is checked
    assert byte_tok.encode("<|fim_prefix|>", allowed_special={"<|fim_prefix|>"}) == [byte_tok.special_tokens["<|fim_prefix|>"]]
    with pytest.raises(bytepair.DisallowedSpecialError):
        byte_tok.encode("<|fim_prefix|>", allowed_special={"<|endoftext|>"})
    # count never raises
    assert byte_tok.count(text) == len(byte_tok.encode_ordinary(text))


def test_explicit_special_ids():
    tok = Tokenizer.train(TEXT, vocab_size=300, special_tokens={"<|endoftext|>": 1000})
    assert tok.n_vocab == 1001
    assert tok.encode("<|endoftext|>", allowed_special="all") == [1000]
    with pytest.raises(bytepair.UnknownTokenError):
        tok.decode([500])


def test_special_text_never_enters_training_words():
    tok = Tokenizer.train("ab<|x|>ab<|x|>ab", special_tokens=["<|x|>"])
    assert all(b"|" not in left + right for left, right in tok.merges)


def test_encode_batch_matches_encode(byte_tok):
    texts = [TEXT[i : i + 50] for i in range(0, len(TEXT), 37)] + ["x<|endoftext|>y"]
    assert byte_tok.encode_batch(texts, allowed_special="all") == [byte_tok.encode(t, allowed_special="all") for t in texts]
    assert byte_tok.encode_ordinary_batch(texts) == [byte_tok.encode_ordinary(t) for t in texts]


# ---------------------------------------------------------------- save / load


@pytest.mark.parametrize("fixture", ["byte_tok", "char_tok"])
def test_save_load_round_trip(fixture, request, tmp_path):
    tok = request.getfixturevalue(fixture)
    path = tmp_path / "tok.json"
    tok.save(str(path))
    again = Tokenizer.load(str(path))
    assert again.merges == tok.merges
    assert again.vocab() == tok.vocab()
    assert again.encode(TEXT, allowed_special="all") == tok.encode(TEXT, allowed_special="all")
    assert again.trace() == tok.trace()
    assert json.loads(path.read_text(encoding="utf-8"))["bytepair"] == 1
    # pickling and copying
    for other in (pickle.loads(pickle.dumps(tok)), copy.deepcopy(tok)):
        assert other.encode_ordinary(TEXT) == tok.encode_ordinary(TEXT)


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "invalid JSON"),
        ("{", "line 1"),
        ("[]", "JSON object"),
        ('{"bytepair": 7, "model": "byte", "pattern": "x", "merges": []}', "version"),
        ('{"bytepair": 1, "model": "word", "pattern": null, "merges": []}', "model"),
        ('{"bytepair": 1, "model": "byte", "pattern": "\\\\w+", "merges": [[1]]}', "merge 1"),
        ('{"bytepair": 1, "model": "byte", "pattern": "\\\\w+", "merges": [[1, 999]]}', "unknown id"),
        ('{"bytepair": 1, "model": "byte", "pattern": "(", "merges": []}', "regex"),
        ('{"bytepair": 1, "model": "char", "pattern": null, "merges": [], "base": [1]}', "base"),
        ('{"bytepair": 1, "model": "byte", "pattern": "x", "merges": [], "special_tokens": {"a": -1}}', "special"),
    ],
)
def test_malformed_native_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(bytepair.FormatError, match=message) as e:
        Tokenizer.load(str(path), format="bytepair")
    assert str(path) in str(e.value)


def test_truncated_native_file(tmp_path, byte_tok):
    path = tmp_path / "tok.json"
    byte_tok.save(str(path))
    data = path.read_bytes()
    for cut in (1, len(data) // 3, len(data) - 3):
        path.write_bytes(data[:cut])
        with pytest.raises(bytepair.FormatError):
            Tokenizer.load(str(path), format="bytepair")


# ---------------------------------------------------------------- errors


def test_training_errors():
    with pytest.raises(bytepair.TrainingError, match="empty"):
        Tokenizer.train("")
    with pytest.raises(bytepair.TrainingError, match="empty"):
        Tokenizer.train("   \n ", model="char")  # whitespace-only: no words for str.split()
    with pytest.raises(bytepair.TrainingError, match="empty"):
        Tokenizer.train([])
    with pytest.raises(bytepair.TrainingError, match="vocab_size 100"):
        Tokenizer.train("hello", vocab_size=100)
    with pytest.raises(bytepair.TrainingError, match="vocab_size 3"):
        Tokenizer.train("hello", model="char", vocab_size=3)
    with pytest.raises(bytepair.TrainingError, match="num_merges"):
        Tokenizer.train("hello", num_merges=-1)
    with pytest.raises(bytepair.TrainingError):
        Tokenizer.train("hello", tie_break="random")
    with pytest.raises(bytepair.PatternError, match="invalid regex"):
        Tokenizer.train("hello", pattern="(unclosed")
    with pytest.raises(bytepair.TrainingError, match="document 1"):
        Tokenizer.train(["ok", b"bytes"])
    with pytest.raises(bytepair.TrainingError, match="positive integer"):
        Tokenizer.train({"a": 0})


def test_running_out_of_pairs_warns_and_still_works():
    with pytest.warns(bytepair.TrainingWarning, match="after 2 merges"):
        tok = Tokenizer.train("abc", vocab_size=1000)
    assert tok.n_vocab == 258
    with pytest.warns(bytepair.TrainingWarning, match="min_frequency=3"):
        Tokenizer.train("ab ab cd", model="char", num_merges=10, min_frequency=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Tokenizer.train("abc")  # no target asked: merging until nothing is left is silent


def test_unknown_ids_and_characters(byte_tok, char_tok):
    for bad in ([byte_tok.n_vocab], [-1], [2**40], [2**70]):
        with pytest.raises(bytepair.UnknownTokenError) as e:
            byte_tok.decode(bad)
        assert isinstance(e.value, KeyError) and isinstance(e.value, ValueError)
    with pytest.raises(bytepair.UnknownTokenError):
        byte_tok.decode(["12"])
    strict = Tokenizer.train("abc abd", model="char")
    with pytest.raises(bytepair.EncodeError, match="position 4"):
        strict.encode("abc xbc")
    assert "x" in strict.tokenize("abc xbc")  # tokenize never fails
    unk = Tokenizer.train("abc abd", model="char", unk_token="<unk>")
    assert unk.encode("x")[0] == unk.special_tokens["<unk>"]


def test_thread_safety_and_gil_release(byte_tok):
    from concurrent.futures import ThreadPoolExecutor

    texts = [TEXT * 20 + str(i) for i in range(16)]
    expected = [byte_tok.encode_ordinary(t) for t in texts]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(byte_tok.encode_ordinary, texts)) == expected


# ---------------------------------------------------------------- dropout and offsets


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80), p=st.floats(0.0, 1.0), seed=st.integers(0, 2**64 - 1))
def test_dropout_is_deterministic_and_lossless(text, p, seed):
    ids = _BYTE.encode(text, disallowed_special=(), dropout=p, seed=seed)
    assert ids == _BYTE.encode(text, disallowed_special=(), dropout=p, seed=seed)
    assert _BYTE.decode(ids) == text


def test_dropout_changes_segmentations():
    seen = {tuple(_BYTE.encode("quick brown fox", dropout=0.5, seed=s)) for s in range(30)}
    assert len(seen) > 3
    assert _BYTE.encode("quick", dropout=1.0) == list(b"quick")  # every merge dropped: bytes
    with pytest.raises(bytepair.BytepairError):
        _BYTE.encode("x", dropout=1.5)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60))
def test_byte_offsets_cover_the_text(text):
    ids, spans = _BYTE.encode_with_offsets(text, disallowed_special=())
    assert ids == _BYTE.encode_ordinary(text)
    assert len(spans) == len(ids)
    data = text.encode("utf-8")
    pos = 0
    for id_, (start, end) in zip(ids, spans):
        token = _BYTE.decode_single_token_bytes(id_)
        # the token's bytes lie inside the characters of its span
        assert token in text[start:end].encode("utf-8")
        assert data[pos : pos + len(token)] == token
        pos += len(token)
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.text(alphabet="abcdeé ", min_size=1, max_size=8), max_size=6))
def test_char_offsets_point_at_the_pieces(words):
    tok = Tokenizer.train(TEXT + " abcdeé", model="char", num_merges=60)
    text = "  ".join(words)
    ids, spans = tok.encode_with_offsets(text)
    for id_, (start, end) in zip(ids, spans):
        piece = tok.vocab()[id_]
        assert text[start:end] == piece.replace("</w>", "")


def test_offsets_of_special_tokens(byte_tok):
    text = "ab<|endoftext|>cd"
    ids, spans = byte_tok.encode_with_offsets(text, allowed_special="all")
    k = ids.index(byte_tok.special_tokens["<|endoftext|>"])
    assert spans[k] == (2, 15)


# ---------------------------------------------------------------- continued training


def test_continued_training_keeps_ids_and_round_trips(tmp_path):
    from bytepair.cli import main

    first = Tokenizer.train(TEXT, vocab_size=300, special_tokens=["<|endoftext|>"])
    import inspect
    import json as json_module

    more = Tokenizer.train(inspect.getsource(json_module), vocab_size=first.n_vocab + 30, init=first)
    assert more.n_vocab == first.n_vocab + 30
    assert more.merges[: len(first.merges)] == first.merges
    assert {i: more.vocab()[i] for i in first.vocab()} == first.vocab()
    assert more.special_tokens == first.special_tokens
    path = tmp_path / "more.json"
    more.save(str(path))
    again = Tokenizer.load(str(path))
    assert again.vocab() == more.vocab() and again.encode_ordinary(TEXT) == more.encode_ordinary(TEXT)
    # and on the command line
    corpus = tmp_path / "c.txt"
    corpus.write_text("return return x ** 2", encoding="utf-8")
    first_path = tmp_path / "first.json"
    first.save(str(first_path))
    assert main(["train", str(corpus), "--init", str(first_path), "--merges", "3", "-o", str(tmp_path / "o.json")]) == 0
    cont = Tokenizer.load(str(tmp_path / "o.json"))
    assert cont.merges[:-3] == first.merges and len(cont.merges) == len(first.merges) + 3
