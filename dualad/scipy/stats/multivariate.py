"""The multivariate distributions: ``multivariate_normal`` (through the Cholesky factor
of the covariance) and ``dirichlet``, with SciPy's argument conventions and checks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import numpy as dnp
from .. import special as sc
from ._base import as_float

__all__ = ["multivariate_normal", "dirichlet"]


def _value(x: Any) -> np.ndarray:
    """The values of ``x`` (a Tensor), for SciPy's checks: never differentiated."""
    return np.asarray(x._data)


class multivariate_normal_gen:
    """The multivariate normal distribution: ``multivariate_normal.logpdf(x, mean=None,
    cov=1, allow_singular=False)``, differentiable in ``x``, ``mean`` and ``cov``.

    ``x``'s last axis is the dimension (one point of dimension 1 may be a scalar; a 1-D
    ``x`` is one point, or, in dimension 1, many), and the result is squeezed, as SciPy's
    is. ``cov`` is a matrix, a vector (its diagonal) or a scalar (times the identity). The
    density is computed from the Cholesky factor ``L`` of ``cov``: ``log det cov = 2 sum
    log diag L`` and the Mahalanobis term ``|L^-1 (x - mean)|^2``. A covariance SciPy
    finds singular (an eigenvalue below its tolerance) raises ``LinAlgError`` as SciPy's
    does; with ``allow_singular=True`` a singular one raises ``NotImplementedError``
    (the pseudo-determinant's derivative is not defined where eigenvalues cross 0).

    Examples
    --------
    >>> from dualad.scipy.stats import multivariate_normal
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> multivariate_normal.logpdf(x, [0.0, 0.0], [[2.0, 0.0], [0.0, 4.0]]).backward()
    >>> x.grad  # -cov^-1 (x - mean)
    tensor([-0.5, -0.5])
    """

    def _params(self, x: Any, mean: Any, cov: Any, allow_singular: bool) -> Any:
        cov = as_float(cov)
        mean = None if mean is None else as_float(mean)
        # (the dimension as SciPy reads it: the mean's size, else the matrix's)
        dim = mean.size if mean is not None else cov.shape[0] if cov.ndim == 2 else 1
        mean = dnp.zeros(dim) if mean is None else dnp.reshape(mean, (dim,))
        if cov.ndim < 2:  # a scalar times the identity, or the diagonal
            cov = dnp.eye(dim) * cov
        if mean.ndim != 1 or mean.shape[0] != dim or cov.shape != (dim, dim):
            raise ValueError(f"multivariate_normal: mean of shape {mean.shape} and cov of "
                             f"shape {cov.shape} do not describe one dimension")
        s = np.linalg.eigvalsh(_value(cov))
        eps = (1e3 if s.dtype == np.float32 else 1e6) * np.finfo(s.dtype).eps * np.max(
            np.abs(s))
        if np.min(s) < -eps:
            raise ValueError("The input matrix must be symmetric positive semidefinite.")
        if np.any(s <= eps):
            if not allow_singular:
                raise np.linalg.LinAlgError("When `allow_singular is False`, the input "
                                            "matrix must be symmetric positive definite.")
            raise NotImplementedError("dualad.scipy.stats.multivariate_normal: a singular "
                                      "covariance (allow_singular=True) is not supported")
        x = as_float(x)
        if x.ndim == 0:
            x = dnp.reshape(x, (1, 1) if dim == 1 else (1,))
        elif x.ndim == 1:
            x = x[:, None] if dim == 1 else x[None, :]
        return x, mean, cov, dim

    def logpdf(self, x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False
               ) -> Any:
        """The log of the probability density at the points ``x`` (last axis: the
        dimension)."""
        x, mean, cov, dim = self._params(x, mean, cov, allow_singular)
        chol = dnp.linalg.cholesky(cov)
        dev = dnp.reshape(x - mean, (-1, dim))
        white = dnp.linalg.solve(chol, dev.T)  # L^-1 (x - mean), a column per point
        maha = dnp.sum(white * white, axis=0)
        logdet = 2.0 * dnp.sum(dnp.log(dnp.diagonal(chol)))
        out = -0.5 * (dim * math.log(2.0 * math.pi) + logdet + maha)
        return dnp.squeeze(dnp.reshape(out, x.shape[:-1]))

    def pdf(self, x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False
            ) -> Any:
        """The probability density: ``exp(logpdf)``."""
        return dnp.exp(self.logpdf(x, mean, cov, allow_singular))

    def __repr__(self) -> str:
        return "<dualad.scipy.stats.multivariate_normal>"


class dirichlet_gen:
    """The Dirichlet distribution: ``dirichlet.logpdf(x, alpha)``, differentiable in ``x``
    and ``alpha``.

    As in SciPy, ``x``'s FIRST axis is the dimension (``K`` entries, or ``K - 1`` and the
    last is ``1 - sum``), and an ``x`` off the simplex raises ``ValueError``.

    Examples
    --------
    >>> from dualad.scipy.stats import dirichlet
    >>> dirichlet.pdf([0.2, 0.3, 0.5], [1.0, 1.0, 1.0])  # uniform: Gamma(3)
    tensor(2.)
    """

    def _check(self, x: Any, alpha: Any) -> Any:
        x, alpha = as_float(x), as_float(alpha)
        if x.shape[0] + 1 != alpha.shape[0] and x.shape[0] != alpha.shape[0]:
            raise ValueError("Vector 'x' must have either the same number of entries as, "
                             "or one entry fewer than, parameter vector 'a', but "
                             f"alpha.shape = {alpha.shape} and x.shape = {x.shape}.")
        if x.shape[0] != alpha.shape[0]:
            x = dnp.concatenate([x, (1.0 - dnp.sum(x, axis=0))[None]], axis=0)
        xv, av = _value(x), _value(alpha)
        if np.min(xv) < 0:
            raise ValueError("Each entry in 'x' must be greater than or equal to zero.")
        if np.max(xv) > 1:
            raise ValueError("Each entry in 'x' must be smaller or equal one.")
        if np.any((xv == 0) & (av < 1).reshape((-1,) + (1,) * (xv.ndim - 1))):
            raise ValueError("Each entry in 'x' must be greater than zero if its alpha is "
                             "less than one.")
        if (np.abs(np.sum(xv, 0) - 1.0) > 10e-10).any():
            raise ValueError("The input vector 'x' must lie within the normal simplex. but "
                             f"np.sum(x, 0) = {np.sum(xv, 0)}.")
        return x, alpha

    def logpdf(self, x: Any, alpha: Any) -> Any:
        """The log of the probability density at ``x`` (first axis: the components)."""
        x, alpha = self._check(x, alpha)
        lnb = dnp.sum(sc.gammaln(alpha)) - sc.gammaln(dnp.sum(alpha))
        a = dnp.reshape(alpha, (-1,) + (1,) * (x.ndim - 1))
        return dnp.sum(sc.xlogy(a - 1.0, x), axis=0) - lnb

    def pdf(self, x: Any, alpha: Any) -> Any:
        """The probability density: ``exp(logpdf)``."""
        return dnp.exp(self.logpdf(x, alpha))

    def __repr__(self) -> str:
        return "<dualad.scipy.stats.dirichlet>"


multivariate_normal = multivariate_normal_gen()
dirichlet = dirichlet_gen()
