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
from collections.abc import Iterable, Mapping
from typing import Any, Collection, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union

from bytepair import chunking, explain as explaining, formats, spec as specs, stream, training
from bytepair.arrays import as_id_buffer, flat_arrays, ids_array
from bytepair.decode_stream import DecodeStream
from bytepair.errors import BytepairError, UnknownTokenError
from bytepair.formats import tiktoken as tiktoken_format, transformers as transformers_folder
from bytepair.limits import check_ids, dropout_args, surrogate_safe, surrogate_safe_batch
from bytepair.patterns import preset_name
from bytepair.progress import Reporter, make_reporter

AllOr = Union[Literal["all"], Collection[str]]
MODELS = specs.MODELS
TIE_BREAKS = training.TIE_BREAKS


def _fmt_token(token: Union[str, bytes]) -> str:
    """A token as the trace prints it: bytes as UTF-8 with invalid bytes as \\xNN."""
    return token.decode("utf-8", "backslashreplace") if isinstance(token, bytes) else token


def _special_args(allowed_special: AllOr, disallowed_special: AllOr) -> Tuple[Any, Any]:
    """tiktoken's ``allowed_special``/``disallowed_special`` as the core takes them (None: all)."""
    allowed = None if allowed_special == "all" else [t for t in allowed_special if isinstance(t, str)]
    disallowed = None if disallowed_special == "all" else [t for t in disallowed_special if isinstance(t, str)]
    return allowed, disallowed


def _signature_of(fn: Any) -> Any:
    """Give the decorated method ``fn``'s signature (``inspect.signature``
    follows ``__wrapped__``) while it keeps its own docstring."""
    def mark(method: Any) -> Any:
        method.__wrapped__ = fn
        return method
    return mark


def _setting(name: str, doc: str) -> property:
    """A read-only attribute of the description."""
    return property(lambda self: getattr(self._spec, name), doc=doc)


class Tokenizer:
    """A byte-pair-encoding tokenizer: the ``byte`` model (GPT-2/tiktoken), the
    ``char`` model (Sennrich et al., with an end-of-word marker), or a loaded
    pipeline (:class:`~bytepair.pipeline.PipelineTokenizer`). Immutable:
    build one with :meth:`train`, :meth:`from_merges`, :meth:`load`,
    :meth:`from_tiktoken` or :meth:`from_spec`.

    >>> tok = Tokenizer.train(["lower", "lowest", "newer", "newest", "wider", "low", "new"],
    ...                       model="char", end_of_word="_", tie_break="alphabetical", num_merges=6)
    >>> tok.tokenize("slower")
    ['s', 'lowe', 'r_']
    >>> tok.pattern = "gpt2"
    Traceback (most recent call last):
    AttributeError: a Tokenizer is immutable: build a new one (e.g. Tokenizer.from_spec) instead of setting 'pattern'
    """

    _spec_type: type = specs.ModelSpec

    def __init__(self, spec: Any) -> None:  # use the constructors
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_core", self._build_core(spec))

    def _build_core(self, spec: Any) -> Any:
        return specs.build_core(spec)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Tokenizer is immutable: build a new one (e.g. Tokenizer.from_spec) instead of "
                             f"setting {name!r}")

    __delattr__ = __setattr__  # type: ignore[assignment]

    # ------------------------------------------------------------------ building

    @classmethod
    def from_spec(cls, spec: Any) -> "Tokenizer":
        """The tokenizer of a description (:mod:`bytepair.spec`), of the class
        that runs it (a pipeline's is a ``PipelineTokenizer``).

        >>> tok = Tokenizer.from_spec(specs.from_merges([("a", "b")], end_of_word=None))
        >>> tok.tokenize("abab a")
        ['ab', 'ab', 'a']
        """
        # the classes that run descriptions are this one and its subclasses (imported with the package)
        for kind in (Tokenizer, *Tokenizer.__subclasses__()):
            if type(spec) is kind._spec_type:
                return kind(spec)
        raise BytepairError(f"not a tokenizer description: {type(spec).__name__}")

    @classmethod
    @_signature_of(training.train)
    def train(cls, corpus: training.Corpus, *args: Any, **options: Any) -> "Tokenizer":
        """Train a tokenizer on ``corpus``: a str, an iterable of documents
        (str), a mapping of word counts (each key one word, in its order), or
        a path (``os.PathLike``; a ``str`` is text) to a UTF-8 file whose
        lines are the documents, read and cut by the core.

        ``pattern`` defaults to ``"cl100k"`` for the byte model and to
        ``str.split()`` (``None``) for the char model. Training stops after
        ``num_merges`` merges, at ``vocab_size`` tokens (everything counted),
        or when no pair occurs ``min_frequency`` times. ``max_token_length``
        bars merges whose token would be longer (characters in the char model,
        marker included; bytes in the byte model), as in HF and sentencepiece.
        ``progress``: ``True``/``"bar"``, ``"json"``, ``"auto"`` or a callable
        ``(stage, done, total)`` (see :mod:`bytepair.progress`). Ctrl-C stops
        training promptly with ``KeyboardInterrupt``.

        ``init=tok`` continues training ``tok``: every id and merge of ``tok``
        is kept, and so are its settings (model, marker, special tokens, and
        its pattern unless ``pattern=`` gives a new one, which the result
        keeps; a ``model`` or marker setting other than ``tok``'s is an
        error); new merges take the ids after ``tok``'s last id.
        ``vocab_size`` counts ``tok``'s ids too; ``num_merges`` counts new
        merges. Characters outside ``tok``'s vocabulary never merge.

        ``max_memory`` (bytes, or a size such as ``"8G"``; ``"none"``: no
        check) bounds the whole process: a ``ResourceError`` says how much
        training needs, before merging, when it would not fit
        (:mod:`bytepair.limits`).

        ``word_start="▁"`` (char model): the SentencePiece-style layout of
        Llama 2 / Mistral, with byte fallback (see :mod:`bytepair.word_start`);
        the result is a pipeline tokenizer that HF runs with the same ids.
        ``superword=True`` (SuperBPE, arXiv 2503.13423; byte model): stage 1
        trains up to ``transition`` tokens, stage 2 continues it with the
        ``"superbpe"`` pattern, whose pieces may hold several words, up to
        ``vocab_size`` (see docs/decisions.md).

        >>> tok = Tokenizer.train({"low": 5, "lower": 2, "newest": 6, "widest": 3},
        ...                       model="char", end_of_word=None, num_merges=5)
        >>> tok.merges
        [('e', 's'), ('es', 't'), ('l', 'o'), ('lo', 'w'), ('n', 'e')]
        >>> Tokenizer.train("low lower lowest", model="char", word_start="\u2581", num_merges=5).tokenize("lower")
        ['▁lower']
        """
        return cls.from_spec(training.train(corpus, *args, **options))

    @classmethod
    @_signature_of(training.train_parity)
    def train_parity(cls, corpora: Any, *args: Any, **options: Any) -> "Tokenizer":
        """Parity-aware BPE (arXiv 2508.04796; Hugging Face's ``ParityBpeTrainer``):
        one corpus per language (``{language: corpus}`` or a list), and each
        merge goes to the language compressed worst so far: the longest
        ``dev`` text in tokens (one corpus per language, ideally parallel),
        else the lowest ``(initial / current length) / ratio[language]`` of
        the training text, else the longest training text. The first
        ``global_merges`` merges are plain BPE over all languages together.
        ``variant="window"``: a language that took more than ``alpha /
        languages`` of the last ``window_size`` merges gives way to the next.
        The default ``tie_break="max-string"`` is HF's and the paper's. A
        corpus may also be a word-count table of
        :func:`bytepair.counts.count_words`. ``tok.parity_stats`` gives, per
        language, its tokens before and after training and its merges.

        >>> tok = Tokenizer.train_parity({"en": ["aabb"] * 10, "de": ["ccdd"] * 10},
        ...                              model="char", end_of_word=None, num_merges=6)
        >>> tok.merges
        [('b', 'b'), ('d', 'd'), ('a', 'bb'), ('c', 'dd'), ('a', 'abb'), ('c', 'cdd')]
        >>> tok.parity_stats["de"]["merges"]
        3
        """
        return cls.from_spec(training.train_parity(corpora, *args, **options))

    @classmethod
    @_signature_of(training.train_from_files)
    def train_from_files(cls, paths: Iterable[Any], *args: Any, **options: Any) -> "Tokenizer":
        """:meth:`train` on files read a block at a time, so memory grows
        with the number of distinct words, not with the corpus: exactly the
        tokenizer that :meth:`train` gives on the files' texts as documents.
        Plain text files are one document each; JSONL (``field``), Parquet
        (``column``), gzip/zstd and ``-`` (stdin) are read as
        :mod:`bytepair.corpus` says; ``max_bytes`` keeps the first N bytes.
        ``client`` (a ``dask.distributed.Client``) counts the files on its
        workers, with the same result.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
        >>> _ = open(path, "w").write("low lower lowest " * 20)
        >>> tok = Tokenizer.train_from_files([path], vocab_size=260)
        >>> tok.merges == Tokenizer.train(["low lower lowest " * 20], vocab_size=260).merges
        True
        """
        return cls.from_spec(training.train_from_files(paths, *args, **options))

    @classmethod
    @_signature_of(training.train_from_counts)
    def train_from_counts(cls, paths: Any, *args: Any, **options: Any) -> "Tokenizer":
        """:meth:`train` on one counts file or several (:mod:`bytepair.counts`),
        with the pattern and special tokens they were counted with.

        >>> import os, tempfile
        >>> from bytepair.counts import count_words, save_counts
        >>> path = os.path.join(tempfile.mkdtemp(), "c.counts")
        >>> counts = count_words([], "gpt2"); counts.add_word("ab", 3)
        >>> save_counts(path, counts, "gpt2")
        >>> Tokenizer.train_from_counts(path, num_merges=1).tokenize("ab")
        [b'ab']
        """
        return cls.from_spec(training.train_from_counts(paths, *args, **options))

    @classmethod
    @_signature_of(specs.from_merges)
    def from_merges(cls, merges: Sequence[Tuple[Any, Any]], *args: Any, **options: Any) -> "Tokenizer":
        """A tokenizer from merge rules: ``(str, str)`` pairs for the char
        model, ``(bytes, bytes)`` for the byte model (merge ``k`` is id
        ``256 + k``). The char model's base alphabet is ``alphabet`` or else
        the characters found in the merges.

        >>> rules = [("t", "h"), ("th", "e"), ("the", "<w>")]
        >>> tok = Tokenizer.from_merges(rules, model="char", end_of_word="<w>")
        >>> tok.tokenize("the")
        ['the<w>']
        """
        return cls.from_spec(specs.from_merges(merges, *args, **options))

    @classmethod
    def from_tiktoken(cls, path: str, pattern: Optional[str] = None,
                      special_tokens: Optional[Mapping[str, int]] = None) -> "Tokenizer":
        """A byte model from a ``.tiktoken`` file, tiktoken's ranks as ids.
        With ``pattern=None``/``special_tokens=None``, a well-known vocabulary
        (cl100k_base, gpt2/r50k_base, p50k_base, o200k_base, recognised by its
        sha256) gets tiktoken's own pattern and special tokens; any other file
        gets ``"cl100k"`` and no special tokens.

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
        """Rebuild from :meth:`to_dict`'s description (validated by the caller);
        a pipeline's description gives a ``PipelineTokenizer``.

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

    @property
    def spec(self) -> Any:
        """The immutable description this tokenizer was built from."""
        return self._spec

    @property
    def special_tokens(self) -> Dict[str, int]:
        """The special tokens' texts and ids (a copy)."""
        return dict(self._spec.special_tokens)

    @property
    def merge_counts(self) -> List[Optional[int]]:
        """How often each merge's pair occurred when it was learned (a copy)."""
        return list(self._spec.merge_counts)

    @property
    def n_vocab(self) -> int:
        """Number of ids (largest id + 1), special tokens included."""
        return int(self._core.n_vocab)

    @property
    def special_tokens_set(self) -> set:
        """The special tokens' texts (as tiktoken's ``special_tokens_set``)."""
        return set(self.special_tokens)

    @property
    def eot_token(self) -> Optional[int]:
        """Id of ``<|endoftext|>`` if it is a special token."""
        return self.special_tokens.get("<|endoftext|>")

    def _token(self, id_: int) -> Union[str, bytes]:
        raw = self._core.token_bytes(id_)
        if raw is None:
            raise UnknownTokenError(f"token id {id_} is not in the vocabulary")
        return raw.decode("utf-8") if self.model == "char" else raw

    @functools.cached_property
    def _triples(self) -> Tuple[Tuple[int, int, int], ...]:
        return tuple(specs.merge_triples(self._spec, self._core))

    def _merge_triples(self) -> List[Tuple[int, int, int]]:
        """Every merge as (left id, right id, id of the merged token), derived once."""
        return list(self._triples)

    @property
    def merges(self) -> List[Tuple[Any, Any]]:
        """The merge rules in order: ``(str, str)`` in the char model,
        ``(bytes, bytes)`` in the byte model."""
        return [(self._token(l), self._token(r)) for l, r, _ in self._triples]

    def vocab(self) -> Dict[int, Union[str, bytes]]:
        """Every id with its token (str in the char model, bytes in the byte
        model), special tokens included."""
        raw = {i: self._core.token_bytes(i) for i in range(self.n_vocab)}
        return {i: b.decode("utf-8") if self.model == "char" else b for i, b in raw.items() if b is not None}

    def trace(self) -> List[str]:
        """Seed 000's trace lines, one per merge learned in training.

        >>> Tokenizer.train({"aab": 2}, model="char", end_of_word=None).trace()
        ['merge 1: a + a -> aa  (count 2)', 'merge 2: aa + b -> aab  (count 2)']
        """
        lines = []
        for k, (left, right) in enumerate(self.merges, 1):
            line = f"merge {k}: {_fmt_token(left)} + {_fmt_token(right)} -> {_fmt_token(left + right)}"
            count = self.merge_counts[k - 1] if k <= len(self.merge_counts) else None
            lines.append(line if count is None else f"{line}  (count {count})")
        return lines

    # ------------------------------------------------------------------ encoding

    def encode(self, text: str, *, allowed_special: AllOr = frozenset(), disallowed_special: AllOr = "all",
               dropout: Optional[float] = None, seed: int = 0, add_special_tokens: bool = False) -> List[int]:
        """Ids of ``text``. Special-token text raises ``DisallowedSpecialError``
        unless it is in ``allowed_special`` (then it is its id) or left out of
        ``disallowed_special`` (then it is plain text), as in tiktoken.
        ``add_special_tokens`` (HF's) changes nothing here: a byte or char
        model has no post-processor. ``dropout=p`` applies BPE-dropout
        (Provilkov et al.), deterministically for a ``seed``.

        >>> tok = Tokenizer.train("hello world", special_tokens=["<|endoftext|>"])
        >>> tok.encode("hi<|endoftext|>", allowed_special="all")[-1] == tok.eot_token
        True
        >>> ids = tok.encode("hello", dropout=0.5, seed=7)
        >>> tok.decode(ids), ids == tok.encode("hello", dropout=0.5, seed=7)
        ('hello', True)
        """
        allowed, disallowed = _special_args(allowed_special, disallowed_special)
        if not dropout:
            return surrogate_safe(self._core.encode, text, allowed, disallowed)
        return surrogate_safe(self._core.encode_full, text, allowed, disallowed, dropout_args(dropout, seed))[0]

    def encode_stream(self, blocks: Iterable[str], *, allowed_special: AllOr = frozenset(),
                      disallowed_special: AllOr = "all", dropout: Optional[float] = None,
                      seed: int = 0) -> Iterator[List[int]]:
        """The ids of one long text given as consecutive pieces ``blocks``,
        list by list as soon as more text can no longer change them: together
        exactly ``encode("".join(blocks), ...)``, errors included (see
        :mod:`bytepair.stream`). Memory stays at about one block plus the
        longest word.

        >>> tok = Tokenizer.train("hello world " * 10, num_merges=8)
        >>> [i for ids in tok.encode_stream(["hel", "lo wo", "rld"]) for i in ids] == tok.encode("hello world")
        True
        """
        allowed, disallowed = _special_args(allowed_special, disallowed_special)
        return stream.encode_stream(self, blocks, allowed, disallowed, dropout_args(dropout, seed) if dropout else None)

    def encode_file(self, input: Any, output: Any, *, errors: str = "strict", format: Optional[str] = None,
                    block_bytes: Optional[int] = None, progress: Union[None, bool, str, Reporter] = None,
                    **options: Any) -> int:
        """Encodes the file ``input`` (a path, ``"-"``, or an open binary file;
        ``.gz``/``.zst`` decompressed) as one text, ``block_bytes`` (1 MB) at
        a time, and writes its ids to ``output`` as it goes (a path
        atomically, or an open binary file) as ``format`` ``"npy"`` or
        ``"text"``; returns their number. ``options`` are
        :meth:`encode_stream`'s; see :func:`bytepair.stream.write_ids`.

        >>> import io
        >>> tok = Tokenizer.train("hello world " * 10, num_merges=8)
        >>> tok.encode_file(io.BytesIO(b"hello world"), io.BytesIO(), format="text") == len(tok.encode("hello world"))
        True
        """
        if errors not in ("strict", "replace"):
            raise BytepairError(f"errors must be 'strict' or 'replace', got {errors!r}")
        blocks = stream.file_blocks(input, errors, block_bytes, make_reporter(progress))
        return stream.write_ids(output, self.encode_stream(blocks, **options), format, self.n_vocab)

    def encode_with_offsets(self, text: str, *, allowed_special: AllOr = frozenset(),
                            disallowed_special: AllOr = "all") -> Tuple[List[int], List[Tuple[int, int]]]:
        """Ids of ``text`` and the character span ``(start, end)`` of each
        token in ``text``. A byte token that covers part of a character spans
        that whole character; the char model's end-of-word marker covers no
        text (an empty span at the end of its word).

        >>> tok = Tokenizer.train("hello world")
        >>> ids, spans = tok.encode_with_offsets("hello world")
        >>> ["hello world"[s:e] for s, e in spans] == [tok.decode([i]) for i in ids]
        True
        """
        allowed, disallowed = _special_args(allowed_special, disallowed_special)
        ids, spans = surrogate_safe(self._core.encode_full, text, allowed, disallowed, None, True)
        return ids, [tuple(s) for s in spans]

    def encode_ordinary(self, text: str) -> List[int]:
        """Ids of ``text``, special-token text encoded as plain text.

        >>> tok = Tokenizer.train("hello world")
        >>> tok.encode_ordinary("hello") == tok.encode("hello")
        True
        """
        return surrogate_safe(self._core.encode_ordinary, text)

    def encode_batch(self, texts: Sequence[str], *, allowed_special: AllOr = frozenset(),
                     disallowed_special: AllOr = "all", add_special_tokens: bool = False) -> List[List[int]]:
        """``encode`` of each text, in parallel with the GIL released.

        >>> tok = Tokenizer.train("a b c")
        >>> tok.encode_batch(["a", "b"]) == [tok.encode("a"), tok.encode("b")]
        True
        """
        return surrogate_safe_batch(self._core.encode_batch, texts, *_special_args(allowed_special, disallowed_special))

    def encode_ordinary_batch(self, texts: Sequence[str]) -> List[List[int]]:
        """``encode_ordinary`` of each text, in parallel.

        >>> Tokenizer.train("a b c").encode_ordinary_batch(["a b", ""])[1]
        []
        """
        return surrogate_safe_batch(self._core.encode_ordinary_batch, texts)

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
        return surrogate_safe(self._core.count, text)

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

        >>> tok = Tokenizer.train(["low", "lower", "lowest"] * 3, model="char", end_of_word="_", num_merges=3,
        ...                       byte_fallback=True)
        >>> print(tok.explain("slow ö"))
        'slow ö' (char model)
        piece 'slow'
          s · l · o · w · _
          merge 1: l + o -> lo
          s · lo · w · _
          merge 2: lo + w -> low
          s · low · _
          tokens: s · low · _ = ids 4 265 7
        piece 'ö'
          ö · _
          ('ö' is not in the vocabulary: byte fallback <0xC3> <0xB6>)
          tokens: <0xC3> · <0xB6> · _ = ids 203 190 7
        >>> tok.explain("slow ö").ids == tok.encode("slow ö")
        True
        """
        return explaining.explain(self, text, at)

    def encode_to_numpy(self, text: str, *, allowed_special: AllOr = frozenset(),
                        disallowed_special: AllOr = "all") -> Any:
        """``encode`` as a read-only numpy ``uint32`` array filled by the core
        (tiktoken's ``encode_to_numpy``; needs numpy).

        >>> tok = Tokenizer.train("hello world")
        >>> tok.encode_to_numpy("hello").tolist() == tok.encode("hello")
        True
        """
        allowed, disallowed = _special_args(allowed_special, disallowed_special)
        ordinary = allowed == [] and disallowed == []  # plain text: no scan for special tokens
        return ids_array(surrogate_safe(self._core.encode_to_buffer, text, allowed, disallowed, ordinary))

    def encode_batch_to_numpy(self, texts: Sequence[str], *, allowed_special: AllOr = frozenset(),
                              disallowed_special: AllOr = "all") -> Tuple[Any, Any]:
        """``encode`` of every text as one flat ``uint32`` array plus
        ``len(texts) + 1`` ``uint64`` offsets (text ``k`` is
        ``ids[offsets[k]:offsets[k + 1]]``), in one parallel pass.

        >>> tok = Tokenizer.train("hello world")
        >>> ids, offsets = tok.encode_batch_to_numpy(["hello", "world"])
        >>> ids[offsets[1]:offsets[2]].tolist() == tok.encode("world")
        True
        """
        allowed, disallowed = _special_args(allowed_special, disallowed_special)
        ordinary = allowed == [] and disallowed == []
        return flat_arrays(*surrogate_safe_batch(self._core.encode_batch_to_buffer, texts, allowed, disallowed,
                                                 ordinary))

    def tokenize(self, text: str) -> List[Union[str, bytes]]:
        """The pieces of ``text``: str in the char model, bytes in the byte model.

        >>> Tokenizer.train("abab", model="char", end_of_word=None).tokenize("abab ba")
        ['abab', 'b', 'a']
        """
        pieces = surrogate_safe(self._core.tokenize, text)
        return [p.decode("utf-8") for p in pieces] if self.model == "char" else list(pieces)

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes that ``ids`` stand for (char model: words joined by one
        space). Unknown ids raise ``UnknownTokenError``. ``ids`` may be a
        numpy integer array (read by the core without a Python int per id).

        >>> Tokenizer.train("ab").decode_bytes([97, 98])
        b'ab'
        """
        buffer = as_id_buffer(ids) if type(ids).__module__ == "numpy" else None
        if buffer is not None:
            return self._core.decode_buffer(buffer)
        ids = check_ids(ids)
        try:
            return self._core.decode_bytes(ids)
        except OverflowError:
            bad = next(i for i in ids if not -(2**63) <= i < 2**63)
            raise UnknownTokenError(f"token id {bad} is not in the vocabulary") from None

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text of ``ids``; invalid UTF-8 is handled by ``errors``.

        >>> tok = Tokenizer.train("héllo wörld")
        >>> tok.decode(tok.encode("wörld héllo"))
        'wörld héllo'
        """
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_stream(self, skip_special_tokens: bool = False, ids: Optional[Iterable[int]] = None) -> DecodeStream:
        """A :class:`~bytepair.decode_stream.DecodeStream`: ``step(id)`` returns
        the new text as soon as it is complete UTF-8, else ``None``, as
        Hugging Face's ``DecodeStream`` does; ``ids`` are ids already shown.

        >>> tok = Tokenizer.train("hello world")
        >>> stream = tok.decode_stream()
        >>> "".join(t for t in map(stream.step, tok.encode("héllo 😀")) if t is not None)
        'héllo 😀'
        """
        return DecodeStream(self, skip_special_tokens=skip_special_tokens, ids=ids)

    def decode_single_token_bytes(self, id_: int) -> bytes:
        """The bytes of one token.

        >>> Tokenizer.train("ab").decode_single_token_bytes(97)
        b'a'
        """
        raw = self._core.token_bytes(id_) if isinstance(id_, int) and 0 <= id_ < 2**32 else None
        if raw is None:
            raise UnknownTokenError(f"token id {id_!r} is not in the vocabulary")
        return raw

    # ------------------------------------------------------------------ files

    def save(self, path: str, format: str = "bytepair") -> None:
        """Write the tokenizer to ``path`` (atomically). Formats: ``bytepair``
        (native JSON); the others are in :mod:`bytepair.formats`."""
        formats.save(self, path, format)

    def to_tiktoken(self, name: Optional[str] = None) -> Any:
        """A ``tiktoken.Encoding`` that encodes exactly as this byte model
        (tiktoken is imported only when asked for)."""
        return tiktoken_format.to_tiktoken(self, name)

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

    def to_dict(self) -> Dict[str, Any]:
        """The native description (what ``save`` writes as JSON)."""
        return specs.to_dict(self._spec)

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        spec = specs.from_dict(state)
        object.__setattr__(self, "_spec", spec)
        object.__setattr__(self, "_core", self._build_core(spec))

    def __repr__(self) -> str:
        pattern = preset_name(self.pattern) or ("str.split()" if self.pattern is None else "custom")
        return f"<bytepair.Tokenizer model={self.model!r} n_vocab={self.n_vocab} pattern={pattern!r}>"
