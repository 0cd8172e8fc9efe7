"""Shared helpers for primitive definitions: batching, abstract shapes, arguments, and
which arguments of a transpose rule are placeholders."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends.namespace import namespace
from ..core.dispatch import LIN
from ..core.tensor import Tensor


def xp_of(*arrays: Any) -> Any:
    return namespace(*arrays)


def shape_of(a: Any) -> tuple[int, ...]:
    return a.shape if isinstance(a, Tensor) else np.shape(a)


def dtype_of(a: Any) -> Any:
    """A dtype, or the Python scalar itself (NumPy 2 treats those as weak)."""
    if isinstance(a, Tensor):
        return a._data.dtype
    if isinstance(a, (bool, int, float, complex)):
        return a
    dt = getattr(a, "dtype", None)  # (an array of any kind: a CuPy one does not convert)
    return np.asarray(a).dtype if dt is None else dt


def is_complex(a: Any) -> bool:
    if isinstance(a, Tensor):
        return a._data.dtype.kind == "c"
    return isinstance(a, complex) or np.dtype(dtype_of(a)).kind == "c"


def is_lin(a: Any) -> bool:
    """Whether ``a`` is a placeholder of reverse mode's linearization: an argument a
    transpose rule gives a cotangent to (the others are the linear map's constants)."""
    return a.__class__ is Tensor and a._level == LIN


def norm_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Axis argument to a sorted tuple of non-negative ints (None means all)."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return tuple(sorted(out))


def norm_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


# -- batching: tangents with ``nb`` leading batch axes ------------------------------------


def align(a: Any, nb: int, nd: int) -> Any:
    """Insert axes after the batch axes so ``a`` has logical rank ``nd``."""
    k = np.ndim(a) - nb
    if nb and k < nd:
        return a.reshape(a.shape[:nb] + (1,) * (nd - k) + a.shape[nb:])
    return a


def elementwise_batch(impl: Any) -> Any:
    """Batching rule of an elementwise op: align logical axes, broadcast the batch."""

    def batch(arrays: list[Any], nbs: list[int], **params: Any) -> tuple[Any, int]:
        nd = max(np.ndim(a) - n for a, n in zip(arrays, nbs, strict=True))
        return impl(*[align(a, n, nd) for a, n in zip(arrays, nbs, strict=True)], **params), max(
            nbs
        )

    return batch


def elementwise_aval(args: Any, **params: Any) -> tuple[tuple[int, ...], Any]:
    shapes = [a.shape for a in args if isinstance(a, Tensor)]
    dts = [a._data.dtype for a in args if isinstance(a, Tensor)]
    rest = [a for a in args if not isinstance(a, Tensor)]
    if all(s == shapes[0] for s in shapes) and all(d == dts[0] for d in dts) and all(
        isinstance(r, (int, float)) and not isinstance(r, bool) and dts[0].kind in "fc"
        for r in rest
    ):
        return shapes[0], dts[0]  # the common case, without NumPy's slower helpers
    shape = np.broadcast_shapes(*[shape_of(a) for a in args])
    return shape, np.result_type(*[dtype_of(a) for a in args])


def same_aval(args: Any, **params: Any) -> tuple[tuple[int, ...], Any]:
    return args[0].shape, args[0].dtype


def proxy(a: Any) -> Any:
    """A zero-strided stand-in with ``a``'s shape and dtype (costs no memory)."""
    if isinstance(a, Tensor):
        return np.broadcast_to(np.zeros((), a._data.dtype), a.shape)
    return a  # constants are real values


def proxy_aval(impl: Any) -> Any:
    """Abstract evaluation by running ``impl`` on zero-strided proxies (views only)."""

    def aval(args: Any, **params: Any) -> tuple[tuple[int, ...], Any]:
        r = impl(*[proxy(a) for a in args], **params)
        return np.shape(r), np.asarray(r).dtype if np.isscalar(r) else r.dtype

    return aval


def move_batch_last(a: Any, nb: int) -> Any:
    return np.moveaxis(a, tuple(range(nb)), tuple(range(a.ndim - nb, a.ndim))) if nb else a


def move_batch_first(a: Any, nb: int) -> Any:
    return np.moveaxis(a, tuple(range(a.ndim - nb, a.ndim)), tuple(range(nb))) if nb else a
