"""``dualad.numpy``: NumPy's namespace for the functions dualad can differentiate.

>>> import dualad.numpy as dnp
>>> dnp.sum(dnp.sin(dualad.tensor([0.0, 1.0])))
tensor(0.84147098)
"""

from types import ModuleType as _Module

from ..ops import functions as _F
from ..ops.ufunc_docs import EXAMPLES as _EXAMPLES
from ..ops.ufunc_docs import document as _document

_SKIP = {"annotations", "Any", "Sequence", "Tensor", "apply", "asarray_t", "powm1", "log_as",
         "powlog", "recip", "reshape_view", "transpose_view", "view_of", "zeros_like_tangent"}
for _n, _v in vars(_F).items():
    if not _n.startswith("_") and _n not in _SKIP and not isinstance(_v, _Module):
        globals()[_n] = _v

# (a new view even when nothing changes, as NumPy's: see functions.view_of)
reshape, transpose, permute_dims = _F.reshape_view, _F.transpose_view, _F.transpose_view

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None

__all__ = sorted(n for n in globals() if not n.startswith("_"))
_document(globals(), "numpy", "dnp", _EXAMPLES)  # (the ufuncs' docstrings)

from . import fft, linalg  # noqa: E402,F401  (dualad.numpy.fft, dualad.numpy.linalg)
