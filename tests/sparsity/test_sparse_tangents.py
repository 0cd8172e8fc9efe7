"""Sparse tangents without coloring (dualad.functional._sparse_tangents).

The Jacobian carried as SciPy sparse matrices must equal the dense one of ``jacfwd`` (a
different mode: dense dual numbers) on every family with a rule, on the structural test
functions (banded, Bratu's 5-point stencil, Rosenbrock's residuals, arrowhead), on complex
values, with a seed of directions, over the op database (an entry either matches or raises
the error that points to coloring), and on seeded random compositions (hypothesis); a
primitive without a rule raises; memory and time proportional to the nonzeros.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

from sparsity.test_detection import (  # noqa: E402
    FAMILIES,
    arrowhead,
    banded,
    bratu,
    dense_jacobian,
    rosenbrock_residuals,
)
from sweeps.test_sparsity_sweep import _packed  # noqa: E402

import dualad  # noqa: E402
import dualad.functional as F  # noqa: E402
import dualad.numpy as dnp  # noqa: E402
from dualad.core.dispatch import apply  # noqa: E402
from dualad.functional._sparse_tangents import sparse_tangent_jacobian  # noqa: E402
from dualad.rules.linear import Index, index_add  # noqa: E402

from _support import opdb  # noqa: E402

RNG = np.random.default_rng(314)

NO_RULE = {"max_axis": "amax", "norm": "norm2", "cumsum_cumprod": "cumprod",
           "sum_axis": "prod", "inv_batched": "inv", "solve": "solve", "det": "det",
           "fft_axis": "fft"}
"""Families of test_detection whose functions meet a primitive without a sparse-tangent
rule: the primitive the error names."""


def assert_matches(f, x, seed=None):
    jac = sparse_tangent_jacobian(f, x, seed)
    assert isinstance(jac, sp.csr_array)
    dense = dense_jacobian(f, x)
    want = dense if seed is None else dense @ (seed.toarray() if sp.issparse(seed) else seed)
    assert jac.shape == want.shape
    np.testing.assert_allclose(jac.toarray(), want, rtol=1e-12, atol=1e-12)
    return jac


@pytest.mark.parametrize("f, n", [(banded, 12), (bratu, 36), (arrowhead, 9),
                                  (rosenbrock_residuals, 10)])
def test_structural_functions(f, n):
    jac = assert_matches(f, RNG.uniform(0.5, 1.5, n))
    # no more stored entries than the traced pattern's (memory ~ nonzeros)
    assert jac.nnz <= F.jacobian_sparsity(f, np.ones(n)).nnz


COVERED = sorted(set(FAMILIES) - set(NO_RULE))


@pytest.mark.parametrize("name", COVERED)
def test_families(name):
    f, n = FAMILIES[name]
    assert_matches(f, RNG.uniform(0.5, 1.5, n))


@pytest.mark.parametrize("name, prim", sorted(NO_RULE.items()))
def test_families_without_a_rule_raise(name, prim):
    f, n = FAMILIES[name]
    with pytest.raises(NotImplementedError, match=rf"'{prim}'.*strategy, 'auto'"):
        sparse_tangent_jacobian(f, RNG.uniform(0.5, 1.5, n))


def test_cumsum_mean_and_index_add():
    idx = np.array([0, 2, 2, 1, 0])

    def f(x):  # index_add: add.at, repeated indices summed
        y = apply(index_add, x ** 2, idx=Index((idx,), 1), shape=(3,))
        return dnp.concatenate([dnp.cumsum(x[::-1]), dnp.mean(x.reshape(5, 1) * x[:2], 0), y])

    assert_matches(f, RNG.uniform(0.5, 1.5, 5))


def test_complex_values():
    x = RNG.uniform(0.5, 1.5, 6) + 1j * RNG.uniform(-1, 1, 6)

    def holomorphic(z):
        return dnp.exp(z[1:]) * z[:-1] + (z ** 3).sum()

    def r_linear(z):  # abs, conj, real, imag, angle: alpha t + beta conj(t)
        return dnp.abs(z) ** 2 + dnp.conj(z[::-1]) * z + dnp.real(z) * dnp.imag(z) \
            + dnp.angle(z)

    assert_matches(holomorphic, x)
    assert_matches(r_linear, x)
    assert_matches(lambda z: dnp.abs(z * (1 + 2j)), RNG.uniform(0.5, 1.5, 4))  # real x


def test_seed_of_directions():
    x = RNG.uniform(0.5, 1.5, 10)
    seed = sp.random_array((10, 3), density=0.4, random_state=1, format="csr")
    assert_matches(rosenbrock_residuals, x, seed)
    assert_matches(bratu, RNG.uniform(0.5, 1.5, 16), np.ones((16, 1)))
    with pytest.raises(ValueError, match="seed must have x.size = 10 rows"):
        sparse_tangent_jacobian(rosenbrock_residuals, x, sp.identity(9))


def test_constant_output_and_misuse():
    jac = sparse_tangent_jacobian(lambda x: np.ones(3), np.ones(2))
    assert jac.shape == (3, 2) and jac.nnz == 0
    with pytest.raises(TypeError, match="one array"):
        sparse_tangent_jacobian(lambda x: [x], np.ones(2))

    class Cube(dualad.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 3

        @staticmethod
        def jvp(ctx, t):
            return t

    with pytest.raises(NotImplementedError, match="custom Function Cube.*coloring"):
        sparse_tangent_jacobian(lambda x: Cube.apply(x), np.ones(2))


def test_make_dual_with_a_sparse_tangent_points_here():
    with dualad.forward_ad.dual_level(), pytest.raises(TypeError, match="sparse-tangents"):
        dualad.forward_ad.make_dual(dualad.tensor(np.ones(3)), sp.identity(3), batched=True)


def test_memory_follows_the_nonzeros():
    # a banded Jacobian of 1.2 million nonzeros: only they are stored (a dense one would
    # hold 9e10 entries); its first rows against the closed form
    n = 300_000
    x = RNG.uniform(0.5, 1.5, n)
    jac = sparse_tangent_jacobian(banded, x)
    assert jac.shape == (n - 3, n) and jac.nnz == 4 * (n - 3)
    k = np.arange(5)
    want = np.zeros((5, 8))
    want[k, k] = -np.cos(x[k])
    want[k, k + 1] = x[k + 2] ** 2
    want[k, k + 2] = 2 * x[k + 2] * x[k + 1]
    want[k, k + 3] = 1
    np.testing.assert_allclose(jac[:5, :8].toarray(), want, rtol=1e-13)


# -- the op database: a match or the error that points to coloring ------------------------------


def _params() -> list:
    out = []
    for p in opdb.cases("sparse-tangents", ("float64",), first=2):
        op, _, s = p.values
        if s.diff and any(np.size(s.args[i]) for i in s.diff):
            out.append(pytest.param(op, s, id=p.id, marks=p.marks))
    return out


@pytest.mark.parametrize(("op", "sample"), _params())
def test_op_database(op, sample):
    f, x0 = _packed(op, sample)
    try:
        jac = sparse_tangent_jacobian(f, x0)
    except NotImplementedError as e:
        assert "sparse_jacobian with coloring" in str(e)
        return
    dense = F.jacfwd(f)(x0).numpy().reshape(jac.shape)
    np.testing.assert_allclose(jac.toarray(), dense, rtol=1e-10, atol=1e-12,
                               err_msg=op.name)


# -- seeded random compositions ----------------------------------------------------------------

STEPS = {
    "sin": lambda x: dnp.sin(x),
    "shift_product": lambda x: x * dnp.roll(x, 1),
    "cumsum": lambda x: dnp.cumsum(x) / x.size,
    "reverse_add": lambda x: x + 0.5 * x[::-1],
    "where": lambda x: dnp.where(x > 0.5, x ** 2, 1 - x),
    "matvec": lambda x: (np.tril(np.ones((x.size, x.size))) / x.size) @ x,
    "pad_slice": lambda x: dnp.pad(x, 1)[:-2] + x,
    "reshape_sum": lambda x: x + dnp.sum(x.reshape(2, -1), axis=0).repeat(2) * 0.1,
    "exp_tanh": lambda x: dnp.tanh(dnp.exp(-x)),
}


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5),
       st.integers(0, 2 ** 31 - 1))
def test_random_compositions(steps, seed):
    x = np.random.default_rng(seed).uniform(0.2, 1.2, 8)

    def f(x):
        for s in steps:
            x = STEPS[s](x)
        return x

    assert_matches(f, x)


@pytest.mark.parametrize("f, n", [(banded, 12), (bratu, 36), (arrowhead, 9),
                                  (rosenbrock_residuals, 10)])
def test_sparse_jacobian_strategy_sparse_tangents(f, n):
    """The public door: sparse_jacobian(..., strategy="sparse-tangents") is the colored
    result (a different method) and jacfwd's."""
    x = np.random.default_rng(3).uniform(0.5, 1.5, n)
    got = F.sparse_jacobian(f, x, strategy="sparse-tangents")
    colored = F.sparse_jacobian(f, x, strategy="bidirectional" if f is arrowhead else "forward")
    np.testing.assert_allclose(got.toarray(), colored.toarray(), rtol=1e-13, atol=1e-13)


def test_sparse_tangents_strategy_misuse():
    f = lambda x: x[1:] * x[:-1]  # noqa: E731
    with pytest.raises(ValueError, match="finds the pattern itself"):
        F.sparse_jacobian(f, np.ones(4), np.ones((3, 4)), strategy="sparse-tangents")
    with pytest.raises(ValueError, match="nothing to prepare"):
        F.prepare_sparse_jacobian(f, np.ones(4), strategy="sparse-tangents")
