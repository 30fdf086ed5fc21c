"""subword-nmt BPE codes: ``#version: 0.2`` then one ``left right`` merge per
line, in merge order, with the end-of-word marker ``</w>`` fused to the
last character of a word (``e s</w>``). A file without the header is
subword-nmt's version 0.1, where ``</w>`` is a separate symbol.

Loading gives a char model (``end_of_word="</w>"``, fused for 0.2) whose
alphabet is the characters found in the merges, and whose words are split
as ``apply-bpe`` splits them: on spaces and line breaks only
(:data:`APPLY_BPE_WORDS`; a tab or a no-break space is part of a word).
Saving needs such a model, or one splitting with ``str.split()`` (no other
pattern; no special tokens, byte fallback or unk token: codes cannot hold
them). Codes carry no ids: ids after loading are bytepair's (alphabet, then
merges in order).

How the codes are applied: subword-nmt's ``apply-bpe`` repeatedly merges
the pair with the lowest rank (all its occurrences, left to right); bytepair
applies each merge in turn over the whole word. The two agree unless a
merge makes a symbol that an *earlier* merge uses, which happens only when
two merges make the same string (:func:`reapplied_merges` lists them). For
such codes the loaded tokenizer uses apply-bpe's rule
(``merge_rule="lowest-rank"``), so it segments exactly as apply-bpe does;
saving a tokenizer with such merges under the in-order rule warns that
apply-bpe will segment some words differently.

>>> import bytepair, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "codes")
>>> _ = open(path, "w").write("#version: 0.2\\nl o\\nlo w</w>\\ne r</w>\\n")
>>> bytepair.Tokenizer.from_spec(load(path)).tokenize("low lower")
['low</w>', 'lo', 'w', 'er</w>']
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, List, Mapping, Optional, Tuple

from bytepair._io import atomic_write_text, read_model_bytes
from bytepair.formats.magic import decode_text
from bytepair.errors import BytepairError, FormatError
from bytepair.spec import checked, from_merges

MARKER = "</w>"
HEADER = "#version: 0.2"

# apply-bpe's words: it reads lines with Python's universal newlines (\n, \r,
# \r\n), strips '\r\n ' at both ends, and splits on ' ' dropping empty words
APPLY_BPE_WORDS = r"[^ \n\r]+"


def _fail(path: str, line: int, what: str) -> FormatError:
    return FormatError(f"{path}: line {line}: not valid subword-nmt codes: {what}")


def parse(text: str, path: str) -> Tuple[Tuple[int, int], List[Tuple[str, str]], List[int]]:
    """``(version, merges, line numbers)`` of a codes file's text, read as
    subword-nmt reads it (``learn_bpe``'s output); a repeated pair keeps its
    first rank, as subword-nmt does."""
    lines = text.split("\n")
    version = (0, 1)
    first = 0
    if lines and lines[0].startswith("#version:"):
        v = lines[0][len("#version:"):].strip()
        try:
            version = tuple(int(x) for x in v.split("."))  # type: ignore[assignment]
        except ValueError:
            raise _fail(path, 1, f"cannot read the version {v!r}") from None
        if version not in ((0, 1), (0, 2)):
            raise _fail(path, 1, f"version {v} is not supported (0.1 and 0.2 are)")
        first = 1
    # subword-nmt drops the final newlines, then every line must be a pair
    while len(lines) > first and lines[-1] == "":
        lines.pop()
    merges: List[Tuple[str, str]] = []
    numbers: List[int] = []
    seen = set()
    for n in range(first, len(lines)):
        item = lines[n].strip("\r\n ")
        parts = item.split(" ")
        if len(parts) != 2 or not all(parts):
            raise _fail(path, n + 1, f"expected two symbols separated by one space, got {lines[n][:80]!r}")
        pair = (parts[0], parts[1])
        if pair in seen:
            continue
        seen.add(pair)
        merges.append(pair)
        numbers.append(n + 1)
    return version, merges, numbers  # type: ignore[return-value]


def _check_symbols(merges: List[Tuple[str, str]], numbers: List[int], fused: bool, path: str) -> List[str]:
    """The alphabet; every symbol must be a character (with the marker when
    fused) or the result of an earlier merge, else bytepair's in-order
    application could not reproduce subword-nmt's."""
    alphabet = set()
    for left, right in merges:
        for sym in (left, right):
            alphabet.update(sym.replace(MARKER, ""))
    known = set(alphabet)
    if fused:
        known |= {c + MARKER for c in alphabet}
    else:
        known.add(MARKER)
    for (left, right), n in zip(merges, numbers):
        for sym in (left, right):
            if sym not in known:
                raise _fail(
                    path,
                    n,
                    f"the symbol {sym!r} is neither a character{' (with ' + MARKER + ')' if fused else ''} "
                    "nor made by an earlier merge",
                )
        known.add(left + right)
    return sorted(alphabet)


def reapplied_merges(merges: List[Tuple[str, str]]) -> List[Tuple[int, int]]:
    """Pairs ``(k, j)``, ``j < k``: merge ``k`` makes a string that merge
    ``j`` uses. subword-nmt applies merge ``j`` again right after merge ``k``
    (a lower rank); bytepair does not, so the two can segment a word
    differently. Empty for codes where every merge makes a new string.

    >>> reapplied_merges([("a", "b"), ("ab", "c"), ("b", "c"), ("a", "bc"), ("abc", "d")])
    []
    >>> reapplied_merges([("a", "b"), ("ab", "c"), ("abc", "d"), ("b", "c"), ("a", "bc")])
    [(4, 2)]
    """
    users: Dict[str, List[int]] = {}
    for j, (left, right) in enumerate(merges):
        users.setdefault(left, []).append(j)
        if right != left:
            users.setdefault(right, []).append(j)
    out = []
    for k, (left, right) in enumerate(merges):
        for j in users.get(left + right, []):
            if j < k:
                out.append((k, j))
    return out


def loads(text: str, path: str = "<string>", pattern: Optional[str] = None,
          special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """The char-model description (:mod:`bytepair.spec`) of a codes file's text."""
    version, merges, numbers = parse(text, path)
    fused = version == (0, 2)
    if pattern is None:
        pattern = APPLY_BPE_WORDS
    alphabet = _check_symbols(merges, numbers, fused, path)
    try:
        return checked(from_merges(
            merges,
            model="char",
            end_of_word=MARKER,
            end_of_word_fused=fused,
            pattern=pattern,
            alphabet=alphabet,
            special_tokens=dict(special_tokens) if special_tokens else (),
            # apply-bpe's own rule when a merge makes a symbol an earlier merge uses
            merge_rule="lowest-rank" if reapplied_merges(merges) else "in-order",
        ))
    except BytepairError as e:
        raise FormatError(f"{path}: {e}") from None


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """Read subword-nmt codes; words are split as apply-bpe splits them
    unless ``pattern`` says otherwise."""
    path = os.fspath(path)
    return loads(decode_text(read_model_bytes(path), path, "subword-nmt codes"), path, pattern, special_tokens)


def dumps(tok: Any) -> str:
    """The codes of a char model with the ``</w>`` marker."""
    what = "subword-nmt codes"
    if tok.model != "char":
        raise FormatError(f"{what} hold char-model tokenizers only; this one is a {tok.model}-model tokenizer")
    if tok.end_of_word != MARKER:
        raise FormatError(f"{what} always mark word ends with {MARKER!r}; this tokenizer's marker is {tok.end_of_word!r}")
    if tok.pattern not in (None, APPLY_BPE_WORDS):
        raise FormatError(
            f"{what} split words on spaces; this tokenizer splits with the pattern {tok.pattern!r}"
        )
    if tok.special_tokens or tok.byte_fallback or tok.unk_token is not None:
        raise FormatError(f"{what} cannot hold special tokens, byte_fallback or an unk_token")
    reapplied = reapplied_merges(tok.merges)
    if reapplied and tok.merge_rule == "in-order":
        k, j = reapplied[0]
        warnings.warn(
            f"merge {k + 1} makes a symbol that merge {j + 1} uses ({len(reapplied)} such cases): apply-bpe "
            "merges by lowest rank and will segment some words differently from this tokenizer",
            stacklevel=3,
        )
    lines = [HEADER] if tok.end_of_word_fused else []
    for k, (left, right) in enumerate(tok.merges):
        for sym in (left, right):
            if any(c in sym for c in " \n\r"):
                raise FormatError(f"{what} cannot hold merge {k + 1} ({left!r}, {right!r}): a symbol has a space or newline")
        lines.append(f"{left} {right}")
    return "".join(line + "\n" for line in lines)


def save(tok: Any, path: str) -> None:
    """Write ``tok`` as subword-nmt codes (atomically): version 0.2 for a
    fused marker, 0.1 (no header) for a separate one."""
    atomic_write_text(path, dumps(tok))
