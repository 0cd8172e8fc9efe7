"""Tests of dualad.functional: torch.autograd.functional's API and the JAX-style transforms.

Every expected value comes from a closed form or from central finite
differences computed with NumPy alone, never from dualad itself (except where
two dualad paths are compared on purpose, on top of a closed-form check).
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def A(t):
    """A Tensor (or anything array-like) as an ndarray, for comparisons."""
    if isinstance(t, da.Tensor):
        return t.detach().numpy()
    return np.asarray(t)


def close(a, b, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(A(a), A(b), rtol=rtol, atol=atol)


def fd_jacobian(f, x, eps=1e-6, direction=1.0):
    """Central differences of a NumPy function: columns d f / d x_k along ``direction``."""
    x = np.asarray(x)
    y0 = np.asarray(f(x))
    dt = np.result_type(y0.dtype, np.asarray(direction).dtype, float)
    J = np.zeros(y0.shape + x.shape, dtype=dt)
    flat = J.reshape(y0.size, x.size)
    for k in range(x.size):
        e = np.zeros(x.size, dtype=np.result_type(x.dtype, np.asarray(direction).dtype))
        e[k] = direction
        e = e.reshape(x.shape)
        flat[:, k] = ((np.asarray(f(x + eps * e)) - np.asarray(f(x - eps * e))) / (2 * eps)).ravel()
    return J


def rng(seed):
    return np.random.default_rng(seed)


# f(x) = tanh(W x) + x**3 and its closed-form Jacobian
def make_tanh_cubic(n, seed=0):
    r = rng(seed)
    W = r.standard_normal((n, n)) / np.sqrt(n)
    x = r.standard_normal(n)

    def f(x):
        return np.tanh(W @ x) + x**3

    J = (1 - np.tanh(W @ x) ** 2)[:, None] * W + np.diag(3 * x**2)
    return f, x, J


# L(x) = sum(log(1 + (A x)**2)) and its closed-form gradient / Hessian
def make_logsum(n, m=None, seed=1):
    r = rng(seed)
    m = m or n
    Am = r.standard_normal((m, n)) / np.sqrt(n)
    x = r.standard_normal(n)

    def f(x):
        return np.sum(np.log(1 + (Am @ x) ** 2))

    u = Am @ x
    g = Am.T @ (2 * u / (1 + u**2))
    H = Am.T @ ((2 * (1 - u**2) / (1 + u**2) ** 2)[:, None] * Am)
    return f, x, g, H


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    n = x.size
    H = np.zeros((n, n))
    i = np.arange(n - 1)
    H[i, i] += 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    H[i + 1, i + 1] += 200
    H[i, i + 1] += -400 * x[:-1]
    H[i + 1, i] += -400 * x[:-1]
    return H


STRATS = ["reverse-mode", "forward-mode"]


class CallCounter:
    def __init__(self, f):
        self.f = f
        self.calls = 0

    def __call__(self, *a, **k):
        self.calls += 1
        return self.f(*a, **k)


# ---------------------------------------------------------------------------
# jacobian
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("chunk_size", [None, 4, 3])
def test_jacobian_closed_form_and_fd(strategy, vectorize, chunk_size):
    f, x, J = make_tanh_cubic(8, seed=3)
    got = F.jacobian(f, x, vectorize=vectorize, strategy=strategy, chunk_size=chunk_size)
    assert isinstance(got, da.Tensor)
    assert got.shape == (8, 8)
    close(got, J)
    close(got, fd_jacobian(f, x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_tuple_inputs_and_outputs(strategy, vectorize):
    r = rng(4)
    x = r.standard_normal((2, 3))
    y = r.standard_normal(3)

    def f(x, y):
        return x * y, np.sum(np.sin(x)), y**2

    cs = 4 if vectorize else None
    J = F.jacobian(f, (x, y), vectorize=vectorize, strategy=strategy, chunk_size=cs)
    assert isinstance(J, tuple) and len(J) == 3 and all(len(r_) == 2 for r_ in J)
    # shapes: out.shape + in.shape
    assert J[0][0].shape == (2, 3, 2, 3) and J[0][1].shape == (2, 3, 3)
    assert J[1][0].shape == (2, 3) and J[1][1].shape == (3,)
    assert J[2][0].shape == (3, 2, 3) and J[2][1].shape == (3, 3)
    # closed forms
    J00 = np.zeros((2, 3, 2, 3))
    for a in range(2):
        for b in range(3):
            J00[a, b, a, b] = y[b]
    J01 = np.zeros((2, 3, 3))
    for a in range(2):
        for b in range(3):
            J01[a, b, b] = x[a, b]
    close(J[0][0], J00)
    close(J[0][1], J01)
    close(J[1][0], np.cos(x))
    close(J[1][1], np.zeros(3))
    close(J[2][0], np.zeros((3, 2, 3)))
    close(J[2][1], np.diag(2 * y))
    # and against finite differences, block by block
    close(J[1][0], fd_jacobian(lambda x_: np.sum(np.sin(x_)), x), rtol=1e-6, atol=1e-7)
    close(J[0][1], fd_jacobian(lambda y_: x * y_, y), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("strategy", STRATS)
def test_jacobian_nesting_single_vs_tuple(strategy):
    x = np.array([1.0, 2.0])
    kw = dict(vectorize=True, strategy=strategy)
    assert isinstance(F.jacobian(lambda x: x * 2, x, **kw), da.Tensor)
    one_in_tuple_out = F.jacobian(lambda x: (x * 2,), x, **kw)
    assert isinstance(one_in_tuple_out, tuple) and len(one_in_tuple_out) == 1
    assert isinstance(one_in_tuple_out[0], da.Tensor)
    tuple_in_one_out = F.jacobian(lambda x: x * 2, (x,), **kw)
    assert isinstance(tuple_in_one_out, tuple) and isinstance(tuple_in_one_out[0], da.Tensor)
    both = F.jacobian(lambda x: (x * 2,), (x,), **kw)
    assert isinstance(both, tuple) and isinstance(both[0], tuple)
    close(both[0][0], 2 * np.eye(2))


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_scalar_output_and_scalar_input(strategy, vectorize):
    f, x, g, _ = make_logsum(5, seed=7)
    J = F.jacobian(f, x, vectorize=vectorize, strategy=strategy)
    assert J.shape == (5,)
    close(J, g)
    x0 = np.array(0.7)
    J0 = F.jacobian(lambda t: np.sin(t) * t, x0, vectorize=vectorize, strategy=strategy)
    assert J0.shape == ()
    close(J0, np.cos(0.7) * 0.7 + np.sin(0.7))


@pytest.mark.parametrize("strategy", STRATS)
def test_jacobian_accepts_tensors_and_returns_tensors_without_history(strategy):
    f, x, J = make_tanh_cubic(4, seed=5)
    xt = da.tensor(x, requires_grad=True)
    got = F.jacobian(f, xt, vectorize=True, strategy=strategy)
    close(got, J)
    assert not got.requires_grad
    assert xt.grad is None  # the user's leaf was not touched


VEC_CG = [False, True]


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("vectorize", VEC_CG)
def test_jacobian_create_graph_is_differentiable(strategy, vectorize):
    x = rng(8).standard_normal(4)
    xt = da.tensor(x, requires_grad=True)
    J = F.jacobian(lambda x: x**3, xt, create_graph=True, vectorize=vectorize, strategy=strategy)
    assert J.requires_grad
    close(J, np.diag(3 * x**2))
    (g,) = da.grad(J.sum(), xt)
    close(g, 6 * x)


def test_jacobian_works_under_no_grad():
    f, x, J = make_tanh_cubic(4, seed=9)
    with da.no_grad():
        close(F.jacobian(f, x), J)
        close(F.jacobian(f, x, vectorize=True), J)


def test_jacobian_bad_strategy_and_types():
    with pytest.raises(ValueError):
        F.jacobian(lambda x: x, np.ones(2), strategy="sideways")
    with pytest.raises(TypeError):
        F.jacobian(lambda x: x, [1.0, 2.0])
    with pytest.raises(TypeError):
        F.jacobian(lambda x: np.ones(2), np.ones(2))  # an ndarray output has no derivative
    with pytest.raises(ValueError):
        F.jacobian(lambda x: x, np.ones(2), vectorize=True, chunk_size=0)


# ---------------------------------------------------------------------------
# strict mode
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_strict_independent_input(strategy, vectorize):
    x, y = np.ones(2), np.ones(3)

    def f(x, y):
        return x * 2.0

    J = F.jacobian(f, (x, y), vectorize=vectorize, strategy=strategy)
    close(J[1], np.zeros((2, 3)))  # non-strict: zeros
    with pytest.raises(RuntimeError, match="input 1"):
        F.jacobian(f, (x, y), strict=True, strategy=strategy)  # (strict: not vectorized)


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_strict_non_differentiable_output(strategy, vectorize):
    x = np.array([1.0, -2.0])

    def f(x):
        return (x > 0) * 1.0, x * 3.0

    J = F.jacobian(f, x, vectorize=vectorize, strategy=strategy)
    close(J[0], np.zeros((2, 2)))
    close(J[1], 3 * np.eye(2))
    with pytest.raises(RuntimeError, match="Output 0"):
        F.jacobian(f, x, strict=True, strategy=strategy)  # (strict: not vectorized)


@pytest.mark.parametrize("strategy", STRATS)
def test_jacobian_strict_create_graph_constant_jacobian(strategy):
    x = np.ones(3)
    J = F.jacobian(lambda x: 2.0 * x, x, create_graph=True, strategy=strategy, vectorize=True)
    close(J, 2 * np.eye(3))
    with pytest.raises(RuntimeError, match="create_graph"):
        F.jacobian(lambda x: 2.0 * x, x, create_graph=True, strict=True, strategy=strategy)
    # a non-linear function passes the same check
    F.jacobian(lambda x: x**2, x, create_graph=True, strict=True, strategy=strategy)


def test_vjp_jvp_strict():
    x, y = np.ones(2), np.ones(2)
    with pytest.raises(RuntimeError, match="input 1"):
        F.vjp(lambda x, y: x * 2.0, (x, y), np.ones(2), strict=True)
    with pytest.raises(RuntimeError, match="Output 0"):
        F.vjp(lambda x: (x > 0) * 1.0, x, np.ones(2), strict=True)
    _, g = F.vjp(lambda x, y: x * 2.0, (x, y), np.ones(2))
    close(g[1], np.zeros(2))
    with pytest.raises(RuntimeError, match="Output 1"):
        F.jvp(lambda x: (x * 2.0, da.as_tensor(np.ones(2))), x, np.ones(2), strict=True)
    _, t = F.jvp(lambda x: (x * 2.0, da.as_tensor(np.ones(2))), x, np.ones(2))
    close(t[1], np.zeros(2))


def test_hvp_hessian_strict():
    x, y = np.ones(2), np.ones(2)
    lin = lambda x: np.sum(3.0 * x)  # gradient constant: Hessian zero by construction
    with pytest.raises(RuntimeError):
        F.hvp(lin, x, np.ones(2), strict=True)
    with pytest.raises(RuntimeError):
        F.vhp(lin, x, np.ones(2), strict=True)
    close(F.hvp(lin, x, np.ones(2))[1], np.zeros(2))
    for s in STRATS:
        with pytest.raises(RuntimeError):
            F.hessian(lin, x, strict=True, outer_jacobian_strategy=s)
        sep = lambda x, y: np.sum(x**2) + np.sum(y**3)  # block [0][1] is zero by construction
        H = F.hessian(sep, (x, y), outer_jacobian_strategy=s, vectorize=True)
        close(H[0][1], np.zeros((2, 2)))
        with pytest.raises(RuntimeError, match=r"\[0\]\[1\]|input 1"):
            F.hessian(sep, (x, y), strict=True, outer_jacobian_strategy=s)
        with pytest.raises(RuntimeError, match="input 1"):
            F.hessian(lambda x, y: np.sum(x**3), (x, y), strict=True, outer_jacobian_strategy=s)
        # a constant Hessian cannot be differentiated again: strict + create_graph rejects it
        quad = lambda x: np.sum(x * x)
        with pytest.raises(RuntimeError, match="create_graph"):
            F.hessian(quad, x, create_graph=True, strict=True, outer_jacobian_strategy=s)
        F.hessian(lambda x: np.sum(x * x * x), x, create_graph=True, strict=True,
                  outer_jacobian_strategy=s)
    with pytest.raises(RuntimeError, match="create_graph"):
        F.hvp(lambda x: np.sum(x * x), x, np.ones(2), create_graph=True, strict=True)


# ---------------------------------------------------------------------------
# vjp / jvp
# ---------------------------------------------------------------------------


def test_vjp_closed_form_single_and_tuple():
    f, x, J = make_tanh_cubic(6, seed=10)
    v = rng(11).standard_normal(6)
    out, g = F.vjp(f, x, v)
    close(out, f(x))
    close(g, J.T @ v)

    def adder(x, y):
        return 2 * x + 3 * y, np.sum(x * y)

    x, y = rng(12).standard_normal(3), rng(13).standard_normal(3)
    (o1, o2), (gx, gy) = F.vjp(adder, (x, y), (np.ones(3), np.array(2.0)))
    close(o1, 2 * x + 3 * y)
    close(o2, np.sum(x * y))
    close(gx, 2 + 2 * y)
    close(gy, 3 + 2 * x)


def test_vjp_v_none_and_errors():
    f, x, g, _ = make_logsum(4, seed=14)
    out, gr = F.vjp(f, x)
    close(gr, g)
    with pytest.raises(RuntimeError):
        F.vjp(lambda x: x * 2, x)  # non-scalar output needs v
    with pytest.raises(RuntimeError):
        F.vjp(lambda x: x * 2, x, np.ones(3))  # wrong shape
    with pytest.raises(RuntimeError):
        F.vjp(lambda x: (x, x), x, (np.ones(4),))  # wrong length


def test_jvp_closed_form_single_and_tuple():
    f, x, J = make_tanh_cubic(6, seed=15)
    u = rng(16).standard_normal(6)
    out, t = F.jvp(f, x, u)
    close(out, f(x))
    close(t, J @ u)
    close(t, (f(x + 1e-6 * u) - f(x - 1e-6 * u)) / 2e-6, rtol=1e-6, atol=1e-8)

    def f2(x, y):
        return x * y, np.sum(np.exp(x))

    x, y = rng(17).standard_normal(3), rng(18).standard_normal(3)
    ux, uy = rng(19).standard_normal(3), rng(20).standard_normal(3)
    (o1, o2), (t1, t2) = F.jvp(f2, (x, y), (ux, uy))
    close(t1, ux * y + x * uy)
    close(t2, np.sum(np.exp(x) * ux))
    # v may be omitted for a single one-element input
    _, t0 = F.jvp(lambda s: s**3, np.array(2.0))
    close(t0, 12.0)
    with pytest.raises(RuntimeError):
        F.jvp(lambda s: s, np.ones(2))


def test_jvp_is_true_forward_mode(monkeypatch):
    """jvp must not use the reverse engine at all (no double-backward trick)."""
    f, x, J = make_tanh_cubic(5, seed=21)
    u = rng(22).standard_normal(5)

    def boom(*a, **k):
        raise AssertionError("reverse mode used")

    for where in (da, da.reverse):  # (dualad.functional calls reverse mode's own grad)
        monkeypatch.setattr(where, "grad", boom)
        monkeypatch.setattr(where, "backward", boom)
    _, t = F.jvp(f, x, u)
    close(t, J @ u)


def test_jvp_vjp_create_graph_differentiable():
    x = rng(23).standard_normal(4)
    u = rng(24).standard_normal(4)
    xt = da.tensor(x, requires_grad=True)
    out, t = F.jvp(lambda x: np.sin(x) * x, xt, u, create_graph=True)
    assert t.requires_grad and out.requires_grad
    # t = (cos x * x + sin x) * u ; d sum(t) / dx = (-sin x * x + 2 cos x) * u
    (g,) = da.grad(t.sum(), xt)
    close(g, (-np.sin(x) * x + 2 * np.cos(x)) * u)
    out, gv = F.vjp(lambda x: np.sin(x) * x, xt, u, create_graph=True)
    (g2,) = da.grad(gv.sum(), xt)
    close(g2, (-np.sin(x) * x + 2 * np.cos(x)) * u)
    # without create_graph nothing has history
    out, t = F.jvp(lambda x: np.sin(x) * x, xt, u)
    assert not t.requires_grad and not out.requires_grad


# ---------------------------------------------------------------------------
# hvp / vhp / hessian
# ---------------------------------------------------------------------------


def test_hvp_vhp_rosenbrock_closed_form():
    x = rng(25).standard_normal(7)
    v = rng(26).standard_normal(7)
    H = rosenbrock_hessian(x)
    out, hv = F.hvp(rosenbrock, x, v)
    close(out, rosenbrock(x))
    close(hv, H @ v)
    out2, vh = F.vhp(rosenbrock, x, v)
    close(vh, v @ H)
    # finite differences of the closed-form gradient of the function
    g = lambda x_: A(F.vjp(rosenbrock, x_)[1])
    close(hv, (g(x + 1e-6 * v) - g(x - 1e-6 * v)) / 2e-6, rtol=1e-5, atol=1e-5)


def test_hvp_tuple_inputs_and_v_none():
    x, y = rng(27).standard_normal(3), rng(28).standard_normal(3)

    def f(x, y):
        return np.sum(x**2 * y) + np.sum(np.sin(y))

    vx, vy = rng(29).standard_normal(3), rng(30).standard_normal(3)
    # H = [[2 diag(y), 2 diag(x)], [2 diag(x), -diag(sin y)]]
    _, (hx, hy) = F.hvp(f, (x, y), (vx, vy))
    close(hx, 2 * y * vx + 2 * x * vy)
    close(hy, 2 * x * vx - np.sin(y) * vy)
    _, (wx, wy) = F.vhp(f, (x, y), (vx, vy))
    close(wx, hx)
    close(wy, hy)
    _, h0 = F.hvp(lambda s: s**4, np.array(1.5))
    close(h0, 12 * 1.5**2)
    with pytest.raises(RuntimeError):
        F.hvp(lambda x: x**2, np.ones(2), np.ones(2))  # non-scalar output
    with pytest.raises(RuntimeError):
        F.hvp(lambda x: (np.sum(x),), np.ones(2), np.ones(2))  # tuple output


def test_hvp_with_parameters_and_tangent_recording_restored():
    # hvp and the Hessian by columns leave tangents unrecorded while func runs (nothing
    # differentiates them); primals and parameters that require grad are still recorded
    from dualad.grad_mode import state

    x, v = rng(61).standard_normal(3), rng(62).standard_normal(3)
    W = da.tensor(rng(63).standard_normal((4, 3)), requires_grad=True)
    f = lambda x: dnp.sum(dnp.tanh(W @ x) ** 2) + dnp.sum(dnp.sin(x) * x)
    _, hv = F.hvp(f, x, v)
    g = lambda x_: A(F.vjp(f, x_)[1])
    close(hv, (g(x + 1e-6 * v) - g(x - 1e-6 * v)) / 2e-6, rtol=1e-5, atol=1e-5)
    H = F.hessian(f, x, vectorize=True)
    close(A(H) @ v, hv)
    assert state.tangent_grad
    with pytest.raises(ZeroDivisionError):
        F.hvp(lambda x: 1 / 0, x, v)
    assert state.tangent_grad
    xt = da.tensor(x, requires_grad=True)
    with da.dual_level():  # outside functional, tangents stay differentiable by reverse mode
        t = da.unpack_dual(dnp.sin(da.make_dual(xt, da.tensor(v)))).tangent
        (gt,) = da.grad(t.sum(), xt)
    close(gt, -np.sin(x) * v)


def test_hvp_create_graph():
    x = rng(31).standard_normal(3)
    v = rng(32).standard_normal(3)
    xt = da.tensor(x, requires_grad=True)
    # f = sum(x**4): H v = 12 x**2 v ; d sum(Hv) / dx = 24 x v
    for fn in (F.hvp, F.vhp):
        out, hv = fn(lambda x: np.sum(x**4), xt, v, create_graph=True)
        assert hv.requires_grad
        close(hv, 12 * x**2 * v)
        (g,) = da.grad(hv.sum(), xt)
        close(g, 24 * x * v)


@pytest.mark.parametrize("outer", STRATS)
@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("chunk_size", [None, 5, 3])
def test_hessian_closed_form(outer, vectorize, chunk_size):
    f, x, _, H = make_logsum(10, m=7, seed=33)
    got = F.hessian(f, x, vectorize=vectorize, outer_jacobian_strategy=outer, chunk_size=chunk_size)
    assert got.shape == (10, 10)
    close(got, H, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("outer", STRATS)
@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_tuple_inputs_and_matrix_input(outer, vectorize):
    x, y = rng(34).standard_normal(3), rng(35).standard_normal(2)

    def f(x, y):
        return np.sum(x**2) * np.sum(y**3)

    H = F.hessian(f, (x, y), vectorize=vectorize, outer_jacobian_strategy=outer)
    sx, sy = np.sum(x**2), np.sum(y**3)
    close(H[0][0], 2 * sy * np.eye(3))
    close(H[0][1], np.outer(2 * x, 3 * y**2))
    close(H[1][0], np.outer(3 * y**2, 2 * x))
    close(H[1][1], sx * np.diag(6 * y))
    X = rng(36).standard_normal((2, 3))
    HX = F.hessian(lambda X: np.sum(X**3), X, vectorize=vectorize, outer_jacobian_strategy=outer)
    assert HX.shape == (2, 3, 2, 3)
    close(HX.reshape((6, 6)), np.diag(6 * X.ravel()))
    with pytest.raises(RuntimeError):
        F.hessian(lambda x: x**2, np.ones(2), outer_jacobian_strategy=outer)


@pytest.mark.parametrize("outer", STRATS)
@pytest.mark.parametrize("vectorize", VEC_CG)
def test_hessian_create_graph(outer, vectorize):
    x = rng(37).standard_normal(3)
    xt = da.tensor(x, requires_grad=True)
    H = F.hessian(lambda x: np.sum(x**4), xt, create_graph=True, vectorize=vectorize,
                  outer_jacobian_strategy=outer)
    assert H.requires_grad
    close(H, np.diag(12 * x**2))
    (g,) = da.grad(H.sum(), xt)
    close(g, 24 * x)


def test_hessian_rosenbrock_matches_closed_form_all_paths():
    x = rng(38).standard_normal(6)
    H = rosenbrock_hessian(x)
    for outer in STRATS:
        for vec in (False, True):
            close(F.hessian(rosenbrock, x, vectorize=vec, outer_jacobian_strategy=outer), H)


# ---------------------------------------------------------------------------
# vectorize: one batched pass, never one pass per basis vector
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATS)
def test_vectorize_calls_func_once(strategy, monkeypatch):
    f, x, J = make_tanh_cubic(12, seed=40)
    c = CallCounter(f)
    close(F.jacobian(c, x, vectorize=True, strategy=strategy), J)
    assert c.calls == 1
    c = CallCounter(f)
    close(F.jacobian(c, x, vectorize=True, strategy=strategy, chunk_size=5), J)
    assert c.calls == (3 if strategy == "forward-mode" else 1)
    # the non-vectorized forward mode does loop: the counter can tell the difference
    c = CallCounter(f)
    F.jacobian(c, x, vectorize=False, strategy=strategy)
    assert c.calls == (12 if strategy == "forward-mode" else 1)


def test_vectorize_reverse_uses_one_backward_pass(monkeypatch):
    f, x, J = make_tanh_cubic(12, seed=41)
    real_grad = da.reverse.grad  # (the one dualad.functional calls)
    calls = []

    def counting_grad(*a, **k):
        calls.append(k.get("is_grads_batched", False))
        return real_grad(*a, **k)

    monkeypatch.setattr(da.reverse, "grad", counting_grad)
    close(F.jacobian(f, x, vectorize=True), J)
    assert calls == [True]
    calls.clear()
    close(F.jacobian(f, x, vectorize=True, chunk_size=5), J)
    assert calls == [True, True, True]
    calls.clear()
    F.jacobian(f, x, vectorize=False)
    assert len(calls) == 12


@pytest.mark.parametrize("outer", STRATS)
def test_hessian_vectorize_counts(outer, monkeypatch):
    f, x, _, H = make_logsum(9, seed=42)
    c = CallCounter(f)
    real_grad = da.reverse.grad  # (the one dualad.functional calls)
    calls = []

    def counting_grad(*a, **k):
        calls.append(1)
        return real_grad(*a, **k)

    monkeypatch.setattr(da.reverse, "grad", counting_grad)
    close(F.hessian(c, x, vectorize=True, outer_jacobian_strategy=outer), H)
    assert c.calls == 1
    # forward-over-reverse: one gradient on batched dual inputs (also what the
    # reverse-mode strategy computes when no graph is wanted: the same matrix)
    assert len(calls) == 1
    calls.clear()
    # reverse-over-reverse: one inner gradient + one batched outer pass
    close(F.hessian(c, x, vectorize=True, outer_jacobian_strategy=outer, create_graph=True), H)
    assert c.calls == 2
    assert len(calls) == (2 if outer == "reverse-mode" else 1)


def test_jacfwd_jacrev_call_counts():
    f, x, J = make_tanh_cubic(10, seed=43)
    for tr, chunk, expected in [(F.jacfwd, None, 1), (F.jacfwd, 4, 3), (F.jacrev, None, 1),
                                (F.jacrev, 3, 1)]:
        c = CallCounter(f)
        close(tr(c, chunk_size=chunk)(x), J)
        assert c.calls == expected, (tr, chunk)


# ---------------------------------------------------------------------------
# complex inputs under the seeds' convention
# ---------------------------------------------------------------------------


def cfun(z):
    # non-holomorphic: uses conj and abs
    return z**2 * np.conj(z) + np.abs(z) * z


def test_complex_jvp_is_r_linear_differential():
    r = rng(50)
    z = r.standard_normal(4) + 1j * r.standard_normal(4)
    u = r.standard_normal(4) + 1j * r.standard_normal(4)
    out, t = F.jvp(cfun, z, u)
    fd = (cfun(z + 1e-6 * u) - cfun(z - 1e-6 * u)) / 2e-6
    close(t, fd, rtol=1e-6, atol=1e-7)


def test_complex_vjp_adjoint_identity_and_wirtinger():
    r = rng(51)
    z = r.standard_normal(4) + 1j * r.standard_normal(4)
    u = r.standard_normal(4) + 1j * r.standard_normal(4)
    v = r.standard_normal(4) + 1j * r.standard_normal(4)
    _, Ju = F.jvp(cfun, z, u)
    _, JTv = F.vjp(cfun, z, v)
    lhs = np.real(np.vdot(v, A(Ju)))
    rhs = np.real(np.vdot(A(JTv), u))
    assert abs(lhs - rhs) < 1e-10 * max(1.0, abs(lhs))
    # real loss: grad == dL/dx + 1j dL/dy
    L = lambda z: np.sum(np.abs(z) ** 2 * np.real(z))
    _, g = F.vjp(L, z)
    dx = fd_jacobian(L, z, direction=1.0)
    dy = fd_jacobian(L, z, direction=1j)
    close(g, np.real(dx) + 1j * np.real(dy), rtol=1e-6, atol=1e-7)
    close(F.grad(L)(z), g)


def test_complex_jacobian_both_strategies():
    r = rng(52)
    z = r.standard_normal(3) + 1j * r.standard_normal(3)
    Jf = F.jacobian(cfun, z, vectorize=True, strategy="forward-mode")
    Jr = F.jacobian(cfun, z, vectorize=True, strategy="reverse-mode")
    Jr_loop = F.jacobian(cfun, z, vectorize=False, strategy="reverse-mode")
    # forward columns: differential along the real unit vectors
    close(Jf, fd_jacobian(cfun, z, direction=1.0), rtol=1e-6, atol=1e-7)
    # reverse rows: conjugate-Wirtinger gradient of Re f_k
    re = lambda z_: np.real(cfun(z_))
    expected = np.real(fd_jacobian(re, z, direction=1.0)) + 1j * np.real(
        fd_jacobian(re, z, direction=1j)
    )
    close(Jr, expected, rtol=1e-6, atol=1e-7)
    close(Jr_loop, Jr)
    # jacfwd/jacrev agree with the torch-style ones
    close(F.jacfwd(cfun)(z), Jf)
    close(F.jacrev(cfun)(z), Jr)


def test_complex_hvp_equals_vhp():
    r = rng(53)
    z = r.standard_normal(3) + 1j * r.standard_normal(3)
    v = r.standard_normal(3) + 1j * r.standard_normal(3)
    L = lambda z: np.sum(np.abs(z) ** 4)  # grad = 4|z|^2 z
    _, hv = F.hvp(L, z, v)
    _, vh = F.vhp(L, z, v)
    grad_L = lambda z_: 4 * np.abs(z_) ** 2 * z_
    fd = (grad_L(z + 1e-6 * v) - grad_L(z - 1e-6 * v)) / 2e-6
    close(hv, fd, rtol=1e-6, atol=1e-7)
    close(vh, hv)


def test_complex_linearize_and_transpose():
    r = rng(54)
    z = r.standard_normal(3) + 1j * r.standard_normal(3)
    u = r.standard_normal(3) + 1j * r.standard_normal(3)
    c = r.standard_normal(3) + 1j * r.standard_normal(3)
    out, f_jvp = F.linearize(cfun, z)
    close(out, cfun(z))
    close(f_jvp(u), (cfun(z + 1e-6 * u) - cfun(z - 1e-6 * u)) / 2e-6, rtol=1e-6, atol=1e-7)
    M = r.standard_normal((3, 3)) + 1j * r.standard_normal((3, 3))
    lin = lambda x: M @ x + 2.0 * np.conj(x)  # R-linear, not C-linear
    (Tc,) = F.linear_transpose(lin, z)(c)
    assert abs(np.real(np.vdot(c, lin(u))) - np.real(np.vdot(A(Tc), u))) < 1e-10
    close(Tc, np.conj(M).T @ c + 2.0 * np.conj(c))


# ---------------------------------------------------------------------------
# linearize / linear_transpose
# ---------------------------------------------------------------------------


def test_linearize_runs_func_once():
    f, x, J = make_tanh_cubic(6, seed=60)
    c = CallCounter(f)
    out, f_jvp = F.linearize(c, x)
    assert c.calls == 1
    close(out, f(x))
    u1, u2 = rng(61).standard_normal(6), rng(62).standard_normal(6)
    close(f_jvp(u1), J @ u1)
    close(f_jvp(u2), J @ u2)
    assert c.calls == 1  # no new primal computation
    assert isinstance(f_jvp(u1), da.Tensor)


def test_linearize_no_nonlinear_primitive_in_jvp_fn(monkeypatch):
    """Calling jvp_fn must not evaluate tanh (a non-linear primitive) again."""
    f, x, J = make_tanh_cubic(5, seed=63)
    out, f_jvp = F.linearize(f, x)
    calls = []
    real_tanh = np.tanh

    def spy(*a, **k):
        calls.append(1)
        return real_tanh(*a, **k)

    monkeypatch.setattr(np, "tanh", spy)
    u = rng(64).standard_normal(5)
    close(f_jvp(u), J @ u)
    assert calls == []


def test_linearize_tuple_and_errors():
    x, y = rng(65).standard_normal(3), rng(66).standard_normal(3)
    f = lambda x, y: (x * y, np.sum(x**2))
    out, f_jvp = F.linearize(f, x, y)
    ux, uy = rng(67).standard_normal(3), rng(68).standard_normal(3)
    t1, t2 = f_jvp(ux, uy)
    close(t1, ux * y + x * uy)
    close(t2, np.sum(2 * x * ux))
    with pytest.raises(ValueError):
        f_jvp(np.ones(4), uy)
    with pytest.raises(ValueError):
        f_jvp(ux)
    out, f_jvp, aux = F.linearize(lambda x: (np.sin(x), "meta"), x, has_aux=True)
    assert aux == "meta"
    close(f_jvp(ux), np.cos(x) * ux)


def test_linear_transpose_real_and_tuple():
    r = rng(70)
    M = r.standard_normal((4, 3))
    B = r.standard_normal((4, 2))
    T = F.linear_transpose(lambda x: M @ x, np.zeros(3))
    c = r.standard_normal(4)
    (tx,) = T(c)
    close(tx, M.T @ c)
    T2 = F.linear_transpose(lambda x, y: M @ x + B @ y, np.zeros(3), np.zeros(2))
    tx, ty = T2(c)
    close(tx, M.T @ c)
    close(ty, B.T @ c)
    with pytest.raises(TypeError):
        T(np.ones(5))
    with pytest.raises(TypeError):
        T((c, c))


# ---------------------------------------------------------------------------
# grad / value_and_grad / jacfwd / jacrev
# ---------------------------------------------------------------------------


def test_grad_and_value_and_grad():
    f, x, g, _ = make_logsum(5, seed=80)
    got = F.grad(f)(x)
    assert isinstance(got, da.Tensor)
    close(got, g)
    val, got = F.value_and_grad(f)(x)
    close(val, f(x))
    close(got, g)
    h = lambda a, b, k=2.0: np.sum(a * b) * k
    a, b = rng(81).standard_normal(3), rng(82).standard_normal(3)
    ga, gb = F.grad(h, argnums=(0, 1))(a, b, k=3.0)
    close(ga, 3 * b)
    close(gb, 3 * a)
    close(F.grad(h, argnums=1)(a, b), 2 * a)
    (ga1,) = F.grad(h, argnums=(0,))(a, b)
    close(ga1, 2 * b)
    g2, aux = F.grad(lambda x: (np.sum(x**2), x * 2), has_aux=True)(a)
    close(g2, 2 * a)
    close(aux, 2 * a)
    (v, aux), g3 = F.value_and_grad(lambda x: (np.sum(x**2), "aux"), has_aux=True)(a)
    assert aux == "aux"
    close(v, np.sum(a**2))
    close(F.grad(lambda s: s**3)(2.0), 12.0)


def test_grad_pytree_argument():
    params = {"w": rng(83).standard_normal(3), "b": np.array(0.5)}
    x = rng(84).standard_normal(3)

    def loss(p, x):
        return (np.sum(p["w"] * x) + p["b"]) ** 2

    g = F.grad(loss)(params, x)
    assert set(g) == {"w", "b"}
    s = np.sum(params["w"] * x) + 0.5
    close(g["w"], 2 * s * x)
    close(g["b"], 2 * s)


def test_grad_errors():
    x = np.ones(3)
    with pytest.raises(TypeError):
        F.grad(lambda x: x * 2)(x)  # not scalar
    with pytest.raises(TypeError):
        F.grad(lambda x: np.sum(x * 1j))(x)  # complex output
    with pytest.raises(TypeError):
        F.grad(lambda x: np.sum(x))(np.arange(3))  # integer input
    with pytest.raises(TypeError):
        F.grad(lambda x: np.sum(x), argnums=2)(x)
    with pytest.raises(TypeError):
        F.grad(lambda x: np.sum(x), has_aux=True)(x)
    # a constant output has gradient zero
    close(F.grad(lambda x: da.as_tensor(np.array(1.0)))(x), np.zeros(3))


@pytest.mark.parametrize("chunk_size", [None, 2, 3])
def test_jacfwd_jacrev_argnums_aux_nesting(chunk_size):
    x, y = rng(90).standard_normal(3), rng(91).standard_normal(3)

    def f(x, y):
        return {"p": x * y, "s": np.sum(x**2)}, "aux"

    for tr in (F.jacfwd, F.jacrev):
        J, aux = tr(f, argnums=(0, 1), has_aux=True, chunk_size=chunk_size)(x, y)
        assert aux == "aux"
        assert set(J) == {"p", "s"}
        close(J["p"][0], np.diag(y))
        close(J["p"][1], np.diag(x))
        close(J["s"][0], 2 * x)
        close(J["s"][1], np.zeros(3))
        J1, _ = tr(f, argnums=1, has_aux=True, chunk_size=chunk_size)(x, y)
        close(J1["p"], np.diag(x))


def test_jacfwd_jacrev_closed_form_and_fd():
    f, x, J = make_tanh_cubic(9, seed=92)
    close(F.jacfwd(f)(x), J)
    close(F.jacrev(f)(x), J)
    close(F.jacrev(f, chunk_size=4)(x), fd_jacobian(f, x), rtol=1e-6, atol=1e-7)


def test_transforms_compose_into_hessians():
    f, x, g, H = make_logsum(6, seed=93)
    close(F.jacfwd(F.grad(f))(x), H)
    close(F.jacrev(F.grad(f))(x), H)
    close(F.jacfwd(F.jacrev(f))(x), H)
    close(F.jacrev(F.jacrev(f))(x), H)
    close(F.jacfwd(F.jacfwd(f))(x), H)  # the inner jacfwd falls back to unbatched passes
    # scalar: d2/dt2 sin(t) t
    t = 0.3
    close(F.grad(F.grad(lambda s: np.sin(s) * s))(t), -np.sin(t) * t + 2 * np.cos(t))


@pytest.mark.parametrize("how", ["batched-cotangent", "batched-tangent"])
def test_core_batched_recording(how):
    """Reverse mode through a batched pass: d/dx sum(J) for J = Jacobian of x**3 is 6x."""
    x = da.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    if how == "batched-cotangent":
        (J,) = da.grad(x**3, x, da.as_tensor(np.eye(3)), create_graph=True,
                       is_grads_batched=True)
    else:
        with da.dual_level():
            xd = da.make_dual(x, da.as_tensor(np.eye(3)), batched=True)
            J = da.unpack_dual(xd**3).tangent
    close(J, np.diag(3 * A(x) ** 2))
    (g,) = da.grad(J.sum(), x)
    assert g.shape == (3,)
    close(g, [6.0, 12.0, 18.0])


@pytest.mark.parametrize("strategy", STRATS)
def test_create_graph_input_captured_by_closure_is_a_separate_path(strategy):
    # func sees x both as its argument and through the closure; the Jacobian is
    # w.r.t. the argument only (diag(x)), yet stays differentiable w.r.t. x.
    x = np.array([1.0, 2.0])
    xt = da.tensor(x, requires_grad=True)
    J = F.jacobian(lambda inp: inp * xt, xt, create_graph=True, strategy=strategy)
    close(J, np.diag(x))
    (g,) = da.grad(J.sum(), xt)
    close(g, [1.0, 1.0])


def test_transform_results_differentiable_when_inputs_require_grad():
    x = rng(94).standard_normal(4)
    xt = da.tensor(x, requires_grad=True)
    g = F.grad(lambda x: np.sum(x**3))(xt)
    assert g.requires_grad
    (h,) = da.grad(g.sum(), xt)
    close(h, 6 * x)
    _, f_jvp = F.linearize(lambda x: x**3, xt)
    t = f_jvp(np.ones(4))
    (h2,) = da.grad(t.sum(), xt)
    close(h2, 6 * x)
    # the plain-array call keeps no history
    assert not F.grad(lambda x: np.sum(x**3))(x).requires_grad


@pytest.mark.parametrize("tr", ["jacfwd", "jacrev"])
def test_vectorized_transforms_differentiable_when_inputs_require_grad(tr):
    x = rng(95).standard_normal(3)
    xt = da.tensor(x, requires_grad=True)
    J = getattr(F, tr)(lambda x: x**3)(xt)
    assert J.requires_grad
    (h,) = da.grad(J.sum(), xt)
    close(h, 6 * x)


def test_jacrev_of_jacfwd_is_the_hessian():
    f, x, _, H = make_logsum(5, seed=96)
    close(F.jacrev(F.jacfwd(f))(x), H)


# ---------------------------------------------------------------------------
# the fast paths behind the benchmarks give the same answers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("chunk_size", [None, 5])
def test_constant_matrix_times_batched_matrices(strategy, chunk_size):
    # W @ X and X @ V with a matrix input: batched tangents / cotangents of
    # logical rank 2 meet a constant matrix (one folded GEMM in the batch rule)
    r = rng(97)
    W, V = r.standard_normal((4, 3)), r.standard_normal((2, 5))
    X = r.standard_normal((3, 2))
    cases = [
        (lambda X: W @ X, np.einsum("ik,jl->ijkl", W, np.eye(2))),
        (lambda X: X @ V, np.einsum("ik,lj->ijkl", np.eye(3), V)),
        (lambda X: W @ (X @ V), np.einsum("ik,lj->ijkl", W, V)),
    ]
    for f, J in cases:
        close(F.jacobian(f, X, vectorize=True, strategy=strategy, chunk_size=chunk_size), J)
        close(F.jacobian(f, X, vectorize=True, strategy=strategy), fd_jacobian(f, X),
              rtol=1e-6, atol=1e-7)
    # a stack of inputs against a constant matrix (leading axes folded too), a complex matrix
    Xs = r.standard_normal((2, 3, 2))
    Wc = W + 1j * r.standard_normal((4, 3))
    for f, x in [(lambda X: W @ X, Xs), (lambda X: X @ V, Xs), (lambda X: Wc @ X, X)]:
        got = F.jacobian(f, x, vectorize=True, strategy=strategy, chunk_size=chunk_size)
        close(got, F.jacobian(f, x, vectorize=False, strategy=strategy))
        if x is Xs:
            close(got, fd_jacobian(f, x), rtol=1e-6, atol=1e-7)


def test_hessian_reverse_strategy_by_columns_falls_back_and_keeps_conventions():
    # reverse-mode hessian(vectorize=True) without create_graph is computed by
    # columns (forward-over-reverse); a custom Function with no jvp whose backward
    # cannot be transposed (it computes with NumPy) cannot be, and gets rows instead
    class Cube(da.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return da.tensor(g.numpy() * 3.0) * t**2

    x = rng(98).standard_normal(4)
    c = CallCounter(lambda x: np.sum(Cube.apply(x)))
    close(F.hessian(c, x, vectorize=True), np.diag(6 * x))
    with pytest.raises(RuntimeError, match="Cube.backward cannot be used for forward mode.*jvp"):
        F.hessian(c, x, vectorize=True, outer_jacobian_strategy="forward-mode")
    # the rows are the same matrix as the columns, to rounding
    f, x, _, H = make_logsum(7, seed=99)
    close(F.hessian(f, x, vectorize=True), F.hessian(f, x, vectorize=False), rtol=1e-12)
    # complex inputs keep the reverse-over-reverse route (and agree with its loop)
    z = rng(100).standard_normal(3) + 1j * rng(101).standard_normal(3)
    g = lambda z: np.sum(np.abs(z) ** 2 * np.real(z))
    close(F.hessian(g, z, vectorize=True), F.hessian(g, z, vectorize=False), rtol=1e-12)


@pytest.mark.parametrize("chunk_size", [None, 3])
def test_forward_jacobian_identity_seed_selects_exactly(chunk_size):
    # With the whole identity as the batched tangent, matmul's batch rule selects
    # columns instead of multiplying: the same Jacobian, bit for bit, both sides
    r = rng(102)
    W = r.standard_normal((5, 4))
    W0 = W.copy()
    x = r.standard_normal(4)
    for f, J in [(lambda x: W @ x, W), (lambda x: x @ W.T, W),
                 (lambda x: (W @ x) ** 2, 2 * (W @ x)[:, None] * W)]:
        got = F.jacobian(f, x, vectorize=True, strategy="forward-mode", chunk_size=chunk_size)
        np.testing.assert_array_equal(A(got), A(F.jacobian(f, x, strategy="forward-mode")))
        close(got, J)
        assert A(got).flags.c_contiguous
        A(got)[...] = 0.0  # a copy, never a view of W
    np.testing.assert_array_equal(W, W0)
    # a non-finite constant spreads NaN through a product with the identity
    # (0 * inf): selecting would hide it, so the product is computed
    W[1, 2] = np.inf
    with np.errstate(invalid="ignore"):
        for f in (lambda x: W @ x, lambda x: x @ W.T):
            got = F.jacobian(f, x, vectorize=True, strategy="forward-mode",
                             chunk_size=chunk_size)
            np.testing.assert_array_equal(A(got), A(F.jacobian(f, x, strategy="forward-mode")))
            assert np.isnan(A(got)).any()


@pytest.mark.fastpath("seeds", "fast")
def test_forward_jacobian_tangents_keep_the_seeds_column_major_layout(monkeypatch):
    # The forward Jacobian's seed is column-major, and its layout flows through the
    # tangents (selected columns, diagonals, elementwise products), so the columns come
    # out batch-last in memory and the final transpose to (out, in) is a view
    from dualad.functional import _common
    from dualad.rules import linear

    asked = []
    monkeypatch.setattr(_common, "identity_seed",
                        lambda n, dtype, order="C": asked.append(order) or
                        linear.identity_seed(n, dtype, order))

    r = rng(103)
    n = 6
    W = r.standard_normal((n, n))
    x = r.standard_normal(n)
    for order, contiguous in (("F", "F_CONTIGUOUS"), ("C", "C_CONTIGUOUS")):
        seed = linear.identity_seed(n, np.float64, order)
        with da.dual_level():
            xd = da.make_dual(da.as_tensor(x), da.as_tensor(seed), batched=True)
            steps = [W @ xd, xd ** 3, np.sin(xd)]  # (sin of the seed: a known diagonal)
            steps.append(np.tanh(steps[0]) + steps[1] * steps[2])
            for s in steps:
                assert A(da.unpack_dual(s).tangent).flags[contiguous], order
    J = F.jacobian(lambda x: np.tanh(W @ x) + x ** 3, x, vectorize=True, strategy="forward-mode")
    assert asked == ["F"]
    np.testing.assert_array_equal(
        A(J), A(F.jacobian(lambda x: np.tanh(W @ x) + x ** 3, x, strategy="forward-mode")))
    assert A(J).flags.c_contiguous


@pytest.mark.fastpath("seeds", "fast")
@pytest.mark.parametrize("chunk_size", [None, 3])
def test_a_seed_times_a_vector_is_a_diagonal_that_matmul_scales_rows_by(chunk_size, monkeypatch):
    # The first elementwise op a whole identity seed meets makes diag(k); matmul's batch
    # rule then scales rows instead of running a GEMM against it: the Jacobian of the
    # loop over basis vectors, bit for bit (up to the sign of zeros), both directions
    from dualad.fast import seeds as linear

    scaled = []
    real = linear._rows_scaled
    monkeypatch.setattr(linear, "_rows_scaled",
                        lambda m, d: scaled.append(real(m, d) is not None) or real(m, d))
    r = rng(104)
    W = r.standard_normal((5, 4))
    x, u = r.standard_normal(4), r.standard_normal(5)
    cases = [("forward-mode", lambda x: W @ np.tanh(x), x),  # forward: diag at tanh, then W @
             ("reverse-mode", lambda x: np.tanh(W @ x), x),  # reverse: diag at tanh, then @ W
             ("reverse-mode", lambda u: np.sin(u @ W), u)]
    for strategy, f, at in cases:
        for inf in (False, True):
            Wk = W.copy()
            if inf:  # a non-finite constant spreads NaN through a GEMM (0 * inf): kept
                W[1, 2] = np.inf
            scaled.clear()
            with np.errstate(invalid="ignore"):
                got = F.jacobian(f, at, vectorize=True, strategy=strategy, chunk_size=chunk_size)
                want = F.jacobian(f, at, vectorize=False, strategy=strategy)
            np.testing.assert_array_equal(A(got), A(want))
            assert any(scaled) == (not chunk_size and not inf), (strategy, inf)
            W[...] = Wk
    # a diagonal that reached the caller and was written into is not one any more
    M = r.standard_normal((4, 4))
    xt = da.tensor(x, requires_grad=True)
    for write in (False, True):
        J = A(F.jacobian(lambda x: np.tanh(x), x, vectorize=True, strategy="reverse-mode"))
        assert id(J) in linear._diagonals  # (the known diagonal itself)
        if write:
            J[0, 1] = 2.0
        scaled.clear()
        (got,) = da.grad(xt @ M, xt, da.as_tensor(J), is_grads_batched=True)
        assert scaled == [not write]
        np.testing.assert_array_equal(A(got), J @ M.T)
    # an inf in the vector itself: no diagonal (its product with the seed is NaN off it)
    with np.errstate(invalid="ignore", over="ignore"):
        g = lambda x: np.tanh(W @ x) * np.exp(x @ W.T * 1000)
        np.testing.assert_array_equal(
            A(F.jacobian(g, x, vectorize=True, strategy="reverse-mode")),
            A(F.jacobian(g, x, vectorize=False, strategy="reverse-mode")))


@pytest.mark.parametrize("strategy", STRATS)
@pytest.mark.parametrize("n", [1, 3])
def test_cached_seeds_never_reach_the_caller(strategy, n):
    # the identity seeds are cached, read-only and shared between calls: a
    # Jacobian that is the seed itself must still be the caller's own array
    x = np.arange(1.0, n + 1)
    for f in (lambda x: x, lambda x: x.reshape((n, 1)), lambda x: (x, 2.0 * x)):
        J = F.jacobian(f, x, vectorize=True, strategy=strategy)
        for blk in (J if isinstance(J, tuple) else (J,)):
            a = A(blk)
            assert a.flags.writeable
            a[...] = -7.0
        J2 = F.jacobian(f, x, vectorize=True, strategy=strategy)
        close(J2[0] if isinstance(J2, tuple) else J2,
              np.eye(n).reshape(np.shape(A(J2[0] if isinstance(J2, tuple) else J2))))
