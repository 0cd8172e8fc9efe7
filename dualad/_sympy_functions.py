"""The counterparts ``dualad.sympy`` translates by: each ``dualad.numpy`` (and
``dualad.scipy.special``) function's SymPy expression (``SYMPY_FUNCTIONS``,
``SCIPY_SPECIAL_FUNCTIONS``), and each SymPy function's dualad callable
(``DUALAD_FUNCTIONS``). A table of their own, so ``dualad/sympy.py`` holds the
translation and the cross-check; a new formula in ``rules/elementwise.py`` gets its
counterpart here (a test fails otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import reduce
from typing import Any

import numpy as np
import sympy

import dualad as da
import dualad.numpy as dnp


class UnsupportedFunctionError(NotImplementedError, TypeError):
    """A SymPy expression uses a function dualad cannot differentiate.

    Subclasses both ``NotImplementedError`` and ``TypeError`` so either
    ``except`` clause catches it. The message names the function.

    Examples
    --------
    >>> import sympy, dualad.sympy as dsym
    >>> x = sympy.Symbol("x")
    >>> try:
    ...     dsym.lambdify(sympy.gamma(x), [x])
    ... except dsym.UnsupportedFunctionError as e:
    ...     print("gamma" in str(e))
    True
    """


# ---------------------------------------------------------------------------
# dualad.numpy name -> SymPy callable
# ---------------------------------------------------------------------------

_HALF = sympy.Rational(1, 2)


def _log2(x: Any) -> Any:
    return sympy.log(x) / sympy.log(2)


SYMPY_FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    # arithmetic
    "negative": lambda x: -x,
    "positive": lambda x: +x,
    "add": lambda x, y: x + y,
    "subtract": lambda x, y: x - y,
    "multiply": lambda x, y: x * y,
    "divide": lambda x, y: x / y,
    "true_divide": lambda x, y: x / y,
    "power": lambda x, y: x**y,
    "pow": lambda x, y: x**y,
    "float_power": lambda x, y: x**y,
    "reciprocal": lambda x: 1 / x,
    "square": lambda x: x**2,
    "sqrt": sympy.sqrt,
    # NumPy's cbrt is the *real* cube root (cbrt(-8) == -2); SymPy's cbrt is the
    # principal complex root, so spell the real one out.
    "cbrt": lambda x: sympy.sign(x) * sympy.Abs(x) ** sympy.Rational(1, 3),
    "absolute": sympy.Abs,
    "abs": sympy.Abs,
    "fabs": sympy.Abs,
    "sign": sympy.sign,
    "maximum": sympy.Max,
    "minimum": sympy.Min,
    "fmax": sympy.Max,
    "fmin": sympy.Min,
    "clip": lambda x, lo, hi: sympy.Min(sympy.Max(x, lo), hi),
    "copysign": lambda x, y: sympy.Abs(x) * sympy.sign(y),
    "hypot": lambda x, y: sympy.sqrt(x**2 + y**2),
    # exponentials and logarithms
    "exp": sympy.exp,
    "exp2": lambda x: sympy.Integer(2) ** x,
    "expm1": lambda x: sympy.exp(x) - 1,
    "log": sympy.log,
    "log2": _log2,
    "log10": lambda x: sympy.log(x) / sympy.log(10),
    "log1p": lambda x: sympy.log(1 + x),
    "logaddexp": lambda x, y: sympy.log(sympy.exp(x) + sympy.exp(y)),
    "logaddexp2": lambda x, y: _log2(sympy.Integer(2) ** x + sympy.Integer(2) ** y),
    # trigonometric and hyperbolic, and their inverses
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "arcsin": sympy.asin,
    "arccos": sympy.acos,
    "arctan": sympy.atan,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "tanh": sympy.tanh,
    "arcsinh": sympy.asinh,
    "arccosh": sympy.acosh,
    "arctanh": sympy.atanh,
    # numpy.arctan2(x1, x2) is the angle of the point (x2, x1): same argument
    # order as sympy.atan2(y, x).
    "arctan2": sympy.atan2,
    # NumPy's sinc is the *normalised* sinc sin(pi x)/(pi x); SymPy's is sin(x)/x.
    "sinc": lambda x: sympy.sinc(sympy.pi * x),
    "deg2rad": lambda x: x * sympy.pi / 180,
    "radians": lambda x: x * sympy.pi / 180,
    "rad2deg": lambda x: x * 180 / sympy.pi,
    "degrees": lambda x: x * 180 / sympy.pi,
    # piecewise constant: zero derivative almost everywhere
    "floor": sympy.floor,
    "ceil": sympy.ceiling,
    "trunc": lambda x: sympy.sign(x) * sympy.floor(sympy.Abs(x)),
    # NumPy rounds half to even; floor(x + 1/2) differs only at half-integers,
    # where neither is differentiable, and both have derivative 0 elsewhere.
    "rint": lambda x: sympy.floor(x + _HALF),
    "round": lambda x: sympy.floor(x + _HALF),
    "around": lambda x: sympy.floor(x + _HALF),
    "fix": lambda x: sympy.sign(x) * sympy.floor(sympy.Abs(x)),
    "floor_divide": lambda x, y: sympy.floor(x / y),
    # C fmod truncates (sign of x); NumPy's remainder/mod floors (sign of y).
    "fmod": lambda x, y: x - y * sympy.sign(x / y) * sympy.floor(sympy.Abs(x / y)),
    "remainder": lambda x, y: x - y * sympy.floor(x / y),
    "mod": lambda x, y: x - y * sympy.floor(x / y),
    # complex
    "real": sympy.re,
    "imag": sympy.im,
    "conj": sympy.conjugate,
    "conjugate": sympy.conjugate,
    "angle": sympy.arg,
}
"""Map from a ``dualad.numpy`` function name to a SymPy callable computing the
same function of SymPy expressions (same argument order as NumPy).

Examples
--------
>>> import sympy
>>> from dualad.sympy import SYMPY_FUNCTIONS
>>> x = sympy.Symbol("x")
>>> SYMPY_FUNCTIONS["log1p"](x)
log(x + 1)
>>> SYMPY_FUNCTIONS["sinc"](x)  # NumPy's normalised sinc
sinc(pi*x)
"""

def _scaled_by_exp_abs(f: sympy.Expr, x: sympy.Expr) -> sympy.Expr:
    """``exp(-|x|) f``, piecewise (so derivatives away from 0 carry no DiracDelta)."""
    return sympy.Piecewise((sympy.exp(-x) * f, x >= 0), (sympy.exp(x) * f, True))


SCIPY_SPECIAL_FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "gammaln": sympy.loggamma,
    "digamma": sympy.digamma,
    "erf": sympy.erf,
    "erfc": sympy.erfc,
    "expit": lambda x: 1 / (1 + sympy.exp(-x)),
    "logit": lambda x: sympy.log(x / (1 - x)),
    "xlogy": lambda x, y: x * sympy.log(y),
    "xlog1py": lambda x, y: x * sympy.log(1 + y),
    "gamma": sympy.gamma,
    "betaln": lambda a, b: sympy.loggamma(a) + sympy.loggamma(b) - sympy.loggamma(a + b),
    "beta": lambda a, b: sympy.gamma(a) * sympy.gamma(b) / sympy.gamma(a + b),
    "ndtr": lambda x: (1 + sympy.erf(x / sympy.sqrt(2))) / 2,
    "log_ndtr": lambda x: sympy.log((1 + sympy.erf(x / sympy.sqrt(2))) / 2),
    "erfinv": sympy.erfinv,
    "erfcinv": lambda x: sympy.erfinv(1 - x),  # (SymPy evaluates erfinv numerically, not erfcinv)
    "rgamma": lambda x: 1 / sympy.gamma(x),
    "j0": lambda x: sympy.besselj(0, x),
    "j1": lambda x: sympy.besselj(1, x),
    "y0": lambda x: sympy.bessely(0, x),
    "y1": lambda x: sympy.bessely(1, x),
    "i0": lambda x: sympy.besseli(0, x),
    "i1": lambda x: sympy.besseli(1, x),
    "i0e": lambda x: _scaled_by_exp_abs(sympy.besseli(0, x), x),
    "i1e": lambda x: _scaled_by_exp_abs(sympy.besseli(1, x), x),
}
"""The SymPy counterparts of ``dualad.scipy.special``'s elementwise functions (same
names and argument order as ``scipy.special``), for checking their rules."""

# ---------------------------------------------------------------------------
# SymPy function class -> dualad implementation (used by lambdify)
# ---------------------------------------------------------------------------


def _dnp(name: str) -> Callable[..., Any]:
    """Late-bound ``dualad.numpy.<name>`` so a missing one names itself."""

    def call(*args: Any) -> Any:
        fn = getattr(dnp, name, None)
        if fn is None:
            raise UnsupportedFunctionError(f"dualad.numpy has no function {name!r}")
        return fn(*args)

    call.__name__ = f"dualad.numpy.{name}"
    call.__qualname__ = call.__name__
    return call


def _nary(name: str) -> Callable[..., Any]:
    """Fold a binary ``dualad.numpy`` function over SymPy's n-ary Max/Min args."""
    binary = _dnp(name)

    def call(*args: Any) -> Any:
        return reduce(binary, args)

    call.__name__ = f"dualad.numpy.{name} (n-ary)"
    return call


def _reciprocal_of(name: str) -> Callable[[Any], Any]:
    """``1 / f(x)`` for sec, csc, cot, sech, csch, coth."""
    f = _dnp(name)
    return lambda x: 1.0 / f(x)


def _of_reciprocal(name: str) -> Callable[[Any], Any]:
    """``f(1 / x)`` for asec, acsc, acot, asech, acsch, acoth."""
    f = _dnp(name)
    return lambda x: f(1.0 / x)


def _primal(v: Any) -> np.ndarray:
    """The plain value of a Tensor (dropping tangents and graph) or constant."""
    if isinstance(v, da.Tensor):
        return v.detach().numpy()
    return np.asarray(v)


def _heaviside(x: Any, h0: Any = _HALF) -> Any:
    # Piecewise constant, derivative 0 away from the jump (which is also what
    # SymPy's DiracDelta evaluates to there): a constant of x's primal value.
    h0 = 0.5 if h0 is None else h0
    return dnp.where(_primal(x) > 0, 1.0, dnp.where(_primal(x) < 0, 0.0, _primal(h0)))


def _sinc_unnormalized(x: Any) -> Any:
    # sympy.sinc(x) = sin(x)/x, numpy's sinc(x) = sin(pi x)/(pi x).
    return _dnp("sinc")(x / math.pi)


DUALAD_FUNCTIONS: dict[Any, Callable[..., Any]] = {
    sympy.sin: _dnp("sin"),
    sympy.cos: _dnp("cos"),
    sympy.tan: _dnp("tan"),
    sympy.asin: _dnp("arcsin"),
    sympy.acos: _dnp("arccos"),
    sympy.atan: _dnp("arctan"),
    sympy.atan2: _dnp("arctan2"),
    sympy.sinh: _dnp("sinh"),
    sympy.cosh: _dnp("cosh"),
    sympy.tanh: _dnp("tanh"),
    sympy.asinh: _dnp("arcsinh"),
    sympy.acosh: _dnp("arccosh"),
    sympy.atanh: _dnp("arctanh"),
    sympy.sec: _reciprocal_of("cos"),
    sympy.csc: _reciprocal_of("sin"),
    sympy.cot: _reciprocal_of("tan"),
    sympy.sech: _reciprocal_of("cosh"),
    sympy.csch: _reciprocal_of("sinh"),
    sympy.coth: _reciprocal_of("tanh"),
    sympy.asec: _of_reciprocal("arccos"),
    sympy.acsc: _of_reciprocal("arcsin"),
    sympy.acot: _of_reciprocal("arctan"),
    sympy.asech: _of_reciprocal("arccosh"),
    sympy.acsch: _of_reciprocal("arcsinh"),
    sympy.acoth: _of_reciprocal("arctanh"),
    sympy.exp: _dnp("exp"),
    sympy.log: _dnp("log"),
    sympy.Abs: _dnp("abs"),
    sympy.sign: _dnp("sign"),
    sympy.floor: _dnp("floor"),
    sympy.ceiling: _dnp("ceil"),
    sympy.Max: _nary("maximum"),
    sympy.Min: _nary("minimum"),
    sympy.re: _dnp("real"),
    sympy.im: _dnp("imag"),
    sympy.conjugate: _dnp("conj"),
    sympy.arg: _dnp("angle"),
    sympy.sinc: _sinc_unnormalized,
    sympy.Heaviside: _heaviside,
}
"""Map from a SymPy function class to the dualad callable :func:`lambdify`
uses for it. ``Add``, ``Mul``, ``Pow``, ``Piecewise``, numbers and symbols are
handled by :func:`lambdify` itself. Extend per call with ``functions=``.
"""
