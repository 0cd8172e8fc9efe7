"""Checks shared by the dualad.scipy tests: forward and reverse mode against a reference
(torch.func or central differences), the jvp/vjp identity, and a second-order check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import dualad as da
import dualad.numpy as dnp
from dualad import functional as AF


def rand_like(rng: np.random.Generator, x: Any) -> np.ndarray:
    """A random array of ``x``'s shape (complex if ``x`` is)."""
    x = np.asarray(x)
    r = rng.standard_normal(x.shape)
    return r + 1j * rng.standard_normal(x.shape) if x.dtype.kind == "c" else r


def _numpy(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(got: Any, want: Any, rtol: float, what: str) -> None:
    got, want = _numpy(got), np.asarray(want)
    scale = max(np.max(np.abs(want), initial=0.0), 1.0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


def check_modes(f: Callable[..., Any], xs: list[np.ndarray], rng: np.random.Generator, *,
                torch_f: Callable[..., Any] | None = None, rtol: float = 1e-9,
                fd_rtol: float = 1e-6, tangents: list[np.ndarray] | None = None) -> None:
    """``f``'s JVP and VJP at ``xs``: the identity ``Re<v, J u> = Re<J^H v, u>``, and the JVP
    (and, with ``torch_f``, the VJP) against torch.func or central differences."""
    ts = tuple(da.tensor(x) for x in xs)
    us = tangents if tangents is not None else [rand_like(rng, x) for x in xs]
    out, ju = AF.jvp(f, ts, tuple(da.tensor(u) for u in us))
    v = rand_like(rng, _numpy(out))
    _, gs = AF.vjp(f, ts, da.tensor(v))
    gs = gs if isinstance(gs, tuple) else (gs,)
    lhs = np.real(np.vdot(v, _numpy(ju)))
    rhs = sum(np.real(np.vdot(_numpy(g), u)) for g, u in zip(gs, us, strict=True))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10 * (abs(lhs) + 1),
                               err_msg="Re<v, J u> != Re<J^H v, u>")
    if torch_f is not None:
        import torch

        tp = tuple(torch.tensor(x) for x in xs)
        t_out, t_ju = torch.func.jvp(torch_f, tp, tuple(torch.tensor(u) for u in us))
        _close(out, t_out.numpy(), rtol, "value against torch")
        _close(ju, t_ju.numpy(), rtol, "JVP against torch")
        _, vjp_fn = torch.func.vjp(torch_f, *tp)
        for k, (g, tg) in enumerate(zip(gs, vjp_fn(torch.tensor(v)), strict=True)):
            _close(g, tg.numpy(), rtol, f"VJP in input {k} against torch")
        return
    h = 1e-6
    plus = f(*[da.tensor(x + h * u) for x, u in zip(xs, us, strict=True)])
    minus = f(*[da.tensor(x - h * u) for x, u in zip(xs, us, strict=True)])
    _close(ju, (_numpy(plus) - _numpy(minus)) / (2 * h), fd_rtol, "JVP against differences")


def check_hessian(f: Callable[[Any], Any], x: np.ndarray, rng: np.random.Generator,
                  rtol: float = 1e-6) -> None:
    """The Hessian of ``Re sum(w * f(x))`` applied to ``u``, against central differences
    of its gradient."""
    w = rand_like(rng, _numpy(f(da.tensor(x))))

    def scalar(t: Any) -> Any:
        return dnp.real((f(t) * da.tensor(w)).sum()) if np.iscomplexobj(w) else (
            f(t) * da.tensor(w)).sum()

    def grad(a: np.ndarray) -> np.ndarray:
        t = da.tensor(a, requires_grad=True)
        (g,) = da.grad(scalar(t), [t])
        return g.numpy()

    u = rng.standard_normal(x.shape)
    hess = AF.hessian(scalar, da.tensor(x)).numpy().reshape(x.size, x.size)
    h = 1e-5
    _close(hess @ u.ravel(), ((grad(x + h * u) - grad(x - h * u)) / (2 * h)).ravel(), rtol,
           "Hessian against differences of the gradient")
