"""Every composition of two modes on every op-database entry (issue 18, item 4).

forward-over-forward (nested dual levels), reverse-over-forward (grad of a tangent
computed from primals that require grad), forward-over-reverse (a backward pass inside a
dual level) and reverse-over-reverse (create_graph=True), single and with batched
tangents / cotangents at each level, against finite differences of a first derivative
taken in another mode (``opdb.check_second``). One sample per entry (the first with at
least two elements per input) in float64 and complex128; the single compositions also in
float32 / complex64 at their tolerance.
"""

from __future__ import annotations

import pytest

from _support import opdb

PICK = None


def _params(dtypes, batched):
    out = []
    for m in opdb.SECOND:
        mode = ("batched-" if batched else "") + m
        for p in opdb.cases(mode, dtypes, pick=PICK):
            out.append(pytest.param(m, *p.values, id=f"{m}-{p.id}", marks=p.marks))
    return out


@pytest.mark.parametrize(("mode", "op", "dtype", "sample"), _params(opdb.ALL, False))
def test_two_modes(mode, op, dtype, sample):
    opdb.check_second(op, dtype, sample, mode)


@pytest.mark.parametrize(("mode", "op", "dtype", "sample"),
                         _params(("float64", "complex128"), True))
def test_two_modes_batched(mode, op, dtype, sample):
    opdb.check_second(op, dtype, sample, mode, batched=True)
