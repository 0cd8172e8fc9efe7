"""asdex and CasADi on the rows of ``benchmarks/sparse.py``, each skipped when not installed.

asdex (JAX): ``jacobian_coloring`` / ``hessian_coloring`` detect the pattern and color it
in one call; ``jacobian_from_coloring`` / ``hessian_from_coloring`` build the colored
evaluation, which is timed under ``jax.jit`` as asdex's documentation asks for repeated
calls (the first call, tracing and compiling, is not counted). The JAX functions are
sparse.py's own NumPy functions called with ``xp=jax.numpy``, so the arithmetic is the
same. CasADi: the function is written with SX symbols, ``casadi.jacobian`` (or
``casadi.hessian``) builds the derivative expression and ``casadi.Function`` compiles it to
CasADi's virtual machine; "build" times all of that, "eval" one call on a NumPy vector.

Each peer returns its native sparse matrix (a BCOO array, a CasADi DM); neither is
converted to SciPy inside the timed call. Before it is timed, each peer's matrix is
compared, value by value, with dualad's (``check(peer, dualad)``); a mismatch marks "!".
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

NOT_INSTALLED = "-"


def best(fn: Callable[[], Any], repeats: int = 5, budget: float = 3.0) -> float:
    """Best wall-clock time of ``fn()`` over at most ``repeats`` calls (within ``budget`` s)."""
    times, start = [], time.perf_counter()
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if time.perf_counter() - start > budget:
            break
    return min(times)


# -- asdex -------------------------------------------------------------------------------


def _jax() -> Any:
    """jax.numpy in double precision (dualad's results are float64), or None."""
    try:
        import asdex  # type: ignore[import-not-found]  # noqa: F401
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


def _bcoo_to_scipy(matrix: Any) -> sp.csr_array:
    indices = np.asarray(matrix.indices)
    return sp.csr_array((np.asarray(matrix.data), (indices[:, 0], indices[:, 1])),
                        shape=matrix.shape)


def asdex_times(func: Callable[..., Any], x: np.ndarray, reference: Any,
                check: Callable[[Any, Any], str], hessian: bool = False) -> dict[str, Any]:
    """asdex's detection + coloring (s) and jitted evaluation (ms) of ``func(x, xp=jnp)``.

    ``reference`` is dualad's matrix; ``check(peer, reference)`` gives "" or " !".
    """
    jax = _jax()
    if jax is None:
        return dict.fromkeys(("asdex detect+color s", "asdex eval ms (jit)"), NOT_INSTALLED)
    import asdex

    jfunc = functools.partial(func, xp=jax.numpy)
    xj = jax.numpy.asarray(x)
    color = asdex.hessian_coloring if hessian else asdex.jacobian_coloring
    from_coloring = asdex.hessian_from_coloring if hessian else asdex.jacobian_from_coloring
    with warnings.catch_warnings():  # the arrowhead's 500 colors show in the table
        warnings.simplefilter("ignore", asdex.DenseColoringWarning)
        t = time.perf_counter()
        coloring = color(jfunc, xj)
        detect_and_color = time.perf_counter() - t
    evaluate = jax.jit(from_coloring(jfunc, coloring))
    flag = check(_bcoo_to_scipy(evaluate(xj)), reference)  # also traces and compiles
    ms = 1e3 * best(lambda: jax.block_until_ready(evaluate(xj)))
    colors = f"{coloring.num_colors} {coloring.mode}"
    return {"asdex detect+color s": f"{detect_and_color:.3f} ({colors})",
            "asdex eval ms (jit)": f"{ms:.3g}{flag}"}


# -- CasADi ------------------------------------------------------------------------------


def _casadi() -> Any:
    try:
        import casadi  # type: ignore[import-not-found]
    except ImportError:
        return None
    return casadi


def _casadi_rosenbrock_residuals(ca: Any, x: Any) -> Any:
    return ca.vertcat(10 * (x[1:] - x[:-1] ** 2), 1 - x[:-1])


def _casadi_rosenbrock(ca: Any, x: Any) -> Any:
    return ca.sum1(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _casadi_bratu(ca: Any, u: Any, lam: float = 6.0) -> Any:
    """sparse.py's Bratu residual: row-major grid, zero boundary, the same arithmetic."""
    n = int(round(u.numel() ** 0.5))
    g = ca.reshape(u, n, n).T          # CasADi reshapes column by column; g[i, j] = u[i*n + j]
    zero_row, zero_col = ca.SX.zeros(1, n), ca.SX.zeros(n + 2, 1)
    p = ca.horzcat(zero_col, ca.vertcat(zero_row, g, zero_row), zero_col)
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * g
    return ca.vec((lap * (n + 1) ** 2 + lam * ca.exp(g)).T)   # row-major flattening


def _casadi_arrowhead(ca: Any, x: Any) -> Any:
    return ca.vertcat(ca.sum1(ca.sin(x) * x[0]), x[1:] ** 2 * x[0] + ca.exp(x[1:]))


CASADI_VERSIONS = {  # sparse.py's function name -> its CasADi SX form
    "rosenbrock_residuals": _casadi_rosenbrock_residuals,
    "rosenbrock": _casadi_rosenbrock,
    "bratu": _casadi_bratu,
    "arrowhead": _casadi_arrowhead,
}


def casadi_times(name: str, x: np.ndarray, reference: Any, check: Callable[[Any, Any], str],
                 hessian: bool = False) -> dict[str, Any]:
    """CasADi's build (SX, jacobian/hessian, Function; s) and evaluation (ms) of ``name``."""
    ca = _casadi()
    if ca is None:
        return {"casadi build s": NOT_INSTALLED, "casadi eval ms": NOT_INSTALLED}
    t = time.perf_counter()
    symbols = ca.SX.sym("x", x.size)
    expression = CASADI_VERSIONS[name](ca, symbols)
    derivative = ca.hessian(expression, symbols)[0] if hessian \
        else ca.jacobian(expression, symbols)
    evaluate = ca.Function("derivative", [symbols], [derivative])
    build = time.perf_counter() - t
    flag = check(sp.csr_array(evaluate(x).sparse()), reference)
    ms = 1e3 * best(lambda: evaluate(x))
    return {"casadi build s": f"{build:.3f}", "casadi eval ms": f"{ms:.3g}{flag}"}


def installed() -> list[str]:
    """The peers importable here."""
    return [name for name, probe in (("asdex", _jax), ("casadi", _casadi)) if probe()]
