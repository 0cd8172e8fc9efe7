"""A Function with ``forward`` and ``backward`` but no ``jvp`` works in forward mode.

Its backward is linear in the grad_outputs; run on symbolic grad_outputs it records
that linear map, whose transpose is the JVP. Checked against the Function's own
backward (``Re<v, J u> == Re<J^T v, u>``), against finite differences and against
the same function written with dualad operations, in every composition of modes.
"""

import numpy as np
import pytest

import dualad as da
import dualad.forward_ad as fwAD
import dualad.functional as F
import dualad.numpy as dnp


def A(t):
    return t.detach().numpy() if isinstance(t, da.Tensor) else np.asarray(t)


def close(a, b, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(A(a), A(b), rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------
# Functions with a hand-written backward only
# ---------------------------------------------------------------------------


class Cube(da.Function):
    """Saves its input."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * g if ctx.needs_input_grad[0] else None


class Exp(da.Function):
    """Saves its output."""

    @staticmethod
    def forward(ctx, x):
        y = dnp.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class MulPair(da.Function):
    """Two inputs, two outputs: (x * y, x - 2 y[::-1])."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y, x - 2 * y[::-1]

    @staticmethod
    def backward(ctx, g1, g2):
        x, y = ctx.saved_tensors
        return g1 * y + g2, g1 * x - 2 * g2[::-1]


def mul_pair(x, y):
    return x * y, x - 2 * y[::-1]


class Solve(da.Function):
    """x = A^-1 b by NumPy (opaque to dualad); backward by the adjoint equation."""

    @staticmethod
    def forward(ctx, A_, b):
        x = da.tensor(np.linalg.solve(A_.numpy(), b.numpy()))
        ctx.save_for_backward(A_, x)
        return x

    @staticmethod
    def backward(ctx, g):
        A_, x = ctx.saved_tensors
        lam = dnp.linalg.solve(A_.T, g)
        return -dnp.outer(lam, x), lam


class CSquare(da.Function):
    """z ** 2, holomorphic: the backward gives conj(f'(z)) g (dualad's and torch's
    convention, the adjoint for the real inner product)."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * dnp.conj(2 * z)


class AbsSq(da.Function):
    """|z|^2, complex to real and not holomorphic: the gradient is 2 z g."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return dnp.real(z * dnp.conj(z))

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return 2 * z * g


class Cis(da.Function):
    """exp(i x) of a real x: a complex output; the gradient is Re(conj(i y) g)."""

    @staticmethod
    def forward(ctx, x):
        y = dnp.exp(1j * x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return dnp.real(g * dnp.conj(1j * y))


class Scale(da.Function):
    """x * k * n with a Python int k and an integer Tensor n: not differentiable inputs."""

    @staticmethod
    def forward(ctx, x, k, n):
        ctx.save_for_backward(n)
        ctx.k = k
        return x * k * n

    @staticmethod
    def backward(ctx, g):
        (n,) = ctx.saved_tensors
        return g * ctx.k * n, None, None


class SortIdx(da.Function):
    """(sorted x, the permutation): the second output is not differentiable."""

    @staticmethod
    def forward(ctx, x):
        i = da.tensor(np.argsort(x.numpy()))
        ctx.mark_non_differentiable(i)
        ctx.save_for_backward(i)
        return x[i], i

    @staticmethod
    def backward(ctx, g, gi):
        (i,) = ctx.saved_tensors
        assert gi is None or not np.any(A(gi))
        out = dnp.zeros_like(g)
        out[i] = g
        return out


def sort_first(x):
    return dnp.sort(x)


CASES = [
    # (name, function, reference built from dualad operations, inputs)
    ("cube", Cube.apply, lambda x: x**3, (np.array([0.5, -1.5, 2.0]),)),
    ("exp", Exp.apply, dnp.exp, (np.array([[0.1, -0.4], [0.3, 1.2]]),)),
    ("mul_pair", MulPair.apply, mul_pair, (np.array([1.0, 2.0, -3.0]), np.array([0.5, 4.0, 1.5]))),
    ("solve", Solve.apply, dnp.linalg.solve,
     (np.array([[3.0, 1.0, 0.2], [0.5, 2.0, -0.3], [0.1, 0.4, 4.0]]), np.array([1.0, -2.0, 0.5]))),
    ("csquare", CSquare.apply, lambda z: z * z, (np.array([1.0 + 2.0j, -0.5 + 0.3j]),)),
    ("abssq", AbsSq.apply, lambda z: dnp.real(z * dnp.conj(z)), (np.array([1.0 + 2.0j, -0.5 + 0.3j]),)),
    ("cis", Cis.apply, lambda x: dnp.exp(1j * x), (np.array([0.4, -1.3, 2.0]),)),
]


def _directions(xs, seed):
    r = np.random.default_rng(seed)

    def one(x):
        d = r.standard_normal(x.shape)
        return d + 1j * r.standard_normal(x.shape) if np.iscomplexobj(x) else d

    return tuple(one(x) for x in xs)


def _tuple(y):
    return y if isinstance(y, tuple) else (y,)


def _inner(a, b):
    """Re<a, b> summed over a tuple of pairs."""
    return sum(np.real(np.vdot(A(x), A(y))) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("name,f,ref,xs", CASES, ids=[c[0] for c in CASES])
def test_jvp_is_the_transpose_of_the_functions_own_backward(name, f, ref, xs):
    us = _directions(xs, 1)
    y, Ju = F.jvp(f, tuple(da.tensor(x) for x in xs), tuple(da.tensor(u) for u in us))
    vs = _directions(tuple(A(t) for t in _tuple(y)), 2)
    _, JTv = F.vjp(f, tuple(da.tensor(x) for x in xs), tuple(da.tensor(v) for v in vs)
                   if len(vs) > 1 else da.tensor(vs[0]))
    lhs = _inner(vs, _tuple(Ju))
    rhs = _inner(_tuple(JTv), us)
    assert abs(lhs - rhs) <= 1e-10 * (1 + abs(lhs))
    # the same JVP as the function written with dualad operations (a different rule)
    y_ref, Ju_ref = F.jvp(ref, tuple(da.tensor(x) for x in xs), tuple(da.tensor(u) for u in us))
    for a, b in zip(_tuple(Ju), _tuple(Ju_ref), strict=True):
        close(a, b)
        assert a.dtype == b.dtype
    # and finite differences (a central difference: second-order accurate)
    eps = 1e-6
    plus = _tuple(f(*(da.tensor(x + eps * u) for x, u in zip(xs, us, strict=True))))
    minus = _tuple(f(*(da.tensor(x - eps * u) for x, u in zip(xs, us, strict=True))))
    for a, p, m in zip(_tuple(Ju), plus, minus, strict=True):
        close(a, (A(p) - A(m)) / (2 * eps), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,f,ref,xs", CASES, ids=[c[0] for c in CASES])
def test_dual_levels_and_batched_jacobians(name, f, ref, xs):
    us = _directions(xs, 3)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(da.tensor(x), da.tensor(u)) for x, u in zip(xs, us, strict=True)]
        got = [fwAD.unpack_dual(o) for o in _tuple(f(*duals))]
        want = [fwAD.unpack_dual(o) for o in _tuple(ref(*duals))]
    for (p, t), (pr, tr) in zip(got, want, strict=True):
        close(p, pr)
        close(t, tr)
    if any(np.iscomplexobj(x) for x in xs):
        return  # (the Jacobian of a complex function is not a complex matrix)
    argnums = tuple(range(len(xs)))
    ts = tuple(da.tensor(x) for x in xs)
    # jacfwd pushes the whole basis through as one batch of tangents
    for J, Jr in zip(_flat(F.jacfwd(f, argnums=argnums)(*ts)),
                     _flat(F.jacfwd(ref, argnums=argnums)(*ts)), strict=True):
        close(J, Jr)
    if any(np.iscomplexobj(A(y)) for y in _tuple(f(*ts))):
        return  # (reverse mode's rows of a complex output are conjugate gradients)
    for J, Jr in zip(_flat(F.jacobian(f, ts, vectorize=True, strategy="forward-mode")),
                     _flat(F.jacobian(f, ts)), strict=True):
        close(J, Jr)


def _flat(J):
    if isinstance(J, tuple):
        return [b for r in J for b in _flat(r)]
    return [J]


def _scalar(f):
    """A scalar function of f's inputs with curvature of its own."""

    def s(*xs):
        return sum(dnp.sum(dnp.real(dnp.sin(o) * o)) for o in _tuple(f(*xs)))

    return s


REAL = [c for c in CASES if not np.iscomplexobj(c[3][0])]


@pytest.mark.parametrize("name,f,ref,xs", REAL, ids=[c[0] for c in REAL])
def test_hessians_by_every_strategy_and_composition(name, f, ref, xs):
    s, s_ref = _scalar(f), _scalar(ref)
    ts = tuple(da.tensor(x) for x in xs)
    H_ref = F.hessian(s_ref, ts)
    for strategy in ("reverse-mode", "forward-mode"):
        for vectorize in (False, True):
            H = F.hessian(s, ts, vectorize=vectorize, outer_jacobian_strategy=strategy)
            for a, b in zip(_flat(H), _flat(H_ref), strict=True):
                close(a, b, rtol=1e-8, atol=1e-9)
    argnums = tuple(range(len(xs)))
    for outer, inner in [(F.jacfwd, F.jacfwd), (F.jacfwd, F.jacrev), (F.jacrev, F.jacfwd),
                         (F.jacrev, F.jacrev)]:
        H = outer(inner(s, argnums=argnums), argnums=argnums)(*ts)
        for a, b in zip(_flat(H), _flat(H_ref), strict=True):
            close(a, b, rtol=1e-8, atol=1e-9)
    vs = _directions(xs, 4)
    for how in (F.hvp, F.vhp):
        _, Hv = how(s, ts, tuple(da.tensor(v) for v in vs))
        _, Hv_ref = how(s_ref, ts, tuple(da.tensor(v) for v in vs))
        for a, b in zip(_tuple(Hv), _tuple(Hv_ref), strict=True):
            close(a, b, rtol=1e-8, atol=1e-9)


def test_complex_second_order_agrees_with_the_built_in_ops():
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    v = np.array([0.3 - 1.0j, 2.0 + 0.5j])
    for f, ref in [(CSquare.apply, lambda z: z * z),
                   (AbsSq.apply, lambda z: dnp.real(z * dnp.conj(z)))]:
        s = lambda z, f=f: dnp.sum(dnp.abs(f(z)) ** 2 * dnp.real(z))  # noqa: E731
        s_ref = lambda z, ref=ref: dnp.sum(dnp.abs(ref(z)) ** 2 * dnp.real(z))  # noqa: E731
        close(F.hvp(s, da.tensor(z), da.tensor(v))[1], F.hvp(s_ref, da.tensor(z), da.tensor(v))[1])
        close(F.hessian(s, da.tensor(z)), F.hessian(s_ref, da.tensor(z)))
        close(F.hessian(s, da.tensor(z), outer_jacobian_strategy="forward-mode"),
              F.hessian(s_ref, da.tensor(z), outer_jacobian_strategy="forward-mode"))


def test_reverse_over_forward_records_the_backwards_coefficients():
    # grad of <w, J(x) u> w.r.t. x and u: the transposed backward's coefficients (from
    # the saved input and output) carry their own graph
    x0, u0, w = np.array([0.2, -0.7, 1.1]), np.array([1.0, 0.5, -2.0]), np.array([0.3, 1.0, 2.0])
    for f, ref in [(Cube.apply, lambda x: x**3), (Exp.apply, dnp.exp)]:
        got, want = [], []
        for g in (f, ref):
            x = da.tensor(x0, requires_grad=True)
            u = da.tensor(u0, requires_grad=True)
            _, Ju = F.jvp(g, x, u, create_graph=True)
            (got if g is f else want).append(da.grad(dnp.sum(Ju * w), (x, u)))
        for a, b in zip(got[0], want[0], strict=True):
            close(a, b)


def test_non_differentiable_inputs_and_outputs_and_none_gradients():
    x0, u0 = np.array([1.0, -2.0, 3.0]), np.array([0.5, 1.0, -1.0])
    n = da.tensor(np.array([2, 3, 4]))
    _, t = F.jvp(lambda x: Scale.apply(x, 3, n), da.tensor(x0), da.tensor(u0))
    close(t, u0 * 3 * np.array([2, 3, 4]))
    # a non-differentiable output gets no tangent; the other is the permuted tangent
    with fwAD.dual_level():
        s, i = SortIdx.apply(fwAD.make_dual(da.tensor(x0), da.tensor(u0)))
        close(fwAD.unpack_dual(s).tangent, u0[np.argsort(x0)])
        assert fwAD.unpack_dual(i).tangent is None
    close(F.jacfwd(lambda x: SortIdx.apply(x)[0])(da.tensor(x0)),
          F.jacrev(sort_first)(da.tensor(x0)))

    # a backward that gives no gradient (None) for an input that is used: forward mode
    # follows what backward says, so the tangent in that direction is zero
    class NoGradY(da.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y, None

    x, y = da.tensor(x0), da.tensor(u0)
    assert not np.any(A(F.jvp(NoGradY.apply, (x, y), (da.zeros(3), da.ones(3)))[1]))
    close(F.jvp(NoGradY.apply, (x, y), (da.ones(3), da.ones(3)))[1], u0)
    _, vjps = F.vjp(NoGradY.apply, (x, y), da.ones(3))
    assert not np.any(A(vjps[1]))


def test_materialize_grads_off_passes_none_for_the_other_outputs():
    seen = []

    class Two(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            i = da.tensor(np.arange(x.shape[0]))
            ctx.mark_non_differentiable(i)
            return 2 * x, i

        @staticmethod
        def backward(ctx, g, gi):
            seen.append(gi)
            return 2 * g

    _, t = F.jvp(lambda x: Two.apply(x)[0], da.tensor([1.0, 2.0]), da.tensor([1.0, -1.0]))
    close(t, [2.0, -2.0])
    assert seen == [None]


def test_a_solve_written_with_numpy_has_a_hessian_by_forward_over_reverse():
    # the Function's forward calls NumPy on arrays; every derivative is its backward's
    r = np.random.default_rng(5)
    M = r.standard_normal((4, 4)) + 4 * np.eye(4)
    b = r.standard_normal(4)

    def loss(M, b, solve):
        x = solve(M, b)
        return dnp.sum(x**4) + dnp.sum(M * M) * dnp.sum(x)

    H = F.hessian(lambda M, b: loss(M, b, Solve.apply), (da.tensor(M), da.tensor(b)),
                  outer_jacobian_strategy="forward-mode")
    H_ref = F.hessian(lambda M, b: loss(M, b, dnp.linalg.solve), (da.tensor(M), da.tensor(b)))
    for a, c in zip(_flat(H), _flat(H_ref), strict=True):
        close(a, c, rtol=1e-8, atol=1e-10)


def test_gradcheck_forward_mode_of_a_backward_only_function():
    x = da.tensor(np.array([0.3, -0.8, 1.4]), requires_grad=True)
    assert da.gradcheck(Cube.apply, (x,), check_forward_ad=True)
    assert da.gradcheck(Exp.apply, (x,), check_forward_ad=True)
    y = da.tensor(np.array([0.5, 1.5, -2.0]), requires_grad=True)
    assert da.gradcheck(MulPair.apply, (x, y), check_forward_ad=True)


def test_once_differentiable_backward_gives_first_order_and_refuses_the_second():
    class OnceCube(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        @da.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g

    x0 = np.array([0.5, -1.5])
    close(F.jvp(OnceCube.apply, da.tensor(x0), da.ones(2))[1], 3 * x0**2)
    with pytest.raises(RuntimeError, match="once_differentiable.*OnceCube"):
        F.jacrev(F.jacfwd(lambda x: dnp.sum(OnceCube.apply(x))))(da.tensor(x0))


# ---------------------------------------------------------------------------
# What cannot be right raises, naming the Function
# ---------------------------------------------------------------------------


def _one(body):
    class Bad(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 2 * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return body(g, x)

    return Bad


@pytest.mark.parametrize("body,words", [
    (lambda g, x: dnp.sin(g), "Bad.backward is not linear in its grad_outputs.*'sin'"),
    (lambda g, x: g * g * x, "Bad.backward is not linear.*product of two grad_outputs"),
    (lambda g, x: g + 1.0, "Bad.backward is not linear.*adds a constant that is not zero"),
    (lambda g, x: dnp.where(x > 0, g, 2.0), "Bad.backward is not linear.*adds a constant"),
    (lambda g, x: x * 0 + 1.0, "Bad.backward is not linear.*input 0 does not depend on them"),
    (lambda g, x: da.tensor(np.asarray(g)) * x, "Bad.backward cannot be used for forward "
                                                 "mode.*np.asarray.*give Bad a jvp"),
])
def test_a_backward_that_is_not_linear_in_grad_output_is_refused(body, words):
    Bad = _one(body)
    x = da.tensor(np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=words):
        F.jvp(Bad.apply, x, da.ones(2))
    with pytest.raises(RuntimeError, match=words):
        F.jacfwd(Bad.apply)(x)


def test_a_jvp_that_adds_a_constant_is_refused_for_reverse_mode():
    class Affine(da.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def jvp(ctx, t):
            return 2 * t + 1.0  # wrong: affine; its transpose would drop the 1

    x = da.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="JVP of Affine is not linear.*adds a constant"):
        dnp.sum(Affine.apply(x)).backward()


class CosSaved(da.Function):
    """sin(x), saving cos(x), an intermediate: its derivative is unknown to dualad."""

    @staticmethod
    def forward(ctx, x):
        c = dnp.cos(x)
        ctx.save_for_backward(c)
        return dnp.sin(x)

    @staticmethod
    def backward(ctx, g):
        (c,) = ctx.saved_tensors
        return g * c


class CosAttr(da.Function):
    """sin(x), keeping cos(x), an intermediate, as an attribute of ctx."""

    @staticmethod
    def forward(ctx, x):
        ctx.c = dnp.cos(x)
        return dnp.sin(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.c


class SinInputAttr(da.Function):
    """sin(x), keeping its input x as an attribute of ctx (torch's ctx.x = x): the
    attribute is the input, so every derivative follows it."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return dnp.sin(x)

    @staticmethod
    def backward(ctx, g):
        return g * dnp.cos(ctx.x)


def _grad_of_grad(s, x0):
    x = da.tensor(x0, requires_grad=True)
    (g,) = da.grad(s(x), x, create_graph=True)
    return da.grad(g.sum(), x)


def _backward_then_grad(s, x0):
    x = da.tensor(x0, requires_grad=True)
    s(x).backward(create_graph=True)
    return da.grad(x.grad.sum(), x)


_SAVED = r"ctx.saved_tensors\[0\] \(a tensor saved with ctx.save_for_backward\)"


@pytest.mark.parametrize("Fn,where", [(CosSaved, _SAVED), (CosAttr, "ctx.c")])
def test_an_intermediate_serves_first_order_and_refuses_higher_orders(Fn, where):
    x0 = np.array([0.3, 1.2])
    close(F.jvp(Fn.apply, da.tensor(x0), da.ones(2))[1], np.cos(x0))
    close(F.jacfwd(Fn.apply)(da.tensor(x0)), np.diag(np.cos(x0)))
    s = lambda x: dnp.sum(Fn.apply(x))  # noqa: E731
    # reverse-over-reverse: the intermediate has no history (forward ran on plain values),
    # so it would be a constant there and the Hessian a silent zero (torch gives that zero:
    # it documents that double backward needs such values returned as outputs); the
    # true Hessian is -diag(sin x)
    for how, kind in [(lambda: F.hessian(s, da.tensor(x0)), "reverse-over-reverse"),
                      (lambda: F.jacrev(F.jacrev(s))(da.tensor(x0)), "reverse-over-reverse"),
                      (lambda: _grad_of_grad(s, x0), "reverse-over-reverse"),
                      (lambda: _backward_then_grad(s, x0), "reverse-over-reverse"),
                      (lambda: F.jacfwd(F.jacfwd(s))(da.tensor(x0)), "forward-over-forward"),
                      (lambda: F.hvp(s, da.tensor(x0), da.ones(2)), "forward-over-reverse"),
                      (lambda: F.hessian(s, da.tensor(x0), outer_jacobian_strategy="forward-mode"),
                       "forward-over-reverse"),
                      (lambda: F.jacrev(F.jacfwd(s))(da.tensor(x0)), "reverse-over-forward")]:
        with pytest.raises(RuntimeError, match=f"{Fn.__name__}.backward reads {where}.*{kind}"):
            how()
    # a jvp computed with grad mode on raises only if reverse mode asks for its derivative
    x = da.tensor(x0, requires_grad=True)
    _, t = F.jvp(Fn.apply, x, da.ones(2), create_graph=True)
    close(t, np.cos(x0))
    # so does a gradient computed with create_graph: the first order is as before, and a
    # second pass that does not reach the intermediate (the derivative with respect to
    # the grad_output) works
    x = da.tensor(x0, requires_grad=True)
    v = da.tensor([2.0, 3.0], requires_grad=True)
    (gx,) = da.grad(Fn.apply(x), x, grad_outputs=v, create_graph=True)
    close(gx, [2.0, 3.0] * np.cos(x0))
    assert gx.requires_grad
    close(da.grad(gx.sum(), v)[0], np.cos(x0))
    x = da.tensor(x0, requires_grad=True)
    s(x).backward(create_graph=True)
    close(x.grad, np.cos(x0))
    # and a backward that is not recorded reads the intermediate as it was saved
    x = da.tensor(x0, requires_grad=True)
    s(x).backward()
    close(x.grad, np.cos(x0))


class SinPlusSquare(da.Function):
    """sin(x) + w**2, saving cos(x), an intermediate, and w, an input."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(dnp.cos(x), w)
        ctx.c = dnp.cos(x)
        return dnp.sin(x) + w**2

    @staticmethod
    def backward(ctx, g):
        c, w = ctx.saved_tensors
        assert c.requires_grad == da.is_grad_enabled()  # wrapped only when recorded
        return g * (c + ctx.c) / 2, 2 * g * w


def test_a_second_reverse_pass_that_does_not_reach_the_intermediate_works():
    x0, w0 = np.array([0.3, 1.2]), np.array([-0.5, 2.0])
    x, w = da.tensor(x0, requires_grad=True), da.tensor(w0, requires_grad=True)
    gx, gw = da.grad(dnp.sum(SinPlusSquare.apply(x, w)), (x, w), create_graph=True)
    close(gx, np.cos(x0))
    close(gw, 2 * w0)
    close(da.grad(gw.sum(), w)[0], [2.0, 2.0])  # d/dw of 2 w: never reaches cos(x)
    # the Hessian in w alone (x a constant), by reverse-over-reverse
    close(F.hessian(lambda w: dnp.sum(SinPlusSquare.apply(da.tensor(x0), w)), da.tensor(w0)),
          2 * np.eye(2))
    # reaching it raises, naming the value read: saved or attribute, whichever comes first
    x, w = da.tensor(x0, requires_grad=True), da.tensor(w0, requires_grad=True)
    gx, gw = da.grad(dnp.sum(SinPlusSquare.apply(x, w)), (x, w), create_graph=True)
    with pytest.raises(RuntimeError, match=r"SinPlusSquare.backward reads (ctx.saved_tensors"
                                           r"\[0\]|ctx.c).*reverse-over-reverse.*return it "
                                           "from forward as an output"):
        da.grad(gx.sum(), x)


class SinCos(da.Function):
    """(sin x, cos x): cos x returned as an output (the fix for an intermediate that
    backward reads), so that every derivative follows it."""

    @staticmethod
    def forward(ctx, x):
        s, c = dnp.sin(x), dnp.cos(x)
        ctx.save_for_backward(s, c)
        return s, c

    @staticmethod
    def backward(ctx, gs, gc):
        s, c = ctx.saved_tensors
        return gs * c - gc * s


def test_an_intermediate_returned_as_an_output_has_the_right_hessian_in_every_mode():
    x0 = np.array([0.3, 1.2, -0.7])
    s = lambda x: dnp.sum(SinCos.apply(x)[0] * x)  # noqa: E731  (sum x sin x)

    def grad(x):
        x = da.tensor(x, requires_grad=True)
        s(x).backward()
        return A(x.grad)

    h = 1e-6
    H_fd = np.stack([(grad(x0 + h * e) - grad(x0 - h * e)) / (2 * h) for e in np.eye(3)], 1)
    H_closed = np.diag(2 * np.cos(x0) - x0 * np.sin(x0))
    close(H_fd, H_closed, rtol=1e-7, atol=1e-8)
    for H in [F.hessian(s, da.tensor(x0)), F.jacrev(F.jacrev(s))(da.tensor(x0)),
              F.hessian(s, da.tensor(x0), outer_jacobian_strategy="forward-mode"),
              F.jacfwd(F.jacfwd(s))(da.tensor(x0)), F.jacrev(F.jacfwd(s))(da.tensor(x0))]:
        close(H, H_fd, rtol=1e-7, atol=1e-8)
    for Hv in [_grad_of_grad(s, x0)[0], _backward_then_grad(s, x0)[0]]:  # H @ ones
        close(Hv, H_fd.sum(1), rtol=1e-7, atol=1e-8)


def test_an_input_kept_as_a_ctx_attribute_is_followed_by_every_derivative():
    x0 = np.array([0.3, 1.2])
    s = lambda x: dnp.sum(SinInputAttr.apply(x) ** 2)  # noqa: E731
    H_ref = F.hessian(lambda x: dnp.sum(dnp.sin(x) ** 2), da.tensor(x0))
    for H in [F.hessian(s, da.tensor(x0)),
              F.hessian(s, da.tensor(x0), outer_jacobian_strategy="forward-mode"),
              F.jacfwd(F.jacfwd(s))(da.tensor(x0)), F.jacrev(F.jacfwd(s))(da.tensor(x0)),
              F.jacfwd(F.jacrev(s))(da.tensor(x0))]:
        close(H, H_ref)
    close(F.hvp(s, da.tensor(x0), da.ones(2))[1], A(H_ref) @ np.ones(2))


class ExpPair(da.Function):
    """(2 x, exp(x)), saving its second output."""

    @staticmethod
    def forward(ctx, x):
        a, b = 2 * x, dnp.exp(x)
        ctx.save_for_backward(b)
        return a, b

    @staticmethod
    def backward(ctx, ga, gb):
        (b,) = ctx.saved_tensors
        return 2 * ga + gb * b


def test_a_saved_second_output_is_that_output_in_every_second_derivative():
    # the saved output is reattached as output 1 of its node: a double backward sends its
    # gradient to gb, not ga (it went to output 0 before: a wrong Hessian, silently)
    x0 = np.array([0.3, -0.2])
    s = lambda x: dnp.sum(ExpPair.apply(x)[1] ** 2 + ExpPair.apply(x)[0] ** 3)  # noqa: E731
    H_ref = np.diag(4 * np.exp(2 * x0) + 48 * x0)
    for strategy in ("reverse-mode", "forward-mode"):
        close(F.hessian(s, da.tensor(x0), outer_jacobian_strategy=strategy), H_ref)
    close(F.jacfwd(F.jacfwd(s))(da.tensor(x0)), H_ref)


def test_an_input_modified_in_place_takes_the_tangent():
    class Double(da.Function):
        @staticmethod
        def forward(ctx, x):
            x *= 2
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    with fwAD.dual_level():
        a = fwAD.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, -1.0]))
        y = Double.apply(a)
        assert y is a
        close(fwAD.unpack_dual(a).tangent, [2.0, -2.0])
        close(fwAD.unpack_dual(a).primal, [2.0, 4.0])


def test_setup_context_style_and_a_function_with_neither_rule():
    class Sin(da.Function):
        @staticmethod
        def forward(x, k):
            return dnp.sin(x) * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * dnp.cos(x) * ctx.k, None

    x0 = np.array([0.2, 0.9])
    close(F.jvp(lambda x: Sin.apply(x, 2.0), da.tensor(x0), da.ones(2))[1], 2 * np.cos(x0))
    close(F.hessian(lambda x: dnp.sum(Sin.apply(x, 2.0)), da.tensor(x0),
                    outer_jacobian_strategy="forward-mode"), np.diag(-2 * np.sin(x0)))

    class Neither(da.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

    with pytest.raises(RuntimeError, match="Neither implements neither jvp nor backward"):
        F.jvp(Neither.apply, da.tensor(x0), da.ones(2))


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_mode_names_a_backward_whose_transpose_gives_nan():
    class BadBackward(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * dnp.log(x - 2.0)  # NaN coefficients at x < 2

    with fwAD.dual_level():
        x = fwAD.make_dual(da.ones(2), da.ones(2))
        with np.errstate(invalid="ignore"):
            assert np.isnan(A(fwAD.unpack_dual(BadBackward.apply(x)).tangent)).all()  # off
            with da.detect_anomaly(), pytest.raises(
                    RuntimeError, match="Function 'BadBackward' returned nan values in the "
                                        "tangent of its 0th output"):
                BadBackward.apply(x)


def test_a_backward_run_for_forward_mode_can_print_its_symbolic_grad_output():
    # printing g inside backward failed ('Aval' object has no attribute 'size') when forward
    # mode ran the backward on a symbolic grad_output
    seen = []

    class Square(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            seen.append(repr(g))
            (x,) = ctx.saved_tensors
            return 2 * x * g

    with fwAD.dual_level():
        x = fwAD.make_dual(da.tensor([1.0, 2.0]), da.tensor([1.0, 0.0]))
        t = fwAD.unpack_dual(Square.apply(x)).tangent
    np.testing.assert_allclose(t.numpy(), [2.0, 0.0])
    assert seen == ["tensor(<symbolic>, shape=(2,), dtype=float64)"]


def test_a_first_order_backward_reads_what_forward_saved_and_a_recorded_one_the_input():
    # a first-order backward (not recorded, no live level) reads ctx.x as forward saw it
    # (no substitution, no cost); create_graph reads the caller's input, so that the
    # second derivative goes through it
    seen = []

    class Sin(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            return dnp.sin(x)

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.x.requires_grad)
            return g * dnp.cos(ctx.x)

    x0 = np.array([0.3, -1.1])
    x = da.tensor(x0, requires_grad=True)
    dnp.sum(Sin.apply(x)).backward()
    close(x.grad, np.cos(x0))
    (g,) = da.grad(dnp.sum(Sin.apply(x)), x, create_graph=True)
    close(da.grad(dnp.sum(g), x)[0], -np.sin(x0))
    assert seen == [False, True]
