"""NumPy code as people write it (issue 21): arrays built from Tensors, call forms, dtypes.

The derivatives of every function here are checked by the op database; these tests
hold the parts it cannot express: errors, dtypes of mixed-precision calls, and the
behaviour of NumPy's own entry points on Tensors.
"""

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
