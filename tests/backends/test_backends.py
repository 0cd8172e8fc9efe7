"""Array backends (invariant 5 of docs/architecture.md): Dask arrays stay lazy through
every mode and compute the NumPy results; CuPy arrays run the same checks on a GPU
(skipped without one)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

from _support import opdb
from _support.array_kinds import Strict, _refuse_plain

dask = pytest.importorskip("dask")
dka = pytest.importorskip("dask.array")


# ------------------------------------------------------------------------------ backends


class Backend:
    """How one backend makes arrays from NumPy ones, and reads them back."""

    name = "numpy"

    def put(self, a: np.ndarray) -> Any:
        return a

    def constant(self, a: Any) -> Any:
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

    def constant(self, a: Any) -> Any:
        """The sample's other arrays are on the GPU too (CuPy takes no NumPy operand)."""
        return self.put(a) if isinstance(a, np.ndarray) else a

    def get(self, a: Any) -> np.ndarray:
        return self.cp.asnumpy(a)

    def is_kind(self, a: Any) -> bool:
        return isinstance(a, self.cp.ndarray)


class StrictDask(Dask):
    """Dask arrays of :class:`Strict` chunks: computing them raises where a hard-coded NumPy
    array meets the inputs' (dualad built a graph of NumPy where it should have followed the
    inputs' kind), and a result of another kind is caught by ``is_kind``."""

    name = "strict"

    def put(self, a: np.ndarray) -> Any:
        return dka.from_array(a.view(Strict), chunks=tuple(max(1, (n + 1) // 2) for n in a.shape),
                              meta=np.empty((0,) * a.ndim, a.dtype).view(Strict))

    def constant(self, a: Any) -> Any:
        """The sample's other value arrays are of the inputs' kind too (index arrays, integer,
        stay NumPy's: Dask indexes by them)."""
        return self.put(a) if isinstance(a, np.ndarray) and a.ndim and a.dtype.kind in "bfc" \
            else a

    def get(self, a: Any) -> np.ndarray:
        r = dask.compute(a, scheduler="sync")[0]
        _refuse_plain((r,), "the result")  # (a 0-d result of a Dask reduction is a scalar)
        return np.asarray(r)


BACKENDS = {"dask": Dask, "strict": StrictDask, "cupy": lambda: CuPy()}


@pytest.fixture(params=["dask", "cupy"])
def backend(request: Any) -> Backend:
    return BACKENDS[request.param]()


# ----------------------------------------------------------------- the op database, lazily


def _put_sample(b: Backend, s: opdb.Sample) -> opdb.Sample:
    args = [b.constant(a) for a in s.args]
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


def _cases(mode: str, first: int = 2) -> list[Any]:
    """float64 samples with arrays of one or more axes (where chunks matter), per backend."""
    out = []
    for op in opdb.OPS:
        if "float64" not in op.dtypes or op.name.startswith(DASK_LIMITS):
            continue
        picked = [s for s in opdb.samples(op, "float64")
                  if not s.xfail and s.diff and all(np.ndim(s.args[i]) for i in s.diff)
                  and all(np.size(s.args[i]) for i in s.diff)][:first]
        for s in picked:
            for b in ("dask", "strict", "cupy"):
                if mode == "second" and not op.gradgrad:
                    continue
                lists = {"dask": (NOT_LAZY,), "strict": (NOT_LAZY, NOT_STRICT),
                         "cupy": (NOT_ON_GPU,)}[b]
                why = next((w[k, m] for w in lists for k in (op.name, f"{op.name}-{s.desc}")
                            for m in (None, mode) if (k, m) in w), None)
                marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
                out.append(pytest.param(b, op, s, id=f"{b}-{op.name}-{s.desc}", marks=marks))
    return out


# Functions that do not stay lazy on Dask yet (docs/backends.md), by (name, mode); mode
# None: both. Each raises or computes; none gives a wrong number.
NOT_LAZY: dict[tuple[str, str | None], str] = {
    ("reshape-2x3T-shape(3,2)", None): "Dask cannot reshape a Fortran-ordered view's chunks lazily",
    ("sort", None): "Dask has no sort (numpy.argsort computes)",
    **{(n, None): "a sort or partition (Dask has none: numpy's computes)" for n in (
        "Tensor.sort", "Tensor.partition", "partition", "median", "quantile", "percentile",
        "nanmedian", "nanquantile", "nanpercentile")},
    ("Tensor.__imatmul__", None): "an in-place write into a Dask tensor raises "
                                  "NotImplementedError (dualad does not rebind a Dask tensor "
                                  "and its views yet)",
    ("asarray_chkfinite", None): "must look at the values to raise NumPy's ValueError: "
                                 "computes the finiteness check (documented)",
    ("roots", None): "raises NotImplementedError: the companion matrix's eigenvalues (Dask's "
                     "linalg has no eigvals), and leading zeros stripped by value",
    ("poly-matrix", None): "a matrix's polynomial takes its eigenvalues (Dask's linalg has "
                           "no eigvals)",
    ("sort_complex", None): "a sort (Dask has none: numpy.argsort computes)",
    ("polydiv", None): "drops the remainder's vanished leading entries as NumPy does: a test "
                       "on its values, which computes",
    ("polyfit", None): "a least-squares solve: Dask's linalg has no pinv (as linalg.lstsq)",
    ("geomspace-signs", None): "checks its Tensor endpoints for zero (NumPy's error), which "
                               "computes",
}
# Where the strict backend still finds a plain NumPy array meeting the inputs' (or a result
# of another kind), by (name, mode) as NOT_LAZY.
NOT_STRICT: dict[tuple[str, str | None], str] = {
    **{("ldexp", m): "its integer exponent is a NumPy array here (this test keeps integer "
                     "arrays NumPy's: Dask indexes by them)" for m in ("forward", "reverse")},
    ("extract", None): "a data-dependent shape: a Dask condition is computed (np.nonzero)",
    ("scipy.special.digamma", None): "SciPy's digamma and polygamma make NumPy arrays of "
                                     "their input (no dispatch: SciPy's limit)",
    ("scipy.special.gammaln", "second"): "its second derivative is SciPy's polygamma, which "
                                         "makes NumPy arrays of its input",
    **{(f"scipy.special.{n}", "second"): "its second derivative is SciPy's polygamma, which "
                                         "makes NumPy arrays of its input"
       for n in ("gamma", "beta", "betaln", "rgamma")},
}
# Where CuPy refuses what the op database's sample does, by (name, mode) as NOT_LAZY.
NOT_ON_GPU: dict[tuple[str, str | None], str] = {
    ("ldexp", None): "its integer exponent is a NumPy array written in the sample: a host array "
                     "meeting a GPU one is the clear device error, as in CuPy",
    **{(f"scipy.special.{n}", None): f"CuPy 14 has no {n} in cupyx.scipy.special: dualad "
                                     "raises NotImplementedError" for n in ("stdtr", "betaincc")},
}
# Dask's own limits, not dualad's: its FFTs need one chunk along the transformed axes and
# its linalg has no det, eigh, slogdet, pinv, ... (docs/backends.md).
DASK_LIMITS = ("fft.", "linalg.")

@pytest.mark.parametrize(("bname", "op", "s"), _cases("forward"))
def test_forward_stays_lazy_and_matches_numpy(bname: str, op: opdb.OpInfo,
                                              s: opdb.Sample) -> None:
    backend = BACKENDS[bname]()
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


@pytest.mark.parametrize(("bname", "op", "s"), _cases("reverse"))
def test_reverse_stays_lazy_and_matches_numpy(bname: str, op: opdb.OpInfo,
                                              s: opdb.Sample) -> None:
    backend = BACKENDS[bname]()
    rng = opdb.rng_for(op, "float64", s, "backend-rev")
    v = opdb.cotangents(op, s, rng)
    want, _, _ = opdb.vjp(op, s, v)
    with backend.no_compute():
        got, _, _ = _vjp(op, _put_sample(backend, s), [backend.put(w) for w in v])
    _check_kind(backend, [g._data for g in got], f"{op.name} reverse")
    for g, w in zip(got, want, strict=True):
        _close(backend, g._data, w, f"{op.name} gradient")


@pytest.mark.parametrize(("bname", "op", "s"), _cases("second"))
def test_forward_over_reverse_stays_lazy_and_matches_numpy(bname: str, op: opdb.OpInfo,
                                                           s: opdb.Sample) -> None:
    """The hvp composition: the tangent of a gradient (second order, both modes nested)."""
    backend = BACKENDS[bname]()
    rng = opdb.rng_for(op, "float64", s, "backend-fr")
    u = opdb.directions(s, rng)[0]
    w = opdb.cotangents(op, s, rng)
    want = opdb.second_fr(op, s, u, w)
    b = _put_sample(backend, s)
    with backend.no_compute():
        xs = [da.as_tensor(b.args[i]).detach().requires_grad_(True) for i in b.diff]
        with da.dual_level():
            duals = [da.make_dual(x, da.as_tensor(backend.put(d)))
                     for x, d in zip(xs, u, strict=True)]
            outs = opdb.run(op, b, opdb._with(b, duals))
            pairs = [(o, backend.put(c)) for o, c in zip(outs, w, strict=True)
                     if o.requires_grad]
            gs = da.grad([o for o, _ in pairs], duals, [da.as_tensor(c) for _, c in pairs],
                         allow_unused=True, materialize_grads=True)
            ts = [da.unpack_dual(g).tangent for g in gs]
    for t, want_t in zip(ts, want, strict=True):
        if t is None:
            assert not np.any(want_t), f"{op.name}: a zero tangent where NumPy has {want_t}"
        else:
            _check_kind(backend, [t._data], f"{op.name} forward-over-reverse")
            _close(backend, t._data, want_t, f"{op.name} second order")


def _dask_limited_cases() -> list[Any]:
    out = []
    for op in opdb.OPS:
        if "float64" not in op.dtypes or not op.name.startswith(DASK_LIMITS):
            continue
        picked = [s for s in opdb.samples(op, "float64")
                  if not s.xfail and s.diff and all(np.ndim(s.args[i]) for i in s.diff)
                  and all(np.size(s.args[i]) for i in s.diff)][:2]
        out += [pytest.param(op, s, id=f"{op.name}-{s.desc}") for s in picked]
    return out


@pytest.mark.parametrize(("op", "s"), _dask_limited_cases())
def test_dask_linalg_and_fft_match_numpy_or_raise(op: opdb.OpInfo, s: opdb.Sample) -> None:
    """Where Dask's own linalg and FFTs fall short (DASK_LIMITS), dualad may raise or
    compute, but a value it returns is NumPy's: a function Dask names like NumPy's but
    defines differently (its ``cholesky`` returns the upper factor) must not pass through."""
    backend = BACKENDS["dask"]()
    rng = opdb.rng_for(op, "float64", s, "backend-limits")
    u = opdb.directions(s, rng)[0]
    v = opdb.cotangents(op, s, rng)
    want_p, want_t = opdb.jvp(op, s, u)
    want_g, _, _ = opdb.vjp(op, s, v)
    try:
        got = _jvp(backend, op, _put_sample(backend, s), u)
    except (NotImplementedError, AttributeError, ValueError, TypeError):
        return  # (Dask's limit, said: docs/backends.md)
    for (p, t), wp, wt in zip(got, want_p, want_t, strict=True):
        _close(backend, p, wp, f"{op.name} primal on Dask")
        if t is not None:
            _close(backend, t, wt, f"{op.name} tangent on Dask")
    got_g, _, _ = _vjp(op, _put_sample(backend, s), [backend.put(w) for w in v])
    for g, w in zip(got_g, want_g, strict=True):
        _close(backend, g._data, w, f"{op.name} gradient on Dask")


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_on_one_dask_chunk_is_numpys_factor(upper: bool) -> None:
    """Dask's ``linalg.cholesky`` returns the upper factor unless asked for the lower one:
    the factor, its tangent and the gradient must be NumPy's either way."""
    rng = np.random.default_rng(7)
    m = rng.standard_normal((4, 4))
    a, t, w = m @ m.T + 4 * np.eye(4), rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    t = t + t.T
    want_p, want_t = da.functional.jvp(lambda x: dnp.linalg.cholesky(x, upper=upper), a, t)
    got_p, got_t = da.functional.jvp(lambda x: dnp.linalg.cholesky(x, upper=upper),
                                     da.as_tensor(dka.from_array(a)),
                                     da.as_tensor(dka.from_array(t)))
    x = da.as_tensor(dka.from_array(a)).requires_grad_(True)
    (dnp.linalg.cholesky(x, upper=upper) * da.as_tensor(dka.from_array(w))).sum().backward()
    xn = da.as_tensor(a).requires_grad_(True)
    (dnp.linalg.cholesky(xn, upper=upper) * da.as_tensor(w)).sum().backward()
    for got, want in ((got_p, want_p), (got_t, want_t), (x.grad, xn.grad)):
        np.testing.assert_allclose(np.asarray(got._data), np.asarray(want._data), rtol=1e-12,
                                   atol=1e-12)


# ------------------------------------------------------------- lazy until compute(), on Dask


def _counted(n: int, chunk: int, calls: list[int]) -> Any:
    """A Dask array of n float64 values whose blocks come from a function counting its calls."""
    def block(block_info: Any = None) -> np.ndarray:
        calls.append(1)
        lo, hi = block_info[None]["array-location"][0]
        return np.linspace(0.5, 1.5, n)[lo:hi]

    return dka.map_blocks(block, chunks=((chunk,) * (n // chunk),), dtype=np.float64,
                          meta=np.empty((0,)))  # (meta given: no call to infer it)


def _loss(x: da.Tensor) -> da.Tensor:
    return (dnp.sin(x) * x + dnp.exp(-x) / 3.0).sum()


def _grad_np(x: np.ndarray) -> np.ndarray:  # the closed form of _loss's gradient
    return np.cos(x) * x + np.sin(x) - np.exp(-x) / 3.0


def test_nothing_runs_before_compute_and_compute_shares_the_graph() -> None:
    calls: list[int] = []
    x = da.tensor(_counted(12, 3, calls), requires_grad=True)
    loss = _loss(x)
    loss.backward()
    g1 = da.grad(_loss(x), x)[0]
    with da.dual_level():
        d = da.make_dual(x.detach(), da.ones_like(x.detach()))
        tangent = da.unpack_dual(_loss(d)).tangent
    assert calls == [], "a block was evaluated before compute()"
    assert isinstance(x.grad._data, dka.Array) and isinstance(tangent._data, dka.Array)
    repr(x.grad)  # shows the graph, computes nothing
    assert calls == []
    value, grad, again, t = da.compute(loss, x.grad, g1, tangent)
    assert len(calls) == 4, f"{len(calls)} block evaluations, not x's 4 blocks once for all"
    xn = np.linspace(0.5, 1.5, 12)
    np.testing.assert_allclose(grad.numpy(), _grad_np(xn), rtol=1e-12)
    np.testing.assert_allclose(again.numpy(), _grad_np(xn), rtol=1e-12)
    np.testing.assert_allclose(t.numpy(), _grad_np(xn).sum(), rtol=1e-12)
    np.testing.assert_allclose(value.numpy(), (np.sin(xn) * xn + np.exp(-xn) / 3).sum())
    c = x.grad.compute()
    assert isinstance(c, da.Tensor) and isinstance(c._data, np.ndarray)
    np.testing.assert_allclose(c.numpy(), _grad_np(xn), rtol=1e-12)


def test_grad_accumulates_lazily() -> None:
    xn = np.linspace(0.5, 1.5, 8)
    x = da.tensor(dka.from_array(xn, chunks=3), requires_grad=True)
    with Dask().no_compute():
        _loss(x).backward()
        _loss(x).backward()  # .grad accumulates: a new graph, nothing computed
    assert isinstance(x.grad._data, dka.Array)
    np.testing.assert_allclose(x.grad.compute().numpy(), 2 * _grad_np(xn), rtol=1e-12)


@pytest.mark.parametrize("bname", ["dask", "strict"])
def test_functional_api_stays_lazy(bname: str) -> None:
    """jvp, vjp, hvp, vhp, jacobian (both strategies, vectorized or not) and hessian build
    graphs of the inputs' kind (strict: no hard-coded NumPy seed, identity block or zero)."""
    import dualad.functional as AF

    b = BACKENDS[bname]()
    rng = np.random.default_rng(0)
    xn, un, wn = rng.uniform(0.5, 1.5, 6), rng.standard_normal(6), rng.standard_normal(6)
    f = lambda x: (dnp.sin(x) * x + x * x * x).sum()  # noqa: E731
    fv = lambda x: dnp.sin(x) * dnp.roll(x, 1) * x[::-1]  # noqa: E731
    f2 = lambda x, y: (x * dnp.cos(y) * y).sum()  # noqa: E731

    def transforms(xa: Any, va: Any, wa: Any) -> dict[str, da.Tensor]:
        x, v, w = da.tensor(xa), da.tensor(va), da.tensor(wa)
        out = {"jvp": AF.jvp(fv, x, v)[1], "vjp": AF.vjp(fv, x, v)[1],
               # (arrays, not Tensors, given to the transforms: kept as they are)
               "vjp-arrays": AF.vjp(fv, xa, va)[1], "grad": AF.grad(f)(xa),
               "jacfwd": AF.jacfwd(fv)(xa), "jacrev": AF.jacrev(fv)(xa),
               "hvp": AF.hvp(f, x, v)[1], "vhp": AF.vhp(f, x, v)[1],
               "hessian": AF.hessian(f, x),
               "hessian-vectorized": AF.hessian(f, x, vectorize=True),
               "hessian2": AF.hessian(f2, (x, w))[0][1]}
        for strategy in ("reverse-mode", "forward-mode"):
            for vec in (False, True):
                if strategy == "reverse-mode" or vec:
                    out[f"jacobian-{strategy}-{vec}"] = AF.jacobian(
                        fv, x, vectorize=vec, strategy=strategy)
        return out

    ref = transforms(xn, un, wn)
    with b.no_compute():
        got = transforms(b.put(xn), b.put(un), b.put(wn))
    for k, r in ref.items():
        assert b.is_kind(got[k]._data), f"{k}: computed into NumPy"
        np.testing.assert_allclose(b.get(got[k]._data), r.numpy(), rtol=1e-12,
                                   atol=1e-12, err_msg=k)


def _strict_inputs(b: Backend) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    return rng.uniform(0.5, 1.5, (3, 2)), rng.uniform(0.5, 1.5, 2)


def _two_outs(x: da.Tensor, y: da.Tensor) -> tuple[da.Tensor, da.Tensor]:
    return dnp.sin(x) * y, (x * x).sum(axis=0) * dnp.exp(y)


@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("bname", ["dask", "strict"])
def test_gradcheck_on_lazy_inputs(bname: str, fast: bool) -> None:
    """gradcheck and gradgradcheck, forward and reverse, on Dask inputs: the perturbed
    inputs, tangents and cotangents they make are of the inputs' kind (strict: no NumPy
    array meets the chunks), and a wrong derivative is still caught there."""
    b = BACKENDS[bname]()
    xn, yn = _strict_inputs(b)
    x = da.tensor(b.put(xn), requires_grad=True)
    y = da.tensor(b.put(yn), requires_grad=True)
    kw = dict(fast_mode=fast, check_forward_ad=True, check_batched_grad=True,
              check_batched_forward_grad=True)
    assert da.gradcheck(_two_outs, (x, y), **kw)
    assert da.gradgradcheck(_two_outs, (x, y), fast_mode=fast, check_fwd_over_rev=True,
                            check_batched_grad=True)
    assert isinstance(x._data, dka.Array) and x.grad is None  # (the user's tensors as given)

    class WrongSin(da.Function):  # derivative off by a factor 2: both checks must say so
        @staticmethod
        def forward(ctx: Any, a: da.Tensor) -> da.Tensor:
            ctx.save_for_backward(a)
            return dnp.sin(a)

        @staticmethod
        def backward(ctx: Any, g: da.Tensor) -> da.Tensor:
            (a,) = ctx.saved_tensors
            return 2 * dnp.cos(a) * g

    assert not da.gradcheck(WrongSin.apply, (x,), fast_mode=fast, raise_exception=False)


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("bname", ["dask", "strict"])
def test_custom_function_on_lazy_inputs(bname: str, materialize: bool) -> None:
    """A custom Function with two outputs, one unused (its gradient None, or zeros of the
    inputs' kind: set_materialize_grads), and a None gradient for one input: the backward
    stays lazy and of the inputs' kind, and gradcheck agrees with finite differences."""
    b = BACKENDS[bname]()
    xn, yn = _strict_inputs(b)
    seen: list[Any] = []

    class Pair(da.Function):
        @staticmethod
        def forward(ctx: Any, a: da.Tensor, w: da.Tensor) -> tuple[da.Tensor, da.Tensor]:
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(a, w)
            return a * w, dnp.exp(a)

        @staticmethod
        def backward(ctx: Any, g0: Any, g1: Any) -> tuple[Any, Any]:
            a, w = ctx.saved_tensors
            seen.append(g1)
            ga = g0 * w if g1 is None else g0 * w + g1 * dnp.exp(a)
            return ga, None  # (w's gradient left out: None)

    f = lambda a, w: Pair.apply(a, w)[0]  # noqa: E731 (the second output unused)
    with b.no_compute():
        x = da.tensor(b.put(xn), requires_grad=True)
        w = da.tensor(b.put(yn), requires_grad=True)
        gx, gw = da.grad(f(x, w).sum(), (x, w), allow_unused=True, materialize_grads=True)
    assert (seen[-1] is None) != materialize
    if materialize:
        assert b.is_kind(seen[-1]._data), "a materialized zero gradient of another kind"
    _check_kind(b, [gx._data, gw._data], "Pair's gradients")
    np.testing.assert_allclose(b.get(gx._data), np.broadcast_to(yn, xn.shape), rtol=1e-12)
    np.testing.assert_allclose(b.get(gw._data), 0.0)
    x = da.tensor(b.put(xn), requires_grad=True)
    assert da.gradcheck(lambda a: f(a, da.tensor(b.put(yn))), (x,))

    class Double(da.Function):  # arrays, not Tensors, returned: taken as they are (lazy)
        @staticmethod
        def forward(ctx: Any, a: da.Tensor) -> Any:
            return a._data * 2

        @staticmethod
        def backward(ctx: Any, g: da.Tensor) -> Any:
            return g._data * 2

    with b.no_compute():
        y = Double.apply(x)
        (g,) = da.grad(y.sum(), (x,))
    _check_kind(b, [y._data, g._data], "Double")
    np.testing.assert_allclose(b.get(g._data), np.full(xn.shape, 2.0))


@pytest.mark.parametrize("bname", ["dask", "strict"])
def test_unused_gradient_edge_materializes_zeros_of_the_kind(bname: str) -> None:
    b = BACKENDS[bname]()
    xn, yn = _strict_inputs(b)
    with b.no_compute():
        x = da.tensor(b.put(xn), requires_grad=True)
        w = da.tensor(b.put(yn), requires_grad=True)
        edge = da.graph.get_gradient_edge(w * 1.0)  # (of an output x's loss does not use)
        (g,) = da.grad(dnp.sin(x).sum(), edge, materialize_grads=True)
    _check_kind(b, [g._data], "the unused edge's zeros")
    np.testing.assert_allclose(b.get(g._data), np.zeros(yn.shape))


def test_creation_like_a_dask_array_takes_every_argument_by_place() -> None:
    """``np.zeros(shape, dtype, like=...)`` of a Dask array: the dtype given by place is kept
    (Dask's own zeros take it by keyword only, and made float64 of it)."""
    from dualad.backends import namespace as _backend

    like = _backend.like(StrictDask().put(np.ones(3)))
    for z, dt, v in [(np.zeros((2,), np.float32, like=like), np.float32, 0),
                     (np.ones(2, "c8", "C", like=like), np.complex64, 1),
                     (np.full(2, 3, np.int16, like=like), np.int16, 3),
                     (np.empty((2, 1), np.int8, like=like), np.int8, None)]:
        assert isinstance(z, dka.Array) and z.dtype == dt and z.compute().dtype == dt
        assert isinstance(z._meta, Strict), "not of the chunks' kind"
        if v is not None:
            np.testing.assert_array_equal(z.compute().view(np.ndarray), np.full(z.shape, v, dt))


@pytest.mark.parametrize("period", [2 * np.pi, 4.0, 6])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_unwrap_stays_lazy(period: Any, dtype: str) -> None:
    """unwrap by NumPy's steps on lazy arrays (NumPy's own computes): NumPy's values and
    dtype, along either axis, and the identity's derivative."""
    b = StrictDask()
    rng = np.random.default_rng(5)
    a = (rng.uniform(-10, 10, (3, 7)) if dtype == "float64"
         else rng.integers(-10, 10, (3, 7))).astype(dtype)
    for ax in (-1, 0):
        want = np.unwrap(a, period=period, axis=ax)
        with b.no_compute():
            x = da.tensor(b.put(a))
            got = dnp.unwrap(x, period=period, axis=ax)
        assert got.dtype == want.dtype and b.is_kind(got._data)
        np.testing.assert_allclose(b.get(got._data), want, rtol=1e-12, atol=1e-12)
    x = da.tensor(b.put(rng.uniform(-10, 10, 6)), requires_grad=True)
    with b.no_compute():
        dnp.unwrap(x, period=period).sum().backward()
    np.testing.assert_allclose(b.get(x.grad._data), np.ones(6))


def test_what_cannot_stay_lazy_says_so() -> None:
    """NOT_LAZY's errors: a clear NotImplementedError saying what to do, never Dask's
    AttributeError or a silent compute."""
    b = Dask()
    with b.no_compute():
        x = da.tensor(b.put(np.eye(2)), requires_grad=True)
        y = x * 1.0
        for write in (lambda: y.__imatmul__(x), lambda: y.__iadd__(1.0),
                      lambda: y.__setitem__(0, 2.0)):
            with pytest.raises(NotImplementedError, match="out-of-place form"):
                write()
        with pytest.raises(NotImplementedError, match=r"roots\(p.compute\(\)\)"):
            dnp.roots(da.tensor(b.put(np.array([1.0, -3.0, 2.0]))))


def test_integer_and_boolean_results_stay_lazy() -> None:
    """The functions' paths for integer and boolean tensors (no derivative) keep a Dask
    array lazy too (a NumPy scalar becomes a 0-d array: a Dask result stays as it is)."""
    b = Dask()
    a = np.arange(12).reshape(3, 4) - 5
    cases = {"sum": lambda x: dnp.sum(x, axis=0), "max": lambda x: dnp.max(x),
             "prod": lambda x: dnp.prod(x, axis=1), "any": lambda x: dnp.any(x > 3),
             "all": lambda x: dnp.all(x > -6, axis=0), "getitem": lambda x: x[[0, 2], 1:],
             "einsum": lambda x: dnp.einsum("ij,ij->j", x, x),
             "norm-0": lambda x: dnp.linalg.norm(x * 1.0, 0, axis=0)}  # (a count of nonzeros)
    with b.no_compute():
        got = {k: f(da.tensor(b.put(a))) for k, f in cases.items()}
    for k, f in cases.items():
        assert b.is_kind(got[k]._data), k
        want = f(da.tensor(a)).numpy()
        np.testing.assert_array_equal(b.get(got[k]._data), want, err_msg=k)



def test_edge_cases_make_arrays_of_the_inputs_kind() -> None:
    """Empty results and a cumulative sum's initial block are made of the inputs' kind
    (Strict chunks directly: a plain NumPy array there meets them, or comes back)."""
    from dualad.core.tensor import _make

    a = np.arange(1.0, 7.0).reshape(3, 2)
    x = _make(a.copy().view(Strict))
    cases = {
        "cumulative_sum": (lambda x: dnp.cumulative_sum(x, axis=1, include_initial=True),
                           lambda a: np.cumulative_sum(a, axis=1, include_initial=True)),
        "vander-0": (lambda x: dnp.vander(x[:, 0], 0), lambda a: np.vander(a[:, 0], 0)),
        "resize-0": (lambda x: dnp.resize(x, (0, 2)), lambda a: np.resize(a, (0, 2))),
        "polydiv": (lambda x: dnp.polydiv(x[:1, 0], x[:, 0])[0],
                    lambda a: np.polydiv(a[:1, 0], a[:, 0])[0]),
        "lstsq-resid": (lambda x: dnp.linalg.lstsq(x[:2], x[:2, 0])[1],
                        lambda a: np.linalg.lstsq(a[:2], a[:2, 0])[1]),
    }
    for k, (f, g) in cases.items():
        got = f(x)._data
        assert got.__class__ is Strict, k
        np.testing.assert_allclose(got.view(np.ndarray), g(a), err_msg=k)

def test_numpy_constants_mix_with_dask_but_devices_do_not() -> None:
    from dualad.backends import namespace as _backend

    x = da.tensor(dka.from_array(np.arange(4.0), chunks=2), requires_grad=True)
    y = (x * np.arange(4.0)).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.compute().numpy(), np.arange(4.0))
    assert _backend.namespace(np.ones(2), x._data) is dka

    class FakeGpu:  # what _backend sees of a CuPy array, without a GPU
        pass

    import unittest.mock as mock

    class FakeGpuDask:  # a Dask array of CuPy chunks, as _backend sees it
        pass

    real_kind = _backend._kind

    def kind(a: Any) -> Any:
        return "cupy" if isinstance(a, FakeGpu) else "dask-cupy" if isinstance(
            a, FakeGpuDask) else real_kind(a)

    with mock.patch.object(_backend, "_kind", kind):
        for mixed in [(np.ones(2), FakeGpu()), (x._data, FakeGpu()), (x._data, FakeGpuDask()),
                      (FakeGpuDask(), x._data, np.ones(2))]:
            with pytest.raises(RuntimeError, match="same device.*cupy.asarray or .get"):
                _backend.namespace(*mixed)
        assert _backend.namespace(FakeGpu(), FakeGpu(), 2.0) is _backend._cupy
        assert _backend.namespace(FakeGpuDask(), FakeGpu()) is dka  # (both on the GPU)



class _GpuLike(np.ndarray):
    """What an operation sees of a CuPy array, without a GPU: it refuses a NumPy operand
    with a TypeError that names neither device (as CuPy's ``Unsupported type``)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kw: Any) -> Any:
        if any(type(a) is np.ndarray for a in inputs):
            raise TypeError(f"Unsupported type {np.ndarray}")
        return getattr(ufunc, method)(*[a.view(np.ndarray) if isinstance(a, _GpuLike) else a
                                        for a in inputs], **kw).view(_GpuLike)


@pytest.mark.parametrize("how", ["operator", "reflected", "function", "dual", "recorded",
                                 "general"])
def test_an_operation_on_two_devices_says_so(how: str, monkeypatch: Any) -> None:
    from dualad.backends import namespace as _backend
    from dualad.core.tensor import _make

    real_kind = _backend._kind
    monkeypatch.setattr(_backend, "_kind", lambda a: "cupy" if isinstance(a, _GpuLike)
                        else real_kind(a))
    gpu, cpu = _make(np.arange(3.0).view(_GpuLike)), da.tensor([1.0, 2.0, 3.0])
    name = "matmul" if how == "general" else "add"
    with pytest.raises(RuntimeError, match=rf"{name}: .*same device.*CPU \(NumPy\) and GPU"):
        if how == "operator":
            gpu + cpu
        elif how == "reflected":
            cpu + gpu
        elif how == "function":
            dnp.add(cpu, gpu)
        elif how == "dual":  # (the hot code's dual path)
            with da.dual_level():
                da.make_dual(cpu, da.ones(3)) + gpu
        elif how == "recorded":
            cpu.requires_grad_() + gpu
        else:  # (apply's general way: a primitive without hot code)
            dnp.matmul(gpu, cpu)
    assert (gpu + gpu)._data.__class__ is _GpuLike  # (one device: as it was)
    with pytest.raises(TypeError, match="did not contain a loop"):  # another TypeError: as it is
        dnp.add(cpu, "x")

def test_gradient_on_a_local_distributed_cluster() -> None:
    """The graph of a gradient pickles and runs on worker processes."""
    distributed = pytest.importorskip("distributed")
    xn = np.linspace(0.5, 1.5, 40)
    x = da.tensor(dka.from_array(xn, chunks=10), requires_grad=True)
    loss = _loss(x)
    loss.backward()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster):
        value, grad = da.compute(loss, x.grad)
    np.testing.assert_allclose(grad.numpy(), _grad_np(xn), rtol=1e-12)
    np.testing.assert_allclose(value.numpy(), (np.sin(xn) * xn + np.exp(-xn) / 3).sum())


# ------------------------------------------------------ benchmarks/run.py --backend


def _bench_module(monkeypatch: Any) -> Any:
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"
    spec = importlib.util.spec_from_file_location("_dualad_bench_run", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, mod)  # (its dataclasses look themselves up)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_rows_run_on_a_backend_namespace(monkeypatch: Any, tmp_path: Any,
                                                   capsys: Any) -> None:
    """``--backend`` through the code path CuPy takes, with a stand-in backend: NumPy arrays,
    a namespace that records what the reference column calls, and a device sync that
    counts. Every row's dualad and reference results are checked, and the peers' where
    they are installed (they take the inputs through the host, to their device)."""
    run = _bench_module(monkeypatch)

    class Recording:  # numpy, remembering which functions were taken from it
        def __init__(self) -> None:
            self.used: set[str] = set()

        def __getattr__(self, name: str) -> Any:
            self.used.add(name)
            return getattr(np, name)

    xp, calls = Recording(), {"put": 0, "sync": 0}

    def put(a: np.ndarray) -> np.ndarray:
        calls["put"] += 1
        return np.array(a, copy=True)

    def sync() -> None:
        calls["sync"] += 1

    monkeypatch.setitem(run.BACKENDS, "stand-in",
                        lambda: run.Backend("stand-in", xp, put, sync, np.asarray))
    out = tmp_path / "rows.json"
    assert run.main(["--quick", "--backend", "stand-in", "--json", str(out)]) == 0
    import json

    rows = json.loads(out.read_text())["rows"]
    assert {r["bench"] for r in rows} == set(run.ALL_BENCHMARKS)
    for row in rows:
        cells = row["cells"]
        if row["bench"] == "memory":  # host memory: not measured on a device backend
            assert all(c["text"] == "-" for c in cells.values()), row
            continue
        for impl in ("dualad", "numpy"):  # timed, and right (a wrong result ends in "!")
            assert cells[impl]["value"] is not None and not cells[impl]["text"].endswith("!"), \
                (row["name"], impl, cells[impl])
        for impl in run.PEERS:  # on the peers' device (the CPU here) where installed, right
            reason, text = cells[impl]["reason"], cells[impl]["text"]
            if impl == run.JIT:  # (compiled JAX: a column of GPU tables only)
                assert text == "-" and "--backend stand-in" in reason, row
            else:
                assert not text.endswith("!"), (row["name"], impl, cells[impl])
    # the reference column computed with the backend's namespace, inputs went through put,
    # and the clock waited for the device before and after each repeat
    assert {"sin", "cos", "tanh", "exp", "sum", "max", "log", "zeros", "diag"} <= xp.used
    assert calls["put"] >= 10 and calls["sync"] >= 2 * 8
    header = next(line for line in capsys.readouterr().out.splitlines()
                  if line.startswith("benchmark"))
    assert header.split()[-4:] == ["stand-in", "torch", "jax", "autograd"]


def test_benchmark_backend_cupy_without_cupy_says_so() -> None:
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: --backend cupy runs")
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"
    proc = subprocess.run([sys.executable, str(script), "--backend", "cupy", "--only", "plain"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0
    assert "--backend cupy needs CuPy" in proc.stderr and "Traceback" not in proc.stderr, \
        proc.stderr


def test_creation_on_a_gpu_array_calls_cupys_own_function(monkeypatch: Any) -> None:
    """NumPy 2's ``np.ones(..., like=a)`` hands ``a``'s library a ``device`` keyword that
    CuPy's creation functions do not take (seen on a GPU: every backward pass of a CuPy
    scalar failed); dualad calls CuPy's own function, on ``a``'s device. A stand-in for
    CuPy records what it is asked."""
    import types

    from dualad.backends import namespace as _backend

    calls: list[tuple[str, tuple[Any, ...], dict[str, Any], int]] = []

    class Device:
        current = 0

        def __init__(self, i: int) -> None:
            self.i = i

        def __enter__(self) -> None:
            self.prev, Device.current = Device.current, self.i

        def __exit__(self, *e: Any) -> None:
            Device.current = self.prev

    class GPUArray:
        device = Device(3)

    def creator(name: str) -> Any:
        def make(*args: Any, **kw: Any) -> Any:
            assert "device" not in kw and "like" not in kw, kw
            calls.append((name, args, kw, Device.current))
            return GPUArray()
        return make

    cupy = types.SimpleNamespace(ndarray=GPUArray, **{n: creator(n) for n in (
        "ones", "zeros", "empty", "eye", "full", "arange", "asarray", "array")})
    monkeypatch.setattr(_backend, "_cupy", cupy)
    like = GPUArray()
    assert isinstance(_backend.ones((2, 3), np.float32, like=like), GPUArray)
    assert isinstance(_backend.eye(4, dtype=bool, like=like), GPUArray)
    assert [(c[0], c[3]) for c in calls] == [("ones", 3), ("eye", 3)]
    assert calls[0][1:3] == (((2, 3), np.float32), {})
    # NumPy's own arrays take NumPy's path, like= and all
    z = _backend.zeros((2,), like=np.ones(1))
    assert z.__class__ is np.ndarray and len(calls) == 2
