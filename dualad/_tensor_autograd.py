"""Tensor's reverse-mode methods (backward, hooks, retain_grad), attached at import."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from .core import dispatch as D
from .core.tensor import Tensor
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


def __copy__(self: Tensor) -> Tensor:
    """``copy.copy(t)``: a copy of the data, as NumPy's ``copy.copy`` of an array (and
    ``t.copy()``), differentiable: the copy keeps ``t``'s history and tangents.

    torch's ``copy.copy`` shares the memory; NumPy code relies on getting its own
    (``scipy.integrate.odeint`` copies ``y0`` with it, then integrates in place).

    Examples
    --------
    >>> import copy
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = copy.copy(x); y
    tensor([1., 2.], grad_fn=<PositiveBackward0>)
    >>> (3 * y).sum().backward(); x.grad
    tensor([3., 3.])
    """
    from .rules.inplace import scalar
    from .rules.vocabulary import copy

    r = copy(self)
    if not self.ndim and not scalar(self):  # (a copy of a 0-d array is one: x op= y writes)
        r._meta_().array = True
    return r


def __deepcopy__(self: Tensor, memo: dict[int, Any]) -> Tensor:
    """``copy.deepcopy(t)``: a copy of the data. A leaf gives a new leaf (torch's rule:
    the same ``requires_grad``, ``.grad`` deep-copied too, no hooks); a tensor with
    history or a tangent gives the differentiable copy of ``copy.copy`` (torch raises for
    the first and drops the tangent of the second; NumPy code expects the value, and
    dualad keeps its derivative).

    Examples
    --------
    >>> import copy
    >>> w = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> w2 = copy.deepcopy(w); w2.is_leaf, w2.requires_grad, w2 is w
    (True, True, False)
    """
    import copy

    from .rules.inplace import scalar

    if self._node is not None or (self._level and self._level < D.LIN and
                                  self._level in D.live):
        r = __copy__(self)
    else:
        inner = D.innermost(self)
        r = Tensor(inner._data.copy())
        if inner._rg:
            r.requires_grad_(True)
        if not self.ndim and scalar(self):
            r._meta_().array = False  # (a scalar's copy stays a scalar)
        g = self.grad
        if g is not None:
            r.grad = copy.deepcopy(g, memo)
    memo[id(self)] = r
    return r


def __format__(self: Tensor, format_spec: str) -> str:
    """``format(t, spec)`` and f-strings: a 0-d tensor formats its value, as NumPy's
    scalars and torch's 0-d tensors do (``f"{loss:.3f}"``; any derivative is left out of
    the text); a tensor of more dimensions takes only the empty spec (its ``str``), as
    NumPy's arrays and torch's tensors.

    Examples
    --------
    >>> loss = dualad.tensor([1.0, 2.0], requires_grad=True).sum()
    >>> f"{loss:.3f}"
    '3.000'
    """
    if self._data.ndim == self._nb:  # (0-d)
        return format(self._data.item(), format_spec)
    if not format_spec:
        return str(self)
    raise TypeError(
        f"unsupported format string {format_spec!r} passed to Tensor.__format__: only a 0-d "
        f"tensor formats its value (this one has shape {self.shape}), as in NumPy and torch; "
        "format its elements (f\"{v:.3f}\" for v in t.tolist()) or use "
        "numpy.array2string(t.detach().numpy(), ...)"
    )


for _f in (backward, register_hook, register_post_accumulate_grad_hook, retain_grad,
           __reduce_ex__, __copy__, __deepcopy__, __format__):
    setattr(Tensor, _f.__name__, _f)
