"""Products and contractions: ``vdot``, ``inner``, ``kron``, ``trace``, ``matvec``, ``vecmat``.

``matmul``, ``dot``, ``outer``, ``tensordot``, ``einsum``, ``cross`` and ``vecdot``
are defined with the rules' vocabulary (:mod:`dualad.rules.vocabulary`) and
exported here.
"""

from __future__ import annotations

import builtins
from typing import Any

from ..rules.vocabulary import (
    _ndim,
    _seq,
    asarray_t,
    conj,
    cross,
    diagonal,
    dot,
    einsum,
    matmul,
    multiply,
    outer,
    ravel,
    reshape,
    sum,
    tensordot,
    vecdot,
)

__all__ = [
    "cross", "dot", "einsum", "inner", "kron", "matmul", "matvec", "outer", "tensordot", "trace",
    "vdot", "vecdot", "vecmat",
]


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``numpy.trace`` (no ``dtype`` or ``out``).

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.trace(a); y.backward()
    >>> y.detach()
    tensor(5.)
    >>> a.grad
    tensor([[1., 0.],
            [0., 1.]])
    """
    return sum(diagonal(a, offset, axis1, axis2), axis=-1)


def vdot(a: Any, b: Any) -> Any:
    """``numpy.vdot``: conjugates the first argument, flattens both.

    Examples
    --------
    >>> dnp.vdot(dualad.tensor([1.0 + 1.0j, 2.0]), dualad.tensor([1.0j, 1.0]))
    tensor(3.+1.j)
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.vdot(x, dualad.tensor([3.0, 4.0])).backward(); x.grad
    tensor([3., 4.])
    """
    return sum(conj(ravel(a)) * ravel(b))


def inner(a: Any, b: Any) -> Any:
    """``numpy.inner``: a contraction of the last axes (a product when one is a scalar).

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> dnp.inner(a, [3.0, 4.0]).backward(); a.grad
    tensor([3., 4.])
    """
    a, b = _seq(a), _seq(b)
    if _ndim(a) == 0 or _ndim(b) == 0:
        return multiply(a, b)  # type: ignore[name-defined] # noqa: F821
    return tensordot(a, b, axes=([-1], [-1]))


def kron(a: Any, b: Any) -> Any:
    """``numpy.kron``: the Kronecker product, a broadcast product and a reshape.

    Examples
    --------
    >>> a = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> k = dnp.kron(a, [1.0, 10.0]); k.detach()
    tensor([ 1., 10.,  2., 20.])
    >>> k.sum().backward(); a.grad
    tensor([11., 11.])
    """
    a, b = asarray_t(a), asarray_t(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    ai = reshape(a, tuple(x for d in a.shape for x in (d, 1)))
    bi = reshape(b, tuple(x for d in b.shape for x in (1, d)))
    return reshape(ai * bi, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


def matvec(x1: Any, x2: Any, /) -> Any:
    """``numpy.matvec``: matrix-vector products over the last axes.

    Examples
    --------
    >>> a = dualad.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = dnp.matvec(a, [1.0, 10.0]); y.detach()
    tensor([21., 43.])
    >>> y.sum().backward(); a.grad
    tensor([[ 1., 10.],
            [ 1., 10.]])
    """
    return einsum("...ij,...j->...i", x1, x2)


def vecmat(x1: Any, x2: Any, /) -> Any:
    """``numpy.vecmat``: conjugated vector-matrix products over the last axes.

    Examples
    --------
    >>> v = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.vecmat(v, dualad.tensor([[1.0, 2.0], [3.0, 4.0]])); y.sum().backward()
    >>> y.detach(), v.grad  # v @ m, and the row sums of m
    (tensor([ 7., 10.]), tensor([3., 7.]))
    """
    return einsum("...j,...ji->...i", conj(asarray_t(x1)), x2)
