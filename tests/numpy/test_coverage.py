"""The NumPy coverage table (dualad.numpy._coverage, docs/numpy_coverage.md) against NumPy itself."""

import pathlib

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.numpy import _coverage as C

from _support import opdb

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_public_numpy_callable_is_classified():
    """Fails when NumPy gains a name (function, ufunc, ndarray method or operator) that the
    table does not classify."""
    missing = [q for q, s, _ in C.table() if s == "UNCLASSIFIED"]
    assert not missing, f"add these to dualad/_coverage.py: {missing}"


def test_table_entries_name_things_numpy_has():
    known = set(C.names())
    stale = sorted(q for q in [*C.PASS, *C.REFUSED_REASONS, *C.OTHER_NAMES, *C.NDARRAY]
                   if q not in known)
    assert not stale, f"the coverage table classifies names NumPy does not have: {stale}"


def test_published_table_is_the_generated_one():
    doc = (ROOT / "docs" / "numpy_coverage.md").read_text()
    from dualad.scipy import _coverage as SC

    assert doc == C.markdown() + SC.markdown(), (
        "regenerate: python tools/numpy_coverage.py > docs/numpy_coverage.md")


def _numpy_name(op: opdb.OpInfo) -> str | None:
    for n in (op.name,) + op.covers:
        mod, _, name = n.rpartition(".")
        ns = np if not mod else getattr(np, mod, None)
        if ns is not None and callable(getattr(ns, name, None)):
            return f"numpy.{n}"
    return None


SUPPORTED = [op for op in opdb.OPS if _numpy_name(op)
             and C.classify(_numpy_name(op))[0] == C.DIFF]
# NumPy entry points that cannot dispatch to a Tensor (no __array_function__ hook): the
# table sends their users to dualad.numpy (np.array's error says so)
NO_DISPATCH = {"array", "asarray", "asanyarray", "ascontiguousarray", "asarray_chkfinite",
               "r_", "linspace", "logspace", "geomspace",
               "full", "full_like"}  # (their hooks read like= and a, not the fill value)


@pytest.mark.parametrize("op", [op for op in SUPPORTED if op.name not in NO_DISPATCH],
                         ids=lambda op: op.name)
def test_numpy_function_called_on_tensors_dispatches(op):
    """A function the table calls differentiable, called through NumPy itself on Tensors
    that require grad, gives dualad's result (it does not raise, nor drop derivatives)."""
    dt = op.dtypes[0]
    s = opdb.samples(op, dt)[0]
    _, args = opdb.leaves(s)
    got = opdb.flat(op.call(np, *args, **s.kwargs))
    want = opdb.flat(op.call(dnp, *args, **s.kwargs))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if isinstance(w, da.Tensor) and w.dtype.kind in "fc":
            assert isinstance(g, da.Tensor), f"{op.name} through NumPy gave {type(g)}"
            assert g.requires_grad == w.requires_grad
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy())


def _refused_numpy() -> list[str]:
    return [q for q, s, _ in C.table() if s == C.REFUSED and q.startswith("numpy.")]


@pytest.mark.parametrize("qualname", _refused_numpy())
def test_refused_function_raises_type_error_with_its_reason(qualname):
    """What NumPy hands a Tensor for a refused function raises TypeError naming it and why."""
    t = da.tensor(np.ones(3), requires_grad=True)
    mod, _, name = qualname.rpartition(".")
    func = getattr(np.linalg if mod.endswith("linalg") else np, name)
    reason = C.classify(qualname)[1]
    with pytest.raises(TypeError) as info:
        if isinstance(func, np.ufunc):
            t.__array_ufunc__(func, "__call__", t, t)
        else:
            t.__array_function__(func, (da.Tensor,), (t,), {})
    assert qualname in str(info.value) and reason in str(info.value)


@pytest.mark.parametrize("qualname", [q for q, s, _ in C.table()
                                      if s == C.REFUSED and q.startswith("ndarray.")
                                      and callable(getattr(np.ndarray, q[8:]))])
def test_refused_method_raises_type_error_with_its_reason(qualname):
    t = da.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(TypeError, match=qualname.replace(".", r"\.")):
        getattr(t, qualname[8:])(1)


def test_passed_through_functions_give_values_without_derivatives():
    t = da.tensor([3.0, 1.0, 2.0], requires_grad=True)
    assert np.searchsorted(t, 2.0) == 2
    idx = np.argpartition(t, 1)
    assert isinstance(idx, da.Tensor) and not idx.requires_grad
    np.testing.assert_array_equal(np.isin(t, [1.0]).numpy(), [False, True, False])
