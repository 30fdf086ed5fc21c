"""The bad-input battery: every way to give bytepair bad input, on
the command line and through the API, as one table.

Each case is a record: the command line (run for real, ``python -m bytepair``
in a subprocess with a timeout, so a hang fails), the exit status (1; 2 for
usage errors), the words the one-line message must hold (what was wrong and
where: the file, byte offset or line, the bad value, the option), and the
equivalent API call with the exception class it must raise (a ValueError
subclass from ``bytepair.errors``; TypeError for a wrong type) and its
message words. Every failing case also checks: stderr is one line (argparse
may print its usage lines first), no traceback, no Rust panic, nothing on
stdout, and no output or temporary file left anywhere (the output folder
stays empty; the inputs folder is unchanged). Cases that must succeed do so
with a warning that says how many merges were made and why it stopped or go on past
invalid UTF-8 with ``--errors replace``; their CLI result equals the API's.

Inputs live in one read-only folder built once for the module; each case
writes into its own empty output folder (also the subprocess's working
directory). ``@name`` in an argv is the path of input ``name`` (``@out`` is
the output folder, ``@name/rest`` a path below it); a callable argv item
gets the inputs namespace.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import pytest

from bytepair import Tokenizer
from bytepair.counts import count_words
from bytepair.dataset import encode_dataset
from bytepair.errors import (
    BytepairError,
    DisallowedSpecialError,
    EncodeError,
    FormatError,
    InputError,
    PatternError,
    TokenIdTypeError,
    TrainingError,
    TrainingWarning,
    UnknownTokenError,
)

TIMEOUT = 60  # seconds per command: far above the ~0.4 s each takes, so only a hang reaches it

TEXT = "the cat sat on the mat. the dog sat on the log! <|endoftext|> naïve café 🙂\n" * 5
EOT = "<|endoftext|>"
PATHOLOGICAL = r"(a|aa)+(?!a)\1Z|."  # exponential backtracking on "aaa...": fancy-regex's limit stops it
HUGE = 10**12

Arg = Union[str, bytes, Callable[[Any], str]]


# ---------------------------------------------------------------- the inputs


def _unreadable(folder: Path) -> Path:
    """A file that cannot be read: mode 000, or (as root, who reads it anyway)
    a symbolic link to itself, which nobody can open."""
    path = folder / "unreadable.txt"
    path.write_text("some words here", encoding="utf-8")
    path.chmod(0)
    try:
        with open(path, "rb"):
            pass
    except PermissionError:
        return path
    path.unlink()
    os.symlink(path.name, path)
    return path


def _tree(folder: Path) -> Dict[str, Tuple[bool, int]]:
    """Every entry below ``folder`` (hidden ones too) with its kind and size."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            out[os.path.relpath(path, folder)] = (os.path.isdir(path), st.st_size)
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_input")  # watched whole: nothing may appear next to the inputs either
    d = root / "inputs"
    d.mkdir()
    files = {
        "corpus": ("corpus.txt", TEXT.encode()),
        "empty": ("empty.txt", b""),
        "blank": ("blank.txt", b"   \n\t  \n \n"),
        # byte model: one-byte pieces only; char model: one-letter words (pairs only with the marker)
        "nopairs": ("nopairs.txt", b"a\nb\nc\na\n"),
        "bad": ("bad.txt", b"the cat\nsat on\xff the mat\n"),  # invalid byte at offset 14
        "bad_end": ("bad_end.txt", b"ok caf\xc3"),  # truncated character at offset 6
        "nul": ("nul.txt", b"a\x00b a\x00b\x00\x00 c\x00d\n\x00\x00\x00 ab\x00\n" * 3),
        "patho": ("patho.txt", b"a" * 60),
        "zzz": ("zzz.txt", b"zzz qqq\n"),
        "surrogate": ("surrogate.jsonl", b'{"text": "ok"}\n{"text": "a\\ud800b"}\n'),
        "empty_tok": ("empty.json", b""),
        "hf_bad": ("tokenizer.json", b'{"version": "1.0"}'),
        "bad_tiktoken": ("bad.tiktoken", b"YQ== 0\nnot base64 !\n"),
        "bad_codes": ("bad.codes", b"#version: 0.2\na b c\n"),
    }
    paths: Dict[str, Any] = {}
    for name, (filename, data) in files.items():
        (d / filename).write_bytes(data)
        paths[name] = str(d / filename)
    byte = Tokenizer.train(TEXT, vocab_size=280, special_tokens=[EOT])
    char = Tokenizer.train(TEXT, model="char", num_merges=20, special_tokens=[EOT])
    byte.save(str(d / "tok.json"))
    char.save(str(d / "ctok.json"))
    byte.save(str(d / "tok.tiktoken"), format="tiktoken")
    text = (d / "tok.json").read_bytes()
    (d / "truncated.json").write_bytes(text[: len(text) // 2])
    (d / "adir").mkdir()
    (d / "gpt2half").mkdir()
    (d / "gpt2half" / "vocab.json").write_text("{}", encoding="utf-8")
    paths.update(
        inputs=str(d), tok=str(d / "tok.json"), ctok=str(d / "ctok.json"), tiktoken=str(d / "tok.tiktoken"),
        truncated=str(d / "truncated.json"), adir=str(d / "adir"), gpt2half=str(d / "gpt2half"),
        unreadable=str(_unreadable(d)),
        missing=str(d / "missing.txt"), missing_tok=str(d / "missing.json"),
    )
    env = SimpleNamespace(byte=Tokenizer.load(paths["tok"]), char=Tokenizer.load(paths["ctok"]), root=str(root),
                          **paths)
    env.snapshot = _tree(root)
    return env


# ---------------------------------------------------------------- the table


@dataclass
class Case:
    id: str
    argv: Sequence[Arg]
    status: int  # 0 ok, 1 error, 2 usage error
    words: Sequence[str] = ()  # in the error line; for status 0, on stderr
    api: Optional[Callable[[Any], Any]] = None  # the same thing through the API
    exc: Optional[type] = None  # what the API raises (None: it succeeds)
    api_words: Sequence[str] = ()  # in the API's message (or its warning, for status 0)
    stdin: bytes = b""
    # status 0 only
    outputs: Sequence[str] = ()  # exactly what the output folder holds afterwards
    same_as_api: Optional[str] = None  # this output is a tokenizer equal to what ``api`` returns
    stdout: Optional[Callable[[Any], str]] = None  # the expected standard output
    n_vocab: Optional[int] = None


def fail(id, argv, words, api=None, exc=None, api_words=(), stdin=b""):
    """An error: exit status 1, one line."""
    return Case(id, argv, 1, words, api, exc, api_words, stdin)


def usage(id, argv, words, api=None, exc=None, api_words=()):
    """A usage error caught by argparse: exit status 2."""
    return Case(id, argv, 2, words, api, exc, api_words)


def ok(id, argv, words=(), api=None, api_words=(), stdin=b"", **expect):
    """A command that must succeed (with a warning when ``api_words`` is set)."""
    return Case(id, argv, 0, words, api, None, api_words, stdin, **expect)


def _train(e, files, **options):
    return Tokenizer.train_from_files([getattr(e, f) for f in files], **options)


def _json_piece(piece: bytes):
    """A piece as ``tokenize --json`` gives it: its text, or its bytes when it is not UTF-8."""
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return list(piece)


def _load(path, **options):
    return Tokenizer.load(path, **options)


RAN_OUT = "no adjacent pair is left in any word"
BAD_14 = ("bad.txt", "invalid UTF-8 at byte offset 14", "0xFF")
BAD_REPLACED = "the cat\nsat on\ufffd the mat\n"  # bad.txt with --errors replace
TRAIN_O = ("-o", "@out/t.json")

CASES = [
    # ------------------------------------------------------------ train: the corpus
    fail("train/empty-file", ["train", "@empty", *TRAIN_O], ["corpus is empty"],
         lambda e: _train(e, ["empty"]), TrainingError, ["corpus is empty"]),
    fail("train/whitespace-only-char", ["train", "@blank", "--model", "char", *TRAIN_O], ["corpus is empty"],
         lambda e: Tokenizer.train("   \n\t  \n \n", model="char"), TrainingError, ["corpus is empty"]),
    fail("train/empty-stdin", ["train", "-", *TRAIN_O], ["corpus is empty"],
         lambda e: Tokenizer.train(""), TrainingError, ["corpus is empty"]),
    fail("train/no-files", ["train", *TRAIN_O], ["nothing to train on", "FILE"],
         lambda e: Tokenizer.train([]), TrainingError, ["corpus is empty"]),
    fail("train/missing-file", ["train", "@corpus", "@missing", *TRAIN_O], ["missing.txt", "no such file"],
         lambda e: _train(e, ["corpus", "missing"]), InputError, ["missing.txt", "no such file"]),
    fail("train/folder-as-file", ["train", "@adir", *TRAIN_O], ["adir", "is a folder"],
         lambda e: _train(e, ["adir"]), InputError, ["adir", "is a folder"]),
    fail("train/unreadable", ["train", "@unreadable", *TRAIN_O], ["unreadable.txt", "cannot read"],
         lambda e: _train(e, ["unreadable"]), InputError, ["unreadable.txt", "cannot read"]),
    fail("train/glob-matches-nothing", ["train", "@inputs/nothing*.txt", *TRAIN_O],
         ["nothing*.txt", "no file matches"]),
    fail("train/invalid-utf8", ["train", "@bad", *TRAIN_O], [*BAD_14, "--errors replace"],
         lambda e: _train(e, ["bad"]), InputError, [*BAD_14, "errors='replace'"]),
    fail("train/invalid-utf8-char", ["train", "@corpus", "@bad_end", "--model", "char", *TRAIN_O],
         ["bad_end.txt", "byte offset 6", "0xC3"],
         lambda e: _train(e, ["corpus", "bad_end"], model="char"), InputError, ["bad_end.txt", "byte offset 6"]),
    fail("train/invalid-utf8-stdin", ["train", "-", *TRAIN_O], ["<stdin>", "byte offset 3", "0xFF"],
         lambda e: Tokenizer.train(b"abc\xff"), TrainingError, ["bytes"], stdin=b"abc\xff def"),
    fail("train/jsonl-lone-surrogate", ["train", "@surrogate", *TRAIN_O], ["surrogate.jsonl", "line 2", "surrogate"],
         lambda e: _train(e, ["surrogate"]), InputError, ["surrogate.jsonl", "line 2", "surrogate"]),
    fail("train/counts-not-counts", ["train", "--from-counts", "@corpus", *TRAIN_O],
         ["corpus.txt", "line 1", "not a bytepair counts file"],
         lambda e: Tokenizer.train_from_counts([e.corpus]), FormatError, ["corpus.txt", "line 1"]),
    fail("train/init-not-a-tokenizer", ["train", "@corpus", "--init", "@corpus", *TRAIN_O],
         ["corpus.txt", "not a valid bytepair tokenizer file", "line 1"],
         lambda e: _load(e.corpus), FormatError, ["corpus.txt", "line 1"]),
    # ------------------------------------------------------------ train: sizes and options
    fail("train/vocab-size-0", ["train", "@corpus", "--vocab-size", "0", *TRAIN_O], ["--vocab-size 0", "smaller", "256"],
         lambda e: _train(e, ["corpus"], vocab_size=0), TrainingError, ["vocab_size 0", "256"]),
    fail("train/vocab-size-negative", ["train", "@corpus", "--vocab-size", "-1", *TRAIN_O], ["--vocab-size", "-1"],
         lambda e: _train(e, ["corpus"], vocab_size=-1), TrainingError, ["vocab_size", "-1"]),
    fail("train/vocab-size-below-base-char", ["train", "@corpus", "--model", "char", "--vocab-size", "5", *TRAIN_O],
         ["--vocab-size 5", "smaller", "base symbols"],
         lambda e: _train(e, ["corpus"], model="char", vocab_size=5), TrainingError, ["vocab_size 5", "base symbols"]),
    fail("train/vocab-size-below-base-with-special",
         ["train", "@corpus", "--vocab-size", "256", "--special", EOT, *TRAIN_O], ["--vocab-size 256", "1 special"],
         lambda e: _train(e, ["corpus"], vocab_size=256, special_tokens=[EOT]), TrainingError, ["vocab_size 256"]),
    fail("train/merges-negative", ["train", "@corpus", "--merges", "-5", *TRAIN_O], ["--merges", "-5"],
         lambda e: _train(e, ["corpus"], num_merges=-5), TrainingError, ["num_merges", "-5"]),
    fail("train/min-frequency-negative", ["train", "@corpus", "--min-frequency", "-1", *TRAIN_O],
         ["--min-frequency", "-1"],
         lambda e: _train(e, ["corpus"], min_frequency=-1), TrainingError, ["min_frequency", "-1"]),
    fail("train/max-token-length-0", ["train", "@corpus", "--max-token-length", "0", *TRAIN_O],
         ["--max-token-length", "0"],
         lambda e: _train(e, ["corpus"], max_token_length=0), TrainingError, ["max_token_length", "0"]),
    usage("train/vocab-size-not-a-number", ["train", "@corpus", "--vocab-size", "abc", *TRAIN_O],
          ["--vocab-size", "'abc'"],
          lambda e: _train(e, ["corpus"], vocab_size="abc"), TrainingError, ["vocab_size", "'abc'"]),
    usage("train/merges-not-an-integer", ["train", "@corpus", "--merges", "1.5", *TRAIN_O], ["--merges", "'1.5'"],
          lambda e: _train(e, ["corpus"], num_merges=1.5), TrainingError, ["num_merges", "1.5"]),
    usage("train/tie-break", ["train", "@corpus", "--tie-break", "x", *TRAIN_O], ["--tie-break", "'x'"],
          lambda e: _train(e, ["corpus"], tie_break="x"), TrainingError, ["tie_break", "'x'"]),
    usage("train/model", ["train", "@corpus", "--model", "word", *TRAIN_O], ["--model", "'word'"],
          lambda e: _train(e, ["corpus"], model="word"), TrainingError, ["model", "'word'"]),
    usage("train/max-bytes", ["train", "@corpus", "--max-bytes", "lots", *TRAIN_O], ["--max-bytes", "'lots'"]),
    fail("train/unknown-output-format", ["train", "@corpus", "--to", "frob", *TRAIN_O], ["unknown format 'frob'"],
         lambda e: e.byte.save(os.path.join(e.out, "t.json"), format="frob"), FormatError, ["'frob'"]),
    fail("train/invalid-regex", ["train", "@corpus", "--pattern", "(", *TRAIN_O], ["invalid regex", '"("'],
         lambda e: _train(e, ["corpus"], pattern="("), PatternError, ["invalid regex", '"("']),
    fail("train/invalid-regex-char", ["train", "@corpus", "--model", "char", "--pattern", "[", *TRAIN_O],
         ["invalid regex", '"["'],
         lambda e: _train(e, ["corpus"], model="char", pattern="["), PatternError, ["invalid regex", '"["']),
    fail("train/pathological-regex", ["train", "@patho", "--pattern", PATHOLOGICAL, *TRAIN_O],
         ["regex", "backtracking"],
         lambda e: _train(e, ["patho"], pattern=PATHOLOGICAL), PatternError, ["regex", "backtracking"]),
    fail("train/empty-special-token", ["train", "@corpus", "--special", "", *TRAIN_O], ["special token ''"],
         lambda e: _train(e, ["corpus"], special_tokens=[""]), BytepairError, ["special token ''"]),
    fail("train/output-in-missing-folder", ["train", "@corpus", "-o", "@out/no/such/t.json"],
         ["cannot write", "no/such/t.json", "does not exist"],
         lambda e: e.byte.save(os.path.join(e.out, "no", "such", "t.json")), InputError,
         ["cannot write", "does not exist"]),
    fail("train/output-is-a-folder", ["train", "@corpus", "-o", "@adir"], ["cannot write", "adir", "is a folder"],
         lambda e: e.byte.save(e.adir), InputError, ["cannot write", "adir", "is a folder"]),
    # ------------------------------------------------------------ train: what must succeed, with a warning
    ok("train/no-pairs-warns", ["train", "@nopairs", "--vocab-size", "300", *TRAIN_O],
       ["warning:", f"after 0 merges because {RAN_OUT}", "256 tokens"],
       lambda e: _train(e, ["nopairs"], vocab_size=300), [f"after 0 merges because {RAN_OUT}"],
       outputs=["t.json"], same_as_api="t.json", n_vocab=256),
    ok("train/no-pairs-warns-char", ["train", "@nopairs", "--model", "char", "--no-end-of-word", "--merges", "5",
                                     *TRAIN_O],
       ["warning:", f"after 0 merges because {RAN_OUT}", "3 tokens"],
       lambda e: _train(e, ["nopairs"], model="char", end_of_word=None, num_merges=5), ["after 0 merges"],
       outputs=["t.json"], same_as_api="t.json", n_vocab=3),
    ok("train/runs-out-of-pairs-char", ["train", "@nopairs", "--model", "char", "--merges", "5", *TRAIN_O],
       ["warning:", f"after 3 merges because {RAN_OUT}"],
       lambda e: _train(e, ["nopairs"], model="char", num_merges=5), ["after 3 merges"],
       outputs=["t.json"], same_as_api="t.json", n_vocab=7),
    ok("train/min-frequency-not-reached", ["train", "@corpus", "--merges", "50", "--min-frequency", "12", *TRAIN_O],
       ["warning:", "merges because no pair occurs at least --min-frequency 12 times"],
       lambda e: _train(e, ["corpus"], num_merges=50, min_frequency=12), ["min_frequency=12"],
       outputs=["t.json"], same_as_api="t.json"),
    ok("train/huge-vocab-size", ["train", "@corpus", "--vocab-size", str(HUGE), *TRAIN_O],
       ["warning:", f"merges because {RAN_OUT}"],
       lambda e: _train(e, ["corpus"], vocab_size=HUGE), [RAN_OUT], outputs=["t.json"], same_as_api="t.json"),
    ok("train/vocab-size-2**64-char", ["train", "@corpus", "--model", "char", "--vocab-size", str(2**64), *TRAIN_O],
       ["warning:", f"merges because {RAN_OUT}"],
       lambda e: _train(e, ["corpus"], model="char", vocab_size=2**64), [RAN_OUT],
       outputs=["t.json"], same_as_api="t.json"),
    ok("train/merges-2**64", ["train", "@corpus", "--merges", str(2**64), *TRAIN_O],
       ["warning:", f"merges because {RAN_OUT}"],
       lambda e: _train(e, ["corpus"], num_merges=2**64), [RAN_OUT], outputs=["t.json"], same_as_api="t.json"),
    ok("train/merges-0", ["train", "@corpus", "--merges", "0", *TRAIN_O], ["trained 0 merges, 256 tokens"],
       lambda e: _train(e, ["corpus"], num_merges=0), outputs=["t.json"], same_as_api="t.json", n_vocab=256),
    ok("train/whitespace-only-byte", ["train", "@blank", "--merges", "2", *TRAIN_O], ["trained 2 merges"],
       lambda e: _train(e, ["blank"], num_merges=2), outputs=["t.json"], same_as_api="t.json", n_vocab=258),
    # without --vocab-size: Hugging Face's default size, more than this corpus allows (hence the warning)
    ok("train/errors-replace", ["train", "@bad", "--errors", "replace", *TRAIN_O], ["trained", "warning:", RAN_OUT],
       lambda e: _train(e, ["bad"], errors="replace", vocab_size=30000), [RAN_OUT], outputs=["t.json"],
       same_as_api="t.json"),
    ok("train/nul-bytes", ["train", "@nul", "--vocab-size", "264", *TRAIN_O], ["trained 8 merges, 264 tokens"],
       lambda e: _train(e, ["nul"], vocab_size=264), outputs=["t.json"], same_as_api="t.json", n_vocab=264),
    # ------------------------------------------------------------ encode
    fail("encode/disallowed-special", ["encode", "-t", "@tok", "hi <|endoftext|>"],
         [f'"{EOT}"', f'--allowed-special "{EOT}"', "--ordinary"],
         lambda e: e.byte.encode("hi <|endoftext|>"), DisallowedSpecialError, [EOT, "allowed_special"]),
    fail("encode/disallowed-special-char", ["encode", "-t", "@ctok", "the <|endoftext|>"],
         [f'"{EOT}"', "--allowed-special"],
         lambda e: e.char.encode("the <|endoftext|>"), DisallowedSpecialError, [EOT, "allowed_special"]),
    fail("encode/invalid-utf8-stdin", ["encode", "-t", "@tok"], ["<stdin>", "byte offset 14", "0xFF"],
         lambda e: e.byte.encode(b"sat on\xff"), TypeError, ["str", "bytes"],
         stdin=b"the cat\nsat on\xff the mat\n"),
    fail("encode/invalid-utf8-argument", ["encode", "-t", "@tok", b"ab\xffc"],
         ["TEXT argument", "byte offset 2", "0xFF", "--errors replace"]),
    fail("encode/unknown-character-char", ["encode", "-t", "@ctok", "the zebra"],
         ['character "z"', "position 4", "--byte-fallback", "--unk-token"],
         lambda e: e.char.encode("the zebra"), EncodeError, ['character "z"', "position 4"]),
    fail("encode/dropout-above-1", ["encode", "-t", "@tok", "--dropout", "2", "the cat"], ["dropout", "2"],
         lambda e: e.byte.encode("the cat", dropout=2), BytepairError, ["dropout", "2"]),
    fail("encode/dropout-negative-char", ["encode", "-t", "@ctok", "--dropout", "-0.5", "the cat"],
         ["dropout", "-0.5"],
         lambda e: e.char.encode("the cat", dropout=-0.5), BytepairError, ["dropout", "-0.5"]),
    usage("encode/dropout-not-a-number", ["encode", "-t", "@tok", "--dropout", "x", "the cat"], ["--dropout", "'x'"],
          lambda e: e.byte.encode("the cat", dropout="x"), BytepairError, ["dropout", "'x'"]),
    fail("encode/missing-tokenizer", ["encode", "-t", "@missing_tok", "x"], ["missing.json", "no such tokenizer file"],
         lambda e: _load(e.missing_tok), InputError, ["missing.json", "no such file"]),
    fail("encode/empty-tokenizer-file", ["encode", "-t", "@empty_tok", "x"],
         ["empty.json", "not a valid bytepair tokenizer file", "line 1"],
         lambda e: _load(e.empty_tok), FormatError, ["empty.json", "line 1"]),
    fail("encode/truncated-tokenizer-file", ["encode", "-t", "@truncated", "x"],
         ["truncated.json", "not a valid bytepair tokenizer file", "line"],
         lambda e: _load(e.truncated), FormatError, ["truncated.json", "line"]),
    fail("encode/wrong-format-option", ["encode", "-t", "@tok", "--format", "tiktoken", "x"],
         ["tok.json", "line 1", "not a valid .tiktoken file"],
         lambda e: _load(e.tok, format="tiktoken"), FormatError, ["tok.json", "line 1", ".tiktoken"]),
    fail("encode/unknown-format-option", ["encode", "-t", "@tok", "--format", "frob", "x"], ["unknown format 'frob'"],
         lambda e: _load(e.tok, format="frob"), FormatError, ["'frob'"]),
    fail("encode/folder-as-tokenizer", ["encode", "-t", "@adir", "x"], ["adir", "vocab.json", "no such file"],
         lambda e: _load(e.adir), InputError, ["adir", "vocab.json"]),
    fail("encode/unreadable-tokenizer", ["encode", "-t", "@unreadable", "x"], ["unreadable.txt", "cannot read"],
         lambda e: _load(e.unreadable), InputError, ["unreadable.txt", "cannot read"]),
    # every loader reports what goes wrong while building the tokenizer as a FormatError naming the file
    fail("encode/invalid-regex-for-tiktoken", ["encode", "-t", "@tiktoken", "--pattern", "(a", "x"],
         ["tok.tiktoken", "invalid regex", '"(a"', "position 2"],
         lambda e: _load(e.tiktoken, pattern="(a"), FormatError, ["tok.tiktoken", "invalid regex", '"(a"']),
    fail("encode/pathological-regex", ["encode", "-t", "@tiktoken", "--pattern", PATHOLOGICAL, "a" * 60],
         ["regex", "backtracking"],
         # refused when the tokenizer is built (issue 17: a repeated alternation in a backtracking pattern)
         lambda e: _load(e.tiktoken, pattern=PATHOLOGICAL).encode("a" * 60), FormatError, ["backtracking"]),
    fail("encode/gpt2-folder-without-merges", ["encode", "-t", "@gpt2half", "x"], ["merges.txt", "no such file"],
         lambda e: _load(e.gpt2half), InputError, ["merges.txt"]),
    ok("encode/errors-replace-argument", ["encode", "-t", "@tok", "--errors", "replace", b"ab\xffc"],
       stdout=lambda e: " ".join(map(str, e.byte.encode("ab\ufffdc"))) + "\n"),
    # ------------------------------------------------------------ tokenize
    fail("tokenize/invalid-utf8-stdin", ["tokenize", "-t", "@ctok"], ["<stdin>", "byte offset 6", "0xC3"],
         lambda e: e.char.tokenize(b"ok caf\xc3"), TypeError, ["str", "bytes"], stdin=b"ok caf\xc3"),
    fail("tokenize/malformed-tiktoken", ["tokenize", "-t", "@bad_tiktoken", "x"],
         ["bad.tiktoken", "line 2", "not a valid .tiktoken file"],
         lambda e: _load(e.bad_tiktoken), FormatError, ["bad.tiktoken", "line 2"]),
    fail("tokenize/hf-file-without-model", ["tokenize", "-t", "@hf_bad", "x"], ["tokenizer.json", "'model'"],
         lambda e: _load(e.hf_bad), FormatError, ["tokenizer.json", "'model'"]),
    ok("tokenize/errors-replace-stdin", ["tokenize", "-t", "@tok", "--errors", "replace", "--json"],
       stdin=b"caf\xc3", stdout=lambda e: json.dumps([_json_piece(p) for p in e.byte.tokenize("caf\ufffd")]) + "\n"),
    # ------------------------------------------------------------ decode
    fail("decode/negative-id", ["decode", "-t", "@tok", "-3"], ["token id -3", "not in the vocabulary"],
         lambda e: e.byte.decode([-3]), UnknownTokenError, ["token id -3"]),
    fail("decode/id-equal-to-n-vocab", ["decode", "-t", "@tok", "97", lambda e: str(e.byte.n_vocab)],
         ["token id 280", "not in the vocabulary", "n_vocab is 280"],
         lambda e: e.byte.decode([97, e.byte.n_vocab]), UnknownTokenError, ["token id 280"]),
    fail("decode/id-out-of-range-char", ["decode", "-t", "@ctok", "99999"], ["token id 99999", "not in the vocabulary"],
         lambda e: e.char.decode([99999]), UnknownTokenError, ["token id 99999"]),
    fail("decode/id-2**64", ["decode", "-t", "@tok", str(2**64)], [f"token id {2**64}"],
         lambda e: e.byte.decode([2**64]), UnknownTokenError, [f"token id {2**64}"]),
    fail("decode/id-not-a-number", ["decode", "-t", "@tok", "12", "abc"], ["'abc'", "not a token id"],
         lambda e: e.byte.decode([12, "abc"]), UnknownTokenError, ["'abc'", "position 1", "not an integer"]),
    fail("decode/id-not-an-integer", ["decode", "-t", "@ctok", "1.5"], ["'1.5'", "not a token id"],
         lambda e: e.char.decode([1.5]), UnknownTokenError, ["1.5", "not an integer"]),
    fail("decode/id-not-a-number-stdin", ["decode", "-t", "@tok"], ["'x'", "not a token id"], stdin=b"1 2 x 3\n"),
    fail("decode/invalid-utf8-stdin", ["decode", "-t", "@tok"], ["<stdin>", "byte offset 2", "0xFF"],
         stdin=b"1 \xff 3"),
    fail("decode/strict-invalid-utf8-tokens", ["decode", "-t", "@tok", "--decode-errors", "strict", "97", "255"],
         ["not valid UTF-8", "byte offset 1", "0xFF", "--decode-errors"],
         lambda e: e.byte.decode([97, 255], errors="strict"), UnicodeDecodeError, ["0xff", "position 1"]),
    # ------------------------------------------------------------ count
    fail("count/missing-file", ["count", "-t", "@tok", "@corpus", "@missing"], ["missing.txt", "no such file"]),
    fail("count/unreadable", ["count", "-t", "@tok", "@unreadable"], ["unreadable.txt", "cannot read"]),
    fail("count/invalid-utf8", ["count", "-t", "@tok", "@corpus", "@bad"], [*BAD_14, "--errors replace"]),
    ok("count/errors-replace", ["count", "-t", "@tok", "--errors", "replace", "@bad"],
       stdout=lambda e: f"{e.byte.count(BAD_REPLACED)}\t{e.bad}\n"),
    # ------------------------------------------------------------ convert
    fail("convert/missing-input", ["convert", "@missing_tok", "@out/t.json"], ["missing.json", "no such tokenizer"],
         lambda e: _load(e.missing_tok), InputError, ["missing.json", "no such file"]),
    fail("convert/output-name-says-no-format", ["convert", "@tok", "@out/t.frob"], ["t.frob", "--to"]),
    usage("convert/unknown-to", ["convert", "@tok", "@out/t.json", "--to", "frob"], ["--to", "'frob'"]),
    fail("convert/char-model-to-tiktoken", ["convert", "@ctok", "@out/t.tiktoken"], ["tiktoken", "char-model"],
         lambda e: e.char.save(os.path.join(e.out, "t.tiktoken"), format="tiktoken"), FormatError, ["char-model"]),
    fail("convert/output-is-a-folder", ["convert", "@tok", "@adir", "--to", "bytepair"], ["adir", "is a folder"]),
    fail("convert/malformed-codes", ["convert", "@bad_codes", "@out/t.json"], ["bad.codes", "line 2", "subword-nmt"],
         lambda e: _load(e.bad_codes), FormatError, ["bad.codes", "line 2"]),
    fail("convert/bad-special-option", ["convert", "@tiktoken", "@out/t.json", "--special", "<|x|>=abc"],
         ["--special", "'<|x|>=abc'", "TEXT=ID"]),
    # ------------------------------------------------------------ inspect
    fail("inspect/invalid-grep", ["inspect", "-t", "@tok", "--grep", "("], ["--grep '('", "not a valid regular"]),
    fail("inspect/negative-limit", ["inspect", "-t", "@ctok", "--limit", "-1"], ["--limit"]),
    # ------------------------------------------------------------ show
    fail("show/html-in-missing-folder", ["show", "-t", "@tok", "--html", "@out/no/x.html", "hi"],
         ["cannot write", "no/x.html", "does not exist"]),
    fail("show/html-is-a-folder", ["show", "-t", "@tok", "--html", "@adir", "hi"], ["adir", "is a folder"]),
    fail("show/unknown-allowed-special", ["show", "-t", "@tok", "--allowed-special", "<|nope|>", "hi"],
         ["--allowed-special <|nope|>", "not a special token"]),
    fail("show/invalid-utf8-stdin", ["show", "-t", "@ctok", "--color", "never"], ["<stdin>", "byte offset 3"],
         stdin=b"abc\xff"),
    # ------------------------------------------------------------ compare
    fail("compare/invalid-utf8", ["compare", "-t", "@tok", "@bad"], [*BAD_14]),
    # ------------------------------------------------------------ count-words
    fail("count-words/invalid-utf8", ["count-words", "@bad", "-o", "@out/c.counts"], [*BAD_14, "--errors replace"],
         lambda e: count_words([e.bad], None, []), InputError, [*BAD_14]),
    fail("count-words/nothing-to-count", ["count-words", "-o", "@out/c.counts"], ["nothing to count"]),
    fail("count-words/invalid-regex", ["count-words", "@corpus", "--pattern", "(", "-o", "@out/c.counts"],
         ["invalid regex", '"("'],
         lambda e: count_words([e.corpus], "(", []), PatternError, ["invalid regex"]),
    usage("count-words/negative-max-bytes", ["count-words", "@corpus", "--max-bytes", "-5", "-o", "@out/c.counts"],
          ["--max-bytes", "'-5'"]),
    ok("count-words/errors-replace", ["count-words", "@bad", "--errors", "replace", "-o", "@out/c.counts"],
       ["counted"], outputs=["c.counts"]),
    # ------------------------------------------------------------ encode-dataset
    fail("encode-dataset/invalid-utf8", ["encode-dataset", "-t", "@tok", "@corpus", "@bad", "-o", "@out/ds"],
         [*BAD_14, "--errors replace"],
         lambda e: encode_dataset(e.byte, [e.corpus, e.bad], os.path.join(e.out, "ds")), InputError, [*BAD_14]),
    fail("encode-dataset/unknown-character-char", ["encode-dataset", "-t", "@ctok", "@zzz", "-o", "@out/ds"],
         ["zzz.txt", "document 0", 'character "z"', "position 0"],
         lambda e: encode_dataset(e.char, [e.zzz], os.path.join(e.out, "ds")), EncodeError, ["zzz.txt", '"z"']),
    fail("encode-dataset/output-not-empty", ["encode-dataset", "-t", "@tok", "@corpus", "-o", "@inputs"],
         ["exists and is not empty"],
         lambda e: encode_dataset(e.byte, [e.corpus], e.inputs), InputError, ["exists and is not empty"]),
    fail("encode-dataset/unknown-eot-token", ["encode-dataset", "-t", "@tok", "@corpus", "--eot-token", "<|nope|>",
                                              "-o", "@out/ds"], ["'<|nope|>'", "not a special token"],
         lambda e: encode_dataset(e.byte, [e.corpus], os.path.join(e.out, "ds"), append_eot="<|nope|>"),
         BytepairError, ["'<|nope|>'"]),
    usage("encode-dataset/shard-size-0", ["encode-dataset", "-t", "@tok", "@corpus", "--shard-mb", "0",
                                          "-o", "@out/ds"], ["--shard-mb", "'0'"]),
    ok("encode-dataset/errors-replace", ["encode-dataset", "-t", "@tok", "@bad", "--errors", "replace",
                                         "-o", "@out/ds"], ["encoded 1 documents"], outputs=["ds"]),
]

assert len({c.id for c in CASES}) == len(CASES)
for _c in CASES:  # the table's own rules
    assert _c.exc is None or issubclass(_c.exc, (BytepairError, TypeError, UnicodeDecodeError)), _c.id
    assert _c.status != 0 or _c.exc is None, _c.id  # a case that succeeds on the command line succeeds in the API


# ---------------------------------------------------------------- running a case


def _arg(a: Arg, names: Dict[str, str], e: Any) -> Union[str, bytes]:
    if callable(a):
        return a(e)
    if isinstance(a, str) and a.startswith("@"):
        head, _, rest = a[1:].partition("/")
        return os.path.join(names[head], *rest.split("/")) if rest else names[head]
    return a


def run_cli(case: Case, e: Any, out: Path) -> subprocess.CompletedProcess:
    names = {k: v for k, v in vars(e).items() if isinstance(v, str)}
    argv = [_arg(a, names, e) for a in case.argv]
    env = dict(os.environ, NO_COLOR="1", COLUMNS="80")
    try:
        return subprocess.run(
            [sys.executable, "-m", "bytepair", *argv],
            input=case.stdin, capture_output=True, timeout=TIMEOUT, cwd=str(out), env=env,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"bytepair {case.argv[0]} hung (no answer in {TIMEOUT} s)")


def check_stderr(case: Case, err: str) -> None:
    for bad in ("Traceback", "panicked", "PanicException"):
        assert bad not in err, err
    if case.status == 0:
        for word in case.words:
            assert word in err, f"{word!r} not in {err!r}"
        if not any("warning" in word for word in case.words):
            assert "warning" not in err, err
        return
    lines = err.strip().splitlines()
    assert lines, "no message on stderr"
    if case.status == 1:
        assert len(lines) == 1, f"not one line:\n{err}"
    else:  # argparse prints its usage lines first
        assert all(line.startswith(("usage: ", " ")) for line in lines[:-1]), err
    line = lines[-1]
    assert line.startswith(f"bytepair {case.argv[0]}: error: "), line
    for word in case.words:
        assert word in line, f"{word!r} not in {line!r}"


def check_api(case: Case, e: Any) -> Any:
    """Calls ``case.api``: it raises ``case.exc`` with ``case.api_words``, or
    it succeeds (warning with ``case.api_words`` when given) and its result
    is returned."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = case.api(e)
        except BaseException as err:  # noqa: B036: a PanicException is a BaseException
            assert type(err).__name__ != "PanicException", repr(err)
            assert case.exc is not None, f"the API call raised {err!r}"
            assert isinstance(err, case.exc), f"{type(err).__name__} is not {case.exc.__name__}: {err}"
            message = str(err)
            for word in case.api_words:
                assert word in message, f"{word!r} not in {message!r}"
            return None
    assert case.exc is None, f"the API call did not raise {case.exc.__name__}"
    warned = [str(w.message) for w in caught if issubclass(w.category, TrainingWarning)]
    assert len(warned) == (1 if case.api_words else 0), warned
    if case.api_words:
        for word in case.api_words:
            assert word in warned[0], f"{word!r} not in {warned[0]!r}"
    return result


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, inputs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    e = SimpleNamespace(**vars(inputs), out=str(out))
    done = run_cli(case, e, out)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == case.status, f"exit status {done.returncode}, expected {case.status}:\n{err}"
    check_stderr(case, err)
    if case.status:
        assert done.stdout == b"", done.stdout
        assert sorted(os.listdir(out)) == [], "an output or a temporary file was left behind"
    else:
        assert sorted(os.listdir(out)) == sorted(case.outputs), "outputs (and nothing else, no temporary file)"
        if case.stdout is not None:
            assert done.stdout.decode("utf-8") == case.stdout(e)
    assert _tree(Path(inputs.root)) == inputs.snapshot, "something was written next to the inputs"

    if case.api is not None:
        # the API writes into a fresh folder of its own, for the same checks
        api_out = tmp_path / "api"
        api_out.mkdir()
        e.out = str(api_out)
        result = check_api(case, e)
        if case.status:
            assert sorted(os.listdir(api_out)) == [], "the API left a file behind"
        if case.same_as_api is not None:
            assert isinstance(result, Tokenizer)
            from_cli = Tokenizer.load(str(out / case.same_as_api))
            assert from_cli.to_dict() == result.to_dict()
        assert _tree(Path(inputs.root)) == inputs.snapshot
    if case.n_vocab is not None:
        assert Tokenizer.load(str(out / case.same_as_api)).n_vocab == case.n_vocab


def test_the_battery_covers_every_command():
    commands = {c.argv[0] for c in CASES}
    assert {"train", "encode", "tokenize", "decode", "count", "convert", "inspect", "show", "compare",
            "count-words", "encode-dataset"} <= commands
    for model in ("byte", "char"):  # both models have failing and succeeding cases
        tok = "@tok" if model == "byte" else "@ctok"
        chars = [c for c in CASES if "char" in c.argv or tok in c.argv]
        assert {c.status for c in chars} >= {0, 1}, model


# ---------------------------------------------------------------- ordinary characters and lone surrogates


NUL_TEXT = "a\x00b\x00\x00 c\x00d \x00 \x00\x00\x00a\x00 "


@pytest.mark.parametrize("model", ["byte", "char"])
def test_nul_bytes_are_ordinary_characters(inputs, tmp_path, model):
    """NUL trains, encodes and decodes losslessly, on the command line
    (through stdin, as argv cannot hold it) and in the API."""
    tok_path = tmp_path / "nul.json"
    train = [sys.executable, "-m", "bytepair", "train", inputs.nul, "--model", model, "--merges", "6",
             "-o", str(tok_path)]
    subprocess.run(train, check=True, capture_output=True, timeout=TIMEOUT)
    tok = Tokenizer.load(str(tok_path))
    api = Tokenizer.train_from_files([inputs.nul], model=model, num_merges=6)
    assert tok.to_dict() == api.to_dict()
    assert any("\x00" in (l + r if model == "char" else (l + r).decode()) for l, r in tok.merges)
    text = NUL_TEXT if model == "byte" else " ".join(NUL_TEXT.split())
    ids = tok.encode(text)
    assert tok.decode(ids) == text and tok.decode_bytes(ids) == text.encode()
    cli = [sys.executable, "-m", "bytepair"]
    done = subprocess.run([*cli, "encode", "-t", str(tok_path)], input=text.encode(), capture_output=True,
                          timeout=TIMEOUT, check=True)
    assert done.stdout.split() == [str(i).encode() for i in ids]
    done = subprocess.run([*cli, "decode", "-n", "-t", str(tok_path)], input=done.stdout, capture_output=True,
                          timeout=TIMEOUT, check=True)
    assert done.stdout == text.encode()


LONE = ["\ud800", "\udfff", "a\udc80b", "x\ud83d", "\ude00y", "\ud800\ud800 \udc00"]


@pytest.mark.parametrize("text", LONE, ids=[ascii(t) for t in LONE])
def test_lone_surrogates_become_replacement_characters(inputs, text):
    """As tiktoken does: a lone surrogate from Python is U+FFFD, in every
    call, never an exception (docs/decisions.md; commit "Lone surrogates are
    replaced with U+FFFD")."""
    clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert "\ufffd" in clean and not any(0xD800 <= ord(c) <= 0xDFFF for c in clean)
    fused = Tokenizer.train(TEXT + " \ufffd", model="char", end_of_word_fused=True)  # a tokenizer.json can hold it
    # the byte and char models, and pipelines: one the byte model's core runs, one the pipeline's
    pipelines = [Tokenizer.from_spec(t.as_pipeline()) for t in (inputs.byte, fused)]
    for tok in (inputs.byte, Tokenizer.train(TEXT + " \ufffd", model="char", byte_fallback=True), *pipelines):
        assert tok.encode(text) == tok.encode(clean)
        assert tok.encode(text, add_special_tokens=False) == tok.encode(clean, add_special_tokens=False)
        assert tok.encode_ordinary(text) == tok.encode_ordinary(clean)
        assert tok.encode_to_numpy(text).tolist() == tok.encode(clean)
        assert tok.encode_batch([text, "ok"]) == [tok.encode(clean), tok.encode("ok")]
        assert tok.encode_ordinary_batch([text]) == [tok.encode_ordinary(clean)]
        assert tok.count(text) == tok.count(clean)
        assert tok.tokenize(text) == tok.tokenize(clean)
        assert tok.encode_with_offsets(text)[0] == tok.encode(clean)
        if tok.model != "pipeline":  # a pipeline's dropout is its model's field
            assert tok.encode(text, dropout=0.5, seed=3) == tok.encode(clean, dropout=0.5, seed=3)
    assert inputs.byte.decode(inputs.byte.encode(text)) == clean
    # training sees the same words as encoding: U+FFFD
    corpus = (text + " ab ") * 3
    for model in ("byte", "char"):
        for given in (corpus, [corpus], {text: 3, "ab": 2}):
            cleaned = {clean: 3, "ab": 2} if isinstance(given, dict) else (
                [corpus.replace(text, clean)] if isinstance(given, list) else corpus.replace(text, clean))
            assert Tokenizer.train(given, model=model).merges == Tokenizer.train(cleaned, model=model).merges


def test_wrong_types_are_type_errors(inputs):
    """Where Python itself would say TypeError, so does bytepair."""
    fused = Tokenizer.train(TEXT, model="char", end_of_word_fused=True)  # a tokenizer.json can hold it
    pipelines = [Tokenizer.from_spec(t.as_pipeline()) for t in (inputs.byte, fused)]
    for tok in (inputs.byte, inputs.char, *pipelines):
        hf_call = functools.partial(tok.encode, add_special_tokens=False)
        for call in (tok.encode, hf_call, tok.encode_ordinary, tok.count, tok.tokenize, tok.encode_to_numpy):
            with pytest.raises(TypeError, match="expected str, got bytes"):
                call(b"abc")
            with pytest.raises(TypeError, match="NoneType"):
                call(None)
        with pytest.raises(TypeError):
            tok.encode_batch(["ok", 3])
        with pytest.raises(TypeError):
            tok.decode(None)
        with pytest.raises(UnknownTokenError, match="position 0"):
            tok.decode(["12"])  # a str where an id goes: a TypeError (below) that is also an UnknownTokenError


@pytest.mark.parametrize("ids", [[1.0], [97, "a"], [None], [97, 1.5]])
def test_an_id_that_is_not_an_integer_is_a_type_error_as_in_tiktoken_and_hf(inputs, ids):
    """tiktoken and Hugging Face raise TypeError for a float, str or None among the ids; so does
    bytepair (TokenIdTypeError, also an UnknownTokenError), on every model and in a numpy array."""
    import numpy as np
    import tiktoken
    import tokenizers

    peers = [tiktoken.Encoding("bytes", pat_str=r"\S+|\s+", mergeable_ranks={bytes([i]): i for i in range(256)},
                               special_tokens={}).decode,
             tokenizers.Tokenizer(tokenizers.models.BPE(vocab={"a": 0, "b": 1}, merges=[])).decode]
    for decode in peers:
        with pytest.raises(TypeError):
            decode(ids)
    not_an_int = next(i for i in ids if not isinstance(i, int))
    with pytest.raises(TypeError):
        peers[0].__self__.decode_single_token_bytes(not_an_int)
    with pytest.raises(TokenIdTypeError):
        inputs.byte.decode_single_token_bytes(not_an_int)
    for tok in (inputs.byte, inputs.char):
        for given in (ids, np.array(ids, dtype=object)):
            with pytest.raises(TokenIdTypeError, match="not an integer") as caught:
                tok.decode(given)
            assert isinstance(caught.value, TypeError) and isinstance(caught.value, UnknownTokenError)
    with pytest.raises(TypeError):
        inputs.byte.decode(np.array([1.0]))
