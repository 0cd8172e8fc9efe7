"""Taylor-coefficient rules: the elementwise primitives and products on truncated power series.

A series is a list of coefficients ``[x_0, x_1, ..., x_K]`` of ``x(t) = sum_k x_k t^k``
(unscaled: no factorials inside, so that order 30 neither overflows nor loses accuracy);
``x_0`` is the primal. A rule takes one series per argument and returns the output's
series, truncated at the same order. A series of one coefficient is a constant (its higher
coefficients are zero), so ``power(x, [2.5])`` is a power with a constant exponent. Each
coefficient is an array or a Tensor: the rules use Python's operators and the functions of
:mod:`dualad.rules.vocabulary` only, so the same code runs on NumPy, CuPy and Dask arrays
and on Tensors at lower dual levels or under reverse recording (gradients of a series).

The recurrences are those of Griewank & Walther, *Evaluating Derivatives* (2nd ed.,
SIAM 2008), chapter 13, each ``O(K^2)``:

- products by Cauchy convolution, ``c_k = sum_{j<=k} a_j b_{k-j}``; a quotient
  ``c = a / b`` by solving ``b c = a`` for the newest coefficient,
  ``c_k = (a_k - sum_{j>=1} b_j c_{k-j}) / b_0``; a square root from ``y y = x`` the same way;
- a function ``y = f(x)`` whose derivative is a series already known (or known up to the
  order being computed) by the chain rule ``y' = f'(x) x'`` read coefficient-wise,
  ``k y_k = sum_{j=1..k} j x_j d_{k-j}`` with ``d`` the series of ``f'(x(t))``. ``exp``
  (``d = y``), ``tan`` (``d = 1 + y^2``), ``tanh``, ``expit`` read ``d`` from the output's
  coefficients already computed; ``sin``/``cos`` and ``sinh``/``cosh`` go as a pair;
  ``erf`` from ``d = 2/sqrt(pi) exp(-x^2)``, ``erfinv`` and ``erfcinv`` from
  ``d = ±sqrt(pi)/2 exp(y^2)`` read online; ``arctan2`` and ``hypot`` with one ``d`` per
  argument;
- a logarithm-like function, ``y' = x' / u`` (``log``: ``u = x``; ``arctan``:
  ``u = 1 + x^2``; ``arcsin``: ``u = sqrt(1 - x^2)``), by solving ``u y' = x'``:
  ``k u_0 y_k = k x_k - sum_{j=1..k-1} j y_j u_{k-j}``;
- a power with a constant exponent from ``x y' = r x' y``, a power with a series
  exponent as ``exp(b log a)``; a non-negative integer exponent by repeated squaring
  (right at ``x_0 = 0`` too);
- piecewise functions (``fabs``, ``floor``, ``maximum``, ``clip``, ``remainder``, ...) are
  linear near the primal, with the slope their derivative formula gives there: ``y_k =
  sum_i c_i x^{(i)}_k``, ``c_i`` the formula at the primals, the branch chosen at ``x_0``
  (ties as the first-order rule has them).

Every other function comes from its derivative formula by :func:`from_derivative`. A
singular point (``log`` at 0, ``sqrt`` at 0) gives inf or NaN coefficients, as the
first-order rules give an inf or NaN derivative there.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..core.dispatch import every
from ..core.tensor import Tensor
from . import elementwise as E
from . import vocabulary as V

Series = list  # [x_0, x_1, ..., x_K]: arrays or Tensors
Rule = Callable[..., Series]

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2.0


# -- the building blocks -------------------------------------------------------------------


def _f(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on coefficients: a Tensor where an argument is one, else the array that
    the vocabulary's Tensor holds (so that NumPy, CuPy and Dask coefficients stay arrays)."""
    r = fn(*args)
    if isinstance(r, Tensor) and not any(isinstance(a, Tensor) for a in args):
        return r._data
    return r


def _sum(terms: Iterable[Any]) -> Any:
    """The sum of ``terms`` (0 for none), without a leading ``0 +``."""
    acc = None
    for t in terms:
        acc = t if acc is None else acc + t
    return 0 if acc is None else acc


def _conv(a: Sequence[Any], b: Sequence[Any], k: int, lo: int = 0) -> Any:
    """``sum_{j=lo..k} a_j b_{k-j}`` over the coefficients present (a missing one is 0)."""
    return _sum(a[j] * b[k - j] for j in range(max(lo, k - len(b) + 1), min(k, len(a) - 1) + 1))


def _sqconv(a: Sequence[Any], k: int, lo: int = 0) -> Any:
    """``sum_{j=lo..k-lo} a_j a_{k-j}``, each product once: the coefficient of a square."""
    top = k - lo
    if top < lo:
        return 0
    half = (k - 1) // 2
    pairs = _sum(a[j] * a[k - j] for j in range(lo, min(half, top) + 1))
    s = pairs + pairs if half >= lo else 0
    if k % 2 == 0:
        mid = a[k // 2] * a[k // 2]
        s = mid if isinstance(s, int) else s + mid
    return s


def _order(*args: Sequence[Any]) -> int:
    return max(len(a) for a in args) - 1


def _pad(a: Sequence[Any], n: int) -> list[Any]:
    """``a`` as ``n`` coefficients, zeros after its own."""
    return list(a) + [0] * (n - len(a))


def _chain(ys: list[Any], args: Sequence[Sequence[Any]], ds: Sequence[Any], K: int) -> Series:
    """``y`` from ``y' = sum_i d_i x_i'``: ``k y_k = sum_i sum_{j=1..k} j x_ij d_i,k-j``,
    appended to ``ys`` (which holds ``y_0``) in place.

    Each ``d_i`` is a list, or an iterator whose ``m``-th item may read ``ys[0..m]`` (it is
    read once those are computed), or None (a zero derivative).
    """
    cols: list[list[Any]] = [[] for _ in args]
    its = [None if d is None else iter(d) for d in ds]
    for k in range(1, K + 1):
        terms = []
        for x, it, col in zip(args, its, cols, strict=True):
            if it is None or len(x) < 2:
                continue
            col.append(next(it))
            terms.extend(j * x[j] * col[k - j] for j in range(1, min(k, len(x) - 1) + 1))
        s = _sum(terms)
        ys.append(s if k == 1 else s * (1.0 / k))
    return ys


def _live_chain(y0: Any, x: Sequence[Any], d_of: Callable[[list[Any], int], Any],
                K: int) -> Series:
    """``y`` with ``y' = d x'``, where ``d_m = d_of(ys, m)`` reads the output's ``y_0..y_m``."""
    ys = [y0]
    return _chain(ys, [x], [(d_of(ys, m) for m in range(K))], K)


def _exp_series(u: Sequence[Any], y0: Any, K: int) -> Series:
    """``y`` with ``y' = y u'`` (``y = exp(u)`` for ``y0 = exp(u_0)``)."""
    return _live_chain(y0, u, lambda ys, m: ys[m], K)


def _quot_integral(y0: Any, x: Sequence[Any], u: Sequence[Any], K: int) -> Series:
    """``y`` with ``y' = x' / u``: ``k u_0 y_k = k x_k - sum_{j=1..k-1} j y_j u_{k-j}``."""
    ys = [y0]
    r0 = 1 / u[0]
    for k in range(1, K + 1):
        xk = x[k] if k < len(x) else 0
        s = _sum(j * ys[j] * u[k - j] for j in range(max(1, k - len(u) + 1), k))
        ys.append(xk * r0 if isinstance(s, int) else (xk - s * (1.0 / k)) * r0)
    return ys


def _sqrt_series(q: Sequence[Any], y0: Any, K: int) -> Series:
    """``y`` with ``y y = q``, ``y_0 = y0``: ``y_k = (q_k - sum_{j=1..k-1} y_j y_{k-j}) / 2y_0``."""
    ys = [y0]
    r = 0.5 / y0
    for k in range(1, K + 1):
        qk = q[k] if k < len(q) else 0
        ys.append((qk - _sqconv(ys, k, lo=1)) * r)
    return ys


def _affine(x: Sequence[Any], c0: Any, scale: Any) -> Series:
    """``c0 + scale * x``: ``[c0 + scale x_0, scale x_1, ...]``."""
    return [c0 + scale * x[0]] + [scale * c for c in x[1:]]


def _square_series(x: Sequence[Any], K: int) -> Series:
    return [_sqconv(x, k) for k in range(K + 1)]


def _zero_like(c: Any) -> Any:
    return _f(V.zeros_like, c)


def _is_complex(c: Any) -> bool:
    dt = getattr(c, "dtype", None)
    return c.__class__ is complex if dt is None else dt.kind == "c"


# -- products, quotients, powers -----------------------------------------------------------


def multiply(a: Series, b: Series) -> Series:
    """``a b`` by Cauchy convolution."""
    return [_conv(a, b, k) for k in range(_order(a, b) + 1)]


def divide(a: Series, b: Series) -> Series:
    """``a / b``: ``c_k = (a_k - sum_{j=1..k} b_j c_{k-j}) / b_0``."""
    cs = [a[0] / b[0]]
    for k in range(1, _order(a, b) + 1):
        ak = a[k] if k < len(a) else 0
        cs.append((ak - _conv(b, cs, k, lo=1)) / b[0])
    return cs


def reciprocal(x: Series) -> Series:
    """``1 / x``: ``c_k = -r_0 sum_{j=1..k} x_j c_{k-j}``, ``r_0 = 1 / x_0``."""
    cs = [_f(V.reciprocal, x[0])]
    for k in range(1, len(x)):
        cs.append(-(_conv(x, cs, k, lo=1) * cs[0]))
    return cs


def square(x: Series) -> Series:
    """``x^2``: a Cauchy square, each product once."""
    return _square_series(x, len(x) - 1)


def sqrt(x: Series) -> Series:
    """``sqrt(x)`` from ``y y = x``."""
    return _sqrt_series(x, _f(V.sqrt, x[0]), len(x) - 1)


def _power_const(x: Series, r: Any, y0: Any) -> Series:
    """``x^r`` for a constant ``r``: repeated squaring for an integer ``r >= 0`` (right at
    ``x_0 = 0``), else ``k x_0 y_k = sum_{j=1..k} (r j - (k - j)) x_j y_{k-j}``."""
    K = len(x) - 1
    n = _small_int(r)
    if n is not None:
        return [y0] + _int_power(x, n, K)[1:]
    ys = [y0]
    rx0 = 1 / x[0]
    for k in range(1, K + 1):
        s = _sum((r * j - (k - j)) * x[j] * ys[k - j] for j in range(1, k + 1))
        ys.append(s * rx0 * (1.0 / k))
    return ys


def _small_int(r: Any) -> int | None:
    """``r`` as an int where it is a real integer in ``0..64`` known on the host: a Python or
    NumPy number (not a device's or a lazy array, which would have to be computed)."""
    if r.__class__ not in (int, float) and not (
            isinstance(r, (np.generic, np.ndarray)) and r.ndim == 0 and r.dtype.kind in "biuf"):
        return None
    f = float(r)
    return int(f) if f.is_integer() and 0 <= f <= 64 else None


def _int_power(x: Series, n: int, K: int) -> Series:
    """``x^n`` by repeated squaring (``O(K^2 log n)``)."""
    if n == 0:
        return [_f(V.ones_like, x[0])] + [_zero_like(c) for c in x[1:]]
    acc, base = None, list(x)
    while True:
        if n & 1:
            acc = base if acc is None else multiply(acc, base)
        n >>= 1
        if not n:
            return acc[: K + 1]
        base = _square_series(base, K)


def power(a: Series, b: Series) -> Series:
    """``a ** b``: a constant exponent (a series of one coefficient) by ``x y' = r x' y``,
    a series exponent as ``exp(b log a)``."""
    y0 = _f(V.power, a[0], b[0])
    if len(b) == 1:
        return _power_const(a, b[0], y0)
    K = _order(a, b)
    la = log(_pad(a, K + 1))
    return _exp_series(multiply(_pad(b, K + 1), la), y0, K)


def float_power(a: Series, b: Series) -> Series:
    """``a ** b`` in float64 or complex128 (NumPy's ``float_power``): ``power`` of the
    arguments brought to that precision."""
    y0 = _f(V.float_power, a[0], b[0])
    a, b = ([_f(V.astype, c, y0.dtype) if hasattr(c, "dtype") else c for c in s] for s in (a, b))
    return [y0] + power(a, b)[1:]


def cbrt(x: Series) -> Series:
    """The real cube root, ``x y' = x' y / 3``."""
    return _power_const(x, 1.0 / 3.0, _f(V.cbrt, x[0]))


# -- exponentials and logarithms -----------------------------------------------------------


def exp(x: Series) -> Series:
    """``exp(x)``: ``k y_k = sum_{j=1..k} j x_j y_{k-j}``."""
    return _exp_series(x, _f(V.exp, x[0]), len(x) - 1)


def exp2(x: Series) -> Series:
    """``2 ** x = exp(x ln 2)``."""
    return _exp_series([c * _LN2 for c in x], _f(V.exp2, x[0]), len(x) - 1)


def expm1(x: Series) -> Series:
    """``exp(x) - 1``: the primal from ``expm1``, the rest as ``exp``'s."""
    y0 = _f(V.expm1, x[0])
    return [y0] + _exp_series(x, y0 + 1, len(x) - 1)[1:]


def log(x: Series) -> Series:
    """``log(x)``: ``k x_0 y_k = k x_k - sum_{j=1..k-1} j y_j x_{k-j}``."""
    return _quot_integral(_f(V.log, x[0]), x, x, len(x) - 1)


def _log_base(x: Series, y0: Any, ln_base: float) -> Series:
    ys = log(x)
    return [y0] + [c * (1.0 / ln_base) for c in ys[1:]]


def log2(x: Series) -> Series:
    """``log(x) / ln 2``."""
    return _log_base(x, _f(V.log2, x[0]), _LN2)


def log10(x: Series) -> Series:
    """``log(x) / ln 10``."""
    return _log_base(x, _f(V.log10, x[0]), _LN10)


def log1p(x: Series) -> Series:
    """``log(1 + x)``: the primal from ``log1p``, the rest as ``log``'s of ``1 + x``."""
    return _quot_integral(_f(V.log1p, x[0]), x, _affine(x, 1, 1), len(x) - 1)


def logaddexp(a: Series, b: Series) -> Series:
    """``log(exp(a) + exp(b)) = hi + log1p(exp(lo - hi))``, ``hi`` the larger at order 0."""
    return _logaddexp(a, b, _f(V.logaddexp, a[0], b[0]), 1.0)


def logaddexp2(a: Series, b: Series) -> Series:
    """``log2(2 ** a + 2 ** b)``: ``logaddexp`` of ``a ln 2, b ln 2``, over ``ln 2``."""
    return _logaddexp(a, b, _f(V.logaddexp2, a[0], b[0]), _LN2)


def _logaddexp(a: Series, b: Series, y0: Any, scale: float) -> Series:
    K = _order(a, b)
    a, b = _pad(a, K + 1), _pad(b, K + 1)
    up = a[0] >= b[0]
    hi = [_f(V.where, up, x, y) for x, y in zip(a, b, strict=True)]
    d = [(_f(V.where, up, y, x) - h) * scale for x, y, h in zip(a, b, hi, strict=True)]
    e = _exp_series(d, _f(V.exp, d[0]), K)
    lg = _quot_integral(0, e, _affine(e, 1, 1), K)
    return [y0] + [h + c * (1.0 / scale) for h, c in zip(hi[1:], lg[1:], strict=True)]


# -- trigonometric and hyperbolic functions --------------------------------------------------


def _pair(x: Series, s0: Any, c0: Any, sign: float) -> tuple[Series, Series]:
    """``(s, c)`` with ``s' = c x'``, ``c' = sign s x'``: sin/cos (-1), sinh/cosh (+1)."""
    ss, cs = [s0], [c0]
    for k in range(1, len(x)):
        r = 1.0 / k
        ss.append(_sum(j * x[j] * cs[k - j] for j in range(1, k + 1)) * r)
        cs.append(_sum(j * x[j] * ss[k - j] for j in range(1, k + 1)) * (sign * r))
    return ss, cs


def sincos(x: Series) -> tuple[Series, Series]:
    """``(sin(x), cos(x))``, computed together: each one's derivative is the other."""
    return _pair(x, _f(V.sin, x[0]), _f(V.cos, x[0]), -1.0)


def sinhcosh(x: Series) -> tuple[Series, Series]:
    """``(sinh(x), cosh(x))``, computed together."""
    return _pair(x, _f(V.sinh, x[0]), _f(V.cosh, x[0]), 1.0)


def sin(x: Series) -> Series:
    """``sin(x)``, of the pair ``sincos``."""
    return sincos(x)[0]


def cos(x: Series) -> Series:
    """``cos(x)``, of the pair ``sincos``."""
    return sincos(x)[1]


def sinh(x: Series) -> Series:
    """``sinh(x)``, of the pair ``sinhcosh``."""
    return sinhcosh(x)[0]


def cosh(x: Series) -> Series:
    """``cosh(x)``, of the pair ``sinhcosh``."""
    return sinhcosh(x)[1]


def tan(x: Series) -> Series:
    """``tan(x)``: ``y' = (1 + y^2) x'``, the derivative read from the output's coefficients."""
    return _live_chain(_f(V.tan, x[0]), x, lambda ys, m: _sqconv(ys, m) + (1 if m == 0 else 0),
                       len(x) - 1)


def tanh(x: Series) -> Series:
    """``tanh(x)``: ``y' = (1 - y^2) x'``."""
    return _live_chain(_f(V.tanh, x[0]), x, lambda ys, m: (1 if m == 0 else 0) - _sqconv(ys, m),
                       len(x) - 1)


def arctan(x: Series) -> Series:
    """``arctan(x)``: ``y' = x' / (1 + x^2)``."""
    K = len(x) - 1
    return _quot_integral(_f(V.arctan, x[0]), x, _affine(_square_series(x, K), 1, 1), K)


def _sqrt_of(q: Series, r0: Any) -> Series:
    return _sqrt_series(q, r0, len(q) - 1)


def arcsin(x: Series) -> Series:
    """``arcsin(x)``: ``y' = x' / sqrt(1 - x^2)``."""
    return _quot_integral(_f(V.arcsin, x[0]), x, _one_minus_sq_root(x), len(x) - 1)


def arccos(x: Series) -> Series:
    """``arccos(x)``: ``y' = -x' / sqrt(1 - x^2)``."""
    ys = _quot_integral(0, x, _one_minus_sq_root(x), len(x) - 1)
    return [_f(V.arccos, x[0])] + [-c for c in ys[1:]]


def _one_minus_sq_root(x: Series) -> Series:
    q = _affine(_square_series(x, len(x) - 1), 1, -1)
    return _sqrt_of(q, _f(V.sqrt, q[0]))


def arcsinh(x: Series) -> Series:
    """``arcsinh(x)``: ``y' = x' / sqrt(x^2 + 1)``."""
    q = _affine(_square_series(x, len(x) - 1), 1, 1)
    return _quot_integral(_f(V.arcsinh, x[0]), x, _sqrt_of(q, _f(V.sqrt, q[0])), len(x) - 1)


def arccosh(x: Series) -> Series:
    """``arccosh(x)``: ``y' = x' / (sqrt(x - 1) sqrt(x + 1))`` (the table's branch for
    complex ``x``)."""
    m, p = _affine(x, -1, 1), _affine(x, 1, 1)
    u = multiply(_sqrt_of(m, _f(V.sqrt, m[0])), _sqrt_of(p, _f(V.sqrt, p[0])))
    return _quot_integral(_f(V.arccosh, x[0]), x, u, len(x) - 1)


def arctanh(x: Series) -> Series:
    """``arctanh(x)``: ``y' = x' / (1 - x^2)``."""
    K = len(x) - 1
    return _quot_integral(_f(V.arctanh, x[0]), x, _affine(_square_series(x, K), 1, -1), K)


def hypot(a: Series, b: Series) -> Series:
    """``sqrt(a^2 + b^2)``, the primal from ``hypot``."""
    K = _order(a, b)
    a, b = _pad(a, K + 1), _pad(b, K + 1)
    q = [_sqconv(a, k) + _sqconv(b, k) for k in range(K + 1)]
    return _sqrt_series(q, _f(V.hypot, a[0], b[0]), K)


def arctan2(a: Series, b: Series) -> Series:
    """``arctan2(a, b)``: ``y' = (b a' - a b') / (a^2 + b^2)``."""
    K = _order(a, b)
    y0 = _f(V.arctan2, a[0], b[0])
    if K == 0:
        return [y0]
    pa, pb = _pad(a, K), _pad(b, K)
    q = [_sqconv(pa, k) + _sqconv(pb, k) for k in range(K)]
    da, db = divide(pb[:K], q), divide(pa[:K], q)
    return _chain([y0], [a, b], [da, [-c for c in db]], K)


_SINC_NEAR = 2.0  # |x_0| up to which sinc goes by quadrature (see sinc)


@E._quietly  # (each branch divides by zero or loses accuracy where the other is taken)
def sinc(x: Series) -> Series:
    """``sin(pi x) / (pi x)``, an entire function: two ways, chosen by ``|x_0|``.

    Dividing the series of ``sin(pi x)`` by that of ``pi x`` is stable only where the zero
    of ``x(t)`` is far from ``t = 0`` (a quotient's rounding grows like the divisor's
    reciprocal, ``|x_0 / x_1|^-k`` for ``x(t) = x_0 + x_1 t``): it serves for
    ``|x_0| > 2``. Near the removable singularity, ``sinc(x) = int_0^1 cos(pi x s) ds``:
    a Gauss-Legendre rule (exact for polynomials of degree ``2K + 63`` in ``s``; the
    cosine's frequency, ``pi |x_0| <= 2 pi``, takes the rest) over cosines of series,
    which divide by nothing: ``O(K^3)``, ``K / 2 + 16`` cosines of ``O(K^2)`` each.
    """
    K = len(x) - 1
    y0 = _f(V.sinc, x[0])
    if K == 0:
        return [y0]
    near = _f(V.abs, x[0]) <= _SINC_NEAR
    u = [c * math.pi for c in x]
    den = [_f(V.where, near, 1, u[0])] + u[1:]
    far = divide(sincos(u)[0], den)
    acc: list[Any] = []
    for node, weight in _half_gauss_legendre(K + 32):
        cos = sincos([c * node for c in u])[1]
        acc = [weight * c for c in cos] if not acc else [a + weight * c for a, c in
                                                          zip(acc, cos, strict=True)]
    return [y0] + [_f(V.where, near, a, b) for a, b in zip(acc[1:], far[1:], strict=True)]


@functools.cache
def _half_gauss_legendre(n: int) -> list[tuple[float, float]]:
    """The Gauss-Legendre rule of ``n`` (even) points on ``[-1, 1]`` for an even integrand,
    as ``int_0^1``: its positive nodes and their weights (Python floats, NumPy's rule)."""
    nodes, weights = np.polynomial.legendre.leggauss(n)
    return [(float(a), float(w)) for a, w in zip(nodes, weights, strict=True) if a > 0]


# -- piecewise and non-holomorphic functions -------------------------------------------------


def locally_linear(name: str) -> Rule:
    """The rule of a function that is linear near the primal (``floor``, ``maximum``,
    ``clip``, ``remainder``, ...): ``y_k = sum_i c_i x^{(i)}_k`` for ``k >= 1``, ``c_i`` its
    derivative formula evaluated at the primals (the branch taken at ``x_0``)."""
    prim = E.PRIMS[name]
    slopes = [E.compile_formula(s, prim.nin)[0] for s in prim.formulas]

    def rule(*args: Series) -> Series:
        x0 = [a[0] for a in args]
        y0 = _f(prim, *x0)
        # (0, 1, -1: the formulas "0", "1", "-1", no call)
        cs = [c if c.__class__ is int else _as_output(_f(c, *x0, y0), y0) for c in slopes]
        ys = [y0]
        for k in range(1, _order(*args) + 1):
            terms = [_times(c, a[k]) for a, c in zip(args, cs, strict=True)
                     if k < len(a) and not (c.__class__ is int and c == 0)]
            ys.append(_sum(terms) if terms else _zero_like(y0))
        return ys

    rule.__name__ = rule.__qualname__ = name
    rule.__doc__ = f"``{name}``, linear near the primal: slopes {prim.formulas}."
    return rule


def _as_output(c: Any, y0: Any) -> Any:
    """A slope in the output's real precision (``where(a == b, 0.5, a > b)`` is float64 for
    float32 arguments), as the first-order rule brings its coefficient there."""
    cd, od = getattr(c, "dtype", None), getattr(y0, "dtype", None)
    if cd is None or od is None or cd == od or cd.kind not in "iuf" or od.kind != "f":
        return c
    return _f(V.astype, c, od)


def _times(c: Any, v: Any) -> Any:
    if c.__class__ is int:
        return v if c == 1 else -v
    return c * v


def coefficientwise(fn: Any) -> Rule:
    """The rule of a linear function of one argument (``conj``, ``real``, ``imag``):
    ``fn`` on each coefficient."""
    def rule(x: Series) -> Series:
        return [_f(fn, c) for c in x]

    rule.__name__ = rule.__qualname__ = getattr(fn, "__name__", "linear")
    return rule


def absolute(x: Series) -> Series:
    """``|x|``: ``sign(x_0) x_k`` for real ``x``; ``sqrt(Re(z conj(z)))`` for complex ``z``
    (a real-analytic function of the real ``t`` where ``z_0 != 0``)."""
    if not _is_complex(x[0]):
        s = _f(V.sign, x[0])
        return [_f(V.abs, x[0])] + [s * c for c in x[1:]]
    cz = [_f(V.conj, c) for c in x]
    q = [_f(V.real, c) for c in multiply(x, cz)]
    return _sqrt_series(q, _f(V.abs, x[0]), len(x) - 1)


def sign(x: Series) -> Series:
    """``sign(x)``: constant for real ``x``; ``z / |z|`` for complex ``z``."""
    y0 = _f(V.sign, x[0])
    if not _is_complex(x[0]):
        return [y0] + [_zero_like(y0) for _ in x[1:]]
    return [y0] + divide(x, absolute(x))[1:]


def angle(x: Series) -> Series:
    """``angle(x)``: constant for real ``x``; ``arctan2(imag z, real z)`` for complex ``z``."""
    y0 = _f(V.angle, x[0])
    if not _is_complex(x[0]):
        return [y0] + [_zero_like(y0) for _ in x[1:]]
    return [y0] + arctan2([_f(V.imag, c) for c in x], [_f(V.real, c) for c in x])[1:]


# -- the functions of dualad.scipy.special --------------------------------------------------


def _special(name: str) -> Any:
    """The primitive ``dualad.scipy.special.<name>``, found among the formula primitives
    (made when that module is imported: this layer does not import it)."""
    for p in E.FORMULA_PRIMS:
        if p.name == name:
            return p
    raise LookupError(f"no Taylor rule for {name!r} before dualad.scipy.special is imported")


def erf(x: Series) -> Series:
    """``erf(x)``: ``y' = 2/sqrt(pi) exp(-x^2) x'``."""
    return _erf(x, _f(_special("erf"), x[0]), _TWO_OVER_SQRT_PI)


def erfc(x: Series) -> Series:
    """``erfc(x) = 1 - erf(x)``."""
    return _erf(x, _f(_special("erfc"), x[0]), -_TWO_OVER_SQRT_PI)


def _erf(x: Series, y0: Any, c: float) -> Series:
    K = len(x) - 1
    if K == 0:
        return [y0]
    q = [-s for s in _square_series(x, K - 1)]
    d = [c * e for e in _exp_series(q, _f(V.exp, q[0]), K - 1)]
    return _chain([y0], [x], [d], K)


def erfinv(x: Series) -> Series:
    """``erfinv(x)``: ``y' = sqrt(pi)/2 exp(y^2) x'``."""
    return _inverse_erf(x, _f(_special("erfinv"), x[0]), _SQRT_PI_OVER_2)


def erfcinv(x: Series) -> Series:
    """``erfcinv(x) = erfinv(1 - x)``: ``y' = -sqrt(pi)/2 exp(y^2) x'``."""
    return _inverse_erf(x, _f(_special("erfcinv"), x[0]), -_SQRT_PI_OVER_2)


def _inverse_erf(x: Series, y0: Any, c: float) -> Series:
    # d = c exp(s), s = y^2, read online: s_m = (y y)_m once y_m is known, and
    # m e_m = sum_{j=1..m} j s_j e_{m-j} (the exponential's rule, e = exp(s))
    s: list[Any] = []
    e: list[Any] = []

    def d_of(ys: list[Any], m: int) -> Any:
        s.append(_sqconv(ys, m))
        e.append(_f(V.exp, s[0]) if m == 0 else
                 _sum(j * s[j] * e[m - j] for j in range(1, m + 1)) * (1.0 / m))
        return c * e[m]

    return _live_chain(y0, x, d_of, len(x) - 1)


def expit(x: Series) -> Series:
    """The logistic sigmoid: ``y' = y (1 - y) x'``."""
    return _live_chain(_f(_special("expit"), x[0]), x,
                       lambda ys, m: ys[m] - _sqconv(ys, m), len(x) - 1)


def logit(x: Series) -> Series:
    """``log(x / (1 - x))``: ``y' = x' / (x - x^2)``."""
    K = len(x) - 1
    u = [c - s for c, s in zip(x, _square_series(x, K), strict=True)]
    return _quot_integral(_f(_special("logit"), x[0]), x, u, K)


def xlogy(a: Series, b: Series) -> Series:
    """``a log(b)``: a Cauchy product (the primal from ``xlogy``: 0 where ``a = 0``)."""
    K = _order(a, b)
    y = multiply(_pad(a, K + 1), log(_pad(b, K + 1)))
    return [_f(_special("xlogy"), a[0], b[0])] + y[1:]


# -- the generic rule ------------------------------------------------------------------------


def from_derivative(f: Callable[..., Any],
                    fprime_series: Callable[[Sequence[Series], list[Any], int], Sequence[Any]],
                    ) -> Rule:
    """The Taylor rule of ``y = f(x_1, ..., x_n)`` from the series of its partial derivatives.

    Parameters
    ----------
    f : callable
        The function on primal values (a primitive, or any function of arrays or Tensors).
    fprime_series : callable
        ``fprime_series(args, ys, order)``: for the argument series ``args``, one entry per
        argument, the coefficients ``d_0 .. d_order`` of ``df/dx_i(x(t))`` (a list, or an
        iterator), or None for a zero derivative. ``ys`` is the output's series as far as
        computed: the ``m``-th item of an iterator is read once ``ys`` holds ``y_0 .. y_m``,
        so that a formula reading the output (``exp``: ``d = y``) is evaluated online.

    Returns
    -------
    callable
        The rule: ``y_0 = f(x_0)`` and, for ``k >= 1``,
        ``k y_k = sum_i sum_{j=1..k} j x_ij d_i,k-j`` — the chain rule ``y' = sum_i d_i x_i'``
        read coefficient-wise, ``O(K^2)`` given the ``d``.
    """
    def rule(*args: Series) -> Series:
        K = _order(*args)
        ys = [_f(f, *(a[0] for a in args))]
        if K == 0:
            return ys
        return _chain(ys, args, fprime_series(args, ys, K - 1), K)

    return rule


# -- the table -----------------------------------------------------------------------------

TAYLOR_RULES: dict[str, Rule] = {
    "negative": locally_linear("negative"),
    "positive": locally_linear("positive"),
    "add": locally_linear("add"),
    "subtract": locally_linear("subtract"),
    "deg2rad": locally_linear("deg2rad"),
    "rad2deg": locally_linear("rad2deg"),
    "conj": coefficientwise(V.conj),
    "real": coefficientwise(V.real),
    "imag": coefficientwise(V.imag),
    "multiply": multiply,
    "divide": divide,
    "reciprocal": reciprocal,
    "square": square,
    "sqrt": sqrt,
    "cbrt": cbrt,
    "power": power,
    "float_power": float_power,
    "exp": exp,
    "exp2": exp2,
    "expm1": expm1,
    "log": log,
    "log2": log2,
    "log10": log10,
    "log1p": log1p,
    "logaddexp": logaddexp,
    "logaddexp2": logaddexp2,
    "sin": sin,
    "cos": cos,
    "tan": tan,
    "arcsin": arcsin,
    "arccos": arccos,
    "arctan": arctan,
    "sinh": sinh,
    "cosh": cosh,
    "tanh": tanh,
    "arcsinh": arcsinh,
    "arccosh": arccosh,
    "arctanh": arctanh,
    "hypot": hypot,
    "arctan2": arctan2,
    "sinc": sinc,
    "abs": absolute,
    "sign": sign,
    "angle": angle,
    "fabs": locally_linear("fabs"),
    "floor": locally_linear("floor"),
    "ceil": locally_linear("ceil"),
    "trunc": locally_linear("trunc"),
    "rint": locally_linear("rint"),
    "maximum": locally_linear("maximum"),
    "minimum": locally_linear("minimum"),
    "fmax": locally_linear("fmax"),
    "fmin": locally_linear("fmin"),
    "copysign": locally_linear("copysign"),
    "remainder": locally_linear("remainder"),
    "fmod": locally_linear("fmod"),
    "clip": locally_linear("clip"),
    # dualad.scipy.special's (their primals found once that module is imported)
    "erf": erf,
    "erfc": erfc,
    "erfinv": erfinv,
    "erfcinv": erfcinv,
    "expit": expit,
    "logit": logit,
    "xlogy": xlogy,
}
"""Each elementwise primitive's Taylor rule, by the primitive's name (the formula table's
names of :mod:`dualad.rules.elementwise`, and ``dualad.scipy.special``'s)."""


# -- the rule slot: registration and the generic rules -----------------------------------------

_REGISTERED: dict[str, Rule] = {}  # every registered table, merged: name -> rule


def register(rules: dict[str, Rule]) -> None:
    """Register a table of Taylor rules, a primitive's name -> its rule.

    A rule is ``rule(*series, **params) -> series`` (a tuple of series for a ``multi``
    primitive), a series being the list ``[x_0, ..., x_K]`` of unscaled coefficients
    (arrays, or Tensors at lower levels) and the rule computing ``y_0`` too. Each primitive
    of that name gets the rule in its ``taylor`` slot now, or when Taylor mode first meets
    it (a primitive made later: ``dualad.scipy.special``'s). The tables are listed in one
    place, ``dualad.taylor.RULE_TABLES``.

    Examples
    --------
    >>> from dualad.rules import taylor
    >>> taylor.register({"cube_root": taylor.cbrt})  # no primitive of that name: kept
    """
    for name, rule in rules.items():
        old = _REGISTERED.get(name)
        if old is not None and old is not rule:
            raise ValueError(f"register: a Taylor rule for {name!r} is registered already")
    _REGISTERED.update(rules)
    for prim in every:  # (the primitives made so far)
        if prim.name in rules and prim.taylor is None:
            prim.taylor = rules[prim.name]


def rule_for(prim: Any) -> Rule | None:
    """``prim``'s Taylor rule: its ``taylor`` slot, a registered rule of its name, the rule
    of a formula-table entry from its derivative formula (:func:`formula_rule`), or the
    generic rule of a primitive linear (jointly) or multilinear in its array arguments;
    None when it has none. The rule found is kept in the slot."""
    rule = prim.taylor
    if rule is None:
        rule = _REGISTERED.get(prim.name)
        if rule is None and getattr(prim, "formulas", None) is not None:
            rule = formula_rule(prim)
        elif rule is None and prim.linear:
            rule = linear_rule(prim) if prim.joint else multilinear_rule(prim)
        prim.taylor = rule
    return rule


class NoTaylorRuleError(NotImplementedError):
    """A primitive met in Taylor mode has no rule for the series it was given."""


def _constant_outside(prim: Any, series: Sequence[Series]) -> None:
    """Raise unless every argument outside ``prim.linear`` is a constant series."""
    for i, s in enumerate(series):
        if len(s) > 1 and i not in prim.linear:
            raise NoTaylorRuleError(
                f"dualad: {prim.name} is linear in its arguments {prim.linear!r} only, and its "
                f"argument {i} carries a Taylor series (a jet), for which it has no Taylor "
                "rule. Register one (dualad.rules.taylor.register({"
                f"'{prim.name}': rule}})), or keep that argument constant in the jet"
            )


def _per_output(prim: Any, ys: list[Any]) -> Any:
    """A list of results (tuples for a ``multi`` primitive) as its series (a tuple of them)."""
    if prim.multi:
        return tuple(list(col) for col in zip(*ys, strict=True))
    return ys


def _zeros_of(y0: Any) -> Any:
    return tuple(_zero_like(c) for c in y0) if y0.__class__ is tuple else _zero_like(y0)


def linear_rule(prim: Any) -> Rule:
    """The Taylor rule of a primitive linear jointly in its arguments ``prim.linear``
    (sums, reshapes, indexing, ``where``'s branches, FFTs): the primitive on each
    coefficient, ``y_k = prim(x_k)``; arguments outside ``linear`` must be constant."""
    def rule(*series: Series, **params: Any) -> Any:
        _constant_outside(prim, series)
        ys = [prim(*(s[0] for s in series), **params)]
        for k in range(1, _order(*series) + 1):
            if not any(k < len(s) for s in series):
                ys.append(_zeros_of(ys[0]))
                continue
            ys.append(prim(*(s[k] if k < len(s) else (_zero_like(s[0]) if i in prim.linear
                                                        else s[0])
                             for i, s in enumerate(series)), **params))
        return _per_output(prim, ys)

    rule.__name__ = rule.__qualname__ = f"{prim.name}_linear"
    return rule


def _compositions(orders: list[int], k: int) -> Iterable[tuple[int, ...]]:
    """The ways of writing ``k`` as ``j_1 + ... + j_n`` with ``0 <= j_i <= orders[i]``."""
    if len(orders) == 1:
        if k <= orders[0]:
            yield (k,)
        return
    for j in range(min(k, orders[0]) + 1):
        for rest in _compositions(orders[1:], k - j):
            yield (j, *rest)


def multilinear_rule(prim: Any) -> Rule:
    """The Taylor rule of a primitive linear in each of its arguments ``prim.linear`` one
    at a time (``matmul``, ``einsum``): the Cauchy convolution
    ``y_k = sum_{j_1 + ... + j_n = k} prim(x1_{j_1}, ..., xn_{j_n})``; arguments outside
    ``linear`` must be constant."""
    def rule(*series: Series, **params: Any) -> Any:
        _constant_outside(prim, series)
        ys = [prim(*(s[0] for s in series), **params)]
        active = [i for i, s in enumerate(series) if len(s) > 1]
        for k in range(1, _order(*series) + 1):
            terms = []
            for js in _compositions([len(series[i]) - 1 for i in active], k):
                args = [s[0] for s in series]
                for i, j in zip(active, js, strict=True):
                    args[i] = series[i][j]
                terms.append(prim(*args, **params))
            ys.append(_sum(terms) if terms else _zeros_of(ys[0]))
        return _per_output(prim, ys)

    rule.__name__ = rule.__qualname__ = f"{prim.name}_multilinear"
    return rule


_series_of: Callable[..., Series] | None = None  # see install_series_evaluator


def install_series_evaluator(evaluate: Callable[..., Series]) -> None:
    """Install ``evaluate(fn, series, K) -> series``: ``fn`` (a function of Tensors) on
    series, truncated at order K — Taylor mode itself, which lives above this layer
    (``dualad.taylor`` installs it). :func:`formula_rule` evaluates derivative formulas
    with it."""
    global _series_of
    _series_of = evaluate


def formula_rule(prim: Any) -> Rule:
    """The Taylor rule of a formula-table entry from its derivative formulas alone, so a new
    entry of the table gets its rule for free (:func:`derivative_rule` on the compiled
    formulas; a formula reading ``y`` takes the output's series to order K-1 from this rule
    one order lower)."""
    compiled = [E.compile_formula(src, prim.nin) for src in prim.formulas]
    rule = derivative_rule(prim, [fn for fn, _ in compiled],
                           any("out" in reads for _, reads in compiled))
    rule.__name__ = rule.__qualname__ = f"{prim.name}_from_formula"
    return rule


def derivative_rule(prim: Any, derivatives: Sequence[Callable[..., Any] | int | None],
                    reads_out: bool = False) -> Rule:
    """The Taylor rule of an elementwise primitive from its partial derivatives:
    ``y' = sum_i d_i x_i'`` read coefficient-wise (:func:`from_derivative`'s recurrence),
    each ``d_i = derivatives[i](*args, y)`` (a function of Tensors) expanded to order K-1 by
    Taylor mode itself. An integer is a constant partial derivative (0: none); None: none in
    closed form, so an argument carrying a series there raises, naming it. A constant
    argument (a series of one coefficient) needs no derivative."""

    def rule(*args: Series) -> Series:
        K = _order(*args)
        y0 = _f(prim, *(a[0] for a in args))
        if K == 0:
            return [y0]
        if _series_of is None:
            raise RuntimeError("dualad: Taylor mode is not installed (import dualad)")
        low = [list(a[:K]) for a in args]  # the arguments to order K-1
        y = rule(*low) if reads_out else [y0]
        ds = []
        for i, (a, d) in enumerate(zip(args, derivatives, strict=True)):
            if len(a) < 2:
                ds.append(None)
            elif d is None:
                raise NoTaylorRuleError(
                    f"dualad: {prim.name}'s derivative in its argument {i} has no closed form, "
                    "so that argument must be constant in a jet (one coefficient)")
            elif d.__class__ is int:
                ds.append(None if d == 0 else [d] + [0] * (K - 1))
            else:
                ds.append(_series_of(d, [*low, y], K - 1))
        return _chain([y0], args, ds, K)

    rule.__name__ = rule.__qualname__ = f"{prim.name}_from_derivatives"
    return rule
