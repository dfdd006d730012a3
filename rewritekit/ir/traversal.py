"""Graph traversal and ``replace``, all iterative (no recursion, any depth).

Results are deterministic: inputs are visited left to right, so the same graph always
gives the same order.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from rewritekit.errors import GraphTypeError, ReplaceError
from rewritekit.ir.nodes import Apply, Constant, Var, apply_op, as_var

__all__ = ["ancestors", "clients", "graph_inputs", "replace", "toposort"]


def _as_outputs(outputs: Var | Sequence[Var], what: str) -> list[Var]:
    outs = [outputs] if isinstance(outputs, Var) else list(outputs)
    for position, out in enumerate(outs):
        if not isinstance(out, Var):
            raise GraphTypeError(
                f"{what}: output {position} must be a Var, got {type(out).__name__}"
            )
    return outs


def _toposort_nodes(roots: Sequence[Apply], stop: Collection[Apply] = ()) -> list[Apply]:
    """Every Apply reachable from ``roots`` (not entering ``stop``), each after its inputs.

    An explicit stack replaces recursion. ``state`` maps a node to False once its inputs
    are pushed and to True once it is emitted; a node reaching the top of the stack in
    state False has had all its inputs emitted (the graph is acyclic). The loop allocates
    nothing per node but the dict entry, which keeps the garbage collector quiet.
    """
    order: list[Apply] = []
    state: dict[Apply, bool] = dict.fromkeys(stop, True)
    stack = list(reversed(roots))
    push = stack.append
    while stack:
        node = stack[-1]
        done = state.get(node)
        if done is None:
            state[node] = False
            for inp in reversed(node.inputs):
                owner = inp.owner
                if owner is not None and owner not in state:
                    push(owner)
        else:
            stack.pop()
            if not done:
                state[node] = True
                order.append(node)
    return order


def toposort(outputs: Var | Sequence[Var]) -> list[Apply]:
    """The Apply nodes that compute ``outputs``, each after the nodes it reads.

    Inputs are visited left to right, so the order is deterministic.

    Example:
        >>> [str(node.op) for node in toposort(rt.exp(rt.log(x)))]
        ['Log', 'Exp']
    """
    roots = [o.owner for o in _as_outputs(outputs, "toposort") if o.owner is not None]
    return _toposort_nodes(roots)


def ancestors(outputs: Var | Sequence[Var]) -> list[Var]:
    """Every Var that ``outputs`` depend on, ``outputs`` included, each after its inputs."""
    order: list[Var] = []
    state: dict[Var, bool] = {}
    stack = list(reversed(_as_outputs(outputs, "ancestors")))
    push = stack.append
    while stack:
        var = stack[-1]
        done = state.get(var)
        if done is None:
            state[var] = False
            if var.owner is not None:
                for inp in reversed(var.owner.inputs):
                    if inp not in state:
                        push(inp)
        else:
            stack.pop()
            if not done:
                state[var] = True
                order.append(var)
    return order


def graph_inputs(outputs: Var | Sequence[Var], *, include_constants: bool = False) -> list[Var]:
    """The free variables of ``outputs``: owner-less Vars, in order of first use.

    Args:
        outputs: one Var or a sequence of them.
        include_constants: also list the constants (as PyTensor's ``graph_inputs`` does).
    """
    return [
        v
        for v in ancestors(outputs)
        if v.owner is None and (include_constants or not isinstance(v, Constant))
    ]


def clients(outputs: Var | Sequence[Var]) -> dict[Var, list[tuple[Apply, int]]]:
    """For each Var of the graph, the ``(node, input position)`` pairs that read it."""
    found: dict[Var, list[tuple[Apply, int]]] = {}
    for node in toposort(outputs):
        for position, inp in enumerate(node.inputs):
            found.setdefault(inp, []).append((node, position))
    return found


def replace(outputs: Any, replacements: Mapping[Var, Any]) -> Any:
    """``outputs`` with each key of ``replacements`` replaced by its value.

    Only the nodes on a path from a replaced Var to an output are rebuilt; every other
    node is shared with the original graph, which stays valid and unchanged. Replacements
    apply to the original graph only, never inside a replacement value, so replacing
    ``x`` by ``exp(x)`` is fine.

    Args:
        outputs: a Var, or a list/tuple of Vars; the result has the same structure.
        replacements: ``{old: new}``; a new value that is not a Var becomes a constant.
            ``new`` must have ``old``'s dtype and rank, and may know more of its shape.

    Raises:
        ReplaceError: a replacement changes a dtype or rank, or contradicts a static length.

    Example:
        >>> replace(rt.exp(x) + x, {x: y}) is rt.exp(y) + y
        True
    """
    single = isinstance(outputs, Var)
    outs = _as_outputs(outputs, "replace")
    memo: dict[Var, Var] = {}
    for old, new in replacements.items():
        if not isinstance(old, Var):
            raise GraphTypeError(f"replace: keys must be Vars, got {type(old).__name__}")
        memo[old] = _checked_replacement(old, new)
    roots = [o.owner for o in outs if o.owner is not None and o not in memo]
    stop = {o.owner for o in memo if o.owner is not None and _all_replaced(o.owner, memo)}
    for node in _toposort_nodes(roots, stop):
        inputs = node.inputs
        for inp in inputs:
            if inp in memo:
                break
        else:
            continue  # nothing this node reads has changed: it is shared as it is
        new_inputs = tuple([memo.get(i, i) for i in inputs])
        for out, new in zip(node.outputs, apply_op(node.op, new_inputs), strict=True):
            memo.setdefault(out, new)
    result = [memo.get(o, o) for o in outs]
    if single:
        return result[0]
    return tuple(result) if isinstance(outputs, tuple) else result


def _all_replaced(node: Apply, memo: Mapping[Var, Var]) -> bool:
    return all(out in memo for out in node.outputs)


def _checked_replacement(old: Var, new: Any) -> Var:
    new = as_var(new, dtype=old.dtype, context=f"replace: value for {old!r}")
    if not old.type.is_compatible(new.type):
        raise ReplaceError(
            f"replace: cannot replace {old!r} of type {old.type} by {new!r} of type "
            f"{new.type}; the dtype and rank must match and static lengths must agree"
        )
    return new
