"""A ``transformers`` tokenizer folder: what ``AutoTokenizer.from_pretrained``
loads.

The folder holds ``tokenizer.json`` (bytepair's Hugging Face export,
:mod:`bytepair.formats.hf`), ``tokenizer_config.json`` (``tokenizer_class``
``PreTrainedTokenizerFast``, the special-token roles, ``model_max_length``,
``chat_template``, ``clean_up_tokenization_spaces: false`` so that decoding
gives bytepair's text) and ``special_tokens_map.json`` (the roles again, as
older ``transformers`` versions read them). A role names one of the
tokenizer's special tokens by its text; the ids ``transformers`` reports
(``bos_token_id`` ...) are then bytepair's ids. No post-processor is written:
``AutoTokenizer(text)["input_ids"]`` equals ``tok.encode(text)`` with no BOS
added (add it yourself, or through the chat template).

Each file is written atomically, and everything is checked before the first
is written, so a refused tokenizer leaves the folder as it was.

>>> import bytepair, json, os, tempfile
>>> tok = bytepair.Tokenizer.train("hello world " * 5, vocab_size=270, special_tokens=["<s>", "</s>"])
>>> folder = os.path.join(tempfile.mkdtemp(), "tok")
>>> save(tok, folder, bos="<s>", eos="</s>")
>>> sorted(os.listdir(folder))
['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
>>> json.load(open(os.path.join(folder, "special_tokens_map.json")))
{'bos_token': '<s>', 'eos_token': '</s>'}
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Mapping, Optional

from bytepair._io import atomic_write_text
from bytepair.errors import FormatError
from bytepair.formats import hf
from bytepair.formats.gguf import check_decoding_kept

ROLES = ("bos", "eos", "pad", "unk")
# transformers' VERY_LARGE_INTEGER: "no limit"
NO_LIMIT = int(1e30)


def _roles(tok: Any, given: Mapping[str, Optional[str]]) -> Dict[str, str]:
    """``{"bos_token": text, ...}`` for the roles given; each must be a special token."""
    out = {}
    for role in ROLES:
        text = given.get(role)
        if text is None and role == "unk":
            text = getattr(tok, "unk_token", None)
        if text is None:
            continue
        if not isinstance(text, str) or text not in tok.special_tokens:
            known = ", ".join(repr(t) for t in sorted(tok.special_tokens)) or "none"
            raise FormatError(f"{role}={text!r} is not one of the tokenizer's special tokens (it has {known})")
        out[f"{role}_token"] = text
    return out


def config(tok: Any, *, bos: Optional[str] = None, eos: Optional[str] = None, pad: Optional[str] = None,
           unk: Optional[str] = None, chat_template: Optional[str] = None,
           model_max_length: Optional[int] = None) -> Dict[str, Any]:
    """The ``tokenizer_config.json`` content (a dict).

    >>> import bytepair
    >>> tok = bytepair.Tokenizer.train("abc", special_tokens=["<|endoftext|>"])
    >>> c = config(tok, eos="<|endoftext|>", model_max_length=1024)
    >>> c["tokenizer_class"], c["eos_token"], c["model_max_length"]
    ('PreTrainedTokenizerFast', '<|endoftext|>', 1024)
    """
    if model_max_length is not None and (isinstance(model_max_length, bool) or not isinstance(model_max_length, int)
                                         or model_max_length < 1):
        raise FormatError(f"model_max_length must be a positive integer, got {model_max_length!r}")
    if chat_template is not None and not isinstance(chat_template, str):
        raise FormatError(f"chat_template must be a string (a Jinja template), got {type(chat_template).__name__}")
    roles = _roles(tok, {"bos": bos, "eos": eos, "pad": pad, "unk": unk})
    out: Dict[str, Any] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": NO_LIMIT if model_max_length is None else model_max_length,
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": {
            str(id_): {"content": text, "lstrip": False, "normalized": False, "rstrip": False,
                       "single_word": False, "special": True}
            for text, id_ in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
        },
    }
    out.update(roles)
    if chat_template is not None:
        out["chat_template"] = chat_template
    return out


def save(tok: Any, folder: str, *, bos: Optional[str] = None, eos: Optional[str] = None, pad: Optional[str] = None,
         unk: Optional[str] = None, chat_template: Optional[str] = None,
         model_max_length: Optional[int] = None) -> None:
    """Write ``tok`` as a ``transformers`` folder (created if missing); see
    the module's documentation."""
    folder = os.fspath(folder)
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise FormatError(f"{folder}: exists and is not a folder (a transformers tokenizer is a folder)")
    check_decoding_kept(tok, "a transformers folder")
    tokenizer_json = hf.dumps(tok)  # refuses what Hugging Face cannot hold, before anything is written
    cfg = config(tok, bos=bos, eos=eos, pad=pad, unk=unk, chat_template=chat_template,
                 model_max_length=model_max_length)
    special_map = {k: cfg[k] for k in (f"{r}_token" for r in ROLES) if k in cfg}
    os.makedirs(folder, exist_ok=True)
    atomic_write_text(os.path.join(folder, "tokenizer.json"), tokenizer_json)
    atomic_write_text(os.path.join(folder, "tokenizer_config.json"), json.dumps(cfg, ensure_ascii=False, indent=2) + "\n")
    atomic_write_text(os.path.join(folder, "special_tokens_map.json"),
                      json.dumps(special_map, ensure_ascii=False, indent=2) + "\n")


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """Read the ``tokenizer.json`` of a ``transformers`` folder (the roles are
    not kept: bytepair has special tokens, not roles)."""
    path = os.fspath(path)
    target = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
    return hf.load(target, pattern=pattern, special_tokens=special_tokens)
