#!/usr/bin/env python
"""Sparse Jacobians and Hessians: dualad's colored batched products beside the peers.

    python benchmarks/sparse.py [--quick] [--markdown]

Rows (issue 31's scale targets): the Rosenbrock residuals at n = 2e5 (pattern
detection plus coloring, then each prepared evaluation), the Rosenbrock Hessian
at n = 1e5, a 300 x 300 five-point Bratu residual, and an arrowhead Jacobian
that needs a bidirectional coloring. Beside them: SciPy's finite differences
(``scipy.optimize._numdiff.approx_derivative``, the routine ``least_squares``
calls, with the same pattern; its column grouping is timed in "prepare"), and
dualad's dense ``jacfwd`` where the dense matrix fits. asdex (detection + coloring,
then its jitted colored evaluation) and CasADi (building the SX Jacobian or Hessian
function, then one evaluation) are timed when importable ("-" otherwise; see
``benchmarks/sparse_peers.py``), each checked value by value against dualad's matrix. Pattern detection
(``dualad.functional.jacobian_sparsity``) shows "n/a" where this tree lacks it;
the rows then take the known pattern. Each result is checked (against the
dense Jacobian on a slice, or finite differences) before it is timed.

Times are the best of several repeats (wall clock, seconds, or ms where marked).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize._numdiff import approx_derivative, group_columns

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import sparse_peers  # noqa: E402
from sparse_peers import best  # noqa: E402

import dualad.functional as F  # noqa: E402

# -- the problems ------------------------------------------------------------------------


# Each function takes its array namespace (``xp``), so that asdex traces the same
# arithmetic through jax.numpy.


def rosenbrock_residuals(x, xp=np):
    return xp.concatenate([10 * (x[1:] - x[:-1] ** 2), 1 - x[:-1]])


def rosenbrock_residuals_pattern(n):
    i = np.arange(n - 1)
    rows = np.concatenate([i, i, n - 1 + i])
    cols = np.concatenate([i, i + 1, i])
    return sp.csr_array((np.ones(rows.size, dtype=bool), (rows, cols)), shape=(2 * (n - 1), n))


def rosenbrock(x, xp=np):
    return xp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def tridiagonal(n):
    return sp.csr_array(sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)],
                                       offsets=[-1, 0, 1], dtype=bool))


def bratu_residual(n, lam=6.0):
    h2 = (n + 1) ** 2

    def bratu(u, xp=np):
        g = xp.reshape(u, (n, n))
        p = xp.pad(g, 1)
        lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * g
        return xp.reshape(lap * h2 + lam * xp.exp(g), (-1,))

    return bratu


def five_point_pattern(n):
    one = sp.diags_array([np.ones(n - 1), np.ones(n), np.ones(n - 1)], offsets=[-1, 0, 1])
    eye = sp.eye_array(n)
    return sp.csr_array(sp.kron(eye, one) + sp.kron(one, eye)).astype(bool)


def arrowhead(x, xp=np):
    """A dense first row and a dense first column."""
    return xp.concatenate([xp.sum(xp.sin(x) * x[0])[None], x[1:] ** 2 * x[0] + xp.exp(x[1:])])


def arrowhead_pattern(n):
    a = sp.lil_array((n, n), dtype=bool)
    a[0, :] = True
    a[:, 0] = True
    a.setdiag(True)
    return sp.csr_array(a)


# -- the rows ----------------------------------------------------------------------------


def _detect(func, x, pattern, hessian=False):
    """(seconds to detect the pattern, or "n/a"); checks the detected pattern covers ``pattern``."""
    name = "hessian_sparsity" if hessian else "jacobian_sparsity"
    detector = getattr(F, name, None)
    if detector is None:
        return "n/a"
    found = sp.csr_array(detector(func, x))
    missing = (sp.csr_array(pattern, dtype=bool).astype(np.int8)
               - found.astype(bool).astype(np.int8)) > 0
    if missing.nnz:
        raise AssertionError(f"{name} misses {missing.nnz} nonzeros")
    return best(lambda: detector(func, x), repeats=3)


def _close(a, b, rtol):
    a, b = sp.csr_array(a).toarray() if sp.issparse(a) else a, sp.csr_array(b).toarray() \
        if sp.issparse(b) else b
    return np.allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())


def _check_against_fd(result, fd, rtol=1e-5):
    """The sparse result against finite differences with the same pattern (√ε accurate)."""
    diff = abs(sp.csr_array(result) - sp.csr_array(fd))
    scale = abs(sp.csr_array(fd)).max()
    return "" if diff.max() <= rtol * max(scale, 1.0) else " !"


def _check_exact(peer, ours):
    """A peer's derivative against dualad's: both are exact, so only rounding may differ."""
    return _check_against_fd(peer, ours, rtol=1e-12)


_PEER_CACHE = {}


def _peer_cells(func, x, reference, hessian=False):
    """asdex's and CasADi's cells for ``func`` at ``x`` (once per function and size)."""
    key = (func.__name__, x.size, hessian)
    if key not in _PEER_CACHE:
        _PEER_CACHE[key] = {
            **sparse_peers.asdex_times(func, x, reference, _check_exact, hessian),
            **sparse_peers.casadi_times(func.__name__, x, reference, _check_exact, hessian)}
    return _PEER_CACHE[key]


def jacobian_row(label, func, x, pattern, dense_ok):
    t = time.perf_counter()
    prepared = F.prepare_sparse_jacobian(func, x, pattern)
    prepare = time.perf_counter() - t
    groups_time = best(lambda: group_columns(pattern), repeats=3)
    groups = group_columns(pattern)
    fd = approx_derivative(func, x, sparsity=(pattern, groups))
    flag = _check_against_fd(prepared(x), fd)
    row = {
        "problem": label, "shape": "x".join(map(str, pattern.shape)), "nnz": pattern.nnz,
        "colors": f"{prepared.ncolors} ({prepared.coloring.kind}; bound {prepared.lower_bound})",
        "scipy colors": int(groups.max()) + 1,
        "detect s": _detect(func, x, pattern),
        "prepare s": prepare, "eval ms": 1e3 * best(lambda: prepared(x)), "flag": flag,
        "scipy prepare s": groups_time,
        "scipy fd ms": 1e3 * best(lambda: approx_derivative(func, x, sparsity=(pattern, groups))),
        "dense jacfwd ms": "-", **_peer_cells(func, x, prepared(x)),
    }
    if dense_ok:
        jac = F.jacfwd(func)
        dense = np.asarray(jac(x).numpy())
        if not _close(prepared(x), dense, 1e-12):
            row["flag"] += " !"
        row["dense jacfwd ms"] = 1e3 * best(lambda: jac(x), repeats=3)
    return row


def hessian_row(label, func, gradient, x, pattern, coloring):
    t = time.perf_counter()
    prepared = F.prepare_sparse_hessian(func, x, pattern, coloring=coloring)
    prepare = time.perf_counter() - t
    groups = group_columns(pattern)
    fd = approx_derivative(gradient, x, sparsity=(pattern, groups))
    return {
        "problem": label, "shape": "x".join(map(str, pattern.shape)), "nnz": pattern.nnz,
        "colors": f"{prepared.ncolors} ({coloring}; bound {prepared.lower_bound})",
        "scipy colors": int(groups.max()) + 1,
        "detect s": _detect(func, x, pattern, hessian=True),
        "prepare s": prepare, "eval ms": 1e3 * best(lambda: prepared(x)),
        "flag": _check_against_fd(prepared(x), fd),
        "scipy prepare s": best(lambda: group_columns(pattern), repeats=3),
        "scipy fd ms": 1e3 * best(lambda: approx_derivative(gradient, x,
                                                             sparsity=(pattern, groups))),
        "dense jacfwd ms": "-", **_peer_cells(func, x, prepared(x), hessian=True),
    }


def rows(quick):
    from scipy.optimize import rosen_der

    scale = 10 if quick else 1
    rng = np.random.default_rng(0)
    n = 200_000 // scale
    out = [jacobian_row(f"Rosenbrock residuals, n={n}", rosenbrock_residuals,
                        rng.uniform(0.5, 1.5, n), rosenbrock_residuals_pattern(n), False)]
    n = 100_000 // scale
    x = rng.uniform(0.5, 1.5, n)
    for coloring in ("star", "acyclic"):
        out.append(hessian_row(f"Rosenbrock Hessian, n={n}", rosenbrock, rosen_der, x,
                               tridiagonal(n), coloring))
    for m, dense_ok in ((300 // (3 if quick else 1), False), (40, True)):
        out.append(jacobian_row(f"Bratu 5-point, {m}x{m}", bratu_residual(m),
                                rng.uniform(0, 0.1, m * m), five_point_pattern(m), dense_ok))
    n = 2000 // (4 if quick else 1)
    out.append(jacobian_row(f"arrowhead, n={n}", arrowhead, rng.uniform(0.5, 1.5, n),
                            arrowhead_pattern(n), True))
    return out


COLUMNS = ["problem", "shape", "nnz", "colors", "scipy colors", "detect s", "prepare s",
           "eval ms", "scipy prepare s", "scipy fd ms", "dense jacfwd ms", "asdex detect+color s",
           "asdex eval ms (jit)", "casadi build s", "casadi eval ms"]


def _cell(row, key):
    v = row[key]
    if isinstance(v, float):
        v = f"{v:.3g}" if key.endswith("ms") else f"{v:.3f}"
    if key == "eval ms":
        v = f"{v}{row['flag']}"
    return str(v)


def table(results, markdown):
    cells = [[_cell(r, k) for k in COLUMNS] for r in results]
    if markdown:
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(c) + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(COLUMNS)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*COLUMNS)] + [fmt.format(*c) for c in cells])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes divided by about 10")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    print(table(rows(args.quick), args.markdown))
    print("\nprepare s: coloring and index maps (the pattern given); detect s: pattern "
          "detection by the tracing interpreter. '!' marks a result that failed its check.")
    print("asdex detect+color s: asdex.jacobian_coloring / hessian_coloring (its colors and "
          "mode in brackets); asdex eval ms (jit): its *_from_coloring under jax.jit "
          "(compile not counted), BCOO output. casadi build s: SX symbols, jacobian/hessian, "
          "Function; casadi eval ms: one call, DM output. '-': not installed.")
    print("peers installed: " + (", ".join(sparse_peers.installed())
                                 or "none of asdex, casadi (not timed)"))


if __name__ == "__main__":
    main()
