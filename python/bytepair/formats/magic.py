"""What a file's first bytes say it is, for the messages of loaders that
cannot read it (a tokenizer loader given a model's weights, an archive or a
SentencePiece protobuf names what it got, and suggests only what works).
"""

from __future__ import annotations

from typing import Optional

from bytepair.errors import InputError
from bytepair.formats.sentencepiece import looks_like_model


def named_format(head: bytes) -> Optional[str]:
    """The kind of file whose magic number ``head`` starts with, or None.

    >>> named_format(b"GGUF" + bytes(4))
    'a GGUF file (llama.cpp)'
    >>> named_format(b"hello") is None
    True
    """
    if head.startswith(b"GGUF"):
        return "a GGUF file (llama.cpp)"
    if head.startswith(b"PK\x03\x04"):
        return "a zip archive (such as a PyTorch checkpoint written by torch.save, or a wheel)"
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return "a Python pickle (such as a PyTorch checkpoint in the legacy format)"
    if head.startswith(b"\x1f\x8b"):
        return "a gzip-compressed file (decompress it first)"
    if len(head) >= 10 and head[8:10] == b'{"' and int.from_bytes(head[:8], "little") < 1 << 30:
        return "a safetensors file (model weights, not a tokenizer)"
    if looks_like_model(head):
        return "a SentencePiece .model protobuf (load it with format='sentencepiece')"
    return None


def decode_text(data: bytes, path: str, what: str) -> str:
    """A text tokenizer file's content (``what``: its format, as the message
    names it); bytes that are not UTF-8 raise :class:`InputError` naming the
    offset and, when the magic number tells, what the file is instead.
    Replacing bytes would not make such a file readable, so that is not
    suggested.

    >>> decode_text(b"PK\\x03\\x04\\xff", "t.json", "tokenizer.json")
    Traceback (most recent call last):
    ...
    bytepair.errors.InputError: t.json: not a tokenizer.json file: it is a zip archive (such as a PyTorch checkpoint written by torch.save, or a wheel)
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        kind = named_format(data[:64])
        if kind:
            raise InputError(f"{path}: not a {what} file: it is {kind}") from None
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{path}: invalid UTF-8 at byte offset {e.start} (line {line}, byte 0x{data[e.start]:02X}): "
                         f"not a {what} file, which is UTF-8 text") from None
