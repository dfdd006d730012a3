"""Out-of-bounds indices of the indexing Ops (``rewritekit.tensor.subtensor``), shared by
the backends: which index entries an Op reads, whether they lie in their axes (over the
array module ``xp``), and the ``GraphIndexError`` message, word for word the same on
every backend.

An integer index or index array entry ``i`` of an axis of length ``n`` is in bounds when
``-n <= i < n``; slices never are out of bounds. ``positions(op, node)`` lists the entries
of a node once, when it is lowered; ``bounds`` reduces one entry's values to "all in
bounds" and an offending index (the smallest if it is below ``-n``, else the largest), so
both backends report the same index.

Example:
    >>> ok, bad = bounds(np, np.array([0, 7, -2]), 5)
    >>> bool(ok), int(bad)
    (False, 7)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewritekit.ir import Apply, Constant, Var, graph_inputs, toposort
from rewritekit.ir.inner import Placeholder
from rewritekit.tensor.indexing import ARRAY, SCALAR, entry_axes, n_parts
from rewritekit.tensor.subtensor import IndexOp, Subtensor

__all__ = ["Position", "bounds", "checks_needed", "clip_message", "message", "positions"]


@dataclass(frozen=True)
class Position:
    """An integer index entry of an indexing Op.

    Attributes:
        entry: its position in the Op's ``index`` (and in the index tuple a backend builds).
        axis: the axis of ``x`` it reads.
        source: where its value comes from, for messages ("input 'i'", "a static index").
        part: the input it is read from (None for a static int).
    """

    entry: int
    axis: int
    source: str
    part: Var | None = None


def positions(op: IndexOp, node: Apply) -> tuple[Position, ...]:
    """The integer index entries of ``node`` (static ints, scalars and index arrays)."""
    x = node.inputs[0]
    parts = iter(node.inputs[1 if isinstance(op, Subtensor) else 2 :])
    found = []
    for entry, (item, axis) in enumerate(zip(op.index, entry_axes(op.index, x.ndim), strict=True)):
        reads = [next(parts) for _ in range(n_parts((item,)))]
        if axis is None or isinstance(item, tuple):
            continue  # a new axis, an Ellipsis or a slice
        if isinstance(item, int):
            found.append(Position(entry, axis, "a static index"))
        elif item in (SCALAR, ARRAY):
            found.append(Position(entry, axis, _source(reads[0]), reads[0]))
    return tuple(found)


def _source(part: Var) -> str:
    """The graph inputs an index is computed from, for messages."""
    if isinstance(part, Constant):
        return "a constant index"
    roots = graph_inputs(part)
    groups = [
        ("input", [f"'{v.name}'" for v in roots if v.name and not isinstance(v, Placeholder)]),
        # a loop body's or branch's own input (its position in the inner graph)
        ("inner-graph input", [str(v.name) for v in roots if isinstance(v, Placeholder)]),
    ]
    shown = [
        f"{what}{'s' if len(names) > 1 else ''} {', '.join(names)}"
        for what, names in groups
        if names
    ]
    return f"index from {' and '.join(shown)}" if shown else "index from an unnamed input"


def bounds(xp: Any, value: Any, n: int) -> tuple[Any, Any]:
    """Whether every entry of ``value`` lies in ``[-n, n)``, and an offending entry (the
    smallest if it is below ``-n``, else the largest); an empty ``value`` is in bounds."""
    if np.size(value) == 0:
        return np.True_, np.int64(0)
    value = xp.asarray(value)
    if value.dtype.kind == "u":  # -n would wrap around in the index's own dtype
        high = xp.max(value.astype(np.uint64))
        return high < np.uint64(n), high
    value = value.astype(np.int64)  # n may not fit an int8 index's dtype
    low, high = xp.min(value), xp.max(value)
    return (low >= -n) & (high < n), xp.where(low < -n, low, high)


def message(op: IndexOp, position: Position, index: Any, n: int) -> str:
    """The ``GraphIndexError`` message of mode "raise" (``index`` may be ``"{}"``, a
    placeholder the JAX backend fills when the call fails)."""
    return (
        f"{op.name}: index {index} is out of bounds for axis {position.axis} with length {n} "
        f"({position.source}); an index must lie in [-{n}, {n}), or pass mode='clip' or "
        "mode='fill' (rt.getitem, x.at[i].get/set/add, rt.take) to define the others"
    )


def clip_message(op: IndexOp, position: Position) -> str:
    """The ``GraphIndexError`` message of mode "clip" on an axis of length 0."""
    return (
        f"{op.name}: mode 'clip' cannot clamp an index into axis {position.axis} of length 0 "
        f"({position.source}); use mode='fill'"
    )


def checks_needed(outputs: Sequence[Var]) -> str | None:
    """What the indexing nodes in mode "raise" of a graph (inner graphs included) need
    checked beyond what building it checked: ``"run-time"`` where an index is computed
    when the function runs (a compiled JAX function then carries its checks out of XLA),
    ``"static"`` where only lengths unknown until the inputs' shapes are (a JAX trace
    checks them), else None."""
    pending = [list(outputs)]
    seen: set[int] = set()
    found = None
    while pending:
        for node in toposort(pending.pop()):
            op = node.op
            if isinstance(op, IndexOp) and op.mode == "raise":
                need = _node_checks(op, node)
                if need == "run-time":
                    return need
                found = found or need
            for graph in getattr(op, "inner_graphs", ()):
                if id(graph) not in seen:
                    seen.add(id(graph))
                    pending.append(list(graph.outputs))
    return found


def _node_checks(op: IndexOp, node: Apply) -> str | None:
    shape = node.inputs[0].type.shape
    found = None
    for position in positions(op, node):
        part, n = position.part, shape[position.axis]
        if part is not None and not isinstance(part, Constant):
            return "run-time"
        value = op.index[position.entry] if part is None else part.data
        if n is None or not bounds(np, value, n)[0]:
            found = "static"
    return found
