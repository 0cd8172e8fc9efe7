"""
A custom ``Function`` with only a JVP gets reverse mode for free
================================================================

dualad's own operations have a single derivative rule, their JVP; reverse
mode transposes it. A user-defined :class:`dualad.Function` can work the same
way: give ``forward`` and ``jvp`` only, and ``backward()``, ``grad`` and
``jacrev`` work through it, because its JVP — linear in the tangent — is
recorded and transposed. We define a numerically stable softmax this way and
check both modes with ``gradcheck`` and against the same softmax composed from
dualad operations.
"""

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp


class Softmax(da.Function):
    """softmax along the last axis; derivative rule: ds = s * (dx - sum(s * dx))."""

    @staticmethod
    def forward(ctx, x):
        e = dnp.exp(x - dnp.max(x, axis=-1, keepdims=True))
        s = e / dnp.sum(e, axis=-1, keepdims=True)
        ctx.save_for_forward(s)
        return s

    @staticmethod
    def jvp(ctx, t):
        (s,) = ctx.saved_tensors
        # linear in t: products with the saved s, a sum, a difference
        return s * (t - dnp.sum(s * t, axis=-1, keepdims=True))


def softmax_composed(x):
    e = dnp.exp(x - dnp.max(x, axis=-1, keepdims=True))
    return e / dnp.sum(e, axis=-1, keepdims=True)


rng = np.random.default_rng(0)
x0 = rng.standard_normal((3, 5))

# %%
# Reverse mode through a Function that never defined ``backward``:
w = rng.standard_normal((3, 5))
x = da.tensor(x0, requires_grad=True)
dnp.sum(Softmax.apply(x) * w).backward()
x_ref = da.tensor(x0, requires_grad=True)
dnp.sum(softmax_composed(x_ref) * w).backward()
print("gradient by transposing the jvp:\n", np.round(x.grad.numpy(), 6))
assert np.allclose(x.grad.numpy(), x_ref.grad.numpy(), rtol=1e-13, atol=1e-15)

# %%
# The whole Jacobian of one row, both ways, and its closed form :math:`\operatorname{diag}(s) - s s^T`.
row = x0[0]
J_fwd = F.jacfwd(Softmax.apply)(row).numpy()
J_rev = F.jacrev(Softmax.apply)(row).numpy()
s = np.exp(row - row.max())
s /= s.sum()
print("max |J_fwd - J_rev| =", np.abs(J_fwd - J_rev).max())
assert np.allclose(J_fwd, np.diag(s) - np.outer(s, s), atol=1e-15)
assert np.allclose(J_rev, J_fwd, atol=1e-15)

# %%
# The two Jacobians side by side: forward mode runs the jvp on the basis vectors
# (columns), reverse mode its transpose on them (rows); they are one matrix.
fig, axes = plt.subplots(1, 3, figsize=(9, 3))
lim = np.abs(J_fwd).max()
for ax, M, title in [(axes[0], J_fwd, "jacfwd: the jvp"),
                     (axes[1], J_rev, "jacrev: the jvp transposed"),
                     (axes[2], np.diag(s) - np.outer(s, s), "diag(s) - s s^T")]:
    im = ax.imshow(M, cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
fig.colorbar(im, ax=axes, shrink=0.8)
plt.show()

# %%
# ``gradcheck`` compares both modes with finite differences (and fast mode's
# random projections), and ``gradgradcheck`` the second derivatives, which
# differentiate through the transposed program itself.
ok = da.gradcheck(Softmax.apply, (da.tensor(x0, requires_grad=True),), check_forward_ad=True)
ok_fast = da.gradcheck(Softmax.apply, (da.tensor(x0, requires_grad=True),), fast_mode=True)
ok_2 = da.gradgradcheck(Softmax.apply, (da.tensor(x0[:2, :3], requires_grad=True),))
print("gradcheck:", ok, " fast mode:", ok_fast, " gradgradcheck:", ok_2)
assert ok and ok_fast and ok_2

# %%
# A jvp that is *not* linear in its tangent cannot be transposed; the error
# names the operation that broke linearity.


class NotLinear(da.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def jvp(ctx, t):
        return dnp.sin(t)  # wrong: not linear in t


try:
    NotLinear.apply(da.tensor([1.0], requires_grad=True)).sum().backward()
    raise AssertionError("a non-linear jvp was transposed")
except RuntimeError as e:
    print("error:", e)
    assert "not linear" in str(e) and "sin" in str(e)
