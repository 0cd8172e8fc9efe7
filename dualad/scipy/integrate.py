r"""``dualad.scipy.integrate``: ``odeint``, differentiable through the solve.

``odeint(func, y0, t, args)`` solves :math:`y' = f(y, t, \theta)` with SciPy's
``odeint`` (LSODA) and carries derivatives in ``y0``, in ``args`` (:math:`\theta`) and
in ``t`` by the continuous sensitivity equations, not by differentiating the solver's
steps:

* forward mode integrates the tangent :math:`s = \partial y\,\dot{}` with the solution,
  :math:`s' = \partial_y f\, s + \partial_\theta f\, \dot\theta`, :math:`s(t_0) =
  \dot y_0` (the JVP of ``func`` by dualad's own forward mode, one batched pass for all
  directions);
* reverse mode is that linear map's transpose, the adjoint method: the adjoint
  :math:`a' = -a^T \partial_y f` and :math:`g' = -a^T \partial_\theta f` integrated
  backwards from the last time to the first, picking up each time's cotangent on the
  way (the VJP of ``func`` by dualad's reverse mode).

**Accuracy.** The derivative is that of the exact (continuous) solution, computed to
the solver's tolerance: the sensitivities are themselves solved by LSODA at ``rtol``
and ``atol``, so they agree with finite differences of ``scipy.integrate.odeint`` to
about the tolerances, not to rounding. Ask for tight tolerances (``rtol=atol=1e-10``)
where the derivative feeds an optimizer that needs many digits.

**Second order.** The sensitivities are computed by SciPy on arrays, so their own
derivatives are not available: a Hessian, forward-over-reverse or reverse-over-reverse
through ``odeint`` raises ``NotImplementedError`` (a derivative of the derivative in
the cotangent or the tangent alone, which is linear, is supported).

>>> import dualad as da
>>> from dualad.scipy.integrate import odeint
>>> k = da.tensor(0.5, requires_grad=True)
>>> y = odeint(lambda y, t, k: -k * y, [1.0], [0.0, 2.0], args=(k,), rtol=1e-10, atol=1e-10)
>>> y[-1, 0].backward(); round(float(k.grad), 6)  # d/dk exp(-2 k) = -2 exp(-1)
-0.735759
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as FN
from .. import numpy as dnp
from ..core import dispatch as D
from ..core.dispatch import Primitive, apply
from ..core.tensor import Tensor
from ..forward_ad import dual_level, make_dual, unpack_dual
from ..grad_mode import no_grad
from . import _require

__all__ = ["odeint"]

_SECOND_ORDER = ("dualad.scipy.integrate.odeint: a derivative of its sensitivities in "
                 "y0, t or args (a Hessian, forward-over-reverse, reverse-over-reverse) "
                 "is not supported: they are solved by SciPy on arrays. Differentiate "
                 "once through odeint, or write the integrator with dualad.numpy (as in "
                 "the gallery's ODE sensitivities example) for higher derivatives")


def _scipy_odeint() -> Any:
    return _require("scipy.integrate", "dualad.scipy.integrate.odeint (its solver)").odeint


def _flat(out: Any) -> Any:
    """``func``'s result as one vector (it may return a list of scalars, as SciPy allows)."""
    return dnp.ravel(dnp.asarray(out, dtype=np.float64))


def _rhs(func: Any, y: np.ndarray, t: float, args: tuple[Any, ...]) -> np.ndarray:
    with no_grad():
        return np.asarray(_flat(func(Tensor(y), t, *[Tensor(a) for a in args]))._data)


def _solve(func: Any, y0: np.ndarray, t: np.ndarray, args: tuple[Any, ...], opts: Any,
           rhs: Any = None) -> np.ndarray:
    """SciPy's odeint of ``y' = func(y, t, *args)``, or of ``state' = rhs(state, t)``
    (the solution with its sensitivities or adjoints)."""
    if rhs is None:
        def rhs(state: np.ndarray, tt: float) -> np.ndarray:
            return _rhs(func, state, tt, args)

    return _scipy_odeint()(rhs, y0, t, **dict(opts))


def _odeint_impl(y0: Any, t: Any, *args: Any, func: Any, opts: Any) -> np.ndarray:
    return _solve(func, np.asarray(y0, np.float64), np.asarray(t, np.float64), args, opts)


def _split(v: np.ndarray, n: int, args: tuple[Any, ...], present: tuple[int, ...],
           with_y0: bool) -> tuple[Any, dict[int, np.ndarray]]:
    """A flat vector (leading axis K) as ``dy0`` (or None) and ``{i: d args[i]}``."""
    k, pos = v.shape[0], 0
    dy0 = None
    if with_y0:
        dy0, pos = v[:, :n], n
    dargs = {}
    for i in present:
        size = int(np.size(args[i]))
        dargs[i] = v[:, pos:pos + size].reshape((k,) + np.shape(args[i]))
        pos += size
    return dy0, dargs


def _tangent_k(v: Any, y0: Any, t: Any, ys: Any, *args: Any, func: Any, opts: Any,
               present: tuple[int, ...], with_y0: bool) -> np.ndarray:
    """The sensitivities ``s(t_i)``, shape ``(K, len(t), n)``, in K directions ``v``
    (shape ``(K, size)``: ``dy0`` if ``with_y0``, then ``d args[i]`` raveled, i in
    ``present``): ``s' = J_y s + J_args d args``, ``s(t_0) = dy0``. (``ys``, the solution
    at ``t``, is the adjoint's; the sensitivities integrate the solution along.)"""
    y0, v = np.asarray(y0, np.float64), np.asarray(v, np.float64)
    n, k = y0.size, v.shape[0]
    dy0, dargs = _split(v, n, args, present, with_y0)

    def rhs(state: np.ndarray, tt: float) -> np.ndarray:
        y, s = state[:n], state[n:].reshape(k, n)
        if not D.batched:  # func and its JVP in the K directions: one batched pass
            f, ds = _jvp(func, y, tt, args, s, dargs, True)
        else:  # (an outer level carries batched tangents already: one pass each)
            each = [_jvp(func, y, tt, args, s[j], {i: d[j] for i, d in dargs.items()}, False)
                    for j in range(k)]
            f, ds = each[0][0], np.stack([e[1] for e in each])
        return np.concatenate([f, np.broadcast_to(ds, (k, n)).reshape(-1)])

    s0 = np.zeros((k, n)) if dy0 is None else dy0
    state0 = np.concatenate([y0, s0.reshape(-1)])
    out = _solve(func, state0, np.asarray(t, np.float64), args, opts, rhs)
    return np.moveaxis(out[:, n:].reshape(len(out), k, n), 1, 0)


def _jvp(func: Any, y: np.ndarray, tt: float, args: tuple[Any, ...], s: np.ndarray,
         dargs: dict[int, np.ndarray], batched: bool) -> tuple[np.ndarray, np.ndarray]:
    """``func(y, tt, *args)`` and its JVP in the direction ``(s, dargs)`` (a batch of
    directions, leading axis, if ``batched``), by forward mode."""
    with dual_level():
        yd = make_dual(Tensor(y), Tensor(s), batched=batched)
        ad = [make_dual(Tensor(a), Tensor(dargs[i]), batched=batched) if i in dargs
              else Tensor(a) for i, a in enumerate(args)]
        primal, tan = unpack_dual(_flat(func(yd, tt, *ad)))
    return np.asarray(primal._data), 0.0 if tan is None else np.asarray(tan._data)


def _adjoint_k(ct: Any, y0: Any, t: Any, ys: Any, *args: Any, func: Any, opts: Any,
               present: tuple[int, ...], with_y0: bool) -> np.ndarray:
    """The adjoint method, the transpose of ``_tangent_k``: for K cotangents ``ct`` of
    the solution (shape ``(K, len(t), n)``), the cotangents of ``y0`` (if ``with_y0``)
    and of ``args[i]`` (i in ``present``), raveled one after the other: ``(K, size)``.
    ``a' = -a J_y``, ``g' = -a J_args``, integrated from the last time back to the first;
    ``a`` picks up each time's cotangent as the integration passes it."""
    ct = np.asarray(ct, np.float64)
    y0, t = np.asarray(y0, np.float64), np.asarray(t, np.float64)
    n, k = y0.size, ct.shape[0]
    p = sum(int(np.size(args[i])) for i in present)
    ys = np.asarray(ys, np.float64)  # (the solution at t: each backward leg starts there)

    def rhs(state: np.ndarray, tt: float) -> np.ndarray:
        y, a = state[:n], state[n:n + k * n].reshape(k, n)
        f, aj = _cotangent_products(func, y, tt, args, present, a)
        return np.concatenate([f, -aj[:, :n].reshape(-1), -aj[:, n:].reshape(-1)])

    a, g = ct[:, -1].copy(), np.zeros((k, p))
    for i in range(len(t) - 1, 0, -1):
        state = np.concatenate([ys[i], a.reshape(-1), g.reshape(-1)])
        end = _solve(func, state, t[[i, i - 1]], args, opts, rhs)[-1]
        a = end[n:n + k * n].reshape(k, n) + ct[:, i - 1]
        g = end[n + k * n:].reshape(k, p)
    return np.concatenate(([a] if with_y0 else []) + [g], axis=1)


_JACOBIAN_MAX = 64
"""Up to this many inputs (state and differentiated arguments), the adjoint's products
``a J`` come from the whole Jacobian, one batched forward pass (about twice as fast as a
reverse pass per cotangent for small systems); beyond it, from reverse passes."""


def _cotangent_products(func: Any, y: np.ndarray, tt: float, args: tuple[Any, ...],
                        present: tuple[int, ...], a: np.ndarray) -> tuple[np.ndarray, Any]:
    """``func(y, tt, *args)`` and ``a J`` for the K rows of ``a``, J the Jacobian in ``y``
    and the arguments in ``present`` (their entries raveled one after the other)."""
    n, k = y.size, a.shape[0]
    sizes = [int(np.size(args[i])) for i in present]
    m = n + sum(sizes)
    if not D.batched and m <= _JACOBIAN_MAX:
        eye, offsets = np.eye(m), np.cumsum([n] + sizes)
        dargs = {i: eye[:, lo:hi].reshape((m,) + np.shape(args[i]))
                 for i, lo, hi in zip(present, offsets[:-1], offsets[1:], strict=True)}
        f, jac = _jvp(func, y, tt, args, eye[:, :n], dargs, True)  # row j: J e_j
        return f, a @ np.broadcast_to(jac, (m, n)).T
    fn = _closed(func, tt, args, present)
    inputs = (Tensor(y),) + tuple(Tensor(args[i]) for i in present)
    rows = []
    for j in range(k):  # func's VJP, one reverse pass per cotangent
        f, grads = FN.vjp(fn, inputs, Tensor(a[j]))
        rows.append(np.concatenate([np.asarray(g._data).reshape(-1) for g in grads]))
    return np.asarray(f._data), np.stack(rows)


def _closed(func: Any, tt: float, args: tuple[Any, ...], present: tuple[int, ...]) -> Any:
    """``func`` as a function of ``y`` and of the arguments in ``present`` alone, at ``tt``."""

    def fn(y: Any, *vary: Any) -> Any:
        full = [Tensor(a) for a in args]
        for i, x in zip(present, vary, strict=True):
            full[i] = x
        return _flat(func(y, tt, *full))

    return fn


def _one(impl_k: Any) -> Any:
    """The unbatched implementation: one direction (K = 1)."""

    def impl(v: Any, *rest: Any, **params: Any) -> np.ndarray:
        return impl_k(np.asarray(v)[None], *rest, **params)[0]

    return impl


def _batch(impl: Any, impl_k: Any = None) -> Any:
    """A batching rule: K directions at once where only the linear input (0) is batched
    by one axis (``impl_k``), else a loop over the batch."""

    def batch(arrays: list[Any], nbs: list[int], **params: Any) -> tuple[Any, int]:
        nb = max(nbs)
        if any(m not in (0, nb) for m in nbs):
            raise NotImplementedError("dualad.scipy.integrate.odeint: inputs batched by "
                                      f"different numbers of axes ({nbs})")
        if impl_k is not None and nb == 1 and not any(nbs[1:]):
            return impl_k(*arrays, **params), 1
        shape = np.broadcast_shapes(*[np.shape(a)[:nb]
                                      for a, m in zip(arrays, nbs, strict=True) if m])
        flat = [np.reshape(np.broadcast_to(a, shape + np.shape(a)[nb:]),
                           (-1,) + np.shape(a)[nb:]) if m else a
                for a, m in zip(arrays, nbs, strict=True)]
        outs = [impl(*[f[b] if m else f for f, m in zip(flat, nbs, strict=True)], **params)
                for b in range(int(np.prod(shape)))]
        return np.stack(outs).reshape(shape + outs[0].shape), nb

    return batch


def _raise_second_order(tangents: Any) -> None:
    if any(d is not None for d in tangents[1:]):
        raise NotImplementedError(_SECOND_ORDER)


def _tangent_jvp(primals: Any, tangents: Any, out: Any, **params: Any) -> Any:
    _raise_second_order(tangents)
    return apply(tangent_p, tangents[0], *primals[1:], **params)


def _adjoint_jvp(primals: Any, tangents: Any, out: Any, **params: Any) -> Any:
    _raise_second_order(tangents)
    return apply(adjoint_p, tangents[0], *primals[1:], **params)


def _tangent_transpose(ct: Any, args: Any, **params: Any) -> list[Any]:
    return [apply(adjoint_p, ct, *args[1:], **params)] + [None] * (len(args) - 1)


def _adjoint_transpose(ct: Any, args: Any, **params: Any) -> list[Any]:
    return [apply(tangent_p, ct, *args[1:], **params)] + [None] * (len(args) - 1)


def _size(a: Any) -> int:
    return int(np.prod(a.shape if isinstance(a, Tensor) else np.shape(a)))


def _tangent_aval(args: Any, **params: Any) -> tuple[tuple[int, ...], Any]:
    return (_size(args[2]), _size(args[1])), np.dtype(np.float64)


def _adjoint_aval(args: Any, *, present: tuple[int, ...], with_y0: bool,
                  **params: Any) -> tuple[tuple[int, ...], Any]:
    size = _size(args[1]) * with_y0 + sum(_size(args[4 + i]) for i in present)
    return (size,), np.dtype(np.float64)


_ALL = tuple(range(1, 256))
tangent_p = Primitive("odeint_tangent", _one(_tangent_k), _tangent_jvp, reads=_ALL,
                      linear=(0,), batch=_batch(_one(_tangent_k), _tangent_k),
                      aval=_tangent_aval, transpose=_tangent_transpose)
"""The sensitivities of ``odeint``'s solution, linear in its first input (the flat
tangent of y0 and the arguments); its transpose is ``adjoint_p``."""
adjoint_p = Primitive("odeint_adjoint", _one(_adjoint_k), _adjoint_jvp, reads=_ALL,
                      linear=(0,), batch=_batch(_one(_adjoint_k), _adjoint_k),
                      aval=_adjoint_aval, transpose=_adjoint_transpose)
"""The adjoint method: ``tangent_p``'s transpose, linear in the solution's cotangent."""


def _odeint_jvp(primals: Any, tangents: Any, out: Any, *, func: Any, opts: Any) -> Any:
    y0, t, *args = primals
    dy0, dt, *dargs = tangents
    present = tuple(i for i, d in enumerate(dargs) if d is not None)
    result = None
    if dt is not None:
        # y(t_i) moves with t_i at the speed f(y(t_i), t_i); moving t_0 moves the start
        # back along the trajectory: dy0 - f(y0, t0) dt_0
        speeds = dnp.stack([_flat(func(out[i], t[i], *args)) for i in range(out.shape[0])])
        result = speeds * dt[:, None]
        shift = -_flat(func(y0, t[0], *args)) * dt[0]
        dy0 = shift if dy0 is None else dy0 + shift
    if dy0 is None and not present:
        return result
    v = dnp.concatenate(([dy0] if dy0 is not None else [])
                        + [dnp.ravel(dargs[i]) for i in present])
    s = apply(tangent_p, v, y0, t, out, *args, func=func, opts=opts, present=present,
              with_y0=dy0 is not None)
    return s if result is None else s + result


odeint_p = Primitive("odeint", _odeint_impl, _odeint_jvp, reads=(0, 1, "out") + _ALL,
                     batch=_batch(_odeint_impl))


def odeint(func: Any, y0: Any, t: Any, args: Any = (), *, tfirst: bool = False,
           **options: Any) -> Any:
    """``scipy.integrate.odeint``: the solution of ``dy/dt = func(y, t, *args)`` at the
    times ``t`` (shape ``(len(t), len(y0))``), differentiable in ``y0``, ``args`` and
    ``t`` in forward and reverse mode.

    ``func`` is written with ``dualad.numpy`` (it is called on Tensors, and may return
    a list of scalars as SciPy allows). ``options`` are SciPy's (``rtol``, ``atol``,
    ``mxstep``, ``hmax``, ...), used for the solution and for its sensitivities alike:
    the derivative is the continuous solution's, accurate to about the tolerances (see
    the module's documentation). A second derivative raises ``NotImplementedError``.

    Examples
    --------
    >>> from dualad.scipy.integrate import odeint
    >>> y0 = dualad.tensor([1.0], requires_grad=True)
    >>> y = odeint(lambda y, t: -2.0 * y, y0, [0.0, 1.0], rtol=1e-10, atol=1e-10)
    >>> y[-1, 0].backward(); round(float(y0.grad[0]), 8)  # exp(-2)
    0.13533528
    """
    for bad in ("Dfun", "full_output", "col_deriv"):
        if options.get(bad):
            raise NotImplementedError(
                f"dualad.scipy.integrate.odeint: {bad}= is not supported (dualad computes "
                "func's Jacobian products itself); leave it out")
    options.pop("full_output", None)
    if not isinstance(args, tuple):
        args = (args,)
    if tfirst:
        inner = func

        def func(y: Any, t: Any, *a: Any) -> Any:
            return inner(t, y, *a)

    y0 = dnp.ravel(dnp.asarray(y0, dtype=np.float64))
    t = dnp.asarray(t, dtype=np.float64)
    if t.ndim != 1:
        raise ValueError(f"dualad.scipy.integrate.odeint: t must be 1-D (got shape {t.shape})")
    targs = []
    for i, a in enumerate(args):
        try:
            targs.append(dnp.asarray(a, dtype=np.float64))
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"dualad.scipy.integrate.odeint: args[{i}] ({type(a).__name__}) is not an "
                "array or number; pass only numbers and arrays in args and let func close "
                "over anything else") from e
    return apply(odeint_p, y0, t, *targs, func=func, opts=tuple(sorted(options.items())))
