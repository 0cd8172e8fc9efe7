"""Cases of torch's own autograd test suite (``test/test_autograd.py``), translated to dualad
(issue 28, section 3): attribute deletion, backward through a freed graph, the reference
cycle of ``backward(create_graph=True)``, custom Functions with non-Tensor inputs and outputs,
``mark_dirty`` with ``mark_non_differentiable``, GradientEdges as outputs, ctx after the graph
is freed, ``.numpy()`` under ``no_grad``, hook order on AccumulateGrad and after an in-place
write over a view, and forward mode's checks. Each compares with a closed form or with
the same program written another way, so CI needs no torch; where dualad differs from torch
on purpose, docs/graph.md says why and the test pins dualad's behaviour."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.graph import get_gradient_edge


def _r(*shape: int, seed: int = 0, rg: bool = True) -> da.Tensor:
    return da.tensor(np.random.default_rng(seed).normal(size=shape), requires_grad=rg)


# ---------------------------------------------------------------------------------------------
# Tensor attributes
# ---------------------------------------------------------------------------------------------


def test_attribute_deletion() -> None:
    x = _r(5, 5)
    x.grad = da.ones((5, 5))
    del x.grad  # allowed: the same as x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError, match="Deleting tensor data is not allowed"):
        del x.data
    with pytest.raises(RuntimeError, match="requires_grad"):
        del x.requires_grad
    with pytest.raises(RuntimeError, match="grad_fn"):
        del x.grad_fn
    assert x.requires_grad and x.shape == (5, 5)  # (nothing was lost)


def test_numpy_of_a_tensor_that_requires_grad_is_allowed_under_no_grad() -> None:
    x = _r(2, 2)
    with pytest.raises(RuntimeError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    with da.no_grad():
        a = x.numpy()  # torch allows it there: the user said no gradients are wanted
    assert a is x.detach().numpy()  # (shared, not copied)
    with da.no_grad():
        da.tensor([1.0, 2.0]).numpy()
    with da.dual_level():  # a tangent is still dropped under no_grad: that still raises
        d = da.make_dual(da.tensor([1.0]), da.tensor([1.0]))
        with da.no_grad(), pytest.raises(RuntimeError, match="tangent"):
            d.numpy()


# ---------------------------------------------------------------------------------------------
# backward through a graph whose saved values were freed
# ---------------------------------------------------------------------------------------------


def _setitem_from_index(b: da.Tensor) -> da.Tensor:
    c = dnp.zeros(3)
    c[[1, 2]] = b[[1, 1]]
    return c


def test_backward_twice_with_saved_values_raises() -> None:
    b = _r(3)
    c = _setitem_from_index(b)
    c.backward(da.ones(3))
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        c.backward(da.ones(3))


def test_backward_twice_retained_graph_with_saved_values() -> None:
    b = _r(3)
    c = _setitem_from_index(b)
    c.backward(da.ones(3), retain_graph=True)
    c.backward(da.ones(3))
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 4.0, 0.0])


def test_backward_twice_without_saved_values() -> None:
    b = _r(3)
    c = b + 1
    c.backward(da.ones(3))
    c.backward(da.ones(3))  # add reads nothing saved: nothing was freed
    np.testing.assert_allclose(b.grad.numpy(), 2 * np.ones(3))


@pytest.mark.parametrize("fn", [
    lambda b: b * b, lambda b: dnp.exp(b), lambda b: b[[1, 1, 2]], lambda b: b[b > 0],
    lambda b: b.reshape(-1)[[0, 2]], lambda b: dnp.abs(b), lambda b: b ** 2,
    lambda b: 2.0 / b, lambda b: dnp.where(b > 0, b, 0 * b), lambda b: dnp.clip(b, 0, 1),
], ids=["mul", "exp", "index", "mask", "ravel-index", "abs", "pow", "rdiv", "where", "clip"])
def test_backward_twice_raises_wherever_torch_freed_saved_values(fn) -> None:
    b = _r(3)
    y = fn(b).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    b2 = _r(3)
    y2 = fn(b2).sum()
    da.grad(y2, b2)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        da.grad(y2, b2)


@pytest.mark.parametrize("fn", [
    lambda b: b + 1.0, lambda b: 2.0 - b, lambda b: b.reshape(3, 1), lambda b: b[1:],
    lambda b: b.copy(), lambda b: dnp.cumsum(b), lambda b: dnp.roll(b, 1), lambda b: b.mean(),
    lambda b: dnp.flip(b), lambda b: dnp.concatenate([b, dnp.ones(2)]),
    lambda b: dnp.diag(b), lambda b: dnp.diagonal(b.reshape(1, 3) + dnp.zeros((3, 3))),
    # torch's tril/triu backward saves only k (dualad's mask is a parameter of the rule)
    lambda b: dnp.tril(b), lambda b: dnp.triu(b.reshape(3, 1) + b, 1),
    lambda b: dnp.sign(b),  # torch's real sign saves nothing (its derivative is 0)
    # deliberate differences (docs/graph.md): torch saves and frees these constants
    lambda b: b * 2.0, lambda b: b / 2.0, lambda b: dnp.take(b, [0, 2]),
    lambda b: dnp.angle(b),  # (torch's saves the real input its rule does not read)
], ids=["add", "rsub", "reshape", "slice", "copy", "cumsum", "roll", "mean", "flip",
        "concatenate", "diag", "diagonal", "tril", "triu", "sign", "mul-const", "div-const", "take",
        "angle"])
def test_backward_twice_through_what_saves_nothing_works(fn) -> None:
    b = _r(3)
    y = fn(b).sum()
    y.backward()
    g1 = b.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(b.grad.numpy(), 2 * g1)


class _SavesInput(da.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2


class _SavesNothing(da.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k  # a plain attribute: not freed by backward (torch frees saved tensors only)
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


def test_custom_function_twice_raises_only_if_it_saved_tensors() -> None:
    b = _r(3)
    y = _SavesInput.apply(b).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    b = _r(3)
    y = _SavesNothing.apply(b, 3.0).sum()
    y.backward()
    y.backward()  # torch: its ctx attributes live as long as the node
    np.testing.assert_allclose(b.grad.numpy(), 6 * np.ones(3))


def test_backward_create_graph_warns_of_the_reference_cycle() -> None:
    b = _r(3)
    c = b * b
    with pytest.warns(UserWarning, match=r"Using backward\(\) with create_graph=True"):
        c.backward(da.ones(3), create_graph=True)
    np.testing.assert_allclose(b.grad.numpy(force=True), 2 * b.numpy(force=True))
    assert b.grad.requires_grad  # (the cycle: b.grad's graph holds b)
    b.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # grad() makes no cycle: no warning
        da.grad(c, b, da.ones(3), create_graph=True)
        # nor does backward(create_graph=True) into a non-leaf only
        a = _r(3)
        h = a * 2
        (h * h).sum().backward(create_graph=True, inputs=[h])


# ---------------------------------------------------------------------------------------------
# grad() arguments
# ---------------------------------------------------------------------------------------------


def test_grad_empty_inputs() -> None:
    x = da.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="grad requires non-empty inputs"):
        da.grad(2 * x, [], grad_outputs=da.tensor([1.0]))
    with pytest.raises(RuntimeError, match="non-empty inputs"):  # (torch 2.13's class)
        da.grad(2 * x, (), grad_outputs=da.tensor([1.0]))


# ---------------------------------------------------------------------------------------------
# custom Functions: non-Tensor inputs and outputs, inputs returned, non-differentiable outputs
# ---------------------------------------------------------------------------------------------


def test_custom_function_non_tensor_inputs_outputs() -> None:
    seen: list[tuple[object, ...]] = []

    class MyFunction(da.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            ctx.scale = scale
            ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @da.once_differentiable
        def backward(ctx, *grads):
            seen.append(grads)
            scale = ctx.scale
            var1, var2, var3 = ctx.saved_tensors
            return (grads[1] * scale + grads[4] * var2 * scale + grads[6],
                    grads[1] * var3 * scale + grads[4] * var1 * scale,
                    None,
                    grads[1] * var2 * scale + grads[4] * scale)

    t1, t2, t3 = _r(10, seed=1), _r(10, seed=2), _r(10, seed=3, rg=False)
    scale = 7
    res = MyFunction.apply(t1, t2, scale, t3)
    a1, a2, a3 = (t.numpy(force=True) for t in (t1, t2, t3))
    assert res[0] == scale and res[2] is None and res[3] is True and res[5] == "bar"
    np.testing.assert_allclose(res[1].numpy(force=True), (a1 + a2 * a3) * scale)
    np.testing.assert_allclose(res[4].numpy(force=True), (a1 * a2 + a3) * scale)
    np.testing.assert_allclose(res[6].numpy(force=True), a1)
    assert res[6] is not t1 and res[6].grad_fn is not None  # an input returned: a view of it
    da.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    (grads,) = seen
    assert len(grads) == 7 and all(grads[k] is None for k in (0, 2, 3, 5))
    np.testing.assert_allclose(t1.grad.numpy(), scale + a2 * scale + 1)
    np.testing.assert_allclose(t2.grad.numpy(), a3 * scale + a1 * scale)
    assert t3.grad is None
    da.gradcheck(lambda p, q: MyFunction.apply(p, q, scale, t3)[1::3], (t1, t2))


def test_custom_function_no_tensors_returns_its_inputs_as_they_are() -> None:
    class MyFunction(da.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = (t1 + t2 * t3) * scale
            t5 = (t1 * t2 + t3) * scale
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        def backward(ctx, *args):
            return args[0], args[1], None, args[2]

    t1, t2, t3, scale = 0.25, 0.5, 0.75, 3
    tag = object()
    res = MyFunction.apply(t1, t2, scale, t3)
    assert res == (scale, (t1 + t2 * t3) * scale, None, True, (t1 * t2 + t3) * scale, "bar",
                   t1)
    assert res[6] is t1  # a non-Tensor input returned is the same object
    (same,) = (MyFunction.apply(t1, t2, scale, t3)[6],)
    assert same is t1
    # so is any other object passed through
    class Through(da.Function):
        @staticmethod
        def forward(ctx, x, obj):
            return x * 2, obj

        @staticmethod
        def backward(ctx, g, _):
            return g * 2, None

    y, o = Through.apply(_r(2), tag)
    assert o is tag and y.requires_grad


def test_function_returns_input() -> None:
    class MyFunction(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    for shape in [(1,), ()]:
        v = da.tensor(np.ones(shape), requires_grad=True)
        MyFunction.apply(v).backward()
        np.testing.assert_allclose(v.grad.numpy(), np.full(shape, 2.0))
        v.grad = None
        MyFunction.apply(v.copy()).backward()
        np.testing.assert_allclose(v.grad.numpy(), np.full(shape, 2.0))


def test_return_leaf() -> None:
    class Identity(da.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a, a + b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a + grad_b, grad_b

    called = []
    x, y = _r(5, 5, seed=1), _r(5, 5, seed=2)
    q, p = Identity.apply(x, y)

    def hook(grad):  # only the gradient from q's own use, not x's
        called.append(grad.numpy().copy())

    q.register_hook(hook)
    (q + p + x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.ones((5, 5)))
    np.testing.assert_allclose(y.grad.numpy(), np.ones((5, 5)))
    assert len(called) == 1
    np.testing.assert_allclose(called[0], np.ones((5, 5)))


def test_return_leaf_inplace() -> None:
    class Inplace(da.InplaceFunction):
        @staticmethod
        def forward(ctx, a, b):
            ctx.mark_dirty(a)
            a += b
            return a, b + 2

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            return grad_a, grad_a + grad_b

    x = _r(5, 5, seed=1, rg=False)
    y = _r(5, 5, seed=2)
    q, p = Inplace.apply(x, y)
    assert q is x and q.requires_grad and q.grad_fn.name() == "InplaceBackward"
    q.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), np.ones((5, 5)))


def test_mark_non_differentiable_mixed() -> None:
    seen = []

    class MyFunction(da.Function):
        @staticmethod
        def forward(ctx, x):
            a = x + 1
            b = x + 2
            ctx.mark_non_differentiable(a)
            return a, b

        @staticmethod
        def backward(ctx, grad_a, grad_b):
            seen.append((grad_a.numpy().copy(), grad_b.numpy().copy()))
            return grad_b

    x = _r(5, 5)
    a, b = MyFunction.apply(x)
    assert not a.requires_grad and b.requires_grad
    b.sum().backward()
    np.testing.assert_allclose(seen[0][0], 0.0)
    np.testing.assert_allclose(seen[0][1], 1.0)
    np.testing.assert_allclose(x.grad.numpy(), np.ones((5, 5)))


def test_mark_non_differentiable_none() -> None:
    class MyFunction(da.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.copy()
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, grad_output):
            return None

    x = _r(5, 5)
    r = MyFunction.apply(x * x)
    (r * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (x * x).numpy(force=True))


def test_an_input_returned_as_is_and_marked_non_differentiable() -> None:
    class Mark(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = _r(3)
    y = Mark.apply(x)
    assert y is not x and not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), x.numpy(force=True))


def test_dep_nograd() -> None:
    class F1(da.Function):
        @staticmethod
        def forward(ctx, x):
            out = dnp.asarray(np.random.default_rng(0).normal(size=x.shape))
            ctx.mark_non_differentiable(out)
            return x, out

        @staticmethod
        def backward(ctx, grad_output, ignored):
            return grad_output

    class F2(da.Function):
        @staticmethod
        def forward(ctx, x, ignored):
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    x = _r(5)
    a, b = F1.apply(x)
    b = b + 1
    assert a.requires_grad and not b.requires_grad
    c = F2.apply(a, b)
    c.backward(da.ones(5))
    np.testing.assert_allclose(x.grad.numpy(), np.ones(5))


class _DoubleInPlace(da.Function):
    @staticmethod
    def forward(ctx, x):
        x *= 2
        ctx.mark_dirty(x)
        ctx.mark_non_differentiable(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_mark_dirty_and_mark_non_differentiable() -> None:
    w = da.tensor([1.0, 3.0], requires_grad=True)
    x = w.copy()
    y = _DoubleInPlace.apply(x)
    # the input is written in place and is the result (NumPy's in place), now without history:
    # the Function said its result carries no derivative
    assert y is x and not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), [2.0, 6.0])
    (y * w).sum().backward()  # y is a constant here: d/dw = y
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 6.0])
    # a plain input: the same
    p = da.tensor([1.0, 2.0])
    assert _DoubleInPlace.apply(p) is p and float(p[1]) == 4.0
    # a view: its base's region becomes a constant (no derivative flows through it)
    w = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = w * 1.0
    _DoubleInPlace.apply(base[1:])
    np.testing.assert_allclose(base.numpy(force=True), [1.0, 4.0, 6.0])
    (base * base).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 0.0, 0.0])


def test_mark_dirty_with_another_output_non_differentiable() -> None:
    class G(da.Function):
        @staticmethod
        def forward(ctx, x):
            x *= 2
            mask = x > 1
            ctx.mark_dirty(x)
            ctx.mark_non_differentiable(mask)
            return x, mask

        @staticmethod
        def backward(ctx, g, g_mask):
            return g * 2

    w = da.tensor([0.25, 1.0], requires_grad=True)
    x = w.copy()
    y, m = G.apply(x)
    assert y is x and y.requires_grad and not m.requires_grad
    np.testing.assert_array_equal(m.numpy(), [False, True])
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 2.0])


def test_return_duplicate() -> None:
    class DoubleDuplicate(da.Function):
        @staticmethod
        def forward(ctx, x):
            output = x * 2
            return output, output

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def fn(x):
        a, b = DoubleDuplicate.apply(x)
        assert a is b
        return a + b

    x = _r(5, 5)
    assert da.gradcheck(fn, (x,))
    assert da.gradgradcheck(fn, (x,))


def test_return_duplicate_inplace() -> None:
    class DoubleInplace(da.Function):
        @staticmethod
        def forward(ctx, x):
            x *= 2
            ctx.mark_dirty(x)
            return x, x

        @staticmethod
        def backward(ctx, grad1, grad2):
            return grad1 * 2 + grad2 * 2

    def inplace_fn(x):
        a, b = DoubleInplace.apply(x.copy())
        assert a is b
        return a + b

    x = _r(5, 5)
    assert da.gradcheck(inplace_fn, (x,))
    assert da.gradgradcheck(inplace_fn, (x,))
    with pytest.raises(RuntimeError, match="leaf"):
        DoubleInplace.apply(x)  # a leaf that requires grad cannot be written in place


# ---------------------------------------------------------------------------------------------
# ctx after backward; Functions used as objects
# ---------------------------------------------------------------------------------------------


class _Id(da.Function):
    stash: list[object] = []

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.k = 3
        return x.copy()

    @staticmethod
    def backward(ctx, g):
        _Id.stash.append(ctx)
        (x,) = ctx.saved_tensors
        return g * x


def test_ctx_after_the_graph_is_freed() -> None:
    _Id.stash.clear()
    p = da.tensor([2.0], requires_grad=True)
    loss = _Id.apply(p)
    loss.backward()
    ctx = _Id.stash[0]
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        ctx.saved_tensors  # noqa: B018
    assert ctx.k == 3 and ctx.needs_input_grad == (True,)  # attributes stay, as in torch
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        loss.grad_fn.saved_tensors  # noqa: B018  (grad_fn reads its ctx's)
    assert loss.grad_fn.k == 3


def test_ctx_stashed_and_read_after_the_graph_is_retained_or_dropped() -> None:
    _Id.stash.clear()
    p = da.tensor([2.0], requires_grad=True)
    loss = _Id.apply(p)
    loss.backward(retain_graph=True)
    ctx = _Id.stash[0]
    (s,) = ctx.saved_tensors  # retained: readable
    assert s.requires_grad and float(s.detach()) == 2.0
    del loss
    gc.collect()
    (s,) = ctx.saved_tensors  # torch 2.13 keeps them while the ctx is held
    assert float(s.detach()) == 2.0 and ctx.k == 3


def test_ctx_stashed_on_the_function_in_forward() -> None:
    class Stash(da.Function):
        ctx = None

        @staticmethod
        def forward(ctx, x):
            Stash.ctx = ctx
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    p = da.tensor([1.0], requires_grad=True)
    y = Stash.apply(p)
    (s,) = Stash.ctx.saved_tensors
    assert float(s.detach()) == 1.0
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        Stash.ctx.saved_tensors  # noqa: B018
    del y
    gc.collect()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        Stash.ctx.saved_tensors  # noqa: B018


def test_saved_variables_is_deprecated() -> None:
    class MyFunction(da.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a + b

        @staticmethod
        def backward(ctx, g):
            var1, var2 = ctx.saved_variables
            return g, g

    x, y = _r(3, 3, seed=1), _r(3, 3, seed=2)
    with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated"):
        MyFunction.apply(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((3, 3)))


def test_instantiating_a_function_is_deprecated() -> None:
    class Id(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Id()
    assert isinstance(f, Id)  # still an instance
    x = da.zeros(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="non-static forward method is deprecated"):
        f(x)
    assert Id.apply(x).grad_fn.name() == "IdBackward"


# ---------------------------------------------------------------------------------------------
# GradientEdge as an output of grad() and backward()
# ---------------------------------------------------------------------------------------------


def _two_steps(x: da.Tensor, reduce: bool = True) -> tuple[da.Tensor, object]:
    tmp = dnp.cos(dnp.sin(x))
    if reduce:
        tmp = tmp.sum()
    out = dnp.sin(dnp.exp(tmp).copy()).sum()
    return out, get_gradient_edge(tmp)


def test_gradient_edge_output() -> None:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    out, tmp_edge = _two_steps(x)
    (tmp_grad,) = da.grad(out, (tmp_edge,))  # backward in two steps, through the edge
    (x_grad,) = da.grad(tmp_edge, (x,), grad_outputs=(tmp_grad,))
    out, _ = _two_steps(x)
    (x_grad_ref,) = da.grad(out, (x,))
    np.testing.assert_allclose(x_grad.numpy(), x_grad_ref.numpy())
    # the closed form: d/dx sin(exp(s)) with s = sum(cos(sin(x)))
    a = np.array([1.0, 2.0])
    s = np.cos(np.sin(a)).sum()
    np.testing.assert_allclose(x_grad.numpy(), np.cos(np.exp(s)) * np.exp(s)
                               * -np.sin(np.sin(a)) * np.cos(a))

    out, tmp_edge = _two_steps(x, reduce=False)  # no grad_output for a non-scalar: an error
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        da.grad(tmp_edge, (x,))
    out, tmp_edge = _two_steps(x)  # for a scalar: ones, as for a Tensor
    (g,) = da.grad(tmp_edge, (x,))
    np.testing.assert_allclose(g.numpy(), -np.sin(np.sin(a)) * np.cos(a))
    out, tmp_edge = _two_steps(x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        da.grad(tmp_edge, (x,), grad_outputs=da.tensor([1.0, 2.0, 3.0, 4.0]))
    out, tmp_edge = _two_steps(x)
    with pytest.raises(RuntimeError, match="required to have the same dtype"):
        da.grad(tmp_edge, (x,), grad_outputs=da.tensor(1.0 + 2.0j))

    out, tmp_edge = _two_steps(x)  # backward() with an edge, alone or in a tuple
    da.backward(tmp_edge, retain_graph=True)
    (ref,) = da.grad(tmp_edge, (x,), retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), ref.numpy())
    x.grad = None
    da.backward((tmp_edge,), retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), ref.numpy())
    out1, tmp_edge1 = _two_steps(x)  # edges mixed with Tensors
    out2, _ = _two_steps(x)
    (ref,) = da.grad((tmp_edge1, out2), (x,), retain_graph=True)
    x.grad = None
    da.backward((tmp_edge1, out2), retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), ref.numpy())
    out, tmp_edge = _two_steps(x)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        da.backward(tmp_edge, inputs=(x,), grad_tensors=da.tensor([1.0, 2.0, 3.0, 4.0]))


def test_gradient_edge_graph_ownership() -> None:
    class Clone(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x.copy()

        @staticmethod
        def backward(ctx, g):
            return g.copy()

    leaf = da.tensor([0.5], requires_grad=True)
    inp = leaf.copy()
    for make in (lambda t: t.copy(), Clone.apply):  # a built-in node, a Function's node
        out = make(inp)
        edge = get_gradient_edge(out)
        da.backward(edge)
        del out  # the edge holds the node: its graph outlives the tensor
        gc.collect()
        da.backward(edge)
    np.testing.assert_allclose(leaf.grad.numpy(), [4.0])


def test_a_complex_grad_output_for_a_real_output_is_an_error() -> None:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype.*complex128.*float64"):
        da.grad((2 * x).sum(), x, grad_outputs=da.tensor(1.0 + 1.0j))
    z = da.tensor([1.0 + 1.0j], requires_grad=True)
    with pytest.raises(RuntimeError, match="same dtype.*astype"):
        da.grad((2 * z).sum(), z, grad_outputs=da.tensor(1.0))
    (gz,) = da.grad((2 * z).sum(), z, grad_outputs=da.tensor(1.0 + 0j, dtype="complex64"))
    np.testing.assert_allclose(gz.numpy(), [2.0])  # (complex of another precision: converted)
    (g,) = da.grad((2 * x).sum(), x, grad_outputs=da.tensor(1.0, dtype="float32"))
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0])  # (a real dtype is converted)


# ---------------------------------------------------------------------------------------------
# hooks: their order on AccumulateGrad, grad() and hooks, hooks after in-place writes
# ---------------------------------------------------------------------------------------------


def _acc(t: da.Tensor) -> object:
    return (t * 1.0).grad_fn.next_functions[0][0]


def test_post_accumulate_grad_hook_ordering() -> None:
    t = da.tensor([0.1, 0.2, 0.3], requires_grad=True)
    acc = _acc(t)
    t.register_hook(lambda g: g - 2.0)  # 1. the tensor's pre-hook
    acc.register_prehook(lambda go: (go[0] / 5.0,))  # 2. the node's pre-hook

    def post_acc(u):  # 3. post-accumulate-grad: sees the accumulated .grad
        u.grad += 0.5

    def node_post(gi, go):  # 4. the node's post-hook: sees what its pre-hooks gave
        t.grad = go[0] * 10

    t.register_post_accumulate_grad_hook(post_acc)
    acc.register_hook(node_post)
    t.sum().backward()
    # in order: ((1 - 2) / 5 + 0.5) * 10 = 3 (any other order gives another number)
    np.testing.assert_allclose(t.grad.numpy(), [3.0, 3.0, 3.0])


def test_prehook_ordering() -> None:
    log: list[int] = []

    def hook1(g):
        log.append(1)
        return g * 3

    def hook2(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)

    a = da.tensor(1.0, requires_grad=True)
    b = a.copy()
    b.grad_fn.register_prehook(hook2)
    b.register_hook(hook1)  # a tensor's hooks run before its node's, whatever the order
    b.grad_fn.register_prehook(hook2)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(hook1)
    acc.register_prehook(hook2)
    a.register_hook(hook1)
    b.sum().backward(retain_graph=True)
    assert log == [1, 2, 2, 1, 1, 2]
    np.testing.assert_allclose(a.grad.numpy(), 3 * 2 * 2 * 3 * 3 * 2)
    log.clear()
    da.grad(b.sum(), inputs=(a,), retain_graph=True)  # grad(): the leaf's tensor hooks only
    assert log == [1, 2, 2, 1, 1]
    log.clear()
    b.grad = None
    b.sum().backward(inputs=(b,))
    assert log == [1, 2, 2]
    assert float(b.grad) == 3.0  # (a non-leaf's .grad: before its node's pre-hooks)


def test_accumulate_grad_hooks_observe_the_tensor_prehook() -> None:
    a = da.tensor(1.0, requires_grad=True)
    seen: list[tuple[str, float, int]] = []
    b = a.copy()
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(lambda gi, go: seen.append(("post", float(go[0]), len(gi))))
    acc.register_prehook(lambda go: seen.append(("pre", float(go[0]), len(go))))
    a.register_hook(lambda g: g * 2)
    b.backward()
    assert seen == [("pre", 2.0, 1), ("post", 2.0, 0)]


def test_accumulate_grad_posthooks_do_not_run_for_a_leaf_not_asked_for() -> None:
    def boom(*args):
        raise AssertionError("must not run")

    a = da.tensor(1.0, requires_grad=True)
    a.register_hook(boom)
    b = da.tensor(1.0, requires_grad=True)
    c = a.copy()
    c.grad_fn.next_functions[0][0].register_hook(boom)
    (a + b + c).sum().backward(inputs=[b])
    assert float(b.grad) == 1.0 and a.grad is None


def test_hook_counts_when_called_with_grad() -> None:
    a = da.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    counts = {"tensor": 0, "pre": 0, "post": 0}

    def count(kind):
        def hook(*args):
            counts[kind] += 1
        return hook

    a.register_hook(count("tensor"))
    b.register_hook(count("tensor"))
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(count("post"))
    acc.register_prehook(count("pre"))
    b.grad_fn.register_hook(count("post"))
    b.grad_fn.register_prehook(count("pre"))
    for run, want in [
        (lambda: da.grad(c, inputs=(b,), retain_graph=True), (1, 0, 0)),
        (lambda: da.grad(c, inputs=(a, b), retain_graph=True), (2, 1, 1)),
        (lambda: c.backward(retain_graph=True), (2, 2, 2)),
        (lambda: c.backward(inputs=(a, b), retain_graph=True), (2, 2, 2)),
    ]:
        counts.update(tensor=0, pre=0, post=0)
        run()
        assert (counts["tensor"], counts["pre"], counts["post"]) == want


def test_tensor_hooks_inplace() -> None:
    calls: list[tuple[str, float]] = []

    def fn1(g):
        calls.append(("fn1", float(g)))  # x2 from the multiply, x2 from fn2
        return g * 2

    def fn2(g):
        calls.append(("fn2", float(g)))
        return g * 2

    a = da.tensor([1.0], requires_grad=True)
    b = a.copy()
    b.register_hook(fn1)  # on the version before the write
    b *= 2
    b.register_hook(fn2)  # on the new version
    b.sum().backward()
    assert calls == [("fn2", 1.0), ("fn1", 4.0)]
    np.testing.assert_allclose(a.grad.numpy(), [8.0])
    calls.clear()
    a = da.tensor([1.0], requires_grad=True)
    b = a.copy()
    b.register_hook(fn1)
    b *= 2  # twice: still the hook of the first version
    b *= 2
    b.sum().backward()
    assert calls == [("fn1", 4.0)]
    np.testing.assert_allclose(a.grad.numpy(), [8.0])


def test_tensor_hooks_inplace_over_view() -> None:
    # A deliberate difference (docs/graph.md, "Hooks and in-place writes"): a hook registered
    # on a view before a write into that view runs with the gradient of that earlier
    # version, as it does for a tensor that is not a view (test_tensor_hooks_inplace, torch's
    # too); torch's CopySlices skips it. A hook of another view of the base, registered
    # before the write, does not run (that view was regenerated from the new base), as in
    # torch; one registered after runs, without torch's need to read view2.grad_fn first.
    calls: list[tuple[str, float]] = []

    def log(name):
        def hook(g):
            calls.append((name, float(g[0])))
        return hook

    base = da.tensor([1.0], requires_grad=True).copy()
    view = base[:]
    view2 = base[:]
    view.register_hook(log("view, before"))
    view2.register_hook(log("view2, before"))
    view *= 2
    view2.register_hook(log("view2, after"))
    (view + view2).sum().backward()
    # sum(view + view2) = 4 * view_before (both read the written base): d/dview_before = 4
    assert sorted(calls) == [("view, before", 4.0), ("view2, after", 1.0)]


def test_retain_grad_inplace_over_view() -> None:
    base = da.tensor([1.0], requires_grad=True).copy()
    view = base[:]
    view2 = base[:]
    view.retain_grad()
    view2.retain_grad()
    view *= 2
    (view + view2).sum().backward()
    np.testing.assert_allclose(view.grad.numpy(), [1.0])
    np.testing.assert_allclose(view2.grad.numpy(), [1.0])


def test_retain_grad_inplace() -> None:
    a = da.tensor([1.0], requires_grad=True).copy()
    a.retain_grad()
    a *= 2
    a *= 2
    a.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [1.0])  # the latest version's gradient
    x = da.tensor([1.0], requires_grad=True).copy()
    x.retain_grad()
    x_view = x[:]
    x_view *= 2
    x *= 2
    x.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


def test_tensor_hooks_inplace_multiple_outputs() -> None:
    class DoubleMul(da.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    counts = [0, 0, 0]

    def counter(k, want):
        def hook(g):
            counts[k] += 1
            np.testing.assert_allclose(g.numpy(), want)
        return hook

    b = _r(3, 3)
    out1, out2 = DoubleMul.apply(b)
    out1.register_hook(counter(0, 2 * np.ones((3, 3))))
    out2.register_hook(counter(1, 3 * np.ones((3, 3))))
    out1 *= 2
    out1.register_hook(counter(2, np.ones((3, 3))))
    (out1 + out2 * 3).sum().backward()
    assert counts == [1, 1, 1]
    np.testing.assert_allclose(b.grad.numpy(), (2 * 2 * 1 + 3 * 3) * np.ones((3, 3)))


# ---------------------------------------------------------------------------------------------
# inference tensors in a functional op
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("requires_grad", [True, False])
def test_mix_inference_and_normal_tensor_functional_op(requires_grad) -> None:
    s = da.tensor(np.ones((1, 2, 3)), requires_grad=requires_grad)
    with da.inference_mode():
        c = da.tensor(np.ones((1, 2, 3)), requires_grad=requires_grad)
    out = c + s  # add saves nothing: an inference tensor may be its input
    np.testing.assert_allclose(out.numpy(force=True), 2 * np.ones((1, 2, 3)))
    assert out.requires_grad == requires_grad and not out.is_inference()
    assert out.is_leaf == (not requires_grad)
    assert (c * 2.0 + s).requires_grad == requires_grad  # (x * 2.0 saves only the scalar)
    if requires_grad:
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            c * s  # multiply saves its inputs: refused
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            dnp.sin(c)
        out.sum().backward()
        np.testing.assert_allclose(s.grad.numpy(), np.ones((1, 2, 3)))
        np.testing.assert_allclose(c.grad.numpy(), np.ones((1, 2, 3)))  # (a leaf: it accumulates)
        e = dnp.exp(s + c)  # exp saves its output, a normal tensor: allowed
        assert e.requires_grad
    else:
        assert (c * s).grad_fn is None


# ---------------------------------------------------------------------------------------------
# forward mode
# ---------------------------------------------------------------------------------------------


def test_print_shows_the_tangent() -> None:
    with da.dual_level():
        a = da.tensor([1.0, 2.0, 3.0])
        assert "tangent=" not in str(a)
        b = da.make_dual(a, da.tensor([4.0, 5.0, 6.0]))
        assert "tangent=" not in str(a)
        assert str(b) == repr(b) == "tensor([1., 2., 3.], tangent=tensor([4., 5., 6.]))"
        p, t = da.unpack_dual(b)
        assert "tangent=" not in str(p) and "tangent=" not in str(t)
        w = da.make_dual(da.tensor([1.0], requires_grad=True) * 1.0, da.tensor([2.0]))
        assert repr(w) == "tensor([1.], grad_fn=<MultiplyBackward0>, tangent=tensor([2.]))"
        with da.dual_level():  # nested: the inner level's tangent, and which level it is
            c = da.make_dual(b, da.tensor([7.0, 8.0, 9.0]))
            assert repr(c).endswith("tangent=tensor([7., 8., 9.]), level=2)") or "level=" in repr(c)
            assert "tangent=tensor([4., 5., 6.])" in repr(c)
    assert "tangent=" not in str(b)  # the level exited: a dual behaves as its primal


def test_basic_packing_unpacking() -> None:
    foo, bar = da.tensor([1.0, 2.0]), da.tensor([3.0, 4.0])
    with da.dual_level():
        baz = da.make_dual(foo, bar)
        p, t = da.unpack_dual(baz)
        np.testing.assert_array_equal(p.numpy(), foo.numpy())
        assert t is bar  # the tangent given, as it is
        fp, ft = da.unpack_dual(foo)  # packing did not change the input
        assert ft is None and fp is foo or np.array_equal(fp.numpy(), foo.numpy())
    p, t = da.unpack_dual(baz)
    assert t is None


def test_advanced_packing_unpacking() -> None:
    foo, bar = da.tensor([1.0, 2.0]), da.tensor([1.0, 1.0])
    with da.dual_level():
        dual = da.make_dual(foo, bar)
        assert np.shares_memory(dual.detach().numpy(), foo.numpy())  # memory and version
        assert foo._version == dual._version
        foo += 1
        assert foo._version == dual._version
        p, t = da.unpack_dual(dual)  # unpacking aliases too
        assert np.shares_memory(p.numpy(), foo.numpy()) and t is bar
        assert foo._version == p._version
        foo += 1
        assert foo._version == p._version
        bar += 1
        assert bar._version == t._version

    foo.requires_grad_()  # reverse mode through packing and unpacking
    bar.requires_grad_()
    with da.dual_level():
        dual = da.make_dual(foo, bar)
        p, t = da.unpack_dual(dual)
        gfoo, gbar = da.grad(p.sum(), (foo, bar), retain_graph=True, allow_unused=True)
        np.testing.assert_allclose(gfoo.numpy(), [1.0, 1.0])
        assert gbar is None
        gfoo, gbar = da.grad(t.sum(), (foo, bar), retain_graph=True, allow_unused=True)
        assert gfoo is None
        np.testing.assert_allclose(gbar.numpy(), [1.0, 1.0])

        out = dual.detach() * 2  # detach drops the tangent
        p, t = da.unpack_dual(out)
        assert not p.requires_grad and t is None
        np.testing.assert_allclose(p.numpy(), 2 * foo.numpy(force=True))

        with da.no_grad():  # no_grad keeps the tangent (it is not reverse mode)
            out = dual * 3
        p, t = da.unpack_dual(out)
        assert not p.requires_grad and not t.requires_grad
        np.testing.assert_allclose(t.numpy(), 3 * bar.numpy(force=True))

        d = dual.copy()
        assert d.detach_() is d  # detach_ in place drops the tangent too
        p, t = da.unpack_dual(d * 2)
        assert not p.requires_grad and t is None and not d.requires_grad
        np.testing.assert_allclose(p.numpy(), 2 * foo.numpy(force=True))


def test_view_inplace_non_differentiable_views() -> None:
    original_foo = np.array([0.25, 0.5])
    foo, bar = da.tensor(original_foo.copy()), da.tensor([1.0, 1.0])
    with da.dual_level():
        dual = da.make_dual(foo, bar)
        dual *= 2
        assert da.unpack_dual(foo).tangent is None  # the primal given stays a plain tensor,
        np.testing.assert_allclose(foo.numpy(), original_foo * 2)  # written in place
        np.testing.assert_allclose(da.unpack_dual(dual).tangent.numpy(), [2.0, 2.0])
        # A deliberate difference (docs/graph.md): the tangent given is not written into
        # (a tangent array may be shared by other results); torch's bar becomes [2, 2]
        np.testing.assert_allclose(bar.numpy(), [1.0, 1.0])
        p, t = da.unpack_dual(dual)
        assert da.unpack_dual(p).tangent is None and da.unpack_dual(t).tangent is None
        p *= 2  # the primal alone: the dual's tangent stays
        np.testing.assert_allclose(da.unpack_dual(dual).primal.numpy(), original_foo * 4)
        np.testing.assert_allclose(da.unpack_dual(dual).tangent.numpy(), [2.0, 2.0])
        t *= 2  # the tangent alone: the dual's primal stays
        np.testing.assert_allclose(da.unpack_dual(dual).primal.numpy(), original_foo * 4)
        np.testing.assert_allclose(da.unpack_dual(dual).tangent.numpy(), [4.0, 4.0])


def test_view_inplace_differentiable_views() -> None:
    foo, bar = da.tensor([0.25, 0.5]), da.tensor([1.0, 1.0])
    with da.dual_level():
        dual = da.make_dual(foo, bar)
        view = dual[0:1]
        view *= 2  # a differentiable view: the base's tangent follows
        assert da.unpack_dual(foo).tangent is None
        np.testing.assert_allclose(da.unpack_dual(dual).tangent.numpy(), [2.0, 1.0])
        np.testing.assert_allclose(da.unpack_dual(view).tangent.numpy(), [2.0])
        baz = da.tensor([0.1, 0.2])
        baz += dual  # a plain tensor written with a dual becomes dual
        np.testing.assert_allclose(da.unpack_dual(baz).tangent.numpy(), [2.0, 1.0])
        baz = da.tensor([0.1, 0.2])
        baz[0] = dual[0]
        np.testing.assert_allclose(da.unpack_dual(baz).tangent.numpy(), [2.0, 0.0])
        baz = da.tensor([0.1, 0.2])
        v = baz.detach()  # a forward-non-differentiable view: no tangent reaches the base
        v += dual
        assert da.unpack_dual(baz).tangent is None
        np.testing.assert_allclose(baz.numpy(), [0.1 + 0.5, 0.2 + 0.5])


def test_set_fw_grad_having_own_fw_grad_at_same_level() -> None:
    foo, bar, baz = da.tensor([1.0, 2.0]), da.tensor([3.0, 4.0]), da.tensor([5.0, 6.0])
    with da.dual_level():
        dual = da.make_dual(foo, bar)
        with pytest.raises(RuntimeError, match="itself has a forward gradient at the same level"):
            da.make_dual(baz, dual)
        with pytest.raises(ValueError):  # (the class dualad raised before, too)
            da.make_dual(baz, dual)
        ok = da.make_dual(baz, da.unpack_dual(dual).primal)  # its value: allowed
        np.testing.assert_allclose(da.unpack_dual(ok).tangent.numpy(), [1.0, 2.0])


def test_out_variant_is_differentiable() -> None:
    # A deliberate difference (docs/graph.md, docs/inplace.md): torch's out= functions refuse
    # autodiff (RuntimeError "out="); NumPy code writes out= often, and dualad's out= is an
    # in-place write like any other, its tangent and gradient those of the same program
    # written without out=.
    rng = np.random.default_rng(3)
    a0, t0, b0 = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
    with da.dual_level():
        foo = da.make_dual(da.tensor(a0), da.tensor(t0))
        bar = da.tensor(b0)
        dnp.add(bar, bar, out=foo)  # foo's new value: 2 bar, a constant
        np.testing.assert_allclose(foo.numpy(force=True), 2 * b0)
        np.testing.assert_allclose(da.unpack_dual(foo).tangent.numpy(), [0.0, 0.0])
        foo = da.make_dual(da.tensor(a0), da.tensor(t0))
        dnp.add(foo, bar, out=bar)  # bar's new value: foo + bar, with foo's tangent
        np.testing.assert_allclose(bar.numpy(force=True), a0 + b0)
        np.testing.assert_allclose(da.unpack_dual(bar).tangent.numpy(), t0)
    a = da.tensor(a0, requires_grad=True)
    b = da.tensor(b0, requires_grad=True)
    x = dnp.zeros(2)
    dnp.multiply(a, b, out=x)
    (x * x).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * a0 * b0 * b0)
    np.testing.assert_allclose(b.grad.numpy(), 2 * a0 * a0 * b0)


class _InplaceFn(da.Function):
    @staticmethod
    def forward(ctx, foo):
        ctx.mark_dirty(foo)
        foo *= 2
        return foo

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_function_forward_mode_inplace_checks() -> None:
    class InPlaceJvp(_InplaceFn):
        @staticmethod
        def jvp(ctx, g):
            g *= 2  # torch's required form: the tangent modified in place, returned
            return g

    class NewJvp(_InplaceFn):
        @staticmethod
        def jvp(ctx, g):
            return g * 2  # a new tensor: torch raises ("must modify ... inplace"); dualad
            # takes the returned tangent (a deliberate difference: docs/graph.md)

    for fn in (InPlaceJvp, NewJvp):
        t = da.tensor([3.0, 3.0])
        with da.dual_level():
            foo = da.make_dual(da.tensor([1.0, 1.0]), t)
            r = fn.apply(foo)
            assert r is foo
            p, tan = da.unpack_dual(r)
            np.testing.assert_allclose(p.numpy(), [2.0, 2.0])
            np.testing.assert_allclose(tan.numpy(), [6.0, 6.0])
        np.testing.assert_allclose(t.numpy(), [3.0, 3.0])  # (the tangent given: untouched)


def test_custom_function_forward_mode_non_differentiable() -> None:
    x, xt, y = da.tensor(2.0), da.tensor(1.0), da.tensor(3.0)

    class Marked(da.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.copy()
            ctx.mark_non_differentiable(out)
            return x.copy(), out

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, None

    with da.dual_level():
        out1, out2 = Marked.apply(da.make_dual(x, xt), y)
        assert float(da.unpack_dual(out1).tangent) == 1.0
        assert da.unpack_dual(out2).tangent is None

    seen = []

    class IntOut(da.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.copy(), y.copy()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            seen.append(y_t)
            return x_t, None

    with da.dual_level():
        _, out2 = IntOut.apply(da.make_dual(x, xt), da.tensor(3))
        assert da.unpack_dual(out2).tangent is None and seen == [None]

    class Wrong(Marked):
        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, x_t.copy()

    with da.dual_level(), pytest.raises(RuntimeError,
                                        match="You should return None at that position"):
        Wrong.apply(da.make_dual(x, xt), y)

    class WrongInt(IntOut):
        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, x_t.copy()

    with da.dual_level(), pytest.raises(RuntimeError, match="position 1.*int64"):
        WrongInt.apply(da.make_dual(x, xt), da.tensor(3))
