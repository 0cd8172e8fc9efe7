"""The identity that ties the two modes: Re<v, J u> (forward) == Re<J^T v, u> (reverse),
for every op-database entry, real and complex."""

from __future__ import annotations

import numpy as np
import opdb
import pytest

import dualad as da
from dualad.ops import elementwise as E
from dualad.reverse.linearize import linearize, placeholder, transpose_program
from dualad.reverse.transpose import elementwise_t


@pytest.mark.parametrize(("op", "dtype", "sample"), opdb.cases("transpose"))
def test_forward_reverse_identity(op, dtype, sample):
    opdb.check_transposition(op, dtype, sample)


FORMULA_PRIMS = [n for n, p in E.PRIMS.items() if getattr(p, "coefs", None)]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("name", FORMULA_PRIMS)
def test_elementwise_transpose_equals_the_traced_program(name, dtype):
    # reverse mode writes the elementwise family's transpose out once; it must be what
    # tracing the JVP rule and transposing the program gives (with broadcasting)
    prim = E.PRIMS[name]
    if dtype is np.complex128 and name in E.BINARY and name not in (
            "add", "subtract", "multiply", "divide", "power"):
        pytest.skip("not defined for complex inputs")
    if dtype is np.complex128 and name in ("floor", "ceil", "trunc", "rint", "fabs", "cbrt",
                                           "deg2rad", "rad2deg", "clip", "sinc", "exp2",
                                           "log2", "log10"):
        pytest.skip("not defined for complex inputs")
    r = np.random.default_rng(7)
    shapes = [(3, 1), (1, 4), (4,)][: prim.nin]
    xs = [(0.2 + 0.6 * r.random(s)).astype(dtype) for s in shapes]
    if name == "arccosh":
        xs = [x + 1.0 for x in xs]  # its domain
    if dtype is np.complex128:
        xs = [x + 0.1j * r.random(x.shape) for x in xs]
    ts = [da.tensor(x, requires_grad=True) for x in xs]
    y = prim(*ts)
    node = y.grad_fn
    ct = da.tensor(r.standard_normal(y.shape).astype(dtype))
    needs = [True] * prim.nin
    primals, out = node._unpack()
    direct = elementwise_t(prim.coefs, ct, primals, out, node.avals, needs)
    lins = [placeholder(*a) for a in node.avals]
    t, prog = linearize(name, lambda: prim.jvp(primals, lins, out))
    traced = transpose_program(prog, (t,), [ct], lins)
    for d, tr, x in zip(direct, traced, xs, strict=True):
        if tr is None:
            assert d is None
            continue
        assert d.shape == x.shape and d.dtype == x.dtype
        np.testing.assert_allclose(d.detach().numpy(), tr.detach().numpy(), rtol=1e-12, atol=1e-14)
