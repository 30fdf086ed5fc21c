"""SentencePiece ``.model`` files with a denormalizer (``denormalizer_spec``
with rules, trained here with ``--denormalization_rule_tsv``): bytepair loads
them and decodes as ``sentencepiece.SentencePieceProcessor`` does (the
denormalizer runs over the whole decoded text); ids and offsets are those of
the normalizer as before. Oracle: sentencepiece itself, on hostile text
(tests/hostile_text.py) and on random ids.
"""

from __future__ import annotations

import functools
import os
import random
import tempfile

import pytest
import sentencepiece as spm

from bytepair import Tokenizer
from bytepair.errors import FormatError
from hostile_text import hostile_texts

HERE = os.path.dirname(os.path.abspath(__file__))
LINES = open(os.path.join(HERE, "data", "multilingual.txt"), encoding="utf-8").read().splitlines()
# rules: one character to several, several to one, the space, a character to nothing-like text, a longest match
RULES = "61\t41\n62 63\t42 42\n20\t5F\n263A\t3A 29\n66 69\tFB01\n78 79 7A\t58\n78\t2D\n"


@functools.lru_cache(maxsize=None)
def model(byte_fallback: bool, normalization: str) -> str:
    folder = tempfile.mkdtemp(prefix="bytepair-denorm-")
    rules = os.path.join(folder, "rules.tsv")
    with open(rules, "w", encoding="utf-8") as f:
        f.write(RULES)
    rng = random.Random(3)
    lines = LINES * 2 + ["".join(rng.choice("abc de fg xyz ☺ ﬁ 12") for _ in range(30)) for _ in range(300)]
    prefix = os.path.join(folder, "m")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=prefix, vocab_size=1500,
                                   model_type="bpe", byte_fallback=byte_fallback,
                                   normalization_rule_name=normalization, denormalization_rule_tsv=rules,
                                   minloglevel=2)
    return prefix + ".model"


CONFIGS = [(True, "nmt_nfkc"), (False, "identity")]


@pytest.mark.parametrize("byte_fallback,normalization", CONFIGS)
def test_decode_equals_sentencepiece(byte_fallback, normalization):
    path = model(byte_fallback, normalization)
    proc, tok = spm.SentencePieceProcessor(model_file=path), Tokenizer.load(path)
    assert proc.decode(proc.encode("abc")) == "ABB"  # the denormalizer is there and runs
    texts = hostile_texts(5, 300, ["<s>", "</s>", "<unk>"]) + ["abc xyz", " a  b ", "☺ bc ﬁ", "xyzxy", ""]
    for text in texts:
        ids = proc.encode(text)
        assert tok.encode(text, add_special_tokens=False) == ids, text  # sentencepiece never matches special-token text
        assert tok.decode(ids) == proc.decode(ids), text
    rng = random.Random(9)
    for _ in range(300):
        ids = [rng.randrange(proc.get_piece_size()) for _ in range(rng.randint(0, 12))]
        assert tok.decode(ids) == proc.decode(ids), ids


def test_native_save_keeps_the_denormalizer(tmp_path):
    path = model(True, "nmt_nfkc")
    proc, tok = spm.SentencePieceProcessor(model_file=path), Tokenizer.load(path)
    tok.save(str(tmp_path / "t.json"))
    again = Tokenizer.load(str(tmp_path / "t.json"))
    ids = proc.encode("abc de xyz ☺")
    assert again.decode(ids) == proc.decode(ids)


def test_hf_export_is_refused_naming_the_denormalizer(tmp_path):
    tok = Tokenizer.load(model(True, "nmt_nfkc"))
    with pytest.raises(FormatError, match="denormalizer"):
        tok.save(str(tmp_path / "hf.json"), format="hf")
