"""The warnings filter behind the generated code's decline on a floating-point warning.

The hot functions, array transposes and lane steps of the fast layer
(``dualad/fast/elementwise.py``) run as they are, in a ``try``: this module's filter makes
the RuntimeWarnings of that module, and of ``rules/elementwise.py`` (where the formulas over
arrays they call are compiled), errors, so a
singular point (``0.5 / y`` at ``sqrt(0)``) raises and the code declines to the general
way, which computes the derivative quietly — the common path pays nothing.

A filter the user puts later goes *in front* of it (``warnings.simplefilter("always")``,
``catch_warnings`` with ``record=True``, pytest's ``-W``), and ``resetwarnings`` removes
it: the warning is then shown, not raised, and the generated code goes on — its values
right, its warning leaked from inside dualad. So where a derivative computation starts
(a dual level entered, a tangent attached, a backward pass) ``in_front`` puts the filter
first again if a filter before it would show such a warning. Only RuntimeWarnings from
frames of those two modules are concerned, and none of them is ever meant to reach the
user (a primal's own warning is given again by the general way, from another module).
A filter put in front after that point, inside a dual level, still shows the
warnings of the ops that follow: a check on every op would cost the hot path.
"""

from __future__ import annotations

import warnings

# (the formulas over arrays are compiled in the first, the code generated from them and
# the array rules live in the second: the fast layer)
MODULES = ("dualad.rules.elementwise", "dualad.fast.elementwise")
_PATTERN = r"dualad\.(rules|fast)\.elementwise\Z"
_SHOWN = frozenset(("always", "default", "module", "once"))


def _install() -> tuple[object, ...]:
    warnings.filterwarnings("error", category=RuntimeWarning, module=_PATTERN)
    return warnings.filters[0]


_item = _install()


def in_front() -> None:
    """Put the filter first again if one in front of it (or its absence) would let the
    generated code's RuntimeWarnings be shown rather than raised."""
    global _item
    fs = warnings.filters
    if fs and fs[0] is _item:  # (the common case: nothing put in front)
        return
    for f in fs:
        if f is _item or f == _item:
            return
        action, _, cat, mod, _ = f
        if action in _SHOWN and issubclass(RuntimeWarning, cat) and (
                mod is None or any(map(mod.match, MODULES))):
            break
    _item = _install()
