"""Sparse differentiation's machinery (private).

A Jacobian whose columns split into groups that share no row needs one JVP per
group (a color), however many columns it has; a symmetric Hessian needs even
fewer HVPs. This package holds the parts of that computation that do not
differentiate anything:

* :mod:`dualad.sparse.patterns`: the sparsity-pattern rules of the primitive families
  (gathers, elementwise, reductions, contractions, blocks), on boolean SciPy matrices;
  the tracing interpreter that applies them is ``dualad.functional._sparsity``;
* :mod:`dualad.sparse.tangents`: the same rules with values, for tangents that are
  sparse matrices (a Jacobian times a seed, without coloring); the interpreter is
  ``dualad.functional._sparse_tangents``;
* :mod:`dualad.sparse.coloring`: colorings of a sparsity pattern (columns for
  forward mode, rows for reverse mode, both for a dense row beside a dense
  column, symmetric star and acyclic colorings for Hessians), with their
  lower bounds;
* :mod:`dualad.sparse.decompress`: the seeds a coloring pushes (one tangent or
  cotangent per color) and the index maps that turn the compressed products
  back into the nonzeros of the pattern with one gather (acyclic colorings:
  a gather, a triangular solve factored once, a gather).

The public names come through :mod:`dualad.functional`; SciPy (the ``scipy``
extra) is needed here and is imported at the top of these modules, which are
imported only when sparse differentiation is used.
"""
