"""The elementwise family's generated code (rules/elementwise.py): each formula
primitive's hot path and array transpose are written from its formula strings for the
common cases; they must give exactly what the general rules give, everywhere."""

import numpy as np
import pytest

import dualad as da
from dualad.core import dispatch as D
from dualad.rules import elementwise as E
from dualad.rules import linear as L

try:  # (the fast layer; without it, the tests of its fast paths are skipped: conftest.py)
    from dualad.fast import elementwise as FE
    from dualad.fast.transpose import plain_arrays
except ImportError:  # (ModuleNotFoundError; or, in a copy without it, another tree's layer)
    FE = plain_arrays = None

# (the size from which the fast paths write into temporaries: a size on each side of it)
INPLACE_MIN = FE._INPLACE_MIN if FE is not None else 1 << 14

_FORMULA_PRIMS = sorted(n for n, p in E.PRIMS.items() if p.formulas and p.nin in (1, 2))


def _takes(name, dtype):
    """Whether NumPy's function of the primitive is defined for ``dtype``."""
    prim = E.PRIMS[name]
    try:
        with np.errstate(all="ignore"):
            prim.impl(*(np.full(3, 0.5, dtype),) * prim.nin)
    except TypeError:
        return False
    return True


def _cases(dtypes):
    return [pytest.param(n, d, id=f"{n}-{d}") for n in _FORMULA_PRIMS for d in dtypes
            if _takes(n, d)]


def _operands(dtype):
    """Operand kinds a formula primitive's hot path meets: (name, make(level) -> arg)."""
    rng = np.random.default_rng(7)
    x = (0.2 + 0.6 * rng.random(3)).astype(dtype)
    t = rng.standard_normal(3).astype(dtype)
    col = (0.2 + 0.6 * rng.random((2, 1))).astype(dtype)
    return [  # (unmade duals, as ops make them; make_dual's own duals are not unmade)
        ("dual", lambda L: FE._unmade(L, x.copy(), t.copy())),
        ("dual column", lambda L: FE._unmade(L, col.copy(), col[::-1].copy())),
        ("make_dual", lambda L: da.make_dual(da.tensor(x), da.tensor(t))),
        ("python float", lambda L: 0.7),
        ("python int", lambda L: 2),
        ("plain tensor", lambda L: da.tensor(x[::-1].copy())),
        ("0-d tensor", lambda L: da.tensor(x[1])),
        ("requires grad", lambda L: da.tensor(x[::-1].copy(), requires_grad=True)),
        ("float64 array", lambda L: np.linspace(0.3, 0.6, 3)),
        ("int array", lambda L: np.array([1, 2, 3])),
    ]


_TAKEN = ("dual", "dual column", "plain tensor", "0-d tensor", "requires grad")  # by hot


@pytest.mark.fastpath("hot")
@pytest.mark.parametrize(("name", "dtype"), _cases(["float64", "float32", "complex128"]))
def test_generated_hot_path_equals_the_general_one(name, dtype, monkeypatch):
    # Each formula primitive's hot path is generated from its formulas; for every operand
    # kind it takes, it must give exactly what apply's general way gives.
    prim = E.PRIMS[name]
    hot = prim.hot
    kinds = _operands(dtype)
    combos = [(k,) for k in kinds if k[0] in _TAKEN + ("make_dual",)] if prim.nin == 1 else [
        (a, b) for a in kinds for b in kinds if a[0] in _TAKEN or b[0] in _TAKEN]
    used = 0
    if prim.nin == 2:  # f(x, x): one object twice
        combos += [(k, ("same", None)) for k in kinds if k[0] in _TAKEN]
    for combo in combos:
        what = f"{name}{tuple(k for k, _ in combo)}"
        with da.dual_level() as L, np.errstate(all="ignore"):
            args = tuple(make(L) for _, make in combo if make is not None)
            args = args * 2 if combo[-1][0] == "same" else args
            got = hot(prim, args)
            # the same code as entry points: prim(...) and the operators (reflected: B, A)
            entries = [(k, FE.variant(prim, k)) for k in ("call", "op", "rop")
                       if k == "call" or (prim.nin == 2 or k == "op")]
            try:
                outs = [(k, fn(*(args[::-1] if k == "rop" else args))) for k, fn in entries]
            except TypeError:
                outs = None
            monkeypatch.setattr(prim, "hot", None)
            try:
                want = D.apply(prim, *args)  # the general way
            except TypeError:  # not defined for these dtypes (NumPy refuses, e.g. complex)
                assert got is None and outs is None, what
                continue
            finally:
                monkeypatch.undo()
        kinds_in = {k for k, _ in combo}
        duals = kinds_in & {"dual", "dual column", "make_dual"}
        if "make_dual" in kinds_in or (duals and "requires grad" in kinds_in):
            assert got is None, what  # nested or tracked duals: the general way alone
        else:
            assert got is not None, what
            outs.append(("hot", got))
        for k, out in outs:  # (the variants take apply's way where hot declines)
            assert out._level == want._level and out._requires_grad == want._requires_grad, (what, k)
            assert (out.grad_fn is None) == (want.grad_fn is None), (what, k)
            for g, w in zip(_arrays(out), _arrays(want), strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape, (what, k)
                np.testing.assert_array_equal(g, w, err_msg=f"{what} {k}")
        used += got is not None
    assert used  # the comparison ran


def _arrays(t):
    """A result's arrays: its data, or a dual's primal and tangent (unmade or nested)."""
    return (t._primal._data, t._tangent._data) if t._level else (t._data,)


@pytest.mark.fastpath("hot")
def test_generated_hot_path_takes_the_hot_case_itself(monkeypatch):
    sin = E.PRIMS["sin"]
    calls = []
    real = FE._unary_tangent
    monkeypatch.setitem(sin.hot.__globals__, "_unary_tangent",
                        lambda *a: calls.append(1) or real(*a))
    with da.dual_level():
        x = da.make_dual(da.tensor([0.3, 0.4]), da.tensor([1.0, 2.0]))
        assert sin.hot(sin, (x,)) is None  # make_dual's dual is not unmade: apply's general way
        y = sin(x)
        assert sin.hot(sin, (y,)) is not None and calls == []  # small, unmade: generated alone
        big = sin(da.make_dual(da.tensor(np.full(INPLACE_MIN, 0.3)),
                               da.tensor(np.ones(INPLACE_MIN))))
        assert sin.hot(sin, (big,)) is not None
        assert calls == [1]  # large: the general tangent (written in place)
    assert sin.hot(sin, (da.tensor([0.3]),)) is not None  # plain
    assert sin.hot(sin, (np.array([0.3]),)) is None  # not a Tensor: apply's general way


@pytest.mark.fastpath("hot")
def test_generated_hot_path_leaves_the_rest_to_the_general_way():
    mul, sin = E.PRIMS["multiply"], E.PRIMS["sin"]
    x, t = np.array([0.3, 0.4]), np.array([1.0, 2.0])
    with da.dual_level() as L1:
        a = FE._unmade(L1, x, t)
        with da.dual_level() as L2:
            b = FE._unmade(L2, x, t)
            assert mul.hot(mul, (a, b)) is None and mul.hot(mul, (b, a)) is None  # two levels
    assert sin.hot(sin, (a,)) is None and mul.hot(mul, (a, 2.0)) is None  # exited levels
    batched = D._wrap(np.ones((2, 2)), 1)  # a batched tangent as an operand (linear rules)
    assert sin.hot(sin, (batched,)) is None
    assert mul.hot(mul, (batched, da.tensor(x))) is None
    assert mul.hot(mul, (da.tensor(x), batched)) is None
    with pytest.raises(TypeError, match="takes 2 array argument"):
        mul(da.tensor(x), da.tensor(x), da.tensor(x))  # (hot declines: apply's own error)
    with pytest.raises(TypeError, match="takes 2 array argument"):
        mul(da.tensor(x))
    with pytest.raises(TypeError, match="out=, where= and dtype= are not supported"):
        sin(da.tensor(x), out=np.empty(2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        sin(da.tensor(x), axis=0)


@pytest.mark.parametrize("n", [2, INPLACE_MIN], ids=["small", "large"])
def test_generated_hot_path_marks_inference_outputs(n):
    sin, mul = E.PRIMS["sin"], E.PRIMS["multiply"]
    x = np.full(n, 0.3)
    with da.dual_level() as L:
        d = FE._unmade(L, x, np.ones(n))
        with da.inference_mode():
            outs = [sin(d), mul(d, 2.0), mul(d, d), sin(da.tensor(x)), mul(da.tensor(x), 2.0)]
        assert all(o.is_inference() for o in outs)
        assert not sin(d).is_inference() and not sin(da.tensor(x)).is_inference()


_BINARY = [n for n in _FORMULA_PRIMS if E.PRIMS[n].nin == 2]


@pytest.mark.fastpath()  # (calls the fast layer's array rule itself)
@pytest.mark.parametrize("name", _BINARY)
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64")],
                         ids=["f64", "f32-f64"])
def test_blocked_sum_of_terms_equals_the_whole_array_one(name, dtypes, monkeypatch):
    # Large binary tangents add their second term a block at a time; the values must be
    # the whole-array sum's, including the last, partial block.
    prim = E.PRIMS[name]
    n = 2 * FE._BLOCK + 7
    rng = np.random.default_rng(3)
    a, b = ((0.2 + rng.random(n)).astype(d) for d in dtypes)
    ga, gb = (rng.standard_normal(n).astype(d) for d in dtypes)
    done = []
    real = FE._add_term
    monkeypatch.setattr(FE, "_add_term", lambda *args: done.append(real(*args)) or done[-1])
    with da.dual_level() as L, np.errstate(all="ignore"):
        y = prim.impl(a, b)
        got = FE._binary_tangent(prim, a, ga, b, gb, 0, y, L)
        monkeypatch.setattr(FE, "_add_term", lambda *args: False)
        want = FE._binary_tangent(prim, a, ga, b, gb, 0, y, L)
    fa, fb = prim.kernels  # a formula's term added into a fresh first term: blocks
    assert any(done) == (fb.__class__ is not int and not (fa.__class__ is int and fa in (0, 1)))
    assert got._stored_tangent.dtype == want._stored_tangent.dtype
    np.testing.assert_array_equal(got._stored_tangent, want._stored_tangent)


_LINEAR1_CALLS = {  # every linear._linear1 primitive but the batch-axis boundaries
    "getitem": [lambda x: x[1:], lambda x: x[:, [2, 0]], lambda x: x[x._data > 0.5]],
    "reshape": [lambda x: x.reshape(6)],
    "transpose": [lambda x: x.T],
    "diagonal": [lambda x: np.einsum("ii->i", x[:, :2]), lambda x: np.einsum("ijj->ji", x[None, :, :2]),
                 lambda x: np.diagonal(x, 1)],
    "tri": [lambda x: np.tril(x), lambda x: np.triu(x, 1)],
    "broadcast_to": [lambda x: np.broadcast_to(x, (4, 2, 3))],
    "sum": [lambda x: np.sum(x, axis=0), lambda x: np.sum(x)],
    "cumsum": [lambda x: np.cumsum(x, axis=1)],
    "pad": [lambda x: np.pad(x, 1)],
    "astype": [lambda x: x.astype(np.float32), lambda x: x.astype(np.complex128)],
    "index_add": [lambda x: D.apply(L.index_add, x, idx=L.Index((slice(None), [0, 0, 1]), 2),
                                    shape=(2, 2))],
}


@pytest.mark.fastpath("fast")
@pytest.mark.parametrize("kind", ["unmade", "batched", "make_dual", "requires grad"])
def test_linear_primitives_of_duals_on_arrays_equal_the_general_way(kind, monkeypatch):
    # fast_linear1 applies the primitive to the primal and the tangent arrays: what the
    # general way (its JVP, the primitive applied to the tangent Tensor) gives, exactly
    from dualad.grad_mode import untracked_tangents

    assert {p.name for p in L.LINEAR1 if not p.boundary} == set(_LINEAR1_CALLS)
    rng = np.random.default_rng(11)
    x = rng.random((2, 3))
    t = rng.standard_normal((4, 2, 3) if kind == "batched" else (2, 3))
    ran = []

    def run(fn, fast):
        with da.dual_level() as lv, untracked_tangents(), monkeypatch.context() as m:
            if kind == "unmade":
                d = FE._unmade(lv, x.copy(), t.copy())
            elif kind == "batched":
                d = da.make_dual(da.tensor(x), da.tensor(t), batched=True) * 1.0
            else:  # requires grad: recorded, the primal alone (tangents untracked)
                d = da.make_dual(da.tensor(x, requires_grad=kind == "requires grad"),
                                 da.tensor(t))
            for prim in L.LINEAR1:
                m.setattr(prim, "fast", None if not fast else
                          lambda *a, _f=prim.fast: ran.append(1) or _f(*a))
            ran.clear()
            y = fn(d)
            return y._level == lv, y.grad_fn is None, _arrays(y), bool(ran)

    for name, fns in _LINEAR1_CALLS.items():
        for fn in fns:
            level, untracked, got, took = run(fn, True)
            w_level, w_untracked, want, _ = run(fn, False)
            assert took and level and w_level and untracked == w_untracked, name
            assert untracked == (kind != "requires grad"), name
            for g, v in zip(got, want, strict=True):
                assert g.dtype == v.dtype and g.shape == v.shape, name
                np.testing.assert_array_equal(g, v, err_msg=name)


@pytest.mark.fastpath("fast")
def test_a_view_of_an_unmade_dual_shares_its_version_counter():
    with da.dual_level() as lv:
        d = FE._unmade(lv, np.arange(3.0), np.ones(3))
        assert d[1:]._version_cell is d._version_cell is not None
        assert (d + 0.0).reshape(3)._version_cell is not d._version_cell


def _recorded(prim, xs):
    """(node, arrays, y) of ``prim`` recorded on inputs ``xs`` (Tensors that require grad
    for arrays, the value itself for Python scalars)."""
    args = [da.tensor(x, requires_grad=True) if isinstance(x, np.ndarray) else x for x in xs]
    node = prim(*args).grad_fn
    arrays, y = plain_arrays(node)
    return node, arrays, y


_T_CASES = {  # input values per arity: same shapes, broadcasting, mixed precision, scalars
    1: [("vector", [np.array([0.3, 0.5, 0.7])]), ("f32", [np.array([0.3, 0.6], np.float32)]),
        ("0-d", [np.array(0.4)])],
    2: [("same", [np.array([0.3, 0.5]), np.array([0.6, 0.2])]),
        ("broadcast", [np.array([[0.3], [0.5]]), np.array([[0.6, 0.2, 0.4]])]),
        ("f32 with f64", [np.array([0.3, 0.5], np.float32), np.array([0.6, 0.2])]),
        ("f32", [np.array([0.3, 0.5], np.float32), np.array([0.6, 0.2], np.float32)]),
        ("python scalar", [np.array([0.3, 0.5]), 0.7]),
        ("scalar first", [0.7, np.array([0.3, 0.5])])],
}


@pytest.mark.fastpath("transpose")
@pytest.mark.parametrize(("name", "dtype"), _cases(["float64", "complex128"]))
def test_generated_transpose_equals_the_general_one(name, dtype):
    prim = E.PRIMS[name]
    complex_ = dtype == "complex128"
    used = 0
    for case, xs in _T_CASES[prim.nin]:
        if complex_:
            xs = [np.asarray(x + 0.1j) if isinstance(x, np.ndarray) else x for x in xs]
        with np.errstate(all="ignore"):
            try:
                node, arrays, y = _recorded(prim, xs)
            except (TypeError, RuntimeError):  # not defined for these dtypes
                continue
            shape, od = node.out_avals[0]
            ct = np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape).astype(od)
            for needs in ([True], [True, True], [True, False], [False, True]):
                if len(needs) != prim.nin or any(
                        n and not isinstance(x, np.ndarray) for n, x in zip(needs, xs, strict=True)):
                    continue
                got = prim.transposed(prim, ct, arrays, y, node.avals, needs, od)
                want = FE.fast_vjp(prim, ct, arrays, y, node.avals, needs, od)
                for g, w in zip(got, want, strict=True):
                    assert (g is None) == (w is None), (name, case, needs)
                    if w is not None:
                        assert g.dtype == w.dtype and g.shape == w.shape, (name, case, needs)
                        np.testing.assert_array_equal(g, w, err_msg=f"{name} {case} {needs}")
                used += 1
    assert used  # the comparison ran


@pytest.mark.fastpath("transpose")
def test_generated_transpose_takes_the_hot_case_itself(monkeypatch):
    calls = []
    real = FE.fast_vjp
    fn = E.PRIMS["multiply"].transposed
    monkeypatch.setitem(fn.__globals__, "fast_vjp", lambda *a: calls.append(1) or real(*a))
    node, arrays, y = _recorded(E.PRIMS["multiply"], [np.array([0.3, 0.5]), np.array([0.6, 0.2])])
    od = node.out_avals[0][1]
    fn(E.PRIMS["multiply"], np.ones(2), arrays, y, node.avals, [True, True], od)
    assert calls == []  # real, same dtypes: the generated code alone
    node, arrays, y = _recorded(E.PRIMS["multiply"], [np.array([0.3, 0.5]), np.array([0.6, 0.2])
                                                      + 0j])
    od = node.out_avals[0][1]
    fn(E.PRIMS["multiply"], np.ones(2) + 0j, arrays, y, node.avals, [True, True], od)
    assert calls == [1]  # complex: the general rule (it conjugates)
