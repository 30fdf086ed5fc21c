"""Helpers shared by the format modules: a tokenizer's vocabulary as the
other tools need it, and GPT-2's byte-to-unicode map.

>>> BYTE_TO_UNICODE[ord(" ")], BYTE_TO_UNICODE[ord("a")]
('Ġ', 'a')
>>> unicode_to_bytes("Ġhello", "f", 1)
b' hello'
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from bytepair import _core
from bytepair.errors import FormatError


def _bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's map (``encoder.py``'s ``bytes_to_unicode``): printable Latin-1
    bytes stand for themselves, the other 68 bytes get code points from 256 up
    in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    out = {b: chr(b) for b in keep}
    n = 0
    for b in range(256):
        if b not in out:
            out[b] = chr(256 + n)
            n += 1
    return out


BYTE_TO_UNICODE: Dict[int, str] = _bytes_to_unicode()
UNICODE_TO_BYTE: Dict[str, int] = {c: b for b, c in BYTE_TO_UNICODE.items()}


def bytes_to_unicode(token: bytes) -> str:
    """A token's bytes in GPT-2's printable form.

    >>> bytes_to_unicode(b" hi\\n")
    'ĠhiĊ'
    """
    return token.decode("latin-1").translate(BYTE_TO_UNICODE)  # a latin-1 character's code is its byte


# str.translate table: GPT-2's printable characters to the latin-1 character of their byte; characters below
# 256 outside the map to one that latin-1 cannot encode (the encode then fails, as for those above 255)
_TO_LATIN1: Dict[int, str] = {ord(c): chr(b) for c, b in UNICODE_TO_BYTE.items()}
_TO_LATIN1.update({c: "\U0010ffff" for c in range(256) if chr(c) not in UNICODE_TO_BYTE})


def unicode_to_bytes(text: str, path: str, where: Any) -> bytes:
    """The bytes of a token written in GPT-2's printable form; a character
    outside the map is a ``FormatError`` naming ``path`` and ``where``.

    >>> unicode_to_bytes("Ġhi", "f", "line 1")
    b' hi'
    """
    try:
        return text.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        pass
    try:
        return bytes(UNICODE_TO_BYTE[c] for c in text)
    except KeyError as e:
        raise FormatError(
            f"{path}: {where}: token {text!r} has the character {e.args[0]!r} (U+{ord(e.args[0]):04X}), "
            "which is not in GPT-2's byte-to-unicode map"
        ) from None


def require_byte_model(tok: Any, what: str) -> None:
    """A ``FormatError`` unless ``tok`` is a byte model that ``what`` (a
    format that has no place for a prefix space) can hold exactly."""
    if tok.model != "byte":
        raise FormatError(f"{what} holds byte-model tokenizers only; this one is a {tok.model}-model tokenizer")
    if tok.add_prefix_space:
        raise FormatError(
            f"{what} cannot hold this tokenizer exactly: it puts a space before each text "
            "(add_prefix_space, from a Hugging Face file), and the ids would differ without it; "
            "save it as 'hf' or 'bytepair' instead"
        )


def unique_vocab(tok: Any, what: str) -> Dict[int, Any]:
    """``{id: token}`` of a tokenizer's regular tokens (special tokens left
    out). Two ids with the same token cannot be written to a format that maps
    tokens to ids: that is a ``FormatError`` naming both."""
    special_ids = set(tok.special_tokens.values())
    made = "bytes" if tok.model == "byte" else "string"
    out: Dict[int, Any] = {}
    seen: Dict[Any, int] = {}
    for id_, token in tok.vocab().items():
        if id_ in special_ids:
            continue
        if token in seen:
            raise FormatError(
                f"{what} cannot hold this tokenizer: ids {seen[token]} and {id_} are the same token {token!r} "
                f"(two merges made the same {made})"
            )
        seen[token] = id_
        out[id_] = token
    return out


def merges_as_ids(tok: Any) -> List[Tuple[int, int]]:
    """The merges as pairs of ids (derived for vocabularies loaded as ranks)."""
    return [(l, r) for l, r, _ in tok._triples]


def byte_ranks(
    vocab: Mapping[str, int],
    specials: Mapping[str, int],
    merges: Sequence[Any],
    vocab_where: str,
    merge_where: Callable[[int], str],
    ignore_merges: bool,
    parse_merges: Optional[Callable[[], Sequence[Tuple[str, str]]]] = None,
) -> Tuple[Dict[int, bytes], List[Tuple[int, int, int]]]:
    """The ``{id: bytes}`` of a byte-level vocabulary with merges (Hugging
    Face's ``model.vocab`` + ``model.merges``, GPT-2's ``vocab.json`` +
    ``merges.txt``), for :func:`bytepair.spec.from_byte_vocab`, and the merges
    as (left id, right id, merged id), after checking what can be checked
    before the core is built that bytepair's rule (tiktoken's: merge the
    pair making the token with the lowest id) gives the same ids as the
    merge list's rule (merge the pair listed first):

    - every merge makes a token of the vocab from two tokens of the vocab;
    - no two merges make the same token;
    - the ids of the tokens made grow with the merge order.

    :func:`check_merges_derived` makes the last check, on the built core.

    Entries of ``specials`` (added tokens) leave the vocabulary. Multi-byte
    tokens that no merge makes can never come out of the merge rule: they
    are left out (or, with ``ignore_merges``, refused, as the whole-piece
    rule would give them). Errors are ``FormatError`` naming the place.

    ``merges`` are pairs, or the file's own merge items (``"left right"`` or
    a pair) when ``parse_merges`` parses them (naming a malformed one).
    The core does the work in one pass; what it finds irregular is read
    again here, by the same checks, to name the fault.

    >>> ab = {bytes_to_unicode(bytes([b])): b for b in range(256)} | {"ab": 256}
    >>> byte_ranks(ab, {}, ["a b"], "f: vocab", lambda k: f"f: merge {k}", False)[1]
    [(97, 98, 256)]
    >>> byte_ranks(ab, {}, ["a b", ["a", "b"]], "f: vocab", lambda k: f"f: merge {k}", False)
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: f: merge 1: the merge ('a', 'b') makes 'ab', which f: merge 0 makes already; a merge list ranks pairs, bytepair (like tiktoken) ranks the tokens they make, and the two disagree on such lists
    """
    fast = (_core.byte_vocab(vocab, specials, merges, ignore_merges)
            if isinstance(vocab, dict) and isinstance(specials, dict) and isinstance(merges, list) else ("irregular",))
    if fast[0] == "ok":
        return fast[1], fast[2]
    if fast[0] == "merge":
        _, k, fault, detail = fast
        m = merges[k]
        l, r = m.split(" ") if isinstance(m, str) else m
        raise _merge_error(k, l, r, fault, detail, merge_where)
    return _checked_byte_ranks(vocab, specials, parse_merges() if parse_merges else merges, vocab_where, merge_where,
                               ignore_merges)


def _shown(token: bytes) -> str:
    """A token as an error message shows it: its printable form, quoted, at most 200 characters (a hostile file's
    token may be megabytes long, so it is cut before it is translated).

    >>> _shown(b" hi")
    "'Ġhi'"
    """
    return f"{bytes_to_unicode(token[:200])!r:.200}"


def _checked_byte_ranks(vocab: Mapping[str, int], specials: Mapping[str, int], merges: Sequence[Tuple[str, str]],
                        vocab_where: str, merge_where: Callable[[int], str],
                        ignore_merges: bool) -> Tuple[Dict[int, bytes], List[Tuple[int, int, int]]]:
    """:func:`byte_ranks` one token at a time in Python: the path that names every fault."""
    ids: Dict[int, bytes] = {}
    for token, id_ in vocab.items():
        if token in specials and specials[token] == id_:
            continue  # an added token also listed in the vocab
        ids[id_] = unicode_to_bytes(token, vocab_where.split(": ")[0], vocab_where.split(": ", 1)[-1])
    for text, id_ in specials.items():
        if id_ in ids:
            raise FormatError(
                f"{vocab_where}: the special token {text!r} has the id {id_}, which is also the id of "
                f"{_shown(ids[id_])}"
            )
    seen: Dict[bytes, int] = {}
    for id_, token in ids.items():
        if token in seen:
            raise FormatError(
                f"{vocab_where}: {_shown(token)} has two ids, {seen[token]} and {id_}"
            )
        seen[token] = id_
    del seen
    # the map is one-to-one, so merges are checked on the printable strings (no bytes built per merge)
    rank: Dict[str, int] = {t: i for t, i in vocab.items() if not (t in specials and specials[t] == i)}
    made: Dict[str, int] = {}
    triples: List[Tuple[int, int, int]] = []
    last = -1
    for k, (l, r) in enumerate(merges):
        merged = l + r
        lid, rid, mid = rank.get(l), rank.get(r), rank.get(merged)
        if lid is None or rid is None or mid is None or merged in made or mid <= last:
            _refuse_merge(k, l, r, rank, made, last, merge_where)
        made[merged] = k
        triples.append((lid, rid, mid))
        last = mid
    made_ids = {rank[t] for t in made}
    for id_, token in list(ids.items()):
        if len(token) > 1 and id_ not in made_ids:
            if ignore_merges:
                raise FormatError(
                    f"{vocab_where}: {_shown(token)} (id {id_}) is made by no merge; with "
                    "ignore_merges=true Hugging Face gives it only for a whole piece, bytepair also inside one"
                )
            del ids[id_]  # the merge rule can never produce it; nor will bytepair
    return ids, triples


def _refuse_merge(k: int, l: str, r: str, rank: Mapping[str, int], made: Mapping[str, int], last: int,
                  merge_where: Callable[[int], str]) -> None:
    """The ``FormatError`` of merge ``k`` of :func:`byte_ranks`, which failed a check."""
    for side, part in enumerate((l, r)):
        try:
            unicode_to_bytes(part, "", "")
        except FormatError:
            raise _merge_error(k, l, r, "char", side, merge_where) from None
        if part not in rank:
            raise _merge_error(k, l, r, "unknown-part", side, merge_where)
    merged = l + r
    if merged not in rank:
        raise _merge_error(k, l, r, "unknown-merged", -1, merge_where)
    if merged in made:
        raise _merge_error(k, l, r, "made-by", made[merged], merge_where)
    raise _merge_error(k, l, r, "id-order", rank[merged], merge_where)


def _merge_error(k: int, l: str, r: str, fault: str, detail: int, merge_where: Callable[[int], str]) -> FormatError:
    """The message of merge ``k`` (``l``, ``r``), which bytepair's rule cannot run: ``fault`` is what the
    core's check found (``detail``: the side, the earlier merge or the id made)."""
    where = merge_where(k)
    merged = l + r
    if fault == "char":
        file, _, place = where.partition(": ")
        try:
            unicode_to_bytes((l, r)[detail], file, place)
        except FormatError as e:
            return e
    if fault in ("char", "unknown-part"):
        return FormatError(f"{where}: the merge ({l!r}, {r!r}) uses {(l, r)[detail]!r}, which is not in the vocabulary")
    if fault == "unknown-merged":
        return FormatError(f"{where}: the merge ({l!r}, {r!r}) makes {merged!r}, which is not in the vocabulary")
    if fault == "made-by":
        return FormatError(
            f"{where}: the merge ({l!r}, {r!r}) makes {merged!r}, which {merge_where(detail)} makes "
            "already; a merge list ranks pairs, bytepair (like tiktoken) ranks the tokens they make, "
            "and the two disagree on such lists"
        )
    return FormatError(
        f"{where}: the merge ({l!r}, {r!r}) makes {merged!r} (id {detail}), whose id is lower "
        "than that of the token an earlier merge makes; bytepair ranks merges by the id of the "
        "token they make, so the ids must grow with the merge order"
    )


def check_merges_derived(core: Any, triples: Sequence[Tuple[int, int, int]], merge_where: Callable[[int], str]) -> None:
    """Raise ``FormatError`` at the first merge that is not the pair
    bytepair's rule splits its token into. That rule merges any two parts
    whose bytes together are a token; a merge list merges only its pairs. On
    a token's own bytes the rule ends on one pair (``merge_triples``
    derives it); when that is the listed merge for every token, the two
    rules make the same choices on every text. When it is not, they can
    differ: a list with (" ", "  ") but not ("  ", " ") leaves three
    spaces as two tokens, and the rule would make one.

    >>> from bytepair.spec import build_core, from_byte_vocab
    >>> core = build_core(from_byte_vocab({b: bytes([b]) for b in range(256)} | {256: b"ab"}, "gpt2", {}))
    >>> check_merges_derived(core, [(97, 98, 256)], lambda k: f"merge {k}")
    >>> check_merges_derived(core, [(98, 97, 256)], lambda k: f"merge {k}")
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: merge 0: the merge (98, 97) makes the token 256, which bytepair's rule makes from (97, 98); a merge list and the rule would then give different ids
    """
    found = core.first_underived(list(triples))  # the core's comparison with merge_triples(), in one pass
    merge_not_derived(None if found is None else (*found, triples[found[0]]), merge_where)


def merge_not_derived(found: Optional[Tuple[int, Any, Tuple[int, int, int]]], merge_where: Callable[[int], str]) -> None:
    """The ``FormatError`` of :func:`check_merges_derived` for ``found``: (the index of the first
    merge that is not derived, the pair the rule gives, the merge as ids), or nothing when None.

    >>> merge_not_derived(None, str)
    >>> merge_not_derived((0, (97, 98), (98, 97, 256)), lambda k: f"merge {k}")
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: merge 0: the merge (98, 97) makes the token 256, which bytepair's rule makes from (97, 98); a merge list and the rule would then give different ids
    """
    if found is not None:
        k, derived, (left, right, made) = found
        raise FormatError(
            f"{merge_where(k)}: the merge ({left}, {right}) makes the token {made}, which bytepair's rule "
            f"makes from {derived}; a merge list and the rule would then give different ids"
        )
