"""The errors of an operation on arrays, said clearly: NumPy's broadcasting error with the
operation and the shapes, arrays on two devices, a complex input to a real-only ufunc.
``prim`` is the primitive that failed (only its ``name`` is read).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import namespace as _backend


def mismatch(prim: Any, a: Any, b: Any, e: Exception) -> Exception:
    """NumPy's error of a binary operation said clearly: broadcasting's (which operation,
    the shapes), or the TypeError of arrays on two devices (``devices``)."""
    if e.__class__ is not ValueError:
        return devices(prim, (a, b), e)
    if "broadcast" not in str(e):
        return e
    sa, sb = np.shape(a), np.shape(b)
    return ValueError(
        f"{prim.name}: operands could not be broadcast together: shapes {sa} and {sb} "
        "(broadcasting aligns trailing axes; each pair of sizes must be equal or one of them "
        "1). Reshape one operand, e.g. x[:, None], or check which arrays you combine."
    )


def devices(prim: Any, arrays: Any, e: Exception) -> Exception:
    """``e`` (a TypeError of ``prim`` on ``arrays``), or, where the arrays are on two
    devices (CuPy refuses a NumPy operand with a TypeError naming neither), the error that
    says so; or, for a complex input to a real-only ufunc, the error that says that."""
    if not isinstance(e, TypeError):
        return e
    if "not supported for the input types" in str(e):
        z = [a for a in arrays if np.iscomplexobj(a)]
        if z:
            hint = ("for the argument of a complex number use dualad.numpy.angle(z)"
                    if prim.name == "arctan2" else
                    "take dualad.numpy.real(z), .imag or dualad.numpy.abs(z) first")
            return TypeError(
                f"dualad.numpy.{prim.name} is real-only (NumPy's {prim.name} has no complex "
                f"loop), but it got a complex input of dtype {z[0].dtype}: {hint}.")
    if e.__class__ is TypeError:
        try:
            _backend.namespace(*arrays)
        except RuntimeError as err:
            return RuntimeError(f"{prim.name}: {err}")
    return e
