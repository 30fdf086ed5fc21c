"""llama.cpp's own tokenizer through llama-cpp-python's C bindings, with nothing of llama-cpp-python's Python
layer between (its ``Llama.detokenize`` cuts every piece to 32 bytes, and ``Llama`` builds a context that a
vocabulary-only model does not need): ``llama_tokenize`` and ``llama_detokenize`` on a ``vocab_only`` model."""

from __future__ import annotations

import ctypes
from typing import List

import llama_cpp


@llama_cpp.llama_log_callback
def _quiet(level, text, user_data):  # llama.cpp logs every control token as it loads a vocabulary
    pass


llama_cpp.llama_log_set(_quiet, ctypes.c_void_p(0))


class LlamaVocab:
    """One vocabulary-only model: ``tokenize(text, add_special, parse_special)`` and
    ``detokenize(ids, remove_special, unparse_special)`` as llama.cpp's C API gives them."""

    def __init__(self, path: str) -> None:
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), params)
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)

    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> List[int]:
        raw = text.encode("utf-8")
        size = len(raw) + 8
        while True:
            out = (llama_cpp.llama_token * size)()
            n = llama_cpp.llama_tokenize(self.vocab, raw, len(raw), out, size, add_special, parse_special)
            if n >= 0:
                return list(out[:n])
            size = -n

    def detokenize(self, ids: List[int], remove_special: bool = False, unparse_special: bool = False) -> bytes:
        arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
        size = 64 + 8 * len(ids)
        while True:
            buf = ctypes.create_string_buffer(size)
            n = llama_cpp.llama_detokenize(self.vocab, arr, len(ids), buf, size, remove_special, unparse_special)
            if n >= 0:
                return buf.raw[:n]
            size = -n

    def __del__(self) -> None:
        if getattr(self, "model", None):
            llama_cpp.llama_model_free(self.model)
            self.model = None
