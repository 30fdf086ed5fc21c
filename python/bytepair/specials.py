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

Decoding keeps special tokens unless ``skip_special_tokens=True``. This
module reads a call's keywords; the core applies the rules, the same call on
every core (``src/special.rs``: a model's special tokens, and
``PipelineSpecials`` for a pipeline, which matches all its added tokens or
none of the special ones).

>>> resolve(None, None, None)
((), 'all', False)
>>> resolve(None, None, True), resolve(None, None, True, match_special_text=False)
(('all', (), True), ((), (), True))
>>> resolve("all", None, None), resolve(None, (), False)
(('all', 'all', False), ((), (), False))
"""

from __future__ import annotations

from typing import Any, Collection, Literal, Optional, Tuple, Union

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
                return (), None, False
            if self._spec.match_special_text:
                return None, (), bool(add)
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


def drop(ids: Any, special_ids: Collection[int]) -> Any:
    """``ids`` without ``special_ids`` (a vocabulary's holes); a numpy array stays one.

    >>> drop([1, 7, 2], {1, 2})
    [7]
    """
    if type(ids).__module__ == "numpy" and getattr(ids, "ndim", 0) == 1:
        import numpy
        return ids[~numpy.isin(ids, list(special_ids))]
    return [i for i in ids if i not in special_ids]
