r"""
Gradient descent on complex numbers: the conjugate Wirtinger gradient
=====================================================================

For a real loss :math:`L` of a complex :math:`z = x + iy`, dualad's gradient is
:math:`\partial L/\partial x + i\, \partial L/\partial y` — twice the *conjugate* Wirtinger
derivative :math:`\partial L/\partial \bar z`. It points uphill in the plane, so plain gradient descent
``z <- z - lr * z.grad`` works on complex parameters as on real ones. We find
the square roots of :math:`c = 1 + 2i` by minimizing :math:`|z^2 - c|^2`, and show
what goes wrong with the other convention (:math:`\partial L/\partial z`, the conjugate).
"""

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.numpy as dnp

c = 1 + 2j


def L(z):
    return dnp.abs(z**2 - c) ** 2


def gradient(z0):
    z = da.tensor(z0, requires_grad=True)
    L(z).backward()
    return z.grad.item()


# %%
# The gradient's parts are the partial derivatives along x and y (checked by
# finite differences), and in closed form it is :math:`2\, \overline{2z}\, (z^2 - c)`.
z0 = -1.5 + 0.4j
h = 1e-6
Lf = lambda w: L(da.tensor(w)).item()
fd = (Lf(z0 + h) - Lf(z0 - h)) / (2 * h) + 1j * (Lf(z0 + 1j * h) - Lf(z0 - 1j * h)) / (2 * h)
g0 = gradient(z0)
print(f"gradient at z0: dualad {g0:.8f}, finite differences {fd:.8f}")
assert np.isclose(g0, fd, rtol=1e-7)
assert np.isclose(g0, 2 * np.conj(2 * z0) * (z0**2 - c))


def descend(z, step, convention, n=200):
    path = [z]
    for _ in range(n):
        g = gradient(z)
        z = z - step * (g if convention == "dualad" else np.conj(g))
        path.append(z)
        if abs(z) > 2.5:  # left the picture: it diverges
            break
    return np.array(path)


# %%
# Descent from a few starting points. The right gradient walks to the nearest
# root; its conjugate points in a wrong direction (mirrored in the real axis)
# and does not converge.
starts = [-1.5 + 0.4j, 1.6 - 1.2j, 0.3 + 1.8j, -0.6 - 1.5j]
roots = np.sqrt(c) * np.array([1, -1])
paths = [descend(z, 0.01, "dualad") for z in starts]
wrong = descend(starts[0], 0.01, "conjugate", n=60)
for z, p in zip(starts, paths, strict=True):
    nearest = roots[np.argmin(abs(roots - p[-1]))]
    print(f"from {z:.2f}: reached {p[-1]:.6f}  (a root of z^2 = {c}: {nearest:.6f})")
    assert abs(p[-1] - nearest) < 1e-6
assert abs(wrong[-1]) > 2.5 and len(wrong) < 61
print(f"with dL/dz instead: |z| = {abs(wrong[-1]):.2f} after {len(wrong) - 1} steps - diverging")

fig, ax = plt.subplots(figsize=(6, 5.2))
gx, gy = np.meshgrid(np.linspace(-2.2, 2.2, 300), np.linspace(-2.2, 2.2, 300))
gz = np.abs((gx + 1j * gy) ** 2 - c) ** 2
ax.contourf(gx, gy, np.log1p(gz), levels=30, cmap="Blues_r")
for p in paths:
    ax.plot(p.real, p.imag, ".-", color="C1", ms=3, lw=1)
ax.plot(wrong.real, wrong.imag, "x--", color="C3", ms=4, lw=1, label="conjugate convention (wrong)")
ax.plot(roots.real, roots.imag, "*", color="k", ms=12, label="roots of z^2 = 1+2i")
ax.plot([], [], ".-", color="C1", label="z -= lr * z.grad")
ax.set_xlabel("Re z")
ax.set_ylabel("Im z")
ax.set_aspect("equal")
ax.set_xlim(-2.2, 2.2)
ax.set_ylim(-2.2, 2.2)
ax.legend(loc="lower right", fontsize=8)
ax.set_title("gradient descent on |z^2 - c|^2", fontsize=10)
fig.tight_layout()
plt.show()
