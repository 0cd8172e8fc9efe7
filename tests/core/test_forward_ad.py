"""Dual levels: nesting, perturbation confusion, errors, batched tangents."""

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp


def deriv(f):
    """d/dx f at x, by one fresh dual level (composable to any order)."""

    def g(x):
        with da.dual_level():
            return da.unpack_dual(f(da.make_dual(x, da.ones_like(x)))).tangent

    return g


@pytest.mark.parametrize("x0", [-2.0, 0.0, 0.7, 3.0])
def test_perturbation_confusion(x0):
    # d/dx [x * d/dy (x + y)] at y = 1 is 1 for any x (Siskind & Pearlmutter)
    def inner(x):
        return deriv(lambda y: x + y)(da.tensor(1.0))

    assert deriv(lambda x: x * inner(x))(da.tensor(x0)).item() == pytest.approx(1.0)


def test_nested_levels_do_not_mix_when_outer_tensor_enters_inner():
    with da.dual_level():
        x = da.make_dual(da.tensor(2.0), da.tensor(1.0))
        with da.dual_level():
            y = da.make_dual(da.tensor(3.0), da.tensor(1.0))
            z = x * y  # inner tangent dz/dy = x; outer tangent rides inside
            inner_t = da.unpack_dual(z).tangent
            assert inner_t.item() == 2.0
        # after the inner level, z is its primal, dual only at the outer level
        assert da.unpack_dual(inner_t).tangent.item() == 1.0  # d(dz/dy)/dx
        assert da.unpack_dual(z).tangent.item() == 3.0  # dz/dx = y


@pytest.mark.parametrize(
    "f, d3",
    [
        (dnp.sin, lambda x: -np.cos(x)),
        (dnp.exp, np.exp),
        (lambda x: 2 * x**4 - x**3 + 5 * x, lambda x: 48 * x - 6),
    ],
)
def test_third_derivatives_by_three_levels(f, d3):
    for x0 in (-1.3, 0.4, 2.0):
        got = deriv(deriv(deriv(f)))(da.tensor(x0))
        assert got.item() == pytest.approx(d3(x0), rel=1e-12, abs=1e-12)


def test_deep_nesting_fifth_derivative():
    d = dnp.exp
    for _ in range(5):
        d = deriv(d)
    assert d(da.tensor(0.3)).item() == pytest.approx(np.exp(0.3))


def test_level_ids_never_reused_and_exit_strips():
    with da.dual_level() as a:
        x = da.make_dual(da.tensor(1.0), da.tensor(1.0))
    with da.dual_level() as b:
        assert b != a
        # x's level is gone: it behaves as its primal, with no tangent here
        assert da.unpack_dual(x * 2).tangent is None
        assert da.unpack_dual(x).tangent is None


def test_zero_tangent_is_symbolic():
    with da.dual_level():
        y = dnp.sin(da.tensor([1.0, 2.0]))
        assert da.unpack_dual(y).tangent is None


@pytest.mark.fastpath("fast")
def test_flat_duals_from_the_fast_path_behave_as_full_ones():
    # the fast path builds one object per op; its parts appear on demand, once
    x = np.array([0.3, -1.2, 2.0])
    with da.dual_level():
        y = dnp.sin(da.make_dual(da.tensor(x), da.tensor(np.ones(3)))) * 2.0
        assert y._stored_primal is None and y._stored_tangent.__class__ is np.ndarray  # flat
        p1, t1 = da.unpack_dual(y)
        p2, t2 = da.unpack_dual(y)
        assert t1 is t2  # (the primal: a new view each time, as torch's)
        assert p1 is not p2 and p1._data is p2._data
        assert p1._version_cell is p2._version_cell is y._version_cell
        tz = da.unpack_dual(y @ np.array([1.0, 2.0, 3.0])).tangent  # a rule that reads the parts
        y[1] = 0.0  # in place on an unmade dual
        p3, t3 = da.unpack_dual(y)
    np.testing.assert_allclose(tz.numpy(), 2 * np.cos(x) @ [1.0, 2.0, 3.0])
    np.testing.assert_allclose(p3.numpy(), [2 * np.sin(0.3), 0.0, 2 * np.sin(2.0)])
    np.testing.assert_allclose(t3.numpy(), [2 * np.cos(0.3), 0.0, 2 * np.cos(2.0)])


@pytest.mark.parametrize("rg", [False, True], ids=["array rule", "tensor rule"])
@pytest.mark.parametrize("other", [np.array([1, 2, 3]), np.float64(1.0), np.array(1.0), 1j],
                         ids=["int64 array", "float64 scalar", "0-d float64", "python complex"])
def test_a_tangent_is_promoted_with_its_primal(other, rg):
    # NumPy promotes float32 + int64 to float64: the tangent of the sum follows (the
    # promotion is a linear cast), on the array fast path and the Tensor rule alike.
    x0 = np.array([1.0, 2.0, 3.0], np.float32)
    x = da.tensor(x0, requires_grad=rg)
    with da.dual_level():
        d = da.make_dual(x, da.ones_like(x))
        for y, want in ((d + other, np.ones(3)), (other - dnp.sin(d), -np.cos(x0))):
            p, t = da.unpack_dual(y)
            assert t.dtype == p.dtype == np.result_type(np.float32, other)
            np.testing.assert_allclose(t.detach().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("grad_on", [True, False])
def test_tangents_of_a_primal_that_requires_grad(grad_on):
    # with grad mode off nothing can be recorded, so the array-level rule applies
    x0, v = np.array([0.5, 1.0]), np.array([1.0, 2.0])
    x = da.tensor(x0, requires_grad=True)
    with da.dual_level():
        with da.set_grad_enabled(grad_on):
            xd = da.make_dual(x, da.tensor(v))
            y = dnp.sin(xd) * xd
        p, t = da.unpack_dual(y)
        assert y.requires_grad is grad_on and (y.grad_fn is not None) is grad_on
    np.testing.assert_allclose(t.detach().numpy(), (np.cos(x0) * x0 + np.sin(x0)) * v)
    if grad_on:
        (g,) = da.grad(p.sum(), x)
        np.testing.assert_allclose(g.numpy(), np.cos(x0) * x0 + np.sin(x0))


def test_grad_modes_do_not_stop_tangents_but_detach_does():
    with da.dual_level():
        x = da.make_dual(da.tensor(1.0), da.tensor(2.0))
        with da.no_grad():
            assert da.unpack_dual(x * 3).tangent.item() == 6.0
        with da.inference_mode():
            assert da.unpack_dual(x * 3).tangent.item() == 6.0
        assert da.unpack_dual(x.detach() * 3).tangent is None


def test_batched_equals_separate_passes():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((4,))
    T = rng.standard_normal((3, 4))

    def f(x):
        return dnp.tanh(x) * dnp.sum(x**2) + dnp.cumsum(x)[::-1]

    with da.dual_level():
        batched = da.unpack_dual(f(da.make_dual(da.tensor(x0), da.tensor(T), batched=True))).tangent
    for b in range(3):
        with da.dual_level():
            one = da.unpack_dual(f(da.make_dual(da.tensor(x0), da.tensor(T[b])))).tangent
        np.testing.assert_allclose(batched.numpy()[b], one.numpy(), rtol=1e-13)


def test_batched_broadcasting_against_larger_operands():
    # a batched (B, 3) tangent against a (2, 3) coefficient must align after the batch axis
    x0 = np.array([0.1, 0.2, 0.3])
    c = np.arange(6.0).reshape(2, 3)
    with da.dual_level():
        y = da.make_dual(da.tensor(x0), da.eye(3), batched=True) * c
        t = da.unpack_dual(y).tangent.numpy()
    assert t.shape == (3, 2, 3)
    np.testing.assert_allclose(t, np.eye(3)[:, None, :] * c)


def test_errors():
    x = da.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no dual level is live"):
        da.make_dual(x, x)
    with da.dual_level():
        # a wrong shape is torch's RuntimeError; a stack of tangents suggests batched=True
        with pytest.raises(RuntimeError, match="does not match the primal") as e:
            da.make_dual(x, da.tensor([1.0, 2.0, 3.0]))
        assert "batched=True" not in str(e.value)
        with pytest.raises(RuntimeError, match=r"expected \(2,\).*pass batched=True"):
            da.make_dual(x, da.ones((3, 2)))
        with pytest.raises(RuntimeError, match="needs a leading batch axis"):
            da.make_dual(da.tensor(1.0), da.tensor(1.0), batched=True)
        with pytest.raises(ValueError, match="tangents must be floating or complex"):
            da.make_dual(x, np.array([1, 2]))
        with pytest.raises(ValueError, match="only floating and complex"):
            da.make_dual(da.tensor([1, 2]), x)
        with pytest.raises(ValueError, match="complex tangent"):
            da.make_dual(x, np.array([1j, 1j]))
    outer = da.enter_dual_level()
    inner = da.enter_dual_level()
    with pytest.raises(RuntimeError, match="not the innermost"):
        da.exit_dual_level(level=outer)
    da.exit_dual_level(level=inner)
    da.exit_dual_level(level=outer)


def test_only_one_batched_level():
    with da.dual_level():
        da.make_dual(da.tensor([1.0]), da.tensor([[1.0]]), batched=True)
        with da.dual_level():
            with pytest.raises(RuntimeError, match="only one batched level"):
                da.make_dual(da.tensor([1.0]), da.tensor([[1.0]]), batched=True)


def test_numpy_conversion_of_a_dual_raises():
    with da.dual_level():
        x = da.make_dual(da.tensor([1.0]), da.tensor([1.0]))
        with pytest.raises(RuntimeError, match="detach"):
            np.asarray(x)
        with pytest.raises(RuntimeError, match="detach"):
            x.numpy()
        assert x.detach().numpy()[0] == 1.0


def test_forward_ad_module_exports():
    from dualad import forward_ad as fwAD

    assert fwAD.make_dual is da.make_dual
    assert fwAD.UnpackedDualTensor._fields == ("primal", "tangent")
