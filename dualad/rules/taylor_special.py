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
- the functions differentiable in some arguments only (``gammainc``, ``betainc``, ``stdtr``,
  the Bessel functions of any order) take the rule :func:`dualad.rules.taylor.derivative_rule`
  makes from the same derivative functions as their first-order rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..core import dispatch
from ..core.tensor import Tensor
from .taylor import Rule, Series, _sum


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


SPECIAL_TAYLOR_RULES: dict[str, Rule] = {
    "polygamma": polygamma,
}
"""The Taylor rules of ``dualad.scipy.special``'s primitives that ``TAYLOR_RULES`` lacks,
by primitive name (the primitives found once that module is imported)."""
