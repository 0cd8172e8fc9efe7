"""dualad.functional.ravel: nested parameters to one vector and back, against
jax.flatten_util.ravel_pytree's layout, and differentiable through flat and unravel."""

from collections import namedtuple

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp
from dualad.functional import ravel

Pair = namedtuple("Pair", "a b")


def tree(rng):
    return {"w": rng.standard_normal((2, 3)), "layers": [rng.standard_normal(3), 1.5],
            "pair": Pair(rng.standard_normal((2, 2)), np.float32(2.0)), "none": None}


def test_layout_and_round_trip_like_jax():
    jfu = pytest.importorskip("jax.flatten_util")
    rng = np.random.default_rng(0)
    t = tree(rng)
    flat, unravel = ravel(t)
    want, _ = jfu.ravel_pytree({k: v for k, v in t.items()})
    # (JAX computes in float32 unless x64 is on: the layout is what is compared)
    assert flat.dtype == np.float64 and flat.shape == want.shape
    np.testing.assert_allclose(flat.numpy(), np.asarray(want), rtol=1e-6)
    back = unravel(flat)
    assert set(back) == set(t) and back["none"] is None and isinstance(back["pair"], Pair)
    np.testing.assert_array_equal(back["w"].numpy(), t["w"])
    np.testing.assert_array_equal(back["layers"][0].numpy(), t["layers"][0])
    assert back["layers"][1].shape == () and float(back["layers"][1]) == 1.5
    assert back["pair"].b.dtype == np.float32 and back["pair"].a.shape == (2, 2)


def loss(params):
    w, (b, s) = params["w"], params["rest"]
    x = np.linspace(-1.0, 1.0, 3)
    return dnp.sum(dnp.tanh(w @ x + b) ** 2) * s


def test_gradient_through_unravel_against_finite_differences():
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((2, 3)), "rest": (rng.standard_normal(2), 0.7)}
    flat, unravel = ravel(params)
    g = F.grad(lambda v: loss(unravel(v)))(flat).numpy()
    h, v0 = 1e-6, flat.numpy()
    fd = [(float(loss(unravel(da.tensor(v0 + h * e)))) - float(loss(unravel(da.tensor(v0 - h * e)))))
          / (2 * h) for e in np.eye(v0.size)]
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)
    # forward mode agrees with reverse mode
    np.testing.assert_allclose(F.jacfwd(lambda v: loss(unravel(v)))(flat).numpy(), g, rtol=1e-12)


def test_gradient_through_flat_reaches_the_leaves():
    w = da.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = da.tensor(0.5, requires_grad=True)
    flat, _ = ravel((w, [b]))
    (flat * dnp.arange(5.0)).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0.0, 1.0], [2.0, 3.0]])
    assert float(b.grad) == 4.0


def test_misuse():
    with pytest.raises(TypeError, match="leaf of type str"):
        ravel({"a": "text"})
    _, unravel = ravel([np.zeros(3)])
    with pytest.raises(ValueError, match="3 elements"):
        unravel(np.zeros(4))
    with pytest.raises(TypeError, match="imaginary part"):
        unravel(np.zeros(3, complex))
    flat, unravel = ravel({})
    assert flat.shape == (0,) and unravel(flat) == {}
