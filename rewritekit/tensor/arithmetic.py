"""Arithmetic: the operators, extrema, ``clip``, ``where``, rounding and ``cast``, each with
its derivative in one line of the table at the end."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Constant, TensorType, Var, as_var, result_dtype
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.logic import equal
from rewritekit.tensor.transcendental import log
from rewritekit.tensor.ufunc import (
    Elemwise,
    FloatElemwise,
    _is_weak_scalar,
    defvjp,
    float_dtype,
)

__all__ = [
    "abs",
    "add",
    "astype",
    "cast",
    "ceil",
    "clip",
    "divide",
    "floor",
    "floor_divide",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "power",
    "reciprocal",
    "round",
    "sign",
    "square",
    "subtract",
    "true_divide",
    "where",
]


class Add(Elemwise):
    """x + y."""

    nin = 2
    commutative = True


class Subtract(Elemwise):
    """x - y. Not defined for bool (as in NumPy)."""

    nin = 2
    kinds = "iufc"


class Multiply(Elemwise):
    """x * y."""

    nin = 2
    commutative = True


class TrueDivide(Elemwise):
    """x / y; integer and bool inputs divide in float64 (as NumPy's)."""

    nin = 2
    name = "true_divide"

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        common = float_dtype(result_dtype(*dtypes))
        return (common,) * 2

    def output_dtype(self, *dtypes: str) -> str:
        return float_dtype(result_dtype(*dtypes))


class FloorDivide(Elemwise):
    """floor(x / y), in the promoted dtype. Integer division by zero gives 0 (NumPy)."""

    nin = 2
    kinds = "iuf"


class Mod(Elemwise):
    """x - floor(x / y) * y: the remainder with the sign of y (Python's %, NumPy's mod).
    Integer x % 0 gives 0 (NumPy)."""

    nin = 2
    kinds = "iuf"


class Power(Elemwise):
    """x ** y in the promoted dtype. Integer x to a negative integer power is an error
    in NumPy; write a float exponent."""

    nin = 2
    kinds = "iufc"


class Negative(Elemwise):
    """-x. Not defined for bool (as in NumPy)."""

    kinds = "iufc"


class Abs(Elemwise):
    """|x|; for complex x, the modulus in the matching float dtype."""

    kinds = "biufc"

    def output_dtype(self, *dtypes: str) -> str:
        (dtype,) = dtypes
        return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


class Sign(Elemwise):
    """-1, 0 or 1 with the sign of x (NaN for NaN)."""

    kinds = "iuf"


class Square(Elemwise):
    """x * x."""

    kinds = "iufc"


class Reciprocal(FloatElemwise):
    """1 / x, computed in floating point (NumPy's integer reciprocal truncates; ours does not)."""

    kinds = "biufc"


def _winner_grads(x: Var, y: Var, out: Var, g: Var) -> tuple[Var, Var]:
    """The cotangent ``g`` of ``out = maximum(x, y)`` (or ``minimum``) sent to the input
    equal to ``out``, half to each on a tie (JAX's convention); none to a NaN input."""
    x_wins, y_wins = equal(x, out), equal(y, out)
    share = where(x_wins & y_wins, 0.5 * g, g)
    return where(x_wins, share, 0), where(y_wins, share, 0)


class Extremum(Elemwise):
    """Base of ``maximum`` and ``minimum``: the gradient goes to the input equal to the
    result, half to each on a tie (JAX's convention)."""

    abstract = True

    nin = 2
    commutative = True
    kinds = "biuf"


class Maximum(Extremum):
    """The elementwise larger of x and y; NaN if either is NaN."""


class Minimum(Extremum):
    """The elementwise smaller of x and y; NaN if either is NaN."""


class Clip(Elemwise):
    """min(max(x, lo), hi), in the promoted dtype of the three inputs."""

    nin = 3
    kinds = "iuf"


class Where(Elemwise):
    """cond ? x : y, elementwise; cond is taken by truth value, x and y promote."""

    nin = 3

    def weak_dtype(self, strong: list[TensorType], weak: list[Any]) -> str:
        # The condition does not take part in promotion; only the branches do.
        return result_dtype(*strong[1:], *weak) if len(strong) > 1 else result_dtype(*weak)

    def __call__(self, *args: Any, size: int | None = None, fill_value: int | None = None) -> Any:
        """``where(cond, x, y)`` elementwise; ``where(cond, size=n)`` is ``nonzero``'s
        positions (NumPy's one-argument form, with JAX's static ``size``)."""
        if len(args) == 1:  # searching sits above this module: found in the namespace
            nonzero = sys.modules["rewritekit.tensor"].nonzero
            return nonzero(args[0], size=size, fill_value=fill_value)
        if size is not None or fill_value is not None:
            raise GraphTypeError(
                "where: size= and fill_value= belong to the one-argument form "
                "where(condition, size=n); where(cond, x, y) selects elementwise"
            )
        return super().__call__(*args)

    def prepare_inputs(self, *args: Any) -> tuple[Var, ...]:
        if len(args) == 3 and _is_weak_scalar(args[0]):
            args = (as_var(bool(args[0]), context="where: input 0"), *args[1:])
        return super().prepare_inputs(*args)

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        common = result_dtype(*dtypes[1:])
        return ("bool", common, common)

    def output_dtype(self, *dtypes: str) -> str:
        return result_dtype(*dtypes[1:])


class Floor(Elemwise):
    """The largest integer <= x, in x's dtype (integers are unchanged)."""

    kinds = "biuf"


class Ceil(Elemwise):
    """The smallest integer >= x, in x's dtype (integers are unchanged)."""

    kinds = "biuf"


class Round(Elemwise):
    """x rounded to ``decimals`` decimals, halves to even (NumPy's and JAX's rule)."""

    __props__ = ("decimals",)
    kinds = "iuf"

    def __init__(self, decimals: int = 0) -> None:
        super().__init__(int(decimals))


class Cast(Elemwise):
    """x converted to ``dtype`` (NumPy's ``astype``: floats to ints truncate toward zero).

    Floats to an integer dtype saturate, on every backend (XLA's rule; NumPy leaves it
    undefined): NaN gives 0, and values past the dtype's range, infinities included, give
    its min or max.
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: Any) -> None:
        super().__init__(TensorType(dtype).dtype)

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        return dtypes

    def output_dtype(self, *dtypes: str) -> str:
        return self.dtype


@pattern_function(Cast)
def cast(x: Any, dtype: Any) -> Var:
    """``x`` converted to ``dtype``; the same Var when it already has that dtype.

    Example:
        >>> cast(rt.vector("x"), "float32").dtype
        'float32'
    """
    x = as_var(x, context="cast: input 0")
    if x.dtype == TensorType(dtype).dtype:
        return x
    return Cast(dtype)(x)


astype = cast


add = Add()
subtract = Subtract()
multiply = Multiply()
true_divide = TrueDivide()
divide = true_divide
floor_divide = FloorDivide()
mod = Mod()
power = Power()
negative = Negative()
abs = Abs()
sign = Sign()
square = Square()
reciprocal = Reciprocal()
maximum = Maximum()
minimum = Minimum()
clip = Clip()
where = Where()
floor = Floor()
ceil = Ceil()


@pattern_function(Round)
def round(x: Any, decimals: int = 0) -> Var:
    """x rounded to ``decimals`` decimals, halves to even.

    Example:
        >>> round(rt.vector("x"), 2).dtype
        'float64'
    """
    return Round(decimals)(x)


def _power_grads(x: Var, y: Var, out: Var, g: Var) -> tuple[Var, Var]:
    # d/dx x^y = y x^(y-1), 0 at x = y = 0 (x^0 = 1); d/dy x^y = log(x) x^y, 0 at x = 0
    # (0^y is constant for y > 0). The inner wheres keep the discarded branches finite
    # (not 0 * inf), so second derivatives have no NaN from them.
    x_zero = equal(x, 0)
    if isinstance(y, Constant) and np.all(np.asarray(y.data) != 0):  # x ** 2: no origin
        return g * y * x ** (y - 1), where(x_zero, 0, g * log(where(x_zero, 1, x)) * out)
    origin = x_zero & equal(y, 0)
    safe_y = where(origin, 1, y)
    gx = where(origin, 0, g * safe_y * x ** (safe_y - 1))
    return gx, where(x_zero, 0, g * log(where(x_zero, 1, x)) * out)


def _abs_grad(x: Var, out: Var, g: Var) -> Var:
    # d|x| = sign(x) dx, 0 at x = 0; for complex x, JAX's conj(x) / |x| = |x| / x
    if x.type.kind != "c":
        return g * sign(x)
    zero = equal(x, 0)
    return where(zero, 0, g * out / where(zero, 1, x))


def _clip_grads(x: Var, lo: Var, hi: Var, out: Var, g: Var) -> tuple[Var, Var, Var]:
    # clip(x, lo, hi) = minimum(maximum(x, lo), hi), differentiated as that composition
    low = maximum(x, lo)
    g_low, g_hi = _winner_grads(low, hi, out, g)
    g_x, g_lo = _winner_grads(x, lo, low, g_low)
    return g_x, g_lo, g_hi


defvjp(
    {
        Add: lambda x, y, out, g: (g, g),
        Subtract: lambda x, y, out, g: (g, -g),
        Multiply: lambda x, y, out, g: (g * y, g * x),
        TrueDivide: lambda x, y, out, g: (g / y, -(g / y) * out),
        # mod(x, y) = x - floor(x / y) y, and the quotient is piecewise constant
        Mod: lambda x, y, out, g: (g, -g * floor_divide(x, y)),
        Power: _power_grads,
        Negative: lambda x, out, g: -g,
        Abs: _abs_grad,
        Square: lambda x, out, g: 2 * g * x,
        Reciprocal: lambda x, out, g: -g * out * out,
        Maximum: _winner_grads,
        Minimum: _winner_grads,
        Clip: _clip_grads,
        # each branch gets the cotangent where it was chosen; the condition gets none
        Where: lambda c, x, y, out, g: (None, where(c, g, 0), where(c, 0, g)),
        # the identity on values: the gradient is cast back (none for integer inputs)
        Cast: lambda x, out, g: g,
        # piecewise constant: zero almost everywhere (undefined at the jumps)
        FloorDivide: lambda x, y, out, g: (0, 0),
        Sign: lambda x, out, g: 0,
        Floor: lambda x, out, g: 0,
        Ceil: lambda x, out, g: 0,
        Round: lambda x, out, g: 0,
    }
)
