"""Streaming decode for serving: text as soon as it is complete UTF-8.

A model generates ids one at a time; a token may hold part of a character
(a byte token of a multi-byte character, a byte-fallback token), so decoding
each id alone would print replacement characters. :class:`DecodeStream`
keeps the few ids it needs and returns, at each :meth:`DecodeStream.step`,
the new text, or ``None`` while the text so far ends inside a character.

It follows Hugging Face's ``tokenizers.decoders.DecodeStream`` (Rust
``step_decode_stream``) step by step, so it returns exactly what that does:

- before adding an id, if no prefix is kept yet and ids are held, the
  decoded held ids become the prefix (and their count the prefix index)
  unless that text ends with U+FFFD;
- the id is added and the held ids decoded (invalid UTF-8 replaced by
  U+FFFD). If that text is longer in UTF-8 bytes than the prefix and does
  not end with U+FFFD, the part after the prefix is returned, the ids
  before the prefix index are dropped, the prefix becomes the decoded rest
  and the prefix index the number of ids that were after the old one;
- otherwise ``None``: a token that completes no character (or adds no text)
  returns ``None``, and its text comes out with a later step.

So the pieces returned so far, joined, equal ``decode`` of all the ids given
whenever the last step returned text. A text that itself ends with U+FFFD is
held back until the next id (as Hugging Face does). ``skip_special_tokens``
leaves special tokens out, as ``decode(ids, skip_special_tokens=True)`` does.

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("héllo wörld", vocab_size=258)
>>> stream = DecodeStream(tok)
>>> [stream.step(i) for i in tok.encode("é!")]   # é is two byte tokens here
[None, 'é', '!']
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional

from bytepair.errors import BytepairError
from bytepair.limits import check_id

_REPLACEMENT = "\ufffd"


class DecodeStream:
    """Incremental decoding of ids (see the module's documentation).

    ``ids``: ids already given (a prompt): their text is not returned, and
    the first step returns only what follows it, as Hugging Face's
    ``DecodeStream(ids=...)`` does.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("hello world", special_tokens=["<|endoftext|>"])
    >>> stream = DecodeStream(tok, skip_special_tokens=True)
    >>> "".join(filter(None, map(stream.step, tok.encode("hi<|endoftext|> you", allowed_special="all"))))
    'hi you'
    """

    def __init__(self, tok: Any, skip_special_tokens: bool = False, ids: Optional[Iterable[int]] = None) -> None:
        self._tok = tok
        self._skip = bool(skip_special_tokens)
        self.ids: List[int] = [self._check(i) for i in ids] if ids is not None else []
        self.prefix = ""
        self.prefix_index = 0

    def _check(self, id_: Any) -> int:
        self._tok.decode_single_token_bytes(check_id(id_))  # UnknownTokenError for an id not in the vocabulary
        return int(id_)

    def _decode(self, ids: List[int]) -> str:
        # as Hugging Face's step: the held ids decoded with the call's skip_special_tokens (a tokenizer whose
        # owner decodes the text between special tokens apart, a tekken.json's, keeps doing so)
        return self._tok.decode(ids, skip_special_tokens=self._skip)

    def step(self, id_: int) -> Optional[str]:
        """Add one id; the new text, or ``None`` while it is incomplete.

        >>> from bytepair import Tokenizer
        >>> tok = Tokenizer.train("ab", vocab_size=256)
        >>> stream = DecodeStream(tok)
        >>> [stream.step(i) for i in list("😀".encode())]   # the byte tokens of one emoji
        [None, None, None, '😀']
        """
        id_ = self._check(id_)
        if not self.prefix and self.ids:
            new_prefix = self._decode(self.ids)
            if not new_prefix.endswith(_REPLACEMENT):
                self.prefix = new_prefix
                self.prefix_index = len(self.ids)
        self.ids.append(id_)
        text = self._decode(self.ids)
        if len(text.encode("utf-8")) > len(self.prefix.encode("utf-8")) and not text.endswith(_REPLACEMENT):
            if not text.startswith(self.prefix):
                raise BytepairError(
                    f"decode stream: the text of the held ids {text!r} does not start with the text already "
                    f"returned for them {self.prefix!r} (token id {id_})"
                )
            new_text = text[len(self.prefix):]
            new_prefix_index = len(self.ids) - self.prefix_index
            self.ids = self.ids[self.prefix_index:]
            self.prefix = self._decode(self.ids)
            self.prefix_index = new_prefix_index
            return new_text
        return None
