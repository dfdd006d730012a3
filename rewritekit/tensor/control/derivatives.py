"""Derivatives of loops and branches, built from their inner graphs' derivatives.

A scan's vjp is a reverse scan over the carries the forward stored (``scan_vjp``), or,
with ``checkpoint=True``, over blocks of ``ceil(sqrt(T))`` steps recomputed from one
stored carry each (``checkpointed_vjp``); a cond's vjp is the cond of the branches' vjps.
Forward mode loops over values and tangents together: a scan of (carry, tangent), a while
loop of (state, tangent), a cond of the branches' jvps. The new loops and branches are of
the class of the node being differentiated (``type(op)``): this module does not import
``ops``, which calls it from the Ops' ``vjp`` and ``jvp``.

The differentiators of whole graphs live in ``rewritekit.autodiff``, which registers them
here (``set_differentiator``), as this layer may not import it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Constant, Grads, TensorType, Var, Vars, apply_op, replace, toposort
from rewritekit.ir.inner import InnerGraph, close_over
from rewritekit.tensor.arithmetic import add, cast, ceil, maximum
from rewritekit.tensor.creation import zeros_like
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import reshape
from rewritekit.tensor.shape_vectors import lengths, shape_i
from rewritekit.tensor.transcendental import sqrt
from rewritekit.tensor.ufunc import Elemwise

if TYPE_CHECKING:
    from rewritekit.tensor.control.ops import Cond, Scan, While

Differentiator = Callable[[Sequence[Var], Sequence[Var], Sequence[Var]], list[Var | None]]
_DIFFERENTIATE: list[Differentiator] = []


def set_differentiator(backward: Differentiator, forward: Differentiator) -> None:
    """Register ``backward(outputs, cotangents, wrt) -> [gradient or None]`` and
    ``forward(outputs, wrt, tangents) -> [tangent or None]``: autodiff's, when importing
    rewritekit imports it; the derivative rules below run only under autodiff's sweeps."""
    _DIFFERENTIATE[:] = [backward, forward]


def _backward(outputs: Sequence[Var], cotangents: Sequence[Var], wrt: Sequence[Var]) -> list[Any]:
    return _DIFFERENTIATE[0](outputs, cotangents, wrt)


def _forward(outputs: Sequence[Var], wrt: Sequence[Var], tangents: Sequence[Var]) -> list[Any]:
    """The tangents of ``outputs`` (None where they do not depend on ``wrt``)."""
    return _DIFFERENTIATE[1](outputs, wrt, tangents)


def _reached(outputs: Sequence[Var], sources: Sequence[Var]) -> list[bool]:
    """Which ``outputs`` depend on ``sources`` through inexact values."""
    live = set(sources)
    for node in toposort(list(outputs)):
        if any(i in live for i in node.inputs):
            live.update(o for o in node.outputs if _inexact(o))
    return [o in live and _inexact(o) for o in outputs]


def _live_state(graph: InnerGraph, n: int, given: set[int], others: Sequence[int]) -> list[int]:
    """The state positions (of the first ``n`` inputs and outputs of a loop body ``graph``)
    that carry a tangent: those ``given`` one, and those the body makes depend on a state
    or another input (``others``, positions) that carries one, to a fixpoint."""
    live = set(given)
    while True:
        sources = [graph.inputs[i] for i in sorted(live)] + [graph.inputs[i] for i in others]
        reached = _reached(graph.outputs[:n], sources)
        grown = live | {i for i in range(n) if reached[i]}
        if grown == live:
            return sorted(live)
        live = grown


def _inexact(var: Var | TensorType) -> bool:
    t = var if isinstance(var, TensorType) else var.type
    return t.kind in "fc"


def scan_vjp(
    op: Scan, inputs: Vars, cotangents: Sequence[Var | None], history: list[Var] | None = None
) -> Grads:
    """A reverse scan: at each step, the body's vjp at that step, carrying the carries'
    cotangents and summing the closed-over values'.

    The forward values the vjp reads (the residuals: the body's values at that step, and
    the derivative factors computed from them alone, as JAX's linearization stores) are
    stacked by the forward scan as extra ``y`` outputs (``Scan.stored``; ``merge_scans``
    makes it the forward loop itself), so the reverse step recomputes none of them; but an
    elementwise step whose residuals outnumber its carries and sequences
    ``RECOMPUTE_AFTER`` times over is recomputed from the carries instead. ``history``:
    the carries each step starts from, stacked, when the caller has them (a checkpointed
    loop): the reverse step then recomputes the forward step from them.
    """
    nc, ns = op.n_carry, op.n_seq
    init, seqs, consts = inputs[:nc], inputs[nc : nc + ns], inputs[nc + ns :]
    body = op.body
    n_y = len(body.outputs) - nc
    dc = [i for i in range(nc) if _inexact(init[i])]
    dk = [j for j, k in enumerate(consts) if _inexact(k)]
    dx = [i for i in range(ns) if _inexact(seqs[i])]
    dy = [m for m in range(n_y) if _inexact(body.outputs[nc + m])]
    # the reverse step, traced over fresh Vars: carries (g_c, acc_k), slices (c, x, ct_y), consts
    g_c = [Var(init[i].type.with_shape(body.inputs[i].type.shape)) for i in dc]
    acc = [Var(body.inputs[nc + ns + j].type) for j in dk]
    c_t = [Var(t) for t in body.input_types[:nc]]
    x_t = [Var(t) for t in body.input_types[nc : nc + ns]]
    ct_y = [Var(body.outputs[nc + m].type) for m in dy]
    k_t = [Var(t) for t in body.input_types[nc + ns :]]
    outs = body.apply([*c_t, *x_t, *k_t])
    wanted = [outs[i] for i in dc] + [outs[nc + m] for m in dy]
    wrt = [*(c_t[i] for i in dc), *(x_t[i] for i in dx), *(k_t[j] for j in dk)]
    grads = _backward(wanted, [*g_c, *ct_y], wrt)
    n1, n2 = len(dc), len(dc) + len(dx)
    new_g = [zeros_like(c_t[i]) if g is None else g for i, g in zip(dc, grads[:n1], strict=True)]
    new_acc = [a if g is None else add(a, g) for a, g in zip(acc, grads[n2:], strict=True)]
    g_x = [zeros_like(x_t[i]) if g is None else g for i, g in zip(dx, grads[n1:n2], strict=True)]
    step = [*new_g, *new_acc, *g_x]
    if history is not None or op.checkpoint:
        stored_t, stored = [*c_t, *x_t], [*(history or op.history(inputs)), *seqs]
    else:
        found = _residuals(op, inputs, [*c_t, *x_t], k_t, step)
        if found is None:  # cheaper to recompute: read the carries each step started from
            stored_t, stored = [*c_t, *x_t], [*op.history(inputs), *seqs]
        else:
            stored_t, stored, step = found
    args = [*g_c, *acc, *stored_t, *ct_y, *k_t]
    graph, free = close_over(args, step)
    back = type(op)(graph, len(dc) + len(dk), len(stored_t) + len(dy), op.length, not op.reverse)
    outer = [
        *(cotangents[i] for i in dc),
        *(zeros_like(consts[j]) for j in dk),
        *stored,
        *(cotangents[nc + m] for m in dy),
        *consts,
        *free,
    ]
    results = apply_op(back, tuple(outer))
    result: Grads = [None] * len(inputs)
    for r, i in enumerate(dc):
        result[i] = results[r]
    for r, j in enumerate(dk):
        result[nc + ns + j] = results[len(dc) + r]
    for r, i in enumerate(dx):
        result[nc + i] = results[len(dc) + len(dk) + r]
    return result


#: A reverse step recomputes an elementwise forward step, reading only the carries it
#: started from, where storing its residuals would take more than this many stacked
#: values per carry and sequence: each stacked value is a store in the forward loop and a
#: load in the reverse one, which on XLA's CPU cost more than the elementwise work again
#: (the asymptotic ``log(erfc(x))``'s derivative reads 24 values of a step of 48 nodes).
RECOMPUTE_AFTER = 3


def _recompute(op: Scan, n_stored: int) -> bool:
    """Whether the reverse step recomputes the forward step rather than read residuals."""
    if n_stored <= RECOMPUTE_AFTER * (op.n_carry + op.n_seq):
        return False
    return all(isinstance(node.op, Elemwise) for node in toposort(op.body.outputs))


def _residuals(
    op: Scan, inputs: Vars, moving: list[Var], fixed: list[Var], step: list[Var]
) -> tuple[list[Var], list[Var], list[Var]] | None:
    """The reverse ``step`` (over the step's carries and slices ``moving``, the closed-over
    ``fixed`` and the cotangents) reading its forward values from stacked sequences.

    A forward value reads ``moving`` and nothing that carries a cotangent; the residuals
    are those that the rest of ``step`` reads. Each becomes a fresh Var, a slice of its
    stacked values: a sequence of the loop as it is, or a ``y`` of ``Scan.stored``.

    Returns:
        ``(slices, stacked, step)``: the fresh Vars, the outer sequences they are slices
        of, and ``step`` over them (it reads no ``moving`` Var); None where recomputing
        the step is cheaper than storing that many (``_recompute``).
    """
    forward, fixed_set = set(moving), set(fixed)
    residuals: dict[Var, None] = {}
    for node in toposort(step):
        kinds = [_kind(i, forward, fixed_set) for i in node.inputs]
        if "back" in kinds:
            read = (i for i, k in zip(node.inputs, kinds, strict=True) if k == "forward")
            residuals.update((i, None) for i in read)
        elif "forward" in kinds:
            forward.update(node.outputs)
        else:
            fixed_set.update(node.outputs)
    residuals.update((v, None) for v in step if v in forward)
    residuals = _recomputing_integers(list(residuals), set(moving), forward)
    if _recompute(op, len(residuals)):
        return None
    body, nc, ns = op.body, op.n_carry, op.n_seq
    seqs = dict(zip(moving[nc:], inputs[nc : nc + ns], strict=True))
    kept = [r for r in residuals if r not in seqs]
    placeholders = dict(zip([*moving, *fixed], body.inputs, strict=True))
    stacked = dict(zip(kept, op.stored(inputs, replace(kept, placeholders)), strict=True))
    stacked.update((r, seqs[r]) for r in residuals if r in seqs)
    slices = {r: Var(r.type) for r in residuals}
    return list(slices.values()), [stacked[r] for r in slices], replace(step, slices)


def _recomputing_integers(
    residuals: list[Var], moving: set[Var], forward: set[Var]
) -> dict[Var, None]:
    """``residuals`` with each integer value computed in the step (a shape, an index) left
    to the reverse step, which then needs its forward inputs instead: a backend may need
    it as a static value (JAX's shapes), which a stacked sequence is not."""
    kept: dict[Var, None] = {}
    todo = list(residuals)
    while todo:
        r = todo.pop(0)
        if r.type.kind in "iu" and r not in moving and r.owner is not None:
            todo.extend(i for i in r.owner.inputs if i in forward)
        else:
            kept[r] = None
    return kept


def _kind(var: Var, forward: set[Var], fixed: set[Var]) -> str:
    """``forward`` (reads the step's carries or slices only), ``fixed`` (a closed-over value
    or constant: the same at every step) or ``back`` (reads a cotangent), for a Var whose
    node ``_residuals`` has classified already."""
    if var in forward:
        return "forward"
    if var in fixed or isinstance(var, Constant):
        return "fixed"
    return "back"


def checkpointed_vjp(op: Scan, inputs: Vars, cotangents: Sequence[Var | None]) -> Grads:
    """The vjp of a scan that keeps the carry only every ``k = ceil(sqrt(T))`` steps.

    The ``T`` steps are cut into ``T // k`` blocks of ``k`` steps and a remainder of
    ``r < k`` steps, run last. A scan over the blocks (each a scan of ``k`` steps that
    computes carries only) stores the carry each block starts from. The backward is the
    plain vjp of the remainder, then that of the blocked loop (an outer scan whose body is
    the scan of ``k`` steps) from the stored block carries: going back through a block
    first recomputes its ``k`` carries. Memory: ``T // k + k + r`` carries; work: two more
    forward sweeps of the body than the stored forward's vjp.
    """
    nc, ns = op.n_carry, op.n_seq
    seqs, consts = list(inputs[nc : nc + ns]), list(inputs[nc + ns :])
    steps = _steps(op, seqs)
    if nc == 0 or (isinstance(steps, int) and steps <= 1):
        return scan_vjp(op, inputs, cotangents)
    static = isinstance(steps, int)
    k, blocks, rem = _block_sizes(steps)
    cuts = [_cut(s, k, blocks, rem, op.reverse) for s in seqs]
    ct_cuts = [
        _cut(ct, k, blocks, rem, op.reverse) if ct is not None and _inexact(ct) else (None, None)
        for ct in cotangents[nc:]
    ]
    seq_blocks = [full for full, _ in cuts]
    body = op.body
    block_len, outer_len = (k, blocks) if static else (None, None)
    fresh = [Var(t) for t in body.input_types]
    for j in range(ns):
        t = fresh[nc + j].type
        fresh[nc + j] = Var(t.with_shape((block_len, *t.shape)))
    block = apply_op(type(op)(body, nc, ns, block_len, op.reverse), tuple(fresh))
    carries_only = body.with_outputs(body.outputs[:nc])
    block_carries = apply_op(type(op)(carries_only, nc, ns, block_len, op.reverse), tuple(fresh))
    outer_body, _ = close_over(fresh, block)
    lean_body, _ = close_over(fresh, [*block_carries, *fresh[:nc]])
    stored = apply_op(
        type(op)(lean_body, nc, ns, outer_len, op.reverse), (*inputs[:nc], *seq_blocks, *consts)
    )
    middle, history = list(stored[:nc]), list(stored[nc:])
    g_mid: list[Var | None] = list(cotangents[:nc])
    tail: Grads = [None] * len(inputs)
    if not static or rem > 0:
        rem_op = type(op)(body, nc, ns, rem if static else None, op.reverse)
        tail = scan_vjp(
            rem_op,
            [*middle, *(r for _, r in cuts), *consts],
            [*cotangents[:nc], *(r for _, r in ct_cuts)],
        )
        g_mid = [zeros_like(m) if g is None else g for m, g in zip(middle, tail[:nc], strict=True)]
    outer = type(op)(outer_body, nc, ns, outer_len, op.reverse)
    head = scan_vjp(
        outer,
        [*inputs[:nc], *seq_blocks, *consts],
        [*g_mid, *(full for full, _ in ct_cuts)],
        history=history,
    )
    result: Grads = list(head[:nc])
    for j, seq in enumerate(seqs):
        g_full, g_rem = head[nc + j], tail[nc + j]
        result.append(None if g_full is None else _uncut(seq, g_full, g_rem, op.reverse))
    for a, b in zip(head[nc + ns :], tail[nc + ns :], strict=True):
        result.append(b if a is None else a if b is None else add(a, b))
    return result


def _steps(op: Scan, seqs: Sequence[Var]) -> int | Var:
    """The number of steps: a Python int where it is static, else an int64 scalar Var."""
    if op.length is not None:
        return op.length
    for seq in seqs:
        if seq.type.shape[0] is not None:
            return int(seq.type.shape[0])
    return shape_i(seqs[0], 0)


def _block_sizes(steps: int | Var) -> tuple[Any, Any, Any]:
    """``(k, T // k, T - k * (T // k))`` for ``k = max(ceil(sqrt(T)), 1)``."""
    if isinstance(steps, int):
        k = max(math.isqrt(steps - 1) + 1 if steps else 1, 1)
    else:
        k = maximum(cast(ceil(sqrt(cast(steps, "float64"))), "int64"), 1)
    blocks = steps // k
    return k, blocks, steps - blocks * k


def _rest(v: Var) -> list[Any]:
    return lengths(v)[1:]


def _cut(v: Var, k: Any, blocks: Any, rem: Any, reverse: bool) -> tuple[Var, Var | None]:
    """``v`` (steps along axis 0) as (blocks of ``k`` steps, shape (blocks, k, ...), and the
    ``rem`` remaining steps, run last: at the end, or at the start when ``reverse``)."""
    if isinstance(rem, int) and rem == 0:
        return reshape(v, (blocks, k, *_rest(v))), None
    full, tail = (v[rem:], v[:rem]) if reverse else (v[: blocks * k], v[blocks * k :])
    return reshape(full, (blocks, k, *_rest(v))), tail


def _uncut(like: Var, full: Var, tail: Var | None, reverse: bool) -> Var:
    """The inverse of ``_cut``: blocks and remainder back into one axis of steps."""
    flat = reshape(full, (-1, *_rest(like)))
    if tail is None:
        return flat
    return concatenate([tail, flat] if reverse else [flat, tail])


def _tangent(t: Var | None, like: Var) -> Var:
    """A tangent of ``like``'s type (zeros where there is none) for a loop's state."""
    if t is None:
        return zeros_like(like)
    if t.type != like.type and None not in like.type.shape:
        return reshape(t, like.type.shape)
    return t


def scan_jvp(op: Scan, inputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
    nc, ns = op.n_carry, op.n_seq
    body = op.body
    has = [t is not None and _inexact(v) for v, t in zip(inputs, tangents, strict=True)]
    dx = [j for j in range(ns) if has[nc + j]]
    dk = [j for j in range(len(inputs) - nc - ns) if has[nc + ns + j]]
    others = [nc + j for j in dx] + [nc + ns + j for j in dk]
    dc = _live_state(body, nc, {i for i in range(nc) if has[i]}, others)
    c = [Var(t) for t in body.input_types[:nc]]
    x = [Var(t) for t in body.input_types[nc : nc + ns]]
    k = [Var(t) for t in body.input_types[nc + ns :]]
    t_c = [Var(c[i].type) for i in dc]
    t_x = [Var(x[j].type) for j in dx]
    t_k = [Var(k[j].type) for j in dk]
    outs = body.apply([*c, *x, *k])
    wrt = [*(c[i] for i in dc), *(x[j] for j in dx), *(k[j] for j in dk)]
    tans = _forward(outs, wrt, [*t_c, *t_x, *t_k])
    dy = [m for m in range(len(outs) - nc) if tans[nc + m] is not None]
    results = [*outs[:nc], *(_tangent(tans[i], c[i]) for i in dc), *(tans[nc + m] for m in dy)]
    graph, free = close_over([*c, *t_c, *x, *t_x, *k, *t_k], results)
    tangent_scan = type(op)(graph, nc + len(dc), ns + len(dx), op.length, op.reverse, op.checkpoint)
    outer = [
        *inputs[:nc],
        *(tangents[i] if has[i] else zeros_like(inputs[i]) for i in dc),
        *inputs[nc : nc + ns],
        *(tangents[nc + j] for j in dx),
        *inputs[nc + ns :],
        *(tangents[nc + ns + j] for j in dk),
        *free,
    ]
    final = apply_op(tangent_scan, tuple(outer))
    out: list[Var | None] = [None] * len(body.outputs)
    for r, i in enumerate(dc):
        out[i] = final[nc + r]
    for r, m in enumerate(dy):
        out[nc + m] = final[nc + len(dc) + r]
    return out


def while_jvp(op: While, inputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
    """A while loop over (state, tangent state) under the same condition, whose body is
    this body and its jvp."""
    n = op.n_state
    body = op.body_graph
    has = [t is not None and _inexact(v) for v, t in zip(inputs, tangents, strict=True)]
    dk = [j for j in range(len(inputs) - n) if has[n + j]]
    live = _live_state(body, n, {i for i in range(n) if has[i]}, [n + j for j in dk])
    state = [Var(t) for t in body.input_types[:n]]
    consts = [Var(t) for t in body.input_types[n:]]
    t_s, t_k = [Var(state[i].type) for i in live], [Var(consts[j].type) for j in dk]
    new = body.apply([*state, *consts])
    wrt = [*(state[i] for i in live), *(consts[j] for j in dk)]
    tans = _forward(new, wrt, [*t_s, *t_k])
    moved = [*new, *(_tangent(tans[i], state[i]) for i in live)]
    (pred,) = op.cond_graph.apply([*state, *consts])
    args = [*state, *t_s, *consts, *t_k]
    _, free = close_over(args, moved)
    cond_graph, free = close_over(args, [pred], extra=free)
    body_graph, _ = close_over(args, moved, extra=free)
    outer = [
        *inputs[:n],
        *(tangents[i] if has[i] else zeros_like(inputs[i]) for i in live),
        *inputs[n:],
        *(tangents[n + j] for j in dk),
        *free,
    ]
    final = apply_op(type(op)(cond_graph, body_graph, n + len(live)), tuple(outer))
    out: list[Var | None] = [None] * n
    for r, i in enumerate(live):
        out[i] = final[n + r]
    return out


def cond_vjp(op: Cond, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
    """The cond, under the same predicate, of the branches' vjps."""
    pred, operands = inputs[0], inputs[1:]
    diff = [i for i, v in enumerate(operands) if _inexact(v)]
    outs_d = [m for m, o in enumerate(outputs) if _inexact(o)]
    fresh = [Var(t) for t in op.true_graph.input_types]
    cts = [Var(outputs[m].type) for m in outs_d]
    branches = []
    for graph in (op.true_graph, op.false_graph):
        outs = graph.apply(fresh)
        grads = _backward([outs[m] for m in outs_d], cts, [fresh[i] for i in diff])
        grads = [zeros_like(fresh[i]) if g is None else g for i, g in zip(diff, grads, strict=True)]
        branches.append(close_over([*fresh, *cts], grads))
    (t_graph, t_free), (f_graph, _) = branches
    if t_free or branches[1][1]:
        raise GraphTypeError("cond: internal error: a vjp branch closed over outer values")
    results = apply_op(
        type(op)(t_graph, f_graph), (pred, *operands, *(cotangents[m] for m in outs_d))
    )
    grads_out: Grads = [None] * len(inputs)
    for r, i in enumerate(diff):
        grads_out[1 + i] = results[r]
    return grads_out


def cond_jvp(
    op: Cond, inputs: Vars, outputs: Vars, tangents: Sequence[Var | None]
) -> list[Var | None]:
    """The cond, under the same predicate, of the branches' jvps."""
    pred, operands = inputs[0], inputs[1:]
    live = [
        i
        for i, (v, t) in enumerate(zip(operands, tangents[1:], strict=True))
        if t is not None and _inexact(v)
    ]
    fresh = [Var(t) for t in op.true_graph.input_types]
    t_in = [Var(fresh[i].type) for i in live]
    branches = []
    for graph in (op.true_graph, op.false_graph):
        outs = graph.apply(fresh)
        branches.append((outs, _forward(outs, [fresh[i] for i in live], t_in)))
    out_live = [m for m in range(len(outputs)) if any(tans[m] is not None for _, tans in branches)]
    if not out_live:
        return [None] * len(outputs)
    results = [[_tangent(tans[m], outs[m]) for m in out_live] for outs, tans in branches]
    args = [*fresh, *t_in]
    _, free = close_over(args, results[0])
    f_graph, free = close_over(args, results[1], extra=free)
    t_graph, _ = close_over(args, results[0], extra=free)
    final = apply_op(
        type(op)(t_graph, f_graph), (pred, *operands, *(tangents[1 + i] for i in live), *free)
    )
    out: list[Var | None] = [None] * len(outputs)
    for r, m in enumerate(out_live):
        out[m] = final[r]
    return out
