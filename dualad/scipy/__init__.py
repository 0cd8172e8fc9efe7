"""``dualad.scipy``: differentiable counterparts of parts of SciPy (``special``, ``linalg``, ``signal``).

SciPy is an optional dependency (``pip install dualad[scipy]``): it gives the values of
the special functions NumPy lacks (gammaln, digamma, erf, ...).
"""

from . import linalg, signal, special  # noqa: F401
