"""Batching rules of the tensor Ops (``rewritekit.tensor``): reductions shift their axes,
layout Ops and shapes adjust, products and linear algebra batch over leading axes, and the
creation Ops broadcast their batched fill values. Elementwise Ops state theirs as
``Elemwise.batch`` (broadcasting); indexing's rules are in ``indexing``."""

from __future__ import annotations

import string
from typing import Any

from rewritekit.errors import ShapeError
from rewritekit.ir import Apply, Op, Var, apply_op
from rewritekit.tensor import (
    arange,
    broadcast_to,
    cast,
    cumulative,
    einsum,
    equal,
    expand_dims,
    maximum,
    minimum,
    moveaxis,
    reshape,
    set_subtensor,
    shape_i,
    squeeze,
    stack,
    statistics,
    tensordot,
    transpose,
    where,
    zeros,
)
from rewritekit.tensor import linalg as la
from rewritekit.tensor import (
    sum as reduce_sum,
)
from rewritekit.tensor.aggregates import ArgReduce, Reduce
from rewritekit.tensor.contractions import Dot, MatMul, Outer, Tensordot
from rewritekit.tensor.creation import Alloc, Arange, Eye
from rewritekit.tensor.diagonals import AllocDiag, ExtractDiag, Trace
from rewritekit.tensor.einstein import Einsum, parse_einsum
from rewritekit.tensor.gradient import StopGradient, SumTo
from rewritekit.tensor.joining import Concatenate
from rewritekit.tensor.layout import BroadcastTo, ExpandDims, Reshape, Squeeze, Transpose
from rewritekit.tensor.shape_vectors import MakeVector, Shape, ShapeI, as_shape_vector, lengths
from rewritekit.tensor.sharding import Shard
from rewritekit.tensor.sorting import SortBase
from rewritekit.tensor.specify import SpecifyShape
from rewritekit.vectorize.registry import (
    BATCH_RULES,
    Unbatched,
    batch_lengths,
    broadcast_batch,
    only_first,
    pad_core,
    rule,
)

__all__: list[str] = []


@rule(Reduce, ArgReduce, SortBase)
def _shifted_axes(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The same Op over the core's axes, shifted past the batch axes. ``axis=None`` (the
    flattened array: ``cumsum``, ``sort``; every element: ``softmax``) flattens each
    element's core and works along that axis."""
    op = node.op
    axis = getattr(op, "axis", None)
    if len(inputs) != 1 or isinstance(axis, bool):
        return None
    params = {p: getattr(op, p) for p in type(op).__props__}
    if isinstance(axis, (tuple, int)):
        params["axis"] = tuple(a + nb for a in axis) if isinstance(axis, tuple) else axis + nb
        return apply_op(type(op)(**params), (inputs[0],))
    (x,), core_in, core_out = inputs, node.inputs[0].ndim, node.outputs[0].ndim
    if axis is not None or core_out not in (0, 1, core_in):
        return None
    size = lengths(x)
    params["axis"] = nb
    out = apply_op(type(op)(**params), (reshape(x, (*size[:nb], -1)),))
    if core_out <= 1:  # a scalar (argmax of every element) or the flattened array
        return out
    # keepdims: length 1 in every core axis; else (softmax) the input's shape
    core = [1] * core_out if getattr(op, "keepdims", False) else size[nb:]
    return [reshape(o, (*size[:nb], *core)) for o in out]


@rule(ExpandDims, Squeeze, Transpose)
def _shifted_layout(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``expand_dims``, ``squeeze`` and ``transpose`` of the core's axes, past the batch."""
    op = node.op
    if not only_first(batched):
        return None
    if isinstance(op, Transpose):
        new: Op = Transpose((*range(nb), *(a + nb for a in op.axes)))
    else:
        new = type(op)(tuple(a + nb for a in op.axes))  # type: ignore[call-arg]
    return apply_op(new, (inputs[0],))


@rule(Concatenate)
def _concatenate(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Joined along the shifted axis; the shared inputs broadcast over the batch."""
    batch = batch_lengths(inputs, batched, nb)
    full = [v if b else broadcast_batch(v, batch) for v, b in zip(inputs, batched, strict=True)]
    return apply_op(Concatenate(node.op.axis + nb), tuple(full))  # type: ignore[attr-defined]


@rule(Reshape)
def _reshape(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The batch axes, then the core's target shape (static entries, ``-1``, or read from
    the rebuilt shape vector)."""
    if not only_first(batched):
        return None  # a target shape that varies over the batch
    x, vector = inputs
    core = [n if n is not None else vector[d] for d, n in enumerate(node.op.shape)]  # type: ignore[attr-defined]
    return [reshape(x, (*batch_lengths(inputs, batched, nb), *core))]


@rule(Shape, ShapeI)
def _core_shape(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``shape(x)`` and ``shape_i(x, i)`` of a batched ``x`` are its core's: shared."""
    x = inputs[0]
    if isinstance(node.op, ShapeI):
        return Unbatched([shape_i(x, node.op.axis + nb)])
    return Unbatched([apply_op(Shape(), (x,))[0][nb:]])


@rule(Shard)
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


@rule(BroadcastTo)
def _broadcast_to(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """A batched array broadcast to the core shape after its batch axes (length-1 axes
    after the batch where its core has fewer axes than the target)."""
    if not only_first(batched):
        return None
    # the shape vector is rebuilt: a shape read from a batched array is its core's
    return [_to_core_shape(node, inputs, batched, nb)]


def _to_core_shape(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Var:
    """The batched first input broadcast to the batch lengths, then the node's target shape
    (static lengths, else read from the rebuilt shape vector, the second input)."""
    target, vector = node.outputs[0], inputs[1]
    entries = [n if n is not None else vector[d] for d, n in enumerate(target.type.shape)]
    x = pad_core(inputs[0], nb, node.inputs[0].ndim, target.ndim)
    return broadcast_to(x, (*batch_lengths(inputs, batched, nb), *entries))


@rule(MatMul)
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
    # otherwise as einsum: the stacks broadcast under "...", the batch letters in front
    left, right = ("...ab" if ca > 1 else "b"), ("...bc" if cb > 1 else "b")
    out = ("..." if max(ca, cb) > 1 else "") + "a" * (ca > 1) + "c" * (cb > 1)
    return _batched_einsum(f"{left},{right}->{out}", inputs, batched, nb)


@rule(Dot)
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
    # dot contracts a's last axis with b's second-to-last (its only one for a vector)
    a_axes = string.ascii_lowercase[:ca]
    b_axes = string.ascii_uppercase[:cb]
    if ca and cb:
        b_axes = b_axes.replace(b_axes[-2 if cb > 1 else -1], a_axes[-1])
    out = a_axes[:-1] + b_axes.replace(a_axes[-1], "") if ca and cb else a_axes + b_axes
    return _batched_einsum(f"{a_axes},{b_axes}->{out}", inputs, batched, nb)


@rule(Tensordot)
def _tensordot(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """As einsum: each core axis a letter, the summed pairs sharing theirs."""
    left, right = node.op.axes  # type: ignore[attr-defined]
    ca, cb = (v.ndim for v in node.inputs)
    a_axes = list(string.ascii_lowercase[:ca])
    b_axes = list(string.ascii_uppercase[:cb])
    for i, j in zip(left, right, strict=True):
        b_axes[j] = a_axes[i]
    out = [c for c in a_axes if c not in b_axes] + [c for c in b_axes if c not in a_axes]
    subscripts = f"{''.join(a_axes)},{''.join(b_axes)}->{''.join(out)}"
    return _batched_einsum(subscripts, inputs, batched, nb)


@rule(Outer)
def _outer(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Each element's flattened operands, as a column times a row."""
    a, b = (
        reshape(v, (*lengths(v)[:nb], -1)) if f else reshape(v, (-1,))
        for v, f in zip(inputs, batched, strict=True)
    )
    product = expand_dims(a, -1) * expand_dims(b, -2)
    return [cast(product, node.outputs[0].dtype)]


def _register_axis_ops() -> None:
    """Ops whose only axis parameter is a tuple of axes of their one input."""
    for module in (statistics, cumulative):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Op)
                and "axis" in getattr(value, "__props__", ())
            ):
                BATCH_RULES.setdefault(value, _shifted_axes)


_register_axis_ops()


@rule(SpecifyShape)
def _specify_shape(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The same lengths after batch axes left as they are."""
    return apply_op(SpecifyShape((None,) * nb + node.op.shape), (inputs[0],))  # type: ignore[attr-defined]


@rule(StopGradient)
def _as_is(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Ops that act on each element alone, whatever the axes."""
    return apply_op(node.op, tuple(inputs))


@rule(Einsum)
def _einsum(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """New letters for the batch axes, in front of each batched operand's term and of the
    output: the shared operands broadcast over them."""
    return _batched_einsum(node.op.subscripts, inputs, batched, nb)  # type: ignore[attr-defined]


def _batched_einsum(subscripts: str, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """``einsum(subscripts)`` of the core operands, for the batched ``inputs``."""
    ndims = [v.ndim - nb if b else v.ndim for v, b in zip(inputs, batched, strict=True)]
    spec = parse_einsum(subscripts, ndims)
    free = [c for c in string.ascii_letters if c not in subscripts]
    if len(free) < nb:
        return None
    letters = "".join(free[:nb])
    terms = [
        (letters if b else "") + "".join(term) for term, b in zip(spec.inputs, batched, strict=True)
    ]
    return [einsum(",".join(terms) + "->" + letters + "".join(spec.output), *inputs)]


# --- linear algebra ---------------------------------------------------------------------


@rule(la.Cholesky, la.Inv, la.Det, la.Slogdet)
def _stacked(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Ops on stacks of matrices: the batch axes are more of the stack."""
    return apply_op(node.op, tuple(inputs))


@rule(la.Solve)
def _solve(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The stacks broadcast: each batched operand gets length-1 axes after its batch axes up
    to the core's stack rank; a vector ``b`` is solved as a one-column matrix."""
    (a, b), (ca, cb) = inputs, node.inputs
    vector = cb.ndim == 1
    stack_rank = node.outputs[0].ndim - (1 if vector else 2)
    if batched[0]:
        a = pad_core(a, nb, ca.ndim, stack_rank + 2)
    if vector:
        if not batched[1]:
            return [la.solve(a, b)]  # a 1-d b broadcasts against every matrix
        b = expand_dims(b, -1)
    if batched[1]:
        b = pad_core(b, nb, cb.ndim + vector, stack_rank + 2)
    x = la.solve(a, b)
    return [squeeze(x, -1) if vector else x]


@rule(la.SolveTriangular)
def _solve_triangular(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """A shared triangle solves every element's right-hand side at once (the batch folded
    into ``b``'s columns); a batch of triangles goes through ``solve`` of each triangle
    (the other one zeroed)."""
    (a, b), cb = inputs, node.inputs[1]
    lower = node.op.lower  # type: ignore[attr-defined]
    if batched[0]:
        n = shape_i(a, a.ndim - 1)
        index = arange(n)
        mask = (expand_dims(index, 1) >= index) if lower else (expand_dims(index, 1) <= index)
        triangle = where(mask, a, zeros((), dtype=a.dtype))
        return _solve(la.Solve().make_node(node.inputs[0], cb), [triangle, b], batched, nb)
    batch = batch_lengths(inputs, batched, nb)
    core = lengths(b)[nb:]
    columns = moveaxis(b, nb, 0) if nb else b  # (n, B..., [k])
    flat = reshape(columns, (core[0], -1))
    x = la.solve_triangular(a, flat, lower=lower)
    return [moveaxis(reshape(x, (core[0], *batch, *core[1:])), 0, nb)]


# --- diagonals --------------------------------------------------------------------------


@rule(Trace)
def _trace(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The core's first two axes moved in front: the batch axes follow them."""
    x = moveaxis(inputs[0], (nb, nb + 1), (0, 1))
    return apply_op(node.op, (x,))


def _diagonal(k: int, length: Any) -> tuple[Var, Var]:
    index = arange(length)
    return (index - k if k < 0 else index), (index + k if k > 0 else index)


@rule(ExtractDiag)
def _extract_diag(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Diagonal ``k`` read with two index arrays after the batch axes."""
    (x,), k = inputs, node.op.k  # type: ignore[attr-defined]
    length = node.outputs[0].type.shape[0]
    if length is None:
        n, m = (shape_i(x, nb), shape_i(x, nb + 1))
        length = maximum(0, minimum(n, m - k) if k >= 0 else minimum(n + k, m))
    rows, cols = _diagonal(k, length)
    return [x[(slice(None),) * nb + (rows, cols)]]


@rule(AllocDiag)
def _alloc_diag(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Each element's vector written on diagonal ``k`` of a zero matrix."""
    (v,), k = inputs, node.op.k  # type: ignore[attr-defined]
    size = lengths(v)
    n = size[nb]
    side = n + abs(k)
    rows, cols = _diagonal(k, n)
    out = zeros((*size[:nb], side, side), dtype=v.dtype)
    return [set_subtensor(out[(slice(None),) * nb + (rows, cols)], v)]


# --- creation and shape vectors -----------------------------------------------------------


@rule(Alloc)
def _alloc(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """A batched fill value broadcast over the core shape (a batched shape varies per
    element: no rule)."""
    if not only_first(batched):
        return None
    return [_to_core_shape(node, inputs, batched, nb)]


@rule(Eye)
def _eye(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """A batched offset ``k`` moves each element's diagonal: ``row + k == column``. A
    batched ``n`` or ``m`` would change the shape."""
    if any(batched[:2]):
        return _varying_length(node, inputs, batched, nb)
    n, m, k = inputs
    rows = expand_dims(arange(n), 1)
    on = equal(expand_dims(rows, tuple(range(nb))) + expand_dims(k, (-2, -1)), arange(m))
    return [cast(on, node.op.dtype)]  # type: ignore[attr-defined]


@rule(Arange)
def _varying_length(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    raise ShapeError(
        f"vectorize: the length of {node.op}'s result depends on a batched input; every "
        "batch element must have the same shape (make the bounds shared or static)"
    )


@rule(MakeVector)
def _make_vector(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """The scalars stacked along a last axis (the shared ones repeated over the batch)."""
    batch = batch_lengths(inputs, batched, nb)
    full = [
        cast(v if b else broadcast_batch(v, batch), "int64")
        for v, b in zip(inputs, batched, strict=True)
    ]
    return [stack(full, axis=-1)]


@rule(SumTo)
def _sum_to(node: Apply, inputs: list[Var], batched: list[bool], nb: int) -> Any:
    """Summed to the batch axes followed by the core's target shape."""
    if not only_first(batched):
        return None
    g, vector = inputs
    batch = batch_lengths(inputs, batched, nb)
    target = node.op.shape  # type: ignore[attr-defined]
    extra = node.inputs[0].ndim - len(target)
    if extra:  # the core's leading axes, summed here: SumTo would sum the batch axes
        g = reduce_sum(g, axis=tuple(range(nb, nb + extra)))
    static = [n if isinstance(n, int) else None for n in batch]
    parts = [*batch, *(n if n is not None else vector[d] for d, n in enumerate(target))]
    return apply_op(SumTo((*static, *target)), (g, as_shape_vector(parts, "vectorize")))
