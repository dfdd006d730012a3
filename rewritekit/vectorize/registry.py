"""The table of batching rules, and what rules share.

A rule is ``rule(node, inputs, batched, nb) -> outputs`` (or None to fall back to a
``Blockwise``): ``inputs`` are ``node.inputs`` rebuilt for the batch, ``batched[i]`` says
whether input ``i`` gained the ``nb`` leading batch axes. It returns the node's outputs with
those axes in front, or an ``Unbatched`` list where some outputs are the same for every
element. An Op class may instead state its rule as the method ``Op.batch`` (the elementwise
Ops do); the table wins where a class has both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rewritekit.ir import Apply, Op, Var
from rewritekit.tensor import broadcast_to, expand_dims
from rewritekit.tensor.shape_vectors import lengths

#: ``rule(node, inputs, batched, batch_ndim) -> outputs``, or None to fall back.
BatchRule = Callable[[Apply, list[Var], list[bool], int], Sequence[Var] | None]

#: Batching rules by Op class (the most specific class of an Op's hierarchy wins).
BATCH_RULES: dict[type, BatchRule] = {}


class Unbatched(list):  # type: ignore[type-arg]
    """What a batching rule returns when outputs are the same for every element (the core
    shape of a batched array, the next key of a random draw): later nodes read them as
    shared inputs. ``positions`` names those outputs (default: all)."""

    def __init__(self, values: Iterable[Var], positions: Iterable[int] | None = None) -> None:
        super().__init__(values)
        self.positions = frozenset(range(len(self)) if positions is None else positions)


def rule(*classes: type) -> Callable[[BatchRule], BatchRule]:
    """Register the decorated function as the batching rule of ``classes``."""

    def register(fn: BatchRule) -> BatchRule:
        for cls in classes:
            BATCH_RULES[cls] = fn
        return fn

    return register


def _method(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Sequence[Var]:
    return node.op.batch(node, tuple(inputs))


def batch_rule(op: Op) -> BatchRule | None:
    """The batching rule of ``op``'s class or its nearest base class with one (in the table
    or as an ``Op.batch`` method)."""
    for cls in type(op).__mro__:
        found = BATCH_RULES.get(cls)
        if found is not None:
            return found
        if cls is not Op and "batch" in vars(cls):
            return _method
    return None


# --- helpers of the rules ----------------------------------------------------------------


def only_first(batched: list[bool]) -> bool:
    """Only the first input is batched."""
    return batched[0] and not any(batched[1:])


def batch_lengths(inputs: list[Var], batched: list[bool], nb: int) -> list[Any]:
    """The batch axes' lengths (static ints, else ``shape_i`` Vars)."""
    return lengths(inputs[batched.index(True)])[:nb]


def pad_core(v: Var, nb: int, core_ndim: int, ndim: int) -> Var:
    """A batched ``v`` (``nb`` batch axes, ``core_ndim`` core axes) with length-1 axes after
    its batch axes, so that its core has ``ndim`` axes and broadcasts from the right."""
    missing = ndim - core_ndim
    return expand_dims(v, tuple(range(nb, nb + missing))) if missing > 0 else v


def broadcast_batch(v: Var, batch: list[Any]) -> Var:
    """A shared ``v`` repeated over the batch axes of lengths ``batch``."""
    return broadcast_to(v, (*batch, *lengths(v)))
