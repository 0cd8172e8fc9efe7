"""Where the time goes: ``profile``, ``record_function``, ``emit_nvtx``, ``emit_itt``.

Inside ``profile()`` every primitive evaluated (forward, and the ones backward
runs) is an event named after the primitive (``multiply``, ``matmul``), every
node backward runs an event named after its ``grad_fn`` (``MultiplyBackward0``),
and ``record_function(name)`` adds your own; events nest by time within a
thread. ``prof.key_averages().table()`` prints them summed per name and
``prof.export_chrome_trace(path)`` writes a trace that Perfetto or
chrome://tracing open.

Nothing of this costs outside a profile: entering registers an observer with the
core (``_dispatch.observe``) whose ``wrap_impl`` times each primitive's
implementation, exiting unregisters it (the core puts the implementations back),
and the engine looks for an active profiler once per backward pass.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from . import observe as O

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg"]

_lock = threading.Lock()
_active: list[Any] = [None]  # the sink events go to: a profile, or emit_nvtx
_here = os.path.dirname(os.path.abspath(__file__))


class FunctionEvent:
    """One timed call: ``name``, ``start_us``/``end_us``, ``thread``, ``input_shapes``,
    ``stack``, ``cpu_memory_usage`` (bytes its result holds), ``cpu_children`` time."""

    __slots__ = ("name", "start_ns", "end_ns", "thread", "input_shapes", "stack",
                 "cpu_memory_usage", "children_ns", "children_mem", "parent", "depth")

    @property
    def cpu_time_total(self) -> float:
        """Microseconds from start to end."""
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        """Microseconds not spent in nested events."""
        return (self.end_ns - self.start_ns - self.children_ns) / 1e3

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - self.children_mem

    @property
    def key(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return (f"<FunctionEvent {self.name} cpu_time={self.cpu_time_total:.3f}us "
                f"thread={self.thread}>")


class FunctionEventAvg:
    """The events of one key (name; and input shapes or stack when grouped by them)
    summed: ``count``, ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time`` (the
    average), memory."""

    def __init__(self, key: str, input_shapes: Any, stack: Any) -> None:
        self.key, self.input_shapes, self.stack = key, input_shapes, stack
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0

    def add(self, e: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}"
                f"us cpu_time={self.cpu_time_total:.3f}us count={self.count}>")


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count",
              "cpu_memory_usage", "self_cpu_memory_usage")


class EventList(list):  # type: ignore[type-arg]
    """A list of events (or of their averages) that prints as a table."""

    def __init__(self, items: Any = (), profile_memory: bool = False,
                 with_shapes: bool = False, with_stack: bool = False) -> None:
        super().__init__(items)
        self._memory, self._shapes, self._stack = profile_memory, with_shapes, with_stack

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The events as a text table, as torch prints it: name, self and total CPU time
        (with their share of the whole), average, memory (``profile_memory``), number of
        calls, input shapes (grouped by them). ``sort_by``: one of ``cpu_time_total``,
        ``self_cpu_time_total``, ``cpu_time``, ``count``, ``cpu_memory_usage``,
        ``self_cpu_memory_usage`` (descending); ``row_limit``: rows shown (-1: all)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "depth", 0) == 0]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"sort_by={sort_by!r}: dualad's profiler times the CPU side; "
                                 f"sort by one of {', '.join(_SORT_KEYS)}")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        total_self = sum(e.self_cpu_time_total for e in self) or 1.0
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        names = [e.key if len(e.key) <= max_name_column_width else
                 e.key[:max_name_column_width - 3] + "..." for e in rows]
        cols = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if self._memory:
            cols += ["CPU Mem", "Self CPU Mem"]
        cols.append("# of Calls")
        if self._shapes:
            cols.append("Input Shapes")
        if self._stack:
            cols.append("Source Location")
        body = []
        for e, name in zip(rows, names, strict=True):
            r = [name, f"{100 * e.self_cpu_time_total / total_self:.2f}%",
                 _format_time(e.self_cpu_time_total),
                 f"{100 * e.cpu_time_total / total_self:.2f}%",
                 _format_time(e.cpu_time_total), _format_time(e.cpu_time_total / max(
                     getattr(e, "count", 1), 1))]
            if self._memory:
                r += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            r.append(str(getattr(e, "count", 1)))
            if self._shapes:
                r.append(str(e.input_shapes or []))
            if self._stack:
                r.append((e.stack or [""])[0])
            body.append(r)
        widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c)
                  for i, c in enumerate(cols)]
        line = "-" * (sum(widths) + 2 * (len(cols) - 1))

        def fmt(r: list[str]) -> str:
            return "  ".join(r[0].ljust(widths[0]) if i == 0 else r[i].rjust(widths[i])
                             for i in range(len(cols)))

        out = ([header] if header else []) + [line, fmt(cols), line] + [fmt(r) for r in body]
        out += [line, f"Self CPU time total: {_format_time(total_self)}", ""]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(n: int) -> str:
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} b"


class _Open(threading.local):
    def __init__(self) -> None:
        self.stack: list[FunctionEvent] = []


class profile:
    """Profile the dualad operations run in this block.

    Parameters
    ----------
    enabled : bool
        Profile at all (False: a block that does nothing).
    record_shapes : bool
        Keep each event's input shapes (``key_averages(group_by_input_shape=True)``
        groups by them).
    profile_memory : bool
        Keep the bytes each event's result holds.
    with_stack : bool
        Keep the Python stack of each event's call.

    Examples
    --------
    >>> import dualad.numpy as dnp
    >>> x = dualad.ones((3, 3), requires_grad=True)
    >>> with dualad.profiler.profile(record_shapes=True) as prof:
    ...     (dnp.tanh(x @ x)).sum().backward()
    >>> names = {e.key for e in prof.key_averages()}
    >>> {"matmul", "tanh", "TanhBackward0", "MatmulBackward0"} <= names
    True
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))  # doctest: +SKIP
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, **unsupported: Any) -> None:
        if use_cuda:
            raise ValueError("profile(use_cuda=True): dualad's profiler times calls on the CPU "
                             "side; for GPU kernels use dualad.profiler.emit_nvtx() under "
                             "Nsight Systems")
        if unsupported:
            raise TypeError(f"profile() got unsupported arguments {sorted(unsupported)}; it "
                            "takes record_shapes, profile_memory and with_stack")
        self.enabled = enabled
        self.record_shapes, self.profile_memory, self.with_stack = \
            record_shapes, profile_memory, with_stack
        self._events: list[FunctionEvent] = []
        self._open = _Open()
        self._t0 = 0

    def __enter__(self) -> profile:
        if self.enabled:
            self._t0 = time.perf_counter_ns()
            _start(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            _stop(self)

    # -- the sink ---------------------------------------------------------------------------

    def begin(self, name: str, args: Any = ()) -> FunctionEvent:
        e = FunctionEvent.__new__(FunctionEvent)
        e.name = name
        e.thread = threading.get_ident()
        e.input_shapes = [list(_shape(a)) for a in args] if self.record_shapes else None
        e.stack = _stack() if self.with_stack else None
        e.cpu_memory_usage = e.children_ns = e.children_mem = 0
        opened = self._open.stack
        e.parent = opened[-1] if opened else None
        e.depth = len(opened)
        opened.append(e)
        self._events.append(e)
        e.end_ns = e.start_ns = time.perf_counter_ns()
        return e

    def end(self, e: FunctionEvent, out: Any = None) -> None:
        e.end_ns = time.perf_counter_ns()
        opened = self._open.stack
        if opened and opened[-1] is e:
            opened.pop()
        if self.profile_memory and out is not None:
            e.cpu_memory_usage = _nbytes(out)
        p = e.parent
        if p is not None:
            p.children_ns += e.end_ns - e.start_ns
            p.children_mem += e.cpu_memory_usage

    # -- results ----------------------------------------------------------------------------

    def events(self) -> EventList:
        """Every event, in the order they started."""
        return EventList(self._events, self.profile_memory, self.record_shapes,
                         self.with_stack)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self._events)

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """The events summed per name (and per input shapes, or per the first
        ``group_by_stack_n`` frames of their stack), as an ``EventList``."""
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("key_averages(group_by_input_shape=True) needs "
                               "profile(record_shapes=True)")
        if group_by_stack_n and not self.with_stack:
            raise RuntimeError("key_averages(group_by_stack_n=...) needs "
                               "profile(with_stack=True)")
        groups: dict[Any, FunctionEventAvg] = {}
        for e in self._events:
            shapes = e.input_shapes if group_by_input_shape else None
            stack = tuple(e.stack[:group_by_stack_n]) if group_by_stack_n else None
            k = (e.name, str(shapes), stack)
            g = groups.get(k)
            if g is None:
                g = groups[k] = FunctionEventAvg(e.name, shapes,
                                                 list(stack) if stack else e.stack)
            g.add(e)
        return EventList(groups.values(), self.profile_memory, group_by_input_shape,
                         bool(group_by_stack_n))

    def table(self, *args: Any, **kwargs: Any) -> str:
        return self.key_averages().table(*args, **kwargs)

    def export_chrome_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the events as Trace Event Format JSON (complete events, ``"ph": "X"``,
        microseconds), which Perfetto and chrome://tracing open."""
        pid = os.getpid()
        tids: dict[int, int] = {}
        out = []
        for e in self._events:
            tid = tids.setdefault(e.thread, len(tids))
            args: dict[str, Any] = {}
            if e.input_shapes is not None:
                args["Input Dims"] = e.input_shapes
            if e.stack is not None:
                args["Call stack"] = ";".join(e.stack)
            if self.profile_memory:
                args["Memory (bytes)"] = e.cpu_memory_usage
            out.append({"ph": "X", "cat": "cpu_op", "name": e.name, "pid": pid, "tid": tid,
                        "ts": (e.start_ns - self._t0) / 1e3,
                        "dur": (e.end_ns - e.start_ns) / 1e3, "args": args})
        meta = [{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                 "args": {"name": f"thread {tid} ({ident})"}} for ident, tid in tids.items()]
        with open(path, "w") as f:
            json.dump({"traceEvents": meta + out, "displayTimeUnit": "ms"}, f)


def _shape(a: Any) -> tuple[int, ...]:
    s = getattr(a, "shape", None)
    return tuple(s) if s is not None else ()


def _nbytes(out: Any) -> int:
    if isinstance(out, (tuple, list)):
        return sum(_nbytes(o) for o in out)
    n = getattr(out, "nbytes", None)
    if n is None and hasattr(out, "_data"):
        n = getattr(out._data, "nbytes", 0)
    return int(n or 0)


def _stack() -> list[str]:
    frames = [f for f in traceback.extract_stack()[:-2]
              if not f.filename.startswith(_here) and not f.filename.startswith("<dualad")]
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)]


# -- timing every evaluation: an observer of the core ----------------------------------------


def _timed(name: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(impl)
    def timed(*args: Any, **params: Any) -> Any:
        sink = _active[0]
        if sink is None:
            return impl(*args, **params)
        ev = sink.begin(name, args)
        out = None
        try:
            out = impl(*args, **params)
        finally:
            sink.end(ev, out)
        return out

    return timed


# while a profile (or emit_nvtx) is active, each primitive's evaluation is timed
_observer = O.Observer(wrap_impl=lambda prim, impl: _timed(prim.name, impl))


def _start(sink: Any) -> None:
    from .reverse import engine  # (installed by then: dualad imports reverse)

    with _lock:
        if _active[0] is not None:
            raise RuntimeError("a dualad profiler (profile or emit_nvtx) is already active; "
                               "nest record_function blocks inside one profile instead")
        _active[0] = sink
        O.observe(_observer)
        engine.profiling[0] = sink


def _stop(sink: Any) -> None:
    from .reverse import engine

    with _lock:
        if _active[0] is not sink:
            return
        engine.profiling[0] = None
        _active[0] = None
        O.unobserve(_observer)


class record_function:
    """An event of your own (a context manager or a decorator): while a profile is
    active the block is timed under ``name``; otherwise it costs one check.

    Examples
    --------
    >>> with dualad.profiler.profile() as prof:
    ...     with dualad.profiler.record_function("my_block"):
    ...         y = dualad.ones(3) * 2
    >>> [e.key for e in prof.key_averages()][:2]
    ['my_block', 'multiply']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name if args is None else f"{name}({args})"
        self._ev: Any = None

    def __enter__(self) -> record_function:
        sink = _active[0]
        if sink is not None:
            self._sink = sink
            self._ev = sink.begin(self.name)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ev is not None:
            self._sink.end(self._ev)
            self._ev = None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(name):
                return fn(*args, **kwargs)

        return wrapper


class emit_nvtx:
    """Emit an NVTX range for every dualad operation and backward node in this block,
    for NVIDIA Nsight Systems (``nsys profile python script.py``). Needs CuPy (its
    ``cupy.cuda.nvtx``); without it, entering raises ``RuntimeError`` saying so.

    Examples
    --------
    >>> with dualad.profiler.emit_nvtx():  # doctest: +SKIP
    ...     loss = model(x); loss.backward()
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled, self.record_shapes = enabled, record_shapes

    def __enter__(self) -> emit_nvtx:
        if not self.enabled:
            return self
        try:
            from cupy.cuda import nvtx
        except ImportError as e:
            raise RuntimeError(
                "emit_nvtx needs CuPy (with NVTX) to emit ranges: install it (pip install "
                "cupy-cuda12x) on a machine with CUDA, or use dualad.profiler.profile() to "
                f"time the CPU side ({e})"
            ) from None
        if not getattr(nvtx, "available", True):
            raise RuntimeError("emit_nvtx: CuPy is installed but its NVTX library is not "
                               "available on this machine; use dualad.profiler.profile()")
        self._nvtx = nvtx
        _start(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            _stop(self)

    def begin(self, name: str, args: Any = ()) -> bool:
        if self.record_shapes and args:
            name = f"{name}, sizes = {[list(_shape(a)) for a in args]}"
        self._nvtx.RangePush(name)
        return True

    def end(self, ev: Any, out: Any = None) -> None:
        self._nvtx.RangePop()


class emit_itt:
    """Not available in dualad: Intel ITT (VTune) annotations need a native
    library dualad does not ship. Entering (enabled) raises ``RuntimeError``;
    use ``profile()``, or ``emit_nvtx()`` on NVIDIA GPUs."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled

    def __enter__(self) -> emit_itt:
        if self.enabled:
            raise RuntimeError(
                "emit_itt is not available in dualad: it emits no Intel ITT (VTune) "
                "annotations. Use dualad.profiler.profile() (key_averages().table(), "
                "export_chrome_trace) or, on NVIDIA GPUs, dualad.profiler.emit_nvtx()"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        pass

