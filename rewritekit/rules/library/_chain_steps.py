"""Finding the chains that ``rewritekit.rules.library.rolling`` rolls: signatures, chains
of a group, the steps between members, runs of equal steps.

A step is described by its key: for each of its nodes (each after its inputs) the Op and
where each input comes from (a carry by slot, another node of the step by position, or an
outer value by slot and type), then where each carry out comes from, then the number of
carries in. Equal keys: equal steps.
"""

from __future__ import annotations

from typing import Any

from rewritekit.ir import Apply, Constant, Var
from rewritekit.tensor.subtensor import Subtensor
from rewritekit.tensor.ufunc import Elemwise

__all__: list[str] = []  # helpers of rolling.py

#: How many levels of inputs a signature sees.
DEPTH = 3
#: The longest period of steps that differ in a repeating pattern.
MAX_PERIOD = 8

_Ref = tuple[Any, ...]


class Step:
    """Step k of a chain: its nodes (each after its inputs), its outer values, its key
    (equal keys: equal steps) and its carries."""

    __slots__ = ("ins", "key", "nodes", "outer", "outs")

    def __init__(
        self,
        nodes: list[Apply],
        outer: list[Var],
        key: tuple[Any, ...],
        ins: list[Var],
        outs: list[Var],
    ) -> None:
        self.nodes, self.outer, self.key = nodes, outer, key
        self.ins, self.outs = ins, outs  # the carries it reads and computes, in order


def is_row(node: Apply) -> bool:
    """``A[k]`` (static integer indices) of a computed or input array."""
    op = node.op
    return (
        isinstance(op, Subtensor)
        and op.mode == "raise"
        and all(isinstance(e, int) for e in op.index)
        and not isinstance(node.inputs[0], Constant)
    )


def groups(order: list[Apply], min_steps: int) -> list[list[Var]]:
    """The Vars of at least ``min_steps + 1`` equal signatures, by first member."""
    ids: dict[Any, int] = {}
    level: dict[Var, int] = {}  # the signature of depth 0 of each foldable node's outputs
    leaves: dict[Var, int] = {}  # inputs, constants (by type), outputs of other nodes
    nodes: list[Apply] = []
    for node in order:
        op = node.op
        if not getattr(op, "foldable", True):
            for out in node.outputs:
                leaves[out] = ids.setdefault(("v", out), len(ids))
            continue
        nodes.append(node)
        if (
            isinstance(op, Subtensor)
            and op.mode == "raise"
            and all(isinstance(e, int) for e in op.index)
        ):
            op = Subtensor  # a row read (of a rolled chain's ys): which row does not matter
        for out in node.outputs:
            level[out] = ids.setdefault((op, out.index, out.type), len(ids))
        for i in node.inputs:
            if i.owner is None and i not in leaves:
                key = ("c", i.type) if isinstance(i, Constant) else ("v", i)
                leaves[i] = ids.setdefault(key, len(ids))
    sig = {**leaves, **level}
    for _ in range(DEPTH):  # the hot loop: kept plain
        new = dict(leaves)
        for node in nodes:
            ins = tuple([sig[i] for i in node.inputs])
            for out in node.outputs:
                new[out] = ids.setdefault((level[out], ins), len(ids))
        sig = new
    groups: dict[int, list[Var]] = {}
    for node in nodes:
        for out in node.outputs:
            groups.setdefault(sig[out], []).append(out)
    # earliest first: a forward chain rolls before the backward chain that reads it, which
    # then reads rows of the forward scan's ys rather than a stack of its steps' values
    return [g for g in groups.values() if len(g) > min_steps]


def chains(
    group: list[Var], order: list[Apply], position: dict[Apply, int]
) -> list[tuple[list[Var], dict[Var, int]]]:
    """The chains of ``group``, each with ``latest``: for each Var from the group's first
    member on, the index (in the group) of the latest member it depends on."""
    index = {m: i for i, m in enumerate(group)}
    head = group[0]  # an input when a chain is extended back to its start (_extend_back)
    start = 0 if head.owner is None else position[head.owner]
    stop = position[group[-1].owner]  # type: ignore[index]
    latest: dict[Var, int] = {head: 0} if head.owner is None else {}
    before: list[int] = [-1] * len(group)
    get, mine = latest.get, index.get
    for node in order[start : stop + 1]:  # the hot loop of the pass: kept plain
        last = -1
        for i in node.inputs:
            at = get(i, -1)
            if at > last:
                last = at
        for out in node.outputs:
            own = mine(out)
            if own is None:
                if last >= 0:
                    latest[out] = last
            else:
                before[own] = last
                latest[out] = own
    after: dict[int, list[int]] = {}
    for i, p in enumerate(before):
        if p >= 0:
            after.setdefault(p, []).append(i)
    chains = []
    for i in range(len(group)):
        p = before[i]
        if p >= 0 and after.get(p) == [i]:
            continue  # not the start of a chain
        members, j = [group[i]], i
        while len(after.get(j, ())) == 1:
            j = after[j][0]
            members.append(group[j])
        if len(members) > 1:
            chains.append((members, latest))
    chains.sort(key=lambda c: -len(c[0]))
    return chains


def step_between(
    prev: Var,
    roots: list[Var],
    latest: dict[Var, int],
    first: int,
    pull: set[Var],
    position: dict[Apply, int],
    back: int | None = None,
) -> Step | None:
    """The step from ``prev`` to ``roots[0]`` (the next member), computing ``roots`` (its
    carries out: the member, then the values the next step reads as carries), or None.

    It reads ``prev`` and, where ``back`` is the index of the member before ``prev``, the
    values computed after that member that are carries from the step before (``b_k`` of a
    state ``(a_k, b_k)`` whose two halves read each other), in graph order. Reading an
    earlier value (a skip connection) makes it no step."""
    cur = roots[0]
    if prev.type != cur.type or any(None in v.type.shape for v in roots[1:]):
        return None  # a carry keeps its type (a scalar start broadcast by the step)
    mark = latest[prev]
    nodes: list[Apply] = []
    state: dict[Apply, bool] = {}

    def inside(v: Var) -> bool:
        if v is prev or v.owner is None:
            return False
        at = latest.get(v, -1)
        return at == mark or (at < first and v in pull)

    if any(r is not prev and not inside(r) for r in roots[1:]):
        return None  # (the member itself is its own latest member)
    stack_ = [r.owner for r in reversed(roots) if r is not prev]

    while stack_:
        node = stack_[-1]
        done = state.get(node)  # type: ignore[arg-type]
        if done is None:
            state[node] = False  # type: ignore[index]
            for inp in reversed(node.inputs):  # type: ignore[union-attr]
                if inside(inp) and inp.owner not in state:
                    stack_.append(inp.owner)
        else:
            stack_.pop()
            if not done:
                state[node] = True  # type: ignore[index]
                nodes.append(node)  # type: ignore[arg-type]
    place = {node: i for i, node in enumerate(nodes)}
    carries: dict[Var, None] = {prev: None}
    for node in nodes:
        for inp in node.inputs:
            if inp is not prev and not inside(inp) and latest.get(inp, -1) >= first:
                if back is None or latest.get(inp) != back:
                    return None  # reads an earlier member: a skip connection
                carries[inp] = None
    ins = [prev, *sorted(list(carries)[1:], key=lambda v: (position[v.owner], v.index))]  # type: ignore[index]
    slot_of = {v: i for i, v in enumerate(ins)}
    outer: list[Var] = []
    slot: dict[Var, int] = {}
    key: list[Any] = []
    for node in nodes:
        if not getattr(node.op, "foldable", True):
            return None  # a random draw or a loop: never moved
        refs: list[_Ref] = []
        for inp in node.inputs:
            if inp in slot_of:
                refs.append(("carry", slot_of[inp]))
            elif inside(inp):
                refs.append(("node", place[inp.owner], inp.index))  # type: ignore[index]
            else:
                # a constant takes a slot per use: equal values in one step (y * 0.5 + c
                # where c is 0.5) must not change the step's wiring
                at = len(outer) if isinstance(inp, Constant) else slot.setdefault(inp, len(outer))
                if at == len(outer):
                    outer.append(inp)
                refs.append(("outer", at, inp.type))
        key.append((node.op, tuple(refs)))
    key.append(
        tuple(
            ("carry", slot_of[r]) if r in slot_of else ("node", place[r.owner], r.index)  # type: ignore[index]
            for r in roots
        )
    )
    key.append(len(ins))
    if None in cur.type.shape and not keeps_shape(nodes, outer):
        return None
    return Step(nodes, outer, tuple(key), ins, list(roots))


def keeps_shape(nodes: list[Apply], outer: list[Var]) -> bool:
    """Whether a step surely keeps its carry's shape where the type does not fix it: every
    node elementwise over the carry and scalars. (``concatenate([y, y])`` has the type of
    ``y`` when its length is unknown, and a loop cannot carry it.)"""
    return all(isinstance(n.op, Elemwise) for n in nodes) and all(v.ndim == 0 for v in outer)


def passes_through(
    chain: list[Var],
    latest: dict[Var, int],
    pull: set[Var],
    position: dict[Apply, int],
    multi: bool = True,
) -> bool:
    """Whether any of ``MAX_PERIOD`` steps in the middle of ``chain`` is a step: where none
    is, the members are not where the chain passes through (``y * 0.5`` beside the
    ``softplus(y)`` that also reads ``y``), and no run or period would be found."""
    first = latest[chain[0]]
    middle = max(2, (len(chain) - MAX_PERIOD) // 2)
    stop = min(len(chain), middle + MAX_PERIOD)
    return any(
        step_between(
            chain[k - 1],
            [chain[k]],
            latest,
            first,
            pull,
            position,
            latest[chain[k - 2]] if multi else None,
        )
        for k in range(middle, stop)
    )


def steps_of(
    chain: list[Var],
    latest: dict[Var, int],
    pull: set[Var],
    position: dict[Apply, int],
    multi: bool = True,
) -> list[Step | None]:
    """Step k (from ``chain[k - 1]`` to ``chain[k]``) of ``chain``, for k from 1; with
    ``multi``, steps may carry more than their member.

    Last step first: the carries a step reads besides the member before it are what the
    step before computes besides its member (its roots), so each step's roots are known
    when it is searched."""
    first = latest[chain[0]]
    found: list[Step | None] = [None] * (len(chain) - 1)
    extra: list[Var] = []  # the carries the step after reads besides its member
    for k in range(len(chain) - 1, 0, -1):
        back = latest[chain[k - 2]] if k >= 2 and multi else None
        step = step_between(chain[k - 1], [chain[k], *extra], latest, first, pull, position, back)
        found[k - 1] = step
        extra = step.ins[1:] if step is not None else []
    return found


def longest_run(steps: list[Step | None], min_steps: int) -> Any:
    """The longest run of at least ``min_steps`` equal steps, as (start, steps): the run
    goes from ``chain[start - 1]`` to ``chain[start + len(steps) - 1]``. None if none."""
    best: tuple[int, list[Step]] | None = None
    i = 0
    while i < len(steps):
        head = steps[i]
        if head is None:
            i += 1
            continue
        j = i + 1
        while j < len(steps) and steps[j] is not None and steps[j].key == head.key:  # type: ignore[union-attr]
            j += 1
        if j - i >= min_steps and (best is None or j - i > len(best[1])):
            best = (i + 1, steps[i:j])  # type: ignore[arg-type]
        i = j
    return best


def carry_of(key: tuple[Any, ...], cur: Var) -> Var | None:
    """The Var that plays the carry where ``cur`` is computed as the step ``key`` (of one
    carry) describes, its nodes matched from ``cur`` down; None if ``cur`` is not computed
    so or the step has more carries."""
    *template, outs, n_in = key
    if n_in != 1 or len(outs) != 1 or outs[0][0] != "node":
        return None
    if cur.owner is None or cur.index != outs[0][2]:
        return None
    matched: dict[int, Apply] = {outs[0][1]: cur.owner}
    carry: Var | None = None
    for t in range(len(template) - 1, -1, -1):
        node = matched.get(t)
        op, refs = template[t]
        if node is None or node.op != op or len(node.inputs) != len(refs):
            return None
        for ref, inp in zip(refs, node.inputs, strict=True):
            if ref[0] == "carry":
                if carry is not None and inp is not carry:
                    return None
                carry = inp
            elif ref[0] == "node":
                if inp.owner is None or inp.index != ref[2]:
                    return None
                if matched.setdefault(ref[1], inp.owner) is not inp.owner:
                    return None
    return carry


def columns(steps: list[Step]) -> list[list[Var]]:
    """Each outer value across the steps."""
    return [[s.outer[j] for s in steps] for j in range(len(steps[0].outer))]


def varies(column: list[Var]) -> bool:
    return any(v is not column[0] for v in column)
