"""The one dispatch path: every operation on Tensors reaches ``apply``.

``apply(prim, *args, **params)`` offers the call to the fast layer's slots first
(``docs/fast.md``), then hands it to the interpreter of the innermost level among its
arguments (``levels.interpreters``): ``Evaluate`` at level 0, a ``DualLevel`` for each
live dual level, reverse mode's linearization for ``LIN``/``AVAL``. A result that is a
value is recorded for reverse mode by the installed ``Recorder`` when an input requires
grad and grad mode is on. docs/architecture.md, "Interpreters", tells the whole story
and how a new transformation plugs in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends import namespace as _backend
from ..backends.errors import devices, mismatch  # noqa: F401  (D.mismatch: the fast layer)
from . import grad_mode as _gm
from . import levels
from .levels import AVAL, LIN, Interpreter, batched, live, stack  # noqa: F401  (D.LIN, ...)
from .tensor import Tensor, _make, dual, innermost  # noqa: F401  (D.dual, D.innermost)
from .views import register_view, shares, viewed  # noqa: F401  (D.register_view, ...)

_state = _gm.state
_inference = _gm.inference_threads  # nonzero: read _state.inference (see grad_mode)
_interpreters = levels.interpreters
_duals = levels.duals
_generic = np.generic
_ndarray = np.ndarray

every: list[Primitive] = []  # every primitive made (what an ``Observer`` watches)


# -- the slots the layers above fill ------------------------------------------------------


class Recorder:
    """How reverse mode records: the one slot through which the core reaches it.

    The reverse layer installs its recorder with :func:`install_recorder`
    (``dualad.reverse.graph``); until then this default records nothing, so the core
    runs without reverse mode.

    Methods
    -------
    record(prim, args, out, params)
        Attach a node to ``out = prim(*args, **params)``: ``apply`` calls it when an
        input requires grad and grad mode is on (a dual level calls it for the primal it
        computed, before the JVP rule reads it).
    record_traced(prim, args, out, params)
        ``record``, and the node keeps the traceback of the forward call; used in its
        place while an observer asks for it (anomaly mode: ``dualad.observe``).
    edge_of(t)
        The (node, output index) the gradient of ``t`` flows into (a leaf's
        accumulator, made on first use).
    keeps_index(node)
        Note that ``node`` (a user's ``x[key]``) may release its index arrays after
        backward.
    """

    __slots__ = ()

    def record(self, prim: Any, args: Any, out: Any, params: dict[str, Any]) -> None:
        return None

    def record_traced(self, prim: Any, args: Any, out: Any, params: dict[str, Any]) -> None:
        return self.record(prim, args, out, params)

    def edge_of(self, t: Tensor) -> tuple[Any, int]:
        raise RuntimeError("dualad: reverse mode is not installed (import dualad)")

    def keeps_index(self, node: Any) -> None:
        return None


recorder = Recorder()  # the installed recorder
record = recorder.record  # what apply calls: ``recorder.record``, or its traced form
_traced = False  # whether an observer asks for traced nodes
_checks: list[Callable[..., Any]] = []  # the observers' ``check_dual``, run by DualLevel


def install_recorder(rec: Recorder) -> None:
    """Make ``rec`` the recorder of reverse mode (the reverse layer calls it once)."""
    global recorder, record
    recorder = rec
    record = rec.record_traced if _traced else rec.record


def watch(checks: list[Callable[..., Any]], traced: bool) -> None:
    """Put the evaluation in the state the observers ask for (``dualad.observe``): each of
    ``checks`` runs after every evaluation at a dual level; ``traced``: nodes keep the
    forward traceback."""
    global _traced
    _checks[:] = checks
    _traced = traced
    install_recorder(recorder)


def _no_sequence(a: Any) -> bool:
    return False


_holds_tensor: Callable[[Any], bool] = _no_sequence
_as_argument: Callable[[Any], Any] = _no_sequence


def install_sequences(holds_tensor: Callable[[Any], bool], as_argument: Callable[[Any], Any]
                      ) -> None:
    """How ``apply`` takes a Python list or tuple holding Tensors where NumPy takes an
    array-like: ``holds_tensor(a)`` tells one, and then every argument becomes
    ``as_argument(a)`` (a sequence stacked differentiably: NumPy's own conversion would
    drop the derivatives). Filled by ``rules.vocabulary``; without it, no sequence
    holds a Tensor."""
    global _holds_tensor, _as_argument
    _holds_tensor, _as_argument = holds_tensor, as_argument


# -- apply -----------------------------------------------------------------------------------


def apply(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Evaluate ``prim`` on ``args`` by the interpreter of their innermost level; record
    the result for reverse mode.

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
                if lv not in _interpreters:  # a level that exited
                    return apply(prim, *[strip(x) for x in args], **params)
                if lv > top:
                    top = lv
            if a._requires_grad:
                rg = True
            if a._batch_ndim:
                nb = 1
        elif (a.__class__ is list or a.__class__ is tuple) and _holds_tensor(a):
            return apply(prim, *[_as_argument(x) for x in args], **params)
    if top:
        if top in _duals and prim.fast is not None and (
                not rg or not _state.grad or not _state.tangent_grad):
            # the forward fast path: a dual level, and no tangent to record
            out = prim.fast(prim, args, top, params)  # the same rule on arrays; None: not here
            if out is not None:
                if rg and _state.grad:
                    record(prim, args, out, params)  # the primal alone
                elif _inference[0] and _state.inference:
                    _mark_inference(out)
                elif rg:
                    _mark_nograd(out)
                if prim.view:
                    viewed(prim, args[0], out, params)
                return out
        if prim.nondiff and top < LIN:  # no derivative: the innermost arrays, at any level
            return _plain(prim, [a._data if a.__class__ is Tensor else a for a in args],
                          params, nb, args)
        interpreter = _interpreters[top]
        out = interpreter.process(prim, args, params)
        if interpreter.symbolic:
            return out
    elif prim.nondiff:
        return _plain(prim, [a._data if a.__class__ is Tensor else a for a in args], params,
                      nb, args)
    else:  # level 0 (Evaluate's ``process``, called directly: the most common case)
        out = _plain(prim, args, params, nb, None)
    if rg and _state.grad:
        record(prim, args, out, params)
    elif _inference[0] and _state.inference:
        _mark_inference(out)
    elif rg:
        _mark_nograd(out)
    if prim.view:
        viewed(prim, args[0], out, params)
    return out


def _eval(prim: Primitive, args: Any, params: dict[str, Any]) -> Any:
    """``apply`` without recording: the primal half of a dual evaluation."""
    top = 0
    nb = 0
    for a in args:
        if a.__class__ is Tensor:
            if a._level > top:
                top = a._level
            if a._batch_ndim:
                nb = 1
    if not top:
        return _plain(prim, args, params, nb, None)
    if top in _duals and prim.fast is not None and not (_inference[0] and _state.inference):
        out = prim.fast(prim, args, top, params)  # the same rule on arrays; None: not here
        if out is not None:
            return out
    interpreter = _interpreters.get(top)
    if interpreter is None:  # (the part of a level that exited: its primal alone)
        return _eval(prim, [strip(x) for x in args], params)
    return interpreter.process(prim, args, params)


# -- level 0: plain evaluation ------------------------------------------------------------


class Evaluate(Interpreter):
    """Level 0: the primitive's implementation on the arrays (batched tangents through its
    batching rule). ``apply`` calls ``_plain`` directly for it, saving a frame."""

    __slots__ = ()

    def process(self, prim: Primitive, args: Any, params: dict[str, Any]) -> Any:
        nb = any(a.__class__ is Tensor and a._batch_ndim for a in args)
        return _plain(prim, args, params, nb, None)


levels.register(0, Evaluate())


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
        nbs = [a._batch_ndim if a.__class__ is Tensor else 0 for a in args]
        try:
            out, onb = prim.batch(arrays, nbs, **params)
        except TypeError as e:
            conv = _backend.host_scalars(arrays, e)
            if conv is None:
                raise
            out, onb = prim.batch(conv, nbs, **params)
    else:
        try:
            out = prim.impl(*arrays, **params)
        except (ValueError, TypeError) as e:
            conv = _backend.host_scalars(arrays, e)
            if conv is None:
                raise mismatch(prim, *arrays, e) if len(arrays) == 2 else \
                    devices(prim, arrays, e) from None
            out = prim.impl(*conv, **params)
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
                t._version_cell = args[0]._version_counter()
        elif shares(out, s):
            t._version_cell = args[0]._version_counter()
    return t


def _wrap(out: Any, nb: int) -> Tensor:
    if out.__class__ is not _ndarray and isinstance(out, _generic):
        out = np.asarray(out)
    return _make(out, nb)


# -- dual levels: forward mode ------------------------------------------------------------


class DualLevel(Interpreter):
    """Forward mode at one dual level: a value and its tangent, each dual only below it.

    Made when the level is entered (``forward_ad.enter_dual_level``). A call splits each
    input at the level into (primal, tangent), computes the primal output by ``_eval``
    (which hands lower levels to their interpreters), and the tangent by ``prim.jvp``,
    whose ops are ordinary ops, so lower levels and reverse recording apply to them.
    """

    __slots__ = ("level",)

    def __init__(self, level: int) -> None:
        self.level = level

    def process(self, prim: Primitive, args: Any, params: dict[str, Any]) -> Any:
        L = self.level
        primals, tangents = parts_at(L, args)
        out = _eval(prim, primals, params)
        if _state.grad and _state.tangent_grad and any(
                p.__class__ is Tensor and p._requires_grad for p in primals):
            # A rule may read ``out`` (exp, tanh, divide, inv, ...): the tangent it builds is
            # a function of the inputs through ``out``, so ``out`` must carry its own node
            # before the rule reads it, or reverse-over-forward would see a constant there.
            record(prim, primals, out, params)
        if _state.tangent_grad or not _state.grad:
            t = prim.jvp(primals, tangents, out, **params)
        else:  # the primal is recorded (by apply), its tangent not
            _state.grad = False
            try:
                t = prim.jvp(primals, tangents, out, **params)
            finally:
                _state.grad = True
        if prim.multi:
            out = tuple(o if ti is None else dual(L, o, ti)
                        for o, ti in zip(out, t, strict=True))
        elif t is not None:
            out = dual(L, out, t)
        for check in _checks:  # (an observer's: anomaly mode's NaN check of the tangents)
            check(prim, args, params, L, out)
        return out


def parts_at(L: int, args: Any) -> tuple[list[Any], list[Any]]:
    """The arguments' primals and second parts at level ``L`` (None for an argument that is
    not dual there: a constant at this level), as an interpreter of ``L`` reads them."""
    primals, seconds = [], []
    for a in args:
        if a.__class__ is Tensor and a._level == L:
            primals.append(a._primal)
            seconds.append(a._tangent)
        else:
            primals.append(a)
            seconds.append(None)
    return primals, seconds


def strip(x: Any) -> Any:
    """Drop the dual parts of ``x`` whose levels have exited."""
    if x.__class__ is not Tensor or not x._level or x._level >= LIN:
        return x
    p = strip(x._primal)
    if x._level not in live:
        return p
    if p is x._primal:
        return x
    second = x._tangent  # (a jet's: its list of coefficients)
    return dual(x._level, p, [strip(c) for c in second] if second.__class__ is list
                else strip(second))


def split(x: Any, L: int) -> tuple[Any, Any]:
    """(primal, second part or None) of ``x`` at level ``L``, for any nesting of levels.

    The second part is a dual level's tangent, or a jet level's list of Taylor coefficients
    (``dualad.taylor``); this is the one place that knows both shapes of a level's parts.
    """
    if x.__class__ is not Tensor or x._level < L or x._level >= LIN:
        return x, None
    if x._level == L:
        return x._primal, x._tangent
    # Dual (or a jet) at an inner level M > L: each part at M carries its own L-components.
    M = x._level
    second = x._tangent
    jet_m = second.__class__ is list
    parts = [x._primal, *second] if jet_m else [x._primal, second]
    halves = [split(q, L) for q in parts]
    like = next((s for _, s in halves if s is not None), None)
    if like is None:
        return x, None
    seconds = [s if s is not None else _zero_part(p, like) for p, s in halves]

    def pack(items: list[Any]) -> Tensor:
        return dual(M, items[0], list(items[1:]) if jet_m else items[1])

    primal = pack([p for p, _ in halves])
    if like.__class__ is list:  # L is a jet level: one M-structure per coefficient at L
        n = max(len(s) for s in seconds)
        seconds = [s + [zeros_tangent(p.shape, p.dtype, s[0] if s else like[0])
                        for _ in range(n - len(s))] for (p, _), s in zip(halves, seconds, strict=True)]
        return primal, [pack([s[i] for s in seconds]) for i in range(n)]
    return primal, pack(seconds)


def _zero_part(p: Tensor, like: Any) -> Any:
    """A zero second part for a value ``p`` at the level of ``like`` (a tangent, or a jet's
    list of coefficients)."""
    if like.__class__ is list:
        return [zeros_tangent(p.shape, p.dtype, c) for c in like]
    return zeros_tangent(p.shape, p.dtype, like)


def zeros_tangent(shape: tuple[int, ...], dtype: Any, like: Tensor) -> Tensor:
    """Zeros of ``shape`` with ``like``'s batch axes, on its device: a zero tangent."""
    d = like._data
    z = _make(_backend.zeros(d.shape[: like._batch_ndim] + shape, dtype=dtype, like=_backend.like(d)))
    z._batch_ndim = like._batch_ndim
    return z


def _mark_nograd(out: Any) -> None:
    """Remember that ``out`` was made while grad mode was off from an input that requires
    grad (``Tensor._why``), so that backward's error on it can say why it has no grad_fn."""
    for o in out if out.__class__ is tuple else (out,):
        if o.__class__ is Tensor:
            o._why = "no_grad"


def _mark_inference(out: Any) -> None:
    for o in out if isinstance(out, tuple) else (out,):
        o._meta_().inference = True


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
    taylor : ``taylor(*series, **params) -> series`` (a tuple of series if ``multi``), a
        series the list ``[x_0, ..., x_K]`` of unscaled Taylor coefficients: Taylor mode's
        rule (``dualad.taylor``), filled by ``dualad.rules.taylor.register``; empty, the
        generic rule of a linear or multilinear primitive applies, else the call raises.

    A new transformation adds its rule slot here (Taylor mode's ``taylor``) and an
    interpreter that reads it (docs/architecture.md, "Interpreters").
    """

    __slots__ = (
        "name", "impl", "jvp", "transpose", "batch", "aval", "reads",
        "linear", "joint", "nondiff", "view", "multi", "fast", "boundary",
        "transposed", "arity", "hot", "taylor",
    )

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
        # the fast layer's slots (docs/fast.md), empty without it: filled only for the
        # families switched on, so no call site asks whether a family is on
        self.fast: Callable[..., Any] | None = None  # fast(prim, args, level, params): a JVP
        self.transposed: Callable[..., Any] | None = None  # its transpose on arrays
        self.boundary = False  # changes the number of batch axes: always use ``batch``
        self.arity: int | None = None  # array arguments only, exactly this many (ufuncs)
        self.hot: Callable[..., Any] | None = None  # ``hot(prim, args)``: see apply
        self.taylor: Callable[..., Any] | None = None  # Taylor mode's rule (see above)
        every.append(self)

    __call__ = apply  # (calling a primitive costs one frame: apply's)

    def bad_call(self, args: Any, params: dict[str, Any]) -> None:
        """Raise for a call that breaks ``arity``: the wrong number of arrays, or keywords."""
        raise TypeError(
            f"{self.name} takes {self.arity} array argument(s) and no keywords "
            f"(got {len(args)} and {sorted(params)})"
        )

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"
