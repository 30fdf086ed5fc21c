"""Resource limits and kill safety.

1. Streaming encoding (``Tokenizer.encode_stream`` / ``encode_file`` /
   ``bytepair encode --input/-o``): random texts cut into random tiny blocks
   give exactly the ids (and errors) of ``encode`` on the whole text, for
   both models and every kind of pre-tokenizer.
2. ``max_memory``: training refuses, with a ``ResourceError``, a corpus
   whose estimated need exceeds the limit, before allocating it.
3. Kill safety: SIGKILL or SIGINT in the middle of ``bytepair train``,
   ``data count-words`` and ``data encode-dataset`` leaves the previous
   output byte-identical and no temporary file.

Peak-memory figures (a 1 GB document, the estimate against measured RSS)
are measured by ``benches/bench_memory.py``, not here.
"""

from __future__ import annotations

import io
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import Tokenizer
from bytepair._io import read_text
from bytepair.cli import main
from bytepair.errors import BytepairError, InputError

PIECES = ["a", "b", "Z", "'s", "'", " ", "  ", "\n", "\r\n", "\t", "\x1c", "1", "234", ".", "!?", "é", "你",
          "<|", "<|eot|>", "|>", "<|e", "\u3000", "🙂", "ab", "ba", "the"]
SPECIALS = ["<|eot|>", "<|e"]
TRAIN_TEXT = ("the cat's 1234 toys <|eot|> ab ba aab bba. Zé 你好 🙂!\n\n" * 30)

# (model, pattern, extra training options); every kind of pre-tokenizer:
# str.split() (char model), the gpt2 and cl100k lexers, o200k and a custom regex
KINDS = {
    "char-split": ("char", None, {"byte_fallback": True}),
    "char-split-no-fallback": ("char", None, {}),
    "char-regex": ("char", r"\w+|[^\w\s]+|\s+", {"byte_fallback": True, "end_of_word_fused": True}),
    "byte-gpt2": ("byte", "gpt2", {}),
    "byte-cl100k": ("byte", "cl100k", {}),
    "byte-o200k": ("byte", "o200k", {}),
    "byte-custom": ("byte", r"\S+|\s+", {}),
}


@pytest.fixture(scope="module")
def toks():
    import warnings

    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (model, pattern, extra) in KINDS.items():
            out[name] = Tokenizer.train(TRAIN_TEXT, model=model, pattern=pattern, num_merges=60,
                                        special_tokens=SPECIALS, **extra)
    return out


OPTIONS = [
    {"allowed_special": "all"},
    {"allowed_special": {"<|eot|>"}},  # "<|e" stays disallowed
    {"allowed_special": set(), "disallowed_special": ()},  # encode_ordinary
    {"allowed_special": set(), "disallowed_special": {"<|e", "|>"}},  # an explicit set, with a non-special string
    {"allowed_special": {"<|e"}, "disallowed_special": ()},
    {"allowed_special": "all", "dropout": 0.3, "seed": 5},
]


def outcome(fn):
    """The ids, or the error's class and message."""
    try:
        return fn()
    except BytepairError as e:
        return (type(e).__name__, str(e))


def cut(text: str, sizes):
    """``text`` in consecutive blocks of the given sizes (cycled)."""
    out, i, k = [], 0, 0
    while i < len(text):
        out.append(text[i : i + sizes[k % len(sizes)]])
        i += sizes[k % len(sizes)]
        k += 1
    return out


texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
block_sizes = st.lists(st.integers(1, 9), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, sizes=block_sizes, kind=st.sampled_from(sorted(KINDS)), opt=st.sampled_from(range(len(OPTIONS))))
def test_stream_equals_whole_text(toks, text, sizes, kind, opt):
    tok, options = toks[kind], OPTIONS[opt]
    whole = outcome(lambda: tok.encode(text, **options))
    streamed = outcome(lambda: [i for ids in tok.encode_stream(cut(text, sizes), **options) for i in ids])
    assert streamed == whole


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, block=st.integers(1, 9), kind=st.sampled_from(sorted(KINDS)), opt=st.sampled_from(range(len(OPTIONS))),
       fmt=st.sampled_from(["npy", "text"]))
def test_encode_file_equals_whole_text(toks, text, block, kind, opt, fmt):
    """Bytes read ``block`` at a time (characters cut in the middle)."""
    import numpy as np

    tok, options = toks[kind], OPTIONS[opt]
    whole = outcome(lambda: tok.encode(text, **options))
    out = io.BytesIO()
    n = outcome(lambda: tok.encode_file(io.BytesIO(text.encode()), out, block_bytes=block, format=fmt, **options))
    if isinstance(whole, tuple):
        assert n == whole
        return
    ids = np.load(io.BytesIO(out.getvalue())).tolist() if fmt == "npy" else [int(w) for w in out.getvalue().split()]
    assert (n, ids) == (len(whole), whole)
    if fmt == "npy":
        assert np.load(io.BytesIO(out.getvalue())).dtype == np.uint16
    else:
        assert out.getvalue().endswith(b"\n") and out.getvalue().count(b"\n") == 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(st.sampled_from([b"a", b" ", b"\xc3\xa9", b"\xe4\xbd\xa0", b"\xff", b"\xc3", b"\x80", b"\n",
                                       b"\xf0\x9f\x99\x82", b"<|eot|>"]), max_size=30).map(b"".join),
       block=st.integers(1, 7), errors=st.sampled_from(["strict", "replace"]), kind=st.sampled_from(sorted(KINDS)))
def test_invalid_utf8_as_the_cli_reads_it(toks, tmp_path_factory, data, block, errors, kind):
    """Invalid UTF-8: the error (file name, byte offset) or the replaced text
    of the existing whole-file reading (``_io.read_text``)."""
    tok = toks[kind]
    path = tmp_path_factory.mktemp("u") / "in.txt"
    path.write_bytes(data)
    whole = outcome(lambda: tok.encode(read_text(path, errors), allowed_special="all"))
    out = io.BytesIO()
    streamed = outcome(lambda: tok.encode_file(str(path), out, block_bytes=block, errors=errors, format="text",
                                               allowed_special="all"))
    if isinstance(whole, tuple):
        assert streamed == whole
    else:
        assert [int(w) for w in out.getvalue().split()] == whole


def test_lone_surrogates_are_replaced_as_encode_does(toks):
    tok = toks["byte-cl100k"]
    text = "a\ud83d\ude42b \ud800 c"  # a surrogate pair (as Python may hold it) and a lone one
    for sizes in ([1], [2], [3], [100]):
        assert [i for ids in tok.encode_stream(cut(text, sizes)) for i in ids] == tok.encode(text)


def test_unknown_character_error_names_the_position_in_the_whole_text(toks):
    tok = toks["char-split-no-fallback"]
    text = "the cat " * 50 + "the Q cat"
    with pytest.raises(BytepairError) as whole:
        tok.encode(text)
    with pytest.raises(BytepairError) as streamed:
        for _ in tok.encode_stream(cut(text, [7])):
            pass
    assert str(streamed.value) == str(whole.value) and "position 404" in str(whole.value)


def test_one_huge_word_is_linear(toks):
    """A 4 MB text without a space in 1 KB blocks: the stream waits for the
    word's end without rescanning it at every block (the settling is only
    tried again once the held text has doubled)."""
    import time

    tok = toks["char-split"]
    text = "ab" * (2 << 20) + " the"
    t0 = time.perf_counter()
    whole = tok.encode(text)
    t_whole = time.perf_counter() - t0
    t0 = time.perf_counter()
    streamed = [i for ids in tok.encode_stream(cut(text, [1024])) for i in ids]
    t_stream = time.perf_counter() - t0
    assert streamed == whole
    # quadratic rescanning would cost 4096 blocks x 2 MB on average: minutes, not ~ the whole-text time
    assert t_stream < 10 * t_whole + 2


# ---------------------------------------------------------------- the CLI


@pytest.fixture()
def tok_file(tmp_path, toks):
    path = tmp_path / "tok.json"
    toks["byte-cl100k"].save(str(path))
    return path


def test_cli_input_output_npy_and_text(tmp_path, tok_file, toks, capsys):
    import numpy as np

    tok = toks["byte-cl100k"]
    text = TRAIN_TEXT * 20
    src = tmp_path / "doc.txt"
    src.write_text(text, encoding="utf-8")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(tmp_path / "ids.npy"),
                 "--allowed-special", "all"]) == 0
    assert np.load(tmp_path / "ids.npy").tolist() == tok.encode(text, allowed_special="all")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(tmp_path / "ids.txt"), "--ordinary"]) == 0
    assert (tmp_path / "ids.txt").read_text() == " ".join(map(str, tok.encode_ordinary(text))) + "\n"
    out = io.StringIO()
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "--ordinary"], out=out) == 0
    assert out.getvalue() == (tmp_path / "ids.txt").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.txt", "ids.npy", "ids.txt", "tok.json"]


@pytest.mark.parametrize("content, message", [
    (b"ok " * 1000 + b"\xff", "invalid UTF-8 at byte offset 3000 (byte 0xFF)"),
    ("the <|eot|> end".encode(), "pass --allowed-special"),
])
def test_cli_errors_leave_no_output(tmp_path, tok_file, capsys, content, message):
    src = tmp_path / "doc.txt"
    src.write_bytes(content)
    out = tmp_path / "ids.npy"
    out.write_bytes(b"previous")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.txt", "ids.npy", "tok.json"]


def test_cli_replace(tmp_path, tok_file, toks):
    src = tmp_path / "doc.txt"
    src.write_bytes(b"caf\xff \xc3")
    assert main(["encode", "-t", str(tok_file), "--input", str(src), "-o", str(tmp_path / "ids.txt"),
                 "--errors", "replace"]) == 0
    assert (tmp_path / "ids.txt").read_text().split() == [str(i) for i in toks["byte-cl100k"].encode("caf\ufffd \ufffd")]


def test_cli_usage(tmp_path, tok_file, capsys):
    with pytest.raises(SystemExit) as e:
        main(["encode", "-t", str(tok_file), "TEXT", "--input", "x.txt"])
    assert e.value.code == 2
    assert main(["encode", "-t", str(tok_file), "--input", "-", "--to", "npy"]) == 1
    assert "-o OUT.npy" in capsys.readouterr().err


def test_uint32_when_the_vocabulary_is_large():
    import numpy as np
    import warnings

    words = {f"w{i:05d}x": 1 for i in range(70_000)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = Tokenizer.train(words, vocab_size=66_000, pattern=r"\S+|\s+")
    out = io.BytesIO()
    text = " ".join(tok.decode([i]) for i in range(65_990, 66_000)) + " " + " ".join(random.Random(0).sample(sorted(words), 500))
    tok.encode_file(io.BytesIO(text.encode()), out, format="npy", block_bytes=100)
    a = np.load(io.BytesIO(out.getvalue()))
    assert a.dtype == np.uint32 and a.tolist() == tok.encode(text) and max(a) >= 65536
