"""The discrete distributions: ``method(k, *shapes, loc=0)`` as in SciPy's
``rv_discrete``. The mass is 0 (``logpmf`` ``-inf``) where ``k - loc`` is not an integer
in the support; the CDF is a step function of ``k`` (its derivative in ``k`` is 0) and
differentiable in the parameters."""

from __future__ import annotations

import math
from typing import Any

from ... import numpy as dnp
from .. import special as sc
from ._base import as_float, parse, safe, valid

__all__ = ["poisson", "bernoulli", "binom"]


class Discrete:
    """A discrete distribution in SciPy's form: ``method(k, *shapes, loc=0)``.

    A subclass sets ``name``, ``shapes``, ``point`` (a ``k`` in the support whatever the
    parameters), and defines ``_hi(*shapes)`` (the support's top, from 0),
    ``_logpmf(k, *shapes)``, ``_cdf(k, *shapes)`` (``k`` an integer in the support) and
    ``_shapes_ok(*shapes)``.
    """

    name = ""
    shapes: tuple[str, ...] = ()
    point = 0.0

    def _args(self, method: str, k: Any, args: Any, kwds: Any) -> tuple[Any, list[Any], Any]:
        *shp, loc = parse(f"{self.name}.{method}", self.shapes + ("loc",), {"loc": 0.0},
                          args, kwds)
        return as_float(k) - loc, shp, self._shapes_ok(*shp)

    def _hi(self, *shp: Any) -> Any:
        return math.inf

    def logpmf(self, k: Any, *args: Any, **kwds: Any) -> Any:
        """The log of the probability mass at ``k``: ``-inf`` off the support."""
        k, shp, ok = self._args("logpmf", k, args, kwds)
        inside = valid(k >= 0, k <= self._hi(*shp), dnp.floor(k) == k)
        r = dnp.where(inside, self._logpmf(safe(inside, k, self.point), *shp), -math.inf)
        return dnp.where(ok, r, math.nan)

    def pmf(self, k: Any, *args: Any, **kwds: Any) -> Any:
        """The probability mass at ``k``: ``exp(logpmf)``."""
        return dnp.exp(self.logpmf(k, *args, **kwds))

    def _tail(self, method: str, k: Any, args: Any, kwds: Any, below: float,
              above: float) -> Any:
        k, shp, ok = self._args(method, k, args, kwds)
        k = dnp.floor(k)
        inside = valid(k >= 0, k < self._hi(*shp))
        r = getattr(self, "_" + method)(safe(inside, k, self.point), *shp)
        r = dnp.where(inside, r, dnp.where(k < 0, below, above))
        return dnp.where(ok, r, math.nan)

    def cdf(self, k: Any, *args: Any, **kwds: Any) -> Any:
        """The cumulative distribution function, ``P(X <= k)``."""
        return self._tail("cdf", k, args, kwds, 0.0, 1.0)

    def logcdf(self, k: Any, *args: Any, **kwds: Any) -> Any:
        """The log of the CDF."""
        return dnp.log(self.cdf(k, *args, **kwds))

    def sf(self, k: Any, *args: Any, **kwds: Any) -> Any:
        """The survival function ``P(X > k)``, computed without ``1 - cdf``'s
        cancellation in the upper tail."""
        return self._tail("sf", k, args, kwds, 1.0, 0.0)

    def logsf(self, k: Any, *args: Any, **kwds: Any) -> Any:
        """The log of the survival function."""
        return dnp.log(self.sf(k, *args, **kwds))

    def __repr__(self) -> str:
        return f"<dualad.scipy.stats.{self.name}>"


class poisson_gen(Discrete):
    """The Poisson distribution: ``poisson.logpmf(k, mu, loc=0)``; the CDF through
    ``gammaincc`` (its derivative in ``mu`` is ``-pmf(k, mu)``).

    Examples
    --------
    >>> from dualad.scipy.stats import poisson
    >>> mu = dualad.tensor(2.0, requires_grad=True)
    >>> poisson.logpmf(3, mu).backward(); mu.grad  # k / mu - 1
    tensor(0.5)
    """

    name = "poisson"
    shapes = ("mu",)

    def _shapes_ok(self, mu: Any) -> Any:
        return mu >= 0

    def _logpmf(self, k: Any, mu: Any) -> Any:
        return sc.xlogy(k, mu) - sc.gammaln(k + 1) - mu

    def _cdf(self, k: Any, mu: Any) -> Any:
        return sc.gammaincc(k + 1, mu)

    def _sf(self, k: Any, mu: Any) -> Any:
        return sc.gammainc(k + 1, mu)


class bernoulli_gen(Discrete):
    """The Bernoulli distribution: ``bernoulli.logpmf(k, p, loc=0)``.

    Examples
    --------
    >>> from dualad.scipy.stats import bernoulli
    >>> bernoulli.pmf([0, 1, 2], 0.25)
    tensor([0.75, 0.25, 0.  ])
    """

    name = "bernoulli"
    shapes = ("p",)

    def _shapes_ok(self, p: Any) -> Any:
        return dnp.logical_and(p >= 0, p <= 1)

    def _hi(self, p: Any) -> Any:
        return 1.0

    def _logpmf(self, k: Any, p: Any) -> Any:
        return sc.xlogy(k, p) + sc.xlog1py(1.0 - k, -p)

    def _cdf(self, k: Any, p: Any) -> Any:
        return 1.0 - p + k * 0.0  # (k < 1 here: k is 0)

    def _sf(self, k: Any, p: Any) -> Any:
        return p + k * 0.0


class binom_gen(Discrete):
    """The binomial distribution: ``binom.logpmf(k, n, p, loc=0)``; the CDF through
    ``betainc`` (differentiable in ``p``; ``n`` counts, and has no derivative).

    Examples
    --------
    >>> from dualad.scipy.stats import binom
    >>> binom.pmf(1, 2, 0.5)
    tensor(0.5)
    """

    name = "binom"
    shapes = ("n", "p")

    def _shapes_ok(self, n: Any, p: Any) -> Any:
        return valid(n >= 0, dnp.floor(n) == n, p >= 0, p <= 1)

    def _hi(self, n: Any, p: Any) -> Any:
        return n

    def _logpmf(self, k: Any, n: Any, p: Any) -> Any:
        comb = sc.gammaln(n + 1) - (sc.gammaln(k + 1) + sc.gammaln(n - k + 1))
        return comb + sc.xlogy(k, p) + sc.xlog1py(n - k, -p)

    def _cdf(self, k: Any, n: Any, p: Any) -> Any:
        return sc.betainc(n - k, k + 1, 1.0 - p)

    def _sf(self, k: Any, n: Any, p: Any) -> Any:
        return sc.betainc(k + 1, n - k, p)


poisson = poisson_gen()
bernoulli = bernoulli_gen()
binom = binom_gen()
