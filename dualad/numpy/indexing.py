"""Indexing: ``take``, ``take_along_axis``, ``choose``, ``compress``, ``select``, ``r_``, ``c_``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import as_array as _as_array
from ..backends.namespace import like as _device_like
from ..core.tensor import Tensor, _make
from ..rules._util import norm_axis as _norm_axis
from ..rules._util import shape_of as _shape_of
from ..rules.vocabulary import (
    _no_out,
    _on_one_device,
    _raw,
    asarray_t,
    astype,
    broadcast_to,
    concatenate,
    diagonal,
    getitem,
    ravel,
    reshape,
    take,
    transpose,
    where,
)
from .manipulation import unstack

__all__ = [
    "c_", "choose", "compress", "diagonal", "extract", "getitem", "r_", "select", "take",
    "take_along_axis", "where",
]


def take_along_axis(arr: Any, indices: Any, axis: int | None) -> Any:
    """``numpy.take_along_axis``: a gather; its derivative scatters back.

    Examples
    --------
    >>> x = dualad.tensor([[3.0, 1.0], [2.0, 4.0]], requires_grad=True)
    >>> i = dnp.argmax(x, axis=1, keepdims=True)
    >>> y = dnp.take_along_axis(x, i, axis=1); y.sum().backward()
    >>> y.detach()
    tensor([[3.],
            [4.]])
    >>> x.grad
    tensor([[1., 0.],
            [0., 1.]])
    """
    arr = asarray_t(arr)
    ind = _B.to_host(_raw(indices))
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


# -- index tricks ---------------------------------------------------------------------------


class _AxisConcatenator:
    """``numpy.r_`` / ``numpy.c_`` with Tensors among the items (NumPy's rules, then
    a differentiable concatenate)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str) -> None:
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):  # (np.bmat of variable names in the caller's frame)
            raise TypeError(f"dualad.numpy.{self.name}: the matrix-string form builds a "
                            "numpy.matrix, which dualad does not support; build the 2-D "
                            "Tensor with dualad.numpy.block or dualad.numpy.array")
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        objs, kinds = [], []
        matrix = col = False
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry.")
                if item in ("r", "c"):  # NumPy's matrix directives: a row or a column
                    matrix, col = True, item == "c"
                    continue
                try:
                    vals = [int(v) for v in item.split(",")]
                except ValueError as e:
                    raise ValueError(f"unknown special directive {item!r}") from e
                axis, ndmin, trans1d = (vals + [ndmin, trans1d][len(vals) - 1:])[:3]
                continue
            if isinstance(item, slice) or (not isinstance(item, Tensor)
                                           and type(item) in np.ScalarType):
                obj = np.r_[item] if isinstance(item, slice) else item  # NumPy's ranges
                if isinstance(item, slice) and ndmin > 1:
                    obj = np.array(obj, ndmin=ndmin)
                    if trans1d != -1:
                        obj = obj.swapaxes(-1, trans1d)
                objs.append(obj)
                kinds.append(item if not isinstance(item, slice) else obj.dtype)
                continue
            t = asarray_t(item)
            nd = t.ndim
            if nd < ndmin:
                t = reshape(t, (1,) * (ndmin - nd) + t.shape)
                if trans1d != -1:
                    k2, k1 = ndmin - nd, trans1d
                    k1 = k1 + k2 + 1 if k1 < 0 else k1
                    ax = list(range(ndmin))
                    t = transpose(t, ax[:k1] + ax[k2:] + ax[k1:k2])
            objs.append(t)
            kinds.append(t.dtype)
        if not objs:
            return _make(np.array([]))
        dt = np.result_type(*kinds)
        parts = []
        for o in objs:
            o = asarray_t(o) if isinstance(o, Tensor) else _make(np.array(o, ndmin=ndmin,
                                                                          dtype=dt))
            if o.ndim < ndmin:
                o = reshape(o, (1,) * (ndmin - o.ndim) + o.shape)
            parts.append(o)
        res = concatenate(_on_one_device(parts), axis=axis, dtype=dt)
        if matrix:  # (NumPy's np.matrix, as a 2-D Tensor: dualad has no matrix type)
            if res.ndim > 2:
                raise ValueError("matrix must be 2-dimensional")
            nd = res.ndim
            res = reshape(res, (1,) * (2 - nd) + res.shape)
            if nd == 1 and col:
                res = transpose(res)
        return res

    def __len__(self) -> int:
        return 0


r_ = _AxisConcatenator(0, 1, -1, "r_")
r_.__doc__ = """``numpy.r_``: concatenate along the first axis; Tensors among the items are
differentiable.

Examples
--------
>>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
>>> dnp.r_[x, 0.0, 1:3]
tensor([1., 2., 0., 1., 2.], grad_fn=<ConcatenateBackward0>)
"""
c_ = _AxisConcatenator(-1, 2, 0, "c_")
c_.__doc__ = """``numpy.c_``: 1-D items become columns, concatenated along the last axis.

Examples
--------
>>> x = dualad.tensor([1.0, 2.0])
>>> dnp.c_[x, x]
tensor([[1., 1.],
        [2., 2.]])
"""


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """``numpy.select``: the first true condition picks its choice (nested ``where``).

    Examples
    --------
    >>> x = dualad.tensor([-1.0, 0.5, 2.0])
    >>> dnp.select([x < 0, x > 1], [-x, x * x], default=x)
    tensor([1. , 0.5, 4. ])
    """
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    choices = [asarray_t(c) for c in choicelist]
    weak = default.__class__ in (int, float, complex)
    dflt = default if weak else asarray_t(default)
    dt = np.result_type(*[c.dtype for c in choices], default if weak else dflt.dtype)
    conds = [_as_array(_raw(c)) for c in condlist]  # (a lazy condition stays lazy)
    for i, c in enumerate(conds):
        if c.dtype.type is not np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    np.broadcast_shapes(*[c.shape for c in conds], *[c.shape for c in choices],
                        _shape_of(dflt))  # (NumPy's error where they do not broadcast)
    # the default as it is: the wheres broadcast it (a scalar broadcast up front would be a
    # NumPy array of the result's size met by the inputs' kind)
    out = dt.type(dflt) if weak else astype(asarray_t(dflt), dt, copy=False)
    for c, ch in zip(conds[::-1], choices[::-1], strict=True):
        out = where(c, astype(ch, dt, copy=False), out)
    return out


def compress(condition: Any, a: Any, axis: int | None = None) -> Any:
    """``numpy.compress``: a gather of the selected slices (no ``out=``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.compress([True, False, True], x); y.detach()
    tensor([1., 3.])
    >>> y.sum().backward(); x.grad
    tensor([1., 0., 1.])
    """
    idx = np.nonzero(_B.to_host(_raw(condition)).astype(bool).ravel())[0]
    return take(a, idx, axis=axis)


def extract(condition: Any, arr: Any) -> Any:
    """``numpy.extract``: the elements where ``condition`` is true, flattened.

    Examples
    --------
    >>> x = dualad.tensor([1.0, -2.0, 3.0], requires_grad=True)
    >>> y = dnp.extract(x.detach() > 0, x); y.detach()
    tensor([1., 3.])
    >>> y.sum().backward(); x.grad
    tensor([1., 0., 1.])
    """
    return take(ravel(arr), np.nonzero(np.ravel(_raw(condition)))[0])


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """``numpy.choose``: element ``i`` of the result is element ``i`` of ``choices[a[i]]``
    (all broadcast together); a gather, differentiable in the choices.

    Examples
    --------
    >>> dnp.choose([1, 0, 1], [dualad.tensor([1.0, 2, 3]), dualad.tensor([4.0, 5, 6])])
    tensor([4., 2., 6.])
    """
    _no_out("choose", out)
    cs = ([asarray_t(c) for c in choices] if isinstance(choices, (list, tuple))
          else unstack(asarray_t(choices)))
    # NumPy's choose of the choices' numbers: its checks and its mode= ('raise', 'wrap', 'clip')
    k = np.asarray(np.choose(_B.to_host(_raw(a)), np.arange(len(cs)), mode=mode))
    k = _B.asarray_like(k, like=_device_like(cs[0]._data))  # (the selections' masks: their kind)
    dt = np.result_type(*[c.dtype for c in cs])
    out = broadcast_to(astype(cs[-1], dt, copy=False), np.broadcast_shapes(
        k.shape, *[c.shape for c in cs]))
    for j in range(len(cs) - 2, -1, -1):  # (selections: no stacked copy of the choices)
        out = where(k == j, cs[j], out)
    return out
