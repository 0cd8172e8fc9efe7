"""``jet``: Taylor mode at the function level, with ``jax.experimental.jet.jet``'s semantics.

The series go in and come out scaled as derivative coefficients by default (term k of
``x(t) = x_0 + sum_k x_k t^k / k!``, output term k the k-th derivative of ``f(x(t))`` at
0); inside, a jet level (``dualad.taylor``) carries them unscaled, so that the factorials
are applied once, at the edges, and order 30 stays accurate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dualad import taylor as _taylor
from dualad.backends.namespace import to_kind
from dualad.core import levels
from dualad.core.tensor import Tensor, _make
from dualad.rules import vocabulary as V
from dualad.taylor import CollapsedJetLevel


def _as_input(x: Any, what: str) -> Tensor:
    t = x if isinstance(x, Tensor) else Tensor(x)
    if t.dtype.kind not in "fc":
        raise TypeError(f"jet: {what} has dtype {t.dtype}; Taylor series need floating or "
                        "complex inputs (convert with .astype('float64'))")
    return t


def _orders(primals: Sequence[Any], series: Sequence[Any]) -> int:
    """Check ``jet``'s arguments; the common order K of the series."""
    if not isinstance(primals, tuple | list) or not isinstance(series, tuple | list):
        raise TypeError("jet: primals and series must be tuples, one series per primal "
                        "(jet(f, (x,), ([x1, x2],)) for one argument)")
    if len(primals) != len(series):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one "
                         "series (a list of K terms) per primal")
    orders = {len(s) if isinstance(s, list | tuple) else -1 for s in series}
    if -1 in orders:
        raise TypeError("jet: each series must be a list [x_1, ..., x_K] of terms of its "
                        "primal's shape")
    if len(orders) > 1:
        raise ValueError(f"jet: the series have different numbers of terms {sorted(orders)}; "
                         "give every primal K terms (zeros where it does not move)")
    return orders.pop() if orders else 0


def jet(func: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]], *,
        factorial_scaled: bool = True) -> tuple[Any, Any]:
    """Push truncated Taylor series through ``func`` in one forward pass (Taylor mode).

    Parameters
    ----------
    func : callable
        ``func(*primals)`` returning a Tensor or a tuple of Tensors.
    primals : tuple
        The point ``x_0``: one Tensor or array per argument of ``func``.
    series : tuple of lists
        One list ``[x_1, ..., x_K]`` per primal, each term of its primal's shape; every list
        has the same K.
    factorial_scaled : bool, default True
        True: the terms are derivative coefficients, ``x(t) = x_0 + sum_k x_k t^k / k!``,
        and output term k is the k-th derivative of ``func(x(t))`` at ``t = 0`` (JAX's
        ``jet``). False: plain Taylor coefficients, ``x(t) = x_0 + sum_k x_k t^k``, in and
        out.

    Returns
    -------
    primal_out : Tensor or tuple of Tensor
        ``func(*primals)``.
    series_out : list of Tensor, or tuple of lists
        The K output terms (a tuple of lists when ``func`` returns a tuple).

    Notes
    -----
    Each operation costs ``O(K^2)`` (Griewank & Walther, *Evaluating Derivatives*, ch. 13);
    nested dual levels take ``2^K`` passes for the K-th derivative. The terms may require
    grad: the result is differentiable by reverse mode, and ``jet`` runs inside dual levels.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> y, (d1, d2, d3) = F.jet(np.sin, (0.0,), ([1.0, 0.0, 0.0],))  # sin', sin'', sin'''
    >>> float(d1), float(d2), float(d3)
    (1.0, 0.0, -1.0)
    """
    K = _orders(primals, series)
    xs = [_as_input(p, f"primal {i}") for i, p in enumerate(primals)]
    with _taylor.jet_level() as J:
        jets = []
        for i, (x, s) in enumerate(zip(xs, series, strict=True)):
            terms = [_as_input(c, f"term {k} of series {i}") for k, c in enumerate(s, 1)]
            if factorial_scaled:
                terms = [c / math.factorial(k) for k, c in enumerate(terms, 1)]
            jets.append(_taylor.make_jet(x, terms, level=J))
        out = func(*jets)
        single = not isinstance(out, tuple)
        outs = [_read(o, J, K, factorial_scaled) for o in ((out,) if single else out)]
    if single:
        return outs[0]
    return tuple(p for p, _ in outs), tuple(s for _, s in outs)


def _read(y: Any, J: int, K: int, factorial_scaled: bool) -> tuple[Tensor, list[Tensor]]:
    """An output's primal and its K terms (zeros for a constant), scaled as asked."""
    if not isinstance(y, Tensor):
        raise TypeError(f"jet: func returned a {type(y).__name__}; it must return a Tensor or "
                        "a tuple of Tensors")
    primal, cs = _taylor.unpack_jet(y, level=J)
    if cs is None:
        cs = []
    cs = cs + [V.zeros_like(primal) for _ in range(K - len(cs))]
    if factorial_scaled:
        cs = [c * math.factorial(k) for k, c in enumerate(cs, 1)]
    return primal, cs


def _directions(x: Tensor, method: str, n_samples: int | None, weights: Any, rng: Any,
                batch_ndim: int = 0) -> tuple[Any, Any]:
    """The directions (B, *x.shape) and their weights (B,) of ``laplacian``'s methods. With
    ``batch_ndim``, collapsed mode's directions are those of one point, the same at every
    point of the batch (each point's own Laplacian, since each output reads its own point)."""
    point = tuple(x.shape[batch_ndim:])
    size = int(np.prod(point))
    dtype = x.dtype
    if method == "collapsed":
        if n_samples is not None:
            raise TypeError("laplacian: n_samples is for method='hutchinson'")
        dirs = np.eye(size, dtype=dtype).reshape((size,) + (1,) * batch_ndim + point)
        dirs = np.ascontiguousarray(np.broadcast_to(dirs, (size,) + tuple(x.shape)))
        w = np.ones(size, dtype) if weights is None else \
            np.broadcast_to(np.asarray(weights, dtype), point).reshape(-1)
        return dirs, w
    if method == "hutchinson":
        if n_samples is None or int(n_samples) < 1:
            raise ValueError("laplacian(method='hutchinson') needs n_samples >= 1")
        gen = np.random.default_rng(rng)
        dirs = gen.choice(np.array([-1.0, 1.0], dtype), size=(int(n_samples),) + x.shape)
        if weights is not None:  # E[v v^T] = diag(c) for v = sqrt(c) * rademacher: c >= 0
            c = np.broadcast_to(np.asarray(weights, dtype), point)
            if (c < 0).any():
                raise ValueError("laplacian(method='hutchinson'): weights must be >= 0 "
                                 "(use method='collapsed' for signed weights)")
            dirs = dirs * np.sqrt(c)
        return dirs, np.full(int(n_samples), 1.0 / int(n_samples), dtype)
    raise ValueError(f"laplacian: unknown method {method!r}; use 'collapsed' (exact) or "
                     "'hutchinson' (a stochastic estimate)")


def laplacian(func: Callable[[Tensor], Tensor], x: Any, *, weights: Any = None,
              method: str = "collapsed", n_samples: int | None = None, rng: Any = None,
              batch_ndim: int = 0) -> Tensor:
    """The Laplacian ``sum_i d^2 f / dx_i^2`` of a scalar function, by collapsed Taylor mode.

    Parameters
    ----------
    func : callable
        ``func(x)`` returning a Tensor of one element.
    x : Tensor or array_like
        The point (any shape; ``i`` runs over its elements). It may require grad, and
        ``func`` may close over Tensors that require grad: the Laplacian is then
        differentiable by reverse mode (a physics-informed loss's parameter gradients).
    weights : array_like, optional
        ``c`` of ``x``'s shape (or broadcasting to it): the weighted form
        ``sum_i c_i d^2 f / dx_i^2``.
    method : {"collapsed", "hutchinson"}
        ``"collapsed"`` (exact): one pass of order-2 jets along every coordinate direction
        at once, the first-order coefficients kept per direction and the second-order ones
        summed (Dangel et al., "Collapsing Taylor Mode", 2025), so linear operations act on
        the summed coefficient once. ``"hutchinson"``: the same pass along ``n_samples``
        random sign vectors ``v``, the unbiased estimate ``mean_v v^T H v`` (with weights,
        ``v = sqrt(c) * sign``, so ``c >= 0``).
    n_samples : int, optional
        The number of random directions of ``"hutchinson"``.
    rng : int or numpy.random.Generator, optional
        The seed or generator of those directions.
    batch_ndim : int, optional
        The number of leading axes of ``x`` that index independent points (a batch of
        collocation points): ``func(x)`` then returns one number per point, of shape
        ``x.shape[:batch_ndim]``, each depending on its own point only (as a vmapped
        function does), and the result is the Laplacian at every point, in one pass.
        ``weights`` then have the shape of one point.

    Returns
    -------
    Tensor
        A scalar Tensor (of shape ``x.shape[:batch_ndim]`` with ``batch_ndim``).

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> F.laplacian(lambda x: (x ** 3).sum(), np.array([1.0, 2.0]))  # 6 x_1 + 6 x_2
    tensor(18.)
    >>> points = np.array([[1.0, 2.0], [0.0, 1.0], [1.0, 1.0]])  # three points in the plane
    >>> F.laplacian(lambda p: (p ** 3).sum(axis=-1), points, batch_ndim=1)
    tensor([18.,  6., 12.])
    """
    x = _as_input(x, "x")
    if not isinstance(batch_ndim, int) or not 0 <= batch_ndim <= x.ndim:
        raise ValueError(f"laplacian: batch_ndim must be an integer from 0 to x.ndim "
                         f"({x.ndim}); got {batch_ndim!r}")
    batch_shape = tuple(x.shape[:batch_ndim])
    dirs, w = _directions(x, method, n_samples, weights, rng, batch_ndim)

    # (B,) + shape, B a batch axis: one direction per slot; on x's device
    basis = _make(to_kind(dirs, x._data), 1)
    weights_t = Tensor(to_kind(w, x._data))
    J = levels.enter(lambda L: CollapsedJetLevel(L, weights_t))
    try:
        y = func(_taylor.make_jet(x, [basis, V.zeros_like(x)], level=J))
        wanted = "one number per point, of shape x.shape[:batch_ndim] = " \
            f"{batch_shape}" if batch_ndim else "a Tensor of one element (a scalar function)"
        if not isinstance(y, Tensor) or (tuple(y.shape) != batch_shape if batch_ndim
                                         else y.size != 1):
            raise ValueError(f"laplacian: func must return {wanted}; it returned "
                             f"{type(y).__name__} {getattr(y, 'shape', '')}")
        _, cs = _taylor.unpack_jet(y, level=J)
    finally:
        levels.exit(J, "laplacian")
    if cs is None:
        return V.zeros_like(V.reshape(y, batch_shape))
    return V.reshape(cs[1], batch_shape) * 2.0
