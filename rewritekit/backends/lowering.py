"""Lowering: compose per-node implementations into one Python function, as closures.

The graph is flattened once into a list of steps over a value table (``env``): inputs take
the first slots, constants are pre-filled, each node writes its outputs to fresh slots.
Slots are cleared after their last use, so the NumPy backend does not hold every
intermediate array until the end. No source code is generated: a variable's name is data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Apply, Constant, Var, toposort

__all__ = ["lower"]

NodeImpl = Callable[[Apply], Callable[..., Any]]


def lower(
    inputs: Sequence[Var],
    outputs: Sequence[Var],
    implement: NodeImpl,
    constant_value: Callable[[Constant], Any] = lambda c: c.data,
) -> Callable[..., list[Any]]:
    """A function of the input values that returns the list of output values.

    Args:
        inputs: the graph inputs, in call order.
        outputs: the Vars to compute.
        implement: gives the callable for one node, ``(*input_values) -> value`` for one
            output or a sequence of values for several.
        constant_value: the value a constant takes in the backend (its NumPy data).

    Raises:
        GraphTypeError: an output depends on a graph input missing from ``inputs``.
    """
    slots: dict[Var, int] = {var: i for i, var in enumerate(inputs)}
    template: list[Any] = [None] * len(inputs)

    def slot_of(var: Var) -> int:
        found = slots.get(var)
        if found is None:
            if not isinstance(var, Constant):
                raise GraphTypeError(
                    f"the graph reads {var!r}, which is not among the function's inputs"
                )
            found = slots[var] = len(template)
            template.append(constant_value(var))
        return found

    nodes = toposort(list(outputs))
    program: list[tuple[Callable[..., Any], tuple[int, ...], tuple[int, ...]]] = []
    for node in nodes:
        ins = tuple(slot_of(v) for v in node.inputs)
        outs = []
        for out in node.outputs:
            slots[out] = len(template)
            template.append(None)
            outs.append(slots[out])
        program.append((implement(node), ins, tuple(outs)))
    result = [slot_of(v) for v in outputs]
    frees = _last_uses(program, keep=set(result) | set(range(len(inputs))))
    steps = [
        (fn, ins, outs[0] if len(outs) == 1 else outs, len(outs) == 1, free)
        for (fn, ins, outs), free in zip(program, frees, strict=True)
    ]
    n_inputs = len(inputs)

    def run(*args: Any) -> list[Any]:
        env = template.copy()
        env[:n_inputs] = args
        for fn, ins, out, single, free in steps:
            value = fn(*[env[i] for i in ins])
            if single:
                env[out] = value
            else:
                for slot, item in zip(out, value, strict=True):
                    env[slot] = item
            for slot in free:
                env[slot] = None
        return [env[i] for i in result]

    return run


def _last_uses(
    program: list[tuple[Any, tuple[int, ...], tuple[int, ...]]], keep: set[int]
) -> list[tuple[int, ...]]:
    """For each step, the slots read for the last time there (never inputs or results)."""
    last: dict[int, int] = {}
    for step, (_, ins, _outs) in enumerate(program):
        for slot in ins:
            last[slot] = step
    frees: list[list[int]] = [[] for _ in program]
    for slot, step in last.items():
        if slot not in keep:
            frees[step].append(slot)
    return [tuple(f) for f in frees]
