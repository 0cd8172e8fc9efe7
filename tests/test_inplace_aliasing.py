"""Which results alias their input, and what a write into each does.

NumPy decides what is a view (a basic index, a transpose, a reshape the strides allow, an
einsum that only permutes or takes diagonals) and what is a copy (an advanced index, a
sort, ``tile``, a reshape that must copy). A write into a view changes its base, value and
derivative; a write into a copy changes nothing else, not even the version its source is
at. Every case is checked against its twin written without the aliasing question (an
explicit ``.copy()``, or the out-of-place write), in reverse and forward mode, and where
torch is installed against torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

X0 = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 6.0]])
T0 = np.array([[1.0, -2.0, 0.5], [3.0, 1.5, -1.0]])


def _grad(f, x0):
    x = da.tensor(x0, requires_grad=True)
    f(x).backward()
    return x.grad.numpy()


def _jvp(f, x0, t0):
    with da.dual_level():
        y = f(da.make_dual(da.tensor(x0), da.tensor(t0)))
        return da.unpack_dual(y).tangent.numpy()


# -- a write into a copy leaves its source as it was --------------------------------------

COPIES = {
    "advanced index": lambda x: x[[0, 1]],
    "boolean mask": lambda x: x[x > 1],
    "sort": lambda x: dnp.sort(x),
    "reshape that copies": lambda x: x.T.reshape(6),
    "take": lambda x: dnp.take(x, [0, 1], axis=1),
}


def _write_into(make, twin):
    def f(x):
        b = x * 1
        y = make(b)
        if twin:
            y = y.copy()
        z = b * b  # (saves b: a write that looked like one into b would break backward)
        y[0] = 7.0 * b[0, 0]
        return z.sum() + (y * y).sum() + (b * b * b).sum()
    return f


@pytest.mark.parametrize("name", list(COPIES))
def test_a_write_into_a_copy_does_not_modify_its_source(name):
    f, twin = _write_into(COPIES[name], False), _write_into(COPIES[name], True)
    np.testing.assert_allclose(_grad(f, X0), _grad(twin, X0))
    np.testing.assert_allclose(_jvp(f, X0, T0), _jvp(twin, X0, T0))
    x = da.tensor(X0)
    y = COPIES[name](x)
    v = x._version
    y[0] = 0.0
    assert x._version == v and np.array_equal(x.numpy(), X0)


# -- tile and repeat copy, laid out as NumPy's results ------------------------------------


@pytest.mark.parametrize(("shape", "reps"), [((3,), 2), ((2, 3), (2, 1)), ((2, 3), 1),
                                             ((1,), 3), ((3, 1), (1, 4))])
def test_tile_copies(shape, reps):
    x0 = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    x = da.tensor(x0)
    y = dnp.tile(x, reps)
    x[...] = -1.0  # (a later write into the input does not reach the tiled copy)
    np.testing.assert_array_equal(y.numpy(), np.tile(x0, reps))
    y[(0,) * y.ndim] = 9.0  # (writable, and the input stays as it is)
    assert y.numpy().flat[0] == 9.0 and np.all(x.numpy() == -1.0)

    def f(x, twin):
        b = x * 1
        y = dnp.tile(b, reps)
        y = y.copy() if twin else y
        y[(0,) * y.ndim] = 3.0 * b.reshape(-1)[0]
        return (y * y).sum() + (b * b).sum()

    np.testing.assert_allclose(_grad(lambda x: f(x, False), x0), _grad(lambda x: f(x, True), x0))
    t0 = np.ones(shape)
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), x0, t0),
                               _jvp(lambda x: f(x, True), x0, t0))


@pytest.mark.parametrize(("repeats", "axis"), [(2, 1), (2, None), ([1, 0, 2], 1), (1, 1),
                                               (3, 0)])
def test_repeat_reshapes_to_a_view_where_numpy_does(repeats, axis):
    n = np.repeat(X0, repeats, axis=axis)
    r = dnp.repeat(da.tensor(X0), repeats, axis=axis)
    np.testing.assert_array_equal(r.numpy(), n)
    assert r.numpy().flags.c_contiguous == n.flags.c_contiguous
    flat = r.reshape(-1)
    assert np.shares_memory(flat.numpy(), r.numpy()) == np.shares_memory(n.reshape(-1), n)
    flat[0] = 50.0  # (a write through the reshape reaches the repeated result)
    n.reshape(-1)[0] = 50.0
    np.testing.assert_array_equal(r.numpy(), n)

    def f(x, twin):
        b = x * 1
        y = dnp.repeat(b, repeats, axis=axis)
        if twin:  # the write, out of place
            return (dnp.where(np.arange(y.size).reshape(y.shape) == 0, 5.0 * b[0, 1], y) ** 2
                    ).sum()
        v = y.reshape(-1)
        v[0] = 5.0 * b[0, 1]
        return (y * y).sum()

    np.testing.assert_allclose(_grad(lambda x: f(x, False), X0), _grad(lambda x: f(x, True), X0))
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), X0, T0),
                               _jvp(lambda x: f(x, True), X0, T0))
