"""A text cut into displayable pieces, one per token, with their ids and
positions: what ``show``, ``serve`` and ``compare`` draw and measure.

Byte model: the pieces are the tokens of ``encode``. A token can hold part
of a UTF-8 character (``'🙂'`` may be four one-byte tokens). With
``partial="group"`` (the default) consecutive tokens are grouped until the
bytes end on a character boundary, so every piece is real text and the
pieces spell the input exactly; such a piece carries all its ids.
``partial="replace"`` shows each token alone, its incomplete bytes as
U+FFFD; ``partial="hex"`` shows them as ``\\xNN``.

Char model: the pieces of ``tokenize`` (with the ids of ``encode``), shown
as the input characters they cover (end-of-word markers are not in the
text). The whitespace between words is a ``gap`` piece without ids. An
end-of-word marker that is a token on its own covers no text: it is a
``marker`` piece shown as the marker. An unknown character is one piece
with its byte-fallback or ``unk`` ids (none when the tokenizer has neither).

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("hello world " * 20, vocab_size=266)
>>> [(p.text, p.kind) for p in pieces(tok, "hello 🙂")]
[('hello', 'token'), (' ', 'token'), ('🙂', 'token')]
>>> len(pieces(tok, "hello 🙂")[-1].ids)
4
>>> [p.text for p in pieces(tok, "🙂", partial="hex")]
['\\\\xf0', '\\\\x9f', '\\\\x99', '\\\\x82']
>>> plain(pieces(tok, "hello world"))
'[hello][ world]'
"""

from __future__ import annotations

import html
import re
import weakref
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from bytepair.errors import BytepairError
from bytepair.tokenizer import Tokenizer

PARTIAL_MODES = ("group", "replace", "hex")


class Piece:
    """One displayed piece: ``text`` to show, the token ``ids`` it stands
    for, its ``kind`` (token, special, gap, marker, unknown) and the
    characters ``start:end`` of the input it covers."""

    __slots__ = ("text", "ids", "kind", "start", "end")

    def __init__(self, text: str, ids: Optional[List[int]] = None, kind: str = "token",
                 start: int = 0, end: int = 0) -> None:
        self.text = text
        self.ids = ids if ids is not None else []
        self.kind = kind
        self.start = start
        self.end = end

    def _key(self) -> Tuple[str, List[int], str, int, int]:
        return (self.text, self.ids, self.kind, self.start, self.end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Piece) and self._key() == other._key()

    def __repr__(self) -> str:
        return "Piece(text=%r, ids=%r, kind=%r, start=%d, end=%d)" % self._key()

    @property
    def n_tokens(self) -> int:
        """Tokens this piece counts for (an unknown character without
        fallback counts as one, as ``tokenize`` gives it)."""
        if self.kind == "gap":
            return 0
        return len(self.ids) or 1


def _split_special(tok: Tokenizer, text: str, allowed: Iterable[str]) -> List[Tuple[str, bool]]:
    """``text`` cut around the allowed special tokens (leftmost, longest)."""
    names = sorted({t for t in allowed if t in tok.special_tokens}, key=len, reverse=True)
    if not names:
        return [(text, False)]
    out: List[Tuple[str, bool]] = []
    last = 0
    for m in re.finditer("|".join(re.escape(n) for n in names), text):
        if m.start() > last:
            out.append((text[last : m.start()], False))
        out.append((m.group(), True))
        last = m.end()
    if last < len(text):
        out.append((text[last:], False))
    return out


class _Vocab:
    """Token bytes and (char model) text -> id, computed once per tokenizer."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok = weakref.proxy(tok)
        self._bytes: Dict[int, bytes] = {}
        self._ids: Optional[Dict[str, int]] = None

    def token_bytes(self, id_: int) -> bytes:
        b = self._bytes.get(id_)
        if b is None:
            b = self._bytes[id_] = self.tok.decode_single_token_bytes(id_)
        return b

    def id_of(self, text: str) -> Optional[int]:
        """The smallest ordinary id whose token is ``text`` (char model)."""
        ids = self._ids
        if ids is None:
            # built whole, then published: threads of `bytepair serve` share this object, and one that saw a
            # half-filled table answered "no id" for known tokens (tokenize and encode then disagreed)
            specials = set(self.tok.special_tokens.values())
            ids = {}
            for id_, t in self.tok.vocab().items():
                if id_ not in specials:
                    ids.setdefault(t if isinstance(t, str) else t.decode("utf-8", "replace"), id_)
            self._ids = ids
        return ids.get(text)


_VOCABS: "weakref.WeakKeyDictionary[Tokenizer, _Vocab]" = weakref.WeakKeyDictionary()


def _vocab(tok: Tokenizer) -> _Vocab:
    v = _VOCABS.get(tok)
    if v is None:
        v = _VOCABS[tok] = _Vocab(tok)
    return v


def _byte_pieces(tok: Tokenizer, text: str, offset: int, partial: str, out: List[Piece]) -> None:
    vocab = _vocab(tok)
    ids = tok.encode_ordinary(text)
    raws = [vocab.token_bytes(i) for i in ids]
    pos = offset
    if partial != "group":
        errors = "replace" if partial == "replace" else "backslashreplace"
        buf = b""
        for id_, raw in zip(ids, raws):
            # character offsets: a token counts the characters it completes
            buf += raw
            try:
                n = len(buf.decode("utf-8"))
                buf = b""
            except UnicodeDecodeError:
                n = 0
            out.append(Piece(raw.decode("utf-8", errors), [id_], "token", pos, pos + n))
            pos += n
        return
    i = 0
    while i < len(ids):
        j = i + 1
        # extend while the next token starts inside a character (a UTF-8
        # continuation byte 0b10xxxxxx): the input is valid UTF-8, so the
        # group then ends on a character boundary
        while j < len(ids) and raws[j] and (raws[j][0] & 0xC0) == 0x80:
            j += 1
        s = b"".join(raws[i:j]).decode("utf-8", "replace")
        out.append(Piece(s, ids[i:j], "token", pos, pos + len(s)))
        pos += len(s)
        i = j


def _find_near(text: str, needles: List[Optional[str]], c: int) -> List[Tuple[str, int]]:
    """Where each needle is first found from ``c``: looked for near ``c``
    first (gaps between words are short), then in the rest of the text."""
    present = [n for n in needles if n is not None]
    near = [(n, text.find(n, c, c + 256 + len(n))) for n in present]
    if any(at >= 0 for _, at in near):
        return near
    return [(n, text.find(n, c)) for n in present]


def _pipeline_pieces(tok: Tokenizer, text: str, offset: int, out: List[Piece]) -> None:
    """A tokenizer.json pipeline's tokens placed by its own offsets: text
    between tokens (removed by the pre-tokenizer) is a gap, and a token
    whose span lies inside the previous one (a character split into byte
    tokens) joins that piece."""
    ids, spans = tok.encode_with_offsets(text, allowed_special=(), disallowed_special=())  # special-token text as text
    pos = 0
    for id_, (a, b) in zip(ids, spans):
        if b <= pos and out and out[-1].kind == "token" and out[-1].end > offset:
            out[-1].ids.append(id_)
            continue
        a = max(a, pos)
        if a > pos:
            out.append(Piece(text[pos:a], [], "gap", offset + pos, offset + a))
        out.append(Piece(text[a:b], [id_], "token", offset + a, offset + max(a, b)))
        pos = max(a, b)
    if pos < len(text):
        out.append(Piece(text[pos:], [], "gap", offset + pos, offset + len(text)))


def _char_pieces(tok: Tokenizer, text: str, offset: int, out: List[Piece]) -> None:
    vocab = _vocab(tok)
    toks = tok.tokenize(text)
    try:
        ids: Optional[List[int]] = tok.encode_ordinary(text)
    except BytepairError:
        ids = None  # an unknown character with neither byte fallback nor unk
    marker = tok.end_of_word or None
    j = 0  # next id
    c = 0  # next character of text
    for p in toks:
        known = vocab.id_of(p)
        if known is not None:
            n_ids = 1
        elif tok.byte_fallback:
            n_ids = len(p.encode("utf-8"))
        elif tok.unk_token is not None:
            n_ids = 1
        else:
            n_ids = 0
        if ids is not None:
            piece_ids = ids[j : j + n_ids]
        else:
            piece_ids = [known] if known is not None else []
        j += n_ids
        # where the piece is in the text: as it is, or without the marker;
        # the nearest, the longer on a tie (after a gap between words)
        kind = "token" if known is not None else "unknown"
        stripped = p[: -len(marker)] if marker and p.endswith(marker) else None
        if text.startswith(p, c):
            at, s = c, p
        elif stripped is not None and text.startswith(stripped, c):
            at, s = c, stripped
        else:
            found = [(at, -len(s), s) for s, at in _find_near(text, [p, stripped], c) if at >= 0]
            if not found:  # not expected: show the token where we are
                out.append(Piece(p, piece_ids, kind, offset + c, offset + c))
                continue
            at, _, s = min(found)
        if at > c:
            out.append(Piece(text[c:at], [], "gap", offset + c, offset + at))
        if not s:
            out.append(Piece(p, piece_ids, "marker", offset + at, offset + at))
        else:
            out.append(Piece(s, piece_ids, kind, offset + at, offset + at + len(s)))
        c = at + len(s)
    if ids is not None and j != len(ids):  # pragma: no cover - alignment is exact
        raise BytepairError("internal error: tokenize and encode disagree")
    if c < len(text):
        out.append(Piece(text[c:], [], "gap", offset + c, offset + len(text)))


def pieces(
    tok: Tokenizer,
    text: str,
    *,
    allowed_special: Iterable[str] = (),
    partial: str = "group",
) -> List[Piece]:
    """``text`` as pieces (see the module docstring). Special-token text is
    plain text unless the token is in ``allowed_special`` (``"all"`` for
    every one); then it is one ``special`` piece."""
    if partial not in PARTIAL_MODES:
        raise BytepairError(f"unknown partial mode {partial!r}: use one of {', '.join(PARTIAL_MODES)}")
    allowed = tok.special_tokens if allowed_special == "all" else allowed_special
    out: List[Piece] = []
    pos = 0
    for part, special in _split_special(tok, text, allowed):
        if special:
            out.append(Piece(part, [tok.special_tokens[part]], "special", pos, pos + len(part)))
        elif tok.model == "pipeline":
            _pipeline_pieces(tok, part, pos, out)
        elif tok.model == "byte":
            _byte_pieces(tok, part, pos, partial, out)
        else:
            _char_pieces(tok, part, pos, out)
        pos += len(part)
    return out


def all_ids(ps: Sequence[Piece]) -> List[int]:
    """The ids of the pieces, in order."""
    return [i for p in ps for i in p.ids]


# ---------------------------------------------------------------- rendering

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(s: str) -> str:
    """Control characters (other than newline and tab) as ``\\xNN``, so
    that token text cannot drive the terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", s)


def ids_text(p: Piece) -> str:
    """A piece's ids as shown: ``12``, ``240+159`` (grouped), ``?`` (none)."""
    return "+".join(map(str, p.ids)) if p.ids else "?"


def plain(ps: Sequence[Piece]) -> str:
    """Pieces without colour: each token in brackets, gaps as they are."""
    return "".join(visible(p.text) if p.kind == "gap" else f"[{visible(p.text)}]" for p in ps)


# 256-colour pastel backgrounds with black text; specials white on red
ANSI_COLOURS = ["\x1b[38;5;16;48;5;229m", "\x1b[38;5;16;48;5;153m", "\x1b[38;5;16;48;5;194m",
                "\x1b[38;5;16;48;5;225m", "\x1b[38;5;16;48;5;223m"]
ANSI_SPECIAL = "\x1b[1;97;41m"
ANSI_DIM = "\x1b[2;4m"
ANSI_RESET = "\x1b[0m"


def _ansi_style(p: Piece, k: int) -> str:
    if p.kind == "special":
        return ANSI_SPECIAL
    if p.kind in ("marker", "unknown"):
        return ANSI_DIM + ANSI_COLOURS[k % len(ANSI_COLOURS)]
    return ANSI_COLOURS[k % len(ANSI_COLOURS)]


def _ansi_wrap(text: str, style: str) -> str:
    # reset before each newline so the colour does not run to the line end
    return "\n".join(style + line + ANSI_RESET if line else "" for line in text.split("\n"))


def ansi(ps: Sequence[Piece]) -> str:
    """Pieces as coloured terminal text (colours cycle from token to token)."""
    out, k = [], 0
    for p in ps:
        if p.kind == "gap":
            out.append(visible(p.text))
            continue
        out.append(_ansi_wrap(visible(p.text), _ansi_style(p, k)))
        k += 1
    return "".join(out)


def ansi_ids(ps: Sequence[Piece], colour: bool) -> str:
    """The ids of the pieces on one line, in their pieces' colours."""
    out, k = [], 0
    for p in ps:
        if p.kind == "gap":
            continue
        out.append(_ansi_wrap(ids_text(p), _ansi_style(p, k)) if colour else ids_text(p))
        k += 1
    return " ".join(out)


HTML_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
.tokens { font-family: ui-monospace, monospace; white-space: pre-wrap; word-break: break-all;
          line-height: 1.9; font-size: 15px; }
.tokens span { border-radius: 3px; padding: 1px 0; }
.c0 { background: #fff3a8; } .c1 { background: #b9dcff; } .c2 { background: #c9f2c7; }
.c3 { background: #ffd1ec; } .c4 { background: #ffd9b0; }
.special { background: #c62828; color: #fff; font-weight: bold; }
.marker, .unknown { opacity: .65; text-decoration: underline dotted; }
.ids { font-family: ui-monospace, monospace; font-size: 13px; line-height: 1.9; }
.ids span { border-radius: 3px; padding: 1px 3px; margin-right: 2px; }
.meta { color: #555; }
"""


def html_spans(ps: Sequence[Piece]) -> str:
    """One ``<span>`` per piece with its ids in ``title`` (``id 12``,
    ``ids 240 159 153 130`` for a group, ``no id``); gaps as plain text."""
    out, k = [], 0
    for p in ps:
        text = html.escape(visible(p.text))
        if p.kind == "gap":
            out.append(text)
            continue
        cls = f"c{k % 5}" + ("" if p.kind == "token" else f" {p.kind}")
        label = ("ids " if len(p.ids) > 1 else "id ") + " ".join(map(str, p.ids)) if p.ids else "no id"
        if p.kind == "special":
            label += " (special token)"
        out.append(f'<span class="{cls}" title="{label}">{text}</span>')
        k += 1
    return "".join(out)


def html_ids(ps: Sequence[Piece]) -> str:
    """The ids, each coloured as its piece."""
    out, k = [], 0
    for p in ps:
        if p.kind == "gap":
            continue
        out.append(f'<span class="c{k % 5}" title="{html.escape(visible(p.text))}">{ids_text(p)}</span>')
        k += 1
    return " ".join(out)
