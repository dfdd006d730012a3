"""Bitwise operations on integers and bools, as NumPy's: ``bitwise_and``, ``bitwise_or``,
``bitwise_xor``, ``bitwise_not`` (``invert``), ``left_shift`` and ``right_shift``.

Inputs promote by NumPy's rules and the result has the promoted dtype. On bools the
first four are the logical operations (``bitwise_and(x, y)`` equals ``logical_and(x, y)``,
``invert(x)`` equals ``logical_not(x)``); the shifts take integers only. Integer results
carry no gradient, so none of these Ops is differentiable. The operators ``& | ^ ~ << >>``
on integer Vars build these Ops (``rewritekit.tensor.variable``).
"""

from __future__ import annotations

from rewritekit.tensor.ufunc import Elemwise

__all__ = [
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
