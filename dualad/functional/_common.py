"""Shared helpers of the functional API: argument handling, standard bases, pytrees.

Nothing here is public. The helpers keep the torch-style functions
(:mod:`dualad.functional._autograd`) and the JAX-style transforms
(:mod:`dualad.functional._transforms`) consistent with each other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dualad.backends import namespace as _B
from dualad.backends.namespace import as_array as _as_array
from dualad.backends.namespace import is_array as _is_array
from dualad.backends.namespace import like as _like
from dualad.core import dispatch as _dispatch  # (the core's levels: already imported by dualad.rules)
from dualad.core.tensor import Tensor
from dualad.forward_ad import _unpack
from dualad.numpy import creation
from dualad.rules.linear import identity_seed

# ---------------------------------------------------------------------------
# Inputs and outputs given as "a Tensor or a tuple of Tensors"
# ---------------------------------------------------------------------------


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def as_tuple(
    value: Any, arg_name: str, fn_name: str, *, allow_arrays: bool = True
) -> tuple[bool, tuple[Tensor, ...]]:
    """Return ``(was_tuple, tuple_of_tensors)``.

    ``allow_arrays`` lets NumPy arrays (and NumPy scalars) stand for Tensors,
    which is what a NumPy user passes as *inputs*; a function's *outputs* must
    be Tensors, because an ndarray output has lost its derivatives.
    """
    was_tuple = isinstance(value, tuple)
    items = value if was_tuple else (value,)
    out = []
    for i, el in enumerate(items):
        if is_tensor(el):
            out.append(el)
        elif allow_arrays and (isinstance(el, (np.ndarray, np.generic)) or _is_array(el)):
            # Shares memory with the caller's array: nothing below writes to it (a Dask or
            # CuPy array is kept as it is).
            out.append(creation.as_tensor(_as_array(el)))
        else:
            kinds = "a Tensor / ndarray" if allow_arrays else "a Tensor"
            where = f"the element at index {i}" if was_tuple else f"the given {arg_name}"
            raise TypeError(
                f"{fn_name}: {arg_name} must be {kinds} or a tuple of them, but {where} "
                f"has type {type(el).__name__}."
            )
    return was_tuple, tuple(out)


def untuple(res: Any, keep: bool | tuple[bool, bool]) -> Any:
    """Undo :func:`as_tuple` on a result (one level, or two for ``(outer, inner)``)."""
    if isinstance(keep, tuple):
        outer, inner = keep
        if not inner:
            res = tuple(r[0] for r in res)
        if not outer:
            res = res[0]
        return res
    return res if keep else res[0]


def alias(t: Tensor) -> Tensor:
    """A new Tensor object that is a differentiable alias of ``t``.

    A fresh object lets ``grad`` tell the inputs we were given apart from the
    same Tensors captured by ``func`` through a closure (torch does the same).
    """
    view_as = getattr(t, "view_as", None)
    if view_as is not None:
        return view_as(t)
    # ``t[...]`` is a recorded view, always a new object (a no-op reshape may return t itself)
    return t[...]


def grad_preprocess(
    inputs: Sequence[Tensor], create_graph: bool, need_graph: bool,
    own: list[Tensor] | None = None,
) -> tuple[Tensor, ...]:
    """Fresh input Tensors for one functional call.

    With ``create_graph`` an input that already requires grad stays connected
    to its history (so the result can be differentiated again w.r.t. it). One that
    is dual keeps its tangents, with or without ``create_graph`` (an enclosing
    forward transform sees through: a backward pass inside a dual level carries
    tangents, recorded or not; detaching would hand it a silent zero). Otherwise
    it is detached and made a leaf that requires grad iff ``need_graph``. The leaves
    made here are appended to ``own`` (see :func:`retire`).
    """
    res = []
    for t in inputs:
        if create_graph and t.requires_grad:
            res.append(alias(t))
        elif is_dual(t):
            if need_graph:
                t, z = plus_zero_leaf(t)
                if own is not None:
                    own.append(z)
            res.append(t)
        else:
            d = t.detach()
            if need_graph:
                d.requires_grad_(True)
                if create_graph and own is not None:  # (without, the results are detached)
                    own.append(d)
            res.append(d)
    return tuple(res)


def plus_zero_leaf(t: Tensor) -> tuple[Tensor, Tensor]:
    """``(t + z, z)`` for a fresh zero leaf ``z`` that requires grad.

    Differentiating w.r.t. ``z`` (or the sum) gives the derivative w.r.t. ``t``, while
    ``t``'s own derivatives — an enclosing transform's graph, its tangents — flow on.
    """
    z = creation.zeros_like(t.detach(), requires_grad=True)  # (on t's device)
    return t + z, z


def grad_postprocess(values: Any, create_graph: bool) -> Any:
    """Results (recursively through tuples) without their reverse history unless a graph
    was requested; tangents at live levels stay (:func:`finish`)."""
    if create_graph:
        return values
    if isinstance(values, tuple):
        return tuple(grad_postprocess(v, False) for v in values)
    return finish(values, False)


def validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v must be a tuple of {len(other)} Tensors, but it has {len(v)}.")
        raise RuntimeError("v must be a single Tensor here (the other side is a single Tensor).")
    for i, (a, b) in enumerate(zip(v, other, strict=True)):
        if tuple(a.shape) != tuple(b.shape):
            where = f"Entry {i} of v" if other_is_tuple else "v"
            raise RuntimeError(
                f"{where} has shape {tuple(a.shape)}, but shape {tuple(b.shape)} was expected."
            )


def numel(t: Tensor) -> int:
    return t.size


def zeros_like(t: Tensor, lead: tuple[int, ...] = ()) -> Tensor:
    return creation.as_tensor(_B.zeros(lead + tuple(t.shape), dtype=t.dtype, like=_like(t._data)))


def ones_like(t: Tensor) -> Tensor:
    return creation.as_tensor(_B.ones(tuple(t.shape), dtype=t.dtype, like=_like(t._data)))


# ---------------------------------------------------------------------------
# Standard bases, split across several tensors and cut into chunks
# ---------------------------------------------------------------------------


def basis_rows(
    shapes: Sequence[tuple[int, ...]], dtypes: Sequence[Any], start: int, stop: int,
    seed: bool = False, order: str = "C", like: Any = None,
) -> list[np.ndarray | None]:
    """Rows ``start:stop`` of the N x N identity, N = total size, split per tensor.

    Block ``k`` has shape ``(stop - start,) + shapes[k]``; it is ``None`` when it
    holds no 1 (that tensor gets no tangent / cotangent in this chunk, which
    keeps it symbolically zero instead of pushing a block of zeros).
    ``seed``: a whole identity for one vector is made read-only and known to
    matmul's batch rule, which then selects instead of multiplying (tangents only:
    cotangents may be accumulated in place), laid out in ``order`` (see
    ``identity_seed``). ``like``: an array of the tensors' kind (Dask, CuPy) the blocks
    are made of (NumPy's by default).
    """
    if like is not None and like.__class__ is not np.ndarray:
        return [None if r is None else _B.asarray_like(r, like=_like(like))
                for r in basis_rows(shapes, dtypes, start, stop)]
    b = stop - start
    if len(shapes) == 1 and start == 0 and b == math.prod(shapes[0]):
        # the common case, one tensor and one chunk: the whole identity
        if seed and len(shapes[0]) == 1:
            return [identity_seed(b, dtypes[0], order)]
        return [np.eye(b, dtype=dtypes[0]).reshape((b,) + tuple(shapes[0]))]
    out: list[np.ndarray | None] = []
    offset = 0
    for shape, dtype in zip(shapes, dtypes, strict=True):
        n = math.prod(shape)
        lo, hi = max(start, offset), min(stop, offset + n)
        if lo >= hi:
            out.append(None)
        else:
            blk = np.zeros((b, n), dtype=dtype)
            r = np.arange(lo, hi)
            blk[r - start, r - offset] = 1
            out.append(blk.reshape((b,) + tuple(shape)))
        offset += n
    return out


def chunks(n: int, chunk_size: int | None) -> list[tuple[int, int]]:
    """Split ``range(n)`` into consecutive ``(start, stop)`` pieces of ``chunk_size``."""
    if chunk_size is None or chunk_size >= n:
        return [(0, n)] if n else []
    return [(s, min(s + chunk_size, n)) for s in range(0, n, int(chunk_size))]


def available_memory() -> int | None:
    """Bytes of host memory available to a new allocation (Linux's MemAvailable, else the
    free pages), or None where neither can be read (then nothing is refused)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import os

        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


# Elements under a GiB in any dtype (32 bytes at most): never refused, so callers skip
# building check_fits's message below this.
SMALL = 1 << 25


def check_fits(count: int, tensors: Sequence[Tensor], what: str, instead: str) -> None:
    """Refuse, before any work, an array of ``count`` elements (of the widest dtype of
    ``tensors``) that cannot fit in the memory available: NumPy would fail only once
    the work is done, naming some small array. Host arrays only (a CuPy array's memory
    is the device's, a Dask array's is not held at once)."""
    if count < SMALL:
        return
    if not tensors or any(t._data.__class__ is not np.ndarray for t in tensors):
        return
    item = max(np.dtype(t.dtype).itemsize for t in tensors)
    nbytes = count * item
    if nbytes < 2**30:  # (below a GiB: not worth a look at the system)
        return
    avail = available_memory()
    if avail is None or nbytes <= avail:
        return
    raise MemoryError(
        f"{what} would hold {count:,} elements ({_gib(nbytes)}), more than the "
        f"{_gib(avail)} of memory available: refused before it is computed. {instead}")


def check_chunk_size(chunk_size: Any) -> None:
    if chunk_size is None:
        return
    ok = isinstance(chunk_size, (int, np.integer)) and not isinstance(chunk_size, bool)
    if not ok or chunk_size < 1:
        raise ValueError(f"chunk_size must be None or a positive int, got {chunk_size!r}.")


# ---------------------------------------------------------------------------
# Dual levels
# ---------------------------------------------------------------------------


def batched_level_live() -> bool:
    """True while a batched dual level is live (only one may be, at a time)."""
    return bool(_dispatch.batched)


def is_dual(t: Tensor) -> bool:
    """True if ``t`` carries a tangent at some live dual level."""
    lv = getattr(t, "_level", 0)
    return bool(lv) and lv in _dispatch.live


# ---------------------------------------------------------------------------
# Nesting: what an enclosing transform sees of a transform's results
# ---------------------------------------------------------------------------


def _graph_tensors(t: Tensor) -> list[Tensor]:
    """``t`` and the tangents it carries at live levels (and theirs, at lower levels):
    the tensors whose reverse graphs hold its derivatives. A dual keeps its innermost
    primal's graph fields, so its primals need no entry of their own."""
    out, stack = [], [t]
    while stack:
        for v in stack.pop()._primal_chain():
            out.append(v)
            lv = v._level
            if lv and lv < _dispatch.LIN and lv in _dispatch.live:
                tt = v._made_parts()[1]  # (an unmade one is untracked)
                if tt is not None:
                    stack.append(tt)
    return out


def outer_reverse(values: Sequence[Any], own: Sequence[Tensor], enabled: bool) -> bool:
    """Must a transform record its own backward pass (``create_graph``) and keep the
    history of its results, so that an enclosing reverse pass differentiates through it?

    Yes when grad mode was on (``enabled``, read before the transform turned it on) and
    the reverse graph of ``values`` — the function's outputs, their tangents at live
    levels included — reaches a tensor that requires grad other than the transform's own
    fresh leaves ``own``: an enclosing transform's input, met as an argument, through a
    closure or as a global alike. A node's ``leaf`` names the one leaf every path from it
    leads to when there is one, so the walk mostly stops where it starts; when nothing
    outer is reached, the transform keeps its fast path (no graph of its backward pass).
    """
    if not enabled:
        return False
    mine = {id(t) for t in own}
    seen: set[Any] = set()
    stack: list[Any] = []
    for v in values:
        if not is_tensor(v):
            continue
        for t in _graph_tensors(v):
            if not t._requires_grad:
                continue
            if t._node is None:  # a leaf itself
                if id(_dispatch.innermost(t)) not in mine:
                    return True
            else:
                stack.append(t._node)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        lf = n.leaf
        if lf is not None:  # every path from n ends at this one leaf (or n is it)
            v = lf.variable
            if v._requires_grad and id(v) not in mine:  # (a retired leaf no longer requires grad)
                return True
            continue
        for e in n.edges:
            if e is not None:
                stack.append(e[0])
    return False


def retire(own: Sequence[Tensor]) -> None:
    """A transform's own fresh leaves stop requiring grad once it has its results.

    Nothing outside the transform can differentiate w.r.t. them, and a result it keeps
    the history of (see :func:`outer_reverse`) still leads to them: an enclosing
    transform's walk must not take them for an input of its own, or it would record its
    backward pass — and keep its results' history — for nothing.
    """
    for z in own:
        z.requires_grad_(False)


def finish(x: Any, keep: bool) -> Any:
    """A transform's result as its caller gets it.

    ``keep`` (see :func:`outer_reverse`): unchanged. Otherwise without the reverse
    history the transform recorded — but with every tangent at a live level, which
    belongs to an enclosing forward transform (``jacfwd`` or ``jvp`` around a function
    that calls this transform on a dual argument or closure).
    """
    if keep or not is_tensor(x):
        return x
    return _without_history(x)


def _without_history(t: Tensor) -> Tensor:
    lv = t._level
    if not lv or lv >= _dispatch.LIN:
        d = t.detach()
        d._batch_ndim = t._batch_ndim  # (a batched tangent keeps its batch axes)
        return d
    if lv not in _dispatch.live:
        return _without_history(t._primal)
    return t._map_parts(_without_history, _without_history)


def tangent_or_none(t: Tensor) -> Tensor | None:
    return _unpack(t).tangent


def primal_of(t: Tensor) -> Tensor:
    return _unpack(t).primal


# ---------------------------------------------------------------------------
# Minimal pytrees (tuple, list, dict, namedtuple) for the JAX-style transforms
# ---------------------------------------------------------------------------


class TreeDef:
    """How to rebuild a container from its flat list of leaves."""

    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind: str, meta: Any, children: list[TreeDef]) -> None:
        self.kind = kind
        self.meta = meta
        self.children = children

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TreeDef)
            and self.kind == other.kind
            and self.meta == other.meta
            and self.children == other.children
        )

    def __hash__(self) -> int:  # pragma: no cover - not used as a key
        return hash((self.kind, len(self.children)))

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        return f"{self.kind}({', '.join(map(repr, self.children))})"


def tree_flatten(tree: Any) -> tuple[list[Any], TreeDef]:
    leaves: list[Any] = []

    def rec(x: Any) -> TreeDef:
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return TreeDef("namedtuple", type(x), [rec(c) for c in x])
        if isinstance(x, tuple):
            return TreeDef("tuple", None, [rec(c) for c in x])
        if isinstance(x, list):
            return TreeDef("list", None, [rec(c) for c in x])
        if isinstance(x, dict):
            keys = sorted(x) if all(isinstance(k, str) for k in x) else list(x)
            return TreeDef("dict", tuple(keys), [rec(x[k]) for k in keys])
        if x is None:
            return TreeDef("none", None, [])
        leaves.append(x)
        return TreeDef("leaf", None, [])

    return leaves, rec(tree)


def tree_unflatten(treedef: TreeDef, leaves: Sequence[Any]) -> Any:
    it = iter(leaves)

    def rec(d: TreeDef) -> Any:
        if d.kind == "leaf":
            return next(it)
        if d.kind == "none":
            return None
        kids = [rec(c) for c in d.children]
        if d.kind == "tuple":
            return tuple(kids)
        if d.kind == "namedtuple":
            return d.meta(*kids)
        if d.kind == "list":
            return kids
        return dict(zip(d.meta, kids, strict=True))

    return rec(treedef)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, d = tree_flatten(tree)
    return tree_unflatten(d, [fn(x) for x in leaves])
