"""dualad.scipy.linalg: values against SciPy; JVP and VJP against torch.linalg or central
differences; the jvp/vjp identity; a Hessian against differences of the gradient."""

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")
torch = pytest.importorskip("torch")

from _scipy_checks import check_hessian, check_modes  # noqa: E402

import dualad as da  # noqa: E402
from dualad.scipy import linalg as L  # noqa: E402


def _rng(seed):
    return np.random.default_rng(seed)


def _close(got, want, rtol=1e-12):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.max(np.abs(want), initial=0.0))
    assert got.dtype.kind == np.asarray(want).dtype.kind


def _spd(rng, n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# -- values against SciPy ----------------------------------------------------------------------


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("trans", [0, 1, 2, "T"])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_values(lower, trans, unit):
    rng = _rng(1)
    a, b = rng.standard_normal((5, 5)) + 3 * np.eye(5), rng.standard_normal((5, 2))
    a = a + 1j * rng.standard_normal((5, 5)) if trans == 2 else a
    for rhs in (b, b[:, 0]):
        _close(L.solve_triangular(a, rhs, trans=trans, lower=lower, unit_diagonal=unit),
               sl.solve_triangular(a, rhs, trans=trans, lower=lower, unit_diagonal=unit))


@pytest.mark.parametrize("lower", [False, True])
def test_cholesky_and_cho_solve_values(lower):
    rng = _rng(2)
    p = _spd(rng, 4)
    skew = p + rng.standard_normal((4, 4))  # SciPy reads one triangle only
    _close(L.cholesky(skew, lower=lower), sl.cholesky(skew, lower=lower))
    c, low = L.cho_factor(p, lower=lower)
    assert low is lower
    b = rng.standard_normal((4, 3))
    _close(L.cho_solve((c, low), b), sl.cho_solve(sl.cho_factor(p, lower=lower), b))


@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6)])
def test_lu_factor_values_and_pivots(shape):
    a = _rng(3).standard_normal(shape)
    lu, piv = L.lu_factor(a)
    lu_ref, piv_ref = sl.lu_factor(a)
    _close(lu, lu_ref)
    np.testing.assert_array_equal(piv, piv_ref)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve_values(trans):
    rng = _rng(4)
    a = rng.standard_normal((5, 5)) + 1j * rng.standard_normal((5, 5))
    b = rng.standard_normal((5, 2))
    for rhs in (b, b[:, 0]):
        _close(L.lu_solve(L.lu_factor(a), rhs, trans=trans),
               sl.lu_solve(sl.lu_factor(a), rhs, trans=trans))


def test_lu_factor_of_a_singular_matrix_raises_for_its_derivative():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.warns(sl.LinAlgWarning):
        ref, _ = sl.lu_factor(a)
    with pytest.warns(sl.LinAlgWarning):
        _close(L.lu_factor(a)[0], ref)
    with pytest.raises(L.LinAlgError), pytest.warns(sl.LinAlgWarning):
        L.lu_factor(da.tensor(a, requires_grad=True))


@pytest.mark.parametrize("scale", [0.01, 1.0, 8.0, 60.0])
def test_expm_values(scale):
    rng = _rng(5)
    a = scale * rng.standard_normal((5, 5))
    _close(L.expm(a), sl.expm(a), 1e-11)
    c = a + 1j * scale * rng.standard_normal((5, 5))
    _close(L.expm(c), sl.expm(c), 1e-11)
    _close(L.expm(np.stack([a, -a])), np.stack([sl.expm(a), sl.expm(-a)]), 1e-11)


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_sqrtm_logm_values(name):
    rng = _rng(6)
    for a in (_spd(rng, 4), rng.standard_normal((4, 4))):  # the second one is complex-valued
        _close(getattr(L, name)(a), getattr(sl, name)(a))


def test_block_diag_values():
    rng = _rng(7)
    args = (rng.standard_normal((2, 3)), [1, 2], 3.0, rng.standard_normal((3, 1)) * 1j)
    _close(L.block_diag(*args), sl.block_diag(*args))
    _close(L.block_diag(), sl.block_diag())
    with pytest.raises(ValueError, match="dimension greater than 2"):
        L.block_diag(np.ones((2, 2, 2)))


@pytest.mark.parametrize("assume_a", [None, "gen", "sym", "her", "pos", "diagonal",
                                      "tridiagonal", "upper triangular", "lower triangular"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_values(assume_a, lower):
    rng = _rng(8)
    p = _spd(rng, 4)
    a = p + np.triu(rng.standard_normal((4, 4)), 1) if assume_a in ("her", "pos") else (
        rng.standard_normal((4, 4)) + 4 * np.eye(4))
    b = rng.standard_normal((4, 2))
    for rhs in (b, b[:, 0]):
        _close(L.solve(a, rhs, lower=lower, assume_a=assume_a),
               sl.solve(a, rhs, lower=lower, assume_a=assume_a))
    _close(L.solve(a, b, transposed=True), sl.solve(a, b, transposed=True))


def test_inv_det_values():
    a = _rng(9).standard_normal((4, 4))
    _close(L.inv(a), sl.inv(a))
    _close(L.det(a), sl.det(a))


@pytest.mark.parametrize("lower", [False, True])
def test_eigh_values(lower):
    rng = _rng(10)
    a = _spd(rng, 4) + np.triu(rng.standard_normal((4, 4)), 1)
    b = _spd(rng, 4)
    _close(L.eigh(a, lower=lower, eigvals_only=True), sl.eigh(a, lower=lower, eigvals_only=True))
    for bb in (None, b):
        w, v = L.eigh(a, bb, lower=lower)
        w_ref, v_ref = sl.eigh(a, bb, lower=lower)
        _close(w, w_ref, 1e-11)
        _close(np.abs(v.numpy()), np.abs(v_ref), 1e-10)  # (each vector up to its sign)
    _close(L.eigh(a, subset_by_index=(1, 2))[0], sl.eigh(a, subset_by_index=(1, 2))[0])


# -- derivatives -------------------------------------------------------------------------------


def _sym_lower(t):
    return torch.tril(t) + torch.tril(t, -1).mT


def _sym_upper(t):
    return torch.triu(t) + torch.triu(t, 1).mT


TORCH_CASES = {
    "solve_triangular": (
        lambda a, b: L.solve_triangular(a, b, lower=True),
        lambda a, b: torch.linalg.solve_triangular(a, b, upper=False)),
    "solve_triangular_T_unit": (
        lambda a, b: L.solve_triangular(a, b, trans=1, unit_diagonal=True),
        lambda a, b: torch.linalg.solve_triangular(a.mT, b, upper=False, unitriangular=True)),
    "cholesky_upper": (
        lambda a: L.cholesky(a), lambda a: torch.linalg.cholesky(_sym_upper(a), upper=True)),
    "cholesky_lower": (
        lambda a: L.cholesky(a, lower=True), lambda a: torch.linalg.cholesky(_sym_lower(a))),
    "expm": (L.expm, torch.linalg.matrix_exp),
    "expm_scaled": (lambda a: L.expm(9.0 * a), lambda a: torch.linalg.matrix_exp(9.0 * a)),
    "inv": (lambda a: L.inv(a), torch.linalg.inv),
    "det": (lambda a: L.det(a), torch.linalg.det),
    "solve": (lambda a, b: L.solve(a, b), torch.linalg.solve),
    "solve_pos": (lambda a, b: L.solve(a, b, assume_a="pos"),
                  lambda a, b: torch.linalg.solve(_sym_upper(a), b)),
    "eigh_eigvals": (lambda a: L.eigh(a, eigvals_only=True),
                     lambda a: torch.linalg.eigvalsh(_sym_lower(a))),
}


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_derivatives_against_torch(name):
    f, tf = TORCH_CASES[name]
    rng = _rng(len(name))
    a = _spd(rng, 4) / 4 + rng.standard_normal((4, 4)) * 0.1
    xs = [a, rng.standard_normal((4, 3))][: f.__code__.co_argcount]
    check_modes(f, xs, rng, torch_f=tf)


def test_complex_expm_against_torch():
    rng = _rng(11)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    check_modes(L.expm, [a], rng, torch_f=torch.linalg.matrix_exp)


def _cho(a, b):
    return L.cho_solve(L.cho_factor(a, lower=True), b)


def _lu_solve(a, b, trans=0):
    return L.lu_solve(L.lu_factor(a), b, trans=trans)


FD_CASES = {
    "cho_solve": (_cho, 2),
    "lu_factor": (lambda a: L.lu_factor(a)[0], 1),
    "lu_solve": (_lu_solve, 2),
    "lu_solve_T": (lambda a, b: _lu_solve(a, b, trans=1), 2),
    "sqrtm": (L.sqrtm, 1),
    "logm": (L.logm, 1),
    "block_diag": (lambda a, b: L.block_diag(a, b[:, :2], 2.0), 2),
    "eigh_generalized": (lambda a, b: L.eigh(a @ a.mT, b @ b.mT + 4 * np.eye(4),
                                             eigvals_only=True), 2),
}


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_derivatives_against_differences(name):
    f, nargs = FD_CASES[name]
    rng = _rng(len(name) + 100)
    xs = [_spd(rng, 4) / 4 + rng.standard_normal((4, 4)) * 0.1, rng.standard_normal((4, 4))]
    check_modes(f, xs[:nargs], rng)


def test_sqrtm_logm_of_a_real_matrix_with_complex_values():
    rng = _rng(12)
    a = rng.standard_normal((3, 3))
    for f in (L.sqrtm, L.logm):
        check_modes(f, [a], rng)


def test_sqrtm_of_a_singular_matrix_raises_for_its_derivative():
    a = da.tensor(np.diag([1.0, 0.0]), requires_grad=True)
    with pytest.raises(L.LinAlgError), pytest.warns(sl.LinAlgWarning):
        L.sqrtm(a).sum().backward()


HESSIAN_CASES = {
    "solve_triangular": lambda a: L.solve_triangular(a + 3 * np.eye(3), np.ones(3)),
    "cholesky": lambda a: L.cholesky(a @ a.mT + np.eye(3)),
    "lu_factor_solve": lambda a: _lu_solve(a + 3 * np.eye(3), np.arange(3.0)),
    "expm": L.expm,
    "sqrtm": lambda a: L.sqrtm(a @ a.mT + np.eye(3)),
    "logm": lambda a: L.logm(a @ a.mT + np.eye(3)),
    "block_diag": lambda a: L.block_diag(a, a * a),
    "inv_det": lambda a: L.inv(a + 3 * np.eye(3)) * L.det(a + 3 * np.eye(3)),
    "solve_sym": lambda a: L.solve(a + 3 * np.eye(3), np.ones(3), assume_a="sym"),
    "eigh": lambda a: L.eigh(a + a.mT, eigvals_only=True),
}


@pytest.mark.parametrize("name", sorted(HESSIAN_CASES))
def test_second_order(name):
    rng = _rng(len(name) + 200)
    check_hessian(HESSIAN_CASES[name], rng.standard_normal((3, 3)) * 0.5, rng)
