"""Taylor-coefficient rules of ``dualad.scipy.special``'s functions that
:mod:`dualad.rules.taylor` has no rule for.

The series convention is :mod:`dualad.rules.taylor`'s. The primitives are found by name
among every primitive made (``dualad.scipy.special`` makes them, above this layer), so a
rule works once that module is imported.

- ``polygamma(n, x)``, ``digamma = polygamma(0, .)``, ``gammaln`` (``gammaln' = digamma``):
  every derivative at the primal is a polygamma value, so the output is the composition
  ``y(t) = sum_m f^(m)(x_0) / m! (x(t) - x_0)^m`` (Faa di Bruno through powers of a series
  without constant term, ``O(K^3)``);
- ``gamma = sign exp(gammaln)``, ``beta = sign exp(betaln)``, ``betaln = gammaln(a) +
  gammaln(b) - gammaln(a + b)``: ``exp``'s recurrence over those series;
- ``ndtr`` from ``erf``'s derivative, ``log_ndtr`` from ``y' = exp(-x^2/2 - y) x' /
  sqrt(2 pi)`` (the formula table's, finite in the far left tail: the exponential's series
  is computed online from the output's coefficients);
- ``xlog1py(a, b) = a log1p(b)``: a Cauchy product;
- ``gammainc``, ``gammaincc``, ``betainc``, ``betaincc``, ``stdtr``: differentiable in
  their integration limit only, as their first-order rules are (a series in a shape
  parameter raises ``NotImplementedError``); the derivative, a density, is
  ``exp(log-density)`` with the log-density's series from the ``log``/``log1p`` rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core import dispatch
from ..core.tensor import Tensor
from . import taylor as T
from .taylor import Rule, Series, _chain, _exp_series, _f, _live_chain, _order, _pad, _sum

_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)


def _prim(name: str) -> Any:
    """The primitive ``name`` (made by ``dualad.scipy.special``, which this layer does not
    import)."""
    for p in reversed(dispatch.every):
        if p.name == name:
            return p
    raise LookupError(f"no Taylor rule for {name!r} before dualad.scipy.special is imported")


def _on(name: str, *args: Any, **params: Any) -> Any:
    r = _prim(name)(*args, **params)
    return r._data if isinstance(r, Tensor) and not any(isinstance(a, Tensor)
                                                         for a in args) else r


# -- compositions with known derivatives ------------------------------------------------------


def _compose(x: Series, derivs: Callable[[int], Any], y0: Any) -> Series:
    """``y(t) = sum_m derivs(m) / m! (x(t) - x_0)^m``, ``derivs(m)`` the ``m``-th
    derivative at ``x_0`` (``m >= 1``), the powers of ``x - x_0`` by Cauchy products."""
    K = len(x) - 1
    delta = [0] + list(x[1:])
    power: Series = delta
    ys = [y0] + [0] * K
    for m in range(1, K + 1):
        if m > 1:  # (power's coefficients below m are zero: only those from m on)
            power = [0] * m + [_sum(power[j] * delta[k - j] for j in range(m - 1, k))
                               for k in range(m, K + 1)]
        c = derivs(m) * (1.0 / math.factorial(m))
        for k in range(m, K + 1):
            ys[k] = ys[k] + c * power[k]
    return ys


def polygamma(x: Series, *, n: int) -> Series:
    """``psi^(n)(x)``: its ``m``-th derivative is ``psi^(n+m)``."""
    return _compose(x, lambda m: _on("polygamma", x[0], n=n + m), _on("polygamma", x[0], n=n))


def digamma(x: Series) -> Series:
    """``psi(x)``: its ``m``-th derivative is ``psi^(m)``."""
    return _compose(x, lambda m: _on("polygamma", x[0], n=m), _on("digamma", x[0]))


def gammaln(x: Series) -> Series:
    """``log |Gamma(x)|``: its ``m``-th derivative is ``psi^(m-1)``."""
    return _compose(x, lambda m: _on("polygamma", x[0], n=m - 1), _on("gammaln", x[0]))


def gamma(x: Series) -> Series:
    """``Gamma(x) = Gamma(x_0) exp(gammaln(x) - gammaln(x_0))`` (``y' = y psi(x) x'``)."""
    u = gammaln(x)
    return _exp_series([0] + u[1:], _on("gamma", x[0]), len(x) - 1)


def _betaln_tail(a: Series, b: Series) -> Series:
    """The coefficients ``1..K`` of ``gammaln(a) + gammaln(b) - gammaln(a + b)`` (entry 0
    is 0)."""
    K = _order(a, b)
    ab = [x + y for x, y in zip(_pad(a, K + 1), _pad(b, K + 1), strict=True)]
    parts = [gammaln(_pad(s, K + 1)) for s in (a, b) if len(s) > 1]  # (a constant: none)
    lab = gammaln(ab)
    return [0] + [_sum(p[k] for p in parts) - lab[k] for k in range(1, K + 1)]


def betaln(a: Series, b: Series) -> Series:
    """``log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)`` (the primal from
    ``betaln``, which keeps its digits where that sum cancels)."""
    return [_on("betaln", a[0], b[0])] + _betaln_tail(a, b)[1:]


def beta(a: Series, b: Series) -> Series:
    """``B(a, b) = B(a_0, b_0) exp(betaln(a, b) - betaln(a_0, b_0))``."""
    return _exp_series(_betaln_tail(a, b), _on("beta", a[0], b[0]), _order(a, b))


# -- the normal distribution's CDF --------------------------------------------------------------


def ndtr(x: Series) -> Series:
    """``Phi(x) = (1 + erf(x / sqrt 2)) / 2``: ``y' = exp(-u^2) u' / sqrt(pi)``,
    ``u = x / sqrt 2``."""
    return T._erf([c * _SQRT_HALF for c in x], _on("ndtr", x[0]), _INV_SQRT_PI)


def log_ndtr(x: Series) -> Series:
    """``log Phi(x)``: ``y' = exp(v) x' / sqrt(2 pi)``, ``v = -x^2 / 2 - y``, the series of
    ``exp(v)`` computed online from ``y``'s coefficients as they come (no ``Phi`` divides:
    finite in the far left tail, where ``Phi`` underflows). There ``v_k`` is a difference
    of terms about ``x_0^2`` times larger than itself, so each order loses some digits:
    relative error 2e-11 at order 3 and 8e-9 at order 6 for ``x_0 = -30``."""
    K = len(x) - 1
    q = [-0.5 * s for s in T._square_series(x, K)]
    vs: list[Any] = []
    es: list[Any] = []

    def d_of(ys: list[Any], m: int) -> Any:
        vs.append(q[m] - ys[m])
        if m == 0:
            es.append(_f(T.V.exp, vs[0]))
        else:
            es.append(_sum(j * vs[j] * es[m - j] for j in range(1, m + 1)) * (1.0 / m))
        return es[m] * _INV_SQRT_2PI

    return _live_chain(_on("log_ndtr", x[0]), x, d_of, K)


def xlog1py(a: Series, b: Series) -> Series:
    """``a log1p(b)``: a Cauchy product (the primal from ``xlog1py``: 0 where ``a = 0``)."""
    K = _order(a, b)
    y = T.multiply(_pad(a, K + 1), T.log1p(_pad(b, K + 1)))
    return [_on("xlog1py", a[0], b[0])] + y[1:]


# -- differentiable in the integration limit only ----------------------------------------------


def _limit_only(name: str, shapes: tuple[str, ...], log_density: Any, sign: float) -> Rule:
    """The rule of ``name(*shapes, x)``, ``y' = sign exp(log_density(shapes, x)) x'``."""
    def rule(*args: Series) -> Series:
        *ps, x = args
        for p, pname in zip(ps, shapes, strict=True):
            if len(p) > 1:
                raise NotImplementedError(
                    f"dualad.scipy.special.{name}: its derivative in {pname} has no closed "
                    "form, so it has no Taylor coefficients in it; only the last argument "
                    "may carry a series")
        p0 = [p[0] for p in ps]
        y0 = _on(name, *p0, x[0])
        K = len(x) - 1
        if K == 0:
            return [y0]
        v = log_density(p0, x[: K])
        d = _exp_series([0] + v[1:], _f(T.V.exp, v[0]), K - 1)
        return _chain([y0], [x], [[sign * c for c in d]], K)

    rule.__name__ = rule.__qualname__ = name
    rule.__doc__ = f"``{name}``, a series in its last argument: ``y' = density x'``."
    return rule


def _gamma_log_density(p: list[Any], x: Series) -> Series:
    """``(a - 1) log x - x - gammaln(a)``."""
    (a,) = p
    lx = T.log(x)
    return [(a - 1) * lx[0] - x[0] - _on("gammaln", a)] + [(a - 1) * c - xc for c, xc in
                                                           zip(lx[1:], x[1:], strict=True)]


def _beta_log_density(p: list[Any], x: Series) -> Series:
    """``(a - 1) log x + (b - 1) log1p(-x) - betaln(a, b)``."""
    a, b = p
    lx, l1 = T.log(x), T.log1p([-c for c in x])
    out = [(a - 1) * u + (b - 1) * w for u, w in zip(lx, l1, strict=True)]
    out[0] = out[0] - _on("betaln", a, b)
    return out


def _t_log_density(p: list[Any], t: Series) -> Series:
    """``gammaln((df + 1) / 2) - gammaln(df / 2) - log(df pi) / 2 - (df + 1) / 2
    log1p(t^2 / df)``."""
    (df,) = p
    h = (df + 1) * 0.5
    sq = T._square_series(t, len(t) - 1)
    lg = T.log1p([c / df for c in sq])
    c0 = _on("gammaln", h) - _on("gammaln", df * 0.5) - 0.5 * _f(T.V.log, df * math.pi)
    return [c0 - h * lg[0]] + [-h * c for c in lg[1:]]


SPECIAL_TAYLOR_RULES: dict[str, Rule] = {
    "polygamma": polygamma,
    "digamma": digamma,
    "gammaln": gammaln,
    "gamma": gamma,
    "betaln": betaln,
    "beta": beta,
    "ndtr": ndtr,
    "log_ndtr": log_ndtr,
    "xlog1py": xlog1py,
    "gammainc": _limit_only("gammainc", ("a",), _gamma_log_density, 1.0),
    "gammaincc": _limit_only("gammaincc", ("a",), _gamma_log_density, -1.0),
    "betainc": _limit_only("betainc", ("a", "b"), _beta_log_density, 1.0),
    "betaincc": _limit_only("betaincc", ("a", "b"), _beta_log_density, -1.0),
    "stdtr": _limit_only("stdtr", ("df",), _t_log_density, 1.0),
}
"""The Taylor rules of ``dualad.scipy.special``'s primitives that ``TAYLOR_RULES`` lacks,
by primitive name (the primitives found once that module is imported)."""
