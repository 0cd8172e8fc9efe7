"""References for Taylor-coefficient rules: nested dual levels and mpmath.

``nested_series`` is a different mode as reference: the primitive applied to the polynomial
path ``A(t) = sum_k A_k t^k`` with ``t`` a dual number at ``K`` nested levels (``t = e_1 +
... + e_K``, each ``e_i^2 = 0``), so the coefficient of ``e_1 ... e_m`` is ``y^(m)(0)`` and
``y_m = y^(m)(0) / m!``. ``mp_series`` takes the coefficients of any function of ``t`` that
mpmath evaluates, entry by entry, by mpmath's numerical Taylor expansion at high precision.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath as mp
import numpy as np

import dualad as da


def _path(series: Sequence[Any], t: Any) -> Any:
    a, p = da.tensor(series[0]), t
    for c in series[1:]:
        a = a + p * da.tensor(c)
        p = p * t
    return a


def _coefficient(y: Any, levels: list[int], m: int) -> Any:
    """The part of ``y`` along ``e_1 ... e_m`` (tangents at the ``m`` innermost levels)."""
    for i in reversed(range(len(levels))):
        u = da.unpack_dual(y, level=levels[i])
        y = u.tangent if i < m else u.primal
        if y is None:
            return None
    return np.asarray(y._data)


def nested_series(prim: Any, args: Sequence[Sequence[Any]], order: int,
                  **params: Any) -> Any:
    """The Taylor coefficients ``0..order`` of ``prim(*A(t), **params)`` by ``order`` nested
    dual levels: one list per output (a tuple of them for a primitive with several)."""
    with contextlib.ExitStack() as stack:
        levels, t = [], da.tensor(0.0)
        for _ in range(order):
            level = stack.enter_context(da.dual_level())
            levels.append(level)
            t = da.make_dual(t, da.tensor(1.0), level=level)
        out = prim(*[_path(s, t) for s in args], **params)
        outs = out if isinstance(out, tuple) else (out,)
        res = []
        for o in outs:
            ys = []
            for m in range(order + 1):
                c = _coefficient(o, levels, m)
                ys.append(np.zeros(o.shape) if c is None else c / math.factorial(m))
            res.append(ys)
    return tuple(res) if isinstance(out, tuple) else res[0]


def mp_series(fn: Callable[[Any], Any], order: int, shape: tuple[int, ...]) -> list[np.ndarray]:
    """The Taylor coefficients ``0..order`` at ``t = 0`` of ``fn(t)`` (an mpmath matrix or
    number, or a list of them, of ``shape`` entries), complex128 or float64."""
    cache: dict[Any, list[Any]] = {}

    def flat(t: Any) -> list[Any]:
        if t not in cache:
            v = fn(t)
            if isinstance(v, mp.matrix):
                v = [x for row in v.tolist() for x in row]
            cache[t] = list(v) if isinstance(v, list) else [v]
        return cache[t]

    n = int(np.prod(shape))
    entries = [mp.taylor(lambda t, i=i: flat(t)[i], 0, order) for i in range(n)]
    cplx = any(isinstance(c, mp.mpc) and c.imag != 0 for e in entries for c in e)
    dt = complex if cplx else float
    return [np.array([dt(e[k]) for e in entries]).reshape(shape) for k in range(order + 1)]


def mp_path(series: Sequence[np.ndarray]) -> Callable[[Any], Any]:
    """``t -> A(t)`` as an mpmath matrix."""
    mats = [mp.matrix(np.asarray(c).tolist()) for c in series]

    def path(t: Any) -> Any:
        acc = mats[0]
        for k, c in enumerate(mats[1:], 1):
            acc = acc + c * t ** k
        return acc

    return path
