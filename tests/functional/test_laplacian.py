"""``dualad.functional.laplacian``: collapsed Taylor mode against the Hessian's trace, the
weighted form, Hutchinson's estimate, and gradients of a Laplacian (reverse and forward over
collapsed Taylor mode, against each other and finite differences)."""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

RNG = np.random.default_rng(11)
W1 = RNG.standard_normal((6, 4)) * 0.7
W2 = RNG.standard_normal((5, 6)) * 0.7
W3 = RNG.standard_normal((1, 5))


def _mlp(w1=W1):
    def f(x):
        h = dnp.tanh(w1 @ x)
        h = dnp.tanh(W2 @ h)
        return (W3 @ h).sum()
    return f


FUNCS = {
    "mlp": (_mlp(), (4,)),
    "elementwise": (lambda x: dnp.sum(dnp.exp(0.3 * x) * dnp.sin(x) + dnp.log1p(x * x)), (5,)),
    "coupled": (lambda x: dnp.sum(x[:-1] * x[1:]) ** 2 / (1.0 + dnp.sum(x * x)), (4,)),
    "matrix": (lambda x: dnp.sum(dnp.tanh(x @ x.T)) + dnp.sum(dnp.cumsum(x, axis=1) ** 3),
               (2, 3)),
}


def _hessian_diagonal(f, x):
    H = np.asarray(F.hessian(f, da.tensor(x)))
    n = x.size
    return np.diag(H.reshape(n, n)).reshape(x.shape)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_collapsed_laplacian_is_the_hessian_trace(name):
    f, shape = FUNCS[name]
    x = RNG.standard_normal(shape) * 0.5
    np.testing.assert_allclose(float(F.laplacian(f, x)), _hessian_diagonal(f, x).sum(),
                               rtol=1e-11)


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_weighted_laplacian(name):
    f, shape = FUNCS[name]
    x = RNG.standard_normal(shape) * 0.5
    c = RNG.standard_normal(shape)
    np.testing.assert_allclose(float(F.laplacian(f, x, weights=c)),
                               (c * _hessian_diagonal(f, x)).sum(), rtol=1e-10)


def test_hutchinson_is_exact_for_a_diagonal_hessian():
    # v^T H v = sum_i H_ii v_i^2 = trace H for sign vectors when H is diagonal
    f = FUNCS["elementwise"][0]
    x = RNG.standard_normal(5)
    est = F.laplacian(f, x, method="hutchinson", n_samples=3, rng=0)
    np.testing.assert_allclose(float(est), _hessian_diagonal(f, x).sum(), rtol=1e-12)
    c = np.abs(RNG.standard_normal(5))
    est = F.laplacian(f, x, method="hutchinson", n_samples=2, rng=1, weights=c)
    np.testing.assert_allclose(float(est), (c * _hessian_diagonal(f, x)).sum(), rtol=1e-12)


def test_hutchinson_estimate_is_unbiased():
    f, shape = FUNCS["coupled"]
    x = RNG.standard_normal(shape) * 0.5
    exact = _hessian_diagonal(f, x).sum()
    H = np.asarray(F.hessian(f, da.tensor(x)))
    sd = np.sqrt(2 * (np.sum(H * H) - np.sum(np.diag(H) ** 2)) / 4000)  # its standard error
    est = float(F.laplacian(f, x, method="hutchinson", n_samples=4000, rng=3))
    assert abs(est - exact) < 5 * sd + 1e-12


def test_gradient_of_a_laplacian_loss():
    # reverse over collapsed Taylor mode, against forward over it and finite differences
    x = RNG.standard_normal(4) * 0.5
    w = da.tensor(W1, requires_grad=True)
    lap = F.laplacian(_mlp(w), x)
    (g,) = da.grad(lap, [w])
    dW = RNG.standard_normal(W1.shape)
    with da.dual_level():
        wd = da.make_dual(da.tensor(W1), da.tensor(dW))
        tangent = float(da.unpack_dual(F.laplacian(_mlp(wd), x)).tangent)
    h = 1e-6
    fd = (float(F.laplacian(_mlp(W1 + h * dW), x)) -
          float(F.laplacian(_mlp(W1 - h * dW), x))) / (2 * h)
    np.testing.assert_allclose(np.sum(np.asarray(g) * dW), tangent, rtol=1e-10)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


def test_errors():
    f = FUNCS["elementwise"][0]
    with pytest.raises(ValueError, match="one element"):
        F.laplacian(lambda x: x * x, np.ones(3))
    with pytest.raises(ValueError, match="unknown method"):
        F.laplacian(f, np.ones(5), method="nested")
    with pytest.raises(ValueError, match="n_samples >= 1"):
        F.laplacian(f, np.ones(5), method="hutchinson")
    with pytest.raises(TypeError, match="n_samples is for"):
        F.laplacian(f, np.ones(5), n_samples=3)
    with pytest.raises(ValueError, match="weights must be >= 0"):
        F.laplacian(f, np.ones(5), method="hutchinson", n_samples=3, weights=-np.ones(5))


def _rowwise_net(params):
    """A small tanh network applied to each row of a batch (N, 3) -> (N,)."""
    w1, b1, w2 = params

    def u(X):
        return (dnp.tanh(X @ w1 + b1) @ w2)[..., 0] * dnp.sin(X[..., 0])

    return u


@pytest.mark.parametrize("method", ["collapsed", "hutchinson"])
def test_batched_laplacian_is_each_points_laplacian(method):
    """batch_ndim=1: one pass gives every point's Laplacian, as laplacian at each point does
    (collapsed: exact, the Hessian traces; Hutchinson: each point's own estimate, unbiased)."""
    rng = np.random.default_rng(11)
    params = (rng.standard_normal((3, 5)), rng.standard_normal(5), rng.standard_normal((5, 1)))
    u = _rowwise_net(params)
    X = rng.uniform(-1, 1, (7, 3))
    traces = np.array([np.trace(np.asarray(F.hessian(u, da.tensor(p[None]))).reshape(3, 3))
                       for p in X])
    if method == "collapsed":
        got = F.laplacian(u, X, batch_ndim=1)
        assert got.shape == (7,)
        np.testing.assert_allclose(np.asarray(got), traces, rtol=1e-12, atol=1e-12)
        w = np.array([1.0, -2.0, 0.5])
        diag = np.array([np.diagonal(np.asarray(F.hessian(u, da.tensor(p[None]))).reshape(3, 3))
                         for p in X])
        np.testing.assert_allclose(np.asarray(F.laplacian(u, X, weights=w, batch_ndim=1)),
                                   diag @ w, rtol=1e-12, atol=1e-12)
    else:
        got = F.laplacian(u, X, batch_ndim=1, method="hutchinson", n_samples=4000, rng=3)
        spread = np.abs(traces).max() + 10
        np.testing.assert_allclose(np.asarray(got), traces, atol=0.15 * spread)


def test_gradient_of_a_batched_laplacian_loss():
    """A physics-informed loss, mean((Delta u + f)^2) over a batch of points, differentiated
    in the network's weights by reverse mode through collapsed Taylor mode: against central
    differences and against the loss built from per-point Hessian traces."""
    rng = np.random.default_rng(5)
    params = [rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((4, 1))]
    X = rng.uniform(-1, 1, (6, 3))
    f = np.cos(X).sum(axis=1)

    def loss(ps):
        return dnp.mean((F.laplacian(_rowwise_net(ps), X, batch_ndim=1) + f) ** 2)

    ts = [da.tensor(p, requires_grad=True) for p in params]
    grads = da.grad(loss(ts), ts)
    h = 1e-5
    for k, p in enumerate(params):
        for idx in [(0,) * p.ndim, tuple(s - 1 for s in p.shape)]:
            up = [q.copy() for q in params]
            dn = [q.copy() for q in params]
            up[k][idx] += h
            dn[k][idx] -= h
            fd = (float(loss(up)) - float(loss(dn))) / (2 * h)
            np.testing.assert_allclose(np.asarray(grads[k])[idx], fd, rtol=1e-6, atol=1e-8)


def test_batched_laplacian_errors():
    u = lambda X: (X ** 2).sum(axis=-1)  # noqa: E731
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="batch_ndim must be an integer from 0 to x.ndim"):
        F.laplacian(u, X, batch_ndim=3)
    with pytest.raises(ValueError, match=r"one number per point, of shape .*\(4,\)"):
        F.laplacian(lambda X: (X ** 2).sum(), X, batch_ndim=1)
