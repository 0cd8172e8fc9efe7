"""The meaning of NumPy's array methods on a Tensor (``t.sum(0)``, ``t.reshape(2, 3)``,
``t.sort()``, ...), registered by name for the methods ``dualad._tensor_methods.ArrayMethods``
declares.

Most are the ``dualad.numpy`` function of the same name with the tensor first, and are
documented as it (``help(t.sum)`` shows ``dnp.sum``'s documentation). The rest differ from
a function of the namespace the way ndarray's methods differ from NumPy's functions
(``reshape(2, 3)``, ``sort`` in place); ndarray's methods a Tensor refuses raise
``TypeError`` with the coverage table's reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor_methods import tensor_method
from ..core.dispatch import apply
from ..core.tensor import Tensor
from ..rules import elementwise as E
from ..rules import inplace as I
from ..rules import vocabulary as F
from . import indexing as NI
from . import logic as NL
from . import manipulation as NM
from . import products as NP
from . import reductions as NR
from . import sorting as NS
from . import ufuncs as NU
from ._coverage import NDARRAY, REFUSED

for _mod, _names in [
    (NR, "sum mean prod var std cumsum cumprod ptp"), (NP, "trace dot"),
    (NI, "diagonal take"), (NM, "ravel swapaxes squeeze repeat astype"),
    (NU, "clip round conj conjugate"), (NS, "argmax argmin argsort nonzero"), (NL, "all any"),
]:
    for _name in _names.split():
        tensor_method(_name, document=True)(getattr(_mod, _name))
tensor_method("max", document=True)(F.amax)
tensor_method("min", document=True)(F.amin)
tensor_method("flatten")(lambda self: F.reshape(F.asarray_t(F.positive(self)), (self.size,)))
tensor_method("copy")(lambda self: apply(E.PRIMS["positive"], self))
tensor_method("T")(NM.transpose_view)
tensor_method("reshape")(NM.reshape_view)
tensor_method("mT")(lambda self: F.swapaxes(self, -1, -2))
tensor_method("real")(F.real)
tensor_method("imag")(F.imag)
tensor_method("__divmod__")(NU.divmod)
tensor_method("__rdivmod__")(lambda self, o: NU.divmod(o, self))
tensor_method("compress")(lambda self, condition, axis: NI.compress(condition, self, axis))
tensor_method("choose")(NI.choose)


@tensor_method("transpose")
def _transpose(self: Tensor, *axes: Any) -> Any:
    if len(axes) == 1 and (axes[0] is None or np.ndim(axes[0]) == 1):
        axes = axes[0]
    return NM.transpose_view(self, axes or None)


@tensor_method("argpartition")
def _argpartition(self: Tensor, kth: Any, axis: int, **kw: Any) -> Tensor:
    return F._make(np.argpartition(self._data, kth, axis=axis, **kw))


@tensor_method("searchsorted")
def _searchsorted(self: Tensor, v: Any, side: str, sorter: Any) -> Tensor:
    return F._make(np.asarray(np.searchsorted(self._data, F._raw(v), side=side,
                                              sorter=F._raw(sorter))))


@tensor_method("sort")
def _sort_inplace(self: Tensor, axis: int, kind: Any, order: Any) -> None:
    I.setitem(self, Ellipsis, NS.sort(self, axis=axis, kind=kind))


@tensor_method("partition")
def _partition_inplace(self: Tensor, kth: Any, axis: int, kind: str, order: Any) -> None:
    I.setitem(self, Ellipsis, NS.partition(self, kth, axis=axis, kind=kind))


@tensor_method("fill")
def _fill(self: Tensor, value: Any) -> None:
    I.setitem(self, Ellipsis, value)


def _refused_method(name: str, reason: str) -> Any:
    def m(self: Tensor, *args: Any, **kw: Any) -> Any:
        raise TypeError(f"dualad: ndarray.{name} is not supported on dualad Tensors ({reason})")

    m.__name__, m.__doc__ = name, f"The reason: {reason}."
    return m


# ndarray's methods that a Tensor refuses (its attributes of this kind, such as ``flags`` or
# ``strides``, are not declared: ``hasattr`` must say no)
_REFUSED = {q.split(".", 1)[1]: reason for q, (status, reason) in NDARRAY.items()
            if status == REFUSED and callable(getattr(np.ndarray, q.split(".", 1)[1], None))}
_BITWISE = [("iand", "bitwise_and"), ("ior", "bitwise_or"), ("ixor", "bitwise_xor")]
for _name, _reason in _REFUSED.items():
    _documented = _name not in {f"__{n}__" for n, _ in _BITWISE}  # (these: see below)
    tensor_method(_name, document=_documented)(_refused_method(_name, _reason))
# ``x &= y`` (and ``|=``, ``^=``) on a tensor that stands for a NumPy scalar rebinds
# ``x & y``; into an array, refused as above
for _name, _pname in _BITWISE:
    _dunder = f"__{_name}__"
    tensor_method(_dunder)(I.bitwise_inplace(E.PRIMS[_pname], _refused_method(_dunder,
                                                                             _REFUSED[_dunder])))
