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
    "bytepair.commands._common",
    "bytepair.commands._pieces",
    "bytepair.commands.compare",
    "bytepair.commands.inspect",
    "bytepair.commands.serve",
    "bytepair.commands.show",
    "bytepair.commands.convert",
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
    "bytepair.commands.chunk",
    "bytepair.explain",
    "bytepair.commands.explain",
    "bytepair.formats.sentencepiece",
    "bytepair.word_start",
    "bytepair.parity",
    "bytepair.reference_parity",
    "bytepair.commands.parity",
    "bytepair.commands.superword",
    "bytepair.distributed",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{name} has no docstring example"
