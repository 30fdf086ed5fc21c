"""Tokenizers that are pipelines: a Hugging Face ``tokenizer.json`` run by
the Rust core (``src/pipeline``) with Hugging Face's ids, decoding and
offsets: normalizer, pre-tokenizer, BPE model, added tokens,
post-processor and decoder, built from the file's description.

:func:`from_hf_json` builds one; ``Tokenizer.load`` uses it for every
``tokenizer.json`` that bytepair's byte and char models cannot run exactly
(Llama 3, DeepSeek, Qwen, SentencePiece-converted files, NFKC ...).

``encode(text)`` gives the ids of the text only (HF's
``add_special_tokens=False``); ``encode(text, add_special_tokens=True)``
adds what the post-processor adds (BOS/EOS). Added tokens are always
matched, as in Hugging Face; ``encode_ordinary`` does not match the
*special* ones.

>>> import json
>>> desc = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
...         "pre_tokenizer": {"type": "WhitespaceSplit"}, "decoder": None,
...         "added_tokens": [{"id": 3, "content": "<s>", "special": True}],
...         "post_processor": {"type": "TemplateProcessing",
...             "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
...             "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}}}
>>> tok = from_hf_json(json.dumps(desc))
>>> tok.encode("ab ba"), tok.encode("ab ba", add_special_tokens=True)
([2, 1, 0], [3, 2, 1, 0])
>>> tok.decode([3, 2, 1, 0]), tok.decode([3, 2], skip_special_tokens=True)
('<s> ab b a', 'ab')
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from bytepair import _core
from bytepair._io import atomic_write_text
from bytepair.errors import BytepairError, DisallowedSpecialError, FormatError, PatternError, TrainingError
from bytepair.tokenizer import Tokenizer, _check_ids, _check_text, _replace_surrogates, _surrogate_safe

WHAT = "a Hugging Face tokenizer.json"


def _regexes(node: Any, out: Dict[str, str], where: str = "") -> None:
    """Every Oniguruma ``{"Regex": ...}`` pattern of the description, written
    for fancy-regex (:func:`bytepair.formats.regex_dialects.from_onig`)."""
    from bytepair.formats.regex_dialects import from_onig

    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("vocab", "merges") and where in ("model", ""):
                continue  # tokens, never patterns (a walk over millions of them took most of a big file's load)
            if k == "Regex" and isinstance(v, str):
                if v not in out:
                    try:
                        out[v] = from_onig(v)
                    except ValueError as e:
                        raise FormatError(f"{where or 'tokenizer.json'}: the regex {v!r} cannot be run exactly: {e}") from None
            else:
                _regexes(v, out, f"{where}.{k}" if where else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _regexes(v, out, f"{where}[{i}]")


class PipelineTokenizer(Tokenizer):
    """A :class:`~bytepair.Tokenizer` running a Hugging Face pipeline
    (built by :func:`from_hf_json` or ``Tokenizer.load``)."""

    model = "pipeline"

    def __init__(self) -> None:  # use from_hf_json
        super().__init__()
        self.model = "pipeline"
        self._pipeline: Any = None
        self._description: Dict[str, Any] = {}

    # ------------------------------------------------------------------ building

    @classmethod
    def _from_description(cls, desc: Mapping[str, Any], path: str = "<string>") -> "PipelineTokenizer":
        if not isinstance(desc, Mapping):
            raise FormatError(f"{path}: {WHAT} must be a JSON object")
        regexes: Dict[str, str] = {}
        _regexes(desc, regexes)
        text = json.dumps(desc, ensure_ascii=False)
        try:
            core = _core.CorePipeline(text, regexes)
        except (FormatError, PatternError) as e:  # a regex refused at load names the file too
            raise type(e)(f"{path}: {e}") from None
        tok = cls()
        tok._pipeline = core
        tok._description = dict(desc)
        added, special = core.added_tokens()
        tok.special_tokens = {t: added[t] for t in sorted(special, key=lambda t: added[t])}
        tok._added = dict(added)
        return tok

    @property
    def n_vocab(self) -> int:
        """Ids run from 0 to ``n_vocab - 1`` (model and added tokens)."""
        return int(self._pipeline.n_vocab)

    @property
    def added_tokens(self) -> Dict[str, int]:
        """Every added token (special or not) and its id."""
        return dict(self._added)

    def description(self) -> Dict[str, Any]:
        """The pipeline's description (the ``tokenizer.json`` object)."""
        return json.loads(json.dumps(self._description))

    # ------------------------------------------------------------------ encoding

    def encode(self, text: str, *, add_special_tokens: bool = False,  # type: ignore[override]
               allowed_special: Any = None, disallowed_special: Any = None) -> List[int]:
        """Ids of ``text`` as Hugging Face's ``encode(text, add_special_tokens)``.

        ``allowed_special`` / ``disallowed_special`` are accepted as by the
        other models, for code written for any ``Tokenizer``: special-token
        text in ``disallowed_special`` (``"all"``: every special token not
        allowed) raises ``DisallowedSpecialError``; with
        ``allowed_special="all"`` special tokens are matched, with neither
        allowed nor disallowed they are text (``encode_ordinary``). A
        pipeline matches all its special tokens or none: another
        ``allowed_special`` is refused. Without either argument, special
        tokens are matched, as in Hugging Face.

        >>> tok = from_hf_json('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},'
        ...                    ' "added_tokens": [{"id": 2, "content": "<s>", "special": true}]}')
        >>> tok.encode("a<s>"), tok.encode("a<s>", allowed_special="all")
        ([0, 2], [0, 2])
        >>> tok.encode("a<s>", disallowed_special="all")
        Traceback (most recent call last):
        ...
        bytepair.errors.DisallowedSpecialError: Encountered text corresponding to disallowed special token '<s>'.
        """
        if allowed_special is None and disallowed_special is None:
            return _surrogate_safe(self._pipeline.encode, text, bool(add_special_tokens), False)
        specials = set(self.special_tokens)
        allowed = specials if allowed_special == "all" else set(allowed_special or ())
        if allowed and allowed != specials:
            raise BytepairError("a pipeline matches all its special tokens or none: use allowed_special='all' "
                                "or leave it empty")
        disallowed = (specials if disallowed_special == "all" else set(disallowed_special or ())) - allowed
        for token in sorted(disallowed):
            if token in text:
                raise DisallowedSpecialError(f"Encountered text corresponding to disallowed special token {token!r}.")
        return _surrogate_safe(self._pipeline.encode, text, bool(add_special_tokens), not allowed)

    def encode_ordinary(self, text: str) -> List[int]:
        """Ids of ``text`` with special added tokens' text encoded as text."""
        return _surrogate_safe(self._pipeline.encode, text, False, True)

    def encode_with_offsets(self, text: str, *, add_special_tokens: bool = False  # type: ignore[override]
                            ) -> Tuple[List[int], List[Tuple[int, int]]]:
        """Ids and each token's character span in ``text`` (HF's offsets)."""
        ids, spans = _surrogate_safe(self._pipeline.encode_with_offsets, text, bool(add_special_tokens), False)
        return ids, [tuple(s) for s in spans]

    def encode_batch(self, texts: Sequence[str], *, add_special_tokens: bool = False  # type: ignore[override]
                     ) -> List[List[int]]:
        """``encode`` of each text, in parallel with the GIL released."""
        texts = [_check_text(t) for t in texts]
        try:
            return self._pipeline.encode_batch(texts, bool(add_special_tokens), False)
        except UnicodeEncodeError:
            return self._pipeline.encode_batch([_replace_surrogates(t) for t in texts], bool(add_special_tokens), False)

    def encode_ordinary_batch(self, texts: Sequence[str]) -> List[List[int]]:
        """``encode_ordinary`` of each text, in parallel."""
        texts = [_check_text(t) for t in texts]
        try:
            return self._pipeline.encode_batch(texts, False, True)
        except UnicodeEncodeError:
            return self._pipeline.encode_batch([_replace_surrogates(t) for t in texts], False, True)

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` (``len(encode_ordinary(text))``:
        special-token text counts as text).

        >>> from_hf_json('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}'
        ...              ).count("abba")
        3
        """
        return len(self.encode_ordinary(text))

    def count_batch(self, texts: Sequence[str]) -> List[int]:
        """``count`` of each text, in parallel.

        >>> from_hf_json('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]}}'
        ...              ).count_batch(["ab", "", "ba"])
        [1, 0, 2]
        """
        return [len(ids) for ids in self.encode_ordinary_batch(texts)]

    def tokenize(self, text: str) -> List[Union[str, bytes]]:
        """The tokens of ``text``: bytes for byte-level pipelines, else the
        vocabulary strings (HF's ``encode(text).tokens``)."""
        ids = self.encode(text)
        if self._pipeline.is_byte_level:
            return [self._pipeline.token_bytes(i) for i in ids]
        return [self._pipeline.id_to_token(i) for i in ids]

    def encode_stream(self, *args: Any, **kwargs: Any) -> Any:
        raise TrainingError("encode_stream is not available for Hugging Face pipelines yet; use encode_batch")

    def encode_file(self, *args: Any, **kwargs: Any) -> Any:
        raise TrainingError("encode_file is not available for Hugging Face pipelines yet; use encode_batch")

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Iterable[int], skip_special_tokens: bool = False) -> bytes:  # type: ignore[override]
        """The bytes of ``ids``: each token's bytes in byte-level pipelines
        (a split character survives), else ``decode``'s UTF-8."""
        return self._pipeline.decode_bytes(_check_ids(ids), bool(skip_special_tokens))

    def decode(self, ids: Iterable[int], errors: str = "replace",  # type: ignore[override]
               skip_special_tokens: bool = False) -> str:
        """Hugging Face's ``decode(ids, skip_special_tokens)`` (``errors`` is
        used by byte-level pipelines only, HF's being ``replace``)."""
        ids = _check_ids(ids)
        if errors != "replace" and self._pipeline.is_byte_level:
            return self._pipeline.decode_bytes(ids, bool(skip_special_tokens)).decode("utf-8", errors)
        return self._pipeline.decode(ids, bool(skip_special_tokens))

    def decode_single_token_bytes(self, id_: int) -> bytes:
        """One token's bytes."""
        from bytepair.errors import UnknownTokenError

        raw = self._pipeline.token_bytes(id_) if isinstance(id_, int) and 0 <= id_ < 2**32 else None
        if raw is None:
            raise UnknownTokenError(f"token id {id_!r} is not in the vocabulary")
        return raw

    def _token(self, id_: int) -> Union[str, bytes]:
        return self.decode_single_token_bytes(id_)

    def vocab(self) -> Dict[int, Union[str, bytes]]:  # type: ignore[override]
        """id -> token string (as in the file)."""
        out = {}
        for i in range(self.n_vocab):
            t = self._pipeline.id_to_token(i)
            if t is not None:
                out[i] = t
        return out

    @property
    def merges(self) -> List[Tuple[Any, Any]]:  # type: ignore[override]
        """The model's merges as written in the file."""
        out = []
        for m in self._description["model"].get("merges") or []:
            out.append(tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m))
        return out

    # ------------------------------------------------------------------ unsupported

    def train(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        raise TrainingError("a Hugging Face pipeline cannot be trained further by bytepair")

    def to_tiktoken(self, name: Optional[str] = None) -> Any:
        raise FormatError("a Hugging Face pipeline cannot be written as a tiktoken Encoding")

    def trace(self) -> List[str]:
        raise TrainingError("a Hugging Face pipeline has no training trace")

    # ------------------------------------------------------------------ files

    def to_dict(self) -> Dict[str, Any]:
        """The native description: ``{"bytepair": 1, "model": "pipeline",
        "pipeline": <the tokenizer.json object>}``."""
        return {"bytepair": 1, "model": "pipeline", "pipeline": self.description()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "PipelineTokenizer":  # type: ignore[override]
        """Rebuild from :meth:`to_dict`."""
        return cls._from_description(d["pipeline"])

    def to_hf_json(self) -> str:
        """The ``tokenizer.json`` text (Hugging Face loads it with the same ids)."""
        return json.dumps(self._description, ensure_ascii=False, indent=2)

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(PipelineTokenizer.from_dict(state).__dict__)

    def __repr__(self) -> str:
        m = self._description.get("model", {})
        pre = (self._description.get("pre_tokenizer") or {}).get("type")
        norm = (self._description.get("normalizer") or {}).get("type")
        return (f"<bytepair.Tokenizer model='pipeline' n_vocab={self.n_vocab} normalizer={norm!r} "
                f"pre_tokenizer={pre!r} byte_fallback={bool(m.get('byte_fallback'))}>")


def from_hf_json(text: str, path: str = "<string>") -> PipelineTokenizer:
    """A :class:`PipelineTokenizer` from the text of a ``tokenizer.json``.

    >>> tok = from_hf_json('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}')
    >>> tok.encode("aa"), tok.n_vocab
    ([0, 0], 1)
    """
    from bytepair._io import parse_json

    return PipelineTokenizer._from_description(parse_json(text, path), path)


def save_hf(tok: PipelineTokenizer, path: str) -> None:
    """Write the pipeline as a ``tokenizer.json`` (atomically)."""
    atomic_write_text(path, tok.to_hf_json() + "\n")
