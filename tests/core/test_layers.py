"""The package's layers (docs/architecture.md): import-linter's contracts hold, no module is in
an import cycle with another (function-local imports counted), and Tensor's methods are
declared in the classes it inherits, each with a meaning the layers above register."""

import ast
import inspect
import pathlib
import subprocess
import sys

import pytest

import dualad
from dualad import _fastpaths, _tensor_methods, rules
from dualad.core.tensor import Tensor

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(dualad.__file__).parent


def test_import_linter_contracts_are_kept():
    pytest.importorskip("importlinter", reason="import-linter is in the [test] extra")
    # (the fast layer's contract needs the layer: tools/without_fast.py runs without it)
    only = () if _fastpaths.PRESENT else ("layers",)
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename='pyproject.toml', limit_to_contracts={only!r},"
            " no_cache=True, no_logo=True))")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def _imports(path: pathlib.Path, module: str, modules: set[str]) -> set[str]:
    """The modules of the package that ``module`` (at ``path``) imports, anywhere in it
    (function-local imports too; not those under ``if TYPE_CHECKING:``). ``from a import b``
    imports ``a.b`` if that is a module, else ``a``; a module not in the tree (the fast layer,
    deleted) is none."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{up}.{base}" if base else up
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                         for a in node.names)
    return (found & modules) - {module}


def _walk(tree: ast.AST):
    """``ast.walk``, leaving out the bodies of ``if TYPE_CHECKING:``."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _cycles() -> list[set[str]]:
    """The strongly connected components of more than one module in the import graph."""
    paths = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph = {m: _imports(p, m, set(paths)) for m, p in paths.items()}
    reach = {m: _reachable(graph, m) for m in graph}
    comps = {frozenset(n for n in reach[m] if m in reach[n]) | {m} for m in graph}
    return [set(c) for c in comps if len(c) > 1]


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for n in graph[todo.pop()] - seen:
            seen.add(n)
            todo.append(n)
    return seen


def test_no_module_is_in_an_import_cycle():
    cycles = [sorted(c) for c in _cycles()]
    assert not cycles, f"import cycles (function-local imports counted): {cycles}"


def test_the_cycle_finder_finds_one(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub.c import x\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..d import y\n"
        "import pkg.a\n")
    (pkg / "d.py").write_text("from .sub import c\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert _cycles() == [{"pkg.a", "pkg.b", "pkg.sub.c"}]


def test_every_declared_method_has_a_meaning_and_every_meaning_a_declaration():
    declared, meant = _tensor_methods.declared(), set(_tensor_methods.methods)
    assert declared - meant == set(), "declared, with no meaning registered"
    assert meant - declared == set(), "registered, not declared"


def test_tensor_gets_no_attribute_from_outside_its_class_statement():
    # Everything of Tensor is in its class body or in the classes it inherits; the one slot
    # another module fills is the fast layer's operators (rules.register_operator)
    body = ast.parse(inspect.getsource(Tensor)).body[0]
    own = {t.id for n in body.body if isinstance(n, ast.Assign) for t in n.targets
           if isinstance(t, ast.Name)}
    own |= {n.name for n in body.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    own |= set(Tensor.__slots__) | {"__module__", "__qualname__", "__doc__", "__firstlineno__",
                                    "__static_attributes__", "__annotations__"}
    added = set(vars(Tensor)) - own
    assert added <= set(rules.OPERATORS), sorted(added - set(rules.OPERATORS))
    for name in added:  # (each a function of the same meaning, compiled by the fast layer)
        assert name in _tensor_methods.ArrayMethods.__dict__


def test_a_method_keeps_its_documentation():
    assert Tensor.backward.__doc__ and ">>>" in Tensor.backward.__doc__
    assert "dualad.numpy.sum" in Tensor.sum.__doc__ and ">>>" in Tensor.sum.__doc__
    with pytest.raises(TypeError, match="raw memory access"):
        dualad.ones(2).tobytes()
    assert "raw memory access" in Tensor.tobytes.__doc__
