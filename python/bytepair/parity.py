"""Helpers of parity-aware training (:meth:`bytepair.Tokenizer.train_parity`):
naming the languages, and measuring how evenly a tokenizer treats them.

The fairness measure of the parity-aware BPE paper (arXiv 2508.04796) is the
Gini coefficient of the per-language token costs on parallel text (the same
content in every language): 0 when every language costs the same number of
tokens, towards 1 when one language takes all the cost.

>>> gini([100, 100, 100])
0.0
>>> round(gini([100, 300]), 3)
0.25
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from bytepair.errors import TrainingError

VARIANTS = ("base", "window")


def languages(corpora: Any, what: str = "corpora") -> List[Tuple[str, Any]]:
    """The ``(name, corpus)`` pairs of ``{language: corpus}`` or of a list of
    corpora (named ``"0"``, ``"1"``, ...).

    >>> languages({"en": "a b", "de": "c"})
    [('en', 'a b'), ('de', 'c')]
    >>> languages(["x", "y"])
    [('0', 'x'), ('1', 'y')]
    """
    if isinstance(corpora, Mapping):
        items = [(str(k), v) for k, v in corpora.items()]
    elif isinstance(corpora, (str, bytes)) or not isinstance(corpora, Iterable):
        raise TrainingError(
            f"{what} must be one corpus per language (a mapping or a list), not one {type(corpora).__name__}"
        )
    else:
        items = [(str(i), c) for i, c in enumerate(corpora)]
    if not items:
        raise TrainingError(f"{what}: no language given")
    return items


def ratios(ratio: Any, names: Sequence[str]) -> List[float]:
    """Target compression ratios in language order, from a list or a mapping
    by language name.

    >>> ratios({"de": 2, "en": 1.0}, ["en", "de"])
    [1.0, 2.0]
    """
    if isinstance(ratio, Mapping):
        given = {str(k): v for k, v in ratio.items()}
        if sorted(given) != sorted(names):
            raise TrainingError(f"ratio must give one value per language {list(names)}, got {sorted(given)}")
        values = [given[n] for n in names]
    else:
        values = list(ratio)
        if len(values) != len(names):
            raise TrainingError(f"ratio has {len(values)} values for {len(names)} languages")
    out = []
    for name, v in zip(names, values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < float("inf"):
            raise TrainingError(f"ratio of language {name!r} must be a positive finite number, got {v!r}")
        out.append(float(v))
    return out


def gini(values: Iterable[float]) -> float:
    """Gini coefficient of non-negative values: mean absolute difference of
    all pairs over twice the mean (0: all equal).

    >>> gini([1, 1, 2, 4])
    0.3125
    """
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("gini of no values")
    if any(x < 0 for x in xs):
        raise ValueError("gini needs non-negative values")
    mean = sum(xs) / len(xs)
    if mean == 0:
        return 0.0
    return sum(abs(a - b) for a in xs for b in xs) / (2 * len(xs) ** 2 * mean)


def token_costs(tokenizer: Any, texts: Mapping[str, Iterable[str]]) -> Dict[str, int]:
    """Tokens ``tokenizer`` spends on each language's texts
    (``{language: texts}``); on parallel texts, their :func:`gini` is the
    paper's parity measure.

    >>> from bytepair import Tokenizer
    >>> tok = Tokenizer.train("ab ab ab cd", model="char", end_of_word=None, num_merges=1)
    >>> token_costs(tok, {"x": ["ab ab"], "y": ["cd cd"]})
    {'x': 2, 'y': 4}
    """
    return {lang: sum(tokenizer.count_batch(list(docs))) for lang, docs in texts.items()}
