"""The modules of ``python/bytepair`` import one another in one direction:
the import graph, built with ``ast`` from every ``import`` statement
(function-level ones included), has no cycle. Importing ``a.b.c`` first runs
the package ``a.b``'s ``__init__``, so the graph has that edge too (a cycle
through a package ``__init__`` otherwise works or breaks by import order).
See ARCHITECTURE.md."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "bytepair"


def module_files(root: Path = PACKAGE) -> Dict[str, Path]:
    """Every module of the package by dotted name."""
    out = {}
    for path in root.rglob("*.py"):
        parts = ["bytepair", *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imported(module: str, path: Path, node: ast.AST, known: Set[str]) -> List[str]:
    """The package modules an import statement in ``module`` names."""
    names: List[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        names = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
    out = []
    for name in names:
        while name not in known and "." in name:  # an attribute of a module, or the compiled _core
            name = name.rsplit(".", 1)[0]
        if name in known and name != module and name.startswith("bytepair"):
            out.append(name)
            out.extend(packages_run_first(module, name, known))
    return out


def packages_run_first(module: str, name: str, known: Set[str]) -> List[str]:
    """The packages whose ``__init__`` importing ``name`` runs, leaving out
    those that hold ``module`` (their ``__init__`` has run before it)."""
    parts = name.split(".")
    parents = (".".join(parts[:i]) for i in range(1, len(parts)))
    return [p for p in parents if p in known and not (module == p or module.startswith(p + "."))]


def import_graph(root: Path = PACKAGE) -> Dict[str, Set[str]]:
    files = module_files(root)
    known = set(files) | {"bytepair._core"}
    graph: Dict[str, Set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name].update(m for m in imported(name, path, node, known) if m in files)
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One cycle of ``graph`` as a path that returns to its start, or []."""
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 30  # the walk found the package
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("sources, cycle", [
    ({"a.py": "from bytepair import b", "b.py": "def f():\n    from bytepair.a import x"}, True),
    ({"a.py": "from . import b", "b.py": "import os"}, False),
    ({"a.py": "from .b import y", "b.py": "def f():\n    from . import a"}, True),
    # a.py imports sub.c, which runs sub/__init__, which imports sub.d, which imports a
    ({"a.py": "from bytepair.sub.c import x", "sub/__init__.py": "from bytepair.sub.d import y",
      "sub/c.py": "x = 1", "sub/d.py": "from bytepair import a"}, True),
    # modules inside sub import each other and sub/__init__ imports them: no cycle
    ({"a.py": "import os", "sub/__init__.py": "from bytepair.sub.c import x",
      "sub/c.py": "from bytepair.sub.d import y", "sub/d.py": "y = 1"}, False),
])
def test_the_check_finds_function_level_cycles(tmp_path, sources, cycle):
    """The check can fail: a cycle closed by an import inside a function is found."""
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "__init__.py").write_text("")
    assert bool(find_cycle(import_graph(tmp_path))) is cycle
