"""A Function with a `jvp` (alone, or beside a `backward`).

Forward mode reads what `save_for_forward` saved directly; reverse mode transposes the
same jvp after the forward pass, so the node must keep them (version-checked) for the
backward pass. Second derivatives through the jvp follow what it reads when that is an
input or an output of forward, and raise, naming the Function and the value, where they
need the derivative of an intermediate; checked in every composition against closed
forms and finite differences.
"""

import numpy as np
import pytest

import dualad as da
import dualad.forward_ad as fwAD
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


# ---------------------------------------------------------------------------
# Second derivatives through a Function's jvp: f = sum(sin x), whose Hessian is
# -diag(sin x). What the jvp reads must be the Function's input or output (then every
# composition follows it, as torch follows an input) or, for an intermediate of forward
# (whose derivative nobody knows), a composition that needs its derivative raises,
# naming the Function and the value. Before, each of these gave a silent zero Hessian.
# ---------------------------------------------------------------------------


def A(t):
    return t.detach().numpy() if isinstance(t, da.Tensor) else np.asarray(t)


def close(a, b, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(A(a), A(b), rtol=rtol, atol=atol)


class SumSinSaved(da.Function):
    """jvp only; its jvp reads cos(x), an intermediate saved with save_for_forward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(dnp.cos(x))
        return dnp.sum(dnp.sin(x))

    @staticmethod
    def jvp(ctx, t):
        (c,) = ctx.saved_tensors
        return dnp.sum(c * t)


class SumSinCosAttr(da.Function):
    """jvp only; its jvp reads cos(x), an intermediate kept as an attribute of ctx."""

    @staticmethod
    def forward(ctx, x):
        ctx.c = dnp.cos(x)
        return dnp.sum(dnp.sin(x))

    @staticmethod
    def jvp(ctx, t):
        return dnp.sum(ctx.c * t)


class SumSinAttr(da.Function):
    """jvp only; its jvp reads its input x as an attribute of ctx (torch's ctx.x = x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return dnp.sum(dnp.sin(x))

    @staticmethod
    def jvp(ctx, t):
        return dnp.sum(dnp.cos(ctx.x) * t)


class SumSinInput(da.Function):
    """jvp only; its jvp reads its input x, saved with save_for_forward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return dnp.sum(dnp.sin(x))

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return dnp.sum(dnp.cos(x) * t)


class SumSinBothSaved(da.Function):
    """jvp and backward; the jvp reads cos(x), an intermediate saved with
    save_for_forward, the backward reads x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(dnp.cos(x))
        ctx.save_for_backward(x)
        return dnp.sum(dnp.sin(x))

    @staticmethod
    def jvp(ctx, t):
        (c,) = ctx.saved_tensors
        return dnp.sum(c * t)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * dnp.cos(x)


class SumSinBothInput(da.Function):
    """jvp and backward, both reading the input x (saved for each)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        return dnp.sum(dnp.sin(x))

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return dnp.sum(dnp.cos(x) * t)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * dnp.cos(x)


class SumExp(da.Function):
    """jvp only; sum(exp x), its jvp reads exp(x), an output of forward."""

    @staticmethod
    def forward(ctx, x):
        y = dnp.exp(x)
        ctx.save_for_forward(y)
        return y

    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return y * t


X0 = np.array([0.3, 1.2, -0.7])


def _grad_of_grad(f, x0):
    x = da.tensor(x0, requires_grad=True)
    (g,) = da.grad(f(x), x, create_graph=True)
    return da.grad(g.sum(), x)[0]


def _backward_then_grad(f, x0):
    x = da.tensor(x0, requires_grad=True)
    f(x).backward(create_graph=True)
    return da.grad(x.grad.sum(), x)[0]


def _tangent_then_grad(f, x0):
    """make_dual, then the reverse derivative of the output tangent: H @ ones."""
    x = da.tensor(x0, requires_grad=True)
    with fwAD.dual_level():
        t = fwAD.unpack_dual(f(fwAD.make_dual(x, da.ones(x0.shape)))).tangent
        return da.grad(t.sum(), x)[0]


def _two_make_duals(f, x0):
    """make_dual at two nested live levels (ones at the outer one, e_j at the inner one),
    by hand: the outer tangent of the inner tangent, e_j^T H ones, for each j."""
    col = []
    with fwAD.dual_level():
        a = fwAD.make_dual(da.tensor(x0), da.ones(x0.shape))
        for e in np.eye(len(x0)):
            with fwAD.dual_level():
                t = fwAD.unpack_dual(f(fwAD.make_dual(a, da.tensor(e)))).tangent
            col.append(fwAD.unpack_dual(t).tangent)
    return dnp.stack(col)


def _tangent_of_jacfwd(f, x0):
    """jacfwd (batched tangents at the inner level) of a dual input (one tangent, ones, at
    the outer level): the gradient's tangent, H @ ones."""
    with fwAD.dual_level():
        g = F.jacfwd(f)(fwAD.make_dual(da.tensor(x0), da.ones(x0.shape)))
        return fwAD.unpack_dual(g).tangent


def _compositions(f, x0):
    """(kind, Hessian or Hessian @ ones) for every way dualad composes two derivatives."""
    x = lambda: da.tensor(x0)  # noqa: E731
    return [
        # (the outer jacfwd's tangents are batched, the inner's one column at a time)
        ("forward-over-forward", lambda: F.jacfwd(F.jacfwd(f))(x())),
        ("forward-over-forward", lambda: F.jacfwd(F.jacfwd(f), chunk_size=1)(x())),
        ("forward-over-forward", lambda: _two_make_duals(f, x0)),
        ("forward-over-forward", lambda: _tangent_of_jacfwd(f, x0)),
        ("reverse-over-reverse", lambda: F.jacrev(F.jacrev(f))(x())),
        ("reverse-over-reverse", lambda: F.hessian(f, x())),
        ("reverse-over-reverse", lambda: F.hessian(f, x(), create_graph=True)),
        ("reverse-over-reverse", lambda: _grad_of_grad(f, x0)),
        ("reverse-over-reverse", lambda: _backward_then_grad(f, x0)),
        # (vectorize: the default strategy computes it by columns, then by rows if that raises)
        ("(forward|reverse)-over-reverse", lambda: F.hessian(f, x(), vectorize=True)),
        ("forward-over-reverse", lambda: F.jacfwd(F.jacrev(f))(x())),
        ("forward-over-reverse",
         lambda: F.hessian(f, x(), outer_jacobian_strategy="forward-mode")),
        ("forward-over-reverse",
         lambda: F.hessian(f, x(), vectorize=True, outer_jacobian_strategy="forward-mode")),
        ("forward-over-reverse", lambda: F.hvp(f, x(), da.ones(x0.shape))[1]),
        ("forward-over-reverse", lambda: F.vhp(f, x(), da.ones(x0.shape))[1]),
        ("reverse-over-forward", lambda: F.jacrev(F.jacfwd(f))(x())),
        ("reverse-over-forward", lambda: _tangent_then_grad(f, x0)),
    ]


def _check(H, H_ref):
    H = A(H)
    close(H, H_ref if H.ndim == 2 else H_ref.sum(1), rtol=1e-7, atol=1e-8)


def _fd_hessian(f, x0, h=1e-6):
    """Central differences of the first-order gradient (reverse mode, by transposing
    the jvp) and of the first-order Jacobian (forward mode, the jvp itself)."""

    def grad(x):
        x = da.tensor(x, requires_grad=True)
        f(x).backward()
        return A(x.grad)

    def jac(x):
        return A(F.jacfwd(f)(da.tensor(x)))

    E = np.eye(len(x0))
    by_rev = np.stack([(grad(x0 + h * e) - grad(x0 - h * e)) / (2 * h) for e in E], 1)
    by_fwd = np.stack([(jac(x0 + h * e) - jac(x0 - h * e)) / (2 * h) for e in E], 1)
    return by_rev, by_fwd


@pytest.mark.parametrize("Fn", [SumSinAttr, SumSinInput, SumSinBothInput])
def test_a_jvp_that_reads_its_input_gives_the_hessian_in_every_composition(Fn):
    H_closed = -np.diag(np.sin(X0))
    for H_fd in _fd_hessian(Fn.apply, X0):
        close(H_fd, H_closed, rtol=1e-7, atol=1e-8)
    for _, how in _compositions(Fn.apply, X0):
        _check(how(), H_closed)


def test_a_jvp_that_reads_its_output_gives_the_hessian_in_every_composition():
    f = lambda x: dnp.sum(SumExp.apply(x))  # noqa: E731
    H_closed = np.diag(np.exp(X0))
    for H_fd in _fd_hessian(f, X0):
        close(H_fd, H_closed, rtol=1e-7, atol=1e-8)
    for _, how in _compositions(f, X0):
        _check(how(), H_closed)


_FWD_SAVED = r"ctx.saved_tensors\[0\] \(a tensor saved with ctx.save_for_forward\)"


@pytest.mark.parametrize("Fn,where", [(SumSinSaved, _FWD_SAVED), (SumSinCosAttr, "ctx.c")])
def test_a_jvp_that_reads_an_intermediate_refuses_every_second_derivative(Fn, where):
    # first order, both modes, as before
    close(F.jacfwd(Fn.apply)(da.tensor(X0)), np.cos(X0))
    close(F.jacrev(Fn.apply)(da.tensor(X0)), np.cos(X0))
    # every second derivative needs the intermediate's: it raises, naming it (it was a
    # silent zero Hessian)
    for kind, how in _compositions(Fn.apply, X0):
        with pytest.raises(RuntimeError, match=f"{Fn.__name__}.jvp reads {where}, which is "
                                               f"neither an input nor an output.*{kind}"):
            how()
    # a second derivative that does not reach it works: with respect to the tangent
    x = da.tensor(X0, requires_grad=True)
    v = da.tensor([1.0, 2.0, 3.0], requires_grad=True)
    _, t = F.jvp(Fn.apply, x, v, create_graph=True)
    close(t, np.cos(X0) @ [1.0, 2.0, 3.0])
    close(da.grad(t, v)[0], np.cos(X0))
    # and with respect to the grad_output, by the transposed jvp
    x = da.tensor(X0, requires_grad=True)
    w = da.tensor(2.0, requires_grad=True)
    (gx,) = da.grad(Fn.apply(x), x, grad_outputs=w, create_graph=True)
    close(gx, 2 * np.cos(X0))
    close(da.grad(gx.sum(), w)[0], np.cos(X0).sum())


def test_a_jvp_beside_a_backward_that_reads_an_intermediate_refuses_reverse_over_forward():
    Fn = SumSinBothSaved
    H_closed = -np.diag(np.sin(X0))
    for H_fd in _fd_hessian(Fn.apply, X0):
        close(H_fd, H_closed, rtol=1e-7, atol=1e-8)
    for kind, how in _compositions(Fn.apply, X0):
        if kind in ("reverse-over-forward", "forward-over-forward"):  # the jvp's tangent,
            # differentiated
            with pytest.raises(RuntimeError, match=f"SumSinBothSaved.jvp reads {_FWD_SAVED}"
                                                   f".*{kind}"):
                how()
        else:  # reverse mode runs the backward, which reads the input
            _check(how(), H_closed)


class SumExpCubed(da.Function):
    """jvp only; y = exp(3x), its jvp reading its output y and its input x (both saved
    with save_for_forward), for third derivatives by three nested levels."""

    @staticmethod
    def forward(ctx, x):
        y = dnp.exp(3 * x)
        ctx.save_for_forward(x, y)
        return y

    @staticmethod
    def jvp(ctx, t):
        x, y = ctx.saved_tensors
        return 3 * y * t + 0 * x


def test_forward_over_forward_over_forward_through_a_jvp():
    # the jvp runs once per level (three here), each on values dual at the levels below
    f = lambda x: dnp.sum(SumExpCubed.apply(x))  # noqa: E731
    T = F.jacfwd(F.jacfwd(F.jacfwd(f)))(da.tensor(X0))
    T_closed = np.zeros((3, 3, 3))
    for i in range(3):
        T_closed[i, i, i] = 27 * np.exp(3 * X0[i])
    close(T, T_closed)
    close(F.jacrev(F.jacfwd(F.jacfwd(f)))(da.tensor(X0)), T_closed)
    close(F.jacfwd(F.jacrev(F.jacfwd(f)))(da.tensor(X0)), T_closed)


def test_forward_over_forward_through_a_jvp_with_an_intermediate_below_an_input():
    # the inner level's jvp reads forward's values (first order): only a level with a
    # level below raises, when the tangent's coefficient needs its derivative
    with fwAD.dual_level():
        x = fwAD.make_dual(da.tensor(X0), da.ones(3))
        close(fwAD.unpack_dual(SumSinSaved.apply(x)).tangent, np.cos(X0).sum())
        with fwAD.dual_level(), pytest.raises(RuntimeError, match="forward-over-forward"):
            SumSinSaved.apply(fwAD.make_dual(x, da.ones(3)))
    # a plain primal whose tangent is dual at a level below: the coefficient is constant
    # there (its primal has no tangent at that level), so nothing is refused
    with fwAD.dual_level():
        t = fwAD.make_dual(da.ones(3), da.tensor([1.0, 2.0, 3.0]))
        with fwAD.dual_level():
            y = SumSinSaved.apply(fwAD.make_dual(da.tensor(X0), t))
            tt = fwAD.unpack_dual(y).tangent
        close(fwAD.unpack_dual(tt).tangent, np.cos(X0) @ [1.0, 2.0, 3.0])


def test_first_order_jvp_reads_the_plain_values():
    # one level, nothing recorded: the jvp reads what forward saw (no substitution)
    seen = []

    class Spy(da.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            ctx.save_for_forward(x, dnp.cos(x))
            return dnp.sin(x)

        @staticmethod
        def jvp(ctx, t):
            x, c = ctx.saved_tensors
            seen.append((x is ctx.x, x.requires_grad, c.requires_grad))
            return c * t

    _, t = F.jvp(Spy.apply, da.tensor(X0), da.ones(3))
    close(t, np.cos(X0))
    assert seen == [(True, False, False)]


class ExpAttrByJvp(da.Function):
    """jvp only; exp(x), keeping its output as an attribute of ctx (ctx.y = y)."""

    @staticmethod
    def forward(ctx, x):
        ctx.y = dnp.exp(x)
        return ctx.y

    @staticmethod
    def jvp(ctx, t):
        return ctx.y * t


class ExpAttrByBackward(da.Function):
    """backward only; exp(x), keeping its output as an attribute of ctx (ctx.y = y)."""

    @staticmethod
    def forward(ctx, x):
        ctx.y = dnp.exp(x)
        return ctx.y

    @staticmethod
    def backward(ctx, g):
        return ctx.y * g


@pytest.mark.parametrize("Fn", [ExpAttrByJvp, ExpAttrByBackward])
def test_an_output_kept_as_a_ctx_attribute_is_followed_by_every_derivative(Fn):
    # forward-over-reverse reads it with its tangent (it raised, calling the output
    # "neither an input nor an output")
    f = lambda x: dnp.sum(Fn.apply(x))  # noqa: E731
    H_closed = np.diag(np.exp(X0))
    for H_fd in _fd_hessian(f, X0):
        close(H_fd, H_closed, rtol=1e-7, atol=1e-8)
    for _, how in _compositions(f, X0):
        _check(how(), H_closed)


class ExpInPlace(da.Function):
    """jvp only; exp(x) written into x (ctx.mark_dirty), the jvp reading x through a ctx
    attribute: after forward it holds the output."""

    @staticmethod
    def forward(ctx, x):
        x[...] = dnp.exp(x)
        ctx.mark_dirty(x)
        ctx.y = x
        return x

    @staticmethod
    def jvp(ctx, t):
        return t * ctx.y


def test_an_input_modified_in_place_is_read_by_the_jvp_as_the_output():
    f = lambda x: dnp.sum(ExpInPlace.apply(x * 1.0))  # noqa: E731
    H_closed = np.diag(np.exp(X0))
    for H_fd in _fd_hessian(f, X0):
        close(H_fd, H_closed, rtol=1e-7, atol=1e-8)
    for _, how in _compositions(f, X0):
        _check(how(), H_closed)


class SinTimesW(da.Function):
    """jvp only, two inputs: sum(sin(x) * w), its jvp reading both (save_for_forward)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_forward(x, w)
        return dnp.sum(dnp.sin(x) * w)

    @staticmethod
    def jvp(ctx, tx, tw):
        x, w = ctx.saved_tensors
        return dnp.sum(dnp.cos(x) * w * tx + dnp.sin(x) * tw)


def test_a_two_input_jvp_gives_every_hessian_block():
    x0, w0 = np.array([0.3, 1.2]), np.array([-0.5, 2.0])
    # d2/dx2 = -diag(sin x * w), d2/dxdw = diag(cos x), d2/dw2 = 0
    closed = np.block([[-np.diag(np.sin(x0) * w0), np.diag(np.cos(x0))],
                       [np.diag(np.cos(x0)), np.zeros((2, 2))]])

    def flat(H):
        return np.block([[A(H[i][j]) for j in range(2)] for i in range(2)])

    xs = lambda: (da.tensor(x0), da.tensor(w0))  # noqa: E731
    for kw in [{}, {"vectorize": True}, {"create_graph": True},
               {"outer_jacobian_strategy": "forward-mode"},
               {"outer_jacobian_strategy": "forward-mode", "vectorize": True}]:
        close(flat(F.hessian(SinTimesW.apply, xs(), **kw)), closed)
    for outer, inner in [(F.jacrev, F.jacrev), (F.jacfwd, F.jacrev), (F.jacrev, F.jacfwd),
                         (F.jacfwd, F.jacfwd)]:
        close(flat(outer(inner(SinTimesW.apply, argnums=(0, 1)), argnums=(0, 1))(*xs())),
              closed)


class CSquare(da.Function):
    """jvp only, holomorphic: z ** 2, its jvp reading z through a ctx attribute."""

    @staticmethod
    def forward(ctx, z):
        ctx.z = z
        return z * z

    @staticmethod
    def jvp(ctx, t):
        return 2 * ctx.z * t


def test_a_complex_jvp_gives_the_second_derivatives_of_the_same_program_in_dualad_ops():
    z0 = np.array([0.3 + 0.4j, -1.0 + 0.2j])
    v = da.tensor(np.array([1 + 1j, 2 - 1j]))

    def loss(sq):
        return lambda z: dnp.sum(dnp.real(sq(z) * dnp.conj(sq(z))) + dnp.real(sq(z)))

    f, ref = loss(CSquare.apply), loss(lambda z: z * z)
    for outer, inner in [(F.jacrev, F.jacrev), (F.jacfwd, F.jacrev), (F.jacrev, F.jacfwd),
                         (F.jacfwd, F.jacfwd)]:
        close(outer(inner(f))(da.tensor(z0)), outer(inner(ref))(da.tensor(z0)))
    close(F.hvp(f, da.tensor(z0), v)[1], F.hvp(ref, da.tensor(z0), v)[1])


class SumSinEachItsOwn(da.Function):
    """jvp and backward, each keeping an intermediate the other does not read: the jvp
    reads its input (saved for forward) and ctx.c is cos(x), for backward only; the
    backward reads its input (saved) and ctx.s is sin(x), for nothing at all."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        ctx.c, ctx.s = dnp.cos(x), dnp.sin(x)
        return dnp.sum(ctx.s)

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return dnp.sum(dnp.cos(x) * t)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * dnp.cos(x)


def test_an_intermediate_attribute_a_rule_does_not_read_is_not_refused():
    # forward-over-forward (the jvp) and forward-over-reverse (the backward) refused it,
    # saying the rule read ctx.c (or ctx.s), which it did not
    H_closed = -np.diag(np.sin(X0))
    for H_fd in _fd_hessian(SumSinEachItsOwn.apply, X0):
        close(H_fd, H_closed, rtol=1e-7, atol=1e-8)
    for _, how in _compositions(SumSinEachItsOwn.apply, X0):
        _check(how(), H_closed)


def test_an_intermediate_attribute_a_rule_reads_raises_when_read():
    class ReadsC(SumSinEachItsOwn):
        @staticmethod
        def jvp(ctx, t):
            ctx.s = None  # set anew: allowed
            return dnp.sum(ctx.c * t)

    with pytest.raises(RuntimeError, match=r"ReadsC.jvp reads ctx.c, which is neither.*"
                                           "forward-over-forward"):
        F.jacfwd(F.jacfwd(ReadsC.apply))(da.tensor(X0))
