"""Array backends (DESIGN §2.5): Dask arrays stay lazy through every mode and compute the
NumPy results; CuPy arrays run the same checks on a GPU (skipped without one)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import opdb
import pytest

import dualad as da

dask = pytest.importorskip("dask")
dka = pytest.importorskip("dask.array")


# ------------------------------------------------------------------------------ backends


class Backend:
    """How one backend makes arrays from NumPy ones, and reads them back."""

    name = "numpy"

    def put(self, a: np.ndarray) -> Any:
        return a

    def get(self, a: Any) -> np.ndarray:
        return np.asarray(a)

    def is_kind(self, a: Any) -> bool:
        return isinstance(a, np.ndarray)

    @contextlib.contextmanager
    def no_compute(self):  # what may not happen while the derivative is being built
        yield


class Dask(Backend):
    name = "dask"

    def put(self, a: np.ndarray) -> Any:
        # small chunks: two or more blocks along each axis longer than one
        return dka.from_array(a, chunks=tuple(max(1, (n + 1) // 2) for n in a.shape))

    def get(self, a: Any) -> np.ndarray:
        return np.asarray(dask.compute(a, scheduler="sync")[0])

    def is_kind(self, a: Any) -> bool:
        return isinstance(a, dka.Array)

    @contextlib.contextmanager
    def no_compute(self):
        """Any computation of a Dask graph (a silent np.asarray, a value branched on) raises."""
        def refuse(*a: Any, **k: Any) -> Any:
            raise AssertionError("a Dask graph was computed before compute() was asked")

        with dask.config.set(scheduler=refuse):
            yield


class CuPy(Backend):
    name = "cupy"

    def __init__(self) -> None:
        self.cp = pytest.importorskip("cupy")
        try:
            self.cp.cuda.runtime.getDeviceCount()
        except Exception:  # pragma: no cover - no GPU here
            pytest.skip("CuPy has no GPU here")

    def put(self, a: np.ndarray) -> Any:
        return self.cp.asarray(a)

    def get(self, a: Any) -> np.ndarray:
        return self.cp.asnumpy(a)

    def is_kind(self, a: Any) -> bool:
        return isinstance(a, self.cp.ndarray)


@pytest.fixture(params=["dask", "cupy"])
def backend(request: Any) -> Backend:
    return Dask() if request.param == "dask" else CuPy()


# ----------------------------------------------------------------- the op database, lazily


def _put_sample(b: Backend, s: opdb.Sample) -> opdb.Sample:
    args = list(s.args)
    for i in s.diff:
        args[i] = b.put(s.args[i])
    return opdb.Sample(tuple(args), s.kwargs, s.diff, s.desc)


def _jvp(b: Backend, op: opdb.OpInfo, s: opdb.Sample, u: list[np.ndarray]) -> list[Any]:
    """Primal outputs and tangents as the backend's arrays (None for a zero tangent)."""
    args = list(s.args)
    with da.dual_level():
        for i, d in zip(s.diff, u, strict=True):
            args[i] = da.make_dual(da.as_tensor(s.args[i]), da.as_tensor(b.put(d)))
        outs = opdb.run(op, s, tuple(args))
        res = [da.unpack_dual(o) for o in outs]
    return [(p._data, None if t is None else t._data) for p, t in res]


def _vjp(op: opdb.OpInfo, s: opdb.Sample, v: list[Any], create_graph: bool = False
         ) -> tuple[list[Any], list[Any], list[Any]]:
    xs, args = opdb.leaves(s)
    outs = opdb.run(op, s, args)
    pairs = [(o, w) for o, w in zip(outs, v, strict=True) if o.requires_grad]
    gs = da.grad([o for o, _ in pairs], xs, grad_outputs=[da.as_tensor(w) for _, w in pairs],
                 allow_unused=True, materialize_grads=True, create_graph=create_graph)
    return list(gs), xs, outs


def _check_kind(b: Backend, arrays: list[Any], what: str) -> None:
    for a in arrays:
        if a is not None and not isinstance(a, (int, float, complex, np.generic)):
            assert b.is_kind(a), f"{what}: {type(a).__name__}, not a {b.name} array"


def _close(b: Backend, got: Any, want: np.ndarray, what: str) -> None:
    opdb.close(b.get(got), want, opdb.AD_TOL["float64"], what)


def _cases(first: int = 2) -> list[Any]:
    """float64 samples with arrays of one or more axes (where chunks matter)."""
    out = []
    for op in opdb.OPS:
        if "float64" not in op.dtypes or op.name.startswith(DASK_LIMITS):
            continue
        picked = [s for s in opdb.samples(op, "float64")
                  if not s.xfail and s.diff and all(np.ndim(s.args[i]) for i in s.diff)
                  and all(np.size(s.args[i]) for i in s.diff)][:first]
        for s in picked:
            why = NOT_LAZY.get(op.name)
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(op, s, id=f"{op.name}-{s.desc}", marks=marks))
    return out


# Functions that cannot stay lazy on Dask (documented in docs/backends.md), by name.
NOT_LAZY: dict[str, str] = {}
# Dask's own limits, not dualad's: its FFTs need one chunk along the transformed axes and
# its linalg has no det, eigh, slogdet, pinv, ... (docs/backends.md).
DASK_LIMITS = ("fft.", "linalg.")

CASES = _cases()


@pytest.mark.parametrize(("op", "s"), CASES)
def test_forward_stays_lazy_and_matches_numpy(backend: Backend, op: opdb.OpInfo,
                                              s: opdb.Sample) -> None:
    rng = opdb.rng_for(op, "float64", s, "backend")
    u = opdb.directions(s, rng)[0]
    want_p, want_t = opdb.jvp(op, s, u)
    with backend.no_compute():
        got = _jvp(backend, op, _put_sample(backend, s), u)
    _check_kind(backend, [a for pt in got for a in pt], f"{op.name} forward")
    for (p, t), wp, wt in zip(got, want_p, want_t, strict=True):
        _close(backend, p, wp, f"{op.name} primal")
        if t is None:
            assert not np.any(wt), f"{op.name}: a zero tangent where NumPy has {wt}"
        else:
            _close(backend, t, wt, f"{op.name} tangent")


@pytest.mark.parametrize(("op", "s"), CASES)
def test_reverse_stays_lazy_and_matches_numpy(backend: Backend, op: opdb.OpInfo,
                                              s: opdb.Sample) -> None:
    rng = opdb.rng_for(op, "float64", s, "backend-rev")
    v = opdb.cotangents(op, s, rng)
    want, _, _ = opdb.vjp(op, s, v)
    with backend.no_compute():
        got, _, _ = _vjp(op, _put_sample(backend, s), [backend.put(w) for w in v])
    _check_kind(backend, [g._data for g in got], f"{op.name} reverse")
    for g, w in zip(got, want, strict=True):
        _close(backend, g._data, w, f"{op.name} gradient")
