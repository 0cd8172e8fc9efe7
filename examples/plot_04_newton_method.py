"""
Newton's method with ``jacobian``, ``jvp`` and ``hessian``
==========================================================

Newton's method needs derivatives that are *exact*: with them it converges
quadratically (the number of correct digits doubles each step). We solve a
nonlinear system :math:`F(x) = 0` with the Jacobian from forward mode, then
minimize a function with its gradient and Hessian, and watch the error fall.
"""

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

# %%
# A nonlinear system
# ------------------
# The intersections of a circle and a curve: :math:`x^2 + y^2 = 4` and
# :math:`e^x + y = 1`. Each step solves :math:`J(x)\, dx = -F(x)`; the Jacobian is
# two forward-mode passes (one per input).


def Fsys(v):
    x, y = v[0], v[1]
    return dnp.stack([x**2 + y**2 - 4.0, dnp.exp(x) + y - 1.0])


def newton_root(v, steps=8):
    history = [v]
    for _ in range(steps):
        J = F.jacfwd(Fsys)(v).numpy()
        v = v - np.linalg.solve(J, Fsys(da.tensor(v)).numpy())
        history.append(v)
    return np.array(history)


roots = newton_root(np.array([-1.0, 1.5]))
root = roots[-1]
residual = np.abs(Fsys(da.tensor(root)).numpy()).max()
print("root:", root, " residual:", residual)
assert residual < 1e-14
# the Jacobian matches its closed form at the root
J_exact = np.array([[2 * root[0], 2 * root[1]], [np.exp(root[0]), 1.0]])
assert np.allclose(F.jacfwd(Fsys)(root).numpy(), J_exact)

# %%
# A matrix-free Newton step uses ``jvp`` only: :math:`J\, dx` is one forward pass,
# so a Krylov solver never needs :math:`J` itself. For two unknowns we just build
# :math:`J` from two JVPs, and check it against the Jacobian above.
J_from_jvps = np.stack([F.jvp(Fsys, da.tensor(root), da.tensor(e))[1].numpy()
                        for e in np.eye(2)], axis=1)
assert np.allclose(J_from_jvps, J_exact)

# %%
# Minimization: gradient and Hessian
# ----------------------------------
# Himmelblau's function has four minima. Newton's step is :math:`-H^{-1} g`.


def himmelblau(v):
    x, y = v[0], v[1]
    return (x**2 + y - 11) ** 2 + (x + y**2 - 7) ** 2


def newton_min(v, steps=10):
    history = [v]
    for _ in range(steps):
        g = F.grad(himmelblau)(v).numpy()
        H = F.hessian(himmelblau, v).numpy()
        v = v - np.linalg.solve(H, g)
        history.append(v)
    return np.array(history)


path = newton_min(np.array([2.5, 2.5]))
print("minimum near (3, 2):", path[-1])
assert np.allclose(path[-1], [3.0, 2.0], atol=1e-12)
# Hessian against the closed form at the minimum
x, y = path[-1]
H_exact = np.array([[12 * x**2 + 4 * y - 42, 4 * (x + y)], [4 * (x + y), 12 * y**2 + 4 * x - 26]])
assert np.allclose(F.hessian(himmelblau, path[-1]).numpy(), H_exact)

# %%
# Quadratic convergence: :math:`e_{k+1} \approx C e_k^2`, so :math:`\log e` falls ever faster.
err_root = np.linalg.norm(roots - root, axis=1)
err_min = np.linalg.norm(path - np.array([3.0, 2.0]), axis=1)
k = np.flatnonzero((err_min[:-1] > 1e-6) & (err_min[1:] > 1e-13))
ratios = err_min[k + 1] / err_min[k] ** 2
print("e_{k+1} / e_k^2 in the last steps:", np.round(ratios[-3:], 3))
assert np.all(ratios[-2:] < 10)  # bounded: quadratic, not linear, convergence

fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
gx, gy = np.meshgrid(np.linspace(-5, 5, 200), np.linspace(-5, 5, 200))
gz = (gx**2 + gy - 11) ** 2 + (gx + gy**2 - 7) ** 2
a1.contour(gx, gy, np.log1p(gz), levels=25, cmap="viridis", linewidths=0.7)
a1.plot(path[:, 0], path[:, 1], "o-", color="C3", ms=4, label="Newton (hessian)")
a1.set_title("Himmelblau's function, Newton's path", fontsize=10)
a1.set_aspect("equal")
a1.legend(fontsize=8)
a2.semilogy(np.maximum(err_root, 1e-17), "o-", label="root of F (jacfwd)")
a2.semilogy(np.maximum(err_min, 1e-17), "s-", label="minimum (grad + hessian)")
a2.set_xlabel("iteration")
a2.set_ylabel("distance to the solution")
a2.set_title("quadratic convergence", fontsize=10)
a2.legend(fontsize=8)
fig.tight_layout()
plt.show()
