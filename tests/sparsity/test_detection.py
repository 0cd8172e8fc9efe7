"""Sparsity detection by tracing (dualad.functional.jacobian_sparsity, hessian_sparsity).

Exact patterns on structural test functions (banded, the 5-point stencil of the Bratu
residual, arrowhead, Rosenbrock's residuals and Hessian) against the nonzeros of the dense
Jacobian / Hessian at a random point (jacfwd, hessian); each family's rule against the
dense Jacobian; the dense block's warning and ``strict``; custom Functions; seeded random
compositions (hypothesis) that must never miss a nonzero.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

import dualad  # noqa: E402
import dualad.functional as F  # noqa: E402
import dualad.numpy as dnp  # noqa: E402

RNG = np.random.default_rng(31)


def dense_jacobian(f, x):
    y = F.jacfwd(f)(x).numpy()
    return y.reshape(-1, x.size)


def assert_exact(f, x):
    """The traced pattern equals the dense Jacobian's nonzeros at x (generic x: no
    accidental zero)."""
    pattern = F.jacobian_sparsity(f, x)
    assert isinstance(pattern, sp.csr_array) and pattern.dtype == bool
    np.testing.assert_array_equal(pattern.toarray(), dense_jacobian(f, x) != 0)


def assert_covers(f, x):
    """The traced pattern contains every nonzero of the dense Jacobian at x."""
    pattern = F.jacobian_sparsity(f, x).toarray()
    dense = dense_jacobian(f, x) != 0
    assert pattern.shape == dense.shape
    assert not (dense & ~pattern).any(), np.argwhere(dense & ~pattern)[:5]
    return pattern


# -- structural test functions: exact patterns ---------------------------------------------


def banded(x):  # bandwidth 2 below, 1 above
    return x[2:-1] ** 2 * x[1:-2] - dnp.sin(x[:-3]) + x[3:]


def bratu(u, lam=6.0):
    """The 2-D Bratu residual on an m x m grid, zero Dirichlet boundary (5-point stencil)."""
    m = int(round(u.size ** 0.5))
    v = dnp.pad(u.reshape(m, m), 1)
    lap = 4 * v[1:-1, 1:-1] - v[:-2, 1:-1] - v[2:, 1:-1] - v[1:-1, :-2] - v[1:-1, 2:]
    return (lap - lam / (m + 1) ** 2 * dnp.exp(v[1:-1, 1:-1])).ravel()


def arrowhead(x):  # a dense first row and column, the diagonal
    head = dnp.sum(x ** 2)[None]
    return dnp.concatenate([head, x[0] * x[1:] + x[1:] ** 3])


def rosenbrock_residuals(x):
    return dnp.concatenate([10 * (x[1:] - x[:-1] ** 2), 1 - x[:-1]])


def rosenbrock(x):
    return dnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("f, n", [(banded, 12), (bratu, 36), (arrowhead, 9),
                                  (rosenbrock_residuals, 10)])
def test_structural_patterns_are_exact(f, n):
    assert_exact(f, RNG.uniform(0.5, 1.5, n))


def test_bratu_pattern_is_the_five_point_stencil():
    m = 5
    p = F.jacobian_sparsity(bratu, np.ones(m * m)).toarray()
    i, j = np.divmod(np.arange(m * m), m)
    near = (np.abs(i[:, None] - i[None]) + np.abs(j[:, None] - j[None])) <= 1
    np.testing.assert_array_equal(p, near)


def test_rosenbrock_hessian_is_tridiagonal():
    n = 8
    x = RNG.uniform(0.5, 1.5, n)
    h = F.hessian_sparsity(rosenbrock, x)
    band = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 1
    np.testing.assert_array_equal(h.toarray(), band)
    np.testing.assert_array_equal(h.toarray(), F.hessian(rosenbrock, x).numpy() != 0)


def test_hessian_of_linear_and_bilinear_parts():
    x = RNG.uniform(0.5, 1.5, 4)

    def f(x):  # linear in x3, a product x0 x1, a nonlinear x2 alone
        return dnp.sum(3 * x[3] + x[0] * x[1] + dnp.exp(x[2]))

    want = np.zeros((4, 4), bool)
    want[0, 1] = want[1, 0] = want[2, 2] = True
    np.testing.assert_array_equal(F.hessian_sparsity(f, x).toarray(), want)
    np.testing.assert_array_equal(want, F.hessian(f, x).numpy() != 0)


def test_hessian_keeps_to_the_inputs_the_output_reads():
    # x1 * x2 is computed but never reaches the output: no pair of it is reported
    def f(x):
        _ = x[1] * x[2]
        return dnp.sum(x[0] ** 2)

    np.testing.assert_array_equal(F.hessian_sparsity(f, np.ones(3)).toarray(),
                                  np.diag([True, False, False]))


def test_hessian_needs_a_scalar():
    with pytest.raises(ValueError, match="scalar"):
        F.hessian_sparsity(lambda x: x ** 2, np.ones(3))


# -- the families -----------------------------------------------------------------------------

A_CONST = np.where(RNG.uniform(size=(5, 6)) < 0.4, RNG.normal(size=(5, 6)), 0.0)

FAMILIES = {
    # elementwise, broadcasting, derivative-free functions
    "broadcast": (lambda x: x[:3].reshape(3, 1) * x[3:].reshape(1, 4), 7),
    "floor_is_constant": (lambda x: dnp.floor(x + 2) * x[::-1] + dnp.sign(x), 5),
    "comparisons": (lambda x: dnp.where(x > 1, x, 2 * x[::-1]), 5),
    "maximum_clip": (lambda x: dnp.maximum(x[1:], x[:-1]) + dnp.clip(x[1:], 0.7, 1.2), 6),
    # structural
    "transpose_reshape": (lambda x: x.reshape(3, 4).T.ravel()[::2], 12),
    "fancy_index": (lambda x: x[np.array([3, 0, 3, 5])] * x[[1, 1, 2, 0]], 6),
    "boolean_mask": (lambda x: x[np.arange(6) % 2 == 0] ** 2, 6),
    "pad_roll_flip": (lambda x: dnp.roll(dnp.pad(x, (2, 1)), 2) + dnp.flip(dnp.pad(x, (1, 2))), 5),
    "repeat_tile": (lambda x: dnp.repeat(x, 2) * dnp.tile(x, 2), 4),
    "stack_split": (lambda x: dnp.stack(dnp.split(x, 3)[::-1]).ravel() ** 3, 6),
    "diagonal_trace": (lambda x: dnp.concatenate([dnp.diagonal(x.reshape(3, 3)),
                                                  dnp.trace(x.reshape(3, 3))[None]]), 9),
    "triu": (lambda x: dnp.triu(x.reshape(3, 3)).ravel(), 9),
    "setitem": (lambda x: _setitem(x), 6),
    "diag_scatter": (lambda x: dnp.diag(x[:3] * x[1:]).ravel(), 4),
    "take_along_axis": (lambda x: dnp.take_along_axis(x.reshape(2, 3), np.array([[2], [0]]),
                                                      axis=1).ravel(), 6),
    # reductions and scans
    "sum_axis": (lambda x: dnp.sum(x.reshape(3, 4), axis=0) + dnp.prod(x.reshape(3, 4), 0), 12),
    "max_axis": (lambda x: dnp.max(x.reshape(3, 4), axis=1), 12),
    "cumsum_cumprod": (lambda x: dnp.cumsum(x.reshape(2, 3), axis=1).ravel()
                       + dnp.cumprod(x.reshape(2, 3), axis=0).ravel(), 6),
    "norm": (lambda x: dnp.linalg.norm(x.reshape(2, 3), axis=1), 6),
    # contractions
    "matmul_const_left": (lambda x: A_CONST @ x, 6),
    "matmul_const_right": (lambda x: x[:5] @ A_CONST, 6),
    "matmul_batched": (lambda x: (x.reshape(2, 2, 3) @ A_CONST[:3, :2]).ravel(), 12),
    "matmul_both": (lambda x: (x[:6].reshape(2, 3) @ x[6:].reshape(3, 2)).ravel(), 12),
    "einsum_const": (lambda x: dnp.einsum("ij,kj->ik", A_CONST, x.reshape(2, 6)).ravel(), 12),
    "dot_vectors": (lambda x: dnp.dot(x[:3], x[3:])[None], 6),
    "outer": (lambda x: dnp.outer(x[:2], x[2:]).ravel(), 5),
    # linear algebra, fft
    "inv_batched": (lambda x: dnp.linalg.inv(x.reshape(2, 2, 2) + 3 * np.eye(2)).ravel(), 8),
    "solve": (lambda x: dnp.linalg.solve(x[:4].reshape(2, 2) + 3 * np.eye(2), x[4:]), 6),
    "det": (lambda x: dnp.linalg.det(x.reshape(2, 2, 2) + 3 * np.eye(2)), 8),
    "fft_axis": (lambda x: dnp.abs(dnp.fft.fft(x.reshape(2, 4), axis=1)).ravel(), 8),
}


def _setitem(x):
    y = x * 1.0
    y[1:3] = x[4:] ** 2
    y[0] = 5.0  # (a constant written: its element depends on nothing)
    y[-1] = np.float64(3.0)
    return y


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_patterns_cover_the_jacobian(name):
    f, n = FAMILIES[name]
    assert_covers(f, RNG.uniform(0.5, 1.5, n))


EXACT = ("broadcast", "floor_is_constant", "transpose_reshape", "fancy_index", "boolean_mask",
         "pad_roll_flip", "repeat_tile", "stack_split", "diagonal_trace", "triu", "setitem",
         "diag_scatter", "take_along_axis", "sum_axis", "cumsum_cumprod", "norm",
         "matmul_const_left", "matmul_const_right", "matmul_batched", "matmul_both",
         "einsum_const", "dot_vectors", "outer", "inv_batched", "solve", "det")


@pytest.mark.parametrize("name", EXACT)
def test_family_patterns_are_exact(name):
    f, n = FAMILIES[name]
    assert_exact(f, RNG.uniform(0.5, 1.5, n))


def test_where_and_maximum_union_both_branches():
    # the pattern holds at every point, not just at the one traced
    p = F.jacobian_sparsity(lambda x: dnp.maximum(x[:2], x[2:]), np.array([5.0, 5, 0, 0]))
    np.testing.assert_array_equal(p.toarray(), [[1, 0, 1, 0], [0, 1, 0, 1]])


def test_constant_output_and_shapes():
    p = F.jacobian_sparsity(lambda x: dnp.ones((2, 3)), np.ones(4))
    assert p.shape == (6, 4) and p.nnz == 0
    p = F.jacobian_sparsity(lambda x: dnp.sum(x.reshape(2, 2) ** 2), np.ones((2, 2)))
    assert p.shape == (1, 4) and p.nnz == 4


# -- no rule: a dense block, a warning, strict ---------------------------------------------


class Cube(dualad.function.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


class ElementwiseCube(Cube):
    @staticmethod
    def sparsity_pattern(pattern, *, n):
        return pattern  # elementwise: each output element reads its own input element


def test_custom_function_without_a_rule_is_one_dense_block():
    with pytest.warns(F.SparsityWarning, match="Cube"):
        p = F.jacobian_sparsity(lambda x: Cube.apply(x[1:]), np.ones(3))
    np.testing.assert_array_equal(p.toarray(), [[0, 1, 1], [0, 1, 1]])
    with pytest.raises(NotImplementedError, match="Cube.*strict"):
        F.jacobian_sparsity(lambda x: Cube.apply(x[1:]), np.ones(3), strict=True)


def test_custom_function_pattern_rule():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = F.jacobian_sparsity(lambda x: ElementwiseCube.apply(x[1:]), np.ones(3))
    np.testing.assert_array_equal(p.toarray(), [[0, 1, 0], [0, 0, 1]])
    assert_exact(lambda x: ElementwiseCube.apply(x[1:]), RNG.uniform(0.5, 1.5, 3))


def test_level_is_closed_after_an_error():
    from dualad.core import levels

    before = list(levels.stack)
    with pytest.raises(ZeroDivisionError):
        F.jacobian_sparsity(lambda x: 1 / 0, np.ones(2))
    assert levels.stack == before


def test_nests_inside_a_dual_level():
    # the pattern of d/dt f(x + t v) in x: traced inside a forward-mode level
    import dualad.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(dualad.tensor(np.ones(4)), dualad.tensor(np.ones(4)))
        p = F.jacobian_sparsity(lambda z: z[1:] * z[:-1], x)
    np.testing.assert_array_equal(p.toarray(), F.jacobian_sparsity(
        lambda z: z[1:] * z[:-1], np.ones(4)).toarray())


# -- random compositions (seeded): never a missing nonzero ---------------------------------

UNARY = [dnp.sin, dnp.exp, dnp.square, lambda v: v * 2.0, dnp.tanh, lambda v: v[::-1],
         lambda v: dnp.cumsum(v), lambda v: dnp.roll(v, 1), dnp.abs]
BINARY = [lambda a, b: a * b, lambda a, b: a + b, lambda a, b: a / (1 + b * b),
          lambda a, b: dnp.maximum(a, b), lambda a, b: dnp.hypot(a, b)]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, len(UNARY) - 1), st.integers(0, len(BINARY) - 1),
                          st.integers(-3, 3)), min_size=1, max_size=5))
def test_random_compositions_never_miss(program):
    def f(x):
        v = x
        for u, b, shift in program:
            v = BINARY[b](UNARY[u](v), dnp.roll(x, shift))
        return v

    x = np.random.default_rng(len(program)).uniform(0.5, 1.5, 6)
    assert_covers(f, x)
    g = lambda x: dnp.sum(dnp.sin(f(x)))  # noqa: E731
    h = F.hessian_sparsity(g, x).toarray()
    dense = F.hessian(g, x).numpy() != 0
    assert not (dense & ~h).any()


def test_scatter_add_with_repeated_indices():
    # index_add (the transpose of a gather; np.add.at) unions the elements added at a place
    from dualad.core.dispatch import apply
    from dualad.rules import linear as L

    idx = L.Index((np.array([0, 2, 0, 1, 2]),), 1)
    f = lambda x: apply(L.index_add, x ** 2, idx=idx, shape=(3,))  # noqa: E731
    np.testing.assert_array_equal(F.jacobian_sparsity(f, np.ones(5)).toarray(),
                                  [[1, 0, 1, 0, 0], [0, 0, 0, 1, 0], [0, 1, 0, 0, 1]])
    assert_exact(f, RNG.uniform(0.5, 1.5, 5))
