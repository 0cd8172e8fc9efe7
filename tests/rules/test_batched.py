"""Batched tangents (make_dual(batched=True)) and batched cotangents
(grad(..., is_grads_batched=True)) equal B separate passes, for every op-database entry."""

from __future__ import annotations

import pytest

from _support import opdb


@pytest.mark.parametrize(("op", "dtype", "sample"), opdb.cases("batched-forward"))
def test_batched_tangents(op, dtype, sample):
    opdb.check_batched_forward(op, dtype, sample)


@pytest.mark.parametrize(("op", "dtype", "sample"), opdb.cases("batched-reverse"))
def test_batched_cotangents(op, dtype, sample):
    opdb.check_batched_reverse(op, dtype, sample)
