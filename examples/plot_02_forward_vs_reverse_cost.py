r"""
Forward vs reverse mode: what a Jacobian costs
==============================================

For :math:`f: \mathbb{R}^n \to \mathbb{R}^m`, forward mode gives one *column* :math:`J u` of the
Jacobian per pass, reverse mode one *row* :math:`v^T J`. A whole Jacobian takes :math:`n`
forward passes or :math:`m` reverse passes, so forward mode wins for few inputs
and many outputs, reverse mode for many inputs and few outputs — a scalar
loss of a million parameters needs one reverse pass. Here we measure it.

Each Jacobian below is computed pass by pass (``vectorize=False``), so the
count of passes shows; ``vectorize=True`` would do all of them in one batched
pass.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

rng = np.random.default_rng(0)


def make_problem(n, m):
    W = rng.standard_normal((m, n)) / np.sqrt(n)
    f = lambda x: dnp.tanh(da.as_tensor(W) @ x) * 2.0 + dnp.sum(x**2)
    x = rng.standard_normal(n)
    J_exact = 2.0 * (1 - np.tanh(W @ x) ** 2)[:, None] * W + 2 * x[None, :]
    return f, x, J_exact


def best_time(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def measure(n, m):
    f, x, J_exact = make_problem(n, m)
    t_fwd, J_fwd = best_time(lambda: F.jacobian(f, x, strategy="forward-mode"))
    t_rev, J_rev = best_time(lambda: F.jacobian(f, x, strategy="reverse-mode"))
    # both modes must give the same (right) Jacobian, whatever their cost
    assert np.allclose(J_fwd.numpy(), J_exact) and np.allclose(J_rev.numpy(), J_exact)
    return t_fwd, t_rev


sizes = [1, 2, 4, 8, 16, 32, 64]
# %%
# Many inputs, one output: :math:`n` grows, :math:`m = 1`.
wide = np.array([measure(n, 1) for n in sizes])
# %%
# One input, many outputs: :math:`m` grows, :math:`n = 1`.
tall = np.array([measure(1, m) for m in sizes])
print("every Jacobian, by either mode, matched the closed form")

# %%
# Each pass costs about the same here (the function is small), so the number
# of passes decides: forward mode's time grows with :math:`n`, reverse mode's with
# :math:`m`.

fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
for ax, data, label in ((axes[0], wide, "inputs n (outputs m = 1)"),
                        (axes[1], tall, "outputs m (inputs n = 1)")):
    ax.loglog(sizes, data[:, 0] * 1e3, "o-", label="forward mode (n passes)")
    ax.loglog(sizes, data[:, 1] * 1e3, "s-", label="reverse mode (m passes)")
    ax.set_xlabel(label)
    ax.grid(True, which="both", alpha=0.3)
axes[0].set_ylabel("time for the whole Jacobian (ms)")
axes[0].legend(fontsize=8)
fig.suptitle("Jacobian cost: forward mode scales with inputs, reverse mode with outputs")
fig.tight_layout()
plt.show()

# %%
# The measured trend, checked loosely (timings are noisy; the factor between
# 1 and 64 passes is far larger than the noise).
assert wide[-1, 0] > 4 * wide[0, 0] and tall[-1, 1] > 4 * tall[0, 1]
print("forward mode's cost grew with n, reverse mode's with m")
