"""Array creation: ``tensor``, ``asarray``, ``zeros``, ``linspace``, ``eye``, ``meshgrid``, ...

Factories return Tensors that carry no derivative unless ``requires_grad=True``
is given; conversions of sequences holding Tensors stack them differentiably.
"""

from __future__ import annotations

import builtins
from operator import index as _index
from typing import Any

import numpy as np
from array_api_compat import is_cupy_array as _is_device

from ..backends import namespace as _B
from ..backends.namespace import asarray as _asarray
from ..backends.namespace import like as _device_like
from ..backends.namespace import to_kind as _to_kind
from ..core.dispatch import apply
from ..core.levels import live
from ..core.tensor import Tensor, _made, _make
from ..rules import linear as L
from ..rules.elementwise import PRIMS as _P
from ..rules.products import cumprod
from ..rules.vocabulary import (
    _alias,
    _copy,
    _detached,
    _doc,
    _dtype_of,
    _from_sequence,
    _held,
    _holds_tensor,
    _like,
    array,
    asarray_t,
    astype,
    broadcast_to,
    concatenate,
    copy,
    diagonal,
    flip,
    moveaxis,
    ones_like,
    ravel,
    reshape,
    tril,
    triu,
    where,
    zeros_like,
)
from .manipulation import atleast_1d, broadcast_arrays

__all__ = [
    "arange", "array", "as_tensor", "asanyarray", "asarray", "asarray_chkfinite",
    "ascontiguousarray", "asfortranarray", "copy", "diag", "diagflat", "empty", "empty_like", "eye",
    "full", "full_like", "geomspace", "linspace", "logspace", "meshgrid", "ones", "ones_like",
    "rand", "randn", "require", "tensor", "tril", "triu", "vander", "zeros", "zeros_like",
]


# -- factories ------------------------------------------------------------------------------


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``.

    Examples
    --------
    >>> dualad.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor) and (data._requires_grad or data._level):
        _warn_dropped(data, "dualad.tensor(t)", "Use t.copy() to copy it with its "
                      "derivative, or t.detach().copy() for the constant copy.")
    elif isinstance(data, (list, tuple)) and _holds_tensor(data):
        _warn_dropped_items(data)
    data = _detached(data)  # a copy with no history, as torch.tensor makes
    t = _made(_make(_asarray(data, dtype=dtype, copy=True)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _tracked(t: Tensor) -> str | None:
    """Why ``t`` carries a derivative (it requires grad, or is dual at a live level), or
    None."""
    if t._requires_grad:
        return "requires grad"
    if not t._level:
        return None
    if t._level in live:
        return f"carries a tangent at live level {t._level}"
    return None


_KEEP = ("To keep it, compute with dualad.numpy functions or Tensor methods (dnp.sin(t), "
         "not math.sin(t)); call t.detach() first to drop it explicitly.")


def _warn_dropped(t: Tensor, what: str, keep: str = _KEEP, stacklevel: int = 3) -> None:
    """Warn (as torch does) that ``what``, called by the user's code on a tracked ``t``,
    leaves autodiff with its value; ``keep`` says how to keep the derivative. The warning
    points at the user's line, ``stacklevel`` frames up."""
    why = _tracked(t)
    if why is None:
        return
    import warnings

    warnings.warn(f"dualad: {what} on a tensor that {why} drops its derivative (the result "
                  f"is a constant). {keep}", UserWarning, stacklevel=stacklevel)


def _warn_dropped_items(seq: Any) -> None:
    """Warn, as ``tensor(t)`` does (and torch's ``torch.tensor([x, y])``), that a sequence
    holding a Tensor that carries a derivative becomes a constant."""
    stack = list(seq)
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor) and (why := _tracked(x)) is not None:
            import warnings

            warnings.warn(
                f"dualad: dualad.tensor([...]) of a sequence holding a tensor that {why} "
                "drops its derivative (the result is a constant, as torch.tensor's). Use "
                "dualad.numpy.array([...]) or dualad.as_tensor([...]) to stack them with "
                "their derivatives, or detach them for the constant.", UserWarning,
                stacklevel=3)
            return


def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    """A tensor sharing ``data``'s memory when its dtype allows (no copy).

    Examples
    --------
    >>> a = np.zeros(2); t = dualad.as_tensor(a); a[0] = 1; t
    tensor([1., 0.])
    """
    if isinstance(data, (list, tuple)) and _holds_tensor(data):
        data = _from_sequence(data)  # differentiable, like dualad.numpy.asarray
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    return _made(_make(_asarray(data, dtype=dtype, copy=None)))


def asarray(a: Any, dtype: Any = None, order: Any = None, *, copy: bool | None = None,
            like: Any = None) -> Tensor:
    """``numpy.asarray`` for Tensors: a Tensor as it is, a sequence holding Tensors
    stacked differentiably (see :func:`array`).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0])
    >>> dnp.asarray(x) is x
    True
    """
    if not _holds_tensor(a):
        if _is_device(a):  # a CuPy array stays on its GPU (as cupy.asarray keeps it)
            return _held(_make(_asarray(a, dtype=dtype, copy=copy)))
        return _held(_make(np.asarray(a, dtype=dtype, order=order, copy=copy)))
    return array(a, dtype=dtype, copy=bool(copy))


asanyarray = asarray


def _factory(fn: Any, example: str) -> Any:
    def f(*args: Any, requires_grad: bool = False, **kw: Any) -> Tensor:
        t = _made(_make(fn(*args, **kw)))
        return t.requires_grad_(True) if requires_grad else t

    f.__name__ = fn.__name__
    f.__doc__ = _doc(f"Like ``numpy.{fn.__name__}``, returning a Tensor (``requires_grad=`` "
                     "keyword).", example)
    return f


zeros = _factory(np.zeros, ">>> dualad.zeros((2, 3), requires_grad=True).shape\n(2, 3)")
ones = _factory(np.ones, ">>> dualad.ones(3)\ntensor([1., 1., 1.])")
_full = _factory(np.full, ">>> dualad.full((2,), 7.0)\ntensor([7., 7.])")
empty = _factory(np.empty, ">>> dualad.empty((2, 2)).shape\n(2, 2)")
arange = _factory(np.arange, ">>> dualad.arange(0.0, 1.0, 0.25)\ntensor([0.  , 0.25, 0.5 , 0.75])")
_linspace = _factory(np.linspace, ">>> dualad.linspace(0, 1, 3, requires_grad=True)\n"
                                  "tensor([0. , 0.5, 1. ], requires_grad=True)")


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, *, device: Any = None,
             requires_grad: bool = False) -> Any:
    """``numpy.linspace``; differentiable in ``start`` and ``stop`` when they are Tensors.

    Examples
    --------
    >>> a = dualad.tensor(1.0, requires_grad=True)
    >>> dnp.linspace(0.0, a, 3).sum().backward(); a.grad
    tensor(1.5)
    """
    if not (isinstance(start, Tensor) or isinstance(stop, Tensor)):
        return _linspace(start, stop, num, endpoint, retstep, dtype, axis,
                         requires_grad=requires_grad)
    num = _index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    dt = np.result_type(_dtype_of(start), _dtype_of(stop), float(num))
    start, stop = astype(start, dt, copy=False), astype(stop, dt, copy=False)
    delta = stop - start
    lk = _device_like(delta._data)  # (constants of the endpoints' kind)
    y = reshape(_make(_B.arange(0, num, dtype=dt, like=lk)), (-1,) + (1,) * delta.ndim)
    if div > 0:
        step = delta / div
        if step._data.__class__ is np.ndarray or isinstance(step._data, np.generic):
            y = y * step if not np.any(step._data == 0) else y / div * delta
        else:  # lazy: no branch on a value
            y = where(step._data == 0, y / div * delta, y * step)
    else:
        step = delta * np.nan
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        last = _B.arange(y.shape[0], like=lk) == y.shape[0] - 1
        y = where(reshape(last, (-1,) + (1,) * delta.ndim), stop, y)
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None:
        y = astype(y, dtype, copy=False)
    return (y, step) if retstep else y


def _filled(shape: Any, value: Any, dtype: Any, requires_grad: bool) -> Tensor:
    """A new array of ``shape`` whose elements are ``value`` (a Tensor, or a sequence
    holding Tensors) broadcast, in ``dtype``: NumPy's ``full``, differentiable (the
    derivative of the broadcast sums over the copies) in every mode."""
    v = asarray_t(value)
    if dtype is not None:  # (NumPy casts the fill value as astype does)
        v = astype(v, dtype, copy=False)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    r = _held(_copy(broadcast_to(v, shape)))  # (fresh, writable memory, as NumPy's)
    return r.requires_grad_(True) if requires_grad else r


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *,
         requires_grad: bool = False, **kw: Any) -> Tensor:
    """``numpy.full``, differentiable in ``fill_value`` when it is a Tensor (or a sequence
    holding Tensors): each element of the result is a copy of it (broadcast to ``shape``),
    so its gradient is the sum over the copies; ``requires_grad=`` as the factories.

    Examples
    --------
    >>> dualad.full((2,), 7.0)
    tensor([7., 7.])
    >>> x = dualad.tensor(2.0, requires_grad=True)
    >>> dnp.full((2, 3), x).sum().backward(); x.grad
    tensor(6.)
    """
    if not _holds_tensor(fill_value):
        return _full(shape, fill_value, dtype, order, requires_grad=requires_grad, **kw)
    return _filled(shape, fill_value, dtype, requires_grad)


eye = _factory(np.eye, ">>> dualad.eye(2)\ntensor([[1., 0.],\n        [0., 1.]])")
_full_like = _like(np.full_like, ">>> dualad.numpy.full_like(np.zeros(2), 3.0)\n"
                                  "tensor([3., 3.])")


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, *, requires_grad: bool = False, **kw: Any) -> Tensor:
    """``numpy.full_like``: ``a``'s shape and dtype (unless given), differentiable in
    ``fill_value`` when it is a Tensor (as :func:`full`; never in ``a``, whose values
    are not used).

    Examples
    --------
    >>> dualad.numpy.full_like(np.zeros(2), 3.0)
    tensor([3., 3.])
    >>> x = dualad.tensor(2.0, requires_grad=True)
    >>> dnp.full_like(np.zeros((2, 2)), x).sum().backward(); x.grad
    tensor(4.)
    """
    if not _holds_tensor(fill_value):
        return _full_like(a, fill_value, dtype, order, subok, shape,
                          requires_grad=requires_grad, **kw)
    like = a if isinstance(a, Tensor) else asarray_t(_detached(a))
    return _filled(like.shape if shape is None else shape, fill_value,
                   like.dtype if dtype is None else dtype, requires_grad)


empty_like = _like(np.empty_like, ">>> dualad.numpy.empty_like(np.zeros((2, 1))).shape\n(2, 1)")


def rand(*shape: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples on [0, 1) from NumPy's global generator, as a Tensor.

    Examples
    --------
    >>> np.random.seed(0); t = dualad.rand(2, 3, requires_grad=True)
    >>> t.shape, bool(((0 <= t) & (t < 1)).all())
    ((2, 3), True)
    """
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    t = _made(_make(np.random.random_sample(shape).astype(dtype or np.float64)))
    return t.requires_grad_(True) if requires_grad else t


def randn(*shape: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples from NumPy's global generator, as a Tensor.

    Examples
    --------
    >>> np.random.seed(0); dualad.randn(3, dtype=np.float32).dtype
    dtype('float32')
    """
    shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    t = _made(_make(np.random.standard_normal(shape).astype(dtype or np.float64)))
    return t.requires_grad_(True) if requires_grad else t


def diag(v: Any, k: int = 0) -> Any:
    """``numpy.diag``: extract a diagonal, or build a matrix from one (a scatter).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.diag(x); y.detach()
    tensor([[1., 0.],
            [0., 2.]])
    >>> dnp.diag(y).sum().backward(); x.grad
    tensor([1., 1.])
    """
    v = asarray_t(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0] + builtins.abs(k)
    i = np.arange(v.shape[0])
    r, c = (i, i + k) if k >= 0 else (i - k, i)
    if v.dtype.kind not in "fc":
        return _make(np.diag(v._data, k))
    return apply(L.index_add, v, idx=L.Index((r, c), 2), shape=(n, n))


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Tensor:
    """``numpy.asarray_chkfinite``: :func:`asarray`, raising on NaN or infinity.

    Examples
    --------
    >>> dnp.asarray_chkfinite([1.0, 2.0])
    tensor([1., 2.])
    >>> dnp.asarray_chkfinite([1.0, np.inf])
    Traceback (most recent call last):
        ...
    ValueError: array must not contain infs or NaNs
    """
    t = asarray(a, dtype=dtype)
    if t.dtype.kind in "fc" and not np.isfinite(t._data).all():
        raise ValueError("array must not contain infs or NaNs")
    return t


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Tensor:
    """``numpy.ascontiguousarray`` (at least 1-D; a Tensor's memory layout is its own).

    Examples
    --------
    >>> dnp.ascontiguousarray(dualad.tensor(2.0))
    tensor([2.])
    """
    return atleast_1d(asarray(a, dtype=dtype))


asfortranarray = _alias(
    ascontiguousarray, "asfortranarray",
    ">>> dnp.asfortranarray(dualad.tensor([[1.0, 2.0]]))\ntensor([[1., 2.]])",
    "``numpy.asfortranarray``: :func:`ascontiguousarray` (at least 1-D; a Tensor's memory "
    "layout is its own).")


def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Tensor:
    """``numpy.require``: :func:`asarray` (memory requirements are a Tensor's own, so
    ``requirements`` is ignored).

    Examples
    --------
    >>> dnp.require([1, 2], dtype=np.float64, requirements="C")
    tensor([1., 2.])
    """
    return asarray(a, dtype=dtype)


def diagflat(v: Any, k: int = 0) -> Any:
    """``numpy.diagflat``: a matrix with the flattened input on diagonal ``k``.

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = dnp.diagflat(x); y.detach()
    tensor([[1., 0.],
            [0., 2.]])
    >>> y.sum().backward(); x.grad
    tensor([[1., 1.]])
    """
    return diag(ravel(v), k)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``numpy.logspace``: ``base ** linspace(start, stop)``; differentiable in Tensor
    endpoints and base.

    Examples
    --------
    >>> b = dualad.tensor(1.0, requires_grad=True)
    >>> y = dnp.logspace(0.0, b, 2); y.detach()
    tensor([ 1., 10.])
    >>> y.sum().backward(); b.grad  # d(10**b)/db = 10 log(10)
    tensor(23.02585093)
    """
    if not builtins.any(isinstance(v, Tensor) for v in (start, stop, base)):
        return _make(np.logspace(start, stop, num, endpoint, base, dtype, axis))
    y = linspace(start, stop, num, endpoint=endpoint)
    if isinstance(base, Tensor) or np.ndim(base):
        b = asarray_t(base)
        b = reshape(b, (1,) * (y.ndim - b.ndim) + b.shape) if b.ndim else b
    else:  # (a number stays one: a 0-d NumPy array would not meet a GPU's exponents)
        b = base
    out = _P["power"](b, y)
    if dtype is None and out.dtype != y.dtype and not isinstance(base, Tensor):
        out = astype(out, y.dtype)  # NumPy's: the dtype of the exponents
    if axis != 0:
        out = moveaxis(out, 0, axis)
    return out if dtype is None else astype(out, dtype, copy=False)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """``numpy.geomspace``; differentiable in Tensor endpoints, negative or complex ones
    included (NumPy's way: divided by the sign of ``start``, ``z / |z|``, spaced
    logarithmically, multiplied back).

    Examples
    --------
    >>> a = dualad.tensor(1.0, requires_grad=True)
    >>> y = dnp.geomspace(a, 4.0, 3); y.detach()
    tensor([1., 2., 4.])
    >>> y.sum().backward(); a.grad
    tensor(2.)
    >>> dnp.geomspace(dualad.tensor(-1.0), -100.0, 3)
    tensor([  -1.,  -10., -100.])
    """
    if not (isinstance(start, Tensor) or isinstance(stop, Tensor)):
        return _make(np.geomspace(start, stop, num, endpoint, dtype, axis))
    a, b = asarray_t(start) * 1.0, asarray_t(stop) * 1.0
    if np.any(a._data == 0) or np.any(b._data == 0):
        raise ValueError("Geometric sequence cannot include zero")
    dt = np.result_type(a.dtype, b.dtype, float(num), np.zeros((), dtype))
    a, b = astype(a, dt, copy=False), astype(b, dt, copy=False)
    sign = _P["sign"](a) if dt.kind == "c" else np.sign(a._data)  # (a real sign: constant)
    a, b = a / sign, b / sign
    y = _P["exp"](linspace(_P["log"](a), _P["log"](b), num, endpoint=endpoint))
    first = np.zeros(num, bool)
    first[:1] = True
    last = np.zeros(num, bool)
    if endpoint and num > 1:
        last[-1] = True
    col = (-1,) + (1,) * (y.ndim - 1)
    first, last = _to_kind(first, a._data), _to_kind(last, a._data)  # (on a's device)
    y = where(reshape(first, col), a, where(reshape(last, col), b, y)) * sign
    if axis != 0:
        y = moveaxis(y, 0, axis)
    return y if dtype is None else astype(y, dtype, copy=False)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> Any:
    """``numpy.meshgrid`` (reshapes and broadcasts; a tuple, as NumPy 2).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> X, Y = dnp.meshgrid(x, dualad.tensor([0.0, 1.0, 2.0])); X.shape
    (3, 2)
    >>> X.sum().backward(); x.grad
    tensor([3., 3.])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    s0 = (1,) * nd
    out = [reshape(asarray_t(x), s0[:i] + (-1,) + s0[i + 1:]) for i, x in enumerate(xi)]
    if indexing == "xy" and nd > 1:
        out[0] = reshape(out[0], (1, -1) + s0[2:])
        out[1] = reshape(out[1], (-1, 1) + s0[2:])
    if not sparse:
        out = broadcast_arrays(*out)
    return tuple(out)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """``numpy.vander``: columns of powers, by a running product (exact at zeros).

    Examples
    --------
    >>> x = dualad.tensor([2.0, 3.0], requires_grad=True)
    >>> y = dnp.vander(x, 3); y.sum().backward()
    >>> y.detach()
    tensor([[4., 2., 1.],
            [9., 3., 1.]])
    >>> x.grad  # d(x**2 + x + 1) = 2x + 1
    tensor([5., 7.])
    """
    x = asarray_t(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else int(N)
    dt = np.promote_types(x.dtype, int)
    x = astype(x, dt, copy=False)
    if n == 0:
        return _make(_B.empty((x.shape[0], 0), dt, like=_device_like(x._data)))
    cols = concatenate([_make(_B.ones((x.shape[0], 1), dt, like=_device_like(x._data))),
                        broadcast_to(reshape(x, (-1, 1)), (x.shape[0], n - 1))], axis=1)
    v = cumprod(cols, axis=1)
    return v if increasing else flip(v, 1)
