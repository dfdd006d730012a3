"""Shape inference for the ``fold`` phase: the lengths of a node's output computed from
the lengths of its inputs, so ``shape(f(x))`` is rewritten without evaluating ``f``.

The shape of each Op class comes from ``infer_shape``, a table keyed by Op class
(``functools.singledispatch``; a subclass inherits its base's entry), as PyTensor's
``Op.infer_shape``. Register your Op::

    from rewritekit.rules.library.shape_inference import infer_shape

    @infer_shape.register(MyOp)
    def _(op, node, index, shapes):
        x_shape, y_shape = shapes  # the lengths of each input: int64 scalar Vars
        return [x_shape[0], y_shape[1]]

The function gets the Op, its node, the index of the output asked for and the lengths of
the node's inputs (constants where static; already inferred from further down where
possible), and returns one entry per axis of that output (an integer scalar Var, a Python
int, or None where it cannot say), or None when it cannot say anything. Build the entries
from ``shapes`` and the node's inputs, never from its outputs. An Op without an entry keeps
``shape(f(...))``. Inferred shapes are memoised per node (weakly); registering an Op starts
the memo afresh.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Sequence

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import ShapeError
from rewritekit.ir import Apply, Constant, Op, Var, constant
from rewritekit.tensor.creation import Alloc, Arange, Eye
from rewritekit.tensor.elemwise import Elemwise
from rewritekit.tensor.gradient import StopGradient, SumTo
from rewritekit.tensor.linalg import Cholesky, Det, Inv, Slogdet
from rewritekit.tensor.products import Dot, MatMul, Outer
from rewritekit.tensor.reduction import ArgReduce, Cumulative, Reduce, SoftmaxBase
from rewritekit.tensor.shapes import (
    BroadcastTo,
    Concatenate,
    ExpandDims,
    MakeVector,
    Reshape,
    Shape,
    ShapeI,
    Squeeze,
    Transpose,
)
from rewritekit.tensor.sorting import SortBase
from rewritekit.tensor.subtensor import ARRAY, SCALAR, Subtensor, UpdateSubtensor, entry_axes

__all__ = [
    "infer_shape",
    "inferred_shape",
    "int64_scalar",
    "lengths",
    "resolved_shape",
    "shape_vector",
]

Length = Var | int
Entry = Var | int | None
_SHAPE = Shape()
_MAKE_VECTOR = MakeVector()


# --- shape inference: the table ----------------------------------------------------------

Shapes = Sequence[Sequence[Var]]


@functools.singledispatch
def infer_shape(op: Op, node: Apply, index: int, shapes: Shapes) -> Sequence[Entry] | None:
    """The lengths of output ``index`` of ``node``, given the lengths of its inputs
    (``shapes[k][j]``: axis ``j`` of input ``k``, an int64 scalar Var); None for an Op
    without a shape rule. See the module docstring for registering an Op.

    Example:
        >>> x = rt.matrix("x")
        >>> node = rt.exp(x).owner
        >>> infer_shape(node.op, node, 0, [[rt.shape_i(x, 0), rt.shape_i(x, 1)]])[1]
        <Var ShapeI{axis=1}(...) int64[]>
    """
    return None


_NO_RULE = infer_shape.dispatch(object)


def int64_scalar(value: Var | int) -> Var:
    if isinstance(value, Var):
        return value if value.dtype == "int64" else rt.cast(value, "int64")
    return constant(np.int64(value))


def _product(entries: Sequence[Length]) -> Length:
    result: Length = math.prod(e for e in entries if isinstance(e, int))
    for e in entries:
        if isinstance(e, Var):
            result = e if isinstance(result, int) and result == 1 else result * e
    return result


def _plus(u: Length, v: Length) -> Length:
    """u + v, adding ints now and leaving out a zero (as ``_minus``)."""
    if isinstance(u, int) and isinstance(v, int):
        return u + v
    if isinstance(u, int) and u == 0:
        return v
    return u if isinstance(v, int) and v == 0 else u + v


def _minus(u: Length, v: Length) -> Length:
    if isinstance(u, int) and isinstance(v, int):
        return u - v
    return u if isinstance(v, int) and v == 0 else u - v


def _equals(var: Var, value: int) -> bool:
    return isinstance(var, Constant) and var.data.item() == value


def entry_of(vector: Var, i: int) -> Var:
    """Entry ``i`` of an integer vector, read off a constant, MakeVector or Shape."""
    owner = vector.owner
    if isinstance(vector, Constant):
        return constant(np.int64(vector.data[i]))
    if owner is not None and isinstance(owner.op, MakeVector):
        return int64_scalar(owner.inputs[i])
    if owner is not None and isinstance(owner.op, Shape):
        return rt.shape_i(owner.inputs[0], i)
    return int64_scalar(vector[i])


def _broadcast_length(lengths: Sequence[Var]) -> Var:
    # a static length other than 1 wins; at run time d1 broadcast with d2 is d2 if d1 == 1
    # else d1 (not maximum: 0 broadcast with 1 is 0)
    for d in lengths:
        if isinstance(d, Constant) and int(d.data) != 1:
            return d
    unknown = list(dict.fromkeys(d for d in lengths if not isinstance(d, Constant)))
    if not unknown:
        return constant(np.int64(1))
    result = unknown[0]
    for d in unknown[1:]:
        result = rt.where(rt.equal(result, 1), d, result)
    return result


def _broadcast(shapes: Shapes) -> list[Var]:
    ndim = max((len(s) for s in shapes), default=0)
    return [
        _broadcast_length([s[len(s) - ndim + k] for s in shapes if len(s) >= ndim - k])
        for k in range(ndim)
    ]


# --- shape inference: the Ops ------------------------------------------------------------


@infer_shape.register(Elemwise)
def _elemwise_shape(op: Elemwise, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return list(_broadcast(shapes))


@infer_shape.register(StopGradient)
@infer_shape.register(SoftmaxBase)
@infer_shape.register(Cholesky)
@infer_shape.register(Inv)
def _same_shape(op: Op, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return list(shapes[0])


@infer_shape.register(UpdateSubtensor)
def _updated_shape(op: UpdateSubtensor, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return list(shapes[0])


@infer_shape.register(Outer)
def _outer_shape(op: Outer, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return [_product(shapes[0]), _product(shapes[1])]


@infer_shape.register(Det)
@infer_shape.register(Slogdet)
def _stack_shape(op: Op, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return list(shapes[0][:-2])


@infer_shape.register(Reduce)
@infer_shape.register(ArgReduce)
def _reduce_shape(op: Reduce | ArgReduce, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    if isinstance(op, Reduce):
        axes = op.axis
    else:  # ArgReduce: one axis, or None for all
        axes = tuple(range(len(shapes[0]))) if op.axis is None else (op.axis,)
    if op.keepdims:
        return [1 if i in axes else d for i, d in enumerate(shapes[0])]
    return [d for i, d in enumerate(shapes[0]) if i not in axes]


@infer_shape.register(Cumulative)
@infer_shape.register(SortBase)
def _scan_shape(op: Cumulative | SortBase, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return [_product(shapes[0])] if op.axis is None else list(shapes[0])


@infer_shape.register(Transpose)
def _transpose_shape(op: Transpose, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return [shapes[0][i] for i in op.axes]


@infer_shape.register(ExpandDims)
def _expand_dims_shape(op: ExpandDims, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    rest = iter(shapes[0])
    return [1 if i in op.axes else next(rest) for i in range(len(shapes[0]) + len(op.axes))]


@infer_shape.register(Squeeze)
def _squeeze_shape(op: Squeeze, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return [d for i, d in enumerate(shapes[0]) if i not in op.axes]


@infer_shape.register(BroadcastTo)
@infer_shape.register(Alloc)
@infer_shape.register(SumTo)
def _target_shape(
    op: BroadcastTo | Alloc | SumTo, node: Apply, index: int, shapes: Shapes
) -> list[Entry]:
    return [entry_of(node.inputs[1], i) for i in range(len(op.shape))]


@infer_shape.register(Reshape)
def _reshape_shape(op: Reshape, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    # an entry that is -1 (statically, or at run time for an unknown one) is the size
    # divided by the others' product (at most one entry is -1, so the others are >= 0)
    vector, size = node.inputs[1], _product(shapes[0])
    target: list[Length] = [
        d if d is not None and d >= 0 else entry_of(vector, i) for i, d in enumerate(op.shape)
    ]
    out: list[Entry] = []
    for i, d in enumerate(op.shape):
        if (d is not None and d >= 0) or (d is None and -1 in op.shape):
            out.append(target[i])  # (with a static -1 elsewhere, this one is not -1)
            continue
        others = _product(target[:i] + target[i + 1 :])
        if isinstance(others, int):
            inferred = size if others <= 1 else size // others
        else:  # never divide by zero (a warning at run time)
            inferred = size // rt.maximum(others, 1)
        out.append(inferred if d == -1 else rt.where(rt.less(target[i], 0), inferred, target[i]))
    return out


@infer_shape.register(Concatenate)
def _concatenate_shape(op: Concatenate, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    out: list[Entry] = []
    for axis in range(len(shapes[0])):
        lengths = [s[axis] for s in shapes]
        if axis == op.axis:
            out.append(functools.reduce(_plus, lengths))
        else:  # every input has this length: read it where it is static
            out.append(next((d for d in lengths if isinstance(d, Constant)), lengths[0]))
    return out


@infer_shape.register(Dot)
def _dot_shape(op: Dot, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    dx, dy = shapes
    if not dx or not dy:
        return list(dx or dy)  # a scalar operand scales the other
    axis = len(dy) - 2 if len(dy) >= 2 else 0
    return [*dx[:-1], *dy[:axis], *dy[axis + 1 :]]


@infer_shape.register(MatMul)
def _matmul_shape(op: MatMul, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    dx, dy = shapes
    rows = dx[-2:-1] if len(dx) >= 2 else []
    cols = dy[-1:] if len(dy) >= 2 else []
    return [*_broadcast([dx[:-2], dy[:-2]]), *rows, *cols]


@infer_shape.register(Eye)
def _eye_shape(op: Eye, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    return list(node.inputs[:2])


@infer_shape.register(Arange)
def _arange_shape(op: Arange, node: Apply, index: int, shapes: Shapes) -> list[Entry]:
    # NumPy's length: ceil((stop - start) / step), at least 0; bools and unsigned integers
    # subtract in int64
    from_zero, unit_step = _equals(node.inputs[0], 0), _equals(node.inputs[2], 1)
    start, stop, step = (int64_scalar(v) if v.type.kind in "bu" else v for v in node.inputs)
    span = stop if from_zero else stop - start
    if unit_step and span.type.kind == "i":
        return [rt.maximum(int64_scalar(span), 0)]
    return [rt.cast(rt.maximum(rt.ceil(span / step), 0), "int64")]


@infer_shape.register(Subtensor)
def _subtensor_shape(op: Subtensor, node: Apply, index: int, shapes: Shapes) -> list[Entry] | None:
    if ARRAY in op.index:
        return None  # advanced indexing: not inferred
    dims, feed = shapes[0], iter(node.inputs[1:])
    out: list[Entry] = []
    done = 0  # the axes of x read so far
    for entry, axis in zip(op.index, entry_axes(op.index, len(dims)), strict=True):
        if axis is None:
            out.extend([1] if entry is None else [])
            continue
        out.extend(dims[done:axis])  # the axes an Ellipsis stands for
        done = axis + 1
        if isinstance(entry, tuple):
            bounds = [int64_scalar(next(feed)) if b == SCALAR else b for b in entry]
            out.append(_slice_length(dims[axis], *bounds))
        elif entry == SCALAR:
            next(feed)
    return [*out, *dims[done:]]


def _slice_length(n: Var, start: Entry, stop: Entry, step: Entry) -> Var | None:
    """``len(range(*slice(start, stop, step).indices(n)))`` for a run-time ``n``."""
    if isinstance(step, Var):
        return None  # the step's sign decides the formula
    step = 1 if step is None else step
    lower = 0 if step > 0 else -1
    first = (_plus(n, -1) if step < 0 else 0) if start is None else _clip(start, n, lower)
    last = (n if step > 0 else -1) if stop is None else _clip(stop, n, lower)
    span = _minus(last, first) if step > 0 else _minus(first, last)
    if abs(step) > 1:
        span = _plus(span, abs(step) - 1) // abs(step)
    return rt.maximum(span, 0)


def _clip(bound: Var | int, n: Var, lower: int) -> Var:
    # CPython's slice.indices: a negative bound counts from the end; the result is
    # clipped to [lower, n + lower]
    upper = _plus(n, lower)
    if isinstance(bound, int):
        return rt.maximum(_plus(n, bound), lower) if bound < 0 else rt.minimum(bound, upper)
    return rt.where(rt.less(bound, 0), rt.maximum(bound + n, lower), rt.minimum(bound, upper))


# --- shape inference: the driver --------------------------------------------------------


def lengths(x: Var, resolved: bool = False) -> list[Var]:
    """The lengths of ``x``: constants where static, else ``x``'s resolved lengths (with
    ``resolved``, where known), else ``shape_i(x, i)``."""
    known = _RESOLVED.get(x) if resolved and x.owner is not None else None
    return [
        constant(np.int64(n))
        if n is not None
        else known[i]
        if known is not None and known[i] is not None
        else ShapeI(i)(x)
        for i, n in enumerate(x.type.shape)
    ]


def inferred_shape(var: Var, resolved: bool = False) -> list[Var | None] | None:
    """The lengths of ``var`` by its Op's shape rule (int64 scalars; constants where the
    static shape knows them; None where the rule cannot say), or None without a rule.
    With ``resolved``, the inputs' lengths come resolved from ``_RESOLVED``."""
    node = var.owner
    if node is None:
        return None
    shapes = [lengths(x, resolved) for x in node.inputs]
    entries = infer_shape(node.op, node, var.index, shapes)
    if entries is None:
        return None
    entries = list(entries)
    if len(entries) != var.ndim:
        raise ShapeError(
            f"infer_shape: the shape rule of {node.op} gave {len(entries)} lengths for "
            f"output {var.index}, which is {var.ndim}-d"
        )
    return [
        int64_scalar(n) if n is not None else None if e is None else int64_scalar(e)
        for n, e in zip(var.type.shape, entries, strict=True)
    ]


def resolved_shape(var: Var) -> tuple[Var | None, ...] | None:
    """``inferred_shape(var)`` with the lengths of its inputs resolved in turn, down to
    graph inputs and nodes without a shape rule, so that the replacement needs no nested
    rewrites (a chain of them as deep as the graph would exceed the engine's ``max_steps``).

    Iterative, and memoised per node in ``_RESOLVED`` (weakly: an entry goes with its node;
    it never refers to the node itself, None standing for ``shape_i(node, i)``).
    """
    if _RESOLVED_WITH[0] != len(infer_shape.registry):  # a registration: start afresh
        _RESOLVED.clear()
        _RESOLVED_WITH[0] = len(infer_shape.registry)
    stack = [var]
    while stack:
        top = stack[-1]
        if top in _RESOLVED:
            stack.pop()
            continue
        node = top.owner
        has_rule = infer_shape.dispatch(type(node.op)) is not _NO_RULE
        pending = [i for i in node.inputs if has_rule and i.owner and i not in _RESOLVED]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        entries = inferred_shape(top, resolved=True) if has_rule else None
        _RESOLVED[top] = None if entries is None else tuple(entries)
    return _RESOLVED[var]


_RESOLVED: weakref.WeakKeyDictionary[Var, tuple[Var | None, ...] | None] = (
    weakref.WeakKeyDictionary()
)
_RESOLVED_WITH = [len(infer_shape.registry)]  # the size of the table _RESOLVED is for


def shape_vector(entries: Sequence[Var]) -> Var:
    """The int64 vector of ``entries``: a constant, ``shape(u)`` when the entries are
    ``shape_i(u, 0), shape_i(u, 1), ...`` of a ``u`` without static lengths, or a
    ``MakeVector``."""
    if all(isinstance(e, Constant) for e in entries):
        return constant(np.array([int(e.data) for e in entries], dtype=np.int64).reshape(-1))
    first = entries[0].owner if entries else None
    if first is not None and isinstance(first.op, ShapeI):
        source = first.inputs[0]
        whole = source.ndim == len(entries) and all(d is None for d in source.type.shape)
        if whole and all(e is ShapeI(i)(source) for i, e in enumerate(entries)):
            return _SHAPE(source)
    return _MAKE_VECTOR(*entries)
