"""Control flow in the graph: ``scan``, ``fori_loop``, ``map``, ``while_loop``, ``cond``.

The API is ``jax.lax``'s. A loop body or a branch is a plain Python function of symbolic
tensors, traced once into an inner graph over canonical placeholders
(``rewritekit.ir.inner``); the loop or branch is one node (``Scan``, ``While``, ``Cond``)
whose parameters hold that graph and whose inputs are the outer Vars: initial carries,
scanned sequences, and the outer Vars the function closed over. The same body traced
twice gives the same node.

Derivatives are built from the body's: a scan's vjp is a reverse scan over the carries
the forward stored (or, with ``checkpoint=True``, over blocks of ``ceil(sqrt(T))`` steps
recomputed from one stored carry each), a cond's the cond of the branches' vjps, a
bounded ``while_loop`` (``max_steps``) is a scan with a done-mask. Forward mode (``jvp``
rules) loops over values and tangents together: a scan of (carry, tangent), a while loop
of (state, tangent), so an unbounded ``while_loop`` has forward mode only. The
differentiators live in ``rewritekit.autodiff``, which registers them here
(``set_differentiator``), as this layer may not import it.

Example:
    >>> x = rt.vector("x")
    >>> total, partial = scan(lambda c, xi: (c + xi, c + xi), 0.0, x)  # cumsum
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, apply_op, as_var, toposort
from rewritekit.ir.inner import InnerGraph, close_over
from rewritekit.ir.pytree import TreeDef, flatten, leaf_paths, unflatten
from rewritekit.tensor.arithmetic import add, cast, ceil, maximum, where
from rewritekit.tensor.creation import arange, zeros_like
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import reshape
from rewritekit.tensor.logic import less, logical_and
from rewritekit.tensor.shape_vectors import shape_i
from rewritekit.tensor.transcendental import sqrt

__all__ = ["cond", "fori_loop", "map", "scan", "while_loop"]

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


def _pure(graphs: Sequence[InnerGraph]) -> bool:
    """True when no node of the graphs is marked ``foldable = False`` (a random draw)."""
    return all(getattr(node.op, "foldable", True) for g in graphs for node in toposort(g.outputs))


class _Control(Op):
    """What loops and branches share: inner graphs, purity, rebuilding."""

    abstract = True
    _graph_props: tuple[str, ...] = ()

    @property
    def inner_graphs(self) -> tuple[InnerGraph, ...]:
        """The graphs this Op holds, in the order ``with_inner_graphs`` takes them."""
        return tuple(getattr(self, p) for p in self._graph_props)

    def with_inner_graphs(self, graphs: Sequence[InnerGraph]) -> _Control:
        """This Op around other inner graphs of the same input and output types."""
        values = {p: getattr(self, p) for p in type(self).__props__}
        values.update(zip(self._graph_props, graphs, strict=True))
        return type(self)(**values)

    def __str__(self) -> str:  # the inner graphs are printed beneath the node (dprint)
        shown = ", ".join(
            f"{p}={getattr(self, p)!r}" for p in type(self).__props__ if p not in self._graph_props
        )
        return f"{type(self).__name__}{{{shown}}}" if shown else type(self).__name__

    @property
    def foldable(self) -> bool:
        """Constant-folded only when no random draw runs inside."""
        cache = self.__dict__
        found = cache.get("_rk_pure")
        if found is None:
            found = cache["_rk_pure"] = _pure(self.inner_graphs)
        return found


def _check_inputs(what: str, expected: Sequence[TensorType], given: Sequence[TensorType]) -> None:
    for position, (want, have) in enumerate(zip(expected, given, strict=True)):
        if not want.is_compatible(have):
            raise GraphTypeError(
                f"{what}: input {position} has type {have}, but the inner graph expects {want}"
            )


# --- scan ------------------------------------------------------------------------------


class Scan(_Control):
    """A loop over the leading axis of sequences, with carried state (``lax.scan``).

    Parameters:
        body: the inner graph ``(*carry, *x_slices, *consts) -> (*new_carry, *ys)``.
        n_carry: how many carries; n_seq: how many sequences.
        length: the number of steps when known statically (required without sequences).
        reverse: run from the last element to the first.
        checkpoint: the reverse-mode derivative stores the carry only every
            ``ceil(sqrt(length))`` steps and recomputes the others block by block (the
            forward itself is unchanged).

    Inputs: the initial carries, the sequences, the closed-over values. Outputs: the final
    carries, then each ``y`` stacked along a new leading axis of the loop's length.
    """

    __props__ = ("body", "n_carry", "n_seq", "length", "reverse", "checkpoint")
    _graph_props = ("body",)
    #: never evaluated while rewriting (constant folding): a loop's cost has no bound
    foldable = False
    body: InnerGraph
    n_carry: int
    n_seq: int
    length: int | None
    reverse: bool
    checkpoint: bool

    def __init__(
        self,
        body: InnerGraph,
        n_carry: int,
        n_seq: int,
        length: int | None,
        reverse: bool,
        checkpoint: bool = False,
    ) -> None:
        super().__init__(body, n_carry, n_seq, length, reverse, checkpoint)

    def __str__(self) -> str:  # checkpoint shown only when set
        shown = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.__props__[1:5])
        return f"Scan{{{shown}{', checkpoint=True' if self.checkpoint else ''}}}"

    def infer_types(self, *types: TensorType) -> tuple[TensorType, ...]:
        body, nc, ns = self.body, self.n_carry, self.n_seq
        if len(types) != len(body.inputs):
            raise GraphTypeError(f"scan: expected {len(body.inputs)} inputs, got {len(types)}")
        carry_t = body.input_types[:nc]
        slice_t = body.input_types[nc : nc + ns]
        seqs = types[nc : nc + ns]
        _check_inputs("scan", carry_t, types[:nc])
        _check_inputs("scan", body.input_types[nc + ns :], types[nc + ns :])
        length = self.length
        for position, (seq, want) in enumerate(zip(seqs, slice_t, strict=True)):
            if seq.ndim == 0:
                raise ShapeError(f"scan: sequence {position} is a scalar; it needs a leading axis")
            if not want.is_compatible(seq.with_shape(seq.shape[1:])):
                raise GraphTypeError(
                    f"scan: sequence {position} has type {seq}, whose slices do not have the "
                    f"body's type {want}"
                )
            lead = seq.shape[0]
            if lead is not None and length is not None and lead != length:
                raise ShapeError(
                    f"scan: sequence {position} has leading length {lead}, but the loop "
                    f"runs {length} steps"
                )
            length = lead if length is None else length
        ys = body.output_types[nc:]
        return (*carry_t, *(t.with_shape((length, *t.shape)) for t in ys))

    def history(self, inputs: Vars) -> list[Var]:
        """The carry each step starts from, stacked (length, *carry): what a reverse sweep
        reads. The scan that answers them is this one with the carries added to its ``ys``,
        so its other outputs are this node's (``merge_scans`` keeps one of the two)."""
        nc = self.n_carry
        body = self.body
        wider = body.with_outputs([*body.outputs, *body.inputs[:nc]])
        outs = apply_op(Scan(wider, nc, self.n_seq, self.length, self.reverse), tuple(inputs))
        return list(outs[len(outs) - nc :])

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        if self.checkpoint:
            return _checkpointed_vjp(self, inputs, cotangents)
        return _scan_vjp(self, inputs, cotangents)

    def jvp(self, inputs: Vars, outputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
        """A scan of (carry, tangent carry) whose body is this body and its jvp; it outputs
        the final tangents and the ys' tangents."""
        return _scan_jvp(self, inputs, tangents)


def _scan_vjp(
    op: Scan, inputs: Vars, cotangents: Sequence[Var | None], history: list[Var] | None = None
) -> Grads:
    """A reverse scan over the stored carries: at each step, the body's vjp at that step's
    carry and slice, carrying the carries' cotangents and summing the closed-over values'.
    ``history``: the carries each step starts from, stacked, when the caller has them."""
    nc, ns = op.n_carry, op.n_seq
    init, seqs, consts = inputs[:nc], inputs[nc : nc + ns], inputs[nc + ns :]
    body = op.body
    n_y = len(body.outputs) - nc
    dc = [i for i in range(nc) if _inexact(init[i])]
    dk = [j for j, k in enumerate(consts) if _inexact(k)]
    dx = [i for i in range(ns) if _inexact(seqs[i])]
    dy = [m for m in range(n_y) if _inexact(body.outputs[nc + m])]
    if history is None:
        history = op.history(inputs) if nc else []
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
    args = [*g_c, *acc, *c_t, *x_t, *ct_y, *k_t]
    graph, free = close_over(args, [*new_g, *new_acc, *g_x])
    back = Scan(graph, len(dc) + len(dk), nc + ns + len(dy), op.length, not op.reverse)
    outer = [
        *(cotangents[i] for i in dc),
        *(zeros_like(consts[j]) for j in dk),
        *history,
        *seqs,
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


def _checkpointed_vjp(op: Scan, inputs: Vars, cotangents: Sequence[Var | None]) -> Grads:
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
        return _scan_vjp(op, inputs, cotangents)
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
    block = apply_op(Scan(body, nc, ns, block_len, op.reverse), tuple(fresh))
    carries_only = body.with_outputs(body.outputs[:nc])
    block_carries = apply_op(Scan(carries_only, nc, ns, block_len, op.reverse), tuple(fresh))
    outer_body, _ = close_over(fresh, block)
    lean_body, _ = close_over(fresh, [*block_carries, *fresh[:nc]])
    stored = apply_op(
        Scan(lean_body, nc, ns, outer_len, op.reverse), (*inputs[:nc], *seq_blocks, *consts)
    )
    middle, history = list(stored[:nc]), list(stored[nc:])
    g_mid: list[Var | None] = list(cotangents[:nc])
    tail: Grads = [None] * len(inputs)
    if not static or rem > 0:
        rem_op = Scan(body, nc, ns, rem if static else None, op.reverse)
        tail = _scan_vjp(
            rem_op,
            [*middle, *(r for _, r in cuts), *consts],
            [*cotangents[:nc], *(r for _, r in ct_cuts)],
        )
        g_mid = [zeros_like(m) if g is None else g for m, g in zip(middle, tail[:nc], strict=True)]
    outer = Scan(outer_body, nc, ns, outer_len, op.reverse)
    head = _scan_vjp(
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
    return [d if d is not None else shape_i(v, a) for a, d in enumerate(v.type.shape) if a > 0]


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


def _scan_jvp(op: Scan, inputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
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
    tangent_scan = Scan(graph, nc + len(dc), ns + len(dx), op.length, op.reverse, op.checkpoint)
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


def _traced(fn: Callable[..., Any], what: str, *trees: Any) -> tuple[list[Var], list[Any], Any]:
    """Trace ``fn`` on fresh Vars shaped like ``trees``: (fresh leaves, result leaves, result
    structure)."""
    fresh: list[Var] = []
    args = []
    for tree in trees:
        leaves, treedef = tree
        vs = [Var(t) for t in leaves]
        fresh.extend(vs)
        args.append(unflatten(treedef, vs))
    result = fn(*args)
    leaves, treedef = flatten(result)
    return fresh, leaves, treedef


def _leaves_as_vars(tree: Any, what: str) -> tuple[list[Var], TreeDef]:
    leaves, treedef = flatten(tree)
    paths = leaf_paths(treedef)
    return [as_var(v, context=f"{what}{p}") for v, p in zip(leaves, paths, strict=True)], treedef


def _checked_carry(
    what: str, init: list[Var], init_def: TreeDef, new: list[Any], new_def: TreeDef
) -> list[Var]:
    """The returned carry as Vars of the initial carry's types, or an error naming the
    carry's path and both types."""
    if new_def != init_def:
        raise GraphTypeError(
            f"{what}: the carry returned has structure {_shown(new_def)}, but the initial "
            f"carry has {_shown(init_def)}"
        )
    out = []
    for path, start, value in zip(leaf_paths(init_def), init, new, strict=True):
        var = as_var(value, dtype=start.dtype, context=f"{what}: carry{path}")
        if var.type is not start.type:
            raise GraphTypeError(
                f"{what}: carry{path or ''} changes type from {start.type} (initial) to "
                f"{var.type} (returned by the body); make the body return the same dtype "
                "and static shape (rt.cast, rt.reshape)"
            )
        out.append(var)
    return out


def _shown(treedef: TreeDef) -> str:
    return repr(unflatten(treedef, ["*"] * treedef.num_leaves)).replace("'*'", "*")


def _static_length(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise GraphTypeError(f"{what}: length must be a non-negative Python int, got {value!r}")
    if value < 0:
        raise ShapeError(f"{what}: length must be non-negative, got {value}")
    return int(value)


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    checkpoint: bool = False,
) -> tuple[Any, Any]:
    """Loop ``f`` over the leading axis of ``xs``, threading a carry: ``jax.lax.scan``.

    Semantics, with ``ys`` stacked along a new leading axis::

        carry = init
        for x in xs:                 # reversed(xs) with reverse=True (ys keep xs' order)
            carry, y = f(carry, x)
        return carry, stack(ys)

    ``f`` is traced once into one ``Scan`` node; outer Vars it uses are read by the loop
    (they are not re-evaluated per step). Random draws inside ``f`` work when the key is
    threaded through the carry.

    Args:
        f: ``(carry, x) -> (carry, y)``; carries and ``y`` are Vars or pytrees of them
            (tuples, lists, dicts, None). The carry must keep its types (dtype and static
            shape) from step to step.
        init: the initial carry (Vars, arrays or numbers; a pytree).
        xs: the sequences (a pytree of Vars with a common leading length), or None.
        length: the number of steps; needed only when ``xs`` is None.
        reverse: run from the end of ``xs`` to the start.
        checkpoint: let reverse-mode derivatives store the carry only every
            ``ceil(sqrt(T))`` steps (T steps) and recompute the others, block by block,
            while going back: memory O(sqrt(T)) carries instead of O(T), for about two more
            forward sweeps of ``f``. The forward itself is unchanged.

    Returns:
        ``(final_carry, ys)``, of the structures of ``init`` and of ``f``'s ``y``.

    Raises:
        GraphTypeError: a carry changes type (the message names its path and both types),
            or ``f`` returns something other than a pair.
        ShapeError: sequences of different static lengths, or ``length`` disagrees.

    Example:
        >>> x = rt.vector("x")
        >>> total, running = scan(lambda c, xi: (c + xi, c + xi), 0.0, x)
    """
    if not callable(f):
        raise GraphTypeError(f"scan: f must be a function (carry, x) -> (carry, y), got {f!r}")
    carry, carry_def = _leaves_as_vars(init, "scan: init")
    seqs, seq_def = _leaves_as_vars(xs, "scan: xs")
    if length is not None:
        length = _static_length(length, "scan")
    if not seqs and length is None:
        raise GraphTypeError("scan: give xs or length (the number of steps)")
    slices = []
    for path, seq in zip(leaf_paths(seq_def), seqs, strict=True):
        if seq.ndim == 0:
            raise ShapeError(f"scan: xs{path} is a scalar; sequences need a leading axis")
        slices.append(seq.type.with_shape(seq.type.shape[1:]))
    _check_lengths(seqs, seq_def, length)
    fresh, result, result_def = _traced(
        f, "scan", ([c.type for c in carry], carry_def), (slices, seq_def)
    )
    if result_def.kind not in ("tuple", "list") or len(result_def.children) != 2:
        raise GraphTypeError(f"scan: f must return a pair (carry, y), got {_shown(result_def)}")
    n_new = result_def.children[0].num_leaves
    new = _checked_carry(
        "scan", fresh[: len(carry)], carry_def, result[:n_new], result_def.children[0]
    )
    ys, y_def = _leaves_as_vars(unflatten(result_def.children[1], result[n_new:]), "scan: y")
    graph, free = close_over(fresh, [*new, *ys])
    op = Scan(graph, len(carry), len(seqs), length, bool(reverse), bool(checkpoint))
    outs = apply_op(op, (*carry, *seqs, *free))
    final = unflatten(carry_def, outs[: len(carry)])
    return final, unflatten(y_def, outs[len(carry) :])


def _check_lengths(seqs: list[Var], seq_def: TreeDef, length: int | None) -> None:
    known = {}
    for path, seq in zip(leaf_paths(seq_def), seqs, strict=True):
        lead = seq.type.shape[0]
        if lead is not None:
            known[f"xs{path}"] = lead
    if length is not None:
        known["length"] = length
    if len(set(known.values())) > 1:
        shown = ", ".join(f"{k} = {v}" for k, v in known.items())
        raise ShapeError(f"scan: the sequences' leading lengths differ: {shown}")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``: ``jax.lax.fori_loop``.

    With Python ints as bounds it is a ``scan`` of ``upper - lower`` steps (differentiable
    in reverse mode); with symbolic bounds a ``while_loop``. ``i`` is an int64 scalar.

    Example:
        >>> fori_loop(0, 5, lambda i, v: v * 2.0, 1.0)  # 32.0 when run
    """
    if _is_int(lower) and _is_int(upper):
        steps = max(int(upper) - int(lower), 0)
        if steps == 0:
            return init_val
        final, _ = scan(
            lambda v, i: (body_fun(i, v), None), init_val, arange(int(lower), int(upper))
        )
        return final
    lo, hi = as_var(lower, context="fori_loop: lower"), as_var(upper, context="fori_loop: upper")
    for name, bound in (("lower", lo), ("upper", hi)):
        if bound.ndim != 0 or bound.type.kind not in "iu":
            raise GraphTypeError(f"fori_loop: {name} must be an integer scalar, got {bound.type}")
    _, val = while_loop(
        lambda s: less(s[0], hi),
        lambda s: (s[0] + 1, body_fun(s[0], s[1])),
        (lo, init_val),
    )
    return val


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def map(f: Callable[[Any], Any], xs: Any) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked:
    ``jax.lax.map``.

    Example:
        >>> rows = map(lambda r: rt.sum(r ** 2), rt.matrix("m"))
    """
    _, ys = scan(lambda c, x: (c, f(x)), None, xs)
    return ys


# --- while ----------------------------------------------------------------------------


class While(_Control):
    """``while cond(state): state = body(state)`` (``lax.while_loop``).

    Parameters:
        cond_graph: ``(*state, *consts) -> pred`` (a bool scalar).
        body_graph: ``(*state, *consts) -> new state``.
        n_state: how many state values.

    Inputs: the initial state, then the closed-over values. Outputs: the final state.
    Forward-mode derivatives only (``jvp``); reverse mode needs ``max_steps``.
    """

    __props__ = ("cond_graph", "body_graph", "n_state")
    _graph_props = ("cond_graph", "body_graph")
    foldable = False  # as Scan's
    cond_graph: InnerGraph
    body_graph: InnerGraph
    n_state: int

    def infer_types(self, *types: TensorType) -> tuple[TensorType, ...]:
        if len(types) != len(self.body_graph.inputs):
            raise GraphTypeError(
                f"while_loop: expected {len(self.body_graph.inputs)} inputs, got {len(types)}"
            )
        _check_inputs("while_loop", self.body_graph.input_types, types)
        return self.body_graph.input_types[: self.n_state]

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        raise NotImplementedError(
            "while_loop has no reverse-mode derivative without a bound on its steps: pass "
            "max_steps=N to rk.while_loop (it then runs as a scan of N steps with a done-mask "
            "and reverse mode works), or use rk.jvp (forward mode)"
        )

    def jvp(self, inputs: Vars, outputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
        """A while loop over (state, tangent state) under the same condition, whose body is
        this body and its jvp."""
        n = self.n_state
        body = self.body_graph
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
        (pred,) = self.cond_graph.apply([*state, *consts])
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
        final = apply_op(While(cond_graph, body_graph, n + len(live)), tuple(outer))
        out: list[Var | None] = [None] * n
        for r, i in enumerate(live):
            out[i] = final[n + r]
        return out


def while_loop(
    cond_fun: Callable[[Any], Any],
    body_fun: Callable[[Any], Any],
    init_val: Any,
    max_steps: int | None = None,
) -> Any:
    """``while cond_fun(val): val = body_fun(val)``: ``jax.lax.while_loop``.

    Args:
        cond_fun: ``val -> bool scalar``.
        body_fun: ``val -> val`` of the same structure and types.
        init_val: the initial state (a pytree).
        max_steps: a bound on the number of steps. Without it the loop is one ``While``
            node: forward mode (``rk.jvp``) differentiates it, reverse mode raises. With
            it the loop is a ``scan`` of ``max_steps`` steps whose state stops changing once
            ``cond_fun`` is false (a done-mask): reverse mode works, and every run costs
            ``max_steps`` evaluations of ``body_fun``. If ``cond_fun`` is still true after
            ``max_steps`` steps, the state after ``max_steps`` steps is returned.

    Example:
        >>> n = while_loop(lambda v: v < 100.0, lambda v: v * 2.0, 1.0)  # 128.0 when run
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise GraphTypeError("while_loop: cond_fun and body_fun must be functions of the state")
    state, state_def = _leaves_as_vars(init_val, "while_loop: init_val")
    types = [v.type for v in state]
    if max_steps is not None:
        return _bounded_while(cond_fun, body_fun, state, state_def, max_steps)
    fresh_c, pred, _ = _traced(cond_fun, "while_loop", (types, state_def))
    pred_var = _checked_pred("while_loop: cond_fun", pred)
    fresh_b, new, new_def = _traced(body_fun, "while_loop", (types, state_def))
    new_vars = _checked_carry("while_loop", state, state_def, new, new_def)
    body_graph, free_b = close_over(fresh_b, new_vars)
    cond_graph, free = close_over(fresh_c, [pred_var], extra=free_b)
    body_graph, free = close_over(fresh_b, new_vars, extra=free)
    op = While(cond_graph, body_graph, len(state))
    outs = apply_op(op, (*state, *free))
    return unflatten(state_def, outs)


def _bounded_while(
    cond_fun: Callable[[Any], Any],
    body_fun: Callable[[Any], Any],
    state: list[Var],
    state_def: TreeDef,
    max_steps: Any,
) -> Any:
    steps = _static_length(max_steps, "while_loop: max_steps")

    def step(carry: Any, _: Any) -> Any:
        active, val = carry
        go = logical_and(active, _checked_pred("while_loop: cond_fun", flatten(cond_fun(val))[0]))
        new, new_def = flatten(body_fun(val))
        old = flatten(val)[0]
        kept = _checked_carry("while_loop", old, state_def, new, new_def)
        moved = [where(go, n, o) for n, o in zip(kept, old, strict=True)]
        return (go, unflatten(state_def, moved)), None

    if steps == 0:
        return unflatten(state_def, state)
    (_, final), _ = scan(step, (as_var(True), unflatten(state_def, state)), length=steps)
    return final


def _checked_pred(what: str, leaves: list[Any]) -> Var:
    if len(leaves) != 1:
        raise GraphTypeError(f"{what} must return one bool scalar, got {len(leaves)} values")
    pred = as_var(leaves[0], context=what)
    if pred.ndim != 0 or pred.dtype != "bool":
        raise DTypeError(f"{what} must return a bool scalar, got {pred.type}")
    return pred


# --- cond -----------------------------------------------------------------------------


class Cond(_Control):
    """``true_graph(*operands) if pred else false_graph(*operands)``, lazily
    (``lax.cond``): only the branch taken runs.

    Parameters:
        true_graph, false_graph: inner graphs over the same inputs
            ``(*operands, *consts)``, with outputs of the same types.

    Inputs: ``pred`` (a bool scalar), then the operands and closed-over values.
    """

    __props__ = ("true_graph", "false_graph")
    _graph_props = ("true_graph", "false_graph")
    true_graph: InnerGraph
    false_graph: InnerGraph

    def infer_types(self, pred: TensorType, *types: TensorType) -> tuple[TensorType, ...]:
        if pred.ndim != 0 or pred.dtype != "bool":
            raise DTypeError(f"cond: pred must be a bool scalar, got {pred}")
        if len(types) != len(self.true_graph.inputs):
            raise GraphTypeError(
                f"cond: expected {len(self.true_graph.inputs)} operands, got {len(types)}"
            )
        _check_inputs("cond", self.true_graph.input_types, types)
        return _merged_types(self.true_graph.output_types, self.false_graph.output_types)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        pred, operands = inputs[0], inputs[1:]
        diff = [i for i, v in enumerate(operands) if _inexact(v)]
        outs_d = [m for m, o in enumerate(outputs) if _inexact(o)]
        fresh = [Var(t) for t in self.true_graph.input_types]
        cts = [Var(outputs[m].type) for m in outs_d]
        branches = []
        for graph in (self.true_graph, self.false_graph):
            outs = graph.apply(fresh)
            grads = _backward([outs[m] for m in outs_d], cts, [fresh[i] for i in diff])
            grads = [
                zeros_like(fresh[i]) if g is None else g for i, g in zip(diff, grads, strict=True)
            ]
            branches.append(close_over([*fresh, *cts], grads))
        (t_graph, t_free), (f_graph, _) = branches
        if t_free or branches[1][1]:
            raise GraphTypeError("cond: internal error: a vjp branch closed over outer values")
        results = apply_op(
            Cond(t_graph, f_graph), (pred, *operands, *(cotangents[m] for m in outs_d))
        )
        grads_out: Grads = [None] * len(inputs)
        for r, i in enumerate(diff):
            grads_out[1 + i] = results[r]
        return grads_out

    def jvp(self, inputs: Vars, outputs: Vars, tangents: Sequence[Var | None]) -> list[Var | None]:
        """The cond, under the same predicate, of the branches' jvps."""
        pred, operands = inputs[0], inputs[1:]
        live = [
            i
            for i, (v, t) in enumerate(zip(operands, tangents[1:], strict=True))
            if t is not None and _inexact(v)
        ]
        fresh = [Var(t) for t in self.true_graph.input_types]
        t_in = [Var(fresh[i].type) for i in live]
        branches = []
        for graph in (self.true_graph, self.false_graph):
            outs = graph.apply(fresh)
            branches.append((outs, _forward(outs, [fresh[i] for i in live], t_in)))
        out_live = [
            m for m in range(len(outputs)) if any(tans[m] is not None for _, tans in branches)
        ]
        if not out_live:
            return [None] * len(outputs)
        results = [[_tangent(tans[m], outs[m]) for m in out_live] for outs, tans in branches]
        args = [*fresh, *t_in]
        _, free = close_over(args, results[0])
        f_graph, free = close_over(args, results[1], extra=free)
        t_graph, _ = close_over(args, results[0], extra=free)
        final = apply_op(
            Cond(t_graph, f_graph), (pred, *operands, *(tangents[1 + i] for i in live), *free)
        )
        out: list[Var | None] = [None] * len(outputs)
        for r, m in enumerate(out_live):
            out[m] = final[r]
        return out


def _merged_types(a: Sequence[TensorType], b: Sequence[TensorType]) -> tuple[TensorType, ...]:
    if len(a) != len(b):
        raise GraphTypeError(f"cond: the branches return {len(a)} and {len(b)} values")
    merged = []
    for position, (s, t) in enumerate(zip(a, b, strict=True)):
        if not s.is_compatible(t):
            raise GraphTypeError(
                f"cond: output {position} is {s} in the true branch and {t} in the false "
                "branch; both branches must return the same types"
            )
        shape = (x if x == y else None for x, y in zip(s.shape, t.shape, strict=True))
        merged.append(s.with_shape(shape))
    return tuple(merged)


def _branch_outputs(a: Any, b: Any, path: str) -> tuple[Var, Var]:
    """The two branches' outputs at ``path`` as Vars; a number or array on one side takes
    the dtype of a Var on the other, whichever side that is."""
    if isinstance(b, Var) and not isinstance(a, Var):
        b_var = as_var(b, context=f"cond: false branch output{path}")
        return as_var(a, dtype=b_var.dtype, context=f"cond: true branch output{path}"), b_var
    a_var = as_var(a, context=f"cond: true branch output{path}")
    return a_var, as_var(b, dtype=a_var.dtype, context=f"cond: false branch output{path}")


def cond(
    pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any
) -> Any:
    """``true_fun(*operands) if pred else false_fun(*operands)``: ``jax.lax.cond``.

    Lazy: only the branch taken is evaluated (NumPy runs one branch; JAX lowers to
    ``lax.cond``). ``rt.where`` stays eager (both sides are computed). Outer Vars used by
    either branch are closed over. Gradients flow through the branch taken.

    Args:
        pred: a bool scalar.
        true_fun, false_fun: functions of the operands returning pytrees of the same
            structure and types.
        operands: the values passed to the branch (pytrees allowed).

    Raises:
        DTypeError: ``pred`` is not a bool scalar.
        GraphTypeError: the branches return different structures or types.

    Example:
        >>> y = cond(x > 0.0, lambda v: rt.log(v), lambda v: v, x)
    """
    p = as_var(pred, context="cond: pred")
    if p.ndim != 0 or p.dtype != "bool":
        raise DTypeError(f"cond: pred must be a bool scalar, got {p.type}")
    if not callable(true_fun) or not callable(false_fun):
        raise GraphTypeError("cond: true_fun and false_fun must be functions of the operands")
    ops, ops_def = _leaves_as_vars(tuple(operands), "cond: operands")
    types = [v.type for v in ops]
    results = []
    for fn in (true_fun, false_fun):
        fresh = [Var(t) for t in types]
        out = fn(*unflatten(ops_def, fresh))
        leaves, out_def = flatten(out)
        results.append((fresh, leaves, out_def))
    (ft, lt, dt), (ff, lf, df) = results
    if dt != df:
        raise GraphTypeError(
            f"cond: the true branch returns {_shown(dt)}, the false branch {_shown(df)}; "
            "both must return the same structure"
        )
    paths = leaf_paths(dt)
    pairs = [_branch_outputs(a, b, p) for a, b, p in zip(lt, lf, paths, strict=True)]
    lt, lf = [a for a, _ in pairs], [b for _, b in pairs]
    for path, a, b in zip(paths, lt, lf, strict=True):
        if not a.type.is_compatible(b.type):
            raise GraphTypeError(
                f"cond: output{path} is {a.type} in the true branch and {b.type} in the false "
                "branch; both branches must return the same types"
            )
    if not lt:
        return unflatten(dt, [])
    _, free_t = close_over(ft, lt)
    f_graph, free = close_over(ff, lf, extra=free_t)
    t_graph, free_t2 = close_over(ft, lt, extra=free)
    if free_t2 != free:
        raise GraphTypeError("cond: internal error: the branches closed over different values")
    outs = apply_op(Cond(t_graph, f_graph), (p, *ops, *free))
    return unflatten(dt, outs)
