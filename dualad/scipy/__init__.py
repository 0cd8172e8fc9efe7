"""``dualad.scipy``: differentiable counterparts of parts of SciPy (``special``, ``stats``,
``linalg``, ``signal``, ``integrate``).

SciPy is an optional dependency (``pip install dualad[scipy]``): it gives the values of
the special functions NumPy lacks (gammaln, digamma, erf, ...). The submodules load on
first use, as SciPy's do: ``special`` sits below ``dualad.numpy`` (its functions are
primitives NumPy's dispatch reaches), ``stats``, ``linalg``, ``signal`` and ``integrate`` above it
(compositions of dualad.numpy; ``integrate.odeint`` a rule of its own).
"""

import importlib
from typing import Any

SUBMODULES = ("integrate", "linalg", "signal", "special", "stats")
__all__ = list(SUBMODULES)


def _require(module: str, what: str) -> Any:
    """SciPy's ``module`` (``"scipy.linalg"``), or ImportError saying that ``what`` needs
    SciPy and which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:  # pragma: no cover - exercised only without SciPy
        raise ImportError(f"{what} needs SciPy: pip install 'dualad[scipy]'") from e


def __getattr__(name: str) -> Any:
    if name in SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
