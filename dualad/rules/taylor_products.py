"""Taylor-coefficient rules of the products and the choosing reductions: ``prod``,
``cumprod`` (:mod:`dualad.rules.products`), ``amax``, ``amin``
(:mod:`dualad.rules.reductions`), and ``where`` (:mod:`dualad.rules.linear`: linear in its
values, not in its condition).

The series convention is :mod:`dualad.rules.taylor`'s. A product of ``n`` factors is a
Cauchy product of their series, taken as a balanced tree (``log2 n`` vectorized Cauchy
products, ``O(K^2 log n)`` array operations, no division: exact where a factor is 0);
``cumprod`` is the same tree as a prefix scan (Hillis-Steele: ``y <- y * shift(y, 2^s)``).
``amax`` and ``amin`` are linear near the primal, with the first-order rule's weights (the
positions that attain the extreme at ``x_0``, ties sharing evenly): each coefficient goes
through the first-order JVP, linear in its tangent.
"""

from __future__ import annotations

from typing import Any

from ..core.tensor import Tensor
from . import linear as Lin
from . import products as P
from . import reductions as R
from . import vocabulary as V
from .taylor import Rule, Series, _f, multiply


def _plain(out: Any, *inputs: Any) -> Any:
    if any(isinstance(a, Tensor) for a in inputs) or not isinstance(out, Tensor):
        return out
    return out._data


def _identity_series(like: Any, K: int) -> Series:
    """The series of the constant 1 (shaped like ``like``)."""
    return [_f(V.ones_like, like)] + [_f(V.zeros_like, like) for _ in range(K)]


def _last_axis(x: Series, axis: tuple[int, ...]) -> Series:
    """Each coefficient with the axes ``axis`` moved to the end and merged into one."""
    nd = x[0].ndim
    rest = [i for i in range(nd) if i not in axis]
    perm = tuple(rest) + tuple(axis)
    shape = tuple(x[0].shape[i] for i in rest) + (-1,)
    return [_f(V.reshape, _f(V.transpose, c, perm), shape) for c in x]


def _tree_product(x: Series) -> Series:
    """The product along the last axis, by halving: pairs multiplied as series."""
    K = len(x) - 1
    while x[0].shape[-1] > 1:
        if x[0].shape[-1] % 2:
            one = _identity_series(x[0][..., :1], K)
            x = [_f(V.concatenate, [c, o], -1) for c, o in zip(x, one, strict=True)]
        x = multiply([c[..., 0::2] for c in x], [c[..., 1::2] for c in x])
    return [c[..., 0] for c in x]


def prod(x: Series, *, axis: tuple[int, ...], keepdims: bool) -> Series:
    """The product over ``axis``: a balanced tree of Cauchy products."""
    y0 = _plain(P.prod_p(x[0], axis=axis, keepdims=keepdims), x[0])
    if len(x) == 1:
        return [y0]
    if not axis:
        return [y0] + list(x[1:])
    if x[0].size == 0:
        return [y0] + [_f(V.zeros_like, y0) for _ in x[1:]]
    ys = _tree_product(_last_axis(x, axis))
    return [y0] + [_f(V.reshape, c, y0.shape) for c in ys[1:]]


def cumprod(x: Series, *, axis: int) -> Series:
    """The running product along ``axis``: a prefix scan of Cauchy products."""
    y0 = _plain(P.cumprod_p(x[0], axis=axis), x[0])
    K = len(x) - 1
    if K == 0:
        return [y0]
    y = [_f(V.moveaxis, c, axis, -1) for c in x]
    n, shift = y[0].shape[-1], 1
    while shift < n:
        one = _identity_series(y[0][..., :shift], K)
        before = [_f(V.concatenate, [o, c[..., : n - shift]], -1)
                  for o, c in zip(one, y, strict=True)]
        y = multiply(y, before)
        shift *= 2
    return [y0] + [_f(V.moveaxis, c, -1, axis) for c in y[1:]]


def _through_jvp(prim: Any) -> Rule:
    """The rule of a primitive linear near its primal: each coefficient ``k >= 1`` through
    its first-order JVP (linear in the tangent, its weights read from the primal)."""
    def rule(x: Series, **params: Any) -> Series:
        x0 = x[0] if isinstance(x[0], Tensor) else V.asarray_t(x[0])
        y0 = prim(x0, **params)
        ys = [prim.jvp((x0,), (V.asarray_t(c),), y0, **params) for c in x[1:]]
        return [_plain(c, *x) for c in [y0] + ys]

    rule.__name__ = rule.__qualname__ = prim.name
    rule.__doc__ = f"``{prim.name}``, linear near the primal: its JVP on each coefficient."
    return rule


def where(condition: Series, a: Series, b: Series) -> Series:
    """``where(c, a, b)``: the condition at ``t = 0`` chooses each coefficient (it is
    piecewise constant: its own series carries no derivative)."""
    K = max(len(a), len(b)) - 1
    c0 = condition[0]
    y0 = _plain(Lin.where(c0, a[0], b[0]), c0, a[0], b[0])
    ys = [y0]
    for k in range(1, K + 1):
        # (a constant branch's zeros take the result's dtype: zeros like a Python 0 would
        # be integers, and promote a float32 result to float64)
        ak = a[k] if k < len(a) else _f(V.zeros_like, y0)
        bk = b[k] if k < len(b) else _f(V.zeros_like, y0)
        ys.append(_plain(Lin.where(c0, ak, bk), c0, ak, bk))
    return ys


amax = _through_jvp(R.amax)
amin = _through_jvp(R.amin)


PRODUCTS_TAYLOR_RULES: dict[str, Rule] = {
    "prod": prod,
    "cumprod": cumprod,
    "amax": amax,
    "amin": amin,
    "where": where,
}
"""The Taylor rules of the products and the choosing reductions, by primitive name."""
