"""Taylor-coefficient rules of ``dualad.scipy.special``'s functions outside the formula table.

The functions of the formula table (``gammaln``, ``digamma``, ``gamma``, ``beta``,
``betaln``, ``ndtr``, ``log_ndtr``, ``xlog1py``, ...) need no entry here: their rules come
from their derivative formulas (:func:`dualad.rules.taylor.formula_rule`).

The series convention is :mod:`dualad.rules.taylor`'s. The primitives are found by name
among every primitive made (``dualad.scipy.special`` makes them, above this layer), so a
rule works once that module is imported.

- ``polygamma(n, x)``: every derivative at the primal is a polygamma value, so the output
  is the composition ``y(t) = sum_m psi^(n+m)(x_0) / m! (x(t) - x_0)^m`` (Faa di Bruno
  through powers of a series without constant term, ``O(K^3)``);
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
from .taylor import Rule, Series, _chain, _exp_series, _f, _sum

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
    "gammainc": _limit_only("gammainc", ("a",), _gamma_log_density, 1.0),
    "gammaincc": _limit_only("gammaincc", ("a",), _gamma_log_density, -1.0),
    "betainc": _limit_only("betainc", ("a", "b"), _beta_log_density, 1.0),
    "betaincc": _limit_only("betaincc", ("a", "b"), _beta_log_density, -1.0),
    "stdtr": _limit_only("stdtr", ("df",), _t_log_density, 1.0),
}
"""The Taylor rules of ``dualad.scipy.special``'s primitives that ``TAYLOR_RULES`` lacks,
by primitive name (the primitives found once that module is imported)."""
