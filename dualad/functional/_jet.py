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

from dualad import taylor as _taylor
from dualad.core.tensor import Tensor
from dualad.rules import vocabulary as V


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
