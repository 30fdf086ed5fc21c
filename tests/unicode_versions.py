"""Code points whose Unicode properties differ between Python's ``regex`` and
Rust's regex tables, derived from the two engines themselves (no hand list).

bytepair's core (fancy-regex, and the lexers of src/pretok/lexer.rs, whose classes
come from regex-syntax) and tiktoken (Rust regex) use regex-syntax's tables:
Unicode 16.0 in regex-syntax 0.8.12, the newest release. Python's ``regex``
from 2025.10.22 on uses newer tables (Unicode 17 and later), and
``transformers`` >= 5.4 requires such a ``regex``. The reference oracle
(:mod:`bytepair.reference`) splits with Python's ``regex``, so tests that
compare it (or Python ``regex`` directly) with the core on arbitrary Unicode
draw their text without the code points in :data:`CHANGED`.

:data:`CHANGED` holds every code point (surrogates aside) that Python
``regex`` and the core's regex engine (``_core.split_words_regex``) put in a
different set for one of :data:`CLASSES`, the classes the presets' patterns
use. With ``regex`` < 2025.10.22 (Unicode 16 too) it is empty.
"""

from __future__ import annotations

import regex
from hypothesis import strategies as st

from bytepair import _core

# every class the presets' patterns use (tests/test_pretokenize_conformance.py
# checks that no preset uses another), plus \w for custom patterns
CLASSES = [r"\p{L}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{N}", r"\s", r"\w"]


def _changed() -> frozenset:
    text = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)
    out: set = set()
    for cls in CLASSES:
        out |= set(regex.findall(cls, text)) ^ set(_core.split_words_regex(text, cls))
    return frozenset(out)


CHANGED: frozenset = _changed()


def stable_text(**kwargs) -> st.SearchStrategy[str]:
    """``st.text(**kwargs)`` without the code points of :data:`CHANGED`."""
    return st.text(alphabet=st.characters(exclude_characters=CHANGED, codec="utf-8"), **kwargs)
