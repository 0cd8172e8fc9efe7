r"""
Reverse mode is the transpose of forward mode, shown
====================================================

dualad has one derivative rule per operation: its JVP (forward mode). A
JVP rule is linear in the tangent, so it can be written as a small program of
linear operations; reverse mode runs that program *transposed*. This example
prints the recorded program of a small function and its transpose, draws the
graph with what each node saved, and checks the defining identity of a
transpose, :math:`\langle v, J u\rangle = \langle J^T v, u\rangle`, on the whole Jacobian.
"""

import shutil
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

rng = np.random.default_rng(1)
A = rng.standard_normal((4, 3))


def f(x):
    h = dnp.tanh(da.as_tensor(A) @ x)
    return dnp.exp(h) * x[0] - h


x0 = np.array([0.3, -0.5, 0.8])

# %%
# The recorded program
# --------------------
# Each node's JVP rule, run on symbolic tangents (``u0`` for the input), records
# linear operations; ``c0, c1, ...`` are coefficients computed from the values
# the node saved. The transposed program runs the same equations backwards.

x = da.tensor(x0, requires_grad=True)
y = f(x)
program = da.graph.linear_program(y)
print(program)
assert program.count("T[") >= program.count(" = ") - 1  # every linear equation has a transpose

# %%
# The graph, with what each node saved
# ------------------------------------
# ``dualad.graph.to_dot`` gives Graphviz text; the boxes say which values each node
# keeps for the backward pass (``exp`` its output, ``multiply`` the other
# operand, ``subtract`` nothing) and how large they are.

dot = da.graph.to_dot(y)
print(dot.splitlines()[4])  # one node of the DOT text
assert "ExpBackward0" in dot and "TanhBackward0" in dot and "MatmulBackward0" in dot

# %%
# Rows by reverse mode, columns by forward mode
# ---------------------------------------------
# Forward mode gives :math:`J e_j` (column :math:`j`), the transposed program gives
# :math:`J^T e_i` (row :math:`i`). They are the same matrix.

J_cols = np.stack([F.jvp(f, da.tensor(x0), da.tensor(e))[1].numpy() for e in np.eye(3)], axis=1)
J_rows = np.stack([F.vjp(f, da.tensor(x0), da.tensor(e))[1].numpy() for e in np.eye(4)], axis=0)
print("max |J (forward, by columns) - J (reverse, by rows)| =", np.abs(J_cols - J_rows).max())
assert np.allclose(J_cols, J_rows, rtol=1e-13, atol=1e-14)

# the transpose identity for random directions, and the finite-difference Jacobian
u, v = rng.standard_normal(3), rng.standard_normal(4)
_, Ju = F.jvp(f, da.tensor(x0), da.tensor(u))
_, JTv = F.vjp(f, da.tensor(x0), da.tensor(v))
print(f"<v, J u> = {v @ Ju.numpy():.15f}\n<J^T v, u> = {JTv.numpy() @ u:.15f}")
assert np.isclose(v @ Ju.numpy(), JTv.numpy() @ u, rtol=1e-13)
eps = 1e-6
J_fd = np.stack([(f(da.tensor(x0 + eps * e)).numpy() - f(da.tensor(x0 - eps * e)).numpy())
                 / (2 * eps) for e in np.eye(3)], axis=1)
assert np.allclose(J_cols, J_fd, atol=1e-8)

# %%
# The picture: the Jacobian assembled both ways.

fig, axes = plt.subplots(1, 2, figsize=(7, 3.6))
for ax, J, title in ((axes[0], J_cols, "columns J e_j\n(forward mode)"),
                     (axes[1], J_rows, "rows J^T e_i\n(reverse mode = transposed JVP)")):
    im = ax.imshow(J, cmap="RdBu_r", vmin=-np.abs(J).max(), vmax=np.abs(J).max())
    ax.set_title(title, fontsize=9)
    ax.set_xticks(range(3))
    ax.set_yticks(range(4))
fig.colorbar(im, ax=axes, shrink=0.8)
plt.show()

# %%
# And the graph itself, drawn from ``to_dot``'s text when Graphviz's ``dot``
# program is installed (``dualad.graph.render_graph``): read it from the bottom (the
# output) up to the leaf; each edge is labelled with the input slot it feeds.

if shutil.which("dot") is not None:
    with tempfile.TemporaryDirectory() as tmp:  # nothing is written into the repository
        png = da.graph.render_graph(y, Path(tmp) / "graph", format="png")
        image = plt.imread(png)
    fig, ax = plt.subplots(figsize=(image.shape[1] / 100, image.shape[0] / 100), dpi=100)
    ax.imshow(image)
    ax.axis("off")
    fig.tight_layout(pad=0)
    plt.show()
