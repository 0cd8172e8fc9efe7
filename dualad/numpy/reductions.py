"""Reductions: sums, means, variances, extremes, cumulative sums and products, their nan- forms.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import as_array as _as_array
from ..backends.namespace import like as _device_like
from ..core.dispatch import apply
from ..core.tensor import Tensor, _make
from ..rules import linear as L
from ..rules import products as P
from ..rules._util import norm_axes as _norm_axes
from ..rules._util import norm_axis as _norm_axis
from ..rules.elementwise import PRIMS as _P
from ..rules.products import cumprod
from ..rules.vocabulary import (
    _alias,
    _count,
    _is_c,
    _no_out,
    amax,
    amin,
    asarray_t,
    astype,
    broadcast_to,
    concatenate,
    conj,
    cumsum,
    real,
    reshape,
    sum,
    where,
)

__all__ = [
    "amax", "amin", "average", "cumprod", "cumsum", "cumulative_prod", "cumulative_sum", "max",
    "mean", "min", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd",
    "nansum", "nanvar", "prod", "ptp", "std", "sum", "var",
]


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """``numpy.mean`` (``axis``, ``dtype``, ``keepdims``; no ``out=`` or ``where=``;
    integers are averaged in float64).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 6.0], requires_grad=True)
    >>> m = dnp.mean(x); m.detach()
    tensor(3.)
    >>> m.backward(); x.grad
    tensor([0.33333333, 0.33333333, 0.33333333])
    """
    a = asarray_t(a)
    if a.dtype.kind in "biu":
        a = astype(a, dtype or np.float64)
    elif dtype is not None:
        a = astype(a, dtype, copy=False)
    axes = _norm_axes(axis, a.ndim)
    n = _count(a.shape, axes)
    s = apply(L.reduce_sum, a, axis=axes, keepdims=bool(keepdims))
    if n:
        return s * (1.0 / n)
    import warnings

    warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)  # (NumPy's)
    return s * np.nan


def _stat_dtype(a: Any, dtype: Any) -> Any:
    """``a`` in the dtype a variance is computed in: ``dtype``, else float64 for integers
    and booleans (NumPy's rule), else its own."""
    if dtype is not None:
        return astype(a, dtype)
    return astype(a, np.float64) if a.dtype.kind in "biu" else a


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0,
        keepdims: bool = False) -> Any:
    """``numpy.var`` (real result for complex input), computed in ``dtype`` if given.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> y = dnp.var(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(1.), tensor([-1.,  1.]))
    """
    a = _stat_dtype(asarray_t(a), dtype)
    axes = _norm_axes(axis, a.ndim)
    d = a - mean(a, axis=axes, keepdims=True)
    sq = real(d * conj(d)) if _is_c(d) else d * d
    n = _count(a.shape, axes) - ddof
    return sum(sq, axis=axes, keepdims=keepdims) * (1.0 / n if n > 0 else np.inf)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0,
        keepdims: bool = False) -> Any:
    """``numpy.std``; its derivative is 0 where it is 0 (a constant slice), as torch's.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> y = dnp.std(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(1.), tensor([-0.5,  0.5]))
    >>> c = dualad.tensor([2.0, 2.0], requires_grad=True)
    >>> dnp.std(c).backward(); c.grad
    tensor([0., 0.])
    """
    v = var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    zero = v._data == 0
    if not hasattr(zero, "shape") or zero.__class__ is np.ndarray:  # (NumPy: the branch is
        zero = np.asarray(zero)  # free; a lazy array takes the mask, never a compute; an
        if not zero.any():  # array keeps a 0-d result a Tensor)
            return apply(_P["sqrt"], v)
    # not 0 * inf: the masked branch takes the square root of 1, finite at every order
    return where(zero, 0, apply(_P["sqrt"], where(zero, 1, v)))


max = _alias(amax, "max", ">>> x = dualad.tensor([[1.0, 4.0], [3.0, 2.0]], requires_grad=True)\n"
             ">>> dnp.max(x, axis=0).sum().backward(); x.grad\n"
             "tensor([[0., 1.],\n        [1., 0.]])")  # noqa: A001
min = _alias(amin, "min", ">>> x = dualad.tensor([2.0, 1.0, 1.0], requires_grad=True)\n"
             ">>> dnp.min(x).backward(); x.grad  # the tie shares it\n"
             "tensor([0. , 0.5, 0.5])")  # noqa: A001


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.ptp``: max - min (ties share the derivative evenly, as in :func:`amax`).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 4.0, 2.0], requires_grad=True)
    >>> y = dnp.ptp(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(3.), tensor([-1.,  1.,  0.]))
    """
    return amax(a, axis, keepdims) - amin(a, axis, keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """``numpy.prod`` (exact derivative at zeros).

    Examples
    --------
    >>> x = dualad.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> y = dnp.prod(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(0.), tensor([0., 6., 0.]))
    """
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if a.dtype.kind not in "fc":
        return _make(_as_array(np.prod(a._data, axis=axis, keepdims=keepdims)))
    return apply(P.prod_p, a, axis=_norm_axes(axis, a.ndim), keepdims=bool(keepdims))


def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nansum``: NaNs count as zero (and get zero derivative).

    Examples
    --------
    >>> x = dualad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nansum(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(4.), tensor([1., 0., 1.]))
    """
    a = asarray_t(a)
    return sum(where(_P["isnan"](a), 0, a), axis=axis, dtype=dtype, keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """``numpy.average``: differentiable in ``a`` and ``weights``.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 4.0], requires_grad=True)
    >>> w = dualad.tensor([3.0, 1.0], requires_grad=True)
    >>> avg = dnp.average(x, weights=w); avg.detach()
    tensor(1.75)
    >>> avg.backward(); x.grad, w.grad
    (tensor([0.75, 0.25]), tensor([-0.1875,  0.5625]))
    """
    a = asarray_t(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        scl = _make(np.asarray(float(a.size / builtins.max(avg.size, 1)), dtype=avg.dtype))
        return (avg, broadcast_to(scl, avg.shape)) if returned else avg
    w = asarray_t(weights)
    rt = np.result_type(a.dtype, w.dtype, *([np.float64] if a.dtype.kind in "biu" else []))
    a = a if a.dtype == rt else astype(a, rt)
    w = w if w.dtype == rt else astype(w, rt)  # NumPy sums the weights in the result dtype
    if w.shape != a.shape:
        if axis is None:
            raise TypeError("average: axis must be given when shapes of a and weights differ")
        ax = _norm_axis(axis, a.ndim)
        w = reshape(w, tuple(w.shape[0] if i == ax else 1 for i in range(a.ndim)))
    scl = sum(broadcast_to(w, a.shape) if w.shape != a.shape else w, axis=axis, keepdims=keepdims)
    avg = sum(a * w, axis=axis, keepdims=keepdims) / scl
    return (avg, scl) if returned else avg


def _nan_fill(a: Any, value: float) -> Tensor:
    a = asarray_t(a)
    if a.dtype.kind not in "fc":
        return a
    return where(np.isnan(a._data), a.dtype.type(value), a)  # (a typed scalar)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:
    """``numpy.nanmean``: the mean of the non-NaN values (NaNs get zero derivative; no ``out``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nanmean(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(2.), tensor([0.5, 0. , 0.5]))
    """
    _no_out("nanmean", out)
    a = asarray_t(a)
    if a.dtype.kind not in "fc":
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    n = np.sum(~np.isnan(a._data), axis=axis, keepdims=keepdims)
    s = sum(_nan_fill(a, 0.0), axis=axis, dtype=dtype, keepdims=keepdims)
    return s / _as_array(n).astype(s.dtype).real  # (a lazy count stays lazy)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, mean: Any = None, correction: Any = None) -> Any:
    """``numpy.nanvar``: the variance of the non-NaN values (real for complex input).

    No ``out``.

    Examples
    --------
    >>> x = dualad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nanvar(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(1.), tensor([-1.,  0.,  1.]))
    """
    _no_out("nanvar", out)
    a = _stat_dtype(asarray_t(a), dtype)
    if correction is not None:
        ddof = correction
    m = nanmean(a, axis=axis, keepdims=True) if mean is None else mean
    d = _nan_fill(a - m, 0.0)
    sq = real(d * conj(d)) if _is_c(d) else d * d
    n = np.sum(~np.isnan(a._data), axis=axis, keepdims=keepdims) - ddof
    s = sum(sq, axis=axis, keepdims=keepdims)
    return s / _as_array(np.where(n > 0, n, 0)).astype(s.dtype)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, mean: Any = None, correction: Any = None) -> Any:
    """``numpy.nanstd``: the square root of :func:`nanvar`.

    Examples
    --------
    >>> x = dualad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nanstd(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(1.), tensor([-0.5,  0. ,  0.5]))
    """
    return apply(_P["sqrt"], nanvar(a, axis, dtype, out, ddof, keepdims, mean=mean,
                                    correction=correction))


def _nan_extreme(a: Any, axis: Any, keepdims: bool, fill: float, fn: Any) -> Any:
    a = asarray_t(a)
    if a.dtype.kind not in "fc":
        return fn(a, axis=axis, keepdims=keepdims)
    r = fn(_nan_fill(a, fill), axis=axis, keepdims=keepdims)
    allnan = np.all(np.isnan(a._data), axis=axis, keepdims=keepdims)
    if allnan.__class__ is np.ndarray or isinstance(allnan, np.generic):  # (skip a no-op where)
        return where(allnan, r.dtype.type(np.nan), r) if np.any(allnan) else r
    return where(allnan, r.dtype.type(np.nan), r)  # lazy: no branch on a value


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nanmax``: the maximum of the non-NaN values (NaN for an all-NaN slice; no
    ``out``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nanmax(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(3.), tensor([0., 0., 1.]))
    """
    _no_out("nanmax", out)
    return _nan_extreme(a, axis, keepdims, -np.inf, amax)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nanmin``: the minimum of the non-NaN values (NaN for an all-NaN slice; no
    ``out``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nanmin(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(1.), tensor([1., 0., 0.]))
    """
    _no_out("nanmin", out)
    return _nan_extreme(a, axis, keepdims, np.inf, amin)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:
    """``numpy.nanprod``: NaNs count as one (and get zero derivative; no ``out``).

    Examples
    --------
    >>> x = dualad.tensor([2.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nanprod(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(6.), tensor([3., 0., 2.]))
    """
    _no_out("nanprod", out)
    return prod(_nan_fill(a, 1.0), axis=axis, dtype=dtype, keepdims=keepdims)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """``numpy.nancumsum``: NaNs count as zero (no ``out``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nancumsum(x); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 1., 4.]), tensor([3., 0., 1.]))
    """
    _no_out("nancumsum", out)
    return cumsum(_nan_fill(a, 0.0), axis=axis, dtype=dtype)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """``numpy.nancumprod``: NaNs count as one (no ``out``).

    Examples
    --------
    >>> x = dualad.tensor([2.0, np.nan, 3.0], requires_grad=True)
    >>> y = dnp.nancumprod(x); y.sum().backward()
    >>> y.detach(), x.grad  # d(2 + 2 + 2*3)
    (tensor([2., 2., 6.]), tensor([5., 0., 2.]))
    """
    _no_out("nancumprod", out)
    return cumprod(_nan_fill(a, 1.0), axis=axis, dtype=dtype)


def _cumulative(fn: Any, x: Any, axis: Any, dtype: Any, include_initial: bool,
                initial: float) -> Any:
    x = asarray_t(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                             "is required.")
        axis = 0
    ax = _norm_axis(axis, builtins.max(x.ndim, 1))
    out = fn(x, axis=ax, dtype=dtype)
    if include_initial:
        shp = list(out.shape)
        shp[ax] = 1
        out = concatenate([_make(_B.full(shp, initial, out.dtype, like=_device_like(out._data))),
                           out], axis=ax)
    return out


def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> Any:
    """``numpy.cumulative_sum`` (``include_initial`` prepends a zero).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.cumulative_sum(x, include_initial=True); y.detach()
    tensor([0., 1., 3.])
    >>> y.sum().backward(); x.grad
    tensor([2., 1.])
    """
    _no_out("cumulative_sum", out)
    return _cumulative(cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                    include_initial: bool = False) -> Any:
    """``numpy.cumulative_prod`` (``include_initial`` prepends a one).

    Examples
    --------
    >>> x = dualad.tensor([2.0, 3.0], requires_grad=True)
    >>> y = dnp.cumulative_prod(x, include_initial=True); y.detach()
    tensor([1., 2., 6.])
    >>> y.sum().backward(); x.grad
    tensor([4., 2.])
    """
    _no_out("cumulative_prod", out)
    return _cumulative(cumprod, x, axis, dtype, include_initial, 1)
