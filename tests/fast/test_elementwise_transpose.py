"""The elementwise family's transpose written out from its formulas (``elementwise_t``)
against the general way, tracing the JVP rule and transposing the program; and its
products written in place against the products themselves."""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
from dualad.reverse.linearize import linearize, placeholder, transpose_program
from dualad.rules import elementwise as E

FORMULA_PRIMS = [n for n, p in E.PRIMS.items() if getattr(p, "coefs", None)]


_REAL_ONLY = ("floor", "ceil", "trunc", "rint", "fabs", "cbrt", "deg2rad", "rad2deg", "clip",
              "sinc", "exp2", "log2", "log10")


def _defined(name, dtype):
    return dtype is not np.complex128 or not (name in _REAL_ONLY or name in E.BINARY and (
        name not in ("add", "subtract", "multiply", "divide", "power")))


# (name, dtype) pairs the formula primitive is defined for: real, and complex where NumPy
# takes complex inputs
FORMULA_CASES = [pytest.param(n, d, id=f"{n}-{d.__name__}") for n in FORMULA_PRIMS
                 for d in (np.float64, np.complex128) if _defined(n, d)]


@pytest.mark.parametrize(("name", "dtype"), FORMULA_CASES)
@pytest.mark.fastpath()  # (the fast layer's, whichever families are on)
def test_elementwise_transpose_equals_the_traced_program(name, dtype):
    # reverse mode writes the elementwise family's transpose out once; it must be what
    # tracing the JVP rule and transposing the program gives (with broadcasting)
    from dualad.fast.transpose import elementwise_t

    prim = E.PRIMS[name]
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


def _held(ts):
    """Copies of every array the Tensors ``ts`` hold, through their dual parts."""
    from dualad.fast.transpose import _arrays_of

    return [(a, a.copy()) for a in _arrays_of(ts)]


@pytest.mark.parametrize("mine", [False, True])
@pytest.mark.parametrize("shape", [(3, 4), ()])
@pytest.mark.parametrize("ct_dual", [False, True])
@pytest.mark.parametrize("x_dual", [False, True])
@pytest.mark.parametrize(("name", "dtype", "first_only"), [
    pytest.param(*c.values, f, id=f"{c.id}{'-first' if f else ''}") for c in FORMULA_CASES
    for f in (False, True) if not f or E.PRIMS[c.values[0]].nin > 1])
@pytest.mark.fastpath("transpose")
def test_elementwise_transpose_in_place_equals_the_product(name, dtype, x_dual, ct_dual,
                                                           first_only, shape, mine,
                                                           monkeypatch):
    # the transpose writes ct * conj(c_i) into a coefficient its formula made fresh (and
    # into ct when the caller gives it: mine); it must give what the product gives, bit
    # for bit, and write nothing else any Tensor it read holds ("b" is the saved operand
    # itself, "y" the output, "y + 1" passes y's tangent on)
    from dualad.fast import transpose as T
    from dualad.fast.transpose import elementwise_t

    prim = E.PRIMS[name]
    r = np.random.default_rng(11)
    xs = [(0.2 + 0.6 * r.random(shape)).astype(dtype) for _ in range(prim.nin)]
    if name == "arccosh":
        xs = [x + 1.0 for x in xs]
    if dtype is np.complex128:
        xs = [x + 0.1j * r.random(shape) for x in xs]
    with da.dual_level():
        # (first_only: the other operands are saved plain, not requiring grad)
        ts = [da.tensor(x, requires_grad=not (first_only and i)) for i, x in enumerate(xs)]
        if x_dual:
            ts = [da.make_dual(t, da.tensor(r.standard_normal(shape).astype(dtype)))
                  for t in ts]
        y = prim(*ts)
        node = y.grad_fn
        c0 = r.standard_normal(shape).astype(dtype)
        c1 = r.standard_normal(shape).astype(dtype)

        def cotangent():  # a new one per call: with mine, the rule may write into it
            ct = da.tensor(c0)
            # (an unmade dual, as the forward fast path makes them)
            return da.make_dual(ct, da.tensor(c1)) * 1.0 if ct_dual else ct

        needs = [True] + [not first_only] * (prim.nin - 1)
        with da.no_grad():
            primals, out = node._unpack()
            ct = cotangent()
            held = _held([out, *primals] if mine else [ct, out, *primals])
            got = elementwise_t(prim.coefs, ct, primals, out, node.avals, needs, mine)
            for a, before in held:
                np.testing.assert_array_equal(a, before)
            monkeypatch.setattr(T, "_times_fresh", lambda *args: None)
            want = elementwise_t(prim.coefs, cotangent(), primals, out, node.avals, needs)
        for g, w in zip(got, want, strict=True):
            if w is None:
                assert g is None
                continue
            gp, gt = da.unpack_dual(g)
            wp, wt = da.unpack_dual(w)
            assert gp._data.__class__ is wp._data.__class__  # (arrays, even 0-d)
            np.testing.assert_array_equal(gp.numpy(), wp.numpy())
            assert (gt is None) == (wt is None)
            if wt is not None:
                assert gt._data.__class__ is wt._data.__class__
                np.testing.assert_array_equal(gt.numpy(), wt.numpy())
