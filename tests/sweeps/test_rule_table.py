"""dualad's elementwise rule table against SymPy's derivatives (issue: symbolic cross-check).

For every differentiable elementwise primitive: the JVP (forward mode), the VJP
(reverse mode, i.e. the transposed JVP) and the second derivative (two nested
levels) against ``sympy.diff`` of the SymPy counterpart, at hypothesis-drawn
points of the domain; complex points too for the holomorphic entries.
"""

import functools

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import dualad as da  # noqa: E402
from dualad.rules import elementwise as E  # noqa: E402
from dualad.sympy import SYMPY_FUNCTIONS  # noqa: E402

from _support.symbolic import flat as _flat  # noqa: E402

# Primitives with no SymPy check, and why.
EXEMPT = {
    **{n: "no derivative: boolean/integer result" for n, p in E.PRIMS.items() if p.nondiff},
    "conj": "not holomorphic and linear: covered by the transposition identity tests",
    "real": "linear R-map: covered by the transposition identity tests",
    "imag": "linear R-map: covered by the transposition identity tests",
    "angle": "non-holomorphic: its R-linear rule is checked against atan2 below",
    "positive": "identity",
}

# Open intervals where each function is smooth (kinks and poles avoided).
DOMAIN = {
    "log": (0.1, 5), "log2": (0.1, 5), "log10": (0.1, 5), "log1p": (-0.9, 5), "sqrt": (0.1, 5),
    "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arctanh": (-0.9, 0.9), "arccosh": (1.1, 5),
    "reciprocal": (0.2, 5), "tan": (-1.2, 1.2), "cbrt": (0.1, 5), "sinc": (0.1, 3),
    "fabs": (0.1, 3), "abs": (0.1, 3), "sign": (0.1, 3), "floor": (0.1, 0.9),
    "ceil": (0.1, 0.9), "trunc": (0.1, 0.9), "rint": (0.1, 0.4),
}
BINARY_DOMAIN = {
    "power": ((0.2, 3), (-2, 2)), "float_power": ((0.2, 3), (-2, 2)),
    "divide": ((-3, 3), (0.3, 3)), "remainder": ((0.1, 0.9), (1.1, 2)),
    "fmod": ((0.1, 0.9), (1.1, 2)), "hypot": ((0.2, 3), (0.2, 3)),
    "copysign": ((0.2, 3), (0.2, 3)), "arctan2": ((0.2, 3), (0.2, 3)),
}
HOLOMORPHIC = {
    "exp", "expm1", "log", "log1p", "sqrt", "square", "reciprocal", "sin", "cos", "tan",
    "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arctanh", "negative",
    "add", "subtract", "multiply", "divide", "power", "exp2", "log2", "log10",
}

DIFFERENTIABLE = sorted(n for n in E.PRIMS if n not in EXEMPT)


def test_every_elementwise_primitive_has_a_sympy_counterpart_or_exemption():
    missing = [n for n in DIFFERENTIABLE if n not in SYMPY_FUNCTIONS]
    assert not missing, f"no SymPy counterpart listed for {missing}"
    assert len(DIFFERENTIABLE) >= 45


@functools.cache
def _symbolic(name, real=True):
    """(args, [df/darg_i], [d2f/darg_i^2]) as NumPy-evaluable functions."""
    nin = E.PRIMS[name].nin
    syms = sympy.symbols("a b c", real=real)[:nin]
    f = SYMPY_FUNCTIONS[name](*syms)
    d1 = [_flat(sympy.diff(f, s)) for s in syms]
    d2 = [_flat(sympy.diff(f, s, 2)) for s in syms]
    mods = [{"Heaviside": lambda x, h=0.5: np.heaviside(x, h),
             "DiracDelta": lambda x, k=0: 0.0 * x}, "numpy"]
    return (
        syms,
        [sympy.lambdify(syms, d, modules=mods) for d in d1],
        [sympy.lambdify(syms, d, modules=mods) for d in d2],
    )


def _point(draw, name):
    nin = E.PRIMS[name].nin
    if nin == 1:
        lo, hi = DOMAIN.get(name, (-2.0, 2.0))
        return [draw(st.floats(lo, hi))]
    if nin == 2:
        rng = BINARY_DOMAIN.get(name, ((-2.0, 2.0), (-2.0, 2.0)))
        a = draw(st.floats(*rng[0]))
        b = draw(st.floats(*rng[1]))
        if name in ("maximum", "minimum", "fmax", "fmin") and abs(a - b) < 1e-3:
            b = a + 0.5
        return [a, b]
    x = draw(st.floats(-2.0, 2.0))
    lo, hi = -1.0, 1.0
    if min(abs(x - lo), abs(x - hi)) < 1e-3:
        x += 0.01
    return [x, lo, hi]


def _forward(prim, args, i, order):
    """d^order f / d arg_i^order by nested dual levels."""

    def f(xi):
        full = list(args)
        full[i] = xi
        return prim(*full)

    g = f
    for _ in range(order):
        g = (lambda h: lambda x: _tangent(h, x))(g)
    return g(da.tensor(args[i]))


def _tangent(h, x):
    with da.dual_level():
        t = da.unpack_dual(h(da.make_dual(x, da.ones_like(x)))).tangent
    return da.zeros_like(x) if t is None else t


def _reverse(prim, args, i):
    ts = [da.tensor(a, requires_grad=(k == i)) for k, a in enumerate(args)]
    out = prim(*ts)
    (g,) = da.grad(out, ts[i], allow_unused=True, materialize_grads=True)
    return g


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_rule_matches_sympy_real(name, data):
    prim = E.PRIMS[name]
    args = _point(data.draw, name)
    _, d1, d2 = _symbolic(name)
    for i in range(prim.nin):
        want1 = complex(d1[i](*args))
        want2 = complex(d2[i](*args))
        got_f = _forward(prim, args, i, 1).item()
        got_r = _reverse(prim, args, i).item()
        got_2 = _forward(prim, args, i, 2).item()
        for got, want, what in ((got_f, want1, "JVP"), (got_r, want1.conjugate(), "VJP"),
                                (got_2, want2, "2nd")):
            assert got == pytest.approx(want, rel=1e-8, abs=1e-9), (name, i, what, args)


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
@settings(max_examples=6, deadline=None)
@given(re=st.floats(0.2, 0.8), im=st.floats(-0.8, 0.8))
def test_holomorphic_rule_matches_sympy_complex(name, re, im):
    prim = E.PRIMS[name]
    args = [complex(re, im)] + [complex(0.5, 0.3)] * (prim.nin - 1)
    _, d1, _ = _symbolic(name, real=False)
    want = complex(d1[0](*args))
    # forward: the R-linear differential in direction 1 is f'(z)
    assert _forward(prim, args, 0, 1).item() == pytest.approx(want, rel=1e-8, abs=1e-9)
    # reverse: grad of Re(f) is conj(f'(z)) (the conjugate Wirtinger convention)
    z = da.tensor(args[0], requires_grad=True)
    rest = [da.tensor(a) for a in args[1:]]
    (g,) = da.grad(prim(z, *rest).real, z)
    assert g.item() == pytest.approx(np.conj(want), rel=1e-8, abs=1e-9)


@settings(max_examples=10, deadline=None)
@given(re=st.floats(-2, 2), im=st.floats(-2, 2))
def test_nonholomorphic_abs_and_angle_against_real_partials(re, im):
    if abs(complex(re, im)) < 0.1:
        re += 0.5
    x, y = sympy.symbols("x y", real=True)
    for fn, expr in ((E.PRIMS["abs"], sympy.sqrt(x**2 + y**2)), (E.PRIMS["angle"],
                                                                  sympy.atan2(y, x))):
        dx = float(sympy.diff(expr, x).subs({x: re, y: im}))
        dy = float(sympy.diff(expr, y).subs({x: re, y: im}))
        z = da.tensor(complex(re, im), requires_grad=True)
        (g,) = da.grad(fn(z), z)
        assert g.item() == pytest.approx(complex(dx, dy), rel=1e-9, abs=1e-12)
        for direction, want in ((1.0, dx), (1j, dy)):
            with da.dual_level():
                t = da.unpack_dual(fn(da.make_dual(da.tensor(complex(re, im)),
                                                   da.tensor(complex(direction))))).tangent
            assert t.item() == pytest.approx(want, rel=1e-9, abs=1e-12)
