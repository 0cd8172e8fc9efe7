"""NumPy specifics: primitives, the function library, Tensor operators and NumPy interop."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.dispatch import apply
from ..core.tensor import Tensor
from ..numpy import indexing as NI
from ..numpy import logic as NL
from ..numpy import manipulation as NM
from ..numpy import products as NP
from ..numpy import reductions as NR
from ..numpy import sorting as NS
from ..numpy import ufuncs as NU
from . import elementwise as E
from . import inplace as I
from . import vocabulary as F
from .vocabulary import zeros_like, zeros_like_tangent

__all__ = ["F", "zeros_like", "zeros_like_tangent"]

_P = E.PRIMS
E.namespace.update({n: getattr(F, n) for n in E._FUNCS})


# -- operators: straight to apply ------------------------------------------------------------
#
# Each operator below is one primitive's call: ``x + y`` is ``apply(add, x, y)``, ``2 * x``
# (the reflected ``__rmul__``) ``apply(multiply, 2, x)``. The fast layer may put in its place
# a function of the same meaning that saves the operator's frame (``register_operator``).

OPERATORS: dict[str, tuple[Any, bool]] = {}
"""Tensor's operators that are one primitive's call: name -> (primitive, reflected)."""

for _name, _pname in [
    ("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
    ("pow", "power"), ("floordiv", "floor_divide"), ("eq", "equal"), ("ne", "not_equal"),
    ("lt", "less"), ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal"),
    ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
]:
    if _name != "pow":  # (``__pow__`` is below: it picks a primitive by the exponent)
        OPERATORS[f"__{_name}__"] = (_P[_pname], False)
    if _name not in ("eq", "ne", "lt", "le", "gt", "ge"):
        OPERATORS[f"__r{_name}__"] = (_P[_pname], True)
for _name, _pname in [("neg", "negative"), ("pos", "positive"), ("abs", "abs")]:
    OPERATORS[f"__{_name}__"] = (_P[_pname], False)


def _operator(prim: Any, reflected: bool) -> Any:
    """The general operator: ``apply`` on the primitive (the reflected one with its
    operands swapped), the way every other call of a primitive goes."""
    if prim.nin == 1:
        return lambda self: apply(prim, self)

    def op(self: Tensor, other: Any) -> Any:
        return apply(prim, self, other)

    def rop(self: Tensor, other: Any) -> Any:
        return apply(prim, other, self)

    return rop if reflected else op


def register_operator(name: str, fn: Any) -> None:
    """Make ``fn`` Tensor's operator ``name`` (a key of ``OPERATORS``) in place of the
    general one: the fast layer's entry for operators (``dualad.fast.elementwise`` gives
    a function of the same meaning, compiled from the primitive's formulas, which hands
    to ``apply`` what it declines)."""
    if name not in OPERATORS:
        raise KeyError(f"{name} is not an operator of one primitive (rules.OPERATORS)")
    setattr(Tensor, name, fn)


for _name, (_prim, _reflected) in OPERATORS.items():
    setattr(Tensor, _name, _operator(_prim, _reflected))

# A Python exponent with an exact cheaper primitive (NumPy's own fast scalar powers): same
# values, and derivatives that do not climb through a ** 1, a ** 0, ...
_POWERS = {2: _P["square"], 1: _P["positive"], -1: _P["reciprocal"]}


def _pow(self: Tensor, other: Any) -> Any:
    if other.__class__ in (int, float) and other in _POWERS and self._data.dtype.kind in "fc":
        return apply(_POWERS[other], self)
    return apply(_P["power"], self, other)


Tensor.__pow__ = _pow  # type: ignore[method-assign]
Tensor.__invert__ = lambda self: apply(_P["invert"], self)  # type: ignore[method-assign]
Tensor.__matmul__ = lambda self, o: F.matmul(self, o)  # type: ignore[method-assign]
Tensor.__rmatmul__ = lambda self, o: F.matmul(o, self)  # type: ignore[method-assign]
Tensor.__getitem__ = lambda self, key: F.getitem(self, key, True)  # type: ignore[method-assign]
Tensor.__mod__ = lambda self, o: apply(_P["remainder"], self, o)  # type: ignore[method-assign]


# -- array methods ------------------------------------------------------------------------------


def _method(fn: Any) -> Any:
    def m(self: Tensor, *args: Any, **kw: Any) -> Any:
        return fn(self, *args, **kw)

    m.__name__ = fn.__name__
    m.__doc__ = fn.__doc__
    return m


for _mod, _names in [
    (NR, "sum mean prod var std cumsum cumprod ptp"), (NP, "trace dot"),
    (NI, "diagonal take"), (NM, "ravel swapaxes squeeze repeat astype"),
    (NU, "clip round conj conjugate"), (NS, "argmax argmin argsort nonzero"), (NL, "all any"),
]:
    for _name in _names.split():
        setattr(Tensor, _name, _method(getattr(_mod, _name)))
Tensor.max = _method(F.amax)  # type: ignore[attr-defined]
Tensor.min = _method(F.amin)  # type: ignore[attr-defined]
Tensor.flatten = lambda self: F.reshape(F.asarray_t(F.positive(self)), (self.size,))  # type: ignore
Tensor.copy = lambda self: apply(_P["positive"], self)  # type: ignore[attr-defined]


def _reshape(self: Tensor, *shape: Any, order: str = "C") -> Any:
    """Tensor.reshape(*shape) or reshape(shape), as ``numpy.ndarray.reshape``."""
    return NM.reshape_view(self, shape[0] if len(shape) == 1 else shape, order)


def _transpose(self: Tensor, *axes: Any) -> Any:
    """Tensor.transpose(*axes) or transpose(axes), as ``numpy.ndarray.transpose``."""
    if len(axes) == 1 and (axes[0] is None or np.ndim(axes[0]) == 1):
        axes = axes[0]
    return NM.transpose_view(self, axes or None)


Tensor.reshape = _reshape  # type: ignore[attr-defined]
Tensor.transpose = _transpose  # type: ignore[attr-defined]
Tensor.T = property(lambda self: NM.transpose_view(self))  # type: ignore[attr-defined]
Tensor.mT = property(lambda self: F.swapaxes(self, -1, -2))  # type: ignore[attr-defined]
Tensor.real = property(lambda self: F.real(self))  # type: ignore[attr-defined]
Tensor.imag = property(lambda self: F.imag(self))  # type: ignore[attr-defined]


# -- in-place: write the data, bump the version, rebase the history (see .inplace) ---------

Tensor.__setitem__ = I.setitem  # type: ignore[method-assign]
for _name, _pname in [("iadd", "add"), ("isub", "subtract"), ("imul", "multiply"),
                      ("itruediv", "divide"), ("ipow", "power")]:
    setattr(Tensor, f"__{_name}__", I.inplace(_P[_pname]))
Tensor.__rmod__ = lambda self, o: apply(_P["remainder"], o, self)  # type: ignore[attr-defined]
Tensor.__divmod__ = lambda self, o: NU.divmod(self, o)  # type: ignore[attr-defined]
Tensor.__rdivmod__ = lambda self, o: NU.divmod(o, self)  # type: ignore[attr-defined]
Tensor.__imod__ = I.inplace(_P["remainder"])  # type: ignore[attr-defined]
Tensor.__ifloordiv__ = I.inplace(_P["floor_divide"])  # type: ignore[attr-defined]


def _imatmul(self: Tensor, other: Any) -> Tensor:
    # the product reads the old value of self, which the write replaces: give it a copy
    I.setitem(self, Ellipsis, F.matmul(self.copy() if self._rg or self._level else self, other))
    return self


Tensor.__imatmul__ = _imatmul  # type: ignore[attr-defined]
Tensor.compress = lambda self, condition, axis=None: NI.compress(  # type: ignore[attr-defined]
    condition, self, axis)
Tensor.choose = lambda self, choices, out=None, mode="raise": NI.choose(  # type: ignore
    self, choices, out, mode)
Tensor.argpartition = lambda self, kth, axis=-1, **kw: F._make(  # type: ignore[attr-defined]
    np.argpartition(self._data, kth, axis=axis, **kw))
Tensor.searchsorted = lambda self, v, side="left", sorter=None: F._make(  # type: ignore
    np.asarray(np.searchsorted(self._data, F._raw(v), side=side, sorter=F._raw(sorter))))


def _sort_inplace(self: Tensor, axis: int = -1, kind: Any = None, order: Any = None) -> None:
    """``ndarray.sort``: sorts in place (a tracked in-place write of the sorted values)."""
    I.setitem(self, Ellipsis, NS.sort(self, axis=axis, kind=kind))


def _partition_inplace(self: Tensor, kth: Any, axis: int = -1, kind: str = "introselect",
                       order: Any = None) -> None:
    """``ndarray.partition``: partitions in place (a tracked in-place write)."""
    I.setitem(self, Ellipsis, NS.partition(self, kth, axis=axis, kind=kind))


def _fill(self: Tensor, value: Any) -> None:
    """``ndarray.fill``: every element set to ``value`` (a tracked in-place write)."""
    I.setitem(self, Ellipsis, value)


Tensor.sort = _sort_inplace  # type: ignore[attr-defined]
Tensor.partition = _partition_inplace  # type: ignore[attr-defined]
Tensor.fill = _fill  # type: ignore[attr-defined]


def _refused_method(name: str) -> Any:
    def m(self: Tensor, *args: Any, **kw: Any) -> Any:
        from ..numpy._coverage import NDARRAY

        raise TypeError(f"dualad: ndarray.{name} is not supported on dualad Tensors "
                        f"({NDARRAY['ndarray.' + name][1]})")

    m.__name__ = name
    return m


def _install_refusals() -> None:
    """ndarray's methods that a Tensor refuses: a TypeError with the coverage table's reason
    (attributes such as ``flags`` or ``strides`` stay absent: ``hasattr`` must say no)."""
    from ..numpy._coverage import NDARRAY, REFUSED

    for q, (status, _) in NDARRAY.items():
        name = q.split(".", 1)[1]
        if status == REFUSED and callable(getattr(np.ndarray, name, None)) and not hasattr(
                Tensor, name):
            setattr(Tensor, name, _refused_method(name))


_install_refusals()
for _name, _pname in [("iand", "bitwise_and"), ("ior", "bitwise_or"), ("ixor", "bitwise_xor")]:
    setattr(Tensor, f"__{_name}__", I.bitwise_inplace(_P[_pname], getattr(Tensor, f"__{_name}__")))
