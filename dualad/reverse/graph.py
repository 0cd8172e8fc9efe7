"""The reverse graph: nodes, edges and saved values, recorded by ``apply``.

A node holds its primitive, its parameters, edges to the nodes of its inputs,
and only the values its JVP rule declares it reads (invariant 6 of docs/architecture.md): ``add``
keeps shapes, ``exp`` keeps its output, ``mul`` keeps the other operand. A
saved value keeps the version it had, so an in-place change before backward is
caught; saved-tensor hooks pack and unpack it.
"""

from __future__ import annotations

import itertools
import os
import threading
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends.namespace import as_array as _as_array
from ..core import dispatch as D
from ..core import grad_mode as _gm
from ..core.tensor import Tensor, _make
from .linearize import linearize, placeholder, transpose_program

_seq = itertools.count()
_ndarray = np.ndarray


class _Hooks(threading.local):
    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
        self.disabled: str | None = None


saved_hooks = _Hooks()
# How many saved-tensor hook pairs are pushed, in all threads, plus the threads in anomaly
# mode. Reading a thread-local costs more than the rest of saving a value, so recording
# reads ``saved_hooks`` (and the hot recorders leave their straight line for ``record``, or
# ``record_traced`` in anomaly mode) only while this is nonzero.
hooks_live = [0]
hooks_live_lock = threading.Lock()


def restore_saved_hooks(stack: list[Any], disabled: str | None) -> None:
    """Put this thread's saved-tensor hooks back to ``stack`` and ``disabled`` (what they
    were before a backward pass whose hooks changed them), keeping the live count."""
    hs = saved_hooks
    with hooks_live_lock:
        hooks_live[0] += len(stack) - len(hs.stack)
    hs.stack[:] = stack
    hs.disabled = disabled


def _hooks_on() -> bool:
    # (inside disable_saved_tensors_hooks even a pair pushed before it packs nothing)
    return bool(hooks_live[0] and saved_hooks.stack and saved_hooks.disabled is None)


class RemovableHandle:
    """Returned by hook registrations; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, table: dict[int, Any], fn: Any) -> None:
        self.id = next(self._ids)
        self._table = table
        table[self.id] = fn

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class SavedValue:
    """A value a node saved, with the version it had and its pack/unpack hooks.

    A plain input saved with no hooks at version 0 is stored as the bare Tensor
    instead (an in-place change makes its version nonzero).
    """

    __slots__ = ("packed", "version", "vc", "unpack", "nr", "edge")

    def __init__(self, t: Tensor, is_output: bool = False, nr: int = 0) -> None:
        self.nr = nr if is_output else -1
        self.vc = t._version_counter()
        self.version = self.vc[0]
        v = _alias(t) if is_output else t
        if _hooks_on():
            pack, self.unpack = saved_hooks.stack[-1]
            self.packed = pack(v)
            if pack is copy_saved:  # (allow_mutation_on_saved_tensors: a change of t is not
                self.vc = [self.version]  # a change of the copy)
            # what unpack gives is a new Tensor: it takes the input's place in the graph, so
            # that a graph recorded from it (create_graph) reaches the input
            self.edge = edge_of(t) if not is_output and t._requires_grad else None
        else:
            self.packed, self.unpack = v, None

    def get(self, node: Node, what: str) -> Tensor:
        if self.vc[0] != self.version:
            raise _modified(node, what, self.vc[0], self.version)
        if self.unpack is None:
            v = self.packed
            if v.__class__ is not Tensor:  # a plain output saved as its bare array
                v = _make(v if v.__class__ is _ndarray else _as_array(v))
                v._version_cell = self.vc
        else:
            v = self.unpack(self.packed)
            if not isinstance(v, Tensor):
                v = _make(v if v.__class__ is _ndarray else _as_array(v))
            if self.edge is not None:
                v = _as_input(v, *self.edge)
        if self.nr >= 0:
            v = _reattach(v, node, self.nr)
        return v


def copy_saved(t: Tensor) -> Tensor:
    """The pack hook of ``allow_mutation_on_saved_tensors``: a copy of the value saved, which
    in-place changes of ``t`` do not reach (its tangents copied too)."""
    if t._level and t._level < D.LIN:
        return D.dual(t._level, copy_saved(t._primal), copy_saved(t._tangent))
    u = _make(t._data.copy())
    u._batch_ndim = t._batch_ndim
    return u


def _saved(s: Any, node: Node, what: str) -> Tensor:
    """The value of a saved input: a SavedValue, or a Tensor saved bare at version 0."""
    if s.__class__ is not Tensor:
        return s.get(node, what)
    if s._version_cell is not None and s._version_cell[0] != 0:
        raise _modified(node, what, s._version_cell[0], 0)
    return s


def _modified(node: Node, what: str, now: int, then: int) -> RuntimeError:
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{what} of {node.name()}] is at version {now}; "
        f"expected version {then} instead. Hint: the in-place change happened "
        "after the value was saved; use an out-of-place operation (or clone it first)."
    )


def _save_output(o: Tensor, nr: int, plain: bool) -> SavedValue:
    """SavedValue(o, True, nr); with no saved-tensor hooks, a plain output keeps its bare
    array (no Tensor, so no cycle)."""
    if not plain or o._level or o._batch_ndim:
        return SavedValue(o, True, nr)
    vc = o._version_cell
    if vc is None:
        vc = o._version_cell = [0]
    return _bare_output(o._data, vc, vc[0], nr)


def _bare_output(y: Any, vc: list[int], version: int, nr: int) -> SavedValue:
    """The SavedValue of output ``nr`` kept as its bare array ``y`` (no hooks)."""
    sv = _new(SavedValue)
    sv.packed, sv.unpack, sv.nr, sv.vc, sv.version = y, None, nr, vc, version
    return sv


_new = object.__new__


def _alias(t: Tensor) -> Tensor:
    """``t`` with the innermost grad_fn dropped (tangents kept), sharing data."""
    if t._level and t._level < D.LIN:
        return t._map_parts(_alias, None)  # (parts unmade stay so: the fast path takes them)
    u = _make(t._data)
    u._batch_ndim = t._batch_ndim
    u._version_cell = t._version_cell
    return u


def _as_input(t: Tensor, node: Any, nr: int) -> Tensor:
    """``t`` in the place of a saved input whose gradient flows to ``(node, nr)``: a leaf's
    (``AccumulateGrad``) by sharing its autograd state, another by ``_reattach``."""
    if node.__class__ is not AccumulateGrad:
        return _reattach(t, node, nr)
    if t._level and t._level < D.LIN:
        return D.dual(t._level, _as_input(t._primal, node, nr), t._tangent)
    u = _make(t._data)
    u._batch_ndim, u._version_cell = t._batch_ndim, t._version_cell
    u._requires_grad, u._meta = True, node.variable._meta_()
    return u


def _reattach(t: Tensor, node: Node, nr: int) -> Tensor:
    if t._level and t._level < D.LIN:
        return D.dual(t._level, _reattach(t._primal, node, nr), t._tangent)
    u = _make(t._data)
    u._batch_ndim, u._version_cell = t._batch_ndim, t._version_cell
    u._requires_grad, u._node, u._out_nr = True, node, nr
    return u


def backward_name(name: str) -> str:
    """The name of the nodes of primitive ``name`` (``grad_fn``'s: ``SinBackward0``)."""
    return "".join(w.capitalize() for w in name.split("_")) + "Backward0"


class Node:
    """A recorded operation (``tensor.grad_fn``): its VJP is the transpose of its JVP.

    Attributes follow torch's ``torch.autograd.graph.Node``: ``name()``,
    ``next_functions``, ``metadata``, ``register_hook``, ``register_prehook``.

    A Node is made by ``Node()`` (no ``__init__``: the call costs less than
    ``object.__new__``) and then filled in.

    ``saved``: what the rule reads, ``{position: Tensor or SavedValue, "out": [SavedValue,
    ...]}`` (``_NOTHING``: nothing; None once released); read it by ``_saved_values()``,
    which a subclass that keeps it in another form (the fast layer's) makes into this dict.

    ``leaf``: the one leaf (its AccumulateGrad) every path from this node leads to, or
    None (several, or not known): when it is an input asked for, ``grad()`` needs no
    pruning pass.
    """

    __slots__ = (
        "prim", "params", "saved", "consts", "avals", "out_avals", "edges", "seq", "hooked",
        "custom", "nbs", "leaf", "__weakref__",
        # the tables: set on first use (by ``_table``), which also sets ``hooked``
        "pre_hooks", "hooks", "tensor_pre_hooks", "retain", "_metadata",
    )

    @property
    def metadata(self) -> dict[Any, Any]:
        """A dict for the user's own annotations of this node (torch's ``Node.metadata``)."""
        return self._table("_metadata")

    def name(self) -> str:
        if self.custom is not None:  # a custom Function: its class's name, as written
            return self.prim.name + "Backward"
        return backward_name(self.prim.name)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        return tuple((None, 0) if e is None else e for e in self.edges)

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` after the node ran; may return new grad_inputs."""
        return RemovableHandle(self._table("hooks"), fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` before the node runs; may return new grad_outputs."""
        return RemovableHandle(self._table("pre_hooks"), fn)

    def _table(self, name: str) -> dict[Any, Any]:
        if not self.hooked:  # the engine reads the tables only of nodes that have them
            self.pre_hooks = self.hooks = self.tensor_pre_hooks = self.retain = \
                self._metadata = _NOTHING
            self.hooked = True
        if getattr(self, name) is _NOTHING:
            setattr(self, name, {})
        return getattr(self, name)

    def __dir__(self) -> list[str]:
        names = [f"{p}saved_{n}" for n in _saved_names(self) for p in ("_", "_raw_")]
        return sorted(set(super().__dir__()) | set(names))

    def _saved_values(self) -> dict[Any, Any] | None:
        """``saved`` as a dict; None once released."""
        return self.saved

    def release(self) -> None:
        """Drop what the node saved (a backward pass without ``retain_graph``)."""
        self.saved = None

    def saved_changed(self) -> None:
        """A saved value was replaced (packed by ``SavedTensor.register_hooks``): a
        subclass that also keeps the saved values in another form drops that form."""

    def _unpack(self, lins: list[Any] | None = None) -> tuple[list[Any], Any]:
        """The saved values: ``(primals, out)``, a stand-in (``AVAL``) for each one not saved.

        ``lins``: a placeholder (or None) per input, for a rule linear in those inputs: they
        stand in the primals' places (a saved value there is still checked) and no output is
        made (None; a saved one is still checked)."""
        if self.saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward."
            )
        saved = self._saved_values() or {}
        primals = []
        for i, c in enumerate(self.consts):
            if i in saved:
                p = _saved(saved[i], self, f"input {i}")
                primals.append(p if lins is None or lins[i] is None else lins[i])
            elif lins is not None and lins[i] is not None:
                primals.append(lins[i])
            elif c is not _ABSENT:
                primals.append(c)
            else:
                shape, dtype = self.avals[i]
                primals.append(placeholder(shape, dtype, D.AVAL))
        if "out" in saved:
            outs = [placeholder(*self.out_avals[k], D.AVAL) if s is None else
                    s.get(self, f"output {k}") for k, s in enumerate(saved["out"])]
            out = tuple(outs) if self.prim.multi else outs[0]
        elif lins is not None:
            out = None
        else:
            outs = [placeholder(s, d, D.AVAL) for s, d in self.out_avals]
            out = tuple(outs) if self.prim.multi else outs[0]
        return primals, out

    def vjp(self, cts: list[Any], needs: list[bool]) -> list[Any]:
        """Cotangents of the inputs: the transpose of the JVP, linearized at the saved
        values. The rule is traced into a linear program at stand-ins (placeholders) for
        the inputs asked for (``needs``), and the program transposed on the cotangents
        ``cts`` (Tensors, None where an output got none). The fast layer may put a VJP of
        its own in this place (``install_vjp``), which keeps this one as ``general_vjp``.
        """
        prim = self.prim
        lins = [placeholder(*self.avals[i]) if n else None for i, n in enumerate(needs)]
        primals, out = self._unpack()
        t, prog = linearize(self.name(), lambda: prim.jvp(primals, lins, out, **self.params))
        outs = t if prim.multi else (t,)
        return self._completed(cts, needs, transpose_program(prog, outs, cts, lins))

    general_vjp = vjp

    def _completed(self, cts: list[Any], needs: list[bool], res: list[Any]) -> list[Any]:
        """A rule's results ``res`` as the engine takes them: zeros for an input asked for
        that got none, batch axes summed out for an input that was not batched."""
        for i, n in enumerate(needs):
            if n and res[i] is None:  # a zero derivative (floor, sign): torch gives zeros
                res[i] = _zeros_for(cts, self.avals[i])
        return res if self.nbs is None else _sum_batch_axes(self, cts, res)


def install_vjp(vjp: Any) -> None:
    """Make ``vjp`` (``Node.vjp``'s signature, plus ``mine`` and ``dead``: see
    ``dualad.fast.transpose.vjp``) every node's VJP: the fast layer's registration of its
    transposes (the general one stays ``Node.general_vjp``)."""
    Node.vjp = vjp




def _saved_names(node: Node) -> dict[str, Any]:
    """torch's names of what a primitive's node saved (an input: ``self``, ``other``; an
    output: ``result``, or ``result0``... for several), each with its key in ``saved``."""
    if node.custom is not None or node.saved is None:  # (a custom Function: saved_tensors)
        return {}
    saved = node._saved_values() or {}
    names: dict[str, Any] = {}
    for k, sv in saved.items():
        if k == "out":
            many = node.prim.multi
            for j in range(len(sv)):
                if sv[j] is not None:
                    names[f"result{j}" if many else "result"] = ("out", j)
        elif k < 2:
            names[("self", "other")[k]] = k
    return names


def _saved_attribute(name: str) -> property:
    """``Node._saved_<n>`` / ``Node._raw_saved_<n>``: a value the node saved, under torch's
    name (``y.grad_fn._saved_self``, ``_other``, ``_result``); ``_raw_saved_...`` is the
    ``SavedTensor`` itself, for ``register_hooks``. (Properties, not ``__getattr__``: a
    class with ``__getattr__`` pays for it on every attribute read, and the engine reads a
    node's attributes on every step.)"""

    def get(node: Node) -> Any:
        key = _saved_key(node, name)
        if key is None:
            raise AttributeError(f"'{node.name()}' object has no attribute '{name}' (it saved "
                                 f"{sorted(_saved_names(node)) or 'nothing'})")
        st = SavedTensor(node, key, name[name.index("saved_") + 6:])
        return st if name.startswith("_raw") else st.value()

    return property(get)


def _saved_key(node: Node, name: str) -> Any:
    """The key in ``saved`` of ``_saved_<n>`` / ``_raw_saved_<n>``; None if not saved."""
    if node.saved is None and node.custom is None:
        node._unpack()  # raises torch's "after they have already been freed"
    return _saved_names(node).get(name[name.index("saved_") + 6:])


class SavedTensor:
    """A value a node saved (``grad_fn._raw_saved_self``): ``register_hooks(pack_hook,
    unpack_hook)`` packs it now and unpacks it whenever it is read, by
    ``grad_fn._saved_self`` or by backward.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x ** 2
    >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t.numpy(force=True).copy(),
    ...                                           dualad.tensor)
    >>> y.grad_fn._saved_self
    tensor([1., 2.], requires_grad=True)
    """

    __slots__ = ("node", "key", "what")

    def __init__(self, node: Node, key: Any, what: str) -> None:
        self.node, self.key, self.what = node, key, what

    def _slot(self) -> tuple[dict[Any, Any], Any]:
        node = self.node
        if node.saved is None:
            node._unpack()  # raises torch's "after they have already been freed"
        saved = node._saved_values()
        return (saved, self.key) if self.key.__class__ is not tuple else \
            (saved["out"], self.key[1])

    def value(self) -> Tensor:
        table, k = self._slot()
        return _saved(table[k], self.node, self.what)

    def register_hooks(self, pack_hook: Callable[[Tensor], Any],
                       unpack_hook: Callable[[Any], Any]) -> None:
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks takes two callables: pack_hook(tensor) and "
                            "unpack_hook(packed)")
        table, k = self._slot()
        old = table[k]
        if old.__class__ is SavedValue and old.unpack is not None:
            raise RuntimeError(
                f"The saved value '{self.what}' of {self.node.name()} already has hooks "
                "(registered before, or by saved_tensors_hooks when it was saved); a "
                "saved value takes one pair of hooks"
            )
        out = self.key.__class__ is tuple
        t = _saved(old, self.node, self.what)  # (checks that it was not changed since)
        sv = _new(SavedValue)
        if old.__class__ is SavedValue:
            sv.vc, sv.version, sv.nr = old.vc, old.version, old.nr
        else:  # an input kept bare, at version 0
            sv.vc, sv.version, sv.nr = t._version_counter(), 0, -1
        sv.edge = None if out or not t._requires_grad else edge_of(t)
        sv.packed = pack_hook(_alias(t) if out else t)
        sv.unpack = unpack_hook
        table[k] = sv
        self.node.saved_changed()

    def __repr__(self) -> str:
        return f"<SavedTensor '{self.what}' of {self.node.name()}>"


class FunctionNode(Node):
    """The node of a custom Function: an attribute it lacks is its ctx's, as torch's
    grad_fn of a Function is its ctx (``y.grad_fn.saved_tensors``, ``.needs_input_grad``,
    what forward stored on the ctx). A class of its own, so that the engine's lookups of
    attributes a node lacks stay C-level on every other node."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_"):
            try:
                params = self.params
            except AttributeError:
                params = None
            if params and "ctx" in params:
                return getattr(params["ctx"], name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def new_node(prim: Any, params: dict[str, Any], kind: type = Node) -> Node:
    """A Node of ``prim`` (``kind``: a custom Function's is a FunctionNode), initialised
    as ``record`` does (the hot path's recorders fill in the same fields inline)."""
    node = kind()
    _init_node(node, prim, params)
    if hooks_live[0] and _gm.anomaly_threads[0] and _gm.anomaly.on:
        node.metadata["traceback_"] = forward_trace()
    return node


def record_traced(prim: Any, args: Any, out: Any, params: dict[str, Any]) -> None:
    """``record``, and the node keeps the traceback of this forward call (anomaly mode:
    the core's ``record`` while some thread has it on: ``D.Recorder``)."""
    record(prim, args, out, params)
    if _gm.anomaly.on:
        node = (out[0] if prim.multi else out)._node
        if node is not None:
            node.metadata["traceback_"] = forward_trace()


_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package


def forward_trace() -> str:
    """The Python stack of the current forward call, up to the user's call into dualad."""
    frames = traceback.extract_stack()[:-1]
    while frames and (frames[-1].filename.startswith(_HERE)
                      or frames[-1].filename.startswith("<dualad")):
        frames.pop()
    return "".join(traceback.format_list(frames))


def _init_node(node: Node, prim: Any, params: dict[str, Any]) -> None:
    # created after the nodes of its inputs: a larger seq is later in topological order
    node.prim = prim
    node.params = params
    node.seq = next(_seq)
    node.saved = _NOTHING  # None once released
    node.hooked = False  # no tables yet (Node._table)
    node.custom = None
    node.nbs = None  # batch ranks of (output, *inputs) in the forward pass, if any
    node.leaf = None  # (not known)


class _Nothing(dict):  # type: ignore[type-arg]
    """A shared empty table; a node makes its own on the first registration."""

    def __setitem__(self, k: Any, v: Any) -> None:
        raise RuntimeError("internal: register through Node._table")


_NOTHING: dict[Any, Any] = _Nothing()


class _Read(_Nothing):
    """``Node.saved`` of a node that saved no tensor but whose rule reads the index arrays
    the user indexed with (``x[[0, 2]]``, ``c[[1, 2]] = v``): empty but true, so that
    backward releases it and a second pass raises, as torch's does (torch saves those
    indices and frees them). A node whose rule reads nothing (``x[1:]``) keeps
    ``_NOTHING``; so do dualad's own composites that gather with index arrays
    (``diagonal``, ``diag``: torch's save nothing) and a node that reads only a Python
    scalar (``x * 2.0``: a coefficient of the rule, as in ``mean``)."""

    def __bool__(self) -> bool:
        return True


_READ: dict[Any, Any] = _Read()


def _sum_batch_axes(node: Node, cts: list[Any], res: list[Any]) -> list[Any]:
    """An input that was unbatched in the forward pass gets the batch axes summed out."""
    from ..forward_ad import _with_nb
    from ..rules import vocabulary as F

    extra = next(c for c in cts if c is not None)._batch_ndim - node.nbs[0]  # the cotangents' own
    for i, r in enumerate(res):
        if r is None:
            continue
        want = extra + node.nbs[i + 1]
        if r._batch_ndim > want:
            k = r._batch_ndim - want
            full = _with_nb(r, 0)
            res[i] = _with_nb(F.sum(full, axis=tuple(range(extra, extra + k))), want)
    return res


def _zeros_for(cts: list[Any], aval: tuple[Any, Any]) -> Tensor:
    from ..rules.linear import zeros_batched

    return zeros_batched(aval[0], aval[1], next(c for c in cts if c is not None))


_ABSENT = object()


class AccumulateGrad:
    """The node of a leaf: accumulates incoming gradients into ``leaf.grad``."""

    __slots__ = ("variable", "seq", "pre_hooks", "hooks", "metadata", "tensor_pre_hooks",
                 "retain", "edges", "__weakref__")
    saved = None  # nothing to release
    hooked = True  # the engine runs leaves through its general path
    out_avals = (None,)  # one output (the engine counts them)

    def _table(self, name: str) -> dict[Any, Any]:
        return getattr(self, name)

    def __init__(self, leaf: Tensor) -> None:
        self.variable = leaf
        self.seq = next(_seq)
        self.pre_hooks: dict[int, Any] = {}
        self.hooks: dict[int, Any] = {}
        self.metadata: dict[Any, Any] = {}
        self.tensor_pre_hooks: dict[int, dict[int, Any]] = {}
        self.retain: dict[int, Any] = {}
        self.edges: list[Any] = []

    def name(self) -> str:
        return "AccumulateGrad"

    @property
    def leaf(self) -> AccumulateGrad:
        return self  # (the one leaf it leads to: see Node.leaf)

    @property
    def next_functions(self) -> tuple[()]:
        return ()

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        return RemovableHandle(self.hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        return RemovableHandle(self.pre_hooks, fn)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"


def edge_of(t: Tensor) -> tuple[Any, int]:
    """The (node, output index) a tensor's gradient flows into."""
    t = D.innermost(t)
    if t._node is not None:
        return (t._node, t._out_nr)
    m = t._meta_()
    if m.acc is None:
        m.acc = AccumulateGrad(t)
    return (m.acc, 0)


def _aval(a: Any) -> tuple[tuple[int, ...], Any]:
    if isinstance(a, Tensor):
        return a.shape, a._data.dtype
    arr = a if hasattr(a, "dtype") and hasattr(a, "shape") else np.asarray(a)  # (lazy stays)
    return arr.shape, arr.dtype


def record(prim: Any, args: Any, out: Any, params: dict[str, Any]) -> None:
    """Attach a node to ``out`` (the reverse-mode half of ``apply``).

    This runs once per recorded op, so it allocates as little as it can: inputs
    that are all Tensors share one ``consts`` tuple, a saved input at version 0
    is kept as the bare Tensor (see ``_saved``), and a node
    that saves nothing shares the empty ``_NOTHING``.
    """
    reads = prim.reads
    per_input = reads and reads[0].__class__ is tuple
    want = None if per_input else reads  # what the node saves: the reads of inputs with edges
    edges: list[Any] = []
    avals: list[Any] = []
    consts = None
    leaf: Any = _ABSENT  # (see Node.leaf)
    i = 0
    for a in args:
        if a.__class__ is Tensor:
            d = a._data
            avals.append((d.shape if not a._batch_ndim else a.shape, d.dtype))
            if a._requires_grad:
                inner = a._graph_holder() if a._level else a
                node_in = inner._node  # (an inference tensor may be an input: it is
                # refused where it is saved, below, as torch refuses it)
                e = (node_in, inner._out_nr) if node_in is not None else edge_of(inner)
                edges.append(e)
                lf = e[0].leaf
                leaf = lf if leaf is _ABSENT or leaf is lf else None
                if per_input and i < len(reads) and reads[i]:
                    want = reads[i] if want is None else want + reads[i]
            else:
                edges.append(None)
        else:
            # a Python scalar is kept as the constant itself; arrays by shape and dtype
            if consts is None:
                consts = [_ABSENT] * len(args)
            if a.__class__ in _SCALARS:
                consts[i] = a
                avals.append(None)
            else:
                if not hasattr(a, "shape"):
                    consts[i] = a
                avals.append(_aval(a))
            edges.append(None)
        i += 1
    node = Node()
    _init_node(node, prim, params)
    node.edges, node.avals = edges, avals
    if leaf is not _ABSENT:
        node.leaf = leaf
    node.consts = consts if consts is not None else _ABSENTS[i] if i < 8 else _all_absent(i)
    if prim.multi:
        node.out_avals = [(o.shape, o._data.dtype) for o in out]
        nb = out[0]._batch_ndim
    else:
        d = out._data
        nb = out._batch_ndim
        node.out_avals = ((d.shape if not nb else out.shape, d.dtype),)
    if nb:
        node.nbs = [nb] + [a._batch_ndim if a.__class__ is Tensor else 0 for a in args]
    if want:
        saved = _save_reads(prim, want, args, out, avals, i)
        if saved:  # (else only scalars were read: nothing to release, as for add)
            node.saved = saved
    if params and node.saved is _NOTHING and prim.name == "setitem":
        idx = params.get("idx")
        if idx is not None and not idx.basic:  # (a write at index arrays: c[[1, 2]] = v)
            node.saved = _READ
    if prim.multi:
        for k, o in enumerate(out):
            _set_node(o, node, k)
    elif not out._level:
        out._requires_grad, out._node, out._out_nr = True, node, 0
    else:
        _set_node(out, node, 0)


def _save_reads(prim: Any, want: Any, args: Any, out: Any, avals: list[Any],
                n: int) -> dict[Any, Any]:
    """What ``record`` saves of a call: the values ``want`` names (positions of the ``n``
    inputs; ``"out"``, ``"out<k>"``, ``"<k> if complex"``), each input at version 0 as the
    bare Tensor unless saved-tensor hooks are on, else as a ``SavedValue``; a Python
    scalar is not saved (it is in the node's ``consts``)."""
    saved = {}
    plain = not _hooks_on()
    for r in want:
        if r in saved:
            continue
        if r.__class__ is str:
            if r == "out":
                saved["out"] = [_save_output(o, k, plain) for k, o in enumerate(out)] \
                    if prim.multi else [_save_output(out, 0, plain)]
                continue
            if r[0] == "o":  # "out<k>": output k of several alone (None: not read)
                k = int(r[3:])
                outs = saved.get("out") or [None] * len(out)
                outs[k] = _save_output(out[k], k, plain)
                saved["out"] = outs
                continue
            # "<k> if complex": input k, read by the rule only if it is complex (the
            # real derivative of sign and angle is 0: torch's real sign saves nothing)
            r = int(r.split()[0])
            if r in saved or avals[r] is None or avals[r][1].kind != "c":
                continue
        if r < n:
            a = args[r]
            if a.__class__ is not Tensor:
                if a.__class__ in _SCALARS:
                    continue  # a Python scalar: kept in consts already
                a = _make(a if a.__class__ is _ndarray else _as_array(a))
            elif a._meta is not None:
                _savable(a)
            saved[r] = a if plain and not a._version else SavedValue(a)
    return saved


def _savable(a: Tensor) -> None:
    """Raise for an inference tensor (made in inference mode): torch's rule."""
    if a._meta.inference:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. To work around you can "
            "make a clone to get a normal tensor and use it in autograd."
        )


_ABSENTS: list[tuple[Any, ...]] = []
_ONE = (True,)
_EVERY2 = (((False, False), (False, True)), ((True, False), (True, True)))  # [edge 0][edge 1]


def _all_absent(n: int) -> tuple[Any, ...]:
    """One shared ``(_ABSENT,) * n`` per arity: nodes only read their consts."""
    while len(_ABSENTS) <= n:
        _ABSENTS.append((_ABSENT,) * len(_ABSENTS))
    return _ABSENTS[n]


_all_absent(8)  # (the common arities, looked up without a call)


_SCALARS = frozenset((int, float, complex, bool))  # (a set: membership by hash, not by ==)


def _set_node(t: Tensor, node: Any, k: int) -> None:
    """Make ``node`` (output ``k``) the grad_fn of ``t`` and of each primal below it
    (``Tensor._set_graph_fields``: an unmade primal takes it when made, so recording
    leaves a dual's parts unmade)."""
    if not t._level:
        t._requires_grad, t._node, t._out_nr = True, node, k
    else:
        t._set_graph_fields(True, node, k)


def _keeps_index(node: Node) -> None:
    """A node of ``x[key]`` written by the user: with index arrays in ``key``, release them
    after backward (``_Read``)."""
    if node.saved is _NOTHING and node.prim.name == "getitem" and not node.params["idx"].basic:
        node.saved = _READ


class GraphRecorder(D.Recorder):
    """Reverse mode's recorder, the core's one slot for it (``D.Recorder``): nodes of
    this module's graph."""

    __slots__ = ()
    record = staticmethod(record)
    record_traced = staticmethod(record_traced)
    edge_of = staticmethod(edge_of)
    keeps_index = staticmethod(_keeps_index)


D.install_recorder(GraphRecorder())


for _n in ("self", "other", "result", "result0", "result1", "result2", "result3"):
    for _attr in (f"_saved_{_n}", f"_raw_saved_{_n}"):
        setattr(Node, _attr, _saved_attribute(_attr))
