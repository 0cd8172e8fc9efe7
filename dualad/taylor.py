"""Taylor mode: jet levels, ``make_jet`` and ``unpack_jet``.

A jet of order K is a truncated power series ``x(t) = x_0 + x_1 t + ... + x_K t^K`` pushed
through a function in one pass, ``O(K^2)`` per operation, where nested dual levels take
``2^K`` passes for the K-th derivative. A jet level is a level of the core
(``core.levels``) whose interpreter is a :class:`JetLevel`: a Tensor that is a jet at level
J has ``x_0`` as its primal and the list ``[x_1, ..., x_K]`` as its second part, each
coefficient unscaled (no factorials inside: order 30 neither overflows nor loses accuracy)
and itself dual, a jet or recorded at lower levels. Every primitive call at J runs the
primitive's Taylor rule (``Primitive.taylor``, the tables of :data:`RULE_TABLES`, or the
generic rule of a linear or multilinear primitive) on the coefficients; the rule's ops are
ordinary calls, so forward mode outside J (forward over Taylor), dual levels inside J
(Taylor over forward) and reverse recording (gradients of a jet's coefficients) compose
with it. ``dualad.functional.jet`` is the function-level API.

Examples
--------
>>> import dualad as da
>>> with da.taylor.jet_level():
...     x = da.taylor.make_jet(da.tensor(0.5), [da.tensor(1.0), da.tensor(0.0)])
...     y0, (y1, y2) = da.taylor.unpack_jet(da.numpy.exp(x))
>>> float(y2)  # exp(0.5 + t) = e^0.5 (1 + t + t^2/2 + ...)
0.8243606353500641
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from . import _fpfilter
from .core import dispatch as D
from .core import levels
from .core.tensor import Tensor
from .rules import linear as _linear
from .rules import taylor as _rules
from .rules import taylor_linalg as _linalg
from .rules import taylor_products as _products
from .rules import taylor_special as _special
from .rules import vocabulary as V

__all__ = [
    "jet_level", "enter_jet_level", "exit_jet_level", "make_jet", "unpack_jet", "UnpackedJet",
    "JetLevel", "CollapsedJetLevel", "RULE_TABLES", "NoTaylorRuleError",
]

NoTaylorRuleError = _rules.NoTaylorRuleError

RULE_TABLES: tuple[dict[str, Any], ...] = (
    _rules.TAYLOR_RULES,  # the elementwise formula table's recurrences
    _linalg.LINALG_TAYLOR_RULES,  # inv, solve, det, cholesky, eigh, qr, svd, ...
    _products.PRODUCTS_TAYLOR_RULES,  # prod, cumprod, amax, amin, where
    _special.SPECIAL_TAYLOR_RULES,  # scipy.special's primitives outside the formula table
)
"""Every table of Taylor rules (name -> rule), registered when this module is imported: the
one place that lists them. A family's new table is added here."""

for _table in RULE_TABLES:
    _rules.register(_table)


def _series_of(fn: Any, series: Sequence[Sequence[Any]], K: int) -> list[Any]:
    """``fn`` (a function of Tensors) on ``series``, its output's series to order ``K``: in a
    jet level of its own (the rules of the formula table's entries without a direct rule
    expand their derivative formulas with it: ``rules.taylor.formula_rule``)."""
    with jet_level() as J:
        args = [make_jet(s[0], list(s[1:]), level=J) if len(s) > 1 else s[0] for s in series]
        y, cs = unpack_jet(fn(*args), level=J)
    cs = list(cs or [])
    return [y, *cs] + [0] * (K - len(cs))


class JetLevel(levels.Interpreter):
    """Taylor mode at one jet level: a value and its Taylor coefficients.

    Made when the level is entered (:func:`enter_jet_level`). A call turns each input into
    its series at the level (``[x_0, x_1, ..., x_K]``; an input that is no jet here is the
    constant series ``[x]``) and runs the primitive's Taylor rule on them; the rule computes
    ``y_0`` too, by calls that lower levels and reverse recording see as any other.
    """

    __slots__ = ("level",)

    def __init__(self, level: int) -> None:
        self.level = level

    def process(self, prim: Any, args: Any, params: dict[str, Any]) -> Any:
        J = self.level
        series = _series_at(J, args)
        rule = self.rule(prim, series)
        out = rule(*series, **params)
        if prim.multi:
            return tuple(_pack(J, s) for s in out)
        return _pack(J, out)

    @staticmethod
    def rule(prim: Any, series: list[list[Any]]) -> Any:
        """``prim``'s Taylor rule, or the error that says it has none."""
        rule = _rules.rule_for(prim)
        if rule is None:
            raise NoTaylorRuleError(
                f"dualad: {prim.name} has no Taylor rule, so it cannot run on a jet (Taylor "
                f"mode, order {max(len(s) for s in series) - 1}). Register one "
                f"(dualad.rules.taylor.register({{'{prim.name}': rule}}), a rule "
                "rule(*series, **params) -> series), or compute this part with nested dual "
                "levels (dualad.forward_ad) outside the jet level"
            )
        return rule


class CollapsedJetLevel(JetLevel):
    """Collapsed Taylor mode at one level (Dangel et al., "Collapsing Taylor Mode", 2025; the
    "forward Laplacian" of Li et al., 2024): jets of order 2 along B directions at once, the
    first-order coefficients kept per direction (a batch axis: ``x_1`` of shape
    ``(B,) + shape``), the second-order ones summed over the directions, ``sum_b w_b x_2b``,
    so that what a Laplacian needs travels as one array.

    Per primitive, with ``q_b`` the second coefficient of the rule along direction b alone
    (``x_2 = 0``) and ``L`` its first-order part: ``y_2 = sum_b w_b q_b + L(x_2)``. A linear
    primitive has ``q_b = 0``, so it acts on the summed coefficient once, not per direction.
    """

    __slots__ = ("weights",)

    def __init__(self, level: int, weights: Tensor) -> None:
        super().__init__(level)
        self.weights = weights  # (B,): direction b's second-order part counts w_b times

    def process(self, prim: Any, args: Any, params: dict[str, Any]) -> Any:
        J = self.level
        series = _series_at(J, args)
        rule = self.rule(prim, series)
        if prim.multi:
            raise NoTaylorRuleError(
                f"dualad: collapsed Taylor mode takes primitives of one output; {prim.name} has "
                "several (compute the Laplacian with method='hutchinson' or by nested modes)")
        active = [i for i, s in enumerate(series) if len(s) > 1]
        if all(i in prim.linear for i in active) and (prim.joint or len(active) == 1):
            # linear in what moves (a sum; a product with a constant matrix): q_b = 0
            return _pack(J, rule(*series, **params))  # (each coefficient once)
        y0, y1, q = rule(*[[s[0], s[1], _zeros(s[0])] if len(s) > 1 else s
                           for s in series], **params)
        _, lin = rule(*[[s[0], s[2]] if len(s) > 1 else s for s in series], **params)
        return _pack(J, [y0, y1, _batch_sum(_as_tensor(q), self.weights) + lin])


def _series_at(J: int, args: Any) -> list[list[Any]]:
    """Each argument's series at jet level J (``[x]``: a constant there)."""
    primals, coefficients = D.parts_at(J, args)
    return [[p] if c is None else [p, *c] for p, c in zip(primals, coefficients, strict=True)]


def _zeros(x: Any) -> Any:
    return V.zeros_like(x)


def _batch_sum(q: Tensor, weights: Tensor) -> Tensor:
    """``sum_b w_b q_b`` over the batch axis of ``q`` (a Tensor of batched directions)."""
    if not q._batch_ndim:  # (no direction reached it: its q is a broadcast zero)
        return _zeros(q)
    per = D.apply(_linear.unbatch, q, size=q._data.shape[0])  # (B,) + shape, logical
    w = V.reshape(weights, (-1,) + (1,) * (per.ndim - 1))
    return V.sum(per * w, axis=0)


def _pack(J: int, series: Sequence[Any]) -> Tensor:
    """The Tensor of a rule's output series at level J (a plain value for a constant)."""
    y0 = _as_tensor(series[0])
    if len(series) == 1:
        return y0
    return D.dual(J, y0, [_coefficient(c, y0) for c in series[1:]])


def _as_tensor(c: Any) -> Tensor:
    return c if c.__class__ is Tensor else Tensor(c)


def _coefficient(c: Any, y0: Tensor) -> Tensor:
    """A rule's coefficient as a Tensor of the output's shape (a rule may give a scalar 0, or
    an array that broadcasts)."""
    c = _as_tensor(c)
    if c.shape != y0.shape:
        c = V.broadcast_to(c, y0.shape)
    return c


# -- the face: entering a level, making and reading jets ----------------------------------


def enter_jet_level() -> int:
    """Open a new, innermost jet level and return its id (never reused).

    Examples
    --------
    >>> lvl = dualad.taylor.enter_jet_level()
    >>> dualad.taylor.exit_jet_level(level=lvl)
    """
    _fpfilter.in_front()
    return levels.enter(JetLevel)  # (not a dual level: the fast layer's JVPs never see it)


def exit_jet_level(*, level: int | None = None) -> None:
    """Close the innermost level, which must be a jet level (``level``, if given, that one).

    Examples
    --------
    >>> lvl = dualad.taylor.enter_jet_level()
    >>> dualad.taylor.exit_jet_level(level=lvl)
    """
    if levels.stack and not isinstance(levels.interpreters[levels.stack[-1]], JetLevel):
        raise RuntimeError("exit_jet_level: the innermost live level is not a jet level; "
                           "exit inner levels first (levels nest like context managers)")
    levels.exit(level, "exit_jet_level")


class jet_level:
    """Context manager for a jet level; ``__enter__`` returns the level id.

    Examples
    --------
    >>> with dualad.taylor.jet_level():
    ...     x = dualad.taylor.make_jet(dualad.tensor(2.0), [dualad.tensor(1.0)])
    ...     dualad.taylor.unpack_jet(x ** 3).coefficients  # 3 x^2
    [tensor(12.)]
    """

    def __enter__(self) -> int:
        self.level = enter_jet_level()
        return self.level

    def __exit__(self, *exc: object) -> None:
        exit_jet_level(level=self.level)


def _jet_level_arg(level: int | None, what: str) -> int:
    if level is None:
        for L in reversed(levels.stack):
            if isinstance(levels.interpreters[L], JetLevel):
                return L
        raise RuntimeError(
            f"{what}: no jet level is live; use it inside `with dualad.taylor.jet_level():`")
    if not isinstance(levels.interpreters.get(level), JetLevel):
        raise RuntimeError(f"{what}: level {level} is not a live jet level")
    return level


def make_jet(tensor: Any, coefficients: Sequence[Any], *, level: int | None = None) -> Tensor:
    """Make ``tensor`` the jet ``x(t) = tensor + sum_k coefficients[k-1] t^k`` at ``level``.

    Parameters
    ----------
    tensor : Tensor or array_like
        The primal ``x_0``, floating or complex.
    coefficients : sequence of Tensor or array_like
        ``[x_1, ..., x_K]``, unscaled Taylor coefficients of the primal's shape (for
        derivative coefficients divide the k-th by ``k!``, as ``dualad.functional.jet``
        does). Each may be dual or recorded at lower levels.
    level : int, optional
        The jet level (default: the innermost live one).

    Examples
    --------
    >>> with dualad.taylor.jet_level():
    ...     x = dualad.taylor.make_jet(dualad.tensor(0.0), [dualad.tensor(1.0), 0.0, 0.0])
    ...     dualad.taylor.unpack_jet(dualad.numpy.sin(x)).coefficients[2]  # -1/3!
    tensor(-0.16666667)
    """
    L = _jet_level_arg(level, "make_jet")
    _fpfilter.in_front()
    x = tensor if isinstance(tensor, Tensor) else Tensor(tensor)
    if x.dtype.kind not in "fc":
        raise ValueError(f"make_jet: the primal has dtype {x.dtype}; only floating and complex "
                         "tensors can carry Taylor coefficients (convert with .astype('float64'))")
    if isinstance(coefficients, Tensor) or not isinstance(coefficients, Sequence):
        raise TypeError("make_jet: coefficients must be a list [x_1, ..., x_K] of arrays of "
                        "the primal's shape")
    cs = []
    for k, c in enumerate(coefficients, 1):
        c = c if isinstance(c, Tensor) else Tensor(c)
        if c.shape != x.shape:
            if c.ndim:
                raise ValueError(f"make_jet: coefficient {k} has shape {c.shape}; the primal "
                                 f"has shape {x.shape}")
            c = V.broadcast_to(c, x.shape)
        if c._level >= L and c._level < D.LIN:
            raise ValueError(f"make_jet: coefficient {k} is itself dual or a jet at level "
                             f"{c._level} >= {L}; a coefficient may only carry outer levels")
        if c.dtype.kind == "c" and x.dtype.kind != "c":
            raise ValueError(f"make_jet: coefficient {k} is complex ({c.dtype}) and the primal "
                             f"real ({x.dtype}); make the primal complex first if you mean a "
                             "complex path")
        if c.dtype.kind not in "fciub":
            raise ValueError(f"make_jet: coefficient {k} has dtype {c.dtype}; coefficients "
                             "are numbers")
        cs.append(c.astype(x.dtype) if c.dtype != x.dtype else c)
    x._version_counter()
    return _insert(x, L, cs)


def _insert(x: Tensor, L: int, cs: list[Tensor]) -> Tensor:
    """``x`` made a jet at L, below the levels above L it is dual or a jet at."""
    if x._level and x._level < D.LIN and x._level in levels.live:
        if x._level == L:
            raise ValueError("make_jet: the tensor is already a jet at this level; "
                             "unpack_jet it first")
        if x._level > L:
            return D.dual(x._level, _insert(x._primal, L, cs), x._tangent)
    return D.dual(L, x, cs)


class UnpackedJet(NamedTuple):
    """What ``unpack_jet`` returns: the primal and the coefficients ``[y_1, ..., y_K]``
    (``None`` when the value is no jet at that level: a constant)."""

    primal: Tensor
    coefficients: list[Tensor] | None


def unpack_jet(tensor: Any, *, level: int | None = None) -> UnpackedJet:
    """Split a jet into ``(primal, [y_1, ..., y_K])`` at ``level`` (unscaled coefficients).

    Examples
    --------
    >>> with dualad.taylor.jet_level():
    ...     x = dualad.taylor.make_jet(dualad.tensor(1.0), [dualad.tensor(1.0), 0.0])
    ...     dualad.taylor.unpack_jet(x * x)  # (1 + t)^2
    UnpackedJet(primal=tensor(1.), coefficients=[tensor(2.), tensor(1.)])
    """
    L = _jet_level_arg(level, "unpack_jet")
    if not isinstance(tensor, Tensor):
        return UnpackedJet(Tensor(tensor), None)
    p, cs = D.split(tensor, L)
    return UnpackedJet(p, None if cs is None else list(cs))


_rules.install_series_evaluator(_series_of)  # (formula_rule runs Taylor mode on formulas)
