"""The order statistics, searches and paddings NumPyro and BlackJAX call, with
``jax.numpy``'s names, signatures and results, built from the Ops (so gradients and
batching come with them): quantiles and medians, ``top_k``, ``lexsort``, running extremes,
``searchsorted`` and ``interp``, ``pad``.

Static arguments (axes, counts, widths, modes) are Python values; a traced Var where one is
needed is an error naming the argument. Statistics and elementwise spellings built the same
way are in ``numerics``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Constant, Var, as_var
from rewritekit.tensor.aggregates import any as reduce_any
from rewritekit.tensor.aggregates import sum as reduce_sum
from rewritekit.tensor.arrangement import flip, take_along_axis
from rewritekit.tensor.axes import is_int, normalize_axes, normalize_axis
from rewritekit.tensor.creation import arange
from rewritekit.tensor.elemwise import (
    abs,
    cast,
    ceil,
    clip,
    floor,
    isnan,
    logical_not,
    maximum,
    minimum,
    mod,
    round,
    where,
)
from rewritekit.tensor.extremes import Cummax, Cummin, RunningExtreme
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import broadcast_to, expand_dims, reshape, transpose
from rewritekit.tensor.searching import Searchsorted
from rewritekit.tensor.shape_vectors import lengths, shape_i
from rewritekit.tensor.sorting import argsort, sort
from rewritekit.tensor.subtensor import getitem
from rewritekit.tensor.ufunc import float_dtype

__all__ = [
    "cummax",
    "cummin",
    "interp",
    "lexsort",
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "pad",
    "percentile",
    "quantile",
    "searchsorted",
    "top_k",
]


def _input(name: str, x: Any, label: str = "x") -> Var:
    return as_var(x, context=f"{name}: input {label!r}")


def _static_int(name: str, label: str, value: Any, spelling: str) -> int:
    if not is_int(value):
        shown = "a traced Var" if isinstance(value, Var) else repr(value)
        raise GraphTypeError(
            f"{name}: {label} must be a static int (a Python int, as {spelling} requires), "
            f"got {shown}"
        )
    return int(value)


def _along(axis: int, entry: slice) -> tuple[slice, ...]:
    return (*(slice(None),) * axis, entry)


# --- searching ----------------------------------------------------------------------------

_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(
    a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "scan"
) -> Var:
    """Where the elements of ``v`` (any shape) would go into the sorted 1-d ``a`` (int64, of
    ``v``'s shape), as ``jnp.searchsorted``: the first such place (``side="left"``) or the
    last (``"right"``); ``a[sorter]`` when ``sorter`` is given. NaN sorts last.

    ``method`` is accepted for JAX's signature; every method gives the same result.

    Raises:
        ShapeError: ``a`` is not 1-d.
        GraphTypeError: ``side`` or ``method`` is not one of JAX's.

    Example:
        >>> searchsorted(rt.vector("a"), rt.matrix("v"), side="right").type
        TensorType(dtype='int64', shape=(None, None))
    """
    a, v = _input("searchsorted", a, "a"), _input("searchsorted", v, "v")
    if method not in _SEARCH_METHODS:
        raise GraphTypeError(
            f"searchsorted: method must be one of {', '.join(map(repr, _SEARCH_METHODS))}, "
            f"got {method!r}"
        )
    if sorter is not None:
        a = getitem(a, _input("searchsorted", sorter, "sorter"))
    return Searchsorted(side)(a, v)


def interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None
) -> Var:
    """The piecewise-linear interpolant through ``(xp, fp)`` at ``x``, as ``jnp.interp``:
    ``xp`` increasing and 1-d, ``fp`` of its length; ``fp[0]`` (or ``left``) left of
    ``xp[0]``, ``fp[-1]`` (or ``right``) right of ``xp[-1]``; ``left``/``right`` may be
    ``"extrapolate"``; with ``period``, ``x`` and ``xp`` are angles modulo it.

    Raises:
        ShapeError: ``xp`` and ``fp`` are not 1-d of the same length, or ``period`` is not
            a scalar.

    Example:
        >>> interp(rt.matrix("x"), rt.vector("xp"), rt.vector("fp")).type.shape
        (None, None)
    """
    x, xp, fp = (_input("interp", v, label) for v, label in ((x, "x"), (xp, "xp"), (fp, "fp")))
    known = xp.ndim == fp.ndim == 1 and None not in (xp.type.shape + fp.type.shape)
    if xp.ndim != 1 or fp.ndim != 1 or (known and xp.type.shape != fp.type.shape):
        raise ShapeError(
            f"interp: xp and fp must be 1-d and of the same length, got {xp.type} and {fp.type}"
        )
    for label, side in (("left", left), ("right", right)):
        if isinstance(side, str) and side != "extrapolate":
            raise GraphTypeError(f"interp: {label} may be a value or 'extrapolate', got {side!r}")
    x, xp = x * 1.0, xp * 1.0  # inexact, as JAX promotes them
    fp = fp * 1.0
    if period is not None:
        period = abs(_input("interp", period, "period"))
        if period.ndim:
            raise ShapeError(f"interp: period must be a scalar, got {period.type}")
        x, xp = mod(x, period), mod(xp, period)
        order = argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period], 0)
        fp = concatenate([fp[-1:], fp, fp[:1]], 0)
    i = clip(searchsorted(xp, x, side="right"), 1, shape_i(xp, 0) - 1)
    low_x, low_f = xp[i - 1], fp[i - 1]
    dx = xp[i] - low_x
    flat = abs(dx) <= float(np.spacing(np.finfo(xp.dtype).eps))  # no NaN gradient there
    f = where(flat, low_f, low_f + ((x - low_x) / where(flat, 1, dx)) * (fp[i] - low_f))
    if period is None and left != "extrapolate":
        f = where(x < xp[0], fp[0] if left is None else left, f)
    if period is None and right != "extrapolate":
        f = where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


# --- quantiles ----------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lines(name: str, a: Var, axis: Any) -> tuple[Var, tuple[int, ...]]:
    """``a`` with the axes ``axis`` reduces moved last and joined into one, and those axes."""
    axes = normalize_axes(name, axis, a)
    keep = [d for d in range(a.ndim) if d not in axes]
    size = lengths(a)
    moved = transpose(a, (*keep, *axes)) if list(axes) != list(range(len(keep), a.ndim)) else a
    n = math.prod([size[d] for d in axes]) if axes else 1
    return reshape(moved, (*(size[d] for d in keep), n)), axes


def _gather(s: Var, position: Var, q_ndim: int) -> Var:
    """``s[..., position]`` for sorted lines ``s`` (``(*keep, n)``) and positions of shape
    ``(*q.shape, *keep)`` (length 1 where one position serves every line)."""
    keep = s.ndim - 1
    index = []
    for k in range(keep):
        others = tuple(d for d in range(q_ndim + keep) if d != q_ndim + k)
        index.append(expand_dims(arange(shape_i(s, k)), others))
    return s[(*index, position)]


def _quantile(
    name: str, a: Any, q: Any, axis: Any, out: Any, method: str, keepdims: bool, skip_nan: bool
) -> Var:
    """The quantiles ``q`` (a fraction, or a percentage for ``*percentile``) over ``axis``:
    the lines sorted, each quantile's position ``q * (count - 1)`` read (``method``)."""
    a = _input(name, a, "a")
    if out is not None:
        raise GraphTypeError(f"{name}: out is not supported (graphs are immutable); use the result")
    if method not in _METHODS:
        raise GraphTypeError(
            f"{name}: method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}"
        )
    if a.type.kind not in "biuf":
        raise DTypeError(f"{name}: input 'a' has dtype {a.dtype} (expected a real dtype)")
    a = cast(a, float_dtype(a.dtype))
    # a number or list takes a's dtype (as NumPy's); a Var keeps its own
    q = q if isinstance(q, Var) else as_var(q, dtype=a.dtype, context=f"{name}: input 'q'")
    q = q / 100 if name.endswith("percentile") else q
    q_ndim = q.ndim
    lines, axes = _lines(name, a, axis)
    keep = lines.ndim - 1
    q = expand_dims(q, tuple(range(q_ndim, q_ndim + keep))) if keep else q
    if skip_nan:  # positions among each line's non-NaN elements, which sort first
        s = sort(lines, axis=-1)
        last = cast(reduce_sum(logical_not(isnan(lines)), axis=-1), a.dtype) - 1
    else:  # a line holding NaN gives NaN, as JAX's
        s = sort(where(reduce_any(isnan(lines), axis=-1, keepdims=True), math.nan, lines), -1)
        last = cast(shape_i(lines, lines.ndim - 1), a.dtype) - 1
    index = q * last

    def at(position: Var) -> Var:
        return _gather(s, cast(maximum(minimum(position, last), 0), "int64"), q_ndim)

    if method == "nearest":  # NumPy's: the index rounded half to even
        result = at(round(index))
    else:
        low, high = floor(index), ceil(index)
        low_value, high_value = at(low), at(high)
        t = index - low
        result = {
            "linear": lambda: low_value * (1 - t) + high_value * t,
            "lower": lambda: low_value,
            "higher": lambda: high_value,
            "midpoint": lambda: (low_value + high_value) * 0.5,
        }[method]()
    return expand_dims(result, tuple(q_ndim + d for d in axes)) if keepdims else result


def quantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Var:
    """The ``q``-th quantiles (``q`` in [0, 1], any shape, may be a Var) of ``a`` over
    ``axis`` (None, an int or a tuple), shaped ``(*q.shape, *rest)``, as ``jnp.quantile``.

    ``method`` is one of NumPy's ``"linear"``, ``"lower"``, ``"higher"``, ``"midpoint"`` and
    ``"nearest"`` (NumPy's: the position rounded half to even; ``jnp`` rounds halves down).
    A slice holding NaN gives NaN. The result is floating point (integers: float64), as
    JAX's; ``q`` outside [0, 1] is not checked (the position clamps to the ends).

    Raises:
        GraphTypeError: ``method`` is unknown, or ``out`` is given.
        ShapeError: an axis is out of range.

    Example:
        >>> quantile(rt.matrix("a"), [0.1, 0.9], axis=0).type.shape
        (2, None)
    """
    return _quantile("quantile", a, q, axis, out, method, keepdims, skip_nan=False)


def nanquantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Var:
    """``quantile`` of the non-NaN elements (NaN where a slice has none)."""
    return _quantile("nanquantile", a, q, axis, out, method, keepdims, skip_nan=True)


def percentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Var:
    """``quantile`` with ``q`` in percent ([0, 100])."""
    return _quantile("percentile", a, q, axis, out, method, keepdims, skip_nan=False)


def nanpercentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
) -> Var:
    """``nanquantile`` with ``q`` in percent ([0, 100])."""
    return _quantile("nanpercentile", a, q, axis, out, method, keepdims, skip_nan=True)


def median(
    a: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Var:
    """The median over ``axis``: the middle element, or the mean of the two middle ones
    (``quantile(a, 0.5, method="midpoint")``, as ``jnp.median``); NaN if a slice has NaN.

    Example:
        >>> median(rt.matrix("a"), axis=1, keepdims=True).type.shape
        (None, 1)
    """
    return _quantile("median", a, 0.5, axis, out, "midpoint", keepdims, skip_nan=False)


def nanmedian(
    a: Any,
    axis: Any = None,
    out: None = None,
    overwrite_input: bool = False,
    keepdims: bool = False,
) -> Var:
    """The median of the non-NaN elements (NaN where a slice has none)."""
    return _quantile("nanmedian", a, 0.5, axis, out, "midpoint", keepdims, skip_nan=True)


# --- orders -------------------------------------------------------------------------------


def lexsort(keys: Any, axis: int = -1) -> Var:
    """The indices that sort by several keys along ``axis``, the last key first, ties broken
    by the ones before it (``jnp.lexsort``): stable argsorts from the first key to the last.

    ``keys`` is a list of arrays of one shape, or an array whose first axis (of static
    length) lists them.

    Example:
        >>> lexsort([rt.vector("b"), rt.vector("a")]).dtype
        'int64'
    """
    if isinstance(keys, (Var, np.ndarray)):
        stacked = _input("lexsort", keys, "keys")
        count = stacked.type.shape[0] if stacked.ndim else None
        if count is None:
            raise ShapeError(
                f"lexsort: keys {stacked.type} needs a static number of keys (its first "
                "axis); give it a static shape or pass a list of arrays"
            )
        keys = [stacked[k] for k in range(count)]
    keys = [_input("lexsort", k, f"keys[{i}]") for i, k in enumerate(keys)]
    if not keys or keys[0].ndim == 0:
        raise ShapeError("lexsort: expected at least one key of at least one axis")
    a = normalize_axis("lexsort", _static_int("lexsort", "axis", axis, "jnp.lexsort"), keys[0])
    order = argsort(keys[0], a)
    for key in keys[1:]:
        if key.ndim != keys[0].ndim:
            raise ShapeError(
                f"lexsort: the keys must have one shape, got {keys[0].type} and {key.type}"
            )
        order = take_along_axis(order, argsort(take_along_axis(key, order, a), a), a)
    return order


def top_k(operand: Any, k: int, *, axis: int = -1) -> tuple[Var, Var]:
    """The ``k`` largest elements along ``axis`` in descending order, and their int64
    indices, as ``jax.lax.top_k``: equal elements in the order of their positions; NaN
    counts as the largest; -0.0 and 0.0 are equal (JAX puts 0.0 first).

    Raises:
        GraphTypeError: ``k`` is not a static int.
        ShapeError: ``k`` exceeds the axis' static length.

    Example:
        >>> [v.type.shape for v in top_k(rt.matrix("x", shape=(4, 5)), 3)]
        [(4, 3), (4, 3)]
    """
    x = _input("top_k", operand, "operand")
    k = _static_int("top_k", "k", k, "jax.lax.top_k")
    a = normalize_axis("top_k", _static_int("top_k", "axis", axis, "jax.lax.top_k"), x)
    n = x.type.shape[a]
    if k < 0 or (n is not None and k > n):
        raise ShapeError(f"top_k: k={k} must be in [0, the length of axis {axis}] of {x.type}")
    # a stable ascending argsort of the reversed axis, read backwards: descending, ties in
    # increasing position
    backwards = getitem(argsort(flip(x, a), a), _along(a, slice(None, None, -1)))
    indices = (shape_i(x, a) - 1) - getitem(backwards, _along(a, slice(0, k)))
    return take_along_axis(x, indices, a), indices


def _running(cls: type[RunningExtreme], operand: Any, axis: int, reverse: bool) -> Var:
    name = cls.name
    x = _input(name, operand, "operand")
    a = normalize_axis(name, _static_int(name, "axis", axis, f"jax.lax.{name}"), x)
    if reverse:
        return flip(cls(a)(flip(x, a)), a)
    return cls(a)(x)


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Var:
    """The running maximum along ``axis`` (from the end with ``reverse``), as
    ``jax.lax.cummax``. The gradient of each output goes to the nearest element (in scan
    order) equal to it; JAX's splits it at ties.

    Example:
        >>> cummax(rt.matrix("x"), axis=1, reverse=True).type.shape
        (None, None)
    """
    return _running(Cummax, operand, axis, reverse)


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Var:
    """The running minimum along ``axis``, as ``jax.lax.cummin`` (see ``cummax``)."""
    return _running(Cummin, operand, axis, reverse)


# --- padding ------------------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pairs(name: str, value: Any, ndim: int) -> list[tuple[Any, Any]]:
    """NumPy's ``(before, after)`` per axis from a number, a pair, or a pair per axis."""
    if isinstance(value, Var):
        if not isinstance(value, Constant):
            return [(value, value)] * ndim  # constant_values: a traced scalar
        value = value.data
    array = np.asarray(value, dtype=object)
    if array.size == 1:
        return [(array.ravel()[0],) * 2] * ndim
    if array.size == 2 and array.shape != (2, 1):
        return [tuple(array.ravel())] * ndim
    try:
        return [tuple(pair) for pair in np.broadcast_to(array, (ndim, 2))]
    except ValueError:
        raise ShapeError(
            f"{name}: expected a number, a (before, after) pair or one pair per axis for a "
            f"{ndim}-d input, got shape {array.shape}"
        ) from None


def pad(array: Any, pad_width: Any, mode: str = "constant", *, constant_values: Any = 0) -> Var:
    """``array`` padded by ``pad_width`` (static ints: one number, a ``(before, after)``
    pair, or a pair per axis) along each axis, as ``jnp.pad``. Modes: ``"constant"``
    (``constant_values``, same forms, or a scalar Var), ``"edge"``, ``"reflect"``,
    ``"symmetric"``, ``"wrap"``; the last three need the axis' static length.

    Raises:
        GraphTypeError: ``mode`` is not one of these, or a width is not a static int >= 0.
        ShapeError: a reflecting mode on an axis of unknown or zero length.

    Example:
        >>> pad(rt.matrix("x", shape=(2, 3)), ((1, 0), (2, 2)), "reflect").type.shape
        (3, 7)
    """
    x = _input("pad", array, "array")
    if mode not in _PAD_MODES:
        raise GraphTypeError(
            f"pad: mode must be one of {', '.join(map(repr, _PAD_MODES))}, got {mode!r}"
        )
    if isinstance(pad_width, Var) and not isinstance(pad_width, Constant):
        raise GraphTypeError(
            "pad: pad_width must be static ints (as jnp.pad requires), got a traced Var"
        )
    widths = _pairs("pad", pad_width, x.ndim)
    for pair in widths:
        if not all(is_int(w) and w >= 0 for w in pair):
            raise GraphTypeError(f"pad: pad_width must be static ints >= 0, got {pad_width!r}")
    if isinstance(constant_values, Var) and constant_values.ndim:
        raise ShapeError(f"pad: a Var constant_values must be a scalar, got {constant_values.type}")
    values = _pairs("pad", constant_values, x.ndim) if mode == "constant" else widths
    for axis, ((before, after), fill) in enumerate(zip(widths, values, strict=True)):
        if before or after:
            x = _pad_axis(x, axis, int(before), int(after), mode, fill)
    return x


def _pad_axis(x: Var, axis: int, before: int, after: int, mode: str, fill: Any) -> Var:
    """``x`` padded along ``axis``: the blocks before and after it, joined."""
    n = x.type.shape[axis]
    size = lengths(x)

    def widened(v: Var, width: int) -> Var:  # v (length 1 along axis) repeated width times
        return broadcast_to(v, (*size[:axis], width, *size[axis + 1 :]))

    if mode == "constant":
        value = [cast(as_var(f, context="pad: constant_values"), x.dtype) for f in fill]
        sides = [widened(value[0], before), widened(value[1], after)]
    elif (n is None and mode != "edge") or n == 0:
        state = "an unknown" if n is None else "a zero"
        raise ShapeError(
            f"pad: mode {mode!r} needs a static, non-zero length of axis {axis}; {x.type} has "
            f"{state} length there (give the input a static shape)"
        )
    elif mode == "edge":
        first = getitem(x, _along(axis, slice(0, 1)))
        last = getitem(x, _along(axis, slice(-1, None)))
        sides = [widened(first, before), widened(last, after)]
    else:  # reflect, symmetric, wrap: x extended periodically, one period built from x
        if mode == "wrap" or (mode == "reflect" and n == 1):
            unit = [x]
        elif mode == "symmetric":
            unit = [x, flip(x, axis)]
        else:
            unit = [x, getitem(flip(x, axis), _along(axis, slice(1, -1)))]
        period = sum(v.type.shape[axis] for v in unit)

        def periods(count: int, entry: slice) -> Var:
            return getitem(concatenate(unit * -(-count // period), axis), _along(axis, entry))

        sides = [
            periods(before, slice(-before, None)) if before else None,
            periods(n + after, slice(n, n + after)) if after else None,
        ]
    parts = [p for p in (sides[0], x, sides[1]) if p is not None and p.type.shape[axis] != 0]
    return concatenate(parts, axis)
