"""Joining tensors: ``concatenate`` along an existing axis and ``stack`` along a new one
(a ``Concatenate`` of ``expand_dims``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, as_var, result_dtype, short_name
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import axis_index, is_int, shape_str
from rewritekit.tensor.elemwise import cast
from rewritekit.tensor.layout import expand_dims, flatten
from rewritekit.tensor.shape_vectors import shape_i

__all__ = ["concatenate", "stack"]


class Concatenate(Op):
    """The inputs joined along ``axis``; their dtypes promote as in NumPy."""

    __props__ = ("axis",)

    def __init__(self, axis: int) -> None:
        if not is_int(axis) or axis < 0:
            raise GraphTypeError(f"concatenate: axis must be a non-negative int, got {axis!r}")
        super().__init__(int(axis))

    def infer_types(self, *xs: TensorType) -> tuple[TensorType, ...]:
        if not xs:
            raise ShapeError("concatenate: need at least one input")
        ndim = xs[0].ndim
        if ndim == 0:
            raise ShapeError("concatenate: 0-d inputs cannot be concatenated")
        if self.axis >= ndim:
            raise ShapeError(f"concatenate: axis {self.axis} is out of range for {ndim}-d inputs")
        out = list(xs[0].shape)
        for position, t in enumerate(xs[1:], start=1):
            if t.ndim != ndim:
                raise ShapeError(
                    f"concatenate: input {position} is {t.ndim}-d but input 0 is {ndim}-d"
                )
            for a, d in enumerate(t.shape):
                if a == self.axis:
                    out[a] = None if out[a] is None or d is None else out[a] + d
                elif out[a] is None:
                    out[a] = d
                elif d is not None and d != out[a]:
                    raise ShapeError(
                        f"concatenate: input {position} has shape {shape_str(t.shape)}, which "
                        f"does not match {shape_str(xs[0].shape)} of input 0 on axis {a} "
                        f"(only axis {self.axis} may differ)"
                    )
        return (TensorType(result_dtype(*xs), out),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # each input gets the slice of g it filled along the axis, in its own dtype (the
        # inputs' dtypes promote); integer inputs get none
        (g,) = cotangents
        grads: Grads = []
        start: int | Var = 0
        for position, x in enumerate(inputs):
            length = x.type.shape[self.axis]
            size = shape_i(x, self.axis) if length is None else length
            stop = size if position == 0 else start + size
            last = position == len(inputs) - 1  # reads the rest of g
            piece = g[(*[slice(None)] * self.axis, slice(start, None if last else stop))]
            grads.append(cast(piece, x.dtype) if x.type.kind in "fc" else None)
            start = stop
        return grads


def _sequence(name: str, xs: Any) -> list[Var]:
    if isinstance(xs, (Var, np.ndarray)) or not isinstance(xs, Sequence):
        raise GraphTypeError(
            f"{name}: expected a list or tuple of tensors, got {type(xs).__name__}"
        )
    if not xs:
        raise ShapeError(f"{name}: need at least one input")
    return [as_var(x, context=f"{name}: input {i}") for i, x in enumerate(xs)]


@pattern_function(Concatenate, inputs=("xs*",))
def concatenate(xs: Sequence[Any], axis: int | None = 0) -> Var:
    """The tensors ``xs`` joined along an existing ``axis``, as ``np.concatenate``
    (``axis=None`` flattens them first). Dtypes promote as in NumPy.

    Raises:
        ShapeError: the inputs differ in rank or in a static length off ``axis``.

    Example:
        >>> x, y = rt.vector("x", shape=(2,)), rt.vector("y", shape=(3,))
        >>> rt.concatenate([x, y]).type.shape
        (5,)
    """
    xs = _sequence("concatenate", xs)
    if axis is None:
        xs, axis = [flatten(x) for x in xs], 0
    if xs[0].ndim == 0:
        raise ShapeError(
            f"concatenate: 0-d inputs cannot be concatenated (input {short_name(xs[0])})"
        )
    axis = axis_index("concatenate", axis, xs[0].ndim, xs[0])
    if len(xs) == 1:
        return xs[0]
    return Concatenate(axis)(*xs)


@pattern_function()
def stack(xs: Sequence[Any], axis: int = 0) -> Var:
    """The tensors ``xs``, all of one shape, joined along a new ``axis``, as ``np.stack``.

    Raises:
        ShapeError: the inputs differ in rank or in a static length.

    Example:
        >>> x, y = rt.vector("x", shape=(3,)), rt.vector("y")
        >>> rt.stack([x, y], axis=-1).type.shape
        (3, 2)
    """
    xs = _sequence("stack", xs)
    for position, x in enumerate(xs[1:], start=1):
        if not x.type.is_compatible(x.type.with_shape(xs[0].type.shape)):
            raise ShapeError(
                f"stack: all inputs must have one shape, but input {position} "
                f"({short_name(x)}) has shape {shape_str(x.type.shape)} and input 0 "
                f"({short_name(xs[0])}) {shape_str(xs[0].type.shape)}"
            )
    axis = axis_index("stack", axis, xs[0].ndim + 1, xs[0])
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis)
