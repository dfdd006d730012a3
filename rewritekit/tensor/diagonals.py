"""Diagonals: ``trace`` and ``diag`` (the ``rt.linalg`` namespace holds them too).

``trace`` has NumPy's sum dtype (bool and narrow integers accumulate in 64 bits), ``diag``
the input's dtype.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Grads, Op, TensorType, Var, Vars, as_var, short_name
from rewritekit.ir.patterns import pattern_function
from rewritekit.tensor.axes import is_int
from rewritekit.tensor.contractions import grad_as
from rewritekit.tensor.creation import arange, eye, zeros
from rewritekit.tensor.shapes import expand_dims, shape, shape_i
from rewritekit.tensor.subtensor import set_subtensor

__all__ = ["diag", "trace"]

Length = int | None


def _input(name: str, a: Any, position: int = 0) -> Var:
    return as_var(a, context=f"{name}: input {position}")


@functools.lru_cache(maxsize=64)
def _trace_dtype(dtype: str) -> str:
    # NumPy's own rule (that of sum): asked of NumPy rather than restated.
    return np.trace(np.zeros((1, 1), dtype=dtype)).dtype.name


def _offset(name: str, k: Any, what: str) -> int:
    if not is_int(k):
        raise GraphTypeError(f"{name}: {what} must be an int, got {k!r}")
    return int(k)


def _diagonal_length(n: Length, m: Length, k: int) -> Length:
    """The length of diagonal ``k`` of an (n, m) matrix (0 where it misses the matrix)."""
    if n == 0 or m == 0:
        return 0
    if k >= 0 and m is not None and m - k <= 0:
        return 0
    if k < 0 and n is not None and n + k <= 0:
        return 0
    if n is None or m is None:
        return None
    return max(0, min(n, m - k) if k >= 0 else min(n + k, m))


class Trace(Op):
    """The sum of diagonal ``offset`` of the matrices in the first two axes (NumPy's
    ``trace``): ``trace(a)[...] = sum_i a[i, i + offset, ...]``; an empty diagonal gives 0."""

    __props__ = ("offset",)

    offset: int

    def __init__(self, offset: int = 0) -> None:
        super().__init__(_offset("trace", offset, "offset"))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (a,) = input_types
        if a.ndim < 2:
            raise ShapeError(f"trace: input must be at least 2-d, got a {a.ndim}-d input")
        return (TensorType(_trace_dtype(a.dtype), a.shape[2:]),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # each element on diagonal `offset` enters the sum once: it receives g
        (a,), (g,) = inputs, cotangents
        ones = eye(shape_i(a, 0), shape_i(a, 1), k=self.offset, dtype=g.dtype)
        return [grad_as(expand_dims(ones, tuple(range(2, a.ndim))) * g, a)]


class AllocDiag(Op):
    """The square matrix with the vector on its diagonal ``k`` and zeros elsewhere
    (``np.diag`` of a 1-d input): (n,) -> (n + |k|, n + |k|)."""

    __props__ = ("k",)

    k: int

    def __init__(self, k: int = 0) -> None:
        super().__init__(_offset("diag", k, "k"))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (v,) = input_types
        if v.ndim != 1:
            raise ShapeError(f"diag: AllocDiag needs a 1-d input, got a {v.ndim}-d input")
        n = None if v.shape[0] is None else v.shape[0] + abs(self.k)
        return (TensorType(v.dtype, (n, n)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # v[i] is placed on diagonal k: it receives g's diagonal k
        (v,), (g,) = inputs, cotangents
        return [grad_as(ExtractDiag(self.k)(g), v)]


class ExtractDiag(Op):
    """Diagonal ``k`` of a matrix, as a vector (``np.diag`` of a 2-d input); empty where
    the diagonal misses the matrix."""

    __props__ = ("k",)

    k: int

    def __init__(self, k: int = 0) -> None:
        super().__init__(_offset("diag", k, "k"))

    def infer_types(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (a,) = input_types
        if a.ndim != 2:
            raise ShapeError(f"diag: ExtractDiag needs a 2-d input, got a {a.ndim}-d input")
        return (TensorType(a.dtype, (_diagonal_length(*a.shape, self.k),)),)

    def vjp(self, inputs: Vars, outputs: Vars, cotangents: Vars) -> Grads:
        # the result reads a[i + max(-k, 0), i + max(k, 0)]: g goes back there, 0 elsewhere
        (a,), (g,) = inputs, cotangents
        index = arange(shape_i(g, 0))
        rows = index - self.k if self.k < 0 else index
        cols = index + self.k if self.k > 0 else index
        return [grad_as(set_subtensor(zeros(shape(a), dtype=g.dtype)[rows, cols], g), a)]


@pattern_function(Trace, inputs=("a",))
def trace(a: Any, offset: int = 0) -> Var:
    """The sum along diagonal ``offset`` of the first two axes, as ``np.trace``.

    Raises:
        ShapeError: ``a`` has fewer than 2 dimensions.
        GraphTypeError: ``offset`` is not an int.

    Example:
        >>> rt.linalg.trace(rt.tensor("a", shape=(3, 3, 5)), offset=1).type
        TensorType(dtype='float64', shape=(5,))
    """
    return Trace(_offset("trace", offset, "offset"))(_input("trace", a))


@pattern_function(AllocDiag, ExtractDiag, inputs=("v",))
def diag(v: Any, k: int = 0) -> Var:
    """As ``np.diag``: a 1-d ``v`` gives the matrix with ``v`` on diagonal ``k``; a 2-d
    ``v`` gives its diagonal ``k``.

    Raises:
        ShapeError: ``v`` is neither 1-d nor 2-d.
        GraphTypeError: ``k`` is not an int.

    Example:
        >>> rt.linalg.diag(rt.vector("v", shape=(3,)), k=-1).type
        TensorType(dtype='float64', shape=(4, 4))
    """
    x = _input("diag", v)
    k = _offset("diag", k, "k")
    if x.ndim == 1:
        return AllocDiag(k)(x)
    if x.ndim == 2:
        return ExtractDiag(k)(x)
    raise ShapeError(f"diag: input must be 1-d or 2-d, got a {x.ndim}-d input ({short_name(x)})")
