"""Symbolic cross-checking of dualad derivatives with SymPy.

This module is optional: ``import dualad`` never imports SymPy, only
``import dualad.sympy`` does (SymPy is the ``[sympy]`` extra).

It offers two things:

:func:`lambdify`
    Turns a SymPy expression, a list of them or a ``Matrix`` into a Python
    function of dualad Tensors that computes with ``dualad.numpy`` operations,
    so forward mode, reverse mode and :mod:`dualad.functional` all work on it.

:func:`check`
    Evaluates dualad's gradient / Jacobian and Hessian of such a function by
    every differentiation mode dualad has and compares each with SymPy's
    symbolic derivatives (``sympy.diff``) at given or random points, returning
    a :class:`CrossCheckReport` (``str(report)`` is a table, ``report.ok``).

Two tables are public so that other tests can reuse them:

``SYMPY_FUNCTIONS``
    ``dualad.numpy`` function name -> SymPy callable computing the same
    mathematical function (``"arcsin" -> sympy.asin``, ``"sinc"`` -> NumPy's
    *normalised* sinc, ...). dualad's own elementwise rule table is checked
    against ``sympy.diff`` through it.
``DUALAD_FUNCTIONS``
    SymPy function class -> dualad implementation; the converse table that
    :func:`lambdify` uses.

Examples
--------
>>> import sympy
>>> import dualad.sympy as dsym
>>> x, y = sympy.symbols("x y", real=True)
>>> report = dsym.check(sympy.sin(x) * sympy.exp(y), [x, y], n_points=2)
>>> report.ok
True
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import reduce
from typing import Any

import numpy as np
import sympy

import dualad as da
import dualad.numpy as dnp

from ._sympy_functions import (  # noqa: F401  (the counterpart tables, re-exported)
    _HALF,
    DUALAD_FUNCTIONS,
    SCIPY_SPECIAL_FUNCTIONS,
    SYMPY_FUNCTIONS,
    UnsupportedFunctionError,
    _dnp,
    _primal,
)

__all__ = [
    "DUALAD_FUNCTIONS",
    "HESSIAN_MODES",
    "JACOBIAN_MODES",
    "SYMPY_FUNCTIONS",
    "CrossCheckEntry",
    "CrossCheckError",
    "CrossCheckReport",
    "LambdifiedFunction",
    "UnsupportedFunctionError",
    "check",
    "lambdify",
]

# Functions whose derivative SymPy leaves unevaluated (``Derivative(floor(x), x)``)
# although it is 0 almost everywhere; the reference derivatives replace those by 0.
_PIECEWISE_CONSTANT = (sympy.floor, sympy.ceiling, sympy.sign, sympy.Heaviside, sympy.frac)


class CrossCheckError(AssertionError):
    """Raised by :func:`check` with ``raise_on_failure=True``; the message is the
    report table and ``.report`` the :class:`CrossCheckReport`.

    Examples
    --------
    >>> import sympy, dualad.sympy as dsym
    >>> x = sympy.Symbol("x", real=True)
    >>> issubclass(dsym.CrossCheckError, AssertionError)
    True
    >>> dsym.check(sympy.sin(x), [x], raise_on_failure=True).ok  # passes: nothing raised
    True
    """

    def __init__(self, report: CrossCheckReport) -> None:
        super().__init__(str(report))
        self.report = report


# ---------------------------------------------------------------------------
# lambdify
# ---------------------------------------------------------------------------

_Node = Callable[[list[Any]], Any]

_RELATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def _constant(expr: sympy.Expr) -> float | complex:
    """A symbol-free SymPy number as a Python float (or complex if not real)."""
    if expr is sympy.oo:
        return math.inf
    if expr is sympy.S.NegativeInfinity:
        return -math.inf
    if expr is sympy.zoo or expr is sympy.nan:
        return math.nan
    try:
        value = complex(expr.evalf(20))
    except TypeError as exc:  # e.g. an undefined function of a number
        raise UnsupportedFunctionError(
            f"cannot evaluate the constant {expr} numerically"
        ) from exc
    return value.real if value.imag == 0 else value


def _function_name(expr: sympy.Basic) -> str:
    return getattr(expr.func, "__name__", str(expr.func))


class _Compiler:
    """Compiles a SymPy tree into a straight-line program of dualad calls.

    Every distinct subexpression becomes one instruction (memoised by SymPy's
    structural equality), so shared subexpressions are computed once - this
    matters for derivatives, whose graphs would otherwise duplicate work.
    """

    def __init__(
        self, symbols: Sequence[sympy.Symbol], functions: Mapping[Any, Callable[..., Any]]
    ) -> None:
        self.program: list[_Node] = []
        self.index: dict[sympy.Basic, int] = {}
        self.functions = functions
        for k, s in enumerate(symbols):
            self.index[s] = k
        self.n_inputs = len(symbols)

    def _emit(self, expr: sympy.Basic, node: _Node) -> int:
        self.program.append(node)
        k = self.n_inputs + len(self.program) - 1
        self.index[expr] = k
        return k

    def compile(self, expr: sympy.Basic) -> int:
        if expr in self.index:
            return self.index[expr]
        if isinstance(expr, sympy.Symbol):
            raise ValueError(
                f"free symbol {expr} is not among the symbols given to lambdify"
            )
        if isinstance(expr, (sympy.Expr,)) and expr.is_number and not self._has_custom(expr):
            if isinstance(expr, sympy.Integer):
                c: Any = int(expr)
            else:
                c = _constant(expr)
            return self._emit(expr, lambda vals, c=c: c)
        if isinstance(expr, sympy.Add):
            ks = [self.compile(a) for a in expr.args]
            return self._emit(expr, lambda v, ks=ks: reduce(operator.add, (v[k] for k in ks)))
        if isinstance(expr, sympy.Mul):
            return self._compile_mul(expr)
        if isinstance(expr, sympy.Pow):
            return self._compile_pow(expr)
        if isinstance(expr, sympy.Piecewise):
            return self._compile_piecewise(expr)
        if isinstance(expr, (sympy.Derivative, sympy.Integral, sympy.Subs)):
            raise UnsupportedFunctionError(
                f"dualad.sympy.lambdify: unevaluated {type(expr).__name__} in {expr}; "
                "call .doit() first"
            )
        impl = self._lookup(expr.func)
        if impl is None or not isinstance(expr, sympy.Expr):
            name = _function_name(expr)
            raise UnsupportedFunctionError(
                f"dualad.sympy.lambdify: SymPy function {name!r} (in {expr}) has no "
                f"dualad counterpart, so dualad cannot differentiate it. Pass "
                f"functions={{{name}: <dualad implementation>}} to supply one."
            )
        ks = [self.compile(a) for a in expr.args]
        return self._emit(expr, lambda v, ks=ks, f=impl: f(*(v[k] for k in ks)))

    def _has_custom(self, expr: sympy.Basic) -> bool:
        # A user-supplied implementation must be used even on constants (a test
        # may override sympy.sin to check its derivative), so do not fold those.
        return any(
            isinstance(e, sympy.Function) and self._is_custom(e.func)
            for e in sympy.preorder_traversal(expr)
        )

    def _is_custom(self, func: Any) -> bool:
        return func in self.functions or getattr(func, "__name__", None) in self.functions

    def _lookup(self, func: Any) -> Callable[..., Any] | None:
        if func in self.functions:
            return self.functions[func]
        name = getattr(func, "__name__", None)
        if name is not None and name in self.functions:
            return self.functions[name]
        return DUALAD_FUNCTIONS.get(func)

    def _compile_mul(self, expr: sympy.Mul) -> int:
        # Collect factors with a negative numeric exponent into a denominator:
        # x/y is computed as a division rather than x * y**-1 (one rounding less,
        # and reciprocal-free derivative graphs).
        num: list[int] = []
        den: list[int] = []
        sign = 1
        for a in expr.args:
            if a == -1:
                sign = -sign
            elif isinstance(a, sympy.Pow) and a.exp.is_number and a.exp.is_negative:
                den.append(self.compile(a.base if a.exp == -1 else a.base ** (-a.exp)))
            else:
                num.append(self.compile(a))

        def node(v: list[Any], num: list[int] = num, den: list[int] = den) -> Any:
            top = reduce(operator.mul, (v[k] for k in num)) if num else 1.0
            if den:
                top = top / reduce(operator.mul, (v[k] for k in den))
            return -top if sign < 0 else top

        return self._emit(expr, node)

    def _compile_pow(self, expr: sympy.Pow) -> int:
        base, ex = expr.args
        kb = self.compile(base)
        if ex.is_number and not self._has_custom(ex):
            if ex == _HALF:
                sqrt = _dnp("sqrt")
                return self._emit(expr, lambda v: sqrt(v[kb]))
            if ex == -1:
                return self._emit(expr, lambda v: 1.0 / v[kb])
            if ex == -_HALF:
                sqrt = _dnp("sqrt")
                return self._emit(expr, lambda v: 1.0 / sqrt(v[kb]))
            # Integer exponents stay Python ints: power(x, 3) is defined for
            # negative x, and its derivative rule needs no log(x).
            e: Any = int(ex) if ex.is_Integer else _constant(ex)
            power = _dnp("power")
            return self._emit(expr, lambda v: power(v[kb], e))
        ke = self.compile(ex)
        power = _dnp("power")
        return self._emit(expr, lambda v: power(v[kb], v[ke]))

    def _compile_condition(self, cond: sympy.Basic) -> Callable[[list[Any]], Any]:
        # Conditions select branches; they are not differentiated, so they are
        # evaluated on plain primal values with NumPy.
        if cond is sympy.true or cond == True:  # noqa: E712 - SymPy's true
            return lambda v: True
        if cond is sympy.false or cond == False:  # noqa: E712
            return lambda v: False
        if isinstance(cond, sympy.core.relational.Relational):
            op = _RELATIONS.get(cond.rel_op)
            if op is None:
                raise UnsupportedFunctionError(f"unsupported relation {cond.rel_op!r} in {cond}")
            kl, kr = self.compile(cond.lhs), self.compile(cond.rhs)
            return lambda v: op(_primal(v[kl]), _primal(v[kr]))
        logic = {
            sympy.And: np.logical_and,
            sympy.Or: np.logical_or,
            sympy.Xor: np.logical_xor,
        }
        if cond.func in logic:
            parts = [self._compile_condition(a) for a in cond.args]
            f = logic[cond.func]
            return lambda v: reduce(f, (p(v) for p in parts))
        if cond.func is sympy.Not:
            inner = self._compile_condition(cond.args[0])
            return lambda v: np.logical_not(inner(v))
        raise UnsupportedFunctionError(
            f"dualad.sympy.lambdify: unsupported condition {_function_name(cond)!r} in {cond}"
        )

    def _compile_piecewise(self, expr: sympy.Piecewise) -> int:
        branches = [(self.compile(e), self._compile_condition(c)) for e, c in expr.args]
        where = _dnp("where")

        def node(v: list[Any]) -> Any:
            # SymPy takes the first true condition, and is nan where none holds:
            # fold from the last branch outwards.
            out: Any = math.nan
            for k, cond in reversed(branches):
                c = cond(v)
                if c is True or (np.ndim(c) == 0 and bool(c)):
                    out = v[k]
                elif c is False or (np.ndim(c) == 0 and not bool(c)):
                    continue
                else:
                    out = where(c, v[k], out)
            return out

        return self._emit(expr, node)


def _as_array(exprs: Any) -> tuple[list[sympy.Basic], tuple[int, ...] | None]:
    """Flatten exprs; shape None means a single expression (not a container)."""
    if isinstance(exprs, sympy.MatrixBase):
        return [sympy.sympify(e) for e in exprs], tuple(exprs.shape)
    if isinstance(exprs, (list, tuple)):
        exprs = sympy.Array(exprs)  # checks that nested lists are rectangular
    if isinstance(exprs, sympy.NDimArray):
        # (iterating a SymPy Array yields rows, not elements)
        shape = tuple(exprs.shape)
        return [sympy.sympify(exprs[i]) for i in np.ndindex(*shape)], shape
    if isinstance(exprs, np.ndarray):
        return [sympy.sympify(e) for e in exprs.ravel()], tuple(exprs.shape)
    return [sympy.sympify(exprs)], None


def _flatten_symbols(symbols: Any) -> tuple[list[sympy.Symbol], list[Any]]:
    """Flat list of symbols, and the argument structure (a symbol or a list)."""
    if isinstance(symbols, sympy.Symbol):
        return [symbols], [symbols]
    if isinstance(symbols, sympy.MatrixBase):
        symbols = [list(symbols)]
    flat: list[sympy.Symbol] = []
    structure: list[Any] = []
    for s in symbols:
        if isinstance(s, sympy.Symbol):
            flat.append(s)
            structure.append(s)
        elif isinstance(s, (list, tuple, sympy.MatrixBase)):
            group = list(s)
            if not all(isinstance(g, sympy.Symbol) for g in group):
                raise TypeError(f"lambdify: symbol groups must hold Symbols, got {s!r}")
            flat.extend(group)
            structure.append(group)
        else:
            raise TypeError(f"lambdify: expected a SymPy Symbol or a list of them, got {s!r}")
    if len(set(flat)) != len(flat):
        raise ValueError(f"lambdify: repeated symbol in {symbols!r}")
    return flat, structure


def _to_tensor(a: Any) -> Any:
    if isinstance(a, da.Tensor):
        return a
    arr = np.asarray(a)
    if arr.dtype.kind in "biu":  # integer inputs would break power(x, -1), sqrt
        arr = arr.astype(np.float64)
    return da.as_tensor(arr)


class LambdifiedFunction:
    """A SymPy expression compiled to dualad operations; see :func:`lambdify`.

    Attributes
    ----------
    exprs : the expression(s) as given.
    symbols : the argument structure as given.
    out_shape : shape of the container of expressions, ``()`` for one.

    Examples
    --------
    >>> import sympy, dualad.sympy as dsym
    >>> x, y = sympy.symbols("x y")
    >>> f = dsym.lambdify(x * y**2, [x, y])
    >>> f(dualad.tensor(2.0), dualad.tensor(3.0))
    tensor(18.)
    """

    def __init__(
        self,
        exprs: Any,
        symbols: Any,
        functions: Mapping[Any, Callable[..., Any]] | None = None,
    ) -> None:
        self.exprs = exprs
        self.symbols = symbols
        flat_exprs, shape = _as_array(exprs)
        self._container_shape = shape
        self.out_shape: tuple[int, ...] = () if shape is None else shape
        self._flat_symbols, self._structure = _flatten_symbols(symbols)
        free = set().union(*(e.free_symbols for e in flat_exprs)) - set(self._flat_symbols)
        if free:
            names = ", ".join(sorted(map(str, free)))
            raise ValueError(f"lambdify: expression has free symbols not in symbols: {names}")
        comp = _Compiler(self._flat_symbols, dict(functions or {}))
        self._outputs = [comp.compile(e) for e in flat_exprs]
        self._program = comp.program

    def __repr__(self) -> str:
        return f"<dualad.sympy.lambdify of {self.exprs} in {self.symbols}>"

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self._structure):
            raise TypeError(
                f"expected {len(self._structure)} positional argument(s) "
                f"({self._structure}), got {len(args)}"
            )
        values: list[Any] = []
        for spec, a in zip(self._structure, args, strict=True):
            t = _to_tensor(a)
            if isinstance(spec, list):
                if t.ndim == 0 or t.shape[0] != len(spec):
                    raise ValueError(
                        f"argument for symbols {spec} must have leading axis "
                        f"{len(spec)}, got shape {t.shape}"
                    )
                values.extend(t[i] for i in range(len(spec)))
            else:
                values.append(t)
        # Every output element has the broadcast shape of all the inputs, so a
        # constant entry (say a 0 in a Jacobian matrix) broadcasts like the rest.
        bshape = np.broadcast_shapes(*(tuple(v.shape) for v in values)) if values else ()
        for node in self._program:
            values.append(node(values))
        outs = [values[k] for k in self._outputs]
        outs = [self._fit(o, bshape) for o in outs]
        if self._container_shape is None:
            return outs[0]
        stacked = dnp.stack(outs, axis=0)
        return stacked.reshape(self._container_shape + bshape)

    @staticmethod
    def _fit(o: Any, bshape: tuple[int, ...]) -> Any:
        if isinstance(o, da.Tensor) and tuple(o.shape) == bshape:
            return o
        if not isinstance(o, da.Tensor):
            o = da.as_tensor(np.asarray(o, dtype=np.result_type(o, np.float64)))
        return dnp.broadcast_to(o, bshape)


def lambdify(
    exprs: Any,
    symbols: Any,
    *,
    functions: Mapping[Any, Callable[..., Any]] | None = None,
) -> LambdifiedFunction:
    """Turn SymPy expression(s) into a dualad-differentiable function.

    The name mirrors :func:`sympy.lambdify` - same arguments, same calling
    convention - but where SymPy's version prints NumPy code (which dualad
    cannot see through), this one walks the expression tree and calls
    ``dualad.numpy`` functions, so forward mode, reverse mode and
    :mod:`dualad.functional` all differentiate the result.

    Parameters
    ----------
    exprs : sympy.Expr, list/tuple (possibly nested, rectangular), Matrix or Array
        What to compute. A container gives one Tensor whose leading axes are the
        container's shape (a ``Matrix`` of shape ``(m, n)`` gives ``(m, n)``).
    symbols : Symbol or sequence
        One positional argument of the function per entry. An entry may itself
        be a list of symbols (or a ``Matrix`` of them): that argument is then
        one Tensor whose leading axis is unpacked, ``arg[i]`` for the i-th
        symbol - as ``sympy.lambdify`` does with nested ``args``. So
        ``lambdify(e, [x, y])`` takes ``f(x, y)`` and ``lambdify(e, [[x, y]])``
        takes a single vector ``f(v)``.
    functions : mapping, optional
        Extra or overriding implementations: SymPy function class (or its name)
        -> callable on dualad Tensors. Use it for functions dualad lacks, or to
        test a custom ``da.Function``. Overrides apply even to constant
        subexpressions.

    Returns
    -------
    LambdifiedFunction
        Callable on Tensors, ndarrays or numbers (broadcasting elementwise);
        returns a :class:`dualad.Tensor` of shape
        ``container_shape + broadcast(argument shapes)``.

    Raises
    ------
    UnsupportedFunctionError
        (a ``NotImplementedError`` and ``TypeError``) naming a SymPy function
        that has no dualad counterpart, e.g. ``gamma`` or an undefined
        ``Function('f')``.
    ValueError
        If the expressions have free symbols not listed in ``symbols``.

    Notes
    -----
    Supported: numbers and constants (``pi``, ``E``, ``I``, ``Rational``,
    ``Float``), ``+ - * /``, powers (``sqrt``, integer, rational and symbolic
    exponents), the functions of :data:`DUALAD_FUNCTIONS` (elementary,
    trigonometric, hyperbolic and their inverses, ``Abs``, ``sign``,
    ``Max``/``Min``, ``floor``/``ceiling``, ``Heaviside``, ``re``/``im``/
    ``conjugate``/``arg``, ``sinc``) and ``Piecewise`` (via ``dualad.numpy.where``;
    conditions are evaluated on primal values, so they are never
    differentiated). Every branch is evaluated everywhere, as with
    ``numpy.where``, so a branch undefined at a point may emit NumPy warnings
    there even though it is not selected.

    Examples
    --------
    >>> import sympy
    >>> import dualad as da
    >>> from dualad.sympy import lambdify
    >>> x, y = sympy.symbols("x y")
    >>> f = lambdify(sympy.sin(x) * y, [x, y])
    >>> a = da.tensor(0.5, requires_grad=True)
    >>> out = f(a, 2.0)
    >>> (g,) = da.grad(out, a)
    >>> float(g)  # 2 cos(0.5)
    1.7551651237807455
    >>> J = lambdify(sympy.Matrix([[x * y, x + y]]), [[x, y]])
    >>> J(da.tensor([2.0, 3.0])).shape
    (1, 2)
    """
    return LambdifiedFunction(exprs, symbols, functions)


# ---------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------

JACOBIAN_MODES = ("forward", "reverse", "functional-rev", "functional-fwd")
HESSIAN_MODES = ("forward", "reverse", "fwd-over-rev", "functional-rev", "functional-fwd")
_MODE_HELP = {
    "forward": "forward mode: one dual level per direction (nested levels for Hessians)",
    "reverse": "reverse mode: da.grad (create_graph=True, then da.grad again, for Hessians)",
    "fwd-over-rev": "da.grad inside a dual level: the gradient's tangent is H v",
    "functional-rev": "dualad.functional.jacobian / hessian, reverse-mode strategy",
    "functional-fwd": "dualad.functional.jacobian / hessian, vectorize=True, forward-mode",
}


@dataclass
class CrossCheckEntry:
    """One row of a :class:`CrossCheckReport`.

    Attributes
    ----------
    derivative : ``"value"``, ``"gradient"`` (scalar output), ``"jacobian"`` or ``"hessian"``.
    mode : how dualad computed it (``"forward"``, ``"reverse"``, ...).
    max_abs_err, max_rel_err : over all points and entries (``nan`` on error).
        The relative error is taken over entries whose reference is nonzero.
    ok : every entry satisfies ``|got - ref| <= atol + rtol * |ref|``.
    worst_point : index of the point with the worst entry.
    worst_index : index of that entry inside the derivative, e.g. ``(0, 2)`` for
        ``d out[0] / d symbols[2]``.
    got, expected : dualad's and SymPy's value there.
    error : the exception text if dualad raised instead.
    values : dualad's values, shape ``(n_points,) + derivative shape``.

    Examples
    --------
    >>> import sympy, dualad.sympy as dsym
    >>> x = sympy.Symbol("x", real=True)
    >>> entry = dsym.check(x**3, [x], order=1)["gradient", "reverse"]
    >>> entry.mode, entry.ok, entry.max_abs_err < 1e-12
    ('reverse', True, True)
    """

    derivative: str
    mode: str
    max_abs_err: float
    max_rel_err: float
    ok: bool
    worst_point: int | None = None
    worst_index: tuple[int, ...] | None = None
    got: complex | float | None = None
    expected: complex | float | None = None
    error: str | None = None
    values: np.ndarray | None = field(default=None, repr=False)


@dataclass
class CrossCheckReport:
    """Result of :func:`check`: one :class:`CrossCheckEntry` per derivative and mode.

    ``str(report)`` is a text table; ``report.ok`` is True when every entry
    passed; ``report["gradient", "reverse"]`` looks up one entry (``"gradient"``
    and ``"jacobian"`` are interchangeable).

    Attributes
    ----------
    symbols : the differentiation variables.
    points : array ``(n_points, n_symbols)`` of the evaluation points.
    out_shape : shape of the expression container (``()`` for one expression).
    reference : SymPy's values, ``{"value": ..., "jacobian": ..., "hessian": ...}``,
        each of shape ``(n_points,) + out_shape (+ (n,) or (n, n))``.
    entries : list of :class:`CrossCheckEntry`.

    Examples
    --------
    >>> import sympy, dualad.sympy as dsym
    >>> x = sympy.Symbol("x", real=True)
    >>> report = dsym.check(sympy.exp(x), [x], n_points=2)
    >>> report.ok, report.points.shape, len(report.failures)
    (True, (2, 1), 0)
    """

    exprs: Any
    symbols: tuple[sympy.Symbol, ...]
    points: np.ndarray
    out_shape: tuple[int, ...]
    rtol: float
    atol: float
    reference: dict[str, np.ndarray]
    entries: list[CrossCheckEntry]

    @property
    def ok(self) -> bool:
        return all(e.ok for e in self.entries)

    @property
    def failures(self) -> list[CrossCheckEntry]:
        return [e for e in self.entries if not e.ok]

    def __getitem__(self, key: tuple[str, str]) -> CrossCheckEntry:
        derivative, mode = key
        aliases = {"gradient": "jacobian", "jacobian": "jacobian"}
        want = aliases.get(derivative, derivative)
        for e in self.entries:
            if aliases.get(e.derivative, e.derivative) == want and e.mode == mode:
                return e
        raise KeyError(key)

    def __str__(self) -> str:
        names = ", ".join(map(str, self.symbols))
        shape = "scalar" if self.out_shape == () else f"shape {self.out_shape}"
        lines = [
            f"dualad.sympy cross-check of {_short(self.exprs)}",
            f"  w.r.t. ({names}); output {shape}; {len(self.points)} point(s); "
            f"rtol={self.rtol:g} atol={self.atol:g}",
        ]
        header = (
            f"  {'derivative':<10} {'mode':<15} {'max abs err':>12} {'max rel err':>12}  status"
        )
        lines += [header, "  " + "-" * (len(header) - 2)]
        for e in self.entries:
            if e.error is not None:
                status = f"ERROR {e.error}"
            elif e.ok:
                status = "ok"
            else:
                status = (
                    f"FAIL at point {e.worst_point}, entry {list(e.worst_index or ())}: "
                    f"dualad {_fmt(e.got)} vs sympy {_fmt(e.expected)}"
                )
            lines.append(
                f"  {e.derivative:<10} {e.mode:<15} {_fmt_err(e.max_abs_err):>12} "
                f"{_fmt_err(e.max_rel_err):>12}  {status}"
            )
        n_fail = len(self.failures)
        lines.append(
            "  => all passed" if n_fail == 0 else f"  => {n_fail} of {len(self.entries)} FAILED"
        )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<CrossCheckReport ok={self.ok} entries={len(self.entries)}>"


def _short(exprs: Any, limit: int = 70) -> str:
    s = str(exprs).replace("\n", " ")
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, complex) or np.iscomplexobj(v):
        v = complex(v)
        return f"{v.real:.6g}{v.imag:+.6g}j"
    return f"{float(v):.10g}"


def _fmt_err(v: float) -> str:
    return "-" if v is None or math.isnan(v) else f"{v:.3g}"


def _np(v: Any) -> np.ndarray:
    if v is None:
        return np.asarray(0.0)
    if isinstance(v, da.Tensor):
        return np.asarray(v.detach().numpy())
    return np.asarray(v)


def _tensor(a: np.ndarray, requires_grad: bool = False) -> Any:
    return da.tensor(np.array(a, dtype=np.float64), requires_grad=requires_grad)


def _tangent(y: Any, level: int | None = None) -> np.ndarray:
    if not isinstance(y, da.Tensor):
        return np.zeros(np.shape(y))
    t = da.unpack_dual(y, level=level).tangent
    return np.zeros(tuple(y.shape)) if t is None else _np(t)


class _Target:
    """The function under test in the form the modes need: R^n -> R^m (flat).

    A complex-valued expression is split into real and imaginary parts, each a
    real function, so reverse mode never needs a complex cotangent convention:
    J = J_re + i J_im, H = H_re + i H_im.
    """

    def __init__(self, fvec: Callable[[Any], Any], n: int, m: int, is_complex: bool) -> None:
        self.fvec, self.n, self.m, self.is_complex = fvec, n, m, is_complex

    def flat(self, x: Any) -> Any:
        return self.fvec(x).reshape(self.m)

    def parts(self) -> list[Callable[[Any], Any]]:
        if not self.is_complex:
            return [self.flat]
        return [lambda x: dnp.real(self.flat(x)), lambda x: dnp.imag(self.flat(x))]

    def combine(self, parts: list[np.ndarray]) -> np.ndarray:
        return parts[0] if len(parts) == 1 else parts[0] + 1j * parts[1]


def _unit(n: int, i: int) -> np.ndarray:
    e = np.zeros(n)
    e[i] = 1.0
    return e


def _grad_or_zero(out: Any, x: Any, v: np.ndarray, **kw: Any) -> np.ndarray:
    """d<v, out>/dx, treating 'out does not depend on x' as zero."""
    if not (isinstance(out, da.Tensor) and out.requires_grad):
        return np.zeros(tuple(x.shape))
    (g,) = da.grad(out, x, grad_outputs=_tensor(v), allow_unused=True, **kw)
    return np.zeros(tuple(x.shape)) if g is None else _np(g)


# --- Jacobians, each returns (m, n) -------------------------------------------


def _jac_forward(t: _Target, x0: np.ndarray) -> np.ndarray:
    J = np.zeros((t.m, t.n), dtype=complex if t.is_complex else float)
    for j in range(t.n):
        with da.dual_level():
            y = t.flat(da.make_dual(_tensor(x0), _tensor(_unit(t.n, j))))
            J[:, j] = _tangent(y)
    return J


def _jac_reverse(t: _Target, x0: np.ndarray) -> np.ndarray:
    parts = []
    for f in t.parts():
        x = _tensor(x0, requires_grad=True)
        y = f(x)
        parts.append(
            np.stack([_grad_or_zero(y, x, _unit(t.m, k), retain_graph=True) for k in range(t.m)])
        )
    return t.combine(parts)


def _functional() -> Any:
    import dualad.functional as F  # imported lazily: developed separately

    return F


def _jac_functional(t: _Target, x0: np.ndarray, forward: bool) -> np.ndarray:
    F = _functional()
    kw: dict[str, Any] = {"vectorize": True, "strategy": "forward-mode"} if forward else {}
    parts = [_np(F.jacobian(f, _tensor(x0), **kw)).reshape(t.m, t.n) for f in t.parts()]
    return t.combine(parts)


# --- Hessians, each returns (m, n, n) ----------------------------------------


def _hess_forward(t: _Target, x0: np.ndarray) -> np.ndarray:
    H = np.zeros((t.m, t.n, t.n), dtype=complex if t.is_complex else float)
    for j in range(t.n):
        for i in range(t.n):
            with da.dual_level() as outer:
                xo = da.make_dual(_tensor(x0), _tensor(_unit(t.n, j)), level=outer)
                with da.dual_level() as inner:
                    xi = da.make_dual(xo, _tensor(_unit(t.n, i)), level=inner)
                    y = t.flat(xi)
                    ti = da.unpack_dual(y, level=inner).tangent
                    H[:, i, j] = 0.0 if ti is None else _tangent(ti, level=outer)
    return H


def _hess_reverse(t: _Target, x0: np.ndarray) -> np.ndarray:
    parts = []
    for f in t.parts():
        H = np.zeros((t.m, t.n, t.n))
        x = _tensor(x0, requires_grad=True)
        y = f(x)
        for k in range(t.m):
            if not (isinstance(y, da.Tensor) and y.requires_grad):
                continue
            (g,) = da.grad(
                y, x, grad_outputs=_tensor(_unit(t.m, k)), create_graph=True,
                retain_graph=True, allow_unused=True,
            )
            if g is None or not g.requires_grad:
                continue  # gradient constant in x: Hessian row is zero
            for i in range(t.n):
                H[k, i, :] = _grad_or_zero(g, x, _unit(t.n, i), retain_graph=True)
        parts.append(H)
    return t.combine(parts)


def _hess_fwd_over_rev(t: _Target, x0: np.ndarray) -> np.ndarray:
    parts = []
    for f in t.parts():
        H = np.zeros((t.m, t.n, t.n))
        for j in range(t.n):
            with da.dual_level():
                x = _tensor(x0, requires_grad=True)
                xd = da.make_dual(x, _tensor(_unit(t.n, j)))
                y = f(xd)
                if not (isinstance(y, da.Tensor) and y.requires_grad):
                    continue
                for k in range(t.m):
                    (g,) = da.grad(
                        y, xd, grad_outputs=_tensor(_unit(t.m, k)), retain_graph=True,
                        allow_unused=True,
                    )
                    if g is not None:
                        H[k, :, j] = _tangent(g)
        parts.append(H)
    return t.combine(parts)


def _hess_functional(t: _Target, x0: np.ndarray, forward: bool) -> np.ndarray:
    F = _functional()
    kw: dict[str, Any] = (
        {"vectorize": True, "outer_jacobian_strategy": "forward-mode"} if forward else {}
    )
    parts = []
    for f in t.parts():
        H = np.zeros((t.m, t.n, t.n))
        for k in range(t.m):
            # torch's hessian wants a scalar function: one output component at a time.
            H[k] = _np(F.hessian(lambda x, f=f, k=k: f(x)[k], _tensor(x0), **kw))
        parts.append(H)
    return t.combine(parts)


_JAC_IMPL: dict[str, Callable[[_Target, np.ndarray], np.ndarray]] = {
    "forward": _jac_forward,
    "reverse": _jac_reverse,
    "functional-rev": lambda t, x: _jac_functional(t, x, forward=False),
    "functional-fwd": lambda t, x: _jac_functional(t, x, forward=True),
}
_HESS_IMPL: dict[str, Callable[[_Target, np.ndarray], np.ndarray]] = {
    "forward": _hess_forward,
    "reverse": _hess_reverse,
    "fwd-over-rev": _hess_fwd_over_rev,
    "functional-rev": lambda t, x: _hess_functional(t, x, forward=False),
    "functional-fwd": lambda t, x: _hess_functional(t, x, forward=True),
}

# --- SymPy reference ----------------------------------------------------------


def _zero_piecewise_constant_derivatives(e: sympy.Expr) -> sympy.Expr:
    e = e.replace(
        lambda a: isinstance(a, sympy.Derivative) and a.expr.func in _PIECEWISE_CONSTANT,
        lambda a: sympy.Integer(0),
    )
    # The chain rule wraps them as Subs(Derivative(floor(u), u), u, 3*x): now Subs(0, ...).
    return e.replace(lambda a: isinstance(a, sympy.Subs), lambda a: a.doit())


def _evalf(e: sympy.Expr, subs: dict[sympy.Symbol, sympy.Float]) -> complex:
    v = e.evalf(30, subs=subs)
    if v.has(sympy.nan, sympy.zoo, sympy.oo, sympy.S.NegativeInfinity):
        return complex(math.nan, 0)
    try:
        return complex(v)
    except TypeError as exc:
        raise ValueError(
            f"dualad.sympy.check: SymPy could not evaluate {e} numerically (got {v})"
        ) from exc


class _Reference:
    """SymPy's value, Jacobian and Hessian of the flat outputs, evaluated at points."""

    def __init__(self, flat: list[sympy.Expr], symbols: list[sympy.Symbol], order: int) -> None:
        # Differentiate with respect to *real* symbols: the points are real, and
        # e.g. d|x|/dx is sign(x) only for real x (SymPy leaves re/im derivatives
        # unevaluated otherwise).
        self.vars = [s if s.is_real else sympy.Dummy(s.name, real=True) for s in symbols]
        rep = dict(zip(symbols, self.vars, strict=True))
        self.value = [e.xreplace(rep).doit() for e in flat]
        self.jac = [[sympy.diff(e, v) for v in self.vars] for e in self.value]
        self.hess = (
            [[[sympy.diff(d, v) for v in self.vars] for d in row] for row in self.jac]
            if order >= 2
            else None
        )
        fix = _zero_piecewise_constant_derivatives
        self.jac = [[fix(d) for d in row] for row in self.jac]
        if self.hess is not None:
            self.hess = [[[fix(d) for d in r] for r in row] for row in self.hess]

    def at(self, point: np.ndarray) -> dict[str, np.ndarray]:
        subs = {v: sympy.Float(float(p), 30) for v, p in zip(self.vars, point, strict=True)}
        out = {
            "value": np.array([_evalf(e, subs) for e in self.value]),
            "jacobian": np.array([[_evalf(d, subs) for d in row] for row in self.jac]),
        }
        if self.hess is not None:
            out["hessian"] = np.array(
                [[[_evalf(d, subs) for d in r] for r in row] for row in self.hess]
            )
        return out


def _acceptable(ref: dict[str, np.ndarray], complex_valued: bool) -> bool:
    """Finite, and real (up to rounding of the imaginary part) unless the
    expression is complex by construction (contains ``I``)."""
    for a in ref.values():
        if not np.all(np.isfinite(a)):
            return False
        if not complex_valued and np.any(
            np.abs(a.imag) > 1e-12 * np.maximum(1.0, np.abs(a.real))
        ):
            return False
    return True


def _default_interval(s: sympy.Symbol) -> tuple[float, float]:
    if s.is_positive:
        return (0.1, 2.0)
    if s.is_nonnegative:
        return (0.0, 2.0)
    if s.is_negative:
        return (-2.0, -0.1)
    if s.is_nonpositive:
        return (-2.0, 0.0)
    return (-2.0, 2.0)


def _intervals(
    symbols: list[sympy.Symbol], domain: Any
) -> list[tuple[float, float]]:
    if domain is None:
        return [_default_interval(s) for s in symbols]
    if isinstance(domain, Mapping):
        out = []
        for s in symbols:
            iv = domain.get(s, domain.get(str(s)))
            out.append(_default_interval(s) if iv is None else (float(iv[0]), float(iv[1])))
        return out
    lo, hi = domain
    return [(float(lo), float(hi))] * len(symbols)


def _given_points(at: Any, symbols: list[sympy.Symbol]) -> np.ndarray:
    n = len(symbols)
    if isinstance(at, Mapping):
        try:
            row = [at[s] if s in at else at[str(s)] for s in symbols]
        except KeyError as exc:
            raise ValueError(f"check: at= has no value for symbol {exc}") from exc
        return np.array([row], dtype=float)
    arr = np.asarray(at, dtype=float)
    if arr.ndim == 0 and n == 1:
        arr = arr.reshape(1, 1)
    elif arr.ndim == 1 and arr.shape[0] == n:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != n:
        raise ValueError(f"check: at= must be one point of {n} values or (k, {n}) points")
    return arr


def _compare(
    derivative: str,
    mode: str,
    got: np.ndarray,
    ref: np.ndarray,
    rtol: float,
    atol: float,
) -> CrossCheckEntry:
    if got.shape != ref.shape:
        return CrossCheckEntry(
            derivative, mode, math.nan, math.nan, False,
            error=f"shape {got.shape}, expected {ref.shape}", values=got,
        )
    diff = np.abs(got - ref)
    diff = np.where(np.isnan(diff), np.inf, diff)  # a NaN from dualad is a failure
    scale = np.abs(ref)
    excess = diff - (atol + rtol * scale)
    worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
    nonzero = scale > 0
    max_rel = float(np.max(diff[nonzero] / scale[nonzero])) if np.any(nonzero) else 0.0
    ok = bool(np.all(excess <= 0))

    def scalar(a: np.ndarray) -> complex | float:
        v = a[worst]
        return complex(v) if np.iscomplexobj(a) and v.imag != 0 else float(np.real(v))

    return CrossCheckEntry(
        derivative, mode, float(np.max(diff)), max_rel, ok,
        worst_point=int(worst[0]), worst_index=tuple(int(i) for i in worst[1:]),
        got=scalar(got), expected=scalar(ref), values=got,
    )


def check(
    exprs: Any,
    symbols: Any,
    at: Any = None,
    order: int = 2,
    *,
    n_points: int = 3,
    seed: int | None = 0,
    rtol: float = 1e-7,
    atol: float = 1e-10,
    domain: Any = None,
    raise_on_failure: bool = False,
    modes: Iterable[str] | None = None,
    func: Callable[..., Any] | None = None,
    functions: Mapping[Any, Callable[..., Any]] | None = None,
    max_tries: int = 200,
) -> CrossCheckReport:
    """Cross-check dualad's derivatives of SymPy expression(s) against ``sympy.diff``.

    The expression is compiled with :func:`lambdify` (or ``func`` is used) and
    its value, gradient / Jacobian and, for ``order=2``, Hessian are computed by
    each differentiation mode of dualad at every point, then compared with
    SymPy's symbolic derivatives evaluated to 30 digits at the same points.

    Parameters
    ----------
    exprs : sympy.Expr, list (possibly nested) or Matrix
        The function. The inputs are real (points are real vectors); the
        output may be complex if the expression contains ``I`` - its real and
        imaginary parts are then differentiated separately, so no complex
        cotangent convention is involved.
    symbols : sequence of Symbol (or one Symbol)
        The variables to differentiate with respect to, in order.
    at : mapping, sequence or array, optional
        Points: ``{x: 0.3, y: 1.0}``, one point ``[0.3, 1.0]``, or an array of
        shape ``(k, len(symbols))``. If omitted, ``n_points`` random points are
        drawn uniformly from ``domain``, rejecting points where SymPy's value or
        derivatives are not finite and real (e.g. ``log`` of a negative).
    order : {1, 2}
        Check the Jacobian only, or also the Hessian.
    n_points : int
        Number of random points (ignored when ``at`` is given).
    seed : int or None
        Seed of the random points.
    rtol, atol : float
        An entry passes when ``|dualad - sympy| <= atol + rtol * |sympy|``.
    domain : (lo, hi) or mapping Symbol -> (lo, hi), optional
        Sampling box. By default ``(-2, 2)``, or ``(0.1, 2)`` for symbols
        declared positive (``(-2, -0.1)`` negative).
    raise_on_failure : bool
        Raise :class:`CrossCheckError` (an ``AssertionError``) with the table
        instead of returning a failing report.
    modes : iterable of str, optional
        Subset of modes to run: ``"forward"``, ``"reverse"``, ``"fwd-over-rev"``
        (Hessian only), ``"functional-rev"`` (:func:`dualad.functional.jacobian`
        / ``hessian``, default strategy) and ``"functional-fwd"`` (``vectorize=True``
        with the forward-mode strategy). Default: all.
    func : callable, optional
        A dualad function to check *instead of* the lambdified expression,
        called with one Tensor per symbol (as a ``lambdify`` result would be);
        ``exprs`` is then only the reference.
    functions : mapping, optional
        Passed to :func:`lambdify` (e.g. to check a custom ``da.Function``).
    max_tries : int
        Random points drawn at most, before giving up with ``ValueError``.

    Returns
    -------
    CrossCheckReport
        One entry per (derivative, mode): ``("value", "primal")``, then
        ``"gradient"`` (scalar output) or ``"jacobian"``, then ``"hessian"``.
        A mode that raises is a failing entry showing the exception.

    Raises
    ------
    CrossCheckError
        With ``raise_on_failure=True``, if any entry fails.
    UnsupportedFunctionError
        If the expression uses a function dualad cannot differentiate.

    Notes
    -----
    Over 80 lines by its parameters' descriptions; each step is a helper.

    Examples
    --------
    >>> import sympy
    >>> from dualad.sympy import check
    >>> x, y = sympy.symbols("x y")
    >>> report = check(sympy.exp(x) * sympy.cos(y), [x, y], order=2, n_points=2)
    >>> report.ok, report["hessian", "reverse"].ok
    (True, True)
    >>> print(report)  # doctest: +SKIP
    dualad.sympy cross-check of exp(x)*cos(y)
      w.r.t. (x, y); output scalar; 2 point(s); rtol=1e-07 atol=1e-10
      derivative mode             max abs err  max rel err  status
      ...
    """
    if order not in (1, 2):
        raise ValueError(f"check: order must be 1 or 2, got {order}")
    syms = [symbols] if isinstance(symbols, sympy.Symbol) else list(symbols)
    if not all(isinstance(s, sympy.Symbol) for s in syms):
        raise TypeError("check: symbols must be SymPy Symbols")
    n = len(syms)
    flat, shape = _as_array(exprs)
    out_shape = () if shape is None else shape
    m = len(flat)

    # Compile first: an unsupported function should fail before any sampling.
    fvec = _vector_function(exprs, syms, func, functions)

    ref = _Reference(flat, syms, order)
    # A real expression can still be complex at some real points (log(-1));
    # those points are rejected. One containing I is complex by construction.
    complex_valued = any(e.has(sympy.I) for e in flat)

    points, refs = _reference_points(ref, syms, at, domain, seed, n_points, max_tries,
                                     complex_valued)
    reference = _stacked(refs, complex_valued, (len(points),) + out_shape, n)

    # Is dualad's output complex?  (Decides the real/imaginary split.)
    y0 = fvec(_tensor(points[0]))
    is_complex = bool(np.iscomplexobj(_np(y0)))
    target = _Target(fvec, n, m, is_complex)

    entries: list[CrossCheckEntry] = []
    # Value.
    try:
        got = np.stack([_np(fvec(_tensor(p))).reshape(out_shape) for p in points])
        entries.append(_compare("value", "primal", got, reference["value"], rtol, atol))
    except Exception as exc:  # noqa: BLE001 - reported, not swallowed
        entries.append(_error_entry("value", "primal", exc))

    entries += _derivative_entries(target, points, out_shape, n, reference, order, modes,
                                   is_complex, rtol, atol)
    report = CrossCheckReport(
        exprs=exprs, symbols=tuple(syms), points=points, out_shape=out_shape,
        rtol=rtol, atol=atol, reference=reference, entries=entries,
    )
    if raise_on_failure and not report.ok:
        raise CrossCheckError(report)
    return report


def _vector_function(exprs: Any, syms: list[Any], func: Callable[..., Any] | None,
                     functions: Mapping[Any, Callable[..., Any]] | None) -> Callable[[Any], Any]:
    """The function ``check`` differentiates, of one vector of the symbols' values:
    ``exprs`` compiled to dualad (``lambdify``), or the user's ``func`` of the symbols."""
    if func is None:
        return lambdify(exprs, [syms], functions=functions)
    n, user = len(syms), func

    def fvec(x: Any) -> Any:
        out = user(*(x[i] for i in range(n)))
        return out if isinstance(out, da.Tensor) else da.as_tensor(np.asarray(out))
    return fvec


def _reference_points(ref: Any, syms: list[Any], at: Any, domain: Any, seed: int | None,
                      n_points: int, max_tries: int, complex_valued: bool
                      ) -> tuple[np.ndarray, list[dict[str, np.ndarray]]]:
    """``check``'s points (those given ``at``, or ``n_points`` drawn in ``domain``) and
    SymPy's value and derivatives at each (``ref.at``), where those are acceptable."""
    n = len(syms)
    refs: list[dict[str, np.ndarray]] = []
    if at is not None:
        points = _given_points(at, syms)
        for p in points:
            r = ref.at(p)
            if not _acceptable(r, complex_valued):
                raise ValueError(
                    f"check: SymPy's value or derivatives are not finite and real at {list(p)}"
                )
            refs.append(r)
    else:
        rng = np.random.default_rng(seed)
        box = _intervals(syms, domain)
        lo = np.array([b[0] for b in box])
        hi = np.array([b[1] for b in box])
        pts = []
        for _ in range(max_tries):
            if len(pts) == n_points:
                break
            p = lo + (hi - lo) * rng.random(n)
            r = ref.at(p)
            if _acceptable(r, complex_valued):
                pts.append(p)
                refs.append(r)
        if len(pts) < n_points:
            raise ValueError(
                f"check: found only {len(pts)} of {n_points} points in the domain "
                f"{box} where SymPy's value and derivatives are finite and real "
                f"after {max_tries} tries; pass domain= or at="
            )
        points = np.array(pts).reshape(-1, n)

    return points, refs


def _stacked(refs: list[dict[str, np.ndarray]], complex_valued: bool, lead: tuple[int, ...],
             n: int) -> dict[str, np.ndarray]:
    """SymPy's values per point ``refs`` as one array per kind (value, jacobian, hessian),
    of shape ``lead`` (points, then the output's shape) and one axis of ``n`` per order."""
    n_axes = {"value": 0, "jacobian": 1, "hessian": 2}
    reference = {}
    for k in refs[0]:
        a = np.stack([r[k] for r in refs])
        reference[k] = (a if complex_valued else a.real).reshape(lead + (n,) * n_axes[k])
    return reference


def _derivative_entries(target: Any, points: np.ndarray, out_shape: tuple[int, ...], n: int,
                        reference: dict[str, np.ndarray], order: int,
                        modes: Iterable[str] | None, is_complex: bool, rtol: float,
                        atol: float) -> list[CrossCheckEntry]:
    """``check``'s entries for the derivatives: each of dualad's ways (``modes``, or all)
    of the Jacobian (and, with ``order`` 2, of the Hessian) against SymPy's."""
    entries: list[CrossCheckEntry] = []
    wanted = None if modes is None else list(modes)
    unknown = set(wanted or ()) - set(JACOBIAN_MODES) - set(HESSIAN_MODES)
    if unknown:
        raise ValueError(f"check: unknown modes {sorted(unknown)}")
    jname = "gradient" if out_shape == () else "jacobian"
    plans = [(jname, "jacobian", _JAC_IMPL, 1)]
    if order >= 2:
        plans.append(("hessian", "hessian", _HESS_IMPL, 2))
    for label, key, impls, k in plans:
        for mode, impl in impls.items():
            if wanted is not None and mode not in wanted:
                continue
            try:
                got = np.stack([impl(target, p) for p in points]).reshape(
                    (len(points),) + out_shape + (n,) * k
                )
            except Exception as exc:  # noqa: BLE001 - reported as a failing entry
                entries.append(_error_entry(label, mode, exc))
                continue
            if not is_complex:
                got = got.real
            entries.append(_compare(label, mode, got, reference[key], rtol, atol))

    return entries


def _error_entry(derivative: str, mode: str, exc: BaseException) -> CrossCheckEntry:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    if len(text) > 160:
        text = text[:157] + "..."
    return CrossCheckEntry(derivative, mode, math.nan, math.nan, False, error=text)
