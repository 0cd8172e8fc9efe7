"""
Quickstart: one derivative by each mode
=======================================

dualad quickstart: one derivative by forward mode, one gradient by reverse mode.

Each result is printed next to its closed form; the script exits with status 1
if any pair disagrees, so it doubles as a smoke test (tests/docs/test_examples.py
runs it).

    python examples/quickstart.py
"""

import sys

import numpy as np

import dualad as da
import dualad.numpy as dnp

ok = True


def report(label, got, exact, rtol=1e-12, atol=1e-14):
    """Print a computed value next to the closed form and remember any mismatch."""
    global ok
    got, exact = np.asarray(got), np.asarray(exact)
    same = got.shape == exact.shape and np.allclose(got, exact, rtol=rtol, atol=atol)
    ok = ok and same
    print(f"{label}\n  dualad      : {got}\n  closed form : {exact}\n  {'ok' if same else 'MISMATCH'}")


# ---------------------------------------------------------------------------
# 1. Forward mode: d/dx [sin(x) * exp(-x^2)]
# ---------------------------------------------------------------------------
def f(x):
    # Written once with dualad.numpy; the same code runs on plain tensors,
    # on dual tensors (forward mode) and on tensors that record a graph.
    return dnp.sin(x) * dnp.exp(-(x**2))


def df_closed_form(x):
    # Product rule and chain rule by hand, in plain NumPy.
    return (np.cos(x) - 2 * x * np.sin(x)) * np.exp(-(x**2))


xs = np.array([-1.5, -0.3, 0.0, 0.7, 2.0])

with da.dual_level():
    # A dual tensor carries a value (the primal) and a direction (the tangent).
    # f acts elementwise, so its Jacobian is diagonal and pushing a tangent of
    # ones through it yields every f'(x_i) in a single forward pass.
    x = da.make_dual(da.tensor(xs), da.ones(xs.shape))
    y = f(x)
    value, derivative = da.unpack_dual(y)
    # Convert inside the level: after it exits the tensors are plain again.
    value = value.detach().numpy()
    derivative = derivative.detach().numpy()

report("f(x) = sin(x) exp(-x^2) at x = " + np.array2string(xs), value, np.sin(xs) * np.exp(-(xs**2)))
report("f'(x) by forward mode", derivative, df_closed_form(xs))

# ---------------------------------------------------------------------------
# 2. Reverse mode: gradient of a least-squares loss
#    L(w) = sum((A w - b)^2),   grad L = 2 A^T (A w - b)
# ---------------------------------------------------------------------------
rng = np.random.default_rng(0)
A = rng.standard_normal((6, 3))
b = rng.standard_normal(6)
w0 = rng.standard_normal(3)

# requires_grad=True marks w as a leaf whose gradient we want; the ops below
# record a graph, and backward() walks it once, from the scalar loss to w.
w = da.tensor(w0, requires_grad=True)
loss = dnp.sum((da.as_tensor(A) @ w - b) ** 2)
loss.backward()

report("grad of sum((A w - b)^2) by reverse mode", w.grad.numpy(), 2 * A.T @ (A @ w0 - b))

# da.grad is the functional form: it returns the gradients instead of
# accumulating them into .grad, so repeated calls do not add up.
w2 = da.tensor(w0, requires_grad=True)
(g,) = da.grad(dnp.sum((da.as_tensor(A) @ w2 - b) ** 2), (w2,))
report("same gradient by da.grad", g.detach().numpy(), 2 * A.T @ (A @ w0 - b))

print("all results agree with the closed forms" if ok else "some results DISAGREE")
if not ok:  # (no exit on success: the docs build runs this script in its own process)
    sys.exit(1)

# sphinx_gallery_thumbnail_path = '_static/thumbnails/quickstart.png'
