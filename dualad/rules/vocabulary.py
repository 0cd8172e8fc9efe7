"""The array functions that derivative rules, transpose rules and the NumPy API are written in.

Each is a composition of primitives (``reshape``, ``sum`` over axes, ``where``,
``matmul``, ``getitem``, ...) taking NumPy's arguments, so rules read like the
NumPy code they differentiate and need nothing from the public namespace
:mod:`dualad.numpy`, which is built on this module. The elementwise primitives
are bound here under their NumPy names too (``exp``, ``add``, ...): the formulas
of the rule table are evaluated with these names.
"""

from __future__ import annotations

import builtins
import math
import string
import types
from collections.abc import Sequence
from operator import index as _index
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import as_array as _as_array
from ..backends.namespace import like as _device_like
from ..backends.namespace import to_kind as _to_kind
from ..core import dispatch as D
from ..core.dispatch import apply
from ..core.tensor import Tensor, _made, _make
from . import elementwise as E
from . import linear as L
from . import reductions as R
from ._util import norm_axes as _norm_axes
from ._util import norm_axis as _norm_axis
from ._util import shape_of as _shape_of

for _n, _p in E.PRIMS.items():
    globals()[_n] = _p
_P = E.PRIMS


# -- arguments: sequences holding Tensors, values without derivative ---------------------------


def _ndim(a: Any) -> int:
    return a.ndim if isinstance(a, Tensor) else np.ndim(_detached(a))


def _seq(a: Any) -> Any:
    """A list or tuple as a Tensor (stacked differentiably if it holds Tensors); anything
    else as it is."""
    return asarray_t(a) if isinstance(a, (list, tuple)) else a


def asarray_t(a: Any) -> Tensor:
    if isinstance(a, Tensor):
        return a
    if isinstance(a, (list, tuple)) and _holds_tensor(a):
        return _from_sequence(a)
    if a.__class__ is np.ndarray or isinstance(a, (int, float, complex, list, np.generic)):
        return _make(np.asarray(a))
    return _make(_as_array(a))  # (a Dask or CuPy array as it is: lazy stays lazy)


def _holds_tensor(obj: Any) -> bool:
    if isinstance(obj, Tensor):
        return True
    return isinstance(obj, (list, tuple)) and builtins.any(_holds_tensor(x) for x in obj)


def _from_sequence(seq: Any) -> Tensor:
    """A (nested) list or tuple holding Tensors, stacked differentiably.

    Each item becomes an array the way ``numpy.array`` makes it (a Python float is
    float64 here, as in ``np.array([np.float32(1), 2.5])``), and the items, which
    must have one shape, are stacked along a new first axis in their common dtype.
    """
    parts = [asarray_t(x) for x in seq]
    shapes = {p.shape for p in parts}
    if len(shapes) > 1:
        raise ValueError(
            "setting an array element with a sequence: the items have different shapes "
            f"{sorted(shapes)} (an inhomogeneous shape); dualad stacks only items of one shape")
    return stack(_on_one_device(parts))


def _on_one_device(parts: list[Tensor]) -> list[Tensor]:
    """``parts`` with the constants dualad made on the host from Python values (numbers,
    ranges) moved to the device of the others (a CuPy GPU), so that ``dnp.array([x, 2.0])``
    and ``dnp.r_[x, 0:3]`` work there as with NumPy arrays."""
    ref = next((p._data for p in parts if p._data.__class__ is not np.ndarray), None)
    if ref is None:
        return parts
    return [_make(_to_kind(p._data, ref)) if p._data.__class__ is np.ndarray
            and p._level == 0 and not p._requires_grad else p for p in parts]


D.install_sequences(_holds_tensor, _seq)  # (apply's sequence arguments holding Tensors)


def _detached(obj: Any) -> Any:
    """``obj`` with every Tensor in it replaced by its value (no derivative)."""
    if isinstance(obj, Tensor):
        return obj._data
    if isinstance(obj, (list, tuple)) and _holds_tensor(obj):
        return [_detached(x) for x in obj]
    return obj


# -- creation -------------------------------------------------------------------------------


def array(object: Any, dtype: Any = None, *, copy: bool | None = True, order: str = "K",  # noqa: A002
          subok: bool = False, ndmin: int = 0, like: Any = None) -> Tensor:
    """``numpy.array`` for Tensors: nested lists and tuples mixing Tensors, arrays and
    scalars are stacked differentiably.

    NumPy's own ``np.array([x, y])`` cannot dispatch to dualad, and raises while ``x``
    or ``y`` is being differentiated; this is the function to call instead.

    Examples
    --------
    >>> x = dualad.tensor(2.0, requires_grad=True)
    >>> y = dnp.array([x, x * x, 1.0])
    >>> y.sum().backward(); x.grad
    tensor(5.)
    """
    if not _holds_tensor(object):
        return _held(_make(np.array(object, dtype=dtype, copy=copy, order=order, ndmin=ndmin)))
    t = asarray_t(object)
    if dtype is not None and np.dtype(dtype) != t.dtype:
        t = astype(t, dtype)
    elif copy and t is object:
        t = _copy(t)
    if t.ndim < ndmin:
        t = reshape(t, (1,) * (ndmin - t.ndim) + t.shape)
    return t if t is object else _held(t)


def _copy(t: Tensor) -> Tensor:
    return apply(_P["positive"], t) if t.dtype.kind in "fc" else _make(t._data.copy())


def _held(t: Tensor) -> Tensor:
    """``t`` (new), marked as an array if it is 0-d: NumPy's constructors and ``copy``
    return 0-d arrays, not scalars, so ``t op= y`` writes into it (``rules.inplace.scalar``).
    """
    if not t._data.ndim:
        t._meta_().array = True
    return t


def copy(a: Any, order: str = "K", subok: bool = False) -> Tensor:
    """``numpy.copy`` (differentiable: the identity on fresh memory; ``order`` and ``subok``
    are ignored).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.copy(x); y is x
    False
    >>> (2 * y).sum().backward(); x.grad
    tensor([2., 2.])
    """
    return _held(_copy(asarray_t(a)))


def _doc(first: str, example: str) -> str:
    """A factory's docstring: one line, then its example (run as a doctest)."""
    return f"{first}\n\nExamples\n--------\n{example}\n"


def _alias(fn: Any, name: str, example: str, first: str = "") -> Any:
    """``fn`` under NumPy's other name, with a docstring of its own: a copy of the function
    object (the same code, so no extra call)."""
    f = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    f.__kwdefaults__, f.__annotations__ = fn.__kwdefaults__, fn.__annotations__
    f.__qualname__, f.__module__ = name, fn.__module__
    f.__doc__ = _doc(first or f"``numpy.{name}``: alias of :func:`{fn.__name__}`.", example)
    return f


def _like(fn: Any, example: str) -> Any:
    def f(a: Any, *args: Any, requires_grad: bool = False, **kw: Any) -> Tensor:
        # NumPy's own positional arguments (dtype; full_like's fill_value first)
        d = a._data if isinstance(a, Tensor) else a
        if isinstance(a, Tensor) and a._level >= D.LIN:  # a symbolic tangent: its shape and
            d = np.broadcast_to(np.zeros((), d.dtype), d.shape)  # dtype, with no values
        if isinstance(a, Tensor) and a._batch_ndim:
            d = np.broadcast_to(d, d.shape)  # keep the batch axes
        t = _made(_make(fn(d, *args, **kw)))
        if isinstance(a, Tensor) and a._batch_ndim:
            t._batch_ndim = a._batch_ndim
        return t.requires_grad_(True) if requires_grad else t

    f.__name__ = fn.__name__
    f.__doc__ = _doc(f"Like ``numpy.{fn.__name__}``, returning a Tensor (no derivative).",
                     example)
    return f


zeros_like = _like(np.zeros_like, ">>> dualad.zeros_like(dualad.tensor([1.0, 2.0]))\n"
                                  "tensor([0., 0.])")
ones_like = _like(np.ones_like, ">>> dualad.ones_like(np.zeros(2, dtype=np.float32))\n"
                                "tensor([1., 1.], dtype=float32)")


def zeros_like_tangent(p: Any, like: Any) -> Tensor:
    """A zero tangent for ``p`` with the batch axes of ``like`` (used by the core; not a
    NumPy function).

    Examples
    --------
    >>> dualad.rules.zeros_like_tangent(dualad.tensor([1.0, 2.0]), dualad.tensor(3.0))
    tensor([0., 0.])
    """
    return L.zeros_batched(p.shape, p.dtype, like)


# -- elementwise with NumPy's extra arguments -----------------------------------------------


def powm1(a: Any, b: Any) -> Any:
    """``a ** (b - 1)``, but 0 where ``b == 0`` is a Python scalar (``x ** 0`` is constant)
    and where ``a == b == 0``, with 1 for ``a`` there so that the masked branch has finite
    derivatives (a derivative of it is 0 there, not 0 * inf)."""
    if b.__class__ in (int, float):
        return a ** (b - 1) if b != 0 else 0
    m = logical_and(a == 0, b == 0)
    return where(m, 0, where(m, 1, a) ** (b - 1))


recip = E.recip  # (``1 / b``, NumPy's value at a Python zero: a formula's name)


def log_as(a: Any, y: Any) -> Any:
    """``log(a)`` in the dtype of ``y``: the complex log of a real base of a complex power."""
    if not isinstance(a, Tensor) and np.ndim(a) == 0:
        # a constant base: its log as a NumPy scalar (CuPy takes those beside its arrays,
        # not 0-d NumPy arrays)
        b = y.dtype.type(a) if y.dtype.kind == "c" and not _is_c(a) else a
        return apply(_P["log"], b)._data[()]
    if y.dtype.kind == "c" and not _is_c(a):
        a = astype(a, y.dtype) if isinstance(a, Tensor) else np.asarray(a, y.dtype)
    return apply(_P["log"], a)


def powlog(a: Any, y: Any) -> Any:
    """``log(a) * y`` for ``y = a ** b``: the derivative of a power in its exponent. Where
    ``a == 0`` and ``y`` is finite (``b >= 0``, or ``Re b > 0``) it is 0 — there ``0 ** b`` is
    constant in ``b`` (0 at ``b == 0`` too, torch's choice) — with 1 for ``a`` in the masked
    branch, so that every derivative of it is 0 there in every mode (not ``0 * log(0)``,
    NaN). At ``0 ** b`` with ``b < 0``, ``y`` is inf and the derivative ``log(0) * inf`` is
    -inf, as torch's."""
    m = a == 0
    if m is False:  # (a Python base: no mask)
        return log_as(a, y) * y
    m = logical_and(m, _P["isfinite"](y))
    return where(m, 0, log_as(where(m, 1, a), y) * y)


def logical_and(a: Any, b: Any) -> Any:
    """``numpy.logical_and`` (a Python ``False`` short-circuits: rules test scalars this way).

    Examples
    --------
    >>> dnp.logical_and(dualad.tensor([1.0, 0.0, 2.0]), dualad.tensor([1.0, 1.0, 0.0]))
    tensor([ True, False, False])
    """
    if a is False or b is False:
        return False
    return _P["logical_and"](a, b)


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``numpy.where``: differentiable in ``x`` and ``y``; one argument means ``nonzero``.

    The condition carries no derivative.

    Examples
    --------
    >>> x = dualad.tensor([-1.0, 2.0], requires_grad=True)
    >>> y = dnp.where(x > 0, x * x, -x); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 4.]), tensor([-1.,  4.]))
    >>> dnp.where(dualad.tensor([0.0, 1.0, 2.0]))
    (tensor([1, 2]),)
    """
    if x is None and y is None:
        return nonzero(condition)
    if isinstance(condition, (bool, np.bool_)):
        r, o = (x, y) if condition else (y, x)
        # the chosen operand itself, when it already has the result's shape and dtype (a
        # rule's where(False, 0, t): a real Python scalar changes neither of a float Tensor)
        if r.__class__ is Tensor and o.__class__ in (int, float, bool) and \
                r._data.dtype.kind in "fc":
            return r
        if isinstance(r, Tensor) and r.shape == np.broadcast_shapes(
                _shape_of(x), _shape_of(y)) and r.dtype == np.result_type(_dtype_of(x),
                                                                       _dtype_of(y)):
            return r
        # the condition on the operands' device (a GPU's where takes no host array)
        ref = next((v._data for v in (x, y) if isinstance(v, Tensor)), None)
        condition = np.asarray(condition)
        condition = condition if ref is None else _to_kind(condition, ref)
    if isinstance(condition, Tensor):
        condition = condition._data
    return apply(L.where, condition, _seq(x), _seq(y))


def real(a: Any) -> Any:
    """``numpy.real``: the real part (the array itself for real input).

    Examples
    --------
    >>> z = dualad.tensor([1.0 + 2.0j, 3.0 - 1.0j], requires_grad=True)
    >>> y = dnp.real(z); y.sum().backward()
    >>> y.detach(), z.grad
    (tensor([1., 3.]), tensor([1.+0.j, 1.+0.j]))
    """
    if not _is_c(a):
        return asarray_t(a)
    return apply(_P["real"], a)


def imag(a: Any) -> Any:
    """``numpy.imag``: the imaginary part (zeros for real input).

    Examples
    --------
    >>> z, v = dualad.tensor([1 + 2j]), dualad.tensor([3 - 1j])
    >>> dualad.functional.jvp(dnp.imag, z, v)
    (tensor([2.]), tensor([-1.]))
    >>> dnp.imag(dualad.tensor([1.0]))
    tensor([0.])
    """
    if not _is_c(a):
        return zeros_like(a)
    return apply(_P["imag"], a)


def conj(a: Any) -> Any:
    """``numpy.conj`` (identity for real input).

    Examples
    --------
    >>> z, v = dualad.tensor([1 + 2j]), dualad.tensor([1j])
    >>> dualad.functional.jvp(dnp.conj, z, v)
    (tensor([1.-2.j]), tensor([0.-1.j]))
    >>> dnp.conj(dualad.tensor([1.0, 2.0]))  # real input: itself
    tensor([1., 2.])
    """
    return apply(_P["conj"], a) if _is_c(a) else asarray_t(a)


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
    """``numpy.sum`` with ``axis``, ``dtype`` and ``keepdims`` (no ``out``, ``initial``
    or ``where``).

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.sum(x.detach(), axis=0)
    tensor([4., 6.])
    >>> dnp.sum(x * x).backward(); x.grad
    tensor([[2., 4.],
            [6., 8.]])
    """
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if a.dtype.kind in "biu" and dtype is None:
        return _make(_as_array(np.sum(a._data, axis=axis, keepdims=keepdims)))
    return apply(L.reduce_sum, a, axis=_norm_axes(axis, a.ndim), keepdims=bool(keepdims))


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape[i]
    return n


def _extreme(prim: Any, a: Any, axis: Any, keepdims: bool, name: str) -> Any:
    a = asarray_t(a)
    axes = _norm_axes(axis, a.ndim)
    if a.size == 0 and _count(a.shape, axes) == 0:
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if a.dtype.kind not in "fc":
        fn = np.amax if name == "maximum" else np.amin
        return _make(_as_array(fn(a._data, axis=axes, keepdims=keepdims)))
    return apply(prim, a, axis=axes, keepdims=bool(keepdims))


def amax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.amax``: ties share the derivative evenly (no ``out=``, ``initial=`` or
    ``where=``; an empty reduction raises, as NumPy's).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 3.0, 3.0], requires_grad=True)
    >>> dnp.amax(x).backward(); x.grad  # the tie shares it
    tensor([0. , 0.5, 0.5])
    """
    return _extreme(R.amax, a, axis, keepdims, "maximum")


def amin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``numpy.amin``: ties share the derivative evenly (no ``out=``, ``initial=`` or
    ``where=``; an empty reduction raises, as NumPy's).

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 4.0], [3.0, 2.0]], requires_grad=True)
    >>> dnp.amin(x, axis=1).sum().backward(); x.grad
    tensor([[1., 0.],
            [0., 1.]])
    """
    return _extreme(R.amin, a, axis, keepdims, "minimum")


def cumsum(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """``numpy.cumsum`` (``axis=None`` flattens first; no ``out=``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.cumsum(x); y.detach()
    tensor([1., 3., 6.])
    >>> y.sum().backward(); x.grad
    tensor([3., 2., 1.])
    """
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if axis is None:
        a, axis = ravel(a), 0
    if a.dtype.kind not in "fc":
        return _make(np.cumsum(a._data, axis=axis))
    return apply(L.cumsum, a, axis=_norm_axis(axis, a.ndim))


def _nd(fn: Any, example: str = "") -> Any:
    def f(a: Any, *args: Any, **kw: Any) -> Any:
        d = a._data if isinstance(a, Tensor) else a
        r = fn(d, *args, **kw)
        return tuple(_make(x) for x in r) if isinstance(r, tuple) else _make(np.asarray(r))

    f.__name__ = fn.__name__
    first = f"``numpy.{fn.__name__}`` on the values: an integer or boolean result, no derivative."
    f.__doc__ = _doc(first, example) if example else first
    return f
nonzero = _nd(np.nonzero, ">>> dnp.nonzero(dualad.tensor([0.0, 2.0, 0.0, 3.0]))\n"
                         "(tensor([1, 3]),)")


def shape(a: Any) -> tuple[int, ...]:
    """``numpy.shape``: a tuple of ints.

    Examples
    --------
    >>> dnp.shape(dualad.tensor([[1.0, 2.0]]))
    (1, 2)
    """
    return _shape_of(a)


def size(a: Any) -> int:
    """``numpy.size`` of the whole array (an int; no ``axis``).

    Examples
    --------
    >>> dnp.size(dualad.tensor([[1.0, 2.0]]))
    2
    """
    return int(math.prod(_shape_of(a)))


def _dtype_of(a: Any) -> Any:
    """What ``np.result_type`` needs of ``a``: a Tensor's dtype, anything else itself."""
    return a.dtype if isinstance(a, Tensor) else a


def _raw(a: Any) -> Any:
    return a._data if isinstance(a, Tensor) else a


# -- shape and indexing -------------------------------------------------------------------------


def _order(a: Tensor, order: str | None, name: str) -> str:
    """NumPy's index order ``"C"`` or ``"F"`` for ``order`` ("A": F if ``a`` is laid out in
    Fortran order only; "K", for ravel, likewise where memory order is one of the two)."""
    if order in ("C", None):
        return "C"
    if order in ("F", "A", "K"):
        if order == "F":
            return "F"
        f = getattr(a._data, "flags", None)
        fortran = f is not None and f.f_contiguous and not f.c_contiguous
        if order == "K" and not fortran and f is not None and not f.c_contiguous:
            raise NotImplementedError(f"{name}: order='K' of a non-contiguous array; use "
                                      "order='C' or 'F'")
        return "F" if fortran else "C"
    raise ValueError(f"{name}: order must be one of 'C', 'F', 'A' (or 'K' for ravel), "
                     f"not {order!r}")


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Any:
    """``numpy.reshape``; ``order="F"`` (or "A") reads and writes the elements in Fortran
    index order, as NumPy's."""
    a = asarray_t(a)
    shape = newshape if shape is None else shape
    if order == "K":  # (NumPy's rule: a memory order is no index order for a new shape)
        raise ValueError("reshape: order 'K' is not permitted for reshaping; use 'C', 'F' or "
                         "'A' (ravel takes 'K')")
    if order != "C" and _order(a, order, "reshape") == "F":  # (the transposed C reshape)
        shape = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        return transpose(reshape(transpose(a), shape[::-1]))
    if shape.__class__ is not tuple or not builtins.all(s.__class__ is int for s in shape):
        shape = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    # math.prod, not np.prod: this runs for every reshape, expand_dims and squeeze,
    # including those of the transpose rules
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
    """``numpy.ravel``, in ``order`` "C", "F", "A" or "K" (of a contiguous array).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.ravel(a); (y * dualad.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    >>> y.detach()
    tensor([1., 2., 3., 4.])
    >>> a.grad
    tensor([[1., 2.],
            [3., 4.]])
    """
    a = asarray_t(a)
    return reshape(a, (a.size,), _order(a, order, "ravel") if order == "K" else order)


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


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """``numpy.swapaxes`` (a transpose).

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = dnp.swapaxes(x, 0, 1); (y * dualad.tensor([[3.0], [4.0]])).sum().backward()
    >>> y.detach()
    tensor([[1.],
            [2.]])
    >>> x.grad
    tensor([[3., 4.]])
    """
    a = asarray_t(a)
    p = list(range(a.ndim))
    i, j = _norm_axis(axis1, a.ndim), _norm_axis(axis2, a.ndim)
    p[i], p[j] = p[j], p[i]
    return transpose(a, p)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """``numpy.moveaxis``: a transpose that moves ``source`` axes to ``destination``.

    Examples
    --------
    >>> dnp.moveaxis(dualad.tensor(np.zeros((2, 3, 4))), 0, -1).shape
    (3, 4, 2)
    >>> x = dualad.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = dnp.moveaxis(x, 0, -1); y.shape
    (2, 1)
    >>> (y * [[3.0], [4.0]]).sum().backward(); x.grad
    tensor([[3., 4.]])
    """
    a = asarray_t(a)
    src = [_norm_axis(int(s), a.ndim) for s in np.atleast_1d(source)]
    dst = [_norm_axis(int(d), a.ndim) for d in np.atleast_1d(destination)]
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(a, order)


def expand_dims(a: Any, axis: Any) -> Any:
    """``numpy.expand_dims``: a reshape that inserts length-1 axes at ``axis``.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.expand_dims(x, 0); y.shape
    (1, 2)
    >>> (y * [[3.0, 4.0]]).sum().backward(); x.grad
    tensor([3., 4.])
    """
    a = asarray_t(a)
    axes = (axis,) if axis.__class__ is int or np.ndim(axis) == 0 else tuple(axis)
    nd = a.ndim + len(axes)
    axes = _norm_axes(axes, nd)
    it = iter(a.shape)
    return reshape(a, tuple(1 if i in axes else next(it) for i in range(nd)))


def squeeze(a: Any, axis: Any = None) -> Any:
    """``numpy.squeeze``: a reshape that drops axes of length one.

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 2.0]], requires_grad=True)
    >>> y = dnp.squeeze(x); (y * dualad.tensor([3.0, 4.0])).sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 2.]), tensor([[3., 4.]]))
    """
    a = asarray_t(a)
    axes = tuple(i for i, d in enumerate(a.shape) if d == 1) if axis is None else _norm_axes(
        axis, a.ndim)
    for i in axes:
        if a.shape[i] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


def broadcast_to(a: Any, shape: Any) -> Any:
    """``numpy.broadcast_to`` (differentiable: the derivative sums over the broadcast
    axes; a new Tensor, not a read-only view; no ``subok=``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.broadcast_to(x, (3, 2)).sum().backward(); x.grad
    tensor([3., 3.])
    """
    a = asarray_t(a)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    if a.shape == shape:
        return a
    # np.broadcast_shapes raises NumPy's error for incompatible shapes
    if np.broadcast_shapes(a.shape, shape) != shape or len(shape) < a.ndim:
        raise ValueError(f"operands could not be broadcast from {a.shape} to {shape}")
    return apply(L.broadcast_to, a, shape=shape)


def getitem(a: Any, key: Any, _user: bool = False) -> Any:
    """``a[key]`` with basic, advanced and boolean indices.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.getitem(x, [0, 0, 2]); y.detach()
    tensor([1., 1., 3.])
    >>> y.sum().backward(); x.grad
    tensor([2., 0., 1.])
    """
    a = asarray_t(a)
    idx = L.Index(key, a.ndim)
    if a.dtype.kind not in "fc":
        return _make(_as_array(a._data[idx.key]))
    y = apply(L.getitem, a, idx=idx)
    if _user and not idx.basic and y._node is not None:  # (Tensor.__getitem__'s: the
        D.recorder.keeps_index(y._node)  # user's index arrays, released after backward as
    return y  # torch frees the indices it saves: reverse.graph._Read)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise TypeError(f"dualad.numpy.{name}: out= is not supported (writing into an existing "
                        "array would bypass derivative tracking); use the returned Tensor")


def concatenate(arrays: Sequence[Any], axis: int | None = 0, out: Any = None, *,
                dtype: Any = None, casting: str = "same_kind") -> Any:
    """``numpy.concatenate`` (with ``dtype=`` and ``casting=``; not ``out=``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.concatenate([x, 5 * x]); y.detach()
    tensor([ 1.,  2.,  5., 10.])
    >>> y.sum().backward(); x.grad
    tensor([6., 6.])
    """
    _no_out("concatenate", out)
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
    for x in arrays:
        if not np.can_cast(x.dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {x.dtype!r} to {dt!r} according to "
                            f"the rule {casting!r}")
    if dt.kind not in "fc":
        return _make(np.concatenate([x._data for x in arrays], axis=axis).astype(dt))
    arrays = [x if x.dtype == dt else astype(x, dt) for x in arrays]
    return apply(L.concatenate, *arrays, axis=_norm_axis(axis, nd))


def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, *, dtype: Any = None,
          casting: str = "same_kind") -> Any:
    """``numpy.stack`` (with ``dtype=`` and ``casting=``; no ``out``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.stack([x, 2 * x]); y.sum().backward()
    >>> y.detach()
    tensor([[1., 2.],
            [2., 4.]])
    >>> x.grad
    tensor([3., 3.])
    """
    _no_out("stack", out)
    arrays = [asarray_t(x) for x in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if builtins.any(x.shape != arrays[0].shape for x in arrays):
        raise ValueError("all input arrays must have the same shape")
    ax = _norm_axis(axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(x, ax) for x in arrays], axis=ax, dtype=dtype,
                       casting=casting)


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """``numpy.cross`` of 3-vectors (bilinear: products of components).

    Examples
    --------
    >>> dnp.cross(dualad.tensor([1.0, 0, 0]), dualad.tensor([0.0, 1, 0]))
    tensor([0., 0., 1.])
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(asarray_t(a), axisa, -1), moveaxis(asarray_t(b), axisb, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError("dualad.numpy.cross supports 3-vectors only (NumPy 2 deprecates "
                         "2-vectors)")
    a0, a1, a2 = (getitem(a, (Ellipsis, i)) for i in range(3))
    b0, b1, b2 = (getitem(b, (Ellipsis, i)) for i in range(3))
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, axisc)


def flip(m: Any, axis: Any = None) -> Any:
    """``numpy.flip``: reverse the order along ``axis`` (all axes when None), an index.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.flip(x); y.detach()
    tensor([2., 1.])
    >>> (y * [3.0, 4.0]).sum().backward(); x.grad
    tensor([4., 3.])
    """
    m = asarray_t(m)
    axes = _norm_axes(axis, m.ndim)
    return getitem(m, tuple(slice(None, None, -1) if i in axes else slice(None)
                            for i in range(m.ndim)))


def take(a: Any, indices: Any, axis: int | None = None) -> Any:
    """``numpy.take`` (indices must be in range: no ``mode`` or ``out``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.take(x, [2, 0, 2]); y.sum().backward()
    >>> y.detach(), x.grad  # a repeated index accumulates
    (tensor([3., 1., 3.]), tensor([1., 0., 2.]))
    """
    a = asarray_t(a)
    if axis is None:
        return getitem(ravel(a), (_B.to_host(_raw(indices)),))
    ax = _norm_axis(axis, a.ndim)
    return getitem(a, (slice(None),) * ax + (_B.to_host(_raw(indices)),))


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """``numpy.roll`` (a gather; ``axis=None`` rolls the flattened array).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = dnp.roll(x, 1); (y * dualad.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> y.detach(), x.grad
    (tensor([3., 1., 2.]), tensor([2., 3., 1.]))
    """
    a = asarray_t(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = np.broadcast_to(shift, np.shape(axis)) if np.ndim(axis) else [shift]
    axes = np.atleast_1d(axis)
    for s, ax in zip(np.atleast_1d(shifts), axes, strict=True):
        ax = _norm_axis(int(ax), a.ndim)
        n = a.shape[ax]
        k = int(s) % n if n else 0
        if k:  # two slices, joined: no index array to keep (a gather's, which torch's roll
            lo = (slice(None),) * ax  # does not save either: backward may run again)
            a = concatenate((a[lo + (slice(n - k, None),)], a[lo + (slice(0, n - k),)]),
                            axis=ax)
    return a


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """``numpy.pad``: 'constant' is a zero pad plus a constant; index modes are gathers.

    Modes 'constant', 'edge', 'reflect', 'symmetric' and 'wrap'; others raise
    ``NotImplementedError``. ``constant_values`` are constants (no derivative).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.pad(x.detach(), (1, 0), constant_values=5.0)
    tensor([5., 1., 2.])
    >>> y = dnp.pad(x, 1, mode="edge"); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([1., 1., 2., 2.]), tensor([2., 2.]))
    """
    a = asarray_t(array)
    width = tuple(tuple(int(v) for v in w) for w in np.broadcast_to(pad_width, (a.ndim, 2)))
    if mode == "constant":
        out = apply(L.pad_zero, a, width=width) if a.dtype.kind in "fc" else _make(
            np.pad(a._data, width))
        cv = kwargs.get("constant_values", 0)
        if np.any(np.asarray(cv) != 0):
            out = out + np.pad(_B.zeros(a.shape, a.dtype, like=_device_like(a._data)), width,
                               constant_values=cv)
        return out
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        idx = np.pad(np.arange(a.size).reshape(a.shape), width, mode=mode, **kwargs)
        return getitem(ravel(a), (idx,))
    raise NotImplementedError(
        f"pad: mode={mode!r} is not differentiable in dualad; use 'constant', 'edge', "
        "'reflect', 'symmetric' or 'wrap'"
    )


def triu(m: Any, k: int = 0) -> Any:
    """``numpy.triu``: zeros below the ``k``-th diagonal (a 1-D input is a row repeated).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.triu(a.detach())
    tensor([[1., 2.],
            [0., 4.]])
    >>> dnp.triu(a).sum().backward(); a.grad
    tensor([[1., 1.],
            [0., 1.]])
    """
    return _tri(m, k, upper=True)


def tril(m: Any, k: int = 0) -> Any:
    """``numpy.tril``: zeros above the ``k``-th diagonal (a 1-D input is a row repeated).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.tril(a.detach())
    tensor([[1., 0.],
            [3., 4.]])
    >>> dnp.tril(a).sum().backward(); a.grad
    tensor([[1., 0.],
            [1., 1.]])
    """
    return _tri(m, k, upper=False)


def _tri(m: Any, k: int, upper: bool) -> Any:
    """triu/tril: the linear primitive ``tri`` (a 1-D input is a row repeated)."""
    m = asarray_t(m)
    if m.ndim < 2:
        m = broadcast_to(m, (m.shape[0], m.shape[0]))
    return apply(L.tri, m, k=_index(k), upper=upper)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.diagonal``: a read-only view, as NumPy's (the diagonal is the last axis).

    A later write into ``a`` is seen by the diagonal, value and derivative; a write into
    the diagonal raises NumPy's ``ValueError`` (write into a copy: ``d.copy()``).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> d = dnp.diagonal(a); d.detach()
    tensor([1., 4.])
    >>> d.sum().backward(); a.grad
    tensor([[1., 0.],
            [0., 1.]])
    """
    a = asarray_t(a)
    a = moveaxis(a, (_norm_axis(axis1, a.ndim), _norm_axis(axis2, a.ndim)), (-2, -1))
    n, m = a.shape[-2], a.shape[-1]
    r0, c0 = builtins.max(0, -offset), builtins.max(0, offset)
    k = builtins.max(0, builtins.min(n - r0, m - c0))  # the diagonal's length
    if (n, m) != (k, k):  # the square block the diagonal runs through (a basic slice: a view)
        a = getitem(a, (Ellipsis, slice(r0, r0 + k), slice(c0, c0 + k)))
    return apply(L.diagonal, a, writeable=False)


# -- products and contractions ----------------------------------------------------------------


def matmul(a: Any, b: Any) -> Any:
    """``numpy.matmul`` (the ``@`` operator; no ``out=`` or other ufunc keywords).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> (a @ dualad.tensor([1.0, 1.0])).detach()
    tensor([3., 7.])
    >>> dnp.matmul(a, [1.0, 2.0]).sum().backward(); a.grad
    tensor([[1., 2.],
            [1., 2.]])
    """
    if a.__class__ is not Tensor or b.__class__ is not Tensor:  # (the operator's: both are)
        a, b = _seq(a), _seq(b)
    if _ndim(a) == 0 or _ndim(b) == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    return apply(L.matmul, a, b)


def dot(a: Any, b: Any) -> Any:
    """``numpy.dot`` (a product for scalars, :func:`matmul` up to 2-D, a contraction of the
    last and second-to-last axes above; no ``out=``).

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.dot(a, [3.0, 4.0]).backward(); a.grad
    tensor([3., 4.])
    """
    a, b = _seq(a), _seq(b)
    na, nb = _ndim(a), _ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)  # type: ignore[name-defined] # noqa: F821
    if nb <= 2:
        return matmul(a, b)
    return tensordot(a, b, axes=([-1], [-2]))


def outer(a: Any, b: Any) -> Any:
    """``numpy.outer``: both inputs flattened, then a broadcast product.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.outer(x, dualad.tensor([3.0, 4.0])); y.sum().backward()
    >>> y.detach()
    tensor([[3., 4.],
            [6., 8.]])
    >>> x.grad
    tensor([7., 7.])
    """
    return reshape(ravel(a), (-1, 1)) * reshape(ravel(b), (1, -1))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """``numpy.tensordot``, as an einsum.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> b = dualad.tensor([[1.0, 0.0], [0.0, 2.0]])
    >>> y = dnp.tensordot(a, b); y.backward()  # axes=2: sum(a * b)
    >>> y.detach()
    tensor(9.)
    >>> a.grad
    tensor([[1., 0.],
            [0., 2.]])
    """
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


def _sublist(sub: Any) -> str:
    return "".join("..." if s is Ellipsis else string.ascii_letters[_index(s)]
                   for s in sub)


def einsum(subscripts: Any, *operands: Any, optimize: Any = None, **kwargs: Any) -> Any:
    """``numpy.einsum`` (explicit or implicit output; ``...``; repeated indices; the
    interleaved form ``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])``).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> dnp.einsum(a, [0, 1], [1, 0])
    tensor([[1., 3.],
            [2., 4.]])
    """
    _no_out("einsum", kwargs.pop("out", None))
    if kwargs:
        raise TypeError(f"dualad.numpy.einsum: unsupported keywords {sorted(kwargs)}")
    if not isinstance(subscripts, str):  # the interleaved form
        args = (subscripts,) + operands
        n = len(args) // 2
        spec = ",".join(_sublist(s) for s in args[1:2 * n:2])
        if len(args) % 2:
            spec += "->" + _sublist(args[-1])
        return einsum(spec, *args[0:2 * n:2])
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
    if len(ops) == 1 and set(out) == set(terms[0]) and len(terms[0]) == ops[0].ndim:
        return _einsum_view(ops[0], terms[0], out)
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
        return _make(_as_array(np.einsum(f"{','.join(terms)}->{out}", *[o._data for o in ops])))
    return apply(L.einsum, *ops, spec=f"{','.join(terms)}->{out}")


def _einsum_view(a: Tensor, term: str, out: str) -> Tensor:
    """``einsum(term->out, a)`` that sums nothing: NumPy returns a view of ``a`` (its axes
    permuted, its repeated letters' diagonals taken), so this is one too, made of view
    primitives (transpose, diagonal), and a write into it changes ``a``, value and
    derivative (docs/inplace.md)."""
    t = list(term)
    r = a
    while len(set(t)) != len(t):  # a repeated letter: its diagonal, as the last axis
        c = next(c for c in t if t.count(c) > 1)
        i = t.index(c)
        j = t.index(c, i + 1)
        if r.shape[i] != r.shape[j]:
            raise ValueError(f"einsum: dimensions in operand 0 for collapsing index '{c}' "
                             f"don't match ({r.shape[i]} != {r.shape[j]})")
        rest = [k for k in range(len(t)) if k not in (i, j)]
        if rest + [i, j] != list(range(len(t))):
            r = apply(L.transpose, r, axes=tuple(rest + [i, j]))
        r = apply(L.diagonal, r, writeable=True)  # (np.einsum's diagonal is writable)
        t = [t[k] for k in rest] + [c]
    # the output's order; a transpose that permutes nothing is still a new view, as NumPy's
    # einsum('ij->ij', a) is
    return apply(L.transpose, r, axes=tuple(t.index(c) for c in out))


def matrix_transpose(x: Any, /) -> Any:
    """``numpy.matrix_transpose``: swap the last two axes.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0]], requires_grad=True)
    >>> t = dnp.matrix_transpose(a); t.shape
    (2, 1)
    >>> (t * [[3.0], [4.0]]).sum().backward(); a.grad
    tensor([[3., 4.]])
    """
    x = asarray_t(x)
    if x.ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return swapaxes(x, -1, -2)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``numpy.vecdot``: ``sum(conj(x1) * x2, axis)``.

    Examples
    --------
    >>> x = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.vecdot(x, dualad.tensor([1.0, 1.0])); (y * dualad.tensor([1.0, 2.0])).sum().backward()
    >>> y.detach()
    tensor([3., 7.])
    >>> x.grad
    tensor([[1., 1.],
            [2., 2.]])
    """
    return sum(conj(_seq(x1)) * _seq(x2), axis=axis)
