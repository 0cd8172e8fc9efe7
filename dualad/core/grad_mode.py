"""Grad modes: thread-local switches for reverse-mode recording.

As in torch, they stop the *recording* of reverse-mode graphs only; forward-mode
tangents keep flowing (``detach()`` is what drops both).
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    def __init__(self) -> None:
        self.grad = True
        self.inference = False
        # Whether the tangent half of a dual op is recorded for reverse mode. Only
        # dualad.functional turns it off, where it knows nothing differentiates
        # tangents by reverse mode (forward-over-reverse without create_graph).
        self.tangent_grad = True


state = _State()


class _Anomaly(threading.local):
    def __init__(self) -> None:
        self.on = False
        self.check_nan = True


anomaly = _Anomaly()  # anomaly detection (dualad.anomaly_mode), thread-local
# How many threads have anomaly detection on: while none has, nothing reads ``anomaly``.
anomaly_threads = [0]

# How many threads are in inference mode right now. Reading a thread-local costs more than
# the plain op it guards, so the dispatcher reads ``state.inference`` only when this is
# nonzero; it changes only in ``inference_mode``, under the lock.
inference_threads = [0]
_count_lock = threading.Lock()


def _set_inference(on: bool) -> None:
    if on != state.inference:
        with _count_lock:
            inference_threads[0] += 1 if on else -1
        state.inference = on


_untracked = [False]  # whether untracked_tangents untracks (the fast layer's slot)


def install_untracked_tangents() -> None:
    """Let ``untracked_tangents`` leave tangents unrecorded: the fast layer's registration
    (``dualad.fast.engine``), with the backward pass that sums tangents alone. Without it
    the block records tangents as anywhere else (the general path)."""
    _untracked[0] = True


class untracked_tangents:
    """Internal: within the block, tangents of dual ops are not recorded (primals are),
    where the fast layer allows it (``install_untracked_tangents``): nothing
    differentiates them (``functional.hvp`` reads only the gradient's tangent), so the
    elementwise family keeps its array kernel."""

    def __enter__(self) -> None:
        self.prev = state.tangent_grad
        if _untracked[0]:
            state.tangent_grad = False

    def __exit__(self, *exc: object) -> None:
        state.tangent_grad = self.prev


def is_grad_enabled() -> bool:
    """Return True if reverse-mode recording is on in this thread.

    Examples
    --------
    >>> with dualad.no_grad():
    ...     dualad.is_grad_enabled()
    False
    >>> dualad.is_grad_enabled()
    True
    """
    return state.grad


def is_inference_mode_enabled() -> bool:
    """Return True if inference mode is on in this thread.

    Examples
    --------
    >>> with dualad.inference_mode():
    ...     dualad.is_inference_mode_enabled()
    True
    >>> dualad.is_inference_mode_enabled()
    False
    """
    return state.inference


class _Mode:
    """A context manager that is also a decorator (torch's ``_DecoratorContextManager``).

    A decorated generator or coroutine function runs each resumption under the mode (a
    ``yield`` or ``await`` hands control to code that runs under its own mode)."""

    def __call__(self, fn: F) -> F:
        mode = self
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen(*args: Any, **kwargs: Any) -> Any:
                return (yield from _Resumed(fn(*args, **kwargs), mode))

            return gen  # type: ignore[return-value]
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def coro(*args: Any, **kwargs: Any) -> Any:
                return await _Resumed(fn(*args, **kwargs), mode)

            return coro  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with mode.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _Mode:
        return self.__class__()


class _Resumed:
    """Drives a generator or coroutine ``g``, each step under a clone of ``mode``."""

    def __init__(self, g: Any, mode: _Mode) -> None:
        self.g, self.mode = g, mode

    def __await__(self) -> Any:
        return self.__iter__()

    def __iter__(self) -> Any:
        g = self.g
        send: Any = None
        exc: BaseException | None = None
        while True:
            with self.mode.clone():
                try:
                    out = g.send(send) if exc is None else g.throw(exc)
                except StopIteration as stop:
                    return stop.value
            send = exc = None
            try:
                send = yield out
            except GeneratorExit:
                with self.mode.clone():
                    g.close()
                raise
            except BaseException as e:  # (thrown in: passed on, under the mode)
                exc = e


class _GradMode(_Mode):
    """Sets grad mode to ``mode`` on entry and restores the previous one on exit."""

    mode: bool

    def __enter__(self) -> None:
        self.prev = state.grad
        state.grad = self.mode

    def __exit__(self, *exc: object) -> None:
        state.grad = self.prev


class _Bare(_GradMode):
    """A mode usable bare as a decorator too: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, fn: Any = None) -> Any:
        if fn is None:
            return super().__new__(cls)
        return cls()(fn)


class no_grad(_Bare):
    """Disable reverse-mode recording in this block or function.

    Examples
    --------
    >>> x = dualad.ones(3, requires_grad=True)
    >>> with dualad.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    mode = False


class enable_grad(_Bare):
    """Enable reverse-mode recording inside a ``no_grad`` block.

    Examples
    --------
    >>> x = dualad.ones(3, requires_grad=True)
    >>> with dualad.no_grad():
    ...     with dualad.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    mode = True


class set_grad_enabled(_Mode):
    """Set reverse-mode recording on or off; works as a function, context manager or decorator.

    Examples
    --------
    >>> _ = dualad.set_grad_enabled(False)
    >>> dualad.is_grad_enabled()
    False
    >>> _ = dualad.set_grad_enabled(True)
    """

    def __init__(self, mode: bool) -> None:
        self.prev = state.grad
        self.mode = bool(mode)
        state.grad = self.mode  # (as a function: it holds from here)

    def __call__(self, fn: F) -> F:
        state.grad = self.prev  # (as a decorator: the mode holds in the calls, not after)
        return super().__call__(fn)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        state.grad = self.prev

    def clone(self) -> _Mode:
        return _SetGrad(self.mode)


class _SetGrad(_GradMode):
    """``set_grad_enabled(mode)`` as a decorator applies it: each call sets it on entry."""

    def __init__(self, mode: bool) -> None:
        self.mode = mode

    def clone(self) -> _Mode:
        return _SetGrad(self.mode)


class inference_mode(_Mode):
    """Like ``no_grad``, and tensors made inside can never be recorded later.

    Examples
    --------
    >>> x = dualad.ones(3, requires_grad=True)
    >>> with dualad.inference_mode():
    ...     y = x * 2
    >>> y.is_inference()
    True
    """

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare: @inference_mode

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self.prev = (state.grad, state.inference)
        if self.mode:
            state.grad = False
        _set_inference(self.mode)

    def __exit__(self, *exc: object) -> None:
        state.grad = self.prev[0]
        _set_inference(self.prev[1])

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)
