"""Reverse mode by transposition: the graph, the transpose rules and the engine."""

from . import graph, linearize, transpose, transpose_fft  # noqa: F401  (installs the hooks)
from .engine import backward, grad
from .graph import RemovableHandle

__all__ = ["backward", "grad", "RemovableHandle"]
