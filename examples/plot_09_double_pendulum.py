r"""
The double pendulum: equations of motion from a Lagrangian
==========================================================

The Euler–Lagrange equations need the derivatives of the Lagrangian
:math:`L(\theta, \omega)`: with :math:`M = \partial^2 L/\partial\omega^2` (the mass matrix) and
:math:`C = \partial^2 L/\partial\omega\,\partial\theta`, the accelerations solve
:math:`M \alpha = \partial L/\partial\theta - C \omega`. We write :math:`L` once in SymPy, compile it to
a dualad function with :func:`dualad.sympy.lambdify`, get :math:`\partial L/\partial\theta`, :math:`M`
and :math:`C` from dualad's gradient and Hessian, cross-check them and the
accelerations against SymPy's symbolic equations of motion, and simulate.
"""

import matplotlib.pyplot as plt
import numpy as np
import sympy

import dualad.functional as F
import dualad.sympy as dsym

th1, th2, w1, w2 = sympy.symbols("theta1 theta2 omega1 omega2", real=True)
m1, m2, l1, l2, g = 1.0, 1.0, 1.0, 1.0, 9.81
T = (sympy.Rational(1, 2) * (m1 + m2) * l1**2 * w1**2 + sympy.Rational(1, 2) * m2 * l2**2 * w2**2
     + m2 * l1 * l2 * w1 * w2 * sympy.cos(th1 - th2))
V = -(m1 + m2) * g * l1 * sympy.cos(th1) - m2 * g * l2 * sympy.cos(th2)
L_sym = T - V
state = [th1, th2, w1, w2]

# %%
# The symbolic cross-check of dualad's gradient and Hessian of :math:`L` (every
# mode, random states):
report = dsym.check(L_sym, state, order=2, n_points=3, seed=1)
print(report)
assert report.ok

# %%
# Accelerations by dualad: one gradient and one Hessian of the compiled :math:`L`.
L_fn = dsym.lambdify(L_sym, state)


def L_vec(q):
    return L_fn(q[0], q[1], q[2], q[3])


def accelerations(q):
    grad = F.grad(L_vec)(q).numpy()
    H = F.hessian(L_vec, q, vectorize=True).numpy()  # one batched forward-over-reverse pass
    M, C = H[2:, 2:], H[2:, :2]
    return np.linalg.solve(M, grad[:2] - C @ q[2:])


# SymPy's own equations of motion: d/dt dL/domega - dL/dtheta = 0, solved for alpha.
t = sympy.symbols("t")
a1, a2 = sympy.symbols("alpha1 alpha2")
sub_t = {th1: sympy.Function("q1")(t), th2: sympy.Function("q2")(t)}
eqs = []
for th, w in ((th1, w1), (th2, w2)):
    dL_dw = sympy.diff(L_sym, w)
    # total time derivative: d/dt f(theta, omega) = f_theta . omega + f_omega . alpha
    ddt = (sympy.diff(dL_dw, th1) * w1 + sympy.diff(dL_dw, th2) * w2
           + sympy.diff(dL_dw, w1) * a1 + sympy.diff(dL_dw, w2) * a2)
    eqs.append(sympy.Eq(ddt - sympy.diff(L_sym, th), 0))
sol = sympy.solve(eqs, [a1, a2], dict=True)[0]
alpha_sym = sympy.lambdify(state, [sol[a1], sol[a2]], "numpy")

rng = np.random.default_rng(0)
for _ in range(5):
    q = rng.uniform([-np.pi, -np.pi, -3, -3], [np.pi, np.pi, 3, 3])
    assert np.allclose(accelerations(q), alpha_sym(*q), rtol=1e-10, atol=1e-10)
q0 = np.array([2.0, 2.5, 0.0, 0.0])
print("accelerations at the start, dualad:", accelerations(q0), " SymPy:", np.array(alpha_sym(*q0)))

# %%
# Simulation (fourth-order Runge–Kutta) with dualad's accelerations. The
# motion is chaotic, so the check is the conserved energy :math:`T + V`.


def rhs(q):
    return np.concatenate([q[2:], accelerations(q)])


energy = sympy.lambdify(state, T + V, "numpy")
dt, steps = 0.01, 300
traj = [q0]
for _ in range(steps):
    q = traj[-1]
    k1 = rhs(q)
    k2 = rhs(q + dt / 2 * k1)
    k3 = rhs(q + dt / 2 * k2)
    k4 = rhs(q + dt * k3)
    traj.append(q + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
traj = np.array(traj)
E = np.array([energy(*q) for q in traj])
print(f"energy drift over {steps * dt:.0f} s: {np.abs(E - E[0]).max():.2e} (energy {E[0]:.4f})")
assert np.abs(E - E[0]).max() < 1e-3 * abs(E[0])

x1, y1 = l1 * np.sin(traj[:, 0]), -l1 * np.cos(traj[:, 0])
x2, y2 = x1 + l2 * np.sin(traj[:, 1]), y1 - l2 * np.cos(traj[:, 1])
fig, (a1_, a2_) = plt.subplots(1, 2, figsize=(10, 4.2))
a1_.plot(x2, y2, lw=0.8, color="C3", alpha=0.8, label="lower bob")
a1_.plot(x1, y1, lw=0.8, color="C0", alpha=0.8, label="upper bob")
for k in (0, steps):
    a1_.plot([0, x1[k], x2[k]], [0, y1[k], y2[k]], "o-", color="k" if k else "0.6", ms=4)
a1_.set_aspect("equal")
a1_.set_title("trajectory of the bobs (start grey, end black)", fontsize=10)
a1_.legend(fontsize=8, loc="lower left")
time = np.arange(steps + 1) * dt
a2_.plot(time, traj[:, 0], label="theta1")
a2_.plot(time, traj[:, 1], label="theta2")
a2_.set_xlabel("time (s)")
a2_.set_ylabel("angle (rad)")
a2_.legend(fontsize=8)
a2_.set_title("angles; equations of motion from dualad's Hessian", fontsize=10)
fig.tight_layout()
plt.show()
