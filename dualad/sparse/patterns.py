"""Sparsity patterns: which inputs each element of a value depends on, per primitive family.

A *pattern* of a value ``v`` traced from an input ``x`` is a boolean SciPy ``csr_array`` of
shape ``(v.size, x.size)``: row ``i`` lists the elements of ``x`` that element ``i`` of
``v`` (in C order) depends on. It is the structure of the Jacobian ``dv/dx``; the tracing
interpreter (``dualad.functional._sparsity``) carries one beside each value and asks the
rules here for the pattern of each primitive's result. Every rule errs on one side only:
it may list an input that does not matter (a zero that happens to cancel), never miss one.

The rules are index arithmetic on whole patterns (no Python loop over elements):

- a *gather* (reshape, transpose, getitem with any index, pad, concatenate, setitem, ...)
  runs the primitive itself on the positions ``1..size`` of each variable operand (0 for a
  constant one), so its result says which input element each output element reads;
- *elementwise* functions union their (broadcast) operands' rows;
- *reductions* and *scans* union the rows along their axes (a scan: the prefix);
- *contractions* (matmul, einsum) union along the contracted letters, where every constant
  operand is structurally nonzero;
- *blocks* (linear algebra): every output element of a matrix depends on every input
  element of the same matrix (batch axes kept apart);
- anything else is one dense block (the caller warns, or raises when strict).

Second order (Hessian patterns): a :class:`Interactions` collects the pairs ``(i, j)`` of
inputs that some nonlinear step joins. A product ``a * b`` joins ``rows(a) x rows(b)``, a
nonlinear function of ``u`` joins ``rows(u) x rows(u)``, a linear map joins nothing. The
union over every step is a superset of the Hessian's pattern of any scalar function
computed from them (SparseConnectivityTracer.jl's global tracer): ``d2(f(g))`` is
``f'' g' g'^T + f' g''`` and ``g''`` was collected where ``g`` was made.

Nothing here imports dualad: the rules work on NumPy arrays and SciPy matrices only.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from .coloring import as_pattern

Pattern = sp.csr_array


# -- building blocks ------------------------------------------------------------------------


def empty(rows: int, n: int) -> Pattern:
    """The pattern of a value of ``rows`` elements that depends on no input."""
    return sp.csr_array((rows, n), dtype=bool)


def identity(n: int) -> Pattern:
    """The pattern of the input itself: element i depends on element i."""
    return sp.csr_array((np.ones(n, bool), np.arange(n), np.arange(n + 1)), shape=(n, n))


def gather_rows(p: Pattern, src: Any) -> Pattern:
    """Row ``k`` of the result is row ``src[k]`` of ``p`` (empty where ``src[k] < 0``).

    CSR index arithmetic: O(rows + nonzeros of the result), no Python loop. ``p`` may hold
    values (a sparse tangent, ``dualad.sparse.tangents``): they are copied with their rows.
    """
    src = np.asarray(src, dtype=np.int64).ravel()
    if len(src) and src[0] >= 0 and src[-1] - src[0] == len(src) - 1 and (
            len(src) == 1 or (np.diff(src) == 1).all()):
        return _row_range(p, int(src[0]), int(src[-1]) + 1)  # (a slice, a concatenation)
    valid = src >= 0
    s = np.where(valid, src, 0)
    starts = p.indptr[s].astype(np.int64) if len(s) else np.zeros(0, np.int64)
    lens = np.where(valid, p.indptr[s + 1] - starts, 0) if len(s) else starts
    indptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    total = int(indptr[-1])
    where_from = np.arange(total, dtype=np.int64) + np.repeat(starts - indptr[:-1], lens)
    return sp.csr_array((p.data[where_from], p.indices[where_from], indptr),
                        shape=(len(src), p.shape[1]))


def _row_range(p: Pattern, start: int, stop: int) -> Pattern:
    """Rows ``start:stop`` of ``p``: views of its arrays, O(rows)."""
    lo, hi = p.indptr[start], p.indptr[stop]
    return sp.csr_array((p.data[lo:hi], p.indices[lo:hi], p.indptr[start:stop + 1] - lo),
                        shape=(stop - start, p.shape[1]))


def group_rows(p: Pattern, target: Any, rows: int) -> Pattern:
    """Row ``r`` of the result is the union of the rows ``k`` of ``p`` with ``target[k] == r``
    (for a ``p`` of values: their sum)."""
    target = np.asarray(target, dtype=np.int64).ravel()
    g = sp.csr_array((np.ones(len(target), bool), (target, np.arange(len(target)))),
                     shape=(rows, p.shape[0]))
    return combine(g, p)


def combine(g: Pattern, p: Pattern) -> Pattern:
    """``g @ p`` for a 0/1 map ``g`` of rows: a pattern's union, or a tangent's sum (``p``
    of values, ``dualad.sparse.tangents``: ``g`` taken as numbers)."""
    if p.dtype == bool:
        return as_pattern(g @ p)
    return sp.csr_array(g.astype(p.dtype) @ p)


def union(patterns: Sequence[Pattern | None], rows: int, n: int) -> Pattern:
    """The elementwise union of patterns of the same shape (``None``: depends on nothing)."""
    acc = None
    for p in patterns:
        if p is not None:
            acc = p if acc is None else acc + p
    return empty(rows, n) if acc is None else as_pattern(acc)


def broadcast_source(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> np.ndarray:
    """For each element of ``out_shape`` (C order), the element of ``shape`` broadcast there."""
    size = int(np.prod(shape, dtype=np.int64))
    return np.broadcast_to(np.arange(size).reshape(shape), out_shape).ravel()


def broadcast(p: Pattern | None, shape: tuple[int, ...], out_shape: tuple[int, ...]
              ) -> Pattern | None:
    """``p`` (of a value of ``shape``) broadcast to ``out_shape``."""
    if p is None or tuple(shape) == tuple(out_shape):
        return p
    return gather_rows(p, broadcast_source(shape, out_shape))


# -- second order: the pairs of inputs a nonlinear step joins --------------------------------


class Interactions:
    """The pairs ``(i, j)`` of inputs joined by some nonlinear step (a Hessian's superset).

    ``join(a, b)`` adds, for every element ``e`` of a value, ``rows_a(e) x rows_b(e)``: the
    patterns ``a`` and ``b`` have a row per element (both of the same shape). Kept as a list
    of products, added up once at the end (``pattern``).
    """

    def __init__(self, n: int) -> None:
        self.n = n
        self.parts: list[Pattern] = []

    def join(self, a: Pattern, b: Pattern) -> None:
        if a.nnz and b.nnz:
            self.parts.append(as_pattern(a.T @ b))

    def pattern(self) -> Pattern:
        """The symmetric pattern of every pair joined so far."""
        h = union(self.parts, self.n, self.n)
        return as_pattern(h + h.T)


# -- the rules --------------------------------------------------------------------------------


class Call:
    """One primitive call as the rules see it.

    Attributes
    ----------
    name : the primitive's name.
    impl : its implementation on arrays (``impl(*arrays, **params)``).
    values : the operands' values (arrays, or the Python objects given).
    patterns : per operand, its pattern, or None for a constant.
    out : the result's value (a tuple of them for a primitive of several results).
    params : the call's keyword parameters.
    n : the number of input elements (each pattern's column count).
    """

    __slots__ = ("name", "impl", "values", "patterns", "out", "params", "n")

    def __init__(self, name: str, impl: Callable[..., Any], values: list[Any],
                 patterns: list[Pattern | None], out: Any, params: dict[str, Any],
                 n: int) -> None:
        self.name, self.impl, self.values, self.patterns = name, impl, values, patterns
        self.out, self.params, self.n = out, params, n

    def shape(self, k: int) -> tuple[int, ...]:
        return tuple(np.shape(self.values[k]))

    @property
    def outs(self) -> tuple[Any, ...]:
        return self.out if isinstance(self.out, tuple) else (self.out,)


Rule = Callable[[Call, Interactions | None], Any]


def elementwise(call: Call, second: Interactions | None, *, carries: Sequence[bool],
                joins: Sequence[tuple[int, int]]) -> Pattern:
    """An elementwise function: the union of the operands' broadcast rows where the
    derivative in an operand can be nonzero (``carries``); second order: ``joins`` lists
    the pairs of operands its second derivatives join (``(k, k)``: operand k with itself)."""
    out_shape = tuple(np.shape(call.out))
    rows = int(np.prod(out_shape, dtype=np.int64))
    wide = [broadcast(p, call.shape(k), out_shape) if carries[k] else None
            for k, p in enumerate(call.patterns)]
    if second is not None:
        for i, j in joins:
            if wide[i] is not None and wide[j] is not None:
                second.join(wide[i], wide[j])
    return union(wide, rows, call.n)


def gather(call: Call, second: Interactions | None) -> Pattern:
    """A primitive that moves elements (each output element is one input element or zero):
    evaluated on the positions ``1..size`` of the variable operands (0 in constant ones)."""
    offset = 1
    positions = []
    stacked = []
    for v, p in zip(call.values, call.patterns, strict=True):
        shape = np.shape(v)
        if p is None:
            # (a constant operand, array or number, reads no input: position 0)
            positions.append(np.zeros(shape, np.int64)
                             if hasattr(v, "shape") or isinstance(v, (int, float, complex))
                             else v)
            continue
        size = p.shape[0]
        positions.append(np.arange(offset, offset + size, dtype=np.int64).reshape(shape))
        offset += size
        stacked.append(p)
    src = np.asarray(call.impl(*positions, **call.params)).ravel() - 1
    rows = sp.vstack(stacked, format="csr") if len(stacked) > 1 else stacked[0]
    return gather_rows(rows, src)


def same(call: Call, second: Interactions | None) -> Pattern:
    """A primitive that keeps the shape and maps element i to element i (a cast)."""
    return call.patterns[0]


def _reduce_target(shape: tuple[int, ...], axis: Any) -> tuple[np.ndarray, int]:
    """For each element of ``shape``, the index of the reduced element it falls into."""
    axes = range(len(shape)) if axis is None else [a % len(shape) for a in np.atleast_1d(axis)]
    kept = tuple(1 if d in axes else s for d, s in enumerate(shape))
    rows = int(np.prod(kept, dtype=np.int64))
    return np.broadcast_to(np.arange(rows).reshape(kept), shape).ravel(), rows


def reduction(call: Call, second: Interactions | None, *, nonlinear: bool) -> Pattern:
    """sum, amax, prod, norm: the union of the rows along the reduced axes."""
    target, rows = _reduce_target(call.shape(0), call.params.get("axis"))
    out = group_rows(call.patterns[0], target, rows)
    if second is not None and nonlinear:
        second.join(out, out)
    return out


def scan(call: Call, second: Interactions | None, *, nonlinear: bool) -> Pattern:
    """cumsum, cumprod: element k along the axis is the union of elements 0..k."""
    shape, axis = call.shape(0), call.params.get("axis")
    if axis is None:
        shape, axis = (int(np.prod(shape, dtype=np.int64)),), 0
    size = int(np.prod(shape, dtype=np.int64))
    lines = np.moveaxis(np.arange(size).reshape(shape), axis, -1).reshape(-1, shape[axis])
    k, j = np.tril_indices(shape[axis])
    g = sp.csr_array((np.ones(lines.shape[0] * len(k), bool),
                      (lines[:, k].ravel(), lines[:, j].ravel())), shape=(size, size))
    out = combine(g, call.patterns[0])
    if second is not None and nonlinear:
        second.join(out, out)
    return out


def _line_ids(shape: tuple[int, ...], axis: int) -> tuple[np.ndarray, int]:
    """For each element of ``shape``, the index of its line along ``axis``."""
    other = shape[:axis] + (1,) + shape[axis + 1:]
    lines = int(np.prod(other, dtype=np.int64))
    return np.broadcast_to(np.arange(lines).reshape(other), shape).ravel(), lines


def along_axis(call: Call, second: Interactions | None) -> Pattern:
    """The fft family: each output element depends on its whole line along the axis."""
    axis = call.params["axis"] % len(call.shape(0))
    ids, lines = _line_ids(call.shape(0), axis)
    by_line = group_rows(call.patterns[0], ids, lines)
    return gather_rows(by_line, _line_ids(tuple(np.shape(call.out)), axis)[0])


def scatter_add(call: Call, second: Interactions | None) -> Pattern:
    """index_add (``add.at``): each output element is the union of the elements added there."""
    shape, key = call.params["shape"], call.params["idx"].key
    size = int(np.prod(shape, dtype=np.int64))
    target = np.arange(size).reshape(shape)[key]
    src = broadcast_source(call.shape(0), target.shape)
    return group_rows(gather_rows(call.patterns[0], src), target.ravel(), size)


def where(call: Call, second: Interactions | None) -> Pattern:
    """``where(c, a, b)``: the union of both branches (the pattern holds for every
    condition, so it holds at other points too)."""
    out_shape = tuple(np.shape(call.out))
    rows = int(np.prod(out_shape, dtype=np.int64))
    return union([broadcast(p, call.shape(k), out_shape)
                  for k, p in enumerate(call.patterns) if k], rows, call.n)


# -- contractions ----------------------------------------------------------------------------

_GRID_LIMIT = 50_000_000  # index-grid points a contraction may build (memory: ~8 bytes each)


def _expand_spec(spec: str, ndims: list[int]) -> tuple[list[str], str]:
    """einsum's ``spec`` with each ``...`` spelled out in fresh letters (right-aligned, as
    broadcasting aligns them), and its output made explicit."""
    ins, _, out = spec.replace(" ", "").partition("->")
    operands = ins.split(",")
    used = set(spec)
    fresh = [c for c in string.ascii_letters if c not in used]
    counts = [nd - len(s.replace("...", "")) for s, nd in zip(operands, ndims, strict=True)]
    width = max([c for c, s in zip(counts, operands, strict=True) if "..." in s], default=0)
    ell = "".join(fresh[:width])
    expanded = [s.replace("...", ell[width - c:] if c else "") for s, c in
                zip(operands, counts, strict=True)]
    if "->" not in spec:
        letters = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))
    else:
        out = out.replace("...", ell)
    return expanded, out


class Grid:
    """The index grid of an einsum (matmul as one): one point per assignment of its letters.

    Attributes
    ----------
    out : per grid point, the output element it adds into (C order).
    at : per operand, per grid point, the operand's element it reads.
    rows : the output's size.
    """

    __slots__ = ("out", "at", "rows")

    def __init__(self, out: np.ndarray, at: list[np.ndarray], rows: int) -> None:
        self.out, self.at, self.rows = out, at, rows


def contraction_grid(call: Call) -> Grid | None:
    """The grid of ``call`` (an einsum or a matmul); None where it has more than
    ``_GRID_LIMIT`` points (too large to enumerate)."""
    values = [np.asarray(v) for v in call.values]
    operands, out = _expand_spec(_spec_of(call, values), [v.ndim for v in values])
    sizes: dict[str, int] = {}
    for s, v in zip(operands, values, strict=True):
        for c, d in zip(s, v.shape, strict=True):
            sizes[c] = max(sizes.get(c, 1), d)
    letters = sorted(sizes)
    grid = tuple(sizes[c] for c in letters)
    if int(np.prod(grid, dtype=np.int64)) > _GRID_LIMIT:
        return None

    def flat(s: str, shape: tuple[int, ...]) -> np.ndarray:
        idx = np.zeros((1,) * len(grid), np.int64)
        stride = 1
        for c, d in reversed(list(zip(s, shape, strict=True))):
            if d > 1:  # (a broadcast axis of length 1 reads its one element)
                axis = letters.index(c)
                idx = idx + (np.arange(d).reshape([-1 if a == axis else 1
                                                   for a in range(len(grid))]) * stride)
            stride *= d
        return np.broadcast_to(idx, grid).ravel()

    return Grid(flat(out, tuple(sizes[c] for c in out)),
                [flat(s, v.shape) for s, v in zip(operands, values, strict=True)],
                int(np.prod([sizes[c] for c in out], dtype=np.int64)))


def contraction(call: Call, second: Interactions | None) -> Pattern:
    """einsum (and matmul as one): output element o depends on element e of a variable
    operand where they agree on their shared letters and every constant operand is
    nonzero at that grid point; two variable operands join their rows (second order)."""
    g = contraction_grid(call)
    if g is None:
        return None  # (too large to enumerate: the caller's dense block)
    mask = np.ones(g.out.shape, bool)
    for k, p in enumerate(call.patterns):
        if p is None:
            mask &= np.asarray(call.values[k]).ravel()[g.at[k]] != 0
    parts, per_point = [], []
    for k, p in enumerate(call.patterns):
        if p is not None:
            parts.append(group_rows(gather_rows(p, g.at[k][mask]), g.out[mask], g.rows))
            per_point.append(gather_rows(p, g.at[k][mask]))
    if second is not None:
        for i in range(len(per_point)):
            for j in range(i + 1, len(per_point)):
                second.join(per_point[i], per_point[j])
    return union(parts, g.rows, call.n)


def _spec_of(call: Call, values: list[np.ndarray]) -> str:
    if call.name == "einsum":
        return call.params["spec"]
    a, b = (v.ndim for v in values)  # matmul, in NumPy's conventions for 1-D operands
    left = "...ij" if a > 1 else "j"
    right = "...jk" if b > 1 else "j"
    out = ("...i" if a > 1 else "...") + ("k" if b > 1 else "")
    return f"{left},{right}->{out if a > 1 or b > 1 else ''}"


# -- blocks: linear algebra and the dense fallback --------------------------------------------


def matrix_blocks(call: Call, second: Interactions | None) -> Any:
    """Linear algebra: every output element of a matrix depends on every input element of
    the same matrix of the batch (the batch axes: all but the last two of operand 0);
    second order, every pair within a block."""
    batch = call.shape(0)[:max(len(call.shape(0)) - 2, 0)]
    count = int(np.prod(batch, dtype=np.int64))
    blocks = union([_per_batch(p, call.shape(k), batch, count)
                    for k, p in enumerate(call.patterns) if p is not None], count, call.n)
    if second is not None:
        second.join(blocks, blocks)
    outs = []
    for o in call.outs:
        ids = _batch_ids(tuple(np.shape(o)), batch)
        if ids is None:  # (a result without the batch axes: every matrix reaches it)
            ids = np.zeros(int(np.size(o)), np.int64)
            outs.append(gather_rows(group_rows(blocks, np.zeros(count), 1), ids))
        else:
            outs.append(gather_rows(blocks, ids))
    return tuple(outs) if isinstance(call.out, tuple) else outs[0]


def _per_batch(p: Pattern, shape: tuple[int, ...], batch: tuple[int, ...], count: int
               ) -> Pattern:
    """Row b: the union of ``p``'s rows in matrix b of the batch (every row, for an operand
    without the batch axes)."""
    ids = _batch_ids(shape, batch) if len(shape) > len(batch) else None
    if ids is not None:
        return group_rows(p, ids, count)
    return gather_rows(group_rows(p, np.zeros(p.shape[0]), 1), np.zeros(count))


def _batch_ids(shape: tuple[int, ...], batch: tuple[int, ...]) -> np.ndarray | None:
    """For each element of ``shape``, its matrix's index in ``batch`` (None: ``shape`` does
    not start with the batch axes)."""
    if tuple(shape[:len(batch)]) != tuple(batch):
        return None
    size = int(np.prod(shape, dtype=np.int64))
    count = int(np.prod(batch, dtype=np.int64))
    return np.arange(size) // max(size // max(count, 1), 1) if count else np.zeros(0, np.int64)


def dense_block(call: Call, second: Interactions | None) -> Any:
    """No rule: every output element depends on every input element any operand depends on."""
    every = union([group_rows(p, np.zeros(p.shape[0]), 1) for p in call.patterns
                   if p is not None], 1, call.n)
    if second is not None:
        second.join(every, every)
    outs = tuple(gather_rows(every, np.zeros(int(np.size(o)), np.int64)) for o in call.outs)
    return outs if isinstance(call.out, tuple) else outs[0]


# -- the tables: primitive name -> rule --------------------------------------------------------


def _linear_elementwise(arity: int) -> Rule:
    return lambda call, second: elementwise(call, second, carries=[True] * arity, joins=())


GATHERS = ("reshape", "transpose", "broadcast_to", "diagonal", "tri", "getitem", "pad",
           "concatenate", "setitem")
"""Primitives that move elements: evaluated on positions (``gather``)."""

STRUCTURAL: dict[str, Rule] = {
    **{name: gather for name in GATHERS},
    "astype": same,
    "index_add": scatter_add,
    "where": where,
    "matmul": contraction,
    "einsum": contraction,
}

REDUCTIONS: dict[str, Rule] = {
    "sum": lambda call, second: reduction(call, second, nonlinear=False),
    "amax": lambda call, second: reduction(call, second, nonlinear=False),  # (piecewise linear)
    "amin": lambda call, second: reduction(call, second, nonlinear=False),
    "prod": lambda call, second: reduction(call, second, nonlinear=True),
    "norm2": lambda call, second: reduction(call, second, nonlinear=True),
    "cumsum": lambda call, second: scan(call, second, nonlinear=False),
    "cumprod": lambda call, second: scan(call, second, nonlinear=True),
}

FFT: dict[str, Rule] = {name: along_axis for name in ("fft", "ifft", "rfft", "irfft")}

LINALG: dict[str, Rule] = {
    name: matrix_blocks for name in (
        "inv", "solve", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "eig", "eigvals",
        "svd", "svdvals", "qr", "pinv")
}

PIECEWISE_LINEAR = frozenset((
    "fabs", "abs", "maximum", "minimum", "fmax", "fmin", "clip", "copysign", "remainder",
    "fmod",
))
"""Elementwise functions linear on each piece, for real operands: their second derivative
is zero wherever it exists, so they join no pair (their first-order pattern is the union)."""

ZERO_FOR_REAL = frozenset(("sign", "angle"))
"""Elementwise functions of zero derivative for a real operand (not for a complex one)."""

LINEAR_ELEMENTWISE: dict[str, Rule] = {
    "conj": _linear_elementwise(1), "real": _linear_elementwise(1),
    "imag": _linear_elementwise(1),
}

RULES: dict[str, Rule] = {**STRUCTURAL, **REDUCTIONS, **FFT, **LINALG, **LINEAR_ELEMENTWISE}
"""Every rule by primitive name, but the formula ufuncs' (the interpreter reads those from
each ufunc's derivative formulas: ``dualad.functional._sparsity``)."""
