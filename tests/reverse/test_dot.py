"""to_dot / render_graph: the DOT text of a backward graph, checked on its content."""

import re
import shutil

import numpy as np
import pytest

import dualad as da
import dualad.numpy as dnp


def _nodes_and_edges(dot):
    nodes = dict(re.findall(r'^\s+(n\d+) \[.*?label="(.*?)"\];$', dot, flags=re.M))
    edges = re.findall(r"^\s+(n\d+) -> (n\d+) \[dir=back, label=\"(\d+)\"\];$", dot, flags=re.M)
    return nodes, edges


def test_nodes_edges_shapes_and_saved_sizes():
    W = da.tensor(np.ones((3, 2)), requires_grad=True)
    x = da.tensor(np.arange(2.0), requires_grad=True)
    y = dnp.sum(dnp.tanh(W @ x) * 2.0)
    dot = da.graph.to_dot(y)
    assert dot.startswith("digraph backward {") and dot.rstrip().endswith("}")
    nodes, edges = _nodes_and_edges(dot)
    names = {k: v.split("\\n")[0] for k, v in nodes.items()}
    assert sorted(names.values()) == sorted(
        ["SumBackward0", "MultiplyBackward0", "TanhBackward0", "MatmulBackward0",
         "AccumulateGrad", "AccumulateGrad"])
    by_name = {v: k for k, v in names.items()}
    # the edges are the graph's next_functions: input -> consumer, labelled by input slot
    pairs = {(names[a], names[b], int(k)) for a, b, k in edges}
    assert ("MultiplyBackward0", "SumBackward0", 0) in pairs
    assert ("TanhBackward0", "MultiplyBackward0", 0) in pairs
    assert ("MatmulBackward0", "TanhBackward0", 0) in pairs
    assert len(edges) == 5  # sum<-mul, mul<-tanh, tanh<-matmul, matmul<-W, matmul<-x
    matmul = nodes[by_name["MatmulBackward0"]]
    assert "in: (3, 2) float64, (2,) float64" in matmul
    assert "in: (3,) float64, constant" in nodes[by_name["MultiplyBackward0"]]
    assert "out: (3,) float64" in matmul
    # matmul's rule reads both operands: 3*2*8 and 2*8 bytes
    assert "saved input 0: (3, 2) float64, 48 B" in matmul
    assert "saved input 1: (2,) float64, 16 B" in matmul
    # tanh's rule reads its output (1 - y**2); sum's reads nothing
    assert "saved output 0: (3,) float64, 24 B" in nodes[by_name["TanhBackward0"]]
    assert "saves nothing" in nodes[by_name["SumBackward0"]]
    leaves = [v for v in nodes.values() if v.startswith("AccumulateGrad")]
    assert sorted(leaves) == ["AccumulateGrad\\nleaf (2,) float64",
                              "AccumulateGrad\\nleaf (3, 2) float64"]


def test_shared_input_is_one_node_and_freed_values_are_said():
    x = da.tensor([1.0, 2.0], requires_grad=True)
    y = dnp.sum(dnp.sin(x) * x)
    nodes, edges = _nodes_and_edges(da.graph.to_dot(y))
    assert sum(v.startswith("AccumulateGrad") for v in nodes.values()) == 1
    assert len(edges) == 4  # x feeds sin and the product
    y.backward()
    assert "saved: freed" in da.graph.to_dot(y)


def test_sizes_follow_dtype():
    x = da.tensor(np.ones(1000, dtype=np.float32), requires_grad=True)
    dot = da.graph.to_dot(dnp.exp(x))
    assert "saved output 0: (1000,) float32, 3.9 kB" in dot


def test_leaf_and_errors():
    x = da.tensor([1.0], requires_grad=True)
    nodes, edges = _nodes_and_edges(da.graph.to_dot(x))
    assert list(nodes.values()) == ["AccumulateGrad\\nleaf (1,) float64"] and edges == []
    with pytest.raises(RuntimeError, match="does not require grad"):
        da.graph.to_dot(da.tensor([1.0]) * 2)
    with pytest.raises(TypeError, match="expected a dualad Tensor"):
        da.graph.to_dot(np.ones(2))
    with pytest.raises(ValueError, match="'svg' or 'png'"):
        da.graph.render_graph(x * 2, "g", format="pdf")


def test_render_without_dot_says_how_to_install(monkeypatch, tmp_path):
    pytest.importorskip("graphviz")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        da.graph.render_graph(da.tensor([1.0], requires_grad=True) * 2, tmp_path / "g")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_render_writes_the_picture(tmp_path, fmt):
    pytest.importorskip("graphviz")
    x = da.tensor([1.0, 2.0], requires_grad=True)
    out = da.graph.render_graph(dnp.sum(dnp.exp(x) * x), tmp_path / "graph", format=fmt)
    data = out.read_bytes()
    assert out.suffix == "." + fmt
    if fmt == "svg":
        assert b"ExpBackward0" in data and b"<svg" in data
    else:
        assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_linear_program_blocks_follow_the_graph_and_its_transpose_reaches_every_leaf():
    x = da.tensor([0.5, 1.0], requires_grad=True)
    w = da.tensor([2.0, -1.0], requires_grad=True)
    y = dnp.sum(dnp.exp(x) * w)
    text = da.graph.linear_program(y)
    fwd, rev = text.split("Transposed program (cotangents, backward):")
    # one block per node, forward in creation order, backward in the reverse order
    order = ["ExpBackward0", "MultiplyBackward0", "SumBackward0"]
    assert re.findall(r"# (\w+)", fwd) == order
    assert re.findall(r"# (\w+)", rev) == order[::-1]
    # exp's rule: one product by its coefficient; the product rule: two products and an add
    assert "t1 = multiply(u0, c0)" in fwd and "t4 = add(t2, t3)" in fwd
    # the two leaves' tangents are u0 (x) and u1 (w); the transpose sends cotangents to both
    assert "ct[u0] += T[multiply](ct[t1], c0)" in rev and "ct[u1] += T[multiply]" in rev
    eqs = re.findall(r"^  t\d+ = ", fwd, flags=re.M)
    assert len(eqs) == len(re.findall(r"^  ct\[", rev, flags=re.M)) - 1  # add has 2 inputs


def test_linear_program_needs_the_saved_values():
    x = da.tensor([0.5], requires_grad=True)
    y = dnp.sum(dnp.exp(x))
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        da.graph.linear_program(y)
    with pytest.raises(RuntimeError, match="no backward graph"):
        da.graph.linear_program(da.tensor([1.0]))
