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

PRESETS = {"gpt2": GPT2, "r50k": GPT2, "cl100k": CL100K, "o200k": O200K}


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
