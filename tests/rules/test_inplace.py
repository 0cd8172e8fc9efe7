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


def _rof(f, x0, v0):
    """d/dx <grad f(x), v> as reverse mode over forward mode: the JVP's gradient."""
    x = da.tensor(x0, requires_grad=True)
    with da.dual_level():
        t = da.unpack_dual(f(da.make_dual(x, da.tensor(v0)))).tangent
    (g,) = da.grad(t, x)
    return g.numpy()


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
    np.testing.assert_allclose(_rof(inplace, x0, t0), _hvp(twin, x0, t0), rtol=1e-10,
                               atol=1e-10)


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


# -- forward mode: aliasing ----------------------------------------------------------------


def test_the_tangent_of_a_view_is_a_view_of_the_tangent_of_its_base():
    with da.dual_level():
        x = da.make_dual(da.tensor([1.0, 2.0, 3.0]), da.tensor([1.0, 1.0, 1.0]))
        h = x * 1.0
        v = h[1:]
        tv = da.unpack_dual(v).tangent
        assert np.shares_memory(tv.numpy(), da.unpack_dual(h).tangent.numpy())
        h *= x  # the base written: the view's tangent follows (2 x t at x = [2, 3])
        np.testing.assert_array_equal(da.unpack_dual(v).tangent.numpy(), [4.0, 6.0])
        assert np.shares_memory(da.unpack_dual(v).tangent.numpy(),
                                da.unpack_dual(h).tangent.numpy())
        v[0] = 0.0  # a constant written through the view: zero tangent there
        np.testing.assert_array_equal(da.unpack_dual(h).tangent.numpy(), [2.0, 0.0, 6.0])


def test_a_dual_written_into_a_view_of_a_plain_buffer_makes_the_buffer_dual():
    buf = dnp.zeros(3)
    v = buf[1:]
    with da.dual_level():
        x = da.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, -1.0]))
        v[...] = x * x
        np.testing.assert_array_equal(buf.detach().numpy(), [0.0, 1.0, 4.0])
        np.testing.assert_array_equal(da.unpack_dual(buf).tangent.numpy(), [0.0, 2.0, -4.0])
    assert da.unpack_dual(buf).tangent is None  # the level exited: a plain tensor again


def test_a_dual_and_its_primal_share_memory_and_version_counter():
    leaf = da.tensor([1.0, 2.0], requires_grad=True)
    x = leaf * 1.0
    with da.dual_level():
        d = da.make_dual(x, da.tensor([1.0, 1.0]))
        v0 = x._version
        d *= 3.0
        assert x._version == d._version > v0
        np.testing.assert_array_equal(da.unpack_dual(d).tangent.numpy(), [3.0, 3.0])
        np.testing.assert_array_equal(x.detach().numpy(), [3.0, 6.0])
    x.sum().backward()  # make_dual's tensor took the write's history too
    np.testing.assert_array_equal(leaf.grad.numpy(), [3.0, 3.0])


def test_unpack_dual_gives_a_new_view_of_the_primal_each_time():
    with da.dual_level():
        d = da.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, 1.0]))
        p1, p2 = da.unpack_dual(d).primal, da.unpack_dual(d).primal
        assert p1 is not p2 and np.shares_memory(p1.numpy(), p2.numpy())
        assert p1._version_cell is d._version_cell
        p1 *= 2.0  # the value changes; the tangent of d stays (the primal carries none)
        np.testing.assert_array_equal(d.detach().numpy(), [2.0, 4.0])
        np.testing.assert_array_equal(da.unpack_dual(d).tangent.numpy(), [1.0, 1.0])
    leaf = da.tensor([1.0, 2.0], requires_grad=True)
    with da.dual_level():
        d = da.make_dual(leaf * 1.0, da.tensor([1.0, 1.0]))
        p = da.unpack_dual(d).primal
        p *= leaf  # through the primal view: d's history is rebased
        (d * 1.0).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [2.0, 4.0])


def test_an_in_place_op_on_a_dual_updates_its_tangent():
    with da.dual_level():
        x = da.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, 0.5]))
        y = x * 1.0
        v = y[1:]
        y **= 2
        y += x
        np.testing.assert_array_equal(da.unpack_dual(y).tangent.numpy(), [3.0, 2.5])
        np.testing.assert_array_equal(da.unpack_dual(v).tangent.numpy(), [2.5])
        np.testing.assert_array_equal(da.unpack_dual(x).tangent.numpy(), [1.0, 0.5])


# -- mark_dirty ------------------------------------------------------------------------------


class Mul7(da.InplaceFunction):
    """Multiplies its input by 7 in place."""

    @staticmethod
    def forward(ctx, x):
        x.numpy()[...] *= 7
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 7

    @staticmethod
    def jvp(ctx, t):
        t *= 7  # updated in place and returned, as torch asks of a dirty input's tangent
        return t


def test_mark_dirty_the_input_is_the_output_with_the_functions_history():
    leaf = da.tensor([1.0, 2.0], requires_grad=True)
    x = leaf * 1.0
    y = Mul7.apply(x)
    assert y is x and x.grad_fn.name() == "Mul7Backward"
    x.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [7.0, 7.0])
    leaf.grad = None
    h = leaf * 1.0
    Mul7.apply(h[1:])  # a view: its base is rebased
    (h * h).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [2.0, 2 * 49 * 2.0])


def test_mark_dirty_with_create_graph():
    leaf = da.tensor([0.5, 1.5], requires_grad=True)
    h = leaf * leaf
    Mul7.apply(h)  # h = 7 l^2
    (g,) = da.grad((h * h).sum(), leaf, create_graph=True)  # 196 l^3
    np.testing.assert_allclose(g.detach().numpy(), 196 * leaf.detach().numpy() ** 3)
    g.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), 588 * leaf.detach().numpy() ** 2)


def test_mark_dirty_in_forward_mode_updates_the_tangent():
    with da.dual_level():
        tangent = da.tensor([1.0, -1.0])
        d = da.make_dual(da.tensor([1.0, 2.0]), tangent)
        assert Mul7.apply(d) is d
        np.testing.assert_array_equal(d.detach().numpy(), [7.0, 14.0])
        np.testing.assert_array_equal(da.unpack_dual(d).tangent.numpy(), [7.0, -7.0])
    np.testing.assert_array_equal(tangent.numpy(), [1.0, -1.0])  # (a copy was written)


def test_mark_dirty_on_a_leaf_that_requires_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable"):
        Mul7.apply(da.tensor([1.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="view of a leaf"):
        Mul7.apply(da.tensor([1.0, 2.0], requires_grad=True)[1:])


def test_mark_dirty_the_seeds_example_catches_the_changed_saved_value():
    class Inplace(da.Function):
        @staticmethod
        def forward(ctx, x):
            x_npy = x.numpy()  # shares storage with x
            x_npy += 1
            ctx.mark_dirty(x)
            return x

        @staticmethod
        @da.once_differentiable
        def backward(ctx, grad_output):
            return grad_output

    a = da.tensor(1.0, requires_grad=True).copy()
    b = a * a
    Inplace.apply(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.backward()


class ExpSavedDirty(da.Function):
    """exp written into its input (ctx.mark_dirty), the input saved for backward: torch
    saves it as the output it became, so backward reads exp(x)."""

    @staticmethod
    def forward(ctx, x):
        x[...] = dnp.exp(x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class ExpSavedDirtyJvp(da.Function):
    """The same with only a jvp, which reads the dirty input saved for forward (reverse
    mode runs it transposed, reading what was saved)."""

    @staticmethod
    def forward(ctx, x):
        x[...] = dnp.exp(x)
        ctx.mark_dirty(x)
        ctx.save_for_forward(x)
        return x

    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return t * y


@pytest.mark.parametrize("fn", [ExpSavedDirty, ExpSavedDirtyJvp])
def test_mark_dirty_a_saved_dirty_input_is_saved_as_the_output_it_became(fn):
    # it raised "modified by an inplace operation" (saved at the input's version, before
    # apply wrote the output into it); torch allows it
    import dualad.functional as F

    x0 = np.array([0.3, -0.2])
    leaf = da.tensor(x0, requires_grad=True)
    y = fn.apply(leaf * 1.0)
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), np.exp(x0), rtol=1e-12)
    np.testing.assert_allclose(_fd_grad(lambda x: dnp.sum(fn.apply(x * 1.0)), x0), np.exp(x0),
                               rtol=1e-7)
    # every second derivative: the saved value is the output, whose derivative is exp(x)
    # (read as the input it would be the identity: jacfwd of jacfwd gave I, silently)
    f = lambda x: dnp.sum(fn.apply(x * 1.0))  # noqa: E731
    H = np.diag(np.exp(x0))
    hows = {
        "hessian, reverse-mode": lambda: F.hessian(f, da.tensor(x0)),
        "hessian, forward-mode": lambda: F.hessian(f, da.tensor(x0),
                                                   outer_jacobian_strategy="forward-mode"),
        "jacrev of jacfwd": lambda: F.jacrev(F.jacfwd(f))(da.tensor(x0)),
        "jacfwd of jacrev": lambda: F.jacfwd(F.jacrev(f))(da.tensor(x0)),
        "hvp": lambda: np.stack([F.hvp(f, da.tensor(x0), da.tensor(e))[1].numpy()
                                 for e in np.eye(2)]),
    }
    if fn is ExpSavedDirty:
        hows["jacfwd of jacfwd"] = lambda: F.jacfwd(F.jacfwd(f))(da.tensor(x0))
    for name, how in hows.items():
        got = how()
        np.testing.assert_allclose(np.asarray(got.detach().numpy() if hasattr(got, "detach")
                                              else got), H, rtol=1e-12, err_msg=name)


def test_mark_dirty_a_saved_dirty_input_as_in_torch():
    # torch 2.13, by hand: backward reads the output (its grad_fn the Function's node), a
    # double backward goes through that node again, a second pass without retain_graph
    # raises, and so does a later in-place change of the output
    class Mul7(da.Function):
        @staticmethod
        def forward(ctx, x):
            x *= 7
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert x.grad_fn.name() == "Mul7Backward"
            return g * x

    leaf = da.tensor([1.0, 2.0], requires_grad=True)
    y = Mul7.apply(leaf * 1.0)
    y.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [7.0, 14.0])
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
    leaf.grad = None
    (g,) = da.grad(Mul7.apply(leaf * 1.0).sum(), leaf, create_graph=True)
    # g is 1 * (the saved output): its backward goes through Mul7Backward again, which
    # returns 1 * the output, [7, 14] (torch's numbers)
    g.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [7.0, 14.0])
    y = Mul7.apply(leaf * 1.0)
    y *= 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    leaf.grad = None
    h = leaf * 1.0
    Mul7.apply(h[1:])  # a view: saved as the output, its base rebased
    (h * h).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [2.0, 392.0])  # (torch's numbers)


def test_mark_dirty_of_a_tensor_not_returned_raises():
    class Forgets(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(RuntimeError, match="not returned"):
        Forgets.apply(da.tensor([1.0], requires_grad=True) * 1.0)


# -- retain_grad -----------------------------------------------------------------------------


def test_retain_grad_then_an_in_place_op_gives_the_gradient_of_the_new_value():
    a = da.tensor([1.0], requires_grad=True)
    b = a * 1.0
    b.retain_grad()
    b *= 2
    b.backward()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0])
    np.testing.assert_array_equal(a.grad.numpy(), [2.0])
    a = da.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    b.retain_grad()
    v = b[0:1]
    v *= 3  # through a view
    b.sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 1.0])


def test_x_op_equals_y_reads_the_old_value_of_x_even_with_create_graph():
    # multiply's rule reads x for y's cotangent: it reads the value before the write (a
    # copy, as torch saves the original self), not a changed saved value
    a = da.tensor([1.5], requires_grad=True)
    b = a * a
    b *= a  # b = a^3
    (g,) = da.grad(b.sum(), a, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [3 * 1.5 ** 2])
    g.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [6 * 1.5])


# -- random programs of views and in-place ops against their copy-based twins ---------------
#
# A program starts from two buffers of shape (3, 4): x * 1 (x the input) and zeros. Each
# step takes a view of a handle (a slice, an integer index, .T, a reshape — which copies
# when the memory does not allow a view, as NumPy's) or writes into one in place (+=, *=,
# -= of another handle of its shape, [key] =, a ufunc's out=). The twin keeps each buffer as a flat
# tensor and each handle as the positions it covers, and writes by out-of-place
# ``setitem`` at those positions: no views at all.

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dualad.rules import linear as _L  # noqa: E402

SHAPE = (3, 4)


def _basic_key(data, shape, allow_int=True):
    ax = data.draw(st.integers(0, len(shape) - 1))
    n = shape[ax]
    if allow_int and data.draw(st.booleans()):
        k: object = data.draw(st.integers(-n, n - 1))
    else:
        a = data.draw(st.integers(0, n - 1))
        k = slice(a, data.draw(st.integers(a + 1, n)), data.draw(st.integers(1, 2)))
    return (slice(None),) * ax + (k,)


@st.composite
def programs(draw):
    handles = [(0, np.arange(12).reshape(SHAPE)), (1, np.arange(12).reshape(SHAPE))]
    n_roots = 2
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        h = draw(st.integers(0, len(handles) - 1))
        root, pm = handles[h]
        kind = draw(st.sampled_from(["view", "view", "iadd", "imul", "iadd_h", "set", "out_add",
                                     "out_sin"]))
        if kind == "view" and pm.ndim:
            op = draw(st.sampled_from(["key", "T", "reshape"]))
            if op == "key":
                arg: object = _basic_key(_Draw(draw), pm.shape)
                new = pm[arg]
            elif op == "T":
                arg = None
                new = pm.T
            else:
                sizes = [(pm.size,)] + [(a, pm.size // a) for a in range(2, pm.size)
                                        if pm.size % a == 0]
                arg = draw(st.sampled_from(sizes))
                new = pm.reshape(arg)
            if not np.shares_memory(new, pm):  # a copy: a buffer of its own
                root, new = n_roots, np.arange(new.size).reshape(new.shape)
                n_roots += 1
            steps.append(("view", h, op, arg))
            handles.append((root, new))
        elif kind in ("iadd", "imul"):
            steps.append((kind, h, draw(st.integers(0, 2)), draw(st.integers(0, 3)),
                          draw(st.sampled_from([0.5, -1.0, 2.0]))))
        elif kind == "iadd_h":
            same = [g for g, (_, q) in enumerate(handles) if q.shape == pm.shape]
            steps.append((kind, h, draw(st.sampled_from(same)),
                          draw(st.sampled_from([0.5, -1.0, 2.0]))))
        elif kind == "out_add":  # out=: another handle of this shape (maybe overlapping)
            same = [g for g, (_, q) in enumerate(handles) if q.shape == pm.shape]
            steps.append((kind, h, draw(st.sampled_from(same)), draw(st.integers(0, 2)),
                          draw(st.integers(0, 3))))
        elif kind == "out_sin":
            steps.append((kind, h))
        elif kind == "set" and pm.ndim:
            steps.append((kind, h, _basic_key(_Draw(draw), pm.shape), draw(st.integers(0, 2)),
                          draw(st.integers(0, 3))))
    return steps


class _Draw:
    """``data.draw`` for ``_basic_key`` inside a composite strategy."""

    def __init__(self, draw):
        self.draw = draw


def _run_inplace(x, steps):
    handles = [x * 1.0, dnp.zeros(SHAPE)]
    for step in steps:
        kind, h = step[0], handles[step[1]]
        if kind == "view":
            op, arg = step[2], step[3]
            handles.append(h[arg] if op == "key" else h.T if op == "T" else h.reshape(arg))
        elif kind == "iadd":
            h += step[4] * dnp.sin(x[step[2], step[3]])
        elif kind == "imul":
            h *= x[step[2], step[3]] * step[4]
        elif kind == "iadd_h":
            h -= handles[step[2]] * step[3]
        elif kind == "out_add":
            # (add saves nothing: multiply would save the other handle, and a later write
            # into it would be the "modified by an inplace operation" error, as in torch)
            assert dnp.add(handles[step[2]], x[step[3], step[4]], out=h) is h
        elif kind == "out_sin":
            np.sin(h, out=(h,))  # (NumPy's own ufunc, on a Tensor: dispatched)
        else:
            h[step[2]] = x[step[3], step[4]] * 3.0
    return sum((k + 1.0) * dnp.sum(h * h) for k, h in enumerate(handles))


def _run_twin(x, steps):
    bufs = [dnp.reshape(x * 1.0, (12,)), dnp.zeros(12)]
    handles = [(0, np.arange(12).reshape(SHAPE)), (1, np.arange(12).reshape(SHAPE))]

    def value(h):
        root, pm = handles[h]
        return dnp.reshape(bufs[root][pm.reshape(-1)], pm.shape)

    def put(h, pm, v):  # bufs[root] with the positions pm replaced by v, out of place
        root = handles[h][0]
        v = dnp.broadcast_to(v, pm.shape) if v.shape != pm.shape else v
        bufs[root] = _L.setitem(bufs[root], dnp.reshape(v, (pm.size,)),
                                idx=_L.Index((pm.reshape(-1),), 1))

    for step in steps:
        kind, h = step[0], step[1]
        root, pm = handles[h]
        if kind == "view":
            op, arg = step[2], step[3]
            new = pm[arg] if op == "key" else pm.T if op == "T" else pm.reshape(arg)
            if not np.shares_memory(new, pm):  # (a copy: its value, as a buffer)
                v = value(h)
                v = v[arg] if op == "key" else v.T if op == "T" else dnp.reshape(v, arg)
                bufs.append(dnp.reshape(v, (new.size,)))
                root, new = len(bufs) - 1, np.arange(new.size).reshape(new.shape)
            handles.append((root, new))
        elif kind == "iadd":
            put(h, pm, value(h) + step[4] * dnp.sin(x[step[2], step[3]]))
        elif kind == "imul":
            put(h, pm, value(h) * (x[step[2], step[3]] * step[4]))
        elif kind == "iadd_h":
            put(h, pm, value(h) - value(step[2]) * step[3])
        elif kind == "out_add":
            put(h, pm, value(step[2]) + x[step[3], step[4]])
        elif kind == "out_sin":
            put(h, pm, dnp.sin(value(h)))
        else:
            put(h, pm[step[2]], dnp.reshape(x[step[3], step[4]] * 3.0, ()))
    return sum((k + 1.0) * dnp.sum(value(k) * value(k)) for k in range(len(handles)))


@given(programs())
def test_random_programs_of_views_and_in_place_ops_equal_their_copy_based_twins(steps):
    x0 = RNG.uniform(0.5, 1.5, SHAPE)
    t0 = RNG.standard_normal(SHAPE)
    f, g = (lambda x: _run_inplace(x, steps)), (lambda x: _run_twin(x, steps))
    np.testing.assert_allclose(f(da.tensor(x0)).item(), g(da.tensor(x0)).item(), rtol=1e-12)
    want = _grad(g, x0)
    np.testing.assert_allclose(_grad(f, x0), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_jvp(f, x0, t0), _jvp(g, x0, t0), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_jvp(g, x0, t0), (want * t0).sum(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_hvp(f, x0, t0), _hvp(g, x0, t0), rtol=1e-10, atol=1e-10)


def test_the_docs_examples_hold():
    import pathlib
    import re
    import textwrap

    text = (pathlib.Path(__file__).parents[2] / "docs" / "inplace.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    ns = {"da": da, "dnp": dnp}
    for b in blocks:
        exec(compile(textwrap.dedent(b), "docs/inplace.md", "exec"), ns)
    np.testing.assert_array_equal(ns["root"].grad.numpy(), [[2, 2], [1, 1]])
    np.testing.assert_array_equal(ns["b"].grad.numpy(), [1.0])
    np.testing.assert_array_equal(ns["a"].grad.numpy(), [2.0])
    np.testing.assert_array_equal(ns["v"].detach().numpy(), [2.0])


# -- the same programs through the functional transforms, nested levels and the general path


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_jacobians_hessians_and_nested_levels_of_a_program_equal_its_twins(name):
    from dualad import functional as F

    inplace, twin = PROGRAMS[name]
    x0 = RNG.uniform(0.5, 1.5, (2, 2))
    for strategy in ("forward-mode", "reverse-mode"):
        for vectorize in (False, True):  # (batched tangents and cotangents through views)
            got = F.jacobian(inplace, da.tensor(x0), vectorize=vectorize, strategy=strategy)
            want = F.jacobian(twin, da.tensor(x0), vectorize=vectorize, strategy=strategy)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(F.hessian(inplace, da.tensor(x0), vectorize=True).numpy(),
                               F.hessian(twin, da.tensor(x0)).numpy(), rtol=1e-12, atol=1e-12)
    t1, t2 = RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2))

    def forward_over_forward(f):
        with da.dual_level() as outer:
            x = da.make_dual(da.tensor(x0), da.tensor(t1))
            with da.dual_level() as inner:
                y = f(da.make_dual(x, da.tensor(t2)))
                t = da.unpack_dual(y, level=inner).tangent
            return da.unpack_dual(t, level=outer).tangent.item()

    np.testing.assert_allclose(forward_over_forward(inplace), forward_over_forward(twin),
                               rtol=1e-12)


def _all_primitives():
    import gc

    from dualad.core.dispatch import Primitive

    return [o for o in gc.get_objects() if isinstance(o, Primitive)]


@pytest.fixture
def general_path():
    """Every primitive without ``apply``'s hot and array-level fast paths: the in-place
    operators (which call ``apply``), views and their replays take the general way. (The
    operators' own generated hot code still runs for plain elementwise ops.)"""
    saved = [(p, p.hot, p.fast) for p in _all_primitives()]
    for p, _, _ in saved:
        p.hot = p.fast = None
    try:
        yield
    finally:
        for p, hot, fast in saved:
            p.hot, p.fast = hot, fast


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_program_equals_its_twin_on_the_general_path(name, general_path):
    inplace, twin = PROGRAMS[name]
    check(inplace, twin, RNG.uniform(0.5, 1.5, (2, 2)))


def test_out_writes_in_place_like_an_in_place_operator():
    leaf = da.tensor([1.0, 2.0], requires_grad=True)
    h = leaf * 1.0
    assert dnp.multiply(h, leaf, out=h) is h  # (multiply reads h: a copy of the old value)
    np.sin(h, out=(h,))
    dnp.add(h[0:1], 1.0, out=h[1:])  # through views of one buffer
    h.sum().backward()
    a = np.array([1.0, 2.0])
    np.testing.assert_allclose(leaf.grad.numpy(), [2 * a[0] * np.cos(a[0] ** 2) * 2, 0.0])
    with pytest.raises(RuntimeError, match="leaf Variable"):
        dnp.sin(leaf, out=leaf)
    with pytest.raises(TypeError, match="same_kind"):  # (NumPy's casting rule)
        dnp.multiply(da.tensor([1, 2]), 1.5, out=da.tensor([1, 2]))
    with pytest.raises(TypeError, match="out="):  # an ndarray would drop the derivative
        dnp.sin(leaf, out=np.empty(2))


def test_a_write_into_the_real_or_imaginary_part_rebases_the_complex_tensor():
    z0 = np.array([1.0 + 2.0j, 3.0 - 1.0j])

    def inplace(z):
        h = z * (1.0 + 1.0j)
        r = h.real  # a view, as NumPy's
        r[0] = dnp.abs(z[1]) ** 2
        i = h.imag
        i *= 3.0
        return dnp.sum(dnp.abs(h) ** 2)

    def twin(z):
        h = z * (1.0 + 1.0j)
        re = dnp.concatenate([dnp.reshape(dnp.abs(z[1]) ** 2, (1,)), dnp.real(h)[1:]])
        return dnp.sum(re ** 2 + (3.0 * dnp.imag(h)) ** 2)

    z = da.tensor(z0, requires_grad=True)
    inplace(z).backward()
    w = da.tensor(z0, requires_grad=True)
    twin(w).backward()
    np.testing.assert_allclose(z.grad.numpy(), w.grad.numpy(), rtol=1e-12)
    t0 = np.array([0.3 - 0.2j, -1.0 + 0.5j])
    np.testing.assert_allclose(_jvp(inplace, z0, t0), _jvp(twin, z0, t0), rtol=1e-12)
    h = da.tensor(z0)
    r = h.real
    assert r._version_cell is h._version_cell
    r[1] = 0.0
    np.testing.assert_array_equal(h.numpy(), [1.0 + 2.0j, -1.0j])
    assert h._version == 1


def test_writes_under_no_grad_and_after_the_level_exited_reach_make_duals_tensor():
    leaf = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = leaf * 2.0
    with da.dual_level():
        d = da.make_dual(h, da.tensor([1.0, 1.0, 1.0]))
        v = d[1:]
        with da.no_grad():  # the tangent follows; the history is kept (not recorded)
            v *= 3.0
        np.testing.assert_array_equal(da.unpack_dual(d).tangent.numpy(), [1.0, 3.0, 3.0])
    v[0] = 7.0  # the level exited: d is its primal, h
    np.testing.assert_array_equal(h.detach().numpy(), [2.0, 7.0, 18.0])
    h.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [2.0, 0.0, 2.0])


def test_a_write_into_the_dual_of_a_view_rebases_the_views_base():
    leaf = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = leaf * 2.0
    with da.dual_level():
        d = da.make_dual(h[0:2], da.tensor([1.0, 1.0]))
        d *= leaf[2]
        np.testing.assert_array_equal(da.unpack_dual(d).tangent.detach().numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(h.detach().numpy(), [6.0, 12.0, 6.0])
    h.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [6.0, 6.0, 2.0 + 2.0 + 4.0])
    with da.dual_level():  # make_dual of a leaf that requires grad: a view of it
        d = da.make_dual(leaf, da.tensor([1.0, 1.0, 1.0]))
        with pytest.raises(RuntimeError, match="leaf Variable"):
            d *= 2.0
