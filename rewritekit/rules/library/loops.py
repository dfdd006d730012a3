"""Standard library rules on loops and branches (phase ``canonicalize``, tag ``loops``), and
the loop pass that needs the whole graph.

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

``simplify_loops`` is the pass: it merges twin scans (the same loop over the same inputs,
one with more outputs: ``Scan.history``, which reverse mode reads) so that the loop runs
once, and drops the outputs and carries of loops that nothing uses. Both need to know who
uses a node (its clients) in the whole graph, which a rule, seeing one node, cannot.
``rk.function`` runs it after the rules (with any ``rules=`` other than None).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.ir import Apply, Constant, Op, Var, apply_op, graph_inputs, replace, toposort
from rewritekit.ir.inner import InnerGraph, Placeholder
from rewritekit.rules.engine import Rewriter
from rewritekit.rules.library._support import a
from rewritekit.rules.rule import Bindings, Rule, rule
from rewritekit.rules.ruleset import RuleSet, as_ruleset
from rewritekit.rules.trace import RewriteTrace, TraceEntry
from rewritekit.tensor.arithmetic import Add
from rewritekit.tensor.control import Cond, Scan, While
from rewritekit.tensor.layout import BroadcastTo
from rewritekit.tensor.ufunc import Elemwise

__all__ = ["rules", "simplify_loops"]

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


def _regraph(
    sources: Sequence[Var], outputs: Sequence[Var], subst: dict[Var, Var] | None = None
) -> InnerGraph:
    """The inner graph of ``outputs`` over new placeholders standing for ``sources`` (old
    placeholders or body values), in order; ``subst`` replaces other old placeholders by a
    constant or by one of ``sources``."""
    new = [Placeholder(i, v.type) for i, v in enumerate(sources)]
    mapping: dict[Var, Var] = dict(zip(sources, new, strict=True))
    for old, value in (subst or {}).items():
        mapping[old] = mapping.get(value, value)
    return InnerGraph(new, replace(list(outputs), mapping))


def _reads(outputs: Sequence[Var]) -> set[Var]:
    return set(graph_inputs(list(outputs)))


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
    new_op = op.with_inner_graphs([_regraph(sources, g.outputs) for g in graphs])
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
    read = _reads([o for outs in kept_outs for o in outs])
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
    if ns and not seqs and _static_length(op, outer, n, ns) is None:
        seqs.append((inputs[n], outer[n]))  # the number of steps comes from it
    pairs = [*((inputs[i], outer[i]) for i in states), *seqs, *consts]
    if len(pairs) == len(inputs) and all(
        h is inputs[p] and v is outer[p] for p, (h, v) in enumerate(pairs)
    ):
        return None
    new_graphs = [_regraph([h for h, _ in pairs], outs, subst) for outs in kept_outs]
    result: Outputs = list(outer[:n])  # a state passed through ends as it started
    if isinstance(op, Scan):
        if not new_graphs[0].outputs:
            return result
        length = op.length if len(seqs) == ns else _static_length(op, outer, n, ns)
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
    axis (``broadcast_to(1.0, shape(ys))``, the cotangent of ``sum(ys)``), else None."""
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


def _static_length(op: Op, outer: Sequence[Var], n: int, ns: int) -> int | None:
    """A scan's number of steps where it is static: its ``length``, else a sequence's."""
    if not isinstance(op, Scan):
        return None
    if op.length is not None:
        return op.length
    leads = [outer[p].type.shape[0] for p in range(n, n + ns)]
    return next((d for d in leads if d is not None), None)


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
    length = _static_length(op, node.inputs, nc, ns)
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


# --- the pass: twin scans and unused outputs ------------------------------------------------

_MERGE, _DROP = "loops.merge_scans", "loops.drop_unused"
Edit = Callable[[Apply, tuple[Var, ...]], Sequence[Var | None] | None]


def simplify_loops(
    outputs: Any, rules: Any = None, *, trace: bool = False, max_rounds: int = 8
) -> Any:
    """``outputs`` with their loops simplified where that needs the whole graph.

    - Twin scans (the same inputs, parameters and carries; one with more ``y`` outputs,
      as ``Scan.history`` builds for reverse mode) become one scan, so the loop runs once.
    - Outputs of a ``scan``, ``while_loop`` or ``cond`` that nothing uses are dropped, and
      so are carries (states) whose final value nothing uses and that no kept output
      reads, to a fixpoint; then the inputs the inner graphs no longer read.

    Inner graphs are simplified too. With ``rules``, the graph is rewritten first and
    what the pass changed is rewritten again, to a joint fixpoint (``rk.function`` does
    this after its rules). The pass's changes appear in the trace as ``loops.merge_scans``
    and ``loops.drop_unused``.

    Args:
        outputs: a Var, or a list/tuple of Vars; the result has the same structure.
        rules: the rules to rewrite with (as ``rk.rewrite`` takes them), or None.
        trace: also return the ``RewriteTrace``.
        max_rounds: the most rounds of pass and rewrite.

    Example:
        >>> x = rt.vector("x")
        >>> final, ys = rt.scan(lambda c, xi: (c + xi, xi * 2.0), 0.0, x)
        >>> lean = simplify_loops(rt.sum(ys))  # the carry, which nothing reads, is gone
        >>> lean.owner.inputs[0].owner.op.n_carry
        0
    """
    single = isinstance(outputs, Var)
    outs = [outputs] if single else list(outputs)
    for position, out in enumerate(outs):
        if not isinstance(out, Var):
            raise GraphTypeError(
                f"simplify_loops: output {position} must be a Var, got {type(out).__name__}"
            )
    ruleset = as_ruleset(rules)
    rewriter = Rewriter(ruleset)
    if ruleset.rules:
        outs = [rewriter.normalize(o) for o in outs]
    for _ in range(max_rounds):
        new = _loop_pass(outs, rewriter.trace, "", {})
        if all(a is b for a, b in zip(new, outs, strict=True)):
            break
        outs = [rewriter.normalize(o) for o in new] if ruleset.rules else new
    value: Any = outs[0] if single else (tuple(outs) if isinstance(outputs, tuple) else outs)
    return (value, rewriter.trace) if trace else value


def _loop_pass(outs: list[Var], log: RewriteTrace, where: str, inner: dict[Any, Any]) -> list[Var]:
    if not any(getattr(node.op, "inner_graphs", None) for node in toposort(outs)):
        return outs
    outs = _rebuild(outs, lambda node, ins: _inner_simplified(node, ins, log, where, inner))
    outs = _merge_twins(outs, log, where)
    return _drop_unused(outs, log, where)


def _rebuild(outs: list[Var], edit: Edit) -> list[Var]:
    """``outs`` rebuilt node by node: ``edit(node, new inputs)`` answers the node's new
    outputs (None for one that goes; None for all: rebuild the node as it is)."""
    memo: dict[Var, Var] = {}
    for node in toposort(outs):
        ins = tuple([memo.get(i, i) for i in node.inputs])
        new = edit(node, ins)
        if new is None:
            if all(a is b for a, b in zip(ins, node.inputs, strict=True)):
                continue
            new = apply_op(node.op, ins)
        for old, out in zip(node.outputs, new, strict=True):
            if out is not None and out is not old:
                memo[old] = out
    return [memo.get(o, o) for o in outs]


def _inner_simplified(
    node: Apply, ins: tuple[Var, ...], log: RewriteTrace, where: str, inner: dict[Any, Any]
) -> Sequence[Var] | None:
    op = node.op
    graphs = getattr(op, "inner_graphs", None)
    if not graphs:
        return None
    new = []
    for graph, name in zip(graphs, op._graph_props, strict=True):
        done = inner.get(graph)
        if done is None:
            scope = f"{where} > {op.name} {name}" if where else f"{op.name} {name}"
            outs = _loop_pass(list(graph.outputs), log, scope, inner)
            same = all(a is b for a, b in zip(outs, graph.outputs, strict=True))
            done = inner[graph] = graph if same else graph.with_outputs(outs)
        new.append(done)
    if all(a is b for a, b in zip(new, graphs, strict=True)):
        return None
    return apply_op(op.with_inner_graphs(new), ins)


def _log(log: RewriteTrace, rule: str, where: str, pairs: Any, used: set[Var]) -> None:
    for before, after in pairs:
        if after is not None and after is not before and before in used:
            log.append(TraceEntry(rule, before, after, where))


def _used(outs: list[Var]) -> set[Var]:
    used = set(outs)
    for node in toposort(outs):
        used.update(node.inputs)
    return used


def _merge_twins(outs: list[Var], log: RewriteTrace, where: str) -> list[Var]:
    """One scan for each group of scans of the same inputs, parameters and carries; its
    ``y``s the union of theirs."""
    groups: dict[Any, list[Apply]] = {}
    for node in toposort(outs):
        op = node.op
        if isinstance(op, Scan):
            body = op.body
            key = (
                op.n_carry,
                op.n_seq,
                op.length,
                op.reverse,
                body.inputs,
                body.outputs[: op.n_carry],
                node.inputs,
            )
            groups.setdefault(key, []).append(node)
    twins = {n: g for g in groups.values() if len(g) > 1 for n in g}
    if not twins:
        return outs
    used, built = _used(outs), {}

    def edit(node: Apply, ins: tuple[Var, ...]) -> Sequence[Var] | None:
        group = twins.get(node)
        if group is None:
            return None
        key = id(group)
        if key not in built:
            built[key] = _merged(group, ins)
        merged, place = built[key]
        nc = node.op.n_carry
        new = [merged[i] for i in range(nc)]
        new += [merged[nc + place[y]] for y in node.op.body.outputs[nc:]]
        _log(log, _MERGE, where, zip(node.outputs, new, strict=True), used)
        return new

    return _rebuild(outs, edit)


def _merged(group: list[Apply], ins: tuple[Var, ...]) -> tuple[tuple[Var, ...], dict[Var, int]]:
    """The scan computing every output of ``group``, and where each ``y`` lands."""
    widest = max(group, key=lambda n: len(n.op.body.outputs))
    op = widest.op
    nc = op.n_carry
    place: dict[Var, int] = {}
    for node in [widest, *group]:
        for y in node.op.body.outputs[nc:]:
            place.setdefault(y, len(place))
    body = op.body.with_outputs([*op.body.outputs[:nc], *place])
    checkpoint = any(n.op.checkpoint for n in group)
    merged = Scan(body, nc, op.n_seq, op.length, op.reverse, checkpoint)
    return apply_op(merged, ins), place


def _drop_unused(outs: list[Var], log: RewriteTrace, where: str) -> list[Var]:
    """Loops and branches without the outputs nothing uses (see ``_plan``)."""
    order = toposort(outs)
    live = set(outs)
    plans: dict[Apply, Any] = {}
    for node in reversed(order):
        kept = [i for i, o in enumerate(node.outputs) if o in live]
        if not kept:
            plans[node] = None  # dead
            continue
        plan = _plan(node, kept) if getattr(node.op, "inner_graphs", None) else None
        if plan is None:
            live.update(node.inputs)
        else:
            plans[node] = plan
            live.update(node.inputs[p] for p in plan[0])
    if all(p is None for p in plans.values()):
        return outs
    used = _used(outs)

    def edit(node: Apply, ins: tuple[Var, ...]) -> Sequence[Var | None] | None:
        if node not in plans:
            return None
        plan = plans[node]
        if plan is None:
            return [None] * len(node.outputs)
        positions, new_op, mapping = plan
        made = apply_op(new_op, tuple(ins[p] for p in positions))
        new = [None if r is None else made[r] for r in mapping]
        _log(log, _DROP, where, zip(node.outputs, new, strict=True), used)
        return new

    return _rebuild(outs, edit)


def _plan(node: Apply, kept: list[int]) -> tuple[list[int], Op, list[int | None]] | None:
    """How to rebuild a loop or branch that computes only its outputs ``kept``: the
    positions of the inputs it reads, its new Op, and for each old output the position of
    the new one (None where it goes). None when nothing can go."""
    op = node.op
    if isinstance(op, Cond):
        graphs, skip, n, m = [op.true_graph, op.false_graph], 1, 0, 0
    elif isinstance(op, Scan):
        graphs, skip, n, m = [op.body], 0, op.n_carry, op.n_carry + op.n_seq
    else:
        graphs, skip, n, m = [op.cond_graph, op.body_graph], 0, op.n_state, op.n_state
    body, inputs = graphs[-1], graphs[-1].inputs
    first: dict[tuple[Var, ...], int] = {}  # a y (in each graph) -> its new place among ys
    ys: list[int] = []
    place: dict[int, int] = {}
    for i in kept:
        if i >= n:
            key = tuple(g.outputs[i] for g in graphs)
            if key not in first:
                first[key] = len(ys)
                ys.append(i)
            place[i] = first[key]
    fixed = list(op.cond_graph.outputs) if isinstance(op, While) else []
    wanted = {i for i in kept if i < n}
    while True:  # the carries that the kept outputs read, step after step
        reads = _reads([*fixed, *(body.outputs[i] for i in wanted), *(body.outputs[i] for i in ys)])
        more = {i for i in range(n) if inputs[i] in reads} - wanted
        if not more:
            break
        wanted |= more
    need = sorted(wanted)
    if isinstance(op, Cond):
        outs = [[g.outputs[i] for i in ys] for g in graphs]
    elif isinstance(op, While):
        outs = [fixed, [body.outputs[i] for i in need]]
    else:
        outs = [[*(body.outputs[i] for i in need), *(body.outputs[i] for i in ys)]]
    reads = _reads([o for group in outs for o in group])
    rest = [p for p in range(n, len(inputs)) if inputs[p] in reads]
    seqs_read = any(p < m for p in rest)
    if (
        isinstance(op, Scan)
        and op.n_seq
        and not seqs_read
        and _static_length(op, node.inputs, n, op.n_seq) is None
    ):
        rest = [n, *rest]  # the number of steps comes from it
    order = [*need, *rest]
    if len(order) == len(inputs) and len(need) + len(ys) == len(node.outputs):
        return None
    sources = [inputs[p] for p in order]
    graphs = [_regraph(sources, group) for group in outs]
    mapping: list[int | None] = [None] * len(node.outputs)
    for r, i in enumerate(need):
        mapping[i] = r
    for i, r in place.items():
        mapping[i] = len(need) + r
    if isinstance(op, Scan):
        n_seq = sum(1 for p in rest if p < m)
        length = op.length if n_seq == op.n_seq else _static_length(op, node.inputs, n, op.n_seq)
        new_op: Op = Scan(graphs[0], len(need), n_seq, length, op.reverse, op.checkpoint)
    elif isinstance(op, While):
        new_op = While(graphs[0], graphs[1], len(need))
    else:
        new_op = Cond(graphs[0], graphs[1])
    return [*range(skip), *(p + skip for p in order)], new_op, mapping
