"""Inspecting and intervening in the reverse graph: what ``dualad.graph`` holds.

``Node`` is the class every ``grad_fn`` is an instance of (a recorded
operation's node and a leaf's ``AccumulateGrad`` both register with it), a
``GradientEdge`` names where a tensor's gradient flows, and the context
managers set thread-local pack/unpack hooks for the values nodes save. The
saving side lives in ``graph.SavedValue``: it reads ``graph.saved_hooks`` only
while ``graph.hooks_live`` counts a pushed pair, so recording with no hooks
costs what it did before.
"""

from __future__ import annotations

import abc
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core import dispatch as D
from ..core.tensor import Tensor, _make
from . import engine, graph
from .edge import GradientEdge
from .graph import AccumulateGrad, RemovableHandle, edge_of

__all__ = [
    "Node", "GradientEdge", "get_gradient_edge", "increment_version",
    "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "saved_tensors_hooks",
    "save_on_cpu", "disable_saved_tensors_hooks",
]


class Node(abc.ABC):
    """The class every ``grad_fn`` is an instance of (``isinstance(y.grad_fn, Node)``).

    A node has ``name()``, ``metadata`` (a dict for your own annotations),
    ``next_functions`` (the ``(node, output_nr)`` its inputs' gradients flow into),
    ``register_hook(fn)`` (``fn(grad_inputs, grad_outputs)`` after it ran) and
    ``register_prehook(fn)`` (``fn(grad_outputs)`` before).

    Examples
    --------
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> y = dualad.numpy.exp(x)
    >>> isinstance(y.grad_fn, dualad.graph.Node), y.grad_fn.name()
    (True, 'ExpBackward0')
    >>> y.grad_fn.next_functions[0][0].name()
    'AccumulateGrad'
    """

    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Any, int], ...]: ...

    @property
    @abc.abstractmethod
    def metadata(self) -> dict[Any, Any]: ...

    @abc.abstractmethod
    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle: ...

    @abc.abstractmethod
    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle: ...


Node.register(graph.Node)
Node.register(AccumulateGrad)


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The ``GradientEdge`` of ``tensor``: the gradient with respect to it.

    It stays valid when the tensor itself is gone or modified in place, so
    ``dualad.grad(out, edge)`` gives the gradient with respect to the value the
    tensor had when ``out`` was computed from it.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 2
    >>> edge = dualad.graph.get_gradient_edge(y)
    >>> dualad.grad((y ** 2).sum(), edge)
    (tensor([4., 8.]),)
    """
    if not isinstance(tensor, Tensor) or not tensor._requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients; call .requires_grad_() on it (a leaf) or compute it from one that does"
        )
    return GradientEdge(*edge_of(tensor))


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Count an in-place change made behind dualad's back (by writing into
    ``tensor.numpy(force=True)``, say): backward then refuses the values saved
    before it, as after any in-place operation.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 1.0
    >>> z = (y ** 2).sum()
    >>> dualad.graph.increment_version(y)
    >>> z.backward()
    Traceback (most recent call last):
    ...
    RuntimeError: one of the variables needed for gradient computation has been modified ...
    """
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version expects Tensors, got {type(t).__name__}")
        t._version_counter()[0] += 1


# -- multi-grad hooks -------------------------------------------------------------------


class _MultiGradHook:
    """One ``register_multi_grad_hook``: a tensor pre-hook at each tensor's edge, and,
    at the start of each backward pass (``engine.on_start``), the set of those edges the
    pass will compute a gradient for."""

    def __init__(self, edges: list[tuple[Any, int]], fn: Callable[..., Any], mode: str) -> None:
        self.refs = [(weakref.ref(n), nr) for n, nr in edges]
        self.fn, self.mode = fn, mode
        self.lock = threading.Lock()
        self.grads: list[Any] = [None] * len(edges)
        self.waiting: set[int] = set()
        self.fired = False

    def start(self, roots: list[Any], need: dict[Any, Any] | None) -> None:
        nodes = [r() for r, _ in self.refs]
        if all(n is None for n in nodes):  # the graph is gone: nothing will call it again
            self.remove()
            return
        reached = _reachable(roots)
        with self.lock:
            self.grads = [None] * len(nodes)
            self.fired = False
            self.waiting = {i for i, n in enumerate(nodes) if n is not None and n in reached
                            and (need is None or n in need)}

    def hook(self, i: int, g: Tensor) -> None:
        with self.lock:
            if self.mode == "any":
                if self.fired:
                    return
                self.fired = True
                call: Any = (g,)
            else:
                if i not in self.waiting:
                    return
                self.waiting.discard(i)
                self.grads[i] = g
                if self.waiting:
                    return
                call = (tuple(self.grads),)
                self.grads = [None] * len(self.grads)
        self.fn(*call)

    def remove(self) -> None:
        if self in engine.on_start:
            engine.on_start.remove(self)


def _reachable(roots: list[Any]) -> set[Any]:
    seen: set[Any] = set()
    stack = [n for n, _ in roots]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(e[0] for e in n.edges if e is not None)
    return seen


class _Handles:
    def __init__(self, multi: _MultiGradHook, handles: list[RemovableHandle]) -> None:
        self.multi, self.handles = multi, handles

    def remove(self) -> None:
        self.multi.remove()
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _Handles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Iterable[Tensor], fn: Callable[..., Any], *,
                             mode: str = "all") -> Any:
    """Call ``fn`` once the gradients of ``tensors`` are computed.

    ``mode="all"``: after every tensor's gradient that the backward pass computes
    has been computed, ``fn(grads)`` with ``None`` for the tensors the pass does
    not reach (not in its graph, or not needed for its ``inputs``).
    ``mode="any"``: ``fn(grad)`` with the first gradient computed, once per
    pass. ``fn`` must not modify its arguments. Returns a handle with
    ``remove()``.

    Examples
    --------
    >>> a = dualad.ones((2, 3), requires_grad=True)
    >>> b = dualad.ones((2, 3), requires_grad=True)
    >>> c, d = a * b, a * b
    >>> h = dualad.graph.register_multi_grad_hook(
    ...     (a, b, c, d), lambda grads: print([g is not None for g in grads]))
    >>> c.sum().backward(retain_graph=True)
    [True, True, True, False]
    >>> c.sum().backward(inputs=(a,), retain_graph=True)
    [True, False, True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for t in tensors:
        if not isinstance(t, Tensor) or not t._requires_grad:
            raise RuntimeError("register_multi_grad_hook: every tensor must require grad "
                               "(call .requires_grad_() on the leaves first)")
    edges = [edge_of(D.innermost(t)) for t in tensors]
    multi = _MultiGradHook(edges, fn, mode)
    handles = []
    for i, (node, nr) in enumerate(edges):
        table = node._table("tensor_pre_hooks").setdefault(nr, {})
        handles.append(RemovableHandle(table, _bound(multi, i)))
    engine.on_start.append(multi)
    return _Handles(multi, handles)


def _bound(multi: _MultiGradHook, i: int) -> Callable[[Tensor], None]:
    def pre(g: Tensor) -> None:
        multi.hook(i, g)

    return pre


# -- saved-tensor hooks -------------------------------------------------------------------

_count = graph.hooks_live_lock


def _push(pair: tuple[Callable[[Any], Any], Callable[[Any], Any]]) -> None:
    graph.saved_hooks.stack.append(pair)
    with _count:
        graph.hooks_live[0] += 1


def _pop(pair: tuple[Callable[[Any], Any], Callable[[Any], Any]]) -> None:
    """Pop ``pair`` (the innermost push of it), if a backward pass has not already taken
    it off (``graph.restore_saved_hooks``: a context entered in a hook, exited after the pass)."""
    stack = graph.saved_hooks.stack
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is pair:
            del stack[i]
            with _count:
                graph.hooks_live[0] -= 1
            return


class saved_tensors_hooks:
    """Set ``pack_hook``/``unpack_hook`` for the values nodes save in this block.

    ``pack_hook(tensor)`` is called once for every value an operation saves
    for backward (a custom Function's ``save_for_backward`` included) and
    what it returns is kept instead; ``unpack_hook(packed)`` is called each
    time backward needs the value and must return a Tensor (or array) of the
    same content. The hooks are thread-local; when nested, the innermost pair
    applies.

    Examples
    --------
    >>> a = dualad.ones(3, requires_grad=True)
    >>> with dualad.graph.saved_tensors_hooks(lambda t: t.numpy(force=True).copy(),
    ...                                       lambda a: dualad.as_tensor(a)):
    ...     y = (a * a).sum()
    >>> y.backward(); a.grad
    tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Any]) -> None:
        self.pair = (pack_hook, unpack_hook)

    def __enter__(self) -> None:
        msg = graph.saved_hooks.disabled
        if msg is not None:
            raise RuntimeError(msg)
        _push(self.pair)

    def __exit__(self, *exc: object) -> None:
        _pop(self.pair)


def _host_pack(t: Tensor, pin: bool) -> Any:
    d = t._data
    if d.__class__ is np.ndarray or not hasattr(d, "get"):
        return t  # already in host memory: nothing to move
    import cupyx

    host = cupyx.empty_pinned(d.shape, d.dtype) if pin else np.empty(d.shape, d.dtype)
    d.get(out=host)
    return _OnHost(host, d.device.id)


class _OnHost:
    __slots__ = ("host", "device")

    def __init__(self, host: np.ndarray, device: int) -> None:
        self.host, self.device = host, device


def _from_host(p: Any) -> Any:
    if p.__class__ is not _OnHost:
        return p
    import cupy

    with cupy.cuda.Device(p.device):
        return _make(cupy.asarray(p.host))


class save_on_cpu(saved_tensors_hooks):
    """Keep the values saved in this block in host memory until backward needs them.

    A saved CuPy array is copied to host memory (pinned if ``pin_memory``) and
    back to its device when backward reads it. NumPy arrays are in host memory
    already: then this changes nothing.

    Examples
    --------
    >>> x = dualad.ones(3, requires_grad=True)
    >>> with dualad.graph.save_on_cpu():
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        pin = bool(pin_memory)
        super().__init__(lambda t: _host_pack(t, pin), _from_host)


class disable_saved_tensors_hooks:
    """Refuse saved-tensor hooks in this block: entering ``saved_tensors_hooks``
    (or ``save_on_cpu``) raises ``RuntimeError(error_message)``.

    Examples
    --------
    >>> with dualad.graph.disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with dualad.graph.save_on_cpu():
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks here
    """

    def __init__(self, error_message: str) -> None:
        self.message = error_message

    def __enter__(self) -> None:
        self.prev = graph.saved_hooks.disabled
        graph.saved_hooks.disabled = self.message

    def __exit__(self, *exc: object) -> None:
        graph.saved_hooks.disabled = self.prev


class allow_mutation_on_saved_tensors:
    """Allow in-place changes of values saved for backward in this block.

    Each value saved in the block is copied when saved (dualad has no
    copy-on-write), so backward uses the value it had then, whatever
    in-place operation changes it afterwards. Run the forward pass in the
    block (backward may run anywhere).

    Examples
    --------
    >>> import dualad.numpy as dnp
    >>> with dualad.graph.allow_mutation_on_saved_tensors():
    ...     a = dualad.ones((2, 3), requires_grad=True)
    ...     b = a * 1.0
    ...     out = (b ** 2).sum()
    ...     b[...] = dnp.sin(b)
    ...     out.backward()
    >>> a.grad
    tensor([[2., 2., 2.],
            [2., 2., 2.]])
    """

    def __enter__(self) -> allow_mutation_on_saved_tensors:
        msg = graph.saved_hooks.disabled
        if msg is not None:
            raise RuntimeError(msg)
        self.pair = (graph.copy_saved, _same)
        _push(self.pair)
        return self

    def __exit__(self, *exc: object) -> None:
        _pop(self.pair)


def _same(p: Any) -> Any:
    return p
