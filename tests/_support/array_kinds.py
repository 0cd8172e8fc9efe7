"""An array kind that stands in for a GPU's in the backend tests.

``Strict`` is a NumPy array that refuses to meet a plain NumPy one: every array derived
from it stays Strict, so a hard-coded ``np.zeros``/``np.asarray``/... inside dualad, which on
a GPU would put a CPU array into a CuPy computation, raises here on any CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Strict(np.ndarray):
    """A NumPy chunk that refuses to meet a plain NumPy array (invariant 5 of docs/architecture.md).

    Everything computed from a Strict array is Strict (NumPy's protocols hand each ufunc and
    function to it), so a plain ``numpy.ndarray`` of one or more elements that meets one in a
    ufunc or a NumPy function was made by a hard-coded ``np.zeros``/``np.eye``/
    ``np.asarray``/... that ignored the kind of the inputs: on a GPU it would be a CPU array
    mixed into a CuPy computation. Arrays of no elements pass (Dask's ``_meta``)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kw: Any) -> Any:
        # (ufunc.at's second input is the index)
        _refuse_plain((inputs[:1] + inputs[2:] if method == "at" else inputs)
                      + tuple(kw.get("out", ())), ufunc)
        inputs = tuple(a.view(np.ndarray) if isinstance(a, Strict) else a for a in inputs)
        if "out" in kw:
            kw["out"] = tuple(a.view(np.ndarray) if isinstance(a, Strict) else a
                              for a in kw["out"])
        return _strict(getattr(ufunc, method)(*inputs, **kw))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func not in _TO_KIND:
            _refuse_plain(tuple(args) + tuple(kwargs.values()), func)
        return _strict(super().__array_function__(func, types, args, kwargs))

    def __getitem__(self, key: Any) -> Any:
        return _strict(super().__getitem__(key))  # (an element stays Strict: a 0-d array)


# np.asarray(values, like=...): values made of the inputs' kind, as they should be
_TO_KIND = (np.asarray, np.array, np.asanyarray)
# functions that take NumPy index arrays on any kind (Dask indexes by NumPy's)
_INDEXING = (np.take, np.take_along_axis, np.compress, np.delete, np.repeat, np.choose)


def _refuse_plain(args: Any, fn: Any) -> None:
    for a in args:
        if isinstance(a, (list, tuple)):
            _refuse_plain(a, fn)
        elif a.__class__ is np.ndarray and a.size > 1 and not (
                a.dtype.kind in "iu" and fn in _INDEXING):
            raise TypeError(f"a plain NumPy array {a.dtype}{list(a.shape)} (hard-coded NumPy) "
                            f"met the inputs' arrays in {getattr(fn, '__name__', fn)}")


def _strict(r: Any) -> Any:
    if r.__class__ is np.ndarray or isinstance(r, np.generic):
        return np.asarray(r).view(Strict)
    if isinstance(r, (tuple, list)):
        return type(r)(_strict(x) for x in r)
    return r
