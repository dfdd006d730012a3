"""Inner graphs: graphs held inside a node (loop bodies, branches), over canonical inputs.

An inner graph's inputs are ``Placeholder``s, made by position and type and interned, so
tracing the same body twice gives the same placeholders, the same hash-consed body, an
equal ``InnerGraph`` and so the same outer node: CSE of whole loops is free. A user's
function is traced over fresh Vars first (``close_over``); the Vars its result reads
besides them are the closed-over outer values, which become extra inputs of the inner
graph (after its own) and extra inputs of the outer node.

An Op holding inner graphs lists them in ``inner_graphs`` and rebuilds itself around new
ones with ``with_inner_graphs`` (the rules engine rewrites bodies this way); traversal,
``replace`` and pickling see the outer node as one Apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewritekit.ir.intern import CONSTANTS
from rewritekit.ir.nodes import Constant, Var, _set
from rewritekit.ir.traversal import graph_inputs, replace
from rewritekit.ir.types import TensorType

__all__ = ["InnerGraph", "Placeholder", "close_over"]

_BUCKET = CONSTANTS.bucket("placeholder")[1]


class Placeholder(Var):
    """Input ``position`` of an inner graph, of type ``type``: one object per pair.

    Example:
        >>> t = TensorType("float64", ())
        >>> Placeholder(0, t) is Placeholder(0, t)
        True
    """

    __slots__ = ("position",)
    position: int

    def __new__(cls, position: int, type: TensorType) -> Placeholder:
        key = (position, type)
        found = CONSTANTS.lookup(_BUCKET, key)
        if found is not None:
            return found  # type: ignore[no-any-return]
        new = object.__new__(cls)
        _set(new, "type", type)
        _set(new, "owner", None)
        _set(new, "index", None)
        _set(new, "name", f"%{position}")
        _set(new, "position", position)
        return CONSTANTS.intern(_BUCKET, key, new)  # type: ignore[no-any-return]

    def __init__(self, position: int, type: TensorType) -> None:
        pass  # everything happens in __new__

    def __reduce__(self) -> tuple[Any, ...]:
        return (Placeholder, (self.position, self.type))


class InnerGraph:
    """A graph from placeholder ``inputs`` to ``outputs``; equal when the nodes are the same.

    Attributes:
        inputs: the ``Placeholder``s, positions 0, 1, ... in order.
        outputs: the result Vars (built over the inputs and constants only).
    """

    __slots__ = ("_hash", "inputs", "outputs")
    inputs: tuple[Placeholder, ...]
    outputs: tuple[Var, ...]

    def __init__(self, inputs: Sequence[Placeholder], outputs: Sequence[Var]) -> None:
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self._hash = hash((tuple(map(id, self.inputs)), tuple(map(id, self.outputs))))

    @property
    def input_types(self) -> tuple[TensorType, ...]:
        return tuple(i.type for i in self.inputs)

    @property
    def output_types(self) -> tuple[TensorType, ...]:
        return tuple(o.type for o in self.outputs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InnerGraph):
            return NotImplemented
        return (
            len(self.outputs) == len(other.outputs)
            and all(a is b for a, b in zip(self.inputs, other.inputs, strict=False))
            and len(self.inputs) == len(other.inputs)
            and all(a is b for a, b in zip(self.outputs, other.outputs, strict=True))
        )

    def __hash__(self) -> int:
        return self._hash

    def __getstate__(self) -> Any:
        return (self.inputs, self.outputs)

    def __setstate__(self, state: Any) -> None:
        inputs, outputs = state
        self.__init__(inputs, outputs)  # type: ignore[misc]

    def __reduce__(self) -> tuple[Any, ...]:
        return (InnerGraph, (self.inputs, self.outputs))

    def apply(self, values: Sequence[Var]) -> list[Var]:
        """The outputs with each input replaced by the corresponding Var of ``values``:
        the body inlined over outer values."""
        return list(replace(list(self.outputs), dict(zip(self.inputs, values, strict=True))))

    def with_outputs(self, outputs: Sequence[Var]) -> InnerGraph:
        """The graph over the same inputs with other outputs (built over those inputs)."""
        return InnerGraph(self.inputs, outputs)

    def __repr__(self) -> str:
        ins = ", ".join(str(t) for t in self.input_types)
        outs = ", ".join(str(t) for t in self.output_types)
        return f"InnerGraph(({ins}) -> ({outs}))"


def close_over(
    args: Sequence[Var], results: Sequence[Var], extra: Sequence[Var] = ()
) -> tuple[InnerGraph, list[Var]]:
    """The inner graph of ``results`` as a function of ``args``, and its closed-over Vars.

    ``args`` are the fresh Vars a user's function was traced with. Every other graph input
    ``results`` read (not a constant) is closed over: it becomes an input of the inner
    graph after ``args`` (in a fixed order: ``extra`` first, then first use), and is
    returned so the outer node can take it as an input.

    Args:
        args: the traced function's arguments, distinct input Vars.
        results: what it returned.
        extra: free Vars to place first among the closed-over ones (to share one list
            between the branches of a ``cond``).
    """
    arg_set = set(args)
    free = list(dict.fromkeys([*extra, *graph_inputs(list(results))]))
    free = [v for v in free if v not in arg_set and not isinstance(v, Constant)]
    sources = [*args, *free]
    placeholders = [Placeholder(i, v.type) for i, v in enumerate(sources)]
    outputs = replace(list(results), dict(zip(sources, placeholders, strict=True)))
    return InnerGraph(placeholders, outputs), free
