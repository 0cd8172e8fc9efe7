"""The engine: ``backward`` and ``grad`` walk the graph in reverse topological order.

Per node, the cotangents of its outputs go through the node's VJP (the
transpose of its linearized JVP rule) and accumulate at the nodes of its
inputs. Leaves accumulate into ``.grad``; ``grad()`` captures instead.

This is the general path: ``run`` -> ``general_pass`` -> ``_run_general``, every
node by ``_run_node``, every cotangent a Tensor. The fast layer
(``dualad.fast.engine``) puts a pass of its own in its place through ``install``
(the slots below).
"""

from __future__ import annotations

import heapq
import operator
import warnings
from typing import Any

import numpy as np

from .. import _fpfilter
from ..backends import namespace as _backend
from ..backends.namespace import like as _like
from ..core import dispatch as D
from ..core import grad_mode as gm
from ..core.tensor import Tensor, _make
from ..forward_ad import _unpack, _with_nb
from .edge import GradientEdge as EDGE  # (grad's inputs may be edges)
from .graph import (
    _EVERY2,
    _ONE,
    AccumulateGrad,
    edge_of,
    restore_saved_hooks,
    saved_hooks,
)


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    if isinstance(x, Tensor) or x.__class__ is EDGE:
        return (x,)
    return tuple(x)


def _why_no_grad(o: Any) -> str:
    """Why the output ``o`` of a backward pass has no graph, and what to do (the error's
    second half; read only when raising)."""
    if not isinstance(o, Tensor):
        return (f": it is a {type(o).__name__}, not a Tensor; differentiate Tensors computed "
                "from inputs that require grad")
    if o.dtype.kind not in "fc":
        return (f": it has dtype {o.dtype}, and integer and boolean results (an integer "
                "cast such as astype(int), a comparison, argmax, floor_divide) carry no "
                "derivative. Keep the computation in floating point up to the loss (e.g. "
                "dnp.floor(x) rather than x.astype(int)).")
    inner = D.innermost(o)
    for t in (o, inner):
        if getattr(t, "_why", None) == "no_grad":
            return (": it was computed while grad mode was off (inside dualad.no_grad(), "
                    "or set_grad_enabled(False)), which records no graph even from inputs "
                    "that require grad. Compute it outside no_grad() to differentiate it.")
        if t._meta is not None and t._meta.inference:
            return (": it was made in dualad.inference_mode(), which records no graph. "
                    "Compute it outside inference_mode() to differentiate it.")
    # (only the result of an operation on an input that requires grad is marked under
    # no_grad: marking what is computed from it would cost every operation a check)
    return (": it is a constant — none of the tensors it was computed from requires grad: "
            "they never did, were detached, were integer results (x.astype(int), argmax), "
            "or were themselves computed inside no_grad(). "
            "Make the inputs require grad (dualad.tensor(..., requires_grad=True) or "
            "x.requires_grad_() on a leaf) and compute it from them with grad mode on.")


def _root_cts(outputs: tuple[Tensor, ...], grads: Any, batched: bool) -> list[Tensor]:
    grads = (None,) * len(outputs) if grads is None else _as_tuple(grads)
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"grad_tensors/grad_outputs has {len(grads)} entries, but there are "
            f"{len(outputs)} outputs; give one per output (None for scalar outputs)"
        )
    cts = []
    for i, (o, g) in enumerate(zip(outputs, grads, strict=True)):
        if o.__class__ is EDGE:  # a GradientEdge: the value of that output, by its aval
            n, nr = o
            o = n.variable if n.__class__ is AccumulateGrad else \
                _make(np.empty(*n.out_avals[nr])) if n.out_avals[nr] is not None else None
            if o is None:
                raise RuntimeError(f"output {i} is a GradientEdge of an output without a value")
            o = D.innermost(o).detach().requires_grad_()  # (only its shape and dtype are read)
        if not isinstance(o, Tensor) or not o._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
                + _why_no_grad(o))
        if g is None:
            if o.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs; pass a gradient "
                    f"of shape {o.shape} (output {i} has that shape)"
                )
            if o.dtype.kind == "c":
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs; pass a "
                    "gradient for the complex output"
                )
            g = _make(_backend.ones(o.shape, dtype=o.dtype, like=_like(o._data)))
        elif not isinstance(g, Tensor):
            g = _make(_backend.asarray(g, dtype=o.dtype))  # (a Dask array stays lazy)
        want = o.shape
        got = g.shape[1:] if batched else g.shape
        if got != want:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {o.shape}" + (" (plus a leading batch axis)" if batched else "")
            )
        if g.dtype != o.dtype:
            if (g.dtype.kind == "c") != (o.dtype.kind == "c"):  # (torch's check: a real
                raise RuntimeError(  # part taken, or a real one made complex, hides a slip)
                    "For complex Tensors, both grad_output and output are required to have "
                    f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                    f"{g.dtype} and output[{i}] has a dtype of {o.dtype}; convert it: "
                    + (f"grad_output.real.astype({str(o.dtype)!r}) if you mean its real part"
                       if o.dtype.kind != "c" else f"grad_output.astype({str(o.dtype)!r})"))
            g = g.astype(o.dtype)
        cts.append(_with_nb(g, 1) if batched else g)
    return cts


def _needed(roots: list[Any], targets: set[Any]) -> dict[Any, list[bool]] | None:
    """Nodes from which some target is reachable (only those run), each with the list of
    its edges that lead to a target (the inputs whose cotangents are wanted); None when
    that is every node reached and each of its edges (each leaf reached is a target)."""
    seen: set[Any] = set()
    stack = [n for n, _ in roots]
    pop, push, add = stack.pop, stack.append, seen.add
    every = True
    while stack:
        n = pop()
        while n not in seen:  # (down a chain without the stack)
            add(n)
            edges = n.edges
            if not edges and n not in targets:  # a leaf that was not asked for
                every = False
            nxt = None
            for e in edges:
                if e is not None:
                    if nxt is not None:
                        push(nxt)
                    nxt = e[0]
            if nxt is None:
                break
            n = nxt
    if every:  # (a node has an edge to some input that requires grad: it reaches a leaf)
        return None
    nodes = sorted(seen, key=_by_seq)  # inputs before outputs: children before parents
    need: dict[Any, list[bool]] = {}
    for n in nodes:
        needs = []  # (a loop, not a comprehension: this runs once per node)
        for e in n.edges:
            needs.append(e is not None and e[0] in need)
        if True in needs or n in targets:
            need[n] = needs
    return need


def _check_input(t: Any, k: int) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"inputs[{k}] is a {type(t).__name__}; differentiate with respect to "
                        "Tensors (or GradientEdges from dualad.graph.get_gradient_edge)")
    if not t._requires_grad:
        raise RuntimeError(
            f"One of the differentiated Tensors does not require grad: inputs[{k}] (shape "
            f"{t.shape}) has requires_grad=False. Make it require grad before computing the "
            "outputs from it (x.requires_grad_() on a leaf, or "
            "dualad.tensor(..., requires_grad=True))"
        )


on_start: list[Any] = []  # what each backward pass tells where it starts (.hooks)
_by_seq = operator.attrgetter("seq")
_ndarray = np.ndarray


def run(outputs: tuple[Tensor, ...], cts: list[Tensor], **kw: Any) -> list[Any]:
    """The backward pass (``backward_pass``), with the thread's saved-tensor hooks as
    they were before it afterwards, as torch's engine restores them: a
    ``saved_tensors_hooks`` context entered in a hook during the pass and never exited
    (or ``disable_saved_tensors_hooks``) would otherwise pack every later graph of the
    process. Two reads of a thread-local a pass, and a comparison."""
    hs = saved_hooks
    stack, disabled = hs.stack, hs.disabled
    before = stack[:] if stack else None
    try:
        return backward_pass(outputs, cts, **kw)
    finally:
        now = hs.stack
        if (now != before if before is not None else now) or hs.disabled is not disabled:
            restore_saved_hooks(before or [], disabled)


def begin(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...] | None,
          ) -> tuple[list[Any], dict[Any, int], list[tuple[int, int]], set[Any] | None]:
    """A pass's roots (an edge per output), its captures (``(node, nr)`` -> the position
    of that input in ``inputs``; ``node`` -> -1, marking a node with captured outputs),
    the inputs given twice (``(position, its first position)``) and the nodes asked for
    (None without ``inputs``)."""
    _fpfilter.in_front()  # (a rule's warnings, raised and declined on: see _fpfilter)
    roots = [o if o.__class__ is EDGE else edge_of(o) for o in outputs]
    captures: dict[Any, int] = {}
    again: list[tuple[int, int]] = []
    if inputs is None:
        return roots, captures, again, None
    for k, t in enumerate(inputs):
        if t.__class__ is EDGE:  # a GradientEdge (dualad.graph)
            node, nr = t
        else:
            _check_input(t, k)
            node, nr = edge_of(t)
        if (node, nr) in captures:
            again.append((k, captures[node, nr]))
            continue
        captures[(node, nr)] = k
        captures[node] = -1
    return roots, captures, again, {key for key in captures if key.__class__ is not tuple}


def general_pass(
    outputs: tuple[Tensor, ...],
    cts: list[Tensor],
    *,
    retain_graph: bool,
    create_graph: bool,
    inputs: tuple[Tensor, ...] | None,
    capture: bool,
    retain: bool = True,
) -> list[Any]:
    """The backward pass: the cotangents of ``outputs`` (``cts``) sent back through the
    graph, every node run by ``_run_node`` in reverse topological order (``_run_general``).
    ``inputs``: the tensors whose gradients are wanted (only the nodes that lead to one
    run); ``capture``: their gradients are returned (``grad``), else accumulated into
    ``.grad`` (``backward``); ``retain``: a non-leaf's retained ``.grad`` is written."""
    roots, captures, again, targets = begin(outputs, inputs)
    need = _needed(roots, targets) if targets is not None else None
    got: list[Any] = [None] * (len(inputs) if inputs is not None else 0)
    if on_start:  # (multi-grad hooks: which of their tensors this pass reaches)
        for f in list(on_start):
            f.start(roots, need)
    buf: dict[Any, list[Any]] = {}
    heap: list[Any] = []
    own: dict[Any, Any] = {}
    for (n, nr), c in zip(roots, cts, strict=True):
        add_cotangent(buf, heap, n, nr, c, own)
    anomaly = gm.anomaly_threads[0] and gm.anomaly.on
    with gm.enable_grad() if create_graph else gm.no_grad():
        _run_general(buf, heap, need, captures, got, capture, create_graph, retain_graph,
                     retain, anomaly and gm.anomaly.check_nan, anomaly, own)
    for k, first in again:
        got[k] = got[first]
    return got


def _run_general(buf: Any, heap: Any, need: Any, captures: Any, got: Any, capture: bool,
                 create_graph: bool, retain_graph: bool, retain: bool, nan: bool = False,
                 anomaly: bool = False, own: Any = None) -> None:
    """The engine's loop: every node from the heap (decreasing ``seq``: a node is made
    after the nodes of its inputs, so when it is popped every cotangent for it has
    arrived) by ``_run_node``, its results checked for NaN (``nan``), an error shown with
    the traceback of the forward call that made the node (``anomaly``), each node an
    event of the profiler. ``own``: passed on to ``add_cotangent``."""
    prof = profiling[0]
    while heap:
        node = heapq.heappop(heap)[1]
        grads = buf.pop(node)
        needs = None
        if need is not None:
            needs = need.get(node)
            if needs is None:
                continue
        ev = prof.begin(node.name(), grads) if prof is not None else None
        try:
            ran = _run_node(node, grads, needs, captures, got, capture, create_graph, buf, heap,
                            own, retain, nan)
        except Exception:
            if anomaly:
                _show_forward_trace(node)
            raise
        finally:
            if ev is not None:
                prof.end(ev)
        if ran and not retain_graph and node.saved:
            node.release()


def _show_forward_trace(node: Any) -> None:
    meta = node.metadata if node.__class__ is AccumulateGrad or node.hooked else {}
    tb = meta.get("traceback_")
    if tb is None:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information "
                      "available. Enable detect anomaly during forward pass for more "
                      "information.", stacklevel=4)
    else:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{tb}", stacklevel=4)


def _check_nan(node: Any, res: list[Any]) -> None:
    for i, r in enumerate(res):
        if r is None:
            continue
        (r,) = written([r])
        a = D.innermost(r)._data
        if a.dtype.kind in "fc" and bool(np.isnan(a).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


profiling: list[Any] = [None]  # the active profiler (dualad.profiler), if any


def _every(edges: list[Any]) -> Any:
    """The needs of a node whose every edge is wanted (edges are None for constants)."""
    if len(edges) == 1:
        return _ONE  # (a node has an edge)
    if len(edges) == 2:
        return _EVERY2[edges[0] is not None][edges[1] is not None]
    return [e is not None for e in edges]


class _NoTangent:
    """What an input of which only a tangent is wanted captures when the cotangents that
    reached it had none (``run``'s ``tangent``)."""

    __slots__ = ()


NO_TANGENT = _NoTangent()


def _add_general(buf: dict[Any, list[Any]], heap: list[Any], node: Any, nr: int, c: Any,
                 own: Any = None) -> None:
    """Accumulate cotangent ``c`` for output ``nr`` of ``node`` (a sum of Tensors),
    scheduling the node on its first cotangent. (``own``: the fast layer's, see
    ``add_cotangent``.)"""
    slot = buf.get(node)
    if slot is None:
        heapq.heappush(heap, (-node.seq, node))
        slot = buf[node] = [None] * len(node.out_avals)
    a = slot[nr]
    slot[nr] = c if a is None else a + c


def _as_given(cts: list[Any]) -> list[Any]:
    """The cotangents as the general path makes them: Tensors (see ``written``)."""
    return cts


# -- the slots the fast layer fills (``dualad.fast.engine.install``) -----------------------
# Each is read as a module global where it is used, so a pass pays no extra call for it.
backward_pass: Any = general_pass
"""How ``run`` makes a backward pass: ``general_pass``'s signature (the fast layer's also
takes ``tangent``, a dual level whose tangent alone is summed at the inputs)."""
add_cotangent: Any = _add_general
"""``add_cotangent(buf, heap, node, nr, c, own)``: how a cotangent accumulates at a node
(the fast layer's also takes bare arrays, slices' cotangents kept unwritten, cotangents
held alone that it sums in place: ``own``)."""
written: Any = _as_given
"""``written(cts)``: cotangents as the Tensors hooks, captures, ``.grad`` and the general
path see (the fast layer's writes out its bare arrays and unwritten cotangents)."""
sums_tangents = False
"""Whether ``backward_pass`` takes ``tangent`` (``grad_tangents``)."""


def install(pass_: Any = None, add: Any = None, write: Any = None,
            tangents: bool = False) -> None:
    """Fill the engine's slots with the fast layer's: a backward pass (``pass_``), how a
    cotangent accumulates (``add``), how cotangents are written out as Tensors
    (``write``), and whether the pass can sum tangents alone (``tangents``). A slot given
    None keeps the general path's."""
    global backward_pass, add_cotangent, written, sums_tangents
    if pass_ is not None:
        backward_pass = pass_
    if add is not None:
        add_cotangent = add
    if write is not None:
        written = write
    sums_tangents = tangents


def _run_node(node: Any, grads: list[Any], needs: list[bool] | None, captures: dict[Any, int],
              got: list[Any], capture: bool, create_graph: bool, buf: Any, heap: Any,
              own: dict[Any, Any], retain: bool, nan: bool = False) -> bool:
    """The general way through one node (hooks, captures, leaves); whether its rule ran
    (a captured input that leads to no other one asked for stops there, as in torch,
    keeping what its node saved)."""
    grads = written(grads)  # hooks, captures and .grad see Tensors, never bare arrays
    hooked = node.hooked  # (a node captured here may have no hook tables)
    if hooked and node.tensor_pre_hooks:
        for nr, hooks in node.tensor_pre_hooks.items():
            for fn in list(hooks.values()):
                if grads[nr] is not None:
                    r = fn(grads[nr])
                    if r is not None:
                        grads[nr] = r
    if retain and hooked and node.retain:
        for nr, ref in node.retain.items():
            t = ref()
            if t is not None and grads[nr] is not None:
                g = grads[nr] if create_graph else grads[nr].detach()
                m = t._meta_()
                m.grad = g if m.grad is None else m.grad + g
    leaf = node.__class__ is AccumulateGrad
    if leaf:  # a leaf's own tensor hooks, then its AccumulateGrad's pre-hooks (torch's order)
        m = node.variable._meta
        if m is not None and m.hooks and grads[0] is not None:
            for fn in list(m.hooks.values()):
                r = fn(grads[0])
                if r is not None:
                    grads[0] = r
    if leaf and node.pre_hooks and retain:  # (grad() does not run AccumulateGrad: it
        # captures; ``retain``: a pass that writes .grad, backward's)
        for fn in list(node.pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = list(r)
    if node in captures:  # (what the tensor's hooks gave: before the node's own pre-hooks)
        for nr, g in enumerate(grads):
            k = captures.get((node, nr))
            if k is not None and g is not None:
                got[k] = g if got[k] is None else got[k] + g
    edges = node.edges
    if needs is None:
        needs = _every(edges) if edges else ()
    if not leaf and True not in needs and capture:
        return False  # grad(): a captured input the pass ends at: its node does not run, nor
        # its hooks (backward(inputs=[a non-leaf]) runs it, as torch's does: its hooks see
        # it run, and it sends nothing on)
    if hooked and node.pre_hooks and not leaf:
        for fn in list(node.pre_hooks.values()):
            r = fn(tuple(grads))
            if r is not None:
                grads = list(r)
    if leaf:
        if not capture and grads[0] is not None:
            m = node.variable._meta
            first = m is None or m.grad is None
            _accumulate(node.variable, grads[0], create_graph, False)
            if first:  # (torch's AccumulateGrad keeps the gradient it got as the new .grad:
                grads[0] = node.variable._meta.grad  # its post-hooks see .grad itself)
            for fn in list(node.hooks.values()):  # (its post-hooks: no grad_inputs)
                fn((), tuple(grads))
        return True
    res = _custom(node, grads, needs, buf, heap) if node.custom is not None else \
        node.vjp(grads, needs)
    if nan:  # (anomaly mode)
        _check_nan(node, res)
    if hooked and node.hooks:  # hooks see Tensors, and may keep them
        res = written(res)
        for fn in list(node.hooks.values()):
            r = fn(tuple(res), tuple(grads))
            if r is not None:
                res = list(r)
    for e, r, n in zip(edges, res, needs, strict=True):
        if n and r is not None:
            add_cotangent(buf, heap, e[0], e[1], r, own)
    return True


def _custom(node: Any, grads: list[Any], needs: Any, buf: Any, heap: Any) -> list[Any]:
    """Run a custom Function's node. Where its rule gives no gradient (None) for an input
    that wants one, torch's engine passes an undefined gradient on, and the nodes it
    reaches still run: operations pass it on as undefined (so the pass here, which sends
    nothing, gives the same), a leaf ignores it, but a custom Function's backward is
    called, with zeros in its place (``set_materialize_grads(True)``, the default) or
    None, and may give gradients of its own. So the custom Functions it reaches are
    scheduled here, with no gradient yet (one that arrives later joins it)."""
    res = node.custom(grads, needs)
    for e, r, n in zip(node.edges, res, needs, strict=False):
        if r is None and n and e is not None:
            _reach_custom(e[0], buf, heap)
    return res


def _reach_custom(start: Any, buf: Any, heap: Any) -> None:
    """Schedule the custom Functions' nodes that an undefined gradient sent to ``start``
    reaches through other operations (see ``_custom``)."""
    stack, seen = [start], set()
    while stack:
        m = stack.pop()
        if m in seen or m in buf:  # (scheduled: it runs anyway, and sends gradients on)
            continue
        seen.add(m)
        if m.__class__ is AccumulateGrad:
            continue
        if m.custom is not None:
            heapq.heappush(heap, (-m.seq, m))
            buf[m] = [None] * len(m.out_avals)
        else:
            stack.extend(e[0] for e in m.edges if e is not None)


def _accumulate(leaf: Tensor, g: Tensor, create_graph: bool, hooks: bool = True) -> None:
    m = leaf._meta_()
    for fn in list(m.hooks.values()) if hooks else ():
        r = fn(g)
        if r is not None:
            g = r
    if g._batch_ndim:
        raise RuntimeError("backward with batched gradients; use dualad.grad(is_grads_batched=True)")
    if m.grad is None:
        a = leaf._data
        if create_graph:
            m.grad = g
        else:  # a new .grad matches a dense leaf's layout (C or Fortran), else row-major
            if a.__class__ is np.ndarray:
                order = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
                m.grad = _make(np.array(g._data, dtype=a.dtype, order=order, copy=True))
            else:  # CuPy, Dask (lazy stays lazy)
                m.grad = _make(_backend.copy_like(g._data, a))
    elif create_graph:
        m.grad = m.grad + g
    else:
        m.grad._data += g._data  # in place, keeping the layout
    for fn in list(m.post_hooks.values()):
        if fn(leaf) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None; "
                               "modify tensor.grad in place instead")


def backward(
    tensors: Any = None,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
    *,
    retain_variables: bool | None = None,
    variables: Any = None,
) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves.

    Parameters follow ``torch.autograd.backward``; ``grad_variables``,
    ``retain_variables`` and ``variables`` are the deprecated spellings.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dualad.backward((x ** 2).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if variables is not None:
        warnings.warn("'variables' is deprecated; use 'tensors'", DeprecationWarning, 2)
        tensors = variables
    if grad_variables is not None:
        warnings.warn("'grad_variables' is deprecated; use 'grad_tensors'", DeprecationWarning, 2)
        grad_tensors = grad_variables
    if retain_variables is not None:
        warnings.warn("'retain_variables' is deprecated; use 'retain_graph'",
                      DeprecationWarning, 2)
        retain_graph = retain_variables
    outs = _as_tuple(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_tuple(inputs) if inputs is not None else None
    if inputs is not None and not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    cts = _root_cts(outs, grad_tensors, False)
    if create_graph and (inputs is None or any(
            t[0].__class__ is AccumulateGrad if t.__class__ is EDGE else t.is_leaf
            for t in inputs)):
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend "
            "using dualad.grad when creating the graph to avoid this. If you have to use "
            "this function, make sure to reset the .grad fields of your parameters to None "
            "after use to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
    # (a leaf asked for accumulates at its turn in the pass, its hooks in torch's order;
    # a non-leaf's gradient is captured, and kept in its .grad after the pass)
    got = run(outs, cts, retain_graph=retain_graph, create_graph=create_graph,
              inputs=inputs, capture=False)
    if inputs is not None:
        done = set()
        for t, g in zip(inputs, got, strict=True):
            if g is None or id(D.innermost(t)) in done:  # (an input given twice: once)
                continue
            done.add(id(D.innermost(t)))
            if t.__class__ is EDGE and t[0].__class__ is AccumulateGrad or \
                    t.__class__ is not EDGE and t.is_leaf:
                continue  # (a leaf accumulated at its turn in the pass)
            m = D.innermost(t)._meta_()  # (where .grad reads it)
            m.grad = g if m.grad is None else m.grad + g


class _EmptyInputs(ValueError, RuntimeError):
    """``grad(outputs, inputs=[])``: a ValueError, as torch's Python API raised it, and a
    RuntimeError, as torch's engine raises it since (code written for either catches it)."""


def grad_tangents(output: Tensor, inputs: tuple[Tensor, ...], level: int) -> list[Any]:
    """The tangents at ``level`` of ``grad(output, inputs, allow_unused=True)`` (a
    one-element output, nothing recording), the gradients' primals left uncomputed where
    only they would read them (forward-over-reverse: ``functional.hvp``). Per input:
    None if the output does not depend on it, ``NO_TANGENT`` if its gradient has no
    tangent at ``level``, else that tangent (a Tensor)."""
    outs = (output,)
    if not sums_tangents or gm.anomaly_threads[0] or profiling[0] is not None:
        # the general way: the whole gradient, then its tangent (anomaly mode checks, and the
        # profiler times, every node of a whole backward pass)
        got = run(outs, _root_cts(outs, None, False), retain_graph=False, create_graph=False,
                  inputs=inputs, capture=True, retain=False)
        res: list[Any] = []
        for g in got:
            t = None if g is None else _unpack(g, level).tangent
            res.append(None if g is None else NO_TANGENT if t is None else t)
        return res
    return run(outs, _root_cts(outs, None, False), retain_graph=False, create_graph=False,
               inputs=inputs, capture=True, retain=False, tangent=level)


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """Gradients of ``outputs`` with respect to ``inputs`` (not accumulated into ``.grad``).

    Parameters follow ``torch.autograd.grad``. With ``is_grads_batched=True``
    every grad_output has a leading batch axis and the batch is computed in
    one backward pass.

    Examples
    --------
    >>> x = dualad.tensor(2.0, requires_grad=True)
    >>> dualad.grad(x ** 3, x)
    (tensor(12.),)
    """
    if callable(outputs) and not isinstance(outputs, Tensor):
        raise TypeError(
            f"dualad.grad(outputs, inputs) takes the outputs already computed (Tensors), "
            f"not a function ({getattr(outputs, '__name__', type(outputs).__name__)!r}): it "
            "is torch.autograd.grad, not JAX's grad. To differentiate a Python function, use "
            "dualad.functional.grad(f)(x), or compute y = f(x) from x that requires grad "
            "and call dualad.grad(y, x).")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True")
    allow_unused = materialize_grads if allow_unused is None else allow_unused
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise _EmptyInputs("grad requires non-empty inputs: `inputs` cannot be empty; pass "
                           "the tensors to differentiate with respect to")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched and D.batched:
        raise RuntimeError(
            "grad(is_grads_batched=True) inside a batched dual level: only one batched "
            "computation may be live at a time"
        )
    cts = _root_cts(outs, grad_outputs, is_grads_batched)
    got = run(outs, cts, retain_graph=retain_graph, create_graph=create_graph, inputs=ins,
              capture=True, retain=False)
    res: list[Any] = []
    for t, g in zip(ins, got, strict=True):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                if t.__class__ is EDGE:  # (a GradientEdge: the aval of that output)
                    n, nr = t
                    t = n.variable if n.__class__ is AccumulateGrad else \
                        _make(_backend.empty(*n.out_avals[nr], like=_like(cts[0]._data)))
                shape = ((cts[0]._data.shape[0],) if is_grads_batched else ()) + t.shape
                g = _make(_backend.zeros(shape, dtype=t.dtype, like=_like(t._data)))
                if create_graph:  # (differentiable further, as torch's zeros are)
                    g.requires_grad_()
        elif is_grads_batched:
            g = _with_nb(g, 0)
        res.append(g)
    return tuple(res)
