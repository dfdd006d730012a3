"""Batching rules of the decompositions (``rewritekit.tensor.decompositions``): each Op
takes a stack of matrices, so the batch axes are more of the stack."""

from __future__ import annotations

from typing import Any

from rewritekit.ir import Apply, Var, apply_op
from rewritekit.tensor import linalg as la
from rewritekit.vectorize.registry import rule


@rule(la.Svd, la.Eigh, la.Qr, la.Pinv, la.Expm)
def _stacked(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """One input, a stack of matrices: the batched input is a longer stack."""
    return apply_op(node.op, tuple(inputs))
