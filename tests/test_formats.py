"""Tokenizer files in every format: round trips (``load(save(t))`` encodes
as ``t`` does), format detection, what each format cannot hold (a
``FormatError``, no file written), and malformed or truncated files of every
format (a ``FormatError`` naming the file and the line, or the JSON field).
The conformance with the other tools is in ``test_conformance_*.py``."""

from __future__ import annotations

import json
import os
import re
import warnings

import pytest
import tokenizers

from bytepair.spec import from_byte_vocab
from bytepair import FormatError, InputError, Tokenizer
from bytepair import regex_dialects
from bytepair.formats import detect, gpt2, hf, subword_nmt
from conftest import write_tokenizer_json_with_moved_added_tokens
from bytepair.formats import tiktoken as tiktoken_format

TEXT = (
    "The quick brown fox jumps over the lazy dog. Le renard brun saute par-dessus le chien. "
    "Быстрая коричневая лиса. 敏捷的棕色狐狸。 素早い茶色の狐。 빠른 갈색 여우. "
    "🦊🐶 naïve café 12345 3.14159 it's we'll they're\n\n\tdef f(x):\n        return x**2\n"
)
SPECIALS = ["<|endoftext|>", "<|fim_prefix|>"]
SAMPLES = [TEXT, "hello world<|endoftext|> again<|fim_prefix|>", "  \n\t x", "", "日本語" * 30]


@pytest.fixture(scope="module")
def byte_tok():
    return Tokenizer.train([TEXT] * 3, vocab_size=420, special_tokens=SPECIALS)


@pytest.fixture(scope="module")
def char_fused():
    return Tokenizer.train([TEXT] * 3, model="char", num_merges=120, end_of_word="</w>", end_of_word_fused=True)


def _same(a, b, texts=SAMPLES):
    for text in texts:
        assert a.encode(text, allowed_special="all") == b.encode(text, allowed_special="all"), repr(text)


def _char_same(a, b):
    for text in (TEXT, "the fox", "quick  brown\nfox"):
        assert a.tokenize(text) == b.tokenize(text)


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("fmt, name", [("bytepair", "t.json"), ("hf", "tokenizer.json"), ("tiktoken", "t.tiktoken"), ("gpt2", "gpt2-folder")])
def test_byte_model_round_trip(byte_tok, tmp_path, fmt, name):
    path = str(tmp_path / name)
    byte_tok.save(path, format=fmt)
    assert detect(path) == fmt
    kwargs = {"pattern": "cl100k"} if fmt in ("tiktoken", "gpt2") else {}
    if fmt == "tiktoken":
        kwargs["special_tokens"] = byte_tok.special_tokens  # .tiktoken files hold no special tokens
    back = Tokenizer.load(path, **kwargs)
    _same(byte_tok, back)
    assert back.special_tokens == byte_tok.special_tokens
    assert back.merges == byte_tok.merges
    assert back.vocab() == byte_tok.vocab()


def test_gpt2_files_layout(byte_tok, tmp_path):
    folder = tmp_path / "files"
    byte_tok.save(str(folder), format="gpt2")
    merges = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert merges[0] == "#version: 0.2" and len(merges) == 1 + len(byte_tok.merges)
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["Ġ"] == 32 and vocab["<|endoftext|>"] == byte_tok.special_tokens["<|endoftext|>"]
    for path in (folder, folder / "vocab.json", folder / "merges.txt"):
        _same(byte_tok, Tokenizer.load(str(path), pattern="cl100k"))
    # without a pattern: GPT-2's own (the gpt2 preset)
    assert Tokenizer.load(str(folder)).pattern == Tokenizer.train("a b", pattern="gpt2").pattern


def test_tiktoken_vocabulary_to_every_format(byte_tok, tmp_path):
    """A vocabulary loaded as ranks (merges derived) converts too."""
    path = str(tmp_path / "t.tiktoken")
    byte_tok.save(path, format="tiktoken")
    ranks = Tokenizer.load(path, pattern="cl100k", special_tokens=byte_tok.special_tokens)
    for fmt, name in [("hf", "x.json"), ("gpt2", "folder"), ("bytepair", "n.json")]:
        out = str(tmp_path / name)
        ranks.save(out, format=fmt)
        _same(byte_tok, Tokenizer.load(out, pattern="cl100k") if fmt == "gpt2" else Tokenizer.load(out))


@pytest.mark.parametrize("fmt, name", [("bytepair", "c.json"), ("hf", "c-hf.json"), ("subword-nmt", "codes")])
def test_char_model_round_trip(char_fused, tmp_path, fmt, name):
    path = str(tmp_path / name)
    char_fused.save(path, format=fmt)
    assert detect(path) == fmt
    back = Tokenizer.load(path)
    assert back.merges == char_fused.merges
    if fmt == "subword-nmt":
        # codes hold no pattern: loaded, they split words as apply-bpe does, on spaces and newlines
        from bytepair.formats.subword_nmt import APPLY_BPE_WORDS

        assert back.pattern == APPLY_BPE_WORDS
        spaces_only = " ".join(TEXT.split())
        assert back.tokenize(spaces_only) == char_fused.tokenize(spaces_only)
        # a tab is part of a word for apply-bpe: one word, one marker
        assert "".join(back.tokenize("fox\tdog")).count("</w>") == 1
        assert "".join(char_fused.tokenize("fox\tdog")).count("</w>") == 2
    else:
        _char_same(char_fused, back)  # codes hold no ids; the alphabet is what the merges use
        assert back.vocab() == char_fused.vocab()
        assert back.encode("the fox") == char_fused.encode("the fox")


def test_char_model_without_marker_round_trips_through_hf(tmp_path):
    tok = Tokenizer.train([TEXT] * 2, model="char", num_merges=60, end_of_word=None, special_tokens=["<s>"])
    path = str(tmp_path / "t.json")
    tok.save(path, format="hf")
    back = Tokenizer.load(path)
    assert back.vocab() == tok.vocab() and back.special_tokens == tok.special_tokens
    assert back.encode("the quick fox<s>", allowed_special="all") == tok.encode("the quick fox<s>", allowed_special="all")


def test_detect_by_content(byte_tok, char_fused, tmp_path):
    byte_tok.save(str(tmp_path / "ranks"), format="tiktoken")
    assert detect(str(tmp_path / "ranks")) == "tiktoken"
    (tmp_path / "v01").write_text("a b\nab c\n", encoding="utf-8")
    assert detect(str(tmp_path / "v01")) == "subword-nmt"
    byte_tok.save(str(tmp_path / "native"))
    assert detect(str(tmp_path / "native")) == "bytepair"
    byte_tok.save(str(tmp_path / "hfjson"), format="hf")
    assert detect(str(tmp_path / "hfjson")) == "hf"


# ---------------------------------------------------------------- what a format cannot hold


def test_char_model_is_refused_by_byte_formats(char_fused, tmp_path):
    for fmt in ("tiktoken", "gpt2"):
        with pytest.raises(FormatError, match="byte-model"):
            char_fused.save(str(tmp_path / f"x.{fmt}"), format=fmt)
    with pytest.raises(FormatError, match="byte-model"):
        tiktoken_format.to_tiktoken(char_fused)
    assert not os.listdir(tmp_path)


def test_two_ids_with_the_same_bytes_are_refused(tmp_path):
    tok = Tokenizer.from_merges([(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")], model="byte", pattern="gpt2")
    for fmt in ("tiktoken", "hf", "gpt2"):
        with pytest.raises(FormatError, match="same token"):
            tok.save(str(tmp_path / f"x-{fmt}"), format=fmt)
    assert not os.listdir(tmp_path)


def test_special_token_written_like_a_token_is_refused(tmp_path):
    tok = Tokenizer.from_merges([(b"h", b"e")], model="byte", pattern="gpt2", special_tokens={"he": 300})
    with pytest.raises(FormatError, match="special token 'he'"):
        tok.save(str(tmp_path / "t.json"), format="hf")


def test_to_tiktoken_needs_every_byte():
    tok = Tokenizer.from_spec(from_byte_vocab({i: bytes([i]) for i in range(256) if i != 65}, "gpt2"))
    with pytest.raises(ValueError, match="0x41"):
        tiktoken_format.to_tiktoken(tok)


def test_failed_save_leaves_the_old_file(char_fused, byte_tok, tmp_path):
    path = tmp_path / "t.tiktoken"
    byte_tok.save(str(path), format="tiktoken")
    before = path.read_bytes()
    settings = (tmp_path / "t.tiktoken.settings.json").read_bytes()
    with pytest.raises(FormatError):
        char_fused.save(str(path), format="tiktoken")
    assert path.read_bytes() == before and (tmp_path / "t.tiktoken.settings.json").read_bytes() == settings
    assert sorted(os.listdir(tmp_path)) == ["t.tiktoken", "t.tiktoken.settings.json"]


def test_gpt2_save_onto_a_file_is_refused(byte_tok, tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(FormatError, match="folder"):
        byte_tok.save(str(tmp_path / "f"), format="gpt2")


# ---------------------------------------------------------------- malformed files


def _write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def _fails(path, where, fmt=None, **kwargs):
    """Loading ``path`` raises a FormatError naming the file and ``where``."""
    with pytest.raises(FormatError) as info:
        Tokenizer.load(path, format=fmt, **kwargs)
    message = str(info.value)
    assert path in message, message
    assert re.search(where, message), message
    return message


@pytest.mark.parametrize(
    "content, where",
    [
        ("YQ== 0\nYg==\n", r"line 2: .*expected 'base64 rank'"),
        ("YQ== 0\nYg== x\n", r"line 2: .*not a non-negative integer"),
        ("YQ== 0\nYg== -1\n", r"line 2: .*not a non-negative integer"),
        ("YQ== 0\n!!!! 1\n", r"line 2: .*not valid base64"),
        ("YQ== 0\nYg 1\n", r"line 2: .*not valid base64"),
        ("YQ== 0\nYg== 0\n", r"line 2: .*rank 0 is already the rank of line 1"),
        ("YQ== 0\n\nYQ== 1\n", r"line 3: .*token b'a' is already on line 1"),
        ("YQ== 0\nYg== 99999999999\n", r"line 2: .*too large"),
        ("YQ== 0\nYg== 1 2\n", r"line 2: .*expected 'base64 rank'"),
        ("YQ== 0\nw6k= 1\né 2\n", r"line 3: .*non-ASCII"),
        ("", r"holds no tokens"),
        ("\n\n", r"holds no tokens"),
    ],
)
def test_malformed_tiktoken(tmp_path, content, where):
    _fails(_write(tmp_path, "bad.tiktoken", content), where)


def test_truncated_tiktoken(byte_tok, tmp_path):
    data = tiktoken_format.dumps(byte_tok)
    cut = data[: data.index(b"\n", len(data) // 2) + 4]  # inside the base64 of a line
    line = cut.count(b"\n") + 1
    _fails(_write(tmp_path, "cut.tiktoken", cut), rf"line {line}: ")


def test_special_token_on_a_rank_is_refused(byte_tok, tmp_path):
    path = str(tmp_path / "t.tiktoken")
    byte_tok.save(path, format="tiktoken")
    with pytest.raises(ValueError, match="already the rank"):
        Tokenizer.load(path, special_tokens={"<x>": 5})


@pytest.mark.parametrize(
    "content, where",
    [
        ('{\n "model": {\n  "type": "BPE",\n  vocab: {}\n }\n}', r"line 4, column 3: invalid JSON"),
        ("[1, 2]", r"top level must be a JSON object"),
        ('{"model": null}', r"no 'model' object"),
        ('{"model": {"type": "BPE", "vocab": [1]}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}', r"model\.vocab"),
        ('{"model": {"type": "BPE", "vocab": {"a": "x"}}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}', r"model\.vocab\['a'\]"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}', r"id 0 to both"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a"]]}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}', r"model\.merges\[0\]"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a  b"]}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}', r"model\.merges\[0\]"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a", "b"]]}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}', r"model\.merges\[0\].*makes 'ab', which is not in the vocabulary"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0}}, "added_tokens": [{"id": 1}], "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}', r"added_tokens\[0\]"),
        ('{"model": {"type": "BPE", "vocab": {"a": 0}}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated"}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]}}', r"pretokenizers\[0\]"),
    ],
)
def test_malformed_hf(tmp_path, content, where):
    _fails(_write(tmp_path, "tokenizer.json", content), where, fmt="hf")


def test_token_outside_the_byte_map_runs_as_a_pipeline(tmp_path):
    """Once refused by the byte model, now exact: Hugging Face loads a
    ByteLevel file with a token outside GPT-2's byte map (the token is never
    produced), and so does the pipeline engine, with the same ids."""
    import tokenizers

    content = '{"model": {"type": "BPE", "vocab": {"a b": 0, "a": 1, "Ġ": 2}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true}, "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true}}'
    path = _write(tmp_path, "tokenizer.json", content)
    tok, theirs = Tokenizer.load(path), tokenizers.Tokenizer.from_file(path)
    for text in ["a a", "aa  a", ""]:
        assert tok.encode(text) == theirs.encode(text).ids
        assert tok.decode(tok.encode(text)) == theirs.decode(theirs.encode(text).ids)


def test_truncated_hf(byte_tok, tmp_path):
    text = hf.dumps(byte_tok)
    cut = text[: len(text) // 2]
    _fails(_write(tmp_path, "cut.json", cut), rf"line {cut.count(chr(10)) + 1}, column \d+: invalid JSON")


def _gpt2_folder(byte_tok, tmp_path, vocab=None, merges=None):
    folder = tmp_path / "gpt2"
    byte_tok.save(str(folder), format="gpt2")
    if vocab is not None:
        (folder / "vocab.json").write_text(vocab, encoding="utf-8")
    if merges is not None:
        (folder / "merges.txt").write_text(merges, encoding="utf-8")
    return str(folder)


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda lines: lines[:3] + ["x y z"] + lines[3:], r"merges\.txt: line 4: expected 'left right'"),
        (lambda lines: lines + ["Ġ"], r"merges\.txt: line LAST: expected 'left right'"),
        (lambda lines: lines + ["Ġ zzzzzz"], r"merges\.txt: line LAST: .*'zzzzzz', which is not in the vocabulary"),
        (lambda lines: lines + [lines[1]], r"merges\.txt: line LAST: .*which .*merges\.txt: line 2 makes already"),
        (lambda lines: lines[:1] + lines[2:3] + lines[1:2] + lines[3:], r"merges\.txt: line 3: .*ids must grow"),
    ],
)
def test_malformed_gpt2_merges(byte_tok, tmp_path, change, where):
    folder = _gpt2_folder(byte_tok, tmp_path)
    lines = open(os.path.join(folder, "merges.txt"), encoding="utf-8").read().splitlines()
    lines = change(lines)
    folder = _gpt2_folder(byte_tok, tmp_path, merges="\n".join(lines) + "\n")
    with pytest.raises(FormatError) as info:
        Tokenizer.load(folder, pattern="cl100k")
    where = where.replace("LAST", str(len(lines)))
    assert re.search(where, str(info.value)) and folder in str(info.value), str(info.value)


def test_merge_that_is_not_the_rules_split(tmp_path):
    """A merge list with (" ", "  ") and no ("  ", " ") leaves three spaces
    as two tokens; bytepair's rule (tiktoken's) merges any two parts that make
    a token, and would make one. A GPT-2 folder with such a list is refused at
    its merge; the same list in a tokenizer.json runs on the pipeline engine,
    with Hugging Face's ids (found by the generated models of
    test_pipeline_fast.py, which the byte model once took)."""
    import tokenizers

    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(alphabet)}
    vocab.update({"ĠĠ": 256, "ĠĠĠ": 257})
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\nĠ Ġ\nĠ ĠĠ\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"merges\.txt: line 3: the merge \(\d+, 256\) makes the token 257, which "
                                          r"bytepair's rule makes from \(256, \d+\)"):
        Tokenizer.load(str(folder))
    d = {"model": {"type": "BPE", "vocab": vocab, "merges": ["Ġ Ġ", "Ġ ĠĠ"]},
         "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
         "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}}
    path = _write(tmp_path, "tokenizer.json", json.dumps(d, ensure_ascii=False))
    tok, theirs = Tokenizer.load(path), tokenizers.Tokenizer.from_file(path)
    assert tok.model == "pipeline"
    for text in ["   ", "a   b", "    ", "  "]:
        assert tok.encode(text) == theirs.encode(text).ids, text
    assert tok.encode("   ") == [256, vocab["Ġ"]]


def test_malformed_gpt2_vocab(byte_tok, tmp_path):
    folder = _gpt2_folder(byte_tok, tmp_path, vocab='{"a": 0,\n "b": }')
    with pytest.raises(FormatError, match=r"vocab\.json: line 2, column 7: invalid JSON"):
        Tokenizer.load(folder)
    folder = _gpt2_folder(byte_tok, tmp_path, vocab='{"a": 0, "b": 0}')
    with pytest.raises(FormatError, match=r"vocab\.json: the id 0 is given to both"):
        Tokenizer.load(folder)
    folder = _gpt2_folder(byte_tok, tmp_path)
    os.remove(os.path.join(folder, "merges.txt"))
    with pytest.raises(InputError, match=r"merges\.txt: no such file"):
        Tokenizer.load(folder)


@pytest.mark.parametrize(
    "content, where",
    [
        ("#version: 0.2\na b c\n", r"line 2: .*two symbols"),
        ("#version: 0.2\na b\n\nab c\n", r"line 3: .*two symbols"),
        ("#version: 0.2\na b\nab\n", r"line 3: .*two symbols"),
        ("#version: 0.3\na b\n", r"line 1: .*version 0.3"),
        ("#version: x\na b\n", r"line 1: .*cannot read the version"),
        ("#version: 0.2\na b\nbc d\n", r"line 3: .*'bc' is neither a character"),
        ("#version: 0.2\na b\n</w> c\n", r"line 3: .*'</w>' is neither"),
    ],
)
def test_malformed_subword_nmt(tmp_path, content, where):
    _fails(_write(tmp_path, "codes", content), where, fmt="subword-nmt")


def test_malformed_native(byte_tok, tmp_path):
    text = json.dumps(byte_tok.to_dict(), indent=1)
    cut = text[: len(text) // 3]
    _fails(_write(tmp_path, "cut.json", cut), r"line \d+, column \d+: invalid JSON", fmt="bytepair")


def test_invalid_utf8_in_a_file_names_the_offset(tmp_path):
    path = _write(tmp_path, "codes", b"#version: 0.2\na b\n\xff c\n")
    with pytest.raises(InputError, match=r"codes: invalid UTF-8 at byte offset 18"):
        Tokenizer.load(path, format="subword-nmt")


# ---------------------------------------------------------------- regex dialects


@pytest.mark.parametrize(
    "fancy, onig",
    [
        (r"\p{N}{1,3}+", r"(?>\p{N}{1,3})"),
        (r"(?:ab){2}+c", r"(?>(?:ab){2})c"),
        (r"[a-z]{2,}+", r"(?>[a-z]{2,})"),
        (r"\s++$|^x", r"\s++\z|\Ax"),
        (r"[$^]\$", r"[$^]\$"),
        (r"a{1,3}?b{2}", r"a{1,3}?b{2}"),
        (r"(?s:.)", r"(?m:.)"),
        (r"[^\r\n\p{L}]?+\p{L}++", r"[^\r\n\p{L}]?+\p{L}++"),
    ],
)
def test_to_onig(fancy, onig):
    assert regex_dialects.to_onig(fancy) == onig


@pytest.mark.parametrize(
    "onig, fancy",
    [
        (r"\p{N}{1,3}+", r"(?:\p{N}{1,3})+"),
        (r"a$|^b", r"a(?m:$)|(?m:^)b"),
        (r"(?m:.)", r"(?s:.)"),
        (r"\h+", r"[0-9a-fA-F]+"),
    ],
)
def test_from_onig(onig, fancy):
    assert regex_dialects.from_onig(onig) == fancy


@pytest.mark.parametrize("pattern", [r"(a)\1", r"a\Z", r"(?x) a", r"\R", r"(?<n>a)\k<n>", "(a", "a)", "[a", "a\\"])
def test_untranslatable_patterns_are_refused(pattern):
    with pytest.raises(ValueError):
        regex_dialects.from_onig(pattern)


def test_translated_presets_split_as_hugging_face_does():
    """The Oniguruma translation of each preset, run by Hugging Face, gives
    bytepair's pieces (cl100k's possessive \\p{N}{1,3}+ would not, as is)."""
    import tokenizers

    from bytepair import PRESETS, _core

    text = "Hello  world 1234567 it's\n\n  x\t\ty   "
    for name in ("gpt2", "cl100k", "o200k"):
        split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(regex_dialects.to_onig(PRESETS[name])), "isolated")
        assert [p for p, _ in split.pre_tokenize_str(text)] == _core.split_words(text, PRESETS[name])
    naive = tokenizers.pre_tokenizers.Split(tokenizers.Regex(PRESETS["cl100k"]), "isolated")
    assert "1234567" in [p for p, _ in naive.pre_tokenize_str(text)]


def test_py_whitespace_class_is_str_isspace():
    assert hf._PY_SPACES == [chr(c) for c in range(0x110000) if chr(c).isspace()]


def test_subword_nmt_reapplied_merges_doc():
    assert subword_nmt.reapplied_merges([("a", "b"), ("ab", "c")]) == []
    assert gpt2.files("x/vocab.json") == (os.path.join("x", "vocab.json"), os.path.join("x", "merges.txt"))


# ---------------------------------------------------------------- GPT-2's original files


def test_real_gpt2_files(vocab_paths, real_texts, tmp_path):
    """GPT-2's own encoder.json + vocab.bpe (as vocab.json + merges.txt) load
    as tiktoken's r50k_base, encode identically, and are written back the
    same (merges.txt byte for byte, vocab.json as the same JSON)."""
    import tiktoken
    import tiktoken.load

    folder = os.path.dirname(vocab_paths["gpt2/vocab.json"])
    tok = Tokenizer.load(folder)
    assert tok.special_tokens == {"<|endoftext|>": 50256}
    ranks = Tokenizer.load(vocab_paths["gpt2.tiktoken"])
    assert tok.vocab() == ranks.vocab()
    enc = tiktoken.Encoding("r50k", pat_str=ranks.pattern, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
        vocab_paths["gpt2.tiktoken"]), special_tokens={"<|endoftext|>": 50256})
    docs = [d + "<|endoftext|>" for d in real_texts]
    assert tok.encode_batch(docs, allowed_special="all") == enc.encode_batch(docs, allowed_special="all")
    tok.save(str(tmp_path / "out"), format="gpt2")
    assert (tmp_path / "out" / "merges.txt").read_bytes() == open(vocab_paths["gpt2/merges.txt"], "rb").read()
    with open(vocab_paths["gpt2/vocab.json"], encoding="utf-8") as f:
        assert json.loads((tmp_path / "out" / "vocab.json").read_text(encoding="utf-8")) == json.load(f)


def test_deeply_nested_json_is_a_format_error(tmp_path):
    """Nesting deeper than Python's recursion limit is a FormatError in every
    JSON-based loader, not a RecursionError."""
    import bytepair
    from bytepair.counts import load_counts

    deep = "[" * 100_000
    (tmp_path / "native.json").write_text('{"bytepair": ' + deep, encoding="utf-8")
    (tmp_path / "tokenizer.json").write_text('{"model": ' + deep, encoding="utf-8")
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "vocab.json").write_text(deep, encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    (tmp_path / "c.counts").write_text(deep + "\n", encoding="utf-8")
    for path, fmt in ((tmp_path / "native.json", "bytepair"), (tmp_path / "tokenizer.json", "hf"), (folder, "gpt2")):
        with pytest.raises(bytepair.FormatError):
            bytepair.Tokenizer.load(str(path), format=fmt)
    with pytest.raises(bytepair.FormatError):
        load_counts(str(tmp_path / "c.counts"))


def test_added_tokens_with_other_ids_than_hf_gives_them_warn_once(tmp_path):
    """Hugging Face gives an added token the id of its text in the vocabulary, else the next free one, whatever
    id the file writes: bytepair gives the same ids, and says so in one warning, however many tokens move."""
    path = tmp_path / "tokenizer.json"
    write_tokenizer_json_with_moved_added_tokens(path, 500)
    hf = tokenizers.Tokenizer.from_file(str(path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = Tokenizer.load(str(path))
    moved = [w for w in caught if "says id" in str(w.message)]
    assert len(moved) == 1, [str(w.message) for w in caught]
    assert "added_tokens[0] ('<t0>') says id 900" in str(moved[0].message) and "499 more" in str(moved[0].message)
    for k in (0, 1, 499):
        assert tok.encode(f"x<t{k}>", allowed_special="all") == hf.encode(f"x<t{k}>").ids


def test_the_warning_about_moved_added_tokens_names_the_file_on_the_pipeline_route(tmp_path):
    """The same file with a normalizer (which only the pipeline runs): the one warning names the file, as on the
    byte model's route, not an internal name; the ids are Hugging Face's."""
    path = tmp_path / "tokenizer.json"
    write_tokenizer_json_with_moved_added_tokens(path, 3)
    doc = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(dict(doc, normalizer={"type": "NFC"})), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = Tokenizer.load(str(path))
    moved = [str(w.message) for w in caught if "says id" in str(w.message)]
    assert len(moved) == 1 and moved[0].startswith(f"{path}: added_tokens[0]"), moved
    assert tok.encode("a<t1>", allowed_special="all") == tokenizers.Tokenizer.from_file(str(path)).encode("a<t1>").ids
