"""The reductions proper: sum, prod, max, min, all, any, mean, argmax and argmin, with the
base classes and helpers the other modules of the reduction family share."""

from __future__ import annotations

import typing
from collections.abc import Iterable
from typing import ClassVar

import numpy as np

from rewritekit.errors import DTypeError, ShapeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import axes_param, axis_param, normalize_axes, normalize_axis
from rewritekit.tensor.creation import ones_like
from rewritekit.tensor.elemwise import cast, equal, float_dtype, maximum
from rewritekit.tensor.shapes import broadcast_to, concatenate, expand_dims, shape, shape_i

_KIND_NAMES = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}


def accumulate_dtype(dtype: str) -> str:
    """NumPy's dtype for sum/prod: bool and narrow ints widen to 64 bits."""
    kind = np.dtype(dtype).kind
    if kind in "bi" and np.dtype(dtype).itemsize < 8:
        return "int64"
    if kind == "u" and np.dtype(dtype).itemsize < 8:
        return "uint64"
    return dtype


class ReductionBase(Op):
    """Shared dtype check of the Ops of the reduction family.

    Class attributes:
        kinds: the NumPy dtype kinds the Op accepts; other inputs are rejected.
    """

    abstract = True

    kinds: ClassVar[str] = "biufc"

    def _check_kind(self, x: TensorType) -> None:
        if x.kind not in self.kinds:
            expected = ", ".join(_KIND_NAMES[k] for k in self.kinds)
            raise DTypeError(
                f"{self.name}: input has dtype {x.dtype}, which {self.name} does not support "
                f"(expected one of the kinds {expected})"
            )

    def _check_axes(self, x: TensorType, axes: tuple[int, ...]) -> None:
        for a in axes:
            if a >= x.ndim:
                raise ShapeError(f"{self.name}: axis {a} is out of range for a {x.ndim}-d input")

    def _check_nonempty(self, x: TensorType, axes: tuple[int, ...]) -> None:
        # NumPy raises at run time for a reduction without identity over nothing; a length
        # known to be 0 fails at construction instead.
        for a in axes:
            if x.shape[a] == 0:
                raise ShapeError(
                    f"{self.name}: cannot reduce over axis {a} of length 0 (shape "
                    f"{x.shape}): {self.name} of nothing is undefined"
                )


def reduced_shape(
    shape: tuple[int | None, ...], axes: tuple[int, ...], keepdims: bool
) -> tuple[int | None, ...]:
    """``shape`` without ``axes`` (with them as length 1 where ``keepdims``)."""
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


class Reduce(ReductionBase):
    """A reduction over the axes ``axis`` (a sorted tuple of non-negative ints).

    With ``keepdims`` the reduced axes stay, with length 1. Subclasses give
    ``output_dtype``; ``needs_data`` marks reductions without an identity (max, min), which
    reject an axis of static length 0.
    """

    abstract = True

    __props__ = ("axis", "keepdims")
    needs_data: ClassVar[bool] = False

    axis: tuple[int, ...]
    keepdims: bool

    def __init__(self, axis: Iterable[int], keepdims: bool = False) -> None:
        super().__init__(axes_param(self.name, axis), bool(keepdims))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        self._check_axes(x, self.axis)
        if self.needs_data:
            self._check_nonempty(x, self.axis)
        shape = reduced_shape(x.shape, self.axis, self.keepdims)
        return (TensorType(self.output_dtype(x.dtype), shape),)

    def output_dtype(self, dtype: str) -> str:
        """The result's dtype for an input of ``dtype``."""
        return dtype


def reduce(
    cls: type[Reduce], x: typing.Any, axis: typing.Any, keepdims: bool, **params: typing.Any
) -> Var:
    """``cls`` over NumPy's ``axis`` argument, normalized against ``x``."""
    x = as_var(x, context=f"{cls.name}: input 0")
    return cls(normalize_axes(cls.name, axis, x), keepdims=keepdims, **params)(x)


# --- gradient helpers -----------------------------------------------------------------------


def keep_axes(v: Var, axes: tuple[int, ...], keepdims: bool) -> Var:
    """A reduction's result (or cotangent) with the reduced axes back, as length 1."""
    return v if keepdims or not axes else expand_dims(v, axes)


def count(x: Var, axes: tuple[int, ...], dtype: str) -> Var:
    """The number of elements each slice over ``axes`` holds, as a scalar of ``dtype``."""
    n: typing.Any = 1
    for a in axes:
        n = n * shape_i(x, a)
    return cast(as_var(n, context="count"), dtype)


def along(axis: int, entry: slice) -> tuple[slice, ...]:
    """An index taking ``entry`` on ``axis`` and everything on the axes before it."""
    return (slice(None),) * axis + (entry,)


def flip(x: Var, axis: int) -> Var:
    """``x`` reversed along ``axis``."""
    return x[along(axis, slice(None, None, -1))]


def _exclusive_cumprod(x: Var, axis: int) -> Var:
    """x[0] * ... * x[i - 1] along ``axis`` (1 at i = 0), without dividing by x[i]."""
    # x[:1] (not a literal length 1) so that an empty axis stays empty; the method
    # x.cumprod, as rt.cumprod lives above this module
    first = ones_like(x[along(axis, slice(None, 1))])
    return concatenate([first, x.cumprod(axis)[along(axis, slice(None, -1))]], axis=axis)


def _product_of_others(x: Var, axes: tuple[int, ...]) -> Var:
    """The product over ``axes`` of every element but x itself, exact when x has zeros.

    Axis by axis from the last: the others on x's own line (left and right exclusive
    products), times the others among the lines' products over the axes done so far.
    """
    others = None
    for a in reversed(axes):
        line = _exclusive_cumprod(x, a) * flip(_exclusive_cumprod(flip(x, a), a), a)
        others = line if others is None else others * line
        x = prod(x, axis=a, keepdims=True)
    return others


# --- reductions ---------------------------------------------------------------------------


class Sum(Reduce):
    """The sum over ``axis``; bool and narrow ints accumulate in (u)int64. Empty sum: 0."""

    def output_dtype(self, dtype: str) -> str:
        return accumulate_dtype(dtype)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # each input element contributes once: g broadcast back over the reduced axes
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        return [broadcast_to(keep_axes(g, self.axis, self.keepdims), shape(x))]


class Prod(Reduce):
    """The product over ``axis``; bool and narrow ints accumulate in (u)int64. Empty: 1."""

    def output_dtype(self, dtype: str) -> str:
        return accumulate_dtype(dtype)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d prod / dx_i = the product of the others (not prod / x_i, which fails at zeros)
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = keep_axes(g, self.axis, self.keepdims)
        return [g * _product_of_others(x, self.axis) if self.axis else g]


class Extreme(Reduce):
    """``max`` or ``min`` over ``axis``: the gradient goes to the elements equal to it."""

    abstract = True

    kinds = "biuf"
    needs_data = True

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # as JAX: g shared equally by the elements equal to the result. A slice holding
        # NaN has none (NaN != NaN) and gets 0, as jax.jit(jax.grad) gives (XLA turns JAX's
        # mask * (g / 0) into a select); eager JAX gives NaN there
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        hit = cast(equal(x, keep_axes(out, self.axis, self.keepdims)), x.dtype)
        ties = maximum(sum(hit, axis=self.axis, keepdims=True), 1)
        return [keep_axes(g, self.axis, self.keepdims) * hit / ties]


class Max(Extreme):
    """The largest element over ``axis``; NaN if any is NaN. Domain: non-empty axes."""


class Min(Extreme):
    """The smallest element over ``axis``; NaN if any is NaN. Domain: non-empty axes."""


class All(Reduce):
    """True where every element over ``axis`` is true (nonzero). Empty: True."""

    differentiable = False

    def output_dtype(self, dtype: str) -> str:
        return "bool"


class Any(Reduce):
    """True where some element over ``axis`` is true (nonzero). Empty: False."""

    differentiable = False

    def output_dtype(self, dtype: str) -> str:
        return "bool"


class Mean(Reduce):
    """sum(x) / n over ``axis``; integers and bool compute in float64. Empty: NaN."""

    def output_dtype(self, dtype: str) -> str:
        return float_dtype(dtype)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d mean / dx_i = 1 / n
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = keep_axes(g, self.axis, self.keepdims) / count(x, self.axis, g.dtype)
        return [broadcast_to(g, shape(x))]


class ArgReduce(ReductionBase):
    """The int64 index of an extreme element along ``axis`` (``None``: of the flattened
    input). Ties and NaN: the first occurrence wins, as in NumPy."""

    abstract = True

    __props__ = ("axis", "keepdims")
    kinds = "biuf"
    differentiable = False

    axis: int | None
    keepdims: bool

    def __init__(self, axis: int | None = None, keepdims: bool = False) -> None:
        super().__init__(axis_param(self.name, axis), bool(keepdims))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        axes = tuple(range(x.ndim)) if self.axis is None else (self.axis,)
        self._check_axes(x, axes)
        self._check_nonempty(x, axes)
        shape = reduced_shape(x.shape, axes, self.keepdims)
        return (TensorType("int64", shape),)


class Argmax(ArgReduce):
    """The index of the largest element (of the first NaN, if any)."""


class Argmin(ArgReduce):
    """The index of the smallest element (of the first NaN, if any)."""


# --- user functions -------------------------------------------------------------------------


@pattern_function(Sum)
def sum(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The sum over ``axis`` (an int, a tuple of ints, or None for all axes).

    Bool and integers narrower than 64 bits sum in int64 (uint64 for unsigned), as in NumPy.

    Example:
        >>> str(sum(rt.matrix("x", dtype="int32"), axis=0).type)
        'int64[?]'
    """
    return reduce(Sum, x, axis, keepdims)


@pattern_function(Prod)
def prod(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The product over ``axis``; dtypes as ``sum``.

    Example:
        >>> prod(rt.tensor("x", shape=(2, 3)), axis=-1, keepdims=True).type.shape
        (2, 1)
    """
    return reduce(Prod, x, axis, keepdims)


@pattern_function(Max)
def max(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The largest element over ``axis``, in x's dtype; NaN propagates (NumPy's ``max``).

    Example:
        >>> max(rt.tensor("x", shape=(2, 3)), axis=(0, 1)).type.shape
        ()
    """
    return reduce(Max, x, axis, keepdims)


@pattern_function(Min)
def min(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The smallest element over ``axis``, in x's dtype; NaN propagates.

    Example:
        >>> min(rt.vector("x", dtype="int8")).dtype
        'int8'
    """
    return reduce(Min, x, axis, keepdims)


@pattern_function(All)
def all(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """True where every element over ``axis`` is nonzero (bool result).

    Example:
        >>> all(rt.matrix("x"), axis=1).dtype
        'bool'
    """
    return reduce(All, x, axis, keepdims)


@pattern_function(Any)
def any(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """True where some element over ``axis`` is nonzero (bool result).

    Example:
        >>> any(rt.matrix("x"), axis=None).type.shape
        ()
    """
    return reduce(Any, x, axis, keepdims)


@pattern_function(Mean)
def mean(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The mean over ``axis``; integers and bool give float64, floats keep their dtype.

    Example:
        >>> mean(rt.vector("x", dtype="int32")).dtype
        'float64'
    """
    return reduce(Mean, x, axis, keepdims)


def _arg(cls: type[ArgReduce], x: typing.Any, axis: typing.Any, keepdims: bool) -> Var:
    x = as_var(x, context=f"{cls.name}: input 0")
    axis = normalize_axis(cls.name, axis, x)
    if x.ndim == 1:
        axis = 0  # the flattened input is the input: one node for both spellings
    return cls(axis, keepdims)(x)


@pattern_function(Argmax)
def argmax(x: typing.Any, axis: int | None = None, keepdims: bool = False) -> Var:
    """The int64 index of the largest element along ``axis`` (None: of the flattened input).

    Example:
        >>> str(argmax(rt.tensor("x", shape=(2, 3)), axis=1).type)
        'int64[2]'
    """
    return _arg(Argmax, x, axis, keepdims)


@pattern_function(Argmin)
def argmin(x: typing.Any, axis: int | None = None, keepdims: bool = False) -> Var:
    """The int64 index of the smallest element along ``axis`` (None: of the flattened input).

    Example:
        >>> str(argmin(rt.matrix("x")).type)
        'int64[]'
    """
    return _arg(Argmin, x, axis, keepdims)


__all__ = ["all", "any", "argmax", "argmin", "max", "mean", "min", "prod", "sum"]
