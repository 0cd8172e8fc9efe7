"""Colorings of sparsity patterns and their decompression maps (dualad/sparse).

Every coloring is checked by checkers written plainly here (loops over the
entries, independent of the library's vectorized check), and every
decompression map by a round trip: a random matrix with the pattern,
compressed by the coloring with NumPy, decompressed, compared exactly.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

sp = pytest.importorskip("scipy.sparse")

from dualad.sparse import coloring as C  # noqa: E402
from dualad.sparse.decompress import column_seeds, decompression, row_seeds  # noqa: E402

ORDERS = (*C.ORDERS, "best")


# -- plain checkers ----------------------------------------------------------------------


def entries(pattern):
    """The nonzeros (r, c) of a pattern, as a Python list."""
    a = sp.coo_array(C.as_pattern(pattern))
    return list(zip(a.row.tolist(), a.col.tolist(), strict=True))


def columns_ok(pattern, colors):
    """No two columns of one color share a row; every column in a row is colored."""
    by_row = {}
    for r, c in entries(pattern):
        by_row.setdefault(r, []).append(c)
    for cols in by_row.values():
        seen = [colors[c] for c in cols]
        if min(seen) < 0 or len(set(seen)) != len(seen):
            return False
    return True


def bidirectional_ok(pattern, col_colors, row_colors):
    """Each nonzero alone in its row among the seeded columns of its color, or
    alone in its column among the seeded rows of its color (None: no seeds)."""
    m, n = C.as_pattern(pattern).shape
    col_colors = [-1] * n if col_colors is None else col_colors
    row_colors = [-1] * m if row_colors is None else row_colors
    e = entries(pattern)
    for r, c in e:
        k = col_colors[c]
        by_col = k >= 0 and all(cc == c or col_colors[cc] != k for rr, cc in e if rr == r)
        k = row_colors[r]
        by_row = k >= 0 and all(rr == r or row_colors[rr] != k for rr, cc in e if cc == c)
        if not (by_col or by_row):
            return False
    return True


def star_ok(pattern, colors):
    """A proper coloring of the adjacency graph in which every path on four
    vertices has at least three colors."""
    n = pattern.shape[0]
    adj = [set() for _ in range(n)]
    for r, c in entries(pattern):
        if r != c:
            adj[r].add(c)
            adj[c].add(r)
    for v in range(n):
        if any(colors[v] == colors[w] for w in adj[v]):
            return False
    for a in range(n):
        for b in adj[a]:
            for c in adj[b] - {a}:
                for d in adj[c] - {a, b}:
                    if len({colors[a], colors[b], colors[c], colors[d]}) < 3:
                        return False
    return True


def acyclic_ok(pattern, colors):
    """A proper coloring of the adjacency graph whose two-colored subgraphs are
    forests: for each pair of colors, no edge between them closes a cycle."""
    e = [(r, c) for r, c in entries(pattern) if r < c]
    if any(colors[r] == colors[c] for r, c in e):
        return False
    if any(colors[r] < 0 for r, _ in entries(pattern)):
        return False
    for a, b in itertools.combinations(sorted(set(colors.tolist())), 2):
        root = {}

        def find(v, root=root):
            while root.get(v, v) != v:
                v = root[v]
            return v

        for r, c in e:
            if {colors[r], colors[c]} == {a, b}:
                x, y = find(r), find(c)
                if x == y:
                    return False
                root[x] = y
    return True


def random_values(pattern, rng):
    """A dense matrix with the pattern, its nonzeros random (and nonzero)."""
    p = C.as_pattern(pattern)
    dense = np.zeros(p.shape)
    for r, c in entries(p):
        dense[r, c] = rng.uniform(1, 2) * rng.choice([-1, 1])
    return dense


def compress_columns(dense, colors):
    """B[k, r] = sum of dense[r, c] over the columns c of color k."""
    k = max(int(colors.max(initial=-1)) + 1, 0)
    out = np.zeros((k, dense.shape[0]))
    for c, color in enumerate(colors.tolist()):
        if color >= 0:
            out[color] += dense[:, c]
    return out


def round_trip(coloring, rng, layout="csr"):
    """Whether decompressing the NumPy-compressed products gives the matrix back:
    exactly where each nonzero is read directly, to rounding where acyclic
    colorings substitute."""
    p = coloring.pattern
    dense = random_values(p, rng)
    if coloring.kind in ("symmetric", "acyclic"):
        dense = dense + dense.T
    products = []
    if coloring.column_colors is not None and coloring.ncolumn_colors:
        products.append(compress_columns(dense, coloring.column_colors))
    if coloring.row_colors is not None and coloring.nrow_colors:
        products.append(compress_columns(dense.T, coloring.row_colors))
    got = decompression(coloring, layout)(*products)
    assert got.format == layout
    if coloring.kind == "acyclic":
        return np.allclose(got.toarray(), dense, rtol=0, atol=1e-12 * p.shape[0])
    return np.array_equal(got.toarray(), dense)


def densest_row(pattern):
    return max(np.count_nonzero(np.asarray(C.as_pattern(pattern).todense()), axis=1), default=0)


# -- patterns ------------------------------------------------------------------------------


def stencil5(n1, n2):
    """The 5-point stencil on an n1 x n2 grid (row-major), Dirichlet boundary."""
    idx = np.arange(n1 * n2).reshape(n1, n2)
    rows, cols = [idx.ravel()], [idx.ravel()]
    for a, b in ((idx[1:], idx[:-1]), (idx[:, 1:], idx[:, :-1])):
        rows += [a.ravel(), b.ravel()]
        cols += [b.ravel(), a.ravel()]
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((np.ones(r.size, dtype=bool), (r, c)), shape=(n1 * n2,) * 2)


def stencil9(n1, n2):
    """The 9-point stencil (a 3 x 3 block around each point)."""
    i, j = np.divmod(np.arange(n1 * n2), n2)
    rows, cols = [], []
    for di, dj in itertools.product((-1, 0, 1), repeat=2):
        ok = (0 <= i + di) & (i + di < n1) & (0 <= j + dj) & (j + dj < n2)
        rows.append(np.flatnonzero(ok))
        cols.append(((i + di) * n2 + j + dj)[ok])
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_array((np.ones(r.size, dtype=bool), (r, c)), shape=(n1 * n2,) * 2)


def band(m, n, lower, upper):
    """Every (r, c) with -lower <= c - r <= upper."""
    r, c = np.indices((m, n))
    return sp.csr_array((c - r >= -lower) & (c - r <= upper))


def arrowhead(n):
    a = np.eye(n, dtype=bool)
    a[0, :] = a[:, 0] = True
    return sp.csr_array(a)


def rosenbrock_residuals(n):
    """The pattern of r_(2i) = 10 (x_(i+1) - x_i^2), r_(2i+1) = 1 - x_i."""
    rows = np.arange(2 * (n - 1))
    i = rows // 2
    r = np.concatenate([rows, rows[::2]])
    c = np.concatenate([i, i[::2] + 1])
    return sp.csr_array((np.ones(r.size, dtype=bool), (r, c)), shape=(2 * (n - 1), n))


@st.composite
def patterns(draw, square=False, max_side=14):
    m = draw(st.integers(0, max_side))
    n = m if square else draw(st.integers(0, max_side))
    density = draw(st.floats(0.0, 0.6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dense = rng.random((m, n)) < density
    if square and draw(st.booleans()):
        dense |= np.eye(n, dtype=bool)
    return sp.csr_array(dense)


# -- random patterns -----------------------------------------------------------------------


@given(patterns(), st.sampled_from(ORDERS), st.booleans(), st.integers(0, 2**32 - 1))
def test_column_coloring_random(p, order, postprocess, seed):
    col = C.column_coloring(p, order, postprocess=postprocess)
    assert columns_ok(p, col.column_colors)
    assert col.ncolors >= col.lower_bound == densest_row(p)
    assert round_trip(col, np.random.default_rng(seed))
    assert round_trip(col, np.random.default_rng(seed), "csc")


@given(patterns(), st.sampled_from(ORDERS), st.integers(0, 2**32 - 1))
def test_row_coloring_random(p, order, seed):
    row = C.row_coloring(p, order)
    assert columns_ok(sp.csr_array(p.T), row.row_colors)
    assert row.ncolors >= row.lower_bound == densest_row(sp.csr_array(p.T))
    assert round_trip(row, np.random.default_rng(seed))


@given(patterns(max_side=10), st.sampled_from(ORDERS), st.integers(0, 2**32 - 1))
def test_bidirectional_coloring_random(p, order, seed):
    bi = C.bidirectional_coloring(p, order)
    assert bidirectional_ok(p, bi.column_colors, bi.row_colors)
    assert bi.kind == "bidirectional" or bi.ncolors == (bi.nrow_colors or bi.ncolumn_colors)
    # never worse than a column or a row coloring alone
    assert bi.ncolors <= min(C.column_coloring(p, order).ncolors, C.row_coloring(p, order).ncolors)
    assert bi.ncolors >= bi.lower_bound
    assert round_trip(bi, np.random.default_rng(seed))
    assert round_trip(bi, np.random.default_rng(seed), "csc")


@given(patterns(square=True), st.sampled_from(ORDERS), st.booleans(), st.integers(0, 2**32 - 1))
def test_symmetric_coloring_random(p, order, structure, seed):
    sym = C.symmetric_coloring(p, order, structure=structure)
    assert star_ok(sym.pattern, sym.column_colors)
    assert (sym.pattern != sym.pattern.T).nnz == 0
    assert (C.as_pattern(p) > sym.pattern).nnz == 0  # (the pattern's entries all kept)
    assert sym.ncolors >= sym.lower_bound
    assert round_trip(sym, np.random.default_rng(seed))
    assert round_trip(sym, np.random.default_rng(seed), "csc")


@pytest.mark.parametrize("seed", range(5))
def test_greedy_orders_and_recolor(seed):
    """Each order is a permutation; greedy needs at most max degree + 1 colors
    in any order; iterated greedy never needs more colors than it started with."""
    rng = np.random.default_rng(seed)
    p = sp.csr_array(rng.random((40, 30)) < 0.1)
    g = C.column_graph(p)
    maxdeg = int(np.diff(g.indptr).max())
    for name in C.ORDERS:
        order = C.order(g, name)
        assert sorted(order.tolist()) == list(range(30))
        colors = C.greedy(g, order)
        assert columns_ok(p, colors)
        assert colors.max() + 1 <= maxdeg + 1
        again = C.recolor(g, colors)
        assert columns_ok(p, again) and again.max() <= colors.max()
    with pytest.raises(ValueError, match="unknown order"):
        C.order(g, "random")
    for fn in (C.column_coloring, C.row_coloring, C.bidirectional_coloring,
               C.symmetric_coloring, C.acyclic_coloring):
        with pytest.raises(ValueError, match="unknown order"):
            fn(band(6, 6, 1, 1), "largest-first")  # (even where structure would answer)


def test_smallest_last_order_on_a_tree():
    """Smallest-last colors a tree (degeneracy 1) in 2 colors."""
    rng = np.random.default_rng(0)
    n = 60
    parent = [int(rng.integers(0, v)) for v in range(1, n)]
    a = np.zeros((n, n), dtype=bool)
    a[np.arange(1, n), parent] = a[parent, np.arange(1, n)] = True
    g = C.adjacency_graph(a)
    colors = C.greedy(g, C.order(g, "smallest_last"))
    assert colors.max() + 1 == 2


# -- structure -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(10, 10), (17, 9), (30, 31), (7, 40)])
def test_stencil5_gets_5_colors(shape):
    p = stencil5(*shape)
    for grid in (None, shape):
        col = C.column_coloring(p, grid=grid)
        assert col.ncolors == 5 == col.lower_bound
        assert columns_ok(p, col.column_colors)
        assert round_trip(col, np.random.default_rng(1))
    # greedy alone takes more in some order: the structure is what gets 5
    assert C.column_coloring(p, "natural", structure=False).ncolors >= 5


def test_stencil5_300x300():
    """The scale of issue 31's Bratu example (n = 90,000): 5 colors, each row's
    five columns distinct (checked row by row)."""
    p = stencil5(300, 300)
    col = C.column_coloring(p)
    assert col.ncolors == 5 and col.method == "stencil"
    colors = col.column_colors
    for r in range(p.shape[0]):
        cols = p.indices[p.indptr[r]:p.indptr[r + 1]]
        assert len(set(colors[cols].tolist())) == cols.size


def test_stencil9_gets_9_colors():
    p = stencil9(12, 15)
    col = C.column_coloring(p)
    assert col.ncolors == 9 == col.lower_bound
    assert columns_ok(p, col.column_colors)


def test_stencil_with_wrapping_rows_stays_valid():
    """Flat offsets +-1 without the grid's boundary: not a stencil on the grid
    (entries wrap to the next grid row), so whatever coloring comes is checked."""
    n = 64
    r, c = np.indices((n, n))
    p = sp.csr_array(np.isin(c - r, (-8, -1, 0, 1, 8)))
    for grid in (None, (8, 8)):
        col = C.column_coloring(p, grid=grid)
        assert columns_ok(p, col.column_colors)
        assert round_trip(col, np.random.default_rng(2))


@pytest.mark.parametrize("m, n, lower, upper", [(50, 50, 1, 1), (40, 40, 0, 3), (60, 60, 2, 5),
                                                (30, 45, 2, 7), (200, 200, 4, 4)])
def test_band_gets_bandwidth_plus_one(m, n, lower, upper):
    p = band(m, n, lower, upper)
    col = C.column_coloring(p)
    assert col.ncolors == lower + upper + 1 == col.lower_bound
    assert columns_ok(p, col.column_colors)
    row = C.row_coloring(p)
    assert row.ncolors == lower + upper + 1
    assert round_trip(col, np.random.default_rng(3)) and round_trip(row, np.random.default_rng(3))
    if m == n:
        sym = C.symmetric_coloring(p)  # (made symmetric: half-width max(lower, upper))
        assert sym.ncolors <= 2 * max(lower, upper) + 1
        assert star_ok(sym.pattern, sym.column_colors)


def test_rosenbrock_residuals_two_colors():
    p = rosenbrock_residuals(101)
    col = C.column_coloring(p)
    assert col.ncolors == 2 == col.lower_bound
    assert columns_ok(p, col.column_colors)
    assert round_trip(col, np.random.default_rng(4))


def test_arrowhead_bicolored():
    n = 40
    p = arrowhead(n)
    assert C.column_coloring(p).ncolors == n
    assert C.row_coloring(p).ncolors == n
    bi = C.bidirectional_coloring(p)
    assert bi.ncolors <= 3
    assert bidirectional_ok(p, bi.column_colors, bi.row_colors)
    assert round_trip(bi, np.random.default_rng(5))
    # a symmetric arrowhead (a Hessian) is a star: two colors
    sym = C.symmetric_coloring(p)
    assert sym.ncolors == 2 == sym.lower_bound
    assert round_trip(sym, np.random.default_rng(5))


def test_arrowhead_transposed_and_rectangular():
    """A dense row and a dense column of a rectangular matrix, with a band."""
    p = band(30, 20, 1, 1).toarray()
    p[3, :] = True
    p[:, 5] = True
    bi = C.bidirectional_coloring(p)
    assert bi.ncolors <= 5
    assert bidirectional_ok(p, bi.column_colors, bi.row_colors)
    assert round_trip(bi, np.random.default_rng(6))
    bt = C.bidirectional_coloring(p.T)
    assert bt.ncolors == bi.ncolors
    assert round_trip(bt, np.random.default_rng(6))


def test_symmetric_tridiagonal_and_stencil():
    p = band(30, 30, 1, 1)
    sym = C.symmetric_coloring(p)
    assert sym.ncolors == 3 == sym.lower_bound
    s = stencil5(9, 11)
    sym = C.symmetric_coloring(s)
    assert sym.ncolors <= 5
    assert star_ok(sym.pattern, sym.column_colors)
    assert round_trip(sym, np.random.default_rng(7))


def test_star_coloring_beats_distance2():
    """A star (no diagonal): distance-2 coloring needs n colors, star coloring 2."""
    n = 12
    a = np.zeros((n, n), dtype=bool)
    a[0, 1:] = a[1:, 0] = True
    assert C.column_coloring(a).ncolors == n - 1
    sym = C.symmetric_coloring(a, structure=False)
    assert sym.ncolors == 2
    assert star_ok(a, sym.column_colors) and round_trip(sym, np.random.default_rng(8))


# -- patterns in, maps out ------------------------------------------------------------------


def test_as_pattern():
    dense = np.array([[0.0, 2.0], [0.0, 0.0]])
    assert C.as_pattern(dense).nnz == 1
    # a stored zero is a structural nonzero; duplicates are one entry
    s = sp.coo_array((np.array([0.0, 1.0, 1.0]), (np.array([1, 0, 0]), np.array([0, 1, 1]))),
                     shape=(2, 2))
    p = C.as_pattern(s)
    assert p.dtype == bool and p.nnz == 2 and p.has_sorted_indices
    with pytest.raises(ValueError, match="2-D"):
        C.as_pattern(np.ones(3))


def test_empty_patterns_need_no_products():
    for shape in ((0, 0), (3, 0), (0, 4), (3, 4)):
        p = np.zeros(shape, dtype=bool)
        for fn in (C.column_coloring, C.row_coloring, C.bidirectional_coloring):
            col = fn(p)
            assert col.ncolors == 0
            assert round_trip(col, np.random.default_rng(0))
    sym = C.symmetric_coloring(np.zeros((3, 3)))
    assert sym.ncolors == 0 and round_trip(sym, np.random.default_rng(0))


def test_seeds():
    p = band(6, 8, 1, 1)
    col = C.column_coloring(p)
    s = column_seeds(col)
    assert s.shape == (col.ncolors, 8)
    assert np.array_equal(s.sum(axis=0), np.ones(8))
    assert np.array_equal(s.argmax(axis=0), col.column_colors)
    r = row_seeds(C.row_coloring(p))
    assert r.shape == (C.row_coloring(p).ncolors, 6)
    # the seeds' products are the compressed arrays the maps read
    dense = random_values(p, np.random.default_rng(9))
    assert np.array_equal(decompression(col)(s @ dense.T).toarray(), dense)


def test_invalid_coloring_is_refused():
    p = C.as_pattern(band(5, 5, 1, 1))
    bad = C.Coloring("column", p, np.zeros(5, dtype=np.intp), None, 3, "made up")
    assert not C.is_valid(bad)
    with pytest.raises(ValueError, match="does not separate"):
        decompression(bad)
    bad_sym = C.Coloring("symmetric", C.as_pattern(arrowhead(5) + band(5, 5, 1, 1)),
                         np.array([0, 1, 1, 0, 1]), None, 3, "made up")
    assert not C.is_valid(bad_sym)


def test_decompression_checks_its_inputs():
    col = C.column_coloring(band(6, 6, 1, 1))
    d = decompression(col)
    with pytest.raises(ValueError, match="expected"):
        d(np.zeros((col.ncolors, 5)))
    with pytest.raises(TypeError, match="takes 1"):
        d(np.zeros((col.ncolors, 6)), np.zeros(3))
    with pytest.raises(ValueError, match="layout"):
        decompression(col, "coo")


def test_values_and_structure_forms():
    """The structure (indices, indptr) once and the values per call: IPOPT's two forms."""
    p = rosenbrock_residuals(9)
    col = C.column_coloring(p)
    dense = random_values(p, np.random.default_rng(10))
    b = compress_columns(dense, col.column_colors)
    for layout, ref in (("csr", sp.csr_array(dense)), ("csc", sp.csc_array(dense))):
        d = decompression(col, layout)
        assert np.array_equal(d.indices, ref.indices) and np.array_equal(d.indptr, ref.indptr)
        assert np.array_equal(d.values(b), ref.data)


def test_bidirectional_falls_back_to_one_side():
    """Without a dense row and column together, one side is the answer, as such:
    columns on a tie (JVPs are the cheaper product here)."""
    col = C.bidirectional_coloring(band(20, 20, 1, 1))
    assert col.kind == "column" and col.ncolors == 3 and col.row_colors is None
    assert col.lower_bound == 2
    tall = np.zeros((30, 4), dtype=bool)
    tall[:, 0] = True  # a dense column: two VJP colors (row 0's and the rest's)
    tall[np.arange(30), np.arange(30) % 4] = True
    assert C.bidirectional_coloring(tall).kind == "column"  # 4 columns: 2 colors too
    row = C.bidirectional_coloring(tall.T)  # a dense row: VJPs
    assert row.kind == "row" and row.ncolors == 2 and row.column_colors is None
    assert bidirectional_ok(tall.T, row.column_colors, row.row_colors)
    assert round_trip(row, np.random.default_rng(11))
    assert C.bidirectional_coloring(np.eye(4)).lower_bound == 1


# -- acyclic colorings (substitution) ---------------------------------------------------------


@given(patterns(square=True), st.sampled_from(ORDERS), st.booleans(), st.integers(0, 2**32 - 1))
def test_acyclic_coloring_random(p, order, structure, seed):
    acy = C.acyclic_coloring(p, order, structure=structure)
    assert acyclic_ok(acy.pattern, acy.column_colors)
    assert acy.ncolors >= acy.lower_bound
    assert round_trip(acy, np.random.default_rng(seed))
    assert round_trip(acy, np.random.default_rng(seed), "csc")


def test_acyclic_needs_fewer_colors_than_star():
    """A tridiagonal Hessian: acyclic 2 colors (a path is a tree), star 3; the
    5-point stencil: acyclic 4, star 5."""
    p = band(40, 40, 1, 1)
    acy = C.acyclic_coloring(p)
    assert acy.ncolors == 2 == acy.lower_bound
    assert C.symmetric_coloring(p).ncolors == 3
    assert round_trip(acy, np.random.default_rng(12))
    s = stencil5(12, 12)
    acy = C.acyclic_coloring(s)
    assert acy.ncolors == 4 and acy.lower_bound == 3  # (the grid has cycles)
    assert acyclic_ok(s, acy.column_colors) and round_trip(acy, np.random.default_rng(12))
    assert C.symmetric_coloring(s).ncolors == 5


def test_invalid_acyclic_coloring_is_refused():
    """A 4-cycle in two colors is proper but not acyclic: substitution would not know
    where to start."""
    cycle = np.eye(4, dtype=bool)
    for i in range(4):
        cycle[i, (i + 1) % 4] = cycle[(i + 1) % 4, i] = True
    bad = C.Coloring("acyclic", C.as_pattern(cycle), np.array([0, 1, 0, 1]), None, 3, "made up")
    assert not C.is_valid(bad) and not acyclic_ok(cycle, bad.column_colors)
    with pytest.raises(ValueError, match="does not separate"):
        decompression(bad)
    good = C.acyclic_coloring(cycle)
    assert good.ncolors == 3 and round_trip(good, np.random.default_rng(13))


def test_dense_row_skips_the_quadratic_graph():
    """A row over all 5000 columns: its intersection graph would hold 2.5e7 entries
    for nothing (every column needs its own color); bicoloring needs 3."""
    p = arrowhead(5000)
    col = C.column_coloring(p)
    assert col.ncolors == 5000 == col.lower_bound
    assert columns_ok(p, col.column_colors)
    bi = C.bidirectional_coloring(p)
    assert bi.ncolors == 3 and bi.method == "split 1 rows"
    # (the plain checker is quadratic: the same split checked on a smaller arrowhead)
    small = C.bidirectional_coloring(arrowhead(60))
    assert small.method == bi.method
    assert bidirectional_ok(arrowhead(60), small.column_colors, small.row_colors)
