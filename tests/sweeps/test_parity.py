"""torch.autograd parity: Variable, clear errors, grad-mode decorators, Function behaviours."""

from __future__ import annotations

import asyncio
import pickle

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

# -- Variable -----------------------------------------------------------------------------


def test_variable_is_a_deprecated_tensor() -> None:
    x = da.tensor([1.0, 2.0])
    with pytest.warns(DeprecationWarning, match="Variable is deprecated"):
        v = da.Variable(x, requires_grad=True)
    assert isinstance(v, da.Tensor) and isinstance(v, da.Variable)
    assert v.requires_grad and v.is_leaf and not x.requires_grad
    (v * v).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), [2.0, 4.0])
    with pytest.warns(DeprecationWarning):
        w = da.Variable(np.ones(3))
    assert isinstance(w, da.Tensor) and not w.requires_grad


# -- clear errors ---------------------------------------------------------------------------


def test_grad_of_an_input_that_does_not_require_grad_names_it() -> None:
    x = da.ones(3, requires_grad=True)
    w = da.ones((2, 2))
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match=r"inputs\[1\] \(shape \(2, 2\)\) has "
                                           r"requires_grad=False.*requires_grad_\(\)"):
        da.grad(y, [x, w])
    with pytest.raises(TypeError, match=r"inputs\[0\] is a list"):
        da.grad(y, [[1.0]])


@pytest.mark.parametrize("make", [
    lambda: (da.ones(3), da.ones(4)),
    lambda: (da.ones(3, requires_grad=True), da.ones((2, 4))),
])
@pytest.mark.parametrize("op, name", [
    (lambda a, b: a + b, "add"), (lambda a, b: a * b, "multiply"),
    (lambda a, b: dnp.maximum(a, b), "maximum"), (lambda a, b: dnp.arctan2(a, b), "arctan2"),
    (lambda a, b: b - a, "subtract"),
])
def test_broadcast_mismatch_names_the_operation_and_shapes(make, op, name) -> None:
    a, b = make()
    with pytest.raises(ValueError, match=rf"^{name}: operands could not be broadcast together: "
                                         r"shapes \("):
        op(a, b)
    with da.dual_level():
        d = da.make_dual(a.detach(), da.ones(a.shape))
        with pytest.raises(ValueError, match=rf"^{name}: .*shapes"):
            op(d, b)


class _Cube(da.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


def test_calling_forward_directly_says_to_use_apply() -> None:
    x = da.tensor(2.0, requires_grad=True)
    with pytest.raises(TypeError, match=r"_Cube.forward was called directly; call "
                                        r"_Cube.apply\(\.\.\.\) instead"):
        _Cube.forward(x)
    _Cube.apply(x).backward()
    assert float(x.grad) == 12.0


def test_legacy_instance_call_raises() -> None:
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = _Cube()
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        f(da.tensor(2.0, requires_grad=True))


# -- grad modes as decorators -----------------------------------------------------------------

_X = da.ones(2, requires_grad=True)


def test_modes_decorate_with_and_without_parentheses() -> None:
    @da.no_grad
    def a():
        return (_X * 2).requires_grad

    @da.no_grad()
    def b():
        return (_X * 2).requires_grad

    @da.enable_grad
    def c():
        return (_X * 2).requires_grad

    @da.inference_mode
    def d():
        return (_X * 2).is_inference()

    @da.inference_mode(False)
    def e():
        return (_X * 2).is_inference()

    assert (a(), b(), d(), e()) == (False, False, True, False)
    with da.no_grad():
        assert c()
    assert a.__name__ == "a"


def test_set_grad_enabled_as_a_decorator_restores_the_mode() -> None:
    assert da.is_grad_enabled()

    @da.set_grad_enabled(False)
    def off():
        return da.is_grad_enabled()

    assert da.is_grad_enabled()  # decorating did not turn it off
    assert off() is False and da.is_grad_enabled()
    with da.no_grad():
        @da.set_grad_enabled(True)
        def on():
            return da.is_grad_enabled()

        assert not da.is_grad_enabled()
        assert on() is True and not da.is_grad_enabled()


def test_modes_hold_in_each_resumption_of_a_generator() -> None:
    @da.no_grad()
    def gen():
        got = yield da.is_grad_enabled()
        yield (got, da.is_grad_enabled())
        return "done"

    g = gen()
    assert next(g) is False
    assert da.is_grad_enabled()  # between resumptions: the caller's mode
    assert g.send(5) == (5, False)
    with pytest.raises(StopIteration, match="done"):
        next(g)

    @da.enable_grad
    def inner():
        try:
            yield da.is_grad_enabled()
        except KeyError:
            yield ("caught", da.is_grad_enabled())

    with da.no_grad():
        g2 = inner()
        assert next(g2) is True
        assert g2.throw(KeyError()) == ("caught", True)
        assert not da.is_grad_enabled()


def test_modes_hold_in_each_resumption_of_a_coroutine() -> None:
    seen = []

    @da.no_grad
    async def work():
        seen.append(da.is_grad_enabled())
        await asyncio.sleep(0)
        seen.append(da.is_grad_enabled())
        return 7

    async def other():
        seen.append(("other", da.is_grad_enabled()))

    async def main():
        return await asyncio.gather(work(), other())

    assert asyncio.run(main())[0] == 7
    assert seen == [False, ("other", True), False]


# -- pickling ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_every_protocol(protocol) -> None:
    x = da.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = pickle.loads(pickle.dumps(x, protocol=protocol))
    assert isinstance(y, da.Tensor) and y.requires_grad and y.is_leaf
    np.testing.assert_array_equal(y.numpy(force=True), x.numpy(force=True))
    z = pickle.loads(pickle.dumps(da.tensor([1.0, 2.0]), protocol=protocol))
    assert not z.requires_grad
    w = pickle.loads(pickle.dumps(dnp.sin(x), protocol=protocol))  # the graph stays behind
    assert w.requires_grad and w.is_leaf
    np.testing.assert_allclose(w.numpy(force=True), np.sin(x.numpy(force=True)))


# -- Function behaviours ------------------------------------------------------------------------


def test_function_non_tensor_outputs_come_back_as_they_are() -> None:
    class WithExtras(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, None, 3, "tag"

        @staticmethod
        def backward(ctx, g, g_none, g_int, g_str):
            assert g_none is None and g_int is None and g_str is None
            return g * 2

    x = da.tensor([1.0, 2.0], requires_grad=True)
    y, n, k, s = WithExtras.apply(x)
    assert n is None and k == 3 and s == "tag"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_function_input_returned_as_is_is_a_view() -> None:
    class Identity(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and y.grad_fn is not None
    v = y._version
    with da.no_grad():
        x[0] = 5.0  # shared data and version counter, as a view
    assert float(y[0]) == 5.0 and y._version == v + 1


def test_jvp_reads_what_save_for_forward_saved() -> None:
    class Scale(da.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.save_for_forward(k)
            return x * k

        @staticmethod
        def backward(ctx, g):
            return None, None

        @staticmethod
        def jvp(ctx, tx, tk):
            (k,) = ctx.saved_tensors
            return tx * k

    x = da.tensor([1.0, 2.0])
    k = da.tensor([3.0, 5.0])
    with da.dual_level():
        y = Scale.apply(da.make_dual(x, da.ones(2)), k)
        np.testing.assert_allclose(da.unpack_dual(y).tangent.numpy(), [3.0, 5.0])


def test_function_with_both_backward_and_vjp_is_an_error() -> None:
    class Both(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="both 'backward' and 'vjp'"):
        Both.apply(da.ones(2, requires_grad=True))


def test_integer_inputs_get_a_none_tangent() -> None:
    seen = []

    class Shift(da.Function):
        @staticmethod
        def forward(ctx, x, n):
            return x + n

        @staticmethod
        def backward(ctx, g):
            return g, None

        @staticmethod
        def jvp(ctx, tx, tn):
            seen.append(tn)
            return tx

    with da.dual_level():
        y = Shift.apply(da.make_dual(da.ones(2), da.ones(2)), da.tensor([1, 2]))
        np.testing.assert_allclose(da.unpack_dual(y).tangent.numpy(), [1.0, 1.0])
    assert seen == [None]


def test_once_differentiable_double_backward_raises() -> None:
    class Sq(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @da.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = da.tensor([1.0, 2.0], requires_grad=True)
    v = da.tensor([1.0, 1.0], requires_grad=True)
    (g,) = da.grad(Sq.apply(x), x, grad_outputs=v, create_graph=True)
    np.testing.assert_allclose(g.numpy(force=True), [2.0, 4.0])
    assert g.grad_fn is not None
    with pytest.raises(RuntimeError, match="differentiate twice a function that was marked "
                                           "with @once_differentiable"):
        da.grad(g.sum(), v)


# -- hooks -------------------------------------------------------------------------------------


def test_accumulate_grad_post_hooks_run() -> None:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    acc = y.grad_fn.next_functions[0][0]
    seen = []
    acc.register_hook(lambda gi, go: seen.append((gi, go[0].numpy().copy())))
    y.sum().backward()
    assert len(seen) == 1 and seen[0][0] == ()
    np.testing.assert_allclose(seen[0][1], [3.0, 3.0])


def test_post_accumulate_grad_hook_returning_a_value_is_an_error() -> None:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: t.grad * 2)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
        (x * 2).sum().backward()


def test_grad_with_respect_to_a_non_leaf_does_not_run_its_node() -> None:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    b = x * 2.0
    ran = []
    b.grad_fn.register_prehook(lambda go: ran.append("pre"))
    b.grad_fn.register_hook(lambda gi, go: ran.append("post"))
    b.register_hook(lambda g: ran.append("tensor") or g * 10)
    (gb,) = da.grad((b * b).sum(), b)
    assert ran == ["tensor"]
    np.testing.assert_allclose(gb.numpy(), 10 * 2 * b.numpy(force=True))


# -- grad details -------------------------------------------------------------------------------


def test_grad_details() -> None:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    w = da.tensor([3.0], requires_grad=True)
    y = (x * x).sum()
    gx, gw = da.grad(y, (x, w), create_graph=True, materialize_grads=True)
    assert gw.requires_grad and not gw.numpy(force=True).any()
    with pytest.raises(RuntimeError, match="non-empty inputs"):
        da.grad(y, [])
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = 0
    with pytest.raises(RuntimeError, match="own grad"):
        x.grad = x
    x.grad = da.ones(2)
    del x.grad
    assert x.grad is None


# -- inference mode ------------------------------------------------------------------------------


def test_inference_tensors_mixed_with_normal_ones() -> None:
    with da.inference_mode():
        t = da.ones(3)
    w = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = t + w  # nothing saved: allowed, a normal tensor that requires grad
    assert not y.is_inference() and y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.ones(3))
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        t * w
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode"):
        t[0] = 5.0
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        t += 1
    with da.inference_mode():
        t[0] = 5.0  # inside the mode: allowed
    assert float(t[0]) == 5.0
    u = t.copy()
    u[0] = 1.0  # a clone is a normal tensor


def test_hooks_of_a_leaf_run_in_torchs_order() -> None:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    acc = y.grad_fn.next_functions[0][0]
    order: list[str] = []
    x.register_hook(lambda g: order.append("tensor") or g * 2)
    acc.register_prehook(lambda go: order.append(f"acc_pre {go[0].numpy()[0]:g}"))
    x.register_post_accumulate_grad_hook(lambda t: order.append("post_accumulate"))
    acc.register_hook(lambda gi, go: order.append("acc_post"))
    y.sum().backward()
    assert order == ["tensor", "acc_pre 6", "post_accumulate", "acc_post"]
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
    # grad() captures what the leaf's tensor hooks give (and accumulates nothing)
    order.clear()
    (g,) = da.grad((x * 3.0).sum(), x)
    np.testing.assert_allclose(g.numpy(), [6.0, 6.0])
    assert order == ["tensor"]
    order.clear()
    x.grad = None
    (x * 3.0).sum().backward(inputs=[x])  # backward runs the AccumulateGrad
    assert order == ["tensor", "acc_pre 6", "post_accumulate", "acc_post"]
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0])
