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

import functools
import json
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from bytepair._io import atomic_write_text, parse_json
from bytepair.errors import BytepairError, DisallowedSpecialError, FormatError, TrainingError, UnknownTokenError
from bytepair.arrays import flat_arrays, ids_array
from bytepair import spec as specs
from bytepair.formats import hf as hf_format
from bytepair.formats.sentencepiece import hf_description
from bytepair.limits import check_ids, surrogate_safe, surrogate_safe_batch
from bytepair.spec import PipelineSpec
from bytepair.tokenizer import Tokenizer

WHAT = "a Hugging Face tokenizer.json"


# the smallest pipeline, for the docstring examples
_EXAMPLE = json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
                       "pre_tokenizer": {"type": "WhitespaceSplit"}})


class PipelineTokenizer(Tokenizer):
    """A :class:`~bytepair.Tokenizer` running a Hugging Face pipeline
    (built by :func:`from_hf_json` or ``Tokenizer.load``)."""

    _spec_type = PipelineSpec

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self._fast  # built now, with the tokenizer (a pickled one builds it on first use)

    @functools.cached_property
    def _byte_spec(self) -> Any:
        """The byte model when the description is exactly a byte-model
        configuration (:func:`bytepair.formats.hf.byte_model_of`), else None."""
        return hf_format.byte_model_of(self._spec.description)

    @functools.cached_property
    def _fast(self) -> Any:
        """The byte model's core (``encode`` and ``count`` run on it, offsets and decoding on the pipeline), or None."""
        return None if self._byte_spec is None else specs.build_core(self._byte_spec)

    @functools.cached_property
    def _post_adds(self) -> bool:
        """Whether the post-processor adds tokens (then add_special_tokens=True needs the pipeline)."""
        return hf_format._adds_tokens(self._spec.description.get("post_processor"))

    @functools.cached_property
    def _plain_added(self) -> List[str]:
        """The added tokens that are not special (always matched, as in HF)."""
        return [t for t in self._added[0] if t not in self._added[1]]

    def _fast_core(self, add_special_tokens: bool) -> Any:
        return self._fast if self._fast is not None and not (add_special_tokens and self._post_adds) else None

    def _fast_args(self, ordinary: bool) -> Tuple[Any, List[str]]:
        """(allowed, disallowed) of the byte core: every added token, or the non-special ones."""
        return (self._plain_added if ordinary else None), []

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
    def n_vocab(self) -> int:
        """Ids run from 0 to ``n_vocab - 1`` (model and added tokens)."""
        return int(self._core.n_vocab)

    @property
    def added_tokens(self) -> Dict[str, int]:
        """Every added token (special or not) and its id."""
        return dict(self._added[0])

    def description(self) -> Dict[str, Any]:
        """The pipeline's description (the ``tokenizer.json`` object)."""
        return json.loads(json.dumps(self._spec.description))

    # ------------------------------------------------------------------ encoding

    def encode(self, text: str, *, add_special_tokens: bool = False,  # type: ignore[override]
               allowed_special: Any = "all", disallowed_special: Any = (), dropout: Optional[float] = None,
               seed: int = 0) -> List[int]:
        """Ids of ``text`` as Hugging Face's ``encode(text, add_special_tokens)``.

        ``allowed_special`` and ``disallowed_special`` are there for code
        written for tiktoken-style tokenizers (``Tokenizer.encode``): the
        default, ``"all"``, is HF's behaviour (special added tokens in the
        text are matched); an empty set encodes their text as text, and
        ``disallowed_special="all"`` raises :class:`DisallowedSpecialError`
        on special-token text that is not allowed. Non-special added tokens
        are always matched, as in HF. BPE-dropout is the model's
        ``dropout`` field, not an encode option.

        >>> tok = from_hf_json(_EXAMPLE)
        >>> tok.encode("ab b", allowed_special="all") == tok.encode("ab b") == [2, 1]
        True
        """
        if dropout:
            raise BytepairError("dropout is not an encode option of a tokenizer.json pipeline; "
                                "set the BPE model's 'dropout' in its description")
        ordinary = self._ordinary(text, allowed_special, disallowed_special)
        fast = self._fast_core(add_special_tokens)
        if fast is not None:
            return surrogate_safe(fast.encode, text, *self._fast_args(ordinary))
        return surrogate_safe(self._core.encode, text, bool(add_special_tokens), ordinary)

    def _ordinary(self, text: str, allowed: Any, disallowed: Any) -> bool:
        """Whether ``text`` is encoded with special tokens' text as text,
        by tiktoken's rules for ``allowed`` / ``disallowed``."""
        if isinstance(allowed, str) and allowed == "all":
            return False  # every special token allowed (HF's default): no per-call scan of the table
        specials = self._added[1].keys()  # the table itself: no copy per call
        allowed_set = specials if allowed == "all" else set(allowed)
        if specials <= allowed_set:
            return False
        not_allowed = specials - allowed_set if disallowed == "all" else set(disallowed)
        for token in sorted(not_allowed):
            if token and token in text:
                raise DisallowedSpecialError(
                    f'Encountered text corresponding to disallowed special token "{token}".\n'
                    f"Pass it in allowed_special to encode it as the special token, or disallowed_special=() "
                    f"to encode it as text.", token)
        present = {t for t in specials if t and t in text}
        if present and present <= allowed_set:
            return False
        if present & allowed_set:
            raise BytepairError(
                f"a tokenizer.json pipeline matches all its special tokens or none: the text holds allowed "
                f"{sorted(present & allowed_set)} and not allowed {sorted(present - allowed_set)}")
        return True

    def encode_ordinary(self, text: str) -> List[int]:
        """Ids of ``text`` with special added tokens' text encoded as text."""
        if self._fast is not None:
            return surrogate_safe(self._fast.encode, text, *self._fast_args(True))
        return surrogate_safe(self._core.encode, text, False, True)

    def encode_with_offsets(self, text: str, *, add_special_tokens: bool = False,  # type: ignore[override]
                            allowed_special: Any = "all") -> Tuple[List[int], List[Tuple[int, int]]]:
        """Ids and each token's character span in ``text`` (HF's offsets);
        ``allowed_special`` as in :meth:`encode`.

        >>> from_hf_json(_EXAMPLE).encode_with_offsets("ab b")
        ([2, 1], [(0, 2), (3, 4)])
        """
        ordinary = self._ordinary(text, allowed_special, ())
        ids, spans = surrogate_safe(self._core.encode_with_offsets, text, bool(add_special_tokens), ordinary)
        return ids, [tuple(s) for s in spans]

    def encode_batch(self, texts: Sequence[str], *, add_special_tokens: bool = False  # type: ignore[override]
                     ) -> List[List[int]]:
        """``encode`` of each text, in parallel with the GIL released."""
        fast = self._fast_core(add_special_tokens)
        if fast is not None:
            return surrogate_safe_batch(fast.encode_batch, texts, *self._fast_args(False))
        return surrogate_safe_batch(self._core.encode_batch, texts, bool(add_special_tokens), False)

    def encode_ordinary_batch(self, texts: Sequence[str]) -> List[List[int]]:
        """``encode_ordinary`` of each text, in parallel."""
        if self._fast is not None:
            return surrogate_safe_batch(self._fast.encode_batch, texts, *self._fast_args(True))
        return surrogate_safe_batch(self._core.encode_batch, texts, False, True)

    def count_batch(self, texts: Sequence[str]) -> List[int]:
        """``count`` of each text, in parallel.

        >>> from_hf_json(_EXAMPLE).count_batch(["ab", ""])
        [1, 0]
        """
        return [len(ids) for ids in self.encode_ordinary_batch(texts)]

    def encode_to_numpy(self, text: str, *, add_special_tokens: bool = False) -> Any:
        """``encode`` as a read-only numpy ``uint32`` array (needs numpy).

        >>> tok = from_hf_json(_EXAMPLE)
        >>> tok.encode_to_numpy("ab b").tolist() == tok.encode("ab b")
        True
        """
        fast = self._fast_core(add_special_tokens)
        if fast is not None:
            return ids_array(surrogate_safe(fast.encode_to_buffer, text, *self._fast_args(False), False))
        return ids_array(surrogate_safe(self._core.encode_to_buffer, text, bool(add_special_tokens), False))

    def encode_batch_to_numpy(self, texts: Sequence[str], *, add_special_tokens: bool = False) -> Tuple[Any, Any]:
        """``encode_batch`` as one flat read-only ``uint32`` array plus
        ``len(texts) + 1`` ``uint64`` offsets (text ``k`` is
        ``ids[offsets[k]:offsets[k + 1]]``), as ``Tokenizer.encode_batch_to_numpy``.

        >>> ids, offsets = from_hf_json(_EXAMPLE).encode_batch_to_numpy(["ab", "b"])
        >>> ids.tolist(), offsets.tolist()
        ([2, 1], [0, 1, 2])
        """
        fast = self._fast_core(add_special_tokens)
        if fast is not None:
            return flat_arrays(*surrogate_safe_batch(fast.encode_batch_to_buffer, texts, *self._fast_args(False), False))
        return flat_arrays(*surrogate_safe_batch(self._core.encode_batch_to_buffer, texts, bool(add_special_tokens),
                                                 False))

    def count(self, text: str, limit: Optional[int] = None) -> int:
        """Number of tokens of ``text`` (``encode_ordinary``: special added
        tokens' text counts as text); with ``limit=N``, ``min(count, N + 1)``.

        >>> tok = from_hf_json(_EXAMPLE)
        >>> tok.count("ab ab") == len(tok.encode_ordinary("ab ab")), tok.count("ab ab b", limit=1)
        (True, 2)
        """
        if limit is not None:
            return super().count(text, limit)
        if self._fast is not None and not self._plain_added:
            return surrogate_safe(self._fast.count, text)
        return len(self.encode_ordinary(text))

    def tokenize(self, text: str) -> List[Union[str, bytes]]:
        """The tokens of ``text``: bytes for byte-level pipelines, else the
        vocabulary strings (HF's ``encode(text).tokens``)."""
        ids = self.encode(text)
        if self._core.is_byte_level:
            return [self._core.token_bytes(i) for i in ids]
        return [self._core.id_to_token(i) for i in ids]

    def encode_stream(self, blocks: Iterable[str], *, allowed_special: Any = "all",  # type: ignore[override]
                      disallowed_special: Any = (), dropout: Optional[float] = None,
                      seed: int = 0) -> Iterator[List[int]]:
        """The ids of the text given as consecutive ``blocks``: exactly
        ``encode("".join(blocks), ...)``. A pipeline's pre-tokenizer can
        look arbitrarily far ahead, so the blocks are joined first: memory
        grows with the text (``Tokenizer.encode_stream`` stays bounded).

        >>> tok = from_hf_json(_EXAMPLE)
        >>> list(tok.encode_stream(["a", "b b"]))
        [[2, 1]]
        """
        yield self.encode("".join(blocks), allowed_special=allowed_special, disallowed_special=disallowed_special,
                          dropout=dropout, seed=seed)

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Iterable[int], skip_special_tokens: bool = False) -> bytes:  # type: ignore[override]
        """The bytes of ``ids``: each token's bytes in byte-level pipelines
        (a split character survives), else ``decode``'s UTF-8."""
        return self._core.decode_bytes(check_ids(ids), bool(skip_special_tokens))

    def decode(self, ids: Iterable[int], errors: str = "replace",  # type: ignore[override]
               skip_special_tokens: bool = False) -> str:
        """Hugging Face's ``decode(ids, skip_special_tokens)`` (``errors`` is
        used by byte-level pipelines only, HF's being ``replace``)."""
        ids = check_ids(ids)
        if errors != "replace" and self._core.is_byte_level:
            return self._core.decode_bytes(ids, bool(skip_special_tokens)).decode("utf-8", errors)
        return self._core.decode(ids, bool(skip_special_tokens))

    def decode_single_token_bytes(self, id_: int) -> bytes:
        """One token's bytes."""
        raw = self._core.token_bytes(id_) if isinstance(id_, int) and 0 <= id_ < 2**32 else None
        if raw is None:
            raise UnknownTokenError(f"token id {id_!r} is not in the vocabulary")
        return raw

    def _token(self, id_: int) -> Union[str, bytes]:
        return self.decode_single_token_bytes(id_)

    def vocab(self) -> Dict[int, Union[str, bytes]]:  # type: ignore[override]
        """id -> token string (as in the file)."""
        out = {}
        for i in range(self.n_vocab):
            t = self._core.id_to_token(i)
            if t is not None:
                out[i] = t
        return out

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
        """The ``tokenizer.json`` text (Hugging Face loads it with the same ids)."""
        if (self._spec.description.get("model") or {}).get("type") == "SentencePieceBPE":
            return json.dumps(hf_description(self._spec.description), ensure_ascii=False, indent=2)
        return json.dumps(self._spec.description, ensure_ascii=False, indent=2)

    def __repr__(self) -> str:
        m = self._spec.description.get("model", {})
        pre = (self._spec.description.get("pre_tokenizer") or {}).get("type")
        norm = (self._spec.description.get("normalizer") or {}).get("type")
        return (f"<bytepair.Tokenizer model='pipeline' n_vocab={self.n_vocab} normalizer={norm!r} "
                f"pre_tokenizer={pre!r} byte_fallback={bool(m.get('byte_fallback'))}>")


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
