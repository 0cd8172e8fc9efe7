"""Sparse tangents: the Jacobian of each value times a seed, carried as a SciPy sparse matrix.

A *sparse tangent* of a value ``v`` traced from an input ``x`` is a CSR array ``T`` of shape
``(v.size, m)``: row ``i`` is the derivative of element ``i`` of ``v`` (C order) along the
``m`` directions of the seed (columns of an ``(x.size, m)`` matrix; the identity gives the
Jacobian itself). It is the pattern of :mod:`dualad.sparse.patterns` with values, and the
rules here are those rules with values: a primitive's result tangent is a sparse matrix
product of its operands' tangents, so the work and the memory are proportional to the
nonzeros, and no coloring is needed.

- a *gather* (reshape, transpose, getitem, pad, concatenate, setitem, ...) copies rows:
  the pattern rule itself, whose row copies keep their values;
- a *sum* and a *cumulative sum* add rows (the pattern rule's 0/1 map, taken as numbers),
  as does ``index_add`` (``add.at``);
- *elementwise* functions scale each operand's broadcast rows by its partial derivative
  at the primal (:func:`scale_rows`; the interpreter reads the partials from the
  primitive's own JVP rule), a non-holomorphic one on complex values by the two
  coefficients of its R-linear differential (``alpha t + beta conj(t)``);
- *contractions* (matmul, einsum) are multilinear: the tangent of each variable operand is
  mapped by the sparse matrix of the other operands' values on the index grid.

Anything else has no rule here: the interpreter raises (never a dense block by stealth).
Nothing here imports dualad: the rules work on NumPy arrays and SciPy matrices only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import patterns as P

Tangent = sp.csr_array


def empty(rows: int, m: int, dtype: Any = np.float64) -> Tangent:
    """The tangent of a value of ``rows`` elements that depends on no input."""
    return sp.csr_array((rows, m), dtype=dtype)


def scale_rows(t: Tangent, factor: np.ndarray) -> Tangent:
    """``diag(factor) @ t``: row ``i`` of ``t`` times ``factor[i]``, O(nonzeros)."""
    factor = np.asarray(factor).ravel()
    data = t.data * np.repeat(factor, np.diff(t.indptr))
    return sp.csr_array((data, t.indices, t.indptr), shape=t.shape)


def elementwise(call: P.Call, partials: Sequence[tuple[Any, Any] | None]) -> Tangent | None:
    """An elementwise function's result tangent from its operands' tangents broadcast to
    the result's shape and scaled by the partials ``(alpha, beta)`` per operand (arrays of
    the result's shape; ``beta``, the coefficient of ``conj(t)``, None when the
    differential is complex-linear; an operand's entry None: no dependence)."""
    out_shape = tuple(np.shape(call.out))
    acc = None
    for k, (t, ab) in enumerate(zip(call.patterns, partials, strict=True)):
        if t is None or ab is None:
            continue
        wide = P.broadcast(t, call.shape(k), out_shape)
        alpha, beta = ab
        term = scale_rows(wide, alpha)
        if beta is not None:
            term = term + scale_rows(wide.conj(), beta)
        acc = term if acc is None else acc + term
    return acc


def gather(call: P.Call) -> Tangent:
    """A primitive that moves elements: the pattern rule, its row copies keep values."""
    return P.gather(call, None)


def cast(call: P.Call) -> Tangent | None:
    """``astype``: the same rows, in the result's kind (a real result of a complex value
    keeps the real part, as NumPy's cast; an integer or boolean one carries nothing)."""
    kind = np.asarray(call.out).dtype.kind
    t = call.patterns[0]
    if kind not in "fc":
        return None
    return sp.csr_array(t.real) if kind == "f" and t.dtype.kind == "c" else t


def contraction(call: P.Call) -> Tangent | None:
    """einsum (and matmul as one), multilinear in its operands: the tangent of operand k
    mapped by ``M_k``, whose entry ``(o, e)`` is the sum over the grid points joining
    output element ``o`` and element ``e`` of operand k of the product of the other
    operands' values there; the product rule sums over the variable operands."""
    grid = P.contraction_grid(call)
    if grid is None:
        raise NotImplementedError(
            f"sparse tangents: the {call.name} has more than {P._GRID_LIMIT} index-grid "
            "points to enumerate; use sparse_jacobian with coloring (its default strategy, 'auto') "
            "for it")
    values = [np.asarray(v) for v in call.values]
    acc = None
    for k, t in enumerate(call.patterns):
        if t is None:
            continue
        weight = np.ones(grid.out.shape, np.result_type(*values, t.dtype))
        for j, v in enumerate(values):
            if j != k:
                weight = weight * v.ravel()[grid.at[j]]
        keep = weight != 0
        m_k = sp.csr_array((weight[keep], (grid.out[keep], grid.at[k][keep])),
                           shape=(grid.rows, t.shape[0]))
        term = sp.csr_array(m_k @ t)
        acc = term if acc is None else acc + term
    return acc


def _sum(call: P.Call) -> Tangent:
    return P.reduction(call, None, nonlinear=False)


def _cumsum(call: P.Call) -> Tangent:
    return P.scan(call, None, nonlinear=False)


def _scatter_add(call: P.Call) -> Tangent:
    return P.scatter_add(call, None)


RULES: dict[str, Any] = {
    **{name: gather for name in P.GATHERS},
    "astype": cast,
    "sum": _sum,
    "cumsum": _cumsum,
    "index_add": _scatter_add,
    "matmul": contraction,
    "einsum": contraction,
}
"""The structural, reduction and contraction rules by primitive name; the elementwise
ones (``where`` among them) take their partials from the primitive's JVP rule
(``dualad.functional._sparse_tangents``) and go through :func:`elementwise`."""
