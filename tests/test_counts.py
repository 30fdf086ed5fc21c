"""Counts files: round trips, merging, malformed files, and training from
counts equal to training on the concatenated corpus (tie-breaks included),
from Python and from the command line."""

from __future__ import annotations

import gzip
import json
import sys
import warnings

import pytest

from bytepair import FormatError, InputError, Tokenizer, TrainingError, TrainingWarning, _core
from bytepair.counts import (
    count_words,
    load_counts,
    merge_counts,
    read_counts,
    read_header,
    save_counts,
)
from bytepair.patterns import CL100K
from cli_runner import run

AWKWARD = ["plain", " space", "tab\there", "new\nline", "cr\rword", "back\\slash", "\\t literal", "é🙂你",
           "\\", "\t", "\n\r\n", "  ", "x\\ny", "\x1c\x85\u2028"]
PARTS = [
    "the cat sat on the mat. The dog's bone! <|endoftext|> naïve café 🙂\n" * 3,
    "a b c the the dog cat\t\tzebra 12345 67\r\n<|endoftext|>" * 4,
    "zzz yyy xxx the cat 🙂🙂 <|endoftext|> ok",
]


def table(items, pattern=None, specials=()):
    wc = _core.WordCounts(pattern, list(specials))
    for w, c in items:
        wc.add_word(w, c)
    return wc


@pytest.fixture()
def parts(tmp_path):
    paths = []
    for i, text in enumerate(PARTS):
        paths.append(tmp_path / f"part{i}.txt")
        paths[-1].write_text(text, encoding="utf-8", newline="")
    return paths


# ---------------------------------------------------------------- the file


@pytest.mark.parametrize("name", ["c.counts", "c.counts.gz"])
def test_round_trip_keeps_words_counts_and_order(tmp_path, name):
    items = [(w, i * 7 + 1) for i, w in enumerate(AWKWARD)] + [("big", 2**64 - 1)]
    path = tmp_path / name
    save_counts(path, table(items), pattern="cl100k", special_tokens=["<|endoftext|>"], documents=3)
    assert load_counts(path).items() == items
    header = read_header(path)
    assert header["pattern"] == CL100K and header["pattern_preset"] == "cl100k"
    assert header["special_tokens"] == ["<|endoftext|>"]
    assert header["words"] == len(items) and header["total"] == sum(c for _, c in items)
    assert header["documents"] == 3 and header["bytepair_counts"] == 1
    raw = path.read_bytes()
    if name.endswith(".gz"):
        assert raw[:2] == b"\x1f\x8b"
        raw = gzip.decompress(raw)
    lines = raw.decode().split("\n")
    assert lines[-1] == "" and len(lines) == len(items) + 2  # one line per word, nothing hidden in a word
    assert lines[3] == "15\ttab\\there"


def test_save_is_atomic_and_checks_the_folder(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        save_counts(tmp_path / "no" / "c.counts", table([("a", 1)]), None)
    assert list(tmp_path.iterdir()) == []


HEADER = json.dumps({"bytepair_counts": 1, "pattern": None, "special_tokens": [], "words": 2, "total": 5})


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "line 1: not a bytepair counts file"),
        (b"hello\n3\tx\n", "line 1: not a bytepair counts file"),
        (b'{"bytepair_counts": 9}\n', "line 1: counts format version 9"),
        (b'{"bytepair_counts": 1, "pattern": 5}\n', "line 1: 'pattern' must be"),
        (b'{"bytepair_counts": 1, "special_tokens": [""]}\n', "line 1: 'special_tokens'"),
        ((HEADER + "\n3\tx\n2 y\n").encode(), "line 3: expected 'count<TAB>word'"),
        ((HEADER + "\n3\tx\n-2\ty\n").encode(), "line 3: the count b'-2' is not a positive integer"),
        ((HEADER + "\n3\tx\n0\ty\n").encode(), "line 3: the count b'0' is not a positive integer"),
        ((HEADER + "\n3\tx\n02\ty\n").encode(), "line 3: the count b'02'"),
        ((HEADER + "\n3\tx\n" + str(2**64) + "\ty\n").encode(), "line 3: the count does not fit in 64 bits"),
        ((HEADER + "\n3\tx\n2\t\n").encode(), "line 3: empty word"),
        ((HEADER + "\n3\tx\n2\tx\n").encode(), "line 3: the word 'x' appears twice"),
        ((HEADER + "\n3\tx\n2\ta\\qb\n").encode(), "line 3: unknown escape \\q"),
        ((HEADER + "\n3\tx\n2\ta\\").encode(), "line 3: the file ends in the middle of a line"),
        ((HEADER + "\n3\tx\n2\t\xff\n").encode("latin-1"), "line 3: invalid UTF-8"),
        ((HEADER + "\n3\tx\n").encode(), "line 3: the file holds 1 words but its header says 2 (truncated?)"),
        ((HEADER + "\n3\tx\n3\ty\n").encode(), "line 4: the counts add up to 6 but the header says 5"),
    ],
)
def test_malformed_files_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.counts"
    path.write_bytes(content)
    with pytest.raises(FormatError) as e:
        load_counts(path)
    assert str(e.value).startswith(f"{path}: ")
    assert message in str(e.value)


def test_malformed_gzip_file(tmp_path):
    path = tmp_path / "bad.counts.gz"
    path.write_bytes(gzip.compress((HEADER + "\n3\tx\n2\ty\n").encode())[:-12])
    with pytest.raises(FormatError, match="bad.counts.gz: line"):
        load_counts(path)


def test_crlf_line_ends_are_tolerated(tmp_path):
    path = tmp_path / "c.counts"
    path.write_bytes((HEADER + "\r\n3\tx\r\n2\ty\r\n").encode())
    assert load_counts(path).items() == [("x", 3), ("y", 2)]


def test_missing_counts_file(tmp_path):
    with pytest.raises(InputError, match="no such counts file"):
        load_counts(tmp_path / "nope.counts")


# ---------------------------------------------------------------- merging and training


def test_merged_counts_equal_counts_of_the_concatenated_corpus(tmp_path, parts):
    files = []
    for i, p in enumerate(parts):
        files.append(tmp_path / f"{i}.counts")
        save_counts(files[-1], count_words([p], "cl100k", ["<|endoftext|>"]), "cl100k", ["<|endoftext|>"])
    merged = merge_counts(files)
    whole = count_words(parts, "cl100k", ["<|endoftext|>"])
    assert merged.items() == whole.items()
    # order matters: first appearances follow the order of the files
    assert merge_counts(files[::-1]).items() == count_words(parts[::-1], "cl100k", ["<|endoftext|>"]).items()
    assert merge_counts(files[::-1]).items() != whole.items()


def test_merge_refuses_other_settings(tmp_path, parts):
    a, b = tmp_path / "a.counts", tmp_path / "b.counts"
    save_counts(a, count_words(parts[:1], "cl100k"), "cl100k")
    save_counts(b, count_words(parts[1:], "gpt2"), "gpt2")
    with pytest.raises(FormatError, match="b.counts: line 1: counted with another pre-tokenizer"):
        merge_counts([a, b])


@pytest.mark.parametrize("model", ["byte", "char"])
@pytest.mark.parametrize("tie_break", ["first", "alphabetical", "pair-id"])
def test_training_from_merged_counts_equals_training_on_the_corpus(tmp_path, parts, model, tie_break):
    pattern = "cl100k" if model == "byte" else None
    specials = ["<|endoftext|>"]
    files = []
    for i, p in enumerate(parts):
        files.append(tmp_path / f"{i}.counts.gz")
        save_counts(files[-1], count_words([p], pattern, specials), pattern, specials)
    merged = tmp_path / "all.counts"
    counts = merge_counts(files)
    save_counts(merged, counts, pattern, specials)
    opts = dict(model=model, vocab_size=330 if model == "byte" else 120, tie_break=tie_break, special_tokens=specials)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        expected = Tokenizer.train(PARTS, **opts).to_dict()
        assert Tokenizer.train(load_counts(merged), **opts).to_dict() == expected
        assert Tokenizer.train(merge_counts(files), **opts).to_dict() == expected
        assert Tokenizer.train_from_counts(files, **opts).to_dict() == expected
        assert Tokenizer.train_from_counts(merged, model=model, vocab_size=opts["vocab_size"], tie_break=tie_break).to_dict() == expected


def test_settings_are_checked(tmp_path, parts):
    path = tmp_path / "c.counts"
    save_counts(path, count_words(parts, "cl100k", ["<|endoftext|>"]), "cl100k", ["<|endoftext|>"])
    assert len(load_counts(path, pattern="cl100k", special_tokens=["<|endoftext|>"])) > 0
    with pytest.raises(TrainingError, match="counted with the pre-tokenizer cl100k, but training uses gpt2"):
        load_counts(path, pattern="gpt2")
    with pytest.raises(TrainingError, match="counted with the special tokens"):
        load_counts(path, special_tokens=[])
    with pytest.raises(TrainingError, match="but training uses str.split"):
        Tokenizer.train_from_counts(path, model="char", pattern=None, vocab_size=200)
    with pytest.raises(TrainingError, match="special tokens"):
        Tokenizer.train_from_counts(path, special_tokens=["<|other|>"], vocab_size=300)
    split = tmp_path / "s.counts"
    save_counts(split, count_words(parts, None), None)
    with pytest.raises(TrainingError, match="the byte model needs a regex"):
        Tokenizer.train_from_counts(split, vocab_size=300)
    assert Tokenizer.train_from_counts(split, model="char", num_merges=5).model == "char"


def test_continued_training_from_counts(tmp_path, parts):
    base = Tokenizer.train(PARTS[0], vocab_size=270, special_tokens=["<|endoftext|>"])
    path = tmp_path / "c.counts"
    save_counts(path, count_words(parts, base.pattern, list(base.special_tokens)), base.pattern, ["<|endoftext|>"])
    a = Tokenizer.train(PARTS, init=base, vocab_size=300)
    assert Tokenizer.train_from_counts(path, init=base, vocab_size=300).to_dict() == a.to_dict()


# ---------------------------------------------------------------- command line


def test_cli_count_words_merge_and_train(tmp_path, parts, capsys):
    a, b, c = tmp_path / "a.counts", tmp_path / "b.counts.gz", tmp_path / "c.counts"
    assert run("count-words", parts[0], "--special", "<|endoftext|>", "-o", a)[0] == 0
    assert run("count-words", parts[1], parts[2], "--special", "<|endoftext|>", "-o", b)[0] == 0
    assert run("count-words", "--merge", a, b, "-o", c)[0] == 0
    assert "distinct words" in capsys.readouterr().err
    header = read_header(c)
    assert header["documents"] == 3 and header["files"] == 3
    assert header["bytes"] == sum(len(t.encode()) for t in PARTS)
    # the same as counting everything at once, and as counting a + more files
    d, e = tmp_path / "d.counts", tmp_path / "e.counts"
    assert run("count-words", *parts, "--special", "<|endoftext|>", "-o", d)[0] == 0
    assert run("count-words", parts[1], parts[2], "--merge", a, "-o", e)[0] == 0
    assert read_counts(c)[1].items() == read_counts(d)[1].items() == read_counts(e)[1].items()
    # train --from-counts equals train on the files
    t1, t2 = tmp_path / "t1.json", tmp_path / "t2.json"
    assert run("train", "--from-counts", c, "--vocab-size", "320", "-o", t1)[0] == 0
    assert run("train", *parts, "--special", "<|endoftext|>", "--vocab-size", "320", "-o", t2)[0] == 0
    assert t1.read_bytes() == t2.read_bytes()
    # merging on the fly: --from-counts twice
    t3 = tmp_path / "t3.json"
    assert run("train", "--from-counts", a, "--from-counts", b, "--vocab-size", "320", "-o", t3)[0] == 0
    assert t3.read_bytes() == t2.read_bytes()


def test_cli_char_model_counts(tmp_path, parts):
    c = tmp_path / "c.counts"
    assert run("count-words", *parts, "--model", "char", "-o", c)[0] == 0
    assert read_header(c)["pattern"] is None
    t1, t2 = tmp_path / "t1.json", tmp_path / "t2.json"
    assert run("train", "--from-counts", c, "--model", "char", "--merges", "30", "-o", t1)[0] == 0
    assert run("train", *parts, "--model", "char", "--merges", "30", "-o", t2)[0] == 0
    assert t1.read_bytes() == t2.read_bytes()


@pytest.mark.filterwarnings("ignore::bytepair.TrainingWarning")
def test_cli_train_streaming_options(tmp_path, capsys):
    docs = ["one two three " * 30, "two three four " * 20, "five " * 10]
    jl = tmp_path / "d.jsonl.gz"
    jl.write_bytes(gzip.compress("".join(json.dumps({"body": d}) + "\n" for d in docs).encode()))
    out = tmp_path / "t.json"
    assert run("train", jl, "--field", "body", "--vocab-size", "270", "-o", out)[0] == 0
    assert Tokenizer.load(str(out)).to_dict() == Tokenizer.train(docs, vocab_size=270).to_dict()
    assert run("train", jl, "--field", "body", "--max-bytes", "100", "--vocab-size", "270", "-o", out)[0] == 0
    capped = json.dumps({"body": docs[0][:100]})
    assert Tokenizer.load(str(out)).merges == Tokenizer.train([json.loads(capped)["body"]], vocab_size=270).merges
    # stdin
    assert run("train", "-", "--merges", "5", "-o", out, stdin=docs[0].encode())[0] == 0
    assert Tokenizer.load(str(out)).merges == Tokenizer.train([docs[0]], num_merges=5).merges


@pytest.mark.parametrize(
    "argv, message",
    [
        (["count-words", "-o", "{out}"], "nothing to count"),
        (["count-words", "{missing}", "-o", "{out}"], "no such file"),
        (["count-words", "{bad}", "-o", "{out}"], "invalid UTF-8 at byte offset 3"),
        (["count-words", "--merge", "{bad}", "-o", "{out}"], "not a bytepair counts file"),
        (["count-words", "{good}", "--max-bytes", "12", "--dask", "local:0", "-o", "{out}"], "positive integer"),
        (["train", "-o", "{out}"], "nothing to train on"),
        (["train", "{good}", "--from-counts", "{counts}", "-o", "{out}"], "either FILEs or --from-counts"),
        (["train", "--from-counts", "{counts}", "--pattern", "gpt2", "-o", "{out}"], "counted with the pre-tokenizer"),
        (["train", "--from-counts", "{missing}", "-o", "{out}"], "no such counts file"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "bad.txt").write_bytes(b"abc\xff")
    (tmp_path / "good.txt").write_text("hello world", encoding="utf-8")
    save_counts(tmp_path / "c.counts", count_words([tmp_path / "good.txt"], "cl100k"), "cl100k")
    names = {"out": tmp_path / "out", "missing": tmp_path / "missing.txt", "bad": tmp_path / "bad.txt",
             "good": tmp_path / "good.txt", "counts": tmp_path / "c.counts"}
    status, _ = run(*[a.format(**names) for a in argv])
    err = capsys.readouterr().err
    assert status == 1, err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_cli_max_bytes_suffixes():
    from bytepair.limits import parse_size

    assert parse_size("4K") == 4000 and parse_size("1.5M") == 1_500_000 and parse_size("3gb") == 3 * 10**9
    with pytest.raises(Exception):
        parse_size("lots")


@pytest.mark.parametrize("model", ["byte", "char"])
def test_consuming_training_frees_the_table_and_merges_the_same(model):
    """``_core.train(..., consume=True)`` (what ``Tokenizer.train`` uses)
    gives the merges of training on a kept table, and leaves the table empty;
    a table the caller passes in to ``Tokenizer.train`` is never consumed."""
    def table():
        t = _core.WordCounts(CL100K if model == "byte" else None, [])
        t.add_documents([" ".join(PARTS)] * 3 + ["lower lowest newer newest wider"] * 5)
        return t

    options = dict(end_of_word="</w>" if model == "char" else None, end_of_word_fused=False, byte_fallback=False,
                   tie_break="first", min_frequency=0, vocab_size=None, num_merges=40, n_special=0)
    kept, consumed = table(), table()
    n = len(kept)
    assert n > 0
    want = _core.train(kept, model, **options)
    got = _core.train(consumed, model, consume=True, **options)
    assert got == want
    assert (len(kept), len(consumed)) == (n, 0)
    mine = table()
    Tokenizer.train(mine, model=model, num_merges=10)
    assert len(mine) == n
