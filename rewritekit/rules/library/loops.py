"""Standard library rules on loops and branches (phase ``canonicalize``, tag ``loops``).

The rules are ordinary rules on the outer node (``Scan``, ``While``, ``Cond``), indexed by
its Op class; the engine has already rewritten the node's inner graphs with the same rule
set when they are tried:

- ``hoist_loop_invariants``: the nodes of a loop body (or a while loop's condition) that
  read only closed-over values, constants and carries the body passes through unchanged
  run once, before the loop; their results become new closed-over inputs. Random draws
  (Ops with ``foldable = False``) and loops holding one stay inside.
- ``tidy_loop_inputs``: closed-over inputs (and a scan's sequences) the inner graphs do not
  read are dropped, one given twice is read once, a constant moves into the body; a carry
  the body passes through unchanged becomes a closed-over input, whose final value is its
  initial one.
- ``vectorize_scan``: a scan whose steps do not depend on each other and whose body is
  elementwise is its body applied to the whole sequences, without a loop.
- ``fold_constant_cond``: a ``cond`` with a constant predicate, or with the same graph in
  both branches, is that branch inlined on the operands.
- ``fold_false_while``: a ``while_loop`` whose condition is constantly false is its
  initial state.

The pass that needs the whole graph (twin scans, unused outputs) is ``simplify_loops`` in
``rewritekit.rules.library.loop_pass``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.ir import Apply, Constant, Op, Var, apply_op, replace, toposort
from rewritekit.ir.inner import InnerGraph
from rewritekit.rules.library._support import a, reads, regraph, scan_steps
from rewritekit.rules.rule import Bindings, Rule, rule
from rewritekit.rules.ruleset import RuleSet
from rewritekit.tensor.arithmetic import Add
from rewritekit.tensor.control import Cond, Scan, While
from rewritekit.tensor.layout import BroadcastTo
from rewritekit.tensor.ufunc import Elemwise

__all__ = ["rules"]

Outputs = list[Var | None]


# --- shared pieces ------------------------------------------------------------------------


def _per_node(fn: Callable[[Apply], Sequence[Var | None] | None]) -> Callable[[Bindings], Any]:
    """The right side of a rule on a loop node: ``fn(node)`` answers a replacement for each
    output of the node (None where it has none), once per node: the engine asks for each
    output in turn."""
    memo: weakref.WeakKeyDictionary[Apply, Any] = weakref.WeakKeyDictionary()

    def right(b: Bindings) -> Var | None:
        var = b.term
        node = var.owner
        found = memo.get(node, memo)
        if found is memo:
            found = memo[node] = fn(node)
        return None if found is None else found[var.index]

    right.__name__, right.__doc__ = fn.__name__, fn.__doc__
    return right


def _loop_rule(fn: Any, ops: Sequence[type[Op]], example: Callable[[], Var]) -> Rule:
    r = rule(a, _per_node(fn), name=fn.__name__.lstrip("_"), tags={"loops"}, example=example)
    r.keys = tuple(("class", op) for op in ops)  # tried on these nodes only
    return r


def _passes_through(graph: InnerGraph, n: int) -> list[bool]:
    """For each of the first ``n`` inputs: whether output ``i`` is input ``i`` unchanged."""
    return [graph.outputs[i] is graph.inputs[i] for i in range(n)]


def _hoistable(op: Op) -> bool:
    """Whether a node of ``op`` may run once instead of at every step: not a random draw
    (``foldable = False``), nor a loop or branch holding one."""
    graphs = getattr(op, "inner_graphs", None)
    if not graphs:
        return bool(getattr(op, "foldable", True))
    return all(_hoistable(n.op) for g in graphs for n in toposort(list(g.outputs)))


def _fits(new: Var, old: Var) -> bool:
    """Whether ``new`` can stand for ``old``: same dtype and rank, every static length kept."""
    return (
        new.dtype == old.dtype
        and new.ndim == old.ndim
        and all(o is None or o == n for o, n in zip(old.type.shape, new.type.shape, strict=True))
    )


# --- hoisting -----------------------------------------------------------------------------


def _frontier(graphs: Sequence[InnerGraph], moving: Sequence[Var]) -> list[Var]:
    """The values of ``graphs`` that do not change from step to step (they read neither
    ``moving`` nor a node that must run each step) and that a changing node or an output
    reads: what hoisting computes before the loop, in a fixed order."""
    outs = [o for g in graphs for o in g.outputs]
    variant = set(moving)
    order = toposort(outs)
    for node in order:
        if not _hoistable(node.op) or any(i in variant for i in node.inputs):
            variant.update(node.outputs)
    found: dict[Var, None] = {}
    for node in order:
        if node.outputs[0] in variant:
            found.update((i, None) for i in node.inputs if i.owner is not None and i not in variant)
    found.update((o, None) for o in outs if o.owner is not None and o not in variant)
    return list(found)


def _hoist_loop_invariants(node: Apply) -> Outputs | None:
    """Loop-invariant parts of a loop body: computed once, before the loop"""
    op = node.op
    if isinstance(op, Scan):
        graphs, n = [op.body], op.n_carry
        fixed = n + op.n_seq
    else:
        graphs, n = [op.cond_graph, op.body_graph], op.n_state
        fixed = n
    inputs = graphs[-1].inputs
    through = _passes_through(graphs[-1], n)
    moving = [p for i, p in enumerate(inputs[:fixed]) if i >= n or not through[i]]
    hoisted = _frontier(graphs, moving)
    if not hoisted:
        return None
    steady = [p for p in range(len(inputs)) if p >= fixed or (p < n and through[p])]
    outer = replace(hoisted, {inputs[p]: node.inputs[p] for p in steady})
    sources = [*inputs, *hoisted]
    new_op = op.with_inner_graphs([regraph(sources, g.outputs) for g in graphs])
    return list(apply_op(new_op, (*node.inputs, *outer)))


def _hoist_example() -> Var:
    x, k = rt.vector("x"), rt.scalar("k")
    return rt.scan(lambda c, xi: (c + xi * rt.exp(k), c), 0.0, x)[1]


# --- closed-over inputs -------------------------------------------------------------------


def _tidy_loop_inputs(node: Apply) -> Outputs | None:
    """Loop inputs tidied: unread ones dropped, repeated ones merged, constants moved in"""
    op = node.op
    if isinstance(op, Cond):
        return _tidy(node, [op.true_graph, op.false_graph], 1, 0, 0, [])
    if isinstance(op, Scan):
        through = _passes_through(op.body, op.n_carry)
        return _tidy(node, [op.body], 0, op.n_carry, op.n_seq, through)
    through = _passes_through(op.body_graph, op.n_state)
    if all(through):  # no state changes: the loop runs no step or forever; leave it
        through = [False] * op.n_state
    return _tidy(node, [op.cond_graph, op.body_graph], 0, op.n_state, 0, through)


def _tidy(
    node: Apply, graphs: list[InnerGraph], skip: int, n: int, ns: int, through: list[bool]
) -> Outputs | None:
    """The node rebuilt with its inputs tidied. They are ``skip`` others (a cond's
    predicate), then the inner graphs' inputs: ``n`` carries or states (those passed
    ``through`` become closed-over values), ``ns`` sequences (one that repeats a value
    becomes a closed-over value), then the closed-over values."""
    op, inputs, outer = node.op, graphs[-1].inputs, node.inputs[skip:]
    states = [i for i in range(n) if not through[i]]
    if isinstance(op, While):
        kept_outs = [list(op.cond_graph.outputs), [op.body_graph.outputs[i] for i in states]]
    else:
        kept_outs = [[g.outputs[i] for i in states] + list(g.outputs[n:]) for g in graphs]
    read = reads([o for outs in kept_outs for o in outs])
    seq_items, const_items = [], [(inputs[p], outer[p]) for p in range(n + ns, len(inputs))]
    for p in range(n, n + ns):
        value = _repeated(outer[p])
        if value is None:
            seq_items.append((inputs[p], outer[p]))
        else:
            const_items.append((inputs[p], value))
    const_items += [(inputs[i], outer[i]) for i in range(n) if through[i]]
    subst: dict[Var, Var] = {}
    seen: dict[tuple[bool, Var], Var] = {}  # (a sequence?, outer value) -> placeholder kept
    kept: tuple[list[tuple[Var, Var]], list[tuple[Var, Var]]] = ([], [])
    for seq, items in ((True, seq_items), (False, const_items)):
        for holder, value in items:
            if isinstance(value, Constant) and not seq:
                subst[holder] = value
            elif (seq, value) in seen:
                subst[holder] = seen[seq, value]
            elif holder in read:
                seen[seq, value] = holder
                kept[not seq].append((holder, value))
    seqs, consts = kept
    if ns and not seqs and scan_steps(op, outer, n, ns) is None:
        seqs.append((inputs[n], outer[n]))  # the number of steps comes from it
    pairs = [*((inputs[i], outer[i]) for i in states), *seqs, *consts]
    if len(pairs) == len(inputs) and all(
        h is inputs[p] and v is outer[p] for p, (h, v) in enumerate(pairs)
    ):
        return None
    new_graphs = [regraph([h for h, _ in pairs], outs, subst) for outs in kept_outs]
    result: Outputs = list(outer[:n])  # a state passed through ends as it started
    if isinstance(op, Scan):
        if not new_graphs[0].outputs:
            return result
        length = op.length if len(seqs) == ns else scan_steps(op, outer, n, ns)
        new_op: Op = Scan(new_graphs[0], len(states), len(seqs), length, op.reverse, op.checkpoint)
    elif isinstance(op, While):
        new_op = While(new_graphs[0], new_graphs[1], len(states))
    else:
        new_op = Cond(new_graphs[0], new_graphs[1])
    outs = apply_op(new_op, (*node.inputs[:skip], *(v for _, v in pairs)))
    for r, i in enumerate(states):
        result[i] = outs[r]
    return result + list(outs[len(states) :])


def _repeated(seq: Var) -> Var | None:
    """The value every slice of ``seq`` holds, where ``seq`` broadcasts it along its first
    axis (``broadcast_to(1.0, shape(ys))``, the cotangent of ``sum(ys)``, or a constant
    array of equal slices, as folding leaves it), else None."""
    if isinstance(seq, Constant):
        data = np.asarray(seq.data)
        equal = data.shape[0] > 0 and bool(np.all(data == data[:1]))
        return rt.constant(data[0]) if equal else None
    node = seq.owner
    if node is None or not isinstance(node.op, BroadcastTo):
        return None
    value, shape = node.inputs
    if value.ndim == seq.ndim:
        if value.type.shape[0] != 1:
            return None
        value = value[0]
    rest = [d if d is not None else shape[a] for a, d in enumerate(seq.type.shape) if a > 0]
    return rt.broadcast_to(value, rest)


def _tidy_example() -> Var:
    x, k = rt.vector("x"), rt.scalar("k")
    ys = rt.scan(lambda c, xi: (c + xi * k, c * 2.0), 1.0, x)[1]
    return replace(ys, {k: rt.constant(3.0)})  # type: ignore[no-any-return]


# --- vectorization ------------------------------------------------------------------------


def _vectorize_scan(node: Apply) -> Outputs | None:
    """A scan of independent elementwise steps: its body on the whole sequences"""
    op: Scan = node.op  # type: ignore[assignment]
    body, nc, ns = op.body, op.n_carry, op.n_seq
    inputs, outs = body.inputs, body.outputs
    through = _passes_through(body, nc)
    summed = [_accumulated(outs[i], inputs[i]) if not through[i] else None for i in range(nc)]
    lifted: dict[Var, tuple[Var, bool]] = {}  # body value -> (outer value, has a step axis)
    for i in range(nc):
        if through[i]:
            lifted[inputs[i]] = (node.inputs[i], False)
    for p in range(nc, len(inputs)):
        lifted[inputs[p]] = (node.inputs[p], p < nc + ns)
    targets = [outs[i] if summed[i] is None else summed[i] for i in range(nc) if not through[i]]
    targets += outs[nc:]
    if not _lift(targets, lifted):
        return None
    length = scan_steps(op, node.inputs, nc, ns)
    if any(not through[i] and summed[i] is None for i in range(nc)) and not length:
        return None  # a carry ends as the last step left it: some step must run
    steps = length if length is not None else rt.shape_i(node.inputs[nc], 0)
    slice_rank = max((p.ndim for p in inputs[nc : nc + ns]), default=0)
    result: Outputs = []
    for i, out in enumerate(outs):
        if i < nc and through[i]:
            result.append(node.inputs[i])
            continue
        if i >= nc or summed[i] is None:
            value = _stacked(lifted, out, steps)
        if i < nc and summed[i] is not None:
            value = _total(node.inputs[i], summed[i], lifted, steps, slice_rank)
            if value is None:
                return None
        elif i < nc:
            value = value[0] if op.reverse else value[-1]
        if not _fits(value, node.outputs[i]):
            return None
        result.append(value)
    return result


def _total(
    init: Var, step: Var, lifted: dict[Var, tuple[Var, bool]], steps: int | Var, rank: int
) -> Var | None:
    """``init`` plus the sum over the steps of body value ``step``: ``init + steps * step``
    where it does not change; the sum of its stacked values where they are no bigger (in
    rank) than the sequences' slices, which bounds the memory the stacked values take."""
    value, batched = (step, False) if isinstance(step, Constant) else lifted[step]
    if not batched:
        return init + value * rt.cast(steps, value.dtype)
    if step.ndim > rank:
        return None
    return init + rt.sum(value, axis=0)


def _accumulated(new: Var, carry: Var) -> Var | None:
    """``e`` where a carry's new value is ``carry + e`` (its final value is then the
    initial one plus the sum of the ``e``), else None."""
    node = new.owner
    if node is None or not isinstance(node.op, Add):
        return None
    left, right = node.inputs
    if left is carry and right is not carry:
        return right
    return left if right is carry else None


def _lift(targets: Sequence[Var], lifted: dict[Var, tuple[Var, bool]]) -> bool:
    """Compute ``targets`` (body values) on whole sequences into ``lifted``, each node by
    its batching rule; False where a node is not elementwise or reads a changing carry."""
    for inner in toposort(list(targets)):
        if not isinstance(inner.op, Elemwise):
            return False
        args = [(i, False) if isinstance(i, Constant) else lifted.get(i) for i in inner.inputs]
        if None in args:
            return False
        values = [v for v, _ in args]  # type: ignore[misc]
        batched = any(b for _, b in args)  # type: ignore[misc]
        outs = inner.op.batch(inner, values) if batched else apply_op(inner.op, tuple(values))
        lifted.update((o, (v, batched)) for o, v in zip(inner.outputs, outs, strict=True))
    return all(isinstance(t, Constant) or t in lifted for t in targets)


def _stacked(lifted: dict[Var, tuple[Var, bool]], out: Var, steps: int | Var) -> Var:
    """The values of body value ``out`` at every step, stacked along a new first axis."""
    value, batched = (out, False) if isinstance(out, Constant) else lifted[out]
    if batched:
        return value
    shape = [d if d is not None else rt.shape_i(value, ax) for ax, d in enumerate(value.type.shape)]
    return rt.broadcast_to(value, (steps, *shape))


def _vectorize_example() -> Var:
    x, k = rt.vector("x"), rt.scalar("k")
    return rt.map(lambda xi: rt.exp(xi) * k - xi, x)


# --- branches and while loops that fold -----------------------------------------------------


def _fold_constant_cond(node: Apply) -> Outputs | None:
    """A cond with a constant predicate (or one branch twice): that branch, inlined"""
    op: Cond = node.op  # type: ignore[assignment]
    pred = node.inputs[0]
    if op.true_graph == op.false_graph:
        graph = op.true_graph
    elif isinstance(pred, Constant):
        graph = op.true_graph if bool(pred.data) else op.false_graph
    else:
        return None
    return graph.apply(node.inputs[1:])  # type: ignore[return-value]


def _cond_example() -> Var:
    x = rt.vector("x")
    return rt.cond(rt.constant(True), lambda v: rt.exp(v), lambda v: v * 2.0, x)


def _fold_false_while(node: Apply) -> Outputs | None:
    """A while loop whose condition is constantly false: its initial state"""
    op: While = node.op  # type: ignore[assignment]
    (pred,) = op.cond_graph.outputs
    if isinstance(pred, Constant) and not bool(np.asarray(pred.data)):
        return list(node.inputs[: op.n_state])
    return None


def _while_example() -> Var:
    x = rt.vector("x")
    return rt.while_loop(lambda v: rt.constant(False), lambda v: v * 2.0, x)


hoist_loop_invariants = _loop_rule(_hoist_loop_invariants, [Scan, While], _hoist_example)
tidy_loop_inputs = _loop_rule(_tidy_loop_inputs, [Scan, While, Cond], _tidy_example)
vectorize_scan = _loop_rule(_vectorize_scan, [Scan], _vectorize_example)
fold_constant_cond = _loop_rule(_fold_constant_cond, [Cond], _cond_example)
fold_false_while = _loop_rule(_fold_false_while, [While], _while_example)

rules = RuleSet(
    [
        fold_constant_cond,
        fold_false_while,
        hoist_loop_invariants,
        tidy_loop_inputs,
        vectorize_scan,
    ],
    name="canonicalize",
    tags={"canonicalize"},
)
