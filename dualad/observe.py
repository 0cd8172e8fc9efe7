"""Observers: the one way a tool watches every primitive call.

Anomaly mode and the profiler watch every primitive without replacing a function of the
core: each registers an ``Observer`` with ``observe``, and the core switches itself to the
watched evaluation when the first one comes and back when the last one goes
(``dispatch.watch``: dual levels run the checks, the recorder keeps tracebacks). The
switch happens there, not per call: with no observer (the usual case) ``apply`` does the
same work as if observers did not exist.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .core import dispatch as D


class Observer:
    """What a tool registers with :func:`observe` to watch every primitive call.

    Parameters
    ----------
    wrap_impl : ``wrap_impl(prim, impl) -> impl``: the implementation evaluated in place
        of ``prim.impl`` while the observer is registered, wherever the primitive is
        evaluated (the general path and the generated code of the fast paths alike). The
        profiler times each evaluation this way.
    check_dual : ``check_dual(prim, args, params, level, out)``, called after every
        evaluation at a dual level with its result (anomaly mode's NaN check of the
        tangents). While one is registered the forward fast paths stand aside: they
        compute tangents on arrays, where no check would see them.
    traced : whether recorded nodes keep the traceback of the forward call that made them
        (anomaly mode): recording goes through the installed recorder's
        ``record_traced`` (``dispatch.Recorder``).
    """

    __slots__ = ("wrap_impl", "check_dual", "traced")

    def __init__(self, wrap_impl: Callable[..., Any] | None = None,
                 check_dual: Callable[..., Any] | None = None, traced: bool = False) -> None:
        self.wrap_impl = wrap_impl
        self.check_dual = check_dual
        self.traced = traced


observers: list[Observer] = []  # registered, in order (each wrap_impl wraps the ones before)
_unwrapped: dict[D.Primitive, Callable[..., Any]] = {}  # prim -> its impl, while wrapped
_suspended: dict[D.Primitive, Callable[..., Any]] = {}  # prim -> its forward fast path
_observing = threading.Lock()


def observe(obs: Observer) -> None:
    """Register ``obs``: from now on every primitive call is watched as it asks."""
    with _observing:
        observers.append(obs)
        _watch()


def unobserve(obs: Observer) -> None:
    """Unregister ``obs`` (registered with :func:`observe`); with the last one gone,
    every primitive is evaluated exactly as before the first came."""
    with _observing:
        observers.remove(obs)
        _watch()


def _watch() -> None:
    """Put the core in the state ``observers`` ask for."""
    checks = [o.check_dual for o in observers if o.check_dual is not None]
    D.watch(checks, traced=any(o.traced for o in observers))
    if checks and not _suspended:
        for p in D.every:  # (the hot paths make duals unmade, past apply)
            if p.fast is not None:
                _suspended[p] = p.fast
                p.fast = None
    elif not checks:
        for p, fast in _suspended.items():
            p.fast = fast
        _suspended.clear()
    for p, impl in _unwrapped.items():
        _bind_impl(p, impl)
    _unwrapped.clear()
    wraps = [o.wrap_impl for o in observers if o.wrap_impl is not None]
    if wraps:
        for p in D.every:
            impl = _unwrapped[p] = p.impl
            for wrap in wraps:
                impl = wrap(p, impl)
            _bind_impl(p, impl)


def _bind_impl(p: D.Primitive, impl: Callable[..., Any]) -> None:
    """Make ``impl`` what evaluates ``p``: its ``impl``, and the same name in the namespace
    of its generated hot function, which binds it there (shared by its variants)."""
    old = p.impl
    p.impl = impl
    hot = p.hot
    if hot is not None and hot.__globals__.get("impl") is old:
        hot.__globals__["impl"] = impl
