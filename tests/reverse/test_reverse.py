"""Reverse mode: the engine's semantics, torch's errors, complex convention, memory, threads."""

import gc
import threading
import weakref

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp


def test_complex_abs_squared_convention():
    z = da.tensor(3 + 4j, requires_grad=True)
    (z * z.conj()).real.backward()
    assert z.grad.item() == pytest.approx(6 + 8j)
    z2 = da.tensor(3 + 4j, requires_grad=True)
    (dnp.abs(z2) ** 2).backward()
    assert z2.grad.item() == pytest.approx(6 + 8j)


@pytest.mark.parametrize("f, df", [(dnp.exp, np.exp), (dnp.sin, np.cos),
                                   (lambda z: z**3, lambda z: 3 * z**2)])
def test_holomorphic_gives_conj_derivative_times_grad_out(f, df):
    z0, g = 0.3 - 0.8j, 1.5 + 0.5j
    z = da.tensor(z0, requires_grad=True)
    (gz,) = da.grad(f(z), z, grad_outputs=da.tensor(g))
    assert gz.item() == pytest.approx(np.conj(df(z0)) * g)


def test_real_to_complex_and_complex_to_real_boundaries():
    x = da.tensor(0.7, requires_grad=True)
    # R -> C -> R: L = |exp(i x)|^2 + Re(exp(i x)) ; dL/dx = -sin x
    w = dnp.exp(x * 1j)
    (gx,) = da.grad(dnp.abs(w) ** 2 + w.real, x)
    assert gx.dtype == np.float64
    assert gx.item() == pytest.approx(-np.sin(0.7))
    z = da.tensor(1.0 + 2.0j, requires_grad=True)
    (gz,) = da.grad(dnp.angle(z), z)  # C -> R: grad = d/dx + i d/dy of atan2(y, x)
    assert gz.item() == pytest.approx(-2 / 5 + 1j * (1 / 5))


def test_implicit_grad_needs_scalar_and_requires_grad():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        da.tensor(1.0).backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(da.tensor([1.0]))


def test_second_backward_through_freed_graph():
    x = da.tensor(1.0, requires_grad=True)
    y = dnp.exp(x)
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == pytest.approx(2 * np.e)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_graph_that_saved_nothing_can_be_walked_again():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 3.0).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_a_python_scalar_is_a_constant_of_the_node_not_a_saved_value():
    # multiply reads its other operand; a Python scalar there is kept as the node's
    # constant, so nothing is released and the graph can be walked again (a Tensor
    # operand is a saved value: released after the first backward)
    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 3.0 + 1.5 * x).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [9.0, 9.0])
    z = (x * da.tensor([3.0, 3.0])).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


def test_requires_grad_on_integer_raises():
    with pytest.raises(RuntimeError, match="floating point and complex"):
        da.tensor([1, 2], requires_grad=True)


def test_allow_unused():
    x = da.tensor(1.0, requires_grad=True)
    u = da.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        da.grad(x * 2, [x, u])
    gx, gu = da.grad(x * 2, [x, u], allow_unused=True)
    assert gx.item() == 2.0 and gu is None
    _, gu = da.grad(x * 2, [x, u], materialize_grads=True)
    assert gu.item() == 0.0


def test_grad_of_non_leaf_and_retain_grad():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    (gh,) = da.grad((h**2).sum(), h, retain_graph=True)
    np.testing.assert_allclose(gh.numpy(), [6.0, 12.0])
    (h**2).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])


def test_hooks_replace_gradient_and_remove():
    x = da.tensor([1.0], requires_grad=True)
    h = x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    assert x.grad.item() == 20.0
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.item() == 2.0
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.item()))
    (x * 2).sum().backward()
    assert seen == [4.0]


def test_grad_layout_matches_leaf_and_accumulates_in_place():
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    x = da.as_tensor(a).requires_grad_()
    (x * x).sum().backward()
    assert x.grad.numpy().flags.f_contiguous
    g = x.grad
    (x * x).sum().backward()
    assert x.grad is g  # accumulated in place
    np.testing.assert_allclose(g.numpy(), 4 * a)


def test_create_graph_double_backward():
    x = da.tensor(0.5, requires_grad=True)
    (g,) = da.grad(dnp.sin(x) * x**2, x, create_graph=True)
    (gg,) = da.grad(g, x)
    expect = -np.sin(0.5) * 0.25 + 4 * np.cos(0.5) * 0.5 + 2 * np.sin(0.5)
    assert gg.item() == pytest.approx(expect)


def test_forward_over_reverse_hvp():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((3, 3))
    A = A + A.T
    x = da.tensor(rng.standard_normal(3), requires_grad=True)
    v = rng.standard_normal(3)
    with da.dual_level():
        xd = da.make_dual(x, da.tensor(v))
        y = 0.5 * (xd @ (A @ xd)) + dnp.sum(xd**3)
        (g,) = da.grad(y, xd)
        hv = da.unpack_dual(g).tangent.numpy()
    np.testing.assert_allclose(hv, A @ v + 6 * x.detach().numpy() * v, rtol=1e-12)


def test_reverse_over_forward():
    x = da.tensor(0.9, requires_grad=True)
    with da.dual_level():
        y = dnp.sin(da.make_dual(x, da.tensor(1.0))) ** 2
        t = da.unpack_dual(y).tangent  # d/dx sin^2 = sin(2x)
    (g,) = da.grad(t, x)
    assert g.item() == pytest.approx(2 * np.cos(1.8))


def test_inplace_change_of_saved_value_is_caught():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    y = dnp.exp(h)  # saves its output
    y2 = (h * h).sum()  # saves h
    h[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y2.backward()
    _ = y


@pytest.mark.parametrize("how", ["setitem", "iadd", "view", "detach"])
@pytest.mark.parametrize("which", ["input", "output"])
def test_inplace_change_after_saving_is_caught_however_made(how, which):
    # a value saved with no version counter yet must still see later changes
    x = da.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    y = dnp.sin(h) if which == "input" else dnp.exp(h)  # sin saves h, exp its output
    target = h if which == "input" else y
    if how == "setitem":
        target[0] = 5.0
    elif how == "iadd":
        target += 1.0
    elif how == "view":
        target[1:][0] = 5.0
    else:
        target.detach()[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_on_leaf_that_requires_grad_raises():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x[0] = 3.0
    with da.no_grad():
        x[0] = 3.0  # allowed, as in torch
    assert x.detach().numpy()[0] == 3.0


def test_an_in_place_write_into_a_read_only_gradient_says_to_copy():
    # the gradient of a sum holds one value for every element (read-only, as torch's is
    # an expanded tensor): writing into it says what to do; its copy takes the write
    x = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = da.grad(dnp.sum(x), x)
    for write in (lambda t: t.__setitem__(0, 5.0), lambda t: t.__iadd__(1.0)):
        with pytest.raises(ValueError, match=r"read-only.*t = t\.copy\(\)"):
            write(g)
        np.testing.assert_array_equal(g.numpy(), [1.0, 1.0, 1.0])
    c = g.copy()
    c[0] = 5.0
    c += 1.0
    np.testing.assert_array_equal(c.numpy(), [6.0, 2.0, 2.0])


def test_setitem_rebases_history():
    x = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y[1] = x[0] ** 2
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 + 2, 0.0, 2.0])


def test_intermediate_not_read_is_freed_during_forward():
    x = da.tensor(np.ones(10), requires_grad=True)
    h = x * 2.0  # read by nobody below: add saves nothing
    ref = weakref.ref(h)
    y = (h + 1.0).sum()
    del h
    gc.collect()
    assert ref() is None
    y.backward()


def test_graph_freed_after_backward():
    x = da.tensor(np.ones(10), requires_grad=True)
    h = dnp.exp(x)
    y = dnp.sin(h).sum()  # sin saves h
    ref = weakref.ref(h)
    del h
    gc.collect()
    assert ref() is not None  # kept: sin's rule reads it
    y.backward()
    del y
    gc.collect()
    assert ref() is None


def test_grad_modes_are_thread_local():
    out = {}

    def worker():
        with da.no_grad():
            barrier.wait()
            out["worker"] = da.is_grad_enabled()
            barrier.wait()

    barrier = threading.Barrier(2)
    t = threading.Thread(target=worker)
    t.start()
    barrier.wait()
    out["main"] = da.is_grad_enabled()
    x = da.tensor(1.0, requires_grad=True)
    out["recorded"] = (x * 2).requires_grad
    barrier.wait()
    t.join()
    assert out == {"worker": False, "main": True, "recorded": True}


def test_inference_mode_tensors_cannot_be_recorded():
    x = da.tensor([1.0], requires_grad=True)
    with da.inference_mode():
        c = da.tensor([2.0]) * 3
        assert da.is_inference_mode_enabled()
    assert c.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        _ = x * c  # (multiply saves c)
    with pytest.raises(RuntimeError, match="outside InferenceMode"):
        c.requires_grad_()



def test_inference_mode_marks_only_its_own_thread_and_nested_modes_restore():
    # The dispatcher skips the thread-local read while no thread is in inference mode;
    # a count of such threads decides, so it must follow every enter and exit.
    out = {}

    def worker():
        with da.inference_mode():
            barrier.wait()
            out["worker"] = (da.tensor([1.0]) * 2).is_inference()
            with da.dual_level():  # the forward fast path marks its outputs too
                d = da.make_dual(da.tensor([1.0]), da.tensor([1.0]))
                out["worker dual"] = da.numpy.sin(d).is_inference()
            with da.inference_mode(False):
                out["worker off"] = (da.tensor([1.0]) * 2).is_inference()
            out["worker back on"] = (da.tensor([1.0]) * 2).is_inference()
            barrier.wait()

    barrier = threading.Barrier(2)
    t = threading.Thread(target=worker)
    t.start()
    barrier.wait()
    out["main"] = (da.tensor([1.0]) * 2).is_inference()
    barrier.wait()
    t.join()
    out["main after"] = (da.tensor([1.0]) * 2).is_inference()
    assert out == {"worker": True, "worker dual": True, "worker off": False,
                   "worker back on": True, "main": False, "main after": False}
    from dualad.core import grad_mode

    assert grad_mode.inference_threads == [0]

def test_grad_mode_decorators():
    @da.no_grad()
    def f(x):
        return x * 2

    x = da.tensor(1.0, requires_grad=True)
    assert not f(x).requires_grad
    with da.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_batched_cotangents_one_pass_equal_separate():
    rng = np.random.default_rng(2)
    x = da.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    y = dnp.tanh(x @ x.T) + x.sum()
    V = rng.standard_normal((4, 3, 3))
    (gb,) = da.grad(y, x, grad_outputs=da.tensor(V), is_grads_batched=True, retain_graph=True)
    assert gb.shape == (4, 3, 2)
    for b in range(4):
        (g,) = da.grad(y, x, grad_outputs=da.tensor(V[b]), retain_graph=True)
        np.testing.assert_allclose(gb.numpy()[b], g.numpy(), rtol=1e-12)


def test_backward_inputs_and_deprecated_spellings():
    x = da.tensor(1.0, requires_grad=True)
    w = da.tensor(2.0, requires_grad=True)
    (x * w).backward(inputs=[x])
    assert x.grad.item() == 2.0 and w.grad is None
    with pytest.warns(DeprecationWarning):
        da.backward(variables=[x * w], grad_variables=[da.tensor(1.0)])
    assert x.grad.item() == 4.0


def test_nonlinear_jvp_error_names_the_operation():
    class Bad(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def jvp(ctx, t):
            return dnp.sin(t)

    x = da.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="applies 'sin' to a tangent"):
        Bad.apply(x).backward()


def test_invariant_one_rule_per_primitive():
    """Non-linear primitives have only a JVP; every linear one has a transpose rule."""
    import importlib
    import pkgutil

    import dualad.rules as ops
    from dualad.core.dispatch import Primitive

    prims = {}
    for m in pkgutil.iter_modules(ops.__path__):
        mod = importlib.import_module(f"dualad.rules.{m.name}")
        for v in vars(mod).values():
            if isinstance(v, Primitive):
                prims[id(v)] = v
            elif isinstance(v, dict):
                prims.update({id(p): p for p in v.values()
                              if isinstance(p, Primitive)})
    prims = list(prims.values())
    names = {p.name for p in prims}
    assert {"sin", "multiply", "matmul", "inv", "eigh", "fft", "irfft", "solve"} <= names
    assert len(prims) > 80
    for p in prims:
        if p.nondiff:
            assert p.jvp is None and p.transpose is None, p.name
            continue
        assert p.jvp is not None, p.name
        if p.linear:
            assert p.transpose is not None, f"linear {p.name} lacks a transpose rule"
            assert p.batch is not None and p.aval is not None, p.name
        else:
            assert p.transpose is None, f"non-linear {p.name} carries a reverse rule"
        assert not hasattr(p, "vjp") and not hasattr(p, "backward"), p.name


# -- in-place accumulation: the engine writes only into sums it made itself ---------------


_BIG = 1 << 15  # the engine takes a sum as its own from 2**14 elements (engine._OWN_MIN)


def test_accumulation_leaves_the_users_grad_outputs_alone():
    # the user's grad_outputs reaches x three times (y = x + x + x): the first sum is a
    # new array, and only that one takes the third cotangent in place
    for n in (4, _BIG):
        x = da.tensor(np.arange(float(n)), requires_grad=True)
        g0 = np.random.default_rng(0).standard_normal(n)
        g = da.tensor(g0)
        (gx,) = da.grad(x + x + x, x, grad_outputs=g)
        np.testing.assert_array_equal(gx.numpy(), g0 + g0 + g0)
        np.testing.assert_array_equal(g.numpy(), g0)


def test_accumulation_leaves_a_passed_on_tangent_alone():
    # dual + plain passes the dual's tangent on: that sum is not the engine's to write
    n = _BIG
    x = da.tensor(np.arange(float(n)), requires_grad=True)
    t0 = np.arange(1.0, n + 1)
    tt = da.tensor(t0)
    with da.dual_level():
        gd = da.make_dual(da.tensor(np.ones(n)), tt) + 0.0  # its tangent is tt's array
        gd2 = da.make_dual(da.tensor(np.ones(n)), da.tensor(np.full(n, 10.0))) * 1.0
        gp = da.tensor(np.full(n, 2.0))
        (r,) = da.grad([x, x, x], x, grad_outputs=[gd, gp, gd2])
        p, t = da.unpack_dual(r)
        (r2,) = da.grad([x, x, x], x, grad_outputs=[gp, gp, gd2])  # plain, then dual
        p2, t2 = da.unpack_dual(r2)
    np.testing.assert_array_equal(tt.numpy(), t0)
    np.testing.assert_array_equal(p.numpy(), np.full(n, 4.0))
    np.testing.assert_array_equal(t.numpy(), t0 + 10.0)
    np.testing.assert_array_equal(p2.numpy(), np.full(n, 5.0))
    np.testing.assert_array_equal(t2.numpy(), np.full(n, 10.0))
    np.testing.assert_array_equal(gp.numpy(), np.full(n, 2.0))


def test_a_slices_cotangent_is_not_added_into_the_users_grad_outputs():
    x = da.tensor(np.arange(4.0), requires_grad=True)
    g1, g2 = da.tensor(np.ones(4)), da.tensor([1.0, 2.0, 3.0])
    (r,) = da.grad([x, x[1:]], x, grad_outputs=[g1, g2])
    np.testing.assert_array_equal(r.numpy(), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(g1.numpy(), np.ones(4))
    np.testing.assert_array_equal(g2.numpy(), [1.0, 2.0, 3.0])


_SLICES = [
    ((7,), [np.s_[1:], np.s_[:-1], np.s_[::2], np.s_[3], np.s_[None, 1:4], np.s_[:]]),
    ((3, 4), [np.s_[1:, :2], np.s_[:, 0], np.s_[2], np.s_[..., 1:], np.s_[0, 3]]),
]


@pytest.mark.parametrize(("shape", "keys"), _SLICES)
def test_slices_accumulate_gradient_and_hvp(shape, keys):
    # f = sum_k sum(w_k * x[key_k] ** 2) (+ sum(x) * 0.5 as a whole): its gradient and
    # H v, scattered by NumPy; the slices' cotangents meet at x in one buffer
    rng = np.random.default_rng(3)
    x0, v0 = rng.standard_normal(shape), rng.standard_normal(shape)
    ws = [rng.standard_normal(np.shape(x0[k])) for k in keys]

    def f(x):
        s = dnp.sum(x) * 0.5
        for k, w in zip(keys, ws, strict=True):
            s = s + dnp.sum(w * x[k] ** 2)
        return s

    grad, hv = np.full(shape, 0.5), np.zeros(shape)
    for k, w in zip(keys, ws, strict=True):
        grad[k] += 2 * w * x0[k]
        hv[k] += 2 * w * v0[k]
    x = da.tensor(x0, requires_grad=True)
    (g,) = da.grad(f(x), x)
    np.testing.assert_allclose(g.numpy(), grad, rtol=1e-13, atol=1e-14)
    with da.dual_level():
        xd = da.make_dual(da.tensor(x0, requires_grad=True), da.tensor(v0))
        loss = f(xd)
        for _ in range(2):  # a retained graph walked twice gives the same
            (gd,) = da.grad(loss, xd, retain_graph=True)
            p, t = da.unpack_dual(gd)
            np.testing.assert_allclose(p.numpy(), grad, rtol=1e-13, atol=1e-14)
            np.testing.assert_allclose(t.numpy(), hv, rtol=1e-13, atol=1e-14)
    xc = da.tensor(x0, requires_grad=True)
    (gc_,) = da.grad(f(xc), xc, create_graph=True)
    (hvc,) = da.grad(gc_, xc, grad_outputs=da.tensor(v0))
    np.testing.assert_allclose(hvc.numpy(), hv, rtol=1e-13, atol=1e-14)


def test_a_slice_nodes_hooks_see_its_dense_cotangent_and_kept_grads_stay():
    x = da.tensor(np.arange(4.0), requires_grad=True)
    h = x * 1.0
    y = h[1:]
    seen, kept = [], []
    y.grad_fn.register_hook(lambda gi, go: seen.append(gi[0].numpy().copy()))
    h.register_hook(kept.append)  # the gradient the engine accumulated for h
    ((y * 2.0).sum() + (h[:-1] * 3.0).sum() + h.sum()).backward()
    np.testing.assert_array_equal(seen[0], [0.0, 2.0, 2.0, 2.0])
    np.testing.assert_array_equal(kept[0].numpy(), [4.0, 6.0, 6.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 6.0, 6.0, 3.0])


def test_a_cotangent_read_by_two_terms_is_not_written_for_one():
    # sin's rule hands its fresh cotangent on to the subtraction, which passes it to
    # x ** 2 and negates it for x ** 3: the negation must not be written into it
    x0, v0 = np.array([0.3, -0.7, 1.2]), np.array([1.0, 0.5, -2.0])
    u, du, ddu = x0**2 - x0**3, 2 * x0 - 3 * x0**2, 2 - 6 * x0
    with da.dual_level():
        xd = da.make_dual(da.tensor(x0, requires_grad=True), da.tensor(v0))
        (g,) = da.grad(dnp.sum(dnp.sin(xd**2 - xd**3)), xd)
        p, t = da.unpack_dual(g)
    np.testing.assert_allclose(p.numpy(), np.cos(u) * du, rtol=1e-13)
    np.testing.assert_allclose(t.numpy(), (-np.sin(u) * du**2 + np.cos(u) * ddu) * v0,
                               rtol=1e-13)


def test_a_negated_cotangent_leaves_the_users_grad_outputs_and_hooks_alone():
    x0 = np.array([0.5, 2.0])
    with da.dual_level():
        xd = da.make_dual(da.tensor(x0, requires_grad=True), da.tensor([1.0, -1.0]))
        tt = da.tensor([3.0, 4.0])
        gd = da.make_dual(da.tensor([1.0, 2.0]), tt) + 0.0  # flat: its tangent is tt's
        # (sin's cotangent for x, first, is the engine's: the subtraction's is not)
        (g,) = da.grad([1.0 - xd, dnp.sin(xd)], xd, grad_outputs=[gd, da.tensor(np.ones(2))])
        np.testing.assert_allclose(da.unpack_dual(g).tangent.numpy(),
                                   [-3.0 - np.sin(0.5), -4.0 + np.sin(2.0)], rtol=1e-14)
        np.testing.assert_array_equal(da.unpack_dual(gd).primal.numpy(), [1.0, 2.0])
        np.testing.assert_array_equal(tt.numpy(), [3.0, 4.0])
        # a hook keeps sin's cotangent for 1 - x; the subtraction then negates its own
        y = dnp.sin(1.0 - xd)
        kept = []
        y.grad_fn.register_hook(lambda gi, go: kept.append(gi[0]))
        (g,) = da.grad(dnp.sum(y), xd)
        p, t = da.unpack_dual(kept[0])
    np.testing.assert_allclose(p.numpy(), np.cos(1.0 - x0), rtol=1e-14)
    np.testing.assert_allclose(t.numpy(), np.sin(1.0 - x0) * [1.0, -1.0], rtol=1e-14)


# -- the engine's shortcuts: each agrees with the general path --------------------------


def _chain(x, n=18):
    ops = [dnp.sin, dnp.cos, dnp.tanh, lambda v: -v, dnp.exp, lambda v: v * 1.0001,
           lambda v: v + 0.5, lambda v: v * v, lambda v: 0.5 - v]  # (a constant first)
    for i in range(n):
        x = ops[i % len(ops)](x)
    return x


def _nodes(y):
    seen, stack = [], [y.grad_fn]
    while stack:
        n = stack.pop()
        if n is not None and n not in seen and n.__class__.__name__ == "Node":
            seen.append(n)
            stack += [e[0] for e in n.edges if e is not None]
    return seen


def test_a_chain_walked_without_the_heap_gives_the_general_paths_gradient():
    # a node with no hook hands its one cotangent straight to the next when nothing else
    # is pending; a hooked node goes through the general path (the heap and its buffers)
    x = da.tensor([0.3, -0.2], requires_grad=True)
    fast = da.grad(_chain(x).sum() * 2.0, x)[0]
    y = _chain(x).sum() * 2.0  # (one cotangent of two slots into a one-output node)
    for n in _nodes(y):
        n.register_prehook(lambda g: None)
    assert np.array_equal(da.grad(y, x)[0]._data, fast._data)


def test_a_node_read_twice_waits_for_both_cotangents():
    # after exp's branch the heap still holds cos's: sin must not run on half its cotangent
    x = da.tensor([0.3, 0.5], requires_grad=True)
    a = dnp.sin(x)
    (g,) = da.grad((dnp.exp(a) + dnp.cos(a)).sum(), x)
    s = np.sin(x._data)
    assert np.allclose(g._data, np.cos(x._data) * (np.exp(s) - np.sin(s)))


def test_a_chain_into_the_second_output_of_a_node_reaches_that_output():
    a = da.tensor([[2.0, 0.5], [0.3, 3.0]], requires_grad=True)
    logabs = dnp.linalg.slogdet(a).logabsdet  # output 1 of the slogdet node
    (g,) = da.grad(dnp.sin(logabs), a)
    want = np.cos(np.log(np.linalg.det(a._data))) * np.linalg.inv(a._data).T
    assert np.allclose(g._data, want)


def test_grad_runs_only_the_nodes_that_lead_to_its_inputs():
    x = da.tensor([0.3, 0.5], requires_grad=True)
    w = da.tensor([0.2, 0.1], requires_grad=True)
    a, b = dnp.sin(x), dnp.exp(w)
    ran = []
    a.grad_fn.register_prehook(lambda g: ran.append("sin"))
    b.grad_fn.register_prehook(lambda g: ran.append("exp"))
    y = (a * b).sum()
    (gx,) = da.grad(y, x, retain_graph=True)
    assert ran == ["sin"]  # w is not asked for: exp's node does not run
    assert np.allclose(gx._data, np.cos(x._data) * np.exp(w._data))
    assert np.allclose(da.grad(b.sum(), w, retain_graph=True)[0]._data, np.exp(w._data))
    ran.clear()
    da.grad((a * b).sum(), a, retain_graph=True)
    assert "exp" not in ran  # an intermediate asked for: exp's node still leads to none
    ran.clear()
    y = (a * b).sum()
    da.grad(y, (x, w))  # every leaf asked for: every node runs
    assert sorted(ran) == ["exp", "sin"]


def test_a_nodes_hook_tables_are_made_on_first_use():
    x = da.tensor([0.3, 0.5], requires_grad=True)
    h = dnp.sin(x)
    node = h.grad_fn
    assert not node.hooked
    node.metadata["tag"] = 1
    calls = []
    node.register_prehook(lambda go: calls.append("pre"))
    node.register_hook(lambda gi, go: calls.append("post"))
    h.register_hook(lambda g: calls.append("tensor") or g * 2)
    h.retain_grad()
    dnp.exp(h).sum().backward()
    assert node.metadata == {"tag": 1} and calls == ["tensor", "pre", "post"]
    assert np.allclose(h.grad._data, 2 * np.exp(h._data))
    assert np.allclose(x.grad._data, 2 * np.exp(h._data) * np.cos(x._data))
    k = dnp.sin(x)
    (gk,) = da.grad(dnp.exp(k).sum(), k)  # a node captured, never hooked: it has no tables
    assert np.allclose(gk._data, np.exp(k._data))


def _node_fields(node):
    """A recorded node's contents, comparable across two recordings of the same op
    (the values it keeps by identity, a saved output by its values)."""
    from dualad.reverse.graph import SavedValue

    def saved(v):
        if isinstance(v, list):
            return [(s.nr, s.version, s.packed.tolist()) for s in v]
        if isinstance(v, SavedValue):
            return ("saved value", id(v.packed), v.version, v.nr)
        return ("bare", id(v._data))  # (a constant array is wrapped anew, its data shared)

    consts = [c if isinstance(c, (int, float)) else "absent" for c in node.consts]
    return (dict(node.params), list(node.edges), list(node.avals), consts, node.out_avals, node.nbs,
            None if node.saved is None else {k: saved(v) for k, v in node._saved_values().items()})


def test_the_hot_paths_record_makes_the_node_record_makes(monkeypatch):
    # The elementwise hot path records plain unary and binary calls with its own
    # straight-line code (fast.recorders.recorder: _unary for one input, record_hot for two); the
    # node must be the one record makes.
    from dualad.rules import elementwise as E

    x = da.tensor([0.3, 0.7], requires_grad=True)
    h = dnp.sin(x)  # a non-leaf
    c = da.tensor([2.0, 3.0])  # no grad
    h32 = dnp.sin(da.tensor(np.array([0.3, 0.7], np.float32), requires_grad=True))
    hc = dnp.sin(da.tensor([0.3 + 0.2j, 0.7 - 0.1j], requires_grad=True))
    v = da.tensor([0.5, 0.1], requires_grad=True)
    with da.no_grad():
        v *= 1.0  # (in place: v now has a version counter, so it is saved as a SavedValue)
    cases = [
        ("sin", (x,)), ("sin", (h,)), ("exp", (h,)), ("negative", (h,)), ("tanh", (x,)),
        ("multiply", (h, h)), ("multiply", (h, 1.5)), ("multiply", (1.5, h)),
        ("multiply", (h, c)), ("multiply", (c, h)), ("multiply", (h, x)), ("add", (h, 0.5)),
        ("subtract", (0.5, h)), ("divide", (h, x)), ("multiply", (h, np.array([1.0, 2.0]))),
        ("multiply", (v, h)), ("sin", (v,)), ("power", (h, 3)), ("sinc", (h,)), ("sinc", (v,)),
        # f(x, x) (fast.recorders._record_one): a leaf, a non-leaf, changed in place before, nothing
        # saved, the output saved, float32, complex (no pair step)
        ("multiply", (x, x)), ("multiply", (h, h)), ("multiply", (v, v)), ("add", (h, h)),
        ("divide", (h, h)), ("power", (h, h)), ("hypot", (h, h)), ("multiply", (h32, h32)),
        ("multiply", (hc, hc)), ("power", (hc, hc)),
    ]
    for name, args in cases:
        prim = E.PRIMS[name]
        got = prim(*args)
        with monkeypatch.context() as m:
            m.setattr(prim, "hot", None)
            want = prim(*args)  # apply's general way: record
        assert _node_fields(got.grad_fn) == _node_fields(want.grad_fn), (name, args)
        assert got.grad_fn.prim is want.grad_fn.prim
        ins = [a for a in args if isinstance(a, da.Tensor) and a.requires_grad]
        g1 = da.grad(dnp.real(got).sum(), ins, retain_graph=True)  # (h's node: each time)
        g2 = da.grad(dnp.real(want).sum(), ins, retain_graph=True)
        for a, b in zip(g1, g2, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    with da.inference_mode():
        t = da.tensor([1.0])
    t2 = da.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        dnp.multiply(t2, t)  # (record_hot)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        dnp.multiply(t, t2)


def test_factories_in_inference_mode_make_inference_tensors():
    # as torch: every tensor made inside inference mode is an inference tensor; it cannot
    # be saved for backward, nor require grad outside the mode
    with da.inference_mode():
        made = [da.tensor([1.0]), da.as_tensor(np.ones(2)), da.zeros(2), da.ones_like(np.ones(2)),
                da.randn(2), da.Tensor([1.0]), da.tensor([1.0], requires_grad=True)]
    assert all(t.is_inference() for t in made)
    assert made[-1].requires_grad  # (set inside the mode: allowed)
    assert not da.tensor([1.0]).is_inference()
    with pytest.raises(RuntimeError, match="outside InferenceMode"):
        made[0].requires_grad_()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        dnp.sin(made[-1])  # (_unary)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
        made[-1] * da.tensor([2.0], requires_grad=True)  # (saved for the other's gradient)
    assert (made[-1] * da.tensor([2.0])).requires_grad  # only the constant is saved: as torch


@pytest.mark.fastpath("hot", "fast")
def test_recording_keeps_an_unmade_dual_unmade_and_its_primal_takes_the_node():
    # with tangents untracked (hvp's forward-over-reverse), a dual op on arrays gives a
    # unmade dual (no primal Tensor); recording it sets the node on the dual alone, and the
    # primal Tensor made later (unpack_dual, grad_fn, the next op's edge) takes it then:
    # the same graph as when the primal was made first
    from dualad.grad_mode import untracked_tangents

    x = da.tensor([0.3, 0.5], requires_grad=True)
    seed = da.tensor([1.0, -2.0])
    for first in (False, True):
        with da.dual_level(), untracked_tangents():
            xd = da.make_dual(x, da.tensor([1.0, 2.0]))
            y = dnp.sin(xd) * 2.0
            node = y._node
            assert node is not None and y._stored_primal is None  # (recorded, still flat)
            z = dnp.exp(y) if not first else None
            p, t = da.unpack_dual(y)
            assert p.grad_fn is node and y.grad_fn is node and p.requires_grad
            if first:
                z = dnp.exp(y)
            assert z.grad_fn.next_functions[0][0] is node
            (g,) = da.grad(z, x, seed)
        want = seed._data * np.exp(2 * np.sin(x._data)) * 2 * np.cos(x._data)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)
        assert unpack_primal_after_exit(y) is node


def unpack_primal_after_exit(y):
    """After its level exits, a dual behaves as its primal: that primal's grad_fn."""
    return da.unpack_dual(y).primal.grad_fn
