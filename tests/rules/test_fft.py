"""numpy.fft on Tensors: linear primitives, both modes against finite differences.

Uses the harness of ``test_linalg.py`` (forward and reverse vs central
differences, ``Re<v, J u> == Re<J^T v, u>``, batched tangents and cotangents).
Each function is written with ``np.fft`` names, so the reference is NumPy
itself and the Tensor path goes through NumPy's dispatch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_linalg import F_C, F_ONLY, A, check_all, check_second, gen, seed_of

import dualad as da
import dualad.numpy as dnp

NORMS = [None, "ortho", "forward", "backward"]

CASES: dict[str, tuple[Callable[..., Any], Any, tuple[str, ...]]] = {}
for _norm in NORMS:
    _k = _norm or "none"
    CASES[f"fft_{_k}"] = (lambda x, nm=_norm: np.fft.fft(x, norm=nm), gen((2, 5)), F_C)
    CASES[f"ifft_{_k}"] = (lambda x, nm=_norm: np.fft.ifft(x, norm=nm), gen((2, 5)), F_C)
    CASES[f"rfft_{_k}"] = (lambda x, nm=_norm: np.fft.rfft(x, norm=nm), gen((2, 6)), F_ONLY)
    CASES[f"irfft_{_k}"] = (lambda x, nm=_norm: np.fft.irfft(x, norm=nm), gen((2, 4)), F_C)
    CASES[f"fft2_{_k}"] = (lambda x, nm=_norm: np.fft.fft2(x, norm=nm), gen((3, 4)), F_C)
    CASES[f"hfft_{_k}"] = (lambda x, nm=_norm: np.fft.hfft(x, norm=nm), gen((4,)), F_C)
    CASES[f"ihfft_{_k}"] = (lambda x, nm=_norm: np.fft.ihfft(x, norm=nm), gen((5,)), F_ONLY)
CASES.update({
    "fft_crop": (lambda x: np.fft.fft(x, n=3), gen((2, 5)), F_C),
    "fft_pad_axis0": (lambda x: np.fft.fft(x, n=7, axis=0), gen((5, 2)), F_C),
    "ifft_pad_ortho": (lambda x: np.fft.ifft(x, n=8, norm="ortho"), gen((5,)), F_C),
    "ifft_crop_axis0": (lambda x: np.fft.ifft(x, n=2, axis=0), gen((4, 3)), F_C),
    "rfft_odd": (lambda x: np.fft.rfft(x), gen((7,)), F_ONLY),
    "rfft_pad_odd": (lambda x: np.fft.rfft(x, n=9), gen((2, 6)), F_ONLY),
    "rfft_crop_even_axis0": (lambda x: np.fft.rfft(x, n=4, axis=0, norm="ortho"), gen((6, 2)),
                             F_ONLY),
    "irfft_odd": (lambda x: np.fft.irfft(x, n=7), gen((4,)), F_C),
    "irfft_pad": (lambda x: np.fft.irfft(x, n=12, norm="forward"), gen((2, 4)), F_C),
    "irfft_crop": (lambda x: np.fft.irfft(x, n=3), gen((5,)), F_C),
    "irfft_axis0": (lambda x: np.fft.irfft(x, axis=0, norm="ortho"), gen((4, 3)), F_C),
    "ifft2": (lambda x: np.fft.ifft2(x, s=(2, 5)), gen((3, 4)), F_C),
    "fftn_all": (np.fft.fftn, gen((2, 3, 2)), F_C),
    "fftn_s_axes": (lambda x: np.fft.fftn(x, s=(3, 5), axes=(0, 2), norm="ortho"),
                    gen((2, 3, 4)), F_C),
    "ifftn": (lambda x: np.fft.ifftn(x, axes=(1, 2)), gen((2, 3, 4)), F_C),
    "rfftn": (lambda x: np.fft.rfftn(x), gen((3, 4)), F_ONLY),
    "rfft2_s": (lambda x: np.fft.rfft2(x, s=(2, 5)), gen((3, 4)), F_ONLY),
    "irfftn": (lambda x: np.fft.irfftn(x), gen((3, 3)), F_C),
    "irfft2_s": (lambda x: np.fft.irfft2(x, s=(4, 5)), gen((3, 3)), F_C),
    "fftshift": (lambda x: np.fft.fftshift(np.fft.fft(x)), gen((2, 5)), F_C),
    "ifftshift_axes": (lambda x: np.fft.ifftshift(x, axes=1), gen((2, 5)), F_C),
    "roundtrip": (lambda x: np.fft.irfft(np.fft.rfft(x) * np.arange(1.0, 5.0), n=6), gen((6,)),
                  F_ONLY),
    "power_spectrum": (lambda x: np.abs(np.fft.fft(x)) ** 2, gen((6,)), F_C),
    "irfft_squared": (lambda x: np.fft.irfft(x, norm="ortho") ** 2, gen((4,)), F_C),
    "rfft_abs2_pad": (lambda x: np.abs(np.fft.rfft(x, n=9)) ** 2, gen((2, 6)), F_ONLY),
})


def _inputs(name: str, g: Any, dkey: str) -> list[np.ndarray]:
    from test_linalg import DTYPES

    return [g(np.random.default_rng(seed_of(name)), DTYPES[dkey])]


@pytest.mark.parametrize("name, dkey", [(n, d) for n, c in CASES.items() for d in c[2]])
def test_fft_modes(name: str, dkey: str) -> None:
    f, g, _ = CASES[name]
    check_all(name, f, _inputs(name, g, dkey), dkey)


@pytest.mark.parametrize("name", ["power_spectrum", "irfft_squared", "rfft_abs2_pad"])
def test_fft_second_order(name: str) -> None:
    f, g, _ = CASES[name]
    check_second(name, f, _inputs(name, g, "f64"))


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_dtypes_match_numpy(name: str) -> None:
    f, g, dkeys = CASES[name]
    for dkey in dkeys:
        (x,) = _inputs(name, g, dkey)
        got, want = f(da.tensor(x)), f(x)
        assert isinstance(got, da.Tensor)
        assert A(got).dtype == want.dtype, (name, dkey)
        assert A(got).shape == want.shape
        np.testing.assert_allclose(A(got), want, rtol=1e-5, atol=1e-5)


def test_dispatch_and_grad_fn() -> None:
    x = da.tensor(np.arange(4.0), requires_grad=True)
    y = np.fft.fft(x)
    assert isinstance(y, da.Tensor) and y.grad_fn.name() == "FftBackward0"
    assert dnp.fft.rfft(x).grad_fn.name() == "RfftBackward0"
    # the adjoint of fft is n * ifft: grad of Re<v, fft(x)> is Re(n * ifft(v))
    v = np.array([1.0, 2j, -1.0, 0.5])
    (g,) = da.grad(y, x, grad_outputs=da.tensor(v))
    np.testing.assert_allclose(A(g), np.real(4 * np.fft.ifft(v)), atol=1e-12)


def test_jvp_is_the_transform_of_the_tangent() -> None:
    x = np.random.default_rng(0).standard_normal((3, 8))
    u = np.random.default_rng(1).standard_normal((3, 8))
    with da.dual_level():
        y = np.fft.rfft(da.make_dual(da.tensor(x), da.tensor(u)), norm="ortho")
        t = da.unpack_dual(y).tangent
    np.testing.assert_allclose(A(t), np.fft.rfft(u, norm="ortho"), atol=1e-12)


def test_errors() -> None:
    x = da.tensor(np.ones(4))
    with pytest.raises(ValueError, match="Invalid norm"):
        dnp.fft.fft(x, norm="bogus")
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        dnp.fft.fft(x, n=0)
    with pytest.raises(TypeError, match="out="):
        dnp.fft.fft(x, out=np.empty(4, complex))
    with pytest.raises(TypeError, match="real"):
        dnp.fft.rfft(da.tensor(np.ones(4, complex)))


def test_freq_helpers() -> None:
    np.testing.assert_array_equal(A(dnp.fft.fftfreq(5, 0.1)), np.fft.fftfreq(5, 0.1))
    np.testing.assert_array_equal(A(dnp.fft.rfftfreq(6)), np.fft.rfftfreq(6))
