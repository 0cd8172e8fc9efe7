"""Transpose rules of the linear primitives: the only code that knows adjoints.

Each rule is ``rule(ct, args, **params) -> cotangent per argument`` (``None``
for arguments that are not placeholders). Rules are adjoints for the real inner
product ``<a, b> = Re(sum(conj(a) * b))``: multiplying by ``c`` transposes to
multiplying by ``conj(c)``, which yields the seeds' conjugate Wirtinger
gradients. Rules are written with dualad operations, so they are themselves
differentiable (double backward) and carry tangents (forward-over-reverse), and
batched cotangents flow through the primitives' batching rules.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _backend as _B
from .. import _dispatch as D
from .._backend import like as _like
from .._tensor import Tensor
from ..ops import elementwise as E
from ..ops import linear as L
from ..ops import vocabulary as F
from . import graph
from .linearize import fit_dtype, is_lin


def _conj(c: Any) -> Any:
    if isinstance(c, Tensor):
        return F.conj(c) if c._data.dtype.kind == "c" else c
    if isinstance(c, (bool, int, float)):
        return c
    if isinstance(c, complex):
        return c.conjugate()
    return np.conj(c)


def unbroadcast(ct: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``ct`` down to ``shape`` (the transpose of broadcasting)."""
    if ct.shape == shape:
        return ct
    lead = ct.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and ct.shape[lead + i] != 1
    )
    r = F.sum(ct, axis=axes, keepdims=True) if axes else ct
    return F.reshape(r, shape)


@E._quietly  # (ct * c_i: 0 * inf at a singular point is NaN, not a NumPy warning)
def elementwise_t(coefs: Any, ct: Tensor, primals: Any, out: Any, avals: Any,
                  needs: Any, mine: bool = False, wrap: bool = False,
                  lazy: bool = False, dead: Any = None) -> list[Any]:
    """The transpose of an elementwise JVP ``sum_i t_i * c_i`` at the saved values.

    This is what tracing the rule and transposing its program gives (``_mul_t`` per
    term, the broadcast summed out, the dtype fitted), written out once for the whole
    family, on Tensors: cotangents that are dual, batched or recorded go through it.
    ``mine``: nothing else holds ``ct``'s arrays, so the one term that reads it may write
    into them; ``wrap``: a result nothing else holds comes back as ``graph.Given``;
    ``lazy``: ``-ct`` (of ``ct``'s shape and dtype, held as arrays, nothing recording)
    comes back as ``graph.Negated``, not written out; ``dead()``: whether nothing reads
    the results' primals (see ``_times_fresh``).
    """
    users = 0
    for f, need in zip(coefs, needs, strict=True):
        if need and f != 0:
            users += 1
    take = mine and users == 1 and not D._state.grad and _writable(graph.flat_parts(ct))
    res: list[Any] = []
    for f, need, aval in zip(coefs, needs, avals, strict=True):
        if not need or f == 0:  # (a zero derivative: the caller fills in zeros)
            res.append(None)
            continue
        shape, dtype = aval
        if f == 1:
            c, made = ct, take
        elif f == -1:
            parts = graph.flat_parts(ct) if lazy and not D._state.grad else None
            if parts is not None and ct._data.dtype == dtype and ct.shape == shape:
                res.append(graph.Negated(ct, take, parts))  # (the sign waits: graph.Negated)
                continue
            if take:
                for a in graph.flat_parts(ct)[:2]:
                    if a is not None:
                        np.negative(a, out=a)
                c, made = ct, True
            else:
                c = -ct
                made = graph.fresh(c, ct)
        else:
            k = _conj(E._coef(f(*primals, out), out))
            c = _times_fresh(ct, k, primals, out, take, dead)
            made = c is not None and (dead is None or c._data.flags.writeable)  # (a stand-in
            # primal is no one's to write)
            if c is None:
                c = _times(ct, k)
        r = fit_dtype(unbroadcast(c, shape), dtype)
        res.append(graph.Given(r) if wrap and made and r is c else r)
    return res


def _times(ct: Tensor, k: Any) -> Any:
    """``ct * k``. While nothing records, a product with a dual whose tangent is batched
    (or whose primal is kept as a Tensor) is multiply's array rule, called directly: what
    ``apply`` runs for it, without the operator's way there and the hot function's
    decline (a flat dual's product is the hot function's, the cheaper way)."""
    if _MUL.fast is not None and not D._state.grad and not D._inference[0] and (
            _unflat(ct) or _unflat(k)):
        lk = k._level if k.__class__ is Tensor else 0
        L = ct._level if ct._level > lk else lk
        if L in D.live:
            r = _MUL.fast(_MUL, (ct, k), L, None)
            if r is not None:
                return r
    return ct * k


def _unflat(t: Any) -> bool:
    """A dual the hot path declines: a batched (or nested) tangent, or a kept primal."""
    return t.__class__ is Tensor and 0 < t._level < D.LIN and (
        t._p is not None or t._t.__class__ is not np.ndarray)


_MUL = E.PRIMS["multiply"]


def _writable(parts: Any) -> bool:
    """Whether ``graph.flat_parts``' arrays may be written (a 0-d one made from a NumPy
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
    below ``E._INPLACE_MIN`` elements an allocation costs less than these checks.
    """
    kp = graph.flat_parts(k)
    if kp is None or kp[0].size < E._INPLACE_MIN:
        return None
    cp = graph.flat_parts(ct)
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
        return E._flat(lc, _unread(k0) if unread else np.multiply(c0, k0, out=k0), t)
    if c1 is None:  # plain * dual: both parts scale by the cotangent
        if _ones(c0):  # (c0 * k is k itself)
            return E._flat(lk, _unread(k0) if unread else k0, k1)
        t = np.multiply(c0, k1, out=k1)
        return E._flat(lk, _unread(k0) if unread else np.multiply(c0, k0, out=k0), t)
    # dual * dual: (c0 + c1 e)(k0 + k1 e) = c0 k0 + (c1 k0 + c0 k1) e
    np.multiply(c0, k1, out=k1)
    p = _unread(k0) if unread else np.multiply(c0, k0, out=c0 if take else np.empty_like(k0))
    np.multiply(c1, k0, out=k0)
    return E._flat(lk, p, np.add(k0, k1, out=k1))


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
                if t._p is not None:
                    stack.append(t._p)
                stack.append(t._t)
            t = t._data  # (a stand-in's is no array)
        if t.__class__ is np.ndarray:
            seen.append(t)
    return seen


def _mul_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    if is_lin(a):
        return [unbroadcast(ct * _conj(b), a.shape), None]
    return [None, unbroadcast(_conj(a) * ct, b.shape)]


def _div_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    return [unbroadcast(ct / _conj(b), a.shape), None]


def _add_t(ct: Any, args: Any) -> list[Any]:
    return [unbroadcast(ct, a.shape) if is_lin(a) else None for a in args]


def _sub_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    return [unbroadcast(ct, a.shape) if is_lin(a) else None,
            unbroadcast(-ct, b.shape) if is_lin(b) else None]


def _scale_t(k: float) -> Any:
    return lambda ct, args: [ct * k]


def _where_t(ct: Any, args: Any) -> list[Any]:
    c, a, b = args
    return [
        None,
        unbroadcast(F.where(c, ct, 0), a.shape) if is_lin(a) else None,
        unbroadcast(F.where(c, 0, ct), b.shape) if is_lin(b) else None,
    ]


def _sum_t(ct: Any, args: Any, *, axis: tuple[int, ...], keepdims: bool) -> list[Any]:
    (a,) = args
    shape = a.shape
    if not keepdims and axis != tuple(range(len(axis))):  # (summed leading axes broadcast
        # back as they are: a whole sum's scalar, a batch of rows' sum)
        ct = F.reshape(ct, tuple(1 if i in axis else d for i, d in enumerate(shape)))
    # (the shapes are a sum's: broadcast_to's checks of its arguments are not needed)
    return [ct if ct.shape == shape else D.apply(L.broadcast_to, ct, shape=shape)]


def _transpose_t(ct: Any, args: Any, *, axes: tuple[int, ...]) -> list[Any]:
    return [F.transpose(ct, tuple(int(i) for i in np.argsort(axes)))]


def _getitem_t(ct: Any, args: Any, *, idx: L.Index) -> list[Any]:
    return [D.apply(L.index_add, ct, idx=idx, shape=args[0].shape)]


def _diagonal_t(ct: Any, args: Any, *, writeable: bool) -> list[Any]:
    shape = args[0].shape
    return [D.apply(L.index_add, ct, idx=L.diagonal_index(len(shape), shape[-1]), shape=shape)]


class Scatter:
    """getitem's transpose with a basic index, not yet written out: the cotangent ``p``
    (with tangent ``t``) at ``key`` of zeros of ``shape``. The engine adds it into the
    input's accumulated cotangent when it owns that, instead of summing a fresh array of
    zeros; ``kind`` is ``graph.flat_parts``'s."""

    __slots__ = ("p", "t", "kind", "key", "shape", "neg")

    def __init__(self, p: Any, t: Any, kind: int, key: Any, shape: tuple[int, ...]) -> None:
        self.p, self.t, self.kind, self.key, self.shape = p, t, kind, key, shape
        self.neg = False  # minus that (a negated cotangent's: see graph.Negated)

    def dense(self) -> Any:
        """The cotangent written out (``index_add``), as an array of the cotangent's kind."""
        z = _placed(self.p, self.key, self.shape, self.neg)
        if self.kind < 0:
            return z
        if not self.kind:
            return D._wrap(z, 0)
        return E._flat(self.kind, z, _placed(self.t, self.key, self.shape, self.neg))


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
    parts = graph.flat_parts(ct)
    if parts is None:
        return None
    p, t, kind = parts
    shape, dtype = aval
    if p.dtype != dtype or (t is not None and t.dtype != dtype):
        return None
    return Scatter(p, t, kind, idx.key, shape)


def _index_add_t(ct: Any, args: Any, *, idx: L.Index, shape: tuple[int, ...]) -> list[Any]:
    return [D.apply(L.getitem, ct, idx=idx)]


def _concat_t(ct: Any, args: Any, *, axis: int) -> list[Any]:
    out, lo = [], 0
    for a in args:
        n = a.shape[axis]
        key = (slice(None),) * axis + (slice(lo, lo + n),)
        out.append(F.getitem(ct, key) if is_lin(a) else None)
        lo += n
    return out


def _cumsum_t(ct: Any, args: Any, *, axis: int) -> list[Any]:
    return [F.flip(F.cumsum(F.flip(ct, axis), axis), axis)]


def _pad_t(ct: Any, args: Any, *, width: tuple[tuple[int, int], ...]) -> list[Any]:
    (a,) = args
    return [F.getitem(ct, tuple(slice(lo, lo + d) for (lo, _), d in
                                zip(width, a.shape, strict=True)))]


def _astype_t(ct: Any, args: Any, *, dtype: Any) -> list[Any]:
    (a,) = args
    if a.dtype.kind != "c" and ct.dtype.kind == "c":
        ct = F.real(ct)
    return [ct if ct.dtype == a.dtype else F.astype(ct, a.dtype)]


def _matmul_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    sa, sb = a.shape, b.shape
    if is_lin(a):
        bc = _conj(b)
        if len(sa) == 1 and len(sb) == 1:
            r = ct * bc
        elif len(sa) == 1 and len(sb) == 2:  # (n,) @ (n, m): ct @ b.T (as below)
            r = F.matmul(ct, F.swapaxes(bc, -1, -2))
        elif len(sa) == 1:  # (n,) @ (..., n, m) -> (..., m)
            r = F.matmul(F.expand_dims(ct, -2), F.swapaxes(bc, -1, -2))[..., 0, :]
        elif len(sb) == 1:  # (..., k, n) @ (n,) -> (..., k)
            r = F.expand_dims(ct, -1) * bc
        else:
            r = F.matmul(ct, F.swapaxes(bc, -1, -2))
        return [unbroadcast(r, sa), None]
    ac = _conj(a)
    if len(sa) == 1 and len(sb) == 1:
        r = ac * ct
    elif len(sb) == 1 and len(sa) == 2:  # (k, n) @ (n,): ct @ a, where a batch of
        r = F.matmul(ct, ac)  # cotangents that is a known diagonal scales rows (ops.linear)
    elif len(sb) == 1:  # (..., k, n) @ (n,)
        r = F.matmul(F.swapaxes(ac, -1, -2), F.expand_dims(ct, -1))[..., 0]
    elif len(sa) == 1:  # (n,) @ (..., n, m)
        r = F.expand_dims(ac, -1) * F.expand_dims(ct, -2)
    else:
        r = F.matmul(F.swapaxes(ac, -1, -2), ct)
    return [None, unbroadcast(r, sb)]


def _einsum_t(ct: Any, args: Any, *, spec: str) -> list[Any]:
    ins, out = spec.split("->")
    terms = ins.split(",")
    res: list[Any] = []
    for i, (t, a) in enumerate(zip(terms, args, strict=True)):
        if not is_lin(a):
            res.append(None)
            continue
        others = [(terms[j], _conj(args[j])) for j in range(len(args)) if j != i]
        seen = set(out).union(*[set(s) for s, _ in others])
        keep = "".join(c for c in t if c in seen)
        r = F.einsum(",".join([out] + [s for s, _ in others]) + "->" + keep, ct,
                     *[o for _, o in others])
        if keep != t:  # letters only in this operand were summed: broadcast them back
            r = F.reshape(r, tuple(a.shape[k] if c in seen else 1 for k, c in enumerate(t)))
            r = F.broadcast_to(r, a.shape)
        res.append(r)
    return res


P = E.PRIMS
RULES: dict[Any, Any] = {
    P["negative"]: lambda ct, args: [-ct],
    P["positive"]: lambda ct, args: [ct],
    P["add"]: _add_t,
    P["subtract"]: _sub_t,
    P["multiply"]: _mul_t,
    P["divide"]: _div_t,
    P["deg2rad"]: _scale_t(E.CONSTANTS["DEG"]),
    P["rad2deg"]: _scale_t(E.CONSTANTS["RAD"]),
    P["conj"]: lambda ct, args: [F.conj(ct)],
    P["real"]: lambda ct, args: [F.astype(ct, args[0].dtype)],
    P["imag"]: lambda ct, args: [ct * 1j],
    L.where: _where_t,
    L.reduce_sum: _sum_t,
    L.reshape: lambda ct, args, *, shape: [F.reshape(ct, args[0].shape)],
    L.transpose: _transpose_t,
    L.broadcast_to: lambda ct, args, *, shape: [unbroadcast(ct, args[0].shape)],
    L.getitem: _getitem_t,
    L.diagonal: _diagonal_t,
    L.tri: lambda ct, args, *, k, upper: [D.apply(L.tri, ct, k=k, upper=upper)],
    L.index_add: _index_add_t,
    L.concatenate: _concat_t,
    L.cumsum: _cumsum_t,
    L.pad_zero: _pad_t,
    L.astype: _astype_t,
    L.matmul: _matmul_t,
    L.einsum: _einsum_t,
}

for _prim, _rule in RULES.items():
    _prim.transpose = _rule



def _setitem_t(ct: Any, args: Any, *, idx: L.Index) -> list[Any]:
    from .._dispatch import apply

    x, v = args
    return [
        apply(L.setitem, ct, 0.0, idx=idx) if is_lin(x) else None,
        unbroadcast(apply(L.getitem, ct, idx=idx), v.shape) if is_lin(v) else None,
    ]


L.setitem.transpose = _setitem_t


L.unbatch.transpose = lambda ct, args, *, size: [D.apply(L.rebatch, ct, size=size)]
L.rebatch.transpose = lambda ct, args, *, size: [D.apply(L.unbatch, ct, size=size)]

graph.elementwise_t = elementwise_t
graph.sliced, graph.scatter_t, graph.sliced_scatter = L.getitem, scatter_t, Scatter
