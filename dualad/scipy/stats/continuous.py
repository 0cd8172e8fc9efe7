"""The continuous distributions: each on its standardized variable ``z`` (SciPy's
``_logpdf``, ``_cdf``, ... on ``(x - loc) / scale``), the same formulas as SciPy's, so
that the values agree to rounding, tails included."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as dnp
from .. import special as sc
from ._base import LOG_SQRT_2PI, Continuous

__all__ = ["norm", "t", "gamma", "beta", "expon", "laplace", "logistic", "lognorm",
           "uniform"]

LOG_HALF = math.log(0.5)


class norm_gen(Continuous):
    """The normal distribution: ``norm.logpdf(x, loc=0, scale=1)`` and the rest of
    ``scipy.stats.norm``'s methods; the log CDF through ``log_ndtr``, exact in the far
    tail where the CDF underflows.

    Examples
    --------
    >>> from dualad.scipy.stats import norm
    >>> x = dualad.tensor(1.0, requires_grad=True)
    >>> norm.logpdf(x, 0.0, 2.0).backward(); x.grad  # -(x - loc) / scale**2
    tensor(-0.25)
    >>> norm.logcdf(-40.0)  # where log(norm.cdf(-40.0)) is log(0)
    tensor(-804.60844201)
    """

    name = "norm"

    def _logpdf(self, z: Any) -> Any:
        return -z * z / 2 - LOG_SQRT_2PI

    def _cdf(self, z: Any) -> Any:
        return sc.ndtr(z)

    def _logcdf(self, z: Any) -> Any:
        return sc.log_ndtr(z)

    def _sf(self, z: Any) -> Any:
        return sc.ndtr(-z)

    def _logsf(self, z: Any) -> Any:
        return sc.log_ndtr(-z)


class t_gen(Continuous):
    """Student's t distribution: ``t.logpdf(x, df, loc=0, scale=1)``; the CDF through
    ``stdtr`` (differentiable in ``x``, ``loc`` and ``scale``; a derivative in ``df``
    raises ``NotImplementedError``: it has no closed form).

    Examples
    --------
    >>> from dualad.scipy.stats import t
    >>> t.pdf(0.0, 1.0)  # the Cauchy distribution's 1 / pi
    tensor(0.31830989)
    """

    name = "t"
    shapes = ("df",)

    def _shapes_ok(self, df: Any) -> Any:
        return df > 0

    def _median(self, df: Any) -> Any:
        return 0.0

    def _logpdf(self, z: Any, df: Any) -> Any:
        return (sc.gammaln((df + 1) / 2) - sc.gammaln(df / 2)
                - (0.5 * dnp.log(df * math.pi) + (df + 1) / 2 * dnp.log1p(z * z / df)))

    def _cdf(self, z: Any, df: Any) -> Any:
        return sc.stdtr(df, z)

    def _sf(self, z: Any, df: Any) -> Any:
        return sc.stdtr(df, -z)


class gamma_gen(Continuous):
    """The gamma distribution: ``gamma.logpdf(x, a, loc=0, scale=1)``; the CDF through
    ``gammainc`` (a derivative in ``a`` raises ``NotImplementedError``).

    Examples
    --------
    >>> from dualad.scipy.stats import gamma
    >>> gamma.pdf(1.0, 1.0)  # the exponential distribution's exp(-1)
    tensor(0.36787944)
    """

    name = "gamma"
    shapes = ("a",)
    lo, point = 0.0, 1.0

    def _shapes_ok(self, a: Any) -> Any:
        return a > 0

    def _logpdf(self, z: Any, a: Any) -> Any:
        return sc.xlogy(a - 1.0, z) - z - sc.gammaln(a)

    def _median(self, a: Any) -> Any:
        import scipy.special

        return scipy.special.gammaincinv(a, 0.5)

    def _cdf(self, z: Any, a: Any) -> Any:
        return sc.gammainc(a, z)

    def _sf(self, z: Any, a: Any) -> Any:
        return sc.gammaincc(a, z)


class beta_gen(Continuous):
    """The beta distribution: ``beta.logpdf(x, a, b, loc=0, scale=1)``; the CDF through
    ``betainc`` (a derivative in ``a`` or ``b`` raises ``NotImplementedError``).

    Examples
    --------
    >>> from dualad.scipy.stats import beta
    >>> beta.pdf(0.5, 2.0, 2.0)  # 6 x (1 - x)
    tensor(1.5)
    """

    name = "beta"
    shapes = ("a", "b")
    lo, hi, point = 0.0, 1.0, 0.5

    def _shapes_ok(self, a: Any, b: Any) -> Any:
        return dnp.logical_and(a > 0, b > 0)

    def _logpdf(self, z: Any, a: Any, b: Any) -> Any:
        return sc.xlog1py(b - 1.0, -z) + sc.xlogy(a - 1.0, z) - sc.betaln(a, b)

    def _median(self, a: Any, b: Any) -> Any:
        import scipy.special

        return scipy.special.betaincinv(a, b, 0.5)

    def _cdf(self, z: Any, a: Any, b: Any) -> Any:
        return sc.betainc(a, b, z)

    def _sf(self, z: Any, a: Any, b: Any) -> Any:
        return sc.betaincc(a, b, z)


class expon_gen(Continuous):
    """The exponential distribution: ``expon.logpdf(x, loc=0, scale=1)``.

    Examples
    --------
    >>> from dualad.scipy.stats import expon
    >>> expon.logpdf([-1.0, 1.0])
    tensor([-inf,  -1.])
    """

    name = "expon"
    lo = 0.0

    def _median(self) -> Any:
        return math.log(2.0)

    def _logpdf(self, z: Any) -> Any:
        return -z

    def _cdf(self, z: Any) -> Any:
        return -dnp.expm1(-z)

    def _sf(self, z: Any) -> Any:
        return dnp.exp(-z)

    def _logsf(self, z: Any) -> Any:
        return -z


class laplace_gen(Continuous):
    """The Laplace distribution: ``laplace.logpdf(x, loc=0, scale=1)``.

    Examples
    --------
    >>> from dualad.scipy.stats import laplace
    >>> laplace.cdf([-1.0, 0.0, 1.0])
    tensor([0.18393972, 0.5       , 0.81606028])
    """

    name = "laplace"

    def _logpdf(self, z: Any) -> Any:
        return -dnp.abs(z) - math.log(2.0)

    # each side's exponential at its own side's z (the other side's would overflow, and
    # its discarded derivative be inf * 0)
    @staticmethod
    def _sides(z: Any) -> tuple[Any, Any, Any]:
        right = z > 0
        return right, dnp.where(right, z, 0.0), dnp.where(right, 0.0, z)

    def _cdf(self, z: Any) -> Any:
        right, zr, zl = self._sides(z)
        return dnp.where(right, 1.0 - 0.5 * dnp.exp(-zr), 0.5 * dnp.exp(zl))

    def _logcdf(self, z: Any) -> Any:
        right, zr, zl = self._sides(z)
        return dnp.where(right, dnp.log1p(-0.5 * dnp.exp(-zr)), LOG_HALF + zl)

    def _sf(self, z: Any) -> Any:
        return self._cdf(-z)

    def _logsf(self, z: Any) -> Any:
        return self._logcdf(-z)


class logistic_gen(Continuous):
    """The logistic distribution: ``logistic.logpdf(x, loc=0, scale=1)``.

    Examples
    --------
    >>> from dualad.scipy.stats import logistic
    >>> logistic.cdf(0.0)
    tensor(0.5)
    """

    name = "logistic"

    def _logpdf(self, z: Any) -> Any:
        y = -dnp.abs(z)
        return y - 2.0 * dnp.log1p(dnp.exp(y))

    def _cdf(self, z: Any) -> Any:
        return sc.expit(z)

    def _logcdf(self, z: Any) -> Any:
        return -dnp.logaddexp(0.0, -z)

    def _sf(self, z: Any) -> Any:
        return sc.expit(-z)

    def _logsf(self, z: Any) -> Any:
        return -dnp.logaddexp(0.0, z)


class lognorm_gen(Continuous):
    """The log-normal distribution: ``lognorm.logpdf(x, s, loc=0, scale=1)`` (``log(x /
    scale)`` normal with standard deviation ``s``).

    Examples
    --------
    >>> from dualad.scipy.stats import lognorm
    >>> lognorm.cdf(1.0, 0.5)
    tensor(0.5)
    """

    name = "lognorm"
    shapes = ("s",)
    lo, point, open_lo = 0.0, 1.0, True

    def _shapes_ok(self, s: Any) -> Any:
        return s > 0

    def _logpdf(self, z: Any, s: Any) -> Any:
        lz = dnp.log(z)
        return -lz * lz / (2 * s * s) - dnp.log(s * z) - LOG_SQRT_2PI

    def _cdf(self, z: Any, s: Any) -> Any:
        return sc.ndtr(dnp.log(z) / s)

    def _logcdf(self, z: Any, s: Any) -> Any:
        return sc.log_ndtr(dnp.log(z) / s)

    def _sf(self, z: Any, s: Any) -> Any:
        return sc.ndtr(-dnp.log(z) / s)

    def _logsf(self, z: Any, s: Any) -> Any:
        return sc.log_ndtr(-dnp.log(z) / s)


class uniform_gen(Continuous):
    """The uniform distribution on ``[loc, loc + scale]``: ``uniform.logpdf(x, loc=0,
    scale=1)``.

    Examples
    --------
    >>> from dualad.scipy.stats import uniform
    >>> uniform.pdf([0.5, 3.0], 0.0, 2.0)
    tensor([0.5, 0. ])
    """

    name = "uniform"
    lo, hi, point = 0.0, 1.0, 0.5

    def _logpdf(self, z: Any) -> Any:
        return z * 0.0

    def _cdf(self, z: Any) -> Any:
        return z

    def _sf(self, z: Any) -> Any:
        return 1.0 - z


norm = norm_gen()
t = t_gen()
gamma = gamma_gen()
beta = beta_gen()
expon = expon_gen()
laplace = laplace_gen()
logistic = logistic_gen()
lognorm = lognorm_gen()
uniform = uniform_gen()
