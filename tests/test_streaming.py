"""Reading inputs a block at a time (bytepair.corpus) and training from
files (Tokenizer.train_from_files): streaming gives exactly what
reading whole documents gives, for every input kind."""

from __future__ import annotations

import gzip
import io
import json
import sys
import warnings

import pytest
from hypothesis import given, settings, strategies as st

import bytepair.corpus as corpus
from bytepair import InputError, Tokenizer, TrainingWarning, _core
from bytepair.corpus import Budget, read_parts, source, sources
from bytepair.counts import count_sources, count_words
from bytepair.patterns import resolve_pattern

PIECES = ["a", "Z", "'s", "'", " ", "  ", "\n", "\r\n", "\t", "1", "234", ".", "!?", "é", "你", "<|", "<|eot|>",
          "|>", "\u3000", "🙂", "don't", "the", " cat", "\x1c"]
PATTERNS = [None, "gpt2", "cl100k", "o200k", r"\S+|\s+"]
TEXT = "The cat's toy; we'll see.\n\n  def f(x):\r\n\treturn x**2  # 12345 naïve café 🙂 你好\n" * 50


def whole_counts(docs, pattern, specials=()):
    wc = _core.WordCounts(resolve_pattern(pattern), list(specials))
    wc.add_documents(docs)
    return wc.items()


@pytest.fixture()
def small_blocks(monkeypatch):
    """Blocks of 7 bytes, so that words, characters and special tokens are cut everywhere."""
    monkeypatch.setattr(corpus, "BLOCK_BYTES", 7)


# ---------------------------------------------------------------- plain text


def test_text_blocks_join_to_the_file(tmp_path, small_blocks):
    p = tmp_path / "t.txt"
    p.write_text(TEXT, encoding="utf-8")
    parts = list(read_parts(source(str(p))))
    assert len(parts) > 100
    assert "".join(x.text for x in parts) == TEXT
    assert [x.final for x in parts] == [False] * (len(parts) - 1) + [True]
    offsets = [x.offset for x in parts]
    assert offsets == [sum(len(x.text) for x in parts[:i]) for i in range(len(parts))]
    assert sum(x.raw for x in parts) == len(TEXT.encode())


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("specials", [(), ("<|eot|>",), ("<|eot|>", "<|")])
def test_streamed_counts_equal_whole_counts(tmp_path, small_blocks, pattern, specials):
    text = TEXT.replace("we'll", "<|eot|>we'll")
    p = tmp_path / "t.txt"
    p.write_text(text, encoding="utf-8")
    counts, info = count_sources(sources([str(p)]), resolve_pattern(pattern), specials)
    assert counts.items() == whole_counts([text], pattern, specials)
    assert info == {"documents": 1, "bytes": len(text.encode())}


@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), min_size=1, max_size=4),
    block=st.integers(1, 12),
    pattern=st.sampled_from(PATTERNS),
)
def test_streaming_random_corpora(tmp_path_factory, docs, block, pattern):
    folder = tmp_path_factory.mktemp("s")
    paths = []
    for i, d in enumerate(docs):
        paths.append(str(folder / f"{i}.txt"))
        with open(paths[-1], "w", encoding="utf-8", newline="") as fh:
            fh.write(d)
    old = corpus.BLOCK_BYTES
    corpus.BLOCK_BYTES = block
    try:
        counts, _ = count_sources(sources(paths), resolve_pattern(pattern), ["<|eot|>"])
    finally:
        corpus.BLOCK_BYTES = old
    assert counts.items() == whole_counts(docs, pattern, ["<|eot|>"])


@pytest.mark.parametrize("at", [0, 1, 6, 7, 8, 13, 100, 349])
def test_invalid_utf8_names_the_byte_offset(tmp_path, small_blocks, at):
    data = bytearray(("é" * 200).encode())
    data[at] = 0xFF
    p = tmp_path / "bad.txt"
    p.write_bytes(bytes(data))
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        expected = e.start
    with pytest.raises(InputError, match=f"bad.txt: invalid UTF-8 at byte offset {expected} "):
        count_words([str(p)])
    replaced = "".join(x.text for x in read_parts(source(str(p)), errors="replace"))
    assert replaced == bytes(data).decode("utf-8", "replace")


def test_truncated_character_at_the_end_is_an_error(tmp_path, small_blocks):
    p = tmp_path / "cut.txt"
    p.write_bytes("abcdefgh".encode() + "é".encode()[:1])
    with pytest.raises(InputError, match="invalid UTF-8 at byte offset 8"):
        count_words([str(p)])


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        count_words([str(tmp_path / "nope.txt")])
    with pytest.raises(InputError, match="is a folder"):
        count_words([str(tmp_path)])


def test_empty_file_is_an_empty_document(tmp_path):
    p = tmp_path / "e.txt"
    p.write_bytes(b"")
    assert [(x.text, x.final) for x in read_parts(source(str(p)))] == [("", True)]


def test_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode()), encoding="utf-8"))
    assert count_words(["-"]).items() == whole_counts([TEXT], None)


# ---------------------------------------------------------------- JSONL


def write_jsonl(path, docs, field="text", blank=True):
    with open(path, "w", encoding="utf-8") as fh:
        for i, d in enumerate(docs):
            fh.write(json.dumps({"id": i, field: d}) + "\n")
            if blank and i == 1:
                fh.write("\n   \n")


def test_jsonl_documents(tmp_path):
    docs = ["first doc", "second\ndoc\twith tabs", "", "naïve 🙂"]
    p = tmp_path / "d.jsonl"
    write_jsonl(p, docs)
    parts = list(read_parts(source(str(p))))
    assert [(x.doc, x.text, x.final, x.offset) for x in parts] == [(i, d, True, 0) for i, d in enumerate(docs)]
    assert count_words([str(p)]).items() == whole_counts(docs, None)
    # --field on a file with another name
    q = tmp_path / "d.txt"
    write_jsonl(q, docs, field="body")
    assert count_words([str(q)], field="body").items() == whole_counts(docs, None)


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"text": "ok"}\n{"text": "broken\n', "d.jsonl: line 2: invalid JSON"),
        (b'{"text": "ok"}\n\n[1, 2]\n', "d.jsonl: line 3: expected a JSON object"),
        (b'{"text": "ok"}\n{"body": "x"}\n', "d.jsonl: line 2: no field 'text' (fields: body"),
        (b'{"text": null}\n', "d.jsonl: line 1: field 'text' is NoneType"),
        (b'{"text": "ok"}\n{"text": "a\xffb"}\n', "d.jsonl: line 2: invalid UTF-8 at byte offset 26"),
        (b'{"text": "\\ud800"}\n', "d.jsonl: line 1: the text holds a lone surrogate"),
    ],
)
def test_jsonl_errors_name_file_and_line(tmp_path, content, message):
    p = tmp_path / "d.jsonl"
    p.write_bytes(content)
    with pytest.raises(InputError) as e:
        count_words([str(p)])
    assert message in str(e.value)


def test_jsonl_replace(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_bytes(b'{"text": "a\xffb"}\n{"text": "x\\ud800y"}\n')
    assert [x.text for x in read_parts(source(str(p)), errors="replace")] == ["a\ufffdb", "x?y"]


# ---------------------------------------------------------------- compression


def test_gzip_and_zstd_equal_plain(tmp_path, small_blocks):
    import zstandard

    docs = ["alpha beta", "gamma\n" * 50, "δ ε 🙂"]
    plain_txt = tmp_path / "a.txt"
    plain_txt.write_text(TEXT, encoding="utf-8")
    jl = tmp_path / "b.jsonl"
    write_jsonl(jl, docs)
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(TEXT.encode()))
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(jl.read_bytes()))
    (tmp_path / "a.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(TEXT.encode()))
    # two zstd frames: read across frames
    cz = zstandard.ZstdCompressor()
    raw = jl.read_bytes()
    (tmp_path / "b.jsonl.zst").write_bytes(cz.compress(raw[:20]) + cz.compress(raw[20:]))
    expected = whole_counts([TEXT] + docs, "cl100k")
    for a, b in [("a.txt", "b.jsonl"), ("a.txt.gz", "b.jsonl.gz"), ("a.txt.zst", "b.jsonl.zst")]:
        got = count_words([str(tmp_path / a), str(tmp_path / b)], pattern="cl100k").items()
        assert got == expected, (a, b)


def test_bad_compressed_file(tmp_path):
    p = tmp_path / "x.txt.gz"
    p.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="x.txt.gz: not a valid gzip file"):
        count_words([str(p)])
    q = tmp_path / "y.txt.gz"
    q.write_bytes(gzip.compress(b"hello world " * 1000)[:-30])
    with pytest.raises(InputError, match="y.txt.gz: not a valid gzip file"):
        count_words([str(q)])


def test_invalid_utf8_in_gzip_says_after_decompression(tmp_path):
    p = tmp_path / "x.txt.gz"
    p.write_bytes(gzip.compress(b"abc\xffdef"))
    with pytest.raises(InputError, match=r"invalid UTF-8 at byte offset 3 \(after decompression\)"):
        count_words([str(p)])


# ---------------------------------------------------------------- Parquet


def write_parquet(path, docs, column="text", row_group_size=3):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"id": list(range(len(docs))), column: docs})
    pq.write_table(table, path, row_group_size=row_group_size)


def test_parquet_documents(tmp_path):
    docs = [f"document {i} " + "word " * i for i in range(10)]
    p = tmp_path / "d.parquet"
    write_parquet(p, docs)
    assert [x.text for x in read_parts(source(str(p)))] == docs
    assert [x.doc for x in read_parts(source(str(p)), start_doc=7)] == [7, 8, 9]
    assert count_words([str(p)]).items() == whole_counts(docs, None)
    q = tmp_path / "e.parquet"
    write_parquet(q, docs, column="body")
    assert count_words([str(q)], column="body").items() == whole_counts(docs, None)
    with pytest.raises(InputError, match="e.parquet: no column 'text' \\(columns: id, body"):
        count_words([str(q)])


def test_parquet_errors(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "n.parquet"
    pq.write_table(pa.table({"text": ["a", None, "c"]}), p)
    with pytest.raises(InputError, match="n.parquet: row 1: column 'text' is null"):
        count_words([str(p)])
    q = tmp_path / "i.parquet"
    pq.write_table(pa.table({"text": [1, 2]}), q)
    with pytest.raises(InputError, match="holds int64, not text"):
        count_words([str(q)])
    r = tmp_path / "r.parquet"
    r.write_bytes(b"PAR1 garbage")
    with pytest.raises(InputError, match="r.parquet: not a readable Parquet file"):
        count_words([str(r)])
    with pytest.raises(InputError, match="column= applies to Parquet"):
        source("x.txt", column="text")


# ---------------------------------------------------------------- max_bytes


def test_max_bytes_text(tmp_path, small_blocks):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("ab cd ef", encoding="utf-8")
    b.write_text("éé gh", encoding="utf-8")
    for n, docs in [(0, []), (3, ["ab "]), (8, ["ab cd ef"]), (9, ["ab cd ef", ""]), (10, ["ab cd ef", "é"]),
                    (11, ["ab cd ef", "é"]), (12, ["ab cd ef", "éé"]), (1000, ["ab cd ef", "éé gh"])]:
        stats = {}
        got = count_words([str(a), str(b)], max_bytes=n, stats=stats).items()
        assert got == whole_counts(docs, None), n
        assert stats["documents"] == len(docs)


def test_max_bytes_jsonl_counts_text_bytes(tmp_path):
    p = tmp_path / "d.jsonl"
    write_jsonl(p, ["aaaa bbbb", "cccc", "dddd"])
    assert count_words([str(p)], max_bytes=11).items() == whole_counts(["aaaa bbbb", "cc"], None)
    assert count_words([str(p)], max_bytes=13).items() == whole_counts(["aaaa bbbb", "cccc"], None)


def test_budget_rejects_bad_values():
    with pytest.raises(InputError):
        Budget(-1)


# ---------------------------------------------------------------- training from files


@pytest.mark.parametrize("model", ["byte", "char"])
@pytest.mark.parametrize("tie_break", ["first", "alphabetical", "pair-id"])
def test_train_from_files_equals_train(tmp_path, small_blocks, model, tie_break):
    docs = [TEXT[:3000], "<|endoftext|>".join([TEXT[500:900]] * 3), TEXT[::7]]
    paths = []
    for i, d in enumerate(docs):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text(d, encoding="utf-8", newline="")
    opts = dict(model=model, vocab_size=420, tie_break=tie_break, special_tokens=["<|endoftext|>"])
    if model == "char":
        opts.update(byte_fallback=True, unk_token="<unk>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)
        a = Tokenizer.train(docs, **opts)
        b = Tokenizer.train_from_files(paths, **opts)
    assert a.to_dict() == b.to_dict()


def test_train_from_files_continues_training(tmp_path, small_blocks):
    p = tmp_path / "c.txt"
    p.write_text(TEXT, encoding="utf-8")
    base = Tokenizer.train(TEXT[:500], vocab_size=280, special_tokens=["<|x|>"])
    a = Tokenizer.train([TEXT], init=base, vocab_size=300)
    b = Tokenizer.train_from_files([p], init=base, vocab_size=300)
    assert a.to_dict() == b.to_dict()


def test_train_from_files_jsonl_equals_train(tmp_path):
    docs = [TEXT[i : i + 300] for i in range(0, 3000, 300)]
    p = tmp_path / "d.jsonl.gz"
    p.write_bytes(gzip.compress("".join(json.dumps({"text": d}) + "\n" for d in docs).encode()))
    a = Tokenizer.train(docs, vocab_size=300, pattern="o200k")
    b = Tokenizer.train_from_files([p], vocab_size=300, pattern="o200k")
    assert a.to_dict() == b.to_dict()


def test_empty_corpus_is_an_error(tmp_path):
    p = tmp_path / "e.txt"
    p.write_bytes(b"")
    with pytest.raises(Exception, match="empty"):
        Tokenizer.train_from_files([p], vocab_size=300)
