"""The fast layer's one door: whether it is here, which of its families run, installing it.

The fast layer (``dualad/fast/``, docs/fast.md) is a second implementation of rules, for
speed. This is the only module outside it that imports it: ``dualad/__init__.py`` calls
``install()`` once, and what else asks about it (``dualad.codegen``, the tests) asks
``on(family)`` here. Without the folder every family is off and the library runs on the
general path alone.
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




def install() -> None:
    """Fill the core's slots with the fast layer's functions (``fast.install``), if the
    layer is here; else nothing: the general path alone."""
    if PRESENT:
        from .fast import install as install_fast

        install_fast()


__all__ = ["FAMILIES", "OFF", "PRESENT", "install", "on"]
