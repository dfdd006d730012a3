"""Unconstraining transforms: bijections between a constrained value and real numbers.

Samplers (NUTS) and optimizers move on an unconstrained real vector. A transform maps a
constrained value ``x`` (``x > 0``, a point on the simplex, ...) to an unconstrained ``y``
with ``forward`` and back with ``backward``; ``log_jac_det(y)`` is the log absolute
determinant of the Jacobian of ``backward``, the change-of-variables term

    log p_Y(y) = log p_X(backward(y)) + log_jac_det(y).

Elementwise transforms have ``event_ndim == 0``; ``simplex`` and ``ordered`` act on the
last axis (``event_ndim == 1``) and sum their ``log_jac_det`` over it, so it always has
the batch shape. Everything is written with the tensor API, in forms that stay finite at
``|y| = 800`` in float64 (``log_sigmoid``/``softplus``, never ``log(sigmoid(y))``), and
keeps the dtype of its input: constants enter as Python numbers (weak) or in that dtype.
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
    "Interval",
    "Log",
    "LogOdds",
    "Ordered",
    "Simplex",
    "Transform",
    "TransformError",
    "interval",
    "log",
    "logodds",
    "ordered",
    "simplex",
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


log = Log()
logodds = LogOdds()
simplex = Simplex()
ordered = Ordered()


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
