"""Pictures of rewrites: a graph before and after, and the steps of a trace.

``rewrite_dot`` draws the graph before rewriting beside the graph after, on one canvas.
Each rule that fired gets a colour: on the left, the nodes it replaced; on the right, the
nodes it put in their place, labelled with its name (a node a later rule replaced again
shows the later rule). A legend lists the rules with their counts. ``trace_dot`` draws
each rule application of a trace as a small before → after pair.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewritekit.ir import Var
from rewritekit.ir.dot import MAX_NODES, TIMES, Canvas, Mark
from rewritekit.rules.trace import TraceEntry

__all__ = ["rewrite_dot", "rule_colours", "trace_dot"]

#: Fill colours for the rules of a picture, in the order they first fired.
PALETTE = (
    "#ffb3a7",
    "#ffd27f",
    "#b5e5a4",
    "#a7d3ff",
    "#d9b8ff",
    "#ffc2e2",
    "#c9f0ec",
    "#f5e6a8",
    "#ffcf9e",
    "#c4c9ff",
)


def rule_colours(entries: Sequence[TraceEntry]) -> dict[str, str]:
    """A colour per rule, in the order the rules first fired (the palette repeats)."""
    colours: dict[str, str] = {}
    for entry in entries:
        if entry.rule not in colours:
            colours[entry.rule] = PALETTE[len(colours) % len(PALETTE)]
    return colours


def rewrite_dot(
    before: Sequence[Var],
    after: Sequence[Var],
    entries: Sequence[TraceEntry],
    *,
    max_nodes: int = MAX_NODES,
    title: str | None = None,
) -> str:
    """DOT text of ``before`` and ``after`` side by side, coloured by ``entries``.

    Args:
        before: the outputs before rewriting.
        after: the outputs after, one per output of ``before``.
        entries: the trace of the rewrite (rule, before, after).
        max_nodes: boxes per side before folding.
        title: a caption.
    """
    colours = rule_colours(entries)
    replaced: dict[Var, Mark] = {}
    made: dict[Var, Mark] = {}
    for entry in entries:
        colour = colours[entry.rule]
        replaced.setdefault(entry.before, Mark(colour, f"replaced by {entry.rule}"))
        made[entry.after] = Mark(colour, f"← {entry.rule}")
    labels = [out.name or f"output {i}" for i, out in enumerate(before)]
    canvas = Canvas()
    canvas.open_cluster("before rewriting", 'style="rounded,dashed", color="#999999"')
    canvas.draw(list(before), marks=replaced, max_nodes=max_nodes, output_labels=labels)
    canvas.close_cluster()
    canvas.boxes = 0  # each side has its own budget
    canvas.open_cluster("after rewriting", 'style="rounded,dashed", color="#999999"')
    canvas.draw(list(after), marks=made, max_nodes=max_nodes, output_labels=labels)
    canvas.close_cluster()
    _legend(canvas, entries, colours)
    return canvas.text(title)


def trace_dot(
    entries: Sequence[TraceEntry],
    *,
    max_steps: int = 24,
    depth: int = 3,
    title: str | None = None,
) -> str:
    """DOT text of the first ``max_steps`` rule applications of a trace, each a cluster
    holding the term it matched and the term it built (``depth`` levels of each)."""
    canvas = Canvas()
    colours = rule_colours(entries)
    for number, entry in enumerate(entries[:max_steps], 1):
        where = f" (in {entry.where})" if entry.where else ""
        canvas.open_cluster(f"{number}. {entry.rule}{where}")
        mark = {entry.before: Mark(colours[entry.rule]), entry.after: Mark(colours[entry.rule])}
        canvas.boxes = 0  # each step has its own budget
        (matched,) = canvas.draw(
            [entry.before], marks=mark, max_depth=depth - 1, output_labels=["matched"]
        )
        (built,) = canvas.draw(
            [entry.after], marks=mark, max_depth=depth - 1, output_labels=["built"]
        )
        canvas.line(f'{{rank=same; {matched} -> {built} [style=bold, color="#444444"];}}')
        canvas.close_cluster()
    if len(entries) > max_steps:
        canvas.node('shape=plaintext, fontcolor="#555555"', f"… {len(entries) - max_steps} more")
    if not entries:
        canvas.node("shape=plaintext", "no rule fired")
    return canvas.text(title)


def _legend(canvas: Canvas, entries: Sequence[TraceEntry], colours: dict[str, str]) -> None:
    if not entries:
        canvas.node("shape=plaintext", "no rule fired")
        return
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.rule] = counts.get(entry.rule, 0) + 1
    canvas.open_cluster("rules that fired")
    previous = None
    for rule, count in counts.items():
        times = f" {TIMES}{count}" if count > 1 else ""
        style = f'shape=box, style="rounded,filled", fillcolor="{colours[rule]}"'
        box = canvas.node(style, f"{rule}{times}")
        if previous is not None:  # one column
            canvas.line(f"{previous} -> {box} [style=invis];")
        previous = box
    canvas.close_cluster()
