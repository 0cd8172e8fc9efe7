"""JAX-style function transforms: grad, value_and_grad, jacfwd, jacrev, linearize, linear_transpose.

They take NumPy arrays, Python scalars or Tensors (and tuples / lists / dicts
of them for the differentiated arguments) and return Tensors. Complex numbers
follow the seeds' (torch's) convention, not JAX's: reverse mode returns the
conjugate-Wirtinger gradient (``dL/dx + 1j dL/dy``), forward mode the R-linear
differential, and transposes are adjoints for ``Re<a, b>``.

The transforms compose (``jacfwd(grad(f))``, ``jacrev(jacrev(f))``,
``grad(grad(f, argnums=1), argnums=0)``), also through closures
(``x * grad(lambda y: x * y)(2.0)`` differentiated in ``x``):

* an input that an enclosing transform is already differentiating (it requires
  grad, or is dual at a live level) is not detached; the inner transform
  differentiates w.r.t. a fresh zero leaf added to it (``plus_zero_leaf``);
* the transform records its own backward pass, and keeps its results' history,
  exactly when the function's output graph reaches a tensor that requires grad
  other than its own leaves — an argument, a closure or a global alike
  (``_common.outer_reverse``); otherwise it takes the fast path (no graph) and
  its results lose only its own reverse history: tangents of an enclosing
  forward transform stay (``_common.finish``);
* its own leaves stop requiring grad when it returns (``_common.retire``), so an
  enclosing transform does not take them for inputs of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dualad import reverse
from dualad.backends import namespace as _B
from dualad.backends.namespace import as_array as _as_array
from dualad.core.grad_mode import enable_grad, is_grad_enabled
from dualad.numpy import creation

from ._common import (
    Tensor,
    TreeDef,
    check_chunk_size,
    finish,
    is_dual,
    is_tensor,
    outer_reverse,
    plus_zero_leaf,
    primal_of,
    retire,
    tree_flatten,
    tree_map,
    tree_unflatten,
)
from ._jacobian import forward_blocks, reverse_blocks

Argnums = int | Sequence[int]


# ---------------------------------------------------------------------------
# argument preparation
# ---------------------------------------------------------------------------


def _to_tensor(x: Any) -> Tensor:
    if is_tensor(x):
        return x
    return creation.as_tensor(_as_array(x))  # (a Dask array stays lazy)


def _check_inexact(t: Tensor, fn_name: str) -> None:
    if not np.issubdtype(np.dtype(t.dtype), np.inexact):
        raise TypeError(
            f"{fn_name} differentiates only floating or complex inputs, but got one of dtype "
            f"{np.dtype(t.dtype)}. Pass it as a float array (e.g. x.astype(float)) or leave it out "
            "of argnums."
        )


def _tracked(x: Any) -> bool:
    """Is an enclosing transform differentiating ``x``?"""
    return is_tensor(x) and (x.requires_grad or is_dual(x))


def _reverse_leaf(x: Any, fn_name: str) -> tuple[Tensor, Tensor]:
    """(value to call func with, leaf of our own to differentiate w.r.t.)."""
    t = _to_tensor(x)
    _check_inexact(t, fn_name)
    if _tracked(t):
        return plus_zero_leaf(t)
    leaf = t.detach()
    leaf.requires_grad_(True)
    return leaf, leaf


def _argnums_tuple(argnums: Argnums, nargs: int, fn_name: str) -> tuple[tuple[int, ...], bool]:
    is_int = isinstance(argnums, (int, np.integer)) and not isinstance(argnums, bool)
    nums = (int(argnums),) if is_int else tuple(int(a) for a in argnums)  # type: ignore[union-attr]
    if not nums:
        raise ValueError(f"{fn_name}: argnums must name at least one positional argument.")
    for a in nums:
        if not -nargs <= a < nargs:
            raise TypeError(
                f"{fn_name}: argnums={argnums!r} refers to positional argument {a}, but the "
                f"function was called with {nargs} positional argument(s)."
            )
    return tuple(a % nargs for a in nums), is_int


class _Args:
    """The differentiated arguments, flattened to leaves, and how to put them back."""

    def __init__(self, args: tuple[Any, ...], argnums: Argnums, fn_name: str) -> None:
        self.args = args
        self.nums, self.is_int = _argnums_tuple(argnums, len(args), fn_name)
        self.trees: list[TreeDef] = []
        self.leaves: list[Any] = []
        self.counts: list[int] = []
        for a in self.nums:
            lv, tree = tree_flatten(args[a])
            self.trees.append(tree)
            self.leaves.extend(lv)
            self.counts.append(len(lv))

    def rebuild(self, new_leaves: Sequence[Any]) -> list[Any]:
        args = list(self.args)
        pos = 0
        for a, tree, c in zip(self.nums, self.trees, self.counts, strict=True):
            args[a] = tree_unflatten(tree, new_leaves[pos:pos + c])
            pos += c
        return args

    def nest(self, per_leaf: Sequence[Any]) -> Any:
        """Per-leaf results -> argnums structure (one tree, or a tuple of trees)."""
        groups = []
        pos = 0
        for tree, c in zip(self.trees, self.counts, strict=True):
            groups.append(tree_unflatten(tree, per_leaf[pos:pos + c]))
            pos += c
        return groups[0] if self.is_int else tuple(groups)


def _split_aux(res: Any, has_aux: bool, fn_name: str) -> tuple[Any, Any]:
    if not has_aux:
        return res, None
    if not isinstance(res, (tuple, list)) or len(res) != 2:
        raise TypeError(
            f"{fn_name}(..., has_aux=True) expects the function to return a pair (output, aux), "
            f"but it returned {type(res).__name__}"
            + (f" of length {len(res)}" if isinstance(res, (tuple, list)) else "")
            + "."
        )
    return res[0], res[1]


def _leaves(*trees: Any) -> list[Any]:
    return [x for t in trees for x in tree_flatten(t)[0]]


# ---------------------------------------------------------------------------
# grad / value_and_grad
# ---------------------------------------------------------------------------


def value_and_grad(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """Transform ``func`` into a function returning ``(value, gradient)``.

    Parameters
    ----------
    func : callable
        Returns a real scalar (a 0-d Tensor), or ``(scalar, aux)`` with ``has_aux``.
    argnums : int or sequence of int, default 0
        Which positional arguments to differentiate; each may be an array,
        scalar, Tensor, or a tuple / list / dict of them.
    has_aux : bool, default False
        ``func`` returns ``(output, aux)``; ``aux`` is passed through.

    Returns
    -------
    callable
        ``(*args, **kwargs) -> (value, grad)``, or ``((value, aux), grad)`` with
        ``has_aux``. ``grad`` has the structure of the differentiated argument
        (a tuple of them when ``argnums`` is a sequence); for complex inputs it
        is the conjugate-Wirtinger gradient ``dL/dx + 1j dL/dy``.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> F.value_and_grad(lambda x: (x ** 2).sum())(np.array([1.0, 2.0]))
    (tensor(5.), tensor([2., 4.]))
    """

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        enabled = is_grad_enabled()
        spec = _Args(args, argnums, "grad")
        prepped = [_reverse_leaf(x, "grad") for x in spec.leaves]
        targets = [p[1] for p in prepped]
        with enable_grad():
            res = func(*spec.rebuild([p[0] for p in prepped]), **kwargs)
            out, aux = _split_aux(res, has_aux, "grad")
            if not has_aux and isinstance(out, (tuple, list)):
                raise TypeError(
                    f"grad differentiates a function returning one scalar, but it returned a "
                    f"{type(out).__name__} of length {len(out)}. If it returns (output, aux), "
                    "pass has_aux=True (grad(f, has_aux=True), value_and_grad(f, "
                    "has_aux=True)); for several outputs use jacrev or vjp.")
            out_t = _to_tensor(out)
            if tuple(out_t.shape) != ():
                raise TypeError(
                    "grad differentiates only scalar-output functions (0-d), but the output "
                    f"has shape {tuple(out_t.shape)}. Reduce it (e.g. .sum()) or use jacrev / vjp."
                )
            if not np.issubdtype(np.dtype(out_t.dtype), np.floating):
                raise TypeError(
                    "grad needs a real floating output, but the output has dtype "
                    f"{np.dtype(out_t.dtype)}. For a complex output differentiate its real part "
                    "(or abs()**2), or use vjp."
                )
            keep = outer_reverse(_leaves(out_t, aux), targets, enabled)
            if out_t.requires_grad:
                g = reverse.grad(out_t, targets, create_graph=keep, allow_unused=True)
            else:
                g = (None,) * len(targets)
        retire(targets)
        gs = [
            finish(gj, keep) if gj is not None else creation.zeros_like(t.detach())
            for gj, t in zip(g, targets, strict=True)
        ]
        value = finish(out_t, keep)
        if has_aux:
            aux = tree_map(lambda a: finish(a, keep), aux)
            return (value, aux), spec.nest(gs)
        return value, spec.nest(gs)

    wrapped.__name__ = f"value_and_grad({getattr(func, '__name__', 'func')})"
    wrapped.__doc__ = func.__doc__
    return wrapped


def grad(
    func: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """Transform a real scalar function into its gradient function (reverse mode).

    Parameters
    ----------
    func : callable
        Returns a real scalar (a 0-d Tensor), or ``(scalar, aux)`` with ``has_aux``.
    argnums : int or sequence of int, default 0
        Which positional arguments to differentiate.
    has_aux : bool, default False
        ``func`` returns ``(output, aux)``; the transformed function returns ``(grad, aux)``.

    Returns
    -------
    callable
        ``(*args, **kwargs) -> grad`` (or ``(grad, aux)``). Transforms compose:
        ``grad(grad(f))`` is a second derivative, ``jacfwd(grad(f))`` a Hessian.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> dot = F.grad(lambda x, y: (x * y).sum(), argnums=(0, 1))
    >>> dot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    (tensor([3., 4.]), tensor([1., 2.]))
    """
    vg = value_and_grad(func, argnums, has_aux)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    wrapped.__name__ = f"grad({getattr(func, '__name__', 'func')})"
    wrapped.__doc__ = func.__doc__
    return wrapped


# ---------------------------------------------------------------------------
# jacfwd / jacrev
# ---------------------------------------------------------------------------


def _nest_jacobian(spec: _Args, out_tree: TreeDef, J: list[list[Tensor]]) -> Any:
    return tree_unflatten(out_tree, [spec.nest(row) for row in J])


def jacrev(
    func: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """Jacobian by reverse mode: rows ``e_k^T J`` in one batched backward pass.

    ``func`` runs once; the rows are pushed back as a batch of cotangents
    (``grad(..., is_grads_batched=True)``), in pieces of ``chunk_size`` rows if
    given (bounded memory, still one forward pass).

    Parameters
    ----------
    func : callable
        Returns a Tensor or a tuple / list / dict of Tensors (or ``(output, aux)``).
    argnums : int or sequence of int, default 0
        Which positional arguments to differentiate.
    has_aux : bool, default False
        ``func`` returns ``(output, aux)``; the transformed function returns ``(jac, aux)``.
    chunk_size : int, optional
        Rows per backward pass; ``None`` pushes all rows at once.

    Returns
    -------
    callable
        Returns the Jacobian with the structure of the output, each leaf
        holding the structure of the differentiated argument(s); a leaf block has
        shape ``output.shape + input.shape``. For complex inputs a row is the
        conjugate-Wirtinger gradient of the real part of one output element.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> F.jacrev(lambda x: x ** 2)(np.array([1.0, 3.0]))
    tensor([[2., 0.],
            [0., 6.]])
    """
    check_chunk_size(chunk_size)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        enabled = is_grad_enabled()
        spec = _Args(args, argnums, "jacrev")
        prepped = [_reverse_leaf(x, "jacrev") for x in spec.leaves]
        targets = [p[1] for p in prepped]
        with enable_grad():
            res = func(*spec.rebuild([p[0] for p in prepped]), **kwargs)
            out, aux = _split_aux(res, has_aux, "jacrev")
            out_leaves, out_tree = tree_flatten(out)
            outs = [_to_tensor(o) for o in out_leaves]
            keep = outer_reverse(_leaves(outs, aux), targets, enabled)
            J = reverse_blocks(
                outs, targets, vectorize=True, chunk_size=chunk_size,
                create_graph=keep, strict=False,
            )
        retire(targets)
        J = [[finish(b, keep) for b in row] for row in J]
        jac = _nest_jacobian(spec, out_tree, J)
        if has_aux:
            return jac, tree_map(lambda a: finish(a, keep), aux)
        return jac

    wrapped.__name__ = f"jacrev({getattr(func, '__name__', 'func')})"
    wrapped.__doc__ = func.__doc__
    return wrapped


def jacfwd(
    func: Callable[..., Any],
    argnums: Argnums = 0,
    has_aux: bool = False,
    *,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """Jacobian by forward mode: columns ``J e_k`` in one batched forward pass.

    The inputs are made dual with the whole standard basis as a batch of
    tangents (``make_dual(x, basis, batched=True)``), so ``func`` runs once
    (once per ``chunk_size`` columns if given). Inside another batched forward
    pass (``jacfwd(jacfwd(f))``) only one batched level can be live, so the
    inner one falls back to one unbatched pass per column.

    Parameters
    ----------
    func : callable
        Returns a Tensor or a tuple / list / dict of Tensors (or ``(output, aux)``).
    argnums : int or sequence of int, default 0
        Which positional arguments to differentiate.
    has_aux : bool, default False
        ``func`` returns ``(output, aux)``; the transformed function returns ``(jac, aux)``.
    chunk_size : int, optional
        Columns per forward pass; ``None`` pushes all columns at once.

    Returns
    -------
    callable
        As for :func:`jacrev`. For complex inputs a column is the differential
        in the direction of a real unit vector.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> F.jacfwd(lambda x: x[0] * x)(np.array([2.0, 3.0]))
    tensor([[4., 0.],
            [3., 2.]])
    """
    check_chunk_size(chunk_size)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        spec = _Args(args, argnums, "jacfwd")
        xs = []
        for x in spec.leaves:
            t = _to_tensor(x)
            _check_inexact(t, "jacfwd")
            xs.append(t)  # not detached: an enclosing transform keeps seeing through
        enabled = is_grad_enabled()
        info: dict[str, Any] = {}

        def flat(*leaves: Tensor) -> tuple[Tensor, ...]:
            res = func(*spec.rebuild(leaves), **kwargs)
            out, aux = _split_aux(res, has_aux, "jacfwd")
            out_leaves, out_tree = tree_flatten(out)
            if "tree" not in info:
                info["tree"] = out_tree
                info["aux"] = tree_map(lambda a: primal_of(a) if is_tensor(a) else a, aux)
            return tuple(_to_tensor(o) for o in out_leaves)

        _, J = forward_blocks(
            flat, xs, vectorize=True, chunk_size=chunk_size, create_graph=False, strict=False,
        )
        # no leaves of its own: whatever history the columns carry is an enclosing one's
        keep = outer_reverse(_leaves(J, info["aux"]), (), enabled)
        J = [[finish(b, keep) for b in row] for row in J]
        jac = _nest_jacobian(spec, info["tree"], J)
        if has_aux:
            return jac, tree_map(lambda a: finish(a, keep), info["aux"])
        return jac

    wrapped.__name__ = f"jacfwd({getattr(func, '__name__', 'func')})"
    wrapped.__doc__ = func.__doc__
    return wrapped


# ---------------------------------------------------------------------------
# linearize / linear_transpose
# ---------------------------------------------------------------------------


def _check_like(given: Sequence[Tensor], expected: Sequence[Any], what: str, exc: type) -> None:
    for k, (g, e) in enumerate(zip(given, expected, strict=True)):
        if tuple(g.shape) != tuple(e.shape):
            raise exc(
                f"{what} {k} has shape {tuple(g.shape)}, but shape {tuple(e.shape)} was expected."
            )
        gk, ek = np.dtype(g.dtype).kind, np.dtype(e.dtype).kind
        if gk == "c" and ek != "c":
            raise exc(f"{what} {k} is complex ({np.dtype(g.dtype)}), but a real one was expected.")


def linearize(
    func: Callable[..., Any], *primals: Any, has_aux: bool = False
) -> tuple[Any, Callable[..., Any]] | tuple[Any, Callable[..., Any], Any]:
    """Evaluate ``func`` at ``primals`` once and return its linearization there.

    Parameters
    ----------
    func : callable
        Takes ``len(primals)`` positional arguments (arrays, Tensors, or
        tuples / lists / dicts of them) and returns Tensors (any such structure).
    *primals
        The point of linearization.
    has_aux : bool, keyword-only, default False
        ``func`` returns ``(output, aux)``; ``aux`` is returned third.

    Returns
    -------
    (out, jvp_fn) or (out, jvp_fn, aux)
        ``out = func(*primals)``; ``jvp_fn(*tangents)`` returns ``J u`` with the
        structure of ``out``, for tangents structured like ``primals``.

    Notes
    -----
    ``func`` runs exactly once. The reverse graph of that run is kept, and the
    backward pass ``w -> J^* w`` (linear in the cotangent ``w``) is recorded
    once, too. ``jvp_fn(u)`` is then the transpose of that recorded linear map,
    ``(J^*)^* u = J u`` — one backward pass over recorded linear operations per
    call, with no re-evaluation of ``func`` and no non-linear primitive. For
    complex numbers ``J`` is the R-linear differential, as in forward mode.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> out, f_jvp = F.linearize(lambda x: x ** 3, np.array([1.0, 2.0]))
    >>> f_jvp(np.array([1.0, 1.0]))
    tensor([ 3., 12.])
    >>> f_jvp(np.array([0.0, 2.0]))
    tensor([ 0., 24.])
    """
    enabled = is_grad_enabled()
    leaves, in_tree = tree_flatten(primals)
    prepped = [_reverse_leaf(x, "linearize") for x in leaves]
    targets = [p[1] for p in prepped]
    with enable_grad():
        res = func(*tree_unflatten(in_tree, [p[0] for p in prepped]))
        out, aux = _split_aux(res, has_aux, "linearize")
        out_leaves, out_tree = tree_flatten(out)
        outs = [_to_tensor(o) for o in out_leaves]
        keep = outer_reverse(_leaves(outs, aux), targets, enabled)
        diff = [i for i, o in enumerate(outs) if o.requires_grad]
        # Placeholder cotangents: the backward pass is linear in them, so their
        # value (zero) never matters; only the recorded dependence on them does.
        # (zeros_like: on the outputs' device)
        ws = [creation.zeros_like(outs[i].detach(), requires_grad=True) for i in diff]
        if diff:
            gs = reverse.grad([outs[i] for i in diff], targets, ws, create_graph=True, allow_unused=True)
        else:
            gs = (None,) * len(targets)
    retire(targets)
    # Inputs whose J^* w depends on w; the others contribute nothing to J u.
    live = [(j, g) for j, g in enumerate(gs) if g is not None and g.requires_grad]

    jvp_fn = _linearized_jvp(in_tree, out_tree, targets, outs, diff, ws, live)
    primal_out = tree_unflatten(out_tree, [finish(o, keep) for o in outs])
    if has_aux:
        return primal_out, jvp_fn, tree_map(lambda a: finish(a, keep), aux)
    return primal_out, jvp_fn


def _linearized_jvp(in_tree: Any, out_tree: Any, targets: list[Tensor], outs: list[Tensor],
                    diff: list[int], ws: list[Tensor], live: list[tuple[int, Tensor]]
                    ) -> Callable[..., Any]:
    """``linearize``'s ``jvp_fn``: ``J u`` as the transpose of the recorded ``J^* w``, the
    gradients ``live`` (``(input, g)``, each depending on the placeholder cotangents
    ``ws`` of the outputs ``diff``) differentiated with respect to ``ws`` along ``u``."""

    def jvp_fn(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise ValueError(
                "linearize: the tangents must have the structure of the primals "
                f"({in_tree}), but got {t_tree}."
            )
        us = [_to_tensor(u) for u in t_leaves]
        _check_like(us, targets, "Tangent", ValueError)
        # recorded when an enclosing reverse pass reads it: through the function's graph
        # or through the tangents given
        rec = outer_reverse([*outs, *us], targets, is_grad_enabled())
        if live and ws:
            with enable_grad():
                r = reverse.grad(
                    [g for _, g in live], ws, [us[j] for j, _ in live],
                    retain_graph=True, create_graph=rec, allow_unused=True,
                )
        else:
            r = (None,) * len(ws)
        results: list[Tensor] = []
        for i, o in enumerate(outs):
            k = diff.index(i) if i in diff else -1
            ri = r[k] if k >= 0 else None
            results.append(
                finish(ri, rec) if ri is not None else creation.zeros_like(o.detach())
            )
        return tree_unflatten(out_tree, results)

    return jvp_fn


def linear_transpose(
    linear_fn: Callable[..., Any], *primals: Any
) -> Callable[[Any], tuple[Any, ...]]:
    """Transpose (adjoint) of a linear function.

    Parameters
    ----------
    linear_fn : callable
        A function linear in its arguments (constant offsets are ignored, as in JAX).
    *primals
        Arrays / Tensors (or anything with ``.shape`` and ``.dtype``, or
        tuples / lists / dicts of them) giving the shapes and dtypes of the
        arguments; their values are not used.

    Returns
    -------
    callable
        ``transpose_fn(cotangent) -> tuple`` with one entry per primal. The
        cotangent has the structure of ``linear_fn``'s output. The transpose is
        the adjoint for the real inner product ``Re<a, b>`` (for complex
        numbers the conjugate transpose, the seeds' convention): for all ``u``,
        ``Re<c, linear_fn(u)> == Re<transpose_fn(c), u>``.

    Notes
    -----
    ``linear_fn`` runs once, on zeros; each call of ``transpose_fn`` is one
    backward pass over the recorded graph.

    Examples
    --------
    >>> import numpy as np, dualad.functional as F
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> T = F.linear_transpose(lambda x: A @ x, np.zeros(2))
    >>> T(np.array([1.0, 0.0, 0.0]))
    (tensor([1., 2.]),)
    """
    leaves, in_tree = tree_flatten(primals)
    zs = []
    for x in leaves:
        shape = tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)
        dtype = np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype
        if not np.issubdtype(dtype, np.inexact):
            raise TypeError(
                f"linear_transpose: primals must be floating or complex, got dtype {dtype}."
            )
        raw = x._data if isinstance(x, Tensor) else x
        # (on the primal's device)
        zs.append(creation.tensor(_B.zeros(shape, dtype=dtype, like=_B.like(raw)), requires_grad=True))
    with enable_grad():
        out = linear_fn(*tree_unflatten(in_tree, zs))
    out_leaves, out_tree = tree_flatten(out)
    outs = [_to_tensor(o) for o in out_leaves]

    def transpose_fn(cotangent: Any) -> tuple[Any, ...]:
        c_leaves, c_tree = tree_flatten(cotangent)
        if c_tree != out_tree:
            raise TypeError(
                "linear_transpose: the cotangent must have the structure of the function's output "
                f"({out_tree}), but got {c_tree}."
            )
        cs = [_to_tensor(c) for c in c_leaves]
        _check_like(cs, outs, "Cotangent", TypeError)
        sel = [(o, c) for o, c in zip(outs, cs, strict=True) if o.requires_grad]
        # the map may close over tracked values (A @ x with A requiring grad), and the
        # cotangent may be tracked: both make the transpose differentiable again
        keep = outer_reverse([*outs, *cs], zs, is_grad_enabled())
        if sel:
            with enable_grad():
                g = reverse.grad([o for o, _ in sel], zs, [c for _, c in sel], retain_graph=True,
                            create_graph=keep, allow_unused=True)
        else:
            g = (None,) * len(zs)
        res = [
            creation.zeros_like(z.detach()) if gj is None else finish(gj, keep)
            for gj, z in zip(g, zs, strict=True)
        ]
        return tuple(tree_unflatten(in_tree, res))

    return transpose_fn


__all__ = [
    "grad",
    "value_and_grad",
    "jacfwd",
    "jacrev",
    "linearize",
    "linear_transpose",
]
