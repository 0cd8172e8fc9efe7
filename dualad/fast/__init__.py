"""The fast layer: second implementations of the rules, for speed (``docs/fast.md``).

Everything here is a faster way to compute what the general path computes already:
functions generated from the elementwise formula table that do ``apply``'s work in one
frame, forward JVPs on arrays that make *unmade* duals, array transposes and the engine's
steps. Deleting this folder leaves a library that imports and passes the whole test
suite, on the general path alone.

Nothing outside this package imports it but ``dualad/_fastpaths.py``, its one door:
``dualad/__init__.py`` calls ``_fastpaths.install()``, which calls ``install`` here if the
folder is there (else the library runs on the general path alone).

The modules
-----------
``elementwise``
    the functions generated from the formula table (``hot``, the operators, ``call``),
    unmade duals, array transposes and the engine's steps.
``transpose``
    a node's VJP without tracing its rule (``graph.install_vjp``), the elementwise
    family's known program, a slice's cotangent kept as a ``Scatter``.
``engine``
    the backward pass's chains, lanes, in-place sums and tangent-only sums
    (``engine.install``), and forward-over-reverse with untracked tangents
    (``grad_mode.install_untracked_tangents``).
``seeds``
    the identity and diagonal seeds of Jacobians, selected by matmul's batch rule
    (``linear.install_seeds``).

The registration API
--------------------
The core offers slots that stay empty without this package, and reads them where it
would otherwise take the general way; a slot holds a function of the same meaning as
the general way, which may decline (``None``) to hand the call back to it:

``Primitive.hot``
    ``hot(prim, args)``: ``apply`` offers every call to it first.
``Primitive.fast``
    ``fast(prim, args, level, params)``: the JVP at ``level`` on arrays (an unmade dual).
``Primitive.transposed``
    ``transposed(prim, ct, arrays, y, avals, needs, out_dtype)``: a node's VJP on arrays.
``Ufunc.kernels``, ``Ufunc.steps``, ``Ufunc.pair``
    a formula primitive's formulas over arrays, and the engine's step for one input's
    cotangent and for ``f(x, x)``.
``rules.elementwise.accelerate_with(fn)``
    ``fn(prim)`` fills those slots of each formula primitive, made now or later.
``rules.register_operator(name, fn)``
    one of Tensor's operators (``rules.OPERATORS``: one primitive's call each), in place
    of the general one.

The switch
----------
The environment variable ``DUALAD_GENERAL_PATH``, read once at import
(``dualad.fast.switch``), keeps families of fast paths from being installed: ``1`` all
of them, or a comma-separated list of family names (``switch.FAMILIES``).
"""

from __future__ import annotations


def install() -> None:
    """Install every fast path of the families switched on (once, at ``import dualad``)."""
    from . import elementwise, engine, seeds, transpose

    elementwise.install()
    transpose.install()
    engine.install()
    seeds.install()
