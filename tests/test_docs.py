"""Every docstring example in the package runs as a test."""

import doctest
import importlib

import pytest

MODULES = [
    "bytepair",
    "bytepair.errors",
    "bytepair.patterns",
    "bytepair._io",
    "bytepair.progress",
    "bytepair.tokenizer",
    "bytepair.arrays",
    "bytepair.reference",
    "bytepair.formats",
    "bytepair.formats.native",
    "bytepair.cli.common",
    "bytepair.cli._pieces",
    "bytepair.cli.compare",
    "bytepair.cli.inspect",
    "bytepair.cli.serve",
    "bytepair.cli.show",
    "bytepair.cli.convert",
    "bytepair.formats.tiktoken",
    "bytepair.formats.hf",
    "bytepair.formats.gpt2",
    "bytepair.formats.subword_nmt",
    "bytepair.formats.convert",
    "bytepair.formats.regex_dialects",
    "bytepair.formats.transformers",
    "bytepair.decode_stream",
    "bytepair.cli",
    "bytepair.dataset",
    "bytepair.encodings",
    "bytepair.pipeline",
    "bytepair.chunking",
    "bytepair.cli.chunk",
    "bytepair.explain",
    "bytepair.cli.explain",
    "bytepair.formats.sentencepiece",
    "bytepair.word_start",
    "bytepair.parity",
    "bytepair.reference_parity",
    "bytepair.cli.parity",
    "bytepair.cli.superword",
    "bytepair.distributed",
    *(f"bytepair.cli.{m}" for m in ("options", "parser", "train", "encode", "tokenize", "decode", "count",
                                     "count_words", "encode_dataset")),
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no docstring example"
