"""``dualad.functional.jet``: JAX's ``jet`` as oracle on compositions, mpmath at order 30,
nesting with forward and reverse mode (each against another mode), and the errors."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp
from dualad.core.dispatch import Primitive, apply, every
from dualad.taylor import NoTaylorRuleError, jet_level, make_jet, unpack_jet

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
from jax.experimental.jet import jet as jax_jet  # noqa: E402


def _mlp(ns):
    def f(x, w):
        h = ns.tanh(w @ x)
        return ns.sum(ns.exp(-h * h) * ns.sin(h) + ns.log1p(x[:3] * x[:3]))
    return f


def _ratio(ns):
    def f(x, y):
        return (ns.sqrt(1.0 + x * x) / (2.0 + ns.cos(y)), (x * ns.exp(-y * y)) ** 3)
    return f


def _reductions(ns):
    def f(x, y):
        z = ns.concatenate([x, y])
        return ns.cumsum(ns.where(z > 0.1, z * z, -z), axis=0)[::-1] @ ns.tanh(z)
    return f


CASES = {
    "mlp": (_mlp, lambda g: (g.standard_normal(4), g.standard_normal((3, 4)) * 0.5)),
    "ratio": (_ratio, lambda g: (g.standard_normal(5), g.standard_normal(5))),
    "reductions": (_reductions, lambda g: (g.standard_normal(3), g.standard_normal(3))),
}


@pytest.mark.parametrize("scaled", [True, False])
@pytest.mark.parametrize("order", [1, 2, 5])
@pytest.mark.parametrize("name", sorted(CASES))
def test_jet_matches_jax_jet(name, order, scaled):
    make, point = CASES[name]
    g = np.random.default_rng(hash((name, order)) % 2**32)
    primals = point(g)
    series = tuple([g.standard_normal(p.shape) for _ in range(order)] for p in primals)
    y, ys = F.jet(make(dnp), primals, series, factorial_scaled=scaled)
    if scaled:
        jy, jys = jax_jet(make(jnp), primals, series)
    else:  # JAX's jet takes derivative coefficients: scale at the edges ourselves
        jin = tuple([c * math.factorial(k) for k, c in enumerate(s, 1)] for s in series)
        jy, jys = jax_jet(make(jnp), primals, jin)
        unscale = lambda cs: [c / math.factorial(k) for k, c in enumerate(cs, 1)]  # noqa: E731
        jys = tuple(unscale(c) for c in jys) if isinstance(jy, tuple) else unscale(jys)
    if isinstance(jy, tuple):
        assert isinstance(y, tuple) and isinstance(ys, tuple) and len(ys) == len(jys)
        pairs = list(zip(y, jy, strict=True)) + [
            (a, b) for s, t in zip(ys, jys, strict=True) for a, b in zip(s, t, strict=True)]
    else:
        assert len(ys) == order
        pairs = [(y, jy)] + list(zip(ys, jys, strict=True))
    for a, b in pairs:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-10)


def test_order_30_against_mpmath():
    # f(x) = exp(sin(x)) / (1 + x^2) along x(t) = x0 + t: coefficient k is f^(k)(x0) / k!
    x0 = 0.3
    y, ys = F.jet(lambda x: dnp.exp(dnp.sin(x)) / (1.0 + x * x), (np.array(x0),),
                  ([1.0] + [0.0] * 29,), factorial_scaled=False)
    mp.mp.dps = 40
    ref = mp.taylor(lambda t: mp.exp(mp.sin(t)) / (1 + t * t), mp.mpf(x0), 30)
    got = [float(y)] + [float(c) for c in ys]
    for k, (a, b) in enumerate(zip(got, ref, strict=True)):
        assert abs(a - float(b)) <= 1e-12 * max(1.0, abs(float(b))), k


def test_derivative_coefficients_are_derivatives():
    # factorial_scaled=True: output term k is the k-th derivative of f(x0 + t)
    y, ys = F.jet(np.sin, (0.5,), ([1.0, 0.0, 0.0, 0.0],))
    s, c = math.sin(0.5), math.cos(0.5)
    np.testing.assert_allclose([float(v) for v in ys], [c, -s, -c, s], rtol=1e-14)


def test_constant_output_has_zero_terms():
    y, ys = F.jet(lambda x: da.tensor(2.0), (np.ones(2),), ([np.ones(2), np.ones(2)],))
    assert float(y) == 2.0 and [float(c) for c in ys] == [0.0, 0.0]


# -- nesting -------------------------------------------------------------------------------


def _f(x):
    return dnp.sum(dnp.tanh(x) * dnp.exp(0.3 * x) + x ** 3)


X0 = np.array([0.2, -0.4, 0.7])
U = np.array([0.5, 1.0, -0.3])
V = np.array([-0.2, 0.4, 0.9])


def _coeffs(x0, K=3):
    _, ys = F.jet(_f, (x0,), ([U] + [np.zeros(3)] * (K - 1),), factorial_scaled=False)
    return np.array([float(c) for c in ys])


def _fd(x0, v, h=1e-5):
    return (_coeffs(x0 + h * v) - _coeffs(x0 - h * v)) / (2 * h)


def test_forward_over_taylor():
    # a dual level outside the jet level: each coefficient carries d/de at x0 + e v
    with da.dual_level():
        x = da.make_dual(da.tensor(X0), da.tensor(V))
        _, ys = F.jet(_f, (x,), ([U, np.zeros(3), np.zeros(3)],), factorial_scaled=False)
        tangents = np.array([float(da.unpack_dual(c).tangent) for c in ys])
    np.testing.assert_allclose(tangents, _fd(X0, V), rtol=1e-7)


def test_taylor_over_forward_equals_forward_over_taylor():
    # a dual level inside the jet level: the tangent is a jet (the series of f'(x(t)) v)
    with jet_level():
        x = make_jet(da.tensor(X0), [da.tensor(U), np.zeros(3), np.zeros(3)])
        with da.dual_level():
            y = _f(da.make_dual(x, da.tensor(V)))
            tangent = da.unpack_dual(y).tangent
        t0, ts = unpack_jet(tangent)
    got = np.array([float(c) for c in ts])
    np.testing.assert_allclose(got, _fd(X0, V), rtol=1e-7)
    np.testing.assert_allclose(float(t0), float(F.jvp(_f, da.tensor(X0), da.tensor(V))[1]),
                               rtol=1e-12)


def test_reverse_over_taylor_against_forward_over_reverse():
    # y_1 = grad f . u, so d y_1 / d x0 = H u; y_2 = u^T H u / 2, so d y_2 / d u = H u
    x = da.tensor(X0, requires_grad=True)
    u = da.tensor(U, requires_grad=True)
    _, ys = F.jet(_f, (x,), ([u, da.zeros(3)],), factorial_scaled=False)
    (g1,) = da.grad(ys[0], [x], retain_graph=True)
    (g2,) = da.grad(ys[1], [u])
    _, hu = F.hvp(_f, da.tensor(X0), da.tensor(U))
    np.testing.assert_allclose(np.asarray(g1), np.asarray(hu), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g2), np.asarray(hu), rtol=1e-12)


def test_jet_of_jet_nests():
    # two jet levels: the inner jet's coefficient, differentiated by the outer one
    with jet_level() as outer:
        x = make_jet(da.tensor(0.4), [da.tensor(1.0)], level=outer)
        with jet_level() as inner:
            z = make_jet(x, [da.tensor(1.0), 0.0], level=inner)
            y = dnp.exp(z) * dnp.sin(z)
            _, cs = unpack_jet(y, level=inner)
        _, d = unpack_jet(cs[1], level=outer)  # d/dx of f''(x)/2
    x0 = 0.4
    f3 = 2 * math.exp(x0) * (math.cos(x0) - math.sin(x0)) * 1.0  # (e^x sin x)''' = 2e^x(cos-sin)
    np.testing.assert_allclose(float(d[0]), f3 / 2, rtol=1e-13)


# -- custom Functions ------------------------------------------------------------------------


class Cube(da.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class CubeWithRule(Cube):
    @staticmethod
    def taylor(x):
        from dualad.rules import taylor as T
        return T.multiply(x, T.square(x))


def test_function_order_one_by_its_first_order_rule():
    y, (d1,) = F.jet(Cube.apply, (2.0,), ([1.0],))
    assert float(y) == 8.0 and float(d1) == 12.0


def test_function_higher_order_needs_a_taylor_rule():
    with pytest.raises(NoTaylorRuleError, match="Cube has no Taylor rule.*staticmethod taylor"):
        F.jet(Cube.apply, (2.0,), ([1.0, 0.0],))
    y, ys = F.jet(CubeWithRule.apply, (2.0,), ([1.0, 0.0, 0.0],))
    assert [float(c) for c in ys] == [12.0, 12.0, 6.0]


# -- errors --------------------------------------------------------------------------------


@pytest.fixture
def cube_without_a_taylor_rule():
    """A nonlinear primitive with a JVP rule and no Taylor rule (taken off the list of every
    primitive afterwards, so no sweep meets it)."""
    cube = Primitive("cube_without_a_taylor_rule", lambda x: x ** 3,
                     lambda p, t, out: None if t[0] is None else 3 * p[0] * p[0] * t[0],
                     reads=(0,))
    yield lambda x: apply(cube, x)
    every.remove(cube)


def test_a_primitive_without_a_rule_raises_naming_it(cube_without_a_taylor_rule):
    with pytest.raises(NoTaylorRuleError,
                       match="cube_without_a_taylor_rule has no Taylor rule.*register"):
        F.jet(cube_without_a_taylor_rule, (np.array([2.0]),), ([np.ones(1), np.ones(1)],))


def test_argument_errors():
    with pytest.raises(ValueError, match="different numbers of terms"):
        F.jet(np.sin, (1.0, 2.0), ([1.0], [1.0, 2.0]))
    with pytest.raises(ValueError, match="2 primals but 1 series"):
        F.jet(np.add, (1.0, 2.0), ([1.0],))
    with pytest.raises(TypeError, match="must be tuples"):
        F.jet(np.sin, 1.0, [1.0])
    with pytest.raises(TypeError, match="floating or complex"):
        F.jet(np.sin, (np.array([1, 2]),), ([np.array([1, 1])],))
    with pytest.raises(TypeError, match="must return a Tensor"):
        F.jet(lambda x: 3.0, (1.0,), ([1.0],))


def test_gradient_inside_the_jet_level_is_a_jet():
    # backward inside the level: the gradient is the jet of grad f along x(t) = x0 + u t
    x = da.tensor(X0, requires_grad=True)
    with jet_level():
        y = _f(make_jet(x, [da.tensor(U), np.zeros(3)]))
        (g,) = da.grad(unpack_jet(y).primal, [x])
        g0, gs = unpack_jet(g)
    np.testing.assert_allclose(np.asarray(g0), np.asarray(F.grad(_f)(da.tensor(X0))),
                               rtol=1e-13)
    _, hu = F.hvp(_f, da.tensor(X0), da.tensor(U))
    np.testing.assert_allclose(np.asarray(gs[0]), np.asarray(hu), rtol=1e-12)


def test_dask_arrays_stay_lazy():
    dsa = pytest.importorskip("dask.array")
    x = np.array([0.2, -0.4, 0.7])
    f = lambda v: dnp.tanh(v) * dnp.exp(v)  # noqa: E731
    _, want = F.jet(f, (x,), ([np.ones(3), np.zeros(3)],))
    _, got = F.jet(f, (dsa.from_array(x, chunks=2),),
                   ([dsa.ones(3, chunks=2), dsa.zeros(3, chunks=2)],))
    assert all(isinstance(c._data, dsa.Array) for c in got)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g._data.compute(), np.asarray(w), rtol=1e-14)
    lap = F.laplacian(lambda v: dnp.sum(f(v)), dsa.from_array(x, chunks=2))
    assert isinstance(lap._data, dsa.Array)
    np.testing.assert_allclose(lap._data.compute(),
                               float(F.laplacian(lambda v: dnp.sum(f(v)), x)), rtol=1e-14)
