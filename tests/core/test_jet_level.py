"""The Taylor interpreter (``dualad.taylor.JetLevel``): the generic rules of linear and
multilinear primitives, the level's life cycle, ``make_jet``/``unpack_jet`` and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.core.dispatch import Primitive, apply, every
from dualad.rules import taylor as T
from dualad.taylor import (
    NoTaylorRuleError,
    enter_jet_level,
    exit_jet_level,
    jet_level,
    make_jet,
    unpack_jet,
)

RNG = np.random.default_rng(0)


def test_multilinear_rule_is_the_cauchy_product():
    # matmul of two quadratics is a quartic truncated at order 2 (jet K = 2)
    a = [RNG.standard_normal((2, 3)) for _ in range(3)]
    b = [RNG.standard_normal((3,)) for _ in range(3)]
    with jet_level():
        y = make_jet(da.tensor(a[0]), a[1:]) @ make_jet(da.tensor(b[0]), b[1:])
        y0, ys = unpack_jet(y)
    want = [a[0] @ b[0], a[0] @ b[1] + a[1] @ b[0], a[0] @ b[2] + a[1] @ b[1] + a[2] @ b[0]]
    for g, w in zip([y0, *ys], want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-13)


def test_einsum_of_three_jets():
    xs = [[RNG.standard_normal(3) for _ in range(3)] for _ in range(3)]
    with jet_level():
        js = [make_jet(da.tensor(x[0]), x[1:]) for x in xs]
        y0, ys = unpack_jet(dnp.einsum("i,i,i->", *js))
    P = np.polynomial.polynomial
    want = sum(P.polymul(P.polymul([c[i] for c in xs[0]], [c[i] for c in xs[1]]),
                         [c[i] for c in xs[2]]) for i in range(3))[:3]
    np.testing.assert_allclose([float(y0)] + [float(c) for c in ys], want, rtol=1e-8)


def test_linear_rule_acts_on_each_coefficient():
    x = [RNG.standard_normal((2, 3)) for _ in range(4)]
    with jet_level():
        j = make_jet(da.tensor(x[0]), x[1:])
        y0, ys = unpack_jet(dnp.cumsum(j.T[::-1], axis=0).reshape(-1))
    for got, c in zip([y0, *ys], x, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.cumsum(c.T[::-1], axis=0).reshape(-1))


def test_where_with_a_constant_branch():
    x = [np.array([1.0, -2.0, 3.0]), np.array([1.0, 1.0, 1.0])]
    with jet_level():
        j = make_jet(da.tensor(x[0]), x[1:])
        y0, (y1,) = unpack_jet(dnp.where(x[0] > 0, j, 0.0))
    np.testing.assert_array_equal(np.asarray(y1), [1.0, 0.0, 1.0])


@pytest.fixture
def scale_by_square():
    """``x * c**2``: linear in ``x`` only, and no Taylor rule of its own (taken off the list
    of every primitive afterwards, so no sweep meets it)."""
    prim = Primitive("scale_by_square", lambda x, c: x * c * c,
                     lambda p, t, out: None if t[0] is None else t[0] * p[1] * p[1],
                     reads=((1,), ()), linear=(0,))
    yield lambda x, c: apply(prim, x, c)
    every.remove(prim)


def test_a_nonlinear_argument_of_a_linear_primitive_must_be_constant(scale_by_square):
    with jet_level():
        # linear in x: a constant c with a jet x is the generic linear rule
        y0, (y1,) = unpack_jet(scale_by_square(make_jet(da.tensor([1.0, 2.0]), [[1.0, 0.5]]),
                                               np.array([3.0, 2.0])))
        np.testing.assert_allclose(np.asarray(y1), [9.0, 2.0])
        c = make_jet(da.tensor([3.0, 2.0]), [[1.0, 1.0]])
        with pytest.raises(NoTaylorRuleError, match="scale_by_square is linear in its arguments"):
            scale_by_square(np.array([1.0, 2.0]), c)


def test_nondiff_primitives_see_the_primal():
    with jet_level():
        j = make_jet(da.tensor([3.0, 1.0, 2.0]), [[1.0, 1.0, 1.0]])
        assert np.asarray(dnp.argmax(j)) == 0
        assert np.asarray(j > 1.5).tolist() == [True, False, True]


def test_formula_rule_against_the_direct_rule():
    # the rule from the derivative formula alone, for an entry that has a direct rule too
    from dualad.rules import elementwise as E

    x = [np.array([0.3, 0.7])] + [RNG.standard_normal(2) * 0.5 for _ in range(6)]
    for name in ("tanh", "arcsinh", "log1p"):
        got = T.formula_rule(E.PRIMS[name])(x)
        want = T.TAYLOR_RULES[name](x)
        np.testing.assert_allclose(np.array([np.asarray(g) for g in got]),
                                   np.array([np.asarray(w) for w in want]), rtol=1e-12)


def test_a_jet_after_its_level_exits_is_its_primal():
    with jet_level():
        j = make_jet(da.tensor(2.0), [1.0])
    y = j * 3.0
    assert float(y) == 6.0 and y._level == 0


def test_level_errors():
    with pytest.raises(RuntimeError, match="no jet level is live"):
        make_jet(da.tensor(1.0), [1.0])
    with da.dual_level():
        with pytest.raises(RuntimeError, match="no jet level is live"):
            make_jet(da.tensor(1.0), [1.0])
    lvl = enter_jet_level()
    d = da.forward_ad.enter_dual_level()
    with pytest.raises(RuntimeError, match="not a jet level"):
        exit_jet_level()
    da.forward_ad.exit_dual_level(level=d)
    exit_jet_level(level=lvl)


def test_dual_level_functions_refuse_a_jet_level():
    with da.dual_level() as d, jet_level() as j:
        x = da.make_dual(da.tensor(1.0), da.tensor(2.0))  # the innermost *dual* level
        assert x._level == d
        with pytest.raises(RuntimeError, match="not a dual level"):
            da.make_dual(da.tensor(1.0), da.tensor(2.0), level=j)
        with pytest.raises(RuntimeError, match="jet level of Taylor mode"):
            da.unpack_dual(make_jet(da.tensor(1.0), [1.0]), level=j)
        assert float(da.unpack_dual(x * 3.0).tangent) == 6.0
        with pytest.raises(RuntimeError, match="not a dual level"):
            da.forward_ad.exit_dual_level()


def test_make_jet_errors():
    with jet_level():
        with pytest.raises(ValueError, match="dtype int"):
            make_jet(da.tensor([1, 2]), [[1, 1]])
        with pytest.raises(ValueError, match="coefficient 1 has shape"):
            make_jet(da.tensor([1.0, 2.0]), [[1.0, 1.0, 1.0]])
        with pytest.raises(ValueError, match="make the primal complex"):
            make_jet(da.tensor([1.0, 2.0]), [[1j, 1.0]])
        with pytest.raises(TypeError, match="list"):
            make_jet(da.tensor([1.0, 2.0]), da.tensor([1.0, 1.0]))
        j = make_jet(da.tensor(1.0), [1.0])
        with pytest.raises(ValueError, match="already a jet"):
            make_jet(j, [1.0])
        with pytest.raises(ValueError, match="itself dual or a jet"):
            make_jet(da.tensor(1.0), [j])


def test_unpack_of_a_constant():
    with jet_level():
        p, cs = unpack_jet(da.tensor(1.0))
    assert cs is None and float(p) == 1.0


def test_register_refuses_a_second_rule_for_a_name():
    with pytest.raises(ValueError, match="registered already"):
        T.register({"exp": T.sin})
