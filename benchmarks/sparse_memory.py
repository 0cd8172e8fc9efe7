"""Memory of sparse differentiation against the number of nonzeros.

    python benchmarks/sparse_memory.py

For the Rosenbrock residuals at three sizes, the peak memory Python's allocator sees
(tracemalloc) during one prepared evaluation (``prepare_sparse_jacobian``'s object called
at a point), one pattern detection (``jacobian_sparsity``) and one Jacobian by sparse
tangents, divided by the Jacobian's nonzeros: a constant per-nonzero cost means memory
proportional to the nonzeros (a dense Jacobian at n = 8·10^5 would take 5 TB).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import dualad.functional as F
import dualad.numpy as dnp


def rosenbrock_residuals(x: Any) -> Any:
    return dnp.concatenate([10 * (x[1:] - x[:-1] ** 2), 1 - x[:-1]])


def peak_bytes(fn: Callable[[], Any]) -> int:
    """The peak traced allocation of one call of ``fn`` (after one call to warm up)."""
    fn()
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> None:
    print(f"{'n':>8} {'nnz':>9}  {'prepared eval':>22}  {'detection':>22}  {'sparse tangents':>22}")
    for n in (50_000, 200_000, 800_000):
        x = np.linspace(0.5, 1.5, n)
        J = F.prepare_sparse_jacobian(rosenbrock_residuals, x)
        nnz = J(x).nnz
        cells = []
        for fn in (lambda J=J, x=x: J(x),
                   lambda x=x: F.jacobian_sparsity(rosenbrock_residuals, x),
                   lambda x=x: F.sparse_jacobian(rosenbrock_residuals, x,
                                                 strategy="sparse-tangents")):
            peak = peak_bytes(fn)
            cells.append(f"{peak / 1e6:7.1f} MB ({peak / nnz:4.1f} B/nnz)")
        print(f"{n:8d} {nnz:9d}  " + "  ".join(f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
