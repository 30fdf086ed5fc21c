"""``_core.pyi`` is the checked contract of the Rust extension.

The stub is parsed with ``ast`` and compared with the compiled
``bytepair._core`` (PyO3 gives each function and method a
``__text_signature__``, which ``inspect.signature`` reads): the same names
at module and class level, and for every function, method and constructor
the same parameter names, kinds and defaults. Types and return values are
not compared (the extension does not expose them); a stub default written
``...`` stands for any default, and is the only way to match a default that
PyO3 itself prints as ``...``.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from bytepair import _core

STUB = Path(__file__).resolve().parent.parent / "python" / "bytepair" / "_core.pyi"  # the stub of this checkout

# dunders that PyO3 adds to every class, or that describe it (not methods)
CLASS_PLUMBING = {"__new__", "__doc__", "__module__", "__dict__", "__weakref__", "__text_signature__"}


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"), filename=str(STUB))


def stub_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a stub body defines: functions, classes and annotated or
    assigned names (imports are the stub's own business)."""
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
    return names


def decorators(node: ast.FunctionDef) -> set[str]:
    return {d.id for d in node.decorator_list if isinstance(d, ast.Name)}


def stub_parameters(node: ast.FunctionDef, drop_first: bool) -> list[tuple[str, inspect._ParameterKind, object]]:
    """(name, kind, default) of each parameter of a stub function; the
    default is ``inspect.Parameter.empty`` when there is none and
    ``Ellipsis`` when the stub writes ``...``."""
    a = node.args
    positional = [(p, inspect.Parameter.POSITIONAL_ONLY) for p in a.posonlyargs]
    positional += [(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in a.args]
    defaults = [inspect.Parameter.empty] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [(p.arg, kind, d) for (p, kind), d in zip(positional, defaults)]
    if a.vararg:
        params.append((a.vararg.arg, inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append((p.arg, inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty if d is None else d))
    if a.kwarg:
        params.append((a.kwarg.arg, inspect.Parameter.VAR_KEYWORD, inspect.Parameter.empty))
    out = []
    for name, kind, default in params:
        if isinstance(default, ast.AST):
            default = ast.literal_eval(default)  # a stub default must be a literal (or ...)
        out.append((name, kind, default))
    if drop_first:
        assert out, f"{node.name} in the stub has no self parameter"
        out = out[1:]
    return out


def real_parameters(obj: object, what: str, drop_first: bool) -> list[tuple[str, inspect._ParameterKind, object]]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError) as e:
        raise AssertionError(f"{what} has no signature in the extension (no __text_signature__): {e}") from e
    params = [(p.name, p.kind, p.default) for p in signature.parameters.values()]
    if drop_first:
        assert params, f"{what} in the extension has no self parameter"
        params = params[1:]
    return params


def same_parameters(what: str, stub: list, real: list) -> list[str]:
    problems = []
    if [(n, k) for n, k, _ in stub] != [(n, k) for n, k, _ in real]:
        show = lambda ps: ", ".join(f"{n} ({k.name.lower()})" for n, k, _ in ps)  # noqa: E731
        return [f"{what}: the stub has ({show(stub)}), the extension ({show(real)})"]
    for (name, _, s), (_, _, r) in zip(stub, real):
        empty = inspect.Parameter.empty
        if (s is empty) != (r is empty):
            problems.append(f"{what}: parameter {name} has a default in only one of stub ({s!r}) and extension ({r!r})")
        elif s is not empty and s is not Ellipsis and (r is Ellipsis or s != r or type(s) is not type(r)):
            problems.append(f"{what}: parameter {name} defaults to {s!r} in the stub, {r!r} in the extension")
    return problems


def real_module_names() -> dict[str, object]:
    return {k: v for k, v in vars(_core).items() if not (k.startswith("__") and k.endswith("__"))}


def real_class_names(cls: type) -> dict[str, object]:
    # a dunder set to None (``__hash__`` of an unhashable class) is no method
    return {k: v for k, v in vars(cls).items() if k not in CLASS_PLUMBING and v is not None}


def test_stub_parses_and_names_the_extension():
    assert STUB.is_file()
    names = stub_names(stub_tree().body)
    # the extension this test compares with is the one the package imports
    assert set(real_module_names()) and set(names)


def test_module_names_agree():
    stub = set(stub_names(stub_tree().body))
    real = set(real_module_names())
    assert not real - stub, f"in the extension but not in _core.pyi: {sorted(real - stub)}"
    assert not stub - real, f"in _core.pyi but not in the extension: {sorted(stub - real)}"


def _functions():
    return sorted(k for k, v in real_module_names().items() if not inspect.isclass(v) and callable(v))


def _classes():
    return sorted(k for k, v in real_module_names().items() if inspect.isclass(v))


@pytest.mark.parametrize("name", _functions())
def test_function_signature(name):
    node = stub_names(stub_tree().body).get(name)
    assert isinstance(node, ast.FunctionDef), f"{name} is not a function in _core.pyi"
    what = f"_core.{name}"
    problems = same_parameters(what, stub_parameters(node, False), real_parameters(getattr(_core, name), what, False))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", _classes())
def test_class_agrees(name):
    cls = getattr(_core, name)
    node = stub_names(stub_tree().body).get(name)
    assert isinstance(node, ast.ClassDef), f"{name} is not a class in _core.pyi"
    members = stub_names(node.body)
    real = real_class_names(cls)
    problems = []

    # the constructor: PyO3's #[new] gives the class a text signature; the stub writes it as __init__
    init = members.pop("__init__", None)
    if cls.__text_signature__ is None:
        if init is not None:
            problems.append(f"{name}: the stub has __init__, the extension class has no constructor")
    elif init is None:
        problems.append(f"{name}: the extension class has a constructor {cls.__text_signature__}, the stub no __init__")
    else:
        problems += same_parameters(
            f"{name}()", stub_parameters(init, True), real_parameters(cls, f"{name}()", False)
        )

    missing = sorted(set(real) - set(members))
    extra = sorted(set(members) - set(real))
    if missing:
        problems.append(f"{name}: in the extension but not in _core.pyi: {missing}")
    if extra:
        problems.append(f"{name}: in _core.pyi but not in the extension: {extra}")

    for member in sorted(set(real) & set(members)):
        stub_node, raw = members[member], real[member]
        what = f"{name}.{member}"
        if not isinstance(stub_node, ast.FunctionDef):
            if callable(raw) or inspect.isgetsetdescriptor(raw):
                problems.append(f"{what} is an attribute in the stub, a method or property in the extension")
            continue
        marks = decorators(stub_node)
        if inspect.isgetsetdescriptor(raw) or isinstance(raw, property):
            if "property" not in marks:
                problems.append(f"{what} is a property in the extension, not marked @property in the stub")
            continue
        if "property" in marks:
            problems.append(f"{what} is marked @property in the stub, but is not one in the extension")
            continue
        static = isinstance(raw, staticmethod)
        if static != ("staticmethod" in marks):
            problems.append(f"{what}: staticmethod in {'the extension' if static else 'the stub'} only")
            continue
        if isinstance(raw, classmethod) != ("classmethod" in marks):
            problems.append(f"{what}: classmethod in one of stub and extension only")
            continue
        bound = getattr(cls, member)  # the function behind a static/class method
        problems += same_parameters(
            what,
            stub_parameters(stub_node, drop_first=not static),
            real_parameters(bound, what, drop_first=not static and not isinstance(raw, classmethod)),
        )
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the comparison itself can fail


def _parse_def(source: str) -> ast.FunctionDef:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_a_lagging_stub_is_caught():
    real = real_parameters(_core.CoreTokenizer.encode, "encode", True)  # (text, allowed, disallowed, add=False)
    old = _parse_def("def encode(self, text, allowed): ...")
    assert same_parameters("encode", stub_parameters(old, True), real)
    renamed = _parse_def("def encode(self, text, allow, disallowed): ...")
    assert same_parameters("encode", stub_parameters(renamed, True), real)
    keyword = _parse_def("def encode(self, text, *, allowed, disallowed): ...")
    assert same_parameters("encode", stub_parameters(keyword, True), real)
    right = _parse_def("def encode(self, text: str, allowed: object, disallowed: object, add: bool = False) -> list: ...")
    assert same_parameters("encode", stub_parameters(right, True), real) == []


def test_a_wrong_default_is_caught():
    real = real_parameters(_core.CoreTokenizer.encode_full, "encode_full", True)  # ... offsets=False, add=False
    right = _parse_def("def f(self, text, allowed, disallowed, dropout=None, offsets=False, add=False): ...")
    assert same_parameters("f", stub_parameters(right, True), real) == []
    any_default = _parse_def("def f(self, text, allowed, disallowed, dropout=..., offsets=..., add=...): ...")
    assert same_parameters("f", stub_parameters(any_default, True), real) == []
    wrong = _parse_def("def f(self, text, allowed, disallowed, dropout=None, offsets=True, add=False): ...")
    assert same_parameters("f", stub_parameters(wrong, True), real)
    zero = _parse_def("def f(self, text, allowed, disallowed, dropout=None, offsets=0, add=False): ...")
    assert same_parameters("f", stub_parameters(zero, True), real)  # 0 == False, but not the same default
    none = _parse_def("def f(self, text, allowed, disallowed, dropout=None, offsets=None, add=False): ...")
    assert same_parameters("f", stub_parameters(none, True), real)
    required = _parse_def("def f(self, text, allowed, disallowed, dropout, offsets, add=False): ...")
    assert same_parameters("f", stub_parameters(required, True), real)
