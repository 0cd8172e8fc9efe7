"""``Variable``: the deprecated wrapper of the first autograd API, kept as a shim."""

from __future__ import annotations

import warnings
from typing import Any

from .core.tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: Tensors do all a Variable did. ``Variable(t, requires_grad)``
    returns a Tensor sharing ``t``'s data (a new leaf), and warns.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     v = dualad.Variable(dualad.ones(2), requires_grad=True)
    >>> isinstance(v, dualad.Tensor), v.requires_grad
    (True, True)
    """

    def __new__(cls, data: Any = (), requires_grad: bool = False, volatile: bool = False) -> Any:
        warnings.warn(
            "dualad.Variable is deprecated: Tensors support autograd directly; use "
            "dualad.tensor(data, requires_grad=...) (or t.requires_grad_()) instead",
            DeprecationWarning, stacklevel=2)
        t = data.detach() if isinstance(data, Tensor) else Tensor(data)
        if requires_grad:
            t.requires_grad_()
        return t
