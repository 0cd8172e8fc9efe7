r"""
A physics-informed network for Poisson's equation, by Taylor mode
=================================================================

We solve :math:`-\Delta u = f` on the unit square with :math:`u = 0` on the boundary,
for :math:`f = 2\pi^2 \sin(\pi x)\sin(\pi y)`, whose solution is
:math:`u^* = \sin(\pi x)\sin(\pi y)`. The trial function is a small tanh network times
:math:`x(1-x)y(1-y)`, which vanishes on the boundary, so the loss is the mean squared
residual :math:`(\Delta u + f)^2` at collocation points inside the square.

The loss needs second derivatives of the network with respect to its input, and its
gradient with respect to the weights goes through them. Taylor mode gives both:
``dualad.functional.laplacian`` computes the Laplacian of a scalar function in one pass of
collapsed Taylor mode (jets of order 2 along every coordinate direction at once, their
second-order coefficients summed as they go), and reverse mode differentiates it. A loss
needs the Laplacian at every collocation point of a batch; the network acts on each row of
the batch alone, so ``laplacian(u, X, batch_ndim=1)`` gives all of them in one pass (the same
directions at every point), which we check against the Hessian's trace point by point.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import minimize

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

rng = np.random.default_rng(0)
sizes = [2, 24, 24, 1]
params = []
for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True):
    params += [da.tensor(rng.standard_normal((n_in, n_out)) / np.sqrt(n_in), requires_grad=True),
               da.tensor(np.zeros(n_out), requires_grad=True)]


def u(X):
    """The trial function on a batch X of points (N, 2): zero on the boundary by construction."""
    h = X
    for W, b in zip(params[0:-2:2], params[1:-2:2], strict=True):
        h = dnp.tanh(h @ W + b)
    net = (h @ params[-2] + params[-1])[..., 0]
    x, y = X[..., 0], X[..., 1]
    return x * (1 - x) * y * (1 - y) * net


def source(X):
    return 2 * np.pi**2 * np.sin(np.pi * X[:, 0]) * np.sin(np.pi * X[:, 1])


def laplacians(X):
    """Delta u at every row of X, in one pass of collapsed Taylor mode."""
    return F.laplacian(u, X, batch_ndim=1)


X_train = rng.uniform(0.0, 1.0, size=(256, 2))
f_train = source(X_train)


def loss():
    return dnp.mean((laplacians(X_train) + f_train) ** 2)


# %%
# The batch's Laplacians against ``laplacian`` (collapsed Taylor mode) at a few points,
# and against the trace of the Hessian, the nested forward-over-reverse way, timed once.
# With two inputs the two cost about the same; the collapsed form's advantage grows with
# the input's dimension (``benchmarks/taylor.py``: on a 50-input MLP of the collapsed-Taylor
# paper, about a hundredth of the Hessian trace's time).
batch = laplacians(X_train[:3]).detach().numpy()
for point, at_point in zip(X_train[:3], batch, strict=True):
    collapsed = float(F.laplacian(lambda z: u(z), point).detach())
    assert np.isclose(collapsed, at_point, rtol=1e-10, atol=1e-12)
point = X_train[0]
start = time.perf_counter()
for _ in range(20):
    collapsed = F.laplacian(lambda z: u(z), point)
t_collapsed = (time.perf_counter() - start) / 20
start = time.perf_counter()
for _ in range(20):
    trace = np.trace(np.asarray(F.hessian(lambda z: u(z), da.tensor(point)).detach()))
t_hessian = (time.perf_counter() - start) / 20
assert np.isclose(float(collapsed.detach()), trace, rtol=1e-10)
print(f"Laplacian at a point: collapsed Taylor {1e3 * t_collapsed:.2f} ms, "
      f"Hessian trace {1e3 * t_hessian:.2f} ms (equal to {abs(float(collapsed.detach()) - trace):.0e})")

# %%
# Training: Adam for a few hundred steps, then L-BFGS (SciPy's, fed the loss and its
# gradient from reverse mode through the collapsed Taylor pass).
lr, beta1, beta2 = 1e-2, 0.9, 0.999
m = [np.zeros(p.shape) for p in params]
v = [np.zeros(p.shape) for p in params]
history = []
for step in range(1, 301):
    for p in params:
        p.grad = None
    value = loss()
    value.backward()
    history.append(float(value.detach()))
    for i, p in enumerate(params):
        g = p.grad.numpy()
        m[i] = beta1 * m[i] + (1 - beta1) * g
        v[i] = beta2 * v[i] + (1 - beta2) * g**2
        step_i = lr * (m[i] / (1 - beta1**step)) / (np.sqrt(v[i] / (1 - beta2**step)) + 1e-8)
        params[i] = da.tensor(p.detach().numpy() - step_i, requires_grad=True)
print(f"after Adam: loss {history[-1]:.2e}")

shapes = [p.shape for p in params]
splits = np.cumsum([int(np.prod(s)) for s in shapes])[:-1]


def loss_and_gradient(flat):
    params[:] = [da.tensor(a.reshape(s), requires_grad=True)
                 for a, s in zip(np.split(flat, splits), shapes, strict=True)]
    value = loss()
    value.backward()
    history.append(float(value.detach()))
    return history[-1], np.concatenate([p.grad.numpy().ravel() for p in params])


flat = np.concatenate([p.detach().numpy().ravel() for p in params])
minimize(loss_and_gradient, flat, jac=True, method="L-BFGS-B", options={"maxiter": 300})
print(f"after L-BFGS: loss {history[-1]:.2e} ({len(history)} loss evaluations in all)")

# %%
# The error against the exact solution on a grid the network never saw.
grid = np.linspace(0.0, 1.0, 61)
GX, GY = np.meshgrid(grid, grid)
points = np.stack([GX.ravel(), GY.ravel()], axis=1)
u_net = u(da.tensor(points)).detach().numpy().reshape(GX.shape)
u_exact = np.sin(np.pi * GX) * np.sin(np.pi * GY)
error = np.abs(u_net - u_exact).max()
print(f"max error on a 61 x 61 grid: {error:.1e} (the solution's maximum is 1)")
assert error < 1e-3

fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
im = axes[0].pcolormesh(GX, GY, u_net, shading="auto")
fig.colorbar(im, ax=axes[0])
axes[0].set_title("the network's solution", fontsize=10)
im = axes[1].pcolormesh(GX, GY, u_net - u_exact, shading="auto", cmap="RdBu_r")
fig.colorbar(im, ax=axes[1])
axes[1].plot(X_train[:, 0], X_train[:, 1], "k.", ms=1.5)
axes[1].set_title("its error (dots: collocation points)", fontsize=10)
axes[2].semilogy(history)
axes[2].axvline(300, color="0.6", lw=0.8)
axes[2].set_xlabel("loss evaluation (Adam, then L-BFGS)")
axes[2].set_title("the loss", fontsize=10)
for ax in axes[:2]:
    ax.set_aspect("equal")
fig.tight_layout()
plt.show()
