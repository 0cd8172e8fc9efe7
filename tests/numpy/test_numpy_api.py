"""NumPy code as people write it (issue 21): arrays built from Tensors, call forms, dtypes.

The derivatives of every function here are checked by the op database; these tests
hold the parts it cannot express: errors, dtypes of mixed-precision calls, and the
behaviour of NumPy's own entry points on Tensors.
"""

import math

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp


def test_np_array_of_differentiated_tensors_raises_and_names_dnp_array():
    x = da.tensor(1.5, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"dualad\.numpy\.array"):
        np.array([x, x * 1.0])
    with da.dual_level():
        y = da.make_dual(da.tensor(1.0), da.tensor(1.0))
        with pytest.raises(RuntimeError, match=r"dualad\.numpy\.array"):
            np.array([y, 2 * y])


def test_dnp_array_of_tensors_is_differentiable_in_both_modes():
    x = da.tensor(1.5, requires_grad=True)
    y = dnp.array([[x, x * x], [2.0, np.float64(3.0)]])
    assert y.shape == (2, 2) and y.dtype == np.float64
    (g,) = da.grad(y.sum(), [x])
    assert g.item() == pytest.approx(1 + 2 * 1.5)
    with da.dual_level():
        d = da.make_dual(da.tensor(2.0), da.tensor(1.0))
        t = da.unpack_dual(dnp.asarray((d, d * d, 1.0))).tangent
    np.testing.assert_allclose(t.numpy(), [1.0, 4.0, 0.0])


def test_as_tensor_stacks_differentiably_and_tensor_copies_without_history():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    a = da.as_tensor([x, 2 * x])
    assert a.requires_grad and a.shape == (2, 2)
    (g,) = da.grad(a.sum(), [x])
    np.testing.assert_allclose(g.numpy(), [3.0, 3.0])
    with pytest.warns(UserWarning, match="drops its derivative"):  # (torch.tensor warns too)
        c = da.tensor([x, 2 * x])  # like torch.tensor: a new leaf holding the values
    assert not c.requires_grad and c.grad_fn is None
    np.testing.assert_allclose(c.numpy(), [[1.0, 2.0], [2.0, 4.0]])


def test_sequences_of_ragged_shapes_raise_value_error():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="inhomogeneous"):
        dnp.array([x, [1.0, 2.0, 3.0]])


def test_mixed_precision_items_take_numpys_dtype():
    x32 = da.tensor([1.0, 2.0], dtype=np.float32, requires_grad=True)
    assert dnp.array([x32, x32]).dtype == np.float32
    # a Python list of floats is float64 in np.array, as NumPy makes it
    assert dnp.array([x32, [1.0, 2.0]]).dtype == np.array(
        [np.ones(2, np.float32), [1.0, 2.0]]).dtype == np.float64
    assert dnp.r_[x32, 2.5].dtype == np.r_[np.ones(2, np.float32), 2.5].dtype == np.float32


@pytest.mark.parametrize("cond", [False, True])
def test_where_with_a_python_bool_keeps_numpys_result_dtype_and_shape(cond):
    x64, x32 = np.ones(3, np.float64), np.ones((2, 3), np.float32)
    want = np.where(cond, x64, x32)
    got = dnp.where(cond, da.tensor(x64, requires_grad=True), da.tensor(x32))
    assert got.dtype == want.dtype == np.float64 and got.shape == want.shape


def test_linspace_with_tensor_endpoints_through_numpy():
    a = da.tensor(1.0, requires_grad=True)
    y = np.linspace(a, 3.0, 5)  # NumPy's own function dispatches (it recursed forever)
    np.testing.assert_allclose(y.detach().numpy(), np.linspace(1.0, 3.0, 5))
    (g,) = da.grad(y.sum(), [a])
    assert g.item() == pytest.approx(np.sum(1 - np.linspace(0, 1, 5)))


def test_reflected_remainder():
    t = da.tensor([0.3, 1.1], requires_grad=True)
    y = 0.7 % t
    np.testing.assert_allclose(y.detach().numpy(), 0.7 % np.array([0.3, 1.1]))
    (g,) = da.grad(y.sum(), [t])
    np.testing.assert_allclose(g.numpy(), -np.floor(0.7 / np.array([0.3, 1.1])))


def test_concatenate_casting_is_checked():
    t = da.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        dnp.concatenate([t, t], dtype=np.int64)
    with pytest.raises(TypeError, match="out= is not supported"):
        dnp.concatenate([t, t], out=np.empty(4))


def test_real_if_close_drops_a_negligible_imaginary_part_only():
    z = da.tensor(np.array([1.0, 2.0]) + 1e-20j, requires_grad=True)
    r = dnp.real_if_close(z)
    assert r.dtype == np.float64
    (g,) = da.grad(r.sum(), [z])
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0])
    assert dnp.real_if_close(da.tensor(np.array([1.0 + 1e-3j]))).dtype == np.complex128


def test_eig_vectors_at_a_repeated_eigenvalue_raise_when_used():
    a = da.tensor(np.array([[2.0, 0.0], [0.0, 2.0]]), requires_grad=True)
    w, v = dnp.linalg.eig(a)
    (g,) = da.grad(w.sum(), [a])  # the eigenvalues' derivative exists
    np.testing.assert_allclose(g.numpy(), np.eye(2))
    w, v = dnp.linalg.eig(a)
    with pytest.raises(np.linalg.LinAlgError, match="repeated eigenvalue"):
        da.grad((v * v).sum(), [a])


def test_atleast_nd_of_several_arrays_returns_a_tuple():
    x = da.tensor(1.0, requires_grad=True)
    out = dnp.atleast_3d(x, [1.0, 2.0])
    assert [o.shape for o in out] == [o.shape for o in np.atleast_3d(1.0, [1.0, 2.0])]


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_variance_is_computed_in_the_dtype_asked_for(name):
    # dtype= was accepted and ignored: a float64 result where NumPy gives float32
    x0 = np.array([1.0, 2.0, 4.0])
    x = da.tensor(x0, requires_grad=True)
    y = getattr(dnp, name)(x, dtype=np.float32)
    want = getattr(np, name)(x0, dtype=np.float32)
    assert y.dtype == want.dtype == np.float32
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-6)
    y.backward()
    d = 2 * (x0 - x0.mean()) / 3  # d var / dx; d std = d var / (2 std)
    g = d if "var" in name else d / (2 * np.sqrt(np.var(x0)))
    np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-6)


# -- the last of NumPy's differentiable functions, call forms and keywords -------------------


def _i1(x):
    """The modified Bessel function of order 1 by its power series (a closed form)."""
    k = np.arange(40)
    lg = np.array([math.lgamma(j + 1) + math.lgamma(j + 2) for j in k])
    return np.sum(np.sign(x)[:, None] * np.exp(
        (2 * k + 1) * np.log(np.abs(x)[:, None] / 2) - lg), axis=1)


def test_i0_values_are_numpys_and_its_derivative_is_i1():
    x = np.array([-9.5, -3.0, -0.4, 0.7, 2.0, 7.99, 8.01, 12.0])
    t = da.tensor(x, requires_grad=True)
    y = dnp.i0(t)
    np.testing.assert_allclose(y.detach().numpy(), np.i0(x), rtol=1e-15)
    (g,) = da.grad(y.sum(), [t])
    np.testing.assert_allclose(g.numpy(), _i1(x), rtol=1e-13)
    (g,) = da.grad(np.i0(t).sum(), [t])  # NumPy's own i0 dispatches to dualad's
    np.testing.assert_allclose(g.numpy(), _i1(x), rtol=1e-13)
    with pytest.raises(TypeError, match="complex"):
        dnp.i0(da.tensor([1j]))


def test_polydiv_quotient_and_remainder_and_the_leading_coefficients_derivative():
    u, v = np.array([2.0, -1.0, 3.0, 0.5]), np.array([1.5, 0.25])
    tu, tv = da.tensor(u, requires_grad=True), da.tensor(v, requires_grad=True)
    q, r = dnp.polydiv(tu, tv)
    for got, want in zip((q, r), np.polydiv(u, v), strict=True):
        np.testing.assert_allclose(got.detach().numpy(), want)
    gu, gv = da.grad(q[0], [tu, tv])  # q0 = u0 / v0
    np.testing.assert_allclose(gu.numpy(), [1 / 1.5, 0, 0, 0])
    np.testing.assert_allclose(gv.numpy(), [-2.0 / 1.5**2, 0])


def test_polyfit_derivative_in_the_data_is_the_pseudo_inverse():
    x = np.array([-1.0, -0.2, 0.3, 0.9, 1.7, 2.2])
    y = da.tensor(np.sin(x), requires_grad=True)
    c = dnp.polyfit(x, y, 2)
    np.testing.assert_allclose(c.detach().numpy(), np.polyfit(x, np.sin(x), 2))
    jac = da.functional.jacobian(lambda yy: dnp.polyfit(x, yy, 2), y)
    np.testing.assert_allclose(jac.numpy(), np.linalg.pinv(np.vander(x, 3)), atol=1e-12)
    (g,) = da.grad(np.polyfit(x, y, 2)[0], [y])  # NumPy's own polyfit dispatches
    np.testing.assert_allclose(g.numpy(), np.linalg.pinv(np.vander(x, 3))[0], atol=1e-12)
    cw, cov = dnp.polyfit(x, y, 1, w=np.linspace(1, 2, 6), cov=True)
    want = np.polyfit(x, np.sin(x), 1, w=np.linspace(1, 2, 6), cov=True)
    np.testing.assert_allclose(cw.detach().numpy(), want[0])
    np.testing.assert_allclose(cov.detach().numpy(), want[1])


def test_sort_complex_is_a_permutation():
    z = np.array([1 + 2j, -1 + 0.5j, 1 - 1j, 0.3 + 0j])
    t = da.tensor(z)
    s = dnp.sort_complex(t)
    np.testing.assert_array_equal(s.numpy(), np.sort_complex(z))
    assert dnp.sort_complex(da.tensor([2.0, 1.0], dtype=np.float32)).dtype == np.sort_complex(
        np.ones(1, np.float32)).dtype
    jac = da.functional.jacobian(dnp.sort_complex, t)
    np.testing.assert_array_equal(jac.numpy(), np.eye(4)[[1, 3, 2, 0]])


def test_choose_and_insert_in_numpys_call_forms():
    c0, c1 = da.tensor([1.0, 2.0, 3.0], requires_grad=True), da.tensor(10.0, requires_grad=True)
    y = dnp.choose([0, 1, 3], [c0, c1], mode="clip")
    np.testing.assert_array_equal(y.detach().numpy(), np.choose([0, 1, 3], [[1, 2, 3], 10],
                                                                mode="clip"))
    g0, g1 = da.grad(y.sum(), [c0, c1])
    np.testing.assert_array_equal(g0.numpy(), [1, 0, 0])
    assert g1.item() == 2
    with pytest.raises(ValueError, match="invalid entry"):
        dnp.choose([2], [c0, c1])
    np.testing.assert_array_equal(dnp.asarray([1, 0, 1]).choose([c0, c1]).detach().numpy(),
                                  [10, 2, 10])
    a = da.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    v = da.tensor([7.0, 8.0], requires_grad=True)
    for obj, axis in ((1, 1), ([0, 2], 1), (slice(0, 4, 3), None), (-1, None)):
        got = dnp.insert(a, obj, v, axis=axis)
        np.testing.assert_array_equal(got.detach().numpy(), np.insert(
            np.arange(6.0).reshape(2, 3), obj, [7.0, 8.0], axis=axis))
    ga, gv = da.grad((dnp.insert(a, [0, 2], v, axis=1) * 2.0).sum(), [a, v])
    np.testing.assert_array_equal(ga.numpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(gv.numpy(), [4.0, 4.0])  # each value inserted in 2 rows


def test_ufuncs_and_operators_stack_sequences_holding_tensors():
    t1, t2 = da.tensor(0.5, requires_grad=True), da.tensor(2.0, requires_grad=True)
    y = dnp.sin([t1, t2])
    g1, g2 = da.grad(y.sum(), [t1, t2])
    assert (g1.item(), g2.item()) == (pytest.approx(np.cos(0.5)), pytest.approx(np.cos(2.0)))
    y = dnp.add([t1, 1.0], t2) + dnp.maximum((t1, t2), 1.0) + t1 * [t2, t1] - (t2, 3.0)
    np.testing.assert_allclose(y.detach().numpy(), [0.5 + 2 + 1 + 1 - 2, 1 + 2 + 2 + 0.25 - 3])
    g1, g2 = da.grad(y.sum(), [t1, t2])
    # d/dt1 = 1 + t2 + 2 t1 (max(t1, 1) is the constant 1), d/dt2 = 1 + 1 + 1 + t1 - 1
    assert (g1.item(), g2.item()) == (pytest.approx(1 + 2 + 2 * 0.5), pytest.approx(2 + 0.5))
    with da.dual_level():
        d = da.make_dual(da.tensor(0.5), da.tensor(1.0))
        out = da.unpack_dual(dnp.multiply([d, 2.0], [3.0, d])).tangent
    np.testing.assert_allclose(out.numpy(), [3.0, 2.0])


def test_quantile_weights_take_inverted_cdf_only_as_numpy():
    a = np.array([[3.0, 1.0, 4.0, 1.5], [0.5, 9.0, 2.0, 6.0]])
    w = np.array([1.0, 0.0, 2.0, 1.0])
    t = da.tensor(a, requires_grad=True)
    y = dnp.quantile(t, [0.2, 0.6], axis=1, weights=w, method="inverted_cdf")
    want = np.quantile(a, [0.2, 0.6], axis=1, weights=w, method="inverted_cdf")
    np.testing.assert_array_equal(y.detach().numpy(), want)
    (g,) = da.grad(y.sum(), [t])  # each quantile is one of the values
    np.testing.assert_array_equal(g.numpy(), (a[None] == want[..., None]).sum(0))
    with pytest.raises(ValueError, match="Only method 'inverted_cdf' supports weights. Got: "
                                         "linear."):
        dnp.percentile(t, 50, axis=1, weights=w)
    with pytest.raises(ValueError, match="non-negative"):
        dnp.nanquantile(t, 0.5, axis=1, weights=-w, method="inverted_cdf")
    with pytest.raises(TypeError, match="Axis must be specified"):
        dnp.quantile(t, 0.5, weights=w, method="inverted_cdf")


def test_interp_period_and_r_c_matrix_directives_and_geomspace_signs():
    x = da.tensor([-3.1, 0.7, 3.75], requires_grad=True)
    xp, fp = np.array([-1.0, 0.4, 1.0, 1.8]), np.array([0.0, 2.0, -1.0, 1.0])
    y = dnp.interp(x, xp, fp, period=2.5)
    np.testing.assert_allclose(y.detach().numpy(), np.interp(x.detach().numpy(), xp, fp,
                                                             period=2.5))
    # modulo 2.5, xp is 0.4, 1, 1.5, 1.8 (fp 2, -1, 0, 1), wrapped to -0.7 and 2.9 (1, 2);
    # x is 1.9, 0.7, 1.25: the slopes of the segments they fall in
    (g,) = da.grad(y.sum(), [x])
    np.testing.assert_allclose(g.numpy(), [1 / 1.1, -3 / 0.6, 1 / 0.5])
    with pytest.raises(ValueError, match="non-zero"):
        dnp.interp(x, xp, fp, period=0)
    a, b = da.tensor([1.0, 2.0]), da.tensor([3.0])
    assert dnp.r_["r", a, b].shape == np.r_["r", [1.0, 2.0], [3.0]].shape == (1, 3)
    assert dnp.r_["c", a, b].shape == np.r_["c", [1.0, 2.0], [3.0]].shape == (3, 1)
    with pytest.raises(TypeError, match="numpy.matrix"):
        dnp.r_["a, b"]
    for s0, s1 in ((-2.0, -50.0), (1 + 1j, -3 + 2j)):
        s = da.tensor(s0, requires_grad=True)
        y = dnp.geomspace(s, s1, 4)
        np.testing.assert_allclose(y.detach().numpy(), np.geomspace(s0, s1, 4))
        # y_1 = s0 (s1/s0)**(1/3): its derivative in s0 (holomorphic) is (2/3) y_1 / s0
        (g,) = da.grad(y[1].real, [s])
        np.testing.assert_allclose(g.numpy(), np.conj(2 / 3 * np.geomspace(s0, s1, 4)[1] / s0))


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("order", ["C", "F", "A"])
def test_reshape_and_ravel_in_every_index_order(order, layout):
    # order="F" raised NotImplementedError; "A" follows the array's layout, as NumPy
    a0 = np.asarray(np.arange(6.0).reshape(2, 3), order=layout)
    a = da.tensor(a0, requires_grad=True)
    y = dnp.reshape(a, (3, 2), order=order)
    np.testing.assert_array_equal(y.detach().numpy(), np.reshape(a0, (3, 2), order=order))
    np.testing.assert_array_equal(dnp.ravel(a, order=order).detach().numpy(),
                                  np.ravel(a0, order=order))
    w = np.arange(1.0, 7.0).reshape(3, 2)
    (y * w).sum().backward()  # the gradient is w read back in the same order
    want = np.reshape(np.reshape(w, -1, order="C"), (2, 3), order="C") if order == "C" or (
        order == "A" and layout == "C") else np.reshape(np.ravel(w, order="F"), (2, 3), order="F")
    np.testing.assert_array_equal(a.grad.numpy(), want)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_reshape_refuses_order_k_as_numpy_and_ravel_takes_it(layout):
    # reshape took "K" as "A"; NumPy refuses it for reshaping (ValueError), not for ravel
    a0 = np.asarray(np.arange(6.0).reshape(2, 3), order=layout)
    with pytest.raises(ValueError):
        np.reshape(a0, (3, 2), order="K")  # (the rule matched)
    a = da.tensor(a0, requires_grad=True)
    for call in (lambda: dnp.reshape(a, (3, 2), order="K"), lambda: a.reshape(3, 2, order="K"),
                 lambda: a.reshape((3, 2), order="K"), lambda: np.reshape(a, (3, 2), order="K")):
        with pytest.raises(ValueError, match="order 'K' is not permitted for reshaping"):
            call()
    for y in (dnp.ravel(a, order="K"), np.ravel(a, order="K")):
        np.testing.assert_array_equal(y.detach().numpy(), np.ravel(a0, order="K"))
    dnp.ravel(a, order="K").sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones((2, 3)))


def test_ravel_order_k_of_a_strided_array_says_what_to_do():
    a = da.tensor(np.arange(12.0).reshape(3, 4))[:, ::2]
    with pytest.raises(NotImplementedError, match="order='C' or 'F'"):
        dnp.ravel(a, order="K")
    with pytest.raises(ValueError, match="order must be one of"):
        dnp.reshape(a, -1, order="X")


@pytest.mark.parametrize("values", [[1, 2, 3], [-5, 0, 7], [True, False, True]])
def test_bitwise_operators_are_numpys(values):
    # &, |, ^ and ~ are bitwise on integers, as NumPy's (they were logical: [1, 2, 3] & 2
    # gave [True, True, True] where NumPy gives [0, 2, 2], and ~[1, 2, 3] gave all False)
    a0 = np.array(values)
    a = da.tensor(a0)
    other = True if a0.dtype == bool else 6
    for got, want in [(a & other, a0 & other), (other & a, other & a0), (a | other, a0 | other),
                      (other | a, other | a0), (a ^ other, a0 ^ other), (~a, ~a0),
                      (a & a, a0 & a0)]:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_bitwise_operators_refuse_floats_as_numpy():
    a = da.tensor([1.0, 2.0])
    for op in (lambda: ~a, lambda: a & 1, lambda: 1 | a, lambda: a ^ a):
        with pytest.raises(TypeError, match="not supported for the input types"):
            op()
