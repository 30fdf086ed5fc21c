"""``Tokenizer``: the public class, a thin typed wrapper over the Rust core.

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train("low lower lowest " * 20, vocab_size=260)
>>> tok.decode(tok.encode("lowest low"))
'lowest low'
"""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Collection, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union

from bytepair import _core
from bytepair.decode_stream import DecodeStream
from bytepair.errors import BytepairError, FormatError, InputError, PatternError, TrainingError, TrainingWarning, UnknownTokenError
from bytepair.formats import transformers as transformers_folder
from bytepair.limits import check_training_memory, parse_memory
from bytepair.patterns import preset_name, resolve_pattern
from bytepair.progress import Reporter, make_reporter

Corpus = Union[str, "os.PathLike[str]", Iterable[str], Mapping[str, int]]
SpecialTokens = Union[Sequence[str], Mapping[str, int]]
AllOr = Union[Literal["all"], Collection[str]]

MODELS = ("byte", "char")
TIE_BREAKS = ("first", "alphabetical", "pair-id", "max-string")
_BATCH_BYTES = 8 << 20  # documents are handed to the core in blocks of about this size


def _special_ids(special_tokens: Optional[SpecialTokens], first_id: int) -> Dict[str, int]:
    """Special tokens as {text: id}: a mapping is taken as is, a sequence is
    numbered from ``first_id`` in order."""
    if not special_tokens:
        return {}
    if isinstance(special_tokens, str):
        special_tokens = [special_tokens]
    if isinstance(special_tokens, Mapping):
        out = {}
        for text, id_ in special_tokens.items():
            if not isinstance(text, str) or not text:
                raise BytepairError(f"special token {text!r} must be a non-empty string")
            if isinstance(id_, bool) or not isinstance(id_, int) or id_ < 0 or id_ >= 2**32 - 1:
                raise BytepairError(f"special token {text!r} has an invalid id {id_!r}")
            out[text] = id_
        if len(set(out.values())) != len(out):
            raise BytepairError("two special tokens share one id")
        return out
    out = {}
    for text in special_tokens:
        if not isinstance(text, str) or not text:
            raise BytepairError(f"special token {text!r} must be a non-empty string")
        if text not in out:
            out[text] = first_id + len(out)
    return out


# ids index dense tables (here and in the core): a few unused ids are fine,
# ids far above the number of tokens would allocate from what a file declares
MAX_UNUSED_IDS = 2**20


def _check_unused_ids(used: int, largest: int) -> None:
    """``BytepairError`` when ``used`` ids whose largest is ``largest`` leave
    more than ``MAX_UNUSED_IDS`` ids unused."""
    if largest + 1 - used > MAX_UNUSED_IDS:
        raise BytepairError(
            f"the id {largest} is far above the {used} ids in use: it leaves {largest + 1 - used} ids unused, "
            f"and at most {MAX_UNUSED_IDS} may be (ids index a table)"
        )


# what the core is given to compile: its regex engine needs ~350 bytes per
# character of a pattern, and its special-token matcher is built in time
# quadratic in the length of a repetitive special token ("aaa...")
MAX_PATTERN_CHARS = 2**16
MAX_SPECIAL_TOKEN_BYTES = 4096


def _check_text_limits(pattern: Optional[str], special_tokens: Iterable[str]) -> None:
    """``BytepairError`` for a pattern or a special token far longer than any real one."""
    if isinstance(pattern, str) and len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pattern is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS} may be")
    for text in special_tokens:
        if isinstance(text, str) and len(text) * 4 > MAX_SPECIAL_TOKEN_BYTES:
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_SPECIAL_TOKEN_BYTES:
                raise BytepairError(
                    f"the special token {text[:40]!r}... is {size} bytes long; at most {MAX_SPECIAL_TOKEN_BYTES} may be"
                )


def _special_names(special_tokens: Optional[SpecialTokens], unk_token: Optional[str], error: type) -> List[str]:
    """The special tokens' texts in order; ``unk_token`` is one of them,
    added first when a sequence lacks it (an explicit mapping must hold it)."""
    if not special_tokens:
        names: List[str] = []
    elif isinstance(special_tokens, str):
        names = [special_tokens]
    else:
        names = list(special_tokens)
    if unk_token is not None and unk_token not in names:
        if isinstance(special_tokens, Mapping):
            raise error(f"unk_token {unk_token!r} must be one of the explicit special tokens")
        names = [unk_token] + names
    return names


def _count_words(
    corpus: Corpus, pattern: Optional[str], specials: Sequence[str], report: Optional[Reporter] = None
) -> "_core.WordCounts":
    """The corpus as a word-count table, in order of first appearance.
    ``report("count", characters done, total or None)`` follows progress."""
    counts = _core.WordCounts(pattern, list(specials))
    if isinstance(corpus, str):
        _add_documents(counts, [corpus])
    elif isinstance(corpus, os.PathLike):
        # read and cut into lines by the core: no Python string per line
        with open(corpus, "rb") as fh:
            data = fh.read()
        bad = counts.add_lines(data)
        if bad is not None:
            raise InputError(f"{os.fspath(corpus)}: invalid UTF-8 at byte offset {bad} (byte 0x{data[bad]:02X})")
        if report:
            report("count", len(data), len(data))
    elif isinstance(corpus, _core.WordCounts):
        counts.merge(corpus)
    elif isinstance(corpus, Mapping):
        for word, n in corpus.items():
            if not isinstance(word, str):
                raise TrainingError(f"word-count keys must be str, got {type(word).__name__} ({word!r})")
            if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
                raise TrainingError(f"the count of word {word!r} must be a positive integer, got {n!r}")
            if n >= 2**64:
                raise TrainingError(f"the count of word {word!r} does not fit in 64 bits")
            _surrogate_safe(counts.add_word, word, n)
    elif isinstance(corpus, (bytes, bytearray)):
        raise TrainingError("the corpus must be text (str), not bytes: decode it first")
    else:
        total = sum(len(d) for d in corpus if isinstance(d, str)) if isinstance(corpus, (list, tuple)) else None
        block: List[str] = []
        size = done = 0
        for i, doc in enumerate(corpus):
            if not isinstance(doc, str):
                raise TrainingError(f"document {i} of the corpus is {type(doc).__name__}, not str")
            block.append(doc)
            size += len(doc)
            if size >= _BATCH_BYTES:
                _add_documents(counts, block)
                done += size
                block, size = [], 0
                if report:
                    report("count", done, total)
        if block:
            _add_documents(counts, block)
            done += size
        if report:
            report("count", done, total if total is not None else done)
    return counts


def _add_documents(counts: "_core.WordCounts", docs: List[str]) -> None:
    """Count ``docs``; lone surrogates become U+FFFD, as when encoding."""
    try:
        counts.add_documents(docs)
    except UnicodeEncodeError:  # raised before anything is counted
        counts.add_documents([_replace_surrogates(d) for d in docs])


def _fmt_token(token: Union[str, bytes]) -> str:
    """A token as the trace prints it: bytes as UTF-8 with invalid bytes as \\xNN."""
    if isinstance(token, bytes):
        return token.decode("utf-8", "backslashreplace")
    return token


class Tokenizer:
    """A byte-pair-encoding tokenizer: the ``byte`` model (GPT-2/tiktoken) or
    the ``char`` model (Sennrich et al., with an end-of-word marker).

    Build one with :meth:`train`, :meth:`from_merges`, :meth:`load` or
    :meth:`from_tiktoken`.

    >>> tok = Tokenizer.train(["lower", "lowest", "newer", "newest", "wider", "low", "new"],
    ...                       model="char", end_of_word="_", tie_break="alphabetical", num_merges=6)
    >>> tok.tokenize("slower")
    ['s', 'lowe', 'r_']
    """

    def __init__(self) -> None:  # use the constructors
        self.model: str = "byte"
        self.pattern: Optional[str] = None
        self.special_tokens: Dict[str, int] = {}
        self.merge_counts: List[int] = []
        self.end_of_word: Optional[str] = None
        self.end_of_word_fused = False
        self.byte_fallback = False
        self.unk_token: Optional[str] = None
        # Hugging Face's ByteLevel(add_prefix_space=True): byte model only, set on import
        self.add_prefix_space = False
        # char model: "in-order" (each merge in turn) or "lowest-rank" (subword-nmt's apply-bpe)
        self.merge_rule = "in-order"
        self._base: List[Any] = []  # char: base symbol strings; byte: None (bytes 0-255)
        self._tokens: List[Optional[bytes]] = []  # byte model, non-standard ids only
        self._merge_ids: Optional[List[Tuple[int, int]]] = []  # None: derive from _tokens
        self._merge_results: Optional[List[int]] = None  # ids of the merges when not consecutive
        self._core: Any = None
        # train_parity: per language, tokens before/after and merges chosen (not saved)
        self.parity_stats: Optional[Dict[str, Dict[str, Any]]] = None

    # ------------------------------------------------------------------ building

    @classmethod
    def train(
        cls,
        corpus: Corpus,
        model: str = "byte",
        vocab_size: Optional[int] = None,
        num_merges: Optional[int] = None,
        min_frequency: int = 1,
        pattern: Optional[str] = "default",
        end_of_word: Optional[str] = "</w>",
        end_of_word_fused: bool = False,
        tie_break: str = "first",
        special_tokens: SpecialTokens = (),
        byte_fallback: bool = False,
        unk_token: Optional[str] = None,
        max_token_length: Optional[int] = None,
        progress: Union[None, bool, str, Reporter] = None,
        init: Optional["Tokenizer"] = None,
        max_memory: Union[None, int, str] = None,
        word_start: Optional[str] = None,
        superword: bool = False,
        transition: Optional[int] = None,
    ) -> "Tokenizer":
        """Train a tokenizer on ``corpus``: a str, an iterable of documents
        (str), a mapping of word counts (each key one word, in its order), or
        a path (``os.PathLike``, e.g. ``pathlib.Path``; a ``str`` is text) to
        a UTF-8 file whose lines are the documents: the same tokenizer as
        ``open(path, encoding="utf-8").read().splitlines(keepends=True)``
        gives, but read and cut by the core, without a Python string per line.

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
        keeps; a ``model`` or marker setting other than ``tok``'s is an error); the corpus's words start as ``tok``'s merges segment them,
        and new merges take the ids after ``tok``'s last id. ``vocab_size``
        counts ``tok``'s ids too; ``num_merges`` counts new merges. Characters
        outside ``tok``'s vocabulary never merge.

        ``max_memory`` (bytes, or a size such as ``"8G"``; ``"none"``: no
        check) bounds the whole process: before merging, the memory training
        needs is estimated from the distinct words (:mod:`bytepair.limits`)
        and a ``ResourceError`` says how much is needed and what to do when
        it would not fit. By default the limit is what the process holds
        plus the machine's available memory (``MemAvailable``).

        ``word_start="▁"`` (char model): the SentencePiece-style layout of
        Llama 2 / Mistral, a word-*start* marker with spaces kept as part of
        the text, and byte fallback (always: see :mod:`bytepair.word_start`); the result is a
        pipeline tokenizer whose ``tokenizer.json`` HF and ``transformers``
        run with the same ids.
        ``superword=True`` (SuperBPE, arXiv 2503.13423; byte model): stage 1
        trains as usual up to ``transition`` tokens, stage 2 continues it on
        the same corpus (read twice; an iterator is kept as a list) with the
        ``"superbpe"`` pattern, whose pieces may hold several words, up to
        ``vocab_size``; every stage-1 id stays. The result encodes with that
        pattern (see docs/decisions.md).

        >>> tok = Tokenizer.train({"low": 5, "lower": 2, "newest": 6, "widest": 3},
        ...                       model="char", end_of_word=None, num_merges=5)
        >>> tok.merges
        [('e', 's'), ('es', 't'), ('l', 'o'), ('lo', 'w'), ('n', 'e')]
        >>> Tokenizer.train("low lower lowest", model="char", word_start="\u2581", num_merges=5).tokenize("lower")
        ['▁lower']
        """
        if word_start is not None:
            from bytepair import word_start as _ws

            if model != "char" or init is not None or unk_token is not None or pattern != "default" \
                    or end_of_word_fused:
                raise TrainingError("word_start= is an option of the char model (model='char'), without "
                                    "init=, unk_token=, pattern= or end_of_word_fused=")
            return _ws.train(corpus, vocab_size=vocab_size, num_merges=num_merges, special_tokens=special_tokens,
                             byte_fallback=True, marker=word_start, min_frequency=min_frequency, tie_break=tie_break,
                             max_token_length=max_token_length, progress=progress, max_memory=max_memory)
        if superword:
            return cls._train_superword(
                corpus, model=model, vocab_size=vocab_size, num_merges=num_merges, min_frequency=min_frequency,
                pattern=pattern, tie_break=tie_break, special_tokens=special_tokens, byte_fallback=byte_fallback,
                unk_token=unk_token, max_token_length=max_token_length, progress=progress, init=init,
                max_memory=max_memory, transition=transition,
            )
        if transition is not None:
            raise TrainingError("transition= applies only with superword=True")
        new_pattern = None
        if init is not None:
            if special_tokens or unk_token is not None or byte_fallback:
                raise TrainingError("with init=, special tokens and fallback settings come from the initial tokenizer")
            if init.merge_rule != "in-order":
                raise TrainingError(
                    f"init= applies its merges by the {init.merge_rule!r} rule (subword-nmt codes in which a "
                    "merge makes a symbol an earlier merge uses); continued training needs the in-order rule"
                )
            if init.add_prefix_space:
                raise TrainingError(
                    "init= has add_prefix_space (a Hugging Face ByteLevel option); continued training counts "
                    "the corpus without that space, so it cannot continue such a tokenizer"
                )
            # an explicit setting that differs from init's cannot apply: an error, never silently ignored
            for name, given, default, theirs in (("model", model, "byte", init.model),
                                                 ("end_of_word", end_of_word, "</w>", init.end_of_word),
                                                 ("end_of_word_fused", end_of_word_fused, False,
                                                  init.end_of_word_fused)):
                if given != default and given != theirs and not (name == "end_of_word" and init.model == "byte"):
                    raise TrainingError(f"{name}={given!r} cannot apply with init=: it has {name}={theirs!r}")
            if pattern != "default":
                new_pattern = resolve_pattern(pattern)
                if init.model == "byte" and new_pattern is None:
                    raise TrainingError("the byte model needs a pattern (a preset name or a regex)")
            model, pattern = init.model, init.pattern
            end_of_word, end_of_word_fused = init.end_of_word, init.end_of_word_fused
        if model not in MODELS:
            raise TrainingError(f"unknown model {model!r}: use 'byte' or 'char'")
        parse_memory(max_memory)  # a bad value fails before counting
        if tie_break not in TIE_BREAKS:
            raise TrainingError(
                f"unknown tie_break {tie_break!r}: use 'first', 'alphabetical', 'pair-id' or 'max-string'"
            )
        for name, value in (("vocab_size", vocab_size), ("num_merges", num_merges)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise TrainingError(f"{name} must be a non-negative integer, got {value!r}")
        if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
            raise TrainingError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")
        if max_token_length is not None and (
            isinstance(max_token_length, bool) or not isinstance(max_token_length, int) or max_token_length < 1
        ):
            raise TrainingError(f"max_token_length must be an integer >= 1, got {max_token_length!r}")
        if max_token_length is not None:
            max_token_length = min(max_token_length, 2**32 - 1)
        if end_of_word == "":
            end_of_word = None
        if pattern == "default" and init is None:
            pattern = "cl100k" if model == "byte" else None
        regex = resolve_pattern(pattern)
        if model == "byte" and regex is None:
            raise TrainingError("the byte model needs a pattern (a preset name or a regex)")
        # ids are 32-bit: larger targets cannot be reached, so training stops when pairs run out (with a warning)
        if vocab_size is not None:
            vocab_size = min(vocab_size, 2**32 - 1)
        if num_merges is not None:
            num_merges = min(num_merges, 2**32 - 1)

        explicit = isinstance(special_tokens, Mapping)
        special_names = _special_names(special_tokens, unk_token, TrainingError)
        report = make_reporter(progress)
        if init is not None:
            return init._continue_training(
                corpus, report, vocab_size, num_merges, min_frequency, tie_break, max_token_length, max_memory,
                pattern=new_pattern,
            )
        counts = _count_words(corpus, regex, special_names, report)
        check_training_memory(counts, model, end_of_word if model == "char" else None, end_of_word_fused, max_memory)
        on_merge = (lambda done, total: report("merge", done, total)) if report else None
        base, n_symbols, merges, reason = _core.train(
            counts,
            model,
            end_of_word=end_of_word if model == "char" else None,
            end_of_word_fused=end_of_word_fused,
            byte_fallback=byte_fallback and model == "char",
            tie_break=tie_break,
            min_frequency=min_frequency,
            vocab_size=vocab_size,
            num_merges=num_merges,
            n_special=len(special_names),
            max_token_length=max_token_length,
            progress=on_merge,
            consume=True,  # the table is freed once the trainer has its words
        )
        first_special = len(base) + len(merges)
        specials = _special_ids(special_tokens if explicit else special_names, first_special)

        tok = cls()
        tok.model = model
        tok.pattern = regex
        tok.special_tokens = specials
        tok.merge_counts = [c for _, _, c in merges]
        tok._merge_ids = [(l, r) for l, r, _ in merges]
        if model == "char":
            tok.end_of_word = end_of_word
            tok.end_of_word_fused = end_of_word_fused
            tok.byte_fallback = byte_fallback
            tok.unk_token = unk_token
            tok._base = [b.decode("utf-8") for b in base[:n_symbols]]
        tok._build()

        requested = vocab_size is not None or num_merges is not None
        if requested and reason != "done":
            why = (
                "no adjacent pair is left in any word"
                if reason == "no-pairs"
                else f"no pair occurs at least min_frequency={min_frequency} times"
            )
            warnings.warn(
                f"training stopped after {len(merges)} merges because {why}; "
                f"the vocabulary has {tok.n_vocab} tokens",
                TrainingWarning,
                stacklevel=2,
            )
        return tok

    @classmethod
    def from_merges(
        cls,
        merges: Sequence[Tuple[Any, Any]],
        model: str = "char",
        end_of_word: Optional[str] = "</w>",
        end_of_word_fused: bool = False,
        pattern: Optional[str] = "default",
        alphabet: Optional[Iterable[str]] = None,
        special_tokens: SpecialTokens = (),
        byte_fallback: bool = False,
        unk_token: Optional[str] = None,
    ) -> "Tokenizer":
        """A tokenizer from merge rules: ``(str, str)`` pairs for the char
        model, ``(bytes, bytes)`` for the byte model (merge ``k`` is id
        ``256 + k``). The char model's base alphabet is ``alphabet`` or else
        the characters found in the merges.

        >>> rules = [("t", "h"), ("th", "e"), ("the", "<w>")]
        >>> tok = Tokenizer.from_merges(rules, model="char", end_of_word="<w>")
        >>> tok.tokenize("the")
        ['the<w>']
        """
        if model not in MODELS:
            raise BytepairError(f"unknown model {model!r}: use 'byte' or 'char'")
        if pattern == "default":
            pattern = "cl100k" if model == "byte" else None
        tok = cls()
        tok.model = model
        tok.pattern = resolve_pattern(pattern)
        merges = [tuple(m) for m in merges]
        for k, m in enumerate(merges):
            kind = str if model == "char" else bytes
            if len(m) != 2 or not all(isinstance(x, kind) and len(x) > 0 for x in m):
                raise FormatError(
                    f"merge {k + 1} ({m!r}) must be a pair of non-empty {kind.__name__} in the {model} model"
                )
        if model == "byte":
            ids: Dict[bytes, int] = {bytes([b]): b for b in range(256)}
            merge_ids = []
            for k, (left, right) in enumerate(merges):
                if left not in ids or right not in ids:
                    missing = left if left not in ids else right
                    raise FormatError(f"merge {k + 1} uses {missing!r}, which no earlier merge produced")
                merge_ids.append((ids[left], ids[right]))
                ids.setdefault(left + right, 256 + k)
            tok._merge_ids = merge_ids
            n_fixed = 256 + len(merges)
        else:
            if end_of_word == "":
                end_of_word = None
            tok.end_of_word = end_of_word
            tok.end_of_word_fused = end_of_word_fused
            tok.byte_fallback = byte_fallback
            tok.unk_token = unk_token
            if alphabet is None:
                chars = set()
                for left, right in merges:
                    for sym in (left, right):
                        if end_of_word:
                            sym = sym.replace(end_of_word, "")
                        chars.update(sym)
                alphabet = chars
            words = sorted(set(alphabet))
            base = sorted(words)
            if end_of_word_fused and end_of_word:
                base = sorted(set(base) | {c + end_of_word for c in words})
            elif end_of_word and end_of_word not in base:
                base.append(end_of_word)
            tok._base = base
            sym_ids = {s: i for i, s in enumerate(base)}
            next_id = len(base) + (256 if byte_fallback else 0)
            merge_ids = []
            for k, (left, right) in enumerate(merges):
                for sym in (left, right):
                    if sym not in sym_ids:
                        raise FormatError(
                            f"merge {k + 1} uses {sym!r}, which is neither in the alphabet nor made by an earlier merge"
                        )
                merge_ids.append((sym_ids[left], sym_ids[right]))
                sym_ids.setdefault(left + right, next_id + k)
            tok._merge_ids = merge_ids
            n_fixed = next_id + len(merges)
        names = _special_names(special_tokens, unk_token if model == "char" else None, BytepairError)
        tok.special_tokens = _special_ids(special_tokens if isinstance(special_tokens, Mapping) else names, n_fixed)
        tok._build()
        return tok

    @classmethod
    def _from_byte_vocab(
        cls,
        tokens: Mapping[int, bytes],
        pattern: Optional[str],
        special_tokens: Optional[Mapping[str, int]] = None,
        add_prefix_space: bool = False,
    ) -> "Tokenizer":
        """A byte model from a vocabulary of ranks ``{id: bytes}`` (tiktoken's
        ``mergeable_ranks`` inverted); ids are kept as they are and merges
        are derived on demand. ``add_prefix_space``: Hugging Face's option of
        that name (see the ``hf`` format)."""
        tok = cls()
        tok.model = "byte"
        tok.pattern = resolve_pattern(pattern)
        if tok.pattern is None:
            raise BytepairError("a byte-level vocabulary needs a pattern (a preset name or a regex)")
        _check_unused_ids(len(tokens) + len(special_tokens or {}),
                          max([*tokens, *(special_tokens or {}).values()], default=-1))
        size = max(tokens, default=-1) + 1
        table: List[Optional[bytes]] = [None] * size
        for id_, b in tokens.items():
            table[id_] = bytes(b)
        tok._tokens = table
        tok._merge_ids = None
        tok.special_tokens = dict(special_tokens or {})
        tok.add_prefix_space = add_prefix_space
        tok._build()
        return tok

    @classmethod
    def from_tiktoken(
        cls,
        path: str,
        pattern: Optional[str] = None,
        special_tokens: Optional[Mapping[str, int]] = None,
    ) -> "Tokenizer":
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
        from bytepair.formats.tiktoken import from_tiktoken

        return from_tiktoken(path, pattern=pattern, special_tokens=special_tokens)

    def to_tiktoken(self, name: Optional[str] = None) -> Any:
        """A ``tiktoken.Encoding`` that encodes exactly as this byte model
        (tiktoken is imported here, only when asked for)."""
        from bytepair.formats.tiktoken import to_tiktoken

        return to_tiktoken(self, name)

    def _merge_triples(self) -> List[Tuple[int, int, int]]:
        """Every merge as (left id, right id, id of the merged token)."""
        if self._merge_ids is None:
            return self._derive_merges(with_ids=True)  # type: ignore[return-value]
        if self._merge_results is not None:
            results = self._merge_results
        else:
            first = 256 if self.model == "byte" else len(self._base) + (256 if self.byte_fallback else 0)
            results = list(range(first, first + len(self._merge_ids)))
        return [(l, r, i) for (l, r), i in zip(self._merge_ids, results)]

    @classmethod
    def train_from_files(
        cls,
        paths: Iterable[Union[str, "os.PathLike[str]"]],
        model: str = "byte",
        *,
        client: Any = None,
        field: Optional[str] = None,
        column: Optional[str] = None,
        max_bytes: Optional[int] = None,
        errors: str = "strict",
        **options: Any,
    ) -> "Tokenizer":
        """:meth:`train` on files read a block at a time, so memory grows
        with the number of distinct words, not with the corpus: exactly the
        tokenizer that :meth:`train` gives on the files' texts as documents.

        Plain text files are one document each; JSONL (``field``, default
        ``"text"``), Parquet (``column``), gzip/zstd and ``-`` (stdin) are
        read as :mod:`bytepair.corpus` says; ``max_bytes`` keeps the first N
        bytes of text. ``client`` (a ``dask.distributed.Client``) counts the
        files on its workers, with the same result. Every other option is
        :meth:`train`'s.

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
        >>> _ = open(path, "w").write("low lower lowest " * 20)
        >>> tok = Tokenizer.train_from_files([path], vocab_size=260)
        >>> tok.merges == Tokenizer.train(["low lower lowest " * 20], vocab_size=260).merges
        True
        """
        from bytepair.counts import train_from_files

        return train_from_files(paths, model, client=client, field=field, column=column, max_bytes=max_bytes,
                                errors=errors, **options)

    @classmethod
    def train_parity(
        cls,
        corpora: Union[Mapping[str, Corpus], Sequence[Corpus]],
        dev: Union[None, Mapping[str, Corpus], Sequence[Corpus]] = None,
        ratio: Union[None, Mapping[str, float], Sequence[float]] = None,
        *,
        variant: str = "base",
        global_merges: int = 0,
        window_size: int = 100,
        alpha: float = 2.0,
        model: str = "byte",
        vocab_size: Optional[int] = None,
        num_merges: Optional[int] = None,
        min_frequency: int = 1,
        pattern: Optional[str] = "default",
        end_of_word: Optional[str] = "</w>",
        end_of_word_fused: bool = False,
        tie_break: str = "max-string",
        special_tokens: SpecialTokens = (),
        max_token_length: Optional[int] = None,
        progress: Union[None, bool, str, Reporter] = None,
    ) -> "Tokenizer":
        """Parity-aware BPE (arXiv 2508.04796; Hugging Face's ``ParityBpeTrainer``):
        one corpus per language (``{language: corpus}`` or a list; each corpus
        as for :meth:`train`), and each merge goes to the language compressed
        worst so far: that language's most frequent pair is merged (in every
        language). "Worst" is the longest ``dev`` text in tokens (one corpus
        per language, ideally parallel: the same sentences in each), else the
        lowest ``(initial / current length) / ratio[language]`` of the
        training text, else the longest training text. The first
        ``global_merges`` merges are plain BPE over all languages together.
        ``variant="window"``: a language that took more than ``alpha /
        languages`` of the last ``window_size`` merges gives way to the next.

        The default ``tie_break="max-string"`` (greatest ``(left, right)``
        texts, bytes in GPT-2's printable form) is HF's and the paper's
        code's rule, so the merges equal HF's on the same words. The other
        settings are those of :meth:`train`. A corpus may also be a word-count
        table of :func:`bytepair.counts.count_words` (streamed files, or counted
        on Dask with ``client=``). ``tok.parity_stats`` gives, per
        language, its tokens before and after training (``train``, and
        ``dev`` when given) and how many merges it chose.

        >>> tok = Tokenizer.train_parity({"en": ["aabb"] * 10, "de": ["ccdd"] * 10},
        ...                              model="char", end_of_word=None, num_merges=6)
        >>> tok.merges
        [('b', 'b'), ('d', 'd'), ('a', 'bb'), ('c', 'dd'), ('a', 'abb'), ('c', 'cdd')]
        >>> tok.parity_stats["de"]["merges"]
        3
        """
        from bytepair import parity

        if model not in MODELS:
            raise TrainingError(f"unknown model {model!r}: use 'byte' or 'char'")
        if tie_break not in TIE_BREAKS:
            raise TrainingError(
                f"unknown tie_break {tie_break!r}: use 'first', 'alphabetical', 'pair-id' or 'max-string'"
            )
        if variant not in parity.VARIANTS:
            raise TrainingError(f"unknown variant {variant!r}: use 'base' or 'window'")
        for name, value in (("vocab_size", vocab_size), ("num_merges", num_merges), ("global_merges", global_merges)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise TrainingError(f"{name} must be a non-negative integer, got {value!r}")
        if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 1:
            raise TrainingError(f"window_size must be an integer >= 1, got {window_size!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < float("inf"):
            raise TrainingError(f"alpha must be a positive finite number, got {alpha!r}")
        if isinstance(min_frequency, bool) or not isinstance(min_frequency, int) or min_frequency < 1:
            raise TrainingError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")
        if max_token_length is not None and (
            isinstance(max_token_length, bool) or not isinstance(max_token_length, int) or max_token_length < 1
        ):
            raise TrainingError(f"max_token_length must be an integer >= 1, got {max_token_length!r}")
        if end_of_word == "":
            end_of_word = None
        if pattern == "default":
            pattern = "cl100k" if model == "byte" else None
        regex = resolve_pattern(pattern)
        if model == "byte" and regex is None:
            raise TrainingError("the byte model needs a pattern (a preset name or a regex)")
        langs = parity.languages(corpora)
        names = [name for name, _ in langs]
        dev_langs = parity.languages(dev, "dev") if dev is not None else []
        if dev_langs and [name for name, _ in dev_langs] != names:
            raise TrainingError(
                f"dev languages {[name for name, _ in dev_langs]} do not match the corpora's {names} "
                "(same languages, same order)"
            )
        ratio_values = parity.ratios(ratio, names) if ratio is not None and not dev_langs else None
        explicit = isinstance(special_tokens, Mapping)
        special_names = _special_names(special_tokens, None, TrainingError)
        report = make_reporter(progress)
        tables = [_count_words(c, regex, special_names, report) for _, c in langs]
        dev_tables = [_count_words(c, regex, special_names, report) for _, c in dev_langs]
        for name, table in zip(names, tables):
            if len(table) == 0:
                raise TrainingError(f"the corpus of language {name!r} is empty: it has no words to train on")
        on_merge = (lambda done, total: report("merge", done, total)) if report else None
        base, n_symbols, merges, reason, stats = _core.train_parity(
            tables,
            dev_tables,
            model,
            end_of_word=end_of_word if model == "char" else None,
            end_of_word_fused=end_of_word_fused,
            tie_break=tie_break,
            min_frequency=min_frequency,
            vocab_size=None if vocab_size is None else min(vocab_size, 2**32 - 1),
            num_merges=None if num_merges is None else min(num_merges, 2**32 - 1),
            n_special=len(special_names),
            max_token_length=None if max_token_length is None else min(max_token_length, 2**32 - 1),
            variant=variant,
            global_merges=min(global_merges, 2**32 - 1),
            window_size=window_size,
            alpha=float(alpha),
            ratio=ratio_values,
            progress=on_merge,
        )
        tok = cls()
        tok.model = model
        tok.pattern = regex
        tok.special_tokens = _special_ids(special_tokens if explicit else special_names, len(base) + len(merges))
        tok.merge_counts = [c for _, _, c in merges]
        tok._merge_ids = [(l, r) for l, r, _ in merges]
        if model == "char":
            tok.end_of_word = end_of_word
            tok.end_of_word_fused = end_of_word_fused
            tok._base = [b.decode("utf-8") for b in base[:n_symbols]]
        tok._build()
        train_before, train_after, dev_before, dev_after, chosen = stats
        tok.parity_stats = {
            name: {
                "train": (train_before[i], train_after[i]),
                **({"dev": (dev_before[i], dev_after[i])} if dev_langs else {}),
                "merges": chosen[i],
            }
            for i, name in enumerate(names)
        }
        if (vocab_size is not None or num_merges is not None) and reason != "done":
            warnings.warn(
                f"parity training stopped after {len(merges)} merges because every language ran out of pairs "
                f"occurring at least min_frequency={min_frequency} times; the vocabulary has {tok.n_vocab} tokens",
                TrainingWarning,
                stacklevel=2,
            )
        return tok

    @classmethod
    def _train_superword(cls, corpus, *, model, vocab_size, num_merges, transition, init, pattern, progress,
                         **options) -> "Tokenizer":
        """``train(..., superword=True, transition=t)``: see :meth:`train`."""
        if model != "byte":
            raise TrainingError("superword=True trains a byte model (SuperBPE is byte-level)")
        if init is not None:
            raise TrainingError("superword=True trains both stages; to add superwords to an existing tokenizer, "
                                "use train(corpus, init=tok, pattern='superbpe')")
        if num_merges is not None:
            raise TrainingError("superword=True takes vocabulary sizes (transition= and vocab_size=), not num_merges=")
        for name, value in (("transition", transition), ("vocab_size", vocab_size)):
            if value is None:
                raise TrainingError(f"superword=True needs {name}= (a vocabulary size)")
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TrainingError(f"{name} must be a non-negative integer, got {value!r}")
        if transition > vocab_size:
            raise TrainingError(f"transition={transition} is above vocab_size={vocab_size}")
        if isinstance(corpus, Mapping) or isinstance(corpus, _core.WordCounts):
            raise TrainingError("superword=True needs the documents (stage 2 splits them anew), not word counts")
        if not isinstance(corpus, (str, os.PathLike, list, tuple)):
            corpus = list(corpus)  # read twice
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TrainingWarning)  # stage 1 may run out of pairs: stage 2 goes on
            stage1 = cls.train(corpus, model=model, vocab_size=transition, pattern=pattern, progress=progress,
                               **options)
        options = {k: v for k, v in options.items() if k in ("min_frequency", "tie_break", "max_token_length",
                                                             "max_memory")}
        return cls.train(corpus, vocab_size=vocab_size, pattern="superbpe", init=stage1, progress=progress,
                         **options)

    def _continue_training(self, corpus, report, vocab_size, num_merges, min_frequency, tie_break, max_token_length,
                           max_memory=None, pattern=None):
        """``train(corpus, init=self)``: see :meth:`train`; ``pattern`` (a regex): the new pre-tokenizer."""
        pattern = self.pattern if pattern is None else pattern
        specials = set(self.special_tokens.values())
        fallback = range(len(self._base), len(self._base) + 256) if self.byte_fallback else range(0)
        tokens = [
            None if i in specials or i in fallback else self._core.token_bytes(i) for i in range(self.n_vocab)
        ]
        triples = self._merge_triples()
        counts = _count_words(corpus, pattern, list(self.special_tokens), report)
        check_training_memory(counts, self.model, self.end_of_word, self.end_of_word_fused, max_memory)
        on_merge = (lambda done, total: report("merge", done, total)) if report else None
        _, _, merges, reason = _core.train(
            counts,
            self.model,
            end_of_word=self.end_of_word,
            end_of_word_fused=self.end_of_word_fused,
            byte_fallback=False,
            tie_break=tie_break,
            min_frequency=min_frequency,
            vocab_size=vocab_size,
            num_merges=num_merges,
            n_special=0,
            max_token_length=max_token_length,
            progress=on_merge,
            init=(tokens, triples),
        )
        tok = Tokenizer.from_dict(self.to_dict())
        tok.pattern = pattern
        n = self.n_vocab
        old_counts = list(self.merge_counts) + [None] * (len(triples) - len(self.merge_counts))
        tok._merge_ids = [(l, r) for l, r, _ in triples] + [(l, r) for l, r, _ in merges]
        tok._merge_results = [i for _, _, i in triples] + list(range(n, n + len(merges)))
        tok.merge_counts = old_counts + [c for _, _, c in merges]
        tok._build()
        if (vocab_size is not None or num_merges is not None) and reason != "done":
            warnings.warn(
                f"continued training stopped after {len(merges)} new merges because no pair is left "
                f"to merge (min_frequency={min_frequency}); the vocabulary has {tok.n_vocab} tokens",
                TrainingWarning,
                stacklevel=3,
            )
        return tok

    def _build(self) -> None:
        """(Re)create the core tokenizer from the Python-side description."""
        specials = sorted(self.special_tokens.items(), key=lambda kv: kv[1])
        if self.model == "byte" and self.pattern is None:  # str.split() would drop the whitespace bytes
            raise BytepairError("the byte model needs a pattern (a preset name or a regex)")
        # the ids given one by one (bytes or base symbols and merges, or a table of ranks), then the
        # largest id, which merge ids and special tokens may put far above them
        merges = len(self._merge_ids or [])
        if self.model == "byte":
            given = len(self._tokens) if self._merge_ids is None else 256 + merges
        else:
            given = len(self._base) + (256 if self.byte_fallback else 0) + merges
        ids = [given - 1, *(self._merge_results or []), *self.special_tokens.values()]
        _check_unused_ids(given + len(specials), max(i for i in ids if isinstance(i, int)))
        _check_text_limits(self.pattern, self.special_tokens)
        if self.model == "byte":
            if self._merge_ids is not None:
                table: List[Optional[bytes]] = [bytes([b]) for b in range(256)]
                results = self._merge_results
                if results is not None and len(results) != len(self._merge_ids):
                    raise BytepairError("merge_ids must give one id per merge")
                for k, (l, r) in enumerate(self._merge_ids):
                    if l >= len(table) or r >= len(table) or table[l] is None or table[r] is None:
                        raise BytepairError(f"merge {k + 1} refers to an unknown id ({l}, {r})")
                    id_ = len(table) if results is None else results[k]
                    if id_ < len(table) or id_ >= 2**32 - 1:
                        raise BytepairError(f"merge {k + 1} has id {id_}, which is already taken")
                    table.extend([None] * (id_ - len(table)))
                    table.append(table[l] + table[r])  # type: ignore[operator]
                self._tokens = table
            self._core = _core.CoreTokenizer.byte(
                self._tokens, self.pattern, specials, add_prefix_space=self.add_prefix_space
            )
        else:
            fallback = len(self._base) if self.byte_fallback else None
            unk_id = self.special_tokens.get(self.unk_token) if self.unk_token is not None else None
            self._core = _core.CoreTokenizer.char(
                list(self._base),
                list(self._merge_ids or []),
                end_of_word=self.end_of_word,
                end_of_word_fused=self.end_of_word_fused,
                byte_fallback_start=fallback,
                unk_id=unk_id,
                pattern=self.pattern,
                special_tokens=specials,
                merge_ids=self._merge_results,
                lowest_rank=self.merge_rule == "lowest-rank",
            )

    # ------------------------------------------------------------------ vocabulary

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

    def _derive_merges(self, with_ids: bool = False) -> List[Tuple[int, ...]]:
        """Merges of a vocabulary given as ranks: each multi-byte token split
        in two by running BPE on its bytes with the lower ranks only (with
        ``with_ids``, each with the token's own id as a third element)."""
        ranks = {b: i for i, b in enumerate(self._tokens) if b is not None}
        out = []
        for rank, token in enumerate(self._tokens):
            if token is None or len(token) < 2:
                continue
            parts = [token[i : i + 1] for i in range(len(token))]
            while len(parts) > 2:
                best = None
                for i in range(len(parts) - 1):
                    r = ranks.get(parts[i] + parts[i + 1])
                    if r is not None and r < rank and (best is None or r < best[0]):
                        best = (r, i)
                if best is None:
                    break
                i = best[1]
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
            if len(parts) == 2 and parts[0] in ranks and parts[1] in ranks:
                out.append((ranks[parts[0]], ranks[parts[1]]) + ((rank,) if with_ids else ()))
        return out

    @property
    def merges(self) -> List[Tuple[Any, Any]]:
        """The merge rules in order: ``(str, str)`` in the char model,
        ``(bytes, bytes)`` in the byte model."""
        ids = self._merge_ids if self._merge_ids is not None else self._derive_merges()
        return [(self._token(l), self._token(r)) for l, r in ids]

    def vocab(self) -> Dict[int, Union[str, bytes]]:
        """Every id with its token (str in the char model, bytes in the byte
        model), special tokens included."""
        out = {}
        for id_ in range(self.n_vocab):
            raw = self._core.token_bytes(id_)
            if raw is not None:
                out[id_] = raw.decode("utf-8") if self.model == "char" else raw
        return out

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

    def _special_args(self, allowed_special: AllOr, disallowed_special: AllOr):
        allowed = None if allowed_special == "all" else [t for t in allowed_special if isinstance(t, str)]
        disallowed = None if disallowed_special == "all" else [t for t in disallowed_special if isinstance(t, str)]
        return allowed, disallowed

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllOr = frozenset(),
        disallowed_special: AllOr = "all",
        dropout: Optional[float] = None,
        seed: int = 0,
        add_special_tokens: bool = False,
    ) -> List[int]:
        """Ids of ``text``. Special-token text raises ``DisallowedSpecialError``
        unless it is in ``allowed_special`` (then it is its id) or left out of
        ``disallowed_special`` (then it is plain text), as in tiktoken.

        ``add_special_tokens`` is accepted so that code written for Hugging
        Face tokenizers runs on every loaded tokenizer: a byte or char model
        has no post-processor (a ``tokenizer.json`` whose post-processor adds
        tokens loads as a pipeline), so it changes nothing here.

        ``dropout=p`` applies BPE-dropout (Provilkov et al.): every candidate
        merge is skipped with probability ``p``, deterministically for a
        ``seed``; decoding is unchanged, so it stays lossless.

        >>> tok = Tokenizer.train("hello world", special_tokens=["<|endoftext|>"])
        >>> tok.encode("hi<|endoftext|>", allowed_special="all")[-1] == tok.eot_token
        True
        >>> ids = tok.encode("hello", dropout=0.5, seed=7)
        >>> tok.decode(ids), ids == tok.encode("hello", dropout=0.5, seed=7)
        ('hello', True)
        >>> tok.encode("hello", add_special_tokens=True) == tok.encode("hello")
        True
        """
        allowed, disallowed = self._special_args(allowed_special, disallowed_special)
        if not dropout:
            return _surrogate_safe(self._core.encode, text, allowed, disallowed)
        return _surrogate_safe(self._core.encode_full, text, allowed, disallowed, _dropout_args(dropout, seed))[0]

    def encode_stream(
        self,
        blocks: Iterable[str],
        *,
        allowed_special: AllOr = frozenset(),
        disallowed_special: AllOr = "all",
        dropout: Optional[float] = None,
        seed: int = 0,
    ) -> Iterator[List[int]]:
        """The ids of one long text given as consecutive pieces ``blocks``
        (any sizes, cut anywhere), list by list as soon as more text can no
        longer change them: together exactly ``encode("".join(blocks), ...)``
        with the same options, errors included (disallowed special-token
        text raises when it is reached, any other error at the end). Memory
        stays at about one block plus the longest word.

        >>> tok = Tokenizer.train("hello world " * 10, num_merges=8)
        >>> [i for ids in tok.encode_stream(["hel", "lo wo", "rld"]) for i in ids] == tok.encode("hello world")
        True
        """
        from bytepair.stream import encode_stream

        allowed, disallowed = self._special_args(allowed_special, disallowed_special)
        return encode_stream(self, blocks, allowed, disallowed, _dropout_args(dropout, seed) if dropout else None)

    def encode_file(
        self,
        input: Any,
        output: Any,
        *,
        allowed_special: AllOr = frozenset(),
        disallowed_special: AllOr = "all",
        dropout: Optional[float] = None,
        seed: int = 0,
        errors: str = "strict",
        format: Optional[str] = None,
        block_bytes: Optional[int] = None,
        progress: Union[None, bool, str, Reporter] = None,
    ) -> int:
        """Encodes the file ``input`` (a path, ``"-"`` for stdin, or an open
        binary file; ``.gz``/``.zst`` paths are decompressed) as one text,
        reading ``block_bytes`` (1 MB) at a time, and writes its ids to
        ``output`` as it goes: a path is written atomically (a temporary file
        renamed when complete, removed on error), or an open binary file.
        ``format``: ``"npy"`` (uint16 when ``n_vocab <= 65536``, else uint32,
        like ``encode-dataset`` shards) or ``"text"`` (ids separated by
        spaces, one line); by default npy when ``output`` ends in ``.npy``.
        Returns the number of ids. The ids equal ``encode`` of the whole text
        with the same options; invalid UTF-8 raises ``InputError`` naming the
        byte offset unless ``errors="replace"``. Memory stays bounded
        whatever the file's size (about a block plus the longest word).

        >>> import io
        >>> tok = Tokenizer.train("hello world " * 10, num_merges=8)
        >>> out = io.BytesIO()
        >>> tok.encode_file(io.BytesIO(b"hello world"), out, format="text") == len(tok.encode("hello world"))
        True
        """
        from bytepair.stream import file_blocks, write_ids

        if errors not in ("strict", "replace"):
            raise BytepairError(f"errors must be 'strict' or 'replace', got {errors!r}")
        report = make_reporter(progress)
        chunks = self.encode_stream(file_blocks(input, errors, block_bytes, report), allowed_special=allowed_special,
                                    disallowed_special=disallowed_special, dropout=dropout, seed=seed)
        return write_ids(output, chunks, format, self.n_vocab)

    def encode_with_offsets(
        self,
        text: str,
        *,
        allowed_special: AllOr = frozenset(),
        disallowed_special: AllOr = "all",
    ) -> Tuple[List[int], List[Tuple[int, int]]]:
        """Ids of ``text`` and the character span ``(start, end)`` of each
        token in ``text``. A byte token that covers part of a character spans
        that whole character; the char model's end-of-word marker covers no
        text (an empty span at the end of its word).

        >>> tok = Tokenizer.train("hello world")
        >>> ids, spans = tok.encode_with_offsets("hello world")
        >>> ["hello world"[s:e] for s, e in spans] == [tok.decode([i]) for i in ids]
        True
        """
        allowed, disallowed = self._special_args(allowed_special, disallowed_special)
        ids, spans = _surrogate_safe(self._core.encode_full, text, allowed, disallowed, None, True)
        return ids, [tuple(s) for s in spans]

    def encode_ordinary(self, text: str) -> List[int]:
        """Ids of ``text``, special-token text encoded as plain text.

        >>> tok = Tokenizer.train("hello world")
        >>> tok.encode_ordinary("hello") == tok.encode("hello")
        True
        """
        return _surrogate_safe(self._core.encode_ordinary, text)

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AllOr = frozenset(),
        disallowed_special: AllOr = "all",
        add_special_tokens: bool = False,
    ) -> List[List[int]]:
        """``encode`` of each text, in parallel with the GIL released
        (``add_special_tokens`` as in :meth:`encode`).

        >>> tok = Tokenizer.train("a b c")
        >>> tok.encode_batch(["a", "b"]) == [tok.encode("a"), tok.encode("b")]
        True
        """
        texts = [_check_text(t) for t in texts]
        allowed, disallowed = self._special_args(allowed_special, disallowed_special)
        try:
            return self._core.encode_batch(texts, allowed, disallowed)
        except UnicodeEncodeError:
            return self._core.encode_batch([_replace_surrogates(t) for t in texts], allowed, disallowed)

    def encode_ordinary_batch(self, texts: Sequence[str]) -> List[List[int]]:
        """``encode_ordinary`` of each text, in parallel."""
        texts = [_check_text(t) for t in texts]
        try:
            return self._core.encode_ordinary_batch(texts)
        except UnicodeEncodeError:
            return self._core.encode_ordinary_batch([_replace_surrogates(t) for t in texts])

    def count(self, text: str, limit: Optional[int] = None) -> int:
        """Number of tokens of ``text``; special-token text counts as plain
        text, so this never raises on any str. No ids reach Python.
        With ``limit=N``: ``min(count, N + 1)``, encoding stops as soon as
        more than ``N`` tokens are certain (see :mod:`bytepair.chunking`).

        >>> Tokenizer.train("aaaa").count("aaaa")
        1
        >>> Tokenizer.train("aaaa").count("a a a a", limit=2)
        3
        """
        if limit is not None:
            from bytepair.chunking import count_limited

            return count_limited(self, text, limit)
        return _surrogate_safe(self._core.count, text)

    def chunk(self, text: str, max_tokens: int, overlap: int = 0) -> Iterator[str]:
        """Chunks of ``text`` of at most ``max_tokens`` tokens each, cut at the
        best natural boundary that fits (paragraph, line, sentence, word, in
        that order); without ``overlap`` they join to ``text`` exactly. With
        ``overlap=k`` each chunk starts about ``k`` tokens before the previous
        one ended. See :func:`bytepair.chunking.chunk_spans`.

        >>> tok = Tokenizer.train("one two three four " * 20, num_merges=14)
        >>> list(tok.chunk("one two three four", 2))
        ['one two', ' three four']
        """
        from bytepair.chunking import chunk

        return chunk(self, text, max_tokens, overlap)

    def explain(self, text: str, at: Optional[int] = None) -> Any:
        """How ``text`` is encoded, step by step (pre-tokens, each merge with
        its rank and the symbols after it, byte fallback, ids), as seed 001's
        "Encoding a new word": an :class:`bytepair.explain.Explanation`, which
        prints as the lesson; its ``ids`` equal ``encode_ordinary(text)``.

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
        from bytepair.explain import explain

        return explain(self, text, at)

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that fits in ``max_tokens`` tokens
        (one more character would not fit). See :func:`bytepair.chunking.truncate`.

        >>> tok = Tokenizer.train("one two three four " * 20, num_merges=14)
        >>> tok.truncate("one two three four", 3)
        'one two three'
        """
        from bytepair.chunking import truncate

        return truncate(self, text, max_tokens)

    def count_batch(self, texts: Sequence[str]) -> List[int]:
        """``count`` of each text, in one parallel pass with the GIL released.

        >>> Tokenizer.train("aaaa").count_batch(["aaaa", "", "aaaaa"])
        [1, 0, 2]
        """
        texts = [_check_text(t) for t in texts]
        try:
            return self._core.count_batch(texts)
        except UnicodeEncodeError:
            return self._core.count_batch([_replace_surrogates(t) for t in texts])

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllOr = frozenset(),
        disallowed_special: AllOr = "all",
    ) -> Any:
        """``encode`` as a read-only numpy ``uint32`` array, filled by the core
        with no Python list in between (tiktoken's ``encode_to_numpy``; needs
        numpy).

        >>> tok = Tokenizer.train("hello world")
        >>> tok.encode_to_numpy("hello").tolist() == tok.encode("hello")
        True
        """
        from bytepair.arrays import ids_array

        allowed, disallowed = self._special_args(allowed_special, disallowed_special)
        # nothing allowed, nothing disallowed: plain text (no scan for special tokens)
        ordinary = allowed == [] and disallowed == []
        return ids_array(_surrogate_safe(self._core.encode_to_buffer, text, allowed, disallowed, ordinary))

    def encode_batch_to_numpy(
        self,
        texts: Sequence[str],
        *,
        allowed_special: AllOr = frozenset(),
        disallowed_special: AllOr = "all",
    ) -> Tuple[Any, Any]:
        """``encode`` of every text as one flat ``uint32`` array plus
        ``len(texts) + 1`` ``uint64`` offsets (text ``k`` is
        ``ids[offsets[k]:offsets[k + 1]]``), built in one parallel pass with
        the GIL released; both read-only (needs numpy).

        >>> tok = Tokenizer.train("hello world")
        >>> ids, offsets = tok.encode_batch_to_numpy(["hello", "world"])
        >>> ids[offsets[1]:offsets[2]].tolist() == tok.encode("world")
        True
        """
        from bytepair.arrays import flat_arrays

        texts = [_check_text(t) for t in texts]
        allowed, disallowed = self._special_args(allowed_special, disallowed_special)
        ordinary = allowed == [] and disallowed == []
        try:
            buffers = self._core.encode_batch_to_buffer(texts, allowed, disallowed, ordinary)
        except UnicodeEncodeError:
            buffers = self._core.encode_batch_to_buffer([_replace_surrogates(t) for t in texts], allowed, disallowed,
                                                        ordinary)
        return flat_arrays(*buffers)

    def tokenize(self, text: str) -> List[Union[str, bytes]]:
        """The pieces of ``text``: str in the char model (unknown characters
        kept as they are), bytes in the byte model.

        >>> Tokenizer.train("abab", model="char", end_of_word=None).tokenize("abab ba")
        ['abab', 'b', 'a']
        """
        pieces = _surrogate_safe(self._core.tokenize, text)
        if self.model == "char":
            return [p.decode("utf-8") for p in pieces]
        return list(pieces)

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes that ``ids`` stand for (char model: words joined by one
        space). Unknown ids raise ``UnknownTokenError``. ``ids`` may be a
        numpy integer array (read by the core without a Python int per id)."""
        from bytepair.arrays import as_id_buffer

        buffer = as_id_buffer(ids) if type(ids).__module__ == "numpy" else None
        if buffer is not None:
            return self._core.decode_buffer(buffer)  # a numpy array: no Python int per id
        ids = _check_ids(ids)
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
        the new text as soon as it is complete UTF-8, else ``None``, exactly as
        Hugging Face's ``DecodeStream`` does; ``ids`` are ids already shown.

        >>> tok = Tokenizer.train("hello world")
        >>> stream = tok.decode_stream()
        >>> "".join(t for t in map(stream.step, tok.encode("héllo 😀")) if t is not None)
        'héllo 😀'
        """
        return DecodeStream(self, skip_special_tokens=skip_special_tokens, ids=ids)

    def decode_single_token_bytes(self, id_: int) -> bytes:
        """The bytes of one token."""
        raw = self._core.token_bytes(id_) if isinstance(id_, int) and 0 <= id_ < 2**32 else None
        if raw is None:
            raise UnknownTokenError(f"token id {id_!r} is not in the vocabulary")
        return raw

    # ------------------------------------------------------------------ files

    def save(self, path: str, format: str = "bytepair") -> None:
        """Write the tokenizer to ``path`` (atomically). Formats: ``bytepair``
        (native JSON); the others are in :mod:`bytepair.formats`."""
        from bytepair.formats import save

        save(self, path, format)

    @classmethod
    def load(
        cls,
        path: str,
        format: Optional[str] = None,
        pattern: Optional[str] = None,
        special_tokens: Optional[Mapping[str, int]] = None,
    ) -> "Tokenizer":
        """Read a tokenizer file; ``format`` is detected when None."""
        from bytepair.formats import load

        return load(path, format=format, pattern=pattern, special_tokens=special_tokens)

    def save_pretrained(
        self,
        folder: str,
        *,
        bos: Optional[str] = None,
        eos: Optional[str] = None,
        pad: Optional[str] = None,
        unk: Optional[str] = None,
        chat_template: Optional[str] = None,
        model_max_length: Optional[int] = None,
    ) -> None:
        """Write a ``transformers`` folder that ``AutoTokenizer.from_pretrained(folder)``
        loads with the same ids; ``bos``/``eos``/``pad``/``unk`` name special
        tokens (their texts) to give those roles. See
        :mod:`bytepair.formats.transformers`.

        >>> import os, tempfile
        >>> tok = Tokenizer.train("hello world", special_tokens=["<|endoftext|>"])
        >>> folder = tempfile.mkdtemp()
        >>> tok.save_pretrained(folder, eos="<|endoftext|>")
        >>> sorted(os.listdir(folder))
        ['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
        """
        transformers_folder.save(self, folder, bos=bos, eos=eos, pad=pad, unk=unk, chat_template=chat_template,
                                 model_max_length=model_max_length)

    def to_dict(self) -> Dict[str, Any]:
        """The native description (what ``save`` writes as JSON)."""
        d: Dict[str, Any] = {
            "bytepair": 1,
            "model": self.model,
            "pattern": self.pattern,
            "pattern_preset": preset_name(self.pattern),
        }
        if self.model == "char":
            d.update(
                end_of_word=self.end_of_word,
                end_of_word_fused=self.end_of_word_fused,
                byte_fallback=self.byte_fallback,
                unk_token=self.unk_token,
                base=list(self._base),
            )
        if self._merge_ids is not None:
            d["merges"] = [list(m) for m in self._merge_ids]
            d["merge_counts"] = list(self.merge_counts)
            if self._merge_results is not None:
                d["merge_ids"] = list(self._merge_results)
        else:
            import base64

            d["tokens_base64"] = [None if t is None else base64.b64encode(t).decode("ascii") for t in self._tokens]
        d["special_tokens"] = dict(self.special_tokens)
        if self.add_prefix_space:
            d["add_prefix_space"] = True
        if self.merge_rule != "in-order":
            d["merge_rule"] = self.merge_rule
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Tokenizer":
        """Rebuild from :meth:`to_dict`'s description (validated by the caller);
        a pipeline's description gives a ``PipelineTokenizer``."""
        if d.get("model") == "pipeline" and cls is Tokenizer:
            from bytepair.pipeline import PipelineTokenizer

            return PipelineTokenizer.from_dict(d)
        tok = cls()
        tok.model = d["model"]
        tok.pattern = d["pattern"]
        tok.special_tokens = dict(d.get("special_tokens") or {})
        tok.add_prefix_space = bool(d.get("add_prefix_space", False))
        tok.merge_rule = d.get("merge_rule", "in-order")
        if tok.model == "char":
            tok.end_of_word = d.get("end_of_word")
            tok.end_of_word_fused = bool(d.get("end_of_word_fused", False))
            tok.byte_fallback = bool(d.get("byte_fallback", False))
            tok.unk_token = d.get("unk_token")
            tok._base = list(d["base"])
        if "merges" in d:
            tok._merge_ids = [(int(l), int(r)) for l, r in d["merges"]]
            tok.merge_counts = list(d.get("merge_counts") or [])
            tok._merge_results = list(d["merge_ids"]) if d.get("merge_ids") is not None else None
        else:
            import base64

            tok._merge_ids = None
            tok._tokens = [None if t is None else base64.b64decode(t) for t in d["tokens_base64"]]
        tok._build()
        return tok

    # ------------------------------------------------------------------ python protocol

    def __getstate__(self) -> Dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(Tokenizer.from_dict(state).__dict__)

    def __repr__(self) -> str:
        pattern = preset_name(self.pattern) or ("str.split()" if self.pattern is None else "custom")
        return f"<bytepair.Tokenizer model={self.model!r} n_vocab={self.n_vocab} pattern={pattern!r}>"


def _check_text(text: Any) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    return text


def _replace_surrogates(text: str) -> str:
    """Lone surrogates (not valid in UTF-8) become U+FFFD, as tiktoken does."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _surrogate_safe(fn: Any, text: Any, *args: Any) -> Any:
    """``fn(text, *args)``; a text holding lone surrogates is retried with
    them replaced (the check costs nothing when there are none)."""
    try:
        return fn(_check_text(text), *args)
    except UnicodeEncodeError:
        return fn(_replace_surrogates(text), *args)


def _dropout_args(dropout: float, seed: int) -> Tuple[float, int]:
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
        raise BytepairError(f"dropout must be a probability between 0 and 1, got {dropout!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BytepairError(f"seed must be an integer, got {seed!r}")
    return float(dropout), seed % 2**64


def _check_ids(ids: Iterable[int]) -> List[int]:
    out = []
    for i, id_ in enumerate(ids):
        if isinstance(id_, bool) or not isinstance(id_, numbers.Integral):
            raise UnknownTokenError(f"token id {id_!r} at position {i} is not an integer")
        out.append(int(id_))
    return out
