"""Training on a path (the file's lines as documents, read and cut by the
core) gives the tokenizer that training on the lines read by Python gives."""

from __future__ import annotations

import os
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bytepair import InputError, Tokenizer, TrainingError

HERE = pathlib.Path(__file__).parent
# every line end str.splitlines knows, \r in all its forms, a BOM, and text around them
PIECES = ["a", "b", "ab", " ", "  ", "\t", "1", "23", ".", "'s", "é", "你", "🙂", "\n", "\r", "\r\n", "\n\r",
          "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\u2029", "\ufeff", "<|x|>"]


def python_lines(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines(keepends=True)


def same(path, **options):
    by_path = Tokenizer.train(pathlib.Path(path), **options)
    by_lines = Tokenizer.train(python_lines(path), **options)
    assert by_path.to_dict() == by_lines.to_dict()
    assert by_path.merge_counts == by_lines.merge_counts


@pytest.mark.parametrize("options", [
    dict(vocab_size=400, tie_break="first"),
    dict(vocab_size=400, tie_break="pair-id", pattern="gpt2"),
    dict(model="char", num_merges=300, tie_break="first"),
    dict(model="char", num_merges=50, tie_break="alphabetical", end_of_word=None),
])
def test_multilingual_file(options):
    same(HERE / "data" / "multilingual.txt", **options)


@pytest.mark.filterwarnings("ignore::bytepair.TrainingWarning")
@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=80), st.sampled_from(["first", "pair-id"]),
       st.sampled_from(["byte", "char"]))
def test_any_line_ends(tmp_path_factory, pieces, tie_break, model):
    path = tmp_path_factory.mktemp("p") / "c.txt"
    path.write_bytes("".join(pieces).encode("utf-8"))
    options = dict(model=model, num_merges=20, tie_break=tie_break, special_tokens=["<|x|>"])
    try:
        Tokenizer.train(python_lines(path), **options)
    except TrainingError:  # no words (nothing, or only whitespace or special tokens): the same error
        with pytest.raises(TrainingError, match="the corpus is empty"):
            Tokenizer.train(path, **options)
        return
    same(path, **options)


def test_path_is_a_file_and_str_is_text(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("low lower\nlowest\n", encoding="utf-8")
    assert Tokenizer.train(path, num_merges=5).merges != Tokenizer.train(os.fspath(path), num_merges=5).merges


def test_invalid_utf8_and_missing_file(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good line\nbad \xff byte\n")
    with pytest.raises(InputError, match=r"bad.txt: invalid UTF-8 at byte offset 14 \(byte 0xFF\)"):
        Tokenizer.train(path, num_merges=5)
    with pytest.raises(FileNotFoundError):
        Tokenizer.train(tmp_path / "missing.txt", num_merges=5)


def test_continued_training_on_a_path(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("the cat sat\r\non the mat\x0cthe end\n" * 5, encoding="utf-8")
    base = Tokenizer.train(["the theme of the cat"], num_merges=5)
    a = Tokenizer.train(path, init=base, num_merges=5)
    b = Tokenizer.train(python_lines(path), init=base, num_merges=5)
    assert a.to_dict() == b.to_dict()


@pytest.mark.filterwarnings("ignore::bytepair.TrainingWarning")
@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(PIECES + ["\xff", "\xe4", "abcdefghij" * 3]), min_size=1, max_size=80),
       st.integers(1, 40))
def test_a_file_read_in_blocks_counts_as_read_whole(tmp_path_factory, pieces, block):
    """Files are read in blocks of whole lines (bounded memory for gigabyte
    corpora): any block size gives the lines, words and merges of reading
    the whole file, and the same invalid-UTF-8 offset."""
    import bytepair.training as training

    path = tmp_path_factory.mktemp("p") / "c.txt"
    # "\xff" and "\xe4" stand for a bad byte and a cut-off character
    data = b"".join({"\xff": b"\xff", "\xe4": b"\xe4\x82"}.get(p, p.encode("utf-8")) for p in pieces)
    path.write_bytes(data)
    options = dict(num_merges=20, special_tokens=["<|x|>"])

    def outcome():
        try:
            tok = Tokenizer.train(path, **options)
        except (InputError, TrainingError) as e:
            return type(e), str(e)
        return tok.to_dict(), tok.merge_counts

    whole = outcome()  # the default block (64 MB) holds this whole file
    saved = training._FILE_BLOCK_BYTES
    training._FILE_BLOCK_BYTES = block
    try:
        assert outcome() == whole
    finally:
        training._FILE_BLOCK_BYTES = saved
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        assert whole[0] is InputError and f"byte offset {e.start} " in whole[1]
    else:
        if whole[0] is not TrainingError:
            assert whole == (lambda t: (t.to_dict(), t.merge_counts))(
                Tokenizer.train(text.replace("\r\n", "\n").replace("\r", "\n").splitlines(keepends=True), **options))
