"""The meaning of Tensor's reverse-mode methods (backward, hooks, retain_grad) and of its
copying, pickling and formatting, registered by name for the methods
``dualad._tensor_methods.AutogradMethods`` declares and documents."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ._tensor_methods import tensor_method
from .core import dispatch as D
from .core.tensor import Tensor
from .reverse.engine import backward as _backward
from .reverse.graph import RemovableHandle


@tensor_method("backward")
def backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """``Tensor.backward`` (documented there)."""
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


@tensor_method("register_hook")
def register_hook(self: Tensor, hook: Callable[[Tensor], Any]) -> RemovableHandle:
    """``Tensor.register_hook`` (documented there)."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    t = D.innermost(self)
    if t._node is None:
        return RemovableHandle(t._meta_()._table("hooks"), hook)
    table = t._node._table("tensor_pre_hooks").setdefault(t._out_nr, {})
    return RemovableHandle(table, hook)


@tensor_method("register_post_accumulate_grad_hook")
def register_post_accumulate_grad_hook(self: Tensor, hook: Callable[[Tensor], Any]) -> Any:
    """``Tensor.register_post_accumulate_grad_hook`` (documented there)."""
    if self._node is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return RemovableHandle(D.innermost(self)._meta_()._table("post_hooks"), hook)


@tensor_method("retain_grad")
def retain_grad(self: Tensor) -> None:
    """``Tensor.retain_grad`` (documented there)."""
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    t = D.innermost(self)
    if t._node is None:
        return
    t._meta_().retains_grad = True
    t._node._table("retain")[t._out_nr] = weakref.ref(t)
    if self is not t:  # (.grad of a dual reads its innermost primal's; this one keeps its own
        self._meta_().retains_grad = True  # meta, which may say it is a view)


@tensor_method("__reduce_ex__")
def __reduce_ex__(self: Tensor, protocol: int) -> Any:
    """``Tensor.__reduce_ex__`` (documented there)."""
    if self._level and self._level < D.LIN and self._level in D.live:
        raise RuntimeError("cannot pickle a dual tensor while its level is live; pickle "
                           "dualad.unpack_dual(t).primal and .tangent instead")
    return _rebuild, (D.innermost(self)._data, bool(self._requires_grad))


def _rebuild(data: Any, requires_grad: bool) -> Tensor:
    return Tensor(data, requires_grad=requires_grad)


@tensor_method("__copy__")
def __copy__(self: Tensor) -> Tensor:
    """``Tensor.__copy__`` (documented there)."""
    from .rules.inplace import scalar
    from .rules.vocabulary import copy

    r = copy(self)
    if not self.ndim and not scalar(self):  # (a copy of a 0-d array is one: x op= y writes)
        r._meta_().array = True
    return r


@tensor_method("__deepcopy__")
def __deepcopy__(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """``Tensor.__deepcopy__`` (documented there)."""
    import copy

    from .rules.inplace import scalar

    if self._node is not None or (self._level and self._level < D.LIN and
                                  self._level in D.live):
        r = __copy__(self)
    else:
        inner = D.innermost(self)
        r = Tensor(inner._data.copy())
        if inner._requires_grad:
            r.requires_grad_(True)
        if not self.ndim and scalar(self):
            r._meta_().array = False  # (a scalar's copy stays a scalar)
        g = self.grad
        if g is not None:
            r.grad = copy.deepcopy(g, memo)
    memo[id(self)] = r
    return r


@tensor_method("__format__")
def __format__(self: Tensor, format_spec: str) -> str:
    """``Tensor.__format__`` (documented there)."""
    if self._data.ndim == self._batch_ndim:  # (0-d)
        return format(self._data.item(), format_spec)
    if not format_spec:
        return str(self)
    raise TypeError(
        f"unsupported format string {format_spec!r} passed to Tensor.__format__: only a 0-d "
        f"tensor formats its value (this one has shape {self.shape}), as in NumPy and torch; "
        "format its elements (f\"{v:.3f}\" for v in t.tolist()) or use "
        "numpy.array2string(t.detach().numpy(), ...)"
    )


