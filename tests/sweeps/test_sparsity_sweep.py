"""Traced sparsity patterns never miss a nonzero: every differentiable op-database entry.

For each entry (float64, its first samples) the differentiable inputs are packed into one
vector ``x``; the traced pattern of ``x -> outputs`` (real and imaginary parts of complex
ones) must contain every nonzero of the dense Jacobian that ``jacfwd`` computes at the same
point. Second order: ``x -> sum(sin(op(x)))`` (a nonlinear wrapper, so the op's own
first-order pattern reaches the Hessian too) and ``x -> sum(op(x) ** 2)``, against the
dense Hessian's nonzeros.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad.functional as F
import dualad.numpy as dnp

from _support import opdb

pytest.importorskip("scipy.sparse")

FIRST = 2  # samples per entry


def _params(first: int) -> list:
    out = []
    for p in opdb.cases("sparsity", ("float64",), first=first):
        op, _, s = p.values
        if s.diff and any(np.size(s.args[i]) for i in s.diff):
            out.append(pytest.param(op, s, id=p.id, marks=p.marks))
    return out


def _packed(op: opdb.OpInfo, s: opdb.Sample):
    """(f, x0): the op as a function of one vector holding its differentiable inputs."""
    shapes = [np.shape(s.args[i]) for i in s.diff]
    sizes = [int(np.prod(sh, dtype=np.int64)) for sh in shapes]
    x0 = np.concatenate([np.ravel(np.asarray(s.args[i], dtype=float)) for i in s.diff])

    def f(x):
        xs, at = [], 0
        for shape, size in zip(shapes, sizes, strict=True):
            xs.append(dnp.reshape(x[at:at + size], shape))
            at += size
        parts = []
        for o in opdb.run(op, s, opdb._with(s, xs)):
            o = dnp.ravel(o)
            parts += [dnp.real(o), dnp.imag(o)] if o.dtype.kind == "c" else [o]
        return dnp.concatenate(parts) if parts else x[:0] * 0
    return f, x0


def _missed(pattern, dense: np.ndarray) -> list:
    dense = np.asarray(dense).reshape(pattern.shape)
    got = pattern.toarray()
    return np.argwhere((dense != 0) & ~got).tolist()


@pytest.mark.parametrize(("op", "sample"), _params(FIRST))
def test_jacobian_pattern_never_misses(op, sample):
    f, x0 = _packed(op, sample)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pattern = F.jacobian_sparsity(f, x0)
        dense = F.jacfwd(f)(x0).numpy()
    assert pattern.shape == (dense.size // x0.size, x0.size)
    missed = _missed(pattern, dense)
    assert not missed, f"{op.name}: the traced pattern misses {missed[:5]}"


@pytest.mark.parametrize(("op", "sample"), _params(1))
@pytest.mark.parametrize("outer", ["sin", "square"])
def test_hessian_pattern_never_misses(op, sample, outer):
    f, x0 = _packed(op, sample)
    wrap = dnp.sin if outer == "sin" else dnp.square

    def g(x):
        return dnp.sum(wrap(f(x)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pattern = F.hessian_sparsity(g, x0)
        dense = F.hessian(g, x0).numpy()
    assert (pattern != pattern.T).nnz == 0
    missed = _missed(pattern, dense)
    assert not missed, f"{op.name}: the Hessian pattern misses {missed[:5]}"
