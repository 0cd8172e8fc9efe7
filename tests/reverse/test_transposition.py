"""The identity that ties the two modes: Re<v, J u> (forward) == Re<J^T v, u> (reverse),
for every op-database entry, real and complex."""

from __future__ import annotations

import pytest

from _support import opdb


@pytest.mark.parametrize(("op", "dtype", "sample"), opdb.cases("transpose"))
def test_forward_reverse_identity(op, dtype, sample):
    opdb.check_transposition(op, dtype, sample)
