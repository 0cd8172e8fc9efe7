"""Which results alias their input, and what a write into each does.

NumPy decides what is a view (a basic index, a transpose, a reshape the strides allow, an
einsum that only permutes or takes diagonals) and what is a copy (an advanced index, a
sort, ``tile``, a reshape that must copy). A write into a view changes its base, value and
derivative; a write into a copy changes nothing else, not even the version its source is
at. Every case is checked against its twin written without the aliasing question (an
explicit ``.copy()``, or the out-of-place write), in reverse and forward mode, and where
torch is installed against torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

X0 = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 6.0]])
T0 = np.array([[1.0, -2.0, 0.5], [3.0, 1.5, -1.0]])


def _grad(f, x0):
    x = da.tensor(x0, requires_grad=True)
    f(x).backward()
    return x.grad.numpy()


def _jvp(f, x0, t0):
    with da.dual_level():
        y = f(da.make_dual(da.tensor(x0), da.tensor(t0)))
        return da.unpack_dual(y).tangent.numpy()


# -- a write into a copy leaves its source as it was --------------------------------------

COPIES = {
    "advanced index": lambda x: x[[0, 1]],
    "boolean mask": lambda x: x[x > 1],
    "sort": lambda x: dnp.sort(x),
    "reshape that copies": lambda x: x.T.reshape(6),
    "take": lambda x: dnp.take(x, [0, 1], axis=1),
}


def _write_into(make, twin):
    def f(x):
        b = x * 1
        y = make(b)
        if twin:
            y = y.copy()
        z = b * b  # (saves b: a write that looked like one into b would break backward)
        y[0] = 7.0 * b[0, 0]
        return z.sum() + (y * y).sum() + (b * b * b).sum()
    return f


@pytest.mark.parametrize("name", list(COPIES))
def test_a_write_into_a_copy_does_not_modify_its_source(name):
    f, twin = _write_into(COPIES[name], False), _write_into(COPIES[name], True)
    np.testing.assert_allclose(_grad(f, X0), _grad(twin, X0))
    np.testing.assert_allclose(_jvp(f, X0, T0), _jvp(twin, X0, T0))
    x = da.tensor(X0)
    y = COPIES[name](x)
    v = x._version
    y[0] = 0.0
    assert x._version == v and np.array_equal(x.numpy(), X0)


# -- tile and repeat copy, laid out as NumPy's results ------------------------------------


@pytest.mark.parametrize(("shape", "reps"), [((3,), 2), ((2, 3), (2, 1)), ((2, 3), 1),
                                             ((1,), 3), ((3, 1), (1, 4))])
def test_tile_copies(shape, reps):
    x0 = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    x = da.tensor(x0)
    y = dnp.tile(x, reps)
    x[...] = -1.0  # (a later write into the input does not reach the tiled copy)
    np.testing.assert_array_equal(y.numpy(), np.tile(x0, reps))
    y[(0,) * y.ndim] = 9.0  # (writable, and the input stays as it is)
    assert y.numpy().flat[0] == 9.0 and np.all(x.numpy() == -1.0)

    def f(x, twin):
        b = x * 1
        y = dnp.tile(b, reps)
        y = y.copy() if twin else y
        y[(0,) * y.ndim] = 3.0 * b.reshape(-1)[0]
        return (y * y).sum() + (b * b).sum()

    np.testing.assert_allclose(_grad(lambda x: f(x, False), x0), _grad(lambda x: f(x, True), x0))
    t0 = np.ones(shape)
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), x0, t0),
                               _jvp(lambda x: f(x, True), x0, t0))


@pytest.mark.parametrize(("repeats", "axis"), [(2, 1), (2, None), ([1, 0, 2], 1), (1, 1),
                                               (3, 0)])
def test_repeat_reshapes_to_a_view_where_numpy_does(repeats, axis):
    n = np.repeat(X0, repeats, axis=axis)
    r = dnp.repeat(da.tensor(X0), repeats, axis=axis)
    np.testing.assert_array_equal(r.numpy(), n)
    assert r.numpy().flags.c_contiguous == n.flags.c_contiguous
    flat = r.reshape(-1)
    assert np.shares_memory(flat.numpy(), r.numpy()) == np.shares_memory(n.reshape(-1), n)
    flat[0] = 50.0  # (a write through the reshape reaches the repeated result)
    n.reshape(-1)[0] = 50.0
    np.testing.assert_array_equal(r.numpy(), n)

    def f(x, twin):
        b = x * 1
        y = dnp.repeat(b, repeats, axis=axis)
        if twin:  # the write, out of place
            return (dnp.where(np.arange(y.size).reshape(y.shape) == 0, 5.0 * b[0, 1], y) ** 2
                    ).sum()
        v = y.reshape(-1)
        v[0] = 5.0 * b[0, 1]
        return (y * y).sum()

    np.testing.assert_allclose(_grad(lambda x: f(x, False), X0), _grad(lambda x: f(x, True), X0))
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), X0, T0),
                               _jvp(lambda x: f(x, True), X0, T0))


# -- an einsum that only permutes axes or takes diagonals is a view, as NumPy's -----------

EINSUM_VIEWS = [("ij->ji", (3, 3)), ("ii->i", (3, 3)), ("ijk->kij", (2, 3, 4)), ("ji", (2, 3)),
                ("ij->ij", (2, 3)), ("...ij->...ji", (2, 2, 3)), ("iij->ji", (3, 3, 2)),
                ("iji->ij", (3, 2, 3)), ("iii->i", (3, 3, 3))]


def test_einsum_transpose_written_updates_its_base_gradient():
    # issue 28's program: torch gives [[202, 4], [0, 8]] (e[0, 1] is b[1, 0])
    x = da.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = x * 1
    e = dnp.einsum("ij->ji", b)
    e[0, 1] = 10 * x[0, 0]
    (b * b).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[202.0, 4.0], [0.0, 8.0]])


@pytest.mark.parametrize(("spec", "shape"), EINSUM_VIEWS)
def test_einsum_that_is_a_view_in_numpy_is_one(spec, shape):
    x0 = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    n = np.einsum(spec, x0)
    assert np.shares_memory(n, x0)
    x = da.tensor(x0.copy())
    e = dnp.einsum(spec, x)
    np.testing.assert_array_equal(e.numpy(), n)
    e[(0,) * e.ndim] = -7.0  # (NumPy's write reaches the operand: so does this one)
    n[(0,) * n.ndim] = -7.0
    np.testing.assert_array_equal(x.numpy(), x0)
    # the write, twice: through the view, and out of place at the base positions it names
    where = np.einsum(spec, np.arange(x0.size).reshape(shape))[(1,) * n.ndim]
    at = np.arange(x0.size).reshape(shape) == where

    def f(x, twin):
        b = x * 1
        v = 10.0 * x.reshape(-1)[0] ** 2
        if twin:
            b = dnp.where(at, v, b)
            e = dnp.einsum(spec, b)
        else:
            e = dnp.einsum(spec, b)
            e[(1,) * e.ndim] = v
        return (b * b * b).sum() + (e * dnp.sin(e)).sum()

    t0 = np.cos(x0)
    np.testing.assert_allclose(_grad(lambda x: f(x, False), x0), _grad(lambda x: f(x, True), x0))
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), x0, t0),
                               _jvp(lambda x: f(x, True), x0, t0))
    leaf = da.tensor(x0, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        dnp.einsum(spec, leaf)[(0,) * n.ndim] = 1.0


def test_einsum_that_sums_is_a_copy():
    x = da.tensor([[1.0, 2.0], [3.0, 4.0]])
    for spec in ("ii", "ij->i", "ii->"):
        e = dnp.einsum(spec, x)
        assert not np.shares_memory(e.numpy(), x.numpy())


def test_einsum_views_against_torch():
    torch = pytest.importorskip("torch")
    for spec, shape in EINSUM_VIEWS:
        if "..." in spec or "->" not in spec:
            continue
        x0 = np.linspace(0.5, 2.0, int(np.prod(shape))).reshape(shape)
        got, want = [], []
        for lib, T, einsum in ((da, lambda a: da.tensor(a, requires_grad=True), dnp.einsum),
                               (torch, lambda a: torch.tensor(a, requires_grad=True),
                                torch.einsum)):
            x = T(x0)
            b = x * 1
            e = einsum(spec, b)
            e[(0,) * e.ndim] = 3.0 * (x * x).sum()
            e *= 2.0
            (b * b * b).sum().backward()
            (got if lib is da else want).append(np.asarray(x.grad.detach().numpy()))
        np.testing.assert_allclose(got[0], want[0], err_msg=spec)


# -- numpy.diagonal: a read-only view -------------------------------------------------------

DIAGONALS = [((3, 3), 0, (0, 1)), ((3, 4), 1, (0, 1)), ((4, 3), -1, (1, 0)),
             ((2, 3, 2), 0, (0, 2)), ((2, 3, 4), 2, (-1, 1)), ((3, 3), 5, (0, 1))]


@pytest.mark.parametrize("shape, offset, axes", DIAGONALS)
def test_diagonal_is_a_read_only_view_as_numpys(shape, offset, axes):
    a = np.arange(float(np.prod(shape))).reshape(shape)
    want = np.diagonal(a, offset, *axes)
    t = da.tensor(a)
    d = dnp.diagonal(t, offset, *axes)
    np.testing.assert_array_equal(d.numpy(), want)
    assert np.shares_memory(d.numpy(), t.numpy()) == np.shares_memory(want, a)
    assert d.numpy().flags.writeable == want.flags.writeable
    t[...] = -a  # a later write into the base is seen by the diagonal, as NumPy's
    np.testing.assert_array_equal(d.numpy(), -want)
    for write in (lambda v: v.__setitem__(Ellipsis, 1.0), lambda v: v.__iadd__(1.0)):
        with pytest.raises(ValueError, match="read-only"):
            write(want)
        with pytest.raises(ValueError, match="read-only"):
            write(dnp.diagonal(da.tensor(a, requires_grad=True) * 1, offset, *axes))
    if len(shape) == 2 and offset == 0:  # numpy.diag of a matrix is the same view
        assert not dnp.diag(t).numpy().flags.writeable
        assert np.shares_memory(dnp.diag(t).numpy(), t.numpy())


@pytest.mark.parametrize("shape, offset, axes", DIAGONALS[:5])
def test_a_write_into_the_base_is_seen_by_its_diagonal(shape, offset, axes):
    x0 = np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape)

    def f(x, twin):
        b = x * 1
        d = None if twin else dnp.diagonal(b, offset, *axes)  # taken before the write
        b *= x  # the write
        b[(0,) * b.ndim] = 3.0 * (x * x).sum()
        if twin:
            d = dnp.diagonal(b, offset, *axes)  # (the twin: taken after it)
        return (d * d * d).sum() + (b * d.sum()).sum()

    np.testing.assert_allclose(_grad(lambda x: f(x, False), x0),
                               _grad(lambda x: f(x, True), x0))
    t0 = np.cos(x0)
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), x0, t0),
                               _jvp(lambda x: f(x, True), x0, t0))
    x = da.tensor(x0, requires_grad=True)
    (g,) = da.grad(f(x, False), x, create_graph=True)
    (h,) = da.grad((g * g).sum(), x)
    x = da.tensor(x0, requires_grad=True)
    (g2,) = da.grad(f(x, True), x, create_graph=True)
    (h2,) = da.grad((g2 * g2).sum(), x)
    np.testing.assert_allclose(h.numpy(), h2.numpy())


# -- a write into a result whose rule reads only the inputs --------------------------------

M0 = np.array([[1.5, -2.0], [0.5, 3.0]])
RESULT_WRITTEN = {  # each rule reads the inputs (as torch's), not the result written into
    "abs": (lambda x: dnp.abs(x), M0),
    "abs complex": (lambda x: dnp.abs(x * (1 + 2j)), M0),
    "sign complex": (lambda x: dnp.real(dnp.sign(x * (1 + 2j) + 0.5j)), M0),
    "divide by": (lambda x: 2.0 / (x * x + 1.0), M0),
    "divide": (lambda x: x / (x * x + 1.0), M0),
    "sinc": (lambda x: dnp.sinc(x), M0),
    "logaddexp": (lambda x: dnp.logaddexp(x, 0.5), M0),
    "logaddexp2": (lambda x: dnp.logaddexp2(0.5, x), M0),
    "slogdet": (lambda x: dnp.linalg.slogdet(x)[1], M0),
    "slogdet complex": (lambda x: dnp.linalg.slogdet(x * (1 + 1j))[1], M0),
    "svdvals": (lambda x: dnp.linalg.svdvals(x), M0),
}


@pytest.mark.parametrize("name", list(RESULT_WRITTEN))
def test_a_write_into_a_result_leaves_its_backward_readable(name):
    fn, x0 = RESULT_WRITTEN[name]

    def f(x, twin):
        y = fn(x)
        if twin:
            y = y.copy()
        y *= 2.0
        y += x.sum()
        return (y * dnp.conj(y)).real.sum()

    np.testing.assert_allclose(_grad(lambda x: f(x, False), x0), _grad(lambda x: f(x, True), x0))
    t0 = np.cos(x0)
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), x0, t0),
                               _jvp(lambda x: f(x, True), x0, t0))
    x = da.tensor(x0, requires_grad=True)  # and through create_graph (a second derivative)
    (g,) = da.grad(f(x, False), x, create_graph=True)
    (h,) = da.grad((g * g).sum(), x)
    x = da.tensor(x0, requires_grad=True)
    (g2,) = da.grad(f(x, True), x, create_graph=True)
    (h2,) = da.grad((g2 * g2).sum(), x)
    np.testing.assert_allclose(h.numpy(), h2.numpy())


# -- a write into an input whose rule does not read it -------------------------------------

INPUT_WRITTEN = {  # the rule reads nothing of a real input: its derivative is 0
    "sign": dnp.sign,
    "angle": dnp.angle,
}


@pytest.mark.parametrize("name", list(INPUT_WRITTEN))
def test_a_write_into_an_input_its_rule_does_not_read(name):
    fn = INPUT_WRITTEN[name]

    def f(x, twin):
        b = x * 1
        y = fn(b)
        if twin:
            b = b * 2.0
        else:
            b *= 2.0  # (the twin: the same values, no write)
        return (y * b).sum() + (b * b * b).sum()

    np.testing.assert_allclose(_grad(lambda x: f(x, False), M0), _grad(lambda x: f(x, True), M0))
    t0 = np.cos(M0)
    np.testing.assert_allclose(_jvp(lambda x: f(x, False), M0, t0),
                               _jvp(lambda x: f(x, True), M0, t0))
    x = da.tensor(M0, requires_grad=True)  # and through create_graph (a second derivative)
    (g,) = da.grad(f(x, False), x, create_graph=True)
    (h,) = da.grad((g * g).sum(), x)
    x = da.tensor(M0, requires_grad=True)
    (g2,) = da.grad(f(x, True), x, create_graph=True)
    (h2,) = da.grad((g2 * g2).sum(), x)
    np.testing.assert_allclose(h.numpy(), h2.numpy())


def test_a_write_into_a_complex_input_of_sign_still_raises():
    z = da.tensor(M0 * (1 + 2j), requires_grad=True)
    b = z * 1
    y = dnp.sign(b)  # (its complex rule reads z)
    b *= 2.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        dnp.real(y).sum().backward()


def test_a_scalar_over_x_keeps_x_alone():
    # (a deliberate difference, docs/inplace.md: torch keeps an extra array, 1 / x)
    x = da.tensor(M0, requires_grad=True)
    b = x * 1
    y = 2.0 / b
    assert y.grad_fn._saved_other is not None
    with pytest.raises(AttributeError, match="saved"):
        y.grad_fn._saved_result  # noqa: B018 - the output is not saved
    y *= 3.0  # a write into the result is fine
    b *= 2.0  # a write into x is not
    with pytest.raises(RuntimeError, match="input 1 of DivideBackward0.*clone it first"):
        y.sum().backward()


def test_writes_into_inputs_against_torch():
    torch = pytest.importorskip("torch")
    x = da.tensor(M0, requires_grad=True)
    b = x * 1
    y = dnp.sign(b)
    b *= 3.0
    (y * b).sum().backward()
    xt = torch.tensor(M0, requires_grad=True)
    bt = xt * 1
    yt = torch.sign(bt)
    bt.mul_(3.0)
    (yt * bt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())


def test_writes_into_results_against_torch():
    torch = pytest.importorskip("torch")
    cases = {"abs": (dnp.abs, torch.abs), "divide by": (lambda x: 2.0 / (x + 3.0),
                                                        lambda x: 2.0 / (x + 3.0)),
             "sinc": (dnp.sinc, torch.sinc),
             "logaddexp": (lambda x: dnp.logaddexp(x, 0.5),
                           lambda x: torch.logaddexp(x, torch.tensor(0.5, dtype=x.dtype))),
             "slogdet": (lambda x: dnp.linalg.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1])}
    for name, (fd, ft) in cases.items():
        x = da.tensor(M0, requires_grad=True)
        y = fd(x)
        y *= 3.0
        (y * y).sum().backward()
        xt = torch.tensor(M0, requires_grad=True)
        yt = ft(xt)
        yt.mul_(3.0)
        (yt * yt).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), err_msg=name)
