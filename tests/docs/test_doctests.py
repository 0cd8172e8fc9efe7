"""Docstrings that run: every docstring example in dualad is a doctest of this suite,
and every public name of the API reference has one.

Examples follow torch's docstrings in using ``dualad`` (and ``np``, ``dnp``) without importing
them; those names are given to every doctest.
"""

import doctest
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import dualad

MODULES = sorted(m.name for m in pkgutil.walk_packages(dualad.__path__, "dualad."))
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _tests(name):
    mod = importlib.import_module(name)
    globs = {"dualad": dualad, "np": np, "dnp": dualad.numpy}
    found = doctest.DocTestFinder().find(mod, name, globs=globs)
    return [t for t in found if t.examples and t.name.startswith(name)]


# (the examples of ``python -m dualad.codegen`` print what the fast layer generated)
_OF_THE_FAST_LAYER = {"dualad.codegen"}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.fastpath()) if n in _OF_THE_FAST_LAYER else n
    for n in ["dualad"] + MODULES])
def test_docstring_examples_run(name):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    for t in _tests(name):
        runner.run(t, out=report.append)
    assert runner.failures == 0, "".join(report)


def _public():
    """The names the API reference (docs/api/index.md) documents."""
    import dualad.functional as F
    import dualad.sympy as S

    names = [(n, getattr(dualad, n)) for n in dualad.__all__ if not n.startswith("_")]
    names = [(n, o) for n, o in names if not inspect.ismodule(o)]
    names += [(f"functional.{n}", getattr(F, n)) for n in F.__all__]
    names += [(f"sympy.{n}", getattr(S, n)) for n in (
        "check", "lambdify", "LambdifiedFunction", "CrossCheckReport", "CrossCheckEntry",
        "CrossCheckError", "UnsupportedFunctionError")]
    names += [(f"Tensor.{n}", getattr(dualad.Tensor, n)) for n in (
        "backward", "detach", "detach_", "requires_grad_", "retain_grad", "register_hook",
        "register_post_accumulate_grad_hook", "is_inference", "numpy", "item", "tolist",
        "astype")]
    for where in NAMESPACES:  # every public callable of the NumPy and SciPy namespaces
        mod = importlib.import_module(f"dualad.{where}")
        names += [(f"{where}.{n}", getattr(mod, n)) for n in mod.__all__
                  if not n.startswith("_") and callable(getattr(mod, n))]
    return names


NAMESPACES = ("numpy", "numpy.linalg", "numpy.fft", "scipy.special", "scipy.linalg",
              "scipy.signal", "scipy.integrate", "scipy.stats")
PUBLIC = _public()


@pytest.mark.parametrize("name,obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_every_public_name_has_a_running_example(name, obj):
    # (the names still missing one: pytest tests/docs/test_doctests.py -q -k has_a_running_example)
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    assert ">>>" in doc, f"{name}'s docstring has no example (a '>>>' line)"


# Public objects DocTestFinder does not look into (it takes a module's functions and
# classes: not instances, such as the ufuncs, dnp.sin), each once.
INSTANCES = list({id(o): (n, o) for n, o in reversed(PUBLIC)
                  if not (inspect.isroutine(o) or inspect.isclass(o))}.values())


@pytest.mark.parametrize("name,obj", INSTANCES, ids=[n for n, _ in INSTANCES])
def test_instance_docstring_examples_run(name, obj):
    globs = {"dualad": dualad, "np": np, "dnp": dualad.numpy}
    test = doctest.DocTestParser().get_doctest(inspect.getdoc(obj) or "", globs, name, None, 0)
    assert test.examples, f"{name}'s docstring has no example"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def _examples():
    """The ufuncs' examples (``ufunc_docs.EXAMPLES`` and scipy.special's): (name, primitive,
    entry, SymPy counterpart)."""
    from dualad.rules import elementwise as E
    from dualad.rules.ufunc_docs import EXAMPLES
    from dualad.scipy import special

    return ([(n, E.PRIMS[n], e, "SYMPY_FUNCTIONS") for n, e in EXAMPLES.items()]
            + [(n, special.PRIMS[n], e, "SCIPY_SPECIAL_FUNCTIONS")
               for n, e in special.EXAMPLES.items()])


EXAMPLES = _examples()
ROUNDED = 5e-9 - 1e-12  # half the last of 8 decimals, less a margin


def _printed(text):
    """The entries of an array as dualad prints it ('[ 0.6+0.8j, -1. +0.j ]')."""
    items = [s.strip() for s in text.strip()[1:-1].split(",")]
    if items[0] in ("True", "False"):
        return np.array([s == "True" for s in items])
    return np.array([complex(s.replace(" ", "")) for s in items])


def _exact_grad(f, point, i):
    """d/d(input i) of SymPy's ``f`` at ``point``; for a complex input (a real result), the
    conjugate Wirtinger gradient dL/dx + 1j dL/dy (invariant 7 of docs/architecture.md)."""
    import sympy

    from _support.symbolic import flat as _flat

    if isinstance(point[0], complex):
        x, y = sympy.symbols("x y", real=True)
        L = f(x + sympy.I * y)
        at = {x: point[0].real, y: point[0].imag}
        return complex(sympy.N(sympy.diff(L, x).subs(at))) + 1j * complex(
            sympy.N(sympy.diff(L, y).subs(at)))
    syms = sympy.symbols(f"s0:{len(point)}", real=True)
    d = _flat(sympy.diff(f(*syms), syms[i]))
    return complex(sympy.N(d.subs({s: sympy.Float(v) for s, v in zip(syms, point, strict=True)})))


@pytest.mark.parametrize("name,prim,entry,counterparts", EXAMPLES,
                         ids=[e[0] for e in EXAMPLES])
def test_ufunc_examples_print_the_exact_values(name, prim, entry, counterparts):
    """The texts the ufuncs' doctests expect, against NumPy's (SciPy's) values and SymPy's
    derivatives: right, and each at least 1e-12 (some 100 ulps) inside its 8-decimal
    rounding, so that a result a few ulps off on another CPU prints the same."""
    pytest.importorskip("sympy")
    if counterparts == "SCIPY_SPECIAL_FUNCTIONS":
        pytest.importorskip("scipy")
    import dualad.sympy as S

    inputs, value, grads = entry
    arrays = [np.array(v) for v in inputs]
    shown = _printed(value)
    want = prim.ufunc(*arrays)
    if shown.dtype == bool:
        assert np.array_equal(shown, want)
    else:
        np.testing.assert_allclose(shown, want, rtol=0, atol=ROUNDED, equal_nan=True)
    assert len(grads) == (0 if prim.nondiff else len(inputs))
    for i, g in enumerate(grads):
        f = getattr(S, counterparts)[name]
        got = _printed(g)
        for k in range(len(got)):
            point = [a[k].item() for a in arrays]
            if any(v != v for v in point):  # fmax, fmin: the other argument, NaN ignored
                exact = float(point[i] == point[i] and want[k] == point[i])
            else:
                exact = _exact_grad(f, point, i)
            assert abs(got[k] - exact) <= ROUNDED, (name, i, k, got[k], exact)


def test_full_like_takes_numpy_positional_arguments():
    # fill_value is full_like's second positional argument, dtype zeros_like's
    assert np.array_equal(dualad.numpy.full_like(np.zeros(2), 3.0).numpy(), [3.0, 3.0])
    assert dualad.numpy.zeros_like(np.zeros(2), np.float32).dtype == np.float32
    t = dualad.numpy.full_like(dualad.tensor([1.0, 2.0]), 5.0, dtype=np.float32)
    assert t.dtype == np.float32 and np.array_equal(t.numpy(), [5.0, 5.0])
