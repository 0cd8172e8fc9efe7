"""``dualad.scipy.signal``: N-dimensional ``convolve`` and ``correlate`` for Tensors.

Both are bilinear compositions of dualad operations, so they are differentiable in both
inputs, to every order, in every mode:

* ``method='direct'`` gathers every window of the zero-padded larger input (one indexing
  operation) and contracts the windows with the flipped smaller input (one ``tensordot``):
  memory ``(output size) x (smaller input's size)``, one pass.
* ``method='fft'`` multiplies the inputs' ``rfftn`` (``fftn`` if either is complex) on
  a grid at least ``s1 + s2 - 1`` long in each axis and returns the ``irfftn`` cut to the mode.
* ``method='auto'`` asks ``scipy.signal.choose_conv_method`` (SciPy's timing model), so the
  choice is SciPy's.

Modes are SciPy's: ``'full'``, ``'valid'`` (the inputs swapped when the second is the larger
in every axis) and ``'same'`` (the size of ``in1``, centred as SciPy centres it).

>>> import dualad as da
>>> from dualad.scipy import signal
>>> signal.convolve(da.tensor([1.0, 2.0, 3.0]), da.tensor([0.0, 1.0, 0.5]))
tensor([0. , 1. , 2.5, 4. , 1.5])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import numpy as dnp
from . import _require

__all__ = ["convolve", "correlate", "choose_conv_method"]

_MODES = ("full", "valid", "same")


def _scipy_signal() -> Any:
    return _require("scipy.signal", "dualad.scipy.signal's method='auto'")


def _swap_needed(mode: str, s1: tuple[int, ...], s2: tuple[int, ...]) -> bool:
    """SciPy's rule: in ``'valid'`` mode the larger input (in every axis) goes first."""
    if mode != "valid":
        return False
    ok1 = all(i >= j for i, j in zip(s1, s2, strict=True))
    ok2 = all(j >= i for i, j in zip(s1, s2, strict=True))
    if not (ok1 or ok2):
        raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                         "every dimension")
    return not ok1


def _centered(arr: Any, shape: tuple[int, ...]) -> Any:
    """The centre ``shape`` of ``arr``, where SciPy's ``_centered`` cuts it."""
    start = [(c - n) // 2 for c, n in zip(arr.shape, shape, strict=True)]
    return arr[tuple(slice(s, s + n) for s, n in zip(start, shape, strict=True))]


# above this many elements the windows of ``_full_direct`` are built one kernel position at a
# time (a sum of shifted products) rather than gathered at once
_WINDOW_LIMIT = 1 << 20


def _full_direct(in1: Any, in2: Any) -> Any:
    """The full convolution: windows of the padded larger input against the flipped other.

    ``out[n] = sum_k flip(ker)[k] padded[n + k]``: one gather of every window and one
    ``tensordot`` while the windows are small, else one shifted slice per kernel position.
    """
    big, ker = (in1, in2) if in1.size >= in2.size else (in2, in1)
    nd = big.ndim
    padded = dnp.pad(big, [(k - 1, k - 1) for k in ker.shape])
    out_shape = [b + k - 1 for b, k in zip(big.shape, ker.shape, strict=True)]
    flipped = dnp.flip(ker)
    if math.prod(out_shape) * ker.size > _WINDOW_LIMIT:
        out = None
        for k in np.ndindex(*ker.shape):
            term = flipped[k] * padded[tuple(slice(i, i + n)
                                             for i, n in zip(k, out_shape, strict=True))]
            out = term if out is None else out + term
        return out
    index = []
    for d in range(nd):
        shape = [1] * (2 * nd)
        shape[d], shape[nd + d] = out_shape[d], ker.shape[d]
        idx = np.arange(out_shape[d])[:, None] + np.arange(ker.shape[d])[None, :]
        index.append(np.moveaxis(idx.reshape(out_shape[d], ker.shape[d], *([1] * (2 * nd - 2))),
                                 (0, 1), (d, nd + d)).reshape(shape))
    windows = padded[tuple(index)]  # (out..., ker...): windows[n, k] = padded[n + k]
    return dnp.tensordot(windows, flipped, axes=nd)


def _fast_len(n: int) -> int:
    try:
        from scipy.fft import next_fast_len
    except ImportError:  # pragma: no cover - exercised only without SciPy
        return n
    return next_fast_len(n)


def _full_fft(in1: Any, in2: Any) -> Any:
    """The full convolution by the DFT on a grid long enough not to wrap around."""
    shape = [i + j - 1 for i, j in zip(in1.shape, in2.shape, strict=True)]
    fshape = [_fast_len(n) for n in shape]
    axes = tuple(range(in1.ndim))
    if in1.dtype.kind == "c" or in2.dtype.kind == "c":
        ret = dnp.fft.ifftn(dnp.fft.fftn(in1, fshape, axes) * dnp.fft.fftn(in2, fshape, axes),
                            axes=axes)
    else:
        ret = dnp.fft.irfftn(dnp.fft.rfftn(in1, fshape, axes) * dnp.fft.rfftn(in2, fshape, axes),
                             fshape, axes)
    return ret[tuple(slice(0, n) for n in shape)]


def choose_conv_method(in1: Any, in2: Any, mode: str = "full", measure: bool = False) -> str:
    """``scipy.signal.choose_conv_method`` on the inputs' values (``measure=False``).

    Examples
    --------
    >>> dualad.scipy.signal.choose_conv_method(dualad.tensor([1.0, 2.0]), dualad.tensor([1.0]))
    'direct'
    """
    if measure:
        raise NotImplementedError("measure=True times SciPy's functions, not dualad's")
    raw = [dnp.asarray(x).detach().numpy() for x in (in1, in2)]
    return _scipy_signal().choose_conv_method(*raw, mode=mode)


def _check(in1: Any, in2: Any, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """N-dimensional convolution, ``scipy.signal.convolve``; differentiable in both inputs.

    Parameters
    ----------
    in1, in2 : Tensor or array_like, of the same number of dimensions.
    mode : {'full', 'valid', 'same'}
    method : {'auto', 'direct', 'fft'}
        ``'auto'`` chooses as SciPy does. Integer inputs with ``'fft'`` are rounded back to
        their type, as SciPy's.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0])
    >>> dualad.scipy.signal.convolve(x, dualad.tensor([1.0, 1.0]), mode="valid")
    tensor([3., 5.])
    """
    in1, in2 = dnp.asarray(in1), dnp.asarray(in2)
    if in1.ndim == in2.ndim == 0:
        return in1 * in2
    _check(in1, in2, mode)
    if in1.size == 0 or in2.size == 0:
        return dnp.asarray(np.array([]))
    if method == "auto":
        method = choose_conv_method(in1, in2, mode=mode)
    if method not in ("direct", "fft"):
        raise ValueError(f"Acceptable method flags are 'auto', 'direct', or 'fft', not {method!r}")
    if _swap_needed(mode, in1.shape, in2.shape):
        in1, in2 = in2, in1
    if method == "direct":
        full = _full_direct(in1, in2)
    else:
        full = _full_fft(in1, in2)
        kind = np.result_type(in1.dtype, in2.dtype)
        if kind.kind in "ui":
            full = dnp.round(full).astype(kind)
    if mode == "full":
        return full
    if mode == "same":
        return _centered(full, in1.shape)
    return _centered(full, tuple(i - j + 1 for i, j in zip(in1.shape, in2.shape, strict=True)))


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """N-dimensional cross-correlation, ``scipy.signal.correlate``: the convolution of
    ``in1`` with ``in2`` reversed in every axis and conjugated.

    Parameters and modes are :func:`convolve`'s.

    Examples
    --------
    >>> x = dualad.tensor([1.0, 2.0, 3.0])
    >>> dualad.scipy.signal.correlate(x, dualad.tensor([1.0, 0.5]), mode="valid")
    tensor([2. , 3.5])
    """
    in1, in2 = dnp.asarray(in1), dnp.asarray(in2)
    if in1.ndim == in2.ndim == 0:
        return in1 * dnp.conj(in2)
    _check(in1, in2, mode)
    return convolve(in1, dnp.conj(dnp.flip(in2)), mode, method)
