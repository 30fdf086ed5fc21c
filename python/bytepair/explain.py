"""``Tokenizer.explain(text)``: how a word (or any text) is encoded, step by
step, as seed 001's "Encoding a new word" does by hand: the pre-tokens,
each one's starting symbols, every merge applied (its rank and the symbols
after it), the tokens and their ids.

The steps are derived in Python from the tokenizer's merges with the
reference implementation's merge rules (:mod:`bytepair.reference`:
``merge`` for the char model's in-order rule, ``merge_lowest_rank`` for
subword-nmt's, ``merge_lowest_first`` for tiktoken's and Hugging Face's);
the pre-tokens come from the core. The ids of an explanation are those of
``encode_ordinary(text)`` (the tests check it).

- **byte model**: pieces of the pattern, their bytes, then tiktoken's rule:
  the adjacent pair whose merged token has the lowest rank (= id) first; a
  piece that is a token is taken whole.
- **char model**: words, characters plus the end-of-word marker, then each
  merge in training order (``rank`` = its place, ``merge k`` = rank + 1);
  symbols left outside the vocabulary go to byte fallback or ``unk``.
- **pipelines** (Hugging Face ``tokenizer.json``): the normalized text, the
  pre-tokens (as the model sees them, e.g. ``Ġ`` for a byte-level space),
  then the lowest-ranked pair of the ``merges`` list first; characters
  outside the vocabulary become ``<0xNN>`` tokens (byte fallback) or ``unk``.
- **SentencePiece** ``.model`` files: the normalized text, its starting
  symbols (characters; user-defined pieces whole, never merged), then
  sentencepiece's rule: the adjacent pair that makes the piece of highest
  score first (leftmost on ties; ``piece N`` names the piece made); a run
  of unknown characters is one ``unk`` (or byte fallback).

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train(["the"] * 5 + ["dog"] * 3 + ["quick"], model="char", end_of_word="<w>", num_merges=7)
>>> print(tok.explain("dog"))
'dog' (char model)
piece 'dog'
  d · o · g · <w>
  merge 4: d + o -> do
  do · g · <w>
  merge 5: do + g -> dog
  dog · <w>
  merge 6: dog + <w> -> dog<w>
  dog<w>
  tokens: dog<w> = ids 17
>>> tok.explain("dog").ids == tok.encode("dog")
True
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from bytepair import _core, reference
from bytepair.errors import BytepairError
from bytepair.limits import check_text, replace_surrogates

Symbol = Union[str, bytes]


@dataclass
class Step:
    """One merge: ``left + right -> merged``, its ``rank`` (char and
    pipelines: its place in the merge list, 0 first; byte model: the merged
    token's id, tiktoken's rank) and the symbols after it."""

    rank: int  # a .model file's merges: the merged piece's id (merges go by its score)
    left: Symbol
    right: Symbol
    merged: Symbol
    symbols: List[Symbol]


@dataclass
class Piece:
    """One pre-token: its text as the model sees it, its ``span`` (characters
    of the original text), the starting ``symbols``, the ``steps``, the
    final ``tokens`` and their ``ids``; ``notes`` say what is not a merge
    (a whole-piece token, byte fallback, unknown characters, an added token)."""

    text: Symbol
    span: Tuple[int, int]
    symbols: List[Symbol] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)
    tokens: List[Symbol] = field(default_factory=list)
    ids: List[int] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)


@dataclass
class Explanation:
    """What :func:`explain` returns; ``str()`` prints the lesson."""

    text: str
    kind: str  # "byte", "char", "pipeline" or "sentencepiece" (a .model file)
    pieces: List[Piece]
    normalized: Optional[List[str]] = None  # pipelines: each stretch of text after the normalizer

    @property
    def ids(self) -> List[int]:
        """All ids, in order (= ``encode_ordinary(text)``)."""
        return [i for p in self.pieces for i in p.ids]

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready form (symbols as text, bytes with ``\\xNN`` escapes)."""
        def show(s: Any) -> Any:
            return [_show(x) for x in s] if isinstance(s, list) else _show(s)

        return {
            "text": self.text, "kind": self.kind, "normalized": self.normalized, "ids": self.ids,
            "pieces": [{
                "text": show(p.text), "span": list(p.span), "symbols": show(p.symbols), "tokens": show(p.tokens),
                "ids": p.ids, "notes": p.notes,
                "steps": [{"rank": s.rank, "left": show(s.left), "right": show(s.right), "merged": show(s.merged),
                           "symbols": show(s.symbols)} for s in p.steps],
            } for p in self.pieces],
        }

    def __str__(self) -> str:
        lines = [f"{self.text!r} ({self.kind} model)" if self.kind != "pipeline" else f"{self.text!r} (pipeline)"]
        if self.normalized is not None:
            lines.append("normalized: " + " | ".join(repr(n) for n in self.normalized))
        for p in self.pieces:
            lines.append(f"piece {_show(p.text)!r}")
            if p.symbols:
                lines.append("  " + " · ".join(_sym(s) for s in p.symbols))
            for s in p.steps:
                what = {"byte": f"rank {s.rank}", "sentencepiece": f"piece {s.rank}"}.get(self.kind, f"merge {s.rank + 1}")
                lines.append(f"  {what}: {_sym(s.left)} + {_sym(s.right)} -> {_sym(s.merged)}")
                lines.append("  " + " · ".join(_sym(x) for x in s.symbols))
            for note in p.notes:
                lines.append(f"  ({note})")
            lines.append("  tokens: " + " · ".join(_sym(t) for t in p.tokens) + " = ids " + " ".join(map(str, p.ids)))
        return "\n".join(lines)


_VISIBLE = str.maketrans({" ": "\u2423", "\n": "\\n", "\t": "\\t", "\r": "\\r"})


def _show(s: Any) -> str:
    return s.decode("utf-8", "backslashreplace") if isinstance(s, bytes) else str(s)


def _sym(s: Any) -> str:
    """A symbol as the lesson prints it: a space as ␣, line breaks and tabs escaped."""
    return _show(s).translate(_VISIBLE)


def _spans(text: str, words: List[str]) -> List[Tuple[int, int]]:
    """Each word's span, the words being substrings of ``text`` in order."""
    out, pos = [], 0
    for w in words:
        i = text.find(w, pos)
        if i < 0:  # pragma: no cover - the core's words are substrings
            i = pos
        out.append((i, i + len(w)))
        pos = i + len(w)
    return out


def explain(tok: Any, text: str, at: Optional[int] = None) -> Explanation:
    """How ``text`` is encoded by ``tok`` (special-token text as plain text,
    as ``encode_ordinary``), step by step. See the module docstring. With
    ``at`` (a character offset), only the piece that holds it is explained
    (``serve``'s clicked token): the text is still pre-tokenized whole.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("low lower lowest " * 10, num_merges=5)
    >>> e = explain(tok, " lowest")
    >>> [(_show(s.merged), s.rank) for s in e.pieces[0].steps][:2]
    [('lo', 256), ('low', 257)]
    >>> e.ids == tok.encode(" lowest")
    True
    """
    text = check_text(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = replace_surrogates(text)
    if tok.model == "pipeline":
        return _explain_pipeline(tok, text, at)
    if tok.model == "byte":
        return _explain_byte(tok, text, at)
    return _explain_char(tok, text, at)


def _skip(span: Tuple[int, int], at: Optional[int]) -> bool:
    """With ``at``, every piece but the one holding it is left out."""
    return at is not None and not span[0] <= at < max(span[1], span[0] + 1)


# ---------------------------------------------------------------- byte model


# what explaining needs of a tokenizer, made once per tokenizer (kept as long as it lives)
_TABLES: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()


def _cached(tok: Any, make: Callable[[Any], Any]) -> Any:
    if tok not in _TABLES:
        _TABLES[tok] = make(tok)
    return _TABLES[tok]


def _byte_ranks(tok: Any) -> Dict[bytes, int]:
    def make(tok: Any) -> Dict[bytes, int]:
        specials = set(tok.special_tokens.values())
        ranks: Dict[bytes, int] = {}
        for id_, token in sorted(tok.vocab().items()):
            if id_ not in specials:
                ranks.setdefault(token, id_)
        return ranks
    return _cached(tok, make)


def _explain_byte(tok: Any, text: str, at: Optional[int] = None) -> Explanation:
    ranks = _byte_ranks(tok)
    shift = 0
    if tok.add_prefix_space and text and not text.startswith(" "):
        text_seen, shift = " " + text, 1  # Hugging Face's ByteLevel(add_prefix_space=True)
    else:
        text_seen = text
    words = _core.split_words(text_seen, tok.pattern) if text_seen else []
    pieces = []
    for word, (a, b) in zip(words, _spans(text_seen, words)):
        data = word.encode("utf-8")
        if _skip((max(0, a - shift), b - shift), at):
            continue
        p = Piece(text=data, span=(max(0, a - shift), b - shift), symbols=[bytes([x]) for x in data])
        raw: List[tuple] = []
        parts = reference.merge_lowest_first(p.symbols, lambda left, right: ranks.get(left + right), steps=raw)
        p.steps = _steps(raw, p.symbols)
        if shift and a == 0:
            p.notes.append("a space was put before the text (add_prefix_space)")
        if data in ranks and parts != [data]:
            p.notes.append(f"the whole piece is a token (rank {ranks[data]}): tiktoken takes it as it is")
            parts = [data]
        p.tokens = parts
        p.ids = [ranks[x] for x in parts]
        pieces.append(p)
    return Explanation(text, "byte", pieces)


def _steps(raw: List[tuple], start: List[Symbol]) -> List[Step]:
    """``merge_lowest_first``'s (rank, index, parts after) as Steps."""
    out, before = [], start
    for rank, i, after in raw:
        out.append(Step(rank, before[i], before[i + 1], after[i], after))
        before = after
    return out


# ---------------------------------------------------------------- char model


def _char_model(tok: Any) -> "reference.Model":
    return _cached(tok, lambda tok: reference.Model(
        "char", list(tok.spec.base), tok.merges, special_tokens=dict(tok.special_tokens), pattern=None,
        end_of_word=tok.end_of_word, end_of_word_fused=tok.end_of_word_fused, byte_fallback=tok.byte_fallback,
        unk_token=tok.unk_token, merge_ids=tok.spec.merge_results, merge_rule=tok.merge_rule))


def _explain_char(tok: Any, text: str, at: Optional[int] = None) -> Explanation:
    model = _char_model(tok)
    words = _core.split_words(text, tok.pattern)
    ranks: Dict[Tuple[str, str], int] = {}
    if tok.merge_rule == "lowest-rank":
        for k, pair in enumerate(model.merges):
            ranks.setdefault(pair, k)
    pieces = []
    for word, span in zip(words, _spans(text, words)):
        if _skip(span, at):
            continue
        start = reference.initial_symbols(word, "char", tok.end_of_word, tok.end_of_word_fused)
        p = Piece(text=word, span=span, symbols=start)
        symbols = start
        if tok.merge_rule == "lowest-rank":
            raw: List[tuple] = []
            symbols = reference.merge_lowest_rank(start, ranks, steps=raw)
            for rank, after in raw:
                pair = model.merges[rank]
                p.steps.append(Step(rank, pair[0], pair[1], pair[0] + pair[1], after))
        else:
            for k, pair in enumerate(model.merges):  # seed 001's encode(): every rule in order
                after = reference.merge(symbols, pair)
                if after != symbols:
                    p.steps.append(Step(k, pair[0], pair[1], pair[0] + pair[1], after))
                    symbols = after
        index = span[0]
        for piece in symbols:
            if piece in model._ids:
                p.tokens.append(piece)
                p.ids.append(model._ids[piece])
            else:
                ids = model._unknown(piece, index)
                p.ids += ids
                if tok.byte_fallback:
                    fallback = [f"<0x{i - model._fallback_start:02X}>" for i in ids]
                    p.tokens += fallback
                    p.notes.append(f"{piece!r} is not in the vocabulary: byte fallback {' '.join(fallback)}")
                else:
                    p.tokens.append(tok.unk_token)
                    p.notes.append(f"{piece!r} is not in the vocabulary: {tok.unk_token}")
            index += len(piece)
        pieces.append(p)
    return Explanation(text, "char", pieces)


# ---------------------------------------------------------------- pipelines


def _pipeline_model(tok: Any) -> Dict[str, Any]:
    def make(tok: Any) -> Dict[str, Any]:
        m = tok.spec.description["model"]
        for option in ("continuing_subword_prefix", "end_of_word_suffix"):
            if m.get(option):
                raise BytepairError(f"explain does not support a BPE model with {option} ({m[option]!r}) yet")
        merges = tok.merges
        return {
            "vocab": dict(m.get("vocab") or {}),
            "ranks": {(a, b): k for k, (a, b) in enumerate(merges)},  # a pair listed twice: the last rank (as HF)
            "byte_fallback": bool(m.get("byte_fallback")),
            "unk": m.get("unk_token"),
            "fuse_unk": bool(m.get("fuse_unk")),
            "ignore_merges": bool(m.get("ignore_merges")),
        }
    return _cached(tok, make)


def _explain_pipeline(tok: Any, text: str, at: Optional[int] = None) -> Explanation:
    if tok.spec.description["model"].get("type") == "SentencePieceBPE":
        return _explain_sentencepiece(tok, text, at)
    bpe = _pipeline_model(tok)
    vocab = bpe["vocab"]
    pieces: List[Piece] = []
    normalized: List[str] = []
    for id_, norm, items in tok._core.pre_tokenize(text, True):
        if id_ is not None:
            content, span = items[0]
            if _skip(tuple(span), at):
                continue
            pieces.append(Piece(text=content, span=tuple(span), tokens=[content], ids=[id_],
                                notes=[f"added token {content!r}"]))
            continue
        normalized.append(norm)
        for word, span in items:
            if not _skip(tuple(span), at):
                pieces.append(_pipeline_piece(bpe, vocab, word, tuple(span)))
    return Explanation(text, "pipeline", pieces, normalized)


def _pipeline_piece(bpe: Dict[str, Any], vocab: Dict[str, int], word: str, span: Tuple[int, int]) -> Piece:
    p = Piece(text=word, span=span)
    if not word:
        return p
    symbols: List[str] = []
    pending = None  # an unk not yet placed (Hugging Face places it at the next known character)
    for c in word:
        if c in vocab:
            if pending is not None:
                symbols.append(pending)
                pending = None
            symbols.append(c)
            continue
        if bpe["byte_fallback"]:
            fallback = [f"<0x{b:02X}>" for b in c.encode("utf-8")]
            if all(f in vocab for f in fallback):
                symbols += fallback
                p.notes.append(f"{c!r} is not in the vocabulary: byte fallback {' '.join(fallback)}")
                continue
        if bpe["unk"] is not None:
            if bpe["unk"] not in vocab:
                raise BytepairError(f"the unk_token {bpe['unk']!r} is not in the vocabulary")
            if pending is not None and not bpe["fuse_unk"]:
                symbols.append(pending)
            pending = bpe["unk"]
            p.notes.append(f"{c!r} is not in the vocabulary: {bpe['unk']}")
        else:
            p.notes.append(f"{c!r} is not in the vocabulary and there is no unk_token: it is dropped")
    if pending is not None:
        symbols.append(pending)
    p.symbols = symbols
    ranks = bpe["ranks"]
    raw: List[tuple] = []
    parts = reference.merge_lowest_first(symbols, lambda left, right: ranks.get((left, right)), steps=raw)
    p.steps = _steps(raw, symbols)
    if bpe["ignore_merges"] and word in vocab:
        if parts != [word]:
            p.notes.append("the whole piece is a token: with ignore_merges it is taken as it is")
        parts = [word]
    p.tokens = parts
    p.ids = [vocab[t] for t in parts]
    return p


# ---------------------------------------------------------------- SentencePiece .model files

SP_NORMAL, SP_UNKNOWN, SP_USER_DEFINED, SP_UNUSED = 1, 2, 4, 5  # sentencepiece_model.proto's piece types


def _sp_model(tok: Any) -> Dict[str, Any]:
    def make(tok: Any) -> Dict[str, Any]:
        desc = tok.spec.description
        m = desc["model"]
        pieces = [(p, float(score), int(t)) for p, score, t in m["pieces"]]
        ids = {p: i for i, (p, _, t) in enumerate(pieces) if t in (SP_NORMAL, SP_USER_DEFINED, SP_UNUSED)}
        targets = {p: (score, i) for i, (p, score, t) in enumerate(pieces) if t in (SP_NORMAL, SP_UNUSED)}
        ws = "\u2581" if (desc.get("normalizer") or {}).get("escape_whitespaces", True) else " "
        # where no merge can cross (as the core cuts): before the space marker, or after it
        if all(ws not in p.lstrip(ws) for p in targets):
            cut = "before"
        elif all(ws not in p.rstrip(ws) for p in targets):
            cut = "after"
        else:
            cut = None
        if any(t == SP_UNUSED for _, _, t in pieces):
            cut = None  # unused pieces are split back by what the whole text's merges made of them
        user = sorted((p for p, _, t in pieces if t == SP_USER_DEFINED), key=len, reverse=True)
        return {"pieces": pieces, "ids": ids, "targets": targets, "ws": ws, "cut": cut, "user": user,
                "unk": next(i for i, (_, _, t) in enumerate(pieces) if t == SP_UNKNOWN),
                "byte_fallback": bool(m.get("byte_fallback"))}
    return _cached(tok, make)


def _sp_symbols(sp: Dict[str, Any], text: str) -> List[Tuple[str, bool]]:
    """The starting symbols: the longest user-defined piece at each place (frozen), else one character."""
    out, i = [], 0
    while i < len(text):
        match = next((u for u in sp["user"] if text.startswith(u, i)), None)
        if match:
            out.append((match, True))
            i += len(match)
        else:
            out.append((text[i], False))
            i += 1
    return out


def _sp_parts(sp: Dict[str, Any], symbols: List[Tuple[str, bool]]) -> List[List[Tuple[str, bool]]]:
    """Runs of symbols that no merge crosses (the whole text when that cannot be known)."""
    if sp["cut"] is None:
        return [symbols]
    ws, parts, prev_ws = sp["ws"], [[]], True  # type: ignore[var-annotated]
    for sym, frozen in symbols:
        if frozen:
            parts += [[(sym, frozen)], []]
            prev_ws = True
            continue
        is_ws = sym == ws
        cut = (is_ws and not prev_ws) if sp["cut"] == "before" else (not is_ws and prev_ws)
        if cut and parts[-1]:
            parts.append([])
        parts[-1].append((sym, frozen))
        prev_ws = is_ws
    return [p for p in parts if p]


def _sp_merge(sp: Dict[str, Any], start: List[Tuple[str, bool]], p: Piece) -> List[str]:
    """sentencepiece's BPE (bpe_model.cc): the adjacent pair whose concatenation is a normal or
    unused piece of highest score, leftmost on ties; unused pieces then split back into the
    pair they were made of. Steps' ``rank`` is the merged piece's id."""
    targets = sp["targets"]
    symbols = [s for s, _ in start]
    frozen = [f for _, f in start]
    made: Dict[str, Tuple[str, str]] = {}
    while True:
        best = None
        for i in range(len(symbols) - 1):
            if frozen[i] or frozen[i + 1]:
                continue
            merged = symbols[i] + symbols[i + 1]
            if merged in targets and (best is None or targets[merged][0] > best[0]):
                best = (targets[merged][0], i, merged)
        if best is None:
            break
        _, i, merged = best
        made[merged] = (symbols[i], symbols[i + 1])
        left, right = symbols[i], symbols[i + 1]
        symbols[i:i + 2] = [merged]
        frozen[i:i + 2] = [False]
        p.steps.append(Step(targets[merged][1], left, right, merged, list(symbols)))

    def resegment(s: str) -> List[str]:
        if s in targets and sp["pieces"][targets[s][1]][2] == SP_UNUSED and s in made:
            return resegment(made[s][0]) + resegment(made[s][1])
        return [s]

    out = [x for s in symbols for x in resegment(s)]
    if out != symbols:
        p.notes.append("unused pieces are split back into what they were merged from: " + " · ".join(map(_sym, out)))
    return out


def _explain_sentencepiece(tok: Any, text: str, at: Optional[int] = None) -> Explanation:
    """A ``.model`` file as sentencepiece encodes it: the normalized text, its starting symbols
    (characters, user-defined pieces whole), merges by score, then unknown runs fused into one
    unk (or byte fallback)."""
    sp = _sp_model(tok)
    normalized = [norm for _, norm, _ in tok._core.pre_tokenize(text, True)]
    ids_all, offsets = tok._core.encode_with_offsets(text, [], [])
    pieces: List[Piece] = []
    prev_unk = False
    used = 0  # ids of the encoding given to pieces so far
    for norm in normalized:
        for part in _sp_parts(sp, _sp_symbols(sp, norm)):
            p = Piece(text="".join(s for s, _ in part), span=(0, 0), symbols=[s for s, _ in part])
            for symbol in _sp_merge(sp, part, p):
                id_ = sp["ids"].get(symbol, sp["unk"])
                is_unk = id_ == sp["unk"]
                if is_unk and sp["byte_fallback"]:
                    fallback = [f"<0x{b:02X}>" for b in symbol.encode("utf-8")]
                    p.tokens += fallback
                    p.ids += [tok._core.token_to_id(f) for f in fallback]
                    p.notes.append(f"{symbol!r} is not in the vocabulary: byte fallback {' '.join(fallback)}")
                elif is_unk and prev_unk:
                    p.notes.append(f"{symbol!r} is not in the vocabulary: part of the unknown run before it")
                else:
                    p.tokens.append(sp["pieces"][id_][0] if not is_unk else sp["pieces"][sp["unk"]][0])
                    p.ids.append(id_)
                    if is_unk:
                        p.notes.append(f"{symbol!r} is not in the vocabulary: {sp['pieces'][sp['unk']][0]}")
                prev_unk = is_unk
            mine = offsets[used:used + len(p.ids)]
            end = offsets[used - 1][1] if used else 0
            p.span = (mine[0][0], mine[-1][1]) if mine else (end, end)
            used += len(p.ids)
            if not _skip(p.span, at):
                pieces.append(p)
    if used != len(ids_all):  # pragma: no cover - the tests check the ids against the encoding
        raise BytepairError("explain: the SentencePiece steps do not give the model's ids")
    return Explanation(text, "sentencepiece", pieces, normalized)
