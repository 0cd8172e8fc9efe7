"""The Taylor-coefficient rules of ``dualad.rules.taylor_products`` and
``dualad.rules.taylor_special`` against independent references: 3 nested dual levels (a
different mode), exact polynomial products (NumPy's ``polymul``) to order 12 with zero
factors, mpmath at 40 digits to order 10, and the errors of a series in a shape parameter.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import dualad.scipy.special  # noqa: F401  (makes the primitives the special rules use)
from dualad.rules import linear as Lin
from dualad.rules import products as P
from dualad.rules import reductions as R
from dualad.rules import taylor as T
from dualad.rules import taylor_products as TP
from dualad.rules import taylor_special as TS

from _support.taylor_reference import mp_series, nested_series

mp.mp.dps = 40
ORDER = 3


def _close(got, want, rtol=1e-12):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=0, atol=rtol * (1 + np.max(np.abs(w))),
                                   err_msg=f"coefficient {k}")


def _series(rng, shape, order=ORDER, cplx=False, x0=None):
    out = [rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if cplx else 0)
           for _ in range(order + 1)]
    if x0 is not None:
        out[0] = x0 + 0.1 * rng.standard_normal(shape)
    return out


# -- products and choosing reductions ----------------------------------------------------------

PRODUCT_CASES = [
    ("prod", {"axis": (1,), "keepdims": False}),
    ("prod", {"axis": (0, 2), "keepdims": True}),
    ("prod", {"axis": (), "keepdims": False}),
    ("prod", {"axis": (0, 1, 2), "keepdims": False}),
    ("cumprod", {"axis": 0}),
    ("cumprod", {"axis": 1}),
    ("cumprod", {"axis": 2}),
    ("amax", {"axis": (1,), "keepdims": False}),
    ("amin", {"axis": (0, 2), "keepdims": True}),
]
PRODUCT_PRIMS = {"prod": P.prod_p, "cumprod": P.cumprod_p, "amax": R.amax, "amin": R.amin}


def test_every_product_rule_is_checked():
    assert {n for n, _ in PRODUCT_CASES} | {"where"} == set(TP.PRODUCTS_TAYLOR_RULES)
    assert set(PRODUCT_PRIMS) | {"where"} == set(TP.PRODUCTS_TAYLOR_RULES)


def test_where_against_nested_dual_levels():
    rng = np.random.default_rng(0)
    a, b = _series(rng, (3, 4)), _series(rng, (4,), order=1)  # (b: shorter, broadcast)
    cond = [a[0] > 0]
    got = TP.where(cond, a, b)
    _close(got, nested_series(Lin.where, [cond, a, b + [np.zeros(4)] * 2], ORDER))


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize(("name", "params"), PRODUCT_CASES)
def test_products_against_nested_dual_levels(name, params, cplx):
    if cplx and name in ("amax", "amin"):
        pytest.skip("amax/amin take real arrays")
    rng = np.random.default_rng(len(name))
    x = _series(rng, (3, 5, 4), cplx=cplx)
    x[0][0, 1, :] = 0  # (zero factors: exact, no division)
    x[0][1, 2, 3] = 0
    x[0][2, 0, 1] = x[0][2, 3, 1] = 4.0  # (a tie for amax along axis 1)
    got = TP.PRODUCTS_TAYLOR_RULES[name](x, **params)
    _close(got, nested_series(PRODUCT_PRIMS[name], [x], ORDER, **params))


@pytest.mark.parametrize("n", [1, 2, 7, 16])
def test_prod_and_cumprod_are_products_of_polynomials(n):
    # each factor a polynomial of degree 2, some vanishing at t = 0: the exact product's
    # coefficients (NumPy's polymul on the factors) to order 12
    rng = np.random.default_rng(n)
    factors = rng.standard_normal((n, 3))
    factors[::3, 0] = 0
    K = 12
    x = [factors[:, k] if k < 3 else np.zeros(n) for k in range(K + 1)]
    acc, running = np.array([1.0]), []
    for f in factors:
        acc = np.polynomial.polynomial.polymul(acc, f)
        running.append(np.pad(acc, (0, K + 1))[: K + 1])
    _close(TP.prod(x, axis=(0,), keepdims=False), list(running[-1]))
    _close(TP.cumprod(x, axis=0), [np.array(c) for c in np.array(running).T])


# -- scipy.special ----------------------------------------------------------------------------

SPECIAL_CASES = {
    "gammaln": ([2.3], {}), "digamma": ([1.7], {}), "polygamma": ([1.7], {"n": 2}),
    "gamma": ([-0.5], {}), "betaln": ([1.5, 2.5], {}), "beta": ([1.5, 2.5], {}),
    "ndtr": ([0.3], {}), "log_ndtr": ([-30.0], {}), "xlog1py": ([0.5, 0.3], {}),
    "gammainc": ([2.0, 1.3], {}), "gammaincc": ([2.0, 1.3], {}),
    "betainc": ([2.0, 3.0, 0.3], {}), "betaincc": ([2.0, 3.0, 0.3], {}),
    "stdtr": ([3.0, 0.4], {}),
}
LIMIT_ONLY = {"gammainc", "gammaincc", "betainc", "betaincc", "stdtr"}


def _rule(name):
    """The Taylor rule Taylor mode uses for ``name``: the table's, or the one made from the
    primitive's derivative formula (``formula_rule``: gammaln, digamma, gamma, beta, ...)."""
    rule = T.rule_for(TS._prim(name))
    assert rule is not None, f"{name} has no Taylor rule"
    return rule


def test_every_special_rule_is_checked():
    assert set(TS.SPECIAL_TAYLOR_RULES) <= set(SPECIAL_CASES)


def _special_args(name, rng):
    x0s, _ = SPECIAL_CASES[name]
    args = [_series(rng, (4,), x0=x0) for x0 in x0s]
    if name in LIMIT_ONLY:  # (constants in the shape parameters)
        args = [a[:1] for a in args[:-1]] + args[-1:]
    return args


@pytest.mark.parametrize("name", sorted(SPECIAL_CASES))
def test_special_against_nested_dual_levels(name):
    args = _special_args(name, np.random.default_rng(len(name)))
    params = SPECIAL_CASES[name][1]
    got = _rule(name)(*args, **params)
    _close(got, nested_series(TS._prim(name), args, ORDER, **params))


def _ncdf(x):
    return mp.ncdf(x)


MP_SPECIAL = {
    "gammaln": lambda x: mp.loggamma(x), "digamma": mp.digamma,
    "polygamma": lambda x: mp.psi(2, x), "gamma": mp.gamma,
    "betaln": lambda a, b: mp.log(abs(mp.beta(a, b))), "beta": mp.beta,
    "ndtr": _ncdf, "log_ndtr": lambda x: mp.log(_ncdf(x)),
    "xlog1py": lambda a, b: a * mp.log1p(b),
    "gammainc": lambda a, x: mp.gammainc(a, 0, x, regularized=True),
    "gammaincc": lambda a, x: mp.gammainc(a, x, mp.inf, regularized=True),
    "betainc": lambda a, b, x: mp.betainc(a, b, 0, x, regularized=True),
    "betaincc": lambda a, b, x: mp.betainc(a, b, x, 1, regularized=True),
    "stdtr": lambda df, t: mp.quad(
        lambda s: (1 + s * s / df) ** (-(df + 1) / 2), [-mp.inf, 0, t])
    * mp.gamma((df + 1) / 2) / (mp.sqrt(df * mp.pi) * mp.gamma(df / 2)),
}


@pytest.mark.parametrize("name", sorted(set(MP_SPECIAL) - {"stdtr"}) + ["stdtr"])
def test_special_to_order_10_against_mpmath(name):
    K = 10
    rng = np.random.default_rng(3)
    x0s, params = SPECIAL_CASES[name]
    if name == "log_ndtr":  # (the tail, x_0 = -30, at order 3: test_log_ndtr_far_in_...)
        x0s = [-3.0]
    args = [[np.array(x0)] + [np.array(0.3 * c) for c in rng.standard_normal(K)] for x0 in x0s]
    if name in LIMIT_ONLY:
        args = [a[:1] for a in args[:-1]] + args[-1:]
    got = _rule(name)(*args, **params)

    def path(t, a):
        return sum((mp.mpf(float(c)) * t ** k for k, c in enumerate(a)), mp.mpf(0))

    want = mp_series(lambda t: MP_SPECIAL[name](*(path(t, a) for a in args)), K, ())
    _close(got, want, rtol=1e-8 if name == "stdtr" else 1e-11)  # (stdtr's: a quadrature)


def test_log_ndtr_far_in_the_left_tail():
    # Phi(-40) underflows in float64; its log and the log's coefficients do not
    x = [np.array(-40.0), np.array(1.0), np.array(0.5)]
    want = mp_series(lambda t: mp.log(mp.ncdf(-40 + t + 0.5 * t * t)), 2, ())
    # (the derivative's series exp(-x^2/2 - y) cancels terms of size x_0^2 = 1600 at each
    # order: 1e-10 at order 2)
    _close(_rule("log_ndtr")(x), want, rtol=1e-10)
    assert all(np.isfinite(c) for c in _rule("log_ndtr")(x))
    assert math.isfinite(float(want[1]))


@pytest.mark.parametrize("name", sorted(LIMIT_ONLY))
def test_a_series_in_a_shape_parameter_raises(name):
    args = _special_args(name, np.random.default_rng(0))
    args[0] = args[0] + [np.ones(4)]  # (a series in the first shape parameter)
    with pytest.raises(NotImplementedError, match="no closed form"):
        _rule(name)(*args)


@pytest.mark.parametrize("name", sorted(SPECIAL_CASES) + sorted(TP.PRODUCTS_TAYLOR_RULES))
def test_single_precision_stays_single(name):
    rng = np.random.default_rng(0)
    if name in SPECIAL_CASES:
        args, params = _special_args(name, rng), SPECIAL_CASES[name][1]
        rule = _rule(name)
    elif name == "where":
        a = _series(rng, (3,))
        args, params, rule = [[a[0] > 0], a, a], {}, TP.where
    else:
        args = [_series(rng, (3, 5, 4))]
        params = dict(next(p for n, p in PRODUCT_CASES if n == name))
        rule = TP.PRODUCTS_TAYLOR_RULES[name]
    args = [[c.astype(np.float32) if c.dtype.kind == "f" else c for c in s] for s in args]
    kinds = {np.asarray(c).dtype for c in rule(*args, **params)}
    assert kinds == {np.dtype(np.float32)}, kinds
