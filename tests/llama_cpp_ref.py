"""llama.cpp's own tokenizer, the oracle of the GGUF tests: ``llama_tokenize`` and ``llama_detokenize`` on a
``vocab_only`` model, called through ctypes on the llama.cpp that xllamacpp's prebuilt wheel links in and exports
(PyPI has only llama-cpp-python's sdist, whose build cost the test command three CPU minutes; xllamacpp's own
Python layer is a server, so nothing of it stands between). The declarations follow ``include/llama.h`` of the
llama.cpp that xllamacpp 2026.10.11549 ships, and another version is refused at import; ``LlamaVocab`` also
checks the parameter layout against that version's defaults before it loads a model."""

from __future__ import annotations

import ctypes
from typing import List

import xllamacpp
import xllamacpp.xllamacpp as _xllamacpp

# the version whose llama.h the declarations below follow (pyproject.toml's test extra pins it)
XLLAMACPP_VERSION = "2026.10.11549"
if xllamacpp.__version__ != XLLAMACPP_VERSION:
    raise ImportError(f"the GGUF tests' oracle is declared for xllamacpp {XLLAMACPP_VERSION}, and "
                      f"{xllamacpp.__version__} is installed: pip install 'xllamacpp=={XLLAMACPP_VERSION}'")
_lib = ctypes.CDLL(_xllamacpp.__file__)
_token = ctypes.c_int32


class _ModelParams(ctypes.Structure):
    """``struct llama_model_params`` (passed by value, so every field must be where llama.cpp reads it)."""

    _fields_ = [("devices", ctypes.c_void_p), ("tensor_buft_overrides", ctypes.c_void_p),
                ("n_gpu_layers", ctypes.c_int32), ("split_mode", ctypes.c_int), ("load_mode", ctypes.c_int),
                ("lazy_mode", ctypes.c_int), ("main_gpu", ctypes.c_int32), ("tensor_split", ctypes.c_void_p),
                ("progress_callback", ctypes.c_void_p), ("progress_callback_user_data", ctypes.c_void_p),
                ("kv_overrides", ctypes.c_void_p), ("vocab_only", ctypes.c_bool), ("check_tensors", ctypes.c_bool),
                ("use_extra_bufts", ctypes.c_bool), ("no_host", ctypes.c_bool), ("no_alloc", ctypes.c_bool),
                ("load_mtp", ctypes.c_bool)]


_LogCallback = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_lib.llama_log_set.argtypes = [_LogCallback, ctypes.c_void_p]
_lib.llama_log_set.restype = None
_lib.llama_model_default_params.argtypes = []
_lib.llama_model_default_params.restype = _ModelParams
_lib.llama_model_load_from_file.argtypes = [ctypes.c_char_p, _ModelParams]
_lib.llama_model_load_from_file.restype = ctypes.c_void_p
_lib.llama_model_get_vocab.argtypes = [ctypes.c_void_p]
_lib.llama_model_get_vocab.restype = ctypes.c_void_p
_lib.llama_model_free.argtypes = [ctypes.c_void_p]
_lib.llama_model_free.restype = None
_lib.llama_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.POINTER(_token),
                                ctypes.c_int32, ctypes.c_bool, ctypes.c_bool]
_lib.llama_tokenize.restype = ctypes.c_int32
_lib.llama_detokenize.argtypes = [ctypes.c_void_p, ctypes.POINTER(_token), ctypes.c_int32, ctypes.c_char_p,
                                  ctypes.c_int32, ctypes.c_bool, ctypes.c_bool]
_lib.llama_detokenize.restype = ctypes.c_int32

# llama.cpp logs every control token as it loads a vocabulary; kept referenced, since llama.cpp keeps the pointer
_quiet = _LogCallback(lambda level, text, user_data: None)
_lib.llama_log_set(_quiet, None)


def default_params() -> _ModelParams:
    """llama.cpp's default model parameters, checked against the defaults of the version declared above
    (``llama_model_default_params`` in its ``src/llama-model.cpp``)."""
    params = _lib.llama_model_default_params()
    seen = (params.devices, params.n_gpu_layers, params.main_gpu, params.kv_overrides, params.vocab_only,
            params.check_tensors, params.use_extra_bufts, params.no_host, params.no_alloc, params.load_mtp)
    if seen != (None, -1, 0, None, False, False, True, False, False, False):
        raise RuntimeError(f"llama_model_params of this xllamacpp is not laid out as declared here: {seen}")
    return params


class LlamaVocab:
    """One vocabulary-only model: ``tokenize(text, add_special, parse_special)`` and
    ``detokenize(ids, remove_special, unparse_special)`` as llama.cpp's C API gives them."""

    def __init__(self, path: str) -> None:
        params = default_params()
        params.vocab_only = True
        self.model = _lib.llama_model_load_from_file(path.encode(), params)
        if not self.model:
            raise RuntimeError(f"llama.cpp cannot load {path}")
        self.vocab = _lib.llama_model_get_vocab(self.model)

    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> List[int]:
        raw = text.encode("utf-8")
        size = len(raw) + 8
        while True:
            out = (_token * size)()
            n = _lib.llama_tokenize(self.vocab, raw, len(raw), out, size, add_special, parse_special)
            if n >= 0:
                return list(out[:n])
            size = -n

    def detokenize(self, ids: List[int], remove_special: bool = False, unparse_special: bool = False) -> bytes:
        arr = (_token * max(1, len(ids)))(*ids)
        size = 64 + 8 * len(ids)
        while True:
            buf = ctypes.create_string_buffer(size)
            n = _lib.llama_detokenize(self.vocab, arr, len(ids), buf, size, remove_special, unparse_special)
            if n >= 0:
                return buf.raw[:n]
            size = -n

    def __del__(self) -> None:
        if getattr(self, "model", None):
            _lib.llama_model_free(self.model)
            self.model = None
