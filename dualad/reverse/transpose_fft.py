"""Transpose rules of the fft family and of the linear linalg primitives.

Adjoints for the real inner product ``<a, b> = Re(sum(conj(a) * b))``, written
with dualad operations so they are differentiable and batched (see
``dualad.reverse.transpose``).

* ``fft(norm)``'s adjoint is ``ifft`` with the dual norm (backward <-> forward,
  ortho <-> ortho), and vice versa; a transform length ``n`` different from the
  input length crops or zero-pads the input, whose adjoint pads or crops back.
* ``rfft`` keeps the non-negative half of the spectrum of a real signal: its
  adjoint is ``irfft`` (dual norm) of the cotangent weighted by ``1`` at the
  zero/Nyquist frequencies and ``1/2`` elsewhere (``irfft`` counts those twice).
* ``irfft`` (C -> R, Hermitian): its adjoint is ``w_k * rfft(ct)_k`` with the
  dual norm, ``w_0 = 1``, ``w_k = 2`` for ``0 < k < n/2``, ``w_{n/2} = 1`` for
  even ``n``.
* ``solve(A, b)`` is linear in ``b``; its adjoint is ``ct -> solve(A^H, ct)``.
* ``undefined_derivative`` (a derivative that does not exist) raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import like as _like
from ..core.dispatch import apply
from ..rules import fft as FT
from ..rules import linalg as LA
from ..rules import vocabulary as F
from .transpose import unbroadcast


def _fit(r: Any, m: int, axis: int) -> Any:
    """Crop or zero-pad ``r`` along ``axis`` to length ``m`` (adjoint of the reverse)."""
    cur = r.shape[axis]
    if cur > m:
        return F.getitem(r, (slice(None),) * axis + (slice(0, m),))
    if cur < m:
        width = [(0, 0)] * r.ndim
        width[axis] = (0, m - cur)
        return F.pad(r, width)
    return r


def _along(w: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    return w.reshape((-1,) + (1,) * (ndim - 1 - axis))


def _c2c(inverse_prim: Any) -> Any:
    def rule(ct: Any, args: Any, *, n: int, axis: int, norm: str) -> list[Any]:
        (a,) = args
        r = apply(inverse_prim, ct, n=n, axis=axis, norm=FT.DUAL_NORM[norm])
        return [_fit(r, a.shape[axis], axis)]

    return rule


def _on(w: Any, t: Any) -> Any:
    """The NumPy weights ``w`` on ``t``'s kind (a CuPy cotangent cannot meet them)."""
    a = getattr(t, "_data", t)
    return w if a.__class__ is np.ndarray else _B.asarray_like(w, like=_like(a))


def _rfft_t(ct: Any, args: Any, *, n: int, axis: int, norm: str) -> list[Any]:
    (a,) = args
    h = n // 2 + 1
    w = np.full(h, 0.5)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    ct = ct * _along(_on(w.astype(FT._real_dtype(ct.dtype)), ct), ct.ndim, axis)
    r = apply(FT.IRFFT, ct, n=n, axis=axis, norm=FT.DUAL_NORM[norm])
    return [_fit(r, a.shape[axis], axis)]


def _irfft_t(ct: Any, args: Any, *, n: int, axis: int, norm: str) -> list[Any]:
    (a,) = args
    if ct.dtype.kind == "c":  # the adjoint of embedding R in C
        ct = F.real(ct)
    h = n // 2 + 1
    w = np.full(h, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    r = apply(FT.RFFT, ct, n=n, axis=axis, norm=FT.DUAL_NORM[norm])
    r = r * _along(_on(w.astype(FT._real_dtype(ct.dtype)), r), r.ndim, axis)
    return [_fit(r, a.shape[axis], axis)]


def _solve_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    ah = F.conj(F.swapaxes(a, -1, -2))
    return [None, unbroadcast(apply(LA.solve_p, ah, ct), b.shape)]


def _undefined_t(ct: Any, args: Any, *, shape: Any, dtype: Any, msg: str) -> list[Any]:
    raise LA.LinAlgError(msg)


FT.FFT.transpose = _c2c(FT.IFFT)
FT.IFFT.transpose = _c2c(FT.FFT)
FT.RFFT.transpose = _rfft_t
FT.IRFFT.transpose = _irfft_t
LA.solve_p.transpose = _solve_t
LA.undefined.transpose = _undefined_t
