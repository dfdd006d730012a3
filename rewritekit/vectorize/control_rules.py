"""Batching rules of control flow: ``scan``, ``while_loop`` and ``cond`` batch their bodies.

The body is vectorized with the same rules (``batch_graph``) over fresh inputs, batched
where the outer inputs are. A carry whose first value is shared but whose new value reads
the batch becomes batched (found by repeating until no carry grows), and the loop then
starts from the shared value repeated over the batch.

- ``scan``: batched sequences are scanned along their first core axis (moved in front),
  and batched outputs stacked along the loop's axis come back behind the batch axes.
- ``while_loop``: under a shared condition, the batched body; under a batched condition
  (the elements stop at different steps), every state is batched, the loop runs while any
  element's condition holds and an element whose condition fails keeps its state, as
  ``jax.vmap`` does.
- ``cond``: under a shared predicate, a cond of the batched branches; under a batched
  predicate, both branches for every element and ``where`` picks (``jax.vmap``'s
  ``select``: both branches run).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewritekit.ir import Apply, TensorType, Var, apply_op
from rewritekit.ir.inner import InnerGraph, close_over
from rewritekit.tensor import any as reduce_any
from rewritekit.tensor import moveaxis, where
from rewritekit.tensor.control.ops import Cond, Scan, While
from rewritekit.tensor.shape_vectors import lengths
from rewritekit.vectorize.core import batch_graph
from rewritekit.vectorize.registry import (
    Unbatched,
    batch_lengths,
    broadcast_batch,
    pad_core,
    rule,
)

__all__: list[str] = []


def _static_batch(inputs: list[Var], batched: list[bool], nb: int) -> tuple[int | None, ...]:
    return inputs[batched.index(True)].type.shape[:nb]


def _fresh(types: Sequence[TensorType], flags: list[bool], batch: tuple) -> list[Var]:
    """Inputs of a new body: with the batch axes where ``flags`` says."""
    return [
        Var(t.with_shape((*batch, *t.shape)) if f else t) for t, f in zip(types, flags, strict=True)
    ]


def _through(
    graph: InnerGraph, args: list[Var], flags: list[bool], nb: int
) -> list[tuple[Var, bool]]:
    """``graph``'s outputs over ``args`` (batched where ``flags`` says), each with whether
    it is batched."""
    pairs = list(zip(graph.inputs, args, flags, strict=True))
    return batch_graph(
        list(graph.outputs),
        {p: a for p, a, f in pairs if f},
        {p: a for p, a, f in pairs if not f},
        nb,
    )


def _as(value: tuple[Var, bool], batched: bool, batch: list[Any]) -> Var:
    """A body's output batched as its carry is (a shared value repeated)."""
    var, has = value
    return broadcast_batch(var, batch) if batched and not has else var


@rule(Scan)
def _scan(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    op: Scan = node.op  # type: ignore[assignment]
    nc, ns, body = op.n_carry, op.n_seq, op.body
    static = _static_batch(inputs, batched, nb)
    flags = list(batched)
    while True:
        args = _fresh(body.input_types, flags, static)
        outs = _through(body, args, flags, nb)
        grown = [i for i in range(nc) if outs[i][1] and not flags[i]]
        if not grown:
            break
        for i in grown:
            flags[i] = True
    inner_batch = lengths(args[flags.index(True)])[:nb]
    results = [_as(o, flags[i], inner_batch) if i < nc else o[0] for i, o in enumerate(outs)]
    graph, free = close_over(args, results)
    batch = batch_lengths(inputs, batched, nb)
    outer = [
        *(_as((v, batched[i]), flags[i], batch) for i, v in enumerate(inputs[:nc])),
        *(
            moveaxis(v, nb, 0) if f else v
            for v, f in zip(inputs[nc : nc + ns], flags[nc : nc + ns], strict=True)
        ),
        *inputs[nc + ns :],
        *free,
    ]
    new = Scan(graph, nc, ns, op.length, op.reverse, op.checkpoint)
    final = list(apply_op(new, tuple(outer)))
    ys = [has for _, has in outs[nc:]]
    final[nc:] = [moveaxis(y, 0, nb) if has else y for y, has in zip(final[nc:], ys, strict=True)]
    shared = [i for i in range(nc) if not flags[i]] + [
        nc + m for m, has in enumerate(ys) if not has
    ]
    return Unbatched(final, positions=shared)


@rule(While)
def _while(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    op: While = node.op  # type: ignore[assignment]
    n = op.n_state
    static = _static_batch(inputs, batched, nb)
    flags = list(batched)
    while True:
        args = _fresh(op.body_graph.input_types, flags, static)
        new_state = _through(op.body_graph, args, flags, nb)
        ((pred, varies),) = _through(op.cond_graph, args, flags, nb)
        # elements that stop at different steps: every state must stop with its element
        grown = [i for i in range(n) if not flags[i] and (varies or new_state[i][1])]
        if not grown:
            break
        for i in grown:
            flags[i] = True
    inner_batch = lengths(args[flags.index(True)])[:nb]
    moved = [_as(s, flags[i], inner_batch) for i, s in enumerate(new_state)]
    if varies:  # an element whose condition fails keeps its state
        moved = [
            where(pad_core(pred, nb, 0, a.ndim - nb), m, a)
            for m, a in zip(moved, args[:n], strict=True)
        ]
        pred = reduce_any(pred)
    _, free = close_over(args, moved)
    cond_graph, free = close_over(args, [pred], extra=free)
    body_graph, _ = close_over(args, moved, extra=free)
    batch = batch_lengths(inputs, batched, nb)
    outer = [
        *(_as((v, batched[i]), flags[i], batch) for i, v in enumerate(inputs[:n])),
        *inputs[n:],
        *free,
    ]
    final = apply_op(While(cond_graph, body_graph, n), tuple(outer))
    return Unbatched(final, positions=[i for i in range(n) if not flags[i]])


@rule(Cond)
def _cond(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    op: Cond = node.op  # type: ignore[assignment]
    pred, *operands = inputs
    flags = batched[1:]
    if batched[0]:  # both branches for every element; where picks
        taken = _through(op.true_graph, operands, flags, nb)
        other = _through(op.false_graph, operands, flags, nb)
        return [
            where(pad_core(pred, nb, 0, core.ndim), t, f)
            for (t, _), (f, _), core in zip(taken, other, node.outputs, strict=True)
        ]
    static = _static_batch(inputs, batched, nb)
    args = _fresh(op.true_graph.input_types, flags, static)
    taken = _through(op.true_graph, args, flags, nb)
    other = _through(op.false_graph, args, flags, nb)
    out_flags = [a or b for (_, a), (_, b) in zip(taken, other, strict=True)]
    inner_batch = lengths(args[flags.index(True)])[:nb]
    true_out = [_as(t, f, inner_batch) for t, f in zip(taken, out_flags, strict=True)]
    false_out = [_as(t, f, inner_batch) for t, f in zip(other, out_flags, strict=True)]
    _, free = close_over(args, true_out)
    false_graph, free = close_over(args, false_out, extra=free)
    true_graph, _ = close_over(args, true_out, extra=free)
    final = apply_op(Cond(true_graph, false_graph), (pred, *operands, *free))
    return Unbatched(final, positions=[i for i, f in enumerate(out_flags) if not f])
