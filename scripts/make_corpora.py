#!/usr/bin/env python3
"""Build the benchmark corpora from real text shipped in Debian packages.

    python scripts/make_corpora.py [OUT] [--work DIR] [--only en,multi,code] [--force]

writes into OUT (default ``data/corpora``, which git ignores):

- ``en.txt`` (~115 MB): English prose: Linux kernel documentation (reST),
  the Python 3.11 documentation sources, GCIDE (Webster 1913) and WordNet,
  perldoc, the PostgreSQL manual, git's guides, Debian policy/handbook/
  reference, GNU coding standards, man pages, fortunes;
- ``multi.txt`` (~58 MB): many languages and scripts: GNOME help in ~45
  languages (Latin, Cyrillic, Greek, Hebrew, Arabic, Devanagari and other
  Indic scripts, CJK), the Debian handbook, installation guide and reference
  in their translations, man pages in 11 languages, Linux documentation
  translations, fortunes in 10 languages, glibc messages, iso-codes names;
- ``code.txt`` (~64 MB): source code: CPython 3.11 standard library and
  tests, Go 1.19 standard library, Rust core/alloc/std, glibc 2.36 C
  sources, TypeScript's ``lib.*.d.ts``;

plus ``X.index.tsv`` (byte offset, length, source, path of every document)
and ``MANIFEST.json`` (each package's version and .deb sha256, each output's
size, sha256 and bytes per source).

Documents of the different sources are interleaved in proportion to their
sizes, so every prefix of a corpus (a 10 MB training slice, say) and its
tail (held-out text) have about the same mix as the whole.

Packages come from Debian 12 "bookworm" with ``apt-get download`` and are
unpacked with ``dpkg-deb -x`` into the work folder (default ``OUT/.work``);
nothing is installed. Text extraction is deliberately simple (stdlib only):
HTML through ``html.parser``, reST/asciidoc/plain text as is, roff and POD
with their markup stripped by a few regexes. The output bytes depend only on
the package versions (recorded in the manifest) and on this script: a re-run
with the same versions and outputs in place does nothing; ``--force``
rebuilds. Debian serves only the current version of a package, so a point
release can change the bytes: compare the manifests.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import json
import os
import re
import struct
import subprocess
import sys
import tarfile
import time
from html.parser import HTMLParser
from multiprocessing import Pool
from typing import Callable, Dict, Iterator, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = 1_000_000

Doc = Tuple[str, str]  # (path inside the package, text)

# ======================================================================= reading


def read(path: str) -> bytes:
    with open(path, "rb") as fh:
        data = fh.read()
    return gzip.decompress(data) if path.endswith((".gz", ".dz")) else data


def text_of(data: bytes, strict: bool = False) -> Optional[str]:
    """UTF-8, else (unless strict) Latin-1 line by line for the odd legacy file."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        if strict:
            return None
        lines = []
        for line in data.split(b"\n"):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                lines.append(line.decode("latin-1"))
        return "\n".join(lines)


CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufeff]")


def clean(t: str) -> str:
    """Unix newlines, no control characters but tab and newline, no trailing
    blanks, at most one empty line in a row; '' if nothing is left."""
    t = CONTROL.sub("", t.replace("\r\n", "\n").replace("\r", "\n"))
    t = re.sub(r"[ \t]+\n", "\n", t)
    t = re.sub(r"\n{3,}", "\n\n", t).strip("\n")
    return t + "\n" if t.strip() else ""


def clean_code(t: str) -> str:
    t = CONTROL.sub("", t.replace("\r\n", "\n").replace("\r", "\n").replace("\f", ""))
    return t if t.endswith("\n") else t + "\n"


def files(top: str, exts: Tuple[str, ...], skip: Callable[[str], bool] = lambda rel: False) -> List[str]:
    """Regular files under top whose name ends with one of exts, as sorted
    paths relative to top (symlinks are skipped: they repeat other files)."""
    out = []
    for root, dirs, names in os.walk(top):
        dirs.sort()
        for n in names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, top)
            if n.endswith(exts) and not os.path.islink(p) and os.path.isfile(p) and not skip(rel):
                out.append(rel)
    return sorted(out)


def one_dir(pattern_dir: str, prefix: str) -> str:
    """The one entry of pattern_dir starting with prefix (versioned names)."""
    found = sorted(n for n in os.listdir(pattern_dir) if n.startswith(prefix))
    if len(found) != 1:
        raise SystemExit(f"expected one {prefix}* in {pattern_dir}, found {found}")
    return os.path.join(pattern_dir, found[0])


# ======================================================================= markup -> text


class _HTMLText(HTMLParser):
    BLOCK = {"p", "div", "br", "li", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "tr", "table",
             "blockquote", "section", "title", "td", "th", "hr", "ul", "ol", "dl", "caption", "figure"}
    SKIP = {"script", "style", "head", "nav", "noscript", "svg", "button", "select", "textarea", "math"}
    SKIP_CLASS = {"navheader", "navfooter", "docnav", "toc", "related", "sphinxsidebar", "footer", "breadcrumbs",
                  "headerlink", "navigation"}
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: List[str] = []
        self.stack: List[Tuple[str, bool, bool]] = []  # (tag, skips, is pre)
        self.skip = self.pre = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.BLOCK:
            self.out.append("\n")
        if tag in self.VOID:
            return
        cls = set((dict(attrs).get("class") or "").split())
        skips = tag in self.SKIP or bool(cls & self.SKIP_CLASS)
        self.stack.append((tag, skips, tag == "pre"))
        self.skip += skips
        self.pre += tag == "pre"

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                for _, s, p in self.stack[i:]:
                    self.skip -= s
                    self.pre -= p
                del self.stack[i:]
                break
        if tag in self.BLOCK:
            self.out.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data if self.pre else re.sub(r"\s+", " ", data))


def html_text(src: str) -> str:
    p = _HTMLText()
    p.feed(src)
    p.close()
    lines = [ln.strip() for ln in "".join(p.out).replace("\u00b6", "").split("\n")]
    return clean("\n".join(lines))


MALLARD_BLOCK = re.compile(r"</?(?:p|title|item|td|th|tr|section|desc|code|screen|note|list|terms|steps|tree)\b[^>]*>")


def mallard_text(src: str) -> str:
    """GNOME help pages (Mallard XML): the <info> header dropped, tags removed."""
    src = re.sub(r"<info>.*?</info>", "", src, flags=re.S)
    src = re.sub(r"<\?xml[^>]*\?>|<!--.*?-->", "", src, flags=re.S)
    src = MALLARD_BLOCK.sub("\n", src)
    src = html.unescape(re.sub(r"<[^>]+>", "", src))
    return clean("\n".join(" ".join(ln.split()) for ln in src.split("\n")))


ROFF_CHARS = {"em": "\u2014", "en": "\u2013", "bu": "\u2022", "co": "\u00a9", "aq": "'", "dq": '"', "lq": "\u201c",
              "rq": "\u201d", "oq": "\u2018", "cq": "\u2019", "hy": "-", "mi": "-", "pl": "+", "mu": "\u00d7",
              "ti": "~", "ha": "^", "rs": "\\", "ba": "|", "ul": "_", "Fo": "\u00ab", "Fc": "\u00bb", "at": "@",
              "sh": "#", "ga": "`", "aa": "\u00b4", "de": "\u00b0", "->": "\u2192", "<-": "\u2190", "<=": "\u2264",
              ">=": "\u2265", "tm": "\u2122", "rg": "\u00ae", "ss": "\u00df", "Eu": "\u20ac", "sl": "/"}
ROFF_ESCAPE = re.compile(r"""\\(?:f(?:\[[^\]]*\]|\(..|.)|s[+-]?(?:\d+|\(\d\d|\[[^\]]*\])|\*(?:\[[^\]]*\]|\(..|.)|
                            \((?P<p>..)|\[(?P<b>[^\]]*)\]|[hvwlLDXbxNHoZ]'[^']*'|(?P<c>.))""", re.X)
ROFF_TEXT_MACROS = {"B", "I", "SM", "SB", "BR", "BI", "IB", "IR", "RB", "RI", "SH", "SS", "IP", "Nm", "Nd",
                    "Sh", "Ss", "It", "Ar", "Fl", "Cm", "Pa", "Em", "Sy", "Li", "Xr", "Dq", "Sq", "Ql", "Va", "Fn",
                    "Fa", "Ft", "Op", "Ev", "Dv", "Er", "Ic", "D1", "Dl", "No", "Pq", "UR", "MT", "OP"}
ROFF_ALTERNATING = {"BR", "BI", "IB", "IR", "RB", "RI"}
ROFF_SIMPLE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t", ".": ".", "'": "'",
               "`": "`", '"': ""}


def _roff_escape(m: "re.Match[str]") -> str:
    if m.group("p"):
        return ROFF_CHARS.get(m.group("p"), "")
    if m.group("b") is not None:
        name = m.group("b")
        if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
            return chr(int(name[1:], 16))
        return ROFF_CHARS.get(name, "")
    if m.group("c") is not None:
        return ROFF_SIMPLE.get(m.group("c"), "")
    return ""


ROFF_BREAKS = {"SH", "SS", "PP", "LP", "P", "sp", "Pp", "TP", "TQ", "IP", "HP", "br", "RS", "RE", "in", "ti",
               "Sh", "Ss", "It", "Bl", "El", "Bd", "Ed", "D1", "Dl"}


def man_text(src: str) -> str:
    """Man pages: filled text joined into one line per paragraph, requests
    dropped, text macros kept as plain text, escapes replaced by their
    characters (or removed)."""
    out: List[str] = []
    para: List[str] = []
    fill = True

    def flush() -> None:
        if para:
            out.append(" ".join(para))
            para.clear()

    for line in src.split("\n"):
        if line.startswith((".\\\"", "'\\\"", ".\\#")) or line.strip() in (".", "'"):
            continue
        heading = False
        if line.startswith((".", "'")):
            name, _, rest = line[1:].strip().partition(" ")
            if name in ("nf", "EX"):
                flush()
                fill = False
            elif name in ("fi", "EE"):
                flush()
                fill = True
            if name in ROFF_BREAKS:
                flush()
                if name in ("SH", "SS", "PP", "LP", "P", "sp", "Pp", "Sh", "Ss"):
                    out.append("")
            if name not in ROFF_TEXT_MACROS:
                continue
            words = [a or b for a, b in re.findall(r'"((?:[^"]|"")*)"|(\S+)', rest)]
            line = ("" if name in ROFF_ALTERNATING else " ").join(words)
            heading = name in ("SH", "SS", "Sh", "Ss", "TP", "IP")
        line = ROFF_ESCAPE.sub(_roff_escape, line.split('\\"')[0])
        if not fill or heading:
            flush()
            out.append(line)
        elif not line.strip():
            flush()
            out.append("")
        else:
            para.append(line.strip())
    flush()
    return clean("\n".join(out))


POD_CODE = re.compile(r"[BICLFSXZE]<(?:<+\s(.*?)\s>+|([^<>]*))>", re.S)
POD_ENTITIES = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/"}


def _pod_code(m: "re.Match[str]") -> str:
    kind, inner = m.group(0)[0], m.group(1) if m.group(1) is not None else m.group(2)
    if kind in "XZ":
        return ""
    if kind == "E":
        return POD_ENTITIES.get(inner, html.unescape("&%s;" % inner))
    if kind == "L":
        return inner.split("|", 1)[0]
    return inner


def pod_text(src: str) -> str:
    """POD: command paragraphs reduced to their text, formatting codes removed."""
    out = []
    in_pod, skip = False, False
    for para in re.split(r"\n[ \t]*\n", src.replace("\r\n", "\n")):
        if para.startswith("="):
            cmd, _, rest = para[1:].partition(" ")
            cmd = cmd.split("\n")[0]
            in_pod = cmd != "cut"
            if cmd == "begin":
                skip = True
            elif cmd == "end":
                skip = False
            elif cmd.startswith("head") or (cmd == "item" and rest.strip() not in ("", "*")):
                para = " ".join(rest.split())
            else:
                continue
        elif not in_pod or skip:
            continue
        for _ in range(4):  # nested codes, innermost first
            para = POD_CODE.sub(_pod_code, para)
        out.append(para if para[:1] in " \t" else " ".join(para.split()))
    return clean("\n\n".join(out))


GCIDE_SOURCE_LINE = re.compile(r"^\s*\[[^\]\n]*(?:Webster|WordNet|PJC|Century|Chambers|Johnson|Syn\.)[^\]\n]*\]\s*$",
                               re.M)
GCIDE_LIGATURES = {"ae": "\u00e6", "AE": "\u00c6", "oe": "\u0153", "OE": "\u0152", "eth": "\u00f0",
                   "thorn": "\u00fe", "deg": "\u00b0", "sect": "\u00a7", "frac12": "\u00bd", "pounds": "\u00a3"}


def dictd_chunks(data: bytes, gcide: bool = False, wordnet: bool = False, chunk: int = 200_000) -> Iterator[Doc]:
    """A dictd database as documents of about ``chunk`` bytes: paragraphs
    reflowed, cross-reference braces and GCIDE's source tags, pronunciation
    and accent codes removed. WordNet's entries (a headword line, then
    indented senses) become the headword and its senses on one line."""
    t = text_of(data) or ""
    if gcide:
        t = GCIDE_SOURCE_LINE.sub("", t)
    paras, size, n = [], 0, 0
    for p in re.split(r"\n(?=\S)" if wordnet else r"\n[ \t]*\n", t):
        head, _, body = p.partition("\n") if wordnet else ("", "", p)
        s = " ".join(body.split())
        if head.strip():
            s = head.strip() + "\n" + s
        if gcide:
            s = re.sub(r" \\[^\\]{1,80}\\", "", s)  # headword pronunciation
            s = re.sub(r"\[([A-Za-z]{2,6})\]", lambda m: GCIDE_LIGATURES.get(m.group(1), m.group(0)), s)
            s = re.sub(r"\[(?:[`'\"~^,=.*-]([A-Za-z])|([A-Za-z])(?:\^|um|mac|dd|sl|[`'\"~=.,*]))\]",
                       lambda m: m.group(1) or m.group(2), s)
        s = re.sub(r"\{([^{}]*)\}", r"\1", s).strip()
        if not s or s.startswith("00-database"):
            continue
        paras.append(s)
        size += len(s) + 1
        if size >= chunk:
            yield "part%04d" % n, clean("\n".join(paras))
            paras, size, n = [], 0, n + 1
    if paras:
        yield "part%04d" % n, clean("\n".join(paras))


def fortune_text(data: bytes) -> str:
    t = text_of(data) or ""
    t = re.sub("\x1b\\[[0-9;]*[A-Za-z]|.\x08", "", t)
    return clean(re.sub(r"(?m)^%+[ \t]*$", "", t))


def mo_text(data: bytes) -> str:
    """The translations (msgstr) of a gettext .mo file, one per line."""
    order = "<" if struct.unpack("<I", data[:4])[0] == 0x950412DE else ">"
    _, n, orig, trans = struct.unpack(order + "4I", data[4:20])
    lines = []
    for i in range(n):
        olen = struct.unpack(order + "I", data[orig + 8 * i : orig + 8 * i + 4])[0]
        tlen, toff = struct.unpack(order + "2I", data[trans + 8 * i : trans + 8 * i + 8])
        if olen == 0:  # the header entry
            continue
        for form in data[toff : toff + tlen].split(b"\x00"):
            s = (text_of(form) or "").strip()
            if s:
                lines.append(s)
    return clean("\n".join(lines))


# ======================================================================= sources
# A source is (name, byte budget or None for all, package list, generator of documents).
# X is the folder holding one unpacked tree per package.
X = ""


def P(pkg: str, *parts: str) -> str:
    return os.path.join(X, pkg, *parts)


def tree(pkg: str, top: str, exts: Tuple[str, ...], convert: Callable[[str], str],
         skip: Callable[[str], bool] = lambda rel: False, drop_lines: Optional[set] = None,
         strict: bool = False) -> Iterator[Doc]:
    base = P(pkg, top)
    for rel in files(base, exts, skip):
        t = text_of(read(os.path.join(base, rel)), strict)
        if t is None:
            continue
        t = convert(t)
        if drop_lines is not None:  # a translation: drop untranslated lines
            t = clean("\n".join(ln for ln in t.split("\n") if ln.strip() not in drop_lines))
        yield rel, t


def line_set(docs: Iterator[Doc]) -> set:
    s = set()
    for _, t in docs:
        s.update(ln.strip() for ln in t.split("\n"))
    s.discard("")
    return s


def same(t: str) -> str:
    return clean(t)


LINUX = "usr/share/doc/linux-doc-6.1/Documentation"
PYDOC = "usr/share/doc/python3.11/html/_sources"


def en_sources():
    yield "linux-doc", None, ["linux-doc-6.1"], lambda: tree(
        "linux-doc-6.1", LINUX, (".rst", ".rst.gz", ".txt", ".txt.gz"), same,
        skip=lambda r: r.startswith("translations/"))
    yield "python-doc", None, ["python3.11-doc"], lambda: tree("python3.11-doc", PYDOC, (".rst.txt",), same)
    yield "gcide", 32 * MB, ["dict-gcide"], lambda: dictd_chunks(
        read(P("dict-gcide", "usr/share/dictd/gcide.dict.dz")), gcide=True)
    yield "wordnet", 16 * MB, ["dict-wn"], lambda: dictd_chunks(
        read(P("dict-wn", "usr/share/dictd/wn.dict.dz")), wordnet=True)
    yield "perl-doc", None, ["perl-doc"], lambda: tree(
        "perl-doc", "usr/share/perl", (".pod",), pod_text, skip=lambda r: r.endswith(("perltoc.pod", "perluniprops.pod")))
    yield "postgresql-doc", None, ["postgresql-doc-15"], lambda: tree(
        "postgresql-doc-15", "usr/share/doc/postgresql-doc-15/html", (".html",), html_text,
        skip=lambda r: r in ("bookindex.html", "index.html"))
    yield "git-doc", None, ["git-doc"], lambda: tree("git-doc", "usr/share/doc/git-doc", (".txt",), same)
    yield "debian-docs", None, ["debian-handbook", "debian-reference-en", "debian-policy"], debian_en
    yield "gnu-standards", None, ["gnu-standards"], lambda: tree(
        "gnu-standards", "usr/share/doc/gnu-standards", (".text.gz",), same)
    yield "manpages", None, ["manpages", "manpages-dev"], lambda: (
        d for pkg in ("manpages", "manpages-dev") for d in tree(pkg, "usr/share/man", (".gz",), man_text))
    yield "fortunes", None, ["fortunes-min", "fortunes"], lambda: (
        (rel, fortune_text(read(P(pkg, "usr/share/games/fortunes", rel))))
        for pkg in ("fortunes-min", "fortunes")
        for rel in files(P(pkg, "usr/share/games/fortunes"), ("",), lambda r: r.endswith((".dat", ".u8"))))


HANDBOOK = "usr/share/doc/debian-handbook/html"


def debian_en():
    yield from tree("debian-handbook", HANDBOOK + "/en-US", (".html",), html_text)
    yield from tree("debian-reference-en", "usr/share/debian-reference", (".en.html",), html_text)
    yield from tree("debian-policy", "usr/share/doc/debian-policy", (".txt.gz",), same)


# the translations of the Debian handbook that are mostly translated
HANDBOOK_LANGS = ["ar-MA", "de-DE", "es-ES", "fa-IR", "fr-FR", "id-ID", "it-IT", "ja-JP", "nb-NO", "nl-NL", "pl-PL",
                  "pt-BR", "ru-RU", "sv-SE", "tr-TR", "vi-VN", "zh-CN", "zh-TW"]
MANPAGE_LANGS = ["de", "fr", "ru", "ja", "zh", "pl", "es", "it", "uk", "pt-br", "nl"]
FORTUNE_LANGS = ["de", "es", "it", "pl", "cs", "br", "eo", "ru", "bg", "zh"]
REFERENCE_LANGS = ["de", "ja", "zh-cn", "fr", "it", "es", "pt"]
GUIDE = "usr/share/doc/installation-guide-amd64"
HELP = "usr/share/help"


def multi_sources():
    yield "gnome-help", None, ["gnome-user-docs"], gnome_help
    yield "debian-handbook", None, ["debian-handbook"], handbook_translations
    yield "installation-guide", None, ["installation-guide-amd64"], install_guide_translations
    yield "debian-reference", None, ["debian-reference-en"] + ["debian-reference-" + x for x in REFERENCE_LANGS], \
        reference_translations
    for lang in MANPAGE_LANGS:
        yield "man-" + lang, 3 * MB, ["manpages-" + lang], lambda lang=lang: tree(
            "manpages-" + lang, "usr/share/man", (".gz",), man_text)
    yield "linux-doc-translations", None, ["linux-doc-6.1"], lambda: tree(
        "linux-doc-6.1", LINUX + "/translations", (".rst", ".rst.gz", ".txt", ".txt.gz"), same)
    for lang in FORTUNE_LANGS:
        pkg = "fortunes-" + lang
        yield pkg, 2 * MB, [pkg], lambda pkg=pkg: (
            (rel, fortune_text(read(P(pkg, "usr/share/games/fortunes", rel))))
            for rel in files(P(pkg, "usr/share/games/fortunes"), ("",), lambda r: r.endswith((".dat", ".u8"))))
    yield "glibc-messages", None, ["libc-l10n"], lambda: (
        (rel, mo_text(read(P("libc-l10n", "usr/share/locale", rel))))
        for rel in files(P("libc-l10n", "usr/share/locale"), (".mo",)))
    yield "iso-codes", None, ["iso-codes"], lambda: (
        (rel, mo_text(read(P("iso-codes", "usr/share/locale", rel))))
        for rel in files(P("iso-codes", "usr/share/locale"), (".mo",),
                         lambda r: os.path.basename(r) not in ("iso_3166-1.mo", "iso_639-2.mo", "iso_15924.mo")))


def gnome_help():
    for guide in ("gnome-help", "system-admin-guide"):
        english = line_set(tree("gnome-user-docs", f"{HELP}/C/{guide}", (".page",), mallard_text))
        for lang in sorted(os.listdir(P("gnome-user-docs", HELP))):
            if lang != "C" and os.path.isdir(P("gnome-user-docs", HELP, lang, guide)):
                for rel, t in tree("gnome-user-docs", f"{HELP}/{lang}/{guide}", (".page",), mallard_text,
                                   drop_lines=english):
                    yield f"{lang}/{guide}/{rel}", t


def handbook_translations():
    english = line_set(tree("debian-handbook", HANDBOOK + "/en-US", (".html",), html_text))
    for lang in HANDBOOK_LANGS:
        for rel, t in tree("debian-handbook", f"{HANDBOOK}/{lang}", (".html",), html_text, drop_lines=english):
            yield f"{lang}/{rel}", t


def install_guide_translations():
    english = line_set(tree("installation-guide-amd64", GUIDE + "/en", (".html",), html_text))
    for lang in sorted(os.listdir(P("installation-guide-amd64", GUIDE))):
        if lang != "en" and os.path.isdir(P("installation-guide-amd64", GUIDE, lang)):
            for rel, t in tree("installation-guide-amd64", f"{GUIDE}/{lang}", (".html",), html_text,
                               drop_lines=english):
                yield f"{lang}/{rel}", t


def reference_translations():
    english = line_set(tree("debian-reference-en", "usr/share/debian-reference", (".en.html",), html_text))
    for lang in REFERENCE_LANGS:
        pkg = "debian-reference-" + lang
        yield from tree(pkg, "usr/share/debian-reference", (".html",), html_text, drop_lines=english)


def code_tree(pkg: str, top: str, exts: Tuple[str, ...], skip: Callable[[str], bool] = lambda r: False,
              max_file: int = 300_000) -> Iterator[Doc]:
    base = P(pkg, top)
    for rel in files(base, exts, skip):
        p = os.path.join(base, rel)
        if os.path.getsize(p) <= max_file:
            t = text_of(read(p), strict=True)
            if t is not None:
                yield rel, clean_code(t)


def glibc_sources() -> Iterator[Doc]:
    """C files of the glibc tarball, read in one sequential pass (xz cannot seek)."""
    top = P("glibc-source", "usr/src/glibc")
    tarball = [n for n in sorted(os.listdir(top)) if n.endswith(".tar.xz")][0]
    found = []
    with tarfile.open(os.path.join(top, tarball), "r|xz") as tf:
        for m in tf:
            parts = m.name.split("/")
            if (m.isfile() and m.name.endswith((".c", ".h")) and m.size <= 300_000
                    and not (len(parts) > 1 and parts[1] in ("iconvdata", "localedata", "sysdeps"))):
                t = text_of(tf.extractfile(m).read(), strict=True)
                if t is not None:
                    found.append((m.name, clean_code(t)))
    yield from sorted(found)


def code_sources():
    yield "python", 34 * MB, ["libpython3.11-minimal", "libpython3.11-stdlib", "libpython3.11-testsuite"], lambda: (
        d for pkg in ("libpython3.11-minimal", "libpython3.11-stdlib", "libpython3.11-testsuite")
        for d in code_tree(pkg, "usr/lib/python3.11", (".py",)))
    yield "go", 16 * MB, ["golang-1.19-src"], lambda: code_tree(
        "golang-1.19-src", "usr/share/go-1.19/src", (".go",),
        skip=lambda r: r.startswith(("cmd/", "vendor/")) or "/testdata/" in r or "/vendor/" in r)
    yield "rust", 10 * MB, ["rust-src"], lambda: code_tree(
        "rust-src", os.path.relpath(one_dir(P("rust-src", "usr/src"), "rustc-"), P("rust-src")) + "/library", (".rs",),
        skip=lambda r: not r.startswith(("alloc/", "core/", "std/")))
    yield "c", 8 * MB, ["glibc-source"], glibc_sources
    yield "typescript", None, ["node-typescript"], lambda: code_tree(
        "node-typescript", "usr/share/nodejs/typescript/lib", (".d.ts",), max_file=2_000_000)


CORPORA = {"en": en_sources, "multi": multi_sources, "code": code_sources}


# ======================================================================= building


def take(docs: Iterator[Doc], budget: Optional[int]) -> List[Tuple[str, bytes]]:
    """Documents in order until the next one would pass the budget."""
    out, used = [], 0
    for rel, t in docs:
        if not t.strip():
            continue
        b = t.encode("utf-8")
        if budget is not None and used + len(b) > budget:
            break
        out.append((rel, b))
        used += len(b)
    return out


def build(args: Tuple[str, str, str]) -> Dict[str, object]:
    """Write OUT/name.txt and OUT/name.index.tsv; return the per-source sizes."""
    global X
    name, out, X = args
    t0 = time.time()
    sources = []
    for src, budget, _, gen in CORPORA[name]():
        docs = take(gen(), budget)
        sources.append((src, docs, sum(len(b) for _, b in docs)))
    # interleave: always write next from the source that is least far through its own bytes,
    # so that every prefix of the corpus has the mix of the whole
    pos = [0] * len(sources)
    done = [0] * len(sources)
    path = os.path.join(out, name + ".txt")
    index = ["offset\tlength\tsource\tpath\n"]
    off = 0
    sha = hashlib.sha256()
    with open(path + ".tmp", "wb") as fh:
        while True:
            best = None
            for i, (src, docs, total) in enumerate(sources):
                if pos[i] < len(docs):
                    frac = done[i] / total
                    if best is None or frac < best[0]:
                        best = (frac, i)
            if best is None:
                break
            i = best[1]
            rel, b = sources[i][1][pos[i]]
            pos[i] += 1
            done[i] += len(b)
            chunk = (b"\n" if off else b"") + b
            fh.write(chunk)
            sha.update(chunk)
            index.append("%d\t%d\t%s\t%s\n" % (off + len(chunk) - len(b), len(b), sources[i][0], rel))
            off += len(chunk)
    os.replace(path + ".tmp", path)
    with open(os.path.join(out, name + ".index.tsv"), "w", encoding="utf-8") as fh:
        fh.writelines(index)
    print("%s.txt: %.1f MB, %d documents, %.0f s" % (name, off / MB, len(index) - 1, time.time() - t0), flush=True)
    return {"file": name + ".txt", "bytes": off, "sha256": sha.hexdigest(), "documents": len(index) - 1,
            "sources": {src: total for src, _, total in sources}}


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def apt_versions(pkgs: List[str]) -> Dict[str, Tuple[str, str]]:
    r = subprocess.run(["apt-cache", "show", "--no-all-versions"] + pkgs, capture_output=True, text=True)
    found, cur = {}, {}
    for line in r.stdout.split("\n") + [""]:
        if not line.strip():
            if "Package" in cur:
                found[cur["Package"]] = (cur.get("Version", ""), cur.get("Architecture", ""))
            cur = {}
        elif ": " in line and not line.startswith(" "):
            k, v = line.split(": ", 1)
            cur[k] = v
    return found


def fetch(pkgs: List[str], work: str, lists_read: bool = False) -> Dict[str, Dict[str, str]]:
    """Download (if missing) and unpack (if changed) each package; return the manifest entries."""
    versions = apt_versions(pkgs)
    if any(p not in versions for p in pkgs):
        print("apt-get update (package lists missing)", flush=True)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        versions = apt_versions(pkgs)
    missing = [p for p in pkgs if p not in versions]
    if missing:
        raise SystemExit("no Debian package named: " + " ".join(missing))
    debs = os.path.join(work, "debs")
    os.makedirs(debs, exist_ok=True)
    deb_of = {p: "%s_%s_%s.deb" % (p, v.replace(":", "%3a"), a) for p, (v, a) in versions.items()}
    need = [p + "=" + versions[p][0] for p in pkgs if not os.path.exists(os.path.join(debs, deb_of[p]))]
    if need:
        print("downloading %d packages" % len(need), flush=True)
        opts = ["-o", "APT::Sandbox::User=root"] if os.geteuid() == 0 else []
        got = subprocess.run(["apt-get", "download", "-q"] + opts + need, cwd=debs, stdout=subprocess.DEVNULL)
        if got.returncode != 0 and not lists_read:
            # stale package lists name a version the mirror no longer has (a security update replaced it):
            # read the lists again and take the versions they name now
            print("apt-get update (a listed version is gone from the mirror)", flush=True)
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            return fetch(pkgs, work, lists_read=True)
        if got.returncode != 0:
            raise SystemExit("apt-get download failed for: " + " ".join(need))
    manifest = {}
    for p in pkgs:
        deb = os.path.join(debs, deb_of[p])
        target = os.path.join(work, "x", p)
        stamp = os.path.join(target, ".from-deb")
        unpacked = None
        if os.path.exists(stamp):
            with open(stamp) as fh:
                unpacked = fh.read()
        if unpacked != deb_of[p]:
            subprocess.run(["rm", "-rf", target], check=True)
            os.makedirs(target)
            subprocess.run(["dpkg-deb", "-x", deb, target], check=True)
            with open(stamp, "w") as fh:
                fh.write(deb_of[p])
        manifest[p] = {"version": versions[p][0], "deb": deb_of[p], "sha256": sha256_file(deb)}
    return manifest


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default=os.path.join(ROOT, "data", "corpora"))
    ap.add_argument("--work", help="where .debs are cached and unpacked (default OUT/.work)")
    ap.add_argument("--only", default="en,multi,code", help="comma-separated subset of en,multi,code")
    ap.add_argument("--force", action="store_true", help="rebuild even if the manifest says up to date")
    ap.add_argument("--jobs", type=int, default=2, help="corpora built in parallel (default 2)")
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n]
    if any(n not in CORPORA for n in names):
        ap.error("--only takes en, multi, code")
    out = os.path.abspath(a.out)
    work = os.path.abspath(a.work or os.path.join(out, ".work"))
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    os.environ["LC_ALL"] = "C.UTF-8"

    pkgs: List[str] = []
    for n in names:
        for _, _, ps, _ in CORPORA[n]():
            pkgs += [p for p in ps if p not in pkgs]
    packages = fetch(pkgs, work)
    print("packages ready in %.0f s" % (time.time() - t0), flush=True)

    builder = sha256_file(os.path.abspath(__file__))
    man_path = os.path.join(out, "MANIFEST.json")
    old = {}
    if os.path.exists(man_path):
        with open(man_path) as fh:
            old = json.load(fh)
    corpora = dict(old.get("corpora", {})) if old.get("builder_sha256") == builder else {}
    todo = []
    for n in names:
        c = corpora.get(n)
        used = sorted({p for _, _, ps, _ in CORPORA[n]() for p in ps})
        up_to_date = (not a.force and c is not None and c.get("packages") == {p: packages[p] for p in used}
                      and os.path.exists(os.path.join(out, c["file"]))
                      and sha256_file(os.path.join(out, c["file"])) == c["sha256"])
        if up_to_date:
            print("%s.txt: up to date (%.1f MB)" % (n, c["bytes"] / MB))
        else:
            todo.append(n)
    if todo:
        with Pool(min(a.jobs, len(todo))) as pool:
            for n, res in zip(todo, pool.map(build, [(n, out, os.path.join(work, "x")) for n in todo])):
                used = sorted({p for _, _, ps, _ in CORPORA[n]() for p in ps})
                res["packages"] = {p: packages[p] for p in used}
                corpora[n] = res
    manifest = {"builder": "scripts/make_corpora.py", "builder_sha256": builder,
                "corpora": {n: corpora[n] for n in sorted(corpora)}}
    with open(man_path + ".tmp", "w") as fh:
        json.dump(manifest, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(man_path + ".tmp", man_path)
    print("done in %.0f s" % (time.time() - t0))
    for n in names:
        c = corpora[n]
        print("%-10s %11d bytes  sha256 %s" % (c["file"], c["bytes"], c["sha256"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
