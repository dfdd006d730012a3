"""Products of two tensors: ``dot``, ``matmul``, ``outer`` and ``tensordot``, and the
base class and checks the products share (``einsum`` builds on them).

Every product follows NumPy's shape rules and NumPy's result dtype (``np.result_type`` of
the operands: bool and integer products stay bool and integer, as ``np.dot`` keeps them).
Non-Var arguments become constants with NumPy's default dtypes, as ``np.dot`` converts them
with ``np.asarray`` (so ``rt.dot(x32, 2.0)`` is float64, like ``np.dot``). Contracted
lengths are checked statically where both are known: a mismatch raises a ``ShapeError``
at construction naming the function, the axes and the shapes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import (
    Grads,
    Op,
    TensorType,
    Var,
    Vars,
    as_var,
    broadcast_shapes,
    result_dtype,
    short_name,
)
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import is_int, shape_str
from rewritekit.tensor.elemwise import cast
from rewritekit.tensor.gradient import input_grad
from rewritekit.tensor.shapes import (
    expand_dims,
    flatten,
    reshape,
    shape,
    squeeze,
    swapaxes,
    transpose,
)

__all__ = ["dot", "matmul", "outer", "tensordot"]

Length = int | None


def as_operands(name: str, *args: Any) -> list[Var]:
    return [as_var(a, context=f"{name}: input {i}") for i, a in enumerate(args)]


def _contracted(name: str, a: TensorType, axis_a: int, b: TensorType, axis_b: int) -> None:
    """Raise unless axis ``axis_a`` of ``a`` and ``axis_b`` of ``b`` can have one length."""
    n, m = a.shape[axis_a], b.shape[axis_b]
    if n is not None and m is not None and n != m:
        raise ShapeError(
            f"{name}: shapes {shape_str(a.shape)} and {shape_str(b.shape)} are not aligned: "
            f"axis {axis_a} of input 0 has length {n} but axis {axis_b} of input 1 has "
            f"length {m}"
        )


def grad_as(g: Var, x: Var) -> Var | None:
    """``g`` as the gradient of ``x`` when no broadcasting can have happened: cast to
    ``x``'s dtype, or None for an integer or bool ``x`` (no gradient)."""
    if x.type.kind not in "fc":
        return None
    return g if g.dtype == x.dtype else cast(g, x.dtype)


def _tensordot_vjp(
    g: Var, a: Var, b: Var, axes_a: Sequence[int], axes_b: Sequence[int]
) -> list[Var | None]:
    """The gradients of ``tensordot(a, b, (axes_a, axes_b))`` for the cotangent ``g``.

    ``g``'s axes are ``a``'s free axes then ``b``'s. Each operand's gradient contracts
    ``g`` with the other operand over that operand's free axes, then puts the axes back in
    the operand's order.
    """
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    by_b = sorted(zip(axes_b, axes_a, strict=True))
    by_a = sorted(zip(axes_a, axes_b, strict=True))
    # ga's axes: a's free axes, then a's contracted ones in the order of their b partners
    ga = tensordot(g, b, axes=(list(range(len(free_a), g.ndim)), free_b))
    ga_axes = free_a + [i for _, i in by_b]
    # gb's axes: b's contracted axes in the order of their a partners, then b's free axes
    gb = tensordot(a, g, axes=(free_a, list(range(len(free_a)))))
    gb_axes = [j for _, j in by_a] + free_b
    return [
        grad_as(transpose(ga, [ga_axes.index(i) for i in range(a.ndim)]), a),
        grad_as(transpose(gb, [gb_axes.index(j) for j in range(b.ndim)]), b),
    ]


class Product(Op):
    """Shared by the products: the output dtype is NumPy's promotion of the inputs."""

    abstract = True

    def output_dtype(self, *types: TensorType) -> str:
        """``np.result_type`` of the inputs' dtypes."""
        return result_dtype(*(t.dtype for t in types))


# --- dot, matmul, outer ------------------------------------------------------------------


class Dot(Product):
    """NumPy's ``dot``: a scalar operand multiplies; otherwise the sum over the last axis of
    ``a`` and the second-to-last axis of ``b`` (its only axis if ``b`` is 1-d).

    ``dot(a, b)[i, j, k, m] = sum(a[i, j, :] * b[k, :, m])``.
    """

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        dtype = self.output_dtype(a, b)
        if a.ndim == 0 or b.ndim == 0:
            return (TensorType(dtype, b.shape if a.ndim == 0 else a.shape),)
        axis_b = b.ndim - 2 if b.ndim >= 2 else 0
        _contracted(self.name, a, a.ndim - 1, b, axis_b)
        shape = a.shape[:-1] + b.shape[:axis_b] + b.shape[axis_b + 1 :]
        return (TensorType(dtype, shape),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        (a, b), (g,) = inputs, cotangents
        if a.ndim == 0 or b.ndim == 0:
            # a * b: a scalar operand collects sum(g * other)
            return [
                input_grad(g * b, a) if a.ndim == 0 else grad_as(g * b, a),
                input_grad(g * a, b) if b.ndim == 0 else grad_as(g * a, b),
            ]
        # tensordot over a's last axis and b's only or second-to-last axis
        return _tensordot_vjp(g, a, b, (a.ndim - 1,), (b.ndim - 2 if b.ndim >= 2 else 0,))


@pattern_function(Dot, inputs=("a", "b"))
def dot(a: Any, b: Any) -> Var:
    """NumPy's ``dot`` product of two tensors.

    Scalars multiply, two vectors give their inner product, two matrices their matrix
    product, and N-d ``a`` with M-d ``b`` sum over the last axis of ``a`` and the
    second-to-last of ``b`` (``b``'s only axis when it is 1-d).

    Raises:
        ShapeError: the contracted lengths are known and differ.

    Example:
        >>> rt.dot(rt.matrix("a", shape=(2, 3)), rt.vector("v")).type
        TensorType(dtype='float64', shape=(2,))
    """
    x, y = as_operands("dot", a, b)
    return Dot()(x, y)


class MatMul(Product):
    """NumPy's ``matmul`` (the ``@`` operator): matrix products over the last two axes,
    with the leading (batch) axes broadcast. A 1-d ``a`` is a row vector and a 1-d ``b``
    a column vector; the added axis is removed from the result. Scalars are rejected."""

    name = "matmul"

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        for position, t in enumerate((a, b)):
            if t.ndim == 0:
                raise ShapeError(
                    f"matmul: input {position} is 0-d; matmul needs operands of at least one "
                    "dimension (use multiply to scale by a scalar)"
                )
        a2 = TensorType(a.dtype, a.shape if a.ndim >= 2 else (1, *a.shape))
        b2 = TensorType(b.dtype, b.shape if b.ndim >= 2 else (*b.shape, 1))
        if a2.shape[-1] is not None and b2.shape[-2] is not None and a2.shape[-1] != b2.shape[-2]:
            raise ShapeError(
                f"matmul: shapes {shape_str(a.shape)} and {shape_str(b.shape)} are not "
                f"aligned: the last axis of input 0 has length {a2.shape[-1]} but the "
                f"{'only' if b.ndim == 1 else 'second-to-last'} axis of input 1 has length "
                f"{b2.shape[-2]}"
            )
        batch = broadcast_shapes(a2.shape[:-2], b2.shape[:-2], op="matmul")
        rows = a2.shape[-2:-1] if a.ndim >= 2 else ()
        cols = b2.shape[-1:] if b.ndim >= 2 else ()
        return (TensorType(self.output_dtype(a, b), (*batch, *rows, *cols)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d(a @ b) = da @ b + a @ db: ga = g @ b.T, gb = a.T @ g, summed over the batch
        # axes that broadcast. 1-d operands become a row (a) or a column (b) first.
        (a, b), (g,) = inputs, cotangents
        a2 = a if a.ndim >= 2 else expand_dims(a, 0)
        b2 = b if b.ndim >= 2 else expand_dims(b, 1)
        g2 = g if b.ndim >= 2 else expand_dims(g, -1)
        g2 = g2 if a.ndim >= 2 else expand_dims(g2, -2)
        ga = matmul(g2, swapaxes(b2, -1, -2))
        gb = matmul(swapaxes(a2, -1, -2), g2)
        return [
            input_grad(ga if a.ndim >= 2 else squeeze(ga, -2), a),
            input_grad(gb if b.ndim >= 2 else squeeze(gb, -1), b),
        ]


@pattern_function(MatMul, inputs=("a", "b"))
def matmul(a: Any, b: Any) -> Var:
    """NumPy's ``matmul``, also ``a @ b``: batched matrix products.

    Raises:
        ShapeError: an operand is 0-d, or the contracted lengths are known and differ.
        BroadcastError: the batch axes cannot be broadcast.

    Example:
        >>> (rt.tensor("a", shape=(5, 2, 3)) @ rt.matrix("b", shape=(3, 4))).type
        TensorType(dtype='float64', shape=(5, 2, 4))
    """
    x, y = as_operands("matmul", a, b)
    return MatMul()(x, y)


def _size(shape: Sequence[Length]) -> Length:
    if 0 in shape:
        return 0
    if None in shape:
        return None
    return math.prod(shape)  # type: ignore[arg-type]


class Outer(Product):
    """NumPy's ``outer``: ``outer(a, b)[i, j] = a.ravel()[i] * b.ravel()[j]``."""

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        return (TensorType(self.output_dtype(a, b), (_size(a.shape), _size(b.shape))),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # g[i, j] multiplied a[i] b[j]: ga = g @ b, gb = a @ g, in the operands' shapes
        (a, b), (g,) = inputs, cotangents
        return [
            grad_as(reshape(dot(g, flatten(b)), shape(a)), a),
            grad_as(reshape(dot(flatten(a), g), shape(b)), b),
        ]


@pattern_function(Outer, inputs=("a", "b"))
def outer(a: Any, b: Any) -> Var:
    """The outer product of ``a`` and ``b``, flattened first (NumPy's ``outer``).

    Example:
        >>> rt.outer(rt.vector("a", shape=(2,)), rt.matrix("b", shape=(3, 4))).type
        TensorType(dtype='float64', shape=(2, 12))
    """
    x, y = as_operands("outer", a, b)
    return Outer()(x, y)


# --- tensordot ----------------------------------------------------------------------------


class Tensordot(Product):
    """NumPy's ``tensordot``: the sum over the axis pairs ``axes[0][i]`` of ``a`` and
    ``axes[1][i]`` of ``b``; the result has ``a``'s free axes, then ``b``'s.

    ``axes`` is two tuples of non-negative ints, paired and sorted by ``a``'s axis (the
    order of the pairs does not change the result).
    """

    __props__ = ("axes",)

    axes: tuple[tuple[int, ...], tuple[int, ...]]

    def __init__(self, axes: tuple[Sequence[int], Sequence[int]]) -> None:
        try:
            left, right = (tuple(side) for side in axes)
        except (TypeError, ValueError):
            raise GraphTypeError(
                f"tensordot: axes must be a pair of sequences of ints, got {axes!r}"
            ) from None
        valid = all(is_int(a) and a >= 0 for a in (*left, *right))
        if not valid or len(left) != len(right) or len(set(left)) != len(left):
            raise GraphTypeError(
                "tensordot: axes must be two equally long tuples of distinct non-negative "
                f"ints (rt.tensordot normalizes them), got {axes!r}"
            )
        pairs = sorted(zip((int(a) for a in left), (int(b) for b in right), strict=True))
        super().__init__((tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        a, b = input_types
        for position, (t, side) in enumerate(zip((a, b), self.axes, strict=True)):
            for axis in side:
                if axis >= t.ndim:
                    raise ShapeError(
                        f"tensordot: axis {axis} is out of range for the {t.ndim}-d input "
                        f"{position}"
                    )
            if len(set(side)) != len(side):
                raise ShapeError(f"tensordot: axes {side} of input {position} repeat an axis")
        for axis_a, axis_b in zip(*self.axes, strict=True):
            _contracted(self.name, a, axis_a, b, axis_b)
        free_a = [n for i, n in enumerate(a.shape) if i not in self.axes[0]]
        free_b = [n for i, n in enumerate(b.shape) if i not in self.axes[1]]
        return (TensorType(self.output_dtype(a, b), (*free_a, *free_b)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # bilinear: each operand's gradient contracts g with the other operand
        (a, b), (g,) = inputs, cotangents
        return _tensordot_vjp(g, a, b, *self.axes)


def _tensordot_side(side: Any, x: Var, position: int) -> tuple[int, ...]:
    axes = [side] if is_int(side) else side
    if not isinstance(axes, (list, tuple)) or not all(is_int(a) for a in axes):
        raise GraphTypeError(
            f"tensordot: axes for input {position} must be an int or a sequence of ints, "
            f"got {side!r}"
        )
    out = []
    for axis in axes:
        if not -x.ndim <= axis < x.ndim:
            raise ShapeError(
                f"tensordot: axis {axis} is out of range for the {x.ndim}-d input {position} "
                f"({short_name(x)})"
            )
        out.append(int(axis) % x.ndim)
    if len(set(out)) != len(out):
        raise ShapeError(
            f"tensordot: axes {tuple(axes)} of input {position} ({short_name(x)}) repeat an axis"
        )
    return tuple(out)


@pattern_function(Tensordot, inputs=("a", "b"))
def tensordot(a: Any, b: Any, axes: Any = 2) -> Var:
    """NumPy's ``tensordot``: the sum of products over the given axes.

    Args:
        a: the first operand.
        b: the second operand.
        axes: an int ``n`` (the last ``n`` axes of ``a`` with the first ``n`` of ``b``, in
            order) or a pair ``(axes_a, axes_b)`` of ints or equally long sequences of ints
            (negative axes count from the end).

    Raises:
        GraphTypeError: ``axes`` is not an int or a pair of ints/sequences.
        ShapeError: an axis is out of range or repeated, the two sequences differ in length,
            or paired lengths are known and differ.

    Example:
        >>> a, b = rt.tensor("a", shape=(2, 3, 4)), rt.tensor("b", shape=(4, 3, 5))
        >>> rt.tensordot(a, b, axes=([1, 2], [1, 0])).type
        TensorType(dtype='float64', shape=(2, 5))
    """
    x, y = as_operands("tensordot", a, b)
    if is_int(axes):
        if not 0 <= axes <= min(x.ndim, y.ndim):
            raise ShapeError(
                f"tensordot: axes={axes} must be between 0 and the smaller rank "
                f"{min(x.ndim, y.ndim)} of the inputs ({short_name(x)}, {short_name(y)})"
            )
        pair = (tuple(range(x.ndim - axes, x.ndim)), tuple(range(axes)))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        pair = (_tensordot_side(axes[0], x, 0), _tensordot_side(axes[1], y, 1))
        if len(pair[0]) != len(pair[1]):
            raise ShapeError(
                f"tensordot: axes {axes!r} pair {len(pair[0])} axes of input 0 with "
                f"{len(pair[1])} of input 1; give as many of each"
            )
    else:
        raise GraphTypeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}")
    return Tensordot(pair)(x, y)
