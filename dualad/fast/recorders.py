"""The hot path's recorders: straight-line versions of ``graph.record`` for the
elementwise hot path's calls, whose nodes keep a straight lane (``LaneNode.lane``) for
the engine's fast pass (``fast.engine._lane``).

They make the node ``record`` makes (``tests/reverse/test_reverse.py`` compares them field
by field), in code written for the common cases, one store a line: in CPython 3.11 a
tuple assignment of more than three targets builds a tuple first. Anything else
(saved-tensor hooks or anomaly mode in some thread, a constant array) goes to ``record``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import dispatch as D
from ..core.tensor import Tensor
from ..reverse.graph import (
    _ABSENT,
    _ABSENTS,
    _EVERY2,
    _NOTHING,
    _ONE,
    _SCALARS,
    Node,
    SavedValue,
    _bare_output,
    _savable,
    _save_output,
    _seq,
    edge_of,
    hooks_live,
    record,
)


class LaneNode(Node):
    """A node the hot path recorded (``graph.Node``'s fields), with its straight lane.

    ``lane``: for a node recorded with nothing but plain values, what the engine's
    straight lane (``fast.engine._lane``) needs, kept at record time: ``(step, p0, p1, y,
    vcs, od, e)``. ``vcs`` are the version counters of what it saved (each at version 0
    then), ``od`` the output's dtype. With one input that requires grad, of the output's
    aval and a float dtype (or ``f(x, x)``), ``step(ct, p0, p1, y, od, None)`` is that
    input's cotangent (``prim.steps``, ``prim.pair``; with the index of the element of
    one-element arrays instead of None, on NumPy scalars), ``p0, p1`` the arrays its
    formula reads and ``e`` that input's edge. Otherwise ``step`` is None, ``p0`` is what
    ``transpose.plain_arrays`` gives for ``prim.transposed``, ``p1`` None, and ``e`` the
    needs when every input is asked for. None when the node has no lane (a dual input, a
    value changed in place before), and once the saved values are released.

    ``saved``, for a node with a lane: what the rule reads kept in the lane, as a tuple,
    per input, of the Tensor it saved or None, its output's array and version counter
    being the lane's ``y`` and last ``vcs``. That costs one small tuple per node, not a
    dict, a SavedValue and a list; ``_saved_values()`` makes (and keeps) the dict the
    general path reads.
    """

    __slots__ = ("lane",)

    def _saved_values(self) -> dict[Any, Any] | None:
        saved = self.saved
        if saved.__class__ is not tuple:
            return saved
        m: dict[Any, Any] = {i: t for i, t in enumerate(saved) if t is not None}
        y, vcs = self.lane[3], self.lane[4]
        if y is not None:  # (the output: saved at version 0, as its bare array)
            m["out"] = [_bare_output(y, vcs[-1], 0, 0)]
        self.saved = m
        return m

    def release(self) -> None:
        self.saved = self.lane = None

    def saved_changed(self) -> None:
        self.lane = None  # (the lane reads the arrays it kept: backward now unpacks)


_UNSAVED1 = (None,)  # ``Node.saved`` of a lane node of one input that saved only its output
# Shared avals: a node of one input that keeps its input's aval (a ufunc of one input; one
# with a Python scalar) takes as its avals and out_avals the out_avals of the node of that
# input, a 1-tuple there when it has one output (a multi-output node's are a list): so a
# chain of them holds one aval, not one per node.
_F64, _F32 = np.dtype(np.float64), np.dtype(np.float32)  # (the dtypes the lane's steps take)


def recorder(prim: Any) -> Callable[..., None]:
    """What the hot path records a call of ``prim`` with (bound once per primitive):
    ``record_hot`` for two inputs; for one, a recorder made for what the primitive saves
    (its input, its output, both or nothing: ``_unary``)."""
    reads = prim.reads
    if len(reads) == 2:
        return record_hot
    assert len(reads) == 1 and all(r in (0, "out") for r in reads[0])  # (a formula's names)
    return _unary(0 in reads[0], "out" in reads[0], prim.transposed is not None,
                  prim.steps[0])


def _unary(save_in: bool, save_out: bool, lane: bool, step: Any) -> Callable[..., None]:
    """``record_hot`` for one input, in straight-line code for what the primitive saves
    (no loop over its reads): the same node and lane."""
    saves = save_in or save_out

    def record_unary(prim: Any, args: Any, out: Tensor) -> None:
        (a,) = args
        if hooks_live[0]:  # (saved-tensor hooks or anomaly mode in some thread)
            return D.record(prim, args, out, {})
        if save_in and a._meta is not None:  # (an inference tensor cannot be saved)
            _savable(a)
        d = a._data
        y = out._data
        od = y.dtype
        n = a._node  # (the edge before the node: a leaf's AccumulateGrad, made now, first)
        avals = None
        if n is not None:
            e = (n, a._out_nr)
            avals = n.out_avals  # (shared: see "Shared avals" below)
            if avals.__class__ is not tuple or avals[0][1] is not od:
                avals = None
        else:
            e = edge_of(a)
        if avals is None and d.dtype is od:
            avals = ((y.shape, od),)
        node = LaneNode()
        # new_node's fields, inline (calling it costs 3% of the reverse chain), one store a
        # line (a tuple assignment of more than three targets builds a tuple first)
        node.prim = prim
        node.params = _NOTHING
        node.seq = next(_seq)  # (a larger seq: later)
        node.hooked = False
        node.custom = None
        node.nbs = None
        node.leaf = e[0].leaf
        if avals is not None:  # (a ufunc keeps the shape: the output's aval is the input's)
            node.avals = node.out_avals = avals
            one = step if (od is _F64 or od is _F32) else None  # (a step, or the L2 lane)
        else:
            node.avals, node.out_avals = ((d.shape, d.dtype),), ((y.shape, od),)
            one = None
        node.edges, node.consts = (e,), _ABSENTS[1]
        out._requires_grad, out._node, out._out_nr = True, node, 0
        if not saves:
            node.saved = _NOTHING
            node.lane = None if not lane or a._level else (one, None, None, None, (), od, e) \
                if one is not None else (None, (None,), None, None, (), od, _ONE)
            return None
        vcs: Any = ()  # (as record_hot's)
        keep = lane and not a._level  # (a dual's tangent is not in the lane)
        if save_in:
            vc = a._version_cell
            if vc is None:
                vc = a._version_cell = [0]
            if vc[0]:  # (changed in place before: saved with its version, no lane)
                keep = False
            vcs = (vc,)
        if not keep:
            node.saved = _saved_as(False, a if save_in else None, None,
                                   y if save_out else None, out)
            node.lane = None
            return None
        ys = x = None
        if save_out:  # (kept in the lane: see Node.saved)
            vc = out._version_cell
            if vc is None:
                vc = out._version_cell = [0]
            vcs += (vc,)
            ys = y
        if save_in:
            node.saved = (a,)
            x = d
        else:
            node.saved = _UNSAVED1
        node.lane = (one, x, None, ys, vcs, od, e) if one is not None else \
            (None, (x,), None, ys, vcs, od, _ONE)
        return None

    return record_unary


def record_hot(prim: Any, args: Any, out: Tensor) -> None:
    """``record`` for the elementwise hot path's binary calls, in straight-line code (this
    is the reverse chain's cost per op): each input a plain Tensor (one requires grad) or
    a Python scalar, a plain output — or, while tangents are untracked, unmade duals (their
    primals recorded: the node has no lane, which would drop their tangents); any other
    constant, or saved-tensor hooks, go to ``record``; one Tensor and a Python scalar, or
    ``f(x, x)``, to ``_record_one``. The node is the one ``record`` makes, plus its lane
    (``LaneNode.lane``).

    Over 80 lines, in one piece on purpose: it runs once per op of the reverse chain,
    where each helper call would cost a Python frame (calling ``new_node`` cost 3% of the
    chain); straight-line code is what this function is for."""
    a, b = args
    ta, tb = a.__class__ is Tensor, b.__class__ is Tensor
    if hooks_live[0]:  # (saved-tensor hooks or anomaly mode in some thread)
        return D.record(prim, args, out, {})
    if not (ta and tb):
        if ta and b.__class__ in _SCALARS:
            return _record_one(prim, a, 0, b, out)
        if tb and a.__class__ in _SCALARS:
            return _record_one(prim, b, 1, a, out)
        return record(prim, args, out, {})  # (an array or a list: kept by shape and dtype)
    if a is b:
        return _record_one(prim, a, 0, a, out)  # (f(x, x))
    reads = ()
    d = a._data
    va = (d.shape, d.dtype)
    ea = eb = None
    if a._requires_grad:
        ea = _edge_in(a)
        reads = prim.reads[0]
    d = b._data
    vb = (d.shape, d.dtype)
    if b._requires_grad:
        eb = _edge_in(b)
        reads = prim.reads[1] if not reads else reads + prim.reads[1]
    edges, avals = (ea, eb), (va, vb)
    every = _EVERY2[ea is not None][eb is not None]
    leaf = ea[0].leaf if ea is not None else None
    if eb is not None:
        lf = eb[0].leaf
        leaf = lf if ea is None else leaf if leaf is lf else None
    p0 = p1 = None  # (the lane's arrays)
    node = LaneNode()
    # new_node's fields, inline (calling it costs 3% of the reverse chain), one store a
    # line (a tuple assignment of more than three targets builds a tuple first)
    node.prim = prim
    node.params = _NOTHING
    node.seq = next(_seq)  # (a larger seq: later)
    node.hooked = False
    node.custom = None
    node.nbs = None
    node.leaf = leaf
    node.edges, node.avals, node.consts = edges, avals, _ABSENTS[2]
    y = out._data
    od = y.dtype
    node.out_avals = ((y.shape, od),)  # (the broadcast shape)
    out._requires_grad, out._node, out._out_nr = True, node, 0
    lane = prim.transposed is not None and not a._level and not b._level  # (see _unary)
    saved: Any = _NOTHING
    vcs: Any = ()  # the version counters the lane checks (each saved at version 0)
    ys = t0 = t1 = None  # (what it saved)
    if reads:
        for r in reads:
            if r.__class__ is int:
                a = args[r]
                if a._meta is not None:
                    _savable(a)
                vc = a._version_cell
                if vc is None:
                    vc = a._version_cell = [0]
                if vc[0]:  # (an input changed in place before: no lane)
                    lane = False
                if r:
                    t1, p1 = a, a._data
                else:
                    t0, p0 = a, a._data
                if not vcs or vc is not vcs[0]:
                    vcs += (vc,)
            else:  # "out"
                ys = y
        saved = _saved_as(lane, t0, t1, ys, out)
        if lane and ys is not None:  # (the output's counter last: see Node.saved)
            vcs += (out._version_cell,)
    node.saved = saved
    node.lane = (None, (p0, p1), None, ys, vcs, od, every) if lane else None
    return None


def _record_one(prim: Any, t: Tensor, i: int, s: Any, out: Tensor) -> None:
    """``record_hot`` of a call of two inputs of which one Tensor requires grad: ``t``, a
    plain Tensor or an unmade dual (no lane), at position ``i``. The other input ``s`` is a
    Python scalar (a constant, kept in ``consts`` and in the lane's arrays as
    ``_plain_arrays`` gives them; a list, as ``_plain_arrays`` expects of consts with a
    value in them) — or ``t`` itself, ``f(x, x)``: one edge, twice. Its lane takes ``t``'s
    step (``prim.steps``; for both inputs, ``prim.pair``) when ``t`` has the output's float
    dtype. Over 80 lines, in one piece on purpose, as ``record_hot`` (see there): it runs
    once per op of a reverse chain with a constant, where a helper call costs."""
    d = t._data
    y = out._data
    od = y.dtype
    n = t._node
    if n is not None:
        e = (n, t._out_nr)
        oa = n.out_avals  # (shared: see "Shared avals" below)
        if oa.__class__ is not tuple or oa[0][1] is not od:
            oa = None
    else:
        e = edge_of(t)
        oa = None
    node = LaneNode()
    # new_node's fields, inline (calling it costs 3% of the reverse chain), one store a
    # line (a tuple assignment of more than three targets builds a tuple first)
    node.prim = prim
    node.params = _NOTHING
    node.seq = next(_seq)  # (a larger seq: later)
    node.hooked = False
    node.custom = None
    node.nbs = None
    node.leaf = e[0].leaf
    same = oa is not None or d.dtype is od
    if oa is None:
        oa = ((y.shape, od),)  # (a Python scalar, or x with x, keeps the shape)
    node.out_avals = oa
    va = oa[0] if same else (d.shape, d.dtype)
    twice = s is t
    if twice:
        node.edges, node.avals, node.consts = (e, e), (va, va), _ABSENTS[2]
        reads = prim.reads[0] + prim.reads[1]
    elif i:
        node.edges, node.avals, node.consts = (None, e), (None, va), [s, _ABSENT]
        reads = prim.reads[1]  # (what t's formula reads: the scalar is in consts)
    else:
        node.edges, node.avals, node.consts = (e, None), (va, None), [_ABSENT, s]
        reads = prim.reads[0]
    out._requires_grad, out._node, out._out_nr = True, node, 0
    lane = prim.transposed is not None and not t._level  # (see _unary)
    p0 = p1 = ys = None  # (the arrays the formulas read: the lane's, None where unread)
    for r in reads:
        if r.__class__ is not int:  # "out"
            ys = y
        elif r == i or twice:  # (t, not the scalar)
            if r:
                p1 = d
            else:
                p0 = d
    vcs: Any = ()
    if p0 is not None or p1 is not None:
        if t._meta is not None:  # (an inference tensor cannot be saved)
            _savable(t)
        vc = t._version_cell
        if vc is None:
            vc = t._version_cell = [0]
        if vc[0]:  # (changed in place before: saved with its version, no lane)
            lane = False
        vcs = (vc,)
    if vcs or ys is not None:
        node.saved = _saved_as(lane, None if p0 is None else t, None if p1 is None else t,
                               ys, out)
        if lane and ys is not None:  # (the output's counter last: see Node.saved)
            vcs += (out._version_cell,)
    else:
        node.saved = _NOTHING
    if not lane:
        node.lane = None
        return None
    if not twice:
        if i:
            p0 = s
        else:
            p1 = s
    step = None
    if same and (od is _F64 or od is _F32):
        step = prim.pair if twice else prim.steps[i]
    node.lane = (step, p0, p1, ys, vcs, od, e) if step is not None else \
        (None, (p0, p1), None, ys, vcs, od, _EVERY2[twice or not i][twice or i])
    return None


def _saved_as(lane: bool, t0: Any, t1: Any, ys: Any, out: Tensor) -> Any:
    """``Node.saved`` of a node that saved its inputs ``t0``, ``t1`` (each a Tensor or
    None) and its output if ``ys`` (its array) is not None: for a node with a lane, the
    tuple (the output's version counter made); else the dict, an input changed in place
    before as a SavedValue."""
    if lane:
        if ys is not None and out._version_cell is None:
            out._version_cell = [0]
        return (t0, t1)
    saved: dict[Any, Any] = {}
    for k, t in ((0, t0), (1, t1)):
        if t is not None:
            saved[k] = SavedValue(t) if t._version_cell[0] else t
    if ys is not None:
        saved["out"] = [_save_output(out, 0, True)]
    return saved


def _edge_in(a: Tensor) -> tuple[Any, int]:
    """The edge to a plain input that requires grad (``edge_of``)."""
    n = a._node
    return (n, a._out_nr) if n is not None else edge_of(a)
