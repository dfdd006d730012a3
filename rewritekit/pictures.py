"""Pictures of graphs and rewrites: ``rk.to_dot``, ``rk.draw``, ``rk.draw_rewrite``.

``to_dot`` gives Graphviz DOT text and needs nothing installed; ``draw`` renders it with
the Graphviz program ``dot`` (SVG, PNG, PDF, by the file's suffix). A source is a Var or
several, a compiled function (its rewritten graph, or with ``rewrites=True`` the graph
before and after rewriting side by side), or a ``RewriteTrace`` (each rule application as
a small before → after pair). What Jupyter shows for Vars, compiled functions and traces
is their ``_repr_html_`` (``ir.dot.graph_html``, ``ir.dot.html_picture``): the picture
where ``dot`` is installed, else the text views.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterable, Sequence
from typing import Any

from rewritekit.ir import Var
from rewritekit.ir.dot import MAX_NODES, graph_dot, render
from rewritekit.rules.pictures import rewrite_dot, trace_dot
from rewritekit.rules.trace import RewriteTrace, TraceEntry

__all__ = ["draw", "draw_rewrite", "to_dot"]

_FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}


def to_dot(
    source: Any,
    *,
    inputs: Iterable[Var] | None = None,
    max_nodes: int = MAX_NODES,
    max_depth: int | None = None,
    highlight: Any = None,
    rewrites: bool = False,
    after: Any = None,
    trace: Sequence[TraceEntry] | None = None,
    title: str | None = None,
) -> str:
    """Graphviz DOT text of a graph, of a compiled function, or of a rewrite.

    Boxes are Apply nodes (the Op and its parameters), ellipses inputs, small grey boxes
    constants (drawn at each use when small), bold blue boxes outputs; edges carry the
    types. Inner graphs (loop bodies, branches, Blockwise cores) are clusters whose outputs
    feed their node along dashed edges. Past ``max_nodes`` boxes the part of the graph
    farthest from the outputs is folded into dashed boxes that count what they hold.

    Args:
        source: a Var or a sequence of Vars; a compiled function (``rk.function``), drawn
            as its rewritten graph; or a ``RewriteTrace``, drawn step by step.
        inputs: Vars to draw as inputs, leaving out the graph above them.
        max_nodes: boxes to draw before folding (per side of a rewrite picture).
        max_depth: fold everything more than this many nodes below the outputs.
        highlight: a Var, several, or a mapping from Var to a note, filled orange.
        rewrites: draw the graph before and after rewriting side by side, colouring the
            nodes each rule replaced and made. ``source`` is a compiled function, or the
            graph before rewriting with ``after=`` (and ``trace=``) given.
        after: with ``rewrites=True`` and a graph as ``source``: the rewritten graph.
        trace: with ``after=``: the ``RewriteTrace`` of that rewrite.
        title: a caption.

    Example:
        >>> y = rt.log(1 + rt.exp(x))
        >>> dot = rk.to_dot(y)                    # text; rk.draw(y, "y.svg") renders it
        >>> f = rk.function([x], y)
        >>> dot = rk.to_dot(f, rewrites=True)     # before and after, softplus coloured
    """
    if rewrites or after is not None:
        before, rewritten, entries = _rewrite_parts(source, after, trace)
        return rewrite_dot(before, rewritten, entries, max_nodes=max_nodes, title=title)
    if isinstance(source, RewriteTrace):
        return trace_dot(source, title=title)
    return graph_dot(
        _graph_of(source),
        inputs=inputs,
        max_nodes=max_nodes,
        max_depth=max_depth,
        highlight=highlight,
        title=title,
    )


def draw(source: Any, path: str | pathlib.Path, **options: Any) -> pathlib.Path:
    """Draw ``source`` (see ``to_dot``, whose options it takes) into ``path``: SVG, PNG or
    PDF by its suffix (``.dot`` writes the DOT text). Returns the path.

    Raises:
        GraphvizNotFoundError: the Graphviz program ``dot`` is not installed (the message
            names the command that installs it).
    """
    path = pathlib.Path(path)
    format = _FORMATS.get(path.suffix.lower())
    if format is None:
        raise ValueError(
            f"draw: cannot tell the picture format from {path.name!r}; "
            f"use a suffix among {sorted(_FORMATS)}"
        )
    dot = to_dot(source, **options)
    if format == "dot":
        path.write_text(dot)
    else:
        path.write_bytes(render(dot, format))
    return path


def draw_rewrite(source: Any, path: str | pathlib.Path, **options: Any) -> pathlib.Path:
    """Draw a rewrite into ``path``: the graph before and after side by side, each rule's
    nodes coloured and labelled with its name (``draw(source, path, rewrites=True)``).

    ``source`` is a compiled function, or the graph before rewriting with ``after=`` and
    ``trace=`` (from ``rk.rewrite(..., trace=True)``).
    """
    return draw(source, path, rewrites=True, **options)


def _graph_of(source: Any) -> list[Var]:
    """The output Vars a source stands for: a compiled function's rewritten graph."""
    if isinstance(source, Var):
        return [source]
    graph = getattr(source, "graph", None)
    if graph is not None and not isinstance(source, (list, tuple)):
        return [graph] if isinstance(graph, Var) else list(graph)
    if isinstance(source, (list, tuple)) and all(isinstance(v, Var) for v in source):
        return list(source)
    raise TypeError(
        "to_dot: expected a Var, a sequence of Vars, a compiled function or a RewriteTrace, "
        f"got {type(source).__name__}"
    )


def _rewrite_parts(
    source: Any, after: Any, trace: Sequence[TraceEntry] | None
) -> tuple[list[Var], list[Var], Sequence[TraceEntry]]:
    if after is None:
        signature = getattr(source, "signature", None)
        if signature is None:
            raise TypeError(
                "to_dot(rewrites=True): give a compiled function, or the graph before "
                f"rewriting with after= (and trace=); got {type(source).__name__} alone"
            )
        return list(signature.flat_outputs), _graph_of(source), source.trace
    before, rewritten = _graph_of(source), _graph_of(after)
    if len(before) != len(rewritten):
        raise ValueError(
            f"to_dot(rewrites=True): {len(before)} outputs before rewriting but "
            f"{len(rewritten)} in after="
        )
    return before, rewritten, list(trace or ())
