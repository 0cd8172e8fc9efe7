"""dualad.scipy.integrate.odeint: values equal to SciPy's, derivatives in y0, args and t
in forward and reverse mode against central differences of scipy.integrate.odeint at
tight tolerances, and against each other; second derivatives (every composition of the
two modes) against differences of the gradient and against each other."""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

sp_integrate = pytest.importorskip("scipy.integrate")
from dualad.scipy.integrate import odeint  # noqa: E402

TOL = {"rtol": 1e-10, "atol": 1e-10}
T = np.linspace(0.0, 3.0, 7)
Y0 = np.array([1.0, -0.5])
K, C = 2.0, 0.3
W = np.array([[0.5, -1.0], [0.25, 2.0]])  # an array argument


def oscillator(y, t, k, c, w):
    """A forced, damped oscillator with a non-linear term (dualad.numpy)."""
    return [y[1] + 0.1 * dnp.sum(w[0] * y), -k * y[0] - c * y[1] + 0.2 * dnp.sin(t) * y[0] ** 2
            + 0.05 * w[1, 1]]


def oscillator_np(y, t, k, c, w):
    return [y[1] + 0.1 * np.sum(w[0] * y), -k * y[0] - c * y[1] + 0.2 * np.sin(t) * y[0] ** 2
            + 0.05 * w[1, 1]]


def solve_np(y0=Y0, k=K, c=C, w=W, t=T):
    return sp_integrate.odeint(oscillator_np, y0, t, args=(k, c, w), **TOL)


def solve(y0, k, c, w, t=T):
    return odeint(oscillator, y0, t, args=(k, c, w), **TOL)


def central(f, x, u, h=1e-5):
    return (f(x + h * u) - f(x - h * u)) / (2 * h)


def fd_directional(u_y0, u_k, u_c, u_w, u_t=None):
    """The derivative of SciPy's solution in one direction of all inputs, by differences."""
    u_t = np.zeros_like(T) if u_t is None else u_t
    return central(lambda s: solve_np(Y0 + s * u_y0, K + s * u_k, C + s * u_c, W + s * u_w,
                                      T + s * u_t), 0.0, 1.0)


def test_values_equal_scipy():
    got = solve(Y0, K, C, W)
    np.testing.assert_allclose(got.numpy(), solve_np(), rtol=1e-13, atol=1e-13)
    assert got.shape == (len(T), 2)


def test_forward_and_reverse_against_finite_differences():
    rng = np.random.default_rng(0)
    u = (rng.standard_normal(2), rng.standard_normal(), rng.standard_normal(),
         rng.standard_normal((2, 2)))
    fd = fd_directional(*u)
    inputs = (da.tensor(Y0), da.tensor(K), da.tensor(C), da.tensor(W))
    _, ju = F.jvp(solve, inputs, tuple(da.tensor(x) for x in u))
    np.testing.assert_allclose(ju.numpy(), fd, rtol=1e-6, atol=1e-7)
    v = rng.standard_normal((len(T), 2))
    _, grads = F.vjp(solve, inputs, da.tensor(v))
    # <v, J u> = <J^T v, u>: the adjoint method against the sensitivities, to the tolerance
    lhs = float(np.sum(v * ju.numpy()))
    rhs = sum(float(np.sum(g.numpy() * x)) for g, x in zip(grads, u, strict=True))
    assert abs(lhs - rhs) < 1e-7 * (1 + abs(lhs))
    # each gradient against differences in its own input
    for i, g in enumerate(grads):
        for j in range(g.numpy().size):
            e = [np.zeros_like(np.asarray(x, dtype=float)) for x in u]
            e[i].flat[j] = 1.0
            want = float(np.sum(v * fd_directional(*e)))
            assert abs(g.numpy().flat[j] - want) < 1e-6 * (1 + abs(want)), (i, j)


def test_jacobians_forward_vs_reverse():
    jf = F.jacfwd(lambda y0, k: solve(y0, k, C, W), argnums=(0, 1))(da.tensor(Y0), da.tensor(K))
    jr = F.jacrev(lambda y0, k: solve(y0, k, C, W), argnums=(0, 1))(da.tensor(Y0), da.tensor(K))
    for a, b in zip(jf, jr, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-8)
    fd = np.stack([fd_directional(e, 0.0, 0.0, 0 * W) for e in np.eye(2)], axis=-1)
    np.testing.assert_allclose(jf[0].numpy(), fd, rtol=1e-6, atol=1e-7)


def test_derivative_in_the_times():
    rng = np.random.default_rng(1)
    u_t = rng.standard_normal(len(T)) * 0.1
    fd = fd_directional(0 * Y0, 0.0, 0.0, 0 * W, u_t)
    _, ju = F.jvp(lambda t: solve(Y0, K, C, W, t), (da.tensor(T),), (da.tensor(u_t),))
    np.testing.assert_allclose(ju.numpy(), fd, rtol=1e-6, atol=1e-7)
    t = da.tensor(T, requires_grad=True)
    v = rng.standard_normal((len(T), 2))
    (solve(Y0, K, C, W, t) * da.tensor(v)).sum().backward()
    np.testing.assert_allclose(float(np.sum(t.grad.numpy() * u_t)), float(np.sum(v * fd)),
                               rtol=1e-6, atol=1e-7)


def test_scalar_loss_gradient_and_list_result():
    y0 = da.tensor(Y0, requires_grad=True)
    k = da.tensor(K, requires_grad=True)
    (solve(y0, k, C, W)[-1] ** 2).sum().backward()
    want_k = central(lambda s: np.sum(solve_np(k=s)[-1] ** 2), K, 1.0)
    assert abs(float(k.grad) - want_k) < 1e-6 * (1 + abs(want_k))


def test_tfirst_and_plain_arrays():
    got = odeint(lambda t, y, k: -k * y, [1.0, 2.0], T, args=(0.5,), tfirst=True, **TOL)
    np.testing.assert_allclose(got.numpy(), np.exp(-0.5 * T)[:, None] * [1.0, 2.0],
                               rtol=1e-8)


DATA = np.cos(T)[:, None] * np.array([1.0, -0.5])


def misfit(x):
    """A scalar misfit of the solution in y0 = x[:2], k = x[2] and c = x[3]."""
    y = odeint(oscillator, x[:2], T, args=(x[2], x[3], W), **TOL)
    return 0.5 * dnp.sum((y - DATA) ** 2)


X = np.concatenate([Y0, [K, C]])


@pytest.fixture(scope="module")
def hessian_by_differences():
    """Central differences of the (reverse-mode) gradient: each column to ~1e-8."""
    grad = F.grad(misfit)
    h = 1e-5
    return np.stack([(grad(da.tensor(X + h * e)).numpy() - grad(da.tensor(X - h * e)).numpy())
                     / (2 * h) for e in np.eye(X.size)], axis=1)


def assert_hessian(h, want, rel):
    np.testing.assert_allclose(h, want, rtol=0, atol=rel * np.abs(want).max())


def test_hessian_reverse_over_reverse(hessian_by_differences):
    h = F.hessian(misfit, da.tensor(X)).numpy()
    assert_hessian(h, hessian_by_differences, 1e-7)
    assert_hessian(h, h.T, 1e-8)


def test_hessian_forward_over_reverse_and_reverse_over_forward(hessian_by_differences):
    fwd_rev = F.jacfwd(F.grad(misfit))(da.tensor(X)).numpy()
    rev_fwd = F.jacrev(F.jacfwd(misfit))(da.tensor(X)).numpy()
    fwd_fwd = F.jacfwd(F.jacfwd(misfit))(da.tensor(X)).numpy()
    assert_hessian(fwd_rev, hessian_by_differences, 1e-7)
    assert_hessian(rev_fwd, fwd_rev, 1e-8)
    assert_hessian(fwd_fwd, fwd_rev, 1e-8)


@pytest.mark.parametrize("transpose", ["sensitivity matrix", "adjoint method"])
def test_hvp_against_the_hessian(hessian_by_differences, monkeypatch, transpose):
    # (hvp is forward-over-reverse: the JVP of the transpose, taken either way)
    from dualad.scipy import integrate as I

    if transpose == "adjoint method":
        monkeypatch.setattr(I, "_SENSITIVITIES_MAX", 0)
    v = np.random.default_rng(2).standard_normal(X.size)
    _, hv = F.hvp(misfit, da.tensor(X), da.tensor(v))
    want = hessian_by_differences @ v
    np.testing.assert_allclose(hv.numpy(), want, rtol=0, atol=1e-7 * np.abs(want).max())


@pytest.mark.parametrize("transpose", ["sensitivity matrix", "adjoint method"])
def test_third_order_closed_form(monkeypatch, transpose):
    # y' = -k y^2, y(0) = 1: y(1) = 1 / (1 + k), d3/dk3 = -6 / (1 + k)^4
    from dualad.scipy import integrate as I

    if transpose == "adjoint method":
        monkeypatch.setattr(I, "_SENSITIVITIES_MAX", 0)

    def last(k):
        return odeint(lambda y, t, k: -k * y * y, [1.0], [0.0, 1.0], args=(k,),
                      rtol=1e-11, atol=1e-11)[-1, 0]

    want = -6 / 1.5 ** 4
    assert abs(float(F.grad(F.grad(F.grad(last)))(da.tensor(0.5))) - want) < 1e-8
    assert abs(float(F.jacfwd(F.jacrev(F.grad(last)))(da.tensor(0.5))) - want) < 1e-8


@pytest.mark.parametrize("transpose", ["sensitivity matrix", "adjoint method"])
def test_second_derivative_in_the_times(monkeypatch, transpose):
    # d/dt_j of the gradient in k against differences of it (a move of the times reaches
    # the sensitivities through the sensitivity system's own right-hand side)
    def in_times(t, k):
        return dnp.sum(odeint(oscillator, Y0, t, args=(k, C, W), **TOL)[1:] ** 2)

    from dualad.scipy import integrate as I

    if transpose == "adjoint method":
        monkeypatch.setattr(I, "_SENSITIVITIES_MAX", 0)
    u = np.random.default_rng(3).standard_normal(len(T)) * 0.1
    _, got = F.jvp(lambda t: F.grad(in_times, argnums=1)(t, da.tensor(K)),
                   (da.tensor(T),), (da.tensor(u),))
    h = 1e-5
    grad_k = F.grad(in_times, argnums=1)
    want = (grad_k(da.tensor(T + h * u), da.tensor(K)).numpy()
            - grad_k(da.tensor(T - h * u), da.tensor(K)).numpy()) / (2 * h)
    assert abs(float(got) - float(want)) < 1e-6 * (1 + abs(float(want)))


def test_misuse_errors():
    k = da.tensor(0.5, requires_grad=True)
    with pytest.raises(ValueError, match="closes over a Tensor"):
        odeint(lambda y, t: -k * y, Y0, T)
    with da.dual_level():
        kd = da.make_dual(da.tensor(0.5), da.tensor(1.0))
        with pytest.raises(ValueError, match="Pass the Tensor in args="):
            odeint(lambda y, t: [-kd * y[0], y[1]], Y0, T)
    with pytest.raises(NotImplementedError, match="Dfun"):
        odeint(oscillator, Y0, T, args=(K, C, W), Dfun=lambda y, t: None)
    with pytest.raises(TypeError, match=r"args\[0\]"):
        odeint(lambda y, t, s: -y, Y0, T, args=("label",))
    with pytest.raises(ValueError, match="1-D"):
        odeint(lambda y, t: -y, Y0, np.zeros((2, 2)))


@pytest.mark.parametrize("method", ["backward solves", "backward, reverse passes"])
def test_adjoint_method_agrees(monkeypatch, method):
    # (few inputs take S^T ct from the whole sensitivity matrix S; many take the adjoint
    # method's backward solves, with a J from the whole Jacobian or, for large systems,
    # from reverse passes)
    from dualad.scipy import integrate as I

    inputs = (da.tensor(Y0), da.tensor(K), da.tensor(C), da.tensor(W))
    v = da.tensor(np.random.default_rng(5).standard_normal((len(T), 2)))
    _, by_sensitivities = F.vjp(solve, inputs, v)
    monkeypatch.setattr(I, "_SENSITIVITIES_MAX", 0)
    if method == "backward, reverse passes":
        monkeypatch.setattr(I, "_JACOBIAN_MAX", 0)
    _, by_adjoint = F.vjp(solve, inputs, v)
    for a, b in zip(by_sensitivities, by_adjoint, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7, atol=1e-8)
