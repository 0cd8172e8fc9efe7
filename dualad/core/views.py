"""Views: which results share their input's memory, and the chain that regenerates them.

``apply`` calls ``viewed`` for the result of every primitive marked ``view``; writing
into a view later rebases its base's history and regenerates the base's other views
(``dualad.rules.inplace``).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import grad_mode as _gm
from .tensor import Tensor, _Meta

_state = _gm.state
_ndarray = np.ndarray


def viewed(prim: Any, src: Any, out: Tensor, params: dict[str, Any]) -> None:
    """Note that ``out = prim(src, **params)`` is a view of ``src`` if it shares its memory.

    The view keeps the root of its chain of views and the steps from there (a view of a
    view has the first one's base), and the root a weak reference to it: writing into the
    view later rebases the root's history and regenerates its other views
    (``dualad.rules.inplace``). Batched tangents handed across the batch boundary are not
    views a user can write into.
    """
    if src.__class__ is not Tensor or out._batch_ndim or prim.boundary:
        return
    o, s = out._data, src._data
    ob = o.base if o.__class__ is _ndarray else getattr(o, "base", None)
    if ob is None:  # (a copy owns its memory; ``shares``, inlined: this runs for every view)
        return
    sb = s.base if s.__class__ is _ndarray else getattr(s, "base", None)
    if ob is not (s if sb is None else sb):  # (NumPy's base is the owner of the memory)
        return
    register_view(prim, src, out, params)


def shares(o: Any, s: Any) -> bool:
    """Whether the array ``o``, made from ``s`` by a view primitive, is a view of ``s``'s
    memory (a copy owns its memory; NumPy's ``base`` is the owner of the memory)."""
    ob = o.base if o.__class__ is _ndarray else getattr(o, "base", None)
    if ob is None:
        return False
    sb = s.base if s.__class__ is _ndarray else getattr(s, "base", None)
    return ob is (s if sb is None else sb)


def register_view(prim: Any, src: Tensor, out: Tensor, params: dict[str, Any]) -> None:
    """Record ``out`` (sharing ``src``'s memory) as the view ``prim(src, **params)``."""
    m = src._meta
    if m is not None and m.base is not None:
        root, fns, nograd = m.base, m.fns + ((prim, params),), m.nograd
    else:
        root, fns, nograd = src, ((prim, params),), False
        if m is None:
            m = src._meta = _Meta()
    om = out._meta
    if om is None:
        om = out._meta = _Meta()
    om.base, om.fns = root, fns
    out._version_cell = src._version_counter()  # (one memory, one counter)
    om.nograd = nograd or (src._requires_grad and not _state.grad)
    rm = m if root is src else root._meta
    views = rm.views
    if views is None:
        rm.views = [weakref.ref(out)]
        return
    views.append(weakref.ref(out))
    if len(views) >= 64 and not len(views) & (len(views) - 1):  # (at powers of two: prune)
        rm.views = [r for r in views if r() is not None]
