"""Array manipulation: shapes, views, joining, splitting, tiling, rearranging.

All are compositions of the linear primitives (reshape, transpose, broadcast,
index, concatenate), so their derivatives need no code of their own.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import like as _device_like
from ..core import dispatch as D
from ..core.dispatch import apply
from ..core.tensor import Tensor, _make
from ..rules import linear as L
from ..rules._util import norm_axis as _norm_axis
from ..rules._util import shape_of as _shape_of
from ..rules.vocabulary import (
    _alias,
    _copy,
    _ndim,
    _raw,
    asarray_t,
    astype,
    broadcast_to,
    concatenate,
    expand_dims,
    flip,
    getitem,
    matrix_transpose,
    moveaxis,
    pad,
    ravel,
    reshape,
    roll,
    shape,
    size,
    squeeze,
    stack,
    swapaxes,
    take,
    transpose,
)

# (reshape, transpose and permute_dims are exported as reshape_view and transpose_view, by
# dualad.numpy: the functions here call the vocabulary's reshape and transpose)
__all__ = [
    "append", "array_split", "astype", "atleast_1d", "atleast_2d", "atleast_3d", "block",
    "broadcast_arrays", "broadcast_to", "column_stack", "concat", "concatenate", "delete", "dsplit",
    "dstack", "expand_dims", "flip", "fliplr", "flipud", "hsplit", "hstack", "insert",
    "matrix_transpose", "moveaxis", "ndim", "pad", "ravel", "repeat", "resize", "roll", "rollaxis",
    "rot90", "shape", "size", "split", "squeeze", "stack", "swapaxes", "tile", "unstack", "vsplit",
    "vstack",
]


def ndim(a: Any) -> int:
    """``numpy.ndim``: an int.

    Examples
    --------
    >>> dnp.ndim(dualad.tensor([[1.0, 2.0]]))
    2
    """
    return _ndim(a)


permute_dims = transpose


def view_of(r: Any, a: Any) -> Any:
    """``r`` (a reshape or transpose of ``a``), a new view when it is ``a`` itself: NumPy's
    ``reshape`` and ``transpose`` always return a new array object. Internal callers keep
    the tensor itself (no node); what users call returns a view, so that what they do to
    it (``requires_grad_``, ``retain_grad``, hooks, writes) acts on a view, as in NumPy
    and torch, not on ``a``."""
    if r is not a or a.__class__ is not Tensor:
        return r
    # (nothing to record or carry: the alias)
    if not a._requires_grad and not a._level and not a._batch_ndim:
        v = _make(a._data)
        v._version_cell = a._version_counter()
        D.register_view(L.reshape, a, v, {"shape": a.shape})
        return v
    v = apply(L.reshape, a, shape=a.shape)
    # the same arrays, as objects: what is known of an array by its identity (a seed
    # identity, a known diagonal: see linear.identity_seed) stays known through the view
    v._share_arrays(a)
    return v


def reshape_view(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Any:
    """``numpy.reshape``: a view of ``a`` when its memory allows, else a copy; ``order="F"``
    reads and writes in Fortran index order.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> y = dnp.reshape(x, (2, 2)); (y * dualad.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    >>> y.detach()
    tensor([[1., 2.],
            [3., 4.]])
    >>> x.grad
    tensor([1., 2., 3., 4.])
    """
    return view_of(reshape(a, shape, order, newshape=newshape), a)


def transpose_view(a: Any, axes: Any = None) -> Any:
    """``numpy.transpose`` (also ``numpy.permute_dims``, its array-API name): a view of
    ``a`` with its axes permuted.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.transpose(a.detach())
    tensor([[1., 3.],
            [2., 4.]])
    >>> (dnp.permute_dims(a, (1, 0)) * dualad.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    >>> a.grad
    tensor([[1., 3.],
            [2., 4.]])
    """
    return view_of(transpose(a, axes), a)


def broadcast_arrays(*args: Any) -> list[Any]:
    """``numpy.broadcast_arrays``: each argument broadcast to the common shape
    (differentiable; a list, and no ``subok=``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> a, b = dnp.broadcast_arrays(x, np.zeros((3, 1))); a.shape, b.shape
    ((3, 2), (3, 2))
    >>> a.sum().backward(); x.grad
    tensor([3., 3.])
    """
    shp = np.broadcast_shapes(*[_shape_of(a) for a in args])
    return [broadcast_to(a, shp) for a in args]


def _atleast(arys: tuple[Any, ...], fn: Any) -> Any:
    out = tuple(fn(asarray_t(a)) for a in arys)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    """``numpy.atleast_1d`` (a tuple for several arguments).

    Examples
    --------
    >>> x = dualad.tensor(2.0, requires_grad=True)
    >>> y = dnp.atleast_1d(x); y.shape
    (1,)
    >>> (3 * y).sum().backward(); x.grad
    tensor(3.)
    """
    return _atleast(arys, lambda a: reshape(a, (1,)) if a.ndim == 0 else a)


def atleast_2d(*arys: Any) -> Any:
    """``numpy.atleast_2d`` (a tuple for several arguments).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.atleast_2d(x); y.shape
    (1, 2)
    >>> (y * [[3.0, 4.0]]).sum().backward(); x.grad
    tensor([3., 4.])
    """
    return _atleast(arys, lambda a: reshape(a, (1,) * (2 - a.ndim) + a.shape)
                    if a.ndim < 2 else a)


def atleast_3d(*arys: Any) -> Any:
    """``numpy.atleast_3d``: (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1).

    Examples
    --------
    >>> dnp.atleast_3d(dualad.tensor([1.0, 2.0])).shape
    (1, 2, 1)
    """
    def f(a: Tensor) -> Tensor:
        if a.ndim >= 3:
            return a
        return reshape(a, {0: (1, 1, 1), 1: (1,) + a.shape + (1,), 2: a.shape + (1,)}[a.ndim])

    return _atleast(arys, f)


concat = _alias(concatenate, "concat",
                ">>> dnp.concat([dualad.tensor([1.0]), dualad.tensor([2.0, 3.0])])\n"
                "tensor([1., 2., 3.])")


def hstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """``numpy.hstack``.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.hstack([x, 3 * x]); y.detach()
    tensor([1., 2., 3., 6.])
    >>> y.sum().backward(); x.grad
    tensor([4., 4.])
    """
    arrs = [atleast_1d(x) for x in tup]
    return concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype,
                       casting=casting)


def vstack(tup: Sequence[Any], *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """``numpy.vstack``: 1-D inputs become rows.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.vstack([x, dualad.tensor([3.0, 4.0])]); (y * y).sum().backward()
    >>> y.detach()
    tensor([[1., 2.],
            [3., 4.]])
    >>> x.grad
    tensor([2., 4.])
    """
    return concatenate([atleast_2d(x) for x in tup], axis=0, dtype=dtype, casting=casting)



def dstack(tup: Sequence[Any]) -> Any:
    """``numpy.dstack``: stack along the third axis.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.dstack([x, 3 * x]); y.shape
    (1, 2, 2)
    >>> y.sum().backward(); x.grad
    tensor([4., 4.])
    """
    return concatenate([atleast_3d(x) for x in tup], axis=2)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``numpy.append``: flattens both when ``axis`` is None.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.append(x, 3 * x); y.detach()
    tensor([1., 2., 3., 6.])
    >>> y.sum().backward(); x.grad
    tensor([4., 4.])
    """
    arr, values = asarray_t(arr), asarray_t(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def column_stack(tup: Sequence[Any]) -> Any:
    """``numpy.column_stack``: 1-D arrays become columns.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.column_stack([x, 2 * x]); y.detach()
    tensor([[1., 2.],
            [2., 4.]])
    >>> y.sum().backward(); x.grad
    tensor([3., 3.])
    """
    arrs = [asarray_t(x) for x in tup]
    return concatenate([reshape(x, (-1, 1)) if x.ndim < 2 else x for x in arrs], axis=1)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``numpy.split``: each part is an index of the input.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    >>> a, b = dnp.split(x, [1]); (a.sum() + 2 * b.sum()).backward()
    >>> a.detach(), b.detach()
    (tensor([1.]), tensor([2., 3., 4.]))
    >>> x.grad
    tensor([1., 2., 2., 2.])
    """
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
    """``numpy.array_split``: like :func:`split`, but the sections may differ in size by
    one; a list of Tensors, each an index of the input.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> a, b = dnp.array_split(x, 2); a.shape, b.shape
    ((2,), (1,))
    >>> (a.sum() + 10 * b.sum()).backward(); x.grad
    tensor([ 1.,  1., 10.])
    """
    ary = asarray_t(ary)
    n = ary.shape[_norm_axis(axis, ary.ndim)]
    if np.ndim(indices_or_sections) == 0:
        k = int(indices_or_sections)
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        indices_or_sections = np.cumsum(sizes)[:-1]
    return split(ary, indices_or_sections, axis)


def fliplr(m: Any) -> Any:
    """``numpy.fliplr``: reverse the second axis.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.fliplr(a); y.detach()
    tensor([[2., 1.],
            [4., 3.]])
    >>> y[0, 0].backward(); a.grad
    tensor([[0., 1.],
            [0., 0.]])
    """
    return flip(m, 1)


def flipud(m: Any) -> Any:
    """``numpy.flipud``: reverse the first axis.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.flipud(a); y.detach()
    tensor([[3., 4.],
            [1., 2.]])
    >>> y[0, 0].backward(); a.grad
    tensor([[0., 0.],
            [1., 0.]])
    """
    return flip(m, 0)


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    """``numpy.repeat`` (a gather: the derivative sums over the copies).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.repeat(x, [1, 3]); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 2., 2., 2.]), tensor([1., 3.]))
    """
    a = asarray_t(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = _norm_axis(axis, a.ndim)
    n = a.shape[ax]
    if np.ndim(repeats) == 0 or (np.size(repeats) == 1 and n != 1):
        # (one count for every element): a broadcast over a new axis after ``ax`` and a
        # reshape that merges the two, on fresh memory laid out as NumPy's result (C
        # order), so that a later reshape of it is a view where NumPy's is
        r = int(np.reshape(repeats, ()))
        if r < 0:
            raise ValueError("repeat: repeats may not contain negative values")
        shape = a.shape[:ax + 1] + (1,) + a.shape[ax + 1:]
        big = broadcast_to(reshape(a, shape), shape[:ax + 1] + (r,) + shape[ax + 2:])
        return _fresh(reshape(big, a.shape[:ax] + (n * r,) + a.shape[ax + 1:]), a)
    i = np.repeat(np.arange(n), repeats)
    if ax == 0:
        return take(a, i, axis=0)
    # a gather by an index array on every axis up to ``ax`` (an open mesh): its result is
    # laid out in C order, as NumPy's (a[:, i] would put the indexed axis first in memory)
    key = tuple(np.arange(a.shape[k]).reshape((-1,) + (1,) * (ax - k)) for k in range(ax))
    return getitem(a, key + (i,))


def tile(A: Any, reps: Any) -> Any:
    """``numpy.tile`` (a broadcast and a reshape, on fresh memory as NumPy's).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.tile(x, 2); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 2., 1., 2.]), tensor([2., 2.]))
    """
    A = asarray_t(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    nd = builtins.max(A.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    A = reshape(A, (1,) * (nd - A.ndim) + A.shape)
    inter = reshape(A, tuple(x for d in A.shape for x in (1, d)))
    big = broadcast_to(inter, tuple(x for r, d in zip(reps, A.shape, strict=True) for x in (r, d)))
    return _fresh(reshape(big, tuple(r * d for r, d in zip(reps, A.shape, strict=True))), A)


def _fresh(r: Tensor, a: Tensor) -> Tensor:
    """``r`` (made from ``a`` by views and reshapes), on memory of its own: where the
    reshape could keep ``a``'s memory (a count of 1, an axis of length 1) it is a view,
    read-only if broadcast, which NumPy's ``tile`` and ``repeat`` never return."""
    return _copy(r) if D.shares(r._data, a._data) or r._data is a._data else r


def rot90(m: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """``numpy.rot90``: flips and a transpose.

    Examples
    --------
    >>> dnp.rot90(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[2., 4.],
            [1., 3.]])
    """
    m = asarray_t(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or builtins.abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if not (-m.ndim <= axes[0] < m.ndim and -m.ndim <= axes[1] < m.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(m.ndim))
    i, j = _norm_axis(axes[0], m.ndim), _norm_axis(axes[1], m.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    if k == 1:
        return transpose(flip(m, axes[1]), perm)
    return flip(transpose(m, perm), axes[1])


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """``numpy.rollaxis`` (a transpose).

    Examples
    --------
    >>> dnp.rollaxis(dnp.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    >>> x = dualad.tensor([[1.0, 2.0]], requires_grad=True)
    >>> (dnp.rollaxis(x, 1) * dualad.tensor([[3.0], [4.0]])).sum().backward(); x.grad
    tensor([[3., 4.]])
    """
    a = asarray_t(a)
    n = a.ndim
    axis = _norm_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"start={start} out of range for array of ndim {n}")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    perm = [i for i in range(n) if i != axis]
    perm.insert(start, axis)
    return transpose(a, perm)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``numpy.vsplit``: split along the first axis (at least 2-D).

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> top, bottom = dnp.vsplit(x, 2); (top.sum() - bottom.sum()).backward()
    >>> bottom.detach()
    tensor([[3., 4.]])
    >>> x.grad
    tensor([[ 1.,  1.],
            [-1., -1.]])
    """
    ary = asarray_t(ary)
    if ary.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``numpy.hsplit``: split along the second axis (the first for 1-D).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> l, r = dnp.hsplit(a, 2); l.detach()
    tensor([[1.],
            [3.]])
    >>> (l.sum() + 10 * r.sum()).backward(); a.grad
    tensor([[ 1., 10.],
            [ 1., 10.]])
    """
    ary = asarray_t(ary)
    if ary.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """``numpy.dsplit``: split along the third axis (at least 3-D).

    Examples
    --------
    >>> x = dualad.tensor([[[1.0, 2.0]]], requires_grad=True)
    >>> a, b = dnp.dsplit(x, 2); a.shape
    (1, 1, 1)
    >>> (a.sum() + 10 * b.sum()).backward(); x.grad
    tensor([[[ 1., 10.]]])
    """
    ary = asarray_t(ary)
    if ary.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def block(arrays: Any) -> Any:
    """``numpy.block``: nested lists concatenated, the innermost along the last axis.

    Examples
    --------
    >>> a = dualad.tensor([[1.0]])
    >>> dnp.block([[a, 2 * a], [3 * a, 4 * a]])
    tensor([[1., 2.],
            [3., 4.]])
    """
    def depth(x: Any) -> int:
        if isinstance(x, tuple):
            raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                            "np.block does not allow implicit conversion from tuple to ndarray.")
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0

    def leaves(x: Any) -> list[Any]:
        return [y for e in x for y in leaves(e)] if isinstance(x, list) else [asarray_t(x)]

    d = depth(arrays)
    nd = builtins.max([d] + [t.ndim for t in leaves(arrays)])

    def rec(x: Any, level: int) -> Any:
        if isinstance(x, list):
            return concatenate([rec(e, level + 1) for e in x], axis=-(d - level))
        t = asarray_t(x)
        return reshape(t, (1,) * (nd - t.ndim) + t.shape)

    return rec(arrays, 0)


def delete(arr: Any, obj: Any, axis: int | None = None) -> Any:
    """``numpy.delete``: a gather of the slices kept.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.delete(x, 1); y.detach()
    tensor([1., 3.])
    >>> y.sum().backward(); x.grad
    tensor([1., 0., 1.])
    """
    arr = asarray_t(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    ax = _norm_axis(axis, arr.ndim)
    keep = np.delete(np.arange(arr.shape[ax]), _raw(obj))
    return take(arr, keep, axis=ax)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``numpy.insert``: ``values`` (cast to ``arr``'s dtype) placed before the indices
    ``obj`` (an index, a sequence of them or a slice; ``axis=None`` flattens ``arr``).

    NumPy's own insert, run on the positions of the elements, says where each one goes;
    the result is a gather of ``arr`` and ``values`` (differentiable in both).

    Examples
    --------
    >>> dnp.insert(dualad.tensor([1.0, 2.0, 3.0]), [0, 2], dualad.tensor([9.0, 8.0]))
    tensor([9., 1., 2., 8., 3.])
    """
    arr, values = asarray_t(arr), asarray_t(values)
    if axis is None:
        arr, axis = ravel(arr), 0
    pos = np.arange(1, arr.size + 1).reshape(arr.shape)  # arr's elements: 1, 2, ...
    vpos = -np.arange(1, values.size + 1).reshape(values.shape)  # values': -1, -2, ...
    w = np.insert(pos, _raw(obj), vpos, axis=axis)
    src = concatenate([ravel(arr), ravel(astype(values, arr.dtype, copy=False))])
    return reshape(take(src, np.where(w > 0, w - 1, arr.size - w - 1).ravel()), w.shape)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """``numpy.unstack``: the slices along ``axis``.

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> a, b = dnp.unstack(x, axis=1); (a.sum() + 2 * b.sum()).backward()
    >>> a.detach(), b.detach()
    (tensor([1., 3.]), tensor([2., 4.]))
    >>> x.grad
    tensor([[1., 2.],
            [1., 2.]])
    """
    x = asarray_t(x)
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    ax = _norm_axis(axis, x.ndim)
    return tuple(getitem(x, (slice(None),) * ax + (i,)) for i in range(x.shape[ax]))


def resize(a: Any, new_shape: Any) -> Any:
    """``numpy.resize``: the flattened input repeated to fill ``new_shape`` (a gather).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.resize(x, 4); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 2., 3., 1.]), tensor([2., 1., 1.]))
    """
    a = ravel(asarray_t(a))
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    n = math.prod(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    if a.size == 0 or n == 0:
        return _make(_B.zeros(shape, a.dtype, like=_device_like(a._data)))
    return reshape(take(a, np.arange(n) % a.size), shape)
