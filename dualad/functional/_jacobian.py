"""The two Jacobian engines behind ``jacobian``, ``hessian``, ``jacfwd`` and ``jacrev``.

* :func:`reverse_blocks` computes rows ``e_k^T J`` from one recorded forward
  pass: with ``vectorize`` each chunk of rows is ONE backward pass with a
  batched cotangent (``grad(..., is_grads_batched=True)``); otherwise one
  backward pass per row, as torch does.
* :func:`forward_blocks` computes columns ``J e_k``: with ``vectorize`` each
  chunk of columns is ONE forward pass with a batched tangent
  (``make_dual(x, basis, batched=True)``); otherwise one pass per column.

Both return the blocks ``J[i][j]`` of output ``i`` w.r.t. input ``j`` with shape
``outputs[i].shape + inputs[j].shape``. With ``strict`` they pass over one
output (reverse) or one input (forward) at a time, so that a structurally
missing derivative names the pair ``(i, j)`` it belongs to; that costs one pass
per output / input, never one per basis vector.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dualad import forward_ad as fwAD
from dualad import reverse
from dualad.backends import namespace as _B
from dualad.backends.namespace import like as _like
from dualad.forward_ad import _unpack
from dualad.numpy import creation
from dualad.rules.vocabulary import reshape as _reshape  # (not a user's view: no bookkeeping)

from ._common import (
    SMALL,
    Tensor,
    basis_rows,
    batched_level_live,
    check_fits,
    chunks,
    is_dual,
    numel,
    zeros_like,
)

# ---------------------------------------------------------------------------
# strict-mode errors (RuntimeError, as torch raises them)
# ---------------------------------------------------------------------------


def err_linear_gradient(j: int) -> RuntimeError:
    return RuntimeError(
        f"The gradient of the user-provided function w.r.t. input {j} does not depend on the "
        "inputs (the function is linear in them), so its Hessian is zero by construction. "
        "strict=True does not allow this."
    )


def err_not_differentiable(i: int, what: str = "Jacobian") -> RuntimeError:
    if what == "Hessian":  # the "outputs" of the outer Jacobian are the gradient's parts
        return err_linear_gradient(i)
    return RuntimeError(
        f"Output {i} of the user-provided function does not require grad: it was not computed "
        "from the inputs by differentiable operations. strict=True does not allow this "
        "(use strict=False to get zeros)."
    )


def err_independent(i: int, j: int, what: str = "Jacobian") -> RuntimeError:
    if what == "Hessian":
        return RuntimeError(
            f"The Hessian block [{i}][{j}] is zero by construction: the gradient w.r.t. input {i} "
            f"does not depend on input {j}. strict=True does not allow this (use strict=False "
            "to get a block of zeros)."
        )
    return RuntimeError(
        f"Output {i} of the user-provided function does not depend on input {j}. strict=True "
        "does not allow this (use strict=False to get a block of zeros)."
    )


def err_constant_jacobian(i: int, j: int, what: str = "Jacobian") -> RuntimeError:
    part = f"Hessian block [{i}][{j}]" if what == "Hessian" else f"{what} of output {i} w.r.t. input {j}"
    return RuntimeError(
        f"The {part} does not depend on the inputs, so with "
        "create_graph=True it cannot be differentiated again. strict=True does not allow this."
    )


def check_outputs_differentiable(outputs: Sequence[Tensor]) -> None:
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise err_not_differentiable(i)


# ---------------------------------------------------------------------------
# array assembly that keeps the graph when the pieces carry one
# ---------------------------------------------------------------------------


def _unshared(t: Tensor | None, seeds: Sequence[Any]) -> Tensor | None:
    """``t``, or a copy of it if it is (a view of) one of the seeds pushed.

    Seeds are cached read-only identities; a derivative that is the seed itself
    (``f(x) = x``) must still reach the caller as its own writable array.
    """
    if t is None or t.requires_grad or is_dual(t):
        return t  # computed by recorded or dual operations: not a seed
    a = t.numpy()
    if isinstance(a, np.ndarray) and any(
            s is not None and np.may_share_memory(a, s) for s in seeds):
        return creation.as_tensor(np.array(a))
    return t


def _cat0(parts: list[Tensor]) -> Tensor:
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)


def _stack0(parts: list[Tensor]) -> Tensor:
    return np.stack(parts, axis=0)


def _columns_to_block(
    cols: Tensor, out_shape: tuple[int, ...], in_shape: tuple[int, ...]
) -> Tensor:
    """(n_in, *out_shape) columns -> (*out_shape, *in_shape) block."""
    if len(out_shape) == 0:
        return _reshape(cols, in_shape)
    if not cols.requires_grad and not is_dual(cols):
        # Nothing to record or to carry: shuffle the raw array (one copy, no dispatch;
        # moveaxis(a, 0, -1) is this transpose, without its argument checks).
        a = cols.numpy()
        arr = a.transpose((*range(1, a.ndim), 0))
        if a.__class__ is np.ndarray:  # (ascontiguousarray would compute a lazy array)
            arr = np.ascontiguousarray(arr)
        return creation.as_tensor(arr.reshape(out_shape + in_shape))
    return _reshape(np.moveaxis(cols, 0, -1), out_shape + in_shape)


# ---------------------------------------------------------------------------
# reverse mode: rows
# ---------------------------------------------------------------------------


_INSTEAD = ("For its products with vectors use dualad.functional.vjp (rows) or jvp "
            "(columns), which never form it.")


def _check_result(outputs: Sequence[Tensor], inputs: Sequence[Tensor], what: str) -> None:
    """Refuse a Jacobian (or Hessian) that cannot fit in memory, before its passes."""
    m, n = sum(numel(o) for o in outputs), sum(numel(x) for x in inputs)
    if m * n < SMALL:
        return
    instead = _INSTEAD if what == "Jacobian" else (
        "For its products with vectors use dualad.functional.hvp (or vhp), which never "
        "forms it.")
    check_fits(m * n, list(inputs), f"The {what} ({m} x {n})", instead)


def _check_seed(n: int, chunk_size: int | None, like: Sequence[Tensor]) -> None:
    """Refuse a batched pass whose seed (an identity of ``n`` basis vectors) cannot fit."""
    if chunk_size is None and n * n >= SMALL:
        check_fits(n * n, list(like), f"The seed of one vectorized pass ({n} x {n} basis "
                   "vectors)", "Pass chunk_size= to push at most that many basis vectors "
                   "per pass (memory grows with chunk_size), or vectorize=False.")


def reverse_blocks(
    outputs: Sequence[Tensor],
    inputs: Sequence[Tensor],
    *,
    vectorize: bool,
    chunk_size: int | None,
    create_graph: bool,
    strict: bool,
    what: str = "Jacobian",
) -> list[list[Tensor]]:
    """Blocks ``J[i][j]`` from the graph already recorded from ``inputs`` to ``outputs``.

    Outputs that do not require grad contribute zero blocks (strict mode has
    rejected them before, like torch).
    """
    n_out, n_in = len(outputs), len(inputs)
    _check_result(outputs, inputs, what)
    rows: list[list[Tensor | None]] = [[None] * n_in for _ in range(n_out)]
    groups = [[i] for i in range(n_out)] if strict else [list(range(n_out))]
    for grp in groups:
        diff = [i for i in grp if outputs[i].requires_grad]
        if not diff:
            continue
        shapes = [tuple(outputs[i].shape) for i in diff]
        dtypes = [outputs[i].dtype for i in diff]
        sizes = [numel(outputs[i]) for i in diff]
        total = sum(sizes)
        # per_input[j]: list over row pieces of (rows,)+in_j.shape or None (zero)
        pieces: list[list[tuple[int, Tensor | None]]] = [[] for _ in range(n_in)]
        # Batched cotangents cannot flow while a batched dual level is live
        # (jacfwd(jacrev(f))): fall back to one backward pass per row then.
        if vectorize and not batched_level_live():
            _check_seed(total, chunk_size, [outputs[i] for i in diff])
            for s, e in chunks(total, chunk_size):
                blocks = basis_rows(shapes, dtypes, s, e, seed=True,
                                    like=outputs[diff[0]]._data)
                outs_sel = [outputs[i] for i, b in zip(diff, blocks, strict=True) if b is not None]
                cots = [creation.as_tensor(b) for b in blocks if b is not None]
                g = reverse.grad(
                    outs_sel, list(inputs), cots, retain_graph=True,
                    create_graph=create_graph, allow_unused=True, is_grads_batched=True,
                )
                for j in range(n_in):
                    pieces[j].append((e - s, _unshared(g[j], blocks)))
        else:
            for k in range(total):
                blocks = basis_rows(shapes, dtypes, k, k + 1, like=outputs[diff[0]]._data)
                (pos,) = [p for p, b in enumerate(blocks) if b is not None]
                g = reverse.grad(
                    [outputs[diff[pos]]], list(inputs), [creation.as_tensor(blocks[pos][0])],
                    retain_graph=True, create_graph=create_graph, allow_unused=True,
                )
                for j, gj in enumerate(g):
                    one = None if gj is None else _reshape(gj, (1,) + tuple(gj.shape))
                    pieces[j].append((1, one))
        for j in range(n_in):
            if all(p is None for _, p in pieces[j]):
                if strict:
                    raise err_independent(diff[0], j, what)
                continue  # a zero block, materialised at the end
            full = _cat0([
                p if p is not None else zeros_like(inputs[j], (r,)) for r, p in pieces[j]
            ])
            off = 0
            for i, m in zip(diff, sizes, strict=True):
                rows[i][j] = full[off:off + m] if len(diff) > 1 else full
                off += m
    return _row_blocks(rows, outputs, inputs, strict and create_graph, what)


def _row_blocks(rows: list[list[Tensor | None]], outputs: Sequence[Tensor],
                inputs: Sequence[Tensor], constant_raises: bool, what: str
                ) -> list[list[Tensor]]:
    """``reverse_blocks``' rows made blocks of shape ``out_i.shape + in_j.shape`` (zeros
    where None); ``constant_raises`` (strict, with create_graph): a block that does not
    require grad raises."""
    J: list[list[Tensor]] = []
    for i, o in enumerate(outputs):
        out_shape = tuple(o.shape)
        row = []
        for j, x in enumerate(inputs):
            r = rows[i][j]
            in_shape = tuple(x.shape)
            if r is None:
                blk = zeros_like(x, out_shape)
            else:
                blk = _reshape(r, out_shape + in_shape)
                if constant_raises and not blk.requires_grad:
                    raise err_constant_jacobian(i, j, what)
            row.append(blk)
        J.append(row)
    return J


# ---------------------------------------------------------------------------
# forward mode: columns
# ---------------------------------------------------------------------------


def forward_blocks(
    func: Callable[..., tuple[Tensor, ...]],
    inputs: Sequence[Tensor],
    *,
    vectorize: bool,
    chunk_size: int | None,
    create_graph: bool,
    strict: bool,
    what: str = "Jacobian",
) -> tuple[tuple[Tensor, ...], list[list[Tensor]]]:
    """Run ``func`` (returning a tuple of Tensors) on dual inputs; return (outputs, blocks).

    ``func`` is called once per chunk of columns (once in all with
    ``vectorize=True`` and no ``chunk_size``), or once per column otherwise.
    """
    n_in = len(inputs)
    groups = [[j] for j in range(n_in)] if strict else [list(range(n_in))]
    # A second batched level cannot be opened while one is live (e.g. jacfwd
    # nested in jacfwd): fall back to one unbatched pass per column then.
    batched = vectorize and not batched_level_live()
    outputs: tuple[Tensor, ...] | None = None
    # cols[(i, j)] = (n_j, *out_i.shape) or None (structurally zero)
    cols: dict[tuple[int, int], Tensor | None] = {}
    for grp in groups:
        shapes = [tuple(inputs[j].shape) for j in grp]
        dtypes = [inputs[j].dtype for j in grp]
        sizes = [numel(inputs[j]) for j in grp]
        total = sum(sizes)
        pieces: list[list[tuple[int, Tensor | None]]] | None = None
        spans = chunks(total, chunk_size) if batched else [(k, k + 1) for k in range(total)]
        if batched:
            _check_seed(total, chunk_size, [inputs[j] for j in grp])
        for s, e in spans:
            blocks = basis_rows(shapes, dtypes, s, e, seed=batched, order="F",
                                like=inputs[grp[0]]._data)
            with fwAD.dual_level():
                xs = list(inputs)
                for j, b in zip(grp, blocks, strict=True):
                    if b is not None:
                        t = creation.as_tensor(b) if batched else creation.as_tensor(b[0])
                        xs[j] = fwAD.make_dual(inputs[j], t, batched=batched)
                outs = func(*xs)
                parts = [_unpack(o) for o in outs]  # (primal, tangent or None) each
                tans = [t for _, t in parts]
                if outputs is None:
                    outputs = tuple(p for p, _ in parts)
                    _check_result(outputs, inputs, what)  # (before the other passes)
            if pieces is None:
                pieces = [[] for _ in outs]
            for i, t in enumerate(tans):
                if t is not None and not batched:
                    t = _reshape(t, (1,) + tuple(t.shape))
                pieces[i].append((e - s, _unshared(t, blocks)))
        if pieces is None:  # every input of the group is empty: nothing to push
            continue
        for i, plist in enumerate(pieces):
            if all(p is None for _, p in plist):
                for j in grp:
                    cols[(i, j)] = None
                continue
            assert outputs is not None
            full = _cat0([p if p is not None else zeros_like(outputs[i], (r,)) for r, p in plist])
            off = 0
            for j, m in zip(grp, sizes, strict=True):
                cols[(i, j)] = full[off:off + m] if len(grp) > 1 else full
                off += m
    if outputs is None:  # no basis vector at all (all inputs empty): still evaluate once
        outputs = tuple(func(*inputs))
    return outputs, _column_blocks(cols, outputs, inputs, strict, create_graph, what)


def _column_blocks(cols: dict[tuple[int, int], Tensor | None], outputs: tuple[Tensor, ...],
                   inputs: Sequence[Tensor], strict: bool, create_graph: bool, what: str
                   ) -> list[list[Tensor]]:
    """``forward_blocks``' columns made blocks of shape ``out_i.shape + in_j.shape`` (zeros
    where None); ``strict``: an output that depends on no input, or not on one, raises, and
    with ``create_graph`` so does a block that does not require grad."""
    n_in = len(inputs)
    if strict:
        for i in range(len(outputs)):
            if all(cols.get((i, j)) is None for j in range(n_in)):
                raise err_not_differentiable(i, what)
        for i in range(len(outputs)):
            for j in range(n_in):
                if numel(inputs[j]) and cols.get((i, j)) is None:
                    raise err_independent(i, j, what)
    J: list[list[Tensor]] = []
    for i, o in enumerate(outputs):
        out_shape = tuple(o.shape)
        row = []
        for j, x in enumerate(inputs):
            c = cols.get((i, j))
            in_shape = tuple(x.shape)
            if c is None:
                blk = creation.as_tensor(_B.zeros(out_shape + in_shape, dtype=o.dtype,
                                            like=_like(o._data)))
            else:
                blk = _columns_to_block(c, out_shape, in_shape)
                if strict and create_graph and not blk.requires_grad:
                    raise err_constant_jacobian(i, j, what)
            row.append(blk)
        J.append(row)
    return J


def any_requires_grad(ts: Sequence[Any]) -> bool:
    return any(isinstance(t, Tensor) and t.requires_grad for t in ts)
