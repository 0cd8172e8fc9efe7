"""The transposes' fast paths: a node's VJP without tracing its rule.

The general path (``graph.Node.vjp``, kept as ``Node.general_vjp``) traces a node's
JVP rule into a linear program and transposes it, on Tensors. Where the program is
known, ``vjp`` here runs its transpose directly:

- on arrays, the formula table's generated transpose of an elementwise primitive
  (``prim.transposed``), when the cotangent and saved values are plain;
- on Tensors (a cotangent that is dual, batched or recorded), the elementwise family's
  program ``sum_i multiply(t_i, c_i)`` (``elementwise_t``), a minus sign left unwritten
  (``Negated``) and a product written into a fresh coefficient (``Given``: held by
  nothing else, so the engine may sum into it);
- a slice's cotangent kept as its index and values (``Scatter``), which the engine adds
  into its input's sum instead of onto fresh zeros;
- a primitive linear in the inputs asked for: its own transpose rule on the cotangent.

``install`` makes it ``Node.vjp`` (``graph.install_vjp``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import like as _like
from ..core import dispatch as D
from ..core import grad_mode as _gm
from ..core.tensor import Tensor, _make
from ..reverse import graph
from ..reverse.graph import _ABSENT, Node, _zeros_for
from ..reverse.linearize import fit_dtype, placeholder
from ..rules import elementwise as E
from ..rules import linear as L
from ..rules.linear import _conj, unbroadcast
from . import switch
from .elementwise import _INPLACE_MIN, _unmade


def _computes(coefs: Any, needs: Any) -> bool:
    """Whether an elementwise rule computes a coefficient for an input asked for (one
    that is not 0, 1 or -1), reading saved values."""
    for f, n in zip(coefs, needs, strict=True):
        if n and f.__class__ is not int:
            return True
    return False


def tensors(cts: list[Any]) -> list[Any]:
    """The engine's bare-array cotangents as Tensors (for hooks and the general path), a
    ``Negated`` one written out."""
    return [_make(c) if c.__class__ is _ndarray else _written(c) if c.__class__ is Negated
            else c for c in cts]


def _written(n: Negated) -> Tensor:
    d = n.dense()
    return _make(d) if d.__class__ is _ndarray else d


_ndarray = np.ndarray


class Given:
    """A cotangent made by the rule that returns it, held by nothing else: the engine
    takes it as its own (see ``engine._add_to``)."""

    __slots__ = ("c",)

    def __init__(self, c: Any) -> None:
        self.c = c


class Negated:
    """Minus the cotangent ``c``, held as arrays (``array_parts``), not yet written out.

    The transpose of ``subtract`` in its second operand (and of ``negative``) makes one
    instead of a negated copy of ``c``; a node it reaches passes the sign on (its rule is
    linear: ``Node.vjp`` gives minus its transpose of ``c``), a slice's ``Scatter`` keeps
    it, and the engine subtracts it into a sum (``engine._add_into``): one pass through
    memory fewer each time it arrives there. Only the engine's own loop and these see
    one; hooks and everything else get it written out (``tensors``). Made only while
    nothing records (no ``create_graph``). ``own``: nothing else holds ``c``'s arrays.
    """

    __slots__ = ("c", "own", "parts")

    def __init__(self, c: Any, own: bool, parts: tuple[Any, Any, int]) -> None:
        # (parts: c's array_parts, kept: an unmade dual stops being one when a rule asks for
        # its _primal, which is then kept)
        self.c, self.own, self.parts = c, own, parts

    def dense(self, inplace: bool = False) -> Any:
        """``-c`` in ``c``'s kind (a bare array, a plain Tensor, an unmade dual); written into
        ``c``'s arrays with ``inplace`` (the caller holds them alone)."""
        p, t, kind = self.parts
        p = _neg(p, inplace)
        if kind < 0:
            return p
        d = _make(p)
        if kind:
            d._level, d._stored_primal, d._stored_tangent = kind, None, _neg(t, inplace)
        return d


def _neg(a: Any, inplace: bool) -> Any:
    r = np.negative(a, out=a) if inplace else np.negative(a)
    return r if r.__class__ is _ndarray else np.asarray(r)  # (0-d: a NumPy scalar)


def _minus(r: Any) -> Any:
    """Minus a result of a node's rule, left unwritten (``Negated``) where it can wait."""
    cls = r.__class__
    if r is None:
        return None
    if cls is Negated:  # (minus minus)
        return Given(r.c) if r.own else r.c
    if cls is Scatter:
        r.neg = not r.neg
        return r
    own = cls is Given
    c = r.c if own else r
    parts = array_parts(c)
    if parts is not None:
        return Negated(c, own, parts)
    return -c  # (a batched or nested cotangent: written out now)


def array_parts(c: Any) -> tuple[Any, Any, int] | None:
    """``(primal, tangent, kind)`` of a cotangent held as arrays, not recorded and not
    batched: a bare array (kind -1, no tangent), a plain Tensor (kind 0, no tangent) or a
    unmade dual (kind = its level); None for any other."""
    if c.__class__ is _ndarray:
        return c, None, -1
    if c.__class__ is not Tensor or c._requires_grad or c._batch_ndim or \
            c._data.__class__ is not _ndarray:
        return None
    if not c._level:
        return c._data, None, 0
    if c._level < D.LIN and c._stored_primal is None and c._stored_tangent.__class__ is _ndarray:
        return c._data, c._stored_tangent, c._level
    return None


def fresh(s: Any, *ops: Any) -> bool:
    """Whether ``s``, computed from ``ops``, holds only arrays it allocated: no view, no
    array of an operand."""
    parts = array_parts(s)
    if parts is None:
        return False
    seen = []
    for o in ops:
        po = array_parts(o)
        if po is None:  # (an operand's inner arrays are unseen)
            return False
        seen += po[:2]
    for x in parts[:2]:
        if x is not None and (x.base is not None or any(x is y for y in seen)):
            return False
    return True


@E._quietly  # (ct * c_i: 0 * inf at a singular point is NaN, not a NumPy warning)
def elementwise_t(coefs: Any, ct: Tensor, primals: Any, out: Any, avals: Any,
                  needs: Any, mine: bool = False, wrap: bool = False,
                  lazy: bool = False, dead: Any = None) -> list[Any]:
    """The transpose of an elementwise JVP ``sum_i t_i * c_i`` at the saved values.

    This is what tracing the rule and transposing its program gives (``_mul_t`` per
    term, the broadcast summed out, the dtype fitted), written out once for the whole
    family, on Tensors: cotangents that are dual, batched or recorded go through it.
    ``mine``: nothing else holds ``ct``'s arrays, so the one term that reads it may write
    into them; ``wrap``: a result nothing else holds comes back as ``Given``;
    ``lazy``: ``-ct`` (of ``ct``'s shape and dtype, held as arrays, nothing recording)
    comes back as ``Negated``, not written out; ``dead()``: whether nothing reads
    the results' primals (see ``_times_fresh``).
    """
    users = 0
    for f, need in zip(coefs, needs, strict=True):
        if need and f != 0:
            users += 1
    take = mine and users == 1 and not D._state.grad and _writable(array_parts(ct))
    res: list[Any] = []
    for f, need, aval in zip(coefs, needs, avals, strict=True):
        if not need or f == 0:  # (a zero derivative: the caller fills in zeros)
            res.append(None)
            continue
        shape, dtype = aval
        if f == 1:
            c, made = ct, take
        elif f == -1:
            parts = array_parts(ct) if lazy and not D._state.grad else None
            if parts is not None and ct._data.dtype == dtype and ct.shape == shape:
                res.append(Negated(ct, take, parts))  # (the sign waits: Negated)
                continue
            if take:
                for a in array_parts(ct)[:2]:
                    if a is not None:
                        np.negative(a, out=a)
                c, made = ct, True
            else:
                c = -ct
                made = fresh(c, ct)
        else:
            k = _conj(E._coef(f(*primals, out), out))
            c = _times_fresh(ct, k, primals, out, take, dead)
            made = c is not None and (dead is None or c._data.flags.writeable)  # (a stand-in
            # primal is no one's to write)
            if c is None:
                c = _times(ct, k)
        r = fit_dtype(unbroadcast(c, shape), dtype)
        res.append(Given(r) if wrap and made and r is c else r)
    return res


def _times(ct: Tensor, k: Any) -> Any:
    """``ct * k``. While nothing records, a product with a dual whose tangent is batched
    (or whose primal is kept as a Tensor) is multiply's array rule, called directly: what
    ``apply`` runs for it, without the operator's way there and the hot function's
    decline (an unmade dual's product is the hot function's, the cheaper way)."""
    if _MUL.fast is not None and not D._state.grad and not D._inference[0] and (
            _made_dual(ct) or _made_dual(k)):
        lk = k._level if k.__class__ is Tensor else 0
        L = ct._level if ct._level > lk else lk
        if L in D._duals:  # (a dual level: a jet level of Taylor mode is the general way)
            r = _MUL.fast(_MUL, (ct, k), L, None)
            if r is not None:
                return r
    return ct * k


def _made_dual(t: Any) -> bool:
    """A dual stored made, which the hot path declines: a batched (or nested) tangent, or a
    primal kept as a Tensor."""
    return t.__class__ is Tensor and 0 < t._level < D.LIN and (
        t._stored_primal is not None or t._stored_tangent.__class__ is not np.ndarray)


_MUL = E.PRIMS["multiply"]


def _writable(parts: Any) -> bool:
    """Whether ``array_parts``' arrays may be written (a 0-d one made from a NumPy
    scalar is read-only)."""
    return parts is not None and all(a is None or a.flags.writeable for a in parts[:2])


def _times_fresh(ct: Tensor, k: Any, primals: Any, out: Any, take: bool = False,
                 dead: Any = None) -> Any:
    """``ct * k`` written into the arrays of ``k`` when the coefficient is a fresh
    temporary (made by its formula, seen by nothing else), and of ``ct`` too with
    ``take`` (nothing else holds it); None otherwise. Where ``dead()`` (nothing reads the
    primal of the product: forward-over-reverse's last nodes before its inputs), a dual
    product's primal is a read-only stand-in of zeros, not computed.

    ``k`` must hold only arrays it allocated: none of them a view, or an array of the
    values the formula read (``"b"`` is the saved operand itself; ``y + 1`` passes ``y``'s
    tangent on). The results are those of ``ct * k``: the same products and sums (``k``
    itself for a ``ct`` of ones, see ``_ones``). Small arrays are left to the product:
    below ``_INPLACE_MIN`` elements an allocation costs less than these checks.
    """
    kp = array_parts(k)
    if kp is None or kp[0].size < _INPLACE_MIN:
        return None
    cp = array_parts(ct)
    if cp is None or kp[2] < 0 or cp[2] < 0 or D._state.grad:
        return None
    k0, k1, lk = kp
    c0, c1, lc = cp
    if lk and lc and lk != lc:  # (duals at two levels: a nested result)
        return None
    if k0.shape != c0.shape or k0.dtype != c0.dtype or (
            k1 is not None and (k1.shape != c0.shape or k1.dtype != c0.dtype)) or (
            c1 is not None and c1.dtype != c0.dtype):
        return None
    if k0.base is not None or (k1 is not None and k1.base is not None) or not _writable(kp):
        return None
    if k0 is k1:
        return None
    for a in _arrays_of((ct, out, *primals)):  # (a loop: a generator costs more)
        if a is k0 or (a is k1 and k1 is not None):
            return None
    if k1 is None and c1 is None:  # plain * plain
        return D._wrap(np.multiply(c0, k0, out=k0), 0)
    unread = dead is not None and dead()  # (a dual product: its primal may go unwritten)
    if k1 is None:  # dual * plain
        t = np.multiply(c1, k0, out=c1 if take else np.empty_like(k0))  # (an array, even 0-d)
        return _unmade(lc, _unread(k0) if unread else np.multiply(c0, k0, out=k0), t)
    if c1 is None:  # plain * dual: both parts scale by the cotangent
        if _ones(c0):  # (c0 * k is k itself)
            return _unmade(lk, _unread(k0) if unread else k0, k1)
        t = np.multiply(c0, k1, out=k1)
        return _unmade(lk, _unread(k0) if unread else np.multiply(c0, k0, out=k0), t)
    # dual * dual: (c0 + c1 e)(k0 + k1 e) = c0 k0 + (c1 k0 + c0 k1) e
    np.multiply(c0, k1, out=k1)
    p = _unread(k0) if unread else np.multiply(c0, k0, out=c0 if take else np.empty_like(k0))
    np.multiply(c1, k0, out=k0)
    return _unmade(lk, p, np.add(k0, k1, out=k1))


def _ones(c: Any) -> bool:
    """Whether ``c`` is real and 1 everywhere, held as one value (every stride 0: a loss's
    seed sent back through ``sum``): then ``c * k`` is ``k``, exactly."""
    return c.dtype.kind == "f" and not any(c.strides) and c[(0,) * c.ndim] == 1


def _unread(k: Any) -> Any:
    """A read-only stand-in of ``k``'s shape and dtype (zeros, one value broadcast) for a
    primal nothing reads."""
    return np.broadcast_to(np.zeros((), k.dtype), k.shape)


def _arrays_of(ts: Any) -> list[Any]:
    """Every array the Tensors ``ts`` hold, through their dual parts."""
    seen: list[Any] = []
    stack = list(ts)
    while stack:
        t = stack.pop()
        if t.__class__ is Tensor:
            if t._level and t._level < D.LIN:
                if t._stored_primal is not None:
                    stack.append(t._stored_primal)
                stack.append(t._stored_tangent)
            t = t._data  # (a stand-in's is no array)
        if t.__class__ is np.ndarray:
            seen.append(t)
    return seen


class Scatter:
    """getitem's transpose with a basic index, not yet written out: the cotangent ``p``
    (with tangent ``t``) at ``key`` of zeros of ``shape``. The engine adds it into the
    input's accumulated cotangent when it owns that, instead of summing a fresh array of
    zeros; ``kind`` is ``array_parts``'s."""

    __slots__ = ("p", "t", "kind", "key", "shape", "neg")

    def __init__(self, p: Any, t: Any, kind: int, key: Any, shape: tuple[int, ...]) -> None:
        self.p, self.t, self.kind, self.key, self.shape = p, t, kind, key, shape
        self.neg = False  # minus that (a negated cotangent's: see Negated)

    def dense(self) -> Any:
        """The cotangent written out (``index_add``), as an array of the cotangent's kind."""
        z = _placed(self.p, self.key, self.shape, self.neg)
        if self.kind < 0:
            return z
        if not self.kind:
            return D._wrap(z, 0)
        return _unmade(self.kind, z, _placed(self.t, self.key, self.shape, self.neg))


def _placed(p: Any, key: Any, shape: tuple[int, ...], neg: bool = False) -> Any:
    """Zeros of ``shape`` with ``p`` (``-p`` with ``neg``) written at the basic ``key``.
    For a large slab (one axis cut by a step-1 slice: ``x[1:]``, ``x[:, :-1]``) only what
    lies outside it is zeroed, not the whole array before ``p`` is written over most of
    it (a pass through memory fewer); the values are the same."""
    rest = _outside(key, shape) if p.size >= _SLAB_MIN else None
    if rest is None:
        z = _B.zeros(shape, p.dtype, like=None if p.__class__ is np.ndarray else _like(p))
    else:
        z = _B.empty(shape, p.dtype, like=None if p.__class__ is np.ndarray else _like(p))
        for k in rest:
            z[k] = 0
    if neg:
        v = z[(*key, ...)]  # (a view even where the key is all ints)
        np.negative(p, out=v)
    else:
        z[key] = p
    return z


_SLAB_MIN = 1 << 14  # elements: below this, zeroing it all costs less than the checks


def _outside(key: Any, shape: tuple[int, ...]) -> tuple[Any, ...] | None:
    """The keys of what lies outside ``key`` in an array of ``shape``, when ``key`` cuts
    one axis by a step-1 slice and takes every other whole; None for any other key."""
    if len(key) != len(shape):  # (an int or a new axis in it)
        return None
    axis = lo = hi = -1
    for i, (k, n) in enumerate(zip(key, shape, strict=True)):
        if k.__class__ is not slice:
            return None
        start, stop, step = k.indices(n)
        if step != 1:
            return None
        if start == 0 and stop == n:
            continue
        if axis >= 0:
            return None
        axis, lo, hi = i, start, max(stop, start)
    if axis < 0:
        return ()
    whole = (slice(None),) * axis
    return whole + (slice(0, lo),), whole + (slice(hi, None),)


def scatter_t(ct: Any, idx: L.Index, aval: Any) -> Scatter | None:
    """getitem's transpose for the engine, when ``ct`` is held as arrays; else None."""
    if not idx.basic:  # (an advanced index may repeat elements: np.add.at)
        return None
    parts = array_parts(ct)
    if parts is None:
        return None
    p, t, kind = parts
    shape, dtype = aval
    if p.dtype != dtype or (t is not None and t.dtype != dtype):
        return None
    return Scatter(p, t, kind, idx.key, shape)


def vjp(self: Node, cts: list[Any], needs: list[bool], mine: bool = False,
        dead: Any = None) -> list[Any]:
    """``Node.vjp`` with the transposes' fast paths (``graph.install_vjp``): each branch
    below gives what ``Node.general_vjp`` gives, without tracing the rule, or hands the
    node on to it.

    A cotangent may be a bare array (the engine's fast lane: plain, unbatched, not
    recorded); then so may the results. ``mine``: nothing but this call holds the
    cotangent's arrays (the engine's own sum), so the rule may write into them; a
    result wrapped as ``Given`` is held by nothing else either. ``dead(node)``: whether
    nothing reads the primals of the results (``fast.engine._feeds_tangents``), so that a
    dual result may carry a stand-in there.
    """
    c = cts[0]
    if c.__class__ is Negated and len(cts) == 1:
        # its rule is linear: minus its transpose of c (the sign waits, see Negated)
        return [_minus(r) for r in self.vjp([c.c], needs, mine, dead)]
    fast = self.prim.transposed
    if fast is not None and self.nbs is None:
        if c.__class__ is _ndarray or (c.__class__ is Tensor and not c._level
                                       and not _gm.state.grad
                                       and c._data.__class__ is _ndarray):  # (bare
            # cotangents are NumPy's: another kind's are Tensors, on the general way)
            arrays = plain_arrays(self)
            if arrays is not None:
                return fast(self.prim, c, arrays[0], arrays[1], self.avals, needs,
                            self.out_avals[0][1])
    elif self.prim is _SLICED and self.nbs is None:
        if self.saved is None:  # (its index arrays were released)
            self._unpack()  # raises torch's "second time" error
        r = scatter_t(cts[0], self.params["idx"], self.avals[0])
        if r is not None:  # the engine adds it into the input's cotangent
            return [r]
    cts = tensors(cts)
    prim = self.prim
    if fast is not None and self.nbs is None and cts[0] is not None:
        # the elementwise program is known: transpose it without tracing it
        if self.saved or self.saved is None or _computes(prim.coefs, needs):
            primals, out = self._unpack()
        else:  # (add, subtract, negative: nothing saved, no coefficient to compute)
            primals = out = None
        res = elementwise_t(prim.coefs, cts[0], primals, out, self.avals, needs, mine,
                            True, not self.hooked,
                            None if dead is None or self.hooked else lambda: dead(self))
        for i, n in enumerate(needs):
            if n and res[i] is None:
                res[i] = _zeros_for(cts, self.avals[i])
        return res
    if prim.transpose is not None and cts[0] is not None and linear_in(self, needs):
        # linear in the inputs asked for: its JVP there is the primitive itself, so the
        # program to transpose is the one equation prim(..., t_i, ...), and its
        # transpose is the primitive's rule on the cotangent (transpose_program's step)
        lins = [placeholder(*self.avals[i]) if n else None for i, n in enumerate(needs)]
        args, _ = self._unpack(lins)
        res = [None] * len(lins)
        for i, r in enumerate(prim.transpose(cts[0], args, **self.params)):
            if r is not None and lins[i] is not None:
                res[i] = fit_dtype(r, self.avals[i][1])
        return self._completed(cts, needs, res)
    return self.general_vjp(cts, needs)


def plain_arrays(node: Node) -> tuple[list[Any], Any] | None:
    """``node``'s saved values as arrays (``prim.transposed``'s ``arrays`` and ``y``), when
    all are plain and unchanged; else None."""
    saved = node._saved_values()
    if saved is None:
        return None
    consts = node.consts  # None below: not read by the rule
    arrays = [None] * len(consts) if consts.__class__ is tuple else \
        [None if c is _ABSENT else c for c in consts]  # (tuple: the shared all-Tensor one)
    y = None
    for k, sv in saved.items() if saved else ():  # (an empty dict's items cost more)
        if sv.__class__ is Tensor:  # an input saved bare, at version 0 (the common case)
            vc = sv._version_cell
            if sv._level or sv._batch_ndim or (vc is not None and vc[0]):
                return None
            arrays[k] = sv._data
        elif k == "out":
            sv = sv[0]
            if sv is None:  # (an output not read: "out<k>" of another)
                return None
            y = sv.packed
            if sv.unpack is not None or y.__class__ is Tensor or sv.vc[0] != sv.version:
                return None
        else:
            v = sv.packed
            if sv.unpack is not None or v._level or v._batch_ndim or sv.vc[0] != sv.version:
                return None
            arrays[k] = v._data
    return arrays, y


def linear_in(node: Node, needs: list[bool]) -> bool:
    """Whether ``node``'s rule is linear in the inputs asked for (``needs``): its JVP there
    is the primitive itself, whose transpose rule then is the node's VJP."""
    prim = node.prim
    if prim.multi or prim.boundary or node.nbs is not None:
        return False
    linear = prim.linear
    wanted = 0  # (a loop, not comprehensions: this runs once per node)
    for i, n in enumerate(needs):
        if n:
            if i not in linear:
                return False
            wanted += 1
    return prim.joint or wanted == 1


_SLICED = L.getitem


def install() -> None:
    """Make ``vjp`` every node's VJP (family ``transpose``)."""
    if switch.on("transpose"):
        graph.install_vjp(vjp)
