"""Every docstring example in the package runs as a test.

The modules are found by walking the installed package (``pkgutil``), not
from a hand-kept list, so a module that is added, moved or renamed has its
examples run without editing this file. ``__main__`` is left out, as
``pytest --doctest-modules`` leaves it out: importing it runs the CLI.
"""

import doctest
import importlib
import inspect
import pathlib
import pkgutil
import re

import pytest

import bytepair


def _raise(name):
    raise ImportError(f"cannot import {name} while collecting the doctests")


MODULES = ["bytepair"] + sorted(
    info.name
    for info in pkgutil.walk_packages(bytepair.__path__, "bytepair.", onerror=_raise)
    if info.name.rpartition(".")[2] != "__main__"
)


def test_every_module_is_collected():
    # the walk must see the modules this file once listed by hand
    for name in ["bytepair.tokenizer", "bytepair.stream", "bytepair.limits", "bytepair.formats.hf"]:
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    public = [
        key
        for key, value in vars(module).items()
        if not key.startswith("_") and inspect.isfunction(value) and value.__module__ == name
    ]
    assert result.attempted > 0 or not public, f"{name} has public functions {public} but no docstring example"


# ---------------------------------------------------------------- citations stand on their own

ROOT = pathlib.Path(__file__).resolve().parent.parent
CITING = ["tests", "python", "benches", "scripts", "docs", "README.md", "ARCHITECTURE.md"]


def _texts():
    for top in CITING:
        path = ROOT / top
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.suffix in {".py", ".md", ".sh", ".pyi"})
        for f in files:
            if "data" not in f.relative_to(ROOT).parts:
                yield f, f.read_text(encoding="utf-8", errors="replace")


def test_nothing_cites_what_is_outside_the_repository():
    """A reader has the repository only: no text cites the contract's
    sections (kept outside it) or a path outside it; tests say in their own
    words what they check."""
    outside = []
    for f, text in _texts():
        where = f.relative_to(ROOT)
        outside += [(where, m) for m in re.findall(r"SPEC(?:\.md)? §\d+|spec\.md §\d+|(?:\.\./|/work/)shared/\S*", text)]
    assert outside == []


def test_docs_name_no_issue_numbers():
    """A reader of the docs has the repository, not the issue tracker:
    measurements name the command and date, decisions say what was chosen."""
    found = []
    for f in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "benches" / "README.md"]:
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{f.relative_to(ROOT)}:{i}: {m}" for m in re.findall(r"\b[Ii]ssues? ?#?\d+", line)]
    assert found == []


def test_the_benchmark_page_answers_its_questions_with_measured_tables():
    """docs/benchmarks.md: one section per question; every table says its run (date, command, machine) and gives
    each tool's version; every figure it shows is committed."""
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for question in ["## How fast is training?", "## How fast is encoding with my model's tokenizer?",
                     "## How much memory?"]:
        assert question in page
    blocks = page.split("\n### ")[1:]
    assert blocks, "no tables"
    for block in blocks:
        title = block.splitlines()[0]
        assert re.search(r"Measured \d{4}-\d\d-\d\d \d\d:\d\d with `python benches/\S+", block), title
        assert "| tool | version |" in block, title
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", page)
    assert images
    for image in images:
        assert (ROOT / "docs" / image).is_file(), image
