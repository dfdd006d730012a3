"""Elementwise Ops: broadcasting and NumPy 2 dtype promotion with weak Python scalars."""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Op, TensorType, Var, as_var, broadcast_shapes, result_dtype
from rewritekit.ir.nodes import all_vars

__all__ = [
    "Add",
    "Elemwise",
    "Exp",
    "Log",
    "Log1p",
    "Multiply",
    "Negative",
    "Subtract",
    "TrueDivide",
    "add",
    "exp",
    "log",
    "log1p",
    "multiply",
    "negative",
    "subtract",
    "true_divide",
]


def _is_weak_scalar(value: object) -> bool:
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


class Elemwise(Op):
    """Base of elementwise Ops: inputs broadcast, the dtype follows NumPy 2 promotion.

    Python scalars are weak: ``x * 5.0`` keeps ``x``'s float dtype, and an integer input
    with a Python float gives ``float64``.
    """

    nin: ClassVar[int] = 1
    commutative: ClassVar[bool] = False

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
        if len(strong) == len(args):
            return tuple(strong[i] for i in range(len(args)))
        weak = [a for a in args if _is_weak_scalar(a)]
        dtype = result_dtype(*(v.type for v in strong.values()), *weak)
        inputs = []
        for i, arg in enumerate(args):
            if i in strong:
                inputs.append(strong[i])
            else:
                inputs.append(_weak_constant(arg, dtype, f"{self.name}: input {i}"))
        return tuple(inputs)

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        shape = broadcast_shapes(*(t.shape for t in input_types), op=self.name)
        return (TensorType(self.output_dtype(*(t.dtype for t in input_types)), shape),)

    def output_dtype(self, *dtypes: str) -> str:
        """The output dtype for these input dtypes (NumPy's promotion by default)."""
        return result_dtype(*dtypes)


def _weak_constant(value: numbers.Number, dtype: str, context: str) -> Var:
    if np.dtype(dtype).kind in "iu" and isinstance(value, int):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise GraphTypeError(
                f"{context}: Python int {value} is out of bounds for {dtype} "
                f"[{info.min}, {info.max}]"
            )
    return as_var(value, dtype=dtype, context=context)


class FloatUnary(Elemwise):
    """A unary function whose integer inputs compute in floating point (as NumPy's)."""

    def output_dtype(self, *dtypes: str) -> str:
        (dtype,) = dtypes
        if np.dtype(dtype).kind in "fc":
            return dtype
        return result_dtype(dtype, "float16")  # NumPy: int8 -> float16, int32 -> float64


class Add(Elemwise):
    """x + y."""

    nin = 2
    commutative = True


class Subtract(Elemwise):
    """x - y."""

    nin = 2


class Multiply(Elemwise):
    """x * y."""

    nin = 2
    commutative = True


class TrueDivide(Elemwise):
    """x / y; integer inputs divide in float64 (as NumPy's)."""

    nin = 2

    def output_dtype(self, *dtypes: str) -> str:
        dtype = result_dtype(*dtypes)
        return "float64" if np.dtype(dtype).kind in "biu" else dtype


class Negative(Elemwise):
    """-x."""


class Exp(FloatUnary):
    """exp(x). Domain: all x."""


class Log(FloatUnary):
    """Natural logarithm. Domain: x > 0 (log(0) = -inf)."""


class Log1p(FloatUnary):
    """log(1 + x), accurate for |x| << 1. Domain: x > -1."""


add = Add()
subtract = Subtract()
multiply = Multiply()
true_divide = TrueDivide()
negative = Negative()
exp = Exp()
log = Log()
log1p = Log1p()
