"""Pictures of graphs: the DOT text checked structurally, and rendered where Graphviz is."""

from __future__ import annotations

import html
import re
import shutil

import numpy as np
import pytest
from hypothesis import given, settings

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import Constant, toposort
from rewritekit.ir import dot as dot_module
from rewritekit.ir.dot import TIMES
from tests.fuzz.graphs import graphs

HAVE_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(
    not HAVE_DOT, reason="Graphviz's `dot` is not installed (apt-get install graphviz)"
)

_NODE = re.compile(r"^\s*(n\d+) \[(.*)\];$")
_EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)(?: \[(.*)\])?;$")
_LABEL = re.compile(r'label="((?:[^"\\]|\\.)*)"')


class Dot:
    """A DOT text parsed into its nodes (id -> label, attributes), edges and clusters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.nodes: dict[str, str] = {}
        self.attrs: dict[str, str] = {}
        self.edges: list[tuple[str, str, str]] = []
        self.clusters: list[str] = []
        for line in text.splitlines():
            if (node := _NODE.match(line)) is not None:
                label = _LABEL.search(node[2])
                assert label is not None, line
                self.nodes[node[1]] = label[1].replace("\\n", "\n").replace('\\"', '"')
                self.attrs[node[1]] = node[2]
            elif (edge := _EDGE.match(line.removeprefix("{rank=same; "))) is not None:
                label = _LABEL.search(edge[3] or "")
                self.edges.append((edge[1], edge[2], label[1] if label else ""))
            elif "subgraph cluster_" in line:
                self.clusters.append(line)
            elif "graph [label=" in line:
                self.clusters[-1] = _LABEL.search(line)[1]  # type: ignore[index]
        assert text.startswith("digraph") and text.rstrip().endswith("}")

    def labelled(self, first_line: str) -> list[str]:
        """The ids of the boxes whose label starts with ``first_line``."""
        return [n for n, label in self.nodes.items() if label.split("\n")[0] == first_line]

    def styled(self, colour: str) -> list[str]:
        """The ids of the boxes filled with ``colour`` (or whose fill starts with it)."""
        return [n for n, attrs in self.attrs.items() if f'fillcolor="{colour}' in attrs]


def _thirty_nodes():
    """A layer's loss and the gradient of its activations: 29 nodes, sharing ``tanh``."""
    X, w, b = rt.matrix("X"), rt.vector("w"), rt.scalar("b")
    hidden = rt.tanh(X @ w + b)
    loss = rt.mean(rt.log(1 + rt.exp(-hidden))) + 0.01 * rt.sum(w**2)
    return [X, w, b], [loss, rk.grad(rt.sum(hidden), w)]


def test_a_graph_draws_every_node_once_with_its_op_and_types():
    x = rt.vector("x")
    e = rt.exp(x)
    y = e * e + rt.log(e)  # exp(x) shared three times
    dot = Dot(rk.to_dot(y))
    assert len(dot.labelled("exp")) == 1
    assert len(dot.labelled("multiply")) == 1 and len(dot.labelled("log")) == 1
    assert len(dot.labelled("x")) == 1 and dot.nodes[dot.labelled("x")[0]] == "x\nfloat64[?]"
    (exp,) = dot.labelled("exp")
    assert sum(1 for s, _, _ in dot.edges if s == exp) == 3  # e * e and log(e)
    assert all(label == "float64[?]" for _, _, label in dot.edges)
    (out,) = dot.labelled("output 0")
    assert "bold" in dot.attrs[out]


def test_the_thirty_node_graph_has_one_box_per_node_and_edge_per_input():
    inputs, outputs = _thirty_nodes()
    nodes = toposort(outputs)
    assert len(nodes) == 29
    dot = Dot(rk.to_dot(outputs))
    ops = [n for n, a in dot.attrs.items() if "#e8eef7" in a]
    assert len(ops) == len(nodes)
    assert sorted(dot.nodes[n].split("\n")[0] for n in ops) == sorted(n.op.name for n in nodes)
    small = sum(1 for n in nodes for v in n.inputs if isinstance(v, Constant) and v.data.size <= 6)
    constants = [n for n, a in dot.attrs.items() if "#f2f2f2" in a]
    assert len(constants) == small  # each use of a small constant is its own box
    assert len(dot.edges) == sum(len(n.inputs) for n in nodes) + len(outputs)
    for var in inputs:
        assert len(dot.labelled(var.name)) == 1
    assert not dot.clusters


def test_parameters_and_multi_output_indices_are_labelled():
    x = rt.matrix("x")
    y = rt.sum(x, axis=1)
    values, vectors = rt.linalg.eigh(x @ x.T)
    dot = Dot(rk.to_dot([y, values, vectors]))
    (total,) = dot.labelled("sum")
    assert "axis=(1,)" in dot.nodes[total]
    (eig,) = dot.labelled("eigh")
    assert "lower=True" in dot.nodes[eig]
    assert {label for s, _, label in dot.edges if s == eig} == {"0: float64[?]", "1: float64[?,?]"}


def test_inner_graphs_are_clusters_feeding_their_node():
    x, a = rt.vector("x"), rt.scalar("a")

    def step(carry, xi):
        new = carry * a + rt.log(1 + rt.exp(xi))
        return new, new * 2

    last, ys = rk.scan(step, rt.constant(0.0), x)
    dot = Dot(rk.to_dot([last, ys]))
    assert dot.clusters == ["scan body"]
    (scan,) = dot.labelled("scan")
    body_edges = [label for _, t, label in dot.edges if t == scan and "body" in label]
    assert sorted(body_edges) == ["body out 0", "body out 1"]
    assert {"%0\nfloat64[]", "%1\nfloat64[]"} <= set(dot.nodes.values())


def test_a_body_two_loops_share_is_drawn_once():
    x, z = rt.vector("x"), rt.vector("z")

    def step(carry, v):
        return carry * 0.5 + rt.exp(v), carry

    a, _ = rk.scan(step, rt.constant(0.0), x)
    b, _ = rk.scan(step, rt.constant(0.0), z)
    dot = Dot(rk.to_dot([a, b]))
    assert dot.clusters == ["scan body"] and len(dot.labelled("exp")) == 1
    scans = dot.labelled("scan")
    assert len(scans) == 2
    for scan in scans:
        assert sorted(lb for _, t, lb in dot.edges if t == scan and "body" in lb) == [
            "body out 0",
            "body out 1",
        ]


def test_a_large_graph_folds_what_is_past_max_nodes_and_counts_it():
    x = rt.vector("x")
    y = x
    for _ in range(100):
        y = 0.5 * rt.log(1 + rt.exp(y)) + y / 2 - rt.exp(-y * y) * 0.1
    nodes = toposort(y)
    dot = Dot(rk.to_dot(y, max_nodes=120))
    folds = [n for n, a in dot.attrs.items() if "dashed" in a]
    assert len(folds) == 1
    label = dot.nodes[folds[0]]
    folded = int(re.match(r"⋯ ([\d,]+) nodes folded", label)[1].replace(",", ""))  # type: ignore[index]
    drawn = [n for n, a in dot.attrs.items() if "#e8eef7" in a]
    assert folded + len(drawn) == len(nodes)
    assert f"multiply {TIMES}" in label
    assert len(dot.nodes) <= 120 + 3  # the boxes, the fold, the input and the output
    assert any(s == dot.labelled("x")[0] and t == folds[0] for s, t, _ in dot.edges)


def test_max_depth_and_inputs_cut_the_drawing():
    x = rt.vector("x")
    h = rt.exp(x) + 1.0
    y = rt.sum(rt.log(h) * 2.0)
    shallow = Dot(rk.to_dot(y, max_depth=1))
    assert shallow.labelled("sum") and shallow.labelled("multiply")
    assert not shallow.labelled("exp")
    assert any("nodes folded" in label for label in shallow.nodes.values())
    cut = Dot(rk.to_dot(y, inputs=[h]))
    assert not cut.labelled("exp") and not cut.labelled("x")
    assert not any("folded" in label for label in cut.nodes.values())
    assert len(cut.labelled("<input>")) == 1  # h, drawn as an input


def test_highlight_fills_the_nodes_with_their_notes():
    x = rt.vector("x")
    e = rt.exp(x)
    y = rt.log(1 + e)
    dot = Dot(rk.to_dot(y, highlight={e: "overflows at 710"}))
    (marked,) = dot.styled("#ffc861")
    assert dot.nodes[marked] == "exp\noverflows at 710"
    assert len(Dot(rk.to_dot(y, highlight=[e, x])).styled("#ffc861")) == 2


def test_a_rewrite_picture_colours_what_each_rule_replaced_and_made():
    x = rt.vector("x")
    y = rt.log(1 + rt.exp(x))
    f = rk.function([x], y, backend="numpy")
    assert f.trace
    dot = Dot(rk.to_dot(f, rewrites=True))
    assert dot.clusters[:2] == ["before rewriting", "after rewriting"]
    assert dot.clusters[-1] == "rules that fired"
    fired = f.trace.fired()
    legend = [dot.nodes[n] for n in dot.styled("#") if dot.nodes[n].split(f" {TIMES}")[0] in fired]
    assert sorted(legend) == sorted(f"{r} {TIMES}{c}" if c > 1 else r for r, c in fired.items())
    (log,) = dot.labelled("log")
    (softplus,) = dot.labelled("softplus")
    rule = f.trace[0].rule
    assert f"replaced by {rule}" in dot.nodes[log] and f"← {rule}" in dot.nodes[softplus]
    colour = re.search(r'fillcolor="(#\w+)"', dot.attrs[log])[1]  # type: ignore[index]
    assert colour in dot.attrs[softplus] and colour != "#e8eef7"


def test_a_rewrite_picture_of_rk_rewrite_and_the_trace_picture():
    x = rt.vector("x")
    y = rt.log(1 + rt.exp(x))
    after, trace = rk.rewrite(y, "default", trace=True)
    dot = Dot(rk.to_dot(y, after=after, trace=trace))
    assert dot.labelled("softplus") and dot.labelled("log")
    steps = Dot(rk.to_dot(trace))
    assert len(steps.clusters) == len(trace)
    assert steps.labelled("matched") and steps.labelled("built")
    with pytest.raises(ValueError, match="outputs before rewriting"):
        rk.to_dot([y, y], after=after, trace=trace)


def test_bad_arguments_name_themselves(tmp_path, monkeypatch):
    x = rt.vector("x")
    with pytest.raises(TypeError, match="to_dot: expected a Var"):
        rk.to_dot("x")
    with pytest.raises(ValueError, match="max_nodes must be a positive int"):
        rk.to_dot(x, max_nodes=0)
    with pytest.raises(TypeError, match="highlight must hold Vars"):
        rk.to_dot(x, highlight=["x"])
    with pytest.raises(TypeError, match="give a compiled function"):
        rk.to_dot(x, rewrites=True)
    with pytest.raises(ValueError, match=r"picture format from 'graph\.jpeg'"):
        rk.draw(x, tmp_path / "graph.jpeg")
    monkeypatch.setattr(dot_module.shutil, "which", lambda name: None)
    with pytest.raises(rk.GraphvizNotFoundError, match="apt-get install graphviz"):
        rk.draw(rt.exp(x), tmp_path / "graph.svg")
    assert (tmp_path / "graph.dot").exists() is False
    rk.draw(rt.exp(x), tmp_path / "graph.dot")  # DOT text needs no Graphviz
    assert (tmp_path / "graph.dot").read_text().startswith("digraph")


def test_notebooks_fall_back_to_text_without_graphviz(monkeypatch):
    monkeypatch.setattr(dot_module.shutil, "which", lambda name: None)
    x = rt.vector("x")
    y = rt.log(1 + rt.exp(x))
    assert y._repr_html_().startswith("<pre>Log float64[?]")
    f = rk.function([x], y, backend="numpy")
    assert f._repr_html_() == "<pre>Softplus float64[?]\n└─ x float64[?]</pre>"
    _, trace = rk.rewrite(y, "default", trace=True)
    assert trace._repr_html_() == f"<pre>{html.escape(rk.explain(trace))}</pre>"


def test_odd_names_are_escaped():
    x = rt.vector('a "quoted"\\name')
    dot = Dot(rk.to_dot(rt.exp(x)))
    assert len(dot.nodes) == 3
    if HAVE_DOT:
        assert dot_module.render(dot.text, "svg").startswith(b"<?xml")


@needs_dot
def test_pictures_render_as_a_person_would_see_them(tmp_path):
    inputs, outputs = _thirty_nodes()
    f = rk.function(inputs, outputs, backend="numpy")
    graph = rk.draw(outputs, tmp_path / "graph.png")
    rewrite = rk.draw_rewrite(f, tmp_path / "rewrite.png")
    for path in (graph, rewrite):
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = np.frombuffer(data[16:24], dtype=">u4")
        assert 200 < width < 20000 and 200 < height < 20000
    svg = rk.draw(outputs, tmp_path / "graph.svg").read_text()
    assert svg.count('class="node"') == len(Dot(rk.to_dot(outputs)).nodes)
    assert "tanh" in svg and "float64[?]" in svg
    x = rt.vector("x")
    y = rt.log(1 + rt.exp(x))
    assert y._repr_html_().startswith("<svg")
    assert rk.function([x], y)._repr_html_().startswith("<svg")
    assert rk.rewrite(y, "default", trace=True)[1]._repr_html_().startswith("<svg")


@settings(max_examples=25, deadline=None)
@given(graph=graphs())
def test_any_graph_is_drawn_whole_or_counted_as_folded(graph):
    nodes = toposort(graph.outputs)
    for limit in (4, 200):
        dot = Dot(rk.to_dot(graph.outputs, max_nodes=limit))
        drawn = [n for n, a in dot.attrs.items() if "#e8eef7" in a]
        folded = sum(
            int(m[1].replace(",", ""))
            for label in dot.nodes.values()
            if (m := re.match(r"⋯ ([\d,]+) nodes folded", label))
        )
        inner = sum(1 for n in nodes if getattr(n.op, "inner_graphs", None))
        assert folded + len(drawn) >= len(nodes) - inner
        assert len(drawn) <= max(limit, len(nodes) if limit == 200 else limit)
        if HAVE_DOT and limit == 4:
            dot_module.render(dot.text, "canon")  # Graphviz parses it
