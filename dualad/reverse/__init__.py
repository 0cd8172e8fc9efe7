"""Reverse mode by transposition: the graph, the transpose rules and the engine."""

from . import (
    graph,  # noqa: F401  (installs the hooks)
    linearize,  # noqa: F401  (installs the hooks)
    transpose,  # noqa: F401  (installs the hooks)
    transpose_fft,  # noqa: F401  (installs the hooks)
)
from .engine import backward, grad
from .graph import RemovableHandle

__all__ = ["backward", "grad", "RemovableHandle"]
