"""The core's observers (``dualad.observe``): the hook through which anomaly mode and the
profiler watch every primitive call, replacing no function of the core.

An observer sees every evaluation, whichever path takes it (the general path, a hot path,
an operator); unregistering the last one leaves the core exactly as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad import observe as O
from dualad.core import dispatch as D
from dualad.reverse import graph as G


def _state():
    return (list(D._checks), D.record, list(O.observers),
            {p: (p.impl, p.fast) for p in D.every},
            {p: p.hot.__globals__.get("impl") for p in D.every if p.hot is not None})


def _program(x):
    y = dnp.sin(x) * x  # a ufunc's call and an operator: hot paths where they are on
    z = dnp.sum(y, axis=0)  # the general path
    return z + np.float64(1.0)


def test_wrap_impl_sees_every_evaluation_and_unobserve_puts_everything_back() -> None:
    before = _state()
    seen = []

    def wrap(prim, impl):
        def counted(*args, **params):
            seen.append(prim.name)
            return impl(*args, **params)
        return counted

    obs = O.Observer(wrap_impl=wrap)
    O.observe(obs)
    try:
        x = da.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        out = _program(x)
    finally:
        O.unobserve(obs)
    assert seen == ["sin", "multiply", "sum", "add"]
    np.testing.assert_array_equal(out.detach().numpy(), _program(np.arange(6.0).reshape(2, 3)))
    assert _state() == before
    seen.clear()
    _program(x)
    assert seen == []


def test_check_dual_sees_every_dual_evaluation_with_its_result() -> None:
    before = _state()
    seen = []

    def check(prim, args, params, level, out):
        assert out.__class__ is da.Tensor and out._level == level
        seen.append((prim.name, level))

    obs = O.Observer(check_dual=check)
    O.observe(obs)
    try:
        assert all(p.fast is None for p in D.every)  # (the fast paths stand aside)
        with da.dual_level() as L:
            x = da.make_dual(da.tensor([0.5, 1.0]), da.tensor([1.0, 2.0]))
            _, t = da.unpack_dual(dnp.sin(x) * x)
    finally:
        O.unobserve(obs)
    assert [n for n, _ in seen[:2]] == ["sin", "multiply"] and {lv for _, lv in seen} == {L}
    want = [np.cos(0.5) * 0.5 + np.sin(0.5), 2 * (np.cos(1.0) + np.sin(1.0))]
    np.testing.assert_allclose(t.numpy(), want)
    assert _state() == before


def test_traced_observers_record_with_tracebacks_while_one_is_registered() -> None:
    a, b = O.Observer(traced=True), O.Observer(wrap_impl=lambda prim, impl: impl)
    O.observe(a)
    O.observe(b)
    assert D.record is G.record_traced
    O.unobserve(a)  # (not the last one registered: the others stay as they ask)
    assert D.record is G.record and O.observers == [b]
    O.unobserve(b)
    assert not O.observers


def test_anomaly_mode_and_the_profiler_watch_together_and_leave_nothing_behind() -> None:
    before = _state()
    x = da.tensor([4.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"), da.detect_anomaly(), \
            da.profiler.profile() as prof:
        assert len(O.observers) == 2
        dnp.sqrt(x * x).sum().backward()
        assert "traceback_" in (x * x).grad_fn.metadata
    assert {"sqrt", "multiply"} <= {e.key for e in prof.key_averages()}
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    assert _state() == before
