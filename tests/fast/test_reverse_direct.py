"""Reverse nodes whose program is known, and matmul's JVP on arrays, against the general way.

``Node.vjp`` transposes a node linear in the inputs asked for by calling its primitive's
transpose rule on the cotangent (the one equation's step of ``transpose_program``), and
an elementwise node that reads no values without unpacking any. ``matmul``'s forward
rule on arrays (``elementwise.fast_product``) gives an unmade dual. Each must give what the
general way gives — tracing the JVP rule and transposing the program, or ``_dual`` —
bit for bit, for plain, dual and batched cotangents and tangents.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.core import dispatch as D
from dualad.reverse import engine
from dualad.reverse.linearize import linearize, placeholder, transpose_program
from dualad.rules import elementwise as E
from dualad.rules import linear as L

try:  # (the fast layer; without it, the tests of its fast paths are skipped: conftest.py)
    from dualad.fast import elementwise as FE
except ModuleNotFoundError:
    FE = None

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
    """A plain, unmade dual, nested-parts dual or batched dual cotangent (at the live level)."""
    c = da.tensor(_arr(shape, dtype) - 1.0)
    if kind == "plain":
        return c
    if kind == "batched":
        return da.make_dual(c, da.tensor(_arr((2, *shape), dtype)), batched=True)
    d = da.make_dual(c, da.tensor(_arr(shape, dtype)))
    return d * 1.0 if kind == "unmade" else d  # (the fast path's unmade duals, or make_dual's)


def _parts(t):
    p, tt = da.unpack_dual(t)
    return p.numpy(), None if tt is None else tt.numpy()


@pytest.mark.parametrize("kind", ["plain", "unmade", "dual", "batched"])
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
        g = engine.written([g])[0]  # (as the engine's hooks see it)
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


# (a seed, and the diagonal it makes, is an identity: for a dual operand of one axis)
_PRODUCT_CASES = [(*p, t) for p in _PRODUCTS for t in ("plain", "batched", "seed", "diagonal")
                  if t in ("plain", "batched") or len(p[0]) == 1]


@pytest.mark.fastpath("fast")
@pytest.mark.parametrize(("xs", "cs", "left", "tangent"), _PRODUCT_CASES)
def test_matmul_of_a_dual_and_a_constant_is_the_general_rule(xs, cs, left, tangent,
                                                              monkeypatch):
    from dualad.functional._common import basis_rows

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
            unmade = y._stored_primal is None
            return _parts(y), unmade

    (gp, gt), unmade = run()
    assert unmade  # (the array rule ran)
    monkeypatch.setattr(L.matmul, "fast", None)
    (wp, wt), unmade = run()
    assert not unmade
    np.testing.assert_array_equal(gp, wp)
    assert gt.shape == wt.shape and gt.dtype == wt.dtype
    np.testing.assert_array_equal(gt, wt)


@pytest.mark.fastpath()  # (calls the fast layer's rule itself)
def test_matmul_of_two_duals_or_a_tracked_constant_takes_the_general_rule():
    with da.dual_level():
        a = da.make_dual(da.tensor(_arr((3, 4))), da.tensor(_arr((3, 4))))
        b = da.make_dual(da.tensor(_arr((4,))), da.tensor(_arr((4,))))
        assert FE.fast_product(L.matmul, (a, b), D.stack[-1], {}) is None
        w = da.tensor(_arr((4,)), requires_grad=True)  # (its product's tangent is recorded)
        assert FE.fast_product(L.matmul, (a, w), D.stack[-1], {}) is None
        y = a @ b
        p, t = da.unpack_dual(y)
        want = a._tangent.numpy() @ b._primal.numpy() + a._primal.numpy() @ b._tangent.numpy()
        np.testing.assert_allclose(t.numpy(), want)


# -- subtract's tangent, and slices written out ----------------------------------------------


@pytest.mark.parametrize("n", [5, 1 << 15])
@pytest.mark.parametrize("batched", [False, True])
def test_subtract_of_two_duals_has_the_tangent_of_the_formula(n, batched):
    # the array rule writes ta - tb for ta * 1 + tb * (-1): the same values, bit for bit
    xa, xb = _arr(n), _arr(n)
    ta, tb = _arr((3, n) if batched else n), _arr((3, n) if batched else n)
    with da.dual_level():
        a = da.make_dual(da.tensor(xa), da.tensor(ta), batched=batched)
        b = da.make_dual(da.tensor(xb), da.tensor(tb), batched=batched)
        p, t = da.unpack_dual(a - b)
    np.testing.assert_array_equal(p.numpy(), xa - xb)
    np.testing.assert_array_equal(t.numpy(), ta + np.negative(tb))


_KEYS = [  # (shape, key): slabs, and keys that are not
    ((40000,), np.s_[1:]), ((40000,), np.s_[:-1]), ((40000,), np.s_[5:-7]),
    ((200, 300), np.s_[:, 1:]), ((200, 300), np.s_[3:, :]), ((200, 300), np.s_[:, :]),
    ((200, 300), np.s_[1:, 1:]), ((200, 300), np.s_[::2, :]), ((200, 300), np.s_[7, :]),
    ((200, 300), np.s_[:, None, 2:]), ((40000,), np.s_[10:5]), ((40,), np.s_[1:]),
]


@pytest.mark.parametrize(("shape", "key"), _KEYS)
@pytest.mark.parametrize("neg", [False, True])
@pytest.mark.fastpath()  # (the fast layer's, whichever families are on)
def test_a_slice_written_out_is_zeros_with_the_slice_added(shape, key, neg):
    from dualad.fast.transpose import _outside, _placed

    idx = L.Index(key, len(shape)).key
    want = np.zeros(shape)
    p = _arr(want[idx].shape) - 1.0
    want[idx] = -p if neg else p
    got = _placed(p, idx, shape, neg)
    np.testing.assert_array_equal(got, want)
    rest = _outside(idx, shape)
    if rest is not None:  # the key's and the rest's elements: each of the array's, once
        seen = np.zeros(shape, int)
        seen[idx] += 1
        for k in rest:
            seen[k] += 1
        np.testing.assert_array_equal(seen, 1)


# -- negated cotangents left unwritten (fast.transpose.Negated) ----------------------------------------


def _rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def _graphs():
    """Functions whose reverse passes carry negated cotangents (subtract, negative) into
    sums, slices, elementwise rules, linear rules and leaves."""
    yield "rosenbrock", _rosenbrock
    yield "leaf", lambda x: ((1.0 - x) ** 2).sum()
    yield "twice", lambda x: (dnp.negative(-x) * x).sum()
    yield "sum-of-two", lambda x: ((x - x[::-1]) * x - x * 3.0).sum()
    yield "slices", lambda x: ((x[2:] - x[:-2]) ** 2).sum() - (x[1:-1] - 2.0).sum()
    yield "matmul", lambda x: (_M[: x.shape[0], : x.shape[0]] @ (1.0 - x) * x).sum()
    yield "reshape", lambda x: ((1.0 - x.reshape(-1, 1)) ** 2 * x).sum()
    yield "broadcast", lambda x: ((x.reshape(-1, 1) - x) ** 2).sum()  # (written out now)


_M = _arr((64, 64))


# (each graph small; the elementwise ones also past the in-place threshold of 2^14)
_NEGATED_CASES = [(name, f, n) for name, f in _graphs() for n in (9, 1 << 15)
                  if n == 9 or name not in ("matmul", "reshape", "broadcast")]


@pytest.mark.fastpath("transpose")
@pytest.mark.parametrize(("name", "f", "n"), _NEGATED_CASES)
def test_negated_cotangents_give_what_negated_copies_give(name, f, n, monkeypatch):
    from dualad import functional as Fn
    from dualad.fast import transpose as graph

    x, v = _arr(n), _arr(n) - 1.0
    made = []
    init = graph.Negated.__init__

    def counted(self, *a):
        made.append(1)
        init(self, *a)

    monkeypatch.setattr(graph.Negated, "__init__", counted)
    _, hv = Fn.hvp(f, x, v)
    xt = da.tensor(x, requires_grad=True)
    f(xt).backward()
    assert bool(made) == (name != "broadcast")  # (the lazy way ran)
    eager = graph.elementwise_t
    monkeypatch.setattr(graph, "elementwise_t", lambda *a: eager(*a[:8]))  # lazy=False
    made.clear()
    _, hv2 = Fn.hvp(f, x, v)
    xt2 = da.tensor(x, requires_grad=True)
    f(xt2).backward()
    assert not made
    np.testing.assert_array_equal(hv.numpy(), hv2.numpy())
    np.testing.assert_array_equal(xt.grad.numpy(), xt2.grad.numpy())


def test_a_hook_sees_a_negated_cotangent_written_out():
    # hooks, captured inputs and leaves get Tensors, never a Negated
    seen = []
    with da.dual_level():
        x = da.make_dual(da.tensor(_arr(5), requires_grad=True), da.tensor(_arr(5)))
        h = x * 2.0
        y = (1.0 - h).sum()
        h.grad_fn.register_prehook(lambda g: seen.append(g))
        (gh,) = da.grad(y, [h], retain_graph=True)
        (gx,) = da.grad(y, [x])
    assert isinstance(seen[0][0], da.Tensor) and isinstance(gh, da.Tensor)
    p, t = da.unpack_dual(gh)
    np.testing.assert_array_equal(p.numpy(), -np.ones(5))
    assert t is None or not t.numpy().any()
    np.testing.assert_array_equal(da.unpack_dual(gx)[0].numpy(), -2.0 * np.ones(5))


# -- products written into fresh coefficients (fast.transpose._times_fresh), large arrays only --------


@pytest.mark.fastpath()  # (the fast layer's, whichever families are on)
def test_a_fresh_coefficient_takes_the_product_when_it_is_large():
    from dualad.fast.transpose import _times_fresh

    for n, inplace in ((10, False), (1 << 14, True)):
        ct = da.tensor(_arr(n))
        with da.no_grad():
            k = da.tensor(_arr(n)) * 2.0  # (a fresh array)
            want = ct.numpy() * k.numpy()
            r = _times_fresh(ct, k, (), ct)
        assert (r is not None) == inplace
        if inplace:
            assert r._data is k._data
            np.testing.assert_array_equal(r.numpy(), want)


def _in_place_cases():
    import test_elementwise_transpose as TT

    return [pytest.param(*c.values, f, id=f"{c.id}{'-first' if f else ''}")
            for c in TT.FORMULA_CASES for f in (False, True)
            if not f or E.PRIMS[c.values[0]].nin > 1]


@pytest.mark.fastpath("transpose")
@pytest.mark.parametrize("mine", [False, True])
@pytest.mark.parametrize("ct_dual", [False, True])
@pytest.mark.parametrize("x_dual", [False, True])
@pytest.mark.parametrize(("name", "dtype", "first_only"), _in_place_cases())
def test_large_elementwise_transposes_in_place_equal_the_product(name, dtype, x_dual,
                                                                  ct_dual, first_only, mine,
                                                                  monkeypatch):
    # test_elementwise_transpose's check, at a size where the products are written in place
    import test_elementwise_transpose as TT

    TT.test_elementwise_transpose_in_place_equals_the_product(
        name, dtype, x_dual, ct_dual, first_only, (130, 128), mine, monkeypatch)


# -- products with batched duals in elementwise_t: multiply's array rule, called directly --------


@pytest.mark.parametrize("ct_kind", ["plain", "batched"])
@pytest.mark.parametrize("name", ["log", "square", "sin", "tanh", "multiply", "divide",
                                  "power", "hypot"])
@pytest.mark.fastpath("fast")
def test_products_with_batched_duals_are_multiplys_rule(name, ct_kind, monkeypatch):
    # forward-over-reverse with a batch of tangents (a Hessian by columns): the products
    # ct * conj(c_i) skip the operator and the hot path's decline; the values must be
    # those of ct * k, bit for bit, and the direct way must have run
    from dualad.fast import transpose as T
    from dualad.fast.transpose import Given
    from dualad.fast.transpose import tensors as written

    prim = E.PRIMS[name]
    xs = [_arr(6) for _ in range(prim.nin)]
    ts = [_arr((4, 6)) for _ in range(prim.nin)]
    c0, c1 = _arr(6) - 1.0, _arr((4, 6))
    calls = []
    mul = E.PRIMS["multiply"]

    def counted(p, *a):  # (the direct way's calls only: the operator's reach mul.fast too)
        calls.append(1)
        return mul.fast(mul, *a)

    def vjps():
        with da.dual_level():
            ins = [da.make_dual(da.tensor(x, requires_grad=True), da.tensor(t), batched=True)
                   for x, t in zip(xs, ts, strict=True)]
            y = prim(*ins)
            ct = da.tensor(c0) if ct_kind == "plain" else \
                da.make_dual(da.tensor(c0), da.tensor(c1), batched=True)
            with da.no_grad():
                res = y.grad_fn.vjp([ct], [True] * prim.nin)
            return [_parts(written([r.c if isinstance(r, Given) else r])[0]) for r in res]

    monkeypatch.setattr(T, "_MUL", types.SimpleNamespace(fast=counted))
    got = vjps()
    assert calls
    monkeypatch.setattr(T, "_times", lambda ct, k: ct * k)
    want = vjps()
    for (gp, gt), (wp, wt) in zip(got, want, strict=True):
        np.testing.assert_array_equal(gp, wp)
        assert gt.shape == wt.shape
        np.testing.assert_array_equal(gt, wt)
