"""Levels and the table of interpreters: which interpretation each level id stands for.

Every Tensor carries a level id (``_level``): 0 for a plain value, the id of the level it
is dual at otherwise. ``apply`` hands a call to the interpreter of the highest level
among its arguments (the innermost one: levels nest like context managers, and an inner
level's id is always higher). This module is the state that choice reads; it holds no
Tensor, so every module of the core may import it.

Level ids come from a counter that never repeats, so a tangent of one level can never be
mistaken for another's (no perturbation confusion). Two ids sit above every level the
counter draws: ``LIN`` (reverse mode's linearization placeholders) and ``AVAL`` (a stand-in
for a value a rule did not declare it reads); their interpreters are registered by the
reverse layer (``dualad.reverse.linearize``), so the core never imports it.
"""

from __future__ import annotations

import itertools
from typing import Any

LIN = 1 << 60  # symbolic linear placeholder (reverse mode tracing a JVP rule)
AVAL = LIN + 1  # shape/dtype stand-in for a value a rule did not declare it reads

live: set[int] = set()  # levels entered and not exited (dual levels, and any later kind)
stack: list[int] = []  # live levels, innermost last
duals: set[int] = set()  # live levels that are dual levels (where ``Primitive.fast`` applies)
batched: set[int] = set()  # live dual levels that carry batched tangents

_ids = itertools.count(1)


class Interpreter:
    """One interpretation of the primitives: what a call means at one level.

    ``apply`` finds the highest level among a call's Tensor arguments and calls that
    level's interpreter's ``process(prim, args, params)``, which returns the result (a
    Tensor, or a tuple of them for a ``multi`` primitive). The interpreter works on the
    parts of its level and leaves every lower level to ``apply``'s recursion (it calls
    primitives, which come back through ``apply``), so interpreters compose by nesting
    and none of them knows another.

    Attributes
    ----------
    symbolic : bool
        Its results are placeholders, not values (reverse mode's linearization): ``apply``
        returns them as they are, recording no node and marking no view.
    """

    __slots__ = ()
    symbolic = False

    def process(self, prim: Any, args: Any, params: dict[str, Any]) -> Any:
        """The result of ``prim(*args, **params)`` at this interpreter's level."""
        raise NotImplementedError


class _Primal:
    """The step "the primal at a level" in a chain of views (``unpack_dual``'s primal)."""

    name = "primal"
    boundary = False


PRIMAL = _Primal()


interpreters: dict[int, Interpreter] = {}
"""Level id -> its interpreter: 0 (plain evaluation), every live level, ``LIN``, ``AVAL``.
A level id missing here is a level that exited (``apply`` then drops its parts)."""


def register(level: int, interpreter: Interpreter) -> None:
    """Make ``interpreter`` the one of ``level`` (a fixed id: 0, ``LIN``, ``AVAL``)."""
    interpreters[level] = interpreter


def enter(make: Any, *, dual: bool = False) -> int:
    """Open a new, innermost level whose interpreter is ``make(level)``; return its id.

    ``dual``: it is a dual level (forward mode), where a primitive's ``fast`` slot (a JVP
    on arrays) may stand in for its interpreter.
    """
    level = next(_ids)
    interpreters[level] = make(level)
    live.add(level)
    stack.append(level)
    if dual:
        duals.add(level)
    return level


def exit(level: int | None = None, what: str = "exit_dual_level") -> int:  # noqa: A001
    """Close the innermost level (``level``, if given, must be that one); return its id.
    ``what`` names the caller in the errors."""
    if not stack:
        raise RuntimeError(f"{what}: there is no live dual level to exit")
    if level is not None and level != stack[-1]:
        raise RuntimeError(
            f"{what}: level {level} is not the innermost live level "
            f"({stack[-1]}); exit inner levels first (levels nest like context managers)"
        )
    level = stack.pop()
    del interpreters[level]
    live.discard(level)
    duals.discard(level)
    batched.discard(level)
    return level
