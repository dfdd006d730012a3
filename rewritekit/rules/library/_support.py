"""Shared pieces of the standard library's rules: pattern variables and guards.

Guards take the ``Bindings`` of a match (``b.term`` is the matched Var) and answer a bool.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Constant, Op, Var, graph_inputs, replace
from rewritekit.ir.inner import InnerGraph, Placeholder
from rewritekit.rules.patterns import lvar
from rewritekit.tensor.control import Scan
from rewritekit.tensor.creation import Alloc

__all__ = [
    "a",
    "b",
    "broadcast_lengths",
    "c",
    "constant_value",
    "first_occurrence",
    "fitted",
    "operands",
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


def fill_value(var: Any) -> np.ndarray | None:
    """The value of a Constant, or of a constant's fill (``full(shape, c)``, ``zeros_like``),
    or None for anything else."""
    owner = getattr(var, "owner", None)
    if owner is not None and isinstance(owner.op, Alloc):
        return constant_value(owner.inputs[0])
    return constant_value(var)


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


def operands(bindings: Any) -> tuple[Var, ...]:
    """The inputs of the matched node."""
    return bindings.term.owner.inputs


def fitted(
    value: Var,
    term: Var,
    inputs: Sequence[Var],
    source: Var | None = None,
    trust_types: bool = False,
) -> Var:
    """``value`` cast to ``term``'s dtype and broadcast to ``term``'s runtime shape.

    The shape is built from ``inputs`` (the matched node's operands): static lengths where
    ``term`` has them, otherwise ``shape_i`` of the operands with unknown lengths there.
    ``source`` is the operand ``value`` has the shape of (None for a fill value); its length
    is used last, so ``broadcast_to`` still fails where ``source`` does not broadcast.
    ``trust_types`` (shape_unsafe rules only) takes a ``value`` of ``term``'s static shape
    as is: it assumes no other operand broadcasts it at run time.
    """
    value = rt.cast(value, term.dtype)
    if trust_types and value.type.shape == term.type.shape:
        return value
    ordered = [
        v for i, v in enumerate(inputs) if v is not source and first_occurrence(v, inputs, i)
    ]
    if source is not None:
        ordered.append(source)
    exact = value.ndim == term.ndim
    for axis, length in enumerate(term.type.shape):
        if length is not None:
            exact = exact and value.type.shape[axis] == length
        else:
            back = term.ndim - axis
            unknown = [v for v in ordered if v.ndim >= back and v.type.shape[-back] is None]
            exact = exact and len(unknown) == 1 and unknown[0] is source
    return value if exact else rt.broadcast_to(value, broadcast_lengths(term.type.shape, ordered))


def first_occurrence(var: Var, inputs: Sequence[Var], index: int) -> bool:
    """``var`` does not occur in ``inputs`` before ``index``."""
    return all(other is not var for other in inputs[:index])


def regraph(
    sources: Sequence[Var], outputs: Sequence[Var], subst: dict[Var, Var] | None = None
) -> InnerGraph:
    """The inner graph of ``outputs`` over new placeholders standing for ``sources`` (old
    placeholders or body values), in order; ``subst`` replaces other old placeholders by a
    constant or by one of ``sources``."""
    new = [Placeholder(i, v.type) for i, v in enumerate(sources)]
    mapping: dict[Var, Var] = dict(zip(sources, new, strict=True))
    for old, value in (subst or {}).items():
        mapping[old] = mapping.get(value, value)
    return InnerGraph(new, replace(list(outputs), mapping))


def reads(outputs: Sequence[Var]) -> set[Var]:
    """The graph inputs (placeholders, Vars) that ``outputs`` read."""
    return set(graph_inputs(list(outputs)))


def scan_steps(op: Op, outer: Sequence[Var], n: int, ns: int) -> int | None:
    """A scan's number of steps where it is static: its ``length``, else a sequence's."""
    if not isinstance(op, Scan):
        return None
    if op.length is not None:
        return op.length
    leads = [outer[p].type.shape[0] for p in range(n, n + ns)]
    return next((d for d in leads if d is not None), None)


#: The most factors ``product_factors`` collects: a longer product is taken as one factor.
#: The gradient of a deep chain is one product tree through every step, and the rules that
#: look for a pair of factors (``exp(u) * sigmoid(-u)``, ``exp(-u**2) / erfc(u)``) run at
#: each of its nodes: without the cap, a 400-step chain spent 14 s of its 24 s rewrite
#: walking product trees.
MAX_FACTORS = 32


def factors_may_hold(*groups: tuple[Op, ...]) -> Callable[[tuple[Any, ...]], bool]:
    """The rule index's test (``Rule.child_test``) for a rule on a product that needs a
    factor of each group's Ops among ``product_factors``: with no ``multiply`` among the
    node's inputs, those inputs are the factors, and each group must be there.

    Example:
        >>> test = factors_may_hold((rt.exp,), (rt.sigmoid,))
        >>> test((rt.exp, rt.sigmoid)), test((rt.exp, rt.log)), test((rt.multiply, rt.log))
        (True, False, True)
    """

    def test(ops: tuple[Any, ...]) -> bool:
        if any(op is not None and op == rt.multiply for op in ops):
            return True  # a nested product: its factors are not known here
        return all(any(op is not None and op in group for op in ops) for group in groups)

    return test


def product_factors(v: Var) -> list[Var]:
    """The factors of the product tree ``v``, left to right: ``v`` itself if it is not a
    product or has more than ``MAX_FACTORS`` factors. Iterative (a deep product does not
    exhaust Python's recursion limit).

    Example:
        >>> a, b, c = rt.scalar("a"), rt.scalar("b"), rt.scalar("c")
        >>> product_factors(a * (b * c)) == [a, b, c]
        True
    """
    ref, last = _LAST_FACTORS[0]  # three stabilize rules ask in turn about one product
    if ref() is v:
        return list(last) if last else [v]
    found: list[Var] = []
    stack = [v]
    while stack:
        u = stack.pop()
        if u.owner is not None and u.owner.op == rt.multiply:
            stack.extend(reversed(u.owner.inputs))
        else:
            found.append(u)
        if len(found) + len(stack) > MAX_FACTORS:
            found = [v]
            break
    kept = () if found[0] is v else tuple(found)  # never v itself: it is held weakly
    _LAST_FACTORS[0] = (weakref.ref(v, _forget_factors), kept)
    return found


#: The last product asked about (weakly) and its factors (of v's graph: dropped with v).
_LAST_FACTORS: list[tuple[Any, tuple[Var, ...]]] = [(lambda: None, ())]


def _forget_factors(ref: Any, last: list[Any] = _LAST_FACTORS) -> None:
    # the list itself, not the module global: at interpreter exit the globals are None
    if last[0][0] is ref:
        last[0] = (lambda: None, ())
