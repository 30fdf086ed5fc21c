"""The description a tokenizer is built from: one frozen value per tokenizer.

Every way of making a :class:`~bytepair.Tokenizer` (training, a file of any
format, merge rules) ends in one of these descriptions, and the tokenizer is
built from it once: its core is compiled from it, and nothing changes either
afterwards.

- :class:`ModelSpec`: the byte model (GPT-2/tiktoken) or the char model
  (Sennrich et al.), as the native file stores it (:func:`to_dict`).
- :class:`PipelineSpec`: a Hugging Face pipeline (``tokenizer.json``
  object, or a SentencePiece model as its stages), validated by the core's
  own description reader when it is built.

>>> spec = from_merges([("a", "b")], model="char", end_of_word=None)
>>> spec.base, spec.merge_ids
(('a', 'b'), ((0, 1),))
>>> from_dict(to_dict(spec)) == spec
True
"""

from __future__ import annotations

import base64
import json
import operator
from dataclasses import dataclass, field, replace
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from bytepair import _core
from bytepair.errors import BytepairError, FormatError, PatternError, UnsupportedComponentError
from bytepair.regex_dialects import from_onig
from bytepair.limits import SpecialTokens, check_text_limits, check_unused_ids, special_ids, special_names
from bytepair.patterns import default_pattern, preset_name, resolve_pattern

MODELS = ("byte", "char")
MERGE_RULES = ("in-order", "lowest-rank")


@dataclass(frozen=True)
class ModelSpec:
    """A byte or char model. Ids: the byte model's 256 bytes, then its merges
    (or ``tokens``, a table of ranks: ``tokens[id]`` the bytes of that id);
    the char model's ``base`` symbols, 256 fallback bytes when
    ``byte_fallback``, then its merges; special tokens anywhere above.

    >>> ModelSpec("byte", resolve_pattern("gpt2"), merge_ids=((97, 98),)).n_fixed
    257
    """

    model: str
    pattern: Optional[str]
    special_tokens: Mapping[str, int] = field(default_factory=dict)
    merge_ids: Optional[Tuple[Tuple[int, int], ...]] = ()  # None: the vocabulary is the ranks table ``tokens``
    merge_results: Optional[Tuple[int, ...]] = None  # the merges' ids when they are not consecutive
    merge_counts: Tuple[Optional[int], ...] = ()
    tokens: Tuple[Optional[bytes], ...] = ()  # byte model given as ranks
    base: Tuple[str, ...] = ()  # char model: the base symbols
    end_of_word: Optional[str] = None
    end_of_word_fused: bool = False
    byte_fallback: bool = False
    unk_token: Optional[str] = None
    add_prefix_space: bool = False  # Hugging Face's ByteLevel(add_prefix_space=True), byte model
    merge_rule: str = "in-order"  # char model: or "lowest-rank" (subword-nmt's apply-bpe)
    # encode(add_special_tokens=True): the special tokens put before and after the ids (the owner's BOS/EOS)
    prefix_tokens: Tuple[str, ...] = ()
    suffix_tokens: Tuple[str, ...] = ()
    # whether an encode in Hugging Face's style matches special-token text (mistral_common never does)
    match_special_text: bool = True
    # whether decode(skip_special_tokens=True) decodes the ids between two special tokens apart (mistral_common's
    # groups), rather than joining the rest (Hugging Face)
    specials_apart: bool = False
    parity_stats: Optional[Mapping[str, Any]] = field(default=None, compare=False)  # train_parity's, not saved
    # ids below n_vocab with no token that decode to nothing, as the file's owner decodes them (Hugging Face)
    decode_skips: FrozenSet[int] = frozenset()
    # the core compiled from this description when a loader built it to check it (not part of the
    # description: not an argument, so dataclasses.replace() gives a description without it)
    built: Any = field(default=None, init=False, compare=False, repr=False)

    @property
    def n_fixed(self) -> int:
        """Ids given one by one (bytes or base symbols, fallback bytes, merges)."""
        merges = len(self.merge_ids or ())
        if self.model == "byte":
            return len(self.tokens) if self.merge_ids is None else 256 + merges
        return len(self.base) + (256 if self.byte_fallback else 0) + merges


@dataclass(frozen=True)
class PipelineSpec:
    """A Hugging Face pipeline: the ``tokenizer.json`` object (or a
    SentencePiece model as its stages), with the path it came from for
    messages. The core validates it when the tokenizer is built.

    >>> PipelineSpec({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}).model
    'pipeline'
    """

    description: Mapping[str, Any]
    path: str = "<string>"
    model: str = "pipeline"
    pattern: Optional[str] = None
    merge_counts: Tuple[Optional[int], ...] = ()
    end_of_word: Optional[str] = None
    end_of_word_fused: bool = False
    byte_fallback: bool = False
    unk_token: Optional[str] = None
    add_prefix_space: bool = False
    merge_rule: str = "in-order"
    parity_stats: Optional[Mapping[str, Any]] = None
    decode_skips: FrozenSet[int] = frozenset()  # as in ModelSpec
    chat_template: Optional[str] = None  # a GGUF file's tokenizer.chat_template, kept as text
    # llama.cpp's detokenize (GGUF files): (drop the first token's leading space, its clean_spaces passes, a normal
    # token's text read as GPT-2's byte characters although the vocabulary is raw UTF-8: its llama_decode_text)
    llama_decode: Optional[Tuple[bool, ...]] = None
    match_special_text: bool = True  # Hugging Face's call matches every added token
    built: Any = field(default=None, init=False, compare=False, repr=False)  # as in ModelSpec


def summary(spec: Any) -> str:
    """What a tokenizer's ``repr`` says of its description: a model's pattern, a pipeline's stages.

    >>> summary(from_merges([("a", "b")], end_of_word=None, pattern="gpt2"))
    "pattern='gpt2'"
    """
    if isinstance(spec, PipelineSpec):
        stage = lambda key: spec.description.get(key) or {}  # noqa: E731
        return (f"normalizer={stage('normalizer').get('type')!r} pre_tokenizer={stage('pre_tokenizer').get('type')!r} "
                f"byte_fallback={bool(stage('model').get('byte_fallback'))}")
    pattern = preset_name(spec.pattern) or ("str.split()" if spec.pattern is None else "custom")
    return f"pattern={pattern!r}"


def written_merges(spec: PipelineSpec) -> List[Tuple[Any, Any]]:
    """A pipeline's merges as its file writes them (``"a b"`` strings cut at the first space, or pairs).

    >>> written_merges(PipelineSpec({"model": {"type": "BPE", "vocab": {}, "merges": ["a b", ["a", "b c"]]}}))
    [('a', 'b'), ('a', 'b c')]
    """
    merges = (spec.description.get("model") or {}).get("merges") or []
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]


# ---------------------------------------------------------------- building descriptions


def from_merges(
    merges: Sequence[Tuple[Any, Any]],
    model: str = "char",
    end_of_word: Optional[str] = "</w>",
    end_of_word_fused: bool = False,
    pattern: Optional[str] = "default",
    alphabet: Optional[Iterable[str]] = None,
    special_tokens: SpecialTokens = (),
    byte_fallback: bool = False,
    unk_token: Optional[str] = None,
    merge_rule: str = "in-order",
) -> ModelSpec:
    """The description of a tokenizer from merge rules: ``(str, str)`` pairs
    for the char model, ``(bytes, bytes)`` for the byte model (merge ``k``
    is id ``256 + k``). The char model's base alphabet is ``alphabet`` or
    else the characters found in the merges.

    >>> from bytepair import Tokenizer
    >>> rules = [("t", "h"), ("th", "e"), ("the", "<w>")]
    >>> tok = Tokenizer.from_merges(rules, model="char", end_of_word="<w>")
    >>> tok.tokenize("the")
    ['the<w>']
    """
    if model not in MODELS:
        raise BytepairError(f"unknown model {model!r}: use 'byte' or 'char'")
    regex = default_pattern(pattern, model)
    merges = [tuple(m) for m in merges]
    kind = str if model == "char" else bytes
    for k, m in enumerate(merges):
        if len(m) != 2 or not all(isinstance(x, kind) and len(x) > 0 for x in m):
            raise FormatError(f"merge {k + 1} ({m!r}) must be a pair of non-empty {kind.__name__} in the {model} model")
    if model == "byte":
        ids: Dict[Any, int] = {bytes([b]): b for b in range(256)}
        base: List[str] = []
        next_id, unknown = 256, "which no earlier merge produced"
        end_of_word, end_of_word_fused, byte_fallback, unk_token = None, False, False, None
    else:
        end_of_word = end_of_word or None
        if alphabet is None:
            alphabet = {c for pair in merges for sym in pair for c in (sym.replace(end_of_word, "") if end_of_word
                                                                       else sym)}
        words = sorted(set(alphabet))
        base = list(words)
        if end_of_word_fused and end_of_word:
            base = sorted(set(base) | {c + end_of_word for c in words})
        elif end_of_word and end_of_word not in base:
            base.append(end_of_word)
        ids = {s: i for i, s in enumerate(base)}
        next_id = len(base) + (256 if byte_fallback else 0)
        unknown = "which is neither in the alphabet nor made by an earlier merge"
    merge_ids = []
    for k, (left, right) in enumerate(merges):
        for sym in (left, right):
            if sym not in ids:
                raise FormatError(f"merge {k + 1} uses {sym!r}, {unknown}")
        merge_ids.append((ids[left], ids[right]))
        ids.setdefault(left + right, next_id + k)
    names = special_names(special_tokens, unk_token if model == "char" else None, BytepairError)
    specials = special_ids(special_tokens if isinstance(special_tokens, Mapping) else names, next_id + len(merges))
    return ModelSpec(model, regex, specials, merge_ids=tuple(merge_ids), base=tuple(base), end_of_word=end_of_word,
                     end_of_word_fused=end_of_word_fused, byte_fallback=byte_fallback, unk_token=unk_token,
                     merge_rule=merge_rule)


def from_byte_vocab(
    tokens: Union[Mapping[int, bytes], List[Optional[bytes]]],
    pattern: Optional[str],
    special_tokens: Optional[Mapping[str, int]] = None,
    add_prefix_space: bool = False,
) -> ModelSpec:
    """A byte model from a vocabulary of ranks ``{id: bytes}`` (tiktoken's
    ``mergeable_ranks`` inverted); ids are kept as they are and the merges
    are derived by the core. ``add_prefix_space``: Hugging Face's option of
    that name (see the ``hf`` format). ``tokens`` may also be the table
    itself, a list of bytes with None for an unused id.

    >>> spec = from_byte_vocab({i: bytes([i]) for i in range(256)} | {256: b"ab"}, "gpt2")
    >>> len(spec.tokens), spec.merge_ids is None
    (257, True)
    >>> from_byte_vocab({1: b"b", 0: b"a", 3: bytearray(b"d")}, "gpt2").tokens  # any order, holes, bytes-like
    (b'a', b'b', None, b'd')
    >>> from_byte_vocab([b"a", b"b", None, b"d"], "gpt2") == from_byte_vocab({0: b"a", 1: b"b", 3: b"d"}, "gpt2")
    True
    """
    regex = resolve_pattern(pattern)
    if regex is None:
        raise BytepairError("a byte-level vocabulary needs a pattern (a preset name or a regex)")
    specials = dict(special_tokens or {})
    if isinstance(tokens, list):  # the table (a loader's, from the core): its bytes as they are
        used = len(tokens) - tokens.count(None)
        check_unused_ids(used + len(specials), max([len(tokens) - 1, *specials.values()]))
        return ModelSpec("byte", regex, specials, merge_ids=None, tokens=tuple(tokens), add_prefix_space=add_prefix_space)
    check_unused_ids(len(tokens) + len(specials), max([*tokens, *specials.values()], default=-1))
    if all(map(operator.eq, tokens, range(len(tokens)))):  # ids 0, 1, 2, ... in order (a .tiktoken file's): no loop
        table: Tuple[Optional[bytes], ...] = tuple(map(bytes, tokens.values()))
    else:
        holes: List[Optional[bytes]] = [None] * (max(tokens, default=-1) + 1)
        for id_, b in tokens.items():
            holes[id_] = bytes(b)
        table = tuple(holes)
    return ModelSpec("byte", regex, specials, merge_ids=None, tokens=table, add_prefix_space=add_prefix_space)


def vocabulary_holes(ids: Iterable[int]) -> FrozenSet[int]:
    """The ids below the largest of ``ids`` that none of them is: the holes
    of a vocabulary (Hugging Face's decode gives nothing for one).

    >>> sorted(vocabulary_holes([0, 1, 4, 2]))
    [3]
    >>> vocabulary_holes([2, 0, 1]), sorted(vocabulary_holes([-1, 1]))
    (frozenset(), [0])
    """
    present = set(ids)
    top = max(present, default=-1)
    check_unused_ids(len(present), top)  # a hostile id far above the rest is refused, never a huge set
    if len(present) == top + 1 and min(present, default=0) >= 0:
        return frozenset()  # 0 .. top, each once: no hole (most files), without a set of every id
    return frozenset(range(top + 1)) - present


# ---------------------------------------------------------------- the core


def checked(spec: Any) -> Any:
    """``spec`` with its core built (every check made now, where a loader
    can name the file), so that the tokenizer does not build it again.

    >>> checked(from_merges([("a", "b")], end_of_word=None)).built.n_vocab
    3
    """
    core = build_core(spec)
    spec = replace(spec)  # a copy, without any core
    object.__setattr__(spec, "built", core)
    return spec


def build_core(spec: Any) -> Any:
    """The core of ``spec`` (a ``CoreTokenizer`` or a ``CorePipeline``);
    every check of the description is made here (or by the core), once.

    >>> build_core(from_merges([("a", "b")], end_of_word=None)).n_vocab
    3
    """
    if spec.built is not None:
        return spec.built
    if isinstance(spec, PipelineSpec):
        return _pipeline_core(spec)
    core = _model_core(spec)
    if spec.prefix_tokens or spec.suffix_tokens or spec.specials_apart:  # the ids add_special_tokens=True puts around
        return core.with_added([spec.special_tokens[t] for t in spec.prefix_tokens],
                               [spec.special_tokens[t] for t in spec.suffix_tokens], spec.specials_apart)
    return core


def _model_core(spec: ModelSpec) -> Any:
    """The ``CoreTokenizer`` of a byte or char model's description, checked."""
    if spec.model not in MODELS:
        raise BytepairError(f"unknown model {spec.model!r}: use 'byte' or 'char'")
    if spec.model == "byte" and spec.pattern is None:  # str.split() would drop the whitespace bytes
        raise BytepairError("the byte model needs a pattern (a preset name or a regex)")
    specials = sorted(spec.special_tokens.items(), key=lambda kv: kv[1])
    # the ids given one by one, then the largest id, which merge ids and special tokens may put far above them
    given = spec.n_fixed
    check_unused_ids(given + len(specials), max([given - 1, *(spec.merge_results or ()), *spec.special_tokens.values()]))
    check_text_limits(spec.pattern, spec.special_tokens)
    for token in (*spec.prefix_tokens, *spec.suffix_tokens):
        if token not in spec.special_tokens:
            raise BytepairError(f"the token {token!r} added by add_special_tokens=True is not a special token")
    if spec.model == "byte":
        if spec.merge_ids is None:  # ranks: the core derives the merges
            return _core.CoreTokenizer.byte(list(spec.tokens), spec.pattern, specials,
                                            add_prefix_space=spec.add_prefix_space)
        # the core derives every token's bytes from the merges, in one pass
        return _core.CoreTokenizer.byte_merges(list(spec.merge_ids), spec.pattern, specials,
                                               add_prefix_space=spec.add_prefix_space,
                                               merge_ids=None if spec.merge_results is None else list(spec.merge_results))
    unk_id = spec.special_tokens.get(spec.unk_token) if spec.unk_token is not None else None
    return _core.CoreTokenizer.char(
        list(spec.base), list(spec.merge_ids or ()), end_of_word=spec.end_of_word,
        end_of_word_fused=spec.end_of_word_fused, byte_fallback_start=len(spec.base) if spec.byte_fallback else None,
        unk_id=unk_id, pattern=spec.pattern, special_tokens=specials,
        merge_ids=None if spec.merge_results is None else list(spec.merge_results),
        lowest_rank=spec.merge_rule == "lowest-rank",
    )


def checked_pipeline(description: Mapping[str, Any], path: str, source: Union[str, bytes], **fields: Any) -> PipelineSpec:
    """``checked(PipelineSpec(description, path, **fields))``, the core reading
    ``source``: the JSON text that ``description`` was parsed from, as it
    is (no second serialisation of a big vocabulary).

    >>> checked_pipeline({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}, "f",
    ...                  '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}').built.n_vocab
    1
    """
    spec = PipelineSpec(description, path, **fields)
    object.__setattr__(spec, "built", _pipeline_core(spec, source))
    return spec


def _pipeline_core(spec: PipelineSpec, source: Optional[str] = None) -> Any:
    desc = spec.description
    if not isinstance(desc, Mapping):
        raise FormatError(f"{spec.path}: a Hugging Face tokenizer.json must be a JSON object")
    regexes: Dict[str, str] = {}
    _regexes(desc, regexes)
    llama = llama_decoding(spec)
    if source is not None:
        try:
            return _core.CorePipeline(source, regexes, llama)
        except BytepairError:
            pass  # the description's own JSON below names the fault as it always has
    else:
        lists = _bpe_lists(desc)
        if lists is not None:
            # the vocabulary and merges handed over as they are, never written as JSON (a GGUF file's 262,144
            # tokens and 514,906 merges were 0.2 s of dumps and parse); None or an error: the JSON names the fault
            small = {**desc, "model": {**desc["model"], "vocab": {}, "merges": []}}
            try:
                core = _core.CorePipeline.with_lists(json.dumps(small), regexes, *lists, llama)
            except BytepairError:
                core = None
            if core is not None:
                return core
    try:
        # ASCII: a Python str holding one non-ASCII character takes 2 or 4 bytes for every character
        return _core.CorePipeline(json.dumps(desc), regexes, llama)
    except (FormatError, PatternError) as e:  # a regex refused at load names the file too
        raise type(e)(f"{spec.path}: {e}") from None


def llama_decoding(spec: PipelineSpec) -> Optional[Tuple[bool, bool, bool]]:
    """The core's ``llama_decode`` argument: a GGUF file's decoding flags
    (strip the first space, clean spaces, read tokens as byte characters),
    or None for a pipeline decoded by its decoder.

    >>> llama_decoding(PipelineSpec({}, llama_decode=(True, False))), llama_decoding(PipelineSpec({}))
    ((True, False, False), None)
    """
    flags = spec.llama_decode
    return None if flags is None else (flags[0], flags[1], flags[2:] == (True,))


def _bpe_lists(desc: Mapping[str, Any]) -> Optional[Tuple[List[str], List[Any]]]:
    """A BPE model's tokens in id order and its merges, when its ids are 0, 1, 2, ... in the vocabulary's
    order (a GGUF file's, a trained pipeline's); else None.

    >>> _bpe_lists({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})
    (['a', 'b', 'ab'], ['a b'])
    >>> _bpe_lists({"model": {"type": "BPE", "vocab": {"b": 1, "a": 0}, "merges": []}}) is None
    True
    """
    model = desc.get("model")
    if not isinstance(model, Mapping) or model.get("type") != "BPE":
        return None
    vocab, merges = model.get("vocab"), model.get("merges")
    if not isinstance(vocab, dict) or not isinstance(merges, list):
        return None
    if list(vocab.values()) != list(range(len(vocab))):  # C loops: no Python frame per token
        return None
    return list(vocab), list(merges)  # plain lists: the core reads their items directly


def _regexes(node: Any, out: Dict[str, str], where: str = "") -> None:
    """Every Oniguruma ``{"Regex": ...}`` pattern of the description, written
    for fancy-regex (:func:`bytepair.regex_dialects.from_onig`)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("vocab", "merges") and where in ("model", ""):
                continue  # tokens, never patterns (a walk over millions of them took most of a big file's load)
            if k == "Regex" and isinstance(v, str):
                if v not in out:
                    try:
                        out[v] = from_onig(v)
                    except ValueError as e:
                        raise UnsupportedComponentError(
                            f"{where or 'tokenizer.json'}: the regex {v!r} cannot be run exactly: {e}") from None
            else:
                _regexes(v, out, f"{where}.{k}" if where else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _regexes(v, out, f"{where}[{i}]")


# ---------------------------------------------------------------- the native description


def to_dict(spec: Any) -> Dict[str, Any]:
    """The native description of ``spec`` (what ``Tokenizer.save`` writes as JSON).

    >>> sorted(to_dict(from_merges([(b"a", b"b")], model="byte")))
    ['bytepair', 'merge_counts', 'merges', 'model', 'pattern', 'pattern_preset', 'special_tokens']
    """
    holes = {"decode_skips": sorted(spec.decode_skips)} if spec.decode_skips else {}
    if isinstance(spec, PipelineSpec):
        d = {"bytepair": 1, "model": "pipeline", "pipeline": _json_copy(spec.description), **holes}
        if spec.chat_template is not None:
            d["chat_template"] = spec.chat_template
        if spec.llama_decode is not None:
            d["llama_decode"] = list(spec.llama_decode)
        return d
    d: Dict[str, Any] = {"bytepair": 1, "model": spec.model, "pattern": spec.pattern,
                         "pattern_preset": preset_name(spec.pattern)}
    if spec.model == "char":
        d.update(end_of_word=spec.end_of_word, end_of_word_fused=spec.end_of_word_fused,
                 byte_fallback=spec.byte_fallback, unk_token=spec.unk_token, base=list(spec.base))
    if spec.merge_ids is not None:
        d["merges"] = [list(m) for m in spec.merge_ids]
        d["merge_counts"] = list(spec.merge_counts)
        if spec.merge_results is not None:
            d["merge_ids"] = list(spec.merge_results)
    else:
        d["tokens_base64"] = [None if t is None else base64.b64encode(t).decode("ascii") for t in spec.tokens]
    d["special_tokens"] = dict(spec.special_tokens)
    if spec.add_prefix_space:
        d["add_prefix_space"] = True
    if spec.merge_rule != "in-order":
        d["merge_rule"] = spec.merge_rule
    if spec.prefix_tokens or spec.suffix_tokens:
        d.update(prefix_tokens=list(spec.prefix_tokens), suffix_tokens=list(spec.suffix_tokens))
    if not spec.match_special_text:
        d["match_special_text"] = False
    if spec.specials_apart:
        d["specials_apart"] = True
    d.update(holes)
    return d


def from_dict(d: Mapping[str, Any], path: str = "<string>") -> Any:
    """The description that :func:`to_dict` gave (checked by the native
    format's reader); a pipeline's gives a :class:`PipelineSpec`.

    >>> from_dict({"model": "pipeline", "pipeline": {"model": {"type": "BPE"}}}).model
    'pipeline'
    """
    holes = frozenset(d.get("decode_skips") or ())
    if d.get("model") == "pipeline":
        llama_decode = d.get("llama_decode")
        return PipelineSpec(d["pipeline"], path, decode_skips=holes, chat_template=d.get("chat_template"),
                            llama_decode=None if llama_decode is None else tuple(bool(x) for x in llama_decode))
    model = d["model"]
    char = model == "char"
    if "merges" in d:
        merge_ids: Optional[Tuple[Tuple[int, int], ...]] = tuple((int(l), int(r)) for l, r in d["merges"])
        tokens: Tuple[Optional[bytes], ...] = ()
    else:
        merge_ids = None
        tokens = tuple(None if t is None else base64.b64decode(t) for t in d["tokens_base64"])
    return ModelSpec(
        model, d["pattern"], dict(d.get("special_tokens") or {}), merge_ids=merge_ids,
        merge_results=tuple(d["merge_ids"]) if merge_ids is not None and d.get("merge_ids") is not None else None,
        merge_counts=tuple(d.get("merge_counts") or ()) if merge_ids is not None else (), tokens=tokens,
        base=tuple(d["base"]) if char else (), end_of_word=d.get("end_of_word") if char else None,
        end_of_word_fused=bool(d.get("end_of_word_fused", False)) if char else False,
        byte_fallback=bool(d.get("byte_fallback", False)) if char else False,
        unk_token=d.get("unk_token") if char else None, add_prefix_space=bool(d.get("add_prefix_space", False)),
        merge_rule=d.get("merge_rule", "in-order"), prefix_tokens=tuple(d.get("prefix_tokens") or ()),
        suffix_tokens=tuple(d.get("suffix_tokens") or ()), match_special_text=bool(d.get("match_special_text", True)),
        specials_apart=bool(d.get("specials_apart", False)),
        decode_skips=holes,
    )


def _json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (so that no caller shares the description)."""
    if isinstance(value, Mapping):
        return {k: _json_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_copy(v) for v in value]
    return value
