#!/usr/bin/env python
"""dualad benchmarks, side by side with NumPy alone and the installed peers.

    python benchmarks/run.py [--quick] [--only NAME[,NAME...]] [--markdown] [--json PATH]
                             [--backend numpy|cupy]

Benchmarks (NAME): forward, plain, bigjvp, reverse, mlp, memory, jacobian, hvp,
hessian ("functional" selects the last three, "chains" the first four).

Peers are optional: torch (torch.autograd.forward_ad, torch.autograd,
torch.func, torch.autograd.functional), jax (eager, op by op, no jit, float64
enabled) and HIPS autograd are used when importable and shown as "-" when not.
``--backend cupy`` runs the rows on a GPU: dualad's inputs are CuPy arrays, the
numpy column becomes CuPy's own evaluation (the same code on CuPy arrays), the
peers are not run, and the clock stops only after the GPU has finished (a device
synchronisation after each repeat). The memory row measures host memory and is
not run there. NumPy (the default) times the same calls as without the flag (its
clock adds one test a repeat of about 20 ms: whether there is a device to wait for).
A dualad feature that is missing or raises shows "n/a" with the reason below
the table, so the script runs at every stage of the core. Every result is
checked against a closed form or a complex-step reference before it is timed;
a wrong result is flagged with "!".

Times are best-of-N wall-clock (timeit style: warm-up calls, then N repeats of
a calibrated number of loops), with short repeats: about 20 ms each, as many as
fit in 1.5 s per library and row (at least 7; a call of a second or more timed
alone gets two). A shared machine changes speed with its neighbours' load, for
spells from tens of milliseconds to many minutes (this VM, measured: NumPy's
chain step at 0.6, 0.85 or 1.3-1.7 us); a repeat of 0.2 s averages over the
states it meets, and its best depends on the mix, while short repeats find the
fastest state the row meets. The rows that compare libraries on one task (the
chains, big JVP, MLP) time NumPy and every library in turns, each library's
repeats spread over the row, so that each meets the machine in the same states.
Memory runs in a fresh subprocess per library.
Before the first row the script frees one 32 MB array (``--allocator fresh``
skips this). On glibc that moves malloc's adaptive thresholds to where any
process that has once freed an array of that size has them: arrays below 32 MB
come from the heap, and up to 64 MB of freed memory is kept for reuse instead of
being handed back to the kernel after every call. Without it the large-array
rows measure page faults (on this VM a fault costs microseconds, and NumPy's own
evaluation of the HVP function runs ~4x slower), and each row's figure depends on
which rows ran before it. Every library in the process gets the same state (the
memory row's fresh subprocesses do not: they measure peak memory, not time).
The script changes no environment variables: thread counts and BLAS kernels are
whatever the caller's environment gives (a numpy/BLAS line is printed via
threadpoolctl when installed). Note: where OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE
are set on this machine they slow current NumPy builds; to measure NumPy at its
best, unset both in the benchmarking command alone, e.g.
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/run.py
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

# Measure the checkout this script belongs to, whether or not dualad is installed.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

IMPLS = ("dualad", "numpy", "torch", "jax", "autograd")
JIT = "jax jit"  # a column of its own with --backend cupy: JAX compiled, beside the eager peers
PEERS = ("torch", "jax", JIT, "autograd")
ALL_BENCHMARKS = (
    "forward",
    "plain",
    "bigjvp",
    "reverse",
    "mlp",
    "memory",
    "jacobian",
    "hvp",
    "hessian",
)
GROUPS = {
    "functional": ("jacobian", "hvp", "hessian"),
    "chains": ("forward", "plain", "bigjvp", "reverse"),
}


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
@dataclass
class Cell:
    value: float | None = None  # in the row's unit
    text: str | None = None  # overrides the formatted value
    reason: str | None = None  # why it is n/a, or what is wrong with it
    wrong: bool = False
    variants: dict[str, float] = field(default_factory=dict)  # other APIs of the same library


@dataclass
class Row:
    bench: str
    name: str
    unit: str
    target: str
    cells: dict[str, Cell]
    note: str = ""


def fmt(v: float) -> str:
    if v is None or not math.isfinite(v):
        return "?"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def short_reason(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    if len(msg) > 160:
        msg = msg[:157] + "..."
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


# ---------------------------------------------------------------------------
# array backends (--backend)
# ---------------------------------------------------------------------------
@dataclass
class Backend:
    """The array library that dualad's inputs and the reference column compute with.

    Every row makes its data with NumPy (seeded), computes its expected results from
    them, and then moves the inputs with ``put``; the reference column computes with
    ``xp``. ``sync`` waits for queued work (a GPU's stream) before the clock stops;
    None where calls finish before they return (NumPy). ``get`` reads a result back.
    ``device`` is where the peers compute: torch's device name ("cpu", "cuda"); JAX
    computes on its default device (its GPU where jax is installed with CUDA).
    ``gpu_sizes``: the rows of large arrays use sizes where a GPU matters.
    """

    name: str
    xp: Any
    put: Callable[[np.ndarray], Any]
    sync: Callable[[], None] | None
    get: Callable[[Any], np.ndarray]
    about: str = ""
    device: str = "cpu"
    gpu_sizes: bool = False

    @property
    def impls(self) -> tuple[str, ...]:
        """The table's columns: JAX compiled (``jit``) beside the eager peers on a GPU."""
        return IMPLS + (JIT,) if self.gpu_sizes else IMPLS

    def peer_runs(self, impl: str) -> bool:
        """Whether a peer runs here: HIPS autograd computes with NumPy alone (no GPU), and
        compiled JAX is timed on a GPU only (the CPU table compares eager libraries)."""
        if impl == JIT:
            return self.gpu_sizes
        return self.device == "cpu" or impl in ("torch", "jax")


def numpy_backend() -> Backend:
    return Backend("numpy", np, lambda a: a, None, np.asarray)


def cupy_backend() -> Backend:
    # JAX takes 75% of the GPU's memory when it starts unless told not to; CuPy and torch
    # share the device here, so JAX allocates as it goes, as they do
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import cupy
    except ImportError as e:
        raise SystemExit(
            f"--backend cupy needs CuPy and a CUDA GPU, and CuPy cannot be imported ({e}); "
            "install the CuPy build for your CUDA (e.g. pip install cupy-cuda12x) or run "
            "without --backend"
        ) from None
    try:
        device = cupy.cuda.Device()
        name = cupy.cuda.runtime.getDeviceProperties(device.id)["name"]
    except Exception as e:  # CuPy without a usable GPU (no driver, no device)
        raise SystemExit(
            f"--backend cupy: CuPy {cupy.__version__} finds no usable GPU ({short_reason(e)})"
        ) from None

    def sync() -> None:  # CuPy's stream, and torch's where it has started CUDA
        device.synchronize()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()

    return Backend(
        "cupy", cupy, cupy.asarray, sync, cupy.asnumpy,
        about=f"cupy {cupy.__version__} on {name.decode() if isinstance(name, bytes) else name}",
        device="cuda", gpu_sizes=True,
    )


BACKENDS: dict[str, Callable[[], Backend]] = {"numpy": numpy_backend, "cupy": cupy_backend}


# ---------------------------------------------------------------------------
# libraries
# ---------------------------------------------------------------------------
class Libs:
    """The importable libraries, each as a namespace, plus why the others are missing."""

    def __init__(self) -> None:
        self.mods: dict[str, SimpleNamespace] = {"numpy": SimpleNamespace(np=np)}
        self.missing: dict[str, str] = {}
        self.versions: dict[str, str] = {"numpy": np.__version__}
        self._try("dualad", self._load_dualad)
        self._try("torch", self._load_torch)
        self._try("jax", self._load_jax)
        self._try("autograd", self._load_autograd)

    def _try(self, name: str, loader: Callable[[], SimpleNamespace]) -> None:
        try:
            self.mods[name] = loader()
        except Exception as e:  # ImportError, or a core that is half written
            self.missing[name] = short_reason(e)

    def _load_dualad(self) -> SimpleNamespace:
        import dualad as da
        import dualad.numpy as dnp

        self.versions["dualad"] = getattr(da, "__version__", "?")
        return SimpleNamespace(da=da, dnp=dnp)

    def _load_torch(self) -> SimpleNamespace:
        import torch
        import torch.autograd.forward_ad as fwAD

        self.versions["torch"] = f"{torch.__version__} ({torch.get_num_threads()} threads)"
        return SimpleNamespace(torch=torch, fwAD=fwAD)

    def _load_jax(self) -> SimpleNamespace:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        self.versions["jax"] = f"{jax.__version__} (eager, {jax.default_backend()})"
        # the "jax jit" column: the same row code with each timed function compiled
        self.mods[JIT] = SimpleNamespace(jax=jax, jnp=jnp, jit=jax.jit)
        return SimpleNamespace(jax=jax, jnp=jnp, jit=lambda f: f)

    def _load_autograd(self) -> SimpleNamespace:
        import autograd
        import autograd.numpy as anp

        try:
            from importlib.metadata import version

            self.versions["autograd"] = version("autograd")
        except Exception:
            self.versions["autograd"] = "?"
        return SimpleNamespace(ag=autograd, anp=anp)

    def has(self, name: str) -> bool:
        return name in self.mods


# ---------------------------------------------------------------------------
# timing and checking
# ---------------------------------------------------------------------------
class Timer:
    """Best seconds per call, from many short repeats (see the module docstring)."""

    def __init__(self, quick: bool) -> None:
        self.chunk = 0.005 if quick else 0.02  # seconds per repeat
        self.budget = 0.15 if quick else 1.5  # seconds of repeats per library and row
        self.min_repeat = 3 if quick else 7
        self.max_repeat = 300
        self.warmup = 1 if quick else 2
        # waits for a device's queued work: called before the clock starts and before it
        # stops (None: NumPy's calls finish before they return; nothing is added to them)
        self.sync: Callable[[], None] | None = None

    def _plan(self, fn: Callable[[], object]) -> tuple[int, float]:
        """Warm fn up, then (calls per repeat, seconds of one repeat)."""
        sync = self.sync
        for _ in range(self.warmup):
            fn()
        if sync is not None:
            sync()
        t0 = time.perf_counter()
        fn()
        if sync is not None:
            sync()
        one = max(time.perf_counter() - t0, 1e-9)
        number = max(1, math.ceil(self.chunk / one))
        return number, number * one

    def _repeats(self, seconds: float, alone: bool) -> int:
        # A slow call timed alone: two repeats drop a disturbed one. In turns, each library
        # gets at least min_repeat, as the others do, or their ratio would rest on two.
        if alone and seconds >= 1.0:
            return 2
        return max(self.min_repeat, min(self.max_repeat, round(self.budget / seconds)))

    def best(self, fn: Callable[[], object]) -> float:
        """Best seconds per call of fn (fn has already been called once to check it)."""
        return self.best_interleaved({"": fn})[""]

    def best_interleaved(self, fns: dict[str, Callable[[], object]]) -> dict[str, float]:
        """Best seconds per call of each fn, timed in turns, so that a machine whose speed
        drifts slows them all alike. Each fn gets its own number of repeats (``_repeats``),
        spread evenly over the rounds (a slow library's few repeats do not cut a fast one's)."""
        plans = {k: self._plan(fn) for k, fn in fns.items()}
        alone = len(fns) == 1
        reps = {k: self._repeats(seconds, alone) for k, (_, seconds) in plans.items()}
        rounds = max(reps.values(), default=0)
        best = dict.fromkeys(fns, math.inf)
        sync = self.sync
        gc.collect()
        for j in range(rounds):
            for k, fn in fns.items():
                if (j * reps[k]) // rounds == ((j + 1) * reps[k]) // rounds:
                    continue  # (not this fn's turn)
                number = plans[k][0]
                if sync is not None:
                    sync()  # (the previous repeat's work is not this one's)
                t0 = time.perf_counter()
                for _ in range(number):
                    fn()
                if sync is not None:
                    sync()  # the calls have queued their work; the clock counts it done
                best[k] = min(best[k], (time.perf_counter() - t0) / number)
        return best


def to_np(x: object) -> np.ndarray:
    """Any library's array (or a Python scalar) as an ndarray, for checking."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach"):  # dualad and torch tensors
        x = x.detach()
    if hasattr(x, "is_cuda") and x.is_cuda:  # a torch tensor on a GPU: to the host
        x = x.cpu()
    if hasattr(x, "numpy"):
        x = x.numpy()
    if not isinstance(x, np.ndarray) and hasattr(x, "get"):  # a CuPy array: to the host
        x = x.get()
    return np.asarray(x)


def mismatch(got: object, want: np.ndarray, rtol: float) -> str | None:
    """None if got == want to rtol (relative to want's scale), else a description."""
    try:
        g = to_np(got)
    except Exception as e:
        return f"cannot read result: {short_reason(e)}"
    want = np.asarray(want)
    if g.size != want.size:
        return f"shape {g.shape} != expected {want.shape}"
    g = g.reshape(want.shape)
    scale = max(float(np.max(np.abs(want))), 1e-300) if want.size else 1.0
    err = float(np.max(np.abs(g - want))) / scale if want.size else 0.0
    if not np.isfinite(err) or err > rtol:
        return f"wrong result: max error / max |expected| = {err:.2e} (> {rtol:.0e})"
    return None


class Runner:
    def __init__(self, libs: Libs, timer: Timer, backend: Backend | None = None) -> None:
        self.libs = libs
        self.timer = timer
        self.backend = backend or numpy_backend()
        self.xp, self.put = self.backend.xp, self.backend.put
        timer.sync = self.backend.sync

    def cell(
        self,
        impl: str,
        make: Callable[[SimpleNamespace], Callable[[], object]] | None,
        check: Callable[[object], str | None] | None = None,
        scale: float = 1.0,
    ) -> Cell:
        """Time make(lib)() for one library; a missing library or a failure gives a reasoned n/a.

        make builds the inputs (not timed) and returns the zero-argument call to time.
        scale converts seconds per call to the row's unit.
        """
        return self.cells({impl: make}, check, scale)[impl]

    def skipped(self, impl: str) -> Cell | None:
        """The cell of a peer that this backend does not run (None if it runs)."""
        if impl in PEERS and not self.backend.peer_runs(impl):
            return Cell(text="-", reason=f"not run with --backend {self.backend.name}")
        return None

    def torch_in(self, tc: Any, a: Any) -> Any:
        """A row's input as a torch tensor of its own (a copy) on the peers' device."""
        return tc.from_numpy(np.array(to_np(a))).to(self.backend.device)

    def jax_in(self, jnp: Any, a: Any) -> Any:
        """A row's input as a JAX array on JAX's default device."""
        return jnp.asarray(to_np(a))

    def missing(self, impl: str) -> Cell:
        if impl == "dualad":
            return Cell(text="n/a", reason=f"import failed: {self.libs.missing.get(impl)}")
        return Cell(text="-", reason="not installed")

    def cells(
        self,
        makers: dict[str, Callable[[SimpleNamespace], Callable[[], object]] | None],
        check: Callable[[object], str | None] | None,
        scale: float = 1.0,
    ) -> dict[str, Cell]:
        """Cells of a row, every library timed in turns (``Timer.best_interleaved``), so
        that each sees the machine in the same states; arguments as ``cell``'s."""
        cells: dict[str, Cell] = {}
        fns: dict[str, Callable[[], object]] = {}
        for impl, make in makers.items():
            if make is None:
                cells[impl] = Cell(text="-", reason="not applicable")
                continue
            if self.skipped(impl):
                cells[impl] = self.skipped(impl)
                continue
            if not self.libs.has(impl):
                cells[impl] = self.missing(impl)
                continue
            try:
                fn = make(self.libs.mods[impl])
                out = fn()
                bad = check(out) if check else None
            except Exception as e:
                cells[impl] = Cell(text="n/a", reason=short_reason(e))
                continue
            fns[impl] = fn
            cells[impl] = Cell(reason=bad, wrong=bad is not None)
        for impl, t in self.timer.best_interleaved(fns).items():
            cells[impl].value = t * scale
        return cells

    def ratio_cells(
        self,
        makers: dict[str, Callable[[SimpleNamespace], Callable[[], object]]],
        check: Callable[[object], str | None],
    ) -> dict[str, Cell]:
        """Cells of a ratio row: every library's time over NumPy's (``makers["numpy"]``),
        timed in turns (``cells``); NumPy's cell holds its seconds."""
        cells = self.cells(makers, check)
        base = cells["numpy"].value
        if base is None:
            return {k: c if k == "numpy" else Cell(text="n/a", reason="numpy baseline failed")
                    for k, c in cells.items()}
        for impl, c in cells.items():
            if impl != "numpy" and c.value is not None:
                c.value /= base
        return cells


# ---------------------------------------------------------------------------
# 1-4: chains and the big JVP
# ---------------------------------------------------------------------------
N_CHAIN = 200
X0 = 0.3


def chain_ops(m: object) -> list[Callable]:
    """The op cycle, with sin/cos/tanh/exp taken from namespace m (one primitive per step).

    Starting at 0.3 the values stay in [-1, 2], so any chain length is safe.
    """
    cycle = [
        m.sin,
        m.cos,
        m.tanh,
        lambda x: -x,
        m.exp,
        lambda x: x * 1.0001,
        lambda x: x + 0.5,
        lambda x: x * x,
    ]
    return cycle


# Whether each op of the cycle must keep an array for its derivative
# (sin, cos: the input; tanh, exp: the output; x*x: the input; the rest nothing).
CYCLE_SAVES = (1, 1, 1, 0, 1, 0, 0, 1)


def run_chain(x, ops: list[Callable], n: int):
    k = len(ops)
    for i in range(n):
        x = ops[i % k](x)
    return x


def chain_reference(n: int) -> tuple[float, float]:
    """Value and derivative of the chain at X0 by the complex step (exact to rounding)."""
    h = 1e-30
    z = run_chain(np.array([X0 + 1j * h]), chain_ops(np), n)
    return float(z.real[0]), float(z.imag[0] / h)


def bench_forward(r: Runner) -> list[Row]:
    val, der = chain_reference(N_CHAIN)
    per_op = 1e6 / N_CHAIN
    x0 = r.put(np.array([X0]))
    t0 = r.put(np.ones(1))

    def check_pair(out):
        return mismatch(out[0], np.array([val]), 1e-10) or mismatch(out[1], np.array([der]), 1e-8)

    def dualad(lib):
        da, dnp = lib.da, lib.dnp
        x, t, ops = da.tensor(x0), da.tensor(t0), chain_ops(dnp)

        def run():
            with da.dual_level():
                y = run_chain(da.make_dual(x, t), ops, N_CHAIN)
                p, tan = da.unpack_dual(y)
            return p, tan

        return run

    def numpy(lib):
        ops = chain_ops(r.xp)
        return lambda: (run_chain(x0, ops, N_CHAIN), np.array([der]))

    def torch(lib):
        tc, fwAD = lib.torch, lib.fwAD
        x, t, ops = r.torch_in(tc, x0), r.torch_in(tc, t0), chain_ops(tc)

        def run():
            with fwAD.dual_level():
                y = run_chain(fwAD.make_dual(x, t), ops, N_CHAIN)
                p, tan = fwAD.unpack_dual(y)
            return p, tan

        return run

    def jax(lib):
        jx, jnp = lib.jax, lib.jnp
        x, t, ops = r.jax_in(jnp, x0), r.jax_in(jnp, t0), chain_ops(jnp)
        f = lambda x: run_chain(x, ops, N_CHAIN)
        jvp = lib.jit(lambda x, t: jx.jvp(f, (x,), (t,)))

        def run():
            p, tan = jvp(x, t)
            tan.block_until_ready()
            return p, tan

        return run

    def autograd(lib):
        ops = chain_ops(lib.anp)
        jvp_at = lib.ag.make_jvp(lambda x: run_chain(x, ops, N_CHAIN))
        return lambda: jvp_at(x0)(t0)

    makers = dict(dualad=dualad, numpy=numpy, torch=torch, jax=jax, autograd=autograd)
    makers[JIT] = jax
    cells = r.cells(makers, check_pair, per_op)
    cells["numpy"].reason = "value only"
    return [
        Row(
            "forward",
            f"forward chain: {N_CHAIN} elementwise ops, size 1, value + JVP",
            "µs/op",
            "≤ 4",
            cells,
        )
    ]


def bench_plain(r: Runner) -> list[Row]:
    val, _ = chain_reference(N_CHAIN)
    per_op = 1e6 / N_CHAIN
    x0 = r.put(np.array([X0]))

    def check(out):
        return mismatch(out, np.array([val]), 1e-10)

    def plain(make_x, ns):
        def make(lib):
            x, ops = make_x(lib), chain_ops(ns(lib))
            return lambda: run_chain(x, ops, N_CHAIN)

        return make

    def jax(lib):
        x, ops = r.jax_in(lib.jnp, x0), chain_ops(lib.jnp)
        f = lib.jit(lambda x: run_chain(x, ops, N_CHAIN))
        return lambda: f(x).block_until_ready()

    makers = dict(
        dualad=plain(lambda lib: lib.da.tensor(x0), lambda lib: lib.dnp),
        numpy=plain(lambda lib: x0, lambda lib: r.xp),
        torch=plain(lambda lib: r.torch_in(lib.torch, x0), lambda lib: lib.torch),
        jax=jax,
        autograd=plain(lambda lib: x0, lambda lib: lib.anp),
    )
    makers[JIT] = jax
    cells = r.cells(makers, check, per_op)
    return [
        Row(
            "plain",
            "plain path: the same chain, no level, no grad",
            "µs/op",
            "≤ 2",
            cells,
        )
    ]


def bench_bigjvp(r: Runner, quick: bool) -> list[Row]:
    n = 10**6 if quick else 10**8 if r.backend.gpu_sizes else 10**7
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n)
    v = rng.standard_normal(n)
    e = np.exp(-(x**2))
    want_val = np.sum(np.sin(x) * e)
    want_tan = np.sum((np.cos(x) - 2 * x * np.sin(x)) * e * v)
    del e
    x, v = r.put(x), r.put(v)
    xp = r.xp

    def check_pair(out):
        return mismatch(out[0], want_val, 1e-9) or mismatch(out[1], want_tan, 1e-9)

    def numpy(lib):
        return lambda: (xp.sum(xp.sin(x) * xp.exp(-(x**2))), want_tan)


    def dualad(lib):
        da, dnp = lib.da, lib.dnp
        xt, vt = da.as_tensor(x), da.as_tensor(v)

        def run():
            with da.dual_level():
                xd = da.make_dual(xt, vt)
                p, tan = da.unpack_dual(dnp.sum(dnp.sin(xd) * dnp.exp(-(xd**2))))
            return p, tan

        return run

    def torch(lib):
        tc, fwAD = lib.torch, lib.fwAD
        xt, vt = r.torch_in(tc, x), r.torch_in(tc, v)

        def run():
            with fwAD.dual_level():
                xd = fwAD.make_dual(xt, vt)
                p, tan = fwAD.unpack_dual(tc.sum(tc.sin(xd) * tc.exp(-(xd**2))))
            return p, tan

        return run

    def jax(lib):
        jx, jnp = lib.jax, lib.jnp
        xj, vj = r.jax_in(jnp, x), r.jax_in(jnp, v)
        f = lambda x: jnp.sum(jnp.sin(x) * jnp.exp(-(x**2)))
        jvp = lib.jit(lambda x, v: jx.jvp(f, (x,), (v,)))

        def run():
            p, tan = jvp(xj, vj)
            tan.block_until_ready()
            return p, tan

        return run

    def autograd(lib):
        anp = lib.anp
        jvp_at = lib.ag.make_jvp(lambda x: anp.sum(anp.sin(x) * anp.exp(-(x**2))))
        return lambda: jvp_at(x)(v)

    cells = r.ratio_cells(
        {"numpy": numpy, "dualad": dualad, "torch": torch, "jax": jax, JIT: jax,
         "autograd": autograd}, check_pair)
    base = cells["numpy"]
    if base.value is not None:
        base.text = f"1 ({base.value * 1e3:.1f} ms)"
    return [
        Row(
            "bigjvp",
            f"big JVP: sum(sin(x)*exp(-x**2)), n=10^{round(math.log10(n))}, value + JVP",
            "× numpy",
            "≤ 2.2",
            cells,
        )
    ]


def bench_reverse(r: Runner) -> list[Row]:
    val, der = chain_reference(N_CHAIN)
    per_op = 1e6 / N_CHAIN
    x0 = r.put(np.array([X0]))
    ones = r.put(np.ones(1))

    def check_pair(out):
        return mismatch(out[0], np.array([val]), 1e-10) or mismatch(out[1], np.array([der]), 1e-8)

    def dualad(lib):
        da, dnp = lib.da, lib.dnp
        x, g, ops = da.tensor(x0, requires_grad=True), da.tensor(ones), chain_ops(dnp)

        def run():
            y = run_chain(x, ops, N_CHAIN)
            (gx,) = da.grad((y,), (x,), (g,))
            return y.detach(), gx

        return run

    def numpy(lib):
        ops = chain_ops(r.xp)
        return lambda: (run_chain(x0, ops, N_CHAIN), np.array([der]))

    def torch(lib):
        tc = lib.torch
        x = r.torch_in(tc, x0).requires_grad_()
        g, ops = r.torch_in(tc, ones), chain_ops(tc)

        def run():
            y = run_chain(x, ops, N_CHAIN)
            (gx,) = tc.autograd.grad((y,), (x,), (g,))
            return y.detach(), gx

        return run

    def jax(lib):
        jx, jnp = lib.jax, lib.jnp
        x, g, ops = r.jax_in(jnp, x0), r.jax_in(jnp, ones), chain_ops(jnp)
        f = lambda x: run_chain(x, ops, N_CHAIN)

        def value_and_vjp(x, g):
            y, vjp = jx.vjp(f, x)
            return y, vjp(g)[0]

        value_and_vjp = lib.jit(value_and_vjp)

        def run():
            y, gx = value_and_vjp(x, g)
            gx.block_until_ready()
            return y, gx

        return run

    def autograd(lib):
        ops = chain_ops(lib.anp)
        vjp_at = lib.ag.make_vjp(lambda x: run_chain(x, ops, N_CHAIN))

        def run():
            vjp, y = vjp_at(x0)
            return y, vjp(ones)

        return run

    makers = dict(dualad=dualad, numpy=numpy, torch=torch, jax=jax, autograd=autograd)
    makers[JIT] = jax
    cells = r.cells(makers, check_pair, per_op)
    cells["numpy"].reason = "value only"
    return [
        Row(
            "reverse",
            f"reverse chain: {N_CHAIN} ops, size 1, value + gradient",
            "µs/op",
            "≤ 6",
            cells,
        )
    ]


# ---------------------------------------------------------------------------
# 5: MLP
# ---------------------------------------------------------------------------
def mlp_data(batch: int = 128):
    rng = np.random.default_rng(2)
    sizes = (784, 512, 512, 10)
    X = rng.standard_normal((batch, sizes[0]))
    labels = rng.integers(0, sizes[-1], batch)
    Y = np.eye(sizes[-1])[labels]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        params.append(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in))
        params.append(0.1 * rng.standard_normal(fan_out))
    return X, Y, params


def mlp_loss(m, X, Y, params):
    """Mean softmax cross-entropy of a tanh MLP, for a NumPy-like namespace m."""
    W1, b1, W2, b2, W3, b3 = params
    h = m.tanh(X @ W1 + b1)
    h = m.tanh(h @ W2 + b2)
    z = h @ W3 + b3
    zmax = m.max(z, axis=1, keepdims=True)
    lse = m.log(m.sum(m.exp(z - zmax), axis=1, keepdims=True)) + zmax
    return (m.sum(lse) - m.sum(Y * z)) / X.shape[0]


def mlp_loss_torch(tc, X, Y, params):
    W1, b1, W2, b2, W3, b3 = params
    h = tc.tanh(X @ W1 + b1)
    h = tc.tanh(h @ W2 + b2)
    z = h @ W3 + b3
    zmax = tc.amax(z, dim=1, keepdim=True)
    lse = tc.log(tc.sum(tc.exp(z - zmax), dim=1, keepdim=True)) + zmax
    return (tc.sum(lse) - tc.sum(Y * z)) / X.shape[0]


def mlp_grad_numpy(X, Y, params):
    """Hand-written backpropagation in NumPy: the reference gradient."""
    W1, b1, W2, b2, W3, b3 = params
    h1 = np.tanh(X @ W1 + b1)
    h2 = np.tanh(h1 @ W2 + b2)
    z = h2 @ W3 + b3
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dz = (p - Y) / X.shape[0]
    da2 = (dz @ W3.T) * (1 - h2**2)
    da1 = (da2 @ W2.T) * (1 - h1**2)
    return [X.T @ da1, da1.sum(0), h1.T @ da2, da2.sum(0), h2.T @ dz, dz.sum(0)]


def bench_mlp(r: Runner) -> list[Row]:
    batch = 4096 if r.backend.gpu_sizes else 128
    X, Y, params = mlp_data(batch)
    want_loss = mlp_loss(np, X, Y, params)
    want_grads = mlp_grad_numpy(X, Y, params)
    X, Y, params = r.put(X), r.put(Y), [r.put(p) for p in params]

    def check(out):
        loss, grads = out
        bad = mismatch(loss, want_loss, 1e-10)
        if bad:
            return "loss: " + bad
        if len(grads) != 6:
            return f"{len(grads)} gradients, expected 6"
        for i, (g, w) in enumerate(zip(grads, want_grads, strict=True)):
            bad = mismatch(g, w, 1e-9)
            if bad:
                return f"grad {i}: {bad}"
        return None

    def numpy(lib):
        return lambda: (mlp_loss(r.xp, X, Y, params), want_grads)

    def dualad(lib):
        da, dnp = lib.da, lib.dnp
        Xt, Yt = da.as_tensor(X), da.as_tensor(Y)
        ps = [da.tensor(p, requires_grad=True) for p in params]

        def run():
            loss = mlp_loss(dnp, Xt, Yt, ps)
            return loss.detach(), da.grad(loss, ps)

        return run

    def torch(lib):
        tc = lib.torch
        Xt, Yt = r.torch_in(tc, X), r.torch_in(tc, Y)
        ps = [r.torch_in(tc, p).requires_grad_() for p in params]

        def run():
            loss = mlp_loss_torch(tc, Xt, Yt, ps)
            return loss.detach(), tc.autograd.grad(loss, ps)

        return run

    def jax(lib):
        jx, jnp = lib.jax, lib.jnp
        Xj, Yj = r.jax_in(jnp, X), r.jax_in(jnp, Y)
        ps = [r.jax_in(jnp, p) for p in params]
        vg = lib.jit(jx.value_and_grad(lambda ps, X, Y: mlp_loss(jnp, X, Y, ps)))

        def run():
            loss, grads = vg(ps, Xj, Yj)
            grads[0].block_until_ready()
            return loss, grads

        return run

    def autograd(lib):
        anp = lib.anp
        vg = lib.ag.value_and_grad(lambda ps: mlp_loss(anp, X, Y, ps))
        return lambda: vg(list(params))

    cells = r.ratio_cells(
        {"numpy": numpy, "dualad": dualad, "torch": torch, "jax": jax, JIT: jax,
         "autograd": autograd}, check)
    base = cells["numpy"]
    if base.value is not None:
        base.text = f"1 ({base.value * 1e3:.2f} ms)"
        hand = r.timer.best(lambda: mlp_grad_numpy(X, Y, params))
        base.variants["hand-written NumPy backprop (incl. forward)"] = hand / base.value
    return [
        Row(
            "mlp",
            f"MLP 784-512-512-10 tanh, batch {batch}, softmax CE: loss + grad of 6 params",
            "× numpy",
            "≤ 3.2",
            cells,
            note="numpy column: the loss alone (the unit of the ratios).",
        )
    ]


# ---------------------------------------------------------------------------
# 6: memory (each library in a fresh subprocess)
# ---------------------------------------------------------------------------
MEM_OPS = 1000


def _rss_kib(field_name: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field_name + ":"):
                return int(line.split()[1])
    raise OSError(f"{field_name} not in /proc/self/status")


def memory_worker(impl: str, n: int) -> dict:
    """Run in a subprocess: peak memory of value + gradient of the MEM_OPS chain on n elements."""
    libs = Libs()
    if not libs.has(impl):
        return {"error": f"import failed: {libs.missing.get(impl)}"}
    lib = libs.mods[impl]
    x0 = np.full(n, X0)
    if impl == "numpy":

        def setup():
            return x0, chain_ops(np)

        def run(x, ops):
            return run_chain(x, ops, MEM_OPS)[:1].copy()

    elif impl == "dualad":
        da, dnp = lib.da, lib.dnp

        def setup():
            return da.tensor(x0, requires_grad=True), chain_ops(dnp)

        def run(x, ops):
            y = run_chain(x, ops, MEM_OPS)
            (g,) = da.grad((y,), (x,), (da.ones_like(y.detach()),))
            return g.detach().numpy()[:1].copy()

    elif impl == "torch":
        tc = lib.torch

        def setup():
            return tc.from_numpy(x0.copy()).requires_grad_(), chain_ops(tc)

        def run(x, ops):
            y = run_chain(x, ops, MEM_OPS)
            (g,) = tc.autograd.grad((y,), (x,), (tc.ones_like(y),))
            return g.numpy()[:1].copy()

    elif impl == "jax":
        jx, jnp = lib.jax, lib.jnp

        def setup():
            return jnp.asarray(x0), chain_ops(jnp)

        def run(x, ops):
            y, vjp = jx.vjp(lambda x: run_chain(x, ops, MEM_OPS), x)
            (g,) = vjp(jnp.ones_like(y))
            return np.asarray(g[:1]).copy()

    elif impl == "autograd":
        ag, anp = lib.ag, lib.anp

        def setup():
            return x0, chain_ops(anp)

        def run(x, ops):
            vjp, y = ag.make_vjp(lambda x: run_chain(x, ops, MEM_OPS))(x)
            return np.asarray(vjp(np.ones_like(y)))[:1].copy()

    else:
        return {"error": f"unknown library {impl}"}

    try:
        args = setup()
        gc.collect()
        traced = impl in ("numpy", "dualad", "autograd")  # their arrays are NumPy's
        try:  # reset the high-water mark so that VmHWM measures this run alone
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            rss0 = _rss_kib("VmRSS")
        except OSError:
            rss0 = _rss_kib("VmHWM")
        if traced:
            tracemalloc.start()
        t0 = time.perf_counter()
        out = run(*args)
        seconds = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] if traced else None
        if traced:
            tracemalloc.stop()
        hwm = _rss_kib("VmHWM")
    except Exception as e:
        return {"error": short_reason(e)}
    return {
        "first": float(out[0]),
        "tracemalloc_mb": None if peak is None else peak / 1e6,
        "rss_mb": (hwm - rss0) * 1024 / 1e6,
        "seconds": seconds,
    }


def bench_memory(r: Runner, quick: bool, script: str) -> list[Row]:
    n = 10**5 if quick else 10**6
    z = run_chain(np.array([X0 + 1e-30j]), chain_ops(np), MEM_OPS)
    want = float(z.imag[0] / 1e-30)
    saves = sum(CYCLE_SAVES[i % len(CYCLE_SAVES)] for i in range(MEM_OPS))
    declared_mb = saves * n * 8 / 1e6
    traced: dict[str, Cell] = {}
    rss: dict[str, Cell] = {}
    details = []
    for impl in IMPLS:
        if not r.libs.has(impl):
            reason = f"import failed: {r.libs.missing.get(impl)}"
            text = "n/a" if impl == "dualad" else "-"
            traced[impl] = Cell(text=text, reason=reason if impl == "dualad" else "not installed")
            rss[impl] = Cell(text=text, reason=reason if impl == "dualad" else "not installed")
            continue
        cmd = [sys.executable, script, "--memory-worker", impl, "--n", str(n)]
        stderr = ""
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL
            )
            stderr = proc.stderr
            res = json.loads(proc.stdout.strip().splitlines()[-1])
        except Exception as e:
            err = stderr.strip().splitlines()[-1:]
            res = {"error": short_reason(e) + (f" ({err[0]})" if err else "")}
        if "error" in res:
            traced[impl] = Cell(text="n/a", reason=res["error"])
            rss[impl] = Cell(text="n/a", reason=res["error"])
            continue
        bad = None
        if impl != "numpy" and abs(res["first"] - want) > 1e-8 * max(abs(want), 1e-300):
            bad = f"wrong gradient {res['first']!r}, expected {want!r}"
        if res["tracemalloc_mb"] is None:
            traced[impl] = Cell(text="-", reason="allocations not visible to tracemalloc")
        else:
            traced[impl] = Cell(value=res["tracemalloc_mb"], reason=bad, wrong=bad is not None)
        rss[impl] = Cell(value=res["rss_mb"], reason=bad, wrong=bad is not None)
        details.append(f"{impl} {res['seconds']:.1f} s")
    traced["numpy"].reason = "value only, no gradient"
    rss["numpy"].reason = "value only, no gradient"
    label = f"{MEM_OPS}-op chain, n=10^{round(math.log10(n))}, value + gradient"
    target = f"≤ {declared_mb:.0f}"
    note = (
        f"declared: {saves} of the {MEM_OPS} ops keep one {n * 8 / 1e6:g} MB array "
        f"({declared_mb:.0f} MB); wall time: " + ", ".join(details)
    )
    return [
        Row("memory", f"memory, tracemalloc peak: {label}", "MB", target, traced, note=note),
        Row("memory", f"memory, peak RSS increase: {label}", "MB", target, rss),
    ]


# ---------------------------------------------------------------------------
# 7: functional
# ---------------------------------------------------------------------------
def best_variant(r: Runner, variants: dict[str, Callable[[], object]], check, scale) -> Cell:
    """Time several APIs of one library; the cell shows the fastest correct one."""
    results: dict[str, float] = {}
    reasons = []
    for name, make in variants.items():
        try:
            fn = make()
            bad = check(fn())
            if bad:
                reasons.append(f"{name}: {bad}")
                continue
            results[name] = r.timer.best(fn) * scale
        except Exception as e:
            reasons.append(f"{name}: {short_reason(e)}")
    if not results:
        return Cell(text="n/a", reason="; ".join(reasons) or "no variant")
    name = min(results, key=results.get)
    return Cell(
        value=results[name],
        reason=f"fastest: {name}" + ("; " + "; ".join(reasons) if reasons else ""),
        variants=results,
    )


def peer_cell(r: Runner, impl: str, build, check, scale) -> Cell:
    if build is None:
        return Cell(text="-", reason="not applicable")
    if r.skipped(impl):
        return r.skipped(impl)
    if not r.libs.has(impl):
        if impl == "dualad":
            return Cell(text="n/a", reason=f"import failed: {r.libs.missing.get(impl)}")
        return Cell(text="-", reason="not installed")
    try:
        variants = build(r.libs.mods[impl])
    except Exception as e:
        return Cell(text="n/a", reason=short_reason(e))
    return best_variant(r, variants, check, scale)


def dualad_functional(lib):
    import dualad.functional as daf

    return daf


def bench_jacobian(r: Runner) -> list[Row]:
    n = 2048 if r.backend.gpu_sizes else 256
    rng = np.random.default_rng(3)
    W = r.put(rng.standard_normal((n, n)) / np.sqrt(n))
    x = r.put(rng.standard_normal(n))
    xp = r.xp

    def closed_form():
        return (1 - xp.tanh(W @ x) ** 2)[:, None] * W + xp.diag(3 * x**2)

    J = to_np(closed_form())

    def check(out):
        return mismatch(out, J, 1e-10)

    ms = 1e3

    def dualad(strategy):
        def build(lib):
            daf = dualad_functional(lib)
            Wt, xt, dnp = lib.da.as_tensor(W), lib.da.as_tensor(x), lib.dnp
            f = lambda x: dnp.tanh(Wt @ x) + x**3
            return {
                f"jacobian(vectorize=True, strategy={strategy!r})": lambda: (
                    lambda: daf.jacobian(f, xt, vectorize=True, strategy=strategy)
                )
            }

        return build

    def torch(kind):
        def build(lib):
            tc = lib.torch
            Wt, xt = r.torch_in(tc, W), r.torch_in(tc, x)
            f = lambda x: tc.tanh(Wt @ x) + x**3
            fn = tc.func.jacfwd if kind == "fwd" else tc.func.jacrev
            out = {f"torch.func.jac{kind}": lambda: lambda: fn(f)(xt)}
            taf = tc.autograd.functional.jacobian
            strategy = "forward-mode" if kind == "fwd" else "reverse-mode"
            out[f"autograd.functional.jacobian(vectorize=True, {strategy})"] = lambda: (
                lambda: taf(f, xt, vectorize=True, strategy=strategy)
            )
            if kind == "rev":
                out["autograd.functional.jacobian(vectorize=False)"] = lambda: lambda: taf(f, xt)
            return out

        return build

    def jax(kind):
        def build(lib):
            jx, jnp = lib.jax, lib.jnp
            Wj, xj = r.jax_in(jnp, W), r.jax_in(jnp, x)
            f = lambda x: jnp.tanh(Wj @ x) + x**3
            fn = lib.jit(jx.jacfwd(f) if kind == "fwd" else jx.jacrev(f))
            how = "jit" if lib.jit is jx.jit else "eager"
            return {f"jax.jac{kind} ({how})": lambda: lambda: fn(xj).block_until_ready()}

        return build

    def autograd(lib):
        anp = lib.anp
        f = lambda x: anp.tanh(W @ x) + x**3
        jac = lib.ag.jacobian(f)
        return {"autograd.jacobian": lambda: lambda: jac(x)}

    numpy_cell = r.cell("numpy", lambda lib: closed_form, check, ms)
    numpy_cell.reason = "closed form"
    rows = []
    for kind, strategy, target in (
        ("fwd", "forward-mode", "≤ 1.0"),
        ("rev", "reverse-mode", "≤ 1.5"),
    ):
        cells = {
            "dualad": peer_cell(r, "dualad", dualad(strategy), check, ms),
            "numpy": numpy_cell,
            "torch": peer_cell(r, "torch", torch(kind), check, ms),
            "jax": peer_cell(r, "jax", jax(kind), check, ms),
            JIT: peer_cell(r, JIT, jax(kind), check, ms),
            "autograd": peer_cell(r, "autograd", autograd if kind == "rev" else None, check, ms),
        }
        rows.append(
            Row("jacobian", f"Jacobian of tanh(W@x)+x**3, n={n}, {strategy}", "ms", target, cells)
        )
    return rows


def bench_hvp(r: Runner, quick: bool) -> list[Row]:
    n = 10**7 if r.backend.gpu_sizes and not quick else 10**5
    rng = np.random.default_rng(4)
    x = r.put(1 + 0.1 * rng.standard_normal(n))
    v = r.put(rng.standard_normal(n))
    xp = r.xp

    def rosen(m):
        return lambda x: m.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def closed_form():
        # The Hessian is tridiagonal: diag d, off-diagonal o.
        d = xp.zeros(n)
        d[:-1] = 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
        d[1:] += 200.0
        o = -400.0 * x[:-1]
        hv = d * v
        hv[:-1] += o * v[1:]
        hv[1:] += o * v[:-1]
        return hv

    want = to_np(closed_form())

    def check(out):
        return mismatch(out[1] if isinstance(out, tuple) else out, want, 1e-10)

    ms = 1e3

    def dualad(lib):
        daf = dualad_functional(lib)
        xt, vt, f = lib.da.as_tensor(x), lib.da.as_tensor(v), rosen(lib.dnp)
        return {"functional.hvp": lambda: lambda: daf.hvp(f, xt, vt)}

    def torch(lib):
        tc = lib.torch
        xt, vt, f = r.torch_in(tc, x), r.torch_in(tc, v), rosen(tc)
        return {
            "torch.func.jvp(grad) (fwd-over-rev)": lambda: (
                lambda: tc.func.jvp(tc.func.grad(f), (xt,), (vt,))
            ),
            "autograd.functional.hvp (double backward)": lambda: (
                lambda: tc.autograd.functional.hvp(f, xt, vt)
            ),
        }

    def jax(lib):
        jx, jnp = lib.jax, lib.jnp
        xj, vj, f = r.jax_in(jnp, x), r.jax_in(jnp, v), rosen(jnp)
        hvp = lib.jit(lambda x, v: jx.jvp(jx.grad(f), (x,), (v,)))

        def run():
            out = hvp(xj, vj)
            out[1].block_until_ready()
            return out

        how = "jit" if lib.jit is jx.jit else "eager"
        return {f"jax.jvp(grad) ({how})": lambda: run}

    def autograd(lib):
        f = rosen(lib.anp)
        hvp = lib.ag.hessian_vector_product(f)
        return {"autograd.hessian_vector_product": lambda: lambda: hvp(x, v)}

    numpy_cell = r.cell("numpy", lambda lib: closed_form, check, ms)
    numpy_cell.reason = "closed form"
    cells = {
        "dualad": peer_cell(r, "dualad", dualad, check, ms),
        "numpy": numpy_cell,
        "torch": peer_cell(r, "torch", torch, check, ms),
        "jax": peer_cell(r, "jax", jax, check, ms),
        JIT: peer_cell(r, JIT, jax, check, ms),
        "autograd": peer_cell(r, "autograd", autograd, check, ms),
    }
    return [Row("hvp", f"HVP of Rosenbrock, n=10^{round(math.log10(n))}", "ms", "≤ 2.5", cells)]


def bench_hessian(r: Runner) -> list[Row]:
    n = 1000 if r.backend.gpu_sizes else 100
    rng = np.random.default_rng(5)
    A = r.put(rng.standard_normal((n, n)) / np.sqrt(n))
    x = r.put(rng.standard_normal(n))

    def f_of(m):
        return lambda x: m.sum(m.log(1.0 + (A_of[id(m)] @ x) ** 2))

    A_of: dict[int, object] = {}

    def closed_form():
        u = A @ x
        return A.T @ ((2 * (1 - u**2) / (1 + u**2) ** 2)[:, None] * A)

    H = to_np(closed_form())

    def check(out):
        return mismatch(out, H, 1e-10)

    ms = 1e3

    def dualad(lib):
        daf = dualad_functional(lib)
        A_of[id(lib.dnp)] = lib.da.as_tensor(A)
        f, xt = f_of(lib.dnp), lib.da.as_tensor(x)
        return {"functional.hessian(vectorize=True)": lambda: lambda: daf.hessian(f, xt, vectorize=True)}

    def torch(lib):
        tc = lib.torch
        A_of[id(tc)] = r.torch_in(tc, A)
        f, xt = f_of(tc), r.torch_in(tc, x)
        return {
            "torch.func.hessian": lambda: lambda: tc.func.hessian(f)(xt),
            "autograd.functional.hessian(vectorize=True)": lambda: (
                lambda: tc.autograd.functional.hessian(f, xt, vectorize=True)
            ),
        }

    def jax(lib):
        jx, jnp = lib.jax, lib.jnp
        A_of[id(jnp)] = r.jax_in(jnp, A)
        f, xj = f_of(jnp), r.jax_in(jnp, x)
        hess = lib.jit(jx.hessian(f))
        how = "jit" if lib.jit is jx.jit else "eager"
        return {f"jax.hessian ({how})": lambda: lambda: hess(xj).block_until_ready()}

    def autograd(lib):
        A_of[id(lib.anp)] = A
        hess = lib.ag.hessian(f_of(lib.anp))
        return {"autograd.hessian": lambda: lambda: hess(x)}

    numpy_cell = r.cell("numpy", lambda lib: closed_form, check, ms)
    numpy_cell.reason = "closed form"
    cells = {
        "dualad": peer_cell(r, "dualad", dualad, check, ms),
        "numpy": numpy_cell,
        "torch": peer_cell(r, "torch", torch, check, ms),
        "jax": peer_cell(r, "jax", jax, check, ms),
        JIT: peer_cell(r, JIT, jax, check, ms),
        "autograd": peer_cell(r, "autograd", autograd, check, ms),
    }
    return [Row("hessian", f"full Hessian of sum(log(1+(A@x)**2)), n={n}", "ms", "≤ 1.0", cells)]


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------
def cell_text(c: Cell) -> str:
    s = c.text if c.text is not None else fmt(c.value)
    return s + ("!" if c.wrong else "")


def render(rows: list[Row], markdown: bool, reference: str = "numpy",
           impls: tuple[str, ...] = IMPLS) -> str:
    """The table; ``reference`` names the numpy column (the backend's own evaluation)."""
    header = ["benchmark", "unit", "target", *(reference if k == "numpy" else k for k in impls)]
    body = [[row.name, row.unit, row.target, *(cell_text(row.cells[k]) for k in impls)]
            for row in rows]
    if markdown:
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] * 3 + ["---:"] * len(impls)) + "|",
        ]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    out = []
    for j, r in enumerate([header, *body]):
        parts = [r[i].ljust(widths[i]) if i < 3 else r[i].rjust(widths[i]) for i in range(len(r))]
        out.append("  ".join(parts))
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def render_notes(rows: list[Row], reference: str = "numpy",
                 impls: tuple[str, ...] = IMPLS) -> str:
    lines = []
    for row in rows:
        items = []
        if row.note:
            items.append(row.note)
        for k in impls:
            c = row.cells[k]
            name = reference if k == "numpy" else k
            if c.reason and c.reason not in ("not installed",):
                items.append(f"{name}: {c.reason}")
            extra = {
                name: v for name, v in c.variants.items() if not (c.value == v and len(c.variants) == 1)
            }
            if extra:
                items.append(
                    f"{name} variants: " + ", ".join(f"{name} {fmt(v)}" for name, v in extra.items())
                )
        if items:
            lines.append(f"- {row.name}:")
            lines += [f"    {it}" for it in items]
    return "\n".join(lines)


def environment_lines(libs: Libs) -> list[str]:
    lines = [
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs",
        "versions: " + ", ".join(f"{k} {v}" for k, v in libs.versions.items()),
    ]
    try:
        load = os.getloadavg()[0]
        busy = load > 0.5 * (os.cpu_count() or 1)
        warn = " (other processes are using the CPUs: timings will be noisy)" if busy else ""
        lines.append(f"load average (1 min) at start: {load:.2f}{warn}")
    except OSError:
        pass
    if libs.missing:
        lines.append("unavailable: " + "; ".join(f"{k} ({v})" for k, v in libs.missing.items()))
    try:
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            if info.get("user_api") == "blas":
                api, ver, nth = (
                    info.get("internal_api"),
                    info.get("version"),
                    info.get("num_threads"),
                )
                arch = info.get("architecture")
                lines.append(f"numpy BLAS: {api} {ver}, {nth} threads, kernel {arch}")
    except Exception:
        lines.append("numpy BLAS: (install threadpoolctl to show the BLAS library and kernel)")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        if var in os.environ:
            lines.append(f"env {var}={os.environ[var]}")
    if "OPENBLAS_CORETYPE" in os.environ:
        lines.append(
            "note: OPENBLAS_CORETYPE is set, which slows current NumPy; for NumPy at its best run "
            "`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/run.py`"
        )
    return lines


def settle_allocator() -> str:
    """Free one 32 MB array, so that glibc's malloc thresholds sit where they settle in
    any process that has once freed an array of that size (its own adaptive rule: the
    mmap threshold rises to the freed block, the trim threshold to twice that)."""
    if platform.libc_ver()[0] != "glibc":
        return "allocator: not glibc, left as it is"
    block = np.empty((32 << 20) - (64 << 10), np.uint8)  # (untouched: no page is faulted in)
    del block
    return "allocator: glibc thresholds settled by freeing one 32 MB array (--allocator fresh skips it)"


def parse_only(values: list[str] | None) -> list[str]:
    if not values:
        return list(ALL_BENCHMARKS)
    chosen: list[str] = []
    for v in values:
        for name in filter(None, (s.strip() for s in v.split(","))):
            names = GROUPS.get(name, (name,))
            for nm in names:
                if nm not in ALL_BENCHMARKS:
                    known = ", ".join(ALL_BENCHMARKS + tuple(GROUPS))
                    raise SystemExit(f"unknown benchmark {nm!r}; choose from {known}")
                if nm not in chosen:
                    chosen.append(nm)
    return chosen


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats")
    p.add_argument("--only", action="append", metavar="NAME", help="benchmarks to run (comma-separated)")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument(
        "--allocator",
        choices=("settled", "fresh"),
        default="settled",
        help="settled (default): free one 32 MB array first (see above); "
        "fresh: malloc as the process started",
    )
    p.add_argument(
        "--backend",
        choices=tuple(BACKENDS),
        default="numpy",
        help="the arrays of dualad's inputs and of the reference column (default numpy; "
        "cupy: on a GPU, the peers not run)",
    )
    p.add_argument("--memory-worker", metavar="LIB", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, default=10**6, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.memory_worker:
        print(json.dumps(memory_worker(args.memory_worker, args.n)))
        return 0

    chosen = parse_only(args.only)
    backend = BACKENDS[args.backend]()  # (exits with the reason if it cannot run here)
    libs = Libs()
    r = Runner(libs, Timer(args.quick), backend)
    script = os.path.abspath(__file__)
    env = environment_lines(libs)
    if backend.name != "numpy":
        env.append(f"backend: {backend.about or backend.name} (dualad's inputs and the "
                   f"{backend.name} column; the clock stops after a device synchronisation)")
    settled = args.allocator == "settled"
    env.append(settle_allocator() if settled else "allocator: fresh (as the process started)")
    for line in env:
        print(line)
    print(flush=True)

    benches = {
        "forward": lambda: bench_forward(r),
        "plain": lambda: bench_plain(r),
        "bigjvp": lambda: bench_bigjvp(r, args.quick),
        "reverse": lambda: bench_reverse(r),
        "mlp": lambda: bench_mlp(r),
        "memory": lambda: (bench_memory(r, args.quick, script) if backend.name == "numpy"
                           else [Row("memory", "memory (host memory: not run with --backend "
                                     f"{backend.name})", "MB", "",
                                     {k: Cell(text="-") for k in backend.impls})]),
        "jacobian": lambda: bench_jacobian(r),
        "hvp": lambda: bench_hvp(r, args.quick),
        "hessian": lambda: bench_hessian(r),
    }
    rows: list[Row] = []
    for name in chosen:
        t0 = time.perf_counter()
        try:
            new = benches[name]()
        except Exception as e:  # a bug in this script, not in a library: report and go on
            new = [
                Row(
                    name,
                    name,
                    "",
                    "",
                    {k: Cell(text="n/a", reason=f"benchmark failed: {short_reason(e)}")
                     for k in backend.impls},
                )
            ]
        rows += new
        print(f"[{name}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)

    if backend.name != "numpy":  # the ratios are to the backend's own evaluation
        for row in rows:
            row.unit = row.unit.replace("numpy", backend.name)
    print(render(rows, args.markdown, backend.name, backend.impls))
    notes = render_notes(rows, backend.name, backend.impls)
    if notes:
        print("\nnotes (! = wrong result; - = not installed or not applicable):")
        print(notes)
    if args.json:
        payload = {
            "environment": env,
            "quick": args.quick,
            "backend": backend.name,
            "rows": [
                {
                    "bench": row.bench,
                    "name": row.name,
                    "unit": row.unit,
                    "target": row.target,
                    "cells": {
                        k: {
                            "value": c.value,
                            "text": cell_text(c),
                            "reason": c.reason,
                            "variants": c.variants,
                        }
                        for k, c in row.cells.items()
                    },
                }
                for row in rows
            ],
        }
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
