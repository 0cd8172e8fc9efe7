"""More of the behaviours torch.autograd's own tests check (issue 20, item 6): materialized
gradients of custom Functions, mark_dirty on a non-input, the functional API's strict and
vectorize switches, backward(inputs=...) accumulating at the leaf's turn, saved values under
torch's names (``grad_fn._saved_self``), and disable_saved_tensors_hooks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp


def _x(seed: int = 0, n: int = 4) -> da.Tensor:
    return da.tensor(np.random.default_rng(seed).normal(size=n), requires_grad=True)


# ---------------------------------------------------------------------------
# disable_saved_tensors_hooks
# ---------------------------------------------------------------------------


def test_values_saved_inside_disable_saved_tensors_hooks_are_not_packed() -> None:
    packed: list[int] = []

    def pack(t):
        packed.append(1)
        return t

    x = _x(1)
    with da.graph.saved_tensors_hooks(pack, lambda t: t):
        with da.graph.disable_saved_tensors_hooks("no hooks in here"):
            y = (x * x).sum()
        assert packed == []  # (pushed before, but disabled inside)
        z = (x * x).sum()
        assert len(packed) == 2  # (outside again: each saved operand is packed)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy(force=True))
    x.grad = None
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy(force=True))


# ---------------------------------------------------------------------------
# mark_dirty
# ---------------------------------------------------------------------------


def test_mark_dirty_of_a_tensor_that_is_not_an_input_warns() -> None:
    class Dirty(da.Function):
        @staticmethod
        def forward(ctx, a):
            out = a * 2
            ctx.mark_dirty(out)  # not an input: nothing to declare
            return out

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = _x(2)
    with pytest.warns(UserWarning, match=r"Only input Tensors should be given to "
                                         r"ctx\.mark_dirty\(\)"):
        y = Dirty.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(4, 2.0))

    class Input(da.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.mark_dirty(a)  # an input: no warning
            return a

        @staticmethod
        def backward(ctx, g):
            return g

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Input.apply(x * 1.0)


# ---------------------------------------------------------------------------
# functional: strict and vectorize
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [F.hvp, F.vhp])
@pytest.mark.parametrize("create_graph", [False, True])
def test_hvp_of_an_output_independent_of_the_input_is_zeros(fn, create_graph) -> None:
    x = np.random.default_rng(3).normal(size=4)
    v = np.ones(4)
    out, hv = fn(lambda a: da.tensor(1.0), x, v, create_graph=create_graph)
    assert float(out) == 1.0
    assert hv.shape == (4,) and not np.any(hv.numpy(force=True))
    with pytest.raises(RuntimeError, match="Output 0"):
        fn(lambda a: da.tensor(1.0), x, v, strict=True)
    # and an output that depends on the input still gets its H v (closed form: 6 x v)
    np.testing.assert_allclose(fn(lambda a: (a ** 3).sum(), x, v)[1].numpy(), 6 * x * v)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_strict_with_vectorize_is_an_error(strategy) -> None:
    x = np.random.default_rng(4).normal(size=3)
    msg = "`strict=True` and `vectorize=True` are not supported together"
    with pytest.raises(RuntimeError, match=f"jacobian: {msg}"):
        F.jacobian(lambda a: a ** 2, x, strict=True, vectorize=True, strategy=strategy)
    with pytest.raises(RuntimeError, match=f"hessian: {msg}"):
        F.hessian(lambda a: (a ** 3).sum(), x, strict=True, vectorize=True,
                  outer_jacobian_strategy=strategy)
    # each alone is allowed, and gives the closed form
    for kw in ({"strict": True}, {"vectorize": True}):
        np.testing.assert_allclose(
            F.jacobian(lambda a: a ** 2, x, strategy=strategy, **kw).numpy(), np.diag(2 * x))
        np.testing.assert_allclose(
            F.hessian(lambda a: (a ** 3).sum(), x, outer_jacobian_strategy=strategy,
                      **kw).numpy(), np.diag(6 * x))


# ---------------------------------------------------------------------------
# backward(inputs=...)
# ---------------------------------------------------------------------------


def _leaf_turn(inputs: bool) -> list[object]:
    x = da.tensor([1.0, 2.0], requires_grad=True)
    w = da.tensor([3.0, 4.0], requires_grad=True)
    h = x * 2.0
    seen: list[object] = []
    # w's AccumulateGrad is ready before h's node runs: torch runs it then
    h.register_hook(lambda g: seen.append(("h", None if w.grad is None else w.grad.tolist())))
    w.register_hook(lambda g: seen.append("w tensor hook"))
    out = (h * w).sum()
    acc_w = out.grad_fn.next_functions[0][0].next_functions[1][0]
    assert acc_w.name() == "AccumulateGrad"
    acc_w.register_prehook(lambda g: seen.append("w pre-hook"))
    acc_w.register_hook(lambda gi, go: seen.append("w post-hook"))
    w.register_post_accumulate_grad_hook(lambda t: seen.append("w post-accumulate"))
    x.register_post_accumulate_grad_hook(lambda t: seen.append("x post-accumulate"))
    if inputs:
        out.backward(inputs=[x, w])
    else:
        out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * w.numpy(force=True))
    np.testing.assert_allclose(w.grad.numpy(), h.numpy(force=True))
    return seen


def test_backward_inputs_accumulates_a_leaf_at_its_turn_in_the_pass() -> None:
    want = ["w tensor hook", "w pre-hook", "w post-accumulate", "w post-hook",
            ("h", [2.0, 4.0]), "x post-accumulate"]
    assert _leaf_turn(False) == want
    assert _leaf_turn(True) == want  # (not after the pass: h's hook sees w.grad)


# ---------------------------------------------------------------------------
# set_materialize_grads: an undefined gradient still reaches a custom backward
# ---------------------------------------------------------------------------


class _Undefined(da.Function):
    """Gives no gradient (None) for its input, as torch's ``UndefinedGrad`` node does."""

    @staticmethod
    def forward(ctx, a):
        return a * 1.0

    @staticmethod
    def backward(ctx, g):
        return None


def _passing(materialize: bool, calls: list[object]) -> type:
    class Pass(da.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(materialize)
            return a * 3.0

        @staticmethod
        def backward(ctx, g):
            calls.append(None if g is None else g.numpy(force=True).copy())
            return None if g is None else g * 3.0

    return Pass


@pytest.mark.parametrize("between", [False, True])
def test_undefined_gradient_reaches_a_custom_backward_as_zeros(between) -> None:
    calls: list[object] = []
    Pass = _passing(True, calls)
    x = _x(5, 3)
    y = Pass.apply(x)
    if between:  # (operations in between pass the undefined gradient on)
        y = dnp.exp(y) * 2.0
    _Undefined.apply(y).sum().backward()
    assert len(calls) == 1
    np.testing.assert_array_equal(calls[0], np.zeros(3))
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))  # (what backward gave)
    calls.clear()
    (g,) = da.grad(_Undefined.apply(Pass.apply(x)).sum(), x, allow_unused=True)
    assert len(calls) == 1
    np.testing.assert_array_equal(g.numpy(), np.zeros(3))
    # an undefined gradient alone leaves a leaf without .grad; a gradient from another
    # path still arrives, and the custom backward gets it once
    x = _x(7, 3)
    _Undefined.apply(x ** 2).sum().backward()
    assert x.grad is None
    calls.clear()
    y = Pass.apply(x)
    (_Undefined.apply(y).sum() + (2.0 * y).sum()).backward()
    assert len(calls) == 1
    np.testing.assert_allclose(calls[0], np.full(3, 2.0))
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 6.0))


def test_undefined_gradient_reaches_a_custom_backward_as_none_without_materializing() -> None:
    calls: list[object] = []
    x = _x(6, 3)
    _Undefined.apply(_passing(False, calls).apply(x)).sum().backward()
    assert calls == [None]
    assert x.grad is None  # (it gave None: nothing reaches the leaf)



# ---------------------------------------------------------------------------
# saved values under torch's names (the "Saved tensors" section of the seed)
# ---------------------------------------------------------------------------


def test_saved_self_of_a_square_is_the_input_itself() -> None:
    x = da.tensor(np.random.default_rng(8).normal(size=5), requires_grad=True)
    y = x ** 2
    assert "_saved_self" in dir(y.grad_fn) and "_raw_saved_self" in dir(y.grad_fn)
    assert y.grad_fn._saved_self is x
    with pytest.raises(AttributeError, match="_saved_result"):
        y.grad_fn._saved_result  # noqa: B018 (square saves its input, not its result)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="already been freed"):
        y.grad_fn._saved_self  # noqa: B018


def test_saved_result_of_exp_equals_the_output_but_is_another_tensor() -> None:
    x = _x(9, 5)
    y = dnp.exp(x)
    r = y.grad_fn._saved_result
    assert r is not y  # (packed to avoid a cycle, unpacked into another Tensor)
    np.testing.assert_array_equal(r.numpy(force=True), y.numpy(force=True))
    assert np.shares_memory(r.numpy(force=True), y.numpy(force=True))
    assert r.grad_fn is y.grad_fn


def test_saved_self_and_other_are_new_tensors_sharing_storage_under_hooks() -> None:
    x = _x(10, 5)
    y = x * x
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is x
    with da.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x * x
    a, b = y.grad_fn._saved_self, y.grad_fn._saved_other
    for s in (a, b):
        assert s is not x and np.shares_memory(s.numpy(force=True), x.numpy(force=True))


def test_raw_saved_register_hooks_packs_now_and_unpacks_at_each_read() -> None:
    x = _x(11, 5)
    y = x ** 2
    calls: list[str] = []

    def pack(t):
        calls.append("pack")
        return t.numpy(force=True).copy()

    def unpack(a):
        calls.append("unpack")
        return da.tensor(a)

    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(pack, unpack)
    assert calls == ["pack"]
    s = y.grad_fn._saved_self
    assert calls == ["pack", "unpack"] and s is not x
    np.testing.assert_array_equal(s.numpy(force=True), x.numpy(force=True))
    with pytest.raises(RuntimeError, match="already has hooks"):
        raw.register_hooks(pack, unpack)
    with pytest.raises(TypeError):
        y.grad_fn._raw_saved_self.register_hooks(pack, None)
    y.sum().backward()
    assert calls == ["pack", "unpack", "unpack"]  # (backward read it through unpack)
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy(force=True))
    with pytest.raises(RuntimeError, match="already been freed"):
        raw.register_hooks(pack, unpack)
