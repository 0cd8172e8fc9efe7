"""Tests of dualad.gradcheck / gradgradcheck (issue 5, item 1).

Every "catches" test builds a da.Function with a deliberately wrong rule and
checks both that the check fails and that the message points at the right
entries; every "passes" test would fail if the check raised a false alarm.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp
from dualad.gradcheck import GradcheckError, gradcheck, gradgradcheck

MODES = [pytest.param(False, id="slow"), pytest.param(True, id="fast")]


def rnd(*shape: int, seed: int = 0, complex_: bool = False, requires_grad: bool = True):
    """A float64 (or complex128) leaf from a private generator."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return da.tensor(a, requires_grad=requires_grad)


# --------------------------------------------------------------------------- Functions
def scalar_fn(f, df, *, bwd_sign=1.0, fwd_sign=1.0, conj_bwd=True):
    """A da.Function for the elementwise f with derivative df (holomorphic or real).

    backward returns g * conj(df(x)) (the conjugate-Wirtinger rule) times
    ``bwd_sign``; jvp returns t * df(x) times ``fwd_sign``. ``conj_bwd=False``
    plants the classic complex bug of forgetting the conjugate.
    """

    class Elementwise(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return f(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            d = df(x)
            return bwd_sign * g * (dnp.conj(d) if conj_bwd else d)

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return fwd_sign * t * df(x)

    return Elementwise


GoodSin = scalar_fn(dnp.sin, dnp.cos)
BadBwdSin = scalar_fn(dnp.sin, dnp.cos, bwd_sign=-1.0)
BadJvpSin = scalar_fn(dnp.sin, dnp.cos, fwd_sign=-1.0)
GoodSquare = scalar_fn(lambda z: z * z, lambda z: 2 * z)
BadBwdSquare = scalar_fn(lambda z: z * z, lambda z: 2 * z, bwd_sign=-1.0)
NoConjSquare = scalar_fn(lambda z: z * z, lambda z: 2 * z, conj_bwd=False)
BadJvpSquare = scalar_fn(lambda z: z * z, lambda z: 2 * z, fwd_sign=-1.0)


class TwoInputs(da.Function):
    """x * y with the gradient w.r.t. y wrong (sign) -- only input 1 is off."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, -g * x


# --------------------------------------------------------------------------- passes
def f_real(x):
    return dnp.sin(x) * x + x**2


def f_multi(x, y, scale):
    # Two inputs (broadcasting), a pass-through non-tensor input, two outputs.
    return x * y * scale, dnp.exp(x) + dnp.sum(y**2)


@pytest.mark.parametrize("fast", MODES)
class TestPasses:
    def test_real(self, fast):
        x = rnd(2, 3)
        assert gradcheck(f_real, (x,), fast_mode=fast, check_forward_ad=True)

    def test_single_tensor_input_not_tuple(self, fast):
        assert gradcheck(f_real, rnd(4), fast_mode=fast)

    def test_multiple_inputs_and_outputs(self, fast):
        x, y = rnd(3), rnd(2, 3, seed=1)
        assert gradcheck(f_multi, (x, y, 0.5), fast_mode=fast, check_forward_ad=True)

    def test_input_without_requires_grad_is_constant(self, fast):
        x, y = rnd(3), rnd(2, 3, seed=1, requires_grad=False)
        assert gradcheck(f_multi, (x, y, 2.0), fast_mode=fast, check_forward_ad=True)

    def test_scalar_and_empty(self, fast):
        assert gradcheck(lambda x: dnp.exp(x) * x, (rnd(),), fast_mode=fast, check_forward_ad=True)
        assert gradcheck(lambda x: x * 2.0, (rnd(0, 3),), fast_mode=fast, check_forward_ad=True)

    @pytest.mark.parametrize(
        "f",
        [
            pytest.param(lambda z: z**2 * dnp.exp(z), id="holomorphic"),
            pytest.param(lambda z: dnp.sin(z) * dnp.conj(z), id="non-holomorphic"),
        ],
    )
    def test_complex_to_complex(self, fast, f):
        z = rnd(2, 2, complex_=True)
        assert gradcheck(f, (z,), fast_mode=fast, check_forward_ad=True)

    @pytest.mark.parametrize(
        "f",
        [
            pytest.param(lambda z: dnp.abs(z) ** 2, id="abs2"),
            pytest.param(lambda z: dnp.real(z) * dnp.imag(z) ** 2, id="re-im"),
            pytest.param(lambda z: dnp.real(z * dnp.conj(z) * z), id="cubic"),
        ],
    )
    def test_complex_to_real(self, fast, f):
        z = rnd(3, complex_=True)
        assert gradcheck(f, (z,), fast_mode=fast, check_forward_ad=True)

    def test_real_to_complex(self, fast):
        x = rnd(3)
        f = lambda x: dnp.exp(1j * x) * x + (2 - 1j) * x**2
        assert gradcheck(f, (x,), fast_mode=fast, check_forward_ad=True)

    def test_mixed_real_and_complex_inputs(self, fast):
        x, z = rnd(3), rnd(3, seed=2, complex_=True)
        f = lambda x, z: (x * z, dnp.abs(z) * x)
        assert gradcheck(f, (x, z), fast_mode=fast, check_forward_ad=True)

    def test_custom_functions_with_correct_rules(self, fast):
        assert gradcheck(GoodSin.apply, (rnd(4),), fast_mode=fast, check_forward_ad=True)
        assert gradcheck(
            GoodSquare.apply, (rnd(4, complex_=True),), fast_mode=fast, check_forward_ad=True
        )

    def test_batched_checks(self, fast):
        x, y = rnd(3), rnd(2, 3, seed=1)
        assert gradcheck(
            f_multi,
            (x, y, 0.5),
            fast_mode=fast,
            check_forward_ad=True,
            check_batched_grad=True,
            check_batched_forward_grad=True,
        )
        z = rnd(2, complex_=True)
        assert gradcheck(
            lambda z: dnp.sin(z) * dnp.conj(z),
            (z,),
            fast_mode=fast,
            check_forward_ad=True,
            check_batched_grad=True,
            check_batched_forward_grad=True,
        )

    def test_forward_only(self, fast):
        assert gradcheck(
            f_real, (rnd(3),), fast_mode=fast, check_forward_ad=True, check_backward_ad=False
        )

    def test_check_grad_dtypes(self, fast):
        assert gradcheck(
            f_multi,
            (rnd(3), rnd(2, 3), 1.0),
            fast_mode=fast,
            check_grad_dtypes=True,
            check_forward_ad=True,
        )

    def test_non_float_outputs_are_ignored(self, fast):
        f = lambda x: (dnp.sin(x), dnp.argmax(x), "label")
        assert gradcheck(f, (rnd(4),), fast_mode=fast, check_forward_ad=True)

    def test_no_differentiable_output_constant_function(self, fast):
        f = lambda x: da.tensor(np.ones(3))
        assert gradcheck(f, (rnd(3),), fast_mode=fast)


def test_inputs_are_not_modified():
    x = rnd(5)
    before = x.detach().numpy().copy()
    gradcheck(f_real, (x,), check_forward_ad=True)
    gradcheck(f_real, (x,), fast_mode=True, check_forward_ad=True)
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x.grad is None


# --------------------------------------------------------------------------- catches
ENTRY = re.compile(r"output\(\d*,?\), input\(\d*,?\): \S+ vs \S+")


def _msg(excinfo) -> str:
    return str(excinfo.value)


@pytest.mark.parametrize("fast", MODES)
class TestCatches:
    def test_wrong_backward_real(self, fast):
        x = rnd(3)
        with pytest.raises(GradcheckError) as e:
            gradcheck(BadBwdSin.apply, (x,), fast_mode=fast)
        m = _msg(e)
        assert "Jacobian mismatch for output 0 with respect to input 0" in m
        assert "forward mode" not in m
        # The diagonal is wrong: entry (1,), (1,) is listed with numerical cos(x1)
        # against analytical -cos(x1).
        c = float(np.cos(x.detach().numpy()[1]))
        assert f"output(1,), input(1,): {c:.6g} vs {-c:.6g}" in m
        assert "output(0,), input(1,)" not in m  # off-diagonal entries are right
        assert "numerical:" in m and "analytical:" in m
        if fast:
            assert "slow mode" in m

    def test_wrong_jvp_real(self, fast):
        x = rnd(3)
        # Reverse mode is right...
        assert gradcheck(BadJvpSin.apply, (x,), fast_mode=fast)
        # ...forward mode is not.
        with pytest.raises(GradcheckError) as e:
            gradcheck(BadJvpSin.apply, (x,), fast_mode=fast, check_forward_ad=True)
        m = _msg(e)
        assert "Jacobian computed with forward mode mismatch for output 0 with respect to input 0" in m
        assert ENTRY.search(m)

    def test_wrong_backward_complex(self, fast):
        z = rnd(3, complex_=True)
        with pytest.raises(GradcheckError) as e:
            gradcheck(BadBwdSquare.apply, (z,), fast_mode=fast)
        m = _msg(e)
        assert (
            "part of complex outputs only, Jacobian mismatch for output 0 with respect to input 0" in m
        )
        assert ENTRY.search(m)

    def test_missing_conjugate_in_backward(self, fast):
        # Right on real numbers, wrong on complex ones: only the 2*CW check sees it.
        assert gradcheck(NoConjSquare.apply, (rnd(3),), fast_mode=fast)
        with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0"):
            gradcheck(NoConjSquare.apply, (rnd(3, complex_=True),), fast_mode=fast)

    def test_wrong_jvp_complex(self, fast):
        z = rnd(3, complex_=True)
        assert gradcheck(BadJvpSquare.apply, (z,), fast_mode=fast)
        with pytest.raises(GradcheckError) as e:
            gradcheck(BadJvpSquare.apply, (z,), fast_mode=fast, check_forward_ad=True)
        m = _msg(e)
        assert re.search(
            r"While considering the (real|imaginary) part of complex inputs only, Jacobian "
            r"computed with forward mode mismatch for output 0 with respect to input 0",
            m,
        )
        assert ENTRY.search(m)

    def test_names_the_wrong_input(self, fast):
        x, y = rnd(3), rnd(3, seed=1)
        with pytest.raises(GradcheckError) as e:
            gradcheck(TwoInputs.apply, (x, y), fast_mode=fast)
        assert "for output 0 with respect to input 1," in _msg(e)

    def test_names_the_wrong_output(self, fast):
        x = rnd(3)
        f = lambda x: (dnp.cos(x), BadBwdSin.apply(x))
        with pytest.raises(GradcheckError) as e:
            gradcheck(f, (x,), fast_mode=fast)
        assert "for output 1 with respect to input 0," in _msg(e)

    def test_raise_exception_false_returns_false(self, fast):
        x = rnd(3)
        assert gradcheck(BadBwdSin.apply, (x,), fast_mode=fast, raise_exception=False) is False
        assert gradcheck(GoodSin.apply, (x,), fast_mode=fast, raise_exception=False) is True
        assert (
            gradcheck(
                BadJvpSin.apply,
                (x,),
                fast_mode=fast,
                check_forward_ad=True,
                raise_exception=False,
            )
            is False
        )

    def test_complex_output_imaginary_part(self, fast):
        # Real part right, imaginary part wrong: only the 1j-cotangent pass sees it.
        class ImagWrong(da.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * (1 + 2j)

            @staticmethod
            def backward(ctx, g):
                # Right rule: Re(conj(1+2j) g) = Re(g) + 2 Im(g); the sign of the Im term is off.
                return dnp.real(g) - 2 * dnp.imag(g)

        with pytest.raises(GradcheckError) as e:
            gradcheck(ImagWrong.apply, (rnd(3),), fast_mode=fast)
        assert "While considering the imaginary part of complex outputs only" in _msg(e)

    def test_detached_output_that_depends_on_input(self, fast):
        with pytest.raises(GradcheckError, match="expected to be zero"):
            gradcheck(lambda x: dnp.sin(x).detach(), (rnd(3),), fast_mode=fast)


def test_fast_mode_reruns_slow_mode_for_the_message():
    with pytest.raises(GradcheckError) as e:
        gradcheck(BadBwdSin.apply, (rnd(4),), fast_mode=True)
    m = _msg(e)
    assert "v^T J u" in m
    assert "Recomputing the full Jacobians of this pair in slow mode" in m
    assert "mismatching entries (4 of 16" in m
    assert "max per-element difference" in m


def test_slow_mode_lists_all_mismatches_and_prints_both_jacobians():
    with pytest.raises(GradcheckError) as e:
        gradcheck(BadBwdSin.apply, (rnd(2, 2),))
    m = _msg(e)
    assert "mismatching entries (4 of 16" in m
    assert "output(1, 0), input(1, 0)" in m
    num = m.split("numerical:\n")[1].split("analytical:")[0]
    ana = m.split("analytical:\n")[1]
    assert num.count("[") == 5 and ana.count("[") == 5  # two 4x4 matrices


def test_long_messages_are_truncated():
    with pytest.raises(GradcheckError) as e:
        gradcheck(BadBwdSin.apply, (rnd(40),))
    m = _msg(e)
    assert "... and 30 more" in m
    assert "..." in m.split("numerical:")[1]  # numpy summarised the 40x40 matrix
    assert len(m) < 10_000


# --------------------------------------------------------------------------- randomness
def test_fast_mode_leaves_global_numpy_random_state_alone():
    np.random.seed(1234)
    state = np.random.get_state()
    gradcheck(
        f_real,
        (rnd(5),),
        fast_mode=True,
        check_forward_ad=True,
        check_batched_grad=True,
        check_batched_forward_grad=True,
    )
    gradcheck(BadBwdSin.apply, (rnd(5),), fast_mode=True, raise_exception=False)
    gradgradcheck(f_real, (rnd(3),), fast_mode=True)
    after = np.random.get_state()
    assert state[0] == after[0] and np.array_equal(state[1], after[1]) and state[2:] == after[2:]


def test_fast_mode_is_reproducible():
    msgs = []
    for _ in range(2):
        with pytest.raises(GradcheckError) as e:
            gradcheck(BadBwdSin.apply, (rnd(5),), fast_mode=True)
        msgs.append(_msg(e))
    assert msgs[0] == msgs[1]


def test_fast_mode_evaluates_the_function_few_times():
    calls = [0]

    def f(x):
        calls[0] += 1
        return dnp.sin(x)

    x = rnd(30)
    gradcheck(f, (x,), fast_mode=True, check_undefined_grad=False)
    fast_calls = calls[0]
    calls[0] = 0
    gradcheck(f, (x,), check_undefined_grad=False)
    assert fast_calls <= 5 < 60 <= calls[0]


# --------------------------------------------------------------------------- other checks
class NoisySin(da.Function):
    """Right derivative plus tiny noise: a nondeterministic backward."""

    rng = np.random.default_rng(7)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return dnp.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        # Multiplicative, so a zero cotangent still gives a zero gradient.
        return g * dnp.cos(x) * (1 + 1e-10 * float(NoisySin.rng.standard_normal()))


@pytest.mark.parametrize("fast", MODES)
def test_nondet_tol(fast):
    x = rnd(3)
    with pytest.raises(GradcheckError, match="not reentrant"):
        gradcheck(NoisySin.apply, (x,), fast_mode=fast, check_undefined_grad=False)
    assert gradcheck(NoisySin.apply, (x,), fast_mode=fast, nondet_tol=1e-8, check_undefined_grad=False)


class IgnoresZeroCotangent(da.Function):
    """Right for nonzero cotangents, but returns a gradient when the cotangent is zero."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return dnp.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        leak = 0.0 if np.any(g.detach().numpy()) else 1.0
        return g * dnp.cos(x) + leak


def test_backward_not_multiplied_by_grad_output():
    with pytest.raises(GradcheckError, match="not multiplied by grad_output"):
        gradcheck(IgnoresZeroCotangent.apply, (rnd(3),))


class SinCos(da.Function):
    """Two outputs; the backward copes with either cotangent being absent."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return dnp.sin(x), dnp.cos(x)

    @staticmethod
    def backward(ctx, gs, gc):
        (x,) = ctx.saved_tensors
        res = da.zeros_like(x)
        if gs is not None:
            res = res + gs * dnp.cos(x)
        if gc is not None:
            res = res - gc * dnp.sin(x)
        return res


@pytest.mark.parametrize("fast", MODES)
def test_undefined_grad_multi_output_function_passes(fast):
    assert gradcheck(SinCos.apply, (rnd(3),), fast_mode=fast, check_undefined_grad=True)


def test_argument_validation():
    x = rnd(3)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(f_real, (rnd(3, requires_grad=False),))
    with pytest.raises(ValueError, match="check_forward_ad or check_backward_ad"):
        gradcheck(f_real, (x,), check_backward_ad=False)
    with pytest.raises(ValueError, match="check_batched_grad"):
        gradcheck(f_real, (x,), check_forward_ad=True, check_backward_ad=False, check_batched_grad=True)
    with pytest.raises(ValueError, match="check_batched_forward_grad"):
        gradcheck(f_real, (x,), check_batched_forward_grad=True)
    with pytest.raises(ValueError, match="check_fwd_over_rev or check_rev_over_rev"):
        gradgradcheck(f_real, (x,), check_rev_over_rev=False)
    with pytest.raises(ValueError, match="check_undefined_grad"):
        gradgradcheck(f_real, (x,), check_rev_over_rev=False, check_fwd_over_rev=True)


def test_low_precision_input_warns():
    x = da.tensor(np.linspace(0.1, 1, 3).astype(np.float32), requires_grad=True)
    with pytest.warns(UserWarning, match="not float64"):
        gradcheck(lambda x: x * 2.0, (x,), atol=1e-2, rtol=1e-2, raise_exception=False)


def test_masked_is_accepted():
    assert gradcheck(f_real, (rnd(3),), masked=True)
    assert gradgradcheck(f_real, (rnd(3),), masked=True)


def test_exports():
    assert da.gradcheck is gradcheck
    assert da.gradgradcheck is gradgradcheck
    assert da.GradcheckError is GradcheckError
    assert issubclass(GradcheckError, RuntimeError)


# --------------------------------------------------------------------------- gradgradcheck
def x3sin(x):
    return x**3 * dnp.sin(x)


@pytest.mark.parametrize("fast", MODES)
class TestGradgradcheck:
    def test_passes_real(self, fast):
        assert gradgradcheck(x3sin, (rnd(2, 2),), fast_mode=fast, check_fwd_over_rev=True)

    def test_passes_multi(self, fast):
        x, y = rnd(3), rnd(2, 3, seed=1)
        assert gradgradcheck(f_multi, (x, y, 0.5), fast_mode=fast, check_fwd_over_rev=True)

    def test_passes_complex(self, fast):
        z = rnd(2, complex_=True)
        assert gradgradcheck(lambda z: z**2 * dnp.exp(z), (z,), fast_mode=fast, check_fwd_over_rev=True)
        assert gradgradcheck(
            lambda z: dnp.abs(z) ** 2 * dnp.real(z), (z,), fast_mode=fast, check_fwd_over_rev=True
        )

    def test_given_and_noncontiguous_grad_outputs(self, fast):
        x = rnd(3, 2)
        v = rnd(3, 2, seed=5)
        assert gradgradcheck(x3sin, (x,), (v,), fast_mode=fast)
        assert gradgradcheck(x3sin, (x,), fast_mode=fast, gen_non_contig_grad_outputs=True)

    def test_batched(self, fast):
        assert gradgradcheck(x3sin, (rnd(3),), fast_mode=fast, check_batched_grad=True)

    def test_catches_backward_built_from_detached_values(self, fast):
        # The backward's value is right (first order passes) but it is computed
        # from a detached array, so its own derivative w.r.t. x is lost.
        class CubeDetached(da.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * da.tensor(3 * x.detach().numpy() ** 2)

        x = rnd(3)
        assert gradcheck(CubeDetached.apply, (x,), fast_mode=fast)
        with pytest.raises(GradcheckError) as e:
            gradgradcheck(CubeDetached.apply, (x,), fast_mode=fast)
        # Output 0 of v^T J is the gradient; input 0 is x (input 1, v, is fine).
        assert "Jacobian mismatch for output 0 with respect to input 0" in _msg(e)
        assert gradgradcheck(CubeDetached.apply, (x,), fast_mode=fast, raise_exception=False) is False

    def test_catches_wrong_second_derivative(self, fast):
        # d/dx x^3 = 3x^2 is computed by a Function whose own backward is wrong
        # (3x instead of 6x): only visible at second order.
        class ThreeXSquared(da.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return 3 * x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 3 * x

        class Cube(da.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ThreeXSquared.apply(x)

        x = rnd(3)
        assert gradcheck(Cube.apply, (x,), fast_mode=fast)
        with pytest.raises(GradcheckError, match="output 0 with respect to input 0"):
            gradgradcheck(Cube.apply, (x,), fast_mode=fast)

    def test_fwd_over_rev_catches_wrong_jvp_inside_backward(self, fast):
        # Reverse-over-reverse is right; the jvp used when forward mode runs
        # through the backward pass is wrong.
        class ThreeXSquared(da.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.save_for_forward(x)
                return 3 * x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 6 * x

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return -t * 6 * x

        class Cube(da.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.save_for_forward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ThreeXSquared.apply(x)

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return t * 3 * x**2

        x = rnd(3)
        assert gradgradcheck(Cube.apply, (x,), fast_mode=fast)
        with pytest.raises(GradcheckError, match="computed with forward mode mismatch"):
            gradgradcheck(
                Cube.apply,
                (x,),
                fast_mode=fast,
                check_fwd_over_rev=True,
                check_rev_over_rev=False,
                check_undefined_grad=False,
            )


# --------------------------------------------------------------------------- batching / directions
class NumpyBackward(da.Function):
    """Right unbatched, but its backward computes on raw arrays, ignoring a batch axis."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return dnp.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return da.tensor(g.detach().numpy() * np.cos(x.detach().numpy()))


class FirstOfBatch(da.Function):
    """Right unbatched; under batching it uses the first cotangent of the batch for all."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return dnp.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        xa = x.detach().numpy()
        ga = g.detach().numpy().reshape((-1, *xa.shape))[0]
        return da.tensor(ga * np.cos(xa))


class CumsumRawJvp(da.Function):
    """cumsum whose jvp sums over axis 0 of the raw tangent: the batch axis when batched."""

    @staticmethod
    def forward(ctx, x):
        return dnp.cumsum(x)

    @staticmethod
    def backward(ctx, g):
        return dnp.flip(dnp.cumsum(dnp.flip(g)))

    @staticmethod
    def jvp(ctx, t):
        return da.tensor(np.cumsum(t.detach().numpy(), axis=0))


def test_batched_grad_catches_backward_that_ignores_the_batch():
    x = rnd(3)
    assert gradcheck(NumpyBackward.apply, (x,))
    with pytest.raises(GradcheckError, match="[Bb]atched gradient"):
        gradcheck(NumpyBackward.apply, (x,), check_batched_grad=True)
    assert gradcheck(FirstOfBatch.apply, (x,))
    with pytest.raises(GradcheckError, match="[Bb]atched gradient"):
        gradcheck(FirstOfBatch.apply, (x,), check_batched_grad=True)


def test_batched_forward_grad_catches_jvp_that_mixes_the_batch_axis():
    x = rnd(3)
    assert gradcheck(CumsumRawJvp.apply, (x,), check_forward_ad=True)
    with pytest.raises(GradcheckError, match="[Bb]atched forward gradient"):
        gradcheck(CumsumRawJvp.apply, (x,), check_forward_ad=True, check_batched_forward_grad=True)


@pytest.mark.parametrize("fast", MODES)
def test_jvp_wrong_only_along_imaginary_directions(fast):
    # jvp of z**2 that treats the tangent as real: right for tangent 1, wrong for 1j.
    RealTangentSquare = scalar_fn(lambda z: z * z, lambda z: 2 * z)
    RealTangentSquare.jvp = staticmethod(lambda ctx, t: dnp.real(t) * 2 * ctx.saved_tensors[0])
    z = rnd(3, complex_=True)
    assert gradcheck(RealTangentSquare.apply, (z,), fast_mode=fast)
    assert gradcheck(RealTangentSquare.apply, (rnd(3),), fast_mode=fast, check_forward_ad=True)
    with pytest.raises(GradcheckError) as e:
        gradcheck(RealTangentSquare.apply, (z,), fast_mode=fast, check_forward_ad=True)
    assert (
        "While considering the imaginary part of complex inputs only, Jacobian computed with "
        "forward mode mismatch for output 0 with respect to input 0" in _msg(e)
    )
