"""The batching rules of the random variables and keys (``rewritekit.tensor.random``).

``split`` and ``fold_in`` of batched keys or data are vectorized whole, as batched keys
are. Batched parameters under a shared key make one draw of the batch (PyTensor's
semantics):
the batch axes join the draw's size, so every element gets its own draw, and the next key
is shared. Batched keys give each element its own stream: the node is vectorized whole
(a ``Blockwise``: ``jax.vmap`` splits every key, NumPy loops), which is what a loop over
the elements would compute.
"""

from __future__ import annotations

from typing import Any

from rewritekit.ir import Apply, Var, apply_op
from rewritekit.tensor.random import FoldIn, RandomVariable, SplitKey
from rewritekit.tensor.shape_vectors import as_shape_vector
from rewritekit.vectorize.core import blockwise
from rewritekit.vectorize.registry import Unbatched, batch_lengths, pad_core, rule

__all__: list[str] = []


@rule(RandomVariable)
def _random_variable(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    op: RandomVariable = node.op  # type: ignore[assignment]
    if batched[0]:
        return blockwise(node, inputs, batched, nb)
    if batched[1]:
        return None  # a size that varies over the batch: no rule (and no fallback)
    key, size, *params = inputs
    rank = node.outputs[1].ndim - op.ndim_supp  # the core draw's batch rank
    params = [
        pad_core(p, nb, core.ndim, rank + k) if b else p
        for p, core, b, k in zip(params, node.inputs[2:], batched[2:], op.ndims_params, strict=True)
    ]
    new = op
    if op.size is not None:
        batch = batch_lengths(inputs, batched, nb)
        static = tuple(n if isinstance(n, int) else None for n in batch)
        entries = [n if n is not None else size[d] for d, n in enumerate(op.size)]
        size = as_shape_vector([*batch, *entries], f"vectorize: the size of {op}")
        more = (getattr(op, p) for p in type(op).__props__[2:])  # lkj_cholesky's n
        new = type(op)((*static, *op.size), op.dtype, *more)
    return Unbatched(apply_op(new, (key, size, *params)), positions=(0,))


@rule(SplitKey, FoldIn)
def _keys(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Keys made from batched keys or data: the node vectorized whole (``jax.vmap`` of
    JAX's own split and fold_in; NumPy loops), each element the numbers a loop gives."""
    return blockwise(node, inputs, batched, nb)
