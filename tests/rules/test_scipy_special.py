"""dualad.scipy.special: its formulas against SymPy's derivatives, values against SciPy."""

import sys

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")
scipy_special = pytest.importorskip("scipy.special")

import dualad as da  # noqa: E402
from dualad.scipy import special as S  # noqa: E402
from dualad.sympy import SCIPY_SPECIAL_FUNCTIONS  # noqa: E402

DOMAIN = {"gammaln": (0.3, 4.0), "digamma": (0.3, 4.0), "logit": (0.1, 0.9),
          "xlogy": ((-2.0, 2.0), (0.2, 3.0)), "xlog1py": ((-2.0, 2.0), (-0.8, 3.0)),
          "gamma": (0.3, 4.0), "betaln": ((0.3, 4.0), (0.3, 4.0)),
          "beta": ((0.3, 4.0), (0.3, 4.0)), "erfinv": (-0.9, 0.9), "erfcinv": (0.1, 1.9),
          "rgamma": (0.3, 4.0), "y0": (0.3, 4.0), "y1": (0.3, 4.0)}


def test_every_formula_has_a_sympy_counterpart():
    assert set(S.PRIMS) == set(SCIPY_SPECIAL_FUNCTIONS)


def _points(name, rng):
    dom = DOMAIN.get(name, (-2.0, 2.0))
    if S.PRIMS[name].nin == 2:
        return [rng.uniform(*dom[0], 4), rng.uniform(*dom[1], 4)]
    return [rng.uniform(*dom, 4)]


@pytest.mark.parametrize("name", sorted(S.PRIMS))
def test_rule_matches_sympy_to_second_order_in_both_modes(name):
    prim = S.PRIMS[name]
    syms = sympy.symbols("a b", real=True)[:prim.nin]
    f = SCIPY_SPECIAL_FUNCTIONS[name](*syms)
    rng = np.random.default_rng(len(name))
    args = _points(name, rng)
    mods = ["scipy", "numpy"]
    for i, s in enumerate(syms):
        d1 = sympy.lambdify(syms, sympy.diff(f, s), modules=mods)(*args)
        d2 = sympy.lambdify(syms, sympy.diff(f, s, 2), modules=mods)(*args)
        # forward: two nested levels
        with da.dual_level():
            xs = [da.tensor(a) for a in args]
            xs[i] = da.make_dual(xs[i], da.tensor(np.ones(4)))
            with da.dual_level():
                ys = list(xs)
                ys[i] = da.make_dual(xs[i], da.tensor(np.ones(4)))
                t1 = da.unpack_dual(prim(*ys)).tangent
            p1, t2 = da.unpack_dual(t1)
            fwd1 = p1.numpy()
            fwd2 = np.zeros(4) if t2 is None else t2.numpy()  # None: a zero derivative
        np.testing.assert_allclose(fwd1, d1, rtol=1e-10, err_msg=f"{name}: JVP")
        np.testing.assert_allclose(fwd2, d2, rtol=1e-9, err_msg=f"{name}: forward 2nd")
        # reverse: the transposed rule, then double backward
        xs = [da.tensor(a, requires_grad=True) for a in args]
        (g,) = da.grad(prim(*xs).sum(), [xs[i]], create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), d1, rtol=1e-10, err_msg=f"{name}: VJP")
        (h,) = da.grad(g.sum(), [xs[i]], allow_unused=True, materialize_grads=True)
        np.testing.assert_allclose(h.numpy(), d2, rtol=1e-9, err_msg=f"{name}: reverse 2nd")


@pytest.mark.parametrize("name", sorted(S.PRIMS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_dtypes_are_scipys(name, dtype):
    args = [a.astype(dtype) for a in _points(name, np.random.default_rng(1))]
    got = S.PRIMS[name](*[da.tensor(a) for a in args])
    want = getattr(scipy_special, name)(*args)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_missing_scipy_raises_import_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match=r"dualad\[scipy\]"):
        S.gammaln(da.tensor([1.5]))
