"""The files of the Rust crate (``src/``) depend on one another in one
direction, as ``python/bytepair``'s modules do (tests/test_import_graph.py):
the graph of files, built from every ``crate::``/``super::``/``self::`` path
(and every path through a child module a file declares), in ``use`` items and
in code, has no cycle, and no file depends on a layer above its own.

Written in Python, beside the Python check, so that both graphs share one
cycle finder and the check runs without compiling the crate (a Rust test
would only be seen by ``cargo test``, which CI runs without the Python
tests' reporting).

What the graph leaves out, and why:
- ``#[cfg(test)]`` modules (and the test-only ``testing.rs``): a unit test may
  build its input with a layer above (a model's test parsing a description),
  which makes no dependency of the library.
- ``mod x;`` declarations: a parent naming its child is not a use of it.
- ``pub use`` re-exports in a module-list file (``mod.rs``, ``lib.rs``): a
  path through a re-exported name is an edge to the file that defines the
  item, not to the list (``crate::model::Dropout`` -> ``model/dropout.rs``).
Paths are read after comments, strings and character literals are blanked.
See ARCHITECTURE.md ("The crate in layers")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest

from test_import_graph import find_cycle

SRC = Path(__file__).resolve().parent.parent / "src"

# The layers, lowest first; a file may use its own layer and those below.
# A top-level file is its own name's layer; a folder is one layer.
LAYERS: List[Set[str]] = [
    {"error", "parallel"},
    {"pretok"},  # patterns, lexers, the guarded regex: &str -> words
    {"text"},  # aligned text and normalizers (Replace/Split run pretok's regexes)
    {"cache"},  # the per-thread piece cache
    {"model"},  # one word -> ids
    {"pipeline"},  # tokenizer.json descriptions and stages
    {"special", "vocab", "batch"},  # special tokens, initial symbols, parallel batches
    {"tokenizer"},  # a ready byte/char tokenizer
    {"stream"},  # streaming over a tokenizer
    {"train"},
    {"py"},
    {"lib"},
]

# Known edges from a layer to one above it (file -> file). This list only
# shrinks. The cycle check runs without these edges (every cycle between
# layers holds an upward edge, so only cycles through them are let pass).
UPWARD_ALLOWED: Set[Tuple[str, str]] = set()


def blank(text: str) -> str:
    """``text`` with comments, strings and char literals replaced by spaces
    (newlines kept), so that only code is searched for paths."""
    out = list(text)
    i, n = 0, len(text)

    def wipe(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 300])) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            wipe(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            wipe(i, j + 1)
            i = j + 1
        elif c == "'":
            if text.startswith("\\", i + 1):  # '\n', '\u{2581}', '\''
                j = text.find("'", i + 3)
                wipe(i, j + 1)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                wipe(i, i + 3)
                i += 3
            elif i + 5 < n and "'" in text[i + 2:i + 6] and not text[i + 1].isascii():
                j = text.index("'", i + 2)  # one non-ASCII char (Python counts it once)
                wipe(i, j + 1)
                i = j + 1
            else:  # a lifetime
                i += 1
        else:
            i += 1
    return "".join(out)


def module_files(root: Path) -> Dict[str, Path]:
    """Every file of the crate by module path (``crate::model::bpe``)."""
    out = {}
    for path in root.rglob("*.rs"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts[-1] == "mod":
            parts.pop()
        out["::".join(["crate", *parts])] = path
    return out


def cfg_test_spans(code: str) -> List[Tuple[int, int]]:
    """The spans of ``#[cfg(test)] mod x { ... }`` in blanked ``code``."""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*\{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        spans.append((m.start(), j))
    return spans


def cfg_test_modules(code: str) -> Set[str]:
    """Child modules declared only for tests (``#[cfg(test)] mod testing;``)."""
    return set(re.findall(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([a-z]+\))?\s+)?mod\s+(\w+)\s*;", code))


def use_paths(tree: str) -> List[Tuple[List[str], Optional[str]]]:
    """The paths a ``use`` tree names, each with the name it binds:
    ``a::{b, c::{self, D as E}}`` -> (a::b, b), (a::c, c), (a::c::D, E)."""
    tree = re.sub(r"\s+", "", tree)
    out: List[Tuple[List[str], Optional[str]]] = []

    def walk(prefix: List[str], s: str) -> None:
        for item in split_top(s):
            if "{" in item:
                head, inner = item.split("{", 1)
                walk(prefix + [p for p in head.split("::") if p], inner[:-1])
                continue
            alias = None
            if "as" in item and re.search(r"[\w}]as[A-Za-z_]", item):
                item, alias = re.split(r"(?<=[\w])as(?=[A-Za-z_])", item, maxsplit=1)
            segs = [p for p in item.split("::") if p]
            if segs == ["self"]:
                out.append((prefix, alias or (prefix[-1] if prefix else None)))
            elif segs == ["*"]:
                out.append((prefix, None))
            else:
                out.append((prefix + segs, alias or segs[-1]))

    walk([], tree)
    return out


def split_top(s: str) -> List[str]:
    """``s`` cut at its commas outside braces."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(s):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    parts.append(s[start:])
    return [p for p in parts if p]


USE = re.compile(r"\b(pub(?:\([a-z]+\))?\s+)?use\s+([^;]+);")
PATH = re.compile(r"(?<![\w:])((?:crate|super|self|[a-z_][a-z0-9_]*)(?:\s*::\s*[A-Za-z_][A-Za-z0-9_]*)+)")


class Crate:
    """The crate's files, their re-exports, and where a path leads."""

    def __init__(self, root: Path):
        self.root = root
        self.files = module_files(root)
        self.code: Dict[str, str] = {}
        self.tests: Dict[str, List[Tuple[int, int]]] = {}
        skipped: Set[str] = set()
        for module, path in self.files.items():
            code = blank(path.read_text(encoding="utf-8"))
            self.code[module] = code
            self.tests[module] = cfg_test_spans(code)
            skipped |= {f"{module}::{m}" if module else m for m in cfg_test_modules(code)}
        for module in list(self.files):
            if any(module == s or module.startswith(s + "::") for s in skipped):
                del self.files[module], self.code[module], self.tests[module]
        self.module_list = {m for m, p in self.files.items() if p.name in ("mod.rs", "lib.rs")}
        # name -> absolute path, for every `pub use` of a module-list file
        self.reexports: Dict[str, Dict[str, List[str]]] = {m: {} for m in self.files}
        for module in self.module_list:
            for m in USE.finditer(self.code[module]):
                if m.group(1) and not self.in_tests(module, m.start()):
                    for segs, name in use_paths(m.group(2)):
                        full = self.absolute(module, segs)
                        if full and name:
                            self.reexports[module][name] = full

    def in_tests(self, module: str, at: int) -> bool:
        return any(a <= at < b for a, b in self.tests[module])

    def absolute(self, module: str, segs: List[str]) -> Optional[List[str]]:
        """``segs`` written in ``module`` as a path from ``crate``, or None
        for a path into another crate."""
        here = module.split("::")
        if segs[0] == "crate":
            return segs
        if segs[0] in ("self", "super"):
            base = list(here)
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    base.pop()
                segs = segs[1:]
            return base + segs
        if "::".join(here + [segs[0]]) in self.files:  # a child module
            return here + segs
        return None

    def resolve(self, full: List[str], depth: int = 0) -> Optional[str]:
        """The module (file) whose code a path from ``crate`` names."""
        module = "crate"
        for i, seg in enumerate(full[1:], 1):
            child = f"{module}::{seg}"
            if child in self.files:
                module = child
                continue
            target = self.reexports.get(module, {}).get(seg)
            if target and depth < 8:
                return self.resolve(target + full[i + 1:], depth + 1)
            break
        return module

    def edges_of(self, module: str) -> Set[str]:
        code = self.code[module]
        found: Set[str] = set()
        names: List[List[str]] = []
        for m in USE.finditer(code):
            if self.in_tests(module, m.start()):
                continue
            if m.group(1) and module in self.module_list:
                continue  # a re-export: the users' edges go to its source
            names += [segs for segs, _ in use_paths(m.group(2))]
        rest = USE.sub(lambda m: " " * len(m.group(0)), code)  # the code outside use items
        for m in PATH.finditer(rest):
            if not self.in_tests(module, m.start()):
                names.append([s.strip() for s in m.group(1).split("::")])
        for segs in names:
            full = self.absolute(module, segs)
            if full:
                target = self.resolve(full)
                if target and target != module:
                    found.add(target)
        return found

    def graph(self) -> Dict[str, Set[str]]:
        """File -> the files it uses (paths relative to the crate's root)."""
        return {self.name(m): {self.name(t) for t in self.edges_of(m) if t in self.files} for m in self.files}

    def name(self, module: str) -> str:
        return self.files[module].relative_to(self.root).as_posix()


def crate_graph(root: Path = SRC) -> Dict[str, Set[str]]:
    """File -> the files it uses (paths relative to ``root``)."""
    return Crate(root).graph()


def layer_of(file: str) -> int:
    top = file.split("/")[0].removesuffix(".rs")
    for i, layer in enumerate(LAYERS):
        if top in layer:
            return i
    raise AssertionError(f"src/{file}: in no layer of test_crate_graph.LAYERS")


def upward_edges(graph: Dict[str, Set[str]]) -> Set[Tuple[str, str]]:
    """Every edge from a file to one in a higher layer."""
    return {(a, b) for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a)}


def test_the_crate_has_no_cycle():
    graph = crate_graph()
    assert len(graph) > 40  # the walk found the crate
    assert "pipeline/spec.rs" in graph["pipeline/mod.rs"]  # the walk finds edges
    cycle = find_cycle({a: {b for b in targets if (a, b) not in UPWARD_ALLOWED} for a, targets in graph.items()})
    assert not cycle, "cycle between files of src/: " + " -> ".join(cycle)


def test_the_crate_points_down_its_layers():
    graph = crate_graph()
    upward = upward_edges(graph)
    new = upward - UPWARD_ALLOWED
    assert not new, "files using a layer above their own: " + ", ".join(f"{a} -> {b}" for a, b in sorted(new))
    gone = UPWARD_ALLOWED - upward
    assert not gone, "no longer upward, remove from UPWARD_ALLOWED: " + ", ".join(f"{a} -> {b}" for a, b in sorted(gone))


LIB = "pub mod a;\npub mod b;\n#[cfg(test)]\nmod testing;\n"


@pytest.mark.parametrize("sources, cycle", [
    # a use of a sibling, and a qualified path back in code
    ({"a.rs": "use crate::b::X;\npub struct Y;", "b.rs": "pub struct X;\nfn f() { crate::a::Y; }"}, True),
    # the path back inside a comment, a string and a test module: no cycle
    ({"a.rs": "use crate::b::X;\npub struct Y;",
      "b.rs": '// crate::a::Y\nconst S: &str = "crate::a::Y";\n#[cfg(test)]\nmod tests {\n    use crate::a::Y;\n}\n'}, False),
    # use groups with self and super, in a folder
    ({"a.rs": "use crate::b::{self, c::{Z}};", "b/mod.rs": "pub mod c;\npub struct X;",
      "b/c.rs": "pub struct Z;\nuse super::super::a;"}, True),
    # a child uses its parent's own item, and the parent re-exports the child: no cycle
    ({"a.rs": "use crate::b::Z;", "b/mod.rs": "mod c;\npub use c::Z;\nconst NONE: u32 = 0;",
      "b/c.rs": "use super::NONE;\npub struct Z;"}, False),
    # a re-exported name leads to the defining file: c -> a -> (b's Z is c's) c
    ({"a.rs": "fn f() { crate::b::Z; }", "b/mod.rs": "mod c;\npub(crate) use c::Z;",
      "b/c.rs": "pub struct Z;\nfn g() { crate::a::f(); }"}, True),
    # a parent uses a child through a relative path, the child uses the parent's item
    ({"a.rs": "", "b/mod.rs": "mod c;\nuse c::Z;\npub struct P;", "b/c.rs": "pub struct Z;\nuse super::P;"}, True),
    # test-only files are left out
    ({"a.rs": "use crate::b::X;", "b.rs": "pub struct X;", "testing.rs": "use crate::a;\nuse crate::b;"}, False),
])
def test_the_check_can_fail(tmp_path, sources, cycle):
    """The check finds a cycle through uses, qualified paths, groups, super
    and re-exports, and not through comments, strings or test modules."""
    (tmp_path / "lib.rs").write_text(LIB)
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert bool(find_cycle(crate_graph(tmp_path))) is cycle


def test_the_layer_check_can_fail(tmp_path):
    """A file using one in a higher layer is an upward edge."""
    (tmp_path / "lib.rs").write_text("pub mod model;\npub mod pipeline;\n")
    (tmp_path / "model").mkdir()
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "model/mod.rs").write_text("pub mod bpe;\n")
    (tmp_path / "model/bpe.rs").write_text("fn f(s: &crate::pipeline::spec::Spec) {}\n")
    (tmp_path / "pipeline/mod.rs").write_text("pub mod spec;\n")
    (tmp_path / "pipeline/spec.rs").write_text("pub struct Spec;\nuse crate::model::bpe;\n")
    graph = crate_graph(tmp_path)
    assert upward_edges(graph) == {("model/bpe.rs", "pipeline/spec.rs")}
