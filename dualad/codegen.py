"""Print the code dualad generates for a primitive.

The fast paths of the elementwise primitives (``docs/fast.md``) are Python functions
that the fast layer generates at import from each primitive's formula strings
(``dualad/fast/elementwise.py``). This command reads them from the primitives' slots
(``prim.hot``, ``prim.transposed``, ``prim.steps``, ``prim.pair``), without importing
the fast layer. Each is compiled under a file name of its own,
``<dualad hot_sin>``, whose text is registered with ``linecache``: a traceback through
one shows its lines, and ``inspect.getsource`` works on it. This command prints them::

    python -m dualad.codegen sin            # every function generated for sin
    python -m dualad.codegen add multiply   # several (an unknown name: exit status 2)
    python -m dualad.codegen                # the primitives that have generated code

For one primitive, in this order (each where it exists):

``hot``
    ``prim.hot``, to which ``apply`` hands the call first.
``call``
    the same code as ``prim(*args)`` itself (the primitive's ``__call__``).
``op``, ``rop``
    the same code as a Tensor operator (``x * y``) and its reflected form (``2 * x``),
    for the primitives that are Python operators.
``transposed``
    the node's VJP on arrays (``prim.transposed``).
``step 0``, ``step 1``, ``pair``
    the engine's step for one input's cotangent (``prim.steps``), and for ``f(x, x)``
    (``prim.pair``).

With ``DUALAD_GENERAL_PATH`` set, the families it turns off have no functions to show,
and the command says so; without the fast layer (``dualad/fast/`` deleted) no primitive
has any.

Examples
--------
>>> import inspect
>>> from dualad.codegen import generated
>>> print(inspect.getsource(generated("sin")["step 0"]).splitlines()[0])
def step_sin_0(ct, x, _, y, od, ix):
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from typing import Any

from . import _fastpaths
from .core.tensor import Tensor
from .rules import elementwise as _E
from .scipy import special as _special

__all__ = ["generated", "main", "primitives"]


def _prims() -> dict[str, Any]:
    # NumPy's elementwise family, then dualad.scipy.special's (made from formulas the same way)
    return {**_E.PRIMS, **_special.PRIMS}


def _generated(fn: Any) -> bool:
    """Whether ``fn`` was generated (compiled under a file name ``<dualad ...>``)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<dualad ")


def primitives() -> list[str]:
    """The names of the primitives that have generated code, in the formula tables' order
    (``dualad.numpy``'s, then ``dualad.scipy.special``'s)."""
    return [name for name, p in _prims().items() if p.hot is not None
            or _generated(p.transposed) or any(getattr(p, "steps", ()) or ())]


def generated(name: str) -> dict[str, Any]:
    """The functions generated for the primitive ``name``, by kind (see the module's
    docstring); ``call`` is compiled here if no call has made it yet.

    Raises
    ------
    KeyError
        If no primitive named ``name`` has generated code.

    Examples
    --------
    >>> from dualad.codegen import generated
    >>> generated("multiply")["step 1"].__code__.co_filename
    '<dualad step_multiply_1>'
    """
    prim = _prims().get(name)
    if prim is None or name not in primitives():
        raise KeyError(name)
    out: dict[str, Any] = {}
    if prim.hot is not None:
        out["hot"] = prim.hot
        out["call"] = prim.hot.variant("call")
        made = prim.hot.__dict__.get("variants", {})
        out.update({k: made[k] for k in ("op", "rop") if k in made})  # (the operators')
    if _generated(prim.transposed):
        out["transposed"] = prim.transposed
    for i, step in enumerate(getattr(prim, "steps", ()) or ()):
        if step is not None:  # (None: a zero derivative)
            out[f"step {i}"] = step
    if getattr(prim, "pair", None) is not None:
        out["pair"] = prim.pair
    return out


def _operators(fn: Any) -> str:
    names = [n for n, v in vars(Tensor).items() if v is fn]
    return f" (Tensor.{', Tensor.'.join(names)})" if names else ""


_OFF = {"hot": "hot, call, op, rop", "transpose": "transposed"}  # family: kinds it makes


def _render(name: str) -> str:
    """Each function generated for ``name`` under a comment naming it, then its source."""
    parts = [f"# {name}: the {family!r} fast paths are off (DUALAD_GENERAL_PATH): no {kinds}\n"
             for family, kinds in _OFF.items() if not _fastpaths.on(family)]
    for kind, fn in generated(name).items():
        where = fn.__code__.co_filename
        parts.append(f"# {name}: {kind}{_operators(fn)}, {where}\n{inspect.getsource(fn)}")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Run the command (``python -m dualad.codegen [primitive ...]``); returns the exit
    status, 2 (with a message naming it) for a primitive without generated code."""
    parser = argparse.ArgumentParser(
        prog="python -m dualad.codegen",
        description="Print the functions dualad generates for elementwise primitives "
                    "(with no name: list the primitives that have some).")
    parser.add_argument("names", nargs="*", metavar="primitive", help="e.g. sin, multiply")
    args = parser.parse_args(argv)
    if not args.names:
        names = primitives()
        print(f"{len(names)} primitives have generated code "
              "(python -m dualad.codegen NAME prints it):")
        print("\n".join(f"  {n}" for n in names))
        return 0
    known = set(primitives())
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"{', '.join(map(repr, unknown))}: no primitive of that name has "
                     "generated code; `python -m dualad.codegen` with no name lists those that do")
    print("\n\n".join(_render(n) for n in args.names), end="")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # (the reader stopped early, as `| head` does: not an error)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (Python's recipe)
        sys.exit(1)
