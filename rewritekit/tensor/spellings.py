"""PyTensor's own spellings of things NumPy spells otherwise, for code ported from PyMC:
the typed constructors (``dscalar fvector imatrix tensor3 ...``), ``alloc fill join
switch and_ or_ shape_padleft shape_padright shape_padaxis atleast_Nd
specify_broadcastable broadcast_shape shape_tuple get_scalar_constant_value
get_underlying_scalar_constant_value variadic_add variadic_mul batched_dot``, and the
comparison and arithmetic names ``eq neq lt le gt ge mul sub neg true_div sqr
round_half_to_even``. Each builds the graph NumPy's spelling builds (no Ops of their own).

Example:
    >>> x = rt.dvector("x")
    >>> rt.shape_padleft(x).type.shape, rt.switch(rt.gt(x, 0), x, 0.0).dtype
    ((1, None), 'float64')
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Constant, Var, as_var
from rewritekit.ir.nodes import short_name
from rewritekit.tensor.arithmetic import Cast
from rewritekit.tensor.axes import is_int
from rewritekit.tensor.basic import as_tensor, tensor
from rewritekit.tensor.creation import full
from rewritekit.tensor.elemwise import (
    add,
    bitwise_and,
    bitwise_or,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    multiply,
    negative,
    not_equal,
    round,
    square,
    subtract,
    true_divide,
    where,
)
from rewritekit.tensor.everyday import broadcast_shapes
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import broadcast_to, expand_dims
from rewritekit.tensor.products import matmul
from rewritekit.tensor.shape_vectors import ShapeI, shape_i
from rewritekit.tensor.specify import specify_shape

# NumPy's one-letter dtype prefixes of PyTensor's constructors, and their ranks.
_PREFIXES = {
    "b": "int8",
    "w": "int16",
    "i": "int32",
    "l": "int64",
    "f": "float32",
    "d": "float64",
    "c": "complex64",
    "z": "complex128",
}
_RANKS = {
    "scalar": 0,
    "vector": 1,
    "row": 2,
    "col": 2,
    "matrix": 2,
    **{f"tensor{n}": n for n in range(3, 8)},
}
_STATIC = {"row": (1, None), "col": (None, 1)}

__all__ = [
    "alloc",
    "and_",
    "as_tensor_variable",
    "atleast_Nd",
    "batched_dot",
    "broadcast_shape",
    "eq",
    "fill",
    "ge",
    "get_scalar_constant_value",
    "get_underlying_scalar_constant_value",
    "gt",
    "join",
    "le",
    "lt",
    "mul",
    "neg",
    "neq",
    "or_",
    "round_half_to_even",
    "shape_padaxis",
    "shape_padleft",
    "shape_padright",
    "shape_tuple",
    "specify_broadcastable",
    "sqr",
    "sub",
    "switch",
    "true_div",
    "variadic_add",
    "variadic_mul",
    *(f"{p}{rank}" for p in _PREFIXES for rank in _RANKS),
    "tensor3",
    "tensor4",
    "tensor5",
    "tensor6",
    "tensor7",
    "row",
    "col",
]

eq, neq, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal
mul, sub, neg, true_div, sqr = multiply, subtract, negative, true_divide, square
as_tensor_variable = as_tensor
and_, or_ = bitwise_and, bitwise_or  # logical on booleans, bitwise on integers, as PyTensor


def _constructor(dtype: str, rank: str) -> Callable[..., Var]:
    ndim = _RANKS[rank]
    default = _STATIC.get(rank, (None,) * ndim)

    def make(name: str | None = None, shape: Any = None) -> Var:
        return tensor(name, default if shape is None else shape, dtype)

    make.__name__ = make.__qualname__ = rank
    make.__doc__ = f"A new {ndim}-d {dtype} graph input, as PyTensor's constructor of this name."
    return make


for _prefix, _dtype in _PREFIXES.items():
    for _rank in _RANKS:
        globals()[f"{_prefix}{_rank}"] = _constructor(_dtype, _rank)
tensor3, tensor4, tensor5, tensor6, tensor7 = (
    _constructor("float64", f"tensor{n}") for n in range(3, 8)
)
row, col = _constructor("float64", "row"), _constructor("float64", "col")


def switch(cond: Any, ift: Any, iff: Any) -> Var:
    """``ift`` where ``cond`` holds, ``iff`` elsewhere: PyTensor's name for ``where``."""
    return where(cond, ift, iff)


def round_half_to_even(x: Any) -> Var:
    """``x`` rounded to the nearest integer, ties to even (as ``np.round``)."""
    return round(x)


def variadic_add(*args: Any) -> Var:
    """The sum of any number of tensors (0 for none), broadcast together."""
    return functools.reduce(add, args) if args else as_tensor(np.int8(0))


def variadic_mul(*args: Any) -> Var:
    """The product of any number of tensors (1 for none), broadcast together."""
    return functools.reduce(multiply, args) if args else as_tensor(np.int8(1))


def _var(name: str, value: Any, label: str = "x") -> Var:
    return as_var(value, context=f"{name}: input {label!r}")


def alloc(value: Any, *shape: Any) -> Var:
    """``value`` broadcast to ``shape`` (given as separate lengths, ints or int scalars),
    as PyTensor's ``alloc``: ``alloc(0.0, n, 3)`` is ``full((n, 3), 0.0)``.

    Raises:
        ShapeError: ``value`` has more dimensions than ``shape``.
    """
    value = _var("alloc", value, "value")
    if value.ndim > len(shape):
        raise ShapeError(
            f"alloc: the value {short_name(value)} has {value.ndim} dimensions, more than the "
            f"{len(shape)} lengths given"
        )
    return broadcast_to(value, shape)


def fill(model: Any, value: Any) -> Var:
    """``value`` broadcast to the shape of ``model`` (PyTensor's ``fill``; NumPy spells it
    ``full_like(model, value)``), with ``value``'s dtype."""
    model = _var("fill", model, "model")
    value = _var("fill", value, "value")
    return full(shape_tuple(model), value, dtype=value.dtype)


def join(axis: int, *tensors: Any) -> Var:
    """``concatenate(tensors, axis)``, with PyTensor's argument order."""
    if not is_int(axis):
        raise GraphTypeError(
            f"join: the axis comes first and must be an int, got {axis!r} "
            "(join(axis, *tensors), or concatenate(tensors, axis))"
        )
    return concatenate(list(tensors), axis=axis)


def shape_tuple(x: Any) -> tuple[Any, ...]:
    """``x``'s lengths as a tuple: ints where static, int64 scalars elsewhere."""
    x = _var("shape_tuple", x)
    return tuple(n if n is not None else shape_i(x, i) for i, n in enumerate(x.type.shape))


def shape_padleft(x: Any, n_ones: int = 1) -> Var:
    """``x`` with ``n_ones`` new length-1 axes in front."""
    x = _var("shape_padleft", x)
    return expand_dims(x, tuple(range(_count("shape_padleft", n_ones))))


def shape_padright(x: Any, n_ones: int = 1) -> Var:
    """``x`` with ``n_ones`` new length-1 axes at the end."""
    x = _var("shape_padright", x)
    n = _count("shape_padright", n_ones)
    return expand_dims(x, tuple(range(x.ndim, x.ndim + n)))


def shape_padaxis(x: Any, axis: int) -> Var:
    """``x`` with a new length-1 axis at ``axis`` (``expand_dims``)."""
    return expand_dims(_var("shape_padaxis", x), axis)


def _count(name: str, n: Any) -> int:
    if not is_int(n) or n < 0:
        raise GraphTypeError(f"{name}: n_ones must be a non-negative int, got {n!r}")
    return int(n)


def atleast_Nd(x: Any, n: int = 1, left: bool = True) -> Var:
    """``x`` with length-1 axes added in front (``left``) or at the end until it has ``n``
    dimensions."""
    x = _var("atleast_Nd", x)
    missing = max(_count("atleast_Nd", n) - x.ndim, 0)
    return shape_padleft(x, missing) if left else shape_padright(x, missing)


def specify_broadcastable(x: Any, *axes: int) -> Var:
    """``x`` with the given axes of static length 1 (checked at run time, as
    ``specify_shape``).

    Raises:
        ShapeError: an axis is out of range, or already has another static length.
    """
    x = _var("specify_broadcastable", x)
    shape = list(x.type.shape)
    for axis in axes:
        if not is_int(axis) or not -x.ndim <= axis < x.ndim:
            raise ShapeError(
                f"specify_broadcastable: axis {axis!r} is out of range for {short_name(x)} "
                f"({x.type})"
            )
        shape[axis] = 1
    return specify_shape(x, tuple(shape)) if axes else x


def broadcast_shape(*shapes: Any, arrays_are_shapes: bool = False) -> tuple[Any, ...]:
    """The broadcast shape of tensors (or, with ``arrays_are_shapes``, of shapes), as
    PyTensor's ``broadcast_shape``: NumPy's ``broadcast_shapes``."""
    if not arrays_are_shapes:
        shapes = tuple(
            shape_tuple(_var("broadcast_shape", s, str(i))) for i, s in enumerate(shapes)
        )
    return broadcast_shapes(*shapes)


def batched_dot(a: Any, b: Any) -> Var:
    """The matrix products of ``a[i]`` and ``b[i]`` along the first axis (vectors are
    taken as rows, or columns for ``b``), as PyTensor's ``batched_dot``.

    Raises:
        ShapeError: an input has fewer than 2 dimensions.
    """
    a, b = _var("batched_dot", a, "a"), _var("batched_dot", b, "b")
    for label, x in (("a", a), ("b", b)):
        if x.ndim < 2:
            raise ShapeError(
                f"batched_dot: input {label!r} needs a batch axis and at least 1 more, got "
                f"{short_name(x)} ({x.type})"
            )
    a2 = expand_dims(a, 1) if a.ndim == 2 else a
    b2 = expand_dims(b, -1) if b.ndim == 2 else b
    out = matmul(a2, b2)
    if a.ndim == 2:
        out = out[:, 0]
    if b.ndim == 2:
        out = out[..., 0]
    return out


class NotScalarConstantError(GraphTypeError):
    """The value asked for is not a scalar known before run time."""


def get_underlying_scalar_constant_value(v: Any) -> np.ndarray:
    """The value of ``v`` when it is a scalar known before run time: a constant with one
    element, a static length (``shape_i``), or a cast of one, as a 0-d NumPy array.

    Raises:
        NotScalarConstantError: ``v`` is computed at run time.

    Example:
        >>> get_underlying_scalar_constant_value(rt.shape_i(rt.tensor("x", shape=(3,)), 0))
        array(3)
    """
    v = as_var(v, context="get_scalar_constant_value")
    if isinstance(v, Constant) and np.size(v.data) == 1:
        return np.asarray(v.data).reshape(())
    owner = v.owner
    if owner is not None and isinstance(owner.op, ShapeI):
        length = owner.inputs[0].type.shape[owner.op.axis]
        if length is not None:
            return np.asarray(length, dtype=v.dtype)
    if owner is not None and isinstance(owner.op, Cast):
        return get_underlying_scalar_constant_value(owner.inputs[0]).astype(v.dtype)
    raise NotScalarConstantError(
        f"get_scalar_constant_value: {short_name(v)} ({v.type}) is not a scalar known before "
        "run time"
    )


get_scalar_constant_value = get_underlying_scalar_constant_value
