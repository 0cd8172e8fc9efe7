"""NumPy programs that must compute NumPy's values on Tensors: the idioms of HIPS autograd's
example programs that gave a wrong value or failed (copies, scalars under ``+=``, format
strings, ``full`` of a Tensor, matplotlib).

References: NumPy itself (the same program on ndarrays), closed forms, finite differences
(gradcheck), and the other mode.
"""

import copy

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp

# -- copy.copy / copy.deepcopy copy the data, as NumPy's ------------------------------------


def test_copy_copy_gives_new_memory_as_numpys():
    a = np.array([1.0, 2.0])
    t = da.tensor([1.0, 2.0])
    ca, ct = copy.copy(a), copy.copy(t)
    ca[0] = ct[0] = 9.0
    np.testing.assert_array_equal(t.numpy(), a)  # [1, 2]: the original kept its values
    assert ct.tolist() == [9.0, 2.0]


def test_scipy_odeint_does_not_overwrite_a_tensor_y0():
    """odeint copies y0 with copy.copy and integrates in that memory: a Tensor y0 shared it
    and came back overwritten (an ODE example's loss 11% off, its gradient 98%)."""
    integrate = pytest.importorskip("scipy.integrate")
    y0 = da.tensor([1.0, 0.5])
    ts = np.linspace(0.0, 1.0, 5)
    ys = integrate.odeint(lambda y, t: -y, y0, ts)
    assert y0.tolist() == [1.0, 0.5]
    np.testing.assert_allclose(ys[-1], np.array([1.0, 0.5]) * np.exp(-1.0), rtol=1e-6)


def test_copy_copy_is_differentiable_in_every_mode():
    x = da.tensor([1.0, -2.0], requires_grad=True)
    y = copy.copy(x)
    assert y is not x and y.grad_fn is not None
    (3 * y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.array([1.0, -2.0]))
    with da.dual_level():
        d = da.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, 3.0]))
        np.testing.assert_allclose(da.unpack_dual(copy.copy(d) * 2).tangent.numpy(), [2.0, 6.0])
    assert da.gradcheck(lambda v: copy.copy(v) ** 2, (da.tensor([0.5, 1.5],
                                                                requires_grad=True),),
                        check_forward_ad=True)


def test_copy_deepcopy_of_a_leaf_is_an_independent_leaf_with_its_grad():
    w = da.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    w2 = copy.deepcopy(w)
    assert w2 is not w and w2.is_leaf and w2.requires_grad
    np.testing.assert_array_equal(w2.grad.numpy(), [2.0, 4.0])
    assert w2.grad is not w.grad
    with da.no_grad():
        w2[0] = 7.0
    assert w.tolist() == [1.0, 2.0]
    plain = da.tensor([1.0])
    p2 = copy.deepcopy(plain)
    assert not p2.requires_grad and p2.numpy() is not plain.numpy()


def test_copy_deepcopy_of_a_result_keeps_its_derivative():
    """torch raises for a non-leaf and drops a tangent; NumPy code wants the value, and a
    dropped derivative would be silently wrong: the differentiable copy."""
    x = da.tensor([1.0, 2.0], requires_grad=True)
    state = {"y": x * x}
    state2 = copy.deepcopy(state)
    state2["y"].sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    with da.dual_level():
        d = da.make_dual(da.tensor(2.0), da.tensor(1.0))
        e = copy.deepcopy(d * d)
        assert da.unpack_dual(e).tangent.item() == 4.0


# -- 0-d results act as NumPy's scalars under augmented assignment ----------------------------


def test_a_reduction_result_is_not_changed_through_another_name():
    for lib in (np, dnp):
        n = lib.sum(lib.arange(3.0))
        start = n
        n += 2
        assert float(start) == 3.0 and float(n) == 5.0, lib.__name__


def _layer_offsets(lib):
    """HIPS autograd's convnet WeightsParser: start = self.N; self.N += np.prod(shape)."""

    class WeightsParser:
        def __init__(self):
            self.idxs = {}
            self.N = 0

        def add_weights(self, name, shape):
            start = self.N
            self.N += lib.prod(shape)
            self.idxs[name] = (int(start), int(self.N))

    p = WeightsParser()
    for name, shape in [("w1", (2, 3)), ("b1", (3,)), ("w2", (3, 4)), ("b2", (4,))]:
        p.add_weights(name, lib.asarray(shape))
    return p.idxs


def test_hips_convnet_weights_parser_gets_numpys_offsets():
    assert _layer_offsets(dnp) == _layer_offsets(np) == {
        "w1": (0, 6), "b1": (6, 9), "w2": (9, 21), "b2": (21, 25)}


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**=", "//=", "%="])
def test_every_augmented_operator_rebinds_a_scalar_result(op):
    x = da.tensor([1.5, 2.5, 3.0], requires_grad=True)
    n = dnp.max(x)
    start = n
    ns = {"n": n}
    exec(f"n {op} 2.0", {}, ns)
    assert ns["n"] is not start and start.item() == 3.0
    want = {"+=": 5.0, "-=": 1.0, "*=": 6.0, "/=": 1.5, "**=": 9.0, "//=": 1.0, "%=": 1.0}[op]
    assert ns["n"].item() == want
    if op not in ("//=", "%="):  # (piecewise constant: no derivative to check)
        ns["n"].backward()
        assert x.grad[2].item() != 0.0 and x.grad[:2].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("op", ["&=", "|=", "^="])
def test_logical_augmented_operators_rebind_a_boolean_scalar(op):
    for lib in (np, dnp):
        ns = {"ok": lib.all(lib.ones(2) > 0), "other": lib.any(lib.zeros(2) > 0)}
        ns["start"] = ns["ok"]
        exec(f"ok {op} other", {}, ns)
        assert bool(ns["start"]) is True, lib.__name__
        assert bool(ns["ok"]) is {"&=": False, "|=": True, "^=": True}[op], lib.__name__
    with pytest.raises(TypeError, match=r"ndarray\.__iand__ is not supported"):
        m = dnp.ones(2) > 0  # (in-place bitwise writes into arrays stay refused)
        m &= m


@pytest.mark.parametrize("op", ["&=", "|=", "^="])
def test_bitwise_augmented_operators_rebind_an_integer_scalar(op):
    for lib in (np, dnp):
        ns = {"n": lib.sum(lib.asarray([1, 2, 3]))}
        ns["start"] = ns["n"]
        exec(f"n {op} 5", {}, ns)
        assert int(ns["start"]) == 6, lib.__name__
        assert int(ns["n"]) == {"&=": 4, "|=": 7, "^=": 3}[op], lib.__name__


@pytest.mark.parametrize("make", [
    lambda: dnp.sum(dnp.ones(3)), lambda: dnp.ones((2, 2))[0, 1], lambda: dnp.ones(3)[1],
    lambda: dnp.dot(dnp.ones(2), dnp.ones(2)), lambda: 0 + dnp.prod(dnp.ones(2)),
    lambda: dnp.exp(dnp.sum(dnp.zeros(2))), lambda: dnp.linalg.det(dnp.eye(2)),
], ids=["sum", "index-2d", "index-1d", "dot", "radd", "ufunc", "det"])
def test_0d_results_numpy_returns_as_scalars_rebind(make):
    n = make()
    start = n
    n += 1
    assert start.item() == n.item() - 1


def test_a_scalar_result_keeps_numpys_type_promotion():
    n = dnp.sum(dnp.arange(3))  # an integer scalar
    n += 0.5  # a scalar is rebound to the float result; an int array would refuse the cast
    assert n.dtype == np.float64 and n.item() == 3.5


def test_arrays_the_user_made_are_written_in_place_as_torch_and_numpy_do():
    made = [da.tensor(1.0), da.as_tensor(np.float64(1.0)), da.zeros(()), da.ones(()),
            da.full((), 1.0), dnp.array(1.0), dnp.asarray(1.0), dnp.zeros_like(1.0),
            dnp.copy(dnp.sum(dnp.ones(1))), dnp.sum(dnp.ones(1)).detach(),
            copy.copy(da.tensor(1.0)), da.Tensor(1.0)]
    for i, t in enumerate(made):
        alias = t
        t += 1
        assert t is alias, i
        t[...] = 5.0
        assert alias.item() == 5.0, i


def test_a_0d_view_writes_through_to_its_base():
    b = da.tensor([1.0, 2.0])
    v = b[1:].reshape(())
    v += 1
    assert b.tolist() == [1.0, 3.0]


def test_a_0d_parameter_is_updated_in_place_under_no_grad():
    w = (dnp.sum(dnp.ones(2)) * 0.5).requires_grad_()  # a computed value made a leaf
    params = [w]
    (w * w).backward()
    with da.no_grad():
        w -= 0.1 * w.grad
    assert params[0] is w and abs(w.item() - 0.8) < 1e-12
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w += 1


def test_a_0d_result_that_retains_grad_is_written_in_place_as_torch_does():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = dnp.sum(x * x)
    y.retain_grad()
    alias = y
    y *= 3
    assert y is alias
    y.backward()
    assert y.grad.item() == 1.0 and x.grad.tolist() == [6.0, 12.0]


def test_a_dual_of_a_made_array_is_written_in_place_and_a_dual_result_rebinds():
    with da.dual_level():
        p = da.tensor(1.0)
        d = da.make_dual(p, da.tensor(1.0))
        d *= 3
        assert p.item() == 3.0 and da.unpack_dual(d).tangent.item() == 3.0
        r = d * 1
        start = r
        r += 1
        assert start.item() == 3.0 and da.unpack_dual(r).tangent.item() == 3.0


def test_scalar_rebinding_gives_the_same_derivatives_as_the_out_of_place_program():
    def inplace(x):
        n = dnp.sum(x * x)
        n *= dnp.sum(x)
        n += x[0]
        n **= 2
        return n

    def out_of_place(x):
        n = dnp.sum(x * x) * dnp.sum(x) + x[0]
        return n ** 2

    x = da.tensor([0.5, -1.0, 2.0], requires_grad=True)
    np.testing.assert_allclose(F.hessian(inplace, x).numpy(),
                               F.hessian(out_of_place, x).numpy(), rtol=1e-12)
    assert da.gradcheck(inplace, (x,), check_forward_ad=True)


# -- format ------------------------------------------------------------------------------------


def test_format_of_a_0d_tensor_formats_its_value():
    x = da.tensor([1.0, 2.25], requires_grad=True)
    loss = dnp.sum(x)
    assert f"{loss:.3f}" == f"{np.sum(x.detach().numpy()):.3f}" == "3.250"
    assert f"{loss:>8.2f}|{da.tensor(3):d}|{da.tensor(1 + 2j):.1f}" == "    3.25|3|1.0+2.0j"
    assert f"{loss}" == "3.25"
    with da.dual_level():
        d = da.make_dual(da.tensor(2.0), da.tensor(1.0))
        assert f"{d * d:.2e}" == "4.00e+00"


def test_format_of_an_nd_tensor_takes_only_the_empty_spec():
    t = da.tensor([1.0, 2.0])
    assert f"{t}" == str(t)
    with pytest.raises(TypeError, match=r"unsupported format string '\.3f'.*0-d tensor"):
        f"{t:.3f}"


# -- full / full_like of a Tensor ---------------------------------------------------------------


def test_full_of_a_tensor_that_requires_grad_is_differentiable():
    x = da.tensor(2.0, requires_grad=True)
    y = dnp.full((2, 3), x * x)
    np.testing.assert_array_equal(y.detach().numpy(), np.full((2, 3), 4.0))
    y.sum().backward()
    assert x.grad.item() == 6 * 2 * 2.0  # d/dx sum(full(x^2)) = 6 * 2x
    y[0, 0] = 0.0  # fresh, writable memory
    v = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert da.gradcheck(lambda v: dnp.full((2, 3), v * v), (v,), check_forward_ad=True)
    assert da.gradgradcheck(lambda v: dnp.full((2, 3), v * v), (v,))
    np.testing.assert_allclose(F.jacfwd(lambda v: dnp.full((2, 3), v))(v).numpy(),
                               F.jacrev(lambda v: dnp.full((2, 3), v))(v).numpy())


def test_full_and_full_like_follow_numpys_dtypes_in_forward_mode():
    with da.dual_level():
        d = da.make_dual(da.tensor(1.5), da.tensor(1.0))
        u = da.unpack_dual(dnp.full((2,), d * d, dtype=np.float32))
        assert u.primal.dtype == np.float32 and u.tangent.tolist() == [3.0, 3.0]
        u = da.unpack_dual(dnp.full_like(np.zeros((2, 2)), d))
        assert u.primal.tolist() == [[1.5, 1.5]] * 2 and u.tangent.tolist() == [[1.0, 1.0]] * 2
    # NumPy's full_like casts the fill value to a's dtype
    np.testing.assert_array_equal(dnp.full_like(np.zeros(2, int), da.tensor(2.7)).numpy(),
                                  np.full_like(np.zeros(2, int), 2.7))
    x = da.tensor(2.0, requires_grad=True)
    dnp.full_like(dnp.zeros((3, 2)), x, shape=(4,)).sum().backward()
    assert x.grad.item() == 4.0


# -- matplotlib ---------------------------------------------------------------------------------


@pytest.fixture
def plt():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")


def test_matplotlib_hist_takes_tensor_bins(plt):
    """HIPS's negative_binomial_maxlike: plt.hist(data, bins=np.arange(xm + 1) - 0.5)."""
    data = np.array([0, 1, 1, 2, 2, 2, 5])
    xm = data.max()
    n, bins, _ = plt.hist(data, bins=dnp.arange(xm + 1) - 0.5, density=True)
    want_n, want_bins = np.histogram(data, bins=np.arange(xm + 1) - 0.5, density=True)
    np.testing.assert_allclose(np.asarray(n), want_n)
    np.testing.assert_allclose(np.asarray(bins), want_bins)
    plt.hist(dnp.asarray(data * 1.0), bins=4)


def test_matplotlib_takes_tensor_alpha_where_it_takes_arrays(plt):
    x = dnp.linspace(0.0, 1.0, 5)
    sc = plt.scatter(x, x, alpha=x)
    np.testing.assert_allclose(np.asarray(sc.get_alpha()), x.numpy())
    im = plt.imshow(dnp.ones((2, 2)), alpha=dnp.full((2, 2), 0.5))
    np.testing.assert_allclose(np.asarray(im.get_alpha()), 0.5)
    plt.gcf().canvas.draw()


def test_numpy_functions_refused_for_their_derivative_run_on_values_without_one():
    t = da.tensor([3.0, 1.0, 3.0])
    counts, edges = np.histogram(t, bins=2)
    np.testing.assert_array_equal(np.asarray(counts), [1, 2])
    np.testing.assert_array_equal(np.asarray(np.unique(t)), [1.0, 3.0])
    for tracked in (da.tensor([3.0, 1.0], requires_grad=True),):
        with pytest.raises(TypeError, match="numpy.histogram is not supported.*t.detach"):
            np.histogram(tracked)
    with da.dual_level():
        d = da.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, 1.0]))
        with pytest.raises(TypeError, match="numpy.unique is not supported"):
            np.unique(d)
    with pytest.raises(TypeError, match="numpy.copyto is not supported"):  # (into a Tensor:
        np.copyto(da.tensor([1.0]), np.array([2.0]))  # behind its version counter)


def test_numpy_writes_into_an_ndarray_from_tensors_without_a_derivative():
    np.testing.assert_array_equal(np.full_like(np.zeros(2), da.tensor(3.0)), [3.0, 3.0])
    a = np.zeros(3)
    np.put(a, [0, 2], da.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(a, [1.0, 0.0, 2.0])
    with pytest.raises(TypeError, match="numpy.copyto .*numpy.full_like.*dualad.numpy.full_like"):
        np.full_like(np.zeros(2), da.tensor(3.0, requires_grad=True))
