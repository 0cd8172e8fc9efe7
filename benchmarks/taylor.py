#!/usr/bin/env python
"""Taylor mode's benchmarks (issue 30): jets against nested dual levels and JAX's ``jet``, and
the Laplacian by collapsed Taylor mode against nested forward-over-reverse and torch.

    python benchmarks/taylor.py [--quick]

Rows:

- ``jet K``: the K-th Taylor coefficient of an elementwise chain on 1,000 values, by
  ``dualad.functional.jet`` (one pass, O(K^2) per operation), by K nested dual levels
  (2^K terms per operation: run for K <= 8), and by JAX's ``jet`` (eager and jit) when
  installed. Every result is checked against dualad's jet before it is timed.
- ``laplacian``: the Laplacian of the MLP of the collapsed-Taylor paper (tanh,
  50 -> 768 -> 768 -> 512 -> 512 -> 1) at one point, by ``dualad.functional.laplacian``
  (collapsed Taylor mode), by the trace of dualad's Hessian (forward over reverse), and by
  torch's ``torch.func.hessian`` (jacfwd over jacrev) when installed.

Times are the best of N repeats (seconds per call); peers missing show "-".
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp


def best(fn: Callable[[], Any], budget: float) -> float:
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 50):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def chain(ns: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return ns.sin(ns.exp(ns.tanh(x)) * x) / (1.0 + x * x)
    return f


def nested(x: np.ndarray, K: int) -> np.ndarray:
    """The K-th coefficient by K nested dual levels along the direction 1."""
    levels = [da.forward_ad.enter_dual_level() for _ in range(K)]
    try:
        t = da.tensor(x)
        for lv in levels:
            t = da.make_dual(t, da.tensor(np.ones_like(x)), level=lv)
        y = chain(dnp)(t)
        for lv in reversed(levels):  # the innermost level's tangent, then the next one's
            y = da.unpack_dual(y, level=lv).tangent
        return np.asarray(y) / math.factorial(K)
    finally:
        for lv in reversed(levels):
            da.forward_ad.exit_dual_level(level=lv)


def jet_rows(budget: float) -> list[tuple[str, list[str]]]:
    x = np.linspace(-1.0, 1.0, 1000)
    try:
        import jax
        from jax.experimental.jet import jet as jax_jet

        jax.config.update("jax_enable_x64", True)
        jnp = jax.numpy
    except ImportError:
        jax = None
    rows = []
    for K in (2, 4, 8, 16):
        terms = [np.ones_like(x)] + [np.zeros_like(x)] * (K - 1)
        run = lambda: F.jet(chain(dnp), (x,), (terms,), factorial_scaled=False)  # noqa: E731,B023
        want = np.asarray(run()[1][-1])
        cells = [f"{best(run, budget):.2e}"]
        if K <= 8:
            assert np.allclose(nested(x, K), want, rtol=1e-8, atol=1e-10)
            cells.append(f"{best(lambda: nested(x, K), budget):.2e}")  # noqa: B023
        else:
            cells.append("- (2^K)")
        if jax is not None:
            scaled = [t * math.factorial(k) for k, t in enumerate(terms, 1)]
            eager = lambda: jax_jet(chain(jnp), (x,), (scaled,))[1][-1].block_until_ready()  # noqa: E731,B023
            jitted_fn = jax.jit(lambda x, s: jax_jet(chain(jnp), (x,), (s,)))
            jitted = lambda: jitted_fn(x, scaled)[1][-1].block_until_ready()  # noqa: E731,B023
            assert np.allclose(np.asarray(eager()) / math.factorial(K), want, rtol=1e-8)
            cells += [f"{best(eager, budget):.2e}", f"{best(jitted, budget):.2e}"]
        else:
            cells += ["-", "-"]
        rows.append((f"jet K={K}", cells))
    return rows


def laplacian_row(budget: float) -> tuple[str, list[str]]:
    rng = np.random.default_rng(0)
    sizes = [50, 768, 768, 512, 512, 1]
    Ws = [rng.standard_normal((m, n)) / math.sqrt(n) for n, m in zip(sizes[:-1], sizes[1:], strict=True)]
    x = rng.standard_normal(50)

    def mlp(ns: Any) -> Callable[[Any], Any]:
        def f(v: Any) -> Any:
            for W in Ws[:-1]:
                v = ns.tanh(W @ v)
            return (Ws[-1] @ v).sum()
        return f

    collapsed = lambda: F.laplacian(mlp(dnp), x)  # noqa: E731
    nested_h = lambda: np.trace(np.asarray(F.hessian(mlp(dnp), da.tensor(x))))  # noqa: E731
    want = float(collapsed())
    assert np.isclose(nested_h(), want, rtol=1e-9)
    cells = [f"{best(collapsed, budget):.2e}", f"{best(nested_h, budget):.2e}"]
    try:
        import torch

        tW = [torch.tensor(W) for W in Ws]

        def tf(v: Any) -> Any:
            for W in tW[:-1]:
                v = torch.tanh(W @ v)
            return (tW[-1] @ v).sum()

        tx = torch.tensor(x)
        th = lambda: torch.func.hessian(tf)(tx).trace()  # noqa: E731
        assert np.isclose(float(th()), want, rtol=1e-9)
        cells.append(f"{best(th, budget):.2e}")
    except ImportError:
        cells.append("-")
    return "laplacian MLP D=50", cells


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="shorter timing budget")
    budget = 0.3 if ap.parse_args().quick else 1.5
    print("| row | dualad jet | nested dual levels | jax jet eager | jax jet jit |")
    print("|---|---|---|---|---|")
    for name, cells in jet_rows(budget):
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print("| row | dualad collapsed Taylor | dualad Hessian trace (fwd over rev) | torch.func "
          "hessian trace |")
    print("|---|---|---|---|")
    name, cells = laplacian_row(budget)
    print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
