"""
Newton-CG with Hessian-vector products, against BFGS
====================================================

``scipy.optimize.minimize`` takes a gradient (``jac``) and, for Newton-CG, a
Hessian-vector product (``hessp``). dualad gives both exactly: the gradient
by reverse mode, :math:`H v` by forward-over-reverse (``dualad.functional.hvp``),
without ever forming the Hessian. On a badly scaled problem — regularized
logistic regression whose 100 features range over two orders of magnitude —
Newton-CG with exact :math:`H v` needs a handful of iterations where BFGS, which
builds its curvature from gradients alone, needs many.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy import optimize

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

rng = np.random.default_rng(0)
m, n = 500, 100
scales = np.logspace(0, 2, n)
X = rng.standard_normal((m, n)) * scales
y = (X @ (rng.standard_normal(n) / scales) + 0.5 * rng.standard_normal(m) > 0).astype(float)
lam = 1e-2


def loss(w):
    z = da.as_tensor(X) @ w
    return dnp.mean(dnp.logaddexp(0.0, z) - y * z) + 0.5 * lam * dnp.sum(w**2)


def fun(w):
    return loss(da.tensor(w)).item()


def jac(w):
    return F.grad(loss)(w).numpy()


def hessp(w, v):
    return F.hvp(loss, da.tensor(w), da.tensor(v))[1].numpy()


# %%
# First, the derivatives against their closed forms:
# :math:`g = X^T (s - y) / m + \lambda w` and
# :math:`H v = X^T (s (1 - s) \odot X v) / m + \lambda v`.
w_test, v_test = rng.standard_normal(n) * 0.01, rng.standard_normal(n)
s = 1 / (1 + np.exp(-X @ w_test))
assert np.allclose(jac(w_test), X.T @ (s - y) / m + lam * w_test, rtol=1e-10)
assert np.allclose(hessp(w_test, v_test), X.T @ (s * (1 - s) * (X @ v_test)) / m + lam * v_test,
                   rtol=1e-10)
print("gradient and H v agree with their closed forms")

# %%
# Then both methods from the same start, recording f at every iterate.
traces, results = {}, {}
for method, kw in (("Newton-CG", {"hessp": hessp}), ("BFGS", {})):
    trace = [fun(np.zeros(n))]
    res = optimize.minimize(fun, np.zeros(n), jac=jac, method=method,
                            callback=lambda wk, t=trace: t.append(fun(wk)),
                            options={"maxiter": 5000}, **kw)
    traces[method], results[method] = np.array(trace), res
    print(f"{method:9s}: {res.nit:3d} iterations, loss {res.fun:.10f}, "
          f"largest gradient entry {np.abs(jac(res.x)).max():.1e}")
    assert np.abs(jac(res.x)).max() < 1e-4  # a minimum (the loss is strictly convex)

f_star = min(r.fun for r in results.values())
assert abs(results["Newton-CG"].fun - results["BFGS"].fun) < 1e-8  # the same minimum
assert 3 * results["Newton-CG"].nit < results["BFGS"].nit

fig, ax = plt.subplots(figsize=(7, 3.8))
for method, trace in traces.items():
    ax.semilogy(np.maximum(trace - f_star, 1e-16), "o-" if method == "Newton-CG" else "-", ms=3,
                label=f"{method} ({len(trace) - 1} iterations)")
ax.set_xlabel("iteration")
ax.set_ylabel("f(w_k) - f*")
ax.set_title("badly scaled logistic regression: exact H v pays off", fontsize=10)
ax.legend()
fig.tight_layout()
plt.show()
