"""Hostile tokenizer files (issue 17, item 1): files written to hang or
exhaust the loader, for every format the pipeline work added
(``tokenizer.json`` pipelines, SentencePiece ``.model``, ``tekken.json``)
and the native one.

Each case builds a file, then loads it (and encodes a text with it) in a
child process with a hang guard (a subprocess timeout, not a timed
assertion: a case that ends passes however long it took) and a cap on its
address space (``RLIMIT_AS``, 2 GiB unless said). The child reports what
happened as one JSON line; the case then checks its expectation:

- ``error``: a ``BytepairError`` of the named class whose message is one
  line, holds the given words, and names the file (errors at load);
- ``ok``: it loaded (and encoded, where a text is given) and the result is
  checked against Hugging Face ``tokenizers`` (the oracle) where it can run
  the same file.

Catastrophic regexes: a backtracking pattern (lookaround, backreference,
atomic group) whose repeated group holds another choice is refused at load;
any other backtracking pattern searches within a budget proportional to the
text (``src/pretok/regex_guard.rs``), so that the polynomial ones fail with a
``PatternError`` instead of running for minutes. ``(a+)+$`` and the like
need no backtracking engine: each search is linear, with HF's ids, and the
bytes all searches of a text read are counted (64 per byte plus 1 MiB), so
that an alternation that re-reads a long stretch from every position
(``a+$|.`` on a run of ``a``) fails with a ``PatternError`` ("reads too
much") instead of taking a time quadratic in the text.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest
import tokenizers

from bytepair import Tokenizer

HANG_GUARD = 300  # seconds a case may take before it counts as a hang
GIB = 1 << 30
MISTRAL_DATA = Path(__import__("mistral_common").__file__).parent / "data"
SP_MODEL = MISTRAL_DATA / "tokenizer.model.v1"
TEKKEN = MISTRAL_DATA / "tekken_240911.json"

CHILD = textwrap.dedent(r"""
    import json, resource, sys
    spec = json.loads(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (spec["mem"], spec["mem"]))
    from bytepair import BytepairError, Tokenizer
    out = {}
    try:
        tok = Tokenizer.load(spec["path"], **spec["kw"])
        out["loaded"] = True
        if spec["text"] is not None:
            text = spec["text"][0] * spec["text"][1]
            ids = tok.encode_ordinary(text)
            out["n_ids"] = len(ids)
            out["decodes"] = tok.decode(ids) == text
            if spec["ids"]:
                with open(spec["ids"], "w") as f:
                    json.dump(ids, f)
    except BytepairError as e:
        out["error"] = type(e).__name__
        out["message"] = str(e)
    print(json.dumps(out))
""")


@dataclass
class Case:
    name: str
    build: Callable[[Path], Path]  # writes the file, returns its path
    error: Optional[str] = None  # expected exception class(es, "A|B"); None: it must work
    words: List[str] = field(default_factory=list)  # in the message (lower case)
    text: Optional[tuple] = None  # (unit, times): the text encoded after loading
    kw: Dict[str, Any] = field(default_factory=dict)
    mem: int = 2 * GIB
    at_load: bool = True  # the error names the file
    oracle: bool = False  # compare ids with tokenizers.Tokenizer.from_file
    lossless: bool = True  # the ids decode to the text (not so when a normalizer changes it)
    guard: int = HANG_GUARD  # seconds before the case counts as a hang


def run(case: Case, path: Path, tmp: Path) -> Dict[str, Any]:
    spec = {"path": str(path), "kw": case.kw, "mem": case.mem, "text": case.text,
            "ids": str(tmp / "ids.json") if case.oracle else None}
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                              timeout=case.guard)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case.name}: no answer in {case.guard} s (a hang)")
    assert proc.returncode == 0, f"{case.name}: the child failed:\n{proc.stderr[-3000:]}"
    assert "panicked" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- base files


def _trained() -> Tokenizer:
    return Tokenizer.train("hello world aaa bbb ccc the cat sat on the mat " * 40, vocab_size=300)


def hf_file(tmp: Path, pre_tokenizer: Any = None, normalizer: Any = "keep", name: str = "tokenizer.json",
            edit: Optional[Callable[[dict], None]] = None) -> Path:
    """A byte-level BPE ``tokenizer.json`` (bytepair's HF export) with a
    ``Split`` pre-tokenizer and an NFC normalizer (so that it runs as a
    pipeline), changed as asked."""
    base = tmp / "base.json"
    _trained().save(str(base), format="hf")
    d = json.loads(base.read_text())
    base.unlink()
    if pre_tokenizer is not None:
        d["pre_tokenizer"] = pre_tokenizer
    d["normalizer"] = {"type": "NFC"} if normalizer == "keep" else normalizer
    if edit:
        edit(d)
    path = tmp / name
    path.write_text(json.dumps(d))
    return path


def split(pattern: str) -> dict:
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}


def native_file(tmp: Path, edit: Callable[[dict], None]) -> Path:
    d = _trained().to_dict()
    edit(d)
    path = tmp / "model.json"
    path.write_text(json.dumps(d))
    return path


def sparse(tmp: Path, name: str, size: int, head: bytes = b"") -> Path:
    """A file of ``size`` bytes that takes no room on disk."""
    path = tmp / name
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


# ---------------------------------------------------------------- protobuf


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field_bytes(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def sp_model(tmp: Path, edit: Callable[[Any], None], name: str = "tokenizer.model") -> Path:
    from bytepair.formats.sentencepiece import _classes

    m = _classes()()
    m.ParseFromString(SP_MODEL.read_bytes())
    edit(m)
    path = tmp / name
    path.write_bytes(m.SerializeToString())
    return path


def sp_bytes(tmp: Path, data: bytes) -> Path:
    path = tmp / "tokenizer.model"
    path.write_bytes(data)
    return path


def charsmap_json(tmp: Path, blob: bytes) -> Path:
    """A pipeline whose normalizer is SentencePiece's precompiled charsmap
    (HF's ``Precompiled``, as ``transformers`` converts .model files)."""
    return hf_file(tmp, normalizer={"type": "Precompiled",
                                    "precompiled_charsmap": base64.b64encode(blob).decode("ascii")})


def real_charsmap() -> bytes:
    """The nmt_nfkc charsmap: built by sentencepiece for a tiny model."""
    import io
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world ﬁ ① Ａ"] * 50), model_writer=model,
                                   vocab_size=30, model_type="bpe", normalization_rule_name="nmt_nfkc")
    from bytepair.formats.sentencepiece import parse_model
    return parse_model(model.getvalue()).precompiled_charsmap


def self_referential_charsmap() -> bytes:
    """A darts-clone trie whose units all point back at the root: every
    byte of every key is a leaf whose value is itself."""
    units = [0] * 256
    for c in range(1, 256):
        units[c] = c | (1 << 8)  # label c, has a leaf, offset 0: the leaf's value is this unit again
    units[0] = 0
    trie = b"".join(struct.pack("<I", u) for u in units)
    return struct.pack("<I", len(trie)) + trie + b"x\x00"


# ---------------------------------------------------------------- tekken


def tekken(tmp: Path, edit: Callable[[dict], None]) -> Path:
    d = json.loads(TEKKEN.read_text())
    edit(d)
    path = tmp / "tekken.json"
    path.write_text(json.dumps(d))
    return path


def tekken_config(**changes: Any) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        d["config"].update(changes)
    return edit


def tekken_specials(n: int) -> Callable[[dict], None]:
    def edit(d: dict) -> None:
        d["config"]["default_num_special_tokens"] = n
        d["config"]["default_vocab_size"] = min(n + 1000, 1 << 24)
        d.pop("special_tokens", None)
    return edit


# ---------------------------------------------------------------- big files


def huge_vocab_json(tmp: Path, n: int) -> Path:
    """A ``tokenizer.json`` whose BPE vocabulary has ``n`` entries (written
    in chunks; 10^7 entries are about 190 MB)."""
    path = tmp / "tokenizer.json"
    head = json.dumps({"version": "1.0", "added_tokens": [], "normalizer": {"type": "NFC"},
                       "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                         "use_regex": True},
                       "decoder": {"type": "ByteLevel"}})[:-1]
    with open(path, "w") as f:
        f.write(head + ', "model": {"type": "BPE", "merges": [], "vocab": {')
        f.write(",".join(f"{json.dumps(c)}:{i}" for i, c in enumerate(byte_chars())) + ",")
        step = 1 << 16
        for start in range(256, n, step):
            f.write(",".join(f'"t{i}":{i}' for i in range(start, min(n, start + step))))
            if start + step < n:
                f.write(",")
        f.write("}}}")
    return path


def byte_chars() -> List[str]:
    """GPT-2's printable stand-ins of the 256 bytes (ByteLevel's alphabet)."""
    bs = [*range(33, 127), *range(161, 173), *range(174, 256)]
    cs = list(bs)
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + len(cs) - 188)
    return [chr(c) for _, c in sorted(zip(bs, cs))]


def long_token_json(tmp: Path, normalizer: Any = "keep") -> Path:
    def edit(d: dict) -> None:
        d["model"]["vocab"]["a" * (10 << 20)] = len(d["model"]["vocab"])
    return hf_file(tmp, edit=edit, normalizer=normalizer)


def deep_json(tmp: Path) -> Path:
    path = tmp / "tokenizer.json"
    path.write_text('{"model": ' + "[" * 10**6 + "]" * 10**6 + "}")
    return path


def nested_sequences(tmp: Path) -> Path:
    # json.dumps recurses once per level: write it by hand
    text = '{"type": "NFC"}'
    for _ in range(10_000):
        text = '{"type": "Sequence", "normalizers": [' + text + "]}"
    path = hf_file(tmp)
    d = path.read_text()
    path.write_text(d.replace('"normalizer": {"type": "NFC"}', '"normalizer": ' + text, 1))
    return path


def merge_cycle_native(tmp: Path) -> Path:
    def edit(d: dict) -> None:
        n = 256 + len(d["merges"])
        d["merges"].append([n + 1, 97])  # uses the merge after it
        d["merges"].append([n, 98])  # ... which uses this one
        d["merge_counts"] = d["merge_counts"] + [1, 1]
    return native_file(tmp, edit)


def merge_unknown_hf(tmp: Path) -> Path:
    def edit(d: dict) -> None:
        d["model"]["merges"].append(["zzz", "yyy"])  # the result is in no vocabulary
    return hf_file(tmp, edit=edit)


CASES = [
    # catastrophic regexes
    Case("split-nested-quantifier", lambda t: hf_file(t, split(r"(?:(?=a)a+)+(?=b)|[\s\S]")), "PatternError",
         ["backtrack catastrophically"]),
    Case("split-alternation-in-repeat", lambda t: hf_file(t, split(r"(?:a|(?=a)a)+(?=b)|\s+|\S")), "PatternError",
         ["backtrack catastrophically"]),
    Case("split-backreference", lambda t: hf_file(t, split(r"(a+)+\1b|[\s\S]")), "UnsupportedComponentError", []),
    Case("native-backreference", lambda t: native_file(t, lambda d: d.update(pattern=r"(a+)+\1b|\s+|\S+")),
         "PatternError|FormatError", ["backtrack catastrophically"]),
    Case("normalizer-replace-nested", lambda t: hf_file(t, normalizer={
        "type": "Replace", "pattern": {"Regex": r"((?=x)x*)*y"}, "content": "z"}), "PatternError",
         ["backtrack catastrophically"]),
    Case("native-pattern-nested", lambda t: native_file(t, lambda d: d.update(pattern=r"((?=a)a+)+(?!a)b|\s+|\S+")),
         "PatternError|FormatError", ["backtrack catastrophically"]),
    Case("split-polynomial-long-text", lambda t: hf_file(t, split(r"a*a*(?=b)|[\s\S]")), "PatternError",
         ["backtracks too much"], text=("a" * 300 + "c", 3000), at_load=False),
    Case("native-polynomial-long-text", lambda t: native_file(t, lambda d: d.update(pattern=r"\s*\s*\s*(?=x)|\S|\s")),
         "PatternError", ["backtracks too much"], text=(" " * 400 + "y", 2000), at_load=False),
    # no lookaround: the regex crate runs them, each search in linear time (Oniguruma, in HF, would not: no oracle);
    # but these re-read the run of "a"s from every position (the long alternative fails at its end, then the
    # short one matches): quadratic in the run, so the searches' bytes read are counted and capped
    # (src/pretok/regex_guard.rs: 64 per byte of text plus 1 MiB); past that, a PatternError naming the pattern
    Case("split-exponential-without-lookaround", lambda t: hf_file(t, split(r"(a+)+$|[\s\S]")), "PatternError",
         ["reads too much", "(a+)+(?m:$)"], text=("a" * 10_000 + "b", 2), at_load=False),
    Case("split-quadratic-dollar-alternation", lambda t: hf_file(t, split(r"a+$|.")), "PatternError",
         ["reads too much", "a+(?m:$)|."], text=("a" * 100_000 + "b", 10), at_load=False, guard=120),
    Case("native-quadratic-alternation-1mb", lambda t: native_file(t, lambda d: d.update(pattern=r"a+b|\s+|\S")),
         "PatternError", ["reads too much", "a+b"], text=("a", 1 << 20), at_load=False, guard=120),
    Case("native-alternation-matching-1mb", lambda t: native_file(t, lambda d: d.update(pattern=r"a+b|\s+|\S+")),
         text=("a", 1 << 20)),  # the same pattern, where the short alternative takes the whole run: linear
    # a Unicode \b next to non-ASCII text makes the lazy DFA give up: those searches run in fancy-regex, charged
    # to their match end, so a long ordinary text is not refused (a native pattern: in a tokenizer.json, \b is
    # Oniguruma's, whose word characters differ, and is refused at load)
    Case("native-word-boundary-non-ascii-1mb",
         lambda t: native_file(t, lambda d: d.update(pattern=r"\b\w+\b|\s+|[^\w\s]+")),
         text=("héllo wörld ", 90_000)),
    Case("split-nested-quantifier-linear", lambda t: hf_file(t, split(r"(a|aa)+b|(\w+)*x|[\s\S]")),
         text=("a" * 100 + "c ", 200)),  # 2^100 steps backtracking; runs of 3,000 would read too much (above)
    Case("split-exponential-matching", lambda t: hf_file(t, split(r"(a+)+$|[\s\S]")), text=("a", 200_000),
         oracle=True),
    Case("split-published-long-text", lambda t: hf_file(t, split(r"\s+(?!\S)|\s+|\w+|[^\w\s]+")),
         text=("hello   world  x\n\n ", 20_000), oracle=True),
    # lookaround or atomic groups make fancy-regex run its backtracking VM, which hands pieces to the regex crate
    # ("delegates") without counting what they read, and drops the entries of a lookaround or atomic body that
    # succeeded: a piece of unbounded length there is read again from every position (quadratic; 1 MB of "a" gave
    # no answer in 120 s for the first). Refused at load, naming the piece (src/pretok/regex_guard.rs, check_vm)
    Case("split-lookahead-unbounded-body", lambda t: hf_file(t, split(r"(?=a+b)|[\s\S]")), "PatternError",
         ["any length", "(?=(?:a)+b)"]),
    Case("split-lookbehind-unbounded-body", lambda t: hf_file(t, split(r"(?<=a+)b|[\s\S]")), "PatternError",
         ["any length"]),
    Case("split-tempered-unbounded-body", lambda t: hf_file(t, split(r"(?:(?!a+b)[\s\S])+|x")), "PatternError",
         ["any length"]),
    Case("split-atomic-unbounded-body", lambda t: hf_file(t, split(r"(?>a+)ab|b")), "PatternError", ["any length"]),
    Case("split-delegate-beside-hard-branch", lambda t: hf_file(t, split(r"a(?:[ab]*c)?|(?=x)y")), "PatternError",
         ["any length", "[ab]*c"]),
    Case("native-delegate-beside-hard-branch",
         lambda t: native_file(t, lambda d: d.update(pattern=r"\s*\s*\s*(?=x)|\S+|\s")), "FormatError|PatternError",
         ["any length"]),
    # JSON
    Case("json-deeply-nested", deep_json, "FormatError", []),
    Case("json-nested-sequences", nested_sequences, "FormatError", ["nested"]),
    Case("json-over-1gib", lambda t: sparse(t, "tokenizer.json", GIB + 1, b'{"model": '), "FormatError",
         ["too large"]),
    Case("json-10mb-token-pipeline", long_token_json, "FormatError", []),
    Case("json-10mb-token-byte-model", lambda t: long_token_json(t, normalizer=None), "FormatError", []),
    Case("json-10m-vocab", lambda t: huge_vocab_json(t, int(os.environ.get("HOSTILE_VOCAB", 10**6))), None,
         text=("t1 t2", 1), mem=6 * GIB, guard=1800),  # 10^7 entries: about 5 minutes on a loaded 2-core machine
    Case("native-merge-cycle", merge_cycle_native, "FormatError", ["merge"]),
    Case("hf-merge-unknown-token", merge_unknown_hf, "FormatError", []),
    # protobuf
    Case("sp-truncated", lambda t: sp_bytes(t, SP_MODEL.read_bytes()[: len(SP_MODEL.read_bytes()) // 2]),
         "FormatError", ["not a sentencepiece model"]),
    Case("sp-lying-length", lambda t: sp_bytes(t, b"\x0a" + varint(2**31 - 1) + b"\x0a\x03abc"), "FormatError",
         ["not a sentencepiece model"]),
    Case("sp-lying-length-64bit", lambda t: sp_bytes(t, SP_MODEL.read_bytes()[:100] + b"\x0a" + varint(2**63)),
         "FormatError", ["not a sentencepiece model"]),
    Case("sp-nested-lying-length", lambda t: sp_bytes(t, field_bytes(1, b"\x0a" + varint(10**9) + b"ab")),
         "FormatError", ["not a sentencepiece model"]),
    Case("sp-over-1gib", lambda t: sparse(t, "tokenizer.model", GIB + 1, SP_MODEL.read_bytes()[:64]),
         "FormatError", ["too large"]),
    Case("sp-10mb-piece", lambda t: sp_model(t, lambda m: setattr(m.pieces[300], "piece", b"a" * (10 << 20))),
         "FormatError", []),
    # precompiled charsmaps (a tokenizer.json's Precompiled normalizer; .model files cannot run in this build)
    Case("charsmap-trie-longer-than-data", lambda t: charsmap_json(t, struct.pack("<I", 1 << 30) + b"\x00" * 64),
         "FormatError", ["charsmap"]),
    Case("charsmap-truncated", lambda t: charsmap_json(t, real_charsmap()[: len(real_charsmap()) // 3]),
         "FormatError", ["charsmap"]),
    Case("charsmap-short", lambda t: charsmap_json(t, b"\x01\x02"), "FormatError", ["charsmap"]),
    Case("charsmap-self-referential", lambda t: charsmap_json(t, self_referential_charsmap()),
         text=("hello world ", 20_000)),
    Case("charsmap-real", lambda t: charsmap_json(t, real_charsmap()), text=("hello ﬁ ① Ａ world ", 5_000),
         oracle=True, lossless=False),
    # tekken.json
    Case("tekken-vocab-size-too-large", lambda t: tekken(t, tekken_config(default_vocab_size=10**7)), "FormatError",
         ["inconsistent counts"]),
    Case("tekken-more-specials-than-vocab", lambda t: tekken(t, tekken_config(default_vocab_size=500)),
         "FormatError", ["inconsistent counts"]),
    Case("tekken-200k-specials", lambda t: tekken(t, tekken_config(default_num_special_tokens=200_000)),
         "FormatError", ["special tokens"]),
    Case("tekken-huge-special-count", lambda t: tekken(t, tekken_specials((1 << 24) - 2000)), "FormatError",
         ["special"]),
    Case("tekken-negative-count", lambda t: tekken(t, tekken_config(default_vocab_size=-5)), "FormatError",
         ["default_vocab_size"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_file(case: Case, tmp_path: Path) -> None:
    path = case.build(tmp_path)
    out = run(case, path, tmp_path)
    if case.error:
        assert out.get("error") in case.error.split("|"), f"{case.name}: expected {case.error}, got {out}"
        message = out["message"]
        assert "\n" not in message, f"not one line: {message[:1000]}"
        assert len(message) < 2100, message[:2100]
        for w in case.words:
            assert w in message.lower(), f"{w!r} not in {message[:500]}"
        if case.at_load:
            assert str(path) in message or "tokenizer.json" in message or path.name in message, message[:500]
        return
    assert "error" not in out, f"{case.name}: {out}"
    if case.text is not None and case.lossless:
        assert out["decodes"], out
    if case.oracle:
        text = case.text[0] * case.text[1]
        want = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
        assert json.loads((tmp_path / "ids.json").read_text()) == want


# Llama 3's and o200k's `\s+(?!\S)|\s+` on runs of a million whitespace characters: fancy-regex's VM pushes one
# backtracking entry per character and gave up ("max stack size exceeded"); the alternation now runs without
# the VM (src/pretok/regex_guard.rs, `rewrite`). HF `tokenizers` (Oniguruma) is the oracle: through a tokenizer.json
# whose Split is the preset's regex, the same regex written so that it is no preset, and a native preset.
def _unrecognized(pattern: str) -> str:
    out = pattern.replace(r"\p{N}{1,3}", r"[\p{N}]{1,3}")
    assert out != pattern
    return out


def _whitespace_runs(n: int) -> str:
    return ("x" + " " * n + "hello\t" + "\t" * n + "world" + "\n" * n + " \n" * (n // 2) + "end \u3000"
            + " \t\n" * (n // 3) + "x" + " " * n)


# CI runs 10^6 (past where fancy-regex's VM ran out of stack, about 10^6); HOSTILE_WHITESPACE_RUNS="1000000,3000000"
# is the full run of SECURITY.md (HF takes most of the time: about 20 s for 6 MB)
@pytest.mark.parametrize("n", [int(n) for n in os.environ.get("HOSTILE_WHITESPACE_RUNS", "1000000").split(",")])
@pytest.mark.parametrize("name", ["llama3", "o200k"])
def test_million_whitespace_runs_match_hf(name: str, n: int, tmp_path: Path) -> None:
    from bytepair import patterns
    regex = patterns.PRESETS[name]
    text = _whitespace_runs(n)
    want = None
    for pattern in ([_unrecognized(regex), regex] if n == 10**6 else [_unrecognized(regex)]):
        path = hf_file(tmp_path, split(pattern))
        if want is None:  # the two spellings are the same regex for Oniguruma too: one oracle run
            want = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
        assert Tokenizer.load(str(path)).encode(text) == want, pattern
    if n == 10**6:
        # the native byte model on the preset's lexer, with the same merges as the file (so HF's ids are the same)
        tok = Tokenizer.from_dict({**_trained().to_dict(), "pattern": regex, "pattern_preset": name})
        assert tok.to_dict()["pattern_preset"] == name
        assert tok.encode(text) == want


def test_every_preset_loads_as_a_split_pattern(tmp_path: Path) -> None:
    """Every preset of patterns.py (GPT-2 and cl100k in their possessive form, DeepSeek's and SuperBPE's with
    unbounded lookahead bodies: vetted in src/pretok/regex_guard.rs) loads as a custom Split regex and gives HF's ids."""
    from bytepair import patterns
    text = "Hello  world's 123 4567 ﬁ 日本語テキスト ab!!  \n\n\t x   y \u3000z ..." * 50
    for name, regex in patterns.PRESETS.items():
        Tokenizer.train("hello world " * 20, vocab_size=270, pattern=name).encode(text)  # the native route
        if name == "cl100k":
            continue  # Oniguruma reads its `\p{N}{1,3}+` as `(?:\p{N}{1,3})+` (a nested repetition, refused)
        path = hf_file(tmp_path, split(regex), name=f"{name}.json")
        want = tokenizers.Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids
        assert Tokenizer.load(str(path)).encode(text) == want, name
