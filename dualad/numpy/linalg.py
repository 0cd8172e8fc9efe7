"""``dualad.numpy.linalg``: ``numpy.linalg`` for Tensors (differentiable in both modes).

``np.linalg.inv(t)`` on a Tensor dispatches here.

>>> import dualad as da, dualad.numpy as dnp
>>> dnp.linalg.det(da.tensor([[2.0, 0.0], [0.0, 3.0]]))
tensor(6.)
"""

from ..rules.linalg import (  # noqa: F401
    EighResult,
    EigResult,
    LinAlgError,
    QRResult,
    SlogdetResult,
    SVDResult,
    __all__,
    cholesky,
    cond,
    cross,
    det,
    diagonal,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    lstsq,
    matmul,
    matrix_norm,
    matrix_power,
    matrix_rank,
    matrix_transpose,
    multi_dot,
    norm,
    outer,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensordot,
    tensorinv,
    tensorsolve,
    trace,
    vecdot,
    vector_norm,
)
