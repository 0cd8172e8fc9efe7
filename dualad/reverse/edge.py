"""``GradientEdge``: where a tensor's gradient flows (``dualad.graph`` shows it).

A module of its own so that the engine, which takes one in place of an input
(``dualad.grad(out, edge)``), and ``reverse.hooks``, which makes them
(``get_gradient_edge``), both import it, neither from the other.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["GradientEdge"]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient flows: output ``output_nr`` of ``node``.

    ``dualad.grad`` takes one in place of an input tensor (see
    ``get_gradient_edge``)."""

    node: Any
    output_nr: int
