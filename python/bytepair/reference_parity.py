"""Parity-aware BPE (Foroutan et al., arXiv 2508.04796), the pure-Python oracle.

Plain BPE merges the pair most frequent over the whole corpus, so the language
with the most text gets the most merges. Parity-aware BPE keeps one corpus per
language and, at each step, hands the merge to the language compressed worst
so far: it merges *that language's* most frequent pair (in every language).
"Worst" is measured on a development set (ideally parallel: the same
sentences in every language), else on target compression ratios, else on the
training corpora themselves. This module follows Hugging Face's
``ParityBpeTrainer`` (tokenizers 0.23) step for step; the Rust core
(``src/train/parity.rs``) must give the same merges.

>>> m = train_parity({"en": ["aabb"] * 10, "de": ["ccdd"] * 10}, model="char",
...                  end_of_word=None, num_merges=6)
>>> m.merges
[('b', 'b'), ('d', 'd'), ('a', 'bb'), ('c', 'dd'), ('a', 'abb'), ('c', 'cdd')]

Like ``bytepair.reference`` it never imports the compiled extension.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from bytepair.errors import TrainingError, TrainingWarning
from bytepair.reference import (
    _DEFAULT,
    Model,
    _check_int,
    check_train_settings,
    _compile,
    _count,
    _special_list,
    best_pair,
    get_pair_counts,
    initial_symbols,
    merge,
    split_words,
)

VARIANTS = ("base", "window")


def languages(corpora, what="corpora"):
    """
    the (name, corpus) pairs of a mapping {language: corpus} or a sequence of
    corpora (named "0", "1", ...), e.g.
    languages({"en": "a b"}) -> [("en", "a b")];  languages(["x", "y"]) -> [("0", "x"), ("1", "y")]
    """
    if isinstance(corpora, Mapping):
        items = [(str(k), v) for k, v in corpora.items()]
    elif isinstance(corpora, (str, bytes)):
        raise TrainingError(f"{what} must be one corpus per language (a mapping or a list), not one {type(corpora).__name__}")
    else:
        items = [(str(i), c) for i, c in enumerate(corpora)]
    if not items:
        raise TrainingError(f"{what}: no language given")
    return items


def select_window(values, recent, window_size, threshold):
    """
    HF's moving-window choice: the language of greatest value, unless it took
    more than threshold of the last window_size merges (recent); then the next
    best, and so on; when every language is masked, the last one tried, e.g.
    select_window([5, 3], [0, 0], 2, 0.5) -> 1
    """
    mask = [True] * len(values)
    while True:
        # the first unmasked language of greatest value (HF starts from index 0 even when it is
        # masked, and loops forever when every unmasked value is -inf: exhausted languages)
        best = max((i for i in range(len(values)) if mask[i]), key=lambda i: values[i])
        if recent.count(best) / window_size <= threshold:
            return best
        mask[best] = False
        if not any(mask):
            return best


def train_parity(corpora, dev=None, ratio=None, model="byte", vocab_size=None, num_merges=None,
                 min_frequency=1, pattern=_DEFAULT, end_of_word="</w>", end_of_word_fused=False,
                 tie_break="max-string", variant="base", global_merges=0, window_size=100, alpha=2.0,
                 special_tokens=(), max_token_length=None):
    """
    learn merges from one corpus per language (corpora: {language: corpus} or a
    list; each corpus as for reference.train), e.g.
    train_parity({"en": "ab ab ab", "de": "cd"}, model="char", end_of_word=None).merges
        -> [("a", "b"), ("c", "d")]

    each step picks a language, then merges the best pair (by count in that
    language's corpus, ties by tie_break) in every language:
    - the first global_merges steps use the counts of all languages together;
    - with dev (one corpus per language, the same keys), the language whose dev
      text is longest in tokens (first on ties);
    - else with ratio (one positive number per language), the language with the
      lowest (initial length / current length) / ratio of its training text;
    - else the language whose training text is longest in tokens.
    variant "window": a language that took more than alpha / (number of
    languages) of the last window_size merges gives its turn to the next one.
    a language with no pair reaching min_frequency is exhausted and skipped.
    """
    check_train_settings(model, end_of_word, tie_break, num_merges, vocab_size, min_frequency, max_token_length)
    if variant not in VARIANTS:
        raise TrainingError(f"unknown variant {variant!r}; expected 'base' or 'window'")
    _check_int("global_merges", global_merges, 0)
    _check_int("window_size", window_size, 1)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < float("inf"):
        raise TrainingError(f"alpha must be a positive finite number, got {alpha!r}")
    if model == "byte":
        end_of_word, end_of_word_fused = None, False
    if pattern is _DEFAULT:
        pattern = "cl100k" if model == "byte" else None
    if model == "byte" and pattern is None:
        raise TrainingError("the byte model needs a pattern (a preset name or a regex)")
    if pattern is not None:
        _compile(pattern)
    specials = _special_list(special_tokens, TrainingError)

    langs = languages(corpora)
    n_langs = len(langs)
    dev_langs = None
    if dev is not None:
        dev_langs = languages(dev, "dev")
        if [k for k, _ in dev_langs] != [k for k, _ in langs]:
            raise TrainingError(f"dev languages {[k for k, _ in dev_langs]} do not match the corpora's "
                                f"{[k for k, _ in langs]} (same languages, same order)")
        ratio = None  # the dev set takes precedence, as in HF
    if ratio is not None:
        if isinstance(ratio, Mapping):
            missing = [k for k, _ in langs if k not in {str(r) for r in ratio}]
            if missing or len(ratio) != n_langs:
                raise TrainingError(f"ratio must give one value per language {[k for k, _ in langs]}")
            by_name = {str(k): v for k, v in ratio.items()}
            ratio = [by_name[k] for k, _ in langs]
        ratio = list(ratio)
        if len(ratio) != n_langs:
            raise TrainingError(f"ratio has {len(ratio)} values for {n_langs} languages")
        for k, r in zip((k for k, _ in langs), ratio):
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 < r < float("inf"):
                raise TrainingError(f"ratio of language {k!r} must be a positive finite number, got {r!r}")

    def word_counts(corpus):
        if isinstance(corpus, Mapping):
            return dict(corpus)
        return _count(corpus, lambda s: split_words(s, pattern), specials)

    def symbolize(counts):
        return [(initial_symbols(w, model, end_of_word, end_of_word_fused), n) for w, n in counts.items()]

    train_counts = [word_counts(c) for _, c in langs]
    dev_counts = [word_counts(c) for _, c in dev_langs] if dev_langs else []
    for (k, _), c in zip(langs, train_counts):
        if not c:
            raise TrainingError(f"the corpus of language {k!r} is empty: no words to train on")
    words = [symbolize(c) for c in train_counts]
    dev_words = [symbolize(c) for c in dev_counts]

    # base vocabulary: as reference.train, over every language's training and dev words
    all_counts = train_counts + dev_counts
    if model == "byte":
        base = [bytes([b]) for b in range(256)]
    elif end_of_word is not None and end_of_word_fused:
        base = sorted({s for ws in words + dev_words for symbols, _ in ws for s in symbols})
    else:
        base = sorted({ch for c in all_counts for w in c for ch in w})
        if end_of_word is not None and end_of_word not in base:
            base.append(end_of_word)
    ids = {s: i for i, s in enumerate(base)}
    next_id = len(base)
    fixed = next_id + len(specials)
    if vocab_size is not None and vocab_size < fixed:
        raise TrainingError(f"vocab_size={vocab_size} is below the size without any merge ({fixed})")
    limit = num_merges
    if vocab_size is not None:
        limit = vocab_size - fixed if limit is None else min(limit, vocab_size - fixed)

    def length(ws):
        return sum(len(symbols) * n for symbols, n in ws)

    initial = [length(ws) for ws in words]
    threshold = alpha / n_langs
    recent = []  # the window: languages of the last window_size choices
    exhausted = set()
    merges, merge_counts, stopped = [], [], None
    while limit is None or len(merges) < limit:
        if len(exhausted) >= n_langs:
            stopped = "every language ran out of pairs"
            break
        if len(merges) < global_merges:
            lang = None
        elif ratio is not None:
            adjusted = [(initial[i] / length(words[i])) / ratio[i] for i in range(n_langs)]
            if variant == "base":
                lang = min((i for i in range(n_langs) if i not in exhausted), key=lambda i: adjusted[i])
            else:
                values = [float("-inf") if i in exhausted else -adjusted[i] for i in range(n_langs)]
                lang = select_window(values, recent, window_size, threshold)
        else:
            lengths = [length(ws) for ws in (dev_words if dev_langs else words)]
            if variant == "base":
                lang = max((i for i in range(n_langs) if i not in exhausted), key=lambda i: lengths[i])
            else:
                values = [float("-inf") if i in exhausted else lengths[i] for i in range(n_langs)]
                lang = select_window(values, recent, window_size, threshold)
        if lang is not None and variant == "window":
            recent = (recent + [lang])[-window_size:]

        pair_counts = get_pair_counts([w for ws in words for w in ws] if lang is None else words[lang])
        if max_token_length is not None:
            pair_counts = {p: n for p, n in pair_counts.items() if len(p[0] + p[1]) <= max_token_length}
        pair = best_pair(pair_counts, tie_break, ids) if pair_counts else None
        if pair is None or pair_counts[pair] < min_frequency:
            if lang is None:
                stopped = "no pair is left in the global merges"
                break
            exhausted.add(lang)
            continue
        merges.append(pair)
        merge_counts.append(pair_counts[pair])
        ids.setdefault(pair[0] + pair[1], next_id + len(merges) - 1)
        words = [[(merge(s, pair), n) for s, n in ws] for ws in words]
        dev_words = [[(merge(s, pair), n) for s, n in ws] for ws in dev_words]
    if stopped and limit is not None:
        warnings.warn(f"parity training stopped after {len(merges)} merges (of {limit}): {stopped}",
                      TrainingWarning, stacklevel=2)
    return Model(model, base, merges, merge_counts=merge_counts, special_tokens=special_tokens,
                 pattern=pattern, end_of_word=end_of_word, end_of_word_fused=end_of_word_fused,
                 error=TrainingError)
