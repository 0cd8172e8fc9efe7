"""The engine's fast paths: the backward pass of ``reverse.engine.general_pass``, with
fewer Python objects and fewer passes through memory.

It replaces the general pass (every node from the heap by ``engine._run_node``, every
cotangent a Tensor, every sum a new one) where no hook, capture or instrumentation asks
for the general way:

- a chain runs without the heap: when nothing else is pending and a node sends one
  cotangent, the node it feeds runs next;
- bare arrays go between nodes that record nothing, and a node recorded with plain
  values runs its straight lane (``recorders.LaneNode.lane``: the step or array transpose kept
  at record time), down a chain of such nodes in one loop;
- the engine sums in place into cotangents it holds alone (``own``), adds a slice's
  cotangent (``transpose.Scatter``) into its input's sum, subtracts a ``Negated`` one;
- ``grad()`` skips its pruning pass when each root leads to one leaf asked for;
- with ``tangent`` (``engine.grad_tangents``: ``functional.hvp``), the inputs sum only the
  tangents of the cotangents reaching them.

``install`` puts it in the engine's slots (``engine.install``).
"""

from __future__ import annotations

import functools
import heapq
from typing import Any

import numpy as np

from ..backends.namespace import writeable as _writeable
from ..core import dispatch as D
from ..core import grad_mode as gm
from ..core.tensor import Tensor
from ..forward_ad import _unpack
from ..reverse import engine, graph
from ..reverse.engine import (
    NO_TANGENT,
    _custom,
    _every,
    _needed,
    _run_general,
    _run_node,
    begin,
    on_start,
    profiling,
)
from ..reverse.graph import _EVERY2, _ONE, _READ, AccumulateGrad, Node
from . import switch
from .recorders import LaneNode
from .transpose import Given, Negated, Scatter, array_parts, fresh, tensors


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
            prim = m.prim if m.__class__ is Node or m.__class__ is LaneNode else None
            ok = memo[m] = m in own or (
                prim is not None and not m.hooked and (m.saved is _READ or m.saved is not None
                                                         and not m.saved)
                and m.custom is None and m.nbs is None and not prim.multi
                and all(e is None or i in prim.linear for i, e in enumerate(m.edges))
                and _feeds_tangents(m, own, memo))
        if not ok:
            return False
    return True


class _OwnsNothing(dict):  # type: ignore[type-arg]
    """``own`` with the engine's fast paths off: it keeps no sum of its own (so it writes
    none in place)."""

    def __setitem__(self, k: Any, v: Any) -> None:
        pass


_NO_OWN = _OwnsNothing()
_ndarray = np.ndarray


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
    """The backward pass (``engine.general_pass``'s, with its fast paths). ``tangent`` (a
    dual level; with ``inputs``, nothing recording): of each input that is a leaf without
    hooks only the tangent at that level of its gradient is wanted (``grad_tangents``),
    so the cotangents reaching it are summed as that tangent alone, not as duals whose
    primal nothing reads; such an input captures its tangent, or ``NO_TANGENT`` when
    what reached it had none.

    The loop is not split into helpers on purpose: it runs once per node, and its common
    case (no hooks, nothing captured, a chain without the heap) is inlined because a
    Python call per node is a measurable part of a reverse pass over small arrays; the
    rare cases are helpers already (``_run_node``, ``_lane``, ``_add_to``)."""
    roots, captures, again, targets = begin(outputs, inputs)
    need: dict[Any, list[bool]] | None = None
    if targets is not None and not all((lf := n.leaf) is not None and lf in targets
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
    own: dict[Any, Any] = {}  # (node, nr) -> the sum the engine
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
        if not create_graph and not c._level and not c._batch_ndim and \
                c._data.__class__ is _ndarray:
            c = c._data  # the fast lane passes bare (NumPy) arrays between plain nodes
        _add_to(buf, heap, n, nr, c, own)
    pop = heapq.heappop
    mode = gm.enable_grad() if create_graph else gm.no_grad()
    node = None
    if (gm.anomaly_threads[0] or profiling[0] is not None) and not tangent:
        anomaly = gm.anomaly.on
        if anomaly or profiling[0] is not None:  # every node the general way (then the
            with mode:  # loop below finds the heap empty)
                _run_general(buf, heap, need, captures, got, capture, create_graph, retain_graph,
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
            if node.__class__ is LaneNode and node.lane is not None and not node.hooked \
                    and node not in captures and (
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
            if ran and not retain_graph and node.saved:  # (AccumulateGrad saves nothing)
                node.saved = None  # release what it saved
                if node.__class__ is LaneNode:
                    node.lane = None
            node = nxt
    if tangent:  # the inputs that summed whole cotangents (hooked, or not leaves)
        for key, k in captures.items():
            if key.__class__ is tuple and key[0] not in own and got[k] is not None:
                t = _unpack(got[k], tangent).tangent
                got[k] = NO_TANGENT if t is None else t
    for k, first in again:
        got[k] = got[first]
    return got


def _bare(c: Any, create_graph: bool) -> Any:
    """The cotangent as the bare array the lane takes, or None: a bare array, or when
    nothing records a plain Tensor's array (a general node, such as a loss's sum, sends
    Tensors on; the lane then sends bare arrays, as the root does)."""
    if c.__class__ is _ndarray:
        return c
    if c.__class__ is Tensor and \
            not (create_graph or c._level or c._batch_ndim or c._requires_grad) and \
            c._data.__class__ is _ndarray:
        return c._data
    return None


def _lane(node: Any, c: Any, needs: Any, need: Any, captures: Any, buf: Any,
          heap: Any, own: Any, release: bool) -> tuple[Any, Any] | None:
    """Run ``node`` by its straight lane (``LaneNode.lane``: the values were saved plain
    and the cotangent is a bare array), and then, while nothing else is pending and each
    sends one bare cotangent on, the chain of lane nodes it feeds. Returns the node to run
    next (None: take one from the heap) and its cotangents; None if ``node`` did not run
    (a saved value changed, so ``vjp`` raises; or its step declined).

    A one-element cotangent goes through the steps as a NumPy scalar (``ix``: the index
    of its element; see "the lane's steps" in ``rules.elementwise``) and leaves the lane an
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
        if node.__class__ is not LaneNode or node.lane is None or node.hooked or \
                node in captures:
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

def _tangent_of(c: Any, L: int) -> Any:
    """The tangent at level ``L`` of cotangent ``c``, in a form ``_add_to`` sums as it
    sums cotangents (a bare array, a ``Scatter``, ``Negated`` or ``Given`` of one, or a
    Tensor); None where it is zero. The arrays are those of ``c``'s tangent: the sums
    are the ones the tangents of the summed duals would get."""
    cls = c.__class__
    if cls is Scatter:
        if c.kind != L:  # (plain, or an unmade dual at another level: no tangent at L)
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
    parts = array_parts(c)
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
    have = array_parts(acc)
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
            parts = array_parts(c)
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




def _add_unowned(buf: dict[Any, list[Any]], heap: list[Any], node: Any, nr: int, c: Any,
                 own: Any = None) -> None:
    """``_add_to`` keeping no sum of its own: with the engine's fast paths off, the
    general pass still meets the transposes' unwritten cotangents (``Scatter``,
    ``Negated``, ``Given``), and sums them as new arrays."""
    _add_to(buf, heap, node, nr, c, _NO_OWN)


def _written(cts: list[Any]) -> list[Any]:
    """The cotangents as Tensors (``engine.written``): bare arrays wrapped, unwritten ones
    (``Scatter``, ``Negated``) written out, a ``Given`` one unwrapped."""
    return tensors([c.dense() if c.__class__ is Scatter else c.c if c.__class__ is Given
                    else c for c in cts])


def _traced_vjp(node: Node, cts: list[Any], needs: list[bool], mine: bool = False,
                dead: Any = None) -> list[Any]:
    """``Node.general_vjp`` for the fast pass while the transposes' fast paths are off
    (family ``transpose``): the pass's bare arrays written out as Tensors first."""
    return node.general_vjp(tensors(cts), needs)


def install() -> None:
    """Fill the engine's slots (``reverse.engine.install``): the fast pass (family
    ``engine``), with the tangent-only sums of ``grad_tangents`` and forward-over-reverse
    with untracked tangents (family ``tangents``: ``grad_mode.untracked_tangents``), and
    the accumulation and writing out of the transposes' cotangents (family
    ``transpose``, which makes them)."""
    if switch.on("tangents"):
        gm.install_untracked_tangents()
    fast_engine = switch.on("engine")
    if not fast_engine and not switch.on("transpose"):
        return
    if fast_engine and not switch.on("transpose"):
        graph.install_vjp(_traced_vjp)
    engine.install(pass_=_pass if fast_engine else None,
                   add=_add_to if fast_engine else _add_unowned, write=_written,
                   tangents=fast_engine and switch.on("tangents"))
