"""No NumPy RuntimeWarning leaks from inside dualad's derivative formulas (issue 18, item 3).

A derivative at a singular point is inf or NaN, as torch's, and says nothing: the
warnings seen while dualad computes a value and its derivative (forward, reverse, and
forward over reverse) are exactly those NumPy gives computing the value alone on the
same input (``log(0)``'s "divide by zero" is NumPy's and stays). Warnings are recorded
under ``simplefilter("always")``: a user's filter put in front of dualad's own, so
every warning is seen, not once per location. The file runs with the fast paths on
and, in CI's second run, with ``DUALAD_GENERAL_PATH=1``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.rules import elementwise as E

from _support import opdb


def _seen(fn):
    """The (category, message) pairs of the warnings ``fn()`` gives, and its result."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return {(m.category, str(m.message)) for m in w}, out


def _fwd(call, xs, us):
    with da.dual_level():
        outs = call([da.make_dual(da.as_tensor(x), da.as_tensor(u))
                     for x, u in zip(xs, us, strict=True)])
        return [da.unpack_dual(o).tangent for o in outs]


def _rev(call, xs, vs):
    ts = [da.as_tensor(x).detach().requires_grad_(True) for x in xs]
    outs = [o for o in call(ts) if o.requires_grad]
    if not outs:
        return None
    return da.grad(outs, ts, grad_outputs=[da.as_tensor(v) for v in vs[:len(outs)]],
                   allow_unused=True)


def _fwd_rev(call, xs, vs, us):
    with da.dual_level():
        ts = [da.make_dual(da.as_tensor(x).detach().requires_grad_(True), da.as_tensor(u))
              for x, u in zip(xs, us, strict=True)]
        outs = [o for o in call(ts) if o.requires_grad]
        if not outs:
            return None
        gs = da.grad(outs, ts, grad_outputs=[da.as_tensor(v) for v in vs[:len(outs)]],
                     allow_unused=True)
        return [None if g is None else da.unpack_dual(g).tangent for g in gs]


def _modes(call, xs, vs, us):
    return {"forward": lambda: _fwd(call, xs, us), "reverse": lambda: _rev(call, xs, vs),
            "forward over reverse": lambda: _fwd_rev(call, xs, vs, us)}


def _ones(xs):
    return [np.ones_like(x) for x in xs]


# -- every op-database entry, at its first sample --------------------------------------


@pytest.mark.parametrize(("op", "dtype", "s"), opdb.cases("warnings", first=1))
def test_derivatives_add_no_warning_to_the_values(op, dtype, s):
    x0 = [s.args[i] for i in s.diff]

    def call(xs):
        args = list(s.args)
        for i, x in zip(s.diff, xs, strict=True):
            args[i] = x
        return opdb.run(op, s, tuple(args))

    if op.ref:
        want, outs = _seen(lambda: opdb.diff_outputs_np(op.call(np, *s.args, **s.kwargs)))
    else:
        want, outs = _seen(lambda: opdb.evaluate(op, s, x0))
    vs = [np.ones_like(o) for o in outs]
    for mode, fn in _modes(call, x0, vs, _ones(x0)).items():
        got, _ = _seen(fn)
        assert got == want, f"{mode}: {sorted(map(str, got - want))} beyond NumPy's own"


# -- the elementwise family at its singular points -------------------------------------

# each one-input function at these points (their derivatives' inf, NaN and 0 * inf)
POINTS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 1e-300]
# each two-input function at every pair of these
PAIR = [0.0, 1.0, -1.0, 2.5, np.inf, np.nan, 1e300]

UNARY = sorted(set(E.UNARY) | {"abs", "sign", "angle", "conj", "real", "imag"})
BINARY = sorted(E.BINARY)


def _unary_inputs(dtype):
    with np.errstate(over="ignore"):  # (1e300 in float32: inf)
        x = np.array(POINTS, dtype)
    if dtype.startswith("complex"):
        re, im = np.meshgrid(x.real, [0.0, 1.0, np.inf], indexing="ij")
        x = np.empty(re.size, dtype)
        x.real, x.imag = re.ravel(), im.ravel()
    # all points at once, and one at a time (one element: the lane's scalar steps)
    return [x] + [x[i:i + 1] for i in range(x.size)]


def _check(fn, npfn, args):
    try:
        want, outs = _seen(lambda: npfn(*args))
    except TypeError:  # (not defined for the dtype: floor of a complex)
        return
    outs = [np.asarray(outs)]
    if outs[0].dtype.kind not in "fc":
        return
    call = lambda ts: [fn(*ts)]  # noqa: E731
    for mode, run in _modes(call, list(args), _ones(outs), _ones(args)).items():
        got, _ = _seen(run)
        assert got == want, (f"{mode} at {args}: {sorted(map(str, got - want))} beyond "
                             "NumPy's own")


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_derivatives_at_singular_points_warn_nothing_of_their_own(name, dtype):
    fn, npfn = getattr(dnp, name), getattr(np, name)
    for x in _unary_inputs(dtype):
        _check(fn, npfn, (x,))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_derivatives_at_singular_points_warn_nothing_of_their_own(name, dtype):
    fn, npfn = getattr(dnp, name), getattr(np, name)
    with np.errstate(over="ignore"):  # (1e300 in float32: inf)
        a = np.array(np.repeat(PAIR, len(PAIR)), dtype)
        b = np.array(np.tile(PAIR, len(PAIR)), dtype)
    _check(fn, npfn, (a, b))
    for i in range(a.size):
        _check(fn, npfn, (a[i:i + 1], b[i:i + 1]))
    # a Python-scalar operand (the hot path's constant), each side
    for p in PAIR:
        _check(lambda t, p=p: fn(t, p), lambda v, p=p: npfn(v, p), (a[:len(PAIR)],))
        _check(lambda t, p=p: fn(p, t), lambda v, p=p: npfn(p, v), (a[:len(PAIR)],))


@pytest.mark.parametrize("zero", [0.0, -0.0, 0, False])
@pytest.mark.parametrize("n", [1, 3])
def test_a_divide_by_a_python_zero_has_an_infinite_derivative(zero, n):
    # d/da (a / b) is 1 / b: at a Python 0 divisor Python's division raised
    # ZeroDivisionError; NumPy's value (and torch's derivative) is inf, signed as the zero
    want = np.full(n, np.copysign(np.inf, zero))
    x0 = np.linspace(1.0, 2.0, n)
    with np.errstate(divide="ignore"):
        with da.dual_level():  # forward: the hot path declines to the general rule
            x = da.make_dual(da.tensor(x0), da.ones(n))
            p, t = da.unpack_dual(dnp.divide(x, zero))
            _, t2 = da.unpack_dual(dnp.sin(x) / zero)  # (an unmade dual: the array rule)
        np.testing.assert_array_equal(t.numpy(), want)
        np.testing.assert_array_equal(t2.numpy(), np.cos(x0) * want)
        np.testing.assert_array_equal(p.numpy(), x0 / np.float64(zero))
        for create_graph in (False, True):  # reverse: the lane's step, the array transpose
            xr = da.tensor(x0, requires_grad=True)
            (g,) = da.grad((xr / zero).sum(), (xr,), create_graph=create_graph)
            np.testing.assert_array_equal(g.detach().numpy(), want)
        xr = da.tensor(x0, requires_grad=True)
        (dnp.exp(xr) / zero).sum().backward()
        np.testing.assert_array_equal(xr.grad.numpy(), np.exp(x0) * want)


def test_a_filter_removed_or_put_in_front_does_not_show_the_generated_codes_warnings():
    # the hot code, transposes and lane steps decline on a warning that dualad's filter
    # makes an error: a user's filter in front of it, or none left, showed it instead
    x0 = np.array([0.0])
    with warnings.catch_warnings(record=True) as w:
        warnings.resetwarnings()
        warnings.simplefilter("always")
        _fwd(lambda ts: [dnp.sinc(ts[0])], [x0], [x0 + 1])
        _rev(lambda ts: [dnp.sqrt(ts[0])], [x0], [x0 + 1])
    assert not w, [str(m.message) for m in w]


@pytest.mark.parametrize("form", ["matmul", "reshape"])
def test_a_warning_of_a_linear_fast_path_is_numpys_not_an_error(form):
    # matmul's forward fast path (elementwise.fast_product) ran np.matmul in a frame of
    # the module whose RuntimeWarnings dualad's filter makes errors, outside any decline:
    # NumPy's warning (here inf * 0; OpenBLAS also raises a spurious invalid flag at times)
    # became an exception (the flaky linalg.lstsq float32 case of test_general_path)
    c = np.array([[np.inf, 1.0], [0.0, 1.0]])
    x0 = np.array([[0.0, 1.0]])
    f = (lambda x: dnp.matmul(x, c)) if form == "matmul" else (
        lambda x: dnp.reshape(dnp.matmul(x, c), -1))
    want, y0 = _seen(lambda: np.matmul(x0, c))
    assert want  # (the case warns in NumPy)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with da.dual_level():
            p, t = da.unpack_dual(f(da.make_dual(da.tensor(x0), da.tensor(np.ones_like(x0)))))
    assert {(m.category, str(m.message)) for m in w} == want
    np.testing.assert_array_equal(p.numpy().reshape(y0.shape), y0)
    np.testing.assert_array_equal(t.numpy().reshape(y0.shape), np.ones_like(x0) @ c)
