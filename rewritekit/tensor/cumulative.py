"""Running reductions: cumsum, cumprod and logcumsumexp along one axis, or over the
flattened input."""

from __future__ import annotations

import typing

import numpy as np

from rewritekit.ir import Grads, TensorType, Var, Vars, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.aggregates import ReductionBase, accumulate_dtype, flip
from rewritekit.tensor.axes import axis_param, is_int, normalize_axis
from rewritekit.tensor.elemwise import equal, exp, float_dtype, greater, log, logical_and, where
from rewritekit.tensor.shapes import reshape, shape


class Cumulative(ReductionBase):
    """A running reduction along ``axis``; ``None`` runs over the flattened input (1-d
    result). The dtype is sum's: bool and narrow ints accumulate in (u)int64."""

    abstract = True

    __props__ = ("axis",)

    axis: int | None

    def __init__(self, axis: int | None = None) -> None:
        super().__init__(axis_param(self.name, axis))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        if self.axis is None:
            known = None not in x.shape
            shape: tuple[int | None, ...] = (int(np.prod(x.shape)) if known else None,)
        else:
            self._check_axes(x, (self.axis,))
            shape = x.shape
        return (TensorType(accumulate_dtype(x.dtype), shape),)


class Cumsum(Cumulative):
    """x[0], x[0] + x[1], ... along ``axis``."""

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # x[i] is in every sum from i on: the cotangents summed from the end
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        if self.axis is None:
            return [reshape(_reverse_cumsum(g, 0), shape(x))]
        return [_reverse_cumsum(g, self.axis)]


class Cumprod(Cumulative):
    """x[0], x[0] * x[1], ... along ``axis``."""

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        if self.axis is None:
            flat = reshape(x, (-1,))
            return [reshape(_cumprod_grad(flat, out, g, 0), shape(x))]
        return [_cumprod_grad(x, out, g, self.axis)]


class Cumlogsumexp(Cumulative):
    """log(exp(x[0])), log(exp(x[0]) + exp(x[1])), ... along ``axis``, without overflow
    (each step a ``logaddexp``); float results, as ``logsumexp``."""

    name = "logcumsumexp"
    kinds = "biuf"

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (out,) = super().infer_types(*input_types)
        return (TensorType(float_dtype(input_types[0].dtype), out.shape),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        if self.axis is None:
            flat = reshape(x, (-1,))
            return [reshape(_logcumsumexp_grad(flat, out, g, 0), shape(x))]
        return [_logcumsumexp_grad(x, out, g, self.axis)]


def _logcumsumexp_grad(x: Var, out: Var, g: Var, axis: int) -> Var:
    """sum_{j >= i} g[j] exp(x[i] - out[j]) along ``axis``, in log space.

    Every exp(x[i] - out[j]) is at most 1 (out[j] sums x[i] in), so the sum is taken as
    exp(x[i] + log sum_{j >= i} g[j] exp(-out[j])), for the positive and the negative
    cotangents apart, the inner sums by a reversed logcumsumexp: nothing overflows.
    """
    parts = []
    for sign in (1, -1):
        positive = greater(sign * g, 0)
        log_g = where(positive, log(where(positive, sign * g, 1)), -np.inf)
        tail = flip(logcumsumexp(flip(log_g - out, axis), axis), axis)
        parts.append(exp(x + tail))
    return parts[0] - parts[1]


def _reverse_cumsum(x: Var, axis: int) -> Var:
    """x[i] + x[i + 1] + ... along ``axis``: the transpose of ``cumsum``."""
    return flip(cumsum(flip(x, axis), axis), axis)


def _cumprod_grad(x: Var, out: Var, g: Var, axis: int) -> Var:
    """sum_{j >= i} g[j] * d out[j] / d x[i] along ``axis``, exact where x has zeros.

    d out[j] / d x[i] (j >= i) is the product of x[:j + 1] without x[i]: out[j] / x[i]
    before the first zero of the line; at the first zero, the running product with that
    zero read as 1; after it, 0 (the first zero is among the factors).
    """
    zero = equal(x, 0)
    seen = cumsum(zero, axis)
    before = equal(seen, 0)
    first = logical_and(zero, equal(seen, 1))
    # where(before) on both sides: no division by the zeros in the untaken branch
    head = _reverse_cumsum(g * out, axis) / where(before, x, 1)
    at_zero = _reverse_cumsum(g * cumprod(where(first, 1, x), axis), axis)
    return where(before, head, where(first, at_zero, 0))


def _cumulative(cls: type[Cumulative], x: typing.Any, axis: typing.Any) -> Var:
    x = as_var(x, context=f"{cls.name}: input 0")
    if x.ndim == 0 and is_int(axis) and axis in (0, -1):
        axis = None  # NumPy treats a 0-d input as 1-d here
    return cls(normalize_axis(cls.name, axis, x))(x)


@pattern_function(Cumsum)
def cumsum(x: typing.Any, axis: int | None = None) -> Var:
    """Running sums along ``axis``; None runs over the flattened input. Dtypes as ``sum``.

    Example:
        >>> cumsum(rt.tensor("x", shape=(2, 3))).type.shape
        (6,)
    """
    return _cumulative(Cumsum, x, axis)


@pattern_function(Cumprod)
def cumprod(x: typing.Any, axis: int | None = None) -> Var:
    """Running products along ``axis``; None runs over the flattened input.

    Example:
        >>> cumprod(rt.matrix("x"), axis=0).type.shape
        (None, None)
    """
    return _cumulative(Cumprod, x, axis)


@pattern_function(Cumlogsumexp)
def logcumsumexp(x: typing.Any, axis: int | None = None) -> Var:
    """Running log-sum-exps along ``axis``: ``log(cumsum(exp(x)))`` without its overflow
    (PyTensor's ``logcumsumexp``, ``jax.lax.cumlogsumexp``); None runs over the flattened
    input. Float results.

    Example:
        >>> logcumsumexp(rt.vector("x")).type.shape
        (None,)
    """
    return _cumulative(Cumlogsumexp, x, axis)


__all__ = ["cumprod", "cumsum", "logcumsumexp"]
