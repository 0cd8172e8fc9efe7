"""In-place operations and views: right (torch's result) or torch's error, in both modes.

Each program that writes in place is checked against its twin written with copies
(out-of-place ``setitem`` and ordinary ops), in reverse mode, forward mode and with
``create_graph=True``, and the twin against finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

RNG = np.random.default_rng(19)


def _fd_grad(f, x0, eps=1e-6):
    g = np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[i] = eps
        g[i] = (f(da.tensor(x0 + e)).item() - f(da.tensor(x0 - e)).item()) / (2 * eps)
    return g


def _grad(f, x0):
    x = da.tensor(x0, requires_grad=True)
    f(x).backward()
    return x.grad.numpy()


def _jvp(f, x0, t0):
    with da.dual_level():
        y = f(da.make_dual(da.tensor(x0), da.tensor(t0)))
        return da.unpack_dual(y).tangent.numpy()


def _hvp(f, x0, v0):
    """d/dx <grad f(x), v> by double backward (create_graph=True)."""
    x = da.tensor(x0, requires_grad=True)
    (g,) = da.grad(f(x), x, create_graph=True)
    ((g * da.tensor(v0)).sum()).backward()
    return x.grad.numpy()


def check(inplace, twin, x0):
    """``inplace`` and ``twin`` agree in value, gradient, JVP and HVP; the twin's gradient
    agrees with finite differences."""
    x0 = np.asarray(x0, dtype=float)
    t0 = RNG.standard_normal(x0.shape)
    np.testing.assert_allclose(inplace(da.tensor(x0)).item(), twin(da.tensor(x0)).item(),
                               rtol=1e-12)
    want = _grad(twin, x0)
    np.testing.assert_allclose(want, _fd_grad(twin, x0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(_grad(inplace, x0), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_jvp(inplace, x0, t0), _jvp(twin, x0, t0), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(_jvp(twin, x0, t0), (want * t0).sum(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_hvp(inplace, x0, t0), _hvp(twin, x0, t0), rtol=1e-12,
                               atol=1e-12)


X22 = [[1.0, 2.0], [3.0, 4.0]]


# -- the example, by hand ----------------------------------------------------------


def test_a_write_through_a_view_rebases_the_base():
    root = da.tensor(X22, requires_grad=True)
    x = root * 1
    v = x[0:1]
    v *= 2
    x.sum().backward()
    np.testing.assert_array_equal(root.grad.numpy(), [[2, 2], [1, 1]])
    with da.dual_level():
        x = da.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, 1.0]))
        v = x[0:1]
        v *= 2
        np.testing.assert_array_equal(da.unpack_dual(x).tangent.numpy(), [2, 1])
        np.testing.assert_array_equal(da.unpack_dual(v).tangent.numpy(), [2])


# -- programs and their copy-based twins ---------------------------------------------------


def _slice_write(x):
    h = x * 1.0
    v = h[0:1]
    v *= dnp.sin(x[1:2])
    return (h * h).sum()


def _slice_write_twin(x):
    h = x * 1.0
    h = dnp.concatenate([h[0:1] * dnp.sin(x[1:2]), h[1:]])
    return (h * h).sum()


def _transpose_write(x):
    h = x * 3.0
    v = h.T
    v[0] += x[:, 1] ** 2  # column 0 of h
    return (h * x).sum()


def _transpose_write_twin(x):
    h = x * 3.0
    h = dnp.stack([h[:, 0] + x[:, 1] ** 2, h[:, 1]], axis=1)
    return (h * x).sum()


def _reshape_write(x):
    h = x * 2.0
    v = h.reshape(4)
    v[1:3] = v[0:2] * 3.0 + x[1, 1]
    return (h ** 2).sum()


def _reshape_write_twin(x):
    f = (x * 2.0).reshape(4)
    f = dnp.concatenate([f[0:1], f[0:2] * 3.0 + x[1, 1], f[3:]])
    return (f ** 2).sum()


def _view_of_view_write(x):
    h = x * 1.0
    w = h.T[1]  # h[:, 1]
    u = w[0:1]  # h[0, 1]
    u *= x[1, 0]
    w += 1.0
    return (h ** 3).sum()


def _view_of_view_write_twin(x):
    c1 = dnp.concatenate([x[0:1, 1] * x[1, 0], x[1:2, 1]]) + 1.0
    h = dnp.stack([x[:, 0], c1], axis=1)
    return (h ** 3).sum()


def _base_write_seen_through_view(x):
    h = x * 1.0
    v = h[1]  # a view taken before the write
    h *= x  # the base written: v's history and value follow
    return (v * dnp.sin(v)).sum() + (h ** 2).sum()


def _base_write_seen_through_view_twin(x):
    h = x * x
    return (h[1] * dnp.sin(h[1])).sum() + (h ** 2).sum()


def _int_index_and_newaxis(x):
    h = x + 0.0
    v = h[None, 1, :]  # shape (1, 2)
    v[0, 1] = x[0, 0] * x[1, 1]
    return (h * h * h).sum()


def _int_index_and_newaxis_twin(x):
    r1 = dnp.stack([x[1, 0], x[0, 0] * x[1, 1]])
    h = dnp.stack([x[0], r1])
    return (h * h * h).sum()


def _untracked_buffer(x):
    buf = dnp.zeros((2, 3))
    row = buf[1]
    row[0:2] = x[0] * x[1]
    col = buf[:, 2]
    col += dnp.exp(x[:, 0])
    return (buf ** 2).sum()


def _untracked_buffer_twin(x):
    r0 = dnp.stack([0.0 * x[0, 0], 0.0 * x[0, 0], dnp.exp(x[0, 0])])
    r1 = dnp.concatenate([x[0] * x[1], dnp.exp(x[1:, 0])])
    return (r0 ** 2).sum() + (r1 ** 2).sum()


def _two_views_one_written(x):
    h = x * 1.0
    a = h[0]
    b = h[:, 0]  # overlaps a at h[0, 0]
    a *= 3.0
    return (b * b).sum() + (a * h).sum()


def _two_views_one_written_twin(x):
    h = dnp.stack([x[0] * 3.0, x[1]])
    return (h[:, 0] * h[:, 0]).sum() + (h[0] * h).sum()


PROGRAMS = {
    "slice": (_slice_write, _slice_write_twin),
    "transpose": (_transpose_write, _transpose_write_twin),
    "reshape": (_reshape_write, _reshape_write_twin),
    "view of a view": (_view_of_view_write, _view_of_view_write_twin),
    "base written, seen through a view": (_base_write_seen_through_view,
                                          _base_write_seen_through_view_twin),
    "int index and newaxis": (_int_index_and_newaxis, _int_index_and_newaxis_twin),
    "untracked buffer": (_untracked_buffer, _untracked_buffer_twin),
    "two overlapping views": (_two_views_one_written, _two_views_one_written_twin),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_program_writing_through_views_equals_its_copy_based_twin(name):
    inplace, twin = PROGRAMS[name]
    check(inplace, twin, RNG.uniform(0.5, 1.5, (2, 2)))


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("write", [
    lambda x: x[0:2].__setitem__(0, 5.0),
    lambda x: x.reshape(3).__iadd__(1.0),
    lambda x: x.T.__imul__(2.0),
    lambda x: x[1:][0:1].__isub__(1.0),
])
def test_a_write_through_a_view_of_a_leaf_that_requires_grad_raises(write):
    x = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf"):
        write(x)
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0, 3.0])
    with da.no_grad():
        write(x)  # allowed, as in torch
    assert not np.array_equal(x.detach().numpy(), [1.0, 2.0, 3.0])


def test_detach_in_place_on_a_view_raises():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    v = h[0:1]
    with pytest.raises(RuntimeError, match="views in-place"):
        v.detach_()
    h.detach_()  # the base itself may be detached
    assert not h.requires_grad


def test_a_view_made_under_no_grad_cannot_be_written_with_grad_on():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    with da.no_grad():
        v = h[0:1]
    with pytest.raises(RuntimeError, match="no_grad mode"):
        v *= 2
    with da.no_grad():
        v *= 2
    h.sum().backward()  # the history was kept as it was: the change is not recorded
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_reshape_to_the_same_shape_is_a_view_not_the_tensor():
    x = da.tensor([1.0, 2.0])
    v = x.reshape(x.shape)
    assert v is not x and dnp.reshape(x, (2,)) is not x and x.T is not x
    v.requires_grad_()
    assert not x.requires_grad  # (on the tensor itself, this would reach x)
    v = x.reshape(2)
    v += 1.0
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0])
    assert x._version == v._version == 1
