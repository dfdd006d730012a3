"""The Ops that move elements and axes without computing anything: ``reshape``,
``broadcast_to``, ``transpose`` (and ``swapaxes``, ``moveaxis``), ``expand_dims`` and
``squeeze``.

An Op whose result shape depends on the *values* of a shape argument (``Reshape``,
``BroadcastTo``) takes the shape as an int64 vector input (run-time values) and also
holds, as a parameter, the static shape those values imply (an int where the entry is
known when the graph is built, ``None`` elsewhere), since ``infer_types`` sees only types.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewritekit.errors import BroadcastError, ShapeError
from rewritekit.ir import Constant, Grads, Op, TensorType, Var, Vars, as_var, constant, short_name
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import StaticShape, axis_index, axis_indices, is_int, shape_str
from rewritekit.tensor.shape_vectors import (
    as_shape_vector,
    check_nonnegative,
    check_shape_input,
    shape,
    static_param,
    static_shape_of,
)

__all__ = [
    "broadcast_to",
    "expand_dims",
    "flatten",
    "moveaxis",
    "reshape",
    "squeeze",
    "swapaxes",
    "transpose",
]


# --- reshape and broadcast_to -----------------------------------------------------------


def _resolve_reshape(name: str, source: StaticShape, target: StaticShape) -> StaticShape:
    """The static result of reshaping ``source`` to ``target`` (-1: inferred length).

    An unknown entry (-1 or None) is resolved when it is the only one and the input's
    size is static; a static size mismatch raises.
    """
    known = math.prod(d for d in target if d is not None and d != -1)
    unknown = [axis for axis, d in enumerate(target) if d is None or d == -1]
    if None in source:
        return tuple(None if d == -1 else d for d in target)
    count = math.prod(source)  # type: ignore[arg-type]
    fits = count == known if not unknown else (known != 0 and count % known == 0)
    if known == 0 and unknown and count == 0 and -1 not in target:
        fits = True  # e.g. (0,) into (n, 0): any n
    if not fits:
        raise ShapeError(
            f"{name}: cannot reshape an input of shape {shape_str(source)} ({count} "
            f"elements) into shape {shape_str(target)}"
        )
    if len(unknown) == 1 and known != 0:
        return tuple(count // known if d is None or d == -1 else d for d in target)
    return tuple(None if d == -1 else d for d in target)


class Reshape(Op):
    """``x`` with its elements (in C order) laid out in ``shape``.

    Inputs: ``x`` and the int64 shape vector. ``shape`` (the parameter) is the static
    shape the vector implies: an int per known entry, ``-1`` for NumPy's inferred length,
    ``None`` for an entry known only at run time.
    """

    __props__ = ("shape",)

    def __init__(self, shape: Any) -> None:
        entries = static_param(self.name, shape, allow_minus_one=True)
        if entries.count(-1) > 1:
            raise ShapeError(f"reshape: at most one -1 is allowed, got {shape_str(entries)}")
        super().__init__(entries)

    def infer_types(self, x: TensorType, vector: TensorType) -> tuple[TensorType, ...]:
        check_shape_input(self.name, vector, len(self.shape))
        return (x.with_shape(_resolve_reshape(self.name, x.shape, self.shape)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # the same elements in the same order: lay g out in x's shape again
        return [reshape(cotangents[0], shape(inputs[0])), None]


@pattern_function(Reshape, inputs=("x", "shape"))
def reshape(x: Any, shape: Any) -> Var:
    """``x`` with the same elements in another shape (C order), as ``np.reshape``.

    ``shape`` may mix Python ints and integer scalar Vars, or be an integer vector Var;
    one entry may be ``-1`` (the length that keeps the size). Lengths are resolved
    statically where the input's size and the other entries are static.

    Raises:
        ShapeError: more than one -1, a negative length, or a size that cannot match.

    Example:
        >>> rt.reshape(rt.tensor("x", shape=(2, 3)), (-1,)).type
        TensorType(dtype='float64', shape=(6,))
    """
    x = as_var(x, context="reshape: input 'x'")
    vector = as_shape_vector(shape, "reshape")
    target = static_shape_of(vector)
    if any(d is not None and d < -1 for d in target) or target.count(-1) > 1:
        raise ShapeError(
            f"reshape: the shape {shape_str(target)} must have lengths >= 0 and at most "
            f"one -1 (input {short_name(x)})"
        )
    try:
        result = _resolve_reshape("reshape", x.type.shape, target)
    except ShapeError as exc:
        raise ShapeError(f"{exc} (input {short_name(x)})") from None
    if None not in result:
        if result == x.type.shape:
            return x
        if -1 in target and isinstance(vector, Constant):
            target, vector = result, constant(np.array(result, dtype=np.int64))
    return Reshape(target)(x, vector)


@pattern_function(Reshape)
def flatten(x: Any) -> Var:
    """``x`` as a 1-d tensor (C order); a 1-d ``x`` itself.

    Example:
        >>> rt.flatten(rt.tensor("x", shape=(2, 3))).type.shape
        (6,)
    """
    x = as_var(x, context="flatten: input 'x'")
    return x if x.ndim == 1 else reshape(x, (-1,))


class BroadcastTo(Op):
    """``x`` broadcast to ``shape`` by NumPy's rules (a read-only view in NumPy).

    Inputs: ``x`` and the int64 shape vector; ``shape`` (the parameter) is its static
    shape (None where an entry is known only at run time).
    """

    __props__ = ("shape",)
    broadcasts = True

    def __init__(self, shape: Any) -> None:
        super().__init__(static_param(self.name, shape))

    def infer_types(self, x: TensorType, vector: TensorType) -> tuple[TensorType, ...]:
        check_shape_input(self.name, vector, len(self.shape))
        target = self.shape
        if x.ndim > len(target):
            raise BroadcastError(
                f"broadcast_to: cannot broadcast a {x.ndim}-d input of shape "
                f"{shape_str(x.shape)} to the {len(target)}-d shape {shape_str(target)}"
            )
        out: list[int | None] = list(target)
        for axis in range(1, x.ndim + 1):
            have, want = x.shape[-axis], target[-axis]
            if want is None:
                out[-axis] = have if have is not None and have != 1 else None
            elif have is not None and have not in (1, want):
                raise BroadcastError(
                    f"broadcast_to: cannot broadcast shape {shape_str(x.shape)} to "
                    f"{shape_str(target)} (axis {x.ndim - axis} has length {have})"
                )
        return (x.with_shape(out),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # each element of x is copied to every position it was broadcast to: the
        # differentiator sums them back
        return [cotangents[0], None]


@pattern_function(BroadcastTo, inputs=("x", "shape"))
def broadcast_to(x: Any, shape: Any) -> Var:
    """``x`` broadcast to ``shape``, as ``np.broadcast_to``; ``x`` itself if it already
    has that static shape.

    Raises:
        BroadcastError: the static shapes do not broadcast.
        ShapeError: a static length is negative.

    Example:
        >>> rt.broadcast_to(rt.vector("x", shape=(3,)), (2, 3)).type.shape
        (2, 3)
    """
    x = as_var(x, context="broadcast_to: input 'x'")
    vector = as_shape_vector(shape, "broadcast_to")
    target = static_shape_of(vector)
    check_nonnegative("broadcast_to", target)
    if None not in target and target == x.type.shape:
        return x
    return BroadcastTo(target)(x, vector)


# --- axes -------------------------------------------------------------------------------


class Transpose(Op):
    """``x`` with its axes permuted: result axis i is input axis ``axes[i]``."""

    __props__ = ("axes",)

    def __init__(self, axes: Any) -> None:
        super().__init__(tuple(int(a) for a in axes))

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        if sorted(self.axes) != list(range(x.ndim)):
            raise ShapeError(
                f"transpose: axes {self.axes} are not a permutation of the {x.ndim} axes"
            )
        return (x.with_shape(x.shape[a] for a in self.axes),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # a permutation's transpose is the inverse permutation
        return [transpose(cotangents[0], tuple(int(a) for a in np.argsort(self.axes)))]


@pattern_function(Transpose)
def transpose(x: Any, axes: Any = None) -> Var:
    """``x`` with its axes permuted (reversed when ``axes`` is None), as ``np.transpose``.

    Example:
        >>> rt.transpose(rt.tensor("x", shape=(2, 3, 4)), (1, 0, 2)).type.shape
        (3, 2, 4)
    """
    x = as_var(x, context="transpose: input 'x'")
    if axes is None:
        perm = tuple(reversed(range(x.ndim)))
    else:
        perm = axis_indices("transpose", axes, x.ndim, x)
        if len(perm) != x.ndim:
            raise ShapeError(
                f"transpose: axes {tuple(axes)} are not a permutation of the {x.ndim} axes "
                f"of the input (input {short_name(x)})"
            )
    return x if perm == tuple(range(x.ndim)) else Transpose(perm)(x)


@pattern_function(Transpose)
def swapaxes(x: Any, axis1: int, axis2: int) -> Var:
    """``x`` with two axes interchanged, as ``np.swapaxes``.

    Example:
        >>> rt.swapaxes(rt.tensor("x", shape=(2, 3, 4)), 0, -1).type.shape
        (4, 3, 2)
    """
    x = as_var(x, context="swapaxes: input 'x'")
    a, b = axis_index("swapaxes", axis1, x.ndim, x), axis_index("swapaxes", axis2, x.ndim, x)
    perm = list(range(x.ndim))
    perm[a], perm[b] = b, a
    return transpose(x, perm)


@pattern_function(Transpose)
def moveaxis(x: Any, source: Any, destination: Any) -> Var:
    """``x`` with the axes ``source`` moved to positions ``destination``, as ``np.moveaxis``.

    Example:
        >>> rt.moveaxis(rt.tensor("x", shape=(2, 3, 4)), 0, -1).type.shape
        (3, 4, 2)
    """
    x = as_var(x, context="moveaxis: input 'x'")
    src = axis_indices("moveaxis", source, x.ndim, x)
    dst = axis_indices("moveaxis", destination, x.ndim, x)
    if len(src) != len(dst):
        raise ShapeError(
            f"moveaxis: source {source!r} and destination {destination!r} must have the "
            f"same number of axes (input {short_name(x)})"
        )
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, order)


class ExpandDims(Op):
    """``x`` with new length-1 axes at the positions ``axes`` of the result."""

    __props__ = ("axes",)

    def __init__(self, axes: Any) -> None:
        super().__init__(tuple(sorted(int(a) for a in axes)))

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        ndim = x.ndim + len(self.axes)
        if any(a >= ndim for a in self.axes):
            raise ShapeError(f"expand_dims: axes {self.axes} out of range for a {ndim}-d result")
        rest = iter(x.shape)
        return (x.with_shape(1 if a in self.axes else next(rest) for a in range(ndim)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # the new axes have length 1: drop them again
        return [squeeze(cotangents[0], self.axes)]


@pattern_function(ExpandDims)
def expand_dims(x: Any, axis: Any) -> Var:
    """``x`` with length-1 axes inserted at ``axis`` (an int or a tuple, counted in the
    result), as ``np.expand_dims``.

    Example:
        >>> rt.expand_dims(rt.vector("x", shape=(3,)), (0, -1)).type.shape
        (1, 3, 1)
    """
    x = as_var(x, context="expand_dims: input 'x'")
    count = 1 if is_int(axis) else len(axis) if isinstance(axis, (tuple, list)) else 0
    axes = axis_indices("expand_dims", axis, x.ndim + count, x)
    return ExpandDims(axes)(x) if axes else x


class Squeeze(Op):
    """``x`` without the axes ``axes``, each of which must have length 1."""

    __props__ = ("axes",)

    def __init__(self, axes: Any) -> None:
        super().__init__(tuple(sorted(int(a) for a in axes)))

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        for a in self.axes:
            if a >= x.ndim:
                raise ShapeError(f"squeeze: axis {a} is out of range for a {x.ndim}-d input")
            if x.shape[a] not in (None, 1):
                raise ShapeError(
                    f"squeeze: cannot remove axis {a} of length {x.shape[a]} from an input "
                    f"of shape {shape_str(x.shape)} (only length-1 axes can be removed)"
                )
        return (x.with_shape(d for a, d in enumerate(x.shape) if a not in self.axes),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # the removed axes had length 1: put them back where they were
        return [expand_dims(cotangents[0], self.axes)]


@pattern_function(Squeeze)
def squeeze(x: Any, axis: Any = None) -> Var:
    """``x`` without length-1 axes, as ``np.squeeze``.

    With ``axis=None`` only the axes *statically known* to have length 1 are removed (an
    axis of unknown length is kept, even if it is 1 at run time, since the result's rank
    must be known). An explicit ``axis`` of unknown length is checked at run time.

    Raises:
        ShapeError: an explicit axis has a static length other than 1.

    Example:
        >>> rt.squeeze(rt.tensor("x", shape=(1, None, 1)), axis=0).type.shape
        (None, 1)
    """
    x = as_var(x, context="squeeze: input 'x'")
    if axis is None:
        axes = tuple(a for a, d in enumerate(x.type.shape) if d == 1)
    else:
        axes = axis_indices("squeeze", axis, x.ndim, x)
    if not axes:
        return x
    bad = [a for a in axes if x.type.shape[a] not in (None, 1)]
    if bad:
        raise ShapeError(
            f"squeeze: cannot remove axis {bad[0]} of length {x.type.shape[bad[0]]} "
            f"(input {short_name(x)} has shape {shape_str(x.type.shape)})"
        )
    return Squeeze(axes)(x)
