"""dualad.scipy.special's Bessel functions of any order (jv, yv, jn, yn, iv, ive), the
inverse error functions and logsumexp's ``return_sign``: values against SciPy's,
derivatives against torch (where torch.special has the function) or central differences,
forward against reverse, and a Hessian. (The order-0/1 Bessel functions, erfinv, erfcinv
and rgamma are formula primitives: tests/rules/test_scipy_special.py checks them against
SymPy to second order in both modes.)"""

from __future__ import annotations

import numpy as np
import pytest
from _scipy_checks import check_hessian, check_modes

import dualad as da
import dualad.functional as F
from dualad.scipy import special as S

sp = pytest.importorskip("scipy.special")

ORDERED = [("jv", 1.5, (0.3, 6.0)), ("yv", 0.5, (0.5, 6.0)), ("iv", 2.5, (0.2, 3.0)),
           ("ive", 1.0, (-3.0, 3.0)), ("jn", 2, (0.3, 6.0)), ("yn", 1, (0.5, 6.0))]


@pytest.mark.parametrize("name,order,dom", ORDERED, ids=[o[0] for o in ORDERED])
def test_ordered_bessel_values_modes_and_hessian(name, order, dom):
    rng = np.random.default_rng(len(name))
    x = rng.uniform(*dom, size=(2, 3))
    f = getattr(S, name)
    np.testing.assert_allclose(f(order, da.tensor(x)).numpy(), getattr(sp, name)(order, x),
                               rtol=1e-14, atol=0)
    check_modes(lambda t: f(order, t), [x], rng, fd_rtol=1e-6)
    check_hessian(lambda t: f(order, t), x, rng)


@pytest.mark.parametrize("name", ["jv", "iv", "ive", "yv", "jn", "yn"])
def test_a_derivative_in_the_order_raises(name):
    v = da.tensor(1.0, requires_grad=True)
    with pytest.raises(NotImplementedError, match="only x may carry a derivative"):
        getattr(S, name)(v, da.tensor(1.5)).backward()


# (torch.special's bessel_j0, ... have no derivative: those are checked against SymPy)
TORCH = {"i0": "i0", "i1": "i1", "i0e": "i0e", "i1e": "i1e", "erfinv": "erfinv"}


@pytest.mark.parametrize("name", sorted(TORCH))
def test_against_torch_special(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    lo, hi = (-0.9, 0.9) if name == "erfinv" else (-3.0, 3.0)
    x = rng.uniform(lo, hi, size=5)
    check_modes(getattr(S, name), [x], rng, torch_f=getattr(torch.special, TORCH[name]),
                rtol=1e-8)


def test_erfcinv_inverts_erfc_and_psi_is_digamma():
    x = da.tensor(np.linspace(0.1, 1.9, 5), requires_grad=True)
    y = S.erfcinv(x)
    np.testing.assert_allclose(S.erfc(y).detach().numpy(), x.detach().numpy(), rtol=1e-14)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sqrt(np.pi) / 2 * np.exp(y.detach().numpy() ** 2),
                               rtol=1e-14)
    assert S.psi is S.digamma


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (1, False)])
def test_logsumexp_return_sign(axis, keepdims):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    r, sign = S.logsumexp(da.tensor(a), axis=axis, b=b, keepdims=keepdims, return_sign=True)
    want_r, want_sign = sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    np.testing.assert_allclose(r.numpy(), want_r, rtol=1e-13)
    assert np.array_equal(sign, want_sign) and np.shape(sign) == np.shape(want_sign)

    def f(t):
        return S.logsumexp(t, axis=axis, b=b, keepdims=keepdims, return_sign=True)[0]

    check_modes(f, [a], rng, fd_rtol=1e-6)
    check_hessian(f, a, rng)


def test_logsumexp_return_sign_refuses_complex():
    with pytest.raises(NotImplementedError, match="real a and b"):
        S.logsumexp(da.tensor([1.0 + 1j]), return_sign=True)


def test_gammasgn_is_scipys_and_carries_no_derivative():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 200.0])
    t = da.tensor(x, requires_grad=True)
    got = S.gammasgn(t)
    np.testing.assert_array_equal(got.numpy(), sp.gammasgn(x))
    assert not got.requires_grad
    _, tangent = F.jvp(S.gammasgn, da.tensor(x), da.tensor(np.ones(5)))
    assert not np.any(tangent.numpy())  # (forward mode: a zero tangent)
