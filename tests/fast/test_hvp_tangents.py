"""hvp sums only the tangents of the gradient at its inputs (``engine.grad_tangents``):
each case against the general way (``grad`` of the dual output, then its tangent), bit
for bit, at a size below and one past the in-place thresholds (2^14 elements)."""

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad import functional as F
from dualad.grad_mode import untracked_tangents
from dualad.reverse import engine
from dualad.rules import elementwise as E

try:  # (the fast layer; without it, the tests of its fast paths are skipped: conftest.py)
    from dualad.fast import elementwise as FE
except ModuleNotFoundError:
    FE = None


def _general(f, xs, vs):
    """Per input: None (independent), "none" (no tangent) or the tangent's array."""
    with da.enable_grad():
        xs = [da.tensor(x, requires_grad=True) for x in xs]
        with da.dual_level():
            duals = [da.make_dual(x, da.tensor(v)) for x, v in zip(xs, vs, strict=True)]
            with untracked_tangents():
                out = f(*duals)
            g = da.grad(out, duals, allow_unused=True)
            res = []
            for gj in g:
                t = None if gj is None else da.unpack_dual(gj).tangent
                res.append(None if gj is None else "none" if t is None else t.numpy())
            return res


def _tangents(f, xs, vs):
    """The same by ``grad_tangents``, as hvp calls it."""
    with da.enable_grad():
        xs = [da.tensor(x, requires_grad=True) for x in xs]
        with da.dual_level() as level:
            duals = [da.make_dual(x, da.tensor(v)) for x, v in zip(xs, vs, strict=True)]
            with untracked_tangents():
                out = f(*duals)
            ts = engine.grad_tangents(out, tuple(duals), level)
            return [None if t is None else "none" if t is engine.NO_TANGENT else t.numpy()
                    for t in ts]


def _primal(x):
    return da.unpack_dual(x).primal  # (plain, requires grad: its nodes record lanes)


def _nested(x):
    with da.dual_level():  # (an inner level of func's own: the cotangents nest)
        y = da.make_dual(x * 1.5, da.ones_like(x))
        z = da.unpack_dual(dnp.sin(y) * y).primal
    return dnp.sum(z * x)


_CASES = {
    "rosenbrock": lambda x: dnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2),
    "chain": lambda x: dnp.sum(x ** 3),  # (the last node sends to the input directly)
    "negated": lambda x: dnp.sum(x ** 2 * (1.0 - x)) - dnp.sum(x[1:] * x[:-1]),
    "slices": lambda x: dnp.sum(x[::2] ** 2) + dnp.sum(x[1:4] * x[2:5]) - dnp.sum(x[3] * x),
    "linear": lambda x: dnp.sum(3.0 * x[1:] - x[:-1]),  # (no tangent reaches x)
    "primal": lambda x: dnp.sum(_primal(x) ** 2 * 3.0) + dnp.sum(x ** 3),
    "primal only": lambda x: dnp.sum(_primal(x) ** 2 * 3.0),
    "nested": _nested,
    "matmul": lambda x: dnp.sum((x[:5].reshape(5, 1) * x[:5]) @ x[:5]),
    # (the primals a node's products need not write: engine._feeds_tangents)
    "fan-in": lambda x: dnp.sum((x * 2.0) ** 2) + dnp.sum(dnp.sin(x * 2.0) * (x * 2.0)),
    "through a sum": lambda x: dnp.sum(dnp.sum(x ** 2) * x ** 2),
    "saved constant": lambda x: dnp.sum((x * dnp.cos(da.tensor(np.ones(x.shape)))) ** 2),
    "dual constant": lambda x: dnp.sum((x[1:] * x[:-1]) ** 2),
    "hooked": lambda x: dnp.sum(_hooked(x * 2.0) ** 2),
}


_SEEN = []


def _hooked(t):
    # (its node passes nothing on: it has a hook, which sees the whole cotangent)
    t.register_hook(lambda g: _SEEN.append(da.unpack_dual(g).primal.numpy().copy()))
    return t


@pytest.mark.parametrize("n", [9, 1 << 15])
@pytest.mark.parametrize("name", list(_CASES))
def test_tangents_alone_give_the_gradients_tangents(name, n):
    rng = np.random.default_rng(5)
    x, v = 1 + 0.1 * rng.standard_normal(n), rng.standard_normal(n)
    f = _CASES[name]
    want = _general(f, [x], [v])
    got = _tangents(f, [x], [v])
    if want[0] is None or isinstance(want[0], str):
        assert got == want
    else:
        np.testing.assert_array_equal(got[0], want[0])
    _, hv = F.hvp(f, x, v)
    np.testing.assert_array_equal(hv.numpy(), np.zeros(n) if isinstance(want[0], str)
                                  else want[0])


def test_inputs_unused_linear_and_complex():
    rng = np.random.default_rng(6)
    x, y, z = rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal(6)
    vs = [rng.standard_normal(6) for _ in range(3)]

    def f(a, b, c):  # (c unused; b only linearly)
        return dnp.sum(a ** 2 * dnp.sin(a)) + dnp.sum(3.0 * b)

    want = _general(f, [x, y, z], vs)
    got = _tangents(f, [x, y, z], vs)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1:] == want[1:] == ["none", None]
    zc = x + 1j * y
    vc = vs[0] + 1j * vs[1]
    g = lambda w: dnp.sum(dnp.abs(w[1:] * w[:-1]) ** 2)  # noqa: E731
    np.testing.assert_array_equal(_tangents(g, [zc], [vc])[0], _general(g, [zc], [vc])[0])


def test_an_input_with_a_hook_sums_whole_gradients():
    # a hook on an input sees the gradient itself: that input is not summed as its tangent
    # alone, and the result is the same (a tensor hook: grad() captures what it gives, and
    # runs no AccumulateGrad pre-hook, as torch)
    x, v = np.linspace(0.5, 2.0, 7), np.arange(7.0)
    seen = []

    def f(a):
        y = a ** 3
        a.register_hook(lambda g: seen.append(da.unpack_dual(g).tangent is not None))
        return dnp.sum(y[1:] - y[:-1] ** 2)

    want = _general(f, [x], [v])
    assert seen.pop()  # (a dual)
    np.testing.assert_array_equal(_tangents(f, [x], [v])[0], want[0])
    assert seen.pop()  # (a dual)
    _, hv = F.hvp(f, x, v)
    np.testing.assert_array_equal(hv.numpy(), want[0])


@pytest.mark.fastpath("transpose", "engine", "tangents")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_broadcast_cotangent_times_a_scalar_stays_one_value(dtype, monkeypatch):
    # sum's cotangent is one value broadcast; times a Python scalar it stays so
    # (elementwise._times_one_value): the same values as the product written out
    n = 1 << 15
    rng = np.random.default_rng(7)
    x = (1 + 0.1 * rng.standard_normal(n)).astype(dtype)
    v = rng.standard_normal(n).astype(dtype)
    f = _CASES["rosenbrock"]
    g = lambda x: dnp.sum(dnp.sin(x) * 2.5) * 3.0  # noqa: E731

    def run():
        res = [F.hvp(h, x, v)[1].numpy() for h in (f, g)]
        xt = da.tensor(x, requires_grad=True)
        with da.dual_level():
            xd = da.make_dual(xt, da.tensor(v))
            (gd,) = da.grad(g(xd) + f(xd), xd)
            p, t = da.unpack_dual(gd)
        return res + [p.numpy(), t.numpy()]

    made = []
    one = FE._times_one_value
    monkeypatch.setattr(FE, "_times_one_value", lambda g, k: made.append(1) or one(g, k))
    got = run()
    assert made  # (the broadcast way ran)
    monkeypatch.setattr(FE, "_times_one_value", lambda g, k: g * k)
    for a, b in zip(got, run(), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


_FORMULAS = sorted(n for n, p in E.PRIMS.items() if p.hot is not None)


@pytest.mark.fastpath("hot", "tangents")  # (tangents are untracked only with the fast layer)
@pytest.mark.parametrize("n", [3, 1 << 14])
@pytest.mark.parametrize("name", _FORMULAS)
def test_hot_path_of_duals_that_require_grad_equals_the_general_way(name, n, monkeypatch):
    # while tangents are untracked (hvp), the hot path and its entry points take an unmade
    # dual that requires grad and record its primal: what apply's general way does
    from dualad.core import dispatch as D

    prim = E.PRIMS[name]
    rng = np.random.default_rng(8)
    x0 = 0.2 + 0.6 * rng.random(n)
    t0, c0 = rng.standard_normal(n), 0.2 + 0.6 * rng.random(n)

    def run(hot, kind, grad):
        with da.enable_grad(), da.dual_level() as lv, untracked_tangents(), \
                np.errstate(all="ignore"), monkeypatch.context() as m:
            leaf = da.tensor(x0, requires_grad=True)
            a = da.make_dual(leaf, da.tensor(t0))[::1]  # (unmade, requires grad)
            others = {"float": 0.7, "plain": da.tensor(c0), "dual": FE._unmade(lv, c0, t0[::-1]),
                      "self": a}
            args = (a,) if prim.nin == 1 else (a, others[kind])
            if not hot:
                m.setattr(prim, "hot", None)
            with da.set_grad_enabled(grad):
                if hot == "hot":
                    out = prim.hot(prim, args)
                    assert out is not None
                elif hot in ("op", "call"):
                    out = FE.variant(prim, hot)(*args)
                elif hot == "rop":
                    out = FE.variant(prim, hot)(*args[::-1])
                else:
                    out = D.apply(prim, *args)
            m.undo()  # (the backward pass below calls formula primitives)
            arrays = [out._data, out._stored_tangent] if out._level else [out._data]
            if not out.requires_grad:
                return arrays, None
            (g,) = da.grad(da.unpack_dual(out).primal.sum(), leaf)
            p, t = da.unpack_dual(g)
            return arrays, [p._data, None if t is None else t._data]

    kinds = ["x"] if prim.nin == 1 else ["float", "plain", "dual", "self"]
    heads = ["hot", "call"] + (["op", "rop"] if prim.nin == 2 else [])
    for kind in kinds:
        for grad in (True, False):
            want = run(None, kind, grad)
            assert (want[1] is None) != grad
            for head in heads:
                got = run(head, kind, grad)
                for g, w in zip(got[0], want[0], strict=True):
                    assert g.dtype == w.dtype
                    np.testing.assert_array_equal(g, w, err_msg=f"{kind} {head}")
                for g, w in zip(got[1] or [], want[1] or [], strict=True):
                    np.testing.assert_array_equal(g, w, err_msg=f"{kind} {head}")


@pytest.mark.fastpath("hot")
def test_hot_path_declines_a_dual_whose_tangent_is_recorded():
    mul, sin = E.PRIMS["multiply"], E.PRIMS["sin"]
    with da.enable_grad(), da.dual_level():
        with untracked_tangents():
            x = da.make_dual(da.tensor(np.ones(3), requires_grad=True), da.tensor(np.ones(3)))
            a = x[1:]  # (unmade, requires grad)
            assert a.requires_grad and a._stored_primal is None
            assert sin.hot(sin, (a,)) is not None and mul.hot(mul, (2.0, a)) is not None
        assert sin.hot(sin, (a,)) is None and mul.hot(mul, (a, 2.0)) is None
        assert mul.hot(mul, (2.0, a)) is None


@pytest.mark.fastpath("transpose", "engine", "tangents")
def test_products_whose_primal_nothing_reads_leave_it_unwritten(monkeypatch):
    # Rosenbrock's two squares of x[:-1] send their cotangents only on to x (through a
    # slice and 1 - x), of which hvp wants the tangent: their products' primals are
    # stand-ins, not computed; everything else is computed as before
    from dualad.fast import transpose

    made = []
    unread = transpose._unread
    monkeypatch.setattr(transpose, "_unread", lambda k: made.append(k.shape) or unread(k))
    rng = np.random.default_rng(8)
    n = 1 << 15
    x, v = 1 + 0.1 * rng.standard_normal(n), rng.standard_normal(n)
    f = _CASES["rosenbrock"]
    _, hv = F.hvp(f, x, v)
    assert made == [(n - 1,), (n - 1,)]
    np.testing.assert_array_equal(hv.numpy(), _general(f, [x], [v])[0])
    del made[:]
    _, hv = F.hvp(_CASES["saved constant"], x, v)  # (x * c saved c: its cotangent's primal
    assert made == []  # is read, so the square's product is computed)
    del _SEEN[:]
    _general(_CASES["hooked"], [x], [v])
    F.hvp(_CASES["hooked"], x, v)  # (a hook sees the primal: it is computed)
    assert made == [] and len(_SEEN) == 2
    np.testing.assert_array_equal(_SEEN[0], _SEEN[1])


@pytest.mark.parametrize("n", [1, 3, 1 << 15])
def test_nodes_recorded_from_duals_keep_no_lane(n):
    # the hot path records a dual's primal with the plain recorders; a lane there would
    # drop the saved duals' tangents from a plain cotangent (the loss's seed)
    rng = np.random.default_rng(9)
    x, v = rng.uniform(-1, 1, n), rng.standard_normal(n)

    def f(t):
        return dnp.sum(dnp.exp(t) * 2.0 + dnp.tanh(t) * t + t * t)

    with da.enable_grad(), da.dual_level():
        d = da.make_dual(da.tensor(x, requires_grad=True), da.tensor(v))
        with untracked_tangents():
            y = f(d)
        seen, stack = set(), [y.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            assert getattr(node, "lane", None) is None, node.name()
            stack += [e[0] for e in node.edges if e is not None]
        assert len(seen) >= 8
    sech2 = 1 / np.cosh(x) ** 2
    want = v * (2 * np.exp(x) + 2 * sech2 * (1 - x * np.tanh(x)) + 2)
    np.testing.assert_allclose(F.hvp(f, x, v)[1].numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.fastpath("transpose", "engine", "tangents")
def test_a_cotangent_of_ones_held_as_one_value_multiplies_as_the_identity(monkeypatch):
    # sum's seed (1 everywhere, every stride 0) times a fresh coefficient is that
    # coefficient: what the products give, bit for bit
    from dualad.fast import transpose

    ones = np.broadcast_to(np.ones(()), (5, 4))
    assert transpose._ones(ones) and transpose._ones(np.broadcast_to(np.float32(1), (5, 1)))
    assert not transpose._ones(np.broadcast_to(np.float64(2.0), (5,)))
    assert not transpose._ones(np.ones(5))  # (written out: the product is the rule's)
    assert not transpose._ones(np.broadcast_to(np.complex128(1), (5,)))  # (1 * inf j)
    rng = np.random.default_rng(10)
    n = 1 << 15
    x, v = 1 + 0.1 * rng.standard_normal(n), rng.standard_normal(n)
    fs = [_CASES["rosenbrock"], lambda t: dnp.sum(dnp.sin(t) * t + dnp.cos(t)),
          lambda t: dnp.sum(t ** 2) + dnp.sum(dnp.exp(t[::2]))]
    real, seen = transpose._ones, []
    for f in fs:
        del seen[:]
        monkeypatch.setattr(transpose, "_ones", lambda c: seen.append(real(c)) or seen[-1])
        got = F.hvp(f, x, v)[1].numpy()
        assert any(seen)  # (a cotangent of ones was met)
        monkeypatch.setattr(transpose, "_ones", lambda c: False)
        np.testing.assert_array_equal(got, F.hvp(f, x, v)[1].numpy())


@pytest.mark.fastpath("hot", "fast", "tangents")
@pytest.mark.parametrize("name", ["exp", "tanh", "sqrt"])
def test_an_unmade_dual_whose_output_is_saved_stays_unmade(name):
    # saving an unmade dual output keeps an alias of its arrays: the output itself stays unmade
    # (the next op takes the hot path), its version is still checked, and the HVP is the
    # general way's
    prim = getattr(dnp, name)
    x, v = np.array([0.3, 0.5]), np.array([1.0, 2.0])
    with da.enable_grad(), da.dual_level():
        d = da.make_dual(da.tensor(x, requires_grad=True), da.tensor(v))
        with untracked_tangents():
            y = prim(d * 1.0)
            assert y._stored_primal is None and y._stored_tangent.__class__ is np.ndarray
            z = y * 2.0
            assert z._stored_primal is None and z.grad_fn.name() == "MultiplyBackward0"
            with da.no_grad():
                y[0] = 1.0  # (after exp saved it)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            da.grad(dnp.sum(z), d)
    f = lambda t: dnp.sum(prim(t * 1.0) * t)  # noqa: E731
    np.testing.assert_array_equal(_tangents(f, [x], [v])[0], _general(f, [x], [v])[0])
    np.testing.assert_array_equal(F.hvp(f, x, v)[1].numpy(), _general(f, [x], [v])[0])
