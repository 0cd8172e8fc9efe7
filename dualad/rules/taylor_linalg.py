"""Taylor-coefficient rules of the linear-algebra primitives (:mod:`dualad.rules.linalg`).

The series convention is :mod:`dualad.rules.taylor`'s: a series is the list
``[A_0, A_1, ..., A_K]`` of unscaled coefficients of ``A(t) = sum_k A_k t^k``; a rule takes
one series per argument (the primitive's params as keywords) and returns the output's
series (a tuple of series for a primitive with several outputs). Coefficients are arrays
or Tensors; the rules use the vocabulary and the primitives themselves, so they nest.

Each rule solves the defining identity of its function coefficient by coefficient, the
newest unknown coefficient on the left, everything of lower order on the right, ``O(K^2)``
matrix products in all:

- ``inv``: ``A X = I`` gives ``X_k = -X_0 sum_{j>=1} A_j X_{k-j}``; ``solve``: ``A X = B``
  gives ``A_0 X_k = B_k - sum_{j>=1} A_j X_{k-j}``;
- ``det``, ``slogdet``: ``(log det A)' = tr(A^-1 A')``, with the series of ``A^-1``;
  ``det = exp(log det)`` by ``exp``'s recurrence (at a singular ``A_0`` it raises, as the
  first-order rule does);
- ``cholesky``: ``L L^H = A`` gives ``L_0 L_k^H + L_k L_0^H = S_k``, ``S_k = A_k - sum_{0<j<k}
  L_j L_{k-j}^H``, solved as the first-order rule solves it:
  ``L_k = L_0 Phi(L_0^-1 S_k L_0^-H)``, ``Phi`` the lower triangle with half the diagonal;
- ``eigh``, ``eigvalsh``, ``eigvals``: in the eigenbasis of ``A_0``, ``B = V_0^-1 A V_0``,
  ``B Q = Q W`` with ``Q_0 = I`` gives ``W_k = diag(R_k)`` and ``(Q_k)_il = (R_k)_il /
  (w_l - w_i)`` off the diagonal, ``R_k = sum_{j>=1} B_j Q_{k-j} - sum_{0<j<k} Q_j W_{k-j}``
  (Rayleigh-Schroedinger perturbation theory to any order); ``eigh``'s diagonal of ``Q_k``
  from ``Q^H Q = I`` and the first-order rule's gauge ``Im diag(V^H V') = 0`` held at
  every ``t``; the eigenvalues do not depend on it. Repeated eigenvalues raise
  (eigenvalues at order 1 excepted, as the first-order rule gives them);
- ``qr``: ``A = Q R`` with ``Q^H Q = I``, ``R`` upper triangular with a real diagonal; the
  first-order rule's construction with the right-hand side ``S_k = A_k - sum_{0<j<k} Q_j
  R_{k-j}`` and the orthogonality defect ``P_k = sum_{0<j<k} Q_j^H Q_{k-j}``;
- ``eig``: ``eigvals``' recurrence, the diagonal of ``Q_k`` from the first-order rule's
  gauge at every ``t`` (unit columns, a real ``(V^-1 V')_jj``);
- ``svd``, ``svdvals``: ``V`` and ``s^2`` by ``eigh``'s recurrence on the Gram matrix
  ``A^H A`` (``A A^H`` for ``svdvals`` of a wide matrix; ``svd`` of a wide matrix
  through its conjugate transpose, the phase gauge moved back to ``V``), ``s`` by
  ``sqrt``'s, ``U = A V / s``;
- ``pinv`` of a full-rank matrix: ``inv``'s, or ``solve``'s over the Gram matrix;
  ``norm2``: ``sqrt(sum |x|^2)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.linalg import LinAlgError

from ..backends import namespace as _B
from ..backends.namespace import like as _like
from ..core.tensor import Tensor
from . import linalg as L
from . import taylor as T
from . import vocabulary as V
from .taylor import Rule, Series, _exp_series, _f, _is_complex, _order, _sqrt_series, _sum, multiply


def _plain(out: Any, *inputs: Any) -> Any:
    """A primitive's result as arrays where no input is a Tensor (a tuple stays a tuple)."""
    if any(isinstance(a, Tensor) for a in inputs):
        return out
    if isinstance(out, tuple):
        return tuple(o._data if isinstance(o, Tensor) else o for o in out)
    return out._data if isinstance(out, Tensor) else out


def _call(fn: Any, *args: Any, **params: Any) -> Any:
    return _plain(fn(*args, **params), *args)


def _mm(a: Any, b: Any) -> Any:
    return _f(V.matmul, a, b)


def _mH(a: Any) -> Any:
    return _f(V.conj, _f(V.swapaxes, a, -1, -2))


def _diag(a: Any) -> Any:
    return _f(V.diagonal, a, 0, -2, -1)


def _at(s: Sequence[Any], k: int) -> Any:
    """Coefficient ``k`` of ``s``, None past its end (a zero)."""
    return s[k] if k < len(s) else None


def _raw(a: Any) -> Any:
    return a._data if isinstance(a, Tensor) else a


def _eye_like(a: Any, n: int) -> Any:
    """The identity of size ``n`` in ``a``'s real precision, on ``a``'s device."""
    raw = _raw(a)
    return _B.eye(n, dtype=np.empty((), raw.dtype).real.dtype, like=_like(raw))


def _embed_diag(d: Any) -> Any:
    """The matrices with diagonal ``d`` (``(..., n) -> (..., n, n)``)."""
    n = d.shape[-1]
    return _f(V.expand_dims, d, -2) * _eye_like(d, n)


def _inv0(a0: Any, name: str) -> Any:
    """``inv(A_0)``, raising the first-order rule's error at a singular matrix."""
    try:
        return _call(L.inv_p, a0)
    except LinAlgError:
        raise LinAlgError(
            f"dualad: the Taylor coefficients of {name} at a singular matrix are not "
            "supported (they need the inverse); perturb the matrix or differentiate a "
            "regularized version (e.g. A + eps * I)") from None


# -- inverses and linear systems --------------------------------------------------------------


def _inv_series(a: Series, x0: Any) -> Series:
    """``X = A^-1`` given ``X_0``: ``X_k = -X_0 sum_{j=1..k} A_j X_{k-j}``."""
    xs = [x0]
    for k in range(1, len(a)):
        xs.append(-_mm(x0, _sum(_mm(a[j], xs[k - j]) for j in range(1, k + 1))))
    return xs


def inv(a: Series) -> Series:
    """``A^-1`` from ``A X = I``."""
    return _inv_series(a, _call(L.inv_p, a[0]))


def solve(a: Series, b: Series) -> Series:
    """``X = A^-1 B`` from ``A X = B``: ``A_0 X_k = B_k - sum_{j>=1} A_j X_{k-j}``."""
    xs = [_call(L.solve_p, a[0], b[0])]
    for k in range(1, _order(a, b) + 1):
        rhs = _sum(_mm(a[j], xs[k - j]) for j in range(1, min(k, len(a) - 1) + 1))
        bk = _at(b, k)
        if isinstance(rhs, int):  # (a constant A: no products)
            rhs = bk if bk is not None else _f(V.zeros_like, xs[0])
        else:
            rhs = -rhs if bk is None else bk - rhs
        xs.append(_call(L.solve_p, a[0], rhs))
    return xs


# -- determinants -------------------------------------------------------------------------------


def _logdet_series(a: Series, name: str) -> Series:
    """The coefficients ``1..K`` of ``log det A(t)`` (entry 0 is None): ``u' = tr(A^-1 A')``,
    ``k u_k = sum_{j=0..k-1} (k - j) tr(X_j A_{k-j})``."""
    K = len(a) - 1
    xs = _inv_series(a[:K], _inv0(a[0], name))
    us: list[Any] = [None]
    for k in range(1, K + 1):
        tr = _sum((k - j) * _f(V.einsum, "...ij,...ji->...", xs[j], a[k - j]) for j in range(k))
        us.append(tr * (1.0 / k))
    return us


def det(a: Series) -> Series:
    """``det A = exp(log det A)``: ``exp``'s recurrence over the series of ``log det``."""
    y0 = _call(L.det_p, a[0])
    if len(a) == 1:
        return [y0]
    us = _logdet_series(a, "det")
    return _exp_series([0] + us[1:], y0, len(a) - 1)


def slogdet(a: Series) -> tuple[Series, Series]:
    """``(sign, log|det A|)``: ``log|det| = Re log det``; the sign ``exp(i Im log det)``
    (constant for a real matrix)."""
    sign0, logabs0 = _call(L.slogdet_p, a[0])
    K = len(a) - 1
    if K == 0:
        return [sign0], [logabs0]
    us = _logdet_series(a, "slogdet")
    logabs = [logabs0] + [_f(V.real, u) for u in us[1:]]
    if not _is_complex(sign0):
        return [sign0] + [_f(V.zeros_like, sign0) for _ in us[1:]], logabs
    phase = [0] + [_f(V.imag, u) * 1j for u in us[1:]]
    return _exp_series(phase, sign0, K), logabs


# -- Cholesky -----------------------------------------------------------------------------------


def cholesky(a: Series, *, upper: bool) -> Series:
    """The Cholesky factor from ``L L^H = A`` (``U = L^H`` for ``upper=True``), the
    Hermitian matrices read from the triangle NumPy reads."""
    f0 = _call(L.cholesky_p, a[0], upper=upper)
    l0 = _mH(f0) if upper else f0
    linv = _call(L.inv_p, l0)
    ls = [l0]
    for k in range(1, len(a)):
        s = _f(L._herm_part, a[k], not upper)
        s = s - _sum(_mm(ls[j], _mH(ls[k - j])) for j in range(1, k))
        x = _mm(_mm(linv, s), _mH(linv))
        strict = _f(V.tril, x, -1)
        ls.append(_mm(l0, strict + 0.5 * (_f(V.tril, x) - strict)))  # L_0 Phi(X)
    return [f0] + [_mH(c) for c in ls[1:]] if upper else ls


# -- eigenproblems ------------------------------------------------------------------------------


def _gaps(w0: Any, name: str, K: int, vectors: bool) -> Any:
    """``1 / (w_l - w_i)`` off the diagonal; raises where repeated eigenvalues leave the
    coefficients asked for undefined (eigenvalues at order 1 are defined)."""
    gap, degenerate = L._gap_inverse(w0)  # (the differences carry w0's derivatives)
    if degenerate and (K >= 2 or (K == 1 and vectors)):
        what = "eigenvectors" if vectors else "eigenvalue coefficients beyond order 1"
        raise LinAlgError(
            f"dualad: {name}: the {what} have no Taylor coefficients at a repeated "
            "eigenvalue (the perturbation recurrence divides by the gaps); perturb the "
            "matrix, or use order 1")
    return _plain(gap, w0)


def _perturbation(bs: Series, w0: Any, gap: Any, gauge: Any) -> tuple[Series, Series]:
    """``W(t)`` and ``Q(t)`` (``Q_0 = I``, entry 0 None) with ``B Q = Q W``, ``B_0 =
    diag(w0)``; ``gauge(qs, k, off)`` gives the diagonal of ``Q_k`` (0 for none), ``off``
    its off-diagonal part."""
    ws, qs = [w0], [None]
    for k in range(1, len(bs)):
        r = bs[k] + _sum(_mm(bs[j], qs[k - j]) - qs[j] * _f(V.expand_dims, ws[k - j], -2)
                         for j in range(1, k))
        ws.append(_diag(r))
        off = r * gap
        d = gauge(qs, k, off)
        qs.append(off if isinstance(d, int) else off + _embed_diag(d))
    return ws, qs


def _unitary_gauge(complex_: bool) -> Any:
    """The diagonal of ``Q_k`` for a unitary ``Q``: ``Re`` from ``Q^H Q = I``, ``Im`` from the
    first-order rule's gauge ``Im diag(Q^H Q') = 0`` at every ``t``."""
    def gauge(qs: Series, k: int, off: Any) -> Any:
        if k == 1:
            return 0
        p = _sum(_diag(_mm(_mH(qs[j]), qs[k - j])) for j in range(1, k))
        if not complex_:
            return -0.5 * p
        g = _sum((k - j) * _diag(_mm(_mH(qs[j]), qs[k - j])) for j in range(1, k))
        return -0.5 * _f(V.real, p) - 1j * (1.0 / k) * _f(V.imag, g)

    return gauge


def _eigh_series(a: Series, UPLO: str, name: str, vectors: bool) -> tuple[Series, Series]:
    w0, v0 = _call(L.eigh_p, a[0], UPLO=UPLO)
    K = len(a) - 1
    gap = _gaps(w0, name, K, vectors)
    vh = _mH(v0)
    bs = [None] + [_mm(_mm(vh, _f(L._herm_part, c, UPLO == "L")), v0) for c in a[1:]]
    ws, qs = _perturbation(bs, w0, gap, _unitary_gauge(_is_complex(v0)))
    ws = [w0] + [_f(V.real, c) for c in ws[1:]]
    return ws, [v0] + [_mm(v0, q) for q in qs[1:]]


def eigh(a: Series, *, UPLO: str) -> tuple[Series, Series]:
    """``(w, V)`` of a Hermitian matrix by the perturbation recurrence (distinct
    eigenvalues)."""
    return _eigh_series(a, UPLO, "eigh", True)


def eigvalsh(a: Series, *, UPLO: str) -> Series:
    """The eigenvalues of a Hermitian matrix by ``eigh``'s recurrence."""
    return _eigh_series(a, UPLO, "eigvalsh", False)[0]


def eigvals(a: Series) -> Series:
    """The eigenvalues of a general (diagonalizable) matrix: ``eigh``'s recurrence in the
    basis ``V_0^-1 A V_0`` (the eigenvalues do not depend on the gauge of ``Q``)."""
    w0, v0 = _call(L.eig_p, a[0])
    K = len(a) - 1
    gap = _gaps(w0, "eigvals", K, False)
    vinv = _inv0(v0, "eigvals")
    bs = [None] + [_mm(_mm(vinv, c), v0) for c in a[1:]]
    return _perturbation(bs, w0, gap, lambda qs, k, off: 0)[0]


def eig(a: Series) -> tuple[Series, Series]:
    """``(w, V)`` of a general matrix (distinct eigenvalues): the recurrence of ``eigvals``
    with the diagonal of ``Q_k`` from the first-order rule's gauge held at every ``t``:
    unit columns (``Re v_j^H v_j' = 0``) and a real ``(V^-1 V')_jj``."""
    w0, v0 = _call(L.eig_p, a[0])
    K = len(a) - 1
    if K == 0:
        return [w0], [v0]
    gap = _gaps(w0, "eig", K, True)
    vinv = _inv0(v0, "eig")
    bs = [None] + [_mm(_mm(vinv, c), v0) for c in a[1:]]
    gram = _mm(_mH(v0), v0)
    inverse: Series = [None]  # the series of Q^-1 (entry 0: I)

    def gauge(qs: Series, k: int, off: Any) -> Any:
        if k > 1:
            inverse.append(-(qs[k - 1] + _sum(_mm(qs[j], inverse[k - 1 - j])
                                              for j in range(1, k - 1))))
        re = -_f(V.real, _diag(_mm(gram, off)))
        if k > 1:
            rest = _sum(_diag(_mm(_mH(qs[j]), _mm(gram, qs[k - j]))) for j in range(1, k))
            re = re - 0.5 * _f(V.real, rest)
        if not _is_complex(v0):
            return re
        twist = _sum((k - j) * _diag(_mm(inverse[j], qs[k - j])) for j in range(1, k))
        return re - 1j * (1.0 / k) * _f(V.imag, twist) if k > 1 else re

    ws, qs = _perturbation(bs, w0, gap, gauge)
    return ws, [v0] + [_mm(v0, q) for q in qs[1:]]


def _gram(a: Series) -> Series:
    """``A^H A`` (``A A^H`` for a wide ``A``), the smaller Gram matrix, by Cauchy products."""
    m, n = a[0].shape[-2:]
    ah = [_mH(c) for c in a]
    x, y = (ah, a) if m >= n else (a, ah)
    return [_sum(_mm(x[j], y[k - j]) for j in range(k + 1)) for k in range(len(a))]


def svdvals(a: Series) -> Series:
    """The singular values: ``sqrt`` of the eigenvalues of the Gram matrix, in descending
    order (distinct, non-zero singular values)."""
    s0 = _call(L.svdvals_p, a[0])
    if len(a) == 1:
        return [s0]
    lam = _eigh_series(_gram(a), "L", "svdvals", False)[0]
    lam = [_f(V.flip, c, -1) for c in lam]  # (eigvalsh ascends, svd descends)
    return _sqrt_series(lam, s0, len(a) - 1)


def _svd_tall(a: Series, u0: Any, s0: Any, v0: Any) -> tuple[Series, Series, Series]:
    """``(U, s, V)`` of a tall or square ``A`` (``m >= n``): ``V`` and ``s^2`` by ``eigh``'s
    recurrence on ``A^H A`` in the basis ``V_0`` (the first-order rule's gauge ``Im
    diag(V^H V') = 0``), ``U = A V / s``."""
    K = len(a) - 1
    gram = _gram(a)
    lam0 = s0 * s0
    gap = _gaps(lam0, "svd", K, True)
    bs = [None] + [_mm(_mm(_mH(v0), c), v0) for c in gram[1:]]
    lam, qs = _perturbation(bs, lam0, gap, _unitary_gauge(_is_complex(v0)))
    ss = _sqrt_series([lam0] + [_f(V.real, c) for c in lam[1:]], s0, K)
    vs = [v0] + [_mm(v0, q) for q in qs[1:]]
    av = [_sum(_mm(a[j], vs[k - j]) for j in range(k + 1)) for k in range(K + 1)]
    us = T.divide(av, [_f(V.expand_dims, c, -2) for c in ss])
    return [u0] + us[1:], ss, vs


def svd(a: Series, *, full_matrices: bool, hermitian: bool) -> tuple[Series, Series, Series]:
    """``(U, s, Vh)``: ``V`` and ``s^2`` from the Gram matrix by ``eigh``'s recurrence,
    ``U = A V / s`` (distinct, non-zero singular values; a wide matrix through its
    conjugate transpose)."""
    u0, s0, vh0 = _call(L.svd_p, a[0], full_matrices=full_matrices, hermitian=hermitian)
    K = len(a) - 1
    if K == 0:
        return [u0], [s0], [vh0]
    m, n = a[0].shape[-2:]
    if full_matrices and m != n:
        raise LinAlgError("dualad: svd: with full_matrices=True the extra columns of U (rows "
                          "of Vh) of a non-square matrix are not unique, so they have no "
                          "Taylor coefficients; use full_matrices=False")
    sd = _raw(s0)
    if sd.size and (sd <= L._tol(sd, sd.shape[-1])).any():
        raise LinAlgError("dualad: svd: U and Vh have no Taylor coefficients at a zero "
                          "singular value; use svdvals for the singular values")
    if hermitian:
        a = [a[0]] + [_f(L._herm_part, c, True) for c in a[1:]]
    if m >= n:
        us, ss, vs = _svd_tall(a, u0, s0, _mH(vh0))
        return us, ss, [_mH(c) for c in vs]
    # a wide matrix: A^H = V S U^H is tall; its recurrence puts the gauge on U, so a
    # diagonal phase moves it to V (A is unchanged by U D, V D for a diagonal D)
    vs, ss, us = _svd_tall([_mH(c) for c in a], _mH(vh0), s0, u0)
    if _is_complex(a[0]):
        us, vs = _gauge_on_v(us, vs)
    return us, ss, [_mH(c) for c in vs]


def _gauge_on_v(us: Series, vs: Series) -> tuple[Series, Series]:
    """``(U D, V D)`` with ``D = exp(i theta)`` diagonal, ``theta(0) = 0``, ``theta' = -Im
    diag(V^H V')``: then ``Im diag((V D)^H (V D)') = 0``, the first-order rule's gauge."""
    K = len(vs) - 1
    theta: Series = [0]
    for k in range(1, K + 1):  # theta_k = coefficient k - 1 of theta', over k
        m = k - 1
        vhv = _sum((m + 1 - j) * _diag(_mm(_mH(vs[j]), vs[m + 1 - j])) for j in range(m + 1))
        theta.append(-_f(V.imag, vhv) * (1j / k))
    d = _exp_series(theta, _f(V.ones_like, theta[1]), K)
    d = [_f(V.expand_dims, c, -2) for c in d]
    return multiply(us, d), multiply(vs, d)


def pinv(a: Series, *, rcond: Any, hermitian: bool) -> Series:
    """The pseudo-inverse of a full-rank matrix, ``A^-1`` (square), ``(A^H A)^-1 A^H``
    (tall) or ``A^H (A A^H)^-1`` (wide), by ``solve``'s recurrence over the Gram matrix's
    series; a matrix of lower rank raises (its pseudo-inverse is not analytic where the rank
    may change)."""
    p0 = _call(L.pinv_p, a[0], rcond=rcond, hermitian=hermitian)
    if len(a) == 1:
        return [p0]
    if hermitian:
        a = [_f(L._herm_part, c, True) for c in a]
    sv = _raw(_call(L.svdvals_p, a[0]))
    if sv.size and (sv.min(axis=-1) <= rcond * sv.max(axis=-1)).any():
        raise LinAlgError("dualad: pinv: Taylor coefficients of the pseudo-inverse of a "
                          "rank-deficient matrix are not supported; regularize it (e.g. "
                          "A^H A + eps I) or reduce it to full rank")
    m, n = a[0].shape[-2:]
    if m == n:  # (the inverse: no Gram matrix squaring the condition number)
        return [p0] + _inv_series(a, p0)[1:]
    ah = [_mH(c) for c in a]
    if m > n:
        return [p0] + solve(_gram(a), ah)[1:]
    return [p0] + [_mH(c) for c in solve(_gram(a), a)[1:]]


def norm2(x: Series, *, axis: tuple[int, ...], keepdims: bool) -> Series:
    """``sqrt(sum |x|^2)`` over ``axis``: a Cauchy square and ``sqrt``'s recurrence (a zero
    norm is a singular point: inf or NaN coefficients)."""
    y0 = _call(L.norm2_p, x[0], axis=axis, keepdims=keepdims)
    cx = [_f(V.conj, c) for c in x] if _is_complex(x[0]) else x
    sq = multiply(x, cx)
    q = [_f(V.sum, _f(V.real, c) if _is_complex(c) else c, axis, None, keepdims)
         for c in sq]
    return _sqrt_series(q, y0, len(x) - 1)


# -- QR -----------------------------------------------------------------------------------------


def qr(a: Series, *, mode: str) -> tuple[Series, Series]:
    """``(Q, R)`` from ``A = Q R``, ``Q^H Q = I``, ``diag R`` real: for a tall or square
    ``A`` the first-order rule's construction with ``S_k`` and ``P_k``; for a wide one
    ``[A_1 A_2] = Q [R_1 R_2]``, ``R_2 = Q^H A_2``."""
    q0, r0 = _call(L.qr_p, a[0], mode=mode)
    K = len(a) - 1
    m, n = a[0].shape[-2:]
    if K == 0:
        return [q0], [r0]
    if mode == "complete" and m > n:
        raise LinAlgError("dualad: qr: with mode='complete' the extra columns of Q of a tall "
                          "matrix are not unique, so they have no Taylor coefficients; use "
                          "mode='reduced'")
    k0 = min(m, n)
    d = np.abs(_raw(_diag(r0[..., :k0, :k0])))  # (on the arrays' device, as the JVP's)
    if k0 and (d <= L._tol(d, k0)).any():
        raise LinAlgError("dualad: qr: the Taylor coefficients need a full-rank leading "
                          "block (R has a zero on its diagonal)")
    r1 = r0[..., :k0, :k0]
    r1inv = _call(L.inv_p, r1)
    qs, r1s = [q0], [r1]
    for k in range(1, K + 1):
        s = a[k][..., :, :k0] - _sum(_mm(qs[j], r1s[k - j]) for j in range(1, k))
        p = _sum(_mm(_mH(qs[j]), qs[k - j]) for j in range(1, k))
        sr = _mm(s, r1inv)
        mk = _mm(_mH(q0), sr)
        c = _qr_c(mk, p, k)
        r1s.append(_mm(mk - c, r1))
        qk = _mm(q0, c)
        qs.append(qk + (sr - _mm(q0, mk)) if m > k0 else qk)
    if n <= k0:
        return qs, r1s
    a2 = [c[..., :, k0:] for c in a]  # R_2 = Q^H A_2
    r2s = [_sum(_mm(_mH(qs[j]), a2[k - j]) for j in range(k + 1)) for k in range(K + 1)]
    return qs, [r0] + [_f(V.concatenate, [x, y], -1) for x, y in zip(r1s[1:], r2s[1:],
                                                                      strict=True)]


def _qr_c(mk: Any, p: Any, k: int) -> Any:
    """``C = Q_0^H Q_k``: its strict lower triangle that of ``M``, the rest from ``C + C^H =
    -P``, ``Im diag C = Im diag M`` (``diag R_k`` real)."""
    low = _f(V.tril, mk, -1)
    c = low - _mH(low)
    if not isinstance(p, int):
        c = c - _f(V.triu, p, 1) - 0.5 * (_f(V.tril, p) - _f(V.tril, p, -1))
    if _is_complex(mk):
        c = c + _embed_diag(_f(V.imag, _diag(mk)) * 1j)
    return c


# -- the table ----------------------------------------------------------------------------------

LINALG_TAYLOR_RULES: dict[str, Rule] = {
    "inv": inv,
    "solve": solve,
    "det": det,
    "slogdet": slogdet,
    "cholesky": cholesky,
    "eigh": eigh,
    "eigvalsh": eigvalsh,
    "eigvals": eigvals,
    "eig": eig,
    "svd": svd,
    "pinv": pinv,
    "svdvals": svdvals,
    "norm2": norm2,
    "qr": qr,
}
"""The Taylor rule of each linear-algebra primitive that has one, by the primitive's name
(``dualad.scipy.linalg``'s ``sqrtm`` and ``logm``: ``dualad.scipy.taylor_linalg``)."""
