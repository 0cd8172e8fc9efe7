"""Array namespaces: NumPy by default, CuPy for GPU arrays (DESIGN §2.5)."""

from __future__ import annotations

from typing import Any

import numpy as np

try:  # optional; never required
    import cupy as _cupy  # type: ignore[import-not-found]
except Exception:  # pragma: no cover - no GPU here
    _cupy = None


def namespace(*arrays: Any) -> Any:
    """The array module (``numpy`` or ``cupy``) that owns ``arrays``; mixing raises."""
    xp = np
    if _cupy is None:
        return xp
    kinds = {isinstance(a, _cupy.ndarray) for a in arrays if hasattr(a, "shape")}
    if kinds == {True, False}:
        raise RuntimeError(
            "dualad: expected all arrays on the same device, found both NumPy (cpu) and CuPy "
            "(gpu) arrays; move them to one device first (e.g. cupy.asarray or .get())"
        )
    return _cupy if True in kinds else np


def device_of(a: Any) -> str:
    if _cupy is not None and isinstance(a, _cupy.ndarray):
        return f"cuda:{a.device.id}"
    return "cpu"


def is_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) or (_cupy is not None and isinstance(a, _cupy.ndarray))


def asarray(data: Any, dtype: Any = None, copy: bool | None = None) -> Any:
    if _cupy is not None and isinstance(data, _cupy.ndarray):
        return _cupy.array(data, dtype=dtype, copy=bool(copy))
    return np.array(data, dtype=dtype, copy=copy)


def like(a: Any) -> Any:
    """``a`` when it can steer array creation to its device (NEP 35 ``like=``), else None."""
    return a if hasattr(a, "__array_function__") and not isinstance(a, np.generic) else None
