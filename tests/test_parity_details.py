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
