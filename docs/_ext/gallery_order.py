"""The order of the gallery: a learning path, first steps first.

sphinx-gallery sorts the scripts of ``examples/`` with :func:`learning_path` (conf.py's
``within_subsection_order``). Each entry of ``PATH`` is a part of a script's file name, so
that a script keeps its place when its number changes; a script that no entry names comes
after all of them, in file-name order.
"""

from __future__ import annotations

from pathlib import Path

PATH = (
    "quickstart",                # one derivative by each mode
    "dual_numbers_from_scratch",  # what forward mode is
    "forward_vs_reverse_cost",   # what each mode costs
    "reverse_as_transposition",  # how reverse mode comes from forward mode
    "logistic_regression",       # everyday reverse mode: a loss and its gradient
    "newton_method",             # jacobian, jvp, hessian
    "newton_cg_vs_bfgs",         # Hessian-vector products with SciPy
    "complex_wirtinger",         # complex parameters
    "taylor_coefficients",       # nested dual levels: higher derivatives
    "double_pendulum",           # a Lagrangian's derivatives
    "sympy_crosscheck",          # checking against SymPy
    "implicit_differentiation",  # derivatives of a fixed point
    "ode_sensitivities",         # forward mode through an integrator
    "jvp_only_function",         # extending: a Function with only a JVP
    "backward_only",             # ... and with only a backward
    "find_nan",                  # debugging: anomaly detection
    "profile_mlp",               # profiling
    "dask_gradient",             # arrays larger than memory
    "gpu_newton",                # a GPU, with CuPy
)


def learning_path(filename: str) -> tuple[int, str]:
    """The sort key of an example script: its place in ``PATH``, then its name."""
    name = Path(filename).name
    for k, part in enumerate(PATH):
        if part in name:
            return k, name
    return len(PATH), name
