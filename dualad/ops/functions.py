"""The NumPy-level functions: argument handling in NumPy's terms, then primitives.

Most functions here are compositions of primitives (mean is a sum and a scale,
flip is an index, tile is a broadcast and a reshape), so their derivatives —
forward and reverse — come from the primitives' rules with no code of their own.
"""

from __future__ import annotations

import builtins
import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._backend import asarray as _asarray
from .._backend import like as _device_like
from .._dispatch import apply
from .._tensor import Tensor, _made, _make
from . import elementwise as E
from . import linear as L
from . import reductions as R
from ._util import norm_axes as _norm_axes
from ._util import norm_axis as _norm_axis
from ._util import shape_of as _shape_of

for _n, _p in E.PRIMS.items():
    globals()[_n] = _p
absolute = E.PRIMS["abs"]
conjugate = E.PRIMS["conj"]
true_divide = E.PRIMS["divide"]
pow = E.PRIMS["power"]  # noqa: A001 - NumPy 2 spelling
_P = E.PRIMS
L.matmul.fast = E.fast_product  # (its JVP on arrays; set here, where both modules are)


def _ndim(a: Any) -> int:
    return a.ndim if isinstance(a, Tensor) else np.ndim(a)


def asarray_t(a: Any) -> Tensor:
    return a if isinstance(a, Tensor) else _make(np.asarray(a))


# -- factories ------------------------------------------------------------------------------


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``.

    Examples
    --------
    >>> dualad.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor):
        data = data._data
    t = _made(_make(_asarray(data, dtype=dtype, copy=True)))
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    """A tensor sharing ``data``'s memory when its dtype allows (no copy).

    Examples
    --------
    >>> a = np.zeros(2); t = dualad.as_tensor(a); a[0] = 1; t
    tensor([1., 0.])
    """
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    return _made(_make(_asarray(data, dtype=dtype, copy=None)))


def _doc(first: str, example: str) -> str:
    """A factory's docstring: one line, then its example (run as a doctest)."""
    return f"{first}\n\nExamples\n--------\n{example}\n"


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
full = _factory(np.full, ">>> dualad.full((2,), 7.0)\ntensor([7., 7.])")
empty = _factory(np.empty, ">>> dualad.empty((2, 2)).shape\n(2, 2)")
arange = _factory(np.arange, ">>> dualad.arange(0.0, 1.0, 0.25)\ntensor([0.  , 0.25, 0.5 , 0.75])")
linspace = _factory(np.linspace, ">>> dualad.linspace(0, 1, 3, requires_grad=True)\n"
                                 "tensor([0. , 0.5, 1. ], requires_grad=True)")
eye = _factory(np.eye, ">>> dualad.eye(2)\ntensor([[1., 0.],\n        [0., 1.]])")


def _like(fn: Any, example: str) -> Any:
    def f(a: Any, *args: Any, requires_grad: bool = False, **kw: Any) -> Tensor:
        # NumPy's own positional arguments (dtype; full_like's fill_value first)
        d = a._data if isinstance(a, Tensor) else a
        if isinstance(a, Tensor) and a._nb:
            d = np.broadcast_to(d, d.shape)  # keep the batch axes
        t = _made(_make(fn(d, *args, **kw)))
        if isinstance(a, Tensor) and a._nb:
            t._nb = a._nb
        return t.requires_grad_(True) if requires_grad else t

    f.__name__ = fn.__name__
    f.__doc__ = _doc(f"Like ``numpy.{fn.__name__}``, returning a Tensor (no derivative).",
                     example)
    return f


zeros_like = _like(np.zeros_like, ">>> dualad.zeros_like(dualad.tensor([1.0, 2.0]))\n"
                                  "tensor([0., 0.])")
ones_like = _like(np.ones_like, ">>> dualad.ones_like(np.zeros(2, dtype=np.float32))\n"
                                "tensor([1., 1.], dtype=float32)")
full_like = _like(np.full_like, ">>> dualad.numpy.full_like(np.zeros(2), 3.0)\ntensor([3., 3.])")
empty_like = _like(np.empty_like, ">>> dualad.numpy.empty_like(np.zeros((2, 1))).shape\n(2, 1)")


def zeros_like_tangent(p: Any, like: Any) -> Tensor:
    """A zero tangent for ``p`` with the batch axes of ``like``."""
    return L.zeros_batched(p.shape, p.dtype, like)


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


# -- elementwise with NumPy's extra arguments -----------------------------------------------


def powm1(a: Any, b: Any) -> Any:
    """``a ** (b - 1)``, but 0 where ``a == b == 0`` (power's derivative without 0 * inf)."""
    if b.__class__ in (int, float) and b != 0:
        return a ** (b - 1)
    return where(logical_and(a == 0, b == 0), 0, a ** (b - 1))


def logical_and(a: Any, b: Any) -> Any:
    """``numpy.logical_and`` (a Python ``False`` short-circuits: rules test scalars this way)."""
    if a is False or b is False:
        return False
    return _P["logical_and"](a, b)


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``numpy.where``: differentiable in ``x`` and ``y``; one argument means ``nonzero``."""
    if x is None and y is None:
        return nonzero(condition)
    if isinstance(condition, (bool, np.bool_)):
        return x if condition else y
    if isinstance(condition, Tensor):
        condition = condition._data
    return apply(L.where, condition, x, y)


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """``numpy.clip``; the derivative passes where ``a_min <= a <= a_max``."""
    if a_min is None and a_max is None:
        raise ValueError("clip: one of a_min and a_max must be given")
    if a_min is None:
        return apply(_P["minimum"], a, a_max)
    if a_max is None:
        return apply(_P["maximum"], a, a_min)
    return apply(_P["clip"], a, a_min, a_max)


def round(a: Any, decimals: int = 0) -> Any:  # noqa: A001 - NumPy's name
    """``numpy.round``; derivative zero, like floor."""
    if decimals == 0:
        return apply(_P["rint"], a)
    s = 10.0**decimals
    return apply(_P["rint"], a * s) / s


around = round


def real(a: Any) -> Any:
    """``numpy.real``: the real part (the array itself for real input)."""
    if not _is_c(a):
        return asarray_t(a)
    return apply(_P["real"], a)


def imag(a: Any) -> Any:
    """``numpy.imag``: the imaginary part (zeros for real input)."""
    if not _is_c(a):
        return zeros_like(a)
    return apply(_P["imag"], a)


def conj(a: Any) -> Any:
    """``numpy.conj`` (identity for real input)."""
    return apply(_P["conj"], a) if _is_c(a) else asarray_t(a)


conjugate = conj


def _is_c(a: Any) -> bool:
    return (a._data.dtype.kind if isinstance(a, Tensor) else np.asarray(a).dtype.kind) == "c"


def astype(a: Any, dtype: Any, copy: bool = True) -> Tensor:
    """Cast; differentiable between floating/complex dtypes (complex -> real keeps the real part).

    Examples
    --------
    >>> x = dualad.tensor([1.5], requires_grad=True)
    >>> x.astype(np.float32).sum().backward(); x.grad  # the gradient comes back in float64
    tensor([1.])
    >>> x.astype(np.int64)  # integers carry no derivative
    tensor([1])
    """
    dt = np.dtype(dtype)
    a = asarray_t(a)
    if a.dtype == dt and not copy:
        return a
    if dt.kind not in "fc" or a.dtype.kind not in "fc":
        return _make(a._data.astype(dt))  # integers and booleans carry no derivative
    return apply(L.astype, a, dtype=dt)


# -- reductions -------------------------------------------------------------------------------


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """``numpy.sum`` with ``axis`` and ``keepdims``."""
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if a.dtype.kind in "biu" and dtype is None:
        return _make(np.asarray(np.sum(a._data, axis=axis, keepdims=keepdims)))
    return apply(L.reduce_sum, a, axis=_norm_axes(axis, a.ndim), keepdims=bool(keepdims))


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """``numpy.mean``."""
    a = asarray_t(a)
    if a.dtype.kind in "biu":
        a = astype(a, dtype or np.float64)
    elif dtype is not None:
        a = astype(a, dtype, copy=False)
    axes = _norm_axes(axis, a.ndim)
    n = _count(a.shape, axes)
    s = apply(L.reduce_sum, a, axis=axes, keepdims=bool(keepdims))
    return s * (1.0 / n) if n else s * np.nan


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0,
        keepdims: bool = False) -> Any:
    """``numpy.var`` (real result for complex input)."""
    a = asarray_t(a)
    if a.dtype.kind in "biu":
        a = astype(a, np.float64)
    axes = _norm_axes(axis, a.ndim)
    d = a - mean(a, axis=axes, keepdims=True)
    sq = real(d * conj(d)) if _is_c(d) else d * d
    n = _count(a.shape, axes) - ddof
    return sum(sq, axis=axes, keepdims=keepdims) * (1.0 / n if n > 0 else np.inf)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: float = 0,
        keepdims: bool = False) -> Any:
    """``numpy.std``."""
    return apply(_P["sqrt"], var(a, axis=axis, ddof=ddof, keepdims=keepdims))


def _extreme(prim: Any, a: Any, axis: Any, keepdims: bool, name: str) -> Any:
    a = asarray_t(a)
    axes = _norm_axes(axis, a.ndim)
    if a.size == 0 and _count(a.shape, axes) == 0:
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if a.dtype.kind not in "fc":
        fn = np.amax if name == "maximum" else np.amin
        return _make(np.asarray(fn(a._data, axis=axes, keepdims=keepdims)))
    return apply(prim, a, axis=axes, keepdims=bool(keepdims))


def amax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.amax``: ties share the derivative evenly."""
    return _extreme(R.amax, a, axis, keepdims, "maximum")


def amin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.amin``: ties share the derivative evenly."""
    return _extreme(R.amin, a, axis, keepdims, "minimum")


max = amax  # noqa: A001
min = amin  # noqa: A001


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.ptp``: max - min."""
    return amax(a, axis, keepdims) - amin(a, axis, keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """``numpy.prod`` (exact derivative at zeros)."""
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if a.dtype.kind not in "fc":
        return _make(np.asarray(np.prod(a._data, axis=axis, keepdims=keepdims)))
    return apply(R.prod, a, axis=_norm_axes(axis, a.ndim), keepdims=bool(keepdims))


def cumsum(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """``numpy.cumsum`` (``axis=None`` flattens first)."""
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if axis is None:
        a, axis = ravel(a), 0
    if a.dtype.kind not in "fc":
        return _make(np.cumsum(a._data, axis=axis))
    return apply(L.cumsum, a, axis=_norm_axis(axis, a.ndim))


def cumprod(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """``numpy.cumprod`` (``axis=None`` flattens first)."""
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if axis is None:
        a, axis = ravel(a), 0
    if a.dtype.kind not in "fc":
        return _make(np.cumprod(a._data, axis=axis))
    return apply(R.cumprod, a, axis=_norm_axis(axis, a.ndim))


def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """``numpy.nansum``: NaNs count as zero (and get zero derivative)."""
    a = asarray_t(a)
    return sum(where(_P["isnan"](a), 0, a), axis=axis, dtype=dtype, keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """``numpy.average``: differentiable in ``a`` and ``weights``."""
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


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.trace``."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


# -- non-differentiable results ---------------------------------------------------------------


def _nd(fn: Any) -> Any:
    def f(a: Any, *args: Any, **kw: Any) -> Any:
        d = a._data if isinstance(a, Tensor) else a
        r = fn(d, *args, **kw)
        return tuple(_make(x) for x in r) if isinstance(r, tuple) else _make(np.asarray(r))

    f.__name__ = fn.__name__
    f.__doc__ = f"``numpy.{fn.__name__}``: an integer result with no derivative."
    return f


argmax = _nd(np.argmax)
argmin = _nd(np.argmin)
argsort = _nd(np.argsort)
nonzero = _nd(np.nonzero)
argwhere = _nd(np.argwhere)
count_nonzero = _nd(np.count_nonzero)
isclose = lambda a, b, **kw: _make(np.isclose(_raw(a), _raw(b), **kw))  # noqa: E731
allclose = lambda a, b, **kw: bool(np.allclose(_raw(a), _raw(b), **kw))  # noqa: E731
array_equal = lambda a, b, **kw: bool(np.array_equal(_raw(a), _raw(b), **kw))  # noqa: E731
shape = lambda a: _shape_of(a)  # noqa: E731
ndim = lambda a: _ndim(a)  # noqa: E731
size = lambda a: int(np.prod(_shape_of(a)))  # noqa: E731


def _raw(a: Any) -> Any:
    return a._data if isinstance(a, Tensor) else a


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return _make(np.asarray(np.any(_raw(a), axis=axis, keepdims=keepdims)))


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return _make(np.asarray(np.all(_raw(a), axis=axis, keepdims=keepdims)))


def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None) -> Any:
    """``numpy.sort``: a gather by ``argsort``, so ties keep a stable order."""
    a = asarray_t(a)
    if axis is None:
        a, axis = ravel(a), -1
    idx = np.argsort(a._data, axis=axis, kind="stable" if kind is None else kind)
    return take_along_axis(a, idx, axis)


# -- shape and indexing -------------------------------------------------------------------------


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Any:
    """``numpy.reshape`` (C order)."""
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    a = asarray_t(a)
    shape = newshape if shape is None else shape
    if shape.__class__ is not tuple or not builtins.all(s.__class__ is int for s in shape):
        shape = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    # math.prod, not np.prod (nor Tensor.size, which uses it): this runs for every
    # reshape, expand_dims and squeeze, including those of the transpose rules
    size = math.prod(a.shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        shape = tuple((size // known if known else 0) if s == -1 else s for s in shape)
    if math.prod(shape) != size:
        raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
    if shape == a.shape:
        return a
    return apply(L.reshape, a, shape=shape)


def ravel(a: Any, order: str = "C") -> Any:
    """``numpy.ravel``."""
    a = asarray_t(a)
    return reshape(a, (a.size,), order)


def transpose(a: Any, axes: Any = None) -> Any:
    """``numpy.transpose``."""
    a = asarray_t(a)
    axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(_norm_axis(int(x), a.ndim)
                                                                     for x in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise ValueError("axes don't match array")
    if axes == tuple(range(a.ndim)):
        return a
    return apply(L.transpose, a, axes=axes)


permute_dims = transpose


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    a = asarray_t(a)
    p = list(range(a.ndim))
    i, j = _norm_axis(axis1, a.ndim), _norm_axis(axis2, a.ndim)
    p[i], p[j] = p[j], p[i]
    return transpose(a, p)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    a = asarray_t(a)
    src = [_norm_axis(int(s), a.ndim) for s in np.atleast_1d(source)]
    dst = [_norm_axis(int(d), a.ndim) for d in np.atleast_1d(destination)]
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a: Any, axis: Any) -> Any:
    a = asarray_t(a)
    axes = (axis,) if axis.__class__ is int or np.ndim(axis) == 0 else tuple(axis)
    nd = a.ndim + len(axes)
    axes = _norm_axes(axes, nd)
    it = iter(a.shape)
    return reshape(a, tuple(1 if i in axes else next(it) for i in range(nd)))


def squeeze(a: Any, axis: Any = None) -> Any:
    a = asarray_t(a)
    axes = tuple(i for i, d in enumerate(a.shape) if d == 1) if axis is None else _norm_axes(
        axis, a.ndim)
    for i in axes:
        if a.shape[i] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


def broadcast_to(a: Any, shape: Any) -> Any:
    a = asarray_t(a)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if a.shape == shape:
        return a
    # np.broadcast_shapes raises NumPy's error for incompatible shapes
    if np.broadcast_shapes(a.shape, shape) != shape or len(shape) < a.ndim:
        raise ValueError(f"operands could not be broadcast from {a.shape} to {shape}")
    return apply(L.broadcast_to, a, shape=shape)


def broadcast_arrays(*args: Any) -> list[Any]:
    shp = np.broadcast_shapes(*[_shape_of(a) for a in args])
    return [broadcast_to(a, shp) for a in args]


def atleast_1d(a: Any) -> Any:
    a = asarray_t(a)
    return reshape(a, (1,)) if a.ndim == 0 else a


def atleast_2d(a: Any) -> Any:
    a = asarray_t(a)
    return reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a


def getitem(a: Any, key: Any) -> Any:
    """``a[key]`` with basic, advanced and boolean indices."""
    a = asarray_t(a)
    idx = L.Index(key, a.ndim)
    if a.dtype.kind not in "fc":
        return _make(np.asarray(a._data[idx.key]))
    return apply(L.getitem, a, idx=idx)


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    """``numpy.concatenate``."""
    arrays = [asarray_t(x) for x in arrays]
    if axis is None:
        arrays, axis = [ravel(x) for x in arrays], 0
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    if builtins.any(x.ndim != nd for x in arrays):
        raise ValueError("all the input arrays must have same number of dimensions")
    dt = np.result_type(*[x.dtype for x in arrays]) if dtype is None else np.dtype(dtype)
    if dt.kind not in "fc":
        return _make(np.concatenate([x._data for x in arrays], axis=axis).astype(dt))
    arrays = [x if x.dtype == dt else astype(x, dt) for x in arrays]
    return apply(L.concatenate, *arrays, axis=_norm_axis(axis, nd))


concat = concatenate


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    arrays = [asarray_t(x) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if builtins.any(x.shape != arrays[0].shape for x in arrays):
        raise ValueError("all input arrays must have the same shape")
    ax = _norm_axis(axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(x, ax) for x in arrays], axis=ax)


def hstack(tup: Sequence[Any]) -> Any:
    arrs = [atleast_1d(x) for x in tup]
    return concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1)


def vstack(tup: Sequence[Any]) -> Any:
    return concatenate([atleast_2d(x) for x in tup], axis=0)


def diff(a: Any, n: int = 1, axis: int = -1) -> Any:
    """``numpy.diff``: the n-th discrete difference along ``axis`` (slices and a subtraction)."""
    a = asarray_t(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    ax = _norm_axis(axis, a.ndim)
    pre = (slice(None),) * ax
    for _ in range(n):
        a = getitem(a, pre + (slice(1, None),)) - getitem(a, pre + (slice(None, -1),))
    return a


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``numpy.append``: flattens both when ``axis`` is None."""
    arr, values = asarray_t(arr), asarray_t(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def column_stack(tup: Sequence[Any]) -> Any:
    """``numpy.column_stack``: 1-D arrays become columns."""
    arrs = [asarray_t(x) for x in tup]
    return concatenate([reshape(x, (-1, 1)) if x.ndim < 2 else x for x in arrs], axis=1)


def cross(a: Any, b: Any, axis: int = -1) -> Any:
    """``numpy.cross`` of 3-vectors along ``axis`` (bilinear: products of components)."""
    a, b = moveaxis(asarray_t(a), axis, -1), moveaxis(asarray_t(b), axis, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError("dualad.numpy.cross supports 3-vectors only")
    a0, a1, a2 = (getitem(a, (Ellipsis, i)) for i in range(3))
    b0, b1, b2 = (getitem(b, (Ellipsis, i)) for i in range(3))
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, axis)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``numpy.split``: each part is an index of the input."""
    ary = asarray_t(ary)
    ax = _norm_axis(axis, ary.ndim)
    n = ary.shape[ax]
    if np.ndim(indices_or_sections) == 0:
        k = int(indices_or_sections)
        if n % k:
            raise ValueError("array split does not result in an equal division")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    pre = (slice(None),) * ax
    return [getitem(ary, pre + (slice(lo, builtins.max(lo, hi)),))
            for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    ary = asarray_t(ary)
    n = ary.shape[_norm_axis(axis, ary.ndim)]
    if np.ndim(indices_or_sections) == 0:
        k = int(indices_or_sections)
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        indices_or_sections = np.cumsum(sizes)[:-1]
    return split(ary, indices_or_sections, axis)


def flip(m: Any, axis: Any = None) -> Any:
    m = asarray_t(m)
    axes = _norm_axes(axis, m.ndim)
    return getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None)
                            for i in range(m.ndim)))


def fliplr(m: Any) -> Any:
    return flip(m, 1)


def flipud(m: Any) -> Any:
    return flip(m, 0)


def take(a: Any, indices: Any, axis: int | None = None) -> Any:
    """``numpy.take`` (indices must be in range)."""
    a = asarray_t(a)
    if axis is None:
        return getitem(ravel(a), (np.asarray(_raw(indices)),))
    ax = _norm_axis(axis, a.ndim)
    return getitem(a, (slice(None),) * ax + (np.asarray(_raw(indices)),))


def take_along_axis(arr: Any, indices: Any, axis: int | None) -> Any:
    arr = asarray_t(arr)
    ind = np.asarray(_raw(indices))
    if axis is None:
        return getitem(ravel(arr), (ind,))
    ax = _norm_axis(axis, arr.ndim)
    if ind.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    key = []
    for i in range(arr.ndim):
        if i == ax:
            key.append(ind)
        else:
            shp = [1] * arr.ndim
            shp[i] = arr.shape[i]
            key.append(np.arange(arr.shape[i]).reshape(shp))
    return getitem(arr, tuple(key))


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    a = asarray_t(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = np.broadcast_to(shift, np.shape(axis)) if np.ndim(axis) else [shift]
    axes = np.atleast_1d(axis)
    for s, ax in zip(np.atleast_1d(shifts), axes, strict=True):
        ax = _norm_axis(int(ax), a.ndim)
        n = a.shape[ax]
        if n:
            a = take(a, (np.arange(n) - int(s)) % n, axis=ax)
    return a


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    a = asarray_t(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = _norm_axis(axis, a.ndim)
    return take(a, np.repeat(np.arange(a.shape[ax]), repeats), axis=ax)


def tile(A: Any, reps: Any) -> Any:
    A = asarray_t(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    nd = builtins.max(A.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    A = reshape(A, (1,) * (nd - A.ndim) + A.shape)
    inter = reshape(A, tuple(x for d in A.shape for x in (1, d)))
    big = broadcast_to(inter, tuple(x for r, d in zip(reps, A.shape, strict=True) for x in (r, d)))
    return reshape(big, tuple(r * d for r, d in zip(reps, A.shape, strict=True)))


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``numpy.pad``: 'constant' is a zero pad plus a constant; index modes are gathers."""
    a = asarray_t(array)
    width = tuple(tuple(int(v) for v in w) for w in np.broadcast_to(pad_width, (a.ndim, 2)))
    if mode == "constant":
        out = apply(L.pad_zero, a, width=width) if a.dtype.kind in "fc" else _make(
            np.pad(a._data, width))
        cv = kwargs.get("constant_values", 0)
        if np.any(np.asarray(cv) != 0):
            out = out + np.pad(np.zeros(a.shape, a.dtype), width, constant_values=cv)
        return out
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        idx = np.pad(np.arange(a.size).reshape(a.shape), width, mode=mode, **kwargs)
        return getitem(ravel(a), (idx,))
    raise NotImplementedError(
        f"pad: mode={mode!r} is not differentiable in dualad; use 'constant', 'edge', "
        "'reflect', 'symmetric' or 'wrap'"
    )


def _tri_mask(a: Any, k: int, upper: bool) -> Any:
    n, m = a.shape[-2], a.shape[-1]
    ones = np.ones((n, m), bool, like=_device_like(a._data))  # on a's device (NEP 35)
    return np.triu(ones, k) if upper else np.tril(ones, k)


def triu(m: Any, k: int = 0) -> Any:
    m = asarray_t(m)
    if m.ndim < 2:
        m = broadcast_to(m, (m.shape[0], m.shape[0]))
    return where(_tri_mask(m, k, True), m, 0)


def tril(m: Any, k: int = 0) -> Any:
    m = asarray_t(m)
    if m.ndim < 2:
        m = broadcast_to(m, (m.shape[0], m.shape[0]))
    return where(_tri_mask(m, k, False), m, 0)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.diagonal`` (as a gather; the diagonal is the last axis)."""
    a = asarray_t(a)
    a = moveaxis(a, (_norm_axis(axis1, a.ndim), _norm_axis(axis2, a.ndim)), (-2, -1))
    n, m = a.shape[-2], a.shape[-1]
    i = np.arange(builtins.max(0, -offset), builtins.min(n, m - offset))
    return getitem(a, (Ellipsis, i, i + offset))


def diag(v: Any, k: int = 0) -> Any:
    """``numpy.diag``: extract a diagonal, or build a matrix from one (a scatter)."""
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


# -- products and contractions ----------------------------------------------------------------


def matmul(a: Any, b: Any) -> Any:
    """``numpy.matmul`` (the ``@`` operator)."""
    if _ndim(a) == 0 or _ndim(b) == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    return apply(L.matmul, a, b)


def dot(a: Any, b: Any) -> Any:
    """``numpy.dot``."""
    na, nb = _ndim(a), _ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)  # type: ignore[name-defined] # noqa: F821
    if nb <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([-1], [-2]))


def vdot(a: Any, b: Any) -> Any:
    """``numpy.vdot``: conjugates the first argument, flattens both."""
    return sum(conj(ravel(a)) * ravel(b))


def inner(a: Any, b: Any) -> Any:
    if _ndim(a) == 0 or _ndim(b) == 0:
        return multiply(a, b)  # type: ignore[name-defined] # noqa: F821
    return tensordot(a, b, axes=([-1], [-1]))


def outer(a: Any, b: Any) -> Any:
    return reshape(ravel(a), (-1, 1)) * reshape(ravel(b), (1, -1))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``numpy.tensordot``, as an einsum."""
    na, nb = _ndim(a), _ndim(b)
    if np.ndim(axes) == 0:
        k = int(axes)
        ax_a, ax_b = list(range(na - k, na)), list(range(k))
    else:
        ax_a, ax_b = (list(np.atleast_1d(x)) for x in axes)
        ax_a = [_norm_axis(int(i), na) for i in ax_a]
        ax_b = [_norm_axis(int(i), nb) for i in ax_b]
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(na)]
    sb = [next(letters) for _ in range(nb)]
    for i, j in zip(ax_a, ax_b, strict=True):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in ax_a] + [c for j, c in enumerate(sb)
                                                           if j not in ax_b]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def kron(a: Any, b: Any) -> Any:
    a, b = asarray_t(a), asarray_t(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    ai = reshape(a, tuple(x for d in a.shape for x in (d, 1)))
    bi = reshape(b, tuple(x for d in b.shape for x in (1, d)))
    return reshape(ai * bi, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


def einsum(subscripts: str, *operands: Any, optimize: Any = None) -> Any:
    """``numpy.einsum`` (explicit or implicit output; ``...``; repeated indices)."""
    ops = [asarray_t(o) for o in operands]
    spec = subscripts.replace(" ", "")
    ins, arrow, out = spec.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ops):
        raise ValueError("einsum: number of subscripts and operands differ")
    used = set(spec) - set(".,->")
    free = iter(c for c in string.ascii_letters if c not in used)
    if "..." in spec:
        ell_nd = builtins.max([o.ndim - len(t.replace("...", "")) for t, o in zip(terms, ops,
                                                                                    strict=True)
                               if "..." in t] or [0])
        ell = "".join(next(free) for _ in range(ell_nd))
        terms = [t.replace("...", ell[ell_nd - (o.ndim - len(t.replace("...", ""))):])
                 for t, o in zip(terms, ops, strict=True)]
        if arrow:
            out = out.replace("...", ell)
    else:
        ell = ""
    if not arrow:
        counts = {c: "".join(terms).count(c) for c in set("".join(terms))}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    # Repeated letters inside one operand are diagonals: take them first.
    for k, (t, o) in enumerate(zip(terms, ops, strict=True)):
        while len(set(t)) != len(t):
            c = next(c for c in t if t.count(c) > 1)
            i = t.index(c)
            j = t.index(c, i + 1)
            o = diagonal(o, 0, i, j)
            t = "".join(x for n, x in enumerate(t) if n not in (i, j)) + c
        terms[k], ops[k] = t, o
    for t, o in zip(terms, ops, strict=True):
        if len(t) != o.ndim:
            raise ValueError(f"einsum: operand has {o.ndim} dims but subscripts {t!r}")
    if builtins.all(o.dtype.kind not in "fc" for o in ops):
        return _make(np.asarray(np.einsum(f"{','.join(terms)}->{out}", *[o._data for o in ops])))
    return apply(L.einsum, *ops, spec=f"{','.join(terms)}->{out}")
