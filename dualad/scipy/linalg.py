"""``dualad.scipy.linalg``: ``scipy.linalg``'s functions for Tensors (differentiable in both modes).

Most functions are compositions of ``dualad.numpy`` operations (``solve``, ``cholesky``,
``eigh``, matrix products, triangular masks), so their derivatives of every order come
from those operations' rules:

* ``solve_triangular`` solves with the triangle it reads (the other one masked to zero),
  so its derivative in ``a`` lives on that triangle alone, as SciPy's values do.
* ``lu_factor`` takes its row pivots from SciPy (piecewise constant: they carry no
  derivative) and eliminates the permuted matrix with dualad operations, the same
  elimination LAPACK performs with those pivots.
* ``expm`` is the scaling-and-squaring Padé approximant of degree 13; the derivative of
  that approximant is the same approximant of the Fréchet derivative, exact to rounding.

``sqrtm`` and ``logm`` are primitives whose values are SciPy's: their JVP solves the
linear equation their inverse function's Fréchet derivative defines (``X dX + dX X = dA``
for the square root, ``L_exp(X, dX) = dA`` for the logarithm) in its Kronecker form,
an ``n^2 x n^2`` system. They are meant for small matrices; the system is singular, and
the derivative raises ``LinAlgError``, exactly where the function is not differentiable.

SciPy's ``overwrite_*`` and ``check_finite`` arguments are accepted and ignored: a Tensor is
never overwritten, and non-finite values propagate as NumPy's do.

>>> import dualad as da
>>> from dualad.scipy import linalg
>>> linalg.expm(da.tensor([[0.0, 1.0], [0.0, 0.0]]))
tensor([[1., 1.],
        [0., 1.]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy as dnp
from ..core.dispatch import Primitive, apply
from ..core.tensor import Tensor
from ..rules.linalg import LinAlgError, _carries_derivative
from ..rules.taylor import Rule, Series, _sum
from ..rules.taylor import register as register_taylor_rules
from . import _require

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu_factor", "lu_solve",
           "expm", "sqrtm", "logm", "block_diag", "inv", "det", "solve", "eigh", "LinAlgError"]


def _scipy_linalg() -> Any:
    return _require("scipy.linalg", "dualad.scipy.linalg (for this function)")


def _mT(x: Any) -> Any:
    return dnp.swapaxes(x, -1, -2)


def _mH(x: Any) -> Any:
    return dnp.conj(_mT(x))


def _trans(trans: Any) -> int:
    codes = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}
    if trans not in codes:
        raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
    return codes[trans]


def _as_float(a: Tensor) -> Any:
    # (integer and boolean matrices are solved in float64, as SciPy's LAPACK calls do)
    return a if a.dtype.kind in "fc" else a.astype(np.float64)



# -- triangular and Cholesky solves ----------------------------------------------------------


def _triangle(a: Any, lower: bool, unit_diagonal: bool) -> Any:
    """The triangular matrix LAPACK reads from ``a`` (the other triangle ignored)."""
    if unit_diagonal:
        n = a.shape[-1]
        strict = dnp.tril(a, -1) if lower else dnp.triu(a, 1)
        return strict + dnp.eye(n, dtype=a.dtype)
    return dnp.tril(a) if lower else dnp.triu(a)


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    """Solve ``a x = b`` for a triangular ``a``, ``scipy.linalg.solve_triangular``.

    Only the triangle of ``a`` that ``lower`` names is read (and, with ``unit_diagonal``, not
    its diagonal), so the derivative in ``a`` is zero on the rest, as the values are
    independent of it. The solve is ``numpy.linalg.solve`` of that triangle: O(n^3), where
    LAPACK's triangular solve is O(n^2), in exchange for its derivative rules.

    Parameters
    ----------
    a : (..., M, M) Tensor or array_like
    b : (..., M) or (..., M, K) Tensor or array_like
    trans : {0, 1, 2, 'N', 'T', 'C'}
        Solve ``a x = b``, ``a^T x = b`` or ``a^H x = b``.
    lower : bool
        Read the lower triangle (default: the upper, as SciPy).
    unit_diagonal : bool
        Take the diagonal to be ones.

    Returns
    -------
    x : Tensor, of ``b``'s shape.

    Examples
    --------
    >>> a = dualad.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> dualad.scipy.linalg.solve_triangular(a, dualad.tensor([2.0, 3.0]), lower=True)
    tensor([1., 2.])
    """
    a, b = _as_float(dnp.asarray(a)), dnp.asarray(b)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected a square matrix, got shape {a.shape}")
    t = _triangle(a, lower, unit_diagonal)
    t = (t, _mT(t), _mH(t))[_trans(trans)]
    return dnp.linalg.solve(t, b)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """Cholesky factor, ``scipy.linalg.cholesky``: upper ``U`` with ``a = U^H U`` by default.

    As SciPy, the factor reads one triangle of ``a`` (the upper by default, the lower with
    ``lower=True``), and its derivative is that of the Hermitian matrix the triangle defines.

    Examples
    --------
    >>> dualad.scipy.linalg.cholesky(dualad.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 1.],
            [0., 2.]])
    """
    return dnp.linalg.cholesky(_as_float(dnp.asarray(a)), upper=not lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """Cholesky factorization for :func:`cho_solve`, ``scipy.linalg.cho_factor``.

    Returns ``(c, lower)``. SciPy leaves arbitrary values in the triangle of ``c`` that is
    not the factor; here it is zero (:func:`cho_solve` reads only the factor's triangle).

    Examples
    --------
    >>> c, low = dualad.scipy.linalg.cho_factor(dualad.tensor([[4.0, 2.0], [2.0, 5.0]]))
    >>> dualad.scipy.linalg.cho_solve((c, low), dualad.tensor([6.0, 7.0]))
    tensor([1., 1.])
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solve ``a x = b`` given :func:`cho_factor`'s ``(c, lower)``, ``scipy.linalg.cho_solve``.

    Examples
    --------
    >>> c = dualad.scipy.linalg.cholesky(dualad.tensor([[4.0, 2.0], [2.0, 5.0]]), lower=True)
    >>> dualad.scipy.linalg.cho_solve((c, True), dualad.tensor([6.0, 7.0]))
    tensor([1., 1.])
    """
    c, lower = c_and_lower
    if lower:  # a = L L^H
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, trans=2, lower=True)
    y = solve_triangular(c, b, trans=2)  # a = U^H U
    return solve_triangular(c, y)


# -- LU ---------------------------------------------------------------------------------------


def _permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """The row order ``p`` with ``(P a) = a[p]`` that LAPACK's interchanges ``piv`` make."""
    p = np.arange(m)
    for i, j in enumerate(piv):
        p[i], p[j] = p[j], p[i]
    return p


def _eliminate(pa: Any, zero_pivot: list[int]) -> Any:
    """Doolittle elimination of ``pa`` without interchanges: the packed ``L\\U`` of LAPACK's
    getrf, with unit-diagonal ``L`` strictly below the diagonal and ``U`` on and above it.

    One Schur complement per column, each a dualad operation, so every derivative of the
    factors is that of the elimination. A zero pivot (an exactly singular ``pa``) leaves its
    column of ``L`` zero, as LAPACK does.
    """
    m, n = pa.shape
    k = min(m, n)
    rows, cols = [], []
    s = pa
    for j in range(k):
        urow, col = s[0, :], s[1:, 0]
        if j in zero_pivot:
            lcol = col * 0
        else:
            lcol = col / urow[0]
        rows.append(dnp.pad(urow, (j, 0)))
        cols.append(dnp.pad(lcol, (j + 1, 0)))
        s = s[1:, 1:] - lcol[:, None] * urow[None, 1:]
    u = dnp.pad(dnp.stack(rows), ((0, m - k), (0, 0)))
    low = dnp.pad(dnp.stack(cols, axis=1), ((0, 0), (0, n - k)))
    return u + low


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """Pivoted LU factorization, ``scipy.linalg.lu_factor``: ``(lu, piv)``.

    ``piv`` are SciPy's (LAPACK's) row interchanges, an integer array without derivative;
    ``lu`` is the elimination of the interchanged rows written in dualad operations, so it
    equals SciPy's to rounding and is differentiable to every order. At an exactly zero pivot
    the values are SciPy's (with its warning) and the derivative raises ``LinAlgError``.

    Examples
    --------
    >>> lu, piv = dualad.scipy.linalg.lu_factor(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv
    array([1, 1], dtype=int32)
    >>> dualad.scipy.linalg.lu_solve((lu, piv), dualad.tensor([5.0, 11.0]))
    tensor([1., 2.])
    """
    a = _as_float(dnp.asarray(a))
    if a.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {a.shape}")
    raw_lu, piv = _scipy_linalg().lu_factor(a.detach().numpy())
    m = a.shape[0]
    k = min(a.shape)
    zero = [j for j in range(k) if raw_lu[j, j] == 0]
    if zero and _carries_derivative(a):
        raise LinAlgError(f"lu_factor: the pivot {zero[0]} is exactly zero (a singular "
                          "matrix); the factors have no derivative there")
    return _eliminate(a[_permutation(piv, m)], zero), piv


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: Any = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solve ``a x = b`` given :func:`lu_factor`'s ``(lu, piv)``, ``scipy.linalg.lu_solve``.

    ``trans`` is 0, 1 or 2 for ``a``, ``a^T`` or ``a^H``, as SciPy.

    Examples
    --------
    >>> lu, piv = dualad.scipy.linalg.lu_factor(dualad.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> dualad.scipy.linalg.lu_solve((lu, piv), dualad.tensor([7.0, 10.0]), trans=1)
    tensor([1., 2.])
    """
    lu, piv = lu_and_piv
    lu, b = dnp.asarray(lu), dnp.asarray(b)
    p = _permutation(np.asarray(piv), lu.shape[0])
    code = _trans(trans)
    if code == 0:  # P a = L U  =>  x = U^-1 L^-1 (P b)
        y = solve_triangular(lu, b[p], lower=True, unit_diagonal=True)
        return solve_triangular(lu, y)
    # a^T = U^T L^T P  =>  P x = L^-T U^-T b
    z = solve_triangular(lu, b, trans=code)
    w = solve_triangular(lu, z, trans=code, lower=True, unit_diagonal=True)
    return w[np.argsort(p)]


# -- matrix functions -------------------------------------------------------------------------

# Padé(13) coefficients and the 1-norm up to which it is accurate to double precision without
# scaling (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005)
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0,
           1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(A: Any) -> Any:
    """Matrix exponential, ``scipy.linalg.expm``, of a matrix or a stack of them.

    Scaling and squaring with the degree-13 Padé approximant, written in dualad operations.
    The scaling ``s`` is chosen from the values (a constant of the derivative); the
    derivative of ``r13(A / 2^s)^(2^s)`` is the same method's approximation of the Fréchet
    derivative ``L(A, E)`` (Al-Mohy and Higham, 2009), as accurate as the value.

    Examples
    --------
    >>> dualad.scipy.linalg.expm(dualad.tensor([[0.0, 0.0], [0.0, 0.0]]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    a = _as_float(dnp.asarray(A))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected a square matrix, got shape {a.shape}")
    n = a.shape[-1]
    if a.size == 0:
        return a
    norm1 = float(np.max(np.sum(np.abs(a.detach().numpy()), axis=-2))) if n else 0.0
    s = max(0, math.ceil(math.log2(norm1 / _THETA13))) if norm1 > _THETA13 else 0
    if s:
        a = a / (2.0 ** s)
    b = _PADE13
    eye = dnp.eye(n, dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a2 @ a4
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = dnp.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _kron_solve(k: Any, tangent: Any) -> Any:
    """``dX`` with ``K vec(dX) = vec(dA)`` (row-major ``vec``): linear in the tangent."""
    n = tangent.shape[-1]
    return dnp.reshape(dnp.linalg.solve(k, dnp.reshape(tangent, (n * n,))), (n, n))


def _sqrtm_impl(a: Any) -> Any:
    return np.asarray(_scipy_linalg().sqrtm(a))


def _sqrtm_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    # X dX + dX X = dA; row-major vec(A E B) = (A kron B^T) vec(E)
    if tangents[0] is None:
        return None
    eye = dnp.eye(out.shape[-1], dtype=out.dtype)
    k = dnp.kron(out, eye) + dnp.kron(eye, _mT(out))
    return _kron_solve(k, tangents[0])


sqrtm_p = Primitive("sqrtm", _sqrtm_impl, _sqrtm_jvp, reads=("out",))


def _logm_impl(a: Any) -> Any:
    return np.asarray(_scipy_linalg().logm(a))


def _logm_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    # exp(X) = A  =>  L_exp(X, dX) = dA, with L_exp(X, E) = int_0^1 e^{sX} E e^{(1-s)X} ds;
    # in row-major Kronecker form that integral is the upper-right block of
    # expm([[X kron I, I], [0, I kron X^T]])
    if tangents[0] is None:
        return None
    n = out.shape[-1]
    eye = dnp.eye(n, dtype=out.dtype)
    big_eye = dnp.eye(n * n, dtype=out.dtype)
    zero = dnp.zeros((n * n, n * n), dtype=out.dtype)
    blocks = dnp.concatenate([
        dnp.concatenate([dnp.kron(out, eye), big_eye], axis=1),
        dnp.concatenate([zero, dnp.kron(eye, _mT(out))], axis=1)], axis=0)
    k = expm(blocks)[: n * n, n * n:]
    return _kron_solve(k, tangents[0])


logm_p = Primitive("logm", _logm_impl, _logm_jvp, reads=("out",))


def _square_2d(a: Any, name: str) -> Any:
    a = _as_float(dnp.asarray(a))
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} expects a square 2-D matrix, got shape {a.shape}")
    return a


def sqrtm(A: Any) -> Any:
    """Principal matrix square root, ``scipy.linalg.sqrtm`` (values are SciPy's).

    The derivative solves the Sylvester equation ``X dX + dX X = dA`` (an ``n^2 x n^2``
    system, for small matrices); it raises ``LinAlgError`` where ``X`` has eigenvalues
    ``x_i + x_j = 0`` (a singular ``A``), where the square root is not differentiable.

    Examples
    --------
    >>> dualad.scipy.linalg.sqrtm(dualad.tensor([[4.0, 0.0], [0.0, 9.0]]))
    tensor([[2., 0.],
            [0., 3.]])
    """
    return apply(sqrtm_p, _square_2d(A, "sqrtm"))


def logm(A: Any) -> Any:
    """Principal matrix logarithm, ``scipy.linalg.logm`` (values are SciPy's).

    The derivative inverts the exponential's Fréchet derivative at ``X = logm(A)`` (an
    ``n^2 x n^2`` system built with :func:`expm`, for small matrices); it raises
    ``LinAlgError`` where that is singular.

    Examples
    --------
    >>> dualad.scipy.linalg.logm(dualad.tensor([[1.0, 0.0], [0.0, 1.0]]))
    tensor([[0., 0.],
            [0., 0.]])
    """
    return apply(logm_p, _square_2d(A, "logm"))


# -- assembling and the numpy.linalg counterparts ---------------------------------------------


def block_diag(*arrs: Any) -> Any:
    """Block-diagonal matrix of the arguments, ``scipy.linalg.block_diag``.

    0-d and 1-D arguments are rows (``atleast_2d``), as SciPy's. Linear in each argument.

    Examples
    --------
    >>> dualad.scipy.linalg.block_diag(dualad.tensor([[1.0]]), dualad.tensor([[2.0, 3.0]]))
    tensor([[1., 0., 0.],
            [0., 2., 3.]])
    """
    if not arrs:
        arrs = ([],)
    blocks = [dnp.atleast_2d(dnp.asarray(a)) for a in arrs]
    bad = [k for k, a in enumerate(blocks) if a.ndim > 2]
    if bad:
        raise ValueError(f"arguments in the following positions have dimension greater "
                         f"than 2: {bad}")
    dtype = np.result_type(*[a.dtype for a in blocks])
    total = sum(a.shape[1] for a in blocks)
    rows, before = [], 0
    for a in blocks:
        c = a.shape[1]
        rows.append(dnp.pad(a.astype(dtype), ((0, 0), (before, total - before - c))))
        before += c
    return dnp.concatenate(rows, axis=0)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Matrix inverse, ``scipy.linalg.inv`` (``numpy.linalg.inv``'s rule).

    Examples
    --------
    >>> dualad.scipy.linalg.inv(dualad.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]])
    """
    return dnp.linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """Determinant, ``scipy.linalg.det`` (``numpy.linalg.det``'s rule).

    Examples
    --------
    >>> dualad.scipy.linalg.det(dualad.tensor([[2.0, 1.0], [1.0, 2.0]]))
    tensor(3.)
    """
    return dnp.linalg.det(a)


_ASSUME = {None: "gen", "gen": "gen", "general": "gen", "banded": "gen",
           "sym": "sym", "symmetric": "sym", "her": "her", "hermitian": "her",
           "pos": "her", "positive definite": "her", "diagonal": "diagonal",
           "tridiagonal": "tridiagonal", "upper triangular": "upper", "lower triangular": "lower"}


def _structured(a: Any, kind: str, lower: bool) -> Any:
    """The matrix SciPy's solver for ``assume_a`` reads from ``a``."""
    if kind in ("sym", "her"):
        tri = dnp.tril(a) if lower else dnp.triu(a)
        strict = _mT(dnp.tril(a, -1) if lower else dnp.triu(a, 1))
        return tri + (dnp.conj(strict) if kind == "her" else strict)
    if kind == "diagonal":
        return dnp.tril(dnp.triu(a))
    if kind == "tridiagonal":
        return dnp.tril(dnp.triu(a, -1), 1)
    if kind in ("upper", "lower"):
        return _triangle(a, kind == "lower", False)
    return a


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: Any = None,
          transposed: bool = False) -> Any:
    """Solve ``a x = b``, ``scipy.linalg.solve``.

    ``assume_a`` names the structure SciPy's solver reads: for ``'sym'``, ``'her'`` and
    ``'pos'`` only the triangle ``lower`` names; for ``'diagonal'``, ``'tridiagonal'`` and the
    triangular kinds only that band. The solve is ``numpy.linalg.solve`` of that matrix, so
    the derivative in ``a`` is that of what is read. ``b`` of shape ``(M,)`` is one vector.

    Examples
    --------
    >>> a = dualad.tensor([[2.0, 1.0], [9.0, 2.0]])  # (its lower triangle is not read)
    >>> dualad.scipy.linalg.solve(a, dualad.tensor([4.0, 5.0]), assume_a="sym")
    tensor([1., 2.])
    """
    kind = _ASSUME.get(assume_a)
    if kind is None:
        raise ValueError(f"{assume_a!r} is not a recognized matrix structure")
    a, b = _as_float(dnp.asarray(a)), dnp.asarray(b)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expected a square matrix, got shape {a.shape}")
    m = _structured(a, kind, lower)
    if transposed:
        if m.dtype.kind == "c":
            raise NotImplementedError("scipy.linalg.solve can currently not solve a^T x = b "
                                      "with transposed=True for complex arrays")
        m = _mT(m)
    return dnp.linalg.solve(m, b)


def eigh(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, type: int = 1,
         check_finite: bool = True, subset_by_index: Any = None, subset_by_value: Any = None,
         driver: Any = None) -> Any:
    """Eigenvalues (and eigenvectors) of a Hermitian matrix, ``scipy.linalg.eigh``.

    ``lower`` picks the triangle read; with ``b`` (Hermitian positive definite, ``type=1``),
    the generalized problem ``a v = w b v`` is reduced by ``b``'s Cholesky factor
    ``L``: ``w, u = eigh(L^-1 a L^-H)``, ``v = L^-H u`` (so ``v^H b v = I``, as SciPy's).
    ``subset_by_index=(lo, hi)`` keeps those eigenvalues (ascending). The derivative is
    ``numpy.linalg.eigh``'s (eigenvectors at repeated eigenvalues raise).
    ``subset_by_value``, ``driver`` and ``type`` other than 1 raise ``NotImplementedError``.

    Examples
    --------
    >>> dualad.scipy.linalg.eigh(dualad.tensor([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True)
    tensor([1., 3.])
    """
    if subset_by_value is not None or driver is not None or type != 1:
        raise NotImplementedError("dualad.scipy.linalg.eigh supports a, b (type=1), lower, "
                                  "eigvals_only and subset_by_index")
    a = _as_float(dnp.asarray(a))
    uplo = "L" if lower else "U"
    if b is not None:
        low = cholesky(b, lower=lower)
        low = low if lower else _mH(low)  # b = L L^H
        c = solve_triangular(low, _mH(solve_triangular(low, _structured(a, "her", lower),
                                                       lower=True)), lower=True)
        w, u = dnp.linalg.eigh(c, UPLO="L")
        v = solve_triangular(low, u, trans=2, lower=True)
    elif eigvals_only:
        w, v = dnp.linalg.eigvalsh(a, UPLO=uplo), None
    else:
        w, v = dnp.linalg.eigh(a, UPLO=uplo)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w = w[..., lo: hi + 1]
        v = None if v is None else v[..., lo: hi + 1]
    return w if eigvals_only else (w, v)


# -- Taylor rules (Taylor mode, dualad.taylor) ------------------------------------------------
#
# The series convention is :mod:`dualad.rules.taylor`'s. Each rule solves its defining
# identity coefficient by coefficient; the newest coefficient enters linearly, through the
# same linear map as the first-order rule's, so each step is that rule's JVP applied to a
# right-hand side made of lower coefficients:
#
# - ``sqrtm``: ``X X = A`` gives ``X_0 X_k + X_k X_0 = A_k - sum_{0<j<k} X_j X_{k-j}``, the
#   Sylvester equation the first-order rule solves;
# - ``logm``: ``exp(X) = A`` gives ``L_exp(X_0, X_k) = A_k - N_k``, ``N_k`` the coefficient
#   ``k`` of ``exp(X_0 + ... + X_{k-1} t^{k-1})``: the top-right block of ``expm`` of the block
#   upper-triangular Toeplitz matrix of those coefficients (its blocks are the Taylor
#   coefficients of ``exp(X(t))``: ``t`` stands for the nilpotent block shift).


def _any_tensor(*xs: Any) -> bool:
    return any(isinstance(x, Tensor) for x in xs)


def _plain_unless(out: Any, keep: bool) -> Any:
    return out._data if isinstance(out, Tensor) and not keep else out


def _through_jvp(prim: Any, a0: Any, x0: Any, rhs: Any) -> Any:
    """The first-order rule's linear map on ``rhs`` (the tangent), at ``A_0``, ``X_0``."""
    return prim.jvp((dnp.asarray(a0),), (dnp.asarray(rhs),), dnp.asarray(x0))


def _sqrtm_taylor(a: Series) -> Series:
    """The principal square root from ``X X = A``: a Sylvester equation per coefficient."""
    keep = _any_tensor(*a)
    x0 = _plain_unless(sqrtm_p(a[0]), keep)
    xs = [x0]
    for k in range(1, len(a)):
        rhs = a[k] - _sum(xs[j] @ xs[k - j] for j in range(1, k)) if k > 1 else a[k]
        xs.append(_plain_unless(_through_jvp(sqrtm_p, a[0], x0, rhs), keep))
    return xs


def _exp_coefficient(xs: Series, k: int) -> Any:
    """Coefficient ``k`` of ``exp(sum_{j<k} X_j t^j)``: the block ``(0, k)`` of ``expm`` of
    the block upper-triangular Toeplitz matrix with ``X_0, ..., X_{k-1}, 0`` on its block
    diagonals."""
    n = xs[0].shape[-1]
    zero = dnp.zeros((n, n), dtype=dnp.asarray(xs[0]).dtype)
    blocks = list(xs[:k]) + [zero]
    rows = [dnp.concatenate([zero] * i + [blocks[j - i] for j in range(i, k + 1)], axis=1)
            for i in range(k + 1)]
    return expm(dnp.concatenate(rows, axis=0))[:n, k * n:]


def _logm_taylor(a: Series) -> Series:
    """The principal logarithm from ``exp(X) = A``: ``L_exp(X_0, X_k) = A_k - N_k``, solved
    by the first-order rule's inverse Frechet derivative."""
    keep = _any_tensor(*a)
    x0 = _plain_unless(logm_p(a[0]), keep)
    xs = [x0]
    for k in range(1, len(a)):
        rhs = a[k] - _plain_unless(_exp_coefficient(xs, k), keep) if k > 1 else a[k]
        xs.append(_plain_unless(_through_jvp(logm_p, a[0], x0, rhs), keep))
    return xs


SCIPY_LINALG_TAYLOR_RULES: dict[str, Rule] = {
    "sqrtm": _sqrtm_taylor,
    "logm": _logm_taylor,
}
"""The Taylor rules of this module's primitives, by primitive name (registered for Taylor
mode below)."""
register_taylor_rules(SCIPY_LINALG_TAYLOR_RULES)
