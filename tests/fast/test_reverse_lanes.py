"""The engine's straight lane (``fast.recorders.LaneNode.lane``) against its general path.

A node the elementwise hot path records with only plain values keeps, at record time,
the arguments of its array transpose; the engine then calls that transpose directly.
These tests check that this gives what ``Node.vjp`` gives, bit for bit, and that it
checks versions and releases as the general path does.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dualad as da
import dualad.numpy as dnp
from dualad.reverse.graph import Node
from dualad.rules import elementwise as E

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (values out of domain)


def _nodes(t):
    """Every Node (not AccumulateGrad) reachable from ``t``."""
    seen, stack = {}, [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen or not isinstance(n, Node):
            continue
        seen[id(n)] = n
        stack += [e[0] for e in n.edges if e is not None]
    return list(seen.values())


def _no_lane(n):
    """Send node ``n`` the general way (``Node.vjp``): its saved values, which a lane node
    keeps in its lane, made a dict first (``Node._saved_values``)."""
    n._saved_values()
    if _lane(n) is not None:  # (a LaneNode's)
        n.lane = None


def _lane(n):
    """Node ``n``'s straight lane; None for a node without one (a general ``Node``)."""
    return getattr(n, "lane", None)


def _graphs(shape=(3,)):
    """(output, inputs) pairs over the formula primitives, operand kinds and dtypes."""
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32, np.complex128):
        x = da.tensor((rng.uniform(0.2, 0.8, shape) + (0.1j if dtype is np.complex128 else 0))
                      .astype(dtype), requires_grad=True)
        w = da.tensor(rng.uniform(0.2, 0.8, shape).astype(dtype), requires_grad=True)
        c = da.tensor(rng.uniform(0.2, 0.8, shape))  # no grad
        for prim in E.PRIMS.values():
            if getattr(prim, "arity", None) == 1 and prim.transposed is not None:
                try:
                    yield prim(dnp.sin(x)), (x,)
                except (TypeError, ValueError):  # (not defined on this dtype)
                    continue
            elif getattr(prim, "arity", None) == 2 and prim.transposed is not None:
                h = dnp.sin(x)
                for args in ((h, w), (h, h), (h, 1.5), (2, h), (h, c), (c, w)):
                    try:
                        yield prim(*args), (x, w)
                    except (TypeError, ValueError):
                        continue


def _grads(y, ins):
    seed = da.tensor(np.linspace(0.5, 1.5, y.size).reshape(y.shape).astype(y.dtype))
    return da.grad(y, ins, seed, allow_unused=True, retain_graph=True)


@pytest.mark.fastpath("hot", "transpose")
def test_the_lane_keeps_what_plain_arrays_gives():
    from dualad.fast.transpose import plain_arrays

    count = steps = 0
    for y, _ in _graphs():
        for n in _nodes(y):
            if _lane(n) is None:
                continue
            step, p0, p1, out, _, od, e = _lane(n)
            assert od is n.out_avals[0][1]
            if step is None:  # the array transpose's arguments
                arrays, every = p0, e
                assert p1 is None
                assert tuple(every) == tuple(e is not None for e in n.edges)
            else:  # one input's step (f(x, x): both): of the output's aval, a float one
                arrays = (p0, p1)[:len(n.edges)]
                have = [k for k, edge in enumerate(n.edges) if edge is not None]
                if len(have) == 2:
                    assert step is n.prim.pair and n.edges[0] == n.edges[1] == e, n.name()
                    assert p0 is p1 or p0 is None or p1 is None, n.name()  # (unread: None)
                else:
                    assert len(have) == 1 and n.edges[have[0]] is e, n.name()
                    assert step is n.prim.steps[have[0]]
                assert n.avals[have[0]] == n.out_avals[0] and od.kind == "f", n.name()
                steps += 1
            want = plain_arrays(n)
            assert want is not None
            assert len(arrays) == len(want[0]) and out is want[1], n.name()
            for a, b in zip(arrays, want[0], strict=True):
                assert a is b or (a == b and type(a) is type(b)), n.name()
            count += 1
    assert count > 150 and steps > 50


@pytest.mark.fastpath("hot", "transpose")
@pytest.mark.parametrize("shape", [(3,), (1,), (), (1, 1)])
def test_the_lane_gives_the_general_paths_gradients(shape):
    # bit for bit on arrays; one element: the steps run on NumPy scalars (scalar mode),
    # within a few ulps (``_ULPS``, below)
    lanes = 0
    for y, ins in _graphs(shape):
        if not y.requires_grad or y.dtype.kind not in "fc":
            continue
        got = _grads(y, ins)
        nodes = _nodes(y)
        lanes += sum(_lane(n) is not None for n in nodes)
        for n in nodes:
            _no_lane(n)  # the general path: Node.vjp
        want = _grads(y, ins)
        for a, b in zip(got, want, strict=True):
            assert (a is None) == (b is None), y.grad_fn.name()
            if a is not None:
                assert a.dtype == b.dtype and a.shape == b.shape == shape
                if a.size == 1:
                    _assert_close_ulps(y.grad_fn.name(), a.numpy(), b.numpy())
                else:
                    np.testing.assert_array_equal(a.numpy(), b.numpy(),
                                                  err_msg=y.grad_fn.name())
    assert lanes > 150


@pytest.mark.fastpath("hot", "transpose", "engine")
def test_a_chain_through_the_lane_matches_the_general_path():
    ops = [dnp.sin, dnp.cos, dnp.tanh, lambda t: -t, dnp.exp, lambda t: t * 1.0001,
           lambda t: t + 0.5, lambda t: t * t]
    x = da.tensor([0.3, 0.1], requires_grad=True)
    y = x
    for i in range(40):
        y = ops[i % len(ops)](y)
    nodes = _nodes(y)
    assert all(_lane(n) is not None for n in nodes)
    (got,) = da.grad(y.sum(), x, retain_graph=True)
    for n in nodes:
        _no_lane(n)
    (want,) = da.grad(y.sum(), x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _chain(x, n=24):
    ops = [dnp.sin, dnp.cos, dnp.tanh, lambda t: -t, dnp.exp, lambda t: t * 1.0001,
           lambda t: 0.5 + t, lambda t: 2 - t, lambda t: t / 3, dnp.sqrt, lambda t: t ** 3]
    y = x
    for i in range(n):
        y = ops[i % len(ops)](y)
    return y


@pytest.mark.fastpath("hot", "transpose")
@pytest.mark.parametrize("case", ["0-d", "float32", "seed float32", "seed int", "to float64"])
def test_steps_give_the_general_paths_gradients(case):
    # the steps (a node's one input, of its output's float aval): the cotangent's dtype is
    # checked on entering the lane, each step keeps it, and a 0-d product is made an array
    dtype = np.float32 if case == "float32" else np.float64
    x = da.tensor(np.array(0.3, dtype) if case == "0-d" else np.array([0.3, 0.7], dtype),
                  requires_grad=True)
    y = _chain(x)
    if case == "to float64":
        y = _chain(dnp.sin(x.astype(np.float32)).astype(np.float64), 8)
    seed = np.ones(y.shape, {"seed float32": np.float32, "seed int": np.int64}.get(case, y.dtype))
    nodes = _nodes(y)
    assert sum(_lane(n) is not None and _lane(n)[0] is not None for n in nodes) >= 8
    (got,) = da.grad(y, x, da.tensor(seed), retain_graph=True)
    for n in nodes:
        _no_lane(n)
    (want,) = da.grad(y, x, da.tensor(seed))
    assert got.dtype == want.dtype == x.dtype and got.shape == x.shape
    if case == "0-d":  # scalar mode: within a few ulps, and once the two ways differ by
        # one, each step after may round the other way (an ulp more at most)
        _assert_close_ulps(case, got.numpy(), want.numpy(), ulps=_ULPS + len(nodes))
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


_STEPPED = sorted(n for n, p in E.PRIMS.items() if getattr(p, "steps", ()))


def _step_both_ways(name, which, x, s, ct, dtype, shape):
    """A step's result on one-element arrays and on their elements (scalar mode)."""
    prim = E.PRIMS[name]
    arr = np.full(shape, x, dtype)
    od = np.dtype(dtype)
    if prim.nin == 1 or which == "pair":
        step = prim.steps[0] if prim.nin == 1 else prim.pair
        p0 = p1 = arr
        args = (arr,) * prim.nin
    else:
        step = prim.steps[which]
        p0, p1 = (arr, s) if which == 0 else (s, arr)
        args = (p0, p1)
    if step is None:
        return None, None, None
    with np.errstate(all="ignore"):
        y = np.asarray(prim.ufunc(*args))
        c = np.full(shape, ct, dtype)
        ix = 0 if len(shape) == 1 else (0,) * len(shape)  # (as the engine indexes)
        want = step(c, p0, p1, y, od, None)
        # the size of the terms a pair's sum is made of (a sum may cancel: a few ulps of
        # its terms can be many of the sum)
        terms = None if want is None else np.abs(np.asarray(want, np.float64))
        if which == "pair" and want is not None:
            terms = sum(np.abs(np.asarray(t(c, p0, p1, y, od, None), np.float64))
                        for t in prim.steps)
        return step(c[ix], p0, p1, y, od, ix), want, terms


# One-element cotangents run the steps on NumPy scalars (scalar mode). A ufunc computes
# the same on a scalar as on an array (the same loop), but ``**`` on NumPy scalars is
# NumPy's scalar arithmetic, which calls the C library's pow, while arrays take NumPy's
# own loop: SIMD code on AVX-512 CPUs (SVML), within an ulp of the C library's, not bit
# for bit (float_power's coefficient on float32: 0.6390096 vs 0.63900965). So scalar
# mode is held to a few ulps of the array path (of the terms' size), which holds on any
# CPU; +, -, *, / and ufuncs, correctly rounded or the same loop, agree exactly.
_ULPS = 4


def _assert_close_ulps(name, got, want, terms=None, ulps=_ULPS):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, name
    if want.dtype.kind == "c":
        for part in (np.real, np.imag):
            _assert_close_ulps(name, part(got), part(want), None, ulps)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(w)
    assert (np.isnan(g) == nan).all(), (name, got, want)  # (a NaN's sign bit may differ)
    scale = np.abs(w) if terms is None else np.maximum(np.abs(w), terms)
    apart = np.abs(_ordinal(got) - _ordinal(want))  # (the largest finite and inf: one)
    near = (g == w) | (apart <= ulps) | (np.abs(g - w) <= ulps * np.spacing(
        scale.astype(want.dtype)).astype(np.float64))
    assert (near | nan).all(), (name, got, want)


def _ordinal(a):
    """Each float's place in the order of the floats of its dtype (adjacent: 1 apart)."""
    i = np.ascontiguousarray(a).view(f"i{a.itemsize}").astype(np.int64)
    mag = i & ((1 << (8 * a.itemsize - 1)) - 1)
    return np.where(i < 0, -mag, mag)


def _assert_same(name, got, want, dtype, shape, terms):
    assert (got is None) == (want is None), name
    if want is not None:
        want = np.asarray(want)
        assert got.__class__ is np.dtype(dtype).type, name
        assert want.dtype == dtype and want.shape == shape, name
        _assert_close_ulps(name, np.asarray(got), want.reshape(()), terms.reshape(()))


# scalar mode (the one-element arrays' element, NumPy scalar arithmetic) is the same
# arithmetic in the same dtype as the arrays' ufunc loops, within a few ulps (``_ULPS``):
# every step, on a grid of values and on random ones
_GRID = [0.0, -0.0, 0.3, -0.7, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 1e-310, 1e300]


@pytest.mark.fastpath("hot", "transpose")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_step_on_scalars_is_the_step_on_arrays_within_ulps(dtype):
    checked = 0
    for name in _STEPPED:
        for which in (0, 1, "pair"):
            for x in _GRID:
                for s in (0.5, -2.0, 3):
                    got, want, terms = _step_both_ways(name, which, x, s, 0.7, dtype, (1,))
                    _assert_same(name, got, want, dtype, (1,), terms)
                    checked += want is not None
    assert checked > 2000


@pytest.mark.fastpath()  # (the steps are the fast layer's, made whichever families are on)
@given(name=st.sampled_from(_STEPPED), which=st.sampled_from([0, 1, "pair"]),
       x=st.floats(allow_subnormal=True), s=st.floats(-3, 3), ct=st.floats(),
       dtype=st.sampled_from([np.float64, np.float32]),
       shape=st.sampled_from([(), (1,), (1, 1)]))
def test_a_step_on_scalars_is_the_step_on_arrays_at_random(name, which, x, s, ct, dtype,
                                                             shape):
    got, want, terms = _step_both_ways(name, which, x, s, ct, dtype, shape)
    _assert_same(name, got, want, dtype, shape, terms)


@pytest.mark.fastpath("hot", "transpose")
@pytest.mark.parametrize("size", [2, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_step_that_declines_sends_its_node_the_general_way(dtype, size):
    # maximum's coefficient and that of 1.5 ** x are not in the output's dtype for float32
    # (the step declines, first in the lane or after other steps); the general way casts
    x = da.tensor(np.array([0.3, 0.7][:size], dtype), requires_grad=True)
    for f in (lambda h: dnp.maximum(h, 0.5), lambda h: 1.5 ** h):
        y = dnp.exp(f(dnp.sin(x)))
        for first in (False, True):
            if first:
                y = f(dnp.sin(x))
            assert all(_lane(n)[0] is not None for n in _nodes(y))
            seed = da.tensor(np.ones(size, dtype))
            (got,) = da.grad(y, x, seed, retain_graph=True)
            for n in _nodes(y):
                _no_lane(n)
            (want,) = da.grad(y, x, seed)
            assert got.dtype == want.dtype == dtype and got.shape == (size,)
            np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.fastpath("hot", "transpose")
@pytest.mark.parametrize("size", [2, 1])
@pytest.mark.parametrize("which", ["input", "output"])
def test_the_lane_checks_versions(which, size):
    x = da.tensor([0.3, 0.4][:size], requires_grad=True)
    h = dnp.sin(x)
    y = dnp.sin(h) if which == "input" else dnp.exp(h)
    assert _lane(y.grad_fn) is not None
    with da.no_grad():
        if which == "input":
            h[0] = 1.0  # (in place, after sin saved it)
        else:
            y[0] = 1.0  # (exp saved its output)
    z = dnp.negative(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward(da.tensor([1.0, 1.0][:size]))  # (a seed, not a sum: the cotangent stays
        # bare)


def test_a_value_changed_before_it_was_saved_takes_no_lane():
    x = da.tensor([0.3, 0.4], requires_grad=True)
    h = dnp.sin(x)
    with da.no_grad():
        h[0] = 1.0  # version 1, before the next op saves it
    y = dnp.sin(h)
    assert _lane(y.grad_fn) is None and y.grad_fn.saved[0].__class__.__name__ == "SavedValue"
    y.backward(da.tensor([1.0, 1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), np.cos(h._data) * np.cos(x._data))


@pytest.mark.fastpath("hot", "transpose")
def test_the_lane_is_released_with_the_saved_values():
    x = da.tensor([0.3, 0.4], requires_grad=True)
    y = dnp.exp(dnp.sin(x))
    node = y.grad_fn
    seed = da.tensor([1.0, 1.0])
    y.backward(seed)
    assert _lane(node) is None and node.saved is None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward(seed)
    z = dnp.exp(dnp.sin(x))
    z.backward(seed, retain_graph=True)
    assert _lane(z.grad_fn) is not None
    z.backward(seed)
    np.testing.assert_array_equal(x.grad.numpy(), (y._data * np.cos(x._data)) * 3)


@pytest.mark.parametrize("size", [3, 1 << 14])
def test_f_of_x_and_x_sums_both_cotangents(size):
    # the engine sums the two cotangents of h * h itself in a chain (engine._pair) and
    # through _add_to otherwise; both are r0 + r1, bit for bit
    x = da.tensor(np.linspace(0.1, 0.9, size), requires_grad=True)
    h = dnp.sin(x)
    seed = da.tensor(np.linspace(0.3, 1.7, size))
    (got,) = da.grad(h * h, h, seed)
    r = seed._data * h._data
    np.testing.assert_array_equal(got.numpy(), r + r)
    (gx,) = da.grad(dnp.exp(h * h), x, seed)  # (then on through sin)
    c = seed._data * np.exp(h._data * h._data)
    np.testing.assert_array_equal(gx.numpy(), (c * h._data + c * h._data) * np.cos(x._data))


def _leaves(node):
    """The AccumulateGrad nodes reachable from ``node``, by walking the graph."""
    seen, stack, out = set(), [node], set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if not n.edges:
            out.add(n)
        stack += [e[0] for e in n.edges if e is not None]
    return out


def test_a_nodes_one_leaf_is_the_one_its_paths_reach():
    # Node.leaf lets grad() skip its pruning pass; it must name the one leaf reached
    x = da.tensor([0.3, 0.4], requires_grad=True)
    w = da.tensor([0.5, 0.6], requires_grad=True)
    c = da.tensor([1.0, 2.0])
    h = dnp.sin(x)
    made = [h, h * h, h * 2.0, 3.0 - h, h * c, c * h, h * w, w * h, dnp.exp(h * w), h + x,
            dnp.sum(h), dnp.sum(h * w), dnp.stack([h, h]), dnp.stack([h, w]), h[0] * x[1],
            dnp.where(c > 1, h, w), dnp.matmul(h, x), dnp.sin(dnp.sum(h * w) * h)]
    named = 0
    for t in made:
        for n in _nodes(t):
            reached = _leaves(n)
            if n.leaf is not None:
                assert reached == {n.leaf}, n.name()
                named += 1
            else:
                assert len(reached) > 1 or n.custom is not None, n.name()
    assert named > 10


def test_grad_prunes_what_leads_to_no_input_asked_for():
    x = da.tensor([0.3, 0.4], requires_grad=True)
    w = da.tensor([0.5, 0.6], requires_grad=True)
    u = dnp.exp(w)
    calls = []
    u.grad_fn.register_prehook(lambda g: calls.append("w side"))
    y = dnp.cos(dnp.sin(x) * u)
    seed = da.tensor([1.0, 2.0])  # (not a sum: the lane runs, with the pruned needs)
    (gx,) = da.grad(y, x, seed, retain_graph=True)
    assert calls == []  # (the node on w's side only did not run)
    for n in _nodes(y):
        _no_lane(n)
    (want,) = da.grad(y, x, seed)
    assert calls == []
    np.testing.assert_array_equal(gx.numpy(), want.numpy())
    np.testing.assert_allclose(gx.numpy(), -np.sin(np.sin(x._data) * u._data) * u._data
                               * np.cos(x._data) * [1, 2])


@pytest.mark.parametrize("size", [2, 1])
def test_a_chain_hands_over_at_hooks_captures_and_changed_values(size):
    # the lane runs a chain of nodes itself; a node with a hook, a captured input or a
    # changed saved value goes the general way, as does everything after it
    def chain(x):
        made = [x]
        for f in [dnp.sin, dnp.exp, lambda t: t * 1.5, dnp.tanh, dnp.cos, lambda t: -t]:
            made.append(f(made[-1]))
        return made

    x = da.tensor([0.3, 0.2][:size], requires_grad=True)
    seed = da.tensor([1.0, 0.5][:size])
    for case in ["hook", "capture", "prehook"]:
        made = chain(x)
        calls = []
        if case == "hook":
            made[3].register_hook(lambda g, calls=calls: calls.append(1) or g * 2)
        elif case == "prehook":
            made[2].grad_fn.register_prehook(lambda g, calls=calls: calls.append(1))
        ins = (x, made[2]) if case == "capture" else (x,)
        got = da.grad(made[-1], ins, seed, retain_graph=True)
        for n in _nodes(made[-1]):
            _no_lane(n)
        want = da.grad(made[-1], ins, seed)
        assert calls == ([1, 1] if case != "capture" else [])
        for a, b in zip(got, want, strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    made = chain(x)
    with da.no_grad():
        made[2][0] = 0.5  # (exp saved its output; the chain reaches it after four nodes)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        da.grad(made[-1], x, seed)


@pytest.mark.fastpath("hot", "transpose", "engine")
@pytest.mark.parametrize("shape", [(1,), (), (1, 1), (2,)])
def test_lanes_that_meet_others_hand_their_cotangents_over_as_arrays(shape):
    # branches: a lane that ends while other nodes are pending sends its cotangent to
    # _add_to (an array of the shape it came in, in scalar mode too), and f(x, x) and a
    # general node take arrays
    x = da.tensor(np.full(shape, 0.3), requires_grad=True)
    w = da.tensor(np.full(shape, 0.6, np.float32), requires_grad=True)
    made = [lambda h: dnp.exp(h) * 1.5 + dnp.cos(h), lambda h: dnp.tanh(h) * dnp.tanh(h) - h,
            lambda h: dnp.sin(h * dnp.exp(h)),
            lambda h: dnp.exp(-dnp.sin(w)) * 2 + dnp.sin(w * 1.5).astype(x.dtype)]
    for f in made:
        y = f(dnp.sin(x))
        assert sum(_lane(n) is not None and _lane(n)[0] is not None for n in _nodes(y)) >= 3
        seed = da.tensor(np.full(shape, 0.7))
        got = da.grad(y, (x, w), seed, allow_unused=True, retain_graph=True)
        for n in _nodes(y):
            _no_lane(n)
        want = da.grad(y, (x, w), seed, allow_unused=True, retain_graph=True)
        for a, b in zip(got, want, strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                assert a.shape == b.shape == shape and a.dtype == b.dtype
                np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_lane_computes_only_the_cotangents_asked_for():
    # w's cotangent, not asked for, would overflow: the lane must not compute it
    x = da.tensor([1e308], requires_grad=True)
    w = da.tensor([1.0], requires_grad=True)
    y = dnp.negative(dnp.multiply(x, 1.0) * w)
    with np.errstate(over="raise"):
        (gx,) = da.grad(y, x, da.tensor([10.0]))
    np.testing.assert_array_equal(gx.numpy(), [-10.0])


@pytest.mark.fastpath("engine")
def test_after_a_general_node_the_lane_takes_plain_tensor_cotangents(monkeypatch):
    # a loss's sum runs the general way and sends a Tensor on; the lane takes its array
    from dualad.fast import engine

    ran = []
    lane = engine._lane
    monkeypatch.setattr(engine, "_lane", lambda node, *a: ran.append(node) or lane(node, *a))
    for y, ins in _graphs():
        if y.dtype.kind != "f":
            continue
        loss = dnp.sum(y * 1.5)
        del ran[:]
        got = da.grad(loss, ins, allow_unused=True, retain_graph=True)
        assert ran, y.grad_fn.name()
        for n in _nodes(loss):
            _no_lane(n)
        want = da.grad(loss, ins, allow_unused=True, retain_graph=True)
        for a, b in zip(got, want, strict=True):
            assert (a is None) == (b is None)
            if a is not None:
                assert a.dtype == b.dtype and type(a) is type(b)
                np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=y.grad_fn.name())
    x = da.tensor([0.3, 0.4], requires_grad=True)
    dnp.sum(dnp.exp(dnp.sin(x))).backward()  # (and into .grad)
    np.testing.assert_array_equal(x.grad.numpy(), np.exp(np.sin(x._data)) * np.cos(x._data))
