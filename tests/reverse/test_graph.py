"""dualad.graph: Node, GradientEdge, saved-tensor hooks, multi-grad hooks, versions."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.reverse import graph as G


def _x(seed: int = 0, n: int = 5) -> da.Tensor:
    return da.tensor(np.random.default_rng(seed).normal(size=n), requires_grad=True)


def test_every_grad_fn_is_a_node() -> None:
    x = _x()
    y = dnp.exp(x)

    class Twice(da.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    for n in (y.grad_fn, y.grad_fn.next_functions[0][0], (x * 2 + 1).grad_fn,
              Twice.apply(x).grad_fn):
        assert isinstance(n, da.graph.Node)
    assert not isinstance(object(), da.graph.Node)
    assert y.grad_fn.name() == "ExpBackward0"


def test_get_gradient_edge_is_an_input_of_grad() -> None:
    x = _x(1)
    y = x * 2.0
    z = dnp.sin(y)
    edge = da.graph.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0
    (g_edge,) = da.grad(z.sum(), edge, retain_graph=True)
    (g_y,) = da.grad(z.sum(), y)
    np.testing.assert_allclose(g_edge.numpy(), np.cos(2 * x.numpy(force=True)))
    np.testing.assert_allclose(g_edge.numpy(), g_y.numpy())
    # a leaf's edge is its AccumulateGrad
    (g_x,) = da.grad(dnp.sin(y).sum(), da.graph.get_gradient_edge(x))
    np.testing.assert_allclose(g_x.numpy(), 2 * np.cos(2 * x.numpy(force=True)))
    # unused, materialized: zeros of the edge's shape
    w = _x(2, 3)
    (g_w,) = da.grad(z.sum(), da.graph.get_gradient_edge(w * 1.0), materialize_grads=True)
    assert g_w.shape == (3,) and not g_w.numpy().any()
    with pytest.raises(RuntimeError, match="does not require gradients"):
        da.graph.get_gradient_edge(da.ones(3))


def test_increment_version_invalidates_saved_values() -> None:
    x = _x()
    y = x * 1.0
    z = (y ** 2).sum()
    v = y._version
    da.graph.increment_version(y)
    assert y._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def _counting(log: list[str]):
    def pack(t):
        log.append("pack")
        return t

    def unpack(t):
        log.append("unpack")
        return t

    return pack, unpack


@pytest.mark.parametrize("f, n_saved", [
    (lambda a, b: a * b, 2),  # two inputs (the binary recorder)
    (lambda a, b: dnp.exp(a), 1),  # the output (a unary recorder)
    (lambda a, b: dnp.sin(a), 1),  # the input
    (lambda a, b: a * 3.0, 0),  # a scalar constant: nothing saved
    (lambda a, b: a + b, 0),
    (lambda a, b: dnp.matmul(a.reshape(1, 5), b.reshape(5, 1)), 2),  # the general recorder
])
def test_pack_once_per_saved_value_and_unpack_on_backward(f, n_saved) -> None:
    a, b = _x(0), _x(1)
    log: list[str] = []
    with da.graph.saved_tensors_hooks(*_counting(log)):
        y = f(a, b)
    assert log == ["pack"] * n_saved
    ref = da.grad(f(a, b).sum(), (a,), allow_unused=True)
    got = da.grad(y.sum(), (a,), allow_unused=True)
    assert log.count("unpack") >= n_saved and log.count("pack") == n_saved
    if ref[0] is not None:
        np.testing.assert_allclose(got[0].numpy(), ref[0].numpy())


def test_custom_function_save_for_backward_is_packed() -> None:
    log: list[str] = []

    class Cube(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = _x()
    with da.graph.saved_tensors_hooks(*_counting(log)):
        y = Cube.apply(x)
    assert log == ["pack"]
    y.sum().backward()
    assert log == ["pack", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), 3 * x.numpy(force=True) ** 2)


def test_innermost_pair_wins_and_hooks_are_thread_local() -> None:
    outer: list[str] = []
    inner: list[str] = []
    x = _x()
    other: list[str] = []
    with da.graph.saved_tensors_hooks(*_counting(outer)):
        with da.graph.saved_tensors_hooks(*_counting(inner)):
            dnp.sin(x)

            def elsewhere() -> None:
                other.append(repr(G.saved_hooks.stack))
                dnp.sin(x)  # (no hooks in this thread)

            th = threading.Thread(target=elsewhere)
            th.start()
            th.join()
        dnp.cos(x)
    assert inner == ["pack"] and outer == ["pack"] and other == ["[]"]
    assert G.hooks_live[0] == 0 and not G.saved_hooks.stack


def test_save_to_disk(tmp_path) -> None:
    # the seed's example: values above a threshold go to a file, read back at backward
    files = []

    def pack(t):
        if t.size < 4:
            return t
        path = tmp_path / f"saved{len(files)}.npy"
        np.save(path, t.numpy(force=True))
        files.append(path)
        return path

    def unpack(p):
        return p if isinstance(p, da.Tensor) else np.load(p)

    x = _x(3, 8)
    w = _x(4, 8)

    def f(x, w):
        return (dnp.tanh(x * w) * dnp.sin(x)).sum()

    with da.graph.saved_tensors_hooks(pack, unpack):
        y = f(x, w)
    assert len(files) >= 3
    got = da.grad(y, (x, w))
    ref = da.grad(f(x, w), (x, w))
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(g.numpy(), r.numpy())


def test_unpacked_copies_keep_the_graph_for_double_backward() -> None:
    # unpack gives new Tensors: with create_graph, derivatives must still reach x
    x = _x(5)
    with da.graph.saved_tensors_hooks(lambda t: t.numpy(force=True).copy(),
                                      lambda a: da.as_tensor(a)):
        y = (dnp.sin(x) * x).sum()
    (g,) = da.grad(y, x, create_graph=True)
    (h,) = da.grad(g.sum(), x)
    xv = x.numpy(force=True)
    np.testing.assert_allclose(g.numpy(force=True), np.cos(xv) * xv + np.sin(xv))
    np.testing.assert_allclose(h.numpy(), -np.sin(xv) * xv + 2 * np.cos(xv))


def test_save_on_cpu_on_numpy_changes_nothing() -> None:
    x = _x(6)
    with da.graph.save_on_cpu(pin_memory=True):
        y = (dnp.exp(x) * x).sum()
        assert G.hooks_live[0] == 1
    y.backward()
    xv = x.numpy(force=True)
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xv) * (1 + xv))


def test_disable_saved_tensors_hooks() -> None:
    with da.graph.disable_saved_tensors_hooks("saved tensors default hooks are disabled"):
        with pytest.raises(RuntimeError, match="default hooks are disabled"):
            with da.graph.save_on_cpu():
                pass
        with pytest.raises(RuntimeError, match="default hooks are disabled"):
            with da.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with da.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again
        pass
    assert G.hooks_live[0] == 0


def test_allow_mutation_on_saved_tensors() -> None:
    def run():
        a = da.ones((2, 3), requires_grad=True)
        b = a * 1.0
        out = (b ** 2).sum()
        b[...] = dnp.sin(b)
        out.backward()
        return a, b

    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run()
    with da.graph.allow_mutation_on_saved_tensors():
        a, b = run()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.ones((2, 3)))  # 2 b, b before sin
    np.testing.assert_allclose(b.numpy(force=True), np.sin(np.ones((2, 3))))


def test_multi_grad_hook_seed_example() -> None:
    a = da.tensor(np.random.default_rng(0).random((2, 3)), requires_grad=True)
    b = da.tensor(np.random.default_rng(1).random((2, 3)), requires_grad=True)
    c = a * b
    d = a * b
    seen: list[list[bool]] = []
    got: list[tuple] = []

    def fn(grads):
        seen.append([g is not None for g in grads])
        got.append(grads)

    h = da.graph.register_multi_grad_hook((a, b, c, d), fn)
    c.sum().backward(retain_graph=True)
    assert seen == [[True, True, True, False]]
    np.testing.assert_allclose(got[0][0].numpy(), b.numpy(force=True))
    np.testing.assert_allclose(got[0][2].numpy(), np.ones((2, 3)))
    c.sum().backward(inputs=(a,), retain_graph=True)
    assert seen[1] == [True, False, True, False]
    da.grad(c.sum(), b, retain_graph=True)
    assert seen[2] == [False, True, True, False]
    h.remove()
    c.sum().backward(retain_graph=True)
    assert len(seen) == 3


def test_multi_grad_hook_any() -> None:
    a, b = _x(0), _x(1)
    calls: list[np.ndarray] = []
    y = (a * 2.0 + b * 3.0).sum()
    h = da.graph.register_multi_grad_hook((a, b), lambda g: calls.append(g.numpy()),
                                          mode="any")
    y.backward(retain_graph=True)
    assert len(calls) == 1
    y.backward()
    assert len(calls) == 2  # once per pass
    h.remove()
    with pytest.raises(ValueError, match="one of"):
        da.graph.register_multi_grad_hook((a,), print, mode="some")


def test_docs_graph_md_snippets_run() -> None:
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "graph.md").read_text(encoding="utf-8")
    code = "\n\n".join(re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M))
    proc = subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for claim in ("[True, True, True, False]", "[True, False, True, False]",
                  "Function 'SquareBackward0' returned nan values in its 0th output.",
                  "(tensor([4., 8.]),)", "Self CPU time total"):
        assert claim in proc.stdout


def test_save_on_cpu_moves_device_arrays_to_host_and_back(monkeypatch) -> None:
    # a stand-in for CuPy (no GPU here): what save_on_cpu asks of it, recorded
    import sys
    import types

    from dualad.reverse import hooks as H

    calls: list[str] = []

    class GPUArray:
        def __init__(self, a, dev):
            self.a, self.shape, self.dtype = a, a.shape, a.dtype
            self.device = types.SimpleNamespace(id=dev)

        def get(self, out):
            calls.append("get")
            out[...] = self.a
            return out

    class Device:
        current = 0

        def __init__(self, i):
            self.i = i

        def __enter__(self):
            self.prev, Device.current = Device.current, self.i

        def __exit__(self, *e):
            Device.current = self.prev

    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(Device=Device)
    cupy.asarray = lambda h: (calls.append("asarray"), GPUArray(np.array(h), Device.current))[1]
    cupyx = types.ModuleType("cupyx")
    cupyx.empty_pinned = lambda shape, dtype: (calls.append("pinned"), np.empty(shape, dtype))[1]
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)

    from dualad.core.tensor import _make

    data = np.arange(4.0)
    t = _make(GPUArray(data, 1))
    for pin in (False, True):
        calls.clear()
        with da.graph.save_on_cpu(pin_memory=pin):
            pack, unpack = G.saved_hooks.stack[-1]
            packed = pack(t)
        assert isinstance(packed, H._OnHost) and isinstance(packed.host, np.ndarray)
        np.testing.assert_array_equal(packed.host, data)
        back = unpack(packed)
        assert isinstance(back._data, GPUArray) and back._data.device.id == 1
        np.testing.assert_array_equal(back._data.a, data)
        assert calls == (["pinned"] if pin else []) + ["get", "asarray"]
    x = da.ones(2)
    with da.graph.save_on_cpu():
        assert G.saved_hooks.stack[-1][0](x) is x  # a NumPy array stays as it is


def test_gradient_edge_as_an_output_of_grad() -> None:
    x = _x(7)
    y = x * 2.0
    z = dnp.sin(y)
    edge = da.graph.get_gradient_edge(z)
    (g,) = da.grad(edge, x, grad_outputs=da.ones(5), retain_graph=True)
    np.testing.assert_allclose(g.numpy(), 2 * np.cos(2 * x.numpy(force=True)))
    (g2,) = da.grad((edge, da.graph.get_gradient_edge(y)), x,
                    grad_outputs=(da.ones(5), da.ones(5)))
    np.testing.assert_allclose(g2.numpy(), 2 * np.cos(2 * x.numpy(force=True)) + 2)
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        da.grad(edge, x)
