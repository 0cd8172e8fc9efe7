"""``dualad.scipy.stats``: scipy.stats's distributions, differentiable in their arguments
and parameters.

Each distribution is a module-level object with SciPy's methods and call forms
(``norm.logpdf(x, loc=0, scale=1)``, ``gamma.cdf(x, a, loc=0, scale=1)``,
``poisson.logpmf(k, mu, loc=0)``, ``multivariate_normal.logpdf(x, mean, cov)``), the
parameters positional or by keyword and broadcast against the arguments as SciPy
broadcasts them. They are compositions of ``dualad.numpy`` and ``dualad.scipy.special``,
so every mode (reverse, forward, higher order, ``vmap``) differentiates them; the values
are SciPy's formulas, so they agree with SciPy's to rounding. Outside the support a
method gives SciPy's constant (``-inf`` log density, 0 density) and a derivative of 0.

>>> import dualad as da
>>> from dualad.scipy.stats import norm
>>> mu = da.tensor(0.5, requires_grad=True)
>>> norm.logpdf(1.5, loc=mu).backward(); mu.grad  # (x - mu) / sigma**2
tensor(1.)
"""

from .continuous import beta, expon, gamma, laplace, logistic, lognorm, norm, t, uniform
from .discrete import bernoulli, binom, poisson
from .multivariate import dirichlet, multivariate_normal

__all__ = ["norm", "multivariate_normal", "t", "gamma", "beta", "poisson", "dirichlet",
           "bernoulli", "binom", "expon", "laplace", "logistic", "lognorm", "uniform"]
