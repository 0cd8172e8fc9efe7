"""Higher order through every primitive whose JVP reads its own output (issue 18, item 1).

A JVP rule may read ``out`` (exp, tanh, divide, the linear algebra, ...). Reverse over
forward differentiates the tangent the rule built, so ``out`` must be a recorded function
of the inputs when the rule reads it; these cases came back as zeros or as tangents that
did not require grad.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp


def test_a_tangent_built_from_the_output_requires_grad():
    x = da.tensor([0.3, -0.8, 0.6], requires_grad=True)
    with da.dual_level():
        t = da.unpack_dual(dnp.tanh(da.make_dual(x, da.ones(3)))).tangent
    assert t.requires_grad
    (g,) = da.grad(t.sum(), [x])
    th = np.tanh(x.detach().numpy())
    np.testing.assert_allclose(g.numpy(), -2 * th * (1 - th ** 2), rtol=1e-12)


@pytest.mark.parametrize(("f", "d2"), [
    (dnp.exp, np.exp),
    (lambda x: 1 / (1 + dnp.exp(-x)),
     lambda x: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + np.exp(-x)))),
    (dnp.sqrt, lambda x: -0.25 * x ** -1.5),
    (lambda x: dnp.exp(x) * x.sum(), None),
])
def test_reverse_over_forward_matches_the_closed_form(f, d2):
    x0 = np.array([0.5, 1.0, 1.7])
    H = F.jacrev(F.jacfwd(lambda x: dnp.sum(f(x))))(x0).numpy()
    if d2 is not None:
        np.testing.assert_allclose(H, np.diag(d2(x0)), rtol=1e-10, atol=1e-12)
    # any case: reverse over reverse is an independent reference
    H2 = F.jacrev(F.jacrev(lambda x: dnp.sum(f(x))))(x0).numpy()
    np.testing.assert_allclose(H, H2, rtol=1e-10, atol=1e-12)


def test_functional_jvp_with_create_graph_is_differentiable():
    x = da.tensor([0.2, 0.7], requires_grad=True)
    v = da.tensor([1.0, -2.0])
    _, jv = F.jvp(lambda x: dnp.exp(x) / (1 + x), x, v, create_graph=True)
    (g,) = da.grad(jv.sum(), [x])
    xn, vn = x.detach().numpy(), v.numpy()
    # d/dx of v * (e^x / (1 + x))' with (e^x/(1+x))' = e^x x / (1+x)^2
    d2 = np.exp(xn) * (xn ** 2 + 1) / (1 + xn) ** 3
    np.testing.assert_allclose(g.numpy(), vn * d2, rtol=1e-10)
