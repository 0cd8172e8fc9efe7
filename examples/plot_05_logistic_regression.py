"""
Training a classifier: logistic regression by gradient descent
==============================================================

The everyday use of reverse mode: a scalar loss of many parameters, one
backward pass per step for the whole gradient. We fit a logistic-regression
model with quadratic features to synthetic two-class data, check the
gradient against its closed form, and plot the loss curve and the learned
decision boundary.
"""

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.numpy as dnp

rng = np.random.default_rng(0)
n = 400
points = rng.uniform(-2, 2, size=(n, 2))
labels = (points[:, 0] ** 2 + 1.5 * points[:, 1] ** 2 < 2.2).astype(float)  # inside an ellipse
labels = np.where(rng.random(n) < 0.05, 1 - labels, labels)  # 5% label noise


def features(p):
    x, y = p[:, 0], p[:, 1]
    return np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=1)


X = features(points)


def loss_fn(w):
    z = da.as_tensor(X) @ w
    # mean binary cross-entropy, in a stable form: log(1 + e^z) - y z
    return dnp.mean(dnp.logaddexp(0.0, z) - labels * z)


# %%
# The gradient, checked once against its closed form :math:`X^T (\sigma(X w) - y) / n`.
w = da.tensor(rng.standard_normal(6) * 0.1, requires_grad=True)
loss_fn(w).backward()
w0 = w.detach().numpy()
closed = X.T @ (1 / (1 + np.exp(-X @ w0)) - labels) / n
print("gradient error against the closed form:", np.abs(w.grad.numpy() - closed).max())
assert np.allclose(w.grad.numpy(), closed, rtol=1e-12, atol=1e-15)

# %%
# Gradient descent: each step is one forward pass recording the graph and one
# backward pass.
losses = []  # (the step, 0.5, is small enough that the loss falls monotonically)
w = da.tensor(w0, requires_grad=True)
for _ in range(300):
    loss = loss_fn(w)
    loss.backward()
    with da.no_grad():
        w -= 0.5 * w.grad  # an in-place update of a leaf, outside recording
    w.grad = None
    losses.append(loss.item())

accuracy = np.mean(((X @ w.detach().numpy()) > 0) == (labels > 0.5))
print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, training accuracy {accuracy:.1%}")
assert losses[-1] < 0.6 * losses[0] and accuracy > 0.85
assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:], strict=False))  # monotone

# %%
# The loss curve and the boundary :math:`w \cdot \phi(x, y) = 0`.
fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
a1.plot(losses)
a1.set_xlabel("step")
a1.set_ylabel("mean cross-entropy")
a1.set_title("training loss", fontsize=10)
gx, gy = np.meshgrid(np.linspace(-2, 2, 200), np.linspace(-2, 2, 200))
grid = features(np.stack([gx.ravel(), gy.ravel()], axis=1)) @ w.detach().numpy()
a2.contourf(gx, gy, grid.reshape(gx.shape) > 0, levels=1, colors=["#fde2e2", "#dbeafe"])
a2.contour(gx, gy, grid.reshape(gx.shape), levels=[0], colors="k", linewidths=1)
a2.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm_r", s=8, edgecolors="none")
a2.set_aspect("equal")
a2.set_title(f"decision boundary (accuracy {accuracy:.0%})", fontsize=10)
fig.tight_layout()
plt.show()
