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


@pytest.mark.parametrize("name", ["dualad"] + MODULES)
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
    return names


@pytest.mark.parametrize("name,obj", _public(), ids=[n for n, _ in _public()])
def test_every_public_name_has_a_running_example(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert doc.strip(), f"{name} has no docstring"
    assert ">>>" in doc, f"{name}'s docstring has no example (a '>>>' line)"


def test_full_like_takes_numpy_positional_arguments():
    # fill_value is full_like's second positional argument, dtype zeros_like's
    assert np.array_equal(dualad.numpy.full_like(np.zeros(2), 3.0).numpy(), [3.0, 3.0])
    assert dualad.numpy.zeros_like(np.zeros(2), np.float32).dtype == np.float32
    t = dualad.numpy.full_like(dualad.tensor([1.0, 2.0]), 5.0, dtype=np.float32)
    assert t.dtype == np.float32 and np.array_equal(t.numpy(), [5.0, 5.0])
