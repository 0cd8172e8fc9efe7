"""Sparse tangents without coloring: the Jacobian (times a seed) as a SciPy sparse matrix.

:func:`sparse_tangent_jacobian` runs the function once at ``x`` at a level of its own whose
interpreter, :class:`SparseTangentLevel`, carries beside each value traced from ``x`` a
sparse matrix ``T`` of shape ``(value.size, m)``: the value's Jacobian times the seed (the
``m`` directions). The shape is the pattern level's (``dualad.functional._sparsity``), with
values: structural, reduction and contraction rules are :mod:`dualad.sparse.tangents`'s;
an elementwise function scales its operands' rows by its partial derivatives, read from
the primitive's own JVP rule (the rule run on a tangent of ones, and of ``1j`` where
complex values meet: the two coefficients of an R-linear differential). A primitive
without a rule raises, naming it: the answer is right or there is none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from dualad.core import levels
from dualad.core.dispatch import _eval, dual, parts_at
from dualad.core.levels import Interpreter
from dualad.core.tensor import Tensor, _make
from dualad.functional._sparsity import _value
from dualad.rules._util import elementwise_aval
from dualad.sparse import patterns as P
from dualad.sparse import tangents as T

__all__ = ["sparse_tangent_jacobian", "SparseTangentLevel"]

_USE_COLORING = ("use sparse_jacobian with coloring (its default strategy, 'auto'), which pushes "
                 "dense tangents through every primitive")


class SparseTangentLevel(Interpreter):
    """The interpreter of a sparse-tangent level: values as they are, tangents as sparse
    matrices by the rules of :mod:`dualad.sparse.tangents`.

    Attributes
    ----------
    level : its level id.
    m : the number of directions (each tangent's columns).
    """

    __slots__ = ("level", "m")

    def __init__(self, level: int, m: int) -> None:
        self.level, self.m = level, m

    def process(self, prim: Any, args: Any, params: dict[str, Any]) -> Any:
        L = self.level
        primals, tangents = parts_at(L, args)
        out = _eval(prim, primals, params)
        if all(t is None for t in tangents):
            return out
        if prim.multi:
            raise self.no_rule(prim.name)
        values = [_value(a) for a in primals]
        call = P.Call(prim.name, prim.impl, values, tangents, _value(out), params, self.m)
        rule = T.RULES.get(prim.name)
        if rule is not None:
            result = rule(call)
        elif prim.name == "where" or prim.aval is elementwise_aval \
                or getattr(prim, "ufunc", None) is not None:
            result = T.elementwise(call, _partials(prim, call))
        else:
            raise self.no_rule(prim.name)
        if result is None or np.asarray(call.out).dtype.kind not in "fc":
            return out  # (no dependence on x: a constant)
        return dual(L, out, sp.csr_array(result))

    @staticmethod
    def no_rule(name: str) -> NotImplementedError:
        return NotImplementedError(
            f"sparse tangents: the primitive {name!r} has no sparse-tangent rule (they cover "
            "the elementwise functions, gathers and reshapes, sum and cumsum, index_add, "
            f"matmul and einsum); {_USE_COLORING}")

    def custom_function(self, cls: Any, values: list[Any], tangents: list[Any],
                        outs: list[Any], diff: list[bool]) -> list[Any]:
        """A custom ``Function``'s jvp works on dense tangents: no sparse-tangent rule."""
        raise NotImplementedError(
            f"sparse tangents: the custom Function {cls.__name__} has no sparse-tangent rule "
            f"(its jvp takes dense tangents); {_USE_COLORING}")


def _partials(prim: Any, call: P.Call) -> list[tuple[Any, Any] | None]:
    """Per operand, the coefficients ``(alpha, beta)`` of its differential ``alpha t +
    beta conj(t)`` (arrays of the result's shape; ``beta`` None for a complex-linear
    one, as every real function's), from the primitive's JVP rule at the primal: the
    rule on the tangent 1 gives ``alpha + beta``, on ``1j`` gives ``1j (alpha - beta)``."""
    out_shape = tuple(np.shape(call.out))
    primals = [_make(np.asarray(v)) if isinstance(v, (np.ndarray, np.generic)) else v
               for v in call.values]
    out = _make(np.asarray(call.out))
    is_complex = any(np.iscomplexobj(v) for v in call.values) or any(
        t is not None and t.dtype.kind == "c" for t in call.patterns)

    def jvp_on(k: int, unit: complex) -> np.ndarray:
        ones = np.full(call.shape(k), unit,
                       np.result_type(np.asarray(call.values[k]).dtype, type(unit), 1.0))
        tangents = [_make(ones) if j == k else None for j in range(len(call.values))]
        d = prim.jvp(primals, tangents, out, **call.params)
        if d is None:
            return np.zeros(out_shape)
        return np.broadcast_to(np.asarray(_value(d)), out_shape)

    result: list[tuple[Any, Any] | None] = []
    for k, t in enumerate(call.patterns):
        if t is None:
            result.append(None)
            continue
        at_one = jvp_on(k, 1.0)
        if not is_complex:
            result.append((at_one, None))
            continue
        at_i = jvp_on(k, 1j)
        alpha, beta = (at_one - 1j * at_i) / 2, (at_one + 1j * at_i) / 2
        result.append((alpha, beta if np.any(beta) else None))
    return result


def sparse_tangent_jacobian(func: Callable[..., Any], x: Any, seed: Any = None
                            ) -> sp.csr_array:
    """The Jacobian of ``func`` at ``x`` times ``seed``, carried as sparse matrices.

    ``func`` runs once on ``x`` with its real values; each value traced from ``x`` carries
    its Jacobian times ``seed`` as a SciPy sparse matrix, so the work and the memory are
    proportional to the nonzeros and no coloring is needed. The elementwise functions,
    gathers and reshapes (getitem, setitem, concatenate, pad, transpose, ...), ``sum``,
    ``cumsum``, ``index_add``, ``where``, ``matmul`` and ``einsum`` have rules; any other
    primitive raises ``NotImplementedError`` naming it.

    Parameters
    ----------
    func : a function of one array returning one array.
    x : the point (an array-like or a Tensor), real or complex.
    seed : a SciPy sparse matrix (or array-like) of shape ``(x.size, m)``: the directions
        (columns); default the identity, giving the Jacobian.

    Returns
    -------
    scipy.sparse.csr_array of shape ``(y.size, m)``: ``J @ seed``, ``J`` the Jacobian of
    ``y = func(x)`` flattened in C order.

    Examples
    --------
    >>> import numpy as np
    >>> from dualad.functional._sparse_tangents import sparse_tangent_jacobian
    >>> sparse_tangent_jacobian(lambda x: x[1:] * x[:-1], np.array([1.0, 2.0, 3.0])).toarray()
    array([[2., 1., 0.],
           [0., 3., 2.]])
    """
    what = "sparse_tangent_jacobian"
    x = x if isinstance(x, Tensor) else _make(np.asarray(x, dtype=np.result_type(x, 1.0)))
    if x.dtype.kind not in "fc":
        raise TypeError(f"{what}: x must be floating or complex, not {x.dtype}")
    n = int(x.size)
    seed = sp.identity(n, format="csr") if seed is None else seed
    seed = sp.csr_array(seed if sp.issparse(seed) else np.atleast_2d(np.asarray(seed)))
    if seed.shape[0] != n:
        raise ValueError(f"{what}: seed must have x.size = {n} rows (one per element of x, "
                         f"C order) and one column per direction; it has shape {seed.shape}")
    seed = seed.astype(np.result_type(seed.dtype, x.dtype, 1.0))
    level = levels.enter(lambda L: SparseTangentLevel(L, seed.shape[1]))
    try:
        y = func(dual(level, x, seed))
        if isinstance(y, Tensor) and y._level == level:
            jac = y._tangent
        elif isinstance(y, Tensor) or hasattr(y, "shape") or isinstance(y, (int, float, complex)):
            jac = T.empty(int(np.size(_value(y))), seed.shape[1], seed.dtype)
        else:
            raise TypeError(f"{what}: func must return one array (a Tensor or an ndarray); "
                            f"it returned {type(y).__name__}")
    finally:
        levels.exit(level, what)
    return sp.csr_array(jac)
