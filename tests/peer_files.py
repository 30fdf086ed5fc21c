"""The peers' own readings of the real files, shared by test_special_policy.py and
test_vocabulary_names.py: tiktoken's Encoding built by tiktoken's constructor from a local file, a
tokenizer.json that Hugging Face writes for GPT-2's files, and the tekken.json files mistral_common ships."""

from __future__ import annotations

import glob
import os

import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public
import tokenizers

TEKKEN = sorted(glob.glob(os.path.join(os.path.dirname(__import__("mistral_common").__file__), "data", "tekken*.json")))


def tiktoken_encoding(name: str, path: str) -> tiktoken.Encoding:
    """tiktoken's own Encoding ``name`` (``tiktoken_ext.openai_public``'s constructor), its loader
    pointed at the local file."""
    real = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda url, expected_hash=None: tiktoken.load.load_tiktoken_bpe(path, expected_hash)
    try:
        return tiktoken.Encoding(**getattr(openai_public, name)())
    finally:
        openai_public.load_tiktoken_bpe = real


def hf_gpt2_json(vocab_json: str, merges_txt: str, path: str) -> tokenizers.Tokenizer:
    """Writes to ``path`` the tokenizer.json Hugging Face makes of GPT-2's files (ByteLevel, no
    post-processor, ``<|endoftext|>`` special) and returns Hugging Face's tokenizer read from it."""
    hf = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(vocab_json, merges_txt))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens(["<|endoftext|>"])
    hf.save(path)
    return tokenizers.Tokenizer.from_file(path)
