"""``vectorize`` and ``vmap``: the walk over a graph that rebuilds each node depending on a
replaced input through its Op's batching rule (``registry.BATCH_RULES``), with the
``Blockwise`` fallback for Ops without one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Apply, Op, Var, apply_op, as_var, graph_inputs, toposort
from rewritekit.ir.inner import close_over
from rewritekit.tensor import broadcast_to, moveaxis, shape_i
from rewritekit.tensor.control import Blockwise
from rewritekit.tensor.shape_vectors import lengths
from rewritekit.tensor.sharding import Shard
from rewritekit.vectorize.registry import Unbatched, batch_rule

__all__ = ["batch_graph", "blockwise", "fallback_ops", "vectorize", "vmap"]


def _draws(op: Op) -> bool:
    """Whether ``op`` draws random numbers: marked ``foldable = False`` (a loop is marked
    so too, for its cost: it draws when a node of its inner graphs does)."""
    graphs = getattr(op, "inner_graphs", None)
    if graphs:
        return any(_draws(n.op) for g in graphs for n in toposort(list(g.outputs)))
    return not getattr(op, "foldable", True)


def _fallback(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> list[Var]:
    if isinstance(node.op, Shard):
        raise GraphTypeError(
            f"vectorize: cannot batch {node.op}: its spec is not a PartitionSpec or a NamedSharding"
        )
    if _draws(node.op):
        raise GraphTypeError(
            f"vectorize: {node.op} draws random numbers and has no batching rule; a shared "
            "key would give every batch element the same draw"
        )
    return blockwise(node, inputs, batched, nb)


def blockwise(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> list[Var]:
    """``node`` for every batch element as a ``Blockwise`` node holding it as its core."""
    fresh = [Var(v.type) for v in node.inputs]
    graph, free = close_over(fresh, apply_op(node.op, tuple(fresh)))
    assert not free  # the core reads only its own inputs
    return apply_op(Blockwise(graph, batched, nb), tuple(inputs))


def _checked(replace: Mapping[Var, Any]) -> tuple[dict[Var, Var], int]:
    pairs: dict[Var, Var] = {}
    nb: int | None = None
    first_seen: dict[int, tuple[int, Var]] = {}  # batch axis -> its static length, and where
    for old, new in replace.items():
        if not isinstance(old, Var) or old.owner is not None:
            raise GraphTypeError(f"vectorize: {old!r} is not a graph input to replace")
        new = as_var(new, context=f"vectorize: the replacement of {old!r}")
        extra = new.ndim - old.ndim
        core = new.type.with_shape(new.type.shape[max(extra, 0) :])
        if extra < 1 or core.dtype != old.dtype or not old.type.is_compatible(core):
            raise GraphTypeError(
                f"vectorize: the replacement of {old!r} has type {new.type}, which is not "
                f"{old.type} with leading batch axes"
            )
        if nb is not None and extra != nb:
            raise ShapeError(
                f"vectorize: the replacement of {old!r} has {extra} batch axes, others {nb}"
            )
        nb = extra
        for axis, n in enumerate(new.type.shape[:extra]):
            if n is None:
                continue
            seen = first_seen.setdefault(axis, (n, old))
            if seen[0] != n:
                raise ShapeError(
                    f"vectorize: batch axis {axis} has length {seen[0]} in the replacement "
                    f"of {seen[1]!r} and {n} in the replacement of {old!r}"
                )
        pairs[old] = new
    if nb is None:
        raise GraphTypeError("vectorize: nothing to replace")
    return pairs, nb


def vectorize(outputs: Any, replace: Mapping[Var, Any]) -> Any:
    """``outputs`` computed for every element of the batch axes of ``replace``'s values.

    Args:
        outputs: a Var, or a list/tuple of Vars.
        replace: maps graph inputs to Vars of the same dtype and core shape with the same
            number of extra leading (batch) axes.

    Returns:
        The outputs in the same structure; those that depend on a replaced input have the
        batch axes in front, the others are returned as they are.

    Raises:
        GraphTypeError: a key is not a graph input, or a value is not its input's type with
            leading axes.
        ShapeError: the values differ in their number of batch axes, or in a static batch
            length.

    Example:
        >>> x = rt.vector("x", shape=(3,))
        >>> xs = rt.matrix("xs", shape=(5, 3))
        >>> vectorize(rt.sum(rt.exp(x)), {x: xs}).type
        TensorType(dtype='float64', shape=(5,))
    """
    single = isinstance(outputs, Var)
    outs = [outputs] if single else list(outputs)
    outs = [as_var(o, context=f"vectorize: output {i}") for i, o in enumerate(outs)]
    pairs, nb = _checked(replace)
    result = [v for v, _ in batch_graph(outs, pairs, {}, nb)]
    return result[0] if single else type(outputs)(result)


def batch_graph(
    outputs: list[Var], batched: Mapping[Var, Var], same: Mapping[Var, Var], nb: int
) -> list[tuple[Var, bool]]:
    """``outputs`` rebuilt with the inputs ``batched`` maps replaced by values with ``nb``
    leading batch axes and those ``same`` maps by values shared by every element; for each
    output, its new value and whether it has the batch axes. (``vectorize`` without the
    checks, for the rules of Ops with inner graphs.)"""
    done: dict[Var, Var] = dict(batched)  # batched values
    shared: dict[Var, Var] = dict(same)  # values the same for every element, rebuilt
    for node in toposort(outputs):
        if not any(i in done or i in shared for i in node.inputs):
            continue
        inputs = [_lookup(i, done, shared) for i in node.inputs]
        flags = [i in done for i in node.inputs]
        if not any(flags):
            new = apply_op(node.op, tuple(inputs))
            shared.update(zip(node.outputs, new, strict=True))
            continue
        rule = batch_rule(node.op)
        new = rule(node, inputs, flags, nb) if rule is not None else None
        if new is None:
            new = _fallback(node, inputs, flags, nb)
        positions = new.positions if isinstance(new, Unbatched) else frozenset()
        for k, (old, value) in enumerate(zip(node.outputs, new, strict=True)):
            (shared if k in positions else done)[old] = value
    return [(_lookup(o, done, shared), o in done) for o in outputs]


def _lookup(v: Var, done: dict[Var, Var], shared: dict[Var, Var]) -> Var:
    found = done.get(v)
    return found if found is not None else shared.get(v, v)


def fallback_ops(outputs: Any) -> list[str]:
    """The names of the core Ops held by ``Blockwise`` nodes of ``outputs``' graph (what
    vectorization could not batch with a rule), sorted."""
    outs = [outputs] if isinstance(outputs, Var) else list(outputs)
    found = {
        type(inner.op).__name__
        for node in toposort(outs)
        if isinstance(node.op, Blockwise)
        for inner in toposort(list(node.op.core.outputs))
    }
    return sorted(found)


def vmap(fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
    """``fn`` mapped over an axis of its arguments: ``jax.vmap``'s signature, for a Python
    function of symbolic tensors (it builds the vectorized graph).

    Args:
        fn: a function of Vars returning a Var or a tuple/list of Vars.
        in_axes: an int, or None, for every argument, or one per argument (None: the
            argument is the same for every element).
        out_axes: an int for every output, or one per output.

    Example:
        >>> xs = rt.matrix("xs", shape=(4, 3))
        >>> vmap(lambda x: rt.sum(x * x))(xs).type
        TensorType(dtype='float64', shape=(4,))
    """

    def mapped(*args: Any) -> Any:
        values = [as_var(a, context=f"vmap: argument {i}") for i, a in enumerate(args)]
        axes = list(in_axes) if isinstance(in_axes, (list, tuple)) else [in_axes] * len(values)
        if len(axes) != len(values):
            raise GraphTypeError(f"vmap: {len(axes)} in_axes for {len(values)} arguments")
        cores: list[Var] = []
        replace: dict[Var, Var] = {}
        length: Var | None = None
        for i, (value, axis) in enumerate(zip(values, axes, strict=True)):
            if axis is None:
                cores.append(value)
                continue
            if not -value.ndim <= axis < value.ndim:
                raise ShapeError(
                    f"vmap: in_axes {axis} is out of range for argument {i} ({value.type})"
                )
            front = moveaxis(value, axis, 0)
            core = Var(front.type.with_shape(front.type.shape[1:]), value.name)
            cores.append(core)
            replace[core] = front
            length = shape_i(front, 0) if length is None else length
        if length is None:
            raise GraphTypeError("vmap: every in_axes is None; nothing to map over")
        result = fn(*cores)
        single = isinstance(result, Var)
        outs = [result] if single else list(result)
        batched = vectorize(outs, replace)
        o_axes = list(out_axes) if isinstance(out_axes, (list, tuple)) else [out_axes] * len(outs)
        final = []
        for out, new, axis in zip(outs, batched, o_axes, strict=True):
            if new is out and not _reads(out, replace):  # the same for every element
                new = broadcast_to(out, (length, *lengths(out)))
            final.append(moveaxis(new, 0, axis))
        return final[0] if single else type(result)(final)

    return mapped


def _reads(out: Var, replace: Mapping[Var, Var]) -> bool:
    return any(v in replace for v in graph_inputs([out]))
