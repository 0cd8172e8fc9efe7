"""torch.autograd.functional's six functions: vjp, jvp, jacobian, hessian, hvp, vhp.

Signatures, defaults, input forms, output nesting, ``strict`` errors and
``create_graph`` semantics follow torch.autograd.functional. Where torch says
"not supported (yet)" (forward-mode with ``create_graph`` or ``strict``, or
without ``vectorize``) dualad computes the answer instead; ``strict`` with
``vectorize`` is an error, as in torch. Differences in *how*:

* ``jvp`` is true forward mode (dual numbers), not the double-backward trick;
* ``hvp`` is forward-over-reverse: one forward pass with a dual input and one
  backward pass whose cotangents carry the tangent ``H v``;
* ``vectorize=True`` computes a chunk of rows (reverse) or columns (forward)
  in one batched pass, never one pass per basis vector; ``chunk_size=``
  bounds the memory of that pass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dualad import forward_ad as fwAD
from dualad import reverse
from dualad.core.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from dualad.grad_mode import untracked_tangents
from dualad.reverse.engine import NO_TANGENT, grad_tangents
from dualad.rules.vocabulary import reshape as _reshape  # (not a user's view: no bookkeeping)

from ._common import (
    SMALL,
    Tensor,
    as_tuple,
    batched_level_live,
    check_chunk_size,
    check_fits,
    grad_postprocess,
    grad_preprocess,
    numel,
    ones_like,
    primal_of,
    retire,
    tangent_or_none,
    untuple,
    validate_v,
    zeros_like,
)
from ._jacobian import (
    check_outputs_differentiable,
    err_constant_jacobian,
    err_independent,
    err_linear_gradient,
    err_not_differentiable,
    forward_blocks,
    reverse_blocks,
)

TensorOrTuple = Any  # a Tensor / ndarray, or a tuple of them

_OUT = "outputs of the user-provided function"
_STRATEGIES = ("forward-mode", "reverse-mode")


def _single_scalar_output(out: Any, fn_name: str) -> Tensor:
    is_tuple, outs = as_tuple(out, _OUT, fn_name, allow_arrays=False)
    if is_tuple:
        raise RuntimeError(
            f"The function given to {fn_name} must return a single Tensor, not a tuple."
        )
    if numel(outs[0]) != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} must have exactly one "
            f"element, but it has shape {tuple(outs[0].shape)}."
        )
    return outs[0]


def _root(out: Tensor) -> Tensor:
    """A one-element output as the 0-d root of a backward pass."""
    return out if out.ndim == 0 else _reshape(out, ())


# ---------------------------------------------------------------------------
# vjp / jvp
# ---------------------------------------------------------------------------


def _directions(v: Any, ref: Any, ref_tuple: bool, fn: str, create_graph: bool,
                what: str) -> tuple[Any, ...]:
    """The vectors ``v`` checked against ``ref`` (outputs or inputs), or ones for one scalar."""
    if v is not None:
        _, vs = as_tuple(v, "v", fn)
        vs = grad_preprocess(vs, create_graph=create_graph, need_graph=False)
        validate_v(vs, ref, ref_tuple)
        return vs
    if len(ref) != 1 or numel(ref[0]) != 1:
        raise RuntimeError(
            f"v may be None only if {what} is a single Tensor with a single element."
        )
    return (ones_like(ref[0]),)


def vjp(
    func: Callable[..., Any],
    inputs: TensorOrTuple,
    v: TensorOrTuple | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """Vector-Jacobian product ``v^T J`` of ``func`` at ``inputs`` (reverse mode).

    Parameters
    ----------
    func : callable
        Takes Tensors (as many as ``inputs``) and returns a Tensor or a tuple of Tensors.
    inputs : Tensor, ndarray, or tuple of them
        The point at which ``func`` is differentiated.
    v : Tensor, ndarray, or tuple of them, optional
        Cotangent, shaped like the output(s) of ``func``. May be omitted only
        when ``func`` returns a single Tensor with one element (``v = 1``).
    create_graph : bool, default False
        Record the computation so that both results can be differentiated again.
    strict : bool, default False
        Raise ``RuntimeError`` if an output is not differentiable or if all the
        outputs are independent of some input, instead of returning zeros.

    Returns
    -------
    (func_output, vjp)
        ``vjp`` has the nesting and shapes of ``inputs``. For complex inputs it
        is the conjugate-Wirtinger vector-Jacobian product (``Re<v, J u> ==
        Re<vjp, u>`` for every ``u``).

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> out, g = F.vjp(lambda x: (x ** 2).sum(axis=1), np.ones((2, 3)), np.array([1.0, 2.0]))
    >>> g
    tensor([[2., 2., 2.],
            [4., 4., 4.]])
    """
    own: list[Tensor] = []
    with enable_grad():
        in_tuple, xs = as_tuple(inputs, "inputs", "vjp")
        xs = grad_preprocess(xs, create_graph=create_graph, need_graph=True, own=own)
        out_tuple, outs = as_tuple(func(*xs), _OUT, "vjp", allow_arrays=False)
        if strict:
            check_outputs_differentiable(outs)
        vs = _directions(v, outs, out_tuple, "vjp", create_graph,
                         "the output of the user-provided function")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        sel = [(o, c) for o, c in zip(outs, vs, strict=True) if o.requires_grad]
        if sel:
            g = reverse.grad(
                [o for o, _ in sel], list(xs), [c for _, c in sel],
                create_graph=create_graph, allow_unused=True,
            )
        else:
            g = (None,) * len(xs)
        res = []
        for j, gj in enumerate(g):
            if gj is None:
                if strict:
                    raise RuntimeError(
                        "All the outputs of the user-provided function are independent of "
                        f"input {j}. strict=True does not allow this (strict=False gives zeros)."
                    )
                gj = zeros_like(xs[j])
            elif strict and create_graph and not gj.requires_grad:
                raise err_constant_jacobian(0, j, "vector-Jacobian product")
            res.append(gj)
    retire(own)
    outs_r = grad_postprocess(tuple(outs), create_graph)
    res_r = grad_postprocess(tuple(res), create_graph)
    return untuple(outs_r, out_tuple), untuple(res_r, in_tuple)


def jvp(
    func: Callable[..., Any],
    inputs: TensorOrTuple,
    v: TensorOrTuple | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """Jacobian-vector product ``J v`` of ``func`` at ``inputs``, by forward mode.

    One forward pass on dual numbers (``make_dual(x, v)``): no backward pass
    and no double-backward trick.

    Parameters
    ----------
    func : callable
        Takes Tensors (as many as ``inputs``) and returns a Tensor or a tuple of Tensors.
    inputs : Tensor, ndarray, or tuple of them
        The point at which ``func`` is differentiated.
    v : Tensor, ndarray, or tuple of them, optional
        Tangent, shaped like ``inputs``. May be omitted only when ``inputs`` is a
        single Tensor with one element (``v = 1``).
    create_graph : bool, default False
        Record the computation (the tangent ops are ordinary ops) so that both
        results can be differentiated again by reverse mode w.r.t. the inputs.
    strict : bool, default False
        Raise ``RuntimeError`` if some output does not depend on the inputs
        (its tangent is structurally zero) instead of returning zeros.

    Returns
    -------
    (func_output, jvp)
        ``jvp`` has the nesting and shapes of the outputs. For complex inputs it
        is the R-linear differential applied to ``v``.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> out, t = F.jvp(lambda x: x ** 3, np.array([1.0, 2.0]), np.array([1.0, 0.5]))
    >>> t
    tensor([3., 6.])
    """
    own: list[Tensor] = []
    ctx = enable_grad() if create_graph else _Null()
    with ctx:
        in_tuple, xs = as_tuple(inputs, "inputs", "jvp")
        xs = grad_preprocess(xs, create_graph=create_graph, need_graph=create_graph, own=own)
        vs = _directions(v, xs, in_tuple, "jvp", create_graph,
                         "the input to the user-provided function")
        with fwAD.dual_level():
            duals = [fwAD.make_dual(x, t) for x, t in zip(xs, vs, strict=True)]
            out_tuple, outs = as_tuple(func(*duals), _OUT, "jvp", allow_arrays=False)
            tans = [tangent_or_none(o) for o in outs]
            prims = [primal_of(o) for o in outs]
        res = []
        for i, (p, t) in enumerate(zip(prims, tans, strict=True)):
            if t is None:
                if strict:
                    raise RuntimeError(
                        f"Output {i} of the user-provided function does not depend on the inputs "
                        "(its tangent is zero by construction). strict=True does not allow this."
                    )
                t = zeros_like(p)
            elif strict and create_graph and not t.requires_grad:
                raise err_constant_jacobian(i, 0, "Jacobian-vector product")
            res.append(t)
    retire(own)
    outs_r = grad_postprocess(tuple(prims), create_graph)
    res_r = grad_postprocess(tuple(res), create_graph)
    return untuple(outs_r, out_tuple), untuple(res_r, out_tuple)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


# ---------------------------------------------------------------------------
# jacobian / hessian
# ---------------------------------------------------------------------------


def _strict_vectorize(fn: str, strict: bool, vectorize: bool) -> None:
    if strict and vectorize:  # (as torch: strict's checks are per output and input)
        raise RuntimeError(
            f"dualad.functional.{fn}: `strict=True` and `vectorize=True` are not supported "
            "together. Please either set `strict=False` or `vectorize=False`."
        )


def jacobian(
    func: Callable[..., Any],
    inputs: TensorOrTuple,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
    *,
    chunk_size: int | None = None,
) -> Any:
    """Jacobian of ``func`` at ``inputs``.

    Parameters
    ----------
    func : callable
        Takes Tensors (as many as ``inputs``) and returns a Tensor or a tuple of Tensors.
    inputs : Tensor, ndarray, or tuple of them
        The point at which ``func`` is differentiated.
    create_graph : bool, default False
        Record the computation so that the Jacobian can be differentiated again
        (with either strategy).
    strict : bool, default False
        Raise ``RuntimeError`` if an output is not differentiable or does not
        depend on some input, instead of returning zeros. Not with ``vectorize``.
    vectorize : bool, default False
        Compute all rows (``"reverse-mode"``: one backward pass with batched
        cotangents) or all columns (``"forward-mode"``: one forward pass with
        batched tangents) at once, instead of one pass per row / column.
    strategy : {"reverse-mode", "forward-mode"}, default "reverse-mode"
        Reverse mode costs one pass per output element, forward mode one per
        input element: prefer forward mode when there are more outputs than inputs.
    chunk_size : int, optional (keyword-only; dualad extension)
        With ``vectorize=True``, push at most this many basis vectors per pass
        to bound memory. ``None`` pushes all at once.

    Returns
    -------
    Tensor or nested tuple of Tensors
        ``J`` of shape ``output.shape + input.shape`` for one input and one
        output; a tuple over whichever of them is a tuple; ``J[i][j]`` for
        output ``i`` and input ``j`` when both are. Under the complex convention
        a forward-mode column is the differential in the direction of a real unit
        vector, and a reverse-mode row is the conjugate-Wirtinger gradient of the
        real part of an output element.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> F.jacobian(lambda x: x ** 2, np.array([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    >>> F.jacobian(lambda x, y: x * y, (np.array([1.0, 2.0]), np.array([3.0, 4.0])),
    ...            vectorize=True, strategy="forward-mode")[1]
    tensor([[1., 0.],
            [0., 2.]])
    """
    if strategy not in _STRATEGIES:
        raise ValueError(
            f'strategy must be "forward-mode" or "reverse-mode", got {strategy!r}. Forward mode is '
            "cheaper when the function has more outputs than inputs, reverse mode otherwise."
        )
    check_chunk_size(chunk_size)
    _strict_vectorize("jacobian", strict, vectorize)
    in_tuple, xs0 = as_tuple(inputs, "inputs", "jacobian")
    own: list[Tensor] = []
    opts = {"vectorize": vectorize, "chunk_size": chunk_size, "create_graph": create_graph,
            "strict": strict}
    by = _jacobian_columns if strategy == "forward-mode" else _jacobian_rows
    out_tuple, J = by(func, xs0, own, **opts)
    retire(own)
    Jt = grad_postprocess(tuple(tuple(r) for r in J), create_graph)
    return untuple(Jt, (out_tuple, in_tuple))


def hessian(
    func: Callable[..., Any],
    inputs: TensorOrTuple,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
    *,
    chunk_size: int | None = None,
) -> Any:
    """Hessian of a scalar function ``func`` at ``inputs``.

    The inner Jacobian (the gradient) is always reverse mode. The outer one is
    ``outer_jacobian_strategy``: ``"reverse-mode"`` differentiates the
    recorded gradient again (reverse-over-reverse), ``"forward-mode"`` runs the
    whole gradient computation on dual inputs (forward-over-reverse). Both give
    the same matrix; when only its values are wanted (``vectorize=True``, no
    ``create_graph``, ``strict`` or ``chunk_size``, real inputs) the cheaper
    forward-over-reverse pass computes it whichever strategy is named.

    Parameters
    ----------
    func : callable
        Takes Tensors (as many as ``inputs``) and returns a Tensor with one element.
    inputs : Tensor, ndarray, or tuple of them
        The point at which ``func`` is differentiated.
    create_graph : bool, default False
        Record the computation so that the Hessian can be differentiated again.
    strict : bool, default False
        Raise ``RuntimeError`` if the output is not differentiable, does not
        depend on some input, or has a Hessian block that is structurally zero.
        Not with ``vectorize``.
    vectorize : bool, default False
        Compute all rows (reverse outer) or columns (forward outer) of the
        Hessian in one batched pass instead of one pass per row / column.
    outer_jacobian_strategy : {"reverse-mode", "forward-mode"}, default "reverse-mode"
        How the outer Jacobian is computed.
    chunk_size : int, optional (keyword-only; dualad extension)
        With ``vectorize=True``, at most this many basis vectors per pass.

    Returns
    -------
    Tensor or tuple of tuples of Tensors
        For one input, ``H`` of shape ``input.shape + input.shape``; for a tuple
        of inputs, ``H[i][j]`` of shape ``inputs[i].shape + inputs[j].shape``.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> F.hessian(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]), vectorize=True)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    if outer_jacobian_strategy not in _STRATEGIES:
        raise ValueError(
            f'outer_jacobian_strategy must be "forward-mode" or "reverse-mode", got '
            f"{outer_jacobian_strategy!r}."
        )
    check_chunk_size(chunk_size)
    _strict_vectorize("hessian", strict, vectorize)
    in_tuple, xs0 = as_tuple(inputs, "inputs", "hessian")
    n_in = len(xs0)
    _check_hessian_fits(xs0)
    own: list[Tensor] = []
    H = _hessian_blocks(func, xs0, own, outer_jacobian_strategy, vectorize=vectorize,
                        chunk_size=chunk_size, create_graph=create_graph, strict=strict)
    retire(own)
    Ht = grad_postprocess(tuple(tuple(r) for r in H[:n_in]), create_graph)
    return untuple(Ht, (in_tuple, in_tuple))


def _jacobian_columns(func: Callable[..., Any], xs0: tuple[Any, ...], own: list[Tensor], *,
                      vectorize: bool, chunk_size: int | None, create_graph: bool,
                      strict: bool) -> tuple[bool, Any]:
    """``jacobian``'s forward mode: (whether ``func`` returned a tuple, the blocks by
    columns). ``own``: the inputs' copies made here, retired by the caller."""
    info: dict[str, bool] = {}

    def flat(*a: Tensor) -> tuple[Tensor, ...]:
        t, outs = as_tuple(func(*a), _OUT, "jacobian", allow_arrays=False)
        info["tuple"] = t
        return outs

    ctx = enable_grad() if create_graph else _Null()
    with ctx:
        xs = grad_preprocess(xs0, create_graph=create_graph, need_graph=create_graph, own=own)
        _, J = forward_blocks(
            flat, xs, vectorize=vectorize, chunk_size=chunk_size,
            create_graph=create_graph, strict=strict,
        )
    return info.get("tuple", False), J


def _jacobian_rows(func: Callable[..., Any], xs0: tuple[Any, ...], own: list[Tensor], *,
                   vectorize: bool, chunk_size: int | None, create_graph: bool,
                   strict: bool) -> tuple[bool, Any]:
    """``jacobian``'s reverse mode: (whether ``func`` returned a tuple, the blocks by
    rows). ``own``: as for ``_jacobian_columns``."""
    with enable_grad():
        xs = grad_preprocess(xs0, create_graph=create_graph, need_graph=True, own=own)
        out_tuple, outs = as_tuple(func(*xs), _OUT, "jacobian", allow_arrays=False)
        if strict:
            check_outputs_differentiable(outs)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        J = reverse_blocks(
            outs, xs, vectorize=vectorize, chunk_size=chunk_size,
            create_graph=create_graph, strict=strict,
        )
    return out_tuple, J


def _check_hessian_fits(xs0: tuple[Any, ...]) -> None:
    """Raise, pointing to ``hvp``, for a Hessian of inputs ``xs0`` too large to form."""
    n = sum(x.size for x in xs0)
    if n * n >= SMALL:
        check_fits(n * n, xs0, f"The Hessian ({n} x {n})",
                   "For its products with vectors use dualad.functional.hvp(func, inputs, v) "
                   "(or vhp), one forward-over-reverse pass each, which never forms it.")


def _hessian_blocks(func: Callable[..., Any], xs0: tuple[Any, ...], own: list[Tensor],
                    strategy: str, **opts: Any) -> list[list[Tensor]]:
    """The Hessian's blocks, by the outer Jacobian ``strategy`` (``opts``: ``hessian``'s
    ``vectorize``, ``chunk_size``, ``create_graph``, ``strict``)."""
    if strategy == "forward-mode":
        return _hessian_columns(func, xs0, own, **opts)
    if _columns_give_the_rows(xs0, opts["create_graph"], opts["strict"], opts["vectorize"],
                              opts["chunk_size"]):
        # The outer Jacobian is the same matrix by rows or by columns; by columns it is
        # one batched forward-over-reverse pass instead of recording the gradient's
        # graph and then running a batched backward pass over it (about 25% faster).
        try:
            return _hessian_columns(func, xs0, own, **opts)
        except (RuntimeError, NotImplementedError):
            # A custom Function whose rule cannot run in forward mode (a backward that
            # cannot be transposed, a jvp that cannot take batched tangents, an
            # intermediate whose derivative is unknown): the rows (func runs again).
            pass
    return _hessian_rows(func, xs0, own, **opts)


def _hessian_scalar(func: Callable[..., Any], a: tuple[Tensor, ...], strict: bool) -> Tensor:
    """``func(*a)``, ``hessian``'s one-element output (``strict``: it must require grad)."""
    out = _single_scalar_output(func(*a), "hessian")
    if strict and not out.requires_grad:
        raise err_not_differentiable(0)
    return out


def _inner_grad(out: Tensor, xs: tuple[Tensor, ...], keep: bool,
                strict: bool) -> list[Tensor | None]:
    """``hessian``'s inner Jacobian: the gradient of ``out`` at ``xs`` (recorded with
    ``keep``), None for an input it does not depend on (``strict``: raise then)."""
    if not out.requires_grad:  # independent of every input: a zero Hessian, as in torch
        g: list[Tensor | None] = [None] * len(xs)
    else:
        g = list(reverse.grad(_root(out), list(xs), create_graph=keep, allow_unused=True))
    if strict:
        for j, gj in enumerate(g):
            if gj is None:
                raise err_independent(0, j)
    return g


def _hessian_rows(func: Callable[..., Any], xs0: tuple[Any, ...], own: list[Tensor], *,
                  vectorize: bool, chunk_size: int | None, create_graph: bool,
                  strict: bool) -> list[list[Tensor]]:
    """The Hessian's blocks by rows: reverse-over-reverse, the recorded gradient
    differentiated again. ``own``: the inputs' copies made here, retired by the caller."""
    with enable_grad():
        xs = grad_preprocess(xs0, create_graph=create_graph, need_graph=True, own=own)
        out = _hessian_scalar(func, xs, strict)
        g = _inner_grad(out, xs, True, strict)
        if strict:
            for j, gj in enumerate(g):
                if gj is not None and not gj.requires_grad:
                    raise err_linear_gradient(j)
        gs = [gj if gj is not None else zeros_like(xs[j]) for j, gj in enumerate(g)]
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        return reverse_blocks(
            gs, xs, vectorize=vectorize, chunk_size=chunk_size,
            create_graph=create_graph, strict=strict, what="Hessian",
        )


def _hessian_columns(func: Callable[..., Any], xs0: tuple[Any, ...], own: list[Tensor], *,
                     vectorize: bool, chunk_size: int | None, create_graph: bool,
                     strict: bool) -> list[list[Tensor]]:
    """The Hessian's blocks by columns: forward-over-reverse, the gradient computed on
    dual inputs. ``own``: as for ``_hessian_rows``."""

    def grad_fn(*a: Tensor) -> tuple[Tensor, ...]:
        out = _hessian_scalar(func, a, strict)
        g = _inner_grad(out, a, create_graph, strict)
        # zeros carry no tangent: the corresponding Hessian rows are zero
        return tuple(gj if gj is not None else zeros_like(a[j]) for j, gj in enumerate(g))

    # without create_graph, nothing differentiates the tangents by reverse mode
    with enable_grad(), _Null() if create_graph else untracked_tangents():
        xs = grad_preprocess(xs0, create_graph=create_graph, need_graph=True, own=own)
        return forward_blocks(
            grad_fn, xs, vectorize=vectorize, chunk_size=chunk_size,
            create_graph=create_graph, strict=strict, what="Hessian",
        )[1]


def _columns_give_the_rows(
    inputs: tuple[Tensor, ...], create_graph: bool, strict: bool, vectorize: bool,
    chunk_size: int | None,
) -> bool:
    """Whether a reverse-mode outer Jacobian may be computed by forward mode instead.

    Only where nothing but the values can tell: no graph to build, no strict
    checks (their errors are phrased per strategy), one batched pass either way
    (with chunks, forward mode would rerun ``func`` per chunk; while a batched
    level is live both fall back to loops), and real inputs (for complex ones a
    reverse row is a conjugate-Wirtinger gradient and a forward column a
    differential, so the general argument that both give one matrix does not apply).
    """
    return (
        vectorize and chunk_size is None and not create_graph and not strict
        and not batched_level_live() and all(x.dtype.kind == "f" for x in inputs)
    )


# ---------------------------------------------------------------------------
# hvp / vhp
# ---------------------------------------------------------------------------


def _tangent_or_no(g: Tensor) -> Any:
    t = tangent_or_none(g)
    return NO_TANGENT if t is None else t


def _hvp_impl(
    fn_name: str,
    func: Callable[..., Any],
    inputs: TensorOrTuple,
    v: TensorOrTuple | None,
    create_graph: bool,
    strict: bool,
) -> tuple[Any, Any]:
    """Forward-over-reverse: ``grad`` of ``func`` on dual inputs ``(x, v)`` has tangent ``H v``."""
    own: list[Tensor] = []
    with enable_grad():
        in_tuple, xs = as_tuple(inputs, "inputs", fn_name)
        xs = grad_preprocess(xs, create_graph=create_graph, need_graph=True, own=own)
        vs = _directions(v, xs, in_tuple, fn_name, create_graph,
                         "the input to the user-provided function")
        with fwAD.dual_level() as level:
            duals = tuple(fwAD.make_dual(x, t) for x, t in zip(xs, vs, strict=True))
            with _Null() if create_graph else untracked_tangents():
                out = _single_scalar_output(func(*duals), fn_name)
            if strict and not out.requires_grad:
                raise err_not_differentiable(0)
            # per input: None (independent), NO_TANGENT (a linear gradient), or H v
            if not out.requires_grad:  # independent of every input: H v is zero
                ts = [None] * len(duals)
            elif create_graph:
                g = reverse.grad(_root(out), list(duals), create_graph=True, allow_unused=True)
                ts = [None if gj is None else _tangent_or_no(gj) for gj in g]
            else:  # only the gradient's tangent is read: its primal is left uncomputed
                ts = grad_tangents(_root(out), duals, level)
            res = []
            for j, t in enumerate(ts):
                if strict:
                    if t is None:
                        raise err_independent(0, j)
                    if t is NO_TANGENT:
                        raise err_linear_gradient(j)
                    if create_graph and not t.requires_grad:
                        raise err_constant_jacobian(0, j, "Hessian-vector product")
                res.append(zeros_like(xs[j]) if t is None or t is NO_TANGENT else t)
            out_p = primal_of(out)
    retire(own)
    out_r = grad_postprocess(out_p, create_graph)
    res_r = grad_postprocess(tuple(res), create_graph)
    return out_r, untuple(res_r, in_tuple)


def hvp(
    func: Callable[..., Any],
    inputs: TensorOrTuple,
    v: TensorOrTuple | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """Hessian-vector product ``H v`` of a scalar function, forward-over-reverse.

    ``func`` runs once on dual inputs ``make_dual(x, v)``; its gradient
    (one backward pass) comes back dual and its tangent is ``H v``. Cost: about
    three times one evaluation of ``func``, with no double backward.

    Parameters
    ----------
    func : callable
        Takes Tensors (as many as ``inputs``) and returns a Tensor with one element.
    inputs : Tensor, ndarray, or tuple of them
        The point at which ``func`` is differentiated.
    v : Tensor, ndarray, or tuple of them, optional
        Shaped like ``inputs``; may be omitted only for a single one-element input.
    create_graph : bool, default False
        Record the computation so that both results can be differentiated again.
    strict : bool, default False
        Raise ``RuntimeError`` when the output is not differentiable, does not
        depend on an input, or its gradient w.r.t. an input is constant.

    Returns
    -------
    (func_output, hvp)
        ``hvp`` has the nesting and shapes of ``inputs``.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> F.hvp(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]), np.array([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    return _hvp_impl("hvp", func, inputs, v, create_graph, strict)


def vhp(
    func: Callable[..., Any],
    inputs: TensorOrTuple,
    v: TensorOrTuple | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """Vector-Hessian product ``v^T H`` of a scalar function.

    The Hessian of a twice continuously differentiable real function is
    symmetric (self-adjoint for the real inner product, also for complex
    inputs), so ``v^T H == H v``; dualad computes it the cheaper way,
    forward-over-reverse (one forward and one backward pass), rather than
    reverse-over-reverse (a backward pass that records itself, then a second one).

    Parameters
    ----------
    func : callable
        Takes Tensors (as many as ``inputs``) and returns a Tensor with one element.
    inputs : Tensor, ndarray, or tuple of them
        The point at which ``func`` is differentiated.
    v : Tensor, ndarray, or tuple of them, optional
        Shaped like ``inputs``; may be omitted only for a single one-element input.
    create_graph : bool, default False
        Record the computation so that both results can be differentiated again.
    strict : bool, default False
        As for :func:`hvp`.

    Returns
    -------
    (func_output, vhp)
        ``vhp`` has the nesting and shapes of ``inputs``.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> F.vhp(lambda x: (x[0] * x[1]) ** 2, np.array([1.0, 2.0]), np.array([1.0, 0.0]))[1]
    tensor([8., 8.])
    """
    return _hvp_impl("vhp", func, inputs, v, create_graph, strict)
