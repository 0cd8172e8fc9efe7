"""The machinery every distribution of ``dualad.scipy.stats`` shares: SciPy's argument
forms (shapes, then ``loc`` and ``scale``, positional or by keyword), the standardized
variable, the support, and the double ``where`` that keeps out-of-support points out of
the derivative.

A distribution is written on its standardized variable ``z = (x - loc) / scale`` (as
SciPy's ``rv_continuous`` is), as a composition of ``dualad.numpy`` and
``dualad.scipy.special``: every mode differentiates it without rules of its own.

Outside the support a method's value is a constant (``-inf``, ``0``, ``1``), and its
derivative 0. The formula is evaluated there too (``where`` evaluates both branches) but at
a point inside the support: a formula evaluated at the point itself could be ``nan`` or
``inf`` there (``log`` of a negative number), and ``0 * nan`` in the chain rule is ``nan``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import numpy as dnp

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def as_float(x: Any) -> Any:
    """``x`` as a Tensor of a floating dtype (integers and bools become float64)."""
    x = dnp.asarray(x)
    return x if x.dtype.kind in "fc" else x.astype(np.float64)


def parse(name: str, names: tuple[str, ...], defaults: dict[str, Any], args: tuple[Any, ...],
          kwds: dict[str, Any]) -> list[Any]:
    """The values of ``names`` from SciPy's call form ``method(x, *args, **kwds)``: the
    shape parameters, then ``loc`` (and ``scale``), positional or by keyword."""
    if len(args) > len(names):
        raise TypeError(f"{name}: takes at most {len(names)} parameters after the argument "
                        f"({', '.join(names)}), got {len(args)}")
    vals = dict(zip(names, args, strict=False))
    for k, v in kwds.items():
        if k not in names:
            raise TypeError(f"{name}: unexpected keyword argument {k!r}")
        if k in vals:
            raise TypeError(f"{name}: got multiple values for argument {k!r}")
        vals[k] = v
    missing = [n for n in names if n not in vals and n not in defaults]
    if missing:
        raise TypeError(f"{name}: missing required argument(s) {', '.join(missing)}")
    return [as_float(vals.get(n, defaults.get(n))) for n in names]


def valid(*conds: Any) -> Any:
    """The points where every condition holds (a bool Tensor)."""
    ok = conds[0]
    for c in conds[1:]:
        ok = dnp.logical_and(ok, c)
    return ok


def safe(inside: Any, z: Any, point: float) -> Any:
    """``z`` inside the support, ``point`` (inside it too) elsewhere: the argument at which
    a formula is evaluated in the branch ``where`` then discards."""
    return dnp.where(inside, z, point)


class Continuous:
    """A continuous distribution in SciPy's form: ``method(x, *shapes, loc=0, scale=1)``.

    A subclass sets ``name``, ``shapes`` (names), ``lo``/``hi`` (the standardized support),
    ``point`` (a point inside it), and defines ``_logpdf(z, *shapes)`` and whichever of
    ``_cdf``, ``_logcdf``, ``_sf``, ``_logsf`` SciPy offers (each on ``z`` inside the
    support); ``_shapes_ok(*shapes)`` says where the shape parameters are valid (SciPy
    gives ``nan`` elsewhere). ``open_lo``: the density's formula does not reach ``lo``
    (``log(z)`` at 0), so ``lo`` itself counts as outside the support.
    """

    name = ""
    shapes: tuple[str, ...] = ()
    lo, hi, point = -math.inf, math.inf, 0.0
    open_lo = False

    def _shapes_ok(self, *shapes: Any) -> Any:
        return True

    def _args(self, method: str, x: Any, args: Any, kwds: Any) -> tuple[Any, list[Any], Any]:
        *shp, loc, scale = parse(f"{self.name}.{method}", self.shapes + ("loc", "scale"),
                                 {"loc": 0.0, "scale": 1.0}, args, kwds)
        z = (as_float(x) - loc) / scale
        ok, shapes_ok = scale > 0, self._shapes_ok(*shp)
        if shapes_ok is not True:
            ok = dnp.logical_and(ok, shapes_ok)
        return z, shp, (ok, scale)

    def _inside(self, z: Any) -> Any:
        lower = z > self.lo if self.open_lo else z >= self.lo
        return dnp.logical_and(lower, z <= self.hi)

    @staticmethod
    def _nan_where_invalid(r: Any, ok: Any) -> Any:
        return dnp.where(ok, r, math.nan)

    def logpdf(self, x: Any, *args: Any, **kwds: Any) -> Any:
        """The log of the probability density at ``x``: ``-inf`` outside the support."""
        z, shp, (ok, scale) = self._args("logpdf", x, args, kwds)
        inside = self._inside(z)
        r = self._logpdf(safe(inside, z, self.point), *shp) - dnp.log(scale)
        return self._nan_where_invalid(dnp.where(inside, r, -math.inf), ok)

    def pdf(self, x: Any, *args: Any, **kwds: Any) -> Any:
        """The probability density at ``x``: ``exp(logpdf)``."""
        return dnp.exp(self.logpdf(x, *args, **kwds))

    def _tail(self, method: str, x: Any, args: Any, kwds: Any, below: float,
              above: float) -> Any:
        z, shp, (ok, _) = self._args(method, x, args, kwds)
        inside = self._inside(z)
        r = getattr(self, "_" + method)(safe(inside, z, self.point), *shp)
        r = dnp.where(dnp.logical_not(inside), dnp.where(z > self.hi, above, below), r)
        return self._nan_where_invalid(r, ok)

    def cdf(self, x: Any, *args: Any, **kwds: Any) -> Any:
        """The cumulative distribution function, ``P(X <= x)``."""
        return self._tail("cdf", x, args, kwds, 0.0, 1.0)

    def logcdf(self, x: Any, *args: Any, **kwds: Any) -> Any:
        """The log of the CDF, computed where the CDF itself would underflow."""
        return self._tail("logcdf", x, args, kwds, -math.inf, 0.0)

    def sf(self, x: Any, *args: Any, **kwds: Any) -> Any:
        """The survival function ``1 - cdf``, computed without the cancellation."""
        return self._tail("sf", x, args, kwds, 1.0, 0.0)

    def logsf(self, x: Any, *args: Any, **kwds: Any) -> Any:
        """The log of the survival function."""
        return self._tail("logsf", x, args, kwds, 0.0, -math.inf)

    # SciPy's defaults: each log from the tail that keeps its digits, split at the median
    # (log(cdf) below it, log1p(-sf) above); each branch evaluated on its own side only
    # (the other side's log could be log(0), and its discarded derivative inf * 0)
    def _median(self, *shp: Any) -> Any:
        return self.point

    def _split(self, z: Any, shp: Any) -> tuple[Any, Any, Any]:
        m = self._median(*[np.asarray(s._data) for s in shp])
        low = z < m
        return low, dnp.where(low, z, m), dnp.where(low, m, z)

    def _logcdf(self, z: Any, *shp: Any) -> Any:
        low, zl, zh = self._split(z, shp)
        return dnp.where(low, dnp.log(self._cdf(zl, *shp)), dnp.log1p(-self._sf(zh, *shp)))

    def _logsf(self, z: Any, *shp: Any) -> Any:
        low, zl, zh = self._split(z, shp)
        return dnp.where(low, dnp.log1p(-self._cdf(zl, *shp)), dnp.log(self._sf(zh, *shp)))

    def __repr__(self) -> str:
        return f"<dualad.scipy.stats.{self.name}>"
