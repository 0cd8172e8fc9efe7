"""The ``dualad.scipy`` part of the coverage table: every public function of
``dualad.scipy.special``, ``stats``, ``linalg``, ``signal`` and ``integrate``, and in
which arguments it is differentiable.

``tools/numpy_coverage.py`` appends :func:`markdown` to the NumPy table
(``docs/numpy_coverage.md``); ``tests/scipy/test_scipy_coverage.py`` fails on a public name
this table does not know, or a note for a name that is gone.
"""

from __future__ import annotations

import importlib
from typing import Any

NAMESPACES = ("special", "stats", "linalg", "signal", "integrate")

_NO_CLOSED_FORM = "NotImplementedError: no closed-form derivative"

# name: (differentiable in, what raises or is left out); every other function of these
# namespaces is differentiable in all its array arguments
PARTIAL: dict[str, tuple[str, str]] = {
    "special.polygamma": ("x", "n is an integer order"),
    "special.multigammaln": ("a", "d is an integer dimension"),
    "special.gammainc": ("x", f"a: {_NO_CLOSED_FORM}"),
    "special.gammaincc": ("x", f"a: {_NO_CLOSED_FORM}"),
    "special.betainc": ("x", f"a, b: {_NO_CLOSED_FORM}"),
    "special.betaincc": ("x", f"a, b: {_NO_CLOSED_FORM}"),
    "special.stdtr": ("t", f"df: {_NO_CLOSED_FORM}"),
    "special.jv": ("x", f"the order v: {_NO_CLOSED_FORM}"),
    "special.yv": ("x", f"the order v: {_NO_CLOSED_FORM}"),
    "special.iv": ("x", f"the order v: {_NO_CLOSED_FORM}"),
    "special.ive": ("x", f"the order v: {_NO_CLOSED_FORM}"),
    "special.jn": ("x", "n is an integer order"),
    "special.yn": ("x", "n is an integer order"),
    "special.logsumexp": ("a, b", "return_sign's sign carries no derivative"),
    "stats.gamma": ("x, loc, scale; a in logpdf and pdf",
                    f"a in cdf, logcdf, sf, logsf: {_NO_CLOSED_FORM}"),
    "stats.beta": ("x, loc, scale; a, b in logpdf and pdf",
                   f"a, b in cdf, logcdf, sf, logsf: {_NO_CLOSED_FORM}"),
    "stats.t": ("x, loc, scale; df in logpdf and pdf",
                f"df in cdf, logcdf, sf, logsf: {_NO_CLOSED_FORM}"),
    "stats.poisson": ("mu, loc", "k is an integer count"),
    "stats.binom": ("p, loc", "k and n are integer counts"),
    "stats.bernoulli": ("p, loc", "k is 0 or 1"),
    "linalg.lu_factor": ("a", "the pivots are piecewise constant (no derivative)"),
    "linalg.sqrtm": ("a", "LinAlgError where the square root is not differentiable"),
    "linalg.logm": ("a", "LinAlgError where the logarithm is not differentiable"),
    "integrate.odeint": ("y0, args, t (to any order)",
                         "Dfun=, col_deriv=, full_output=: NotImplementedError"),
}

# the other functions of the namespaces that carry no derivative
NONDIFF = {"signal.choose_conv_method": "returns the method's name",
           "special.gammasgn": "piecewise constant (a sign)",
           "linalg.LinAlgError": "an exception class"}


def public(namespace: str) -> list[str]:
    """The public functions and distributions of ``dualad.scipy.<namespace>``."""
    mod = importlib.import_module(f"dualad.scipy.{namespace}")
    return [f"{namespace}.{n}" for n in mod.__all__ if not n.startswith("_")]


# functions with a derivative rule of their own (a primitive behind a wrapper); the
# Primitives themselves are formula primitives, the rest compositions
RULES = {"special.polygamma", "special.gammainc", "special.gammaincc", "special.betainc",
         "special.betaincc", "special.stdtr", "special.jv", "special.yv", "special.iv",
         "special.ive", "special.jn", "special.yn", "linalg.sqrtm", "linalg.logm",
         "integrate.odeint"}


def _how(name: str, obj: Any) -> str:
    from ..core.dispatch import Primitive

    if isinstance(obj, Primitive):
        return "elementwise formula"
    if name in RULES:
        return "rule"
    if name.startswith("stats."):
        methods = [m for m in ("logpdf", "pdf", "logpmf", "pmf", "cdf", "logcdf", "sf",
                               "logsf") if hasattr(obj, m)]
        return "distribution: " + ", ".join(methods)
    return "composition"


def table() -> list[tuple[str, str, str]]:
    """(``dualad.scipy.<name>``, differentiable in, how / what raises), for every
    public name of the namespaces."""
    rows = []
    for ns in NAMESPACES:
        mod = importlib.import_module(f"dualad.scipy.{ns}")
        for name in public(ns):
            obj = getattr(mod, name.split(".", 1)[1])
            if name in NONDIFF:
                rows.append((name, "non-differentiable", NONDIFF[name]))
                continue
            where, note = PARTIAL.get(name, ("every argument", ""))
            how = _how(name, obj)
            rows.append((name, where, how + (f"; {note}" if note else "")))
    return rows


def markdown() -> str:
    """The ``dualad.scipy`` section of ``docs/numpy_coverage.md``."""
    out = ["", "## dualad.scipy", "",
           "What each function of `dualad.scipy.special`, `stats`, `linalg`, `signal` and",
           "`integrate` is differentiable in, in every mode unless said. A derivative that",
           "does not exist or has no closed form raises",
           "(`NotImplementedError`, `LinAlgError`): it is never silently zero.", ""]
    for ns in NAMESPACES:
        out += ["", f"### dualad.scipy.{ns}", "",
                "| name | differentiable in | how / what raises |", "|---|---|---|"]
        for name, where, how in table():
            if name.startswith(ns + "."):
                out.append(f"| `dualad.scipy.{name}` | {where} | {how} |")
    return "\n".join(out) + "\n"
