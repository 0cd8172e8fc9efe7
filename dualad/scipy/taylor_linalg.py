"""Taylor-coefficient rules of ``dualad.scipy.linalg``'s primitives, ``sqrtm`` and ``logm``.

The series convention is :mod:`dualad.rules.taylor`'s. Each rule solves its defining
identity coefficient by coefficient; the newest coefficient enters linearly, through the
same linear map as the first-order rule's, so each step is that rule's JVP applied to a
right-hand side made of lower coefficients:

- ``sqrtm``: ``X X = A`` gives ``X_0 X_k + X_k X_0 = A_k - sum_{0<j<k} X_j X_{k-j}``, the
  Sylvester equation the first-order rule solves;
- ``logm``: ``exp(X) = A`` gives ``L_exp(X_0, X_k) = A_k - N_k``, ``N_k`` the coefficient
  ``k`` of ``exp(X_0 + ... + X_{k-1} t^{k-1})``: the top-right block of ``expm`` of the block
  upper-triangular Toeplitz matrix of those coefficients (its blocks are the Taylor
  coefficients of ``exp(X(t))``: ``t`` stands for the nilpotent block shift).
"""

from __future__ import annotations

from typing import Any

from .. import numpy as dnp
from ..core.tensor import Tensor
from ..rules.taylor import Rule, Series, _sum
from . import linalg as SL


def _tensors(*xs: Any) -> bool:
    return any(isinstance(x, Tensor) for x in xs)


def _plain(out: Any, keep: bool) -> Any:
    return out._data if isinstance(out, Tensor) and not keep else out


def _through_jvp(prim: Any, a0: Any, x0: Any, rhs: Any) -> Any:
    """The first-order rule's linear map on ``rhs`` (the tangent), at ``A_0``, ``X_0``."""
    return prim.jvp((dnp.asarray(a0),), (dnp.asarray(rhs),), dnp.asarray(x0))


def sqrtm(a: Series) -> Series:
    """The principal square root from ``X X = A``: a Sylvester equation per coefficient."""
    keep = _tensors(*a)
    x0 = _plain(SL.sqrtm_p(a[0]), keep)
    xs = [x0]
    for k in range(1, len(a)):
        rhs = a[k] - _sum(xs[j] @ xs[k - j] for j in range(1, k)) if k > 1 else a[k]
        xs.append(_plain(_through_jvp(SL.sqrtm_p, a[0], x0, rhs), keep))
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
    return SL.expm(dnp.concatenate(rows, axis=0))[:n, k * n:]


def logm(a: Series) -> Series:
    """The principal logarithm from ``exp(X) = A``: ``L_exp(X_0, X_k) = A_k - N_k``, solved
    by the first-order rule's inverse Frechet derivative."""
    keep = _tensors(*a)
    x0 = _plain(SL.logm_p(a[0]), keep)
    xs = [x0]
    for k in range(1, len(a)):
        rhs = a[k] - _plain(_exp_coefficient(xs, k), keep) if k > 1 else a[k]
        xs.append(_plain(_through_jvp(SL.logm_p, a[0], x0, rhs), keep))
    return xs


SCIPY_LINALG_TAYLOR_RULES: dict[str, Rule] = {
    "sqrtm": sqrtm,
    "logm": logm,
}
"""The Taylor rules of ``dualad.scipy.linalg``'s primitives, by primitive name."""
