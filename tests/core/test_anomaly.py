"""Anomaly detection: forward tracebacks, NaN checks in both modes, thread-locality."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad import observe as O
from dualad.core import dispatch as D
from dualad.core import grad_mode as gm
from dualad.reverse import graph as G

pytestmark = pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")


def _quiet():
    return np.errstate(all="ignore")


def test_backward_nan_names_the_node() -> None:
    x = da.tensor([1000.0, 1.0], requires_grad=True)
    with _quiet():
        y = (dnp.exp(x) * 0.0).sum()
        y.backward(retain_graph=True)  # off: a silent NaN
    assert np.isnan(x.grad.numpy()[0])
    with da.detect_anomaly(), _quiet(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = (dnp.exp(x) * 0.0).sum()
        with pytest.raises(RuntimeError, match=r"Function 'ExpBackward0' returned nan values in "
                                               r"its 0th output\."):
            y.backward()


def test_backward_nan_of_a_node_recorded_before() -> None:
    x = da.tensor([0.0, 1.0], requires_grad=True)
    y = (dnp.sqrt(x) * 0.0).sum()  # recorded with anomaly mode off
    with da.set_detect_anomaly(True), _quiet(), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="'SqrtBackward0' returned nan"):
            y.backward()
    assert any("No forward pass information available" in str(m.message) for m in w)


def test_check_nan_false_does_not_raise() -> None:
    x = da.tensor([0.0, 1.0], requires_grad=True)
    with da.detect_anomaly(check_nan=False), _quiet():
        (dnp.sqrt(x) * 0.0).sum().backward()
    assert np.isnan(x.grad.numpy()[0])


def _run_fn(a):
    out = _Fails.apply(a)  # the line the traceback must show
    return out.sum()


class _Fails(da.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp * 1.0

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("Some error in backward")


def test_error_in_backward_shows_the_forward_traceback() -> None:
    inp = da.rand(3, 3, requires_grad=True)
    with da.detect_anomaly():
        out = _run_fn(inp)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="Some error in backward"):
                out.backward()
    msgs = [str(m.message) for m in w if "Error detected" in str(m.message)]
    assert len(msgs) == 1
    assert "Error detected in _FailsBackward" in msgs[0]
    assert "Traceback of forward call that caused the error" in msgs[0]
    assert "in _run_fn" in msgs[0] and "_Fails.apply(a)" in msgs[0]
    assert "dualad/" not in msgs[0].split("caused the error")[1]  # (its own frames dropped)


@pytest.mark.parametrize("f", [
    lambda x, y: x * y,  # the hot binary recorder
    lambda x, y: dnp.exp(x),  # a hot unary recorder
    lambda x, y: x * 2.0,  # one Tensor and a scalar
    lambda x, y: dnp.matmul(x, y),  # the general recorder
])
def test_every_recorded_node_keeps_its_traceback(f) -> None:
    x = da.ones((2, 2), requires_grad=True)
    y = da.ones((2, 2), requires_grad=True)
    assert "traceback_" not in f(x, y).grad_fn.metadata
    with da.detect_anomaly():
        z = f(x, y)
    tb = z.grad_fn.metadata["traceback_"]
    assert "test_every_recorded_node_keeps_its_traceback" in tb


def test_forward_mode_nan_tangent_from_finite_inputs() -> None:
    with da.dual_level():
        x = da.make_dual(da.tensor([0.0, 1.0]), da.tensor([0.0, 1.0]))
        with _quiet():
            t = da.unpack_dual(dnp.sqrt(x)).tangent  # off: 0 * inf, silently NaN
        assert np.isnan(t.numpy()[0])
        with da.detect_anomaly(), _quiet():
            with pytest.raises(RuntimeError, match="Function 'sqrt' returned nan values in the "
                                                   "tangent of its 0th output"):
                dnp.sqrt(x)
            x2 = da.make_dual(da.tensor([4.0, 1.0]), da.tensor([0.0, 1.0]))
            np.testing.assert_allclose(da.unpack_dual(dnp.sqrt(x2)).tangent.numpy(), [0, 0.5])
            # NaN in, NaN out: not this op's anomaly
            bad = da.make_dual(da.tensor([np.nan, 1.0]), da.tensor([1.0, 1.0]))
            dnp.sin(bad)
        with da.detect_anomaly(check_nan=False), _quiet():
            dnp.sqrt(x)


def test_anomaly_mode_is_thread_local_and_restores_everything() -> None:
    fast = {p: p.fast for p in D.every}
    seen = []
    with da.detect_anomaly():
        assert da.is_anomaly_enabled() and da.is_anomaly_check_nan_enabled()
        th = threading.Thread(target=lambda: seen.append(da.is_anomaly_enabled()))
        th.start()
        th.join()
        with da.set_detect_anomaly(False):
            assert not da.is_anomaly_enabled()
            x = da.ones(2, requires_grad=True)
            assert "traceback_" not in (x * x).grad_fn.metadata
        assert da.is_anomaly_enabled()
    assert seen == [False] and not da.is_anomaly_enabled()
    assert D.record is G.record and not D._checks and not O.observers
    assert {p: p.fast for p in D.every} == fast
    assert gm.anomaly_threads[0] == 0 and G.hooks_live[0] == 0
    da.set_detect_anomaly(True, check_nan=False)  # as a function
    assert da.is_anomaly_enabled() and not da.is_anomaly_check_nan_enabled()
    da.set_detect_anomaly(False)
    assert gm.anomaly_threads[0] == 0


def test_results_unchanged_in_anomaly_mode() -> None:
    rng = np.random.default_rng(0)
    w = da.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    xs = rng.normal(size=(5, 3))

    def loss():
        return (dnp.tanh(da.tensor(xs) @ w) ** 2).mean()

    ref = da.grad(loss(), w)[0].numpy()
    with da.detect_anomaly():
        got = da.grad(loss(), w)[0].numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_forward_mode_nan_from_a_custom_function_jvp() -> None:
    class BadJvp(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def jvp(ctx, t):
            return t * np.nan

    with da.dual_level():
        x = da.make_dual(da.ones(2), da.ones(2))
        assert np.isnan(da.unpack_dual(BadJvp.apply(x)).tangent.numpy()).all()  # off: silent
        with da.detect_anomaly():
            with pytest.raises(RuntimeError, match="Function 'BadJvp' returned nan values in "
                                                   "the tangent of its 0th output"):
                BadJvp.apply(x)


def test_hvp_backward_pass_is_checked() -> None:
    # hvp's own backward pass sums only tangents; in anomaly mode it runs the whole
    # gradient the general way, so a node giving NaN there is named as in backward()
    import dualad.functional as F

    f = lambda x: (dnp.sqrt(x) * 0.0).sum()  # noqa: E731
    x, v = da.tensor([0.0, 1.0]), da.tensor([1.0, 1.0])
    with _quiet():
        _, hv = F.hvp(f, x, v)  # off: silent
        assert np.isfinite(hv.numpy()[1])
        with da.detect_anomaly(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match=r"'SqrtBackward0' returned nan"):
                F.hvp(f, x, v)
            _, hv2 = F.hvp(lambda x: (dnp.sin(x) ** 2).sum(), x, v)  # finite: unchanged
    want = 2 * np.cos(2 * x.numpy())
    np.testing.assert_allclose(hv2.numpy(), want, rtol=1e-12)
