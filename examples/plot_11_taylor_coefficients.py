"""
Taylor coefficients by nested dual levels
=========================================

A dual level gives a first derivative. A computation inside a level that
itself runs inside another level gives the derivative of a derivative, and
dualad's levels nest to any depth without mixing up their tangents. So the
:math:`k`-th derivative is :math:`k` nested levels, and the Taylor polynomial of any
function written with ``dualad.numpy`` follows. We check the coefficients
against SymPy's series and plot the approximations.
"""

import math

import matplotlib.pyplot as plt
import numpy as np
import sympy

import dualad as da
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
