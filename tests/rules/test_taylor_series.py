"""The Taylor-coefficient rules of ``dualad.rules.taylor`` against independent references.

- mpmath's ``taylor`` (50 digits) of the composed function ``f(x(t))`` at order 30, for every
  rule, at real points inside each domain and at complex points where the function is
  holomorphic;
- SymPy's series to order 8 for every entry of the elementwise formula table that has a
  direct rule;
- the generic rule (``from_derivative``), fed with the table's derivative formula evaluated on
  series by the direct rules, against the direct rule;
- Tensors as coefficients against arrays, a gradient through a rule by reverse mode against
  finite differences, arrays of another kind (Strict, Dask) staying of that kind.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

import dualad as da
import dualad.scipy.special  # noqa: F401  (its primitives: erf, expit, ... have rules)
from dualad.rules import elementwise as E
from dualad.rules import taylor as T

from _support.array_kinds import Strict

mp.mp.dps = 50
ORDER = 30

# -- references ------------------------------------------------------------------------------


def _trunc(x: Any) -> Any:
    return mp.floor(x) if x >= 0 else mp.ceil(x)


def _rem(a: Any, b: Any) -> Any:
    return a - mp.floor(a / b) * b


def _fmod(a: Any, b: Any) -> Any:
    return a - _trunc(a / b) * b


def _clip(x: Any, lo: Any, hi: Any) -> Any:
    return min(max(x, lo), hi)


def _lae(a: Any, b: Any) -> Any:
    return mp.log(mp.exp(a) + mp.exp(b))


# name: (mpmath function, real points (one tuple of primals each), complex points)
MP: dict[str, tuple[Any, list[tuple[Any, ...]], list[tuple[Any, ...]]]] = {
    "negative": (lambda x: -x, [(0.3,)], [(0.4 + 0.3j,)]),
    "positive": (lambda x: x, [(0.3,)], [(0.4 + 0.3j,)]),
    "exp": (mp.exp, [(0.3,), (-1.2,)], [(0.4 + 0.3j,)]),
    "exp2": (lambda x: mp.power(2, x), [(0.3,)], [(0.4 + 0.3j,)]),
    "expm1": (mp.expm1, [(0.3,), (-1e-3,)], [(0.4 + 0.3j,)]),
    "log": (mp.log, [(1.3,), (0.6,)], [(0.4 + 0.3j,), (-0.8 + 0.5j,)]),
    "log2": (lambda x: mp.log(x, 2), [(1.3,)], [(0.4 + 0.3j,)]),
    "log10": (mp.log10, [(1.3,)], [(0.4 + 0.3j,)]),
    "log1p": (mp.log1p, [(0.3,), (-0.5,)], [(0.4 + 0.3j,)]),
    "sqrt": (mp.sqrt, [(1.3,)], [(0.4 + 0.3j,), (-0.8 + 0.5j,)]),
    "cbrt": (lambda x: mp.cbrt(x) if x >= 0 else -mp.cbrt(-x), [(1.3,), (-0.7,)], []),
    "square": (lambda x: x * x, [(0.3,)], [(0.4 + 0.3j,)]),
    "reciprocal": (lambda x: 1 / x, [(1.3,), (-0.9,)], [(0.4 + 0.3j,)]),
    "sin": (mp.sin, [(0.3,)], [(0.4 + 0.3j,)]),
    "cos": (mp.cos, [(0.3,)], [(0.4 + 0.3j,)]),
    "tan": (mp.tan, [(0.3,), (-1.1,)], [(0.4 + 0.3j,)]),
    "arcsin": (mp.asin, [(0.3,)], [(0.4 + 0.3j,)]),
    "arccos": (mp.acos, [(0.3,)], [(0.4 + 0.3j,)]),
    "arctan": (mp.atan, [(0.3,), (-2.0,)], [(0.4 + 0.3j,)]),
    "sinh": (mp.sinh, [(0.3,)], [(0.4 + 0.3j,)]),
    "cosh": (mp.cosh, [(0.3,)], [(0.4 + 0.3j,)]),
    "tanh": (mp.tanh, [(0.3,)], [(0.4 + 0.3j,)]),
    "arcsinh": (mp.asinh, [(0.3,), (-1.5,)], [(0.4 + 0.3j,)]),
    "arccosh": (mp.acosh, [(1.7,)], [(0.4 + 0.3j,), (-1.5 + 0.5j,)]),
    "arctanh": (mp.atanh, [(0.4,)], [(0.4 + 0.3j,)]),
    "sinc": (lambda x: mp.sinc(mp.pi * x), [(2.3,), (0.0,), (0.3,), (-1.9,)], [(0.4 + 0.3j,)]),
    "deg2rad": (lambda x: x * mp.pi / 180, [(0.3,)], []),
    "rad2deg": (lambda x: x * 180 / mp.pi, [(0.3,)], []),
    "conj": (mp.conj, [(0.3,)], [(0.4 + 0.3j,)]),
    "real": (mp.re, [(0.3,)], [(0.4 + 0.3j,)]),
    "imag": (mp.im, [(0.3,)], [(0.4 + 0.3j,)]),
    "abs": (abs, [(0.3,), (-0.7,)], [(0.4 + 0.3j,)]),
    "sign": (mp.sign, [(0.3,), (-0.7,)], [(0.4 + 0.3j,)]),
    "angle": (mp.arg, [(0.3,), (-0.7,)], [(0.4 + 0.3j,), (-0.8 - 0.5j,)]),
    "fabs": (mp.fabs, [(0.3,), (-0.7,)], []),
    "floor": (mp.floor, [(0.3,), (-0.7,)], []),
    "ceil": (mp.ceil, [(0.3,)], []),
    "trunc": (_trunc, [(-0.7,)], []),
    "rint": (mp.nint, [(1.3,)], []),
    "erf": (mp.erf, [(0.3,), (-1.4,)], []),
    "erfinv": (mp.erfinv, [(0.3,), (-0.8,)], []),
    "erfcinv": (lambda x: mp.erfinv(1 - x), [(0.3,), (1.6,)], []),
    "erfc": (mp.erfc, [(0.3,)], []),
    "expit": (lambda x: 1 / (1 + mp.exp(-x)), [(0.3,), (-2.0,)], []),
    "logit": (lambda x: mp.log(x / (1 - x)), [(0.3,)], []),
    "add": (lambda a, b: a + b, [(0.7, 1.3)], [(0.4 + 0.3j, 0.2 - 1j)]),
    "subtract": (lambda a, b: a - b, [(0.7, 1.3)], [(0.4 + 0.3j, 0.2 - 1j)]),
    "multiply": (lambda a, b: a * b, [(0.7, 1.3)], [(0.4 + 0.3j, 0.2 - 1j)]),
    "divide": (lambda a, b: a / b, [(0.7, 1.3)], [(0.4 + 0.3j, 0.2 - 1j)]),
    "power": (mp.power, [(1.3, 0.7), (0.6, -2.5)], [(0.4 + 0.3j, 0.2 - 1j)]),
    "float_power": (mp.power, [(1.3, 0.7)], []),
    "maximum": (max, [(0.7, 1.3), (1.7, 1.3)], []),
    "minimum": (min, [(0.7, 1.3), (1.7, 1.3)], []),
    "fmax": (max, [(0.7, 1.3)], []),
    "fmin": (min, [(0.7, 1.3)], []),
    "copysign": (lambda a, b: abs(a) * mp.sign(b), [(0.7, -1.3), (-0.7, 1.3)], []),
    "hypot": (lambda a, b: mp.sqrt(a * a + b * b), [(0.7, -1.3)], []),
    "arctan2": (mp.atan2, [(0.7, -1.3), (-0.4, 0.9)], []),
    "logaddexp": (_lae, [(0.7, -1.3), (-0.4, 0.9)], []),
    "logaddexp2": (lambda a, b: mp.log(mp.power(2, a) + mp.power(2, b), 2), [(0.7, -1.3)], []),
    "remainder": (_rem, [(2.3, 0.7), (-2.3, 0.7)], []),
    "fmod": (_fmod, [(-2.3, 0.7)], []),
    "xlogy": (lambda a, b: a * mp.log(b), [(0.7, 1.3)], []),
    "clip": (_clip, [(0.3, -1.0, 1.0), (-1.3, -1.0, 1.0), (1.3, -1.0, 1.0)], []),
}


def test_every_rule_has_a_reference_and_every_formula_entry_a_rule():
    assert set(MP) == set(T.TAYLOR_RULES)
    formula_table = {**E.UNARY, **E.BINARY, **E.TERNARY}
    assert set(formula_table) <= set(T.TAYLOR_RULES)


def _series(rng: np.random.Generator, x0: Any, order: int, low: int = 3) -> list[np.ndarray]:
    """``x0`` and random coefficients up to ``low`` (zeros above): a polynomial input path,
    of the primal's kind (complex for a complex primal)."""
    def draw() -> Any:
        c = rng.uniform(-0.6, 0.6)
        return complex(c, rng.uniform(-0.6, 0.6)) if isinstance(x0, complex) else c

    return [np.asarray(x0)] + [np.asarray(draw() if k <= low else 0.0 * draw())
                               for k in range(1, order + 1)]


def _mp_reference(fn: Any, args: list[list[Any]], order: int) -> list[Any]:
    def path(t: Any) -> Any:
        return fn(*(_poly(a, t) for a in args))

    return [complex(c) for c in mp.taylor(path, 0, order)]


def _poly(a: list[Any], t: Any) -> Any:
    acc = mp.mpf(0)
    for c in reversed(a):
        c = complex(c)
        acc = acc * t + (mp.mpc(c.real, c.imag) if c.imag else mp.mpf(c.real))
    return acc


def _assert_series(got: list[Any], ref: list[Any], rtol: float = 1e-10,
                   atol: float = 1e-12) -> None:
    """Each coefficient to ``rtol`` of itself, or ``atol`` of the largest one before it
    (rounding in the recurrence is relative to the terms it sums)."""
    scale = 0.0
    for k, (g, r) in enumerate(zip(got, ref, strict=True)):
        scale = max(scale, abs(r))
        g = complex(np.asarray(g))
        assert abs(g - r) <= rtol * abs(r) + atol * max(scale, 1e-300), (k, g, r)


_CASES = [(name, x0, False) for name, (_, pts, _) in MP.items() for x0 in pts] + [
    (name, z0, True) for name, (_, _, cpts) in MP.items() for z0 in cpts]


@pytest.mark.parametrize(("name", "x0", "complex_"), _CASES,
                         ids=[f"{n}-{'c' if c else 'r'}{x}" for n, x, c in _CASES])
def test_order_30_against_mpmath(name, x0, complex_):
    rng = np.random.default_rng(sum(map(ord, name)) + len(x0))
    args = [_series(rng, a, ORDER) for a in x0]
    if name == "sinc" and x0 == (0.0,):
        args[0][1] = np.asarray(0.0)  # (a stationary input at the removable singularity)
    got = T.TAYLOR_RULES[name](*args)
    assert len(got) == ORDER + 1
    _assert_series(got, _mp_reference(MP[name][0], args, ORDER))


def test_a_constant_argument_is_a_series_of_one_coefficient():
    rng = np.random.default_rng(0)
    x = _series(rng, 1.3, ORDER)
    for r in (2.5, -1.5, 3, 0):
        got = T.power(x, [np.asarray(r)])
        _assert_series(got, _mp_reference(lambda a, r=r: mp.power(a, r), [x], ORDER))
    a = _series(rng, 0.7, 8)
    _assert_series(T.TAYLOR_RULES["add"](a, [np.asarray(2.0)]),
                   [complex(a[0]) + 2] + [complex(c) for c in a[1:]])
    _assert_series(T.divide([np.asarray(1.0)], a),
                   _mp_reference(lambda u: 1 / u, [a], 8))


def test_integer_powers_are_right_at_zero():
    # x(t) = t + t^2: x^3 = t^3 (1 + t)^3, the recurrence x y' = r x' y divides by x_0 = 0
    x = [np.asarray(0.0), np.asarray(1.0), np.asarray(1.0)] + [np.asarray(0.0)] * 5
    got = T.power(x, [3])
    np.testing.assert_array_equal(np.array(got, float), [0, 0, 0, 1, 3, 3, 1, 0])
    np.testing.assert_array_equal(np.array(T.square(x), float), [0, 0, 1, 2, 1, 0, 0, 0])
    got = T.power([np.asarray(-2.0), np.asarray(1.0)], [2])  # a negative base
    np.testing.assert_array_equal(np.array(got, float), [4, -4])


def test_a_series_exponent_with_no_higher_terms_is_the_constant_exponent():
    rng = np.random.default_rng(1)
    a = _series(rng, 1.3, ORDER)
    b = [np.asarray(0.7)] + [np.asarray(0.0)] * ORDER
    np.testing.assert_allclose(np.array(T.power(a, b), float),
                               np.array(T.power(a, [np.asarray(0.7)]), float), rtol=1e-12,
                               atol=1e-14)


def test_ties_of_the_piecewise_rules_are_those_of_the_first_order_rule():
    a = [np.asarray(1.0), np.asarray(2.0), np.asarray(1.0)]
    b = [np.asarray(1.0), np.asarray(-1.0), np.asarray(3.0)]
    # d maximum(a, b) = 0.5 (da + db) at a == b, as the formula table has it
    np.testing.assert_array_equal(np.array(T.TAYLOR_RULES["maximum"](a, b), float),
                                  [1.0, 0.5, 2.0])
    # clip at its bound: the slope of x is 1 there (x >= lo and x <= hi)
    lo, hi = [np.asarray(1.0), np.asarray(5.0)], [np.asarray(2.0), np.asarray(7.0)]
    np.testing.assert_array_equal(np.array(T.TAYLOR_RULES["clip"](a[:2], lo, hi), float),
                                  [1.0, 2.0])


def test_arrays_of_points_and_singular_points():
    x = [np.array([0.5, 1.0, 2.0]), np.array([1.0, -1.0, 0.5]), np.zeros(3)]
    got = T.log(x)
    for i in range(3):
        ref = _mp_reference(mp.log, [[c[i] for c in x]], 2)
        _assert_series([c[i] for c in got], ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        y = T.log([np.asarray(0.0), np.asarray(1.0)])
    assert np.isneginf(y[0]) and not np.isfinite(y[1])  # (as the first-order rule: inf)


# -- SymPy, order 8 ---------------------------------------------------------------------------

_x, _a, _b, _lo, _hi = sp.symbols("x a b lo hi", real=True)


def _floor(u: Any, lo: int = -4, hi: int = 4) -> Any:
    """``floor(u)`` on ``[lo, hi)`` as a sum of steps (SymPy differentiates those, not floor)."""
    return lo + sum(sp.Heaviside(u - n) for n in range(lo + 1, hi))


def _ceil(u: Any, lo: int = -4, hi: int = 4) -> Any:
    return -_floor(-u, -hi, -lo)


SYMPY: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "negative": (-_x, (sp.Rational(3, 10),)),
    "positive": (_x, (sp.Rational(3, 10),)),
    "exp": (sp.exp(_x), (sp.Rational(3, 10),)),
    "exp2": (2 ** _x, (sp.Rational(3, 10),)),
    "expm1": (sp.exp(_x) - 1, (sp.Rational(3, 10),)),
    "log": (sp.log(_x), (sp.Rational(13, 10),)),
    "log2": (sp.log(_x, 2), (sp.Rational(13, 10),)),
    "log10": (sp.log(_x, 10), (sp.Rational(13, 10),)),
    "log1p": (sp.log(1 + _x), (sp.Rational(3, 10),)),
    "sqrt": (sp.sqrt(_x), (sp.Rational(13, 10),)),
    "cbrt": (sp.cbrt(_x), (sp.Rational(13, 10),)),
    "square": (_x ** 2, (sp.Rational(3, 10),)),
    "reciprocal": (1 / _x, (sp.Rational(13, 10),)),
    "sin": (sp.sin(_x), (sp.Rational(3, 10),)),
    "cos": (sp.cos(_x), (sp.Rational(3, 10),)),
    "tan": (sp.tan(_x), (sp.Rational(3, 10),)),
    "arcsin": (sp.asin(_x), (sp.Rational(3, 10),)),
    "arccos": (sp.acos(_x), (sp.Rational(3, 10),)),
    "arctan": (sp.atan(_x), (sp.Rational(3, 10),)),
    "sinh": (sp.sinh(_x), (sp.Rational(3, 10),)),
    "cosh": (sp.cosh(_x), (sp.Rational(3, 10),)),
    "tanh": (sp.tanh(_x), (sp.Rational(3, 10),)),
    "arcsinh": (sp.asinh(_x), (sp.Rational(3, 10),)),
    "arccosh": (sp.acosh(_x), (sp.Rational(17, 10),)),
    "arctanh": (sp.atanh(_x), (sp.Rational(2, 5),)),
    "sinc": (sp.sin(sp.pi * _x) / (sp.pi * _x), (sp.Rational(3, 10),)),
    "deg2rad": (_x * sp.pi / 180, (sp.Rational(3, 10),)),
    "rad2deg": (_x * 180 / sp.pi, (sp.Rational(3, 10),)),
    "fabs": (sp.Abs(_x), (-sp.Rational(7, 10),)),
    "abs": (sp.Abs(_x), (-sp.Rational(7, 10),)),
    "sign": (sp.sign(_x), (-sp.Rational(7, 10),)),
    "angle": (sp.arg(_x), (-sp.Rational(7, 10),)),
    "conj": (sp.conjugate(_x), (sp.Rational(3, 10),)),
    "real": (sp.re(_x), (sp.Rational(3, 10),)),
    "imag": (sp.im(_x), (sp.Rational(3, 10),)),
    "floor": (_floor(_x), (sp.Rational(13, 10),)),
    "ceil": (_ceil(_x), (sp.Rational(13, 10),)),
    "trunc": (_ceil(_x), (-sp.Rational(13, 10),)),
    "rint": (_floor(_x + sp.Rational(1, 2)), (sp.Rational(13, 10),)),
    "erf": (sp.erf(_x), (sp.Rational(3, 10),)),
    "erfinv": (sp.erfinv(_x), (sp.Rational(3, 10),)),
    "erfcinv": (sp.erfinv(1 - _x), (sp.Rational(3, 10),)),
    "erfc": (sp.erfc(_x), (sp.Rational(3, 10),)),
    "expit": (1 / (1 + sp.exp(-_x)), (sp.Rational(3, 10),)),
    "logit": (sp.log(_x / (1 - _x)), (sp.Rational(3, 10),)),
    "add": (_a + _b, (sp.Rational(7, 10), sp.Rational(13, 10))),
    "subtract": (_a - _b, (sp.Rational(7, 10), sp.Rational(13, 10))),
    "multiply": (_a * _b, (sp.Rational(7, 10), sp.Rational(13, 10))),
    "divide": (_a / _b, (sp.Rational(7, 10), sp.Rational(13, 10))),
    "power": (_a ** _b, (sp.Rational(13, 10), sp.Rational(7, 10))),
    "float_power": (_a ** _b, (sp.Rational(13, 10), sp.Rational(7, 10))),
    "maximum": (sp.Max(_a, _b), (sp.Rational(7, 10), sp.Rational(13, 10))),
    "minimum": (sp.Min(_a, _b), (sp.Rational(7, 10), sp.Rational(13, 10))),
    "fmax": (sp.Max(_a, _b), (sp.Rational(17, 10), sp.Rational(13, 10))),
    "fmin": (sp.Min(_a, _b), (sp.Rational(17, 10), sp.Rational(13, 10))),
    "copysign": (sp.Abs(_a) * sp.sign(_b), (sp.Rational(7, 10), -sp.Rational(13, 10))),
    "hypot": (sp.sqrt(_a ** 2 + _b ** 2), (sp.Rational(7, 10), -sp.Rational(13, 10))),
    "arctan2": (sp.atan2(_a, _b), (sp.Rational(7, 10), -sp.Rational(13, 10))),
    "logaddexp": (sp.log(sp.exp(_a) + sp.exp(_b)), (sp.Rational(7, 10), -sp.Rational(13, 10))),
    "logaddexp2": (sp.log(2 ** _a + 2 ** _b, 2), (sp.Rational(7, 10), -sp.Rational(13, 10))),
    "remainder": (_a - _floor(_a / _b, 2, 5) * _b, (sp.Rational(23, 10), sp.Rational(7, 10))),
    "fmod": (_a - _ceil(_a / _b, -5, -2) * _b, (-sp.Rational(23, 10), sp.Rational(7, 10))),
    "xlogy": (_a * sp.log(_b), (sp.Rational(7, 10), sp.Rational(13, 10))),
    "clip": (_x + (_lo - _x) * sp.Heaviside(_lo - _x) + (_hi - _x) * sp.Heaviside(_x - _hi),
             (sp.Rational(3, 10), -1, 1)),
}
_SYMS = {1: (_x,), 2: (_a, _b), 3: (_x, _lo, _hi)}


def test_every_rule_has_a_sympy_reference():
    assert set(SYMPY) == set(T.TAYLOR_RULES)


def _sympy_taylor(expr: Any, syms: tuple[Any, ...], x0: tuple[Any, ...], order: int) -> dict:
    """The Taylor coefficients of ``expr`` at ``x0`` in all its arguments, by SymPy's partial
    derivatives: ``{alpha: d^alpha expr / alpha!}`` for ``|alpha| <= order``."""
    point = dict(zip(syms, x0, strict=True))
    out: dict[tuple[int, ...], complex] = {}

    def walk(e: Any, alpha: tuple[int, ...], i: int) -> None:
        if i == len(syms):
            den = math.prod(math.factorial(n) for n in alpha)
            out[alpha] = complex(sp.N(e.subs(point), 30)) / den
            return
        for n in range(order - sum(alpha) + 1):
            walk(e, alpha + (n,), i + 1)
            e = sp.diff(e, syms[i])

    walk(expr, (), 0)
    return out


def _compose(coefs: dict, paths: list[list[float]], order: int) -> list[complex]:
    """``sum_alpha c_alpha prod_i h_i(t)^alpha_i`` to ``t^order``, ``h_i = x_i(t) - x_i(0)``."""
    h = [np.array([0.0] + p[1:] + [0.0] * (order + 1 - len(p)), complex)[: order + 1]
         for p in paths]
    out = np.zeros(order + 1, complex)
    for alpha, c in coefs.items():
        term = np.zeros(order + 1, complex)
        term[0] = 1.0
        for hi, n in zip(h, alpha, strict=True):
            for _ in range(n):
                term = np.convolve(term, hi)[: order + 1]
        out += c * term
    return list(out)


@pytest.mark.parametrize("name", sorted(SYMPY))
def test_order_8_against_sympy(name):
    expr, x0 = SYMPY[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    paths = [[float(p)] + list(rng.uniform(-0.9, 0.9, 2)) for p in x0]
    ref = _compose(_sympy_taylor(expr, _SYMS[len(x0)], x0, 8), paths, 8)
    args = [[np.asarray(c) for c in p] + [np.asarray(0.0)] * 6 for p in paths]
    _assert_series(T.TAYLOR_RULES[name](*args), ref, rtol=1e-11, atol=1e-13)


# -- the generic rule --------------------------------------------------------------------------


class _Jet:
    """A series under the table's formula syntax: operators and functions by the direct rules."""

    def __init__(self, cs: list[Any]) -> None:
        self.cs = cs

    @staticmethod
    def of(v: Any) -> _Jet:
        return v if isinstance(v, _Jet) else _Jet([np.asarray(v)])

    def _bin(self, name: str, other: Any, swap: bool = False) -> _Jet:
        a, b = (_Jet.of(other), self) if swap else (self, _Jet.of(other))
        return _Jet(T.TAYLOR_RULES[name](a.cs, b.cs))

    def __add__(self, o: Any) -> _Jet: return self._bin("add", o)
    def __radd__(self, o: Any) -> _Jet: return self._bin("add", o, True)
    def __sub__(self, o: Any) -> _Jet: return self._bin("subtract", o)
    def __rsub__(self, o: Any) -> _Jet: return self._bin("subtract", o, True)
    def __mul__(self, o: Any) -> _Jet: return self._bin("multiply", o)
    def __rmul__(self, o: Any) -> _Jet: return self._bin("multiply", o, True)
    def __truediv__(self, o: Any) -> _Jet: return self._bin("divide", o)
    def __rtruediv__(self, o: Any) -> _Jet: return self._bin("divide", o, True)
    def __neg__(self) -> _Jet: return _Jet(T.TAYLOR_RULES["negative"](self.cs))


def _unary_jet(name: str) -> Any:
    return lambda j: _Jet(T.TAYLOR_RULES[name](_Jet.of(j).cs))


_JET_NS = dict(E.CONSTANTS, TWO_OVER_SQRT_PI=2 / math.sqrt(math.pi),
               **{n: _unary_jet(n) for n in ("exp", "exp2", "log", "sqrt", "sin", "cos",
                                             "sinh", "cosh")},
               recip=_unary_jet("reciprocal"))

# the formula entries whose formulas the jets above can evaluate (arithmetic, no branches)
_GENERIC = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "square",
            "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
            "tanh", "arcsinh", "arccosh", "arctanh", "multiply", "divide", "hypot", "arctan2",
            "logaddexp", "logaddexp2", "erf", "erfc", "expit", "logit", "deg2rad", "rad2deg",
            "erfinv", "erfcinv"]
_POINTS = {"arccosh": 1.7, "log": 1.3, "log2": 1.3, "log10": 1.3, "sqrt": 1.3, "cbrt": 1.3,
           "reciprocal": 1.3}


def _formulas(name: str) -> tuple[Any, tuple[str, ...]]:
    if name in E.PRIMS:
        return E.PRIMS[name], E.PRIMS[name].formulas
    return T._special(name), T._special(name).formulas


def _fprime_from_formulas(name: str) -> Any:
    """``fprime_series`` by the table's formulas on jets; ``y`` (where a formula reads it) by
    the direct rule at the lower order."""
    prim, srcs = _formulas(name)
    fns = [E.compile_formula(s, prim.nin, ns=_JET_NS)[0] for s in srcs]

    def fprime(args: Any, ys: Any, order: int) -> Any:
        low = [_Jet(list(a[: order + 1])) for a in args]
        y = _Jet(T.TAYLOR_RULES[name](*(j.cs for j in low)))
        out = []
        for f in fns:
            d = f(*low, y) if callable(f) else f
            out.append(_Jet.of(d).cs + [np.asarray(0.0)] * (order + 1 - len(_Jet.of(d).cs)))
        return out

    return fprime


@pytest.mark.parametrize("name", _GENERIC)
def test_the_generic_rule_from_the_table_formula_is_the_direct_rule(name):
    prim, _ = _formulas(name)
    rng = np.random.default_rng(7)
    args = [_series(rng, _POINTS.get(name, 0.3 + 0.2 * i), 12, low=12) for i in range(prim.nin)]
    generic = T.from_derivative(prim, _fprime_from_formulas(name))
    np.testing.assert_allclose(np.array(generic(*args), float),
                               np.array(T.TAYLOR_RULES[name](*args), float),
                               rtol=1e-11, atol=1e-13)


def test_the_generic_rule_with_a_derivative_of_the_direct_rules():
    # arcsinh' = 1 / sqrt(1 + x^2), by the direct rules, against arcsinh's own recurrence
    def fprime(args: Any, ys: Any, order: int) -> Any:
        x = list(args[0][: order + 1])
        return [T.reciprocal(T.sqrt(T.TAYLOR_RULES["add"]([np.asarray(1.0)], T.square(x))))]

    rng = np.random.default_rng(3)
    x = _series(rng, 0.3, ORDER)
    generic = T.from_derivative(np.arcsinh, fprime)
    _assert_series(generic(x), [complex(c) for c in T.arcsinh(x)], rtol=1e-12, atol=1e-14)
    _assert_series(generic(x), _mp_reference(mp.asinh, [x], ORDER))


def test_the_generic_rule_reads_the_output_online():
    # exp' = exp: the derivative's series is the output's own, read one step behind it;
    # tan' = 1 + tan^2 likewise, from a generator over the output
    rng = np.random.default_rng(4)
    x = _series(rng, 0.3, ORDER)
    exp = T.from_derivative(np.exp, lambda args, ys, order: [iter(ys)])
    _assert_series(exp(x), _mp_reference(mp.exp, [x], ORDER))

    def tan_prime(args: Any, ys: Any, order: int) -> Any:
        def d() -> Any:
            for m in range(order + 1):
                yield (1 if m == 0 else 0) + sum(ys[j] * ys[m - j] for j in range(m + 1))

        return [d()]

    _assert_series(T.from_derivative(np.tan, tan_prime)(x), _mp_reference(mp.tan, [x], ORDER))


# -- Tensors, gradients, other array kinds -------------------------------------------------------

_REAL = [(n, pts[0]) for n, (_, pts, _) in MP.items()]


@pytest.mark.parametrize(("name", "x0"), _REAL, ids=[n for n, _ in _REAL])
def test_tensors_as_coefficients_give_the_arrays_numbers(name, x0):
    rng = np.random.default_rng(11)
    args = [_series(rng, a, 6) for a in x0]
    arrays = T.TAYLOR_RULES[name](*args)
    tensors = T.TAYLOR_RULES[name](*[[da.tensor(c) for c in a] for a in args])
    assert all(isinstance(c, da.Tensor) for c in tensors)
    assert all(not isinstance(c, da.Tensor) for c in arrays)
    np.testing.assert_allclose(np.array([np.asarray(c.detach().numpy()) for c in tensors]),
                               np.array([np.asarray(c) for c in arrays]), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize(("name", "x0"), [("tan", (0.3,)), ("power", (1.3, 0.7)),
                                          ("arctan2", (0.7, -1.3))])
def test_a_gradient_through_a_rule_matches_finite_differences(name, x0):
    rng = np.random.default_rng(5)
    K = 6
    args = [[float(c) for c in _series(rng, a, K, low=K)] for a in x0]
    w = rng.standard_normal(K + 1)

    def loss(vals: list[list[Any]]) -> Any:
        ys = T.TAYLOR_RULES[name](*vals)
        return sum(wk * y for wk, y in zip(w, ys, strict=True))

    leaves = [[da.tensor(c, requires_grad=True) for c in a] for a in args]
    loss(leaves).backward()
    h = 1e-6
    for i, a in enumerate(args):
        for j in range(K + 1):
            up = [list(map(np.asarray, b)) for b in args]
            dn = [list(map(np.asarray, b)) for b in args]
            up[i][j] = np.asarray(a[j] + h)
            dn[i][j] = np.asarray(a[j] - h)
            fd = (float(loss(up)) - float(loss(dn))) / (2 * h)
            assert float(leaves[i][j].grad) == pytest.approx(fd, rel=1e-6, abs=1e-7), (i, j)


@pytest.mark.parametrize("name", ["exp", "tan", "arcsin", "power", "logaddexp", "maximum",
                                  "sinc", "abs", "clip"])
def test_other_array_kinds_stay_of_their_kind(name):
    # Strict refuses to meet a plain NumPy array (a hard-coded np.* inside the rules)
    x0 = MP[name][1][0]
    rng = np.random.default_rng(2)
    args = [[np.asarray(np.full(3, c)).view(Strict) for c in _series(rng, a, 5)] for a in x0]
    got = T.TAYLOR_RULES[name](*args)
    assert all(isinstance(c, Strict) for c in got)


def test_dask_arrays_stay_lazy():
    dask_array = pytest.importorskip("dask.array")
    x = [dask_array.from_array(np.array([0.3, 0.5])), dask_array.from_array(np.array([1.0, 0.5]))]
    got = T.tan(x + [dask_array.zeros(2)] * 3)
    assert all(isinstance(c, dask_array.Array) for c in got)
    np.testing.assert_allclose(np.array([np.asarray(c.compute()) for c in got]),
                               np.array(T.tan([np.asarray(c.compute()) for c in x]
                                              + [np.zeros(2)] * 3)), rtol=1e-14)


@pytest.mark.parametrize("name", ["tan", "arcsin", "sinc", "logaddexp"])
def test_a_rule_on_dual_tensors_carries_their_tangents(name):
    # forward over Taylor: the primal coefficient a dual number, d y_k / d x_0 as its tangent
    x0 = MP[name][1][0]
    rng = np.random.default_rng(6)
    args = [_series(rng, a, 8) for a in x0]
    with da.dual_level():
        duals = [[da.make_dual(da.tensor(a[0]), da.tensor(1.0))] + [da.tensor(c) for c in a[1:]]
                 for a in args]
        tangents = [float(da.unpack_dual(y).tangent) for y in T.TAYLOR_RULES[name](*duals)]
    h = 1e-6
    up = T.TAYLOR_RULES[name](*[[a[0] + h] + a[1:] for a in args])
    dn = T.TAYLOR_RULES[name](*[[a[0] - h] + a[1:] for a in args])
    fd = [(float(u) - float(d)) / (2 * h) for u, d in zip(up, dn, strict=True)]
    np.testing.assert_allclose(tangents, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(T.TAYLOR_RULES))
def test_float32_coefficients_stay_float32(name):
    # every coefficient in the primal's precision (float_power's is float64, as NumPy's)
    x0 = MP[name][1][0]
    rng = np.random.default_rng(8)
    args = [[np.asarray(c, np.float32) for c in _series(rng, a, 5)] for a in x0]
    got = T.TAYLOR_RULES[name](*args)
    want = np.float64 if name == "float_power" else np.float32
    assert {np.asarray(c).dtype for c in got} == {np.dtype(want)}, name
