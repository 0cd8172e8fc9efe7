"""``apply`` and each interpreter on its own: which interpreter a call reaches, a new one
plugged in beside the others, linearization's placeholders, the recording slot."""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.core import dispatch as D
from dualad.core import levels
from dualad.reverse import graph as G
from dualad.reverse import linearize as LZ
from dualad.rules import linear as L
from dualad.rules.elementwise import PRIMS


class Tagged(levels.Interpreter):
    """A toy transformation: a value at its level carries a tag (a Python set of the
    primitive names it went through). Its ``process`` unwraps its own level, lets
    ``apply`` handle the rest, and wraps the result: what a new interpreter does."""

    __slots__ = ("level", "seen")

    def __init__(self, level: int) -> None:
        self.level = level
        self.seen: list[str] = []

    def process(self, prim, args, params):
        self.seen.append(prim.name)
        inner = [a._stored_primal if a.__class__ is da.Tensor and a._level == self.level else a
                 for a in args]
        out = D.apply(prim, *inner, **params)
        return D.dual(self.level, out, out)  # (the pair's second half: unused by the toy)


class tagged_level:
    """Enter a ``Tagged`` level for the block; ``as`` gives its interpreter."""

    def __enter__(self) -> Tagged:
        self.level = levels.enter(Tagged)
        return levels.interpreters[self.level]

    def __exit__(self, *exc: object) -> None:
        levels.exit(self.level)


def tag(x: da.Tensor, toy: Tagged) -> da.Tensor:
    return D.dual(toy.level, x, x)


def test_level_zero_is_plain_evaluation_and_levels_come_and_go():
    assert isinstance(levels.interpreters[0], D.Evaluate)
    assert isinstance(levels.interpreters[levels.LIN], LZ.Linearize)
    assert isinstance(levels.interpreters[levels.AVAL], LZ.StandIn)
    before = dict(levels.interpreters)
    with da.dual_level() as lvl:
        interp = levels.interpreters[lvl]
        assert isinstance(interp, D.DualLevel) and interp.level == lvl
        assert lvl in levels.duals and levels.stack[-1] == lvl
    assert levels.interpreters == before and lvl not in levels.live


def test_evaluate_runs_the_implementation():
    x = da.tensor([1.0, 2.0])
    out = levels.interpreters[0].process(PRIMS["sin"], (x,), {})
    np.testing.assert_array_equal(out.numpy(), np.sin([1.0, 2.0]))


def test_a_new_interpreter_plugs_in_and_receives_the_calls_of_its_level():
    with tagged_level() as toy:
        x = tag(da.tensor([0.5, 1.0]), toy)
        y = dnp.sum(dnp.exp(x) * 2.0, axis=0)
        assert y._level == toy.level
    assert toy.seen == ["exp", "multiply", "sum"]
    np.testing.assert_allclose(y._stored_primal.numpy(), np.sum(np.exp([0.5, 1.0]) * 2.0))
    assert toy.level not in levels.interpreters  # (its level gone with it)


def test_a_new_interpreter_sees_no_fast_path():
    # prim.fast is the dual levels' slot: a toy level's calls reach its interpreter
    sin = PRIMS["sin"]
    calls = []
    fast, sin.fast = sin.fast, (lambda *a: calls.append(a))
    try:
        with tagged_level() as toy:
            D.apply(sin, tag(da.tensor([0.5]), toy))
    finally:
        sin.fast = fast
    assert calls == [] and toy.seen == ["sin"]


def test_apply_picks_the_innermost_level_among_mixed_arguments():
    with da.dual_level() as outer, tagged_level() as toy:
        x = da.make_dual(da.tensor(0.5), da.tensor(1.0), level=outer)
        y = D.apply(PRIMS["multiply"], x, tag(da.tensor(3.0), toy))
        assert toy.seen == ["multiply"] and y._level == toy.level
        p, t = da.unpack_dual(y._stored_primal, level=outer)  # the toy handed the dual on to its level
        assert (p.item(), t.item()) == (1.5, 3.0)


def test_a_dual_level_inside_a_new_one_reaches_it_through_the_primal():
    with tagged_level() as toy, da.dual_level() as inner:
        x = da.make_dual(tag(da.tensor(0.5), toy), tag(da.tensor(1.0), toy), level=inner)
        y = dnp.sin(x)
        assert y._level == inner and "sin" in toy.seen  # the primal's sin at the toy level
        t = y._tangent
        assert t._level == toy.level
        np.testing.assert_allclose(t._stored_primal.numpy(), np.cos(0.5))


def test_a_dual_of_an_exited_level_is_its_primal():
    with da.dual_level():
        x = da.make_dual(da.tensor(2.0), da.tensor(1.0))
    y = x * 3.0
    assert y._level == 0 and y.item() == 6.0


def test_linearization_records_linear_calls_and_refuses_a_nonlinear_one():
    ph = LZ.placeholder((2,), np.float64)
    w = da.tensor([2.0, 3.0])
    out, prog = LZ.linearize("toy", lambda t: dnp.sum(t * w), ph)
    assert out._level == levels.LIN and [eq[0].name for eq in prog] == ["multiply", "sum"]
    with pytest.raises(LZ.NonlinearTangentError, match="toy is not linear.*'sin'"):
        LZ.linearize("toy", dnp.sin, LZ.placeholder((2,), np.float64))
    with pytest.raises(LZ.NonlinearTangentError, match="a product of two tangents"):
        LZ.linearize("toy", lambda t: t * t, LZ.placeholder((2,), np.float64))
    with pytest.raises(RuntimeError, match="escaped its linearization"):
        L.reshape(LZ.placeholder((2,), np.float64), shape=(2, 1))


def test_a_stand_in_value_is_the_rules_error():
    aval = LZ.placeholder((2,), np.float64, level=levels.AVAL)
    with pytest.raises(RuntimeError, match="used a value it does not declare in `reads`"):
        LZ.linearize("toy", lambda t: t * dnp.exp(aval), LZ.placeholder((2,), np.float64))


class Spy(D.Recorder):
    """A recorder that notes what it is asked to record."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls: list[str] = []

    def record(self, prim, args, out, params):
        self.calls.append(prim.name)


@pytest.fixture
def recorder():
    """Install a recorder for the test, and put reverse mode's back after it."""
    installed = D.recorder

    def install(rec):
        D.install_recorder(rec)
        return rec

    yield install
    D.install_recorder(installed)
    assert D.record is G.record


def test_without_a_recorder_nothing_is_recorded(recorder):
    recorder(D.Recorder())
    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = dnp.sum(x, axis=0)  # (the general path: hot paths bind reverse mode's recorder)
    assert y.grad_fn is None
    with pytest.raises(RuntimeError, match="reverse mode is not installed"):
        D.recorder.edge_of(x)


def test_apply_records_through_the_installed_recorder_only_where_it_should(recorder):
    spy = recorder(Spy())
    x = da.tensor([1.0, 2.0], requires_grad=True)
    dnp.sum(x, axis=0)
    with da.no_grad():
        dnp.sum(x, axis=0)
    dnp.sum(da.tensor([1.0, 2.0]), axis=0)  # (nothing requires grad)
    assert spy.calls == ["sum"]
    # a placeholder's calls are symbolic: nothing recorded, whatever requires grad
    LZ.linearize("toy", lambda t: L.reshape(t * x, shape=(2, 1)), LZ.placeholder((2,), np.float64))
    assert spy.calls == ["sum"]


def test_a_dual_level_records_its_primal_before_the_rule_reads_it(recorder):
    spy = recorder(Spy())
    exp = PRIMS["exp"]
    fast, exp.fast = exp.fast, None  # (the general path: the interpreter's own)
    try:
        with da.dual_level():
            x = da.make_dual(da.tensor([1.0], requires_grad=True), da.tensor([1.0]))
            D.apply(exp, x)
    finally:
        exp.fast = fast
    # the primal exp (before the rule reads it), then apply's of the dual result (the
    # spy makes no node, so nothing the rule computes from ``out`` requires grad)
    assert spy.calls == ["exp", "exp"]


# -- a 0-d host value beside a device's arrays -------------------------------------------------


class DeviceLike(np.ndarray):
    """An array kind that refuses a plain NumPy array of any size as CuPy does (a TypeError),
    and takes NumPy scalars; results stay of its kind."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        if any(a.__class__ is np.ndarray for a in inputs):
            raise TypeError("Unsupported type <class 'numpy.ndarray'>")
        inputs = tuple(a.view(np.ndarray) if isinstance(a, DeviceLike) else a for a in inputs)
        r = getattr(ufunc, method)(*inputs, **kw)
        return np.asarray(r).view(DeviceLike) if isinstance(r, (np.ndarray, np.generic)) else r


def test_a_0d_host_value_meets_a_device_array_as_a_scalar():
    """A rule's constant made on the host from a Python number (log 2 in the derivative of
    2 ** x) is a scalar beside a GPU's arrays, as torch takes a CPU 0-d tensor beside CUDA
    ones; a host array of one or more axes stays the clear device error."""
    x = da.core.tensor._make(np.array([0.5, 1.5]).view(DeviceLike))
    for prim in (PRIMS["multiply"], PRIMS["power"]):
        y = D.apply(prim, x, np.asarray(3.0))
        assert y._data.__class__ is DeviceLike
        np.testing.assert_allclose(y._data.view(np.ndarray), prim.impl(np.array([0.5, 1.5]), 3.0))
    with da.core.grad_mode.no_grad():
        y = D.apply(PRIMS["add"], np.asarray(1.0), x)  # (the host value first)
    assert y._data.__class__ is DeviceLike
    with pytest.raises(TypeError, match="Unsupported type"):  # (on CuPy: the device error)
        D.apply(PRIMS["multiply"], x, np.ones(2))


def test_a_0d_host_value_is_not_retried_where_the_error_is_another():
    with pytest.raises(ValueError, match="could not be broadcast"):
        D.apply(PRIMS["add"], da.tensor(np.ones(3)), np.ones(2))
