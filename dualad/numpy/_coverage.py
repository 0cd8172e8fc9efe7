"""The NumPy coverage table: what dualad does with every public NumPy callable.

Every public callable of ``numpy``, ``numpy.linalg`` and ``numpy.fft``, every
public method and attribute of ``numpy.ndarray`` and its operators gets one
status:

- ``differentiable``: ``dualad.numpy`` has it, with a derivative rule of its own
  (``rule``) or as a composition of functions that have one (``composition``);
  NumPy's own function called on a Tensor dispatches there.
- ``non-differentiable``: an integer, boolean, text or dtype result; it runs on
  the Tensor's values and gives no derivative (NumPy's function called on a
  Tensor passes through).
- ``refused``: called on a Tensor it raises ``TypeError`` naming itself and the
  reason given here (no silent loss of derivatives).
- ``not an array function``: types, exceptions, configuration, file I/O,
  factories with no array argument.

``python tools/numpy_coverage.py`` writes the table as Markdown (``docs/numpy_coverage.md``
is that output); ``tests/numpy/test_coverage.py`` fails when NumPy gains a name the table
does not classify.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

DIFF = "differentiable"
NONDIFF = "non-differentiable"
REFUSED = "refused"
OTHER = "not an array function"

# -- dualad.numpy names whose results carry no derivative -------------------------------------

NONDIFF_NAMES = {
    "argmax", "argmin", "argsort", "argwhere", "nonzero", "count_nonzero", "nanargmax",
    "nanargmin", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "isfinite", "isnan", "isinf", "isposinf", "isneginf", "signbit", "iscomplex", "isreal",
    "iscomplexobj", "isrealobj", "floor_divide", "logical_and", "logical_or", "logical_xor",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "isclose", "allclose",
    "array_equal", "any", "all", "shape", "ndim", "size",
    "linalg.matrix_rank", "fft.fftfreq", "fft.rfftfreq",
}
# primitives with a JVP rule of their own (the rest of dualad.numpy composes them)
RULE_NAMES = {
    "linalg.inv", "linalg.solve", "linalg.det", "linalg.slogdet", "linalg.cholesky",
    "linalg.eigh", "linalg.eigvalsh", "linalg.eig", "linalg.eigvals", "linalg.svd",
    "linalg.svdvals", "linalg.qr", "linalg.pinv", "linalg.norm", "linalg.vector_norm",
    "matmul", "einsum", "sum", "prod", "cumsum", "cumprod", "amax", "amin", "max", "min",
    "concatenate", "concat", "reshape", "transpose", "permute_dims", "broadcast_to", "where",
    "astype", "pad", "tril", "triu", "diagonal",
}

# -- NumPy functions that pass through with no derivative (not in dualad.numpy) ---------------

_INT = "integer result"
_BOOL = "boolean result"
_DT = "dtype / type query"
_TXT = "text result"
PASS: dict[str, str] = {
    **{f"numpy.{n}": _INT for n in (
        "argpartition", "digitize", "flatnonzero", "lexsort", "searchsorted",
        "ravel_multi_index", "unravel_index", "diag_indices", "diag_indices_from",
        "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from",
        "mask_indices", "indices", "ix_", "packbits", "unpackbits", "bitwise_and",
        "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert", "invert", "left_shift",
        "right_shift", "bitwise_left_shift", "bitwise_right_shift", "bitwise_count", "gcd",
        "lcm", "einsum_path")},
    **{f"numpy.{n}": _BOOL for n in (
        "array_equiv", "isin", "isfortran", "isscalar", "iterable", "may_share_memory",
        "shares_memory")},
    **{f"numpy.{n}": _DT for n in (
        "can_cast", "common_type", "min_scalar_type", "broadcast_shapes", "mintypecode", "promote_types",
        "result_type", "isdtype", "issubdtype", "typename")},
    **{f"numpy.{n}": _TXT for n in ("array2string", "array_repr", "array_str")},
}

# -- refused on Tensors, with the reason ----------------------------------------------------

_INPLACE = ("writes into its argument in place, which NumPy does behind dualad's back; "
            "assign with t[idx] = value (tracked) or use dualad.numpy.where")
_SETS = ("its output's shape depends on the values (a set operation); compute the indices "
         "on t.detach() (e.g. numpy.unique(..., return_index=True)) and index t with them")
_HIST = ("bin counts are piecewise constant in the data and its weights= would need a "
         "scatter-add rule dualad does not have; call it on t.detach()")
_PYLOOP = ("calls a Python function through NumPy's own loop and writes the results into an "
           "ndarray; call the function on the Tensor directly (vectorised) and combine with "
           "dualad.numpy.stack / where / select")
_MATRIX = "numpy.matrix is not supported; use 2-D Tensors"
_ULP = "steps by units in the last place: piecewise constant, no useful derivative"
REFUSED_REASONS: dict[str, str] = {
    **{f"numpy.{n}": _INPLACE for n in (
        "copyto", "place", "put", "putmask", "put_along_axis", "fill_diagonal")},
    **{f"numpy.{n}": _SETS for n in (
        "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
        "intersect1d", "setdiff1d", "setxor1d", "union1d", "trim_zeros")},
    **{f"numpy.{n}": _HIST for n in (
        "histogram", "histogram2d", "histogramdd", "histogram_bin_edges", "bincount")},
    **{f"numpy.{n}": _PYLOOP for n in ("apply_along_axis", "apply_over_axes", "piecewise",
                                        "vectorize", "frompyfunc")},
    "numpy.asmatrix": _MATRIX,
    "numpy.bmat": _MATRIX,
    "numpy.nextafter": _ULP,
    "numpy.spacing": _ULP,
    "numpy.row_stack": "deprecated alias of vstack (NumPy 2.0); use dualad.numpy.vstack",
}

# -- not functions of arrays -------------------------------------------------------------------

_IO = "file and buffer I/O or construction from non-array data"
_CFG = "configuration, introspection or printing"
_FACT = "factory with no array argument (returns constants)"
_DATE = "datetime functions (no floating-point values to differentiate)"
OTHER_NAMES: dict[str, str] = {
    **{f"numpy.{n}": _IO for n in (
        "from_dlpack", "frombuffer", "fromfile", "fromfunction", "fromiter", "fromregex",
        "fromstring", "genfromtxt", "load", "loadtxt", "save", "savetxt", "savez",
        "savez_compressed")},
    **{f"numpy.{n}": _CFG for n in (
        "get_include", "get_printoptions", "getbufsize", "geterr", "geterrcall", "info",
        "printoptions", "set_printoptions", "setbufsize", "seterr", "seterrcall", "show_config",
        "show_runtime", "test", "format_float_positional", "format_float_scientific",
        "base_repr", "binary_repr", "nested_iters")},
    **{f"numpy.{n}": _FACT for n in (
        "bartlett", "blackman", "hamming", "hanning", "kaiser", "identity", "tri")},
    **{f"numpy.{n}": _DATE for n in (
        "busday_count", "busday_offset", "is_busday", "datetime_as_string", "datetime_data",
        "isnat")},
    "numpy.linalg.test": _CFG,
    "numpy.fft.test": _CFG,
}

# -- ndarray methods, attributes and operators ---------------------------------------------------

_ATTR = "attribute (no derivative)"
NDARRAY: dict[str, tuple[str, str]] = {
    **{f"ndarray.{n}": (NONDIFF, _ATTR) for n in (
        "shape", "ndim", "size", "dtype", "itemsize", "nbytes", "device", "data", "item",
        "tolist", "argmax", "argmin", "argsort", "nonzero", "all", "any", "__bool__",
        "__float__", "__int__", "__complex__", "__index__", "__len__", "__eq__", "__ne__",
        "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__", "__xor__", "__rand__",
        "__ror__", "__rxor__", "__invert__", "__floordiv__", "__rfloordiv__", "argpartition",
        "searchsorted")},
    **{f"ndarray.{n}": (REFUSED, reason) for n, reason in {
        "base": "memory views are internal to a Tensor", "ctypes": "raw memory access",
        "flags": "memory layout is internal to a Tensor", "strides": "memory layout is "
        "internal to a Tensor", "flat": "a writable iterator over ndarray memory; use ravel()",
        "view": "reinterpreting memory would bypass derivative tracking; use astype",
        "byteswap": "raw memory access", "getfield": "raw memory access", "setfield":
        "raw memory access", "setflags": "memory layout is internal to a Tensor", "tobytes":
        "raw memory access; use t.detach().numpy().tobytes()", "tofile": _IO, "dump": _IO,
        "dumps": _IO, "to_device": "device transfer: build a Tensor on the other device",
        "resize": "resizes memory in place; use dualad.numpy.reshape", "put": _INPLACE,
        "__lshift__": _INT + " bit shifts: use t.detach().numpy()",
        "__rshift__": _INT + " bit shifts: use t.detach().numpy()",
        "__rlshift__": _INT + " bit shifts: use t.detach().numpy()",
        "__rrshift__": _INT + " bit shifts: use t.detach().numpy()",
        "__ilshift__": _INPLACE, "__irshift__": _INPLACE, "__iand__": _INPLACE,
        "__ior__": _INPLACE, "__ixor__": _INPLACE,
        "__delitem__": "arrays have no item deletion",
    }.items()},
}
NDARRAY.update({
    "ndarray.__contains__": (NONDIFF, "membership test through iteration (boolean result)"),
    "ndarray.__copy__": (DIFF, "copy.copy(t): new memory, as NumPy's, with t's history "
                               "and tangents (t.copy())"),
    "ndarray.__deepcopy__": (DIFF, "copy.deepcopy(t): new memory; a leaf gives a new leaf "
                                   "(torch's rule), a result the differentiable copy"),
})
# ndarray dunders that are protocol hooks, not operations on values
_HOOKS = {
    "__array__", "__array_finalize__", "__array_function__", "__array_interface__",
    "__array_namespace__", "__array_priority__", "__array_struct__", "__array_ufunc__",
    "__array_wrap__", "__class_getitem__", "__dlpack__", "__dlpack_device__", "__setstate__",
    "__reduce__", "__reduce_ex__", "__getstate__", "__sizeof__", "__iter__", "__repr__",
    "__str__", "__format__", "__hash__", "__new__", "__init__", "__doc__", "__class__",
}


# ================================================================== classification


def _public(mod: Any) -> list[str]:
    return sorted(n for n in dir(mod) if not n.startswith("_")
                  and callable(getattr(mod, n)) and not isinstance(getattr(mod, n),
                                                                   types.ModuleType))


def _dnp_status(key: str, obj: Any) -> tuple[str, str]:
    from ..core.dispatch import Primitive

    if key in NONDIFF_NAMES:
        return NONDIFF, "no derivative (integer, boolean or shape result)"
    if isinstance(obj, Primitive) or key in RULE_NAMES:
        kind = "elementwise formula" if isinstance(obj, Primitive) else "rule"
        return DIFF, kind
    if key.startswith("fft."):
        return DIFF, "linear rule"
    return DIFF, "composition"


def classify(qualname: str) -> tuple[str, str] | None:
    """(status, note) of a public NumPy name (``numpy.x``, ``numpy.linalg.x``,
    ``numpy.fft.x``, ``ndarray.x``), or None when the table does not know it."""
    import dualad.numpy as dnp

    from ..core.tensor import Tensor

    if qualname.startswith("ndarray."):
        n = qualname.split(".", 1)[1]
        if qualname in NDARRAY:
            return NDARRAY[qualname]
        if hasattr(Tensor, n):
            return DIFF, "method" if not n.startswith("__") else "operator"
        return None
    parts = qualname.split(".")
    mod: Any = np
    dmod: Any = dnp
    for p in parts[1:-1]:
        mod, dmod = getattr(mod, p), getattr(dmod, p, None)
    name = parts[-1]
    obj = getattr(mod, name, None)
    key = ".".join(parts[1:])
    if isinstance(obj, type):
        return OTHER, "type or class"
    if dmod is not None and name in getattr(dmod, "__all__", dir(dmod)) and callable(
            getattr(dmod, name, None)):
        return _dnp_status(key, getattr(dmod, name))
    if qualname in PASS:
        return NONDIFF, f"passes through ({PASS[qualname]})"
    if qualname in REFUSED_REASONS:
        return REFUSED, REFUSED_REASONS[qualname]
    if qualname in OTHER_NAMES:
        return OTHER, OTHER_NAMES[qualname]
    return None


def names() -> list[str]:
    """Every public NumPy callable the table must classify."""
    out = [f"numpy.{n}" for n in _public(np)]
    out += [f"numpy.linalg.{n}" for n in _public(np.linalg)]
    out += [f"numpy.fft.{n}" for n in _public(np.fft)]
    obj = set(dir(object))
    out += [f"ndarray.{n}" for n in sorted(dir(np.ndarray))
            if not n.startswith("_") or (n.startswith("__") and n not in _HOOKS
                                         and (n not in obj or n in ("__eq__", "__ne__", "__lt__",
                                                                    "__le__", "__gt__",
                                                                    "__ge__")))]
    return out


def table() -> list[tuple[str, str, str]]:
    rows = []
    for q in names():
        c = classify(q)
        rows.append((q, *(c or ("UNCLASSIFIED", ""))))
    return rows


def refusal(qualname: str) -> str | None:
    """The reason a NumPy function is refused on Tensors (None if it is not refused)."""
    c = classify(qualname)
    if c is None:
        return "not classified by dualad's coverage table"
    status, note = c
    return note if status in (REFUSED, OTHER) else None


def passes_through(qualname: str) -> bool:
    return qualname in PASS


def on_values(qualname: str) -> bool:
    """True if a refused NumPy function is refused only for its derivative (piecewise
    constant, or a result whose shape depends on the values): on Tensors that carry none
    (no ``requires_grad``, no live tangent) it runs on their values, as NumPy's own
    (``plt.hist(x, bins=t)`` calls ``numpy.histogram`` with the Tensor ``t``)."""
    return REFUSED_REASONS.get(qualname) in (_HIST, _SETS, _ULP)


def writes_first(qualname: str) -> bool:
    """True if a refused NumPy function is refused for writing into its first argument:
    into an ndarray, from Tensors that carry no derivative, it runs on their values
    (``numpy.full_like(a, t)`` copies ``t`` into a new ndarray with ``numpy.copyto``)."""
    return REFUSED_REASONS.get(qualname) == _INPLACE


def markdown() -> str:
    rows = table()
    counts: dict[str, int] = {}
    for _, s, _ in rows:
        counts[s] = counts.get(s, 0) + 1
    out = [
        "# NumPy coverage",
        "",
        "Generated by `python tools/numpy_coverage.py` from NumPy "
        f"{'.'.join(np.__version__.split('.')[:2])}; do not edit by hand. What dualad does "
        "with each public",
        "callable of `numpy`, `numpy.linalg`, `numpy.fft`, and each method, attribute and",
        "operator of `numpy.ndarray`, when given a Tensor:",
        "",
        "- **differentiable**: `dualad.numpy` has it (its own *rule*, an *elementwise",
        "  formula* of the rule table, or a *composition* of functions that have rules);",
        "  NumPy's own function called on a Tensor dispatches there. Each is checked in",
        "  forward, reverse, double-backward and batched modes by the op database.",
        "- **non-differentiable**: integer, boolean, text or dtype results; runs on the",
        "  values and gives no derivative.",
        "- **refused**: raises `TypeError` naming the function and the reason below.",
        "  Those refused for their derivative alone (set operations, histograms, steps",
        "  in the last place) run on the values of Tensors that carry none (no",
        "  `requires_grad`, no live tangent), as NumPy's own: `plt.hist(x, bins=t)`;",
        "  those that write in place, into an ndarray from such Tensors.",
        "- **not an array function**: types, configuration, I/O, constant factories.",
        "",
        "| status | count |",
        "|---|---|",
    ]
    for s in (DIFF, NONDIFF, REFUSED, OTHER):
        out.append(f"| {s} | {counts.get(s, 0)} |")
    for title, prefix in (("numpy", "numpy."), ("numpy.linalg", "numpy.linalg."),
                          ("numpy.fft", "numpy.fft."), ("ndarray", "ndarray.")):
        out += ["", f"## {title}", "", "| name | status | how / why |", "|---|---|---|"]
        for q, s, note in rows:
            rest = q[len(prefix):]
            if q.startswith(prefix) and "." not in rest:
                out.append(f"| `{q}` | {s} | {note.replace('|', '/')} |")
    return "\n".join(out) + "\n"
