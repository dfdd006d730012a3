"""``Blockwise``: a core graph applied to every element of leading batch axes.

The fallback of vectorization (``rk.vectorize``) for an Op without a batching rule: the
node ``f(a, b)`` whose input ``a`` gained batch axes ``(B1, ..., Bk)`` becomes one
``Blockwise`` node holding ``f``'s core graph (an inner graph over placeholders,
``rewritekit.ir.inner``), with ``batched`` saying which inputs carry the batch axes (the
others are the same for every element). JAX lowers it with ``jax.vmap``, NumPy with a
loop over the batch; its vjp is the ``Blockwise`` of the core's vjp.
"""

from __future__ import annotations

from collections.abc import Sequence

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Grads, TensorType, Var, Vars, apply_op
from rewritekit.ir.inner import InnerGraph, close_over
from rewritekit.tensor.aggregates import Sum
from rewritekit.tensor.control.derivatives import _backward, _inexact
from rewritekit.tensor.control.ops import _Control
from rewritekit.tensor.creation import zeros_like

__all__ = ["Blockwise"]


class Blockwise(_Control):
    """``core`` applied to each element of the first ``batch_ndim`` axes of the inputs
    marked ``batched`` (all of one batch shape); the other inputs are shared.

    Parameters:
        core: the inner graph of one element, over the inputs' core types.
        batched: for each input, whether it has the leading batch axes.
        batch_ndim: how many leading axes are batch axes.

    Outputs: each core output with the batch axes in front.
    """

    __props__ = ("core", "batched", "batch_ndim")
    _graph_props = ("core",)
    core: InnerGraph
    batched: tuple[bool, ...]
    batch_ndim: int

    def __init__(self, core: InnerGraph, batched: Sequence[bool], batch_ndim: int) -> None:
        batched = tuple(bool(b) for b in batched)
        if len(batched) != len(core.inputs):
            raise GraphTypeError(
                f"blockwise: {len(batched)} batched flags for {len(core.inputs)} core inputs"
            )
        if batch_ndim < 1 or not any(batched):
            raise GraphTypeError("blockwise: needs at least one batch axis and batched input")
        super().__init__(core, batched, int(batch_ndim))

    def infer_types(self, *types: TensorType) -> tuple[TensorType, ...]:
        core, nb = self.core, self.batch_ndim
        if len(types) != len(core.inputs):
            raise GraphTypeError(f"blockwise: expected {len(core.inputs)} inputs, got {len(types)}")
        batch: list[int | None] = [None] * nb
        first: list[int | None] = [None] * nb  # the input that set each static length
        for position, (t, want, b) in enumerate(
            zip(types, core.input_types, self.batched, strict=True)
        ):
            inner = t.with_shape(t.shape[nb:]) if b else t
            if (b and t.ndim < nb) or not want.is_compatible(inner):
                raise GraphTypeError(
                    f"blockwise: input {position} has type {t}, which does not hold "
                    f"{'batches of ' if b else ''}the core's {want}"
                )
            if not b:
                continue
            for axis, n in enumerate(t.shape[:nb]):
                if n is None:
                    continue
                if batch[axis] is not None and batch[axis] != n:
                    raise ShapeError(
                        f"blockwise: batch axis {axis} has length {batch[axis]} in input "
                        f"{first[axis]} and {n} in input {position}"
                    )
                batch[axis], first[axis] = n, position
        return tuple(t.with_shape((*batch, *t.shape)) for t in core.output_types)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        """The ``Blockwise`` of the core's vjp; a shared input's gradient is summed over
        the batch."""
        core = self.core
        diff = [i for i, v in enumerate(inputs) if _inexact(v)]
        live = [m for m, o in enumerate(outputs) if _inexact(o) and cotangents[m] is not None]
        if not diff or not live:
            return [None] * len(inputs)
        fresh = [Var(t) for t in core.input_types]
        cts = [Var(core.output_types[m]) for m in live]
        outs = core.apply(fresh)
        grads = _backward([outs[m] for m in live], cts, [fresh[i] for i in diff])
        grads = [zeros_like(fresh[i]) if g is None else g for i, g in zip(diff, grads, strict=True)]
        graph, free = close_over([*fresh, *cts], grads)
        if free:
            raise GraphTypeError("blockwise: internal error: the vjp closed over outer values")
        op = Blockwise(graph, (*self.batched, *[True] * len(live)), self.batch_ndim)
        results = apply_op(op, (*inputs, *(cotangents[m] for m in live)))
        grads_out: Grads = [None] * len(inputs)
        for r, i in enumerate(diff):
            g = results[r]
            if not self.batched[i]:  # shared by every element: the sum of their gradients
                g = apply_op(Sum(tuple(range(self.batch_ndim))), (g,))[0]
            grads_out[i] = g
        return grads_out
