"""Linear algebra: ``numpy.linalg``'s functions as primitives with one JVP rule each.

Every decomposition here is a non-linear primitive whose only derivative rule
is its JVP (invariant 1 of docs/architecture.md). The rules compute coefficients from the primals
(``inv(L)``, ``1 / (w_j - w_i)``, ...) with ordinary, differentiable dualad
operations, and apply only *linear* operations to the tangents: matmul and
einsum with a constant operand, ``solve`` with a constant matrix, transposes,
``conj``, ``real``, diagonals and triangular masks. Reverse mode is the
transpose of these rules, so no backward formula is written anywhere.

One primitive is linear: :data:`solve` is linear in its right-hand side, so
JVP rules may use it on tangents; its transpose, the adjoint for ``Re<a, b>``,
is ``ct -> solve(A^H, ct)``, given where it is made (as ``undefined``'s, which
raises).

Degenerate inputs
-----------------
A derivative that does not exist is an error, never a silent NaN or inf:

* ``det``, ``slogdet``: at an exactly singular matrix the derivative raises
  ``numpy.linalg.LinAlgError`` (the values themselves are computed as usual).
* ``eigh``: eigenvectors are not differentiable at repeated eigenvalues;
  eigenvalue derivatives are still given, and using the eigenvector derivative
  (forward mode, or a backward pass with a non-zero cotangent for the
  eigenvectors) raises ``LinAlgError``. ``eigvalsh`` never needs eigenvector
  derivatives; at a repeated eigenvalue it returns one valid directional
  derivative (symmetric functions of the repeated group, such as their sum,
  get the exact derivative).
* ``svd``: the same for ``U``/``Vh`` at repeated singular values, at zero
  singular values of a non-square (or complex) matrix, and for the extra
  columns of ``full_matrices=True`` factors of a non-square matrix.
* ``qr``: a rank-deficient leading block raises.
* ``pinv``: the derivative assumes the rank is locally constant (true away
  from the ``rcond`` cut-off).

Eigenvectors and singular vectors are defined only up to sign (real) or phase
(complex); their derivatives follow the gauge ``Im diag(V^H dV) = 0``, so only
gauge-invariant functions of them have meaningful complex derivatives — as in
torch.linalg.
"""

from __future__ import annotations

import builtins
import operator
from collections import namedtuple
from typing import Any

import numpy as np
from array_api_compat import is_cupy_array as is_cupy

from ..backends import namespace as _B
from ..backends.namespace import as_array as _as_array
from ..backends.namespace import like as _like
from ..backends.namespace import namespace
from ..core.dispatch import Primitive, apply
from ..core.tensor import Tensor, _make
from . import vocabulary as F
from ._util import align, norm_axes, norm_axis, shape_of
from .linear import unbroadcast

LinAlgError = np.linalg.LinAlgError

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])

EighResult.__doc__ = """What :func:`eigh` returns: ``(eigenvalues, eigenvectors)``, as NumPy's.

Examples
--------
>>> dnp.linalg.eigh(dualad.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
tensor([1., 3.])
"""
EigResult.__doc__ = """What :func:`eig` returns: ``(eigenvalues, eigenvectors)``, as NumPy's.

Examples
--------
>>> dnp.linalg.eig(dualad.tensor([[2.0, 1.0], [0.0, 3.0]])).eigenvalues
tensor([2., 3.])
"""
SVDResult.__doc__ = """What :func:`svd` returns: ``(U, S, Vh)``, as NumPy's.

Examples
--------
>>> dnp.linalg.svd(dualad.tensor([[3.0, 0.0], [0.0, 2.0]])).S
tensor([3., 2.])
"""
QRResult.__doc__ = """What :func:`qr` returns: ``(Q, R)``, as NumPy's.

Examples
--------
>>> a = dualad.tensor([[2.0, 1.0], [0.0, 3.0]])
>>> q, r = dnp.linalg.qr(a)
>>> np.allclose((q @ r).numpy(), a.numpy()), np.allclose(np.abs(r.numpy()), a.numpy())
(True, True)
"""
SlogdetResult.__doc__ = """What :func:`slogdet` returns: ``(sign, logabsdet)``, as NumPy's.

Examples
--------
>>> dnp.linalg.slogdet(dualad.tensor([[-1.0, 0.0], [0.0, 1.0]]))
SlogdetResult(sign=tensor(-1.), logabsdet=tensor(0.))
"""

__all__ = [
    "LinAlgError", "EighResult", "SVDResult", "QRResult", "SlogdetResult",
    "EigResult", "inv", "solve", "det", "slogdet", "cholesky", "eig", "eigvals", "eigh",
    "eigvalsh", "svd", "svdvals",
    "qr", "pinv", "norm", "vector_norm", "matrix_norm", "matrix_power", "matmul",
    "diagonal", "trace", "outer", "multi_dot", "matrix_rank", "cond", "cross",
    "matrix_transpose", "tensordot", "vecdot", "tensorinv", "tensorsolve", "lstsq",
]


# -- small helpers (all linear in their argument) ---------------------------------------


def _mT(x: Any) -> Any:
    return F.swapaxes(x, -1, -2)


def _mH(x: Any) -> Any:
    return F.conj(F.swapaxes(x, -1, -2))


def _diag(x: Any) -> Any:
    return F.diagonal(x, 0, -2, -1)


def _real_dtype(dt: Any) -> np.dtype:
    return np.empty((), dt).real.dtype


def _is_c(x: Any) -> bool:
    return np.dtype(x.dtype).kind == "c"


def _raw(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else _as_array(x)  # (a CuPy array as it is)


def _herm_part(t: Any, lower: bool) -> Any:
    """The Hermitian matrix LAPACK reads from one triangle of ``t`` (real diagonal)."""
    strict = F.tril(t, -1) if lower else F.triu(t, 1)
    # (the real diagonal, by linear ops alone: a mask made like ``t`` would be a host array
    # when ``t`` is reverse mode's placeholder, on a GPU)
    rt = F.real(t)
    d = rt - F.tril(rt, -1) - F.triu(rt, 1)
    return strict + _mH(strict) + d


def _tol(values: Any, n: int) -> Any:
    """Per-matrix threshold below which two spectral values count as equal."""
    v = np.abs(_raw(values))
    scale = v.max(axis=-1, keepdims=True) if v.shape[-1] else _B.zeros(v.shape[:-1] + (1,),
                                                                       like=_like(v))
    return 16 * builtins.max(n, 1) * np.finfo(v.dtype).eps * scale


def _gap_inverse(w: Any, f: Any = None) -> tuple[Any, bool]:
    """``F_ij = 1 / (f_j - f_i)`` off the diagonal, 0 on it; and whether ``w`` has repeats.

    ``w`` decides degeneracy (two entries within a few ulps); ``f`` (default
    ``w``) gives the differences. Degenerate entries are set to 0, so the
    coefficient stays finite; callers guard the affected tangents.
    """
    f = w if f is None else f
    n = w.shape[-1]
    wd = _raw(w)
    eye = _B.eye(n, dtype=bool, like=_like(wd))
    bad = (~eye) & (np.abs(wd[..., None, :] - wd[..., :, None]) <= _tol(w, n)[..., None])
    skip = eye | bad
    e = F.expand_dims(f, -2) - F.expand_dims(f, -1)
    return F.where(skip, 0, 1 / F.where(skip, 1, e)), bool(bad.any())


# -- a guard: the derivative does not exist ------------------------------------------------


def _undefined_raise(msg: str) -> Any:
    raise LinAlgError(msg)


def _undefined_jvp(primals: Any, tangents: Any, out: Any, **params: Any) -> Any:
    return apply(undefined, tangents[0], **params)


undefined = Primitive(
    "undefined_derivative",
    lambda a, *, shape, dtype, msg: _undefined_raise(msg),
    _undefined_jvp,
    linear=(0,),
    batch=lambda arrays, nbs, *, shape, dtype, msg: _undefined_raise(msg),
    aval=lambda args, *, shape, dtype, msg: (shape, dtype),
    transpose=lambda ct, args, *, shape, dtype, msg: _undefined_raise(msg),
)
"""Linear in its argument; evaluating or transposing it raises ``LinAlgError(msg)``.

JVP rules wrap a tangent whose derivative does not exist (eigenvectors at a
repeated eigenvalue) in it: forward mode raises at once, reverse mode raises
only if a non-zero cotangent reaches it.
"""


def _guard(t: Any, msg: str, shape: Any = None) -> Any:
    return apply(undefined, t, shape=t.shape if shape is None else tuple(shape),
                 dtype=np.dtype(t.dtype), msg=msg)


# -- inv, solve ---------------------------------------------------------------------------


def _inv_impl(a: Any) -> Any:
    return namespace(a).linalg.inv(a)


def _inv_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    return -F.matmul(F.matmul(out, tangents[0]), out)  # dY = -Y dA Y


inv_p = Primitive("inv", _inv_impl, _inv_jvp, reads=("out",))


def _solve_impl(a: Any, b: Any) -> Any:
    xp = namespace(a, b)
    if is_cupy(a) and np.ndim(b) > 1 and a.shape[:-2] != b.shape[:-2]:
        # CuPy's solve does not broadcast the stacks of a and b against each other
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = xp.broadcast_to(a, batch + a.shape[-2:])
        b = xp.broadcast_to(b, batch + b.shape[-2:])
    return xp.linalg.solve(a, b)


def _solve_batch(arrays: Any, nbs: Any) -> Any:
    (a, b), (na, nbb) = arrays, nbs
    nd = builtins.max(np.ndim(a) - na, np.ndim(b) - nbb)
    return _solve_impl(align(a, na, nd), align(b, nbb, nd)), builtins.max(na, nbb)


def _solve_aval(args: Any) -> Any:
    a, b = args
    sa, sb = shape_of(a), shape_of(b)
    da_ = a.dtype if isinstance(a, Tensor) else np.asarray(a).dtype
    db_ = b.dtype if isinstance(b, Tensor) else np.asarray(b).dtype
    return np.broadcast_shapes(sa[:-2], sb[:-2]) + tuple(sb[-2:]), np.result_type(da_, db_)


def _solve_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    a, _ = primals
    ta, tb = tangents
    r = tb
    if ta is not None:  # dx = solve(A, db - dA x)
        s = F.matmul(ta, out)
        r = -s if r is None else r - s
    return apply(solve_p, a, r)


def _solve_t(ct: Any, args: Any) -> list[Any]:
    a, b = args  # (linear in b alone: x = A^-1 b transposes to A^-H ct)
    ah = F.conj(F.swapaxes(a, -1, -2))
    return [None, unbroadcast(apply(solve_p, ah, ct), b.shape)]


solve_p = Primitive(
    "solve",
    _solve_impl,
    _solve_jvp,
    reads=((0, "out"), (0,)),
    linear=(1,),
    batch=_solve_batch,
    aval=_solve_aval,
    transpose=_solve_t,
)
"""``solve(A, B)`` for stacks ``A: (..., n, n)``, ``B: (..., n, k)``; linear in ``B``."""


# -- determinants ------------------------------------------------------------------------


def _inv_for_derivative(a: Any, name: str) -> Any:
    try:
        return apply(inv_p, a)
    except LinAlgError:
        raise LinAlgError(
            f"dualad: the derivative of {name} at a singular matrix is not supported "
            "(it needs the inverse); perturb the matrix or differentiate a regularized "
            "version (e.g. A + eps * I)"
        ) from None


def _det_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    # d det = det * tr(A^{-1} dA)
    ainv = _inv_for_derivative(primals[0], "det")
    return F.einsum("...ji,...ij->...", ainv, tangents[0]) * out


det_p = Primitive("det", lambda a: namespace(a).linalg.det(a), _det_jvp, reads=(0, "out"))


def _slogdet_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    sign, _ = out
    ainv = _inv_for_derivative(primals[0], "slogdet")
    tr = F.einsum("...ji,...ij->...", ainv, tangents[0])  # d log det = tr(A^{-1} dA)
    if not _is_c(tr):
        return None, tr
    return F.imag(tr) * (sign * 1j), F.real(tr)  # d sign = i sign d arg(det)


slogdet_p = Primitive(
    "slogdet",
    lambda a: tuple(namespace(a).linalg.slogdet(a)),
    _slogdet_jvp,
    reads=(0, "out0"),  # (the sign, not logabsdet: a write into that leaves this readable)
    multi=True,
)


# -- Cholesky ---------------------------------------------------------------------------


def _cholesky_jvp(primals: Any, tangents: Any, out: Any, *, upper: bool) -> Any:
    # A = L L^H  =>  dL = L Phi(L^{-1} dA L^{-H}), Phi = lower triangle, halved diagonal
    lo = _mH(out) if upper else out
    n = lo.shape[-1]
    linv = apply(inv_p, lo)
    x = F.matmul(F.matmul(linv, _herm_part(tangents[0], not upper)), _mH(linv))
    phi = np.tril(_B.ones((n, n), like=_like(lo._data)), -1) + 0.5 * _B.eye(
        n, like=_like(lo._data))
    dl = F.matmul(lo, x * phi.astype(_real_dtype(lo.dtype)))
    return _mH(dl) if upper else dl


def _from_lower(a: Any) -> Any:
    """The Hermitian matrix that ``a``'s lower triangle defines (what NumPy's ``eigh``-based
    ``hermitian=True`` paths read)."""
    xp = namespace(a)
    low = xp.tril(a)
    return low + xp.conj(xp.swapaxes(xp.tril(a, -1), -1, -2))


def _cholesky_impl(a: Any, *, upper: bool) -> Any:
    xp = namespace(a)
    if xp is np:
        return np.linalg.cholesky(a, upper=upper)
    if getattr(xp, "__name__", "") == "dask.array":  # (Dask's returns the upper factor
        return xp.linalg.cholesky(a, lower=not upper)  # unless asked for the lower one)
    if not upper:
        return xp.linalg.cholesky(a)
    # CuPy's cholesky has no ``upper``: the upper factor read from the upper triangle is
    # the conjugate transpose of the lower factor of the conjugate transpose
    mh = lambda m: xp.conj(xp.swapaxes(m, -1, -2))  # noqa: E731
    return mh(xp.linalg.cholesky(mh(a)))


def _svd_impl(a: Any, *, full_matrices: bool, hermitian: bool) -> tuple[Any, ...]:
    xp = namespace(a)
    if xp is np:
        return tuple(np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian))
    # CuPy's svd has no ``hermitian``: the matrix NumPy would read, factored as any matrix
    # (the factors differ from NumPy's eigh-based ones by gauge only)
    return tuple(xp.linalg.svd(_from_lower(a) if hermitian else a, full_matrices=full_matrices))


def _pinv_impl(a: Any, *, rcond: float, hermitian: bool) -> Any:
    xp = namespace(a)
    if xp is np:
        return np.linalg.pinv(a, rcond=rcond, hermitian=hermitian)
    return xp.linalg.pinv(_from_lower(a) if hermitian else a, rcond=rcond)  # (as _svd_impl)


cholesky_p = Primitive(
    "cholesky",
    _cholesky_impl,
    _cholesky_jvp,
    reads=("out",),
)


# -- Hermitian eigenproblems ------------------------------------------------------------


def _eigh_jvp(primals: Any, tangents: Any, out: Any, *, UPLO: str) -> Any:
    w, v = out
    p = F.matmul(F.matmul(_mH(v), _herm_part(tangents[0], UPLO == "L")), v)  # V^H dA V
    dw = F.real(_diag(p))
    fm, degenerate = _gap_inverse(w)
    dv = F.matmul(v, p * fm)
    if degenerate:
        dv = _guard(dv, "dualad: eigh: the eigenvectors are not differentiable at a repeated "
                        "eigenvalue; use eigvalsh if you only need eigenvalue derivatives")
    return dw, dv


eigh_p = Primitive(
    "eigh",
    lambda a, *, UPLO: tuple(namespace(a).linalg.eigh(a, UPLO=UPLO)),
    _eigh_jvp,
    reads=("out",),
    multi=True,
)


def _eigvalsh_jvp(primals: Any, tangents: Any, out: Any, *, UPLO: str) -> Any:
    _, v = apply(eigh_p, primals[0], UPLO=UPLO)
    p = F.matmul(F.matmul(_mH(v), _herm_part(tangents[0], UPLO == "L")), v)
    return F.real(_diag(p))


eigvalsh_p = Primitive(
    "eigvalsh",
    lambda a, *, UPLO: namespace(a).linalg.eigvalsh(a, UPLO=UPLO),
    _eigvalsh_jvp,
    reads=(0,),
)


def _eig_parts(v: Any, t: Any) -> tuple[Any, Any]:
    """``P = V^-1 dA V`` and ``dw = diag(P)`` (``solve`` is linear in its right-hand side)."""
    p = apply(solve_p, v, F.matmul(t, v))
    return p, _diag(p)


def _eig_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    w, v = out
    p, dw = _eig_parts(v, tangents[0])
    fm, degenerate = _gap_inverse(w)
    dv = F.matmul(v, p * fm)
    # NumPy's eigenvectors have unit norm: keep Re(v^H dv) = 0 column by column
    dv = dv - v * F.expand_dims(F.real(F.sum(F.conj(v) * dv, axis=-2)), -2)
    if degenerate:
        dv = _guard(dv, "dualad: eig: the eigenvectors are not differentiable at a repeated "
                        "eigenvalue; use eigvals if you only need eigenvalue derivatives")
    return dw, dv


eig_p = Primitive(
    "eig",
    lambda a: tuple(namespace(a).linalg.eig(a)),
    _eig_jvp,
    reads=("out",),
    multi=True,
)


def _eigvals_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    _, v = apply(eig_p, primals[0])
    return _eig_parts(v, tangents[0])[1]


eigvals_p = Primitive(
    "eigvals",
    lambda a: namespace(a).linalg.eigvals(a),
    _eigvals_jvp,
    reads=(0,),
)


# -- SVD -----------------------------------------------------------------------------------


def _svd_jvp(primals: Any, tangents: Any, out: Any, *, full_matrices: bool,
             hermitian: bool) -> Any:
    # Valid for any SVD triple NumPy returns (hermitian=True factors differ only by gauge).
    u, s, vh = out
    t = tangents[0]
    if hermitian:  # NumPy then uses eigh, which reads the lower triangle only
        t = _herm_part(t, True)
    m, n = u.shape[-2], vh.shape[-1]
    k = builtins.min(m, n)
    if full_matrices:
        u, vh = u[..., :, :k], vh[..., :k, :]
    v = _mH(vh)
    dav = F.matmul(t, v)
    dp = F.matmul(_mH(u), dav)  # U^H dA V  (k x k)
    ds = F.real(_diag(dp))
    srow, scol = F.expand_dims(s, -2), F.expand_dims(s, -1)
    fm, degenerate = _gap_inverse(s, s * s)  # 1 / (s_j^2 - s_i^2)
    sd = _raw(s)
    small = sd <= _tol(s, k)
    needs_sinv = m != n or _is_c(t)
    if needs_sinv and small.any():
        degenerate = True
    sinv = 1 / F.where(small, 1, s)
    dph = _mH(dp)
    om_u = (dp * srow + scol * dph) * fm
    om_v = (scol * dp + dph * srow) * fm
    if _is_c(t):  # the diagonal: gauge Im diag(V^H dV) = 0, the phase goes to U
        om_u = om_u + F.where(_B.eye(k, dtype=bool, like=_like(sd)),
                              F.expand_dims(F.imag(_diag(dp)) * sinv, -1) * 1j, 0)
    du = F.matmul(u, om_u)
    if m > k:
        du = du + (dav - F.matmul(u, dp)) * F.expand_dims(sinv, -2)
    dv = F.matmul(v, om_v)
    if n > k:
        dv = dv + (F.matmul(_mH(t), u) - F.matmul(v, dph)) * F.expand_dims(sinv, -2)
    dvh = _mH(dv)
    if degenerate:
        msg = ("dualad: svd: U and Vh are not differentiable at repeated singular values (or "
               "at a zero singular value of a non-square or complex matrix); use svdvals (or "
               "svd(..., compute_uv=False)) if you only need singular-value derivatives")
        du, dvh = _guard(du, msg), _guard(dvh, msg)
    if full_matrices and m != n:
        msg = ("dualad: svd: with full_matrices=True the extra columns of U (rows of Vh) of a "
               "non-square matrix are not unique, so they have no derivative; use "
               "full_matrices=False")
        if m > n:
            du = F.concatenate([du, _guard(du[..., :, :1], msg, du.shape[:-1] + (m - k,))], -1)
        else:
            dvh = F.concatenate([dvh, _guard(dvh[..., :1, :], msg,
                                             dvh.shape[:-2] + (n - k, n))], -2)
    return du, ds, dvh


svd_p = Primitive(
    "svd",
    _svd_impl,
    _svd_jvp,
    reads=("out",),
    multi=True,
)


def _svdvals_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    u, _, vh = apply(svd_p, primals[0], full_matrices=False, hermitian=False)
    return F.real(_diag(F.matmul(F.matmul(_mH(u), tangents[0]), _mH(vh))))


svdvals_p = Primitive(
    "svdvals",
    lambda a: namespace(a).linalg.svd(a, compute_uv=False),
    _svdvals_jvp,
    reads=(0,),
)


# -- QR ------------------------------------------------------------------------------------


def _qr_jvp(primals: Any, tangents: Any, out: Any, *, mode: str) -> Any:
    q, r = out
    t = tangents[0]
    m, n = q.shape[-2], r.shape[-1]
    k = builtins.min(m, n)
    qk, rk = q[..., :, :k], r[..., :k, :]
    r1 = rk[..., :, :k]
    d = np.abs(np.diagonal(_raw(r1), 0, -2, -1))
    if (d <= _tol(d, k)).any() if k else False:
        raise LinAlgError(
            "dualad: qr: the derivative needs a full-rank leading block (R has a zero on its "
            "diagonal); the QR factors of a rank-deficient matrix are not differentiable"
        )
    r1inv = apply(inv_p, r1)
    da1r = F.matmul(t[..., :, :k], r1inv)
    c = F.matmul(_mH(qk), da1r)  # Q^H dA1 R1^{-1}
    low = F.tril(c, -1)
    om = low - _mH(low)  # Q^H dQ: skew-Hermitian
    if _is_c(c):
        # (the mask made like Q, a value: c may be reverse mode's placeholder)
        om = om + F.where(_B.eye(k, dtype=bool, like=_like(_raw(qk))), F.imag(c) * 1j, 0)
    dq = F.matmul(qk, om)
    if m > k:
        dq = dq + (da1r - F.matmul(qk, c))  # (I - Q Q^H) dA1 R1^{-1}
    dr = F.matmul(_mH(qk), t) - F.matmul(om, rk)
    if mode == "complete" and m > n:
        msg = ("dualad: qr: with mode='complete' the extra columns of Q of a tall matrix are "
               "not unique, so they have no derivative; use mode='reduced'")
        dq = F.concatenate([dq, _guard(dq[..., :, :1], msg, dq.shape[:-1] + (m - k,))], -1)
        dr = F.pad(dr, ((0, 0),) * (dr.ndim - 2) + ((0, m - k), (0, 0)))
    return dq, dr


qr_p = Primitive(
    "qr",
    lambda a, *, mode: tuple(namespace(a).linalg.qr(a, mode=mode)),
    _qr_jvp,
    reads=("out",),
    multi=True,
)


# -- pseudo-inverse -----------------------------------------------------------------------


def _pinv_jvp(primals: Any, tangents: Any, out: Any, *, rcond: float, hermitian: bool) -> Any:
    # Golub & Pereyra, for a locally constant rank:
    # dA+ = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+
    a, p, t = primals[0], out, tangents[0]
    if hermitian:  # NumPy then uses eigh, which reads the lower triangle only
        t = _herm_part(t, True)
        a = _herm_part(a, True)
    m, n = a.shape[-2], a.shape[-1]
    th = _mH(t)
    ph = _mH(p)
    rm = _B.eye(m, dtype=p.dtype, like=_like(_raw(p))) - F.matmul(a, p)
    ln = _B.eye(n, dtype=p.dtype, like=_like(_raw(p))) - F.matmul(p, a)
    r = -F.matmul(F.matmul(p, t), p)
    r = r + F.matmul(F.matmul(F.matmul(p, ph), th), rm)
    return r + F.matmul(F.matmul(ln, th), F.matmul(ph, p))


pinv_p = Primitive(
    "pinv",
    _pinv_impl,
    _pinv_jvp,
    reads=(0, "out"),
)


# -- the 2-norm over axes -----------------------------------------------------------------


def _norm2_impl(x: Any, *, axis: tuple[int, ...], keepdims: bool) -> Any:
    xp = namespace(x)
    sq = (x.conj() * x).real if x.dtype.kind == "c" else x * x
    return xp.sqrt(xp.sum(sq, axis=axis, keepdims=keepdims))


def _norm2_jvp(primals: Any, tangents: Any, out: Any, *, axis: tuple[int, ...],
               keepdims: bool) -> Any:
    # d||x|| = Re(sum(conj(x) dx)) / ||x||, zero at x = 0 (the subgradient torch uses)
    x, t = primals[0], tangents[0]
    y = out if keepdims else F.reshape(out, tuple(1 if i in axis else d
                                                  for i, d in enumerate(x.shape)))
    zero = y == 0
    coef = F.where(zero, 0, F.conj(x) / F.where(zero, 1, y))
    return F.sum(F.real(t * coef), axis=axis, keepdims=keepdims)


norm2_p = Primitive("norm2", _norm2_impl, _norm2_jvp, reads=(0, "out"))


# =========================================================================================
# The NumPy-level functions
# =========================================================================================


def _prep(a: Any) -> Tensor:
    a = F.asarray_t(a)
    if a.dtype.kind not in "fc":
        a = F.astype(a, np.float64)
    return a


def _square(a: Tensor) -> None:
    if a.ndim < 2:
        raise LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def _carries_derivative(a: Tensor) -> bool:
    return bool(a._requires_grad or a._level)


def inv(a: Any) -> Any:
    """Inverse of a (stack of) square matrices, ``numpy.linalg.inv``.

    The JVP is ``dY = -Y dA Y``. A singular matrix raises ``LinAlgError`` (as
    NumPy does).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.inv(a).sum().backward()
    >>> a.grad
    tensor([[-0.25  , -0.125 ],
            [-0.125 , -0.0625]])
    """
    a = _prep(a)
    _square(a)
    return apply(inv_p, a)


def solve(a: Any, b: Any) -> Any:
    """Solve ``a @ x = b``, ``numpy.linalg.solve`` (NumPy 2: ``b`` is a vector only if 1-D).

    Differentiable in both ``a`` and ``b``: ``dx = solve(a, db - da @ x)``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> b = da.tensor([1.0, 2.0], requires_grad=True)
    >>> x = dnp.linalg.solve(da.tensor([[2.0, 0.0], [0.0, 4.0]]), b)
    >>> x.sum().backward(); b.grad
    tensor([0.5 , 0.25])
    """
    a, b = _prep(a), _prep(b)
    _square(a)
    if b.ndim == 1:  # a vector right-hand side: a one-column matrix
        return apply(solve_p, a, F.reshape(b, (b.shape[0], 1)))[..., 0]
    return apply(solve_p, a, b)


def det(a: Any) -> Any:
    """Determinant, ``numpy.linalg.det``; JVP ``det(A) tr(A^{-1} dA)``.

    At an exactly singular matrix the value is computed but the derivative
    raises ``LinAlgError``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[2.0, 1.0], [0.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.det(a).backward(); a.grad
    tensor([[ 3.,  0.],
            [-1.,  2.]])
    """
    a = _prep(a)
    _square(a)
    return apply(det_p, a)


def slogdet(a: Any) -> Any:
    """Sign and ``log|det|``, ``numpy.linalg.slogdet`` (a ``SlogdetResult``).

    ``d logabsdet = Re tr(A^{-1} dA)``; for complex input the sign moves with
    ``i Im tr(A^{-1} dA)``. Singular matrices: as :func:`det`.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[2.0, 0.0], [0.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.slogdet(a).logabsdet.backward(); a.grad
    tensor([[0.5       , 0.        ],
            [0.        , 0.33333333]])
    """
    a = _prep(a)
    _square(a)
    return SlogdetResult(*apply(slogdet_p, a))


def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """Cholesky factor, ``numpy.linalg.cholesky``.

    Like NumPy, only the lower (``upper=True``: upper) triangle of ``a`` is
    read, and the derivative is that of this function: perturbations of the
    other triangle have no effect. A matrix that is not positive definite
    raises ``LinAlgError``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[4.0, 2.0], [2.0, 3.0]], requires_grad=True)
    >>> dnp.linalg.cholesky(a)
    tensor([[2.        , 0.        ],
            [1.        , 1.41421356]], grad_fn=<CholeskyBackward0>)
    """
    a = _prep(a)
    _square(a)
    return apply(cholesky_p, a, upper=bool(upper))


def _uplo(UPLO: str) -> str:
    u = str(UPLO).upper()
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u


def eigh(a: Any, UPLO: str = "L") -> Any:
    """Eigenvalues and eigenvectors of a Hermitian matrix, ``numpy.linalg.eigh``.

    Returns ``EighResult(eigenvalues, eigenvectors)``. Only the ``UPLO``
    triangle is read. ``dw = Re diag(V^H dA V)``, ``dV = V (F * (V^H dA V))``
    with ``F_ij = 1/(w_j - w_i)``. At a repeated eigenvalue the eigenvector
    derivative raises ``LinAlgError`` when it is used (see the module notes).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> w, v = dnp.linalg.eigh(a)
    >>> w
    tensor([1., 3.], grad_fn=<EighBackward0>)
    """
    a = _prep(a)
    _square(a)
    return EighResult(*apply(eigh_p, a, UPLO=_uplo(UPLO)))


def eig(a: Any) -> Any:
    """Eigenvalues and right eigenvectors of a general matrix, ``numpy.linalg.eig``.

    Returns ``EigResult(eigenvalues, eigenvectors)``, real when every eigenvalue of a
    real matrix is real, complex otherwise (as NumPy). With ``P = V^-1 dA V``:
    ``dw = diag(P)``, ``dV = V (F * P)`` with ``F_ij = 1/(w_j - w_i)``, then the part
    that keeps each column of unit norm. Eigenvectors are defined up to a phase:
    only phase-invariant functions of them have meaningful complex derivatives. At a
    repeated eigenvalue the eigenvector derivative raises ``LinAlgError`` when used.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[2.0, 1.0], [0.0, 3.0]], requires_grad=True)
    >>> w, v = dnp.linalg.eig(a)
    >>> w.sum().backward(); np.allclose(a.grad.numpy(), np.eye(2))  # d trace = trace(dA)
    True
    """
    a = _prep(a)
    _square(a)
    return EigResult(*apply(eig_p, a))


def eigvals(a: Any) -> Any:
    """Eigenvalues of a general matrix, ``numpy.linalg.eigvals`` (``dw = diag(V^-1 dA V)``).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.eigvals(da.tensor([[2.0, 1.0], [0.0, 3.0]]))
    tensor([2., 3.])
    """
    a = _prep(a)
    _square(a)
    return apply(eigvals_p, a)


def eigvalsh(a: Any, UPLO: str = "L") -> Any:
    """Eigenvalues of a Hermitian matrix, ``numpy.linalg.eigvalsh``.

    Its JVP needs no eigenvector derivatives, so it is defined at repeated
    eigenvalues too (one valid directional derivative; see the module notes).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    >>> dnp.linalg.eigvalsh(a)[-1].backward(); a.grad  # only the lower triangle is read
    tensor([[0.5, 0. ],
            [1. , 0.5]])
    """
    a = _prep(a)
    _square(a)
    return apply(eigvalsh_p, a, UPLO=_uplo(UPLO))


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """Singular value decomposition, ``numpy.linalg.svd`` (``SVDResult(U, S, Vh)``).

    Derivatives of ``U``/``Vh`` need distinct (and, for non-square or complex
    input, non-zero) singular values, and ``full_matrices=False`` for a
    non-square matrix; otherwise using them raises ``LinAlgError``. ``S`` is
    always differentiable. ``hermitian=True`` is passed to NumPy (its factors
    are a valid SVD, and the derivative rule holds for any valid SVD).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> a = da.tensor([[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]], requires_grad=True)
    >>> dnp.linalg.svd(a, compute_uv=False).sum().backward(); a.grad
    tensor([[1., 0.],
            [0., 1.],
            [0., 0.]])
    """
    a = _prep(a)
    if a.ndim < 2:
        raise LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if not compute_uv:
        return apply(svdvals_p, a)
    return SVDResult(*apply(svd_p, a, full_matrices=bool(full_matrices),
                            hermitian=bool(hermitian)))


def svdvals(x: Any, /) -> Any:
    """Singular values, ``numpy.linalg.svdvals`` (always differentiable).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.svdvals(da.tensor([[0.0, 2.0], [1.0, 0.0]]))
    tensor([2., 1.])
    """
    return svd(x, compute_uv=False)


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition, ``numpy.linalg.qr``.

    ``mode='reduced'`` (default) and ``'complete'`` return ``QRResult(Q, R)``,
    ``'r'`` returns ``R``; all are differentiable when the leading
    ``min(m, n)`` columns have full rank. ``'raw'`` has no derivative and
    raises on a tensor that carries one.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> q, r = dnp.linalg.qr(da.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> r
    tensor([[-5. , -2.2],
            [ 0. ,  0.4]])
    """
    a = _prep(a)
    if a.ndim < 2:
        raise LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if mode == "raw":
        if _carries_derivative(a):
            raise NotImplementedError(
                "dualad: qr(mode='raw') returns Householder reflectors, which have no "
                "derivative in dualad; use mode='reduced'")
        return tuple(_make(_as_array(x)) for x in np.linalg.qr(a._data, mode="raw"))
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    res = QRResult(*apply(qr_p, a, mode="complete" if mode == "complete" else "reduced"))
    return res.R if mode == "r" else res


_NoValue = object()


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NoValue) -> Any:
    """Moore-Penrose pseudo-inverse, ``numpy.linalg.pinv``.

    The derivative (Golub & Pereyra) assumes the rank is locally constant: it
    is exact for full-rank matrices and away from the ``rcond`` cut-off.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.pinv(da.tensor([[1.0], [1.0]]))
    tensor([[0.5, 0.5]])
    """
    a = _prep(a)
    if rcond is None:
        if rtol is _NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = builtins.max(a.shape[-2:]) * np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if np.ndim(rcond):
        raise NotImplementedError("dualad: pinv takes a scalar rcond/rtol")
    return apply(pinv_p, a, rcond=float(rcond), hermitian=bool(hermitian))


def _vec_norm(x: Tensor, ord: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    if ord is None or ord == 2:
        return apply(norm2_p, x, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    ax = F.abs(x)  # type: ignore[attr-defined]
    if ord == np.inf:
        return F.amax(ax, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return F.amin(ax, axis=axis, keepdims=keepdims)
    if ord == 0:
        nz = (x._data != 0).astype(_real_dtype(x.dtype))
        return _make(_as_array(nz.sum(axis=axis, keepdims=keepdims)))
    if ord == 1:
        return F.sum(ax, axis=axis, keepdims=keepdims)
    p = float(ord)
    return F.sum(ax**p, axis=axis, keepdims=keepdims) ** (1.0 / p)


def _mat_norm(x: Tensor, ord: Any, row: int, col: int, keepdims: bool) -> Any:
    if ord in (None, "fro", "f"):
        return apply(norm2_p, x, axis=tuple(sorted((row, col))), keepdims=keepdims)
    if ord in (2, -2, "nuc"):
        s = apply(svdvals_p, F.moveaxis(x, (row, col), (-2, -1)))
        r = F.sum(s, axis=-1) if ord == "nuc" else (F.amax if ord == 2 else F.amin)(s, axis=-1)
    elif ord in (1, -1, np.inf, -np.inf):
        ax = F.abs(x)  # type: ignore[attr-defined]
        red = F.amax if ord in (1, np.inf) else F.amin
        if ord in (1, -1):
            c = col - 1 if col > row else col
            r = red(F.sum(ax, axis=row), axis=c)
        else:
            rr = row - 1 if row > col else row
            r = red(F.sum(ax, axis=col), axis=rr)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shp = list(x.shape)
        shp[row] = shp[col] = 1
        r = F.reshape(r, tuple(shp))
    return r


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector or matrix norm, ``numpy.linalg.norm``, as a composition of primitives.

    Vector orders ``None/2`` (a primitive whose derivative at 0 is 0, as
    torch's), ``1``, ``inf``, ``-inf``, ``0`` (no derivative) and any ``p``;
    matrix orders ``'fro'``, ``'nuc'``, ``2``, ``-2``, ``1``, ``-1``, ``inf``,
    ``-inf``. Ties in max/min share the derivative evenly.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> x = da.tensor([3.0, 4.0], requires_grad=True)
    >>> dnp.linalg.norm(x).backward(); x.grad
    tensor([0.6, 0.8])
    """
    x = _prep(x)
    nd = x.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            return apply(norm2_p, x, axis=tuple(range(nd)), keepdims=bool(keepdims))
        if nd == 1:
            axis = (0,)
        elif nd == 2:
            axis = (0, 1)
        else:
            raise ValueError("Improper number of dimensions to norm.")
    elif np.ndim(axis) == 0:
        axis = (operator.index(axis),)
    axis = tuple(axis)
    if len(axis) == 1:
        return _vec_norm(x, ord, norm_axes(axis, nd), bool(keepdims))
    if len(axis) == 2:
        row, col = norm_axis(axis[0], nd), norm_axis(axis[1], nd)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _mat_norm(x, ord, row, col, bool(keepdims))
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """``numpy.linalg.vector_norm`` (any number of axes are flattened into one vector).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.vector_norm(da.tensor([[3.0], [4.0]]))
    tensor(5.)
    """
    x = _prep(x)
    axes = norm_axes(axis, x.ndim)
    if ord in (None, 2):
        return apply(norm2_p, x, axis=axes, keepdims=bool(keepdims))
    rest = [i for i in range(x.ndim) if i not in axes]
    xm = F.reshape(F.transpose(x, tuple(rest) + axes),
                   tuple(x.shape[i] for i in rest) + (-1,))
    r = _vec_norm(xm, ord, (len(rest),), False)
    if keepdims:
        r = F.reshape(r, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return r


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """``numpy.linalg.matrix_norm`` over the last two axes.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.matrix_norm(da.tensor([[3.0, 0.0], [0.0, 4.0]]), ord="nuc")
    tensor(7.)
    """
    x = _prep(x)
    return _mat_norm(x, ord, x.ndim - 2, x.ndim - 1, bool(keepdims))


def matrix_power(a: Any, n: int) -> Any:
    """``numpy.linalg.matrix_power``: repeated matmul (binary powers); ``n < 0`` uses ``inv``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.matrix_power(da.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    a = F.asarray_t(a)
    _square(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    if n == 0:
        eye = _B.eye(a.shape[-1], dtype=a.dtype, like=_like(a._data))
        return _make(np.broadcast_to(eye, a.shape).copy())
    if n < 0:
        a = inv(a)
        n = -n
    if n == 1:
        return a
    if n == 2:
        return F.matmul(a, a)
    if n == 3:
        return F.matmul(F.matmul(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else F.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else F.matmul(result, z)
    return result


# -- NumPy 2's array-API additions to numpy.linalg (compositions) ------------------------


def matmul(x1: Any, x2: Any, /) -> Any:
    """``numpy.linalg.matmul``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.matmul(da.tensor([[1.0, 2.0]]), da.tensor([[3.0], [4.0]]))
    tensor([[11.]])
    """
    return F.matmul(x1, x2)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """``numpy.linalg.diagonal`` (over the last two axes).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.diagonal(da.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 4.])
    """
    return F.diagonal(x, offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """``numpy.linalg.trace`` (over the last two axes).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.trace(da.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(5.)
    """
    return F.sum(F.diagonal(x, offset, -2, -1), axis=-1, dtype=dtype)


def outer(x1: Any, x2: Any, /) -> Any:
    """``numpy.linalg.outer`` (1-D inputs).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.outer(da.tensor([1.0, 2.0]), da.tensor([3.0]))
    tensor([[3.],
            [6.]])
    """
    return F.outer(x1, x2)


def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """``numpy.linalg.multi_dot`` (left to right).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.multi_dot([da.eye(2), da.tensor([1.0, 2.0])])
    tensor([1., 2.])
    """
    if out is not None:
        raise TypeError("dualad: multi_dot(out=...) is not supported on Tensors")
    r = arrays[0]
    for b in arrays[1:]:
        r = F.dot(r, b)
    return r


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """``numpy.linalg.matrix_rank``: an integer result with no derivative.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.linalg.matrix_rank(da.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1)
    """
    A = F.asarray_t(A)
    return _make(_as_array(np.linalg.matrix_rank(A._data, tol=tol, hermitian=hermitian,
                                                 rtol=rtol)))


def cond(x: Any, p: Any = None) -> Any:
    """``numpy.linalg.cond``: a ratio of singular values (``p`` None, 2, -2) or
    ``norm(x, p) * norm(inv(x), p)``.

    Examples
    --------
    >>> a = dualad.tensor([[2.0, 0.0], [0.0, 0.5]], requires_grad=True)
    >>> c = dnp.linalg.cond(a); c.backward()
    >>> c.detach()  # 2 / 0.5
    tensor(4.)
    >>> a.grad  # d(s0 / s1) = ds0 / s1 - s0 ds1 / s1**2
    tensor([[ 2.,  0.],
            [ 0., -8.]])
    """
    x = _prep(x)
    if p is None or p in (2, -2):
        s = svdvals(x)
        big, small = s[..., 0], s[..., -1]
        return small / big if p == -2 else big / small
    _square(x)
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``numpy.linalg.cross`` of 3-vectors (:func:`dualad.numpy.cross` along ``axis``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 0.0, 0.0], requires_grad=True)
    >>> y = dnp.linalg.cross(x, dualad.tensor([0.0, 1.0, 0.0])); y[2].backward()
    >>> y.detach(), x.grad  # y[2] = x0 * 1 - x1 * 0
    (tensor([0., 0., 1.]), tensor([1., 0., 0.]))
    """
    return F.cross(x1, x2, axis=axis)


def matrix_transpose(x: Any, /) -> Any:
    """``numpy.linalg.matrix_transpose``: swap the last two axes.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> dnp.linalg.matrix_transpose(a.detach())
    tensor([[1., 3.],
            [2., 4.]])
    >>> (dnp.linalg.matrix_transpose(a) * dualad.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    >>> a.grad
    tensor([[1., 3.],
            [2., 4.]])
    """
    return F.matrix_transpose(x)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    """``numpy.linalg.tensordot`` (``axes`` keyword-only), as an einsum.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.linalg.tensordot(a, dualad.tensor([1.0, 1.0]), axes=1); y.sum().backward()
    >>> y.detach()  # the row sums
    tensor([3., 7.])
    >>> a.grad
    tensor([[1., 1.],
            [1., 1.]])
    """
    return F.tensordot(x1, x2, axes=axes)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``numpy.linalg.vecdot``: ``sum(conj(x1) * x2, axis)``.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.linalg.vecdot(x, dualad.tensor([3.0, 4.0])); y.backward()
    >>> y.detach(), x.grad
    (tensor(11.), tensor([3., 4.]))
    """
    return F.vecdot(x1, x2, axis=axis)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """``numpy.linalg.tensorinv``: ``inv`` of the matrix the first ``ind`` axes make.

    Examples
    --------
    >>> a = dualad.tensor(np.diag([2.0, 4.0]).reshape(2, 1, 2), requires_grad=True)
    >>> b = dnp.linalg.tensorinv(a, ind=1); b.sum().backward()
    >>> b.detach()
    tensor([[[0.5 , 0.  ],
             [0.  , 0.25]]])
    >>> a.grad  # -inv(A).T @ ones @ inv(A).T, shaped as a
    tensor([[[-0.25  , -0.125 ]],
            [[-0.125 , -0.0625]]])
    """
    a = _prep(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    old = a.shape
    inv_shape = old[ind:] + old[:ind]
    rows = 1
    for k in old[ind:]:
        rows *= k
    return F.reshape(inv(F.reshape(a, (rows, -1))), inv_shape)


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """``numpy.linalg.tensorsolve``: ``solve`` on the matrix the axes make.

    Examples
    --------
    >>> a = dualad.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
    >>> x = dnp.linalg.tensorsolve(a, dualad.tensor([2.0, 2.0])); x.sum().backward()
    >>> x.detach()
    tensor([1. , 0.5])
    >>> a.grad  # -inv(A).T @ ones @ x.T
    tensor([[-0.5  , -0.25 ],
            [-0.25 , -0.125]])
    """
    a, b = _prep(a), _prep(b)
    an = a.ndim
    if axes is not None:
        order = [k for k in range(an) if k not in [norm_axis(int(x), an) for x in axes]]
        order += [norm_axis(int(x), an) for x in axes]
        a = F.transpose(a, order)
    old = a.shape[-(an - b.ndim):]
    n = 1
    for k in old:
        n *= k
    if a.size != n ** 2:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return F.reshape(solve(F.reshape(a, (n, n)), F.ravel(b)), old)


def lstsq(a: Any, b: Any, rcond: Any = None) -> Any:
    """``numpy.linalg.lstsq``: ``(x, residuals, rank, s)`` with ``x = pinv(a) @ b``.

    The derivative assumes the rank is locally constant (as ``pinv``'s does); ``rank``
    is computed eagerly from the singular values.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]], requires_grad=True)
    >>> x, res, rank, s = dnp.linalg.lstsq(a, dualad.tensor([1.0, 4.0, 3.0]))
    >>> x.detach(), res.detach(), int(rank), s.detach()
    (tensor([1., 2.]), tensor([9.]), 2, tensor([2., 1.]))
    >>> x.sum().backward(); a.grad  # r w.T - (a w) x.T, w = inv(a.T a) @ ones, r = b - a x
    tensor([[-1.  , -2.  ],
            [-0.5 , -1.  ],
            [ 3.  ,  0.75]])
    """
    a, b = _prep(a), _prep(b)
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    m, n = a.shape
    vec = b.ndim == 1
    B = F.reshape(b, (-1, 1)) if vec else b
    if B.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    rc = np.finfo(a.dtype).eps * builtins.max(m, n) if rcond is None else float(rcond)
    s = svdvals(a)
    sd = s._data
    rank = int(np.sum(sd > rc * sd.max())) if sd.size else 0
    dt = np.result_type(a.dtype, B.dtype)
    x = F.matmul(pinv(F.astype(a, dt, copy=False), rcond=rc), F.astype(B, dt, copy=False))
    if rank == n and m > n:
        r = B - F.matmul(a, x)
        resid = F.sum(F.real(r * F.conj(r)) if _is_c(r) else r * r, axis=0)
    else:
        resid = _make(_B.empty((0,), _real_dtype(dt), like=_like(a._data)))
    if vec:
        x = x[..., 0]
    return x, resid, np.int32(rank), s
