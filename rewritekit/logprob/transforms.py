"""Unconstraining transforms: bijections between a constrained value and real numbers.

Samplers (NUTS) and optimizers move on an unconstrained real vector. A transform maps a
constrained value ``x`` (``x > 0``, a point on the simplex, ...) to an unconstrained ``y``
with ``forward`` and back with ``backward``; ``log_jac_det(y)`` is the log absolute
determinant of the Jacobian of ``backward``, the change-of-variables term

    log p_Y(y) = log p_X(backward(y)) + log_jac_det(y).

Elementwise transforms (``log``, ``logodds``, ``interval``, ``lower_bound``, ``upper_bound``)
have ``event_ndim == 0``; ``simplex``, ``ordered`` and
``sum_to_zero`` act on the last axis (``event_ndim == 1``) and ``cholesky_corr`` on the last
two (``event_ndim == 2``: an n x n matrix, from a vector of n(n-1)/2), and each sums its
``log_jac_det`` over them, so it always has the batch shape. Everything is written with
the tensor API, in forms that stay finite at ``|y| = 800`` in float64 (``log_sigmoid``/
``softplus``, never ``log(sigmoid(y))``), and keeps the dtype of its input: constants
enter as Python numbers (weak) or in that dtype.
``log_jac_det`` and its gradient stay finite far out even where ``backward(y)`` itself
rounds onto the edge of the set (``sigmoid(y)`` is 1.0 in float64 from y of about 37).

Example:
    >>> y = rt.vector("y")
    >>> str(logodds.log_jac_det(y).type)  # log_sigmoid(y) + log_sigmoid(-y)
    'float64[?]'
"""

from __future__ import annotations

import abc
import math
import numbers
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, RewritekitError, ShapeError
from rewritekit.ir import Constant, Var, short_name

__all__ = [
    "CholeskyCorr",
    "Interval",
    "Log",
    "LogOdds",
    "LowerBound",
    "Ordered",
    "Simplex",
    "SumToZero",
    "Transform",
    "TransformError",
    "UpperBound",
    "cholesky_corr",
    "interval",
    "log",
    "logodds",
    "lower_bound",
    "ordered",
    "simplex",
    "sum_to_zero",
    "upper_bound",
]


class TransformError(RewritekitError, ValueError):
    """A transform built with parameters that describe no set (e.g. ``interval(1, 0)``)."""


class Transform(abc.ABC):
    """A bijection from a constrained set to unconstrained reals (see the module docstring).

    Subclasses set ``name`` and ``event_ndim`` and define the three maps. Transforms are
    immutable values: equal when their parameters are equal, and hashable.

    Example:
        >>> x = log.backward(rt.scalar("y"))  # exp(y) > 0
    """

    name: ClassVar[str]
    event_ndim: ClassVar[int]

    @abc.abstractmethod
    def forward(self, x: Any) -> Var:
        """The unconstrained value ``y`` of a constrained value ``x``."""

    @abc.abstractmethod
    def backward(self, y: Any) -> Var:
        """The constrained value ``x`` of an unconstrained value ``y``."""

    @abc.abstractmethod
    def log_jac_det(self, y: Any) -> Var:
        """log |det d backward(y) / dy|, summed over the last ``event_ndim`` axes."""

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return repr(self)


@dataclass(frozen=True, repr=False)
class Log(Transform):
    """``x > 0``: ``y = log(x)``, ``x = exp(y)``, ``log|J| = y``.

    Example:
        >>> log.forward(rt.vector("sigma")).dtype
        'float64'
    """

    name: ClassVar[str] = "log"
    event_ndim: ClassVar[int] = 0

    def forward(self, x: Any) -> Var:
        return rt.log(x)

    def backward(self, y: Any) -> Var:
        return rt.exp(y)

    def log_jac_det(self, y: Any) -> Var:
        return rt.as_tensor(y)


@dataclass(frozen=True, repr=False)
class LogOdds(Transform):
    """``0 < x < 1``: ``y = logit(x)``, ``x = sigmoid(y)``,
    ``log|J| = log_sigmoid(y) + log_sigmoid(-y)`` (that is, log of sigmoid'(y)).

    Example:
        >>> logodds.backward(rt.scalar("y", dtype="float32")).dtype
        'float32'
    """

    name: ClassVar[str] = "logodds"
    event_ndim: ClassVar[int] = 0

    def forward(self, x: Any) -> Var:
        return rt.logit(x)

    def backward(self, y: Any) -> Var:
        return rt.sigmoid(y)

    def log_jac_det(self, y: Any) -> Var:
        return rt.log_sigmoid(y) + rt.log_sigmoid(-rt.as_tensor(y))


Bound = Var | int | float


@dataclass(frozen=True, repr=False)
class Interval(Transform):
    """``lower < x < upper``: ``x = lower + (upper - lower) * sigmoid(y)``,
    ``y = log(x - lower) - log(upper - x)``,
    ``log|J| = log(upper - lower) + log_sigmoid(y) + log_sigmoid(-y)``.

    The bounds are Python numbers (weak: they keep a float32 graph float32) or Vars, such
    as the parameters of a ``uniform(low, high)`` random variable; NumPy scalars become
    Python numbers and arrays constants. Bounds known when it is built are checked.

    Example:
        >>> low, high = rt.scalar("low"), rt.scalar("high")
        >>> str(interval(low, high)), str(interval(0, 1))
        ('interval(low, high)', 'interval(0, 1)')
    """

    lower: Bound
    upper: Bound

    name: ClassVar[str] = "interval"
    event_ndim: ClassVar[int] = 0

    def __post_init__(self) -> None:
        missing = [name for name in ("lower", "upper") if getattr(self, name) is None]
        if missing:
            bounds = f"{' and '.join(missing)} bound{'s are' if len(missing) > 1 else ' is'}"
            raise TransformError(
                f"interval: the {bounds} "
                "missing (got None); give both bounds, or use `log` (shifted or negated) "
                "for a value bounded on one side"
            )
        # normalized here so that interval(0, 1) == Interval(np.float64(0), 1.0)
        lower, upper = _bound(self.lower, "lower"), _bound(self.upper, "upper")
        _check_bounds(lower, upper)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    def forward(self, x: Any) -> Var:
        # log((x - l) / (u - x)) from the two gaps: accurate near both bounds, where
        # logit((x - l) / (u - l)) would lose the gap to the upper bound to rounding
        x = rt.as_tensor(x)
        return rt.log(x - self.lower) - rt.log(self.upper - x)

    def backward(self, y: Any) -> Var:
        return self.lower + (self.upper - self.lower) * rt.sigmoid(y)

    def log_jac_det(self, y: Any) -> Var:
        width = self.upper - self.lower
        log_width = rt.log(width) if isinstance(width, Var) else math.log(width)
        return log_width + rt.log_sigmoid(y) + rt.log_sigmoid(-rt.as_tensor(y))

    def __repr__(self) -> str:
        return f"interval({_bound_str(self.lower)}, {_bound_str(self.upper)})"


@dataclass(frozen=True, repr=False)
class LowerBound(Transform):
    """``x > lower``: ``y = log(x - lower)``, ``x = lower + exp(y)``, ``log|J| = y``. The
    bound is a number or a Var (a ``pareto``'s scale), as ``interval``'s.

    Example:
        >>> str(lower_bound(rt.scalar("scale")))
        'lower_bound(scale)'
    """

    lower: Bound

    name: ClassVar[str] = "lower_bound"
    event_ndim: ClassVar[int] = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "lower", _one_bound("lower_bound", self.lower, "lower"))

    def forward(self, x: Any) -> Var:
        return rt.log(rt.as_tensor(x) - self.lower)

    def backward(self, y: Any) -> Var:
        return self.lower + rt.exp(y)

    def log_jac_det(self, y: Any) -> Var:
        return rt.as_tensor(y)

    def __repr__(self) -> str:
        return f"lower_bound({_bound_str(self.lower)})"


@dataclass(frozen=True, repr=False)
class UpperBound(Transform):
    """``x < upper``: ``y = log(upper - x)``, ``x = upper - exp(y)``, ``log|J| = y``.

    Example:
        >>> str(upper_bound(0))
        'upper_bound(0)'
    """

    upper: Bound

    name: ClassVar[str] = "upper_bound"
    event_ndim: ClassVar[int] = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "upper", _one_bound("upper_bound", self.upper, "upper"))

    def forward(self, x: Any) -> Var:
        return rt.log(self.upper - rt.as_tensor(x))

    def backward(self, y: Any) -> Var:
        return self.upper - rt.exp(y)

    def log_jac_det(self, y: Any) -> Var:
        return rt.as_tensor(y)

    def __repr__(self) -> str:
        return f"upper_bound({_bound_str(self.upper)})"


def lower_bound(lower: Any) -> LowerBound:
    """The transform of ``x > lower`` (see ``LowerBound``).

    Raises:
        TransformError: the bound is None, or known and not finite.
        DTypeError: the bound is not a number, an array of numbers or a Var.
    """
    return LowerBound(lower)


def upper_bound(upper: Any) -> UpperBound:
    """The transform of ``x < upper`` (see ``UpperBound``).

    Raises:
        TransformError: the bound is None, or known and not finite.
        DTypeError: the bound is not a number, an array of numbers or a Var.
    """
    return UpperBound(upper)


def _one_bound(name: str, value: Any, side: str) -> Bound:
    if value is None:
        raise TransformError(f"{name}: the {side} bound is missing (got None)")
    bound = _bound(value, side)
    known = _known_value(bound)
    if known is not None and not np.all(np.isfinite(known)):
        raise TransformError(f"{name}: the {side} bound must be finite, got {_bound_str(bound)}")
    return bound


def interval(lower: Any, upper: Any) -> Interval:
    """The transform of ``lower < x < upper`` (see ``Interval``).

    Args:
        lower: the lower bound: a number, an array or a Var (broadcast against x).
        upper: the upper bound, likewise.

    Raises:
        TransformError: both bounds are None, or both bounds are known and some lower bound
            is not below its upper bound, or a known bound is not finite.
        DTypeError: a bound is not a number, an array of numbers or a Var (the message
            names the argument).
        BroadcastError: the known bounds' shapes do not broadcast.

    Example:
        >>> interval(-1, 1).log_jac_det(rt.vector("y", dtype="float32")).dtype
        'float32'
    """
    return Interval(lower, upper)


def _check_bounds(lower: Bound, upper: Bound) -> None:
    """Raise when the bounds known at build time describe no interval."""
    lo, hi = _known_value(lower), _known_value(upper)
    for side, value in (("lower", lo), ("upper", hi)):
        if value is not None and not np.all(np.isfinite(value)):
            raise TransformError(
                f"interval: the {side} bound must be finite, got lower={_bound_str(lower)}, "
                f"upper={_bound_str(upper)}; use `log` for a value bounded on one side"
            )
    if lo is None or hi is None:
        return
    try:
        below = np.less(lo, hi)
    except ValueError:
        raise BroadcastError(
            f"interval: cannot broadcast the bounds' shapes {np.shape(lo)} and {np.shape(hi)} "
            f"(lower={_bound_str(lower)}, upper={_bound_str(upper)})"
        ) from None
    if not np.all(below):
        raise TransformError(
            f"interval: the lower bound must be below the upper bound, got "
            f"lower={_bound_str(lower)} and upper={_bound_str(upper)}"
        )


@dataclass(frozen=True, repr=False)
class Simplex(Transform):
    """Stan's stick-breaking transform of ``x[..., K]`` on the unit simplex (``x >= 0``,
    ``sum(x) = 1``) to ``y[..., K - 1]``.

    With ``z_k = sigmoid(y_k - log(K - k))`` for ``k = 1..K-1`` and the stick left before
    step k, ``r_k = 1 - sum_{k' < k} x_k' = prod_{k' < k} (1 - z_k')``:
    ``x_k = r_k z_k``, ``x_K = r_K``, and
    ``log|J| = sum_k [log z_k + log(1 - z_k) + log r_k]`` (the Jacobian of ``y -> x[:K-1]``,
    which is triangular). ``y = 0`` is the centre ``x = 1/K``. Backward works in log space
    (``log r_k`` is a running sum of ``log_sigmoid(-t)``), so tiny components keep their
    precision; forward takes ``1 - z_k = r_(k+1) / r_k`` from sums of the remaining
    components, not ``1 - cumsum``, and so ignores any rounding error in ``sum(x)``.

    K must be static: the last length of ``x`` for forward, of ``y`` (K - 1) for backward.

    Example:
        >>> simplex.backward(rt.tensor("y", shape=(None, 2))).type.shape
        (None, 3)
    """

    name: ClassVar[str] = "simplex"
    event_ndim: ClassVar[int] = 1

    def forward(self, x: Any) -> Var:
        x = rt.as_tensor(x)
        k = _event_length(self, "forward", x, "x")
        remaining = rt.cumsum(x[..., ::-1], axis=-1)[..., ::-1]  # sum_{k' >= k} x_k'
        return rt.log(x[..., :-1]) - rt.log(remaining[..., 1:]) + _log_steps(k - 1, x)

    def backward(self, y: Any) -> Var:
        log_z, _, log_rest = self._pieces(y, "backward")
        # x_k = r_k z_k, with z_K = 1 for the last component (the stick left over)
        log_z_full = rt.concatenate([log_z, rt.zeros_like(log_rest[..., :1])], axis=-1)
        return rt.exp(log_rest + log_z_full)

    def log_jac_det(self, y: Any) -> Var:
        log_z, log1m_z, log_rest = self._pieces(y, "log_jac_det")
        return rt.sum(log_z + log1m_z, axis=-1) + rt.sum(log_rest[..., :-1], axis=-1)

    def _pieces(self, y: Any, method: str) -> tuple[Var, Var, Var]:
        """log z_k, log(1 - z_k) (k < K) and log r_k (k <= K) of ``y``."""
        y = rt.as_tensor(y)
        t = y - _log_steps(_event_length(self, method, y, "y"), y)
        log1m_z = rt.log_sigmoid(-t)
        zero = rt.zeros_like(log1m_z[..., :1])
        log_rest = rt.concatenate([zero, rt.cumsum(log1m_z, axis=-1)], axis=-1)
        return rt.log_sigmoid(t), log1m_z, log_rest


@dataclass(frozen=True, repr=False)
class Ordered(Transform):
    """``x[..., K]`` strictly increasing: ``y_0 = x_0``, ``y_k = log(x_k - x_(k-1))``;
    ``x = cumsum([y_0, exp(y_1), ..., exp(y_(K-1))])``; ``log|J| = sum_(k >= 1) y_k``
    (the Jacobian is lower triangular with diagonal ``1, exp(y_1), ...``). A step
    ``exp(y_k)`` below the spacing of floats at ``x_(k-1)`` rounds away, leaving two equal
    entries.

    Example:
        >>> ordered.log_jac_det(rt.tensor("y", shape=(None, 4))).type.shape
        (None,)
    """

    name: ClassVar[str] = "ordered"
    event_ndim: ClassVar[int] = 1

    def forward(self, x: Any) -> Var:
        x = _event_input(self, "forward", x)
        return rt.concatenate([x[..., :1], rt.log(x[..., 1:] - x[..., :-1])], axis=-1)

    def backward(self, y: Any) -> Var:
        y = _event_input(self, "backward", y)
        steps = rt.concatenate([y[..., :1], rt.exp(y[..., 1:])], axis=-1)
        return rt.cumsum(steps, axis=-1)

    def log_jac_det(self, y: Any) -> Var:
        y = _event_input(self, "log_jac_det", y)
        return rt.sum(y[..., 1:], axis=-1)


@dataclass(frozen=True, repr=False)
class SumToZero(Transform):
    """``x[..., n]`` with ``sum(x) = 0`` from ``y[..., n - 1]`` by an isometry (Stan's
    ``sum_to_zero_vector``): ``x = V y`` with the orthonormal Helmert basis of the
    sum-zero plane, column ``j`` being ``(1, ..., 1, -(j + 1), 0, ...) / sqrt((j+1)(j+2))``
    (``j + 1`` ones); ``y = V^T x``. Both run in O(n) with cumulative sums.

    ``log|J| = -log(n) / 2``, a constant: as for ``simplex``, the Jacobian of
    ``y -> x[..., :n-1]`` (x's last entry is fixed by the others), so a density of the
    first n - 1 entries is one of ``y``. Against the plane's own surface measure the map
    is an isometry and the term would be 0; the two differ by a constant only.

    Example:
        >>> sum_to_zero.backward(rt.tensor("y", shape=(None, 3))).type.shape
        (None, 4)
    """

    name: ClassVar[str] = "sum_to_zero"
    event_ndim: ClassVar[int] = 1

    def forward(self, x: Any) -> Var:
        x = rt.as_tensor(x)
        scale, steps = _helmert(_event_length(self, "forward", x, "x") - 1, x)
        # y_j = (x_0 + ... + x_j - (j + 1) x_(j+1)) / sqrt((j + 1)(j + 2))
        return scale * (rt.cumsum(x[..., :-1], axis=-1) - steps * x[..., 1:])

    def backward(self, y: Any) -> Var:
        y = rt.as_tensor(y)
        scale, steps = _helmert(_event_length(self, "backward", y, "y"), y)
        w = scale * y
        # x_k = sum_(j >= k) w_j - k w_(k-1): the ones above the diagonal, the -(j + 1) on it
        tail = rt.cumsum(w[..., ::-1], axis=-1)[..., ::-1]
        zero = rt.zeros_like(w[..., :1])
        return rt.concatenate([tail, zero], axis=-1) - rt.concatenate([zero, steps * w], -1)

    def log_jac_det(self, y: Any) -> Var:
        y = rt.as_tensor(y)
        n = _event_length(self, "log_jac_det", y, "y") + 1
        return rt.zeros_like(rt.sum(y, axis=-1)) - 0.5 * math.log(n)


@dataclass(frozen=True, repr=False)
class CholeskyCorr(Transform):
    """The lower Cholesky factor ``L[..., n, n]`` of an n x n correlation matrix from
    ``y[..., n(n-1)/2]``, as Stan's ``cholesky_factor_corr`` and NumPyro's
    ``CorrCholeskyTransform``.

    ``y`` fills the strictly lower triangle row by row (``np.tril_indices(n, -1)``):
    partial correlations ``t = tanh(y)``, then stick-breaking along each row,
    ``L_ij = t_ij sqrt(1 - sum_(k<j) L_ik^2)`` for ``j < i`` and ``L_ii`` the rest of the
    unit row norm. ``log|J|`` is that of the map from ``y`` onto the strictly lower
    entries (the diagonal follows from them):
    ``sum_(j<i) [log(1 - t_ij^2) (1 + (i - 1 - j) / 2)]``, with
    ``log(1 - tanh(y)^2) = 2 (log 2 - y - softplus(-2 y))``, finite for any ``y``.
    Forward takes ``t_ij = L_ij / sqrt(sum_(k>=j) L_ik^2)`` (the row's remaining norm, as
    ``simplex`` does: it ignores rounding in the row's norm), then ``y = arctanh(t)``.

    n must be static: the last length of ``L`` for forward, of ``y`` (n(n-1)/2) for
    backward.

    Example:
        >>> cholesky_corr.backward(rt.tensor("y", shape=(None, 3))).type.shape
        (None, 3, 3)
    """

    name: ClassVar[str] = "cholesky_corr"
    event_ndim: ClassVar[int] = 2

    def forward(self, x: Any) -> Var:
        x = _event_input(self, "forward", x)
        n = _event_length(self, "forward", x, "x")
        if x.ndim < 2 or x.type.shape[-2] not in (None, n):
            raise ShapeError(
                f"{self}.forward: input {short_name(x)} must end with a square n x n "
                f"matrix, got type {x.type}"
            )
        rows, cols = np.tril_indices(n, -1)
        remaining = rt.cumsum(rt.square(x)[..., ::-1], axis=-1)[..., ::-1]  # sum_(k>=j)
        return rt.arctanh(x[..., rows, cols] / rt.sqrt(remaining[..., rows, cols]))

    def backward(self, y: Any) -> Var:
        y = rt.as_tensor(y)
        n = _triangle_side(self, "backward", y)
        place = _tril_places(n)  # each entry's position in [0, y...]: 0 off the triangle
        zero = rt.zeros_like(y[..., :1])
        t = rt.concatenate([zero, rt.tanh(y)], axis=-1)[..., place]
        log1m_t2 = rt.concatenate([zero, _log1m_tanh2(y)], axis=-1)[..., place]
        # the squared norm left before column j: prod_(k<j) (1 - t_ik^2), in log space
        left = rt.cumsum(log1m_t2, axis=-1) - log1m_t2
        eye = np.eye(n, dtype=y.dtype if y.type.kind == "f" else "float64")
        return (t + eye) * rt.exp(0.5 * left)  # zero above the diagonal, where t = 0

    def log_jac_det(self, y: Any) -> Var:
        y = rt.as_tensor(y)
        n = _triangle_side(self, "log_jac_det", y)
        rows, cols = np.tril_indices(n, -1)
        weights = 1 + (rows - 1 - cols) / 2  # tanh's own, and a half per later column
        dtype = y.dtype if y.type.kind == "f" else "float64"
        return rt.sum(_log1m_tanh2(y) * rt.constant(weights, dtype=dtype), axis=-1)


log = Log()
logodds = LogOdds()
simplex = Simplex()
ordered = Ordered()
sum_to_zero = SumToZero()
cholesky_corr = CholeskyCorr()


def _helmert(count: int, like: Var) -> tuple[Var, Var]:
    """The constants 1 / sqrt((j + 1)(j + 2)) and j + 1 for j < count, in ``like``'s dtype."""
    dtype = like.dtype if like.type.kind == "f" else "float64"
    steps = np.arange(1, count + 1, dtype="float64")
    scale = 1 / np.sqrt(steps * (steps + 1))
    return rt.constant(scale, dtype=dtype), rt.constant(steps, dtype=dtype)


def _log1m_tanh2(y: Var) -> Var:
    """log(1 - tanh(y)^2) = log(sech(y)^2), exact where tanh(y) rounds to +-1."""
    return 2 * (math.log(2) - y - rt.softplus(-2 * y))


def _triangle_side(transform: Transform, method: str, y: Var) -> int:
    """n, from the static length n(n-1)/2 of ``y``'s last axis."""
    m = _event_length(transform, method, y, "y")
    n = (1 + math.isqrt(1 + 8 * m)) // 2
    if n * (n - 1) // 2 != m:
        raise ShapeError(
            f"{transform}.{method}: the last axis of {short_name(y)} has length {m}, which is "
            "not n(n-1)/2 for any n (1, 3, 6, 10, ...)"
        )
    return n


def _tril_places(n: int) -> np.ndarray:
    """An n x n array: 1 + the position of (i, j) in ``np.tril_indices(n, -1)`` for j < i,
    else 0."""
    places = np.zeros((n, n), dtype="int64")
    rows, cols = np.tril_indices(n, -1)
    places[rows, cols] = np.arange(1, len(rows) + 1)
    return places


def _event_input(transform: Transform, method: str, value: Any) -> Var:
    """``value`` as a Var with at least one axis (the event axis)."""
    var = rt.as_tensor(value)
    if var.ndim == 0:
        raise ShapeError(
            f"{transform}.{method}: input {short_name(var)} must have at least one axis "
            f"(the event axis), got type {var.type}"
        )
    return var


def _event_length(transform: Transform, method: str, var: Var, role: str) -> int:
    """The static length of ``var``'s last axis, which the transform needs."""
    length = _event_input(transform, method, var).type.shape[-1]
    if length is None:
        example = var.name if var.name and var.owner is None else role
        raise ShapeError(
            f"{transform}.{method}: needs the static length of the last axis of its input "
            f"{short_name(var)}, got type {var.type}; build the input with one, e.g. "
            f"rt.tensor({example!r}, shape=(None, 3))"
        )
    return length


def _log_steps(count: int, like: Var) -> Var:
    """The constants log(K - k) for k = 1..K-1 (count = K - 1), in ``like``'s float dtype."""
    dtype = like.dtype if like.type.kind == "f" else "float64"
    return rt.constant(np.log(np.arange(count, 0, -1, dtype="float64")), dtype=dtype)


def _bound(value: Any, side: str) -> Bound:
    """A bound as kept by ``Interval``: Vars and Python numbers as they are (weak), NumPy
    scalars as Python numbers, arrays as constants."""
    if isinstance(value, Var):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return value.item() if isinstance(value, np.generic) else value
    try:
        array = np.asarray(value)
        if array.ndim == 0 and array.dtype.kind in "iuf":
            return array.item()
        return rt.constant(array)
    except (DTypeError, ValueError):  # not numeric (None, text), or a ragged list
        raise DTypeError(
            f"interval: the {side} bound must be a number, an array of numbers or a Var, "
            f"got {value!r}"
        ) from None


def _known_value(bound: Bound) -> Any:
    """The value of a bound known when the graph is built, or None."""
    if isinstance(bound, Constant):
        return bound.data
    return None if isinstance(bound, Var) else bound


def _bound_str(bound: Bound) -> str:
    if isinstance(bound, Var):
        return bound.name if bound.name and not isinstance(bound, Constant) else short_name(bound)
    return repr(bound)
