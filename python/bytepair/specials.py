"""One special-token policy for every tokenizer (see docs/decisions.md,
"One special-token policy"), below the API classes that apply it.

An encode call is read in the style of the library whose keywords it uses:

- tiktoken's ``allowed_special`` / ``disallowed_special`` (either one
  given): tiktoken's rules exactly; the other one takes tiktoken's default.
- Hugging Face's ``add_special_tokens`` alone: special-token text in the
  input is matched as the file's owner matches it (Hugging Face does; the
  tokenizer's ``match_special_text`` says so), and ``True`` adds what the
  owner adds (BOS/EOS).
- neither: tiktoken's defaults (special-token text raises
  :class:`~bytepair.errors.DisallowedSpecialError`), nothing added.

Decoding keeps special tokens unless ``skip_special_tokens=True``.

>>> resolve(None, None, None)
((), 'all', False)
>>> resolve(None, None, True), resolve(None, None, True, match_special_text=False)
(('all', (), True), ((), (), True))
>>> resolve("all", None, None), resolve(None, (), False)
(('all', 'all', False), ((), (), False))
"""

from __future__ import annotations

from array import array
from typing import Any, Collection, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Tuple, Union

from bytepair.errors import BytepairError, DisallowedSpecialError

AllOr = Union[Literal["all"], Collection[str]]
Flag = Optional[bool]  # add_special_tokens: None when not given
Allow = Optional[AllOr]  # allowed_special / disallowed_special: None when not given


def resolve(allowed_special: Optional[AllOr], disallowed_special: Optional[AllOr],
            add_special_tokens: Optional[bool], match_special_text: bool = True) -> Tuple[AllOr, AllOr, bool]:
    """The (allowed, disallowed, add) of one encode call under the policy
    (``None``: the keyword was not given).

    >>> resolve({"<s>"}, None, True)
    ({'<s>'}, 'all', True)
    """
    add = bool(add_special_tokens)
    if allowed_special is None and disallowed_special is None:
        if add_special_tokens is None:
            return (), "all", add
        return ("all" if match_special_text else ()), (), add
    allowed = () if allowed_special is None else allowed_special
    return allowed, ("all" if disallowed_special is None else disallowed_special), add


class ModelSpecials:
    """The policy as a :class:`~bytepair.Tokenizer` applies it to its core,
    from its description's ``match_special_text``: the core takes one call's
    (allowed, disallowed, add) and applies tiktoken's rules and the added
    ids itself (a byte or char model its description's ``prefix_tokens`` /
    ``suffix_tokens``, a pipeline its post-processor)."""

    _spec: Any

    def _call(self, allowed: Allow, disallowed: Allow, add: Flag) -> Tuple[Any, Any, bool]:
        """The core's (allowed, disallowed) and whether to add BOS/EOS."""
        if allowed is None and disallowed is None:  # the common calls, without building lists each time
            if add is None:
                return [], None, False
            if self._spec.match_special_text:
                return None, [], bool(add)
        allowed, disallowed, added = resolve(allowed, disallowed, add, self._spec.match_special_text)
        return (*special_args(allowed, disallowed), added)


def special_args(allowed_special: AllOr, disallowed_special: AllOr) -> Tuple[Any, Any]:
    """tiktoken's ``allowed_special``/``disallowed_special`` as the core takes them (None: all).

    >>> special_args("all", ()), special_args({"<s>"}, "all")
    ((None, []), (['<s>'], None))
    """
    allowed = None if allowed_special == "all" else [t for t in allowed_special if isinstance(t, str)]
    disallowed = None if disallowed_special == "all" else [t for t in disallowed_special if isinstance(t, str)]
    return allowed, disallowed


def disallowed_error(token: str) -> DisallowedSpecialError:
    """tiktoken's error for special-token text that is not allowed.

    >>> disallowed_error("<s>").args[1]
    '<s>'
    """
    return DisallowedSpecialError(
        f'Encountered text corresponding to disallowed special token "{token}".\n'
        f"Pass it in allowed_special to encode it as the special token, or disallowed_special=() "
        f"to encode it as text.", token)


def matched_specials(ids: Sequence[int], text: str, special_by_id: Mapping[int, str], allowed: AllOr,
                     disallowed: AllOr) -> bool:
    """Whether ids encoded with every special token matched stand (True), or
    the text must be encoded again with special-token text as text (False),
    by tiktoken's rules; raises on disallowed special-token text. Only the
    special tokens the engine matched, and whose text is in ``text``, count
    (an ``<unk>`` made by the model, or a BOS added, is no match).

    >>> matched_specials([5, 1], "<s>a", {5: "<s>"}, (), ())
    False
    >>> try:
    ...     matched_specials([5, 1], "<s>a", {5: "<s>"}, (), "all")
    ... except DisallowedSpecialError as e:
    ...     print("refused:", e.args[1])
    refused: <s>
    """
    if special_by_id.keys().isdisjoint(ids):  # the usual text: no special token matched, nothing to check
        return True
    hits = special_by_id.keys() & set(ids)
    present = {special_by_id[i] for i in hits if special_by_id[i] in text}
    allowed_set = set(present) if allowed == "all" else set(allowed)
    not_allowed = present - allowed_set
    refused = not_allowed if disallowed == "all" else not_allowed & set(disallowed)
    if refused:
        raise disallowed_error(min(refused))
    if not not_allowed:
        return True
    if present & allowed_set:
        raise BytepairError(
            f"a tokenizer.json pipeline matches all its special tokens or none: the text holds allowed "
            f"{sorted(present & allowed_set)} and not allowed {sorted(not_allowed)}")
    return False


def wrap(ids: List[int], before: Sequence[int], after: Sequence[int]) -> List[int]:
    """``ids`` with the owner's BOS/EOS ids around them.

    >>> wrap([7, 8], [1], [])
    [1, 7, 8]
    """
    return [*before, *ids, *after] if before or after else ids


def wrap_spans(spans: List[Tuple[int, int]], before: Sequence[int], after: Sequence[int]) -> List[Tuple[int, int]]:
    """The spans of :func:`wrap`'s ids: an added token covers no text
    (Hugging Face's ``(0, 0)``).

    >>> wrap_spans([(0, 2)], [1], [2])
    [(0, 0), (0, 2), (0, 0)]
    """
    return [(0, 0)] * len(before) + spans + [(0, 0)] * len(after)


def wrap_stream(chunks: Iterable[List[int]], before: Sequence[int], after: Sequence[int]) -> Iterator[List[int]]:
    """:func:`wrap` over a stream of id lists: ``before`` first, ``after`` last.

    >>> list(wrap_stream(iter([[7], [8]]), [1], [2]))
    [[1], [7], [8], [2]]
    """
    if before:
        yield list(before)
    yield from chunks
    if after:
        yield list(after)


def drop(ids: Any, special_ids: Collection[int]) -> Any:
    """``ids`` without the special tokens (``skip_special_tokens=True``); a
    numpy array stays one.

    >>> drop([1, 7, 2], {1, 2})
    [7]
    """
    if type(ids).__module__ == "numpy" and getattr(ids, "ndim", 0) == 1:
        import numpy
        return ids[~numpy.isin(ids, list(special_ids))]
    return [i for i in ids if i not in special_ids]


def id_buffers(lists: Sequence[Sequence[int]]) -> Tuple[bytes, bytes]:
    """The core's two buffers of a batch (uint32 ids, uint64 offsets) made
    from lists, for :func:`bytepair.arrays.flat_arrays`.

    >>> [len(b) for b in id_buffers([[1, 2], [3]])]
    [12, 24]
    """
    offsets = [0]
    for ids in lists:
        offsets.append(offsets[-1] + len(ids))
    return array("I", [i for ids in lists for i in ids]).tobytes(), array("Q", offsets).tobytes()
