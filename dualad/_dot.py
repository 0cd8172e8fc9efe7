"""A picture of the backward graph: Graphviz DOT text, and its rendering.

``to_dot(t)`` walks ``t.grad_fn`` and its ``next_functions`` (what
``backward`` would run) and writes one DOT node per graph node: its name, the
shapes and dtypes of its inputs and outputs, and what it saved for the
backward pass with each saved value's size. Leaves are the tensors whose
``.grad`` the pass accumulates into. ``render_graph(t, path)`` draws the same
text with the ``graphviz`` package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .core.tensor import Tensor
from .reverse.graph import edge_of
from .reverse.linearize import is_lin, linearize, placeholder

__all__ = ["to_dot", "render_graph", "linear_program"]


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _shape(shape: Any) -> str:
    return "(" + ", ".join(str(int(n)) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _aval_text(aval: Any) -> str:
    shape, dtype = aval
    return f"{_shape(shape)} {np.dtype(dtype)}"


def _nbytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError  # (unreachable: the loop returns at GB)


def _array_of(v: Any) -> Any:
    """The array a saved value holds (a Tensor's data, a bare array), or None if unknown."""
    if isinstance(v, Tensor):
        return v._data
    if isinstance(v, np.ndarray) or hasattr(v, "nbytes"):
        return v
    packed = getattr(v, "packed", None)  # a SavedValue: what its pack hook returned
    if packed is not None and packed is not v:
        return _array_of(packed)
    return None


def _saved_lines(node: Any) -> list[str]:
    """One line per saved value of ``node``: which it is, its shape, dtype and size."""
    saved_values = getattr(node, "_saved_values", None)
    if saved_values is None:  # a leaf saves nothing
        return []
    saved = saved_values()
    if saved is None:
        return ["saved: freed (backward ran without retain_graph)"]
    lines = []
    for key, v in sorted(saved.items(), key=lambda kv: (kv[0] == "out", str(kv[0]))):
        for k, sv in enumerate(v if key == "out" else [v]):
            if sv is None:  # (an output its rule does not read)
                continue
            what = f"output {k}" if key == "out" else f"input {key}"
            a = _array_of(sv)
            if a is None:
                lines.append(f"saved {what}: {type(sv).__name__} (packed by a hook)")
            else:
                lines.append(f"saved {what}: {_shape(a.shape)} {a.dtype}, {_nbytes(a.nbytes)}")
    return lines or ["saves nothing"]


def to_dot(tensor: Tensor, *, name: str = "backward") -> str:
    """Graphviz DOT text of the backward graph that ends at ``tensor``.

    Parameters
    ----------
    tensor : Tensor
        A tensor that has a ``grad_fn`` (made from tensors that require grad),
        or a leaf that requires grad (a graph of one node).
    name : str, default "backward"
        The name of the DOT digraph.

    Returns
    -------
    str
        DOT text: one box per node (its name, its inputs' and outputs' shapes and
        dtypes, each saved value with its shape, dtype and size in bytes), one
        edge per input, pointing the way the gradient flows. Leaves
        (``AccumulateGrad``) are drawn as ellipses with the leaf's shape.

    Raises
    ------
    RuntimeError
        If ``tensor`` has no graph (it does not require grad).

    See Also
    --------
    render_graph : draw the same text as SVG or PNG.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> x = da.tensor([1.0, 2.0], requires_grad=True)
    >>> dot = da.graph.to_dot(dnp.sum(dnp.exp(x)))
    >>> print(dot.splitlines()[0])
    digraph backward {
    >>> "ExpBackward0" in dot and "saved output 0: (2,) float64, 16 B" in dot
    True
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dot: expected a dualad Tensor, got {type(tensor).__name__}.")
    root = tensor.grad_fn
    if root is None:
        if not tensor.requires_grad:
            raise RuntimeError(
                "to_dot: this tensor has no backward graph (it does not require grad). "
                "Make it from tensors created with requires_grad=True."
            )
        root = edge_of(tensor)[0]  # a leaf's AccumulateGrad: a graph of one node
    ids, order = _nodes_from(root)
    lines = [
        f"digraph {name} {{",
        '  node [fontname="Helvetica", fontsize=10];',
        "  rankdir=TB;",
    ]
    lines += [_node_line(n, ids[id(n)], n is root) for n in order]
    for n in order:
        for k, (nxt, _) in enumerate(getattr(n, "next_functions", ())):
            if nxt is not None:
                lines.append(f"  {ids[id(nxt)]} -> {ids[id(n)]} [dir=back, label=\"{k}\"];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _nodes_from(root: Any) -> tuple[dict[int, str], list[Any]]:
    """The nodes reachable from ``root``, depth-first, each once (a node may feed several
    others): their dot ids by ``id()``, and their order."""
    ids: dict[int, str] = {}
    order: list[Any] = []
    stack = [root]
    while stack:  # depth-first, each node once (a node may feed several others)
        n = stack.pop()
        if id(n) in ids:
            continue
        ids[id(n)] = f"n{len(ids)}"
        order.append(n)
        for nxt, _ in reversed(getattr(n, "next_functions", ())):
            if nxt is not None and id(nxt) not in ids:
                stack.append(nxt)
    return ids, order


def _node_line(n: Any, nid: str, is_root: bool) -> str:
    """The dot statement of node ``n``: a leaf's AccumulateGrad as an ellipse, any other
    node as a box listing its inputs', outputs' and saved values' shapes and dtypes."""
    if n.name() == "AccumulateGrad":
        leaf = n.variable
        label = f"AccumulateGrad\\nleaf {_shape(leaf.shape)} {leaf.dtype}"
        return (f"  {nid} [shape=ellipse, style=filled, fillcolor=\"#dbeafe\", "
                f"label=\"{label}\"];")
    parts = [n.name()]
    avals = getattr(n, "avals", None) or ()
    outs = getattr(n, "out_avals", None) or ()
    if avals:
        parts.append("in: " + ", ".join("constant" if a is None else _aval_text(a) for a in avals))
    if outs and outs[0] is not None:
        parts.append("out: " + ", ".join(_aval_text(a) for a in outs if a is not None))
    parts += _saved_lines(n)
    label = "\\n".join(p.replace('"', "'") for p in parts)
    fill = "#fde68a" if is_root else "#f3f4f6"
    return (f"  {nid} [shape=box, style=\"rounded,filled\", fillcolor=\"{fill}\", "
            f"label=\"{label}\"];")


def render_graph(tensor: Tensor, path: str | Path, format: str = "svg") -> Path:
    """Draw the backward graph of ``tensor`` into ``path`` (SVG or PNG).

    Parameters
    ----------
    tensor : Tensor
        As for :func:`to_dot`.
    path : str or pathlib.Path
        Where to write the picture; the suffix is replaced by ``format``'s.
    format : {"svg", "png"}, default "svg"

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ValueError
        For a format other than "svg" or "png".
    RuntimeError
        If the ``graphviz`` Python package or Graphviz's ``dot`` program is
        missing (the message says how to install them).

    Examples
    --------
    >>> import tempfile, pathlib, shutil
    >>> import dualad as da, dualad.numpy as dnp
    >>> x = da.tensor([1.0, 2.0], requires_grad=True)
    >>> y = dnp.sum(dnp.sin(x) * x)
    >>> if shutil.which("dot"):  # Graphviz installed
    ...     out = da.graph.render_graph(y, pathlib.Path(tempfile.mkdtemp()) / "g", format="svg")
    ...     assert out.read_text().lstrip().startswith("<?xml")
    """
    if format not in ("svg", "png"):
        raise ValueError(f"render_graph: format must be 'svg' or 'png', got {format!r}.")
    try:
        import graphviz
    except ImportError as exc:
        raise RuntimeError(
            "render_graph needs the graphviz Python package: pip install graphviz "
            "(and Graphviz's dot program, e.g. apt-get install graphviz). "
            "to_dot(tensor) gives the DOT text without either."
        ) from exc
    import shutil

    if shutil.which("dot") is None:
        raise RuntimeError(
            "render_graph needs Graphviz's `dot` program on PATH (e.g. apt-get install "
            "graphviz, brew install graphviz, conda install graphviz). to_dot(tensor) gives "
            "the DOT text without it."
        )
    path = Path(path)
    src = graphviz.Source(to_dot(tensor))
    out = src.render(outfile=str(path.with_suffix("." + format)), format=format, cleanup=True)
    return Path(out)


def linear_program(tensor: Tensor) -> str:
    """The linear program that reverse mode transposes, for the graph ending at ``tensor``.

    Reverse mode has no backward formulas: each node's JVP rule is run on
    symbolic tangents, which records the rule's linear operations as a small
    program, and the backward pass runs that program transposed. This returns
    both, as text: the JVP program of the whole graph in forward order (one
    block per node, tangents ``u0, u1, ...`` of the leaves and ``t1, t2, ...``
    of the intermediate values; ``c0, c1, ...`` are the coefficients the rule
    computed from the saved values, ``a0, ...`` the other values it used),
    then its transpose in backward order, where each equation becomes the
    transpose rule ``T[prim]`` of its primitive applied to the cotangent.

    Parameters
    ----------
    tensor : Tensor
        A tensor with a ``grad_fn`` whose saved values are still there (before
        ``backward``, or after one with ``retain_graph=True``).

    Returns
    -------
    str

    Raises
    ------
    RuntimeError
        If ``tensor`` has no graph, or its saved values were freed.

    Examples
    --------
    >>> import dualad as da, dualad.numpy as dnp
    >>> x = da.tensor([0.5, 1.0], requires_grad=True)
    >>> print(da.graph.linear_program(dnp.sin(x) * 3.0))
    JVP program (tangents, forward):
      # SinBackward0
      t1 = multiply(u0, c0)        c0: (2,) float64
      # MultiplyBackward0
      t2 = multiply(t1, a0)        a0: 3.0
    Transposed program (cotangents, backward):
      # MultiplyBackward0
      ct[t1] += T[multiply](ct[t2], a0)
      # SinBackward0
      ct[u0] += T[multiply](ct[t1], c0)
    """
    if not isinstance(tensor, Tensor) or tensor.grad_fn is None:
        raise RuntimeError("linear_program: the tensor has no backward graph (no grad_fn).")
    nodes: dict[int, Any] = {}
    stack = [tensor.grad_fn]
    while stack:
        n = stack.pop()
        if id(n) in nodes or n.name() == "AccumulateGrad":
            continue
        nodes[id(n)] = n
        stack += [e for e, _ in n.next_functions if e is not None]
    order = sorted(nodes.values(), key=lambda n: n.seq)  # creation order is forward order
    text = _ProgramText()
    fwd, rev_blocks = ["JVP program (tangents, forward):"], []
    for n in order:
        f, r = text.node(n)
        fwd += f
        rev_blocks.append(r)
    lines = fwd + ["Transposed program (cotangents, backward):"]
    for block in reversed(rev_blocks):
        lines += block
    return "\n".join(lines)


class _ProgramText:
    """``linear_program``'s text, node by node in forward order: the names of tangents
    (``t1``, ...; a leaf's ``u0``, ...) and of constants (arrays ``c0``, ..., other values
    ``a0``, ...), and the placeholders traced so far (kept alive, so that their ids stay
    unique)."""

    def __init__(self) -> None:
        self.names: dict[Any, str] = {}  # id(placeholder) or (id(node), k) -> tangent name
        self.leaves: dict[int, str] = {}
        self.consts: dict[int, str] = {}
        self.count = 0
        self.keep: list[Any] = []

    def fresh(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def arg_text(self, a: Any, note: list[str]) -> str:
        """The name of argument ``a`` of an equation; a constant's first use adds its
        description to ``note``."""
        consts = self.consts
        if is_lin(a):
            return self.names[id(a)]
        if isinstance(a, Tensor):
            if id(a) not in consts:
                consts[id(a)] = f"c{sum(1 for v in consts.values() if v[0] == 'c')}"
                note.append(f"{consts[id(a)]}: {_shape(a.shape)} {a.dtype}")
            return consts[id(a)]
        if id(a) not in consts:
            consts[id(a)] = f"a{sum(1 for v in consts.values() if v[0] == 'a')}"
            note.append(f"{consts[id(a)]}: {a!r}")
        return consts[id(a)]

    def placeholders(self, n: Any) -> list[Any]:
        """A placeholder per input of node ``n`` with an edge, named as the tangent its
        edge brings (a leaf's ``u<k>``, or the output of the node it comes from)."""
        lins = []
        for aval, edge in zip(n.avals, n.edges, strict=True):
            if edge is None or aval is None:
                lins.append(None)
                continue
            p = placeholder(*aval)
            src, nr = edge
            if src.name() == "AccumulateGrad":
                self.names[id(p)] = self.leaves.setdefault(id(src), f"u{len(self.leaves)}")
            else:
                self.names[id(p)] = self.names[(id(src), nr)]
            lins.append(p)
        return lins

    def node(self, n: Any) -> tuple[list[str], list[str]]:
        """The lines of node ``n``'s JVP program and of its transpose."""
        if n.saved is None:
            raise RuntimeError(
                "linear_program: the graph's saved values were freed by backward; call it "
                "before backward, or run backward with retain_graph=True."
            )
        names = self.names
        lins = self.placeholders(n)
        primals, out = n._unpack()
        t, prog = linearize(n.name(), lambda: n.prim.jvp(primals, lins, out, **n.params))
        self.keep.append((lins, prog, t))
        fwd = [f"  # {n.name()}"]
        rev = [f"  # {n.name()}"]
        for prim, args, _params, o in prog:
            names[id(o)] = self.fresh()
            note: list[str] = []
            text = ", ".join(self.arg_text(a, note) for a in args)
            line = f"  {names[id(o)]} = {prim.name}({text})"
            fwd.append(line + ("" if not note else " " * max(2, 30 - len(line)) + "; ".join(note)))
            others = ", ".join(self.arg_text(a, []) for a in args if not is_lin(a))
            for a in args:
                if is_lin(a):
                    rev.insert(1, f"  ct[{names[id(a)]}] += T[{prim.name}](ct[{names[id(o)]}]"
                                  + (f", {others}" if others else "") + ")")
        outs = t if n.prim.multi else (t,)
        for k, o in enumerate(outs):
            names[(id(n), k)] = names[id(o)] if is_lin(o) else "0"
        return fwd, rev
