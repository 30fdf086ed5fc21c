"""``Tokenizer.save_pretrained`` and ``bytepair convert --to transformers``
against ``transformers.AutoTokenizer.from_pretrained`` (installed without
torch): the same ids on real multilingual text and generated text, the same
decoded text, the special-token roles (``bos_token_id`` ...) equal to
bytepair's ids, the chat template and ``model_max_length`` kept."""

from __future__ import annotations

import json
import os
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import transformers  # "PyTorch was not found": tokenizers only, which is all this needs
from transformers import AutoTokenizer

from bytepair import FormatError, Tokenizer
from bytepair.cli import main

SPECIALS = ["<|endoftext|>", "<pad>", "<s>", "<unk>"]
TEMPLATE = "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}<|endoftext|>{% endfor %}"


def _lines(docs):
    return [line for doc in docs for line in doc.splitlines(keepends=True)]


@pytest.fixture(scope="module")
def trained(real_texts, tmp_path_factory):
    tok = Tokenizer.train(real_texts[:40], vocab_size=900, pattern="cl100k", special_tokens=SPECIALS)
    folder = str(tmp_path_factory.mktemp("tf-trained"))
    tok.save_pretrained(folder, bos="<s>", eos="<|endoftext|>", pad="<pad>", unk="<unk>",
                        chat_template=TEMPLATE, model_max_length=4096)
    return tok, AutoTokenizer.from_pretrained(folder), folder


@pytest.fixture(scope="module")
def real_cl100k(vocab_paths, tmp_path_factory):
    tok = Tokenizer.load(vocab_paths["cl100k_base.tiktoken"])
    folder = str(tmp_path_factory.mktemp("tf-cl100k"))
    tok.save_pretrained(folder, eos="<|endoftext|>")
    return tok, AutoTokenizer.from_pretrained(folder)


def test_trained_same_ids_on_real_text(trained, real_texts):
    tok, theirs, _ = trained
    lines = _lines(real_texts)
    assert len(lines) > 1000
    for line in lines:
        assert theirs(line)["input_ids"] == tok.encode(line), repr(line[:200])


def test_real_vocabulary_same_ids(real_cl100k, real_texts):
    tok, theirs = real_cl100k
    for doc in real_texts[:60]:
        ids = tok.encode(doc)
        assert theirs(doc)["input_ids"] == ids, repr(doc[:200])
        assert theirs.decode(ids) == tok.decode(ids)
    assert theirs.eos_token_id == tok.eot_token


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(), st.lists(st.one_of(st.text(max_size=12), st.sampled_from(SPECIALS)), max_size=6).map("".join)))
def test_trained_same_ids_on_generated_text(trained, text):
    tok, theirs, _ = trained
    ids = tok.encode(text, allowed_special="all")
    assert theirs(text)["input_ids"] == ids
    assert theirs.decode(ids) == tok.decode(ids)


def test_roles_equal_bytepairs_ids(trained):
    tok, theirs, _ = trained
    assert theirs.bos_token_id == tok.special_tokens["<s>"]
    assert theirs.eos_token_id == tok.special_tokens["<|endoftext|>"]
    assert theirs.pad_token_id == tok.special_tokens["<pad>"]
    assert theirs.unk_token_id == tok.special_tokens["<unk>"]
    assert (theirs.bos_token, theirs.eos_token, theirs.pad_token, theirs.unk_token) == ("<s>", "<|endoftext|>", "<pad>", "<unk>")
    assert theirs.model_max_length == 4096
    assert set(theirs.all_special_tokens) >= {"<s>", "<|endoftext|>", "<pad>", "<unk>"}
    assert len(theirs) == tok.n_vocab


def test_chat_template_and_skip_special_tokens(trained):
    tok, theirs, _ = trained
    messages = [{"role": "user", "content": "héllo wörld"}, {"role": "assistant", "content": "日本語"}]
    text = theirs.apply_chat_template(messages, tokenize=False)
    assert text == "<s>user: héllo wörld<|endoftext|><s>assistant: 日本語<|endoftext|>"
    got = theirs.apply_chat_template(messages, tokenize=True)
    ids = got["input_ids"] if isinstance(got, dict) or hasattr(got, "keys") else got
    assert list(ids) == tok.encode(text, allowed_special="all")
    plain = tok.encode(text, allowed_special="all")
    specials = set(tok.special_tokens.values())
    assert theirs.decode(plain, skip_special_tokens=True) == tok.decode([i for i in plain if i not in specials])


def test_char_model_folder(real_texts, tmp_path):
    tok = Tokenizer.train(real_texts[:10], model="char", end_of_word="</w>", end_of_word_fused=True,
                          num_merges=400, special_tokens=["<|endoftext|>"])
    tok.save_pretrained(str(tmp_path), eos="<|endoftext|>")
    theirs = AutoTokenizer.from_pretrained(str(tmp_path))
    words = " ".join(real_texts[0].split()[:300])
    alphabet = set(tok.vocab().values())
    text = " ".join(w for w in words.split() if all(c in alphabet for c in w))
    assert theirs(text)["input_ids"] == tok.encode(text)
    assert theirs.eos_token_id == tok.special_tokens["<|endoftext|>"]


def test_convert_to_transformers(trained, tmp_path, real_texts, capsys):
    tok = trained[0]
    src = str(tmp_path / "tok.json")
    tok.save(src)
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE, encoding="utf-8")
    out = str(tmp_path / "folder")
    assert main(["convert", src, out, "--to", "transformers", "--bos", "<s>", "--eos", "<|endoftext|>",
                 "--pad", "<pad>", "--chat-template", str(template), "--model-max-length", "512"]) == 0
    theirs = AutoTokenizer.from_pretrained(out)
    assert (theirs.bos_token_id, theirs.eos_token_id, theirs.pad_token_id, theirs.model_max_length) == (
        tok.special_tokens["<s>"], tok.special_tokens["<|endoftext|>"], tok.special_tokens["<pad>"], 512)
    assert theirs.chat_template == TEMPLATE
    for line in _lines(real_texts[:1]):
        assert theirs(line)["input_ids"] == tok.encode(line)
    # the folder reads back (detected as transformers) with the same ids
    back = Tokenizer.load(out)
    assert back.encode(real_texts[0]) == tok.encode(real_texts[0])


def test_bad_role_is_refused_and_writes_nothing(trained, tmp_path, capsys):
    tok = trained[0]
    folder = tmp_path / "f"
    with pytest.raises(FormatError, match=r"bos='<bos>' is not one of the tokenizer's special tokens"):
        tok.save_pretrained(str(folder), bos="<bos>")
    assert not folder.exists()
    with pytest.raises(FormatError, match="model_max_length"):
        tok.save_pretrained(str(folder), model_max_length=0)
    assert not folder.exists()
    src = str(tmp_path / "tok.json")
    tok.save(src)
    assert main(["convert", src, str(tmp_path / "g.json"), "--eos", "<s>"]) != 0
    assert "need --to transformers" in capsys.readouterr().err


def test_config_files_content(trained):
    tok, _, folder = trained
    cfg = json.load(open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8"))
    assert cfg["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert cfg["chat_template"] == TEMPLATE
    assert {int(k): v["content"] for k, v in cfg["added_tokens_decoder"].items()} == {i: t for t, i in tok.special_tokens.items()}
    smap = json.load(open(os.path.join(folder, "special_tokens_map.json"), encoding="utf-8"))
    assert smap == {"bos_token": "<s>", "eos_token": "<|endoftext|>", "pad_token": "<pad>", "unk_token": "<unk>"}
