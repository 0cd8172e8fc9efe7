"""Dask-backed tensors: ``Tensor.compute`` and ``dualad.compute`` (invariant 5 of docs/architecture.md).

A tensor whose array is a Dask array stays lazy through every operation, forward and
reverse mode and the functional API: each builds the Dask graph of its result. Nothing
runs until it is asked for, here, as ``dask.compute`` would run it: several tensors in
one pass sharing their graph, on the scheduler Dask is configured with (threads by
default, or a ``dask.distributed`` client).
"""

from __future__ import annotations

from typing import Any

from .._tensor_methods import tensor_method
from ..core.tensor import Tensor, _make
from .namespace import is_dask


def compute(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
    """Compute several Dask-backed tensors in one pass (as ``dask.compute``).

    Each Tensor argument comes back as a Tensor holding its computed array (detached:
    a computed value has no graph); other arguments pass through ``dask.compute``.
    ``kwargs`` go to ``dask.compute`` (``scheduler=``, ...). Tensors of NumPy or CuPy
    arrays come back detached, unchanged.

    Examples
    --------
    >>> import dask.array
    >>> x = dualad.tensor(dask.array.ones(4, chunks=2), requires_grad=True)
    >>> loss = (x * x).sum()
    >>> loss.backward()  # builds the gradient's graph; nothing runs
    >>> loss, g = dualad.compute(loss, x.grad)
    >>> g
    tensor([2., 2., 2., 2.])
    """
    import dask

    arrays = [a._data if isinstance(a, Tensor) else a for a in args]
    done = dask.compute(*arrays, **kwargs) if any(is_dask(a) for a in arrays) else arrays
    return tuple(_make(d) if isinstance(a, Tensor) else d
                 for a, d in zip(args, done, strict=True))


@tensor_method("compute")
def compute_tensor(self: Tensor, **kwargs: Any) -> Tensor:
    """``Tensor.compute`` (documented there): ``compute`` of one tensor."""
    return compute(self, **kwargs)[0]


