#!/usr/bin/env python
"""odeint through its derivative: dualad.scipy.integrate.odeint beside JAX's.

    python benchmarks/odeint.py [--repeats N]

One task, the gradient of a Lotka-Volterra misfit (2 states, 4 parameters, 25 times,
rtol = atol = 1e-9) in the parameters: dualad by the adjoint method (reverse) and by the
sensitivity equations (forward, jacfwd), SciPy's odeint alone (the primal: what the
derivative costs on top of), central differences of SciPy's odeint (8 solves), and
jax.experimental.ode.odeint's gradient (its own adjoint, Dormand-Prince, jit-compiled;
float64) where JAX is installed. Then the Hessian of the same misfit: second differences
of SciPy's odeint, dualad's hvp, hessian and jacfwd(grad), and JAX's jacrev(grad) (its
odeint is reverse-mode only). Every result is checked against the differences before
it is timed. Times are the best of N repeats (wall clock; 2 at most for Hessians).

What bounds dualad here: each right-hand side is func run on Tensors (this 10-op func:
~50 us plain, ~150 us at a dual level carrying the 6 Jacobian directions, against ~1 us
for SciPy's NumPy func), times the solver's steps (313 for the solution, 401 for the
solution with its sensitivities). Reverse mode takes S^T ct from the sensitivity matrix
(one forward solve) for up to 16 inputs: 401 right-hand sides instead of the adjoint
method's 1,548 (24 backward solves, each restarting LSODA).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's dualad

import dualad as da  # noqa: E402
import dualad.functional as F  # noqa: E402
import dualad.numpy as dnp  # noqa: E402
from dualad.scipy.integrate import odeint  # noqa: E402

TOL = {"rtol": 1e-9, "atol": 1e-9}
Z0 = np.array([2.0, 1.0])
T = np.linspace(0.0, 12.0, 25)
THETA = np.array([0.7, 0.5, 1.0, 0.4])
DATA = np.cos(T)[:, None] + np.array([2.0, 1.0])


def lv_np(z, t, a, b, c, d):
    return [a * z[0] - b * z[0] * z[1], -c * z[1] + d * z[0] * z[1]]


def lv(z, t, th):
    return dnp.stack([th[0] * z[0] - th[1] * z[0] * z[1], -th[2] * z[1] + th[3] * z[0] * z[1]])


def misfit(th):
    return 0.5 * dnp.sum((odeint(lv, Z0, T, args=(th,), **TOL) - DATA) ** 2)


def scipy_misfit(th, tight=False):
    from scipy.integrate import odeint as sp_odeint

    tol = {"rtol": 1e-12, "atol": 1e-12} if tight else TOL
    return 0.5 * np.sum((sp_odeint(lv_np, Z0, T, args=tuple(th), **tol) - DATA) ** 2)


def differences(th, h=1e-6):
    return np.array([(scipy_misfit(th + h * e) - scipy_misfit(th - h * e)) / (2 * h)
                     for e in np.eye(th.size)])


def _jax_loss():
    """JAX's odeint misfit (float64), or None where JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
        from jax.experimental.ode import odeint as jax_odeint
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def f(z, t, th):
        return jnp.stack([th[0] * z[0] - th[1] * z[0] * z[1],
                          -th[2] * z[1] + th[3] * z[0] * z[1]])

    def loss(th):
        return 0.5 * jnp.sum((jax_odeint(f, jnp.asarray(Z0), jnp.asarray(T), th, **TOL)
                              - DATA) ** 2)

    return jax, jnp, loss


def jax_gradient():
    found = _jax_loss()
    if found is None:
        return None
    jax, jnp, loss = found
    g = jax.jit(jax.grad(loss))
    return lambda: np.asarray(g(jnp.asarray(THETA)).block_until_ready())


def jax_hessian():
    found = _jax_loss()
    if found is None:
        return None
    jax, jnp, loss = found
    h = jax.jit(jax.jacrev(jax.grad(loss)))  # (its odeint is a custom_vjp: reverse only)
    return lambda: np.asarray(h(jnp.asarray(THETA)).block_until_ready())


def hessian_differences(th, h=1e-3):
    """The Hessian by second differences of SciPy's misfit (1 + 2 m^2 solves, at
    rtol = atol = 1e-12: the differences' rounding is the solver's error over h^2)."""
    m = th.size

    def f(x):
        return scipy_misfit(x, tight=True)

    f0, out = f(th), np.empty((m, m))
    for i, ei in enumerate(np.eye(m) * h):
        for j, ej in enumerate(np.eye(m) * h):
            if i == j:
                out[i, i] = (f(th + ei) - 2 * f0 + f(th - ei)) / h ** 2
            else:
                out[i, j] = (f(th + ei + ej) - f(th + ei - ej) - f(th - ei + ej)
                             + f(th - ei - ej)) / (4 * h * h)
    return out


def best(fn, repeats):
    fn()  # warm-up (JAX compiles here)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    want = differences(THETA)
    rows = [
        ("scipy odeint (primal only)", lambda: scipy_misfit(THETA), None),
        ("central differences (8 solves)", lambda: differences(THETA), want),
        ("dualad reverse (grad: S^T ct)",
         lambda: F.grad(misfit)(da.tensor(THETA)).numpy(), want),
        ("dualad forward (jacfwd, sensitivities)",
         lambda: F.jacfwd(misfit)(da.tensor(THETA)).numpy(), want),
    ]
    jg = jax_gradient()
    rows.append(("jax.experimental.ode grad (jit)", jg, want))
    table("gradient of a Lotka-Volterra misfit", rows, args.repeats)
    want_h = hessian_differences(THETA)
    v = np.array([1.0, -0.5, 0.25, 2.0])
    rows = [
        ("second differences of scipy odeint (33 solves)", lambda: hessian_differences(THETA),
         want_h),
        ("dualad hvp (forward-over-reverse), 1 vector",
         lambda: F.hvp(misfit, da.tensor(THETA), da.tensor(v))[1].numpy(), want_h @ v),
        ("dualad hessian (reverse-over-reverse)",
         lambda: F.hessian(misfit, da.tensor(THETA)).numpy(), want_h),
        ("dualad jacfwd(grad) (forward-over-reverse)",
         lambda: F.jacfwd(F.grad(misfit))(da.tensor(THETA)).numpy(), want_h),
        ("jax.experimental.ode jacrev(grad) (jit)", jax_hessian(), want_h),
    ]
    table("Hessian of the same misfit", rows, min(args.repeats, 2), tol=1e-3)
    return 0


def table(title, rows, repeats, tol=1e-4):
    print(f"| {title} | ms | max rel. error vs differences |")
    print("|---|---|---|")
    for name, fn, ref in rows:
        if fn is None:
            print(f"| {name} | - | (not installed) |")
            continue
        err = "" if ref is None else f"{np.max(np.abs(fn() - ref)) / np.max(np.abs(ref)):.1e}"
        if ref is not None and float(err) > tol:
            err += " !"
        print(f"| {name} | {best(fn, repeats) * 1e3:.1f} | {err} |")
    print()


if __name__ == "__main__":
    raise SystemExit(main())
