"""More of NumPy's array functions, built from the Ops (no Op of their own): arrays from
pieces and index grids (``block indices tril_indices triu_indices diagonal
fill_diagonal empty empty_like identity``), products (``vdot vecdot``), ``bitwise_count``,
NumPy's ``diag``/``trace`` at the top level, and the dtype queries and conversions that
``jax.numpy`` code calls on arrays (``ndim result_type promote_types issubdtype array
asarray``).

Lengths that decide a result's shape (``n`` of ``tril_indices``, the ``dimensions`` of
``indices``) are Python ints, as ``jax.numpy`` needs them.

Example:
    >>> rt.diagonal(rt.tensor("a", shape=(2, 3, 4)), axis1=1, axis2=2).type.shape
    (2, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Var, as_var
from rewritekit.ir.types import result_dtype
from rewritekit.tensor.axes import axis_index, is_int
from rewritekit.tensor.basic import as_tensor, constant
from rewritekit.tensor.complex_parts import conj
from rewritekit.tensor.creation import arange, eye, zeros, zeros_like
from rewritekit.tensor.diagonals import diag, trace
from rewritekit.tensor.elemwise import (
    abs,
    bitwise_and,
    cast,
    maximum,
    minimum,
    multiply,
    right_shift,
    subtract,
)
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import expand_dims, flatten, moveaxis
from rewritekit.tensor.reduction import sum as reduce_sum
from rewritekit.tensor.shape_vectors import shape_i
from rewritekit.tensor.subtensor import getitem, set_subtensor

__all__ = [
    "array",
    "asarray",
    "bitwise_count",
    "block",
    "diag",
    "diagonal",
    "empty",
    "empty_like",
    "fill_diagonal",
    "identity",
    "indices",
    "issubdtype",
    "ndim",
    "promote_types",
    "result_type",
    "trace",
    "tril_indices",
    "triu_indices",
    "vdot",
    "vecdot",
]


def _input(name: str, x: Any, label: str = "x") -> Var:
    return as_var(x, context=f"{name}: input {label!r}")


def _static_int(name: str, label: str, value: Any) -> int:
    if not is_int(value):
        raise GraphTypeError(
            f"{name}: {label} must be a Python int (it decides the result's shape; JAX needs "
            f"it static too), got {value!r}"
        )
    return int(value)


# --- conversions and dtype queries --------------------------------------------------------


def array(object: Any, dtype: Any = None) -> Var:
    """``object`` as a tensor: a Var as it is (cast to ``dtype`` if given), anything else a
    constant (``jnp.array``; nested lists of Vars are stacked)."""
    if isinstance(object, (list, tuple)) and any(_holds_var(o) for o in object):
        parts = [expand_dims(array(o, dtype), 0) for o in object]
        return concatenate(parts, axis=0)
    x = as_var(object, context="array: input 'object'")
    return x if dtype is None else cast(x, dtype)


def _holds_var(o: Any) -> bool:
    if isinstance(o, Var):
        return True
    return isinstance(o, (list, tuple)) and any(_holds_var(p) for p in o)


asarray = array


def ndim(x: Any) -> int:
    """The number of dimensions of ``x``."""
    return _input("ndim", x).ndim


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype NumPy's promotion gives to these tensors, values and dtypes together, as the
    Ops promote them (Python numbers are weak: ``result_type(float32_x, 1.0)`` is float32).
    """
    dtypes = [
        item.type
        if isinstance(item, Var)
        else item
        if isinstance(item, (bool, int, float, complex))
        else getattr(item, "dtype", item)
        for item in arrays_and_dtypes
    ]
    return np.dtype(result_dtype(*dtypes))


def promote_types(a: Any, b: Any) -> np.dtype:
    """NumPy's promotion of two dtypes."""
    return np.promote_types(np.dtype(a), np.dtype(b))


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """NumPy's ``issubdtype``, taking tensors' dtypes too."""
    first = arg1.dtype if isinstance(arg1, Var) else arg1
    return bool(np.issubdtype(first, arg2))


# --- creation -----------------------------------------------------------------------------


def empty(shape: Any, dtype: Any = "float64") -> Var:
    """A tensor of ``shape``; its contents are zeros (XLA has no uninitialized memory)."""
    return zeros(shape, dtype)


def empty_like(x: Any, dtype: Any = None) -> Var:
    """A tensor like ``x``; zeros, as ``empty``."""
    return zeros_like(_input("empty_like", x), dtype)


def identity(n: Any, dtype: Any = "float64") -> Var:
    """The ``n`` by ``n`` identity matrix."""
    return eye(n, dtype=dtype)


def indices(dimensions: Sequence[int], dtype: Any = "int64", sparse: bool = False) -> Any:
    """The index grid of a shape: ``indices((2, 3))[0][i, j] == i``, as ``np.indices``;
    with ``sparse``, a tuple of arrays broadcastable to the grid. A constant."""
    dims = [_static_int("indices", "each dimension", d) for d in dimensions]
    grid = np.indices(dims, dtype=np.dtype(dtype), sparse=sparse)
    if sparse:
        return tuple(constant(g) for g in grid)
    return constant(grid)


def _triangle_indices(name: str, n: Any, k: Any, m: Any, lower: bool) -> tuple[Var, Var]:
    n = _static_int(name, "n", n)
    k = _static_int(name, "k", k)
    m = n if m is None else _static_int(name, "m", m)
    rows, cols = (np.tril_indices if lower else np.triu_indices)(n, k, m)
    return constant(rows.astype(np.int64)), constant(cols.astype(np.int64))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Var, Var]:
    """The row and column indices of the lower triangle (diagonal ``k`` and below) of an
    ``n`` by ``m`` matrix, as ``np.tril_indices`` (constants)."""
    return _triangle_indices("tril_indices", n, k, m, lower=True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Var, Var]:
    """The row and column indices of the upper triangle (diagonal ``k`` and above), as
    ``np.triu_indices`` (constants)."""
    return _triangle_indices("triu_indices", n, k, m, lower=False)


# --- diagonals ----------------------------------------------------------------------------


def _diagonal_positions(a: Var, offset: int, n_axis: int, m_axis: int) -> tuple[Var, Var]:
    """Row and column index vectors of diagonal ``offset`` of axes n_axis, m_axis."""
    n, m = a.type.shape[n_axis], a.type.shape[m_axis]
    row0, col0 = max(-offset, 0), max(offset, 0)
    if n is not None and m is not None:
        length: Any = max(min(n - row0, m - col0), 0)
    else:
        n_, m_ = shape_i(a, n_axis), shape_i(a, m_axis)
        length = maximum(minimum(subtract(n_, row0), subtract(m_, col0)), 0)
    index = arange(length)
    return index + row0, index + col0


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Var:
    """Diagonal ``offset`` of the planes of axes ``axis1``, ``axis2``, as a new last axis
    (``np.diagonal``).

    Raises:
        ShapeError: ``a`` has fewer than 2 dimensions, or the two axes are the same.
    """
    a = _input("diagonal", a, "a")
    if a.ndim < 2:
        raise ShapeError(f"diagonal: input 'a' needs 2 or more dimensions, got {a.type}")
    offset = _static_int("diagonal", "offset", offset)
    first = axis_index("diagonal", axis1, a.ndim, a)
    second = axis_index("diagonal", axis2, a.ndim, a)
    if first == second:
        raise ShapeError(f"diagonal: axis1 and axis2 are the same axis ({first})")
    planes = moveaxis(a, (first, second), (-2, -1))
    rows, cols = _diagonal_positions(planes, offset, -2 % planes.ndim, -1 % planes.ndim)
    return getitem(planes, (Ellipsis, rows, cols))


def fill_diagonal(a: Any, val: Any) -> Var:
    """``a`` with its main diagonal (``a[i, i, ..., i]``) set to ``val`` (a scalar or one
    value per diagonal element), as PyTensor's ``fill_diagonal``; NumPy's fills in place.

    Raises:
        ShapeError: ``a`` has fewer than 2 dimensions, or more than 2 of unequal lengths.
    """
    a = _input("fill_diagonal", a, "a")
    if a.ndim < 2:
        raise ShapeError(f"fill_diagonal: input 'a' needs 2 or more dimensions, got {a.type}")
    if a.ndim > 2 and len({n for n in a.type.shape}) != 1:
        raise ShapeError(
            f"fill_diagonal: a {a.ndim}-d input must have equal static lengths, got {a.type}"
        )
    if a.ndim == 2:
        rows, _ = _diagonal_positions(a, 0, 0, 1)
    else:
        rows = arange(a.type.shape[0])
    return set_subtensor(getitem(a, (rows,) * a.ndim), val)


# --- products -----------------------------------------------------------------------------


def vdot(a: Any, b: Any) -> Var:
    """The dot product of ``a`` and ``b`` flattened (complex ``a`` conjugated), as
    ``np.vdot``."""
    a, b = _input("vdot", a, "a"), _input("vdot", b, "b")
    if a.type.kind == "c":
        a = conj(a)
    return reduce_sum(multiply(flatten(a), flatten(b)))


def vecdot(x1: Any, x2: Any, axis: int = -1) -> Var:
    """The dot products of ``x1`` and ``x2`` along ``axis`` (broadcast over the others;
    complex ``x1`` conjugated), as the array API's ``vecdot``.

    Raises:
        ShapeError: the two lengths along ``axis`` differ.
    """
    x1, x2 = _input("vecdot", x1, "x1"), _input("vecdot", x2, "x2")
    n1 = x1.type.shape[axis_index("vecdot", axis, x1.ndim, x1)]
    n2 = x2.type.shape[axis_index("vecdot", axis, x2.ndim, x2)]
    if n1 is not None and n2 is not None and n1 != n2:
        raise ShapeError(f"vecdot: the lengths along axis {axis} differ: {n1} and {n2}")
    if x1.type.kind == "c":
        x1 = conj(x1)
    return reduce_sum(multiply(moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)), axis=-1)


# --- blocks -------------------------------------------------------------------------------


def _depth(arrays: Any, path: str) -> int:
    if isinstance(arrays, list):
        if not arrays:
            raise ShapeError(f"block: the list at {path or 'the top'} is empty")
        depths = {_depth(a, f"{path}[{i}]") for i, a in enumerate(arrays)}
        if len(depths) != 1:
            raise ShapeError(f"block: the lists at {path or 'the top'} are nested unevenly")
        return depths.pop() + 1
    if isinstance(arrays, tuple):
        raise GraphTypeError(f"block: {path or 'the input'} is a tuple; NumPy's block takes lists")
    return 0


def _leaves(arrays: Any) -> list[Var]:
    if isinstance(arrays, list):
        return [leaf for a in arrays for leaf in _leaves(a)]
    return [_input("block", arrays, "arrays")]


def _assemble(arrays: Any, depth: int, ndim: int) -> Var:
    if not isinstance(arrays, list):
        x = _input("block", arrays, "arrays")
        return expand_dims(x, tuple(range(ndim - x.ndim))) if x.ndim < ndim else x
    parts = [_assemble(a, depth - 1, ndim) for a in arrays]
    return concatenate(parts, axis=-depth)


def block(arrays: Any) -> Var:
    """An array assembled from nested lists of blocks, as ``np.block``: the innermost lists
    join along the last axis, the next along the one before, and blocks with fewer
    dimensions get leading length-1 axes.

    Raises:
        ShapeError: the lists are empty or nested unevenly, or the blocks do not fit.
    """
    depth = _depth(arrays, "")
    ndim = max(depth, *(leaf.ndim for leaf in _leaves(arrays)))
    if depth == 0:
        return _assemble(arrays, 0, 0)
    return _assemble(arrays, depth, ndim)


# --- bits ---------------------------------------------------------------------------------

_MASKS = {
    8: (0x55, 0x33, 0x0F, 0x01),
    16: (0x5555, 0x3333, 0x0F0F, 0x0101),
    32: (0x55555555, 0x33333333, 0x0F0F0F0F, 0x01010101),
    64: (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101),
}


def bitwise_count(x: Any) -> Var:
    """The number of 1 bits in ``|x|``, as ``np.bitwise_count`` (uint8), by the classic
    parallel bit count (shifts, masks and one multiply).

    Raises:
        DTypeError: ``x`` is not an integer or boolean tensor.
    """
    x = _input("bitwise_count", x)
    if x.type.kind == "b":
        return cast(x, "uint8")
    if x.type.kind not in "iu":
        raise DTypeError(
            f"bitwise_count: input 'x' must be an integer or boolean tensor, got {x.type}"
        )
    bits = np.dtype(x.dtype).itemsize * 8
    unsigned = f"uint{bits}"
    u = cast(abs(x) if x.type.kind == "i" else x, unsigned)
    m1, m2, m4, h01 = (as_tensor(np.array(m, dtype=unsigned)) for m in _MASKS[bits])
    one, two, four = (as_tensor(np.array(s, dtype=unsigned)) for s in (1, 2, 4))
    u = subtract(u, bitwise_and(right_shift(u, one), m1))
    u = bitwise_and(u, m2) + bitwise_and(right_shift(u, two), m2)
    u = bitwise_and(u + right_shift(u, four), m4)
    if bits > 8:
        u = right_shift(multiply(u, h01), as_tensor(np.array(bits - 8, dtype=unsigned)))
    return cast(u, "uint8")
