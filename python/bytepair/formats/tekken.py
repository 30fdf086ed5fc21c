"""Mistral's ``tekken.json`` (mistral_common's ``Tekkenizer``): a tiktoken
byte model whose ids start after the special tokens.

The file holds ``config`` (``pattern``, ``default_vocab_size``,
``default_num_special_tokens``, ``version``), ``vocab`` (``rank``,
``token_bytes`` in base64, ``token_str``) and, in newer files,
``special_tokens`` (``rank``, ``token_str``, ``is_control``). As
mistral_common reads it: special token ``k`` has id ``k`` (files without a
list get mistral_common's 20 historical ones), missing ones up to
``default_num_special_tokens`` are ``<SPECIAL_k>``; the vocabulary is cut to
``default_vocab_size - default_num_special_tokens`` ranks and rank ``r`` has
id ``r + default_num_special_tokens``. Text is encoded with the pattern and
no special token is matched in it (``encode_ordinary``, ``encode`` with
``disallowed_special=()``, or any encode in Hugging Face's style, as
transformers' ``MistralCommonBackend`` does); ``add_special_tokens=True``
puts BOS (``<s>``) first, as mistral_common's ``encode(text, bos=True,
eos=False)`` and that backend do. ``decode`` writes special tokens as their
text (mistral_common's ``SpecialTokenPolicy.KEEP``); ``skip_special_tokens=True``
drops them all (``SpecialTokenPolicy.IGNORE``).

>>> import json, base64, tempfile, os
>>> vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": None} for i in range(256)]
>>> vocab.append({"rank": 256, "token_bytes": base64.b64encode(b"ab").decode(), "token_str": "ab"})
>>> cfg = {"pattern": r"\\w+|\\s+|.", "default_vocab_size": 277, "default_num_special_tokens": 20, "version": "v3"}
>>> path = os.path.join(tempfile.mkdtemp(), "tekken.json")
>>> _ = open(path, "w").write(json.dumps({"config": cfg, "vocab": vocab}))
>>> from bytepair import Tokenizer
>>> tok = Tokenizer.from_spec(load(path))
>>> tok.encode_ordinary("ab a"), tok.special_tokens["</s>"]
([276, 52, 117], 2)
>>> tok.encode("ab a", add_special_tokens=True), tok.decode([1, 276], skip_special_tokens=True)
([1, 276, 52, 117], 'ab')
"""

from __future__ import annotations

import binascii
import os
from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional

from bytepair._io import parse_json, read_model_bytes
from bytepair.formats.magic import decode_text
from bytepair.errors import BytepairError, FormatError
from bytepair.spec import checked, from_byte_vocab

# mistral_common's Tekkenizer.DEPRECATED_SPECIAL_TOKENS: the special tokens of files that list none
DEPRECATED_SPECIAL_TOKENS = [
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
]
SPECIAL_TOKEN_TEMPLATE = "<SPECIAL_{id}>"
MAX_IDS = 1 << 24
# special tokens a file may declare: the ones it does not list are made up
# (<SPECIAL_k>) and every one goes into the special-token matcher; published
# files have 1000
MAX_SPECIAL = 1 << 16


def _int(value: Any, what: str, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_IDS:
        raise FormatError(f"{path}: not a valid tekken.json: {what} must be an integer from 0 to {MAX_IDS}, got {value!r:.60}")
    return value


def parse(d: Any, path: str) -> Dict[str, Any]:
    """Check a parsed ``tekken.json`` as mistral_common does and return
    ``{"pattern", "tokens": {id: bytes}, "special_tokens": {text: id}}``.
    Every refusal names the file and the field.

    >>> parse({"config": {}, "vocab": []}, "t.json")
    Traceback (most recent call last):
    ...
    bytepair.errors.FormatError: t.json: not a valid tekken.json: config.pattern must be a string
    """
    if not isinstance(d, dict) or not isinstance(d.get("config"), dict) or not isinstance(d.get("vocab"), list):
        raise FormatError(f"{path}: not a tekken.json: it needs a 'config' object and a 'vocab' list")
    cfg = d["config"]
    pattern = cfg.get("pattern")
    if not isinstance(pattern, str):
        raise FormatError(f"{path}: not a valid tekken.json: config.pattern must be a string")
    vocab_size = _int(cfg.get("default_vocab_size"), "config.default_vocab_size", path)
    n_special = _int(cfg.get("default_num_special_tokens"), "config.default_num_special_tokens", path)
    if n_special > MAX_SPECIAL:
        raise FormatError(f"{path}: not a valid tekken.json: config.default_num_special_tokens is {n_special}; "
                          f"at most {MAX_SPECIAL} special tokens are read")
    vocab: List[Any] = d["vocab"]
    if vocab_size < n_special or vocab_size > len(vocab) + n_special:
        raise FormatError(
            f"{path}: inconsistent counts: default_vocab_size {vocab_size} must be between "
            f"default_num_special_tokens {n_special} and that plus the vocab's {len(vocab)} tokens"
        )
    specials_raw = d.get("special_tokens")
    if specials_raw is None:
        names = list(DEPRECATED_SPECIAL_TOKENS)
    else:
        if not isinstance(specials_raw, list):
            raise FormatError(f"{path}: not a valid tekken.json: special_tokens must be a list")
        names = []
        for k, t in enumerate(specials_raw):
            if not isinstance(t, dict) or not isinstance(t.get("token_str"), str) or t.get("rank") != k:
                raise FormatError(f"{path}: not a valid tekken.json: special_tokens[{k}] must have rank {k} and a token_str")
            names.append(t["token_str"])
    if len(names) > n_special:
        raise FormatError(f"{path}: inconsistent counts: {len(names)} special tokens listed but "
                          f"default_num_special_tokens is {n_special}")
    names += [SPECIAL_TOKEN_TEMPLATE.format(id=i) for i in range(len(names), n_special)]
    specials: Dict[str, int] = {}
    for i, name in enumerate(names):
        if name in specials:
            raise FormatError(f"{path}: not a valid tekken.json: special token {name!r} is listed twice")
        specials[name] = i
    inner = vocab_size - n_special
    tokens: Dict[int, bytes] = {}
    seen: Dict[bytes, int] = {}
    for i, t in enumerate(vocab[:inner]):
        if not isinstance(t, dict) or t.get("rank") != i or not isinstance(t.get("token_bytes"), str):
            raise FormatError(f"{path}: not a valid tekken.json: vocab[{i}] must have rank {i} and token_bytes")
        try:
            b = binascii.a2b_base64(t["token_bytes"])
        except (binascii.Error, ValueError):
            raise FormatError(f"{path}: not a valid tekken.json: vocab[{i}].token_bytes is not base64") from None
        if i < 256 and b != bytes([i]):
            raise FormatError(f"{path}: not a valid tekken.json: vocab[{i}] must be the byte 0x{i:02X}")
        if b in seen:
            raise FormatError(f"{path}: not a valid tekken.json: vocab[{i}] repeats vocab[{seen[b]}] ({b!r:.40})")
        seen[b] = i
        tokens[i + n_special] = b
    return {"pattern": pattern, "tokens": tokens, "special_tokens": specials}


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """``Tokenizer.load(path, format="tekken")``: a byte model with
    mistral_common's ids (see the module's description). ``pattern`` and
    ``special_tokens`` override the file's."""
    path = os.fspath(path)
    text = decode_text(read_model_bytes(path), path, "tekken.json")
    info = parse(parse_json(text, path, "not a valid tekken.json: "), path)
    specials = dict(special_tokens) if special_tokens is not None else info["special_tokens"]
    try:
        spec = from_byte_vocab(info["tokens"], pattern or info["pattern"], specials)
        # mistral_common's bos_id is the special token <s>; its encode never matches special-token text
        return checked(replace(spec, prefix_tokens=("<s>",) if "<s>" in specials else (), match_special_text=False,
                               specials_apart=True))
    except FormatError:
        raise
    except BytepairError as e:
        raise FormatError(f"{path}: {e}") from None


def save(tok: Any, path: str) -> None:
    """Writing ``tekken.json`` is not supported (save as ``tiktoken`` or ``hf``)."""
    raise FormatError("bytepair does not write tekken.json files; save with format='hf' or 'tiktoken'")
