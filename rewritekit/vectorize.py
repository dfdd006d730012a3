"""Vectorization: a graph computed for every element of new leading batch axes, as one
graph (PyTensor's ``vectorize_graph``), and ``vmap`` with JAX's signature over it.

``vectorize(outputs, {x: xs})`` replaces the input ``x`` by ``xs``, which has the same core
type after ``k`` leading batch axes, and rebuilds every node that depends on it through its
Op's batching rule (``BATCH_RULES``, looked up along the Op's class hierarchy):

- elementwise Ops take their batched inputs with the batch axes in front of every core
  axis (a batched operand of fewer core axes than the result gets length-1 axes after
  its batch axes), so NumPy broadcasting does the rest;
- reductions (``sum``, ``max``, ``mean``, ``argmax``, ... and ``var``/``std``, softmax,
  cumulative sums) shift their axes past the batch axes;
- any other Op becomes a ``Blockwise`` node holding the original node as its core graph:
  JAX lowers it with ``jax.vmap``, NumPy with a loop (``FALLBACK_OPS`` lists which Ops of
  a graph took it; random draws are refused: a shared key would give every element the
  same draw).

Nodes that do not depend on a replaced input are kept as they are, so vectorizing a
graph of elementwise Ops adds no node beyond the new inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Apply, Op, Var, apply_op, as_var, graph_inputs, toposort
from rewritekit.ir.inner import close_over
from rewritekit.tensor import (
    broadcast_to,
    expand_dims,
    moveaxis,
    reshape,
    shape_i,
    squeeze,
    tensordot,
    transpose,
)
from rewritekit.tensor.aggregates import ArgReduce, Reduce
from rewritekit.tensor.contractions import Dot, MatMul
from rewritekit.tensor.control import Blockwise
from rewritekit.tensor.indexing import ARRAY
from rewritekit.tensor.joining import Concatenate
from rewritekit.tensor.layout import BroadcastTo, ExpandDims, Reshape, Squeeze, Transpose
from rewritekit.tensor.shape_vectors import Shape, ShapeI, lengths
from rewritekit.tensor.sharding import Shard
from rewritekit.tensor.sorting import SortBase
from rewritekit.tensor.subtensor import Subtensor, UpdateSubtensor
from rewritekit.tensor.ufunc import Elemwise

__all__ = ["BATCH_RULES", "Unbatched", "vectorize", "vmap"]

#: ``rule(node, inputs, batched, batch_ndim) -> outputs``, or None to fall back.
BatchRule = Callable[[Apply, list[Var], list[bool], int], Sequence[Var] | None]


class Unbatched(list):  # type: ignore[type-arg]
    """What a batching rule returns for outputs that are the same for every element (the
    core shape of a batched array): later nodes read them as shared inputs."""


def _elementwise(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> list[Var]:
    n = node.outputs[0].ndim
    aligned = [
        expand_dims(v, tuple(range(nb, nb + n - old.ndim))) if b and old.ndim < n else v
        for v, b, old in zip(inputs, batched, node.inputs, strict=True)
    ]
    return apply_op(node.op, tuple(aligned))


def _shifted_axes(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    op = node.op
    axis = getattr(op, "axis", None)
    if len(inputs) != 1 or not isinstance(axis, (tuple, int)) or isinstance(axis, bool):
        return None  # None (every axis) is normalized away by the constructors
    params = {p: getattr(op, p) for p in type(op).__props__}
    params["axis"] = tuple(a + nb for a in axis) if isinstance(axis, tuple) else axis + nb
    return apply_op(type(op)(**params), (inputs[0],))


def _only_first(batched: list[bool]) -> bool:
    return batched[0] and not any(batched[1:])


def _shifted_layout(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``expand_dims``, ``squeeze`` and ``transpose`` of the core's axes, past the batch."""
    op = node.op
    if not _only_first(batched):
        return None
    if isinstance(op, Transpose):
        new: Op = Transpose((*range(nb), *(a + nb for a in op.axes)))
    else:
        new = type(op)(tuple(a + nb for a in op.axes))  # type: ignore[call-arg]
    return apply_op(new, (inputs[0],))


def _batch_lengths(inputs: list[Var], batched: list[bool], nb: int) -> list[Any]:
    return lengths(inputs[batched.index(True)])[:nb]


def _concatenate(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Joined along the shifted axis; the shared inputs broadcast over the batch."""
    batch = _batch_lengths(inputs, batched, nb)
    full = [
        v if b else broadcast_to(v, (*batch, *lengths(v)))
        for v, b in zip(inputs, batched, strict=True)
    ]
    return apply_op(Concatenate(node.op.axis + nb), tuple(full))  # type: ignore[attr-defined]


def _reshape(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """A reshape to a static core shape, after the batch axes."""
    core = node.op.shape  # type: ignore[attr-defined]
    if not _only_first(batched) or any(n is None for n in core):
        return None
    return [reshape(inputs[0], (*_batch_lengths(inputs, batched, nb), *core))]


def _core_shape(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``shape(x)`` and ``shape_i(x, i)`` of a batched ``x`` are its core's: shared."""
    x = inputs[0]
    if isinstance(node.op, ShapeI):
        return Unbatched([shape_i(x, node.op.axis + nb)])
    return Unbatched([apply_op(Shape(), (x,))[0][nb:]])


def _shard(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The same placement of the core's axes, the batch axes not partitioned: ``P(None,
    *spec)`` (a ``NamedSharding``'s spec too)."""
    spec = node.op.spec  # type: ignore[attr-defined]
    inner = getattr(spec, "spec", spec)
    try:
        widened = type(inner)(*([None] * nb), *tuple(inner))
    except TypeError:
        return None
    if inner is not spec:
        widened = type(spec)(spec.mesh, widened)
    return apply_op(Shard(widened), (inputs[0],))


def _broadcast_to(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """A batched array broadcast to the core shape after its batch axes (length-1 axes
    after the batch where its core has fewer axes than the target)."""
    if not _only_first(batched):
        return None
    target = node.outputs[0]
    vector = node.inputs[1]
    entries = [n if n is not None else vector[d] for d, n in enumerate(target.type.shape)]
    x = inputs[0]
    missing = target.ndim - node.inputs[0].ndim
    if missing:
        x = expand_dims(x, tuple(range(nb, nb + missing)))
    return [broadcast_to(x, (*_batch_lengths(inputs, batched, nb), *entries))]


def _matmul(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``matmul`` broadcasts leading axes itself: where the batch axes come out in front
    (a batched operand has at least the other's core rank, both at least 2; or a batched
    vector times a shared matrix), the batched operands go in as they are; a batched
    column vector ``b`` under a shared matrix ``a`` is ``b @ a.T``, and a batch of matrices
    times a shared matrix a ``tensordot``: one matrix product, not one per element."""
    (a, b), (ca, cb) = inputs, (node.inputs[0].ndim, node.inputs[1].ndim)
    ba, bb = batched
    if ca == 2 and cb == 2 and ba != bb:  # one product, not one per batch element
        if ba:
            return [tensordot(a, b, axes=([nb + 1], [0]))]
        # (B..., m, n): the batch and the product's rows already in place; for a column
        # (m = 1, a matrix-vector product) the last swap is a reshape
        return [moveaxis(tensordot(b, a, axes=([nb], [1])), -1, -2)]
    if ca >= 2 and cb >= 2 and (not ba or ca >= cb) and (not bb or cb >= ca):
        return apply_op(node.op, (a, b))
    if ba and not bb and ca == 1 and cb == 2:
        return apply_op(node.op, (a, b))
    if bb and not ba and cb == 1 and ca == 2:  # each row of b times a^T: one product
        return apply_op(node.op, (b, transpose(a)))
    return None


def _dot(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``dot`` of a batched ``a`` with a shared vector or matrix is ``dot`` itself (it
    contracts ``a``'s last axis); a batched vector ``b`` under a shared matrix ``a`` is
    ``b @ a.T``; two batched vectors go through ``matmul`` as a row and a column."""
    (a, b), (ca, cb) = inputs, (node.inputs[0].ndim, node.inputs[1].ndim)
    ba, bb = batched
    if ba and not bb and ca >= 1 and cb in (1, 2):
        return apply_op(node.op, (a, b))
    matmul = MatMul()
    if bb and not ba and ca == 2 and cb == 1:  # each row of b times a^T: one product
        return apply_op(matmul, (b, transpose(a)))
    if ba and bb and ca == 1 and cb == 1:
        product = apply_op(matmul, (expand_dims(a, -2), expand_dims(b, -1)))[0]
        return [squeeze(product, (-2, -1))]
    return None


def _basic(index: tuple[Any, ...]) -> bool:
    """No index array and no ``...``: NumPy keeps the indexed axes in place, after the
    batch axes."""
    return not any(e == ARRAY or e is Ellipsis for e in index)


def _subtensor(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Basic indexing (integers, slices, new axes) of a batched array: the same index
    after a full slice per batch axis. Index arrays and ``...`` keep the fallback (NumPy
    may move the indexed axes in front of the batch)."""
    index = node.op.index  # type: ignore[attr-defined]
    if not _only_first(batched) or not _basic(index):
        return None
    new = Subtensor(((None, None, None),) * nb + tuple(index))
    return apply_op(new, tuple(inputs))


def _update_subtensor(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``set_subtensor``/``inc_subtensor`` with a basic index: the same index after a full
    slice per batch axis; a shared ``x`` is broadcast over the batch, a batched value gets
    length-1 axes after its batch axes where its core has fewer axes than the selection."""
    op = node.op
    index = op.index  # type: ignore[attr-defined]
    if any(batched[2:]) or not _basic(index):
        return None
    x, value, *parts = inputs
    if not batched[0]:
        x = broadcast_to(x, (*_batch_lengths(inputs, batched, nb), *lengths(x)))
    if batched[1]:
        core = apply_op(Subtensor(index), (node.inputs[0], *node.inputs[2:]))[0]
        missing = core.ndim - node.inputs[1].ndim
        if missing:
            value = expand_dims(value, tuple(range(nb, nb + missing)))
    new = type(op)(((None, None, None),) * nb + tuple(index))  # type: ignore[call-arg]
    return apply_op(new, (x, value, *parts))


#: Batching rules by Op class (the most specific class of an Op's hierarchy wins).
BATCH_RULES: dict[type, BatchRule] = {
    Elemwise: _elementwise,
    Reduce: _shifted_axes,
    ArgReduce: _shifted_axes,
    SortBase: _shifted_axes,
    ExpandDims: _shifted_layout,
    Squeeze: _shifted_layout,
    Transpose: _shifted_layout,
    Concatenate: _concatenate,
    Reshape: _reshape,
    BroadcastTo: _broadcast_to,
    Shard: _shard,
    Shape: _core_shape,
    ShapeI: _core_shape,
    MatMul: _matmul,
    Dot: _dot,
    Subtensor: _subtensor,
    UpdateSubtensor: _update_subtensor,
}


def _register_axis_ops() -> None:
    """Ops whose only axis parameter is a tuple of axes of their one input."""
    from rewritekit.tensor import cumulative, statistics

    for module in (statistics, cumulative):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Op)
                and "axis" in getattr(value, "__props__", ())
            ):
                BATCH_RULES.setdefault(value, _shifted_axes)


_register_axis_ops()


def batch_rule(op: Op) -> BatchRule | None:
    """The batching rule of ``op``'s class or its nearest base class with one."""
    for cls in type(op).__mro__:
        found = BATCH_RULES.get(cls)
        if found is not None:
            return found
    return None


def _draws(op: Op) -> bool:
    """Whether ``op`` draws random numbers: marked ``foldable = False`` (a loop is marked
    so too, for its cost: it draws when a node of its inner graphs does)."""
    graphs = getattr(op, "inner_graphs", None)
    if graphs:
        return any(_draws(n.op) for g in graphs for n in toposort(list(g.outputs)))
    return not getattr(op, "foldable", True)


def _blockwise(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> list[Var]:
    if isinstance(node.op, Shard):
        raise GraphTypeError(
            f"vectorize: cannot batch {node.op}: its spec is not a PartitionSpec or a NamedSharding"
        )
    if _draws(node.op):
        raise GraphTypeError(
            f"vectorize: {node.op} draws random numbers and has no batching rule; a shared "
            "key would give every batch element the same draw"
        )
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
    done: dict[Var, Var] = dict(pairs)  # batched values
    shared: dict[Var, Var] = {}  # values rebuilt from batched ones but the same for all
    for node in toposort(outs):
        if not any(i in done or i in shared for i in node.inputs):
            continue
        inputs = [_lookup(i, done, shared) for i in node.inputs]
        batched = [i in done for i in node.inputs]
        if not any(batched):
            new = apply_op(node.op, tuple(inputs))
            shared.update(zip(node.outputs, new, strict=True))
            continue
        rule = batch_rule(node.op)
        new = rule(node, inputs, batched, nb) if rule is not None else None
        if new is None:
            new = _blockwise(node, inputs, batched, nb)
        (shared if isinstance(new, Unbatched) else done).update(zip(node.outputs, new, strict=True))
    result = [_lookup(o, done, shared) for o in outs]
    return result[0] if single else type(outputs)(result)


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
