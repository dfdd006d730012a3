"""Shapes as Vars: ``rt.shape``, ``rt.shape_i``, ``rt.size`` and the int64 shape vectors
that the Ops taking a shape argument read.

Shape arguments are turned into int64 vectors by ``as_shape_vector`` (Python ints, int
scalar Vars, or an int vector Var) and read back statically by ``static_shape_of``; both
are shared with ``creation``. ``rt.shape(x)`` is a constant when every length of ``x`` is
static, so arithmetic on it folds when the graph is built or, under the JAX backend, while
tracing (the ``Shape`` node's JAX value is concrete).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, Op, TensorType, Var, as_var, constant
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import StaticShape, axis_index, is_int, shape_str
from rewritekit.tensor.elemwise import cast

__all__ = ["shape", "shape_i", "size"]


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
        if not is_int(axis) or axis < 0:
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
    x = as_var(x, context="shape: input 'x'")
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
    x = as_var(x, context="shape_i: input 'x'")
    axis = axis_index("shape_i", axis, x.ndim, x)
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
    x = as_var(x, context="size: input 'x'")
    static = math.prod(d for d in x.type.shape if d is not None)
    unknown = [axis for axis, d in enumerate(x.type.shape) if d is None]
    if not unknown or static == 0:
        return constant(np.int64(static))
    result = ShapeI(unknown[0])(x)
    for axis in unknown[1:]:
        result = result * ShapeI(axis)(x)
    return result if static == 1 else result * static


# --- shape arguments ----------------------------------------------------------------------


def lengths(x: Var) -> list[int | Var]:
    """``x``'s lengths: an int where static, else ``shape_i(x, axis)`` (what a shape
    argument of ``reshape``/``broadcast_to`` takes)."""
    return [n if n is not None else shape_i(x, axis) for axis, n in enumerate(x.type.shape)]


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
    if is_int(parts):
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
        key = tuple(entries)
        found = _STATIC_VECTORS.get(key)
        if found is None:
            if len(_STATIC_VECTORS) >= _STATIC_VECTORS_LIMIT:
                _STATIC_VECTORS.clear()
            found = constant(np.array(entries, dtype=np.int64).reshape(len(entries)))
            _STATIC_VECTORS[key] = found
        return found
    return MakeVector()(*[constant(np.int64(e)) if isinstance(e, int) else e for e in entries])


#: Static shapes' vectors by their lengths: every reshape and broadcast_to makes one, and the
#: constant (interned anyway) costs a copy and a hash of its bytes to find again.
_STATIC_VECTORS: dict[tuple[int, ...], Var] = {}
_STATIC_VECTORS_LIMIT = 1 << 12


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
    if is_int(part):
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


def static_param(name: str, shape: Any, allow_minus_one: bool = False) -> StaticShape:
    """An Op's static-shape parameter: a tuple of ints (>= 0, or -1) and None."""
    entries = tuple(None if d is None else int(d) if is_int(d) else d for d in shape)
    low = -1 if allow_minus_one else 0
    if not all(d is None or (isinstance(d, int) and d >= low) for d in entries):
        raise GraphTypeError(
            f"{name}: static shape entries must be ints >= {low} or None, got {shape!r}"
        )
    return entries


def check_shape_input(name: str, vector: TensorType, length: int) -> None:
    """The shape input of an Op: an integer vector with ``length`` entries."""
    if vector.kind not in "iu":
        raise DTypeError(f"{name}: the shape must be an integer vector, got dtype {vector.dtype}")
    if vector.shape != (length,):
        raise ShapeError(f"{name}: the shape must be a vector of length {length}, got {vector}")


def check_nonnegative(name: str, shape: StaticShape) -> None:
    """Raise a ShapeError naming ``name`` when a static length is negative."""
    if any(d is not None and d < 0 for d in shape):
        raise ShapeError(f"{name}: negative dimensions are not allowed, got {shape_str(shape)}")
