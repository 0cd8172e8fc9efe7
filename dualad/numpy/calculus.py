"""Differences, integrals and interpolation: ``diff``, ``gradient``, ``trapezoid``, ``interp``, ...
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import like as _device_like
from ..backends.namespace import to_kind as _to_kind
from ..rules._util import norm_axes as _norm_axes
from ..rules._util import norm_axis as _norm_axis
from ..rules.elementwise import PRIMS as _P
from ..rules.vocabulary import (
    _raw,
    asarray_t,
    astype,
    broadcast_to,
    concatenate,
    getitem,
    ravel,
    reshape,
    sum,
    take,
    where,
)
from .ufuncs import divmod

__all__ = ["diff", "ediff1d", "gradient", "interp", "trapezoid", "unwrap"]


def diff(a: Any, n: int = 1, axis: int = -1) -> Any:
    """``numpy.diff``: the n-th discrete difference along ``axis`` (slices and a subtraction;
    no ``prepend=``/``append=``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 4.0, 9.0], requires_grad=True)
    >>> d = dnp.diff(x); d.detach()
    tensor([3., 5.])
    >>> d[0].backward(); x.grad
    tensor([-1.,  1.,  0.])
    """
    a = asarray_t(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    ax = _norm_axis(axis, a.ndim)
    pre = (slice(None),) * ax
    for _ in range(n):
        a = getitem(a, pre + (slice(1, None),)) - getitem(a, pre + (slice(None, -1),))
    return a


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """``numpy.gradient``: second-order central differences inside, one-sided at the
    edges (scalar spacings or coordinate arrays, which are constants).

    Examples
    --------
    >>> dnp.gradient(dualad.tensor([1.0, 4.0, 9.0, 16.0]))
    tensor([3., 4., 6., 7.])
    """
    f = asarray_t(f)
    nd = f.ndim
    axes = tuple(range(nd)) if axis is None else _norm_axes(axis, nd)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    if not varargs:
        dx: list[Any] = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(_raw(varargs[0])) == 0:
        dx = [_raw(varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        dx = []
        for ax, d in zip(axes, varargs, strict=True):
            d = np.asarray(_raw(d))
            if d.ndim == 0:
                dx.append(d)
                continue
            if d.ndim != 1:
                raise ValueError("distances must be either scalars or 1d")
            if len(d) != f.shape[ax]:
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            d = np.diff(d.astype(np.float64) if d.dtype.kind in "biu" else d)
            dx.append(d[0] if d.size and (d == d[0]).all() else d)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = f.dtype if f.dtype.kind in "fc" else np.dtype(np.float64)
    if f.dtype.kind not in "fc":
        f = astype(f, np.float64)
    outs = []
    for ax, h in zip(axes, dx, strict=True):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")

        def sl(lo: Any, hi: Any, ax: int = ax) -> Any:
            return getitem(f, (slice(None),) * ax + (slice(lo, hi),))

        def along(c: Any, ax: int = ax) -> Any:  # a coefficient array along ``ax``
            return np.reshape(c, (-1,) + (1,) * (nd - ax - 1)) if np.ndim(c) else c

        uniform = np.ndim(h) == 0
        if uniform:
            mid = (sl(2, None) - sl(None, -2)) / (2.0 * h)
        else:
            h1, h2 = h[:-1], h[1:]
            a, b, c = -h2 / (h1 * (h1 + h2)), (h2 - h1) / (h1 * h2), h1 / (h2 * (h1 + h2))
            mid = along(a) * sl(None, -2) + along(b) * sl(1, -1) + along(c) * sl(2, None)
        if edge_order == 1:
            h0, hn = (h, h) if uniform else (h[0], h[-1])
            first = (sl(1, 2) - sl(0, 1)) / h0
            last = (sl(-1, None) - sl(-2, -1)) / hn
        else:
            if uniform:
                a, b, c = -1.5 / h, 2.0 / h, -0.5 / h
                a2, b2, c2 = 0.5 / h, -2.0 / h, 1.5 / h
            else:
                h1, h2 = h[0], h[1]
                a = -(2.0 * h1 + h2) / (h1 * (h1 + h2))
                b = (h1 + h2) / (h1 * h2)
                c = -h1 / (h2 * (h1 + h2))
                h1, h2 = h[-2], h[-1]
                a2 = h2 / (h1 * (h1 + h2))
                b2 = -(h2 + h1) / (h1 * h2)
                c2 = (2.0 * h2 + h1) / (h2 * (h1 + h2))
            first = a * sl(0, 1) + b * sl(1, 2) + c * sl(2, 3)
            last = a2 * sl(-3, -2) + b2 * sl(-2, -1) + c2 * sl(-1, None)
        g = concatenate([first, mid, last], axis=ax)
        outs.append(g if g.dtype == otype else astype(g, otype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """``numpy.interp``: piecewise-linear, differentiable in ``x``, ``xp`` and ``fp``.

    Examples
    --------
    >>> fp = dualad.tensor([0.0, 10.0], requires_grad=True)
    >>> dnp.interp(0.25, [0.0, 1.0], fp).backward(); fp.grad
    tensor([0.75, 0.25])
    """
    x, xp, fp = asarray_t(x), asarray_t(xp), asarray_t(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("Data points must be 1D sequences")
    if x.ndim > 1 and not (x._data.__class__ is np.ndarray and xp._data.__class__ is np.ndarray):
        # (the points' positions index xp and fp: a lazy index array gathers by one axis)
        return reshape(interp(ravel(x), xp, fp, left, right, period), x.shape)
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length")
    if period is not None:  # NumPy's: one period, sorted, with a point of each neighbour
        p = asarray_t(period)
        if np.any(p._data == 0):
            raise ValueError("period must be a non-zero value")
        p = _P["abs"](astype(p, np.float64, copy=False))
        x = astype(x, np.float64, copy=False) % p
        xp = astype(xp, np.float64, copy=False) % p
        order = np.argsort(xp._data)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([getitem(xp, (slice(-1, None),)) - p, xp,
                          getitem(xp, (slice(0, 1),)) + p])
        fp = concatenate([getitem(fp, (slice(-1, None),)), fp, getitem(fp, (slice(0, 1),))])
        left = right = None
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    dt = np.complex128 if fp.dtype.kind == "c" else np.float64
    fp = astype(fp, dt, copy=False)
    x, xp = astype(x, np.float64, copy=False), astype(xp, np.float64, copy=False)
    k = xp.shape[0]
    if k == 1:
        y = broadcast_to(getitem(fp, 0), x.shape)
    else:
        j = np.clip(np.searchsorted(xp._data, x._data, side="right") - 1, 0, k - 2)
        x0, x1 = getitem(xp, (j,)), getitem(xp, (j + 1,))
        f0, f1 = getitem(fp, (j,)), getitem(fp, (j + 1,))
        y = f0 + (f1 - f0) * ((x - x0) / (x1 - x0))
    xd, xpd = x._data, xp._data
    lo = getitem(fp, 0) if left is None else left
    hi = getitem(fp, -1) if right is None else right
    y = where(xd < xpd[0], lo, y)
    y = where(xd > xpd[-1], hi, y)
    return astype(y, dt, copy=False)


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """``numpy.ediff1d``: differences of the flattened array, with optional ends.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 4.0, 9.0], requires_grad=True)
    >>> d = dnp.ediff1d(x, to_begin=0.0); d.detach()
    tensor([0., 3., 5.])
    >>> d.sum().backward(); x.grad
    tensor([-1.,  0.,  1.])
    """
    a = ravel(asarray_t(ary))
    parts = [diff(a)]
    for v, front in ((to_begin, True), (to_end, False)):
        if v is not None:
            if isinstance(v, (int, float, complex, list, tuple)):  # (a Python value: made
                v = _to_kind(np.asarray(v), a._data)  # on the device of ``ary``)
            t = ravel(asarray_t(v))
            if not np.can_cast(t.dtype, a.dtype, "same_kind"):
                raise TypeError("dtype of `to_begin`/`to_end` must be compatible with input "
                                "`ary` under the `same_kind` rule.")
            t = astype(t, a.dtype, copy=False)
            parts.insert(0, t) if front else parts.append(t)
    return concatenate(parts) if len(parts) > 1 else parts[0]


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """``numpy.trapezoid``: the trapezoidal rule; differentiable in ``y`` and ``x``.

    Examples
    --------
    >>> dnp.trapezoid(dualad.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    y = asarray_t(y)
    ax = _norm_axis(axis, y.ndim)
    if x is None:
        d: Any = dx
    else:
        x = asarray_t(x)
        if x.ndim == 1:
            d = reshape(diff(x), tuple(-1 if i == ax else 1 for i in range(y.ndim)))
        else:
            d = diff(x, axis=axis)
    pre = (slice(None),) * ax
    return sum(d * (getitem(y, pre + (slice(1, None),)) + getitem(y, pre + (slice(None, -1),)))
               / 2.0, axis=ax)


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * np.pi) -> Any:
    """``numpy.unwrap``: adds multiples of ``period`` (constants, found from the values), so
    the derivative is the identity's.

    Examples
    --------
    >>> p = dualad.tensor([0.0, 3.0, 6.0], requires_grad=True)
    >>> y = dnp.unwrap(p, period=4.0); y.sum().backward()
    >>> y.detach(), p.grad
    (tensor([ 0., -1., -2.]), tensor([1., 1., 1.]))
    """
    p = asarray_t(p)
    c = _unwrap_correction(p._data, discont, axis, period)
    return (p if p.dtype == c.dtype else astype(p, c.dtype)) + c


def _unwrap_correction(d: Any, discont: Any, axis: int, period: Any) -> Any:
    """The multiples of ``period`` that ``numpy.unwrap`` adds to ``d``, by NumPy's steps with
    functions every kind implements (``numpy.unwrap`` itself makes a NumPy array: a Dask
    ``d`` stays lazy this way)."""
    ax = _norm_axis(axis, d.ndim)
    dd = np.diff(d, axis=ax)
    discont = period / 2 if discont is None else discont
    dt = np.result_type(dd.dtype, period)
    if np.issubdtype(dt, np.integer):
        hi, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        hi, ambiguous = period / 2, True
    m = np.mod(dd - -hi, period) + -hi
    if ambiguous:
        m = np.where((m == -hi) & (dd > 0), hi, m)
    c = np.where(np.abs(dd) < discont, 0, m - dd).astype(dt)
    shp = list(d.shape)
    shp[ax] = builtins.min(shp[ax], 1)  # (the first entry is kept as it is)
    first = _B.zeros(shp, dt, like=_device_like(d))
    return np.concatenate([first, np.cumsum(c, axis=ax)], axis=ax)
