"""The SentencePiece-style char model: a word-*start* marker (``▁``) with
spaces kept as part of the text, and byte fallback: the layout of the
Llama 2 / Mistral family, trained by bytepair and run as a Hugging Face
pipeline.

Training (``Tokenizer.train(corpus, model="char", word_start="▁")``): each text becomes ``"▁" + text.replace(" ", "▁")``
(a space is the marker; one marker starts the text), is cut into words
``▁*[^▁\\n]+`` (a run of markers and the characters after it), ``▁+`` and
``\\n+``, and bytepair's char model learns merges over those words (no
end-of-word marker; characters of the training corpus as the base, then
``<0x00>``..``<0xFF>``, then merges, then special tokens). No merge can
make a token holding a marker after another character, so a text needs no
pre-tokenizer: the BPE runs over the whole normalized text and gives what
it gives word by word.

The result is a pipeline :class:`~bytepair.Tokenizer` whose
description is the ``tokenizer.json`` ``transformers`` writes for Llama 2
(normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")``, no pre-tokenizer, BPE
with ``byte_fallback`` and ``fuse_unk``, decoder ``Replace`` +
``ByteFallback`` + ``Fuse`` + ``Strip``), so ``save(path, format="hf")``
(or ``to_hf_json()``) is read by HF ``tokenizers`` and ``transformers`` with
the same ids.

>>> from bytepair import Tokenizer
>>> tok = Tokenizer.train(["low lower lowest", "new newer newest"] * 3, model="char", word_start=MARKER,
...                       num_merges=14)
>>> tok.tokenize("lower newest")
['▁lower', '▁newest']
>>> tok.decode(tok.encode("lower  newest"))
'lower  newest'
>>> [tok.vocab()[i] for i in tok.encode("ß")]
['▁', '<0xC3>', '<0x9F>']
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Mapping, Sequence, Union

from bytepair.errors import TrainingError

MARKER = "\u2581"


def word_pattern(marker: str = MARKER) -> str:
    """The regex that cuts normalized text into training words.

    >>> import re
    >>> re.findall(word_pattern(), "▁a▁▁bc\\n\\n▁d▁▁")
    ['▁a', '▁▁bc', '\\n\\n', '▁d', '▁▁']
    """
    import re

    m = re.escape(marker)
    return f"{m}*[^{m}\\n]+|{m}+|\\n+"


def normalize(text: str, marker: str = MARKER) -> str:
    """The text as the model sees it (Hugging Face's ``Prepend`` then
    ``Replace``): empty stays empty.

    >>> normalize("hello  world")
    '▁hello▁▁world'
    """
    return marker + text.replace(" ", marker) if text else ""


def texts(corpus: Any, marker: str = MARKER) -> Union[Iterator[str], Dict[str, int]]:
    """The corpus (as ``Tokenizer.train`` takes it) normalized for training.

    >>> list(texts(["a b"]))
    ['▁a▁b']
    """
    if isinstance(corpus, str):
        return iter([normalize(corpus, marker)])
    if isinstance(corpus, os.PathLike):
        path = os.fspath(corpus)

        def lines() -> Iterator[str]:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    yield normalize(line, marker)

        return lines()
    if isinstance(corpus, Mapping):
        out: Dict[str, int] = {}
        for word, n in corpus.items():
            key = normalize(word, marker)
            out[key] = out.get(key, 0) + n
        return out
    try:
        it = iter(corpus)
    except TypeError:
        raise TrainingError("the corpus must be a str, a path, an iterable of str or a mapping of word counts") from None
    return (normalize(t, marker) if isinstance(t, str) else t for t in it)


def check_marker(marker: Any) -> None:
    """``TrainingError`` unless ``marker`` is one character other than space and newline.

    >>> check_marker("\u2581")
    """
    if not isinstance(marker, str) or len(marker) != 1 or marker in " \n":
        raise TrainingError(f"the word-start marker must be one character other than space and newline, got {marker!r}")


def description(vocab: Dict[str, int], merges: List[Sequence[str]], specials: Mapping[str, int],
                byte_fallback: bool = True, marker: str = MARKER) -> Dict[str, Any]:
    """The Llama 2 / Mistral ``tokenizer.json`` object of a word-start model.

    >>> d = description({"▁": 0, "a": 1, "▁a": 2}, [("▁", "a")], {"<s>": 3})
    >>> d["normalizer"]["normalizers"][0], d["model"]["merges"], d["added_tokens"][0]["content"]
    ({'type': 'Prepend', 'prepend': '▁'}, [['▁', 'a']], '<s>')
    """
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t, i in sorted(specials.items(), key=lambda x: x[1])],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": marker},
            {"type": "Replace", "pattern": {"String": " "}, "content": marker},
        ]},
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": marker}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ]},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": byte_fallback,
            "ignore_merges": False,
            "vocab": dict(vocab),
            "merges": [list(m) for m in merges],
        },
    }
