"""What a rewrite did: one entry per rule application, and readable views of it."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from rewritekit.ir import Constant, Var
from rewritekit.ir.dot import html_picture

__all__ = ["RewriteTrace", "TraceEntry", "explain", "term_str"]

_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/", "power": "**"}


class TraceEntry(NamedTuple):
    """One rule application: the rule's qualified name, the Var it matched, the Var that
    replaced it, and where: ``""`` in the graph itself, ``"scan body"`` inside a loop's
    body (``"scan body > cond true_graph"`` nested)."""

    rule: str
    before: Var
    after: Var
    where: str = ""

    def __str__(self) -> str:
        inside = f" (in {self.where})" if self.where else ""
        return f"{self.rule}{inside}: {term_str(self.before)} -> {term_str(self.after)}"


class RewriteTrace(list[TraceEntry]):
    """The entries of one rewrite, in order, with counters.

    Attributes:
        attempts: rule applications tried (a rule tried on a node counts once).
        nodes: distinct nodes normalised.
    """

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0
        self.nodes = 0

    def fired(self) -> dict[str, int]:
        """How many times each rule fired."""
        counts: dict[str, int] = {}
        for entry in self:
            counts[entry.rule] = counts.get(entry.rule, 0) + 1
        return counts

    def __str__(self) -> str:
        return explain(self)

    def _repr_html_(self) -> str:
        """Jupyter's view: each rule application as a picture (text without Graphviz)."""
        from rewritekit.rules.pictures import trace_dot  # pictures builds on this module

        return html_picture(trace_dot(self), explain(self))


def explain(source: Any, *, depth: int = 4) -> str:
    """A readable account of a rewrite: one line per rule application.

    Args:
        source: a compiled function (its ``trace``), a ``RewriteTrace``, or a list of
            ``TraceEntry``.
        depth: how deep each term is printed (deeper parts print as ``…``).

    Example:
        >>> y, trace = rk.rewrite(rt.log(1 + x), [log1p], trace=True)
        >>> print(rk.explain(trace))
        1. log1p: log(1 + x) -> log1p(x)
    """
    entries = getattr(source, "trace", source)
    if not entries:
        return "no rule fired"
    return "\n".join(
        f"{i}. {e.rule}{f' (in {e.where})' if e.where else ''}: "
        f"{term_str(e.before, depth=depth)} -> {term_str(e.after, depth=depth)}"
        for i, e in enumerate(entries, 1)
    )


def term_str(var: Var, *, depth: int = 4) -> str:
    """A node as a one-line expression, cut below ``depth``: ``log(1 + x)``."""
    return _term(var, depth, nested=False)


def _term(var: Var, depth: int, nested: bool) -> str:
    if isinstance(var, Constant):
        data = var.data
        if var.name:
            return var.name
        return repr(data.item()) if data.size == 1 else _array_str(data)
    node = var.owner
    if node is None:
        return var.name or "<unnamed>"
    if depth <= 0:
        return "…"
    op = node.op
    name = op.name
    args = node.inputs
    suffix = f"[{var.index}]" if node.nout > 1 else ""
    if name in _INFIX and len(args) == 2:
        text = f"{_term(args[0], depth - 1, True)} {_INFIX[name]} {_term(args[1], depth - 1, True)}"
        return f"({text})" if nested else text
    if name == "negative":
        return f"-{_term(args[0], depth - 1, True)}"
    shown = [_term(a, depth - 1, False) for a in args]
    shown += [f"{p}={getattr(op, p)!r}" for p in type(op).__props__]
    return f"{name}({', '.join(shown)}){suffix}"


def _array_str(data: np.ndarray) -> str:
    if data.size <= 4:
        return repr(data.tolist())
    return f"<{data.dtype}{list(data.shape)}>"
