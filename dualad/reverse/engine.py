"""The engine: ``backward`` and ``grad`` walk the graph in reverse topological order.

Per node, the cotangents of its outputs go through the node's VJP (the
transpose of its linearized JVP rule) and accumulate at the nodes of its
inputs. Leaves accumulate into ``.grad``; ``grad()`` captures instead.
"""

from __future__ import annotations

import functools
import heapq
import operator
import warnings
from typing import Any

import numpy as np

from .. import _backend, _fastpaths, _fpfilter
from .. import _dispatch as D
from .. import grad_mode as gm
from .._backend import like as _like
from .._backend import writeable as _writeable
from .._tensor import Tensor, _make
from ..forward_ad import _unpack, _with_nb
from .edge import GradientEdge as EDGE  # (grad's inputs may be edges)
from .graph import (
    _EVERY2,
    _ONE,
    _READ,
    AccumulateGrad,
    Given,
    Negated,
    Node,
    edge_of,
    flat_parts,
    fresh,
    restore_saved_hooks,
    saved_hooks,
    tensors,
)
from .transpose import Scatter


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
        if not isinstance(o, Tensor) or not o._rg:
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


def _feeds_tangents(n: Any, own: dict[Any, Any], memo: dict[Any, bool]) -> bool:
    """Whether nothing reads the primals of node ``n``'s cotangents, in ``run``'s tangent
    mode: each input of ``n`` is one of which only a tangent is wanted (in ``own``), or a
    node that passes tangents on — linear in its inputs, with nothing saved (so its
    transpose takes primal to primal and tangent to tangent), no hooks — whose inputs are
    such again. Then ``n`` may leave its results' primals unwritten (``Node.vjp``'s
    ``dead``, asked only where that saves a pass). ``memo``: the nodes found to pass
    tangents on, or not."""
    for e in n.edges:
        if e is None:
            continue
        m = e[0]
        ok = memo.get(m)
        if ok is None:
            prim = m.prim if m.__class__ is Node else None
            ok = memo[m] = m in own or (
                prim is not None and not m.hooked and (m.saved is _READ or m.saved is not None
                                                         and not m.saved)
                and m.custom is None and m.nbs is None and not prim.multi
                and all(e is None or i in prim.linear for i, e in enumerate(m.edges))
                and _feeds_tangents(m, own, memo))
        if not ok:
            return False
    return True


def _check_input(t: Any, k: int) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"inputs[{k}] is a {type(t).__name__}; differentiate with respect to "
                        "Tensors (or GradientEdges from dualad.graph.get_gradient_edge)")
    if not t._rg:
        raise RuntimeError(
            f"One of the differentiated Tensors does not require grad: inputs[{k}] (shape "
            f"{t.shape}) has requires_grad=False. Make it require grad before computing the "
            "outputs from it (x.requires_grad_() on a leaf, or "
            "dualad.tensor(..., requires_grad=True))"
        )


on_start: list[Any] = []  # what each backward pass tells where it starts (.hooks)
_by_seq = operator.attrgetter("seq")
_ndarray = np.ndarray


class _OwnsNothing(dict):  # type: ignore[type-arg]
    """``own`` with the engine's fast paths off: it keeps no sum of its own (so it writes
    none in place)."""

    def __setitem__(self, k: Any, v: Any) -> None:
        pass


_NO_OWN = _OwnsNothing()
_ENGINE = _fastpaths.on("engine")
_TANGENT_MODE = _ENGINE and _fastpaths.on("tangents")


def run(outputs: tuple[Tensor, ...], cts: list[Tensor], **kw: Any) -> list[Any]:
    """The backward pass (``_pass``), with the thread's saved-tensor hooks as they were
    before it afterwards, as torch's engine restores them: a ``saved_tensors_hooks``
    context entered in a hook during the pass and never exited (or
    ``disable_saved_tensors_hooks``) would otherwise pack every later graph of the
    process. Two reads of a thread-local a pass, and a comparison."""
    hs = saved_hooks
    stack, disabled = hs.stack, hs.disabled
    before = stack[:] if stack else None
    try:
        return _pass(outputs, cts, **kw)
    finally:
        now = hs.stack
        if (now != before if before is not None else now) or hs.disabled is not disabled:
            restore_saved_hooks(before or [], disabled)


def _pass(
    outputs: tuple[Tensor, ...],
    cts: list[Tensor],
    *,
    retain_graph: bool,
    create_graph: bool,
    inputs: tuple[Tensor, ...] | None,
    capture: bool,
    retain: bool = True,
    tangent: int = 0,
) -> list[Any]:
    """The backward pass. ``tangent`` (a dual level; with ``inputs``, nothing recording):
    of each input that is a leaf without hooks only the tangent at that level of its
    gradient is wanted (``grad_tangents``), so the cotangents reaching it are summed as
    that tangent alone, not as duals whose primal nothing reads; such an input captures
    its tangent, or ``NO_TANGENT`` when what reached it had none."""
    _fpfilter.in_front()  # (the lane's and transposes' warnings, raised and declined on)
    roots = [o if o.__class__ is EDGE else edge_of(o) for o in outputs]
    captures: dict[Any, int] = {}  # (node, nr) -> position in ``inputs``; node -> -1
    again: list[tuple[int, int]] = []  # (position, its first position): an input given twice
    need: dict[Any, list[bool]] | None = None
    if inputs is not None:
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
            captures[node] = -1  # marks a node with captured outputs
        targets = {key for key in captures if key.__class__ is not tuple}
        if not _ENGINE or not all((lf := n.leaf) is not None and lf in targets
                                  for n, _ in roots):
            need = _needed(roots, targets)  # (else each root leads to one leaf, asked for)
    got: list[Any] = [None] * (len(inputs) if inputs is not None else 0)
    if on_start:  # (multi-grad hooks: which of their tensors this pass reaches)
        for f in list(on_start):
            f.start(roots, need)

    # A node is created after the nodes of its inputs, so decreasing ``seq`` is a reverse
    # topological order: when a node is popped, every cotangent for it has arrived.
    buf: dict[Any, list[Any]] = {}
    heap: list[Any] = []
    own: dict[Any, Any] = {} if _ENGINE else _NO_OWN  # (node, nr) -> the sum the engine
    # made there (see _add_to); node -> the level whose tangent alone it sums (_tangent_of)
    feeds = None  # (tangent mode: whether a node's results' primals are read, see
    # _feeds_tangents)
    if tangent:
        for key in captures:
            if key.__class__ is AccumulateGrad and not _hooks_of(key):
                own[key] = tangent
        memo: dict[Any, bool] = {}
        feeds = functools.partial(_feeds_tangents, own=own, memo=memo)
    for (n, nr), c in zip(roots, cts, strict=True):
        if _ENGINE and not create_graph and not c._level and not c._nb and \
                c._data.__class__ is _ndarray:
            c = c._data  # the fast lane passes bare (NumPy) arrays between plain nodes
        _add_to(buf, heap, n, nr, c, own)
    pop = heapq.heappop
    mode = gm.enable_grad() if create_graph else gm.no_grad()
    node = None
    if not _ENGINE or (gm.anomaly_threads[0] or profiling[0] is not None) and not tangent:
        anomaly = gm.anomaly.on
        if not _ENGINE or anomaly or profiling[0] is not None:  # every node the general
            with mode:  # way (then the loop below finds the heap empty)
                _watched(buf, heap, need, captures, got, capture, create_graph, retain_graph,
                         retain, anomaly and gm.anomaly.check_nan, anomaly, own)
    with mode:
        while node is not None or heap:
            if node is None:
                node = pop(heap)[1]
                grads = buf.pop(node)
                mine = False
                if own:  # given away now: only its node's rule may still write into it
                    o = own.pop((node, 0), None)
                    mine = o is not None and o is grads[0] and len(grads) == 1 and \
                        not create_graph
                    for nr in range(1, len(grads)):
                        own.pop((node, nr), None)
            if need is None:
                needs = None
            else:
                needs = need.get(node)
                if needs is None:  # leads to no input that was asked for
                    node = None
                    continue
            if not node.hooked and node.lane is not None and node not in captures and (
                    c := _bare(grads[0], create_graph)) is not None:
                went = _lane(node, c, needs, need, captures, buf, heap, own, not retain_graph)
                if went is not None:
                    node, grads = went
                    mine = False
                    if tangent and node in own:  # (the chain ends at an input: sum it there)
                        for c in grads:
                            _add_to(buf, heap, node, 0, c, own)
                        node = None
                    continue
            nxt = None
            ran = True
            if tangent and node in own and _hooks_of(node):
                raise RuntimeError("a hook was registered on an input of hvp during its "
                                   "backward pass; register it before")
            if node.hooked or node in captures:  # (every AccumulateGrad counts as hooked)
                ran = _run_node(node, grads, needs, captures, got, capture, create_graph, buf,
                                heap, own, retain)
            else:  # the common case, inlined: no hooks, nothing captured here
                edges = node.edges
                if needs is None:
                    n_in = len(edges)
                    needs = _ONE if n_in == 1 else _EVERY2[edges[0] is not None][
                        edges[1] is not None] if n_in == 2 else _every(edges)
                res = _custom(node, tensors(grads), needs, buf, heap) if \
                    node.custom is not None else node.vjp(grads, needs, mine, feeds)
                if heap:
                    k = -1
                elif len(res) == 1:
                    k = 0
                elif len(res) == 2:  # (_only, inlined)
                    r0, r1 = res
                    s0 = r0 is not None and needs[0]
                    s1 = r1 is not None and needs[1]
                    k = (-1 if s1 else 0) if s0 else 1 if s1 else -1
                    if s0 and s1 and edges[0] == edges[1]:  # f(x, x): one sum, sent on
                        pair = _pair(r0, r1)
                        if pair is not None:
                            k, res = 0, pair
                else:
                    k = _only(res, needs)
                if k >= 0 and res[k].__class__ in _PLAIN_CT:
                    # a chain: nothing else is pending and this node sends one cotangent, so
                    # the node it feeds has all its cotangents and runs next, without the heap
                    nxt, nr = edges[k]
                    n_out = len(nxt.out_avals)
                    if tangent and nxt in own:  # (sent to an input: summed as its tangent)
                        _add_to(buf, heap, nxt, nr, res[k], own)
                        nxt = None
                    elif n_out == len(res) == 1:
                        grads = res  # (the rule's own list: [ct])
                    else:
                        grads = [None] * n_out
                        grads[nr] = res[k]
                    mine = False
                else:
                    for e, r, n in zip(edges, res, needs, strict=False):  # equal by construction
                        if n and r is not None:
                            _add_to(buf, heap, e[0], e[1], r, own)
            if ran and not retain_graph and node.saved:
                node.saved = node.lane = None  # release what it saved (AccumulateGrad saves
                # nothing)
            node = nxt
    if tangent:  # the inputs that summed whole cotangents (hooked, or not leaves)
        for key, k in captures.items():
            if key.__class__ is tuple and key[0] not in own and got[k] is not None:
                t = _unpack(got[k], tangent).tangent
                got[k] = NO_TANGENT if t is None else t
    for k, first in again:
        got[k] = got[first]
    return got


def _watched(buf: Any, heap: Any, need: Any, captures: Any, got: Any, capture: bool,
             create_graph: bool, retain_graph: bool, retain: bool, nan: bool,
             anomaly: bool, own: dict[Any, Any]) -> None:
    """``run``'s general loop — the engine's fast paths switched off (``_fastpaths``),
    anomaly mode, the profiler: every node from the heap by ``_run_node``, its results
    checked for NaN (``nan``), an error shown with the traceback of the forward call that
    made the node (``anomaly``), each node an event of the profiler."""
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
            node.saved = node.lane = None


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
        r = r.dense() if r.__class__ is Scatter else r.c if r.__class__ is Given else r
        (r,) = tensors([r])
        a = D.innermost(r)._data
        if a.dtype.kind in "fc" and bool(np.isnan(a).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


profiling: list[Any] = [None]  # the active profiler (dualad.profiler), if any


def _bare(c: Any, create_graph: bool) -> Any:
    """The cotangent as the bare array the lane takes, or None: a bare array, or when
    nothing records a plain Tensor's array (a general node, such as a loss's sum, sends
    Tensors on; the lane then sends bare arrays, as the root does)."""
    if c.__class__ is _ndarray:
        return c
    if c.__class__ is Tensor and not (create_graph or c._level or c._nb or c._rg) and \
            c._data.__class__ is _ndarray:
        return c._data
    return None


def _lane(node: Any, c: Any, needs: Any, need: Any, captures: Any, buf: Any,
          heap: Any, own: Any, release: bool) -> tuple[Any, Any] | None:
    """Run ``node`` by its straight lane (``graph.Node.lane``: the values were saved plain
    and the cotangent is a bare array), and then, while nothing else is pending and each
    sends one bare cotangent on, the chain of lane nodes it feeds. Returns the node to run
    next (None: take one from the heap) and its cotangents; None if ``node`` did not run
    (a saved value changed, so ``vjp`` raises; or its step declined).

    A one-element cotangent goes through the steps as a NumPy scalar (``ix``: the index
    of its element; see "the lane's steps" in ``ops.elementwise``) and leaves the lane an
    array of the shape it came in (``shape``) again."""
    first = True
    ix = shape = None
    while True:
        step, p0, p1, y, vcs, od, e = node.lane
        for vc in vcs:
            if vc[0]:  # changed in place: the general way raises torch's error
                return None if first else (node, [_array(c, ix, shape)])
        if step is not None:  # one input, of the output's aval (a float one)
            if ix is None and c.size == 1:
                shape = c.shape
                ix = 0 if len(shape) == 1 else (0,) * len(shape)  # (an int indexes faster)
                c = c[ix]
            r = step(c, p0, p1, y, od, ix)
            if r is None:  # (a coefficient of another dtype: the general way casts)
                return None if first else (node, [_array(c, ix, shape)])
            if release and node.saved:
                node.saved = node.lane = None  # (what it saved)
            c = r
            if heap:
                _add_to(buf, heap, e[0], e[1], _array(c, ix, shape), own)
                return None, None
        else:
            if ix is not None:
                c, ix = _array(c, ix, shape), None
            prim = node.prim
            ns = e if needs is None else needs  # (e: which inputs have edges, all asked for)
            res = prim.transposed(prim, c, p0, y, node.avals, ns, od)
            if release and node.saved:
                node.saved = node.lane = None
            edges = node.edges
            c = res[0]
            if len(res) == 1:
                e = edges[0]
            else:  # (a result is None exactly where it is not needed)
                r1 = res[1]
                e = edges[0]
                if c is None:
                    c, e = r1, edges[1]
                elif r1 is not None:  # f(x, x) sends one sum on; else both go to _add_to
                    pair = _pair(c, r1) if e == edges[1] else None
                    c = None if pair is None else pair[0]
            if c is None or heap or c.__class__ is not _ndarray:
                for e, r, n in zip(edges, res, ns, strict=True):
                    if n and r is not None:
                        _add_to(buf, heap, e[0], e[1], r, own)
                return None, None
        first = False
        node, nr = e
        if need is not None:
            needs = need.get(node)
            if needs is None:  # leads to no input that was asked for
                return None, None
        if node.hooked or node.lane is None or node in captures:
            if ix is not None:
                c = _array(c, ix, shape)
            n_out = len(node.out_avals)
            if n_out == 1:
                return node, [c]
            grads = [None] * n_out
            grads[nr] = c
            return node, grads


def _array(c: Any, ix: Any, shape: Any) -> Any:
    """The lane's cotangent as an array: ``c`` itself, or (``ix`` not None) the NumPy
    scalar ``c`` as an array of ``shape``."""
    if ix is None:
        return c
    a = np.empty(shape, c.dtype)
    a[ix] = c
    return a


def _only(res: list[Any], needs: Any) -> int:
    """The position of the one cotangent a node sends on; -1 if it sends none or several."""
    k = -1
    for i, r in enumerate(res):
        if r is not None and needs[i]:
            if k >= 0:
                return -1
            k = i
    return k


def _pair(r0: Any, r1: Any) -> Any:
    """``[r0 + r1]``, the cotangent both inputs of ``f(x, x)`` send to ``x``, summed as
    ``_add_to`` would sum it there; None (``_add_to`` does it) unless both are small bare
    arrays (a large sum may become the engine's own)."""
    if r0.__class__ is not _ndarray or r1.__class__ is not _ndarray or r0.size >= _OWN_MIN:
        return None
    s = r0 + r1
    return [s if s.__class__ is _ndarray else np.asarray(s)]  # (0-d + 0-d is a scalar)


def _every(edges: list[Any]) -> Any:
    """The needs of a node whose every edge is wanted (edges are None for constants)."""
    if len(edges) == 1:
        return _ONE  # (a node has an edge)
    if len(edges) == 2:
        return _EVERY2[edges[0] is not None][edges[1] is not None]
    return [e is not None for e in edges]


_PLAIN_CT = frozenset((np.ndarray, Tensor))  # (not a Scatter or Given, which _add_to unpacks)


def _add_to(buf: dict[Any, list[Any]], heap: list[Any], node: Any, nr: int, c: Any,
            own: dict[Any, Any]) -> None:
    """Accumulate cotangent ``c`` for output ``nr`` of ``node``; schedule it on first use.

    A cotangent the engine holds alone (``own``: a sum it made, a slice written out, a
    rule's ``Given``) is seen by nothing else until the node runs, so later cotangents
    are added into it in place, and the node's rule gets it as its own; every other
    cotangent may be the user's, a saved value, another slot's or a read-only seed, and
    is never written. An input of which only a tangent is wanted (``own[node]``: its
    level, see ``run``) sums the tangents of its cotangents instead.
    """
    slot = buf.get(node)
    if slot is None:
        heapq.heappush(heap, (-node.seq, node))
        slot = buf[node] = [None] * len(node.out_avals)
    a = slot[nr]
    if own and node in own:
        c = _tangent_of(c, own[node])
        if c is None:  # (reached, by a cotangent with no tangent there)
            if a is None:
                slot[nr] = NO_TANGENT
            return
        if a is NO_TANGENT:
            a = None
    if a is None:
        cls = c.__class__
        if cls is Scatter:
            c = own[node, nr] = c.dense()
        elif cls is Given:
            c = own[node, nr] = c.c
        elif cls is Negated and c.own:  # (the node it reaches may write into it)
            own[node, nr] = c
        slot[nr] = c
        return
    key = (node, nr)
    if a.__class__ is Negated:  # a second cotangent: the first is written out, in place
        # when the engine holds it (either way the engine holds what it writes)
        a = slot[nr] = own[key] = a.dense(own.get(key) is a)
    new = c.__class__ is Given
    if new:
        c = c.c
    if own.get(key) is a and _add_into(a, c):
        return
    if c.__class__ is Scatter:
        c, new = c.dense(), True
    elif c.__class__ is Negated:
        new = True
        c = c.dense(c.own)
    if new and _add_into(c, a):  # c is ours, a is not: a + c == c + a, elementwise
        slot[nr] = own[key] = c
        return
    s = a + c
    if isinstance(s, np.generic):  # 0-d + 0-d is a scalar
        s = np.asarray(s)
    if (s if s.__class__ is np.ndarray else getattr(s, "_data", s)).size >= _OWN_MIN and fresh(s, a, c):
        own[key] = s
    slot[nr] = s


_OWN_MIN = 1 << 14  # below this, a new sum costs less than checking that one is ours

class _NoTangent:
    """What an input of which only a tangent is wanted captures when the cotangents that
    reached it had none (``run``'s ``tangent``)."""

    __slots__ = ()


NO_TANGENT = _NoTangent()


def _tangent_of(c: Any, L: int) -> Any:
    """The tangent at level ``L`` of cotangent ``c``, in a form ``_add_to`` sums as it
    sums cotangents (a bare array, a ``Scatter``, ``Negated`` or ``Given`` of one, or a
    Tensor); None where it is zero. The arrays are those of ``c``'s tangent: the sums
    are the ones the tangents of the summed duals would get."""
    cls = c.__class__
    if cls is Scatter:
        if c.kind != L:  # (plain, or a flat dual at another level: no tangent at L)
            return None
        s = Scatter(c.t, None, -1, c.key, c.shape)
        s.neg = c.neg
        return s
    if cls is Negated:
        p, t, kind = c.parts
        return Negated(t, c.own, (t, None, -1)) if kind == L else None
    if cls is Given:
        t = _tangent_of(c.c, L)
        return Given(t) if t.__class__ is _ndarray else t
    parts = flat_parts(c)
    if parts is not None:
        return parts[1] if parts[2] == L else None
    return D.split(D.strip(c), L)[1]  # (a nested, batched or recorded Tensor)


def _hooks_of(node: Any) -> bool:
    """Whether an input's node has hooks that would see its gradient."""
    if node.pre_hooks or node.tensor_pre_hooks or node.retain:
        return True
    m = node.variable._meta if node.__class__ is AccumulateGrad else None
    return m is not None and bool(m.hooks)


def _add_into(acc: Any, c: Any) -> bool:
    """``acc += c`` in place when that is ``acc + c`` (same kind, dtype and shape); the
    caller owns ``acc``. False if not done."""
    have = flat_parts(acc)
    if have is None:
        return False
    ap, at, akind = have
    sub = False  # (acc -= c for a negated one)
    if c.__class__ is Scatter:
        p, t, kind, key, sub = c.p, c.t, c.kind, c.key, c.neg
        if ap.shape != c.shape:
            return False
    else:
        if c.__class__ is Negated:
            parts, sub = c.parts, True
        else:
            parts = flat_parts(c)
            if parts is None:
                return False
        p, t, kind = parts
        key = None
        if p.shape != ap.shape or (t is not None and t.shape != ap.shape):
            return False
    # a bare array or a plain Tensor adds into any kind at least as wide; a dual into one
    # of its own level
    if not (kind == akind or (kind <= 0 and kind < akind)):
        return False
    if p.dtype != ap.dtype or not _writeable(ap) or (t is not None and (
            t.dtype != at.dtype or not _writeable(at))):
        return False
    op = np.subtract if sub else np.add
    if key is None:
        op(ap, p, out=ap)
        if t is not None:
            op(at, t, out=at)
    else:
        key = (*key, ...)  # a view even where the key is all ints
        v = ap[key]
        op(v, p, out=v)
        if t is not None:
            v = at[key]
            op(v, t, out=v)
    return True


def _run_node(node: Any, grads: list[Any], needs: list[bool] | None, captures: dict[Any, int],
              got: list[Any], capture: bool, create_graph: bool, buf: Any, heap: Any,
              own: dict[Any, Any], retain: bool, nan: bool = False) -> bool:
    """The general way through one node (hooks, captures, leaves); whether its rule ran
    (a captured input that leads to no other one asked for stops there, as in torch,
    keeping what its node saved)."""
    grads = tensors(grads)  # hooks, captures and .grad see Tensors, never bare arrays
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
        res = [r.dense() if r.__class__ is Scatter else r.c if r.__class__ is Given else r
               for r in res]
        for fn in list(node.hooks.values()):
            r = fn(tuple(res), tuple(grads))
            if r is not None:
                res = list(r)
    for e, r, n in zip(edges, res, needs, strict=True):
        if n and r is not None:
            _add_to(buf, heap, e[0], e[1], r, own)
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
    if g._nb:
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
    if not _TANGENT_MODE or gm.anomaly_threads[0] or profiling[0] is not None:
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
