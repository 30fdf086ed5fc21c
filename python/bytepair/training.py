"""Training: every way to learn a tokenizer, each ending in a description
(:mod:`bytepair.spec`) that :class:`~bytepair.Tokenizer` builds.

- :func:`train`: BPE on a corpus held in memory (texts, a path, or word
  counts), continued training (``init=``), SuperBPE (``superword=True``) and
  the word-start char model (``word_start=``);
- :func:`train_parity`: parity-aware BPE over one corpus per language;
- :func:`train_from_files` / :func:`train_from_counts`: the same training
  on files read in blocks, or on counts files (:mod:`bytepair.counts`).

The rules that decide the pre-tokenizer, the special tokens and the model
from the options are written once, in :func:`resolve`; the public entry
points are ``Tokenizer.train``, ``Tokenizer.train_parity``,
``Tokenizer.train_from_files`` and ``Tokenizer.train_from_counts``.

>>> spec = train({"low": 5, "lower": 2}, model="char", end_of_word=None, num_merges=2)
>>> spec.model, len(spec.merge_ids), spec.merge_counts
('char', 2, (7, 7))
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, List, Optional, Sequence, Tuple, Union

from bytepair import _core, counts as counts_file, parity, word_start
from bytepair.errors import InputError, TrainingError, TrainingWarning
from bytepair.limits import (SpecialTokens, check_training_memory, parse_memory, replace_surrogates, special_ids,
                             special_names, surrogate_safe)
from bytepair.patterns import default_pattern, resolve_pattern
from bytepair.progress import Reporter, make_reporter
from bytepair.spec import MODELS, ModelSpec, PipelineSpec, build_core

Corpus = Union[str, "os.PathLike[str]", Iterable[str], Mapping[str, int]]
TIE_BREAKS = ("first", "alphabetical", "pair-id", "max-string")
_BATCH_BYTES = 8 << 20  # documents are handed to the core in blocks of about this size
_FILE_BLOCK_BYTES = 64 << 20  # a corpus file is read and counted in blocks of whole lines of about this size
_MAX_ID = 2**32 - 1  # ids are 32-bit: larger targets cannot be reached


# ---------------------------------------------------------------- settings


@dataclass(frozen=True)
class Settings:
    """The checked options of one training run (see :func:`resolve`)."""

    model: str
    regex: Optional[str]
    specials: List[str]  # the special tokens' texts, in order (unk_token first when added)
    special_tokens: SpecialTokens  # as given (a mapping keeps its ids)
    end_of_word: Optional[str]
    end_of_word_fused: bool
    byte_fallback: bool
    unk_token: Optional[str]
    tie_break: str
    min_frequency: int
    vocab_size: Optional[int]
    num_merges: Optional[int]
    max_token_length: Optional[int]
    max_memory: Any


def _check_count(name: str, value: Any, least: int = 0) -> Optional[int]:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
        kind = "a non-negative integer" if least == 0 else f"an integer >= {least}"
        raise TrainingError(f"{name} must be {kind}, got {value!r}")
    return None if value is None else min(value, _MAX_ID)


def resolve(
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
    max_memory: Any = None,
    init: Any = None,
) -> Settings:
    """Every training option checked, with the rules that follow from the
    model written once: the default pattern (``"cl100k"`` for the byte
    model, ``str.split()`` for the char model), the special-token list
    (``unk_token`` first when a list lacks it), the marker only in the char
    model. With ``init`` (a tokenizer to continue) its model, marker,
    pattern and special tokens are taken; an explicit other setting is an
    error, never silently ignored.

    >>> s = resolve("char", special_tokens=["<s>"], unk_token="<unk>")
    >>> s.regex is None, s.specials, s.end_of_word
    (True, ['<unk>', '<s>'], '</w>')
    """
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
        for name, given, default, theirs in (("model", model, "byte", init.model),
                                             ("end_of_word", end_of_word, "</w>", init.end_of_word),
                                             ("end_of_word_fused", end_of_word_fused, False, init.end_of_word_fused)):
            if given != default and given != theirs and not (name == "end_of_word" and init.model == "byte"):
                raise TrainingError(f"{name}={given!r} cannot apply with init=: it has {name}={theirs!r}")
        model, end_of_word, end_of_word_fused = init.model, init.end_of_word, init.end_of_word_fused
        specials = list(init.special_tokens)
    else:
        specials = special_names(special_tokens, unk_token, TrainingError)
    if model not in MODELS:
        raise TrainingError(f"unknown model {model!r}: use 'byte' or 'char'")
    parse_memory(max_memory)  # a bad value fails before counting
    if tie_break not in TIE_BREAKS:
        raise TrainingError(f"unknown tie_break {tie_break!r}: use 'first', 'alphabetical', 'pair-id' or 'max-string'")
    vocab_size, num_merges = _check_count("vocab_size", vocab_size), _check_count("num_merges", num_merges)
    _check_count("min_frequency", min_frequency, 1)
    max_token_length = _check_count("max_token_length", max_token_length, 1)
    if init is not None:
        regex = resolve_pattern(pattern) if pattern != "default" else init.pattern
    else:
        regex = default_pattern(pattern, model)
    if model == "byte" and regex is None:
        raise TrainingError("the byte model needs a pattern (a preset name or a regex)")
    char = model == "char"
    return Settings(model, regex, specials, special_tokens, (end_of_word or None) if char else None,
                    end_of_word_fused, byte_fallback and char, unk_token, tie_break, min_frequency, vocab_size,
                    num_merges, max_token_length, max_memory)


def _new_spec(s: Settings, base: List[bytes], n_symbols: int, merges: List[Tuple[int, int, int]]) -> ModelSpec:
    """The description of a tokenizer trained from scratch."""
    given = s.special_tokens if isinstance(s.special_tokens, Mapping) else s.specials
    return ModelSpec(
        s.model, s.regex, special_ids(given, len(base) + len(merges)),
        merge_ids=tuple((l, r) for l, r, _ in merges), merge_counts=tuple(c for _, _, c in merges),
        base=tuple(b.decode("utf-8") for b in base[:n_symbols]) if s.model == "char" else (),
        end_of_word=s.end_of_word, end_of_word_fused=s.end_of_word_fused if s.model == "char" else False,
        byte_fallback=s.byte_fallback, unk_token=s.unk_token if s.model == "char" else None,
    )


def _stopped_early(s: Settings, spec: ModelSpec, reason: str, message: str) -> None:
    """Warn when a requested size was not reached."""
    if (s.vocab_size is not None or s.num_merges is not None) and reason != "done":
        n_vocab = max([spec.n_fixed - 1, *(spec.merge_results or ()), *spec.special_tokens.values()]) + 1
        warnings.warn(f"{message}; the vocabulary has {n_vocab} tokens", TrainingWarning, stacklevel=4)


# ---------------------------------------------------------------- counting in memory


def _count_words(corpus: Corpus, pattern: Optional[str], specials: Sequence[str],
                 report: Optional[Reporter] = None) -> "_core.WordCounts":
    """The corpus as a word-count table, in order of first appearance.
    ``report("count", characters done, total or None)`` follows progress."""
    counts = _core.WordCounts(pattern, list(specials))
    if isinstance(corpus, str):
        _add_documents(counts, [corpus])
    elif isinstance(corpus, os.PathLike):
        _count_file(counts, corpus, report)
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
            surrogate_safe(counts.add_word, word, n)
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


def _count_file(counts: "_core.WordCounts", path: "os.PathLike[str]", report: Optional[Reporter]) -> None:
    """Count the lines of the file at ``path`` (as Python's text mode cuts
    them) in blocks of whole lines read one at a time, so that memory holds
    one block, not the file: the file route of training, with no Python
    string per line (the core cuts the lines)."""
    total = os.path.getsize(path)
    done = 0
    pending = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(_FILE_BLOCK_BYTES)
            data = pending + block if pending else block
            pending = b""
            if block:
                # cut after the last \n: never inside a character or a \r\n
                cut = data.rfind(b"\n") + 1
                if not cut:  # a line longer than a block: read on
                    pending = data
                    continue
                data, pending = data[:cut], data[cut:]
            if data:
                bad = counts.add_lines(data)
                if bad is not None:
                    raise InputError(f"{os.fspath(path)}: invalid UTF-8 at byte offset {done + bad} "
                                     f"(byte 0x{data[bad]:02X})")
                done += len(data)
            if report and (data or not block):
                report("count", done, total)
            if not block:
                return


def _add_documents(counts: "_core.WordCounts", docs: List[str]) -> None:
    """Count ``docs``; lone surrogates become U+FFFD, as when encoding."""
    try:
        counts.add_documents(docs)
    except UnicodeEncodeError:  # raised before anything is counted
        counts.add_documents([replace_surrogates(d) for d in docs])


def _on_merge(report: Optional[Reporter]) -> Any:
    return (lambda done, total: report("merge", done, total)) if report else None


# ---------------------------------------------------------------- training


def train(
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
    init: Any = None,
    max_memory: Union[None, int, str] = None,
    word_start: Optional[str] = None,
    superword: bool = False,
    transition: Optional[int] = None,
    required_tokens: Sequence[str] = (),
) -> Any:
    """The description of a tokenizer trained on ``corpus`` (``Tokenizer.train``
    builds the tokenizer from it): a str, an iterable of documents (str), a mapping of word counts (each key one word, in its order), or
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

    ``required_tokens=["<|im_start|>", ...]``: each string becomes one
    token before training, by the first merges (in the order given);
    training then goes on from them, and may merge them further (see
    docs/decisions.md). In the char model a string is read as a word (its
    token ends with the end-of-word marker) and its characters join the
    alphabet. ``num_merges`` and ``vocab_size`` count these merges too. A
    string the pattern would cut into several pieces is refused: no
    encoding could ever give it as one token.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train({"low": 5, "lower": 2, "newest": 6, "widest": 3},
    ...                       model="char", end_of_word=None, num_merges=5)
    >>> tok.merges
    [('e', 's'), ('es', 't'), ('l', 'o'), ('lo', 'w'), ('n', 'e')]
    >>> Tokenizer.train("low lower lowest", model="char", word_start="\u2581", num_merges=5).tokenize("lower")
    ['▁lower']
    >>> Tokenizer.train("a b c", num_merges=3, required_tokens=["xyz"]).tokenize("xyz")
    [b'xyz']
    >>> Tokenizer.train("a b c", model="char", num_merges=3, required_tokens=["xy"]).tokenize("xy")
    ['xy</w>']
    """
    if required_tokens and (word_start is not None or superword or init is not None):
        raise TrainingError("required_tokens= is an option of training from scratch, without init=, "
                            "word_start= or superword=")
    if word_start is not None:
        if model != "char" or init is not None or unk_token is not None or pattern != "default" \
                or end_of_word_fused:
            raise TrainingError("word_start= is an option of the char model (model='char'), without "
                                "init=, unk_token=, pattern= or end_of_word_fused=")
        return _train_word_start(corpus, word_start, vocab_size=vocab_size, num_merges=num_merges,
                                 special_tokens=special_tokens, min_frequency=min_frequency, tie_break=tie_break,
                                 max_token_length=max_token_length, progress=progress, max_memory=max_memory)
    if superword:
        return _train_superword(
            corpus, model=model, vocab_size=vocab_size, num_merges=num_merges, min_frequency=min_frequency,
            pattern=pattern, tie_break=tie_break, special_tokens=special_tokens, byte_fallback=byte_fallback,
            unk_token=unk_token, max_token_length=max_token_length, progress=progress, init=init,
            max_memory=max_memory, transition=transition,
        )
    if transition is not None:
        raise TrainingError("transition= applies only with superword=True")
    s = resolve(model, vocab_size, num_merges, min_frequency, pattern, end_of_word, end_of_word_fused, tie_break,
                special_tokens, byte_fallback, unk_token, max_token_length, max_memory, init)
    report = make_reporter(progress)
    if init is not None:
        return _continue(init, corpus, s, report)
    seeds = _required_symbols(s, required_tokens)  # checked before counting
    counts = _count_words(corpus, s.regex, s.specials, report)
    if required_tokens:
        seeded = _seed_spec(s, seeds, required_tokens, counts)
        left = lambda n: None if n is None else max(0, n - len(seeded.merge_ids))  # noqa: E731
        return _continue(seeded, corpus, replace(s, num_merges=left(s.num_merges)), report, counts)
    check_training_memory(counts, s.model, s.end_of_word, s.end_of_word_fused, s.max_memory)
    base, n_symbols, merges, reason = _core.train(
        counts, s.model, end_of_word=s.end_of_word, end_of_word_fused=s.end_of_word_fused,
        byte_fallback=s.byte_fallback, tie_break=s.tie_break, min_frequency=s.min_frequency,
        vocab_size=s.vocab_size, num_merges=s.num_merges, n_special=len(s.specials),
        max_token_length=s.max_token_length, progress=_on_merge(report),
        consume=True,  # the table is freed once the trainer has its words
    )
    spec = _new_spec(s, base, n_symbols, merges)
    why = ("no adjacent pair is left in any word" if reason == "no-pairs"
           else f"no pair occurs at least min_frequency={s.min_frequency} times")
    _stopped_early(s, spec, reason, f"training stopped after {len(merges)} merges because {why}")
    return spec


def _required_symbols(s: Settings, required_tokens: Sequence[str]) -> List[List[bytes]]:
    """The initial symbols of each of ``required_tokens`` as a word (the
    char model's marker as its settings say), as UTF-8; a token that the
    pattern cuts, or that is a special token, is refused."""
    if isinstance(required_tokens, str):
        raise TrainingError("required_tokens must be a list of strings, not one str")
    seeds: List[List[bytes]] = []
    for token in required_tokens:
        if not isinstance(token, str) or not token:
            raise TrainingError(f"required_tokens must be non-empty strings, got {token!r}")
        if token in s.specials:
            raise TrainingError(f"required token {token!r} is also a special token")
        pieces = _core.WordCounts(s.regex, [])
        _add_documents(pieces, [token])
        if [w for w, _ in pieces.items()] != [token]:
            raise TrainingError(f"required token {token!r} is more than one piece under the pattern, so no "
                                f"encoding could give it as one token (a text kept whole before pre-tokenizing is a special token: "
                                f"special_tokens=)")
        if s.model == "byte":
            seeds.append([bytes([b]) for b in token.encode("utf-8")])
            continue
        symbols = list(token)
        if s.end_of_word and s.end_of_word_fused:
            symbols[-1] += s.end_of_word
        elif s.end_of_word:
            symbols.append(s.end_of_word)
        seeds.append([t.encode("utf-8") for t in symbols])
    return seeds


def _seed_spec(s: Settings, seeds: List[List[bytes]], required_tokens: Sequence[str],
               counts: "_core.WordCounts") -> ModelSpec:
    """A model with no merges but those that make each required token one
    token (``seeds``: their initial symbols): for each (in order), while the
    merges so far leave it in several pieces, the merge of its first two
    pieces. The char model's alphabet is that of ``counts`` and of the tokens."""
    if s.model == "byte":
        base = [bytes([b]) for b in range(256)]
    else:
        base = [t.encode("utf-8") for t in _core.char_base(counts, list(required_tokens), s.end_of_word,
                                                           s.end_of_word_fused)]
    n_symbols = len(base)
    ids = {t: i for i, t in enumerate(base)}
    base += [b""] * (256 if s.byte_fallback else 0)  # the fallback tokens' ids (never a symbol)
    merges: List[Tuple[bytes, bytes]] = []
    for symbols in seeds:
        symbols = _apply_merges(symbols, merges)
        while len(symbols) > 1:
            merges.append((symbols[0], symbols[1]))
            symbols = _apply_merges(symbols, merges[-1:])
    triples = []
    for k, (left, right) in enumerate(merges):
        triples.append((ids[left], ids[right], None))
        ids.setdefault(left + right, len(base) + k)  # a token made twice is read by its first id
    return _new_spec(s, base, n_symbols, triples)


def _apply_merges(symbols: List[bytes], merges: Sequence[Tuple[bytes, bytes]]) -> List[bytes]:
    """``symbols`` after each merge in turn, left to right (training's rule)."""
    for left, right in merges:
        out: List[bytes] = []
        i = 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
                out.append(left + right)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out
    return symbols


def _continue(init: Any, corpus: Corpus, s: Settings, report: Optional[Reporter],
              counts: Optional["_core.WordCounts"] = None) -> ModelSpec:
    """``train(corpus, init=tok)`` (a tokenizer or a description): every id
    and merge of ``tok`` kept, new merges after its last id. ``counts``:
    the corpus already counted (used as it is, not copied)."""
    old: ModelSpec = init if isinstance(init, ModelSpec) else init._spec
    core = build_core(old) if isinstance(init, ModelSpec) else init._core
    n = int(core.n_vocab)
    triples = core.merge_triples()
    if counts is None:
        counts = _count_words(corpus, s.regex, s.specials, report)
    check_training_memory(counts, s.model, s.end_of_word, s.end_of_word_fused, s.max_memory)
    _, _, merges, reason = _core.train(
        counts, s.model, end_of_word=s.end_of_word, end_of_word_fused=s.end_of_word_fused, byte_fallback=False,
        tie_break=s.tie_break, min_frequency=s.min_frequency, vocab_size=s.vocab_size, num_merges=s.num_merges,
        n_special=0, max_token_length=s.max_token_length, progress=_on_merge(report),
        init=core, init_fallback_start=len(old.base) if old.byte_fallback else None,  # the core reads its tokens
    )
    old_counts = list(old.merge_counts) + [None] * (len(triples) - len(old.merge_counts))
    spec = replace(
        old, pattern=s.regex, merge_ids=tuple((l, r) for l, r, _ in triples) + tuple((l, r) for l, r, _ in merges),
        merge_results=tuple(i for _, _, i in triples) + tuple(range(n, n + len(merges))),
        merge_counts=tuple(old_counts) + tuple(c for _, _, c in merges), tokens=(), parity_stats=None,
    )
    _stopped_early(s, spec, reason, f"continued training stopped after {len(merges)} new merges because no pair "
                                    f"is left to merge (min_frequency={s.min_frequency})")
    return spec


def _train_superword(corpus: Corpus, *, model: str, vocab_size: Optional[int], num_merges: Optional[int],
                     transition: Optional[int], init: Any, pattern: Optional[str], progress: Any,
                     **options: Any) -> ModelSpec:
    """``train(..., superword=True, transition=t)``: see ``Tokenizer.train``."""
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
        _check_count(name, value)
    assert transition is not None and vocab_size is not None
    if transition > vocab_size:
        raise TrainingError(f"transition={transition} is above vocab_size={vocab_size}")
    if isinstance(corpus, Mapping) or isinstance(corpus, _core.WordCounts):
        raise TrainingError("superword=True needs the documents (stage 2 splits them anew), not word counts")
    if not isinstance(corpus, (str, os.PathLike, list, tuple)):
        corpus = list(corpus)  # read twice
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TrainingWarning)  # stage 1 may run out of pairs: stage 2 goes on
        stage1 = train(corpus, model=model, vocab_size=transition, pattern=pattern, progress=progress, **options)
    options = {k: v for k, v in options.items() if k in ("min_frequency", "tie_break", "max_token_length",
                                                         "max_memory")}
    return train(corpus, vocab_size=vocab_size, pattern="superbpe", init=stage1, progress=progress, **options)


def _train_word_start(corpus: Corpus, marker: str, *, vocab_size: Optional[int], num_merges: Optional[int],
                      special_tokens: SpecialTokens, **options: Any) -> PipelineSpec:
    """The word-start char model (see :mod:`bytepair.word_start`) trained on
    ``corpus``, as the pipeline that runs it."""
    word_start.check_marker(marker)
    char = train(word_start.texts(corpus, marker), model="char", pattern=word_start.word_pattern(marker),
                 end_of_word=None, byte_fallback=True, vocab_size=vocab_size, num_merges=num_merges,
                 special_tokens=special_tokens, **options)
    core = build_core(char)
    special = dict(char.special_tokens)
    ids = set(special.values())
    vocab = {}
    for i in range(int(core.n_vocab)):
        raw = core.token_bytes(i)
        if raw is not None and i not in ids:
            vocab[raw.decode("utf-8")] = i
    text = {i: t for t, i in vocab.items()}
    merges = [(text[l], text[r]) for l, r in char.merge_ids or ()]
    return PipelineSpec(word_start.description(vocab, merges, special, True, marker))


def train_parity(
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
) -> ModelSpec:
    """The description of a parity-aware BPE tokenizer (``Tokenizer.train_parity``):
    parity-aware BPE (arXiv 2508.04796; Hugging Face's ``ParityBpeTrainer``):
    one corpus per language (``{language: corpus}`` or a list), and each
    merge goes to the language compressed worst so far: the longest
    ``dev`` text in tokens (one corpus per language, ideally parallel),
    else the lowest ``(initial / current length) / ratio[language]`` of
    the training text, else the longest training text. The first
    ``global_merges`` merges are plain BPE over all languages together.
    ``variant="window"``: a language that took more than ``alpha /
    languages`` of the last ``window_size`` merges gives way to the next.
    The default ``tie_break="max-string"`` is HF's and the paper's (equal
    counts go to the greater (left, right) string, compared in GPT-2's
    printable form for bytes); ``"pair-id"`` is HF's *plain* trainer's
    rule and gives other merges than ``ParityBpeTrainer`` on ties. A
    corpus may also be a word-count table of
    :func:`bytepair.counts.count_words`. ``tok.parity_stats`` gives, per
    language, its tokens before and after training and its merges.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train_parity({"en": ["aabb"] * 10, "de": ["ccdd"] * 10},
    ...                              model="char", end_of_word=None, num_merges=6)
    >>> tok.merges
    [('b', 'b'), ('d', 'd'), ('a', 'bb'), ('c', 'dd'), ('a', 'abb'), ('c', 'cdd')]
    >>> tok.parity_stats["de"]["merges"]
    3
    """
    s = resolve(model, vocab_size, num_merges, min_frequency, pattern, end_of_word, end_of_word_fused, tie_break,
                special_tokens, max_token_length=max_token_length)
    if variant not in parity.VARIANTS:
        raise TrainingError(f"unknown variant {variant!r}: use 'base' or 'window'")
    global_merges = _check_count("global_merges", global_merges)
    if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 1:
        raise TrainingError(f"window_size must be an integer >= 1, got {window_size!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < float("inf"):
        raise TrainingError(f"alpha must be a positive finite number, got {alpha!r}")
    langs = parity.languages(corpora)
    names = [name for name, _ in langs]
    dev_langs = parity.languages(dev, "dev") if dev is not None else []
    if dev_langs and [name for name, _ in dev_langs] != names:
        raise TrainingError(
            f"dev languages {[name for name, _ in dev_langs]} do not match the corpora's {names} "
            "(same languages, same order)"
        )
    ratio_values = parity.ratios(ratio, names) if ratio is not None and not dev_langs else None
    report = make_reporter(progress)
    tables = [_count_words(c, s.regex, s.specials, report) for _, c in langs]
    dev_tables = [_count_words(c, s.regex, s.specials, report) for _, c in dev_langs]
    for name, table in zip(names, tables):
        if len(table) == 0:
            raise TrainingError(f"the corpus of language {name!r} is empty: it has no words to train on")
    base, n_symbols, merges, reason, stats = _core.train_parity(
        tables, dev_tables, s.model, end_of_word=s.end_of_word, end_of_word_fused=s.end_of_word_fused,
        tie_break=s.tie_break, min_frequency=s.min_frequency, vocab_size=s.vocab_size, num_merges=s.num_merges,
        n_special=len(s.specials), max_token_length=s.max_token_length, variant=variant,
        global_merges=global_merges, window_size=window_size, alpha=float(alpha), ratio=ratio_values,
        progress=_on_merge(report),
    )
    train_before, train_after, dev_before, dev_after, chosen = stats
    spec = replace(_new_spec(s, base, n_symbols, merges), parity_stats={
        name: {"train": (train_before[i], train_after[i]),
               **({"dev": (dev_before[i], dev_after[i])} if dev_langs else {}),
               "merges": chosen[i]}
        for i, name in enumerate(names)
    })
    _stopped_early(s, spec, reason, f"parity training stopped after {len(merges)} merges because every language "
                                    f"ran out of pairs occurring at least min_frequency={s.min_frequency} times")
    return spec


def trace(merges: Sequence[Tuple[Any, Any]], merge_counts: Sequence[Optional[int]]) -> List[str]:
    """Seed 000's trace lines, one per merge (with its count when known);
    bytes print as UTF-8 with invalid bytes as ``\\xNN``.

    >>> trace([(b"a", b"\\xff")], [3])
    ['merge 1: a + \\\\xff -> a\\\\xff  (count 3)']
    """
    def text(token: Union[str, bytes]) -> str:
        return token.decode("utf-8", "backslashreplace") if isinstance(token, bytes) else token

    lines = []
    for k, (left, right) in enumerate(merges, 1):
        line = f"merge {k}: {text(left)} + {text(right)} -> {text(left + right)}"
        count = merge_counts[k - 1] if k <= len(merge_counts) else None
        lines.append(line if count is None else f"{line}  (count {count})")
    return lines


# ---------------------------------------------------------------- from files


def train_from_files(paths: Iterable[Any], model: str = "byte", *, pattern: Optional[str] = "default",
                     special_tokens: Any = (), unk_token: Optional[str] = None, init: Any = None, client: Any = None,
                     field: Optional[str] = None, column: Optional[str] = None, max_bytes: Optional[int] = None,
                     errors: str = "strict", workdir: Any = None, progress: Any = None, **options: Any) -> ModelSpec:
    """:func:`train` on files read a block at a time, so memory grows with
    the number of distinct words, not with the corpus: exactly what
    :func:`train` gives on the files' texts as documents. Plain text files
    are one document each; JSONL (``field``, default ``"text"``), Parquet
    (``column``), gzip/zstd and ``-`` (stdin) are read as
    :mod:`bytepair.corpus` says; ``max_bytes`` keeps the first N bytes of
    text. ``client`` (a ``dask.distributed.Client``) counts the files on
    its workers, with the same result. Every other option is :func:`train`'s.

    >>> import os, tempfile
    >>> from bytepair import Tokenizer
    >>> path = os.path.join(tempfile.mkdtemp(), "c.txt")
    >>> _ = open(path, "w").write("low lower lowest " * 20)
    >>> tok = Tokenizer.train_from_files([path], vocab_size=260)
    >>> tok.merges == Tokenizer.train(["low lower lowest " * 20], vocab_size=260).merges
    True
    """
    report = make_reporter(progress)
    s = resolve(model, pattern=pattern, special_tokens=special_tokens, unk_token=unk_token, init=init,
                end_of_word=options.get("end_of_word", "</w>"),
                end_of_word_fused=options.get("end_of_word_fused", False), max_memory=options.get("max_memory"))

    def memory_check(table: Any) -> None:
        check_training_memory(table, s.model, s.end_of_word, s.end_of_word_fused, s.max_memory,
                              during="training on the words counted so far")

    counts = counts_file.count_words(paths, s.regex, s.specials, field=field, column=column, max_bytes=max_bytes,
                                     errors=errors, client=client, workdir=workdir, progress=report,
                                     memory_check=memory_check)
    if init is not None:
        return train(counts, init=init, progress=report, **options)
    return train(counts, model=model, pattern=s.regex, special_tokens=special_tokens, unk_token=unk_token,
                 progress=report, **options)


_UNSET: Any = object()


def train_from_counts(paths: Any, model: str = "byte", *, pattern: Optional[str] = _UNSET,
                      special_tokens: Any = _UNSET, unk_token: Optional[str] = None, init: Any = None,
                      progress: Any = None, **options: Any) -> ModelSpec:
    """:func:`train` on one counts file or several (merged in order).
    ``pattern`` and ``special_tokens`` default to the file's; given, they
    must be the ones the file was counted with (``TrainingError``
    otherwise), since words cannot be split again.

    >>> import os, tempfile
    >>> from bytepair import Tokenizer
    >>> from bytepair.counts import count_words, save_counts
    >>> path = os.path.join(tempfile.mkdtemp(), "c.counts")
    >>> counts = count_words([], "gpt2"); counts.add_word("ab", 3)
    >>> save_counts(path, counts, "gpt2")
    >>> Tokenizer.train_from_counts(path, num_merges=1).tokenize("ab")
    [b'ab']
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    header, counts = counts_file.merge_counts_with_header(list(paths))
    name = os.fspath(paths[0]) if len(paths) == 1 else "the counts files"
    if init is not None:
        counts_file.check_settings(header, init.pattern, list(init.special_tokens), name)
        return train(counts, init=init, progress=progress, **options)
    if pattern is _UNSET:
        regex = header.get("pattern")
        if regex is None and model == "byte":
            raise TrainingError(f"{name} was counted with str.split(): the byte model needs a regex pattern "
                                "(count again with pattern=, or train with model='char')")
    else:
        regex = default_pattern(pattern, model)
    if special_tokens is _UNSET:
        special_tokens = list(header.get("special_tokens", []))
    counts_file.check_settings(header, regex, special_names(special_tokens, unk_token, TrainingError), name)
    return train(counts, model=model, pattern=regex, special_tokens=special_tokens, unk_token=unk_token,
                 progress=progress, **options)


