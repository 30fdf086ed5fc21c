"""Every docstring example in the package runs as a test.

The modules are found by walking the installed package (``pkgutil``), not
from a hand-kept list, so a module that is added, moved or renamed has its
examples run without editing this file. ``__main__`` is left out, as
``pytest --doctest-modules`` leaves it out: importing it runs the CLI.
"""

import doctest
import importlib
import inspect
import pkgutil

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
