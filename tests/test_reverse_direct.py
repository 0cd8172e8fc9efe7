"""Reverse nodes whose program is known, and matmul's JVP on arrays, against the general way.

``Node.vjp`` transposes a node linear in the inputs asked for by calling its primitive's
transpose rule on the cotangent (the one equation's step of ``transpose_program``), and
an elementwise node that reads no values without unpacking any. ``matmul``'s forward
rule on arrays (``elementwise.fast_product``) gives a flat dual. Each must give what the
general way gives — tracing the JVP rule and transposing the program, or ``_dual`` —
bit for bit, for plain, dual and batched cotangents and tangents.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
from dualad import _dispatch as D
from dualad.ops import elementwise as E
from dualad.ops import linear as L
from dualad.reverse.graph import Given
from dualad.reverse.linearize import linearize, placeholder, transpose_program

_R = np.random.default_rng(21)


def _arr(shape, dtype=np.float64):
    return (0.5 + _R.random(shape)).astype(dtype)


# (id, primitive, params, input arrays (None: a Python scalar 2.5), which inputs require grad)
_LINEAR = [
    ("sum-all", L.reduce_sum, {"axis": (0, 1), "keepdims": False}, [(3, 4)], [0]),
    ("sum-lead", L.reduce_sum, {"axis": (0,), "keepdims": False}, [(3, 4)], [0]),
    ("sum-last", L.reduce_sum, {"axis": (1,), "keepdims": False}, [(3, 4)], [0]),
    ("sum-mid", L.reduce_sum, {"axis": (1,), "keepdims": False}, [(2, 3, 4)], [0]),
    ("sum-keep", L.reduce_sum, {"axis": (0,), "keepdims": True}, [(3, 4)], [0]),
    ("sum-none", L.reduce_sum, {"axis": (), "keepdims": False}, [(3, 4)], [0]),
    ("sum-0d", L.reduce_sum, {"axis": (), "keepdims": False}, [()], [0]),
    ("reshape", L.reshape, {"shape": (12,)}, [(3, 4)], [0]),
    ("transpose", L.transpose, {"axes": (1, 0)}, [(3, 4)], [0]),
    ("broadcast", L.broadcast_to, {"shape": (3, 4)}, [(4,)], [0]),
    ("astype", L.astype, {"dtype": np.float64}, [((3, 4), np.float32)], [0]),
    ("cumsum", L.cumsum, {"axis": 1}, [(3, 4)], [0]),
    ("pad", L.pad_zero, {"width": ((1, 0), (0, 2))}, [(3, 4)], [0]),
    ("matmul-mv-x", L.matmul, {}, [(3, 4), (4,)], [1]),
    ("matmul-mv-A", L.matmul, {}, [(3, 4), (4,)], [0]),
    ("matmul-f32", L.matmul, {}, [(3, 4), ((4,), np.float32)], [1]),  # (fitted to float32)
    ("matmul-vm", L.matmul, {}, [(4,), (4, 5)], [0]),
    ("matmul-mm-both", L.matmul, {}, [(3, 4), (4, 5)], [0, 1]),
    ("einsum", L.einsum, {"spec": "ij,j->i"}, [(3, 4), (4,)], [1]),
    ("concat", L.concatenate, {"axis": 0}, [(2, 4), (3, 4)], [0, 1]),
    ("add", E.PRIMS["add"], {}, [(3, 4), (4,)], [0, 1]),
    ("subtract", E.PRIMS["subtract"], {}, [(3, 4), (3, 4)], [0, 1]),
    ("subtract-b", E.PRIMS["subtract"], {}, [(3, 4), (3, 4)], [1]),
    ("negative", E.PRIMS["negative"], {}, [(3, 4)], [0]),
    ("positive", E.PRIMS["positive"], {}, [(3, 4)], [0]),
    ("add-scalar", E.PRIMS["add"], {}, [(3, 4), None], [0]),
    ("multiply-scalar", E.PRIMS["multiply"], {}, [None, (3, 4)], [1]),  # reads the scalar
]


def _inputs(specs, grads):
    ins = []
    for i, s in enumerate(specs):
        if s is None:
            ins.append(2.5)
            continue
        shape, dtype = s if s and isinstance(s[-1], type) else (s, np.float64)
        ins.append(da.tensor(_arr(shape, dtype), requires_grad=i in grads))
    return ins


def _cotangent(kind, shape, dtype):
    """A plain, flat dual, nested-parts dual or batched dual cotangent (at the live level)."""
    c = da.tensor(_arr(shape, dtype) - 1.0)
    if kind == "plain":
        return c
    if kind == "batched":
        return da.make_dual(c, da.tensor(_arr((2, *shape), dtype)), batched=True)
    d = da.make_dual(c, da.tensor(_arr(shape, dtype)))
    return d * 1.0 if kind == "flat" else d  # (the fast path's flat duals, or make_dual's)


def _parts(t):
    p, tt = da.unpack_dual(t)
    return p.numpy(), None if tt is None else tt.numpy()


@pytest.mark.parametrize("kind", ["plain", "flat", "dual", "batched"])
@pytest.mark.parametrize(("prim", "params", "specs", "grads"),
                         [pytest.param(*c[1:], id=c[0]) for c in _LINEAR])
def test_a_node_linear_in_its_inputs_transposes_as_the_traced_program(prim, params, specs,
                                                                        grads, kind):
    with da.dual_level():
        ins = _inputs(specs, grads)
        y = D.apply(prim, *ins, **params)
        node = y.grad_fn
        assert node.prim is prim
        ct = _cotangent(kind, y.shape, y.dtype)
        needs = [i in grads for i in range(len(ins))]
        with da.no_grad():
            got = node.vjp([ct], needs)
            primals, out = node._unpack()
            lins = [placeholder(*node.avals[i]) if n else None for i, n in enumerate(needs)]
            t, prog = linearize("test", lambda: prim.jvp(primals, lins, out, **params))
            want = transpose_program(prog, (t,), [ct], lins)
    for i, n in enumerate(needs):
        g = got[i]
        if not n:
            assert g is None
            continue
        g = g.c if isinstance(g, Given) else g  # (a result only the engine holds)
        assert g.shape == ins[i].shape and g.dtype == ins[i].dtype
        (gp, gt), (wp, wt) = _parts(g), _parts(want[i])
        np.testing.assert_array_equal(gp, wp)
        assert (gt is None) == (wt is None)
        if wt is not None:
            assert gt.shape == wt.shape
            np.testing.assert_array_equal(gt, wt)


# -- matmul's JVP on arrays ------------------------------------------------------------------


_PRODUCTS = [  # (shape of the dual operand, shape of the constant, dual on the left)
    ((4,), (3, 4), False),  # A @ x
    ((4,), (4, 5), True),  # x @ B
    ((4,), (4,), True),  # x @ v
    ((3, 4), (4, 5), True),
    ((3, 4), (2, 5, 3), False),  # a stack of constants
    ((2, 3, 4), (4, 5), True),
]


@pytest.mark.parametrize("tangent", ["plain", "batched", "seed", "diagonal"])
@pytest.mark.parametrize(("xs", "cs", "left"), _PRODUCTS)
def test_matmul_of_a_dual_and_a_constant_is_the_general_rule(xs, cs, left, tangent,
                                                              monkeypatch):
    from dualad.functional._common import basis_rows

    if tangent in ("seed", "diagonal") and len(xs) != 1:
        pytest.skip("a seed is an identity: one axis")
    x = _arr(xs)
    c = da.tensor(_arr(cs))
    n, k = x.size, da.tensor(_arr(xs))
    if tangent == "plain":
        tan = _arr(xs)
    elif tangent == "batched":
        tan = _arr((3, *xs))
    else:
        tan = basis_rows([xs], [np.float64], 0, n, seed=True, order="F")[0]

    def run():
        with da.dual_level():
            d = da.make_dual(da.tensor(x), da.tensor(tan), batched=tangent != "plain")
            if tangent == "diagonal":  # a seed times a vector: a known diagonal
                d = d * k
            y = c @ d if not left else d @ c
            flat = y._p is None
            return _parts(y), flat

    (gp, gt), flat = run()
    assert flat  # (the array rule ran)
    monkeypatch.setattr(L.matmul, "fast", None)
    (wp, wt), flat = run()
    assert not flat
    np.testing.assert_array_equal(gp, wp)
    assert gt.shape == wt.shape and gt.dtype == wt.dtype
    np.testing.assert_array_equal(gt, wt)


def test_matmul_of_two_duals_or_a_tracked_constant_takes_the_general_rule():
    with da.dual_level():
        a = da.make_dual(da.tensor(_arr((3, 4))), da.tensor(_arr((3, 4))))
        b = da.make_dual(da.tensor(_arr((4,))), da.tensor(_arr((4,))))
        assert E.fast_product(L.matmul, (a, b), D.stack[-1], {}) is None
        w = da.tensor(_arr((4,)), requires_grad=True)  # (its product's tangent is recorded)
        assert E.fast_product(L.matmul, (a, w), D.stack[-1], {}) is None
        y = a @ b
        p, t = da.unpack_dual(y)
        want = a._tangent.numpy() @ b._primal.numpy() + a._primal.numpy() @ b._tangent.numpy()
        np.testing.assert_allclose(t.numpy(), want)
