"""Lowering: compose per-node implementations into one Python function, as closures.

The graph is flattened once into a list of steps over a value table (``env``): inputs take
the first slots, constants are pre-filled, each node writes its outputs to fresh slots.
Slots are cleared after their last use, so the NumPy backend does not hold every
intermediate array until the end. No source code is generated: a variable's name is data.
A node that raises is re-raised as ``GraphRuntimeError`` naming it (``runtime_error``);
errors rewritekit raises on purpose pass through.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import GraphRuntimeError, GraphTypeError, RewritekitError
from rewritekit.ir import Apply, Constant, Var, short_name, toposort

__all__ = ["describe_value", "lower", "runtime_error"]

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

    def node_of(out: Any) -> Apply:  # found when a node fails: nothing to build up front
        return next(node for node, step in zip(nodes, steps, strict=True) if step[2] == out)

    def run(*args: Any) -> list[Any]:
        env = template.copy()
        env[:n_inputs] = args
        try:  # free per node (Python 3.11): the failing node is found from the loop's `out`
            for fn, ins, out, single, free in steps:
                value = fn(*[env[i] for i in ins])
                if single:
                    env[out] = value
                else:
                    for slot, item in zip(out, value, strict=True):
                        env[slot] = item
                for slot in free:
                    env[slot] = None
        except RewritekitError as exc:  # raised on purpose, naming what failed
            if isinstance(exc, GraphRuntimeError) and exc.args:  # an inner graph's node
                outer = node_of(out)
                names = ", ".join(short_name(v) for v in outer.inputs)
                exc.args = (f"{exc.args[0]}\n  inside: {outer.op}({names})", *exc.args[1:])
                exc.lowered_inputs = inputs  # type: ignore[attr-defined]
            raise
        except Exception as exc:
            error = runtime_error(node_of(out), [env[i] for i in ins], exc)
            error.lowered_inputs = inputs  # type: ignore[attr-defined]
            raise error from exc
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


def runtime_error(node: Apply, values: Sequence[Any], exc: Exception) -> GraphRuntimeError:
    """The ``GraphRuntimeError`` for ``node`` failing with ``exc`` on input ``values``: it
    names the Op, the node's inputs and their dtypes and shapes, and quotes ``exc``.

    The error is also an instance of ``exc``'s class where Python allows it, so that code
    catching ``ValueError`` or ``np.linalg.LinAlgError`` around a call keeps working. Its
    ``node`` attribute is the failing node; ``lower`` adds ``lowered_inputs``, the inputs
    of the outermost graph it ran in (so that ``rk.function`` can find the node's rule).
    """
    inputs = ", ".join(
        f"{short_name(var)}: {describe_value(value)}"
        for var, value in zip(node.inputs, values, strict=True)
    )
    error = _runtime_error_class(type(exc))(
        f"{node.op} failed when the function ran: {type(exc).__name__}: {str(exc).strip()}\n"
        f"  node:   {node.op}({', '.join(short_name(v) for v in node.inputs)})\n"
        f"  inputs: {inputs or 'none'}"
    )
    error.node = node  # type: ignore[attr-defined]
    return error


def describe_value(value: Any) -> str:
    """A value's dtype and shape as a type prints: ``float64[3,4]``; a scalar ``float64[]``."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:  # a Python number or list
        try:
            array = np.asarray(value)
        except Exception:
            return type(value).__name__
        shape, dtype = array.shape, array.dtype
    return f"{getattr(dtype, 'name', dtype)}[{','.join(str(n) for n in shape)}]"


_ERROR_CLASSES: dict[type, type[GraphRuntimeError]] = {}


def _runtime_error_class(cause: type[Exception]) -> type[GraphRuntimeError]:
    """A subclass of both ``GraphRuntimeError`` and ``cause`` (made once per class), or
    ``GraphRuntimeError`` itself where the two cannot be combined (e.g. ``OSError``)."""
    found = _ERROR_CLASSES.get(cause)
    if found is None:
        try:
            found = type(
                "GraphRuntimeError",
                (GraphRuntimeError, cause),
                {
                    "__module__": GraphRuntimeError.__module__,
                    "__init__": GraphRuntimeError.__init__,
                    "__str__": GraphRuntimeError.__str__,
                    # pickles (e.g. to another process) as the plain GraphRuntimeError
                    "__reduce__": lambda self: (GraphRuntimeError, self.args),
                },
            )
        except TypeError:  # an instance lay-out conflict
            found = GraphRuntimeError
        _ERROR_CLASSES[cause] = found
    return found
