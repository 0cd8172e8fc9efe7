"""Sparse Hessians from batched forward-over-reverse HVPs (dualad.functional.sparse_hessian).

References: dualad's dense hessian, SymPy's on a small case, and random
sparse interaction graphs; star and acyclic colorings, every chunk size.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

import dualad.functional as F  # noqa: E402


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def grid_energy(u, n=5):
    """A discrete p-Laplacian energy on an n x n grid: a 5-point Hessian."""
    g = np.reshape(u, (n, n))
    return (np.sum((g[1:] - g[:-1]) ** 4) + np.sum((g[:, 1:] - g[:, :-1]) ** 4)
            + np.sum(np.cosh(g)))


def arrow_energy(x):
    """A dense row and column (x[0] meets every variable)."""
    return np.sum(np.sin(x[0] * x[1:])) + np.sum(x ** 4)


def dense_hessian(f, x):
    return np.asarray(F.hessian(f, x).numpy()).reshape(x.size, x.size)


def pattern_of(f, x):
    return sp.csr_array(dense_hessian(f, x) != 0)


CASES = {"rosenbrock": (rosenbrock, 8), "grid": (grid_energy, 25), "arrow": (arrow_energy, 9)}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("coloring", ["star", "acyclic"])
@pytest.mark.parametrize("chunk_size", [None, 1, 2])
def test_equals_dense(name, coloring, chunk_size):
    f, n = CASES[name]
    x = np.random.default_rng(0).uniform(-1, 1, n)
    H = F.sparse_hessian(f, x, pattern_of(f, x), coloring=coloring, chunk_size=chunk_size)
    assert isinstance(H, sp.csr_array)
    want = dense_hessian(f, x)
    np.testing.assert_allclose(H.toarray(), want, rtol=1e-12, atol=1e-12 * abs(want).max())


def test_sympy_reference():
    sympy = pytest.importorskip("sympy")
    xs = sympy.symbols("x0:6")
    expr = sum(100 * (xs[i + 1] - xs[i] ** 2) ** 2 + (1 - xs[i]) ** 2 for i in range(5))
    x = np.random.default_rng(1).uniform(-1, 1, 6)
    want = np.array(sympy.hessian(expr, xs).subs(dict(zip(xs, x, strict=True))), dtype=float)
    H = F.sparse_hessian(rosenbrock, x, pattern_of(rosenbrock, x), coloring="acyclic")
    np.testing.assert_allclose(H.toarray(), want, rtol=1e-12, atol=1e-10)


def test_colors_of_a_band():
    x = np.zeros(50)
    pattern = np.eye(50) + np.eye(50, k=1) + np.eye(50, k=-1)
    assert F.prepare_sparse_hessian(rosenbrock, x, pattern).ncolors == 3
    acyclic = F.prepare_sparse_hessian(rosenbrock, x, pattern, coloring="acyclic")
    assert acyclic.ncolors == 2
    np.testing.assert_allclose(acyclic(x + 0.3).toarray(), dense_hessian(rosenbrock, x + 0.3),
                               rtol=1e-12, atol=1e-9)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.integers(2, 14), st.integers(0, 2 ** 31 - 1), st.sampled_from(["star", "acyclic"]))
def test_random_interactions(n, seed, coloring):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < 0.25, 1)
    i, j = np.nonzero(upper)
    w = rng.standard_normal(i.size)

    def f(x):
        return np.sum(w * np.sin(x[i] * x[j])) + np.sum(x ** 3)

    x = rng.standard_normal(n)
    pattern = upper | upper.T | np.eye(n, dtype=bool)
    H = F.sparse_hessian(f, x, pattern, coloring=coloring)
    np.testing.assert_allclose(H.toarray(), dense_hessian(f, x), rtol=1e-11, atol=1e-11)


def test_prepared_at_several_points_and_structure():
    f, n = CASES["grid"]
    rng = np.random.default_rng(2)
    x0 = rng.uniform(-1, 1, n)
    H = F.prepare_sparse_hessian(f, x0, pattern_of(f, x0), check=1)
    rows, cols = H.structure()
    assert H.ncolors >= H.lower_bound
    for _ in range(3):
        x = rng.uniform(-1, 1, n)
        want = dense_hessian(f, x)
        np.testing.assert_allclose(H(x).toarray(), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(H.values(x), want[rows, cols], rtol=1e-12, atol=1e-12)


def test_check_catches_a_stale_pattern():
    state = {"coupled": False}

    def f(x):
        e = np.sum(x ** 4)
        return e + x[0] * x[-1] if state["coupled"] else e

    x = np.arange(1.0, 6.0)
    H = F.prepare_sparse_hessian(f, x, np.eye(5), check=2)
    H(x)
    state["coupled"] = True
    H(x)  # call 2: not checked
    with pytest.raises(RuntimeError, match="Hessian-vector product.*structure changed"):
        H(x)


def test_misuse():
    x = np.ones(4)
    with pytest.raises(ValueError, match="one scalar output"):
        F.sparse_hessian(lambda v: v ** 2, x, np.eye(4))
    with pytest.raises(ValueError, match=r"expected \(4, 4\)"):
        F.sparse_hessian(rosenbrock, x, np.eye(5))
    with pytest.raises(TypeError, match="real x"):
        F.sparse_hessian(lambda z: np.sum(np.abs(z) ** 2), x + 1j, np.eye(4))
    with pytest.raises(ValueError, match="coloring must be one of"):
        F.sparse_hessian(rosenbrock, x, np.eye(4), coloring="distance-2")
    with pytest.raises(ValueError, match="symmetric pattern is square|expected"):
        F.sparse_hessian(rosenbrock, x, np.ones((4, 3)))


def test_detected_pattern():
    f, n = CASES["grid"]
    x = np.random.default_rng(3).uniform(-1, 1, n)
    np.testing.assert_allclose(F.sparse_hessian(f, x).toarray(), dense_hessian(f, x),
                               rtol=1e-12, atol=1e-12)
