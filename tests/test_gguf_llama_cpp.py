"""GGUF tokenizers against llama.cpp itself (its C API through ctypes, on the llama.cpp of xllamacpp's
prebuilt wheel: tests/llama_cpp_ref.py): every BPE-family ggml-vocab file bytepair loads gives llama.cpp's ids on 500 (2,000 in CI) of
generated hostile texts, with and without parsing special tokens, with BOS on every fifth, and llama.cpp's decoding; the
files and pre-tokenizer types bytepair cannot run exactly are refused by name; a GGUF written by bytepair loads
in llama.cpp with bytepair's ids."""

import os
import random

import pytest

from hostile_text import hostile_texts
from llama_cpp_ref import LlamaVocab

from bytepair import Tokenizer
from bytepair.errors import EncodeError, FormatError
from bytepair.formats import gguf
from bytepair.spec import build_core

# every byte-level (gpt2) and SentencePiece (llama) file of llama.cpp's test set
EXACT = ["llama-bpe", "llama-spm", "qwen2", "qwen35", "deepseek-llm", "deepseek-coder", "gpt-2", "mpt", "starcoder",
         "refact", "command-r", "aquila", "baichuan", "gpt-neox", "falcon", "phi-3", "gemma-4"]
# generated texts per file: 500 in a developer run, 2000 in CI (.ci/run), as BYTEPAIR_EXAMPLES sets the
# property tests' cases (llama.cpp's calls are the file's largest cost)
TEXTS = int(os.environ.get("BYTEPAIR_GGUF_TEXTS", "500"))
# BOS (and EOS) are added around the text's ids, whatever the text: every BOS_EVERY-th text is also encoded with
# them, by both, which spares a third of llama.cpp's calls
BOS_EVERY = 5
# per pre type (87 of them; 100 in a developer run, 200 in CI): a wrong regex changes the ids of about a third
# of them
PRE_TYPE_TEXTS = max(100, TEXTS // 10)


def assert_ids_and_decoding_equal(tok, ref, texts, bos_with_specials):
    """bytepair's ids equal llama.cpp's on every text, without parsing special tokens (and with BOS on every
    BOS_EVERY-th text) and parsing them (BOS as ``bos_with_specials``), and the parsed ids decode as llama.cpp
    decodes them."""
    for k, text in enumerate(texts):
        for bos in (False, True) if k % BOS_EVERY == 0 else (False,):
            assert tok.encode_ordinary(text, add_special_tokens=bos) == ref.tokenize(text, bos, False), (text, bos)
        ids = tok.encode(text, add_special_tokens=bos_with_specials)
        assert ids == ref.tokenize(text, bos_with_specials, True), text
        assert tok.decode_bytes(ids) == ref.detokenize(ids, False, True), text


def texts_for(tok, seed):
    """Hostile texts with the file's special and user-defined tokens mixed in, plus short prose (one in five):
    TEXTS in all."""
    specials = sorted(tok.added_tokens)[:40]
    rng = random.Random(seed)
    words = ["Hello", " world", "'s", " 123456", "\n\n", "  ", "日本語", " café", "\t", "ſ", "İ", "🦙", " ' ", " ,",
             " 're", " ?"]
    prose = ["".join(rng.choice(words) for _ in range(rng.randrange(1, 12))) for _ in range(TEXTS // 5)]
    return hostile_texts(seed, TEXTS - len(prose), specials) + prose


@pytest.mark.parametrize("name", EXACT)
def test_ids_and_decoding_equal_llama_cpp(gguf_paths, gguf_tokenizer, name):
    path = gguf_paths[f"ggml-vocab-{name}.gguf"]
    tok = gguf_tokenizer(name)
    ref = LlamaVocab(path)
    texts = texts_for(tok, sum(map(ord, name)))
    assert len(texts) >= TEXTS
    plain = tok.encode_ordinary_batch(texts)
    plain_bos = tok.encode_ordinary_batch(texts, add_special_tokens=True)
    parsed = tok.encode_batch(texts, add_special_tokens=False)
    parsed_bos = tok.encode_batch(texts, add_special_tokens=True)
    for k, text in enumerate(texts):
        assert plain[k] == ref.tokenize(text, False, False), (k, text)
        assert parsed[k] == ref.tokenize(text, False, True), (k, text)
        ids = parsed[k]
        if k % BOS_EVERY == 0:
            assert plain_bos[k] == ref.tokenize(text, True, False), (k, text)
            assert parsed_bos[k] == ref.tokenize(text, True, True), (k, text)
            ids = parsed_bos[k]
        assert tok.decode_bytes(ids, skip_special_tokens=True) == ref.detokenize(ids, False, False), (k, text)
        decoded = ref.detokenize(ids, False, True)  # one llama.cpp call for both comparisons
        assert tok.decode_bytes(ids) == decoded, (k, text)
        assert tok.decode(ids) == decoded.decode("utf-8", "replace"), (k, text)


def test_special_tokens_cut_as_llama_cpp(gguf_paths, gguf_tokenizer):
    """Falcon's special tokens overlap ('>>TITLE<<' ends with what '<|endoftext|>' starts with): llama.cpp
    cuts the longer one first, Hugging Face the leftmost. Phi-3's special tokens take the ASCII whitespace
    after them (llama.cpp's load() gives them RSTRIP by the model's name), but not <s>, <unk> and
    <|endoftext|>. Both are cut as llama.cpp cuts them."""
    falcon, ref = gguf_tokenizer("falcon"), LlamaVocab(gguf_paths["ggml-vocab-falcon.gguf"])
    for text in ["x>>TITLE<<|endoftext|>y", ">>TITLE<<|endoftext|>>TITLE<<", "<|endoftext|>>TITLE<<"]:
        assert falcon.encode(text, add_special_tokens=False) == ref.tokenize(text, False, True), text
    phi, ref = gguf_tokenizer("phi-3"), LlamaVocab(gguf_paths["ggml-vocab-phi-3.gguf"])
    for text in ["<|user|>  \n\t hi<|end|>\n<|assistant|>", "a <s>  b <|endoftext|>\n c", "<|end|>\u3000\u00a0x",
                 "<|end|> \x0b\x0c\r", "  <|user|>"]:
        for bos in (False, True):
            assert phi.encode(text, add_special_tokens=bos) == ref.tokenize(text, bos, True), text
        assert phi.encode_ordinary(text) == ref.tokenize(text, False, False), text


def _gguf_with_specials(tokens, types, merges, name="bytepair", pre="gpt-2", arch="gpt2"):
    return gguf.gguf_bytes([
        ("general.architecture", gguf.T_STRING, arch, None), ("general.name", gguf.T_STRING, name, None),
        ("tokenizer.ggml.model", gguf.T_STRING, "gpt2", None), ("tokenizer.ggml.pre", gguf.T_STRING, pre, None),
        ("tokenizer.ggml.tokens", gguf.T_ARRAY, tokens, gguf.T_STRING),
        ("tokenizer.ggml.token_type", gguf.T_ARRAY, types, gguf.T_INT32),
        ("tokenizer.ggml.merges", gguf.T_ARRAY, merges, gguf.T_STRING),
        ("tokenizer.ggml.add_bos_token", gguf.T_BOOL, False, None)])


def test_generated_special_tokens_cut_as_llama_cpp(tmp_path):
    """Random sets of special tokens over a small alphabet (so that they overlap, nest and repeat), of every
    llama.cpp type that is cut out of text, in files named as Phi-3 (their whitespace stripped) or not, on
    random texts of the same alphabet: bytepair's ids are llama.cpp's, with and without parsing special
    tokens; a set where two overlapping tokens have one length is refused, and llama.cpp loads it."""
    rng = random.Random(11)
    base = [gguf.bytes_to_unicode(bytes([b])) for b in range(256)]
    alphabet = "ab<> \n\tx"
    refused = compared = 0
    for case in range(60):
        specials = set()
        while len(specials) < rng.randrange(1, 7):
            special = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 6)))
            if special not in base and special not in ("ab", "ba"):  # a text that is two tokens: llama.cpp refuses
                specials.add(special)
        specials = sorted(specials)
        kinds = [rng.choice([gguf.TOKEN_CONTROL, gguf.TOKEN_USER_DEFINED]) for _ in specials]
        name = rng.choice(["Phi-3-mini", "bytepair"])
        if name.startswith("Phi"):  # llama.cpp's load() looks these up by text in a model of that name
            specials += ["</s>", "<unk>", "<s>", "<|endoftext|>"]
            kinds += [gguf.TOKEN_CONTROL] * 4
        tokens = base + [gguf.bytes_to_unicode(s.encode()) for s in ("ab", "ba")] + specials
        types = [1] * 258 + kinds
        merges = [f"{gguf.bytes_to_unicode(b'a')} {gguf.bytes_to_unicode(b'b')}",
                  f"{gguf.bytes_to_unicode(b'b')} {gguf.bytes_to_unicode(b'a')}"]
        path = str(tmp_path / f"case{case}.gguf")
        with open(path, "wb") as f:
            f.write(_gguf_with_specials(tokens, types, merges, name=name))
        ref = LlamaVocab(path)
        try:
            tok = Tokenizer.load(path)
        except FormatError as e:
            assert "have the same length" in str(e), (specials, e)
            refused += 1
            continue
        compared += 1
        for _ in range(60):
            text = "".join(rng.choice(alphabet + "é" + "s") for _ in range(rng.randrange(0, 24)))
            assert tok.encode(text, add_special_tokens=False) == ref.tokenize(text, False, True), (specials, text)
            assert tok.encode_ordinary(text) == ref.tokenize(text, False, False), (specials, text)
    assert compared > 40 and refused > 0, (compared, refused)


def test_phi3_named_file_without_its_tokens_refused_as_llama_cpp_fails(tmp_path):
    base = [gguf.bytes_to_unicode(bytes([b])) for b in range(256)]
    path = str(tmp_path / "phi.gguf")
    with open(path, "wb") as f:
        f.write(_gguf_with_specials(base + ["<|end|>", "<s>"], [1] * 256 + [3, 3], [], name="Phi-3-mini"))
    with pytest.raises(FormatError, match="without the token '</s>'"):
        Tokenizer.load(path)
    with pytest.raises(RuntimeError, match="cannot load"):
        LlamaVocab(path)


@pytest.fixture(scope="module")
def boundary_vocab():
    """A byte-level vocabulary whose merges cross every kind of boundary a pre-tokenizer draws (trained on
    hostile text cut into 1-5 character chunks regardless of classes), with special tokens of the kinds
    llama.cpp's load() gives strip attributes to: two pre-tokenizers that split a text differently give
    different ids from it."""
    rng = random.Random(3)
    words = ["Hello", " world", "'s", " 123456", "\n\n", "  ", "日本語", " café", "\t", "ſ", "İ", "🦙", " ' ", " ,",
             " 're", " ?", "don't", "I'M", "1234567", "\r\n"]
    corpus = hostile_texts(3, 600) + ["".join(rng.choice(words) for _ in range(rng.randrange(1, 12)))
                                      for _ in range(400)]
    trained = Tokenizer.train("\n".join(corpus), num_merges=3000, pattern=r"(?s).{1,5}")
    core = build_core(trained.spec)
    tokens = [gguf.bytes_to_unicode(core.token_bytes(i)) for i in range(int(core.n_vocab))]
    merges = [f"{tokens[l]} {tokens[r]}" for l, r, _ in sorted(core.merge_triples(), key=lambda t: t[2])]
    specials = ["<mask>", "<s>", "</s>", "<|endoftext|>", "<unk>", "[MASK]"]
    return tokens + specials, [1] * len(tokens) + [3] * len(specials), merges, specials


# the edges of llama.cpp's hand-written routines: digit runs of mixed scripts (grouped by threes from the right, the
# text before glued to the first group, which a later CJK/Thai range regex then splits), Han next to letters and
# kana, leading characters and marks, contractions in any case, whitespace runs with \r\n; letters with marks
PRE_TYPE_EDGES = [
    "ab1234567cd 12 123 1234 ๑๒๓๔๕ ก๑๒๓๔ข ١٢٣٤٥٦٧ 12٣4567 ໑໒໓໔ ១២៣៤៥ ¹²³⁴ ①②③④",
    "日本語abc世界DEF's 你好don't I'M 𠀀𠀁x 豈更 中文123中文 漢字かなカナ한국어",
    "x\r\n\r\n y 'll 've 're 'S 'T ' s\u3000\u00a0z  \t\n",
    "9" * 50 + "a" + "1" * 31 + " " + "٣" * 7 + "12",
    "!abc ¡Hola \u0301a café e\u0301 ...世 .世界 'sa 'LL x'Ve'd",
    "a1b22c333d4444 e55555 ก๑ก๑๒ ๑๒๓ก", "  \r\n  \n\r x\u2028y\u0085z", "ſ'S İ'Ll Σ'RE", "Y\u0301'S ÀB\u0301c'LL",
    # a letter of a newer Unicode than llama.cpp's tables (Egyptian hieroglyphs of Unicode 16): not a letter there
    "\U000138ae'll x\U00013460Y\u0301'S",
    "한국어，你好！…“引用”ㄅㄆ ㄱㄴ한글abc\u3000〔x〕︰﹏—‘a’ 〇々",
    # whitespace runs of every length around jais-2's ladder (512, 256, ... 4, 2, 1), ending the text or not
    " " * 600 + "x" + "\t" * 17 + "y" + " " * 5 + "\u3000" * 3 + "z" + " " * 3 + "!" + " " * 4 + "\n " * 2 + " " * 9,
    "a" + " " * 257 + "b" + " " * 64 + "\u00a0" + " " * 31 + "c  'd " + " " * 2]


@pytest.mark.parametrize("pre", sorted(gguf.PRE_TYPES))
def test_every_pre_type_equals_llama_cpp(tmp_path, boundary_vocab, pre):
    """Every pre type bytepair loads, on a vocabulary where a different split shows (the regex list, its
    ignore_merges and add_bos flags, the strips by pre-type name, the decoding's clean_spaces): llama.cpp's
    ids and decoding on hostile text with special tokens in it."""
    tokens, types, merges, specials = boundary_vocab
    path = str(tmp_path / f"{pre}.gguf")
    with open(path, "wb") as f:
        f.write(gguf.gguf_bytes([
            ("general.architecture", gguf.T_STRING, "gpt2", None), ("general.name", gguf.T_STRING, "t", None),
            ("tokenizer.ggml.model", gguf.T_STRING, "gpt2", None), ("tokenizer.ggml.pre", gguf.T_STRING, pre, None),
            ("tokenizer.ggml.tokens", gguf.T_ARRAY, tokens, gguf.T_STRING),
            ("tokenizer.ggml.token_type", gguf.T_ARRAY, types, gguf.T_INT32),
            ("tokenizer.ggml.merges", gguf.T_ARRAY, merges, gguf.T_STRING)]))
    tok, ref = Tokenizer.load(path), LlamaVocab(path)
    texts = hostile_texts(sum(map(ord, pre)), PRE_TYPE_TEXTS, specials) + ["Hello world 123456 don't \n\n日本語",
                                                                         "a <mask>  b\t<mask>", "x\r\n\r\n y"]
    texts += PRE_TYPE_EDGES
    assert_ids_and_decoding_equal(tok, ref, texts, bos_with_specials=False)


def test_sentencepiece_gguf_without_space_prefix_equals_llama_cpp(gguf_paths, tmp_path):
    """llama.cpp's SentencePiece vocabulary (llama-spm) written again with tokenizer.ggml.add_space_prefix
    false (no test file has it): no space put before each stretch of text, none dropped when decoding."""
    meta = gguf.read_metadata(gguf_paths["ggml-vocab-llama-spm.gguf"])
    assert meta.values.get("tokenizer.ggml.add_space_prefix") is not False
    items = [(k, meta.types[k][0], v, meta.types[k][1]) for k, v in meta.values.items()
             if k != "tokenizer.ggml.add_space_prefix"]
    path = str(tmp_path / "spm-no-prefix.gguf")
    with open(path, "wb") as f:
        f.write(gguf.gguf_bytes(items + [("tokenizer.ggml.add_space_prefix", gguf.T_BOOL, False, None)]))
    tok, ref = Tokenizer.load(path), LlamaVocab(path)
    prefixed = Tokenizer.load(gguf_paths["ggml-vocab-llama-spm.gguf"])
    assert tok.encode_ordinary("Hello") != prefixed.encode_ordinary("Hello")
    for text in hostile_texts(5, 500, sorted(tok.added_tokens)[:20]) + ["Hello world", " Hello", "<s> x"]:
        for bos in (False, True):
            assert tok.encode_ordinary(text, add_special_tokens=bos) == ref.tokenize(text, bos, False), text
            assert tok.encode(text, add_special_tokens=bos) == ref.tokenize(text, bos, True), text
        ids = ref.tokenize(text, True, True)
        assert tok.decode_bytes(ids) == ref.detokenize(ids, False, True), text
        assert tok.decode_bytes(ids, skip_special_tokens=True) == ref.detokenize(ids, False, False), text


def _aborts_llama_cpp(text, specials):
    """Whether llama.cpp's BPE session aborts on ``text`` with the ``whitespace`` pre type: a run of whitespace
    (its table, and the ASCII controls std::wregex's ``\\s`` takes) of two or more characters with a space in it,
    in the text between special tokens."""
    from bytepair.formats.llama_unicode import WHITESPACE
    space = set(WHITESPACE) | {9, 10, 11, 12, 13, 32}
    for special in sorted(specials, key=len, reverse=True):
        text = text.replace(special, "\0")  # NUL is not whitespace: it ends a run as a special token does
    run = []
    for c in text + "\0":
        if ord(c) in space:
            run.append(c)
            continue
        if len(run) > 1 and " " in run:
            return True
        run = []
    return False


def _gemma4_part(meta, first):
    """Gemma 4's vocabulary cut to its ``first`` tokens and every token that is not a plain one (control, user
    defined, the byte tokens) or is whitespace alone (its runs of newlines, tabs and spaces up to 31), numbered
    anew in that order, with the merges among the tokens kept, in their order: what the pre types act on, at a
    tenth of the load (llama.cpp took 2-7 s to load the whole vocabulary, bytepair 1.4 s)."""
    tokens, types = meta.values["tokenizer.ggml.tokens"], meta.values["tokenizer.ggml.token_type"]
    keep = [i for i, (token, kind) in enumerate(zip(tokens, types))
            if i < first or kind != 1 or (len(token) > 1 and not token.strip("\n\t\u2581 "))]
    kept = {tokens[i] for i in keep}
    merges = [m for m in meta.values["tokenizer.ggml.merges"]
              if (pair := m.split(" ", 1)) and pair[0] in kept and pair[1] in kept and pair[0] + pair[1] in kept]
    assert len(merges) > first // 2
    return {"tokenizer.ggml.tokens": [tokens[i] for i in keep], "tokenizer.ggml.token_type": [types[i] for i in keep],
            "tokenizer.ggml.scores": [meta.values["tokenizer.ggml.scores"][i] for i in keep],
            "tokenizer.ggml.merges": merges}


@pytest.mark.parametrize("pre", sorted(gguf.RAW_UTF8_PRE))
def test_raw_utf8_pre_types_equal_llama_cpp(gguf_paths, tmp_path, pre):
    """The pre types llama.cpp runs as a BPE session over raw UTF-8 in a gpt2-model file (Gemma 4's vocabulary,
    its first 20,000 tokens and the special and whitespace ones, written again as such): llama.cpp's ids (BOS
    forced or not, newline runs whole or not) and decoding (clean_spaces or not). With ``whitespace``, llama.cpp
    aborts on a text with a space next to other whitespace: bytepair raises there, and those texts are not given
    to llama.cpp."""
    meta = gguf.read_metadata(gguf_paths["ggml-vocab-gemma-4.gguf"])
    changed = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre, "tokenizer.ggml.add_bos_token": False,
               "general.architecture": "gpt2", **_gemma4_part(meta, 20000)}
    types = {**meta.types, "tokenizer.ggml.pre": (gguf.T_STRING, None)}
    items = [(k, types[k][0], changed.get(k, v), types[k][1]) for k, v in {**meta.values, **changed}.items()]
    path = str(tmp_path / f"{pre}.gguf")
    with open(path, "wb") as f:
        f.write(gguf.gguf_bytes(items))
    tok, ref = Tokenizer.load(path), LlamaVocab(path)
    texts = hostile_texts(sum(map(ord, pre)), 400, sorted(tok.added_tokens)[:20]) + ["a\n\n\n b", "\n" * 40]
    if pre == "whitespace":
        specials = set(tok.added_tokens)
        aborting = [t for t in texts if _aborts_llama_cpp(t, specials)]
        texts = [t for t in texts if not _aborts_llama_cpp(t, specials)]
        texts += ["日本語 テキスト\t中文\n", "a b\tc\n\nd", "x\u3000y"] + ["".join(t.split()) for t in aborting[:200]]
        assert len(aborting) > 20 and len(texts) > 200
        for text in aborting:
            with pytest.raises(EncodeError, match="aborts"):
                tok.encode(text, add_special_tokens=False)
    assert_ids_and_decoding_equal(tok, ref, texts, bos_with_specials=True)


def test_written_gguf_loads_in_llama_cpp(tmp_path):
    corpus = " ".join(hostile_texts(5, 300)) + " hello world, it's 2024!\n" * 50
    tok = Tokenizer.train(corpus, num_merges=400, pattern="gpt2", special_tokens=["<|endoftext|>"])
    path = str(tmp_path / "trained.gguf")
    tok.save(path, format="gguf")
    ref = LlamaVocab(path)
    loaded = Tokenizer.load(path)
    for text in hostile_texts(6, 2000, ["<|endoftext|>"]):
        assert ref.tokenize(text, False, True) == tok.encode(text, allowed_special="all"), text
        assert ref.tokenize(text, False, False) == tok.encode_ordinary(text), text
        assert loaded.encode(text, add_special_tokens=False) == ref.tokenize(text, False, True), text
