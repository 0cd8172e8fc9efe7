"""NumPy's own functions on Tensors dispatch to dualad (invariant 3 of docs/architecture.md).

``np.sin(t)``, ``np.sum(t, axis=0)``, ``np.einsum`` with a Tensor and an ndarray,
ufunc methods (``np.add.reduce``), Python scalars as weak types, errors for
unsupported NumPy functions and for ``np.asarray`` on a tensor being differentiated.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp


def _x(*shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _fwd(f, x, u):
    """(value, tangent) of f at x along u by forward mode."""
    with da.dual_level():
        p, t = da.unpack_dual(f(da.make_dual(da.tensor(x), da.tensor(u))))
    return p.numpy(), t.numpy()


# ------------------------------------------------------------------ ufuncs and functions


def test_np_sin_on_a_tensor_returns_a_tensor_with_derivatives():
    x, u = _x(2, 3), _x(2, 3, seed=1)
    y = np.sin(da.tensor(x))
    assert isinstance(y, da.Tensor)
    np.testing.assert_allclose(y.numpy(), np.sin(x))
    np.testing.assert_array_equal(y.numpy(), dnp.sin(da.tensor(x)).numpy())
    p, t = _fwd(np.sin, x, u)
    np.testing.assert_allclose(p, np.sin(x))
    np.testing.assert_allclose(t, np.cos(x) * u)
    xl = da.tensor(x, requires_grad=True)
    np.sin(xl).sum().backward()
    np.testing.assert_allclose(xl.grad.numpy(), np.cos(x))


def test_np_sum_with_axis_and_keepdims():
    x = _x(2, 3)
    xl = da.tensor(x, requires_grad=True)
    y = np.sum(xl, axis=0)
    assert isinstance(y, da.Tensor) and y.shape == (3,)
    np.testing.assert_allclose(y.detach().numpy(), x.sum(0))
    assert np.sum(xl, axis=1, keepdims=True).shape == (2, 1)
    (g,) = da.grad(y, xl, grad_outputs=da.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(g.numpy(), np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))
    p, t = _fwd(lambda z: np.sum(z, axis=0), x, np.ones_like(x))
    np.testing.assert_allclose(t, [2.0, 2.0, 2.0])


def test_np_einsum_with_a_tensor_and_an_ndarray():
    a, b = _x(2, 3), _x(3, 4, seed=1)
    al = da.tensor(a, requires_grad=True)
    y = np.einsum("ij,jk->ik", al, b)
    assert isinstance(y, da.Tensor)
    np.testing.assert_allclose(y.detach().numpy(), a @ b)
    v = _x(2, 4, seed=2)
    (g,) = da.grad(y, al, grad_outputs=da.tensor(v))
    np.testing.assert_allclose(g.numpy(), v @ b.T)
    # the ndarray first, the tensor second
    y2 = np.einsum("ij,jk->ik", b.T, da.tensor(a.T))
    np.testing.assert_allclose(y2.numpy(), b.T @ a.T)
    _, t = _fwd(lambda z: np.einsum("ij,jk->ik", z, b), a, np.ones_like(a))
    np.testing.assert_allclose(t, np.ones_like(a) @ b)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("mean", lambda z: np.mean(z, axis=1)),
        ("matmul", lambda z: np.matmul(z, np.ones((3, 2)))),
        ("dot", lambda z: np.dot(np.ones(2), z)),
        ("where", lambda z: np.where(np.array([True, False, True]), z, 0.0)),
        ("concatenate", lambda z: np.concatenate([z, np.zeros((1, 3))])),
        ("clip", lambda z: np.clip(z, -0.5, 0.5)),
        ("transpose", lambda z: np.transpose(z)),
        ("reshape", lambda z: np.reshape(z, (3, 2))),
        ("exp", lambda z: np.exp(z)),
        ("maximum", lambda z: np.maximum(z, 0.1)),
        ("cumsum", lambda z: np.cumsum(z, axis=1)),
        ("std", lambda z: np.std(z)),
        ("outer", lambda z: np.outer(z, np.arange(2.0))),
        ("take", lambda z: np.take(z, [0, 2, 2], axis=1)),
        ("stack", lambda z: np.stack([z, z * 2])),
        ("ndarray+tensor", lambda z: np.ones(3) + z),
        ("ndarray*tensor", lambda z: np.arange(3.0) * z),
        ("ndarray@tensor", lambda z: np.ones((2, 2)) @ z),
    ],
)
def test_numpy_functions_dispatch_with_derivatives(name, call):
    """The result is a Tensor, equals NumPy's value and has NumPy's dtype; forward and
    reverse derivatives agree (Re<v, J u> == Re<J^T v, u>)."""
    x = _x(2, 3)
    out = call(da.tensor(x))
    assert isinstance(out, da.Tensor), f"{name} returned {type(out)}"
    ref = call(x)
    assert out.dtype == ref.dtype
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    u, v = _x(2, 3, seed=1), _x(*ref.shape, seed=2)
    _, t = _fwd(call, x, u)
    xl = da.tensor(x, requires_grad=True)
    (g,) = da.grad(call(xl), xl, grad_outputs=da.tensor(v))
    np.testing.assert_allclose(np.vdot(v, t), np.vdot(g.numpy(), u), rtol=1e-10)


def test_ndarray_on_the_left_defers_to_the_tensor():
    t = da.tensor(_x(3), requires_grad=True)
    for y in (np.ones(3) + t, np.ones(3) * t, np.ones(3) - t, np.ones(3) / (t + 5.0),
              np.ones((2, 3)) @ t):
        assert isinstance(y, da.Tensor)
        assert y.grad_fn is not None


# ------------------------------------------------------------------ weak Python scalars


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize(
    "expr",
    [
        lambda t: t * 2.0, lambda t: 2.0 * t, lambda t: t + 1, lambda t: t - 0.5,
        lambda t: t / 3.0, lambda t: 3.0 / t, lambda t: t ** 2, lambda t: t ** 0.5,
        lambda t: 2.0 ** t, lambda t: t * True, lambda t: np.multiply(t, 2.0),
        lambda t: np.add(1.5, t), lambda t: np.maximum(t.real, 0.5), lambda t: np.where(
            np.array([True, False]), t, 0.0),
        lambda t: np.clip(t.real, 0.0, 1.0), lambda t: t * np.float32(2),
    ],
    ids=["mul", "rmul", "add-int", "sub", "div", "rdiv", "pow-int", "pow-float", "rpow",
         "mul-bool", "np.multiply", "np.add", "np.maximum", "np.where", "np.clip",
         "np.float32-scalar"],
)
def test_python_scalars_are_weak(expr, dtype):
    """float32 tensor * 2.0 stays float32 — whatever NumPy 2 gives for the ndarray."""
    a = np.array([0.5, 1.5], dtype=dtype)
    ref = expr(a)
    out = expr(da.tensor(a))
    assert out.dtype == ref.dtype, f"{out.dtype} != NumPy's {ref.dtype}"
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-6)
    # the tangent and the gradient keep the precision too
    with da.dual_level():
        xd = da.make_dual(da.tensor(a), da.tensor(np.ones_like(a)))
        tan = da.unpack_dual(expr(xd)).tangent
    if tan is not None:
        assert tan.dtype == ref.dtype
    xl = da.tensor(a, requires_grad=True)
    y = expr(xl)
    if y.requires_grad:
        (g,) = da.grad(y, xl, grad_outputs=da.tensor(np.ones(ref.shape, ref.dtype)))
        assert g.dtype == a.dtype


def test_numpy_scalars_and_arrays_are_not_weak():
    t = da.tensor(np.ones(2, np.float32))
    assert (t * np.float64(2.0)).dtype == (np.ones(2, np.float32) * np.float64(2.0)).dtype
    assert (t + np.ones(2)).dtype == np.float64
    assert (t * 1j).dtype == np.complex64


# ------------------------------------------------------------------ ufunc methods


@pytest.mark.parametrize(
    ("call", "ref"),
    [
        (lambda z: np.add.reduce(z), lambda a: a.sum(0)),
        (lambda z: np.add.reduce(z, axis=1), lambda a: a.sum(1)),
        (lambda z: np.add.reduce(z, axis=None, keepdims=True), lambda a: a.sum(keepdims=True)),
        (lambda z: np.multiply.reduce(z, axis=0), lambda a: a.prod(0)),
        (lambda z: np.maximum.reduce(z, axis=1), lambda a: a.max(1)),
        (lambda z: np.minimum.reduce(z), lambda a: a.min(0)),
        (lambda z: np.add.accumulate(z, axis=1), lambda a: np.cumsum(a, 1)),
        (lambda z: np.multiply.accumulate(z), lambda a: np.cumprod(a, 0)),
    ],
    ids=["add.reduce", "add.reduce-axis1", "add.reduce-None-keep", "multiply.reduce",
         "maximum.reduce", "minimum.reduce", "add.accumulate", "multiply.accumulate"],
)
def test_ufunc_methods(call, ref):
    x = _x(3, 4)
    out = call(da.tensor(x))
    assert isinstance(out, da.Tensor)
    np.testing.assert_allclose(out.numpy(), ref(x), rtol=1e-12)
    assert out.shape == call(x).shape
    xl = da.tensor(x, requires_grad=True)
    v = _x(*out.shape, seed=3)
    (g,) = da.grad(call(xl), xl, grad_outputs=da.tensor(v))
    u = _x(3, 4, seed=4)
    _, t = _fwd(call, x, u)
    np.testing.assert_allclose(np.vdot(v, t), np.vdot(g.numpy(), u), rtol=1e-10)


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda t: np.unique(t), "unique"),
        (lambda t: np.histogram(t), "histogram"),
        (lambda t: np.trim_zeros(t), "trim_zeros"),
        (lambda t: np.add.outer(t, t), "outer"),
        (lambda t: np.add.at(t, [0], 1.0), "at"),
        (lambda t: np.sin(t, out=np.empty(3)), "sin"),
        (lambda t: np.sin(t, dtype=np.float32), "sin"),
        (lambda t: np.gcd(t, t), "gcd"),
    ],
    ids=["unique", "histogram", "trim_zeros", "add.outer", "add.at", "sin-out", "sin-dtype",
         "gcd"],
)
def test_unsupported_numpy_function_raises_type_error_naming_it(call, name):
    t = da.tensor(_x(3), requires_grad=True)
    with pytest.raises(TypeError, match=name):
        call(t)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda t: dnp.sin(t, t), "sin takes 1 array argument"),  # NumPy's positional out
        (lambda t: dnp.sin(t, out=np.empty(3)), "out=, where= and dtype= are not supported"),
        (lambda t: dnp.add(t, t, where=t > 0), "out=, where= and dtype= are not supported"),
        (lambda t: dnp.clip(t, 0.0, 1.0, dtype=np.float32), "keyword argument 'dtype'"),
        (lambda t: dnp.add(t), "add takes 2 array argument"),
        (lambda t: dnp.sin(t, casting="no"), "unexpected keyword argument 'casting'"),
    ],
    ids=["extra-array", "out", "where", "ternary-dtype", "missing", "unknown-keyword"],
)
def test_dualad_ufunc_misuse_raises_type_error(call, match):
    t = da.tensor(_x(3), requires_grad=True)
    with pytest.raises(TypeError, match=match):
        call(t)


def test_np_asarray_on_a_tensor_that_requires_grad_raises():
    t = da.tensor(_x(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        np.asarray(t)
    with pytest.raises(RuntimeError, match="detach"):
        np.asarray(t * 2.0)  # a non-leaf too
    np.testing.assert_array_equal(np.asarray(t.detach()), t.detach().numpy())


def test_np_asarray_on_a_dual_tensor_raises():
    with da.dual_level():
        xd = da.make_dual(da.tensor(_x(3)), da.tensor(np.ones(3)))
        with pytest.raises(RuntimeError):
            np.asarray(xd)
        with pytest.raises(RuntimeError):
            np.asarray(np.sin(xd))


def test_np_asarray_on_a_plain_tensor_shares_memory():
    a = _x(3)
    t = da.as_tensor(a)
    b = np.asarray(t)
    assert isinstance(b, np.ndarray)
    assert np.shares_memory(a, b)


def test_numpy_dispatch_inside_nested_levels():
    """np.* functions reach the same apply, so nested dual levels work through them."""
    x = 0.7
    with da.dual_level():
        xo = da.make_dual(da.tensor(x), da.tensor(1.0))
        with da.dual_level():
            xi = da.make_dual(xo, da.tensor(1.0))
            y = np.exp(np.sin(xi))
            _, dy = da.unpack_dual(y)  # d/dx at the inner level
        dy1, d2y = da.unpack_dual(dy)  # and its derivative at the outer level
    s, c = np.sin(x), np.cos(x)
    np.testing.assert_allclose(float(dy1), np.exp(s) * c)
    np.testing.assert_allclose(float(d2y), np.exp(s) * (c * c - s))
