"""dualad.profiler: events of forward primitives and backward nodes, tables, traces."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad import profiler as P
from dualad.core import dispatch as D
from dualad.reverse import engine


def _mlp(rng_seed: int = 0):
    rng = np.random.default_rng(rng_seed)
    w1 = da.tensor(rng.normal(size=(4, 8)), requires_grad=True)
    w2 = da.tensor(rng.normal(size=(8, 1)), requires_grad=True)
    x = da.tensor(rng.normal(size=(16, 4)))
    return w1, w2, x


def _step(w1, w2, x):
    h = dnp.tanh(x @ w1)
    loss = ((h @ w2) ** 2).mean()
    loss.backward()
    return loss


def test_events_of_forward_primitives_and_backward_nodes() -> None:
    w1, w2, x = _mlp()
    with P.profile() as prof:
        with P.record_function("train_step"):
            _step(w1, w2, x)
    names = [e.name for e in prof.events()]
    assert names[0] == "train_step"
    for n in ("matmul", "tanh", "square", "MatmulBackward0", "TanhBackward0",
              "SquareBackward0", "AccumulateGrad"):
        assert n in names, n
    assert names.count("matmul") >= 2 and names.count("AccumulateGrad") == 2
    # forward before backward, and every event nested in the record_function block
    assert names.index("tanh") < names.index("TanhBackward0")
    top = prof.events()[0]
    for e in prof.events()[1:]:
        assert top.start_ns <= e.start_ns <= e.end_ns <= top.end_ns
        assert e.depth >= 1
    assert top.self_cpu_time_total <= top.cpu_time_total
    # the result is what it is without the profiler
    ref = [t.grad.numpy().copy() for t in (w1, w2)]
    for t in (w1, w2):
        t.grad = None
    _step(w1, w2, x)
    for t, r in zip((w1, w2), ref, strict=True):
        np.testing.assert_allclose(t.grad.numpy(), r)


def test_off_costs_nothing_and_everything_is_put_back() -> None:
    impls = {p: p.impl for p in D.every}
    hot_impls = {p: p.hot.__globals__.get("impl") for p in D.every if p.hot is not None}
    with P.profile():
        assert engine.profiling[0] is not None
        assert any(p.impl is not impls[p] for p in D.every)
    assert engine.profiling[0] is None
    assert all(p.impl is impls[p] for p in D.every)
    assert all(p.hot.__globals__.get("impl") is v for p, v in hot_impls.items())
    with P.record_function("nothing"):  # no profile: nothing recorded, no error
        da.ones(2) * 2


def test_record_shapes_memory_and_stack() -> None:
    w1, w2, x = _mlp(1)
    with P.profile(record_shapes=True, profile_memory=True, with_stack=True) as prof:
        y = x @ w1
    (mm,) = [e for e in prof.events() if e.name == "matmul"]
    assert mm.input_shapes == [[16, 4], [4, 8]]
    assert mm.cpu_memory_usage == y.numpy(force=True).nbytes
    assert "test_record_shapes_memory_and_stack" in mm.stack[0]
    with P.profile(record_shapes=True) as prof:
        x @ w1
        w1.T @ x.T
        x @ w1
    avg = prof.key_averages(group_by_input_shape=True)
    mms = sorted((e.input_shapes, e.count) for e in avg if e.key == "matmul")
    assert mms == [([[8, 4], [4, 16]], 1), ([[16, 4], [4, 8]], 2)]
    assert sum(e.count for e in prof.key_averages() if e.key == "matmul") == 3
    with pytest.raises(RuntimeError, match="record_shapes=True"):
        P.profile().key_averages(group_by_input_shape=True)


def test_table_sorts_limits_and_totals() -> None:
    w1, w2, x = _mlp(2)
    with P.profile(profile_memory=True) as prof:
        _step(w1, w2, x)
    avg = prof.key_averages()
    table = avg.table(sort_by="self_cpu_time_total", row_limit=3)
    lines = table.splitlines()
    header = lines[1]
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                "CPU Mem", "Self CPU Mem", "# of Calls"):
        assert col in header
    rows = lines[3:6]
    assert lines[6].startswith("---") and lines[7].startswith("Self CPU time total:")
    best = sorted(avg, key=lambda e: e.self_cpu_time_total, reverse=True)[:3]
    assert [r.split()[0] for r in rows] == [e.key for e in best]
    assert sum(e.count for e in avg) == len(prof.events())
    np.testing.assert_allclose(sum(e.self_cpu_time_total for e in avg),
                               sum(e.self_cpu_time_total for e in prof.events()))
    with pytest.raises(ValueError, match="sort by one of"):
        avg.table(sort_by="cuda_time_total")


def test_export_chrome_trace(tmp_path) -> None:
    w1, w2, x = _mlp(3)
    with P.profile(record_shapes=True) as prof:
        with P.record_function("outer"):
            _step(w1, w2, x)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    events = [e for e in data["traceEvents"] if e["ph"] == "X"]
    assert len(events) == len(prof.events())
    for e in events:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "cat", "args"} <= set(e)
        assert e["dur"] >= 0 and e["ts"] >= 0
    (outer,) = [e for e in events if e["name"] == "outer"]
    for e in events:  # nested by time, in the same thread
        assert e["tid"] == outer["tid"]
        assert outer["ts"] <= e["ts"] and e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] + 1e-3
    mm = next(e for e in events if e["name"] == "matmul")
    assert mm["args"]["Input Dims"] == [[16, 4], [4, 8]]
    assert any(e["ph"] == "M" for e in data["traceEvents"])


def test_record_function_as_decorator_and_nesting() -> None:
    @P.record_function("helper")
    def helper(t):
        return dnp.sin(t)

    with P.profile() as prof:
        with P.record_function("a", "args"):
            helper(da.ones(3))
    a, h, s = prof.events()
    assert (a.name, h.name, s.name) == ("a(args)", "helper", "sin")
    assert h.parent is a and s.parent is h and s.depth == 2
    assert a.self_cpu_time_total * 1e3 == pytest.approx(
        a.end_ns - a.start_ns - (h.end_ns - h.start_ns))


def test_one_profiler_at_a_time() -> None:
    with P.profile():
        with pytest.raises(RuntimeError, match="already active"):
            with P.profile():
                pass
    with P.profile(enabled=False) as prof:
        da.ones(2) * 2
    assert len(prof.events()) == 0
    with pytest.raises(ValueError, match="emit_nvtx"):
        P.profile(use_cuda=True)


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_emit_nvtx_without_cupy_says_what_is_missing() -> None:
    with pytest.raises(RuntimeError, match="emit_nvtx needs CuPy"):
        with P.emit_nvtx():
            pass
    assert engine.profiling[0] is None


def test_emit_itt_is_not_available() -> None:
    with pytest.raises(RuntimeError, match="emit_itt is not available in dualad"):
        with P.emit_itt():
            pass
    with P.emit_itt(enabled=False):
        pass


def test_emit_nvtx_pushes_a_range_per_event(monkeypatch) -> None:
    # a stand-in for cupy.cuda.nvtx (no GPU here): the ranges it is given, in order
    import sys
    import types

    ranges: list[str] = []
    nvtx = types.ModuleType("cupy.cuda.nvtx")
    nvtx.available = True
    nvtx.RangePush = lambda name: ranges.append("push " + name)
    nvtx.RangePop = lambda: ranges.append("pop")
    cuda = types.ModuleType("cupy.cuda")
    cuda.nvtx = nvtx
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda
    for name, mod in (("cupy", cupy), ("cupy.cuda", cuda), ("cupy.cuda.nvtx", nvtx)):
        monkeypatch.setitem(sys.modules, name, mod)
    x = da.ones((2, 3), requires_grad=True)
    with P.emit_nvtx(record_shapes=True):
        with P.record_function("block"):
            dnp.sin(x).sum().backward()
    assert ranges[0] == "push block" and ranges[-1] == "pop"
    assert "push sin, sizes = [[2, 3]]" in ranges and "push SinBackward0, sizes = [[2, 3]]" \
        in ranges
    assert ranges.count("pop") == sum(r.startswith("push") for r in ranges)
    assert engine.profiling[0] is None
    nvtx.available = False
    with pytest.raises(RuntimeError, match="NVTX library is not available"):
        with P.emit_nvtx():
            pass


def test_hvp_backward_nodes_are_events() -> None:
    # hvp's own backward pass (tangents only) runs the general way under the profiler, so
    # its nodes are timed like backward()'s
    import dualad.functional as F

    x = da.tensor([0.1, 0.2, 0.3])
    with P.profile() as prof:
        _, hv = F.hvp(lambda x: (dnp.sin(x) * dnp.exp(x)).sum(), x, da.ones(3))
    names = [e.name for e in prof.events()]
    for n in ("sin", "exp", "SinBackward0", "ExpBackward0", "MultiplyBackward0"):
        assert n in names, (n, names)
    xs = x.numpy()
    np.testing.assert_allclose(hv.numpy(), 2 * np.cos(xs) * np.exp(xs), rtol=1e-12)
