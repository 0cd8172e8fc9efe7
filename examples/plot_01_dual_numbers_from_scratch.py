r"""
Dual numbers from scratch, then the same with dualad
====================================================

Forward-mode automatic differentiation in one idea: compute with pairs
(value, derivative) — *dual numbers* :math:`a + b\varepsilon` with :math:`\varepsilon^2 = 0` — and
every arithmetic rule becomes the chain rule. We write a complete little
implementation in plain Python (one class, a few functions), differentiate a
function with it, and then do the same with dualad, which applies the same idea
to whole NumPy arrays.
"""

import math

import matplotlib.pyplot as plt
import numpy as np

import dualad as da
import dualad.numpy as dnp

# %%
# A dual number
# -------------
# ``Dual(a, b)`` stands for :math:`a + b\varepsilon`. Multiplying two of them and
# dropping :math:`\varepsilon^2` gives
# :math:`(a + b\varepsilon)(c + d\varepsilon) = ac + (ad + bc)\varepsilon`: the product rule.
# Each method below is one line of calculus.


class Dual:
    def __init__(self, value, deriv=0.0):
        self.value, self.deriv = value, deriv

    @staticmethod
    def lift(x):
        return x if isinstance(x, Dual) else Dual(x, 0.0)  # a constant: derivative 0

    def __add__(self, other):
        o = Dual.lift(other)
        return Dual(self.value + o.value, self.deriv + o.deriv)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.value, -self.deriv)

    def __sub__(self, other):
        return self + (-Dual.lift(other))

    def __rsub__(self, other):
        return Dual.lift(other) - self

    def __mul__(self, other):
        o = Dual.lift(other)
        return Dual(self.value * o.value, self.value * o.deriv + self.deriv * o.value)

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = Dual.lift(other)
        return Dual(self.value / o.value,
                    (self.deriv * o.value - self.value * o.deriv) / o.value**2)

    def __rtruediv__(self, other):
        return Dual.lift(other) / self

    def __pow__(self, n):  # a constant exponent
        return Dual(self.value**n, n * self.value ** (n - 1) * self.deriv)


def sin(x):
    if not isinstance(x, Dual):
        return math.sin(x)
    return Dual(sin(x.value), cos(x.value) * x.deriv)  # recursive: parts may be duals


def cos(x):
    if not isinstance(x, Dual):
        return math.cos(x)
    return Dual(cos(x.value), -sin(x.value) * x.deriv)


def exp(x):
    if not isinstance(x, Dual):
        return math.exp(x)
    e = exp(x.value)
    return Dual(e, e * x.deriv)


def derivative(f, x):
    """f'(x): evaluate f on x + 1·ε and read the ε part."""
    return f(Dual(x, 1.0)).deriv


# %%
# Differentiating a function
# --------------------------
# The function is ordinary Python; only its arithmetic is overloaded.


def f_scratch(x):
    return sin(3 * x) * exp(-x**2 / 4) + x / (1 + x**2)


def f_prime_exact(x):
    return (3 * np.cos(3 * x) - x / 2 * np.sin(3 * x)) * np.exp(-x**2 / 4) \
        + (1 - x**2) / (1 + x**2) ** 2


xs = np.linspace(-4, 4, 201)
d_scratch = np.array([derivative(f_scratch, float(x)) for x in xs])
assert np.allclose(d_scratch, f_prime_exact(xs), rtol=1e-12, atol=1e-12)
print("from scratch: f'(1) =", derivative(f_scratch, 1.0))
assert math.isclose(derivative(f_scratch, 1.0), f_prime_exact(1.0), rel_tol=1e-12)

# %%
# The same with dualad
# --------------------
# dualad's dual tensors do this for whole arrays: the function is written with
# ``dualad.numpy``, the tangent is an array, and one pass with a tangent of ones
# gives :math:`f'` at every point (the function is elementwise, so its Jacobian is
# diagonal).


def f_dualad(x):
    return dnp.sin(3 * x) * dnp.exp(-x**2 / 4) + x / (1 + x**2)


with da.dual_level():
    y = f_dualad(da.make_dual(da.tensor(xs), da.ones(xs.shape)))
    values, d_dualad = (t.numpy() for t in da.unpack_dual(y))

assert np.allclose(d_dualad, d_scratch, rtol=1e-12, atol=1e-12)
i1 = np.argmin(abs(xs - 1.0))  # the grid point x = 1
print("dualad:       f'(1) =", d_dualad[i1])
assert xs[i1] == 1.0 and math.isclose(d_dualad[i1], derivative(f_scratch, 1.0), rel_tol=1e-12)
print("max |dualad - scratch| over the grid:", np.abs(d_dualad - d_scratch).max())

# %%
# Second derivatives: duals of duals
# ----------------------------------
# A dual whose parts are themselves duals carries a second derivative (the
# functions above recurse into the parts). dualad makes the nesting explicit with
# nested ``dual_level`` blocks, each level a separate :math:`\varepsilon`, so that tangents of
# different levels are never confused.

d2_scratch = f_scratch(Dual(Dual(1.0, 1.0), Dual(1.0, 0.0))).deriv.deriv
with da.dual_level():
    outer = da.make_dual(da.tensor(1.0), da.tensor(1.0))
    with da.dual_level():
        inner = da.make_dual(outer, da.tensor(1.0))
        _, d1 = da.unpack_dual(f_dualad(inner))
    _, d2 = da.unpack_dual(d1)
h = 1e-4
fd2 = (f_prime_exact(1 + h) - f_prime_exact(1 - h)) / (2 * h)
print(f"f''(1): scratch {d2_scratch:.10f}, dualad {d2.item():.10f}, finite differences {fd2:.10f}")
assert math.isclose(d2_scratch, d2.item(), rel_tol=1e-12)
assert math.isclose(d2.item(), fd2, rel_tol=1e-6)

# %%
# The picture
# -----------

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(xs, values, label="f(x)", color="0.4")
ax.plot(xs, d_scratch, label="f'(x), dual numbers from scratch", lw=3, alpha=0.5)
ax.plot(xs, d_dualad, "--", label="f'(x), dualad", color="C3")
ax.axhline(0, color="0.8", lw=0.8)
ax.set_xlabel("x")
ax.legend(loc="upper right", fontsize=8)
ax.set_title("One forward pass gives the derivative everywhere")
fig.tight_layout()
plt.show()
