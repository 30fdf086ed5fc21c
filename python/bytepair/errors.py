"""bytepair's exceptions and warnings.

Every error is a ``BytepairError``, itself a ``ValueError``, so ``except
ValueError`` catches them all. ``UnknownTokenError`` is also a ``KeyError``,
as tiktoken raises for an id outside the vocabulary.

>>> import bytepair
>>> issubclass(bytepair.UnknownTokenError, KeyError)
True
"""

from __future__ import annotations


class BytepairError(ValueError):
    """Base class of every bytepair error."""


class TrainingError(BytepairError):
    """Training cannot run: empty corpus, vocab_size out of range, bad option."""


class EncodeError(BytepairError):
    """Text cannot be encoded (e.g. a character the char model never saw)."""


class DisallowedSpecialError(EncodeError):
    """The text holds special-token text that was not allowed."""


class UnknownTokenError(BytepairError, KeyError):
    """An id (or token) is not in the vocabulary."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class TokenIdTypeError(UnknownTokenError, TypeError):
    """A token id given to decode is not an integer: a ``TypeError``, as
    tiktoken and Hugging Face raise, and an ``UnknownTokenError``.

    >>> issubclass(TokenIdTypeError, TypeError) and issubclass(TokenIdTypeError, UnknownTokenError)
    True
    """


class PatternError(BytepairError):
    """A pre-tokenizer regex is invalid."""


class FormatError(BytepairError):
    """A model or counts file is malformed; the message names file and line."""


class UnsupportedComponentError(FormatError):
    """A well-formed file with a part bytepair cannot run exactly: a
    component type the pipeline engine does not have, or a regex it cannot
    run as the owner does. The message names the part.

    >>> issubclass(UnsupportedComponentError, FormatError)
    True
    """


class InputError(BytepairError):
    """An input file cannot be read (missing, unreadable, invalid UTF-8)."""


class ResourceError(BytepairError):
    """A job would need more memory than allowed (``max_memory``, by default
    the machine's available memory); the message says how much and what to do."""


class TrainingWarning(UserWarning):
    """Training stopped before the requested size (the message says why)."""


__all__ = [
    "BytepairError",
    "TrainingError",
    "EncodeError",
    "DisallowedSpecialError",
    "UnknownTokenError",
    "TokenIdTypeError",
    "PatternError",
    "FormatError",
    "UnsupportedComponentError",
    "InputError",
    "ResourceError",
    "TrainingWarning",
]


class UnknownEncodingError(BytepairError, KeyError):
    """``get_encoding`` / ``encoding_for_model`` do not know the name (a
    ``ValueError`` as tiktoken's ``get_encoding`` raises, and a ``KeyError``
    as its ``encoding_for_model`` raises)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""
