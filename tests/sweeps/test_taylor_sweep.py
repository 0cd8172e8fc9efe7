"""Taylor mode over the op database: every differentiable entry at order 3 against nested dual
levels (a different mode as reference).

Each input moves along a random cubic ``x(t) = x_0 + u t + v t^2 + w t^3``; the jet of the
output (``dualad.functional.jet``, unscaled) must equal ``g^(k)(0) / k!`` for
``g(t) = f(x(t))``, its derivatives taken by three nested dual levels on the scalar ``t``.
Entries whose primitives have no Taylor rule yet (linear algebra and the non-elementwise
primitives whose rules are still to come) are listed in :data:`NO_RULE_YET`: they must raise
the clear error naming the primitive, so the list shrinks as rules land (a listed entry that
no longer raises fails the test: take it off the list). Keys: an entry's name, or
``name-sample`` where one sample alone needs the missing rule.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
from dualad.taylor import NoTaylorRuleError

from _support import opdb

ORDER = 3
DTYPES = ("float64", "complex128")  # (complex: along a real t, so non-holomorphic ones too)

# entry -> the primitive it meets without a Taylor rule (linear algebra, the reductions and
# products that are not linear, and the incomplete gamma/beta functions: rules to come)
NO_RULE_YET: dict[str, str] = {}

# entry-sample -> its tolerance where the reference itself loses digits: the characteristic
# polynomial of a non-normal matrix goes through its eigenvalues (conditioned by the
# eigenvectors' angles), so both modes agree to ~1e-9 relative to the largest coefficient
TOLERANCE = {"poly-matrix": 1e-8}




def _derivatives(op, s, coeffs):
    """g^(k)(0)/k!, k = 0..3, per output: from three nested levels on the scalar t."""
    out = []
    with da.dual_level() as l1:
        t1 = da.make_dual(da.tensor(0.0), da.tensor(1.0), level=l1)
        with da.dual_level() as l2:
            t2 = da.make_dual(t1, da.tensor(1.0), level=l2)
            with da.dual_level() as l3:
                t = da.make_dual(t2, da.tensor(1.0), level=l3)
                args = list(s.args)
                for i, cs in zip(s.diff, coeffs, strict=True):
                    x0 = np.asarray(s.args[i])
                    x = da.as_tensor(x0)
                    for k, c in enumerate(cs, 1):
                        x = x + da.as_tensor(c) * t ** k
                    args[i] = x
                outs = opdb.run(op, s, tuple(args))
                parts = []
                for o in outs:
                    p3, d3 = da.unpack_dual(o, level=l3)
                    parts.append((p3, d3))
            levels2 = []
            for p3, d3 in parts:
                p32, d32 = da.unpack_dual(p3, level=l2)
                dd = None if d3 is None else da.unpack_dual(d3, level=l2).tangent
                levels2.append((p32, d32, dd))
        for p32, d32, dd in levels2:
            g0, g1 = da.unpack_dual(p32, level=l1)
            g2 = None if d32 is None else da.unpack_dual(d32, level=l1).tangent
            g3 = None if dd is None else da.unpack_dual(dd, level=l1).tangent
            out.append([g0, g1, g2, g3])
    res = []
    for gs in out:
        z = np.zeros_like(opdb.to_np(gs[0]))
        res.append([z if g is None else opdb.to_np(g) / math.factorial(k)
                    for k, g in enumerate(gs)])
    return res


def _jet(op, s, coeffs):
    xs = [da.as_tensor(s.args[i]) for i in s.diff]

    def f(*ys):
        args = list(s.args)
        for i, y in zip(s.diff, ys, strict=True):
            args[i] = y
        return tuple(opdb.run(op, s, tuple(args)))

    primal, series = F.jet(f, tuple(xs), tuple([da.as_tensor(c) for c in cs] for cs in coeffs),
                           factorial_scaled=False)
    return [[opdb.to_np(p)] + [opdb.to_np(c) for c in cs]
            for p, cs in zip(primal, series, strict=True)]


def _cases():
    out = []
    for dtype in DTYPES:
        for op in opdb.OPS:
            if dtype not in op.dtypes:
                continue
            ss = [s for s in opdb.samples(op, dtype) if s.diff and not s.xfail]
            for s in ss[:2]:
                out.append(pytest.param(op, dtype, s, id=f"{op.name}-{dtype}-{s.desc}"))
    return out


@pytest.mark.parametrize("op, dtype, s", _cases())
def test_jet_order3_matches_nested_dual_levels(op, dtype, s):
    rng = opdb.rng_for(op, dtype, s, "taylor")

    def coefficient(x):  # (complex where the input is: a real one may be an argument's)
        c = rng.standard_normal(np.shape(x))
        return (c + 1j * rng.standard_normal(np.shape(x)) if np.iscomplexobj(x) else c) * 0.3

    coeffs = [[coefficient(s.args[i]) for _ in range(ORDER)] for i in s.diff]
    missing = NO_RULE_YET.get(f"{op.name}-{s.desc}", NO_RULE_YET.get(op.name))
    if missing is not None:
        with pytest.raises(NoTaylorRuleError, match=f"dualad: {missing} has no Taylor rule|"
                           f"dualad: {missing} is linear in"):
            _jet(op, s, coeffs)
        return
    got = _jet(op, s, coeffs)
    want = _derivatives(op, s, coeffs)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        tol = 2e-6 if g[0].dtype in (np.float32, np.complex64) else \
            TOLERANCE.get(f"{op.name}-{s.desc}", 1e-9)
        for k in range(ORDER + 1):
            np.testing.assert_allclose(g[k], w[k], rtol=tol, atol=tol / 10,
                                       err_msg=f"{op.name}: coefficient {k}")
