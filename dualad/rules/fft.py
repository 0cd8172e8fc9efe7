"""The discrete Fourier transforms: ``numpy.fft``'s functions as linear primitives.

Four one-dimensional transforms are primitives — ``fft``, ``ifft`` (C -> C),
``rfft`` (R -> C) and ``irfft`` (C -> R, Hermitian) — each with its
evaluation, its batching rule (the axis shifts past the tangent batch axes),
its abstract evaluation, its JVP, which is the transform itself applied to
the tangent, and its transpose rule, an adjoint for the real inner product
``<a, b> = Re(sum(conj(a) * b))`` (written with dualad operations, so it is
differentiable and batched, as ``dualad.rules.linear`` says):

* ``fft(norm)``'s adjoint is ``ifft`` with the dual norm (backward <-> forward,
  ortho <-> ortho), and vice versa; a transform length ``n`` different from the
  input length crops or zero-pads the input, whose adjoint pads or crops back.
* ``rfft`` keeps the non-negative half of the spectrum of a real signal: its
  adjoint is ``irfft`` (dual norm) of the cotangent weighted by ``1`` at the
  zero/Nyquist frequencies and ``1/2`` elsewhere (``irfft`` counts those twice).
* ``irfft`` (C -> R, Hermitian): its adjoint is ``w_k * rfft(ct)_k`` with the
  dual norm, ``w_0 = 1``, ``w_k = 2`` for ``0 < k < n/2``, ``w_{n/2} = 1`` for
  even ``n``.

Every other function here (``fft2``, ``fftn``, ``rfftn``, ``hfft``,
``fftshift``, ...) is a composition, so its derivatives in both modes need no
code of its own.

Parameters are canonical by the time they reach a primitive: ``n`` is the
transform length (the input is cropped or zero-padded to it along ``axis``),
``axis`` is non-negative and ``norm`` is one of ``"backward"``, ``"ortho"``,
``"forward"``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..backends import namespace as _B
from ..backends.namespace import like as _like
from ..backends.namespace import namespace
from ..core.dispatch import Primitive, apply
from ..core.tensor import Tensor, _make
from . import vocabulary as F
from ._util import norm_axis

__all__ = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn",
    "rfft2", "irfft2", "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq",
]

_NORMS = ("backward", "ortho", "forward")
DUAL_NORM = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _complex_dtype(dt: Any) -> np.dtype:
    return np.result_type(dt, np.complex64)


def _real_dtype(dt: Any) -> np.dtype:
    return np.empty((), _complex_dtype(dt)).real.dtype


def _out_len(kind: str, n: int) -> int:
    return n // 2 + 1 if kind == "rfft" else n


def _transform(kind: str, transpose: Any) -> Primitive:
    def impl(a: Any, *, n: int, axis: int, norm: str) -> Any:
        return getattr(namespace(a).fft, kind)(a, n=n, axis=axis, norm=norm)

    def batch(arrays: Any, nbs: Any, *, n: int, axis: int, norm: str) -> Any:
        nb = nbs[0]
        return impl(arrays[0], n=n, axis=axis + nb, norm=norm), nb

    def aval(args: Any, *, n: int, axis: int, norm: str) -> Any:
        (a,) = args
        shape = list(a.shape)
        shape[axis] = _out_len(kind, n)
        dt = _real_dtype(a.dtype) if kind == "irfft" else _complex_dtype(a.dtype)
        return tuple(shape), dt

    ref: list[Primitive] = []

    def jvp(primals: Any, tangents: Any, out: Any, **params: Any) -> Any:
        return apply(ref[0], tangents[0], **params)

    p = Primitive(kind, impl, jvp, linear=(0,), batch=batch, aval=aval, transpose=transpose)
    ref.append(p)
    return p


# -- the transposes (see the module's docstring) -----------------------------------------


def _fit(r: Any, m: int, axis: int) -> Any:
    """Crop or zero-pad ``r`` along ``axis`` to length ``m`` (adjoint of the reverse)."""
    cur = r.shape[axis]
    if cur > m:
        return F.getitem(r, (slice(None),) * axis + (slice(0, m),))
    if cur < m:
        width = [(0, 0)] * r.ndim
        width[axis] = (0, m - cur)
        return F.pad(r, width)
    return r


def _along(w: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    return w.reshape((-1,) + (1,) * (ndim - 1 - axis))


def _c2c_t(inverse: str) -> Any:
    """The transpose of a complex transform: the ``inverse`` one, with the dual norm."""

    def rule(ct: Any, args: Any, *, n: int, axis: int, norm: str) -> list[Any]:
        (a,) = args
        r = apply(PRIMS[inverse], ct, n=n, axis=axis, norm=DUAL_NORM[norm])
        return [_fit(r, a.shape[axis], axis)]

    return rule


def _on(w: Any, t: Any) -> Any:
    """The NumPy weights ``w`` on ``t``'s kind (a CuPy cotangent cannot meet them)."""
    a = getattr(t, "_data", t)
    return w if a.__class__ is np.ndarray else _B.asarray_like(w, like=_like(a))


def _rfft_t(ct: Any, args: Any, *, n: int, axis: int, norm: str) -> list[Any]:
    (a,) = args
    h = n // 2 + 1
    w = np.full(h, 0.5)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    ct = ct * _along(_on(w.astype(_real_dtype(ct.dtype)), ct), ct.ndim, axis)
    r = apply(IRFFT, ct, n=n, axis=axis, norm=DUAL_NORM[norm])
    return [_fit(r, a.shape[axis], axis)]


def _irfft_t(ct: Any, args: Any, *, n: int, axis: int, norm: str) -> list[Any]:
    (a,) = args
    if ct.dtype.kind == "c":  # the adjoint of embedding R in C
        ct = F.real(ct)
    h = n // 2 + 1
    w = np.full(h, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    r = apply(RFFT, ct, n=n, axis=axis, norm=DUAL_NORM[norm])
    r = r * _along(_on(w.astype(_real_dtype(ct.dtype)), r), r.ndim, axis)
    return [_fit(r, a.shape[axis], axis)]


FFT = _transform("fft", _c2c_t("ifft"))
IFFT = _transform("ifft", _c2c_t("fft"))
RFFT = _transform("rfft", _rfft_t)
IRFFT = _transform("irfft", _irfft_t)
PRIMS = {"fft": FFT, "ifft": IFFT, "rfft": RFFT, "irfft": IRFFT}


# -- argument handling ----------------------------------------------------------------------


def _norm(norm: Any) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return norm


def _prep(a: Any, out: Any) -> Tensor:
    if out is not None:
        raise TypeError("dualad: out= is not supported on Tensors (it writes in place)")
    a = F.asarray_t(a)
    if a.dtype.kind not in "fc":
        a = F.astype(a, np.float64)
    return a


def _length(n: Any, default: int) -> int:
    n = default if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _one(kind: str, a: Any, n: Any, axis: int, norm: Any, out: Any) -> Any:
    a = _prep(a, out)
    ax = norm_axis(axis, a.ndim)
    m = a.shape[ax]
    n = _length(n, 2 * (m - 1) if kind == "irfft" else m)
    if kind == "rfft" and a.dtype.kind == "c":
        raise TypeError("rfft: the input must be real (got a complex array)")
    return apply(PRIMS[kind], a, n=n, axis=ax, norm=_norm(norm))


# -- one-dimensional transforms ---------------------------------------------------------


def fft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """One-dimensional DFT, ``numpy.fft.fft`` (a linear primitive; its adjoint is ``ifft``).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.fft(da.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _one("fft", a, n, axis, norm, out)


def ifft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """Inverse one-dimensional DFT, ``numpy.fft.ifft``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.ifft(da.tensor([4.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _one("ifft", a, n, axis, norm, out)


def rfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """DFT of a real input (the ``n // 2 + 1`` non-negative frequencies), ``numpy.fft.rfft``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.rfft(da.tensor([1.0, 1.0, 1.0, 1.0]))
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    return _one("rfft", a, n, axis, norm, out)


def irfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """Inverse of :func:`rfft`, ``numpy.fft.irfft`` (real output of length ``n``).

    As in NumPy, the imaginary parts of the zero (and, for even ``n``, the
    Nyquist) frequency are ignored, and so are their derivatives.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.irfft(da.tensor([4.0 + 0j, 0.0, 0.0]))
    tensor([1., 1., 1., 1.])
    """
    return _one("irfft", a, n, axis, norm, out)


def hfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """DFT of a Hermitian-symmetric signal, ``numpy.fft.hfft`` (``irfft`` of the conjugate).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.hfft(da.tensor([1.0 + 0j, 0.0, 0.0]))
    tensor([1., 1., 1., 1.])
    """
    a = _prep(a, out)
    return irfft(F.conj(F.astype(a, _complex_dtype(a.dtype))), n, axis,
                 DUAL_NORM[_norm(norm)])


def ihfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> Any:
    """Inverse of :func:`hfft`, ``numpy.fft.ihfft`` (real input).

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.ihfft(da.tensor([1.0, 1.0, 1.0, 1.0]))
    tensor([1.-0.j, 0.-0.j, 0.-0.j])
    """
    return F.conj(rfft(a, n, axis, DUAL_NORM[_norm(norm)], out))


# -- n-dimensional transforms (compositions of the 1-D ones) ----------------------------


def _cook(a: Tensor, s: Any, axes: Any, inverse_real: bool = False) -> tuple[list[int], list[int]]:
    if axes is None:
        axes = list(range(a.ndim)) if s is None else list(range(-len(s), 0))
    axes = [norm_axis(operator.index(x), a.ndim) for x in axes]
    if s is None:
        s = [a.shape[x] for x in axes]
        if inverse_real and s:
            s[-1] = 2 * (s[-1] - 1)
    else:
        s = [operator.index(v) for v in s]
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        s = [a.shape[x] if v == -1 else v for v, x in zip(s, axes, strict=True)]
        if inverse_real and s and list(s)[-1] == -1:
            s[-1] = 2 * (a.shape[axes[-1]] - 1)
    return list(s), axes


def _nd(kind: str, a: Any, s: Any, axes: Any, norm: Any, out: Any) -> Any:
    a = _prep(a, out)
    s, axes = _cook(a, s, axes)
    for ii in reversed(range(len(axes))):
        a = _one(kind, a, s[ii], axes[ii], norm, None)
    return a


def fftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """N-dimensional DFT, ``numpy.fft.fftn``: :func:`fft` along each axis.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.fftn(da.ones((2, 2)))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _nd("fft", a, s, axes, norm, out)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """N-dimensional inverse DFT, ``numpy.fft.ifftn``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.ifftn(da.tensor([[4.0, 0.0], [0.0, 0.0]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]])
    """
    return _nd("ifft", a, s, axes, norm, out)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> Any:
    """Two-dimensional DFT, ``numpy.fft.fft2``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.fft2(da.ones((2, 2))).real
    tensor([[4., 0.],
            [0., 0.]])
    """
    return _nd("fft", a, s, axes, norm, out)


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> Any:
    """Two-dimensional inverse DFT, ``numpy.fft.ifft2``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.ifft2(da.tensor([[4.0, 0.0], [0.0, 0.0]])).real
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _nd("ifft", a, s, axes, norm, out)


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """N-dimensional DFT of a real input, ``numpy.fft.rfftn``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.rfftn(da.ones((2, 2))).real
    tensor([[4., 0.],
            [0., 0.]])
    """
    a = _prep(a, out)
    s, axes = _cook(a, s, axes)
    if not axes:
        return a
    a = _one("rfft", a, s[-1], axes[-1], norm, None)
    for ii in range(len(axes) - 1):
        a = _one("fft", a, s[ii], axes[ii], norm, None)
    return a


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> Any:
    """Inverse of :func:`rfftn`, ``numpy.fft.irfftn``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.irfftn(da.tensor([[4.0 + 0j, 0.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [1., 1.]])
    """
    a = _prep(a, out)
    s, axes = _cook(a, s, axes, inverse_real=True)
    if not axes:
        return a
    for ii in range(len(axes) - 1):
        a = _one("ifft", a, s[ii], axes[ii], norm, None)
    return _one("irfft", a, s[-1], axes[-1], norm, None)


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> Any:
    """Two-dimensional :func:`rfftn`, ``numpy.fft.rfft2``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.rfft2(da.ones((2, 2))).shape
    (2, 2)
    """
    return rfftn(a, s, axes, norm, out)


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None,
           out: Any = None) -> Any:
    """Two-dimensional :func:`irfftn`, ``numpy.fft.irfft2``.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.irfft2(da.tensor([[4.0 + 0j, 0.0], [0.0, 0.0]])).shape
    (2, 2)
    """
    return irfftn(a, s, axes, norm, out)


# -- helpers ------------------------------------------------------------------------------


def fftshift(x: Any, axes: Any = None) -> Any:
    """``numpy.fft.fftshift``: a roll (a gather), so it is differentiable.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.fftshift(da.tensor([0.0, 1.0, 2.0, -2.0, -1.0]))
    tensor([-2., -1.,  0.,  1.,  2.])
    """
    x = F.asarray_t(x)
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if np.ndim(axes) == 0 else tuple(axes))
    return F.roll(x, [x.shape[a] // 2 for a in axes], axes)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """``numpy.fft.ifftshift``: the inverse roll of :func:`fftshift`.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> dnp.fft.ifftshift(da.tensor([-2.0, -1.0, 0.0, 1.0, 2.0]))
    tensor([ 0.,  1.,  2., -2., -1.])
    """
    x = F.asarray_t(x)
    axes = tuple(range(x.ndim)) if axes is None else (
        (axes,) if np.ndim(axes) == 0 else tuple(axes))
    return F.roll(x, [-(x.shape[a] // 2) for a in axes], axes)


def fftfreq(n: int, d: float = 1.0, device: Any = None) -> Tensor:
    """``numpy.fft.fftfreq`` as a (constant) Tensor.

    Examples
    --------
    >>> import dualad.numpy as dnp
    >>> dnp.fft.fftfreq(4)
    tensor([ 0.  ,  0.25, -0.5 , -0.25])
    """
    return _make(np.fft.fftfreq(n, d))


def rfftfreq(n: int, d: float = 1.0, device: Any = None) -> Tensor:
    """``numpy.fft.rfftfreq`` as a (constant) Tensor.

    Examples
    --------
    >>> import dualad.numpy as dnp
    >>> dnp.fft.rfftfreq(4)
    tensor([0.  , 0.25, 0.5 ])
    """
    return _make(np.fft.rfftfreq(n, d))
