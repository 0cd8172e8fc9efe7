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

    def __init__(self, coloring, layout, index, shapes, indices, indptr):
        self.coloring, self.layout, self.index = coloring, layout, index
        self.shapes, self.indices, self.indptr = shapes, indices, indptr

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
    index, shapes = _csr_index(coloring)
    shapes = tuple(s for s in shapes if s[0])  # (no colors: no product, none passed)
    if layout == "csr":
        return Decompression(coloring, layout, index.astype(np.intp), shapes, p.indices, p.indptr)
    rows = _rows(p)
    perm = np.lexsort((rows, p.indices))  # CSC order: by column, then row
    indptr = np.zeros(p.shape[1] + 1, dtype=p.indptr.dtype)
    np.cumsum(np.bincount(p.indices, minlength=p.shape[1]), out=indptr[1:])
    return Decompression(coloring, layout, index[perm].astype(np.intp), shapes,
                         rows[perm].astype(p.indices.dtype), indptr)
