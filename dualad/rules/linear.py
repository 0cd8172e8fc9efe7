"""Structural linear primitives: the trusted kernel besides the elementwise linear ones.

Each has its evaluation, its batching rule (tangents with leading batch axes),
its abstract evaluation (shape and dtype, so reverse mode can linearize without
computing values), its JVP — itself, applied to the tangents — and its
transpose rule, given to it where it is made.

A transpose rule is ``rule(ct, args, **params) -> cotangent per argument``
(``None`` for arguments that are not placeholders, ``is_lin``). Rules are
adjoints for the real inner product ``<a, b> = Re(sum(conj(a) * b))``:
multiplying by ``c`` transposes to multiplying by ``conj(c)``, which yields the
seeds' conjugate Wirtinger gradients. Rules are written with primitives (and
Tensor's operators), so they are themselves differentiable (double backward)
and carry tangents (forward-over-reverse), and batched cotangents flow through
the primitives' batching rules.

Parameters are canonical by the time they reach a primitive (axes are sorted
non-negative tuples, shapes are explicit), so rules never re-parse user input:
the rules here apply primitives directly, not the NumPy-facing vocabulary.
"""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np
from array_api_compat import is_cupy_array as _is_cupy

from ..backends import namespace as _B
from ..backends.namespace import add_at as _add_at
from ..backends.namespace import broadcast_to as _broadcast_to
from ..backends.namespace import gather as _gather
from ..backends.namespace import is_dask as _is_dask
from ..backends.namespace import like as _like
from ..core.dispatch import Primitive, apply
from ..core.dispatch import zeros_tangent as zeros_batched  # noqa: F401  (a zero tangent)
from ..core.tensor import Tensor
from ._util import align, is_lin, move_batch_first, move_batch_last, proxy_aval, shape_of


def _self_jvp(prim_ref: list[Primitive]) -> Any:
    """JVP of a primitive linear in its first argument alone: apply it to the tangent."""

    def jvp(primals: Any, tangents: Any, out: Any, **params: Any) -> Any:
        return apply(prim_ref[0], tangents[0], *primals[1:], **params)

    return jvp


def _linear1(name: str, impl: Any, batch: Any, aval: Any, transpose: Any,
             view: bool = False) -> Primitive:
    ref: list[Primitive] = []
    p = Primitive(name, impl, _self_jvp(ref), linear=(0,), batch=batch, aval=aval, view=view,
                  transpose=transpose)
    ref.append(p)
    LINEAR1.append(p)
    return p


LINEAR1: list[Primitive] = []  # (their JVP on arrays: ``fast.elementwise.fast_linear1``)


# -- the few operations the transpose rules are written in ----------------------------------
# (each a primitive on canonical parameters; an identity reshape or permutation is the
# array itself, as NumPy's functions make it, so a rule adds no node that does nothing)


def _conj(c: Any) -> Any:
    """``conj(c)``, for a coefficient ``c``: multiplying by ``c`` transposes to multiplying
    by ``conj(c)``."""
    if isinstance(c, Tensor):
        return c.conj() if c._data.dtype.kind == "c" else c
    if isinstance(c, (bool, int, float)):
        return c
    if isinstance(c, complex):
        return c.conjugate()
    return np.conj(c)


def _reshaped(a: Any, shape: tuple[int, ...]) -> Any:
    return a if a.shape == shape else apply(reshape, a, shape=shape)


def _permuted(a: Any, axes: tuple[int, ...]) -> Any:
    return a if axes == tuple(range(len(axes))) else apply(transpose, a, axes=axes)


def _swapped(a: Any) -> Any:
    """``a`` with its last two axes swapped (a constant array comes back a Tensor)."""
    n = a.ndim
    return apply(transpose, a, axes=(*range(n - 2), n - 1, n - 2))


def _expanded(a: Any, axis: int) -> Any:
    """``a`` with a new axis of length one at ``axis`` (-1 or -2)."""
    s = tuple(a.shape)
    k = len(s) + 1 + axis
    return apply(reshape, a, shape=s[:k] + (1,) + s[k:])


def _sliced(a: Any, key: tuple[Any, ...]) -> Any:
    return apply(getitem, a, idx=Index(key, a.ndim))


def _flipped(a: Any, axis: int) -> Any:
    return _sliced(a, tuple(slice(None, None, -1) if i == axis else slice(None)
                            for i in range(a.ndim)))


def unbroadcast(ct: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``ct`` down to ``shape`` (the transpose of broadcasting)."""
    if ct.shape == shape:
        return ct
    lead = ct.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and ct.shape[lead + i] != 1
    )
    r = apply(reduce_sum, ct, axis=axes, keepdims=True) if axes else ct
    return _reshaped(r, shape)


# -- sum over axes ----------------------------------------------------------------------


def _sum_impl(a: Any, *, axis: tuple[int, ...], keepdims: bool) -> Any:
    return a.sum(axis=axis, keepdims=keepdims)


def _sum_batch(arrays: Any, nbs: Any, *, axis: tuple[int, ...], keepdims: bool) -> Any:
    nb = nbs[0]
    return _sum_impl(arrays[0], axis=tuple(a + nb for a in axis), keepdims=keepdims), nb


def _sum_aval(args: Any, *, axis: tuple[int, ...], keepdims: bool) -> Any:
    s = args[0].shape
    shape = tuple(1 if i in axis else d for i, d in enumerate(s) if keepdims or i not in axis)
    return shape, args[0].dtype


def _sum_t(ct: Any, args: Any, *, axis: tuple[int, ...], keepdims: bool) -> list[Any]:
    (a,) = args
    shape = a.shape
    if not keepdims and axis != tuple(range(len(axis))):  # (summed leading axes broadcast
        # back as they are: a whole sum's scalar, a batch of rows' sum)
        ct = _reshaped(ct, tuple(1 if i in axis else d for i, d in enumerate(shape)))
    # (the shapes are a sum's: broadcast_to's checks of its arguments are not needed)
    return [ct if ct.shape == shape else apply(broadcast_to, ct, shape=shape)]


reduce_sum = _linear1("sum", _sum_impl, _sum_batch, _sum_aval, _sum_t)


# -- reshape, transpose, broadcast_to ------------------------------------------------------


def _reshape_impl(a: Any, *, shape: tuple[int, ...]) -> Any:
    return a.reshape(shape)


def _reshape_batch(arrays: Any, nbs: Any, *, shape: tuple[int, ...]) -> Any:
    a, nb = arrays[0], nbs[0]
    return a.reshape(a.shape[:nb] + shape), nb


reshape = _linear1(
    "reshape", _reshape_impl, _reshape_batch, lambda args, *, shape: (shape, args[0].dtype),
    lambda ct, args, *, shape: [_reshaped(ct, args[0].shape)], True,
)


def _transpose_impl(a: Any, *, axes: tuple[int, ...]) -> Any:
    return a.transpose(axes)


def _transpose_batch(arrays: Any, nbs: Any, *, axes: tuple[int, ...]) -> Any:
    nb = nbs[0]
    return arrays[0].transpose(tuple(range(nb)) + tuple(a + nb for a in axes)), nb


transpose = _linear1(
    "transpose",
    _transpose_impl,
    _transpose_batch,
    lambda args, *, axes: (tuple(args[0].shape[a] for a in axes), args[0].dtype),
    lambda ct, args, *, axes: [_permuted(ct, tuple(int(i) for i in np.argsort(axes)))],
    True,
)


def _broadcast_impl(a: Any, *, shape: tuple[int, ...]) -> Any:
    return np.broadcast_to(a, shape) if a.__class__ is np.ndarray else _broadcast_to(a, shape)


def _broadcast_batch(arrays: Any, nbs: Any, *, shape: tuple[int, ...]) -> Any:
    a, nb = arrays[0], nbs[0]
    a = align(a, nb, len(shape))
    return np.broadcast_to(a, a.shape[:nb] + shape), nb


broadcast_to = _linear1(
    "broadcast_to",
    _broadcast_impl,
    _broadcast_batch,
    lambda args, *, shape: (shape, args[0].dtype),
    lambda ct, args, *, shape: [unbroadcast(ct, args[0].shape)],
    True,
)


def _diagonal_impl(a: Any, *, writeable: bool) -> Any:
    # NumPy's einsum takes a diagonal as a writable view, np.diagonal as a read-only one
    return np.einsum("...ii->...i", a) if writeable else np.diagonal(a, 0, -2, -1)


def _diagonal_t(ct: Any, args: Any, *, writeable: bool) -> list[Any]:
    shape = args[0].shape
    return [apply(index_add, ct, idx=diagonal_index(len(shape), shape[-1]), shape=shape)]


# The diagonal of the last two axes (of equal length), a view: what einsum('ii->i', a)
# (writeable) and np.diagonal (read-only) return in NumPy. Its transpose puts the
# cotangent on the diagonal of zeros; a write into it is a setitem at the diagonal's
# positions (rules.inplace).
diagonal = _linear1(
    "diagonal",
    _diagonal_impl,
    lambda arrays, nbs, *, writeable: (_diagonal_impl(arrays[0], writeable=writeable), nbs[0]),
    lambda args, *, writeable: (tuple(args[0].shape[:-1]), args[0].dtype),
    _diagonal_t,
    True,
)


def _tri_impl(a: Any, *, k: int, upper: bool) -> Any:
    return np.triu(a, k) if upper else np.tril(a, k)


# The upper (``triu``) or lower (``tril``) triangle of the last two axes, zeros elsewhere:
# a mask that depends on the shape and ``k`` alone, so the rule reads no value (as torch's
# tril/triu backward saves only k: a second backward works) and is its own transpose.
tri = _linear1(
    "tri",
    _tri_impl,
    lambda arrays, nbs, *, k, upper: (_tri_impl(arrays[0], k=k, upper=upper), nbs[0]),
    lambda args, *, k, upper: (tuple(args[0].shape), args[0].dtype),
    lambda ct, args, *, k, upper: [apply(tri, ct, k=k, upper=upper)],
)


def diagonal_index(ndim: int, n: int) -> Index:
    """The index of the diagonal of the last two axes (each of length ``n``) of an array
    of ``ndim`` axes: where ``diagonal`` reads."""
    i = np.arange(n)
    return Index((Ellipsis, i, i), ndim)


# -- indexing: gather and its transpose, scatter-add -----------------------------------


def _getitem_impl(a: Any, *, idx: Any) -> Any:
    try:
        return a[idx.key]
    except NotImplementedError as e:  # (Dask: n-d fancy indexing by NumPy index arrays)
        return _fancy(a, idx.key, e)


def _fancy(a: Any, key: tuple[Any, ...], e: Exception) -> Any:
    if _is_dask(a) and not any(_is_dask(k) for k in key):
        return _gather(a, key)
    raise e  # (a lazy index array: Dask's limit)


def _getitem_batch(arrays: Any, nbs: Any, *, idx: Any) -> Any:
    nb = nbs[0]
    if idx.basic:  # slices, ints and newaxes act per axis: skip the batch axes in front
        return arrays[0][(slice(None),) * nb + idx.key], nb
    # Advanced indices may move their axes to the front: batch axes go last, where
    # an index that names every logical axis leaves them alone.
    a = move_batch_last(arrays[0], nb)
    try:
        r = a[idx.key]
    except NotImplementedError as e:
        r = _fancy(a, idx.key, e)
    return move_batch_first(r, nb), nb


class Index:
    """A canonical index: Ellipsis expanded, Tensors turned into arrays, hashable by id.

    ``basic`` is True when the key has no arrays (a view; no repeated elements).
    """

    __slots__ = ("key", "basic")

    def __init__(self, key: Any, ndim: int) -> None:
        key = key if isinstance(key, tuple) else (key,)
        # one pass over the key in the common case (ints, slices, ..., None), which
        # the transpose rules build on every backward pass
        basic = True
        for k in key:
            if not (k is None or k is Ellipsis or k.__class__ is slice or k.__class__ is int):
                basic = False
                break
        if basic:
            used = len(key) - key.count(None) - key.count(Ellipsis)
        else:
            key = tuple(k._data if isinstance(k, Tensor) else k for k in key)
            # (index arrays live on the host: a CuPy one is copied there, as take's are)
            key = tuple(np.asarray(k) if isinstance(k, list) else _B.to_host(k)
                        if _is_cupy(k) else k for k in key)
            used = sum(
                (k.ndim if getattr(k, "dtype", None) == np.bool_ else 1)
                for k in key
                if k is not None and k is not Ellipsis
            )
        n_ell = key.count(Ellipsis) if basic else sum(k is Ellipsis for k in key)
        if n_ell > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if n_ell:
            i = next(i for i, k in enumerate(key) if k is Ellipsis)
            key = key[:i] + (slice(None),) * max(ndim - used, 0) + key[i + 1 :]
        elif used < ndim:
            key = key + (slice(None),) * (ndim - used)
        self.key = key
        self.basic = basic or all(
            k is None or isinstance(k, (slice, int, np.integer)) for k in key)

    def __repr__(self) -> str:
        return f"Index({self.key!r})"


_getitem_proxy_aval = proxy_aval(_getitem_impl)


def _getitem_aval(args: Any, *, idx: Any) -> Any:
    if not idx.basic and any(_is_dask(k) and k.dtype.kind in "iu" for k in idx.key):
        # a lazy index array (interp's positions): its shape and dtype are what the shape
        # of the gather needs; the zero-strided proxy would compute it
        key = tuple(np.broadcast_to(np.zeros((), k.dtype), k.shape)
                    if _is_dask(k) and k.dtype.kind in "iu" else k
                    for k in idx.key)
        return proxy_aval(lambda a: a[key])(args)
    return _getitem_proxy_aval(args, idx=idx)


getitem = _linear1(
    "getitem", _getitem_impl, _getitem_batch, _getitem_aval,
    lambda ct, args, *, idx: [apply(index_add, ct, idx=idx, shape=args[0].shape)], True,
)


def _index_add_impl(a: Any, *, idx: Index, shape: tuple[int, ...]) -> Any:
    z = _B.zeros(shape, dtype=a.dtype, like=_like(a))  # on a's device (NEP 35)
    if idx.basic:
        z[idx.key] = a
    elif z.__class__ is np.ndarray and a.__class__ is np.ndarray:
        np.add.at(z, idx.key, a)
    else:  # (Dask has no scatter-add: one lazy task)
        z = _add_at(z, idx.key, a)
    return z


def _index_add_batch(arrays: Any, nbs: Any, *, idx: Index, shape: tuple[int, ...]) -> Any:
    a, nb = arrays[0], nbs[0]
    z = _B.zeros(a.shape[:nb] + shape, dtype=a.dtype, like=_like(a))
    if idx.basic:  # as in _getitem_batch: a basic index skips the batch axes in front
        z[(slice(None),) * nb + idx.key] = a
        return z, nb
    if z.__class__ is np.ndarray and a.__class__ is np.ndarray:
        np.add.at(move_batch_last(z, nb), idx.key, move_batch_last(a, nb))
        return z, nb
    # (Dask has no scatter-add: a new array, its batch axes moved back to the front)
    z = _add_at(move_batch_last(z, nb), idx.key, move_batch_last(a, nb))
    return np.moveaxis(z, tuple(range(z.ndim - nb, z.ndim)), tuple(range(nb))), nb


index_add = _linear1(
    "index_add",
    _index_add_impl,
    _index_add_batch,
    lambda args, *, idx, shape: (shape, args[0].dtype),
    lambda ct, args, *, idx, shape: [apply(getitem, ct, idx=idx)],
)


# -- concatenate, cumsum, zero padding ----------------------------------------------------


def _concat_impl(*arrays: Any, axis: int) -> Any:
    return np.concatenate(arrays, axis=axis)


def _concat_batch(arrays: Any, nbs: Any, *, axis: int) -> Any:
    nb = max(nbs)
    bshape = next(a.shape[:n] for a, n in zip(arrays, nbs, strict=True) if n == nb)
    parts = [a if n == nb else np.broadcast_to(a, bshape + a.shape) for a, n in
             zip(arrays, nbs, strict=True)]
    return np.concatenate(parts, axis=axis + nb), nb


def _concat_aval(args: Any, *, axis: int) -> Any:
    s = list(args[0].shape)
    s[axis] = sum(shape_of(a)[axis] for a in args)
    return tuple(s), np.result_type(*[a.dtype for a in args])


def zeros_of(p: Any) -> Tensor:
    """Zeros of ``p``'s shape and dtype, reading no values (``p`` may be a stand-in)."""
    from ..core.tensor import _make

    if isinstance(p, Tensor):
        d = p._data
        return _make(_B.zeros(p.shape, d.dtype, like=_like(d)))
    return _make(np.zeros_like(p))


def _concat_jvp(primals: Any, tangents: Any, out: Any, *, axis: int) -> Any:
    ts = [zeros_of(p) if t is None else t for p, t in zip(primals, tangents, strict=True)]
    return apply(concatenate, *ts, axis=axis)


def _concat_t(ct: Any, args: Any, *, axis: int) -> list[Any]:
    out, lo = [], 0
    for a in args:
        n = a.shape[axis]
        key = (slice(None),) * axis + (slice(lo, lo + n),)
        out.append(_sliced(ct, key) if is_lin(a) else None)
        lo += n
    return out


concatenate = Primitive(
    "concatenate", _concat_impl, _concat_jvp, linear=(), batch=_concat_batch, aval=_concat_aval,
    transpose=_concat_t,
)


class _EveryOperand:
    """``linear`` of a primitive of any number of operands, linear in all of them jointly
    (a tuple of the first N would reject operand N: stacking 1000 tensors is common)."""

    __slots__ = ()

    def __contains__(self, i: object) -> bool:
        return isinstance(i, int) and i >= 0

    def __repr__(self) -> str:
        return "every operand"


concatenate.linear = _EveryOperand()  # type: ignore[assignment]


def _cumsum_batch(arrays: Any, nbs: Any, *, axis: int) -> Any:
    return np.cumsum(arrays[0], axis=axis + nbs[0]), nbs[0]


cumsum = _linear1(
    "cumsum",
    lambda a, *, axis: np.cumsum(a, axis=axis),
    _cumsum_batch,
    lambda args, *, axis: (args[0].shape, args[0].dtype),
    # (the adjoint of a running sum is the running sum from the other end)
    lambda ct, args, *, axis: [_flipped(apply(cumsum, _flipped(ct, axis), axis=axis), axis)],
)


def _pad_batch(arrays: Any, nbs: Any, *, width: tuple[tuple[int, int], ...]) -> Any:
    return np.pad(arrays[0], ((0, 0),) * nbs[0] + width), nbs[0]


def _pad_t(ct: Any, args: Any, *, width: tuple[tuple[int, int], ...]) -> list[Any]:
    (a,) = args
    return [_sliced(ct, tuple(slice(lo, lo + d) for (lo, _), d in
                              zip(width, a.shape, strict=True)))]


pad_zero = _linear1(
    "pad",
    lambda a, *, width: np.pad(a, width),
    _pad_batch,
    lambda args, *, width: (
        tuple(d + lo + hi for d, (lo, hi) in zip(args[0].shape, width, strict=True)),
        args[0].dtype,
    ),
    _pad_t,
)


# -- casts --------------------------------------------------------------------------------


def _astype_impl(a: Any, *, dtype: Any) -> Any:
    if a.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        a = a.real  # the documented meaning of a complex -> real cast: keep the real part
    return a.astype(dtype)


def _astype_t(ct: Any, args: Any, *, dtype: Any) -> list[Any]:
    # the adjoint of a cast is the cast back; of embedding R in C, the real part (which a
    # cast from complex to real keeps)
    (a,) = args
    return [ct if ct.dtype == a.dtype else apply(astype, ct, dtype=a.dtype)]


astype = _linear1(
    "astype",
    _astype_impl,
    lambda arrays, nbs, *, dtype: (_astype_impl(arrays[0], dtype=dtype), nbs[0]),
    lambda args, *, dtype: (args[0].shape, np.dtype(dtype)),
    _astype_t,
)


# -- contractions: matmul and einsum (linear in each operand separately) ----------------


def _matmul_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    a, b = primals
    ta, tb = tangents
    r = None if ta is None else apply(matmul, ta, b)
    if tb is not None:
        s = apply(matmul, a, tb)
        r = s if r is None else r + s
    return r


# Standard-basis seeds: the identity matrices that dualad.functional pushes as
# batched tangents to get whole Jacobians (read-only, so they stay identities). The fast
# layer knows them by object (dualad.fast.seeds), so that matmul's batch rule selects
# instead of running a GEMM against the identity.


def identity_seed(n: int, dtype: Any, order: str = "C") -> Any:
    """A read-only ``n x n`` identity that matmul's batch rule recognises.

    ``order="F"`` lays it out column-major, batch axis last in memory: what a forward
    Jacobian wants, whose columns come out batch-first and are returned transposed —
    the seed's layout flows through the tangents (the identity and a diagonal are
    symmetric; selected columns and diagonals are made in the seed's layout), so
    that transpose is then a view, not a copy.

    The last few small ones are kept: a Jacobian computed again at the same size
    (an optimiser's loop) then allocates no fresh identity (for arrays this size
    a fresh allocation is mostly page faults).
    """
    dtype = np.dtype(dtype)
    key = (n, dtype, order)
    e = _recent_seeds.get(key)
    if e is None:
        e = np.eye(n, dtype=dtype, order=order)
        e.flags.writeable = False
        if _seed_made is not None:  # (else matmul's batch rule multiplies by it, as by
            _seed_made(e)  # any matrix)
        if e.nbytes <= _SEED_CACHE_BYTES:
            _keep(_recent_seeds, key, e, 4)
    return e


def _keep(recent: collections.OrderedDict[Any, Any], key: Any, value: Any, n: int) -> None:
    """``recent[key] = value``, dropping the oldest entries beyond ``n``."""
    recent[key] = value
    while len(recent) > n:
        try:  # popitem is one atomic call: safe if threads race here
            recent.popitem(last=False)
        except KeyError:
            break


_SEED_CACHE_BYTES = 1 << 22  # 4 MiB each (n <= 724 in float64), at most 4 of them
_recent_seeds: collections.OrderedDict[tuple[int, Any, str], Any] = collections.OrderedDict()


def seed_product(g: Any, k: Any) -> Any | None:
    """``g * k`` as a known diagonal, where the fast layer knows seeds (``install_seeds``);
    None otherwise (the product is written out)."""
    return None if _seed_product is None else _seed_product(g, k)


# The fast layer's slots for the seeds (``dualad.fast.seeds``), None without it: each new
# seed identity is told to ``_seed_made``; ``_seed_matmul(m, s)`` is ``s @ m`` (a seed
# identity or a diagonal it made) without a GEMM, or None; ``_seed_product`` makes the
# diagonals (``seed_product``).
_seed_made: Any = None
_seed_matmul: Any = None
_seed_product: Any = None


def install_seeds(made: Any, matmul: Any, product: Any) -> None:
    """Fill the seeds' slots (the fast layer's registration, see above)."""
    global _seed_made, _seed_matmul, _seed_product
    _seed_made, _seed_matmul, _seed_product = made, matmul, product


def _matmul_batch(arrays: Any, nbs: Any) -> Any:
    (a, b), (na, nbb) = arrays, nbs
    nb = max(na, nbb)
    ka, kb = a.ndim - na, b.ndim - nbb
    # one GEMM for a constant matrix against a batch of vectors (the Jacobian case)
    if kb == 1 and nbb and not na and a.ndim == 2:
        if b.shape[1] == a.shape[1]:
            r = _seed_matmul(a.T, b) if _seed_matmul is not None else None  # I or diag(k) @ a.T
            if r is not None:
                return r, nb
        return np.matmul(b, a.T), nb
    if ka == 1 and na and not nbb and b.ndim == 2:
        if a.shape[1] == b.shape[0]:
            r = _seed_matmul(b, a) if _seed_matmul is not None else None  # I or diag(k) @ b
            if r is not None:
                return r, nb
        return np.matmul(a, b), nb
    # A constant matrix against a batch of matrices: NumPy would loop over the
    # stack (one GEMV / small GEMM per item, each re-reading the matrix); fold
    # every leading axis into the rows of ONE GEMM instead.
    if kb >= 2 and nbb and not na and a.ndim == 2:
        bt = np.swapaxes(b, -1, -2)  # (..., m, n): a @ b == (bt @ a.T)^T
        r = np.matmul(bt.reshape(math.prod(bt.shape[:-1]), bt.shape[-1]), a.T)
        return np.swapaxes(r.reshape(bt.shape[:-1] + (a.shape[0],)), -1, -2), nb
    if ka >= 2 and na and not nbb and b.ndim == 2:
        r = np.matmul(a.reshape(math.prod(a.shape[:-1]), a.shape[-1]), b)
        return r.reshape(a.shape[:-1] + (b.shape[1],)), nb
    if ka == 1:  # logical vectors become matrices, squeezed afterwards
        a = a[..., None, :]
    if kb == 1:
        b = b[..., :, None]
    nd = max(a.ndim - na, b.ndim - nbb)
    a, b = align(a, na, nd), align(b, nbb, nd)
    r = np.matmul(a, b)
    if ka == 1 and kb == 1:
        return r[..., 0, 0], nb
    if ka == 1:
        return r[..., 0, :], nb
    if kb == 1:
        return r[..., 0], nb
    return r, nb


def _matmul_aval(args: Any) -> Any:
    a, b = (shape_of(x) for x in args)
    if len(a) == 1 and len(b) == 1:
        shape: tuple[int, ...] = ()
    elif len(a) == 1:
        shape = b[:-2] + b[-1:]
    elif len(b) == 1:
        shape = a[:-1]
    else:
        shape = np.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])
    return shape, np.result_type(*[x.dtype if isinstance(x, Tensor) else np.asarray(x).dtype
                                   for x in args])


def _matmul_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    sa, sb = a.shape, b.shape
    if is_lin(a):
        bc = _conj(b)
        if len(sa) == 1 and len(sb) == 1:
            r = ct * bc
        elif len(sa) == 1 and len(sb) == 2:  # (n,) @ (n, m): ct @ b.T (as below)
            r = apply(matmul, ct, _swapped(bc))
        elif len(sa) == 1:  # (n,) @ (..., n, m) -> (..., m)
            r = apply(matmul, _expanded(ct, -2), _swapped(bc))[..., 0, :]
        elif len(sb) == 1:  # (..., k, n) @ (n,) -> (..., k)
            r = _expanded(ct, -1) * bc
        else:
            r = apply(matmul, ct, _swapped(bc))
        return [unbroadcast(r, sa), None]
    ac = _conj(a)
    if len(sa) == 1 and len(sb) == 1:
        r = ac * ct
    elif len(sb) == 1 and len(sa) == 2:  # (k, n) @ (n,): ct @ a, where a batch of
        r = apply(matmul, ct, ac)  # cotangents that is a known diagonal scales rows (above)
    elif len(sb) == 1:  # (..., k, n) @ (n,)
        r = apply(matmul, _swapped(ac), _expanded(ct, -1))[..., 0]
    elif len(sa) == 1:  # (n,) @ (..., n, m)
        r = _expanded(ac, -1) * _expanded(ct, -2)
    else:
        r = apply(matmul, _swapped(ac), ct)
    return [None, unbroadcast(r, sb)]


matmul = Primitive(
    "matmul",
    np.matmul,
    _matmul_jvp,
    reads=((1,), (0,)),
    linear=(0, 1),
    joint=False,
    batch=_matmul_batch,
    aval=_matmul_aval,
    transpose=_matmul_t,
)


def _einsum_impl(*ops: Any, spec: str) -> Any:
    return np.einsum(spec, *ops, optimize=len(ops) > 2)


def _einsum_batch(arrays: Any, nbs: Any, *, spec: str) -> Any:
    # The batch axes in front of every batched operand as an ellipsis: an operand may carry
    # fewer of them (a cotangent of a nested batched pass carries one per pass), aligned on
    # the innermost like every batching rule's, and a batch axis of size 1 broadcasts.
    ins, out = spec.split("->")
    terms = [("..." if n else "") + t for t, n in zip(ins.split(","), nbs, strict=True)]
    spec2 = ",".join(terms) + "->..." + out
    return np.einsum(spec2, *arrays, optimize=len(arrays) > 2), max(nbs)


def _einsum_aval(args: Any, *, spec: str) -> Any:
    ins, out = spec.split("->")
    sizes = {}
    for t, a in zip(ins.split(","), args, strict=True):
        sizes.update(zip(t, shape_of(a), strict=True))
    dt = np.result_type(*[x.dtype if isinstance(x, Tensor) else np.asarray(x).dtype for x in args])
    return tuple(sizes[c] for c in out), dt


def _einsum_jvp(primals: Any, tangents: Any, out: Any, *, spec: str) -> Any:
    r = None
    for i, t in enumerate(tangents):
        if t is not None:
            s = apply(einsum, *primals[:i], t, *primals[i + 1 :], spec=spec)
            r = s if r is None else r + s
    return r


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
        r = _contract(out, keep, ct, others)
        if keep != t:  # letters only in this operand were summed: broadcast them back
            r = _reshaped(r, tuple(a.shape[k] if c in seen else 1 for k, c in enumerate(t)))
            if r.shape != a.shape:
                r = apply(broadcast_to, r, shape=a.shape)
        res.append(r)
    return res


def _contract(out: str, keep: str, ct: Any, others: list[tuple[str, Any]]) -> Any:
    """``einsum("out,others->keep", ct, *others)``: a spec already canonical (no ellipsis,
    no letter repeated within a term). Alone, ``ct`` whose letters all stay is only
    permuted: a transpose, as NumPy's einsum makes it a view."""
    if not others and set(keep) == set(out):
        return apply(transpose, ct, axes=tuple(out.index(c) for c in keep))
    return apply(einsum, ct, *[o for _, o in others],
                 spec=",".join([out] + [s for s, _ in others]) + "->" + keep)


einsum = Primitive(
    "einsum",
    _einsum_impl,
    _einsum_jvp,
    reads=tuple(range(64)),
    linear=tuple(range(64)),
    joint=False,
    batch=_einsum_batch,
    aval=_einsum_aval,
    transpose=_einsum_t,
)


# -- select (linear in both branches jointly; the condition is a constant) --------------


def _where_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    c = primals[0]
    ta, tb = tangents[1], tangents[2]
    if ta is None and tb is None:
        return None
    r = apply(where, c, 0 if ta is None else ta, 0 if tb is None else tb)
    return r if r.shape == out.shape else apply(broadcast_to, r, shape=out.shape)


def _where_t(ct: Any, args: Any) -> list[Any]:
    c, a, b = args
    c = c._data if c.__class__ is Tensor else c  # (the condition carries no derivative)
    return [
        None,
        unbroadcast(apply(where, c, ct, 0), a.shape) if is_lin(a) else None,
        unbroadcast(apply(where, c, 0, ct), b.shape) if is_lin(b) else None,
    ]


where = Primitive(
    "where",
    np.where,
    _where_jvp,
    reads=(0,),
    linear=(1, 2),
    batch=None,
    aval=None,
    transpose=_where_t,
)


def _bind_where() -> None:
    from ._util import elementwise_aval, elementwise_batch

    where.batch = elementwise_batch(np.where)
    where.aval = elementwise_aval


_bind_where()


# -- out-of-place assignment: x with x[idx] replaced by v (linear in x and v jointly) ----


def _setitem_impl(x: Any, v: Any, *, idx: Index) -> Any:
    out = x.copy()
    out[idx.key] = v
    return out


def _setitem_batch(arrays: Any, nbs: Any, *, idx: Index) -> Any:
    (x, v), (nx, nv) = arrays, nbs
    nb = max(nx, nv)
    if not nx:
        x = np.broadcast_to(x, (arrays[1].shape[:nv]) + x.shape)
    out = move_batch_last(x.copy(), nb)
    # (an unbatched value: one more axis, against the batch axis; of out's kind, which a
    # CuPy array needs)
    vl = move_batch_last(v, nv) if nv else _B.asarray_like(v, like=_like(out))[..., None]
    out[idx.key] = vl
    return move_batch_first(out, nb), nb


def _setitem_jvp(primals: Any, tangents: Any, out: Any, *, idx: Index) -> Any:
    tx, tv = tangents
    x, v = primals
    if tx is None and tv is None:
        return None
    tx = zeros_of(x) if tx is None else tx
    tv = 0.0 if tv is None else tv
    return apply(setitem, tx, tv, idx=idx)


def _setitem_t(ct: Any, args: Any, *, idx: Index) -> list[Any]:
    x, v = args
    return [
        apply(setitem, ct, 0.0, idx=idx) if is_lin(x) else None,
        unbroadcast(apply(getitem, ct, idx=idx), v.shape) if is_lin(v) else None,
    ]


setitem = Primitive(
    "setitem",
    _setitem_impl,
    _setitem_jvp,
    linear=(0, 1),
    batch=_setitem_batch,
    aval=lambda args, *, idx: (args[0].shape, args[0].dtype),
    transpose=_setitem_t,
)


# -- the batch boundary: a batched tangent handed to the user, and back ---------------------
# The leading batch axis of a batched tangent is not part of its logical shape; when it is
# exposed (unpack_dual, grad(is_grads_batched=True)) it becomes an ordinary axis. Recording
# that as a linear primitive keeps reverse mode through it right: the two are transposes.


def _unbatch_batch(arrays: Any, nbs: Any, *, size: int) -> Any:
    return arrays[0], nbs[0] - 1


def _rebatch_batch(arrays: Any, nbs: Any, *, size: int) -> Any:
    return arrays[0], nbs[0] + 1


unbatch = _linear1(
    "unbatch",
    lambda a, *, size: a,  # never unbatched: only reached with nb > 0
    _unbatch_batch,
    lambda args, *, size: ((size,) + args[0].shape, args[0].dtype),
    lambda ct, args, *, size: [apply(rebatch, ct, size=size)],
)
rebatch = _linear1(
    "rebatch",
    lambda a, *, size: a,  # marks the leading axis as the batch axis (see _rebatch_batch)
    _rebatch_batch,
    lambda args, *, size: (args[0].shape[1:], args[0].dtype),
    lambda ct, args, *, size: [apply(unbatch, ct, size=size)],
)
for _p in (unbatch, rebatch):
    _p.view = True
    _p.boundary = True

