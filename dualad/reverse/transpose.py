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

from ..core import dispatch as D
from ..core.tensor import Tensor
from ..rules import elementwise as E
from ..rules import linear as L
from ..rules import vocabulary as F
from .linearize import is_lin


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
        r = F.matmul(ct, ac)  # cotangents that is a known diagonal scales rows (rules.linear)
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
    from ..core.dispatch import apply

    x, v = args
    return [
        apply(L.setitem, ct, 0.0, idx=idx) if is_lin(x) else None,
        unbroadcast(apply(L.getitem, ct, idx=idx), v.shape) if is_lin(v) else None,
    ]


L.setitem.transpose = _setitem_t


L.unbatch.transpose = lambda ct, args, *, size: [D.apply(L.rebatch, ct, size=size)]
L.rebatch.transpose = lambda ct, args, *, size: [D.apply(L.unbatch, ct, size=size)]

