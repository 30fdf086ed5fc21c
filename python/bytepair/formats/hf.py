"""Hugging Face ``tokenizer.json``: export and import.

**Export.** A byte model becomes GPT-2's layout: tokens written with the
byte-to-unicode map, pre-tokenizer ``Sequence[Split(regex, "Isolated"),
ByteLevel(use_regex=false)]`` (or ``ByteLevel(use_regex=true)`` alone when
the pattern is Hugging Face's own GPT-2 regex), a ``BPE`` model with the same
ids as bytepair, the merges as pairs and ``ignore_merges=true`` (a piece that
is a token is that token, tiktoken's rule), special tokens as added tokens,
and a ``ByteLevel`` decoder. A char model with a fused end-of-word marker (or
none) becomes a ``BPE`` model with ``end_of_word_suffix`` and a pre-tokenizer
that splits exactly as ``str.split()`` does. Patterns are translated to
Oniguruma's dialect (:mod:`bytepair.regex_dialects`) so that Hugging
Face splits text exactly as bytepair does.

**Import.** Byte-level BPE files (GPT-2, RoBERTa-like, Llama 3-like, and
files ``tokenizers`` trained itself), including merges written as ``"a b"``.
Ids are kept. Whatever would make bytepair's ids differ from Hugging Face's
is refused with a ``FormatError`` that says why: ``add_prefix_space=true``
after a ``Split`` (alone, the default ``ByteLevel()``, it is kept: bytepair's
``add_prefix_space``), normalizers, dropout, added tokens that strip whitespace, pre-tokenizers
other than ``ByteLevel`` and one ``Split``, and merge lists whose order does
not match the ids of the tokens they make. Post-processors, truncation and
padding are not applied by bytepair: a warning says so, and bytepair's ids
are then those of ``encode(text, add_special_tokens=False)``.

>>> import bytepair, json
>>> tok = bytepair.Tokenizer.train("hello hello world", vocab_size=260, pattern="gpt2")
>>> d = json.loads(dumps(tok))
>>> d["model"]["type"], d["model"]["merges"][0]
('BPE', ['h', 'e'])
"""

from __future__ import annotations

import json
import os
import re
import warnings
from dataclasses import replace
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple, Union

from bytepair._io import UnreadDict, UnreadList, atomic_write_text, check_json_text, parse_json, read_model_bytes
from bytepair.formats.magic import decode_text
from bytepair.errors import BytepairError, FormatError, UnsupportedComponentError
from bytepair.formats.convert import (
    bytes_to_unicode,
    byte_ranks,
    check_merges_derived,
    merge_not_derived,
    unique_vocab,
    merges_as_ids,
)
from bytepair.limits import check_unused_ids
from bytepair.regex_dialects import from_onig, to_onig
from bytepair.patterns import PRESETS, preset_name
from bytepair.spec import PipelineSpec, checked, checked_pipeline, from_byte_vocab, from_dict, vocabulary_holes
from bytepair.formats.sentencepiece import hf_description
from bytepair.formats.subword_nmt import reapplied_merges
from bytepair import _core

# Hugging Face's ByteLevel(use_regex=true) pattern (pre_tokenizers/byte_level.rs)
HF_GPT2_PATTERN = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

# the characters of Python's str.isspace(), as a class: Hugging Face's
# WhitespaceSplit uses Rust's char::is_whitespace, which lacks U+001C..U+001F
# (the same in every Python version bytepair supports; tests check it)
_PY_SPACES = [chr(c) for c in [*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680,
                               *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]]


def _class_of(chars: List[str]) -> str:
    out = []
    i = 0
    while i < len(chars):
        j = i
        while j + 1 < len(chars) and ord(chars[j + 1]) == ord(chars[j]) + 1:
            j += 1
        lo, hi = ord(chars[i]), ord(chars[j])
        out.append(f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}")
        i = j + 1
    return "[" + "".join(out) + "]"


PY_WHITESPACE_RUN = _class_of(_PY_SPACES) + "+"

BYTE_LEVEL_DECODER = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
WHAT = "a Hugging Face tokenizer.json"


# ---------------------------------------------------------------------------- export


def _added_tokens(tok: Any) -> List[Dict[str, Any]]:
    return [
        {
            "id": id_,
            "content": text,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for text, id_ in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    ]


def _with_specials(tok: Any, vocab: Dict[str, int]) -> Dict[str, int]:
    """The model's vocab with the special tokens added: Hugging Face ignores
    the ids of ``added_tokens`` when it loads a file and numbers them after
    the model's vocab, unless their text is in the model's vocab."""
    out = dict(vocab)
    for text, id_ in sorted(tok.special_tokens.items(), key=lambda kv: kv[1]):
        if text in out:
            raise FormatError(
                f"{WHAT} cannot hold this tokenizer: the special token {text!r} is written as the token "
                f"with id {out[text]} is, and Hugging Face finds special tokens by their text"
            )
        out[text] = id_
    return out


def _template(tok: Any) -> Optional[Dict[str, Any]]:
    """The post-processor adding what ``encode(text, add_special_tokens=True)`` adds (tekken.json's BOS), or None."""
    spec = tok.spec
    before, after = tuple(getattr(spec, "prefix_tokens", ())), tuple(getattr(spec, "suffix_tokens", ()))
    if not before and not after:
        return None
    special = lambda t: {"SpecialToken": {"id": t, "type_id": 0}}  # noqa: E731
    single = [*map(special, before), {"Sequence": {"id": "A", "type_id": 0}}, *map(special, after)]
    pair = single + [*map(special, before), {"Sequence": {"id": "B", "type_id": 1}}, *map(special, after)]
    ids = tok.special_tokens
    return {"type": "TemplateProcessing", "single": single, "pair": pair,
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in (*before, *after)}}


def _split(pattern: str, exact_findall: bool) -> Dict[str, Any]:
    """A ``Split`` pre-tokenizer giving the pieces ``regex.findall`` gives.

    ``Isolated`` keeps the text between matches as pieces too, so it equals
    findall only for patterns that match every character (the presets);
    otherwise ``Removed`` with ``invert=true`` keeps the matches only."""
    try:
        onig = to_onig(pattern)
    except ValueError as e:
        raise FormatError(f"{WHAT} cannot hold the pattern {pattern!r}: {e}") from None
    if exact_findall:
        return {"type": "Split", "pattern": {"Regex": onig}, "behavior": "Removed", "invert": True}
    return {"type": "Split", "pattern": {"Regex": onig}, "behavior": "Isolated", "invert": False}


def _document(tok: Any, pre: Dict[str, Any], decoder: Optional[Dict[str, Any]], *, end_of_word_suffix: Optional[str],
              ignore_merges: bool, vocab: Dict[str, int], merges: List[List[str]]) -> Dict[str, Any]:
    """A whole ``tokenizer.json`` of a BPE model (both models' exports): the
    special tokens become added tokens and join the vocabulary."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _added_tokens(tok),
        "normalizer": None,
        "pre_tokenizer": pre,
        "post_processor": _template(tok),
        "decoder": decoder,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": end_of_word_suffix,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": ignore_merges,
            "vocab": _with_specials(tok, vocab),
            "merges": merges,
        },
    }


def _byte_json(tok: Any) -> Dict[str, Any]:
    tokens = unique_vocab(tok, WHAT)
    ranks = {b: i for i, b in tokens.items()}
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise FormatError(
            f"{WHAT} cannot hold this tokenizer exactly: it has no token for byte 0x{missing[0]:02X}, "
            "which Hugging Face would silently drop where bytepair raises an error"
        )
    merges = []
    made = set()
    for left, right in merges_as_ids(tok):
        merged = tokens[left] + tokens[right]
        merges.append((ranks[merged], tokens[left], tokens[right]))
        made.add(merged)
    merges.sort(key=lambda m: m[0])  # Hugging Face ranks merges by their order
    for token in tokens.values():
        if len(token) > 1 and token not in made:
            raise FormatError(
                f"{WHAT} cannot hold this tokenizer exactly: the token {token!r} is not made by any merge"
            )
    if tok.add_prefix_space and tok.pattern not in (HF_GPT2_PATTERN, _NO_SPLIT):
        raise FormatError(
            f"{WHAT} cannot hold this tokenizer exactly: it puts a space before each text (add_prefix_space), "
            "which Hugging Face does only with its own GPT-2 regex (ByteLevel(use_regex=true)) or no split; "
            f"this pattern is {tok.pattern!r}"
        )
    if tok.pattern in (HF_GPT2_PATTERN, _NO_SPLIT) and (tok.add_prefix_space or tok.pattern == HF_GPT2_PATTERN):
        pre: Dict[str, Any] = {
            "type": "ByteLevel",
            "add_prefix_space": tok.add_prefix_space,
            "trim_offsets": True,
            "use_regex": tok.pattern == HF_GPT2_PATTERN,
        }
    else:
        pre = {
            "type": "Sequence",
            "pretokenizers": [
                _split(tok.pattern, exact_findall=preset_name(tok.pattern) is None),
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ],
        }
    return _document(
        tok,
        pre,
        dict(BYTE_LEVEL_DECODER),
        end_of_word_suffix=None,
        ignore_merges=True,
        vocab={bytes_to_unicode(b): i for i, b in sorted(tokens.items())},
        merges=[[bytes_to_unicode(l), bytes_to_unicode(r)] for _, l, r in merges],
    )


def _char_json(tok: Any) -> Dict[str, Any]:
    if tok.end_of_word is not None and not tok.end_of_word_fused:
        raise FormatError(
            f"{WHAT} can hold char models whose end-of-word marker is fused to the last character "
            f"(end_of_word_fused=True, Hugging Face's end_of_word_suffix) or absent; this one's marker "
            f"{tok.end_of_word!r} is a separate symbol"
        )

    if tok.byte_fallback and tok.end_of_word is not None:
        raise FormatError(
            f"{WHAT} cannot hold a char model with byte fallback and a fused end-of-word marker exactly: "
            "Hugging Face's BPE falls back to the bytes of the last character and the marker together, and "
            "gives the marker's bytes offsets past the word"
        )
    reapplied = reapplied_merges(tok.merges)
    if reapplied:
        k, j = reapplied[0]
        raise FormatError(
            f"{WHAT} cannot hold this tokenizer exactly: merge {k + 1} makes a symbol that merge {j + 1} uses, "
            "and Hugging Face, which merges by rank, would segment some words differently"
        )
    vocab = unique_vocab(tok, WHAT)
    merges = [[vocab[l], vocab[r]] for l, r in merges_as_ids(tok)]  # pairs: spaces in tokens are fine
    if tok.pattern is None:
        pre = {"type": "Split", "pattern": {"Regex": PY_WHITESPACE_RUN}, "behavior": "Removed", "invert": False}
    else:
        pre = _split(tok.pattern, exact_findall=True)
    eow = tok.end_of_word
    # decoding: the marker is a space between words (BPEDecoder), else the pieces are joined (Fuse, where
    # Hugging Face's default joins tokens with spaces); byte-fallback tokens <0xNN> become their bytes first
    decoder: Dict[str, Any] = {"type": "BPEDecoder", "suffix": eow} if eow else {"type": "Fuse"}
    if tok.byte_fallback:
        decoder = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, decoder]}
    doc = _document(
        tok,
        pre,
        decoder,
        end_of_word_suffix=eow,
        ignore_merges=False,
        vocab={t: i for i, t in sorted(vocab.items())},
        merges=merges,
    )
    # unknown characters: their UTF-8 bytes as <0xNN> tokens (the marker's too when it is fused to that
    # character, in both), else the unknown token, one per character (fuse_unk=false)
    doc["model"]["byte_fallback"] = bool(tok.byte_fallback)
    doc["model"]["unk_token"] = tok.unk_token
    return doc


def to_json(tok: Any) -> Dict[str, Any]:
    """The ``tokenizer.json`` content of ``tok`` as a dict."""
    if getattr(tok, "model", None) == "pipeline":
        return _pipeline_json(tok.spec)
    return _byte_json(tok) if tok.model == "byte" else _char_json(tok)


def _pipeline_json(spec: PipelineSpec) -> Dict[str, Any]:
    """A pipeline's ``tokenizer.json`` object (Hugging Face loads it with the same ids): a SentencePiece
    model's as Hugging Face's components. Refused: a GGUF tokenizer whose special tokens llama.cpp cuts its own
    way (``special_cut``: Hugging Face would cut them otherwise), and one whose pre-tokenizer runs one of
    llama.cpp's hand-written routines (``LlamaSplit``)."""
    description = spec.description
    if _llama_split_stages(description.get("pre_tokenizer")):
        raise FormatError(f"{spec.path}: a tokenizer.json cannot hold this tokenizer exactly: its "
                          "pre-tokenizer runs one of llama.cpp's hand-written splitting routines (LlamaSplit), "
                          "which Hugging Face does not have")
    if description.get("special_cut") is not None:
        raise FormatError(f"{spec.path}: a tokenizer.json cannot hold this tokenizer exactly: llama.cpp "
                          "cuts its special tokens out of the text longest first (some overlap) or strips ASCII "
                          "whitespace beside them, and Hugging Face's cut gives other ids")
    if (description.get("model") or {}).get("type") == "SentencePieceBPE":
        return hf_description(description)
    return json.loads(json.dumps(description))  # a copy


def _llama_split_stages(pre: Any) -> List[str]:
    """The routines of the bytepair-only ``LlamaSplit`` stages in a pre-tokenizer description (GGUF files).

    >>> _llama_split_stages({"type": "Sequence", "pretokenizers": [{"type": "LlamaSplit", "routine": "kimi-k2"}]})
    ['kimi-k2']
    """
    if not isinstance(pre, dict):
        return []
    if pre.get("type") == "LlamaSplit":
        return [str(pre.get("routine"))]
    return [r for p in pre.get("pretokenizers") or [] for r in _llama_split_stages(p)]


def as_pipeline(tok: Any) -> PipelineSpec:
    """The pipeline description (:class:`~bytepair.spec.PipelineSpec`, a
    ``tokenizer.json`` object) of exactly the tokenizer ``tok``: the same ids
    from ``encode``, ``encode_ordinary`` and ``count``, the same ``decode``
    and offsets, when the core's pipeline runs it, and the same ids in
    Hugging Face ``tokenizers``. A byte model is ``Split(pattern) +
    ByteLevel(use_regex=false)`` (or HF's own ``ByteLevel`` for its GPT-2
    regex or a prefix space), a ``BPE`` model over byte-level strings with
    ``ignore_merges`` and a ``ByteLevel`` decoder; a char model is a ``BPE``
    model with ``end_of_word_suffix`` (its fused marker) and a ``BPEDecoder``
    (no marker: ``Fuse``, the pieces joined), with ``byte_fallback``
    (``ByteFallback`` decoder first) and ``unk_token`` when the model has them.
    Special tokens are added tokens.

    What no pipeline runs exactly is refused with a ``FormatError`` naming it
    (docs/decisions.md, "A byte or char model as a pipeline"): a separate
    end-of-word marker (the seeds' layout), byte fallback together with a
    fused marker, merges that remake a symbol an earlier merge uses, two ids
    with one token, ``add_prefix_space`` with a pattern other than HF's GPT-2
    regex, a multi-byte token no merge makes. A pipeline's own description
    is returned as it is.

    >>> import bytepair
    >>> tok = bytepair.Tokenizer.train("hello hello world", vocab_size=262)
    >>> spec = as_pipeline(tok)
    >>> spec.description["model"]["type"], spec.description["decoder"]["type"]
    ('BPE', 'ByteLevel')
    >>> bytepair.Tokenizer.from_spec(spec).encode("hello world") == tok.encode("hello world")
    True
    """
    if getattr(tok, "model", None) == "pipeline":
        return tok.spec
    return PipelineSpec(to_json(tok), f"<the pipeline of a {tok.model} model>")


def dumps(tok: Any) -> str:
    """The ``tokenizer.json`` text of ``tok``."""
    return json.dumps(to_json(tok), ensure_ascii=False, indent=2) + "\n"


def save(tok: Any, path: str) -> None:
    """Write ``tok`` as a Hugging Face ``tokenizer.json`` (atomically)."""
    atomic_write_text(path, dumps(tok))


# ---------------------------------------------------------------------------- import


class _Fail:
    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, what: str) -> FormatError:
        return FormatError(f"{self.path}: not a tokenizer.json bytepair can load exactly: {what}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 2**32 - 2


def _merge_list(model: Dict[str, Any], fail: _Fail) -> List[Any]:
    """``model.merges`` as the file has it, after checking that it is a list."""
    if "merges" not in model:  # as Hugging Face ("Missing vocab/merges"): no merges would encode silently
        raise fail("field 'model.merges' is missing (a BPE model needs both vocab and merges)")
    raw = model["merges"]
    if not isinstance(raw, list):
        raise fail("field 'model.merges' must be a list")
    return raw.read() if isinstance(raw, UnreadList) else raw  # plain: the core reads a list's items directly


def _merges(model: Dict[str, Any], fail: _Fail) -> List[Tuple[str, str]]:
    raw = _merge_list(model, fail)
    out = []
    for k, m in enumerate(raw):
        if isinstance(m, str):  # legacy form "left right"
            parts = m.split(" ")
            if len(parts) != 2 or not all(parts):
                raise fail(f"model.merges[{k}] must be \"left right\" (one space), got {m!r}")
            out.append((parts[0], parts[1]))
        elif isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) and x for x in m):
            out.append((m[0], m[1]))
        else:
            raise fail(f"model.merges[{k}] must be a pair of non-empty strings, got {m!r}")
    return out


def _vocab(model: Dict[str, Any], fail: _Fail) -> Dict[str, int]:
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise fail("field 'model.vocab' must be an object mapping tokens to ids")
    if isinstance(vocab, UnreadDict):
        vocab = vocab.read()  # plain: the core reads a dict's items directly
    if _core.hf_vocab_ok(vocab):  # the core's one pass; the loop below names what is wrong
        return vocab
    seen: Dict[int, str] = {}
    for token, id_ in vocab.items():
        if not _is_int(id_):
            raise fail(f"model.vocab[{token!r}] must be an id (a non-negative integer), got {id_!r}")
        if id_ in seen:
            raise fail(f"model.vocab gives the id {id_} to both {seen[id_]!r} and {token!r}")
        if not token:
            raise fail("model.vocab has an empty token")
        seen[id_] = token
    return vocab


def _added(d: Dict[str, Any], vocab: Dict[str, int], fail: _Fail) -> Dict[str, int]:
    """The added tokens with the ids Hugging Face gives them when it loads
    the file: the id of the same text in the model's vocab, else the next id
    after the model's vocab (``AddedVocabulary::add_tokens``); the ids
    written in ``added_tokens`` are not used. A written id that differs is
    reported with a warning."""
    raw = d.get("added_tokens") or []
    if not isinstance(raw, list):
        raise fail("field 'added_tokens' must be a list")
    out: Dict[str, int] = {}
    size = len(vocab)
    top = -1  # max(out.values()), kept as it grows (recomputing it made many added tokens quadratic)
    # the first added token whose written id Hugging Face does not give (index, content, written id, HF's id),
    # and how many there are: one warning names the first
    first_moved: Optional[Tuple[int, str, Any, int]] = None
    moved = 0
    for k, t in enumerate(raw):
        if not isinstance(t, dict) or not isinstance(t.get("content"), str) or not _is_int(t.get("id")):
            raise fail(f"added_tokens[{k}] must be an object with a 'content' string and an 'id'")
        if not t["content"]:
            continue  # Hugging Face ignores it
        for opt in ("single_word", "lstrip", "rstrip"):
            if t.get(opt):
                raise fail(
                    f"added_tokens[{k}] ({t['content']!r}) has {opt}=true; bytepair's special tokens "
                    "never absorb surrounding whitespace, so the ids would differ"
                )
        if t["content"] in out:
            continue
        if t["content"] in vocab:
            id_ = vocab[t["content"]]
        elif top >= size:
            id_ = top + 1
        else:
            id_ = size
        if id_ != t["id"]:
            first_moved = first_moved or (k, t["content"], t["id"], id_)
            moved += 1
        out[t["content"]] = id_
        top = max(top, id_)
    if first_moved is not None:  # one warning, however many (a file may hold 10^5 added tokens)
        k, content, written, given = first_moved
        more = f" ({moved - 1} more added tokens are moved the same way)" if moved > 1 else ""
        warnings.warn(
            f"{fail.path}: added_tokens[{k}] ({content!r:.80}) says id {written}, but Hugging Face gives it the "
            f"id {given} (the next id after model.vocab); bytepair does as Hugging Face does{more}",
            stacklevel=5,
        )
    _check_match_order(raw, fail)
    return out


def _check_match_order(raw: List[Any], fail: _Fail) -> None:
    """Hugging Face matches the added tokens with ``normalized=false`` first
    and the others in the gaps left; the byte model matches all of them in
    one leftmost-longest pass, which is the same unless a token of one kind
    can overlap one of the other in some text (one holds the other, or one
    ends with the other's start): then a FormatError (the pipeline runs it)."""
    kinds: Tuple[set, set] = (set(), set())
    for t in raw:
        if t["content"]:
            kinds[bool(t.get("normalized", True))].add(t["content"])
    first, second = kinds
    if not first or not second:
        return
    # characters compared; past it (or past 50,000 pairs), refused: the pipeline engine runs every file exactly
    budget = 1_000_000 if len(first) * len(second) <= 50_000 else -1
    if budget < 0:
        raise fail("too many added tokens with and without normalized=true to check that they never overlap")
    for a in first:
        for b in second:
            budget -= len(a) + len(b) + min(len(a), len(b)) ** 2
            if budget < 0:
                raise fail("too many or too long added tokens with and without normalized=true to check "
                           "that they never overlap")
            if a in b or b in a or any(a.endswith(b[:k]) or b.endswith(a[:k])
                                       for k in range(1, min(len(a), len(b)))):
                raise fail(
                    f"the added tokens {a!r} (normalized=false) and {b!r} (normalized=true) can overlap; "
                    "Hugging Face matches the first kind first, the byte model both at once"
                )


def _unsupported(kind: str, value: Any, why: str, fail: _Fail) -> FormatError:
    name = value.get("type") if isinstance(value, dict) else value
    return fail(f"{kind} {name!r} is not supported: {why}")


def _byte_level_opts(pre: Dict[str, Any]) -> Tuple[bool, bool]:
    """(use_regex, add_prefix_space) of a ByteLevel pre-tokenizer, with
    Hugging Face's defaults (both true)."""
    return bool(pre.get("use_regex", True)), bool(pre.get("add_prefix_space", True))


def _split_pattern(split: Dict[str, Any], where: str, fail: _Fail) -> Tuple[str, bool]:
    """(pattern for bytepair, is an Isolated split) of a Split pre-tokenizer."""
    pat = split.get("pattern")
    if isinstance(pat, dict) and isinstance(pat.get("Regex"), str):
        onig = pat["Regex"]
        for name, regex in PRESETS.items():
            if to_onig(regex) == onig:
                fancy = regex
                break
        else:
            try:
                fancy = from_onig(onig)
            except ValueError as e:
                raise fail(f"{where}: the regex {onig!r} cannot be translated exactly: {e}") from None
    elif isinstance(pat, dict) and isinstance(pat.get("String"), str) and pat["String"]:
        fancy = re.escape(pat["String"])
    else:
        raise fail(f"{where}.pattern must be {{\"Regex\": ...}} or {{\"String\": ...}}, got {pat!r}")
    behavior = split.get("behavior")
    invert = bool(split.get("invert", False))
    if behavior == "Isolated" and not invert:
        if _drops_text(_covering(fancy)):
            raise fail(
                f"{where}: the regex {pat.get('Regex', pat.get('String'))!r} can match the empty string; "
                "Hugging Face then also cuts the text at every empty match, which bytepair's pattern cannot do"
            )
        return fancy, True
    if behavior == "Removed" and invert:
        return fancy, False
    if behavior == "Removed" and not invert:
        return fancy, False  # caller decides (only the whitespace split is supported this way)
    raise fail(f"{where}: Split with behavior {behavior!r} and invert={invert} is not supported")


# a text with a bit of everything, to see whether a pattern's pieces cover it
_PROBE = "Hello, World! 12 3.5\n\t  naïve café 🙂 x_y-z'\"()<|endoftext|>\r\n "


def _drops_text(pattern: str) -> bool:
    """Whether the pieces ``pattern`` cuts (with the core's regex engine)
    leave out some of a probe text: a covering pattern does when its regex
    can match the empty string. False for a pattern that does not compile
    (the error comes when the tokenizer is built)."""

    try:
        counts = _core.WordCounts(pattern, [])
        counts.add_documents([_PROBE])
    except BytepairError:
        return False
    return sum(len(word) * n for word, n in counts.items()) != len(_PROBE)


def _covering(pattern: str) -> str:
    """A pattern whose findall equals Hugging Face's ``Isolated`` split with
    ``pattern``: the text between two matches is a piece too."""
    if pattern in PRESETS.values() or pattern == HF_GPT2_PATTERN:
        return pattern  # these match every character already
    return f"(?:{pattern})|(?:(?!(?:{pattern}))[\\s\\S])+"


_NO_SPLIT = r"[\s\S]+"  # ByteLevel(use_regex=false) alone: every text is one piece


def _byte_pre(pre: Any, fail: _Fail) -> Tuple[str, bool]:
    """(pattern, add_prefix_space) of a byte-level tokenizer's pre-tokenizer.

    ``ByteLevel(add_prefix_space=true)`` alone is Hugging Face's default: a
    space goes before each stretch of text between added tokens, then the
    regex splits it; bytepair's ``add_prefix_space`` does the same. After a
    ``Split`` it would go before every piece, which bytepair does not do."""
    if not isinstance(pre, dict):
        raise fail("a byte-level tokenizer needs a ByteLevel pre-tokenizer")
    if pre.get("type") == "ByteLevel":
        use_regex, prefix = _byte_level_opts(pre)
        return (HF_GPT2_PATTERN if use_regex else _NO_SPLIT), prefix
    if pre.get("type") != "Sequence":
        raise _unsupported("pre_tokenizer", pre, "use ByteLevel or Sequence[Split, ByteLevel]", fail)
    seq = pre.get("pretokenizers")
    if not isinstance(seq, list) or not seq or not all(isinstance(p, dict) for p in seq):
        raise fail("field 'pre_tokenizer.pretokenizers' must be a non-empty list of objects")
    if seq[-1].get("type") != "ByteLevel":
        raise fail("the last pre-tokenizer of a byte-level tokenizer must be ByteLevel")
    if len(seq) == 1:
        return _byte_pre(seq[0], fail)
    if len(seq) > 2 or seq[0].get("type") != "Split":
        raise fail(
            "pre_tokenizer must be ByteLevel or Sequence[Split, ByteLevel]; got Sequence["
            + ", ".join(str(p.get("type")) for p in seq)
            + "]"
        )
    use_regex, prefix = _byte_level_opts(seq[-1])
    if prefix:
        raise fail(
            "pre_tokenizer.pretokenizers[1] is ByteLevel(add_prefix_space=true) after a Split: Hugging Face "
            "then puts a space before every piece that does not start with one; bytepair does not, so the ids "
            "would differ. Re-save it with add_prefix_space=false"
        )
    if use_regex:
        raise fail(
            "pre_tokenizer is Sequence[Split, ByteLevel(use_regex=true)]: two regex splits in a row "
            "cannot be written as one pattern; use_regex must be false"
        )
    pattern, isolated = _split_pattern(seq[0], "pre_tokenizer.pretokenizers[0]", fail)
    if isolated:
        return _covering(pattern), False
    if seq[0].get("behavior") == "Removed" and not seq[0].get("invert"):
        raise fail("pre_tokenizer.pretokenizers[0]: Split with behavior 'Removed' and invert=false is not supported")
    return pattern, False


def _lone_byte_level(pre: Any) -> Optional[Dict[str, Any]]:
    """The ByteLevel pre-tokenizer when it is the only one, else None."""
    if isinstance(pre, dict) and pre.get("type") == "Sequence":
        seq = pre.get("pretokenizers")
        pre = seq[0] if isinstance(seq, list) and len(seq) == 1 else None
    return pre if isinstance(pre, dict) and pre.get("type") == "ByteLevel" else None


def _check_common(d: Dict[str, Any], fail: _Fail) -> Dict[str, Any]:
    if not isinstance(d, dict):
        raise fail("the top level must be a JSON object")
    model = d.get("model")
    if not isinstance(model, dict):
        raise fail("it has no 'model' object")
    if model.get("type", "BPE") != "BPE":
        raise fail(f"model.type is {model.get('type')!r}; only BPE models can be loaded")
    if model.get("dropout") not in (None, 0, 0.0):
        raise fail(f"model.dropout is {model.get('dropout')!r}: BPE dropout is random, bytepair is exact")
    norm = d.get("normalizer")
    if norm is not None and not (
        isinstance(norm, dict) and norm.get("type") == "Sequence" and not norm.get("normalizers")
    ):
        raise _unsupported("normalizer", norm, "bytepair does not normalize text, so the ids would differ", fail)
    ignored = [k for k in ("truncation", "padding") if d.get(k)]
    post = d.get("post_processor")
    if post is not None and not (isinstance(post, dict) and post.get("type") == "ByteLevel"):
        ignored.append(f"post_processor {post.get('type') if isinstance(post, dict) else post!r}")
    if ignored:
        warnings.warn(
            f"{fail.path}: {', '.join(ignored)} ignored: bytepair gives the ids of Hugging Face's "
            "encode(text, add_special_tokens=False) without truncation or padding",
            stacklevel=4,
        )
    return model


def _load_byte(d: Dict[str, Any], model: Dict[str, Any], fail: _Fail, pattern: Optional[str],
               special_tokens: Optional[Mapping[str, int]]) -> Any:
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise fail(f"model.{key} is {model[key]!r}; a byte-level model cannot have one")
    vocab, merges = model.get("vocab"), model.get("merges")
    ignore_merges = bool(model.get("ignore_merges", False))
    merge_where = lambda k: f"{fail.path}: model.merges[{k}]"  # noqa: E731
    # unread (the outline checked them): the core reads both from the file's text, checks them as byte_ranks
    # does and keeps them for the check of the built core, without Python objects for every token and merge
    unread = isinstance(vocab, UnreadDict) and isinstance(merges, UnreadList) and vocab.unread and merges.unread
    added = _added(d, _VocabFacts(vocab.facts) if unread else _vocab(model, fail), fail)  # type: ignore[arg-type]
    read = (_core.hf_byte_vocab(vocab.source, vocab.facts["bytes"], merges.facts["bytes"], added, ignore_merges)
            if unread else None)
    if read is not None and read[0] == "ok":
        ids = read[1].table()  # tokens[id], None for an id not kept: what from_byte_vocab makes of a dict
        derived = lambda core: merge_not_derived(core.first_underived_read(read[1]), merge_where)  # noqa: E731
    else:  # read whole; a fault the core found is named here, as ever
        ids, triples = byte_ranks(_vocab(model, fail), added, _merge_list(model, fail),
                                  vocab_where=f"{fail.path}: model.vocab", merge_where=merge_where,
                                  ignore_merges=ignore_merges, parse_merges=lambda: _merges(model, fail))
        derived = lambda core: check_merges_derived(core, triples, merge_where)  # noqa: E731
    if pattern is None:
        pattern, prefix = _byte_pre(d.get("pre_tokenizer"), fail)
    else:  # the caller's pattern replaces the pre-tokenizer's split; a lone ByteLevel's prefix space stays
        lone = _lone_byte_level(d.get("pre_tokenizer"))
        prefix = lone is not None and _byte_level_opts(lone)[1]
    specials = dict(added) if special_tokens is None else dict(special_tokens)
    try:
        if isinstance(ids, list) and None not in ids:  # ids 0 .. n - 1 (most files): no list of them
            holes = _dense_holes(len(ids), specials.values())
        else:
            used = [i for i, t in enumerate(ids) if t is not None] if isinstance(ids, list) else list(ids)
            holes = vocabulary_holes([*used, *specials.values()])
        spec = checked(replace(from_byte_vocab(ids, pattern, specials, add_prefix_space=prefix), decode_skips=holes))
    except BytepairError as e:
        raise fail(str(e)) from None
    derived(spec.built)
    return spec


def _char_pattern(pre: Any, fail: _Fail) -> Optional[str]:
    if isinstance(pre, dict) and pre.get("type") == "Split":
        pat = pre.get("pattern")
        if (
            isinstance(pat, dict)
            and pat.get("Regex") == PY_WHITESPACE_RUN
            and pre.get("behavior") == "Removed"
            and not pre.get("invert")
        ):
            return None  # str.split()
        pattern, isolated = _split_pattern(pre, "pre_tokenizer", fail)
        if isolated:
            return _covering(pattern)
        if pre.get("behavior") == "Removed" and pre.get("invert"):
            return pattern
    if isinstance(pre, dict) and pre.get("type") == "WhitespaceSplit":
        return r"\S+"  # Rust's char::is_whitespace is fancy-regex's \s
    raise _unsupported(
        "pre_tokenizer", pre, "a char-level tokenizer needs WhitespaceSplit or a Split bytepair wrote", fail
    )


def _load_char(d: Dict[str, Any], model: Dict[str, Any], fail: _Fail, pattern: Optional[str],
               special_tokens: Optional[Mapping[str, int]]) -> Any:
    if model.get("continuing_subword_prefix"):
        raise fail("model.continuing_subword_prefix is not supported (bytepair marks word ends, not continuations)")
    if model.get("byte_fallback") or model.get("unk_token") is not None:
        raise fail("char-level models with byte_fallback or unk_token are not supported")
    eow = model.get("end_of_word_suffix") or None
    if eow is not None and not isinstance(eow, str):
        raise fail("model.end_of_word_suffix must be a string or null")
    if pattern is None:
        pattern = _char_pattern(d.get("pre_tokenizer"), fail)
    vocab = _vocab(model, fail)
    added = _added(d, vocab, fail)
    merges = _merges(model, fail)
    tokens = {i: t for t, i in vocab.items() if not (t in added and added[t] == i)}
    for text, id_ in added.items():
        if id_ in tokens:
            raise fail(f"added token {text!r} has the id {id_}, which model.vocab gives to {tokens[id_]!r}")
    made: Dict[str, int] = {}
    known = set()
    pairs, results = [], []
    for k, (left, right) in enumerate(merges):
        for sym in (left, right):
            if sym not in vocab:
                raise fail(f"model.merges[{k}] ({left!r}, {right!r}): {sym!r} is not in model.vocab")
        merged = left + right
        if merged not in vocab:
            raise fail(f"model.merges[{k}] ({left!r}, {right!r}): the merged token {merged!r} is not in model.vocab")
        if merged in made:
            raise fail(
                f"model.merges[{k}] ({left!r}, {right!r}) makes {merged!r}, which model.merges[{made[merged]}] "
                "makes already: Hugging Face and bytepair can then segment differently"
            )
        made[merged] = k
        pairs.append([vocab[left], vocab[right]])
        results.append(vocab[merged])
    base_ids = sorted(i for i, t in tokens.items() if t not in made)
    if base_ids != list(range(len(base_ids))):
        raise fail(
            "the tokens no merge makes (the characters) must have the ids 0, 1, 2, ... for bytepair to keep "
            f"the ids of a char-level model; here they are {base_ids[:5]}..."
        )
    base = [tokens[i] for i in base_ids]
    for k, (left, right) in enumerate(merges):
        for sym in (left, right):
            if sym not in known and sym not in base:
                raise fail(
                    f"model.merges[{k}] uses {sym!r} before any merge makes it: bytepair applies each merge "
                    "in turn, Hugging Face by rank, and the two can then disagree"
                )
        known.add(left + right)
    specials = dict(added) if special_tokens is None else dict(special_tokens)
    desc = {
        "bytepair": 1,
        "model": "char",
        "pattern": pattern,
        "end_of_word": eow,
        "end_of_word_fused": eow is not None,
        "byte_fallback": False,
        "unk_token": None,
        "base": base,
        "merges": pairs,
        "merge_ids": None if results == list(range(len(base), len(base) + len(results))) else results,
        "special_tokens": specials,
    }
    try:
        spec = checked(from_dict(desc))
    except BytepairError as e:
        raise fail(str(e)) from None
    special_ids = set(specials.values())
    mine = {}
    for i in range(spec.built.n_vocab):
        raw = spec.built.token_bytes(i)
        if raw is not None and i not in special_ids:
            mine[raw.decode("utf-8")] = i
    theirs = {t: i for i, t in tokens.items()}
    if mine != theirs:
        diff = sorted(set(mine.items()) ^ set(theirs.items()), key=lambda x: x[1])[:3]
        raise fail(f"bytepair cannot keep its char-level ids; first differences (token, id): {diff}")
    return spec


def loads(text: Union[str, bytes], path: str = "<string>", pattern: Optional[str] = None,
          special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """The description (:mod:`bytepair.spec`) of a ``tokenizer.json``'s text,
    checked: a byte or char model when it runs the file exactly, else a pipeline. ``text`` may
    also be the file's bytes (UTF-8), as :func:`load` passes them: the core reads them where they
    are, and no ``str`` of the whole file is made unless Python's own reading is needed.

    >>> text = '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}'
    >>> loads(text).built.n_vocab == loads(text.encode()).built.n_vocab == 3
    True
    """
    d = _outlined(text, path) if pattern is None and special_tokens is None else None
    if d is None:
        if isinstance(text, bytes):  # Python's reading names the fault (invalid UTF-8 first)
            text = decode_text(text, path, "tokenizer.json")
        d = parse_json(text, path)
    post = d.get("post_processor") if isinstance(d, dict) else None
    if isinstance(post, dict) and post.get("type") == "Sequence" and not isinstance(post.get("processors"), list):
        raise FormatError(f"{path}: post_processor.processors: expected a list")  # as the pipeline's loader says
    if pattern is None and special_tokens is None and (_adds_tokens(post) or _trims_offsets(post)
                                                       or _models_refuse_at_once(d) or _merges_make_a_token_twice(d)):
        # encode(text, add_special_tokens=True) must add them, and offsets be trimmed as HF trims them:
        # only the pipeline runs post-processors; and the byte and char models refuse a file whose normalizer or
        # pre-tokenizer they cannot run, and two merges making one token (Llama 3's), so such a file goes to the
        # pipeline at once, without the models' pass over its vocabulary (if the pipeline refuses, the models'
        # reason is given, as before)
        try:
            return checked_pipeline(d, path, text, decode_skips=_pipeline_holes(d, path))
        except FormatError:
            pass  # the byte or char model may still run it (without the post-processor, with a warning)
    caught: List[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tok = _load_models(d, path, pattern, special_tokens)
    except FormatError as refused:
        return _load_pipeline(d, path, pattern, special_tokens, refused, text)
    for w in caught:  # the byte or char model loaded it: its warnings stand
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return tok


def _outlined(text: Union[str, bytes], path: str) -> Optional[Dict[str, Any]]:
    """The document of ``text`` (a ``str`` or the file's UTF-8 bytes) with ``model.vocab`` and
    ``model.merges`` left unread (:class:`~bytepair._io.UnreadDict`, :class:`~bytepair._io.UnreadList`,
    read on first use from ``text``), its other parts parsed by Python's reader as
    :func:`~bytepair._io.parse_json` parses them; None when the core finds the file irregular
    (:func:`bytepair._core.hf_outline`: a key twice, an id that is not one, a merge that is neither a
    string nor a pair of strings, bytes that are not UTF-8, ...) or Python finds the rest invalid: the
    whole reading then names the fault. A file that goes to the pipeline thus never has Python
    objects made for its vocabulary.

    >>> d = _outlined('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}', "f")
    >>> d["model"]["vocab"].facts["n_vocab"], d["model"]["merges"]
    (3, ['a b'])
    >>> _outlined('{"model": {"vocab": {"a": 0, "b": 0}, "merges": []}}', "f") is None  # an id twice
    True
    """
    outline = _core.hf_outline(text)
    if outline is None:
        return None
    small, spans, n_vocab, dense, found, (n_merges, repeats) = outline
    try:
        d = json.loads(small)
        check_json_text(small, d, path)
    except (ValueError, RecursionError, FormatError):
        return None  # the whole reading names the fault, at its place in the file
    model = d.get("model") if isinstance(d, dict) else None
    if not isinstance(model, dict) or model.get("vocab") != {} or model.get("merges") != []:
        return None  # never, unless the outline misread the document: then as before
    (vocab_span, merges_span, vocab_bytes, merges_bytes) = spans
    if isinstance(text, bytes):  # slices of the bytes themselves (json reads UTF-8 bytes)
        vocab_span, merges_span = vocab_bytes, merges_bytes
    model["vocab"] = UnreadDict(text, vocab_span, model, "vocab",
                                facts={"n_vocab": n_vocab, "dense": dense, "added_in_vocab": found, "bytes": vocab_bytes})
    model["merges"] = UnreadList(text, merges_span, model, "merges",
                                 facts={"n_merges": n_merges, "bytes": merges_bytes})
    if repeats is not None:  # found by the outline (a byte-level file without a normalizer); else when asked
        model["merges"].facts["repeats"] = repeats
    return d


def _repeats(merges: List[Any]) -> Optional[bool]:
    """:func:`bytepair._core.merges_repeat_a_token` of ``merges``, found without reading it when it is
    unread (the core reads it from the file's text, once: kept in its facts)."""
    facts = merges.facts if isinstance(merges, UnreadList) else None
    if facts is None:
        return _core.merges_repeat_a_token(merges)
    if "repeats" not in facts:
        source = merges.source
        facts["repeats"] = (_core.hf_merges_repeat(source, facts["bytes"]) if source is not None
                            else _core.merges_repeat_a_token(merges.read()))
    return facts["repeats"]


class _VocabFacts:
    """What :func:`_added` asks of a vocabulary (its size, the ids of the added tokens' texts), from an
    unread vocabulary's facts."""

    def __init__(self, facts: Mapping[str, Any]) -> None:
        self.n, self.found = facts["n_vocab"], facts["added_in_vocab"]

    def __len__(self) -> int:
        return self.n

    def __contains__(self, token: Any) -> bool:
        return token in self.found

    def __getitem__(self, token: Any) -> int:
        return self.found[token]


def _merges_make_a_token_twice(d: Any) -> bool:
    """Whether ``d`` is byte-level and two of its merges make one token, which bytepair's rule (the byte model)
    refuses; False for a merge list with an item that is neither a string nor a pair of strings (the byte model
    then says what it finds)."""
    if not isinstance(d, dict):
        return False
    model = d.get("model")
    merges = model.get("merges") if isinstance(model, dict) else None
    return (isinstance(merges, list) and _has_byte_level(d.get("pre_tokenizer"))
            and _repeats(merges) is True)


def _has_byte_level(pre: Any) -> bool:
    """Whether the pre-tokenizer ``pre`` is ``ByteLevel`` or a Sequence holding one (a byte-level file)."""
    seq = pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else None
    pres = [pre, *(seq if isinstance(seq, list) else [])]
    return any(isinstance(p, dict) and p.get("type") == "ByteLevel" for p in pres)


def _models_refuse_at_once(d: Any) -> bool:
    """Whether :func:`_load_models` (without a caller's pattern) refuses ``d`` for a reason found without
    reading its vocabulary: what :func:`_check_common` refuses (a normalizer, a model type, dropout), or
    a byte-level file's word affixes or pre-tokenizer (DeepSeek V3's three splits). A cheap look for the
    routing of :func:`loads`; the models' own pass still gives the reason when the pipeline refuses too.

    >>> _models_refuse_at_once({"model": {"type": "BPE"}, "normalizer": {"type": "NFC"}})
    True
    >>> _models_refuse_at_once({"model": {"type": "BPE"}, "pre_tokenizer": {"type": "ByteLevel"}})
    False
    """
    fail = _Fail("<routing>")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # _check_common's notes on what is ignored: _load_models gives them
            model = _check_common(d, fail)
        if _has_byte_level(d.get("pre_tokenizer")):
            if any(model.get(key) for key in ("continuing_subword_prefix", "end_of_word_suffix")):
                return True
            _byte_pre(d.get("pre_tokenizer"), fail)
    except FormatError:
        return True
    return False


def _pipeline_holes(d: Any, path: str) -> FrozenSet[int]:
    """The holes of a pipeline's vocabulary (its model's vocab and its added
    tokens with the ids Hugging Face gives them), which HF decodes to nothing.
    ``path`` names the file in the warning about added tokens Hugging Face moves."""
    model = d.get("model") if isinstance(d, dict) else None
    vocab = model.get("vocab") if isinstance(model, dict) else None
    facts = vocab.facts if isinstance(vocab, UnreadDict) else None
    if facts is not None and facts["dense"]:  # ids 0 .. n - 1, known without reading the vocabulary
        try:
            return _dense_holes(facts["n_vocab"], _added(d, _VocabFacts(facts), _Fail(path)).values())  # type: ignore[arg-type]
        except BytepairError:
            return frozenset()
    # the ids' types, not each id, looked at in Python (bool is a subclass of int, as isinstance has it)
    if not isinstance(vocab, dict) or not all(issubclass(t, int) for t in set(map(type, vocab.values()))):
        return frozenset()  # the pipeline's own checks refuse it, or it has no holes (a list)
    try:
        return vocabulary_holes([*vocab.values(), *_added(d, vocab, _Fail(path)).values()])
    except BytepairError:  # the pipeline's own checks name what is wrong (ids far apart, a bad added token)
        return frozenset()


def _dense_holes(n: int, ids: Iterable[int]) -> FrozenSet[int]:
    """``vocabulary_holes`` of the ids 0 .. n - 1 and ``ids`` (non-negative), without a list of the n.

    >>> sorted(_dense_holes(3, [5, 1])), _dense_holes(3, [3, 0])
    ([3, 4], frozenset())
    """
    extra = {i for i in ids if i >= n}
    if not extra:
        return frozenset()
    check_unused_ids(n + len(extra), max(extra))
    return frozenset(range(n, max(extra) + 1)) - extra


def _adds_tokens(post: Any) -> bool:
    """Whether a post-processor adds special tokens (a template, Roberta's or Bert's)."""
    if not isinstance(post, dict):
        return False
    if post.get("type") == "Sequence":
        procs = post.get("processors")
        return isinstance(procs, list) and any(_adds_tokens(p) for p in procs)
    return post.get("type") in ("TemplateProcessing", "RobertaProcessing", "BertProcessing")


def _trims_offsets(post: Any) -> bool:
    """Whether a post-processor changes offsets: ``ByteLevel`` with
    ``trim_offsets`` (HF's default), alone or in a Sequence."""
    if not isinstance(post, dict):
        return False
    if post.get("type") == "Sequence":
        procs = post.get("processors")
        return isinstance(procs, list) and any(_trims_offsets(p) for p in procs)
    return post.get("type") == "ByteLevel" and bool(post.get("trim_offsets", True))


def byte_model_of(description: Any) -> Optional[Any]:
    """The byte model (a checked :class:`~bytepair.spec.ModelSpec`) whose ids
    are exactly those of the pipeline ``description`` (a ``tokenizer.json``
    object) before its post-processor, found by the same routing that
    :func:`loads` uses; None when the description is not such a byte-model
    configuration (a normalizer, several splits, byte fallback, merges the
    byte model's rule would read differently, a missing byte token, ...).
    A pipeline tokenizer converts to it (``to_tiktoken``, ``save`` as tiktoken or gpt2).

    >>> import bytepair
    >>> tok = bytepair.Tokenizer.train("hello world " * 4, num_merges=3)
    >>> byte_model_of(as_pipeline(tok).description).merge_ids is None
    True
    >>> byte_model_of({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}) is None
    True
    """
    if not isinstance(description, dict) or description.get("normalizer") is not None:
        return None
    model = description.get("model")
    if not isinstance(model, dict) or model.get("byte_fallback"):
        return None
    pre = description.get("pre_tokenizer")
    if not _has_byte_level(pre):
        return None
    merges = model.get("merges")
    if isinstance(merges, list):  # a cheap first look: two merges making one token (Llama 3) never route
        repeats = _repeats(merges)
        if repeats is None:  # an item neither a string nor a pair of strings: the same look in Python
            made = {m.replace(" ", "", 1) if isinstance(m, str) else "".join(map(str, m)) for m in merges}
            repeats = len(made) != len(merges)
        if repeats:
            return None
    bare = dict(description, post_processor=None, truncation=None, padding=None)
    try:
        _byte_pre(pre, _Fail("<pipeline>"))  # the pre-tokenizer's shape first: it costs nothing (DeepSeek's)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # anything the byte model would run differently (an added token's id)
            spec = _load_models(bare, "<pipeline>", None, None)
    except (FormatError, Warning):
        return None
    singles = {t[0] for t in spec.tokens if t is not None and len(t) == 1}
    if spec.model != "byte" or not _UTF8_BYTES <= singles:
        return None  # a byte of some text without a token: the pipeline drops it, the byte model raises
    return spec


# every byte that UTF-8 text can hold (not 0xC0, 0xC1, 0xF5-0xFF, which GPT-NeoX's vocabulary lacks)
_UTF8_BYTES = frozenset(range(0xC0)) | frozenset(range(0xC2, 0xF5))


def _load_models(d: Any, path: str, pattern: Optional[str], special_tokens: Optional[Mapping[str, int]]) -> Any:
    """The byte or char model of ``d``, or a FormatError saying why not."""
    fail = _Fail(path)
    model = _check_common(d, fail)
    if _has_byte_level(d.get("pre_tokenizer")):
        return _load_byte(d, model, fail, pattern, special_tokens)
    return _load_char(d, model, fail, pattern, special_tokens)


def _load_pipeline(d: Any, path: str, pattern: Optional[str], special_tokens: Optional[Mapping[str, int]],
                   refused: FormatError, source: Union[str, bytes]) -> Any:
    """What the byte and char models cannot run exactly runs as a pipeline
    (:mod:`bytepair.pipeline`), its core reading the file's text ``source``. When the pipeline engine
    refuses it too, the error names the unsupported component, or else is the first refusal."""
    if pattern is not None or special_tokens is not None:
        raise refused
    try:
        return checked_pipeline(d, path, source, decode_skips=_pipeline_holes(d, path))
    except UnsupportedComponentError as e:  # name the part the engine lacks, not the byte model's refusal
        line = str(e).splitlines()[0]
        raise UnsupportedComponentError(line if line.startswith(path) else f"{path}: {line}") from None
    except FormatError:
        raise refused from None


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """Read a Hugging Face ``tokenizer.json`` (see the module's doc for what
    is refused and why). ``pattern`` replaces the pre-tokenizer's regex;
    ``special_tokens`` the added tokens."""
    path = os.fspath(path)
    return loads(read_model_bytes(path), path, pattern, special_tokens)
