"""Grad modes, as ``torch.autograd.grad_mode`` names them: switches for reverse-mode recording.

The state and the switches live in the core (``dualad.core.grad_mode``); this module is
their public face.
"""

from .core.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    state,
    untracked_tangents,
)

__all__ = [
    "enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
    "no_grad", "set_grad_enabled", "state", "untracked_tangents",
]
