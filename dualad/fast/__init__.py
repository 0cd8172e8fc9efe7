"""The fast layer: second implementations of the general path's rules, for speed.

Nothing in dualad imports this package but ``dualad/__init__.py``, which calls
``install()`` once at import if the package is there; deleting it leaves a library
that imports and passes the whole test suite on its general path. Each module fills
documented slots of the core (its ``install``); ``DUALAD_GENERAL_PATH`` (read by
``dualad._fastpaths``) keeps a family's slots empty.

- ``transpose``: a node's VJP without tracing its rule (``graph.install_vjp``).
- ``engine``: the backward pass's chains, lanes, in-place sums and tangent-only sums
  (``engine.install``), and forward-over-reverse with untracked tangents
  (``grad_mode.install_untracked_tangents``).
- ``seeds``: the identity and diagonal seeds of Jacobians, selected by matmul's batch
  rule (``linear.install_seeds``).
"""

from __future__ import annotations

from . import engine, seeds, transpose


def install() -> None:
    """Plug every fast path into the core (once, at ``import dualad``)."""
    transpose.install()
    engine.install()
    seeds.install()
