"""``dualad.numpy``: NumPy's namespace for the functions dualad can differentiate.

>>> import dualad.numpy as dnp
>>> dnp.sum(dnp.sin(dualad.tensor([0.0, 1.0])))
tensor(0.84147098)
"""

from ..rules.ufunc_docs import EXAMPLES as _EXAMPLES
from ..rules.ufunc_docs import document as _document
from .calculus import *
from .creation import *
from .indexing import *
from .logic import *
from .manipulation import *

# NumPy's reshape and transpose: a new view even when nothing changes (see manipulation.view_of)
from .manipulation import reshape_view as reshape  # noqa: E402,I001
from .manipulation import transpose_view as permute_dims
from .manipulation import transpose_view as transpose
from .polynomial import *
from .products import *
from .reductions import *
from .sorting import *
from .statistics import *
from .ufuncs import *

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None

# The topic modules are where the functions live, not names of NumPy's namespace: taken out
# of it, so that ``dnp.polynomial`` is not mistaken for ``numpy.polynomial`` (whose polyval
# takes its coefficients in the other order); ``import dualad.numpy.polynomial`` still works.
# (The imports above bound each submodule's name here, unseen by linters.)
del calculus, creation, indexing, logic, manipulation, polynomial, products  # noqa: F821
del reductions, sorting, statistics, ufuncs  # noqa: F821

__all__ = sorted(n for n in globals() if not n.startswith("_"))
_document(globals(), "numpy", "dnp", _EXAMPLES)  # (the ufuncs' docstrings)

from . import fft, linalg  # noqa: E402,F401  (dualad.numpy.fft, dualad.numpy.linalg)
