"""The other names NumPy 2 and ``jax.numpy`` give the same functions (the array API's
spellings among them): each is the very function of its first name, so a graph built
with either is the same graph."""

from __future__ import annotations

from rewritekit.tensor.elemwise import (
    abs,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    power,
    round,
)
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import flatten, transpose
from rewritekit.tensor.reduction import max, min

__all__ = [
    "absolute",
    "acos",
    "acosh",
    "amax",
    "amin",
    "around",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "concat",
    "permute_dims",
    "pow",
    "ravel",
]

absolute = abs
acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atan2, atanh = arctan, arctan2, arctanh
amax, amin = max, min
around = round
concat = concatenate
permute_dims = transpose
pow = power
ravel = flatten
