"""The op database: one entry per public differentiable function of ``dualad.numpy``.

Each :class:`OpInfo` names a function, says how to call it (``call(ns, *args,
**kwargs)`` with ``ns`` either ``dualad.numpy`` or ``numpy``, so the same entry
also gives NumPy's reference value and dtype), which dtypes it is
differentiable in, and how to build sample inputs (:class:`Sample`) for a
dtype: shapes including 0-d, empty and broadcasting cases, non-contiguous
(transposed, strided, negative-stride) and Fortran-ordered arrays, values in
the function's domain and away from its kinks.

The checks that drive the database live at the bottom of this module
(:func:`check_forward`, :func:`check_reverse`, ...) and are parametrized over
:func:`cases` by the ``test_ops_*`` / ``test_transposition`` / ``test_batched``
files; the higher-order sweep (every composition of two modes, third order, nested
functional transforms) is at the very bottom. Every check records the (function, dtype,
mode) case it passed in :data:`CASES`; ``conftest.py`` prints the count at the end of the
run, and the higher-order sweep's counts per composition.

Adding a function to ``dualad.numpy`` without adding it here (or to
:data:`NONDIFF` / :data:`EXEMPT`) makes ``test_every_public_function_has_an_entry``
fail.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp

REAL = ("float32", "float64")
ALL = REAL + ("complex64", "complex128")
WIDE = {"float32": "float64", "float64": "float64", "complex64": "complex128",
        "complex128": "complex128"}
B = 3  # batch size of the batched-tangent / batched-cotangent checks

# (function, dtype, mode) cases that passed, filled in by the checks below.
CASES: set[tuple[str, str, str]] = set()
# mode -> number of sample checks that passed (a case is checked on one or more samples)
CHECKS: dict[str, int] = {}


# ============================================================================ data model


@dataclasses.dataclass
class Sample:
    """One call: ``args`` (arrays at the ``diff`` positions become Tensors) and ``kwargs``."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    diff: tuple[int, ...]
    desc: str
    xfail: str | None = None


@dataclasses.dataclass
class OpInfo:
    name: str
    call: Callable[..., Any]  # call(ns, *args, **kwargs); ns is dualad.numpy or numpy
    samples: Callable[[Gen], list[Sample]]
    dtypes: tuple[str, ...] = REAL
    covers: tuple[str, ...] = ()  # aliases of dualad.numpy this entry also covers
    ref: bool = True  # compare values and dtypes with NumPy's own function
    gradgrad: bool = True
    # (mode | None, dtype | None, sample desc | None) -> reason (a known bug)
    xfail: dict[tuple[str | None, str | None, str | None], str] = dataclasses.field(
        default_factory=dict)

    def xfail_reason(self, mode: str, dtype: str, desc: str) -> str | None:
        for (md, dt, ds), why in self.xfail.items():
            if md in (None, mode) and dt in (None, dtype) and ds in (None, desc):
                return why
        return None


class Gen:
    """Deterministic sample arrays: the same op gets the same values in every precision."""

    def __init__(self, name: str, dtype: str) -> None:
        self.dtype = np.dtype(dtype)
        self.cplx = self.dtype.kind == "c"
        self.rdtype = np.empty((), self.dtype).real.dtype
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    # value domains (real part, for complex dtypes see ``cdom``)
    def _real(self, shape: tuple[int, ...], dom: str) -> np.ndarray:
        r, n = self.rng, int(np.prod(shape))
        if dom == "any":
            v = r.uniform(-2, 2, shape)
        elif dom == "pos":
            v = r.uniform(0.5, 2.0, shape)
        elif dom == "unit":
            v = r.uniform(-0.85, 0.85, shape)
        elif dom == "gt1":
            v = r.uniform(1.3, 3.0, shape)
        elif dom == "gtm1":
            v = r.uniform(-0.6, 2.0, shape)
        elif dom == "small":
            v = r.uniform(-0.6, 0.6, shape)
        elif dom == "nz":  # away from zero
            v = r.choice([-1.0, 1.0], shape) * r.uniform(0.3, 2.0, shape)
        elif dom == "nonint":  # away from integers and half-integers (floor, rint, ...)
            v = r.integers(-3, 3, shape) + r.choice([0.2, 0.3, 0.7, 0.8], shape)
            v = v + r.uniform(-0.04, 0.04, shape)
        elif dom in ("even", "odd"):  # two interleaved grids: never within 0.14 of each other
            v = 0.2 * (2 * r.integers(-5, 5, shape) + (dom == "odd")) + r.uniform(-0.03, 0.03,
                                                                                   shape)
        elif dom == "distinct":  # pairwise at least ~0.2 apart (sort, max, ...)
            v = ((r.permutation(n) - n / 2) * 0.25 + r.uniform(-0.02, 0.02, n)).reshape(shape)
        else:
            raise ValueError(dom)
        return np.asarray(v, dtype=np.float64)

    def _complex(self, shape: tuple[int, ...], cdom: str) -> np.ndarray:
        r = self.rng
        if cdom == "any":
            re, im = r.uniform(-1.5, 1.5, shape), r.uniform(-1.5, 1.5, shape)
        elif cdom == "rpos":  # right half-plane: away from the cut of log, sqrt, power
            re, im = r.uniform(0.5, 2.0, shape), r.uniform(-1.0, 1.0, shape)
        elif cdom == "small":  # inside the unit disc: away from the cuts of arcsin & co
            re, im = r.uniform(-0.5, 0.5, shape), r.uniform(-0.5, 0.5, shape)
        elif cdom == "acosh":
            re, im = r.uniform(1.5, 3.0, shape), r.uniform(-1.0, 1.0, shape)
        elif cdom == "nz":
            re = r.choice([-1.0, 1.0], shape) * r.uniform(0.3, 1.5, shape)
            im = r.choice([-1.0, 1.0], shape) * r.uniform(0.3, 1.5, shape)
        else:
            raise ValueError(cdom)
        return re + 1j * im

    def __call__(self, shape: Any = (), dom: str = "any", layout: str = "C", *,
                 cdom: str | None = None, real: bool = False) -> np.ndarray:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if self.cplx and not real:
            a = self._complex(shape, cdom or ("any" if dom == "any" else "nz")).astype(
                self.dtype)
        else:
            a = self._real(shape, dom).astype(self.rdtype)
        return lay(a, layout)

    def cond(self, shape: Any) -> np.ndarray:
        return self.rng.random(shape) < 0.5

    def ints(self, lo: int, hi: int, shape: Any) -> np.ndarray:
        return self.rng.integers(lo, hi, shape)


def lay(a: np.ndarray, layout: str) -> np.ndarray:
    """The same values in another memory layout.

    C: contiguous; F: Fortran order; T: a transposed view; S: a strided view
    (every other element of a bigger buffer); N: a negative-stride view.
    """
    if a.ndim == 0:
        return np.array(a)  # (np.ascontiguousarray would make it 1-d)
    if layout == "C":
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "T":
        return np.ascontiguousarray(a.T).T
    if layout == "S":
        buf = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        buf[..., ::2] = a
        return buf[..., ::2]
    if layout == "N":
        return np.ascontiguousarray(a[::-1])[::-1]
    raise ValueError(layout)


def _d(shape: tuple[int, ...], layout: str = "C") -> str:
    s = "x".join(map(str, shape)) if shape else "0d"
    return s + ("" if layout == "C" else layout)


# ============================================================================ samplers

UNARY_SHAPES = [((), "C"), ((0,), "C"), ((5,), "S"), ((2, 3), "F"), ((3, 4), "T"),
                ((2, 1, 3), "N")]


def unary(dom: str = "any", cdom: str | None = None) -> Callable[[Gen], list[Sample]]:
    def samples(g: Gen) -> list[Sample]:
        return [Sample((g(s, dom, lay_, cdom=cdom),), {}, (0,), _d(s, lay_))
                for s, lay_ in UNARY_SHAPES]

    return samples


BINARY_SHAPES = [((), "C", (), "C"), ((4,), "C", (), "C"), ((2, 3), "F", (3,), "S"),
                 ((2, 1), "C", (1, 3), "C"), ((0, 3), "C", (3,), "C"),
                 ((3, 4), "T", (3, 4), "C")]


def binary(da_: str = "any", db: str = "any", ca: str | None = None, cb: str | None = None,
           consts: bool = True, mixed: bool = True) -> Callable[[Gen], list[Sample]]:
    """Both arguments differentiable over broadcasting shapes; then constant operands
    (a Python scalar, an ndarray) and, for complex dtypes, a real second operand (R x C)."""

    def samples(g: Gen) -> list[Sample]:
        out = [Sample((g(sa, da_, la, cdom=ca), g(sb, db, lb, cdom=cb)), {}, (0, 1),
                      f"{_d(sa, la)}-{_d(sb, lb)}") for sa, la, sb, lb in BINARY_SHAPES]
        if consts:
            b = g((), db, cdom=cb).item()
            out.append(Sample((g((2, 3), da_, cdom=ca), b), {}, (0,), "t-pyscalar"))
            out.append(Sample((g((3,), da_, cdom=ca), g((2, 3), db, cdom=cb)), {}, (1,),
                              "ndarray-t"))
        if mixed and g.cplx:
            out.append(Sample((g((2, 3), da_, cdom=ca), g((3,), db, real=True)), {}, (0, 1),
                              "c-r"))
            out.append(Sample((g((3,), da_, real=True), g((2, 3), db, cdom=cb)), {}, (0, 1),
                              "r-c"))
        return out

    return samples


# ---------------------------------------------------------------- elementwise tables

# name: (real domain, complex domain or None when not defined / not differentiable on C)
UNARY_OPS: dict[str, tuple[str, str | None]] = {
    "negative": ("any", "any"), "positive": ("any", "any"), "exp": ("any", "any"),
    "exp2": ("any", "any"), "expm1": ("any", "any"), "log": ("pos", "rpos"),
    "log2": ("pos", "rpos"), "log10": ("pos", "rpos"), "log1p": ("gtm1", "rpos"),
    "sqrt": ("pos", "rpos"), "cbrt": ("nz", None), "square": ("any", "any"),
    "reciprocal": ("nz", "nz"), "sin": ("any", "any"), "cos": ("any", "any"),
    "tan": ("unit", "small"), "arcsin": ("unit", "small"), "arccos": ("unit", "small"),
    "arctan": ("any", "small"), "sinh": ("any", "any"), "cosh": ("any", "any"),
    "tanh": ("any", "any"), "arcsinh": ("any", "small"), "arccosh": ("gt1", "acosh"),
    "arctanh": ("unit", "small"), "sinc": ("nz", "nz"), "deg2rad": ("any", None),
    "rad2deg": ("any", None), "fabs": ("nz", None), "floor": ("nonint", None),
    "ceil": ("nonint", None), "trunc": ("nonint", None), "rint": ("nonint", None),
    "abs": ("nz", "nz"), "sign": ("nz", "nz"), "angle": ("nz", "nz"), "conj": ("any", "any"),
    "real": ("any", "any"), "imag": ("any", "any"),
}
UNARY_ALIASES = {"abs": ("absolute",), "conj": ("conjugate",), "deg2rad": ("radians",),
                 "rad2deg": ("degrees",), "arccos": ("acos",), "arcsin": ("asin",),
                 "arctan": ("atan",), "arccosh": ("acosh",), "arcsinh": ("asinh",),
                 "arctanh": ("atanh",), "trunc": ("fix",)}

# name: (domain a, domain b, complex domains (a, b) or None)
BINARY_OPS: dict[str, tuple[str, str, tuple[str, str] | None]] = {
    "add": ("any", "any", ("any", "any")), "subtract": ("any", "any", ("any", "any")),
    "multiply": ("any", "any", ("any", "any")), "divide": ("any", "nz", ("any", "nz")),
    "power": ("pos", "any", ("rpos", "small")),
    "float_power": ("pos", "any", ("rpos", "small")),
    "maximum": ("even", "odd", None), "minimum": ("even", "odd", None),
    "fmax": ("even", "odd", None), "fmin": ("even", "odd", None),
    "copysign": ("nz", "nz", None), "hypot": ("nz", "nz", None),
    "arctan2": ("nz", "nz", None), "logaddexp": ("any", "any", None),
    "logaddexp2": ("any", "any", None),
}
BINARY_ALIASES = {"divide": ("true_divide",), "power": ("pow",), "arctan2": ("atan2",)}



def _ufunc_call(name: str) -> Callable[..., Any]:
    return lambda ns, *a: getattr(ns, name)(*a)


def _power_samples(g: Gen) -> list[Sample]:
    out = binary("pos", "any", "rpos", "small")(g)
    out.append(Sample((g((2, 3), "any"), 2), {}, (0,), "neg-base-int2"))
    out.append(Sample((g((2, 3), "any"), 3.0), {}, (0,), "neg-base-float3"))
    out.append(Sample((2.0, g((2, 3), "any")), {}, (1,), "pyscalar-base"))
    out.append(Sample((g((3,), "pos"), np.zeros(3, g.dtype)), {}, (0, 1), "exp0"))
    return out


def _fminmax_nan(g: Gen) -> list[Sample]:
    out = binary("even", "odd")(g)
    a, b = g((2, 3), "even"), g((2, 3), "odd")
    a[0, 1] = np.nan
    b[1, 2] = np.nan
    out.append(Sample((a, b), {}, (0, 1), "nan"))
    return out


def _mod_samples(g: Gen) -> list[Sample]:
    """a = q * b with q at least 0.16 from an integer: remainder / fmod are smooth there."""
    out = []
    for sa, sb, desc in [((2, 3), (2, 3), "same"), ((2, 3), (3,), "bcast"), ((), (), "0d"),
                         ((0, 3), (3,), "empty")]:
        b = g(sb, "nz")
        a = (g(sa, "nonint") * b).astype(g.dtype)
        out.append(Sample((a, b), {}, (0, 1), desc))
    return out


def _round_samples(g: Gen) -> list[Sample]:
    out = [Sample((g(s, "nonint", l_),), {}, (0,), _d(s, l_)) for s, l_ in UNARY_SHAPES]
    out.append(Sample((g((2, 3), "nonint") / 10,), {"decimals": 1}, (0,), "decimals1"))
    return out


def _clip_samples(g: Gen) -> list[Sample]:
    lo, hi = g((3,), "odd") - 1.0, g((3,), "odd") + 1.0
    return [
        Sample((g((2, 3), "even"), lo, hi), {}, (0, 1, 2), "arrays"),
        Sample((g((2, 3), "even", "F"), g((), "odd"), g((), "odd") + 1.0), {}, (0, 1, 2),
               "0d-bounds"),
        Sample((g((4,), "even"), -0.5, 0.5), {}, (0,), "pyscalar"),
        Sample((g((4,), "even"), None, 0.3), {}, (0,), "max-only"),
        Sample((g((4,), "even"), -0.3, None), {}, (0,), "min-only"),
        Sample((g((0, 3), "even"), lo, hi), {}, (0, 1, 2), "empty"),
        Sample((g((), "even"), -0.5, 0.5), {}, (0,), "0d"),
    ]


def _where_samples(g: Gen) -> list[Sample]:
    return [
        Sample((g.cond((2, 3)), g((2, 3)), g((2, 3), layout="T")), {}, (1, 2), "same"),
        Sample((g.cond((2, 3)), g((3,)), g(())), {}, (1, 2), "bcast"),
        Sample((g.cond((3,)), g((2, 1)), 0.0), {}, (1,), "pyscalar"),
        Sample((g.cond(()), g((2, 3)), g((2, 3))), {}, (1, 2), "0d-cond"),
        Sample((g.cond((0, 3)), g((0, 3)), g((3,))), {}, (1, 2), "empty"),
        # a Python bool condition: NumPy's result shape all the same
        Sample((False, g((2, 3)), g((3,))), {}, (1, 2), "pybool-false-bcast"),
        Sample((True, g((3,)), g((2, 3))), {}, (1, 2), "pybool-true-bcast"),
    ]


# ---------------------------------------------------------------- reductions


def _red(dom: str = "any", *, empty: bool = True, ddof: bool = False,
         keepdims: bool = True, zero_d: bool = True) -> Callable[[Gen], list[Sample]]:
    def samples(g: Gen) -> list[Sample]:
        out = [
            Sample((g((2, 3, 4), dom, "T"),), {}, (0,), "all"),
            Sample((g((2, 3, 4), dom),), {"axis": 1}, (0,), "axis1"),
            Sample((g((2, 3, 4), dom, "S"),), {"axis": (0, 2)} | (
                {"keepdims": True} if keepdims else {}), (0,), "axes02-keep"),
            Sample((g((3, 4), dom, "F"),), {"axis": -1}, (0,), "F-axis-1"),
        ]
        if zero_d:
            out.append(Sample((g((), dom),), {}, (0,), "0d"))
        if empty:
            out.append(Sample((g((0, 3), dom),), {"axis": 1}, (0,), "empty"))
        if ddof:
            out.append(Sample((g((3, 4), dom),), {"axis": 0, "ddof": 1}, (0,), "ddof1"))
        return out

    return samples


def _prod_samples(g: Gen) -> list[Sample]:
    out = _red("any")(g)
    z1 = g((3, 4))
    z1[1, 2] = 0
    z2 = g((3, 4))
    z2[0, 1] = z2[0, 3] = 0
    out += [Sample((z1,), {"axis": 1}, (0,), "one-zero"),
            Sample((z2,), {"axis": 1}, (0,), "two-zeros")]
    return out


def _cum_samples(zeros: bool) -> Callable[[Gen], list[Sample]]:
    def samples(g: Gen) -> list[Sample]:
        out = [
            Sample((g((2, 3), "any", "T"),), {}, (0,), "flat"),
            Sample((g((2, 3, 4), "any", "S"),), {"axis": 1}, (0,), "axis1"),
            Sample((g((3, 4), "any", "F"),), {"axis": -1}, (0,), "axis-1"),
            Sample((g((0, 3)),), {"axis": 0}, (0,), "empty"),
            Sample((g(()),), {}, (0,), "0d"),
        ]
        if zeros:
            z = g((2, 4))
            z[0, 1] = z[1, 2] = z[1, 3] = 0
            out.append(Sample((z,), {"axis": 1}, (0,), "zeros"))
            # nonzero factors whose running product underflows to 0 (in the precision)
            u = g((3,))
            u[:2] = np.sqrt(np.finfo(g.rdtype).smallest_subnormal) / 10
            out.append(Sample((u,), {}, (0,), "underflow"))
        return out

    return samples


def _nansum_samples(g: Gen) -> list[Sample]:
    a = g((3, 4), layout="F")
    a[0, 1] = a[2, 3] = np.nan
    return _red("any")(g)[:5] + [Sample((a,), {}, (0,), "nan"),
                                 Sample((a,), {"axis": 0}, (0,), "nan-axis0")]


def _average_samples(g: Gen) -> list[Sample]:
    return [
        Sample((g((2, 3)),), {}, (0,), "plain"),
        Sample((g((2, 3), layout="T"), g((2, 3), "pos", real=True)), {"axis": 1}, (0, 1),
               "weights"),
        Sample((g((2, 3)), g((3,), "pos", real=True)), {"axis": 1}, (0, 1), "weights1d"),
        Sample((g((2, 3)), g((2, 3), "pos", real=True)), {"axis": 0, "returned": True},
               (0, 1), "returned"),
        Sample((g((2, 3)), g((2,), "pos", real=True)), {"axis": 0, "keepdims": True}, (0,),
               "keepdims"),
    ]


def _trace_samples(g: Gen) -> list[Sample]:
    return [
        Sample((g((3, 3)),), {}, (0,), "square"),
        Sample((g((3, 4), layout="T"),), {"offset": 1}, (0,), "offset1"),
        Sample((g((3, 4)),), {"offset": -2}, (0,), "offset-2"),
        Sample((g((2, 3, 3), layout="S"),), {"axis1": 1, "axis2": 2}, (0,), "batched"),
        Sample((g((0, 2)),), {}, (0,), "empty"),
    ]


# ---------------------------------------------------------------- shape & indexing

def _s(g: Gen, *specs: Any, dom: str = "any") -> list[Sample]:
    """Samples of a one-array function from (shape, layout, kwargs) triples."""
    return [Sample((g(s, dom, l_),), kw, (0,), _d(s, l_) + ("-" + "-".join(
        f"{k}{v}" for k, v in kw.items()) if kw else "").replace(" ", ""))
            for s, l_, kw in specs]


def _getitem_samples(g: Gen) -> list[Sample]:
    x = g((4, 5, 3), layout="T")
    keys: list[tuple[str, Any]] = [
        ("int", (1,)), ("neg-int", (-1, 2)), ("slice-step", (slice(None, None, 2),)),
        ("neg-step", (slice(None, None, -1), slice(1, 4))), ("newaxis-ellipsis", (None, ..., 1)),
        ("scalar", (1, 2, 0)), ("empty-slice", (slice(2, 2),)),
        ("adv", (np.array([0, 2, 3]),)), ("adv-repeat", (np.array([1, 1, 3, 1]),)),
        ("adv-2d", (np.array([[0, 1], [3, 3]]), slice(None), np.array([0, 2]))),
        ("adv-mixed", (slice(1, 3), np.array([4, 0, 4]))),
        ("adv-separated", (np.array([0, 1]), slice(None), np.array([2, 0]))),
        ("bool", (g.cond((4, 5, 3)),)), ("bool-axis", (slice(None), np.array(
            [True, False, True, True, False]))),
        ("list", ([0, 3, 3],)), ("adv-empty", (np.array([], dtype=np.intp),)),
    ]
    out = [Sample((x, k), {}, (0,), d) for d, k in keys]
    out.append(Sample((g(()), ()), {}, (0,), "0d-empty-key"))
    out.append(Sample((g(()), ...), {}, (0,), "0d-ellipsis"))
    return out


def _take_samples(g: Gen) -> list[Sample]:
    return [
        Sample((g((3, 4), layout="F"), np.array([0, 5, 5, 11])), {}, (0,), "flat"),
        Sample((g((3, 4)), np.array([3, 0, 0, -1])), {"axis": 1}, (0,), "axis1-neg"),
        Sample((g((3, 4), layout="T"), np.array([[0, 2], [2, 2]])), {"axis": 0}, (0,), "2d-ind"),
        Sample((g((3,)), 1), {}, (0,), "scalar-ind"),
    ]


def _take_along_samples(g: Gen) -> list[Sample]:
    x = g((3, 4), "distinct")
    return [
        Sample((x, np.argsort(x, axis=1)), {"axis": 1}, (0,), "argsort1"),
        Sample((lay(x, "F"), np.array([[0], [2], [1]]) * np.ones((1, 4), int)), {"axis": 1},
               (0,), "repeat"),
        Sample((x, np.array([[2, 0, 0, 1]])), {"axis": 0}, (0,), "axis0"),
        Sample((x, np.array([11, 0, 0])), {"axis": None}, (0,), "flat"),
    ]


def _pad_samples(g: Gen) -> list[Sample]:
    return [
        Sample((g((2, 3)), 1), {}, (0,), "const"),
        Sample((g((2, 3), layout="T"), ((1, 0), (2, 1))), {"constant_values": 1.5}, (0,),
               "const-values"),
        Sample((g((2, 3)), 2), {"mode": "edge"}, (0,), "edge"),
        Sample((g((3, 4), layout="F"), ((1, 2), (2, 1))), {"mode": "reflect"}, (0,),
               "reflect"),
        Sample((g((4,)), 3), {"mode": "symmetric"}, (0,), "symmetric"),
        Sample((g((2, 3)), ((1, 1), (3, 0))), {"mode": "wrap"}, (0,), "wrap"),
        Sample((g((0, 2)), 1), {}, (0,), "empty"),
    ]


def _seq(g: Gen, shapes: list[tuple[tuple[int, ...], str]]) -> tuple[np.ndarray, ...]:
    return tuple(g(s, "any", l_) for s, l_ in shapes)


def _seq_samples(specs: list[tuple[str, list[Any], dict[str, Any]]]) -> Callable[
        [Gen], list[Sample]]:
    def samples(g: Gen) -> list[Sample]:
        out = []
        for desc, shapes, kw in specs:
            arrs = _seq(g, shapes)
            out.append(Sample(arrs, kw, tuple(range(len(arrs))), desc))
        return out

    return samples


def _two(specs: list[tuple[str, Any, Any, dict[str, Any]]], dom: str = "any") -> Callable[
        [Gen], list[Sample]]:
    """Two-array samples from (desc, (shape, layout), (shape, layout), kwargs)."""

    def samples(g: Gen) -> list[Sample]:
        return [Sample((g(sa[0], dom, sa[1]), g(sb[0], dom, sb[1])), kw, (0, 1), d)
                for d, sa, sb, kw in specs]

    return samples


def _with_const(fn: Callable[[Gen], list[Sample]], shape_a: Any, shape_b: Any,
                **kw: Any) -> Callable[[Gen], list[Sample]]:
    """Add a sample whose second operand is a constant ndarray."""

    def samples(g: Gen) -> list[Sample]:
        return fn(g) + [Sample((g(shape_a), g(shape_b)), kw, (0,), "t-ndarray")]

    return samples


def _astype_samples(g: Gen) -> list[Sample]:
    if g.cplx:
        return [Sample((g((2, 3)), "complex128"), {}, (0,), "to-c128"),
                Sample((g((3,), layout="S"), "complex64"), {}, (0,), "to-c64")]
    return [Sample((g((2, 3)), "float64"), {}, (0,), "to-f64"),
            Sample((g((3,), layout="S"), "float32"), {}, (0,), "to-f32"),
            Sample((g((2, 3), layout="F"), "complex128"), {}, (0,), "to-c128"),
            Sample((g(()), "complex64"), {}, (0,), "0d-to-c64")]


def _diag_samples(g: Gen) -> list[Sample]:
    return [Sample((g((3,)),), {}, (0,), "build"), Sample((g((3,)),), {"k": 1}, (0,), "build-k1"),
            Sample((g((2,)),), {"k": -2}, (0,), "build-k-2"),
            Sample((g((3, 4), layout="T"),), {}, (0,), "extract"),
            Sample((g((3, 4)),), {"k": -1}, (0,), "extract-k-1"),
            Sample((g((0,)),), {}, (0,), "empty")]


def _sort_samples(g: Gen) -> list[Sample]:
    return _s(g, ((5,), "S", {}), ((3, 4), "T", {"axis": 0}), ((3, 4), "F", {"axis": -1}),
              ((2, 3), "C", {"axis": None}), ((0, 3), "C", {}), dom="distinct")


# ---------------------------------------------------------------- products

MATMUL = [
    ("vec-vec", ((3,), "S"), ((3,), "C"), {}), ("mat-mat", ((2, 3), "F"), ((3, 4), "T"), {}),
    ("vec-mat", ((3,), "C"), ((3, 2), "C"), {}), ("mat-vec", ((2, 3), "C"), ((3,), "N"), {}),
    ("batched", ((2, 2, 3), "C"), ((3, 4), "C"), {}),
    ("bcast-batch", ((1, 2, 3), "C"), ((4, 3, 2), "S"), {}),
    ("empty-rows", ((0, 3), "C"), ((3, 2), "C"), {}),
    ("empty-contract", ((2, 0), "C"), ((0, 3), "C"), {}),
]
DOT = [("scalar", ((), "C"), ((2, 3), "C"), {}), ("vec-vec", ((3,), "C"), ((3,), "S"), {}),
       ("mat-mat", ((2, 3), "T"), ((3, 4), "F"), {}), ("mat-vec", ((2, 3), "C"), ((3,), "C"), {}),
       ("3d-2d", ((2, 2, 3), "C"), ((3, 2), "C"), {}),
       ("2d-3d", ((2, 3), "C"), ((2, 3, 4), "T"), {})]
INNER = [("scalar", ((2, 3), "C"), ((), "C"), {}), ("vec", ((3,), "S"), ((3,), "C"), {}),
         ("mat", ((2, 3), "F"), ((4, 3), "C"), {}), ("3d-2d", ((2, 2, 3), "C"), ((4, 3), "T"), {})]
OUTER = [("vec", ((3,), "C"), ((4,), "S"), {}), ("mat", ((2, 2), "F"), ((3,), "C"), {}),
         ("empty", ((0,), "C"), ((3,), "C"), {})]
TENSORDOT = [("axes2", ((2, 3, 4), "C"), ((3, 4, 2), "T"), {}),
             ("axes1", ((2, 3), "F"), ((3, 4), "C"), {"axes": 1}),
             ("axes0", ((2,), "C"), ((3,), "C"), {"axes": 0}),
             ("pairs", ((2, 3, 4), "C"), ((3, 2), "C"), {"axes": ([1, 0], [0, 1])})]
KRON = [("vec", ((2,), "C"), ((3,), "S"), {}), ("mat", ((2, 2), "F"), ((2, 3), "T"), {}),
        ("vec-mat", ((2,), "C"), ((2, 3), "C"), {}), ("0d", ((), "C"), ((3,), "C"), {})]
VDOT = [("vec", ((3,), "C"), ((3,), "S"), {}), ("mat", ((2, 3), "F"), ((2, 3), "T"), {}),
        ("empty", ((0,), "C"), ((0,), "C"), {})]


def _einsum_samples(g: Gen) -> list[Sample]:
    specs = [
        ("ij,jk->ik", [((2, 3), "F"), ((3, 4), "T")]), ("ij->ji", [((2, 3), "C")]),
        ("ii->i", [((3, 3), "T")]), ("ii", [((3, 3), "C")]), ("i,i", [((4,), "S"), ((4,), "C")]),
        ("iji->ji", [((3, 2, 3), "C")]), ("ijk->kij", [((2, 3, 2), "C")]),  # (views)
        ("...ij,...jk->...ik", [((2, 2, 3), "C"), ((3, 2), "C")]),
        ("ijk,ikl->ijl", [((2, 3, 2), "C"), ((2, 2, 3), "N")]),
        ("ij,jk,kl->il", [((2, 3), "C"), ((3, 2), "C"), ((2, 2), "C")]),
        ("ij,ij->", [((0, 3), "C"), ((0, 3), "C")]), ("i,j", [((2,), "C"), ((3,), "C")]),
    ]
    out = [Sample((spec,) + _seq(g, shapes), {}, tuple(range(1, len(shapes) + 1)), spec)
           for spec, shapes in specs]
    out.append(Sample(("ij,jk->ik", g((2, 3)), g((3, 2))), {}, (1,), "t-ndarray"))
    return out


# ============================================================================ the database


def _entries() -> list[OpInfo]:
    E: list[OpInfo] = []
    add = E.append

    for name, (dom, cdom) in UNARY_OPS.items():
        add(OpInfo(name, _ufunc_call(name), unary(dom, cdom),
                   ALL if cdom else REAL, covers=UNARY_ALIASES.get(name, ())))
    for name, (dom_a, dom_b, cd) in BINARY_OPS.items():
        s = binary(dom_a, dom_b, *(cd or (None, None)))
        if name == "power" or name == "float_power":
            s = _power_samples
        if name in ("fmax", "fmin"):
            s = _fminmax_nan
        add(OpInfo(name, _ufunc_call(name), s, ALL if cd else REAL,
                   covers=BINARY_ALIASES.get(name, ())))
    add(OpInfo("remainder", _ufunc_call("remainder"), _mod_samples, covers=("mod",)))
    add(OpInfo("fmod", _ufunc_call("fmod"), _mod_samples))
    add(OpInfo("round", lambda ns, x, **kw: ns.round(x, **kw), _round_samples,
               covers=("around",)))
    add(OpInfo("clip", lambda ns, x, lo, hi: ns.clip(x, lo, hi), _clip_samples))
    add(OpInfo("where", lambda ns, c, x, y: ns.where(c, x, y), _where_samples, ALL))

    # reductions
    def red(name: str, **kw: Any) -> Callable[..., Any]:
        return lambda ns, x, **k: getattr(ns, name)(x, **k)

    add(OpInfo("sum", red("sum"), _red(), ALL))
    add(OpInfo("mean", red("mean"), _red(empty=False), ALL))
    add(OpInfo("var", red("var"), _red(empty=False, ddof=True), ALL))
    add(OpInfo("std", red("std"), _red("distinct", empty=False, ddof=True, zero_d=False), ALL))
    for name in ("amax", "amin", "max", "min", "ptp"):
        add(OpInfo(name, red(name), _red("distinct")))
    add(OpInfo("prod", red("prod"), _prod_samples, ALL))
    add(OpInfo("cumsum", red("cumsum"), _cum_samples(False), ALL))
    add(OpInfo("cumprod", red("cumprod"), _cum_samples(True), ALL))
    add(OpInfo("nansum", red("nansum"), _nansum_samples, ALL))
    add(OpInfo("average", lambda ns, x, w=None, **k: ns.average(x, weights=w, **k),
               _average_samples, ALL))
    add(OpInfo("trace", red("trace"), _trace_samples, ALL))

    # shape & indexing
    def one(name: str, *specs: Any, dom: str = "any", call: Any = None, **kw: Any) -> None:
        add(OpInfo(name, call or red(name), lambda g: _s(g, *specs, dom=dom), ALL, **kw))

    one("reshape", ((2, 3), "T", {"shape": (3, 2)}), ((2, 3, 2), "S", {"shape": (-1, 2)}),
        ((), "C", {"shape": (1, 1)}), ((0, 3), "C", {"shape": (3, 0)}),
        ((4,), "C", {"shape": (4,)}), ((2, 3), "C", {"shape": (3, 2), "order": "F"}),
        ((2, 3, 2), "S", {"shape": (-1, 2), "order": "F"}))
    one("ravel", ((2, 3), "T", {}), ((2, 3), "F", {}), ((), "C", {}), ((0, 2), "C", {}),
        ((2, 3), "C", {"order": "F"}))
    one("transpose", ((2, 3), "C", {}), ((2, 3, 4), "S", {"axes": (1, 2, 0)}), ((), "C", {}),
        ((2, 3), "C", {"axes": (0, 1)}), covers=("permute_dims",))
    one("swapaxes", ((2, 3, 4), "C", {"axis1": 0, "axis2": 2}),
        ((2, 3), "F", {"axis1": -1, "axis2": 0}))
    one("moveaxis", ((2, 3, 4), "C", {"source": 0, "destination": -1}),
        ((2, 3, 4), "T", {"source": (0, 1), "destination": (2, 0)}))
    one("expand_dims", ((2, 3), "C", {"axis": 1}), ((), "C", {"axis": 0}),
        ((3,), "S", {"axis": (0, 2)}))
    one("squeeze", ((2, 1, 3), "C", {}), ((1, 3, 1), "C", {"axis": 2}), ((1,), "C", {}),
        ((1, 1), "F", {"axis": (0, 1)}))
    one("broadcast_to", ((3,), "S", {"shape": (2, 3)}), ((), "C", {"shape": (2, 2)}),
        ((2, 1), "C", {"shape": (2, 0)}), ((2, 1), "F", {"shape": (3, 2, 4)}))
    add(OpInfo("broadcast_arrays", lambda ns, *xs: ns.broadcast_arrays(*xs),
               _two([("pair", ((3,), "C"), ((2, 1), "C"), {}), ("same", ((2,), "S"), ((2,), "C"),
                                                                   {})]), ALL))
    one("diff", ((5,), "S", {}), ((3, 4), "T", {"axis": 0}), ((2, 5), "F", {"n": 2}),
        ((3,), "C", {"n": 0}))
    add(OpInfo("append", lambda ns, a, b, **kw: ns.append(a, b, **kw),
               _two([("flat", ((2, 2), "C"), ((3,), "S"), {}),
                     ("axis", ((2, 3), "F"), ((1, 3), "C"), {"axis": 0})]), ALL))
    add(OpInfo("column_stack", lambda ns, *xs: ns.column_stack(xs), _seq_samples([
        ("1d", [((3,), "C"), ((3,), "S")], {}), ("mixed", [((3, 2), "F"), ((3,), "C")], {})]),
        ALL))
    add(OpInfo("cross", lambda ns, a, b, **kw: ns.cross(a, b, **kw),
               _two([("vec", ((3,), "C"), ((3,), "S"), {}),
                     ("batch", ((2, 3), "T"), ((1, 3), "C"), {}),
                     ("axis0", ((3, 2), "C"), ((3, 2), "F"), {"axis": 0}),
                     ("axisabc", ((3, 2), "C"), ((2, 3), "F"),
                      {"axisa": 0, "axisb": 1, "axisc": 0})]), ALL))
    one("atleast_1d", ((), "C", {}), ((3,), "S", {}), ((2, 2), "C", {}))
    one("atleast_2d", ((), "C", {}), ((3,), "S", {}), ((2, 2), "F", {}))
    add(OpInfo("concatenate", lambda ns, *xs, **kw: ns.concatenate(xs, **kw), _seq_samples([
        ("axis0", [((2, 3), "C"), ((1, 3), "T")], {}),
        ("axis1", [((2, 1), "C"), ((2, 3), "F"), ((2, 0), "C")], {"axis": 1}),
        ("axisNone", [((2, 2), "C"), ((3,), "S")], {"axis": None}),
        ("one", [((3,), "C")], {}),
        ("dtype", [((2,), "C"), ((3,), "S")], {"dtype": "complex128", "casting": "same_kind"}),
    ]), ALL, covers=("concat",)))
    add(OpInfo("stack", lambda ns, *xs, **kw: ns.stack(xs, **kw), _seq_samples([
        ("axis0", [((2, 3), "C"), ((2, 3), "T")], {}),
        ("axis-1", [((3,), "S"), ((3,), "C"), ((3,), "C")], {"axis": -1}),
        ("0d", [((), "C"), ((), "C")], {}),
    ]), ALL))
    add(OpInfo("hstack", lambda ns, *xs, **kw: ns.hstack(xs, **kw), _seq_samples([
        ("1d", [((2,), "C"), ((3,), "S")], {}), ("2d", [((2, 1), "C"), ((2, 2), "F")], {}),
        ("0d", [((), "C"), ((2,), "C")], {}),
        ("dtype", [((2,), "C"), ((3,), "S")], {"dtype": "complex128"})]), ALL))
    add(OpInfo("vstack", lambda ns, *xs, **kw: ns.vstack(xs, **kw), _seq_samples([
        ("1d", [((3,), "C"), ((3,), "S")], {}), ("2d", [((1, 2), "C"), ((2, 2), "T")], {}),
        ("dtype", [((3,), "C"), ((3,), "S")], {"dtype": "complex128", "casting": "safe"})]),
        ALL))
    one("split", ((6,), "C", {"indices_or_sections": 3}),
        ((2, 5), "T", {"indices_or_sections": [1, 3], "axis": 1}),
        ((4, 2), "C", {"indices_or_sections": [3, 3]}))
    one("array_split", ((7,), "S", {"indices_or_sections": 3}),
        ((2, 5), "F", {"indices_or_sections": 2, "axis": 1}))
    one("tile", ((3,), "C", {"reps": 2}), ((2, 3), "T", {"reps": (2, 1)}),
        ((2,), "C", {"reps": (2, 1, 2)}), ((), "C", {"reps": 3}))
    one("repeat", ((3,), "S", {"repeats": 2}), ((2, 3), "C", {"repeats": [1, 0, 2], "axis": 1}),
        ((2, 2), "F", {"repeats": 2}))
    one("flip", ((2, 3), "T", {}), ((2, 3, 4), "C", {"axis": 1}), ((4,), "S", {"axis": 0}),
        ((2, 3), "C", {"axis": (0, 1)}))
    one("fliplr", ((2, 3), "F", {}))
    one("flipud", ((3,), "S", {}), ((2, 3), "C", {}))
    one("roll", ((5,), "C", {"shift": 2}), ((2, 3), "T", {"shift": -1, "axis": 1}),
        ((2, 3), "C", {"shift": 4}), ((2, 3, 2), "C", {"shift": (1, 2), "axis": (0, 1)}),
        ((0,), "C", {"shift": 1}))
    add(OpInfo("pad", lambda ns, x, w, **kw: ns.pad(x, w, **kw), _pad_samples, ALL))
    add(OpInfo("take", lambda ns, x, i, **kw: ns.take(x, i, **kw), _take_samples, ALL))
    add(OpInfo("take_along_axis", lambda ns, x, i, **kw: ns.take_along_axis(x, i, **kw),
               _take_along_samples, REAL))
    add(OpInfo("sort", red("sort"), _sort_samples, REAL))
    one("triu", ((3, 3), "T", {}), ((3, 4), "C", {"k": 1}), ((2, 3, 3), "C", {"k": -1}),
        ((3,), "C", {}))
    one("tril", ((3, 3), "F", {}), ((3, 4), "C", {"k": -1}), ((2, 3, 3), "S", {"k": 1}))
    one("diagonal", ((3, 3), "C", {}), ((3, 4), "T", {"offset": 1}),
        ((2, 3, 4), "C", {"offset": -1, "axis1": 2, "axis2": 0}))
    add(OpInfo("diag", lambda ns, v, **kw: ns.diag(v, **kw), _diag_samples, ALL))
    add(OpInfo("getitem", lambda ns, x, key: x[key], _getitem_samples, ALL))
    add(OpInfo("astype", lambda ns, x, dt: ns.astype(x, dt), _astype_samples, ALL))

    # products
    def two(name: str, specs: Any, const: tuple[Any, Any] | None = None) -> None:
        s = _two(specs)
        if const:
            s = _with_const(s, *const)
        add(OpInfo(name, lambda ns, a, b, **kw: getattr(ns, name)(a, b, **kw), s, ALL))

    two("matmul", MATMUL, ((2, 3), (3, 2)))
    two("dot", DOT, ((3,), (3, 2)))
    two("vdot", VDOT)
    two("inner", INNER)
    two("outer", OUTER)
    two("tensordot", TENSORDOT)
    two("kron", KRON)
    add(OpInfo("einsum", lambda ns, spec, *ops: ns.einsum(spec, *ops), _einsum_samples, ALL))

    # Tensor operators and properties (the same functions through another entry point)
    def op1(name: str, f: Callable[[Any], Any], dom: str = "any", dts: Any = ALL) -> None:
        add(OpInfo(name, lambda ns, x: f(x), unary(dom), dts, ref=True))

    def op2(name: str, f: Callable[[Any, Any], Any], da_: str = "any", db: str = "any",
            dts: Any = ALL) -> None:
        add(OpInfo(name, lambda ns, a, b: f(a, b), binary(da_, db, mixed=False), dts))

    op1("Tensor.__neg__", lambda x: -x)
    op1("Tensor.__abs__", lambda x: abs(x), "nz")
    op1("Tensor.T", lambda x: x.T)
    add(OpInfo("Tensor.mT", lambda ns, x: x.mT, lambda g: _s(g, ((2, 3), "C", {}),
                                                            ((2, 3, 4), "F", {})), ALL))
    op1("Tensor.real", lambda x: x.real)
    op1("Tensor.imag", lambda x: x.imag)
    op1("Tensor.sum()", lambda x: x.sum())
    op1("Tensor.copy", lambda x: x.copy())
    op1("Tensor.flatten", lambda x: x.flatten())
    op1("Tensor.__rtruediv__", lambda x: 2.0 / x, "nz")
    op1("Tensor.__rpow__", lambda x: 2.0 ** x)
    op2("Tensor.__add__", lambda a, b: a + b)
    op2("Tensor.__sub__", lambda a, b: a - b)
    op2("Tensor.__mul__", lambda a, b: a * b)
    op2("Tensor.__truediv__", lambda a, b: a / b, "any", "nz")
    op2("Tensor.__pow__", lambda a, b: a ** b, "pos", "any", REAL)
    add(OpInfo("Tensor.__mod__", lambda ns, a, b: a % b, _mod_samples))
    add(OpInfo("Tensor.__matmul__", lambda ns, a, b: a @ b, _two(MATMUL[:4]), ALL))
    add(OpInfo("Tensor.__rmod__", lambda ns, a, b: a % b, lambda g: [
        Sample((0.7, np.array([0.3, 0.45, 1.1, -0.5, -1.3, 2.0], g.dtype)), {}, (1,), "pyscalar"),
        Sample((np.float64(-1.3), np.array([[0.7, 1.1]], g.dtype)), {}, (1,), "np-scalar")]))
    _more_entries(add)
    return E


# ---------------------------------------------------------------- issue 21: more of NumPy


def _pair_forms(forms: dict[str, Callable[..., Any]], shapes: Any) -> Callable[
        [Gen], list[Sample]]:
    """Samples (form, a, b): ``forms[form](ns, a, b)`` builds the call from two arrays."""

    def samples(g: Gen) -> list[Sample]:
        return [Sample((f, g(sa, "any", la), g(sb, "any", lb)), {}, (1, 2), f)
                for f in forms for (sa, la), (sb, lb) in [shapes]]

    return samples


ARRAY_FORMS: dict[str, Callable[..., Any]] = {
    "nested": lambda ns, a, b: ns.array([[a, b * 2.0], [b, a]]),
    "mixed": lambda ns, a, b: ns.array([a, [0.5, 1.0, -2.0], b[::-1], np.arange(3)]),
    "scalars": lambda ns, a, b: ns.array([a[0], 1.5, b[2], a[1] * b[1]]),
    "tuple-ndmin": lambda ns, a, b: ns.array((a, b), ndmin=4),
    "dtype": lambda ns, a, b: ns.array([a, b], dtype=np.complex128),
    "one": lambda ns, a, b: ns.array(a) * ns.array(b),
    "asarray": lambda ns, a, b: ns.asarray([a, b + 1.0]),
    "asanyarray": lambda ns, a, b: ns.asanyarray((b, a)),
}
CONCAT_FORMS: dict[str, Callable[..., Any]] = {
    "r_": lambda ns, a, b: ns.r_[a, 0.5, 1:3, b],
    "r_-directive": lambda ns, a, b: ns.r_["0,2", a, b],
    "r_-directive3": lambda ns, a, b: ns.r_["1,2,0", a, b],
    "r_-linspace": lambda ns, a, b: ns.r_[a, 0:1:4j],
    "c_": lambda ns, a, b: ns.c_[a, b],
    "c_-range": lambda ns, a, b: ns.c_[a, 1:4, b * b],
    "r_-row-matrix": lambda ns, a, b: ns.r_["r", a, b, 2.0],
    "r_-column-matrix": lambda ns, a, b: ns.r_["c", a, b],
    "c_-matrix": lambda ns, a, b: ns.c_["c", a, b],
}
# NumPy functions given Python lists of Tensors where they take array-likes
LIST_ARGS: dict[str, Callable[..., Any]] = {
    "mean": lambda ns, a, b: ns.mean([a, b], axis=0),
    "std": lambda ns, a, b: ns.std([a, b]),
    "var": lambda ns, a, b: ns.var([a, b * a], axis=1, ddof=1),
    "linalg.norm": lambda ns, a, b: ns.linalg.norm([a, b]),
    "append": lambda ns, a, b: ns.append([a[0], b[1]], [b, a]),
    "sum": lambda ns, a, b: ns.sum([[a, b], [b, b]], axis=(0, 2)),
    "exp-of-stack": lambda ns, a, b: ns.exp(ns.stack([a, [1.0, 2.0, 3.0]])),
    "dot": lambda ns, a, b: ns.dot([a, b], [1.0, 2.0, 3.0]),
    # ufuncs (their generated entry points) given sequences holding Tensors
    "sin-list": lambda ns, a, b: ns.sin([a, b]),
    "add-list-mixed": lambda ns, a, b: ns.add([a, [1.0, 2.0, 0.5]], b),
    "maximum-tuple": lambda ns, a, b: ns.maximum((a, b), 0.25),
    "arctan2-lists": lambda ns, a, b: ns.arctan2([a, b], [b, [1.0, 2.0, 3.0]]),
    "clip-list": lambda ns, a, b: ns.clip([a, b], -0.5, 0.5),
    "operator-list": lambda ns, a, b: ns.asarray(a) * [b, a] - (b,),
}


def _linspace_samples(g: Gen) -> list[Sample]:
    return [Sample((g(()), g(())), {}, (0, 1), "0d"),
            Sample((g(()), g((2,))), {"num": 4, "endpoint": False}, (0, 1), "vec-noend"),
            Sample((g((2,)), g((3, 1))), {"num": 3, "axis": -1}, (0, 1), "axis-1"),
            Sample((g(()), 2.0), {"num": 5}, (0,), "t-pyscalar"),
            Sample((g(()), g(())), {"num": 1}, (0, 1), "num1"),
            Sample((g(()), g(())), {"num": 3, "retstep": True}, (0, 1), "retstep")]


def _gradient_samples(g: Gen) -> list[Sample]:
    x = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
    return [
        Sample((g((5,)),), {}, (0,), "1d"),
        Sample((g((3, 4), layout="F"),), {}, (0,), "2d"),
        Sample((g((3, 4)), 0.5), {"axis": 1, "edge_order": 2}, (0,), "dx-edge2"),
        Sample((g((5, 2)), x), {"axis": 0}, (0,), "coords"),
        Sample((g((5, 3), layout="T"), x, 2.0), {"edge_order": 2}, (0,), "coords-edge2"),
        Sample((g((2, 3)),), {"axis": -1}, (0,), "short"),
    ]


def _select_samples(g: Gen) -> list[Sample]:
    c1, c2 = g.cond((2, 3)), g.cond((3,))
    return [Sample((c1, c2, g((2, 3)), g((3,))), {}, (2, 3), "bcast"),
            Sample((c1, c2, g((2, 3)), g((2, 3))), {"default": 1.5}, (2, 3), "default")]


def _nan_to_num_samples(g: Gen) -> list[Sample]:
    # (finite differences of the default replacement of inf, the largest float, overflow)
    a, b = g((3, 4)), g((2, 3), layout="T")
    a[0, 1], a[1, 2], a[2, 0] = np.nan, np.inf, -np.inf
    b[1, 1] = np.nan
    return [Sample((a,), {"nan": 2.0, "posinf": 9.0, "neginf": -9.0}, (0,), "values"),
            Sample((b,), {}, (0,), "nan-default"),
            Sample((g((2, 3)),), {}, (0,), "finite")]


def _eig_matrix(g: Gen, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A non-normal 3x3 with well-separated eigenvalues (a similarity of diag(-1, .5, 2))."""
    s = g(batch + (3, 3)) + 2 * np.eye(3)
    d = np.diag(np.array([-1.0, 0.5, 2.0]))
    return (s @ d @ np.linalg.inv(s)).astype(g.dtype)


def _rotating(g: Gen) -> np.ndarray:
    """A real 3x3 with a complex pair of eigenvalues 1 +- 2j and a real one, -1 (for complex
    dtypes a general matrix: perturbing a real one off the real line reorders LAPACK's
    eigenvalues)."""
    if g.cplx:
        return _eig_matrix(g)
    s = g((3, 3), real=True) + 2 * np.eye(3)
    d = np.array([[1.0, 2.0, 0.0], [-2.0, 1.0, 0.0], [0.0, 0.0, -1.0]])
    return (s @ d @ np.linalg.inv(s)).astype(g.dtype)


def _with_nans(g: Gen, shape: tuple[int, ...], dom: str = "any") -> np.ndarray:
    """Values with a NaN in some slices (never a whole slice of the last two axes)."""
    a = g(shape, dom)
    a[(0,) * (len(shape) - 1) + (1,)] = np.nan
    if len(shape) > 1:
        a[(-1,) * (len(shape) - 2) + (0, -1)] = np.nan
    return a


def _nan_red(dom: str = "any", ddof: bool = False) -> Callable[[Gen], list[Sample]]:
    def samples(g: Gen) -> list[Sample]:
        out = [Sample((_with_nans(g, (3, 4), dom),), {}, (0,), "all"),
               Sample((_with_nans(g, (2, 3, 4), dom),), {"axis": 2}, (0,), "axis2"),
               Sample((_with_nans(g, (3, 4), dom),), {"axis": (0, 1), "keepdims": True}, (0,),
                      "axes-keep"),
               Sample((lay(g((3, 4), dom), "F"),), {"axis": 0}, (0,), "no-nan")]
        if ddof:
            out.append(Sample((_with_nans(g, (3, 4), dom),), {"axis": 1, "ddof": 1}, (0,),
                              "ddof1"))
        return out

    return samples


def _nan_cum(g: Gen) -> list[Sample]:
    return [Sample((_with_nans(g, (3, 4)),), {}, (0,), "flat"),
            Sample((_with_nans(g, (2, 3, 4)),), {"axis": 1}, (0,), "axis1")]


def _quantile_samples(scale: float, nan: bool) -> Callable[[Gen], list[Sample]]:
    def samples(g: Gen) -> list[Sample]:
        def mk(shape: tuple[int, ...]) -> np.ndarray:
            return _with_nans(g, shape, "distinct") if nan else g(shape, "distinct")

        # q away from the sorted positions' kinks: (n - 1) q not an integer
        return [Sample((mk((3, 5)), 0.3 * scale), {}, (0,), "flat"),
                Sample((mk((3, 5)), 0.55 * scale), {"axis": 1}, (0,), "axis1"),
                Sample((mk((2, 3, 4)), np.array([0.1, 0.7]) * scale),
                       {"axis": (0, 2), "keepdims": True}, (0,), "qvec-axes-keep"),
                Sample((mk((4, 3)), 0.45 * scale), {"axis": 0, "method": "lower"}, (0,),
                       "lower"),
                Sample((mk((4, 3)), 0.45 * scale), {"axis": 0, "method": "midpoint"}, (0,),
                       "midpoint"),
                Sample((mk((5,)), 0.6 * scale), {"method": "nearest"}, (0,), "nearest"),
                Sample((mk((5,)), 0.6 * scale), {"method": "higher"}, (0,), "higher"),
                Sample((mk((4, 3)), 0.45 * scale), {"axis": 0, "method": "inverted_cdf"}, (0,),
                       "inverted_cdf"),
                Sample((mk((3, 5)), np.array([0.15, 0.5, 0.95]) * scale),
                       {"axis": 1, "method": "inverted_cdf",
                        "weights": g.rng.uniform(0.1, 2.0, (3, 5))}, (0,), "weights"),
                # (NumPy's nanquantile takes weights= of the data's shape only)
                Sample((mk((2, 3, 4)), 0.4 * scale),
                       {"axis": 2 if nan else (2, 0), "method": "inverted_cdf",
                        "weights": g.rng.uniform(0.1, 2.0, (2, 3, 4) if nan else (4, 2))}, (0,),
                       "weights-axes")]

    return samples


def _median_samples(nan: bool) -> Callable[[Gen], list[Sample]]:
    def samples(g: Gen) -> list[Sample]:
        def mk(shape: tuple[int, ...]) -> np.ndarray:
            return _with_nans(g, shape, "distinct") if nan else g(shape, "distinct")

        return [Sample((mk((3, 5)),), {}, (0,), "flat"),
                Sample((mk((3, 4)),), {"axis": 1}, (0,), "even"),
                Sample((mk((3, 5)),), {"axis": 0, "keepdims": True}, (0,), "odd-keep")]

    return samples


def _cov_samples(g: Gen) -> list[Sample]:
    return [Sample((g((3, 5), layout="F"),), {}, (0,), "rows"),
            Sample((g((5, 2)),), {"rowvar": False, "bias": True}, (0,), "cols-bias"),
            Sample((g((5,)), g((5,))), {}, (0, 1), "x-y"),
            Sample((g((2, 6)),), {"fweights": np.array([1, 2, 1, 3, 1, 1]),
                                  "aweights": np.arange(1.0, 7.0)}, (0,), "weights"),
            Sample((g((2, 4)),), {"ddof": 0}, (0,), "ddof0")]


def _interp_samples(g: Gen) -> list[Sample]:
    xp = np.array([-1.0, -0.3, 0.4, 1.0, 1.8]).astype(g.rdtype)
    x = np.array([[-1.5, -0.7, 0.0], [0.7, 1.4, 2.5]]).astype(g.rdtype)
    return [Sample((x, xp, g((5,))), {}, (0, 1, 2), "all"),
            Sample((x[0], xp, g((5,))), {"left": 3.0, "right": -3.0}, (2,), "fp-left-right"),
            Sample((0.3, xp, g((5,))), {}, (2,), "pyscalar-x"),
            # period=: x over several periods, xp unsorted modulo the period (kinks apart)
            Sample((np.array([-3.1, -0.65, 0.15, 2.95, 4.45, 6.05]).astype(g.rdtype), xp,
                    g((5,)), None, None, np.asarray(2.5, g.rdtype)), {}, (0, 1, 2, 5),
                   "period")]


def _polyval_samples(g: Gen) -> list[Sample]:
    return [Sample((g((4,)), g((2, 3), layout="T")), {}, (0, 1), "p-x"),
            Sample((g((1,)), g((3,))), {}, (0, 1), "const-poly"),
            Sample(([1.0, -2.0, 0.5], g((3,))), {}, (1,), "list-p"),
            Sample((g((3,)), 1.5), {}, (0,), "pyscalar-x")]


def _conv_samples(g: Gen) -> list[Sample]:
    return [Sample((g((5,), layout="S"), g((3,))), {"mode": m}, (0, 1), f"5-3-{m}")
            for m in ("full", "same", "valid")] + [
            Sample((g((2,)), g((4,))), {"mode": m}, (0, 1), f"2-4-{m}")
            for m in ("full", "same", "valid")] + [
            Sample((g((4,)), np.array([1.0, -1.0])), {}, (0,), "t-ndarray")]


def _stat_entries(add: Callable[[OpInfo], None], one: Callable[..., None]) -> None:
    def red(name: str) -> Callable[..., Any]:
        return lambda ns, x, *a, **k: getattr(ns, name)(x, *a, **k)

    add(OpInfo("quantile", red("quantile"), _quantile_samples(1.0, False)))
    add(OpInfo("percentile", red("percentile"), _quantile_samples(100.0, False)))
    add(OpInfo("median", red("median"), _median_samples(False)))
    add(OpInfo("nanquantile", red("nanquantile"), _quantile_samples(1.0, True)))
    add(OpInfo("nanpercentile", red("nanpercentile"), _quantile_samples(100.0, True)))
    add(OpInfo("nanmedian", red("nanmedian"), _median_samples(True)))
    add(OpInfo("nanmean", red("nanmean"), _nan_red(), ALL))
    add(OpInfo("nanvar", red("nanvar"), _nan_red(ddof=True), ALL))
    add(OpInfo("nanstd", red("nanstd"), _nan_red("distinct", ddof=True), ALL))
    add(OpInfo("nanmax", red("nanmax"), _nan_red("distinct")))
    add(OpInfo("nanmin", red("nanmin"), _nan_red("distinct")))
    add(OpInfo("nanprod", red("nanprod"), _nan_red(), ALL))
    add(OpInfo("nancumsum", red("nancumsum"), _nan_cum, ALL))
    add(OpInfo("nancumprod", red("nancumprod"), _nan_cum, ALL))
    add(OpInfo("cov", red("cov"), _cov_samples, ALL))
    add(OpInfo("corrcoef", red("corrcoef"), lambda g: [
        Sample((g((3, 5)),), {}, (0,), "rows"), Sample((g((5,)), g((5,))), {}, (0, 1), "x-y"),
        Sample((g((4, 2), layout="T"),), {"rowvar": False}, (0,), "cols")], ALL))
    add(OpInfo("polyval", red("polyval"), _polyval_samples, ALL))
    add(OpInfo("convolve", red("convolve"), _conv_samples, ALL))
    add(OpInfo("correlate", red("correlate"), _conv_samples, ALL))
    add(OpInfo("interp", red("interp"), _interp_samples, ALL))


def _block_samples(g: Gen) -> list[Sample]:
    return [Sample((g((2, 2)), g((2, 1)), g((1, 3))), {}, (0, 1, 2), "2x2"),
            Sample((g((3,)), g((2,)), g(())), {}, (0, 1, 2), "1d")]


BLOCK_FORMS = {"2x2": lambda ns, a, b, c: ns.block([[a, b], [c]]),
               "1d": lambda ns, a, b, c: ns.block([a, b, ns.atleast_1d(c)])}


def _cum_new(g: Gen) -> list[Sample]:
    return [Sample((g((4,)),), {}, (0,), "1d"),
            Sample((g((2, 3), layout="F"),), {"axis": 1, "include_initial": True}, (0,),
                   "initial"),
            Sample((g((3, 2)),), {"axis": 0, "dtype": "complex128"}, (0,), "dtype")]


def _space_samples(g: Gen) -> list[Sample]:
    return [Sample((g((), "pos"), g((), "pos") + 1.0), {"num": 4}, (0, 1), "0d"),
            Sample((g((), "pos"), g((2,), "pos") + 1.0), {"num": 3, "endpoint": False}, (0, 1),
                   "vec-noend"),
            Sample((g((), "pos"), 3.0), {"num": 5, "axis": 0}, (0,), "t-pyscalar")]


def _namespace_entries(add: Callable[[OpInfo], None], one: Callable[..., None]) -> None:
    def fn(name: str) -> Callable[..., Any]:
        return lambda ns, *a, **k: getattr(ns, name)(*a, **k)

    def sub(path: str) -> Callable[..., Any]:
        m, n = path.split(".")
        return lambda ns, *a, **k: getattr(getattr(ns, m), n)(*a, **k)

    add(OpInfo("asarray_chkfinite", fn("asarray_chkfinite"), lambda g: _s(
        g, ((2, 3), "F", {}), ((), "C", {})), ALL, covers=("require",)))
    add(OpInfo("ascontiguousarray", fn("ascontiguousarray"), lambda g: _s(
        g, ((2, 3), "T", {}), ((), "C", {})), ALL, covers=("asfortranarray",)))
    add(OpInfo("block", lambda ns, a, b, c: BLOCK_FORMS["2x2" if a.ndim == 2 else "1d"](
        ns, a, b, c), _block_samples, ALL))
    add(OpInfo("compress", lambda ns, x, **k: ns.compress([True, False, True], x, **k),
               lambda g: _s(g, ((3, 4), "F", {"axis": 0}), ((4, 3), "C", {"axis": 1}),
                            ((2, 3), "C", {})), ALL))
    add(OpInfo("extract", lambda ns, c, x: ns.extract(c, x), lambda g: [
        Sample((g.cond((3, 4)), g((3, 4), layout="T")), {}, (1,), "2d")], ALL))
    add(OpInfo("cumulative_sum", fn("cumulative_sum"), _cum_new, ALL))
    add(OpInfo("cumulative_prod", fn("cumulative_prod"), _cum_new, ALL))
    one("delete", ((5,), "S", {"obj": 1}), ((3, 4), "F", {"obj": [0, 2], "axis": 1}),
        ((2, 3), "C", {"obj": slice(0, 2)}))
    one("diagflat", ((2, 2), "C", {}), ((3,), "S", {"k": -1}))
    add(OpInfo("divmod", lambda ns, a, b: ns.divmod(a, b), _mod_samples,
               covers=()))
    add(OpInfo("Tensor.__divmod__", lambda ns, a, b: divmod(a, b), _mod_samples))
    one("ediff1d", ((2, 3), "T", {}), ((4,), "C", {"to_begin": [1.0, 2.0], "to_end": 3.0}))
    add(OpInfo("frexp", fn("frexp"), unary("nz")))
    add(OpInfo("ldexp", lambda ns, x, **k: ns.ldexp(x, np.array([1, -2, 0])), lambda g: _s(
        g, ((2, 3), "F", {}), ((3,), "C", {}))))
    add(OpInfo("modf", fn("modf"), unary("nonint")))
    add(OpInfo("heaviside", fn("heaviside"), lambda g: [
        Sample((np.array([-1.0, 0.0, 2.0, 0.0]).astype(g.dtype), g((4,))), {}, (1,), "x2"),
        Sample((np.array([[0.0], [1.0]]).astype(g.dtype), g((3,))), {}, (1,), "bcast")]))
    add(OpInfo("logspace", fn("logspace"), lambda g: _space_samples(g) + [
        Sample((g(()), g(()), 4, True, g((), "pos") + 1.0), {}, (0, 1, 4), "base")]))
    add(OpInfo("geomspace", fn("geomspace"), lambda g: _space_samples(g) + [
        Sample((-g((), "pos"), -g((), "pos") - 1.0), {"num": 3}, (0, 1), "negative"),
        Sample(((g((2,), "pos") * [-1, 1]).astype(g.dtype), (g((2,), "pos") * [-3, 2]).astype(
            g.dtype)), {"num": 4, "axis": 1}, (0, 1), "signs")], ALL))
    one("matrix_transpose", ((2, 3), "F", {}), ((2, 3, 4), "C", {}))
    add(OpInfo("vecdot", fn("vecdot"), _two([
        ("last", ((2, 3), "C"), ((3,), "S"), {}), ("axis0", ((3, 2), "F"), ((3, 2), "C"),
                                                   {"axis": 0})]), ALL))
    add(OpInfo("matvec", fn("matvec"), _two([("batch", ((2, 3, 4), "C"), ((4,), "S"), {})]),
               ALL))
    add(OpInfo("vecmat", fn("vecmat"), _two([("batch", ((3,), "C"), ((2, 3, 4), "T"), {})]),
               ALL))
    add(OpInfo("meshgrid", fn("meshgrid"), lambda g: [
        Sample((g((3,)), g((2,), layout="S")), {}, (0, 1), "xy"),
        Sample((g((3,)), g((2,)), g((2,))), {"indexing": "ij"}, (0, 1, 2), "ij"),
        Sample((g((3,)), g((2,))), {"sparse": True}, (0, 1), "sparse")], ALL))
    add(OpInfo("trapezoid", fn("trapezoid"), lambda g: [
        Sample((g((5,)),), {}, (0,), "dx1"), Sample((g((3, 4), layout="F"),),
                                                    {"dx": 0.5, "axis": 0}, (0,), "dx"),
        Sample((g((2, 4)), np.array([0.0, 0.3, 1.1, 2.0]).astype(g.rdtype)), {}, (0, 1), "x"),
        Sample((g((2, 3)), np.array([[0.0, 1.0, 1.5], [0.2, 0.4, 2.0]]).astype(g.rdtype)),
               {"axis": 1}, (0,), "x2d")], ALL))
    one("unstack", ((2, 3), "T", {}), ((2, 3, 2), "C", {"axis": -1}))
    add(OpInfo("unwrap", fn("unwrap"), lambda g: [
        Sample((np.array([0.0, 3.0, 6.5, 0.4, 3.0, -3.0]).astype(g.dtype),), {}, (0,), "1d"),
        Sample((np.array([[0.0, 3.0, 6.0], [1.0, 5.0, 2.0]]).astype(g.dtype),), {"axis": 1},
               (0,), "2d")]))
    one("vander", ((3,), "S", {}), ((4,), "C", {"N": 3, "increasing": True}),
        ((2,), "C", {"N": 0}))
    add(OpInfo("linalg.matrix_transpose", sub("linalg.matrix_transpose"), lambda g: _s(
        g, ((2, 3), "F", {})), ALL))
    add(OpInfo("linalg.cond", lambda ns, a, **k: ns.linalg.cond(a, **k), _one_arg(
        ("2", lambda g: _wellcond(g, 3), {}), ("-2", lambda g: _wellcond(g, 3), {"p": -2}),
        ("fro", lambda g: _wellcond(g, 3), {"p": "fro"}),
        ("batched", lambda g: _wellcond(g, 2, (2,)), {})), ALL))
    add(OpInfo("linalg.cross", sub("linalg.cross"), _two([
        ("vec", ((3,), "C"), ((3,), "S"), {}), ("axis0", ((3, 2), "C"), ((3, 2), "F"),
                                                 {"axis": 0})]), ALL))
    add(OpInfo("linalg.tensordot", sub("linalg.tensordot"), _two(TENSORDOT[:2]), ALL))
    add(OpInfo("linalg.vecdot", sub("linalg.vecdot"), _two([
        ("last", ((2, 3), "C"), ((3,), "S"), {})]), ALL))
    # polynomials
    for name in ("polyadd", "polysub", "polymul"):
        add(OpInfo(name, fn(name), _two([("4-2", ((4,), "C"), ((2,), "S"), {}),
                                         ("2-3", ((2,), "C"), ((3,), "C"), {})]), ALL))
    one("polyder", ((4,), "S", {}), ((5,), "C", {"m": 2}), ((3,), "C", {"m": 0}))
    add(OpInfo("polyint", fn("polyint"), lambda g: [
        Sample((g((3,)),), {}, (0,), "m1"), Sample((g((3,)), 2, g((2,))), {}, (0, 2), "m2-k"),
        Sample((g((2,)),), {"m": 2, "k": 1.5}, (0,), "k-scalar")], ALL))

    def _cubic(g: Gen) -> np.ndarray:  # distinct real roots near -1, 0.5, 2
        return (np.poly([-1.0, 0.5, 2.0]) + 0.05 * g((4,))).astype(g.dtype)

    add(OpInfo("roots", fn("roots"), lambda g: [
        Sample((_cubic(g),), {}, (0,), "cubic"),
        Sample((np.append(_cubic(g), 0.0).astype(g.dtype),), {}, (0,), "zero-root")]))
    add(OpInfo("poly", fn("poly"), lambda g: [Sample((g((3,)),), {}, (0,), "roots"),
                                            Sample((_eig_matrix(g),), {}, (0,), "matrix")]))
    one("resize", ((4,), "S", {"new_shape": (3, 3)}), ((2, 3), "F", {"new_shape": 4}))
    # issue 21: the last of NumPy's differentiable functions
    add(OpInfo("polydiv", fn("polydiv"), _two([
        ("5-3", ((5,), "C"), ((3,), "S"), {}), ("2-4", ((2,), "C"), ((4,), "C"), {}),
        ("4-1", ((4,), "N"), ((1,), "C"), {})], dom="nz"), ("float64", "complex128")))
    # (double precision only: NumPy drops the remainder's vanished leading entries by an
    # absolute tolerance of 1e-8, which single precision's rounding exceeds, so the
    # remainder's length would differ from the double-precision reference's)
    add(OpInfo("polyfit", lambda ns, x, y, *a, **k: ns.polyfit(x, y, *a, **k), lambda g: [
        Sample((g((6,)), g((6,)), 2), {}, (0, 1), "deg2"),
        Sample((g((7,), layout="S"), g((7, 2), layout="F"), 3, None, False, g((7,), "pos")),
               {}, (0, 1, 5), "2d-w"),
        Sample((g((6,)), g((6,)), 1), {"cov": True}, (0, 1), "cov"),
        Sample((g((5,)), g((5, 2))), {"deg": 1, "cov": "unscaled"}, (0, 1), "cov-unscaled")],
        ALL))
    add(OpInfo("i0", fn("i0"), lambda g: unary("any")(g) + [
        Sample(((g((2, 3), "pos") * 6 + 5).astype(g.dtype),), {}, (0,), "large"),
        Sample(((g((5,), "nz") * 6).astype(g.dtype),), {}, (0,), "both")]))
    add(OpInfo("sort_complex", fn("sort_complex"), lambda g: _s(
        g, ((5,), "S", {}), ((3, 4), "T", {}), ((0,), "C", {}), dom="distinct"), ALL))
    add(OpInfo("choose", lambda ns, i, *cs, **k: ns.choose(i, list(cs), **k), lambda g: [
        Sample((g.ints(0, 3, (3, 4)), g((3, 4)), g((4,), layout="S"), g((1, 4))), {},
               (1, 2, 3), "bcast"),
        Sample((g.ints(-2, 5, (2, 3)), g((2, 3), layout="F"), g(())), {"mode": "wrap"},
               (1, 2), "wrap"),
        Sample((g.ints(-2, 5, (4,)), g((4,)), g((4,), layout="N")), {"mode": "clip"}, (1, 2),
               "clip")], ALL))
    add(OpInfo("Tensor.choose", lambda ns, i, a, b: ns.asarray(i).choose([a, b]), lambda g: [
        Sample((g.ints(0, 2, (2, 3)), g((2, 3)), g((3,))), {}, (1, 2), "bcast")], ALL))
    add(OpInfo("insert", fn("insert"), lambda g: [
        Sample((g((3, 4)), 2, g((3,))), {"axis": 1}, (0, 2), "scalar-axis1"),
        Sample((g((5,), layout="S"), [0, 2, 2], g((3,))), {}, (0, 2), "seq"),
        Sample((g((2, 3), layout="F"), slice(0, 3, 2), g((2,))), {}, (0, 2), "slice-flat"),
        Sample((g((3, 2)), [1], g((1, 2))), {"axis": 0}, (0, 2), "seq-axis0"),
        Sample((g((2, 3), layout="T"), 1, 1.5), {"axis": 0}, (0,), "const-value")], ALL))
    add(OpInfo("linalg.tensorinv", sub("linalg.tensorinv"), _one_arg(
        ("ind2", lambda g: (g((2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6)).astype(g.dtype),
         {}),
        ("ind1", lambda g: (g((6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)).astype(g.dtype),
         {"ind": 1})), ALL))
    add(OpInfo("linalg.tensorsolve", sub("linalg.tensorsolve"), lambda g: [
        Sample(((g((2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6)).astype(g.dtype), g((2, 3))),
               {}, (0, 1), "2x3"),
        Sample(((g((6, 2, 3)) + 3 * np.eye(6).reshape(6, 2, 3)).astype(g.dtype), g((2, 3))),
               {"axes": (0,)}, (0, 1), "axes")], ALL))
    add(OpInfo("linalg.lstsq", sub("linalg.lstsq"), lambda g: [
        Sample(((g((5, 3)) + np.eye(5, 3)).astype(g.dtype), g((5,))), {}, (0, 1), "tall-vec"),
        Sample(((g((5, 3)) + np.eye(5, 3)).astype(g.dtype), g((5, 2))), {"rcond": None},
               (0, 1), "tall-mat"),
        Sample(((g((2, 4)) + np.eye(2, 4)).astype(g.dtype), g((2,))), {}, (0, 1), "wide")],
        ALL))
    # Tensor methods that NumPy's ndarray has in place (tracked writes on a copy)

    def inplace(f: Callable[[Any], Any]) -> Callable[..., Any]:
        def call(ns: Any, x: Any, **kw: Any) -> Any:
            y = x * 1.0  # a non-leaf to write into (and an ndarray for NumPy)
            f(y, **kw)
            return y

        return call

    add(OpInfo("Tensor.sort", inplace(lambda y, **k: y.sort(**k)), lambda g: [
        s for s in _sort_samples(g) if s.kwargs.get("axis", -1) is not None]))
    add(OpInfo("Tensor.partition", inplace(lambda y, **k: y.partition(1, **k)),
               lambda g: _s(g, ((4,), "C", {}), ((3, 4), "T", {"axis": 0}), dom="distinct")))
    add(OpInfo("Tensor.fill", lambda ns, x, v: (lambda y: (y.fill(v), y)[1])(
        ns.asarray(x) * 1.0),
               lambda g: [Sample((g((2, 3)), g(())), {}, (1,), "value")], ALL, ref=False))
    add(OpInfo("Tensor.__imatmul__", lambda ns, a, b: (lambda y: y.__imatmul__(b))(a * 1.0),
               _two([("square", ((3, 3), "C"), ((3, 3), "F"), {})]), ALL))
    add(OpInfo("Tensor.compress", lambda ns, x: x.compress([False, True, True], axis=1),
               unary_shapes([((2, 3), "C"), ((3, 3), "F")]), ALL))


def unary_shapes(specs: list[tuple[tuple[int, ...], str]]) -> Callable[[Gen], list[Sample]]:
    return lambda g: [Sample((g(s, "any", l_),), {}, (0,), _d(s, l_)) for s, l_ in specs]


def _special(ns: Any) -> Any:
    """dualad.scipy.special for dualad.numpy, scipy.special (the reference) for numpy."""
    if ns is dnp:
        from dualad.scipy import special

        return special
    import scipy.special

    return scipy.special


def _scipy_entries(add: Callable[[OpInfo], None]) -> None:
    try:
        import scipy.special  # noqa: F401
    except ImportError:  # the scipy extra is not installed: nothing to check
        return

    def sp(name: str) -> Callable[..., Any]:
        return lambda ns, *a, **k: getattr(_special(ns), name)(*a, **k)

    for name, dom in (("gammaln", "pos"), ("digamma", "pos"), ("erf", "any"), ("erfc", "any"),
                      ("expit", "any"), ("gamma", "pos"), ("ndtr", "any"),
                      ("log_ndtr", "any"), ("erfinv", "unit"), ("rgamma", "pos"),
                      ("j0", "any"), ("j1", "any"), ("y0", "pos"), ("y1", "pos"),
                      ("i0", "any"), ("i1", "any"), ("i0e", "nz"), ("i1e", "nz")):
        add(OpInfo(f"scipy.special.{name}", sp(name), unary(dom)))
    add(OpInfo("scipy.special.erfcinv", lambda ns, x: _special(ns).erfcinv(x + 1.0),
               unary("unit")))
    # Bessel functions of any order: differentiable in x alone (the order a constant)
    for name, order, dom in (("jv", 1.5, "pos"), ("yv", 0.5, "pos"), ("iv", 2.5, "pos"),
                             ("ive", 1.0, "nz"), ("jn", 2, "any"), ("yn", 1, "pos")):
        add(OpInfo(f"scipy.special.{name}", sp(name), lambda g, order=order, dom=dom: [
            Sample((order, g((2, 3), dom)), {}, (1,), "order")]))
    for name in ("betaln", "beta"):
        add(OpInfo(f"scipy.special.{name}", sp(name), binary("pos", "pos", consts=False)))
    add(OpInfo("scipy.special.xlog1py", sp("xlog1py"), lambda g: [
        Sample((g((2, 3)), g((3,), "gtm1")), {}, (0, 1), "bcast"),
        Sample((np.array([0.0, 1.5, -0.5]).astype(g.dtype), g((3,), "gtm1")), {}, (0, 1),
               "zero-x")]))
    # differentiable in the limit only (a shape's derivative raises): shapes as constants
    for name in ("gammainc", "gammaincc"):
        add(OpInfo(f"scipy.special.{name}", sp(name), lambda g: [
            Sample((g((3,), "gt1"), g((2, 3), "pos")), {}, (1,), "bcast"),
            Sample((2.5, g((4,), "pos")), {}, (1,), "pyscalar")]))
    for name in ("betainc", "betaincc"):
        add(OpInfo(f"scipy.special.{name}", sp(name), lambda g: [Sample(
            (g((3,), "gt1"), g((2, 3), "pos"), np.abs(g((2, 3), "unit"))), {}, (2,), "bcast")]))
    add(OpInfo("scipy.special.stdtr", sp("stdtr"), lambda g: [
        Sample((g((3,), "gt1"), g((2, 3))), {}, (1,), "bcast")]))
    add(OpInfo("scipy.special.logit", lambda ns, x: _special(ns).logit(x / 2.5), unary("pos")))
    add(OpInfo("scipy.special.xlogy", sp("xlogy"), lambda g: [
        Sample((g((2, 3)), g((3,), "pos")), {}, (0, 1), "bcast"),
        Sample((np.array([0.0, 1.5, -0.5]).astype(g.dtype), g((3,), "pos")), {}, (0, 1),
               "zero-x"),
        Sample((g((2,)), 2.0), {}, (0,), "pyscalar")]))
    red3 = [((2, 3, 4), "T", {}), ((2, 3, 4), "C", {"axis": 1}),
            ((3, 4), "F", {"axis": (0, 1)}), ((3,), "S", {})]
    add(OpInfo("scipy.special.logsumexp", sp("logsumexp"), lambda g: _s(g, *red3) + [
        Sample((g((3, 4)),), {"axis": 0, "keepdims": True}, (0,), "keepdims"),
        Sample((g((2, 3)),), {"axis": 1, "b": np.array([1.0, 0.5, 2.0])}, (0,), "b")]))
    add(OpInfo("scipy.special.softmax", sp("softmax"), lambda g: _s(g, *red3)))
    add(OpInfo("scipy.special.log_softmax", sp("log_softmax"), lambda g: _s(g, *red3)))


def _more_entries(add: Callable[[OpInfo], None]) -> None:
    _scipy_entries(add)
    def one(name: str, *specs: Any, dom: str = "any", dts: Any = ALL, **kw: Any) -> None:
        add(OpInfo(name, lambda ns, x, **k: getattr(ns, name)(x, **k),
                   lambda g: _s(g, *specs, dom=dom), dts, **kw))

    add(OpInfo("array", lambda ns, form, a, b: ARRAY_FORMS[form](ns, a, b),
               _pair_forms(ARRAY_FORMS, (((3,), "S"), ((3,), "C"))), ALL,
               covers=("asarray", "asanyarray")))
    add(OpInfo("r_", lambda ns, form, a, b: CONCAT_FORMS[form](ns, a, b),
               _pair_forms(CONCAT_FORMS, (((3,), "C"), ((3,), "N"))), ALL, covers=("c_",)))
    add(OpInfo("array-likes(lists of Tensors)", lambda ns, form, a, b: LIST_ARGS[form](ns, a, b),
               _pair_forms(LIST_ARGS, (((3,), "C"), ((3,), "S"))), REAL))
    one("copy", ((2, 3), "F", {}), ((), "C", {}))
    # (differentiable in the fill value, broadcast to the shape)
    add(OpInfo("full", lambda ns, x, shape: ns.full(shape, x), lambda g: _s(
        g, ((3,), "S", {"shape": (2, 3)}), ((), "C", {"shape": (2, 2)}),
        ((), "C", {"shape": ()})), ALL))
    add(OpInfo("full_like", lambda ns, x, shape: ns.full_like(np.zeros(shape, x.dtype), x),
               lambda g: _s(g, ((2, 1), "F", {"shape": (3, 2, 2)}),
                            ((), "C", {"shape": (3,)})), ALL))
    one("atleast_3d", ((), "C", {}), ((3,), "S", {}), ((2, 2), "F", {}), ((2, 1, 3), "C", {}))
    add(OpInfo("dstack", lambda ns, *xs: ns.dstack(xs), _seq_samples([
        ("1d", [((3,), "C"), ((3,), "S")], {}), ("2d", [((2, 2), "F"), ((2, 2), "C")], {})]),
        ALL))
    one("rot90", ((2, 3), "T", {}), ((2, 3, 4), "C", {"k": 3, "axes": (2, 0)}),
        ((3, 2), "C", {"k": 2}), ((2, 2), "F", {"k": -1}), ((2, 3), "C", {"k": 4}))
    one("rollaxis", ((2, 3, 4), "C", {"axis": 2}), ((2, 3, 4), "S", {"axis": 0, "start": 3}),
        ((2, 3), "C", {"axis": -1, "start": -2}))
    one("vsplit", ((4, 3), "T", {"indices_or_sections": 2}),
        ((3, 2), "C", {"indices_or_sections": [1]}))
    one("hsplit", ((6,), "S", {"indices_or_sections": 3}),
        ((2, 4), "F", {"indices_or_sections": [1, 3]}))
    one("dsplit", ((2, 1, 4), "C", {"indices_or_sections": 2}))
    add(OpInfo("select", lambda ns, c1, c2, a, b, **kw: ns.select([c1, c2], [a, b], **kw),
               _select_samples, ALL))
    add(OpInfo("nan_to_num", lambda ns, x, **kw: ns.nan_to_num(x, **kw), _nan_to_num_samples))
    one("real_if_close", ((2, 3), "C", {}), ((), "C", {}), dts=REAL)
    one("partition", ((6,), "S", {"kth": 2}), ((3, 4), "T", {"kth": (0, 3), "axis": 1}),
        ((3, 4), "F", {"kth": 1, "axis": 0}), ((2, 3), "C", {"kth": -1, "axis": None}),
        dom="distinct", dts=REAL)
    add(OpInfo("gradient", lambda ns, x, *h, **kw: ns.gradient(x, *h, **kw), _gradient_samples,
               ALL))
    add(OpInfo("linspace", lambda ns, a, b, **kw: ns.linspace(a, b, **kw), _linspace_samples))
    _stat_entries(add, one)
    _namespace_entries(add, one)
    add(OpInfo("einsum(sublists)", lambda ns, form, a, b: {
        "matmul": lambda: ns.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        "implicit": lambda: ns.einsum(a, [0, 1], b, [1, 2]),
        "ellipsis": lambda: ns.einsum(a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]),
        "trace": lambda: ns.einsum(a[:, :2], [0, 0]),
    }[form](), lambda g: [Sample((f, g((2, 3), layout="T"), g((3, 4))), {}, (1, 2), f)
                          for f in ("matmul", "implicit", "ellipsis", "trace")], ALL))


# Non-differentiable results: called on dual / requires-grad inputs, they must give plain
# tensors (no tangent, no grad_fn). name -> call(ns, x, y) with x, y float arrays (2, 3).
NONDIFF: dict[str, Callable[..., Any]] = {
    "argmax": lambda ns, x, y: ns.argmax(x, axis=1),
    "argmin": lambda ns, x, y: ns.argmin(x),
    "argsort": lambda ns, x, y: ns.argsort(x, axis=0),
    "nonzero": lambda ns, x, y: ns.nonzero(x),
    "argwhere": lambda ns, x, y: ns.argwhere(x),
    "count_nonzero": lambda ns, x, y: ns.count_nonzero(x),
    "equal": lambda ns, x, y: ns.equal(x, y),
    "not_equal": lambda ns, x, y: ns.not_equal(x, y),
    "less": lambda ns, x, y: ns.less(x, y),
    "less_equal": lambda ns, x, y: ns.less_equal(x, y),
    "greater": lambda ns, x, y: ns.greater(x, y),
    "greater_equal": lambda ns, x, y: ns.greater_equal(x, y),
    "isfinite": lambda ns, x, y: ns.isfinite(x),
    "isnan": lambda ns, x, y: ns.isnan(x),
    "isinf": lambda ns, x, y: ns.isinf(x),
    "signbit": lambda ns, x, y: ns.signbit(x),
    "floor_divide": lambda ns, x, y: ns.floor_divide(x, y),
    "logical_and": lambda ns, x, y: ns.logical_and(x, y),
    "logical_or": lambda ns, x, y: ns.logical_or(x, y),
    "logical_xor": lambda ns, x, y: ns.logical_xor(x, y),
    "logical_not": lambda ns, x, y: ns.logical_not(x),
    # (bitwise functions take integers or booleans: masks of the float inputs here)
    "bitwise_and": lambda ns, x, y: ns.bitwise_and(ns.real(x) > 0, ns.real(y) > 0),
    "bitwise_or": lambda ns, x, y: ns.bitwise_or(ns.real(x) > 0, ns.real(y) > 0),
    "bitwise_xor": lambda ns, x, y: ns.bitwise_xor(ns.real(x) > 0, ns.real(y) > 0),
    "invert": lambda ns, x, y: ns.invert(ns.real(x) > 0),
    "Tensor.__and__": lambda ns, x, y: (ns.real(x) > 0) & (ns.real(y) > 0),
    "Tensor.__invert__": lambda ns, x, y: ~(ns.real(x) > 0),
    "isclose": lambda ns, x, y: ns.isclose(x, y),
    "any": lambda ns, x, y: ns.any(x, axis=0),
    "all": lambda ns, x, y: ns.all(x),
    # plain Python results
    "allclose": lambda ns, x, y: ns.allclose(x, y),
    "array_equal": lambda ns, x, y: ns.array_equal(x, y),
    "shape": lambda ns, x, y: ns.shape(x),
    "ndim": lambda ns, x, y: ns.ndim(x),
    "size": lambda ns, x, y: ns.size(x),
    "Tensor.__lt__": lambda ns, x, y: x < y,
    "Tensor.__ge__": lambda ns, x, y: x >= y,
    "Tensor.__eq__": lambda ns, x, y: x == y,
    "Tensor.__floordiv__": lambda ns, x, y: x // y,
    "iscomplex": lambda ns, x, y: ns.iscomplex(x),
    "isreal": lambda ns, x, y: ns.isreal(x),
    "iscomplexobj": lambda ns, x, y: ns.iscomplexobj(x),
    "isrealobj": lambda ns, x, y: ns.isrealobj(x),
    "isposinf": lambda ns, x, y: ns.isposinf(ns.real(x)),  # (NumPy refuses complex)
    "isneginf": lambda ns, x, y: ns.isneginf(ns.real(x)),
    "nanargmax": lambda ns, x, y: ns.nanargmax(x, axis=1),
    "nanargmin": lambda ns, x, y: ns.nanargmin(x),
}
if hasattr(dnp, "linalg") and hasattr(dnp.linalg, "matrix_rank"):
    NONDIFF["linalg.matrix_rank"] = lambda ns, x, y: ns.linalg.matrix_rank(x)

# Public names of dualad.numpy that need no entry, and why.
EXEMPT: dict[str, str] = {
    **{n: "factory: makes a new tensor from shapes/values; nothing to differentiate"
       for n in ("arange", "as_tensor", "empty", "empty_like", "eye",
                 "ones", "ones_like", "rand", "randn", "tensor", "zeros",
                 "zeros_like")},
    **{n: "constant" for n in ("pi", "e", "inf", "nan", "newaxis")},
    **{f"fft.{n}": "factory: sample frequencies, no array input"
       for n in ("fftfreq", "rfftfreq")},
    **{f"linalg.{n}": "exception / result namedtuple type, not a function"
       for n in ("LinAlgError", "EighResult", "EigResult", "SVDResult", "QRResult",
                 "SlogdetResult")},
}

# Hook for dnp.linalg / dnp.fft (issue 5, being written in parallel): when those
# namespaces exist, `SUBMODULE_ENTRIES` below registers entries for the functions they
# define, and the coverage test demands an entry for each of their public names.
SUBMODULES = ("linalg", "fft")


def _wellcond(g: Gen, n: int, batch: tuple[int, ...] = (), layout: str = "C") -> np.ndarray:
    return lay((g(batch + (n, n)) + 3 * np.eye(n)).astype(g.dtype), layout)


def _spd(g: Gen, n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = g(batch + (n, n))
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(g.dtype)


def _herm(g: Gen, batch: tuple[int, ...] = ()) -> np.ndarray:
    """Hermitian 3x3 with well-separated eigenvalues -1, 0.5, 2."""
    q, _ = np.linalg.qr(g(batch + (3, 3)))
    d = np.diag(np.array([-1.0, 0.5, 2.0]))
    return (q @ d @ np.conj(np.swapaxes(q, -1, -2))).astype(g.dtype)


def _gauge_free(ns: Any, v: Any) -> Any:
    """|v|^2 elementwise: eigen/singular vectors are defined up to a phase per column."""
    return ns.real(v * ns.conj(v))


def _one_arg(*specs: tuple[str, Callable[[Gen], Any], dict[str, Any]]) -> Callable[
        [Gen], list[Sample]]:
    return lambda g: [Sample((mk(g),), kw, (0,), d) for d, mk, kw in specs]


def _sub_entries() -> list[OpInfo]:
    """Entries for dnp.linalg.* and dnp.fft.* (issue 5), for whichever of them exist.

    The hook: nothing here runs unless ``dualad.numpy`` has the submodule and the
    function, so these entries switch on as the functions land.
    """
    wc, gf = _wellcond, _gauge_free
    lin: dict[str, OpInfo] = {
        "inv": OpInfo("linalg.inv", lambda ns, a: ns.linalg.inv(a), _one_arg(
            ("3x3", lambda g: wc(g, 3, layout="F"), {}), ("batched", lambda g: wc(g, 2, (2,)), {}),
            ("1x1", lambda g: wc(g, 1), {})), ALL),
        "det": OpInfo("linalg.det", lambda ns, a: ns.linalg.det(a), _one_arg(
            ("3x3", lambda g: wc(g, 3, layout="T"), {}), ("batched", lambda g: wc(g, 2, (2,)), {})),
            ALL),
        "slogdet": OpInfo("linalg.slogdet", lambda ns, a: tuple(ns.linalg.slogdet(a)), _one_arg(
            ("3x3", lambda g: wc(g, 3), {}), ("neg", lambda g: -wc(g, 3), {}),
            ("batched", lambda g: wc(g, 2, (2,)), {})), ALL),
        "solve": OpInfo("linalg.solve", lambda ns, a, b: ns.linalg.solve(a, b), lambda g: [
            Sample((wc(g, 3, layout="F"), g((3, 2))), {}, (0, 1), "mat-rhs"),
            Sample((wc(g, 3), g((3,))), {}, (0, 1), "vec-rhs"),
            Sample((wc(g, 2, (2,)), g((2, 2, 1))), {}, (0, 1), "batched")], ALL),
        "cholesky": OpInfo("linalg.cholesky", lambda ns, a: ns.linalg.cholesky(a), _one_arg(
            ("spd", lambda g: _spd(g, 3), {}), ("batched", lambda g: _spd(g, 2, (2,)), {})), ALL),
        "eigh": OpInfo("linalg.eigh", lambda ns, a: (ns.linalg.eigh(a)[0], gf(
            ns, ns.linalg.eigh(a)[1])), _one_arg(("herm", _herm, {}),
                                                 ("batched", lambda g: _herm(g, (2,)), {})), ALL),
        "eigvalsh": OpInfo("linalg.eigvalsh", lambda ns, a: ns.linalg.eigvalsh(a), _one_arg(
            ("herm", _herm, {})), ALL),
        "svd": OpInfo("linalg.svd", lambda ns, a, **kw: (lambda r: (r[1], gf(ns, r[0]), gf(
            ns, r[2])))(ns.linalg.svd(a, full_matrices=False)), _one_arg(
            ("3x2", lambda g: g((3, 2), layout="F"), {}), ("2x3", lambda g: g((2, 3)), {})), ALL),
        "svdvals": OpInfo("linalg.svdvals", lambda ns, a: ns.linalg.svdvals(a), _one_arg(
            ("3x2", lambda g: g((3, 2)), {}), ("batched", lambda g: g((2, 2, 3)), {})), ALL),
        "qr": OpInfo("linalg.qr", lambda ns, a: tuple(ns.linalg.qr(a)), _one_arg(
            ("3x3", lambda g: wc(g, 3), {}), ("3x2", lambda g: g((3, 2)) + np.eye(3, 2), {})),
            ALL),
        "pinv": OpInfo("linalg.pinv", lambda ns, a: ns.linalg.pinv(a), _one_arg(
            ("3x2", lambda g: (g((3, 2)) + 2 * np.eye(3, 2)).astype(g.dtype), {}),
            ("2x3", lambda g: (g((2, 3)) + 2 * np.eye(2, 3)).astype(g.dtype), {})), ALL),
        "norm": OpInfo("linalg.norm", lambda ns, a, **kw: ns.linalg.norm(a, **kw), _one_arg(
            ("fro", lambda g: g((3, 2), layout="T"), {}), ("vec", lambda g: g((4,)), {}),
            ("axis1", lambda g: g((3, 2)), {"axis": 1}),
            ("ord1", lambda g: g((4,), "nz"), {"ord": 1}),
            ("keepdims", lambda g: g((3, 2)), {"axis": 0, "keepdims": True})), ALL),
        "vector_norm": OpInfo("linalg.vector_norm", lambda ns, a, **kw: ns.linalg.vector_norm(
            a, **kw), _one_arg(("all", lambda g: g((3, 2)), {}),
                               ("axis", lambda g: g((3, 2)), {"axis": 0}),
                               ("ord3", lambda g: g((4,), "nz"), {"ord": 3})), ALL),
        "matrix_norm": OpInfo("linalg.matrix_norm", lambda ns, a, **kw: ns.linalg.matrix_norm(
            a, **kw), _one_arg(("fro", lambda g: g((3, 2)), {}),
                               ("batched", lambda g: g((2, 2, 3)), {})), ALL),
        "matrix_power": OpInfo("linalg.matrix_power", lambda ns, a, n: ns.linalg.matrix_power(
            a, n), lambda g: [Sample((g((3, 3)), 3), {}, (0,), "n3"),
                              Sample((g((3, 3)), 0), {}, (0,), "n0"),
                              Sample((wc(g, 2), -2), {}, (0,), "n-2")], ALL),
        "matmul": OpInfo("linalg.matmul", lambda ns, a, b: ns.linalg.matmul(a, b),
                         _two(MATMUL[:5]), ALL),
        "outer": OpInfo("linalg.outer", lambda ns, a, b: ns.linalg.outer(a, b),
                        _two(OUTER[:1] + OUTER[2:]), ALL),
        "diagonal": OpInfo("linalg.diagonal", lambda ns, a, **kw: ns.linalg.diagonal(a, **kw),
                           _one_arg(("3x3", lambda g: g((3, 3)), {}),
                                    ("offset", lambda g: g((2, 3, 4)), {"offset": 1})), ALL),
        "trace": OpInfo("linalg.trace", lambda ns, a, **kw: ns.linalg.trace(a, **kw), _one_arg(
            ("3x3", lambda g: g((3, 3)), {}), ("offset", lambda g: g((2, 3, 4)), {"offset": -1})),
            ALL),
        "eig": OpInfo("linalg.eig", lambda ns, a: (lambda r: (r[0], gf(ns, r[1])))(
            ns.linalg.eig(a)), _one_arg(("3x3", _eig_matrix, {}),
                                        ("batched", lambda g: _eig_matrix(g, (2,)), {}),
                                        ("complex-pair", _rotating, {})), ALL),
        "eigvals": OpInfo("linalg.eigvals", lambda ns, a: ns.linalg.eigvals(a), _one_arg(
            ("3x3", lambda g: _eig_matrix(g), {}), ("complex-pair", _rotating, {})), ALL),
        "multi_dot": OpInfo("linalg.multi_dot", lambda ns, *xs: ns.linalg.multi_dot(xs),
                            _seq_samples([("3", [((2, 3), "C"), ((3, 4), "T"), ((4, 2), "C")], {}),
                                          ("vec-ends", [((3,), "C"), ((3, 4), "C"), ((4,), "S")],
                                           {})]), ALL),
    }

    def fft_one(n: str) -> OpInfo:
        two = n.endswith("2") or n.endswith("n")
        real_in = n in ("rfft", "ihfft", "rfft2", "rfftn")

        def smp(g: Gen) -> list[Sample]:
            if two:
                return [Sample((g((2, 3), layout="T"),), {}, (0,), "2d"),
                        Sample((g((2, 3, 4)),), {"axes": (0, 2)}, (0,), "axes02"),
                        Sample((g((2, 4)),), {"s": (3, 6)}, (0,), "s"),
                        Sample((g((3, 2)),), {"norm": "ortho"}, (0,), "ortho")]
            return [Sample((g((5,), layout="S"),), {}, (0,), "1d"),
                    Sample((g((3, 4), layout="F"),), {"axis": 0}, (0,), "axis0"),
                    Sample((g((4,)),), {"n": 7}, (0,), "pad"),
                    Sample((g((6,)),), {"n": 4}, (0,), "trunc"),
                    Sample((g((4,)),), {"norm": "forward"}, (0,), "forward"),
                    Sample((g((2, 4)),), {"norm": "ortho"}, (0,), "ortho")]

        return OpInfo(f"fft.{n}", lambda ns, a, **kw: getattr(ns.fft, n)(a, **kw), smp,
                      REAL if real_in else ALL)

    ffts = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn",
            "rfft2", "irfft2", "rfftn", "irfftn"]
    shifts = {
        "fftshift": OpInfo("fft.fftshift", lambda ns, a, **kw: ns.fft.fftshift(a, **kw),
                           _one_arg(("2d", lambda g: g((3, 4), layout="T"), {}),
                                    ("axis", lambda g: g((3, 5)), {"axes": 1})), ALL),
        "ifftshift": OpInfo("fft.ifftshift", lambda ns, a, **kw: ns.fft.ifftshift(a, **kw),
                            _one_arg(("2d", lambda g: g((3, 4)), {}),
                                     ("axis", lambda g: g((5,), layout="S"), {"axes": 0})), ALL),
    }
    out = []
    if hasattr(dnp, "linalg"):
        out += [e for n, e in lin.items() if hasattr(dnp.linalg, n)]
    if hasattr(dnp, "fft"):
        out += [fft_one(n) for n in ffts if hasattr(dnp.fft, n)]
        out += [e for n, e in shifts.items() if hasattr(dnp.fft, n)]
    return out


OPS: list[OpInfo] = _entries() + _sub_entries()
BY_NAME: dict[str, OpInfo] = {op.name: op for op in OPS}
assert len(BY_NAME) == len(OPS), "duplicate opdb names"


def covered_names() -> set[str]:
    return {n for op in OPS for n in (op.name,) + op.covers}


# ============================================================================ cases


_SAMPLES: dict[tuple[str, str], list[Sample]] = {}


def samples(op: OpInfo, dtype: str) -> list[Sample]:
    key = (op.name, dtype)
    if key not in _SAMPLES:
        ss = op.samples(Gen(op.name, dtype))
        seen: dict[str, int] = {}
        for s in ss:  # unique descriptions
            n = seen.get(s.desc, 0)
            seen[s.desc] = n + 1
            if n:
                s.desc = f"{s.desc}#{n}"
        _SAMPLES[key] = ss
    return _SAMPLES[key]


def cases(mode: str, dtypes: tuple[str, ...] = ALL, *, first: int | None = None,
          where: Callable[[OpInfo], bool] | None = None,
          pick: Callable[[list[Sample]], list[Sample]] | None = None) -> list[Any]:
    """pytest params (op, dtype, sample) with ids ``name-dtype-desc`` and xfail marks;
    ``first`` keeps the first samples of each entry, ``pick`` chooses them."""
    out = []
    for op in OPS:
        if where is not None and not where(op):
            continue
        for dt in op.dtypes:
            if dt not in dtypes:
                continue
            ss = samples(op, dt)[:first]
            for s in pick(ss) if pick else ss:
                why = s.xfail or op.xfail_reason(mode, dt, s.desc)
                marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
                out.append(pytest.param(op, dt, s, id=f"{op.name}-{dt}-{s.desc}", marks=marks))
    return out


# ============================================================================ harness

TOL = {  # (rtol, atol) against float64 finite differences, by the precision checked
    "float64": (1e-6, 1e-7), "complex128": (1e-6, 1e-7),
    "float32": (2e-3, 2e-3), "complex64": (2e-3, 2e-3),
}
AD_TOL = {  # between two AD results of the same precision (forward vs reverse, batched...)
    "float64": (1e-9, 1e-10), "complex128": (1e-9, 1e-10),
    "float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4),
}
FD_H = 1e-4


def _is_fc(a: Any) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def widen(s: Sample) -> Sample:
    """The sample in float64 / complex128 (the finite-difference reference precision)."""
    args = tuple(a.astype(WIDE[a.dtype.name]) if _is_fc(a) else a for a in s.args)
    return dataclasses.replace(s, args=args)


def flat(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in flat(o)]
    return [out]


def diff_outputs(out: Any) -> list[Any]:
    return [o for o in flat(out) if isinstance(o, da.Tensor) and o.dtype.kind in "fc"]


def run(op: OpInfo, s: Sample, args: tuple[Any, ...]) -> list[Any]:
    """Call the op with ``args`` (already Tensors where wanted); differentiable outputs."""
    return diff_outputs(op.call(dnp, *args, **s.kwargs))


# The array kind a computation is run on when it is not NumPy (tests/backends/test_device_sweep.py
# sets it): every result must be of that kind, and comes back to the host to be compared.
DEVICE: Any = None


def to_np(t: Any) -> np.ndarray:
    if t is None:
        return None
    if DEVICE is not None and isinstance(t, da.Tensor):
        a = t.detach()._data
        assert DEVICE.is_kind(a), f"a result of {type(a).__name__}, not a {DEVICE.name} array"
        return DEVICE.get(a)
    if DEVICE is not None and DEVICE.is_kind(t):
        return DEVICE.get(t)
    return np.asarray(t.detach().numpy()) if isinstance(t, da.Tensor) else np.asarray(t)


def evaluate(op: OpInfo, s: Sample, xs: list[np.ndarray]) -> list[np.ndarray]:
    """Plain evaluation with the differentiable inputs replaced by ``xs``."""
    args = list(s.args)
    for i, x in zip(s.diff, xs, strict=True):
        args[i] = da.as_tensor(x)
    return [to_np(o) for o in run(op, s, tuple(args))]


def rand_like(rng: np.random.Generator, a: Any, lead: tuple[int, ...] = ()) -> np.ndarray:
    a = np.asarray(a)
    r = rng.standard_normal(lead + a.shape)
    if a.dtype.kind == "c":
        r = r + 1j * rng.standard_normal(lead + a.shape)
    return r.astype(a.dtype)


def directions(s: Sample, rng: np.random.Generator) -> list[list[np.ndarray]]:
    """Tangent directions: one real direction; for complex inputs also an imaginary one
    (the real and imaginary parts are perturbed separately)."""
    xs = [s.args[i] for i in s.diff]
    real = [rng.standard_normal(x.shape).astype(x.dtype) for x in xs]
    dirs = [real]
    if any(x.dtype.kind == "c" for x in xs):
        dirs.append([(1j * rng.standard_normal(x.shape)).astype(x.dtype) if x.dtype.kind == "c"
                     else np.zeros(x.shape, x.dtype) for x in xs])
    return dirs


def fd_jvp(op: OpInfo, s: Sample, u: list[np.ndarray], h: float = FD_H) -> list[np.ndarray]:
    """Fourth-order central difference of the (widened) op along ``u``."""
    w = widen(s)
    xs = [w.args[i] for i in w.diff]
    us = [np.asarray(d).astype(x.dtype) for d, x in zip(u, xs, strict=True)]
    f = {k: evaluate(op, w, [x + k * h * d for x, d in zip(xs, us, strict=True)])
         for k in (-2, -1, 1, 2)}
    return [(-f[2][i] + 8 * f[1][i] - 8 * f[-1][i] + f[-2][i]) / (12 * h)
            for i in range(len(f[1]))]


def rng_for(op: OpInfo, dtype: str, s: Sample, salt: str = "") -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{op.name}|{dtype}|{s.desc}|{salt}".encode()))


def close(actual: Any, expected: Any, tol: tuple[float, float], what: str) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    rtol, atol = tol
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0, where=~np.isnan(expected))))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale, err_msg=what,
                               equal_nan=True)


def inner(a: list[Any], b: list[Any]) -> tuple[float, float]:
    """Re<a, b> summed over the list, and the scale sum |a||b| (for tolerances)."""
    tot, scale = 0.0, 0.0
    for x, y in zip(a, b, strict=True):
        x = np.asarray(x, dtype=np.complex128)
        y = np.asarray(y, dtype=np.complex128)
        m = ~(np.isnan(x) | np.isnan(y))
        tot += float(np.real(np.sum(np.conj(x[m]) * y[m])))
        scale += float(np.sum(np.abs(x[m]) * np.abs(y[m])))
    return tot, scale


def scalar_close(a: float, b: float, scale: float, tol: tuple[float, float], what: str) -> None:
    rtol, atol = tol
    assert abs(a - b) <= rtol * scale + atol * max(1.0, abs(b)) + rtol * abs(b), (
        f"{what}: {a!r} != {b!r} (scale {scale:.3g})")


def leaves(s: Sample, requires_grad: bool = True) -> tuple[list[Any], tuple[Any, ...]]:
    """Leaf tensors (sharing the sample's arrays, so layouts are kept) and the call args."""
    args = list(s.args)
    xs = []
    for i in s.diff:
        t = da.as_tensor(s.args[i])
        if requires_grad:
            t = t.detach().requires_grad_(True)
        xs.append(t)
        args[i] = t
    return xs, tuple(args)


def tol_for(dtype: str, outs: list[np.ndarray]) -> tuple[float, float]:
    """Finite-difference tolerance: that of the lowest precision among input and outputs."""
    if dtype in ("float32", "complex64") or any(o.dtype.itemsize <= 4 or o.dtype == np.complex64
                                                for o in outs):
        return TOL["float32"]
    return TOL[dtype]


def record(op: OpInfo, dtype: str, mode: str) -> None:
    CASES.add((op.name, dtype, mode))
    CHECKS[mode] = CHECKS.get(mode, 0) + 1


# ---------------------------------------------------------------- forward mode


def jvp(op: OpInfo, s: Sample, u: list[np.ndarray], *, batched: bool = False,
        rg: bool = False) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(primal outputs, tangents) by forward mode; a zero (None) tangent comes back as 0.

    ``rg=True`` makes the primals require grad, which takes the general path of the
    dispatcher (Tensor-level JVP rules, recorded for reverse mode) instead of its array
    fast path."""
    args = list(s.args)
    with da.dual_level():
        for i, d in zip(s.diff, u, strict=True):
            x = da.as_tensor(s.args[i])
            if rg:
                x = x.detach().requires_grad_(True)
            args[i] = da.make_dual(x, da.as_tensor(d), batched=batched)
        outs = run(op, s, tuple(args))
        res = [da.unpack_dual(o) for o in outs]
    prim = [to_np(p) for p, _ in res]
    tans = []
    for (p, t), _o in zip(res, outs, strict=True):
        if t is None:
            tans.append(np.zeros(((B,) if batched else ()) + p.shape, p.dtype))
        else:
            assert t.dtype == p.dtype, f"tangent dtype {t.dtype} != primal dtype {p.dtype}"
            tans.append(to_np(t))
    return prim, tans


def check_forward(op: OpInfo, dtype: str, s: Sample) -> None:
    """Forward mode vs finite differences, the primal vs a plain call and vs NumPy, and the
    precision's agreement with float64."""
    plain = evaluate(op, s, [s.args[i] for i in s.diff])
    if op.ref:
        ref = diff_outputs_np(op.call(np, *s.args, **s.kwargs))
        assert len(ref) == len(plain), f"{len(plain)} outputs, NumPy gives {len(ref)}"
        for a, r in zip(plain, ref, strict=True):
            assert a.dtype == r.dtype, f"dtype {a.dtype}, NumPy gives {r.dtype}"
            close(a, r, AD_TOL[dtype], "value vs NumPy")
    rng = rng_for(op, dtype, s)
    wide = dtype != WIDE[dtype]
    tol = tol_for(dtype, plain)
    for k, u in enumerate(directions(s, rng)):
        prim, tans = jvp(op, s, u)
        for p, q in zip(prim, plain, strict=True):
            assert p.dtype == q.dtype
            close(p, q, AD_TOL[dtype], "primal under a dual level vs plain call")
        fd = fd_jvp(op, s, u)
        assert len(fd) == len(tans)
        for j, (t, f) in enumerate(zip(tans, fd, strict=True)):
            close(t, f, tol, f"output {j}: JVP vs finite differences (direction {k})")
        if k == 0:  # the general (recording) path agrees with the fast path
            _, tans_rg = jvp(op, s, u, rg=True)
            for j, (t, t2) in enumerate(zip(tans, tans_rg, strict=True)):
                close(t2, t, AD_TOL[dtype], f"output {j}: JVP with requires_grad inputs")
        if wide:  # the same sample computed in float64 agrees
            _, tans64 = jvp(op, widen(s), [d.astype(WIDE[d.dtype.name]) for d in u])
            for t, t64 in zip(tans, tans64, strict=True):
                close(t, t64, TOL[dtype], f"{dtype} JVP vs {WIDE[dtype]} JVP")
    record(op, dtype, "forward")


def diff_outputs_np(out: Any) -> list[np.ndarray]:
    return [np.asarray(o) for o in flat(out) if np.asarray(o).dtype.kind in "fc"]


# ---------------------------------------------------------------- reverse mode


def vjp(op: OpInfo, s: Sample, v: list[np.ndarray], *, batched: bool = False,
        create_graph: bool = False) -> tuple[list[Any], list[Any], list[Any]]:
    """Gradients of Re<v, f(x)> by reverse mode: (grads, leaves, outputs)."""
    xs, args = leaves(s)
    outs = run(op, s, args)
    assert len(outs) == len(v)
    pairs = [(o, w) for o, w in zip(outs, v, strict=True) if o.requires_grad]
    if not pairs:
        lead = (v[0].shape[0],) if batched and v else ()
        return [np.zeros(lead + x.shape, x.dtype) for x in xs], xs, outs
    grads = da.grad([o for o, _ in pairs], xs, grad_outputs=[da.as_tensor(w) for _, w in pairs],
                    allow_unused=True, materialize_grads=True, is_grads_batched=batched,
                    create_graph=create_graph)
    for gr, x in zip(grads, xs, strict=True):
        assert gr.dtype == x.dtype, f"grad dtype {gr.dtype} != input dtype {x.dtype}"
        want = ((v[0].shape[0],) if batched else ()) + x.shape
        assert gr.shape == want, f"grad shape {gr.shape} != {want}"
    return list(grads) if create_graph else [to_np(gr) for gr in grads], xs, outs


def cotangents(op: OpInfo, s: Sample, rng: np.random.Generator, lead: tuple[int, ...] = ()
               ) -> list[np.ndarray]:
    outs = evaluate(op, s, [s.args[i] for i in s.diff])
    return [rand_like(rng, o, lead) for o in outs]


def check_reverse(op: OpInfo, dtype: str, s: Sample) -> None:
    """Reverse mode vs finite differences of Re<v, f(x)> along the directions u."""
    rng = rng_for(op, dtype, s, "rev")
    v = cotangents(op, s, rng)
    tol = tol_for(dtype, v)
    grads, _, _ = vjp(op, s, v)
    for k, u in enumerate(directions(s, rng)):
        fd = fd_jvp(op, s, u)
        want, sc1 = inner(v, fd)
        got, sc2 = inner(grads, u)
        scalar_close(got, want, sc1 + sc2, tol, f"Re<J^T v, u> vs FD (direction {k})")
    record(op, dtype, "reverse")


def check_transposition(op: OpInfo, dtype: str, s: Sample) -> None:
    """Re<v, J u> (forward mode) == Re<J^T v, u> (reverse mode)."""
    rng = rng_for(op, dtype, s, "T")
    v = cotangents(op, s, rng)
    grads, _, _ = vjp(op, s, v)
    xs = [s.args[i] for i in s.diff]
    u = [rand_like(rng, x) for x in xs]
    _, tans = jvp(op, s, u)
    a, sc1 = inner(v, tans)
    b, sc2 = inner(grads, u)
    tol = AD_TOL["float32"] if tol_for(dtype, v) == TOL["float32"] else AD_TOL[dtype]
    scalar_close(a, b, sc1 + sc2, tol, "Re<v, J u> vs Re<J^T v, u>")
    record(op, dtype, "transpose")


def check_double_backward(op: OpInfo, dtype: str, s: Sample, fwd_over_rev: bool = True) -> None:
    """grad of Re<w, J^T v> (create_graph=True) vs finite differences of the gradient; and
    the same directional second derivative by forward-over-reverse."""
    rng = rng_for(op, dtype, s, "gg")
    v = cotangents(op, s, rng)
    grads, xs, _ = vjp(op, s, v, create_graph=True)
    w = [rand_like(rng, s.args[i]) for i in s.diff]
    pairs = [(gr, ww) for gr, ww in zip(grads, w, strict=True)
             if getattr(gr, "requires_grad", False)]
    if pairs:
        hv = da.grad([p for p, _ in pairs], xs, grad_outputs=[da.as_tensor(ww) for _, ww in pairs],
                     allow_unused=True, materialize_grads=True)
        hv = [to_np(h) for h in hv]
    else:
        hv = [np.zeros(x.shape, x.dtype) for x in xs]
    for k, u in enumerate(directions(s, rng)):
        want = 0.0
        for c, sign in ((-2, 1), (-1, -8), (1, 8), (2, -1)):
            shifted = widen(s)
            args = list(shifted.args)
            for i, d in zip(s.diff, u, strict=True):
                args[i] = args[i] + c * FD_H * d.astype(args[i].dtype)
            shifted = dataclasses.replace(shifted, args=tuple(args))
            gs, _, _ = vjp(op, shifted, [x.astype(WIDE[x.dtype.name]) for x in v])
            want += sign * inner(w, gs)[0] / (12 * FD_H)
        got, scale = inner(hv, u)
        scalar_close(got, want, scale + abs(want), tol_for(dtype, v),
                     f"double backward vs FD of the gradient (direction {k})")
        if k == 0 and fwd_over_rev:
            got2, scale2 = inner(w, grad_tangents(op, s, v, u))
            scalar_close(got2, want, scale2 + abs(want), tol_for(dtype, v),
                         "forward-over-reverse (backward inside a dual level) vs FD of the "
                         "gradient")
    record(op, dtype, "double-backward")
    if fwd_over_rev:
        record(op, dtype, "forward-over-reverse")


def grad_tangents(op: OpInfo, s: Sample, v: list[np.ndarray], u: list[np.ndarray]
                  ) -> list[np.ndarray]:
    """d/dt of the gradient J(x + t u)^T v: a backward pass run inside a dual level."""
    args = list(s.args)
    xs = []
    with da.dual_level():
        for i, d in zip(s.diff, u, strict=True):
            x = da.as_tensor(s.args[i]).detach().requires_grad_(True)
            args[i] = da.make_dual(x, da.as_tensor(d))
            xs.append(args[i])
        outs = run(op, s, tuple(args))
        pairs = [(o, w) for o, w in zip(outs, v, strict=True) if o.requires_grad]
        if not pairs:
            return [np.zeros(x.shape, x.dtype) for x in xs]
        grads = da.grad([o for o, _ in pairs], xs, grad_outputs=[da.as_tensor(w) for _, w in pairs],
                        allow_unused=True, materialize_grads=True)
        tans = [da.unpack_dual(gr).tangent for gr in grads]
    return [np.zeros(x.shape, x.dtype) if t is None else to_np(t)
            for t, x in zip(tans, xs, strict=True)]


# ---------------------------------------------------------------- batched


def check_batched_forward(op: OpInfo, dtype: str, s: Sample) -> None:
    rng = rng_for(op, dtype, s, "bf")
    xs = [s.args[i] for i in s.diff]
    U = [rand_like(rng, x, (B,)) for x in xs]
    _, tb = jvp(op, s, U, batched=True)
    for b in range(B):
        _, t1 = jvp(op, s, [u[b] for u in U])
        for j, (x, y) in enumerate(zip(tb, t1, strict=True)):
            assert x.shape == (B,) + y.shape, f"batched tangent shape {x.shape}"
            close(x[b], y, AD_TOL[dtype], f"output {j}, batch {b}: batched vs separate JVP")
    record(op, dtype, "batched-forward")


def check_batched_reverse(op: OpInfo, dtype: str, s: Sample) -> None:
    rng = rng_for(op, dtype, s, "br")
    V = cotangents(op, s, rng, (B,))
    gb, _, _ = vjp(op, s, V, batched=True)
    for b in range(B):
        g1, _, _ = vjp(op, s, [v[b] for v in V])
        for j, (x, y) in enumerate(zip(gb, g1, strict=True)):
            close(x[b], y, AD_TOL[dtype], f"input {j}, batch {b}: batched vs separate VJP")
    record(op, dtype, "batched-reverse")


# double backward runs on these dtypes and the first samples of each entry (the rest of
# the rules' second derivatives are exercised through the same primitives)
GRADGRAD_DTYPES = ("float64", "complex128")
GRADGRAD_FIRST: int | None = None


# ============================================================================ higher order
#
# Every composition of two modes, checked against finite differences of a first
# derivative taken in ANOTHER mode. For a direction pair (a, b) and a cotangent w, all
# four compositions compute the same number, the bilinear form
#
#     S(w; a, b) = Re<w, f''(x)[a, b]>   (symmetric in a and b),
#
# and the references are
#
#     FR(a; c) = d/de J(x + e a)^T c   (FD of reverse-mode gradients):  Re<FR(a; w), b> = S
#     FF(a; b) = d/de J(x + e a) b     (FD of forward-mode JVPs):       Re<w, FF(a; b)> = S
#
# forward-over-forward and reverse-over-forward take FR, forward-over-reverse and
# reverse-over-reverse take FF. Batched tangents (make_dual(batched=True)) and batched
# cotangents (is_grads_batched=True) are checked at each of the two levels of each
# composition against the same references.

# (the modes of the higher-order sweep, grouped in conftest's summary)
SECOND = ("forward-over-forward", "reverse-over-forward", "forward-over-reverse",
          "reverse-over-reverse")
# the entries whose third derivatives and nested functional transforms are checked: every
# family of rules (outputs-reading elementwise formulas, binary formulas, reductions,
# scans, sorting, indexing, products, the linear algebra, the fft family)
THIRD_ORDER = ("exp", "tanh", "sqrt", "log", "sin", "reciprocal", "arctan", "sinc", "abs",
               "power", "divide", "multiply", "hypot", "arctan2", "logaddexp", "maximum",
               "prod", "cumprod", "std", "var", "amax", "sort", "getitem", "where", "clip",
               "matmul", "einsum", "linalg.inv", "linalg.det", "linalg.slogdet",
               "linalg.solve", "linalg.cholesky", "linalg.eigh", "linalg.svdvals",
               "linalg.qr", "linalg.pinv", "linalg.norm", "fft.fft", "fft.rfft", "fft.irfft")


def rich_sample(ss: list[Sample]) -> list[Sample]:
    """The first sample whose differentiable inputs all hold at least two elements (a
    0-d or empty one leaves broadcasting and batching untested); else the first."""
    for s in ss:
        if all(np.size(s.args[i]) >= 2 for i in s.diff):
            return [s]
    return ss[:1]


def _zeros(shape: tuple[int, ...], dtype: Any, lead: tuple[int, ...] = ()) -> np.ndarray:
    return np.zeros(lead + tuple(shape), dtype)


def _with(s: Sample, xs: list[Any]) -> tuple[Any, ...]:
    args = list(s.args)
    for i, x in zip(s.diff, xs, strict=True):
        args[i] = x
    return tuple(args)


def _tangent_np(t: Any, like: Any, lead: tuple[int, ...]) -> np.ndarray:
    """A tangent as an array; ``None`` (a symbolic zero) as zeros of the expected shape."""
    if t is None:
        return _zeros(np.shape(like), np.asarray(to_np(like)).dtype, lead)
    out = to_np(t)
    want = lead + tuple(np.shape(like))
    assert out.shape == want, f"tangent shape {out.shape} != {want}"
    return out


def _grads(outs: list[Any], xs: list[Any], cots: list[Any], **kw: Any) -> list[Any]:
    """da.grad of the outputs that require grad (the others are constant: zero)."""
    lead = (np.shape(cots[0])[0],) if kw.get("is_grads_batched") and cots else ()
    pairs = [(o, c) for o, c in zip(outs, cots, strict=True)
             if isinstance(o, da.Tensor) and o.requires_grad]
    if not pairs:  # (zeros of the inputs' kind: NumPy's, or a GPU's)
        return [da.as_tensor(np.zeros_like(x.detach()._data, shape=lead + x.shape)) for x in xs]
    return list(da.grad([o for o, _ in pairs], xs,
                        grad_outputs=[da.as_tensor(c) for _, c in pairs],
                        allow_unused=True, materialize_grads=True, **kw))


def nested_forward(op: OpInfo, s: Sample, u_in: list[Any], u_out: list[Any], *,
                   batched_in: bool = False, batched_out: bool = False, rg: bool = False
                   ) -> tuple[list[Any], list[Any]]:
    """forward-over-forward: the outer-level tangent of the inner-level tangent of f, i.e.
    f''(x)[u_in, u_out], with u_in at the inner level and u_out at the outer one.

    Returns (the leaves, the second-order tangents as Tensors or None); with ``rg`` the
    leaves require grad (for reverse over forward-over-forward)."""
    xs = [da.as_tensor(s.args[i]) for i in s.diff]
    if rg:
        xs = [x.detach().requires_grad_(True) for x in xs]
    with da.dual_level() as outer:
        d1 = [da.make_dual(x, da.as_tensor(u), batched=batched_out)
              for x, u in zip(xs, u_out, strict=True)]
        with da.dual_level() as inner:
            d2 = [da.make_dual(x, da.as_tensor(u), batched=batched_in)
                  for x, u in zip(d1, u_in, strict=True)]
            outs = run(op, s, _with(s, d2))
            ts = [da.unpack_dual(o, level=inner).tangent for o in outs]
        tts = [None if t is None else da.unpack_dual(t, level=outer).tangent for t in ts]
    return xs, tts


def second_ff(op: OpInfo, s: Sample, u_in: list[Any], u_out: list[Any], **kw: Any
              ) -> list[np.ndarray]:
    _, tts = nested_forward(op, s, u_in, u_out, **kw)
    outs = evaluate(op, s, [s.args[i] for i in s.diff])
    lead = (B,) if kw.get("batched_in") or kw.get("batched_out") else ()
    return [_tangent_np(t, o, lead) for t, o in zip(tts, outs, strict=True)]


def second_rf(op: OpInfo, s: Sample, u: list[Any], w: list[Any], *, batched_tan: bool = False,
              batched_cot: bool = False) -> list[np.ndarray]:
    """reverse-over-forward: the gradient of Re<w, J(x) u>, the tangent computed inside a
    dual level from primals that require grad."""
    xs, args = leaves(s)
    with da.dual_level():
        duals = [da.make_dual(x, da.as_tensor(d), batched=batched_tan)
                 for x, d in zip(xs, u, strict=True)]
        outs = run(op, s, _with(s, duals))
        ts = [da.unpack_dual(o).tangent for o in outs]
    gs = _grads(ts, xs, w, is_grads_batched=batched_cot)
    return [to_np(g) for g in gs]


def second_fr(op: OpInfo, s: Sample, u: list[Any], w: list[Any], *, batched_tan: bool = False,
              batched_cot: bool = False) -> list[np.ndarray]:
    """forward-over-reverse: the tangent of the gradient of Re<w, f>, the backward pass run
    inside a dual level (the hvp way)."""
    xs = [da.as_tensor(s.args[i]).detach().requires_grad_(True) for i in s.diff]
    lead = (B,) if batched_tan or batched_cot else ()
    with da.dual_level():
        duals = [da.make_dual(x, da.as_tensor(d), batched=batched_tan)
                 for x, d in zip(xs, u, strict=True)]
        outs = run(op, s, _with(s, duals))
        gs = _grads(outs, duals, w, is_grads_batched=batched_cot)
        ts = [da.unpack_dual(g).tangent for g in gs]
    return [_tangent_np(t, x, lead) for t, x in zip(ts, xs, strict=True)]


def second_rr(op: OpInfo, s: Sample, w: list[Any], u: list[Any], *, batched_first: bool = False,
              batched_second: bool = False) -> list[np.ndarray]:
    """reverse-over-reverse: the gradient of Re<u, grad Re<w, f>> (create_graph=True)."""
    xs, args = leaves(s)
    outs = run(op, s, args)
    gs = _grads(outs, xs, w, is_grads_batched=batched_first, create_graph=True)
    hv = _grads(gs, xs, u, is_grads_batched=batched_second)
    return [to_np(h) for h in hv]


def _shifted(s: Sample, a: list[np.ndarray], k: float) -> Sample:
    """The widened sample moved by k * FD_H along a."""
    w = widen(s)
    args = list(w.args)
    for i, d in zip(s.diff, a, strict=True):
        args[i] = args[i] + k * FD_H * np.asarray(d).astype(args[i].dtype)
    return dataclasses.replace(w, args=tuple(args))


def _wide(xs: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(x).astype(WIDE[np.asarray(x).dtype.name]) for x in xs]


def fd_of(first: Callable[[Sample], list[np.ndarray]], s: Sample, a: list[np.ndarray]
          ) -> list[np.ndarray]:
    """Fourth-order central difference along ``a`` of ``first`` (a derivative of the
    widened op, given the moved sample)."""
    f = {k: first(_shifted(s, a, k)) for k in (-2, -1, 1, 2)}
    return [(-f[2][i] + 8 * f[1][i] - 8 * f[-1][i] + f[-2][i]) / (12 * FD_H)
            for i in range(len(f[1]))]


def fd_reverse(op: OpInfo, s: Sample, a: list[np.ndarray], c: list[np.ndarray],
               batched: bool = False) -> list[np.ndarray]:
    """FR(a; c): finite differences of reverse-mode gradients (Re<FR, b> = S(c; a, b))."""
    return fd_of(lambda sh: vjp(op, sh, _wide(c), batched=batched)[0], s, a)


def fd_forward(op: OpInfo, s: Sample, a: list[np.ndarray], b: list[np.ndarray],
               batched: bool = False) -> list[np.ndarray]:
    """FF(a; b): finite differences of forward-mode JVPs (Re<w, FF> = S(w; a, b))."""
    return fd_of(lambda sh: jvp(op, sh, _wide(b), batched=batched)[1], s, a)


class Second:
    """Directions, cotangents and the finite-difference references of one (op, dtype,
    sample), shared by the compositions' checks (each reference computed once)."""

    _cache: dict[tuple[str, str, str], Second] = {}

    def __init__(self, op: OpInfo, dtype: str, s: Sample) -> None:
        self.op, self.s = op, s
        rng = rng_for(op, dtype, s, "second")
        xs = [s.args[i] for i in s.diff]
        self.w = cotangents(op, s, rng)
        self.W = cotangents(op, s, rng, (B,))
        self.u1 = [rand_like(rng, x) for x in xs]
        self.u2 = [rand_like(rng, x) for x in xs]
        self.U = [rand_like(rng, x, (B,)) for x in xs]
        self.tol = tol_for(dtype, self.w)
        self._refs: dict[str, list[np.ndarray]] = {}

    @classmethod
    def of(cls, op: OpInfo, dtype: str, s: Sample) -> Second:
        key = (op.name, dtype, s.desc)
        if key not in cls._cache:
            cls._cache[key] = cls(op, dtype, s)
        return cls._cache[key]

    def ref(self, name: str) -> list[np.ndarray]:
        if name not in self._refs:
            op, s = self.op, self.s
            self._refs[name] = {
                "FR(u2;w)": lambda: fd_reverse(op, s, self.u2, self.w),
                "FR(u1;w)": lambda: fd_reverse(op, s, self.u1, self.w),
                "FR(u2;W)": lambda: fd_reverse(op, s, self.u2, self.W, batched=True),
                "FF(u2;u1)": lambda: fd_forward(op, s, self.u2, self.u1),
                "FF(u1;U)": lambda: fd_forward(op, s, self.u1, self.U, batched=True),
                "FF(u2;U)": lambda: fd_forward(op, s, self.u2, self.U, batched=True),
            }[name]()
        return self._refs[name]

    def close(self, got: tuple[float, float], want: tuple[float, float], what: str) -> None:
        scalar_close(got[0], want[0], got[1] + want[1], self.tol, what)


def _at(xs: list[np.ndarray], b: int) -> list[np.ndarray]:
    return [x[b] for x in xs]


def check_second(op: OpInfo, dtype: str, s: Sample, mode: str, batched: bool = False) -> None:
    """One composition of two modes (``mode`` in SECOND) vs finite differences of a first
    derivative in another mode; ``batched``: batched tangents, then batched cotangents,
    at the composition's two levels."""
    c = Second.of(op, dtype, s)
    w, W, u1, u2, U = c.w, c.W, c.u1, c.u2, c.U
    if mode == "forward-over-forward":
        if not batched:
            c.close(inner(w, second_ff(op, s, u1, u2)), inner(c.ref("FR(u2;w)"), u1),
                    "forward-over-forward vs FD of the reverse-mode gradient")
        else:
            got = second_ff(op, s, U, u2, batched_in=True)
            for b in range(B):
                c.close(inner(w, _at(got, b)), inner(c.ref("FR(u2;w)"), _at(U, b)),
                        f"forward-over-forward, batched inner tangents [{b}] vs FD")
            got = second_ff(op, s, u1, U, batched_out=True)
            for b in range(B):
                c.close(inner(w, _at(got, b)), inner(c.ref("FR(u1;w)"), _at(U, b)),
                        f"forward-over-forward, batched outer tangents [{b}] vs FD")
    elif mode == "reverse-over-forward":
        if not batched:
            c.close(inner(second_rf(op, s, u1, w), u2), inner(c.ref("FR(u2;w)"), u1),
                    "reverse-over-forward vs FD of the reverse-mode gradient")
        else:
            ref = c.ref("FR(u2;W)")
            got = inner(second_rf(op, s, U, W, batched_tan=True), u2)
            want = [inner(_at(ref, b), _at(U, b)) for b in range(B)]
            c.close(got, (sum(x[0] for x in want), sum(x[1] for x in want)),
                    "reverse-over-forward, batched tangents vs FD")
            got = second_rf(op, s, u1, W, batched_cot=True)
            for b in range(B):
                c.close(inner(_at(got, b), u2), inner(_at(ref, b), u1),
                        f"reverse-over-forward, batched cotangents [{b}] vs FD")
    elif mode == "forward-over-reverse":
        if not batched:
            c.close(inner(second_fr(op, s, u2, w), u1), inner(w, c.ref("FF(u2;u1)")),
                    "forward-over-reverse vs FD of the forward-mode JVP")
        else:
            got = second_fr(op, s, U, w, batched_tan=True)
            ref = c.ref("FF(u1;U)")
            for b in range(B):
                c.close(inner(_at(got, b), u1), inner(w, _at(ref, b)),
                        f"forward-over-reverse, batched tangents [{b}] vs FD")
            got = second_fr(op, s, u2, W, batched_cot=True)
            for b in range(B):
                c.close(inner(_at(got, b), u1), inner(_at(W, b), c.ref("FF(u2;u1)")),
                        f"forward-over-reverse, batched cotangents [{b}] vs FD")
    elif mode == "reverse-over-reverse":
        if not batched:
            c.close(inner(second_rr(op, s, w, u1), u2), inner(w, c.ref("FF(u2;u1)")),
                    "reverse-over-reverse vs FD of the forward-mode JVP")
        else:
            ref = c.ref("FF(u2;U)")
            got = inner(second_rr(op, s, W, U, batched_first=True), u2)
            want = [inner(_at(W, b), _at(ref, b)) for b in range(B)]
            c.close(got, (sum(x[0] for x in want), sum(x[1] for x in want)),
                    "reverse-over-reverse, batched first cotangents vs FD")
            got = second_rr(op, s, w, U, batched_second=True)
            for b in range(B):
                c.close(inner(_at(got, b), u2), inner(w, _at(ref, b)),
                        f"reverse-over-reverse, batched second cotangents [{b}] vs FD")
    else:
        raise ValueError(mode)
    record(op, dtype, ("batched-" if batched else "") + mode)


# ---------------------------------------------------------------- third order
#
# T(w; a, b, c) = Re<w, f'''(x)[a, b, c]> (symmetric in a, b, c) by three compositions of
# three modes, each against finite differences (along c) of a second derivative computed
# in another composition.

THIRD = ("forward-over-forward-over-reverse", "reverse-over-forward-over-forward",
         "reverse-over-reverse-over-reverse")


def third_ffr(op: OpInfo, s: Sample, w: list[Any], a: list[Any], b: list[Any]) -> list[Any]:
    """A backward pass inside two nested dual levels: d/db d/da of grad Re<w, f>."""
    xs = [da.as_tensor(s.args[i]).detach().requires_grad_(True) for i in s.diff]
    with da.dual_level() as outer:
        d1 = [da.make_dual(x, da.as_tensor(u)) for x, u in zip(xs, b, strict=True)]
        with da.dual_level() as inner_:
            d2 = [da.make_dual(x, da.as_tensor(u)) for x, u in zip(d1, a, strict=True)]
            outs = run(op, s, _with(s, d2))
            gs = _grads(outs, d2, w)
            ts = [da.unpack_dual(g, level=inner_).tangent for g in gs]
        tts = [None if t is None else da.unpack_dual(t, level=outer).tangent for t in ts]
    return [_tangent_np(t, x, ()) for t, x in zip(tts, xs, strict=True)]


def third_rff(op: OpInfo, s: Sample, w: list[Any], a: list[Any], b: list[Any]) -> list[Any]:
    """The gradient of Re<w, f''(x)[a, b]>, the second derivative by nested dual levels."""
    xs, tts = nested_forward(op, s, a, b, rg=True)
    return [to_np(g) for g in _grads(tts, xs, w)]


def third_rrr(op: OpInfo, s: Sample, w: list[Any], a: list[Any], b: list[Any]) -> list[Any]:
    """Three backward passes, the first two with create_graph=True."""
    xs, args = leaves(s)
    g1 = _grads(run(op, s, args), xs, w, create_graph=True)
    g2 = _grads(g1, xs, a, create_graph=True)
    return [to_np(g) for g in _grads(g2, xs, b)]


def check_third(op: OpInfo, dtype: str, s: Sample, mode: str) -> None:
    c = Second.of(op, dtype, s)
    rng = rng_for(op, dtype, s, "third")
    u3 = [rand_like(rng, s.args[i]) for i in s.diff]
    w, u1, u2 = c.w, c.u1, c.u2
    ww = _wide(w)

    def ff(sh: Sample) -> float:  # S(w; u1, u2) by forward-over-forward
        return inner(ww, second_ff(op, sh, _wide(u1), _wide(u2)))[0]

    def rr(sh: Sample) -> float:  # S(w; u1, u2) by reverse-over-reverse
        return inner(second_rr(op, sh, ww, _wide(u1)), _wide(u2))[0]

    if mode == THIRD[0]:
        got, ref, via = inner(third_ffr(op, s, w, u1, u2), u3), ff, "forward-over-forward"
    elif mode == THIRD[1]:
        got, ref, via = inner(third_rff(op, s, w, u1, u2), u3), rr, "reverse-over-reverse"
    elif mode == THIRD[2]:
        got, ref, via = inner(third_rrr(op, s, w, u1, u2), u3), ff, "forward-over-forward"
    else:
        raise ValueError(mode)
    f = {k: ref(_shifted(s, u3, k)) for k in (-2, -1, 1, 2)}
    want = (-f[2] + 8 * f[1] - 8 * f[-1] + f[-2]) / (12 * FD_H)
    scalar_close(got[0], want, got[1] + abs(want), c.tol,
                 f"{mode} vs FD of the second derivative by {via}")
    record(op, dtype, mode)


# ---------------------------------------------------------------- nested functional transforms
#
# On f(x) = Re<w, op(x, ...)> of the entry's first differentiable input x (the others are
# constants the function closes over), each nesting gives S(w; a, b) (or T(w; a, b, c)),
# checked against finite differences of forward-mode JVPs (FF) or of the forward-over-forward
# second derivative. jacfwd differentiates along real unit vectors and jacrev gives the
# conjugate-Wirtinger gradient of each output's real part, so for complex inputs the
# directions a jacfwd (or an inner jacrev) is contracted with are real.

TRANSFORMS = ("grad-of-grad", "jacfwd-of-jacrev", "jacrev-of-jacfwd",
              "jacrev-of-jacrev-of-jacrev", "hvp-create-graph")


def _loss(op: OpInfo, s: Sample, w: list[np.ndarray]) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        outs = run(op, s, _with(s, [x]))
        tot = 0.0
        for o, c in zip(outs, w, strict=True):
            tot = tot + dnp.sum(dnp.real(dnp.conj(da.as_tensor(c)) * o))
        return da.as_tensor(tot) * 1.0 if not isinstance(tot, da.Tensor) else tot

    return f


def _re(a: Any, b: Any) -> float:
    return float(np.real(np.vdot(np.asarray(a), np.asarray(b))))


def check_transform(op: OpInfo, dtype: str, s: Sample, mode: str) -> None:
    import dualad.functional as F

    s = dataclasses.replace(s, diff=s.diff[:1])
    rng = rng_for(op, dtype, s, "transforms")
    x0 = s.args[s.diff[0]]
    w = cotangents(op, s, rng)
    a, b, c = (rand_like(rng, x0) for _ in range(3))
    ar, br = (np.real(u).astype(x0.dtype) for u in (a, b))
    f = _loss(op, s, w)
    n = x0.size
    tol = tol_for(dtype, w)

    def S(p: np.ndarray, q: np.ndarray) -> float:  # reference: FD of forward-mode JVPs
        return inner(w, fd_forward(op, s, [q], [p]))[0]

    def T(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> float:  # FD of forward-over-forward
        ww = _wide(w)
        vals = {k: inner(ww, second_ff(op, _shifted(s, [r], k), _wide([p]), _wide([q])))[0]
                for k in (-2, -1, 1, 2)}
        return (-vals[2] + 8 * vals[1] - 8 * vals[-1] + vals[-2]) / (12 * FD_H)

    def grid(t: Any, k: int) -> np.ndarray:
        return np.asarray(to_np(t)).reshape((n,) * k)

    if mode == "grad-of-grad":
        gg = F.grad(lambda x: dnp.sum(dnp.real(dnp.conj(da.as_tensor(a)) * F.grad(f)(x))))(x0)
        got, want = _re(to_np(gg), b), S(a, b)
    elif mode == "jacfwd-of-jacrev":
        H = grid(F.jacfwd(F.jacrev(f))(x0), 2)
        got, want = _re(a.ravel(), H @ br.ravel()), S(a, br)
    elif mode == "jacrev-of-jacfwd":
        H = grid(F.jacrev(F.jacfwd(f))(x0), 2)
        got, want = _re(np.conj(H) @ b.ravel(), ar.ravel()), S(ar, b)
    elif mode == "jacrev-of-jacrev-of-jacrev":
        J3 = grid(F.jacrev(F.jacrev(F.jacrev(f)))(x0), 3)
        got = float(np.real(np.einsum("i,j,ijk,k->", ar.ravel(), br.ravel(), np.conj(J3),
                                      c.ravel())))
        want = T(ar, br, c)
    elif mode == "hvp-create-graph":
        x = da.tensor(x0, requires_grad=True)
        _, hv = F.hvp(f, x, da.as_tensor(a), create_graph=True)
        got, want = _re(to_np(hv), b), S(a, b)
        scalar_close(got, want, abs(got) + abs(want) + np.abs(to_np(hv)).sum(), tol,
                     "hvp vs FD of the forward-mode JVP")
        # (a result not connected to x differentiates to zero: right only for a quadratic f)
        hb = dnp.sum(dnp.real(dnp.conj(da.as_tensor(b)) * hv))
        g = to_np(da.grad(hb, [x], allow_unused=True, materialize_grads=True)[0]
                  ) if hb.requires_grad else np.zeros_like(x0)
        got, want = _re(g, c), T(a, b, c)
    else:
        raise ValueError(mode)
    scalar_close(got, want, abs(got) + abs(want), tol, f"{mode} vs finite differences")
    record(op, dtype, mode)


