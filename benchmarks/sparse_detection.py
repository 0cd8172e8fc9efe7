#!/usr/bin/env python
"""Sparsity detection: dualad's traced patterns, beside asdex's when it is installed.

    python benchmarks/sparse_detection.py [--quick]

Rows (the issue's scale figures): the Rosenbrock residuals at n = 2·10⁵ (Jacobian
pattern), the Rosenbrock function's Hessian pattern at n = 10⁵, the 2-D Bratu residual on
a 300×300 grid (5-point stencil) and an arrowhead function (a dense row and column).
Times are the best of 7 calls (after one warm-up). Each traced pattern is checked: its
nonzero count against the closed form. ``row_times()`` gives the rows to other scripts
(the sparse-evaluation benchmark prints them beside its own).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dualad.functional as F
import dualad.numpy as dnp


def rosenbrock_residuals(x: Any) -> Any:
    return dnp.concatenate([10 * (x[1:] - x[:-1] ** 2), 1 - x[:-1]])


def rosenbrock(x: Any) -> Any:
    return dnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def bratu(u: Any, lam: float = 6.0) -> Any:
    m = int(round(u.size ** 0.5))
    v = dnp.pad(u.reshape(m, m), 1)
    lap = 4 * v[1:-1, 1:-1] - v[:-2, 1:-1] - v[2:, 1:-1] - v[1:-1, :-2] - v[1:-1, 2:]
    return (lap - lam / (m + 1) ** 2 * dnp.exp(v[1:-1, 1:-1])).ravel()


def arrowhead(x: Any) -> Any:
    return dnp.concatenate([dnp.sum(x ** 2)[None], x[0] * x[1:] + x[1:] ** 3])


def _rows(quick: bool) -> list[tuple[str, Callable[..., Any], Any, int, str]]:
    k = 10 if quick else 1
    n, m = 200_000 // k, 300 // (3 if quick else 1)
    return [  # (name, detector, function, n, expected nonzeros)
        (f"Rosenbrock residuals, Jacobian, n = {n}", F.jacobian_sparsity,
         rosenbrock_residuals, n, 3 * (n - 1)),
        (f"Rosenbrock, Hessian, n = {n // 2}", F.hessian_sparsity, rosenbrock, n // 2,
         3 * (n // 2) - 2),
        (f"Bratu 5-point, Jacobian, {m}x{m}", F.jacobian_sparsity, bratu, m * m,
         5 * m * m - 4 * m),
        (f"arrowhead, Jacobian, n = {n // 10}", F.jacobian_sparsity, arrowhead, n // 10,
         3 * (n // 10) - 2),
    ]


def _best(fn: Callable[[], Any], repeats: int = 7) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _jax_versions() -> dict[str, Any]:
    """The same functions written with jax.numpy (asdex traces JAX programs)."""
    import jax.numpy as jnp

    def bratu_jax(u: Any, lam: float = 6.0) -> Any:
        m = int(round(u.size ** 0.5))
        v = jnp.pad(u.reshape(m, m), 1)
        lap = 4 * v[1:-1, 1:-1] - v[:-2, 1:-1] - v[2:, 1:-1] - v[1:-1, :-2] - v[1:-1, 2:]
        return (lap - lam / (m + 1) ** 2 * jnp.exp(v[1:-1, 1:-1])).ravel()

    return {
        "rosenbrock_residuals": lambda x: jnp.concatenate([10 * (x[1:] - x[:-1] ** 2),
                                                           1 - x[:-1]]),
        "rosenbrock": lambda x: jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2),
        "bratu": bratu_jax,
        "arrowhead": lambda x: jnp.concatenate([jnp.sum(x ** 2)[None],
                                                x[0] * x[1:] + x[1:] ** 3]),
    }


def _asdex(func_name: str, n: int, hessian: bool, nnz: int) -> float | None:
    """asdex's detection time for the same function (its pattern checked against ``nnz``),
    or None where it is not installed."""
    try:
        import asdex  # type: ignore[import-not-found]
        import jax.numpy as jnp
    except ImportError:
        return None
    fn = _jax_versions()[func_name]
    detect = asdex.hessian_sparsity if hessian else asdex.jacobian_sparsity
    x = jnp.linspace(0.5, 1.5, n)
    try:
        got = detect(fn, x).nnz
        if got != nnz:
            print(f"asdex: {func_name}: {got} nonzeros, expected {nnz}")
        return _best(lambda: detect(fn, x), 3)
    except Exception as e:  # noqa: BLE001  (a peer's failure is reported, not fatal)
        print(f"asdex: {type(e).__name__}: {e}")
        return None


def row_times(quick: bool = False) -> list[tuple[str, float, float | None]]:
    """(row, dualad's seconds, asdex's seconds or None), each pattern checked first."""
    out = []
    for name, detect, func, n, nnz in _rows(quick):
        x = np.linspace(0.5, 1.5, n)
        got = detect(func, x).nnz
        if got != nnz:
            raise AssertionError(f"{name}: traced {got} nonzeros, expected {nnz}")
        out.append((name, _best(lambda d=detect, f=func, x=x: d(f, x)),
                    _asdex(func.__name__, n, detect is F.hessian_sparsity, nnz)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes divided by 10 (Bratu by 3)")
    args = parser.parse_args()
    print(f"{'sparsity detection':46s} {'dualad':>10s} {'asdex':>10s}")
    for name, ours, theirs in row_times(args.quick):
        peer = "-" if theirs is None else f"{theirs * 1e3:8.1f}ms"
        print(f"{name:46s} {ours * 1e3:8.1f}ms {peer:>10s}")


if __name__ == "__main__":
    main()
