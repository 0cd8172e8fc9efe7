#!/usr/bin/env python
"""Sparse tangents: whole sparse Jacobians without coloring, beside coloring and SciPy.

    python benchmarks/sparse_tangents.py [--quick]

Rows: the Rosenbrock residuals at n = 2·10⁵, the 2-D Bratu residual on a 300×300 grid and
an arrowhead function (a dense row and column: coloring needs bicoloring there, sparse
tangents do not). Columns: dualad's sparse tangents (one traced evaluation carrying CSR
Jacobians, best of 7 calls after a warm-up); ``sparse_jacobian`` (detection + coloring +
batched JVP) where it is present; SciPy's ``approx_derivative`` given the same pattern
(finite differences on NumPy code; best of 2, it takes seconds on the arrowhead). Every
Jacobian is checked against the finite differences.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize._numdiff import approx_derivative
from sparse_detection import _best, arrowhead, bratu, rosenbrock_residuals

import dualad.functional as F
from dualad.functional._sparse_tangents import sparse_tangent_jacobian


def _numpy(func: Callable[..., Any]) -> Callable[[np.ndarray], np.ndarray]:
    """The function on NumPy arrays, returning one (for SciPy)."""
    return lambda x: np.asarray(func(x), dtype=float)


def _coloring(func: Callable[..., Any], x: np.ndarray) -> float | None:
    """sparse_jacobian's time (detection, coloring, batched JVP), None where absent."""
    sparse_jacobian = getattr(F, "sparse_jacobian", None)
    if sparse_jacobian is None:
        return None
    try:
        return _best(lambda: sparse_jacobian(func, x))
    except Exception as e:  # noqa: BLE001  (a peer's failure is reported, not fatal)
        print(f"sparse_jacobian: {type(e).__name__}: {e}")
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes divided by 10 (Bratu by 3)")
    args = parser.parse_args()
    k = 10 if args.quick else 1
    n, m = 200_000 // k, 300 // (3 if args.quick else 1)
    rows = [(f"Rosenbrock residuals, n = {n}", rosenbrock_residuals, n),
            (f"Bratu 5-point, {m}x{m}", bratu, m * m),
            (f"arrowhead, n = {n // 10}", arrowhead, n // 10)]
    print(f"{'sparse Jacobian':36s} {'tangents':>10s} {'coloring':>10s} {'scipy FD':>10s}"
          f" {'nnz':>9s}")
    for name, func, size in rows:
        x = np.linspace(0.5, 1.5, size)
        jac = sparse_tangent_jacobian(func, x)
        ours = _best(lambda f=func, x=x: sparse_tangent_jacobian(f, x))
        pattern = F.jacobian_sparsity(func, x)
        start = time.perf_counter()
        fd = approx_derivative(_numpy(func), x, sparsity=pattern, method="2-point")
        theirs = time.perf_counter() - start  # (one call more below: seconds each, at worst)
        if abs(fd - jac).max() > 1e-4 * max(1.0, abs(jac).max()):
            raise AssertionError(f"{name}: sparse tangents and finite differences disagree")
        theirs = min(theirs, _best(lambda f=_numpy(func), x=x, p=pattern: approx_derivative(
            f, x, sparsity=p, method="2-point"), repeats=1))
        colored = _coloring(func, x)
        peer = "-" if colored is None else f"{colored * 1e3:8.1f}ms"
        print(f"{name:36s} {ours * 1e3:8.1f}ms {peer:>10s} {theirs * 1e3:8.1f}ms {jac.nnz:9d}")


if __name__ == "__main__":
    main()
