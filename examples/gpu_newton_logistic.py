"""
Newton's method on a GPU, with CuPy
===================================

A tensor of a CuPy array computes on the GPU in every mode: the gradient by reverse
mode, the Hessian by forward-over-reverse, each a CuPy array on the same device. Here
Newton's method fits a logistic regression of 10^6 samples and 64 features; each step
takes the gradient and the Hessian from dualad, and solves the Newton system on the GPU.

    python examples/gpu_newton_logistic.py          # CuPy on the GPU if there is one
    python examples/gpu_newton_logistic.py --numpy  # the same code on NumPy (CPU)

Without CuPy or a GPU it runs on NumPy at a smaller size and says so. Each step checks
dualad's gradient and Hessian against their closed forms (X^T (p - y) / n and
X^T diag(p (1 - p)) X / n + lam I).
"""

# sphinx_gallery_thumbnail_path = '_static/thumbnails/gpu_newton_logistic.png'

from __future__ import annotations

import sys
import time

import numpy as np

import dualad as da
import dualad.functional as daf
import dualad.numpy as dnp


def array_module(want_numpy: bool):
    """CuPy if it is installed and sees a GPU (and NumPy was not asked for), else NumPy."""
    if not want_numpy:
        try:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
            name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
            return cupy, f"CuPy on the GPU ({name.decode() if isinstance(name, bytes) else name})"
        except Exception as e:  # no CuPy, or no GPU
            print(f"(no GPU through CuPy: {type(e).__name__}; running on NumPy)")
    return np, "NumPy on the CPU"


def main() -> None:
    xp, where = array_module("--numpy" in sys.argv)
    n, d, lam = (10**6, 64, 1e-3) if xp is not np else (20_000, 16, 1e-3)
    rng = np.random.default_rng(0)
    w_true = rng.standard_normal(d)
    X_host = rng.standard_normal((n, d))
    y_host = (rng.random(n) < 1 / (1 + np.exp(-X_host @ w_true))).astype(float)
    X, y = xp.asarray(X_host), xp.asarray(y_host)  # the data, on the device
    print(f"computing on: {where}; n={n}, d={d}")

    def loss(w: da.Tensor) -> da.Tensor:
        z = da.as_tensor(X) @ w
        # mean of log(1 + e^z) - y z, written with logaddexp for large |z|
        return dnp.mean(dnp.logaddexp(0.0, z) - da.as_tensor(y) * z) + 0.5 * lam * (w @ w)

    w = da.as_tensor(xp.zeros(d))
    t0 = time.perf_counter()
    for step in range(6):
        g = daf.grad(loss)(w)
        H = daf.hessian(loss, w)
        # the closed forms, on the same device
        p = 1 / (1 + xp.exp(-(X @ w._data)))
        g_ref = X.T @ (p - y) / n + lam * w._data
        H_ref = (X.T * (p * (1 - p))) @ X / n + lam * xp.eye(d)
        assert isinstance(g._data, xp.ndarray) and isinstance(H._data, xp.ndarray)
        # (relative to the size of the terms, which cancel as the gradient goes to zero)
        err_g = float(xp.max(xp.abs(g._data - g_ref)) / xp.max(xp.abs(X.T @ p / n)))
        err_H = float(xp.max(xp.abs(H._data - H_ref)) / xp.max(xp.abs(H_ref)))
        assert err_g < 1e-10 and err_H < 1e-10, (err_g, err_H)
        w = w - da.as_tensor(xp.linalg.solve(H._data, g._data))
        print(f"step {step}: loss {float(loss(w)):.10f}, |grad| {float(xp.linalg.norm(g._data)):.2e}"
              f" (gradient and Hessian agree with their closed forms to {max(err_g, err_H):.0e})")
    if xp is not np:
        xp.cuda.Device().synchronize()
    print(f"6 Newton steps in {time.perf_counter() - t0:.2f} s on {where}")
    cos = float(w_true @ xp.asnumpy(w._data) if xp is not np else w_true @ w._data)
    cos /= float(np.linalg.norm(w_true) * float(xp.linalg.norm(w._data)))
    print(f"cosine between the fitted and the true weights: {cos:.4f}")


if __name__ == "__main__":
    main()
