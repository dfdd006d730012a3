"""Reductions, cumulative sums and products, and softmax.

Every Op here reduces (or scans) over axes given as parameters. The user functions take
NumPy's ``axis`` argument (an int, a tuple of ints with negatives allowed, or ``None`` for
all axes) and normalize it against the input's rank, so the Ops hold only sorted tuples of
non-negative ints and ``rt.sum(x, axis=-1) is rt.sum(x, axis=(1,))`` for a matrix ``x``.

Dtypes follow NumPy:

- *accumulating* (``sum``, ``prod``, ``cumsum``, ``cumprod``): bool and integers narrower
  than 64 bits accumulate in int64 (unsigned ones in uint64); other dtypes keep theirs.
- *ordering* (``max``, ``min``): the input's dtype. ``argmax``/``argmin``: int64.
- *logical* (``all``, ``any``): bool.
- *float* (``mean``, ``var``, ``std``, ``logsumexp``, ``softmax``, ``log_softmax``): floats
  keep their dtype, integers and bool compute in float64; ``var``/``std`` of complex give
  the matching real dtype.
"""

from __future__ import annotations

import builtins
import typing
from collections.abc import Iterable
from typing import ClassVar

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Op, TensorType, Var, as_var, short_name
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.elemwise import float_dtype

_KIND_NAMES = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}
_REAL = {"complex64": "float32", "complex128": "float64"}


# --- axis normalization -----------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _bad_axis(name: str, axis: object, expected: str) -> GraphTypeError:
    return GraphTypeError(f"{name}: axis must be {expected}, got {axis!r}")


def _check_axis(name: str, axis: int, x: Var) -> int:
    """``axis`` as a non-negative int, or a ShapeError naming the input."""
    if not -x.ndim <= axis < x.ndim:
        raise ShapeError(
            f"{name}: axis {axis} is out of range for a {x.ndim}-d input (input {short_name(x)})"
        )
    return int(axis) % x.ndim


def normalize_axes(name: str, axis: typing.Any, x: Var) -> tuple[int, ...]:
    """NumPy's ``axis`` argument as a sorted tuple of non-negative ints (``None``: all axes).

    Raises:
        GraphTypeError: ``axis`` is not an int, a sequence of ints or None.
        ShapeError: an axis is out of range for ``x`` or repeated.

    Example:
        >>> normalize_axes("sum", -1, rt.matrix("x"))
        (1,)
    """
    if axis is None:
        return tuple(range(x.ndim))
    if _is_int(axis):
        return (_check_axis(name, axis, x),)
    if not isinstance(axis, (tuple, list)) or not builtins.all(_is_int(a) for a in axis):
        raise _bad_axis(name, axis, "an int, a tuple of ints or None")
    axes = [_check_axis(name, a, x) for a in axis]
    for position, a in enumerate(axes):
        if a in axes[:position]:
            raise ShapeError(
                f"{name}: axis {axis[position]} is repeated in axis={tuple(axis)} for a "
                f"{x.ndim}-d input (input {short_name(x)})"
            )
    return tuple(sorted(axes))


def _normalize_axis(name: str, axis: typing.Any, x: Var) -> int | None:
    """NumPy's single ``axis`` argument (an int or None) as a non-negative int or None."""
    if axis is None:
        return None
    if not _is_int(axis):
        raise _bad_axis(name, axis, "an int or None")
    return _check_axis(name, axis, x)


def _axes_prop(name: str, axis: Iterable[int]) -> tuple[int, ...]:
    """An Op's ``axis`` parameter: distinct non-negative ints, sorted."""
    try:
        axes = tuple(axis)
    except TypeError:
        raise _bad_axis(name, axis, "a tuple of non-negative ints") from None
    if not builtins.all(_is_int(a) and a >= 0 for a in axes) or len(set(axes)) != len(axes):
        raise _bad_axis(
            name, axis, f"a tuple of distinct non-negative ints (rt.{name} normalizes axes)"
        )
    return tuple(sorted(int(a) for a in axes))


def _axis_prop(name: str, axis: int | None) -> int | None:
    if axis is None:
        return None
    if not _is_int(axis) or axis < 0:
        raise _bad_axis(name, axis, f"a non-negative int or None (rt.{name} normalizes axes)")
    return int(axis)


def _accumulate_dtype(dtype: str) -> str:
    """NumPy's dtype for sum/prod: bool and narrow ints widen to 64 bits."""
    kind = np.dtype(dtype).kind
    if kind in "bi" and np.dtype(dtype).itemsize < 8:
        return "int64"
    if kind == "u" and np.dtype(dtype).itemsize < 8:
        return "uint64"
    return dtype


# --- base classes -----------------------------------------------------------------------


class ReductionBase(Op):
    """Shared dtype check of the Ops of this module.

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


def _reduced_shape(
    shape: tuple[int | None, ...], axes: tuple[int, ...], keepdims: bool
) -> tuple[int | None, ...]:
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


# --- gradient helpers (lazy imports, as in the vjps: no import cycles) ---------------------


def _keep(v: Var, axes: tuple[int, ...], keepdims: bool) -> Var:
    """A reduction's result (or cotangent) with the reduced axes back, as length 1."""
    from rewritekit.tensor.shapes import expand_dims

    return v if keepdims or not axes else expand_dims(v, axes)


def _count(x: Var, axes: tuple[int, ...], dtype: str) -> Var:
    """The number of elements each slice over ``axes`` holds, as a scalar of ``dtype``."""
    from rewritekit.tensor.elemwise import cast
    from rewritekit.tensor.shapes import shape_i

    n: typing.Any = 1
    for a in axes:
        n = n * shape_i(x, a)
    return cast(as_var(n, context="count"), dtype)


def _along(axis: int, entry: slice) -> tuple[slice, ...]:
    return (slice(None),) * axis + (entry,)


def _flip(x: Var, axis: int) -> Var:
    return x[_along(axis, slice(None, None, -1))]


def _reverse_cumsum(x: Var, axis: int) -> Var:
    """x[i] + x[i + 1] + ... along ``axis``: the transpose of ``cumsum``."""
    return _flip(cumsum(_flip(x, axis), axis), axis)


def _exclusive_cumprod(x: Var, axis: int) -> Var:
    """x[0] * ... * x[i - 1] along ``axis`` (1 at i = 0), without dividing by x[i]."""
    from rewritekit.tensor.creation import ones_like
    from rewritekit.tensor.shapes import concatenate

    # x[:1] (not a literal length 1) so that an empty axis stays empty
    first = ones_like(x[_along(axis, slice(None, 1))])
    return concatenate([first, cumprod(x, axis)[_along(axis, slice(None, -1))]], axis=axis)


def _product_of_others(x: Var, axes: tuple[int, ...]) -> Var:
    """The product over ``axes`` of every element but x itself, exact when x has zeros.

    Axis by axis from the last: the others on x's own line (left and right exclusive
    products), times the others among the lines' products over the axes done so far.
    """
    others = None
    for a in reversed(axes):
        line = _exclusive_cumprod(x, a) * _flip(_exclusive_cumprod(_flip(x, a), a), a)
        others = line if others is None else others * line
        x = prod(x, axis=a, keepdims=True)
    return others


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
        super().__init__(_axes_prop(self.name, axis), bool(keepdims))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        self._check_axes(x, self.axis)
        if self.needs_data:
            self._check_nonempty(x, self.axis)
        shape = _reduced_shape(x.shape, self.axis, self.keepdims)
        return (TensorType(self.output_dtype(x.dtype), shape),)

    def output_dtype(self, dtype: str) -> str:
        """The result's dtype for an input of ``dtype``."""
        return dtype


# --- reductions ---------------------------------------------------------------------------


class Sum(Reduce):
    """The sum over ``axis``; bool and narrow ints accumulate in (u)int64. Empty sum: 0."""

    def output_dtype(self, dtype: str) -> str:
        return _accumulate_dtype(dtype)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.shapes import broadcast_to, shape

        # each input element contributes once: g broadcast back over the reduced axes
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        return [broadcast_to(_keep(g, self.axis, self.keepdims), shape(x))]


class Prod(Reduce):
    """The product over ``axis``; bool and narrow ints accumulate in (u)int64. Empty: 1."""

    def output_dtype(self, dtype: str) -> str:
        return _accumulate_dtype(dtype)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # d prod / dx_i = the product of the others (not prod / x_i, which fails at zeros)
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = _keep(g, self.axis, self.keepdims)
        return [g * _product_of_others(x, self.axis) if self.axis else g]


class Extreme(Reduce):
    """``max`` or ``min`` over ``axis``: the gradient goes to the elements equal to it."""

    abstract = True

    kinds = "biuf"
    needs_data = True

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.elemwise import cast, equal, maximum

        # as JAX: g shared equally by the elements equal to the result. A slice holding
        # NaN has none (NaN != NaN) and gets 0, as jax.jit(jax.grad) gives (XLA turns JAX's
        # mask * (g / 0) into a select); eager JAX gives NaN there
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        hit = cast(equal(x, _keep(out, self.axis, self.keepdims)), x.dtype)
        ties = maximum(sum(hit, axis=self.axis, keepdims=True), 1)
        return [_keep(g, self.axis, self.keepdims) * hit / ties]


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

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.shapes import broadcast_to, shape

        # d mean / dx_i = 1 / n
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = _keep(g, self.axis, self.keepdims) / _count(x, self.axis, g.dtype)
        return [broadcast_to(g, shape(x))]


class Logsumexp(Reduce):
    """log(sum(exp(x))) over ``axis``, shifted by the maximum so it does not overflow.

    All -inf (or an empty axis) gives -inf; +inf gives +inf; NaN propagates.
    """

    kinds = "biuf"

    def output_dtype(self, dtype: str) -> str:
        return float_dtype(dtype)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.elemwise import equal, exp, where

        # d logsumexp / dx = softmax(x) = exp(x - logsumexp(x)); an all -inf slice gets 0
        # (exp(-inf - 0)), not NaN, as the JAX lowering's gradient
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        out = _keep(out, self.axis, self.keepdims)
        shift = where(equal(out, -np.inf), 0, out)
        return [_keep(g, self.axis, self.keepdims) * exp(x - shift)]


class Variance(Reduce):
    """sum(|x - mean(x)|**2) / (n - ddof) over ``axis``; the result is real.

    ``ddof`` (delta degrees of freedom) is 0 for the population variance, 1 for the
    unbiased estimate. Integers and bool compute in float64.
    """

    __props__ = ("axis", "ddof", "keepdims")
    name = "var"

    ddof: int | float

    def __init__(self, axis: Iterable[int], ddof: int | float = 0, keepdims: bool = False) -> None:
        Op.__init__(self, _axes_prop(self.name, axis), _ddof_prop(self.name, ddof), bool(keepdims))

    def output_dtype(self, dtype: str) -> str:
        dtype = float_dtype(dtype)
        return _REAL.get(dtype, dtype)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # d var / dx = 2 conj(x - mean) / (n - ddof); the mean's own term sums to zero
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = 2 * _keep(g, self.axis, self.keepdims)
        return [g * self._centered(x) / (_count(x, self.axis, g.dtype) - self.ddof)]

    def _centered(self, x: Var) -> Var:
        """conj(x - mean(x)) over ``axis``, in x's dtype."""
        from rewritekit.tensor.elemwise import abs, equal, square, where

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

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # d sqrt(var) = d var / (2 std). At zero variance this is 0 / 0 = NaN, as the
        # JAX lowering (jnp.std = sqrt(var)) gives
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        g = _keep(g, self.axis, self.keepdims) / _keep(out, self.axis, self.keepdims)
        return [g * self._centered(x) / (_count(x, self.axis, g.dtype) - self.ddof)]


def _ddof_prop(name: str, ddof: typing.Any) -> int | float:
    if _is_int(ddof):
        return int(ddof)
    if isinstance(ddof, (float, np.floating)):
        return int(ddof) if float(ddof).is_integer() else float(ddof)
    raise GraphTypeError(f"{name}: ddof must be a number, got {ddof!r}")


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
        super().__init__(_axis_prop(self.name, axis), bool(keepdims))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        axes = tuple(range(x.ndim)) if self.axis is None else (self.axis,)
        self._check_axes(x, axes)
        self._check_nonempty(x, axes)
        shape = _reduced_shape(x.shape, axes, self.keepdims)
        return (TensorType("int64", shape),)


class Argmax(ArgReduce):
    """The index of the largest element (of the first NaN, if any)."""


class Argmin(ArgReduce):
    """The index of the smallest element (of the first NaN, if any)."""


class Cumulative(ReductionBase):
    """A running reduction along ``axis``; ``None`` runs over the flattened input (1-d
    result). The dtype is sum's: bool and narrow ints accumulate in (u)int64."""

    abstract = True

    __props__ = ("axis",)

    axis: int | None

    def __init__(self, axis: int | None = None) -> None:
        super().__init__(_axis_prop(self.name, axis))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        if self.axis is None:
            known = None not in x.shape
            shape: tuple[int | None, ...] = (int(np.prod(x.shape)) if known else None,)
        else:
            self._check_axes(x, (self.axis,))
            shape = x.shape
        return (TensorType(_accumulate_dtype(x.dtype), shape),)


class Cumsum(Cumulative):
    """x[0], x[0] + x[1], ... along ``axis``."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.shapes import reshape, shape

        # x[i] is in every sum from i on: the cotangents summed from the end
        (x,), (g,) = inputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        if self.axis is None:
            return [reshape(_reverse_cumsum(g, 0), shape(x))]
        return [_reverse_cumsum(g, self.axis)]


class Cumprod(Cumulative):
    """x[0], x[0] * x[1], ... along ``axis``."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.shapes import reshape, shape

        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind not in "fc":
            return [None]
        if self.axis is None:
            flat = reshape(x, (-1,))
            return [reshape(_cumprod_grad(flat, out, g, 0), shape(x))]
        return [_cumprod_grad(x, out, g, self.axis)]


def _cumprod_grad(x: Var, out: Var, g: Var, axis: int) -> Var:
    """sum_{j >= i} g[j] * d out[j] / d x[i] along ``axis``, exact where x has zeros.

    d out[j] / d x[i] (j >= i) is the product of x[:j + 1] without x[i]: out[j] / x[i]
    before the first zero of the line; at the first zero, the running product with that
    zero read as 1; after it, 0 (the first zero is among the factors).
    """
    from rewritekit.tensor.elemwise import equal, logical_and, where

    zero = equal(x, 0)
    seen = cumsum(zero, axis)
    before = equal(seen, 0)
    first = logical_and(zero, equal(seen, 1))
    # where(before) on both sides: no division by the zeros in the untaken branch
    head = _reverse_cumsum(g * out, axis) / where(before, x, 1)
    at_zero = _reverse_cumsum(g * cumprod(where(first, 1, x), axis), axis)
    return where(before, head, where(first, at_zero, 0))


class SoftmaxBase(ReductionBase):
    """A normalization over the axes ``axis``: same shape as the input, float dtype."""

    abstract = True

    __props__ = ("axis",)
    kinds = "biuf"

    axis: tuple[int, ...]

    def __init__(self, axis: Iterable[int]) -> None:
        super().__init__(_axes_prop(self.name, axis))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        self._check_kind(x)
        self._check_axes(x, self.axis)
        return (TensorType(float_dtype(x.dtype), x.shape),)


class Softmax(SoftmaxBase):
    """exp(x - m) / sum(exp(x - m)) over ``axis``, with m the maximum over ``axis``.

    Domain: finite x (an all -inf slice gives NaN, as in SciPy and JAX).
    """

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        # d y_i / dx_k = y_i (delta_ik - y_k): the Jacobian-vector form y (g - sum(g y))
        (x,), (y,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        return [y * (g - sum(g * y, axis=self.axis, keepdims=True))]


class LogSoftmax(SoftmaxBase):
    """x - logsumexp(x) over ``axis``, computed max-shifted. Domain: as ``Softmax``."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.elemwise import exp

        # d y_i / dx_k = delta_ik - softmax(x)_k, with softmax(x) = exp(y)
        (x,), (y,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "f":
            return [None]
        return [g - exp(y) * sum(g, axis=self.axis, keepdims=True)]


# --- user functions -------------------------------------------------------------------------


def _reduce(
    cls: type[Reduce], x: typing.Any, axis: typing.Any, keepdims: bool, **params: typing.Any
) -> Var:
    x = as_var(x, context=f"{cls.name}: input 0")
    return cls(normalize_axes(cls.name, axis, x), keepdims=keepdims, **params)(x)


@pattern_function(Sum)
def sum(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The sum over ``axis`` (an int, a tuple of ints, or None for all axes).

    Bool and integers narrower than 64 bits sum in int64 (uint64 for unsigned), as in NumPy.

    Example:
        >>> str(sum(rt.matrix("x", dtype="int32"), axis=0).type)
        'int64[?]'
    """
    return _reduce(Sum, x, axis, keepdims)


@pattern_function(Prod)
def prod(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The product over ``axis``; dtypes as ``sum``.

    Example:
        >>> prod(rt.tensor("x", shape=(2, 3)), axis=-1, keepdims=True).type.shape
        (2, 1)
    """
    return _reduce(Prod, x, axis, keepdims)


@pattern_function(Max)
def max(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The largest element over ``axis``, in x's dtype; NaN propagates (NumPy's ``max``).

    Example:
        >>> max(rt.tensor("x", shape=(2, 3)), axis=(0, 1)).type.shape
        ()
    """
    return _reduce(Max, x, axis, keepdims)


@pattern_function(Min)
def min(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The smallest element over ``axis``, in x's dtype; NaN propagates.

    Example:
        >>> min(rt.vector("x", dtype="int8")).dtype
        'int8'
    """
    return _reduce(Min, x, axis, keepdims)


@pattern_function(All)
def all(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """True where every element over ``axis`` is nonzero (bool result).

    Example:
        >>> all(rt.matrix("x"), axis=1).dtype
        'bool'
    """
    return _reduce(All, x, axis, keepdims)


@pattern_function(Any)
def any(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """True where some element over ``axis`` is nonzero (bool result).

    Example:
        >>> any(rt.matrix("x"), axis=None).type.shape
        ()
    """
    return _reduce(Any, x, axis, keepdims)


@pattern_function(Mean)
def mean(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """The mean over ``axis``; integers and bool give float64, floats keep their dtype.

    Example:
        >>> mean(rt.vector("x", dtype="int32")).dtype
        'float64'
    """
    return _reduce(Mean, x, axis, keepdims)


@pattern_function(Variance)
def var(
    x: typing.Any, axis: typing.Any = None, ddof: int | float = 0, keepdims: bool = False
) -> Var:
    """The variance over ``axis``, dividing by ``n - ddof`` (NumPy's ``var``).

    Example:
        >>> var(rt.matrix("x"), axis=0, ddof=1).type.shape
        (None,)
    """
    return _reduce(Variance, x, axis, keepdims, ddof=ddof)


@pattern_function(Std)
def std(
    x: typing.Any, axis: typing.Any = None, ddof: int | float = 0, keepdims: bool = False
) -> Var:
    """The standard deviation over ``axis``: ``sqrt(var(x, axis, ddof))``.

    Example:
        >>> std(rt.vector("x", dtype="float32")).dtype
        'float32'
    """
    return _reduce(Std, x, axis, keepdims, ddof=ddof)


@pattern_function(Logsumexp)
def logsumexp(x: typing.Any, axis: typing.Any = None, keepdims: bool = False) -> Var:
    """``log(sum(exp(x), axis))`` without overflow (SciPy's ``logsumexp``).

    Example:
        >>> logsumexp(rt.matrix("x"), axis=-1).type.shape
        (None,)
    """
    return _reduce(Logsumexp, x, axis, keepdims)


def _arg(cls: type[ArgReduce], x: typing.Any, axis: typing.Any, keepdims: bool) -> Var:
    x = as_var(x, context=f"{cls.name}: input 0")
    axis = _normalize_axis(cls.name, axis, x)
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


def _cumulative(cls: type[Cumulative], x: typing.Any, axis: typing.Any) -> Var:
    x = as_var(x, context=f"{cls.name}: input 0")
    if x.ndim == 0 and _is_int(axis) and axis in (0, -1):
        axis = None  # NumPy treats a 0-d input as 1-d here
    return cls(_normalize_axis(cls.name, axis, x))(x)


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


__all__ = [
    "all",
    "any",
    "argmax",
    "argmin",
    "cumprod",
    "cumsum",
    "log_softmax",
    "logsumexp",
    "max",
    "mean",
    "min",
    "prod",
    "softmax",
    "std",
    "sum",
    "var",
]
