"""Sparse Jacobians and Hessians: colored products, decompressed by index maps.

A Jacobian whose columns split into ``K`` groups that share no row is known
from ``K`` JVPs, however many columns it has: seed ``k`` is the indicator of
the columns of color ``k``, and every nonzero is alone in its row among the
columns of its color. Here the ``K`` seeds are pushed as ONE batched tangent
(``make_dual(x, seeds, batched=True)``), rows likewise as one batched
cotangent, and a Hessian's star or acyclic coloring as one batched
forward-over-reverse pass; ``chunk_size`` bounds how many colors one pass
carries. The products are then read into the pattern's nonzeros by an index
map computed once (:mod:`dualad.sparse.decompress`): one gather, O(nnz).

A prepared object (:func:`prepare_sparse_jacobian`,
:func:`prepare_sparse_hessian`) keeps the pattern, coloring, seeds and index
map for repeated evaluations at new points, gives the structure and values
forms an interior-point solver wants (IPOPT through cyipopt), and with
``check=k`` compares a random product with the sparse result every ``k``
calls: a pattern that no longer covers the function's derivative is an error,
never a wrong Jacobian.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from dualad import forward_ad as fwAD
from dualad import reverse
from dualad.core.grad_mode import enable_grad
from dualad.grad_mode import untracked_tangents
from dualad.numpy import creation
from dualad.reverse.engine import NO_TANGENT, grad_tangents
from dualad.rules.vocabulary import reshape as _reshape  # (not a user's view: no bookkeeping)
from dualad.sparse import coloring as col
from dualad.sparse.coloring import as_pattern
from dualad.sparse.decompress import column_seeds, decompression, row_seeds

from ._common import batched_level_live, check_chunk_size, chunks, is_dual, is_tensor
from ._sparse_tangents import sparse_tangent_jacobian
from ._sparsity import hessian_sparsity, jacobian_sparsity

STRATEGIES = ("auto", "forward", "reverse", "bidirectional")  # (colorings; sparse_jacobian
# also takes "sparse-tangents", which needs no coloring and so has nothing to prepare)
HESSIAN_COLORINGS = ("star", "acyclic")

# A product checked against the sparse result may differ by rounding only: relative to
# |J| |v| (a bound on each entry's rounding that no summation order exceeds by much),
# sqrt(eps) leaves room for long rows and still sees any missing nonzero of ordinary size.
_CHECK_RTOL = float(np.sqrt(np.finfo(np.float64).eps))


# ---------------------------------------------------------------------------
# arguments
# ---------------------------------------------------------------------------


def _point(x: Any, fn_name: str) -> np.ndarray:
    """The point ``x`` as a NumPy array of an inexact dtype (its values only)."""
    if is_tensor(x):
        if x.requires_grad or is_dual(x):
            # the result is a SciPy array: an enclosing transform would see no derivative
            raise TypeError(
                f"{fn_name} returns a SciPy sparse array, which carries no derivatives, but x "
                "is being differentiated (it requires grad or carries a tangent: an enclosing "
                "transform). Pass x.detach() to evaluate the matrix at its value, or use the "
                "dense jacfwd/jacrev/hessian, which compose.")
        x = x.numpy()
    a = np.asarray(x)
    if not isinstance(a, np.ndarray) or a.dtype == object:
        raise TypeError(f"{fn_name} takes x as an array of numbers, got {type(x).__name__}")
    if not np.issubdtype(a.dtype, np.inexact):
        raise TypeError(f"{fn_name} differentiates only floating or complex inputs, but x has "
                        f"dtype {a.dtype}. Pass it as a float array (x.astype(float)).")
    return a


def _pattern(sparsity: Any, detect: str, func: Callable[..., Any], x: np.ndarray) -> Any:
    """The pattern given, or the one detected by ``dualad.functional.<detect>``."""
    if sparsity is not None:
        return as_pattern(sparsity)
    detector = jacobian_sparsity if detect == "jacobian_sparsity" else hessian_sparsity
    return as_pattern(detector(func, creation.as_tensor(x)))


def _check_choice(value: Any, choices: tuple[str, ...], name: str) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def _check_every(check: Any) -> None:
    ok = check is None or (isinstance(check, (int, np.integer)) and not isinstance(check, bool)
                           and check >= 1)
    if not ok:
        raise ValueError(f"check must be None or a positive int (compare a random product "
                         f"with the result every check-th call), got {check!r}")


def _values_of(y: Any, fn_name: str) -> Any:
    """``func``'s result as a Tensor (a constant array is one too)."""
    if is_tensor(y):
        return y
    if isinstance(y, (tuple, list, dict)):
        raise TypeError(f"{fn_name} differentiates a function returning one array, "
                        f"got a {type(y).__name__}")
    return creation.as_tensor(np.asarray(y))


# ---------------------------------------------------------------------------
# the batched passes: compressed products (batch axis first, flattened)
# ---------------------------------------------------------------------------


def _spans(count: int, chunk_size: int | None, batched: bool) -> list[tuple[int, int]]:
    """The seeds each pass carries: chunks of them batched, or one a pass while another
    batched level is live (only one may be: a sparse Jacobian inside jacfwd)."""
    return chunks(count, chunk_size) if batched else [(k, k + 1) for k in range(count)]


def _seed(seeds: np.ndarray, s: int, e: int, shape: tuple[int, ...], batched: bool) -> Any:
    """Seeds ``s:e`` as one batched tangent (cotangent) of ``shape``, or seed ``s`` alone."""
    if batched:
        return creation.as_tensor(np.ascontiguousarray(seeds[s:e].reshape((e - s,) + shape)))
    return creation.as_tensor(seeds[s].reshape(shape))


def jvps(func: Callable[..., Any], x: np.ndarray, seeds: np.ndarray,
         chunk_size: int | None, fn_name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(y, B)``: ``func(x)`` and ``B[k] = J @ seeds[k]`` flattened, ``(K, y.size)``."""
    parts, y = [], None
    batched = not batched_level_live()
    for s, e in _spans(seeds.shape[0], chunk_size, batched) or [(0, 0)]:
        with fwAD.dual_level():
            if e > s:
                xd = fwAD.make_dual(creation.as_tensor(x), _seed(seeds, s, e, x.shape, batched),
                                    batched=batched)
            else:
                xd = creation.as_tensor(x)
            out = _values_of(func(xd), fn_name)
            primal, tangent = fwAD.unpack_dual(out)
            y = np.asarray(primal.numpy())
            if e > s:
                parts.append(np.zeros((e - s, y.size), dtype=y.dtype) if tangent is None
                             else np.asarray(tangent.numpy()).reshape(e - s, y.size))
    b = np.concatenate(parts) if parts else np.zeros((0, y.size), dtype=y.dtype)
    return y, b


def vjps(func: Callable[..., Any], x: np.ndarray, seeds_of: Callable[[int], np.ndarray],
         chunk_size: int | None, fn_name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(y, W)``: ``func(x)`` and ``W[k] = seeds[k] @ J``, ``(K, x.size)``; the seeds
    are made by ``seeds_of(y.size)`` once the output's size is known."""
    with enable_grad():
        leaf = creation.as_tensor(x).detach()
        leaf.requires_grad_(True)
        out = _values_of(func(leaf), fn_name)
        y = np.asarray(out.detach().numpy())
        seeds = seeds_of(y.size).astype(y.dtype, copy=False)
        k = seeds.shape[0]
        if not out.requires_grad or k == 0:
            return y, np.zeros((k, x.size), dtype=x.dtype)
        batched = not batched_level_live()
        parts = []
        for s, e in _spans(k, chunk_size, batched):
            (g,) = reverse.grad([out], [leaf], [_seed(seeds, s, e, y.shape, batched)],
                                retain_graph=True, allow_unused=True, is_grads_batched=batched)
            parts.append(np.zeros((e - s, x.size), dtype=x.dtype) if g is None
                         else np.asarray(g.numpy()).reshape(e - s, x.size))
    return y, np.concatenate(parts)


def hvps(func: Callable[..., Any], x: np.ndarray, seeds: np.ndarray,
         chunk_size: int | None, fn_name: str) -> np.ndarray:
    """``B[k] = H @ seeds[k]``, ``(K, x.size)``: forward-over-reverse, the gradient of
    ``func`` taken on dual inputs that carry the seeds as one batched tangent."""
    batched = not batched_level_live()
    parts = []
    with enable_grad():
        leaf = creation.as_tensor(x).detach()
        leaf.requires_grad_(True)
        for s, e in _spans(seeds.shape[0], chunk_size, batched):
            with fwAD.dual_level() as level, untracked_tangents():
                xd = fwAD.make_dual(leaf, _seed(seeds, s, e, x.shape, batched), batched=batched)
                out = _values_of(func(xd), fn_name)
                if out.size != 1:
                    raise ValueError(f"{fn_name} differentiates a function with one scalar "
                                     f"output, but it returned shape {tuple(out.shape)}")
                g = NO_TANGENT if not out.requires_grad else grad_tangents(
                    out if out.ndim == 0 else _reshape(out, ()), (xd,), level)[0]
                parts.append(np.zeros((e - s, x.size), dtype=x.dtype)
                             if g is None or g is NO_TANGENT
                             else np.asarray(g.numpy()).reshape(e - s, x.size))
    return np.concatenate(parts) if parts else np.zeros((0, x.size), dtype=x.dtype)


# ---------------------------------------------------------------------------
# colorings
# ---------------------------------------------------------------------------


def _jacobian_coloring(p: Any, strategy: str, order: str) -> Any:
    """The coloring ``strategy`` asks for; ``"auto"``: the fewest products.

    A row coloring needs at least as many colors as the densest column has
    entries, so a column coloring at or below that bound skips the row
    coloring (JVPs are this library's cheaper product, so they win ties). A
    bidirectional coloring (several colorings of parts of the pattern) is
    tried only where it can pay: neither side at two colors, and a row or a
    column more than twice as dense as the average one (what splits off).
    """
    if strategy == "forward":
        return col.column_coloring(p, order)
    if strategy == "reverse":
        return col.row_coloring(p, order)
    if strategy == "bidirectional":
        return col.bidirectional_coloring(p, order)
    best = col.column_coloring(p, order)
    per_row = np.diff(p.indptr)
    per_column = np.bincount(p.indices, minlength=p.shape[1])
    if best.ncolors > int(per_column.max(initial=0)):
        by_rows = col.row_coloring(p, order)
        if by_rows.ncolors < best.ncolors:
            best = by_rows
    mean = p.nnz / max(1, min(p.shape))
    if best.ncolors > 2 and max(per_row.max(initial=0), per_column.max(initial=0)) > 2 * mean:
        both = col.bidirectional_coloring(p, order)
        if both.ncolors < best.ncolors:
            best = both
    return best


# ---------------------------------------------------------------------------
# prepared objects
# ---------------------------------------------------------------------------


class _Prepared:
    """What a sparse Jacobian and a sparse Hessian share: the coloring, the index
    map, the structure/values forms and the periodic check."""

    _fn_name = ""

    def __init__(self, func: Callable[..., Any], x: np.ndarray, coloring: Any,
                 chunk_size: int | None, check: int | None) -> None:
        self.func, self.coloring = func, coloring
        self.shape, self.dtype = x.shape, x.dtype
        self.chunk_size, self.check = chunk_size, check
        self._map = decompression(coloring)
        self._calls = 0
        self._rng = np.random.default_rng(0)

    @property
    def sparsity(self) -> Any:
        """The pattern (a boolean ``scipy.sparse.csr_array``)."""
        return self.coloring.pattern

    @property
    def ncolors(self) -> int:
        """The number of products one evaluation computes (JVPs, VJPs or HVPs)."""
        return self.coloring.ncolors

    @property
    def lower_bound(self) -> int:
        """No coloring of this kind needs fewer products (the densest row, for columns)."""
        return self.coloring.lower_bound

    def structure(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cols)`` of the nonzeros, in the order :meth:`values` gives them (CSR)."""
        p = self.coloring.pattern
        rows = np.repeat(np.arange(p.shape[0], dtype=np.intp), np.diff(p.indptr))
        return rows, p.indices.astype(np.intp)

    def values(self, x: Any) -> np.ndarray:
        """The nonzeros at ``x``, in the order of :meth:`structure`."""
        a = _point(x, self._fn_name)
        if a.shape != self.shape:
            raise ValueError(f"this {type(self).__name__} was prepared for x of shape "
                             f"{self.shape}, got shape {a.shape}; prepare another for it")
        vals = self._map.values(*self._compressed(a))
        self._calls += 1
        if self.check is not None and (self._calls - 1) % self.check == 0:
            self._verify(a, vals)
        return vals

    def __call__(self, x: Any) -> Any:
        """The matrix at ``x`` as a ``scipy.sparse.csr_array``."""
        p = self.coloring.pattern
        return sp.csr_array((self.values(x), p.indices.copy(), p.indptr.copy()), shape=p.shape)

    def _verify(self, x: np.ndarray, vals: np.ndarray) -> None:
        """Compare a random product of the pattern's matrix with one computed directly."""
        p = self.coloring.pattern
        mat = sp.csr_array((vals, p.indices, p.indptr), shape=p.shape)
        size = p.shape[0] if self._by_rows() else p.shape[1]
        v = self._rng.standard_normal(size)
        if np.iscomplexobj(vals) or np.iscomplexobj(x):
            v = v + 1j * self._rng.standard_normal(size)
        got = mat.T @ v if self._by_rows() else mat @ v
        scale = (abs(mat).T @ abs(v)) if self._by_rows() else (abs(mat) @ abs(v))
        want = self._direct(x, v)
        bad = np.abs(got - want) > _CHECK_RTOL * (scale + np.abs(want)) + np.finfo(float).tiny
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise RuntimeError(
                f"{type(self).__name__} check failed at call {self._calls}: a random "
                f"{self._product_name()} differs from the sparse result's product at entry {i} "
                f"({want[i]!r} directly, {got[i]!r} from the sparse matrix). The pattern no "
                "longer covers the function's derivative: most likely its structure changed "
                "since the pattern was found (a branch on x, a different size, an edited "
                "function). Prepare again at this point (or pass a pattern that covers "
                "every point)."
            )

    def __repr__(self) -> str:
        p = self.coloring.pattern
        return (f"{type(self).__name__}(shape={p.shape}, nnz={p.nnz}, ncolors={self.ncolors}, "
                f"lower_bound={self.lower_bound}, kind={self.coloring.kind!r})")


class SparseJacobian(_Prepared):
    """A sparse Jacobian prepared for repeated evaluation (see :func:`prepare_sparse_jacobian`).

    Attributes
    ----------
    sparsity : scipy.sparse.csr_array
        The pattern, ``(func(x).size, x.size)``, rows and columns of the flattened
        (C order) output and input.
    coloring : dualad.sparse.coloring.Coloring
        Its coloring: kind ``"column"`` (JVPs), ``"row"`` (VJPs) or ``"bidirectional"``.
    ncolors, lower_bound : int
        Products per evaluation, and the fewest any coloring of that kind needs.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> J = F.prepare_sparse_jacobian(lambda x: x ** 2, np.ones(3), np.eye(3))
    >>> J
    SparseJacobian(shape=(3, 3), nnz=3, ncolors=1, lower_bound=1, kind='column')
    >>> J.structure()
    (array([0, 1, 2]), array([0, 1, 2]))
    >>> J.values(np.array([1.0, 2.0, 3.0]))
    array([2., 4., 6.])
    """

    _fn_name = "sparse_jacobian"

    def __init__(self, func: Callable[..., Any], x: np.ndarray, coloring: Any,
                 chunk_size: int | None, check: int | None, chose: bool) -> None:
        super().__init__(func, x, coloring, chunk_size, check)
        self._chose = chose  # (the strategy was "auto")
        self._column_seeds = column_seeds(coloring, x.dtype)
        self._row_seeds = row_seeds(coloring)

    def _by_rows(self) -> bool:
        return self.coloring.kind == "row"

    def _product_name(self) -> str:
        return "vector-Jacobian product" if self._by_rows() else "Jacobian-vector product"

    def _check_output(self, y: np.ndarray) -> None:
        m = self.coloring.pattern.shape[0]
        if y.size != m:
            raise ValueError(f"func returned {y.size} elements at this x, but the pattern has "
                             f"{m} rows (one per element of the output); its structure changed: "
                             "prepare again (or pass a pattern of the right shape)")

    def _check_complex(self, y: np.ndarray) -> None:
        """Reverse mode's rows of a complex function follow another convention (conjugate
        Wirtinger gradients, as ``jacrev``) than forward mode's columns (``jacfwd``):
        mixing both, or switching to rows unasked, would give neither matrix."""
        kind = self.coloring.kind
        complex_ = np.iscomplexobj(y) or np.iscomplexobj(self._column_seeds)
        if complex_ and (kind == "bidirectional" or (self._chose and kind == "row")):
            raise ValueError(
                "this function is complex-valued, and the coloring chosen needs reverse-mode "
                "products, whose rows follow jacrev's convention, not jacfwd's: pass "
                "strategy='forward' (jacfwd's matrix) or strategy='reverse' (jacrev's)")

    def _compressed(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        kind, out = self.coloring.kind, []
        if kind != "row":
            y, b = jvps(self.func, x, self._column_seeds, self.chunk_size, self._fn_name)
            self._check_output(y)
            self._check_complex(y)
            out.append(b)
        if kind != "column":
            y, w = vjps(self.func, x, lambda m: self._row_seeds, self.chunk_size, self._fn_name)
            self._check_output(y)
            self._check_complex(y)
            out.append(w)
        return tuple(part for part in out if part.shape[0])

    def _direct(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        if self._by_rows():
            return vjps(self.func, x, lambda m: v[None], None, self._fn_name)[1][0]
        return jvps(self.func, x, v[None].astype(x.dtype), None, self._fn_name)[1][0]


class SparseHessian(_Prepared):
    """A sparse Hessian prepared for repeated evaluation (see :func:`prepare_sparse_hessian`).

    Attributes
    ----------
    sparsity : scipy.sparse.csr_array
        The (symmetric) pattern, ``(x.size, x.size)``.
    coloring : dualad.sparse.coloring.Coloring
        Its symmetric coloring: kind ``"symmetric"`` (star) or ``"acyclic"``.
    ncolors, lower_bound : int
        HVPs per evaluation, and the fewest any coloring of that kind needs.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> H = F.prepare_sparse_hessian(lambda x: (x ** 4).sum(), np.ones(3), np.eye(3))
    >>> H.ncolors
    1
    >>> H.values(np.array([1.0, 2.0, 3.0]))
    array([ 12.,  48., 108.])
    """

    _fn_name = "sparse_hessian"

    def __init__(self, func: Callable[..., Any], x: np.ndarray, coloring: Any,
                 chunk_size: int | None, check: int | None) -> None:
        super().__init__(func, x, coloring, chunk_size, check)
        self._seeds = column_seeds(coloring, x.dtype)

    def _by_rows(self) -> bool:
        return False

    def _product_name(self) -> str:
        return "Hessian-vector product"

    def _compressed(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        b = hvps(self.func, x, self._seeds, self.chunk_size, self._fn_name)
        return (b,) if b.shape[0] else ()

    def _direct(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        return hvps(self.func, x, v[None].astype(x.dtype), None, self._fn_name)[0]


# ---------------------------------------------------------------------------
# the public functions
# ---------------------------------------------------------------------------


def prepare_sparse_jacobian(func: Callable[..., Any], x: Any, sparsity: Any = None, *,
                            strategy: str = "auto", coloring_order: str = "best",
                            chunk_size: int | None = None,
                            check: int | None = None) -> SparseJacobian:
    """Prepare a sparse Jacobian of ``func`` for repeated evaluation at new points.

    The pattern (given, or detected at ``x`` by :func:`jacobian_sparsity`), its
    coloring, the seeds and the index map are computed once; each call then
    costs one batched pass per chunk of colors and one gather.

    Parameters
    ----------
    func : callable
        One array in (of ``x``'s shape), one array out.
    x : array_like or Tensor
        A point (its values; floating or complex).
    sparsity : array_like or scipy sparse, (func(x).size, x.size), optional
        The pattern: its stored (or nonzero) entries are the Jacobian's possible
        nonzeros, over the flattened (C order) output and input. It must hold
        at every point evaluated (``check`` tests that).
    strategy : {"auto", "forward", "reverse", "bidirectional"}
        JVPs of a column coloring, VJPs of a row coloring, both (a star
        bicoloring, for a dense row beside a dense column), or whichever needs
        the fewest products (JVPs on a tie; never rows for a complex input).
    coloring_order : {"best", "natural", "largest_first", "smallest_last", "incidence_degree"}
        Greedy's vertex order (``"best"``: each, keeping the fewest colors).
    chunk_size : int, optional
        At most this many colors per batched pass (memory grows with it).
    check : int, optional
        On calls 1, ``check + 1``, ``2 check + 1``, ...: compare a random JVP
        (VJP for a row coloring) with the result's product, and raise
        RuntimeError if they differ beyond rounding (a stale pattern).

    Returns
    -------
    SparseJacobian
        ``J(x)`` a ``scipy.sparse.csr_array``; ``J.structure()`` the rows and
        columns of its nonzeros, ``J.values(x)`` their values in that order;
        ``J.ncolors``, ``J.lower_bound``, ``J.sparsity``, ``J.coloring``.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> f = lambda x: x[1:] * x[:-1]
    >>> pattern = np.eye(4, 5) + np.eye(4, 5, k=1)  # (or a SciPy sparse array)
    >>> J = F.prepare_sparse_jacobian(f, np.ones(5), pattern)
    >>> J.ncolors
    2
    >>> J(np.arange(5.0)).toarray()
    array([[1., 0., 0., 0., 0.],
           [0., 2., 1., 0., 0.],
           [0., 0., 3., 2., 0.],
           [0., 0., 0., 4., 3.]])
    """
    a = _point(x, "prepare_sparse_jacobian")
    if strategy == "sparse-tangents":
        raise ValueError("prepare_sparse_jacobian: strategy='sparse-tangents' has nothing to "
                         "prepare (no pattern, no coloring); call sparse_jacobian(func, x, "
                         "strategy='sparse-tangents') at each point")
    _check_choice(strategy, STRATEGIES, "strategy")
    check_chunk_size(chunk_size)
    _check_every(check)
    p = _pattern(sparsity, "jacobian_sparsity", func, a)
    if p.shape[1] != a.size:
        raise ValueError(f"the pattern has shape {p.shape}, but x has {a.size} elements: its "
                         "columns are x's elements (flattened), its rows the output's")
    chose = strategy == "auto"
    if chose and np.iscomplexobj(a):
        strategy = "forward"  # (rows would follow jacrev's convention)
    coloring = _jacobian_coloring(p, strategy, coloring_order)
    return SparseJacobian(func, a, coloring, chunk_size, check, chose)


def sparse_jacobian(func: Callable[..., Any], x: Any, sparsity: Any = None, *,
                    strategy: str = "auto", coloring_order: str = "best",
                    chunk_size: int | None = None) -> Any:
    """The Jacobian of ``func`` at ``x`` as a SciPy sparse array, from colored products.

    ``prepare_sparse_jacobian(func, x, sparsity, ...)(x)``: the parameters are
    those of :func:`prepare_sparse_jacobian` (prepare once to evaluate at many
    points). Equal to ``jacfwd(func)(x)`` reshaped to ``(func(x).size, x.size)``
    (``jacrev``'s for ``strategy="reverse"`` and a complex function).

    ``strategy="sparse-tangents"`` needs no pattern and no coloring: the
    identity is pushed as one SciPy sparse tangent through the elementwise,
    linear and reduction families, which gives the Jacobian directly; a
    primitive outside them raises, pointing back to the colorings.

    Returns
    -------
    scipy.sparse.csr_array
        ``(func(x).size, x.size)``, the pattern's entries stored (zeros included).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> import dualad.functional as F
    >>> J = F.sparse_jacobian(lambda x: np.sin(x) * 2, np.zeros(3), sp.eye_array(3))
    >>> J.toarray()
    array([[2., 0., 0.],
           [0., 2., 0.],
           [0., 0., 2.]])
    """
    if strategy == "sparse-tangents":
        if sparsity is not None:
            raise ValueError("sparse_jacobian: strategy='sparse-tangents' finds the pattern "
                             "itself (it is the result's); pass sparsity=None, or pick a "
                             "coloring strategy to use the pattern given")
        return sparse_tangent_jacobian(func, x)
    return prepare_sparse_jacobian(func, x, sparsity, strategy=strategy,
                                   coloring_order=coloring_order, chunk_size=chunk_size)(x)


def prepare_sparse_hessian(func: Callable[..., Any], x: Any, sparsity: Any = None, *,
                           coloring: str = "star", coloring_order: str = "best",
                           chunk_size: int | None = None,
                           check: int | None = None) -> SparseHessian:
    """Prepare a sparse Hessian of a scalar ``func`` for repeated evaluation.

    Parameters
    ----------
    func : callable
        One real array in (of ``x``'s shape), one scalar out.
    x : array_like or Tensor
        A point (real).
    sparsity : array_like or scipy sparse, (x.size, x.size), optional
        The pattern (symmetrized); detected at ``x`` by
        :func:`hessian_sparsity` if not given.
    coloring : {"star", "acyclic"}
        A star coloring reads each nonzero directly from one HVP; an acyclic
        one needs fewer HVPs (a tridiagonal Hessian: 2, not 3) and recovers
        the nonzeros by substitution (a triangular solve factored once).
    coloring_order, chunk_size, check
        As :func:`prepare_sparse_jacobian` (the check compares a random HVP).

    Returns
    -------
    SparseHessian
        ``H(x)`` a symmetric ``scipy.sparse.csr_array``; ``structure``,
        ``values``, ``ncolors``, ``lower_bound`` as for a sparse Jacobian.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> f = lambda x: ((x[1:] - x[:-1]) ** 2).sum()
    >>> pattern = np.eye(4) + np.eye(4, k=1) + np.eye(4, k=-1)
    >>> H = F.prepare_sparse_hessian(f, np.zeros(4), pattern)
    >>> H.ncolors
    3
    >>> H(np.zeros(4)).toarray()
    array([[ 2., -2.,  0.,  0.],
           [-2.,  4., -2.,  0.],
           [ 0., -2.,  4., -2.],
           [ 0.,  0., -2.,  2.]])
    """
    a = _point(x, "prepare_sparse_hessian")
    if np.iscomplexobj(a):
        raise TypeError("sparse_hessian takes a real x (a complex one has no symmetric "
                        "Hessian to color); for complex inputs use dualad.functional.hessian")
    _check_choice(coloring, HESSIAN_COLORINGS, "coloring")
    check_chunk_size(chunk_size)
    _check_every(check)
    p = _pattern(sparsity, "hessian_sparsity", func, a)
    if p.shape != (a.size, a.size):
        raise ValueError(f"the Hessian's pattern has shape {p.shape}, but x has {a.size} "
                         f"elements: expected ({a.size}, {a.size})")
    make = col.symmetric_coloring if coloring == "star" else col.acyclic_coloring
    return SparseHessian(func, a, make(p, coloring_order), chunk_size, check)


def sparse_hessian(func: Callable[..., Any], x: Any, sparsity: Any = None, *,
                   coloring: str = "star", coloring_order: str = "best",
                   chunk_size: int | None = None) -> Any:
    """The Hessian of a scalar ``func`` at ``x`` as a SciPy sparse array, from batched HVPs.

    ``prepare_sparse_hessian(func, x, sparsity, ...)(x)``; parameters as
    :func:`prepare_sparse_hessian`. All colors' HVPs are one batched
    forward-over-reverse pass (per chunk).

    Returns
    -------
    scipy.sparse.csr_array
        ``(x.size, x.size)``, symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> import dualad.functional as F
    >>> H = F.sparse_hessian(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]), sp.eye_array(2))
    >>> H.toarray()
    array([[ 6.,  0.],
           [ 0., 12.]])
    """
    return prepare_sparse_hessian(func, x, sparsity, coloring=coloring,
                                  coloring_order=coloring_order, chunk_size=chunk_size)(x)
