"""The CLI package keeps its imports pointing one way (issue 15): the parser
imports the command modules, a command imports the leaf ``options`` module
and helpers, never the parser or ``main``; ``options`` imports no other CLI
module; serve's HTTP handler does not import serve. Read from the source
with ``ast``, function-level imports included. Also: the one size grammar
(``bytepair.limits.parse_size``) behind ``--max-bytes`` and ``max_memory``."""

from __future__ import annotations

import ast
import pathlib

import pytest

import bytepair.cli
from bytepair import limits
from bytepair.cli import main

CLI = pathlib.Path(bytepair.cli.__file__).parent


def cli_imports(path: pathlib.Path):
    """The ``bytepair.cli`` modules that ``path`` imports (anywhere in it)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bytepair.cli"):
            if node.module == "bytepair.cli":
                out.update(f"bytepair.cli.{a.name}" if (CLI / f"{a.name}.py").exists() else "bytepair.cli"
                           for a in node.names)
            else:
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("bytepair.cli"))
    return out


MODULES = sorted(p for p in CLI.glob("*.py") if p.stem not in ("__init__", "__main__", "parser"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_commands_do_not_import_the_parser_or_main(path):
    assert not cli_imports(path) & {"bytepair.cli", "bytepair.cli.parser"}


def test_options_is_a_leaf():
    assert cli_imports(CLI / "options.py") == set()


def test_the_http_handler_does_not_import_serve():
    assert "bytepair.cli.serve" not in cli_imports(CLI / "_http.py")


def test_every_command_module_is_registered():
    from bytepair.cli.parser import COMMANDS

    helpers = {"options", "common", "parity", "superword", "_pieces", "_http"}
    assert {f"bytepair.cli.{p.stem}" for p in MODULES if p.stem not in helpers} == set(COMMANDS)


def test_one_size_grammar():
    # powers of 1000 and of 1024, an optional B, any case: what the two former parsers accepted, together
    assert limits.parse_size("1GiB") == 2**30 and limits.parse_size("3gb") == 3 * 10**9
    assert limits.parse_memory("1GiB") == 2**30 and limits.parse_memory("3gb") == 3 * 10**9
    for bad in ("lots", "-5", "inf", "nan", "", "K"):
        with pytest.raises(ValueError):
            limits.parse_size(bad)


def test_max_bytes_takes_binary_suffixes_and_refuses_infinity(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest " * 50, encoding="utf-8")
    out = tmp_path / "c.counts"
    assert main(["count-words", str(corpus), "--max-bytes", "1KiB", "-o", str(out)]) == 0
    assert out.exists()
    with pytest.raises(SystemExit) as e:
        main(["count-words", str(corpus), "--max-bytes", "inf", "-o", str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--max-bytes" in err and "'inf' is not a size" in err and "Traceback" not in err
