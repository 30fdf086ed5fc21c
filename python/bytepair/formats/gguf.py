"""GGUF files (llama.cpp, ollama): the tokenizer in a model's metadata.

Only the header and the key/value metadata are read, never the tensors: a
40 GB model file loads its tokenizer from its first few megabytes, in memory
proportional to the vocabulary. Every count, string length and array type
comes from the file and is checked against the bytes left before anything
is allocated; a truncated file, an impossible count, a wrong type or a
missing key is a :class:`~bytepair.errors.FormatError` naming the key and
the byte offset.

The contract is llama.cpp's own tokenizer (``src/llama-vocab.cpp``,
``src/unicode.cpp``), not Hugging Face's:

- ``tokenizer.ggml.model = gpt2``: byte-level BPE over the ``merges``; the
  ``tokenizer.ggml.pre`` type chooses the list of regexes that split the
  text, one after the other (:data:`PRE_TYPES`), run as llama.cpp runs them
  (:func:`llama_regex`: its own Unicode tables, its collapsed-text std::regex
  rules; its hand-written splitting routines as ``LlamaSplit`` stages,
  :data:`_ROUTINES`); ``ignore_merges`` types take a piece that is a token whole.
- ``tokenizer.ggml.model = llama``: SentencePiece BPE over the scores, with
  byte tokens, ``add_space_prefix`` before every stretch of text.

Tokens are retyped as llama.cpp's load() does (:func:`llama_cpp_types`).
Control and unknown tokens are special (matched in text only when special
tokens are parsed); user-defined tokens are always matched; where it
matters they are cut out as llama.cpp cuts them (longest first, with its
strip rules: :func:`_special_cut`); ``add_bos`` / ``add_eos`` (llama.cpp's
defaults per type, or the file's keys) are what
``encode(text, add_special_tokens=True)`` adds; decoding is
``llama_detokenize`` (the core's ``src/pipeline/llama_decode.rs``). Every pre type of
:data:`PRE_TYPES` and :data:`RAW_UTF8_PRE` is compared with llama.cpp itself
in the tests; an unknown model or type, and what bytepair cannot run exactly
are refused by name.

>>> sorted(PRE_TYPES)[:3]
['a.x-4.0', 'afmoe', 'bailingmoe']
"""

from __future__ import annotations

import gc
import mmap
import os
import struct
from itertools import compress, repeat
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from bytepair.errors import FormatError
from bytepair.formats.convert import bytes_to_unicode
from bytepair.formats.sentencepiece import SP_CONTROL, SP_USER_DEFINED, SentencePieceModel, hf_compatible, to_hf_json
from bytepair.patterns import preset_name
from bytepair.spec import PipelineSpec, build_core, checked

MAGIC = b"GGUF"
MAX_TOKENS = 1 << 24  # ids are 32-bit in the core; far beyond any vocabulary in use
MAX_KEYS = 1 << 20

# value types of the GGUF specification: (name, struct code or None)
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL, T_STRING, T_ARRAY, T_UINT64, T_INT64, \
    T_FLOAT64 = range(13)
_SCALARS = {T_UINT8: "B", T_INT8: "b", T_UINT16: "H", T_INT16: "h", T_UINT32: "I", T_INT32: "i", T_FLOAT32: "f",
            T_BOOL: "?", T_UINT64: "Q", T_INT64: "q", T_FLOAT64: "d"}
TYPE_NAMES = {T_UINT8: "uint8", T_INT8: "int8", T_UINT16: "uint16", T_INT16: "int16", T_UINT32: "uint32",
              T_INT32: "int32", T_FLOAT32: "float32", T_BOOL: "bool", T_STRING: "string", T_ARRAY: "array",
              T_UINT64: "uint64", T_INT64: "int64", T_FLOAT64: "float64"}

# llama.cpp's token types (llama_token_type) and the SentencePiece types they are
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED, TOKEN_BYTE = 1, 2, 3, 4, 5, 6

ROLES = ("bos", "eos", "eot", "eom", "unknown", "padding", "seperator", "cls", "mask")

# ---------------------------------------------------------------- the pre-tokenizers

# llama.cpp's regex lists (llm_tokenizer_bpe), each as written there
_GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_LLAMA3 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_QWEN35 = (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+"
           r"|\s+(?!\S)|\s+")
# llama.cpp's "a letter but not a-z" is a lookahead and a class; here one class, so that no backtracking is needed:
# an intersection, whose \p{L} is llama.cpp's table as every other one is (not the regex engine's newer Unicode)
_NOT_LOWER, _NOT_UPPER = r"[\p{L}&&[^a-z]]", r"[\p{L}&&[^A-Z]]"
_LETTERS_UL = r"[^\r\n\p{L}\p{N}]?" + _NOT_LOWER + "*" + _NOT_UPPER + "+"
_LETTERS_LU = r"[^\r\n\p{L}\p{N}]?" + _NOT_LOWER + "+" + _NOT_UPPER + "*"
_LM_NOT_LOWER, _LM_NOT_UPPER = r"[[\p{L}\p{M}]&&[^a-z]]", r"[[\p{L}\p{M}]&&[^A-Z]]"
_LM_LETTERS_UL = r"[^\r\n\p{L}\p{N}]?" + _LM_NOT_LOWER + "*" + _LM_NOT_UPPER + "+"
_LM_LETTERS_LU = r"[^\r\n\p{L}\p{N}]?" + _LM_NOT_LOWER + "+" + _LM_NOT_UPPER + "*"
# gpt-4o's letters as its tokenizer.json has them (tiny_aya's and youtu's lists keep this form)
_GPT4O_LETTERS = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+" + _CONTRACTIONS
                  + r"?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*" + _CONTRACTIONS
                  + "?")
_DEEPSEEK3 = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
              r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_DEEPSEEK_LLM_LETTERS = (  # as llama.cpp writes it, escaped so that no editor normalizes a character
    "\\s?[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    "\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-"
    "\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57"
    "\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-"
    "\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-"
    "\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184"
    "\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-"
    "\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-"
    "\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2"
    "\U000118a0-\U000118df\U0001e900-\U0001e943]+")

_REGEXES: Dict[str, Tuple[str, ...]] = {
    "default": (r"[\p{P}\$\+<=>\^~\|]+", _GPT2, r"\p{N}+", "[0-9][0-9][0-9]"),
    "llama3": (_LLAMA3,),
    "dbrx": (_LLAMA3,),
    "chatglm4": (_LLAMA3,),
    "deepseek-llm": ("[\r\n]", _DEEPSEEK_LLM_LETTERS, "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", "[一-龥ࠀ-一가-퟿]+",
                     r"\p{N}+"),
    "deepseek-v3": (r"\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", _DEEPSEEK3),
    "deepseek-coder": ("[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[一-龥ࠀ-一가-퟿]+", r"\p{N}"),
    "falcon": (r"[\p{P}\$\+<=>\^~\|`]+", _GPT2, "[0-9][0-9][0-9]"),
    "starcoder": (r"\p{N}", _GPT2),
    "gpt2": (_GPT2,),
    "qwen2": (_QWEN2,),
    "qwen35": (_QWEN35,),
    "poro": (r" ?[^(\s|.,!?…。，、।۔،)]+",),
    "viking": (r" ?[^(\s|.,!?…。，、।۔،)]+", r"\p{N}"),
    "tekken": (_LETTERS_UL + "|" + _LETTERS_LU + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "chameleon": ("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", r"\p{N}",
                  r"[\p{P}!-/:-@\[-`{-~]", _GPT2),
    "gpt4o": (_LETTERS_UL + _CONTRACTIONS + "?|" + _LETTERS_LU + _CONTRACTIONS
              + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "bailingmoe": (r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+",),
    "seed-coder": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "ufakzeka": (r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
    "laguna": ("[^\\n]+|[\\n]+", _QWEN2),
    "exaone-moe": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",),
    "minicpm5": (r"\p{N}{1,3}", _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "jais2": (_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
              r"|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)"
              r"|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}",),
    "spark2_5": (r"\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"
                 r"|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+", r"\p{N}"),
    # llama.cpp's trigger texts (_ROUTINES) stand for its hand-written routines, run as LlamaSplit stages
    "afmoe": (r"\p{AFMoE_digits}",
              "[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf"
              "\u0e40-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af"
              "\u1100-\u11ff]+",  # as llama.cpp writes it (豈 is U+8C48, เ U+0E40), escaped
              r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
              r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "tiny_aya": (r"\d{1,3}(?=(?:\d{3})*\b)",
                 _GPT4O_LETTERS + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "youtu": ("[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b\uff0c"
              "\u3001-\u303f\ufe30-\ufe4f]+|[\u3105-\u312f]+|[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
              _GPT4O_LETTERS + r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"),
    "kimi-k2": (r"\p{Han}+",),
    "superbpe": (r"\p{N}+", r"(?=(\d{3})+(?!\d))"),
    # llama.cpp's "a letter or mark but not a-z" is a lookahead and a class; here one class (an intersection)
    "granite-emb-multi": (_LM_LETTERS_UL + _CONTRACTIONS + "?|" + _LM_LETTERS_LU + _CONTRACTIONS
                          + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
}

# tokenizer.ggml.pre -> (regex list, ignore_merges, add_bos default); the names and flags of llama_vocab::load
PRE_TYPES: Dict[str, Tuple[str, bool, bool]] = {}


def _pre(regexes: str, names: Sequence[str], ignore_merges: bool = False, add_bos: bool = False) -> None:
    for name in names:
        PRE_TYPES[name] = (regexes, ignore_merges, add_bos)


_pre("default", ["default"])
_pre("llama3", ["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                "jina-v5-nano"], ignore_merges=True, add_bos=True)
_pre("deepseek-llm", ["deepseek-llm"])
_pre("deepseek-coder", ["deepseek-coder"])
_pre("deepseek-v3", ["deepseek-v3", "hunyuan-dense", "hy_v4", "joyai-llm"])
_pre("spark2_5", ["spark2_5"])
_pre("falcon", ["falcon"])
_pre("gpt2", ["mpt", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
              "mellum", "modern-bert", "olmo", "jais", "exaone4", "trillion", "granite-docling",
              # these set add_sep, which llama_tokenize never adds to a BPE vocabulary's ids
              "jina-v1-en", "jina-v2-code", "roberta-bpe"])
_pre("starcoder", ["starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"])
_pre("jais2", ["jais-2"])
_pre("qwen2", ["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open"])
_pre("qwen35", ["qwen35"])
_pre("llama3", ["dbrx", "smaug-bpe"])
_pre("poro", ["poro-chat", "bloom", "gpt3-finnish"])
_pre("chatglm4", ["chatglm-bpe"])
_pre("chatglm4", ["glm4", "glm5"], ignore_merges=True)
_pre("viking", ["viking"])
_pre("tekken", ["tekken"], ignore_merges=True, add_bos=True)
_pre("chameleon", ["chameleon"], add_bos=True)
_pre("gpt4o", ["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"])
_pre("granite-emb-multi", ["granite-embed-multi-97m"], ignore_merges=True)
_pre("bailingmoe", ["bailingmoe", "bailingmoe2", "llada-moe"])
_pre("seed-coder", ["seed-coder"])
_pre("ufakzeka", ["ufakzeka"])
_pre("qwen2", ["grok-2"])
_pre("laguna", ["laguna"])
_pre("exaone-moe", ["exaone-moe"])
_pre("minicpm5", ["minicpm5"], ignore_merges=True)
_pre("youtu", ["youtu"], ignore_merges=True)
_pre("afmoe", ["afmoe"])
_pre("tiny_aya", ["tiny_aya", "cohere2moe"])
_pre("kimi-k2", ["kimi-k2"])
_pre("superbpe", ["superbpe"])

# the pre types whose detokenize skips llama.cpp's clean_spaces passes (every other BPE type runs them)
NO_CLEAN_SPACES = {
    "deepseek-llm", "deepseek-coder", "deepseek-v3", "spark2_5", "youtu", "command-r", "qwen2", "deepseek-r1-qwen",
    "kormo", "f2llmv2", "qwen35", "poro-chat", "viking", "tekken", "smollm", "chameleon", "gpt-4o", "llama4",
    "kanana2", "talkie", "granite-embed-multi-97m", "tiny_aya", "cohere2moe", "superbpe", "trillion",
    "granite-docling", "bailingmoe", "bailingmoe2", "llada-moe", "seed-coder", "hunyuan", "hunyuan-dense", "hy_v4",
    "joyai-llm", "kimi-k2", "ufakzeka", "grok-2", "afmoe", "laguna", "minimax-m2", "solar-open", "sarvam-moe"}

# every pre type here is compared with llama.cpp itself by tests/test_gguf_llama_cpp.py
# (test_every_pre_type_equals_llama_cpp: a vocabulary whose merges cross every kind of boundary, on hostile text)


# regexes that llama.cpp runs with its own hand-written splitters (unicode_regex_split_custom) on its own
# category flags; its GPT-2 splitter also takes a lone whitespace as `\s+` does
_CUSTOM = {_GPT2: _GPT2 + r"|\s+", _LLAMA3: _LLAMA3, _QWEN2: _QWEN2, _QWEN35: _QWEN35}
_CATEGORIES = {r"\p{N}": "N", r"\p{L}": "L", r"\p{P}": "P", r"\p{M}": "M", r"\p{S}": "S", r"\p{Lu}": "L",
               r"\p{Ll}": "L", r"\p{Lt}": "L", r"\p{Lm}": "L", r"\p{Lo}": "L"}
# what std::regex sees of an ASCII character in llama.cpp's collapsed text (unicode_regex_split's k_ucat_map)
_ASCII_CATEGORY = {"N": [(0x30, 0x39)], "L": [(0x41, 0x5A), (0x61, 0x7A)],
                   "P": [(0x21, 0x23), (0x25, 0x2A), (0x2C, 0x2F), (0x3A, 0x3B), (0x3F, 0x40), (0x5B, 0x5D), (0x5F, 0x5F),
                         (0x7B, 0x7B), (0x7D, 0x7D)],
                   "S": [(0x24, 0x24), (0x2B, 0x2B), (0x3C, 0x3E), (0x5E, 0x5E), (0x60, 0x60), (0x7C, 0x7C), (0x7E, 0x7E)],
                   "M": []}
_ASCII_SPACE = [(0x09, 0x0D), (0x20, 0x20)]  # std::regex's \s in the C locale


def _class_items(rs: Sequence[Tuple[int, int]]) -> str:
    return "".join(f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in rs)


def _without(rs: Sequence[Tuple[int, int]], cut: Sequence[int]) -> List[Tuple[int, int]]:
    """The ranges ``rs`` less the code points ``cut``."""
    out: List[Tuple[int, int]] = []
    cut_sorted = sorted(cut)
    for lo, hi in rs:
        start = lo
        for c in cut_sorted:
            if start <= c <= hi:
                if start <= c - 1:
                    out.append((start, c - 1))
                start = c + 1
        if start <= hi:
            out.append((start, hi))
    return out


# llama.cpp's regexes that do not run as regexes: its unicode_regex_split_custom runs a hand-written routine for
# each of these texts (afmoe's and tiny_aya's digit groups, Kimi K2's whole split), and its std::regex loop cuts
# the text at every empty match of superbpe's lookahead. Each is a LlamaSplit stage (src/pretok/llama_split.rs)
_ROUTINES = {r"\p{AFMoE_digits}": "afmoe-digits", r"\d{1,3}(?=(?:\d{3})*\b)": "afmoe-digits",
             r"\p{Han}+": "kimi-k2", r"(?=(\d{3})+(?!\d))": "superbpe-digits"}
_ROUTINE_CLASSES = {"afmoe-digits": ("number",), "kimi-k2": ("letter", "number", "whitespace", "han"),
                    "superbpe-digits": ("digit",), "jais2": ("letter", "number", "whitespace")}
# ... and jais-2's regex, which llama.cpp's std::regex runs on its collapsed text but bytepair's regex guard
# refuses (its whitespace ladder's lookaheads need backtracking beside unbounded runs): a linear hand-written
# equivalent reading the classes as that collapsed text has them
_ROUTINES[_REGEXES["jais2"][0]] = "jais2"
# llama.cpp's unicode_cpt_is_han
_HAN = [(0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2CEB0, 0x2EBEF), (0x2F800, 0x2FA1F)]


def _llama_split(regex: str) -> Dict[str, Any]:
    r"""The LlamaSplit stage of one of llama.cpp's routine-triggering regexes (:data:`_ROUTINES`): the routine
    and the classes it reads, from llama.cpp's tables (its flags of every code point, its Han ranges;
    std::wregex's ``\d`` is ASCII).

    >>> stage = _llama_split(r"\p{AFMoE_digits}")
    >>> stage["routine"], sorted(stage["classes"]), stage["classes"]["number"][:14]
    ('afmoe-digits', ['number'], '[\\x{30}-\\x{39}')
    """
    routine = _ROUTINES[regex]
    cats, space = _tables("collapsed" if routine == "jais2" else "custom")
    classes = {"letter": cats["L"], "number": cats["N"], "whitespace": space, "han": _class_items(_HAN),
               "digit": _class_items([(0x30, 0x39)])}
    return {"type": "LlamaSplit", "routine": routine,
            "classes": {k: f"[{classes[k]}]" for k in _ROUTINE_CLASSES[routine]}}


def _tables(mode: str) -> Tuple[Dict[str, str], str]:
    """The class items of each category, and of ``\\s``, as llama.cpp matches them in ``mode``: ``custom``
    (its hand-written splitters: its flags of every code point), ``collapsed`` (std::regex over the collapsed
    text: ASCII by k_ucat_map, above ASCII by its flags, whitespace only as ``\\s``) or ``wide`` (std::wregex,
    no categories: whitespace above ASCII only as ``\\s``)."""
    from bytepair.formats.llama_unicode import CATEGORIES, WHITESPACE
    high_space = [c for c in WHITESPACE if c >= 0x80]
    space = _class_items([(c, c) for c in WHITESPACE]) if mode == "custom" else \
        _class_items(_ASCII_SPACE + [(c, c) for c in high_space])
    cats: Dict[str, str] = {}
    for k, rs in CATEGORIES.items():
        if mode == "custom":
            cats[k] = _class_items(rs)
        else:
            high = _without([(max(lo, 0x80), hi) for lo, hi in rs if hi >= 0x80], high_space)
            cats[k] = _class_items(_ASCII_CATEGORY[k] + high)
    return cats, space


def llama_regex(regex: str) -> str:
    """One of llama.cpp's pre-tokenizer regexes written in Oniguruma's syntax
    (a ``Split`` pattern) with the meaning llama.cpp gives it: every ``\\p{..}``
    and ``\\s`` a class of the code points llama.cpp's own Unicode tables put
    there (formats/llama_unicode.py), as its hand-written splitters (GPT-2,
    Llama 3, Qwen2, Qwen3.5) or its std::regex fallback over a collapsed text
    see them (``\\p{Lu}``... any letter; ``\\d``, ``\\w`` ASCII; whitespace
    above ASCII only ``\\s``, never a literal; ``$`` the end of the piece).

    >>> llama_regex(r"[0-9]+\\d$")
    '[0-9]+[0-9]\\\\z'
    """
    custom = regex in _CUSTOM
    if custom:
        regex = _CUSTOM[regex]
    mode = "custom" if custom else ("collapsed" if any(c in regex for c in _CATEGORIES) else "wide")
    if mode == "collapsed" and any(ord(c) >= 0x80 for c in regex):
        raise FormatError(f"the regex {regex!r} mixes Unicode categories and non-ASCII characters, which llama.cpp "
                          "refuses")
    cats, space = _tables(mode)
    from bytepair.formats.llama_unicode import WHITESPACE
    high_space = {c for c in WHITESPACE if c >= 0x80}
    out: List[str] = []
    i, inside = 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            esc = regex[i:i + 2]
            if esc == "\\p":
                end = regex.index("}", i) + 1
                name = regex[i:end]
                if name not in _CATEGORIES:
                    raise FormatError(f"the regex {regex!r} uses {name}, which llama.cpp does not run as a category")
                items = cats[_CATEGORIES[name]]
                out.append(items if inside else f"[{items}]")
                i = end
                continue
            if esc in ("\\s", "\\S"):
                if inside and esc == "\\S":
                    raise FormatError(f"the regex {regex!r} uses \\S in a class, which bytepair does not translate")
                out.append(space if inside else (f"[{space}]" if esc == "\\s" else f"[^{space}]"))
            elif esc == "\\d":
                out.append("0-9" if inside else "[0-9]")
            elif esc == "\\w":
                out.append("0-9A-Za-z_" if inside else "[0-9A-Za-z_]")
            elif esc in ("\\D", "\\W", "\\b", "\\B"):
                raise FormatError(f"the regex {regex!r} uses {esc}, which bytepair does not run as llama.cpp does")
            else:
                out.append(esc)
            i += 2
            continue
        if c == "[" and not inside:
            inside = True
        elif c == "]" and inside:
            inside = False
        elif inside and (ord(c) >= 0x80 or regex[i + 1:i + 2] == "-" and ord(regex[i + 2:i + 3] or "a") >= 0x80):
            if i + 2 < len(regex) and regex[i + 1] == "-" and regex[i + 2] != "]":
                out.append(_class_items(_without([(ord(c), ord(regex[i + 2]))], sorted(high_space))))
                i += 3
                continue
            if ord(c) in high_space:  # llama.cpp hides it from std::wregex: it never matches
                i += 1
                continue
        elif not inside and ord(c) in high_space:
            raise FormatError(f"the regex {regex!r} has the whitespace {c!r} outside a class, which never matches "
                              "in llama.cpp")
        elif not inside and c == "$":
            out.append(r"\z")
            i += 1
            continue
        elif not inside and c == ".":
            out.append(r"[^\n\r]")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------- reading the metadata


_U64 = struct.Struct("<Q")
_CORE_STRINGS = 4096  # arrays longer than this are read by the core (_core.gguf_strings) when they are regular


class _Reader:
    """Bounded reads over the file's bytes (an mmap): every length is checked
    against what is left before it is used."""

    def __init__(self, data: Any, path: str) -> None:
        self.data, self.path, self.pos, self.size = data, path, 0, len(data)
        self.key = "the header"

    def fail(self, what: str, at: Optional[int] = None) -> FormatError:
        return FormatError(f"{self.path}: not a valid GGUF file: {what} (key {self.key!r}, "
                           f"byte offset {self.pos if at is None else at})")

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.size - self.pos:
            raise self.fail(f"{what} needs {n} bytes but only {self.size - self.pos} are left (truncated file?)")

    def scalar(self, code: str, what: str) -> Any:
        n = struct.calcsize("<" + code)
        self.need(n, what)
        (v,) = struct.unpack_from("<" + code, self.data, self.pos)
        self.pos += n
        return v

    def count(self, what: str, item_bytes: int) -> int:
        at = self.pos
        n = self.scalar("Q", what)
        if n * item_bytes > self.size - self.pos:
            raise self.fail(f"{what} is {n}, more than the {self.size - self.pos} bytes left can hold", at)
        return n

    def string(self, what: str) -> str:
        at = self.pos
        n = self.count(f"the length of {what}", 1)
        raw = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail(f"{what} is not UTF-8 (byte {e.start} of the string)", at) from None

    def strings(self, n: int, keep: bool) -> Optional[List[str]]:
        """``n`` strings in a row (an array's elements): :meth:`string`'s checks and messages in one tight loop,
        as vocabularies hold hundreds of thousands of them."""
        if keep and n > _CORE_STRINGS and self.path:
            from bytepair import _core
            got = _core.gguf_strings(self.path, self.pos, n)
            if got is not None:
                self.pos = got[1]
                return got[0]
        data, size, pos = self.data, self.size, self.pos  # the checked reading, which names what is wrong
        length_of = _U64.unpack_from
        out: List[str] = []
        append = out.append
        for k in range(n):
            if size - pos < 8:
                self.pos = pos
                self.need(8, f"the length of element {k}")
            (m,) = length_of(data, pos)
            if m > size - pos - 8:
                self.pos = pos + 8
                raise self.fail(f"the length of element {k} is {m}, more than the {size - pos - 8} bytes left can "
                                "hold", pos)
            if keep:
                try:
                    append(str(data[pos + 8:pos + 8 + m], "utf-8"))
                except UnicodeDecodeError as e:
                    self.pos = pos + 8
                    raise self.fail(f"element {k} is not UTF-8 (byte {e.start} of the string)", pos) from None
            pos += 8 + m
        self.pos = pos
        return out if keep else None

    def skip_string(self) -> None:
        n = self.count("a string length", 1)
        self.pos += n

    def value(self, vtype: int, keep: bool) -> Any:
        if vtype in _SCALARS:
            return self.scalar(_SCALARS[vtype], f"a {TYPE_NAMES[vtype]} value")
        if vtype == T_STRING:
            if keep:
                return self.string("the string value")
            self.skip_string()
            return None
        if vtype == T_ARRAY:
            at = self.pos
            etype = self.scalar("I", "the array's element type")
            if etype not in TYPE_NAMES or etype == T_ARRAY:
                raise self.fail(f"array element type {etype} is not a GGUF type" if etype not in TYPE_NAMES
                                else "arrays of arrays are not read", at)
            if etype == T_STRING:
                n = self.count("the array's length", 8)
                return self.strings(n, keep)
            code = _SCALARS[etype]
            width = struct.calcsize("<" + code)
            n = self.count("the array's length", width)
            start = self.pos
            self.pos += n * width
            if not keep:
                return None
            return list(struct.unpack_from(f"<{n}{code}", self.data, start))
        raise self.fail(f"value type {vtype} is not a GGUF type", self.pos - 4)


@dataclass(frozen=True)
class Metadata:
    """The keys of a GGUF file's metadata that bytepair reads (``tokenizer.*``
    and ``general.*``), each with its GGUF type, value and byte offset."""

    path: str
    values: Mapping[str, Any]
    types: Mapping[str, Tuple[int, Optional[int]]]  # key -> (type, element type of an array)
    offsets: Mapping[str, int]
    version: int = 3

    def get(self, key: str, vtype: int, default: Any = None, element: Optional[int] = None,
            required: bool = False) -> Any:
        """The value of ``key`` when it has type ``vtype`` (an array's element
        type ``element``); ``default`` when absent (unless ``required``)."""
        if key not in self.values:
            if required:
                raise FormatError(f"{self.path}: the GGUF metadata has no key {key!r}")
            return default
        have = self.types[key]
        if have[0] != vtype or (element is not None and have[1] != element):
            def name(t: Tuple[int, Optional[int]]) -> str:
                return TYPE_NAMES.get(t[0], str(t[0])) + (f" of {TYPE_NAMES.get(t[1], t[1])}" if t[1] is not None else "")
            raise FormatError(f"{self.path}: GGUF key {key!r} (byte offset {self.offsets[key]}) is "
                              f"{name(have)}, not {name((vtype, element))}")
        return self.values[key]

    def integer(self, key: str) -> Optional[int]:
        """An integer key of any integer type, or None."""
        if key not in self.values:
            return None
        if self.types[key][0] not in (T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_UINT64, T_INT64):
            raise FormatError(f"{self.path}: GGUF key {key!r} (byte offset {self.offsets[key]}) is "
                              f"{TYPE_NAMES.get(self.types[key][0])}, not an integer")
        return int(self.values[key])


def read_metadata(path: str) -> Metadata:
    """The tokenizer and general keys of a GGUF file, read from its header
    only (the tensors are never touched).

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "cut.gguf")
    >>> _ = open(p, "wb").write(b"GGUF\\x03\\x00\\x00\\x00" + b"\\x00" * 8 + b"\\xff" * 8)
    >>> read_metadata(p)
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: ...cut.gguf: not a valid GGUF file: the number of keys is 18446744073709551615, more than the 0 bytes left can hold (key 'the header', byte offset 16)
    """
    path = os.fspath(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise FormatError(f"{path}: cannot read: {e.strerror}") from None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size < 24:
            raise FormatError(f"{path}: not a valid GGUF file: {size} bytes is shorter than its header")
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            with memoryview(data) as view:  # released on the way out, so that the map can close
                return _parse(view, path)
        finally:
            data.close()


def _parse(data: Any, path: str) -> Metadata:
    r = _Reader(data, path)
    if bytes(data[:4]) != MAGIC:
        raise FormatError(f"{path}: not a GGUF file (it starts {bytes(data[:4]).hex(' ')}, not 'GGUF')")
    r.pos = 4
    version = r.scalar("I", "the version")
    if version not in (2, 3):
        raise FormatError(f"{path}: GGUF version {version}; bytepair reads versions 2 and 3")
    r.scalar("Q", "the number of tensors")
    n_kv = r.count("the number of keys", 12)  # a key is at least its length, a type and a value
    if n_kv > MAX_KEYS:
        raise r.fail(f"{n_kv} keys is more than bytepair reads (at most {MAX_KEYS})", r.pos - 8)
    values: Dict[str, Any] = {}
    types: Dict[str, Tuple[int, Optional[int]]] = {}
    offsets: Dict[str, int] = {}
    for k in range(n_kv):
        at = r.pos
        r.key = f"key {k}"
        key = r.string(f"the name of key {k}")
        r.key = key
        vtype = r.scalar("I", "the value type")
        keep = key.startswith(("tokenizer.", "general."))
        etype = None
        if vtype == T_ARRAY:
            r.need(4, "the array's element type")
            (etype,) = struct.unpack_from("<I", data, r.pos)
        value = r.value(vtype, keep)
        if keep:
            if key in values:
                raise r.fail(f"key {key!r} is given twice", at)
            values[key], types[key], offsets[key] = value, (vtype, etype), at
    return Metadata(path, values, types, offsets, version)


# ---------------------------------------------------------------- the description


def _vocab(meta: Metadata) -> Tuple[List[str], List[int], Optional[List[float]], Dict[str, int]]:
    """The tokens, their types and scores, and ``{token: id}`` (the tokens are distinct, or the file refused)."""
    tokens = meta.get("tokenizer.ggml.tokens", T_ARRAY, element=T_STRING, required=True)
    if len(tokens) > MAX_TOKENS:
        raise FormatError(f"{meta.path}: {len(tokens)} tokens is more than bytepair reads (at most {MAX_TOKENS})")
    if "" in tokens:
        tokens = [t or f"[EMPTY_{i}]" for i, t in enumerate(tokens)]  # llama.cpp's name for an empty token
    types = meta.get("tokenizer.ggml.token_type", T_ARRAY, element=T_INT32)
    if types is None:
        types = [TOKEN_NORMAL] * len(tokens)
    elif len(types) < len(tokens):
        raise FormatError(f"{meta.path}: tokenizer.ggml.token_type has {len(types)} entries for {len(tokens)} tokens")
    scores = None
    if "tokenizer.ggml.scores" in meta.values:
        etype = meta.types["tokenizer.ggml.scores"][1]
        scores = meta.get("tokenizer.ggml.scores", T_ARRAY, element=T_INT32 if etype == T_INT32 else T_FLOAT32)
        if len(scores) < len(tokens):
            raise FormatError(f"{meta.path}: tokenizer.ggml.scores has {len(scores)} entries for {len(tokens)} tokens")
        scores = [float(s) for s in scores[:len(tokens)]]
    ids = dict(zip(tokens, range(len(tokens))))
    if len(ids) < len(tokens):
        seen: Dict[str, int] = {}
        for i, t in enumerate(tokens):
            if t in seen:
                raise FormatError(f"{meta.path}: token {i} {t[:40]!r} is also token {seen[t]} (llama.cpp refuses the "
                                  "file)")
            seen[t] = i
    return tokens, list(types[:len(tokens)]), scores, ids


def _first_other_type(types: Sequence[int], allowed: Sequence[int]) -> Tuple[int, int]:
    """The first token whose type is not ``allowed`` (its id and type), or (-1, -1).

    >>> _first_other_type([1, 3, 5, 1], (1, 3))
    (2, 5)
    """
    if set(types) <= set(allowed):
        return -1, -1
    return next((i, t) for i, t in enumerate(types) if t not in allowed)


def _role_ids(meta: Metadata, n: int, defaults: Mapping[str, int]) -> Dict[str, int]:
    """The special roles' ids: llama.cpp's defaults for the model (dropped when out of range), then the file's."""
    roles = {role: i for role, i in defaults.items() if 0 <= i < n}
    for role in ROLES:
        v = meta.integer(f"tokenizer.ggml.{role}_token_id")
        if v is not None and 0 <= v < n:  # llama.cpp ignores an id out of range
            roles[role] = v
    return roles


def _flag(meta: Metadata, key: str, default: bool) -> bool:
    v = meta.get(key, T_BOOL)
    return default if v is None else bool(v)


# llama.cpp's load() retypes tokens by their text (llama_vocab::impl::load): the first found of each FIM role
# without an id key, every end-of-generation text, become control tokens; a few Harmony texts become user-defined
_FIM_TEXTS = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>",
                "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>",
                "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>",
                "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
_FIM_OLD_KEYS = {"fim_pre": "prefix", "fim_suf": "suffix", "fim_mid": "middle"}
_EOG_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
              "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
              "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[")
_EOT_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
              "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>")
_HARMONY_USER = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")


def llama_cpp_types(meta: Metadata, tokens: Sequence[str], types: Sequence[int], roles: Mapping[str, int],
                    ids: Optional[Mapping[str, int]] = None) -> List[int]:
    """The token types llama.cpp tokenizes with: the file's, with the retyping of its load() (control-looking
    texts made control, Harmony's markers user-defined). A FIM role llama.cpp would take from one of several
    candidate texts present, in an order of its hash map, is refused.

    >>> meta = Metadata("m.gguf", {}, {}, {})
    >>> llama_cpp_types(meta, ["a", "</s>", "<|channel|>"], [1, 4, 3], {})
    [1, 3, 4]
    """
    out = list(types)
    ids = {t: i for i, t in enumerate(tokens)} if ids is None else ids  # {token: id}, when the caller has it
    control = {ids[t] for t in _EOG_TEXTS if t in ids}
    eog = set(control)
    for role, texts in _FIM_TEXTS.items():
        key = meta.integer(f"tokenizer.ggml.{role}_token_id")
        if key is None and role in _FIM_OLD_KEYS:
            key = meta.integer(f"tokenizer.ggml.{_FIM_OLD_KEYS[role]}_token_id")
        if key is not None and 0 <= key < len(tokens):
            if role in ("fim_pad", "fim_rep", "fim_sep"):
                eog.add(key)
            continue
        found = [t for t in texts if t in ids]
        if len(found) > 1:
            raise FormatError(f"{meta.path}: the vocabulary has {found[0]!r} and {found[1]!r}, and no "
                              f"tokenizer.ggml.{role}_token_id: llama.cpp takes one of them as its {role} token in "
                              "an order of its own, and only that one is parsed as a control token")
        if found:
            control.add(ids[found[0]])
            if role in ("fim_pad", "fim_rep", "fim_sep"):
                eog.add(ids[found[0]])
    for i in control:
        if out[i] != TOKEN_CONTROL:
            out[i] = TOKEN_CONTROL
    for t in _HARMONY_USER:
        if t in ids:
            out[ids[t]] = TOKEN_USER_DEFINED
    eot = roles.get("eot")
    if eot is None:
        eot = next((ids[t] for t in _EOT_TEXTS if t in ids), None)
    eog.update(i for i in (roles.get("eos"), eot, roles.get("eom"), ids.get("<|eom_id|>")) if i is not None)
    texts = {tokens[i] for i in eog}
    has_call = "<|call|>" in texts or "<|calls|>" in texts
    if "<|end|>" in texts and has_call and ("<|return|>" in texts or "<|flush|>" in texts):
        out[ids["<|end|>"]] = TOKEN_USER_DEFINED
    if "</s>" in texts and ("<|tool_response>" in texts or "<|plamo:eos|>" in texts):
        out[ids["</s>"]] = TOKEN_NORMAL
    return out


_SPECIAL_TYPES = (TOKEN_CONTROL, TOKEN_UNKNOWN, TOKEN_USER_DEFINED)  # llama.cpp's cache_special_tokens


def _added(tokens: Sequence[str], types: Sequence[int]) -> List[Dict[str, Any]]:
    """Control and unknown tokens as special added tokens, user-defined ones as plain (always matched)."""
    return [{"id": i, "content": tokens[i], "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": t != TOKEN_USER_DEFINED}
            for i, t in enumerate(types) if t in _SPECIAL_TYPES]


def _post(tokens: Sequence[str], add_bos: Optional[int], add_eos: Optional[int]) -> Optional[Dict[str, Any]]:
    """The template adding BOS/EOS (``add_special_tokens=True``)."""
    if add_bos is None and add_eos is None:
        return None
    single: List[Dict[str, Any]] = []
    pair: List[Dict[str, Any]] = []
    specials: Dict[str, Any] = {}
    for where, id_ in (("start", add_bos), ("end", add_eos)):
        if id_ is None:
            continue
        specials[tokens[id_]] = {"id": tokens[id_], "ids": [id_], "tokens": [tokens[id_]]}
    seq = [{"Sequence": {"id": "A", "type_id": 0}}]
    bos = [{"SpecialToken": {"id": tokens[add_bos], "type_id": 0}}] if add_bos is not None else []
    eos = [{"SpecialToken": {"id": tokens[add_eos], "type_id": 0}}] if add_eos is not None else []
    single = bos + seq + eos
    pair = single + [dict(x) for x in bos] + [{"Sequence": {"id": "B", "type_id": 1}}] + [dict(x) for x in eos]
    return {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": specials}


def _bos_eos(meta: Metadata, tokens: Sequence[str], roles: Mapping[str, int], add_bos: bool,
             add_eos: bool) -> Tuple[Optional[int], Optional[int]]:
    add_bos = _flag(meta, "tokenizer.ggml.add_bos_token", add_bos)
    add_eos = _flag(meta, "tokenizer.ggml.add_eos_token", add_eos)
    for flag, role in ((add_bos, "bos"), (add_eos, "eos")):
        if flag and role not in roles:
            raise FormatError(f"{meta.path}: tokenizer.ggml.add_{role}_token is set but the file has no "
                              f"{role} token id (llama.cpp stops on it)")
    return (roles["bos"] if add_bos else None), (roles["eos"] if add_eos else None)


_PHI3_NAMED = ("</s>", "<unk>", "<s>", "<|endoftext|>")  # the tokens whose strip llama.cpp sets by text for Phi-3


def _strip_attributes(meta: Metadata, tokens: Sequence[str], types: Sequence[int]) -> Dict[str, Tuple[bool, bool]]:
    """The tokens that llama.cpp's load() gives a strip attribute, by the model's or pre type's name (as
    ``_contains_any``: a substring, the model name lowercased): ``{text: (lstrip, rstrip)}``.

    >>> meta = Metadata("m.gguf", {"general.name": "Phi-3-mini"}, {"general.name": (T_STRING, None)}, {})
    >>> _strip_attributes(meta, ["<unk>", "<s>", "</s>", "<|endoftext|>", "<|end|>", "a"], [2, 3, 3, 3, 3, 1])
    {'</s>': (False, True), '<|end|>': (False, True)}
    """
    name = (meta.get("general.name", T_STRING) or "").lower()
    pre = meta.get("tokenizer.ggml.pre", T_STRING) or ""
    arch = meta.get("general.architecture", T_STRING) or ""
    present = set(tokens)
    if any(p in pre for p in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or \
            any(a in arch for a in ("nomic-bert-moe", "jina-bert-v3")):
        return {"<mask>": (True, False)} if "<mask>" in present else {}
    if "phi-3" in name or "phi3" in name:
        missing = [t for t in _PHI3_NAMED if t not in present]
        if missing:
            raise FormatError(f"{meta.path}: a model named {name!r} without the token {missing[0]!r}: llama.cpp's "
                              "load() sets the strip attributes of Phi-3's tokens by their text, and fails on it")
        out = {tokens[i]: (False, True) for i, t in enumerate(types) if t in _SPECIAL_TYPES}
        for text, rstrip in zip(_PHI3_NAMED, (True, False, False, False)):
            if text in out:
                out[text] = (False, rstrip)
        return {t: a for t, a in out.items() if a != (False, False)}
    if "modern-bert" in name:
        return {"[MASK]": (True, False)} if "[MASK]" in present else {}
    return {}


MAX_SPECIAL_TEXT = 1 << 18  # characters of special-token text whose overlaps are looked for


def _overlaps(texts: Sequence[str]) -> Tuple[bool, Optional[Tuple[str, str]]]:
    """Whether two distinct texts overlap (a proper suffix of one is a proper prefix of the other), and a
    pair of such texts of the same UTF-8 length when there is one.

    >>> _overlaps([">>TITLE<<", "<|endoftext|>", "x"])
    (True, None)
    >>> _overlaps(["ab", "ba"])
    (True, ('ab', 'ba'))
    """
    # proper prefix -> {UTF-8 length of a text starting with it: up to two such texts}
    starts: Dict[str, Dict[int, List[str]]] = {}
    for t in texts:
        size = len(t.encode())
        for k in range(1, len(t)):
            same = starts.setdefault(t[:k], {}).setdefault(size, [])
            if len(same) < 2:
                same.append(t)
    found = False
    for a in texts:
        size = len(a.encode())
        for k in range(1, len(a)):
            by_size = starts.get(a[k:])
            if not by_size:
                continue
            if any(b != a for same in by_size.values() for b in same):
                found = True
            b = next((b for b in by_size.get(size, ()) if b != a), None)
            if b is not None:
                return True, (a, b)
    return found, None


def _special_cut(meta: Metadata, tokens: Sequence[str], types: Sequence[int], added: List[Dict[str, Any]],
                 desc: Dict[str, Any]) -> None:
    """Cut the added tokens as llama.cpp does where that can give other ids than Hugging Face's cut: when two
    of them overlap (the end of one is the start of the other: llama.cpp cuts the longer one first, HF the
    leftmost), or when llama.cpp strips ASCII whitespace beside some (:func:`_strip_attributes`). Two
    overlapping tokens of one length are refused: llama.cpp's order for them is its C++ library's sort."""
    texts = [tokens[i] for i, t in enumerate(types) if t in _SPECIAL_TYPES]
    if sum(map(len, texts)) > MAX_SPECIAL_TEXT:
        raise FormatError(f"{meta.path}: its {len(texts)} special tokens hold more than {MAX_SPECIAL_TEXT} "
                          "characters, more than bytepair checks for overlaps")
    overlap, tie = _overlaps(texts)
    if tie is not None:
        raise FormatError(f"{meta.path}: the special tokens {tie[0]!r} and {tie[1]!r} overlap (one ends with what "
                          "the other starts with) and have the same length: llama.cpp cuts them in the order its "
                          "C++ library's sort leaves them, so their ids are not defined by the file")
    strips = _strip_attributes(meta, tokens, types)
    for entry in added:
        entry["lstrip"], entry["rstrip"] = strips.get(entry["content"], (False, False))
    if overlap or strips:
        desc["special_cut"] = "llama.cpp"


def _byte_gaps(meta: Metadata, tokens: Sequence[str], merges: Sequence[Any]) -> List[Dict[str, Any]]:
    """Splits standing for the bytes the vocabulary lacks. llama.cpp keeps such a byte as a symbol that no
    merge joins and drops it at the end, so nothing merges across it; bytepair's BPE drops it first. A missing
    ASCII byte is cut out as a piece of its own, a missing lead byte cuts the text before its characters."""
    have = set(tokens)
    missing = [b for b in range(256) if bytes_to_unicode(bytes([b])) not in have]
    if not missing:
        return []
    gone = {bytes_to_unicode(bytes([b])) for b in missing}
    for pair in merges:  # "left right" strings or [left, right] pairs (_merge_pairs)
        text = pair if isinstance(pair, str) else " ".join(pair)
        if any(c in gone for c in text):
            raise FormatError(f"{meta.path}: the merge {text!r} uses a byte that is not a token")
    ascii_ = [(b, b) for b in missing if b < 0x80]
    leads: List[Tuple[int, int]] = []
    for b in missing:
        if 0x80 <= b <= 0xBF:
            raise FormatError(f"{meta.path}: the byte 0x{b:02X} is not a token; llama.cpp then drops it inside a "
                              "character, which bytepair does not reproduce")
        if 0xC2 <= b <= 0xDF:
            leads.append(((b - 0xC0) << 6, ((b - 0xC0) << 6) + 0x3F))
        elif 0xE0 <= b <= 0xEF:
            lo = max((b - 0xE0) << 12, 0x800)
            leads += _without([(lo, ((b - 0xE0) << 12) + 0xFFF)], range(0xD800, 0xE000)) if b == 0xED else [(lo, ((b - 0xE0) << 12) + 0xFFF)]
        elif 0xF0 <= b <= 0xF4:
            lo = max((b - 0xF0) << 18, 0x10000)
            leads.append((lo, min(((b - 0xF0) << 18) + 0x3FFFF, 0x10FFFF)))
    out = []
    if ascii_:
        out.append({"type": "Split", "pattern": {"Regex": f"[{_class_items(ascii_)}]"}, "behavior": "Isolated",
                    "invert": False})
    if leads:
        out.append({"type": "Split", "pattern": {"Regex": f"[{_class_items(leads)}]"}, "behavior": "MergedWithNext",
                    "invert": False})
    return out


def _merge_pairs(merges: Sequence[str]) -> List[Any]:
    """The merges as the description holds them: the file's own ``"left right"`` strings where Hugging Face's
    reading of them (cut at the first space) is llama.cpp's (cut at the first space after the first character)
    for every one, as it is in the files in use (none starts with a space, each has one), else ``[left, right]``
    pairs as llama.cpp cuts them. The core refuses a merge that does not make a token of two tokens (llama.cpp
    would then fall back to other pieces).

    >>> _merge_pairs(["a b", "ab c"])
    ['a b', 'ab c']
    >>> _merge_pairs(["  b", "ab"])
    [[' ', 'b'], ['', '']]
    """
    # C loops over the strings: a Python frame per merge was a tenth of a 262k-token file's load
    if all(map(str.__contains__, merges, repeat(" "))) and not any(map(str.startswith, merges, repeat(" "))):
        return list(merges)
    return [[m[:cut], m[cut + 1:]] if (cut := m.find(" ", 1)) >= 0 else ["", ""] for m in merges]


def _gpt2(meta: Metadata) -> Dict[str, Any]:
    pre = meta.get("tokenizer.ggml.pre", T_STRING)
    pre = "default" if pre is None else pre
    if pre not in PRE_TYPES:
        raise FormatError(f"{meta.path}: unknown pre-tokenizer type {pre!r} (tokenizer.ggml.pre); llama.cpp "
                          "refuses it too")
    regexes, ignore_merges, add_bos = PRE_TYPES[pre]
    tokens, types, _, ids = _vocab(meta)
    merges = meta.get("tokenizer.ggml.merges", T_ARRAY, element=T_STRING, required=True)
    pairs = _merge_pairs(merges)
    roles = _role_ids(meta, len(tokens), {} if pre == "chatglm-bpe" else {"bos": 11, "eos": 11})
    types = llama_cpp_types(meta, tokens, types, roles, ids)
    i, t = _first_other_type(types, (TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED))
    if i >= 0:
        raise FormatError(f"{meta.path}: token {i} {tokens[i][:40]!r} has token type {t}; llama.cpp's byte-level "
                          "BPE decodes such a token its own way, which bytepair does not run")
    bos, eos = _bos_eos(meta, tokens, roles, add_bos, False)
    splits = [_llama_split(r) if r in _ROUTINES else
              {"type": "Split", "pattern": {"Regex": llama_regex(r)}, "behavior": "Isolated", "invert": False}
              for r in _REGEXES[regexes]]
    splits += _byte_gaps(meta, tokens, pairs)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    desc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": _added(tokens, types),
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [*splits, byte_level]},
        "post_processor": _post(tokens, bos, eos),
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": ids, "merges": pairs},
    }
    _special_cut(meta, tokens, types, desc["added_tokens"], desc)
    return desc


def _llama(meta: Metadata) -> Dict[str, Any]:
    tokens, types, scores, ids = _vocab(meta)
    roles = _role_ids(meta, len(tokens), {"bos": 1, "eos": 2, "unknown": 0})
    types = llama_cpp_types(meta, tokens, types, roles, ids)
    i, t = _first_other_type(types, (TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED,
                                     TOKEN_BYTE))
    if i >= 0:
        raise FormatError(f"{meta.path}: token {i} {tokens[i][:40]!r} has token type {t}, which llama.cpp's "
                          "SentencePiece tokenizer does not run")
    sp_types = list(types)  # llama.cpp's numbers are SentencePiece's
    unks = [i for i, t in enumerate(types) if t == TOKEN_UNKNOWN]
    if len(unks) > 1:  # llama.cpp treats every unknown-type token as a control one; the unknown id is its role's
        unk = roles["unknown"] if types[roles.get("unknown", unks[0])] == TOKEN_UNKNOWN else unks[0]
        sp_types = [SP_CONTROL if t == TOKEN_UNKNOWN and i != unk else t for i, t in enumerate(sp_types)]
        unks = [unk]
    byte_pieces = {tokens[i] for i, t in enumerate(types) if t == TOKEN_BYTE}
    if byte_pieces and byte_pieces != {f"<0x{b:02X}>" for b in range(256)}:
        raise FormatError(f"{meta.path}: the byte tokens are not the 256 tokens <0x00>..<0xFF>")
    if not byte_pieces and not unks:
        raise FormatError(f"{meta.path}: a llama (SentencePiece) vocabulary with neither byte tokens nor an "
                          "unknown token: characters outside it have no id")
    sp = SentencePieceModel(pieces=list(tokens), scores=list(scores or [0.0] * len(tokens)), types=sp_types,
                            byte_fallback=bool(byte_pieces), unk_id=unks[0] if unks else 0,
                            add_dummy_prefix=_flag(meta, "tokenizer.ggml.add_space_prefix", True),
                            remove_extra_whitespaces=False, escape_whitespaces=True)
    bos, eos = _bos_eos(meta, tokens, roles, True, False)
    # user-defined tokens are added tokens here, cut out of the raw text first, as llama.cpp does
    why = [w for w in hf_compatible(sp) if not w.startswith("user-defined")]
    if why:
        raise FormatError(f"{meta.path}: bytepair cannot run this SentencePiece vocabulary as llama.cpp does: "
                          + "; ".join(why))
    # Hugging Face's components (BPE ranked by the merged piece's score, byte fallback): unlike sentencepiece's
    # own encoder, they match special tokens in text and put the space prefix before every stretch of text
    # between them, as llama.cpp does
    desc = to_hf_json(replace(sp, types=[SP_CONTROL if t == SP_USER_DEFINED else t for t in sp.types]))
    # llama.cpp's detokenize keeps the space the prefix put there
    steps = desc["decoder"]["decoders"]
    desc["decoder"]["decoders"] = [d for d in steps if d["type"] != "Strip"]
    desc["added_tokens"] = _added(tokens, types)
    _special_cut(meta, tokens, types, desc["added_tokens"], desc)
    desc["post_processor"] = _post(tokens, bos, eos)
    return desc


# pre types llama.cpp runs as a BPE session over raw UTF-8 -> (its regex, spaces escaped as ▁, its GEMMA4 type:
# a run of newlines that is a token taken whole, BOS always added); the gemma4 model is always the GEMMA4 type
RAW_UTF8_PRE = {"gemma4": ("[^\n]+|[\n]+", True, True), "granite-embed-multi-311m": ("[^\n]+|[\n]+", True, True),
                "sarvam-moe": ("[^\n]+|[\n]+", True, False),
                # \S+, run as the whitespace-runs routine: an error where llama.cpp aborts (a space next to a character)
                "whitespace": (r"\S+", False, False)}


def _whitespace_runs() -> Dict[str, Any]:
    r"""The ``whitespace`` pre type's split (``\S+`` in llama.cpp's std::wregex, whitespace by its table) as the
    ``whitespace-runs`` routine, which refuses the texts llama.cpp aborts on.

    >>> _whitespace_runs()["routine"]
    'whitespace-runs'
    """
    _, space = _tables("wide")
    return {"type": "LlamaSplit", "routine": "whitespace-runs", "classes": {"whitespace": f"[{space}]"}}


def _raw_utf8_bpe(meta: Metadata, model: str, pre: str) -> Dict[str, Any]:
    """llama.cpp's BPE session over raw UTF-8 (``tokenizer.ggml.model = gemma4``, or ``gpt2`` with one of the
    pre types of :data:`RAW_UTF8_PRE`): the spaces of each stretch of text made ``▁`` (but for ``whitespace``),
    the text cut by the type's regex (runs of newlines and runs of the rest; ``\\S+``), merges by rank over
    characters, a final symbol that is not a token spelt as its ``<0xXX>`` byte tokens; with the Gemma 4 pre type,
    a run of newlines that is a token is taken whole and BOS is always added. As Hugging Face components: a
    ``Replace`` normalizer, a ``Split``, a ``BPE`` model with byte fallback."""
    regex, escape, gemma4 = RAW_UTF8_PRE[pre]
    tokens, types, _, ids = _vocab(meta)
    # llama.cpp's defaults: none for the gemma4 model, its BPE ones (11) for gpt2
    roles = _role_ids(meta, len(tokens), {} if model == "gemma4" else {"bos": 11, "eos": 11})
    types = llama_cpp_types(meta, tokens, types, roles, ids)
    i, t = _first_other_type(types, (TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_BYTE))
    if i >= 0:
        raise FormatError(f"{meta.path}: token {i} {tokens[i][:40]!r} has token type {t}, which llama.cpp's "
                          "gemma4 tokenizer decodes its own way")
    byte_pieces = {tokens[i] for i, t in enumerate(types) if t == TOKEN_BYTE}
    if byte_pieces != {f"<0x{b:02X}>" for b in range(256)}:
        raise FormatError(f"{meta.path}: the byte tokens are not the 256 tokens <0x00>..<0xFF> (llama.cpp drops "
                          "a byte without a token, Hugging Face's byte fallback does not)")
    merges = meta.get("tokenizer.ggml.merges", T_ARRAY, element=T_STRING, required=True)
    pairs = _merge_pairs(merges)
    # llama.cpp adds BOS to Gemma 4's text whatever the file says (its workaround for Gemma 4)
    if gemma4:
        meta = replace(meta, values={**meta.values, "tokenizer.ggml.add_bos_token": True},
                       types={**meta.types, "tokenizer.ggml.add_bos_token": (T_BOOL, None)})
    bos, eos = _bos_eos(meta, tokens, roles, False, False)
    desc: Dict[str, Any] = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": _added(tokens, types),
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"} if escape else None,
        "pre_tokenizer": _whitespace_runs() if pre == "whitespace" else
        {"type": "Split", "pattern": {"Regex": llama_regex(regex)}, "behavior": "Isolated", "invert": False},
        "post_processor": _post(tokens, bos, eos),
        "decoder": {"type": "Sequence", "decoders": [
            *([{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}] if escape else []),
            {"type": "ByteFallback"}, {"type": "Fuse"}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": True, "ignore_merges": False,
                  "vocab": ids, "merges": pairs},
    }
    _special_cut(meta, tokens, types, desc["added_tokens"], desc)
    return desc


def _newline_runs_whole(path: str, spec: Any) -> None:
    """llama.cpp's Gemma 4 fix takes a run of newlines that is a token whole; Hugging Face's BPE merges it, and
    the two agree only when the merges build each such token: refused otherwise."""
    core, vocab = spec.built, spec.description["model"]["vocab"]
    for token in compress(vocab, map(str.__contains__, vocab, repeat("\n"))):  # C loops until a newline
        if not token.strip("\n") and core.encode(token, [], []) != [vocab[token]]:
            raise FormatError(f"{path}: the merges do not make the token {token!r} of newlines, which llama.cpp "
                              "takes whole")


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Any] = None) -> Any:
    """``Tokenizer.load`` of a ``.gguf`` file: its tokenizer as llama.cpp
    runs it (a pipeline tokenizer). ``encode(text, add_special_tokens=...)``
    parses special tokens (llama.cpp's ``parse_special=True``) and, with
    ``True``, adds BOS/EOS as llama.cpp's ``add_special``;
    ``encode_ordinary(text)`` does not parse them; a bare ``encode(text)``
    raises on special-token text, as with every tokenizer (the special-token
    policy of docs/decisions.md).
    """
    path = os.fspath(path)
    if pattern is not None or special_tokens:
        raise FormatError(f"{path}: a GGUF file gives its own pre-tokenizer and special tokens; "
                          "pattern= and special_tokens= do not apply")
    # a vocabulary is hundreds of thousands of new strings and lists: the cyclic collector would walk them over
    # and over while they are made (a fifth of a load), and none of them forms a cycle
    paused = gc.isenabled()
    gc.disable()
    try:
        return _load(path)
    finally:
        if paused:
            gc.enable()


def _load(path: str) -> Any:
    meta = read_metadata(path)
    model = meta.get("tokenizer.ggml.model", T_STRING, required=True)
    # the pre type llama.cpp runs (the gemma4 model sets its own; llama's SentencePiece has none)
    pre = (meta.get("tokenizer.ggml.pre", T_STRING) or "default") if model == "gpt2" else \
        ("gemma4" if model == "gemma4" else None)
    if model == "gpt2" and pre in RAW_UTF8_PRE:
        desc = _raw_utf8_bpe(meta, model, pre)
    elif model == "gpt2":
        desc = _gpt2(meta)
    elif model == "llama":
        desc = _llama(meta)
    elif model == "gemma4":
        desc = _raw_utf8_bpe(meta, model, "gemma4")
    else:
        raise FormatError(f"{path}: tokenizer model {model!r} (tokenizer.ggml.model); bytepair reads the "
                          "byte-level BPE ('gpt2'), SentencePiece BPE ('llama') and Gemma 4 ('gemma4') models")
    template = meta.get("tokenizer.chat_template", T_STRING)
    if model in ("gpt2", "gemma4"):  # BPE vocabularies: clean_spaces unless the pre type drops it
        llama_decode: Tuple[bool, ...] = (_flag(meta, "tokenizer.ggml.add_space_prefix", False),
                                          pre not in NO_CLEAN_SPACES)
        if pre in RAW_UTF8_PRE and not RAW_UTF8_PRE[pre][1]:  # raw UTF-8 tokens llama.cpp reads as byte characters
            llama_decode += (True,)
    else:
        llama_decode = (_flag(meta, "tokenizer.ggml.add_space_prefix", True), False)
    spec = checked(PipelineSpec(desc, path, chat_template=template, llama_decode=llama_decode))
    if pre in RAW_UTF8_PRE and RAW_UTF8_PRE[pre][2]:
        _newline_runs_whole(path, spec)
    return spec


_LLAMA_DECODING = ("it drops the first token's leading space", "it removes the spaces before punctuation and "
                   "contractions (clean_spaces)", "it reads each token's characters as GPT-2's byte characters")


def check_decoding_kept(tok: Any, target: str) -> None:
    """Refuse to write a GGUF file's tokenizer as ``target`` (a format decoded as Hugging Face or sentencepiece
    decode) when llama.cpp's decoding of it is not theirs: the ids would be kept, ``decode`` not.

    >>> from bytepair import Tokenizer
    >>> check_decoding_kept(Tokenizer.train("hello world", num_merges=2), "a tokenizer.json")  # nothing to lose
    """
    spec = tok.spec
    flags = getattr(spec, "llama_decode", None)
    if flags is None:
        return  # not a GGUF file's tokenizer
    lost = [what for what, on in zip(_LLAMA_DECODING, flags) if on]
    decoders = spec.description.get("decoder") or {}
    if "ByteFallback" in {d.get("type") for d in [decoders, *decoders.get("decoders", ())]}:
        lost.append("byte tokens that form no character are llama.cpp's bytes, where Hugging Face and sentencepiece "
                    "write one U+FFFD per byte")
    # Hugging Face's reading of the added tokens: the same pipeline decoding with its decoder, not as llama.cpp
    by_decoder = build_core(replace(spec, llama_decode=None)) if spec.description.get("added_tokens") else None
    for entry in spec.description.get("added_tokens", ()):
        if by_decoder.decode_bytes([entry["id"]]) != entry["content"].encode():
            lost.append(f"the added token {entry['content']!r} is its own text, where Hugging Face reads its "
                        "characters as GPT-2's byte characters")
            break
    if lost:
        raise FormatError(f"{target} cannot hold llama.cpp's decoding of this GGUF tokenizer ({'; '.join(lost)}): "
                          "its ids would be the same but its decoding would not; write it as 'bytepair' (native "
                          "JSON) or 'gguf'")


def looks_like_gguf(head: bytes) -> bool:
    """Whether a file starts with GGUF's magic.

    >>> looks_like_gguf(b"GGUF\\x03\\x00\\x00\\x00"), looks_like_gguf(b"{}")
    (True, False)
    """
    return head[:4] == MAGIC


# ---------------------------------------------------------------- writing


def encode_value(vtype: int, value: Any, element: Optional[int] = None) -> bytes:
    """One GGUF value's bytes (an array's elements of type ``element``).

    >>> encode_value(T_STRING, "ab")
    b'\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00ab'
    """
    if vtype == T_STRING:
        raw = value.encode("utf-8")
        return struct.pack("<Q", len(raw)) + raw
    if vtype == T_ARRAY:
        assert element is not None
        if element == T_STRING:
            body = b"".join(encode_value(T_STRING, v) for v in value)
        else:
            body = struct.pack(f"<{len(value)}{_SCALARS[element]}", *value)
        return struct.pack("<IQ", element, len(value)) + body
    return struct.pack("<" + _SCALARS[vtype], value)


def gguf_bytes(items: Sequence[Tuple[str, int, Any, Optional[int]]]) -> bytes:
    """A GGUF (version 3) file without tensors: ``(key, type, value, array
    element type)`` in order.

    >>> gguf_bytes([("general.architecture", T_STRING, "gpt2", None)])[:8]
    b'GGUF\\x03\\x00\\x00\\x00'
    """
    parts = [MAGIC, struct.pack("<IQQ", 3, 0, len(items))]
    for key, vtype, value, element in items:
        parts += [encode_value(T_STRING, key), struct.pack("<I", vtype), encode_value(vtype, value, element)]
    return b"".join(parts)


def pre_type_of(pattern: str) -> str:
    """The ``tokenizer.ggml.pre`` type whose regexes split text as the
    fancy-regex ``pattern`` does (its canonical name); :class:`FormatError`
    naming the pattern when none does.

    >>> from bytepair.patterns import resolve_pattern
    >>> pre_type_of(resolve_pattern("gpt2"))
    'gpt-2'
    """
    from bytepair.regex_dialects import from_onig
    if preset_name(pattern) == "gpt2":  # tiktoken's GPT-2 regex splits as GPT-2's own (`\s++$`, `\s` for `\s+`)
        return "gpt-2"
    for name, (key, _, _) in PRE_TYPES.items():
        regexes = _REGEXES[key]
        if len(regexes) == 1 and regexes[0] not in _ROUTINES and from_onig(llama_regex(regexes[0])) == pattern:
            return name
    raise FormatError(f"no llama.cpp pre-tokenizer type splits text as the pattern {pattern!r} does; a GGUF "
                      "file cannot hold this tokenizer exactly")


def save(tok: Any, path: str) -> None:
    """Write a vocabulary-only GGUF of a byte-level tokenizer (trained, or a
    loaded byte-level ``tokenizer.json``) that llama.cpp loads with the same
    ids: tokens in GPT-2's byte-to-unicode form, the merges bytepair's rule
    derives (so llama.cpp's merge order gives bytepair's ids), special tokens
    as control tokens, and the ``pre`` type whose regexes are its pattern
    (refused, naming the pattern, when there is none).

    >>> import os, tempfile
    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("hello world " * 10, num_merges=5, pattern="gpt2", special_tokens=["<|endoftext|>"])
    >>> path = os.path.join(tempfile.mkdtemp(), "tok.gguf")
    >>> tok.save(path, format="gguf")
    >>> Tokenizer.load(path).encode("hello world") == tok.encode("hello world")
    True
    """
    from bytepair._io import atomic_open
    byte_spec = getattr(tok, "_byte_spec", None) if tok.model == "pipeline" else tok.spec
    if byte_spec is None or byte_spec.model != "byte":
        raise FormatError("a GGUF file holds byte-level BPE tokenizers; this one is not one "
                          f"(model {tok.model!r})")
    if byte_spec.add_prefix_space:
        raise FormatError("a tokenizer that puts a space before the text (add_prefix_space) has no llama.cpp "
                          "pre-tokenizer type")
    core = byte_spec.built if byte_spec.built is not None else None
    if core is None:
        from bytepair.spec import build_core
        core = build_core(byte_spec)
    pre = pre_type_of(byte_spec.pattern)
    specials = dict(byte_spec.special_tokens)
    n = int(core.n_vocab)
    tokens: List[str] = []
    types: List[int] = []
    by_id = {i: t for t, i in specials.items()}
    for i in range(n):
        if i in by_id:
            tokens.append(by_id[i])
            types.append(TOKEN_CONTROL)
            continue
        raw = core.token_bytes(i)
        if raw is None:
            raise FormatError(f"id {i} has no token; llama.cpp's ids run from 0 without gaps")
        tokens.append(bytes_to_unicode(raw))
        types.append(TOKEN_NORMAL)
    triples = sorted(core.merge_triples(), key=lambda t: t[2])
    merges = [f"{tokens[l]} {tokens[r]}" for l, r, _ in triples]
    items: List[Tuple[str, int, Any, Optional[int]]] = [
        ("general.architecture", T_STRING, "gpt2", None),
        ("general.name", T_STRING, "bytepair", None),
        ("gpt2.block_count", T_UINT32, 1, None),
        ("gpt2.context_length", T_UINT32, 1024, None),
        ("gpt2.embedding_length", T_UINT32, 8, None),
        ("gpt2.feed_forward_length", T_UINT32, 8, None),
        ("gpt2.attention.head_count", T_UINT32, 1, None),
        ("gpt2.attention.layer_norm_epsilon", T_FLOAT32, 1e-5, None),
        ("general.file_type", T_UINT32, 1, None),
        ("tokenizer.ggml.model", T_STRING, "gpt2", None),
        ("tokenizer.ggml.pre", T_STRING, pre, None),
        ("tokenizer.ggml.tokens", T_ARRAY, tokens, T_STRING),
        ("tokenizer.ggml.token_type", T_ARRAY, types, T_INT32),
        ("tokenizer.ggml.merges", T_ARRAY, merges, T_STRING),
        ("tokenizer.ggml.add_bos_token", T_BOOL, False, None),
        ("tokenizer.ggml.add_eos_token", T_BOOL, False, None),
    ]
    with atomic_open(path) as f:
        f.write(gguf_bytes(items))
