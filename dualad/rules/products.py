"""Products along axes: prod and cumprod, and ``cumprod``'s NumPy argument handling.

Their JVPs weigh the tangents by products of the other factors, computed from the primals
with the rules' vocabulary (differentiable ops), so higher derivatives follow; without
division where a factor may be 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import like as _like
from ..core.dispatch import Primitive, apply
from ..core.tensor import _make
from . import elementwise as E
from . import linear as L
from . import vocabulary as F
from ._util import norm_axis as _norm_axis
from .vocabulary import asarray_t, astype, ravel

_mul, _div = E.PRIMS["multiply"], E.PRIMS["divide"]


def _others_product(x: Any, axis: int) -> Any:
    """prod_{j != i} x_j along ``axis`` without division (exact at zeros)."""
    n = x.shape[axis]
    one = F.ones_like(F.take(x, [0], axis=axis))
    head = np.arange(n - 1)  # (an intp array even when empty: n == 1)
    left = cumprod(F.concatenate([one, F.take(x, head, axis=axis)], axis), axis)
    rx = F.flip(x, axis)
    right = cumprod(F.concatenate([one, F.take(rx, head, axis=axis)], axis), axis)
    return left * F.flip(right, axis)


def _prod_jvp(primals: Any, tangents: Any, out: Any, *, axis: tuple[int, ...],
              keepdims: bool) -> Any:
    x, t = primals[0], tangents[0]
    if not axis or x.size == 0:
        return apply(L.reduce_sum, t, axis=axis, keepdims=keepdims) if axis else t
    # Merge the reduced axes into one trailing axis, weigh, and sum.
    rest = [i for i in range(x.ndim) if i not in axis]
    perm = tuple(rest) + axis
    shp = tuple(x.shape[i] for i in rest) + (-1,)
    xm = F.reshape(F.transpose(x, perm), shp)
    tm = F.reshape(F.transpose(t, perm), shp)
    r = apply(L.reduce_sum, apply(_mul, tm, _others_product(xm, -1)), axis=(len(rest),),
              keepdims=False)
    return F.reshape(r, out.shape)


prod_p = Primitive(
    "prod",
    lambda a, *, axis, keepdims: np.prod(a, axis=axis, keepdims=keepdims),
    _prod_jvp,
    reads=(0,),
)


def _cumprod_jvp(primals: Any, tangents: Any, out: Any, *, axis: int) -> Any:
    x, t = primals[0], tangents[0]
    if _divisible(x._data, out._data):
        # dy = y * cumsum(t / x): two passes, exact where y / x_i is the product of the others
        return apply(_mul, out, apply(L.cumsum, apply(_div, t, x), axis=axis))
    # Exact anywhere: dy_k = sum_{i<=k} t_i prod_{j<=k, j!=i} x_j  (O(n^2) along the axis)
    n = x.shape[axis]
    xm, tm = F.moveaxis(x, axis, -1), F.moveaxis(t, axis, -1)
    eye = _B.eye(n, dtype=bool, like=_like(x._data))  # constants on x's device (NEP 35)
    rows = F.where(eye, 1, F.expand_dims(xm, -2))  # row i: x with x_i replaced by 1
    upper = np.tril(_B.ones((n, n), bool, like=_like(x._data))).T
    m = F.where(upper, cumprod(rows, -1), 0)  # keep k >= i
    return F.moveaxis(F.einsum("...i,...ik->...k", tm, m), -1, axis)


def _divisible(x: Any, y: Any) -> bool:
    """Whether ``y / x_i`` recovers the product of the other factors: no x is 0 and no 1 / x
    overflows, no running product underflowed to 0 or a subnormal (which keeps too few
    digits: at x = [1e-170, 1e-170, 2] it is 0, yet d y_1 / d x_0 = 1e-170) or overflowed."""
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        return False  # (a lazy array takes the exact branch: deciding would compute it)
    fin = np.finfo(y.dtype)
    ax, ay = np.abs(x), np.abs(y)
    return bool((ax > 1 / fin.max).all() and (ay >= fin.tiny).all() and (ay <= fin.max).all())


cumprod_p = Primitive(
    "cumprod",
    lambda a, *, axis: np.cumprod(a, axis=axis),
    _cumprod_jvp,
    reads=(0, "out"),
)


for _p in (prod_p, cumprod_p):
    _p.batch = None
del _p


def cumprod(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """``numpy.cumprod`` (``axis=None`` flattens first; no ``out=``).

    Examples
    --------
    >>> x = dualad.tensor([2.0, 3.0, 4.0], requires_grad=True)
    >>> y = dnp.cumprod(x); y.detach()
    tensor([ 2.,  6., 24.])
    >>> y[-1].backward(); x.grad
    tensor([12.,  8.,  6.])
    """
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if axis is None:
        a, axis = ravel(a), 0
    if a.dtype.kind not in "fc":
        return _make(np.cumprod(a._data, axis=axis))
    return apply(cumprod_p, a, axis=_norm_axis(axis, a.ndim))


# -- non-differentiable results ---------------------------------------------------------------
