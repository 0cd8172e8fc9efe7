"""numpy.linalg on Tensors: forward and reverse mode against finite differences.

Every function is written once with ``np.linalg`` names: called on ndarrays it
is plain NumPy (the finite-difference reference, always evaluated in float64 /
complex128), called on Tensors it dispatches to ``dualad.numpy.linalg``. Each
case checks forward mode (dual levels) and reverse mode (``dualad.grad``)
against central differences, the identity ``Re<v, J u> == Re<J^T v, u>``,
batched tangents and cotangents against separate passes, and (where marked)
double backward and forward-over-reverse against differences of the gradient.

Complex inputs: finite differences perturb real and imaginary parts
separately; reverse mode gives the conjugate Wirtinger gradient
``dL/dx + 1j dL/dy`` of ``L = Re<v, f(x)>``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

# ---------------------------------------------------------------------------------------
# harness (also used by test_fft.py)
# ---------------------------------------------------------------------------------------

DTYPES = {"f64": np.float64, "f32": np.float32, "c128": np.complex128, "c64": np.complex64}
TOL = {"f64": 1e-6, "c128": 1e-6, "f32": 3e-3, "c64": 3e-3}


def A(t: Any) -> np.ndarray:
    return t.detach().numpy() if isinstance(t, da.Tensor) else np.asarray(t)


def outs_of(r: Any) -> list[Any]:
    return list(r) if isinstance(r, tuple) else [r]


def wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def randn(rng: np.random.Generator, shape: Any, dt: Any) -> np.ndarray:
    x = rng.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dt)


def np_eval(f: Callable[..., Any], xs: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(o) for o in outs_of(f(*[wide(x) for x in xs]))]


def fd_jvp(f: Callable[..., Any], xs: list[np.ndarray], us: list[np.ndarray],
           eps: float = 1e-6) -> list[np.ndarray]:
    p = np_eval(f, [wide(x) + eps * wide(u) for x, u in zip(xs, us, strict=True)])
    m = np_eval(f, [wide(x) - eps * wide(u) for x, u in zip(xs, us, strict=True)])
    return [(a - b) / (2 * eps) for a, b in zip(p, m, strict=True)]


def fd_grad(f: Callable[..., Any], xs: list[np.ndarray], vs: list[np.ndarray],
            eps: float = 1e-6) -> list[np.ndarray]:
    """Conjugate Wirtinger gradient of L = sum Re<v, f(x)> by central differences."""

    def loss(ys: list[np.ndarray]) -> float:
        return sum(float(np.real(np.vdot(v, o))) for v, o in zip(vs, np_eval(f, ys), strict=True))

    base = [wide(x) for x in xs]
    grads = []
    for i, x in enumerate(base):
        g = np.zeros(x.shape, dtype=x.dtype)
        for k in np.ndindex(x.shape):
            dirs = [1.0, 1j] if x.dtype.kind == "c" else [1.0]
            for d in dirs:
                e = np.zeros_like(x)
                e[k] = d
                lp = loss(base[:i] + [x + eps * e] + base[i + 1 :])
                lm = loss(base[:i] + [x - eps * e] + base[i + 1 :])
                g[k] += d * (lp - lm) / (2 * eps)
        grads.append(g)
    return grads


def fwd(f: Callable[..., Any], xs: list[np.ndarray], us: list[np.ndarray],
        batched: bool = False) -> list[np.ndarray]:
    with da.dual_level():
        duals = [da.make_dual(da.tensor(x), da.tensor(u), batched=batched)
                 for x, u in zip(xs, us, strict=True)]
        outs = outs_of(f(*duals))
        res = []
        b = (us[0].shape[0],) if batched else ()
        for o in outs:
            t = da.unpack_dual(o).tangent
            res.append(np.zeros(b + o.shape, o.dtype) if t is None else A(t))
        return res


def rev(f: Callable[..., Any], xs: list[np.ndarray], vs: list[np.ndarray],
        batched: bool = False) -> list[np.ndarray]:
    ts = [da.tensor(x, requires_grad=True) for x in xs]
    outs = outs_of(f(*ts))
    pairs = [(o, da.tensor(v)) for o, v in zip(outs, vs, strict=True) if o.requires_grad]
    gs = da.grad([o for o, _ in pairs], ts, grad_outputs=[v for _, v in pairs],
                 allow_unused=True, materialize_grads=True, is_grads_batched=batched)
    return [A(g) for g in gs]


def close(got: np.ndarray, want: np.ndarray, tol: float, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


def out_dirs(rng: np.random.Generator, f: Callable[..., Any],
             xs: list[np.ndarray]) -> list[np.ndarray]:
    return [randn(rng, o.shape, o.dtype) for o in np_eval(f, xs)]


def check_all(name: str, f: Callable[..., Any], xs: list[np.ndarray], dkey: str) -> None:
    """Forward and reverse vs FD, the transposition identity, batched both ways."""
    rng = np.random.default_rng(seed_of(name + dkey))
    tol = TOL[dkey]
    us = [randn(rng, x.shape, x.dtype) for x in xs]
    vs = out_dirs(rng, f, xs)
    want_t = fd_jvp(f, xs, us)
    got_t = fwd(f, xs, us)
    for k, (g, w) in enumerate(zip(got_t, want_t, strict=True)):
        close(g, w, tol, f"{name} forward output {k}")
    want_g = fd_grad(f, xs, vs)
    got_g = rev(f, xs, vs)
    for k, (g, w) in enumerate(zip(got_g, want_g, strict=True)):
        close(g, w, tol, f"{name} reverse input {k}")
    # Re<v, J u> == Re<J^T v, u>
    lhs = sum(np.real(np.vdot(wide(v), wide(t))) for v, t in zip(vs, got_t, strict=True))
    rhs = sum(np.real(np.vdot(wide(g), wide(u))) for g, u in zip(got_g, us, strict=True))
    close(lhs, rhs, tol, f"{name} Re<v,Ju> == Re<J^T v,u>")
    # batched tangents / cotangents == separate passes
    B = 3
    U = [randn(rng, (B,) + x.shape, x.dtype) for x in xs]
    got_b = fwd(f, xs, U, batched=True)
    for b in range(B):
        sep = fwd(f, xs, [u[b] for u in U])
        for k, (g, s) in enumerate(zip(got_b, sep, strict=True)):
            close(g[b], s, tol, f"{name} batched tangent {b} output {k}")
    V = [randn(rng, (B,) + v.shape, v.dtype) for v in vs]
    got_rb = rev(f, xs, V, batched=True)
    for b in range(B):
        sep = rev(f, xs, [v[b] for v in V])
        for k, (g, s) in enumerate(zip(got_rb, sep, strict=True)):
            close(g[b], s, tol, f"{name} batched cotangent {b} input {k}")


def check_second(name: str, f: Callable[..., Any], xs: list[np.ndarray]) -> None:
    """Double backward and forward-over-reverse: H u against FD of the gradient (float64)."""
    rng = np.random.default_rng(seed_of(name + "2"))
    us = [randn(rng, x.shape, x.dtype) for x in xs]
    vs = out_dirs(rng, f, xs)

    def grad_at(ys: list[np.ndarray]) -> list[np.ndarray]:
        return rev(f, ys, vs)

    eps = 1e-5
    gp = grad_at([x + eps * u for x, u in zip(xs, us, strict=True)])
    gm = grad_at([x - eps * u for x, u in zip(xs, us, strict=True)])
    want = [(a - b) / (2 * eps) for a, b in zip(gp, gm, strict=True)]

    # rev-over-rev
    ts = [da.tensor(x, requires_grad=True) for x in xs]
    outs = outs_of(f(*ts))
    pairs = [(o, da.tensor(v)) for o, v in zip(outs, vs, strict=True) if o.requires_grad]
    gs = da.grad([o for o, _ in pairs], ts, grad_outputs=[v for _, v in pairs],
                 create_graph=True, materialize_grads=True)
    s = sum((g * da.tensor(u)).sum() for g, u in zip(gs, us, strict=True))
    hv = da.grad(s, ts, allow_unused=True, materialize_grads=True)
    for k, (g, w) in enumerate(zip(hv, want, strict=True)):
        close(A(g), w, 1e-5, f"{name} double backward input {k}")

    # fwd-over-rev
    with da.dual_level():
        ts = [da.tensor(x, requires_grad=True) for x in xs]
        duals = [da.make_dual(t, da.tensor(u)) for t, u in zip(ts, us, strict=True)]
        outs = outs_of(f(*duals))
        pairs = [(o, da.tensor(v)) for o, v in zip(outs, vs, strict=True) if o.requires_grad]
        gs = da.grad([o for o, _ in pairs], duals, grad_outputs=[v for _, v in pairs],
                     materialize_grads=True)
        for k, (g, w) in enumerate(zip(gs, want, strict=True)):
            close(A(da.unpack_dual(g).tangent), w, 1e-5, f"{name} forward-over-reverse {k}")


# ---------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------


def gen(shape: Any) -> Callable[..., np.ndarray]:
    return lambda rng, dt: randn(rng, shape, dt)


def well(shape: Any) -> Callable[..., np.ndarray]:
    """Well-conditioned square matrices."""

    def g(rng: np.random.Generator, dt: Any) -> np.ndarray:
        n = shape[-1]
        return (randn(rng, shape, dt) + n * np.eye(n)).astype(dt)

    return g


def spd(shape: Any) -> Callable[..., np.ndarray]:
    """Hermitian positive definite matrices."""

    def g(rng: np.random.Generator, dt: Any) -> np.ndarray:
        x = randn(rng, shape, dt)
        n = shape[-1]
        return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dt)

    return g


def herm(shape: Any) -> Callable[..., np.ndarray]:
    def g(rng: np.random.Generator, dt: Any) -> np.ndarray:
        x = randn(rng, shape, dt)
        return ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dt)

    return g


def _absq(v: Any) -> Any:
    return (v * v.conj()).real


def eigh_inv(a: Any, UPLO: str = "L") -> Any:
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, _absq(v)  # |V|^2: gauge invariant (phases of eigenvectors)


def svd_inv(a: Any, hermitian: bool = False) -> Any:
    u, s, vh = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    return s, u @ vh, _absq(u), _absq(vh)  # gauge-invariant functions of the factors


# name: (function, input generators, dtype keys, second-order check)
F_C = ("f64", "f32", "c128", "c64")
F_ONLY = ("f64", "f32")
CASES: dict[str, tuple[Callable[..., Any], list[Any], tuple[str, ...], bool]] = {
    "inv": (np.linalg.inv, [well((3, 3))], F_C, True),
    "inv_batched": (np.linalg.inv, [well((2, 3, 3))], F_C, False),
    "solve_vec": (np.linalg.solve, [well((3, 3)), gen((3,))], F_C, True),
    "solve_mat_batched": (np.linalg.solve, [well((2, 3, 3)), gen((2, 3, 2))], F_C, True),
    "solve_broadcast": (np.linalg.solve, [well((2, 3, 3)), gen((3, 2))], F_C, False),
    "solve_vec_batched": (np.linalg.solve, [well((2, 3, 3)), gen((3,))], F_C, False),
    "det": (np.linalg.det, [well((3, 3))], F_C, True),
    "det_batched": (np.linalg.det, [well((2, 3, 3))], F_C, False),
    "slogdet": (np.linalg.slogdet, [well((3, 3))], F_C, True),
    "slogdet_batched": (np.linalg.slogdet, [well((2, 3, 3))], F_C, False),
    "cholesky": (np.linalg.cholesky, [spd((3, 3))], F_C, True),
    "cholesky_batched": (np.linalg.cholesky, [spd((2, 3, 3))], F_C, False),
    "cholesky_upper": (lambda a: np.linalg.cholesky(a, upper=True), [spd((3, 3))], F_C, False),
    "eigh": (np.linalg.eigh, [herm((4, 4))], F_ONLY, True),
    "eigh_batched": (np.linalg.eigh, [herm((2, 3, 3))], F_ONLY, False),
    "eigh_invariant": (eigh_inv, [herm((3, 3))], F_C, True),
    "eigh_upper": (lambda a: eigh_inv(a, "U"), [herm((3, 3))], F_C, False),
    "eigvalsh": (np.linalg.eigvalsh, [herm((2, 3, 3))], F_C, True),
    "eigvalsh_upper": (lambda a: np.linalg.eigvalsh(a, UPLO="U"), [herm((3, 3))], F_C, False),
    "svd_tall": (lambda a: np.linalg.svd(a, full_matrices=False), [gen((4, 3))], F_ONLY, True),
    "svd_wide": (lambda a: np.linalg.svd(a, full_matrices=False), [gen((3, 4))], F_ONLY, False),
    "svd_square_full": (np.linalg.svd, [gen((3, 3))], F_ONLY, False),
    "svd_batched": (lambda a: np.linalg.svd(a, full_matrices=False), [gen((2, 4, 3))], F_ONLY,
                    False),
    "svd_invariant_tall": (svd_inv, [gen((4, 3))], F_C, False),
    "svd_invariant_wide": (svd_inv, [gen((2, 3, 4))], F_C, False),
    "svd_invariant_square": (svd_inv, [gen((3, 3))], F_C, False),
    "svd_hermitian": (lambda a: svd_inv(a, hermitian=True), [herm((3, 3))], F_C, False),
    "svdvals": (lambda a: np.linalg.svd(a, compute_uv=False), [gen((2, 4, 3))], F_C, True),
    "qr_tall": (np.linalg.qr, [gen((4, 3))], F_C, True),
    "qr_square": (np.linalg.qr, [gen((3, 3))], F_C, False),
    "qr_wide": (np.linalg.qr, [gen((3, 4))], F_C, False),
    "qr_batched": (np.linalg.qr, [gen((2, 4, 3))], F_C, False),
    "qr_complete_square": (lambda a: np.linalg.qr(a, mode="complete"), [gen((3, 3))], F_C, False),
    "qr_complete_wide": (lambda a: np.linalg.qr(a, mode="complete"), [gen((2, 4))], F_C, False),
    "qr_r": (lambda a: np.linalg.qr(a, mode="r"), [gen((4, 3))], F_C, False),
    "pinv_tall": (np.linalg.pinv, [gen((4, 3))], F_C, True),
    "pinv_wide": (np.linalg.pinv, [gen((2, 3, 4))], F_C, False),
    "pinv_hermitian": (lambda a: np.linalg.pinv(a, hermitian=True), [herm((3, 3))], F_C, False),
    "pinv_square": (np.linalg.pinv, [well((3, 3))], F_C, False),
    "matrix_power_2": (lambda a: np.linalg.matrix_power(a, 2), [gen((3, 3))], F_C, False),
    "matrix_power_3": (lambda a: np.linalg.matrix_power(a, 3), [gen((2, 3, 3))], F_C, False),
    "matrix_power_5": (lambda a: np.linalg.matrix_power(a, 5), [gen((3, 3))], F_C, True),
    "matrix_power_neg2": (lambda a: np.linalg.matrix_power(a, -2), [well((3, 3))], F_C, False),
    "sort": (lambda x: np.sort(x, axis=-1), [gen((3, 5))], F_ONLY, False),
    "sort_axis0": (lambda x: np.sort(x, axis=0), [gen((4, 3))], F_ONLY, False),
}

NORMS: dict[str, tuple[Any, Any, dict[str, Any]]] = {
    "vec_default": (gen((5,)), None, {}),
    "vec_2_keepdims": (gen((3, 4)), 2, {"axis": 1, "keepdims": True}),
    "vec_1": (gen((5,)), 1, {}),
    "vec_inf": (gen((5,)), np.inf, {}),
    "vec_ninf": (gen((5,)), -np.inf, {}),
    "vec_3": (gen((3, 4)), 3, {"axis": 0}),
    "vec_half": (gen((4,)), 0.5, {}),
    "flat_default": (gen((2, 3, 2)), None, {}),
    "flat_default_keepdims": (gen((2, 3)), None, {"keepdims": True}),
    "mat_fro": (gen((3, 4)), "fro", {}),
    "mat_nuc": (gen((3, 4)), "nuc", {}),
    "mat_2": (gen((4, 3)), 2, {}),
    "mat_m2": (gen((4, 3)), -2, {}),
    "mat_1": (gen((3, 4)), 1, {}),
    "mat_m1": (gen((3, 4)), -1, {}),
    "mat_inf": (gen((3, 4)), np.inf, {}),
    "mat_ninf": (gen((3, 4)), -np.inf, {}),
    "mat_axes_keepdims": (gen((3, 2, 4)), "fro", {"axis": (2, 0), "keepdims": True}),
    "mat_nuc_axes": (gen((3, 2, 4)), "nuc", {"axis": (0, 2)}),
    "mat_1_axes": (gen((3, 2, 4)), 1, {"axis": (2, 0), "keepdims": True}),
}


def _inputs(name: str, gens: list[Any], dkey: str) -> list[np.ndarray]:
    rng = np.random.default_rng(seed_of(name))
    return [g(rng, DTYPES[dkey]) for g in gens]


@pytest.mark.parametrize(
    "name, dkey", [(n, d) for n, c in CASES.items() for d in c[2]]
)
def test_linalg_modes(name: str, dkey: str) -> None:
    f, gens, _, _ = CASES[name]
    check_all(name, f, _inputs(name, gens, dkey), dkey)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[3]])
def test_linalg_second_order(name: str) -> None:
    f, gens, _, _ = CASES[name]
    check_second(name, f, _inputs(name, gens, "f64"))


@pytest.mark.parametrize("name, dkey", [(n, d) for n in NORMS for d in F_C])
def test_norm_modes(name: str, dkey: str) -> None:
    g, ord_, kw = NORMS[name]
    check_all("norm_" + name, lambda x: np.linalg.norm(x, ord_, **kw), _inputs(name, [g], dkey),
              dkey)


@pytest.mark.parametrize("name", ["vec_default", "mat_fro", "mat_nuc"])
def test_norm_second_order(name: str) -> None:
    g, ord_, kw = NORMS[name]
    check_second("norm_" + name, lambda x: np.linalg.norm(x, ord_, **kw),
                 _inputs(name, [g], "f64"))


def test_vector_and_matrix_norm_functions() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4))
    check_all("vector_norm", lambda t: np.linalg.vector_norm(t, axis=(0, 2), ord=3), [x], "f64")
    check_all("matrix_norm", lambda t: np.linalg.matrix_norm(t, ord="nuc", keepdims=True), [x],
              "f64")
    check_all("svdvals_fn", np.linalg.svdvals, [x], "f64")


# ---------------------------------------------------------------------------------------
# values and NumPy semantics
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CASES))
def test_values_match_numpy(name: str) -> None:
    f, gens, dkeys, _ = CASES[name]
    for dkey in dkeys:
        xs = _inputs(name, gens, dkey)
        got = outs_of(f(*[da.tensor(x) for x in xs]))
        want = outs_of(f(*xs))
        for g, w in zip(got, want, strict=True):
            assert isinstance(g, da.Tensor)
            assert A(g).dtype == np.asarray(w).dtype, name
            np.testing.assert_allclose(A(g), w, rtol=1e-5, atol=1e-5)


def test_numpy_dispatch_and_result_types() -> None:
    a = da.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    r = np.linalg.inv(a)
    assert isinstance(r, da.Tensor) and r.grad_fn is not None
    assert r.grad_fn.name() == "InvBackward0"
    w, v = np.linalg.eigh(a)
    res = np.linalg.eigh(a)
    assert res.eigenvalues is res[0] or np.allclose(A(res.eigenvalues), A(w))
    assert hasattr(np.linalg.svd(a), "Vh") and hasattr(np.linalg.qr(a), "R")
    assert hasattr(np.linalg.slogdet(a), "logabsdet")
    # integers are promoted to float64 as NumPy does
    i = dnp.linalg.inv(da.tensor([[2, 0], [0, 4]]))
    assert i.dtype == np.float64
    # non-differentiable results are plain tensors
    rk = np.linalg.matrix_rank(a)
    assert isinstance(rk, da.Tensor) and not rk.requires_grad and int(rk.item()) == 2
    n0 = np.linalg.norm(da.tensor([1.0, 0.0, 2.0], requires_grad=True), 0)
    assert not n0.requires_grad and n0.item() == 2.0
    # matrix_power(., 0) is the identity, with no derivative
    p0 = np.linalg.matrix_power(a, 0)
    np.testing.assert_array_equal(A(p0), np.eye(2))


def test_numpy_errors_kept() -> None:
    with pytest.raises(np.linalg.LinAlgError):
        dnp.linalg.inv(da.tensor([1.0, 2.0]))
    with pytest.raises(np.linalg.LinAlgError):
        dnp.linalg.det(da.ones((2, 3)))
    with pytest.raises(ValueError):
        dnp.linalg.eigh(da.eye(2), UPLO="X")
    with pytest.raises(ValueError):
        dnp.linalg.norm(da.ones(3), "fro")
    with pytest.raises(ValueError):
        dnp.linalg.norm(da.ones((2, 2)), 3)


# ---------------------------------------------------------------------------------------
# degenerate inputs: raise, never a silent NaN
# ---------------------------------------------------------------------------------------


def _repeated_eigs() -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((3, 3)))
    return q @ np.diag([1.0, 1.0, 2.0]) @ q.T


def test_inv_singular_raises() -> None:
    with pytest.raises(np.linalg.LinAlgError):
        dnp.linalg.inv(da.tensor(np.ones((2, 2)), requires_grad=True))


@pytest.mark.parametrize("fn", [np.linalg.det, lambda a: np.linalg.slogdet(a)[1]])
def test_det_singular_derivative_raises(fn: Any) -> None:
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    a = da.tensor(s, requires_grad=True)
    y = fn(a)  # the value itself is fine
    np.testing.assert_allclose(A(y), fn(s))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        da.grad(y, a)
    with da.dual_level(), pytest.raises(np.linalg.LinAlgError, match="singular"):
        fn(da.make_dual(da.tensor(s), da.ones((2, 2))))


def test_eigh_repeated_eigenvalues() -> None:
    s = _repeated_eigs()
    a = da.tensor(s, requires_grad=True)
    w, v = np.linalg.eigh(a)
    # eigenvalue-only losses are fine; their sum has derivative I (trace)
    (g,) = da.grad(w.sum(), a, retain_graph=True)
    np.testing.assert_allclose(A(g), np.eye(3), atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalue"):
        da.grad(v.sum(), a)
    with da.dual_level(), pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalue"):
        np.linalg.eigh(da.make_dual(da.tensor(s), da.tensor(np.eye(3))))
    # eigvalsh never needs eigenvector derivatives
    with da.dual_level():
        wd = np.linalg.eigvalsh(da.make_dual(da.tensor(s), da.tensor(np.eye(3))))
        t = A(da.unpack_dual(wd).tangent)
    np.testing.assert_allclose(t, np.ones(3), atol=1e-12)
    assert np.all(np.isfinite(t))


def test_svd_degenerate() -> None:
    q, _ = np.linalg.qr(np.random.default_rng(2).standard_normal((3, 3)))
    a = da.tensor(2 * q, requires_grad=True)  # all singular values equal 2
    u, s, vh = np.linalg.svd(a)
    (g,) = da.grad(s.sum(), a, retain_graph=True)  # d nuclear norm = U V^H
    np.testing.assert_allclose(A(g), q, atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="repeated singular values"):
        da.grad(u.sum(), a)
    # full_matrices=True on a non-square matrix: U's extra columns have no derivative
    t = da.tensor(np.random.default_rng(3).standard_normal((4, 2)), requires_grad=True)
    u, s, vh = np.linalg.svd(t)
    assert u.shape == (4, 4)
    da.grad(s.sum() + vh.sum(), t, retain_graph=True)
    with pytest.raises(np.linalg.LinAlgError, match="full_matrices=False"):
        da.grad(u.sum(), t)
    # the norms built on singular values stay finite at repeated singular values
    (g2,) = da.grad(np.linalg.norm(a, "nuc"), a)
    assert np.all(np.isfinite(A(g2)))


def test_qr_rank_deficient_raises() -> None:
    s = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    q, r = np.linalg.qr(da.tensor(s, requires_grad=True))
    with pytest.raises(np.linalg.LinAlgError, match="rank"):
        r.sum().backward()


def test_qr_complete_tall_extra_columns_raise() -> None:
    t = da.tensor(np.random.default_rng(4).standard_normal((4, 2)), requires_grad=True)
    q, r = np.linalg.qr(t, mode="complete")
    assert q.shape == (4, 4) and r.shape == (4, 2)
    da.grad(r.sum(), t, retain_graph=True)
    with pytest.raises(np.linalg.LinAlgError, match="mode='reduced'"):
        da.grad(q.sum(), t)


def test_qr_raw_refuses_derivatives() -> None:
    with pytest.raises(NotImplementedError):
        np.linalg.qr(da.tensor(np.eye(2), requires_grad=True), mode="raw")
    h, tau = np.linalg.qr(da.tensor(np.eye(2)), mode="raw")
    assert isinstance(h, da.Tensor)


def test_cholesky_not_positive_definite_raises() -> None:
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(da.tensor([[1.0, 2.0], [2.0, 1.0]], requires_grad=True))


def test_norm_at_zero_is_finite() -> None:
    x = da.zeros(3, requires_grad=True)
    (g,) = da.grad(np.linalg.norm(x), x)
    np.testing.assert_array_equal(A(g), np.zeros(3))


def test_sort_is_a_gather() -> None:
    x = da.tensor([3.0, 1.0, 2.0], requires_grad=True)
    y = np.sort(x)
    np.testing.assert_array_equal(A(y), [1.0, 2.0, 3.0])
    (g,) = da.grad(y, x, grad_outputs=da.tensor([10.0, 20.0, 30.0]))
    np.testing.assert_array_equal(A(g), [30.0, 10.0, 20.0])


@pytest.mark.parametrize("name, fn, dtype", [
    ("argmax", np.argmax, np.int64), ("argmin", np.argmin, np.int64),
    ("argsort", np.argsort, np.int64), ("nonzero", lambda t: np.nonzero(t)[0], np.int64),
    ("less", lambda t: t < 0, np.bool_), ("greater", lambda t: np.greater(t, 0), np.bool_),
    ("equal", lambda t: t == 1.0, np.bool_), ("isfinite", np.isfinite, np.bool_),
    ("isnan", np.isnan, np.bool_), ("floor_divide", lambda t: t // 2.0, np.float64),
    ("matrix_rank", lambda t: np.linalg.matrix_rank(t[None, :]), np.int64),
])
def test_nondifferentiable_results_are_plain(name: str, fn: Any, dtype: Any) -> None:
    x0 = np.array([1.0, -2.0, 3.0])
    x = da.tensor(x0, requires_grad=True)
    r = fn(x)
    assert isinstance(r, da.Tensor) and r.dtype == dtype
    assert not r.requires_grad and r.grad_fn is None
    np.testing.assert_array_equal(np.asarray(r), fn(x0))  # a plain tensor converts freely
    with da.dual_level():
        d = fn(da.make_dual(da.tensor(x0), da.ones(3)))
        assert da.unpack_dual(d).tangent is None


def test_solve_batching_rule_with_batched_matrix() -> None:
    # The rule aligns logical ranks: a batched matrix against an unbatched stack of rhs.
    from dualad.rules.linalg import solve_p

    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 3, 3)) + 3 * np.eye(3)  # batch 4 of (3, 3)
    b = rng.standard_normal((2, 3, 1))  # logical (2, 3, 1), unbatched
    out, nb = solve_p.batch([a, b], [1, 0])
    assert nb == 1 and out.shape == (4, 2, 3, 1)
    for i in range(4):
        np.testing.assert_allclose(out[i], np.linalg.solve(a[i], b), atol=1e-12)
