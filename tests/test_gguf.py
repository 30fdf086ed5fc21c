"""GGUF tokenizers (bytepair.formats.gguf) without llama.cpp: llama.cpp's own expected ids (the
.inp/.out files shipped with its ggml-vocab-*.gguf), untrusted headers, detection, writing.
The comparison with llama.cpp itself is tests/test_gguf_llama_cpp.py."""

import json
import os
import struct

import pytest

from bytepair import Tokenizer
from bytepair.errors import FormatError
from bytepair.formats import detect, gguf, hf

# every byte-level, SentencePiece and Gemma 4 BPE file llama.cpp ships with expected ids (WordPiece is out of scope)
ORACLE_FILES = ["llama-bpe", "llama-spm", "qwen2", "qwen35", "deepseek-llm", "deepseek-coder", "gpt-2", "mpt",
                "starcoder", "refact", "command-r", "falcon", "phi-3", "gemma-4"]
NO_ORACLE = ["aquila", "baichuan", "gpt-neox"]


def cases(base):
    """llama.cpp's test texts and the ids its test-tokenizer-0 expects (parse_special=False, no BOS)."""
    with open(base + ".inp", encoding="utf-8") as f:
        texts = f.read().split("\n__ggml_vocab_test__\n")
    if texts and texts[-1] == "":
        texts.pop()
    with open(base + ".out", encoding="utf-8") as f:
        ids = [[int(x) for x in line.split()] for line in f.read().split("\n")]
    return list(zip(texts, ids))


@pytest.mark.parametrize("name", ORACLE_FILES)
def test_inp_out_cases(gguf_paths, gguf_tokenizer, name):
    path = gguf_paths[f"ggml-vocab-{name}.gguf"]
    tok = gguf_tokenizer(name)
    pairs = cases(path)
    assert len(pairs) >= 40
    for text, want in pairs:
        assert tok.encode_ordinary(text) == want, text


@pytest.mark.parametrize("name", NO_ORACLE)
def test_files_without_oracle_load(gguf_tokenizer, name):
    tok = gguf_tokenizer(name)
    assert tok.n_vocab > 1000


def test_detected_and_chat_template(gguf_paths, gguf_tokenizer):
    path = gguf_paths["ggml-vocab-llama-bpe.gguf"]
    assert detect(path) == "gguf"
    meta = gguf.read_metadata(path)
    tok = gguf_tokenizer("llama-bpe")
    assert tok.chat_template == meta.values.get("tokenizer.chat_template")
    back = Tokenizer.from_dict(tok.to_dict())
    assert back.chat_template == tok.chat_template
    ids = tok.encode_ordinary("Hello , it ' s")  # llama.cpp's decode cleans these spaces (clean_spaces)
    assert back.decode(ids) == tok.decode(ids) != tok.decode(ids[:1]) + "".join(tok.decode([i]) for i in ids[1:])


@pytest.mark.parametrize("name", ["bert-bge", "nomic-bert-moe"])
def test_other_models_refused_by_name(gguf_paths, name):
    model = gguf.read_metadata(gguf_paths[f"ggml-vocab-{name}.gguf"]).values["tokenizer.ggml.model"]
    with pytest.raises(FormatError, match=repr(model)):
        Tokenizer.load(gguf_paths[f"ggml-vocab-{name}.gguf"])


# ---------------------------------------------------------------- untrusted headers

def small_gguf(**changes):
    """A tiny valid gpt2-model GGUF's items; ``changes`` replace or (None) drop keys."""
    tokens = [gguf.bytes_to_unicode(bytes([b])) for b in range(256)] + ["ab"]
    items = {
        "general.architecture": (gguf.T_STRING, "gpt2", None),
        "tokenizer.ggml.model": (gguf.T_STRING, "gpt2", None),
        "tokenizer.ggml.pre": (gguf.T_STRING, "gpt-2", None),
        "tokenizer.ggml.tokens": (gguf.T_ARRAY, tokens, gguf.T_STRING),
        "tokenizer.ggml.token_type": (gguf.T_ARRAY, [1] * len(tokens), gguf.T_INT32),
        "tokenizer.ggml.merges": (gguf.T_ARRAY, ["a b"], gguf.T_STRING),
    }
    for k, v in changes.items():
        k = k.replace("__", ".")
        if v is None:
            items.pop(k)
        else:
            items[k] = v
    return gguf.gguf_bytes([(k, *v) for k, v in items.items()])


def write(tmp_path, data, name="t.gguf"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_small_file_loads(tmp_path):
    tok = Tokenizer.load(write(tmp_path, small_gguf()))
    assert tok.encode("abab") == [256, 256]


def test_every_truncation_is_a_format_error(tmp_path):
    data = small_gguf()
    for cut in list(range(0, 200)) + list(range(200, len(data), 97)):
        with pytest.raises(FormatError):
            Tokenizer.load(write(tmp_path, data[:cut]), format="gguf")


def test_huge_counts_refused_before_allocating(tmp_path):
    data = bytearray(small_gguf())
    # the number of keys
    bad = bytearray(data)
    bad[16:24] = struct.pack("<Q", 1 << 60)
    with pytest.raises(FormatError, match=r"byte offset 16"):
        Tokenizer.load(write(tmp_path, bytes(bad)))
    # the tokens array's length, and a string length
    at = data.index(b"tokenizer.ggml.tokens") + len("tokenizer.ggml.tokens") + 4 + 4
    for where in (at, at + 8):
        bad = bytearray(data)
        bad[where:where + 8] = struct.pack("<Q", 1 << 60)
        with pytest.raises(FormatError, match=r"tokenizer\.ggml\.tokens.*byte offset"):
            Tokenizer.load(write(tmp_path, bytes(bad)))


def test_wrong_types_and_missing_keys_named(tmp_path):
    with pytest.raises(FormatError, match=r"'tokenizer\.ggml\.merges'"):
        Tokenizer.load(write(tmp_path, small_gguf(tokenizer__ggml__merges=None)))
    with pytest.raises(FormatError, match=r"'tokenizer\.ggml\.tokens' \(byte offset \d+\) is array of int32"):
        Tokenizer.load(write(tmp_path, small_gguf(tokenizer__ggml__tokens=(gguf.T_ARRAY, [1, 2], gguf.T_INT32))))
    with pytest.raises(FormatError, match=r"'tokenizer\.ggml\.model'.*is uint32"):
        Tokenizer.load(write(tmp_path, small_gguf(tokenizer__ggml__model=(gguf.T_UINT32, 7, None))))
    data = bytearray(small_gguf())
    at = data.index(b"tokenizer.ggml.pre") + len("tokenizer.ggml.pre")
    data[at:at + 4] = struct.pack("<I", 99)
    with pytest.raises(FormatError, match=r"value type 99.*tokenizer\.ggml\.pre"):
        Tokenizer.load(write(tmp_path, bytes(data)))


def test_unknown_pre_type_named(tmp_path):
    with pytest.raises(FormatError, match="'no-such-pre'"):
        Tokenizer.load(write(tmp_path, small_gguf(tokenizer__ggml__pre=(gguf.T_STRING, "no-such-pre", None))))


def test_every_pre_type_builds(tmp_path):
    """(Each one's ids against llama.cpp itself: tests/test_gguf_llama_cpp.py.)"""
    assert not set(gguf.PRE_TYPES) & set(gguf.RAW_UTF8_PRE)
    for name in gguf.PRE_TYPES:
        tok = Tokenizer.load(write(tmp_path, small_gguf(tokenizer__ggml__pre=(gguf.T_STRING, name, None))))
        assert tok.decode(tok.encode("ab 12 cd")) == "ab 12 cd", name


def test_long_string_arrays_read_by_the_core_as_by_python(tmp_path, monkeypatch):
    """Arrays of more than gguf._CORE_STRINGS strings are read by the core; any fault in them is named by the
    Python reader, with the same message as when Python reads the whole file."""
    tokens = [gguf.bytes_to_unicode(bytes([b])) for b in range(256)] + ["ab"] + [f"t{k}" for k in range(6000)]
    data = small_gguf(tokenizer__ggml__tokens=(gguf.T_ARRAY, tokens, gguf.T_STRING),
                      tokenizer__ggml__token_type=(gguf.T_ARRAY, [1] * len(tokens), gguf.T_INT32))
    at = data.index(b"t4500")
    bad_utf8 = data[:at] + b"\xff" + data[at + 1:]
    cases = [data, bad_utf8, data[:at + 2]]  # whole; element 4757 (t4500) not UTF-8; cut inside the array
    by_core = []
    for k, case in enumerate(cases):
        path = write(tmp_path, case, f"c{k}.gguf")
        try:
            by_core.append(gguf.read_metadata(path).values["tokenizer.ggml.tokens"])
        except FormatError as e:
            by_core.append(str(e))
    monkeypatch.setattr(gguf, "_CORE_STRINGS", 1 << 30)
    by_python = []
    for k, case in enumerate(cases):
        try:
            by_python.append(gguf.read_metadata(str(tmp_path / f"c{k}.gguf")).values["tokenizer.ggml.tokens"])
        except FormatError as e:
            by_python.append(str(e))
    assert by_core == by_python
    assert by_core[0] == tokens and "element 4757 is not UTF-8" in by_core[1] and "element 4757 is 5, more than the 2 bytes left" in by_core[2]


@pytest.mark.parametrize("merge", ["a c", "ab", "a  b", " a b"])
def test_a_merge_that_makes_no_token_is_refused(tmp_path, merge):
    """A merge whose parts or result are not tokens (llama.cpp would fall back to other pieces; a merge
    without a space is its empty pair) is refused, naming the file and the merge."""
    path = write(tmp_path, small_gguf(tokenizer__ggml__merges=(gguf.T_ARRAY, ["a b", merge], gguf.T_STRING)))
    with pytest.raises(FormatError, match=r"t\.gguf: model\.merges\[1\]: the token .* is not in model\.vocab"):
        Tokenizer.load(path)


@pytest.mark.parametrize("name", ["llama-bpe", "command-r", "gemma-4", "gpt-2"])
def test_core_built_from_lists_as_from_json(gguf_paths, name):
    """The core a GGUF load builds from the vocabulary and merges handed over as lists (never written as JSON)
    gives the ids and the decoding of the core built from the description's whole JSON text."""
    from bytepair import _core
    from bytepair import spec as specs
    from hostile_text import hostile_texts
    spec = gguf.load(gguf_paths[f"ggml-vocab-{name}.gguf"])
    assert specs._bpe_lists(spec.description) is not None  # the lists route is the one taken
    regexes = {}
    specs._regexes(spec.description, regexes)
    whole = _core.CorePipeline(json.dumps(spec.description), regexes, specs.llama_decoding(spec))
    specials = [t["content"] for t in spec.description["added_tokens"]][:40]
    for text in hostile_texts(7, 150, specials):
        for args in ((None, [], False), ([], [], True)):  # every added token matched; special ones as text, BOS
            ids = whole.encode(text, *args)
            assert spec.built.encode(text, *args) == ids, text
            assert spec.built.decode_bytes(ids) == whole.decode_bytes(ids), text
    assert spec.built.n_vocab == whole.n_vocab


def test_not_gguf_magic_and_versions(tmp_path):
    with pytest.raises(FormatError, match="GGUF version 1"):
        Tokenizer.load(write(tmp_path, b"GGUF" + struct.pack("<I", 1) + bytes(40)))


def test_tensors_never_read(tmp_path):
    # a huge tail after the metadata (standing in for tensors) is never read: the file is mapped, not loaded
    data = small_gguf()
    path = tmp_path / "big.gguf"
    with open(path, "wb") as f:
        f.write(data)
        f.truncate(len(data) + (8 << 30))  # sparse: 8 GiB of "tensors"
    tok = Tokenizer.load(str(path))
    assert tok.encode("ab") == [256]


# ---------------------------------------------------------------- writing

def test_save_roundtrip_and_refusal(tmp_path):
    tok = Tokenizer.train("hello world, hello there " * 20, num_merges=30, pattern="gpt2",
                          special_tokens=["<|endoftext|>"])
    path = str(tmp_path / "tok.gguf")
    tok.save(path, format="gguf")
    back = Tokenizer.load(path)
    text = "hello there, world<|endoftext|>hello"
    assert back.encode(text, add_special_tokens=False) == tok.encode(text, allowed_special="all")
    other = Tokenizer.train("hello world " * 10, num_merges=5, pattern="cl100k")
    with pytest.raises(FormatError, match="pattern"):
        other.save(str(tmp_path / "x.gguf"), format="gguf")
    assert not os.path.exists(tmp_path / "x.gguf")


def test_overlapping_special_tokens_cut_as_llama_cpp_or_refused(tmp_path):
    """Where one special token ends with what another starts with, llama.cpp's cut (longest first) is used
    (its ids against llama.cpp: tests/test_gguf_llama_cpp.py); two such tokens of one length are refused, as
    llama.cpp's order for them is its C++ library's sort. Without overlaps Hugging Face's cut is kept, and
    only then can the tokenizer be written as a tokenizer.json."""
    base = [gguf.bytes_to_unicode(bytes([b])) for b in range(256)]

    def with_added(added, kind):
        tokens = base + ["ab"] + added
        types = [1] * 257 + [kind] * len(added)
        # a pre type whose decoding llama.cpp does not clean: a tokenizer.json can hold it
        return small_gguf(tokenizer__ggml__tokens=(gguf.T_ARRAY, tokens, gguf.T_STRING),
                          tokenizer__ggml__token_type=(gguf.T_ARRAY, types, gguf.T_INT32),
                          tokenizer__ggml__pre=(gguf.T_STRING, "qwen2", None))

    with pytest.raises(FormatError, match=r"'<x>' and '>y>' overlap .* same length"):
        Tokenizer.load(write(tmp_path, with_added(["<x>", ">y>"], gguf.TOKEN_CONTROL)))
    tok = Tokenizer.load(write(tmp_path, with_added(["<x>", ">yy>"], gguf.TOKEN_CONTROL)))
    assert tok.spec.description["special_cut"] == "llama.cpp"
    # the longer token first, though the shorter one starts further left
    assert tok.encode("<x>yy>", add_special_tokens=False) == tok.encode_ordinary("<x") + [tok.token_to_id(">yy>")]
    with pytest.raises(FormatError, match="llama.cpp cuts its special tokens"):
        tok.save(str(tmp_path / "tokenizer.json"), format="hf")
    assert not os.path.exists(tmp_path / "tokenizer.json")
    plain = Tokenizer.load(write(tmp_path, with_added(["<x>", "<y>"], gguf.TOKEN_CONTROL)))
    assert "special_cut" not in plain.spec.description
    plain.save(str(tmp_path / "tokenizer.json"), format="hf")


@pytest.mark.parametrize("name,lost", [("llama-bpe", "clean_spaces"), ("llama-spm", "leading space.*U\\+FFFD"),
                                       ("deepseek-coder", "added token 'õ'"), ("qwen2", None), ("qwen35", None),
                                       ("command-r", None)])
def test_written_elsewhere_only_with_llama_cpp_decoding(gguf_tokenizer, tmp_path, name, lost):
    """A GGUF tokenizer that llama.cpp decodes otherwise than Hugging Face (clean_spaces, the first space
    dropped, byte tokens, an added token's text read as byte characters) is refused by every format that would
    keep its ids but not its decoding; the native format keeps both. The others are written as a tokenizer.json
    that Hugging Face reads with bytepair's ids and decoding."""
    import tokenizers
    from hostile_text import hostile_texts
    tok = gguf_tokenizer(name)
    specials = sorted(tok.special_tokens)[:30]
    texts = hostile_texts(3, 100, specials) + ["Hello , it ' s me . Why ?", " leading space", "a  b\n\n c"]
    out = tmp_path / "tokenizer.json"
    native = tmp_path / "native.json"
    tok.save(str(native))
    back = Tokenizer.load(str(native))
    assert back.chat_template == tok.chat_template
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False)
        assert back.encode(text, add_special_tokens=False) == ids and back.decode(ids) == tok.decode(ids), text
    if lost is not None:
        for fmt in ("hf", "tiktoken", "sentencepiece"):
            with pytest.raises(FormatError, match=f"cannot hold llama.cpp's decoding .*{lost}"):
                tok.save(str(out), format=fmt)
        with pytest.raises(FormatError, match=f"cannot hold llama.cpp's decoding .*{lost}"):
            tok.save_pretrained(str(tmp_path / "folder"))
        assert not out.exists() and not (tmp_path / "folder").exists()
        return
    tok.save(str(out), format="hf")
    theirs = tokenizers.Tokenizer.from_file(str(out))
    for text in texts:
        ids = tok.encode(text, add_special_tokens=False)  # special-token text parsed, as Hugging Face always does
        assert theirs.encode(text, add_special_tokens=False).ids == ids, text
        assert theirs.decode(ids, skip_special_tokens=False) == tok.decode(ids), text


def test_native_file_checks_the_gguf_fields(tmp_path):
    """A native file of a GGUF tokenizer keeps its chat template and llama.cpp's decoding; wrong ones are named."""
    tok = Tokenizer.load(write(tmp_path, small_gguf(tokenizer__chat_template=(gguf.T_STRING, "{{x}}", None))))
    d = tok.to_dict()
    assert d["chat_template"] == "{{x}}" and d["llama_decode"] == [False, True]
    for key, bad, why in [("chat_template", 3, "must be a string"), ("llama_decode", [], "2 or 3 booleans"),
                          ("llama_decode", [1, 0], "2 or 3 booleans"), ("llama_decode", "yes", "2 or 3 booleans")]:
        path = tmp_path / "bad.json"
        path.write_text(json.dumps({**d, key: bad}))
        with pytest.raises(FormatError, match=f"bad.json.*{key}.*{why}"):
            Tokenizer.load(str(path))


def test_llama_cpp_routines_run_as_llama_split_stages(tmp_path):
    """The pre types llama.cpp splits with hand-written routines run as bytepair-only LlamaSplit stages (their
    ids against llama.cpp: tests/test_gguf_llama_cpp.py): such a tokenizer is not written as a tokenizer.json,
    long runs stay linear, and a malformed stage is an error naming it, never a crash."""
    from bytepair.pipeline import from_hf_json
    stages = {"afmoe": ["afmoe-digits"], "tiny_aya": ["afmoe-digits"], "cohere2moe": ["afmoe-digits"],
              "kimi-k2": ["kimi-k2"], "superbpe": ["superbpe-digits"], "jais-2": ["jais2"]}
    for pre, routines in stages.items():
        tok = Tokenizer.load(write(tmp_path, small_gguf(tokenizer__ggml__pre=(gguf.T_STRING, pre, None))))
        steps = tok.spec.description["pre_tokenizer"]["pretokenizers"]
        assert [s["routine"] for s in steps if s["type"] == "LlamaSplit"] == routines, pre
        with pytest.raises(FormatError, match="LlamaSplit"):
            hf.dumps(tok)  # the tokenizer.json writer (jais-2's decoding is also refused before it, by save)
        with pytest.raises(FormatError):
            tok.save(str(tmp_path / "tokenizer.json"), format="hf")
        assert not os.path.exists(tmp_path / "tokenizer.json")
        for text in ("7" * 100_000, "a" * 100_000, "日" * 100_000, " " * 100_000 + "x", "'s" * 50_000):
            assert tok.decode(tok.encode_ordinary(text)) == text, pre
    desc = {"model": {"type": "BPE", "vocab": {"a": 0, "1": 1}, "merges": []},
            "pre_tokenizer": {"type": "LlamaSplit", "routine": "afmoe-digits", "classes": {"number": "[0-9]"}}}
    assert from_hf_json(json.dumps(desc)).encode("a11") == [0, 1, 1]
    for routine, classes, why in [("nope", {}, "routine"), ("afmoe-digits", {}, "needs the class"),
                                  ("afmoe-digits", {"number": "["}, "not a regex class"),
                                  ("afmoe-digits", {"number": "ab"}, "not a character class"),
                                  ("afmoe-digits", {"number": "[0-9]", "han": "[0-9]"}, "reads no class"),
                                  ("afmoe-digits", {"number": 3}, "expected a string")]:
        desc["pre_tokenizer"] = {"type": "LlamaSplit", "routine": routine, "classes": classes}
        with pytest.raises(ValueError, match=why):
            from_hf_json(json.dumps(desc))


def test_llama_cpp_retypes_control_looking_tokens():
    meta = gguf.Metadata("m.gguf", {}, {}, {})
    tokens = ["a", "<|im_end|>", "<|fim_prefix|>", "<|channel|>", "b"]
    assert gguf.llama_cpp_types(meta, tokens, [1, 1, 4, 3, 1], {}) == [1, 3, 3, 4, 1]
    with pytest.raises(FormatError, match="fim_pre"):
        gguf.llama_cpp_types(meta, tokens + ["<PRE>"], [1] * 6, {})


def test_byte_level_token_types_llama_cpp_decodes_its_own_way_refused(tmp_path):
    types = [1] * 256 + [5]  # "ab" unused: llama.cpp's decode gives it no text
    with pytest.raises(FormatError, match=r"token 256 'ab' has token type 5"):
        Tokenizer.load(write(tmp_path, small_gguf(tokenizer__ggml__token_type=(gguf.T_ARRAY, types, gguf.T_INT32))))
