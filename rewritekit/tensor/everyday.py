"""NumPy's (and PyTensor's) everyday conveniences, built from the other families' functions
(no Ops of their own): ``isclose allclose atleast_1d atleast_2d atleast_3d take
broadcast_arrays broadcast_shapes identity_like eye_like``.

Example:
    >>> x = rt.vector("x")
    >>> rt.isclose(x, 1.0).dtype, rt.atleast_2d(x).type.shape
    ('bool', (1, None))
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, Var, as_var
from rewritekit.ir import broadcast_shapes as static_broadcast
from rewritekit.ir.nodes import short_name
from rewritekit.tensor.aggregates import all as all_
from rewritekit.tensor.axes import axis_index, is_int
from rewritekit.tensor.creation import eye
from rewritekit.tensor.elemwise import (
    abs,
    cast,
    clip,
    equal,
    float_dtype,
    isfinite,
    isnan,
    less_equal,
    logical_and,
    logical_or,
    mod,
    where,
)
from rewritekit.tensor.layout import broadcast_to, expand_dims, flatten
from rewritekit.tensor.shape_vectors import shape_i
from rewritekit.tensor.subtensor import getitem

__all__ = [
    "allclose",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_shapes",
    "eye_like",
    "identity_like",
    "isclose",
    "take",
]

_NUMBERS = (builtins.bool, int, float, complex)


def _input(name: str, label: str | int, value: Any) -> Var:
    """``value`` as a Var; an error names the function and the input (by name or position)."""
    shown = repr(label) if isinstance(label, str) else str(label)
    return as_var(value, context=f"{name}: input {shown}")


# --- comparisons ------------------------------------------------------------------------


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Var:
    """Where ``a`` and ``b`` are equal within a tolerance, as ``np.isclose``:
    ``|a - b| <= atol + rtol * |b|`` (not symmetric: ``b`` is the reference), or ``a == b``
    (equal infinities); NaN is close to NaN only with ``equal_nan``. ``b`` computes in a
    float dtype (integers in float64); Python numbers are weak, so ``isclose(x32, 1.0)``
    compares in float32.

    Raises:
        GraphTypeError: an input is not a tensor or number, or ``equal_nan`` is not a bool.

    Example:
        >>> rt.isclose(rt.vector("x"), 0.0).dtype
        'bool'
    """
    if not isinstance(equal_nan, (builtins.bool, np.bool_)):
        raise GraphTypeError(f"isclose: equal_nan must be a bool, got {equal_nan!r}")
    x = a if isinstance(a, _NUMBERS) else _input("isclose", "a", a)
    y = b if isinstance(b, _NUMBERS) else _input("isclose", "b", b)
    if isinstance(y, Var):
        y = cast(y, float_dtype(y.dtype))
    elif not isinstance(y, complex):
        y = float(y)
    if not isinstance(x, Var) and not isinstance(y, Var):
        x = _input("isclose", "a", x)
    difference = abs(x - y)
    close = logical_and(less_equal(difference, atol + rtol * abs(y)), isfinite(y))
    result = logical_or(close, equal(x, y))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(x), isnan(y)))
    return result


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Var:
    """Whether every element of ``a`` is close to ``b`` (``isclose``), a bool scalar, as
    ``np.allclose``.

    Example:
        >>> rt.allclose(rt.vector("x"), rt.vector("y")).type.shape
        ()
    """
    return all_(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


# --- ranks ------------------------------------------------------------------------------


def _at_least(name: str, arys: tuple[Any, ...], axes: dict[int, tuple[int, ...]]) -> Any:
    """Each input with the length-1 axes ``axes[ndim]`` inserted; one result for one input,
    a tuple for several (NumPy 2)."""
    out = []
    for position, value in enumerate(arys):
        x = _input(name, position, value)
        out.append(expand_dims(x, axes[x.ndim]) if x.ndim in axes else x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: Any) -> Any:
    """Each input with at least one axis: a scalar becomes shape (1,), as ``np.atleast_1d``
    (one input gives one Var, several a tuple).

    Example:
        >>> rt.atleast_1d(rt.scalar("s")).type.shape
        (1,)
    """
    return _at_least("atleast_1d", arys, {0: (0,)})


def atleast_2d(*arys: Any) -> Any:
    """Each input with at least two axes: () -> (1, 1), (N,) -> (1, N), as
    ``np.atleast_2d``.

    Example:
        >>> rt.atleast_2d(rt.vector("x", shape=(3,))).type.shape
        (1, 3)
    """
    return _at_least("atleast_2d", arys, {0: (0, 1), 1: (0,)})


def atleast_3d(*arys: Any) -> Any:
    """Each input with at least three axes: () -> (1, 1, 1), (N,) -> (1, N, 1),
    (M, N) -> (M, N, 1), as ``np.atleast_3d``.

    Example:
        >>> rt.atleast_3d(rt.matrix("m", shape=(2, 3))).type.shape
        (2, 3, 1)
    """
    return _at_least("atleast_3d", arys, {0: (0, 1, 2), 1: (0, 2), 2: (2,)})


# --- indexing ---------------------------------------------------------------------------

_TAKE_MODES = ("raise", "wrap", "clip", "fill")


def take(
    a: Any, indices: Any, axis: int | None = None, mode: str = "raise", fill_value: Any = None
) -> Var:
    """The elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when
    ``axis`` is None), as ``np.take``: the result has shape
    ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``.

    ``mode`` says what an index outside ``[-n, n)`` does, the same on every backend:
    ``"raise"`` (NumPy's default): a compiled function raises ``rk.GraphIndexError``;
    ``"wrap"`` takes it modulo n; ``"clip"`` clips it to ``[0, n - 1]`` (a negative index
    becomes 0, as ``np.take`` and ``jnp.take``); ``"fill"`` (``jnp.take``'s default) reads
    ``fill_value`` (by default NaN for floats, the smallest value for signed integers, the
    largest for unsigned ones, True for bools). A negative index in ``[-n, 0)`` counts from
    the end in every mode but ``"clip"``.

    Raises:
        GraphTypeError: ``mode`` is not one of the four, or ``axis`` is not an int.
        DTypeError: ``indices`` are not integers.
        ShapeError: ``axis`` is out of range.

    Example:
        >>> rt.take(rt.matrix("m", shape=(4, 3)), [0, 2, 2], axis=1).type.shape
        (4, 3)
    """
    if mode not in _TAKE_MODES:
        raise GraphTypeError(f"take: mode must be 'raise', 'wrap', 'clip' or 'fill', got {mode!r}")
    x = _input("take", "a", a)
    index = _input("take", "indices", indices)
    if index.type.kind not in "iu":
        raise DTypeError(
            f"take: indices must be integers, got dtype {index.dtype} (input 'indices'); "
            "cast them with rt.astype or use rt.where for a mask"
        )
    if axis is None:
        x, axis = flatten(x), 0
    if x.ndim == 0:
        raise ShapeError(f"take: expected an input with at least one axis, got {x.type}")
    axis = axis_index("take", axis, x.ndim, x)
    if mode in ("wrap", "clip"):
        n = shape_i(x, axis)
        index = mod(index, n) if mode == "wrap" else clip(index, 0, n - 1)
    # wrapped and clipped indices lie in the axis: no check ("clip" also covers n = 0)
    checked = {"raise": "raise", "fill": "fill"}.get(mode, "clip")
    return getitem(x, (slice(None),) * axis + (index,), checked, fill_value)


# --- broadcasting -----------------------------------------------------------------------


def _shape_entries(name: str, position: int, shape: Any) -> list[Any]:
    """A shape argument as a list of lengths (Python ints, or int64 scalar Vars)."""
    label = f"{name}: shape {position}"
    if is_int(shape):
        shape = (shape,)
    if isinstance(shape, Var):
        if shape.ndim != 1 or shape.type.kind not in "iu" or shape.type.shape[0] is None:
            raise GraphTypeError(
                f"{label} must be a tuple of ints or an int vector of static length, got "
                f"{shape.type}"
            )
        if isinstance(shape, Constant):
            return [int(d) for d in shape.data]
        return [getitem(shape, i) for i in range(shape.type.shape[0])]
    if not isinstance(shape, (tuple, list)):
        raise GraphTypeError(f"{label} must be a tuple of ints, got {shape!r}")
    entries = []
    for d in shape:
        if is_int(d):
            entries.append(int(d))
        elif isinstance(d, Var) and d.ndim == 0 and d.type.kind in "iu":
            entries.append(int(d.data) if isinstance(d, Constant) else d)
        else:
            raise GraphTypeError(f"{label}: a length must be an int or an int scalar, got {d!r}")
    if any(isinstance(d, int) and d < 0 for d in entries):
        raise ShapeError(f"{label} has a negative length: {tuple(shape)!r}")
    return entries


def _broadcast(name: str, shapes: Sequence[list[Any]], names: Any = None) -> tuple[Any, ...]:
    """NumPy's broadcast of shapes whose lengths are ints or scalar Vars: the static lengths
    are checked now; a symbolic length that meets another gives ``where(d == 1, other, d)``
    (checked where the result is used, e.g. by ``broadcast_to``)."""
    static = [tuple(d if isinstance(d, int) else None for d in s) for s in shapes]
    result = static_broadcast(*static, op=name, names=names)
    ndim = len(result)
    out: list[Any] = []
    for axis in range(-ndim, 0):
        length: Any = 1
        for shape in shapes:
            d = shape[axis] if len(shape) >= -axis else 1
            if isinstance(length, int) and length == 1:
                length = d
            elif isinstance(d, int):
                if d != 1:
                    length = d  # a static length wins (the other must be 1 or equal)
            elif isinstance(length, Var) and d is not length:
                length = where(equal(length, 1), d, length)
        out.append(length)
    return tuple(out)


def broadcast_shapes(*shapes: Any) -> tuple[Any, ...]:
    """The shape that ``shapes`` broadcast to, as ``np.broadcast_shapes``: a tuple of Python
    ints when every length is static; symbolic lengths (int scalar Vars, or the entries of
    an int vector such as ``x.shape``) give int64 scalar Vars in their places, usable as a
    shape by ``rt.broadcast_to``, ``rt.zeros`` or ``rt.reshape``.

    Raises:
        BroadcastError: two static lengths differ and neither is 1.
        GraphTypeError: a shape is not a tuple of ints, an int, or an int vector.

    Example:
        >>> rt.broadcast_shapes((3, 1), (4,))
        (3, 4)
    """
    entries = [_shape_entries("broadcast_shapes", i, s) for i, s in enumerate(shapes)]
    return _broadcast("broadcast_shapes", entries)


def _lengths(x: Var) -> list[Any]:
    return [d if d is not None else shape_i(x, axis) for axis, d in enumerate(x.type.shape)]


def broadcast_arrays(*args: Any) -> tuple[Var, ...]:
    """The inputs broadcast against each other, as ``np.broadcast_arrays`` (a tuple; an
    input that already has the common static shape is returned as it is).

    Raises:
        BroadcastError: the static shapes do not broadcast (naming the inputs).

    Example:
        >>> x, y = rt.broadcast_arrays(rt.vector("x", shape=(3,)), rt.scalar("s"))
        >>> y.type.shape
        (3,)
    """
    xs = [_input("broadcast_arrays", i, a) for i, a in enumerate(args)]
    names = [x.name for x in xs]
    shape = _broadcast("broadcast_arrays", [_lengths(x) for x in xs], names)
    return tuple(broadcast_to(x, shape) for x in xs)


# --- creation ---------------------------------------------------------------------------


def eye_like(x: Any, k: Any = 0, dtype: Any = None) -> Var:
    """Ones on the ``k``-th diagonal of a matrix of ``x``'s shape (and dtype unless
    ``dtype`` is given), zeros elsewhere: ``rt.eye(n, m, k)`` for a 2-d ``x`` of shape
    (n, m), whose lengths may be symbolic.

    Raises:
        ShapeError: ``x`` is not 2-d.

    Example:
        >>> rt.eye_like(rt.matrix("m", shape=(2, 3)), k=1).type
        TensorType(dtype='float64', shape=(2, 3))
    """
    x = _input("eye_like", "x", x)
    if x.ndim != 2:
        raise ShapeError(f"eye_like: expected a 2-d input, got {x.type} (input {short_name(x)})")
    n, m = _lengths(x)
    return eye(n, m, k, dtype=x.dtype if dtype is None else dtype)


def identity_like(x: Any, dtype: Any = None) -> Var:
    """The identity matrix of ``x``'s shape (and dtype unless ``dtype`` is given), as
    PyTensor's ``identity_like``: ``eye_like(x)``.

    Raises:
        ShapeError: ``x`` is not 2-d.

    Example:
        >>> rt.identity_like(rt.matrix("m", shape=(3, 3), dtype="float32")).type
        TensorType(dtype='float32', shape=(3, 3))
    """
    x = _input("identity_like", "x", x)
    if x.ndim != 2:
        raise ShapeError(
            f"identity_like: expected a 2-d input, got {x.type} (input {short_name(x)})"
        )
    return eye_like(x, 0, dtype)
