"""The NumPy-level functions: argument handling in NumPy's terms, then primitives.

Most functions here are compositions of primitives (mean is a sum and a scale,
flip is an index, tile is a broadcast and a reshape), so their derivatives —
forward and reverse — come from the primitives' rules with no code of their own.
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

from .. import _dispatch as D
from .._backend import as_array as _as_array
from .._backend import asarray as _asarray
from .._backend import is_dask as _is_dask
from .._backend import like as _device_like
from .._dispatch import apply
from .._tensor import Tensor, _made, _make, _tracked, _warn_dropped
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
    return stack(parts)


D.hooks["holds_tensor"] = _holds_tensor
D.hooks["sequence"] = _seq  # (apply's conversion of a sequence argument holding Tensors)


def _detached(obj: Any) -> Any:
    """``obj`` with every Tensor in it replaced by its value (no derivative)."""
    if isinstance(obj, Tensor):
        return obj._data
    if isinstance(obj, (list, tuple)) and _holds_tensor(obj):
        return [_detached(x) for x in obj]
    return obj


# -- factories ------------------------------------------------------------------------------


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``.

    Examples
    --------
    >>> dualad.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    if isinstance(data, Tensor) and (data._rg or data._level):
        _warn_dropped(data, "dualad.tensor(t)", "Use t.copy() to copy it with its "
                      "derivative, or t.detach().copy() for the constant copy.")
    elif isinstance(data, (list, tuple)) and _holds_tensor(data):
        _warn_dropped_items(data)
    data = _detached(data)  # a copy with no history, as torch.tensor makes
    t = _made(_make(_asarray(data, dtype=dtype, copy=True)))
    if requires_grad:
        t.requires_grad_(True)
    return t


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
        return _held(_make(np.asarray(a, dtype=dtype, order=order, copy=copy)))
    return array(a, dtype=dtype, copy=bool(copy))


asanyarray = asarray


def _copy(t: Tensor) -> Tensor:
    return apply(_P["positive"], t) if t.dtype.kind in "fc" else _make(t._data.copy())


def _held(t: Tensor) -> Tensor:
    """``t`` (new), marked as an array if it is 0-d: NumPy's constructors and ``copy``
    return 0-d arrays, not scalars, so ``t op= y`` writes into it (``ops.inplace.scalar``).
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
    y = reshape(_make(np.arange(0, num, dtype=dt, like=lk)), (-1,) + (1,) * delta.ndim)
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
        last = np.arange(y.shape[0], like=lk) == y.shape[0] - 1
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


def _like(fn: Any, example: str) -> Any:
    def f(a: Any, *args: Any, requires_grad: bool = False, **kw: Any) -> Tensor:
        # NumPy's own positional arguments (dtype; full_like's fill_value first)
        d = a._data if isinstance(a, Tensor) else a
        if isinstance(a, Tensor) and a._level >= D.LIN:  # a symbolic tangent: its shape and
            d = np.broadcast_to(np.zeros((), d.dtype), d.shape)  # dtype, with no values
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


def zeros_like_tangent(p: Any, like: Any) -> Tensor:
    """A zero tangent for ``p`` with the batch axes of ``like`` (used by the core; not a
    NumPy function).

    Examples
    --------
    >>> dualad.ops.zeros_like_tangent(dualad.tensor([1.0, 2.0]), dualad.tensor(3.0))
    tensor([0., 0.])
    """
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
        condition = np.asarray(condition)
    if isinstance(condition, Tensor):
        condition = condition._data
    return apply(L.where, condition, _seq(x), _seq(y))


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """``numpy.clip``; the derivative passes where ``a_min <= a <= a_max`` (the bounds are
    ``a_min`` and ``a_max``, not NumPy 2's ``min=``/``max=``; no ``out=``).

    Examples
    --------
    >>> x = dualad.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    >>> y = dnp.clip(x, -1.0, 1.0); y.detach()
    tensor([-1. ,  0.5,  1. ])
    >>> y.sum().backward(); x.grad
    tensor([0., 1., 0.])
    """
    if a_min is None and a_max is None:
        raise ValueError("clip: one of a_min and a_max must be given")
    a, a_min, a_max = _seq(a), _seq(a_min), _seq(a_max)
    if a_min is None:
        return apply(_P["minimum"], a, a_max)
    if a_max is None:
        return apply(_P["maximum"], a, a_min)
    return apply(_P["clip"], a, a_min, a_max)


def round(a: Any, decimals: int = 0) -> Any:  # noqa: A001 - NumPy's name
    """``numpy.round``; derivative zero, like floor.

    Examples
    --------
    >>> x = dualad.tensor([0.4, 1.6], requires_grad=True)
    >>> y = dnp.round(x); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([0., 2.]), tensor([0., 0.]))
    >>> dnp.round(dualad.tensor([1.25, 2.5]), 1)  # halves to even, as NumPy
    tensor([1.2, 2.5])
    """
    if decimals == 0:
        return apply(_P["rint"], a)
    s = 10.0**decimals
    return apply(_P["rint"], a * s) / s


around = _alias(round, "around", ">>> dnp.around(dualad.tensor([1.25, -0.5]), 1)  # half to even\n"
                                  "tensor([ 1.2, -0.5])")


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


conjugate = _alias(conj, "conjugate", ">>> dnp.conjugate(dualad.tensor([1 + 2j]))\n"
                                      "tensor([1.-2.j])")


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
    return apply(R.prod, a, axis=_norm_axes(axis, a.ndim), keepdims=bool(keepdims))


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


def cumprod(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """``numpy.cumprod`` (``axis=None`` flattens first; no ``out=``).

    Examples
    --------
    >>> x = dualad.tensor([2.0, 3.0, 4.0], requires_grad=True)
    >>> y = dnp.cumprod(x); y.detach()
    tensor([ 2.,  6., 24.])
    >>> y[-1].backward(); x.grad
    tensor([12.,  8.,  6.])
    """
    a = asarray_t(a)
    if dtype is not None:
        a = astype(a, dtype, copy=False)
    if axis is None:
        a, axis = ravel(a), 0
    if a.dtype.kind not in "fc":
        return _make(np.cumprod(a._data, axis=axis))
    return apply(R.cumprod, a, axis=_norm_axis(axis, a.ndim))


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


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.trace`` (no ``dtype`` or ``out``).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.trace(a); y.backward()
    >>> y.detach()
    tensor(5.)
    >>> a.grad
    tensor([[1., 0.],
            [0., 1.]])
    """
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


# -- non-differentiable results ---------------------------------------------------------------


def _nd(fn: Any, example: str = "") -> Any:
    def f(a: Any, *args: Any, **kw: Any) -> Any:
        d = a._data if isinstance(a, Tensor) else a
        r = fn(d, *args, **kw)
        return tuple(_make(x) for x in r) if isinstance(r, tuple) else _make(np.asarray(r))

    f.__name__ = fn.__name__
    first = f"``numpy.{fn.__name__}`` on the values: an integer or boolean result, no derivative."
    f.__doc__ = _doc(first, example) if example else first
    return f


argmax = _nd(np.argmax, ">>> dnp.argmax(dualad.tensor([1.0, 3.0, 2.0]))\ntensor(1)")
argmin = _nd(np.argmin,
             ">>> dnp.argmin(dualad.tensor([[1.0, 3.0], [4.0, 2.0]]), axis=1)\ntensor([0, 1])")
argsort = _nd(np.argsort, ">>> dnp.argsort(dualad.tensor([3.0, 1.0, 2.0]))\ntensor([1, 2, 0])")
nonzero = _nd(np.nonzero, ">>> dnp.nonzero(dualad.tensor([0.0, 2.0, 0.0, 3.0]))\n"
                         "(tensor([1, 3]),)")
argwhere = _nd(np.argwhere,
               ">>> dnp.argwhere(dualad.tensor([0.0, 1.0, 2.0]))\ntensor([[1],\n        [2]])")
count_nonzero = _nd(np.count_nonzero, ">>> dnp.count_nonzero(dualad.tensor([0.0, 1.0, 2.0]))\ntensor(2)")


def isclose(a: Any, b: Any, **kw: Any) -> Any:
    """``numpy.isclose`` on the values: a boolean Tensor, no derivative.

    Examples
    --------
    >>> dnp.isclose(dualad.tensor([1.0, 2.0]), [1.0 + 1e-9, 2.1])
    tensor([ True, False])
    """
    return _make(np.isclose(_raw(a), _raw(b), **kw))


def allclose(a: Any, b: Any, **kw: Any) -> bool:
    """``numpy.allclose`` on the values: a Python bool, no derivative.

    Examples
    --------
    >>> dnp.allclose(dualad.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-9])
    True
    """
    return bool(np.allclose(_raw(a), _raw(b), **kw))


def array_equal(a: Any, b: Any, **kw: Any) -> bool:
    """``numpy.array_equal`` on the values: a Python bool, no derivative.

    Examples
    --------
    >>> dnp.array_equal(dualad.tensor([1.0, 2.0]), [1, 2])
    True
    """
    return bool(np.array_equal(_raw(a), _raw(b), **kw))


def shape(a: Any) -> tuple[int, ...]:
    """``numpy.shape``: a tuple of ints.

    Examples
    --------
    >>> dnp.shape(dualad.tensor([[1.0, 2.0]]))
    (1, 2)
    """
    return _shape_of(a)


def ndim(a: Any) -> int:
    """``numpy.ndim``: an int.

    Examples
    --------
    >>> dnp.ndim(dualad.tensor([[1.0, 2.0]]))
    2
    """
    return _ndim(a)


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


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """``numpy.any``: a boolean Tensor, no derivative (no ``out=`` or ``where=``).

    Examples
    --------
    >>> dnp.any(dualad.tensor([0.0, 2.0])), dnp.any(dualad.tensor([[0.0, 0.0], [0.0, 3.0]]), axis=1)
    (tensor(True), tensor([False,  True]))
    """
    return _make(_as_array(np.any(_raw(a), axis=axis, keepdims=keepdims)))


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """``numpy.all``: a boolean Tensor, no derivative (no ``out=`` or ``where=``).

    Examples
    --------
    >>> dnp.all(dualad.tensor([1.0, 0.0])), dnp.all(dualad.tensor([[1.0, 0.0], [2.0, 3.0]]), axis=1)
    (tensor(False), tensor([False,  True]))
    """
    return _make(_as_array(np.all(_raw(a), axis=axis, keepdims=keepdims)))


def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None) -> Any:
    """``numpy.sort``: a gather by ``argsort``, so ties keep a stable order (``order=``
    is not supported).

    Examples
    --------
    >>> x = dualad.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> y = dnp.sort(x); (y * dualad.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> y.detach(), x.grad  # each input gets the weight of the place it sorts to
    (tensor([1., 2., 3.]), tensor([3., 1., 2.]))
    """
    a = asarray_t(a)
    if axis is None:
        a, axis = ravel(a), -1
    idx = np.argsort(a._data, axis=axis, kind="stable" if kind is None else kind)
    return take_along_axis(a, idx, axis)


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


permute_dims = transpose


def view_of(r: Any, a: Any) -> Any:
    """``r`` (a reshape or transpose of ``a``), a new view when it is ``a`` itself: NumPy's
    ``reshape`` and ``transpose`` always return a new array object. Internal callers keep
    the tensor itself (no node); what users call returns a view, so that what they do to
    it (``requires_grad_``, ``retain_grad``, hooks, writes) acts on a view, as in NumPy
    and torch, not on ``a``."""
    if r is not a or a.__class__ is not Tensor:
        return r
    if not a._rg and not a._level and not a._nb:  # (nothing to record or carry: the alias)
        v = _make(a._data)
        v._vc = a._version_counter()
        D.register_view(L.reshape, a, v, {"shape": a.shape})
        return v
    v = apply(L.reshape, a, shape=a.shape)
    # the same arrays, as objects: what is known of an array by its identity (a seed
    # identity, a known diagonal: see linear.identity_seed) stays known through the view
    v._data = a._data
    if v._level and v._p is None and a._level == v._level and a._p is None:
        v._t = a._t
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
        D.hooks["keeps_index"](y._node)  # user's index arrays, released after backward as
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


concat = _alias(concatenate, "concat",
                ">>> dnp.concat([dualad.tensor([1.0]), dualad.tensor([2.0, 3.0])])\n"
                "tensor([1., 2., 3.])")


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
        return getitem(ravel(a), (np.asarray(_raw(indices)),))
    ax = _norm_axis(axis, a.ndim)
    return getitem(a, (slice(None),) * ax + (np.asarray(_raw(indices)),))


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
            out = out + np.pad(np.zeros(a.shape, a.dtype, like=_device_like(a._data)), width,
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
    m = asarray_t(m)
    if m.ndim < 2:
        m = broadcast_to(m, (m.shape[0], m.shape[0]))
    return apply(L.tri, m, k=_index(k), upper=True)


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
    m = asarray_t(m)
    if m.ndim < 2:
        m = broadcast_to(m, (m.shape[0], m.shape[0]))
    return apply(L.tri, m, k=_index(k), upper=False)


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


def vdot(a: Any, b: Any) -> Any:
    """``numpy.vdot``: conjugates the first argument, flattens both.

    Examples
    --------
    >>> dnp.vdot(dualad.tensor([1.0 + 1.0j, 2.0]), dualad.tensor([1.0j, 1.0]))
    tensor(3.+1.j)
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.vdot(x, dualad.tensor([3.0, 4.0])).backward(); x.grad
    tensor([3., 4.])
    """
    return sum(conj(ravel(a)) * ravel(b))


def inner(a: Any, b: Any) -> Any:
    """``numpy.inner``: a contraction of the last axes (a product when one is a scalar).

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.inner(a, [3.0, 4.0]).backward(); a.grad
    tensor([3., 4.])
    """
    a, b = _seq(a), _seq(b)
    if _ndim(a) == 0 or _ndim(b) == 0:
        return multiply(a, b)  # type: ignore[name-defined] # noqa: F821
    return tensordot(a, b, axes=([-1], [-1]))


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


def kron(a: Any, b: Any) -> Any:
    """``numpy.kron``: the Kronecker product, a broadcast product and a reshape.

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> k = dnp.kron(a, [1.0, 10.0]); k.detach()
    tensor([ 1., 10.,  2., 20.])
    >>> k.sum().backward(); a.grad
    tensor([11., 11.])
    """
    a, b = asarray_t(a), asarray_t(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    ai = reshape(a, tuple(x for d in a.shape for x in (d, 1)))
    bi = reshape(b, tuple(x for d in b.shape for x in (1, d)))
    return reshape(ai * bi, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


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
        res = concatenate(parts, axis=axis, dtype=dt)
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


# -- more of NumPy's array manipulation: compositions of the functions above ---------------

radians = E.PRIMS["deg2rad"]
degrees = E.PRIMS["rad2deg"]


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
    out = astype(asarray_t(dflt), dt, copy=False)
    for c, ch in zip(conds[::-1], choices[::-1], strict=True):
        out = where(c, astype(ch, dt, copy=False), out)
    return out


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """``numpy.nan_to_num``: NaN and infinities replaced (zero derivative there).

    Examples
    --------
    >>> dnp.nan_to_num(dualad.tensor([np.nan, 1.0, np.inf]))
    tensor([0.00000000e+000, 1.00000000e+000, 1.79769313e+308])
    """
    x = asarray_t(x)
    if x.dtype.kind not in "fc":
        return x
    if x.dtype.kind == "c":
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return re + im * np.asarray(1j, x.dtype)
    fi = np.finfo(x.dtype)
    d = x._data
    big = np.asarray(fi.max if posinf is None else posinf, x.dtype)
    small = np.asarray(fi.min if neginf is None else neginf, x.dtype)
    x = where(np.isnan(d), np.asarray(nan, x.dtype), x)
    x = where(np.isposinf(d), big, x)
    return where(np.isneginf(d), small, x)


def real_if_close(a: Any, tol: float = 100) -> Any:
    """``numpy.real_if_close``: the real part when every imaginary part is negligible.

    The choice is made from the values (``tol`` machine epsilons), so a small imaginary
    tangent is dropped with the imaginary part.

    Examples
    --------
    >>> dnp.real_if_close(dualad.tensor([1.0 + 1e-20j, 2.0]))
    tensor([1., 2.])
    >>> dnp.real_if_close(dualad.tensor([1.0 + 1.0j, 2.0]))
    tensor([1.+1.j, 2.+0.j])
    """
    a = asarray_t(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    return real(a) if bool(np.all(np.abs(a._data.imag) < tol)) else a


def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """``numpy.partition``: NumPy's values, as a gather of the input (so differentiable).

    Examples
    --------
    >>> dnp.partition(dualad.tensor([3.0, 1.0, 2.0]), 1)[1]
    tensor(2.)
    """
    a = asarray_t(a)
    if axis is None:
        a, axis = ravel(a), -1
    ax = _norm_axis(axis, a.ndim)
    d = a._data
    p = np.partition(d, kth, axis=ax, kind=kind)
    # the index in ``a`` of each value of ``p``: ties are matched in a stable order
    src = np.argsort(d, axis=ax, kind="stable")
    dst = np.argsort(p, axis=ax, kind="stable")
    idx = np.empty(d.shape, np.intp)
    np.put_along_axis(idx, dst, src, axis=ax)
    return take_along_axis(a, idx, ax)


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


def iscomplexobj(x: Any) -> bool:
    """``numpy.iscomplexobj`` (no derivative).

    Examples
    --------
    >>> dnp.iscomplexobj(dualad.tensor([1 + 0j])), dnp.iscomplexobj(dualad.tensor([1.0]))
    (True, False)
    """
    return _is_c(x)


def isrealobj(x: Any) -> bool:
    """``numpy.isrealobj`` (no derivative).

    Examples
    --------
    >>> dnp.isrealobj(dualad.tensor([1.0])), dnp.isrealobj(dualad.tensor([1 + 0j]))
    (True, False)
    """
    return not _is_c(x)


iscomplex = _nd(np.iscomplex, ">>> dnp.iscomplex(dualad.tensor([1 + 0j, 1j]))\ntensor([False,  True])")
isreal = _nd(np.isreal, ">>> dnp.isreal(dualad.tensor([1 + 0j, 1j]))\ntensor([ True, False])")
isposinf = _nd(np.isposinf,
               ">>> dnp.isposinf(dualad.tensor([-np.inf, 0.0, np.inf]))\ntensor([False, False,  True])")
isneginf = _nd(np.isneginf,
               ">>> dnp.isneginf(dualad.tensor([-np.inf, 0.0, np.inf]))\ntensor([ True, False, False])")


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
        weights = _quantile_weights(weights, shape0, axis)
    t, axes = _to_last(a, axis)
    d = t._data
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
        out = out + (at(np.broadcast_to(hi, lo.shape)) - out) * g
    bad = (n == 0) if nan else isn.any(axis=-1)  # a NaN in the slice (all-NaN for nan*)
    if np.any(bad):
        out = where(np.broadcast_to(bad, out.shape), np.asarray(np.nan, dt), out)
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


def _nan_fill(a: Any, value: float) -> Tensor:
    a = asarray_t(a)
    if a.dtype.kind not in "fc":
        return a
    return where(np.isnan(a._data), np.asarray(value, a.dtype), a)


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
        return where(allnan, np.asarray(np.nan, r.dtype), r) if np.any(allnan) else r
    return where(allnan, np.asarray(np.nan, r.dtype), r)  # lazy: no branch on a value


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


nanargmax = _nd(np.nanargmax, ">>> dnp.nanargmax(dualad.tensor([1.0, np.nan, 3.0]))\n"
                             "tensor(2)")
nanargmin = _nd(np.nanargmin, ">>> dnp.nanargmin(dualad.tensor([np.nan, 2.0, 1.0]))\n"
                             "tensor(2)")


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


# -- the rest of NumPy's namespace that has a derivative: aliases and compositions -------------

acos, acosh, asin, asinh = _P["arccos"], _P["arccosh"], _P["arcsin"], _P["arcsinh"]
atan, atan2, atanh = _P["arctan"], _P["arctan2"], _P["arctanh"]
mod = _P["remainder"]
fix = _P["trunc"]


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
    idx = np.nonzero(np.asarray(_raw(condition)).astype(bool).ravel())[0]
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
        out = concatenate([_make(np.full(shp, initial, out.dtype, like=_device_like(out._data))),
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
    k = np.asarray(np.choose(np.asarray(_raw(a)), np.arange(len(cs)), mode=mode))
    k = np.asarray(k, like=_device_like(cs[0]._data))  # (the selections' masks: their kind)
    dt = np.result_type(*[c.dtype for c in cs])
    out = broadcast_to(astype(cs[-1], dt, copy=False), np.broadcast_shapes(
        k.shape, *[c.shape for c in cs]))
    for j in range(len(cs) - 2, -1, -1):  # (selections: no stacked copy of the choices)
        out = where(k == j, cs[j], out)
    return out


def sort_complex(a: Any) -> Any:
    """``numpy.sort_complex``: sorted along the last axis by real part, then imaginary part
    (a permutation of the values), as a complex array.

    Examples
    --------
    >>> dnp.sort_complex(dualad.tensor([1 + 2j, 1 - 1j, -3 + 0j]))
    tensor([-3.+0.j,  1.-1.j,  1.+2.j])
    """
    a = asarray_t(a)
    idx = np.argsort(a._data, axis=-1, kind="stable")  # (complex: lexicographic)
    dt = np.sort_complex(np.zeros(1, a.dtype)).dtype
    return astype(take_along_axis(a, idx, -1), dt, copy=False)


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


def divmod(x1: Any, x2: Any) -> tuple[Any, Any]:  # noqa: A001 - NumPy's name
    """``numpy.divmod``: (floor division, no derivative; remainder, differentiable).

    Examples
    --------
    >>> x = dualad.tensor([7.0, -7.0], requires_grad=True)
    >>> q, r = dnp.divmod(x, 2.0); q.detach(), r.detach()
    (tensor([ 3., -4.]), tensor([1., 1.]))
    >>> r.sum().backward(); x.grad
    tensor([1., 1.])
    """
    return _P["floor_divide"](x1, x2), _P["remainder"](x1, x2)


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
            t = ravel(asarray_t(v))
            if not np.can_cast(t.dtype, a.dtype, "same_kind"):
                raise TypeError("dtype of `to_begin`/`to_end` must be compatible with input "
                                "`ary` under the `same_kind` rule.")
            t = astype(t, a.dtype, copy=False)
            parts.insert(0, t) if front else parts.append(t)
    return concatenate(parts) if len(parts) > 1 else parts[0]


def frexp(x: Any) -> tuple[Any, Any]:
    """``numpy.frexp``: mantissa ``x * 2**-e`` (differentiable) and exponent ``e`` (integer).

    Examples
    --------
    >>> x = dualad.tensor([3.0, 8.0], requires_grad=True)
    >>> m, e = dnp.frexp(x); m.detach(), e
    (tensor([0.75, 0.5 ]), tensor([2, 4], dtype=int32))
    >>> m.sum().backward(); x.grad  # 2**-e
    tensor([0.25  , 0.0625])
    """
    x = asarray_t(x)
    e = np.frexp(x._data)[1]
    return x * np.ldexp(np.ones((), x.dtype), -e), _make(e)


def ldexp(x1: Any, x2: Any) -> Any:
    """``numpy.ldexp``: ``x1 * 2**x2`` for integer ``x2`` (differentiable in ``x1``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> y = dnp.ldexp(x, [2, -1]); y.detach()
    tensor([4. , 1.5])
    >>> y.sum().backward(); x.grad
    tensor([4. , 0.5])
    """
    x1 = asarray_t(x1)
    dt = x1.dtype if x1.dtype.kind == "f" else np.dtype(np.float64)
    return astype(x1, dt, copy=False) * np.ldexp(np.ones((), dt), _raw(x2))


def modf(x: Any) -> tuple[Any, Any]:
    """``numpy.modf``: fractional part (derivative one) and integral part (zero).

    Examples
    --------
    >>> x = dualad.tensor([2.5, -1.25], requires_grad=True)
    >>> f, i = dnp.modf(x); f.detach(), i.detach()
    (tensor([ 0.5 , -0.25]), tensor([ 2., -1.]))
    >>> (f + i).sum().backward(); x.grad
    tensor([1., 1.])
    """
    t = _P["trunc"](x)
    return x - t, t


def heaviside(x1: Any, x2: Any) -> Any:
    """``numpy.heaviside``: 0 or 1 away from zero (no derivative), ``x2`` at zero.

    Examples
    --------
    >>> dnp.heaviside(dualad.tensor([-1.0, 0.0, 2.0]), 0.5)
    tensor([0. , 0.5, 1. ])
    """
    d1 = _as_array(_raw(x1))
    base = np.heaviside(d1, np.zeros((), np.result_type(d1, _dtype_of(x2))))
    return where(d1 == 0, x2, base)


def _chbevl(x: Any, vals: Any) -> Any:
    """A Chebyshev series at ``x`` by Clenshaw's recurrence (NumPy's ``_chbevl``)."""
    b0, b1, b2 = vals[0], 0.0, 0.0
    for v in vals[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + v
    return 0.5 * (b0 - b2)


def i0(x: Any) -> Any:
    """``numpy.i0``, the modified Bessel function of the first kind of order 0: NumPy's
    Chebyshev approximations (Cephes), composed of differentiable operations, so its
    derivative is that of the approximation (``i1`` to within a few ulps).

    Examples
    --------
    >>> x = dualad.tensor(1.0, requires_grad=True)
    >>> y = dnp.i0(x); y.backward(); round(float(y), 12), round(float(x.grad), 12)
    (1.266065877752, 0.565159103992)
    """
    from numpy.lib._function_base_impl import _i0A, _i0B

    x = asarray_t(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = astype(x, np.float64)
    x = _P["abs"](x)
    small = x._data <= 8.0
    # each branch sees only the arguments it is for: no inf or NaN in the other's derivative
    xs, xl = where(small, x, 8.0), where(small, 8.0, x)
    ys = _P["exp"](xs) * _chbevl(xs / 2.0 - 2, _i0A)
    yl = _P["exp"](xl) * _chbevl(32.0 / xl - 2.0, _i0B) / _P["sqrt"](xl)
    return where(small, ys, yl)


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
    b = asarray_t(base)
    b = reshape(b, (1,) * (y.ndim - b.ndim) + b.shape) if b.ndim else b
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
    y = where(reshape(first, col), a, where(reshape(last, col), b, y)) * sign
    if axis != 0:
        y = moveaxis(y, 0, axis)
    return y if dtype is None else astype(y, dtype, copy=False)


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


def matvec(x1: Any, x2: Any, /) -> Any:
    """``numpy.matvec``: matrix-vector products over the last axes.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.matvec(a, [1.0, 10.0]); y.detach()
    tensor([21., 43.])
    >>> y.sum().backward(); a.grad
    tensor([[ 1., 10.],
            [ 1., 10.]])
    """
    return einsum("...ij,...j->...i", x1, x2)


def vecmat(x1: Any, x2: Any, /) -> Any:
    """``numpy.vecmat``: conjugated vector-matrix products over the last axes.

    Examples
    --------
    >>> v = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.vecmat(v, dualad.tensor([[1.0, 2.0], [3.0, 4.0]])); y.sum().backward()
    >>> y.detach(), v.grad  # v @ m, and the row sums of m
    (tensor([ 7., 10.]), tensor([3., 7.]))
    """
    return einsum("...j,...ji->...i", conj(asarray_t(x1)), x2)


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
    first = np.zeros(shp, dt, like=_device_like(d))
    return np.concatenate([first, np.cumsum(c, axis=ax)], axis=ax)


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
        return _make(np.empty((x.shape[0], 0), dt, like=_device_like(x._data)))
    cols = concatenate([_make(np.ones((x.shape[0], 1), dt, like=_device_like(x._data))),
                        broadcast_to(reshape(x, (-1, 1)), (x.shape[0], n - 1))], axis=1)
    v = cumprod(cols, axis=1)
    return v if increasing else flip(v, 1)


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
        p = getitem(p, (slice(None, -1),)) * np.arange(n, 0, -1, like=_device_like(p._data))
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
    k = np.zeros(m, like=_device_like(p._data)) if k is None else k
    kk = asarray_t(k)
    if kk.ndim == 0 or kk.shape[0] == 1 and m > 1:
        kk = broadcast_to(reshape(kk, (1,)), (m,))
    if kk.shape[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    for i in range(m):
        y = p / np.arange(p.shape[0], 0, -1, like=_device_like(p._data))
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
    q = stack(qs) if qs else _make(np.zeros(1, dt, like=_device_like(u._data)))
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

    from .linalg import inv, lstsq

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
    from .linalg import eigvals

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
    want = np.roots(p._data)  # NumPy's values and order
    if nz[0] and (p._rg or p._level):
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
    rest = _make(np.eye(n - 2, n - 1, dtype=p.dtype))
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
        from .linalg import eigvals

        z = eigvals(z)
    elif z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return _make(np.array(1.0))
    a: Any = _make(np.ones(1, z.dtype if z.dtype.kind in "fc" else np.float64))
    for i in range(z.shape[0]):
        a = convolve(a, stack([_make(np.ones((), z.dtype)), -getitem(z, i)]))
    if _is_c(a):
        r = np.asarray(z._data, complex)
        if np.all(np.sort(r) == np.sort(r.conjugate())):
            a = real(a)
    return a


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
        return _make(np.zeros(shape, a.dtype, like=_device_like(a._data)))
    return reshape(take(a, np.arange(n) % a.size), shape)
