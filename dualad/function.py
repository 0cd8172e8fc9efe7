"""User-defined derivative rules: ``dualad.Function``, as torch.autograd.Function.

A Function's ``forward`` runs on plain tensors (no levels, no recording). Its
``jvp`` drives forward mode; its ``backward`` (alias ``vjp``) drives reverse
mode — the one place a reverse rule is written by hand, and honoured as given.
A Function with only ``jvp`` gets reverse mode by transposing that jvp, which
must then be linear in the tangents (the error names the operation if not).
Custom Functions support one dual level at a time.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any

import numpy as np

from . import _dispatch as D
from . import grad_mode as gm
from ._backend import as_array as _as_array
from ._backend import like as _like
from ._tensor import Tensor, _make
from .ops import inplace
from .reverse.graph import Node, SavedValue, _set_node, edge_of, new_node
from .reverse.linearize import linearize, placeholder, transpose_program


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
        if len(set().union(*[_levels(a) for a in live if isinstance(a, Tensor)])) > 1:
            raise RuntimeError(
                f"{cls.__name__}.apply: the inputs carry tangents at two nested dual levels; "
                "custom Functions support one dual level at a time (compose dualad "
                "operations instead to get higher-order forward derivatives)"
            )
        plain: list[Any] = []
        back: dict[int, Any] = {}
        for a in live:
            if isinstance(a, Tensor):
                p = D.innermost(a).detach()
                back[id(p)] = a
                plain.append(p)
            else:
                plain.append(a)
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg for a in live)
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
        # forward mode: the user's jvp at the top live level
        if L:
            tans = [D.split(a, L)[1] if isinstance(a, Tensor) else None for a in live]
            if any(t is not None for t in tans):
                if not cls._has("jvp"):
                    raise RuntimeError(
                        f"{cls.__name__} does not implement jvp, so it cannot be used with "
                        "forward-mode AD; define a staticmethod jvp(ctx, *tangents)"
                    )
                # (an integer input has no tangent: None, as torch passes)
                full = [(t if t is not None else _zeros_like(p))
                        if isinstance(p, Tensor) and p.dtype.kind in "fc" else None
                        for p, t in zip(plain, tans, strict=True)]
                # a dirty input's jvp may update its tangent in place and return it: it gets
                # a copy of its own (tangent arrays are shared between results)
                for a in dirty.values():
                    i = next(i for i, b in enumerate(live) if b is a)
                    if isinstance(full[i], Tensor):
                        full[i] = full[i].copy()
                ctx._jvp = True  # (saved_tensors: what save_for_forward saved)
                try:
                    tout = cls.jvp(ctx, *full)
                finally:
                    ctx._jvp = False
                tout = (tout,) if not isinstance(tout, tuple) else tout
                if gm.anomaly_threads[0] and gm.anomaly.on and gm.anomaly.check_nan:
                    from .anomaly_mode import _finite_inputs, check_tangents

                    check_tangents(cls.__name__, [t if isinstance(t, Tensor) else None
                                                  for t in tout],
                                   lambda: _finite_inputs([*plain, *full], -1))
                nb = max((t._nb for t in full if isinstance(t, Tensor)), default=0)
                for t in tout:
                    if isinstance(t, Tensor) and t._nb < nb:
                        raise RuntimeError(
                            f"{cls.__name__}.jvp returned a tangent without the batch axis of "
                            "its batched input tangents; compute it from the tangents with "
                            "dualad operations (they carry the batch axis)"
                        )
                for k, (o, t) in enumerate(zip(outs, tout, strict=False)):
                    if t is not None and (id(o) in nondiff or not isinstance(o, Tensor)
                                          or o.dtype.kind not in "fc"):
                        raise RuntimeError(  # (torch's check: a tangent would be dropped)
                            f"{cls.__name__}.jvp returned a tangent at position {k}, but the "
                            "corresponding forward output is not a differentiable Tensor ("
                            + ("marked non-differentiable" if id(o) in nondiff else
                               f"a Tensor of dtype {o.dtype}" if isinstance(o, Tensor) else
                               f"a {type(o).__name__}") + "). You should return None at that "
                            "position instead.")
                outs = [o if (t is None or id(o) in nondiff or not isinstance(o, Tensor))
                        else D.dual(L, o, t)
                        for o, t in zip(outs, tout, strict=False)] + outs[len(tout):]
        if gm.state.grad and any(ctx.needs_input_grad):
            _record(cls, ctx, live, plain, back, outs, nondiff)
        for k, a in dirty.items():  # the modified input is the output: its history and
            inplace.commit(a, outs[k])  # tangent rebased onto this Function's
            outs[k] = a
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


def _levels(t: Tensor) -> set[int]:
    if not t._level or t._level >= D.LIN:
        return set()
    return {t._level} | _levels(t._primal) | _levels(t._tangent)


def _view_of(t: Tensor) -> Tensor:
    """A new Tensor of ``t``'s data, as a view: it shares ``t``'s version counter."""
    u = _make(t._data)
    u._vc = t._version_counter()
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
            outs: list[Tensor], nondiff: set[int]) -> None:
    edges = [edge_of(a) if isinstance(a, Tensor) and a._rg else None for a in live]
    node = new_node(cls._prim, {})  # after the input edges: a larger seq than its inputs' nodes
    node.edges = edges
    node.avals = [(p.shape, p.dtype) if isinstance(p, Tensor) else ((), np.asarray(p).dtype)
                  for p in plain]
    node.out_avals = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in outs]
    node.consts = list(live)
    node.saved = {}
    out_ids = {id(D.innermost(o)): k for k, o in enumerate(outs) if isinstance(o, Tensor)}
    saved: list[Any] = []
    # A Function with only jvp runs that jvp again, transposed, in the backward pass: what
    # it saved for forward is what it reads then (torch's jvp reads both as saved_tensors).
    to_save = ctx.to_save if ctx.to_save or cls._has("backward") else ctx.saved_for_forward
    for t in to_save:
        if t is None:
            saved.append(None)
        elif id(t) in back:
            saved.append(SavedValue(back[id(t)]))
        elif id(t) in out_ids:
            saved.append(SavedValue(outs[out_ids[id(t)]], True))
        else:
            saved.append(SavedValue(t))
    # The node keeps its ctx for as long as it lives (torch's grad_fn of a Function is its
    # ctx: what forward stored on it stays readable); the saved tensors are released after
    # backward like any saved values, and only a node that saved some raises on a second
    # pass (a Function that saved nothing can run backward again, as in torch).
    ctx._saved, ctx._node = (), node  # (recorded: saved_tensors reads the node's)
    node.params = {"ctx": ctx}
    node.saved = {"tensors": saved} if saved else {}
    if cls._has("backward"):
        node.custom = functools.partial(_custom_vjp, cls, node)
    else:
        node.custom = functools.partial(_jvp_transposed, cls, node, plain)
    for k, o in enumerate(outs):
        if isinstance(o, Tensor) and id(o) not in nondiff and o.dtype.kind in "fc":
            _set_node(o, node, k)


def _ctx(node: Node) -> FunctionCtx:
    return node.params["ctx"]


def _custom_vjp(cls: Any, node: Node, grads: list[Any], needs: list[bool]) -> list[Any]:
    ctx = _ctx(node)
    if ctx.materialize_grads:  # (a non-Tensor output's stays None)
        like = _like_of(grads, node.consts)  # (zeros of the kind of the gradients)
        grads = [g if g is not None or a is None else _make(np.zeros(*a, like=like)) for g, a in
                 zip(grads, node.out_avals, strict=True)]
    fn = cls.backward if cls.backward is not Function.backward else cls.vjp
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
        gnb = max((g._nb for g in grads if isinstance(g, Tensor)), default=0)
        if r._nb < gnb:
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


def _jvp_transposed(cls: Any, node: Node, plain: list[Any], grads: list[Any],
                    needs: list[bool]) -> list[Any]:
    ctx = _ctx(node)
    lins = [placeholder(*node.avals[i]) if n and isinstance(plain[i], Tensor) else None
            for i, n in enumerate(needs)]
    full = [lin if lin is not None else (_zeros_like(p) if isinstance(p, Tensor) else None)
            for lin, p in zip(lins, plain, strict=True)]
    t, prog = linearize(cls.__name__, lambda: cls.jvp(ctx, *full))
    outs = t if isinstance(t, tuple) else (t,)
    return transpose_program(prog, outs, grads, lins)


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
        tracked = [a for a in args if isinstance(a, Tensor) and a._rg]
        if not gm.state.grad or not tracked:
            return res
        many = isinstance(res, tuple)
        out = tuple(_DelayedError.apply(r, *tracked) if isinstance(r, Tensor) and
                    r.dtype.kind in "fc" else r for r in (res if many else (res,)))
        return out if many else out[0]

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
