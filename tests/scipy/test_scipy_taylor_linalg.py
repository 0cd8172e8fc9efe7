"""The Taylor-coefficient rules of ``dualad.scipy.linalg`` (``sqrtm``, ``logm``)
against 3 nested dual levels (real, complex, non-symmetric) and mpmath's ``sqrtm`` and
``logm`` at 40 digits to order 8."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

import dualad as da
from dualad.scipy import linalg as SL
from dualad.scipy import linalg as STL

from _support.taylor_reference import mp_path, mp_series, nested_series

mp.mp.dps = 40
PRIMS = {"sqrtm": SL.sqrtm_p, "logm": SL.logm_p}


def _path(rng, order, cplx=False, spd=True):
    def draw():
        a = rng.standard_normal((3, 3))
        return a + 1j * rng.standard_normal((3, 3)) if cplx else a

    a0 = draw()
    a0 = a0 @ a0.conj().T + 3 * np.eye(3) if spd else a0 + 4 * np.eye(3)
    return [a0] + [0.3 * draw() for _ in range(order)]


def _close(got, want, tol):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=0, atol=tol * (1 + np.abs(w).max()),
                                   err_msg=f"coefficient {k}")


def test_every_rule_is_checked():
    assert set(STL.SCIPY_LINALG_TAYLOR_RULES) == set(PRIMS)


@pytest.mark.parametrize("kind", ["symmetric", "complex", "general"])
@pytest.mark.parametrize("name", sorted(PRIMS))
def test_against_nested_dual_levels(name, kind):
    a = _path(np.random.default_rng(len(kind)), 3, cplx=kind == "complex",
              spd=kind != "general")
    _close(STL.SCIPY_LINALG_TAYLOR_RULES[name](a), nested_series(PRIMS[name], [a], 3), 1e-12)


@pytest.mark.parametrize("name", sorted(PRIMS))
def test_order_8_against_mpmath(name):
    a = _path(np.random.default_rng(2), 8, spd=False)
    path = mp_path(a)
    fn = mp.sqrtm if name == "sqrtm" else mp.logm
    _close(STL.SCIPY_LINALG_TAYLOR_RULES[name](a), mp_series(lambda t: fn(path(t)), 8, (3, 3)),
           1e-10)


def test_sqrtm_squares_back_along_the_path():
    # the series X(t) of sqrtm, squared as a series, is A(t) (coefficients up to the order)
    a = _path(np.random.default_rng(5), 6, spd=False)
    xs = STL._sqrtm_taylor(a)
    for k in range(7):
        sq = sum(xs[j] @ xs[k - j] for j in range(k + 1))
        np.testing.assert_allclose(sq, a[k], atol=1e-12 * np.abs(a[0]).max())


def test_a_rule_on_dual_tensors_carries_their_tangents():
    rng = np.random.default_rng(7)
    a = _path(rng, 3)
    e = rng.standard_normal((3, 3))
    with da.dual_level():
        dual = [da.make_dual(da.tensor(a[0]), da.tensor(e))] + [da.tensor(c) for c in a[1:]]
        tangents = [np.asarray(da.unpack_dual(y).tangent._data) for y in STL._logm_taylor(dual)]
    h = 1e-6
    up, dn = STL._logm_taylor([a[0] + h * e] + a[1:]), STL._logm_taylor([a[0] - h * e] + a[1:])
    for t, u, d in zip(tangents, up, dn, strict=True):
        np.testing.assert_allclose(t, (u - d) / (2 * h), rtol=1e-5, atol=1e-6)
