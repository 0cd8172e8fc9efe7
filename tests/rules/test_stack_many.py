"""Reverse mode through concatenate/stack of more than 64 tensors that require grad.

concatenate is linear in every operand jointly; its table of linear operands once
ended at 64, so a trajectory of 100 steps stacked into one tensor failed to
differentiate ("not linear in its tangents")."""

import numpy as np

import dualad as da
import dualad.numpy as dnp


def test_gradient_through_a_stack_of_many_tensors():
    p = da.tensor([0.5, 2.0], requires_grad=True)
    steps = []
    x = p[0]
    for _ in range(100):  # x_{k+1} = x_k * p1 / 2, so x_k = p0 (p1/2)^k
        x = x * p[1] / 2
        steps.append(x)
    weights = np.linspace(0.0, 1.0, 100)
    dnp.sum(dnp.stack(steps) * weights).backward()
    k = np.arange(1, 101)
    p0, p1 = 0.5, 2.0
    g0 = np.sum(weights * (p1 / 2) ** k)
    g1 = np.sum(weights * p0 * k * (p1 / 2) ** (k - 1) / 2)
    assert np.allclose(p.grad.numpy(), [g0, g1], rtol=1e-12)


def test_concatenate_of_many_matches_forward_mode():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(3)
    f = lambda x: dnp.concatenate([dnp.sin(x * k) for k in range(70)])
    import dualad.functional as F

    J_rev = F.jacobian(f, x0).numpy()
    J_fwd = F.jacobian(f, x0, strategy="forward-mode").numpy()
    k = np.repeat(np.arange(70), 3)
    exact = np.zeros((210, 3))
    exact[np.arange(210), np.tile(np.arange(3), 70)] = k * np.cos(k * np.tile(x0, 70))
    assert np.allclose(J_fwd, exact) and np.allclose(J_rev, exact)
