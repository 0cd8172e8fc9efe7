"""Reverse mode by transposition: the graph, linearization and the engine (the transpose
rules it runs are the linear primitives' own, beside them in ``dualad.rules``)."""

from . import (
    graph,  # noqa: F401  (installs the hooks)
    linearize,  # noqa: F401  (installs the hooks)
)
from .engine import backward, grad
from .graph import RemovableHandle

__all__ = ["backward", "grad", "RemovableHandle"]
