"""Sparse Jacobians from colored batched products (dualad.functional.sparse_jacobian).

References: dualad's dense jacfwd (forward mode, one basis vector per column)
and jacrev (reverse mode, one per row) on small cases, and finite differences
on the structured ones; every strategy, coloring order and chunk size.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

import dualad.functional as F  # noqa: E402


def rosenbrock_residuals(x):
    return np.concatenate([10 * (x[1:] - x[:-1] ** 2), 1 - x[:-1]])


def arrowhead(x):
    """A dense first row and a dense first column: needs a bidirectional coloring."""
    return np.concatenate([np.sum(np.sin(x) * x[0])[None], x[1:] ** 2 * x[0] + np.exp(x[1:])])


def bratu(u, n=6, lam=1.0):
    """The 5-point Bratu residual on an n x n grid, zero boundary values."""
    g = np.reshape(u, (n, n))
    p = np.pad(g, 1)
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * g
    return np.reshape(lap * (n + 1) ** 2 + lam * np.exp(g), (-1,))


def dense(f, x, mode="forward"):
    jac = F.jacfwd(f) if mode == "forward" else F.jacrev(f)
    return np.asarray(jac(x).numpy()).reshape(-1, x.size)


def pattern_of(f, x):
    """The pattern as the nonzeros of the dense Jacobian at a random point (and one
    stored zero more, to see stored zeros kept)."""
    return sp.csr_array(dense(f, x) != 0)


CASES = {
    "rosenbrock": (rosenbrock_residuals, 9),
    "arrowhead": (arrowhead, 7),
    "bratu": (bratu, 36),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("strategy", ["auto", "forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("chunk_size", [None, 1, 2])
def test_equals_dense_in_every_strategy(name, strategy, chunk_size):
    f, n = CASES[name]
    x = np.random.default_rng(1).uniform(0.5, 1.5, n)
    J = F.sparse_jacobian(f, x, pattern_of(f, x), strategy=strategy, chunk_size=chunk_size)
    assert isinstance(J, sp.csr_array)
    np.testing.assert_allclose(J.toarray(), dense(f, x), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("order", ["natural", "largest_first", "smallest_last",
                                   "incidence_degree", "best"])
def test_every_coloring_order(order):
    f, n = CASES["bratu"]
    x = np.random.default_rng(2).uniform(0, 1, n)
    J = F.sparse_jacobian(f, x, pattern_of(f, x), coloring_order=order)
    np.testing.assert_allclose(J.toarray(), dense(f, x), rtol=1e-13, atol=1e-13)


def test_matches_finite_differences():
    from scipy.optimize._numdiff import approx_derivative

    f, n = CASES["bratu"]
    x = np.random.default_rng(3).uniform(0, 1, n)
    J = F.sparse_jacobian(f, x, pattern_of(f, x))
    fd = approx_derivative(lambda v: bratu(v), x, method="cs")
    np.testing.assert_allclose(J.toarray(), fd, rtol=1e-12, atol=1e-10)


def test_auto_picks_fewest_products():
    x = np.ones(30)
    assert F.prepare_sparse_jacobian(rosenbrock_residuals, x,
                                     pattern_of(rosenbrock_residuals, x)).coloring.kind == "column"
    prepared = F.prepare_sparse_jacobian(arrowhead, x[:12], pattern_of(arrowhead, x[:12]))
    assert prepared.coloring.kind == "bidirectional"
    assert prepared.ncolors <= 3 and prepared.lower_bound == 2
    # a dense row alone: rows (one VJP) beat columns (one JVP per column)
    pattern = np.ones((1, 8))
    by_rows = F.prepare_sparse_jacobian(lambda v: np.sum(v ** 2)[None], np.ones(8), pattern)
    assert by_rows.coloring.kind == "row" and by_rows.ncolors == 1
    np.testing.assert_allclose(by_rows(np.arange(8.0)).toarray(), [2 * np.arange(8.0)])


def test_complex_forward_equals_jacfwd():
    def f(z):  # not holomorphic: jacfwd's matrix is the derivative along real directions
        return np.concatenate([z[1:] * np.conj(z[:-1]), np.exp(z[:1])])

    z = np.random.default_rng(4).standard_normal(6) + 1j * np.random.default_rng(5).standard_normal(6)
    pattern = pattern_of(f, z)
    for strategy in ("auto", "forward"):
        J = F.sparse_jacobian(f, z, pattern, strategy=strategy)
        np.testing.assert_allclose(J.toarray(), dense(f, z), rtol=1e-13)
    J = F.sparse_jacobian(f, z, pattern, strategy="reverse")
    np.testing.assert_allclose(J.toarray(), dense(f, z, "reverse"), rtol=1e-13)
    z = np.concatenate([z, z])  # an arrowhead needs VJPs beside the JVPs: refused
    with pytest.raises(ValueError, match="jacrev's convention"):
        F.sparse_jacobian(arrowhead, z, pattern_of(arrowhead, z), strategy="bidirectional")


def test_real_to_complex_auto_refuses_rows():
    def g(x):  # one dense output row: auto would pick a VJP
        return np.sum(np.exp(1j * x))[None]

    with pytest.raises(ValueError, match="strategy='forward'"):
        F.sparse_jacobian(g, np.ones(5), np.ones((1, 5)))
    J = F.sparse_jacobian(g, np.ones(5), np.ones((1, 5)), strategy="forward")
    np.testing.assert_allclose(J.toarray(), dense(g, np.ones(5)), rtol=1e-13)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 2 ** 31 - 1),
       st.sampled_from(["auto", "forward", "reverse", "bidirectional"]))
def test_random_patterns(m, n, seed, strategy):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n)) * (rng.random((m, n)) < 0.3)

    def f(x):
        return (a @ np.sin(x)) ** 2 + a @ x

    x = rng.standard_normal(n)
    J = F.sparse_jacobian(f, x, a != 0, strategy=strategy)
    np.testing.assert_allclose(J.toarray(), dense(f, x), rtol=1e-12, atol=1e-12)


def test_prepared_at_several_points_and_ipopt_forms():
    f, n = CASES["bratu"]
    rng = np.random.default_rng(6)
    x0 = rng.uniform(0, 1, n)
    J = F.prepare_sparse_jacobian(f, x0, pattern_of(f, x0), check=2)
    rows, cols = J.structure()
    assert J.ncolors == 5 and J.lower_bound == 5
    for _ in range(4):
        x = rng.uniform(-1, 1, (6, 6))  # (any shape with x's size? no: x's own shape)
        x = x.reshape(-1)
        want = dense(f, x)
        np.testing.assert_allclose(J(x).toarray(), want, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(J.values(x), want[rows, cols], rtol=1e-13, atol=1e-13)


def test_input_of_any_shape():
    def f(x):  # a (3, 4) input, a (3, 3) output: rows and columns flattened in C order
        return x[:, 1:] * x[:, :-1]

    x = np.random.default_rng(7).standard_normal((3, 4))
    J = F.sparse_jacobian(f, x, pattern_of(f, x))
    np.testing.assert_allclose(J.toarray(), dense(f, x), rtol=1e-13)


class _Switch:
    """A function whose structure changes when ``wide`` is set (a stale pattern)."""

    def __init__(self):
        self.wide = False

    def __call__(self, x):
        y = x ** 2
        return y + x[::-1] if self.wide else y


def test_check_catches_a_stale_pattern():
    f = _Switch()
    x = np.arange(1.0, 6.0)
    J = F.prepare_sparse_jacobian(f, x, np.eye(5), check=1)
    J(x)
    f.wide = True
    with pytest.raises(RuntimeError, match="structure changed"):
        J(x)


def test_check_every_k_calls():
    f = _Switch()
    x = np.arange(1.0, 6.0)
    J = F.prepare_sparse_jacobian(f, x, np.eye(5), check=3)
    J(x)  # call 1: checked
    f.wide = True
    J(x), J(x)  # calls 2 and 3: not checked
    with pytest.raises(RuntimeError, match="stale|structure changed"):
        J(x)  # call 4: checked


def test_check_by_rows():
    f = _Switch()
    x = np.arange(1.0, 6.0)
    J = F.prepare_sparse_jacobian(f, x, np.eye(5), strategy="reverse", check=1)
    J(x)
    f.wide = True
    with pytest.raises(RuntimeError, match="vector-Jacobian product"):
        J(x)


def test_misuse():
    x = np.ones(4)
    f = rosenbrock_residuals
    with pytest.raises(ValueError, match="x has 4 elements"):
        F.sparse_jacobian(f, x, np.ones((6, 5)))
    with pytest.raises(ValueError, match="pattern has 5 rows"):
        F.sparse_jacobian(f, x, np.ones((5, 4)))
    with pytest.raises(ValueError, match="strategy must be one of"):
        F.sparse_jacobian(f, x, np.ones((6, 4)), strategy="sideways")
    with pytest.raises(ValueError, match="chunk_size"):
        F.sparse_jacobian(f, x, np.ones((6, 4)), chunk_size=0)
    with pytest.raises(ValueError, match="check must be"):
        F.prepare_sparse_jacobian(f, x, np.ones((6, 4)), check=0)
    with pytest.raises(ValueError, match="unknown order"):
        F.sparse_jacobian(f, x, np.ones((6, 4)), coloring_order="random")
    with pytest.raises(TypeError, match="floating or complex"):
        F.sparse_jacobian(f, np.arange(4), np.ones((6, 4)))
    with pytest.raises(ValueError, match="prepared for x of shape"):
        F.prepare_sparse_jacobian(f, x, np.ones((6, 4)))(np.ones(5))
    with pytest.raises(TypeError, match="one array"):
        F.sparse_jacobian(lambda v: (v, v), x, np.ones((4, 4)))


def test_a_differentiated_x_is_refused():
    import dualad

    x = dualad.tensor(np.ones(4), requires_grad=True)
    with pytest.raises(TypeError, match=r"x.detach\(\)"):
        F.sparse_jacobian(rosenbrock_residuals, x, np.ones((6, 4)))
    J = F.sparse_jacobian(rosenbrock_residuals, x.detach(), np.ones((6, 4)))
    np.testing.assert_allclose(J.toarray(), dense(rosenbrock_residuals, np.ones(4)))

    def outer(y):  # inside jacfwd, x is dual: a SciPy result would drop its tangent
        F.sparse_hessian(lambda v: np.sum(v ** 3), y, np.eye(4))
        return y

    with pytest.raises(TypeError, match="carries no derivatives"):
        F.jacfwd(outer)(np.ones(4))


def test_detected_pattern():
    f, n = CASES["bratu"]
    x = np.random.default_rng(8).uniform(0, 1, n)
    J = F.sparse_jacobian(f, x)
    np.testing.assert_allclose(J.toarray(), dense(f, x), rtol=1e-13, atol=1e-13)
    assert F.prepare_sparse_jacobian(f, x).ncolors == 5


def test_inside_a_live_batched_level():
    """Only one batched level may be live: inside one, one pass per color (same result)."""
    import dualad
    from dualad import forward_ad as fwAD
    from dualad.functional._common import batched_level_live

    f, n = CASES["arrowhead"]
    x = np.random.default_rng(9).uniform(0.5, 1.5, n)
    want = dense(f, x)
    with fwAD.dual_level():
        fwAD.make_dual(dualad.tensor(np.ones(2)), dualad.tensor(np.eye(2)), batched=True)
        assert batched_level_live()
        for strategy in ("forward", "reverse", "bidirectional"):
            J = F.sparse_jacobian(f, x, want != 0, strategy=strategy)
            np.testing.assert_allclose(J.toarray(), want, rtol=1e-13, atol=1e-13)
        H = F.sparse_hessian(lambda v: np.sum(np.sin(v[0] * v)), x,
                             np.ones((n, n)))
        np.testing.assert_allclose(
            H.toarray(), np.asarray(F.hessian(lambda v: np.sum(np.sin(v[0] * v)), x).numpy()),
            rtol=1e-12, atol=1e-12)
