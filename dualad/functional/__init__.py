"""Higher-level differentiation: whole Jacobians, Hessians and their products.

Two families, built on dual levels (forward mode) and the reverse engine:

* torch.autograd.functional's API — :func:`vjp`, :func:`jvp`,
  :func:`jacobian`, :func:`hessian`, :func:`hvp`, :func:`vhp` — with torch's
  signatures, input forms (a Tensor or ndarray, or a tuple of them), output
  nesting, ``strict`` errors and ``create_graph`` semantics;
* JAX-style transforms — :func:`grad`, :func:`value_and_grad`,
  :func:`jacfwd`, :func:`jacrev`, :func:`linearize`,
  :func:`linear_transpose` — that return new functions and compose;
  and :func:`jet`, JAX's Taylor-mode ``jet`` (derivatives of any order in one pass).

``jvp`` is true forward mode, ``hvp`` is forward-over-reverse, and the
vectorized Jacobians push a whole chunk of basis vectors through ONE batched
pass (tangents for forward mode, cotangents for reverse mode).

Examples
--------
>>> import numpy as np
>>> import dualad.functional as F
>>> F.jacobian(lambda x: x ** 2, np.array([1.0, 2.0]), vectorize=True, strategy="forward-mode")
tensor([[2., 0.],
        [0., 4.]])
>>> F.grad(lambda x: (x ** 2).sum())(np.array([1.0, 2.0]))
tensor([2., 4.])
"""

import importlib
from typing import Any

from ._autograd import hessian, hvp, jacobian, jvp, vhp, vjp
from ._jet import jet, laplacian
from ._ravel import ravel
from ._transforms import grad, jacfwd, jacrev, linear_transpose, linearize, value_and_grad

# Sparse differentiation needs SciPy (the ``scipy`` extra; dualad itself needs only NumPy):
# its names load their module on first use, so ``import dualad`` works without SciPy.
_NEEDS_SCIPY = {
    **dict.fromkeys(("jacobian_sparsity", "hessian_sparsity", "SparsityWarning"), "_sparsity"),
    **dict.fromkeys(("sparse_jacobian", "sparse_hessian", "prepare_sparse_jacobian",
                     "prepare_sparse_hessian", "SparseJacobian", "SparseHessian"), "_sparse"),
}


def __getattr__(name: str) -> Any:
    module = _NEEDS_SCIPY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    except ImportError as e:
        if (e.name or "").split(".")[0] != "scipy":
            raise
        raise ImportError(f"dualad.functional.{name} needs SciPy: pip install "
                          "'dualad[scipy]'") from e
    globals()[name] = value
    return value

__all__ = [
    "vjp",
    "jvp",
    "jacobian",
    "hessian",
    "hvp",
    "vhp",
    "grad",
    "value_and_grad",
    "jacfwd",
    "jacrev",
    "linearize",
    "linear_transpose",
    "jacobian_sparsity",
    "hessian_sparsity",
    "SparsityWarning",
    "sparse_jacobian",
    "sparse_hessian",
    "prepare_sparse_jacobian",
    "prepare_sparse_hessian",
    "SparseJacobian",
    "SparseHessian",
    "jet",
    "laplacian",
    "ravel",
]
