"""Elementwise primitives: one table of derivative formulas, from which the rules follow.

Each entry is ``name: (ufunc, formula per argument)``. A formula is an
expression in the arguments (``x`` for unary functions; ``a, b`` for binary
ones; ``x, lo, hi`` for clip) and the output ``y``, written with
``dualad.numpy`` names. ``"0"`` is a zero derivative, ``"1"`` and ``"-1"`` pass
the tangent on (negated). The JVP is ``sum_i t_i * formula_i``; reverse mode
transposes it through the linear kernel (multiply, add), so no backward
formula is ever written. The names a formula uses are exactly what a reverse
node saves (invariant 6 of docs/architecture.md), and SymPy checks every formula in the tests.

Complex inputs: the formulas are complex derivatives of holomorphic functions,
so ``t * f'(z)`` is the R-linear differential, and its transpose multiplies by
``conj(f'(z))`` — the seeds' conjugate Wirtinger convention. The few
non-holomorphic functions (abs, sign, angle, conj, real, imag) have their own
R-linear rules below the table.
"""

from __future__ import annotations

import ast
import functools
import linecache
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _backend as _B
from .. import _dispatch as _D
from .. import _fpfilter  # noqa: F401  (installs the filter this module's code relies on)
from .. import grad_mode as _gm
from .._backend import as_array as _as_array
from .._backend import like as _like
from .._dispatch import Primitive, _wrap, apply
from .._tensor import Tensor
from ._util import elementwise_aval, elementwise_batch
from .linear import seed_product

# name: (ufunc, d/dx)   — x is the input, y the output
UNARY: dict[str, tuple[Any, str]] = {
    "negative": (np.negative, "-1"),
    "positive": (np.positive, "1"),
    "exp": (np.exp, "y"),
    "exp2": (np.exp2, "y * LN2"),
    "expm1": (np.expm1, "y + 1"),
    "log": (np.log, "1 / x"),
    "log2": (np.log2, "1 / (x * LN2)"),
    "log10": (np.log10, "1 / (x * LN10)"),
    "log1p": (np.log1p, "1 / (1 + x)"),
    "sqrt": (np.sqrt, "0.5 / y"),
    "cbrt": (np.cbrt, "1 / (3 * y * y)"),
    "square": (np.square, "2 * x"),
    "reciprocal": (np.reciprocal, "-(y * y)"),
    "sin": (np.sin, "cos(x)"),
    "cos": (np.cos, "-sin(x)"),
    "tan": (np.tan, "1 + y * y"),
    "arcsin": (np.arcsin, "1 / sqrt(1 - x * x)"),
    "arccos": (np.arccos, "-1 / sqrt(1 - x * x)"),
    "arctan": (np.arctan, "1 / (1 + x * x)"),
    "sinh": (np.sinh, "cosh(x)"),
    "cosh": (np.cosh, "sinh(x)"),
    "tanh": (np.tanh, "1 - y * y"),
    "arcsinh": (np.arcsinh, "1 / sqrt(x * x + 1)"),
    "arccosh": (np.arccosh, "1 / (sqrt(x - 1) * sqrt(x + 1))"),
    "arctanh": (np.arctanh, "1 / (1 - x * x)"),
    # (from x alone, as torch's: sinc(x) recomputed, so a write into the output leaves
    # this readable)
    "sinc": (np.sinc, "where(x == 0, 0, (cos(PI * x) - sin(PI * x) / (PI * x)) / x)"),
    "deg2rad": (np.deg2rad, "DEG"),
    "rad2deg": (np.rad2deg, "RAD"),
    "fabs": (np.fabs, "sign(x)"),
    "floor": (np.floor, "0"),
    "ceil": (np.ceil, "0"),
    "trunc": (np.trunc, "0"),
    "rint": (np.rint, "0"),
}

# name: (ufunc, d/da, d/db)
BINARY: dict[str, tuple[Any, str, str]] = {
    "add": (np.add, "1", "1"),
    "subtract": (np.subtract, "1", "-1"),
    "multiply": (np.multiply, "b", "a"),
    # (d/db from the inputs, not the output, as torch's: a write into a / b leaves its
    # backward readable)
    "divide": (np.divide, "recip(b)", "-(a / b) / b"),
    # powm1(a, b) is a ** (b - 1), but 0 where a == b == 0 (or b is a Python 0): only
    # 0 * inf is masked, so d2/da db = 1/a stays right at b == 0 (and a Python exponent
    # costs no mask). powlog(a, y) is log(a) * y, but 0 where a == 0 and y is finite
    # (0 ** b is constant in b for b >= 0), -inf at 0 ** b for b < 0 (as torch's), with
    # every higher derivative in b 0 there in every mode (see vocabulary.powlog).
    "power": (np.power, "b * powm1(a, b)", "powlog(a, y)"),
    "float_power": (np.float_power, "b * powm1(a, b)", "powlog(a, y)"),
    "maximum": (np.maximum, "where(a == b, 0.5, a > b)", "where(a == b, 0.5, a < b)"),
    "minimum": (np.minimum, "where(a == b, 0.5, a < b)", "where(a == b, 0.5, a > b)"),
    "fmax": (
        np.fmax,
        "where(a == b, 0.5, logical_or(a > b, isnan(b)))",
        "where(a == b, 0.5, logical_or(b > a, isnan(a)))",
    ),
    "fmin": (
        np.fmin,
        "where(a == b, 0.5, logical_or(a < b, isnan(b)))",
        "where(a == b, 0.5, logical_or(b < a, isnan(a)))",
    ),
    "copysign": (np.copysign, "copysign(1.0, a) * copysign(1.0, b)", "0"),
    "hypot": (np.hypot, "a / y", "b / y"),
    "arctan2": (np.arctan2, "b / (a * a + b * b)", "-a / (a * a + b * b)"),
    # (from the inputs, as torch's: a write into the output leaves these readable)
    "logaddexp": (np.logaddexp, "1 / (1 + exp(b - a))", "1 / (1 + exp(a - b))"),
    "logaddexp2": (np.logaddexp2, "1 / (1 + exp2(b - a))", "1 / (1 + exp2(a - b))"),
    "remainder": (np.remainder, "1", "-floor(a / b)"),
    "fmod": (np.fmod, "1", "-trunc(a / b)"),
}

# name: (function, d/dx, d/dlo, d/dhi)
TERNARY: dict[str, tuple[Any, str, str, str]] = {
    "clip": (np.clip, "logical_and(x >= lo, x <= hi)", "x < lo", "x > hi"),
}

# Primitives linear in which arguments (jointly, or one at a time for products).
LINEAR: dict[str, tuple[tuple[int, ...], bool]] = {
    "negative": ((0,), True),
    "positive": ((0,), True),
    "add": ((0, 1), True),
    "subtract": ((0, 1), True),
    "multiply": ((0, 1), False),
    "divide": ((0,), True),
    "deg2rad": ((0,), True),
    "rad2deg": ((0,), True),
}

# Results with no derivative at all (booleans, integers, indices).
NONDIFF: dict[str, Any] = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "isfinite": np.isfinite, "isnan": np.isnan, "isinf": np.isinf, "signbit": np.signbit,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "logical_not": np.logical_not, "floor_divide": np.floor_divide,
    # the operators &, |, ^, ~ (bitwise on integers, logical on booleans, as NumPy's)
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "invert": np.invert,
}

ARGS = {1: ("x",), 2: ("a", "b"), 3: ("x", "lo", "hi")}
CONSTANTS = {
    "PI": math.pi, "LN2": math.log(2.0), "LN10": math.log(10.0),
    "DEG": math.pi / 180.0, "RAD": 180.0 / math.pi,
}

# Formulas are evaluated with dualad.numpy's names, bound once the namespace exists.
namespace: dict[str, Any] = dict(CONSTANTS)


# The same formulas over arrays: the kernel of the forward fast path (no Tensors below).
np_namespace: dict[str, Any] = dict(CONSTANTS)
def _np_where(c: Any, x: Any, y: Any) -> Any:
    return (x if c else y) if c.__class__ is bool else np.where(c, x, y)


def _np_powm1(a: Any, b: Any) -> Any:
    if b.__class__ in (int, float):
        return a ** (b - 1) if b != 0 else 0
    m = np.logical_and(np.equal(a, 0), np.equal(b, 0))
    return np.where(m, 0, np.where(m, 1, a) ** (b - 1))


def recip(b: Any) -> Any:
    """``1 / b``, NumPy's inf where ``b`` is a Python zero (Python's division raises there;
    ``x / 0.0`` has the derivative inf, as torch's). The generated code writes it ``1 / b``
    and declines at a ZeroDivisionError (``_inlined``), so that a constant divisor costs
    no call there."""
    if b.__class__ in _PY_NUMBERS and b == 0:
        return complex(math.inf, math.nan) if b.__class__ is complex else math.copysign(
            math.inf, b)
    return 1 / b


_PY_NUMBERS = frozenset((int, float, complex, bool))


def _np_log_as(a: Any, y: Any) -> Any:
    if y.dtype.kind == "c" and not np.iscomplexobj(a):
        a = np.asarray(a, y.dtype)
    return np.log(a)


def _np_powlog(a: Any, y: Any) -> Any:
    m = a == 0
    if m is False:  # (a Python base: no mask)
        return _np_log_as(a, y) * y
    m = np.logical_and(m, np.isfinite(y))
    return np.where(m, 0, _np_log_as(np.where(m, 1, a), y) * y)


def _np_and(a: Any, b: Any) -> Any:
    # a Python False (a scalar argument's test) decides without touching arrays
    if a is False or b is False:
        return False
    return np.logical_and(a, b)


np_namespace.update({
    "powm1": _np_powm1, "log_as": _np_log_as, "powlog": _np_powlog, "recip": recip,
    "where": _np_where, "log": np.log, "exp": np.exp, "exp2": np.exp2, "sqrt": np.sqrt,
    "sin": np.sin, "cos": np.cos, "sinh": np.sinh, "cosh": np.cosh, "copysign": np.copysign,
    "isnan": np.isnan, "logical_or": np.logical_or, "logical_and": _np_and,
    "sign": np.sign, "floor": np.floor, "trunc": np.trunc,
})


# -- floating-point errors inside the rules ----------------------------------------------
#
# A derivative at a singular point is inf or NaN (sqrt at 0, log at 0, arcsin at 1), as
# torch's; computing it must not leak NumPy's RuntimeWarnings ("divide by zero", "invalid
# value" of 0 * inf, or of a branch a ``where`` masks) from inside dualad, nor raise under
# the user's ``np.errstate(all="raise")``. Two ways, so that the hot paths pay nothing:
#
# - the general rules on Tensors (the formulas, the hand-written rules, reverse's
#   ``elementwise_t``) run with NumPy's floating-point errors ignored (``_quietly``:
#   NumPy's error-state context variable set and reset, a fraction of a microsecond;
#   ``np.errstate`` where it is missing); the array rules (``_unary_tangent``,
#   ``_binary_tangent``, ``fast_jvp``'s terms, ``fast_vjp``) run as they are and again
#   quietly on a warning (``_or_quietly``). The primal of the op itself is computed
#   outside, in the user's error state.
# - the generated hot code (hot functions, array transposes, the lane's steps) runs as it
#   is, in a ``try`` (free unless something is raised): a warning raised there (this
#   module's RuntimeWarnings are errors, by the filter below; an "error" filter or
#   ``errstate(all="raise")`` of the user's) declines to the general way, which computes
#   the primal again in the user's error state (its warning, if any, is NumPy's own) and
#   the derivative quietly. Only singular points pay for that.
#
# A user's filter put before this one (``warnings.simplefilter("always")``) would show them
# instead: ``_fpfilter.in_front`` puts it first again where a derivative computation starts.

_FP = (RuntimeWarning, FloatingPointError, ZeroDivisionError)  # (the last: ``_inlined``)
np_namespace["__name__"] = __name__  # (warnings from formulas and generated code: this module)
np_namespace["_FP"] = _FP
np_namespace["_list"], np_namespace["_tuple"] = list, tuple

try:  # NumPy 2's error state is a context variable: setting it directly is cheap
    from numpy._core._ufunc_config import _extobj_contextvar as _errvar
    from numpy._core._ufunc_config import _make_extobj

    _QUIET = _make_extobj(all="ignore")
    _quiet_set, _quiet_reset = _errvar.set, _errvar.reset
except (ImportError, AttributeError, TypeError):  # pragma: no cover - another NumPy
    _quiet_set = None


def _quietly(fn: Any) -> Any:
    """``fn``, run with NumPy's floating-point errors ignored (see above)."""
    if _quiet_set is None:  # pragma: no cover - another NumPy
        return functools.wraps(fn)(np.errstate(all="ignore")(fn))

    @functools.wraps(fn)
    def quiet(*args: Any, **kw: Any) -> Any:
        token = _quiet_set(_QUIET)
        try:
            return fn(*args, **kw)
        finally:
            _quiet_reset(token)

    return quiet


def _or_quietly(fn: Any) -> Any:
    """``fn`` (an array rule: all its arithmetic in this module, whose RuntimeWarnings are
    errors), or again quietly on a floating-point warning: free on the common path (an
    error state of its own costs a few percent on large arrays, besides the setting)."""
    quiet = _quietly(fn)

    @functools.wraps(fn)
    def run(*args: Any) -> Any:
        try:
            return fn(*args)
        except _FP:  # (a singular point; fn wrote only into arrays it made)
            return quiet(*args)

    return run


def _guarded(code: str, decline: str) -> str:
    """The source of the one function ``code`` defines, its body in a ``try`` whose
    floating-point warnings (or errors) return ``decline`` instead (see above)."""
    lines = code.strip("\n").split("\n")
    head = 0
    while not lines[head].startswith("def "):
        head += 1
    body = ["    " + ln if ln.strip() else ln for ln in lines[head + 1:]]
    return "\n".join(lines[:head + 1] + ["    try:"] + body + [
        "    except _FP:  # (a singular point: the general way, quietly)",
        f"        return {decline}"]) + "\n"


class Ufunc(Primitive):
    """An elementwise primitive called like a NumPy ufunc (positional arrays only).

    A call runs the primitive's hot function (``variant(p, "call")``, its class's
    ``__call__``), or ``apply`` (``Primitive.__call__``) for one without; ``arity`` (=
    ``nin``) makes ``apply`` refuse extra arrays — NumPy would take one as ``out`` —
    and keywords.
    """

    __slots__ = ("nin", "formulas", "ufunc", "kernels", "coefs", "steps", "pair", "doc")

    def bad_call(self, args: Any, params: dict[str, Any]) -> Any:
        """Raise for a call ``apply`` does not take — except ``out=`` a Tensor, which it
        writes in place (``inplace.into``) and returns, as NumPy does."""
        out = params.get("out")
        if out.__class__ is tuple and len(out) == 1:
            out = out[0]
        if len(params) == 1 and out.__class__ is Tensor and len(args) == self.nin:
            from .inplace import into

            return into(out, self, args)
        unknown = sorted(set(params) - {"out", "where", "dtype"})
        if unknown:
            raise TypeError(f"dualad.numpy.{self.name}() got an unexpected keyword argument "
                            f"{unknown[0]!r}")
        raise TypeError(
            f"dualad.numpy.{self.name} takes {self.nin} array argument(s) and no keywords "
            f"(got {len(args)} and {sorted(params)}); out=, where= and dtype= are not "
            "supported on Tensors, except out= one Tensor (written in place) — cast with "
            ".astype() afterwards"
        )


class _Doc:
    """``Ufunc.__doc__``: an instance's own docstring (``inspect.getdoc`` and ``help`` read
    it), the class's on the class. ``ufunc_docs`` sets it at import as the function that
    writes it, run on the first read (importing dualad writes none)."""

    def __init__(self, text: str | None) -> None:
        self.text = text

    def __get__(self, obj: Any, cls: Any = None) -> str | None:
        if obj is None:
            return self.text
        doc = getattr(obj, "doc", None)
        if callable(doc):
            doc = obj.doc = doc()
        return doc

    def __set__(self, obj: Any, text: str | Callable[[], str]) -> None:
        obj.doc = text


Ufunc.__doc__ = _Doc(Ufunc.__doc__)  # type: ignore[assignment]


def compile_formula(src: str, nin: int, ns: Any = None) -> tuple[Any, tuple[Any, ...]]:
    """A formula string -> (callable or 0/1/-1, what it reads: input positions and 'out')."""
    if src in ("0", "1", "-1"):
        return int(src), ()
    names = {n.id for n in ast.walk(ast.parse(src, mode="eval")) if isinstance(n, ast.Name)}
    params = ARGS[nin]
    unknown = names - set(params) - {"y"} - set(CONSTANTS) - _FUNCS
    if unknown:
        raise NameError(f"formula {src!r} uses unknown names {sorted(unknown)}")
    fn = eval(f"lambda {', '.join(params)}, y: {src}", namespace if ns is None else ns)  # noqa: S307
    reads = tuple(i for i, p in enumerate(params) if p in names) + (("out",) if "y" in names else ())
    return fn, reads


_FUNCS = {
    "where", "log", "exp", "exp2", "sqrt", "sin", "cos", "sinh", "cosh", "copysign", "isnan",
    "logical_or", "logical_and", "sign", "floor", "trunc", "powm1", "log_as", "powlog",
    "recip",
}


def _real_dtype(dt: np.dtype) -> np.dtype:
    return np.empty((), dt).real.dtype


def _coef(c: Any, out: Any) -> Any:
    """Bring a coefficient to the output's precision (booleans, ints, wider floats)."""
    if c.__class__ is not Tensor:
        return c
    cd, od = c._data.dtype, out._data.dtype
    if cd is od or cd == od:
        return c
    if cd.kind in "biu" or (cd.kind == "f" and cd != _real_dtype(od)) or cd.kind == "c":
        return apply(astype_prim(), c, dtype=od if (cd.kind == "c" or od.kind != "c")
                     else _real_dtype(od))
    return c


def astype_prim() -> Primitive:
    from .linear import astype

    return astype


def formula_jvp(fns: list[Any]) -> Callable[..., Any]:
    """JVP rule ``sum_i t_i * f_i(args, y)`` from per-argument derivative formulas."""
    from .linear import broadcast_to

    def jvp(primals: Any, tangents: Any, out: Any) -> Any:
        acc = None
        for t, f in zip(tangents, fns, strict=True):
            if t is None or f == 0:
                continue
            if f == 1:
                term = t
            elif f == -1:
                term = apply(_negative, t)
            else:
                term = apply(_multiply, t, _coef(f(*primals, out), out))
            acc = term if acc is None else apply(_add, acc, term)
        if acc is None:
            return None
        if acc.dtype != out.dtype:  # an input promoted by the other (f32 + i64 -> f64)
            acc = apply(astype_prim(), acc, dtype=out.dtype)
        if acc.shape != out.shape:
            acc = apply(broadcast_to, acc, shape=out.shape)
        return acc

    return _quietly(jvp)


def _make(name: str, fn: Any, srcs: tuple[str, ...]) -> Ufunc:
    compiled = [compile_formula(s, len(srcs)) for s in srcs]
    lin, joint = LINEAR.get(name, ((), True))
    p = Ufunc(
        name,
        fn,
        formula_jvp([c[0] for c in compiled]),
        reads=tuple(c[1] for c in compiled),
        linear=lin,
        joint=joint,
        batch=elementwise_batch(fn),
        aval=elementwise_aval,
    )
    p.nin = len(srcs)
    p.formulas = srcs
    p.ufunc = fn
    # the same formulas on Tensors (reverse's direct rule: transpose.elementwise_t)
    # (not quieted one by one: their one caller, elementwise_t, runs quietly)
    p.coefs = [c[0] for c in compiled]
    p.kernels = [compile_formula(s, len(srcs), np_namespace)[0] for s in srcs]
    p.fast = {1: _fast_unary, 2: _fast_binary}.get(len(srcs), fast_jvp)
    p.hot = _specialized_hot(p, fn, srcs)
    p.transposed = _specialized_transposed(name, srcs)
    p.steps = _steps(name, srcs, p.reads)
    p.pair = _pair(name, srcs, p.reads)
    if p.hot is not None:
        _called_directly(p)
    return p


def _coef_array(c: Any, y: Any) -> Any:
    return _coef_dtype(c, y.dtype)


def _coef_dtype(c: Any, od: Any) -> Any:
    if not hasattr(c, "dtype"):
        return c
    cd = c.dtype
    if cd == od or (cd.kind == "f" and od.kind == "c" and cd == _real_dtype(od)):
        return c
    return c.real.astype(od) if (cd.kind == "c" and od.kind != "c") else c.astype(
        od if (cd.kind == "c" or od.kind != "c") else _real_dtype(od))


def _parts(a: Any) -> Any:
    """(primal array, tangent array, tangent batch axes) of a dual whose parts are plain
    (nothing tracked below its level; requiring grad does not count while grad mode is
    off, or while tangents go unrecorded: apply then records the primal alone); None
    otherwise."""
    p = a._p
    if p is not None:
        if p._level or p._nb or (p._rg and _state.grad and _state.tangent_grad):
            return None
        x = p._data
    else:
        x = a._data
    t = a._t
    if t.__class__ is _ndarray:
        return x, t, 0
    if t._level or (t._rg and _state.grad and _state.tangent_grad):
        return None
    return x, t._data, t._nb


def _operand(a: Any, L: int) -> Any:
    """(array, tangent or None, batch axes) of one operand at level L: a dual there, or a
    constant (a Python scalar, an array, an untracked Tensor); None if tracked below."""
    if a.__class__ is not Tensor:
        return a, None, 0
    if a._level == L:
        return _parts(a)
    if a._level or a._nb or (a._rg and _state.grad and _state.tangent_grad):
        return None
    return a._data, None, 0


def fast_jvp(prim: Any, args: Any, L: int, params: Any = None) -> Any:
    """The JVP on arrays when nothing below level L is tracked; None if not applicable.

    ``_fast_unary`` and ``_fast_binary`` are the same rule for one and two inputs (they
    align batched tangents too); each formula primitive's ``hot`` (generated from its
    formulas) takes the commonest case before ``apply`` gets this far."""
    arrays, tans = [], []
    for a in args:
        o = _operand(a, L)
        if o is None or o[2]:  # (batched: only the unary and binary rules align axes)
            return None
        arrays.append(o[0])
        tans.append(o[1])
    try:
        y = prim.impl(*arrays)
    except _FP:  # (the general way computes it again, in the user's error state)
        return None
    return _terms(prim, arrays, tans, y, L)


@_or_quietly
def _terms(prim: Any, arrays: Any, tans: Any, y: Any, L: int) -> Any:
    """``fast_jvp``'s tangent: ``sum_i t_i * f_i``, at a primal ``y`` computed already."""
    acc = None
    for t, f in zip(tans, prim.kernels, strict=True):
        if t is None or f == 0:
            continue
        term = t if f == 1 else (-t if f == -1 else t * _coef_array(f(*arrays, y), y))
        acc = term if acc is None else acc + term
    if acc is None:
        return _wrap(y, 0)
    return _dual_of(L, y, acc)


def fast_linear1(prim: Any, args: Any, L: int, params: Any) -> Any:
    """The JVP of a primitive linear in its one array (``linear._linear1``: the primitive
    applied to the tangent) on arrays: the primitive of the primal and of the tangent,
    for a dual whose parts are plain; None otherwise. Reshapes, slices, sums and
    broadcasts of duals (and of reverse mode's dual cotangents) stay flat this way."""
    if len(args) != 1 or prim.boundary:
        return None
    a = args[0]
    if a.__class__ is not Tensor or a._level != L:
        return None
    parts = _parts(a)
    if parts is None:
        return None
    x, t, nb = parts
    try:  # (a NumPy warning here is raised by this module's filter: the general way shows it)
        tt = prim.batch([t], [nb], **params)[0] if nb else prim.impl(t, **params)
        y = prim.impl(x, **params)
    except _FP:
        return None
    d = _dual_of(L, y, tt, nb)
    if prim.view and _D.shares(y, x):  # (as apply's plain path: a view, not a copy,
        d._vc = a._version_counter()  # shares its input's version counter)
    return d


def fast_product(prim: Any, args: Any, L: int, params: Any) -> Any:
    """The JVP of a product linear in each operand separately (matmul: ``_matmul_jvp``)
    on arrays, when one operand is a dual at L whose parts are plain and the other a
    constant: the product of the primal, and of the tangent, with the constant (the
    rule's one term, through the same implementation and batching rule); None otherwise.
    A Jacobian's first product (``A @ x`` on a seed) and its transpose stay flat this way."""
    if params or len(args) != 2:
        return None
    pa, pb = _operand(args[0], L), _operand(args[1], L)
    if pa is None or pb is None:
        return None
    (xa, ta, na), (xb, tb, nbb) = pa, pb
    try:  # np.matmul runs in this module's frame, whose RuntimeWarnings are errors (a
        # spurious invalid flag of OpenBLAS too): decline, and the general way warns as NumPy
        if ta is not None:
            if tb is not None or ta.dtype != xa.dtype:  # (two tangents; a tangent to cast)
                return None
            tt, nb = prim.batch([ta, xb], [na, 0]) if na else (prim.impl(ta, xb), 0)
        elif tb is not None and tb.dtype == xb.dtype:
            tt, nb = prim.batch([xa, tb], [0, nbb]) if nbb else (prim.impl(xa, tb), 0)
        else:
            return None
        y = prim.impl(xa, xb)
    except _FP:
        return None
    return _dual_of(L, y, tt, nb)


def _fast_unary(prim: Any, args: Any, L: int, params: Any = None) -> Any:
    parts = _parts(args[0])
    if parts is None:
        return None
    x, g, nb = parts
    try:
        y = prim.impl(x)
    except _FP:  # (the general way computes it again, in the user's error state)
        return None
    except TypeError:  # (the general way says what is wrong: a complex input to a
        return None  # real-only function, arrays on two devices)
    return _unary_tangent(prim, x, g, nb, y, L)


@_or_quietly
def _unary_tangent(prim: Any, x: Any, g: Any, nb: int, y: Any, L: int) -> Any:
    f = prim.kernels[0]
    if f.__class__ is int:  # 0, 1 or -1: no coefficient to compute
        if not f:
            return _wrap(y, 0)
        tt = g if f == 1 else -g
    else:
        k = f(x, y)
        if k.__class__ is _ndarray:
            if k.dtype is not y.dtype:
                k = _coef_dtype(k, y.dtype)
            tt = seed_product(g, k) if nb else None  # (a Jacobian's first step: diag(k))
            if tt is None:
                tt = _scaled(g, k, x, y) if k.size >= _INPLACE_MIN else g * k
        else:
            tt = g * k
    return _dual_of(L, y, tt, nb)


def _scaled(t: Any, k: Any, *inputs: Any) -> Any:
    """``t * k``, written into ``k`` when it is a fresh temporary (saves an allocation)."""
    if k.__class__ is not np.ndarray or k.size < _INPLACE_MIN:
        return t * k
    if (k.base is None
            and k.shape == t.shape and k.dtype == t.dtype and all(k is not a for a in inputs)):
        return np.multiply(t, k, out=k)
    return t * k


_INPLACE_MIN = 1 << 14  # below this, an allocation is cheaper than the checks


def _fast_binary(prim: Any, args: Any, L: int, params: Any = None) -> Any:
    pa, pb = _operand(args[0], L), _operand(args[1], L)
    if pa is None or pb is None:
        return None
    (xa, ga, na), (xb, gb, nbb) = pa, pb
    nb = na if na > nbb else nbb
    try:
        y = prim.impl(xa, xb)
    except _FP:  # (the general way computes it again, in the user's error state)
        return None
    except (ValueError, TypeError) as e:
        raise _D.mismatch(prim, xa, xb, e) from None
    return _binary_tangent(prim, xa, ga, xb, gb, nb, y, L)


@_or_quietly
def _binary_tangent(prim: Any, xa: Any, ga: Any, xb: Any, gb: Any, nb: int, y: Any,
                    L: int) -> Any:
    if nb:  # batched tangents: their logical axes line up with the output's
        nd = y.ndim if y.__class__ is _ndarray else np.ndim(y)
        ga = None if ga is None else _align(ga, nb, nd)
        gb = None if gb is None else _align(gb, nb, nd)
    fa, fb = prim.kernels
    acc = None
    if ga is not None:
        acc = _term(fa, ga, xa, xb, y)
    if gb is not None:
        if fb.__class__ is int and fb == -1 and acc is not None:
            # (subtract) acc - gb is acc + (-gb) without the negated copy of gb
            return _dual_of(L, y, acc - gb, nb)
        if acc is not None and acc is not ga and acc.__class__ is _ndarray and \
                acc.size >= _INPLACE_MIN and acc.base is None and acc.shape == np.shape(y) \
                and _add_term(acc, fb, gb, xa, xb, y):
            return _dual_of(L, y, acc, nb)  # (acc: fresh, of the output's shape, ours)
        term = _term(fb, gb, xa, xb, y)
        if acc is None:
            acc = term
        elif term is None:
            pass
        elif term is not gb and term.__class__ is np.ndarray and term.size >= _INPLACE_MIN \
                and term.shape == np.shape(y) and term.dtype == acc.dtype:
            acc = np.add(acc, term, out=term)  # term is a fresh temporary
        else:
            acc = acc + term
    if acc is None:
        return _wrap(y, 0)
    return _dual_of(L, y, acc, nb)


def _add_term(acc: Any, f: Any, g: Any, xa: Any, xb: Any, y: Any) -> bool:
    """``acc += g * f(a, b, y)``, a block at a time: the term's temporary is one block, in
    the cache, not a second array of the whole size (an allocation and a pass through
    memory fewer). ``acc`` is ours: fresh, of the output's shape. False, and ``acc``
    untouched, unless every operand has that shape in C order and the term the output's
    dtype; the values are those of ``acc + term``, elementwise the same operations."""
    if f.__class__ is int or acc.dtype is not y.dtype or not acc.flags.c_contiguous:
        return False
    for v in (g, xa, xb):
        if v.__class__ is not _ndarray or v.shape != acc.shape or not v.flags.c_contiguous:
            return False
    a, g, xa, xb, y = (v.reshape(-1) for v in (acc, g, xa, xb, y))
    for i in range(0, a.size, _BLOCK):
        j = i + _BLOCK
        t = _term(f, g[i:j], xa[i:j], xb[i:j], y[i:j])
        if t.dtype is not acc.dtype:  # (the same in every block: only the first can fail)
            return False
        np.add(a[i:j], t, out=a[i:j])
    return True


_BLOCK = 1 << 15  # elements: one block's temporary stays in the cache (and off mmap)


def _term(f: Any, g: Any, xa: Any, xb: Any, y: Any) -> Any:
    """``g * f(a, b, y)`` for one argument of a binary function (None for a zero ``f``)."""
    if f.__class__ is int:
        return None if not f else (g if f == 1 else -g)
    k = f(xa, xb, y)
    if k.__class__ is not _ndarray:
        return g * k if k.__class__ is float else \
            g * (_coef_array(k, y) if hasattr(k, "dtype") else k)
    if k.dtype is not y.dtype:
        k = _coef_array(k, y)
    return _scaled(g, k, xa, xb, y) if k.size >= _INPLACE_MIN else g * k


def _align(g: Any, nb: int, nd: int) -> Any:
    k = g.ndim - nb
    return g.reshape(g.shape[:nb] + (1,) * (nd - k) + g.shape[nb:]) if nb and k < nd else g


def _dual_of(L: int, y: Any, tt: Any, nb: int = 0) -> Tensor:
    """A flat dual Tensor from arrays (the tangent broadcast to batch + the primal's shape)."""
    if y.__class__ is not _ndarray:
        y = np.asarray(y) if isinstance(y, _generic) else _as_array(y)
    if tt.__class__ is not _ndarray:  # (0-d results come back as NumPy scalars; y and tt
        # are of one kind)
        tt = np.asarray(tt) if y.__class__ is _ndarray else _as_array(tt)
    if tt.shape != y.shape if not nb else tt.shape[nb:] != y.shape:
        tt = np.broadcast_to(tt, (tt.shape[:nb] if nb else ()) + y.shape)
    if tt.dtype != y.dtype:  # an input promoted by another (f32 + i64 -> f64)
        tt = tt.astype(y.dtype)
    # (a bare tangent is a NumPy array; another kind's is held as a Tensor, as a batch's)
    return _flat(L, y, _wrap(tt, nb) if nb or tt.__class__ is not _ndarray else tt)


def _flat(L: int, y: Any, tt: Any) -> Tensor:
    """A flat dual: the primal array as ``_data``, the tangent (bare or batched) as ``_t``."""
    d = _new(Tensor)  # one object per op: this is the forward hot path
    d._data = y  # (one store a line: a tuple assignment of four targets builds a tuple)
    d._level = L
    d._p = None
    d._t = tt
    d._nb = 0
    d._rg = False
    d._node = None
    d._vc = None
    d._meta = None
    return d


# -- the hot path, generated per primitive from its formulas --------------------------
#
# ``apply`` first offers a call to the primitive's ``hot`` function: for the hot cases —
# plain Tensors (recorded if one requires grad), and flat duals at one live level with
# untracked constants, a small result — it does all of ``apply``'s work in one frame,
# with the coefficient written inline from the same formula strings as the JVP. It
# returns None for anything else (keywords, nested or batched duals, other levels, a
# dual that requires grad), and ``apply`` takes the general way; a large or cast
# tangent goes to the general array rule with the primal already computed.

_PLAIN_RESULT = """
        d = _new(Tensor)
        d._data = y
        d._level = 0
        d._nb = 0
        d._vc = None
        d._meta = None
        if rg and _state.grad:
            _record(prim, args, d)  # (which sets _rg, _node and _out_nr)
            return d
        d._rg = False
        d._node = None
        if _inference[0] and _state.inference:
            _mark_inference(d)
        elif rg:
            d._why = "no_grad"  # (grad mode is off: for backward's error)
        return d"""

_FLAT_RESULT = """
            d = _new(Tensor)
            d._data = y
            d._t = tt
            d._level = L
            d._p = None
            d._nb = 0
            d._rg = False
            d._node = None
            d._vc = None
            d._meta = None
            if rg and _state.grad:
                _record(prim, args, d)  # (the primal alone: tangents untracked)
            elif _inference[0] and _state.inference:
                _mark_inference(d)
            elif rg:
                d._why = "no_grad"  # (grad mode is off: for backward's error)
            return d"""

_UNARY_HOT = """{head}
    if A.__class__ is not Tensor or A._nb:
        return {decline}
    L = A._level
    x = A._data
    if not L:
        try:
            y = impl(x)
        except TypeError:  # (free until raised: apply's general way says what is wrong, a
            # complex input to a real-only function or arrays on two devices)
            return {decline}
        if y.__class__ is not _ndarray and isinstance(y, _generic):
            y = _asarray(y)
        rg = A._rg{plain}
    rg = A._rg
    if L not in _live or (rg and _state.tangent_grad) or A._p is not None or \\
            A._t.__class__ is not _ndarray:
        return {decline}  # (a level that exited, a placeholder, a nested dual, or one
        # whose tangent would be recorded)
    try:
        y = impl(x)
    except TypeError:  # (as above)
        return {decline}
    if y.__class__ is _ndarray and y.size < _INPLACE_MIN:
        tt = {tt}
        if tt.__class__ is _ndarray and tt.dtype is y.dtype:{flat}
    return _finished(prim, args, _unary_tangent(prim, x, A._t, 0, y, L), rg, _record)
"""

_OPERAND = """
    if {T}.__class__ is Tensor:
        if {T}._nb:
            return {decline}
        {x} = {T}._data
        {L} = {T}._level
        if {L}:
            if {L} not in _live or ({T}._rg and _state.tangent_grad) or {T}._p is not None \\
                    or {T}._t.__class__ is not _ndarray:
                return {decline}
            {g} = {T}._t
        else:
            {g} = None
    elif {T}.__class__ is _list or {T}.__class__ is _tuple:  # (two identity tests: a
        # frozenset lookup hashes the class, 30 ns on an op with a constant)
        return {decline}  # (apply stacks a sequence holding Tensors)
    else:
        {x}, {g}, {L} = {T}, None, 0"""

_BINARY_HOT = """{head}{operand_a}{operand_b}
    L = LA or LB
    if not L:
        try:
            y = impl(a, b)
        except (ValueError, TypeError) as e:  # (free until raised: name the operation and
            # the shapes, or the devices)
            raise _mismatch(prim, a, b, e) from None
        if y.__class__ is not _ndarray and isinstance(y, _generic):
            y = _asarray(y)
        rg = (A.__class__ is Tensor and A._rg) or (B.__class__ is Tensor and B._rg){plain}
    if (LA and LB and LA != LB) or (
            not LA and A.__class__ is Tensor and A._rg) or (
            not LB and B.__class__ is Tensor and B._rg):
        return {decline}
    rg = (LA and A._rg) or (LB and B._rg)  # (a dual that requires grad: its primal is recorded)
    try:
        y = impl(a, b)
    except (ValueError, TypeError) as e:
        raise _mismatch(prim, a, b, e) from None
    if y.__class__ is _ndarray and y.size < _INPLACE_MIN:
        if gb is None:
            tt = {ta}
        elif ga is None:
            tt = {tb}
        else:{tab}
        if tt.__class__ is _ndarray and tt.dtype is y.dtype and tt.shape == y.shape:{flat}
    return _finished(prim, args, _binary_tangent(prim, a, ga, b, gb, 0, y, L), rg, _record)
"""


def _first_record(ns: dict[str, Any], prim: Any, args: Any, out: Any) -> None:
    """A hot function's ``_record`` until its first recorded call, which binds there (in
    the function's namespace ``ns``) the recorder reverse mode makes for its primitive
    (``graph.recorder``)."""
    rec = ns["_record"] = _D.hooks["recorder"](prim)
    rec(prim, args, out)


def _finished(prim: Any, args: Any, out: Any, rg: bool, record: Any) -> Any:
    """``apply``'s last step for a dual result: its primal recorded (by the hot function's
    ``record``) when an input requires grad (only while tangents are untracked does the
    hot path take one), else ``out`` marked as made in inference mode if it was."""
    if rg and _state.grad:
        record(prim, args, out)
    elif _inference[0] and _state.inference:
        _D._mark_inference(out)
    elif rg:
        _D._mark_nograd(out)
    return out


def _inlined(src: str) -> str:
    """A formula as the generated code writes it: ``recip(b)`` as ``1 / b``, whose
    ZeroDivisionError at a Python zero declines (``_guarded``) to the general rules, which
    call ``recip``."""
    if "recip(" not in src:
        return src

    class _Inline(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> Any:
            self.generic_visit(node)
            if isinstance(node.func, ast.Name) and node.func.id == "recip":
                return ast.BinOp(ast.Constant(1), ast.Div(), node.args[0])
            return node

    return ast.unparse(_Inline().visit(ast.parse(src, mode="eval")))


def _term_src(src: str, g: str) -> str:
    """The tangent term ``g * f`` as source ("None" for a zero ``f``)."""
    return {"0": "None", "1": g, "-1": f"-{g}"}.get(src, f"{g} * ({_inlined(src)})")


def _normal(src: str, swap: bool = False) -> str:
    """A two-input formula as normalized text, with ``a`` and ``b`` exchanged if ``swap``."""
    tree = ast.parse(src, mode="eval")
    for n in ast.walk(tree):
        if swap and isinstance(n, ast.Name) and n.id in ("a", "b"):
            n.id = "b" if n.id == "a" else "a"
    return ast.unparse(tree)


_INDENT = " " * 12  # (of the generated terms)


# The same code under four heads: ``hot`` (what ``apply`` offers a call to first; a
# decline returns None and apply goes on), and the entry points themselves — ``call``
# (``prim(...)``), ``op`` and ``rop`` (the operators, the reflected one with its operands
# swapped) — which save ``apply``'s or the operator's frame and go on to ``apply`` (which
# offers the call to ``hot`` again, then takes the general way) when they decline.
_HEADS = {
    "hot": ("def hot_{name}(prim, args):\n"
            "    try:\n"
            "        {unpack} = args\n"
            "    except ValueError:  # the wrong number of arguments: apply says so\n"
            "        return None", "None"),
    "call": ("def call_{name}(*args, **params):\n"
             "    if params or len(args) != {n}:\n"
             "        return _apply(prim, *args, **params)\n"
             "    {unpack} = args", "_apply(prim, *args)"),
    "op": ("def op_{name}({ab}):", "_apply(prim, {ab})"),
    "rop": ("def rop_{name}(B, A):", "_apply(prim, A, B)"),  # (y * x)
}
# The operators' arguments as a tuple, made only where one is passed on (a decline, a
# record): most calls need none (the hot head and ``call`` are given theirs).
_ARGS = {"op": "({ab},)", "rop": "(A, B)"}


def _hot_source(name: str, srcs: tuple[str, ...], kind: str) -> str | None:
    """The hot path of one formula primitive of one or two inputs (see above), as source,
    under the head ``kind`` of ``_HEADS``; None for other arities."""
    n = len(srcs)
    if n not in (1, 2):
        return None
    head, decline = _HEADS[kind]
    ab = _ab(n)
    head = head.format(name=name, n=n, unpack="A, B" if n == 2 else "(A,)", ab=ab)
    decline = decline.format(ab=ab)
    code = _unary_or_binary_source(srcs, head, decline)
    args = _ARGS.get(kind)
    return code if args is None else code.replace("(prim, args, ", f"(prim, {args.format(ab=ab)}, ")


def _ab(n: int) -> str:
    return "A, B" if n == 2 else "A"


def _unary_or_binary_source(srcs: tuple[str, ...], head: str, decline: str) -> str:
    if len(srcs) == 1:
        return _UNARY_HOT.format(head=head, decline=decline, tt=_term_src(srcs[0], "A._t"),
                                 plain=_PLAIN_RESULT, flat=_FLAT_RESULT)
    ta, tb = _term_src(srcs[0], "ga"), _term_src(srcs[1], "gb")
    if ta == "None" or tb == "None":
        tab = f"\n            tt = {tb if ta == 'None' else ta}"
    else:  # each term in the output's dtype already, or the general rule (which casts
        # each coefficient first) decides
        both = "tt = ta + tb if ta.dtype is y.dtype and tb.dtype is y.dtype else None"
        tab = f"\n{_INDENT}ta = {ta}\n{_INDENT}tb = {tb}\n{_INDENT}{both}"
        if _normal(srcs[0], swap=True) == _normal(srcs[1]) and ta != "ga":
            # f(x, x) of a symmetric f: the two terms are equal (bit for bit)
            tab = (f"\n{_INDENT}ta = {ta}\n{_INDENT}if A is B:\n{_INDENT}    tt = ta + ta"
                   f" if ta.dtype is y.dtype else None\n{_INDENT}else:\n{_INDENT}    tb = {tb}"
                   f"\n{_INDENT}    {both}")
    return _BINARY_HOT.format(
        head=head, decline=decline, ta=ta, tb=tb, tab=tab, plain=_PLAIN_RESULT,
        flat=_FLAT_RESULT,
        operand_a=_OPERAND.format(T="A", x="a", g="ga", L="LA", decline=decline),
        operand_b=_OPERAND.format(T="B", x="b", g="gb", L="LB", decline=decline))


def _specialized_hot(prim: Any, fn: Any, srcs: tuple[str, ...]) -> Any:
    """The hot function of one formula primitive (None for other arities). Its namespace
    is the one its variants are compiled into (``variant``)."""
    code = _hot_source(prim.name, srcs, "hot")
    if code is None:
        return None
    hot = _compiled(code, f"hot_{prim.name}", None, impl=fn, Tensor=Tensor, _new=_new,
                    # the rules unwrapped (not _or_quietly): a warning in them declines the
                    # whole hot function (_guarded), to the general way, which is quiet
                    _INPLACE_MIN=_INPLACE_MIN, _unary_tangent=_unary_tangent.__wrapped__,
                    _binary_tangent=_binary_tangent.__wrapped__, _finished=_finished,
                    _generic=np.generic, _asarray=np.asarray, _live=_D.live,
                    _state=_state, _inference=_inference, _mark_inference=_D._mark_inference,
                    prim=prim, _apply=apply, _mismatch=_D.mismatch)
    ns = hot.__globals__
    ns["_record"] = functools.partial(_first_record, ns)
    return hot


def _compiled(code: str, fname: str, ns: dict[str, Any] | None = None, decline: str = "None",
              **names: Any) -> Any:
    """The function ``fname`` that ``code`` defines, over the array formulas' names (in a
    namespace of its own, or in ``ns``), returning ``decline`` on a floating-point warning
    (``_guarded``)."""
    if ns is None:
        ns = dict(np_namespace, _ndarray=_ndarray, **names)
    code = _guarded(code, decline)
    exec(compile(code, _visible(code, fname), "exec"), ns)  # noqa: S102
    fn = ns[fname]
    fn.source = code  # what was generated, for reading
    return fn


def _visible(code: str, fname: str) -> str:
    """The pseudo-filename (``<dualad hot_sin>``) under which the generated ``code`` is
    compiled, its text registered with ``linecache``: a traceback through the function
    shows its lines, and ``inspect.getsource`` finds them. The entry has no modification
    time, which ``linecache.checkcache`` keeps (there is no file to compare it with): the
    idiom of SymPy's ``lambdify``, attrs and IPython. A name registered before with other
    text (a function generated again, differently) is numbered anew, so that a function
    made earlier keeps its own lines. Generation costs this at import; calls, nothing."""
    lines = code.splitlines(keepends=True)
    filename, n = f"<dualad {fname}>", 1
    while (entry := linecache.cache.get(filename)) is not None and entry[2] != lines:
        n += 1
        filename = f"<dualad {fname} #{n}>"
    linecache.cache[filename] = (len(code), None, lines, filename)
    return filename


def variant(prim: Any, kind: str) -> Any:
    """``prim``'s hot path as ``"call"`` (``prim(*args, **params)``), ``"op"`` (the
    operator ``A op B``, or ``op A``) or ``"rop"`` (the reflected operator), made once, in
    the hot function's namespace (what a test patches there, every variant sees)."""
    made = prim.hot.__dict__.setdefault("variants", {})
    fn = made.get(kind)
    if fn is None:
        code = _hot_source(prim.name, prim.formulas, kind)
        fn = made[kind] = _compiled(code, f"{kind}_{prim.name}", prim.hot.__globals__,
                                    _HEADS[kind][1].format(ab=_ab(len(prim.formulas))))
    return fn


def _called_directly(p: Ufunc) -> None:
    """Make ``p(...)`` run its ``"call"`` variant: a class of its own whose ``__call__``
    it is, compiled on the first call (most programs call few of the primitives)."""

    def first(*args: Any, **params: Any) -> Any:
        fn = variant(p, "call")
        cls.__call__ = staticmethod(fn)  # type: ignore[method-assign,assignment]
        return fn(*args, **params)

    cls = type("Ufunc", (Ufunc,), {"__slots__": (), "__call__": staticmethod(first),
                                   "__module__": __name__, "__doc__": Ufunc.__dict__["__doc__"]})
    p.__class__ = cls


def _sum_to(c: Any, shape: tuple[int, ...], nb: int = 0) -> Any:
    """Sum ``c`` (``nb`` batch axes, then broadcast axes) down to batch + ``shape``."""
    want = c.shape[:nb] + shape
    if c.shape == want:
        return c
    extra = c.ndim - nb - len(shape)
    axes = tuple(range(nb, nb + extra)) + tuple(
        nb + extra + i for i, d in enumerate(shape) if d == 1 and c.shape[nb + extra + i] != 1)
    return c.sum(axis=axes, keepdims=True).reshape(want) if axes else c.reshape(want)


@_or_quietly
def fast_vjp(prim: Any, ct: Any, arrays: Any, y: Any, avals: Any, needs: Any, od: Any) -> Any:
    """The transposed JVP on arrays: the program is ``sum_i multiply(t_i, c_i)``, so the
    cotangent of input i is multiply's transpose, ``ct * conj(c_i)`` summed to its shape.
    Used only when nothing needs recording (no create_graph, no tangents); a batched
    cotangent keeps its leading batch axes. A bare-array cotangent gives bare arrays."""
    if ct.__class__ is _ndarray:
        g, nb = ct, -1  # -1: bare arrays in and out
    else:
        g, nb = ct._data, ct._nb
    kernels = prim.kernels
    if len(kernels) == 1:  # unary: no loop
        return [_ct_term(kernels[0], g, nb, arrays, y, avals[0], od) if needs[0] else None]
    return [_ct_term(kernels[i], g, nb, arrays, y, avals[i], od) if needs[i] else None
            for i in range(len(kernels))]


def _ct_term(f: Any, g: Any, nb: int, arrays: Any, y: Any, aval: Any, od: Any) -> Any:
    """The cotangent of one input: ``g * conj(f(...))``, summed to its shape, in its dtype."""
    shape, dtype = aval
    n = nb if nb > 0 else 0
    if f.__class__ is not int:
        k = f(*arrays, y)
        if k.__class__ is not _ndarray and k.__class__ is not float:
            k = np.asarray(k) if isinstance(k, _generic) else _as_array(k)  # NumPy scalars
            # (0-d results), Python complex, bool, int; a Dask or CuPy array as it is
        if k.__class__ is not float:
            if k.dtype is not od:
                k = _coef_dtype(k, od)
            if k.dtype.kind == "c":
                k = np.conj(k)
        c = seed_product(g, k) if nb > 0 else None  # (a Jacobian's first step: diag(k))
        if c is None:
            c = _times_one_value(g, k) if k.__class__ is float and g.size >= _INPLACE_MIN \
                else g * k
    elif f == 1:
        c = g
    elif f == -1:
        c = -g
    else:
        c = _B.zeros(g.shape[:n] + shape, dtype, like=_like(g))
    return _ct_finish(c, nb, shape, dtype)


def _times_one_value(g: Any, k: float) -> Any:
    """``g * k``; when ``g`` is one value broadcast (every stride 0: a loss's seed sent
    back through ``sum``), the product of that one value, broadcast: what each element of
    ``g * k`` is, without writing out an array of copies (an allocation and a pass through
    memory fewer, and the next product reads one value). Read-only, as ``g`` is."""
    if any(g.strides):
        return g * k
    one = g[(slice(0, 1),) * g.ndim]  # (an array of g's rank: the dtype NumPy gives g * k)
    return np.broadcast_to(one * k, g.shape)


def _ct_finish(c: Any, nb: int, shape: Any, dtype: Any) -> Any:
    """``c`` summed to the input's shape (past ``nb`` batch axes), in the input's dtype."""
    n = nb if nb > 0 else 0
    if c.__class__ is not _ndarray:
        c = np.asarray(c) if isinstance(c, _generic) else _as_array(c)
    if (c.shape != shape) if not n else (c.shape[n:] != shape):
        c = _sum_to(c, shape, n)
    if c.dtype is not dtype and c.dtype != dtype:  # the adjoint of R -> C is the real part
        c = (c.real if c.dtype.kind == "c" and dtype.kind != "c" else c).astype(dtype)
    return c if nb < 0 and c.__class__ is _ndarray else _wrap(c, nb if nb > 0 else 0)  # (the
    # engine's bare cotangents are NumPy's: another kind's is a Tensor)


# -- the array transpose, generated per primitive from its formulas --------------------
#
# The engine's fast lane (a bare-array cotangent, real dtypes) for each formula
# primitive, written from the formula strings as its hot path is: the
# coefficient inline, ``ct * c_i`` (no conj: real), kept when it already has the input's
# shape and dtype. A coefficient in another dtype, complex values and batched
# cotangents go on to ``fast_vjp``.

_TRANSPOSED_TERM = """
        if needs[{i}]:
            {coef}
            shape, dtype = avals[{i}]
            res[{i}] = c if (c.__class__ is _ndarray and c.dtype is dtype and c.shape == shape) \\
                else _ct_finish(c, -1, shape, dtype)"""

_TRANSPOSED = """
def transposed_{name}(prim, ct, arrays, y, avals, needs, od):
    if ct.__class__ is _ndarray and od.kind == "f":
        {unpack} = arrays
        res = [None] * {n}{terms}
        return res
    return fast_vjp(prim, ct, arrays, y, avals, needs, od)
"""


# the names ``_times_coef``'s source reads besides the formula's (a float64 or float32
# NumPy scalar's dtype is known by its class: reading ``.dtype`` costs a lookup)
_COEF_NAMES = dict(_f8=np.float64, _f4=np.float32, _d8=np.dtype(np.float64),
                   _d4=np.dtype(np.float32))


def _times_coef(src: str, var: str, decline: str, indent: str) -> str:
    """Source setting ``var`` to ``ct`` times the formula ``src`` (lines joined at
    ``indent``), running ``decline`` for a coefficient not in the output's dtype ``od`` —
    the general rule casts it (a 0-d one is a NumPy scalar; a Python float or int is
    weak)."""
    if src in ("1", "-1"):
        return f"{var} = {'ct' if src == '1' else '-ct'}"
    return f"\n{indent}".join([
        f"k = {_inlined(src)}",
        "if k.__class__ is _ndarray:",
        "    if k.dtype is not od:",
        f"        {decline}",
        "elif k.__class__ is _f8:",
        "    if od is not _d8:",
        f"        {decline}",
        "elif k.__class__ is _f4:",
        "    if od is not _d4:",
        f"        {decline}",
        "elif k.__class__ is not float and k.__class__ is not int:",
        f"    {decline}",
        f"{var} = ct * k"])


def _specialized_transposed(name: str, srcs: tuple[str, ...]) -> Any:
    """The array transpose of one formula primitive (see above)."""
    if len(srcs) > 2 or "0" in srcs:
        return fast_vjp
    decline = "return fast_vjp(prim, ct, arrays, y, avals, needs, od)"
    terms = "".join(_TRANSPOSED_TERM.format(i=i, coef=_times_coef(src, "c", decline, " " * 12))
                    for i, src in enumerate(srcs))
    code = _TRANSPOSED.format(name=name, n=len(srcs), terms=terms,
                              unpack="(x,)" if len(srcs) == 1 else "a, b")
    return _compiled(code, f"transposed_{name}", None, decline[len("return "):],
                     fast_vjp=fast_vjp, _ct_finish=_ct_finish,
                     **_COEF_NAMES)


# -- the lane's steps: one input's cotangent, by its formula ----------------------------
#
# For a node with one input that requires grad, of the output's shape and float dtype
# (``graph.Node.lane``), the engine needs nothing but ``ct * c_i``: a cotangent comes in
# the output's dtype (the engine casts the seeds; a rule's result is in its input's dtype)
# and each step keeps it. A coefficient of another dtype declines (None) and the node goes
# the general way.
#
# On a one-element cotangent the engine runs its steps on NumPy scalars (``ix``, the index
# of that element, not None): NumPy's scalar arithmetic is the same operation in the same
# dtype as its array loops, at a tenth of a ufunc call's cost on a one-element array —
# exactly for + - * / (correctly rounded) and ufuncs (the same loop), within an ulp for
# ``**`` (the C library's pow on scalars; NumPy's SIMD loop on arrays, on AVX-512 CPUs).
# A step then reads the element of each array it was given (each has the output's shape:
# the other operand of a step is a Python scalar, and ``f(x, x)``'s two are the input).

_STEP = """
def step_{name}_{i}(ct, {a}, {b}, y, od, ix):{scalar}
    {term}
    return c0
"""

# f(x, x): the step of the one input both operands are is the sum of both terms, as the
# engine sums the two cotangents the array transpose gives (``engine._pair``): bit for bit.
_PAIR = """
def pair_{name}(ct, a, b, y, od, ix):{scalar}
    {t0}
    {t1}
    return c0 + c1
"""


def _elements(reads: Any, arrays: Any) -> str:
    """Source taking, in scalar mode, the element of each array in ``arrays`` (``(what,
    name)``: an input position or ``"out"``, and its name in the step) that ``reads`` (a
    formula's reads, from ``compile_formula``) names; a step's other operand is a Python
    scalar, not among ``arrays``."""
    read = [v for r, v in arrays if r in reads]
    if not read:
        return ""
    return "\n    if ix is not None:" + "".join(f"\n        {v} = {v}[ix]" for v in read)


def _steps(name: str, srcs: tuple[str, ...], reads: Any) -> tuple[Any, ...]:
    """The lane's step for each input (None for a zero derivative), or () past two inputs."""
    if len(srcs) > 2:
        return ()
    a, b = ("x", "_") if len(srcs) == 1 else ("a", "b")
    return tuple(None if src == "0" else _compiled(
        _STEP.format(name=name, i=i, a=a, b=b,
                     scalar=_elements(reads[i], ((i, (a, b)[i]), ("out", "y"))),
                     term=_times_coef(src, "c0", "return None", " " * 4)),
        f"step_{name}_{i}", **_COEF_NAMES)
        for i, src in enumerate(srcs))


def _pair(name: str, srcs: tuple[str, ...], reads: Any) -> Any:
    """The lane's step of ``f(x, x)`` (None unless both inputs have a nonzero derivative)."""
    if len(srcs) != 2 or "0" in srcs:
        return None
    code = _PAIR.format(name=name, scalar=_elements(reads[0] + reads[1],
                                                    ((0, "a"), (1, "b"), ("out", "y"))),
                        t0=_times_coef(srcs[0], "c0", "return None", " " * 4),
                        t1=_times_coef(srcs[1], "c1", "return None", " " * 4))
    return _compiled(code, f"pair_{name}", **_COEF_NAMES)


AVAL_LEVEL = (1 << 60) + 1


def _wrap_array(c: Any) -> Any:
    return _wrap(c, 0)


_new = object.__new__
_ndarray = np.ndarray
_generic = np.generic
_state = _gm.state
_inference = _gm.inference_threads  # nonzero: some thread is in inference mode


PRIMS: dict[str, Ufunc] = {}
for _name, (_fn, *_srcs) in {**UNARY, **BINARY, **TERNARY}.items():
    PRIMS[_name] = _make(_name, _fn, tuple(_srcs))

_negative, _multiply, _add = PRIMS["negative"], PRIMS["multiply"], PRIMS["add"]


def _nondiff(name: str, fn: Any) -> Ufunc:
    p = Ufunc(name, fn, nondiff=True, batch=elementwise_batch(fn), aval=elementwise_aval)
    p.nin = fn.nin if isinstance(fn, np.ufunc) else 1
    p.formulas = ()
    p.ufunc = fn
    return p


for _name, _fn in NONDIFF.items():
    PRIMS[_name] = _nondiff(_name, _fn)


# -- non-holomorphic functions: R-linear rules ------------------------------------------


@_quietly
def _abs_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    """``d/dx = sign(x)`` for real x; for complex z, ``d|z| = Re(conj(z / |z|) dz)``, 0 at z = 0."""
    x, t = primals[0], tangents[0]
    if x._data.dtype.kind != "c":
        return apply(_multiply, t, apply(PRIMS["sign"], x))
    # (zero at z = 0, as torch's; |z| from z, not the output, which a write may change:
    # torch saves z alone)
    r = apply(PRIMS["abs"], x)
    sgn = _where(apply(PRIMS["equal"], r, 0), 0, apply(PRIMS["divide"], x, r))
    return apply(PRIMS["real"], apply(_multiply, t, apply(PRIMS["conj"], sgn)))


@_quietly
def _sign_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    """``d/dx = 0`` for real x; complex z: ``d(z/|z|) = (dz - y Re(conj(y) dz)) / |z|``, y the result."""
    x, t = primals[0], tangents[0]
    if x._data.dtype.kind != "c":
        return None
    out = apply(PRIMS["sign"], x)  # (from z, not the output, which a write may change)
    r = apply(PRIMS["abs"], x)
    inv = _where(apply(PRIMS["equal"], r, 0), 0, apply(PRIMS["reciprocal"], r))
    along = apply(PRIMS["real"], apply(_multiply, t, apply(PRIMS["conj"], out)))
    return apply(_multiply, apply(PRIMS["subtract"], t, apply(_multiply, along, out)), inv)


@_quietly
def _angle_jvp(primals: Any, tangents: Any, out: Any) -> Any:
    """``d/dx = 0`` for real x; for complex z, ``d(angle(z)) = Im(conj(z) dz) / |z|**2``."""
    x, t = primals[0], tangents[0]
    if x._data.dtype.kind != "c":
        return None
    r2 = apply(PRIMS["real"], apply(_multiply, x, apply(PRIMS["conj"], x)))
    c = _where(apply(PRIMS["equal"], r2, 0), 0, apply(PRIMS["divide"], apply(PRIMS["conj"], x), r2))
    return apply(PRIMS["imag"], apply(_multiply, t, c))


def _where(c: Any, a: Any, b: Any) -> Any:
    from .linear import where

    return apply(where, c, a, b)


def _self_linear(name: str, fn: Any) -> Ufunc:
    ref: list[Ufunc] = []

    def jvp(primals: Any, tangents: Any, out: Any) -> Any:
        return apply(ref[0], tangents[0])

    p = Ufunc(name, fn, jvp, linear=(0,), batch=elementwise_batch(fn), aval=_real_imag_aval(name))
    p.nin, p.formulas, p.ufunc = 1, (), fn
    ref.append(p)
    return p


def _real_imag_aval(name: str) -> Any:
    def aval(args: Any) -> Any:
        (a,) = args
        dt = a.dtype
        return a.shape, (_real_dtype(dt) if name in ("real", "imag") else dt)

    return aval


def _special(name: str, fn: Any, jvp: Any, reads: Any) -> Ufunc:
    p = Ufunc(name, fn, jvp, reads=reads, batch=elementwise_batch(fn), aval=elementwise_aval)
    p.nin, p.formulas, p.ufunc = 1, (), fn
    return p


PRIMS["conj"] = _self_linear("conj", np.conjugate)
PRIMS["real"] = _self_linear("real", np.real)
PRIMS["imag"] = _self_linear("imag", np.imag)
PRIMS["real"].view = PRIMS["imag"].view = True  # (NumPy's real and imag parts are views)
# sign's and angle's derivatives are 0 for a real input: their rules read z only when it is
# complex (a real sign saves nothing, as torch's; a later write into x does not matter)
_IF_COMPLEX = ("0 if complex",)
PRIMS["abs"] = _special("abs", np.abs, _abs_jvp, (0,))
PRIMS["sign"] = _special("sign", np.sign, _sign_jvp, _IF_COMPLEX)
PRIMS["angle"] = _special("angle", np.angle, _angle_jvp, _IF_COMPLEX)

for _p in PRIMS.values():
    _p.arity = _p.nin
