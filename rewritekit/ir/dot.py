"""Pictures of graphs: Graphviz DOT text, and ``dot`` to render it.

``graph_dot`` draws one graph: a box per Apply node (its Op and parameters), an ellipse
per input, a small box per constant use, a bold box per output; edges carry the types.
Shared nodes appear once. Inner graphs (loop bodies, branches, Blockwise cores) are
clusters beside their node, their outputs feeding it along dashed edges.

A large graph keeps the ``max_nodes`` boxes nearest its outputs, in breadth-first order,
so what is drawn is the connected part next to the outputs; the rest is folded into
dashed boxes, one per large connected region, each saying how many nodes it holds and of
which Ops. Everything here walks the graph iteratively and is linear in its size.

``Canvas`` is the shared drawing surface: the rewrite pictures of ``rules.pictures`` put
two graphs on one canvas, side by side, with marks on the nodes a rule replaced.
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from rewritekit.errors import GraphvizNotFoundError, RewritekitError
from rewritekit.ir.nodes import Apply, Constant, Var
from rewritekit.ir.printing import dprint
from rewritekit.ir.traversal import _as_outputs

__all__ = ["Canvas", "Mark", "graph_dot", "graph_html", "html_picture", "render"]

#: The default number of boxes a picture shows before it folds the rest.
MAX_NODES = 200
_FOLD_BOXES = 12  # folded regions drawn apart at most
_FOLD_REGION = 10  # nodes: a smaller folded region shares the largest region's box
_SMALL_CONSTANT = 6  # elements; a constant this small is drawn at each use, with its value
TIMES = "\N{MULTIPLICATION SIGN}"  # in counts of ops
_NOTEBOOK_NODES = 80  # boxes in a notebook cell's picture
_LABEL_WIDTH = 48  # characters of a parameter line before it is cut

_OP_STYLE = 'shape=box, style="rounded,filled", fillcolor="#e8eef7", color="#5b7bb2"'
_INPUT_STYLE = 'shape=ellipse, style=filled, fillcolor="#d8f0d8", color="#4c8c4c"'
_CONSTANT_STYLE = (
    'shape=box, style="rounded,filled", fillcolor="#f2f2f2", color="#aaaaaa", fontsize=10'
)
_OUTPUT_STYLE = 'shape=box, style="filled,bold", fillcolor="#cfe0ff", color="#1f4fa0"'
_FOLD_STYLE = 'shape=box, style="dashed,rounded", color="#888888", fontcolor="#555555"'
_EDGE_FONT = 'fontsize=9, fontcolor="#666666"'


class Mark(NamedTuple):
    """A coloured node: its fill colour and a line of text added under its label."""

    colour: str
    note: str = ""


def graph_dot(
    outputs: Var | Sequence[Var],
    *,
    inputs: Iterable[Var] | None = None,
    max_nodes: int = MAX_NODES,
    max_depth: int | None = None,
    highlight: Any = None,
    title: str | None = None,
) -> str:
    """Graphviz DOT text of the graph of ``outputs``.

    Args:
        outputs: one Var or several.
        inputs: Vars to draw as inputs, leaving out the graph above them (by default the
            graph is drawn down to its true inputs).
        max_nodes: boxes to draw before folding the rest (counted over ops, inputs,
            constants and inner graphs).
        max_depth: fold everything more than this many nodes below the outputs.
        highlight: a Var, several, or a mapping from Var to a note: those nodes are
            filled orange (with the note under their label).
        title: a caption for the picture.
    """
    outs = _as_outputs(outputs, "to_dot")
    canvas = Canvas()
    canvas.draw(
        outs,
        stop=_stop_set(inputs),
        marks=highlight_marks(highlight),
        max_nodes=_positive(max_nodes, "max_nodes"),
        max_depth=max_depth,
    )
    return canvas.text(title)


def highlight_marks(highlight: Any) -> dict[Var, Mark]:
    """``highlight`` as marks: orange fill, with the note where a mapping gives one."""
    if highlight is None:
        return {}
    if isinstance(highlight, Var):
        return {highlight: Mark("#ffc861")}
    if isinstance(highlight, Mapping):
        items = highlight.items()
    else:
        items = ((var, "") for var in highlight)
    marks = {}
    for var, note in items:
        if not isinstance(var, Var):
            raise TypeError(f"to_dot: highlight must hold Vars, got {type(var).__name__}")
        marks[var] = Mark("#ffc861", str(note))
    return marks


def html_picture(dot: str, text: str) -> str:
    """A notebook cell's HTML: the SVG of ``dot`` where Graphviz is installed, else
    ``text`` as preformatted text."""
    try:
        svg = render(dot, "svg").decode()
    except GraphvizNotFoundError:
        return f"<pre>{html.escape(text)}</pre>"
    return svg[svg.find("<svg") :]  # without the XML prologue and doctype


def graph_html(outputs: Var | Sequence[Var]) -> str:
    """What a notebook shows for a graph: its picture (``_NOTEBOOK_NODES`` boxes at most),
    or its ``dprint`` tree where Graphviz is missing."""
    return html_picture(graph_dot(outputs, max_nodes=_NOTEBOOK_NODES), dprint(outputs, max_depth=8))


def render(dot: str, format: str = "svg") -> bytes:
    """Run Graphviz's ``dot`` on DOT text; returns the picture's bytes.

    Raises:
        GraphvizNotFoundError: the ``dot`` program is not on ``PATH``.
    """
    program = shutil.which("dot")
    if program is None:
        raise GraphvizNotFoundError(
            "drawing a picture needs the Graphviz program `dot`, which is not on PATH: "
            "install it with `apt-get install graphviz` (Debian, Ubuntu), "
            "`brew install graphviz` (macOS) or `conda install graphviz`; "
            "rk.to_dot gives the DOT text without it"
        )
    done = subprocess.run(
        [program, f"-T{format}"], input=dot.encode(), capture_output=True, check=False
    )
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip()
        raise RewritekitError(f"Graphviz `dot -T{format}` failed: {message}")
    return done.stdout


class Canvas:
    """DOT statements being written, with fresh node ids; ``text`` wraps them up."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count = 0
        self._indent = "  "
        self.boxes = 0  # boxes drawn so far
        self.folded = 0  # nodes folded away

    def fresh(self) -> str:
        self._count += 1
        return f"n{self._count}"

    def line(self, text: str) -> None:
        self.lines.append(self._indent + text)

    def node(self, style: str, label: str, tooltip: str | None = None) -> str:
        name = self.fresh()
        tip = f", tooltip={_quote(tooltip)}" if tooltip else ""
        self.line(f"{name} [{style}, label={_quote(label)}{tip}];")
        self.boxes += 1
        return name

    def edge(self, source: str, target: str, label: str = "", style: str = "") -> None:
        attrs = [f"label={_quote(label)}", _EDGE_FONT] if label else []
        if style:
            attrs.append(style)
        self.line(f"{source} -> {target}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")

    def open_cluster(self, label: str, style: str = 'style=rounded, color="#999999"') -> None:
        self.line(f"subgraph cluster_{self.fresh()} {{")
        self._indent += "  "
        self.line(f'graph [label={_quote(label)}, {style}, fontcolor="#444444"];')

    def close_cluster(self) -> None:
        self._indent = self._indent[:-2]
        self.line("}")

    def text(self, title: str | None = None) -> str:
        head = [
            "digraph rewritekit {",
            '  graph [rankdir=TB, fontname="Helvetica", nodesep=0.25, ranksep=0.35];',
            '  node [fontname="Helvetica", fontsize=11, margin="0.08,0.04"];',
            '  edge [fontname="Helvetica", arrowsize=0.6, color="#777777"];',
        ]
        if title:
            head.append(f"  labelloc=t; label={_quote(title)};")
        return "\n".join([*head, *self.lines, "}"]) + "\n"

    # --- one graph ----------------------------------------------------------------------

    def draw(
        self,
        outs: Sequence[Var],
        *,
        stop: frozenset[Var] = frozenset(),
        marks: Mapping[Var, Mark] | None = None,
        max_nodes: int = MAX_NODES,
        max_depth: int | None = None,
        output_labels: Sequence[str] | None = None,
    ) -> list[str]:
        """Draw the graph of ``outs`` with at most ``max_nodes`` boxes; returns the ids of
        the output boxes."""
        return _Drawing(self, stop, marks or {}, max_depth).run(outs, max_nodes, output_labels)


class _Drawing:
    """One graph on a canvas: choose the boxes, fold the rest, write nodes and edges."""

    def __init__(
        self,
        canvas: Canvas,
        stop: frozenset[Var],
        marks: Mapping[Var, Mark],
        max_depth: int | None,
        bodies: dict[Any, list[str]] | None = None,
    ) -> None:
        self.canvas = canvas
        self.stop = stop
        self.marks = marks
        self.max_depth = max_depth
        self.ids: dict[Any, str] = {}  # Apply or leaf Var -> node id
        self.fold_of: dict[Apply, str] = {}  # folded Apply -> its fold box id
        # inner graph -> the ids its outputs start from: a body shared by several nodes
        # (hash-consing makes equal bodies one object) is drawn once
        self.bodies: dict[Any, list[str]] = {} if bodies is None else bodies

    def owner(self, var: Var) -> Apply | None:
        return None if var in self.stop else var.owner

    def run(
        self, outs: Sequence[Var], max_nodes: int, output_labels: Sequence[str] | None
    ) -> list[str]:
        order, depth = self.breadth_first(outs)
        kept, expanded = self.choose(order, depth, max_nodes)
        self.leaves(order, outs)
        self.fold([node for node in order if node not in kept])
        for node in order:
            if node in kept:
                self.apply_box(node, expanded.get(node))
        for node in order:
            if node in kept:
                self.input_edges(node)
        boxes = []
        for position, out in enumerate(outs):
            label = output_labels[position] if output_labels else out.name or f"output {position}"
            box = self.canvas.node(_OUTPUT_STYLE, f"{label}\n{out.type}")
            self.canvas.edge(self.source(out), box, _out_suffix(out))
            boxes.append(box)
        return boxes

    def breadth_first(self, outs: Sequence[Var]) -> tuple[list[Apply], dict[Apply, int]]:
        depth: dict[Apply, int] = {}
        queue: deque[Apply] = deque()
        for out in outs:
            node = self.owner(out)
            if node is not None and node not in depth:
                depth[node] = 0
                queue.append(node)
        order = []
        while queue:
            node = queue.popleft()
            order.append(node)
            for var in node.inputs:
                below = self.owner(var)
                if below is not None and below not in depth:
                    depth[below] = depth[node] + 1
                    queue.append(below)
        return order, depth

    def choose(
        self, order: list[Apply], depth: dict[Apply, int], max_nodes: int
    ) -> tuple[set[Apply], dict[Apply, int]]:
        """The nodes drawn: a prefix of the breadth-first order that fits ``max_nodes``
        boxes; and those whose inner graphs are drawn too, with the boxes they may use."""
        budget = max_nodes - self.canvas.boxes
        kept: set[Apply] = set()
        expanded: dict[Apply, int] = {}
        for node in order:
            if self.max_depth is not None and depth[node] > self.max_depth:
                break
            cost = 1 + sum(1 for v in node.inputs if _per_use(v) and v not in self.stop)
            if cost > budget:
                break
            kept.add(node)
            budget -= cost
            inner = _inner_size(node)
            if inner and inner + 2 <= budget // 2:  # a body may take half of what is left
                expanded[node] = inner + 2
                budget -= inner + 2
        return kept, expanded

    def leaves(self, order: list[Apply], outs: Sequence[Var]) -> None:
        """One box per input (every input the graph reads, kept or folded) and per large
        constant; small constants are drawn at each use instead."""
        seen = dict.fromkeys(v for v in outs if self.owner(v) is None)
        for node in order:
            for var in node.inputs:
                if self.owner(var) is None:
                    seen[var] = None
        for var in seen:
            if isinstance(var, Constant):
                if not _per_use(var):
                    self.ids[var] = self.canvas.node(_CONSTANT_STYLE, _constant_label(var))
            else:
                label = f"{var.name or '<input>'}\n{var.type}"
                self.ids[var] = self.canvas.node(self.leaf_style(var, _INPUT_STYLE), label)

    def leaf_style(self, var: Var, style: str) -> str:
        mark = self.marks.get(var)
        return style if mark is None else _filled(style, mark.colour)

    def fold(self, dropped: list[Apply]) -> None:
        """Fold the nodes not drawn into boxes labelled with counts: one per large
        connected region (``_FOLD_BOXES`` at most); small regions, such as a node whose
        inputs are all drawn, join the largest region's box."""
        if not dropped:
            return
        parent = {node: node for node in dropped}

        def root(node: Apply) -> Apply:
            while parent[node] is not node:
                parent[node] = parent[parent[node]]
                node = parent[node]
            return node

        for node in dropped:
            for var in node.inputs:
                below = self.owner(var)
                if below is not None and below in parent:
                    a, b = root(node), root(below)
                    if a is not b:
                        parent[a] = b
        regions: dict[Apply, list[Apply]] = {}
        for node in dropped:
            regions.setdefault(root(node), []).append(node)
        groups = sorted(regions.values(), key=len, reverse=True)
        large = [g for g in groups[1:_FOLD_BOXES] if len(g) >= _FOLD_REGION]
        rest = [node for g in groups[1 + len(large) :] for node in g]
        groups = [groups[0] + rest, *large]  # small regions join the largest one's box
        for group in groups:
            ops = Counter(node.op.name for node in group)
            common = ", ".join(f"{name} {TIMES}{count:,}" for name, count in ops.most_common(3))
            more = ", …" if len(ops) > 3 else ""
            label = f"⋯ {len(group):,} nodes folded\n{common}{more}"
            box = self.canvas.node(_FOLD_STYLE, label)
            self.canvas.folded += len(group)
            for node in group:
                self.fold_of[node] = box
        linked: set[tuple[str, str]] = set()
        for node in dropped:  # the inputs folded regions read
            box = self.fold_of[node]
            for var in node.inputs:
                if self.owner(var) is None and var in self.ids and (var, box) not in linked:
                    linked.add((var, box))
                    self.canvas.edge(self.ids[var], box, style="style=dashed")

    def apply_box(self, node: Apply, inner_budget: int | None) -> None:
        op = node.op
        label, tooltip = _op_label(op)
        notes = [self.marks[out] for out in node.outputs if out in self.marks]
        style = _OP_STYLE
        if notes:
            style = _filled(style, notes[0].colour)
            label += "".join(f"\n{note}" for note in dict.fromkeys(m.note for m in notes) if note)
        box = self.ids[node] = self.canvas.node(style, label, tooltip)
        graphs = getattr(op, "inner_graphs", ()) or ()
        names = getattr(op, "_graph_props", ()) or ()
        for position, graph in enumerate(graphs):
            name = names[position] if position < len(names) else f"graph {position}"
            title = f"{op.name} {name}"
            if inner_budget is None:
                size = _graph_size(graph.outputs)
                folded = f"{title}\n⋯ {size:,} nodes (raise max_nodes to draw them)"
                self.canvas.edge(self.canvas.node(_FOLD_STYLE, folded), box, style="style=dashed")
                continue
            sources = self.bodies.get(graph)
            if sources is None:
                sources = self.bodies[graph] = self.cluster(title, graph, inner_budget)
            for index, source in enumerate(sources):
                label = f"{name} out {index}" if len(sources) > 1 else name
                self.canvas.edge(source, box, label, "style=dashed")

    def cluster(self, title: str, graph: Any, inner_budget: int) -> list[str]:
        """Draw an inner graph as a cluster; returns the ids its outputs start from."""
        self.canvas.open_cluster(title)
        inner = _Drawing(self.canvas, frozenset(), self.marks, None, self.bodies)
        order, _ = inner.breadth_first(graph.outputs)
        inner.leaves(order, graph.outputs)
        for below in order:
            inner.apply_box(below, inner_budget)
        for below in order:
            inner.input_edges(below)
        sources = [inner.source(out) for out in graph.outputs]
        self.canvas.close_cluster()
        return sources

    def source(self, var: Var) -> str:
        """The id of the box an edge carrying ``var`` starts from (drawing a small constant
        anew at each use)."""
        node = self.owner(var)
        if node is None:
            if var in self.ids:
                return self.ids[var]
            return self.canvas.node(self.leaf_style(var, _CONSTANT_STYLE), _constant_label(var))
        return self.ids.get(node) or self.fold_of[node]

    def input_edges(self, node: Apply) -> None:
        target = self.ids[node]
        for var in node.inputs:
            below = self.owner(var)
            style = "style=dashed" if below is not None and below not in self.ids else ""
            self.canvas.edge(self.source(var), target, _out_suffix(var), style)


def _filled(style: str, colour: str) -> str:
    """``style`` with its fill colour replaced by ``colour``."""
    return re.sub(r'fillcolor="[^"]*"', f'fillcolor="{colour}"', style)


def _per_use(var: Var) -> bool:
    return isinstance(var, Constant) and var.data.size <= _SMALL_CONSTANT


def _inner_size(node: Apply) -> int:
    graphs = getattr(node.op, "inner_graphs", ()) or ()
    return sum(_graph_size(graph.outputs) for graph in graphs)


def _graph_size(outputs: Sequence[Var]) -> int:
    """Apply nodes and leaves of a graph (inner graphs count with their nodes)."""
    seen: set[int] = set()
    stack = list(outputs)
    count = 0
    while stack:
        var = stack.pop()
        key = id(var.owner) if var.owner is not None else id(var)
        if key in seen:
            continue
        seen.add(key)
        count += 1
        if var.owner is not None:
            stack.extend(var.owner.inputs)
            count += _inner_size(var.owner)
    return count


def _op_label(op: Any) -> tuple[str, str]:
    """The Op's name, then one line per parameter (cut to ``_LABEL_WIDTH``); and the full
    text for the tooltip."""
    lines = [op.name]
    graphs = {id(g) for g in getattr(op, "inner_graphs", ()) or ()}
    for prop in type(op).__props__:
        value = getattr(op, prop)
        if id(value) in graphs or (isinstance(value, tuple) and graphs & set(map(id, value))):
            continue
        text = f"{prop}={value!r}"
        lines.append(text if len(text) <= _LABEL_WIDTH else text[: _LABEL_WIDTH - 1] + "…")
    return "\n".join(lines), str(op)


def _constant_label(var: Var) -> str:
    if var.name:
        return var.name
    data = var.data  # type: ignore[attr-defined]
    if data.size == 1 and data.ndim == 0:
        return repr(data.item())
    if data.size <= _SMALL_CONSTANT:
        return np.array2string(data, separator=", ")
    return f"constant\n{var.type}"


def _out_suffix(var: Var) -> str:
    """An edge's label: the type, after the output's index for multi-output nodes."""
    if var.owner is not None and var.owner.nout > 1:
        return f"{var.index}: {var.type}"
    return str(var.type)


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _stop_set(inputs: Iterable[Var] | None) -> frozenset[Var]:
    if inputs is None:
        return frozenset()
    found = []
    for var in inputs:
        if not isinstance(var, Var):
            raise TypeError(f"to_dot: inputs must be Vars, got {type(var).__name__}")
        found.append(var)
    return frozenset(found)


def _positive(value: int, what: str) -> int:
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"to_dot: {what} must be a positive int, got {value!r}")
    return value
