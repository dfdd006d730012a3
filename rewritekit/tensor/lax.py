"""``rt.lax``: ``jax.lax``'s spellings, for code written against it (and for the importer of
JAX functions, whose primitives have these names): each builds the graph of the NumPy-style
function with the same meaning, so rules, gradients and batching apply unchanged.

Where ``jax.lax`` is stricter than NumPy (``select`` and ``add`` want equal shapes), the
functions here broadcast as NumPy does; where it differs in meaning, they follow
``jax.lax``: ``div`` of integers rounds toward zero, ``clamp``'s derivative is 0 at the
bounds, the ``dynamic_*`` functions clamp their starts into range (negative starts count
from the end first), and ``scatter_add``/``gather`` take XLA's dimension numbers.

Example:
    >>> x = rt.vector("x")
    >>> rt.lax.dynamic_slice_in_dim(x, rt.scalar("i", dtype="int64"), 2).type.shape
    (2,)
"""

from __future__ import annotations

import builtins
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Var, as_var
from rewritekit.ir.nodes import short_name
from rewritekit.tensor.aggregates import all as reduce_and
from rewritekit.tensor.aggregates import any as reduce_or
from rewritekit.tensor.aggregates import argmax as _argmax
from rewritekit.tensor.aggregates import argmin as _argmin
from rewritekit.tensor.aggregates import max as reduce_max
from rewritekit.tensor.aggregates import min as reduce_min
from rewritekit.tensor.aggregates import prod as reduce_prod
from rewritekit.tensor.aggregates import sum as reduce_sum
from rewritekit.tensor.axes import axis_index, is_int
from rewritekit.tensor.bitwise import bitcast_convert_type
from rewritekit.tensor.complex_parts import complex
from rewritekit.tensor.control import cond, fori_loop, map, scan, while_loop
from rewritekit.tensor.control.api import switch
from rewritekit.tensor.creation import arange, full
from rewritekit.tensor.cumulative import cumprod as _cumprod
from rewritekit.tensor.cumulative import cumsum as _cumsum
from rewritekit.tensor.cumulative import logcumsumexp as _logcumsumexp
from rewritekit.tensor.dynamic import dynamic_slice, dynamic_update_slice
from rewritekit.tensor.einstein import einsum
from rewritekit.tensor.elemwise import (
    abs,
    add,
    cast,
    ceil,
    cos,
    equal,
    exp,
    exp2,
    expm1,
    floor,
    floor_divide,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    where,
)
from rewritekit.tensor.everyday import broadcast_shapes
from rewritekit.tensor.gradient import stop_gradient
from rewritekit.tensor.joining import concatenate as _concatenate
from rewritekit.tensor.layout import broadcast_to, expand_dims
from rewritekit.tensor.layout import reshape as _reshape
from rewritekit.tensor.layout import squeeze as _squeeze
from rewritekit.tensor.layout import transpose as _transpose
from rewritekit.tensor.ordering import cummax, cummin, lexsort, take_along_axis, top_k
from rewritekit.tensor.products import matmul
from rewritekit.tensor.shape_vectors import shape_i
from rewritekit.tensor.sorting import sort as _sort
from rewritekit.tensor.special import digamma, erf, erfc, erfinv, gammaln, sigmoid
from rewritekit.tensor.subtensor import getitem, inc_subtensor, set_subtensor

__all__ = [
    "abs",
    "add",
    "argmax",
    "argmin",
    "bitcast_convert_type",
    "broadcast_in_dim",
    "broadcast_shapes",
    "ceil",
    "clamp",
    "complex",
    "concatenate",
    "cond",
    "convert_element_type",
    "cos",
    "cumlogsumexp",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "digamma",
    "div",
    "dot",
    "dot_general",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "eq",
    "erf",
    "erf_inv",
    "erfc",
    "exp",
    "exp2",
    "expand_dims",
    "expm1",
    "floor",
    "fori_loop",
    "gather",
    "ge",
    "gt",
    "index_take",
    "integer_pow",
    "iota",
    "le",
    "lgamma",
    "log",
    "log1p",
    "logistic",
    "lt",
    "map",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "pad",
    "pow",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_prod",
    "reduce_sum",
    "reshape",
    "rsqrt",
    "scan",
    "scatter",
    "scatter_add",
    "scatter_max",
    "select",
    "select_n",
    "sign",
    "sin",
    "slice",
    "slice_in_dim",
    "sort",
    "sqrt",
    "square",
    "squeeze",
    "stop_gradient",
    "sub",
    "switch",
    "tan",
    "tanh",
    "top_k",
    "transpose",
    "while_loop",
]

mul, sub, neg, pow = multiply, subtract, negative, power
max, min = maximum, minimum
eq, ne, lt, le, gt, ge = equal, not_equal, less, less_equal, greater, greater_equal
lgamma, logistic, erf_inv = gammaln, sigmoid, erfinv


def _x(name: str, x: Any, label: str = "operand") -> Var:
    return as_var(x, context=f"lax.{name}: input {label!r}")


def _static(name: str, label: str, value: Any) -> int:
    if not is_int(value):
        raise GraphTypeError(f"lax.{name}: {label} must be a Python int, got {value!r}")
    return int(value)


def _axes(name: str, label: str, values: Any) -> tuple[int, ...]:
    return tuple(_static(name, label, v) for v in values)


# --- elementwise --------------------------------------------------------------------------


def rsqrt(x: Any) -> Var:
    """1 / sqrt(x)."""
    return 1.0 / sqrt(_x("rsqrt", x, "x"))


def integer_pow(x: Any, y: int) -> Var:
    """x ** y for a static int ``y`` (negative too, for floats)."""
    return power(_x("integer_pow", x, "x"), _static("integer_pow", "y", y))


def div(x: Any, y: Any) -> Var:
    """x / y, rounding toward zero for integers (C's division, as ``jax.lax.div``)."""
    x, y = _x("div", x, "x"), _x("div", y, "y")
    if x.type.kind in "iu" and y.type.kind in "iu":
        q = floor_divide(x, y)
        inexact = not_equal(q * y, x)
        signs_differ = not_equal(less(x, 0), less(y, 0))
        return where(logical_and(inexact, signs_differ), q + 1, q)
    return true_divide(x, y)


def convert_element_type(operand: Any, new_dtype: Any) -> Var:
    """``operand`` converted to ``new_dtype``."""
    return cast(_x("convert_element_type", operand), new_dtype)


def clamp(min: Any, x: Any, max: Any) -> Var:
    """``x`` clipped to [min, max]; as ``jax.lax.clamp``, the derivative in ``x`` is 1 strictly
    inside and 0 elsewhere, that in a bound 1 where ``x`` is strictly beyond it."""
    x = _x("clamp", x, "x")
    lo, hi = _x("clamp", min, "min"), _x("clamp", max, "max")
    inside = where(logical_or(equal(x, lo), equal(x, hi)), stop_gradient(x), x)
    return where(less(x, lo), lo, where(greater(x, hi), hi, inside))


def select(pred: Any, on_true: Any, on_false: Any) -> Var:
    """``on_true`` where ``pred``, else ``on_false`` (broadcast as ``where``)."""
    return where(_x("select", pred, "pred"), on_true, on_false)


def select_n(which: Any, *cases: Any) -> Var:
    """``cases[which]`` elementwise: ``which`` boolean (two cases) or integer."""
    which = _x("select_n", which, "which")
    if not cases:
        raise GraphTypeError("lax.select_n: needs at least one case")
    if which.type.kind == "b":
        if len(cases) != 2:
            raise GraphTypeError(
                f"lax.select_n: a boolean 'which' selects between 2 cases, got {len(cases)}"
            )
        return where(which, cases[1], cases[0])
    out = as_var(cases[-1], context="lax.select_n: a case")
    for i in range(len(cases) - 2, -1, -1):
        out = where(equal(which, i), cases[i], out)
    return out


# --- shapes -------------------------------------------------------------------------------


def broadcast_in_dim(
    operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]
) -> Var:
    """``operand`` placed at axes ``broadcast_dimensions`` of a result of ``shape``."""
    x = _x("broadcast_in_dim", operand)
    dims = _axes("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    if len(dims) != x.ndim:
        raise ShapeError(
            f"lax.broadcast_in_dim: {len(dims)} broadcast_dimensions for a {x.ndim}-d operand"
        )
    target = tuple(shape)
    _check_broadcast_in_dim(x, target, dims)
    if dims == tuple(range(len(target) - len(dims), len(target))):
        return broadcast_to(x, target)  # the trailing axes: NumPy's broadcasting
    new = tuple(a for a in range(len(target)) if a not in dims)
    placed = expand_dims(x, new) if new else x
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    if order != list(range(len(dims))):  # dims out of order: transpose the operand first
        placed = expand_dims(_transpose(x, order), new) if new else _transpose(x, order)
    if placed.type.shape == target:  # only length-1 axes added (keepdims)
        return placed
    return broadcast_to(placed, target)


def _check_broadcast_in_dim(x: Var, shape: tuple[Any, ...], dims: tuple[int, ...]) -> None:
    """XLA's conditions, named here: distinct axes of the result, and each operand length
    1 or the length of its result axis."""
    rank = len(shape)
    if len(set(dims)) != len(dims) or not all(0 <= d < rank for d in dims):
        raise ShapeError(
            f"lax.broadcast_in_dim: broadcast_dimensions {dims} must be distinct axes of the "
            f"{rank}-d result shape {shape}"
        )
    for axis, (n, d) in enumerate(zip(x.type.shape, dims, strict=True)):
        if n not in (None, 1) and is_int(shape[d]) and n != shape[d]:
            raise ShapeError(
                f"lax.broadcast_in_dim: operand axis {axis} of {short_name(x)} has length {n}, "
                f"result axis {d} has {shape[d]} (it must be 1 or equal)"
            )


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Var:
    """``operand`` (transposed by ``dimensions`` first) reshaped to ``new_sizes``."""
    x = _x("reshape", operand)
    if dimensions is not None:
        x = _transpose(x, _axes("reshape", "dimensions", dimensions))
    return _reshape(x, tuple(new_sizes))


def squeeze(array: Any, dimensions: Sequence[int]) -> Var:
    """``array`` without the length-1 axes ``dimensions``."""
    return _squeeze(_x("squeeze", array, "array"), _axes("squeeze", "dimensions", dimensions))


def transpose(operand: Any, permutation: Sequence[int]) -> Var:
    """``operand``'s axes in the order ``permutation``."""
    return _transpose(_x("transpose", operand), _axes("transpose", "permutation", permutation))


def concatenate(operands: Sequence[Any], dimension: int) -> Var:
    """``operands`` joined along ``dimension``."""
    return _concatenate(list(operands), axis=_static("concatenate", "dimension", dimension))


def iota(dtype: Any, size: int) -> Var:
    """0, 1, ..., size - 1 of ``dtype``."""
    return arange(_static("iota", "size", size), dtype=dtype)


# --- reductions, sorts, scans -------------------------------------------------------------


def argmax(operand: Any, axis: int, index_dtype: Any) -> Var:
    """The index of the largest element along ``axis``, of ``index_dtype``."""
    return cast(_argmax(_x("argmax", operand), axis=_static("argmax", "axis", axis)), index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Var:
    """The index of the smallest element along ``axis``, of ``index_dtype``."""
    return cast(_argmin(_x("argmin", operand), axis=_static("argmin", "axis", axis)), index_dtype)


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """``operand`` sorted along ``dimension``; a sequence of operands is sorted by the first
    ``num_keys`` of them (lexicographically), all permuted alike, as ``jax.lax.sort``."""
    del is_stable  # every sort here is stable
    if isinstance(operand, (list, tuple)):
        arrays = [_x("sort", o) for o in operand]
        keys = arrays[: _static("sort", "num_keys", num_keys)]
        order = lexsort(tuple(reversed(keys)), axis=dimension)
        return tuple(take_along_axis(a, order, axis=dimension) for a in arrays)
    return _sort(_x("sort", operand), axis=_static("sort", "dimension", dimension))


def _reversed(x: Var, axis: int) -> Var:
    return getitem(x, (builtins.slice(None),) * (axis % x.ndim) + (builtins.slice(None, None, -1),))


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Var:
    """Running sums along ``axis`` (from the end with ``reverse``)."""
    x = _x("cumsum", operand)
    if reverse:
        return _reversed(_cumsum(_reversed(x, axis), axis=axis), axis)
    return _cumsum(x, axis=axis)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Var:
    """Running products along ``axis`` (from the end with ``reverse``)."""
    x = _x("cumprod", operand)
    if reverse:
        return _reversed(_cumprod(_reversed(x, axis), axis=axis), axis)
    return _cumprod(x, axis=axis)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Var:
    """Running log-sum-exps along ``axis`` (from the end with ``reverse``)."""
    x = _x("cumlogsumexp", operand)
    if reverse:
        return _reversed(_logcumsumexp(_reversed(x, axis), axis=axis), axis)
    return _logcumsumexp(x, axis=axis)


def _reduction(fn: Any, name: str) -> Any:
    def reduce(operand: Any, axes: Sequence[int]) -> Var:
        return fn(_x(name, operand), axis=_axes(name, "axes", axes))

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"``jax.lax.{name}`` over ``axes``."
    return reduce


reduce_sum = _reduction(reduce_sum, "reduce_sum")
reduce_prod = _reduction(reduce_prod, "reduce_prod")
reduce_max = _reduction(reduce_max, "reduce_max")
reduce_min = _reduction(reduce_min, "reduce_min")
reduce_and = _reduction(reduce_and, "reduce_and")
reduce_or = _reduction(reduce_or, "reduce_or")


# --- products -----------------------------------------------------------------------------


def dot(lhs: Any, rhs: Any) -> Var:
    """The vector/matrix product of 1-d and 2-d operands (``jax.lax.dot``)."""
    return matmul(_x("dot", lhs, "lhs"), _x("dot", rhs, "rhs"))


def dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Var:
    """XLA's DotGeneral: ``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch,
    rhs_batch))``; the result's axes are the batch axes, then ``lhs``'s free axes, then
    ``rhs``'s (as an ``einsum``)."""
    del precision
    a, b = _x("dot_general", lhs, "lhs"), _x("dot_general", rhs, "rhs")
    try:
        key = (a.ndim, b.ndim, dimension_numbers)
        spec = _DOT_SPECS.get(key)
    except TypeError:  # unhashable dimension numbers (lists): spelled anew
        key, spec = None, None
    if spec is None:
        spec = _dot_spec(a.ndim, b.ndim, dimension_numbers)
        if key is not None and len(_DOT_SPECS) < 4096:
            _DOT_SPECS[key] = spec
    out = einsum(spec, a, b)
    return out if preferred_element_type is None else cast(out, preferred_element_type)


#: dot_general's einsum spellings by (lhs ndim, rhs ndim, dimension numbers).
_DOT_SPECS: dict[Any, str] = {}


def _dot_spec(ndim_a: int, ndim_b: int, dimension_numbers: Any) -> str:
    """The einsum subscripts of a dot_general: batch axes, then the free axes of each side."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc = (
        _axes("dot_general", "contracting dims", lc),
        _axes("dot_general", "contracting dims", rc),
    )
    lb, rb = _axes("dot_general", "batch dims", lb), _axes("dot_general", "batch dims", rb)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"lax.dot_general: unpaired dimension_numbers {dimension_numbers!r}")
    letters = iter(string.ascii_letters)
    left = [""] * ndim_a
    right = [""] * ndim_b
    batch = []
    for i, j in zip(lb, rb, strict=True):
        left[i] = right[j] = next(letters)
        batch.append(left[i])
    for i, j in zip(lc, rc, strict=True):
        left[i] = right[j] = next(letters)
    free_l = [left.__setitem__(i, next(letters)) or left[i] for i in range(ndim_a) if not left[i]]
    free_r = [
        right.__setitem__(j, next(letters)) or right[j] for j in range(ndim_b) if not right[j]
    ]
    return f"{''.join(left)},{''.join(right)}->{''.join(batch + free_l + free_r)}"


# --- slices -------------------------------------------------------------------------------


def slice(
    operand: Any,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> Var:
    """``operand[start:limit:stride]`` along every axis (static bounds)."""
    x = _x("slice", operand)
    starts = _axes("slice", "start_indices", start_indices)
    limits = _axes("slice", "limit_indices", limit_indices)
    steps = (1,) * x.ndim if strides is None else _axes("slice", "strides", strides)
    if not len(starts) == len(limits) == len(steps) == x.ndim:
        raise ShapeError(f"lax.slice: give one start, limit and stride per axis of {x.type}")
    return getitem(
        x, tuple(builtins.slice(s, e, k) for s, e, k in zip(starts, limits, steps, strict=True))
    )


def slice_in_dim(
    operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0
) -> Var:
    """``operand[start:limit:stride]`` along ``axis``."""
    x = _x("slice_in_dim", operand)
    axis = axis_index("lax.slice_in_dim", axis, x.ndim, x)
    return getitem(
        x, (builtins.slice(None),) * axis + (builtins.slice(start_index, limit_index, stride),)
    )


def _wrapped(start: Any, length: Any) -> Var:
    start = as_var(start, context="lax: a start index")
    return where(less(start, 0), start + length, start)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0) -> Var:
    """``slice_size`` elements from ``start_index`` (traced; negative counts from the end,
    then clamped so the slice fits) along ``axis``."""
    x = _x("dynamic_slice_in_dim", operand)
    axis = axis_index("lax.dynamic_slice_in_dim", axis, x.ndim, x)
    size = _static("dynamic_slice_in_dim", "slice_size", slice_size)
    start = _wrapped(start_index, shape_i(x, axis))
    if all(n is not None for n in x.type.shape):
        starts = [0] * x.ndim
        starts[axis] = start
        sizes = list(x.type.shape)
        sizes[axis] = size
        return dynamic_slice(x, starts, sizes)
    return getitem(x, (builtins.slice(None),) * axis + (builtins.slice(start, start + size),))


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True) -> Var:
    """The slice at ``index`` (traced, clamped) along ``axis``, keeping the axis (length 1)
    unless ``keepdims`` is False."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else _squeeze(out, axis)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int) -> Var:
    """``operand`` with ``update`` written from ``start_index`` (traced, clamped) along
    ``axis``."""
    x = _x("dynamic_update_slice_in_dim", operand)
    axis = axis_index("lax.dynamic_update_slice_in_dim", axis, x.ndim, x)
    starts: list[Any] = [0] * x.ndim
    starts[axis] = _wrapped(start_index, shape_i(x, axis))
    return dynamic_update_slice(x, update, starts)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Var:
    """``operand`` with the slice at ``index`` along ``axis`` replaced by ``update`` (which
    may lack the axis)."""
    x = _x("dynamic_update_index_in_dim", operand)
    u = _x("dynamic_update_index_in_dim", update, "update")
    if u.ndim == x.ndim - 1:
        u = expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Var:
    """``src`` at the index arrays ``idxs`` along ``axes`` (one result row per index), the
    other axes following: ``src[idxs[0], idxs[1]]`` for axes (0, 1)."""
    x = _x("index_take", src, "src")
    axes = tuple(axis_index("lax.index_take", a, x.ndim, x) for a in axes)
    moved = _transpose(x, (*axes, *(a for a in range(x.ndim) if a not in axes)))
    return getitem(moved, tuple(idxs))


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Var:
    """``operand`` with ``lo`` and ``hi`` elements of ``padding_value`` at the ends of each
    axis and ``interior`` between its elements (negative ``lo``/``hi`` crop), as
    ``jax.lax.pad``.

    Raises:
        ShapeError: the config does not give one (lo, hi, interior) per axis, an interior
            is negative, or an axis length is unknown where interior padding needs it.
    """
    x = _x("pad", operand)
    if len(padding_config) != x.ndim:
        raise ShapeError(
            f"lax.pad: padding_config needs one (lo, hi, interior) per axis of {x.type}"
        )
    config = [_axes("pad", "padding_config", c) for c in padding_config]
    for *_ends, interior in config:
        if interior < 0:
            raise ShapeError(f"lax.pad: interior padding must be >= 0, got {interior}")
    # Grow: a result of the padded shape filled with the value, the operand strided in.
    lengths = [shape_i(x, a) if n is None else n for a, n in enumerate(x.type.shape)]
    grown_shape = []
    placement = []
    for axis, ((lo, hi, interior), n) in enumerate(zip(config, lengths, strict=True)):
        if interior and not is_int(n):
            raise ShapeError(
                f"lax.pad: axis {axis} of {short_name(x)} needs a static length for interior "
                "padding"
            )
        lo_g, hi_g = builtins.max(lo, 0), builtins.max(hi, 0)
        span = n + (n - 1) * interior if is_int(n) else n
        grown_shape.append(lo_g + span + hi_g)
        placement.append(
            builtins.slice(
                lo_g, lo_g + span if is_int(span) else None if hi_g == 0 else -hi_g, interior + 1
            )
        )
    value = as_var(padding_value, dtype=x.dtype, context="lax.pad: input 'padding_value'")
    grown = full(tuple(grown_shape), cast(value, x.dtype), dtype=x.dtype)
    out = set_subtensor(getitem(grown, tuple(placement)), x)
    # Crop: negative lo / hi remove elements from the ends.
    crops = tuple(
        builtins.slice(-lo if lo < 0 else None, hi if hi < 0 else None) for lo, hi, _ in config
    )
    return getitem(out, crops) if any(lo < 0 or hi < 0 for lo, hi, _ in config) else out


# --- gather and scatter -------------------------------------------------------------------


def _mode(mode: Any) -> str:
    """XLA's out-of-bounds mode by name: "clip" (starts clamped so the window fits; also
    for "promise_in_bounds") or "fill" (out-of-bounds windows read ``fill_value`` and
    scatter nothing); None is "fill", as in ``jax.lax``."""
    name = "fill" if mode is None else str(getattr(mode, "name", mode)).lower()
    if name in ("clip", "promise_in_bounds"):
        return "clip"
    if name in ("fill", "fill_or_drop", "drop"):
        return "fill"
    raise GraphTypeError(f"lax: unsupported gather/scatter mode {mode!r}")


def _length(x: Var, axis: int) -> Any:
    n = x.type.shape[axis]
    return n if n is not None else shape_i(x, axis)


def _window_indices(
    name: str,
    operand: Var,
    indices: Var,
    out_ndim: int,
    window_dims: Sequence[int],
    dn: Any,
    window_sizes: Sequence[Any],
    mode: str,
) -> tuple[tuple[Var, ...], Var | None]:
    """One index array per operand axis, each shaped to broadcast to the result (or the
    updates) of XLA's gather/scatter, and the mask of in-bounds windows (None for ``mode``
    "clip", where every start is clamped): the index vectors sit on the batch axes (those not in
    ``window_dims``), the window offsets on ``window_dims``; operand batching dims are
    indexed by the position along their paired batch axis of the indices."""
    gathering = hasattr(dn, "offset_dims")
    collapsed = tuple(dn.collapsed_slice_dims if gathering else dn.inserted_window_dims)
    index_map = tuple(dn.start_index_map if gathering else dn.scatter_dims_to_operand_dims)
    operand_batching = tuple(getattr(dn, "operand_batching_dims", ()))
    paired = "start_indices_batching_dims" if gathering else "scatter_indices_batching_dims"
    indices_batching = tuple(getattr(dn, paired, ()))
    batch_axes = [a for a in range(out_ndim) if a not in window_dims]
    if indices.ndim - 1 != len(batch_axes):
        raise ShapeError(
            f"lax.{name}: the indices {indices.type} (index vectors on the last axis) do not fit "
            f"{len(batch_axes)} batch axes of the result"
        )
    skipped = set(collapsed) | set(operand_batching)
    window_axes = [a for a in range(operand.ndim) if a not in skipped]
    if len(window_axes) != len(window_dims):
        raise ShapeError(
            f"lax.{name}: {len(window_dims)} window dims for {len(window_axes)} uncollapsed "
            "operand axes"
        )

    def on_batch(v: Var) -> Var:  # a value per index vector -> the result's layout
        return expand_dims(v, tuple(window_dims)) if window_dims else v

    per_axis: list[Any] = [0] * operand.ndim
    valid: Var | None = None
    for component, axis in enumerate(index_map):
        start = getitem(indices, (Ellipsis, component))
        limit = cast(_length(operand, axis) - window_sizes[axis], start.dtype)
        clamped = minimum(maximum(start, 0), limit)
        if mode == "fill":
            inside = logical_and(greater(start, -1), less(start, limit + 1))
            valid = inside if valid is None else logical_and(valid, inside)
        per_axis[axis] = on_batch(clamped)
    for operand_axis, indices_axis in zip(operand_batching, indices_batching, strict=True):
        position = arange(_length(indices, indices_axis))
        shape = [1] * out_ndim
        shape[batch_axes[indices_axis]] = -1
        per_axis[operand_axis] = _reshape(position, tuple(shape))
    for window_dim, axis in zip(window_dims, window_axes, strict=True):
        offsets = arange(window_sizes[axis])
        shape = [1] * out_ndim
        shape[window_dim] = -1
        per_axis[axis] = per_axis[axis] + _reshape(offsets, tuple(shape))
    return tuple(as_var(p) for p in per_axis), None if valid is None else on_batch(valid)


def gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: Any,
    slice_sizes: Sequence[int],
    *,
    mode: Any = None,
    fill_value: Any = None,
    **_: Any,
) -> Var:
    """XLA's Gather with ``jax.lax.GatherDimensionNumbers`` (``offset_dims``,
    ``collapsed_slice_dims``, ``start_index_map``, ``operand_batching_dims``,
    ``start_indices_batching_dims``): the windows of ``slice_sizes`` starting at
    ``start_indices``' index vectors (last axis). ``mode`` as ``jax.lax.gather``: "clip"
    clamps each start so its window fits, "fill" (the default) gives ``fill_value`` for
    windows out of bounds (JAX's defaults: NaN for inexact dtypes, the smallest value for
    signed integers, the largest for unsigned ones, True for booleans).
    """
    x = _x("gather", operand)
    idx = _x("gather", start_indices, "start_indices")
    offset_dims = tuple(dimension_numbers.offset_dims)
    out_ndim = idx.ndim - 1 + len(offset_dims)
    per_axis, valid = _window_indices(
        "gather", x, idx, out_ndim, offset_dims, dimension_numbers, slice_sizes, _mode(mode)
    )
    out = getitem(x, per_axis, "clip")
    if valid is None:
        return out
    return where(valid, out, _fill_value(x.dtype, fill_value))


def _fill_value(dtype: str, value: Any) -> Any:
    if value is not None:
        return value
    kind = np.dtype(dtype).kind
    if kind in "fc":
        return np.nan
    if kind == "b":
        return True
    return np.iinfo(dtype).min if kind == "i" else np.iinfo(dtype).max  # JAX's defaults


def _scatter_parts(
    name: str, operand: Any, scatter_indices: Any, updates: Any, dn: Any, mode: Any
) -> tuple[Var, tuple[Var, ...], Var, Var | None]:
    x = _x(name, operand)
    idx = _x(name, scatter_indices, "scatter_indices")
    u = _x(name, updates, "updates")
    window_dims = tuple(dn.update_window_dims)
    skipped = set(dn.inserted_window_dims) | set(getattr(dn, "operand_batching_dims", ()))
    window_axes = [a for a in range(x.ndim) if a not in skipped]
    sizes: list[Any] = [1] * x.ndim
    for dim, axis in zip(window_dims, window_axes, strict=True):
        sizes[axis] = _length(u, dim)
    per_axis, valid = _window_indices(name, x, idx, u.ndim, window_dims, dn, sizes, _mode(mode))
    return x, per_axis, u, valid


def scatter_add(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    *,
    mode: Any = None,
    **_: Any,
) -> Var:
    """XLA's Scatter with addition and ``jax.lax.ScatterDimensionNumbers``
    (``update_window_dims``, ``inserted_window_dims``, ``scatter_dims_to_operand_dims``,
    operand batching dims): ``operand`` with each window of ``updates`` added at its index
    vector (last axis of ``scatter_indices``); repeated indices add up. Out-of-bounds
    windows are dropped (``mode`` "fill", the default) or clamped ("clip")."""
    x, per_axis, u, valid = _scatter_parts(
        "scatter_add", operand, scatter_indices, updates, dimension_numbers, mode
    )
    if valid is not None:
        u = where(valid, u, 0)
    return inc_subtensor(getitem(x, per_axis, "clip"), u)


def scatter(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    *,
    mode: Any = None,
    **_: Any,
) -> Var:
    """XLA's Scatter that replaces: as ``scatter_add``, with each window written (where
    indices repeat, one of the writes wins, as in XLA; a dropped window writes back the
    value it would have replaced)."""
    x, per_axis, u, valid = _scatter_parts(
        "scatter", operand, scatter_indices, updates, dimension_numbers, mode
    )
    target = getitem(x, per_axis, "clip")
    if valid is not None:
        u = where(valid, u, target)
    return set_subtensor(target, u)


def scatter_max(
    operand: Any,
    scatter_indices: Any,
    updates: Any,
    dimension_numbers: Any,
    *,
    unique_indices: bool = False,
    mode: Any = None,
    **_: Any,
) -> Var:
    """XLA's Scatter with ``max``, for booleans (any update true makes the element true)
    or with ``unique_indices``; repeated float or integer indices are refused."""
    x, per_axis, u, valid = _scatter_parts(
        "scatter_max", operand, scatter_indices, updates, dimension_numbers, mode
    )
    if valid is not None:
        u = where(valid, u, getitem(x, per_axis, "clip"))
    if x.type.kind == "b":
        counts = inc_subtensor(getitem(cast(x, "int32"), per_axis, "clip"), cast(u, "int32"))
        return greater(counts, 0)
    if not unique_indices:
        raise GraphTypeError(
            f"lax.scatter_max: repeated indices of a {x.dtype} operand are not supported "
            "(only booleans, or unique_indices=True)"
        )
    target = getitem(x, per_axis, "clip")
    return set_subtensor(target, maximum(target, u))
