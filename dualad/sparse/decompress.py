"""Seeds and decompression maps of a coloring.

A coloring with ``K`` column colors is pushed as ``K`` tangents at once (one
batched JVP pass): seed ``k`` is the indicator of the columns of color ``k``,
and its product is ``B[k] = J @ seed[k]``, a row of the compressed array ``B``
of shape ``(K, m)`` (the batch axis first, as batched tangents carry it). Rows
are the same with cotangents: ``W[k] = seed[k] @ J``, shape ``(K, n)``; a
symmetric coloring's HVPs give ``B[k] = H @ seed[k]``, shape ``(K, n)``.

Each nonzero ``(r, c)`` of the pattern is then one entry of these arrays,
known in advance from the coloring: ``B[color[c], r]`` where ``c`` is the only
column of its color in row ``r``; for a bidirectional coloring otherwise
``W[row_color[r], c]``; for a symmetric one otherwise ``B[color[r], c]`` (the
entry ``(c, r)``, alone in its row ``c``, as a star coloring guarantees). A
:class:`Decompression` holds those positions as one index array into the
flattened products, so that each evaluation is one gather, O(nnz).

An acyclic coloring's nonzeros are not all alone anywhere; along each
two-colored tree, from the leaves in, each is its product entry less the
values already found (substitution). That is a unit triangular system, the
same at every point: factored once, it costs one sparse solve per evaluation
between two gathers, still O(nnz).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .coloring import Coloring, _alone, _count, _rows, is_valid

__all__ = ["Decompression", "column_seeds", "decompression", "row_seeds"]


def _seeds(colors, dtype):
    k = _count(colors)
    seeds = np.zeros((k, colors.size), dtype=dtype)
    seeded = colors >= 0
    seeds[colors[seeded], np.flatnonzero(seeded)] = 1
    return seeds


def column_seeds(coloring: Coloring, dtype=np.float64) -> np.ndarray:
    """The tangents a coloring pushes: ``(K, n)``, row ``k`` the indicator of the
    columns of color ``k`` (JVPs; HVPs for a symmetric coloring)."""
    if coloring.column_colors is None:
        return np.zeros((0, coloring.pattern.shape[1]), dtype=dtype)
    return _seeds(coloring.column_colors, dtype)


def row_seeds(coloring: Coloring, dtype=np.float64) -> np.ndarray:
    """The cotangents a coloring pulls: ``(K, m)``, row ``k`` the indicator of the
    rows of color ``k`` (VJPs)."""
    if coloring.row_colors is None:
        return np.zeros((0, coloring.pattern.shape[0]), dtype=dtype)
    return _seeds(coloring.row_colors, dtype)


class Decompression:
    """The map from a coloring's compressed products to the pattern's nonzeros.

    Made by :func:`decompression`. Call it with the compressed products, in
    this order: the JVPs (or HVPs) ``B`` of shape ``(K, m)`` (``(K, n)`` for
    HVPs), then the VJPs ``W`` of shape ``(K', n)``; pass only those the
    coloring has (``shapes`` lists them; a part without colors has no product).

    Attributes
    ----------
    coloring : Coloring
    layout : {"csr", "csc"}
        The order of the values: that of the pattern's CSR or CSC arrays.
    index : ndarray of intp, (nnz,)
        Position of each nonzero in the flattened products, concatenated.
    shapes : tuple of tuple of int
        The shapes of the compressed products expected.
    indices, indptr : ndarray
        The pattern's structure in ``layout`` (the structure half of a sparse
        result; :meth:`values` gives the other).
    """

    def __init__(self, coloring, layout, index, shapes, indices, indptr, substitution=None):
        self.coloring, self.layout, self.index = coloring, layout, index
        self.shapes, self.indices, self.indptr = shapes, indices, indptr
        # (acyclic colorings) the right-hand side's positions in the products and the
        # factored unit triangular system; its solution extends the buffer gathered from
        self.substitution = substitution

    def values(self, *compressed) -> np.ndarray:
        """The nonzeros, in the order of ``layout``: one gather from the products."""
        if len(compressed) != len(self.shapes):
            raise TypeError(f"this decompression takes {len(self.shapes)} compressed arrays "
                            f"of shapes {self.shapes}, got {len(compressed)}")
        flat = []
        for b, shape in zip(compressed, self.shapes, strict=True):
            b = np.asarray(b)
            if b.shape != shape:
                raise ValueError(f"compressed array of shape {b.shape}; expected {shape}")
            flat.append(b.reshape(-1))
        if not flat:  # (an empty pattern: no products at all)
            return np.zeros(0)
        buf = flat[0] if len(flat) == 1 else np.concatenate(flat)
        if self.substitution is not None:
            rhs_index, lu = self.substitution
            rhs = buf[rhs_index]
            if np.iscomplexobj(rhs):  # (SuperLU factored a real matrix)
                x = lu.solve(rhs.real.astype(np.float64)) + 1j * lu.solve(
                    rhs.imag.astype(np.float64))
            else:
                x = lu.solve(rhs.astype(np.float64))
            buf = np.concatenate([buf, x.astype(np.result_type(buf.dtype, np.float64), copy=False)])
        return buf[self.index]

    def __call__(self, *compressed):
        """The matrix, as a SciPy sparse array in ``layout`` (``csr_array`` or ``csc_array``)."""
        cls = sp.csr_array if self.layout == "csr" else sp.csc_array
        return cls((self.values(*compressed), self.indices, self.indptr),
                   shape=self.coloring.pattern.shape)

    def __repr__(self) -> str:
        return f"Decompression({self.coloring!r}, layout={self.layout!r}, nnz={self.index.size})"


def _csr_index(coloring):
    """Position of each nonzero (in CSR order) in the flattened products, and their shapes."""
    p = coloring.pattern
    m, n = p.shape
    rows, cols = _rows(p), p.indices.astype(np.intp)
    kind, cc, rc = coloring.kind, coloring.column_colors, coloring.row_colors
    if kind == "column":
        return cc[cols] * m + rows, ((_count(cc), m),)
    if kind == "row":
        return rc[rows] * n + cols, ((_count(rc), n),)
    if kind == "symmetric":
        alone = _alone(p, cc)
        return np.where(alone, cc[cols] * n + rows, cc[rows] * n + cols), ((_count(cc), n),)
    if kind == "bidirectional":
        kc, kr = _count(cc), _count(rc)
        by_col = _alone(p, cc)
        index = np.where(by_col, cc[cols] * m + rows, kc * m + rc[rows] * n + cols)
        return index, ((kc, m), (kr, n))
    raise ValueError(f"unknown coloring kind {kind!r}")


def decompression(coloring: Coloring, layout: str = "csr") -> Decompression:
    """The index map that reads a coloring's products into the pattern's nonzeros.

    Parameters
    ----------
    coloring : Coloring
        Any coloring of :mod:`dualad.sparse.coloring` (checked valid again here:
        an invalid one would give wrong values, so it raises).
    layout : {"csr", "csc"}, default "csr"
        The order of the values.

    Returns
    -------
    Decompression
    """
    if layout not in ("csr", "csc"):
        raise ValueError(f"layout is 'csr' or 'csc', got {layout!r}")
    if not is_valid(coloring):
        raise ValueError(f"{coloring!r} does not separate every nonzero of its pattern")
    p = coloring.pattern
    substitution = None
    if coloring.kind == "acyclic":
        index, shapes, substitution = _acyclic_index(coloring)
    else:
        index, shapes = _csr_index(coloring)
    shapes = tuple(s for s in shapes if s[0])  # (no colors: no product, none passed)
    if layout == "csr":
        return Decompression(coloring, layout, index.astype(np.intp), shapes, p.indices, p.indptr,
                             substitution)
    rows = _rows(p)
    perm = np.lexsort((rows, p.indices))  # CSC order: by column, then row
    indptr = np.zeros(p.shape[1] + 1, dtype=p.indptr.dtype)
    np.cumsum(np.bincount(p.indices, minlength=p.shape[1]), out=indptr[1:])
    return Decompression(coloring, layout, index[perm].astype(np.intp), shapes,
                         rows[perm].astype(p.indices.dtype), indptr, substitution)


def _acyclic_index(coloring):
    """Index map and substitution system of an acyclic coloring.

    In the (a, b) forest, root each tree; node t = (vertex v, other color d) with
    parent (u, color(v)) stands for the edge (v, u), and its product entry
    ``B[d, v]`` sums ``H[v, u]`` and ``H[v, w]`` over t's children (w, color(v)):
    ``x_t + sum of x_s over t's children s = B[d, v]``, unit triangular in
    breadth-first order (parents first), factored once (SuperLU, natural order,
    diagonal pivots: no fill). Diagonal entries are read directly, ``B[color(v), v]``.
    """
    from scipy.sparse.csgraph import breadth_first_order, connected_components
    from scipy.sparse.linalg import splu

    from .coloring import _two_colored_forest

    p, colors = coloring.pattern, coloring.column_colors
    n, k = p.shape[0], _count(colors)
    rows, cols = _rows(p), p.indices.astype(np.intp)
    keys, u, w, g = _two_colored_forest(p, colors)
    if not keys.size:  # a diagonal pattern: nothing to substitute
        return colors[rows] * n + rows, ((k, n),), None
    nodes = keys.size
    # one root per tree: a super-root joined to each tree's first node, searched once
    ncomp, label = connected_components(g, directed=False)
    first = np.unique(label, return_index=True)[1]
    join = sp.csr_array((np.ones(u.size + first.size, dtype=bool),
                         (np.concatenate([u, np.full(first.size, nodes)]),
                          np.concatenate([w, first]))), shape=(nodes + 1, nodes + 1))
    order, pred = breadth_first_order(join, nodes, directed=False, return_predecessors=True)
    order = order[1:]  # (without the super-root)
    unknown = order[pred[order] != nodes]  # the nodes with a parent: one per edge
    slot = np.full(nodes, -1, dtype=np.intp)
    slot[unknown] = np.arange(unknown.size)
    kid, dad = slot[unknown], slot[pred[unknown]]
    has_dad = dad >= 0
    system = sp.csc_array(
        (np.ones(unknown.size + int(has_dad.sum())),
         (np.concatenate([kid, dad[has_dad]]), np.concatenate([kid, kid[has_dad]]))),
        shape=(unknown.size,) * 2)
    lu = splu(system, permc_spec="NATURAL", diag_pivot_thresh=0.0)
    rhs_index = keys[unknown]  # d * n + v: the entry B[d, v] of the flattened products
    # each entry: the diagonal directly; an edge from its child node's unknown
    a = np.searchsorted(keys, colors[cols] * n + rows)  # node (r, color(c))
    b = np.searchsorted(keys, colors[rows] * n + cols)  # node (c, color(r))
    off = rows != cols
    a, b = np.where(off, a, 0), np.where(off, b, 0)
    child = np.where(pred[a] == b, a, b)
    index = np.where(off, k * n + slot[child], colors[rows] * n + rows)
    return index, ((k, n),), (rhs_index.astype(np.intp), lu)
