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
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _fpfilter  # noqa: F401  (installs the filter this module's code relies on)
from ..core.dispatch import Primitive, apply
from ..core.tensor import Tensor
from ._util import elementwise_aval, elementwise_batch, is_lin
from .linear import _conj, astype, broadcast_to, unbroadcast, where

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
    # sinc' = (cos(pi x) - sinc x) / x, by its Maclaurin series where |x| < 0.1: the quotient
    # cancels there (a relative error eps / x^2), and its derivatives would meet 0 / 0 (the
    # masked branch divides by 1 there, so it stays finite and masks exactly). From x alone,
    # as torch's: sinc(x) recomputed, so a write into the output leaves this readable.
    "sinc": (np.sinc, "where(abs(x) < 0.1, PI * PI * x * horner(PI * PI * x * x, SINC_SLOPE), "
                      "(cos(PI * x) - sinc(x)) / where(abs(x) < 0.1, 1, x))"),
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
    # sinc'(x) / (pi^2 x) = sum_k (-1)^k 2k u^(k-1) / (2k+1)!, u = (pi x)^2, k = 1..10:
    # below |x| = 0.1 the 11th term is under 1e-29 of the first, and sinc's derivatives at
    # 0 are exact to order 20
    "SINC_SLOPE": tuple((-1) ** k * 2 * k / math.factorial(2 * k + 1) for k in range(1, 11)),
}


def horner(u: Any, coefficients: tuple[float, ...]) -> Any:
    """The polynomial ``sum_i coefficients[i] u^i`` by Horner's scheme (operators only: it
    runs on arrays and on Tensors alike, so both namespaces of the formulas share it)."""
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * u + c
    return acc


HELPERS = {"horner": horner}


# -- the linear ones: their transpose rules -------------------------------------------------
# Adjoints for ``Re<a, b>`` (``rule(ct, args) -> cotangent per argument``, see
# ``rules.linear``): multiplying by ``c`` transposes to multiplying by ``conj(c)``, and a
# broadcast operand's cotangent is summed back to its shape (``unbroadcast``).


def _add_t(ct: Any, args: Any) -> list[Any]:
    return [unbroadcast(ct, a.shape) if is_lin(a) else None for a in args]


def _sub_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    return [unbroadcast(ct, a.shape) if is_lin(a) else None,
            unbroadcast(-ct, b.shape) if is_lin(b) else None]


def _mul_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    if is_lin(a):
        return [unbroadcast(ct * _conj(b), a.shape), None]
    return [None, unbroadcast(_conj(a) * ct, b.shape)]


def _div_t(ct: Any, args: Any) -> list[Any]:
    a, b = args
    return [unbroadcast(ct / _conj(b), a.shape), None]


def _scale_t(k: float) -> Any:
    return lambda ct, args: [ct * k]


# Primitives linear in which arguments (jointly, or one at a time for products), and the
# transpose rule of each.
LINEAR: dict[str, tuple[tuple[int, ...], bool, Any]] = {
    "negative": ((0,), True, lambda ct, args: [-ct]),
    "positive": ((0,), True, lambda ct, args: [ct]),
    "add": ((0, 1), True, _add_t),
    "subtract": ((0, 1), True, _sub_t),
    "multiply": ((0, 1), False, _mul_t),
    "divide": ((0,), True, _div_t),
    "deg2rad": ((0,), True, _scale_t(CONSTANTS["DEG"])),
    "rad2deg": ((0,), True, _scale_t(CONSTANTS["RAD"])),
}

# Formulas are evaluated with dualad.numpy's names, bound once the namespace exists.
namespace: dict[str, Any] = dict(CONSTANTS, **HELPERS)


# The same formulas over arrays: the kernel of the forward fast path (no Tensors below).
np_namespace: dict[str, Any] = dict(CONSTANTS, **HELPERS)
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
    "sign": np.sign, "floor": np.floor, "trunc": np.trunc, "abs": np.abs,
    "sinc": np.sinc,
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
#   ``np.errstate`` where it is missing); the fast layer's array rules
#   (``dualad/fast/elementwise.py``: ``_unary_tangent``, ``_binary_tangent``,
#   ``fast_jvp``'s terms, ``fast_vjp``) run as they are and again quietly on a warning
#   (``_or_quietly``). The primal of the op itself is computed outside, in the user's
#   error state.
# - the fast layer's generated code (hot functions, array transposes, the lane's steps)
#   runs as it is, in a ``try`` (free unless something is raised): a warning raised there
#   (the RuntimeWarnings of this module, where the formulas over arrays are compiled, and
#   of the fast layer's are errors, by ``_fpfilter``'s filter; an "error" filter or
#   ``errstate(all="raise")`` of the user's) declines to the general way, which computes
#   the primal again in the user's error state (its warning, if any, is NumPy's own) and
#   the derivative quietly. Only singular points pay for that.
#
# A user's filter put before this one (``warnings.simplefilter("always")``) would show them
# instead: ``_fpfilter.in_front`` puts it first again where a derivative computation starts.

_FP = (RuntimeWarning, FloatingPointError, ZeroDivisionError)  # (the last: ``_inlined``)
np_namespace["__name__"] = __name__  # (warnings from the formulas over arrays: this module)
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


def _no_out_writer(out: Tensor, prim: Primitive, args: Any) -> Tensor:
    raise TypeError(f"dualad.numpy.{prim.name}: out= needs dualad.rules.inplace")


_write_out: list[Any] = [_no_out_writer]
"""How a ufunc writes NumPy's ``out=`` Tensor: in-place writing (``rules.inplace.into``)
builds on this module's primitives, so it installs its writer here
(``install_out_writer``) instead of being imported from it."""


def install_out_writer(fn: Any) -> None:
    """Make ``fn(out, prim, args)`` the writer of a ufunc's ``out=`` (``rules.inplace``)."""
    _write_out[0] = fn


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
            return _write_out[0](out, self, args)
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
    unknown = names - set(params) - {"y"} - set(CONSTANTS) - set(HELPERS) - _FUNCS
    if unknown:
        raise NameError(f"formula {src!r} uses unknown names {sorted(unknown)}")
    fn = eval(f"lambda {', '.join(params)}, y: {src}", namespace if ns is None else ns)  # noqa: S307
    reads = tuple(i for i, p in enumerate(params) if p in names) + (("out",) if "y" in names else ())
    return fn, reads


_FUNCS = {
    "where", "log", "exp", "exp2", "sqrt", "sin", "cos", "sinh", "cosh", "copysign", "isnan",
    "logical_or", "logical_and", "sign", "floor", "trunc", "powm1", "log_as", "powlog",
    "recip", "abs", "sinc",
}


def register_formula_names(*, constants: dict[str, float] | None = None,
                           on_tensors: dict[str, Any] | None = None,
                           on_arrays: dict[str, Any] | None = None) -> None:
    """Let derivative formulas of entries made from now on use more names: the way a layer
    above (``dualad.scipy.special``: digamma, the Bessel functions) extends the formulas'
    vocabulary without writing into this module's tables.

    ``constants``: name -> number. ``on_tensors``: name -> the function a formula calls in
    a JVP rule (on Tensors; it may be registered once its primitive exists, after
    ``on_arrays``). ``on_arrays``: name -> the function the fast layer's array kernels call.
    A name registered already keeps its first constant (one value per name).
    """
    for name, value in (constants or {}).items():
        CONSTANTS.setdefault(name, value)
        namespace[name] = np_namespace[name] = CONSTANTS[name]
    for table, fns in ((namespace, on_tensors), (np_namespace, on_arrays)):
        for name, fn in (fns or {}).items():
            _FUNCS.add(name)
            table[name] = fn


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
        return apply(astype, c, dtype=od if (cd.kind == "c" or od.kind != "c")
                     else _real_dtype(od))
    return c


def formula_jvp(fns: list[Any]) -> Callable[..., Any]:
    """JVP rule ``sum_i t_i * f_i(args, y)`` from per-argument derivative formulas."""

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
            acc = apply(astype, acc, dtype=out.dtype)
        if acc.shape != out.shape:
            acc = apply(broadcast_to, acc, shape=out.shape)
        return acc

    return _quietly(jvp)


def _make(name: str, fn: Any, srcs: tuple[str, ...]) -> Ufunc:
    compiled = [compile_formula(s, len(srcs)) for s in srcs]
    lin, joint, transpose = LINEAR.get(name, ((), True, None))
    p = Ufunc(
        name,
        fn,
        formula_jvp([c[0] for c in compiled]),
        reads=tuple(c[1] for c in compiled),
        linear=lin,
        joint=joint,
        batch=elementwise_batch(fn),
        aval=elementwise_aval,
        transpose=transpose,
    )
    p.nin = len(srcs)
    p.formulas = srcs
    p.ufunc = fn
    # the same formulas on Tensors (the fast layer's direct transpose: fast.transpose.elementwise_t)
    # (not quieted one by one: their one caller, elementwise_t, runs quietly)
    p.coefs = [c[0] for c in compiled]
    # the fast layer's slots (``dualad.fast``), empty on the general path: the formulas
    # over arrays, the engine's steps for one input's cotangent and for ``f(x, x)``
    p.kernels, p.steps, p.pair = (), (), None
    FORMULA_PRIMS.append(p)
    for accelerate in _ACCELERATORS:
        accelerate(p)
    return p


FORMULA_PRIMS: list[Ufunc] = []
"""Every primitive made from formulas (``_make``): this module's and ``dualad.scipy.special``'s."""

_ACCELERATORS: list[Callable[[Ufunc], None]] = []


def accelerate_with(accelerate: Callable[[Ufunc], None]) -> None:
    """Register ``accelerate(prim)``, which gives a formula primitive its fast paths (the
    fast layer's entry here: ``dualad.fast.elementwise``): it runs now on every formula
    primitive made so far, and on each one made later (``dualad.scipy.special``'s, made
    when that module is first imported)."""
    _ACCELERATORS.append(accelerate)
    for p in FORMULA_PRIMS:
        accelerate(p)
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
    return apply(where, c, a, b)


def _self_linear(name: str, fn: Any, transpose: Any) -> Ufunc:
    ref: list[Ufunc] = []

    def jvp(primals: Any, tangents: Any, out: Any) -> Any:
        return apply(ref[0], tangents[0])

    p = Ufunc(name, fn, jvp, linear=(0,), batch=elementwise_batch(fn), aval=_real_imag_aval(name),
              transpose=transpose)
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


# R-linear, not C-linear: each one's adjoint for Re<a, b> — conj its own; real the embedding
# of R in C (a cast back to the input's dtype); imag multiplying by 1j
PRIMS["conj"] = _self_linear("conj", np.conjugate, lambda ct, args: [_conj(ct)])
PRIMS["real"] = _self_linear("real", np.real,
                             lambda ct, args: [apply(astype, ct, dtype=args[0].dtype)])
PRIMS["imag"] = _self_linear("imag", np.imag, lambda ct, args: [ct * 1j])
PRIMS["real"].view = PRIMS["imag"].view = True  # (NumPy's real and imag parts are views)
# sign's and angle's derivatives are 0 for a real input: their rules read z only when it is
# complex (a real sign saves nothing, as torch's; a later write into x does not matter)
_IF_COMPLEX = ("0 if complex",)
PRIMS["abs"] = _special("abs", np.abs, _abs_jvp, (0,))
PRIMS["sign"] = _special("sign", np.sign, _sign_jvp, _IF_COMPLEX)
PRIMS["angle"] = _special("angle", np.angle, _angle_jvp, _IF_COMPLEX)

for _p in PRIMS.values():
    _p.arity = _p.nin
