"""Third derivatives and nested functional transforms on a sample of op-database
entries (issue 18, item 4; ``opdb.THIRD_ORDER``: every family of rules).

Third order: forward-over-forward-over-reverse, reverse-over-forward-over-forward and
reverse-over-reverse-over-reverse, each against finite differences of a second
derivative computed in another composition (``opdb.check_third``).
"""

from __future__ import annotations

import pytest

from _support import opdb

WHERE = None
PICK = None


def _params(modes, dtypes=("float64", "complex128")):
    out = []
    for m in modes:
        for p in opdb.cases(m, dtypes, where=WHERE,
                            pick=PICK):
            out.append(pytest.param(m, *p.values, id=f"{m}-{p.id}", marks=p.marks))
    return out


@pytest.mark.parametrize(("mode", "op", "dtype", "sample"), _params(opdb.THIRD))
def test_third_order(mode, op, dtype, sample):
    opdb.check_third(op, dtype, sample, mode)


@pytest.mark.parametrize(("mode", "op", "dtype", "sample"), _params(opdb.TRANSFORMS))
def test_nested_transforms(mode, op, dtype, sample):
    opdb.check_transform(op, dtype, sample, mode)


@pytest.mark.parametrize("name", ["cumprod", "einsum", "mul3"])
def test_three_nested_batched_backward_passes(name):
    """jacrev(jacrev(jacrev(f))) pushes a batch of cotangents through a graph recorded by a
    batched backward pass recorded by another: the cotangents carry a batch axis per pass.
    Summing a forward-pass batch axis out of such a cotangent unbatched only one axis
    (wrong numbers for cumprod, AxisError for x * x[::-1] * x[0]) and einsum's batching
    rule took two batch axes for a diagonal (ValueError)."""
    import numpy as np

    import dualad.functional as F
    import dualad.numpy as dnp

    rng = np.random.default_rng(3)
    x0, w = rng.standard_normal(3), rng.standard_normal(3)
    f = {"cumprod": lambda x: dnp.sum(w * dnp.cumprod(x)),
         "einsum": lambda x: dnp.einsum("i,i,i->", x, x, dnp.sin(x)),
         "mul3": lambda x: dnp.sum(x * x[::-1] * x[0])}[name]
    rev = F.jacrev(F.jacrev(F.jacrev(f)))(x0).numpy()
    fwd = F.jacfwd(F.jacfwd(F.jacfwd(f)))(x0).numpy()
    np.testing.assert_allclose(rev, fwd, rtol=1e-10, atol=1e-12)
