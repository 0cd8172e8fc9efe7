"""Derivatives at a removable singularity of a formula: ``sinc`` at and near 0.

sinc's derivative formula ``(cos(pi x) - sinc x) / x`` is 0 / 0 at 0 and cancels near it;
the table gives it by its Maclaurin series there. Every order and every composition of
modes must be finite and right at 0, at tiny x, and on both sides of the switch (|x| = 0.1),
against mpmath.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

mpmath.mp.dps = 40
POINTS = [0.0, 1e-9, -3e-5, 0.05, 0.0999999, 0.1, -0.1000001, 0.37, 2.0, -5.5]


def _sinc_derivative(x: float, k: int) -> float:
    f = lambda t: mpmath.sin(mpmath.pi * t) / (mpmath.pi * t) if t != 0 else mpmath.mpf(1)  # noqa: E731
    return float(mpmath.diff(f, mpmath.mpf(x), k))


def _scalar(fn, x: float) -> float:
    return float(fn(da.tensor(x)).detach().numpy())


@pytest.mark.parametrize("x", POINTS)
@pytest.mark.parametrize(("order", "mode"), [
    (1, "forward"), (1, "reverse"),
    (2, "forward"), (2, "reverse"), (2, "forward-over-reverse"), (2, "reverse-over-forward"),
    (3, "forward"), (3, "reverse"), (4, "forward"),
])
def test_sinc_derivatives_near_zero(x: float, order: int, mode: str) -> None:
    fn = dnp.sinc
    for step in range(order):
        if mode == "forward-over-reverse":
            wrap = F.jacfwd if step == order - 1 else F.grad
        elif mode == "reverse-over-forward":
            wrap = F.grad if step == order - 1 else F.jacfwd
        else:
            wrap = F.jacfwd if mode == "forward" else F.grad
        fn = wrap(fn)
    got = _scalar(fn, x)
    want = _sinc_derivative(x, order)
    assert np.isfinite(got)
    assert abs(got - want) <= 1e-12 * max(1.0, abs(want)) * 10 ** order, (got, want)


def test_sinc_hessian_is_diagonal_and_finite_at_zero() -> None:
    x = da.tensor([0.0, 0.1, -2.0])
    h = F.hessian(lambda v: dnp.sinc(v).sum(), x).numpy()
    assert np.all(np.isfinite(h))
    assert np.count_nonzero(h - np.diag(np.diag(h))) == 0
    want = [_sinc_derivative(v, 2) for v in (0.0, 0.1, -2.0)]
    np.testing.assert_allclose(np.diag(h), want, rtol=1e-12, atol=1e-13)


def test_sinc_float32_stays_float32() -> None:
    x = da.tensor(np.float32(0.0), requires_grad=True)
    (g,) = da.grad(dnp.sinc(x), x)
    assert g.dtype == np.float32 and float(g) == 0.0
