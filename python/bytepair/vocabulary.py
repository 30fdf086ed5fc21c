"""The vocabulary under the names users of Hugging Face ``tokenizers`` /
``transformers`` and of tiktoken reach for, mixed into every
:class:`~bytepair.Tokenizer` (see docs/decisions.md, "Vocabulary names").

Hugging Face's names take Hugging Face's token strings: a byte model's
tokens in GPT-2's byte-to-unicode alphabet (``'Ġworld'``), a pipeline's as
its ``tokenizer.json`` writes them, special tokens as their text.
tiktoken's names take bytes.

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("hello world " * 10, num_merges=4, special_tokens=["<|endoftext|>"])
>>> tok.token_to_id("Ġ") == tok.encode(" ")[0], tok.id_to_token(tok.eot_token)
(True, '<|endoftext|>')
>>> len(tok) == tok.vocab_size == len(tok.get_vocab()), tok.max_token_value == tok.n_vocab - 1
(True, True)
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from bytepair.arrays import as_id_buffer
from bytepair.decode_stream import DecodeStream
from bytepair.errors import UnknownTokenError
from bytepair.formats.convert import bytes_to_unicode
from bytepair.limits import check_id, check_ids
from bytepair.specials import drop


class Vocab(Mapping):
    """Every id with its token (``tok.vocab``): a read-only mapping, and
    callable, so that code written when ``vocab`` was a method keeps working
    (``tok.vocab()`` is a plain ``dict`` copy).

    >>> v = Vocab({0: b"a", 1: b"b"})
    >>> v[1], len(v), v() == dict(v) == v
    (b'b', 2, True)
    """

    def __init__(self, items: Dict[int, Any]) -> None:
        self._items = items

    def __getitem__(self, id_: int) -> Any:
        return self._items[id_]

    def __iter__(self) -> Iterator[int]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __call__(self) -> Dict[int, Any]:
        return dict(self._items)

    def __repr__(self) -> str:
        return f"<bytepair vocabulary of {len(self._items)} tokens>"


class VocabularyNames:
    """Hugging Face's and tiktoken's names of the vocabulary, and decoding; a
    class using it gives ``_vocab_items`` (id -> str or bytes, as :attr:`vocab`),
    ``_core`` (``token_bytes``, ``decode``, ``decode_bytes``, ``decode_buffer``),
    ``_spec`` (``decode_skips``), ``special_tokens`` and ``n_vocab``."""

    _vocab_items: Dict[int, Any]
    special_tokens: Dict[str, int]
    n_vocab: int
    _core: Any
    _spec: Any

    @property
    def vocab(self) -> Vocab:
        """Every id with its token (str in the char model and in pipelines
        that are not byte-level, bytes in byte models), special tokens
        included: a read-only mapping, as :attr:`merges` is a list; calling
        it, ``tok.vocab()``, still gives a ``dict`` copy.

        >>> from bytepair import Tokenizer
        >>> tok = Tokenizer.train("ab ab", num_merges=1)
        >>> tok.vocab[256], tok.vocab()[97]
        (b'ab', b'a')
        """
        return Vocab(self._vocab_items)

    @functools.cached_property
    def _hf_strings(self) -> Dict[int, str]:
        """id -> Hugging Face's token string (a pipeline gives its file's own)."""
        return hf_strings(self._vocab_items, self.special_tokens.values())

    @functools.cached_property
    def _token_ids(self) -> Dict[str, int]:
        """Hugging Face's token string -> id (the first id of a string)."""
        out: Dict[str, int] = {}
        for id_, token in self._hf_strings.items():
            out.setdefault(token, id_)
        return out

    @functools.cached_property
    def _bytes_ids(self) -> Dict[bytes, int]:
        """Token bytes -> id for ordinary tokens (tiktoken's ``encoder``)."""
        special = set(self.special_tokens.values())
        out: Dict[bytes, int] = {}
        for id_ in self._hf_strings:
            if id_ not in special:
                out.setdefault(self.decode_single_token_bytes(id_), id_)
        return out

    def get_vocab(self) -> Dict[str, int]:
        """Hugging Face's ``get_vocab()``: every token string with its id,
        added/special tokens included (a copy).

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab ab", num_merges=1).get_vocab()["ab"]
        256
        """
        return dict(self._token_ids)

    @property
    def vocab_size(self) -> int:
        """The number of tokens, special and added ones included: Hugging
        Face ``tokenizers``' ``get_vocab_size()`` and ``len(tokenizer)``
        (``transformers``' ``vocab_size`` leaves out the added tokens).

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab ab", num_merges=1, special_tokens=["<s>"]).vocab_size
        258
        """
        return len(self._token_ids)

    def __len__(self) -> int:
        """``len(tok)``: :attr:`vocab_size`, as ``len(tokenizer)`` in ``transformers``.

        >>> from bytepair import Tokenizer
        >>> len(Tokenizer.train("ab ab", num_merges=1))
        257
        """
        return self.vocab_size

    def __bool__(self) -> bool:
        return True  # a tokenizer is never falsy, whatever its size

    def token_to_id(self, token: str) -> Optional[int]:
        """Hugging Face's ``token_to_id``: the id of a token string, or None.

        >>> from bytepair import Tokenizer
        >>> tok = Tokenizer.train("ab ab", num_merges=1)
        >>> tok.token_to_id("ab"), tok.token_to_id("zz")
        (256, None)
        """
        return self._token_ids.get(token) if isinstance(token, str) else None

    def id_to_token(self, id_: int) -> Optional[str]:
        """Hugging Face's ``id_to_token``: the token string of an id, or None.

        >>> from bytepair import Tokenizer
        >>> tok = Tokenizer.train("a b", num_merges=0)
        >>> tok.id_to_token(32), tok.id_to_token(10**9)
        ('Ġ', None)
        """
        return self._hf_strings.get(id_) if isinstance(id_, int) and not isinstance(id_, bool) else None

    @property
    def max_token_value(self) -> int:
        """tiktoken's ``max_token_value``: the largest id.

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab ab", num_merges=1).max_token_value
        256
        """
        return self.n_vocab - 1

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """tiktoken's ``encode_single_token``: the id of the token whose bytes
        are exactly these (a str as UTF-8), else of the special token with
        this text; otherwise ``UnknownTokenError`` (a ``KeyError``).

        >>> from bytepair import Tokenizer
        >>> tok = Tokenizer.train("ab ab", num_merges=1, special_tokens=["<s>"])
        >>> tok.encode_single_token(b"ab"), tok.encode_single_token("<s>")
        (256, 257)
        """
        raw = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        id_ = self._bytes_ids.get(raw)
        if id_ is None and isinstance(text_or_bytes, str):
            id_ = self.special_tokens.get(text_or_bytes)
        if id_ is None:
            raise UnknownTokenError(raw)
        return id_

    @property
    def special_tokens_set(self) -> set:
        """The special tokens' texts (tiktoken's ``special_tokens_set``).

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab", special_tokens=["<s>"]).special_tokens_set
        {'<s>'}
        """
        return set(self.special_tokens)

    @property
    def eot_token(self) -> Optional[int]:
        """tiktoken's ``eot_token``: the id of ``<|endoftext|>`` if it is a special token.

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab", num_merges=0, special_tokens=["<|endoftext|>"]).eot_token
        256
        """
        return self.special_tokens.get("<|endoftext|>")

    def decode_bytes(self, ids: Iterable[int], skip_special_tokens: bool = False) -> bytes:
        """The bytes that ``ids`` stand for (char model: words joined by one
        space); ``skip_special_tokens=True`` leaves out the special tokens.
        Unknown ids raise ``UnknownTokenError``. ``ids`` may be a numpy
        integer array (read by the core without a Python int per id).

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab").decode_bytes([97, 98])
        b'ab'
        """
        return self._decode(ids, bool(skip_special_tokens), False)

    def _decode(self, ids: Iterable[int], skip: bool, text: bool) -> Any:
        """The core's bytes (``text``: its text) of ``ids`` checked, without the vocabulary's holes; a numpy
        array is read by the core as a buffer, and an id no core int holds is unknown."""
        holes = self._spec.decode_skips  # the holes of a Hugging Face vocabulary, which decode to nothing as in HF
        buffer = as_id_buffer(drop(ids, holes) if holes else ids) if type(ids).__module__ == "numpy" else None
        if buffer is not None:
            return self._core.decode_buffer(buffer, skip, text)
        ids = drop(check_ids(ids), holes) if holes else check_ids(ids)
        try:
            return (self._core.decode if text else self._core.decode_bytes)(ids, skip)
        except OverflowError:
            bad = next(i for i in ids if not -(2**63) <= i < 2**63)
            raise UnknownTokenError(f"token id {bad} is not in the vocabulary") from None

    def decode(self, ids: Iterable[int], errors: str = "replace", skip_special_tokens: bool = False) -> str:
        """The text of ``ids``; invalid UTF-8 is handled by ``errors``.
        Special tokens are written as their text unless ``skip_special_tokens``
        (tiktoken, transformers and mistral_common's ``KEEP``; Hugging Face
        ``tokenizers``' own default is to skip them).

        A pipeline decodes by its decoder (Hugging Face's ``decode``); a
        byte-level one with ``errors`` other than ``"replace"`` decodes its
        tokens' bytes.

        >>> from bytepair import Tokenizer
        >>> tok = Tokenizer.train("héllo", num_merges=0, special_tokens=["<s>"])
        >>> tok.decode([256, 104, 195, 169]), tok.decode([256, 104], skip_special_tokens=True)
        ('<s>hé', 'h')
        """
        if errors == "replace":  # the core's text (invalid UTF-8 replaced)
            return self._decode(ids, bool(skip_special_tokens), True)
        return self.decode_bytes(ids, skip_special_tokens).decode("utf-8", errors)

    def decode_single_token_bytes(self, id_: int) -> bytes:
        """The bytes of one token (tiktoken's name).

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab").decode_single_token_bytes(97)
        b'a'
        """
        id_ = check_id(id_)
        raw = self._core.token_bytes(id_) if 0 <= id_ < 2**32 else None
        if raw is None:
            raise UnknownTokenError(f"token id {id_!r} is not in the vocabulary")
        return raw

    def decode_stream(self, skip_special_tokens: bool = False, ids: Optional[Iterable[int]] = None) -> DecodeStream:
        """A :class:`~bytepair.decode_stream.DecodeStream`: ``step(id)`` returns
        the new text as soon as it is complete UTF-8, else ``None``, as
        Hugging Face's ``DecodeStream`` does; ``ids`` are ids already shown.

        >>> from bytepair import Tokenizer
        >>> tok = Tokenizer.train("hello world")
        >>> stream = tok.decode_stream()
        >>> "".join(t for t in map(stream.step, tok.encode("héllo 😀")) if t is not None)
        'héllo 😀'
        """
        return DecodeStream(self, skip_special_tokens=skip_special_tokens, ids=ids)

    def decode_batch(self, batch: Sequence[Iterable[int]], *, errors: str = "replace",
                     skip_special_tokens: bool = False) -> List[str]:
        """``decode`` of each list of ids (tiktoken's and Hugging Face's ``decode_batch``).

        >>> from bytepair import Tokenizer
        >>> Tokenizer.train("ab ab", num_merges=1).decode_batch([[256], [97, 32]])
        ['ab', 'a ']
        """
        return [self.decode(ids, errors=errors, skip_special_tokens=skip_special_tokens) for ids in batch]


def hf_strings(items: Dict[int, Any], special_ids: Iterable[int]) -> Dict[int, str]:
    """Hugging Face's token string of every id: bytes through GPT-2's
    byte-to-unicode map, special tokens (and str tokens) as they are.

    >>> hf_strings({32: b" ", 256: b" a", 257: b"<s>"}, [257])
    {32: 'Ġ', 256: 'Ġa', 257: '<s>'}
    """
    special = set(special_ids)
    return {i: t.decode("utf-8") if i in special and isinstance(t, bytes) else
            bytes_to_unicode(t) if isinstance(t, bytes) else t for i, t in items.items()}
