r"""
Black-box variational inference with ``norm``
==============================================

As in autograd's ``black_box_svi.py``: approximate a two-dimensional,
funnel-shaped posterior

.. math:: \log p(z) = \log \mathcal N(z_1; 0, 1.35) + \log \mathcal N(z_2; 0, e^{z_1})

by a Gaussian with a diagonal covariance, :math:`q = \mathcal N(\mu,
\mathrm{diag}(e^{2\lambda}))`, maximizing the evidence lower bound
:math:`\mathbb E_q[\log p(z)] + H(q)` by stochastic gradients with the
reparametrization :math:`z = \mu + e^{\lambda} \varepsilon`. Both densities are
written with ``dualad.scipy.stats.norm.logpdf``; the gradient of the Monte
Carlo estimate flows through the samples into :math:`\mu` and :math:`\lambda`.
"""

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp
from dualad.scipy.stats import norm


def log_density(z):
    """The funnel, for a batch of samples z of shape (n, 2)."""
    z1, z2 = z[:, 0], z[:, 1]
    return norm.logpdf(z1, 0.0, 1.35) + norm.logpdf(z2, 0.0, dnp.exp(z1))


def elbo(params, eps):
    """A Monte Carlo estimate of the ELBO with the fixed standard-normal draws eps."""
    mu, log_sd = params[:2], params[2:]
    z = mu + dnp.exp(log_sd) * eps
    entropy = dnp.sum(log_sd) + 0.5 * 2 * (1.0 + np.log(2 * np.pi))
    return dnp.mean(log_density(z)) + entropy


rng = np.random.default_rng(0)

# %%
# The estimator's gradient for fixed draws, against finite differences and forward mode;
# and the entropy term against the expectation of -log q by norm.logpdf itself.
p0 = np.array([-1.0, -1.0, -5.0, -5.0])
eps = rng.standard_normal((200, 2))
g = F.grad(elbo)(da.tensor(p0), eps).numpy()
h = 1e-6
fd = np.array([(float(elbo(da.tensor(p0 + h * e), eps)) - float(elbo(da.tensor(p0 - h * e), eps)))
               / (2 * h) for e in np.eye(4)])
assert np.allclose(g, fd, rtol=1e-6, atol=1e-6)
assert np.allclose(F.jacfwd(lambda p: elbo(p, eps))(da.tensor(p0)).numpy(), g, rtol=1e-12)
big = rng.standard_normal((200000, 2))
z = p0[:2] + np.exp(p0[2:]) * big
neg_log_q = -np.mean(np.sum(norm.logpdf(z, p0[:2], np.exp(p0[2:])).numpy(), axis=1))
entropy = float(elbo(da.tensor(p0), big) - dnp.mean(log_density(da.tensor(z))))
print(f"entropy: closed form {entropy:.4f}, Monte Carlo {neg_log_q:.4f}")
assert abs(entropy - neg_log_q) < 1e-2

# %%
# Adam on fresh draws each step.
params = p0.copy()
m, v = np.zeros(4), np.zeros(4)
lr, b1, b2 = 0.1, 0.9, 0.999
history = []
for step in range(1, 301):
    eps = rng.standard_normal((100, 2))
    value, grad = F.value_and_grad(elbo)(da.tensor(params), eps)
    grad = -grad.numpy()  # (maximize)
    m = b1 * m + (1 - b1) * grad
    v = b2 * v + (1 - b2) * grad**2
    params -= lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + 1e-8)
    history.append(float(value))
print(f"ELBO {np.mean(history[:10]):.3f} -> {np.mean(history[-20:]):.3f}; "
      f"q: mean {np.round(params[:2], 3)}, sd {np.round(np.exp(params[2:]), 3)}")
assert np.mean(history[-20:]) > np.mean(history[:10]) + 1.0

# %%
# The funnel and the fitted Gaussian.
u = np.linspace(-4.0, 2.0, 160)
w = np.linspace(-4.0, 4.0, 160)
U, W = np.meshgrid(u, w)
pts = np.stack([U.ravel(), W.ravel()], axis=1)
target = np.exp(log_density(da.tensor(pts)).numpy()).reshape(U.shape)
fitted = np.exp(np.sum(norm.logpdf(pts, params[:2], np.exp(params[2:])).numpy(), axis=1)
                ).reshape(U.shape)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
ax1.contour(U, W, target, levels=8, colors="k", linewidths=0.8)
ax1.contour(U, W, fitted, levels=8, colors="C3", linewidths=0.8)
ax1.set_xlabel("$z_1$")
ax1.set_ylabel("$z_2$")
ax1.set_title("target (black) and fitted q (red)", fontsize=10)
ax2.plot(history, lw=0.8)
ax2.set_xlabel("Adam step")
ax2.set_ylabel("ELBO estimate")
ax2.set_title("black-box VI with norm.logpdf", fontsize=10)
fig.tight_layout()
plt.show()
