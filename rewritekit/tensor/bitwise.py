"""Bitwise operations on integers and bools, as NumPy's: ``bitwise_and``, ``bitwise_or``,
``bitwise_xor``, ``bitwise_not`` (``invert``), ``left_shift`` and ``right_shift``.

Inputs promote by NumPy's rules and the result has the promoted dtype. On bools the
first four are the logical operations (``bitwise_and(x, y)`` equals ``logical_and(x, y)``,
``invert(x)`` equals ``logical_not(x)``); the shifts take integers only. Integer results
carry no gradient, so none of these Ops is differentiable. The operators ``& | ^ ~ << >>``
on integer Vars build these Ops (``rewritekit.tensor.variable``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rewritekit.errors import DTypeError
from rewritekit.ir import TensorType
from rewritekit.tensor.ufunc import Elemwise

__all__ = [
    "bitcast_convert_type",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "invert",
    "left_shift",
    "right_shift",
]


class Bitwise(Elemwise):
    """An operation on the bits of integers (and on bools, as truth values)."""

    abstract = True
    differentiable = False  # integer and bool results carry no gradient
    kinds = "biu"


class BitwiseAnd(Bitwise):
    """x & y, bit by bit."""

    nin = 2
    commutative = True


class BitwiseOr(Bitwise):
    """x | y, bit by bit."""

    nin = 2
    commutative = True


class BitwiseXor(Bitwise):
    """x ^ y, bit by bit (on bools: x != y)."""

    nin = 2
    commutative = True


class BitwiseNot(Bitwise):
    """~x, every bit flipped (two's complement: ~x == -x - 1 for signed integers; on bools:
    not x)."""


class LeftShift(Bitwise):
    """x << y: the bits of x moved y places up (x * 2**y while it fits; a shift by the
    dtype's width or more gives 0). Integers only; y >= 0."""

    nin = 2
    kinds = "iu"


class RightShift(Bitwise):
    """x >> y: the bits of x moved y places down, the sign kept (floor(x / 2**y); a shift by
    the dtype's width or more gives 0, or -1 for negative x). Integers only; y >= 0."""

    nin = 2
    kinds = "iu"


bitwise_and = BitwiseAnd()
bitwise_or = BitwiseOr()
bitwise_xor = BitwiseXor()
bitwise_not = BitwiseNot()
invert = bitwise_not
bitwise_invert = bitwise_not  # NumPy 2's array-API name
left_shift = LeftShift()
right_shift = RightShift()
bitwise_left_shift = left_shift  # NumPy 2's array-API names
bitwise_right_shift = right_shift


class BitcastConvert(Elemwise):
    """The bits of x read as ``dtype``, of the same width (``x.view(dtype)`` in NumPy,
    ``jax.lax.bitcast_convert_type``): float32 1.0 is uint32 0x3F800000."""

    __props__ = ("dtype",)
    differentiable = False  # a reinterpretation of bits has no derivative
    kinds = "biuf"

    def __init__(self, dtype: Any) -> None:
        super().__init__(TensorType(dtype).dtype)

    def cast_dtypes(self, *dtypes: str) -> tuple[str, ...]:
        return dtypes

    def output_dtype(self, *dtypes: str) -> str:
        (source,) = dtypes
        if np.dtype(source).itemsize != np.dtype(self.dtype).itemsize:
            raise DTypeError(
                f"bitcast_convert_type: {source} and {self.dtype} differ in width; the bits "
                "of an element are read as one element of the new dtype"
            )
        return self.dtype


def bitcast_convert_type(x: Any, new_dtype: Any) -> Any:
    """The bits of ``x`` read as ``new_dtype`` (of the same width), as
    ``jax.lax.bitcast_convert_type``.

    Raises:
        DTypeError: the two dtypes differ in width.
    """
    return BitcastConvert(new_dtype)(x)
