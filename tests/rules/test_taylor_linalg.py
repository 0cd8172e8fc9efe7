"""The Taylor-coefficient rules of ``dualad.rules.taylor_linalg`` against independent
references: 3 nested dual levels (a different mode) on random polynomial paths, real and
complex; closed forms (the Neumann series of ``inv(I - t N)``, the determinant of a matrix
linear in ``t``, a polynomial of degree ``n``); mpmath at 40 digits to order 10; the
errors at degenerate inputs; Tensors at a lower dual level as coefficients.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from numpy.linalg import LinAlgError

import dualad as da
from dualad.rules import linalg as L
from dualad.rules import taylor_linalg as TL

from _support.taylor_reference import mp_path, mp_series, nested_series

mp.mp.dps = 40
ORDER = 3


def _series(rng, shape, order=ORDER, cplx=False, shift=0.0):
    out = []
    for _ in range(order + 1):
        a = rng.standard_normal(shape)
        out.append(a + 1j * rng.standard_normal(shape) if cplx else a)
    if shift:
        out[0] = out[0] + shift * np.eye(shape[-1])
    return out


def _spd(rng, n, order=ORDER, cplx=False):
    s = _series(rng, (n, n), order, cplx)
    s[0] = s[0] @ s[0].conj().T + n * np.eye(n)
    return s


def _close(got, want, rtol=1e-11):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert len(g) == len(w)
        for k, (gk, wk) in enumerate(zip(g, w, strict=True)):
            scale = 1 + np.max(np.abs(wk))
            np.testing.assert_allclose(np.asarray(gk), wk, rtol=0, atol=rtol * scale,
                                       err_msg=f"coefficient {k}")


# -- nested dual levels ------------------------------------------------------------------------

CASES = {
    "inv": lambda rng, c: ([_series(rng, (3, 3), cplx=c, shift=3.0)], {}),
    "solve": lambda rng, c: ([_series(rng, (3, 3), cplx=c, shift=3.0),
                              _series(rng, (3, 2), cplx=c)], {}),
    "det": lambda rng, c: ([_series(rng, (3, 3), cplx=c, shift=3.0)], {}),
    "slogdet": lambda rng, c: ([_series(rng, (3, 3), cplx=c, shift=-3.0)], {}),
    "cholesky": lambda rng, c: ([_spd(rng, 3, cplx=c)], {"upper": False}),
    "eigh": lambda rng, c: ([_spd(rng, 3, cplx=c)], {"UPLO": "L"}),
    "eigvalsh": lambda rng, c: ([_spd(rng, 3, cplx=c)], {"UPLO": "U"}),
    "eigvals": lambda rng, c: ([_series(rng, (3, 3), cplx=c)], {}),
    "eig": lambda rng, c: ([_series(rng, (3, 3), cplx=c)], {}),
    "svd": lambda rng, c: ([_series(rng, (4, 3), cplx=c)],
                           {"full_matrices": False, "hermitian": False}),
    "pinv": lambda rng, c: ([_series(rng, (4, 3), cplx=c)], {"rcond": 1e-15, "hermitian": False}),
    "svdvals": lambda rng, c: ([_series(rng, (4, 3), cplx=c)], {}),
    "norm2": lambda rng, c: ([_series(rng, (4, 3), cplx=c)], {"axis": (0,), "keepdims": False}),
    "qr": lambda rng, c: ([_series(rng, (4, 3), cplx=c)], {"mode": "reduced"}),
}
PRIMS = {"inv": L.inv_p, "solve": L.solve_p, "det": L.det_p, "slogdet": L.slogdet_p,
         "cholesky": L.cholesky_p, "eigh": L.eigh_p, "eigvalsh": L.eigvalsh_p,
         "eigvals": L.eigvals_p, "svdvals": L.svdvals_p, "norm2": L.norm2_p, "qr": L.qr_p,
         "eig": L.eig_p, "svd": L.svd_p, "pinv": L.pinv_p}


def test_every_rule_is_checked():
    assert set(CASES) == set(TL.LINALG_TAYLOR_RULES) == set(PRIMS)


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_nested_dual_levels(name, cplx):
    args, params = CASES[name](np.random.default_rng(len(name) + 7 * cplx), cplx)
    got = TL.LINALG_TAYLOR_RULES[name](*args, **params)
    _close(got, nested_series(PRIMS[name], args, ORDER, **params))


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("params", [{"upper": True}, {"UPLO": "U"}, {"UPLO": "L"}])
def test_the_other_triangle(params, cplx):
    # cholesky(upper=True) and eigh(UPLO="U") read the upper triangle only: a path whose lower
    # triangle is anything
    rng = np.random.default_rng(3)
    a = _spd(rng, 4, cplx=cplx)
    a = [c + np.tril(rng.standard_normal((4, 4)), -1) * 0.3 for c in a] if "U" in params.values() \
        or params.get("upper") else a
    name = "cholesky" if "upper" in params else "eigh"
    _close(TL.LINALG_TAYLOR_RULES[name](a, **params),
           nested_series(PRIMS[name], [a], ORDER, **params))


@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (5, 2)])
@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
def test_qr_svd_pinv_of_every_shape(shape, cplx):
    a = _series(np.random.default_rng(sum(shape)), shape, cplx=cplx)
    every = [("qr", {"mode": "reduced"}), ("svdvals", {}),
             ("pinv", {"rcond": 1e-15, "hermitian": False}),
             ("svd", {"full_matrices": shape[0] == shape[1], "hermitian": False})]
    for name, params in every:
        _close(TL.LINALG_TAYLOR_RULES[name](a, **params),
               nested_series(PRIMS[name], [a], ORDER, **params))


def test_solve_with_a_vector_a_constant_matrix_and_stacks():
    rng = np.random.default_rng(11)
    a, b = _series(rng, (2, 3, 3), shift=3.0), _series(rng, (2, 3, 2))
    _close(TL.solve(a, b), nested_series(L.solve_p, [a, b], ORDER))
    _close(TL.solve(a[:1], b), nested_series(L.solve_p, [a[:1], b], ORDER))
    v = [c[0, :, 0] for c in b]
    _close(TL.solve([c[0] for c in a], v), nested_series(L.solve_p, [[c[0] for c in a], v], ORDER))


# -- closed forms ------------------------------------------------------------------------------


def test_inv_of_identity_minus_tn_is_the_neumann_series():
    n_mat = np.random.default_rng(0).standard_normal((4, 4))
    got = TL.inv([np.eye(4), -n_mat] + [np.zeros((4, 4))] * 8)
    power = np.eye(4)
    for k, c in enumerate(got):
        np.testing.assert_allclose(c, power, rtol=1e-12, atol=1e-12 * np.abs(power).max(),
                                   err_msg=f"coefficient {k}")
        power = power @ n_mat


def test_det_of_a_linear_path_is_its_characteristic_polynomial():
    # det(A_0 + t A_1) = det(A_0) det(I + t A_0^-1 A_1): the characteristic polynomial of
    # -A_0^-1 A_1 read backwards (det(I + t B) = sum c_i t^i), degree n, then zeros
    rng = np.random.default_rng(2)
    a0, a1 = rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 3))
    got = TL.det([a0, a1] + [np.zeros((3, 3))] * 6)
    char = np.poly(-np.linalg.solve(a0, a1)) * np.linalg.det(a0)  # (c_i: t^i)
    np.testing.assert_allclose(got[:4], char, rtol=1e-12)
    np.testing.assert_allclose(got[4:], 0, atol=1e-12 * np.abs(char).max())


# -- mpmath at order 10 ------------------------------------------------------------------------

HIGH = 10


def _qr_signed(a, signs):
    """mpmath's reduced QR with ``diag R`` of the signs ``signs`` (NumPy's at ``t = 0``:
    the factors are unique given them)."""
    q, r = mp.qr(a)
    n = a.cols
    q, r = q[:, :n], r[:n, :]
    for i in range(n):
        if r[i, i] * signs[i] < 0:
            for j in range(r.cols):
                r[i, j] = -r[i, j]
            for j in range(q.rows):
                q[j, i] = -q[j, i]
    return q, r


@pytest.mark.parametrize("name", ["inv", "det"])
def test_complex_order_10_against_mpmath(name):
    rng = np.random.default_rng(6)
    a = [0.3 * c for c in _series(rng, (3, 3), order=HIGH, cplx=True, shift=3.0)]
    a[0] = a[0] / 0.3
    path = mp_path(a)
    fn, shape = (mp.inverse, (3, 3)) if name == "inv" else (mp.det, ())
    _close(TL.LINALG_TAYLOR_RULES[name](a), mp_series(lambda t: fn(path(t)), HIGH, shape),
           rtol=1e-9)


@pytest.mark.parametrize("name", ["inv", "det", "cholesky", "eigvalsh", "qr", "slogdet"])
def test_order_10_against_mpmath(name):
    rng = np.random.default_rng(5)
    if name in ("cholesky", "eigvalsh"):
        a = [0.3 * c for c in _spd(rng, 3, order=HIGH)]
        a[0] = a[0] / 0.3
    elif name == "qr":
        a = [0.3 * c for c in _series(rng, (4, 3), order=HIGH)]
        a[0] = a[0] / 0.3
    else:
        a = [0.3 * c for c in _series(rng, (3, 3), order=HIGH, shift=3.0)]
        a[0] = a[0] / 0.3
    path = mp_path(a)
    if name == "inv":
        got, want = TL.inv(a), mp_series(lambda t: mp.inverse(path(t)), HIGH, (3, 3))
    elif name == "det":
        got, want = TL.det(a), mp_series(lambda t: mp.det(path(t)), HIGH, ())
    elif name == "slogdet":
        got = TL.slogdet(a)[1]
        want = mp_series(lambda t: mp.log(abs(mp.det(path(t)))), HIGH, ())
    elif name == "cholesky":
        got = TL.cholesky(a, upper=False)
        want = mp_series(lambda t: mp.cholesky(_lower_read(path(t))), HIGH, (3, 3))
    elif name == "eigvalsh":
        got = TL.eigvalsh(a, UPLO="L")
        want = mp_series(lambda t: sorted(mp.eigsy(_lower_read(path(t)))[0]), HIGH, (3,))
    else:
        got = TL.qr(a, mode="reduced")
        signs = np.sign(np.diagonal(got[1][0]))
        want_q = mp_series(lambda t: _qr_signed(path(t), signs)[0], HIGH, (4, 3))
        want_r = mp_series(lambda t: _qr_signed(path(t), signs)[1], HIGH, (3, 3))
        _close(got, (want_q, want_r), rtol=1e-9)
        return
    _close(got, want, rtol=1e-9)


def _lower_read(a):
    """The symmetric matrix NumPy's cholesky and eigh read from ``a``'s lower triangle."""
    n = a.rows
    out = mp.matrix(n, n)
    for i in range(n):
        for j in range(n):
            out[i, j] = a[max(i, j), min(i, j)]
    return out


# -- errors --------------------------------------------------------------------------------


def test_det_at_a_singular_matrix_raises():
    a0 = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(LinAlgError, match="singular matrix"):
        TL.det([a0, np.eye(2)])
    assert TL.det([a0])[0] == pytest.approx(0.0)  # (the value alone is fine)


def test_repeated_eigenvalues_raise_beyond_what_is_defined():
    s = [np.diag([1.0, 1.0, 2.0]), np.random.default_rng(0).standard_normal((3, 3))]
    with pytest.raises(LinAlgError, match="repeated eigenvalue"):
        TL.eigh(s, UPLO="L")
    # eigenvalues at order 1 exist (the first-order rule's), not beyond
    _close(TL.eigvalsh(s, UPLO="L"), nested_series(L.eigvalsh_p, [s], 1, UPLO="L"))
    with pytest.raises(LinAlgError, match="beyond order 1"):
        TL.eigvalsh(s + [np.eye(3)], UPLO="L")


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
def test_hermitian_svd_and_pinv_read_the_lower_triangle(cplx):
    a = _spd(np.random.default_rng(4), 3, cplx=cplx)
    for name in ("svd", "pinv"):
        params = {"hermitian": True} | ({"full_matrices": False} if name == "svd"
                                        else {"rcond": 1e-15})
        _close(TL.LINALG_TAYLOR_RULES[name](a, **params),
               nested_series(PRIMS[name], [a], ORDER, **params))


def test_svd_and_pinv_raise_where_the_rule_does_not_hold():
    rng = np.random.default_rng(1)
    tall = _series(rng, (4, 2))
    with pytest.raises(LinAlgError, match="full_matrices=False"):
        TL.svd(tall, full_matrices=True, hermitian=False)
    low_rank = [np.outer(np.arange(1.0, 5.0), [1.0, 2.0])] + tall[1:]
    with pytest.raises(LinAlgError, match="zero singular value"):
        TL.svd(low_rank, full_matrices=False, hermitian=False)
    with pytest.raises(LinAlgError, match="rank-deficient"):
        TL.pinv(low_rank, rcond=1e-15, hermitian=False)
    with pytest.raises(LinAlgError, match="repeated eigenvalue"):
        TL.eig([np.diag([1.0, 1.0, 2.0]), rng.standard_normal((3, 3))])


def test_rank_deficient_qr_and_complete_tall_qr_raise():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
    with pytest.raises(LinAlgError, match="full-rank"):
        TL.qr([a, np.ones((3, 2))], mode="reduced")
    with pytest.raises(LinAlgError, match="mode='reduced'"):
        TL.qr([a + np.eye(3, 2), np.ones((3, 2))], mode="complete")


# -- Tensors as coefficients -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["inv", "det", "cholesky", "eigvalsh"])
def test_a_rule_on_dual_tensors_carries_their_tangents(name):
    # forward over Taylor: A_0 a dual number with tangent E, d y_k / d A_0 [E] against
    # central differences of the rule on arrays
    rng = np.random.default_rng(9)
    a = _spd(rng, 3) if name in ("cholesky", "eigvalsh") else _series(rng, (3, 3), shift=3.0)
    e = rng.standard_normal((3, 3))
    e = e + e.T
    params = {"upper": False} if name == "cholesky" else {"UPLO": "L"} if name == "eigvalsh" else {}
    rule = TL.LINALG_TAYLOR_RULES[name]
    with da.dual_level():
        dual = [da.make_dual(da.tensor(a[0]), da.tensor(e))] + [da.tensor(c) for c in a[1:]]
        tangents = [np.asarray(da.unpack_dual(y).tangent._data) for y in rule(dual, **params)]
    h = 1e-6
    up = rule([a[0] + h * e] + a[1:], **params)
    dn = rule([a[0] - h * e] + a[1:], **params)
    for t, u, d in zip(tangents, up, dn, strict=True):
        np.testing.assert_allclose(t, (u - d) / (2 * h), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cplx", [False, True], ids=["real", "complex"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_single_precision_stays_single(name, cplx):
    args, params = CASES[name](np.random.default_rng(0), cplx)
    dt = np.complex64 if cplx else np.float32
    out = TL.LINALG_TAYLOR_RULES[name](*[[c.astype(dt) for c in s] for s in args], **params)
    kinds = {np.asarray(c).dtype for o in (out if isinstance(out, tuple) else (out,)) for c in o}
    assert kinds <= {np.dtype(np.float32), np.dtype(np.complex64)}, kinds
