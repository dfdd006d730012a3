"""Sorting: ``sort`` and ``argsort`` along one axis (``axis=None``: the flattened input).

Both are stable (NumPy's ``kind="stable"``; JAX's sort is stable), so ``argsort`` gives
equal elements in their original order in every backend. NaN sorts last; -0.0 and 0.0 are
equal (a tie). Complex inputs are rejected (NumPy would order them lexicographically).

``x.sort()`` and ``x.argsort()`` call these functions. Unlike NumPy's ``ndarray.sort``,
which sorts in place and returns None, ``x.sort()`` returns a new Var (graphs are
immutable) and ``x`` is unchanged.
"""

from __future__ import annotations

import math
from typing import Any

from rewritekit.errors import DTypeError, ShapeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import axis_param, normalize_axis
from rewritekit.tensor.creation import arange
from rewritekit.tensor.searching import argwhere, nonzero
from rewritekit.tensor.shapes import expand_dims, reshape, shape, shape_i

__all__ = ["argsort", "argwhere", "nonzero", "sort"]


class SortBase(Op):
    """A sort along ``axis`` (a non-negative int), or of the flattened input (``None``)."""

    abstract = True

    __props__ = ("axis",)

    axis: int | None

    def __init__(self, axis: int | None = None) -> None:
        super().__init__(axis_param(self.name, axis))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        if x.kind not in "biuf":
            raise DTypeError(
                f"{self.name}: input has dtype {x.dtype}, which {self.name} does not support "
                "(expected bool, int, uint or float)"
            )
        if self.axis is None:
            size = None if None in x.shape else math.prod(x.shape)  # type: ignore[arg-type]
            out: tuple[int | None, ...] = (0 if 0 in x.shape else size,)
        elif self.axis >= x.ndim:
            raise ShapeError(
                f"{self.name}: axis {self.axis} is out of range for a {x.ndim}-d input"
            )
        else:
            out = x.shape
        return (TensorType(self.output_dtype(x.dtype), out),)

    def output_dtype(self, dtype: str) -> str:
        """The result's dtype for an input of ``dtype``."""
        return dtype


class Sort(SortBase):
    """The elements sorted ascending along ``axis`` (stable; NaN last)."""

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # out[j] = x[perm[j]] with perm the stable argsort (the permutation JAX's sort
        # moves tangents by, ties included), so grad[i] = g[inverse[i]], inverse = argsort(perm)
        (x,), (g,) = inputs, cotangents
        if self.axis is None:
            flat = reshape(x, (-1,))
            inverse = Argsort(0)(Argsort(0)(flat))
            return [reshape(g[inverse], shape(x))]
        inverse = Argsort(self.axis)(Argsort(self.axis)(x))
        return [_take_along_axis(g, inverse, self.axis)]


class Argsort(SortBase):
    """The int64 indices that sort along ``axis`` (stable: ties keep their order)."""

    differentiable = False

    def output_dtype(self, dtype: str) -> str:
        return "int64"


def _take_along_axis(x: Var, index: Var, axis: int) -> Var:
    """``np.take_along_axis(x, index, axis)`` for an ``index`` of x's shape."""

    def grid(k: int) -> Var:  # 0, 1, ... along axis k, length 1 along the others
        others = tuple(a for a in range(x.ndim) if a != k)
        return expand_dims(arange(shape_i(x, k)), others)

    return x[tuple(index if k == axis else grid(k) for k in range(x.ndim))]


def _axis(name: str, axis: Any, x: Var) -> int | None:
    """NumPy's ``axis`` normalized; None (flatten) on a 1-d input is axis 0."""
    if axis is None:
        return 0 if x.ndim == 1 else None
    try:
        return normalize_axis(name, axis, x)
    except ShapeError as exc:
        raise ShapeError(f"{exc}; use axis=None to sort the flattened input") from None


@pattern_function(Sort)
def sort(x: Any, axis: int | None = -1) -> Var:
    """A sorted copy of ``x`` along ``axis`` (``None``: flattened), as ``np.sort`` with
    ``kind="stable"``. ``x.sort(axis)`` is the same and, unlike NumPy's in-place method,
    returns the new Var.

    Raises:
        ShapeError: ``axis`` is out of range (a 0-d input needs ``axis=None``).
        DTypeError: ``x`` is complex.

    Example:
        >>> rt.sort(rt.matrix("x", shape=(2, 3)), axis=None).type
        TensorType(dtype='float64', shape=(6,))
    """
    v = as_var(x, context="sort: input 0")
    return Sort(_axis("sort", axis, v))(v)


@pattern_function(Argsort)
def argsort(x: Any, axis: int | None = -1) -> Var:
    """The int64 indices that sort ``x`` along ``axis`` (``None``: flattened), as
    ``np.argsort`` with ``kind="stable"``: equal elements keep their order.

    Example:
        >>> rt.argsort(rt.vector("x")).dtype
        'int64'
    """
    v = as_var(x, context="argsort: input 0")
    return Argsort(_axis("argsort", axis, v))(v)
