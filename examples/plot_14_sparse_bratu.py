"""
Newton's method on a sparse PDE: the 2-D Bratu problem
======================================================

The Bratu problem :math:`\\Delta u + \\lambda e^u = 0` on the unit square,
:math:`u = 0` on its boundary, discretized by the five-point stencil on an
:math:`m \\times m` grid, is a system of :math:`m^2` equations whose Jacobian
has at most five nonzeros per row. Newton's method needs that Jacobian at
every step; dense, it would hold :math:`m^4` numbers.

Its columns split into five groups that share no row (the colors
:math:`(i + 2j) \\bmod 5` of the grid points), so five JVPs give the whole
Jacobian, however large the grid: :func:`dualad.functional.prepare_sparse_jacobian`
finds the coloring once and pushes the five seeds as ONE batched tangent at
each Newton step, then reads the nonzeros out with one gather. SciPy's finite
differences, given the same pattern, need ten or eleven function
evaluations per Jacobian (its greedy grouping of the columns) and are accurate
to about :math:`\\sqrt{\\varepsilon}` of each entry.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from scipy.optimize._numdiff import approx_derivative, group_columns
from scipy.sparse.linalg import spsolve

import dualad.functional as F

LAMBDA = 6.0  # below the fold at about 6.81, where the lower solution branch ends


def bratu(m):
    """The residual of the five-point Bratu problem on an m x m interior grid."""
    h2 = (m + 1) ** 2

    def residual(u):
        g = np.reshape(u, (m, m))
        p = np.pad(g, 1)  # the zero boundary values
        lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * g
        return np.reshape(lap * h2 + LAMBDA * np.exp(g), (-1,))

    return residual


def five_point_pattern(m):
    """Which unknowns each equation reads (``sparsity=None`` would detect it by tracing)."""
    line = sp.diags_array([np.ones(m - 1), np.ones(m), np.ones(m - 1)], offsets=[-1, 0, 1])
    return sp.csr_array(sp.kron(sp.eye_array(m), line) + sp.kron(line, sp.eye_array(m)))


def best_time(fn, repeats=5):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# %%
# The sparse Jacobian equals the dense one
# ----------------------------------------
# On a grid small enough for ``jacfwd``'s dense matrix, both agree to rounding.

m_small = 30
f_small = bratu(m_small)
u_small = np.random.default_rng(0).uniform(0, 0.5, m_small**2)
J_small = F.prepare_sparse_jacobian(f_small, u_small, five_point_pattern(m_small))
dense = np.asarray(F.jacfwd(f_small)(u_small).numpy())
err = np.abs(J_small(u_small).toarray() - dense).max()
print(f"{m_small}x{m_small} grid: {J_small.ncolors} colors (lower bound {J_small.lower_bound}), "
      f"max |sparse - dense| = {err:.1e}")
assert err <= 1e-12 * np.abs(dense).max()

t_sparse = best_time(lambda: J_small(u_small))
t_dense = best_time(lambda: F.jacfwd(f_small)(u_small), repeats=3)
pattern_small = five_point_pattern(m_small)
groups = group_columns(pattern_small)
t_fd = best_time(lambda: approx_derivative(f_small, u_small, sparsity=(pattern_small, groups)))
print(f"one Jacobian at {m_small**2} unknowns: sparse {1e3 * t_sparse:.2f} ms, "
      f"dense jacfwd {1e3 * t_dense:.1f} ms, finite differences ({groups.max() + 1} groups) "
      f"{1e3 * t_fd:.2f} ms")

# %%
# Newton's method at 40,000 unknowns
# ----------------------------------
# Each step: the sparse Jacobian (five colors in one batched forward pass) and
# a sparse direct solve. ``check=5`` compares a random JVP with the sparse
# result on steps 1, 6, ...: a pattern that no longer fit would raise.

m = 200
residual = bratu(m)
pattern = five_point_pattern(m)
u = np.zeros(m * m)
t0 = time.perf_counter()
J = F.prepare_sparse_jacobian(residual, u, pattern, check=5)
t_prepare = time.perf_counter() - t0
history, t_jacobians = [], 0.0
for _ in range(12):
    r = residual(u)
    history.append(np.abs(r).max())
    if history[-1] < 1e-9:
        break
    t0 = time.perf_counter()
    jac = J(u)
    t_jacobians += time.perf_counter() - t0
    u = u - spsolve(sp.csc_array(jac), r)
print(f"{m}x{m} grid, {pattern.nnz} nonzeros: coloring and maps {1e3 * t_prepare:.0f} ms, "
      f"{len(history) - 1} Newton steps, {1e3 * t_jacobians / (len(history) - 1):.1f} ms "
      f"per Jacobian; residuals {', '.join(f'{h:.0e}' for h in history)}")
assert history[-1] < 1e-9 and len(history) <= 8  # quadratic convergence

fd = approx_derivative(residual, u, sparsity=(pattern, group_columns(pattern)))
fd_err = np.abs((J(u) - sp.csr_array(fd)).data).max() / np.abs(fd.data).max()
print(f"finite differences differ from it by {fd_err:.1e} (relative to the largest entry)")
assert fd_err < 1e-5

# %%
# The pattern, the coloring and the solution
# -------------------------------------------

fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
corner = 3 * m_small
axes[0].spy(pattern_small[:corner, :corner], markersize=1.5)
axes[0].set_title(f"Jacobian pattern ({corner} x {corner} corner, m = {m_small})")
colors = J_small.coloring.column_colors.reshape(m_small, m_small)
axes[1].imshow(colors[:12, :12], cmap="tab10", vmin=0, vmax=9)
for (i, j), c in np.ndenumerate(colors[:12, :12]):
    axes[1].text(j, i, str(c), ha="center", va="center", fontsize=7)
axes[1].set_title(f"column colors on the grid ({J_small.ncolors}: (i + 2j) mod 5)")
image = axes[2].imshow(u.reshape(m, m), extent=(0, 1, 0, 1), origin="lower", cmap="viridis")
fig.colorbar(image, ax=axes[2], shrink=0.8)
axes[2].set_title(f"solution u, lambda = {LAMBDA}, max {u.max():.3f}")
fig.tight_layout()
plt.show()
