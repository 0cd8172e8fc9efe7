"""Inspecting the reverse graph and intervening in it (``torch.autograd.graph``).

``Node`` (every ``grad_fn``), ``GradientEdge`` and ``get_gradient_edge``,
``increment_version``, ``register_multi_grad_hook``, and the saved-tensor hook
context managers ``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks`` and ``allow_mutation_on_saved_tensors``; the
graph shown: ``to_dot`` (Graphviz text), ``render_graph`` (its picture) and
``linear_program`` (what reverse mode transposes). See ``docs/graph.md``.
"""

from ._dot import linear_program, render_graph, to_dot
from .reverse.hooks import (
    GradientEdge,
    Node,
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    get_gradient_edge,
    increment_version,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
)

__all__ = [
    "Node", "GradientEdge", "get_gradient_edge", "increment_version",
    "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "saved_tensors_hooks",
    "save_on_cpu", "disable_saved_tensors_hooks", "to_dot", "render_graph", "linear_program",
]
