"""Sorting, searching and counting: ``sort``, ``argsort``, ``argmax``, ``partition``, ...

Index results carry no derivative; sorted values are gathers, differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..rules._util import norm_axis as _norm_axis
from ..rules.vocabulary import _nd, asarray_t, astype, nonzero, ravel
from .indexing import take_along_axis

__all__ = [
    "argmax", "argmin", "argsort", "argwhere", "count_nonzero", "nanargmax", "nanargmin", "nonzero",
    "partition", "sort", "sort_complex",
]


argmax = _nd(np.argmax, ">>> dnp.argmax(dualad.tensor([1.0, 3.0, 2.0]))\ntensor(1)")
argmin = _nd(np.argmin,
             ">>> dnp.argmin(dualad.tensor([[1.0, 3.0], [4.0, 2.0]]), axis=1)\ntensor([0, 1])")
argsort = _nd(np.argsort, ">>> dnp.argsort(dualad.tensor([3.0, 1.0, 2.0]))\ntensor([1, 2, 0])")
argwhere = _nd(np.argwhere,
               ">>> dnp.argwhere(dualad.tensor([0.0, 1.0, 2.0]))\ntensor([[1],\n        [2]])")
count_nonzero = _nd(np.count_nonzero, ">>> dnp.count_nonzero(dualad.tensor([0.0, 1.0, 2.0]))\ntensor(2)")


def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None) -> Any:
    """``numpy.sort``: a gather by ``argsort``, so ties keep a stable order (``order=``
    is not supported).

    Examples
    --------
    >>> x = dualad.tensor([3.0, 1.0, 2.0], requires_grad=True)
    >>> y = dnp.sort(x); (y * dualad.tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> y.detach(), x.grad  # each input gets the weight of the place it sorts to
    (tensor([1., 2., 3.]), tensor([3., 1., 2.]))
    """
    a = asarray_t(a)
    if axis is None:
        a, axis = ravel(a), -1
    idx = np.argsort(a._data, axis=axis, kind="stable" if kind is None else kind)
    return take_along_axis(a, idx, axis)


def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """``numpy.partition``: NumPy's values, as a gather of the input (so differentiable).

    Examples
    --------
    >>> dnp.partition(dualad.tensor([3.0, 1.0, 2.0]), 1)[1]
    tensor(2.)
    """
    a = asarray_t(a)
    if axis is None:
        a, axis = ravel(a), -1
    ax = _norm_axis(axis, a.ndim)
    d = _B.to_host(a._data)  # (the index arithmetic below is on the host, as take's)
    p = np.partition(d, kth, axis=ax, kind=kind)
    # the index in ``a`` of each value of ``p``: ties are matched in a stable order
    src = np.argsort(d, axis=ax, kind="stable")
    dst = np.argsort(p, axis=ax, kind="stable")
    idx = np.empty(d.shape, np.intp)
    np.put_along_axis(idx, dst, src, axis=ax)
    return take_along_axis(a, idx, ax)


nanargmax = _nd(np.nanargmax, ">>> dnp.nanargmax(dualad.tensor([1.0, np.nan, 3.0]))\n"
                             "tensor(2)")
nanargmin = _nd(np.nanargmin, ">>> dnp.nanargmin(dualad.tensor([np.nan, 2.0, 1.0]))\n"
                             "tensor(2)")


def sort_complex(a: Any) -> Any:
    """``numpy.sort_complex``: sorted along the last axis by real part, then imaginary part
    (a permutation of the values), as a complex array.

    Examples
    --------
    >>> dnp.sort_complex(dualad.tensor([1 + 2j, 1 - 1j, -3 + 0j]))
    tensor([-3.+0.j,  1.-1.j,  1.+2.j])
    """
    a = asarray_t(a)
    idx = np.argsort(a._data, axis=-1, kind="stable")  # (complex: lexicographic)
    dt = np.sort_complex(np.zeros(1, a.dtype)).dtype
    return astype(take_along_axis(a, idx, -1), dt, copy=False)
