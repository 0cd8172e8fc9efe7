"""User-defined derivative rules: ``dualad.Function``, as torch.autograd.Function.

A Function's ``forward`` runs on plain tensors (no levels, no recording). Its
``jvp`` drives forward mode; its ``backward`` (alias ``vjp``) drives reverse
mode — the one place a reverse rule is written by hand, and honoured as given.
A Function with only ``jvp`` gets reverse mode by transposing that jvp, which
must then be linear in the tangents (the error names the operation if not).

The other way round, a Function with only ``backward`` gets forward mode by
transposing that backward, which is linear in its grad_outputs: it is run on
symbolic grad_outputs, recording a linear program, and the program's transpose
maps the input tangents to the output tangents (``_tangents_by_backward``).

Either rule works at every dual level, as a primitive's does (``_forward_by_levels``):
it runs once per live level, innermost first, on the values of that level (the
inputs' primals there and the outputs made dual at the levels below), so lower
levels and reverse recording differentiate its coefficients. Where a second
derivative differentiates a rule (forward-over-forward, reverse-over-forward; or
the backward or the transposed jvp: ``_attributes_at``), what it reads is the input
or the output itself, and an intermediate of forward raises by name when its
derivative is needed.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import warnings
from typing import Any

import numpy as np

from . import taylor as _taylor
from .backends import namespace as _B
from .backends.namespace import as_array as _as_array
from .backends.namespace import like as _like
from .core import dispatch as D
from .core import grad_mode as gm
from .core import levels
from .core.tensor import Tensor, _make
from .reverse.graph import FunctionNode, Node, SavedValue, _set_node, edge_of, new_node
from .reverse.linearize import is_lin, linearize, placeholder, transpose_program
from .rules import inplace


class FunctionCtx:
    """The ``ctx`` passed to ``forward``/``setup_context``, ``backward`` and ``jvp``.

    Examples
    --------
    >>> class Square(dualad.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)  # ctx: a FunctionCtx
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g if ctx.needs_input_grad[0] else None
    >>> x = dualad.tensor(3.0, requires_grad=True)
    >>> Square.apply(x).backward(); x.grad
    tensor(6.)
    """

    def __init__(self) -> None:
        self.to_save: tuple[Any, ...] = ()
        self.saved_for_forward: tuple[Any, ...] = ()
        self.dirty: tuple[Any, ...] = ()
        self.non_differentiable: tuple[Any, ...] = ()
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._saved: list[Any] | None = None
        self._node: Any = None
        self._jvp = False
        self._lin_saved: tuple[Any, ...] | None = None  # see _tangents_by_jvp, _tangents_by_backward
        # attributes withheld while a rule runs: name -> (value, why reading it raises)
        self._unreadable: dict[str, tuple[Any, str]] | None = None  # (_replace_attributes)

    def __getattr__(self, name: str) -> Any:
        # (only for an attribute not found: one withheld while a rule runs, whose
        # derivative is needed and unknown, raises saying so)
        withheld = self.__dict__.get("_unreadable")
        if withheld and name in withheld:
            raise RuntimeError(withheld[name][1])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def save_for_backward(self, *tensors: Any) -> None:
        """Save tensors (inputs, outputs or intermediates) for ``backward``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Save tensors for ``jvp``; read them back as ``ctx.saved_for_forward``... or attributes."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Declare inputs modified in place by ``forward``."""
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Declare outputs that carry no derivative (indices, masks)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zeros (True, the default) or ``None`` for an output
        that got no gradient: one not used, or one whose gradient a custom backward further
        down gave as None (``backward`` is still called then, as in torch)."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._lin_saved is not None:  # backward run for forward mode: values of a level
            return self._lin_saved
        if self._jvp:  # in jvp: what save_for_forward saved
            return tuple(self.saved_for_forward)
        if self._saved is None:  # in forward: what was saved, for backward or for forward
            return tuple(self.to_save) or tuple(self.saved_for_forward)
        node = self._node
        if node.saved is None:
            node._unpack()  # raises torch's "backward through the graph a second time"
        return tuple(None if s is None else (s if not isinstance(s, SavedValue)
                                             else s.get(node, "saved tensor"))
                     for s in node.saved.get("tensors", ()))

    @property
    def saved_variables(self) -> tuple[Any, ...]:
        """Deprecated: ``saved_tensors``."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'",
                      DeprecationWarning, stacklevel=2)
        return self.saved_tensors


class _FunctionMeta(type):
    def __init__(cls, name: str, bases: Any, ns: dict[str, Any]) -> None:
        super().__init__(name, bases, ns)
        cls._prim = D.Primitive(name, _never)  # type: ignore[attr-defined]
        f = ns.get("forward")
        if bases and isinstance(f, staticmethod) and not cls._has("setup_context"):
            cls.forward = staticmethod(_forward_of(cls, f.__func__))  # type: ignore[assignment]


def _forward_of(cls: Any, f: Any) -> Any:
    """The user's ``forward(ctx, ...)``, saying to call ``apply`` when it is called directly
    (Python's own error would be a missing positional argument)."""

    sig = inspect.signature(f)

    @functools.wraps(f)
    def forward(*args: Any, **kwargs: Any) -> Any:
        if not (args and isinstance(args[0], FunctionCtx)):
            try:
                sig.bind(*args, **kwargs)
            except TypeError:
                raise TypeError(
                    f"{cls.__name__}.forward was called directly; call "
                    f"{cls.__name__}.apply(...) instead, which makes the ctx and records the "
                    "operation for backward"
                ) from None
        return f(*args, **kwargs)

    return forward


def _never(*a: Any, **k: Any) -> Any:
    raise RuntimeError("internal: a Function's primitive is never evaluated directly")


class Function(metaclass=_FunctionMeta):
    """Base class for custom differentiable operations (torch.autograd.Function).

    Examples
    --------
    >>> class Cube(dualad.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 3 * x ** 2
    >>> x = dualad.tensor(2.0, requires_grad=True)
    >>> Cube.apply(x).backward(); x.grad
    tensor(12.)

    With no ``jvp``, forward mode transposes ``backward`` (linear in ``g``):

    >>> dualad.functional.jvp(Cube.apply, dualad.tensor(2.0), dualad.tensor(1.0))[1]
    tensor(12.)
    """

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not overridden.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            f"static, so you should invoke them on the class itself: "
            f"{type(self).__name__}.apply(...)", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated and not "
            f"supported; define forward/backward as @staticmethods and call "
            f"{type(self).__name__}.apply(...)"
        )

    @staticmethod
    def jvp(ctx: FunctionCtx, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def _has(cls, name: str) -> bool:
        f = getattr(cls, name)
        if name == "backward":
            return f is not Function.backward or cls.vjp is not Function.vjp
        return f is not getattr(Function, name)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if cls.backward is not Function.backward and cls.vjp is not Function.vjp and \
                cls.vjp is not cls.backward:
            raise RuntimeError(
                f"Implementing both 'backward' and 'vjp' for a custom Function is not allowed "
                f"({cls.__name__}); implement only one of them"
            )
        ctx = FunctionCtx()
        live = [D.strip(a) if isinstance(a, Tensor) else a for a in args]
        L = max((a._level for a in live if isinstance(a, Tensor) and a._level < D.LIN),
                default=0)
        by_backward = not cls._has("jvp") and cls._has("backward")
        plain: list[Any] = []
        back: dict[int, Any] = {}
        for a in live:
            if isinstance(a, Tensor):
                p = D.innermost(a).detach()
                back[id(p)] = a
                plain.append(p)
            else:
                plain.append(a)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in live)
        with gm.no_grad():
            if cls._has("setup_context"):
                out = cls.forward(*plain, **kwargs)
                cls.setup_context(ctx, tuple(plain), out)
            else:
                out = cls.forward(ctx, *plain, **kwargs)
        if any(id(t) not in back for t in ctx.dirty):
            warnings.warn("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor "
                          "is not an input, there is no need to pass it to mark_dirty().",
                          stacklevel=2)
        single = not isinstance(out, tuple)
        # arrays become Tensors; None and other objects come back as they are
        outs = [o if isinstance(o, Tensor) or not hasattr(o, "dtype") else _make(_as_array(o))
                for o in ((out,) if single else out)]
        marked = {id(t) for t in ctx.non_differentiable}
        nd = [id(o) in marked for o in outs]  # (by position: an input returned is replaced)
        dirty = _dirty(cls, ctx, back, outs)  # output position -> the input it modified
        outs = [_view_of(o) if id(o) in back else o for o in outs]  # an input returned as is
        nondiff = {id(o) for o, n in zip(outs, nd, strict=True) if n}
        # forward mode, after recording: the output tangents at each live level, innermost
        # first, by the user's jvp or by its transposed backward (see _forward_by_levels)
        if L and not by_backward and not cls._has("jvp") and getattr(cls, "taylor", None) is None:
            raise RuntimeError(
                f"{cls.__name__} implements neither jvp nor backward, so it cannot be "
                "used with forward-mode AD; define a staticmethod jvp(ctx, *tangents) "
                "(or backward(ctx, *grad_outputs), which forward mode transposes)"
            )
        late = bool(L)
        if gm.state.grad and any(ctx.needs_input_grad):
            _record(cls, ctx, live, plain, back, outs, nondiff, dirty, late)
        if late:
            outs = _forward_by_levels(cls, ctx, live, plain, outs, nondiff, dirty,
                                      _tangents_by_backward if by_backward else
                                      _tangents_by_jvp)
        for k, a in dirty.items():  # the modified input is the output: its history and
            inplace.commit(a, outs[k])  # tangent rebased onto this Function's
            outs[k] = a
        if dirty and ctx._node is not None:
            _dirty_saved(ctx, outs)
        return outs[0] if single else tuple(outs)


def _dirty(cls: Any, ctx: FunctionCtx, back: dict[int, Any], outs: list[Tensor]) -> dict[int, Any]:
    """The outputs that are inputs ``forward`` marked dirty (``ctx.mark_dirty``): output
    position -> the input as the caller gave it. Raise torch's errors for a dirty input
    not returned, and for one that is a leaf requiring grad (or a view of one)."""
    marked = {id(t) for t in ctx.dirty if id(t) in back}  # (another one: warned of above)
    if not marked:
        return {}
    returned = {id(o) for o in outs}
    if not marked <= returned:
        raise RuntimeError(
            f"{cls.__name__}.forward: some elements marked as dirty during the forward "
            "method were not returned as output: an input modified in place must be "
            "returned (the modified input is the output)"
        )
    dirty = {k: back[id(o)] for k, o in enumerate(outs) if id(o) in marked}
    for a in dirty.values():
        m = a._meta
        inplace.check(a, m.base if m is not None else None)
    return dirty


def _view_of(t: Tensor) -> Tensor:
    """A new Tensor of ``t``'s data, as a view: it shares ``t``'s version counter."""
    u = _make(t._data)
    u._version_cell = t._version_counter()
    return u


def _like_of(*groups: Any) -> Any:
    """``like=`` for arrays of the kind of the first Tensor in ``groups`` that is not
    NumPy's (a Dask or CuPy one), else None (NumPy)."""
    for ts in groups:
        for t in ts:
            if isinstance(t, Tensor) and t._data.__class__ is not np.ndarray:
                return _like(t._data)
    return None


def _zeros_like(p: Tensor) -> Tensor:
    return _make(np.zeros_like(p._data))


def _record(cls: Any, ctx: FunctionCtx, live: list[Any], plain: list[Any], back: dict[int, Any],
            outs: list[Tensor], nondiff: set[int], dirty: dict[int, Any],
            late: bool = False) -> None:
    edges = [edge_of(a) if isinstance(a, Tensor) and a._requires_grad else None for a in live]
    # (made after the input edges: a larger seq than its inputs' nodes)
    node = new_node(cls._prim, {}, FunctionNode)
    node.edges = edges
    node.avals = [(p.shape, p.dtype) if isinstance(p, Tensor) else ((), np.asarray(p).dtype)
                  for p in plain]
    node.out_avals = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outs]
    node.consts = list(live)
    node.saved = {}
    out_ids = {id(D.innermost(o)): k for k, o in enumerate(outs) if isinstance(o, Tensor)}
    saved: list[Any] = []
    # an input forward modified in place (ctx.mark_dirty) is saved as the output it became,
    # as torch saves it: once apply has committed it (see _dirty_saved)
    became = {id(back_a): k for k, back_a in dirty.items()}
    # A Function with only jvp runs that jvp again, transposed, in the backward pass: what
    # it saved for forward is what it reads then (torch's jvp reads both as saved_tensors).
    to_save = ctx.to_save if ctx.to_save or cls._has("backward") else ctx.saved_for_forward
    for t in to_save:
        if t is None:
            saved.append(None)
        elif id(t) in back and id(back[id(t)]) in became:
            saved.append(_DirtyOutput(became[id(back[id(t)])]))
        elif id(t) in back:
            saved.append(SavedValue(back[id(t)]))
        elif id(t) in out_ids:  # (late: saved with its tangents, by _forward_by_levels)
            k = out_ids[id(t)]
            saved.append(_LateOutput(k) if late else SavedValue(outs[k], True, k))
        else:
            saved.append(SavedValue(t))
    # The node keeps its ctx for as long as it lives (torch's grad_fn of a Function is its
    # ctx: what forward stored on it stays readable); the saved tensors are released after
    # backward like any saved values, and only a node that saved some raises on a second
    # pass (a Function that saved nothing can run backward again, as in torch).
    ctx._saved, ctx._node = (), node  # (recorded: saved_tensors reads the node's)
    # what forward saw, and the places of the intermediates among the saved tensors
    # (neither an input nor an output): see _attributes_at
    node.params = {"ctx": ctx, "plain": tuple(plain)}
    inter = tuple(i for i, t in enumerate(to_save) if isinstance(t, Tensor) and
                  id(t) not in back and id(t) not in out_ids and t.dtype.kind in "fc")
    if inter:
        node.params["intermediate"] = inter
    node.saved = {"tensors": saved} if saved else {}
    if cls._has("backward"):
        node.custom = functools.partial(_custom_vjp, cls, node)
    else:
        node.custom = functools.partial(_jvp_transposed, cls, node, plain)
    for k, o in enumerate(outs):
        if isinstance(o, Tensor) and id(o) not in nondiff and o.dtype.kind in "fc":
            _set_node(o, node, k)
    if not late:
        _output_attributes(ctx, outs)


def _output_attributes(ctx: FunctionCtx, outs: list[Any]) -> None:
    """Outputs kept as attributes of ctx (``ctx.y = y``: forward's plain output) while
    they carry tangents: saved with them, as ``save_for_backward`` saves an output, so
    that a backward run in forward-over-reverse reads each with its tangent
    (``_attributes_at``)."""
    ids = {id(D.innermost(o)): k for k, o in enumerate(outs)
           if isinstance(o, Tensor) and 0 < o._level < D.LIN}
    if not ids or ctx._node is None:
        return
    found = {}
    for name, v in vars(ctx).items():
        if name in _CTX_OWN:
            continue
        for x in v if isinstance(v, (tuple, list)) else (v,):
            if isinstance(x, Tensor) and id(x) in ids:
                k = ids[id(x)]
                found[id(x)] = SavedValue(outs[k], True, k)
    if found:
        ctx._node.saved["outputs"] = found


def _ctx(node: Node) -> FunctionCtx:
    return node.params["ctx"]


def _custom_vjp(cls: Any, node: Node, grads: list[Any], needs: list[bool]) -> list[Any]:
    ctx = _ctx(node)
    if ctx.materialize_grads:  # (a non-Tensor output's stays None)
        like = _like_of(grads, node.consts)  # (zeros of the kind of the gradients)
        grads = [g if g is not None or a is None else _make(_B.zeros(*a, like=like)) for g, a in
                 zip(grads, node.out_avals, strict=True)]
    fn = cls.backward if cls.backward is not Function.backward else cls.vjp
    if _differentiated(node):
        with _attributes_at(cls, ctx, node):
            res = fn(ctx, *grads)
    else:  # a first-order backward reads what forward saved, as it saved it
        res = fn(ctx, *grads)
    res = list(res) if isinstance(res, tuple) else [res]
    n_in = len(node.edges)
    if len(res) < n_in:
        raise RuntimeError(
            f"function {cls.__name__}Backward returned an incorrect number of gradients "
            f"(expected {n_in}, got {len(res)})"
        )
    out = []
    for r, (shape, _), need in zip(res[:n_in], node.avals, needs, strict=True):
        if r is None or not need:
            out.append(None)
            continue
        r = r if isinstance(r, Tensor) else _make(_as_array(r))  # (a Dask array stays lazy)
        gnb = max((g._batch_ndim for g in grads if isinstance(g, Tensor)), default=0)
        if r._batch_ndim < gnb:
            raise RuntimeError(
                f"{cls.__name__}.backward returned a gradient without the batch axis of its "
                "batched grad_outputs; compute it from the grad_outputs with dualad operations"
            )
        if r.shape != shape:
            raise RuntimeError(
                f"Function {cls.__name__}Backward returned an invalid gradient - got "
                f"{r.shape} but expected shape compatible with {shape}"
            )
        out.append(r)
    return out


def _differentiated(node: Node) -> bool:
    """Whether the rule a node runs in backward is itself differentiated: recorded
    (``create_graph``: grad mode is on in backward) or run on inputs dual at a level (a
    live one: forward-over-reverse). Only then does it read what ``_attributes_at``
    gives; a first-order backward reads what forward saved, at no extra cost."""
    return gm.state.grad or any(isinstance(a, Tensor) and 0 < a._level < D.LIN
                                for a in node.consts)


def _jvp_transposed(cls: Any, node: Node, plain: list[Any], grads: list[Any],
                    needs: list[bool]) -> list[Any]:
    ctx = _ctx(node)
    lins = [placeholder(*node.avals[i]) if n and isinstance(plain[i], Tensor) else None
            for i, n in enumerate(needs)]
    full = [lin if lin is not None else (_zeros_like(p) if isinstance(p, Tensor) else None)
            for lin, p in zip(lins, plain, strict=True)]
    # second derivatives: what the jvp reads, as for a custom backward; a first-order
    # backward reads it as saved
    if _differentiated(node):
        with _attributes_at(cls, ctx, node):
            t, prog = linearize(cls.__name__, lambda: cls.jvp(ctx, *full), user="jvp")
    else:
        t, prog = linearize(cls.__name__, lambda: cls.jvp(ctx, *full), user="jvp")
    outs = t if isinstance(t, tuple) else (t,)
    return transpose_program(prog, outs, grads, lins)


# ---------------------------------------------------------------------------
# Forward mode for a Function that defines only backward (the reverse of
# ``_jvp_transposed``). A backward is linear in its grad_outputs: it maps v to J^T v
# (J^H v for complex values, the adjoint for the real inner product). Run on symbolic
# grad_outputs it records that linear map as a program; the program's transpose, run
# on the input tangents u, gives J u, the output tangents.
# ---------------------------------------------------------------------------


class _LateOutput:
    """An output saved by ``save_for_backward`` whose SavedValue is made once its tangents
    are known (``_forward_by_levels``): forward-over-reverse reads them in backward."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


# FunctionCtx's own attributes; any other attribute is the user's (``ctx.x = x``)
_CTX_OWN = frozenset(FunctionCtx().__dict__)


def _forward_by_levels(cls: Any, ctx: FunctionCtx, live: list[Any], plain: list[Any],
                       outs: list[Any], nondiff: set[int], dirty: dict[int, Any],
                       rule: Any) -> list[Any]:
    """``outs`` (the plain outputs of ``forward``, recorded if grad mode is on) made dual
    at every live level of the inputs, innermost last, as ``apply`` does for a primitive:
    the output tangents at a level are computed by ``rule`` (``_tangents_by_jvp``: the
    user's jvp; ``_tangents_by_backward``: the transposed backward) on the values of that
    level (the inputs' primals there, and the outputs made dual at the levels below), so
    the levels below and reverse-mode recording differentiate them in turn."""
    in_pos = {id(p): i for i, p in enumerate(plain) if isinstance(p, Tensor)}
    out_pos = {id(o): k for k, o in enumerate(outs) if isinstance(o, Tensor)}
    for k, a in dirty.items():  # an input modified in place is read as the output it became
        out_pos[id(plain[next(i for i, b in enumerate(live) if b is a)])] = k
    diff = [isinstance(o, Tensor) and id(o) not in nondiff and o.dtype.kind in "fc"
            for o in outs]

    def at(xs: list[Any]) -> list[Any]:
        top = 0
        for a in xs:
            if isinstance(a, Tensor) and top < a._level < D.LIN:
                top = a._level
        if not top:
            return list(outs)
        if isinstance(levels.interpreters[top], _taylor.JetLevel):
            return _jet_outputs(cls, xs, top, at, outs, diff,
                                lambda ps, ts, ys, below: rule(
                                    cls, ctx, ps, ts, ys, diff, in_pos, out_pos, below))
        ps, ts, below, some = [], [], False, False
        for a in xs:
            if isinstance(a, Tensor):
                p, t = D.split(a, top)
                below = below or 0 < p._level < D.LIN
                if t is not None and p.dtype.kind not in "fc":
                    t = None
                some = some or t is not None
                ps.append(p)
                ts.append(t)
            else:
                ps.append(a)
                ts.append(None)
        ys = at(ps) if below else list(outs)
        if not some:
            return ys
        custom = getattr(D._interpreters[top], "custom_function", None)  # (a pattern level)
        touts = rule(cls, ctx, ps, ts, ys, diff, in_pos, out_pos, below) if custom is None \
            else custom(cls, ps, ts, ys, diff)
        return [y if t is None else D.dual(top, y, t) for y, t in zip(ys, touts, strict=True)]

    res = at(live)
    _late_outputs(ctx, res)
    return res


def _jet_outputs(cls: Any, xs: list[Any], top: int, at: Any, outs: list[Any],
                 diff: list[bool], first_order: Any) -> list[Any]:
    """The outputs made jets at the jet level ``top`` (Taylor mode, ``dualad.taylor``): by
    the Function's ``taylor(*series) -> series`` (a tuple of series for several outputs;
    each series ``[x_0, ..., x_K]`` of unscaled coefficients), or at order 1 by its
    first-order rule (``first_order``: the jvp, or the transposed backward)."""
    ps, series, below = [], [], False
    for a in xs:
        p, cs = D.split(a, top) if isinstance(a, Tensor) else (a, None)
        below = below or (isinstance(p, Tensor) and 0 < p._level < D.LIN)
        ps.append(p)
        series.append([p, *cs] if cs else [p])
    ys = at(ps) if below else list(outs)
    K = max(len(s) for s in series) - 1
    if not K:
        return ys
    if getattr(cls, "taylor", None) is not None:
        res = cls.taylor(*series)
        res = [res] if len(ys) == 1 and isinstance(res, list) else list(res)
        cols = [None if r is None or len(r) == 1 else
                [c if isinstance(c, Tensor) else Tensor(c) for c in r[1:]] for r in res]
    elif K == 1:
        ts = [s[1] if len(s) > 1 else None for s in series]
        cols = [None if t is None else [t] for t in first_order(ps, ts, ys, below)]
    else:
        raise _taylor.NoTaylorRuleError(
            f"{cls.__name__} has no Taylor rule, so it cannot run on a jet of order {K} "
            "(Taylor mode; its jvp, or its transposed backward, gives order 1 only). Define "
            "a staticmethod taylor(*series) -> series, each series the list [x_0, ..., x_K] of unscaled "
            "Taylor coefficients of an input (of an output, returned; a tuple of them for "
            "several outputs)"
        )
    return [y if c is None or not d else D.dual(top, y, c)
            for y, c, d in zip(ys, cols, diff, strict=True)]


def _tangents_by_jvp(cls: Any, ctx: FunctionCtx, ps: list[Any], ts: list[Any],
                     ys: list[Any], diff: list[bool], in_pos: dict[int, int],
                     out_pos: dict[int, int], below: bool) -> list[Any]:
    """The output tangents, given the input tangents ``ts`` at one level whose values are
    ``ps`` (inputs) and ``ys`` (outputs): the user's jvp, reading those values.

    What the jvp reads through ``ctx.saved_tensors`` (``save_for_forward``) or a ctx
    attribute is, when its result is differentiated (the values are dual at a level
    below: forward-over-forward; or its tangents are recorded: reverse-over-forward), the
    input or the output itself at this level, as a primitive's rule reads it: forward ran
    on plain copies, and its outputs are made dual at the levels below before this one.
    An intermediate (a float Tensor forward computed that is neither) has no known
    derivative: forward-over-forward raises, naming the Function and the value;
    reverse-over-forward reads it as a value whose grad_fn raises if reverse mode reaches
    it (torch reads it as a constant: a silently wrong second derivative). A first-order
    jvp reads forward's plain values, at no extra cost."""
    name = cls.__name__
    # (an integer input has no tangent: None, as torch passes)
    full = [(t if t is not None else _zeros_like(p))
            if isinstance(p, Tensor) and p.dtype.kind in "fc" else None
            for p, t in zip(ps, ts, strict=True)]
    # a dirty input's jvp may update its tangent in place and return it: it gets a copy
    # of its own (tangent arrays are shared between results)
    if ctx.dirty:
        for pid, i in in_pos.items():
            if pid in out_pos and isinstance(full[i], Tensor):
                full[i] = full[i].copy()
    # (below: the values are dual at a level below this one)
    recorded = gm.state.grad and gm.state.tangent_grad and \
        any(isinstance(p, Tensor) and p._requires_grad for p in ps)

    def value(t: Any, where: str) -> Any:
        if not isinstance(t, Tensor):
            return t
        if id(t) in out_pos:  # (first: a dirty input is an output)
            return ys[out_pos[id(t)]]
        if id(t) in in_pos:
            return ps[in_pos[id(t)]]
        if t.dtype.kind not in "fc":
            return t
        msg = _unknown_derivative(name, where, "forward-over-forward" if below else
                                  "reverse-over-forward", "jvp")
        if below:
            raise _UnknownRead(msg)
        # reverse mode may never ask for it: an error only if it does
        return _UnknownDerivative.apply(t, msg, *[p for p in ps
                                                  if isinstance(p, Tensor) and p._requires_grad])

    subst = None
    if below or recorded:
        ctx._lin_saved = tuple(value(t, _saved_where(i, "jvp"))
                               for i, t in enumerate(ctx.saved_for_forward))
        subst = _replace_attributes(ctx, lambda x, k: value(x, f"ctx.{k}"))
    ctx._jvp = True  # (saved_tensors: what save_for_forward saved)
    try:
        if gm.state.grad and not gm.state.tangent_grad:  # (tangents not recorded)
            with gm.no_grad():
                tout = cls.jvp(ctx, *full)
        else:
            tout = cls.jvp(ctx, *full)
    finally:
        ctx._jvp = False
        ctx._lin_saved = None
        if subst is not None:
            _restore_attributes(ctx, subst)
    tout = (tout,) if not isinstance(tout, tuple) else tout
    if gm.anomaly_threads[0] and gm.anomaly.on and gm.anomaly.check_nan:
        from .anomaly_mode import check_tangents

        check_tangents(name, [t if isinstance(t, Tensor) else None for t in tout],
                       lambda: _finite_values([*ps, *full]))
    _check_jvp_tangents(name, full, tout, ys, diff)
    return list(tout[:len(ys)]) + [None] * (len(ys) - len(tout))


def _check_jvp_tangents(name: str, full: list[Any], tout: tuple[Any, ...], ys: list[Any],
                        diff: list[bool]) -> None:
    """Raise for what a user's jvp returned wrong: a tangent without the batch axis of
    its batched input tangents ``full``, or a tangent for an output that is not
    differentiable (torch's check: it would be dropped)."""
    nb = 0
    for t in full:
        if t is not None and t._batch_ndim > nb:
            nb = t._batch_ndim
    for t in tout:
        if nb and isinstance(t, Tensor) and t._batch_ndim < nb:
            raise RuntimeError(
                f"{name}.jvp returned a tangent without the batch axis of its batched input "
                "tangents; compute it from the tangents with dualad operations (they carry "
                "the batch axis)"
            )
    for k, (y, t, d) in enumerate(zip(ys, tout, diff, strict=False)):
        if t is not None and not d:
            raise RuntimeError(  # (torch's check: a tangent would be dropped)
                f"{name}.jvp returned a tangent at position {k}, but the corresponding "
                "forward output is not a differentiable Tensor (" +
                ("marked non-differentiable" if isinstance(y, Tensor) and y.dtype.kind in "fc"
                 else f"a Tensor of dtype {y.dtype}" if isinstance(y, Tensor) else
                 f"a {type(y).__name__}") + "). You should return None at that position "
                "instead.")


def _tangents_by_backward(cls: Any, ctx: FunctionCtx, ps: list[Any], ts: list[Any],
                          ys: list[Any], diff: list[bool], in_pos: dict[int, int],
                          out_pos: dict[int, int], below: bool) -> list[Any]:
    """The output tangents, given the input tangents ``ts`` at one level whose values are
    ``ps`` (inputs) and ``ys`` (outputs): the transpose of ``backward`` linearized in its
    grad_outputs."""
    name = cls.__name__
    fn = cls.backward if cls.backward is not Function.backward else cls.vjp
    lins = [placeholder(y.shape, y.dtype) if d else None for y, d in zip(ys, diff, strict=True)]
    grads = [lin if lin is not None else
             _zeros_like(y) if ctx.materialize_grads and isinstance(y, Tensor) else None
             for lin, y in zip(lins, ys, strict=True)]
    # what backward reads, at this level's values: an input's or output's own; something
    # else forward computed (an intermediate) has a derivative nobody knows
    # (below: the values are dual at a level below this one)
    recorded = gm.state.grad and gm.state.tangent_grad and any(
        isinstance(p, Tensor) and p._requires_grad for p in ps)
    once = getattr(fn, "_once_differentiable", False)

    def value(t: Any, where: str) -> Any:
        if not isinstance(t, Tensor):
            return t
        if id(t) in out_pos:  # (first: a dirty input is an output)
            return ys[out_pos[id(t)]]
        if id(t) in in_pos:
            return ps[in_pos[id(t)]]
        if t.dtype.kind not in "fc" or not (below or recorded):
            return t
        msg = _unknown_derivative(name, where, "forward-over-forward" if below else
                                  "reverse-over-forward")
        if below:
            raise _UnknownRead(msg)
        # reverse mode may never ask for it: an error only if it does
        tracked = [p for p in ps if isinstance(p, Tensor) and p._requires_grad]
        return _UnknownDerivative.apply(t, msg, *tracked)

    saved = tuple(value(t, _saved_where(i)) for i, t in enumerate(ctx.to_save))
    needs = ctx.needs_input_grad
    ctx._lin_saved = saved
    ctx.needs_input_grad = tuple(t is not None for t in ts)  # (a backward skips the others)
    subst = _replace_attributes(ctx, lambda x, k: value(x, f"ctx.{k}"))
    quiet = gm.state.grad and not gm.state.tangent_grad  # (tangents not recorded)
    try:
        with gm.no_grad() if quiet else _Nothing():
            try:
                res, prog = linearize(name, lambda: fn(ctx, *grads), user="backward")
            except RuntimeError as e:
                if "symbolic tangent" not in str(e):
                    raise
                raise RuntimeError(
                    f"{name}.backward cannot be used for forward mode: {e}. Forward mode "
                    f"through {name}, which defines no jvp, runs its backward on symbolic "
                    "grad_outputs: compute with dualad operations on them (dualad.numpy), "
                    f"not NumPy's; or give {name} a jvp."
                ) from None
            outs, cts = _linear_results(name, res, ps, ts)
            touts = transpose_program(prog, outs, cts, lins)
    finally:
        ctx._lin_saved = None
        ctx.needs_input_grad = needs
        _restore_attributes(ctx, subst)
    if gm.anomaly_threads[0] and gm.anomaly.on and gm.anomaly.check_nan:
        from .anomaly_mode import check_tangents

        check_tangents(name, touts, lambda: _finite_values([*ps, *ts]))
    if once and recorded:  # its coefficients were computed under no_grad
        msg = (f"trying to differentiate twice a function that was marked with "
               f"@once_differentiable ({name}.backward, transposed for forward mode)")
        tracked = [p for p in ps if isinstance(p, Tensor) and p._requires_grad]
        touts = [t if t is None else _UnknownDerivative.apply(t, msg, *tracked) for t in touts]
    return touts


def _linear_results(name: str, res: Any, ps: list[Any], ts: list[Any]
                    ) -> tuple[list[Any], list[Any]]:
    """The results of a user's ``backward`` run on placeholders (``res``), as the outputs
    of the linear program to transpose, with the input tangents ``ts`` that are their
    cotangents; raises for too few results, a result that does not depend on the
    grad_outputs and is not zero (backward is not linear in them), or one of the wrong
    shape."""
    res = list(res) if isinstance(res, tuple) else [res]
    if len(res) < len(ps):
        raise RuntimeError(
            f"function {name}Backward returned an incorrect number of gradients "
            f"(expected {len(ps)}, got {len(res)})"
        )
    outs, cts = [], []
    for i, (r, t) in enumerate(zip(res, ts, strict=False)):
        if t is None or r is None:
            continue
        if not is_lin(r):  # a constant: the map is linear only if it is zero
            d = r._data if isinstance(r, Tensor) else r
            if np.any(d):
                raise RuntimeError(
                    f"dualad: {name}.backward is not linear in its grad_outputs: its "
                    f"gradient for input {i} does not depend on them and is not zero. "
                    "Forward mode transposes backward, which must be linear in "
                    f"grad_output; or give {name} a jvp."
                )
            continue
        if r.shape != ps[i].shape:
            raise RuntimeError(
                f"Function {name}Backward returned an invalid gradient - got "
                f"{r.shape} but expected shape compatible with {ps[i].shape}"
            )
        outs.append(r)
        cts.append(t)
    return outs, cts


def _finite_values(ts: list[Any]) -> bool:
    return all(not isinstance(t, Tensor) or t.dtype.kind not in "fc" or
               bool(np.isfinite(t._data).all()) for t in ts)


def _saved_where(i: int, rule: str = "backward") -> str:
    saver = "save_for_backward" if rule == "backward" else "save_for_forward"
    return f"ctx.saved_tensors[{i}] (a tensor saved with ctx.{saver})"


def _unknown_derivative(name: str, where: str, how: str, rule: str = "backward") -> str:
    return (
        f"{name}.{rule} reads {where}, which is neither an input nor an output of "
        f"{name}.forward, so its derivative is unknown and the derivative of the {rule} "
        f"({how}) cannot be computed. Save only inputs and outputs (recompute the value "
        f"in {rule} from them with dualad operations), pass it to apply as an input, or "
        "return it from forward as an output."
    )


@contextlib.contextmanager
def _attributes_at(cls: Any, ctx: FunctionCtx, node: Node) -> Any:
    """While a custom backward (or a jvp transposed for reverse mode) runs, an attribute
    of ctx that holds one of forward's inputs (``ctx.x = x``: forward ran on a plain copy
    of it) holds the input as the caller gave it, as in torch, so that a second
    derivative (double backward, forward-over-reverse) differentiates through it; one
    that holds an output holds it with its tangent in forward-over-reverse.

    A value whose derivative is unknown is an intermediate (a float Tensor forward
    computed that is neither an input nor an output) saved by ``save_for_backward`` or
    stored on ctx: forward runs on plain values, so it carries no history. In
    forward-over-reverse (the inputs were dual at a level still live, so the gradients
    must carry that level's tangents) it is refused here. In reverse-over-reverse (the
    backward is recorded: ``create_graph``, and inputs require grad) it is read as a
    value whose grad_fn raises, so that a second reverse pass raises only if it reaches
    it (torch treats it as a constant there: a silently wrong second derivative). A
    backward that is not recorded reads every value as it was saved."""
    fwd = any(isinstance(a, Tensor) and 0 < a._level < D.LIN and a._level in D.live
              for a in node.consts)
    name = cls.__name__
    rule = "backward" if cls._has("backward") else "jvp"  # (the jvp, transposed)
    inter = node.params.get("intermediate", ())
    if fwd and inter:
        raise RuntimeError(_unknown_derivative(name, _saved_where(inter[0], rule),
                                               "forward-over-reverse", rule))
    # (gm.state.grad is off in a backward without create_graph: nothing more to do)
    tracked = [a for a in node.consts if isinstance(a, Tensor) and a._requires_grad] \
        if gm.state.grad and not fwd else []
    pos = {id(p): i for i, p in enumerate(node.params.get("plain", ())) if isinstance(p, Tensor)}
    nondiff = {id(t) for t in ctx.non_differentiable} if tracked or fwd else set()
    outs = node.saved.get("outputs", {}) if fwd and node.saved else {}  # (_output_attributes)

    def value(x: Any, k: str) -> Any:
        if not isinstance(x, Tensor):
            return x
        if id(x) in pos:
            return node.consts[pos[id(x)]]
        if x.dtype.kind not in "fc" or id(x) in nondiff:
            return x
        if id(x) in outs:  # an output, with its tangent
            return outs[id(x)].get(node, f"ctx.{k}")
        if fwd:
            raise _UnknownRead(_unknown_derivative(name, f"ctx.{k}", "forward-over-reverse",
                                                   rule))
        if tracked and not x._requires_grad:  # (an output has its history)
            return _UnknownDerivative.apply(
                x, _unknown_derivative(name, f"ctx.{k}", "reverse-over-reverse", rule),
                *tracked)
        return x

    subst = _replace_attributes(ctx, value)
    saved = lazy = node.saved.get("tensors") if node.saved else None
    if tracked and inter and saved is not None:  # wrapped when ctx.saved_tensors is read
        node.saved["tensors"] = lazy = [
            _SavedUnknown(s, _unknown_derivative(name, _saved_where(i, rule),
                                                 "reverse-over-reverse", rule),
                          tracked) if i in inter and isinstance(s, SavedValue) else s
            for i, s in enumerate(saved)]
    try:
        yield
    finally:
        _restore_attributes(ctx, subst)
        if lazy is not saved and node.saved and node.saved.get("tensors") is lazy:
            node.saved["tensors"] = saved


class _UnknownRead(RuntimeError):
    """A value a rule would read whose derivative is needed and unknown (raised by the
    ``value`` functions given to ``_replace_attributes``)."""


def _replace_attributes(ctx: FunctionCtx, value: Any) -> dict[str, tuple[Any, Any]]:
    """Replace each user attribute of ``ctx`` (``ctx.x = x``; each item of a tuple or list
    held there) by ``value(item, name)`` while a rule runs; return what changed, name ->
    (old, new), for ``_restore_attributes``. An attribute for which ``value`` raises
    ``_UnknownRead`` (an intermediate whose derivative is needed) raises only if the
    rule reads it: a Function's attributes may be kept for its other rule."""
    subst = {}
    bad = {}
    for k, v in vars(ctx).items():
        if k in _CTX_OWN:
            continue
        try:
            if isinstance(v, (tuple, list)):
                new = [value(x, k) for x in v] if isinstance(v, list) else \
                    tuple(value(x, k) for x in v)  # (a namedtuple read as a tuple)
                if any(a is not b for a, b in zip(new, v, strict=True)):
                    subst[k] = (v, new)
            elif (new := value(v, k)) is not v:
                subst[k] = (v, new)
        except _UnknownRead as e:
            bad[k] = str(e)
    for k, (_, new) in subst.items():
        setattr(ctx, k, new)
    if bad:  # withheld while the rule runs: reading one raises (FunctionCtx.__getattr__)
        ctx._unreadable = {k: (getattr(ctx, k), msg) for k, msg in bad.items()}
        for k in bad:
            delattr(ctx, k)
    return subst


def _restore_attributes(ctx: FunctionCtx, subst: dict[str, tuple[Any, Any]]) -> None:
    if ctx._unreadable:
        for k, (old, _) in ctx._unreadable.items():
            if k not in vars(ctx):  # (unless the rule set it anew)
                setattr(ctx, k, old)
        ctx._unreadable = None
    for k, (old, new) in subst.items():
        if vars(ctx).get(k) is new:  # (unless the rule set it anew)
            setattr(ctx, k, old)


def _late_outputs(ctx: FunctionCtx, outs: list[Any]) -> None:
    """The outputs saved for backward by a Function recorded before its output tangents
    were known (``_record``'s ``late``): saved now, with their tangents."""
    if ctx._saved is None:  # (not recorded)
        return
    node = ctx._node
    if node.saved and "tensors" in node.saved:
        node.saved["tensors"] = [SavedValue(outs[s.k], True, s.k) if isinstance(s, _LateOutput)
                                 else s for s in node.saved["tensors"]]
    _output_attributes(ctx, outs)


class _DirtyOutput:
    """An input modified in place by forward (``ctx.mark_dirty``) and saved for backward:
    saved as output ``k``, the output it became, once ``apply`` has written the output
    into it (``_dirty_saved``)."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


def _dirty_saved(ctx: FunctionCtx, outs: list[Any]) -> None:
    """Save the dirty inputs among the saved tensors (``_DirtyOutput``) as the outputs they
    became, after ``apply`` committed them: at their version then (torch allows saving a
    dirty input; a later in-place change of the output is caught in backward), with their
    tangents, and reattached to the Function's node (a second derivative differentiates
    the backward through the output, as torch does)."""
    node = ctx._node
    if node.saved and "tensors" in node.saved:
        node.saved["tensors"] = [SavedValue(outs[s.k], True, s.k) if isinstance(s, _DirtyOutput)
                                 else s for s in node.saved["tensors"]]


class _SavedUnknown(SavedValue):
    """An intermediate among the node's saved tensors while a recorded backward runs:
    unpacked as the saved value, then given a grad_fn that raises ``msg`` (see
    ``_attributes_at``)."""

    __slots__ = ("inner", "msg", "tracked")

    def __init__(self, inner: SavedValue, msg: str, tracked: list[Tensor]) -> None:
        self.inner, self.msg, self.tracked = inner, msg, tracked

    def get(self, node: Node, what: str) -> Tensor:
        return _UnknownDerivative.apply(self.inner.get(node, what), self.msg, *self.tracked)


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


class _UnknownDerivative(Function):
    """A value whose derivative is unknown: its grad_fn raises ``msg`` if reverse mode
    reaches it (an intermediate a transposed backward read while its tangents are
    recorded)."""

    @staticmethod
    def forward(ctx: Any, r: Tensor, msg: str, *tracked: Tensor) -> Tensor:
        ctx.msg = msg
        return _make(r._data)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(ctx.msg)


class InplaceFunction(Function):
    """A Function that may modify its inputs in place (torch compatibility).

    Examples
    --------
    >>> class Double(dualad.InplaceFunction):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return 2 * g
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> Double.apply(x).sum().backward(); x.grad
    tensor([2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace


def once_differentiable(fn: Any) -> Any:
    """Run ``backward`` under no_grad: its result cannot be differentiated again.

    With ``create_graph=True`` its results still carry a ``grad_fn`` (when a grad_output
    requires grad), whose backward raises: a second derivative through it is an error,
    not a silent zero.

    Examples
    --------
    >>> class Exp(dualad.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = dualad.numpy.exp(x)
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     @dualad.once_differentiable
    ...     def backward(ctx, g):
    ...         (y,) = ctx.saved_tensors
    ...         return g * y
    >>> x = dualad.tensor(0.0, requires_grad=True)
    >>> (g,) = dualad.grad(Exp.apply(x), (x,), create_graph=True)
    >>> g, g.requires_grad
    (tensor(1.), False)
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with gm.no_grad():
            res = fn(ctx, *args)
        tracked = [a for a in args if isinstance(a, Tensor) and a._requires_grad]
        if not gm.state.grad or not tracked:
            return res
        many = isinstance(res, tuple)
        out = tuple(_DelayedError.apply(r, *tracked) if isinstance(r, Tensor) and
                    r.dtype.kind in "fc" else r for r in (res if many else (res,)))
        return out if many else out[0]

    wrapper._once_differentiable = True  # type: ignore[attr-defined]
    return wrapper


class _DelayedError(Function):
    """The grad_fn of a ``once_differentiable`` result: differentiating it raises."""

    @staticmethod
    def forward(ctx: Any, r: Tensor, *tracked: Tensor) -> Tensor:
        return _make(r._data)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")
