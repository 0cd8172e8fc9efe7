"""Derivatives at degenerate points follow torch's conventions (issue 18, item 3), and
results that would drop a derivative silently say so (item 6).

References are closed forms and finite differences; every case is taken in forward
and reverse mode, and to second order where the issue names one.
"""

import math
import warnings

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp
from dualad.gradcheck import gradcheck


def _fwd(f, x, t=1.0):
    """(value, JVP) of ``f`` at ``x`` along ``t`` (forward mode)."""
    x = np.asarray(x)
    with da.dual_level():
        xd = da.make_dual(da.tensor(x), da.tensor(np.broadcast_to(t, x.shape).astype(x.dtype)))
        p, tan = da.unpack_dual(f(xd))
    return p.numpy(), None if tan is None else tan.numpy()


def _rev(f, x):
    """The gradient of ``sum(f(x))`` at ``x`` (reverse mode)."""
    xt = da.tensor(x, requires_grad=True)
    (g,) = da.grad(dnp.sum(f(xt)), xt)
    return g.numpy()


# -- x ** 0 ------------------------------------------------------------------------------


@pytest.mark.parametrize("c", [0.0, 0])
def test_every_derivative_of_x_to_the_zero_is_zero(c):
    # x ** 0 == 1 everywhere: its first and second derivatives are 0 (torch: zeros), not
    # NaN at x = 0
    for x0 in (0.0, 2.0, -1.5):
        _x_to_the_zero(x0, c)


def _x_to_the_zero(x0, c):
    f = lambda x: x ** c  # noqa: E731
    assert float(F.grad(f)(x0)) == 0.0
    assert float(F.grad(F.grad(f))(x0)) == 0.0  # reverse over reverse
    h = F.jacfwd(F.jacrev(f))(np.array([x0]))  # forward over reverse
    np.testing.assert_array_equal(h, np.zeros((1, 1, 1)))
    with da.dual_level():  # forward over forward (nested levels)
        x = da.make_dual(da.tensor(x0), da.tensor(1.0))
        with da.dual_level():
            y = da.make_dual(x, da.tensor(1.0))
            inner = da.unpack_dual(y ** c).tangent
        outer = None if inner is None else da.unpack_dual(inner).tangent
    for t in (inner, outer):
        assert t is None or float(t.detach()) == 0.0


def test_a_zero_array_exponent_has_zero_base_derivatives_and_the_right_mixed_one():
    # b == 0 as an array: d/da a**b = 0 at every a, to second order (0 at a = 0 too, not
    # 0 * inf), while d2/(da db) at b = 0 is 1/a (closed form), where a > 0
    a0 = np.array([0.0, 1.5, -2.0, 0.7])
    b = np.zeros(4)
    g = lambda a: dnp.sum(a ** b)  # noqa: E731
    np.testing.assert_array_equal(F.grad(g)(a0), np.zeros(4))
    np.testing.assert_array_equal(F.hessian(g, da.tensor(a0)).numpy(), np.zeros((4, 4)))
    pos = a0[a0 > 0]
    a, e = da.tensor(pos, requires_grad=True), da.tensor(np.zeros(pos.size), requires_grad=True)
    (ga,) = da.grad(dnp.sum(a ** e), a, create_graph=True)
    (mixed,) = da.grad(dnp.sum(ga), e)  # elementwise: the diagonal of d2/(da db)
    np.testing.assert_allclose(mixed.numpy(), 1 / pos, rtol=1e-12)


# -- 0 ** b -------------------------------------------------------------------------------


def _zero_base(kind):
    return {"python": 0.0, "tensor": da.tensor(np.zeros(3)),
            "int": 0}[kind]


@pytest.mark.parametrize("kind", ["python", "tensor", "int"])
def test_zero_to_a_negative_power_has_derivative_minus_inf_in_the_exponent(kind):
    # d/db 0 ** b = log(0) * 0 ** b = -inf * inf at b < 0 (torch: -inf), not a masked 0;
    # 0 at b >= 0, where 0 ** b is constant (0, or 1 at b == 0: torch's 0)
    a = _zero_base(kind)
    b0 = np.array([-1.0, 0.0, 2.0])
    want = np.array([-np.inf, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the primal's own 1 / 0
        _, t = _fwd(lambda b: a ** b, b0)
        assert _same(t, want), t
        assert _same(_rev(lambda b: a ** b, b0), want)
        b = da.tensor(b0, requires_grad=True)
        (g,) = da.grad(dnp.sum(a ** b), b, create_graph=True)  # the traced general way
        assert _same(g.detach().numpy(), want)


def _second_derivatives_of(f, b0):
    """d2/db2 f at b0 (elementwise f) in the four compositions of two modes."""
    one = da.tensor(np.ones_like(b0))
    out = {}
    b = da.tensor(b0, requires_grad=True)
    (g,) = da.grad(dnp.sum(f(b)), b, create_graph=True)
    out["reverse-over-reverse"] = da.grad(dnp.sum(g), b)[0]
    b = da.tensor(b0, requires_grad=True)
    with da.dual_level():
        t = da.unpack_dual(f(da.make_dual(b, one))).tangent
    out["reverse-over-forward"] = da.grad(dnp.sum(t), b)[0]
    with da.dual_level():
        b = da.make_dual(da.tensor(b0, requires_grad=True), one)
        (g,) = da.grad(dnp.sum(f(b)), b)
        out["forward-over-reverse"] = da.unpack_dual(g).tangent
    with da.dual_level():
        b = da.make_dual(da.tensor(b0), one)
        with da.dual_level():
            t = da.unpack_dual(f(da.make_dual(b, one))).tangent
        out["forward-over-forward"] = da.unpack_dual(t).tangent
    return {k: v.detach().numpy() for k, v in out.items()}


@pytest.mark.parametrize("kind", ["python", "tensor", "int"])
def test_every_higher_derivative_of_zero_to_a_positive_power_is_zero(kind):
    # 0 ** b == 0 for every b > 0: each derivative in b is 0 in every mode (torch's
    # reverse-over-reverse and reverse-over-forward give NaN: log(0) times a masked 0)
    a = _zero_base(kind)
    f = lambda b: a ** b  # noqa: E731
    b0 = np.array([0.5, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no warning from inside dualad
        for mode, h in _second_derivatives_of(f, b0).items():
            np.testing.assert_array_equal(h, np.zeros(3), err_msg=mode)
        third = F.grad(F.grad(F.grad(lambda b: f(b) if kind != "tensor" else f(b)[0])))
        for b in b0:
            assert float(third(da.tensor(b))) == 0.0
        # a positive base keeps its closed form: d2/db2 a ** b = log(a)^2 a ** b
        c = np.array([0.5, 2.0, 3.0])
        for mode, h in _second_derivatives_of(lambda b: c ** b, b0).items():
            np.testing.assert_allclose(h, np.log(c) ** 2 * c ** b0, rtol=1e-13, err_msg=mode)


# -- a real negative base of a complex power --------------------------------------------


@pytest.mark.parametrize("base", [-1.0, -2.5])
def test_a_negative_real_base_of_a_complex_power_has_the_complex_logs_derivative(base):
    # d/dz a**z = a**z * log(a) with the complex log (torch: finite), not NaN
    z0 = np.array([0.5 + 0.3j, -1.2 + 0.1j, 2.0 + 0j])
    y = base ** z0
    want = y * np.log(complex(base))
    one = np.ones(3, complex)
    _, t = _fwd(lambda z: base ** z, z0, one)
    np.testing.assert_allclose(t, want, rtol=1e-13)
    # reverse: the conjugate Wirtinger gradient of Re(y) is conj(dy/dz)
    np.testing.assert_allclose(_rev(lambda z: dnp.real(base ** z), z0), np.conj(want),
                               rtol=1e-13)
    a = da.tensor(np.full(3, base))  # a Tensor base
    _, t = _fwd(lambda z: a ** z, z0, one)
    np.testing.assert_allclose(t, want, rtol=1e-13)
    with da.dual_level():  # two levels: the formula on Tensors (and d2/dz2 = y log(a)^2)
        z = da.make_dual(da.tensor(z0), da.tensor(one))
        with da.dual_level():
            t = da.unpack_dual(base ** da.make_dual(z, da.tensor(one))).tangent
        p, t2 = da.unpack_dual(t)
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-13)
    np.testing.assert_allclose(t2.numpy(), want * np.log(complex(base)), rtol=1e-13)
    # finite differences along the real axis
    h = 1e-6
    fd = (base ** (z0 + h) - base ** (z0 - h)) / (2 * h)
    np.testing.assert_allclose(want, fd, rtol=1e-7)


# -- std over a constant slice -----------------------------------------------------------


def test_std_over_an_axis_of_length_one_has_zero_derivatives():
    # std of one element is 0 whatever it is: gradient 0 (torch: 0), not NaN
    x0 = np.array([[1.0, -2.0, 0.5]])
    np.testing.assert_array_equal(_rev(lambda x: dnp.std(x, axis=0), x0), np.zeros_like(x0))
    _, t = _fwd(lambda x: dnp.std(x, axis=0), x0, np.ones_like(x0))
    np.testing.assert_array_equal(t, np.zeros(3))
    np.testing.assert_array_equal(_rev(dnp.std, np.array([4.0])), [0.0])  # (all axes)
    h = F.hessian(lambda x: dnp.sum(dnp.std(x, axis=0)), da.tensor(x0))
    np.testing.assert_array_equal(h.numpy(), np.zeros((1, 3, 1, 3)))
    # a constant slice of several elements: the same convention (torch masks where std
    # is 0), while the other slices keep their finite-difference derivative
    x1 = np.array([[2.0, 2.0, 2.0], [1.0, -0.5, 3.0]])
    g = _rev(lambda x: dnp.std(x, axis=1), x1)
    np.testing.assert_array_equal(g[0], np.zeros(3))
    fd = np.array([(np.std(x1[1] + d) - np.std(x1[1] - d)) / 2e-7
                   for d in np.eye(3) * 1e-7])
    np.testing.assert_allclose(g[1], fd, rtol=1e-6)


# -- max / min with NaN ------------------------------------------------------------------


@pytest.mark.parametrize("fn", [dnp.max, dnp.min, dnp.amax, dnp.amin])
def test_max_of_nans_spreads_the_derivative_over_the_nans(fn):
    # torch's max()/min(): the gradient goes evenly to the elements equal to the result,
    # NaN counting as equal to a NaN result
    x = np.full(3, np.nan)
    np.testing.assert_array_equal(_rev(fn, x), np.full(3, 1 / 3))
    t = np.array([1.0, 2.0, 6.0])
    _, jvp = _fwd(fn, x, t)
    assert jvp == pytest.approx(3.0)
    some = np.array([[np.nan, 1.0, np.nan], [1.0, 3.0, 3.0]])  # a NaN row, a tie row
    g = _rev(lambda v: fn(v, axis=1), some)
    want_tie = [0.0, 0.5, 0.5] if fn in (dnp.max, dnp.amax) else [1.0, 0.0, 0.0]
    np.testing.assert_array_equal(g, np.array([[0.5, 0.0, 0.5], want_tie]))


# -- singular points: torch's inf / nan, and no NumPy warning from dualad ----------------

# (function, point, derivative there): torch's values (the formulas' IEEE results)
SINGULAR = [
    (dnp.sqrt, 0.0, np.inf),
    (dnp.arcsin, 1.0, np.inf),
    (dnp.arcsin, -1.0, np.inf),
    (dnp.arccos, 1.0, -np.inf),
    (dnp.cbrt, 0.0, np.inf),
    (dnp.arccosh, 1.0, np.inf),
    (lambda x: x ** 0.5, 0.0, np.inf),
    (lambda x: dnp.hypot(x, 0.0), 0.0, np.nan),
    (lambda x: 0.0 ** x, 1.5, 0.0),  # d/db of 0 ** b: log(0) masked, quietly
    (lambda x: dnp.sqrt(x) * 0.0, 0.0, np.nan),  # inf * 0 in the product rule
]
_IDS = ["sqrt", "arcsin", "arcsin-", "arccos", "cbrt", "arccosh", "pow", "hypot", "0**b",
        "0*sqrt"]


def _same(got, want):
    got = np.asarray(got, float)
    return np.all((got == want) | (np.isnan(got) & np.isnan(want)))


@pytest.mark.parametrize("size", [1, 3])
@pytest.mark.parametrize(("f", "x0", "d"), SINGULAR, ids=_IDS)
def test_derivatives_at_singular_points_are_torchs_and_warn_nothing(f, x0, d, size):
    x = np.full(size, x0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning from inside dualad fails the test
        _, t = _fwd(f, x, np.ones(size))  # forward: the hot path
        assert _same(t, d), t
        assert _same(_rev(f, x), d)  # reverse: the lane (size 1: on NumPy scalars)
        with da.dual_level():  # two levels: the general rules on Tensors
            xx = da.make_dual(da.tensor(x), da.tensor(np.ones(size)))
            with da.dual_level():
                y = f(da.make_dual(xx, da.tensor(np.ones(size))))
                inner = da.unpack_dual(y).tangent
            assert _same(da.unpack_dual(inner).primal.numpy(), d)
        xt = da.tensor(x, requires_grad=True)  # create_graph: the traced general way
        (g,) = da.grad(dnp.sum(f(xt)), xt, create_graph=True)
        assert _same(g.detach().numpy(), d)
        _, jt = _fwd(f, np.stack([x, x]), np.ones((2, size)))  # a batched Jacobian's path
        assert _same(F.jacobian(lambda v: f(v), da.tensor(x), strategy="forward-mode",
                                vectorize=True).numpy().diagonal(), d)
        del jt


@pytest.mark.parametrize(("f", "x0", "d"), SINGULAR[:3], ids=_IDS[:3])
def test_the_users_error_state_does_not_reach_the_derivative(f, x0, d):
    # np.errstate(all="raise") is for the user's values: the derivative's inf is not an
    # error of theirs (the primal there is finite)
    with np.errstate(all="raise"):
        _, t = _fwd(f, np.array([x0]), np.ones(1))
        assert _same(t, d)
        assert _same(_rev(f, np.array([x0])), d)
    # while the primal is the user's NumPy computation: its warning (or error) is NumPy's,
    # in forward and plain mode alike (the quiet is the derivative's only)
    for make in (lambda v: da.tensor(v), lambda v: da.tensor(v, requires_grad=True)):
        with pytest.warns(RuntimeWarning, match="divide by zero"):
            dnp.log(make(np.zeros(2)))
    with da.dual_level(), pytest.warns(RuntimeWarning, match="divide by zero"):
        dnp.log(da.make_dual(da.tensor(np.zeros(2)), da.tensor(np.ones(2))))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        dnp.log(da.tensor(0.0))


# -- item 6: silent results --------------------------------------------------------------


@pytest.mark.parametrize("out", [lambda x: float(dnp.sum(x.detach())),
                                 lambda x: np.sin(x.detach().numpy()),
                                 lambda x: (dnp.sin(x), 1.5)])
def test_gradcheck_of_a_function_returning_a_float_raises(out):
    x = da.tensor([0.3, 0.7], requires_grad=True)
    with pytest.raises(TypeError, match=r"returned a (float|ndarray) as output \d, not a Tensor"):
        gradcheck(out, (x,))


def test_float_of_a_tracked_tensor_warns_that_the_derivative_is_dropped():
    t = da.tensor(0.5, requires_grad=True)
    with pytest.warns(UserWarning, match=r"float\(t\) on a tensor that requires grad drops "
                                         r"its derivative.*dnp.sin\(t\)"):
        assert math.sin(t) == math.sin(0.5)
    with da.dual_level():
        d = da.make_dual(da.tensor(0.5), da.tensor(1.0))
        with pytest.warns(UserWarning, match="carries a tangent"):
            float(d)
    with pytest.warns(UserWarning, match=r"dualad.tensor\(t\) on a tensor that requires grad"
                                         r".*t.copy\(\)"):
        c = da.tensor(t)
    assert not c.requires_grad
    with warnings.catch_warnings():  # nothing dropped: nothing said
        warnings.simplefilter("error")
        assert float(t.detach()) == 0.5 and float(da.tensor(0.5)) == 0.5
        da.tensor(t.detach())
        t.item()
