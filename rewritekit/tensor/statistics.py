"""Statistics and normalizers over axes: var, std, logsumexp, softmax and log_softmax, all
computed in floating point."""

from __future__ import annotations

import typing
from collections.abc import Iterable

import numpy as np

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, as_var
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.aggregates import Reduce, ReductionBase, count, keep_axes, mean, reduce, sum
from rewritekit.tensor.axes import axes_param, is_int, normalize_axes
from rewritekit.tensor.elemwise import abs, equal, exp, float_dtype, square, where

_REAL = {"complex64": "float32", "complex128": "float64"}


def _ddof_param(name: str, ddof: typing.Any) -> int | float:
    if is_int(ddof):
        return int(ddof)
    if isinstance(ddof, (float, np.floating)):
        return int(ddof) if float(ddof).is_integer() else float(ddof)
    raise GraphTypeError(f"{name}: ddof must be a number, got {ddof!r}")


class Variance(Reduce):
    """sum(|x - mean(x)|**2) / (n - ddof) over ``axis``; the result is real.

    ``ddof`` (delta degrees of freedom) is 0 for the population variance, 1 for the
    unbiased estimate. Integers and bool compute in float64.
    """

    __props__ = ("axis", "ddof", "keepdims")
    name = "var"

    ddof: int | float

    def __init__(self, axis: Iterable[int], ddof: int | float = 0, keepdims: bool = False) -> None:
        Op.__init__(self, axes_param(self.name, axis), _ddof_param(self.name, ddof), bool(keepdims))

    def output_dtype(self, dtype: str) -> str:
        dtype = float_dtype(dtype)
        return _REAL.get(dtype, dtype)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d var / dx = 2 conj(x - mean) / (n - ddof); the mean's own term sums to zero
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = 2 * keep_axes(g, self.axis, self.keepdims)
        return [g * self._centered(x) / (count(x, self.axis, g.dtype) - self.ddof)]

    def _centered(self, x: Var) -> Var:
        """conj(x - mean(x)) over ``axis``, in x's dtype."""
        d = x - mean(x, axis=self.axis, keepdims=True)
        if x.type.kind != "c":
            return d
        # conj(d) = |d|**2 / d (rt has no conj); where(d == 0) on both sides keeps 0 / 0
        # out of the value and of its derivative
        zero = equal(d, 0)
        return where(zero, 0, square(abs(d)) / where(zero, 1, d))


class Std(Variance):
    """sqrt(var(x, axis, ddof)): the standard deviation over ``axis``."""

    name = "std"

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d sqrt(var) = d var / (2 std). At zero variance this is 0 / 0 = NaN, as the
        # JAX lowering (jnp.std = sqrt(var)) gives
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = keep_axes(g, self.axis, self.keepdims) / keep_axes(out, self.axis, self.keepdims)
        return [g * self._centered(x) / (count(x, self.axis, g.dtype) - self.ddof)]


class Logsumexp(Reduce):
    """log(sum(exp(x))) over ``axis``, shifted by the maximum so it does not overflow.

    All -inf (or an empty axis) gives -inf; +inf gives +inf; NaN propagates.
    """

    kinds = "biuf"

    def output_dtype(self, dtype: str) -> str:
        return float_dtype(dtype)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d logsumexp / dx = softmax(x) = exp(x - logsumexp(x)); an all -inf slice gets 0
        # (exp(-inf - 0)), not NaN, as the JAX lowering's gradient
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        out = keep_axes(out, self.axis, self.keepdims)
        shift = where(equal(out, -np.inf), 0, out)
        return [keep_axes(g, self.axis, self.keepdims) * exp(x - shift)]


class SoftmaxBase(ReductionBase):
    """A normalization over the axes ``axis``: same shape as the input, float dtype."""

    abstract = True

    __props__ = ("axis",)
    kinds = "biuf"

    axis: tuple[int, ...]

    def __init__(self, axis: Iterable[int]) -> None:
        super().__init__(axes_param(self.name, axis))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        self._check_axes(x, self.axis)
        return (TensorType(float_dtype(x.dtype), x.shape),)


class Softmax(SoftmaxBase):
    """exp(x - m) / sum(exp(x - m)) over ``axis``, with m the maximum over ``axis``.

    Domain: finite x (an all -inf slice gives NaN, as in SciPy and JAX).
    """

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d y_i / dx_k = y_i (delta_ik - y_k): the Jacobian-vector form y (g - sum(g y))
        (x,), (y,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        return [y * (g - sum(g * y, axis=self.axis, keepdims=True))]


class LogSoftmax(SoftmaxBase):
    """x - logsumexp(x) over ``axis``, computed max-shifted. Domain: as ``Softmax``."""

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # d y_i / dx_k = delta_ik - softmax(x)_k, with softmax(x) = exp(y)
        (x,), (y,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        return [g - exp(y) * sum(g, axis=self.axis, keepdims=True)]


# --- user functions -------------------------------------------------------------------------


@pattern_function(Variance)
def var(
    x: typing.Any, axis: typing.Any = None, ddof: int | float = 0, keepdims: bool = False
) -> Var:
    """The variance over ``axis``, dividing by ``n - ddof`` (NumPy's ``var``).

    Example:
        >>> var(rt.matrix("x"), axis=0, ddof=1).type.shape
        (None,)
    """
    return reduce(Variance, x, axis, keepdims, ddof=ddof)


@pattern_function(Std)
def std(
    x: typing.Any, axis: typing.Any = None, ddof: int | float = 0, keepdims: bool = False
) -> Var:
    """The standard deviation over ``axis``: ``sqrt(var(x, axis, ddof))``.

    Example:
        >>> std(rt.vector("x", dtype="float32")).dtype
        'float32'
    """
    return reduce(Std, x, axis, keepdims, ddof=ddof)


@pattern_function(Logsumexp)
def logsumexp(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """``log(sum(exp(x), axis))`` without overflow (SciPy's ``logsumexp``).

    Example:
        >>> logsumexp(rt.matrix("x"), axis=-1).type.shape
        (None,)
    """
    return reduce(Logsumexp, x, axis, keepdims)


@pattern_function(Softmax)
def softmax(x: typing.Any, axis: typing.Any = -1) -> Var:
    """``exp(x) / sum(exp(x), axis)``, max-shifted; the default ``axis=-1`` follows JAX
    (SciPy's default, None, normalizes over all axes and is available as ``axis=None``).

    Example:
        >>> str(softmax(rt.matrix("x", dtype="float32")).type)
        'float32[?,?]'
    """
    x = as_var(x, context="softmax: input 0")
    return Softmax(normalize_axes("softmax", axis, x))(x)


@pattern_function(LogSoftmax)
def log_softmax(x: typing.Any, axis: typing.Any = -1) -> Var:
    """``x - logsumexp(x, axis, keepdims=True)``, max-shifted; default ``axis=-1`` as in JAX.

    Example:
        >>> log_softmax(rt.vector("x", dtype="int64")).dtype
        'float64'
    """
    x = as_var(x, context="log_softmax: input 0")
    return LogSoftmax(normalize_axes("log_softmax", axis, x))(x)


__all__ = ["log_softmax", "logsumexp", "softmax", "std", "var"]
