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
