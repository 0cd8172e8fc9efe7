"""Every op-database entry through dualad's own checkers (gradcheck and gradgradcheck).

``gradcheck`` in fast mode with forward mode, batched cotangents and batched tangents
on, and ``gradgradcheck``, for the float64 and complex128 samples of every entry.
The direct finite-difference checks live in test_ops_*.py; this file drives the
public checkers themselves over the same database.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da

from _support import opdb


def _checkable(s: opdb.Sample) -> bool:
    return all(np.size(s.args[i]) > 0 for i in s.diff)


def _as_function(op: opdb.OpInfo, s: opdb.Sample):
    def f(*xs):
        args = list(s.args)
        for i, x in zip(s.diff, xs, strict=True):
            args[i] = x
        outs = opdb.run(op, s, tuple(args))
        return tuple(outs) if len(outs) != 1 else outs[0]

    return f


def _inputs(s: opdb.Sample) -> tuple[da.Tensor, ...]:
    return tuple(da.tensor(s.args[i], requires_grad=True) for i in s.diff)


def _tolerances(op: opdb.OpInfo, s: opdb.Sample) -> dict[str, float]:
    """Finite differences of a single-precision output need a larger step and tolerance."""
    with da.no_grad():
        outs = opdb.flat(_as_function(op, s)(*_inputs(s)))
    if any(o.dtype in (np.float32, np.complex64) for o in outs):
        return {"eps": 1e-3, "atol": 1e-3, "rtol": 1e-3}
    return {"atol": 1e-5, "rtol": 1e-4}


CHECKED = ("float64", "complex128")


@pytest.mark.parametrize(("op", "dtype", "sample"),
                         opdb.cases("gradcheck", CHECKED, first=2))
def test_gradcheck(op, dtype, sample):
    if not _checkable(sample):
        pytest.skip("empty input: nothing to perturb")
    assert da.gradcheck(_as_function(op, sample), _inputs(sample), fast_mode=True,
                        check_forward_ad=True, check_batched_grad=True,
                        check_batched_forward_grad=True, **_tolerances(op, sample))
    opdb.record(op, dtype, "gradcheck")


@pytest.mark.parametrize(("op", "dtype", "sample"),
                         opdb.cases("gradgradcheck", CHECKED, first=1,
                                    where=lambda op: op.gradgrad))
def test_gradgradcheck(op, dtype, sample):
    if not _checkable(sample):
        pytest.skip("empty input: nothing to perturb")
    assert da.gradgradcheck(_as_function(op, sample), _inputs(sample), fast_mode=True,
                            **_tolerances(op, sample))
    opdb.record(op, dtype, "gradgradcheck")
