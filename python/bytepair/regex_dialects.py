"""Translating pre-tokenizer regexes between bytepair's engine and Hugging
Face's.

bytepair (like tiktoken) runs patterns with Rust's fancy-regex; Hugging Face
``tokenizers`` runs ``Split`` patterns with Oniguruma in its Ruby syntax. The
same string means different things in the two where:

- ``X{n,m}+`` is possessive in fancy-regex but, in Oniguruma's Ruby syntax,
  ``(?:X{n,m})+`` (a repeated interval): cl100k's ``\\p{N}{1,3}+`` would
  match any number of digits in Hugging Face. Written ``(?>X{n,m})`` (an
  atomic group) for Oniguruma.
- ``$`` and ``^`` are the end and start of the text in fancy-regex (no
  multi-line flag) but of any line in Oniguruma's Ruby syntax: written
  ``\\z`` and ``\\A`` for Oniguruma, and ``(?m:$)``/``(?m:^)`` from it.
- ``(?m)`` in Oniguruma's Ruby syntax is fancy-regex's ``(?s)`` (dot matches
  newline), and the other way round; ``\\h`` is a hex digit in Oniguruma.

Oniguruma's Unicode classes differ from regex-syntax's where translated
for fancy-regex (each measured over every code point against Hugging Face
itself, tests/test_unicode_classes_hf.py): a bare ``\\w`` (``\\p{Word}``) also
holds ``²³¹¼½¾`` and not the joiners U+200C/U+200D, a ``\\w`` inside a class
only lacks the joiners; POSIX brackets (``[[:alpha:]]``...) and
``\\p{Graph}``/``\\p{Print}``/``\\p{XDigit}`` are Unicode classes; a bare
``\\p{..}`` is not case-folded under ``(?i)``; ``\\pL`` (no braces) is the
text ``pL``. ``\\b`` and ``\\B`` are refused. Inside a class, fancy-regex's
set operators are Oniguruma's text: ``~~`` is escaped, ``--`` (a range or
text in Oniguruma) refused.

Constructs whose meaning differs in ways not handled here (other inline
flags, ``\\Z``, ``\\R``, ``\\X``, ``\\K``, ``\\G``, back-references and
sub-expression calls) are rejected with ``ValueError`` rather than translated
wrongly.

>>> to_onig(r"\\p{N}{1,3}+|\\s++$")
'(?>\\\\p{N}{1,3})|\\\\s++\\\\z'
>>> from_onig(r"\\p{N}{1,3}+|\\s+$")
'(?:\\\\p{N}{1,3})+|\\\\s+(?m:$)'
"""

from __future__ import annotations

import re
from typing import List, Tuple

_INTERVAL = re.compile(r"\{(\d*)(,?)(\d*)\}")
# escapes whose meaning is not the same in the two engines (or not supported)
_UNSAFE_ESCAPES = set("ZRXKGyYOkgN") | set("123456789")


def _escape(p: str, i: int) -> int:
    """End of the escape sequence starting at ``p[i] == '\\\\'``."""
    if i + 1 >= len(p):
        raise ValueError("the pattern ends with a lone backslash")
    c = p[i + 1]
    if c in "pPx" and i + 2 < len(p) and p[i + 2] == "{":
        j = p.find("}", i + 3)
        if j < 0:
            raise ValueError(f"unterminated \\{c}{{ at offset {i}")
        return j + 1
    if c in "pP":  # \pL
        return i + 3
    if c == "x":
        k = i + 2
        while k < len(p) and k < i + 4 and p[k] in "0123456789abcdefABCDEF":
            k += 1
        return k
    if c == "u":
        return i + 6
    return i + 2


def _class_end(p: str, i: int) -> int:
    """End of the character class starting at ``p[i] == '['`` (nested
    classes and escapes skipped)."""
    depth = 0
    j = i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j = _escape(p, j)
            continue
        if c == "[":
            # POSIX bracket [:alpha:] inside a class
            if depth > 0 and p.startswith("[:", j):
                k = p.find(":]", j + 2)
                if k >= 0:
                    j = k + 2
                    continue
            depth += 1
            j += 1
            # a ']' or '^]' right after the opening is a literal
            if j < len(p) and p[j] == "^":
                j += 1
            if j < len(p) and p[j] == "]":
                j += 1
            continue
        if c == "]":
            depth -= 1
            j += 1
            if depth == 0:
                return j
            continue
        j += 1
    raise ValueError(f"unterminated character class at offset {i}")


# Oniguruma's classes written for fancy-regex (see the module docstring)
_WORD_BARE = r"[\w\x{B2}\x{B3}\x{B9}\x{BC}-\x{BE}--\x{200C}\x{200D}]"
_WORD_IN_CLASS = r"[\w--\x{200C}\x{200D}]"
_GRAPH = r"[^\s\p{Cc}\p{Cn}\p{Cs}]"
_POSIX = {
    "alpha": r"[\p{Alphabetic}]", "alnum": r"[\p{Alphabetic}\p{Nd}]", "digit": r"[\p{Nd}]", "space": r"[\s]",
    "upper": r"[\p{Uppercase}]", "lower": r"[\p{Lowercase}]", "word": _WORD_IN_CLASS, "cntrl": r"[\p{Cc}]",
    "blank": r"[\p{Zs}\t]", "punct": r"[\p{P}\p{S}]", "graph": _GRAPH, "print": f"[{_GRAPH}\\p{{Zs}}]",
    "xdigit": r"[0-9A-Fa-f]", "ascii": r"[\x00-\x7F]",
}
# \p{name} whose Oniguruma meaning regex-syntax does not share (names compared without case, '_', ' ', '-')
_PROPERTIES = {"graph": _GRAPH, "print": _POSIX["print"], "xdigit": _POSIX["xdigit"]}


def _negated(cls: str) -> str:
    """The complement of a class ``[...]`` (nested, so ``[^...]`` works too)."""
    return "[^" + cls + "]"


def _property_fancy(esc: str, bare: bool) -> str:
    """An Oniguruma ``\\p{..}``/``\\P{..}`` escape for fancy-regex, or ``""`` if kept as is."""
    name = esc[3:-1]
    negate = esc[1] == "P"
    if name.startswith("^"):
        negate, name = not negate, name[1:]
    key = re.sub(r"[\s_-]", "", name).lower()
    if key == "word":
        cls = _WORD_BARE if bare else _WORD_IN_CLASS
    elif key in _PROPERTIES:
        cls = _PROPERTIES[key]
    else:
        return ""
    return _negated(cls) if negate else cls


def _class_fancy(cls: str) -> str:
    """An Oniguruma character class ``[...]`` written for fancy-regex: POSIX
    brackets, ``\\w``/``\\W``, ``\\p{Word}``..., and ``\\pL`` (the text "pL")."""
    out = []
    k = 0
    depth = 0
    while k < len(cls):
        c = cls[k]
        if c == "\\":
            if cls[k + 1] in "pP" and (k + 2 >= len(cls) or cls[k + 2] != "{"):
                out.append(cls[k + 1])  # Oniguruma (Ruby syntax): \p without braces is the letter
                k += 2
                continue
            e = _escape(cls, k)
            esc = cls[k:e]
            if esc in ("\\w", "\\W"):
                out.append(_WORD_IN_CLASS if esc == "\\w" else _negated(_WORD_IN_CLASS))
            elif esc[1] in "pP" and _property_fancy(esc, False):
                out.append(_property_fancy(esc, False))
            elif esc == "\\h":
                out.append("0-9a-fA-F")
            elif esc == "\\H":
                out.append("[^0-9a-fA-F]")
            else:
                out.append(esc)
            k = e
            continue
        if c == "[" and depth > 0 and cls.startswith("[:", k):
            m = re.match(r"\[:(\^?)([a-z]+):\]", cls[k:])
            if m:
                if m.group(2) not in _POSIX:
                    raise ValueError(f"unknown POSIX bracket {m.group(0)!r}")
                sub = _POSIX[m.group(2)]
                out.append(_negated(sub) if m.group(1) else sub)
                k += m.end()
                continue
        if c == "[":
            depth += 1
            out.append(c)
            k += 1
            if k < len(cls) and cls[k] == "^":
                out.append("^")
                k += 1
            if k < len(cls) and cls[k] == "]":
                out.append("\\]")
                k += 1
            continue
        if c == "~" and cls.startswith("~~", k):  # fancy-regex's symmetric difference, Oniguruma's text
            out.append("\\~\\~")
            k += 2
            continue
        if c == "-" and cls.startswith("--", k):  # fancy-regex's difference; in Oniguruma a range or text
            raise ValueError(f"the class {cls!r} holds '--', which means different things in Oniguruma "
                             "and fancy-regex (write a lone '-' as '\\-')")
        if c == "]":
            depth -= 1
        out.append(c)
        k += 1
    return "".join(out)


def _check_escape(esc: str, i: int) -> None:
    if len(esc) >= 2 and esc[1] in _UNSAFE_ESCAPES:
        raise ValueError(f"the escape {esc!r} at offset {i} means different things in Oniguruma and fancy-regex")


def _translate(p: str, to: str) -> str:
    """One pass over ``p``; ``to`` is "onig" or "fancy"."""
    # each frame: list of atoms (strings); a quantifier applies to the last one
    stack: List[List[str]] = [[]]
    openers: List[Tuple[str, int]] = []
    folding = [False]  # is (?i) on, per open group
    i = 0
    n = len(p)
    last_is_atom = False
    while i < n:
        c = p[i]
        atoms = stack[-1]
        if c == "\\":
            if to == "fancy" and i + 1 < n and p[i + 1] in "pP" and (i + 2 >= n or p[i + 2] != "{"):
                atoms.append(p[i + 1])  # Oniguruma (Ruby syntax): \p without braces is the letter
                i += 2
                last_is_atom = True
                continue
            j = _escape(p, i)
            esc = p[i:j]
            _check_escape(esc, i)
            if to == "fancy" and esc in ("\\b", "\\B"):
                raise ValueError(f"the word boundary {esc!r} at offset {i} uses Oniguruma's word characters, "
                                 "which fancy-regex does not share")
            if to == "fancy" and esc in ("\\h", "\\H"):
                esc = "[0-9a-fA-F]" if esc == "\\h" else "[^0-9a-fA-F]"
            elif to == "fancy" and esc in ("\\w", "\\W"):
                esc = _WORD_BARE if esc == "\\w" else _negated(_WORD_BARE)
            elif to == "fancy" and esc[1] in "pP":
                esc = _property_fancy(esc, True) or (f"(?-i:{esc})" if folding[-1] else esc)
            atoms.append(esc)
            i = j
            last_is_atom = True
        elif c == "[":
            j = _class_end(p, i)
            cls = p[i:j]
            k = 0
            while k < len(cls):  # escapes inside classes
                if cls[k] == "\\":
                    e = _escape(cls, k)
                    if cls[k + 1] not in "123456789":
                        _check_escape(cls[k:e], i + k)
                    k = e
                else:
                    k += 1
            if to == "fancy":
                cls = _class_fancy(cls)
            atoms.append(cls)
            i = j
            last_is_atom = True
        elif c == "(":
            m = re.match(r"\(\?([a-zA-Z-]*)([:)])", p[i:])
            fold = folding[-1]
            if m and m.group(1):
                on, _, off = m.group(1).partition("-")
                fold = True if "i" in on else False if "i" in off else fold
                flags = m.group(1).replace("-", "")
                bad = set(flags) - {"i"}
                if to == "fancy" and bad == {"m"} and "-" not in m.group(1):
                    header = "(?" + m.group(1).replace("m", "s") + m.group(2)
                elif to == "onig" and bad == {"s"} and "-" not in m.group(1):
                    header = "(?" + m.group(1).replace("s", "m") + m.group(2)
                elif bad:
                    raise ValueError(
                        f"the inline flags {m.group(0)!r} at offset {i} mean different things in Oniguruma and fancy-regex"
                    )
                else:
                    header = m.group(0)
                if m.group(2) == ")":
                    folding[-1] = fold
                    atoms.append(header)
                    i += len(header)
                    last_is_atom = False
                    continue
            else:
                m2 = re.match(r"\((\?(?::|=|!|<=|<!|>|P?<[A-Za-z_][A-Za-z0-9_]*>|'[A-Za-z_][A-Za-z0-9_]*'))?", p[i:])
                header = m2.group(0)  # type: ignore[union-attr]
                if p.startswith("(?", i) and header == "(":
                    raise ValueError(f"the group {p[i:i + 4]!r}... at offset {i} is not supported")
            openers.append((header, i))
            folding.append(fold)
            stack.append([])
            i += len(header)
            last_is_atom = False
        elif c == ")":
            if not openers:
                raise ValueError(f"unbalanced ')' at offset {i}")
            header, _ = openers.pop()
            folding.pop()
            inner = "".join(stack.pop())
            stack[-1].append(header + inner + ")")
            i += 1
            last_is_atom = True
        elif c in "*+?" or (c == "{" and _INTERVAL.match(p, i)):
            if c == "{":
                m = _INTERVAL.match(p, i)
                assert m is not None
                q = m.group(0)
                j = m.end()
            else:
                q = c
                j = i + 1
            if not last_is_atom or not atoms:
                raise ValueError(f"the quantifier {q!r} at offset {i} has nothing to repeat")
            mod = p[j] if j < n and p[j] in "+?" else ""
            atom = atoms.pop()
            if c == "{" and mod == "+":
                # possessive interval in fancy-regex; a repeated interval in Oniguruma (Ruby)
                if to == "onig":
                    atoms.append(f"(?>{atom}{q})")
                else:
                    atoms.append(f"(?:{atom}{q})+")
                i = j + 1
            else:
                atoms.append(atom + q + mod)
                i = j + len(mod)
            last_is_atom = False
        elif c == "$":
            atoms.append("\\z" if to == "onig" else "(?m:$)")
            i += 1
            last_is_atom = True
        elif c == "^":
            atoms.append("\\A" if to == "onig" else "(?m:^)")
            i += 1
            last_is_atom = True
        else:
            atoms.append(c)
            i += 1
            last_is_atom = True
    if openers:
        raise ValueError(f"unbalanced '(' at offset {openers[-1][1]}")
    return "".join(stack[0])


def to_onig(pattern: str) -> str:
    """``pattern`` (fancy-regex, as bytepair and tiktoken run it) written so
    that Oniguruma (Hugging Face's ``Split``) matches exactly the same."""
    return _translate(pattern, "onig")


def from_onig(pattern: str) -> str:
    """An Oniguruma pattern (Hugging Face's ``Split``) written for
    fancy-regex (bytepair)."""
    return _translate(pattern, "fancy")
