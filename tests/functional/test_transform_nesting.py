"""The functional transforms compose like JAX's (issue 18, item 2).

Every transform — grad, value_and_grad, jacfwd, jacrev, linearize, linear_transpose and,
with ``create_graph=True``, jvp, vjp, jacobian, hessian, hvp, vhp — is differentiated
again by every mode: reverse (``backward``, ``grad``, ``jacrev``, ``jacobian``) and
forward (``jacfwd``, ``jvp``, forward-mode ``jacobian``), from outside (the enclosing
transform differentiates the inner one's own argument) and through a closure (the inner
one differentiates w.r.t. ``y`` a function that reads the enclosing ``x``). Every
number is compared with a closed form.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

RTOL, ATOL = 1e-10, 1e-12
rng = np.random.default_rng(18)
N = 3
W = rng.standard_normal(N)
X0 = rng.standard_normal(N) * 0.5
V = rng.standard_normal(N)
U = rng.standard_normal(N)
Y0 = rng.standard_normal(N) * 0.5
C = rng.standard_normal(N)
CM = rng.standard_normal((N, N))


def close(got, want):
    got = got.detach().numpy() if isinstance(got, da.Tensor) else np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def T(a):
    return da.tensor(a) if not isinstance(a, da.Tensor) else a


# --- f(x) = exp(w.x) + sum(sin(x) exp(x)): gradient, Hessian, third derivative ---------


def f(x):
    return dnp.exp(dnp.sum(W * x)) + dnp.sum(dnp.sin(x) * dnp.exp(x))


def derivatives(x):
    s, ex, sn, cs = np.exp(W @ x), np.exp(x), np.sin(x), np.cos(x)
    g = s * W + (cs + sn) * ex
    h = s * np.outer(W, W) + np.diag(2 * cs * ex)
    t = s * np.einsum("i,j,k->ijk", W, W, W)
    for i in range(N):
        t[i, i, i] += 2 * (cs[i] - sn[i]) * ex[i]
    return g, h, t


G, H, TH = derivatives(X0)

# inner transform of f at x, differentiated from outside -> (that function of x, its
# Jacobian at X0)
FROM_OUTSIDE = {
    "grad": (F.grad(f), H),
    "value_and_grad": (lambda x: F.value_and_grad(f)(x)[1], H),
    "value_and_grad.value": (lambda x: F.value_and_grad(f)(x)[0], G),
    "jacrev": (F.jacrev(f), H),
    "jacrev.chunk": (F.jacrev(F.jacrev(f), chunk_size=2), TH),
    "jacfwd": (F.jacfwd(f), H),
    "vjp": (lambda x: F.vjp(f, T(x), create_graph=True)[1], H),
    "jvp": (lambda x: F.jvp(f, T(x), T(U), create_graph=True)[1], H @ U),
    "jacobian": (lambda x: F.jacobian(f, T(x), create_graph=True), H),
    "jacobian.vectorize": (lambda x: F.jacobian(f, T(x), create_graph=True, vectorize=True), H),
    "jacobian.forward": (lambda x: F.jacobian(f, T(x), create_graph=True, vectorize=True,
                                              strategy="forward-mode"), H),
    "linearize": (lambda x: F.linearize(f, x)[1](U), H @ U),
    "hvp": (lambda x: F.hvp(f, T(x), T(V), create_graph=True)[1], TH @ V),
    "vhp": (lambda x: F.vhp(f, T(x), T(V), create_graph=True)[1], TH @ V),
    "hessian": (lambda x: F.hessian(f, T(x), create_graph=True), TH),
    "hessian.vectorize": (lambda x: F.hessian(f, T(x), create_graph=True, vectorize=True), TH),
    "hessian.forward": (lambda x: F.hessian(f, T(x), create_graph=True, vectorize=True,
                                            outer_jacobian_strategy="forward-mode"), TH),
    "grad∘grad": (lambda x: F.grad(lambda y: F.grad(f)(y) @ T(V))(x), TH @ V),
    "jacrev∘jacrev": (F.jacrev(F.jacrev(f)), TH),
    "jacfwd∘jacrev": (F.jacfwd(F.jacrev(f)), TH),
    "jacrev∘jacfwd": (F.jacrev(F.jacfwd(f)), TH),
    "jacfwd∘jacfwd": (F.jacfwd(F.jacfwd(f)), TH),
}

# --- through a closure: e(x, y) = exp(x * y) elementwise, the inner transform in y ------
# d/dy e = x e, d2/dy2 e = x^2 e; d/dx (x e) = e + x y e, d/dx (x^2 e) = 2 x e + x^2 y e.

EX = np.exp(X0 * Y0)
D1 = EX + X0 * Y0 * EX  # d/dx of d/dy e
D2 = 2 * X0 * EX + X0 ** 2 * Y0 * EX  # d/dx of d2/dy2 e
DC = np.diag(CM)


def e(x, y):
    return dnp.exp(x * y)


def se(x, y):
    return dnp.sum(e(x, y))


# inner transform in y of a function reading x -> (scalar function of x, its gradient at X0)
THROUGH_CLOSURE = {
    "grad": (lambda x: dnp.sum(C * F.grad(lambda y: se(x, y))(Y0)), C * D1),
    "grad.aux": (lambda x: F.grad(lambda y: (se(x, y), dnp.sum(x ** 2)), has_aux=True)(Y0)[1],
                 2 * X0),
    "value_and_grad": (lambda x: dnp.sum(C * F.value_and_grad(lambda y: se(x, y))(Y0)[1]),
                       C * D1),
    "value_and_grad.value": (lambda x: F.value_and_grad(lambda y: se(x, y))(Y0)[0], Y0 * EX),
    "jacfwd": (lambda x: dnp.sum(CM * F.jacfwd(lambda y: e(x, y))(Y0)), DC * D1),
    "jacrev": (lambda x: dnp.sum(CM * F.jacrev(lambda y: e(x, y))(Y0)), DC * D1),
    "vjp": (lambda x: (lambda o, g: dnp.sum(C * g) + dnp.sum(CM[0] * o))(
        *F.vjp(lambda y: e(x, y), T(Y0), T(V), create_graph=True)), C * V * D1 + CM[0] * Y0 * EX),
    "jvp": (lambda x: (lambda o, t: dnp.sum(C * t) + dnp.sum(CM[0] * o))(
        *F.jvp(lambda y: e(x, y), T(Y0), T(V), create_graph=True)), C * V * D1 + CM[0] * Y0 * EX),
    "jacobian": (lambda x: dnp.sum(CM * F.jacobian(lambda y: e(x, y), T(Y0), create_graph=True)),
                 DC * D1),
    "jacobian.forward": (lambda x: dnp.sum(CM * F.jacobian(
        lambda y: e(x, y), T(Y0), create_graph=True, vectorize=True, strategy="forward-mode")),
        DC * D1),
    "linearize": (lambda x: (lambda o, fj: dnp.sum(C * fj(V)) + dnp.sum(CM[0] * o))(
        *F.linearize(lambda y: e(x, y), Y0)), C * V * D1 + CM[0] * Y0 * EX),
    "hvp": (lambda x: dnp.sum(C * F.hvp(lambda y: se(x, y), T(Y0), T(V), create_graph=True)[1]),
            C * V * D2),
    "vhp": (lambda x: dnp.sum(C * F.vhp(lambda y: se(x, y), T(Y0), T(V), create_graph=True)[1]),
            C * V * D2),
    "hessian": (lambda x: dnp.sum(CM * F.hessian(lambda y: se(x, y), T(Y0), create_graph=True)),
                DC * D2),
    "hessian.forward": (lambda x: dnp.sum(CM * F.hessian(
        lambda y: se(x, y), T(Y0), create_graph=True, vectorize=True,
        outer_jacobian_strategy="forward-mode")), DC * D2),
    "grad∘grad": (lambda x: dnp.sum(C * F.grad(lambda y: F.grad(lambda z: se(x, z))(y) @ T(V))(Y0)),
                  C * V * D2),
    "jacrev∘jacrev": (lambda x: dnp.sum(CM * F.jacrev(F.jacrev(lambda y: se(x, y)))(Y0)),
                      DC * D2),
    "jacfwd∘jacrev": (lambda x: dnp.sum(CM * F.jacfwd(F.jacrev(lambda y: se(x, y)))(Y0)),
                      DC * D2),
    "jacrev∘jacfwd": (lambda x: dnp.sum(CM * F.jacrev(F.jacfwd(lambda y: se(x, y)))(Y0)),
                      DC * D2),
    "jacfwd∘jacfwd": (lambda x: dnp.sum(CM * F.jacfwd(F.jacfwd(lambda y: se(x, y)))(Y0)),
                      DC * D2),
}

# --- the enclosing transforms: each returns d fn / dx at X0 with shape out + (N,) ----------


def by_backward(fn):
    x = da.tensor(X0, requires_grad=True)
    out = fn(x).reshape(-1)
    rows = []
    for i in range(out.shape[0]):
        x.grad = None
        out[i].backward(retain_graph=True)
        rows.append(np.zeros(N) if x.grad is None else x.grad.numpy())
    return np.stack(rows).reshape(tuple(fn(T(X0)).shape) + (N,))


def by_jvp(fn):
    cols = [F.jvp(fn, T(X0), T(np.eye(N)[k]))[1].numpy() for k in range(N)]
    return np.stack(cols, axis=-1)


OUTER = {
    "backward": by_backward,
    "jacrev": lambda fn: F.jacrev(fn)(X0),
    "jacfwd": lambda fn: F.jacfwd(fn)(X0),
    "jacobian": lambda fn: F.jacobian(fn, T(X0)),
    "jacobian.vectorize": lambda fn: F.jacobian(fn, T(X0), vectorize=True),
    "jacobian.forward": lambda fn: F.jacobian(fn, T(X0), vectorize=True, strategy="forward-mode"),
    "jacobian.forward-loop": lambda fn: F.jacobian(fn, T(X0), strategy="forward-mode"),
    "jvp": by_jvp,
}


OUTER_OF_SCALAR = {**OUTER, "grad": lambda fn: F.grad(fn)(X0)}


@pytest.mark.parametrize("inner", sorted(set(FROM_OUTSIDE) | set(THROUGH_CLOSURE)))
def test_a_transform_is_differentiated_again_by_every_mode(inner):
    """From outside and through a closure, by each enclosing mode (all listed if wrong)."""
    wrong = []
    for where, table, outers in (("from outside", FROM_OUTSIDE, OUTER),
                                 ("through a closure", THROUGH_CLOSURE, OUTER_OF_SCALAR)):
        if inner not in table:
            continue
        fn, want = table[inner]
        for name, outer in outers.items():
            try:
                close(outer(fn), want)
            except AssertionError as err:
                wrong.append(f"{where}, by {name}: {str(err).strip().splitlines()[-1]}")
    assert not wrong, "\n".join(wrong)


# --- the cases of the issue ------------------------------------------------------------


def test_grad_of_grad_over_two_arguments():
    def f2(a, b):
        return dnp.sin(dnp.sin(a) + dnp.sin(b))

    a, b = 0.3, 0.9
    want = -np.sin(np.sin(a) + np.sin(b)) * np.cos(a) * np.cos(b)
    assert abs(want - -0.5234) < 1e-4
    close(F.grad(F.grad(f2, argnums=1), argnums=0)(a, b), want)
    close(F.grad(F.grad(f2, argnums=0), argnums=1)(a, b), want)
    close(F.jacfwd(F.grad(f2, argnums=1), argnums=0)(a, b), want)
    close(F.jacrev(F.jacfwd(f2, argnums=1), argnums=0)(a, b), want)


@pytest.mark.parametrize("mode", ["backward", "grad", "jacrev", "jacfwd", "jvp"])
def test_a_closure_over_an_enclosing_variable(mode):
    def h(x):
        return x * F.grad(lambda y: x * y)(2.0)  # x**2: derivative 2 x

    if mode == "backward":
        x = da.tensor(1.5, requires_grad=True)
        h(x).backward()
        got = x.grad
    elif mode == "jvp":
        got = F.jvp(h, T(np.array(1.5)), T(np.array(1.0)))[1]
    else:
        got = getattr(F, mode)(h)(1.5)
    close(got, 3.0)


def test_no_perturbation_confusion_across_transforms():
    for outer in (F.grad, F.jacfwd, F.jacrev):
        for inner in (F.grad, F.jacfwd, F.jacrev):
            # d/dx [x * d/dy (x + y)] = 1 (the classic), d/dx [x * d/dy (x * y)] = 2 x
            close(outer(lambda x, inner=inner: x * inner(lambda y: x + y)(0.7))(2.0), 1.0)
            close(outer(lambda x, inner=inner: x * inner(lambda y: x * y)(0.7))(2.0), 4.0)


def test_jacrev_three_times_is_the_third_derivative():
    close(F.jacrev(F.jacrev(F.jacrev(f)))(X0), TH)
    close(F.jacrev(F.jacrev(F.jacrev(lambda x: dnp.exp(x[:2]) * x[2])))(X0),
          _third_of_exp_times_last(X0))


def _third_of_exp_times_last(x):
    # F_i = exp(x_i) x_2 for i < 2
    t = np.zeros((2, N, N, N))
    for i in range(2):
        ei = np.exp(x[i])
        t[i, i, i, i] = ei * x[2]
        for p in [(i, i, 2), (i, 2, i), (2, i, i)]:
            t[(i,) + p] = ei
    return t


def test_jacrev_of_jacrev_on_a_tracked_or_dual_input():
    x = da.tensor(X0, requires_grad=True)
    hx = F.jacrev(F.jacrev(f))(x)
    close(hx, H)
    (g,) = da.grad((hx * T(CM)).sum(), [x])
    close(g, np.einsum("ij,ijk->k", CM, TH))
    with da.dual_level():
        hd = F.jacrev(F.jacrev(f))(da.make_dual(T(X0), T(U)))
        p, t = da.unpack_dual(hd)
    close(p, H)
    close(t, TH @ U)


@pytest.mark.parametrize("fn", [F.hvp, F.vhp])
def test_hvp_with_create_graph_through_exp_is_connected(fn):
    def g(x):
        return 3 * dnp.exp(x[:3]).sum()

    x0 = np.linspace(0.1, 0.9, 5)
    v = np.array([1.0, -0.5, 2.0, 0.3, 0.7])
    x = da.tensor(x0, requires_grad=True)
    _, hv = fn(g, x, T(v), create_graph=True)
    want = np.where(np.arange(5) < 3, 3 * np.exp(x0) * v, 0.0)
    close(hv, want)
    (d,) = da.grad(hv.sum(), [x])
    assert d is not None
    close(d, want)  # d/dx_i of 3 e^{x_i} v_i is itself
    assert da.gradcheck(lambda x: fn(g, x, T(v), create_graph=True)[1], (x,))
    # and by forward mode, the input dual
    close(F.jacfwd(lambda x: fn(g, x, T(v), create_graph=True)[1])(x0), np.diag(want))


def test_linear_transpose_of_a_map_closing_over_a_tracked_matrix():
    A0 = rng.standard_normal((2, N))
    c, k = rng.standard_normal(2), rng.standard_normal(N)
    A = da.tensor(A0, requires_grad=True)
    (ct,) = F.linear_transpose(lambda x: A @ x, np.zeros(N))(T(c))
    close(ct, A0.T @ c)
    (gA,) = da.grad((ct * T(k)).sum(), [A])
    close(gA, np.outer(c, k))  # d/dA <k, A^T c>


def test_forward_mode_keeps_the_tangents_of_a_closure():
    # value_and_grad's value, aux and the gradient all keep an enclosing tangent
    def h(x):
        (val, aux), g = F.value_and_grad(lambda y: (x * y * y, x ** 3), has_aux=True)(2.0)
        return val + aux + g  # 4x + x^3 + 4x

    close(F.jacfwd(h)(np.array(0.5)), 8 + 3 * 0.25)
    close(F.jvp(h, T(np.array(0.5)), T(np.array(1.0)))[1], 8 + 3 * 0.25)


def test_a_result_keeps_history_only_where_an_enclosing_pass_reads_it():
    # nothing encloses the outer transform: nothing of its result is recorded
    for r in (F.grad(F.grad(lambda a, b: a * a * b, argnums=1))(0.3, 0.9),
              F.jacrev(F.jacrev(f))(X0), F.jacfwd(F.grad(f))(X0),
              F.grad(lambda x: F.hvp(f, x, T(V), create_graph=True)[1].sum())(X0),
              F.linearize(F.grad(f), X0)[1](U)):
        assert not r.requires_grad and r.grad_fn is None
    # the same transforms inside a recorded computation: their results are recorded
    x = da.tensor(X0, requires_grad=True)
    for r in (F.grad(lambda a: a * dnp.sum(x))(0.3), F.jacrev(lambda y: y * x)(Y0),
              F.jacfwd(lambda y: y * x)(Y0), F.linearize(lambda y: y * x, Y0)[1](U)):
        assert r.requires_grad
    # under no_grad nothing is
    with da.no_grad():
        assert not F.grad(lambda a: a * dnp.sum(x))(0.3).requires_grad


@pytest.mark.parametrize("name", ["vjp", "jvp", "hvp", "vhp"])
def test_the_direction_v_is_differentiated_again(name):
    # with create_graph the result is linear in v: its Jacobian in v is J (or H) itself
    y0 = np.array([0.2, 0.5, -0.4])
    fn = getattr(F, name)
    g = (lambda y: dnp.sum(dnp.exp(y) * y[0])) if name in ("hvp", "vhp") else \
        (lambda y: dnp.exp(y) * y[0])
    ey = np.exp(y0)
    if name in ("hvp", "vhp"):  # H of exp(y) . y0-weighted sum
        want = np.diag(ey * y0[0])
        want[0, :] += ey
        want[:, 0] += ey
    else:
        want = np.diag(ey * y0[0])
        want[:, 0] += ey
        if name == "vjp":
            want = want.T
    for outer in (F.jacfwd, F.jacrev):
        close(outer(lambda v: fn(g, T(y0), v, create_graph=True)[1])(np.ones(3)), want)


@pytest.mark.parametrize("inner", ["vjp", "jvp", "jacobian", "jacobian-forward", "hvp", "vhp"])
def test_forward_mode_sees_through_torch_style_functions_without_create_graph(inner):
    """With create_graph=False a torch-style function drops its reverse history, never the
    tangents of an enclosing forward transform: they came back as a silent zero."""
    f = lambda x: dnp.sin(x) * x  # noqa: E731
    loss = lambda x: dnp.sum(f(x))  # noqa: E731
    ones = da.ones(2)
    calls = {
        "vjp": lambda x: F.vjp(f, x, ones)[1],
        "jvp": lambda x: F.jvp(f, x, ones)[1],
        "jacobian": lambda x: F.jacobian(f, x).sum(0),
        "jacobian-forward": lambda x: F.jacobian(f, x, vectorize=True,
                                                 strategy="forward-mode").sum(0),
        "hvp": lambda x: F.hvp(loss, x, ones)[1],
        "vhp": lambda x: F.vhp(loss, x, ones)[1],
    }
    x0 = np.array([0.3, 0.7, -1.1])
    ones = da.ones(3)
    d2 = 2 * np.cos(x0) - x0 * np.sin(x0)  # (sin x * x)''
    d3 = -3 * np.sin(x0) - x0 * np.cos(x0)
    want = np.diag(d3 if inner in ("hvp", "vhp") else d2)
    got = F.jacfwd(calls[inner])(x0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)
