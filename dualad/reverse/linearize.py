"""Linearize a JVP rule on symbolic placeholders, and transpose the linear program.

Reverse mode never has a backward formula of its own. For a node it runs the
primitive's JVP rule with *placeholders* as tangents: coefficients are
computed from the saved primals as usual, and every linear primitive applied
to a placeholder is recorded as an equation instead of being evaluated. The
recorded program is then run backwards, each equation through its primitive's
transpose rule, from the output cotangent to the input cotangents.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..core import dispatch as D
from ..core import levels
from ..core.levels import Interpreter
from ..core.tensor import Tensor, _make
from ..rules import vocabulary as F
from ..rules._util import is_lin
from ..rules.elementwise import _quietly


class NonlinearTangentError(RuntimeError):
    """A JVP rule applied a non-linear operation to a tangent."""


class _Tracing(threading.local):
    def __init__(self) -> None:
        self.programs: list[list[Any]] = []
        self.owner: list[str] = []
        # while a custom Function's rule is being linearized ("jvp" or "backward"), checked
        # strictly; None for a built-in rule linearized inside one (see linearize)
        self.user: list[str | None] = []


_tracing = _Tracing()


class Aval:
    """Shape and dtype without values: the ``_data`` of a placeholder (computing on it fails)."""

    __slots__ = ("shape", "dtype", "ndim")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.ndim = len(shape)


def placeholder(shape: tuple[int, ...], dtype: Any, level: int = D.LIN) -> Tensor:
    """A symbolic tensor of this shape and dtype (``LIN``) or a value stand-in (``AVAL``)."""
    t = _make(Aval(shape, dtype) if level == D.LIN else _aval_of(shape, dtype))
    t._level = level
    return t


_avals: dict[Any, Aval] = {}


def _aval_of(shape: tuple[int, ...], dtype: Any) -> Aval:
    # value stand-ins are never mutated, so one per (shape, dtype) serves every node
    a = _avals.get((shape, dtype))
    if a is None:
        a = _avals[(shape, dtype)] = Aval(shape, dtype)
    return a


class Linearize(Interpreter):
    """The interpreter of ``LIN``, reverse mode's placeholders: a call on one is appended to
    the current linear program (``record_linear``), and its result is a placeholder."""

    __slots__ = ()
    symbolic = True

    def process(self, prim: D.Primitive, args: Any, params: dict[str, Any]) -> Tensor:
        return record_linear(prim, args, params)


class StandIn(Interpreter):
    """The interpreter of ``AVAL``, a stand-in for a value the rule being linearized did not
    declare it reads (``Primitive.reads``): using it is the rule's error."""

    __slots__ = ()
    symbolic = True

    def process(self, prim: D.Primitive, args: Any, params: dict[str, Any]) -> Tensor:
        owner = _tracing.owner[-1] if _tracing.owner else "?"
        raise RuntimeError(
            f"dualad: the JVP rule of {owner} used a value it does not declare in `reads` "
            f"(in {prim.name}); reverse mode saved only the declared values"
        )


def record_linear(prim: D.Primitive, args: Any, params: dict[str, Any]) -> Tensor:
    """Record ``prim`` on placeholders as an equation of the current program."""
    owner = _tracing.owner[-1] if _tracing.owner else "?"
    lin = [i for i, a in enumerate(args) if is_lin(a)]
    users = _tracing.user  # (empty unless a custom Function's rule is being linearized)
    if users and users[-1] is not None:
        _check_user(owner, users[-1], prim, args, lin)
    if prim.transpose is None or any(i not in prim.linear for i in lin) or (
        not prim.joint and len(lin) > 1
    ):
        raise NonlinearTangentError(
            f"dualad: the JVP of {owner} is not linear in its tangents: it applies "
            f"'{prim.name}' to a tangent"
            + (" (a product of two tangents)" if prim.transpose is not None else "")
            + ". A JVP must be linear in the tangents: multiply them by coefficients "
            "computed from the primals, add them, index or reshape them."
        )
    if not _tracing.programs:
        raise RuntimeError("dualad: a symbolic tangent escaped its linearization")
    shape, dtype = prim.aval(args, **params)
    out = placeholder(shape, dtype)
    _tracing.programs[-1].append((prim, args, params, out))
    return out


levels.register(D.LIN, Linearize())
levels.register(D.AVAL, StandIn())


def _check_user(owner: str, user: str, prim: D.Primitive, args: Any, lin: list[int]) -> None:
    """The checks of an equation of a custom Function's rule: a backward's non-linearity
    said in its words, and a nonzero constant added to a placeholder (``g + 1``,
    ``where(m, g, 1)``) refused: the map is then affine, not linear, and its transpose
    would silently drop the constant. Built-in rules are trusted (their constants are
    zeros), so only user-written rules pay for this look at the values."""
    if user == "backward" and (prim.transpose is None or any(i not in prim.linear for i in lin)
                               or (not prim.joint and len(lin) > 1)):
        raise NonlinearTangentError(
            f"dualad: {owner}.backward is not linear in its grad_outputs: it applies "
            f"'{prim.name}' to a grad_output"
            + (" (a product of two grad_outputs)" if prim.transpose is not None else "")
            + f". Forward mode through {owner}, which defines no jvp, transposes its "
            "backward, which must therefore be linear in grad_output: multiply the "
            "grad_outputs by coefficients computed from the saved tensors, add them, index, "
            f"reshape or solve with them. Or give {owner} a jvp."
        )
    if not lin or not prim.joint:
        return
    for i, a in enumerate(args):
        if i in lin or i not in prim.linear or a is None or a.__class__ is str:
            continue
        d = a._data if a.__class__ is Tensor else a
        if isinstance(d, Aval):
            continue
        try:
            nonzero = bool(np.any(d))
        except (TypeError, ValueError):  # (not an array: an index, an option)
            continue
        if nonzero:
            what, of = (("grad_output", f"{owner}.backward is not linear in its grad_outputs")
                        if user == "backward"
                        else ("tangent", f"the JVP of {owner} is not linear in its tangents"))
            raise NonlinearTangentError(
                f"dualad: {of}: it adds a constant that is not zero to a {what} (in "
                f"'{prim.name}'), which makes it affine. Every term of its result must be "
                f"a {what} times a coefficient."
            )


def linearize(owner: str, rule: Any, *args: Any,
              user: str | None = None) -> tuple[Any, list[Any]]:
    """Run ``rule(*args)`` with placeholders in it; return (its result, the program).

    ``user``: ``"jvp"`` or ``"backward"`` where the rule is a custom Function's (the
    errors then name that method, and adding a constant to a placeholder is refused).
    """
    _tracing.programs.append([])
    _tracing.owner.append(owner)
    users = _tracing.user
    # (a built-in rule inside a custom one's linearization is marked as built-in; outside,
    # the stack stays empty and record_linear pays one test)
    mark = user is not None or bool(users)
    if mark:
        users.append(user)
    try:
        out = rule(*args)
    finally:
        prog = _tracing.programs.pop()
        _tracing.owner.pop()
        if mark:
            users.pop()
    return out, prog


@_quietly  # (0 * inf at a singular point is NaN, as the rule says, without NumPy's warning)
def transpose_program(prog: list[Any], outs: Any, cts: Any, ins: list[Any]) -> list[Any]:
    """Cotangents of ``ins`` given cotangents of ``outs``, through ``prog`` backwards."""
    acc: dict[int, Any] = {}
    for o, c in zip(outs, cts, strict=True):
        if c is not None and is_lin(o):
            _accumulate(acc, o, c)
    for prim, args, params, out in reversed(prog):
        c = acc.pop(id(out._data), None)
        if c is None:
            continue
        for a, r in zip(args, prim.transpose(c, args, **params), strict=False):
            if r is not None and is_lin(a):
                _accumulate(acc, a, r)
    return [None if i is None else acc.get(id(i._data)) for i in ins]


def _accumulate(acc: dict[int, Any], lin: Tensor, c: Any) -> None:
    c = fit_cotangent(c, lin)
    # (keyed by the placeholder's Aval, which is its identity: a Tensor into which a
    # placeholder was written in place, grad_input[idx] = g, holds the written one's)
    k = id(lin._data)
    prev = acc.get(k)
    acc[k] = c if prev is None else F.add(prev, c)  # type: ignore[attr-defined]


def fit_cotangent(c: Any, like: Any) -> Any:
    """The adjoint of embedding R in C is the real part; precision follows the primal."""
    return fit_dtype(c, like._data.dtype)


def fit_dtype(c: Any, ld: Any) -> Any:
    """``fit_cotangent`` for a primal of dtype ``ld``."""
    cd = c._data.dtype
    if cd == ld:
        return c
    if cd.kind == "c" and ld.kind != "c":
        c = F.real(c)
    return F.astype(c, ld) if c._data.dtype != ld else c
