"""NumPy's weighted statistics (``average``, ``cov``, ``corrcoef``, ``count_nonzero``) and
elementwise spellings (``nan_to_num``, ``isposinf``, ``isneginf``, ``rint``, ``remainder``,
``cbrt``, ``hypot``, ``copysign``, ``logspace``), with ``jax.numpy``'s names, signatures
and results, built from the Ops (gradients and batching come with them).
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from rewritekit.errors import DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import Var, as_var
from rewritekit.tensor.aggregates import mean
from rewritekit.tensor.aggregates import sum as reduce_sum
from rewritekit.tensor.arrangement import linspace
from rewritekit.tensor.axes import is_int, normalize_axes
from rewritekit.tensor.contractions import dot
from rewritekit.tensor.diagonals import diag
from rewritekit.tensor.elemwise import (
    abs,
    cast,
    clip,
    equal,
    isinf,
    isnan,
    logical_and,
    logical_or,
    maximum,
    minimum,
    mod,
    not_equal,
    power,
    reciprocal,
    round,
    sqrt,
    square,
    where,
)
from rewritekit.tensor.gradient import stop_gradient
from rewritekit.tensor.joining import concatenate
from rewritekit.tensor.layout import broadcast_to, expand_dims, reshape, transpose
from rewritekit.tensor.shape_vectors import lengths, shape_i
from rewritekit.tensor.ufunc import float_dtype

__all__ = [
    "average",
    "cbrt",
    "copysign",
    "corrcoef",
    "count_nonzero",
    "cov",
    "hypot",
    "isneginf",
    "isposinf",
    "logspace",
    "nan_to_num",
    "remainder",
    "rint",
]


def _input(name: str, x: Any, label: str = "x") -> Var:
    return as_var(x, context=f"{name}: input {label!r}")


def _real(name: str, x: Any, label: str = "x") -> Var:
    """``x`` as a Var of a real dtype (bool, int, uint or float)."""
    x = _input(name, x, label)
    if x.type.kind not in "biuf":
        raise DTypeError(
            f"{name}: input {label!r} has dtype {x.dtype} (expected bool, int, uint or float)"
        )
    return x


# --- weighted statistics ------------------------------------------------------------------


def _weights(a: Var, w: Var, axis: Any, axes: tuple[int, ...]) -> Var:
    """Weights shaped like ``a``: ``a``'s own shape, or one axis per averaged axis (in the
    order ``axis`` names them) spread over ``a``'s other axes."""
    if w.ndim == a.ndim:
        return w if w.type.shape == a.type.shape else broadcast_to(w, lengths(a))
    if axis is None:
        raise GraphTypeError(
            f"average: weights {w.type} and a {a.type} differ in shape; give the axis they "
            "run along"
        )
    named = [d % a.ndim for d in ((axis,) if is_int(axis) else axis)]
    if w.ndim != len(named) or any(
        n is not None and a.type.shape[d] not in (None, n)
        for n, d in zip(w.type.shape, named, strict=True)
    ):
        raise ShapeError(
            f"average: weights {w.type} must have the shape of a {a.type} or its lengths "
            f"along axis {axis}"
        )
    order = tuple(int(i) for i in np.argsort(named))
    w = transpose(w, order) if order != tuple(range(w.ndim)) else w
    spread = expand_dims(w, tuple(d for d in range(a.ndim) if d not in axes))
    return broadcast_to(spread, lengths(a))


def average(
    a: Any, axis: Any = None, weights: Any = None, returned: bool = False, keepdims: bool = False
) -> Var | tuple[Var, Var]:
    """The (weighted) mean over ``axis``, as ``jnp.average``: ``sum(a * w) / sum(w)``;
    with ``returned``, also ``sum(w)`` (the count without weights), of the result's shape.

    Raises:
        GraphTypeError: weights of another shape than ``a`` and no ``axis``.
        ShapeError: weights fit neither ``a`` nor its lengths along ``axis``.

    Example:
        >>> average(rt.matrix("a"), axis=1, weights=rt.vector("w")).type.shape
        (None,)
    """
    a = _real("average", a, "a")
    axes = normalize_axes("average", axis, a)
    if weights is None:
        avg = mean(a, axis=axes, keepdims=keepdims)
        size = lengths(a)
        total = cast(as_var(math.prod([size[d] for d in axes])), avg.dtype)
    else:
        w = _weights(a, _real("average", weights, "weights"), axis, axes)
        dtype = float_dtype(np.result_type(a.dtype, w.dtype).name)
        a, w = cast(a, dtype), cast(w, dtype)
        total = reduce_sum(w, axis=axes, keepdims=keepdims)
        avg = reduce_sum(a * w, axis=axes, keepdims=keepdims) / total
    if not returned:
        return avg
    return avg, total if total.type.shape == avg.type.shape else broadcast_to(total, lengths(avg))


def _rows(name: str, m: Var, rowvar: bool, flip: bool) -> Var:
    """``m`` as a matrix with one variable per row (NumPy's ``atleast_2d``, transposed
    when the variables are columns)."""
    if m.ndim > 2:
        raise ShapeError(f"{name}: expected at most 2 axes, got {m.type}")
    if m.ndim < 2:
        return reshape(m, (1, -1))
    return transpose(m) if not rowvar and flip else m


def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
    dtype: Any = None,
) -> Var:
    """The covariance matrix of the variables in the rows of ``m`` (and ``y``; columns with
    ``rowvar=False``), as ``jnp.cov``: normalized by ``N - ddof`` (``ddof`` default 1, 0
    with ``bias``), with integer frequency weights ``fweights`` and observation weights
    ``aweights``. A single variable gives a scalar; where the number of variables is not
    static the result stays ``(k, k)``. A 2-d ``y`` of unknown row count with
    ``rowvar=False`` is read as columns (NumPy reads a single row as one variable).

    Raises:
        ShapeError: ``m`` or ``y`` has more than 2 axes, or a weight vector is not 1-d.
        DTypeError: ``fweights`` is not integer, or an input is complex.
        GraphTypeError: ``ddof`` is not a static int.

    Example:
        >>> cov(rt.matrix("x", shape=(100, 3)), rowvar=False).type.shape
        (3, 3)
    """
    x = _rows("cov", _real("cov", m, "m"), rowvar, flip=True)
    if y is not None:
        other = _real("cov", y, "y")
        single_row = other.ndim == 2 and other.type.shape[0] == 1
        x = concatenate([x, _rows("cov", other, rowvar, flip=not single_row)], 0)
    x = cast(x, float_dtype(x.dtype) if dtype is None else dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    if not is_int(ddof):
        raise GraphTypeError(f"cov: ddof must be a static int (as jnp.cov requires), got {ddof!r}")
    w = aw = None
    if fweights is not None:
        w = _input("cov", fweights, "fweights")
        if w.type.kind not in "iu":
            raise DTypeError(f"cov: fweights must be integer, got {w.dtype}")
        w = cast(abs(w), x.dtype)
    if aweights is not None:
        aw = cast(abs(_input("cov", aweights, "aweights")), x.dtype)
        w = aw if w is None else w * aw
    if w is not None and w.ndim != 1:
        raise ShapeError(f"cov: the weights must be 1-d (one per observation), got {w.type}")
    avg, total = average(x, axis=1, weights=w, returned=True)
    total = total[0]
    if w is None:
        fact = cast(shape_i(x, 1), x.dtype) - ddof
    elif ddof == 0:
        fact = total
    elif aw is None:
        fact = total - ddof
    else:
        fact = total - ddof * reduce_sum(w * aw) / total
    centered = x - expand_dims(avg, 1)
    weighted = centered if w is None else centered * w
    c = dot(centered, transpose(weighted)) / fact
    return reshape(c, ()) if x.type.shape[0] == 1 else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, dtype: Any = None) -> Var:
    """The correlation coefficients ``cov / sqrt(outer(var, var))``, clipped to [-1, 1], as
    ``jnp.corrcoef`` (``cov``'s shapes; a scalar covariance gives ``c / c``).

    Example:
        >>> corrcoef(rt.vector("x"), rt.vector("y")).type.shape
        (2, 2)
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    std = sqrt(diag(c))
    return clip(c / expand_dims(std, 1) / expand_dims(std, 0), -1, 1)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Var:
    """The number (int64) of nonzero elements over ``axis``.

    Example:
        >>> count_nonzero(rt.matrix("a"), axis=0).dtype
        'int64'
    """
    a = _input("count_nonzero", a, "a")
    return reduce_sum(
        not_equal(a, 0), axis=normalize_axes("count_nonzero", axis, a), keepdims=keepdims
    )


# --- elementwise spellings ----------------------------------------------------------------


def _fill(value: Any, dtype: str) -> Any:
    return cast(value, dtype) if isinstance(value, Var) else np.asarray(value, dtype=dtype)[()]


def nan_to_num(
    x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None
) -> Var:
    """``x`` with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``
    (defaults: the dtype's largest and smallest finite values), as ``jnp.nan_to_num``;
    integers and bool are returned unchanged. ``copy`` is ignored (graphs are immutable).

    Example:
        >>> nan_to_num(rt.vector("x", dtype="float32"), posinf=1e30).dtype
        'float32'
    """
    x = _real("nan_to_num", x)
    if x.type.kind != "f":
        return x
    info = np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), _fill(nan, x.dtype), x)
    out = where(isposinf(out), _fill(posinf, x.dtype), out)
    return where(isneginf(out), _fill(neginf, x.dtype), out)


def isposinf(x: Any) -> Var:
    """True where ``x`` is +inf."""
    x = _real("isposinf", x)
    return logical_and(isinf(x), x > 0)


def isneginf(x: Any) -> Var:
    """True where ``x`` is -inf."""
    x = _real("isneginf", x)
    return logical_and(isinf(x), x < 0)


def rint(x: Any) -> Var:
    """``x`` rounded to the nearest integer, halves to even, in floating point (integers
    give float64, as NumPy's and JAX's ``rint``)."""
    x = _real("rint", x)
    return round(cast(x, float_dtype(x.dtype)))


remainder = mod


def cbrt(x: Any) -> Var:
    """The real cube root, exact for perfect cubes: ``|x| ** (1/3)`` refined by one Newton
    step, with the sign of ``x``. The gradient is ``1 / (3 cbrt(x)**2)``: inf at 0 and 0 at
    +-inf, as ``jax.grad`` of ``jnp.cbrt``. The cube root of -0.0 is 0.0 here (NumPy: -0.0).

    Example:
        >>> cbrt(rt.vector("x", dtype="int32")).dtype
        'float64'
    """
    x = _real("cbrt", x)
    x = cast(x, float_dtype(x.dtype))
    zero, big = equal(x, 0), isinf(x)
    safe = where(logical_or(zero, big), 1, abs(x))
    y = power(safe, 1 / 3)
    y = (2 * y + safe / (y * y)) / 3  # Newton's step for y**3 = safe, without overflow
    root = where(x < 0, -y, y)
    # where both sides are safe: 0 ** (1/3) has the infinite slope, inf passes unchanged
    return where(zero, power(where(zero, x, 1), 1 / 3), where(big, stop_gradient(x), root))


def _operand(name: str, x: Any, label: str) -> Any:
    """A Var (real), or a Python number left as it is: weak, it takes the other operand's
    dtype (NumPy 2's rules), which ``as_var`` would fix to int64 or float64 first."""
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return float(x)
    return _real(name, x, label)


def _magnitude(x: Any) -> Any:
    return builtins.abs(x) if isinstance(x, float) else abs(x * 1.0)


def hypot(x1: Any, x2: Any) -> Var:
    """``sqrt(x1**2 + x2**2)`` without overflow or underflow (``jnp.hypot``'s form:
    ``max * sqrt(1 + (min / max)**2)``); inf when either is infinite, NaN otherwise.

    Example:
        >>> hypot(rt.vector("x", dtype="float32"), 1.0).dtype
        'float32'
    """
    a = _magnitude(_operand("hypot", x1, "x1"))
    b = _magnitude(_operand("hypot", x2, "x2"))
    big, small = maximum(a, b), minimum(a, b)
    zero = equal(big, 0)
    out = where(zero, big, big * sqrt(1 + square(small / where(zero, 1, big))))
    return where(logical_or(isinf(a), isinf(b)), math.inf, out)


def copysign(x1: Any, x2: Any) -> Var:
    """``|x1|`` with the sign of ``x2`` (-0.0 counts as negative), in floating point, as
    ``jnp.copysign``. The sign bit of a NaN ``x2`` is not read: it counts as positive.

    Example:
        >>> copysign(rt.vector("x", dtype="int64"), -1.0).dtype
        'float64'
    """
    magnitude = _magnitude(_operand("copysign", x1, "x1"))
    y = _operand("copysign", x2, "x2")
    if isinstance(y, float):
        negative: Any = math.copysign(1.0, y) < 0 and not math.isnan(y)
    else:
        y = y * 1.0
        zero = equal(y, 0)
        negative = logical_or(y < 0, logical_and(zero, reciprocal(where(zero, y, 1)) < 0))
    out = where(negative, -magnitude, magnitude)
    return cast(out, y.dtype) if isinstance(magnitude, float) and isinstance(y, Var) else out


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Var:
    """``base ** linspace(start, stop, num, endpoint)`` for scalar ``start`` and ``stop``
    (``num`` a static int), as ``jnp.logspace``.

    Example:
        >>> logspace(0.0, 3.0, 4).type.shape
        (4,)
    """
    if axis not in (0, -1):
        raise ShapeError(f"logspace: start and stop are scalars, so axis must be 0, got {axis!r}")
    values = power(base, linspace(start, stop, num, endpoint))
    return values if dtype is None else cast(values, dtype)
