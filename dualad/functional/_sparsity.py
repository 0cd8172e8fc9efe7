"""Sparsity detection by a tracing interpreter: the patterns of Jacobians and Hessians.

:func:`jacobian_sparsity` runs the function once at ``x``, on the real values (so control
flow and indexing see real numbers), at a *pattern level* of its own: each Tensor traced
from ``x`` carries, beside its value, a boolean pattern of shape ``(value.size, x.size)``
(:mod:`dualad.sparse.patterns`). :class:`PatternLevel` is that level's interpreter
(docs/architecture.md, "Adding a transformation"): it computes the primal by ``_eval`` and
the result's pattern by the primitive's pattern rule, a table lookup by name, or for an
elementwise function from its derivative formulas (a formula ``"0"``: no dependency; the
names a formula reads: the second-order pairs). :func:`hessian_sparsity` also collects the
pairs of inputs joined by a nonlinear step.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from dualad.core import levels
from dualad.core.dispatch import _eval, dual, innermost, parts_at
from dualad.core.levels import Interpreter
from dualad.core.tensor import Tensor, _make
from dualad.rules._util import elementwise_aval
from dualad.sparse import patterns as P

__all__ = ["jacobian_sparsity", "hessian_sparsity", "SparsityWarning"]


class SparsityWarning(UserWarning):
    """A primitive without a pattern rule was taken as one dense block (never a missing
    nonzero, maybe many extra ones); ``strict=True`` makes it an error.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> import dualad
    >>> import dualad.functional as F
    >>> class Cube(dualad.Function):  # a custom Function without a sparsity_pattern
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x ** 3
    ...     @staticmethod
    ...     def jvp(ctx, t):
    ...         return t  # (not used by the trace)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     p = F.jacobian_sparsity(lambda x: Cube.apply(x), np.ones(2))
    >>> caught[0].category.__name__, p.toarray()
    ('SparsityWarning', array([[ True,  True],
           [ True,  True]]))
    """


class PatternLevel(Interpreter):
    """The interpreter of a pattern level: values as they are, patterns by the rules.

    Attributes
    ----------
    level : its level id.
    n : the number of input elements (the patterns' columns).
    strict : a primitive without a rule raises instead of warning.
    second : the pairs joined by nonlinear steps (Hessian patterns), or None.
    """

    __slots__ = ("level", "n", "strict", "second")

    def __init__(self, level: int, n: int, strict: bool, second: P.Interactions | None) -> None:
        self.level, self.n, self.strict, self.second = level, n, strict, second

    def process(self, prim: Any, args: Any, params: dict[str, Any]) -> Any:
        L = self.level
        primals, pats = parts_at(L, args)
        out = _eval(prim, primals, params)
        if all(p is None for p in pats):
            return out
        call = P.Call(prim.name, prim.impl, [_value(a) for a in primals], pats,
                      tuple(_value(o) for o in out) if prim.multi else _value(out), params,
                      self.n)
        result = self.rule_for(prim, call)(call, self.second)
        if result is None:  # (a rule that declined: too large to enumerate)
            result = P.dense_block(call, self.second)
        if prim.multi:
            return tuple(dual(L, o, r) for o, r in zip(out, result, strict=True))
        return dual(L, out, result)

    def rule_for(self, prim: Any, call: P.Call) -> P.Rule:
        """The pattern rule of ``prim``: the table's, an elementwise function's from its
        formulas, or the dense block (warned of, or an error when strict)."""
        rule = P.RULES.get(prim.name)
        if rule is not None:
            return rule
        if prim.aval is elementwise_aval or getattr(prim, "ufunc", None) is not None:
            return _elementwise_rule(prim, call)
        return self.no_rule(prim.name)

    def no_rule(self, name: str) -> P.Rule:
        what = (f"jacobian_sparsity: the primitive {name!r} has no sparsity pattern rule, so "
                "every element of its result is taken to depend on every input its operands "
                "depend on (one dense block)")
        if self.strict:
            raise NotImplementedError(f"{what}; strict=True makes this an error. Pass "
                                      "strict=False to accept the dense block.")
        warnings.warn(f"{what}. The pattern never misses a nonzero, but may hold many extra "
                      "ones; strict=True makes this an error.", SparsityWarning, stacklevel=4)
        return P.dense_block

    def custom_function(self, cls: Any, values: list[Any], pats: list[Any], outs: list[Any],
                        diff: list[bool]) -> list[Any]:
        """The patterns of a custom ``Function``'s results: its ``sparsity_pattern``
        staticmethod if it has one, else one dense block (warned of, as for a primitive)."""
        call = P.Call(cls.__name__, cls.forward, [_value(v) for v in values], list(pats),
                      tuple(_value(o) for o in outs), {}, self.n)
        rule = getattr(cls, "sparsity_pattern", None)
        if rule is None:
            result = self.no_rule(cls.__name__)(call, self.second)
        else:
            result = rule(*pats, n=self.n)
            result = (result,) if sp.issparse(result) else tuple(result)
            if len(result) != len(outs):
                raise ValueError(f"{cls.__name__}.sparsity_pattern returned {len(result)} "
                                 f"pattern(s) for {len(outs)} output(s); return one per output")
            result = tuple(P.as_pattern(r) for r in result)
            if self.second is not None:  # (a user's rule says nothing of second order)
                P.dense_block(call, self.second)
        return [r if d else None for r, d in zip(result, diff, strict=True)]


def _value(a: Any) -> Any:
    """The plain array inside ``a`` (a Tensor at any levels), or ``a`` as it is."""
    return innermost(a)._data if a.__class__ is Tensor else a


def _elementwise_rule(prim: Any, call: P.Call) -> P.Rule:
    """The rule of an elementwise function. From its derivative formulas where it has them
    (a formula ``"0"`` carries nothing; formula i reading operand j, or the result, joins
    i and j); a piecewise-linear one joins nothing for real operands; a function with no
    formulas joins every pair."""
    nin = len(call.values)
    complex_in = any(np.iscomplexobj(v) for v in call.values)
    formulas = getattr(prim, "formulas", None)
    if not formulas or len(formulas) != nin:  # (abs, sign, scipy.special's own rules)
        carries = [not (prim.name in P.ZERO_FOR_REAL and not complex_in)] * nin
        joins: list[tuple[int, int]] = [(i, j) for i in range(nin) for j in range(i, nin)]
    else:
        carries = [f != "0" for f in formulas]
        joins = []
        for i, reads in enumerate(prim.reads):
            for r in reads if carries[i] else ():
                joins += [(i, j) for j in range(nin) if carries[j]] if r == "out" else \
                    [(i, r)] if isinstance(r, int) and carries[r] else []
    if (prim.name in P.PIECEWISE_LINEAR or not any(carries)) and not complex_in:
        joins = []
    return lambda call, second: P.elementwise(call, second, carries=carries, joins=joins)


def _trace(func: Callable[..., Any], x: Any, strict: bool, second: bool, what: str
           ) -> tuple[sp.csr_array, P.Interactions | None, int]:
    """Run ``func`` on ``x`` at a new pattern level; the output's pattern, the pairs."""
    x = x if isinstance(x, Tensor) else _make(np.asarray(x, dtype=np.result_type(x, 1.0)))
    n = int(x.size)
    pairs = P.Interactions(n) if second else None
    level = levels.enter(lambda L: PatternLevel(L, n, strict, pairs))
    try:
        y = func(dual(level, x, P.identity(n)))
        if isinstance(y, Tensor) and y._level == level:
            pattern = y._tangent
        elif isinstance(y, Tensor) or hasattr(y, "shape") or isinstance(y, (int, float, complex)):
            pattern = P.empty(int(np.size(_value(y))), n)  # (a constant: depends on nothing)
        else:
            raise TypeError(f"{what}: func must return one array (a Tensor or an ndarray); "
                            f"it returned {type(y).__name__}")
    finally:
        levels.exit(level, what)
    return pattern, pairs, n


def jacobian_sparsity(func: Callable[..., Any], x: Any, *, strict: bool = False
                      ) -> sp.csr_array:
    """The sparsity pattern of the Jacobian of ``func`` at ``x``, traced, not sampled.

    ``func`` runs once on ``x`` with its real values (control flow and indexing see them),
    carrying for each value the set of input elements each of its elements depends on.
    The pattern never misses a nonzero; it may hold entries that are zero at every point
    (a cancellation), and it is the union over both branches of ``where``, ``maximum``
    and ``clip``, so it holds at other points too. Control flow on values (an ``if``)
    follows the branch taken at ``x``.

    Parameters
    ----------
    func : a function of one array returning one array.
    x : the point (an array-like or a Tensor).
    strict : raise ``NotImplementedError`` for a primitive without a pattern rule, rather
        than warn (:class:`SparsityWarning`) and take it as one dense block.

    Returns
    -------
    scipy.sparse.csr_array of bool, shape ``(y.size, x.size)``: entry ``(i, j)`` is True
    where element i of ``y = func(x)`` (C order) may depend on element j of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> F.jacobian_sparsity(lambda x: x[1:] * x[:-1], np.ones(4)).toarray()
    array([[ True,  True, False, False],
           [False,  True,  True, False],
           [False, False,  True,  True]])
    """
    return _trace(func, x, strict, False, "jacobian_sparsity")[0]


def hessian_sparsity(func: Callable[..., Any], x: Any, *, strict: bool = False
                     ) -> sp.csr_array:
    """The sparsity pattern of the Hessian of a scalar ``func`` at ``x``, traced.

    Besides the first-order patterns, the trace collects every pair ``(i, j)`` of input
    elements that a nonlinear step joins (a product joins its factors' elements, a
    nonlinear function its operand's elements with each other; linear and piecewise-linear
    steps join none). The result is the union of those pairs among the inputs the output
    depends on: it never misses a nonzero of the Hessian, and may hold extra ones where
    a nonlinear intermediate reaches the output only through a step that cancels it.

    Parameters
    ----------
    func : a function of one array returning a scalar (an array of one element).
    x : the point (an array-like or a Tensor).
    strict : as for :func:`jacobian_sparsity`.

    Returns
    -------
    scipy.sparse.csr_array of bool, shape ``(x.size, x.size)``, symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> import dualad.functional as F
    >>> F.hessian_sparsity(lambda x: (x[0] * x[1] + np.sin(x[2])).sum(), np.ones(3)).toarray()
    array([[False,  True, False],
           [ True, False, False],
           [False, False,  True]])
    """
    first, pairs, n = _trace(func, x, strict, True, "hessian_sparsity")
    if first.shape[0] != 1:
        raise ValueError(f"hessian_sparsity: func must return a scalar (one element); it "
                         f"returned {first.shape[0]} elements. For a vector function, take "
                         "the Hessian pattern of each element, or of their sum (the union).")
    reach = np.zeros(n, bool)  # (the inputs the output depends on)
    reach[first.indices] = True
    h = pairs.pattern().tocoo()
    keep = reach[h.row] & reach[h.col]
    return sp.csr_array((h.data[keep], (h.row[keep], h.col[keep])), shape=(n, n))
