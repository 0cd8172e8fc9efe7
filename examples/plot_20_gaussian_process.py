r"""
A Gaussian process fitted by maximizing its marginal likelihood
===============================================================

As in autograd's ``gaussian_process.py``: noisy observations :math:`y` of a
function at inputs :math:`x` are modelled as :math:`y \sim \mathcal N(m,
K_\theta + \sigma^2 I)` with a squared-exponential kernel
:math:`K_\theta(x, x') = s^2 \exp(-(x - x')^2 / (2 \ell^2))`. The
hyperparameters :math:`(m, \log s, \log \ell, \log \sigma)` are fitted by
maximizing ``dualad.scipy.stats.multivariate_normal.logpdf(y, mean, cov)``,
whose gradient flows through the Cholesky factorization inside it. The
gradient is checked against finite differences and forward mode, and the
fitted model's posterior is drawn.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import minimize

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp
from dualad.scipy.stats import multivariate_normal

rng = np.random.default_rng(1)
x = np.sort(rng.uniform(-4.0, 4.0, 30))
y = np.sin(x) + 0.5 * np.cos(2.3 * x) + 0.1 * rng.standard_normal(x.size)


def kernel(a, b, log_scale, log_length):
    d = (a[:, None] - b[None, :]) / dnp.exp(log_length)
    return dnp.exp(2 * log_scale) * dnp.exp(-0.5 * d**2)


def log_likelihood(params):
    mean, log_scale, log_length, log_noise = params[0], params[1], params[2], params[3]
    cov = kernel(x, x, log_scale, log_length) + (dnp.exp(2 * log_noise) + 1e-8) * np.eye(x.size)
    return multivariate_normal.logpdf(y, mean * np.ones(x.size), cov)


def loss(params):
    return -log_likelihood(params)


# %%
# The gradient of the log-likelihood at a starting point, three ways.
start = np.array([0.0, 0.0, 0.0, -1.0])
g = F.grad(log_likelihood)(da.tensor(start)).numpy()
g_fwd = F.jacfwd(log_likelihood)(da.tensor(start)).numpy()
h = 1e-6
g_fd = np.array([(float(log_likelihood(da.tensor(start + h * e)))
                  - float(log_likelihood(da.tensor(start - h * e)))) / (2 * h) for e in np.eye(4)])
print("gradient: reverse", g, "\n          forward", g_fwd, "\n          differences", g_fd)
assert np.allclose(g, g_fd, rtol=1e-6, atol=1e-6) and np.allclose(g, g_fwd, rtol=1e-12)

# %%
# Fit with BFGS (value and gradient from one reverse pass).


def fun(p):
    v, gr = F.value_and_grad(loss)(da.tensor(p))
    return float(v), gr.numpy()


fit = minimize(fun, start, jac=True, method="BFGS")
mean, log_scale, log_length, log_noise = fit.x
print(f"fitted: mean {mean:.3f}, scale {np.exp(log_scale):.3f}, length {np.exp(log_length):.3f},"
      f" noise {np.exp(log_noise):.3f}; log-likelihood {-fun(start)[0]:.2f} -> {-fit.fun:.2f}")
assert fit.success and -fit.fun > -fun(start)[0]
assert np.linalg.norm(fun(fit.x)[1]) < 1e-4  # a stationary point of the likelihood

# %%
# The posterior at new inputs (plain NumPy on the fitted values).
xs = np.linspace(-5.0, 5.0, 200)
K = kernel(x, x, log_scale, log_length).numpy() + np.exp(2 * log_noise) * np.eye(x.size)
Ks = kernel(xs, x, log_scale, log_length).numpy()
Kss = kernel(xs, xs, log_scale, log_length).numpy()
post_mean = mean + Ks @ np.linalg.solve(K, y - mean)
post_var = np.diag(Kss - Ks @ np.linalg.solve(K, Ks.T))
post_std = np.sqrt(np.maximum(post_var, 0.0))

fig, ax = plt.subplots(figsize=(7, 3.6))
ax.fill_between(xs, post_mean - 2 * post_std, post_mean + 2 * post_std, color="C0", alpha=0.2,
                label="posterior ± 2 sd")
ax.plot(xs, post_mean, color="C0", label="posterior mean")
ax.plot(x, y, "k.", label="observations")
ax.set_xlabel("x")
ax.legend(fontsize=8, loc="lower left")
ax.set_title("Gaussian process, hyperparameters by maximum likelihood "
             "(multivariate_normal.logpdf)", fontsize=10)
fig.tight_layout()
plt.show()
