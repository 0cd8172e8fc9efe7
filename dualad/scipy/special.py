"""``dualad.scipy.special``: the special functions scientific code differentiates most.

gammaln, digamma, erf, erfc, expit, logit and xlogy are elementwise primitives built
from derivative formulas like those of ``dualad.rules.elementwise`` (and checked against
SymPy the same way, ``tests/rules/test_scipy_special.py``); polygamma is the primitive their
higher derivatives climb through. logsumexp, softmax and log_softmax are compositions.
SciPy gives the values of gammaln, digamma, erf, erfc and polygamma; without it they
raise ``ImportError`` naming the ``scipy`` extra.

>>> import dualad as da
>>> from dualad.scipy import special
>>> x = da.tensor(3.0, requires_grad=True)
>>> special.gammaln(x).backward(); x.grad  # digamma(3)
tensor(0.92278434)
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from array_api_compat import is_cupy_array

from ..backends.namespace import asarray_like, is_dask
from ..core.dispatch import Primitive, apply
from ..rules import elementwise as E
from ..rules import vocabulary as F
from ..rules._util import elementwise_aval, elementwise_batch
from ..rules.taylor import derivative_rule
from ..rules.ufunc_docs import document

__all__ = ["gammaln", "digamma", "psi", "polygamma", "erf", "erfc", "erfinv", "erfcinv",
           "expit", "logit", "xlogy", "gamma", "gammasgn", "rgamma", "betaln", "beta", "xlog1py", "ndtr",
           "log_ndtr", "multigammaln", "gammainc", "gammaincc", "betainc", "betaincc",
           "stdtr", "j0", "j1", "y0", "y1", "jv", "yv", "jn", "yn", "i0", "i1", "i0e", "i1e",
           "iv", "ive", "logsumexp", "softmax", "log_softmax"]


def _scipy(name: str, *arrays: Any) -> Any:
    """``scipy.special.<name>`` (``cupyx.scipy.special``'s for CuPy ``arrays``: SciPy's
    functions would copy a GPU's array to the host), or ImportError naming the extra that
    installs SciPy."""
    if any(is_cupy_array(a) for a in arrays):
        import cupyx.scipy.special as csp  # type: ignore[import-not-found]

        fn = getattr(csp, name, None)
        if fn is None:
            raise NotImplementedError(
                f"dualad.scipy.special.{name}: CuPy has no {name} (cupyx.scipy.special), "
                "so it cannot be computed on the GPU; compute it on the host (t.cpu() or "
                "cupy.asnumpy) or with a function CuPy has")
        return fn
    try:
        import scipy.special as sp
    except ImportError as e:  # pragma: no cover - exercised only without SciPy
        raise ImportError(f"dualad.scipy.special.{name} needs SciPy for its values: "
                          "pip install 'dualad[scipy]'") from e
    return getattr(sp, name)


def _sp(name: str) -> Any:
    def f(*args: Any) -> Any:
        return _scipy(name, *args)(*args)

    f.__name__ = name
    return f


# -- polygamma: psi^(n), the primitive digamma's derivatives go through -----------------------


def _polygamma_impl(x: Any, *, n: int) -> Any:
    if is_dask(x):  # (SciPy's polygamma is no ufunc: it would compute the whole array)
        return x.map_blocks(_polygamma_impl, n=n, dtype=x.dtype)
    # (CuPy's polygamma broadcasts n against x: it takes an array there)
    r = _scipy("polygamma", x)(n if not is_cupy_array(x) else asarray_like(n, like=x), x)
    dt = x.dtype if x.dtype.kind == "f" else r.dtype
    return r.astype(dt, copy=False) if is_cupy_array(r) else np.asarray(r, dtype=dt)


def _polygamma_jvp(primals: Any, tangents: Any, out: Any, *, n: int) -> Any:
    return tangents[0] * apply(polygamma_p, primals[0], n=n + 1)


polygamma_p = Primitive("polygamma", _polygamma_impl, _polygamma_jvp, reads=(0,))


def polygamma(n: int, x: Any) -> Any:
    """``scipy.special.polygamma``: the n-th derivative of digamma (``n`` an integer).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = special.polygamma(1, x)  # pi**2 / 6 at 1
    >>> y
    tensor([1.64493407, 0.64493407], grad_fn=<PolygammaBackward0>)
    >>> y.sum().backward()
    >>> x.grad  # polygamma(2, x): -2 zeta(3) at 1
    tensor([-2.40411381, -0.40411381])
    """
    x = F.asarray_t(x)
    if x.dtype.kind not in "f":
        x = F.astype(x, np.float64)
    return apply(polygamma_p, x, n=int(n))


def _trigamma(x: Any) -> Any:
    return apply(polygamma_p, x, n=1)


def _np_expit(x: Any) -> Any:
    return np.exp(-np.logaddexp(x.dtype.type(0), -x))  # (a typed scalar: CuPy takes it)


def _np_logit(x: Any) -> Any:
    return np.log(x / (1 - x))


def _np_xlogy(a: Any, b: Any) -> Any:
    return _where_a_zero(a, b, np.log)


def _np_xlog1py(a: Any, b: Any) -> Any:
    return _where_a_zero(a, b, np.log1p)


def _where_a_zero(a: Any, b: Any, f: Any) -> Any:
    """``a * f(b)``, and 0 where ``a`` is 0 (whatever ``f(b)`` is there). A Python number
    ``a`` decides at once: CuPy's where takes no Python bool."""
    zero = np.result_type(a, b).type(0)
    if isinstance(a, (int, float)):
        return np.zeros_like(b, dtype=zero.dtype) if a == 0 else a * f(b)
    return np.where(a == 0, zero, a * f(b))


# The Bessel functions the formulas below use (each other's derivatives): of orders 0 and 1,
# and of any order v (``jv(2, x)``), those Tensor rules bound once the primitives exist
_BESSEL = ("j0", "j1", "y0", "y1", "i0", "i1", "i0e", "i1e")
_BESSEL_ORDER = ("jv", "yv", "iv", "ive")

# The names the formulas below use, for the Tensor rules and the array kernels.
# (digamma's and the Bessel functions' own Tensor functions are registered below, once
# their primitives exist)
E.register_formula_names(
    constants={"TWO_OVER_SQRT_PI": 2.0 / math.sqrt(math.pi),
               "INV_SQRT_2PI": 1.0 / math.sqrt(2.0 * math.pi),
               "SQRT_PI_OVER_2": math.sqrt(math.pi) / 2.0},
    on_tensors={"trigamma": _trigamma},
    on_arrays={"digamma": _sp("digamma"), "trigamma": lambda x: _polygamma_impl(x, n=1),
               **{n: _sp(n) for n in _BESSEL + _BESSEL_ORDER}})

# name: (array function, d/dx) or (array function, d/da, d/db), as in the rule table
SPECIAL: dict[str, tuple[Any, ...]] = {
    "digamma": (_sp("digamma"), "trigamma(x)"),
    "gammaln": (_sp("gammaln"), "digamma(x)"),
    "erf": (_sp("erf"), "TWO_OVER_SQRT_PI * exp(-(x * x))"),
    "erfc": (_sp("erfc"), "-TWO_OVER_SQRT_PI * exp(-(x * x))"),
    "expit": (_np_expit, "y * (1 - y)"),
    "logit": (_np_logit, "1 / (x * (1 - x))"),
    # only 0 / 0 is masked, so d2/da db = 1 / b stays right at a == 0 (as powm1 does)
    "xlogy": (_np_xlogy, "log(b)", "where(logical_and(a == 0, b == 0), 0, a / b)"),
    # as xlogy, at b == -1 (log1p(b)'s pole)
    "xlog1py": (_np_xlog1py, "log(1 + b)", "where(logical_and(a == 0, b == -1), 0, a / (1 + b))"),
    "gamma": (_sp("gamma"), "y * digamma(x)"),
    # SciPy's betaln keeps its digits where gammaln(a) + gammaln(b) - gammaln(a + b) cancels
    "betaln": (_sp("betaln"), "digamma(a) - digamma(a + b)", "digamma(b) - digamma(a + b)"),
    "beta": (_sp("beta"), "y * (digamma(a) - digamma(a + b))",
             "y * (digamma(b) - digamma(a + b))"),
    # the standard normal's CDF, and its log, exact in the far left tail (where log(ndtr)
    # is log(0)); d log_ndtr = phi / ndtr, written exp(log phi - y) so the ratio never
    # divides two underflowed numbers
    "ndtr": (_sp("ndtr"), "INV_SQRT_2PI * exp(-(x * x) / 2)"),
    "log_ndtr": (_sp("log_ndtr"), "INV_SQRT_2PI * exp(-(x * x) / 2 - y)"),
    # inverses: 1 / f'(y)
    "erfinv": (_sp("erfinv"), "SQRT_PI_OVER_2 * exp(y * y)"),
    "erfcinv": (_sp("erfcinv"), "-SQRT_PI_OVER_2 * exp(y * y)"),
    "rgamma": (_sp("rgamma"), "-y * digamma(x)"),
    # Bessel functions: J0' = -J1, J1' = (J0 - J2) / 2 (and Y likewise), I0' = I1,
    # I1' = (I0 + I2) / 2; the scaled I.e(x) = exp(-|x|) I.(x) add -sign(x) I.e(x)
    "j0": (_sp("j0"), "-j1(x)"),
    "j1": (_sp("j1"), "(j0(x) - jv(2, x)) / 2"),
    "y0": (_sp("y0"), "-y1(x)"),
    "y1": (_sp("y1"), "(y0(x) - yv(2, x)) / 2"),
    "i0": (_sp("i0"), "i1(x)"),
    "i1": (_sp("i1"), "(i0(x) + iv(2, x)) / 2"),
    "i0e": (_sp("i0e"), "i1e(x) - sign(x) * y"),
    "i1e": (_sp("i1e"), "(i0e(x) + ive(2, x)) / 2 - sign(x) * y"),
}
PRIMS: dict[str, Any] = {}
for _name, (_fn, *_srcs) in SPECIAL.items():
    PRIMS[_name] = E._make(_name, _fn, tuple(_srcs))
    if _name == "digamma":  # (the formulas after it use it)
        E.register_formula_names(on_tensors={"digamma": PRIMS["digamma"]})

digamma = PRIMS["digamma"]
gammaln = PRIMS["gammaln"]
erf = PRIMS["erf"]
erfc = PRIMS["erfc"]
expit = PRIMS["expit"]
logit = PRIMS["logit"]
xlogy = PRIMS["xlogy"]
xlog1py = PRIMS["xlog1py"]
gamma = PRIMS["gamma"]
betaln = PRIMS["betaln"]
beta = PRIMS["beta"]
ndtr = PRIMS["ndtr"]
log_ndtr = PRIMS["log_ndtr"]
erfinv = PRIMS["erfinv"]
erfcinv = PRIMS["erfcinv"]
rgamma = PRIMS["rgamma"]
j0, j1, y0, y1 = PRIMS["j0"], PRIMS["j1"], PRIMS["y0"], PRIMS["y1"]
i0, i1, i0e, i1e = PRIMS["i0"], PRIMS["i1"], PRIMS["i0e"], PRIMS["i1e"]
E.register_formula_names(on_tensors={n: PRIMS[n] for n in _BESSEL})
psi = digamma

# name: (inputs, the value as printed, the gradient of its sum in each input), as in
# ``ufunc_docs.EXAMPLES``: each primitive's docstring example
EXAMPLES: dict[str, Any] = {
    "digamma": (([1.0, 2.0],), "[-0.57721566,  0.42278434]", ("[1.64493407, 0.64493407]",)),
    "gammaln": (([1.0, 3.0],), "[0.        , 0.69314718]", ("[-0.57721566,  0.92278434]",)),
    "erf": (([0.0, 1.0],), "[0.        , 0.84270079]", ("[1.12837917, 0.4151075 ]",)),
    "erfc": (([0.0, 1.0],), "[1.        , 0.15729921]", ("[-1.12837917, -0.4151075 ]",)),
    "expit": (([0.0, 1.0],), "[0.5       , 0.73105858]", ("[0.25      , 0.19661193]",)),
    "logit": (([0.5, 0.75],), "[0.        , 1.09861229]", ("[4.        , 5.33333333]",)),
    "xlogy": (([0.0, 2.0], [1.0, 2.0]), "[0.        , 1.38629436]",
              ("[0.        , 0.69314718]", "[0., 1.]")),
    "xlog1py": (([0.0, 2.0], [0.0, 1.0]), "[0.        , 1.38629436]",
                ("[0.        , 0.69314718]", "[0., 1.]")),
    "gamma": (([1.0, 3.0],), "[1., 2.]", ("[-0.57721566,  1.84556867]",)),
    "betaln": (([1.0, 2.0], [1.0, 2.0]), "[ 0.        , -1.79175947]",
               ("[-1.        , -0.83333333]", "[-1.        , -0.83333333]")),
    "beta": (([1.0, 2.0], [1.0, 2.0]), "[1.        , 0.16666667]",
             ("[-1.        , -0.13888889]", "[-1.        , -0.13888889]")),
    "ndtr": (([0.0, 1.0],), "[0.5       , 0.84134475]", ("[0.39894228, 0.24197072]",)),
    "log_ndtr": (([0.0, 1.0],), "[-0.69314718, -0.17275378]", ("[0.79788456, 0.28759997]",)),
    "erfinv": (([0.0, 0.5],), "[0.        , 0.47693628]", ("[0.88622693, 1.11258482]",)),
    "erfcinv": (([0.5, 1.5],), "[ 0.47693628, -0.47693628]", ("[-1.11258482, -1.11258482]",)),
    "rgamma": (([1.0, 3.0],), "[1. , 0.5]", ("[ 0.57721566, -0.46139217]",)),
    "j0": (([0.5, 1.0],), "[0.93846981, 0.76519769]", ("[-0.24226846, -0.44005059]",)),
    "j1": (([0.5, 1.0],), "[0.24226846, 0.44005059]", ("[0.45393289, 0.3251471 ]",)),
    "y0": (([0.5, 1.0],), "[-0.44451873,  0.08825696]", ("[1.47147239, 0.78121282]",)),
    "y1": (([0.5, 1.0],), "[-1.47147239, -0.78121282]", ("[2.49842605, 0.86946979]",)),
    "i0": (([0.5, 1.0],), "[1.06348337, 1.26606588]", ("[0.25789431, 0.5651591 ]",)),
    "i1": (([0.5, 1.0],), "[0.25789431, 0.5651591 ]", ("[0.54769476, 0.70090677]",)),
    "i0e": (([0.5, 1.0],), "[0.64503527, 0.46575961]", ("[-0.48861447, -0.25784919]",)),
    "i1e": (([0.5, 1.0],), "[0.1564208 , 0.20791042]", ("[0.17577286, 0.04993878]",)),
}
document(globals(), "scipy.special", "special", EXAMPLES, ("from dualad.scipy import special",))


# -- functions differentiable in some arguments only ------------------------------------------
# The regularized incomplete gamma and beta functions (and Student's t CDF, one of them)
# have closed-form derivatives in their integration limit, none in their shape parameters
# (those are hypergeometric series): a derivative in a shape raises rather than being
# left out.


def _partial(name: str, args: tuple[str, ...], derivs: tuple[Any, ...],
             reads: tuple[Any, ...] = ()) -> Primitive:
    """An elementwise primitive of SciPy's ``name`` whose derivative in ``args[i]`` is
    ``derivs[i](*primals, out)`` (Tensors), or raises where ``derivs[i]`` is None."""
    fn = _sp(name)

    def jvp(primals: Any, tangents: Any, out: Any) -> Any:
        acc = None
        for arg, t, d in zip(args, tangents, derivs, strict=True):
            if t is None:
                continue
            if d is None:
                ok = ", ".join(a for a, f in zip(args, derivs, strict=True) if f)
                raise NotImplementedError(
                    f"dualad.scipy.special.{name}: its derivative in {arg} has no closed "
                    f"form; only {ok} may carry a derivative")
            term = t * d(*primals, out)
            acc = term if acc is None else acc + term
        return acc

    reads = tuple(range(len(args))) + reads  # (and "out", where a derivative reads y)
    prim = Primitive(name, fn, jvp, reads=reads, batch=elementwise_batch(fn),
                     aval=elementwise_aval)
    prim.taylor = derivative_rule(prim, derivs, "out" in reads)  # (Taylor mode's, from the same
    return prim  # derivative functions)


def _gamma_density(a: Any, x: Any) -> Any:
    return F.exp(xlogy(a - 1, x) - x - gammaln(a))


def _t_density(df: Any, t: Any) -> Any:
    return F.exp(gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * F.log(df * math.pi)
                 - (df + 1) / 2 * F.log1p(t * t / df))


_gammainc_p = _partial("gammainc", ("a", "x"), (None, lambda a, x, y: _gamma_density(a, x)))
_gammaincc_p = _partial("gammaincc", ("a", "x"),
                        (None, lambda a, x, y: -_gamma_density(a, x)))
def _beta_density(a: Any, b: Any, x: Any) -> Any:
    return F.exp(xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b))


_betainc_p = _partial("betainc", ("a", "b", "x"),
                      (None, None, lambda a, b, x, y: _beta_density(a, b, x)))
_betaincc_p = _partial("betaincc", ("a", "b", "x"),
                       (None, None, lambda a, b, x, y: -_beta_density(a, b, x)))
_stdtr_p = _partial("stdtr", ("df", "t"), (None, lambda df, t, y: _t_density(df, t)))

# Bessel functions of any order v: differentiable in x by the recurrences
# J_v' = (J_{v-1} - J_{v+1}) / 2 (Y likewise), I_v' = (I_{v-1} + I_{v+1}) / 2, and
# ive(v, x) = exp(-|x|) I_v(x); in the order v they have no closed-form derivative.
_jv_p = _partial("jv", ("v", "x"), (None, lambda v, x, y: (
    apply(_jv_p, v - 1, x) - apply(_jv_p, v + 1, x)) / 2))
_yv_p = _partial("yv", ("v", "x"), (None, lambda v, x, y: (
    apply(_yv_p, v - 1, x) - apply(_yv_p, v + 1, x)) / 2))
_yn_p = _partial("yn", ("n", "x"), (None, lambda n, x, y: (
    apply(_yv_p, n - 1, x) - apply(_yv_p, n + 1, x)) / 2))
_iv_p = _partial("iv", ("v", "x"), (None, lambda v, x, y: (
    apply(_iv_p, v - 1, x) + apply(_iv_p, v + 1, x)) / 2))
_ive_p = _partial("ive", ("v", "x"), (None, lambda v, x, y: (
    apply(_ive_p, v - 1, x) + apply(_ive_p, v + 1, x)) / 2 - F.sign(x) * y), ("out",))
E.register_formula_names(on_tensors={n: functools.partial(apply, p) for n, p in (
    ("jv", _jv_p), ("yv", _yv_p), ("iv", _iv_p), ("ive", _ive_p))})


def _floats(*args: Any) -> list[Any]:
    """The arguments of one floating dtype (integers become float64); Python numbers stay
    Python numbers (NumPy's scalars, which a Dask or CuPy array takes as they are)."""
    ts = [a if isinstance(a, (int, float)) and not isinstance(a, bool) else F.asarray_t(a)
          for a in args]
    dt = np.result_type(*[t.dtype for t in ts if not isinstance(t, (int, float))],
                        np.float16)
    if dt.kind != "f":
        dt = np.dtype(np.float64)
    return [float(t) if isinstance(t, (int, float)) else t if t.dtype == dt
            else F.astype(t, dt) for t in ts]


def gammainc(a: Any, x: Any) -> Any:
    """``scipy.special.gammainc``: the regularized lower incomplete gamma function
    ``P(a, x)``, differentiable in ``x`` (a derivative in ``a`` raises
    ``NotImplementedError``: it has no closed form).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor(1.0, requires_grad=True)
    >>> y = special.gammainc(1.0, x)  # 1 - exp(-x)
    >>> y.backward(); x.grad
    tensor(0.36787944)
    """
    return apply(_gammainc_p, *_floats(a, x))


def gammaincc(a: Any, x: Any) -> Any:
    """``scipy.special.gammaincc``: ``Q(a, x) = 1 - P(a, x)``, differentiable in ``x``
    (a derivative in ``a`` raises ``NotImplementedError``).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor(1.0, requires_grad=True)
    >>> y = special.gammaincc(1.0, x)  # exp(-x)
    >>> y.backward(); x.grad
    tensor(-0.36787944)
    """
    return apply(_gammaincc_p, *_floats(a, x))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """``scipy.special.betainc``: the regularized incomplete beta function ``I_x(a, b)``,
    differentiable in ``x`` (a derivative in ``a`` or ``b`` raises
    ``NotImplementedError``).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor(0.5, requires_grad=True)
    >>> y = special.betainc(2.0, 1.0, x)  # x**2
    >>> y.backward(); x.grad
    tensor(1.)
    """
    return apply(_betainc_p, *_floats(a, b, x))


def betaincc(a: Any, b: Any, x: Any) -> Any:
    """``scipy.special.betaincc``: ``1 - I_x(a, b)`` without the cancellation,
    differentiable in ``x`` (a derivative in ``a`` or ``b`` raises
    ``NotImplementedError``).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor(0.5, requires_grad=True)
    >>> y = special.betaincc(2.0, 1.0, x)  # 1 - x**2
    >>> y.backward(); x.grad
    tensor(-1.)
    """
    return apply(_betaincc_p, *_floats(a, b, x))


def stdtr(df: Any, t: Any) -> Any:
    """``scipy.special.stdtr``: Student's t distribution's CDF, differentiable in ``t``
    (a derivative in ``df`` raises ``NotImplementedError``).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> t = dualad.tensor(0.0, requires_grad=True)
    >>> y = special.stdtr(1.0, t)  # 1/2 + arctan(t) / pi
    >>> y.backward(); t.grad
    tensor(0.31830989)
    """
    return apply(_stdtr_p, *_floats(df, t))


def _order_function(name: str, prim: Primitive, what: str, example: str,
                    integer_in_float64: bool = False) -> Any:
    def f(v: Any, x: Any) -> Any:
        order, x_ = _floats(v, x)
        if integer_in_float64 and isinstance(v, (int, np.integer)) and x_.dtype != np.float64:
            x_ = F.astype(x_, np.float64)  # (SciPy's yn of an integer order: in float64)
        return apply(prim, order, x_)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""``scipy.special.{name}``: {what}, differentiable in ``x`` (a derivative in
    the order raises ``NotImplementedError``: it has no closed form).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor(1.5, requires_grad=True)
{example}
    """
    return f


jv = _order_function("jv", _jv_p, "the Bessel function of the first kind of real order v",
                     "    >>> special.jv(1.0, x).backward(); x.grad  # (J0 - J2) / 2\n"
                     "    tensor(0.13987)")
jn = _order_function("jn", _jv_p, "the Bessel function of the first kind of integer order n "
                     "(``jv``)", "    >>> special.jn(1, x).backward(); x.grad  # (J0 - J2) / 2\n"
                     "    tensor(0.13987)")
yv = _order_function("yv", _yv_p, "the Bessel function of the second kind of real order v",
                     "    >>> special.yv(0.0, x).backward(); x.grad  # -Y1\n"
                     "    tensor(0.41230863)")
yn = _order_function("yn", _yn_p, "the Bessel function of the second kind of integer order n",
                     "    >>> special.yn(0, x).backward(); x.grad  # -Y1\n"
                     "    tensor(0.41230863)", integer_in_float64=True)
iv = _order_function("iv", _iv_p, "the modified Bessel function of the first kind of real "
                     "order v", "    >>> special.iv(0.0, x).backward(); x.grad  # I1\n"
                     "    tensor(0.98166643)")

ive = _order_function("ive", _ive_p, "the exponentially scaled modified Bessel function "
                      "``exp(-|x|) iv(v, x)``",
                      "    >>> special.ive(0.0, x).backward(); x.grad  # (I1 - I0) exp(-x)\n"
                      "    tensor(-0.14839422)")


_gammasgn_p = Primitive("gammasgn", _sp("gammasgn"), nondiff=True,
                        batch=elementwise_batch(_sp("gammasgn")), aval=elementwise_aval)


def gammasgn(x: Any) -> Any:
    """``scipy.special.gammasgn``: the sign of the gamma function (piecewise constant:
    it carries no derivative, as autograd's).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> special.gammasgn(dualad.tensor([-1.5, -0.5, 2.0]))
    tensor([ 1., -1.,  1.])
    """
    (x,) = _floats(x)
    return apply(_gammasgn_p, x)


def multigammaln(a: Any, d: int) -> Any:
    """``scipy.special.multigammaln``: the log of the multivariate gamma function of
    dimension ``d``, ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2)`` (j < d).

    Like SciPy's, it raises ``ValueError`` where some ``a <= (d - 1) / 2`` (there the
    function is not defined).

    Examples
    --------
    >>> from dualad.scipy import special
    >>> a = dualad.tensor(3.0, requires_grad=True)
    >>> y = special.multigammaln(a, 2)
    >>> y
    tensor(1.55019499, grad_fn=<AddBackward0>)
    >>> y.backward()
    >>> a.grad  # digamma(3) + digamma(2.5)
    tensor(1.62594098)
    """
    d = int(d)
    a = F.asarray_t(a)
    if a.dtype.kind not in "f":
        a = F.astype(a, np.float64)
    if np.any(np.asarray(a._data) <= 0.5 * (d - 1)):
        lo = float(np.min(np.asarray(a._data)))
        raise ValueError(f"condition a ({lo:f}) > 0.5 * (d-1) ({0.5 * (d - 1):f}) not met")
    s = d * (d - 1) * 0.25 * math.log(math.pi)
    for j in range(d):
        s = s + gammaln(a - 0.5 * j)
    return s


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """``scipy.special.logsumexp``: ``log(sum(b * exp(a)))``, shifted by the maximum
    (a constant: the shift cancels in the derivative).

    With ``return_sign=True`` (real ``a`` and ``b``) it returns ``log|s|`` and the sign of
    ``s = sum(b * exp(a))``, as SciPy does (the sign, piecewise constant, carries no
    derivative); without it a negative ``s`` gives NaN.

    Examples
    --------
    >>> from dualad.scipy.special import logsumexp
    >>> logsumexp(dualad.tensor([0.0, 0.0]))
    tensor(0.69314718)
    >>> a = dualad.tensor([0.0, np.log(3.0)], requires_grad=True)
    >>> r, sign = logsumexp(a, b=[1.0, -1.0], return_sign=True)  # log|1 - 3| = log 2
    >>> r, sign
    (tensor(0.69314718, grad_fn=<...>), array(-1.))
    >>> r.backward(); a.grad  # b exp(a) / s
    tensor([-0.5,  1.5])
    """
    a = F.asarray_t(a)
    if a.dtype.kind not in "fc":
        a = F.astype(a, np.float64)
    if return_sign and (a.dtype.kind == "c" or np.iscomplexobj(getattr(b, "_data", b))):
        raise NotImplementedError("dualad.scipy.special.logsumexp: return_sign=True takes "
                                  "real a and b (a complex sum has a phase, not a sign)")
    m = np.amax(a._data.real, axis=axis, keepdims=True) if a.size else np.zeros(
        (1,) * a.ndim, a._data.real.dtype)
    m = np.where(np.isfinite(m), m, 0).astype(a._data.real.dtype)
    e = F.exp(a - m)
    if b is not None:
        e = e * b
    total = F.sum(e, axis=axis, keepdims=True)
    if return_sign:
        sign = np.sign(np.asarray(total._data))
        total = F.abs(total)
    s = F.log(total) + m
    if not keepdims:
        s = F.squeeze(s, axis=F._norm_axes(axis, a.ndim)) if a.ndim else s
        if return_sign:
            sign = np.squeeze(sign, axis=F._norm_axes(axis, a.ndim)) if a.ndim else sign
    return (s, sign) if return_sign else s


def softmax(x: Any, axis: Any = None) -> Any:
    """``scipy.special.softmax``: ``exp(x - logsumexp(x, axis))``.

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor([0.0, np.log(3.0)], requires_grad=True)
    >>> y = special.softmax(x)
    >>> y
    tensor([0.25, 0.75], grad_fn=<ExpBackward0>)
    >>> y[1].backward()
    >>> x.grad  # y[1] * (e_1 - y)
    tensor([-0.1875,  0.1875])
    """
    return F.exp(log_softmax(x, axis))


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``scipy.special.log_softmax``: ``x - logsumexp(x, axis)``.

    Examples
    --------
    >>> from dualad.scipy import special
    >>> x = dualad.tensor([0.0, np.log(3.0)], requires_grad=True)
    >>> y = special.log_softmax(x)
    >>> y
    tensor([-1.38629436, -0.28768207], grad_fn=<SubtractBackward0>)
    >>> y[0].backward()
    >>> x.grad  # e_0 - softmax(x)
    tensor([ 0.75, -0.75])
    """
    x = F.asarray_t(x)
    return x - logsumexp(x, axis=axis, keepdims=True)
