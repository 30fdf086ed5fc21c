"""One special-token policy for every tokenizer (docs/decisions.md, "One
special-token policy"), against each file kind's owner: tiktoken on
``.tiktoken`` files, Hugging Face ``tokenizers`` on ``tokenizer.json``
(a pipeline, and a file on the byte model's route), mistral_common on
``tekken.json``. A call in tiktoken's style (``allowed_special`` /
``disallowed_special``, or neither) follows tiktoken's rules; a call with
``add_special_tokens`` alone is Hugging Face's (the owner's) call; decoding
keeps special tokens unless ``skip_special_tokens=True``."""

from __future__ import annotations

import functools
import io
import os

import pytest
import tokenizers
from mistral_common.tokens.tokenizers.tekken import SpecialTokenPolicy, Tekkenizer
from peer_files import TEKKEN, hf_gpt2_json, tiktoken_encoding

from bytepair import BytepairError, DisallowedSpecialError, Tokenizer
from bytepair.cli import main

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = open(os.path.join(HERE, "data", "multilingual.txt"), encoding="utf-8").read().splitlines()[:40]


@pytest.fixture(scope="module")
def cl100k(vocab_paths):
    path = vocab_paths["cl100k_base.tiktoken"]
    return Tokenizer.load(path), tiktoken_encoding("cl100k_base", path)


@pytest.fixture(scope="module")
def llama3(published_tokenizers):
    path = published_tokenizers["llama3"]
    return Tokenizer.load(path), tokenizers.Tokenizer.from_file(path), path


@pytest.fixture(scope="module")
def byte_route(vocab_paths, tmp_path_factory):
    """A tokenizer.json that Hugging Face writes for GPT-2's files (no post-processor): bytepair runs it
    on its byte model."""
    path = str(tmp_path_factory.mktemp("byte-route") / "tokenizer.json")
    hf = hf_gpt2_json(vocab_paths["gpt2/vocab.json"], vocab_paths["gpt2/merges.txt"], path)
    tok = Tokenizer.load(path)
    assert tok.model == "byte"
    return tok, hf


@pytest.fixture(scope="module")
def general_pipeline(published_tokenizers):
    """Mistral's SentencePiece model in the Llama 2 tokenizer.json layout: it runs on the general
    pipeline engine (not the byte model's core), whose batches are checked text by text."""
    path = published_tokenizers["mistral-v1-legacy"]
    tok = Tokenizer.load(path)
    assert tok.model == "pipeline" and tok._byte_spec is None
    return tok, tokenizers.Tokenizer.from_file(path)


@functools.lru_cache(maxsize=None)
def tekken(i: int):
    return Tokenizer.load(TEKKEN[i]), Tekkenizer.from_file(TEKKEN[i])


SPECIAL_TEXT = ["hello <|endoftext|> world", "<|begin_of_text|>hi", "[INST] hi [/INST]</s>", "<s>a</s>"]


# ---------------------------------------------------------------- the same call on every kind of file


def test_a_bare_call_raises_on_special_text_for_every_file(cl100k, llama3, byte_route):
    """tiktoken's defaults, whatever the file: the same call no longer raises on one file and passes on
    another."""
    tok, enc = cl100k
    with pytest.raises(ValueError):
        enc.encode("hello <|endoftext|>")  # tiktoken's own default
    for bp, text in [(tok, "hello <|endoftext|>"), (byte_route[0], "hello <|endoftext|>"),
                     (llama3[0], "<|begin_of_text|>hi")]:
        for call in (bp.encode, bp.encode_batch, bp.encode_to_numpy, bp.encode_with_offsets):
            with pytest.raises(DisallowedSpecialError, match="disallowed special token"):
                call([text] if call == bp.encode_batch else text)


def test_tiktoken_style_equals_tiktoken(cl100k):
    tok, enc = cl100k
    for text in LINES + SPECIAL_TEXT:
        for kw in [dict(allowed_special="all"), dict(disallowed_special=()), dict(allowed_special={"<|endoftext|>"}),
                   dict(allowed_special="all", disallowed_special=())]:
            assert tok.encode(text, **kw) == enc.encode(text, **kw), (text, kw)
        assert tok.encode_batch([text, text[:5]], disallowed_special=()) == enc.encode_batch([text, text[:5]],
                                                                                            disallowed_special=())


def test_hf_style_on_a_tiktoken_file_matches_and_adds_nothing(cl100k):
    """tiktoken files have no BOS/EOS: add_special_tokens=True adds nothing; special-token text is
    matched, as Hugging Face matches the added tokens of such a file."""
    tok, enc = cl100k
    for text in LINES[:10] + SPECIAL_TEXT:
        want = enc.encode(text, allowed_special="all")
        for add in (False, True):
            assert tok.encode(text, add_special_tokens=add) == want
            assert tok.encode_batch([text], add_special_tokens=add) == [want]
            assert tok.encode_to_numpy(text, add_special_tokens=add).tolist() == want
            assert tok.encode_with_offsets(text, add_special_tokens=add)[0] == want


@pytest.mark.parametrize("kind", ["pipeline", "byte route"])
def test_hf_style_equals_hf_on_tokenizer_json(llama3, byte_route, kind):
    tok, hf = (llama3[0], llama3[1]) if kind == "pipeline" else byte_route
    for text in LINES[:20] + SPECIAL_TEXT:
        for add in (False, True):
            want = hf.encode(text, add_special_tokens=add)
            assert tok.encode(text, add_special_tokens=add) == want.ids, (text, add)
            assert tok.encode_batch([text, text], add_special_tokens=add) == [want.ids, want.ids]
            assert tok.encode_with_offsets(text, add_special_tokens=add) == (want.ids, want.offsets)
            assert tok.encode_to_numpy(text, add_special_tokens=add).tolist() == want.ids
            ids, offsets = tok.encode_batch_to_numpy([text], add_special_tokens=add)
            assert ids.tolist() == want.ids and offsets.tolist() == [0, len(want.ids)]


@pytest.mark.parametrize("kind", ["pipeline", "byte route"])
def test_tiktoken_style_on_tokenizer_json(llama3, byte_route, kind):
    """allowed_special="all" is HF's matching; disallowed_special=() encodes special-token text as text,
    which is HF's ``encode_special_tokens=True``."""
    tok, hf = (llama3[0], llama3[1]) if kind == "pipeline" else byte_route
    as_text = tokenizers.Tokenizer.from_str(hf.to_str())
    as_text.encode_special_tokens = True
    for text in LINES[:10] + SPECIAL_TEXT:
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
        assert tok.encode(text, disallowed_special=()) == as_text.encode(text, add_special_tokens=False).ids
        assert tok.encode_ordinary(text) == as_text.encode(text, add_special_tokens=False).ids
        with_bos = as_text.encode(text, add_special_tokens=True).ids
        assert tok.encode(text, disallowed_special=(), add_special_tokens=True) == with_bos
        assert tok.encode_ordinary(text, add_special_tokens=True) == with_bos


@pytest.mark.parametrize("i", [0, 1])
def test_tekken_adds_bos_as_mistral_common(i):
    tok, mt = tekken(i)
    for text in LINES[:20] + SPECIAL_TEXT:
        plain, with_bos = mt.encode(text, bos=False, eos=False), mt.encode(text, bos=True, eos=False)
        # Hugging Face's style: mistral_common never matches special-token text
        assert tok.encode(text, add_special_tokens=True) == with_bos, text
        assert tok.encode(text, add_special_tokens=False) == plain, text
        assert tok.encode_batch([text], add_special_tokens=True) == [with_bos]
        assert tok.encode_to_numpy(text, add_special_tokens=True).tolist() == with_bos
        ids, offsets = tok.encode_batch_to_numpy([text, text], add_special_tokens=True)
        assert ids.tolist() == with_bos * 2 and offsets.tolist() == [0, len(with_bos), 2 * len(with_bos)]
        assert tok.encode_with_offsets(text, add_special_tokens=True)[0] == with_bos
        assert tok.encode_ordinary(text, add_special_tokens=True) == with_bos
        assert [i for ids in tok.encode_stream([text[:3], text[3:]], add_special_tokens=True) for i in ids] == with_bos
        # tiktoken's style with BOS
        assert tok.encode(text, disallowed_special=(), add_special_tokens=True) == with_bos


def test_tekken_bos_survives_the_native_file(tmp_path):
    tok, mt = tekken(1)
    path = str(tmp_path / "tekken-native.json")
    tok.save(path)
    again = Tokenizer.load(path)
    assert again.encode("[INST] hi", add_special_tokens=True) == mt.encode("[INST] hi", bos=True, eos=False)
    # and mistral_common's decoding of the ids between skipped special tokens apart (a character split by one)
    ids = [mt.num_special_tokens + 0xD0, mt.eos_id, mt.num_special_tokens + 0xA0]
    assert again.decode(ids, skip_special_tokens=True) == mt.decode(ids, special_token_policy=SpecialTokenPolicy.IGNORE)


def test_tekken_bos_survives_the_hf_export(tmp_path):
    """Written as a tokenizer.json, the BOS is a template post-processor: Hugging Face's default call
    then gives mistral_common's ids with BOS (on text without special-token text, which HF matches)."""
    tok, mt = tekken(1)
    path = str(tmp_path / "tokenizer.json")
    tok.save(path, format="hf")
    hf = tokenizers.Tokenizer.from_file(path)
    for text in LINES[:10]:
        assert hf.encode(text).ids == mt.encode(text, bos=True, eos=False)
        assert hf.encode(text, add_special_tokens=False).ids == mt.encode(text, bos=False, eos=False)


def test_a_native_file_naming_an_unknown_bos_is_refused(tmp_path):
    import json
    from bytepair.errors import FormatError
    d = Tokenizer.train("ab ab", num_merges=1, special_tokens=["<s>"]).to_dict()
    d["prefix_tokens"] = ["<bos>"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(FormatError, match="prefix_tokens"):
        Tokenizer.load(str(path))


# ---------------------------------------------------------------- decoding


def test_decode_keeps_specials_unless_skipped_tiktoken(cl100k):
    tok, enc = cl100k
    ids = enc.encode("hi <|endoftext|> there<|fim_prefix|>", allowed_special="all")
    special = set(enc._special_tokens.values())
    assert tok.decode(ids) == enc.decode(ids)
    assert tok.decode(ids, skip_special_tokens=True) == enc.decode([i for i in ids if i not in special])
    assert tok.decode_bytes(ids, skip_special_tokens=True) == enc.decode_bytes([i for i in ids if i not in special])
    import numpy as np
    assert tok.decode(np.array(ids), skip_special_tokens=True) == enc.decode([i for i in ids if i not in special])
    assert tok.decode_batch([ids, ids[:2]]) == enc.decode_batch([ids, ids[:2]])


@pytest.mark.parametrize("kind", ["pipeline", "byte route"])
def test_decode_equals_hf(llama3, byte_route, kind):
    tok, hf = (llama3[0], llama3[1]) if kind == "pipeline" else byte_route
    for text in SPECIAL_TEXT + LINES[:5]:
        ids = hf.encode(text, add_special_tokens=True).ids
        for skip in (False, True):
            assert tok.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip_special_tokens=skip)
            assert tok.decode_batch([ids], skip_special_tokens=skip) == hf.decode_batch([ids], skip_special_tokens=skip)


@pytest.mark.parametrize("i", [0, 1])
def test_decode_equals_mistral_common(i):
    tok, mt = tekken(i)
    ids = [mt.bos_id] + mt.encode("hi there", False, False) + [3, mt.eos_id]
    assert tok.decode(ids) == mt.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)
    assert tok.decode(ids, skip_special_tokens=True) == mt.decode(ids, special_token_policy=SpecialTokenPolicy.IGNORE)


# ---------------------------------------------------------------- the command line


def run(argv):
    out = io.StringIO()
    assert main(argv, out=out) == 0
    return out.getvalue()


def test_cli_add_special_tokens_and_skip(llama3):
    tok, hf, path = llama3
    text = "hello world"
    want = hf.encode(text, add_special_tokens=True).ids
    assert run(["encode", "-t", path, "--add-special-tokens", text]).split() == [str(i) for i in want]
    assert run(["encode", "-t", path, text]).split() == [str(i) for i in hf.encode(text, add_special_tokens=False).ids]
    assert run(["encode", "-t", path, "--ordinary", "--add-special-tokens", text]).split() == [str(i) for i in want]
    ids = [str(i) for i in want]
    assert run(["decode", "-t", path, *ids]) == hf.decode(want, skip_special_tokens=False) + "\n"
    assert run(["decode", "-t", path, "--skip-special-tokens", *ids]) == hf.decode(want, skip_special_tokens=True) + "\n"


def test_cli_add_special_tokens_on_tekken(tmp_path):
    tok, mt = tekken(1)
    text = "[INST] hi"
    want = [str(i) for i in mt.encode(text, bos=True, eos=False)]
    assert run(["encode", "-t", TEKKEN[1], "--add-special-tokens", "--ordinary", text]).split() == want
    out = tmp_path / "ids.txt"
    run(["encode", "-t", TEKKEN[1], "--add-special-tokens", "--ordinary", "-o", str(out), text])
    assert out.read_text().split() == want


def test_cli_add_special_tokens_on_a_tiktoken_file(cl100k, vocab_paths):
    tok, enc = cl100k
    out = run(["encode", "-t", vocab_paths["cl100k_base.tiktoken"], "--add-special-tokens", "hello world"])
    assert out.split() == [str(i) for i in enc.encode("hello world")]


def test_batches_on_the_general_pipeline_follow_the_policy_text_by_text(general_pipeline):
    """A batch in each call style gives, text by text, Hugging Face's ids for that style (its
    ``encode_special_tokens=True`` for special-token text encoded as text), and raises as the first
    text that holds disallowed special-token text would."""
    tok, hf = general_pipeline
    as_text = tokenizers.Tokenizer.from_str(hf.to_str())
    as_text.encode_special_tokens = True
    texts = LINES[:10] + ["hi <s> there", "</s>", "plain", "a <unk> b"]
    matched = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    plain = [e.ids for e in as_text.encode_batch(texts, add_special_tokens=False)]
    assert tok.encode_batch(texts, allowed_special="all") == matched
    assert tok.encode_batch(texts, add_special_tokens=False) == matched  # Hugging Face's own call
    assert tok.encode_batch(texts, disallowed_special=()) == plain
    assert tok.encode_batch(texts, allowed_special={"<s>"}, disallowed_special=()) == [
        m if "<s>" in t and "</s>" not in t and "<unk>" not in t else p for m, p, t in zip(matched, plain, texts)]
    ids, offsets = tok.encode_batch_to_numpy(texts, disallowed_special=())
    assert [ids[offsets[k]:offsets[k + 1]].tolist() for k in range(len(texts))] == plain
    assert tok.encode_batch(LINES[:10]) == plain[:10]
    with pytest.raises(DisallowedSpecialError, match='"<s>"'):
        tok.encode_batch(texts)
    with pytest.raises(DisallowedSpecialError, match='"</s>"'):
        tok.encode_batch(texts, allowed_special={"<s>"})


def test_single_calls_on_the_general_pipeline_follow_the_policy(general_pipeline, llama3):
    """Each single call (list, numpy, offsets) with only some special tokens allowed gives Hugging
    Face's ids for the style that applies to that text (the core reports the special tokens it matched;
    the policy checks those), raises on disallowed special-token text, and ``count`` is the number of
    Hugging Face's ids with special-token text as text."""
    for tok, hf in [general_pipeline, llama3[:2]]:
        as_text = tokenizers.Tokenizer.from_str(hf.to_str())
        as_text.encode_special_tokens = True
        texts = LINES[:5] + SPECIAL_TEXT + ["hi <s> there", "</s>", "a <unk> b", "<|begin_of_text|>a<|end_of_text|>"]
        allowed = {"<s>", "<|begin_of_text|>"}
        counts = []
        for text in texts:
            matched = hf.encode(text, add_special_tokens=False).ids
            plain = as_text.encode(text, add_special_tokens=False).ids
            counts.append(len(plain))
            present = {t for t in tok.special_tokens if t in text and tok.special_tokens[t] in matched}
            # tiktoken's rules, one pipeline call matching all special tokens or none: allowed ones alone
            # are matched, others alone (not disallowed here) are text, both together raise
            want = matched if present <= allowed else None if present & allowed else plain
            for call in (tok.encode, lambda t, **kw: tok.encode_to_numpy(t, **kw).tolist(),
                         lambda t, **kw: tok.encode_with_offsets(t, **kw)[0]):
                if want is None:
                    with pytest.raises(BytepairError, match="special"):
                        call(text, allowed_special=allowed, disallowed_special=())
                else:
                    assert call(text, allowed_special=allowed, disallowed_special=()) == want, text
                if present:
                    with pytest.raises(DisallowedSpecialError):
                        call(text)
                else:
                    assert call(text) == plain, text
            assert tok.count(text) == len(plain), text
        assert tok.count_batch(texts) == counts
