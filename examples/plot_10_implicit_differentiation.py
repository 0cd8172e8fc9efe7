r"""
Implicit differentiation of a fixed point
=========================================

Many quantities are defined by an equation rather than a formula: the fixed
point :math:`x^* = g(x^*, p)` of an iteration, the root of a residual, the
equilibrium of a model. Differentiating through the iterations that found
:math:`x^*` works but costs memory and time per iteration, and is only as accurate
as the last iterate. The implicit function theorem gives the derivative from
the equation alone:

.. math:: (I - \\partial_x g)\\, \\frac{dx^*}{dp} = \\partial_p g,

with both partial Jacobians evaluated once, at the solution. We compare the
two on a small "deep equilibrium" layer :math:`x = \tanh(W x + p)`.
"""

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

rng = np.random.default_rng(0)
n = 6
W = rng.standard_normal((n, n))
W *= 0.8 / np.linalg.norm(W, 2)  # a contraction: the fixed point is unique
p0 = rng.standard_normal(n)


def g(x, p):
    return dnp.tanh(da.as_tensor(W) @ x + p)


def solve(p, iters=200):
    x = da.zeros(n)
    for _ in range(iters):
        x = g(x, p)
    return x


x_star = solve(da.tensor(p0)).numpy()
assert np.abs(g(da.tensor(x_star), da.tensor(p0)).numpy() - x_star).max() < 1e-14

# %%
# The implicit derivative: two Jacobians of :math:`g` at the solution, one solve.
Jx = F.jacobian(lambda x: g(x, da.tensor(p0)), x_star).numpy()
Jp = F.jacobian(lambda p: g(da.tensor(x_star), p), p0).numpy()
dx_dp_implicit = np.linalg.solve(np.eye(n) - Jx, Jp)

# reference: central finite differences of the solver
eps = 1e-6
dx_dp_fd = np.stack([(solve(da.tensor(p0 + eps * e)).numpy() - solve(da.tensor(p0 - eps * e)).numpy())
                     / (2 * eps) for e in np.eye(n)], axis=1)
print("implicit vs finite differences, max difference:", np.abs(dx_dp_implicit - dx_dp_fd).max())
assert np.allclose(dx_dp_implicit, dx_dp_fd, atol=1e-8)

# %%
# Unrolled: forward mode through :math:`k` iterations of the solver (a batched tangent
# pushes all :math:`n` directions at once). Its error falls like the contraction
# factor to the power :math:`k`, to the implicit answer.
ks = np.arange(1, 61, 3)
errors = []
for k in ks:
    with da.dual_level():
        p = da.make_dual(da.tensor(p0), da.eye(n), batched=True)
        _, tangents = da.unpack_dual(solve(p, iters=int(k)))
    errors.append(np.abs(tangents.numpy().T - dx_dp_implicit).max())
errors = np.array(errors)
print(f"unrolled forward mode: error {errors[0]:.1e} after {ks[0]} iteration, "
      f"{errors[-1]:.1e} after {ks[-1]}")
assert errors[-1] < 1e-12 and errors[0] > 1e-3
assert np.all(np.diff(np.log(errors[errors > 1e-14])) < 0)  # steadily decreasing

fig, ax = plt.subplots(figsize=(7, 3.8))
ax.semilogy(ks, np.maximum(errors, 1e-17), "o-", label="forward mode through k iterations")
ax.axhline(np.abs(dx_dp_implicit - dx_dp_fd).max(), color="C3", ls="--",
           label="implicit (one solve) vs finite differences (their own error)")
ax.set_xlabel("iterations k of the fixed-point solver")
ax.set_ylabel("max |unrolled - implicit| of dx*/dp")
ax.set_title("implicit differentiation needs no unrolling", fontsize=10)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
