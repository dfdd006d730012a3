"""Shared pieces of the standard library's rules: pattern variables and guards.

Guards take the ``Bindings`` of a match (``b.term`` is the matched Var) and answer a bool.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rewritekit.ir import Constant, Var
from rewritekit.rules.patterns import lvar

__all__ = [
    "a",
    "b",
    "broadcast_lengths",
    "c",
    "constant_value",
    "same_type",
    "scalar_like",
    "x",
    "y",
    "z",
]

a, b, c = lvar("a"), lvar("b"), lvar("c")
x, y, z = lvar("x"), lvar("y"), lvar("z")


def constant_value(var: Any) -> np.ndarray | None:
    """The value of a Constant (a NumPy array), or None for anything else."""
    return np.asarray(var.data) if isinstance(var, Constant) else None


def scalar_like(var: Var) -> bool:
    """Every axis of ``var`` has static length 1 (or it is a scalar): broadcasting it
    against anything never changes the other operand's shape."""
    return all(n == 1 for n in var.type.shape)


def same_type(name: str) -> Any:
    """A guard: the Var bound to ``name`` has exactly the matched node's type (dtype and
    static shape), so replacing the node by it is safe."""

    def guard(bindings: Any) -> bool:
        return bool(bindings[name].type == bindings.term.type)

    guard.__name__ = f"same_type({name})"
    return guard


def broadcast_lengths(shape: tuple[int | None, ...], operands: list[Var]) -> list[int | Var]:
    """The run-time shape that broadcasting ``operands`` gives a result of static shape
    ``shape``: the static length where known, else the length of the first operand with an
    unknown length on that axis, or of the next one where that is 1 (broadcasting).

    Rules use it to broadcast a replacement to the shape of the node it replaces without
    reading ``shape(node)``, which would put the node into its own replacement.
    """
    import rewritekit.tensor as rt

    parts: list[int | Var] = []
    for axis, length in enumerate(shape):
        if length is not None:
            parts.append(length)
            continue
        back = len(shape) - axis
        unknown = [v for v in operands if v.ndim >= back and v.type.shape[-back] is None]
        part = rt.shape_i(unknown[0], -back)
        for other in unknown[1:]:
            part = rt.where(rt.equal(part, 1), rt.shape_i(other, -back), part)
        parts.append(part)
    return parts
