"""Statistics: quantiles, percentiles and medians (gathers of a sort), covariance, correlation.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import to_kind as _to_kind
from ..core.dispatch import apply
from ..core.tensor import Tensor
from ..rules._util import norm_axes as _norm_axes
from ..rules.elementwise import PRIMS as _P
from ..rules.vocabulary import (
    _no_out,
    _raw,
    asarray_t,
    astype,
    broadcast_to,
    concatenate,
    conj,
    diagonal,
    matmul,
    ravel,
    real,
    reshape,
    squeeze,
    transpose,
    where,
)
from .indexing import take_along_axis
from .manipulation import atleast_2d
from .reductions import average

__all__ = [
    "corrcoef", "cov", "median", "nanmedian", "nanpercentile", "nanquantile", "percentile",
    "quantile",
]


# -- statistics: order statistics are gathers of a sort; the rest are compositions ----------

_QMETHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _to_last(a: Tensor, axis: Any) -> tuple[Tensor, tuple[int, ...]]:
    """``a`` with the ``axis`` axes moved to the end and flattened into one."""
    if axis is None:
        return ravel(a), tuple(range(a.ndim))
    axes = _norm_axes(axis, a.ndim)
    rest = [i for i in range(a.ndim) if i not in axes]
    t = transpose(a, rest + list(axes))
    return reshape(t, tuple(a.shape[i] for i in rest) + (-1,)), axes


def _quantile_weights(weights: Any, shape: tuple[int, ...], axis: Any) -> np.ndarray:
    """``weights=`` checked as NumPy checks them, broadcast to the data's ``shape``."""
    w = np.asarray(_raw(weights))
    if w.shape != shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        axes = [int(a) % len(shape) for a in ((axis,) if np.ndim(axis) == 0 else axis)]
        if w.shape != tuple(shape[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = w.transpose(np.argsort(axes)).reshape(
            tuple(sz if ax in axes else 1 for ax, sz in enumerate(shape)))
    if np.any(w < 0):
        raise ValueError("Weights must be non-negative.")
    return np.broadcast_to(w, shape)


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, nan: bool,
              name: str, weights: Any = None) -> Any:
    if weights is not None and method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    if method not in _QMETHODS:
        raise NotImplementedError(f"dualad.numpy.{name}: method={method!r} is not supported; "
                                  f"use one of {', '.join(_QMETHODS)}")
    a = asarray_t(a)
    qd = np.asarray(_raw(q)) if not isinstance(q, (int, float)) else q
    if np.any(np.asarray(qd) < 0) or np.any(np.asarray(qd) > 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    # a discrete method selects values: NumPy keeps their dtype (integers included)
    discrete = method in ("lower", "higher", "nearest", "inverted_cdf")
    dt0 = a.dtype
    dt = np.result_type(a.dtype if a.dtype.kind in "fc" else np.float64, qd)
    if discrete and a.dtype.kind in "fc":
        dt = a.dtype
    a = astype(a, dt, copy=False)
    shape0 = a.shape
    if weights is not None:
        weights = _B.to_host(_quantile_weights(weights, shape0, axis))
    t, axes = _to_last(a, axis)
    # which values are picked is worked out on the host (on a GPU too: index arrays live
    # there); the values themselves stay where they are
    d = _B.to_host(t._data)
    order = np.argsort(d, axis=-1, kind="stable")  # NaNs sort last
    s = take_along_axis(t, order, -1)
    isn = np.isnan(d)
    n = np.sum(~isn, axis=-1) if nan else np.full(d.shape[:-1], d.shape[-1])
    qa = np.asarray(qd, dtype=np.float64)
    qx = qa.reshape(qa.shape + (1,) * (d.ndim - 1))
    if method == "inverted_cdf" and weights is not None:
        # NumPy's: the first sorted value whose share of the total weight reaches q
        rest = [i for i in range(a.ndim) if i not in axes]
        w = weights.transpose(rest + list(axes)).reshape(d.shape) if axis is not None \
            else weights.reshape(-1)
        w = np.take_along_axis(w, order, -1)
        if nan:  # NaNs weigh nothing (a slice of NaNs alone gives NaN below)
            w = np.where(np.take_along_axis(isn, order, -1), 0, w)
            w = np.where((n == 0)[..., None], 1, w)
        cdf = np.cumsum(w, axis=-1, dtype=np.float64)
        cdf = cdf / cdf[..., -1:]
        if np.isnan(cdf[..., -1]).any():
            raise ValueError("Weights included NaN, inf or were all zero.")
        if np.asarray(qd).dtype.kind == "f":
            cdf = cdf.astype(np.asarray(qd).dtype)
        cdf[cdf == 0] = -1  # (leading zero weights: never chosen)
        qq = np.asarray(qd).reshape(qa.shape + (1,) * d.ndim)
        lo = np.minimum(np.sum(cdf < qq, axis=-1), d.shape[-1] - 1)  # (searchsorted, left)
    elif method == "inverted_cdf":
        vi = qx * n - 1
        lo = np.floor(vi)
        lo = np.maximum(np.where(vi - lo == 0, lo, lo + 1), 0).astype(np.intp)
    else:
        vi = qx * (np.maximum(n, 1) - 1)  # Q + R
        if method == "nearest":
            vi = np.around(vi)
        lo = np.floor(vi).astype(np.intp)
        hi = np.minimum(lo + 1, np.maximum(n, 1) - 1)
        if method == "higher":
            lo = np.ceil(vi).astype(np.intp)
    lo = np.broadcast_to(lo, qa.shape + d.shape[:-1])
    sb = broadcast_to(s, lo.shape + (d.shape[-1],))

    def at(i: np.ndarray) -> Any:
        return squeeze(take_along_axis(sb, i[..., None], -1), -1)

    out = at(lo)
    if method in ("linear", "midpoint"):
        g = np.asarray(0.5 if method == "midpoint" else vi - lo, dtype=dt.type(0).real.dtype)
        out = out + (at(np.broadcast_to(hi, lo.shape)) - out) * _to_kind(g, t._data)
    bad = (n == 0) if nan else isn.any(axis=-1)  # a NaN in the slice (all-NaN for nan*)
    if np.any(bad):
        out = where(_to_kind(np.broadcast_to(bad, out.shape), t._data), dt.type(np.nan), out)
    if keepdims:
        kshape = tuple(1 if i in axes else sz for i, sz in enumerate(shape0))
        out = reshape(out, qa.shape + kshape)
    return astype(out, dt0, copy=False) if discrete and dt0 != dt else out


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Any:
    """``numpy.quantile`` (methods linear, lower, higher, midpoint, nearest, inverted_cdf;
    ``weights=`` with inverted_cdf, as NumPy): a gather of the sorted values and, for
    linear/midpoint, a weighted sum of two of them (no derivative in the weights, which
    only choose).

    Examples
    --------
    >>> dnp.quantile(dualad.tensor([4.0, 1.0, 3.0, 2.0]), 0.5)
    tensor(2.5)
    """
    _no_out("quantile", out)
    return _quantile(a, q, axis, interpolation or method, keepdims, False, "quantile", weights)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None,
               interpolation: Any = None) -> Any:
    """``numpy.percentile``: :func:`quantile` of ``q / 100`` (same methods; no ``out`` or
    ``weights``).

    Examples
    --------
    >>> x = dualad.tensor([4.0, 1.0, 3.0, 2.0], requires_grad=True)
    >>> y = dnp.percentile(x, 50); y.backward()
    >>> y.detach(), x.grad  # halfway between 2 and 3
    (tensor(2.5), tensor([0. , 0. , 0.5, 0.5]))
    """
    return quantile(a, _pct(q), axis, out, overwrite_input, method, keepdims, weights=weights,
                    interpolation=interpolation)


def _pct(q: Any) -> Any:
    return q / 100 if isinstance(q, (int, float)) else np.true_divide(_raw(q), 100)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """``numpy.median``: the mean of the middle sorted values (NaN if the slice has one).

    Examples
    --------
    >>> dnp.median(dualad.tensor([[1.0, 5.0, 2.0]]), axis=1)
    tensor([2.])
    """
    _no_out("median", out)
    return _quantile(a, 0.5, axis, "linear", keepdims, False, "median")


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None, interpolation: Any = None) -> Any:
    """``numpy.nanquantile``: :func:`quantile` ignoring NaNs (no ``out`` or ``weights``).

    Examples
    --------
    >>> x = dualad.tensor([4.0, np.nan, 1.0, 2.0], requires_grad=True)
    >>> y = dnp.nanquantile(x, 0.25); y.backward()
    >>> y.detach(), x.grad  # a quarter of the way along [1, 2, 4]
    (tensor(1.5), tensor([0. , 0. , 0.5, 0.5]))
    """
    _no_out("nanquantile", out)
    return _quantile(a, q, axis, interpolation or method, keepdims, True, "nanquantile",
                     weights)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                  *, weights: Any = None, interpolation: Any = None) -> Any:
    """``numpy.nanpercentile``: :func:`nanquantile` of ``q / 100``.

    Examples
    --------
    >>> x = dualad.tensor([4.0, np.nan, 1.0, 2.0], requires_grad=True)
    >>> y = dnp.nanpercentile(x, 25); y.backward()
    >>> y.detach(), x.grad
    (tensor(1.5), tensor([0. , 0. , 0.5, 0.5]))
    """
    return nanquantile(a, _pct(q), axis, out, overwrite_input, method, keepdims,
                       weights=weights, interpolation=interpolation)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """``numpy.nanmedian``: :func:`median` ignoring NaNs (no ``out``).

    Examples
    --------
    >>> x = dualad.tensor([4.0, np.nan, 1.0, 2.0], requires_grad=True)
    >>> y = dnp.nanmedian(x); y.backward()
    >>> y.detach(), x.grad
    (tensor(2.), tensor([0., 0., 0., 1.]))
    """
    _no_out("nanmedian", out)
    return _quantile(a, 0.5, axis, "linear", keepdims, True, "nanmedian")


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """``numpy.cov`` (NumPy's algorithm on Tensors; weights are constants).

    Examples
    --------
    >>> dnp.cov(dualad.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = asarray_t(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    dt = np.result_type(m.dtype, np.float64) if dtype is None else np.dtype(dtype)
    X = atleast_2d(astype(m, dt, copy=False))
    if not rowvar and m.ndim != 1:
        X = transpose(X)
    if X.shape[0] == 0:
        return reshape(X, (0, 0)) if X.ndim else X
    if y is not None:
        y = astype(asarray_t(y), dt, copy=False)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        y = atleast_2d(y)
        if not rowvar and y.shape[0] != 1:
            y = transpose(y)
        X = concatenate((X, y), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = np.asarray(_raw(fweights), dtype=float)
    if aweights is not None:
        aw = np.asarray(_raw(aweights), dtype=float)
        w = aw if w is None else w * aw
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum._data.flat[0] if isinstance(w_sum, Tensor) else w_sum
    if w is None:
        fact = X.shape[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * np.sum(w * aw) / w_sum
    fact = builtins.max(float(np.real(fact)), 0.0)
    X = X - reshape(avg, (-1, 1))
    X_T = transpose(X if w is None else X * w)
    c = matmul(X, conj(X_T)) * (1.0 / fact if fact else np.inf)
    return squeeze(c)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """``numpy.corrcoef``: the covariance scaled by the standard deviations.

    (NumPy also clips the real part to [-1, 1], which only moves rounding errors; the
    derivative of the unclipped expression is the one that exists.)

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], requires_grad=True)
    >>> r = dnp.corrcoef(x)[0, 1]; r.detach()
    tensor(-0.5)
    >>> r.backward(); x.grad[0, 1:]
    tensor([ 0.75, -0.75])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = diagonal(c)
    sd = apply(_P["sqrt"], real(d))
    c = c / reshape(sd, (-1, 1))
    return c / reshape(sd, (1, -1))
