"""``Tokenizer``: the public class, an immutable product built from one
description (:mod:`bytepair.spec`) over the Rust core. Training lives in
:mod:`bytepair.training`, files in :mod:`bytepair.formats`, input checks in
:mod:`bytepair.limits`; this module only ties them to the class.

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("low lower lowest " * 20, vocab_size=260)
>>> tok.decode(tok.encode("lowest low"))
'lowest low'
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Iterable, Mapping
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from bytepair import chunking, explain as explaining, formats, spec as specs, stream, training
from bytepair.arrays import flat_arrays, ids_array
from bytepair.errors import BytepairError, FormatError, UnknownTokenError
from bytepair.formats import hf as hf_format, tiktoken as tiktoken_format, transformers as transformers_folder
from bytepair.limits import dropout_args, surrogate_safe_batch
from bytepair.progress import Reporter, make_reporter
from bytepair.specials import Allow, Flag, ModelSpecials
from bytepair.vocabulary import VocabularyNames


def _constructor(make: Callable[..., Any], summary: str) -> Any:
    """A constructor of ``Tokenizer`` that builds the tokenizer of ``make``'s
    description; its help and signature are ``make``'s."""
    def construct(cls: Any, *args: Any, **options: Any) -> "Tokenizer":
        return cls.from_spec(make(*args, **options))
    signature = inspect.signature(make)
    cls_parameter = inspect.Parameter("cls", inspect.Parameter.POSITIONAL_ONLY)
    construct.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[cls_parameter, *signature.parameters.values()], return_annotation="Tokenizer")
    construct.__doc__ = f"{summary} The tokenizer of this description:\n\n{inspect.cleandoc(make.__doc__ or '')}"
    construct.__name__ = construct.__qualname__ = make.__name__
    return classmethod(construct)


def _setting(name: str, doc: str) -> property:
    """A read-only attribute of the description (None where its kind has none)."""
    return property(lambda self: getattr(self._spec, name, None), doc=doc)


class Tokenizer(ModelSpecials, VocabularyNames):
    """A byte-pair-encoding tokenizer: the ``byte`` model (GPT-2/tiktoken), the
    ``char`` model (Sennrich et al., with an end-of-word marker), or a
    ``pipeline`` (a loaded ``tokenizer.json``, ``.model``, GGUF ...: normalizer,
    pre-tokenizer, model, post-processor and decoder). One class for all: its
    core runs the description, and every call is the same call on every core.
    Immutable: build one with :meth:`train`, :meth:`from_merges`, :meth:`load`,
    :meth:`from_tiktoken` or :meth:`from_spec`.

    >>> tok = Tokenizer.train(["lower", "lowest", "newer", "newest", "wider", "low", "new"],
    ...                       model="char", end_of_word="_", tie_break="alphabetical", num_merges=6)
    >>> tok.tokenize("slower")
    ['s', 'lowe', 'r_']
    >>> tok.pattern = "gpt2"
    Traceback (most recent call last):
    AttributeError: a Tokenizer is immutable: build a new one (e.g. Tokenizer.from_spec) instead of changing 'pattern'
    """

    def __init__(self, spec: Any) -> None:  # use the constructors
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_core", specs.build_core(spec))

    def __setattr__(self, name: str, value: Any) -> None:
        self.__delattr__(name)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Tokenizer is immutable: build a new one (e.g. Tokenizer.from_spec) instead of "
                             f"changing {name!r}")

    @classmethod
    def from_spec(cls, spec: Any) -> "Tokenizer":
        """The tokenizer of a description (:mod:`bytepair.spec`: a byte or char
        model's, or a pipeline's).

        >>> tok = Tokenizer.from_spec(specs.from_merges([("a", "b")], end_of_word=None))
        >>> tok.tokenize("abab a")
        ['ab', 'ab', 'a']
        """
        if type(spec) not in (specs.ModelSpec, specs.PipelineSpec):
            raise BytepairError(f"not a tokenizer description: {type(spec).__name__}")
        return cls(spec)

    train = _constructor(training.train, "Train a tokenizer on ``corpus``: a str, documents, word counts or a path.")
    train_parity = _constructor(training.train_parity, "Parity-aware BPE over one corpus per language.")
    train_from_files = _constructor(training.train_from_files, ":meth:`train` on files read in blocks.")
    train_from_counts = _constructor(training.train_from_counts, ":meth:`train` on counts files.")
    from_merges = _constructor(specs.from_merges, "A tokenizer from merge rules.")

    @classmethod
    def from_tiktoken(cls, path: str, pattern: Optional[str] = None,
                      special_tokens: Optional[Mapping[str, int]] = None) -> "Tokenizer":
        """A byte model from a ``.tiktoken`` file, tiktoken's ranks as ids; the
        pattern and special tokens default to tiktoken's for a well-known
        vocabulary (see :func:`bytepair.formats.tiktoken.from_tiktoken`).

        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "tiny.tiktoken")
        >>> Tokenizer.train("ab ab", num_merges=1).save(path, format="tiktoken")
        >>> Tokenizer.from_tiktoken(path).encode("ab")
        [256]
        """
        return cls.from_spec(tiktoken_format.from_tiktoken(path, pattern=pattern, special_tokens=special_tokens))

    @classmethod
    def load(cls, path: str, format: Optional[str] = None, pattern: Optional[str] = None,
             special_tokens: Optional[Mapping[str, int]] = None) -> "Tokenizer":
        """Read a tokenizer file; ``format`` is detected when None (see :mod:`bytepair.formats`).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "tok.json")
        >>> Tokenizer.train("ab ab", num_merges=1).save(path)
        >>> Tokenizer.load(path).merges
        [(b'a', b'b')]
        """
        return cls.from_spec(formats.load(path, format=format, pattern=pattern, special_tokens=special_tokens))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Tokenizer":
        """Rebuild from :meth:`to_dict`'s description (validated by the caller).

        >>> tok = Tokenizer.train("ab ab", num_merges=1)
        >>> Tokenizer.from_dict(tok.to_dict()).merges == tok.merges
        True
        """
        return cls.from_spec(specs.from_dict(d))

    # ------------------------------------------------------------------ the description

    model = _setting("model", "``'byte'``, ``'char'`` or ``'pipeline'``.")
    pattern = _setting("pattern", "The pre-tokenizer regex (None: ``str.split()``).")
    end_of_word = _setting("end_of_word", "The char model's end-of-word marker (None: none).")
    end_of_word_fused = _setting("end_of_word_fused", "Whether the marker is fused to the last character.")
    byte_fallback = _setting("byte_fallback", "Whether unknown characters become byte tokens (char model).")
    unk_token = _setting("unk_token", "The special token of unknown characters (char model).")
    add_prefix_space = _setting("add_prefix_space", "Hugging Face's ByteLevel(add_prefix_space=True).")
    merge_rule = _setting("merge_rule", "``'in-order'`` or ``'lowest-rank'`` (subword-nmt's apply-bpe).")
    parity_stats = _setting("parity_stats", ":meth:`train_parity`'s statistics per language (not saved).")
    chat_template = _setting("chat_template", "The chat template a GGUF file carries, as text; else None.")

    @property
    def spec(self) -> Any:
        """The immutable description this tokenizer was built from."""
        return self._spec

    @functools.cached_property
    def _added(self) -> Tuple[Dict[str, int], Dict[str, int]]:
        """Every added token with its id, and the special ones in id order (as the core has them)."""
        added, special = self._core.added_tokens()
        return dict(added), {t: added[t] for t in sorted(special, key=added.__getitem__)}

    @property
    def special_tokens(self) -> Dict[str, int]:
        """The special tokens' texts and ids (a copy)."""
        return dict(self._added[1])

    @property
    def added_tokens(self) -> Dict[str, int]:
        """Every added token (special or not: a pipeline's) and its id (a copy)."""
        return dict(self._added[0])

    @property
    def merge_counts(self) -> List[Optional[int]]:
        """How often each merge's pair occurred when it was learned (a copy)."""
        return list(self._spec.merge_counts)

    @property
    def n_vocab(self) -> int:
        """Number of ids (largest id + 1), special tokens included."""
        return int(self._core.n_vocab)

    def _token(self, id_: int) -> Union[str, bytes]:
        token = self._core.token_text(id_)
        if token is None:
            raise UnknownTokenError(f"token id {id_} is not in the vocabulary")
        return token

    @functools.cached_property
    def _triples(self) -> Tuple[Tuple[int, int, int], ...]:
        """Every merge as (left id, right id, id of the merged token), derived once."""
        return tuple(self._core.merge_triples())

    @property
    def merges(self) -> List[Tuple[Any, Any]]:
        """The merge rules in order: ``(str, str)`` in the char model,
        ``(bytes, bytes)`` in the byte model, a pipeline's as its file writes them."""
        if self.model == "pipeline":
            return specs.written_merges(self._spec)
        return [(self._token(l), self._token(r)) for l, r, _ in self._triples]

    @functools.cached_property
    def _vocab_items(self) -> Dict[int, Union[str, bytes]]:
        """id -> token: bytes in the byte model, str in the char model, a pipeline's file strings."""
        tokens = map(self._core.token_text, range(self.n_vocab))
        return {i: t for i, t in enumerate(tokens) if t is not None}

    def trace(self) -> List[str]:
        """Seed 000's trace lines, one per merge learned in training.

        >>> Tokenizer.train({"aab": 2}, model="char", end_of_word=None).trace()
        ['merge 1: a + a -> aa  (count 2)', 'merge 2: aa + b -> aab  (count 2)']
        """
        return training.trace(self.merges, self.merge_counts)

    # ------------------------------------------------------------------ encoding

    def encode(self, text: str, *, allowed_special: Allow = None, disallowed_special: Allow = None,
               dropout: Optional[float] = None, seed: int = 0, add_special_tokens: Flag = None) -> List[int]:
        """Ids of ``text``, by one policy for every tokenizer (see
        :mod:`bytepair.specials`). tiktoken's style: special-token text
        raises ``DisallowedSpecialError`` unless it is in ``allowed_special``
        (then it is its id) or left out of ``disallowed_special`` (then it
        is plain text); these are the defaults. Hugging Face's style,
        ``add_special_tokens`` alone: special-token text is matched as the
        file's owner matches it, and ``True`` adds what the owner adds (BOS
        for tekken.json; nothing for tiktoken files, which have no BOS).
        ``dropout=p`` applies BPE-dropout (Provilkov et al.),
        deterministically for a ``seed``.

        >>> tok = Tokenizer.train("hello world", special_tokens=["<|endoftext|>"])
        >>> tok.encode("hi<|endoftext|>", allowed_special="all")[-1] == tok.eot_token
        True
        >>> tok.encode("hi<|endoftext|>", add_special_tokens=False) == tok.encode("hi<|endoftext|>", allowed_special="all")
        True
        >>> ids = tok.encode("hello", dropout=0.5, seed=7)
        >>> tok.decode(ids), ids == tok.encode("hello", dropout=0.5, seed=7)
        ('hello', True)
        """
        if allowed_special is None and disallowed_special is None and not dropout:  # the common calls, at once
            if add_special_tokens is None:
                return self._core.encode(text, (), None)  # tiktoken's bare call
            if self._spec.match_special_text:  # Hugging Face's call
                return self._core.encode(text, None, (), bool(add_special_tokens))
        allowed, disallowed, add = self._call(allowed_special, disallowed_special, add_special_tokens)
        if not dropout:
            return self._core.encode(text, allowed, disallowed, add)
        return self._core.encode_full(text, allowed, disallowed, dropout_args(dropout, seed), False, add)[0]

    def encode_stream(self, blocks: Iterable[str], *, allowed_special: Allow = None, disallowed_special: Allow = None,
                      dropout: Optional[float] = None, seed: int = 0,
                      add_special_tokens: Flag = None) -> Iterator[List[int]]:
        """The ids of one long text given as consecutive pieces ``blocks``,
        list by list as soon as more text can no longer change them: together
        exactly ``encode("".join(blocks), ...)``, errors included (see
        :mod:`bytepair.stream`). Memory stays at about one block plus the
        longest word; a pipeline's pre-tokenizer can look arbitrarily far
        ahead, so its blocks are joined and encoded at the end.

        >>> tok = Tokenizer.train("hello world " * 10, num_merges=8)
        >>> [i for ids in tok.encode_stream(["hel", "lo wo", "rld"]) for i in ids] == tok.encode("hello world")
        True
        """
        allowed, disallowed, add = self._call(allowed_special, disallowed_special, add_special_tokens)
        return stream.encode_stream(self, blocks, allowed, disallowed, dropout_args(dropout, seed) if dropout else None,
                                    add)

    def encode_file(self, input: Any, output: Any, *, errors: str = "strict", format: Optional[str] = None,
                    block_bytes: Optional[int] = None, progress: Union[None, bool, str, Reporter] = None,
                    **options: Any) -> int:
        """Encodes the file ``input`` (a path, ``"-"``, or an open binary file)
        ``block_bytes`` at a time and writes its ids to ``output`` as it goes
        (``format`` ``"npy"`` or ``"text"``; see :mod:`bytepair.stream`);
        returns their number. ``options`` are :meth:`encode_stream`'s.

        >>> import io
        >>> tok = Tokenizer.train("hello world " * 10, num_merges=8)
        >>> tok.encode_file(io.BytesIO(b"hello world"), io.BytesIO(), format="text") == len(tok.encode("hello world"))
        True
        """
        if errors not in ("strict", "replace"):
            raise BytepairError(f"errors must be 'strict' or 'replace', got {errors!r}")
        blocks = stream.file_blocks(input, errors, block_bytes, make_reporter(progress))
        return stream.write_ids(output, self.encode_stream(blocks, **options), format, self.n_vocab)

    def encode_with_offsets(self, text: str, *, allowed_special: Allow = None, disallowed_special: Allow = None,
                            add_special_tokens: Flag = None) -> Tuple[List[int], List[Tuple[int, int]]]:
        """Ids of ``text`` and the character span ``(start, end)`` of each
        token in ``text``. A byte token that covers part of a character spans
        that whole character; the char model's end-of-word marker covers no
        text (an empty span at the end of its word).

        >>> tok = Tokenizer.train("hello world")
        >>> ids, spans = tok.encode_with_offsets("hello world")
        >>> ["hello world"[s:e] for s, e in spans] == [tok.decode([i]) for i in ids]
        True
        """
        allowed, disallowed, add = self._call(allowed_special, disallowed_special, add_special_tokens)
        ids, spans = self._core.encode_with_offsets(text, allowed, disallowed, add)
        return ids, [tuple(s) for s in spans]

    def encode_ordinary(self, text: str, *, add_special_tokens: bool = False) -> List[int]:
        """Ids of ``text``, special-token text encoded as plain text
        (``add_special_tokens`` as in :meth:`encode`).

        >>> Tokenizer.train("hello", num_merges=0).encode_ordinary("hello<|endoftext|>")[-2:]
        [124, 62]
        """
        return self._core.encode(text, [], [], bool(add_special_tokens))

    def encode_batch(self, texts: Sequence[str], *, allowed_special: Allow = None, disallowed_special: Allow = None,
                     add_special_tokens: Flag = None) -> List[List[int]]:
        """``encode`` of each text, in parallel with the GIL released.

        >>> Tokenizer.train("a b c").encode_batch(["a", "b"])
        [[97], [98]]
        """
        allowed, disallowed, add = self._call(allowed_special, disallowed_special, add_special_tokens)
        return surrogate_safe_batch(self._core.encode_batch, texts, allowed, disallowed, add)

    def encode_ordinary_batch(self, texts: Sequence[str], *, add_special_tokens: bool = False) -> List[List[int]]:
        """``encode_ordinary`` of each text, in parallel.

        >>> Tokenizer.train("a b c").encode_ordinary_batch(["a b", ""])[1]
        []
        """
        return surrogate_safe_batch(self._core.encode_batch, texts, [], [], bool(add_special_tokens))

    def count(self, text: str, limit: Optional[int] = None) -> int:
        """Number of tokens of ``text``; special-token text counts as plain
        text, so this never raises on any str. With ``limit=N``:
        ``min(count, N + 1)``, encoding stops as soon as more than ``N``
        tokens are certain (see :mod:`bytepair.chunking`).

        >>> Tokenizer.train("aaaa").count("aaaa"), Tokenizer.train("aaaa").count("a a a a", limit=2)
        (1, 3)
        """
        if limit is not None:
            return chunking.count_limited(self, text, limit)
        return self._core.count(text)

    def count_batch(self, texts: Sequence[str]) -> List[int]:
        """``count`` of each text, in one parallel pass with the GIL released.

        >>> Tokenizer.train("aaaa").count_batch(["aaaa", "", "aaaaa"])
        [1, 0, 2]
        """
        return surrogate_safe_batch(self._core.count_batch, texts)

    def chunk(self, text: str, max_tokens: int, overlap: int = 0) -> Iterator[str]:
        """Chunks of ``text`` of at most ``max_tokens`` tokens each, cut at the
        best natural boundary that fits (paragraph, line, sentence, word);
        without ``overlap`` they join to ``text`` exactly. See
        :func:`bytepair.chunking.chunk_spans`.

        >>> tok = Tokenizer.train("one two three four " * 20, num_merges=14)
        >>> list(tok.chunk("one two three four", 2))
        ['one two', ' three four']
        """
        return chunking.chunk(self, text, max_tokens, overlap)

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that fits in ``max_tokens`` tokens.

        >>> Tokenizer.train("one two three four " * 20, num_merges=14).truncate("one two three four", 3)
        'one two three'
        """
        return chunking.truncate(self, text, max_tokens)

    def explain(self, text: str, at: Optional[int] = None) -> Any:
        """How ``text`` is encoded, step by step (pre-tokens, each merge with
        its rank, byte fallback, ids): an :class:`bytepair.explain.Explanation`,
        which prints as seed 001's lesson; its ``ids`` equal ``encode_ordinary(text)``.

        >>> tok = Tokenizer.train(["low", "lower"] * 3, model="char", end_of_word="_", num_merges=2)
        >>> str(tok.explain("low")).splitlines()[2:4]
        ['  l · o · w · _', '  merge 1: l + o -> lo']
        >>> tok.explain("lower low").ids == tok.encode("lower low")
        True
        """
        return explaining.explain(self, text, at)

    def encode_to_numpy(self, text: str, *, allowed_special: Allow = None, disallowed_special: Allow = None,
                        add_special_tokens: Flag = None) -> Any:
        """``encode`` as a read-only numpy ``uint32`` array filled by the core
        (tiktoken's ``encode_to_numpy``; needs numpy).

        >>> Tokenizer.train("hello world", num_merges=0).encode_to_numpy("hello").tolist()
        [104, 101, 108, 108, 111]
        """
        allowed, disallowed, add = self._call(allowed_special, disallowed_special, add_special_tokens)
        return ids_array(self._core.encode_to_buffer(text, allowed, disallowed, add))

    def encode_batch_to_numpy(self, texts: Sequence[str], *, allowed_special: Allow = None,
                              disallowed_special: Allow = None, add_special_tokens: Flag = None) -> Tuple[Any, Any]:
        """``encode`` of every text as one flat ``uint32`` array plus
        ``len(texts) + 1`` ``uint64`` offsets (text ``k`` is
        ``ids[offsets[k]:offsets[k + 1]]``), in one parallel pass.

        >>> tok = Tokenizer.train("hello world")
        >>> ids, offsets = tok.encode_batch_to_numpy(["hello", "world"])
        >>> ids[offsets[1]:offsets[2]].tolist() == tok.encode("world")
        True
        """
        allowed, disallowed, add = self._call(allowed_special, disallowed_special, add_special_tokens)
        return flat_arrays(*surrogate_safe_batch(self._core.encode_batch_to_buffer, texts, allowed, disallowed, add))

    def tokenize(self, text: str) -> List[Union[str, bytes]]:
        """The pieces of ``text``: str in the char model, bytes in the byte model;
        a pipeline's tokens (bytes if it is byte-level, else the vocabulary's
        strings: HF's ``encode(text).tokens``).

        >>> Tokenizer.train("abab", model="char", end_of_word=None).tokenize("abab ba")
        ['abab', 'b', 'a']
        """
        return self._core.tokenize(text)

    # ------------------------------------------------------------------ files

    def save(self, path: str, format: str = "bytepair") -> None:
        """Write the tokenizer to ``path`` (atomically). Formats: ``bytepair``
        (native JSON); the others are in :mod:`bytepair.formats`. A pipeline
        that is exactly a byte-model configuration also writes ``tiktoken``
        and ``gpt2`` files (its byte model's ids: they hold no offsets)."""
        formats.save(self._byte_model() if format in ("tiktoken", "gpt2") else self, path, format)

    def to_tiktoken(self, name: Optional[str] = None) -> Any:
        """A ``tiktoken.Encoding`` that encodes exactly as this byte model, or
        as this pipeline when it is exactly a byte-model configuration
        (tiktoken is imported only when asked for)."""
        byte_model = self._byte_model()
        if byte_model.model == "pipeline":
            raise FormatError("a Hugging Face pipeline cannot be written as a tiktoken Encoding")
        return tiktoken_format.to_tiktoken(byte_model, name)

    @functools.cached_property
    def _byte_spec(self) -> Any:
        """A pipeline's byte model when its description is exactly a byte-model configuration
        (:func:`bytepair.formats.hf.byte_model_of`), else None (encoding always runs on the pipeline)."""
        return hf_format.byte_model_of(self._spec.description) if self.model == "pipeline" else None

    def _byte_model(self) -> "Tokenizer":
        """This tokenizer, or the byte model that a pipeline exactly is (the formats that hold byte models)."""
        return Tokenizer(self._byte_spec) if self._byte_spec is not None else self

    def to_hf_json(self) -> str:
        """The ``tokenizer.json`` text (Hugging Face loads it with the same
        ids); what no ``tokenizer.json`` holds exactly raises ``FormatError``
        (see :func:`bytepair.formats.hf.to_json`).

        >>> json.loads(Tokenizer.train("ab ab", num_merges=1).to_hf_json())["model"]["type"]
        'BPE'
        """
        return json.dumps(hf_format.to_json(self), ensure_ascii=False, indent=2)

    def description(self) -> Dict[str, Any]:
        """The pipeline description of this tokenizer (the ``tokenizer.json``
        object; :meth:`as_pipeline`'s).

        >>> Tokenizer.train("ab ab", num_merges=1).description()["decoder"]["type"]
        'ByteLevel'
        """
        return json.loads(json.dumps(self.as_pipeline().description))

    def save_pretrained(self, folder: str, **roles: Any) -> None:
        """Write a ``transformers`` folder that ``AutoTokenizer.from_pretrained(folder)``
        loads with the same ids; ``bos``/``eos``/``pad``/``unk`` name special
        tokens to give those roles, ``chat_template``/``model_max_length`` go
        to its config (see :mod:`bytepair.formats.transformers`).

        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> Tokenizer.train("hello world", special_tokens=["<|endoftext|>"]).save_pretrained(folder, eos="<|endoftext|>")
        >>> sorted(os.listdir(folder))
        ['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
        """
        transformers_folder.save(self, folder, **roles)

    def as_pipeline(self) -> Any:
        """The pipeline description of exactly this tokenizer (a
        :class:`~bytepair.spec.PipelineSpec`, Hugging Face's ``tokenizer.json``
        shape): ``Tokenizer.from_spec`` of it gives the same ids, decoding and
        offsets; what no pipeline expresses raises ``FormatError`` (see
        :func:`bytepair.formats.hf.as_pipeline`).

        >>> tok = Tokenizer.train("hello world " * 5, num_merges=4)
        >>> Tokenizer.from_spec(tok.as_pipeline()).encode_with_offsets("hello  wörld") == tok.encode_with_offsets("hello  wörld")
        True
        """
        return hf_format.as_pipeline(self)

    def to_dict(self) -> Dict[str, Any]:
        """The native description (what ``save`` writes as JSON)."""
        return specs.to_dict(self._spec)

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(specs.from_dict(state))  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"<bytepair.Tokenizer model={self.model!r} n_vocab={self.n_vocab} {specs.summary(self._spec)}>"
