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

from ._autograd import hessian, hvp, jacobian, jvp, vhp, vjp
from ._jet import jet, laplacian
from ._ravel import ravel
from ._sparse import (
    SparseHessian,
    SparseJacobian,
    prepare_sparse_hessian,
    prepare_sparse_jacobian,
    sparse_hessian,
    sparse_jacobian,
)
from ._sparsity import SparsityWarning, hessian_sparsity, jacobian_sparsity
from ._transforms import grad, jacfwd, jacrev, linear_transpose, linearize, value_and_grad

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
