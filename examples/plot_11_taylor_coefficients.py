"""
Taylor coefficients: nested dual levels and ``jet``
===================================================

A dual level gives a first derivative. A computation inside a level that
itself runs inside another level gives the derivative of a derivative, and
dualad's levels nest to any depth without mixing up their tangents. So the
:math:`k`-th derivative is :math:`k` nested levels, and the Taylor polynomial of any
function written with ``dualad.numpy`` follows. We check the coefficients
against SymPy's series and plot the approximations.

Nesting has a price: each level doubles the work, so the :math:`k`-th derivative costs
:math:`2^k` evaluations' worth. Taylor mode (``dualad.functional.jet``) pushes the whole
truncated series :math:`x_0 + t` through the function in one pass, :math:`O(K^2)` per
operation, and gets every coefficient up to order :math:`K` at once. We check the two
against each other, check ``jet`` at order 30 against mpmath, and plot the cost of both
against the order.
"""

import math
import time

import matplotlib.pyplot as plt
import mpmath
import numpy as np
import sympy

import dualad as da
import dualad.functional as F
import dualad.numpy as dnp


def D(g):
    """The derivative of g, by one more dual level (inside whatever levels are live)."""

    def dg(x):
        with da.dual_level():
            _, t = da.unpack_dual(g(da.make_dual(x, da.ones_like(x))))
            return t if t is not None else da.zeros_like(x)

    return dg


def f(x):
    return dnp.exp(dnp.sin(x)) / (1 + x**2)


x0, order = 0.5, 7
derivs = [f]
for _ in range(order):
    derivs.append(D(derivs[-1]))
coeffs = np.array([derivs[k](da.tensor(x0)).item() / math.factorial(k) for k in range(order + 1)])

# %%
# SymPy's series at the same point, as the reference.
s = sympy.symbols("s")
series = sympy.series(sympy.exp(sympy.sin(s + x0)) / (1 + (s + x0) ** 2), s, 0, order + 1).removeO()
exact = np.array([float(series.coeff(s, k)) for k in range(order + 1)])
for k, (a, b) in enumerate(zip(coeffs, exact, strict=True)):
    print(f"a_{k} = {a: .12f}   (SymPy {b: .12f})")
assert np.allclose(coeffs, exact, rtol=1e-10, atol=1e-12)

# %%
# The Taylor polynomials of increasing order approach :math:`f` near :math:`x_0`. The
# derivative functions take arrays too, so one call evaluates each on a grid.
xs = np.linspace(-1.5, 2.5, 300)
fx = f(da.tensor(xs)).numpy()
h = 1e-6  # f' on the whole grid against central differences
fd = (f(da.tensor(xs + h)).numpy() - f(da.tensor(xs - h)).numpy()) / (2 * h)
assert np.allclose(derivs[1](da.tensor(xs)).numpy(), fd, atol=1e-8)

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(xs, fx, color="k", lw=2.5, label="f(x) = exp(sin x) / (1 + x^2)")
for k in (1, 2, 3, 5, 7):
    poly = np.polyval(coeffs[: k + 1][::-1], xs - x0)
    ax.plot(xs, poly, lw=1.2, label=f"Taylor polynomial, order {k}")
ax.axvline(x0, color="0.7", lw=0.8)
ax.set_ylim(-0.5, 2.5)
ax.legend(fontsize=8)
ax.set_title(f"Taylor coefficients at x0 = {x0} from {order} nested dual levels", fontsize=10)
fig.tight_layout()
plt.show()

f_near = f(da.tensor(x0 + 0.2)).item()
err = [abs(np.polyval(coeffs[: k + 1][::-1], 0.2) - f_near) for k in range(order + 1)]
print("error at x0 + 0.2 by order:", np.array2string(np.array(err), precision=1))
assert err[-1] < 1e-3 * err[1]

# %%
# The same coefficients from ``jet`` in one pass: the series :math:`x_0 + t` (plain Taylor
# coefficients in and out with ``factorial_scaled=False``), the output's coefficients
# :math:`a_1, \dots, a_K` at once.


def jet_coefficients(K):
    y, cs = F.jet(f, (x0,), ([1.0] + [0.0] * (K - 1),), factorial_scaled=False)
    return np.array([float(y)] + [float(c) for c in cs])


from_jet = jet_coefficients(order)
print("jet - nested levels, orders 0..7:", np.array2string(from_jet - coeffs, precision=1))
assert np.allclose(from_jet, coeffs, rtol=1e-10, atol=1e-13)

# %%
# Order 30 is out of reach for nested levels (:math:`2^{30}` terms) and one pass for
# ``jet``. mpmath's Taylor expansion at 60 digits is the reference: the coefficients travel
# unscaled inside ``jet``, so no factorial overflows or swamps the small ones.
mpmath.mp.dps = 60
reference = np.array([float(c) for c in mpmath.taylor(
    lambda s: mpmath.exp(mpmath.sin(s)) / (1 + s**2), mpmath.mpf(x0), 30)])
high = jet_coefficients(30)
rel = np.abs(high - reference) / np.abs(reference)
print(f"jet to order 30: largest relative error against mpmath {rel.max():.1e}")
assert rel.max() < 1e-12


def cost(fn, repeats=3):
    """The best of a few timings of fn(), in seconds."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


x0_t = da.tensor(x0)
nested_orders = list(range(1, order + 1))
nested_cost = [cost(lambda k=k: derivs[k](x0_t)) for k in nested_orders]
jet_orders = [1, 2, 4, 8, 12, 16, 20, 24, 30]
jet_cost = [cost(lambda k=k: jet_coefficients(k)) for k in jet_orders]
for k, c in zip(nested_orders, nested_cost, strict=True):
    print(f"order {k:2d}: nested levels {1e3 * c:8.2f} ms")
for k, c in zip(jet_orders, jet_cost, strict=True):
    print(f"order {k:2d}: jet {1e3 * c:8.2f} ms")

# %%
# Nested levels grow geometrically, a straight line on the log scale (each level at least
# doubles the terms of every operation, and the nested derivative functions repeat work
# besides); ``jet``'s cost grows slowly: most of it at low order is the per-operation overhead, and the
# :math:`O(K^2)` arithmetic shows only at high order.
fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogy(nested_orders, 1e3 * np.array(nested_cost), "s-",
            label="nested dual levels (k-th only)")
ax.semilogy(jet_orders, 1e3 * np.array(jet_cost), "o-", label="jet (all orders up to K)")
ax.set_xlabel("order")
ax.set_ylabel("time (ms)")
ax.legend(fontsize=8)
ax.set_title("The cost of Taylor coefficients against the order", fontsize=10)
fig.tight_layout()
plt.show()
