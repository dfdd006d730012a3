"""Small Ops defined the way a user would, for testing the IR on its own."""

from __future__ import annotations

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Op, TensorType


class MinMax(Op):
    """Two outputs: the smallest and the largest element (scalars)."""

    def infer_types(self, x):
        return (TensorType(x.dtype, ()), TensorType(x.dtype, ()))


class Scale(Op):
    """x * factor; the factor is a parameter, so Scale(2.0) and Scale(3.0) differ."""

    __props__ = ("factor",)

    def infer_types(self, x):
        if x.kind not in "fc":
            raise GraphTypeError(f"scale: expected a float input, got {x}")
        return (x,)


class Pair(Op):
    """Concatenates two vectors of one dtype."""

    def infer_types(self, a, b):
        if a.dtype != b.dtype:
            raise GraphTypeError(f"pair: dtypes differ: {a.dtype} and {b.dtype}")
        return (TensorType(a.dtype, (None,)),)


class BadTypes(Op):
    """infer_types returns something that is not a type."""

    def infer_types(self, x):
        return ("float64",)
