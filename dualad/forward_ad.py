"""Forward mode: dual levels, ``make_dual`` and ``unpack_dual``.

A dual level is a level of the core (``core.levels``) whose interpreter is a
``core.dispatch.DualLevel``. Levels nest to any depth. Each level is a fresh id from a counter that never
repeats, so a tangent of one level can never be mistaken for another's
(no perturbation confusion). After its level exits a dual tensor behaves
exactly like its primal.

Examples
--------
>>> import dualad as da
>>> with da.dual_level():
...     x = da.make_dual(da.tensor(0.5), da.tensor(1.0))
...     y = da.numpy.sin(x) * x
...     da.unpack_dual(y).tangent  # cos(x) x + sin(x)
tensor(0.91821682)
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _fpfilter
from .core import dispatch as D
from .core import grad_mode as _gm
from .core import levels
from .core.levels import PRIMAL
from .core.tensor import Tensor, _make
from .rules import linear as _linear

__all__ = [
    "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
    "UnpackedDualTensor",
]

class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal and the tangent (``None`` if zero).

    Examples
    --------
    >>> with dualad.dual_level():
    ...     p, t = dualad.unpack_dual(dualad.make_dual(dualad.tensor(2.0), dualad.tensor(1.0)) * 3)
    >>> p, t
    (tensor(6.), tensor(3.))
    """

    primal: Tensor
    tangent: Tensor | None


def enter_dual_level() -> int:
    """Open a new, innermost dual level and return its id (never reused).

    Examples
    --------
    >>> lvl = dualad.enter_dual_level()
    >>> dualad.exit_dual_level(level=lvl)
    """
    _fpfilter.in_front()  # (the generated code's warnings, raised and declined on)
    return levels.enter(D.DualLevel, dual=True)


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost dual level (``level``, if given, must be that one).

    Examples
    --------
    >>> lvl = dualad.enter_dual_level()
    >>> x = dualad.make_dual(dualad.tensor(1.0), dualad.tensor(1.0))
    >>> dualad.exit_dual_level(level=lvl)
    >>> dualad.unpack_dual(x).tangent is None  # plain again once its level is gone
    True
    """
    if levels.stack and levels.stack[-1] not in levels.duals:
        raise RuntimeError("exit_dual_level: the innermost live level is not a dual level (a "
                           "jet level: dualad.taylor.exit_jet_level); exit inner levels first")
    levels.exit(level, "exit_dual_level")


class dual_level:
    """Context manager for a dual level; ``__enter__`` returns the level id.

    Examples
    --------
    >>> with dualad.dual_level() as lvl:
    ...     x = dualad.make_dual(dualad.tensor([1.0, 2.0]), dualad.tensor([1.0, 0.0]))
    ...     dualad.unpack_dual(x ** 2).tangent
    tensor([2., 0.])
    """

    def __enter__(self) -> int:
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc: object) -> None:
        exit_dual_level(level=self.level)


def _level_arg(level: int | None, what: str) -> int:
    if level is None:
        level = _innermost_dual()
        if level is None:
            raise RuntimeError(
                f"{what}: no dual level is live; use it inside `with dualad.dual_level():`"
            )
        return level
    if level not in D.live:
        raise RuntimeError(f"{what}: level {level} is not live (it exited or never existed)")
    if level not in levels.duals:
        raise RuntimeError(f"{what}: level {level} is not a dual level (a jet level of "
                           "Taylor mode: use dualad.taylor.make_jet and unpack_jet there)")
    return level


def _innermost_dual() -> int | None:
    """The innermost live dual level (a jet level of Taylor mode may be inside it)."""
    for L in reversed(D.stack):
        if L in levels.duals:
            return L
    return None


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None, batched: bool = False) -> Tensor:
    """Pair ``tensor`` with ``tangent`` as a dual tensor at ``level``.

    Parameters
    ----------
    tensor : Tensor or array_like
        The primal, of a floating or complex dtype.
    tangent : Tensor or array_like
        Of the same shape as ``tensor`` (or ``(B,) + tensor.shape`` when
        ``batched``), floating or complex; a real tangent of a complex primal is
        promoted.
    level : int, optional
        The level (default: the innermost live one).
    batched : bool, default False
        The tangent carries a leading axis of B tangents, all pushed in one pass;
        every tangent derived from it then has shape ``(B,) + shape``. Only one
        batched level may be live at a time.

    Examples
    --------
    >>> with dualad.dual_level():
    ...     x = dualad.make_dual(dualad.tensor([1.0, 2.0]), dualad.eye(2), batched=True)
    ...     dualad.unpack_dual(x * x).tangent  # the Jacobian, one row per tangent
    tensor([[2., 0.],
           [0., 4.]])
    """
    L = _level_arg(level, "make_dual")
    _fpfilter.in_front()
    x = tensor if isinstance(tensor, Tensor) else Tensor(tensor)
    if x._data.dtype.kind not in "fc":
        raise ValueError(
            f"make_dual: the primal has dtype {x.dtype}; only floating and complex tensors can "
            "carry a tangent (convert with .astype('float64'))"
        )
    if type(tangent).__module__.startswith("scipy.sparse"):
        raise TypeError(
            "make_dual: the tangent is a SciPy sparse matrix; a dual level carries dense "
            "tangents. For a Jacobian carried as sparse matrices (directions as columns) use "
            "dualad.functional.sparse_jacobian(func, x, strategy=\"sparse-tangents\"), or "
            "pass tangent.toarray()")
    t = tangent if isinstance(tangent, Tensor) else Tensor(tangent)
    want = ((t.shape[0],) if batched and t.ndim else ()) + x.shape
    if batched and t.ndim == 0:
        raise RuntimeError("make_dual(batched=True): the tangent needs a leading batch axis")
    if t.shape != want:  # (torch's class: RuntimeError)
        exp = f"(B,) + {x.shape}" if batched else f"{x.shape}"
        hint = ("; it has a leading axis of B tangents of the primal's shape: pass "
                "batched=True to push them all in one pass"
                if not batched and t.ndim == x.ndim + 1 and t.shape[1:] == x.shape else "")
        raise RuntimeError(
            f"make_dual: tangent of shape {t.shape} does not match the primal: expected "
            f"{exp}{hint}"
        )
    if t.dtype.kind not in "fc":
        raise ValueError(
            f"make_dual: tangent has dtype {t.dtype}; tangents must be floating or complex"
        )
    if t.dtype.kind == "c" and x.dtype.kind != "c":
        raise ValueError(
            f"make_dual: a complex tangent ({t.dtype}) for a real primal ({x.dtype}); "
            "make the primal complex first if you mean a complex direction"
        )
    if t.dtype != x.dtype:
        t = t.astype(x.dtype)
    x._version_counter()  # (the dual and its primal: one memory, one version counter)
    if t._level >= L:
        raise _SameLevel(
            "make_dual: Setting a forward grad that itself has a forward gradient at the same "
            f"level is not supported: the tangent is itself dual at level {t._level} >= {L}; "
            "a tangent may only carry tangents of outer (lower) levels (pass "
            "unpack_dual(tangent).primal for its value)"
        )
    if batched:
        others = D.batched - {L}
        if others:
            raise RuntimeError(
                f"make_dual(batched=True): level {min(others)} already carries batched tangents; "
                "only one batched level may be live at a time (use batched=False here)"
            )
        D.batched.add(L)
        t = _with_nb(t, 1)
    elif L in D.batched:
        raise RuntimeError(
            "make_dual: this level carries batched tangents; pass batched=True here too"
        )
    return _insert(x, L, t)


class _SameLevel(RuntimeError, ValueError):
    """``make_dual`` of a tangent that is dual at the level made: torch's RuntimeError (and
    a ValueError, as dualad raised it before)."""


def _insert(x: Tensor, L: int, t: Tensor) -> Tensor:
    # Keep the invariant "parts of a level-L dual are dual only below L".
    if x._level and x._level < D.LIN and x._level in D.live:
        if x._level == L:
            raise ValueError(
                "make_dual: the tensor is already dual at this level; unpack_dual it first"
            )
        if x._level > L:
            return D.dual(x._level, _insert(x._primal, L, t), x._tangent)
    return D.dual(L, x, t)


def _with_nb(t: Tensor, nb: int) -> Tensor:
    """``t`` with ``nb`` leading axes marked as batch axes (data shared).

    When ``t`` is tracked (requires grad, or dual), the change is recorded as the
    linear primitives ``rebatch``/``unbatch`` so derivatives through it stay right.
    """
    if t._batch_ndim == nb:
        return t
    if (t._requires_grad and _gm.state.grad) or (t._level and t._level < D.LIN and t._level in D.live):
        # one axis a step: the innermost batch axis becomes the leading logical one (unbatch)
        # and back (rebatch); a cotangent of a nested batched pass has several to move
        while t._batch_ndim != nb:
            if nb > t._batch_ndim:
                t = D.apply(_linear.rebatch, t, size=t.shape[0])
            else:
                t = D.apply(_linear.unbatch, t, size=t._data.shape[t._batch_ndim - 1])
        return t
    if t._level and t._level < D.LIN:
        return D.dual(t._level, _with_nb(t._primal, nb), _with_nb(t._tangent, nb))
    u = _make(t._data)
    u._batch_ndim = nb
    u._requires_grad, u._node = t._requires_grad, t._node
    if t._node is not None:
        u._out_nr = t._out_nr
    return u


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """Split a dual tensor into ``(primal, tangent)`` at ``level``.

    The tangent is ``None`` when the tensor is not dual at that level (its
    tangent is zero). For a batched level it has shape ``(B,) + primal.shape``.

    Examples
    --------
    >>> with dualad.dual_level():
    ...     y = dualad.make_dual(dualad.tensor(2.0), dualad.tensor(1.0)) ** 3
    ...     p, t = dualad.unpack_dual(y)
    >>> p, t
    (tensor(8.), tensor(12.))
    """
    return _unpack(tensor, level, view=True)


def _unpack(tensor: Any, level: int | None = None, view: bool = False) -> UnpackedDualTensor:
    """``unpack_dual``; its primal is a view of the dual tensor only with ``view`` (the
    transforms unpack duals of their own, which nothing else holds or writes into)."""
    if not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    if level is None:
        level = _innermost_dual()
        if level is None:
            return UnpackedDualTensor(D.strip(tensor), None)
    elif level not in D.live:
        return UnpackedDualTensor(D.strip(tensor), None)
    d = D.strip(tensor)
    p, t = D.split(d, level)
    if t is None:
        return UnpackedDualTensor(p, None)
    if t.__class__ is list:
        raise RuntimeError(f"unpack_dual: level {level} is a jet level of Taylor mode, not a "
                           "dual level; use dualad.taylor.unpack_jet there")
    if t._batch_ndim:
        t = _with_nb(t, 0)
    return UnpackedDualTensor(_primal_view(d, p, level) if view else p, t)


def _primal_view(d: Tensor, p: Tensor, level: int) -> Tensor:
    """``p``, the primal of ``d`` at ``level``, as a new view of ``d``: the same memory and
    version counter and history; writing into it rebases ``d`` (its tangent stays)."""
    v = _make(p._data)
    v._batch_ndim, v._requires_grad, v._node = p._batch_ndim, p._requires_grad, p._node
    if p._node is not None:
        v._out_nr = p._out_nr
    if p._level and p._level < D.LIN:
        v._take_parts(p)
    v._version_cell = d._version_counter()
    if p._requires_grad and p._node is None:  # a leaf's view: its gradient is the leaf's
        v._meta_().acc = D.recorder.edge_of(p)[0]
    D.register_view(PRIMAL, d, v, {"level": level})
    return v
