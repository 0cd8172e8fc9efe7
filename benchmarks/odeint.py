#!/usr/bin/env python
"""odeint through its derivative: dualad.scipy.integrate.odeint beside JAX's.

    python benchmarks/odeint.py [--repeats N]

One task, the gradient of a Lotka-Volterra misfit (2 states, 4 parameters, 25 times,
rtol = atol = 1e-9) in the parameters: dualad by the adjoint method (reverse) and by the
sensitivity equations (forward, jacfwd), SciPy's odeint alone (the primal: what the
derivative costs on top of), central differences of SciPy's odeint (8 solves), and
jax.experimental.ode.odeint's gradient (its own adjoint, Dormand-Prince, jit-compiled;
float64) where JAX is installed. Every gradient is checked against the differences
before it is timed. Times are the best of N repeats (wall clock).
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


def scipy_misfit(th):
    from scipy.integrate import odeint as sp_odeint

    return 0.5 * np.sum((sp_odeint(lv_np, Z0, T, args=tuple(th), **TOL) - DATA) ** 2)


def differences(th, h=1e-6):
    return np.array([(scipy_misfit(th + h * e) - scipy_misfit(th - h * e)) / (2 * h)
                     for e in np.eye(th.size)])


def jax_gradient():
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

    g = jax.jit(jax.grad(loss))
    return lambda: np.asarray(g(jnp.asarray(THETA)).block_until_ready())


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
        ("dualad reverse (adjoint)",
         lambda: F.grad(misfit)(da.tensor(THETA)).numpy(), want),
        ("dualad forward (jacfwd, sensitivities)",
         lambda: F.jacfwd(misfit)(da.tensor(THETA)).numpy(), want),
    ]
    jg = jax_gradient()
    rows.append(("jax.experimental.ode grad (jit)", jg, want))
    print("| gradient of a Lotka-Volterra misfit | ms | max rel. error vs differences |")
    print("|---|---|---|")
    for name, fn, ref in rows:
        if fn is None:
            print(f"| {name} | - | (not installed) |")
            continue
        err = "" if ref is None else f"{np.max(np.abs(fn() - ref) / np.abs(ref)):.1e}"
        if ref is not None and float(err) > 1e-4:
            err += " !"
        print(f"| {name} | {best(fn, args.repeats) * 1e3:.1f} | {err} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
