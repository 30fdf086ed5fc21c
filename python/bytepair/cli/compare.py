"""``bytepair compare``: how many tokens tokenizers spend on texts, per
file and per Unicode script.

For each tokenizer, each file, and each script found in the file (plus
``all``), it reports:

- **tokens per byte** (UTF-8 bytes), and tokens per character (``--json``);
- **tokens per word**, words being whitespace-separated (``str.split()``):
  meaningless for scripts written without spaces (Han, Thai, ...), where a
  "word" is a whole phrase;
- **whole-word share**: the share of the text's bytes covered by tokens that
  are whole words, i.e. tokens whose text, without its surrounding
  whitespace, is exactly one maximal run of letters, marks and digits
  (`` the`` in ``"in the end"``, not ``th`` or ``the,``).

The text is encoded as ``count`` does (special-token text as plain text);
a char-model character that the tokenizer cannot encode (no byte fallback,
no ``unk_token``) counts as one token.

**Scripts** (kept simple, and approximate): a letter's script is the first
word of its Unicode name (``LATIN SMALL LETTER A`` -> Latin, ``DEVANAGARI
LETTER KA`` -> Devanagari, ``CJK UNIFIED IDEOGRAPH-4E00`` -> Han), skipping
a leading ``FULLWIDTH``, ``HALFWIDTH``, ``MODIFIER``, ``SMALL`` or
``MATHEMATICAL``. A combining mark takes the script of the letter before it.
Other characters (digits, punctuation, symbols, emoji) take the script of the
nearest letter in their word (the one before, else the one after); whitespace
takes the script of the next word (at the end, of the previous one); a word
without letters is ``Common``. Each token counts for the script of its first
character (a token that covers no text, such as a lone end-of-word marker,
for the character before it), each word for the script of most of its
bytes, and the bytes of a whole-word token for the scripts of its characters.

Examples::

    $ bytepair compare -t gpt2.json -t mine.json english.txt hindi.txt
    $ bytepair compare -t cl100k.tiktoken --pattern cl100k 'corpora/*.txt' --json
    $ bytepair compare -t a.json -t b.json texts/*.txt --plot costs.png

>>> script_of("a"), script_of("क"), script_of("中"), script_of("1")
('Latin', 'Devanagari', 'Han', None)
>>> [(s, e, name) for s, e, name in script_runs("hi मित्र, 42!")]
[(0, 2, 'Latin'), (2, 9, 'Devanagari'), (9, 13, 'Common')]
"""

from __future__ import annotations

import argparse
import bisect
import functools
import io
import itertools
import json
import sys
import unicodedata
import weakref
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

from bytepair._io import atomic_write_bytes
from bytepair.cli._pieces import pieces
from bytepair.cli.common import check_output, expand_paths, labels, load, read_input
from bytepair.cli.options import CliError, add_described, tokenizer_options, wrap
from bytepair.parity import gini

_SKIP = {"FULLWIDTH", "HALFWIDTH", "MODIFIER", "SMALL", "MATHEMATICAL"}
_RENAME = {"CJK": "Han"}
INHERIT = "\0inherit"  # marker for combining marks


@functools.lru_cache(maxsize=65536)
def script_of(ch: str) -> Optional[str]:
    """The script of a letter (see the module docstring), ``INHERIT`` for a
    combining mark, None for any other character."""
    cat = unicodedata.category(ch)
    if cat[0] == "M":
        return INHERIT
    if cat[0] != "L":
        return None
    words = unicodedata.name(ch, "").replace("-", " ").split()
    while len(words) > 1 and words[0] in _SKIP:
        words.pop(0)
    if not words:
        return "Other"
    return _RENAME.get(words[0], words[0].title())


def _word_segments(word: str, s: int) -> List[Tuple[int, int, str]]:
    """The script runs of one whitespace-free word starting at ``s``."""
    if word.isascii():  # the common case: Latin if it has a letter
        return [(s, s + len(word), "Latin" if any(c.isalpha() for c in word) else "Common")]
    per_char: List[Optional[str]] = []
    last: Optional[str] = None
    for ch in word:
        sc = script_of(ch)
        if sc == INHERIT:
            sc = last
        if sc is not None:
            last = sc
        per_char.append(sc)
    if last is None:
        return [(s, s + len(word), "Common")]
    # other characters: the letter before in the word, else the one after
    first = next(sc for sc in per_char if sc is not None)
    out: List[Tuple[int, int, str]] = []
    current = first
    for i, sc in enumerate(per_char):
        if sc is not None:
            current = sc
        if out and out[-1][2] == current:
            out[-1] = (out[-1][0], s + i + 1, current)
        else:
            out.append((s + i, s + i + 1, current))
    return out


def script_runs(text: str) -> List[Tuple[int, int, str]]:
    """``text`` as runs ``(start, end, script)`` of characters (see the
    module docstring for the rules)."""
    import regex

    runs: List[Tuple[int, int, str]] = []
    gap_start = 0
    for m in regex.finditer(r"\S+", text):
        segs = _word_segments(m.group(), m.start())
        # whitespace before a word takes the word's script
        s0, e0, sc0 = segs[0]
        segs[0] = (gap_start, e0, sc0)
        for seg in segs:
            if runs and runs[-1][2] == seg[2]:
                runs[-1] = (runs[-1][0], seg[1], seg[2])
            else:
                runs.append(seg)
        gap_start = m.end()
    if gap_start < len(text):  # whitespace at the end: the last word's script
        if runs:
            runs[-1] = (runs[-1][0], len(text), runs[-1][2])
        else:
            runs.append((0, len(text), "Common"))
    return runs


class Row:
    """One line of the report."""

    FIELDS = ("tokenizer", "file", "script", "bytes", "chars", "words", "tokens", "whole_word_bytes")
    __slots__ = FIELDS

    def __init__(self, tokenizer: str, file: str, script: str, bytes: int = 0, chars: int = 0,  # noqa: A002
                 words: int = 0, tokens: int = 0, whole_word_bytes: int = 0) -> None:
        self.tokenizer, self.file, self.script = tokenizer, file, script
        self.bytes, self.chars, self.words = bytes, chars, words
        self.tokens, self.whole_word_bytes = tokens, whole_word_bytes

    @property
    def tokens_per_byte(self) -> float:
        return self.tokens / self.bytes if self.bytes else 0.0

    @property
    def tokens_per_char(self) -> float:
        return self.tokens / self.chars if self.chars else 0.0

    @property
    def tokens_per_word(self) -> Optional[float]:
        return self.tokens / self.words if self.words else None

    @property
    def whole_word_share(self) -> float:
        return self.whole_word_bytes / self.bytes if self.bytes else 0.0

    def to_json(self) -> Dict[str, object]:
        d: Dict[str, object] = {k: getattr(self, k) for k in self.FIELDS}
        d.update(
            tokens_per_byte=self.tokens_per_byte,
            tokens_per_char=self.tokens_per_char,
            tokens_per_word=self.tokens_per_word,
            whole_word_share=self.whole_word_share,
        )
        return d


class TextStats:
    """What does not depend on the tokenizer: the script runs (in UTF-8 byte
    offsets), bytes, characters and words per script, and the byte spans of
    the whole words."""

    def __init__(self, text: str) -> None:
        import regex

        self.text = text
        self.size = len(text.encode("utf-8"))
        self.runs: List[Tuple[int, int, str]] = []  # byte offsets
        self.bytes: Dict[str, int] = {}
        self.chars: Dict[str, int] = {}
        b = 0
        char_runs = script_runs(text)
        for s, e, sc in char_runs:
            n = len(text[s:e].encode("utf-8"))
            self.runs.append((b, b + n, sc))
            self.chars[sc] = self.chars.get(sc, 0) + e - s
            self.bytes[sc] = self.bytes.get(sc, 0) + n
            b += n
        self.run_starts = [s for s, _, _ in self.runs]
        char_starts = [s for s, _, _ in char_runs]
        self.words: Dict[str, int] = {}
        for m in regex.finditer(r"\S+", text):
            s, e = m.span()
            k = bisect.bisect_right(char_starts, s) - 1
            if char_runs[k][1] >= e:  # inside one run
                sc = char_runs[k][2]
            else:  # the script of most of its bytes (the first on ties)
                counts: Dict[str, int] = {}
                while k < len(char_runs) and char_runs[k][0] < e:
                    rs, re_, rsc = char_runs[k]
                    counts[rsc] = counts.get(rsc, 0) + len(text[max(rs, s) : min(re_, e)].encode("utf-8"))
                    k += 1
                sc = max(counts, key=lambda x: counts[x])
            self.words[sc] = self.words.get(sc, 0) + 1
        # maximal runs of letters, marks and digits: the whole words, in bytes
        self.word_spans = set()
        c = b = 0
        for m in regex.finditer(r"[\p{L}\p{M}\p{N}]+", text):
            b += len(text[c : m.start()].encode("utf-8"))
            n = len(m.group().encode("utf-8"))
            self.word_spans.add((b, b + n))
            b += n
            c = m.end()

    def bytes_by_script(self, s: int, e: int) -> List[Tuple[str, int]]:
        """The bytes of each script in bytes ``s:e``."""
        out: List[Tuple[str, int]] = []
        k = max(bisect.bisect_right(self.run_starts, s) - 1, 0)
        while k < len(self.runs) and self.runs[k][0] < e:
            rs, re_, sc = self.runs[k]
            out.append((sc, min(re_, e) - max(rs, s)))
            k += 1
        return out


_WORD = None
_TOKEN_INFO: "weakref.WeakKeyDictionary[Any, Dict[int, Tuple[int, int, int]]]" = weakref.WeakKeyDictionary()


def _word_core(token: str) -> Tuple[int, int]:
    """(bytes of leading whitespace, bytes of the rest without trailing
    whitespace) when that rest is one run of letters, marks and digits;
    else (0, 0)."""
    global _WORD
    if _WORD is None:
        import regex

        _WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")
    core = token.strip()
    if not core or not _WORD.fullmatch(core):
        return 0, 0
    lead = token[: len(token) - len(token.lstrip())]
    return len(lead.encode("utf-8")), len(core.encode("utf-8"))


def _token_spans(tok, stats: TextStats) -> Tuple[List[int], List[int], List[Tuple[int, int]]]:
    """(start byte of each token or piece, tokens it counts for, byte spans
    of the whole-word tokens). A piece that covers no text starts at the
    byte before it."""
    text = stats.text
    starts: List[int] = []
    counts: List[int] = []
    whole: List[Tuple[int, int]] = []
    if tok.model == "byte":
        info = _TOKEN_INFO.setdefault(tok, {})
        pos = 0
        for id_ in tok.encode_ordinary(text):
            got = info.get(id_)
            if got is None:
                raw = tok.decode_single_token_bytes(id_)
                try:
                    lead, core = _word_core(raw.decode("utf-8"))
                except UnicodeDecodeError:  # part of a character: not a word
                    lead, core = 0, 0
                got = info[id_] = (len(raw), lead, core)
            n, lead, core = got
            if core and (pos + lead, pos + lead + core) in stats.word_spans:
                whole.append((pos, pos + n))
            starts.append(pos)
            pos += n
        counts = [1] * len(starts)
        return starts, counts, whole
    c = b = 0
    for p in pieces(tok, text):
        if p.kind == "gap":
            continue
        b += len(text[c : p.start].encode("utf-8"))
        seg = text[p.start : p.end]
        n = len(seg.encode("utf-8"))
        starts.append(b if n else max(b - 1, 0))
        counts.append(p.n_tokens)
        if len(p.ids) == 1 and p.kind == "token":
            lead, core = _word_core(seg)
            if core and (b + lead, b + lead + core) in stats.word_spans:
                whole.append((b, b + n))
        b += n
        c = p.end
    return starts, counts, whole


def measure(tok, name: str, file: str, stats: TextStats) -> List[Row]:
    """The rows for one tokenizer and one text: ``all`` first, then each
    script by decreasing number of bytes."""
    rows = {sc: Row(name, file, sc, stats.bytes[sc], stats.chars[sc], stats.words.get(sc, 0))
            for sc in stats.bytes}
    starts, counts, whole = _token_spans(tok, stats)
    cum = [0, *itertools.accumulate(counts)]
    for rs, re_, sc in stats.runs:
        lo, hi = bisect.bisect_left(starts, rs), bisect.bisect_left(starts, re_)
        rows[sc].tokens += cum[hi] - cum[lo]
    for s, e in whole:
        for sc, n in stats.bytes_by_script(s, e):
            rows[sc].whole_word_bytes += n
    total = Row(name, file, "all", stats.size, len(stats.text), sum(stats.words.values()), cum[-1],
                sum(r.whole_word_bytes for r in rows.values()))
    return [total] + sorted(rows.values(), key=lambda r: -r.bytes)


def _fmt(x: Optional[float], digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def table(rows: Sequence[Row]) -> str:
    """The rows as an aligned text table."""
    head = ["tokenizer", "file", "script", "bytes", "words", "tokens", "tok/byte", "tok/word", "whole-word"]
    body = [
        [r.tokenizer, r.file, r.script, str(r.bytes), str(r.words), str(r.tokens),
         _fmt(r.tokens_per_byte), _fmt(r.tokens_per_word, 2), f"{100 * r.whole_word_share:.1f}%"]
        for r in rows
    ]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    lines = []
    for cells in [head] + body:
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if i < 3 else c.rjust(widths[i]))
        lines.append("  ".join(out).rstrip())
    return "\n".join(lines)


PLOT_MIN_SHARE = 0.02  # scripts with less of a file's bytes are left out of the plot


def plot(rows: Sequence[Row], path: str) -> None:
    """A PNG with three panels (tokens per byte, tokens per word, whole-word
    share), one group of bars per file and script, one bar per tokenizer."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CliError("--plot needs matplotlib: pip install matplotlib") from None
    tokenizers = list(dict.fromkeys(r.tokenizer for r in rows))
    totals = {(r.tokenizer, r.file): r.bytes for r in rows if r.script == "all"}
    groups: List[Tuple[str, str]] = []
    for r in rows:
        if r.script == "all":
            continue
        key = (r.file, r.script)
        if key not in groups and r.bytes >= PLOT_MIN_SHARE * max(totals[(r.tokenizer, r.file)], 1):
            groups.append(key)
    if not groups:  # empty files: plot the totals
        groups = list(dict.fromkeys((r.file, "all") for r in rows))
    by_key = {(r.tokenizer, r.file, r.script): r for r in rows}
    panels = [
        ("tokens per byte (lower is cheaper)", lambda r: r.tokens_per_byte),
        ("tokens per whitespace word (lower is cheaper)", lambda r: r.tokens_per_word),
        ("whole-word share of the text (%)", lambda r: 100 * r.whole_word_share),
    ]
    n_bars = len(tokenizers)
    height = max(3.2, 0.3 * len(groups) * n_bars + 0.25 * len(groups) + 1.6)
    fig, axes = plt.subplots(1, 3, figsize=(15, height), sharey=True)
    bar = 0.8 / n_bars
    colours = plt.get_cmap("tab10")
    for ax, (title, value) in zip(axes, panels):
        for t, name in enumerate(tokenizers):
            # the y axis is inverted below: the first tokenizer is the top bar of each group
            ys = [g - 0.4 + bar / 2 + t * bar for g in range(len(groups))]
            rs = [by_key.get((name, f, s)) for f, s in groups]
            xs = [value(r) if r is not None else None for r in rs]
            ax.barh(ys, [x or 0.0 for x in xs], height=bar * 0.92, color=colours(t % 10), label=name)
            for y, x in zip(ys, xs):
                label = " -" if x is None else f" {x:.2f}" if x < 10 else f" {x:.0f}"
                ax.text(x or 0.0, y, label, va="center", fontsize=7)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        ax.margins(x=0.15)
    axes[0].set_yticks(range(len(groups)))
    axes[0].set_yticklabels([f"{f}\n{s}" if s != "all" else f for f, s in groups], fontsize=8)
    axes[0].invert_yaxis()
    handles, names = axes[0].get_legend_handles_labels()
    top = 1 - 0.55 / height
    fig.legend(handles, names, loc="upper right", ncol=min(len(names), 4), frameon=False, fontsize=9,
               bbox_to_anchor=(0.99, 1.0))
    fig.suptitle("bytepair compare: tokens per byte and per word, whole-word share", y=1 - 0.12 / height,
                 x=0.01, ha="left", fontsize=11)
    fig.text(0.01, 0.005, f"rows: file and Unicode script (scripts under {PLOT_MIN_SHARE:.0%} of a file's bytes "
             "left out); '-': no word of that script", fontsize=7, color="#555")
    fig.tight_layout(rect=(0, 0.02, 1, top))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


def run(args: argparse.Namespace, out: TextIO) -> int:
    if args.plot:
        check_output(args.plot)
    paths = expand_paths(args.files)
    names = labels(args.tokenizer)
    toks = [load(p, args) for p in args.tokenizer]
    texts = [(p if p != "-" else "<stdin>", read_input(p, args.errors)) for p in paths]
    rows: List[Row] = []
    for path, text in texts:
        stats = TextStats(text)
        for name, tok in zip(names, toks):
            found = measure(tok, name, path, stats)
            rows.extend(found if args.scripts else found[:1])
    if args.plot:
        plot(rows, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    fairness = parity_summary(rows, names) if args.parity else None
    if args.json:
        doc: Dict[str, Any] = {"rows": [r.to_json() for r in rows]}
        if fairness is not None:
            doc["parity"] = fairness
        print(json.dumps(doc, ensure_ascii=False, indent=1), file=out)
    else:
        print(table(rows), file=out)
        for name, f in (fairness or {}).items():
            costs = ", ".join(f"{k} {v}" for k, v in f["tokens"].items())
            print(f"parity of {name}: Gini {f['gini']:.4f} over {len(f['tokens'])} files ({costs})", file=out)
    return 0


def parity_summary(rows: Sequence[Row], names: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    """Per tokenizer: the tokens of each file (its 'all' row) and their Gini
    coefficient, the parity measure of arXiv 2508.04796 when the files hold
    the same content in different languages.

    >>> r = [Row("t", "en.txt", "all", 10, 10, 2, 4), Row("t", "hi.txt", "all", 20, 10, 2, 12)]
    >>> parity_summary(r, ["t"])
    {'t': {'tokens': {'en.txt': 4, 'hi.txt': 12}, 'gini': 0.25}}
    """
    out: Dict[str, Dict[str, Any]] = {}
    for name in names:
        tokens = {r.file: r.tokens for r in rows if r.tokenizer == name and r.script == "all"}
        out[name] = {"tokens": tokens, "gini": gini(tokens.values()) if tokens else 0.0}
    return out


def add_parser(sub: "argparse._SubParsersAction") -> None:
    p = add_described(
        sub, "compare",
        help="tokens per byte / word and whole-word share, per tokenizer, file and script",
        description=wrap(
            "For each tokenizer (-t, repeatable), each FILE, and each Unicode script in the file "
            "(plus 'all'): bytes, words, tokens, tokens per byte, tokens per word (words split on "
            "whitespace), and the share of the text's bytes covered by tokens that are whole words "
            "(a token whose text, without surrounding whitespace, is exactly one maximal run of "
            "letters, marks and digits). Special-token text counts as plain text, as in 'count'.",
            "Scripts: a letter's script is the first word of its Unicode name (LATIN, CYRILLIC, "
            "DEVANAGARI, CJK -> Han, ...); marks follow their letter; digits, punctuation and "
            "symbols take the script of a letter of their word; whitespace the script of the next "
            "word; words without letters are Common. A token counts for the script of its first "
            "character.",
        ),
        epilog=(
            "examples:\n"
            "  bytepair compare -t gpt2.json -t mine.json english.txt hindi.txt\n"
            "  bytepair compare -t o200k.tiktoken --pattern o200k 'texts/*.txt' --json\n"
            "  bytepair compare -t a.json -t b.json texts/*.txt --plot costs.png"
        ),
    )
    tokenizer_options(p, multiple=True)
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="UTF-8 text files or glob patterns ('texts/*.txt', '**' for any depth); - reads standard input")
    p.add_argument("--json", action="store_true",
                   help="print JSON ({rows: [...]}, with tokens_per_char too) instead of the table")
    p.add_argument("--plot", metavar="PNG",
                   help=f"also draw the figures as a PNG (needs matplotlib); scripts with less than "
                        f"{PLOT_MIN_SHARE * 100:.0f}%% of a file's bytes are left out of it")
    p.add_argument("--parity", action="store_true",
                   help="FILEs are the same content in different languages: also print, per tokenizer, the "
                        "Gini coefficient of the files' token counts (0: every language costs the same)")
    p.add_argument("--no-scripts", dest="scripts", action="store_false",
                   help="only the 'all' row of each tokenizer and file")
    p.set_defaults(run=run)
