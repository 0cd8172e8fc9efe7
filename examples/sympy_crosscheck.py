r"""
Cross-checking with SymPy: the double pendulum's Lagrangian
===========================================================

Cross-check dualad against SymPy on a physics formula: the double pendulum.

The Lagrangian :math:`L = T - V` of a planar double pendulum (point masses :math:`m_1, m_2`
on massless rods of lengths :math:`l_1, l_2`, angles :math:`\theta_1, \theta_2` from the
downward vertical, angular velocities :math:`\omega_1, \omega_2`) is written once in SymPy. dualad
differentiates the *same* formula - compiled to dualad operations by
``dualad.sympy.lambdify`` - by forward mode, reverse mode, forward-over-reverse
and the functional API, and every gradient and Hessian entry is compared with
``sympy.diff`` at random states.

The :math:`\omega\omega` block of the Hessian is the pendulum's mass matrix
:math:`M(\theta) = \partial^2 L / \partial \omega^2`, printed at the end as a physical sanity check
(it must be symmetric positive definite).

    python examples/sympy_crosscheck.py      # exit status 1 if any check fails
"""

import sys

import numpy as np
import sympy

import dualad as da
import dualad.sympy as dsym

theta1, theta2, omega1, omega2 = sympy.symbols("theta1 theta2 omega1 omega2", real=True)
# Parameters: exact rationals where possible, so SymPy's reference stays exact.
m1, m2 = sympy.Integer(1), sympy.Integer(2)
l1, l2 = sympy.Integer(1), sympy.Rational(1, 2)
g = sympy.Float("9.81")

# Kinetic energy: |v1|^2 = (l1 w1)^2, |v2|^2 = |v1|^2 + (l2 w2)^2 + 2 l1 l2 w1 w2 cos(t1 - t2).
T = (
    sympy.Rational(1, 2) * (m1 + m2) * l1**2 * omega1**2
    + sympy.Rational(1, 2) * m2 * l2**2 * omega2**2
    + m2 * l1 * l2 * omega1 * omega2 * sympy.cos(theta1 - theta2)
)
# Potential energy, heights measured upwards from the pivot.
V = -(m1 + m2) * g * l1 * sympy.cos(theta1) - m2 * g * l2 * sympy.cos(theta2)
L = T - V
state = [theta1, theta2, omega1, omega2]

print("Double pendulum Lagrangian:")
print("  L =", L)
print()

report = dsym.check(
    L,
    state,
    order=2,
    n_points=4,
    seed=0,
    domain={theta1: (-np.pi, np.pi), theta2: (-np.pi, np.pi), omega1: (-3, 3), omega2: (-3, 3)},
)
print(report)
print()

# The mass matrix from dualad's (reverse-mode) Hessian at the first state,
# next to its closed form [[(m1+m2) l1^2, m2 l1 l2 c], [m2 l1 l2 c, m2 l2^2]].
ok = report.ok
H = report["hessian", "reverse"].values
if H is not None:
    t1, t2 = report.points[0, :2]
    c = float(m2 * l1 * l2) * np.cos(t1 - t2)
    closed = np.array([[float((m1 + m2) * l1**2), c], [c, float(m2 * l2**2)]])
    mass = H[0, 2:, 2:]
    print(f"mass matrix at theta = ({t1:.3f}, {t2:.3f}) from dualad's Hessian:")
    print(np.array2string(mass, precision=6))
    print("closed form:")
    print(np.array2string(closed, precision=6))
    eig = np.linalg.eigvalsh(mass)
    print(f"eigenvalues {eig} (positive definite: {bool(np.all(eig > 0))})")
    ok = ok and np.allclose(mass, closed, rtol=1e-12, atol=1e-12) and bool(np.all(eig > 0))

# Also show the lambdified function used directly, as a user would.
lagrangian = dsym.lambdify(L, state)
x = [da.tensor(v, requires_grad=True) for v in (0.3, -0.4, 1.0, -0.5)]
grads = da.grad(lagrangian(*x), x)
print()
print("dL/d(theta1, theta2, omega1, omega2) at (0.3, -0.4, 1.0, -0.5):")
print("  ", [round(float(gr.detach().numpy()), 10) for gr in grads])

print()
print("OK" if ok else "FAILED")
if not ok:  # (no exit on success: the docs build runs this script in its own process)
    sys.exit(1)

# sphinx_gallery_thumbnail_path = '_static/thumbnails/sympy_crosscheck.png'
