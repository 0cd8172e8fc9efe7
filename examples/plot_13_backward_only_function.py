"""
Forward mode and Hessians through a Function that defines only ``backward``
===========================================================================

Libraries often give their operations a hand-written vector-Jacobian product
and nothing else: implicit layers solved by an iteration, FFT and NUFFT
wrappers around compiled code. In torch such a Function cannot be used in
forward mode, and in JAX a ``custom_vjp`` function "can't apply forward-mode
autodiff", so their users get no Hessians by forward-over-reverse.

dualad needs nothing more. A backward is linear in its ``grad_output``: run on
symbolic grad_outputs it records that linear map, :math:`v \\mapsto J^T v`, and
the transpose of the recorded program is :math:`u \\mapsto J u`, the JVP. We
define a fixed-point layer :math:`x^* = \\tanh(W x^* + p)` whose forward
iterates in plain NumPy and whose backward solves the adjoint equation of the
implicit function theorem, then use it in forward mode and for a Hessian.
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


class FixedPoint(da.Function):
    """x* = tanh(W x* + p), found by iteration; its backward by the adjoint equation.

    At the solution, with s = 1 - x*^2, dx = s * (W dx + dp), so
    dx/dp = (I - diag(s) W)^-1 diag(s) and the VJP is s * solve((I - diag(s) W)^T, g).
    """

    @staticmethod
    def forward(ctx, p):
        x = np.zeros(n)
        pn = p.numpy()
        for _ in range(500):  # plain NumPy: dualad never sees these iterations
            x = np.tanh(W @ x + pn)
        x = da.tensor(x)
        ctx.save_for_backward(x)  # an output: its derivative is the Function's own
        return x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = 1 - x**2
        M = dnp.eye(n) - s[:, None] * W
        return s * dnp.linalg.solve(M.T, g)  # linear in g: solve is linear in its right side


def unrolled(p, iterations=500):
    """The same fixed point by differentiating through every iteration (the reference)."""
    x = dnp.zeros(n)
    for _ in range(iterations):
        x = dnp.tanh(W @ x + p)
    return x


p0 = rng.standard_normal(n)
u = rng.standard_normal(n)

# %%
# Forward mode: a Jacobian-vector product and the whole Jacobian (one batched pass),
# although ``FixedPoint`` never defined ``jvp``.
x0, Ju = F.jvp(FixedPoint.apply, da.tensor(p0), da.tensor(u))
eps = 1e-6
fd = (FixedPoint.apply(da.tensor(p0 + eps * u)) - FixedPoint.apply(da.tensor(p0 - eps * u))) / (2 * eps)
print("max |J u - finite difference| =", np.abs(Ju.numpy() - fd.numpy()).max())
assert np.allclose(Ju.numpy(), fd.numpy(), atol=1e-8)
J = F.jacfwd(FixedPoint.apply)(da.tensor(p0)).numpy()
assert np.allclose(J, F.jacrev(unrolled)(da.tensor(p0)).numpy(), atol=1e-10)

# %%
# The two modes are each other's transpose: for any v, <v, J u> = <J^T v, u>,
# where J^T v is the Function's own backward.
v = rng.standard_normal(n)
_, JTv = F.vjp(FixedPoint.apply, da.tensor(p0), da.tensor(v))
print("<v, J u> =", float(v @ Ju.numpy()), " <J^T v, u> =", float(JTv.numpy() @ u))
assert np.isclose(v @ Ju.numpy(), JTv.numpy() @ u, rtol=1e-12)

# %%
# A Hessian by forward-over-reverse: the gradient (the user's backward) computed on
# dual inputs. The backward's own operations on the saved output carry its tangent,
# and the output's tangent is the transposed backward's. Compared with the Hessian
# through 500 unrolled iterations, and by Hessian-vector products.


def loss(p, layer=FixedPoint.apply):
    x = layer(p)
    return dnp.sum(dnp.sin(3 * x)) + 0.5 * dnp.sum(p * p) * dnp.sum(x)


H = F.hessian(loss, da.tensor(p0), outer_jacobian_strategy="forward-mode").numpy()
H_ref = F.hessian(lambda p: loss(p, unrolled), da.tensor(p0)).numpy()
print("max |H - H(unrolled)| =", np.abs(H - H_ref).max())
assert np.allclose(H, H_ref, atol=1e-9)
_, Hu = F.hvp(loss, da.tensor(p0), da.tensor(u))
assert np.allclose(Hu.numpy(), H @ u, atol=1e-10)
assert np.allclose(F.jacfwd(F.jacfwd(loss))(da.tensor(p0)).numpy(), H, atol=1e-10)

# %%
# The loss along the line p0 + t u, and its second-order Taylor model
# L(p0) + t g.u + t^2/2 u.Hu from one gradient and one Hessian-vector product.
L0, g = F.value_and_grad(loss)(da.tensor(p0))
ts = np.linspace(-1.0, 1.0, 61)
along = [float(loss(da.tensor(p0 + t * u))) for t in ts]
model = float(L0) + ts * float(g.numpy() @ u) + 0.5 * ts**2 * float(u @ Hu.numpy())

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.6))
ax1.plot(ts, along, label="loss(p0 + t u)")
ax1.plot(ts, model, "--", label="second-order model (hvp)")
ax1.set_xlabel("t")
ax1.legend(fontsize=8)
ax1.set_title("Taylor model from the transposed backward", fontsize=10)
im = ax2.imshow(H, cmap="RdBu_r", vmin=-np.abs(H).max(), vmax=np.abs(H).max())
fig.colorbar(im, ax=ax2, shrink=0.8)
ax2.set_title("Hessian, forward-over-reverse", fontsize=10)
fig.tight_layout()
plt.show()

# %%
# A backward that is not linear in ``grad_output`` cannot be transposed; the
# error names the Function and the operation.


class NotLinear(da.Function):
    @staticmethod
    def forward(ctx, p):
        return 2 * p

    @staticmethod
    def backward(ctx, g):
        return dnp.tanh(g)  # wrong: not linear in g


try:
    F.jvp(NotLinear.apply, da.tensor(p0), da.tensor(u))
    raise AssertionError("a non-linear backward was transposed")
except RuntimeError as e:
    print("error:", str(e)[:110], "...")
    assert "NotLinear.backward is not linear" in str(e) and "tanh" in str(e)
