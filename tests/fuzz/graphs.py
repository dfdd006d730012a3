"""A hypothesis strategy for random well-typed graphs over most of the Op set.

``graphs()`` draws a ``Graph``: 1-3 inputs of drawn dtypes (float64/32, int64/32/8, uint8,
uint64, bool) and shapes (a small pool, so that many graphs share them), then 3-12 nodes,
each an Op applied to earlier nodes (or to an input added for it: an index, a position),
then 1-3 outputs, and two sets of argument values. Values come from pools of edge cases:
0, -0, +-1, +-inf, NaN, huge and integer extremes, mixed with small random numbers, so
that logs of negatives, lgamma's poles, integer overflow and division by zero happen.

The builder (``tests/fuzz/builder.py``) tracks each node's concrete shape, so every
reshape, concatenation and matmul it draws fits, and whether its value is exact, so that
the Ops that jump on a last-bit change (comparisons, floor, casts to integers, argsort)
read only values both backends give bit for bit. The Ops are drawn by family
(``tests/fuzz/ops.py``).

Indices (Python ints, constant and input arrays, scalar inputs) are drawn in and out of
bounds; ``Graph.out_of_bounds`` says whether an out-of-bounds index reaches an output.

Example:
    >>> from hypothesis import given
    >>> @given(graph=graphs())
    ... def test(graph):
    ...     print(rk.dprint(graph.outputs))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

import rewritekit as rk
from rewritekit.ir import Var
from tests.fuzz.builder import SHAPES, Builder, values
from tests.fuzz.ops import OPS

__all__ = ["OPS", "Graph", "graphs"]

_DRAWN_DTYPES = ("float64", "float64", "float64", "float32", "int64", "int64")
_DRAWN_DTYPES += ("int32", "int8", "uint8", "uint64", "bool")
# elementwise arithmetic is where the edge cases are: drawn more often
_DRAWN_OPS = (*OPS, "unary_float", "binary", "binary", "unary_any", "getitem")


@dataclass(eq=False)
class Graph:
    """A drawn graph and the values to call it with.

    Attributes:
        inputs: the input Vars, in call order.
        outputs: the outputs (1-3 Vars).
        arguments: argument sets, each one array per input.
        steps: the Ops applied, in order (for messages and statistics).
        out_of_bounds: an index drawn out of bounds reaches an output.
        refused: construction errors that are not rewritekit errors (each a bug: building
            an ill-typed graph must raise ``rk.RewritekitError``), as messages.
    """

    inputs: list[Var]
    outputs: list[Var]
    arguments: list[tuple[np.ndarray, ...]]
    steps: list[str] = field(default_factory=list)
    out_of_bounds: bool = False
    refused: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """The graph (``rk.dprint``) and its argument sets, for a failure message."""
        lines = [rk.dprint(self.outputs), "inputs:"]
        for var in self.inputs:
            lines.append(f"  {var!r}")
        for number, arguments in enumerate(self.arguments):
            lines.append(f"argument set {number}:")
            for var, value in zip(self.inputs, arguments, strict=True):
                lines.append(
                    f"  {var.name} = np.array({value.tolist()!r}, dtype={value.dtype.name!r})"
                )
        if self.out_of_bounds:
            lines.append("(an index out of bounds reaches an output)")
        return "\n".join(lines)


@st.composite
def graphs(
    draw: Callable[..., Any],
    min_nodes: int = 3,
    max_nodes: int = 12,
    families: Sequence[str] | None = None,
) -> Graph:
    """A random well-typed graph of ``min_nodes`` to ``max_nodes`` Ops over 1-3 inputs,
    with two argument sets. ``families`` restricts the kinds of Ops (keys of ``OPS``)."""
    data = draw(st.data())
    b = Builder(data)
    for _ in range(draw(st.integers(1, 3), label="inputs")):
        b.new_input(draw(st.sampled_from(_DRAWN_DTYPES)), draw(st.sampled_from(SHAPES)))
    names = tuple(families) if families is not None else _DRAWN_OPS
    wanted = draw(st.integers(min_nodes, max_nodes), label="nodes")
    attempts = 0
    while len(b.steps) < wanted and attempts < 4 * max_nodes:
        attempts += 1
        OPS[draw(st.sampled_from(names), label="op")](b)
    built = [n for n in b.nodes if n.var.owner is not None] or b.nodes
    count = draw(st.integers(1, min(3, len(built))), label="outputs")
    chosen = [built[-1]] + [draw(st.sampled_from(built)) for _ in range(count - 1)]
    outputs = list(dict.fromkeys(n.var for n in chosen))
    reached = set(rk.ancestors(outputs))
    argument_sets = []
    for _ in range(2):
        argument_sets.append(
            tuple(
                b.fixed[i] if i in b.fixed else values(data, var.dtype, b.shapes[i])
                for i, var in enumerate(b.inputs)
            )
        )
    return Graph(
        inputs=b.inputs,
        outputs=outputs,
        arguments=argument_sets,
        steps=b.steps,
        out_of_bounds=any(v in reached for v in b.out_of_bounds),
        refused=b.refused,
    )
