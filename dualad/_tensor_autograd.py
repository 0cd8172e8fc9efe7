"""Tensor's reverse-mode methods (backward, hooks, retain_grad), attached at import."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from . import _dispatch as D
from ._tensor import Tensor
from .reverse.engine import backward as _backward
from .reverse.graph import RemovableHandle


def backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate the gradient of this tensor into the leaves' ``.grad``.

    Examples
    --------
    >>> x = dualad.tensor([3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([6.])
    """
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it.

    Examples
    --------
    >>> x = dualad.tensor([1.0], requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 2)
    >>> (x * 3).sum().backward()
    >>> x.grad
    tensor([6.])
    """
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    t = D.innermost(self)
    if t._node is None:
        return RemovableHandle(t._meta_()._table("hooks"), hook)
    table = t._node._table("tensor_pre_hooks").setdefault(t._out_nr, {})
    return RemovableHandle(table, hook)


def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], Any]) -> Any:
    """Call ``hook(tensor)`` after a leaf's ``.grad`` was accumulated.

    Examples
    --------
    >>> w = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> seen = []
    >>> h = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    >>> (w * 3).sum().backward(); seen
    [[3.0, 3.0]]
    """
    if self._node is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return RemovableHandle(D.innermost(self)._meta_()._table("post_hooks"), hook)


def retain_grad(self: Tensor) -> None:
    """Keep ``.grad`` for a non-leaf tensor after backward.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * x
    >>> y.retain_grad()
    >>> (y * 3).sum().backward(); y.grad
    tensor([3., 3.])
    """
    if not self._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    t = D.innermost(self)
    if t._node is None:
        return
    t._meta_().retains_grad = True
    t._node._table("retain")[t._out_nr] = weakref.ref(t)
    if self is not t:  # (.grad of a dual reads its innermost primal's; this one keeps its own
        self._meta_().retains_grad = True  # meta, which may say it is a view)


def __reduce_ex__(self: Tensor, protocol: int) -> Any:
    """Pickle (any protocol) the array and ``requires_grad``; the graph, hooks and tangents
    stay behind (the copy is a leaf), as torch does."""
    if self._level and self._level < D.LIN and self._level in D.live:
        raise RuntimeError("cannot pickle a dual tensor while its level is live; pickle "
                           "dualad.unpack_dual(t).primal and .tangent instead")
    return _rebuild, (D.innermost(self)._data, bool(self._rg))


def _rebuild(data: Any, requires_grad: bool) -> Tensor:
    return Tensor(data, requires_grad=requires_grad)


for _f in (backward, register_hook, register_post_accumulate_grad_hook, retain_grad,
           __reduce_ex__):
    setattr(Tensor, _f.__name__, _f)
