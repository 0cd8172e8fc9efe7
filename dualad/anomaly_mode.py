"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``.

While it is on (thread-local, like the grad modes), every node recorded keeps
the traceback of the forward call that made it (``node.metadata["traceback_"]``),
an error raised in backward also shows that traceback, and with ``check_nan``
a node whose backward gives NaN raises naming it, as does a forward-mode JVP
that gives a NaN tangent from finite inputs.

Nothing of this costs while no thread has it on: the first thread to turn it
on registers an observer of the primitives with the core (``dualad.observe``:
nodes recorded with their tracebacks, each dual evaluation checked, the forward
fast paths standing aside) and the last to turn it off unregisters it; the
engine picks its checking loop once per backward pass.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np

from . import observe as O
from .core import grad_mode as gm
from .core.tensor import Tensor

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

_lock = threading.Lock()


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on in this thread.

    Examples
    --------
    >>> with dualad.detect_anomaly():
    ...     dualad.is_anomaly_enabled()
    True
    >>> dualad.is_anomaly_enabled()
    False
    """
    return gm.anomaly.on


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks for NaN in this thread.

    Examples
    --------
    >>> with dualad.detect_anomaly(check_nan=False):
    ...     dualad.is_anomaly_check_nan_enabled()
    False
    """
    return gm.anomaly.on and gm.anomaly.check_nan


def _set(on: bool, check_nan: bool) -> None:
    st = gm.anomaly
    was = st.on
    st.on, st.check_nan = on, check_nan
    if on == was:
        return
    from .reverse import graph as G  # (installed by then: dualad imports reverse)

    with _lock:
        d = 1 if on else -1
        gm.anomaly_threads[0] += d
        G.hooks_live[0] += d
        n = gm.anomaly_threads[0]
        if on and n == 1:
            O.observe(_observer)
        elif not on and n == 0:
            O.unobserve(_observer)


class set_detect_anomaly:
    """Turn anomaly detection on or off: a function, or a context manager
    that restores the previous setting.

    Examples
    --------
    >>> with dualad.set_detect_anomaly(True):
    ...     dualad.is_anomaly_enabled()
    True
    >>> dualad.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (gm.anomaly.on, gm.anomaly.check_nan)
        _set(bool(mode), bool(check_nan))

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set(*self.prev)


class detect_anomaly:
    """Anomaly detection in this block (or decorated function); for debugging only,
    as it slows every operation down.

    Nodes recorded in the block keep the traceback of the forward call that
    made them; an error in backward also prints it ("Traceback of forward call
    that caused the error"). With ``check_nan``, a node whose backward gives
    NaN raises ``RuntimeError`` ("Function 'LogBackward0' returned nan values in
    its 0th output."), and so does a forward-mode operation whose tangent is
    NaN while its inputs are finite.

    Examples
    --------
    >>> import dualad.numpy as dnp
    >>> x = dualad.tensor([0.0, 1.0], requires_grad=True)
    >>> with dualad.detect_anomaly():  # doctest: +SKIP
    ...     dnp.sqrt(x).sum().backward()
    Traceback (most recent call last):
    ...
    RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)

    def __enter__(self) -> None:
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)
        self.prev = (gm.anomaly.on, gm.anomaly.check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _set(*self.prev)

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


def _check_dual(prim: Any, args: Any, params: dict[str, Any], L: int, out: Any) -> None:
    """The NaN check of the tangents of ``out = prim(*args)`` at level ``L`` (check_nan in
    this thread)."""
    st = gm.anomaly
    if st.on and st.check_nan:
        outs = out if isinstance(out, tuple) else (out,)
        check_tangents(prim.name, [_tangent(o) if o.__class__ is Tensor and o._level == L
                                   else None for o in outs], lambda: _finite_inputs(args, L))


# what anomaly mode asks of the core while some thread has it on (registered in ``_set``)
_observer = O.Observer(check_dual=_check_dual, traced=True)


def check_tangents(name: str, tangents: list[Any], finite: Any) -> None:
    """Raise naming ``name`` if a tangent (an array, or None) has NaN while ``finite()``
    (its inputs and their tangents are finite)."""
    for k, t in enumerate(tangents):
        if _nan(t) and finite():
            raise RuntimeError(
                f"Function '{name}' returned nan values in the tangent of its {k}th "
                "output (forward mode) while its inputs and their tangents are finite."
            )


def _tangent(o: Tensor) -> Any:
    return o._tangent_array()


def _nan(a: Any) -> bool:
    a = a._data if isinstance(a, Tensor) else a
    return a is not None and a.dtype.kind in "fc" and bool(np.isnan(a).any())


def _finite_inputs(args: Any, L: int) -> bool:
    for a in args:
        if a.__class__ is Tensor:
            parts = [a._data] + ([_tangent(a)] if a._level == L else [])
            for x in parts:
                if x.dtype.kind in "fc" and not bool(np.isfinite(x).all()):
                    return False
        elif isinstance(a, (float, complex)) and not np.isfinite(a):
            return False
        elif hasattr(a, "dtype") and a.dtype.kind in "fc" and not bool(np.isfinite(a).all()):
            return False
    return True
