"""dualad: forward-mode-first automatic differentiation of NumPy code.

The core is the dual number (``dual_level``, ``make_dual``, ``unpack_dual``);
reverse mode (``backward``, ``grad``) comes from transposing the same JVP rules;
``dualad.functional`` combines both. The user API mirrors torch.autograd and
the array semantics follow NumPy.

>>> import dualad as da
>>> x = da.tensor([1.0, 2.0], requires_grad=True)
>>> (x ** 2).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

from . import (
    _fastpaths,
    _tensor_autograd,  # noqa: F401
    forward_ad,
    functional,  # noqa: E402  (builds on both modes)
    graph,
    numpy,
    profiler,
    reverse,  # noqa: F401  (installs recording and linearization)
    taylor,
)
from . import rules as _ops  # noqa: F401  (operators and methods)
from ._variable import Variable
from ._version import __version__
from .anomaly_mode import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .backends.dask import compute
from .core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .core.tensor import Tensor
from .forward_ad import (
    UnpackedDualTensor,
    dual_level,
    enter_dual_level,
    exit_dual_level,
    make_dual,
    unpack_dual,
)
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from .numpy import _interop, _methods  # noqa: F401  (NumPy dispatch, Tensor's array methods)
from .numpy.creation import (
    arange,
    as_tensor,
    empty,
    eye,
    full,
    linspace,
    ones,
    ones_like,
    rand,
    randn,
    tensor,
    zeros,
    zeros_like,
)
from .reverse import backward, grad

__all__ = [
    "Tensor", "Variable", "__version__", "forward_ad", "numpy", "reverse", "graph", "profiler",
    "taylor",
    "UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual",
    "unpack_dual", "enable_grad", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "no_grad", "set_grad_enabled", "arange", "as_tensor", "empty",
    "eye", "full", "linspace", "ones", "ones_like", "rand", "randn", "tensor", "zeros",
    "zeros_like", "backward", "grad", "Function", "FunctionCtx", "InplaceFunction",
    "once_differentiable", "functional", "detect_anomaly", "set_detect_anomaly",
    "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "GradcheckError", "gradcheck", "gradgradcheck",
]
__all__ += ["compute"]  # (Dask-backed tensors, dualad/_dask.py)

# The fast layer (dualad/fast/, docs/fast.md), through its one door. Without it the library
# runs on the general path alone.
_fastpaths.install()
