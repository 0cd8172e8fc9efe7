"""Colorings of sparsity patterns.

A coloring groups the columns of a Jacobian ``J`` (m x n) so that the columns
of one group share no row: then ``J @ S``, with one seed column per group,
holds every nonzero of ``J`` alone in its place, and one batched JVP pass with
``ncolors`` tangents gives the whole Jacobian. This is a distance-1 coloring of
the column intersection graph (columns adjacent when they share a row); rows
for VJPs are the same on ``J.T``. A dense row beside a dense column (an
arrowhead) defeats both; a bidirectional coloring recovers the dense rows from
VJPs and the rest from JVPs. A symmetric Hessian needs only a star coloring of
its adjacency graph (a proper coloring in which every path on four vertices
has three colors): each nonzero is then alone in its row's color group either
at ``(i, j)`` or at ``(j, i)``. An acyclic coloring (every two-colored
subgraph a forest) needs fewer colors still, and recovers the nonzeros by
substitution along the trees.

Every coloring here is checked before it is returned (:func:`is_valid`, O(nnz)),
whatever found it: a wrong coloring would be a wrong derivative.

Algorithms
----------
* Greedy (each vertex takes the smallest color none of its colored neighbours
  has; for star and acyclic colorings, the smallest that keeps the coloring
  star or acyclic) in the orders ``"natural"``, ``"largest_first"``, ``"smallest_last"``
  (Matula and Beck) and ``"incidence_degree"``, or ``"best"`` of them,
  followed by iterated greedy (Culberson): recoloring the vertices class by
  class, last class first, never needs more colors and often needs fewer.
* Structure: a pattern whose rows each span at most ``w`` consecutive columns
  (a band of total width ``w``) is colored ``j mod w``; a pattern whose
  offsets are those of a stencil on a 2-D grid (detected from the offsets
  ``col - row``, or given by ``grid=``) is colored ``(a i + b j) mod K`` with
  the smallest ``K`` that separates the stencil's points (the 5-point stencil:
  ``(i + 2 j) mod 5``, five colors where greedy takes seven). These are taken
  where they beat greedy, and checked like any other coloring.
* The lower bound reported: the densest row for column colorings (its columns
  all differ), the densest column for row colorings; for star colorings 3
  where an edge joins two vertices of degree two or more (a path on four
  vertices, or a triangle), else 2 (1 without off-diagonal nonzeros); for
  acyclic colorings 3 where the graph has a cycle; for bidirectional ones 2
  where a row and a column each hold two nonzeros.

Why not a library
-----------------
* ``networkx.greedy_color`` has the orders, but needs the intersection graph
  built as a networkx Graph (Python dicts per vertex and per edge), which at
  n = 2e5 takes seconds before coloring starts; it has no bicoloring, no star
  coloring and no decompression.
* ``scipy.optimize._numdiff.group_columns`` (what ``least_squares`` uses for
  ``jac_sparsity``) is fast, but private, natural order only, column colorings
  only (11 colors for the 5-point stencil).
* SparseMatrixColorings.jl (Julia) and ColPack (C++) have all of this, but no
  maintained Python binding; asdex is bound to JAX (greedy distance-1 and star
  colorings, 7 colors for the 5-point stencil).

So the greedy core is written here: a tight loop over the CSR arrays of the
intersection graph (built by SciPy's sparse product, in C) as two lists of
integers, with no graph object and nothing else per edge; the structure
colorings and every check are vectorized (O(nnz)).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ORDERS", "Coloring", "acyclic_coloring", "as_pattern", "bidirectional_coloring",
    "column_coloring",
    "is_valid", "row_coloring", "symmetric_coloring",
]

ORDERS = ("natural", "largest_first", "smallest_last", "incidence_degree")

# Above this many entries in the column intersection product (sum of squared row
# counts) and with the densest row covering half the columns or more, coloring can
# save at most a factor 2 and the graph would not fit: each column gets its color.
_GRAPH_BUDGET = 20_000_000


@dataclass(frozen=True, eq=False)
class Coloring:
    """A coloring of a sparsity pattern.

    Attributes
    ----------
    kind : {"column", "row", "bidirectional", "symmetric", "acyclic"}
        What is colored: columns (JVPs), rows (VJPs), both, or the variables of
        a symmetric matrix (HVPs; read directly, or by substitution).
    pattern : scipy.sparse.csr_array
        The pattern colored (boolean, sorted indices, no duplicates; symmetric
        for ``"symmetric"``).
    column_colors : ndarray of intp or None
        Color of each column (all kinds but ``"row"``);
        -1 marks a column no product seeds (in a bidirectional coloring, and
        every column of an empty pattern).
    row_colors : ndarray of intp or None
        Color of each row (``"row"``, ``"bidirectional"``), -1 likewise.
    lower_bound : int
        No coloring of this kind needs fewer colors than this.
    method : str
        What found it (an order, ``"band"``, ``"stencil"``, ``"split"``, ...).
    """

    kind: str
    pattern: sp.csr_array
    column_colors: np.ndarray | None
    row_colors: np.ndarray | None
    lower_bound: int
    method: str

    @property
    def ncolumn_colors(self) -> int:
        """Number of JVP (or HVP) seeds."""
        return _count(self.column_colors)

    @property
    def nrow_colors(self) -> int:
        """Number of VJP seeds."""
        return _count(self.row_colors)

    @property
    def ncolors(self) -> int:
        """Number of products in all: JVPs, VJPs or HVPs together."""
        return self.ncolumn_colors + self.nrow_colors

    @property
    def colors(self) -> np.ndarray:
        """The one color array of a column, row or symmetric coloring."""
        if self.kind == "bidirectional":
            raise ValueError("a bidirectional coloring has column_colors and row_colors")
        return self.row_colors if self.kind == "row" else self.column_colors

    def __repr__(self) -> str:
        return (f"Coloring({self.kind}, shape={self.pattern.shape}, ncolors={self.ncolors}, "
                f"lower_bound={self.lower_bound}, method={self.method!r})")


def _count(colors):
    if colors is None or colors.size == 0:
        return 0
    return int(colors.max()) + 1


# -- patterns and graphs ---------------------------------------------------------------


def as_pattern(pattern) -> sp.csr_array:
    """The pattern as a canonical boolean CSR array.

    Parameters
    ----------
    pattern : array_like or scipy sparse array/matrix, 2-D
        Dense: its nonzero entries. Sparse: its stored entries, explicit zeros
        included (a stored entry is a structural nonzero; dropping one could
        drop a derivative).

    Returns
    -------
    scipy.sparse.csr_array
        Boolean, indices sorted within each row, no duplicates.
    """
    if sp.issparse(pattern):
        a = sp.csr_array(pattern, copy=True)
        a.sum_duplicates()
        if a.ndim != 2:
            raise ValueError(f"a sparsity pattern is 2-D, got shape {a.shape}")
        return sp.csr_array((np.ones(a.nnz, dtype=bool), a.indices, a.indptr), shape=a.shape)
    a = np.asarray(pattern)
    if a.ndim != 2:
        raise ValueError(f"a sparsity pattern is 2-D, got shape {a.shape}")
    return sp.csr_array(a != 0)


def _rows(p):
    """Row index of each stored entry of a CSR array."""
    return np.repeat(np.arange(p.shape[0], dtype=np.intp), np.diff(p.indptr))


def _drop_diagonal(g):
    """The CSR graph ``g`` without self-loops."""
    rows = _rows(g)
    keep = g.indices != rows
    indptr = np.zeros(g.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=g.shape[0]), out=indptr[1:])
    return sp.csr_array((np.ones(int(keep.sum()), dtype=bool), g.indices[keep], indptr),
                        shape=g.shape)


def column_graph(p) -> sp.csr_array:
    """The column intersection graph: columns adjacent when they share a row.

    ``P.T @ P`` on booleans (SciPy sums booleans by ``or``), without its diagonal.
    """
    p = as_pattern(p)
    return _drop_diagonal(sp.csr_array(p.T @ p))


def adjacency_graph(p) -> sp.csr_array:
    """The adjacency graph of a symmetric pattern (``P or P.T``), without its diagonal."""
    p = as_pattern(p)
    return _drop_diagonal(sp.csr_array(p + p.T))


# -- validity --------------------------------------------------------------------------


def _alone(p, colors):
    """For each stored entry (r, c) of ``p``: whether c is the only column of its
    color in row r (the entry can be read from compressed column ``colors[c]``).
    Entries of uncolored columns (color -1) are never alone."""
    rows = _rows(p)
    col = colors[p.indices]
    k = _count(colors) + 1
    keys = rows.astype(np.int64) * k + (col + 1)  # (color -1 is key 0 of its row)
    if p.shape[0] * k <= 4 * p.nnz + 1_000_000:
        counts = np.bincount(keys, minlength=p.shape[0] * k)[keys]
    else:
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        counts = counts[inverse]
    return (counts == 1) & (col >= 0)


def is_valid(coloring: Coloring) -> bool:
    """Whether every nonzero of the pattern can be read directly from the products.

    Column: each entry alone in its row among the columns of its color. Row:
    the same on the transpose. Bidirectional: each entry alone so in its row
    (JVPs) or in its column (VJPs). Symmetric: each entry ``(i, j)`` alone at
    ``(i, j)`` or at ``(j, i)`` (what a star coloring guarantees).
    """
    p, kind = coloring.pattern, coloring.kind
    if kind == "column":
        return bool(_alone(p, coloring.column_colors).all())
    if kind == "row":
        return bool(_alone(sp.csr_array(p.T), coloring.row_colors).all())
    if kind == "bidirectional":
        by_col = _alone(p, coloring.column_colors)
        pt = sp.csr_array(p.T)
        by_row = _alone(pt, coloring.row_colors)
        # by_row is in the transpose's order: carry it back to p's entries
        return bool((by_col | _to_csr_order(p, pt, by_row)).all())
    if kind == "symmetric":
        a = _alone(p, coloring.column_colors)
        return bool((a | _to_csr_order(p, p, a)).all())
    if kind == "acyclic":
        return bool(_acyclic_ok(p, coloring.column_colors))
    raise ValueError(f"unknown coloring kind {kind!r}")


def _to_csr_order(p, pt, values_t):
    """``values_t`` given per stored entry of ``pt`` (the transpose of ``p``, CSR),
    returned per stored entry of ``p`` (entry (r, c) gets the value of (c, r))."""
    pos = sp.csr_array((np.arange(pt.nnz, dtype=np.int64) + 1, pt.indices, pt.indptr),
                       shape=pt.shape)
    back = sp.csr_array(pos.T)
    back.sort_indices()
    return values_t[back.data - 1]


# -- greedy ----------------------------------------------------------------------------


def order(graph, name: str) -> np.ndarray:
    """A vertex order of a CSR graph for greedy coloring.

    Parameters
    ----------
    graph : scipy.sparse.csr_array
        Symmetric, without self-loops.
    name : {"natural", "largest_first", "smallest_last", "incidence_degree"}
    """
    n = graph.shape[0]
    deg = np.diff(graph.indptr)
    if name == "natural":
        return np.arange(n)
    if name == "largest_first":
        return np.argsort(-deg, kind="stable")
    if name == "smallest_last":
        return _smallest_last(graph.indptr.tolist(), graph.indices.tolist(), deg.tolist())
    if name == "incidence_degree":
        return _incidence_degree(graph.indptr.tolist(), graph.indices.tolist(), n)
    raise ValueError(f"unknown order {name!r}; expected one of {ORDERS} or 'best'")


def _smallest_last(ip, ix, deg):
    """Matula-Beck: repeatedly remove a vertex of smallest degree in what is left;
    color in the reverse order of removal. Buckets of sets by current degree."""
    n = len(deg)
    buckets = [set() for _ in range(max(deg, default=0) + 1)]
    for v, d in enumerate(deg):
        buckets[d].add(v)
    gone = [False] * n
    out = []
    d = 0
    for _ in range(n):
        while not buckets[d]:
            d += 1
        v = buckets[d].pop()
        gone[v] = True
        out.append(v)
        for w in ix[ip[v]:ip[v + 1]]:
            if not gone[w]:
                dw = deg[w]
                buckets[dw].discard(w)
                deg[w] = dw - 1
                buckets[dw - 1].add(w)
        d = d - 1 if d > 0 else 0
    out.reverse()
    return np.array(out, dtype=np.intp)


def _incidence_degree(ip, ix, n):
    """Next the vertex with the most neighbours already ordered."""
    maxdeg = max((ip[v + 1] - ip[v] for v in range(n)), default=0)
    buckets = [set() for _ in range(maxdeg + 1)]
    buckets[0].update(range(n))
    inc = [0] * n
    done = [False] * n
    out = []
    d = 0
    for _ in range(n):
        while not buckets[d]:
            d -= 1
        v = buckets[d].pop()
        done[v] = True
        out.append(v)
        for w in ix[ip[v]:ip[v + 1]]:
            if not done[w]:
                i = inc[w]
                buckets[i].discard(w)
                inc[w] = i + 1
                buckets[i + 1].add(w)
                if i + 1 > d:
                    d = i + 1
    return np.array(out, dtype=np.intp)


def greedy(graph, vertex_order) -> np.ndarray:
    """Greedy distance-1 coloring: each vertex in turn takes the smallest color
    none of its colored neighbours has."""
    ip, ix = graph.indptr.tolist(), graph.indices.tolist()
    color = [-1] * graph.shape[0]
    for v in vertex_order.tolist():
        a, b = ip[v], ip[v + 1]
        # itemgetter reads the neighbours' colors in one C call (a quarter faster
        # than a Python loop over them); -1 (uncolored) in `used` is harmless
        if b - a > 1:
            used = set(itemgetter(*ix[a:b])(color))
        elif b > a:
            used = (color[ix[a]],)
        else:
            used = ()
        c = 0
        while c in used:
            c += 1
        color[v] = c
    return np.array(color, dtype=np.intp)


def recolor(graph, colors, color_fn=greedy, rounds: int = 3) -> np.ndarray:
    """Iterated greedy (Culberson): recolor class by class, last class first.

    Greedy over the vertices grouped by color class uses no more colors than
    there are classes, and often fewer; repeated while it helps.
    """
    best = colors
    for _ in range(rounds):
        new = color_fn(graph, np.argsort(-best, kind="stable"))
        if _count(new) >= _count(best):
            break
        best = new
    return best


def _check_order(name):
    if name != "best" and name not in ORDERS:
        raise ValueError(f"unknown order {name!r}; expected one of {ORDERS} or 'best'")


def _best_greedy(graph, order_name, lower_bound, color_fn=greedy, postprocess=True):
    """Greedy in one order or the best of all; returns (colors, method)."""
    names = ORDERS if order_name == "best" else (order_name,)
    best, method = None, None
    for name in names:
        colors = color_fn(graph, order(graph, name))
        if postprocess and _count(colors) > lower_bound:
            colors = recolor(graph, colors, color_fn)
        if best is None or _count(colors) < _count(best):
            best, method = colors, name
        if _count(best) <= lower_bound:
            break
    return best, method


# -- structure -------------------------------------------------------------------------


def _band_colors(p):
    """``j mod w``, ``w`` the widest span of columns in one row: two columns of one
    color are ``w`` or more apart, so no row holds both."""
    counts = np.diff(p.indptr)
    full = counts > 0
    if not full.any():
        return None
    lo = p.indices[p.indptr[:-1][full]]
    hi = p.indices[p.indptr[1:][full] - 1]
    w = int((hi - lo).max()) + 1
    return np.arange(p.shape[1], dtype=np.intp) % w


def _grid_offsets(offsets, n2):
    """Flat offsets ``di * n2 + dj`` as grid offsets (di, dj), |dj| <= n2 // 2."""
    dj = (offsets + n2 // 2) % n2 - n2 // 2
    return (offsets - dj) // n2, dj


def _lattice(di, dj, lower):
    """The smallest K (from ``lower``) and (a, b) such that ``(a i + b j) mod K``
    differs on every two points of the stencil {(di, dj)}; None past 2 |stencil| + 1."""
    ddi = (di[:, None] - di[None, :])[~np.eye(di.size, dtype=bool)]
    ddj = (dj[:, None] - dj[None, :])[~np.eye(di.size, dtype=bool)]
    for k in range(max(lower, di.size), 2 * di.size + 2):
        a = np.arange(k)[:, None, None]
        b = np.arange(k)[None, :, None]
        ok = ((a * ddi + b * ddj) % k != 0).all(axis=2)
        hits = np.argwhere(ok)
        if hits.size:
            return k, int(hits[0, 0]), int(hits[0, 1])
    return None


def _stencil_colors(p, lower, grid=None):
    """Colors ``(a i + b j) mod K`` on a 2-D grid of width ``n2`` (from ``grid``, or
    each candidate width the offsets suggest), or None. A pattern that is not a
    stencil on that grid (a row's entries wrapping to the next grid row) fails
    the check that follows, and greedy stands."""
    m, n = p.shape
    if m != n or p.nnz == 0:
        return None
    # the distinct offsets col - row, by counting (np.unique hashes 8e5 distinct
    # offsets of a random pattern in 0.7 s)
    offsets = np.flatnonzero(np.bincount(p.indices - _rows(p) + (m - 1), minlength=1)) - (m - 1)
    if offsets.size > 25:  # (the search below grows as the fourth power of this)
        return None
    if grid is not None:
        widths = [int(grid[-1])]
    else:
        far = np.abs(offsets[np.abs(offsets) > 1])
        widths = sorted({int(w) for o in far for w in (o - 2, o - 1, o, o + 1, o + 2) if w > 2})[:32]
    found = []
    for n2 in widths:
        di, dj = _grid_offsets(offsets, n2)
        if grid is None and np.abs(dj).max(initial=0) * 2 >= n2:
            continue
        hit = _lattice(di, dj, lower)
        if hit is not None:  # widths that are offsets first, then those next to one
            near = int(np.abs(np.abs(offsets) - n2).min())
            found.append((hit[0], near, n2, hit[1], hit[2]))
    idx = np.arange(n, dtype=np.intp)
    for k, _, n2, a, b in sorted(found):
        colors = (a * (idx // n2) + b * (idx % n2)) % k
        if _alone(p, colors).all():
            return colors
    return None


def _structured(p, lower, grid):
    """The best valid structure-aware column coloring, as (colors, method), or None."""
    band = _band_colors(p)
    if band is not None and _count(band) <= lower:
        return band, "band"
    stencil = _stencil_colors(p, lower, grid)
    if stencil is not None and (band is None or _count(stencil) < _count(band)):
        return stencil, "stencil"
    return None if band is None else (band, "band")


# -- the colorings ---------------------------------------------------------------------


def _column_colors(p, order_name, postprocess, structure, grid):
    """Column colors of a CSR pattern: (colors, lower_bound, method)."""
    m, n = p.shape
    counts = np.diff(p.indptr)
    lower = int(counts.max(initial=0))
    if p.nnz == 0:
        return np.full(n, -1, dtype=np.intp), 0, "empty"  # (no product needed)
    best = _structured(p, lower, grid) if structure else None
    if best is not None and _count(best[0]) <= lower:
        return best[0], lower, best[1]
    if 2 * lower >= n and int((counts.astype(np.int64) ** 2).sum()) > _GRAPH_BUDGET:
        own = (np.arange(n, dtype=np.intp), "dense")
        return (best or own)[0], lower, (best or own)[1]
    colors, method = _best_greedy(column_graph(p), order_name, lower, greedy, postprocess)
    if best is not None and _count(best[0]) < _count(colors):
        colors, method = best
    return colors, lower, method


def column_coloring(pattern, order: str = "best", *, postprocess: bool = True,
                    structure: bool = True, grid=None) -> Coloring:
    """Color the columns so that no two columns of one color share a row (JVPs).

    Parameters
    ----------
    pattern : array_like or scipy sparse, (m, n)
        The Jacobian's sparsity pattern.
    order : {"best", "natural", "largest_first", "smallest_last", "incidence_degree"}
        Greedy's vertex order; ``"best"`` tries each, stopping at the lower bound.
    postprocess : bool, default True
        Iterated greedy after each greedy pass.
    structure : bool, default True
        Try the band and 2-D stencil colorings too, keeping the fewest colors.
    grid : tuple of int, optional
        The grid's shape ``(..., width)`` when the columns are the points of a
        2-D grid in row-major order (otherwise the width is found from the
        pattern's offsets).

    Returns
    -------
    Coloring
        Checked valid; ``ncolors >= lower_bound`` (the densest row).
    """
    _check_order(order)
    p = as_pattern(pattern)
    colors, lower, method = _column_colors(p, order, postprocess, structure, grid)
    return _checked(Coloring("column", p, colors, None, lower, method))


def row_coloring(pattern, order: str = "best", *, postprocess: bool = True,
                 structure: bool = True, grid=None) -> Coloring:
    """Color the rows so that no two rows of one color share a column (VJPs).

    The column coloring of the transpose; parameters as :func:`column_coloring`,
    ``grid`` describing the rows. The lower bound is the densest column.
    """
    _check_order(order)
    p = as_pattern(pattern)
    colors, lower, method = _column_colors(sp.csr_array(p.T), order, postprocess, structure, grid)
    return _checked(Coloring("row", p, None, colors, lower, method))


def _checked(coloring):
    if not is_valid(coloring):  # a bug here would be a wrong derivative: never return it
        raise AssertionError(f"internal error: invalid {coloring!r}")
    return coloring


def _split_candidates(q):
    """How many of the densest rows of ``q`` to split off: none, and those at or
    above each of the eight largest row counts."""
    counts = np.diff(q.indptr)
    levels = np.unique(counts)[::-1][:8]
    return [0] + [int((counts >= t).sum()) for t in levels if t > 0]


def _split(q, k, order_name, postprocess, structure):
    """Split the ``k`` densest rows of ``q`` off: the rest by a column coloring,
    those by a row coloring. Returns (column colors, row colors) of ``q``, -1
    where a column or row is not seeded."""
    dense = np.zeros(q.shape[0], dtype=bool)
    dense[np.argsort(-np.diff(q.indptr), kind="stable")[:k]] = True
    rest, top = sp.csr_array(q[~dense]), sp.csr_array(q[dense])
    col = np.full(q.shape[1], -1, dtype=np.intp)
    row = np.full(q.shape[0], -1, dtype=np.intp)
    if rest.nnz:
        col = _column_colors(rest, order_name, postprocess, structure, None)[0]
    if top.nnz:
        row[dense] = _column_colors(sp.csr_array(top.T), order_name, postprocess, structure, None)[0]
    return col, row


def bidirectional_coloring(pattern, order: str = "best", *, postprocess: bool = True,
                           structure: bool = True) -> Coloring:
    """Color rows and columns together: dense rows from VJPs, the rest from JVPs.

    For a dense row beside a dense column (an arrowhead), where a column or a
    row coloring alone needs as many colors as the matrix is wide. The densest
    rows (or, on the transpose, columns) are split off at each level of their
    counts; the split with the fewest colors in all wins, a pure column or row
    coloring included. Every nonzero is then read directly: alone in its row
    among the seeded columns of its color, or alone in its column among the
    seeded rows of its color (the star bicoloring condition).

    Parameters
    ----------
    pattern : array_like or scipy sparse, (m, n)
    order, postprocess, structure
        As :func:`column_coloring`, for each part.

    Returns
    -------
    Coloring
        ``column_colors`` (n,) and ``row_colors`` (m,), -1 where not seeded;
        ``ncolors`` counts both. Where one side needs no color, the coloring
        of the other is returned as such (kind ``"column"`` or ``"row"``; a
        column coloring on a tie, JVPs being this library's cheaper
        product). Its ``lower_bound`` is that of bidirectional colorings: 2
        when some row and some column each hold two nonzeros (one column
        color would put a row's two columns together, one row color a
        column's two rows), else 1 (0 for an empty pattern).
    """
    _check_order(order)
    p = as_pattern(pattern)
    pt = sp.csr_array(p.T)
    best = None
    for transposed, q in ((False, p), (True, pt)):
        for k in _split_candidates(q):
            col, row = _split(q, k, order, postprocess, structure)
            if transposed:  # columns of q are rows of p
                col, row = row, col
            total = _count(col) + _count(row)
            if best is None or total < best[0]:
                best = (total, col, row, f"split {k} {'columns' if transposed else 'rows'}")
    _, col, row, method = best
    two = np.diff(p.indptr).max(initial=0) >= 2 and np.diff(pt.indptr).max(initial=0) >= 2
    lower = 2 if two else int(p.nnz > 0)
    if _count(row) == 0:
        return _checked(Coloring("column", p, col, None, lower, method))
    if _count(col) == 0:
        return _checked(Coloring("row", p, None, row, lower, method))
    return _checked(Coloring("bidirectional", p, col, row, lower, method))


# -- symmetric -------------------------------------------------------------------------


def star_greedy(graph, vertex_order) -> np.ndarray:
    """Greedy star coloring: each vertex takes the smallest color that keeps the
    coloring proper and leaves no path on four colored vertices with two colors.

    Such a path through the new vertex v has v at an end (v-w-x-y, c(w) = c(y):
    c(x) is forbidden) or inside (w-v-x-y, c(w) = c(x): c(y) is forbidden). Each
    vertex keeps the counts of its colored neighbours' colors, to see both.
    """
    ip, ix = graph.indptr.tolist(), graph.indices.tolist()
    n = graph.shape[0]
    color = [-1] * n
    near = [{} for _ in range(n)]  # near[x][c]: colored neighbours of x with color c
    for v in vertex_order.tolist():
        nb = ix[ip[v]:ip[v + 1]]
        forbid, first, twice = set(), {}, []
        for w in nb:
            cw = color[w]
            if cw < 0:
                continue
            forbid.add(cw)
            if cw in first:
                twice.append(w)
                if first[cw] is not None:
                    twice.append(first[cw])
                    first[cw] = None
            else:
                first[cw] = w
            for x in ix[ip[w]:ip[w + 1]]:  # v-w-x-y with c(y) = c(w), y != w
                cx = color[x]
                if cx >= 0 and near[x].get(cw, 0) >= 2:
                    forbid.add(cx)
        for x in twice:  # w-v-x-y with c(w) = c(x)
            forbid.update(near[x])
        c = 0
        while c in forbid:
            c += 1
        color[v] = c
        for w in nb:
            d = near[w]
            d[c] = d.get(c, 0) + 1
    return np.array(color, dtype=np.intp)


def _star_lower_bound(graph):
    """3 where an edge joins two vertices of degree >= 2 (a path on four vertices
    or a triangle: both need three colors), else 2 with an edge, else 1."""
    if graph.nnz == 0:
        return 1
    deg = np.diff(graph.indptr)
    return 3 if ((deg[_rows(graph)] >= 2) & (deg[graph.indices] >= 2)).any() else 2


def symmetric_coloring(pattern, order: str = "best", *, postprocess: bool = True,
                       structure: bool = True, grid=None) -> Coloring:
    """Star coloring of a symmetric pattern, for a Hessian from HVPs read directly.

    Parameters
    ----------
    pattern : array_like or scipy sparse, (n, n)
        The Hessian's pattern; made symmetric (``P or P.T``).
    order, postprocess, structure, grid
        As :func:`column_coloring`. The structure-aware colorings are column
        colorings (distance-2, hence star colorings too); they are kept where
        they need fewer colors than greedy star coloring.

    Returns
    -------
    Coloring
        Kind ``"symmetric"``; ``column_colors`` colors the variables.
    """
    _check_order(order)
    p = as_pattern(pattern)
    if p.shape[0] != p.shape[1]:
        raise ValueError(f"a symmetric pattern is square, got shape {p.shape}")
    p = as_pattern(p + p.T)
    graph = _drop_diagonal(p)
    lower = _star_lower_bound(graph) if p.nnz else 0
    if p.nnz == 0:
        return _checked(Coloring("symmetric", p, np.full(p.shape[0], -1, dtype=np.intp), None,
                                 0, "empty"))
    # structure first: a band at the lower bound (a tridiagonal Hessian) needs no greedy.
    # On the pattern with its diagonal, a column coloring is a distance-2 coloring of
    # the adjacency graph, hence a star coloring.
    with_diagonal = as_pattern(p + sp.csr_array(sp.identity(p.shape[0], dtype=bool, format="csr")))
    hit = _structured(with_diagonal, lower, grid) if structure else None
    if hit is not None and _count(hit[0]) <= lower:
        colors, method = hit
    else:
        colors, method = _best_greedy(graph, order, lower, star_greedy, postprocess)
        if hit is not None and _count(hit[0]) < _count(colors):
            colors, method = hit
    return _checked(Coloring("symmetric", p, colors, None, lower, method))


# -- acyclic ---------------------------------------------------------------------------


def acyclic_greedy(graph, vertex_order) -> np.ndarray:
    """Greedy acyclic coloring: each vertex takes the smallest color that keeps the
    coloring proper and every two-colored subgraph a forest.

    A new vertex v of color c closes a two-colored cycle exactly when two of its
    neighbours of one color d already lie in one tree of the (c, d) forest. The
    trees are kept in a union-find over (vertex w, other color e), key ``e * n + w``:
    the tree of w in the (color(w), e) forest.
    """
    ip, ix = graph.indptr.tolist(), graph.indices.tolist()
    n = graph.shape[0]
    color = [-1] * n
    parent = {}

    def find(key):
        root = key
        while root in parent:
            root = parent[root]
        while key != root:  # path compression
            parent[key], key = root, parent[key]
        return root

    for v in vertex_order.tolist():
        nb = ix[ip[v]:ip[v + 1]]
        by_color = {}
        for w in nb:
            if color[w] >= 0:
                by_color.setdefault(color[w], []).append(w)
        groups = [ws for ws in by_color.values() if len(ws) > 1]
        c = 0
        while c in by_color or any(len({find(c * n + w) for w in ws}) < len(ws) for ws in groups):
            c += 1
        color[v] = c
        for d, ws in by_color.items():
            for w in ws:
                a, b = find(d * n + v), find(c * n + w)
                if a != b:
                    parent[a] = b
    return np.array(color, dtype=np.intp)


def _two_colored_forest(p, colors):
    """The two-colored forests of a symmetric pattern's coloring, as one graph.

    Node ``(v, d)``: vertex v in the forest of colors (color(v), d); each edge
    (i, j), i < j, joins (i, color(j)) and (j, color(i)). Returns (keys of the
    nodes, ``d * n + v``, sorted), the nodes of each edge (two arrays) and the
    node graph (CSR).
    """
    n = p.shape[0]
    rows = _rows(p)
    once = rows < p.indices
    i, j = rows[once], p.indices[once].astype(np.intp)
    a, b = colors[j] * n + i, colors[i] * n + j
    keys, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    u, w = inverse[:i.size], inverse[i.size:]
    g = sp.csr_array((np.ones(u.size, dtype=bool), (u, w)), shape=(keys.size, keys.size))
    return keys, u, w, g


def _acyclic_ok(p, colors):
    """Proper, and every two-colored subgraph a forest (edges = nodes - components)."""
    from scipy.sparse.csgraph import connected_components

    rows = _rows(p)
    if (colors[rows] < 0).any():
        return False
    off = rows != p.indices
    if (colors[rows[off]] == colors[p.indices[off]]).any():
        return False
    keys, u, _, g = _two_colored_forest(p, colors)
    if not u.size:
        return True
    ncomp = connected_components(g, directed=False)[0]
    return u.size == keys.size - ncomp


def _acyclic_lower_bound(graph):
    """3 with a cycle (it needs three colors), else 2 with an edge, else 1."""
    from scipy.sparse.csgraph import connected_components

    if graph.nnz == 0:
        return 1
    ncomp = connected_components(graph, directed=False)[0]
    return 3 if graph.nnz // 2 > graph.shape[0] - ncomp else 2


def acyclic_coloring(pattern, order: str = "best", *, postprocess: bool = True,
                     structure: bool = True, grid=None) -> Coloring:
    """Acyclic coloring of a symmetric pattern, for a Hessian from HVPs by substitution.

    Fewer colors than a star coloring (a tridiagonal Hessian: 2, not 3), at the
    price of recovering each nonzero by substitution along the two-colored
    trees (:mod:`dualad.sparse.decompress` precomputes the triangular system)
    rather than by reading it directly.

    Parameters
    ----------
    pattern, order, postprocess, structure, grid
        As :func:`symmetric_coloring` (star colorings, and the distance-2
        structure-aware colorings, are acyclic too).

    Returns
    -------
    Coloring
        Kind ``"acyclic"``; ``lower_bound`` 3 where the graph has a cycle.
    """
    _check_order(order)
    p = as_pattern(pattern)
    if p.shape[0] != p.shape[1]:
        raise ValueError(f"a symmetric pattern is square, got shape {p.shape}")
    p = as_pattern(p + p.T)
    graph = _drop_diagonal(p)
    if p.nnz == 0:
        return _checked(Coloring("acyclic", p, np.full(p.shape[0], -1, dtype=np.intp), None,
                                 0, "empty"))
    lower = _acyclic_lower_bound(graph)
    colors, method = _best_greedy(graph, order, lower, acyclic_greedy, postprocess)
    if structure and _count(colors) > lower:
        with_diagonal = as_pattern(p + sp.csr_array(sp.identity(p.shape[0], dtype=bool,
                                                                format="csr")))
        hit = _structured(with_diagonal, lower, grid)
        if hit is not None and _count(hit[0]) < _count(colors):
            colors, method = hit
    return _checked(Coloring("acyclic", p, colors, None, lower, method))
