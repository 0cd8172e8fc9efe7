"""Nonlinear reductions: amax and amin (prod and cumprod: ``rules.products``).

Their JVPs are sums of tangents weighted by coefficients computed from the
primals with ordinary (differentiable) ops, so higher derivatives follow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.dispatch import Primitive, apply
from . import elementwise as E
from . import linear as L

_mul, _div, _eq = E.PRIMS["multiply"], E.PRIMS["divide"], E.PRIMS["equal"]
_or, _and, _isnan = E.PRIMS["logical_or"], E.PRIMS["logical_and"], E.PRIMS["isnan"]


def _extreme_jvp(primals: Any, tangents: Any, out: Any, *, axis: tuple[int, ...],
                 keepdims: bool) -> Any:
    # Ties share the tangent evenly (torch's amax/amin convention); a NaN result is
    # attained by every NaN it reduced (NaN matches NaN, as torch's evenly spread
    # gradient of max() has it), so an all-NaN slice spreads 1/n, not 0/0.
    x, t = primals[0], tangents[0]
    yk = out if keepdims else apply(L.reshape, out, shape=_kept(x.shape, axis))
    mask = apply(_eq, x, yk)
    od = out._data
    if od.__class__ is not np.ndarray or np.isnan(od).any():  # (lazy arrays: never computed)
        mask = apply(_or, mask, apply(_and, apply(_isnan, x), apply(_isnan, yk)))
    count = apply(L.reduce_sum, apply(L.astype, mask, dtype=x.dtype), axis=axis, keepdims=True)
    w = apply(_div, apply(L.astype, mask, dtype=x.dtype), count)
    return apply(L.reduce_sum, apply(_mul, t, w), axis=axis, keepdims=keepdims)


def _kept(shape: tuple[int, ...], axis: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axis else d for i, d in enumerate(shape))


def _reduce(name: str, fn: Any) -> Primitive:
    def impl(a: Any, *, axis: tuple[int, ...], keepdims: bool) -> Any:
        return fn(a, axis=axis, keepdims=keepdims)

    return Primitive(name, impl, _extreme_jvp, reads=(0, "out"))


amax = _reduce("amax", np.amax)
amin = _reduce("amin", np.amin)


for _p in (amax, amin):
    _p.batch = None
del _p
