"""NumPy's everyday array functions built from the Ops (no new Op, so gradients and
batching come with them): triangles, flips and rolls, repeats and tiles, differences,
stacking, NaN-ignoring reductions, and a few elementwise spellings.

Each has NumPy's name, arguments and result; static arguments (counts, shifts, axes)
are Python ints.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Var, as_var
from rewritekit.tensor.aggregates import max as reduce_max
from rewritekit.tensor.aggregates import min as reduce_min
from rewritekit.tensor.aggregates import sum as reduce_sum
from rewritekit.tensor.axes import is_int, normalize_axis
from rewritekit.tensor.creation import arange, zeros_like
from rewritekit.tensor.cumulative import cumsum
from rewritekit.tensor.elemwise import abs as abs_
from rewritekit.tensor.elemwise import (
    cast,
    ceil,
    exp2,
    floor,
    greater_equal,
    isnan,
    less_equal,
    log1p,
    logical_not,
    logical_or,
    maximum,
    not_equal,
    where,
)
from rewritekit.tensor.everyday import broadcast_arrays
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import broadcast_to, expand_dims, reshape
from rewritekit.tensor.shape_vectors import lengths, shape_i
from rewritekit.tensor.subtensor import getitem

__all__ = [
    "column_stack",
    "cumulative_sum",
    "deg2rad",
    "degrees",
    "diff",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "fmax",
    "fmin",
    "hstack",
    "linspace",
    "logaddexp2",
    "logical_xor",
    "meshgrid",
    "nanmax",
    "nanmean",
    "nanmin",
    "nansum",
    "rad2deg",
    "radians",
    "repeat",
    "roll",
    "split",
    "take_along_axis",
    "tile",
    "tril",
    "triu",
    "trunc",
    "vstack",
]


def _input(name: str, x: Any) -> Var:
    return as_var(x, context=f"{name}: input 'x'")


def _axis(name: str, x: Var, axis: Any) -> int:
    if not is_int(axis):
        raise GraphTypeError(f"{name}: axis must be an int, got {axis!r}")
    found = normalize_axis(name, int(axis), x)
    return found % x.ndim if found is not None else 0


# --- triangles -------------------------------------------------------------------------


def _triangle(name: str, m: Any, k: int, lower: bool) -> Var:
    m = _input(name, m)
    if m.ndim < 2:
        raise ShapeError(f"{name}: the input must be at least 2-d, got {m.type}")
    if not is_int(k):
        raise GraphTypeError(f"{name}: k must be an int, got {k!r}")
    rows = expand_dims(arange(shape_i(m, m.ndim - 2)), 1) + int(k)
    cols = arange(shape_i(m, m.ndim - 1))
    keep = greater_equal(rows, cols) if lower else less_equal(rows, cols)
    return where(keep, m, zeros_like(m))


def tril(m: Any, k: int = 0) -> Var:
    """``m`` with the elements above diagonal ``k`` zeroed (of each matrix of a stack).

    Example:
        >>> tril(rt.matrix("m"), -1).type.shape
        (None, None)
    """
    return _triangle("tril", m, k, lower=True)


def triu(m: Any, k: int = 0) -> Var:
    """``m`` with the elements below diagonal ``k`` zeroed (of each matrix of a stack)."""
    return _triangle("triu", m, k, lower=False)


# --- flips, rolls, repeats, tiles, differences -----------------------------------------


def flip(x: Any, axis: Any = None) -> Var:
    """``x`` reversed along ``axis`` (an int, a tuple, or None: every axis)."""
    x = _input("flip", x)
    axes = range(x.ndim) if axis is None else (axis,) if is_int(axis) else tuple(axis)
    chosen = {_axis("flip", x, a) for a in axes}
    return getitem(
        x, tuple(slice(None, None, -1) if a in chosen else slice(None) for a in range(x.ndim))
    )


def flipud(x: Any) -> Var:
    """``x`` reversed along its first axis."""
    return flip(x, 0)


def fliplr(x: Any) -> Var:
    """``x`` reversed along its second axis."""
    x = _input("fliplr", x)
    if x.ndim < 2:
        raise ShapeError(f"fliplr: the input must be at least 2-d, got {x.type}")
    return flip(x, 1)


def roll(x: Any, shift: int | Sequence[int], axis: Any = None) -> Var:
    """``x`` with its elements shifted by ``shift`` along ``axis`` (None: the flattened
    array, then reshaped), wrapping around; ``shift`` a static int (or one per axis)."""
    x = _input("roll", x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), lengths(x))
    axes = (axis,) if is_int(axis) else tuple(axis)
    shifts = (shift,) * len(axes) if is_int(shift) else tuple(shift)
    if len(shifts) != len(axes) or not all(is_int(s) for s in shifts):
        raise GraphTypeError(f"roll: shift must be a static int per axis, got {shift!r}")
    for s, a in zip(shifts, axes, strict=True):
        a = _axis("roll", x, a)
        n = x.type.shape[a]
        if n is None:
            raise ShapeError(f"roll: axis {a} of {x.type} needs a static length to roll by {s}")
        if n == 0:
            continue
        cut = n - int(s) % n
        head = (slice(None),) * a
        x = concatenate(
            [getitem(x, (*head, slice(cut, None))), getitem(x, (*head, slice(None, cut)))], a
        )
    return x


def repeat(x: Any, repeats: int, axis: int | None = None) -> Var:
    """Each element of ``x`` ``repeats`` times (a static int) along ``axis`` (None: of the
    flattened array)."""
    x = _input("repeat", x)
    if not is_int(repeats) or repeats < 0:
        raise GraphTypeError(f"repeat: repeats must be a static int >= 0, got {repeats!r}")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    a = _axis("repeat", x, axis)
    size = lengths(x)
    wide = broadcast_to(expand_dims(x, a + 1), (*size[: a + 1], int(repeats), *size[a + 1 :]))
    n = size[a]
    return reshape(wide, (*size[:a], n * int(repeats), *size[a + 1 :]))


def tile(x: Any, reps: int | Sequence[int]) -> Var:
    """``x`` repeated ``reps`` times along each axis (static ints), as NumPy's ``tile``."""
    x = _input("tile", x)
    reps = (reps,) if is_int(reps) else tuple(reps)
    if not all(is_int(r) and r >= 0 for r in reps):
        raise GraphTypeError(f"tile: reps must be static ints >= 0, got {reps!r}")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + tuple(int(r) for r in reps)
    x = reshape(x, (1,) * (ndim - x.ndim) + tuple(lengths(x))) if x.ndim < ndim else x
    size = lengths(x)
    wide = broadcast_to(
        reshape(x, tuple(v for n in size for v in (1, n))),
        tuple(v for r, n in zip(reps, size, strict=True) for v in (r, n)),
    )
    return reshape(wide, tuple(r * n for r, n in zip(reps, size, strict=True)))


def diff(x: Any, n: int = 1, axis: int = -1) -> Var:
    """The ``n``-th differences along ``axis``: ``x[1:] - x[:-1]``, ``n`` times."""
    x = _input("diff", x)
    if not is_int(n) or n < 0:
        raise GraphTypeError(f"diff: n must be a static int >= 0, got {n!r}")
    a = _axis("diff", x, axis)
    head = (slice(None),) * a
    for _ in range(int(n)):
        later, earlier = getitem(x, (*head, slice(1, None))), getitem(x, (*head, slice(None, -1)))
        x = not_equal(later, earlier) if x.dtype == "bool" else later - earlier
    return x


# --- stacking ----------------------------------------------------------------------------


def _arrays(name: str, xs: Any) -> list[Var]:
    if isinstance(xs, (Var, np.ndarray)) or not isinstance(xs, Sequence) or not xs:
        raise GraphTypeError(f"{name}: expected a non-empty list or tuple of tensors")
    return [as_var(x, context=f"{name}: input {i}") for i, x in enumerate(xs)]


def _at_least(x: Var, ndim: int, where_: str) -> Var:
    if x.ndim >= ndim:
        return x
    if where_ == "2d":
        return reshape(x, (1, *lengths(x))) if x.ndim == 1 else reshape(x, (1, 1))
    size = lengths(x)  # dstack: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)
    if x.ndim == 0:
        return reshape(x, (1, 1, 1))
    return reshape(x, (1, *size, 1)) if x.ndim == 1 else reshape(x, (*size, 1))


def vstack(xs: Sequence[Any]) -> Var:
    """The arrays (1-d ones as rows) joined along the first axis."""
    return concatenate([_at_least(x, 2, "2d") for x in _arrays("vstack", xs)], 0)


def hstack(xs: Sequence[Any]) -> Var:
    """The arrays joined along the second axis (the first, for 1-d arrays)."""
    arrays = [reshape(x, (1,)) if x.ndim == 0 else x for x in _arrays("hstack", xs)]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1)


def column_stack(xs: Sequence[Any]) -> Var:
    """1-d arrays as columns, 2-d ones as they are, joined along the second axis."""
    arrays = [
        reshape(x, (*lengths(x), 1)) if x.ndim < 2 else x for x in _arrays("column_stack", xs)
    ]
    return concatenate(arrays, 1)


def dstack(xs: Sequence[Any]) -> Var:
    """The arrays (made 3-d as NumPy's ``atleast_3d``) joined along the third axis."""
    return concatenate([_at_least(x, 3, "3d") for x in _arrays("dstack", xs)], 2)


# --- NaN-ignoring reductions, elementwise spellings ------------------------------------


def nansum(x: Any, axis: Any = None, keepdims: bool = False) -> Var:
    """The sum, NaNs counted as zero."""
    x = _input("nansum", x)
    return reduce_sum(where(isnan(x), zeros_like(x), x), axis=axis, keepdims=keepdims)


def nanmean(x: Any, axis: Any = None, keepdims: bool = False) -> Var:
    """The mean of the non-NaN elements (NaN where there are none)."""
    x = _input("nanmean", x)
    present = logical_not(isnan(x))
    total = reduce_sum(where(present, x, zeros_like(x)), axis=axis, keepdims=keepdims)
    count = reduce_sum(present, axis=axis, keepdims=keepdims)
    return total / count


def nanmax(x: Any, axis: Any = None, keepdims: bool = False) -> Var:
    """The maximum of the non-NaN elements (NaN where there are none)."""
    x = _input("nanmax", x)
    low = where(isnan(x), -math.inf, x)
    out = reduce_max(low, axis=axis, keepdims=keepdims)
    none = reduce_min(isnan(x), axis=axis, keepdims=keepdims)
    return where(none, math.nan, out)


def nanmin(x: Any, axis: Any = None, keepdims: bool = False) -> Var:
    """The minimum of the non-NaN elements (NaN where there are none)."""
    x = _input("nanmin", x)
    high = where(isnan(x), math.inf, x)
    out = reduce_min(high, axis=axis, keepdims=keepdims)
    none = reduce_min(isnan(x), axis=axis, keepdims=keepdims)
    return where(none, math.nan, out)


def fmax(x: Any, y: Any) -> Var:
    """The elementwise maximum ignoring NaN (NaN only where both are)."""
    x, y = as_var(x, context="fmax: input 'x'"), as_var(y, context="fmax: input 'y'")
    return where(isnan(y), x, where(logical_or(isnan(x), y > x), y, x))


def fmin(x: Any, y: Any) -> Var:
    """The elementwise minimum ignoring NaN (NaN only where both are)."""
    x, y = as_var(x, context="fmin: input 'x'"), as_var(y, context="fmin: input 'y'")
    return where(isnan(y), x, where(logical_or(isnan(x), y < x), y, x))


def logical_xor(x: Any, y: Any) -> Var:
    """Truth values that differ, elementwise."""
    x, y = as_var(x, context="logical_xor: input 'x'"), as_var(y, context="logical_xor: input 'y'")
    return not_equal(not_equal(x, 0), not_equal(y, 0))


def trunc(x: Any) -> Var:
    """``x`` rounded toward zero."""
    x = _input("trunc", x)
    return where(x < 0, ceil(x), floor(x))


def deg2rad(x: Any) -> Var:
    """Degrees to radians (``x * pi / 180``, as NumPy computes it)."""
    return _input("deg2rad", x) * (math.pi / 180)


def rad2deg(x: Any) -> Var:
    """Radians to degrees (``x * 180 / pi``, as NumPy computes it)."""
    return _input("rad2deg", x) * (180 / math.pi)


radians = deg2rad
degrees = rad2deg


# --- grids, splits, gathers ---------------------------------------------------------------


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None) -> Var:
    """``num`` (a static int) evenly spaced values from ``start`` to ``stop`` (scalars, Vars
    too), computed as NumPy does (``arange(num) * step + start``, the last set to
    ``stop`` with ``endpoint``)."""
    if not is_int(num) or num < 0:
        raise GraphTypeError(f"linspace: num must be a static int >= 0, got {num!r}")
    start = as_var(start, context="linspace: start") * 1.0
    stop = as_var(stop, context="linspace: stop") * 1.0
    if start.ndim or stop.ndim:
        raise ShapeError("linspace: start and stop must be scalars")
    div = (num - 1) if endpoint else num
    values = arange(num) * ((stop - start) / div) + start if div > 0 else arange(num) * 0.0 + start
    if endpoint and num > 1:
        values = concatenate([getitem(values, slice(None, -1)), reshape(stop, (1,))], 0)
    return values if dtype is None else cast(values, dtype)


def meshgrid(*xs: Any, indexing: str = "xy") -> list[Var]:
    """Coordinate grids from 1-d arrays (NumPy's ``meshgrid``; ``indexing`` "xy" or "ij")."""
    if indexing not in ("xy", "ij"):
        raise GraphTypeError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [as_var(x, context=f"meshgrid: input {i}") for i, x in enumerate(xs)]
    n = len(arrays)
    shaped = []
    for i, x in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
        shape = [1] * n
        shape[axis] = -1
        shaped.append(reshape(reshape(x, (-1,)), tuple(shape)))
    return list(broadcast_arrays(*shaped))


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Var]:
    """``x`` split along ``axis`` into equal sections (an int: the axis' static length must
    divide) or at static indices, as NumPy's ``split``."""
    x = _input("split", x)
    a = _axis("split", x, axis)
    n = x.type.shape[a]
    if is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if n is None or sections <= 0 or n % sections:
            raise ShapeError(
                f"split: axis {a} of {x.type} does not split into {sections} equal sections "
                "(its length must be static and divisible)"
            )
        cuts = [n // sections * k for k in range(1, sections)]
    else:
        cuts = list(indices_or_sections)
        if not all(is_int(c) for c in cuts):
            raise GraphTypeError(f"split: indices must be static ints, got {indices_or_sections!r}")
    head = (slice(None),) * a
    bounds = [None, *(int(c) for c in cuts), None]
    return [getitem(x, (*head, slice(lo, hi))) for lo, hi in itertools.pairwise(bounds)]


def take_along_axis(
    arr: Any, indices: Any, axis: int, mode: str = "raise", fill_value: Any = None
) -> Var:
    """``arr`` read at ``indices`` along ``axis`` (NumPy's ``take_along_axis``): ``indices``
    has ``arr``'s number of axes and broadcasts with it on the others. ``mode`` ("raise",
    "clip" or "fill", with ``fill_value``) says what an index out of bounds does, as in
    ``rt.getitem``."""
    arr = _input("take_along_axis", arr)
    indices = as_var(indices, context="take_along_axis: input 'indices'")
    if indices.ndim != arr.ndim:
        raise ShapeError(
            f"take_along_axis: indices {indices.type} must have as many axes as {arr.type}"
        )
    a = _axis("take_along_axis", arr, axis)
    index = []
    for d in range(arr.ndim):
        if d == a:
            index.append(indices)
            continue
        others = tuple(o for o in range(arr.ndim) if o != d)
        index.append(
            expand_dims(arange(shape_i(arr, d)), others) if others else arange(shape_i(arr, d))
        )
    return getitem(arr, tuple(index), mode, fill_value)


def logaddexp2(x: Any, y: Any) -> Var:
    """``log2(2**x + 2**y)``, without overflow: ``max + log2(1 + 2**-|x - y|)``."""
    x = as_var(x, context="logaddexp2: input 'x'")
    y = as_var(y, context="logaddexp2: input 'y'")
    big = maximum(x, y)
    return where(x == y, x + 1.0, big + log1p(exp2(-abs_(x - y))) / math.log(2.0))


def cumulative_sum(x: Any, axis: int | None = None, include_initial: bool = False) -> Var:
    """The running sum along ``axis`` (required unless ``x`` is 1-d), with a leading zero
    when ``include_initial`` (the array API's ``cumulative_sum``)."""
    x = _input("cumulative_sum", x)
    if axis is None:
        if x.ndim != 1:
            raise GraphTypeError(f"cumulative_sum: give axis for a {x.ndim}-d input")
        axis = 0
    a = _axis("cumulative_sum", x, axis)
    total = cumsum(x, axis=a)
    if not include_initial:
        return total
    size = lengths(total)
    zero = broadcast_to(
        zeros_like(getitem(total, (*(slice(None),) * a, slice(0, 1)))),
        (*size[:a], 1, *size[a + 1 :]),
    )
    return concatenate([zero, total], a)
