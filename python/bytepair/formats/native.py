"""The native format: one UTF-8 JSON file, versioned, holding the merges in
order (as pairs of ids), the pre-tokenizer, marker settings and special
tokens. ``load(save(t))`` encodes exactly like ``t``.

>>> import bytepair, tempfile, os
>>> tok = bytepair.Tokenizer.train("a b ab ab", num_merges=1)
>>> path = os.path.join(tempfile.mkdtemp(), "tok.json")
>>> save(tok, path); bytepair.Tokenizer.from_spec(load(path)).merges == tok.merges
True
"""

from __future__ import annotations

import base64
import json
from typing import Any, Mapping, Optional

from bytepair._io import atomic_write_text, parse_json, read_model_bytes
from bytepair.formats.magic import decode_text
from bytepair.errors import BytepairError, FormatError
from bytepair.patterns import resolve_pattern
from bytepair.spec import MERGE_RULES, checked, from_dict

VERSION = 1
MAX_ID = 2**32 - 2


def save(tok: Any, path: str) -> None:
    """Write ``tok`` as native JSON."""
    # no indent: json's C encoder only runs without it (10x faster on big vocabularies)
    atomic_write_text(path, json.dumps(tok.to_dict(), ensure_ascii=False) + "\n")


def _fail(path: str, what: str) -> FormatError:
    return FormatError(f"{path}: not a valid bytepair tokenizer file: {what}")


def _is_id(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_ID


def _check(path: str, d: Any) -> None:
    """Validate the structure so that building never meets a surprise."""
    if not isinstance(d, dict):
        raise _fail(path, "the top level must be a JSON object")
    version = d.get("bytepair")
    if version != VERSION:
        raise _fail(path, f"field 'bytepair' must be {VERSION} (the format version), got {version!r}")
    if d.get("model") not in ("byte", "char"):
        raise _fail(path, f"field 'model' must be 'byte' or 'char', got {d.get('model')!r}")
    if "pattern" not in d:
        raise _fail(path, "field 'pattern' is missing (a regex string, or null for str.split())")
    if d.get("pattern") is not None and not isinstance(d.get("pattern"), str):
        raise _fail(path, "field 'pattern' must be a string or null")


    if "merges" in d:
        merges = d["merges"]
        if not isinstance(merges, list):
            raise _fail(path, "field 'merges' must be a list of [left id, right id]")
        for k, m in enumerate(merges):
            if not (isinstance(m, list) and len(m) == 2 and all(_is_id(x) for x in m)):
                raise _fail(path, f"merge {k + 1} must be [left id, right id], got {m!r}")
        counts = d.get("merge_counts", [])
        if not isinstance(counts, list) or not all(
            c is None or isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts
        ):
            raise _fail(path, "field 'merge_counts' must be a list of non-negative integers (or nulls)")
        ids = d.get("merge_ids")
        if ids is not None and (not isinstance(ids, list) or len(ids) != len(merges) or not all(_is_id(i) for i in ids)):
            raise _fail(path, "field 'merge_ids' must be a list of ids, one per merge")
    elif "tokens_base64" in d:
        toks = d["tokens_base64"]
        if not isinstance(toks, list) or not all(t is None or isinstance(t, str) for t in toks):
            raise _fail(path, "field 'tokens_base64' must be a list of base64 strings or nulls")
        for i, t in enumerate(toks):
            try:
                if t is not None:
                    base64.b64decode(t, validate=True)
            except ValueError:  # binascii.Error, or a non-ASCII string
                raise _fail(path, f"tokens_base64[{i}] is not valid base64: {t[:40]!r}") from None
    else:
        raise _fail(path, "it has neither 'merges' nor 'tokens_base64'")
    if d["model"] == "char":
        base = d.get("base")
        if not isinstance(base, list) or not all(isinstance(s, str) and s for s in base):
            raise _fail(path, "field 'base' must be a list of non-empty strings")
        for key in ("end_of_word", "unk_token"):
            if d.get(key) is not None and not isinstance(d.get(key), str):
                raise _fail(path, f"field {key!r} must be a string or null")
        for key in ("end_of_word_fused", "byte_fallback"):
            if not isinstance(d.get(key, False), bool):
                raise _fail(path, f"field {key!r} must be true or false")
    if d.get("merge_rule", "in-order") not in MERGE_RULES:
        raise _fail(path, f"field 'merge_rule' must be 'in-order' or 'lowest-rank', got {d.get('merge_rule')!r}")
    if d.get("merge_rule", "in-order") != "in-order" and d["model"] != "char":
        raise _fail(path, "field 'merge_rule' is only allowed for char models")
    if not isinstance(d.get("add_prefix_space", False), bool):
        raise _fail(path, "field 'add_prefix_space' must be true or false")
    if d.get("add_prefix_space") and d["model"] != "byte":
        raise _fail(path, "field 'add_prefix_space' is only allowed for byte models")
    specials = d.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(isinstance(k, str) and k and _is_id(v) for k, v in specials.items()):
        raise _fail(path, "field 'special_tokens' must map non-empty strings to ids")
    for key in ("prefix_tokens", "suffix_tokens"):
        added = d.get(key, [])
        if not isinstance(added, list) or not all(isinstance(t, str) and t in specials for t in added):
            raise _fail(path, f"field {key!r} must be a list of special tokens")
    for flag, default in (("match_special_text", True), ("specials_apart", False)):
        if not isinstance(d.get(flag, default), bool):
            raise _fail(path, f"field {flag!r} must be true or false")
    _check_skips(path, d)


def _check_skips(path: str, d: Mapping[str, Any]) -> None:
    skips = d.get("decode_skips", [])
    if not isinstance(skips, list) or not all(_is_id(i) for i in skips):
        raise _fail(path, "field 'decode_skips' must be a list of ids")


def load(path: str, pattern: Optional[str] = None, special_tokens: Optional[Mapping[str, int]] = None) -> Any:
    """Read a native JSON tokenizer file; ``pattern`` and ``special_tokens``
    override the stored ones when given."""
    text = decode_text(read_model_bytes(path), path, "bytepair JSON")
    d = parse_json(text, path, "not a valid bytepair tokenizer file: ")
    if isinstance(d, dict) and d.get("bytepair") == VERSION and d.get("model") == "pipeline":
        # a Hugging Face pipeline (see docs/decisions.md)
        if pattern is not None or special_tokens is not None:
            raise _fail(path, "pattern= and special_tokens= do not apply to a pipeline")
        if not isinstance(d.get("pipeline"), dict):
            raise _fail(path, "field 'pipeline' must be a tokenizer.json object")
        _check_skips(path, d)
        if not isinstance(d.get("chat_template", ""), str):
            raise _fail(path, "field 'chat_template' must be a string")
        flags = d.get("llama_decode", [False, False])
        if not isinstance(flags, list) or len(flags) not in (2, 3) or not all(isinstance(x, bool) for x in flags):
            raise _fail(path, "field 'llama_decode' must be a list of 2 or 3 booleans")
        return checked(from_dict(d, path))  # with the GGUF file's chat template and llama.cpp's decoding
    _check(path, d)
    if pattern is not None:
        d["pattern"] = resolve_pattern(pattern)
    if special_tokens is not None:
        d["special_tokens"] = dict(special_tokens)
    try:
        spec = from_dict(d)
        # the parsed file (its lists of merges take more memory than the core's tables) goes before the core
        # is built: the peak of a big file's load is then the description plus the core, not the JSON too
        del d, text
        return checked(spec)
    except BytepairError as e:
        raise FormatError(f"{path}: {e}") from None
