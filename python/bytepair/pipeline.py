"""Tokenizers that are pipelines: a Hugging Face ``tokenizer.json`` run by
the Rust core (``src/pipeline``) with Hugging Face's ids, decoding and
offsets: normalizer, pre-tokenizer, BPE model, added tokens,
post-processor and decoder, built from the file's description.

:func:`from_hf_json` builds one; ``Tokenizer.load`` uses it for every
``tokenizer.json`` that bytepair's byte and char models cannot run exactly
(Llama 3, DeepSeek, Qwen, SentencePiece-converted files, NFKC ...).

Calls follow the one special-token policy of every tokenizer
(:mod:`bytepair.specials`): ``encode(text, add_special_tokens=False)`` is
Hugging Face's call (every added token matched, no BOS/EOS);
``add_special_tokens=True`` adds what the post-processor adds (BOS/EOS).
A bare ``encode(text)``, or one with ``allowed_special`` /
``disallowed_special``, follows tiktoken's rules for the *special* added
tokens (by default their text raises ``DisallowedSpecialError``); the
non-special ones are always matched, as in Hugging Face.

>>> import json
>>> desc = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
...         "pre_tokenizer": {"type": "WhitespaceSplit"}, "decoder": None,
...         "added_tokens": [{"id": 3, "content": "<s>", "special": True}],
...         "post_processor": {"type": "TemplateProcessing",
...             "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
...             "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}}}
>>> tok = from_hf_json(json.dumps(desc))
>>> tok.encode("ab ba", add_special_tokens=False), tok.encode("ab ba", add_special_tokens=True)
([2, 1, 0], [3, 2, 1, 0])
>>> tok.decode([3, 2, 1, 0]), tok.decode([3, 2], skip_special_tokens=True)
('<s> ab b a', 'ab')
"""

from __future__ import annotations

import functools
import json
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from bytepair._io import atomic_write_text, parse_json
from bytepair.errors import BytepairError, FormatError, TrainingError
from bytepair.formats import hf as hf_format
from bytepair.formats.sentencepiece import hf_description
from bytepair.limits import check_ids, surrogate_safe_batch
from bytepair.spec import PipelineSpec
from bytepair.specials import Allow, Flag, drop
from bytepair.tokenizer import Tokenizer

WHAT = "a Hugging Face tokenizer.json"


# the smallest pipeline, for the docstring examples
_EXAMPLE = json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
                       "pre_tokenizer": {"type": "WhitespaceSplit"}})


class PipelineTokenizer(Tokenizer):
    """A :class:`~bytepair.Tokenizer` running a Hugging Face pipeline
    (built by :func:`from_hf_json` or ``Tokenizer.load``)."""

    _spec_type = PipelineSpec

    @functools.cached_property
    def _byte_spec(self) -> Any:
        """The byte model when the description is exactly a byte-model
        configuration (:func:`bytepair.formats.hf.byte_model_of`), else None:
        what ``to_tiktoken`` and ``save`` convert to (encoding always runs on the pipeline)."""
        return hf_format.byte_model_of(self._spec.description)

    @functools.cached_property
    def _added(self) -> Tuple[Dict[str, int], Dict[str, int]]:
        """Every added token with its id, and the special ones in id order."""
        added, special = self._core.added_tokens()
        return dict(added), {t: added[t] for t in sorted(special, key=lambda t: added[t])}

    @property
    def special_tokens(self) -> Dict[str, int]:  # type: ignore[override]
        """The special added tokens and their ids (a copy)."""
        return dict(self._added[1])

    @property
    def added_tokens(self) -> Dict[str, int]:
        """Every added token (special or not) and its id."""
        return dict(self._added[0])

    def description(self) -> Dict[str, Any]:
        """The pipeline's description (the ``tokenizer.json`` object)."""
        return json.loads(json.dumps(self._spec.description))

    # ------------------------------------------------------------------ encoding

    def tokenize(self, text: str) -> List[Union[str, bytes]]:
        """The tokens of ``text``: bytes for byte-level pipelines, else the
        vocabulary strings (HF's ``encode(text).tokens``)."""
        ids = self.encode(text, add_special_tokens=False)
        if self._core.is_byte_level:
            return [self._core.token_bytes(i) for i in ids]
        return [self._core.id_to_token(i) for i in ids]

    def encode_stream(self, blocks: Iterable[str], *, allowed_special: Allow = None, disallowed_special: Allow = None,
                      dropout: Optional[float] = None, seed: int = 0,
                      add_special_tokens: Flag = None) -> Iterator[List[int]]:
        """The ids of the text given as consecutive ``blocks``: exactly
        ``encode("".join(blocks), ...)``. A pipeline's pre-tokenizer can
        look arbitrarily far ahead, so the blocks are joined first: memory
        grows with the text (``Tokenizer.encode_stream`` stays bounded).

        >>> tok = from_hf_json(_EXAMPLE)
        >>> list(tok.encode_stream(["a", "b b"]))
        [[2, 1]]
        """
        yield self.encode("".join(blocks), allowed_special=allowed_special, disallowed_special=disallowed_special,
                          dropout=dropout, seed=seed, add_special_tokens=add_special_tokens)

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Iterable[int], skip_special_tokens: bool = False) -> bytes:  # type: ignore[override]
        """The bytes of ``ids``: each token's bytes in byte-level pipelines
        (a split character survives), llama.cpp's decoding for a GGUF file's,
        else ``decode``'s UTF-8."""
        return self._core.decode_bytes(self._decodable(ids), bool(skip_special_tokens))

    def decode(self, ids: Iterable[int], errors: str = "replace",  # type: ignore[override]
               skip_special_tokens: bool = False) -> str:
        """Hugging Face's ``decode(ids, skip_special_tokens)`` (``errors`` is
        used by byte-level pipelines only, HF's being ``replace``)."""
        ids = self._decodable(ids)
        # llama.cpp's decoding (a GGUF file's) gives bytes; the core's str would replace bad UTF-8 its own way
        if self._spec.llama_decode is not None or (errors != "replace" and self._core.is_byte_level):
            return self._core.decode_bytes(ids, bool(skip_special_tokens)).decode("utf-8", errors)
        return self._core.decode(ids, bool(skip_special_tokens))

    def _decodable(self, ids: Iterable[int]) -> List[int]:
        """``ids`` checked, without the holes of the vocabulary (HF decodes them to nothing)."""
        ids = check_ids(ids)
        return drop(ids, self._spec.decode_skips) if self._spec.decode_skips else ids

    def _token(self, id_: int) -> Union[str, bytes]:
        return self.decode_single_token_bytes(id_)

    @functools.cached_property
    def _vocab_items(self) -> Dict[int, Union[str, bytes]]:  # type: ignore[override]
        """id -> token string (as in the file)."""
        out = {}
        for i in range(self.n_vocab):
            t = self._core.id_to_token(i)
            if t is not None:
                out[i] = t
        return out

    @functools.cached_property
    def _hf_strings(self) -> Dict[int, str]:
        return self._vocab_items  # type: ignore[return-value]

    @property
    def merges(self) -> List[Tuple[Any, Any]]:  # type: ignore[override]
        """The model's merges as written in the file."""
        out = []
        for m in self._spec.description["model"].get("merges") or []:
            out.append(tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m))
        return out

    # ------------------------------------------------------------------ unsupported

    def train(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        raise TrainingError("a Hugging Face pipeline cannot be trained further by bytepair")

    def to_tiktoken(self, name: Optional[str] = None) -> Any:
        """A ``tiktoken.Encoding`` with the same ids, when the pipeline is
        exactly a byte-model configuration (its byte model's); else ``FormatError``.

        >>> pipe = Tokenizer.from_spec(Tokenizer.train("ab ab", num_merges=1).as_pipeline())
        >>> pipe.to_tiktoken("tiny").encode("ab ab") == pipe.encode("ab ab")
        True
        """
        if self._byte_spec is None:
            raise FormatError("a Hugging Face pipeline cannot be written as a tiktoken Encoding")
        return Tokenizer(self._byte_spec).to_tiktoken(name)

    def save(self, path: str, format: str = "bytepair") -> None:
        """Write the tokenizer to ``path`` (see ``Tokenizer.save``); a pipeline
        that is exactly a byte-model configuration also writes ``tiktoken``
        and ``gpt2`` files (its byte model's ids: they hold no offsets).

        >>> import os, tempfile
        >>> pipe = Tokenizer.from_spec(Tokenizer.train("ab ab", num_merges=1).as_pipeline())
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.tiktoken")
        >>> pipe.save(path, format="tiktoken")
        >>> Tokenizer.from_tiktoken(path).encode("ab") == pipe.encode("ab")
        True
        """
        if format in ("tiktoken", "gpt2") and self._byte_spec is not None:
            return Tokenizer(self._byte_spec).save(path, format)
        return super().save(path, format)

    def trace(self) -> List[str]:
        raise TrainingError("a Hugging Face pipeline has no training trace")

    # ------------------------------------------------------------------ files

    def to_hf_json(self) -> str:
        """The ``tokenizer.json`` text (Hugging Face loads it with the same ids); a GGUF tokenizer whose special
        tokens llama.cpp cuts its own way (``special_cut``) is refused: Hugging Face would cut them otherwise; so
        is one whose pre-tokenizer runs one of llama.cpp's hand-written routines (``LlamaSplit``)."""
        if _llama_split_stages(self._spec.description.get("pre_tokenizer")):
            raise FormatError(f"{self._spec.path}: a tokenizer.json cannot hold this tokenizer exactly: its "
                              "pre-tokenizer runs one of llama.cpp's hand-written splitting routines (LlamaSplit), "
                              "which Hugging Face does not have")
        if self._spec.description.get("special_cut") is not None:
            raise FormatError(f"{self._spec.path}: a tokenizer.json cannot hold this tokenizer exactly: llama.cpp "
                              "cuts its special tokens out of the text longest first (some overlap) or strips ASCII "
                              "whitespace beside them, and Hugging Face's cut gives other ids")
        if (self._spec.description.get("model") or {}).get("type") == "SentencePieceBPE":
            return json.dumps(hf_description(self._spec.description), ensure_ascii=False, indent=2)
        return json.dumps(self._spec.description, ensure_ascii=False, indent=2)

    def __repr__(self) -> str:
        m = self._spec.description.get("model", {})
        pre = (self._spec.description.get("pre_tokenizer") or {}).get("type")
        norm = (self._spec.description.get("normalizer") or {}).get("type")
        return (f"<bytepair.Tokenizer model='pipeline' n_vocab={self.n_vocab} normalizer={norm!r} "
                f"pre_tokenizer={pre!r} byte_fallback={bool(m.get('byte_fallback'))}>")


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


def from_hf_json(text: str, path: str = "<string>") -> PipelineTokenizer:
    """A :class:`PipelineTokenizer` from the text of a ``tokenizer.json``.

    >>> tok = from_hf_json('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}')
    >>> tok.encode("aa"), tok.n_vocab
    ([0, 0], 1)
    """
    return PipelineTokenizer(PipelineSpec(parse_json(text, path), path))


def save_hf(tok: PipelineTokenizer, path: str) -> None:
    """Write the pipeline as a ``tokenizer.json`` (atomically)."""
    atomic_write_text(path, tok.to_hf_json() + "\n")
