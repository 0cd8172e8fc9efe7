"""``ravel``: nested parameters (tuples, lists, dicts of Tensors) as one vector and back,
differentiable both ways (as ``jax.flatten_util.ravel_pytree``, autograd's ``flatten``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import numpy as dnp
from ..core.tensor import Tensor


def _leaves(tree: Any, out: list[Any]) -> Any:
    """Append ``tree``'s leaves to ``out`` (dict keys sorted, as JAX does); return its
    structure, a tree of leaf indices."""
    if isinstance(tree, dict):
        return {k: _leaves(tree[k], out) for k in sorted(tree)}
    if isinstance(tree, (tuple, list)):
        kids = [_leaves(x, out) for x in tree]
        if isinstance(tree, list):
            return kids
        return type(tree)(*kids) if hasattr(tree, "_fields") else type(tree)(kids)
    if tree is None:
        return None
    if not isinstance(tree, (Tensor, np.ndarray, np.generic, int, float, complex)) \
            or isinstance(tree, bool):
        raise TypeError(
            f"dualad.functional.ravel: a leaf of type {type(tree).__name__} is not a Tensor, "
            "array or number; the tree may hold only those, in tuples, lists and dicts")
    out.append(tree)
    return len(out) - 1


def _rebuild(structure: Any, leaves: list[Any]) -> Any:
    if isinstance(structure, dict):
        return {k: _rebuild(v, leaves) for k, v in structure.items()}
    if isinstance(structure, list):
        return [_rebuild(x, leaves) for x in structure]
    if isinstance(structure, tuple):
        kids = [_rebuild(x, leaves) for x in structure]
        return type(structure)(*kids) if hasattr(structure, "_fields") else \
            type(structure)(kids)
    return None if structure is None else leaves[structure]


def ravel(tree: Any) -> tuple[Tensor, Callable[[Any], Any]]:
    """Flatten nested parameters to one vector, and the function that undoes it.

    ``tree`` is a Tensor, array or number, or tuples, lists and dicts of them (nested;
    dict keys in sorted order, ``None`` an empty subtree). The vector is the leaves
    raveled and concatenated in their common dtype; ``unravel(vector)`` gives the tree
    back, each leaf of its shape and dtype. Both are compositions of dualad.numpy, so
    derivatives flow through either: optimize a flat vector, evaluate a model that takes
    the nested parameters.

    Parameters
    ----------
    tree : Tensor, ndarray, number, or tuple / list / dict of them (nested)

    Returns
    -------
    flat : Tensor
        1-D, of size the total number of elements.
    unravel : callable
        ``unravel(v)`` for any vector ``v`` of ``flat``'s size: the tree of ``v``'s
        pieces (Tensors).

    Examples
    --------
    >>> from dualad.functional import ravel
    >>> params = {"w": np.ones((2, 2)), "b": np.array([0.5, -0.5])}
    >>> flat, unravel = ravel(params)
    >>> flat
    tensor([ 0.5, -0.5,  1. ,  1. ,  1. ,  1. ])
    >>> unravel(2 * flat)["w"]
    tensor([[2., 2.],
            [2., 2.]])
    """
    leaves: list[Any] = []
    structure = _leaves(tree, leaves)
    arrays = [x if isinstance(x, Tensor) else dnp.asarray(x) for x in leaves]
    shapes = [a.shape for a in arrays]
    dtypes = [a.dtype for a in arrays]
    sizes = [int(np.prod(s)) for s in shapes]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    total = sum(sizes)
    if arrays:
        flat = dnp.concatenate([dnp.ravel(a).astype(dtype) for a in arrays])
    else:
        flat = dnp.zeros(0, dtype=dtype)

    def unravel(vector: Any) -> Any:
        v = dnp.asarray(vector)
        if v.ndim != 1 or v.shape[0] != total:
            raise ValueError(
                f"dualad.functional.ravel: unravel takes a vector of {total} elements (the "
                f"flattened tree's), got shape {tuple(v.shape)}")
        if v.dtype.kind == "c" and any(dt.kind != "c" for dt in dtypes):
            raise TypeError(
                "dualad.functional.ravel: unravel got a complex vector for a tree with real "
                "leaves; its imaginary part would be lost. Pass the real part (v.real) or "
                "make the leaves complex")
        pieces, pos = [], 0
        for shape, dt, size in zip(shapes, dtypes, sizes, strict=True):
            piece = dnp.reshape(v[pos:pos + size], shape)
            pieces.append(piece if piece.dtype == dt else piece.astype(dt))
            pos += size
        return _rebuild(structure, pieces)

    return flat, unravel
