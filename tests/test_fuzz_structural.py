"""Hostile model files, structure-aware: every loader is fed valid files
whose *structure* was mutated (the byte-level mutations are in
test_fuzz_loaders.py). JSON files are parsed and a value anywhere is
replaced by one of a wrong type, keys are deleted or duplicated; line files
lose, repeat, swap or gain lines and fields; and each format gets the
mutations that make sense for it: duplicate tokens (one token two ids, two
tokens one id), merges of unknown tokens or ids, merges made out of order,
merges that use their own result or each other's (cycles), huge declared
ids and counts, deep nesting, very long lines, empty tokens, NUL, invalid
UTF-8 and lone surrogates.

Every input either loads and is then usable (a sample encodes, decodes back
to itself for byte models, and the native description rebuilds the same
tokenizer) or raises a ``BytepairError`` whose message names the file (and
the line, for the line formats). Never another exception, never a hang
(``deadline`` and a watchdog), never memory out of proportion to the file:
the huge declared sizes run in a child process limited to 2 GB of address
space. Loading never executes code.

``FUZZ_EXAMPLES`` sets the number of random inputs per loader variant
(default 40); the terminal summary says how many inputs each loader got
(tests/conftest.py). Coverage-guided fuzzing with atheris reuses ``check``:
fuzz/fuzz_loaders.py, run briefly by test_fuzz_atheris.py.
"""

from __future__ import annotations

import base64
import collections
import faulthandler
import functools
import gzip
import json
import os
import pathlib
import pickle
import re
import resource
import subprocess
import sys
import warnings
from datetime import timedelta
from typing import Any, Callable, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from bytepair import BytepairError, Tokenizer
from bytepair.counts import load_counts, read_header
from bytepair.formats.hf import HF_GPT2_PATTERN
from bytepair.patterns import PRESETS

from test_fuzz_loaders import _valid_files

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
# shrinking inputs of up to 10 MB takes minutes: the failing input is printed (its first 3000 bytes) unshrunk;
# FUZZ_SHRINK=1 shrinks it
PHASES = [p for p in Phase if p != Phase.shrink or os.environ.get("FUZZ_SHRINK")]
SAMPLE = "the cat sat on the mat, naïve café 🙂<|endoftext|> x\u00a0y\n\tz 12345"
DEEP = 10**5  # levels of nesting
LONG = 10 * 2**20  # characters of the "very long" token / line (explicit cases)
LONG_RANDOM = 2**20  # the same in random inputs, where it is drawn often
HUGE_IDS = [2**32 - 2, 2**32 - 1, 2**32, 2**31, 10**9, 10**8, 2**64, 10**12, 10**30]
HUGE_NUMBER = "9" * 5000  # Python's int() reads at most 4300 digits
SENTINEL = "bytepair-fuzz-executed"
PAYLOAD = f"__import__('os').system('touch {SENTINEL}')"


class _Evil:
    def __reduce__(self):
        return (os.system, (f"touch {SENTINEL}",))


PICKLE = pickle.dumps(_Evil())  # a pickle that would run a command if it were ever unpickled
WEIRD_STRINGS = ["", "\x00", "a\x00b", "\ud800", "\udfff", "x\ud83d", "\ufffd", " ", "\n", "\\", "Ġ", "Ġthe", "é", "€",
                 "</w>", "th", "the", "<|endoftext|>", PAYLOAD, PICKLE.decode("latin-1")]

# which loader each variant of a valid file goes through; variants are the
# files of test_fuzz_loaders._valid_files plus a char model and a vocabulary
# of ranks in the native format and a char model in tokenizer.json
LOADER = {
    "bytepair": "bytepair", "bytepair-char": "bytepair", "bytepair-ranks": "bytepair",
    "hf": "hf", "hf-char": "hf", "tiktoken": "tiktoken", "gpt2-vocab": "gpt2", "gpt2-merges": "gpt2",
    "subword-nmt": "subword-nmt", "counts": "counts", "gguf": "gguf",
}
FILE_NAME = {
    "bytepair": "model.json", "bytepair-char": "model.json", "bytepair-ranks": "model.json",
    "hf": "tokenizer.json", "hf-char": "tokenizer.json", "tiktoken": "model.tiktoken",
    "gpt2-vocab": "vocab.json", "gpt2-merges": "merges.txt", "subword-nmt": "codes.txt", "counts": "words.counts",
    "gguf": "model.gguf",
}
LINE_FILES = {"model.tiktoken", "merges.txt", "codes.txt", "words.counts"}
# whole-file errors of line formats, which have no line to name (no tokens; a file whose magic number names it)
NO_LINE = re.compile(r"holds no tokens|not a [\w.-]+( [\w.-]+)? file: it is an? ")
# pre-tokenizer patterns whose pieces cover every text (others may leave text out, as tiktoken does)
COVERING = {*PRESETS.values(), HF_GPT2_PATTERN, r"[\s\S]+"}


def covers_every_text(pattern: str) -> bool:
    r"""A preset, or a Split(Isolated) import: ``(?:p)|(?:(?!(?:p))[\s\S])+``."""
    return pattern in COVERING or pattern.startswith("(?:") and pattern.endswith(r"))[\s\S])+")


# ---------------------------------------------------------------- valid inputs


def build_valid(root: pathlib.Path) -> Dict[str, Dict[str, bytes]]:
    """variant -> {file name: bytes}; gpt2 variants hold both files."""
    files = _valid_files(root)
    char = Tokenizer.load(str(files["subword-nmt"]), format="subword-nmt")
    char.save(str(root / "char.json"))
    char.save(str(root / "char-tokenizer.json"), format="hf")
    ranks = Tokenizer.load(str(files["tiktoken"]), pattern="cl100k", special_tokens={"<|endoftext|>": 400})
    ranks.save(str(root / "ranks.json"))
    out = {name: {FILE_NAME[name]: path.read_bytes()} for name, path in files.items() if not name.startswith("gpt2")}
    pair = {"vocab.json": files["gpt2-vocab"].read_bytes(), "merges.txt": files["gpt2-merges"].read_bytes()}
    out["gpt2-vocab"] = out["gpt2-merges"] = pair
    out["bytepair-char"] = {"model.json": (root / "char.json").read_bytes()}
    out["bytepair-ranks"] = {"model.json": (root / "ranks.json").read_bytes()}
    out["hf-char"] = {"tokenizer.json": (root / "char-tokenizer.json").read_bytes()}
    small = Tokenizer.train("hello world, it's 2024 " * 20, num_merges=20, pattern="gpt2", special_tokens=["<|endoftext|>"])
    small.save(str(root / "model.gguf"), format="gguf")
    out["gguf"] = {"model.gguf": (root / "model.gguf").read_bytes()}
    return out


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_valid(tmp_path_factory.mktemp("valid"))


# ---------------------------------------------------------------- loading and using one input


def write(variant: str, folder: pathlib.Path, files: Dict[str, bytes]) -> Tuple[str, List[str]]:
    """Writes ``files`` into ``folder``; returns (what to load, paths written)."""
    if LOADER[variant] == "gpt2":
        target = folder / "gpt2"
        target.mkdir(exist_ok=True)
        for name, data in files.items():
            (target / name).write_bytes(data)
        return str(target), [str(target / name) for name in files]
    (name, data), = files.items()
    (folder / name).write_bytes(data)
    return str(folder / name), [str(folder / name)]


def load(variant: str, path: str, detect: bool = False) -> Any:
    loader = LOADER[variant]
    if loader == "counts":
        return load_counts(path)
    # a .tiktoken file holds no pattern, and a mutated one is no published file: pass the pattern it was made with
    pattern = "cl100k" if loader == "tiktoken" else None
    return Tokenizer.load(path, format=None if detect else loader, pattern=pattern)


def use(variant: str, obj: Any, path: str) -> None:
    """What loads must be usable."""
    if LOADER[variant] == "counts":
        header = read_header(path)
        items = obj.items()
        assert len(items) == len(obj) and all(isinstance(w, str) and c > 0 for w, c in items)
        # training from the file: its own pattern and special tokens
        for model, size in (("char", {"num_merges": 8}), ("byte", {"vocab_size": 266})):
            if model == "byte" and header.get("pattern") is None:
                continue
            try:
                tok = Tokenizer.train_from_counts(path, model=model, **size)
            except BytepairError:
                continue
            use_tokenizer(tok)
        return
    use_tokenizer(obj)


def use_tokenizer(tok: Tokenizer) -> None:
    assert isinstance(tok, Tokenizer)
    vocab = tok.vocab()
    assert len(vocab) <= tok.n_vocab
    tok.merges  # derived for vocabularies of ranks
    try:
        ids = tok.encode(SAMPLE, allowed_special="all")
    except BytepairError:  # e.g. a byte or character without a token: an EncodeError
        ids = None
    if ids is not None:
        assert all(0 <= i < tok.n_vocab for i in ids)
        # two special texts may share an id (tiktoken's o200k_harmony does): that id decodes to one of them
        shared = len(set(tok.special_tokens.values())) < len(tok.special_tokens)
        if tok.model == "byte" and covers_every_text(tok.pattern) and not shared:
            assert tok.decode(ids) == SAMPLE, "a byte model must decode what it encoded"
        else:
            tok.decode(ids)
    # the native description rebuilds the same tokenizer
    again = Tokenizer.from_dict(json.loads(json.dumps(tok.to_dict())))
    assert again.vocab() == vocab
    if ids is not None:
        assert again.encode(SAMPLE, allowed_special="all") == ids


COUNTS: collections.Counter = collections.Counter()
OUTCOMES: collections.Counter = collections.Counter()


def check(variant: str, folder: pathlib.Path, files: Dict[str, bytes], detect: bool = False) -> str:
    """Loads one input: 'loaded' (and used) or 'rejected' (a BytepairError
    naming the file); any other exception propagates."""
    COUNTS[LOADER[variant]] += 1
    target, paths = write(variant, folder, files)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            obj = load(variant, target, detect)
        except BytepairError as e:
            message = str(e)
            named = [p for p in paths if p in message]
            assert named, f"{type(e).__name__} does not name the file: {message[:500]}"
            if not detect and os.path.basename(named[0]) in LINE_FILES:
                assert re.search(r"\bline \d+", message) or NO_LINE.search(message), (
                    f"{type(e).__name__} names no line: {message[:500]}"
                )
            OUTCOMES[variant, "rejected"] += 1
            return "rejected"
        use(variant, obj, target)
    OUTCOMES[variant, "loaded"] += 1
    return "loaded"


# ---------------------------------------------------------------- JSON structure


class Raw(str):
    """JSON text written as it is (deep nesting, NaN, 1e400)."""


class DupKeys:
    """A JSON object written with repeated keys (``json`` keeps the last)."""

    def __init__(self, pairs: List[Tuple[str, Any]]) -> None:
        self.pairs = pairs


def dump(x: Any, ascii: bool) -> str:
    if isinstance(x, Raw):
        return str(x)
    if isinstance(x, DupKeys):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=ascii)}: {dump(v, ascii)}" for k, v in x.pairs) + "}"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=ascii)}: {dump(v, ascii)}" for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(dump(v, ascii) for v in x) + "]"
    return json.dumps(x, ensure_ascii=ascii)


def encode_json(x: Any, ascii: bool) -> bytes:
    # lone surrogates: escaped with ascii=True, else written as (invalid) UTF-8 bytes
    return dump(x, ascii).encode("utf-8", "surrogatepass")


def node_paths(x: Any, path: Tuple = ()) -> List[Tuple]:
    out = [path]
    if isinstance(x, dict):
        for k, v in x.items():
            out += node_paths(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += node_paths(v, path + (i,))
    return out


def get(x: Any, path: Tuple) -> Any:
    for p in path:
        x = x[p]
    return x


def put(root: Any, path: Tuple, value: Any) -> Any:
    if not path:
        return value
    get(root, path[:-1])[path[-1]] = value
    return root


def deep_nest(kind: str) -> Raw:
    if kind == "list":
        return Raw("[" * DEEP + "]" * DEEP)
    return Raw('{"a": ' * DEEP + "1" + "}" * DEEP)


def hostile_value(long: int = LONG_RANDOM) -> st.SearchStrategy:
    return st.one_of(
        st.sampled_from([None, True, False, 0, -1, 1, 1.5, -0.0, 1e308, -(2**63), -(10**30)] + HUGE_IDS),
        st.sampled_from(WEIRD_STRINGS),
        st.sampled_from([Raw("NaN"), Raw("-Infinity"), Raw("1e400"), Raw(HUGE_NUMBER), Raw("-" + HUGE_NUMBER),
                         [], {}, [[]], [None, None], {"": 0}, {"type": None}, [256, 256], [-1, 2**40]]),
        st.sampled_from(["list", "dict"]).map(deep_nest),
        st.integers(),
        st.text(max_size=6),
        st.lists(st.integers(-2, 300), max_size=3),
        st.just("a" * long),
    )


def json_generic(data: st.DataObject, root: Any) -> Any:
    """One generic mutation of a parsed JSON document."""
    paths = node_paths(root)
    op = data.draw(st.sampled_from(["replace", "replace", "delete", "dup-key", "rename-key", "add-key",
                                    "list-dup", "list-swap", "list-append", "list-delete"]), label="json op")
    path = data.draw(st.sampled_from(paths), label="path")
    if op == "replace":
        return put(root, path, data.draw(hostile_value(), label="value"))
    containers = [p for p in paths if isinstance(get(root, p), (dict, list)) and get(root, p)]
    dicts = [p for p in containers if isinstance(get(root, p), dict)]
    lists = [p for p in containers if isinstance(get(root, p), list)]
    if op in ("delete", "dup-key", "rename-key", "add-key") and dicts or not lists:
        if not dicts:
            return root
        where = data.draw(st.sampled_from(dicts), label="object")
        obj = get(root, where)
        key = data.draw(st.sampled_from(sorted(obj)), label="key")
        if op == "delete":
            del obj[key]
        elif op == "dup-key":
            value = data.draw(st.one_of(st.sampled_from(list(obj.values())), hostile_value()), label="second value")
            pairs = list(obj.items())
            pairs.insert(data.draw(st.integers(0, len(pairs))), (key, value))
            return put(root, where, DupKeys(pairs))
        elif op == "rename-key":
            new = data.draw(st.one_of(st.sampled_from(WEIRD_STRINGS), st.sampled_from(sorted(obj))), label="new key")
            value = obj.pop(key)
            obj[new] = value
        else:
            obj[data.draw(st.sampled_from(WEIRD_STRINGS + ["dropout", "merge_ids", "tokens_base64", "base"]))] = (
                data.draw(hostile_value(), label="value"))
        return root
    where = data.draw(st.sampled_from(lists), label="list")
    seq = get(root, where)
    i = data.draw(st.integers(0, len(seq) - 1), label="index")
    j = data.draw(st.integers(0, len(seq) - 1), label="index 2")
    if op == "list-dup":
        seq.insert(j, seq[i])
    elif op == "list-swap":
        seq[i], seq[j] = seq[j], seq[i]
    elif op == "list-append":
        seq.append(data.draw(hostile_value(), label="value"))
    else:
        del seq[i]
    return root


# ---------------------------------------------------------------- format-aware JSON mutations


def pick_id(data: st.DataObject, near: List[int]) -> int:
    return data.draw(st.one_of(st.sampled_from(near), st.sampled_from(HUGE_IDS[:6])), label="id")


def native_mutation(data: st.DataObject, d: Dict[str, Any]) -> None:
    """Merges of unknown ids, cycles, out of order, duplicate or colliding
    ids, special tokens with hostile ids or names, base symbols."""
    specials = d.setdefault("special_tokens", {})
    if "tokens_base64" in d:
        toks = d["tokens_base64"]
        k = data.draw(st.integers(0, len(toks) - 1), label="token")
        op = data.draw(st.sampled_from(["null", "bad-base64", "same-token", "empty", "long", "many-nulls", "special"]))
        if op == "null":
            toks[k] = None
        elif op == "bad-base64":
            toks[k] = data.draw(st.sampled_from(["!!!", "YQ", "YQ===", "Y Q==", "=", "YQ==YQ==", "\ud800", "YQ==\n"]))
        elif op == "same-token":
            toks[k] = toks[data.draw(st.integers(0, len(toks) - 1))]
        elif op == "empty":
            toks[k] = ""
        elif op == "long":
            toks[k] = base64.b64encode(b"ab" * (LONG_RANDOM // 2)).decode()
        elif op == "many-nulls":
            toks.extend([None] * data.draw(st.sampled_from([10**3, 10**5])))
        else:
            specials[data.draw(st.sampled_from(WEIRD_STRINGS + ["<s>"]))] = pick_id(data, [k, len(toks), 399])
        return
    merges = d["merges"]
    first = 256 if d["model"] == "byte" else len(d["base"])
    n = len(merges)
    k = data.draw(st.integers(0, n - 1), label="merge")
    j = data.draw(st.integers(0, n - 1), label="other merge")
    side = data.draw(st.integers(0, 1), label="side")
    op = data.draw(st.sampled_from(["unknown", "self", "mutual", "later", "swap", "duplicate", "merge-ids",
                                    "special", "special-same-id", "base", "marker"]), label="native op")
    if op == "unknown":
        merges[k][side] = pick_id(data, [first + k, first + n, first + n + 7, 299, 399])
    elif op == "self":  # A + B = A: a merge of its own result
        merges[k] = [first + k, first + k] if data.draw(st.booleans()) else [first + k, merges[k][1]]
    elif op == "mutual":  # k uses j's result and j uses k's
        merges[k][0], merges[j][1] = first + j, first + k
    elif op == "later":  # uses a token only a later merge makes
        merges[k][side] = first + data.draw(st.integers(k, n - 1))
    elif op == "swap":
        merges[k], merges[j] = merges[j], merges[k]
    elif op == "duplicate":  # the same pair twice: one text, two ids
        merges.insert(j, list(merges[k]))
        if "merge_counts" in d:
            d["merge_counts"].insert(j, 1)
    elif op == "merge-ids":
        ids = list(range(first, first + n))
        how = data.draw(st.sampled_from(["duplicate", "base", "decreasing", "huge", "short", "gap"]))
        if how == "duplicate":
            ids[k] = ids[j]
        elif how == "base":
            ids[k] = data.draw(st.integers(0, first - 1))
        elif how == "decreasing":
            ids.reverse()
        elif how == "huge":
            ids[k:] = [pick_id(data, [first + n]) + i for i in range(n - k)]
        elif how == "short":
            ids.pop()
        else:
            ids[k:] = [i + 1000 for i in ids[k:]]
        d["merge_ids"] = ids
    elif op == "special":
        specials[data.draw(st.sampled_from(WEIRD_STRINGS + ["<s>", "t"]))] = pick_id(
            data, [first + k, first + n, first + n + 1, 0, 97])
    elif op == "special-same-id":
        specials["<a>"] = specials["<b>"] = first + n + 3
    elif op == "base" and "base" in d:
        base = d["base"]
        i = data.draw(st.integers(0, len(base) - 1))
        base[i] = data.draw(st.one_of(st.sampled_from(base), st.sampled_from(WEIRD_STRINGS)))
    elif op == "marker" and d["model"] == "char":
        key = data.draw(st.sampled_from(["end_of_word", "unk_token", "byte_fallback", "end_of_word_fused"]))
        d[key] = data.draw(st.one_of(st.sampled_from(WEIRD_STRINGS + ["t", "e</w>"]), st.booleans()))


def hf_vocab_mutation(data: st.DataObject, vocab: Dict[str, int]) -> Any:
    """One token two ids (repeated key), two tokens one id, hostile ids,
    renamed, empty or missing tokens. Returns the (possibly replaced) vocab."""
    tokens = list(vocab)
    t = data.draw(st.sampled_from(tokens), label="token")
    u = data.draw(st.sampled_from(tokens), label="other token")
    op = data.draw(st.sampled_from(["same-id", "two-ids", "huge-id", "rename", "delete", "swap-ids", "empty"]))
    if op == "same-id":
        vocab[t] = vocab[u]
    elif op == "two-ids":
        pairs = list(vocab.items()) + [(t, data.draw(st.sampled_from([len(vocab) + 5, vocab[u]] + HUGE_IDS[:5])))]
        return DupKeys(pairs)
    elif op == "huge-id":
        vocab[t] = data.draw(st.sampled_from(HUGE_IDS + [len(vocab), len(vocab) + 1000]))
    elif op == "rename":
        vocab[data.draw(st.sampled_from(WEIRD_STRINGS))] = vocab.pop(t)
    elif op == "delete":
        del vocab[t]
    elif op == "swap-ids":  # the ids of merged tokens no longer grow with the merge order
        vocab[t], vocab[u] = vocab[u], vocab[t]
    else:
        vocab[""] = len(vocab)
    return vocab


def hf_mutation(data: st.DataObject, d: Dict[str, Any]) -> None:
    model = d["model"]
    merges = model["merges"]
    op = data.draw(st.sampled_from(["vocab", "merge-unknown", "merge-later", "merge-swap", "merge-duplicate",
                                    "merge-legacy", "merge-cycle", "added", "pre-tokenizer"]), label="hf op")
    k = data.draw(st.integers(0, len(merges) - 1), label="merge")
    j = data.draw(st.integers(0, len(merges) - 1), label="other merge")
    side = data.draw(st.integers(0, 1), label="side")
    if op == "vocab":
        model["vocab"] = hf_vocab_mutation(data, model["vocab"])
    elif op == "merge-unknown":
        merges[k][side] = data.draw(st.sampled_from(["zzz", "€", "", "\x00", "\ud800", "Ġ" * 50, "th", "<|endoftext|>"]))
    elif op == "merge-later":  # a token made only by a later merge
        merges[k][side] = "".join(merges[data.draw(st.integers(k, len(merges) - 1))])
    elif op == "merge-swap":
        merges[k], merges[j] = merges[j], merges[k]
    elif op == "merge-duplicate":
        merges.insert(j, list(merges[k]))
    elif op == "merge-legacy":
        merges[k] = data.draw(st.sampled_from([" ".join(merges[k]), "  ".join(merges[k]), "".join(merges[k]),
                                               " ".join(merges[k]) + " x", " "]))
    elif op == "merge-cycle":  # merges of their own result: k uses k's, k and j use each other's
        made_k, made_j = "".join(merges[k]), "".join(merges[j])
        merges[k] = [made_k, merges[k][1]] if data.draw(st.booleans()) else [merges[k][0], made_j]
        merges[j] = [merges[j][0], made_k]
    elif op == "added":
        added = d.setdefault("added_tokens", [])
        entry = {"id": data.draw(st.sampled_from(HUGE_IDS[:6] + [0, len(model["vocab"]), len(model["vocab"]) + 9])),
                 "content": data.draw(st.sampled_from(WEIRD_STRINGS + ["<s>", "<|endoftext|>"] + list(model["vocab"])[:3])),
                 "special": True}
        for opt in ("single_word", "lstrip", "rstrip", "normalized"):
            entry[opt] = data.draw(st.booleans()) if data.draw(st.booleans()) else False
        added.insert(data.draw(st.integers(0, len(added))), entry)
    else:
        regex = data.draw(st.text(alphabet="()[]{}?*+\\|^$.-:<>=!&,pPLNsSdDwWxXzZAbBuk0123456789a'", max_size=24))
        d["pre_tokenizer"] = data.draw(st.sampled_from([
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
            {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Removed", "invert": True},
                {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
            {"type": "Split", "pattern": {"String": regex}, "behavior": "Removed", "invert": True},
            {"type": "WhitespaceSplit"},
        ]))


# ---------------------------------------------------------------- line structure


HOSTILE_LINES = [b"", b" ", b"\t", b"\x00", b"a\x00b c", b"\xff\xfe", b"\xed\xa0\x80 x", b"#version: 0.2",
                 b"#version: 9.9", b"#version:", b"a b c", b"a  b", b" a b", b"a b ", b"= 0", b"YQ== -1",
                 b"YQ== 4294967295", b"YQ== 99999999999999999999", b"1\tword", b"0\tword", b"\tword",
                 b"18446744073709551615\tx", b"\\\\ \\", PAYLOAD.encode(), PICKLE]


def line_generic(data: st.DataObject, lines: List[bytes]) -> List[bytes]:
    op = data.draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "replace", "many", "long",
                                    "crlf", "no-final-newline", "blank"]), label="line op")
    if not lines:
        lines = [b""]
    i = data.draw(st.integers(0, len(lines) - 1), label="line")
    j = data.draw(st.integers(0, len(lines) - 1), label="line 2")
    if op == "delete":
        del lines[i]
    elif op == "duplicate":
        lines.insert(j, lines[i])
    elif op == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif op in ("insert", "replace"):
        new = data.draw(st.one_of(st.sampled_from(HOSTILE_LINES), st.binary(max_size=10)), label="new line")
        if op == "insert":
            lines.insert(j, new)
        else:
            lines[i] = new
    elif op == "many":  # many repeated lines (at most ~10 MB of them: the input must stay a sane size)
        copies = data.draw(st.sampled_from([100, 10**4]))
        lines[i:i] = [lines[j]] * min(copies, 10**7 // (len(lines[j]) + 1) + 1)
    elif op == "long":
        lines.insert(i, b"a" * LONG_RANDOM + b" b")
    elif op == "crlf":
        lines = [line + b"\r" for line in lines]
    elif op == "no-final-newline":
        lines.append(b"\x00NOEOL")  # marker, handled by join_lines
    else:
        lines[i:i] = [b""] * 3
    return lines


def join_lines(lines: List[bytes]) -> bytes:
    if lines and lines[-1] == b"\x00NOEOL":
        return b"\n".join(lines[:-1])
    return b"".join(line + b"\n" for line in lines)


def split_lines(data: bytes) -> List[bytes]:
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


def tiktoken_mutation(data: st.DataObject, lines: List[bytes]) -> List[bytes]:
    """Hostile ranks and tokens; one token two ranks, two tokens one rank."""
    i = data.draw(st.integers(0, len(lines) - 1), label="line")
    j = data.draw(st.integers(0, len(lines) - 1), label="line 2")
    b64, rank = lines[i].split(b" ")
    op = data.draw(st.sampled_from(["rank", "token", "same-token", "same-rank", "payload"]), label="tiktoken op")
    if op == "rank":
        new = data.draw(st.sampled_from([b"4294967294", b"4294967295", b"1000000000000", b"100000000", b"-1", b"+1",
                                         b"1.0", b"0x10", "\uff11".encode(), b"1_0", b"", b"00000000000000000007",
                                         b"9" * 400, HUGE_NUMBER.encode(), b"0" * 30 + b"5"]), label="rank")
        lines[i] = b64 + b" " + new
    elif op == "token":
        new = data.draw(st.sampled_from([b"=", b"", b"YQ", b"YQ===", b"!!!!", b"AA==", b"YWI=YWI=", b"Y\x00Q=",
                                         base64.b64encode(b"\x00\x00"), base64.b64encode("\ud800".encode("utf-8", "surrogatepass"))]))
        lines[i] = new + b" " + rank
    elif op == "same-token":
        lines[i] = lines[j].split(b" ")[0] + b" " + rank
    elif op == "same-rank":
        lines[i] = b64 + b" " + lines[j].split(b" ")[1]
    else:
        lines.append(base64.b64encode(PICKLE) + b" " + str(len(lines) + 5).encode())
    return lines


def merges_mutation(data: st.DataObject, lines: List[bytes], first: int) -> List[bytes]:
    """merges.txt / codes: unknown symbols, a symbol made only later, cycles
    (a merge of its own result; two merges of each other's)."""
    body = list(range(first, len(lines)))
    if not body:
        return lines
    i = data.draw(st.sampled_from(body), label="merge line")
    j = data.draw(st.sampled_from(body), label="other merge line")
    parts = lines[i].decode("utf-8").split(" ")
    if len(parts) != 2:
        return lines
    op = data.draw(st.sampled_from(["unknown", "later", "self", "mutual", "marker", "header"]), label="merges op")
    side = data.draw(st.integers(0, 1))
    if op == "unknown":
        parts[side] = data.draw(st.sampled_from(["zzz", "€", "\x00", "Ġ" * 40, "</w>", "</w></w>", "q</w>", "<|endoftext|>"]))
    elif op == "later":
        later = lines[data.draw(st.sampled_from([b for b in body if b >= i]))].decode("utf-8").replace(" ", "")
        parts[side] = later
    elif op == "self":  # A + B = A
        parts[0] = parts[0] + parts[1]
    elif op == "mutual":
        other = lines[j].decode("utf-8").split(" ")
        if len(other) == 2:
            lines[j] = (other[0] + " " + "".join(parts)).encode("utf-8")
            parts[side] = "".join(other)
    elif op == "marker":
        parts[side] = data.draw(st.sampled_from(["</w>" + parts[side], parts[side] + "</w>", parts[side].replace("</w>", "")]))
    else:
        if first:
            lines[0] = data.draw(st.sampled_from([b"#version: 0.1", b"#version: 0.3", b"#version: 0.2.1", b"#version: x",
                                                  b"#version: 99999999999999999999.2", b"#version: \xff", b"#version"]))
        return lines
    lines[i] = " ".join(parts).encode("utf-8", "surrogatepass")
    return lines


def counts_mutation(data: st.DataObject, lines: List[bytes]) -> List[bytes]:
    """Header fields (huge declared totals, hostile types) and count lines
    (huge or malformed counts, duplicate, empty or escaped words)."""
    op = data.draw(st.sampled_from(["header", "header-json", "count", "word", "duplicate-word", "gzip"]), label="counts op")
    if op in ("header", "header-json"):
        try:
            header = json.loads(lines[0])
        except (ValueError, RecursionError):  # an earlier mutation broke it
            return lines
        if op == "header":
            key = data.draw(st.sampled_from(["words", "total", "bytepair_counts", "pattern", "special_tokens", "documents"]))
            header[key] = data.draw(st.one_of(hostile_value(), st.sampled_from(
                [10**30, 2**64, 2**64 - 1, "cl100k", "(a+)+$", "[", ["<s>"], ["\ud800"], [""]])), label="header value")
        else:
            header = json_generic(data, header)
        lines[0] = encode_json(header, data.draw(st.booleans(), label="ascii"))
        return lines
    if len(lines) < 2:
        return lines
    i = data.draw(st.integers(1, len(lines) - 1), label="count line")
    count, _, word = lines[i].partition(b"\t")
    if op == "count":
        count = data.draw(st.sampled_from([b"18446744073709551615", b"18446744073709551616", b"1" + b"0" * 30, b"0",
                                           b"01", b"-1", b"1e5", b"", "\uff11".encode(), b" 1", HUGE_NUMBER.encode()]))
    elif op == "word":
        word = data.draw(st.sampled_from([b"", b"\\", b"\\x", b"a\\", b"\\\\t", b"\x00", b"\xff", b"a\tb",
                                          b"\xed\xa0\x80", b"<|endoftext|>", b"a" * LONG_RANDOM]))
    elif op == "duplicate-word":
        word = lines[data.draw(st.integers(1, len(lines) - 1))].partition(b"\t")[2]
    else:  # the whole file gzip-compressed, then damaged
        blob = bytearray(gzip.compress(join_lines(lines), mtime=0))
        at = data.draw(st.integers(10, len(blob) - 1))
        blob[at] ^= 0xFF
        return [b"\x00GZIP", bytes(blob)]
    lines[i] = count + b"\t" + word
    return lines


def line_file(lines: List[bytes]) -> bytes:
    if lines[:1] == [b"\x00GZIP"]:
        return lines[1]
    return join_lines(lines)


# ---------------------------------------------------------------- one random input per variant


def gguf_mutation(data: st.DataObject, raw: bytes) -> bytes:
    """A GGUF file with a count, length or type overwritten by a hostile value, cut, or with bytes flipped."""
    out = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 3), label="gguf mutations")):
        at = data.draw(st.integers(0, max(0, len(out) - 1)), label="offset")
        kind = data.draw(st.sampled_from(["u64", "u32", "cut", "byte"]), label="gguf mutation")
        if kind == "cut":
            del out[at:]
        elif kind == "byte":
            out[at:at + 1] = bytes([data.draw(st.integers(0, 255), label="byte")])
        else:
            width = 8 if kind == "u64" else 4
            value = data.draw(st.sampled_from([0, 1, 7, 9, 12, 13, 255, 2**31, 2**32 - 1, 2**60, 2**64 - 1]),
                              label="value") % (1 << (8 * width))
            out[at:at + width] = value.to_bytes(width, "little")
    return bytes(out)


def mutate(data: st.DataObject, variant: str, files: Dict[str, bytes]) -> Dict[str, bytes]:
    files = dict(files)
    if variant == "gguf":
        files["model.gguf"] = gguf_mutation(data, files["model.gguf"])
        return files
    if variant == "gpt2-merges" or variant in ("tiktoken", "subword-nmt", "counts"):
        name = FILE_NAME[variant]
        lines = split_lines(files[name])
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            if lines[:1] == [b"\x00GZIP"]:
                break
            if data.draw(st.booleans(), label="format-aware"):
                if variant == "tiktoken":
                    lines = tiktoken_mutation(data, lines) if lines and all(b" " in l for l in lines) else lines
                elif variant == "counts":
                    lines = counts_mutation(data, lines) if lines and lines[0].startswith(b"{") else lines
                else:
                    try:
                        lines = merges_mutation(data, lines, 1 if lines and lines[0].startswith(b"#version") else 0)
                    except UnicodeDecodeError:
                        pass
            else:
                lines = line_generic(data, lines)
        files[name] = line_file(lines)
        return files
    name = FILE_NAME[variant]
    root = json.loads(files[name])
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        if not isinstance(root, dict) or any(isinstance(v, (DupKeys, Raw)) for v in node_values(root)):
            break
        if data.draw(st.booleans(), label="format-aware"):
            try:
                if variant.startswith("bytepair"):
                    native_mutation(data, root)
                elif variant.startswith("hf"):
                    hf_mutation(data, root)
                else:
                    root = hf_vocab_mutation(data, root)
            except (KeyError, TypeError, IndexError, AttributeError, ValueError):
                pass  # an earlier mutation changed the structure this one expects
        else:
            root = json_generic(data, root)
    files[name] = encode_json(root, data.draw(st.booleans(), label="ascii"))
    return files


def node_values(x: Any) -> List[Any]:
    out = [x]
    if isinstance(x, dict):
        for v in x.values():
            out += node_values(v)
    elif isinstance(x, list):
        for v in x:
            out += node_values(v)
    return out


@pytest.fixture
def watchdog():
    """A hang kills the run with every thread's stack instead of blocking CI."""
    faulthandler.dump_traceback_later(900, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.mark.parametrize("variant", list(LOADER))
def test_structural_mutations_load_or_fail_cleanly(variant, valid, tmp_path, watchdog, record_property):
    start = COUNTS[LOADER[variant]]
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    @settings(max_examples=EXAMPLES, deadline=timedelta(seconds=30), suppress_health_check=list(HealthCheck),
              database=None, phases=PHASES)
    @given(data=st.data())
    def run(data):
        files = mutate(data, variant, valid[variant])
        for name, content in files.items():
            if content != valid[variant][name]:
                note(f"{name} ({len(content)} bytes): {content[:3000]!r}")
        check(variant, tmp_path, files, detect=data.draw(st.sampled_from([False, False, False, True]), label="detect"))

    run()
    ran = COUNTS[LOADER[variant]] - start
    record_property("fuzz_inputs", {LOADER[variant]: ran})
    assert ran >= min(EXAMPLES, 10)
    # ru_maxrss is in KiB: random inputs (1 MiB strings at most) never need 1 GiB more
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before < 1 << 20


# ---------------------------------------------------------------- named hostile files


def _json_case(valid, variant: str, change: Callable[[Any], Any], ascii: bool = True) -> Dict[str, bytes]:
    files = dict(valid[variant])
    name = FILE_NAME[variant]
    out = change(json.loads(files[name]))
    files[name] = out if isinstance(out, bytes) else encode_json(out, ascii)
    return files


def _lines_case(valid, variant: str, change: Callable[[List[bytes]], List[bytes]]) -> Dict[str, bytes]:
    files = dict(valid[variant])
    name = FILE_NAME[variant]
    out = change(split_lines(files[name]))
    files[name] = out if isinstance(out, bytes) else join_lines(out)
    return files


def _set(path: Tuple, value: Any) -> Callable[[Any], Any]:
    def change(d):
        return put(d, path, value)
    return change


def _do(*steps: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def change(d):
        for step in steps:
            d = step(d)
        return d
    return change


def _merge(k: int, pair: List[Any]) -> Callable[[Any], Any]:
    return _set(("merges", k), pair)


def _hf_merge(k: int, pair: List[Any]) -> Callable[[Any], Any]:
    return _set(("model", "merges", k), pair)


def _special(name: str, id_: int) -> Callable[[Any], Any]:
    def change(d):
        d.setdefault("special_tokens", {})[name] = id_
        return d
    return change


def _added(content: str, id_: Any, **opts: Any) -> Callable[[Any], Any]:
    def change(d):
        d["added_tokens"].append({"id": id_, "content": content, "special": True, **opts})
        return d
    return change


def _swap_vocab_ids(a: str, b: str) -> Callable[[Any], Any]:
    def change(d):
        v = d["model"]["vocab"] if "model" in d else d
        v[a], v[b] = v[b], v[a]
        return d
    return change


def _dup_vocab_key(token: str, id_: int, hf: bool) -> Callable[[Any], Any]:
    def change(d):
        v = d["model"]["vocab"] if hf else d
        pairs = list(v.items()) + [(token, id_)]
        if hf:
            d["model"]["vocab"] = DupKeys(pairs)
            return d
        return DupKeys(pairs)
    return change


def _line(i: int, new: bytes) -> Callable[[List[bytes]], List[bytes]]:
    def change(lines):
        lines[i] = new
        return lines
    return change


def _insert(i: int, *new: bytes) -> Callable[[List[bytes]], List[bytes]]:
    def change(lines):
        lines[i:i] = list(new)
        return lines
    return change


def _true_header(change: Callable[[List[bytes]], List[bytes]]) -> Callable[[List[bytes]], List[bytes]]:
    """A counts-file change, then the header's words and total made to match."""
    def changed(lines):
        lines = change(lines)
        header = json.loads(lines[0])
        header["words"] = len(lines) - 1
        header["total"] = sum(int(line.partition(b"\t")[0]) for line in lines[1:])
        return [json.dumps(header).encode()] + lines[1:]
    return changed


def _header(old: bytes, new: bytes) -> Callable[[List[bytes]], List[bytes]]:
    def change(lines):
        assert old in lines[0]
        return [lines[0].replace(old, new)] + lines[1:]
    return change


def _many(i: int, n: int) -> Callable[[List[bytes]], List[bytes]]:
    def change(lines):
        lines[i:i] = [lines[i]] * n
        return lines
    return change


def named_cases(valid) -> List[Tuple[str, str, Dict[str, bytes]]]:
    """(case id, variant, files): each kind of hostile file the issue lists,
    for every format. They run in a child process whose address space is
    limited, since several declare huge sizes."""
    deep_list, deep_dict = deep_nest("list"), deep_nest("dict")
    long_text = "a" * LONG
    J, L = functools.partial(_json_case, valid), functools.partial(_lines_case, valid)
    cases = [
        # ---- native, byte model with merges (ids 256 + k)
        ("merge of an unknown id", "bytepair", J("bytepair", _merge(0, [116, 999]))),
        ("merge of its own result (A+B=A)", "bytepair", J("bytepair", _merge(0, [256, 104]))),
        ("two merges of each other's result", "bytepair", J("bytepair", _do(_merge(1, [258, 101]), _merge(2, [257, 116])))),
        ("merge of a token a later merge makes", "bytepair", J("bytepair", _merge(0, [116, 260]))),
        ("the same merge twice", "bytepair", J("bytepair", lambda d: {**d, "merges": d["merges"] + [d["merges"][0]], "merge_counts": []})),
        ("merge ids repeated", "bytepair", J("bytepair", lambda d: {**d, "merge_ids": [256] * len(d["merges"])})),
        ("merge ids of base bytes", "bytepair", J("bytepair", lambda d: {**d, "merge_ids": list(range(len(d["merges"])))})),
        ("merge ids decreasing", "bytepair", J("bytepair", lambda d: {**d, "merge_ids": list(range(256 + len(d["merges"]), 256, -1))})),
        ("merge counts huge", "bytepair", J("bytepair", lambda d: {**d, "merge_counts": [2**64, 10**30] + d["merge_counts"][2:]})),
        ("a number of 5000 digits", "bytepair", J("bytepair", _set(("merge_counts", 0), Raw(HUGE_NUMBER)))),
        ("100000 copies of one merge", "bytepair",
         J("bytepair", lambda d: {**d, "merges": [[116, 104]] * 10**5, "merge_counts": [], "special_tokens": {}})),
        ("special token of id 2**32-2", "bytepair", J("bytepair", _special("<x>", 2**32 - 2))),
        ("special token of id 2**32-1", "bytepair", J("bytepair", _special("<x>", 2**32 - 1))),
        ("special token of id 10**9", "bytepair", J("bytepair", _special("<x>", 10**9))),
        ("special token of a merge's id", "bytepair", J("bytepair", _special("<x>", 260))),
        ("two special tokens, one id", "bytepair", J("bytepair", _do(_special("<x>", 300), _special("<y>", 300)))),
        ("special token named with NUL", "bytepair", J("bytepair", _special("\x00", 300))),
        ("special token named with a lone surrogate", "bytepair", J("bytepair", _special("\ud800", 300))),
        ("special token of 10 MB", "bytepair", J("bytepair", _special(long_text, 300))),
        ("pattern with a lone surrogate", "bytepair", J("bytepair", _set(("pattern",), "a\udfff"))),
        ("pattern of 10 MB", "bytepair", J("bytepair", _set(("pattern",), long_text))),
        ("catastrophic pattern", "bytepair", J("bytepair", _set(("pattern",), "(a+)+$"))),
        ("pattern null in a byte model", "bytepair", J("bytepair", _set(("pattern",), None))),
        ("JSON nested 10**5 deep (top)", "bytepair", J("bytepair", lambda d: deep_list.encode())),
        ("JSON nested 10**5 deep (field)", "bytepair", J("bytepair", _set(("special_tokens",), deep_dict))),
        ("invalid UTF-8 in a string", "bytepair", J("bytepair", _set(("pattern",), "\ud800"), ascii=False)),
        # ---- native, char model
        ("char: base symbol twice", "bytepair-char", J("bytepair-char", lambda d: {**d, "base": d["base"] + d["base"][:1]})),
        ("char: empty base symbol", "bytepair-char", J("bytepair-char", lambda d: {**d, "base": d["base"] + [""]})),
        ("char: NUL base symbol", "bytepair-char", J("bytepair-char", lambda d: {**d, "base": d["base"] + ["\x00"]})),
        ("char: lone surrogate base symbol", "bytepair-char", J("bytepair-char", lambda d: {**d, "base": d["base"] + ["\ud800"]})),
        ("char: merge of its own result", "bytepair-char", J("bytepair-char", lambda d: _merge(0, [len(d["base"])] * 2)(d))),
        ("char: merge id 10**9", "bytepair-char",
         J("bytepair-char", lambda d: {**d, "merge_ids": [10**9 + i for i in range(len(d["merges"]))]})),
        ("char: special id 2**32-2", "bytepair-char", J("bytepair-char", _special("<x>", 2**32 - 2))),
        ("char: empty end-of-word marker", "bytepair-char", J("bytepair-char", _set(("end_of_word",), ""))),
        ("char: byte fallback", "bytepair-char", J("bytepair-char", _set(("byte_fallback",), True))),
        # ---- native, vocabulary of ranks
        ("ranks: invalid base64", "bytepair-ranks", J("bytepair-ranks", _set(("tokens_base64", 3), "YQ"))),
        ("ranks: one token, two ids", "bytepair-ranks", J("bytepair-ranks", _set(("tokens_base64", 3), "AA=="))),
        ("ranks: empty token", "bytepair-ranks", J("bytepair-ranks", _set(("tokens_base64", 3), ""))),
        ("ranks: 10**5 unused ids", "bytepair-ranks",
         J("bytepair-ranks", lambda d: {**d, "tokens_base64": d["tokens_base64"] + [None] * 10**5 + ["eHl6"]})),
        ("ranks: special id 4294967294", "bytepair-ranks", J("bytepair-ranks", _special("<x>", 2**32 - 2))),
        ("ranks: pickle as a token", "bytepair-ranks",
         J("bytepair-ranks", lambda d: {**d, "tokens_base64": d["tokens_base64"] + [base64.b64encode(PICKLE).decode()]})),
        # ---- Hugging Face tokenizer.json
        ("hf: two tokens, one id", "hf", J("hf", _set(("model", "vocab", "th"), 257))),
        ("hf: one token, two ids", "hf", J("hf", _dup_vocab_key("th", 300, hf=True))),
        ("hf: vocab id 2**32-2", "hf", J("hf", _set(("model", "vocab", "<|endoftext|>"), 2**32 - 2))),
        ("hf: vocab id 10**9", "hf", J("hf", _set(("model", "vocab", "<|endoftext|>"), 10**9))),
        ("hf: merged token of id 10**9", "hf", J("hf", _set(("model", "vocab", "ĠðŁĻĤ"), 10**9))),
        ("hf: vocab id 2**64", "hf", J("hf", _set(("model", "vocab", "Ġmat"), 2**64))),
        ("hf: vocab id 1.0", "hf", J("hf", _set(("model", "vocab", "Ġmat"), 1.0))),
        ("hf: added token id of 5000 digits", "hf", J("hf", _set(("added_tokens", 0, "id"), Raw(HUGE_NUMBER)))),
        ("hf: merge of an unknown token", "hf", J("hf", _hf_merge(0, ["t", "zzz"]))),
        ("hf: merge whose result has a lower id", "hf", J("hf", _swap_vocab_ids("th", "Ġmat"))),
        ("hf: merges out of order", "hf",
         J("hf", lambda d: _do(_hf_merge(0, d["model"]["merges"][1]), _hf_merge(1, d["model"]["merges"][0]))(d))),
        ("hf: merge of its own result", "hf", J("hf", _hf_merge(1, ["the", "e"]))),
        ("hf: the same merge twice", "hf", J("hf", lambda d: _set(("model", "merges"), d["model"]["merges"] + [["t", "h"]])(d))),
        ("hf: legacy merges 'a  b'", "hf", J("hf", _hf_merge(0, "t  h"))),
        ("hf: added token id 2**32-2", "hf", J("hf", _added("<x>", 2**32 - 2))),
        ("hf: added token id 2**64", "hf", J("hf", _added("<x>", 2**64))),
        ("hf: added token that is a vocab token", "hf", J("hf", _added("th", 400))),
        ("hf: 10**5 added tokens", "hf",
         J("hf", lambda d: {**d, "added_tokens": d["added_tokens"] + [{"id": i, "content": f"<{i}>"} for i in range(10**5)]})),
        ("hf: lone surrogate token", "hf", J("hf", _set(("model", "vocab", "\udc00"), 400))),
        ("hf: lone surrogate added token", "hf", J("hf", _added("\ud800", 400))),
        ("hf: token of 10 MB", "hf", J("hf", _set(("model", "vocab", "Ġ" * LONG), 400))),
        ("hf: JSON nested 10**5 deep", "hf", J("hf", _set(("normalizer",), deep_list))),
        ("hf: hostile Split regex", "hf", J("hf", _set(("pre_tokenizer", "pretokenizers", 0, "pattern", "Regex"), "(?<=a+)b\\"))),
        ("hf: code in the regex", "hf", J("hf", _set(("pre_tokenizer", "pretokenizers", 0, "pattern", "Regex"), PAYLOAD))),
        ("hf-char: one token, two ids", "hf-char", J("hf-char", _dup_vocab_key("t", 999, hf=True))),
        ("hf-char: vocab id 2**32-2", "hf-char",
         J("hf-char", lambda d: _set(("model", "vocab", list(d["model"]["vocab"])[-1]), 2**32 - 2)(d))),
        ("hf-char: lone surrogate token", "hf-char", J("hf-char", _set(("model", "vocab", "\ud800"), 999))),
        # ---- .tiktoken
        ("tiktoken: rank 4294967295", "tiktoken", L("tiktoken", _line(0, b"AA== 4294967295"))),
        ("tiktoken: rank 4294967294", "tiktoken", L("tiktoken", _line(0, b"AA== 4294967294"))),
        ("tiktoken: rank 10**12", "tiktoken", L("tiktoken", _line(0, b"AA== 1000000000000"))),
        ("tiktoken: rank 10**9", "tiktoken", L("tiktoken", _insert(5, b"eHl6 1000000000"))),
        ("tiktoken: rank of 5000 digits", "tiktoken", L("tiktoken", _insert(5, b"eHl6 " + HUGE_NUMBER.encode()))),
        ("tiktoken: rank 1 with 30 leading zeros", "tiktoken", L("tiktoken", _insert(5, b"eHl6 " + b"0" * 30 + b"999"))),
        ("tiktoken: a line cut by a \\x1c", "tiktoken", L("tiktoken", _insert(5, b"eHl6 999\x1ceHl7 1000"))),
        ("tiktoken: one token, two ranks", "tiktoken", L("tiktoken", _insert(5, b"AA== 999"))),
        ("tiktoken: two tokens, one rank", "tiktoken", L("tiktoken", _insert(5, b"eHl6 3"))),
        ("tiktoken: empty token", "tiktoken", L("tiktoken", _insert(5, b"= 999"))),
        ("tiktoken: 10 MB token", "tiktoken", L("tiktoken", _insert(5, base64.b64encode(b"ab" * (LONG // 2)) + b" 999"))),
        ("tiktoken: 10**5 copies of a line", "tiktoken", L("tiktoken", _many(5, 10**5))),
        ("tiktoken: NUL", "tiktoken", L("tiktoken", _insert(5, b"AA==\x00 999"))),
        ("tiktoken: pickle as a token", "tiktoken", L("tiktoken", _insert(5, base64.b64encode(PICKLE) + b" 999"))),
        ("tiktoken: the whole file a pickle", "tiktoken", {"model.tiktoken": PICKLE}),
        # ---- GPT-2 vocab.json + merges.txt
        ("gpt2: special token of id 2**32-2", "gpt2-vocab", J("gpt2-vocab", _set(("<|endoftext|>",), 2**32 - 2))),
        ("gpt2: byte token of id 10**9", "gpt2-vocab", J("gpt2-vocab", _set(("a",), 10**9))),
        ("gpt2: id of 5000 digits", "gpt2-vocab", J("gpt2-vocab", _set(("a",), Raw(HUGE_NUMBER)))),
        ("gpt2: two tokens, one id", "gpt2-vocab", J("gpt2-vocab", _set(("th",), 257))),
        ("gpt2: one token, two ids", "gpt2-vocab", J("gpt2-vocab", _dup_vocab_key("th", 300, hf=False))),
        ("gpt2: lone surrogate token", "gpt2-vocab", J("gpt2-vocab", _set(("\ud800",), 300))),
        ("gpt2: JSON nested 10**5 deep", "gpt2-vocab", J("gpt2-vocab", lambda d: deep_dict.encode())),
        ("gpt2: merge of an unknown token", "gpt2-merges", L("gpt2-merges", _line(1, "t zzz".encode()))),
        ("gpt2: merges out of order", "gpt2-merges", L("gpt2-merges", lambda ls: [ls[0], ls[2], ls[1]] + ls[3:])),
        ("gpt2: merge of its own result", "gpt2-merges", L("gpt2-merges", _line(2, "the e".encode()))),
        ("gpt2: two merges of each other's result", "gpt2-merges", L("gpt2-merges", lambda ls: [ls[0], b"th the", b"the th"] + ls[3:])),
        ("gpt2: merge line of 10 MB", "gpt2-merges", L("gpt2-merges", _insert(1, b"a" * LONG + b" b"))),
        ("gpt2: 10**5 copies of a merge", "gpt2-merges", L("gpt2-merges", _many(1, 10**5))),
        ("gpt2: invalid UTF-8", "gpt2-merges", L("gpt2-merges", _line(3, b"\xff \xfe"))),
        ("gpt2: empty token", "gpt2-merges", L("gpt2-merges", _line(1, b"t  h"))),
        # ---- subword-nmt codes
        ("codes: merge of an unknown symbol", "subword-nmt", L("subword-nmt", _line(1, "t zz</w>".encode()))),
        ("codes: merge of its own result", "subword-nmt", L("subword-nmt", _line(2, b"the e</w>"))),
        ("codes: two merges of each other's result", "subword-nmt", L("subword-nmt", lambda ls: [ls[0], b"t ha", b"h at"] + ls[3:])),
        ("codes: merges out of order", "subword-nmt", L("subword-nmt", lambda ls: [ls[0], ls[2], ls[1]] + ls[3:])),
        ("codes: 10 MB line", "subword-nmt", L("subword-nmt", _insert(1, b"a" * LONG + b" b"))),
        ("codes: 10**5 copies of a merge", "subword-nmt", L("subword-nmt", _many(1, 10**5))),
        ("codes: version 99999999999999999999.2", "subword-nmt", L("subword-nmt", _line(0, b"#version: 99999999999999999999.2"))),
        ("codes: markers only", "subword-nmt", L("subword-nmt", _insert(1, b"</w> </w>"))),
        ("codes: NUL symbol", "subword-nmt", L("subword-nmt", _insert(1, b"\x00 a"))),
        # ---- counts files
        ("counts: two counts of 2**64-1", "counts",
         L("counts", _true_header(_insert(1, b"18446744073709551615\tx", b"18446744073709551615\ty")))),
        ("counts: a word twice, 2**64-1 each", "counts", L("counts", _insert(1, b"18446744073709551615\tx", b"18446744073709551615\tx"))),
        ("counts: count 2**64", "counts", L("counts", _insert(1, b"18446744073709551616\tx"))),
        ("counts: count 10**30", "counts", L("counts", _insert(1, b"1" + b"0" * 30 + b"\tx"))),
        ("counts: count of 5000 digits", "counts", L("counts", _insert(1, HUGE_NUMBER.encode() + b"\tx"))),
        ("counts: header words of 5000 digits", "counts", L("counts", _header(b'"words": 11', b'"words": ' + HUGE_NUMBER.encode()))),
        ("counts: header words 10**30", "counts", L("counts", _header(b'"words": 11', b'"words": 1' + b"0" * 30))),
        ("counts: header total 2**64", "counts", L("counts", _header(b'"total": 48', b'"total": 18446744073709551616'))),
        ("counts: header nested 10**5 deep", "counts", L("counts", _header(b'"words"', b'"x": ' + deep_list.encode() + b', "words"'))),
        ("counts: header pattern with a lone surrogate", "counts", L("counts", _header(b'"pattern": null', b'"pattern": "\\ud800"'))),
        ("counts: header pattern invalid", "counts", L("counts", _header(b'"pattern": null', b'"pattern": "("'))),
        ("counts: word of 10 MB", "counts", L("counts", _true_header(_insert(1, b"1\t" + b"a" * LONG)))),
        ("counts: 10**5 copies of a line", "counts", L("counts", _many(1, 10**5))),
        ("counts: empty word", "counts", L("counts", _insert(1, b"1\t"))),
        ("counts: NUL word", "counts", L("counts", _true_header(_insert(1, b"1\t\x00")))),
        ("counts: unknown escape", "counts", L("counts", _insert(1, b"1\ta\\x"))),
        ("counts: damaged gzip", "counts", {"words.counts": gzip.compress(valid["counts"]["words.counts"])[:-12] + b"\xff" * 12}),
        ("counts: gzip of a 10 MB word (1000x smaller)", "counts",
         {"words.counts": gzip.compress(L("counts", _true_header(_insert(1, b"1\t" + b"b" * LONG)))["words.counts"])}),
    ]
    # every format: a file that is a pickle, a file of code
    for variant in ("bytepair", "hf", "gpt2-vocab", "subword-nmt", "counts"):
        name = FILE_NAME[variant]
        for what, content in (("a pickle", PICKLE), ("code", PAYLOAD.encode())):
            files = dict(valid[variant])
            files[name] = content
            cases.append((f"{variant}: the file is {what}", variant, files))
    return cases


CHILD = r"""
import json, os, resource, sys, traceback
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
sys.path.insert(0, sys.argv[3])
import test_fuzz_structural as T
import pathlib
manifest = json.load(open(sys.argv[1]))
for k, (case, variant, files) in enumerate(manifest):
    folder = pathlib.Path(sys.argv[1] + f".{k}")
    folder.mkdir()
    data = {name: open(path, "rb").read() for name, path in files.items()}
    try:
        outcome = T.check(variant, folder, data)
    except BaseException as e:
        outcome = f"{type(e).__name__}: {str(e)[:300]} at {traceback.format_tb(e.__traceback__)[-1].strip()[:300]}"
    del data
    print(json.dumps([case, outcome]), flush=True)
# VmHWM, the peak of this process's own memory image (ru_maxrss starts at the parent's size: tests/childproc.py)
peak_kib = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
print(json.dumps(["peak RSS (MiB)", peak_kib // 1024]), flush=True)
"""


def test_named_hostile_files_in_limited_memory(valid, tmp_path, record_property):
    """Each named hostile file, loaded in a child limited to 2 GB of address
    space (a loader that allocates from a declared size fails there with
    MemoryError, or aborts): it loads and is usable, or a BytepairError
    names the file."""
    cases = named_cases(valid)
    manifest = []
    for k, (case, variant, files) in enumerate(cases):
        paths = {}
        for name, content in files.items():
            paths[name] = str(tmp_path / f"case{k}-{name}")
            pathlib.Path(paths[name]).write_bytes(content)
        manifest.append((case, variant, paths))
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    env = dict(os.environ, MALLOC_ARENA_MAX="2", RAYON_NUM_THREADS="2", PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "manifest.json"), str(2 << 30), os.path.dirname(__file__)],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path,
    )
    results = dict(json.loads(line) for line in proc.stdout.splitlines() if line.startswith("["))
    assert proc.returncode == 0, f"the child died (rc {proc.returncode}) after {len(results)} cases: {proc.stderr[-3000:]}"
    bad = {case: outcome for case, outcome in results.items() if outcome not in ("loaded", "rejected", results.get("peak RSS (MiB)"))}
    assert not bad, bad
    assert len(results) == len(cases) + 1
    counts: collections.Counter = collections.Counter(LOADER[variant] for _, variant, _ in cases)
    record_property("fuzz_inputs", dict(counts))
    assert results["peak RSS (MiB)"] < 1536
    assert not (tmp_path / SENTINEL).exists()


# ---------------------------------------------------------------- loading never executes code

_FORBIDDEN_EVENTS = {"exec", "compile", "pickle.find_class", "marshal.loads", "os.system", "os.exec", "os.posix_spawn",
                     "os.spawn", "os.fork", "subprocess.Popen", "ctypes.dlopen", "ctypes.dlsym", "import", "builtins.input"}
_AUDIT: Dict[str, Any] = {"on": False, "seen": []}


def _audit(event: str, args: Tuple) -> None:
    if _AUDIT["on"] and event in _FORBIDDEN_EVENTS:
        _AUDIT["seen"].append((event, repr(args)[:200]))


def test_loading_never_executes_code(valid, tmp_path, monkeypatch, record_property):
    """Files of every format holding pickles, ``__import__`` strings and shell
    syntax are data: no code object runs, nothing is unpickled, imported or
    spawned while they load and encode (a process-wide audit hook watches)."""
    monkeypatch.chdir(tmp_path)  # a payload that ran would create SENTINEL here
    inputs: List[Tuple[str, Dict[str, bytes]]] = []
    shell = ["$(touch x)", "`touch x`", "; touch x", "!!python/object/apply:os.system ['touch x']",
             '{"py/object": "os.system"}', PAYLOAD, PICKLE.decode("latin-1")]
    for text in shell:
        inputs.append(("bytepair", _json_case(valid, "bytepair", _special(text, 300))))
        inputs.append(("hf", _json_case(valid, "hf", _added(text, 400))))
        inputs.append(("gpt2-vocab", _json_case(valid, "gpt2-vocab", _set((text,), 300))))
        inputs.append(("bytepair", _json_case(valid, "bytepair", _set(("pattern",), text))))
        inputs.append(("counts", _lines_case(valid, "counts", _insert(1, b"1\t" + text.encode("utf-8", "replace")))))
    for variant in LOADER:
        name = FILE_NAME[variant]
        inputs.append((variant, {**valid[variant], name: PICKLE}))
        inputs.append((variant, {**valid[variant], name: PAYLOAD.encode()}))
    inputs.append(("tiktoken", _lines_case(valid, "tiktoken", _insert(5, base64.b64encode(PICKLE) + b" 999"))))
    folder = tmp_path / "inputs"
    folder.mkdir()
    for variant, files in inputs:  # once without the hook: every module the loaders use gets imported
        check(variant, folder, files)
    sys.addaudithook(_audit)
    _AUDIT["on"], _AUDIT["seen"] = True, []
    try:
        outcomes = collections.Counter(check(variant, folder, files) for variant, files in inputs)
    finally:
        _AUDIT["on"] = False
    assert not _AUDIT["seen"], _AUDIT["seen"][:10]
    assert not (tmp_path / SENTINEL).exists() and not (tmp_path / "x").exists()
    assert outcomes["loaded"] and outcomes["rejected"]
    record_property("fuzz_inputs", {k: 2 * n for k, n in collections.Counter(LOADER[v] for v, _ in inputs).items()})
