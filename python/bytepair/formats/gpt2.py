"""GPT-2's files: a folder holding ``vocab.json`` (GPT-2's ``encoder.json``:
token -> id, tokens written with the byte-to-unicode map) and ``merges.txt``
(GPT-2's ``vocab.bpe``: a ``#version: 0.2`` line, then ``left right`` per
line, in merge order). Hugging Face reads this pair as ``GPT2Tokenizer``.

The files hold no pattern: loading uses ``pattern`` if given, else the
``gpt2`` preset (tiktoken's ``r50k`` regex, which splits as GPT-2's own
``encoder.py`` does). Special tokens are the vocabulary's entries that no
merge makes (``<|endoftext|>`` in GPT-2), unless ``special_tokens`` is given.
The checks of :func:`bytepair.formats.convert.byte_ranks` apply.

``path`` may be the folder or either file in it; OpenAI's own names
(``encoder.json`` + ``vocab.bpe``) are read as well. A merges file alone is
refused, naming the vocabulary it needs (its ids are in ``encoder.json``).

>>> import bytepair, tempfile, os
>>> tok = bytepair.Tokenizer.train("hello hello world", vocab_size=260, pattern="gpt2",
...                                special_tokens=["<|endoftext|>"])
>>> folder = os.path.join(tempfile.mkdtemp(), "gpt2-files")
>>> save(tok, folder); sorted(os.listdir(folder))
['merges.txt', 'vocab.json']
>>> bytepair.Tokenizer.from_spec(load(folder)).encode("hello<|endoftext|>", allowed_special="all") == tok.encode("hello<|endoftext|>", allowed_special="all")
True
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple

from bytepair._io import atomic_write_text, parse_json, read_model_bytes
from bytepair.formats.magic import decode_text
from bytepair.errors import BytepairError, FormatError, InputError
from bytepair.spec import checked, from_byte_vocab
from bytepair.formats.convert import (
    UNICODE_TO_BYTE,
    bytes_to_unicode,
    byte_ranks,
    check_merges_derived,
    unique_vocab,
    merges_as_ids,
    require_byte_model,
)

VOCAB = "vocab.json"
MERGES = "merges.txt"
HEADER = "#version: 0.2"
DEFAULT_PATTERN = "gpt2"


# the pair's names: Hugging Face's, and OpenAI's own (GPT-2's encoder.py)
PAIRS = [(VOCAB, MERGES), ("encoder.json", "vocab.bpe")]
NAMES = {name for pair in PAIRS for name in pair}


def files(path: str) -> Tuple[str, str]:
    """``(vocab file, merges file)`` for a folder (``vocab.json`` + ``merges.txt``,
    or OpenAI's ``encoder.json`` + ``vocab.bpe``), for one file of a pair, or for
    a merges file of another name (its vocabulary beside it under either name).

    >>> files("gpt2/vocab.bpe")
    ('gpt2/encoder.json', 'gpt2/vocab.bpe')
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        for vocab, merges in PAIRS:
            if os.path.isfile(os.path.join(path, vocab)) or os.path.isfile(os.path.join(path, merges)):
                return os.path.join(path, vocab), os.path.join(path, merges)
        return os.path.join(path, VOCAB), os.path.join(path, MERGES)
    folder, name = os.path.split(path)
    for vocab, merges in PAIRS:
        if name in (vocab, merges):
            return os.path.join(folder, vocab), os.path.join(folder, merges)
    for vocab, _ in PAIRS:  # a merges file of another name
        if os.path.isfile(os.path.join(folder, vocab)):
            return os.path.join(folder, vocab), path
    raise FormatError(f"{path}: GPT-2 merges (byte-level symbols after a #version line) need their vocabulary "
                      f"beside them: {VOCAB} or encoder.json, not found in {folder or '.'}")


def dumps(tok: Any) -> Tuple[str, str]:
    """The texts of ``vocab.json`` and ``merges.txt`` for a byte model."""
    require_byte_model(tok, "GPT-2's vocab.json + merges.txt")
    tokens = unique_vocab(tok, "GPT-2's vocab.json + merges.txt")
    ranks = {b: i for i, b in tokens.items()}
    vocab = {bytes_to_unicode(b): i for i, b in sorted(tokens.items())}
    for text, id_ in sorted(tok.special_tokens.items(), key=lambda kv: kv[1]):
        if text in vocab:
            raise FormatError(
                f"GPT-2's vocab.json cannot hold this tokenizer: the special token {text!r} is written as "
                f"the token with id {vocab[text]} is"
            )
        vocab[text] = id_
    merges = sorted(
        (ranks[tokens[l] + tokens[r]], bytes_to_unicode(tokens[l]), bytes_to_unicode(tokens[r]))
        for l, r in merges_as_ids(tok)
    )
    made = {tokens[l] + tokens[r] for l, r in merges_as_ids(tok)}
    for token in tokens.values():
        if len(token) > 1 and token not in made:
            raise FormatError(f"GPT-2's merges.txt cannot hold this tokenizer: the token {token!r} is made by no merge")
    merges_txt = HEADER + "\n" + "".join(f"{l} {r}\n" for _, l, r in merges)
    return json.dumps(vocab, ensure_ascii=False) + "\n", merges_txt


def save(tok: Any, path: str) -> None:
    """Write ``tok`` (a byte model) as ``path/vocab.json`` and
    ``path/merges.txt``, creating the folder if needed; each file is written
    atomically."""
    path = os.fspath(path)
    vocab_text, merges_text = dumps(tok)
    if os.path.exists(path) and not os.path.isdir(path):
        raise FormatError(f"{path}: the gpt2 format is a folder (vocab.json + merges.txt), and this is a file")
    os.makedirs(path, exist_ok=True)
    atomic_write_text(os.path.join(path, VOCAB), vocab_text)
    atomic_write_text(os.path.join(path, MERGES), merges_text)


def _read_vocab(path: str) -> Dict[str, int]:
    text = decode_text(read_model_bytes(path), path, "GPT-2 vocab.json")
    vocab = parse_json(text, path)
    if not isinstance(vocab, dict):
        raise FormatError(f"{path}: line 1: must be a JSON object mapping tokens to ids")
    seen: Dict[int, str] = {}
    for token, id_ in vocab.items():
        if isinstance(id_, bool) or not isinstance(id_, int) or not 0 <= id_ <= 2**32 - 2:
            raise FormatError(f"{path}: the id of {token!r} must be a non-negative integer, got {id_!r}")
        if id_ in seen:
            raise FormatError(f"{path}: the id {id_} is given to both {seen[id_]!r} and {token!r}")
        if not token:
            raise FormatError(f"{path}: the empty string is not a token")
        seen[id_] = token
    return vocab


def _read_merges(path: str) -> Tuple[List[Tuple[str, str]], List[int]]:
    """Merges and their line numbers. ``#version`` lines are skipped, as
    Hugging Face does; a blank line ends nothing and is skipped too."""
    text = decode_text(read_model_bytes(path), path, "GPT-2 merges.txt")
    merges: List[Tuple[str, str]] = []
    lines: List[int] = []
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line or (n == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise FormatError(f"{path}: line {n}: expected 'left right' (two tokens, one space), got {line[:80]!r}")
        merges.append((parts[0], parts[1]))
        lines.append(n)
    return merges, lines


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """Read GPT-2's ``vocab.json`` + ``merges.txt`` (a folder, or either file)."""
    vocab_path, merges_path = files(path)
    for needed, other in ((vocab_path, merges_path), (merges_path, vocab_path)):
        if not os.path.isfile(needed) and os.path.isfile(other):
            raise InputError(f"{needed}: no such file (GPT-2's tokenizer is two files: {os.path.basename(other)} "
                             f"needs {os.path.basename(needed)} beside it)")
    vocab = _read_vocab(vocab_path)
    merges, lines = _read_merges(merges_path)
    if special_tokens is None:
        # entries no merge makes (and not single bytes) are special tokens
        made = {l + r for l, r in merges}
        special_tokens = {
            t: i for t, i in vocab.items() if t not in made and not (len(t) == 1 and t in UNICODE_TO_BYTE)
        }
    specials = dict(special_tokens)
    merge_where = lambda k: f"{merges_path}: line {lines[k]}"  # noqa: E731
    ids, triples = byte_ranks(vocab, specials, merges, vocab_where=f"{vocab_path}: vocabulary",
                              merge_where=merge_where, ignore_merges=False)
    try:
        spec = checked(from_byte_vocab(ids, pattern or DEFAULT_PATTERN, specials))
    except BytepairError as e:
        raise FormatError(f"{vocab_path}: {e}") from None
    check_merges_derived(spec.built, triples, merge_where)
    return spec
