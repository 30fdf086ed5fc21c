"""Tokenizers that are pipelines: a Hugging Face ``tokenizer.json`` run by
the Rust core (``src/pipeline``) with Hugging Face's ids, decoding and
offsets: normalizer, pre-tokenizer, BPE model, added tokens,
post-processor and decoder, built from the file's description. Each is a
:class:`~bytepair.Tokenizer` like any other (``tok.model == "pipeline"``).

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

from bytepair._io import atomic_write_text, parse_json
from bytepair.spec import PipelineSpec
from bytepair.tokenizer import Tokenizer

# One class runs every description; the name of the pipelines' former subclass stays importable.
PipelineTokenizer = Tokenizer


def from_hf_json(text: str, path: str = "<string>") -> Tokenizer:
    """The :class:`~bytepair.Tokenizer` of the text of a ``tokenizer.json``.

    >>> tok = from_hf_json('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}')
    >>> tok.encode("aa"), tok.n_vocab, tok.model
    ([0, 0], 1, 'pipeline')
    """
    return Tokenizer(PipelineSpec(parse_json(text, path), path))


def save_hf(tok: Tokenizer, path: str) -> None:
    """Write the pipeline as a ``tokenizer.json`` (atomically).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "tokenizer.json")
    >>> save_hf(from_hf_json('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}'), path)
    >>> from_hf_json(open(path).read()).encode("a")
    [0]
    """
    atomic_write_text(path, tok.to_hf_json() + "\n")
