"""Misuses that were silent, terse or misleading get a warning or an error that says what
is wrong and what to do (the message's useful words are asserted)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp


def _quiet():
    """A context in which any warning fails the test."""
    c = warnings.catch_warnings()
    c.__enter__()
    warnings.simplefilter("error")
    return c


# -- dualad.tensor of a sequence holding tracked Tensors -----------------------------------


def test_tensor_of_a_list_of_tracked_tensors_warns_and_names_the_differentiable_way():
    x = da.tensor(1.0, requires_grad=True)
    y = da.tensor(2.0, requires_grad=True)
    # (as dualad.tensor(y) and torch.tensor([x, y]) do: a constant, with a warning)
    with pytest.warns(UserWarning, match=r"dualad.tensor\(\[...\]\) of a sequence holding a "
                      r"tensor that requires grad drops its derivative.*dualad.numpy.array"):
        t = da.tensor([x, y])
    assert not t.requires_grad and t.tolist() == [1.0, 2.0]
    with pytest.warns(UserWarning, match="requires grad drops"):
        da.tensor([[1.0, 2.0], (3.0, y * 2)])  # nested, with a non-leaf
    with da.dual_level():
        d = da.make_dual(da.tensor(1.0), da.tensor(1.0))
        with pytest.warns(UserWarning, match="carries a tangent"):
            da.tensor([d, 2.0])
    # the ways it names are differentiable
    for stack in (dnp.array, da.as_tensor):
        x.grad = None
        dnp.sum(stack([x, y * 3])).backward()
        assert float(x.grad) == 1.0
    c = _quiet()  # nothing dropped: nothing said
    try:
        da.tensor([x.detach(), 2.0])
        da.tensor([1.0, 2.0])
    finally:
        c.__exit__(None, None, None)


# -- .grad of a non-leaf -------------------------------------------------------------------


def test_grad_of_a_non_leaf_warns_as_torch_and_names_retain_grad():
    a = da.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    dnp.sum(b).backward()
    with pytest.warns(UserWarning, match=r"\.grad attribute of a Tensor that is not a leaf "
                      r"Tensor is being accessed.*\.retain_grad\(\)"):
        assert b.grad is None
    with da.dual_level():  # a dual non-leaf too
        d = da.make_dual(a * 1, da.tensor([1.0, 1.0]))
        with pytest.warns(UserWarning, match="not a leaf"):
            assert d.grad is None
    c = _quiet()
    try:
        assert a.grad is not None  # a leaf
        assert da.tensor(1.0).grad is None  # a constant is a leaf
        r = a * 3
        r.retain_grad()
        assert r.grad is None  # retained: no warning, before backward
        dnp.sum(r).backward()
        np.testing.assert_array_equal(r.grad.numpy(), [1.0, 1.0])
    finally:
        c.__exit__(None, None, None)


# -- mean of an empty array ----------------------------------------------------------------


@pytest.mark.parametrize("call", [
    lambda t: dnp.mean(t), lambda t: np.mean(t), lambda t: t.mean(),
    lambda t: dnp.mean(t, axis=0),
], ids=["dnp", "np", "method", "axis"])
def test_mean_of_an_empty_array_is_nan_with_numpys_warning(call):
    for rg in (False, True):
        t = da.tensor(np.zeros((0, 2)), requires_grad=rg)
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            m = call(t)
        assert np.all(np.isnan(m.detach().numpy()))
    c = _quiet()
    try:
        assert dnp.mean(da.tensor(np.zeros((0, 2))), axis=1).shape == (0,)  # nothing empty
        assert float(dnp.mean(da.tensor([1.0, 3.0]))) == 2.0
    finally:
        c.__exit__(None, None, None)


# -- JAX habits ----------------------------------------------------------------------------


def test_dualad_grad_of_a_python_function_says_to_use_functional_grad():
    x = da.tensor([1.0, 2.0], requires_grad=True)

    def f(t):
        return dnp.sum(t * t)

    with pytest.raises(TypeError, match=r"not a function \('f'\).*dualad\.functional\.grad"
                                        r"\(f\)\(x\)"):
        da.grad(f, x)
    np.testing.assert_array_equal(F.grad(f)(x.detach()).numpy(), [2.0, 4.0])


@pytest.mark.parametrize("transform", [F.grad, F.value_and_grad])
def test_a_function_returning_output_and_aux_without_has_aux_says_has_aux(transform):
    def f(t):
        return dnp.sum(t * t), t * 2

    with pytest.raises(TypeError, match=r"returned a tuple of length 2.*has_aux=True"):
        transform(f)(np.array([1.0, 2.0]))
    got = transform(f, has_aux=True)(np.array([1.0, 2.0]))
    assert len(got) == 2


# -- SciPy's ufuncs ------------------------------------------------------------------------


def test_scipy_special_ufunc_on_a_tensor_names_scipys_function_and_dualads():
    sp = pytest.importorskip("scipy.special")
    for rg in (False, True):
        t = da.tensor([0.5, 1.0], requires_grad=rg)
        with pytest.raises(TypeError, match=r"scipy\.special\.erf is not supported.*Use "
                                            r"dualad\.scipy\.special\.erf\(t\)"):
            sp.erf(t)
    # (gamma and i0e have counterparts now: k0, one without)
    with pytest.raises(TypeError, match=r"scipy\.special\.k0 .*no counterpart.*gammaln"):
        sp.k0(da.tensor([0.5]))
    with pytest.raises(TypeError, match=r"Use dualad\.scipy\.special\.gamma\(t\)"):
        sp.gamma(da.tensor([0.5]))
    from dualad.scipy import special

    x = da.tensor([0.5], requires_grad=True)
    dnp.sum(special.erf(x)).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 / np.sqrt(np.pi) * np.exp(-0.25))


# -- complex input to a real-only function -------------------------------------------------


def _dual(v):
    return da.make_dual(da.tensor(v), da.tensor(np.ones_like(v)))


_REAL_ONLY = {
    "arctan2": (lambda z: dnp.arctan2(z, 1.0), "arctan2", r"dualad\.numpy\.angle"),
    "arctan2-np": (lambda z: np.arctan2(1.0, z), "arctan2", "angle"),
    "hypot": (lambda z: dnp.hypot(z, z), "hypot", r"real\(z\)"),
    "logaddexp": (lambda z: dnp.logaddexp(z, 1.0), "logaddexp", "real"),
    "floor": (lambda z: dnp.floor(z), "floor", "real"),
    "cbrt": (lambda z: dnp.cbrt(z), "cbrt", "real"),
    "copysign": (lambda z: dnp.copysign(z, 1.0), "copysign", "real"),
}


@pytest.mark.parametrize("kind", ["plain", "requires_grad", "dual"])
@pytest.mark.parametrize("name", sorted(_REAL_ONLY))
def test_a_complex_input_to_a_real_only_function_says_it_is_real_only(name, kind):
    f, fn, hint = _REAL_ONLY[name]
    z0 = np.array([1.0 + 1.0j, 2.0])
    with da.dual_level():
        z = {"plain": lambda: da.tensor(z0), "dual": lambda: _dual(z0),
             "requires_grad": lambda: da.tensor(z0, requires_grad=True)}[kind]()
        with pytest.raises(TypeError, match=rf"dualad\.numpy\.{fn} is real-only .*complex "
                                            rf"input of dtype complex128: .*{hint}"):
            f(z)


# -- backward of a result that does not require grad: why ----------------------------------


_NO_GRAD_OPS = {
    "operator": lambda x: x * 2.0,
    "call": lambda x: dnp.sin(x),
    "binary-call": lambda x: dnp.multiply(x, x),
    "reduction": lambda x: dnp.sum(x),
    "matmul": lambda x: x @ x,
    "method": lambda x: x.sum(),
    "view": lambda x: x.reshape(-1),
}


@pytest.mark.parametrize("op", sorted(_NO_GRAD_OPS))
def test_backward_of_a_result_made_under_no_grad_says_so(op):
    x = da.tensor([1.0, 2.0], requires_grad=True)
    with da.no_grad():
        y = _NO_GRAD_OPS[op](x)
    with pytest.raises(RuntimeError, match=r"element 0 of tensors does not require grad and "
                       r"does not have a grad_fn: it was computed while grad mode was off "
                       r"\(inside dualad\.no_grad\(\).*outside no_grad\(\)"):
        y.backward(da.ones_like(y))
    with da.set_grad_enabled(False):
        y = _NO_GRAD_OPS[op](x)
    with pytest.raises(RuntimeError, match="grad mode was off"):
        da.grad(y, x, da.ones_like(y))
    # computed from such a result: a constant, whose message names no_grad too
    with pytest.raises(RuntimeError, match=r"it is a constant.*computed inside no_grad\(\)"):
        dnp.sum(y * 2).backward()


def test_backward_of_a_dual_made_under_no_grad_says_so():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    with da.dual_level(), da.no_grad():
        y = dnp.sin(da.make_dual(x, da.tensor([1.0, 1.0])))
        with pytest.raises(RuntimeError, match="grad mode was off"):
            y.backward(da.tensor([1.0, 1.0]))


def test_backward_of_an_integer_result_says_integers_carry_no_derivative():
    x = da.tensor([1.5, 2.5], requires_grad=True)
    for y in (dnp.sum(x * 2).astype(np.int64), dnp.sum(x) > 1.0, dnp.argmax(x)):
        with pytest.raises(RuntimeError, match=r"does not have a grad_fn: it has dtype "
                           r"(int64|bool).*integer and boolean results .*carry no derivative"
                           r".*floating point"):
            y.backward()


def test_backward_of_a_constant_says_it_never_required_grad():
    x = da.tensor([1.5], requires_grad=True)
    for y in (da.tensor(2.0), dnp.sum(da.tensor([1.0, 2.0]) * 3), dnp.sum(x.detach()),
              dnp.sum(x.astype(np.int64) * 2.0)):
        with pytest.raises(RuntimeError, match=r"does not have a grad_fn: it is a constant.*"
                           r"detached, were integer results \(x\.astype\(int\).*"
                           r"requires_grad=True\) or x\.requires_grad_\(\)"):
            y.backward()


def test_backward_of_a_result_made_in_inference_mode_says_so():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    with da.inference_mode():
        y = dnp.sum(x * 2)
    with pytest.raises(RuntimeError, match="made in dualad.inference_mode()"):
        y.backward()


# -- a Jacobian or Hessian that cannot fit in memory ---------------------------------------


@pytest.fixture
def eight_gib(monkeypatch):
    from dualad.functional import _common

    monkeypatch.setattr(_common, "available_memory", lambda: 8 * 2**30)


def _never(v):
    raise AssertionError("the function ran: the size was not checked up front")


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
@pytest.mark.parametrize("vectorize", [False, True])
def test_a_hessian_that_cannot_fit_is_refused_up_front_with_its_size(eight_gib, strategy,
                                                                     vectorize):
    x = np.zeros(10**5)  # 10^10 float64 elements: 74.5 GiB
    with pytest.raises(MemoryError, match=r"The Hessian \(100000 x 100000\) would hold "
                       r"10,000,000,000 elements \(74\.5 GiB\), more than the 8\.0 GiB of "
                       r"memory available.*dualad\.functional\.hvp"):
        F.hessian(_never, x, vectorize=vectorize, outer_jacobian_strategy=strategy)


def test_a_jacobian_that_cannot_fit_is_refused_before_its_passes(eight_gib):
    x = np.zeros(10**5)
    calls = []

    def f(v):
        calls.append(1)
        return v * 2.0

    for kw in ({}, {"vectorize": True}, {"strategy": "forward-mode"}):
        calls.clear()
        with pytest.raises(MemoryError, match=r"The Jacobian \(100000 x 100000\).*74\.5 GiB"
                           r".*vjp \(rows\) or jvp \(columns\)"):
            F.jacobian(f, x, **kw)
        assert len(calls) == 1  # the one pass that gives the output's size
    with pytest.raises(MemoryError, match="74.5 GiB"):
        F.jacrev(f)(x)
    # a vectorized forward pass's seed: chunk_size bounds it
    with pytest.raises(MemoryError, match=r"seed of one vectorized pass \(100000 x 100000 "
                       r"basis vectors\).*chunk_size="):
        F.jacobian(lambda v: dnp.sum(v), x, strategy="forward-mode", vectorize=True)
    with pytest.raises(MemoryError, match="chunk_size="):
        F.jacfwd(lambda v: dnp.sum(v))(x)
    # what fits is computed (a chunked forward Jacobian of a scalar: one row)
    calls.clear()
    J = F.jacobian(lambda v: dnp.sum(v * v), da.tensor(np.arange(3.0)),
                   strategy="forward-mode", vectorize=True, chunk_size=2)
    np.testing.assert_array_equal(J.numpy(), [0.0, 2.0, 4.0])


def test_a_hessian_larger_than_any_memory_is_refused_on_this_machine():
    # (no stand-in: 10^12 elements, 7.3 TiB, fit nowhere)
    with pytest.raises(MemoryError, match=r"The Hessian \(1000000 x 1000000\).*hvp"):
        F.hessian(_never, np.zeros(10**6))


# -- gradcheck at a NaN ----------------------------------------------------------------------


@pytest.mark.parametrize("check", [
    lambda f, xs: da.gradcheck(f, xs),
    lambda f, xs: da.gradcheck(f, xs, fast_mode=True),
    lambda f, xs: da.gradcheck(f, xs, check_forward_ad=True, check_backward_ad=False),
    lambda f, xs: da.gradgradcheck(f, xs),
], ids=["slow", "fast", "forward", "gradgrad"])
def test_a_gradcheck_failing_at_a_nan_input_says_the_input_holds_nan(check):
    x = da.tensor([0.5, np.nan, 1.0], requires_grad=True)
    c = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(da.GradcheckError, match=r"input #1 holds NaN \(first at index \(1,\); "
                                                r"1 of 3 elements are not finite\)"):
        check(lambda a, b: a * b * b, (c, x))
    z = da.tensor([complex(np.nan, 1.0)], requires_grad=True)
    with pytest.raises(da.GradcheckError, match="input #0 holds NaN"):
        check(lambda a: a * a, (z,))
    with pytest.raises(da.GradcheckError, match="input #0 holds inf"):
        check(lambda a: a * a, (da.tensor([np.inf], requires_grad=True),))
    # a NaN in an input that does not require grad is a constant: checked as before
    m = da.tensor([1.0, np.nan, 0.0])
    assert check(lambda a, m: dnp.where(dnp.isnan(m), 0.0, a * a), (c, m)) is True
    # and a function that handles NaN is checked at it as usual (derivative 0 there)
    assert check(lambda a: dnp.nanmax(a) + dnp.nansum(a), (x,)) is True


# -- saved-tensor hooks entered inside a backward hook -------------------------------------


def test_saved_tensors_hooks_entered_in_a_hook_during_backward_end_with_the_pass():
    from dualad.reverse import graph as G

    packed = []
    live = G.hooks_live[0]

    def pack(t):
        packed.append(t.shape)
        return t

    entered = []

    def hook(g):  # enters a context it never exits (torch restores the hooks after backward)
        c = da.graph.saved_tensors_hooks(pack, lambda t: t)
        c.__enter__()
        entered.append(c)
        d = da.graph.disable_saved_tensors_hooks("disabled in a hook")
        d.__enter__()
        return g

    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(hook)
    dnp.sum(y).backward()
    assert entered and G.hooks_live[0] == live and G.saved_hooks.stack == []
    assert G.saved_hooks.disabled is None
    z = dnp.sum(dnp.sin(x) * x)  # a later graph: nothing packs it
    z.backward()
    assert packed == []
    entered[0].__exit__(None, None, None)  # exiting it late changes nothing
    assert G.hooks_live[0] == live and G.saved_hooks.stack == []
    # a context around the backward call stays as it was, in grad() too
    with da.graph.saved_tensors_hooks(pack, lambda t: t):
        w = dnp.sum(dnp.exp(x))
        w2 = dnp.sum(x * x)
        w2.grad_fn.register_prehook(lambda g: hook(g[0]) and None)
        da.grad(w2, x)
        assert len(G.saved_hooks.stack) == 1 and G.saved_hooks.disabled is None
        dnp.sum(x * 3.0)
    assert G.hooks_live[0] == live and G.saved_hooks.stack == []
    (g,) = da.grad(w, x)
    np.testing.assert_allclose(g.numpy(), np.exp([1.0, 2.0]))
    assert packed  # (w's saved value went through pack)
