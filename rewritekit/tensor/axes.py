"""Axis and shape arguments: NumPy's ``axis`` conventions checked once, with errors that
name the function and the input, for every family that takes axes or static shapes."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Var, short_name
from rewritekit.ir.types import shape_str as shape_str  # re-exported for the Op modules

__all__: list[str] = []  # helpers for the Op modules; nothing user-facing

StaticShape = tuple[int | None, ...]


def is_int(value: object) -> bool:
    """A Python or NumPy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def axis_index(name: str, axis: Any, ndim: int, x: Var) -> int:
    """``axis`` (negative allowed) as a non-negative int below ``ndim`` (the input's, or a
    result's for ``expand_dims``/``stack``)."""
    if not is_int(axis):
        raise GraphTypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ShapeError(
            f"{name}: axis {axis} is out of range for a {ndim}-d "
            f"{'input' if ndim == x.ndim else 'result'} (input {short_name(x)})"
        )
    return int(axis) % ndim


def axis_indices(name: str, axis: Any, ndim: int, x: Var) -> tuple[int, ...]:
    """An int or a sequence of ints as non-negative axes, in the given order, no repeats."""
    if is_int(axis):
        axis = (axis,)
    if not isinstance(axis, (tuple, list)):
        raise GraphTypeError(f"{name}: axis must be an int or a tuple of ints, got {axis!r}")
    axes = tuple(axis_index(name, a, ndim, x) for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: repeated axis in {tuple(axis)} (input {short_name(x)})")
    return axes


def _bad_axis(name: str, axis: object, expected: str) -> GraphTypeError:
    return GraphTypeError(f"{name}: axis must be {expected}, got {axis!r}")


def _check_axis(name: str, axis: int, x: Var) -> int:
    """``axis`` as a non-negative int, or a ShapeError naming the input."""
    if not -x.ndim <= axis < x.ndim:
        raise ShapeError(
            f"{name}: axis {axis} is out of range for a {x.ndim}-d input (input {short_name(x)})"
        )
    return int(axis) % x.ndim


def normalize_axes(name: str, axis: Any, x: Var) -> tuple[int, ...]:
    """NumPy's ``axis`` argument of a reduction as a sorted tuple of non-negative ints
    (``None``: all axes).

    Raises:
        GraphTypeError: ``axis`` is not an int, a sequence of ints or None.
        ShapeError: an axis is out of range for ``x`` or repeated.

    Example:
        >>> normalize_axes("sum", -1, rt.matrix("x"))
        (1,)
    """
    if axis is None:
        return tuple(range(x.ndim))
    if is_int(axis):
        return (_check_axis(name, axis, x),)
    if not isinstance(axis, (tuple, list)) or not builtins.all(is_int(a) for a in axis):
        raise _bad_axis(name, axis, "an int, a tuple of ints or None")
    axes = [_check_axis(name, a, x) for a in axis]
    for position, a in enumerate(axes):
        if a in axes[:position]:
            raise ShapeError(
                f"{name}: axis {axis[position]} is repeated in axis={tuple(axis)} for a "
                f"{x.ndim}-d input (input {short_name(x)})"
            )
    return tuple(sorted(axes))


def normalize_axis(name: str, axis: Any, x: Var) -> int | None:
    """NumPy's single ``axis`` argument (an int or None) as a non-negative int or None."""
    if axis is None:
        return None
    if not is_int(axis):
        raise _bad_axis(name, axis, "an int or None")
    return _check_axis(name, axis, x)


def axes_param(name: str, axis: Iterable[int]) -> tuple[int, ...]:
    """An Op's ``axis`` parameter: distinct non-negative ints, sorted."""
    try:
        axes = tuple(axis)
    except TypeError:
        raise _bad_axis(name, axis, "a tuple of non-negative ints") from None
    if not builtins.all(is_int(a) and a >= 0 for a in axes) or len(set(axes)) != len(axes):
        raise _bad_axis(
            name, axis, f"a tuple of distinct non-negative ints (rt.{name} normalizes axes)"
        )
    return tuple(sorted(int(a) for a in axes))


def axis_param(name: str, axis: int | None) -> int | None:
    """An Op's single ``axis`` parameter: a non-negative int or None."""
    if axis is None:
        return None
    if not is_int(axis) or axis < 0:
        raise _bad_axis(name, axis, f"a non-negative int or None (rt.{name} normalizes axes)")
    return int(axis)
