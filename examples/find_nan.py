r"""
Find the operation that produces a NaN gradient with anomaly detection
======================================================================

A loss that looks harmless -- the Euclidean norm of each row, computed as
:math:`\sqrt{\sum_j x_{ij}^2}` -- has a NaN gradient when a row is all zeros: sqrt's
derivative is infinite at 0, and the square's backward multiplies that
infinity by :math:`2x = 0`. Without anomaly detection backward quietly writes NaN into
``.grad``; with ``dualad.detect_anomaly()`` it stops at the node that made the
NaN (``SquareBackward0``) and shows where in the forward pass it was recorded.

    python examples/find_nan.py
"""

import sys
import warnings

import numpy as np

import dualad as da
import dualad.numpy as dnp


def row_norms(x):
    return dnp.sqrt((x ** 2).sum(axis=1))  # <- the culprit for an all-zero row


def loss_fn(x):
    return row_norms(x).sum()


x = da.tensor(np.array([[3.0, 4.0], [0.0, 0.0]]), requires_grad=True)

with np.errstate(all="ignore"):
    loss_fn(x).backward()
print("without anomaly detection, x.grad =")
print(x.grad)
x.grad = None

warnings.simplefilter("ignore", UserWarning)  # (the "Anomaly Detection has been enabled" note)
with da.detect_anomaly(), np.errstate(all="ignore"), warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    loss = loss_fn(x)
    try:
        loss.backward()
        found = None
    except RuntimeError as e:
        found = str(e)
print("\nwith anomaly detection:")
print("  error:", found)
trace = [str(m.message) for m in w if "Traceback of forward call" in str(m.message)]
print("  " + (trace[0] if trace else "(no forward traceback)").replace("\n", "\n  "))

# The fix: a norm whose derivative is defined (here, 0) at 0.
def safe_row_norms(x):
    sq = (x ** 2).sum(axis=1)
    ok = sq > 0
    return dnp.where(ok, dnp.sqrt(dnp.where(ok, sq, 1.0)), 0.0)


with da.detect_anomaly(), np.errstate(all="ignore"):
    safe_row_norms(x).sum().backward()
print("\nwith the fix, x.grad =")
print(x.grad)

if found is None or "SquareBackward0" not in found or not trace or "row_norms" not in trace[0] \
        or not np.isfinite(x.grad.numpy()).all():
    sys.exit(1)

# sphinx_gallery_thumbnail_path = '_static/thumbnails/find_nan.png'
