"""NumPy specifics: primitives, their rules and vocabulary; the meaning of Tensor's operators.

Tensor's operators are declared in ``dualad._tensor_methods.ArrayMethods``; their meanings
are registered here (``tensor_method``): each is one primitive's call, or an in-place write
of one (``dualad.rules.inplace``). NumPy's array methods are ``dualad.numpy``'s
(``dualad/numpy/_methods.py``).
"""

from __future__ import annotations

import functools
from typing import Any

from .._tensor_methods import tensor_method
from ..core.dispatch import apply
from ..core.tensor import Tensor
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
    to ``apply`` what it declines). Set on ``Tensor`` itself, it saves the call through
    the declared method (``dualad._tensor_methods``), which the operator's speed needs."""
    if name not in OPERATORS:
        raise KeyError(f"{name} is not an operator of one primitive (rules.OPERATORS)")
    setattr(Tensor, name, fn)


for _name, (_prim, _reflected) in OPERATORS.items():
    tensor_method(_name)(_operator(_prim, _reflected))

# A Python exponent with an exact cheaper primitive (NumPy's own fast scalar powers): same
# values, and derivatives that do not climb through a ** 1, a ** 0, ...
_POWERS = {2: _P["square"], 1: _P["positive"], -1: _P["reciprocal"]}


@tensor_method("__pow__")
def _pow(self: Tensor, other: Any) -> Any:
    if other.__class__ in (int, float) and other in _POWERS and self._data.dtype.kind in "fc":
        return apply(_POWERS[other], self)
    return apply(_P["power"], self, other)


@tensor_method("__imatmul__")
def _imatmul(self: Tensor, other: Any) -> Tensor:
    # the product reads the old value of self, which the write replaces: give it a copy
    I.setitem(self, Ellipsis,
              F.matmul(self.copy() if self._requires_grad or self._level else self, other))
    return self


tensor_method("__invert__")(lambda self: apply(_P["invert"], self))
tensor_method("__mod__")(lambda self, o: apply(_P["remainder"], self, o))
tensor_method("__rmod__")(lambda self, o: apply(_P["remainder"], o, self))
tensor_method("__matmul__")(F.matmul)
tensor_method("__rmatmul__")(lambda self, o: F.matmul(o, self))
tensor_method("__getitem__")(functools.partial(F.getitem, _user=True))

# -- in-place: write the data, bump the version, rebase the history (see .inplace) ---------

tensor_method("__setitem__")(I.setitem)
for _name, _pname in [("iadd", "add"), ("isub", "subtract"), ("imul", "multiply"),
                      ("itruediv", "divide"), ("ipow", "power"), ("imod", "remainder"),
                      ("ifloordiv", "floor_divide")]:
    tensor_method(f"__{_name}__")(I.inplace(_P[_pname]))
