"""Polynomials as coefficient arrays (highest power first), convolution and correlation.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import is_dask as _is_dask
from ..backends.namespace import like as _device_like
from ..core.tensor import Tensor, _make
from ..rules.elementwise import PRIMS as _P
from ..rules.vocabulary import (
    _is_c,
    asarray_t,
    astype,
    broadcast_to,
    concatenate,
    conj,
    expand_dims,
    flip,
    getitem,
    matmul,
    outer,
    pad,
    real,
    reshape,
    stack,
    sum,
    take,
    transpose,
    zeros_like,
)
from .creation import vander
from .manipulation import atleast_1d

__all__ = [
    "convolve", "correlate", "poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint",
    "polymul", "polysub", "polyval", "roots",
]


def polyval(p: Any, x: Any) -> Any:
    """``numpy.polyval`` by Horner's rule: differentiable in ``p`` and ``x``.

    Examples
    --------
    >>> dnp.polyval([1.0, 0.0, -1.0], dualad.tensor(3.0))
    tensor(8.)
    """
    p, x = asarray_t(p), asarray_t(x)
    y = zeros_like(x)
    for i in range(p.shape[0] if p.ndim else 1):
        y = y * x + (getitem(p, i) if p.ndim else p)
    return y


def _full_convolve(a: Tensor, v: Tensor) -> Any:
    """Full convolution of 1-D ``a`` and ``v`` (``len(a) >= len(v)``): windows of ``a``,
    gathered, times ``v`` reversed."""
    n, m = a.shape[0], v.shape[0]
    ap = pad(a, (m - 1, m - 1))
    idx = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    # (a 1-D gather, reshaped: Dask gathers by 1-D index arrays only)
    return matmul(reshape(getitem(ap, (idx.ravel(),)), idx.shape), flip(v))


def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """``numpy.convolve`` of two 1-D sequences (bilinear: a gather and a matrix product).

    Examples
    --------
    >>> dnp.convolve(dualad.tensor([1.0, 2.0]), [1.0, 1.0])
    tensor([1., 3., 2.])
    """
    a, v = asarray_t(a), asarray_t(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if v.shape[0] > a.shape[0]:
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    full = _full_convolve(a, v)
    if mode == "full":
        return full
    if mode == "same":
        lo = (m - 1) // 2
        return getitem(full, (slice(lo, lo + n),))
    if mode == "valid":
        return getitem(full, (slice(m - 1, n),))
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """``numpy.correlate``: ``c[k] = sum_n a[n + k] conj(v[n])``, a convolution.

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> c = dnp.correlate(a, [1.0, 1.0]); c.detach()
    tensor([3., 5.])
    >>> c.sum().backward(); a.grad
    tensor([1., 2., 1.])
    """
    a, v = asarray_t(a), asarray_t(v)
    if a.ndim == 1 and v.ndim == 1 and v.shape[0] > a.shape[0]:
        return flip(conj(convolve(v, flip(conj(a)), mode)))
    return convolve(a, flip(conj(v)), mode)


# -- polynomials (coefficient arrays, highest power first) ------------------------------------


def _poly_pair(a1: Any, a2: Any) -> tuple[Tensor, Tensor]:
    a1, a2 = atleast_1d(asarray_t(a1)), atleast_1d(asarray_t(a2))
    d = a2.shape[0] - a1.shape[0]
    if d > 0:
        a1 = pad(a1, (d, 0))
    elif d < 0:
        a2 = pad(a2, (-d, 0))
    return a1, a2


def polyadd(a1: Any, a2: Any) -> Any:
    """``numpy.polyadd`` (the shorter polynomial padded with leading zeros).

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.polyadd(a, dualad.tensor([1.0, 0.0, 1.0])); (y * y).sum().backward()
    >>> y.detach(), a.grad
    (tensor([1., 1., 3.]), tensor([2., 6.]))
    """
    a, b = _poly_pair(a1, a2)
    return a + b


def polysub(a1: Any, a2: Any) -> Any:
    """``numpy.polysub`` (the shorter polynomial padded with leading zeros).

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.polysub(a, dualad.tensor([1.0, 0.0, 1.0])); (y * y).sum().backward()
    >>> y.detach(), a.grad
    (tensor([-1.,  1.,  1.]), tensor([2., 2.]))
    """
    a, b = _poly_pair(a1, a2)
    return a - b


def polymul(a1: Any, a2: Any) -> Any:
    """``numpy.polymul``: the convolution of the coefficients.

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.polymul(a, dualad.tensor([1.0, 3.0])); y[-1].backward()
    >>> y.detach(), a.grad  # (x + 2)(x + 3); the constant term 2 * 3
    (tensor([1., 5., 6.]), tensor([0., 3.]))
    """
    return convolve(atleast_1d(asarray_t(a1)), atleast_1d(asarray_t(a2)))


def polyder(p: Any, m: int = 1) -> Any:
    """``numpy.polyder``: the m-th derivative's coefficients.

    Examples
    --------
    >>> p = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.polyder(p); y.sum().backward()
    >>> y.detach(), p.grad  # x**2 + 2x + 3 -> 2x + 2
    (tensor([2., 2.]), tensor([2., 1., 0.]))
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    p = asarray_t(p)
    for _ in range(m):
        n = p.shape[0] - 1
        p = getitem(p, (slice(None, -1),)) * _B.arange(n, 0, -1, like=_device_like(p._data))
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """``numpy.polyint``: the m-th antiderivative (integration constants ``k``).

    Examples
    --------
    >>> p = dualad.tensor([3.0, 2.0], requires_grad=True)
    >>> y = dnp.polyint(p); y.sum().backward()
    >>> y.detach(), p.grad  # 3x + 2 -> 1.5x**2 + 2x
    (tensor([1.5, 2. , 0. ]), tensor([0.5, 1. ]))
    """
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    p = asarray_t(p)
    k = _B.zeros(m, like=_device_like(p._data)) if k is None else k
    kk = asarray_t(k)
    if kk.ndim == 0 or kk.shape[0] == 1 and m > 1:
        kk = broadcast_to(reshape(kk, (1,)), (m,))
    if kk.shape[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    for i in range(m):
        y = p / _B.arange(p.shape[0], 0, -1, like=_device_like(p._data))
        p = concatenate([y, reshape(getitem(kk, i), (1,))])
    return p


def polydiv(u: Any, v: Any) -> tuple[Any, Any]:
    """``numpy.polydiv``: quotient and remainder by long division (differentiable in both
    polynomials; the remainder's leading entries that vanish are dropped, as NumPy's).

    Examples
    --------
    >>> q, r = dnp.polydiv(dualad.tensor([1.0, -3.0, 2.0]), [1.0, -1.0]); q, r
    (tensor([ 1., -2.]), tensor([0.]))
    """
    u, v = atleast_1d(asarray_t(u)) + 0.0, atleast_1d(asarray_t(v)) + 0.0
    dt = np.result_type(u.dtype, v.dtype)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / getitem(v, 0)
    r = astype(u, dt, copy=False)
    qs = []
    for k in range(m - n + 1):
        d = scale * getitem(r, k)
        qs.append(d)
        r = r - pad(d * v, (k, m - n - k))
    q = stack(qs) if qs else _make(_B.zeros(1, dt, like=_device_like(u._data)))
    while np.allclose(r._data[0], 0, rtol=1e-14) and r.shape[-1] > 1:
        r = getitem(r, (slice(1, None),))
    return q, r


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """``numpy.polyfit``: the least-squares fit of a polynomial of degree ``deg``
    (NumPy's scaled Vandermonde system, solved by ``linalg.lstsq``); differentiable in
    ``x``, ``y`` and ``w`` where the rank is locally constant.

    Examples
    --------
    >>> y = dualad.tensor([1.0, 3.0, 5.0])
    >>> dnp.polyfit([0.0, 1.0, 2.0], y, 1).round(12)
    tensor([2., 1.])
    """
    import warnings

    from ..rules.linalg import inv, lstsq

    order = int(deg) + 1
    x, y = asarray_t(x) + 0.0, asarray_t(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * np.finfo(x.dtype).eps
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = asarray_t(w) + 0.0
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * reshape(w, (-1, 1))
        rhs = rhs * (reshape(w, (-1, 1)) if rhs.ndim == 2 else w)
    scale = _P["sqrt"](sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = c / (reshape(scale, (-1, 1)) if c.ndim == 2 else scale)
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=2)
    if full:
        return c, resids, rank, s, rcond
    if not cov:
        return c
    vbase = inv(matmul(transpose(lhs), lhs)) / outer(scale, scale)
    if cov == "unscaled":
        fac: Any = 1
    else:
        if x.shape[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (x.shape[0] - order)
    return c, (vbase * fac if y.ndim == 1 else expand_dims(vbase, -1) * fac)


def roots(p: Any) -> Any:
    """``numpy.roots``: eigenvalues of the companion matrix (differentiable in ``p``).

    The roots come in NumPy's order. A leading zero coefficient of an input that needs
    a derivative raises ``NotImplementedError``.

    Examples
    --------
    >>> p = dualad.tensor([1.0, -3.0, 2.0], requires_grad=True)
    >>> r = dnp.roots(p); r[0].backward()
    >>> r.detach(), p.grad  # x**2 - 3x + 2; d r = -(r**2, r, 1) / p'(r) at r = 2
    (tensor([2., 1.]), tensor([-4., -2., -1.]))
    """
    from ..rules.linalg import eigvals

    p = atleast_1d(asarray_t(p))
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if _is_dask(p._data):
        raise NotImplementedError(
            "dualad.numpy.roots of a Dask array: the roots are the eigenvalues of the "
            "companion matrix (Dask's linalg has no eigvals) and which coefficients lead "
            "depends on their values; compute the coefficients first: roots(p.compute())")
    nz = np.nonzero(p._data)[0]
    if len(nz) == 0:
        return _make(np.array([]))
    want = np.roots(_B.to_host(p._data))  # NumPy's values and order (CuPy's roots takes
    # Hermitian companion matrices only)
    if nz[0] and (p._requires_grad or p._level):
        raise NotImplementedError(
            "dualad.numpy.roots: a leading zero coefficient would need the roots that come "
            "from infinity under a perturbation; strip it before differentiating")
    # trailing zeros are roots at zero whose derivatives involve the zero coefficients: keep
    # them in the companion matrix, then put the eigenvalues in NumPy's order
    p = getitem(p, (slice(int(nz[0]), None),))
    if p.dtype.kind not in "fc":
        p = astype(p, np.float64)
    n = p.shape[0]
    if n < 2:
        return _make(np.array([], p.dtype))
    first = reshape(-getitem(p, (slice(1, None),)) / getitem(p, 0), (1, n - 1))
    rest = _make(_B.eye(n - 2, n - 1, dtype=p.dtype, like=_device_like(p._data)))
    r = eigvals(concatenate([first, rest], axis=0))
    free = list(range(r.shape[0]))
    order = []
    for w in want:
        j = builtins.min(free, key=lambda i: builtins.abs(r._data[i] - w))
        free.remove(j)
        order.append(j)
    r = take(r, np.array(order, np.intp))
    return real(r) if want.dtype.kind != "c" and r.dtype.kind == "c" else r


def poly(seq_of_zeros: Any) -> Any:
    """``numpy.poly`` of a sequence of roots (real when they come in conjugate pairs).

    A square matrix gives the characteristic polynomial (its eigenvalues as roots).

    Examples
    --------
    >>> r = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> c = dnp.poly(r); c[-1].backward()
    >>> c.detach(), r.grad  # (x - 1)(x - 2); the constant term r0 * r1
    (tensor([ 1., -3.,  2.]), tensor([2., 1.]))
    """
    z = asarray_t(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0]:
        from ..rules.linalg import eigvals

        z = eigvals(z)
    elif z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return _make(np.array(1.0))
    dev = _device_like(z._data)  # (the constants on the zeros' device)
    a: Any = _make(_B.ones(1, z.dtype if z.dtype.kind in "fc" else np.float64, like=dev))
    one = _make(_B.ones((), z.dtype, like=dev))
    for i in range(z.shape[0]):
        a = convolve(a, stack([one, -getitem(z, i)]))
    if _is_c(a):
        r = np.asarray(_B.to_host(z._data), complex)
        if np.all(np.sort(r) == np.sort(r.conjugate())):
            a = real(a)
    return a
