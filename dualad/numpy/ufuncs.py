"""Elementwise functions: NumPy's ufuncs, their aliases, and the ones with extra arguments.

The ufuncs themselves are the elementwise primitives of the rule table
(``dualad.numpy.sin`` is the primitive itself); this module adds NumPy's other
names for them and the elementwise functions built from them (``clip``,
``round``, ``frexp``, ``i0``, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends.namespace import as_array as _as_array
from ..backends.namespace import to_kind as _to_kind
from ..core.dispatch import apply
from ..core.tensor import _make
from ..rules import elementwise as E
from ..rules import vocabulary as _V
from ..rules.elementwise import PRIMS as _P
from ..rules.vocabulary import _alias, _dtype_of, _raw, _seq, asarray_t, astype, conj, imag, real, where

# the elementwise primitives under their NumPy names (as the vocabulary binds them: a
# composition where NumPy's function does more than the primitive, as real and conj)
for _n in E.PRIMS:
    globals()[_n] = getattr(_V, _n)

__all__ = sorted({
    *E.PRIMS, "absolute", "acos", "acosh", "around", "asin", "asinh", "atan", "atan2", "atanh",
    "clip", "conjugate", "degrees", "divmod", "fix", "frexp", "heaviside", "i0", "ldexp", "mod",
    "modf", "nan_to_num", "pow", "radians", "real_if_close", "round", "true_divide",
})


absolute = E.PRIMS["abs"]
true_divide = E.PRIMS["divide"]
pow = E.PRIMS["power"]  # noqa: A001 - NumPy 2 spelling


def clip(a: Any, a_min: Any = None, a_max: Any = None) -> Any:
    """``numpy.clip``; the derivative passes where ``a_min <= a <= a_max`` (the bounds are
    ``a_min`` and ``a_max``, not NumPy 2's ``min=``/``max=``; no ``out=``).

    Examples
    --------
    >>> x = dualad.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    >>> y = dnp.clip(x, -1.0, 1.0); y.detach()
    tensor([-1. ,  0.5,  1. ])
    >>> y.sum().backward(); x.grad
    tensor([0., 1., 0.])
    """
    if a_min is None and a_max is None:
        raise ValueError("clip: one of a_min and a_max must be given")
    a, a_min, a_max = _seq(a), _seq(a_min), _seq(a_max)
    if a_min is None:
        return apply(_P["minimum"], a, a_max)
    if a_max is None:
        return apply(_P["maximum"], a, a_min)
    return apply(_P["clip"], a, a_min, a_max)


def round(a: Any, decimals: int = 0) -> Any:  # noqa: A001 - NumPy's name
    """``numpy.round``; derivative zero, like floor.

    Examples
    --------
    >>> x = dualad.tensor([0.4, 1.6], requires_grad=True)
    >>> y = dnp.round(x); y.sum().backward()
    >>> y.detach(), x.grad
    (tensor([0., 2.]), tensor([0., 0.]))
    >>> dnp.round(dualad.tensor([1.25, 2.5]), 1)  # halves to even, as NumPy
    tensor([1.2, 2.5])
    """
    if decimals == 0:
        return apply(_P["rint"], a)
    s = 10.0**decimals
    return apply(_P["rint"], a * s) / s


around = _alias(round, "around", ">>> dnp.around(dualad.tensor([1.25, -0.5]), 1)  # half to even\n"
                                  "tensor([ 1.2, -0.5])")


conjugate = _alias(conj, "conjugate", ">>> dnp.conjugate(dualad.tensor([1 + 2j]))\n"
                                      "tensor([1.-2.j])")


# -- NumPy's other names for primitives, and compositions ------------------------------------

radians = E.PRIMS["deg2rad"]
degrees = E.PRIMS["rad2deg"]


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """``numpy.nan_to_num``: NaN and infinities replaced (zero derivative there).

    Examples
    --------
    >>> dnp.nan_to_num(dualad.tensor([np.nan, 1.0, np.inf]))
    tensor([0.00000000e+000, 1.00000000e+000, 1.79769313e+308])
    """
    x = asarray_t(x)
    if x.dtype.kind not in "fc":
        return x
    if x.dtype.kind == "c":
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return re + im * x.dtype.type(1j)
    fi = np.finfo(x.dtype)
    d = x._data
    # (typed NumPy scalars, not 0-d arrays: CuPy takes scalars beside its arrays)
    big = x.dtype.type(fi.max if posinf is None else posinf)
    small = x.dtype.type(fi.min if neginf is None else neginf)
    x = where(np.isnan(d), x.dtype.type(nan), x)
    x = where(np.isposinf(d), big, x)
    return where(np.isneginf(d), small, x)


def real_if_close(a: Any, tol: float = 100) -> Any:
    """``numpy.real_if_close``: the real part when every imaginary part is negligible.

    The choice is made from the values (``tol`` machine epsilons), so a small imaginary
    tangent is dropped with the imaginary part.

    Examples
    --------
    >>> dnp.real_if_close(dualad.tensor([1.0 + 1e-20j, 2.0]))
    tensor([1., 2.])
    >>> dnp.real_if_close(dualad.tensor([1.0 + 1.0j, 2.0]))
    tensor([1.+1.j, 2.+0.j])
    """
    a = asarray_t(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    return real(a) if bool(np.all(np.abs(a._data.imag) < tol)) else a


acos, acosh, asin, asinh = _P["arccos"], _P["arccosh"], _P["arcsin"], _P["arcsinh"]
atan, atan2, atanh = _P["arctan"], _P["arctan2"], _P["arctanh"]
mod = _P["remainder"]
fix = _P["trunc"]


def divmod(x1: Any, x2: Any) -> tuple[Any, Any]:  # noqa: A001 - NumPy's name
    """``numpy.divmod``: (floor division, no derivative; remainder, differentiable).

    Examples
    --------
    >>> x = dualad.tensor([7.0, -7.0], requires_grad=True)
    >>> q, r = dnp.divmod(x, 2.0); q.detach(), r.detach()
    (tensor([ 3., -4.]), tensor([1., 1.]))
    >>> r.sum().backward(); x.grad
    tensor([1., 1.])
    """
    return _P["floor_divide"](x1, x2), _P["remainder"](x1, x2)


def frexp(x: Any) -> tuple[Any, Any]:
    """``numpy.frexp``: mantissa ``x * 2**-e`` (differentiable) and exponent ``e`` (integer).

    Examples
    --------
    >>> x = dualad.tensor([3.0, 8.0], requires_grad=True)
    >>> m, e = dnp.frexp(x); m.detach(), e
    (tensor([0.75, 0.5 ]), tensor([2, 4], dtype=int32))
    >>> m.sum().backward(); x.grad  # 2**-e
    tensor([0.25  , 0.0625])
    """
    x = asarray_t(x)
    e = np.frexp(x._data)[1]
    return x * np.ldexp(x.dtype.type(1), -e), _make(e)


def ldexp(x1: Any, x2: Any) -> Any:
    """``numpy.ldexp``: ``x1 * 2**x2`` for integer ``x2`` (differentiable in ``x1``).

    Examples
    --------
    >>> x = dualad.tensor([1.0, 3.0], requires_grad=True)
    >>> y = dnp.ldexp(x, [2, -1]); y.detach()
    tensor([4. , 1.5])
    >>> y.sum().backward(); x.grad
    tensor([4. , 0.5])
    """
    x1 = asarray_t(x1)
    dt = x1.dtype if x1.dtype.kind == "f" else np.dtype(np.float64)
    e = _raw(x2)
    if isinstance(x2, (int, list, tuple)):  # (Python exponents: on the device of x1)
        e = _to_kind(np.asarray(e), x1._data)
    return astype(x1, dt, copy=False) * np.ldexp(np.dtype(dt).type(1), e)


def modf(x: Any) -> tuple[Any, Any]:
    """``numpy.modf``: fractional part (derivative one) and integral part (zero).

    Examples
    --------
    >>> x = dualad.tensor([2.5, -1.25], requires_grad=True)
    >>> f, i = dnp.modf(x); f.detach(), i.detach()
    (tensor([ 0.5 , -0.25]), tensor([ 2., -1.]))
    >>> (f + i).sum().backward(); x.grad
    tensor([1., 1.])
    """
    t = _P["trunc"](x)
    return x - t, t


def heaviside(x1: Any, x2: Any) -> Any:
    """``numpy.heaviside``: 0 or 1 away from zero (no derivative), ``x2`` at zero.

    Examples
    --------
    >>> dnp.heaviside(dualad.tensor([-1.0, 0.0, 2.0]), 0.5)
    tensor([0. , 0.5, 1. ])
    """
    d1 = _as_array(_raw(x1))
    base = np.heaviside(d1, np.result_type(d1, _dtype_of(x2)).type(0))
    return where(d1 == 0, x2, base)


def _chbevl(x: Any, vals: Any) -> Any:
    """A Chebyshev series at ``x`` by Clenshaw's recurrence (NumPy's ``_chbevl``)."""
    b0, b1, b2 = vals[0], 0.0, 0.0
    for v in vals[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + v
    return 0.5 * (b0 - b2)


def i0(x: Any) -> Any:
    """``numpy.i0``, the modified Bessel function of the first kind of order 0: NumPy's
    Chebyshev approximations (Cephes), composed of differentiable operations, so its
    derivative is that of the approximation (``i1`` to within a few ulps).

    Examples
    --------
    >>> x = dualad.tensor(1.0, requires_grad=True)
    >>> y = dnp.i0(x); y.backward(); round(float(y), 12), round(float(x.grad), 12)
    (1.266065877752, 0.565159103992)
    """
    from numpy.lib._function_base_impl import _i0A, _i0B

    x = asarray_t(x)
    if x.dtype.kind == "c":
        raise TypeError("i0 not supported for complex values")
    if x.dtype.kind != "f":
        x = astype(x, np.float64)
    x = _P["abs"](x)
    small = x._data <= 8.0
    # each branch sees only the arguments it is for: no inf or NaN in the other's derivative
    xs, xl = where(small, x, 8.0), where(small, 8.0, x)
    ys = _P["exp"](xs) * _chbevl(xs / 2.0 - 2, _i0A)
    yl = _P["exp"](xl) * _chbevl(32.0 / xl - 2.0, _i0B) / _P["sqrt"](xl)
    return where(small, ys, yl)
