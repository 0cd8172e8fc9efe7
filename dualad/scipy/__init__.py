"""``dualad.scipy``: differentiable counterparts of parts of SciPy (``dualad.scipy.special``,
``dualad.scipy.stats``).

SciPy is an optional dependency (``pip install dualad[scipy]``): it gives the values of
the special functions NumPy lacks (gammaln, digamma, erf, ...).
"""

from . import special, stats  # noqa: F401
