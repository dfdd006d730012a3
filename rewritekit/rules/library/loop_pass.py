"""``simplify_loops``: the loop pass that needs the whole graph.

It merges twin scans (the same loop over the same inputs, one with more outputs:
``Scan.history``, which reverse mode reads) so that the loop runs once, and drops the
outputs and carries of loops that nothing uses. Both need to know who uses a node (its
clients) in the whole graph, which a rule, seeing one node, cannot. ``rk.function`` runs
it after the rules (with any ``rules=`` other than None); the rules on single loop nodes
are in ``rewritekit.rules.library.loops``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rewritekit.ir import Apply, Op, Var, apply_op, toposort
from rewritekit.rules.engine import Rewriter, like_outputs, output_list
from rewritekit.rules.library._support import reads, regraph, scan_steps
from rewritekit.rules.library.rolling import roll_chains
from rewritekit.rules.ruleset import as_ruleset
from rewritekit.rules.trace import RewriteTrace, TraceEntry
from rewritekit.tensor.control import Cond, Scan, While

__all__ = ["rewrite_for_lowering", "simplify_loops"]

_MERGE, _DROP = "loops.merge_scans", "loops.drop_unused"
Edit = Callable[[Apply, tuple[Var, ...]], Sequence[Var | None] | None]


def simplify_loops(
    outputs: Any,
    rules: Any = None,
    *,
    trace: bool = False,
    max_rounds: int = 8,
    roll: bool = True,
) -> Any:
    """``outputs`` with their loops simplified where that needs the whole graph.

    - Twin scans (the same inputs, parameters and carries; one with more ``y`` outputs,
      as ``Scan.history`` builds for reverse mode) become one scan, so the loop runs once.
    - Outputs of a ``scan``, ``while_loop`` or ``cond`` that nothing uses are dropped, and
      so are carries (states) whose final value nothing uses and that no kept output
      reads, to a fixpoint; then the inputs the inner graphs no longer read.
    - With ``roll``, chains of at least ``MIN_STEPS`` (8) structurally equal steps, such
      as an unrolled Python loop and its gradient, are rolled into scans
      (``rewritekit.rules.library.rolling``), which XLA compiles in time independent of
      the number of steps.

    Inner graphs are simplified too. With ``rules``, the graph is rewritten first and
    what the pass changed is rewritten again, to a joint fixpoint (``rk.function`` does
    this after its rules). The pass's changes appear in the trace as ``loops.merge_scans``,
    ``loops.drop_unused`` and ``loops.roll_chain``.

    Args:
        outputs: a Var, or a list/tuple of Vars; the result has the same structure.
        rules: the rules to rewrite with (as ``rk.rewrite`` takes them), or None.
        trace: also return the ``RewriteTrace``.
        max_rounds: the most rounds of pass and rewrite.
        roll: roll chains of equal steps into scans.

    Example:
        >>> x = rt.vector("x")
        >>> final, ys = rt.scan(lambda c, xi: (c + xi, xi * 2.0), 0.0, x)
        >>> lean = simplify_loops(rt.sum(ys))  # the carry, which nothing reads, is gone
        >>> lean.owner.inputs[0].owner.op.n_carry
        0
    """
    outs = output_list(outputs, "simplify_loops")
    ruleset = as_ruleset(rules)
    rewriter = Rewriter(ruleset)
    if roll:  # before the rules too: they would rewrite each step, and rewrite steps with
        # different constants differently (y + 0 loses its + 0), which breaks the chain
        outs = roll_chains(outs, rewriter.trace)
    if ruleset.rules:
        outs = [rewriter.normalize(o) for o in outs]
    for _ in range(max_rounds):
        new = roll_chains(outs, rewriter.trace) if roll else outs
        new = _loop_pass(new, rewriter.trace, "", {})
        if all(a is b for a, b in zip(new, outs, strict=True)):
            break
        outs = [rewriter.normalize(o) for o in new] if ruleset.rules else new
    value = like_outputs(outputs, outs)
    return (value, rewriter.trace) if trace else value


def rewrite_for_lowering(
    outputs: list[Var], rules: Any, roll: bool = True
) -> tuple[list[Var], RewriteTrace]:
    """What ``rk.function`` and ``rk.optimize`` do to a graph before lowering it: ``rules``,
    then the loop pass (twin scans, unused loop outputs, with ``roll`` unrolled chains
    rolled into scans), to a joint fixpoint; nothing for ``rules=None``. Returns the graph
    (a list) and its trace."""
    if rules is None:  # nothing to rewrite (what rewrite(outputs, None) answers)
        return list(outputs), RewriteTrace()
    # the rules, then the loop pass (rolled chains, twin scans, unused loop outputs)
    graph, trace = simplify_loops(outputs, rules, trace=True, roll=roll)
    return list(graph), trace


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
    elif isinstance(op, While):
        graphs, skip, n, m = [op.cond_graph, op.body_graph], 0, op.n_state, op.n_state
    else:
        return None  # Blockwise: all its outputs are computed together
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
        read = reads([*fixed, *(body.outputs[i] for i in wanted), *(body.outputs[i] for i in ys)])
        more = {i for i in range(n) if inputs[i] in read} - wanted
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
    read = reads([o for group in outs for o in group])
    rest = [p for p in range(n, len(inputs)) if inputs[p] in read]
    seqs_read = any(p < m for p in rest)
    if (
        isinstance(op, Scan)
        and op.n_seq
        and not seqs_read
        and scan_steps(op, node.inputs, n, op.n_seq) is None
    ):
        rest = [n, *rest]  # the number of steps comes from it
    order = [*need, *rest]
    if len(order) == len(inputs) and len(need) + len(ys) == len(node.outputs):
        return None
    sources = [inputs[p] for p in order]
    graphs = [regraph(sources, group) for group in outs]
    mapping: list[int | None] = [None] * len(node.outputs)
    for r, i in enumerate(need):
        mapping[i] = r
    for i, r in place.items():
        mapping[i] = len(need) + r
    if isinstance(op, Scan):
        n_seq = sum(1 for p in rest if p < m)
        length = op.length if n_seq == op.n_seq else scan_steps(op, node.inputs, n, op.n_seq)
        new_op: Op = Scan(graphs[0], len(need), n_seq, length, op.reverse, op.checkpoint)
    elif isinstance(op, While):
        new_op = While(graphs[0], graphs[1], len(need))
    else:
        new_op = Cond(graphs[0], graphs[1])
    return [*range(skip), *(p + skip for p in order)], new_op, mapping
