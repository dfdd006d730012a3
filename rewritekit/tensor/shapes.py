"""Shapes and the Ops that move axes and elements without computing anything.

Static shapes travel with every Op here: an Op whose result shape depends on the *values*
of a shape argument (``Reshape``, ``BroadcastTo``, ``creation.Alloc``) takes the shape as
an int64 vector input (run-time values) and also holds, as a parameter, the static shape
those values imply (an int where the entry is known when the graph is built, ``None``
elsewhere), since ``infer_types`` sees only types.

Shape arguments are turned into int64 vectors by ``as_shape_vector`` (Python ints, int
scalar Vars, or an int vector Var) and read back statically by ``static_shape_of``; both
are shared with ``creation``. ``rt.shape(x)`` is a constant when every length of ``x`` is
static, so arithmetic on it folds when the graph is built or, under the JAX backend, while
tracing (the ``Shape`` node's JAX value is concrete).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, Op, TensorType, Var, as_var, constant, result_dtype, short_name
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.elemwise import cast

__all__ = [
    "broadcast_to",
    "concatenate",
    "expand_dims",
    "flatten",
    "moveaxis",
    "reshape",
    "shape",
    "shape_i",
    "size",
    "squeeze",
    "stack",
    "swapaxes",
    "transpose",
]

StaticShape = tuple[int | None, ...]


# --- helpers ----------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _shape_str(shape: Sequence[int | None]) -> str:
    entries = ["?" if d is None else str(d) for d in shape]
    return "(" + ", ".join(entries) + ("," if len(entries) == 1 else "") + ")"


def _input(name: str, x: Any) -> Var:
    return as_var(x, context=f"{name}: input 'x'")


def _axis(name: str, axis: Any, ndim: int, x: Var) -> int:
    """``axis`` (negative allowed) as a non-negative int below ``ndim``."""
    if not _is_int(axis):
        raise GraphTypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(
            f"{name}: axis {axis} is out of range for a {ndim}-d "
            f"{'input' if ndim == x.ndim else 'result'} (input {short_name(x)})"
        )
    return int(axis) % ndim


def _axes(name: str, axis: Any, ndim: int, x: Var) -> tuple[int, ...]:
    """An int or a sequence of ints as non-negative axes, in the given order, no repeats."""
    if _is_int(axis):
        axis = (axis,)
    if not isinstance(axis, (tuple, list)):
        raise GraphTypeError(f"{name}: axis must be an int or a tuple of ints, got {axis!r}")
    axes = tuple(_axis(name, a, ndim, x) for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: repeated axis in {tuple(axis)} (input {short_name(x)})")
    return axes


def _check_shape_input(name: str, vector: TensorType, length: int) -> None:
    """The shape input of an Op: an integer vector with ``length`` entries."""
    if vector.kind not in "iu":
        raise DTypeError(f"{name}: the shape must be an integer vector, got dtype {vector.dtype}")
    if vector.shape != (length,):
        raise ShapeError(f"{name}: the shape must be a vector of length {length}, got {vector}")


def _grad_for(g: Var, x: Var) -> Var | None:
    """A cotangent already shaped like ``x`` as ``x``'s gradient: cast to its dtype; None
    for an integer or bool ``x`` (no gradient)."""
    if x.type.kind not in "fc":
        return None
    return g if g.dtype == x.dtype else cast(g, x.dtype)


def _static_param(name: str, shape: Any, allow_minus_one: bool = False) -> StaticShape:
    """An Op's static-shape parameter: a tuple of ints (>= 0, or -1) and None."""
    entries = tuple(None if d is None else int(d) if _is_int(d) else d for d in shape)
    low = -1 if allow_minus_one else 0
    if not all(d is None or (isinstance(d, int) and d >= low) for d in entries):
        raise GraphTypeError(
            f"{name}: static shape entries must be ints >= {low} or None, got {shape!r}"
        )
    return entries


# --- symbolic shapes --------------------------------------------------------------------


class Shape(Op):
    """The shape of ``x``: an int64 vector with ``x.ndim`` entries."""

    differentiable = False

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        return (TensorType("int64", (x.ndim,)),)


class ShapeI(Op):
    """``x.shape[axis]``, an int64 scalar (``axis`` is non-negative)."""

    __props__ = ("axis",)
    name = "shape_i"
    differentiable = False

    def __init__(self, axis: int) -> None:
        if not _is_int(axis) or axis < 0:
            raise GraphTypeError(f"shape_i: axis must be a non-negative int, got {axis!r}")
        super().__init__(int(axis))

    def infer_types(self, x: TensorType) -> tuple[TensorType, ...]:
        if self.axis >= x.ndim:
            raise ShapeError(f"shape_i: axis {self.axis} is out of range for a {x.ndim}-d input")
        return (TensorType("int64", ()),)


class MakeVector(Op):
    """Integer scalars stacked into an int64 vector: the shape ``(n, 3)`` as a Var."""

    differentiable = False

    def infer_types(self, *scalars: TensorType) -> tuple[TensorType, ...]:
        for position, t in enumerate(scalars):
            if t.ndim != 0:
                raise ShapeError(f"make_vector: input {position} must be a scalar, got {t}")
            if t.kind not in "iu":
                raise DTypeError(
                    f"make_vector: input {position} must be an integer, got dtype {t.dtype}"
                )
        return (TensorType("int64", (len(scalars),)),)


@pattern_function(Shape)
def shape(x: Any) -> Var:
    """The shape of ``x`` as an int64 vector; a constant when every length is static.

    Example:
        >>> rt.shape(rt.tensor("x", shape=(2, 3))).data
        array([2, 3])
    """
    x = _input("shape", x)
    if None not in x.type.shape:
        return constant(np.array(x.type.shape, dtype=np.int64))
    return _SHAPE(x)


_SHAPE = Shape()  # shape() is called for every gradient of an unknown-length input


@pattern_function(ShapeI)
def shape_i(x: Any, axis: int) -> Var:
    """``x.shape[axis]`` as an int64 scalar; a constant when that length is static.

    Example:
        >>> rt.shape_i(rt.tensor("x", shape=(2, None)), 0).data
        array(2)
    """
    x = _input("shape_i", x)
    axis = _axis("shape_i", axis, x.ndim, x)
    length = x.type.shape[axis]
    if length is not None:
        return constant(np.int64(length))
    return ShapeI(axis)(x)


@pattern_function()
def size(x: Any) -> Var:
    """The number of elements of ``x``, an int64 scalar: a constant when it is static,
    otherwise the product of the lengths (static ones multiplied in as one constant).

    Example:
        >>> rt.size(rt.tensor("x", shape=(2, 3))).data
        array(6)
    """
    x = _input("size", x)
    static = math.prod(d for d in x.type.shape if d is not None)
    unknown = [axis for axis, d in enumerate(x.type.shape) if d is None]
    if not unknown or static == 0:
        return constant(np.int64(static))
    result = ShapeI(unknown[0])(x)
    for axis in unknown[1:]:
        result = result * ShapeI(axis)(x)
    return result if static == 1 else result * static


def as_shape_vector(parts: Any, context: str) -> Var:
    """A shape argument as an int64 vector Var.

    Args:
        parts: a Python int, a tuple or list of Python ints and integer scalar Vars, or an
            integer vector Var (a 0-d integer Var counts as a one-entry shape).
        context: the caller's name, used in error messages (e.g. ``"reshape"``).

    Returns:
        A constant when every entry is known, else a ``MakeVector`` node (or the vector).

    Raises:
        GraphTypeError: an entry is not an integer or an integer Var.
        DTypeError: a Var entry is not of an integer dtype.
        ShapeError: a Var is not a scalar or vector, or a vector's length is not static.

    Example:
        >>> n = rt.scalar("n", dtype="int64")
        >>> as_shape_vector((n, 3), "reshape").type
        TensorType(dtype='int64', shape=(2,))
    """
    if isinstance(parts, np.ndarray) and parts.ndim <= 1 and parts.dtype.kind in "iu":
        parts = parts.tolist()
    if _is_int(parts):
        parts = (parts,)
    if isinstance(parts, Var):
        return _vector_var(parts, context)
    if not isinstance(parts, (tuple, list)):
        raise GraphTypeError(
            f"{context}: a shape must be an int, a tuple of ints and int scalars, or an int "
            f"vector, got {type(parts).__name__} {parts!r}"
        )
    entries = [_shape_entry(p, position, context) for position, p in enumerate(parts)]
    if all(isinstance(e, int) for e in entries):
        return constant(np.array(entries, dtype=np.int64).reshape(len(entries)))
    return MakeVector()(*[constant(np.int64(e)) if isinstance(e, int) else e for e in entries])


def _vector_var(var: Var, context: str) -> Var:
    if var.type.kind not in "iu":
        raise DTypeError(f"{context}: a shape must have an integer dtype, got {var.type}")
    if var.ndim == 0:
        return as_shape_vector((var,), context)
    if var.ndim != 1 or var.type.shape[0] is None:
        raise ShapeError(
            f"{context}: a shape vector must be 1-d with a static length (the result's "
            f"rank), got {var.type}"
        )
    if isinstance(var, Constant):
        return constant(var.data.astype(np.int64))
    return cast(var, "int64")


def _shape_entry(part: Any, position: int, context: str) -> int | Var:
    if _is_int(part):
        return int(part)
    if isinstance(part, np.ndarray) and part.ndim == 0 and part.dtype.kind in "iu":
        return int(part)
    if isinstance(part, Var):
        if part.type.kind not in "iu" or part.ndim != 0:
            raise DTypeError(
                f"{context}: shape entry {position} must be an integer scalar, got {part.type}"
            )
        return int(part.data) if isinstance(part, Constant) else part
    raise GraphTypeError(
        f"{context}: shape entry {position} must be an int or an integer scalar Var, "
        f"got {type(part).__name__} {part!r}"
    )


def static_shape_of(vector: Var) -> StaticShape:
    """The static shape an int64 shape vector implies: ints where known, else None.

    Entries are known for a constant, for the constant entries of a ``MakeVector``, and
    for the static lengths of ``x`` in ``rt.shape(x)``.

    Example:
        >>> static_shape_of(as_shape_vector((rt.scalar("n", dtype="int64"), 3), "f"))
        (None, 3)
    """
    if isinstance(vector, Constant):
        return tuple(int(d) for d in vector.data)
    owner = vector.owner
    if owner is not None and isinstance(owner.op, MakeVector):
        return tuple(int(i.data) if isinstance(i, Constant) else None for i in owner.inputs)
    if owner is not None and isinstance(owner.op, Shape):
        return owner.inputs[0].type.shape
    return (None,) * vector.type.shape[0]


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
            f"{name}: cannot reshape an input of shape {_shape_str(source)} ({count} "
            f"elements) into shape {_shape_str(target)}"
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
        entries = _static_param(self.name, shape, allow_minus_one=True)
        if entries.count(-1) > 1:
            raise ShapeError(f"reshape: at most one -1 is allowed, got {_shape_str(entries)}")
        super().__init__(entries)

    def infer_types(self, x: TensorType, vector: TensorType) -> tuple[TensorType, ...]:
        _check_shape_input(self.name, vector, len(self.shape))
        return (x.with_shape(_resolve_reshape(self.name, x.shape, self.shape)),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # the same elements in the same order: lay g out in x's shape again
        (x, _), (g,) = inputs, cotangents
        return [_grad_for(reshape(g, shape(x)), x), None]


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
    x = _input("reshape", x)
    vector = as_shape_vector(shape, "reshape")
    target = static_shape_of(vector)
    if any(d is not None and d < -1 for d in target) or target.count(-1) > 1:
        raise ShapeError(
            f"reshape: the shape {_shape_str(target)} must have lengths >= 0 and at most "
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
    x = _input("flatten", x)
    return x if x.ndim == 1 else reshape(x, (-1,))


class BroadcastTo(Op):
    """``x`` broadcast to ``shape`` by NumPy's rules (a read-only view in NumPy).

    Inputs: ``x`` and the int64 shape vector; ``shape`` (the parameter) is its static
    shape (None where an entry is known only at run time).
    """

    __props__ = ("shape",)

    def __init__(self, shape: Any) -> None:
        super().__init__(_static_param(self.name, shape))

    def infer_types(self, x: TensorType, vector: TensorType) -> tuple[TensorType, ...]:
        _check_shape_input(self.name, vector, len(self.shape))
        target = self.shape
        if x.ndim > len(target):
            raise BroadcastError(
                f"broadcast_to: cannot broadcast a {x.ndim}-d input of shape "
                f"{_shape_str(x.shape)} to the {len(target)}-d shape {_shape_str(target)}"
            )
        out: list[int | None] = list(target)
        for axis in range(1, x.ndim + 1):
            have, want = x.shape[-axis], target[-axis]
            if want is None:
                out[-axis] = have if have is not None and have != 1 else None
            elif have is not None and have not in (1, want):
                raise BroadcastError(
                    f"broadcast_to: cannot broadcast shape {_shape_str(x.shape)} to "
                    f"{_shape_str(target)} (axis {x.ndim - axis} has length {have})"
                )
        return (x.with_shape(out),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # each element of x is copied to every position it was broadcast to: sum them back
        (x, _), (g,) = inputs, cotangents
        return [input_grad(g, x), None]


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
    x = _input("broadcast_to", x)
    vector = as_shape_vector(shape, "broadcast_to")
    target = static_shape_of(vector)
    check_nonnegative("broadcast_to", target)
    if None not in target and target == x.type.shape:
        return x
    return BroadcastTo(target)(x, vector)


def check_nonnegative(name: str, shape: StaticShape) -> None:
    """Raise a ShapeError naming ``name`` when a static length is negative."""
    if any(d is not None and d < 0 for d in shape):
        raise ShapeError(f"{name}: negative dimensions are not allowed, got {_shape_str(shape)}")


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

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # a permutation's transpose is the inverse permutation
        (x,), (g,) = inputs, cotangents
        inverse = tuple(int(a) for a in np.argsort(self.axes))
        return [_grad_for(transpose(g, inverse), x)]


@pattern_function(Transpose)
def transpose(x: Any, axes: Any = None) -> Var:
    """``x`` with its axes permuted (reversed when ``axes`` is None), as ``np.transpose``.

    Example:
        >>> rt.transpose(rt.tensor("x", shape=(2, 3, 4)), (1, 0, 2)).type.shape
        (3, 2, 4)
    """
    x = _input("transpose", x)
    if axes is None:
        perm = tuple(reversed(range(x.ndim)))
    else:
        perm = _axes("transpose", axes, x.ndim, x)
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
    x = _input("swapaxes", x)
    a, b = _axis("swapaxes", axis1, x.ndim, x), _axis("swapaxes", axis2, x.ndim, x)
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
    x = _input("moveaxis", x)
    src = _axes("moveaxis", source, x.ndim, x)
    dst = _axes("moveaxis", destination, x.ndim, x)
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

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # the new axes have length 1: drop them again
        (x,), (g,) = inputs, cotangents
        return [_grad_for(squeeze(g, self.axes), x)]


@pattern_function(ExpandDims)
def expand_dims(x: Any, axis: Any) -> Var:
    """``x`` with length-1 axes inserted at ``axis`` (an int or a tuple, counted in the
    result), as ``np.expand_dims``.

    Example:
        >>> rt.expand_dims(rt.vector("x", shape=(3,)), (0, -1)).type.shape
        (1, 3, 1)
    """
    x = _input("expand_dims", x)
    count = 1 if _is_int(axis) else len(axis) if isinstance(axis, (tuple, list)) else 0
    axes = _axes("expand_dims", axis, x.ndim + count, x)
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
                    f"of shape {_shape_str(x.shape)} (only length-1 axes can be removed)"
                )
        return (x.with_shape(d for a, d in enumerate(x.shape) if a not in self.axes),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # the removed axes had length 1: put them back where they were
        (x,), (g,) = inputs, cotangents
        return [_grad_for(expand_dims(g, self.axes), x)]


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
    x = _input("squeeze", x)
    if axis is None:
        axes = tuple(a for a, d in enumerate(x.type.shape) if d == 1)
    else:
        axes = _axes("squeeze", axis, x.ndim, x)
    if not axes:
        return x
    bad = [a for a in axes if x.type.shape[a] not in (None, 1)]
    if bad:
        raise ShapeError(
            f"squeeze: cannot remove axis {bad[0]} of length {x.type.shape[bad[0]]} "
            f"(input {short_name(x)} has shape {_shape_str(x.type.shape)})"
        )
    return Squeeze(axes)(x)


# --- joining ----------------------------------------------------------------------------


class Concatenate(Op):
    """The inputs joined along ``axis``; their dtypes promote as in NumPy."""

    __props__ = ("axis",)

    def __init__(self, axis: int) -> None:
        if not _is_int(axis) or axis < 0:
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
                        f"concatenate: input {position} has shape {_shape_str(t.shape)}, which "
                        f"does not match {_shape_str(xs[0].shape)} of input 0 on axis {a} "
                        f"(only axis {self.axis} may differ)"
                    )
        return (TensorType(result_dtype(*xs), out),)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.subtensor import getitem

        # each input gets the slice of g it filled along the axis
        (g,) = cotangents
        grads: list[Var | None] = []
        start: int | Var = 0
        for position, x in enumerate(inputs):
            length = x.type.shape[self.axis]
            size = shape_i(x, self.axis) if length is None else length
            stop = size if position == 0 else start + size
            last = position == len(inputs) - 1  # reads the rest of g
            piece = getitem(g, (*[slice(None)] * self.axis, slice(start, None if last else stop)))
            grads.append(_grad_for(piece, x))
            start = stop  # type: ignore[assignment]
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
    axis = _axis("concatenate", axis, xs[0].ndim, xs[0])
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
                f"({short_name(x)}) has shape {_shape_str(x.type.shape)} and input 0 "
                f"({short_name(xs[0])}) {_shape_str(xs[0].type.shape)}"
            )
    axis = _axis("stack", axis, xs[0].ndim + 1, xs[0])
    return concatenate([expand_dims(x, axis) for x in xs], axis=axis)
