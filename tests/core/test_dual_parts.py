"""A dual's parts read without making them: the Tensor methods the layers above call
(``core/tensor.py``), on duals whose parts are made (``make_dual``) and unmade (the forward
fast path's), each checked against the parts made on demand."""

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.functional import _common
from dualad.grad_mode import untracked_tangents
from dualad.reverse import graph

X = np.array([0.3, -1.2, 2.0])
V = np.array([1.0, 0.5, -2.0])


def _unmade(x: da.Tensor) -> da.Tensor:
    y = dnp.sin(da.make_dual(x, da.tensor(V))) * 2.0
    assert y._made_parts() == (None, None)  # (the fast layer's form)
    return y


def _parts(t: da.Tensor) -> tuple[np.ndarray, np.ndarray]:
    p, g = da.unpack_dual(t)
    return p.detach().numpy(), g.detach().numpy()


@pytest.mark.fastpath("fast")
def test_alias_and_copy_without_history_keep_unmade_parts_unmade():
    x = da.tensor(X, requires_grad=True)
    with da.dual_level(), untracked_tangents():  # (hvp's forward-over-reverse)
        y = _unmade(x)
        assert y.grad_fn is not None  # (recorded: the unmade primal's node is y's)
        for u in (graph._alias(y), _common._without_history(y)):
            assert u._made_parts() == (None, None)
            assert u._data is y._data and u._version_cell is y._version_counter()
            assert u.grad_fn is None
            np.testing.assert_allclose(_parts(u)[0], 2 * np.sin(X))
            np.testing.assert_allclose(_parts(u)[1], 2 * np.cos(X) * V)
        assert y._made_parts()[0] is None  # (reading them made nothing of y's)


@pytest.mark.fastpath("fast")
def test_graph_fields_of_an_unmade_primal_are_the_duals():
    x = da.tensor(X, requires_grad=True)
    with da.dual_level(), untracked_tangents():
        y = _unmade(x)
        assert y._graph_holder() is y and y._primal_chain() == [y]
        node = y.grad_fn
        p = y._primal  # made now: it takes the dual's graph fields
        assert p.grad_fn is node and y._graph_holder() is p and y._primal_chain() == [y, p]
        # reverse mode through the unmade dual: d/dx sum(2 sin x) = 2 cos x
        (g,) = da.grad(da.unpack_dual(y).primal.sum(), x)
    np.testing.assert_allclose(g.numpy(), 2 * np.cos(X))


def test_made_parts_are_read_as_stored():
    x = da.tensor(X, requires_grad=True)
    with da.dual_level():
        d = da.make_dual(x, da.tensor(V))
        assert all(q is not None for q in d._made_parts())
        assert d._graph_holder() is d._made_parts()[0]
        np.testing.assert_array_equal(d._tangent_array(), V)
        u = graph._alias(d)
        assert u._made_parts()[0] is not d._made_parts()[0]  # (a new primal, without history)
        assert u._made_parts()[1] is d._made_parts()[1]
        assert u.grad_fn is None and not u._made_parts()[0].requires_grad
        np.testing.assert_allclose(_parts(u)[0], X)


def test_set_graph_fields_reaches_every_primal_below():
    x = da.tensor(X)
    outer = da.enter_dual_level()
    inner = da.enter_dual_level()
    try:
        d = da.make_dual(da.make_dual(x, da.tensor(V), level=outer), da.tensor(V), level=inner)
        chain = d._primal_chain()
        assert len(chain) == 3 and chain[-1] is x and d._graph_holder() is x
        d._set_graph_fields(True, None, 0)
        assert all(t._requires_grad for t in chain)
    finally:
        da.exit_dual_level(level=inner)
        da.exit_dual_level(level=outer)
