"""Reverse mode of every op-database entry against finite differences, and double
backward (create_graph=True) against finite differences of the gradient."""

from __future__ import annotations

import pytest

from _support import opdb


@pytest.mark.parametrize(("op", "dtype", "sample"), opdb.cases("reverse"))
def test_reverse_vs_finite_differences(op, dtype, sample):
    opdb.check_reverse(op, dtype, sample)


@pytest.mark.parametrize(
    ("op", "dtype", "sample"),
    opdb.cases("double-backward", opdb.GRADGRAD_DTYPES, first=opdb.GRADGRAD_FIRST,
               where=lambda op: op.gradgrad),
)
def test_double_backward_vs_finite_differences(op, dtype, sample):
    opdb.check_double_backward(op, dtype, sample)
