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
  way (``a J`` from func's Jacobian by one batched forward pass, or its VJP by reverse
  mode for large systems); with few differentiated inputs (``_SENSITIVITIES_MAX``), the
  same transpose is taken from the whole sensitivity matrix, one forward solve.

**Accuracy.** The derivative is that of the exact (continuous) solution, computed to
the solver's tolerance: the sensitivities are themselves solved by LSODA at ``rtol``
and ``atol``, so they agree with finite differences of ``scipy.integrate.odeint`` to
about the tolerances, not to rounding. Ask for tight tolerances (``rtol=atol=1e-10``)
where the derivative feeds an optimizer that needs many digits.

**Higher orders.** Every derivative of an ODE solution is itself the solution of an
ODE (JAX's ``odeint`` rests on the same fact). The sensitivities are ``odeint`` of the
system ``(y, s)`` with right-hand side ``(f, J_y s + J_theta dtheta)``, and the adjoint
is ``odeint`` (backwards, one interval at a time) of ``(y, a, g)`` with right-hand side
``(f, -a J_y, -a J_theta)``, both written in dualad ops of ``func`` (its JVP by a dual
level of its own). The JVPs of ``odeint_tangent`` and ``odeint_adjoint`` in their
nonlinear inputs are ``odeint``'s JVP on those systems, so Hessians, forward-over-reverse,
reverse-over-forward and reverse-over-reverse work, to any order, each a linear
primitive transposed as at first order. Each order costs augmented solves of a system
twice as large (one per column of the sensitivity matrix for the transpose).

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
    batched = not D.batched  # (else an outer level carries batched tangents: one pass each)

    def rhs(state: np.ndarray, tt: float) -> np.ndarray:
        y, s = state[:n], state[n:].reshape(k, n)
        if batched:  # func and its JVP in the K directions: one batched pass
            f, ds = _jvp(func, y, tt, args, s, dargs, True, level)
        else:
            each = [_jvp(func, y, tt, args, s[j], {i: d[j] for i, d in dargs.items()}, False,
                         level) for j in range(k)]
            f, ds = each[0][0], np.stack([e[1] for e in each])
        return np.concatenate([f, np.broadcast_to(ds, (k, n)).reshape(-1)])

    s0 = np.zeros((k, n)) if dy0 is None else dy0
    state0 = np.concatenate([y0, s0.reshape(-1)])
    with dual_level() as level:  # (one level for the whole solve, not one per step)
        out = _solve(func, state0, np.asarray(t, np.float64), args, opts, rhs)
    return np.moveaxis(out[:, n:].reshape(len(out), k, n), 1, 0)


def _jvp(func: Any, y: np.ndarray, tt: float, args: tuple[Any, ...], s: np.ndarray,
         dargs: dict[int, np.ndarray], batched: bool, level: int
         ) -> tuple[np.ndarray, np.ndarray]:
    """``func(y, tt, *args)`` and its JVP in the direction ``(s, dargs)`` (a batch of
    directions, leading axis, if ``batched``), by forward mode at the dual ``level``
    (entered once for a whole solve)."""
    yd = make_dual(Tensor(y), Tensor(s), level=level, batched=batched)
    ad = [make_dual(Tensor(a), Tensor(dargs[i]), level=level, batched=batched) if i in dargs
          else Tensor(a) for i, a in enumerate(args)]
    primal, tan = unpack_dual(_flat(func(yd, tt, *ad)), level=level)
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
    m = n * with_y0 + p
    if not D.batched and m <= _SENSITIVITIES_MAX:
        # the same transpose from the whole sensitivity matrix S (one forward solve in
        # all m directions): cheaper than len(t) - 1 backward solves, each restarting
        sens = _tangent_k(np.eye(m), y0, t, ys, *args, func=func, opts=opts,
                          present=present, with_y0=with_y0)
        return np.einsum("ktj,mtj->km", ct, sens)
    ys = np.asarray(ys, np.float64)  # (the solution at t: each backward leg starts there)

    products = _cotangent_products(func, n, args, present)

    def rhs(state: np.ndarray, tt: float) -> np.ndarray:
        y, a = state[:n], state[n:n + k * n].reshape(k, n)
        f, aj = products(y, tt, a, level)
        return np.concatenate([f, -aj[:, :n].reshape(-1), -aj[:, n:].reshape(-1)])

    a, g = ct[:, -1].copy(), np.zeros((k, p))
    with dual_level() as level:
        for i in range(len(t) - 1, 0, -1):
            state = np.concatenate([ys[i], a.reshape(-1), g.reshape(-1)])
            end = _solve(func, state, t[[i, i - 1]], args, opts, rhs)[-1]
            a = end[n:n + k * n].reshape(k, n) + ct[:, i - 1]
            g = end[n + k * n:].reshape(k, p)
    return np.concatenate(([a] if with_y0 else []) + [g], axis=1)


_SENSITIVITIES_MAX = 16
"""Up to this many differentiated inputs (y0's entries and the arguments'), the adjoint
product ``S^T ct`` comes from the whole sensitivity matrix ``S`` (one forward solve of
``n (m + 1)`` states) rather than the adjoint method's backward solves (one per interval
of ``t``, each restarting the solver): a gradient of a Lotka-Volterra misfit (4
parameters, 25 times) takes 400 right-hand sides instead of 1,550."""

_JACOBIAN_MAX = 64
"""Up to this many inputs (state and differentiated arguments), the adjoint's products
``a J`` come from the whole Jacobian, one batched forward pass (about twice as fast as a
reverse pass per cotangent for small systems); beyond it, from reverse passes."""


def _cotangent_products(func: Any, n: int, args: tuple[Any, ...],
                        present: tuple[int, ...]) -> Any:
    """``products(y, tt, a, level)``: ``func(y, tt, *args)`` and ``a J`` for the K rows of
    ``a``, J the Jacobian in ``y`` and the arguments in ``present`` (their entries raveled
    one after the other), from the whole Jacobian (its seeds made once) or reverse passes."""
    sizes = [int(np.size(args[i])) for i in present]
    m = n + sum(sizes)
    if not D.batched and m <= _JACOBIAN_MAX:
        eye, offsets = np.eye(m), np.cumsum([n] + sizes)
        dargs = {i: eye[:, lo:hi].reshape((m,) + np.shape(args[i]))
                 for i, lo, hi in zip(present, offsets[:-1], offsets[1:], strict=True)}

        def by_jacobian(y: np.ndarray, tt: float, a: np.ndarray, level: int) -> Any:
            f, jac = _jvp(func, y, tt, args, eye[:, :n], dargs, True, level)  # row j: J e_j
            return f, a @ np.broadcast_to(jac, (m, n)).T

        return by_jacobian

    def by_reverse_passes(y: np.ndarray, tt: float, a: np.ndarray, level: int) -> Any:
        fn = _closed(func, tt, args, present)
        inputs = (Tensor(y),) + tuple(Tensor(args[i]) for i in present)
        rows = []
        for j in range(a.shape[0]):  # func's VJP, one reverse pass per cotangent
            f, grads = FN.vjp(fn, inputs, Tensor(a[j]))
            rows.append(np.concatenate([np.asarray(g._data).reshape(-1) for g in grads]))
        return np.asarray(f._data), np.stack(rows)

    return by_reverse_passes


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
    by one axis (``impl_k``), else a loop over the batch (an input with fewer batch axes
    than another holds the last ones: they broadcast as NumPy's trailing axes do)."""

    def batch(arrays: list[Any], nbs: list[int], **params: Any) -> tuple[Any, int]:
        nb = max(nbs)
        if impl_k is not None and nb == 1 and not any(nbs[1:]):
            return impl_k(*arrays, **params), 1
        shape = np.broadcast_shapes(*[np.shape(a)[:m]
                                      for a, m in zip(arrays, nbs, strict=True) if m])
        flat = [np.reshape(np.broadcast_to(a, shape + np.shape(a)[m:]),
                           (-1,) + np.shape(a)[m:]) if m else a
                for a, m in zip(arrays, nbs, strict=True)]
        outs = [impl(*[f[b] if m else f for f, m in zip(flat, nbs, strict=True)], **params)
                for b in range(int(np.prod(shape)))]
        return np.stack(outs).reshape(shape + outs[0].shape), nb

    return batch


def _sensitivity_system(func: Any, n: int, n_args: int, present: tuple[int, ...]) -> Any:
    """The solution with its sensitivities as one ODE, written in dualad ops: the state
    ``(y, s)``, the arguments ``args`` then the directions ``d args[i]`` (i in
    ``present``), the right-hand side ``(f, J_y s + J_args d args)`` (func's JVP by a
    dual level of its own). Differentiating ``odeint`` of it differentiates the
    sensitivities: this is how ``odeint_tangent``'s JVP reaches any order."""

    def augmented(state: Any, tt: Any, *a: Any) -> Any:
        y, s = state[:n], state[n:]
        args, dargs = list(a[:n_args]), a[n_args:]
        with dual_level():
            duals = list(args)
            for i, d in zip(present, dargs, strict=True):
                duals[i] = make_dual(args[i], d)
            f, df = unpack_dual(_flat(func(make_dual(y, s), tt, *duals)))
        return dnp.concatenate([f, dnp.zeros(n) if df is None else df])

    return augmented


def _adjoint_system(func: Any, n: int, present: tuple[int, ...]) -> Any:
    """The adjoint method's ODE in dualad ops: the state ``(y, a, g)``, the right-hand
    side ``(f, -a J_y, -a J_args)`` (J in the arguments in ``present``, one column per
    forward pass of func). Differentiating ``odeint`` of it differentiates the adjoint:
    this is how ``odeint_adjoint``'s JVP reaches any order."""

    def augmented(state: Any, tt: Any, *args: Any) -> Any:
        y, a = state[:n], state[n:2 * n]
        columns = [(None, j) for j in range(n)] + [(i, j) for i in present
                                                    for j in range(_size(args[i]))]
        f, products = None, []
        for which, j in columns:  # a J e_j, J e_j by forward mode
            with dual_level():
                ys = dnp.zeros(n) if which is not None else _unit(n, j)
                duals = [make_dual(x, _unit(_size(x), j).reshape(x.shape))
                         if i == which else x for i, x in enumerate(args)]
                f, column = unpack_dual(_flat(func(make_dual(y, ys), tt, *duals)))
            products.append(dnp.zeros(()) if column is None else dnp.sum(a * column))
        return dnp.concatenate([f, -dnp.stack(products)])

    return augmented


def _unit(size: int, j: int) -> Any:
    e = np.zeros(size)
    e[j] = 1.0
    return Tensor(e)


def _tangent_jvp(primals: Any, tangents: Any, out: Any, *, func: Any, opts: Any,
                 present: tuple[int, ...], with_y0: bool) -> Any:
    """Linear in the direction ``v``; in the other inputs, the derivative of the
    sensitivity system's solution (``_sensitivity_system``) by ``odeint``'s own JVP."""
    v, y0, t, ys, *args = primals
    dv, dy0, dt, _, *dargs = tangents  # (ys is the solution of y0, t, args: its tangent too)
    params = {"func": func, "opts": opts, "present": present, "with_y0": with_y0}
    result = None if dv is None else apply(tangent_p, dv, y0, t, ys, *args, **params)
    if dy0 is None and dt is None and all(d is None for d in dargs):
        return result
    n, pos, vargs = _size(y0), 0, []
    v_y0 = dnp.zeros(n)
    if with_y0:
        v_y0, pos = v[:n], n
    for i in present:
        size = _size(args[i])
        vargs.append(dnp.reshape(v[pos:pos + size], args[i].shape))
        pos += size
    system = _sensitivity_system(func, n, len(args), present)
    d_state0 = None if dy0 is None else dnp.concatenate([dy0, dnp.zeros(n)])
    moved = _odeint_jvp((dnp.concatenate([y0, v_y0]), t, *args, *vargs),
                        (d_state0, dt, *dargs, *[None] * len(vargs)),
                        dnp.concatenate([ys, out], axis=1), func=system, opts=opts)
    if moved is None:
        return result
    return moved[:, n:] if result is None else result + moved[:, n:]


def _adjoint_jvp(primals: Any, tangents: Any, out: Any, *, func: Any, opts: Any,
                 present: tuple[int, ...], with_y0: bool) -> Any:
    """Linear in the cotangent; in the other inputs, the derivative of the adjoint
    system's backward solves (``_adjoint_system``, one per interval) by ``odeint``'s
    own JVP."""
    ct, y0, t, ys, *args = primals
    dct, _, dt, dys, *dargs = tangents  # (y0 enters through ys, the solution)
    params = {"func": func, "opts": opts, "present": present, "with_y0": with_y0}
    result = None if dct is None else apply(adjoint_p, dct, y0, t, ys, *args, **params)
    if dt is None and dys is None and all(d is None for d in dargs):
        return result
    n, p = _size(y0), sum(_size(args[i]) for i in present)
    if n * with_y0 + p <= _SENSITIVITIES_MAX:
        moved = _transposed_sensitivities_jvp(primals, tangents, params)
        return moved if result is None else result + moved
    system = _adjoint_system(func, n, present)
    dys = dnp.zeros(ys.shape) if dys is None else dys
    a, g, da, dg = ct[-1], dnp.zeros(p), dnp.zeros(n), dnp.zeros(p)
    for i in range(ys.shape[0] - 1, 0, -1):
        state, d_state = dnp.concatenate([ys[i], a, g]), dnp.concatenate([dys[i], da, dg])
        span = t[np.array([i, i - 1])]
        leg = apply(odeint_p, state, span, *args, func=system, opts=opts)
        d_leg = _odeint_jvp((state, span, *args),
                            (d_state, None if dt is None else dt[np.array([i, i - 1])],
                             *dargs), leg, func=system, opts=opts)
        a, g = leg[-1, n:2 * n] + ct[i - 1], leg[-1, 2 * n:]
        da, dg = d_leg[-1, n:2 * n], d_leg[-1, 2 * n:]
    moved = dnp.concatenate(([da] if with_y0 else []) + [dg])
    return moved if result is None else result + moved


def _transposed_sensitivities_jvp(primals: Any, tangents: Any, params: Any) -> Any:
    """The JVP of ``S^T ct`` in the inputs other than ``ct`` (as ``_adjoint_k`` computes it
    with few inputs): ``ct . dS_j`` for each column ``S_j = odeint_tangent(e_j)``, its JVP
    by ``_tangent_jvp`` (one augmented solve per column)."""
    ct, *inputs = primals
    m = _adjoint_aval(primals, **params)[0][0]
    rows = []
    for j in range(m):
        unit = _unit(m, j)
        column = apply(tangent_p, unit, *inputs, **params)
        moved = _tangent_jvp((unit, *inputs), (None, *tangents[1:]), column, **params)
        rows.append(dnp.zeros(()) if moved is None else dnp.sum(ct * moved))
    return dnp.stack(rows)


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
tangent_p = Primitive("odeint_tangent", _one(_tangent_k), _tangent_jvp, reads=(0,) + _ALL + ("out",),
                      linear=(0,), batch=_batch(_one(_tangent_k), _tangent_k),
                      aval=_tangent_aval, transpose=_tangent_transpose)
"""The sensitivities of ``odeint``'s solution, linear in its first input (the flat
tangent of y0 and the arguments); its transpose is ``adjoint_p``."""
adjoint_p = Primitive("odeint_adjoint", _one(_adjoint_k), _adjoint_jvp, reads=(0,) + _ALL,
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
    the module's documentation), to any order (Hessians included).

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
    _refuse_closed_over_derivatives(func, y0, t, targs)
    return apply(odeint_p, y0, t, *targs, func=func, opts=tuple(sorted(options.items())))


def _refuse_closed_over_derivatives(func: Any, y0: Any, t: Any, args: list[Any]) -> None:
    """``odeint`` differentiates through ``y0``, ``t`` and ``args`` only: a Tensor that
    ``func`` closes over and that carries a derivative (requires grad, or dual) would
    have its derivative silently dropped by the solve, so it is an error."""
    plain = [Tensor(np.asarray(a.detach().numpy())) for a in (y0, t, *args)]
    probe = func(plain[0], float(plain[1].numpy()[0]) if plain[1].size else 0.0, *plain[2:])
    values = probe if isinstance(probe, list | tuple) else [probe]
    if any(isinstance(v, Tensor) and (v._level or v.requires_grad) for v in values):
        raise ValueError(
            "dualad.scipy.integrate.odeint: func closes over a Tensor that carries a "
            "derivative (it requires grad or is dual); odeint differentiates through y0, t "
            "and args only, so that derivative would be lost. Pass the Tensor in args= "
            "(func(y, t, *args)) instead, or .detach() it where its derivative is not wanted")
