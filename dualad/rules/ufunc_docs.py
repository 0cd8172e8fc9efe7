"""The docstrings of the elementwise primitives (``dualad.numpy.sin``, ``dnp.add``, ...).

Each is assembled from two tables: the derivative formulas of ``elementwise`` (what the
docstring says the derivative is) and ``EXAMPLES`` below, one line a primitive: the
example's inputs, the value dualad prints, and the gradient of the value's sum in each
input (none for a primitive whose result carries no derivative). ``document`` sets, at
import, the function that writes it, run on its first read (``elementwise._Doc``). The
expected texts are written out, never computed by running dualad: the doctests
(``tests/docs/test_doctests.py``) compare dualad with them, and a test there checks each
value against NumPy and each gradient against SymPy's derivative.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from typing import Any

import numpy as np

# name: (inputs, the value as printed, the gradient of its sum in each input as printed)
EXAMPLES: dict[str, tuple[tuple[list[Any], ...], str, tuple[str, ...]]] = {
    "negative": (([1.0, -2.0],), "[-1.,  2.]", ("[-1., -1.]",)),
    "positive": (([1.0, -2.0],), "[ 1., -2.]", ("[1., 1.]",)),
    "exp": (([0.0, 1.0],), "[1.        , 2.71828183]", ("[1.        , 2.71828183]",)),
    "exp2": (([0.0, 1.0],), "[1., 2.]", ("[0.69314718, 1.38629436]",)),
    "expm1": (([0.0, 1.0],), "[0.        , 1.71828183]", ("[1.        , 2.71828183]",)),
    "log": (([1.0, 2.0],), "[0.        , 0.69314718]", ("[1. , 0.5]",)),
    "log2": (([1.0, 2.0],), "[0., 1.]", ("[1.44269504, 0.72134752]",)),
    "log10": (([1.0, 10.0],), "[0., 1.]", ("[0.43429448, 0.04342945]",)),
    "log1p": (([0.0, 1.0],), "[0.        , 0.69314718]", ("[1. , 0.5]",)),
    "sqrt": (([1.0, 4.0],), "[1., 2.]", ("[0.5 , 0.25]",)),
    "cbrt": (([1.0, 8.0],), "[1., 2.]", ("[0.33333333, 0.08333333]",)),
    "square": (([1.0, 3.0],), "[1., 9.]", ("[2., 6.]",)),
    "reciprocal": (([1.0, 2.0],), "[1. , 0.5]", ("[-1.  , -0.25]",)),
    "sin": (([0.0, 1.0],), "[0.        , 0.84147098]", ("[1.        , 0.54030231]",)),
    "cos": (([1.0, 2.0],), "[ 0.54030231, -0.41614684]", ("[-0.84147098, -0.90929743]",)),
    "tan": (([0.0, 1.0],), "[0.        , 1.55740772]", ("[1.        , 3.42551882]",)),
    "arcsin": (([0.0, 0.5],), "[0.        , 0.52359878]", ("[1.        , 1.15470054]",)),
    "arccos": (([0.0, 0.5],), "[1.57079633, 1.04719755]", ("[-1.        , -1.15470054]",)),
    "arctan": (([0.0, 1.0],), "[0.        , 0.78539816]", ("[1. , 0.5]",)),
    "sinh": (([0.0, 1.0],), "[0.        , 1.17520119]", ("[1.        , 1.54308063]",)),
    "cosh": (([0.0, 1.0],), "[1.        , 1.54308063]", ("[0.        , 1.17520119]",)),
    "tanh": (([0.0, 1.0],), "[0.        , 0.76159416]", ("[1.        , 0.41997434]",)),
    "arcsinh": (([0.0, 1.0],), "[0.        , 0.88137359]", ("[1.        , 0.70710678]",)),
    "arccosh": (([2.0, 3.0],), "[1.3169579 , 1.76274717]", ("[0.57735027, 0.35355339]",)),
    "arctanh": (([0.0, 0.5],), "[0.        , 0.54930614]", ("[1.        , 1.33333333]",)),
    "sinc": (([0.5, 1.5],), "[ 0.63661977, -0.21220659]", ("[-1.27323954,  0.14147106]",)),
    "deg2rad": (([90.0, 180.0],), "[1.57079633, 3.14159265]", ("[0.01745329, 0.01745329]",)),
    "rad2deg": (([1.0, 2.0],), "[ 57.29577951, 114.59155903]", ("[57.29577951, 57.29577951]",)),
    "fabs": (([-1.0, 2.0],), "[1., 2.]", ("[-1.,  1.]",)),
    "floor": (([0.5, 1.5],), "[0., 1.]", ("[0., 0.]",)),
    "ceil": (([0.5, 1.5],), "[1., 2.]", ("[0., 0.]",)),
    "trunc": (([-1.5, 1.5],), "[-1.,  1.]", ("[0., 0.]",)),
    "rint": (([0.4, 1.6],), "[0., 2.]", ("[0., 0.]",)),
    "add": (([1.0, 2.0], [3.0, 4.0]), "[4., 6.]", ("[1., 1.]", "[1., 1.]")),
    "subtract": (([1.0, 2.0], [3.0, 4.0]), "[-2., -2.]", ("[1., 1.]", "[-1., -1.]")),
    "multiply": (([1.0, 2.0], [3.0, 4.0]), "[3., 8.]", ("[3., 4.]", "[1., 2.]")),
    "divide": (([1.0, 2.0], [4.0, 8.0]), "[0.25, 0.25]", ("[0.25 , 0.125]", "[-0.0625 , -0.03125]")),
    "power": (([1.0, 2.0], [2.0, 3.0]), "[1., 8.]", ("[ 2., 12.]", "[0.        , 5.54517744]")),
    "float_power": (([1.0, 2.0], [2.0, 3.0]), "[1., 8.]", ("[ 2., 12.]", "[0.        , 5.54517744]")),
    "maximum": (([1.0, 2.0], [3.0, 2.0]), "[3., 2.]", ("[0. , 0.5]", "[1. , 0.5]")),
    "minimum": (([1.0, 2.0], [3.0, 2.0]), "[1., 2.]", ("[1. , 0.5]", "[0. , 0.5]")),
    "fmax": (([1.0, np.nan], [3.0, 2.0]), "[3., 2.]", ("[0., 0.]", "[1., 1.]")),
    "fmin": (([1.0, np.nan], [3.0, 2.0]), "[1., 2.]", ("[1., 0.]", "[0., 1.]")),
    "copysign": (([1.0, 2.0], [-1.0, 1.0]), "[-1.,  2.]", ("[-1.,  1.]", "[0., 0.]")),
    "hypot": (([3.0, 6.0], [4.0, 8.0]), "[ 5., 10.]", ("[0.6, 0.6]", "[0.8, 0.8]")),
    "arctan2": (([1.0, 1.0], [1.0, 0.0]), "[0.78539816, 1.57079633]", ("[0.5, 0. ]", "[-0.5, -1. ]")),
    "logaddexp": (([0.0, 1.0], [0.0, 1.0]), "[0.69314718, 1.69314718]", ("[0.5, 0.5]", "[0.5, 0.5]")),
    "logaddexp2": (([0.0, 1.0], [0.0, 1.0]), "[1., 2.]", ("[0.5, 0.5]", "[0.5, 0.5]")),
    "remainder": (([5.0, -5.0], [3.0, 3.0]), "[2., 1.]", ("[1., 1.]", "[-1.,  2.]")),
    "fmod": (([5.0, -5.0], [3.0, 3.0]), "[ 2., -2.]", ("[1., 1.]", "[-1.,  1.]")),
    "equal": (([1.0, 2.0], [1.0, 3.0]), "[ True, False]", ()),
    "not_equal": (([1.0, 2.0], [1.0, 3.0]), "[False,  True]", ()),
    "less": (([1.0, 3.0], [2.0, 2.0]), "[ True, False]", ()),
    "less_equal": (([1.0, 3.0], [2.0, 2.0]), "[ True, False]", ()),
    "greater": (([1.0, 3.0], [2.0, 2.0]), "[False,  True]", ()),
    "greater_equal": (([2.0, 1.0], [2.0, 2.0]), "[ True, False]", ()),
    "isfinite": (([1.0, np.inf],), "[ True, False]", ()),
    "isnan": (([1.0, np.nan],), "[False,  True]", ()),
    "isinf": (([1.0, -np.inf],), "[False,  True]", ()),
    "signbit": (([-1.0, 1.0],), "[ True, False]", ()),
    "logical_or": (([0.0, 1.0], [0.0, 0.0]), "[False,  True]", ()),
    "logical_xor": (([1.0, 1.0], [0.0, 1.0]), "[ True, False]", ()),
    "logical_not": (([0.0, 1.0],), "[ True, False]", ()),
    "bitwise_and": (([12, 5], [10, 3]), "[8, 1]", ()),
    "bitwise_or": (([12, 5], [10, 3]), "[14,  7]", ()),
    "bitwise_xor": (([12, 5], [10, 3]), "[6, 6]", ()),
    "invert": (([0, 5],), "[-1, -6]", ()),
    "floor_divide": (([5.0, -5.0], [3.0, 3.0]), "[ 1., -2.]", ()),
    "abs": (([(3+4j), (-2+0j)],), "[5., 2.]", ("[ 0.6+0.8j, -1. +0.j ]",)),
    "sign": (([-2.0, 3.0],), "[-1.,  1.]", ("[0., 0.]",)),
    "angle": (([1j, (1+1j)],), "[1.57079633, 0.78539816]", ("[-1. +0.j , -0.5+0.5j]",)),
}

# How a formula's internal names read in a docstring.
_SPELLED = {"PI": "pi", "LN2": "log(2)", "LN10": "log(10)", "DEG": "pi / 180",
            "RAD": "180 / pi", "TWO_OVER_SQRT_PI": "2 / sqrt(pi)"}
_CALLS = {"powm1": "a ** (b - 1)", "log_as": "log(a)", "powlog": "log(a) * y",
          "recip": "1 / b"}


class _Readable(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> Any:
        spelled = _SPELLED.get(node.id)
        return ast.parse(spelled, mode="eval").body if spelled else node

    def visit_Call(self, node: ast.Call) -> Any:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name in _CALLS:
            return ast.parse(_CALLS[name], mode="eval").body
        return self.generic_visit(node)


def readable(src: str) -> str:
    """A derivative formula of the rule table as a reader writes it (``y * LN2`` ->
    ``y * log(2)``; ``powm1(a, b)``, ``a ** (b - 1)`` but 0 at ``a == b == 0``, as
    ``a ** (b - 1)``)."""
    return ast.unparse(_Readable().visit(ast.parse(src, mode="eval")))


def _literal(v: Any) -> str:
    if isinstance(v, float) and v != v:
        return "np.nan"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(v)


def _derivative(p: Any, args: tuple[str, ...]) -> str:
    if p.nondiff:
        return "Its result carries no derivative: it is boolean, or integer-valued."
    if p.formulas:
        # (as literals: a formula's ``*`` and ``|`` are markup to reStructuredText)
        terms = [f"``d/d{a} = {readable(f)}``" for a, f in zip(args, p.formulas, strict=True)]
        reads_y = any("out" in r for r in p.reads)
        return "Derivative: " + "; ".join(terms) + (" (``y`` is the result)." if reads_y else ".")
    # a hand-written R-linear rule (abs, sign, angle) states itself in its first line
    return "Derivative: " + (p.jvp.__doc__ or "").strip().split("\n")[0]


def docstring(p: Any, where: str, call: str, example: Any, aliases: tuple[str, ...] = (),
              setup: tuple[str, ...] = ()) -> str:
    """The docstring of primitive ``p`` of ``where`` (``"numpy"``), with ``example`` (an
    entry of ``EXAMPLES``, or None) calling it as ``{call}.{name}`` after ``setup``;
    ``aliases``: its other names."""
    args = ("x",) if p.nin == 1 else ("a", "b")
    lines = [f"``{where}.{p.name}``, elementwise.", "",
             *textwrap.wrap(_derivative(p, args), 88, break_long_words=False)]
    if aliases:
        lines += ["", "Also " + ", ".join(f"``{call}.{a}``" for a in aliases) + "."]
    lines += ["", "Parameters", "----------",
              f"{', '.join(args)} : array_like (Tensors, arrays, Python numbers)",
              "", "Returns", "-------",
              "Tensor" + (" (no derivative)" if p.nondiff else "")]
    if example is None:
        return "\n".join(lines)
    inputs, value, grads = example
    lines += ["", "Examples", "--------"]
    lines += [f">>> {s}" for s in setup]
    for a, v in zip(args, inputs, strict=True):
        # (integer inputs, of the bitwise functions, cannot require grad)
        grad = "" if all(e.__class__ is int for e in v) else ", requires_grad=True"
        lines.append(f">>> {a} = dualad.tensor([{', '.join(map(_literal, v))}]{grad})")
    called = f"{call}.{p.name}({', '.join(args)})"
    if p.nondiff:
        lines += [f">>> {called}  # (no grad_fn: nothing to differentiate)", f"tensor({value})"]
        return "\n".join(lines)
    from ..reverse.graph import backward_name  # (read now: the core imports no reverse)

    lines += [f">>> y = {called}", ">>> y", f"tensor({value}, grad_fn=<{backward_name(p.name)}>)",
              ">>> y.sum().backward()"]
    for a, g in zip(args, grads, strict=True):
        lines += [f">>> {a}.grad", f"tensor({g})"]
    return "\n".join(lines)


def document(ns: dict[str, Any], where: str, call: str, examples: dict[str, Any],
             setup: tuple[str, ...] = ()) -> None:
    """Give every elementwise primitive in namespace ``ns`` (a module's globals) its
    docstring, with its entry of ``examples``, naming the other names it has there."""
    from .elementwise import Ufunc

    names: dict[int, list[str]] = {}
    for n, v in ns.items():
        if isinstance(v, Ufunc) and not n.startswith("_"):
            names.setdefault(id(v), []).append(n)
    for n, v in ns.items():
        if isinstance(v, Ufunc) and n == v.name:
            v.__doc__ = functools.partial(docstring, v, where, call, examples.get(n),
                                          tuple(a for a in names[id(v)] if a != n), setup)
