"""The meaning of Tensor's reverse-mode methods (backward, hooks, retain_grad, ``.grad``)
and of its copying, pickling, formatting and conversions, registered by name for the methods
``dualad._tensor_methods.AutogradMethods`` declares and documents."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ._tensor_methods import tensor_method
from .core import dispatch as D
from .core.grad_mode import is_grad_enabled
from .core.tensor import Tensor
from .numpy.creation import _tracked, _warn_dropped
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




# -- leaving autodiff: a conversion that would drop a derivative warns (a Python number,
# as torch's) or raises (an array, which would go on computing without it) ----------------


@tensor_method("__float__")
def __float__(self: Tensor) -> float:
    """``Tensor.__float__`` (documented there)."""
    if self._requires_grad or self._level:
        _warn_dropped(self, "float(t)", stacklevel=4)
    return float(self.item())


@tensor_method("__int__")
def __int__(self: Tensor) -> int:
    """``Tensor.__int__`` (documented there)."""
    if self._requires_grad or self._level:
        _warn_dropped(self, "int(t)", stacklevel=4)
    return int(self.item())


@tensor_method("__complex__")
def __complex__(self: Tensor) -> complex:
    """``Tensor.__complex__`` (documented there)."""
    if self._requires_grad or self._level:
        _warn_dropped(self, "complex(t)", stacklevel=4)
    return complex(self.item())


@tensor_method("__array__")
def __array__(self: Tensor, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """``Tensor.__array__`` (documented there)."""
    _check_undifferentiated(self, "np.asarray(t)")
    a = self._data
    if dtype is not None and dtype != a.dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


@tensor_method("numpy")
def numpy(self: Tensor, force: bool = False) -> np.ndarray:
    """``Tensor.numpy`` (documented there)."""
    if not force:
        _check_undifferentiated(self, "t.numpy()")
    return self._data


def _check_undifferentiated(t: Tensor, what: str) -> None:
    """Raise if ``what`` (the user's conversion of ``t`` to an array) would drop a
    derivative ``t`` carries, saying how to keep it or to drop it on purpose."""
    if t._level >= D.LIN:
        raise RuntimeError(
            f"dualad: {what} on a symbolic tangent while reverse mode linearizes a JVP rule; "
            "a rule must apply dualad operations to tangents, not NumPy"
        )
    why = _tracked(t)
    if why == "requires grad" and not is_grad_enabled():
        # under no_grad no gradient is wanted: torch lets .numpy() through there (a live
        # tangent is still dropped: that still raises)
        why = f"carries a tangent at live level {t._level}" if t._level in D.live else None
    if why is not None:
        raise RuntimeError(
            f"dualad: {what} on a tensor that {why} would silently drop its derivatives. "
            "Call t.detach().numpy() (or np.asarray(t.detach())) if you mean to leave "
            "autodiff, or use dualad.numpy / NumPy functions directly on the Tensor, which "
            "dispatch to dualad. To build an array from Tensors (np.array([x, y]) cannot "
            "dispatch), use dualad.numpy.array([x, y]), which stacks them differentiably."
        )


# -- .grad ------------------------------------------------------------------------------


@tensor_method("grad")
def grad(self: Tensor) -> Tensor | None:
    """``Tensor.grad`` (documented there): a dual's is its innermost primal's."""
    inner = D.innermost(self) if self._level else self
    m = inner._meta
    if m is None or m.grad is None:
        if inner._node is not None and not (m is not None and m.retains_grad):
            _warn_non_leaf_grad()
        return None
    return m.grad


@tensor_method("grad.setter")
def set_grad(self: Tensor, value: Any) -> None:
    """``t.grad = value`` (and ``del t.grad``: None): a Tensor of ``t``'s shape and dtype."""
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(
                "assigned grad expected to be a Tensor or None but got grad of type "
                f"{type(value).__name__}; wrap it: t.grad = dualad.tensor(...)"
            )
        if value is self or (value._data is self._data and value._node is self._node
                             and value._requires_grad and self._requires_grad):
            raise RuntimeError("can't assign a tensor as its own grad; assign a copy "
                               "(t.grad = t.detach().copy())")
        if value.shape != self.shape:
            raise RuntimeError(
                f"assigned grad has data of a different size: expected {self.shape}, "
                f"got {value.shape}"
            )
        if value.dtype != self.dtype:
            raise RuntimeError(
                f"assigned grad has data of a different type: expected {self.dtype}, "
                f"got {value.dtype}"
            )
    D.innermost(self)._meta_().grad = value


def _warn_non_leaf_grad() -> None:
    """torch's warning for ``.grad`` of a non-leaf that does not retain its grad: backward
    never fills it, so None there is most likely a mistake (reading it is not the hot
    path: this runs only when it would return None)."""
    import warnings

    warnings.warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
        ".grad attribute won't be populated during dualad.backward(). If you indeed want "
        "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
        "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you "
        "access the leaf Tensor instead.", UserWarning, stacklevel=4)
