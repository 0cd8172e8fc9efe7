r"""
Sensitivities of an ODE solution by forward mode
================================================

How does the trajectory of a damped oscillator :math:`y'' + c y' + k y = 0` change
with its damping :math:`c` and stiffness :math:`k`? Write the integrator (here a
plain fourth-order Runge–Kutta loop) with ``dualad.numpy``, make the
parameters dual with one tangent per parameter, and every state of the
simulation carries :math:`\partial y/\partial c` and :math:`\partial y/\partial k`
along — the *forward sensitivity equations*, without deriving them. We check them
against the derivatives of the closed-form solution.
"""

import matplotlib.pyplot as plt
import numpy as np
import sympy

import dualad as da
import dualad.numpy as dnp

c0, k0 = 0.4, 4.0
dt, steps = 0.01, 1000


def simulate(params):
    """RK4 for (y, v)' = (v, -c v - k y), y(0) = 1, v(0) = -c/2. Returns y at every step."""
    c, k = params[0], params[1]

    def rhs(y, v):
        return v, -c * v - k * y

    y, v = 1.0 + 0.0 * c, -c / 2
    ys = [y]
    for _ in range(steps):
        k1 = rhs(y, v)
        k2 = rhs(y + dt / 2 * k1[0], v + dt / 2 * k1[1])
        k3 = rhs(y + dt / 2 * k2[0], v + dt / 2 * k2[1])
        k4 = rhs(y + dt * k3[0], v + dt * k3[1])
        y = y + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        ys.append(y)
    return dnp.stack(ys)


# %%
# One forward pass with a batch of two tangents (the unit directions in :math:`c`
# and :math:`k`) gives the solution and both sensitivities at every time step.
with da.dual_level():
    params = da.make_dual(da.tensor([c0, k0]), da.eye(2), batched=True)
    y, sens = (u.numpy() for u in da.unpack_dual(simulate(params)))
dy_dc, dy_dk = sens

# %%
# The reference: the closed-form solution :math:`e^{-c t / 2} \cos(w t)`,
# :math:`w = \sqrt{k - c^2 / 4}`, differentiated by SymPy.
t_s, c_s, k_s = sympy.symbols("t c k", positive=True)
y_exact = sympy.exp(-c_s * t_s / 2) * sympy.cos(sympy.sqrt(k_s - c_s**2 / 4) * t_s)
ref = [sympy.lambdify(t_s, e.subs({c_s: c0, k_s: k0}), "numpy")
       for e in (y_exact, sympy.diff(y_exact, c_s), sympy.diff(y_exact, k_s))]
t = np.arange(steps + 1) * dt
errs = [np.abs(got - r(t)).max() for got, r in zip((y, dy_dc, dy_dk), ref, strict=True)]
print("max error against the closed form: y {:.1e}, dy/dc {:.1e}, dy/dk {:.1e}".format(*errs))
assert max(errs) < 1e-7  # the integrator's own error (RK4, dt = 0.01)

# %%
# Reverse mode gives the same sensitivities of a scalar of the trajectory —
# here the final position — in one backward pass.
p = da.tensor([c0, k0], requires_grad=True)
simulate(p)[-1].backward()
print("d y(T) / d(c, k): forward", np.array([dy_dc[-1], dy_dk[-1]]), " reverse", p.grad.numpy())
assert np.allclose(p.grad.numpy(), [dy_dc[-1], dy_dk[-1]], rtol=1e-12)

fig, axes = plt.subplots(3, 1, figsize=(7, 6), sharex=True)
for ax, got, r, label in zip(axes, (y, dy_dc, dy_dk), ref, ("y(t)", "dy/dc", "dy/dk"), strict=True):
    ax.plot(t, r(t), color="0.75", lw=4, label="closed form (SymPy)")
    ax.plot(t, got, color="C0", lw=1.2, label="RK4 + forward mode")
    ax.set_ylabel(label)
axes[0].legend(fontsize=8, loc="upper right")
axes[-1].set_xlabel("t")
axes[0].set_title(f"damped oscillator, c = {c0}, k = {k0}: solution and sensitivities", fontsize=10)
fig.tight_layout()
plt.show()
