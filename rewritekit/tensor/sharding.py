"""``shard``: a sharding constraint inside the graph (``jax.lax.with_sharding_constraint``).

``rt.shard(x, spec)`` is ``x`` itself, placed as ``spec`` says where the function runs on
several devices: a ``jax.sharding.NamedSharding``, or a ``PartitionSpec`` over the mesh
the function is called under (``with jax.sharding.use_mesh(mesh):``). The NumPy backend
computes the identity. The Op is never folded, and the rules never move work across it
(it is marked ``foldable = False``, as random draws are), since where a value lives is
the point; its gradient is the cotangent under the same constraint.
"""

from __future__ import annotations

from typing import Any

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, as_var

__all__ = ["shard"]


class Shard(Op):
    """``x``, constrained to the placement ``spec`` (hashable: a ``PartitionSpec`` or a
    ``NamedSharding``)."""

    __props__ = ("spec",)
    foldable = False  # placement matters: never folded away nor moved by the rules
    spec: Any

    def __init__(self, spec: Any) -> None:
        try:
            hash(spec)
        except TypeError:
            raise GraphTypeError(
                f"shard: the spec must be a PartitionSpec or a NamedSharding, got {spec!r}"
            ) from None
        super().__init__(spec)

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        return (x,)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        return [Shard(self.spec)(cotangents[0])]


def shard(x: Any, spec: Any) -> Var:
    """``x`` placed as ``spec`` says (``jax.lax.with_sharding_constraint``; the identity on
    the NumPy backend).

    Example:
        >>> from jax.sharding import PartitionSpec as P
        >>> rt.shard(rt.matrix("X"), P("data")).type
        TensorType(dtype='float64', shape=(None, None))
    """
    return Shard(spec)(as_var(x, context="shard: input 'x'"))
