"""Vectorization: a graph computed for every element of new leading batch axes, as one
graph (PyTensor's ``vectorize_graph``), and ``vmap`` with JAX's signature over it.

``vectorize(outputs, {x: xs})`` replaces the input ``x`` by ``xs``, which has the same core
type after ``k`` leading batch axes, and rebuilds every node that depends on it through its
Op's batching rule (``BATCH_RULES``, looked up along the Op's class hierarchy, or the Op's
``batch`` method):

- elementwise Ops broadcast (``Elemwise.batch``); reductions, sorts, cumulative and
  statistics Ops shift their axes past the batch axes; layout, joining, shapes and
  sharding constraints adjust (``tensor_rules``);
- ``matmul``, ``dot``, ``einsum`` and the linear algebra Ops batch over leading axes;
- indexing and its updates, with index arrays too (``indexing``);
- ``searchsorted``, ``cummax`` and ``cummin`` (``ordering_rules``);
- random variables batch their parameters and size (``random_rules``);
- ``scan``, ``while_loop`` and ``cond`` batch their bodies (``control_rules``);
- any other Op becomes a ``Blockwise`` node holding the original node as its core graph:
  JAX lowers it with ``jax.vmap``, NumPy with a loop (``fallback_ops`` lists which Ops of
  a graph took it; a random draw under a shared key is refused: every element would get
  the same draw).

Nodes that do not depend on a replaced input are kept as they are, so vectorizing a
graph of elementwise Ops adds no node beyond the new inputs.
"""

from rewritekit.vectorize import (  # noqa: F401 (imported for their rules)
    control_rules,
    indexing,
    linalg_rules,
    ordering_rules,
    random_rules,
    tensor_rules,
)
from rewritekit.vectorize.core import batch_graph, fallback_ops, vectorize, vmap
from rewritekit.vectorize.registry import BATCH_RULES, BatchRule, Unbatched, batch_rule

__all__ = [
    "BATCH_RULES",
    "BatchRule",
    "Unbatched",
    "batch_graph",
    "batch_rule",
    "fallback_ops",
    "vectorize",
    "vmap",
]
