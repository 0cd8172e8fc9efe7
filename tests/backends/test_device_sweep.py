"""The op database, the functional API and in-place programs on another kind of array.

Each case computes one derivative twice, on NumPy arrays and on arrays of another kind,
and compares the two. The NumPy result is checked against finite differences, closed
forms and the other modes by the rest of the suite; this file checks that the other
kind gives the same numbers and that every result is of that kind (invariant 5 of
docs/architecture.md: a primitive computes with its inputs' namespace).

The kind is chosen with pytest's ``--backend`` option (tests/conftest.py); without it the
tests here are skipped. ``--backend cupy`` runs them on CuPy arrays on a GPU
(docs/backends.md says how): every mode and every composition of two modes, single and
batched, on float64, float32 and complex128. On a CPU, ``tests/backends/test_backends.py`` checks
the same property with a stand-in (Dask arrays of NumPy arrays that refuse to meet a plain
NumPy array, ``tests/_support/array_kinds.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

from _support import opdb

# ---------------------------------------------------------------------------- the kinds


class CuPyKind:
    name = "cupy"
    dtypes = ("float64", "float32", "complex128")
    modes = ("forward", "reverse", "batched-forward", "batched-reverse", *opdb.SECOND,
             *(f"batched-{m}" for m in opdb.SECOND))

    def __init__(self) -> None:
        self.cp = pytest.importorskip("cupy")
        try:
            self.cp.cuda.runtime.getDeviceCount()
        except Exception as e:  # pragma: no cover - no GPU here
            pytest.skip(f"--backend cupy: CuPy finds no GPU ({e})")

    def put(self, a: np.ndarray) -> Any:
        return self.cp.asarray(a)

    def get(self, a: Any) -> np.ndarray:
        return self.cp.asnumpy(a)

    def is_kind(self, a: Any) -> bool:
        return isinstance(a, self.cp.ndarray)


KINDS = {"cupy": CuPyKind}


def _kind_of(config: pytest.Config) -> Any:
    return KINDS.get(config.getoption("backend"))


@pytest.fixture(scope="module")
def kind(request: pytest.FixtureRequest) -> Any:
    k = _kind_of(request.config)
    if k is None:
        pytest.skip("runs on another kind of array: pytest --backend cupy (on a GPU)")
    return k()


def put_all(kind: Any, obj: Any) -> Any:
    """Every NumPy array and scalar in ``obj`` (lists, tuples and dicts followed) as the
    kind's arrays."""
    if isinstance(obj, (np.ndarray, np.generic)):
        return kind.put(np.asarray(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(put_all(kind, x) for x in obj)
    if isinstance(obj, dict):
        return {k: put_all(kind, v) for k, v in obj.items()}
    return obj


def on_kind(kind: Any, fn: Any) -> Any:
    """``fn()`` with opdb's results required to be of ``kind`` (and brought to the host)."""
    opdb.DEVICE = kind
    try:
        return fn()
    finally:
        opdb.DEVICE = None


# Where a kind differs from NumPy for a reason that is not dualad's, by (kind, op name);
# each raises a clear error, none gives a wrong number.
_NO_CUPY = "CuPy 14 has no {} in cupyx.scipy.special: dualad raises NotImplementedError"
KNOWN: dict[tuple[str, str], str] = {
    ("cupy", "ldexp"): "the op database's sample writes its exponent as a NumPy integer "
                       "array: a host array meeting a GPU one is the device error, as in CuPy",
    ("cupy", "scipy.special.stdtr"): _NO_CUPY.format("stdtr"),
    ("cupy", "scipy.special.betaincc"): _NO_CUPY.format("betaincc"),
}


# ------------------------------------------------------------------------ the op database


def _directions(op: opdb.OpInfo, dtype: str, s: opdb.Sample) -> dict[str, list[np.ndarray]]:
    rng = opdb.rng_for(op, dtype, s, "device")
    xs = [s.args[i] for i in s.diff]
    return {
        "u1": [opdb.rand_like(rng, x) for x in xs],
        "u2": [opdb.rand_like(rng, x) for x in xs],
        "U": [opdb.rand_like(rng, x, (opdb.B,)) for x in xs],
        "w": opdb.cotangents(op, s, rng),
        "W": opdb.cotangents(op, s, rng, (opdb.B,)),
    }


def _compute(mode: str, op: opdb.OpInfo, s: opdb.Sample, d: dict[str, list[Any]]
             ) -> list[np.ndarray]:
    """The arrays one mode computes for this sample (the same calls as opdb's checks)."""
    u1, u2, U, w, W = d["u1"], d["u2"], d["U"], d["w"], d["W"]
    if mode == "forward":
        p, t = opdb.jvp(op, s, u1)
        return p + t
    if mode == "batched-forward":
        return opdb.jvp(op, s, U, batched=True)[1]
    if mode == "reverse":
        return opdb.vjp(op, s, w)[0]
    if mode == "batched-reverse":
        return opdb.vjp(op, s, W, batched=True)[0]
    calls = {
        "forward-over-forward": lambda: opdb.second_ff(op, s, u1, u2),
        "reverse-over-forward": lambda: opdb.second_rf(op, s, u1, w),
        "forward-over-reverse": lambda: opdb.second_fr(op, s, u2, w),
        "reverse-over-reverse": lambda: opdb.second_rr(op, s, w, u1),
        "batched-forward-over-forward": lambda: opdb.second_ff(op, s, U, u2, batched_in=True),
        "batched-reverse-over-forward": lambda: opdb.second_rf(op, s, u1, W, batched_cot=True),
        "batched-forward-over-reverse": lambda: opdb.second_fr(op, s, U, w, batched_tan=True),
        "batched-reverse-over-reverse": lambda: opdb.second_rr(op, s, W, U, batched_first=True),
    }
    return calls[mode]()


def _op_cases(config: pytest.Config) -> list[Any]:
    """(mode, op, dtype, sample) for each mode of the kind: the op database's richest sample
    per entry and dtype, without the cases the database marks as known failures."""
    k = _kind_of(config)
    if k is None:  # (one case, skipped by the kind fixture)
        return [pytest.param("forward", opdb.OPS[0], "float64", None, id="no-backend")]
    out = []
    for mode in k.modes:
        for p in opdb.cases(mode, k.dtypes, pick=opdb.rich_sample):
            op, dtype, s = p.values
            if p.marks or not s.diff:
                continue
            marks = []
            why = KNOWN.get((k.name, op.name))
            if why:
                marks = [pytest.mark.xfail(strict=True, reason=why)]
            out.append(pytest.param(mode, op, dtype, s, id=f"{mode}-{p.id}", marks=marks))
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.function.__name__ == "test_op_database_on_kind":
        metafunc.parametrize(("mode", "op", "dtype", "s"), _op_cases(metafunc.config))


def test_op_database_on_kind(kind: Any, mode: str, op: opdb.OpInfo, dtype: str,
                             s: opdb.Sample) -> None:
    d = _directions(op, dtype, s)
    want = _compute(mode, op, s, d)
    on = opdb.Sample(put_all(kind, s.args), put_all(kind, s.kwargs), s.diff, s.desc)
    got = on_kind(kind, lambda: _compute(mode, op, on, put_all(kind, d)))
    assert len(got) == len(want)
    for j, (g, w) in enumerate(zip(got, want, strict=True)):
        opdb.close(g, w, opdb.AD_TOL[dtype], f"{op.name} {mode}, result {j} on {kind.name}")


# ------------------------------------------------------------------------ functional API


def _f(x: da.Tensor) -> da.Tensor:
    return (dnp.sin(x) * x ** 2).sum() + dnp.log1p(x @ x)


def _g(x: da.Tensor) -> da.Tensor:
    return dnp.tanh(x[:, None] * x[None, :]).sum(axis=0) + dnp.cumsum(x) ** 2


X = np.linspace(-1.0, 1.5, 6)
V = np.cos(np.arange(6.0))


def _transforms(x: Any, v: Any) -> dict[str, Any]:
    """Every transform of dualad.functional on the same functions and points."""
    t = da.as_tensor
    fx, lin = F.linearize(_g, t(x))
    out = {
        "jacobian": F.jacobian(_g, t(x)),
        "jacobian forward": F.jacobian(_g, t(x), strategy="forward-mode", vectorize=True),
        "jacobian vectorized": F.jacobian(_g, t(x), vectorize=True),
        "hessian": F.hessian(_f, t(x)),
        "hessian forward-over-reverse": F.hessian(_f, t(x), outer_jacobian_strategy=
                                                  "forward-mode", vectorize=True),
        "vjp": F.vjp(_g, t(x), t(v))[1],
        "jvp": F.jvp(_g, t(x), t(v))[1],
        "hvp": F.hvp(_f, t(x), t(v))[1],
        "vhp": F.vhp(_f, t(x), t(v))[1],
        "jacfwd": F.jacfwd(_g)(t(x)),
        "jacrev": F.jacrev(_g)(t(x)),
        "jacfwd(jacrev)": F.jacfwd(F.jacrev(_f))(t(x)),
        "grad": F.grad(_f)(t(x)),
        "value_and_grad": F.value_and_grad(_f)(t(x))[1],
        "linearize": lin(t(v)),
        "linearize value": fx,
    }
    out["linear_transpose"] = F.linear_transpose(lin, t(x))(t(v))[0]
    _, series = F.jet(_g, (t(x),), ([t(v), t(v) * 0.5, t(v) * 0.25],))  # Taylor mode
    out["jet, order 3"] = series[2]
    out["laplacian"] = F.laplacian(_f, t(x))
    out["laplacian, batched"] = F.laplacian(lambda z: (dnp.sin(z) * z).sum(axis=-1),
                                            t(x).reshape(3, 2), batch_ndim=1)
    return out


def test_functional_api_on_kind(kind: Any) -> None:
    want = _transforms(X, V)
    got = _transforms(kind.put(X), kind.put(V))
    for name, w in want.items():
        g = got[name]
        assert kind.is_kind(g.detach()._data), f"{name}: {type(g.detach()._data).__name__}"
        opdb.close(kind.get(g.detach()._data), w.detach().numpy(), opdb.AD_TOL["float64"],
                   f"{name} on {kind.name}")


# --------------------------------------------------------------- in-place writes and views


def _writes(x: da.Tensor) -> da.Tensor:
    y = x * 1.5
    y[1:3] += dnp.sin(x[:2])  # a slice written in place
    v = y.T  # a view of y, written through
    v *= 2.0
    z = y.reshape(-1)  # another view: sees both writes
    z[0] = x[0, 0] * 3.0
    y[y > 2.0] = 0.0  # a boolean mask
    return (y ** 2).sum() + (z * dnp.exp(-z)).sum()


def _views(x: da.Tensor) -> da.Tensor:
    d = dnp.diagonal(x)
    s = x[::2, 1:]
    e = dnp.einsum("ij->ji", x)
    out = x.copy()
    out[0, :] *= d  # a copy written in place, its source untouched
    return (s * e[: s.shape[0], : s.shape[1]]).sum() + (out ** 3).sum() + d.sum()


@pytest.mark.parametrize("program", [_writes, _views], ids=["writes", "views"])
def test_inplace_and_views_on_kind(kind: Any, program: Any) -> None:
    a = np.arange(12.0).reshape(4, 3) / 7.0 - 0.5
    u = np.cos(a)

    def run(arr: Any, tan: Any) -> tuple[Any, Any, Any]:
        x = da.as_tensor(arr).detach().requires_grad_(True)
        program(x).backward()
        with da.dual_level():
            t = da.unpack_dual(program(da.make_dual(da.as_tensor(arr), da.as_tensor(tan))))
        return x.grad._data, t.primal._data, t.tangent._data

    want = run(a, u)
    got = run(kind.put(a), kind.put(u))
    for what, g, w in zip(("gradient", "value", "tangent"), got, want, strict=True):
        assert kind.is_kind(g), f"{program.__name__} {what}: {type(g).__name__}"
        opdb.close(kind.get(g), w, opdb.AD_TOL["float64"], f"{program.__name__} {what}")


# ------------------------------------------------------------------- the GPU's own features


@pytest.mark.parametrize("pin", [False, True], ids=["pageable", "pinned"])
def test_save_on_cpu_on_kind(kind: Any, pin: bool) -> None:
    """Saved values go to host memory during forward and come back for backward."""
    a = np.linspace(0.1, 2.0, 12)
    want = np.cos(a) * np.exp(a) + np.sin(a) * np.exp(a)
    x = da.as_tensor(kind.put(a)).detach().requires_grad_(True)
    with da.graph.save_on_cpu(pin_memory=pin):
        y = (dnp.sin(x) * dnp.exp(x)).sum()
    y.backward()
    assert kind.is_kind(x.grad._data)
    opdb.close(kind.get(x.grad._data), want, opdb.AD_TOL["float64"], "save_on_cpu gradient")


def test_emit_nvtx_on_kind(kind: Any) -> None:
    """The profiler's NVTX ranges around each operation, with CuPy's NVTX calls."""
    x = da.as_tensor(kind.put(np.arange(1.0, 5.0))).detach().requires_grad_(True)
    with da.profiler.emit_nvtx():
        (dnp.log(x) * x).sum().backward()
    opdb.close(kind.get(x.grad._data), np.log(np.arange(1.0, 5.0)) + 1.0,
               opdb.AD_TOL["float64"], "gradient under emit_nvtx")


def test_gpu_example_runs_on_kind(kind: Any) -> None:
    """examples/gpu_newton_logistic.py on the GPU: it checks its gradients and Hessians
    against their closed forms itself."""
    import os
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, str(root / "examples" / "gpu_newton_logistic.py")],
                          capture_output=True, text=True, timeout=600, cwd=root,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              [str(root), os.environ.get("PYTHONPATH", "")])})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "computing on: CuPy on the GPU" in proc.stdout, proc.stdout
