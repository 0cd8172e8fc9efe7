"""The Jacobians' seeds known by object: matmul's batch rule selects instead of
multiplying by them.

The general path multiplies a seed identity (``rules.linear.identity_seed``, pushed by
``dualad.functional`` as a batch of tangents or cotangents) like any matrix: one GEMM
against the identity per matmul that meets it. Known by object here (read-only, so they
stay identities; a view or a product of one is not one), a seed is selected instead,
and the diagonal ``diag(k)`` that the first elementwise op makes of it (``seed_product``)
scales rows. Both are exact where the GEMM is: no inf or NaN, which a GEMM would spread.

``install`` fills the seeds' slots of ``rules.linear`` (``install_seeds``).
"""

from __future__ import annotations

import collections
import weakref
from typing import Any

import numpy as np

from ..rules import linear
from ..rules.linear import _keep
from . import switch

_identities: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def _made(e: Any) -> None:
    """Know the new seed identity ``e`` by object."""
    _identities[id(e)] = e


def _seed_matmul(m: Any, s: Any) -> Any | None:
    """``s @ m`` for a seed identity or a diagonal one made, without a GEMM; else None."""
    r = _selected(m, s)  # I @ m
    return _rows_scaled(m, s) if r is None else r  # diag(k) @ m


def _selected(m: Any, seed: Any) -> Any | None:
    """``m`` as the product with a seed identity, or None when that is not exact. It is
    laid out as the seed is (see ``identity_seed``).

    Exact unless ``m`` has an inf or a NaN: a GEMM would spread it (0 * inf) into
    every other entry of its row, and the result must not depend on the route.
    """
    if _identities.get(id(seed)) is not seed or not np.isfinite(m).all():
        return None
    order = "F" if seed.flags.f_contiguous and not seed.flags.c_contiguous else "C"
    return m.astype(np.result_type(m, seed), order=order)  # a copy (never an alias of m)


# A seed identity times a vector k along its columns — the first elementwise op a seed
# meets, forward or in reverse — is diag(k). Known by object too (with its k), it lets
# matmul's batch rule scale rows instead of running a GEMM against it.
_diagonals: collections.OrderedDict[int, Any] = collections.OrderedDict()  # id -> (ref, k)


def seed_product(g: Any, k: Any) -> Any | None:
    """``g * k`` as a known diagonal if ``g`` is a seed identity and ``k`` a finite vector
    along its columns (the same values, up to the sign of off-diagonal zeros; an inf or
    a NaN would spread into them); else None."""
    if g.ndim != 2 or g.flags.writeable or _identities.get(id(g)) is not g or \
            k.__class__ is not np.ndarray or k.shape != g.shape[1:] or not np.isfinite(k).all():
        return None
    d = np.zeros_like(g, np.result_type(g, k))  # (in the seed's layout)
    np.fill_diagonal(d, k)
    _keep(_diagonals, id(d), (weakref.ref(d), k), 8)
    return d


def _rows_scaled(m: Any, d: Any) -> Any | None:
    """``d @ m`` for a known diagonal ``d``, as a row scaling (exact where the GEMM is: no
    inf or NaN in ``m``); None if ``d`` is not one — or no longer is: it may have reached
    the caller, who may write into it, so its values are checked (cheap beside a GEMM)."""
    ref, k = _diagonals.get(id(d), (None, None))
    if ref is None or ref() is not d or not np.isfinite(m).all() or \
            not np.array_equal(d.diagonal(), k) or np.count_nonzero(d) != np.count_nonzero(k):
        return None  # (ref() is not d: d is a new array where a dead diagonal was)
    return np.multiply(k[:, None], m, dtype=np.result_type(m, d))



def install() -> None:
    """Fill the seeds' slots (family ``seeds``)."""
    if switch.on("seeds"):
        linear.install_seeds(_made, _seed_matmul, seed_product)
