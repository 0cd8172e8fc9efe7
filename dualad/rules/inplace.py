"""In-place writes: the data changes where it is; the history and the tangents are rebased.

An in-place operation is computed out of place first (``new``, with its own history and
tangents, made of ordinary primitives), then *committed* into the tensor written:

* its values are written into the tensor's memory and the version counter (shared by
  every view of that memory) goes up by one;
* a tensor that is not a view takes ``new``'s history and tangents;
* a view writes through to its base: the base's new value is "the base with the view's
  region replaced by ``new``", built from linear primitives (a ``setitem`` of the written
  view into the base, through the inverse of each step of the chain of views), so its
  derivative is by transposition like every other one — then the base takes that;
* every view of the base is regenerated from it (replaying its chain of view
  primitives), so its history and tangent are those of its region of the new base: a
  view's tangent is a view of the base's tangent.

Errors follow torch: a leaf that requires grad, or a view of one, cannot be written while
grad mode is on; nor can a view made while grad mode was off from a base that requires
grad. Under ``no_grad`` the history is kept as it was (only the tangents follow).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..backends.namespace import is_dask as _is_dask
from ..backends.namespace import writeable as _writeable
from ..core import dispatch as D
from ..core import grad_mode as gm
from ..core.dispatch import apply
from ..core.levels import PRIMAL
from ..core.tensor import Tensor
from . import elementwise as E
from . import linear as L
from .elementwise import PRIMS

_copy = PRIMS["positive"]
_REAL, _IMAG, _ADD, _MUL = PRIMS["real"], PRIMS["imag"], PRIMS["add"], PRIMS["multiply"]
_LIN = D.LIN


def _tracked(t: Any) -> bool:
    # (a symbolic tangent, LIN, is tracked too: a custom rule may write one into a
    # constant, grad_input[idx] = g, which records a linear setitem)
    return t.__class__ is Tensor and (t._requires_grad or t._level)


def setitem(self: Tensor, key: Any, value: Any) -> None:
    """``self[key] = value`` (``Tensor.__setitem__``), as NumPy writes it, differentiably."""
    if self._meta is not None and self._meta.inference and not gm.state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed. You can "
            "make a clone to get a normal tensor before doing inplace update (t = t.copy())."
        )
    d = self._data
    if not (d.flags.writeable if d.__class__ is np.ndarray else _writeable(d)):
        if _is_dask(d):
            raise _dask_write()
        raise ValueError(
            "in-place write into a Tensor whose data is read-only: it holds one value for "
            "every element (as the gradient of a sum does) or is a read-only view; write "
            "into a copy instead: t = t.copy()"
        )
    idx = L.Index(key, self.ndim)
    m = self._meta
    base = m.base if m is not None else None
    vt = isinstance(value, Tensor)
    if not (_tracked(self) or (vt and _tracked(value)) or
            (base is not None and (_tracked(base) or m.nograd))):
        self._data[idx.key] = value._data if vt else value  # nothing to differentiate
        self._version_counter()[0] += 1
        return
    if self._data.dtype.kind not in "fc":
        raise RuntimeError("in-place assignment of a differentiable value into a "
                           f"{self._data.dtype} tensor")
    check(self, base)
    commit(self, apply(L.setitem, self, value, idx=idx))


def _dask_write() -> NotImplementedError:
    return NotImplementedError(
        "in-place write into a Tensor of a Dask array (x[...] = v, x += y, x @= y): dualad "
        "does not rebind a Dask tensor and its views yet; use the out-of-place form "
        "(y = x + v, y = x @ b, dualad.numpy.where for a masked write)")


def check(t: Tensor, base: Tensor | None) -> None:
    """Raise torch's errors for writing into ``t`` (a view of ``base``, if not None)."""
    if not gm.state.grad:
        return
    if base is None:
        if t._requires_grad and t._node is None:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation; "
                "modify it under `with dualad.no_grad():` or work on a copy"
            )
        return
    if base._requires_grad and base._node is None:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place "
            "operation: writing into it would change the leaf. Modify it under "
            "`with dualad.no_grad():`, or work on a copy (leaf.copy()) and take views of that"
        )
    if t._meta.nograd:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled: its base requires grad, but the view carries no history to rebase. "
            "Make the view with grad mode on, or modify it under `with dualad.no_grad():`"
        )


def commit(t: Tensor, new: Tensor) -> None:
    """Write ``new`` (computed out of place, of ``t``'s shape) into ``t`` in place: values,
    version, history and tangents, through to the base if ``t`` is a view."""
    m = t._meta
    base = m.base if m is not None else None
    if base is None:
        _adopt(t, new)
        regenerate(t)
        return
    _adopt(base, _copy_slices(base, m.fns, new))
    regenerate(base)


def _copy_slices(base: Tensor, fns: tuple[Any, ...], new: Tensor) -> Tensor:
    """``base`` with the region of the view ``fns(base)`` replaced by ``new``, from linear
    primitives: walking the chain of views back, a slice is a ``setitem`` into the value
    it was taken from, a reshape or a transpose is undone (they replace all of it), a
    real or imaginary part is put back beside the other part."""
    parts = [base]  # the intermediate views (a setitem writes into the one before it)
    for k in range(len(fns) - 1):
        parts.append(_replay(parts[-1], fns[k:k + 1]))
    w = new
    for (prim, params), x in zip(reversed(fns), reversed(parts), strict=True):
        if prim is L.getitem:
            w = apply(L.setitem, x, w, idx=params["idx"])
        elif prim is L.reshape:
            w = apply(L.reshape, w, shape=x.shape)
        elif prim is L.transpose:
            w = apply(L.transpose, w, axes=tuple(int(a) for a in np.argsort(params["axes"])))
        elif prim is L.diagonal:  # (einsum's 'ii->i'): w written at the diagonal of x
            w = apply(L.setitem, x, w, idx=L.diagonal_index(x.ndim, x.shape[-1]))
        elif prim is _REAL:  # the real part replaced: w + 1j imag(x)
            w = apply(_ADD, w, apply(_MUL, apply(_IMAG, x), 1j))
        elif prim is _IMAG:  # the imaginary part replaced: real(x) + 1j w
            w = apply(_ADD, apply(_REAL, x), apply(_MUL, w, 1j))
        elif prim is PRIMAL:  # (unpack_dual's primal: the tangent at that level stays)
            t = D.split(x, params["level"])[1]
            w = w if t is None else D.dual(params["level"], w, t)
        else:  # (broadcast_to: read-only, never written)
            raise RuntimeError(f"internal: cannot write through a {prim.name} view")
    return w


def _adopt(t: Tensor, new: Tensor) -> None:
    """``t`` takes ``new``'s values (written into its memory), history and tangents (with
    grad mode off, ``t`` keeps its history: only the tangents follow)."""
    if new._level >= _LIN:  # a symbolic tangent written into a constant while a custom
        t._data, t._level = new._data, new._level  # rule is linearized: t becomes symbolic
        t._version_counter()[0] += 1
        return
    src = D.innermost(new)._data
    if src is not t._data:
        t._data[...] = src
    vc = t._version_counter()
    vc[0] += 1
    _take(t, new, gm.state.grad)


def _take(t: Tensor, new: Tensor, history: bool) -> None:
    """``t`` (whose memory holds ``new``'s values already) takes ``new``'s structure: its
    tangents at every level, and its history if ``history`` (else keeps its own)."""
    L = t._level if t._level < _LIN else 0
    p = t._made_parts()[0] if L else None
    if p is not None and (new._level == L or L not in D.live):
        # t's primal is an object of its own (make_dual's tensor, say): it takes the new
        # primal in place, so that whoever holds it sees the write too (through its base
        # if it is a view); the tangent is replaced, not written into (tangent arrays are
        # shared between results: writing into one could change another)
        newp = new._primal if new._level == L else new  # (a level that exited: t is p)
        if p._meta is not None and p._meta.base is not None:
            commit(p, newp)
        else:
            _take(p, newp, history)
        if new._level == L:
            t._tangent = new._tangent
        t._requires_grad, t._node = p._requires_grad, p._node
        if p._node is not None:
            t._out_nr = p._out_nr
        return
    old = D.innermost(t)
    rg, node, nr = (new._requires_grad, new._node, getattr(new, "_out_nr", 0)) if history else \
        (old._requires_grad, old._node, getattr(old, "_out_nr", 0))
    if history and new._level and new._level < _LIN:
        inner = new._graph_holder()  # (a dual's graph fields are its innermost primal's)
        rg, node, nr = inner._requires_grad, inner._node, getattr(inner, "_out_nr", 0)
    retained = old._meta is not None and old._meta.retains_grad
    old_node, old_nr = old._node, getattr(old, "_out_nr", 0)
    vc = t._version_cell
    if new._level and new._level < _LIN:
        t._take_parts(new)
        for p in t._primal_chain()[1:]:  # the primals below: this memory, this counter
            p._data, p._version_cell = t._data, vc
    else:
        t._level = 0
    t._set_graph_fields(rg, node, nr)  # (on t and every primal below it)
    if retained and node is not None and node is not old_node:
        # retain_grad: .grad is the gradient of the value after the write (torch)
        inner = D.innermost(t)
        if old_node is not None and old_node.hooked:
            old_node.retain.pop(old_nr, None)
        if inner is not old:
            inner._meta_().retains_grad = True
        node._table("retain")[nr] = weakref.ref(inner)


def regenerate(base: Tensor) -> None:
    """Give each live view of ``base`` the history and tangents of its region of ``base``
    (replaying its chain of view primitives; a view made with grad mode off stays
    without history)."""
    m = base._meta
    if m is None or not m.views:
        return
    refs, m.views = m.views, []  # (the replays register views of their own: dropped)
    alive = []
    history = gm.state.grad
    for ref in refs:
        v = ref()
        if v is None:
            continue
        alive.append(ref)
        vm = v._meta
        if vm.nograd:
            with gm.no_grad():
                r = _replay(base, vm.fns)
            _take(v, r, False)
        else:
            r = _replay(base, vm.fns)
            _take(v, r, history)
    m.views = alive


def _replay(base: Tensor, fns: tuple[Any, ...]) -> Tensor:
    r = base
    for prim, params in fns:
        r = D.split(r, params["level"])[0] if prim is PRIMAL else apply(prim, r, **params)
    return r


def into(out: Tensor, prim: Any, args: Any) -> Tensor:
    """``prim(*args)`` written into ``out`` (NumPy's ``out=``, and ``x op= y``)."""
    if out.__class__ is Tensor and out._data.__class__ is not np.ndarray and \
            _is_dask(out._data):
        raise _dask_write()  # (before np.may_share_memory, which would compute it)
    if gm.state.grad and (_tracked(out) or any(_tracked(a) for a in args)):
        # A rule may save an input (x **= 2, x *= y): recorded, it reads a copy of what
        # the write is about to change, as torch saves the original self
        d = out._data
        args = [apply(_copy, a) if a.__class__ is Tensor and np.may_share_memory(a._data, d)
                else a for a in args]
    r = apply(prim, *args)
    if out.__class__ is Tensor and not np.can_cast(r.dtype, out.dtype, "same_kind"):
        raise TypeError(  # (NumPy's UFuncTypeError is a TypeError)
            f"Cannot cast {prim.name}'s output from {r.dtype} to {out.dtype} with casting "
            "rule 'same_kind'"
        )
    setitem(out, Ellipsis, r)
    return out


E.install_out_writer(into)


def scalar(t: Tensor) -> bool:
    """True if ``t`` stands for a NumPy scalar: ``t op= y`` then rebinds ``t`` to
    ``t op y``, as ``n += k`` does when NumPy's ``n`` is a scalar, instead of writing into
    memory that another name may hold (``start = n; n += k`` leaves ``start`` as it was).

    NumPy returns a scalar, not a 0-d array, for every 0-d result of a computation (a
    reduction, an integer index, a ufunc of scalars); it returns a 0-d *array* from a
    factory (``np.array(1.0)``, ``np.zeros(())``), a copy, or as a view. So a 0-d Tensor
    is a scalar unless it is marked as an array (``_Meta.array``: the factories, copies
    and ``detach`` mark theirs), is a view (it writes through to its base), is a leaf
    that requires grad (a parameter, updated in place under ``no_grad`` as in torch), or
    retains its grad (``.grad`` is then that of the value after the write, as in torch).
    The dual of such a tensor (``make_dual``) is what it is. Checked here only, so that
    no operation pays for marking its result.
    """
    if t._data.ndim != t._batch_ndim:
        return False
    for u in t._primal_chain():
        m = u._meta
        if m is not None and (m.array or m.base is not None or m.retains_grad) or \
                (u._requires_grad and u._node is None):
            return False
    return True


def inplace(prim: Any) -> Any:
    """The in-place operator of a binary primitive (``x += y`` for ``add``); on a tensor
    that stands for a NumPy scalar (see :func:`scalar`), ``x op y`` rebound."""

    def op(self: Tensor, other: Any) -> Tensor:
        if self._data.ndim == self._batch_ndim and scalar(self):
            return apply(prim, self, other)
        return into(self, prim, (self, other))

    op.__name__ = f"i{prim.name}"
    return op


def bitwise_inplace(prim: Any, refused: Any) -> Any:
    """``x &= y`` (``|=``, ``^=``, with ``prim`` the operator's primitive) on a boolean or
    integer tensor that stands for a NumPy scalar (``ok = dnp.all(a); ok &= dnp.all(b)``):
    ``x & y`` rebound, as NumPy's; anything else goes to ``refused`` (in-place bitwise
    writes into arrays are not supported)."""

    def op(self: Tensor, other: Any) -> Any:
        if self._data.dtype.kind in "biu" and self._data.ndim == self._batch_ndim and scalar(self):
            return apply(prim, self, other)
        return refused(self, other)

    op.__name__ = refused.__name__
    return op
