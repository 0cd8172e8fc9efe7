"""Logic functions: comparisons of whole arrays, truth tests, type tests (no derivative).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends.namespace import as_array as _as_array
from ..core.tensor import _make
from ..rules.vocabulary import _is_c, _nd, _raw

__all__ = [
    "all", "allclose", "any", "array_equal", "isclose", "iscomplex", "iscomplexobj", "isneginf",
    "isposinf", "isreal", "isrealobj",
]


def isclose(a: Any, b: Any, **kw: Any) -> Any:
    """``numpy.isclose`` on the values: a boolean Tensor, no derivative.

    Examples
    --------
    >>> dnp.isclose(dualad.tensor([1.0, 2.0]), [1.0 + 1e-9, 2.1])
    tensor([ True, False])
    """
    return _make(np.isclose(_raw(a), _raw(b), **kw))


def allclose(a: Any, b: Any, **kw: Any) -> bool:
    """``numpy.allclose`` on the values: a Python bool, no derivative.

    Examples
    --------
    >>> dnp.allclose(dualad.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-9])
    True
    """
    return bool(np.allclose(_raw(a), _raw(b), **kw))


def array_equal(a: Any, b: Any, **kw: Any) -> bool:
    """``numpy.array_equal`` on the values: a Python bool, no derivative.

    Examples
    --------
    >>> dnp.array_equal(dualad.tensor([1.0, 2.0]), [1, 2])
    True
    """
    return bool(np.array_equal(_raw(a), _raw(b), **kw))


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """``numpy.any``: a boolean Tensor, no derivative (no ``out=`` or ``where=``).

    Examples
    --------
    >>> dnp.any(dualad.tensor([0.0, 2.0])), dnp.any(dualad.tensor([[0.0, 0.0], [0.0, 3.0]]), axis=1)
    (tensor(True), tensor([False,  True]))
    """
    return _make(_as_array(np.any(_raw(a), axis=axis, keepdims=keepdims)))


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """``numpy.all``: a boolean Tensor, no derivative (no ``out=`` or ``where=``).

    Examples
    --------
    >>> dnp.all(dualad.tensor([1.0, 0.0])), dnp.all(dualad.tensor([[1.0, 0.0], [2.0, 3.0]]), axis=1)
    (tensor(False), tensor([False,  True]))
    """
    return _make(_as_array(np.all(_raw(a), axis=axis, keepdims=keepdims)))


def iscomplexobj(x: Any) -> bool:
    """``numpy.iscomplexobj`` (no derivative).

    Examples
    --------
    >>> dnp.iscomplexobj(dualad.tensor([1 + 0j])), dnp.iscomplexobj(dualad.tensor([1.0]))
    (True, False)
    """
    return _is_c(x)


def isrealobj(x: Any) -> bool:
    """``numpy.isrealobj`` (no derivative).

    Examples
    --------
    >>> dnp.isrealobj(dualad.tensor([1.0])), dnp.isrealobj(dualad.tensor([1 + 0j]))
    (True, False)
    """
    return not _is_c(x)


iscomplex = _nd(np.iscomplex, ">>> dnp.iscomplex(dualad.tensor([1 + 0j, 1j]))\ntensor([False,  True])")
isreal = _nd(np.isreal, ">>> dnp.isreal(dualad.tensor([1 + 0j, 1j]))\ntensor([ True, False])")
isposinf = _nd(np.isposinf,
               ">>> dnp.isposinf(dualad.tensor([-np.inf, 0.0, np.inf]))\ntensor([False, False,  True])")
isneginf = _nd(np.isneginf,
               ">>> dnp.isneginf(dualad.tensor([-np.inf, 0.0, np.inf]))\ntensor([ True, False, False])")
