"""Batching rules of the searching and running-extreme Ops (``rt.searchsorted``,
``rt.cummax``, ``rt.cummin``).

``cummax`` and ``cummin`` run along the shifted axis. ``searchsorted`` of a shared sorted
vector takes the batched values as they are (``v`` may have any shape); a batched sorted
vector counts, for each value, the elements before it in sort order (NaN last):
``sum(a < v)`` for ``side="left"``, ``sum(a <= v)`` for ``"right"``, which costs
``len(a)`` comparisons per value instead of a binary search.
"""

from __future__ import annotations

from typing import Any

from rewritekit.ir import Apply, Var, apply_op
from rewritekit.tensor import cast, expand_dims, isnan, logical_and, logical_not, logical_or
from rewritekit.tensor import sum as reduce_sum
from rewritekit.tensor.extremes import Cummax, Cummin
from rewritekit.tensor.searching import Searchsorted
from rewritekit.vectorize.registry import rule

__all__: list[str] = []


@rule(Cummax, Cummin)
def _running(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The same scan along the core's axis, shifted past the batch axes."""
    return apply_op(type(node.op)(node.op.axis + nb), (inputs[0],))  # type: ignore[attr-defined]


def _before(a: Var, v: Var, side: str) -> Var:
    """True where ``a`` sorts before ``v`` (``"left"``) or not after it (``"right"``), NaN
    sorting last; ``a`` and ``v`` broadcast."""
    exact = a.type.kind != "f" and v.type.kind != "f"
    if side == "left":
        return a < v if exact else logical_or(a < v, logical_and(isnan(v), logical_not(isnan(a))))
    return a <= v if exact else logical_or(a <= v, isnan(v))


@rule(Searchsorted)
def _searchsorted(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Shared ``a``: the same Op over the batched values. Batched ``a`` (``(*batch, n)``):
    a count of ``a``'s elements before each value, the values (``(*batch, *core)``, or
    ``core`` shared) broadcast against ``a`` spread to ``(*batch, 1, ..., 1, n)``."""
    a, v = inputs
    side = node.op.side  # type: ignore[attr-defined]
    if not batched[0]:
        return apply_op(node.op, (a, v))
    core = node.inputs[1].ndim
    spread = expand_dims(a, tuple(range(nb, nb + core))) if core else a
    return [cast(reduce_sum(_before(spread, expand_dims(v, -1), side), axis=-1), "int64")]
