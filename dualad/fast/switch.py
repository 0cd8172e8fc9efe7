"""The switch that turns fast paths off, read once at import (``docs/fast.md``).

A fast path is a second implementation of a rule. Setting the environment variable
``DUALAD_GENERAL_PATH`` before dualad is imported keeps the fast layer from installing
fast paths, so that the whole library runs on the general path alone: every call
through ``apply``'s general branch, every tangent by the primitive's Tensor-level JVP
rule, every node's VJP by tracing that rule into a linear program and transposing it,
and the engine's general loop — as it does with ``dualad/fast/`` deleted, which is how
CI runs the suite a second time. ``tests/test_general_path.py`` compares the two.

``DUALAD_GENERAL_PATH=1`` (or ``all``) turns every family off; a comma-separated list
of family names turns off those alone (to measure what each buys)::

    DUALAD_GENERAL_PATH=hot,transpose python benchmarks/run.py

The families (``FAMILIES``):

``hot``
    the functions generated from the formula table that do ``apply``'s work in one
    frame (``prim.hot``, the operators and calls made from it) and their straight-line
    recorders.
``fast``
    forward JVPs on arrays (``prim.fast``): the formula table's array kernels, the
    linear primitives of one array, matmul; their results are unmade duals.
``transpose``
    a node's VJP without tracing its rule: the formula table's generated transposes
    and steps on arrays (``prim.transposed``, ``Node.lane``, the engine's straight
    lane), the elementwise family's known program on Tensors
    (``transpose.elementwise_t``, with its ``Negated`` and ``Given`` cotangents), a
    linear primitive's own transpose rule, a slice's cotangent kept as a ``Scatter``.
``engine``
    the engine's loop over chains without the heap, its in-place sums, bare arrays
    between nodes, and its pruning shortcut.
``tangents``
    forward-over-reverse with untracked tangents (``grad_mode.untracked_tangents``)
    and the gradient's tangent summed alone (``engine.grad_tangents``).
``seeds``
    identity seeds and diagonals that matmul's batch rule selects instead of
    multiplying.
"""

from __future__ import annotations

import os

FAMILIES = ("hot", "fast", "transpose", "engine", "tangents", "seeds")


def _parse(value: str) -> frozenset[str]:
    value = value.strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return frozenset()
    if value in ("1", "true", "yes", "on", "all"):
        return frozenset(FAMILIES)
    names = frozenset(v.strip() for v in value.split(",") if v.strip())
    unknown = sorted(names - set(FAMILIES))
    if unknown:
        raise ImportError(
            f"DUALAD_GENERAL_PATH={value!r} names unknown fast-path families {unknown}; use 1 "
            f"(all of them) or a comma-separated list of {', '.join(FAMILIES)}"
        )
    return names


OFF = _parse(os.environ.get("DUALAD_GENERAL_PATH", ""))
"""The fast-path families turned off in this process."""


def on(family: str) -> bool:
    """Whether the fast paths of ``family`` may run (decided once, at import)."""
    return family not in OFF
