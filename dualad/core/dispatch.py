"""The one dispatch path: every operation on Tensors reaches ``apply``.

A primitive is a small named object holding its NumPy implementation and its
one derivative rule, the JVP. Linear primitives also carry a transpose rule
(given beside their definition in ``dualad.rules``) and a batching rule; they
are the only code that knows about transposition and batched tangents
(invariants 1-3 of docs/architecture.md).

``apply(prim, *args, **params)`` first offers the call to ``prim.hot``, if the
primitive has one (the elementwise family's common cases, generated from its
formulas: see ``rules/elementwise.py``). Otherwise it has three paths, chosen by
the highest *level* among the Tensor arguments:

* level 0 (plain): evaluate ``prim.impl`` on the arrays, and record a reverse
  node if grad mode is on and an input requires grad;
* a live dual level L: split every input at L into (primal, tangent), compute
  the primal output by recursion (lower levels handle themselves) and the
  tangent with ``prim.jvp`` — whose ops are ordinary ops, so lower levels and
  reverse recording apply to them too;
* ``LIN``: the input is a symbolic linear placeholder, used while reverse mode
  linearizes a JVP rule; the call is recorded into a linear program.

Tangents are ``None`` when symbolically zero: a level whose inputs all have
zero tangents costs exactly the plain op.

A tool that watches every primitive call (anomaly mode, the profiler) registers an
``Observer`` with ``observe`` (at the end of this module); the core then switches
itself to the watched evaluation, and back when the last observer goes.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _fastpaths
from ..backends import namespace as _backend
from . import grad_mode as _gm
from .tensor import Tensor, _make, _Meta

# Levels are positive ints drawn from a counter that never repeats. ``LIN`` and
# ``AVAL`` sit above every real level so they always win the "highest level".
LIN = 1 << 60  # symbolic linear placeholder (reverse mode tracing a JVP rule)
AVAL = LIN + 1  # shape/dtype stand-in for a value a rule did not declare it reads

live: set[int] = set()  # live dual levels
known: set[int] = {LIN, AVAL}  # the levels apply accepts (live ones, LIN, AVAL): one lookup
stack: list[int] = []  # live levels, innermost last
batched: set[int] = set()  # live levels that carry batched tangents

_state = _gm.state
_inference = _gm.inference_threads  # nonzero: read _state.inference (see grad_mode)
_generic = np.generic
_ndarray = np.ndarray
_new = object.__new__

# Installed by dualad.reverse at import (the core does not import reverse).
hooks: dict[str, Callable[..., Any]] = {}
every: list[Primitive] = []  # every primitive made (what an ``Observer`` watches)


class Primitive:
    """A named operation with its implementation and its one derivative rule.

    Parameters
    ----------
    name : the primitive's name (``grad_fn`` shows ``<Name>Backward``).
    impl : ``impl(*arrays, **params) -> array`` (or tuple if ``multi``).
    jvp : ``jvp(primals, tangents, out, **params) -> tangent``; tangents may be
        ``None`` (symbolic zero); return ``None`` for a zero tangent.
    reads : per input, which of (input positions, ``"out"``) the JVP reads when
        that input's tangent is nonzero (invariant 6); a flat tuple applies to all.
        ``"out<k>"`` (``"out0"``): output k alone of a ``multi`` primitive (the rest are
        stand-ins of their shape and dtype in the rule's ``out``).
        ``"<k> if complex"``: input k, only when it is complex (a rule that reads a real
        input's dtype alone: sign, angle).
    linear : positions in which the primitive is linear (has a transpose rule).
    transpose : ``transpose(ct, args, **params) -> cotangent per argument`` (``None`` where
        an argument is not a placeholder): the adjoint for ``Re<a, b>`` of a linear
        primitive, given beside its definition in ``dualad.rules``.
    joint : linear jointly in ``linear`` (add); if False, in one at a time (multiply).
    batch : ``batch(arrays, nbs, **params) -> (out, nb)`` for leading batch axes.
    aval : ``aval(args, **params) -> (shape, dtype)`` without computing values.
    nondiff : results carry no derivative (comparisons, argmax, ...).
    view : the output may share memory with input 0 (shares its version counter).
    """

    __slots__ = (
        "name", "impl", "jvp", "transpose", "batch", "aval", "reads",
        "linear", "joint", "nondiff", "view", "multi", "fast", "boundary",
        "transposed", "arity", "hot",
    )

    # the fast paths a primitive may carry, by their family (see ``_fastpaths``): one that
    # is switched off is never set, so no call site needs to ask
    _FAST = {"hot": "hot", "fast": "fast", "transposed": "transpose"}

    def __setattr__(self, name: str, value: Any) -> None:
        family = Primitive._FAST.get(name)
        if family is not None and not _fastpaths.on(family):
            value = None
        object.__setattr__(self, name, value)

    def __init__(
        self,
        name: str,
        impl: Callable[..., Any],
        jvp: Callable[..., Any] | None = None,
        *,
        reads: Any = (),
        linear: tuple[int, ...] = (),
        joint: bool = True,
        batch: Callable[..., Any] | None = None,
        aval: Callable[..., Any] | None = None,
        nondiff: bool = False,
        view: bool = False,
        multi: bool = False,
        transpose: Callable[..., Any] | None = None,
    ) -> None:
        self.name = name
        self.impl = impl
        self.jvp = jvp
        self.transpose = transpose
        self.batch = batch
        self.aval = aval
        self.reads = reads
        self.linear = linear
        self.joint = joint
        self.nondiff = nondiff
        self.view = view
        self.multi = multi
        # optional array-level JVP (the same rule): fast(prim, args, level, params) -> out
        self.fast: Callable[..., Any] | None = None
        self.transposed: Callable[..., Any] | None = None  # its transpose on arrays, if known
        self.boundary = False  # changes the number of batch axes: always use ``batch``
        self.arity: int | None = None  # array arguments only, exactly this many (ufuncs)
        self.hot: Callable[..., Any] | None = None  # ``hot(prim, args)``: see apply
        every.append(self)

    def bad_call(self, args: Any, params: dict[str, Any]) -> None:
        """Raise for a call that breaks ``arity``: the wrong number of arrays, or keywords."""
        raise TypeError(
            f"{self.name} takes {self.arity} array argument(s) and no keywords "
            f"(got {len(args)} and {sorted(params)})"
        )

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


def apply(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Evaluate ``prim`` on ``args`` through levels, recording reverse nodes.

    This is also every primitive's ``__call__``, so calling one costs a single frame (a
    formula ufunc's call, and the operators, run its ``hot`` function's code directly
    and come here when it declines: ``fast.elementwise.variant``).
    """
    hot = prim.hot
    if hot is not None and not params:
        out = hot(prim, args)  # the common cases, generated for this primitive; else None
        if out is not None:
            return out
    if prim.arity is not None and (params or len(args) != prim.arity):
        return prim.bad_call(args, params)  # (raises, or writes a ufunc's out=)
    top = 0
    rg = False
    nb = 0
    for a in args:
        if a.__class__ is Tensor:
            lv = a._level
            if lv:
                if lv not in known:  # a level that exited
                    return apply(prim, *[strip(x) for x in args], **params)
                if lv > top:
                    top = lv
            if a._rg:
                rg = True
            if a._nb:
                nb = 1
        elif (a.__class__ is list or a.__class__ is tuple) and hooks["holds_tensor"](a):
            # a Python sequence holding Tensors, where NumPy takes an array-like: stacked
            # differentiably (NumPy's own conversion would drop the derivatives)
            return apply(prim, *[hooks["sequence"](x) for x in args], **params)
    if top and top < LIN and prim.fast is not None and (
            not rg or not _state.grad or not _state.tangent_grad):
        # the forward fast path: a dual level, and no tangent to record
        out = prim.fast(prim, args, top, params)  # the same rule on arrays; None: not here
        if out is not None:
            if rg and _state.grad:
                hooks["record"](prim, args, out, params)  # the primal alone
            elif _inference[0] and _state.inference:
                _mark_inference(out)
            elif rg:
                _mark_nograd(out)
            if prim.view:
                viewed(prim, args[0], out, params)
            return out
    if prim.nondiff:
        if top >= LIN:
            return hooks["linear"](prim, args, params)
        return _plain(prim, [a._data if a.__class__ is Tensor else a for a in args], params, nb, args)
    if not top:
        out = _plain(prim, args, params, nb, None)
    elif top >= LIN:
        return hooks["linear"](prim, args, params)
    else:  # (the fast path was tried above, where it may run)
        out = _dual(prim, args, params, top, True)
    if rg and _state.grad:
        hooks["record"](prim, args, out, params)
    elif _inference[0] and _state.inference:
        _mark_inference(out)
    elif rg:
        _mark_nograd(out)
    if prim.view:
        viewed(prim, args[0], out, params)
    return out


Primitive.__call__ = apply  # type: ignore[method-assign]


def _eval(prim: Primitive, args: Any, params: dict[str, Any]) -> Any:
    """``apply`` without recording: the primal half of a dual evaluation."""
    top = 0
    nb = 0
    for a in args:
        if a.__class__ is Tensor:
            if a._level > top:
                top = a._level
            if a._nb:
                nb = 1
    if top:
        return _dual(prim, args, params, top)
    return _plain(prim, args, params, nb, None)


def _plain(prim: Primitive, args: Any, params: dict[str, Any], nb: int, raw: Any) -> Any:
    if raw is None:
        arrays = [a._data if a.__class__ is Tensor else a for a in args]
    else:  # nondiff: args already stripped to arrays, ``raw`` keeps the Tensors for nb
        arrays, args = args, raw
    if nb or prim.boundary:
        if prim.batch is None:
            raise RuntimeError(
                f"dualad: {prim.name} received a batched tangent, but it has no batching rule; "
                "batched tangents flow through linear primitives only. Use batched=False "
                "(or a Python loop over tangents) for this computation."
            )
        nbs = [a._nb if a.__class__ is Tensor else 0 for a in args]
        out, onb = prim.batch(arrays, nbs, **params)
    else:
        try:
            out = prim.impl(*arrays, **params)
        except (ValueError, TypeError) as e:
            raise mismatch(prim, *arrays, e) if len(arrays) == 2 else devices(prim, arrays, e) \
                from None
        onb = 0
    if prim.multi:
        return tuple(_wrap(o, onb) for o in out)
    t = _wrap(out, onb)
    if prim.view and args[0].__class__ is Tensor:
        # (a view primitive may copy: an advanced index, a reshape the strides do not
        # allow; a copy has a counter of its own, so writing into it changes no saved
        # value. ``shares``, inlined for NumPy's arrays: this runs for every view)
        s = args[0]._data
        if out.__class__ is _ndarray and s.__class__ is _ndarray:
            ob = out.base
            if ob is not None and (ob is s or ob is s.base):
                t._vc = args[0]._version_counter()
        elif shares(out, s):
            t._vc = args[0]._version_counter()
    return t


def mismatch(prim: Primitive, a: Any, b: Any, e: Exception) -> Exception:
    """NumPy's error of a binary operation said clearly: broadcasting's (which operation,
    the shapes), or the TypeError of arrays on two devices (``devices``)."""
    if e.__class__ is not ValueError:
        return devices(prim, (a, b), e)
    if "broadcast" not in str(e):
        return e
    sa, sb = np.shape(a), np.shape(b)
    return ValueError(
        f"{prim.name}: operands could not be broadcast together: shapes {sa} and {sb} "
        "(broadcasting aligns trailing axes; each pair of sizes must be equal or one of them "
        "1). Reshape one operand, e.g. x[:, None], or check which arrays you combine."
    )


def devices(prim: Primitive, arrays: Any, e: Exception) -> Exception:
    """``e`` (a TypeError of ``prim`` on ``arrays``), or, where the arrays are on two
    devices (CuPy refuses a NumPy operand with a TypeError naming neither), the error that
    says so; or, for a complex input to a real-only ufunc, the error that says that."""
    if not isinstance(e, TypeError):
        return e
    if "not supported for the input types" in str(e):
        z = [a for a in arrays if np.iscomplexobj(a)]
        if z:
            hint = ("for the argument of a complex number use dualad.numpy.angle(z)"
                    if prim.name == "arctan2" else
                    "take dualad.numpy.real(z), .imag or dualad.numpy.abs(z) first")
            return TypeError(
                f"dualad.numpy.{prim.name} is real-only (NumPy's {prim.name} has no complex "
                f"loop), but it got a complex input of dtype {z[0].dtype}: {hint}.")
    if e.__class__ is TypeError:
        try:
            _backend.namespace(*arrays)
        except RuntimeError as err:
            return RuntimeError(f"{prim.name}: {err}")
    return e


def _wrap(out: Any, nb: int) -> Tensor:
    if out.__class__ is not _ndarray and isinstance(out, _generic):
        out = np.asarray(out)
    t = _new(Tensor)  # _make, inlined (hot path)
    t._data = out
    t._level = 0
    t._nb = nb
    t._rg = False
    t._node = None
    t._vc = None
    t._meta = None
    return t


def _dual(prim: Primitive, args: Any, params: dict[str, Any], L: int, tried: bool = False) -> Any:
    if not tried and prim.fast is not None and not (_inference[0] and _state.inference):
        r = prim.fast(prim, args, L, params)  # the same rule on arrays; None: not here
        if r is not None:
            return r
    primals = []
    tangents = []
    nonzero = False
    for a in args:
        if a.__class__ is Tensor and a._level == L:
            primals.append(a._primal)
            tangents.append(a._tangent)
            nonzero = True
        else:
            primals.append(a)
            tangents.append(None)
    out = _eval(prim, primals, params)
    if not nonzero:
        return out
    if _state.grad and _state.tangent_grad and any(
            p.__class__ is Tensor and p._rg for p in primals):
        # A rule may read ``out`` (exp, tanh, divide, inv, ...): the tangent it builds is a
        # function of the inputs through ``out``, so ``out`` must carry its own node before
        # the rule reads it, or reverse-over-forward would see a constant there.
        hooks["record"](prim, primals, out, params)
    if _state.tangent_grad or not _state.grad:
        t = prim.jvp(primals, tangents, out, **params)
    else:  # the primal is recorded (by apply), its tangent not
        _state.grad = False
        try:
            t = prim.jvp(primals, tangents, out, **params)
        finally:
            _state.grad = True
    if prim.multi:
        return tuple(o if ti is None else dual(L, o, ti) for o, ti in zip(out, t, strict=True))
    return out if t is None else dual(L, out, t)


_dual_plain = _dual  # (what ``_dual`` is while no observer checks duals: see ``observe``)


def _dual_checked(prim: Primitive, args: Any, params: dict[str, Any], L: int,
                  tried: bool = False) -> Any:
    """``_dual`` while an observer checks duals: the same evaluation, then each check."""
    out = _dual_plain(prim, args, params, L, tried)
    for check in _checks:
        check(prim, args, params, L, out)
    return out


def dual(L: int, primal: Tensor, tangent: Tensor) -> Tensor:
    """Wrap (primal, tangent) as a Tensor that is dual at level ``L``."""
    d = _make(primal._data)
    d._level = L
    d._p = primal
    d._t = tangent
    d._nb = primal._nb
    d._rg = primal._rg
    if primal._node is not None:
        d._node = primal._node
        d._out_nr = primal._out_nr
    d._vc = primal._vc
    return d


def innermost(t: Tensor) -> Tensor:
    while t._level and t._level < LIN:
        t = t._primal
    return t


def strip(x: Any) -> Any:
    """Drop the dual parts of ``x`` whose levels have exited."""
    if x.__class__ is not Tensor or not x._level or x._level >= LIN:
        return x
    p = strip(x._primal)
    if x._level not in live:
        return p
    return dual(x._level, p, strip(x._tangent)) if p is not x._primal else x


def split(x: Any, L: int) -> tuple[Any, Any]:
    """(primal, tangent-or-None) of ``x`` at level ``L``, for any nesting of levels."""
    if x.__class__ is not Tensor or x._level < L or x._level >= LIN:
        return x, None
    if x._level == L:
        return x._primal, x._tangent
    # Dual at an inner level M > L: both parts at M carry their own L-components.
    p, tp = split(x._primal, L)
    q, tq = split(x._tangent, L)
    if tp is None and tq is None:
        return x, None
    from ..rules.vocabulary import zeros_like_tangent

    tp = zeros_like_tangent(p, tq) if tp is None else tp
    tq = zeros_like_tangent(q, tp) if tq is None else tq
    return dual(x._level, p, q), dual(x._level, tp, tq)


def viewed(prim: Primitive, src: Any, out: Tensor, params: dict[str, Any]) -> None:
    """Note that ``out = prim(src, **params)`` is a view of ``src`` if it shares its memory.

    The view keeps the root of its chain of views and the steps from there (a view of a
    view has the first one's base), and the root a weak reference to it: writing into the
    view later rebases the root's history and regenerates its other views
    (``dualad.rules.inplace``). Batched tangents handed across the batch boundary are not
    views a user can write into.
    """
    if src.__class__ is not Tensor or out._nb or prim.boundary:
        return
    o, s = out._data, src._data
    ob = o.base if o.__class__ is _ndarray else getattr(o, "base", None)
    if ob is None:  # (a copy owns its memory; ``shares``, inlined: this runs for every view)
        return
    sb = s.base if s.__class__ is _ndarray else getattr(s, "base", None)
    if ob is not (s if sb is None else sb):  # (NumPy's base is the owner of the memory)
        return
    register_view(prim, src, out, params)


def shares(o: Any, s: Any) -> bool:
    """Whether the array ``o``, made from ``s`` by a view primitive, is a view of ``s``'s
    memory (a copy owns its memory; NumPy's ``base`` is the owner of the memory)."""
    ob = o.base if o.__class__ is _ndarray else getattr(o, "base", None)
    if ob is None:
        return False
    sb = s.base if s.__class__ is _ndarray else getattr(s, "base", None)
    return ob is (s if sb is None else sb)


def register_view(prim: Any, src: Tensor, out: Tensor, params: dict[str, Any]) -> None:
    """Record ``out`` (sharing ``src``'s memory) as the view ``prim(src, **params)``."""
    m = src._meta
    if m is not None and m.base is not None:
        root, fns, nograd = m.base, m.fns + ((prim, params),), m.nograd
    else:
        root, fns, nograd = src, ((prim, params),), False
        if m is None:
            m = src._meta = _Meta()
    om = out._meta
    if om is None:
        om = out._meta = _Meta()
    om.base, om.fns = root, fns
    out._vc = src._version_counter()  # (one memory, one counter)
    om.nograd = nograd or (src._rg and not _state.grad)
    rm = m if root is src else root._meta
    views = rm.views
    if views is None:
        rm.views = [weakref.ref(out)]
        return
    views.append(weakref.ref(out))
    if len(views) >= 64 and not len(views) & (len(views) - 1):  # (at powers of two: prune)
        rm.views = [r for r in views if r() is not None]


def _mark_nograd(out: Any) -> None:
    """Remember that ``out`` was made while grad mode was off from an input that requires
    grad (``Tensor._why``), so that backward's error on it can say why it has no grad_fn."""
    for o in out if out.__class__ is tuple else (out,):
        if o.__class__ is Tensor:
            o._why = "no_grad"


def _mark_inference(out: Any) -> None:
    for o in out if isinstance(out, tuple) else (out,):
        o._meta_().inference = True


# -- Observers: the one way a tool watches the primitives -------------------------------------
#
# Anomaly mode and the profiler watch every primitive without replacing a function of the
# core: each registers an ``Observer`` with ``observe``, and the core switches itself to the
# watched evaluation when the first one comes and back when the last one goes. The switch
# happens there, not per call: with no observer (the usual case) ``apply`` runs the same
# code, and does the same work, as if observers did not exist.


class Observer:
    """What a tool registers with :func:`observe` to watch every primitive call.

    Parameters
    ----------
    wrap_impl : ``wrap_impl(prim, impl) -> impl``: the implementation evaluated in place
        of ``prim.impl`` while the observer is registered, wherever the primitive is
        evaluated (the general path and the generated code of the fast paths alike). The
        profiler times each evaluation this way.
    check_dual : ``check_dual(prim, args, params, level, out)``, called after every
        evaluation at a dual level with its result (anomaly mode's NaN check of the
        tangents). While one is registered the forward fast paths stand aside: they
        compute tangents on arrays, where no check would see them.
    traced : whether recorded nodes keep the traceback of the forward call that made them
        (anomaly mode): recording goes through the reverse layer's ``record_traced``.
    """

    __slots__ = ("wrap_impl", "check_dual", "traced")

    def __init__(self, wrap_impl: Callable[..., Any] | None = None,
                 check_dual: Callable[..., Any] | None = None, traced: bool = False) -> None:
        self.wrap_impl = wrap_impl
        self.check_dual = check_dual
        self.traced = traced


observers: list[Observer] = []  # registered, in order (each wrap_impl wraps the ones before)
_checks: list[Callable[..., Any]] = []  # their check_dual, read by ``_dual_checked``
_unwrapped: dict[Primitive, Callable[..., Any]] = {}  # prim -> its impl, while wrapped
_suspended: dict[Primitive, Callable[..., Any]] = {}  # prim -> its forward fast path
_observing = threading.Lock()


def observe(obs: Observer) -> None:
    """Register ``obs``: from now on every primitive call is watched as it asks."""
    with _observing:
        observers.append(obs)
        _watch()


def unobserve(obs: Observer) -> None:
    """Unregister ``obs`` (registered with :func:`observe`); with the last one gone,
    every primitive is evaluated exactly as before the first came."""
    with _observing:
        observers.remove(obs)
        _watch()


def _watch() -> None:
    """Put the core in the state ``observers`` asks for."""
    global _dual
    _checks[:] = [o.check_dual for o in observers if o.check_dual is not None]
    _dual = _dual_checked if _checks else _dual_plain  # (``apply`` and ``_eval`` call it)
    if "record_traced" in hooks:  # (reverse mode installed: ``dualad`` imports it)
        traced = any(o.traced for o in observers)
        hooks["record"] = hooks["record_traced" if traced else "record_plain"]
    if _checks and not _suspended:
        for p in every:  # (the hot paths take only flat duals, which only these make)
            if p.fast is not None:
                _suspended[p] = p.fast
                p.fast = None
    elif not _checks:
        for p, fast in _suspended.items():
            p.fast = fast
        _suspended.clear()
    for p, impl in _unwrapped.items():
        _bind_impl(p, impl)
    _unwrapped.clear()
    wraps = [o.wrap_impl for o in observers if o.wrap_impl is not None]
    if wraps:
        for p in every:
            impl = _unwrapped[p] = p.impl
            for wrap in wraps:
                impl = wrap(p, impl)
            _bind_impl(p, impl)


def _bind_impl(p: Primitive, impl: Callable[..., Any]) -> None:
    """Make ``impl`` what evaluates ``p``: its ``impl``, and the same name in the namespace
    of its generated hot function, which binds it there (shared by its variants)."""
    old = p.impl
    p.impl = impl
    hot = p.hot
    if hot is not None and hot.__globals__.get("impl") is old:
        hot.__globals__["impl"] = impl
