"""Elementwise Ops: broadcasting, NumPy 2 promotion with weak Python scalars.

Every elementwise Op states two dtype facts, used by ``infer_types`` and by both backends:
``cast_dtypes`` (the dtype each input is computed in) and ``output_dtype``. The families:

- *arithmetic* (``add``, ``maximum``, ``abs``, ...): inputs promote by NumPy's rules and the
  result has the promoted dtype (``abs`` of complex gives the matching float).
- *float* (``exp``, ``sin``, and the special functions of ``special.py``): float inputs
  keep their dtype; integer and bool inputs compute in float64 (NumPy would give float16
  for int8; SciPy and JAX with x64 give float64).
- *predicates* (comparisons, ``isnan``, logical ops): bool results.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError
from rewritekit.ir import Op, TensorType, Var, as_var, broadcast_shapes, result_dtype
from rewritekit.ir.nodes import all_vars
from rewritekit.ir.patterns import pattern_function

_PY_SCALARS = (bool, int, float, complex)


def _is_weak_scalar(value: object) -> bool:
    return isinstance(value, _PY_SCALARS) and not isinstance(value, np.generic)


def _kind(dtype: str) -> str:
    return np.dtype(dtype).kind


class Elemwise(Op):
    """Base of elementwise Ops.

    Class attributes:
        nin: the number of inputs.
        commutative: the inputs may be swapped (used by the rules engine).
        kinds: the NumPy dtype kinds the Op accepts (``b``ool, ``i``nt, ``u``int, ``f``loat,
            ``c``omplex); other inputs are rejected at construction.
    """

    abstract = True

    nin: ClassVar[int] = 1
    commutative: ClassVar[bool] = False
    kinds: ClassVar[str] = "biufc"

    def prepare_inputs(self, *args: Any) -> tuple[Var, ...]:
        if len(args) == self.nin and all_vars(args):
            return args
        if len(args) != self.nin:
            raise GraphTypeError(f"{self.name}: expected {self.nin} inputs, got {len(args)}")
        strong = {
            i: as_var(a, context=f"{self.name}: input {i}")
            for i, a in enumerate(args)
            if not _is_weak_scalar(a)
        }
        weak = [a for a in args if _is_weak_scalar(a)]
        dtype = self.weak_dtype([strong[i].type for i in sorted(strong)], weak)
        return tuple(
            strong[i] if i in strong else _weak_constant(a, dtype, f"{self.name}: input {i}")
            for i, a in enumerate(args)
        )

    def weak_dtype(self, strong: list[TensorType], weak: list[Any]) -> str:
        """The dtype given to Python-scalar arguments, from the other arguments' types."""
        return result_dtype(*strong, *weak)

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        dtypes = [t.dtype for t in input_types]
        self._check_kinds(dtypes)
        shape = broadcast_shapes(*(t.shape for t in input_types), op=self.name)
        return (TensorType(self.output_dtype(*dtypes), shape),)

    def _check_kinds(self, dtypes: list[str]) -> None:
        # Checked on the dtypes the inputs are computed in: subtract(bool, int) is fine.
        casts = self.cast_dtypes(*dtypes)
        for position, (dtype, cast) in enumerate(zip(dtypes, casts, strict=True)):
            if _kind(cast) not in self.kinds:
                computed = "" if cast == dtype else f" (computed in {cast})"
                raise DTypeError(
                    f"{self.name}: input {position} has dtype {dtype}{computed}, which "
                    f"{self.name} does not support (expected one of the kinds "
                    f"{_kind_names(self.kinds)})"
                )

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        """The dtype each input is computed in (arithmetic: the promoted dtype)."""
        common = result_dtype(*dtypes)
        return (common,) * len(dtypes)

    def output_dtype(self, *dtypes: str) -> str:
        """The result's dtype for these input dtypes."""
        return result_dtype(*dtypes)


def _kind_names(kinds: str) -> str:
    names = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}
    return ", ".join(names[k] for k in kinds)


def _weak_constant(value: Any, dtype: str, context: str) -> Var:
    if _kind(dtype) in "iu" and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise GraphTypeError(
                f"{context}: Python int {value} is out of bounds for {dtype} "
                f"[{info.min}, {info.max}]"
            )
    if _kind(dtype) in "biu" and isinstance(value, (float, complex)):
        dtype = result_dtype(dtype, value)
    return as_var(value, dtype=dtype, context=context)


def float_dtype(dtype: str) -> str:
    """The dtype a float function computes in: floats keep theirs, the rest use float64."""
    return dtype if _kind(dtype) in "fc" else "float64"


class FloatElemwise(Elemwise):
    """An elementwise function computed in floating point (see the module docstring)."""

    abstract = True

    kinds = "biuf"

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        common = float_dtype(result_dtype(*dtypes))
        return (common,) * len(dtypes)

    def output_dtype(self, *dtypes: str) -> str:
        return float_dtype(result_dtype(*dtypes))


class ComplexFloatElemwise(FloatElemwise):
    """A float function that also accepts complex inputs."""

    abstract = True

    kinds = "biufc"


class Predicate(Elemwise):
    """An elementwise test: inputs compare in their promoted dtype; the result is bool."""

    abstract = True
    differentiable = False  # bool results carry no gradient

    def output_dtype(self, *dtypes: str) -> str:
        return "bool"


class Logical(Elemwise):
    """A logical connective: inputs are taken by truth value; the result is bool."""

    abstract = True
    differentiable = False  # bool results carry no gradient

    def weak_dtype(self, strong: list[TensorType], weak: list[Any]) -> str:
        return "bool"

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        return ("bool",) * len(dtypes)

    def output_dtype(self, *dtypes: str) -> str:
        return "bool"


# --- arithmetic -----------------------------------------------------------------------


class Add(Elemwise):
    """x + y."""

    nin = 2
    commutative = True

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        (g,) = cotangents
        return [input_grad(g, x) for x in inputs]


class Subtract(Elemwise):
    """x - y. Not defined for bool (as in NumPy)."""

    nin = 2
    kinds = "iufc"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        (x, y), (g,) = inputs, cotangents
        return [input_grad(g, x), input_grad(-g, y)]


class Multiply(Elemwise):
    """x * y."""

    nin = 2
    commutative = True

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d(xy) = y dx + x dy
        (x, y), (g,) = inputs, cotangents
        return [input_grad(g * y, x), input_grad(g * x, y)]


class TrueDivide(Elemwise):
    """x / y; integer and bool inputs divide in float64 (as NumPy's)."""

    nin = 2
    name = "true_divide"

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        common = float_dtype(result_dtype(*dtypes))
        return (common,) * 2

    def output_dtype(self, *dtypes: str) -> str:
        return float_dtype(result_dtype(*dtypes))

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d(x/y) = dx / y - (x/y) dy / y
        (x, y), (out,), (g,) = inputs, outputs, cotangents
        gx = g / y
        return [input_grad(gx, x), input_grad(-gx * out, y)]


class FloorDivide(Elemwise):
    """floor(x / y), in the promoted dtype. Integer division by zero gives 0 (NumPy)."""

    nin = 2
    kinds = "iuf"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.creation import zeros_like
        from rewritekit.tensor.gradient import input_grad

        # piecewise constant: zero almost everywhere (undefined at the jumps)
        (g,) = cotangents
        return [input_grad(zeros_like(g), x) for x in inputs]


class Mod(Elemwise):
    """x - floor(x / y) * y: the remainder with the sign of y (Python's %, NumPy's mod)."""

    nin = 2
    kinds = "iuf"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # mod(x, y) = x - floor(x / y) y, and the quotient is piecewise constant
        (x, y), (g,) = inputs, cotangents
        return [input_grad(g, x), input_grad(-g * floor_divide(x, y), y)]


class Power(Elemwise):
    """x ** y in the promoted dtype. Integer x to a negative integer power is an error
    in NumPy; write a float exponent."""

    nin = 2
    kinds = "iufc"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx x^y = y x^(y-1), 0 at x = y = 0 (x^0 = 1); d/dy x^y = log(x) x^y, 0 at x = 0
        # (0^y is constant for y > 0). The inner wheres keep the discarded branches finite
        # (not 0 * inf), so second derivatives have no NaN from them.
        (x, y), (out,), (g,) = inputs, outputs, cotangents
        x_zero = equal(x, 0)
        origin = x_zero & equal(y, 0)
        safe_y = where(origin, 1, y)
        gx = where(origin, 0, g * safe_y * x ** (safe_y - 1))
        gy = where(x_zero, 0, g * log(where(x_zero, 1, x)) * out)
        return [input_grad(gx, x), input_grad(gy, y)]


class Negative(Elemwise):
    """-x. Not defined for bool (as in NumPy)."""

    kinds = "iufc"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        return [input_grad(-cotangents[0], inputs[0])]


class Abs(Elemwise):
    """|x|; for complex x, the modulus in the matching float dtype."""

    kinds = "biufc"

    def output_dtype(self, *dtypes: str) -> str:
        (dtype,) = dtypes
        return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d|x| = sign(x) dx, 0 at x = 0; for complex x, JAX's conj(x) / |x| = |x| / x
        (x,), (out,), (g,) = inputs, outputs, cotangents
        if x.type.kind != "c":
            return [input_grad(g * sign(x), x)]
        zero = equal(x, 0)
        return [input_grad(where(zero, 0, g * out / where(zero, 1, x)), x)]


class Sign(Elemwise):
    """-1, 0 or 1 with the sign of x (NaN for NaN)."""

    kinds = "iuf"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.creation import zeros_like
        from rewritekit.tensor.gradient import input_grad

        # piecewise constant: zero almost everywhere (undefined at the jumps)
        return [input_grad(zeros_like(cotangents[0]), inputs[0])]


class Square(Elemwise):
    """x * x."""

    kinds = "iufc"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx x^2 = 2x
        (x,), (g,) = inputs, cotangents
        return [input_grad(2 * g * x, x)]


class Reciprocal(FloatElemwise):
    """1 / x, computed in floating point (NumPy's integer reciprocal truncates; ours does not)."""

    kinds = "biufc"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx 1/x = -1/x^2
        (x,), (out,), (g,) = inputs, outputs, cotangents
        return [input_grad(-g * out * out, x)]


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

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        (x, y), (out,), (g,) = inputs, outputs, cotangents
        gx, gy = _winner_grads(x, y, out, g)
        return [input_grad(gx, x), input_grad(gy, y)]


class Maximum(Extremum):
    """The elementwise larger of x and y; NaN if either is NaN."""


class Minimum(Extremum):
    """The elementwise smaller of x and y; NaN if either is NaN."""


class Clip(Elemwise):
    """min(max(x, lo), hi), in the promoted dtype of the three inputs."""

    nin = 3
    kinds = "iuf"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # clip(x, lo, hi) = minimum(maximum(x, lo), hi), differentiated as that composition
        (x, lo, hi), (out,), (g,) = inputs, outputs, cotangents
        low = maximum(x, lo)
        g_low, g_hi = _winner_grads(low, hi, out, g)
        g_x, g_lo = _winner_grads(x, lo, low, g_low)
        return [input_grad(g_x, x), input_grad(g_lo, lo), input_grad(g_hi, hi)]


class Where(Elemwise):
    """cond ? x : y, elementwise; cond is taken by truth value, x and y promote."""

    nin = 3

    def weak_dtype(self, strong: list[TensorType], weak: list[Any]) -> str:
        # The condition does not take part in promotion; only the branches do.
        return result_dtype(*strong[1:], *weak) if len(strong) > 1 else result_dtype(*weak)

    def prepare_inputs(self, *args: Any) -> tuple[Var, ...]:
        if len(args) == 3 and _is_weak_scalar(args[0]):
            args = (as_var(bool(args[0]), context="where: input 0"), *args[1:])
        return super().prepare_inputs(*args)

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        common = result_dtype(*dtypes[1:])
        return ("bool", common, common)

    def output_dtype(self, *dtypes: str) -> str:
        return result_dtype(*dtypes[1:])

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # each branch gets the cotangent where it was chosen; the condition gets none
        (cond, x, y), (g,) = inputs, cotangents
        return [None, input_grad(where(cond, g, 0), x), input_grad(where(cond, 0, g), y)]


class Floor(Elemwise):
    """The largest integer <= x, in x's dtype (integers are unchanged)."""

    kinds = "biuf"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.creation import zeros_like
        from rewritekit.tensor.gradient import input_grad

        # piecewise constant: zero almost everywhere (undefined at the jumps)
        return [input_grad(zeros_like(cotangents[0]), inputs[0])]


class Ceil(Elemwise):
    """The smallest integer >= x, in x's dtype (integers are unchanged)."""

    kinds = "biuf"

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.creation import zeros_like
        from rewritekit.tensor.gradient import input_grad

        # piecewise constant: zero almost everywhere (undefined at the jumps)
        return [input_grad(zeros_like(cotangents[0]), inputs[0])]


class Round(Elemwise):
    """x rounded to ``decimals`` decimals, halves to even (NumPy's and JAX's rule)."""

    __props__ = ("decimals",)
    kinds = "iuf"

    def __init__(self, decimals: int = 0) -> None:
        super().__init__(int(decimals))

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.creation import zeros_like
        from rewritekit.tensor.gradient import input_grad

        # piecewise constant: zero almost everywhere (undefined at the jumps)
        return [input_grad(zeros_like(cotangents[0]), inputs[0])]


class Cast(Elemwise):
    """x converted to ``dtype`` (NumPy's ``astype``: floats to ints truncate toward zero)."""

    __props__ = ("dtype",)

    def __init__(self, dtype: Any) -> None:
        super().__init__(TensorType(dtype).dtype)

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        return dtypes

    def output_dtype(self, *dtypes: str) -> str:
        return self.dtype

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # the identity on values: the gradient is cast back (None for integer and bool inputs)
        return [input_grad(cotangents[0], inputs[0])]


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


# --- float functions ------------------------------------------------------------------


class Exp(ComplexFloatElemwise):
    """e ** x. Domain: all x."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx e^x = e^x
        return [input_grad(cotangents[0] * outputs[0], inputs[0])]


class Exp2(FloatElemwise):
    """2 ** x. Domain: all x."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx 2^x = log(2) 2^x
        (x,), (out,), (g,) = inputs, outputs, cotangents
        return [input_grad(g * out * math.log(2), x)]


class Expm1(FloatElemwise):
    """exp(x) - 1, accurate for |x| << 1. Domain: all x."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx (e^x - 1) = e^x
        (x,), (out,), (g,) = inputs, outputs, cotangents
        return [input_grad(g * (out + 1), x)]


class Log(ComplexFloatElemwise):
    """Natural logarithm. Domain: x > 0 (log(0) = -inf; x < 0 gives NaN)."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx log(x) = 1/x
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / x, x)]


class Log2(FloatElemwise):
    """Base-2 logarithm. Domain: x > 0."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx log2(x) = 1 / (x log(2))
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / (x * math.log(2)), x)]


class Log10(FloatElemwise):
    """Base-10 logarithm. Domain: x > 0."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx log10(x) = 1 / (x log(10))
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / (x * math.log(10)), x)]


class Log1p(FloatElemwise):
    """log(1 + x), accurate for |x| << 1. Domain: x > -1."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx log(1 + x) = 1 / (1 + x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / (1 + x), x)]


class Sqrt(ComplexFloatElemwise):
    """Square root. Domain: x >= 0."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx sqrt(x) = 1 / (2 sqrt(x))
        (x,), (out,), (g,) = inputs, outputs, cotangents
        return [input_grad(g / (2 * out), x)]


class Sin(ComplexFloatElemwise):
    """Sine (radians)."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx sin(x) = cos(x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * cos(x), x)]


class Cos(ComplexFloatElemwise):
    """Cosine (radians)."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx cos(x) = -sin(x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(-g * sin(x), x)]


class Tan(FloatElemwise):
    """Tangent (radians)."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx tan(x) = 1 + tan(x)^2
        (x,), (out,), (g,) = inputs, outputs, cotangents
        return [input_grad(g * (1 + out * out), x)]


class Arcsin(FloatElemwise):
    """Inverse sine. Domain: -1 <= x <= 1."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx arcsin(x) = 1 / sqrt(1 - x^2); (1 - x)(1 + x) is accurate near |x| = 1
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / sqrt((1 - x) * (1 + x)), x)]


class Arccos(FloatElemwise):
    """Inverse cosine. Domain: -1 <= x <= 1."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx arccos(x) = -1 / sqrt(1 - x^2)
        (x,), (g,) = inputs, cotangents
        return [input_grad(-g / sqrt((1 - x) * (1 + x)), x)]


class Arctan(FloatElemwise):
    """Inverse tangent."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx arctan(x) = 1 / (1 + x^2)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / (1 + x * x), x)]


class Arctan2(FloatElemwise):
    """The angle of the point (x2, x1): arctan2(x1, x2) in (-pi, pi]."""

    nin = 2

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d arctan2(x1, x2) = (x2 dx1 - x1 dx2) / (x1^2 + x2^2)
        (x1, x2), (g,) = inputs, cotangents
        scale = g / (x1 * x1 + x2 * x2)
        return [input_grad(scale * x2, x1), input_grad(-scale * x1, x2)]


class Sinh(FloatElemwise):
    """Hyperbolic sine."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx sinh(x) = cosh(x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * cosh(x), x)]


class Cosh(FloatElemwise):
    """Hyperbolic cosine."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx cosh(x) = sinh(x)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g * sinh(x), x)]


class Tanh(ComplexFloatElemwise):
    """Hyperbolic tangent."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx tanh(x) = 1 - tanh(x)^2
        (x,), (out,), (g,) = inputs, outputs, cotangents
        return [input_grad(g * (1 - out * out), x)]


class Arcsinh(FloatElemwise):
    """Inverse hyperbolic sine."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx arcsinh(x) = 1 / sqrt(x^2 + 1)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / sqrt(x * x + 1), x)]


class Arccosh(FloatElemwise):
    """Inverse hyperbolic cosine. Domain: x >= 1."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx arccosh(x) = 1 / sqrt(x^2 - 1); (x - 1)(x + 1) is accurate near x = 1
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / sqrt((x - 1) * (x + 1)), x)]


class Arctanh(FloatElemwise):
    """Inverse hyperbolic tangent. Domain: -1 < x < 1."""

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx arctanh(x) = 1 / (1 - x^2)
        (x,), (g,) = inputs, cotangents
        return [input_grad(g / ((1 - x) * (1 + x)), x)]


class Logaddexp(FloatElemwise):
    """log(exp(x) + exp(y)), without overflow."""

    nin = 2
    commutative = True

    def vjp(
        self, inputs: tuple[Var, ...], outputs: tuple[Var, ...], cotangents: tuple[Var, ...]
    ) -> list[Var | None]:
        from rewritekit.tensor.gradient import input_grad

        # d/dx log(e^x + e^y) = e^x / (e^x + e^y) = e^(x - out), which cannot overflow
        (x, y), (out,), (g,) = inputs, outputs, cotangents
        return [input_grad(g * exp(x - out), x), input_grad(g * exp(y - out), y)]


# --- predicates and logic ---------------------------------------------------------------


class Equal(Predicate):
    """x == y."""

    nin = 2
    commutative = True


class NotEqual(Predicate):
    """x != y."""

    nin = 2
    commutative = True


class Less(Predicate):
    """x < y."""

    nin = 2
    kinds = "biuf"


class LessEqual(Predicate):
    """x <= y."""

    nin = 2
    kinds = "biuf"


class Greater(Predicate):
    """x > y."""

    nin = 2
    kinds = "biuf"


class GreaterEqual(Predicate):
    """x >= y."""

    nin = 2
    kinds = "biuf"


class Isnan(Predicate):
    """True where x is NaN."""


class Isinf(Predicate):
    """True where x is +inf or -inf."""


class Isfinite(Predicate):
    """True where x is neither NaN nor infinite."""


class LogicalAnd(Logical):
    """x and y, by truth value."""

    nin = 2
    commutative = True


class LogicalOr(Logical):
    """x or y, by truth value."""

    nin = 2
    commutative = True


class LogicalNot(Logical):
    """not x, by truth value."""


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
exp = Exp()
exp2 = Exp2()
expm1 = Expm1()
log = Log()
log2 = Log2()
log10 = Log10()
log1p = Log1p()
sqrt = Sqrt()
sin = Sin()
cos = Cos()
tan = Tan()
arcsin = Arcsin()
arccos = Arccos()
arctan = Arctan()
arctan2 = Arctan2()
sinh = Sinh()
cosh = Cosh()
tanh = Tanh()
arcsinh = Arcsinh()
arccosh = Arccosh()
arctanh = Arctanh()
logaddexp = Logaddexp()
equal = Equal()
not_equal = NotEqual()
less = Less()
less_equal = LessEqual()
greater = Greater()
greater_equal = GreaterEqual()
isnan = Isnan()
isinf = Isinf()
isfinite = Isfinite()
logical_and = LogicalAnd()
logical_or = LogicalOr()
logical_not = LogicalNot()


@pattern_function(Round)
def round(x: Any, decimals: int = 0) -> Var:
    """x rounded to ``decimals`` decimals, halves to even.

    Example:
        >>> round(rt.vector("x"), 2).dtype
        'float64'
    """
    return Round(decimals)(x)


__all__ = [
    "abs",
    "add",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "astype",
    "cast",
    "ceil",
    "clip",
    "cos",
    "cosh",
    "divide",
    "equal",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "isfinite",
    "isinf",
    "isnan",
    "less",
    "less_equal",
    "log",
    "log1p",
    "log2",
    "log10",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "power",
    "reciprocal",
    "round",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "subtract",
    "tan",
    "tanh",
    "true_divide",
    "where",
]
