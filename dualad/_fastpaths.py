"""Which fast-path families run, for the fast paths that still live in the core.

The switch itself (``DUALAD_GENERAL_PATH``) belongs to the fast layer
(``dualad/fast/switch.py``). Fast paths outside that layer — the engine's loops, the lanes,
the seeds, untracked tangents — read it here until they move into it; without the fast
layer every family is off, so the library runs on the general path alone.
"""

from __future__ import annotations

import os

PRESENT = os.path.isfile(os.path.join(os.path.dirname(__file__), "fast", "__init__.py"))
"""Whether the fast layer is in this package's folder. The folder is looked at, not the
import system: an editable install's finder would find the layer of the tree it was
installed from, in a copy of the tree without it (``tools/without_fast.py``)."""

if PRESENT:
    from .fast.switch import FAMILIES, OFF, on
else:  # (the fast layer deleted)
    FAMILIES: tuple[str, ...] = ()  # type: ignore[no-redef]
    OFF: frozenset[str] = frozenset()  # type: ignore[no-redef]

    def on(family: str) -> bool:  # type: ignore[no-redef]
        """Whether the fast paths of ``family`` may run: never, without the fast layer."""
        return False


__all__ = ["FAMILIES", "OFF", "PRESENT", "on"]
