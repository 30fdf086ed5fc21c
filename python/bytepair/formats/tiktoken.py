"""tiktoken's ``.tiktoken`` files: one ``base64(token bytes) rank`` per line.

A ``.tiktoken`` file holds the mergeable tokens of a byte model and nothing
else: no pre-tokenizer pattern, no special tokens. Loading keeps tiktoken's
ranks as ids. The published files (tiktoken's, Llama 3 and 4, Qwen,
Whisper: :mod:`bytepair.formats.tiktoken_known`) are recognised by sha256
and load with their owners' pattern and special tokens; any other file
needs ``pattern=`` (loading it without one raises, naming the patterns that
could apply) and has no special tokens unless given.

>>> import bytepair, tempfile, os
>>> tok = bytepair.Tokenizer.train("hello hello world", vocab_size=260, pattern="gpt2")
>>> path = os.path.join(tempfile.mkdtemp(), "tok.tiktoken")
>>> save(tok, path)
>>> bytepair.Tokenizer.from_spec(load(path, pattern="gpt2")).encode("hello world") == tok.encode("hello world")
True
"""

from __future__ import annotations

import binascii
import hashlib
import json
import os
from typing import Any, Dict, Mapping, Optional

from bytepair import _core
from bytepair._io import atomic_write_bytes, atomic_write_text, read_model_bytes
from bytepair.errors import BytepairError, FormatError
from bytepair.formats.convert import require_byte_model, unique_vocab
from bytepair.formats.tiktoken_known import CANDIDATE_PATTERNS, KNOWN_FILES, KnownFile
from bytepair.limits import MAX_UNUSED_IDS
from bytepair.spec import checked, from_byte_vocab

MAX_RANK = 2**32 - 2

ENDOFTEXT = "<|endoftext|>"




def _fail(path: str, line: int, what: str) -> FormatError:
    return FormatError(f"{path}: line {line}: not a valid .tiktoken file: {what}")


def parse(data: bytes, path: str) -> Dict[int, bytes]:
    """The ``{rank: token bytes}`` of a ``.tiktoken`` file's content.

    Lines are ``base64 rank`` (tiktoken's ``load_tiktoken_bpe``); blank lines
    are skipped. Every error names the file and the line.

    >>> parse(b"YQ== 0\\nYg== 1\\n", "f")
    {0: b'a', 1: b'b'}
    >>> parse(b"YQ== 0\\nYg==\\n", "f")
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: f: line 2: not a valid .tiktoken file: expected 'base64 rank', got 'Yg=='
    """
    ranks = _core.tiktoken_ranks(data)  # strictly regular lines, read in one pass; else the Python reading
    if ranks is None:
        ranks = _parse_fast(data)
    if ranks is None:
        ranks = _parse_checked(data, path)
    if not ranks:
        raise FormatError(f"{path}: not a valid .tiktoken file: it holds no tokens")
    largest = max(ranks)
    if largest + 1 - len(ranks) > MAX_UNUSED_IDS:  # ranks index a table: refuse one far above the others
        line = next(n for n, raw in enumerate(data.splitlines(), 1)
                    if any(f.isdigit() and int(f) == largest for f in raw.decode("ascii", "replace").split()[1:]))
        raise _fail(path, line, f"the rank {largest} is far above the file's {len(ranks)} tokens "
                                f"(at most {MAX_UNUSED_IDS} ranks may be unused)")
    return ranks


def _b64(text: str) -> Optional[bytes]:
    """Canonical base64 (what tiktoken writes) to bytes, else None."""
    if text == "=":
        return b""  # whisper's multilingual.tiktoken writes its empty token so
    try:
        token = binascii.a2b_base64(text)
    except (binascii.Error, ValueError):
        return None
    return token if token and binascii.b2a_base64(token, newline=False).decode("ascii") == text else None


def _parse_fast(data: bytes) -> Optional[Dict[int, bytes]]:
    """The common case of a valid file, or None to rerun the checked parse."""
    try:
        text = data.decode("ascii")
        ranks: Dict[int, bytes] = {}
        for line in text.splitlines():
            if not line:
                continue
            b64, rank = line.split()
            token = _b64(b64)
            if token is None or not rank.isdigit():
                return None
            ranks[int(rank)] = token
    except (UnicodeDecodeError, ValueError):
        return None
    if max(ranks, default=0) > MAX_RANK or len(set(ranks.values())) != len(ranks):
        return None
    if sum(1 for line in text.splitlines() if line.strip()) != len(ranks):
        return None  # a repeated rank, or a line of blanks
    return ranks


def _parse_checked(data: bytes, path: str) -> Dict[int, bytes]:
    ranks: Dict[int, bytes] = {}
    line_of_rank: Dict[int, int] = {}
    line_of_token: Dict[bytes, int] = {}
    for n, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("ascii")
        except UnicodeDecodeError as e:
            raise _fail(path, n, f"non-ASCII byte 0x{raw[e.start]:02X}") from None
        parts = line.split()
        if len(parts) != 2:
            raise _fail(path, n, f"expected 'base64 rank', got {line[:80]!r}")
        b64, rank_text = parts
        if not rank_text.isdigit():
            raise _fail(path, n, f"the rank {rank_text[:40]!r} is not a non-negative integer")
        digits = rank_text.lstrip("0")
        rank = int(digits or "0") if len(digits) <= 20 else MAX_RANK + 1  # int() reads at most 4300 digits
        if rank > MAX_RANK:
            raise _fail(path, n, f"the rank {rank_text[:40]} is too large (ranks are 32-bit)")
        token = _b64(b64)
        if token is None:
            raise _fail(path, n, f"{b64[:40]!r} is not valid base64")
        if rank in line_of_rank:
            raise _fail(path, n, f"rank {rank} is already the rank of line {line_of_rank[rank]}")
        if token in line_of_token:
            raise _fail(path, n, f"token {token!r} is already on line {line_of_token[token]}")
        ranks[rank] = token
        line_of_rank[rank] = n
        line_of_token[token] = n
    return ranks


SETTINGS_SUFFIX = ".settings.json"  # beside NAME.tiktoken: what the format cannot hold


def settings_path(path: str) -> str:
    """Where the pattern and special tokens of a ``.tiktoken`` file bytepair wrote are kept.

    >>> settings_path("out/tok.tiktoken")
    'out/tok.tiktoken.settings.json'
    """
    return os.fspath(path) + SETTINGS_SUFFIX


def read_settings(path: str, data: bytes) -> Optional[KnownFile]:
    """The settings file beside ``path`` (written by :func:`save`), or None
    when there is none; refused when it was written for other contents
    (a stale one beside a replaced file would change the ids silently)."""
    where = settings_path(path)
    if not os.path.isfile(where):
        return None
    try:
        d = json.loads(read_model_bytes(where).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise FormatError(f"{where}: not a valid settings file of {os.path.basename(path)}: {e}") from None
    pattern, specials, sha256 = ((d.get("pattern"), d.get("special_tokens"), d.get("sha256")) if isinstance(d, dict)
                                 else (None, None, None))
    if (not isinstance(pattern, str) or not isinstance(specials, dict) or not isinstance(sha256, str)
            or not all(isinstance(t, str) and type(i) is int and i >= 0 for t, i in specials.items())):
        raise FormatError(f"{where}: not a valid settings file of {os.path.basename(path)}: expected "
                          '{"sha256": hex digest of the file, "pattern": regex, "special_tokens": {text: id}}')
    actual = hashlib.sha256(data).hexdigest()
    if sha256 != actual:
        raise FormatError(f"{where}: written for a file with sha256 {sha256[:16]}..., but "
                          f"{os.path.basename(path)} has {actual[:16]}...: the file was replaced since; remove "
                          "the settings file and pass pattern= and special_tokens=")
    return KnownFile(os.path.basename(path), "bytepair", pattern, specials)


def known(data: bytes) -> Optional[KnownFile]:
    """What the owner's code says about a published file, by content."""
    return KNOWN_FILES.get(hashlib.sha256(data).hexdigest())


def from_tiktoken(
    path: str,
    pattern: Optional[str] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> Any:
    """The byte-model description (:mod:`bytepair.spec`) of a ``.tiktoken``
    file, with tiktoken's ranks as ids (``Tokenizer.from_tiktoken``).

    ``pattern``: a preset name or a regex; None takes the settings file
    bytepair wrote beside it (:func:`save`), else the owner's pattern of a
    published file (recognised by sha256), and refuses any other file.
    ``special_tokens``: ``{text: id}``; None takes the same settings' special
    tokens, else none.
    """
    path = os.fspath(path)
    data = read_model_bytes(path)
    ranks = parse(data, path)
    info = read_settings(path, data) or known(data)
    if pattern is None:
        if info is None:
            raise FormatError(
                f"{path}: a .tiktoken file holds no pre-tokenizer pattern, and this one is not a published file "
                f"bytepair knows by its sha256 ({hashlib.sha256(data).hexdigest()[:16]}...): pass pattern=, e.g. one "
                f"of the presets {', '.join(repr(p) for p in CANDIDATE_PATTERNS)} (the patterns of the published "
                "files with vocabularies of this format), or the regex the file was trained with"
            )
        pattern = info.pattern
    if special_tokens is None:
        special_tokens = dict(info.special_tokens) if info else {}
    special_tokens = dict(special_tokens)
    for text, id_ in special_tokens.items():
        if isinstance(id_, int) and id_ in ranks:
            raise BytepairError(
                f"{path}: special token {text!r} has id {id_}, which is already the rank of token {ranks[id_]!r}"
            )
    try:
        spec = from_byte_vocab(ranks, pattern, special_tokens)
        del ranks, data  # the file and its dict go before the core is built (a big vocabulary's peak)
        return checked(spec)
    except FormatError:
        raise
    except BytepairError as e:
        raise FormatError(f"{path}: {e}") from None


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """``Tokenizer.load(path, format="tiktoken")``: see :func:`from_tiktoken`."""
    return from_tiktoken(path, pattern=pattern, special_tokens=special_tokens)


def dumps(tok: Any) -> bytes:
    """The ``.tiktoken`` file content of a byte model (ranks = ids, special
    tokens left out, as tiktoken writes them)."""
    require_byte_model(tok, "the tiktoken format")
    tokens = unique_vocab(tok, "the tiktoken format")
    lines = []
    for id_, token in sorted(tokens.items()):
        b64 = binascii.b2a_base64(token, newline=False).decode("ascii") if token else "="
        lines.append(f"{b64} {id_}\n")
    return "".join(lines).encode("ascii")


def save(tok: Any, path: str) -> None:
    """Write ``tok`` (a byte model) as a ``.tiktoken`` file, and its pattern
    and special tokens, which the format cannot hold, beside it in
    ``NAME.tiktoken.settings.json`` (:func:`settings_path`), which
    :func:`load` reads back (tiktoken itself keeps them in code)."""
    data = dumps(tok)
    settings = {"sha256": hashlib.sha256(data).hexdigest(), "pattern": tok.pattern,
                "special_tokens": dict(tok.special_tokens)}
    atomic_write_text(settings_path(path), json.dumps(settings, ensure_ascii=False, indent=1) + "\n")
    atomic_write_bytes(path, data)


def to_tiktoken(tok: Any, name: Optional[str] = None) -> Any:
    """A ``tiktoken.Encoding`` that encodes exactly as ``tok`` (a byte model
    with every single-byte token; tiktoken itself panics on a byte it has no
    token for).

    >>> import bytepair
    >>> tok = bytepair.Tokenizer.train("hello world", vocab_size=262)
    >>> to_tiktoken(tok).encode("hello") == tok.encode("hello")
    True
    """
    import tiktoken

    require_byte_model(tok, "a tiktoken Encoding")
    tokens = unique_vocab(tok, "a tiktoken Encoding")
    ranks = {token: id_ for id_, token in tokens.items()}
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise BytepairError(
            "a tiktoken Encoding needs a token for every byte; this vocabulary has none for "
            + ", ".join(f"0x{b:02X}" for b in missing[:8])
            + (" ..." if len(missing) > 8 else "")
        )
    return tiktoken.Encoding(
        name or "bytepair",
        pat_str=tok.pattern,
        mergeable_ranks=ranks,
        special_tokens=dict(tok.special_tokens),
    )
