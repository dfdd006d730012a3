"""``roll_chains``: a chain of structurally identical steps becomes one ``scan``.

A user's unrolled Python loop (time steps, layers, solver iterations) builds a graph of K
copies of one step, and reverse mode adds K copies of the step's derivative. XLA compiles
such a graph in time that grows faster than K (its fusion duplicates work across steps),
while the same step in ``lax.scan`` compiles once. This pass finds the chains and rolls
each into a ``Scan`` whose body is the step:

1. Each Var gets a structural signature: its Op and type and, ``DEPTH`` (3) levels down, its
   inputs' (a constant by its type only, a graph input by itself). Members of one chain's
   steps share signatures, so the groups of at least ``MIN_STEPS`` equal signatures are
   the candidates; hash-consing makes the rest of a step's copies distinct Vars.
2. In a group, each member's predecessor is the latest member it depends on. Following
   predecessors gives chains ``m_0 -> m_1 -> ... -> m_K``.
3. Step k is the subgraph of the nodes that depend on ``m_{k-1}`` and that ``m_k`` reads;
   what else it reads are its outer values (constants, inputs, values computed before the
   chain). Where no chain of one carry rolls, a step may also read values of step k-1
   (the other half of a state whose halves read each other: momentum's ``(p, v)``),
   which become carries too (so ``y_k = f(y_{k-1}) + y_{k-2}`` carries the pair); a step
   that reads further back ends the chain. Steps are equal when their nodes, wiring and
   outer values' types are: a run of at least ``MIN_STEPS`` equal steps is rolled.
4. An outer value that is the same in every step stays a closed-over input (a constant
   stays in the body); one that varies and is computed alike in each step
   (``sigmoid(x * k)``) is computed in the step; what remains varying becomes a scanned
   sequence: stacked constants, the matching slice of an array the steps index one row at
   a time (``A[k]``), else a stack. A step's value read outside the chain becomes a ``y``
   output of the scan, and its readers read the row of its step: so the gradient's
   backward chain, which reads the forward steps' values, reads rows of the forward
   scan's ``ys`` and rolls in turn.

Values are exactly those of the unrolled graph (the body is the step itself). The pass
runs in ``simplify_loops`` (so before and after the rules of ``rk.function``) and in
``rk.grad`` before its rules, and logs ``loops.roll_chain``; docs/performance.md,
"Unrolled loops become scans", has what it gains and costs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.ir import Apply, Constant, Var, apply_op, constant, replace, toposort
from rewritekit.ir.inner import InnerGraph, Placeholder
from rewritekit.rules.library import _chain_steps as cs
from rewritekit.rules.trace import RewriteTrace, TraceEntry
from rewritekit.tensor.control import Scan
from rewritekit.tensor.joining import stack
from rewritekit.tensor.subtensor import Subtensor, getitem

__all__ = ["MIN_STEPS", "roll_chains"]

#: The fewest equal steps rolled into a scan. Below it, XLA compiles the unrolled steps
#: quickly (docs/performance.md, "Unrolled loops become scans").
MIN_STEPS = 8
#: The fewest nodes, over all its steps, of a chain rolled into a scan.
MIN_NODES = 48
#: The most rolls of one pass (each rebuilds the graph).
MAX_ROLLS = 16
ROLL = "loops.roll_chain"


def roll_chains(
    outs: list[Var], log: RewriteTrace, where: str = "", min_steps: int = MIN_STEPS
) -> list[Var]:
    """``outs`` with each chain of at least ``min_steps`` equal steps rolled into a scan."""
    for _ in range(MAX_ROLLS):
        new = _roll_one(outs, log, where, min_steps)
        if new is None:
            break
        outs = new
    return outs


def _roll_one(outs: list[Var], log: RewriteTrace, where: str, min_steps: int) -> list[Var] | None:
    order = toposort(outs)
    if len(order) < 2 * min_steps:
        return None
    # a chain's first steps have signatures that still see its start, so its group and
    # first run may be shorter by about DEPTH: _extend_back finds those steps
    least = max(2, min_steps - cs.DEPTH - 1)
    groups = cs.groups(order, least)
    if not groups:
        return None
    position = {node: i for i, node in enumerate(order)}
    found_chains: dict[int, Any] = {}  # each group's chains, searched by both passes
    pull: set[Var] = set()  # values a step computes though they do not depend on the chain

    def best(chain: list[Var], multi: bool, latest: dict[Var, int] | None = None) -> Any:
        """The chain's steps and longest run, with the values that vary from step to step
        computed in the steps where that keeps the run (``_pullable``)."""
        if latest is None:
            latest = cs.chains(chain, order, position)[0][1]
        if not cs.passes_through(chain, latest, pull, position, multi):
            return [], None
        steps = cs.steps_of(chain, latest, pull, position, multi)
        run = cs.longest_run(steps, least)
        while run is not None:
            more = _pullable(run[1]) - pull
            if not more:
                break
            pull.update(more)
            wider = cs.steps_of(chain, latest, pull, position, multi)
            wider_run = cs.longest_run(wider, least)
            if wider_run is None or len(wider_run[1]) < len(run[1]):
                pull.difference_update(more)
                break
            steps, run = wider, wider_run
        return steps, run

    for multi in (False, True):  # steps that carry more than their member: tried last
        for g, group in enumerate(groups):
            if g not in found_chains:
                found_chains[g] = cs.chains(group, order, position)
            for chain, latest in found_chains[g]:
                steps, run = best(chain, multi, latest)
                if run is None:  # steps that differ with a period: roll p steps at a time
                    found = [(sub, best(sub, multi)[1]) for sub in _periodic(chain, steps, least)]
                    found = [(sub, r) for sub, r in found if r is not None]
                    if not found:
                        continue
                    chain, run = max(found, key=lambda pair: len(pair[1][1]))
                elif not _regular(run[1]):
                    # values read from the rows of a scan rolled p steps at a time: p steps
                    start, n = run[0], len(run[1])
                    for p in range(2, min(cs.MAX_PERIOD, n // min_steps) + 1):
                        sub = chain[start - 1 : start + (n // p) * p : p]
                        sub_run = best(sub, multi)[1]
                        if sub_run is not None and _regular(sub_run[1]):
                            chain, run = sub, sub_run
                            break
                if run[0] == 1:
                    chain, run = _extend_back(chain, run, order, position, pull)
                if run[0] == 1 and not multi:  # the loop cut where its first step is equal
                    rotated = _rotated(run[1], order, position)
                    turned = best(rotated, multi)[1] if rotated else None
                    if turned is not None and turned[0] == 1 and _regular(turned[1]):
                        rotated, turned = _extend_back(rotated, turned, order, position, pull)
                        if len(turned[1]) > len(run[1]):
                            chain, run = rotated, turned
                if len(run[1]) >= min_steps and _worth(run[1]):
                    rolled = _rolled(outs, order, run, log, where)
                    if rolled is not None:
                        return rolled
    return None


def _extend_back(
    chain: list[Var],
    run: tuple[int, list[cs.Step]],
    order: list[Apply],
    position: dict[Apply, int],
    pull: set[Var],
) -> tuple[list[Var], tuple[int, list[cs.Step]]]:
    """``chain`` and ``run`` with the equal steps before the chain's first member added:
    the first steps of a chain, whose signatures still see its start (the input), are not
    in its group."""
    key = run[1][0].key
    for _ in range(cs.DEPTH + 1):
        prev = cs.carry_of(key, chain[0])
        if prev is None or prev in chain:
            break
        longer = [prev, *chain]
        latest = cs.chains(longer, order, position)[0][1]
        step = cs.step_between(prev, [chain[0]], latest, 0, pull, position)
        if step is None or step.key != key:
            break
        chain, run = longer, (1, [step, *run[1]])
    return chain, run


def _rotated(steps: list[cs.Step], order: list[Apply], position: dict[Apply, int]) -> list[Var]:
    """The members of the same loop cut elsewhere: at the one node of each step that reads
    the step's carry, and the node after the last member that reads it so; empty where a
    step has no such node.

    A chain's members are the nodes of one signature group, which need not be where the
    user's loop body begins: for ``y = log(erfc(y * 0.5 + c)) + 0.5`` the members may be the
    ``log``s, and then the first step (from the loop's input ``y * 0.5``, not ``(log + 0.5) *
    0.5``) is not equal to the others and stays outside the scan with its derivative. Cut
    at the ``+ 0.5`` (what reads the ``log``), every step is equal, the first one included.
    """
    firsts: list[Apply] = []
    for step in steps:
        if len(step.ins) != 1:
            return []
        readers = [n for n in step.nodes if any(i is step.ins[0] for i in n.inputs)]
        if len(readers) != 1 or len(readers[0].outputs) != 1:
            return []
        firsts.append(readers[0])
    last, reader = steps[-1].outs[0], firsts[-1]
    if last.owner is reader or last.owner is None:
        return []  # cut there already
    slots = [i for i, v in enumerate(reader.inputs) if v is steps[-1].ins[0]]
    after = next(
        (
            node
            for node in order[position[last.owner] + 1 :]
            if node.op == reader.op and any(node.inputs[i] is last for i in slots)
        ),
        None,
    )
    members = [n.outputs[0] for n in firsts]
    return members if after is None else [*members, after.outputs[0]]


def _pullable(steps: list[cs.Step]) -> set[Var]:
    """The outer values that vary from step to step and are computed alike in each (the
    same Op) from something other than a row ``A[k]``: ``sigmoid(x * k)``, or
    ``sigmoid(Y[k])`` read by a gradient from a forward scan's rows. Computed inside the
    step, they leave the constants and rows they read as the sequences."""
    found: set[Var] = set()
    for column in cs.columns(steps):
        owners = [v.owner for v in column]
        if not cs.varies(column) or any(o is None for o in owners):
            continue
        op = owners[0].op  # type: ignore[union-attr]
        if all(
            o.op == op and not cs.is_row(o) and getattr(op, "foldable", True)  # type: ignore[union-attr]
            for o in owners
        ):
            found.update(column)
    return found


def _worth(steps: list[cs.Step]) -> bool:
    """False for a step of one node over the same values each time (``total + e``): the
    rules fold such a chain (into ``200 * e``), which a loop would hide from them; and for
    chains of fewer than ``MIN_NODES`` nodes in all, which XLA compiles in no time (eight
    divisions ``c / x_k``, in a series' derivative) and a loop would only slow down."""
    if len(steps) * len(steps[0].nodes) < MIN_NODES:
        return False
    return len(steps[0].nodes) > 1 or any(cs.varies(c) for c in cs.columns(steps))


def _regular(steps: list[cs.Step]) -> bool:
    """True when each outer value that varies is constant or a row of one array."""
    for column in cs.columns(steps):
        if (
            cs.varies(column)
            and not all(isinstance(v, Constant) for v in column)
            and _rows_of(column) is None
        ):
            return False
    return True


# --- candidates ----------------------------------------------------------------------


def _periodic(chain: list[Var], steps: list[cs.Step | None], least: int) -> list[list[Var]]:
    """For the smallest period p (at most ``cs.MAX_PERIOD``) with which the steps of a stretch
    of ``chain`` repeat for ``least`` blocks, the chains of every p-th member of the
    stretch, one per offset. Steps repeat with a period where ``y + c_k`` with
    ``c_k = k % 5`` loses its ``+ 0`` every fifth step, or where a step has two members of
    the group, the second reading the step's start too (not a step on its own: None)."""
    keys = [None if s is None else s.key for s in steps]
    if sum(k is not None for k in keys) * cs.MAX_PERIOD < len(keys):
        return []  # the group's members are not where the chain passes through
    for p in range(2, cs.MAX_PERIOD + 1):
        i, best = 0, (0, 0)
        while i + p < len(keys):
            j = i
            while j + p < len(keys) and keys[j] == keys[j + p]:
                j += 1
            if j - i > best[1]:
                best = (i, j - i)
            i = j + 1
        start, stretch = best
        blocks = (stretch + p) // p
        if stretch and blocks >= least:
            stop = start + blocks * p + 1
            return [chain[start + o : stop : p] for o in range(p) if start + o < stop]
    return []


# --- building the scan -----------------------------------------------------------------


def _rolled(
    outs: list[Var],
    order: list[Apply],
    run: tuple[int, list[cs.Step]],
    log: RewriteTrace,
    where: str,
) -> list[Var] | None:
    """``outs`` with the steps of ``run`` replaced by a scan; None where its carries would
    change type."""
    steps = run[1]
    n = len(steps)
    inits, finals = steps[0].ins, steps[-1].outs
    if len(finals) != len(inits):
        return None
    if any(a.type != b.type for a, b in zip(inits, finals, strict=True)):
        return None
    readers: dict[Var, list[Apply]] = {}
    for node in order:
        for inp in node.inputs:
            readers.setdefault(inp, []).append(node)
    wanted = set(outs)
    # the step values read outside their step (by position in the step's nodes)
    escapes: dict[tuple[int, int], None] = {}
    for k, step in enumerate(steps):
        mine = set(step.nodes)
        nxt = set(steps[k + 1].nodes) if k + 1 < n else set()
        carried = set(step.outs)
        for p, node in enumerate(step.nodes):
            for out in node.outputs:
                if out in carried and k + 1 == n:
                    continue  # a final carry: the scan's carry output
                allowed = mine | nxt if out in carried else mine
                if out in wanted or any(r not in allowed for r in readers.get(out, ())):
                    escapes[(p, out.index)] = None  # type: ignore[index]
    positions = list(escapes)
    columns = cs.columns(steps)
    scanned = [j for j, column in enumerate(columns) if cs.varies(column)]
    closed = [
        j
        for j, column in enumerate(columns)
        if j not in scanned and not isinstance(column[0], Constant)
    ]
    body = _body(steps[0], scanned, closed, positions)
    sequences = [_sequence(columns[j]) for j in scanned]
    inputs = (*inits, *sequences, *(columns[j][0] for j in closed))
    nc = len(inits)
    results = apply_op(Scan(body, nc, len(scanned), n, False), inputs)
    mapping: dict[Var, Var] = {}
    for y, (p, i) in zip(results[nc:], positions, strict=True):
        for k, step in enumerate(steps):
            mapping[step.nodes[p].outputs[i]] = _row(y, k)
    mapping.update(zip(finals, results[:nc], strict=True))
    log.append(TraceEntry(ROLL, finals[0], results[0], where))
    return list(replace(outs, mapping))


def _body(step: cs.Step, scanned: list[int], closed: list[int], ys: list[tuple[int, int]]) -> Any:
    """The scan body of ``step``, rebuilt from its key: each use of an outer value (not
    each Var: a constant 1.0 may be a sequence's value in one use and a constant in the
    next) reads its slot's placeholder, or the constant where the slot is one."""
    nc = len(step.ins)
    types = [*(v.type for v in step.ins), *(step.outer[j].type for j in [*scanned, *closed])]
    holders = [Placeholder(i, t) for i, t in enumerate(types)]
    reads = {j: holders[nc + i] for i, j in enumerate([*scanned, *closed])}
    *template, carried, _ = step.key
    built: list[tuple[Var, ...]] = []
    for (op, refs), node in zip(template, step.nodes, strict=True):
        ins = []
        for ref, inp in zip(refs, node.inputs, strict=True):
            if ref[0] == "carry":
                ins.append(holders[ref[1]])
            elif ref[0] == "node":
                ins.append(built[ref[1]][ref[2]])
            else:
                ins.append(reads.get(ref[1], inp))
        built.append(tuple(apply_op(op, tuple(ins))))
    carries = [holders[r[1]] if r[0] == "carry" else built[r[1]][r[2]] for r in carried]
    return InnerGraph(holders, [*carries, *(built[p][i] for p, i in ys)])


def _row(y: Var, k: int) -> Var:
    return getitem(y, k)


def _sequence(values: Sequence[Var]) -> Var:
    """One Var whose rows are ``values``."""
    if all(isinstance(v, Constant) for v in values):
        data = np.stack([np.asarray(v.data) for v in values])  # type: ignore[attr-defined]
        return constant(data, dtype=values[0].type.dtype)
    rows = _rows_of(values)
    if rows is not None:
        return rows
    return stack(list(values))


def _rows_of(values: Sequence[Var]) -> Var | None:
    """``base[a : a + n * s : s]`` when ``values`` are ``base[a], base[a + s], ...``."""
    base, at = None, []
    for v in values:
        node = v.owner
        if node is None or not isinstance(node.op, Subtensor) or len(node.inputs) != 1:
            return None
        if node.op.mode != "raise":  # a clipped or filled row is not a slice's
            return None
        index = node.op.index
        if len(index) != 1 or not isinstance(index[0], int) or index[0] < 0:
            return None
        if base is None:
            base = node.inputs[0]
        elif node.inputs[0] is not base:
            return None
        at.append(index[0])
    step = at[1] - at[0]
    if step == 0 or any(b - a != step for a, b in itertools.pairwise(at)):
        return None
    assert base is not None
    stop = at[-1] + step
    length = base.type.shape[0]
    if step == 1 and at[0] == 0 and length == len(at):
        return base
    return getitem(base, slice(at[0], stop if stop >= 0 else None, step))
