"""
The gradient of a loss over an array larger than memory, with Dask
==================================================================

A Dask-backed tensor stays lazy: ``backward`` builds the Dask graph of the gradient,
and ``dualad.compute`` runs it, chunk by chunk, here on a local ``dask.distributed``
cluster (the same code runs on a cluster of machines). Peak memory is that of the
chunks in flight, not of the array.

    python examples/dask_gradient.py          # 10^6 elements (seconds)
    python examples/dask_gradient.py --full   # 10^8 float64 elements (800 MB), 10^6 a chunk
    python examples/dask_gradient.py --processes 2   # 2 worker processes instead

It prints the loss, the gradient's norm, the time, the peak memory of all processes
(resident set size of this process and its children, sampled every 20 ms), and NumPy's
in-memory gradient of the same loss at a size that fits, for comparison.

The cluster is one worker thread inside this process (``processes=False``): the
scheduler, the worker and the client share one Python with NumPy, Dask and
distributed imported (about 95 MB resident). Each worker process of a
``processes=True`` cluster is another such Python (about 97 MB, and 13 MB for
multiprocessing's resource tracker), so on one machine two worker processes take
about 310 MB before any chunk is computed (one worker process: 210 MB). With one
thread, the chunks in flight are those of one chunk's gradient (x and the fused
task's temporaries) and the next chunk of x: a few 8 MB blocks.
"""

from __future__ import annotations

import sys
import threading
import time

import dask
import dask.array as dka
import numpy as np
import psutil
from dask.diagnostics import ProgressBar
from distributed import Client, LocalCluster, progress

import dualad as da
import dualad.numpy as dnp


def loss(x: da.Tensor) -> da.Tensor:
    return (dnp.sin(x) * x + dnp.exp(-x) / 3.0).sum()


class PeakRSS:
    """The largest sum of the resident set sizes of this process and its children."""

    def __init__(self) -> None:
        self.peak, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now() -> int:
        me, total = psutil.Process(), 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.now())
            time.sleep(0.02)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    full = "--full" in sys.argv
    procs = int(sys.argv[sys.argv.index("--processes") + 1]) if "--processes" in sys.argv else 0
    n, chunk = (10**8, 10**6) if full else (10**6, 10**5)
    # chunks Dask makes itself (a loss's cotangent broadcast back over x) of x's size
    dask.config.set({"array.chunk-size": chunk * 8})
    if procs:
        where = dict(n_workers=procs, threads_per_worker=1, processes=True, host="127.0.0.1")
    else:  # one worker thread in this process: no second Python's memory (see above)
        where = dict(n_workers=1, threads_per_worker=1, processes=False)
    with PeakRSS() as mem, LocalCluster(dashboard_address=None, **where) as cluster, \
            Client(cluster) as client:
        x = da.tensor(dka.linspace(0.0, 1.0, n, chunks=chunk), requires_grad=True)
        value = loss(x)
        value.backward()  # the gradient's graph: nothing runs yet
        g = x.grad
        norm = dnp.sqrt((g * g).sum())
        rss0 = mem.now()
        t0 = time.perf_counter()
        # The gradient, then the loss: two passes over x. In one pass the two would share
        # x, sin(x) and exp(-x) chunk by chunk (the gradient reuses them), and the worker
        # was seen holding three chunks of each (72 MB) while the two consumers of each
        # waited their turn; the gradient alone is one fused task a chunk. Only the
        # scalars and three elements come back to the client.
        futures = client.compute([norm._data, g._data[:3]])
        # a progress bar of the cluster's tasks (a short interval: its feed notices soon
        # that the bar is done, before the cluster closes under it)
        progress(futures, interval="10ms")
        norm_, head = client.gather(futures)
        value_ = client.compute(value._data).result()
        seconds = time.perf_counter() - t0
    print()
    # Both sums against the trapezoid rule's (n - 1) * integral + (ends) / 2 (Euler-Maclaurin:
    # the next term is O(1/n)), the integrals from NumPy on a grid that fits in memory
    grid = np.linspace(0.0, 1.0, 10**6 + 1)
    for got, f in ((value_, lambda t: np.sin(t) * t + np.exp(-t) / 3.0),
                   (norm_**2, lambda t: (np.cos(t) * t + np.sin(t) - np.exp(-t) / 3.0) ** 2)):
        want = (n - 1) * np.trapezoid(f(grid), grid) + (f(0.0) + f(1.0)) / 2
        np.testing.assert_allclose(got, want, rtol=1e-8)
    kind = f"{procs} worker processes" if procs else "1 worker thread in this process"
    print(f"dask:  n={n:.0e} float64 ({n * 8 / 1e6:.0f} MB) in chunks of {chunk:.0e}, {kind}")
    print(f"       loss {value_:.10g}, |grad| {norm_:.10g}, grad[:3] {head}")
    print(f"       {seconds:.2f} s, peak RSS of all processes {mem.peak / 1e6:.0f} MB "
          f"(the idle cluster's {rss0 / 1e6:.0f} MB + {(mem.peak - rss0) / 1e6:.0f} MB)")

    # The same computation on the threaded scheduler, with Dask's own progress bar.
    m = 10**6
    x = da.tensor(dka.linspace(0.0, 1.0, m, chunks=m // 10), requires_grad=True)
    loss(x).backward()
    with ProgressBar():
        (g_threads,) = da.compute(x.grad)

    # NumPy, in memory, at a size that fits.
    xn = np.linspace(0.0, 1.0, m)
    t_np = np.inf
    for _ in range(3):  # the best of three (a shared machine's load comes and goes)
        xt = da.tensor(xn, requires_grad=True)
        t0 = time.perf_counter()
        loss(xt).backward()
        t_np = min(t_np, time.perf_counter() - t0)
    np.testing.assert_allclose(g_threads.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-15)
    exact = np.cos(xn) * xn + np.sin(xn) - np.exp(-xn) / 3.0
    np.testing.assert_allclose(xt.grad.numpy(), exact, rtol=1e-12, atol=1e-12)
    print(f"numpy: n={m:.0e} in memory: {t_np:.3f} s, best of 3 "
          f"({t_np / m * 1e9:.1f} ns an element; the Dask gradient and loss above: "
          f"{seconds / n * 1e9:.1f} ns an element)")


if __name__ == "__main__":
    main()

# sphinx_gallery_thumbnail_path = '_static/thumbnails/dask_gradient.png'
