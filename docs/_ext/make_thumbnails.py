"""Draw the gallery thumbnails of the example scripts that print rather than plot.

sphinx-gallery makes a card's thumbnail from the first figure a script draws; a script
without one names its picture here with ``# sphinx_gallery_thumbnail_path =
'_static/thumbnails/NAME.png'``. Each picture is computed with dualad, as its script does.
Run from the repository root after changing one: ``python docs/_ext/make_thumbnails.py``
(all of them) or ``... NAME`` (one; the PNGs are committed; the docs build does not run
this).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import dualad as da  # noqa: E402
import dualad.numpy as dnp  # noqa: E402

HERE = Path(__file__).resolve().parent.parent / "_static" / "thumbnails"


def _figure():
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    return fig, ax


def _save(fig, name):
    fig.tight_layout()
    fig.savefig(HERE / f"{name}.png")
    plt.close(fig)


def quickstart():
    """f(x) = sin(x) exp(-x^2) and its derivative by forward mode."""
    xs = np.linspace(-3, 3, 200)
    with da.dual_level():
        x = da.make_dual(da.tensor(xs), da.ones(xs.shape))
        y = dnp.sin(x) * dnp.exp(-(x**2))
        value, tangent = (t.detach().numpy() for t in da.unpack_dual(y))
    fig, ax = _figure()
    ax.plot(xs, value, lw=2.5, label=r"$f(x)$")
    ax.plot(xs, tangent, lw=2.5, ls="--", label=r"$f'(x)$")
    ax.axhline(0, color="0.7", lw=0.8)
    ax.legend(fontsize=13, loc="upper left")
    ax.set_xticks([]), ax.set_yticks([])
    _save(fig, "quickstart")


def find_nan():
    """The norm of a row, sqrt(x^2 + y^2): its gradient is NaN at the all-zero row."""
    g = np.linspace(-1, 1, 101)
    X, Y = np.meshgrid(g, g)
    x = da.tensor(np.stack([X.ravel(), Y.ravel()], axis=1), requires_grad=True)
    dnp.sqrt((x ** 2).sum(axis=1)).sum().backward()
    nan = np.isnan(x.grad.numpy()).any(axis=1).reshape(X.shape)
    fig, ax = _figure()
    ax.contourf(X, Y, np.hypot(X, Y), levels=12, cmap="viridis")
    ax.plot(X[nan], Y[nan], "o", ms=16, mfc="none", mec="red", mew=3)
    ax.annotate("NaN", (0, 0), (0.25, 0.55), color="red", fontsize=20, weight="bold",
                arrowprops={"color": "red", "width": 2})
    ax.set_aspect("equal"), ax.set_xticks([]), ax.set_yticks([])
    _save(fig, "find_nan")


def profile_mlp():
    """Where one training step of a small tanh MLP spends its time, by dualad.profiler."""
    rng = np.random.default_rng(0)
    w1 = da.tensor(rng.standard_normal((64, 128)) * 0.1, requires_grad=True)
    w2 = da.tensor(rng.standard_normal((128, 10)) * 0.1, requires_grad=True)
    x = da.tensor(rng.standard_normal((256, 64)))
    with da.profiler.profile() as prof:
        for _ in range(20):
            (dnp.tanh(x @ w1) @ w2).sum().backward()
    events = sorted(prof.key_averages(), key=lambda e: e.cpu_time_total)[-4:]
    fig, ax = _figure()
    ax.barh([e.key for e in events], [e.cpu_time_total for e in events], color="tab:blue")
    ax.set_xticks([])
    ax.tick_params(axis="y", labelsize=11)
    _save(fig, "profile_mlp")


def dask_gradient():
    """A gradient computed chunk by chunk: the chunks of a Dask array, coloured by it."""
    n, c = 8, 2
    xs = np.linspace(0, 3, n * n).reshape(n, n)
    x = da.tensor(xs, requires_grad=True)
    (dnp.sin(x) * x).sum().backward()
    fig, ax = _figure()
    ax.imshow(x.grad.numpy(), cmap="magma")
    for k in range(0, n + 1, c):
        ax.axhline(k - 0.5, color="white", lw=3), ax.axvline(k - 0.5, color="white", lw=3)
    ax.set_xticks([]), ax.set_yticks([])
    _save(fig, "dask_gradient")


def sympy_crosscheck():
    """dualad's derivative of a formula against SymPy's: the same numbers."""
    xs = np.linspace(0.2, 3, 60)
    x = da.tensor(xs, requires_grad=True)
    (dnp.cos(x) ** 2 / x).sum().backward()
    exact = -2 * np.cos(xs) * np.sin(xs) / xs - np.cos(xs) ** 2 / xs**2  # (what SymPy gives)
    fig, ax = _figure()
    ax.plot(xs, exact, lw=5, color="tab:green", alpha=0.5, label="SymPy")
    ax.plot(xs[::4], x.grad.numpy()[::4], "o", color="tab:blue", label="dualad")
    ax.legend(fontsize=13, loc="lower right")
    ax.set_xticks([]), ax.set_yticks([])
    _save(fig, "sympy_crosscheck")


def gpu_newton_logistic():
    """Newton's method on a logistic regression: the gradient's norm per step, each step's
    gradient and Hessian from dualad (the example's loss, on NumPy here)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 8))
    y = (rng.random(2000) < 1 / (1 + np.exp(-X @ rng.standard_normal(8)))).astype(float)

    def loss(w):
        z = da.as_tensor(X) @ w
        return dnp.mean(dnp.logaddexp(0.0, z) - da.as_tensor(y) * z) + 5e-4 * (w @ w)

    w, norms = da.as_tensor(np.zeros(8)), []
    for _ in range(6):
        g, H = da.functional.grad(loss)(w), da.functional.hessian(loss, w)
        norms.append(float(np.linalg.norm(g.numpy())))
        w = w - da.as_tensor(np.linalg.solve(H.numpy(), g.numpy()))
    fig, ax = _figure()
    ax.semilogy(range(len(norms)), norms, "o-", lw=3, color="tab:green")
    ax.set_xticks([]), ax.set_yticks([]), ax.minorticks_off()
    _save(fig, "gpu_newton_logistic")


if __name__ == "__main__":
    import sys

    everything = (quickstart, find_nan, profile_mlp, dask_gradient, sympy_crosscheck,
                  gpu_newton_logistic)
    for make in everything if len(sys.argv) < 2 else [globals()[n] for n in sys.argv[1:]]:
        make()
