"""NumPy's own functions on Tensors: ``__array_ufunc__`` and ``__array_function__``.

Both route to ``dualad.numpy``, so ``np.sin(t)`` and ``dnp.sin(t)`` are the same
call. A NumPy function dualad cannot differentiate raises ``TypeError`` naming it,
instead of returning a result with its derivatives silently dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor_methods import tensor_method
from ..core.tensor import Tensor, _make

_UFUNC_NAMES = {"absolute": "abs", "conjugate": "conj", "true_divide": "divide"}
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "amax", "minimum": "amin"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


def _unsupported(what: str, why: str = "") -> TypeError:
    return TypeError(
        f"dualad: {what} is not supported on dualad Tensors{why}; it would drop derivatives. "
        "Use a function of dualad.numpy, or call t.detach().numpy() first if you do not need "
        "the derivative."
    )


def array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    import dualad.numpy as dnp

    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    if "out" in kwargs:
        out = kwargs["out"]
        if method != "__call__" or len(kwargs) > 1 or not (
                isinstance(out, tuple) and len(out) == 1 and isinstance(out[0], Tensor)):
            raise _unsupported(f"numpy.{ufunc.__name__}(..., out=...)",
                               " (out= writes in place; it takes one Tensor)")
    if method == "__call__":
        fn = getattr(dnp, name, None)
        if fn is not None and kwargs.keys() == {"out"}:  # written in place (see above)
            return fn(*inputs, out=kwargs["out"][0])
        if fn is None and getattr(np, ufunc.__name__, None) is not ufunc and \
                (e := _scipys(ufunc)) is not None:
            raise e
        if fn is None and not kwargs:
            fn = _missing(f"numpy.{ufunc.__name__}", ufunc)
        if fn is None or kwargs:
            raise _unsupported(f"numpy.{ufunc.__name__}" + (f" with {sorted(kwargs)}" if kwargs
                                                            else ""))
        return fn(*inputs)
    table = {"reduce": _REDUCE, "accumulate": _ACCUMULATE}.get(method, {})
    if ufunc.__name__ in table:
        kw = {k: v for k, v in kwargs.items() if k in ("axis", "keepdims", "dtype")}
        if set(kwargs) - set(kw):
            raise _unsupported(f"numpy.{ufunc.__name__}.{method} with {sorted(kwargs)}")
        if method == "reduce" and "axis" not in kw:
            kw["axis"] = 0
        if method == "accumulate":
            kw.setdefault("axis", 0)
            kw.pop("keepdims", None)
        return getattr(dnp, table[ufunc.__name__])(*inputs, **kw)
    raise _unsupported(f"numpy.{ufunc.__name__}.{method}")


def array_function(self: Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    import dualad.numpy as dnp

    mod = func.__module__ or "numpy"
    ns: Any = dnp
    for part in mod.split(".")[1:]:
        ns = getattr(ns, part, None)
        if ns is None:
            break
    fn = getattr(ns, func.__name__, None) if ns is not None else None
    if fn is None:
        fn = _missing(f"{mod}.{func.__name__}", func)
    return fn(*args, **kwargs)


def _scipys(ufunc: np.ufunc) -> TypeError | None:
    """The error for one of SciPy's special functions (ufuncs, so NumPy hands
    ``scipy.special.erf(t)`` to the Tensor), named as SciPy's, with dualad's
    differentiable counterpart where there is one; None for another ufunc."""
    import sys

    name = ufunc.__name__
    sp = sys.modules.get("scipy.special")
    if sp is None or getattr(sp, name, None) is not ufunc:
        return None
    from ..scipy import special  # (lazily, as dualad.numpy above: a layer that uses this one)

    if name in special.__all__:
        return TypeError(
            f"dualad: scipy.special.{name} is not supported on dualad Tensors: SciPy's "
            "compiled function would drop derivatives. Use dualad.scipy.special."
            f"{name}(t), which is differentiable (or scipy.special.{name}(t.detach()."
            "numpy()) if you do not need the derivative).")
    return TypeError(
        f"dualad: scipy.special.{name} is not supported on dualad Tensors: SciPy's compiled "
        "function would drop derivatives, and dualad.scipy.special has no counterpart (it "
        f"has {', '.join(special.__all__)}). Call scipy.special.{name}(t.detach().numpy()) "
        "if you do not need the derivative, or write it with dualad.numpy functions or as "
        "a dualad.Function.")


def _missing(qualname: str, func: Any) -> Any:
    """A NumPy function dualad.numpy lacks: its integer/boolean/text result on the
    Tensors' values (it has no derivative), or ``TypeError`` with the coverage
    table's reason."""
    from . import _coverage

    if _coverage.passes_through(qualname):
        return lambda *args, **kwargs: _wrap(func(*_values(args), **dict(zip(
            kwargs, _values(tuple(kwargs.values())), strict=True))))
    why = f" ({_coverage.refusal(qualname)})"
    into = _coverage.writes_first(qualname)
    if not (into or _coverage.on_values(qualname)):
        raise _unsupported(qualname, why)

    def on_values(*args: Any, **kwargs: Any) -> Any:
        # refused for the derivative only (or for writing into a Tensor behind its version
        # counter): Tensors that carry none give NumPy's values (written into an ndarray)
        if into and args and not isinstance(args[0], Tensor) and (
                _carries(args) or _carries(tuple(kwargs.values()))):
            raise _unsupported(qualname, (
                ": NumPy writes a Tensor that carries a derivative into an ndarray (as "
                "numpy.full_like(a, t) does, through numpy.copyto); dualad.numpy.full_like, "
                "full or where keep the derivative"))
        if _carries(args) or _carries(tuple(kwargs.values())) or into and (
                not args or isinstance(args[0], Tensor)):
            raise _unsupported(qualname, why)
        return _wrap(func(*_values(args), **dict(zip(
            kwargs, _values(tuple(kwargs.values())), strict=True))))

    return on_values


def _carries(args: tuple[Any, ...]) -> bool:
    """True if a Tensor among ``args`` (or in a list or tuple there) requires grad or
    carries a live tangent."""
    from .creation import _tracked

    return any(_tracked(a) is not None if isinstance(a, Tensor) else
               isinstance(a, (list, tuple)) and _carries(tuple(a)) for a in args)


def _values(args: tuple[Any, ...]) -> tuple[Any, ...]:
    from ..rules.vocabulary import _detached

    return tuple(_detached(a) for a in args)


def _wrap(r: Any) -> Any:
    if isinstance(r, np.ndarray):
        return _make(r)
    if isinstance(r, tuple):
        return tuple(_wrap(x) for x in r)
    return r


tensor_method("__array_ufunc__")(array_ufunc)
tensor_method("__array_function__")(array_function)
