"""Forward mode of every op-database entry against finite differences (tests/_support/opdb.py).

Also: the primal under a dual level equals the plain call and NumPy's own value and
dtype; float32/complex64 agree with float64/complex128; every public function of
dualad.numpy has an entry; non-differentiable functions return plain tensors.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

from _support import opdb


@pytest.mark.parametrize(("op", "dtype", "sample"), opdb.cases("forward"))
def test_forward_vs_finite_differences(op, dtype, sample):
    opdb.check_forward(op, dtype, sample)


def _public(ns, prefix=""):
    """Public names of a namespace (its __all__), walking dnp.linalg and dnp.fft."""
    names = {prefix + n for n in getattr(ns, "__all__", None) or vars(ns)
             if not n.startswith("_") and (prefix or n not in opdb.SUBMODULES)}
    for sub in opdb.SUBMODULES:
        if not prefix and hasattr(ns, sub):
            names |= _public(getattr(ns, sub), f"{sub}.")
    return names


def test_every_public_function_has_an_entry():
    """A public function of dualad.numpy with no op-database entry fails this test."""
    public = _public(dnp)
    known = opdb.covered_names() | set(opdb.NONDIFF) | set(opdb.EXEMPT)
    missing = sorted(public - known)
    assert not missing, (
        f"dualad.numpy functions with no op-database entry: {missing}; add an OpInfo to "
        "tests/_support/opdb.py (or to NONDIFF / EXEMPT with a reason)"
    )
    stale = sorted(n for n in opdb.covered_names() | set(opdb.NONDIFF)
                   if not n.startswith(("Tensor.", "scipy.")) and "(" not in n
                   and n not in public)
    assert not stale, f"op-database entries for names dualad.numpy does not have: {stale}"


def test_case_count():
    """The number of (function, dtype, mode) cases the database drives (shown with -s)."""
    modes = {"forward": opdb.cases("forward"), "reverse": opdb.cases("reverse"),
             "transpose": opdb.cases("transpose"),
             "batched-forward": opdb.cases("batched-forward"),
             "batched-reverse": opdb.cases("batched-reverse"),
             "double-backward": opdb.cases("double-backward", opdb.GRADGRAD_DTYPES,
                                           first=opdb.GRADGRAD_FIRST)}
    triples = {(p.values[0].name, p.values[1], m) for m, ps in modes.items() for p in ps}
    samples = sum(len(ps) for ps in modes.values())
    fns = {p.values[0].name for p in modes["forward"]}
    print(f"\nop database: {len(opdb.OPS)} entries, {len(fns)} functions, "
          f"{len(triples)} (function, dtype, mode) cases, {samples} sample checks")
    assert len(opdb.OPS) >= 150
    assert len(triples) >= 2500


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("name", sorted(opdb.NONDIFF))
def test_nondifferentiable_results_are_plain(name, dtype):
    """argmax, comparisons, isnan, floor_divide, ...: no tangent and no grad_fn."""
    if dtype == "complex128" and name in ("less", "less_equal", "greater", "greater_equal",
                                          "floor_divide", "signbit", "argmax", "argmin",
                                          "argsort", "Tensor.__lt__", "Tensor.__ge__",
                                          "Tensor.__floordiv__"):
        pytest.skip("NumPy does not order complex numbers here")
    rng = np.random.default_rng(0)
    xa = rng.standard_normal((2, 3)).astype(dtype)
    ya = rng.standard_normal((2, 3)).astype(dtype)
    xa[0, 0] = ya[0, 0]
    fn = opdb.NONDIFF[name]
    ref = fn(np, xa, ya)
    x = da.tensor(xa, requires_grad=True)
    y = da.tensor(ya, requires_grad=True)
    outs = opdb.flat(fn(dnp, x, y))
    with da.dual_level():
        xd = da.make_dual(x, da.tensor(np.ones_like(xa)))
        yd = da.make_dual(y, da.tensor(np.ones_like(ya)))
        dual_outs = opdb.flat(fn(dnp, xd, yd))
        tangents = [da.unpack_dual(o).tangent if isinstance(o, da.Tensor) else None
                    for o in dual_outs]
    for o, r in zip(outs, opdb.flat(ref), strict=True):
        if isinstance(o, da.Tensor):
            assert o.grad_fn is None and not o.requires_grad
            assert o.dtype.kind not in "fc" or name in ("floor_divide", "Tensor.__floordiv__")
            np.testing.assert_array_equal(o.numpy(), r)
        else:
            assert o == r
    assert all(t is None for t in tangents)
    for o in dual_outs:
        if isinstance(o, da.Tensor):
            assert o.grad_fn is None and not o.requires_grad
    opdb.record(opdb.OpInfo(name, fn, list), dtype, "nondiff")
