"""A Function with only `jvp` that reads `ctx.saved_tensors` saved by `save_for_forward`.

Forward mode reads them directly; reverse mode transposes the same jvp after the
forward pass, so the node must keep them (version-checked) for the backward pass.
"""

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp


class Cube(da.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x**3

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * t


def test_reverse_mode_by_transposition_reads_what_forward_saved():
    x0 = np.array([0.5, -1.5, 2.0])
    x = da.tensor(x0, requires_grad=True)
    Cube.apply(x).sum().backward()
    assert np.allclose(x.grad.numpy(), 3 * x0**2)
    # both modes agree with each other and with finite differences
    _, Ju = F.jvp(Cube.apply, da.tensor(x0), da.ones(3))
    assert np.allclose(Ju.numpy(), 3 * x0**2)
    assert da.gradcheck(Cube.apply, (da.tensor(x0, requires_grad=True),), check_forward_ad=True)


def test_a_value_saved_for_forward_changed_before_backward_is_caught():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    y = dnp.sum(Cube.apply(a))
    a[0] = 5.0  # in place, after Cube saved `a` for its jvp
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
