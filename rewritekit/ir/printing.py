"""``dprint``: a graph as an indented text tree.

Each node is printed with its type. A subexpression used more than once gets a short id
(``[id A]``) where it is first printed; later uses print only the op and the id. Inputs
are printed by name, constants by value (or by shape when large).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rewritekit.ir.nodes import Constant, Var
from rewritekit.ir.traversal import _as_outputs, ancestors

__all__ = ["dprint"]

_SMALL_CONSTANT = 6  # elements; larger constants print as "constant"


def dprint(outputs: Var | Sequence[Var], *, max_depth: int | None = None) -> str:
    """A readable tree of the graph of ``outputs``, one node per line.

    Args:
        outputs: one Var or several; shared subexpressions get one id across all of them.
        max_depth: stop descending below this depth (``...`` marks the cut).

    Example:
        >>> print(dprint(rt.exp(x) * rt.exp(x) + 1.0))  # doctest: +SKIP
        Add float64[?]
        ├─ Mul float64[?]
        │  ├─ Exp [id A] float64[?]
        │  │  └─ x float64[?]
        │  └─ Exp [id A] ···
        └─ 1.0 float64[]
    """
    outs = _as_outputs(outputs, "dprint")
    shared = _shared(outs)
    ids: dict[Var, str] = {}
    names = _input_labels(outs)
    lines: list[str] = []
    shown_inner: set[object] = set()  # nodes whose inner graphs are printed already
    # Each entry: (var, prefix for its own line, prefix for its children, depth).
    stack: list[tuple[Var, str, str, int]] = [(o, "", "", 0) for o in reversed(outs)]
    while stack:
        var, head, body, depth = stack.pop()
        label = _label(var, names)
        if var in shared:
            if var in ids:
                lines.append(f"{head}{label} [id {ids[var]}] ···")
                continue
            ids[var] = _id_text(len(ids))
        tag = f" [id {ids[var]}]" if var in ids else ""
        lines.append(f"{head}{label}{tag} {var.type}")
        if var.owner is None:
            continue
        if var.owner not in shown_inner:
            shown_inner.add(var.owner)
            lines.extend(_inner_lines(var.owner.op, body))
        inputs = var.owner.inputs
        if max_depth is not None and depth >= max_depth:
            if inputs:
                lines.append(f"{body}└─ ...")
            continue
        for position in reversed(range(len(inputs))):
            last = position == len(inputs) - 1
            child_head = body + ("└─ " if last else "├─ ")
            child_body = body + ("   " if last else "│  ")
            stack.append((inputs[position], child_head, child_body, depth + 1))
    return "\n".join(lines)


def _inner_lines(op: object, body: str) -> list[str]:
    """The inner graphs of a loop or branch, each printed under its name, indented with a
    dotted rule: ``┆ body: (%0, %1) ->`` and the tree of its outputs."""
    lines = []
    names = getattr(op, "_graph_props", ())
    for position, graph in enumerate(getattr(op, "inner_graphs", ())):
        name = names[position] if position < len(names) else f"graph {position}"
        args = ", ".join(f"{p.name}: {p.type}" for p in graph.inputs)
        lines.append(f"{body}┆ {name}({args}) ->")
        lines.extend(f"{body}┆   {line}" for line in dprint(list(graph.outputs)).splitlines())
    return lines


def _shared(outs: list[Var]) -> set[Var]:
    """The non-leaf Vars (and large constants) used more than once: they get ids."""
    uses: dict[Var, int] = {}
    for out in outs:
        uses[out] = uses.get(out, 0) + 1
    order = ancestors(outs)
    for var in order:
        if var.owner is not None:
            for inp in var.owner.inputs:
                uses[inp] = uses.get(inp, 0) + 1
    return {v for v in order if uses[v] > 1 and (v.owner is not None or _is_large_constant(v))}


def _id_text(number: int) -> str:
    letters = ""
    number += 1
    while number:
        number, rem = divmod(number - 1, 26)
        letters = chr(ord("A") + rem) + letters
    return letters


def _is_large_constant(var: Var) -> bool:
    return isinstance(var, Constant) and var.data.size > _SMALL_CONSTANT


def _input_labels(outs: list[Var]) -> dict[Var, str]:
    """Names for the graph inputs; distinct inputs that share a name get a ``#n`` suffix."""
    labels: dict[Var, str] = {}
    by_name: dict[str, int] = {}
    for var in ancestors(outs):
        if var.owner is None and not isinstance(var, Constant):
            name = var.name or "<input>"
            count = by_name.get(name, 0) + 1
            by_name[name] = count
            labels[var] = name if count == 1 else f"{name}#{count}"
    return labels


def _label(var: Var, names: dict[Var, str]) -> str:
    if isinstance(var, Constant):
        if var.name:
            return var.name
        if var.data.size <= _SMALL_CONSTANT:
            return np.array2string(var.data, separator=", ") if var.ndim else repr(var.data.item())
        return "constant"
    if var.owner is None:
        return names[var]
    op = str(var.owner.op)
    return f"{op}.{var.index}" if var.owner.nout > 1 else op
