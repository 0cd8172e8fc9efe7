"""The elementwise family's fast paths, made from the formula table of ``rules/elementwise.py``.

The general path computes a formula primitive's tangent with its Tensor-level JVP and
its VJP by transposing that JVP. Here the same formula strings give, for speed
(``docs/fast.md``):

- the array rules: the JVP on arrays (``fast_jvp``, ``_fast_unary``, ``_fast_binary``),
  whose result is an unmade dual, and the VJP on arrays (``fast_vjp``); the same for the
  linear primitives of one array (``fast_linear1``) and matmul (``fast_product``);
- generated code, compiled from string templates under file names of their own
  (``<dualad hot_sin>``, registered with ``linecache``): ``hot``, which does ``apply``'s
  work in one frame, and its heads ``call``, ``op`` and ``rop`` (``variant``); the array
  transpose ``transposed``; the engine's steps (``steps``, ``pair``).
  ``python -m dualad.codegen NAME`` prints them.

``install`` puts them in the slots the core offers (``accelerate`` for each formula
primitive, ``rules.register_operator`` for the operators), for the families switched on.
"""

from __future__ import annotations

import ast
import functools
import linecache
from typing import Any

import numpy as np

from .. import rules as _ops
from ..backends import namespace as _B
from ..backends.namespace import as_array as _as_array
from ..backends.namespace import like as _like
from ..core import dispatch as _D
from ..core import grad_mode as _gm
from ..core.dispatch import _wrap, apply
from ..core.tensor import Tensor
from ..rules import elementwise as _E
from ..rules import linear as _L
from ..rules.elementwise import (
    _FP,
    Ufunc,
    _quietly,
    _real_dtype,
    compile_formula,
    np_namespace,
)
from ..rules.linear import seed_product
from .recorders import recorder as _recorder
from .switch import on

_new = object.__new__
_ndarray = np.ndarray
_generic = np.generic
_state = _gm.state
_inference = _gm.inference_threads  # nonzero: some thread is in inference mode


_INPLACE_MIN = 1 << 14  # below this, an allocation is cheaper than the checks


def _unmade(L: int, y: Any, tt: Any) -> Tensor:
    """An unmade dual: the primal array as ``_data``, the tangent (bare or batched) as
    ``_stored_tangent``."""
    d = _new(Tensor)  # one object per op: this is the forward hot path
    d._data = y  # (one store a line: a tuple assignment of four targets builds a tuple)
    d._level = L
    d._stored_primal = None
    d._stored_tangent = tt
    d._batch_ndim = 0
    d._requires_grad = False
    d._node = None
    d._version_cell = None
    d._meta = None
    return d


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
    p = a._stored_primal
    if p is not None:
        if p._level or p._batch_ndim or (p._requires_grad and _state.grad and _state.tangent_grad):
            return None
        x = p._data
    else:
        x = a._data
    t = a._stored_tangent
    if t.__class__ is _ndarray:
        return x, t, 0
    if t._level or (t._requires_grad and _state.grad and _state.tangent_grad):
        return None
    return x, t._data, t._batch_ndim


def _operand(a: Any, L: int) -> Any:
    """(array, tangent or None, batch axes) of one operand at level L: a dual there, or a
    constant (a Python scalar, an array, an untracked Tensor); None if tracked below."""
    if a.__class__ is not Tensor:
        return a, None, 0
    if a._level == L:
        return _parts(a)
    if a._level or a._batch_ndim or (a._requires_grad and _state.grad and _state.tangent_grad):
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
    broadcasts of duals (and of reverse mode's dual cotangents) stay unmade this way."""
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
        d._version_cell = a._version_counter()  # shares its input's version counter)
    return d


def fast_product(prim: Any, args: Any, L: int, params: Any) -> Any:
    """The JVP of a product linear in each operand separately (matmul: ``_matmul_jvp``)
    on arrays, when one operand is a dual at L whose parts are plain and the other a
    constant: the product of the primal, and of the tangent, with the constant (the
    rule's one term, through the same implementation and batching rule); None otherwise.
    A Jacobian's first product (``A @ x`` on a seed) and its transpose stay unmade this way."""
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
    except ValueError as e:
        raise _D.mismatch(prim, xa, xb, e) from None
    except TypeError:  # (devices: the general way says which, or takes a host 0-d value
        return None  # beside a GPU array as a scalar)
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
    """An unmade dual Tensor from arrays (the tangent broadcast to batch + the primal's shape)."""
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
    return _unmade(L, y, _wrap(tt, nb) if nb or tt.__class__ is not _ndarray else tt)


# -- the hot path, generated per primitive from its formulas --------------------------
#
# ``apply`` first offers a call to the primitive's ``hot`` function: for the hot cases —
# plain Tensors (recorded if one requires grad), and unmade duals at one live level with
# untracked constants, a small result — it does all of ``apply``'s work in one frame,
# with the coefficient written inline from the same formula strings as the JVP. It
# returns None for anything else (keywords, nested or batched duals, other levels, a
# dual that requires grad), and ``apply`` takes the general way; a large or cast
# tangent goes to the general array rule with the primal already computed.

_PLAIN_RESULT = """
        d = _new(Tensor)
        d._data = y
        d._level = 0
        d._batch_ndim = 0
        d._version_cell = None
        d._meta = None
        if rg and _state.grad:
            _record(prim, args, d)  # (which sets _requires_grad, _node and _out_nr)
            return d
        d._requires_grad = False
        d._node = None
        if _inference[0] and _state.inference:
            _mark_inference(d)
        elif rg:
            d._why = "no_grad"  # (grad mode is off: for backward's error)
        return d"""

_UNMADE_RESULT = """
            d = _new(Tensor)
            d._data = y
            d._stored_tangent = tt
            d._level = L
            d._stored_primal = None
            d._batch_ndim = 0
            d._requires_grad = False
            d._node = None
            d._version_cell = None
            d._meta = None
            if rg and _state.grad:
                _record(prim, args, d)  # (the primal alone: tangents untracked)
            elif _inference[0] and _state.inference:
                _mark_inference(d)
            elif rg:
                d._why = "no_grad"  # (grad mode is off: for backward's error)
            return d"""

_UNARY_HOT = """{head}
    if A.__class__ is not Tensor or A._batch_ndim:
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
        rg = A._requires_grad{plain}
    rg = A._requires_grad
    if L not in _live or (rg and _state.tangent_grad) or A._stored_primal is not None or \\
            A._stored_tangent.__class__ is not _ndarray:
        return {decline}  # (a level that exited, a placeholder, a nested dual, or one
        # whose tangent would be recorded)
    try:
        y = impl(x)
    except TypeError:  # (as above)
        return {decline}
    if y.__class__ is _ndarray and y.size < _INPLACE_MIN:
        tt = {tt}
        if tt.__class__ is _ndarray and tt.dtype is y.dtype:{unmade}
    return _finished(prim, args, _unary_tangent(prim, x, A._stored_tangent, 0, y, L), rg, _record)
"""

_OPERAND = """
    if {T}.__class__ is Tensor:
        if {T}._batch_ndim:
            return {decline}
        {x} = {T}._data
        {L} = {T}._level
        if {L}:
            if {L} not in _live or ({T}._requires_grad and _state.tangent_grad) or \\
                    {T}._stored_primal is not None \\
                    or {T}._stored_tangent.__class__ is not _ndarray:
                return {decline}
            {g} = {T}._stored_tangent
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
        except ValueError as e:  # (free until raised: name the operation and the shapes)
            raise _mismatch(prim, a, b, e) from None
        except TypeError:  # (two devices, or a host 0-d value beside a GPU array: the
            return {decline}  # general way says which, or takes the value as a scalar)
        if y.__class__ is not _ndarray and isinstance(y, _generic):
            y = _asarray(y)
        rg = (A.__class__ is Tensor and A._requires_grad) or \\
            (B.__class__ is Tensor and B._requires_grad){plain}
    if (LA and LB and LA != LB) or (
            not LA and A.__class__ is Tensor and A._requires_grad) or (
            not LB and B.__class__ is Tensor and B._requires_grad):
        return {decline}
    # (a dual that requires grad: its primal is recorded)
    rg = (LA and A._requires_grad) or (LB and B._requires_grad)
    try:
        y = impl(a, b)
    except ValueError as e:
        raise _mismatch(prim, a, b, e) from None
    except TypeError:  # (devices: the general way)
        return {decline}
    if y.__class__ is _ndarray and y.size < _INPLACE_MIN:
        if gb is None:
            tt = {ta}
        elif ga is None:
            tt = {tb}
        else:{tab}
        if tt.__class__ is _ndarray and tt.dtype is y.dtype and tt.shape == y.shape:{unmade}
    return _finished(prim, args, _binary_tangent(prim, a, ga, b, gb, 0, y, L), rg, _record)
"""


def _first_record(ns: dict[str, Any], prim: Any, args: Any, out: Any) -> None:
    """A hot function's ``_record`` until its first recorded call, which binds there (in
    the function's namespace ``ns``) the recorder reverse mode makes for its primitive
    (``recorders.recorder``)."""
    rec = ns["_record"] = _recorder(prim)
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
        return _UNARY_HOT.format(head=head, decline=decline, tt=_term_src(srcs[0], "A._stored_tangent"),
                                 plain=_PLAIN_RESULT, unmade=_UNMADE_RESULT)
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
        unmade=_UNMADE_RESULT,
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
    hot.variant = functools.partial(variant, prim)  # (for ``python -m dualad.codegen``)
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
        g, nb = ct._data, ct._batch_ndim
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


def accelerate(p: Ufunc) -> None:
    """Give the formula primitive ``p`` its fast paths (those of the families switched on)."""
    srcs = p.formulas
    p.kernels = [compile_formula(s, len(srcs), np_namespace)[0] for s in srcs]
    if on("fast"):
        p.fast = {1: _fast_unary, 2: _fast_binary}.get(len(srcs), fast_jvp)
    if on("hot"):
        p.hot = _specialized_hot(p, p.ufunc, srcs)
    if on("transpose"):
        p.transposed = _specialized_transposed(p.name, srcs)
    p.steps = _steps(p.name, srcs, p.reads)
    p.pair = _pair(p.name, srcs, p.reads)
    if p.hot is not None:
        _called_directly(p)


def install() -> None:
    """Install the elementwise family's fast paths: each formula primitive's (now and as
    made), the forward JVP on arrays of the linear primitives of one array and of
    matmul, and the Tensor operators generated from the hot path."""
    _E.accelerate_with(accelerate)
    if on("fast"):
        for p in _L.LINEAR1:
            p.fast = fast_linear1
        _L.matmul.fast = fast_product
    if on("hot"):
        for name, (prim, reflected) in _ops.OPERATORS.items():
            if prim.hot is not None:
                _ops.register_operator(name, variant(prim, "rop" if reflected else "op"))
