"""Truncated random variables: ``truncate(x, lower, upper)``.

``truncate(x, lower, upper)`` is a new random variable with ``x``'s distribution restricted
to ``[lower, upper]`` and renormalised: density ``p(v) / P(lower <= X <= upper)`` inside,
``-inf`` outside (PyMC's ``Truncated``). For a discrete ``x`` both bounds are included.

It is drawn by inversion, with ``x``'s key and shape: ``e ~ Uniform(0, 1)``, and the quantile
(``rl.cdfs.icdf``) of ``F(lower) + e P(lower <= X <= upper)``, that sum taken in log space.
Where the interval lies in the upper tail (``F(lower) > 1/2``) the draw is made from the
survival side instead, ``S(upper) + (1 - e) P(...)``, and refined by a few Newton steps on
``log S(v) = log q`` (continuous distributions), so a normal truncated to ``[40, inf)``
still draws correct values where ``1 - q`` rounds to 1. The log-normaliser
``log P(lower <= X <= upper)`` is a log-diff-exp of log-CDFs, or of log-survival
functions in the upper tail (``log_mass``).

The graph ``truncate`` returns is ``where(True, clip(sample, lower, upper), x)``: its value is
the sample; ``x``'s node stays in the graph (the ``where`` discards it, and ``rk.function``'s
rules fold it away) so that the density rule (``rewritekit.logprob.measurable``) reads the
distribution, its parameters and the bounds from the graph (``parts``). The rule recognises
the form by the uniform draw that shares ``x``'s key. No Op of its own: one would need
implementations in the backends, which this layer does not import.

Example:
    >>> k, x = rr.normal(rr.key(), 0.0, 1.0, size=(3,))
    >>> t = truncate(x, lower=5.0)
    >>> lp = rl.logprob(t, rt.vector("v"))
"""

from __future__ import annotations

import math
from typing import Any

import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError, ShapeError
from rewritekit.ir import Constant, Var, ancestors, as_var
from rewritekit.logprob import cdfs, densities
from rewritekit.random import is_draw, uniform
from rewritekit.tensor.elemwise import Cast, Clip, Where
from rewritekit.tensor.random import RandomVariable, UniformRV, describe

__all__ = ["log_cdfs", "log_mass", "parts", "truncate"]

_LOG_HALF = math.log(0.5)
_NEWTON_STEPS = 4  # from a start within 1e-6, or from the bound: 1e-16 for normal tails


def truncate(x: Var, lower: Any = None, upper: Any = None) -> Var:
    """``x``'s distribution restricted to ``[lower, upper]``, as a new random variable.

    Args:
        x: a random variable's draw (a scalar distribution with a quantile function in
            ``rl.cdfs.ICDF``: normal, exponential, uniform, ...).
        lower: the lower bound (a number, array or Var holding no random draw); None for
            none. Included for discrete distributions.
        upper: the upper bound, likewise.

    Returns:
        A Var of ``x``'s type whose value is a draw from the truncated distribution (made
        with ``x``'s key); ``rl.logprob`` and ``rl.joint_logprob`` find its density.

    Raises:
        GraphTypeError: ``x`` is not a draw, its distribution has no quantile function or
            CDF, or a bound holds a random draw.
        ShapeError: a bound would broadcast ``x`` to more elements.

    Example:
        >>> k, x = rr.exponential(rr.key(), 2.0, size=(100,))
        >>> truncate(x, 1.0, 3.0).type
        TensorType(dtype='float64', shape=(100,))
    """
    if not is_draw(x):
        raise GraphTypeError(
            f"truncate: x must be a random variable's draw (rr.normal(key, ...)[1]), got {x!r}"
        )
    node = x.owner
    name = node.op.name
    if node.op.ndim_supp:
        raise GraphTypeError(f"truncate: the {name} draw is multivariate; truncate a scalar one")
    missing = [
        t for t, table in (("ICDF", cdfs.ICDF), ("LOGCDF", cdfs.LOGCDF)) if name not in table
    ]
    if missing:
        raise GraphTypeError(
            f"truncate: the {name} draw has no {' or '.join(missing)} entry in rl.cdfs (no "
            "quantile function to draw by inversion, or no CDF to normalise with); "
            f"distributions that have both: {', '.join(sorted(set(cdfs.ICDF) & set(cdfs.LOGCDF)))}"
        )
    bound_dtype = x.dtype if x.type.kind == "f" else "float64"
    lower = _bound(x, lower, -math.inf, "lower", bound_dtype)
    upper = _bound(x, upper, math.inf, "upper", bound_dtype)
    sample = _sample(x, lower, upper)
    return rt.where(True, rt.cast(rt.clip(sample, lower, upper), x.dtype), x)


def parts(t: Var) -> tuple[Var, Var, Var] | None:
    """``(x, lower, upper)`` when ``t`` is ``truncate(x, lower, upper)``, else None.

    Example:
        >>> k, x = rr.normal(rr.key(), 0.0, 1.0)
        >>> parts(truncate(x, 0.0))[0] is x
        True
    """
    node = t.owner
    if node is None or not isinstance(node.op, Where):
        return None
    flag, value, x = node.inputs
    if not (isinstance(flag, Constant) and flag.ndim == 0 and bool(flag.data)) or not is_draw(x):
        return None
    if value.owner is not None and isinstance(value.owner.op, Cast):
        value = value.owner.inputs[0]
    if value.owner is None or not isinstance(value.owner.op, Clip):
        return None
    sample, lower, upper = value.owner.inputs
    return (x, lower, upper) if _draws_with_key(sample, x.owner.inputs[0]) else None


def log_mass(x: Var, lower: Any, upper: Any) -> Var:
    """log P(lower <= X <= upper) for the draw ``x``, in log space: a log-diff-exp of
    log-CDFs, or of log-survival functions where ``F(lower) > 1/2`` (so a normal's
    ``[40, inf)`` is ``log_ndtr(-40)``, not ``log(1 - 1)``); ``-inf`` where the interval
    holds no mass or the parameters are invalid.

    Example:
        >>> k, x = rr.normal(rr.key(), 0.0, 1.0)
        >>> log_mass(x, -1.0, 1.0).dtype
        'float64'
    """
    return _sides(x, lower, upper)[0]


def log_cdfs(x: Var, bound: Any) -> tuple[Var, Var]:
    """``(log P(X <= bound), log P(X > bound))`` for the draw ``x``, exactly ``(-inf, 0)``
    or ``(0, -inf)`` at an infinite bound, with finite gradients in the parameters there
    (``rl.cdfs`` is evaluated at a safe point instead, the median where ``x`` has a
    quantile function, else 0: its derivatives at an infinite point are NaN, and would
    reach the gradient through a ``where``).

    Example:
        >>> k, x = rr.normal(rr.key(), 0.0, 1.0)
        >>> log_f, log_s = log_cdfs(x, math.inf)
    """
    bound = rt.as_tensor(bound)
    finite = rt.isfinite(bound)
    inside = cdfs.icdf(x, 0.5) if x.owner.op.name in cdfs.ICDF else 0.0
    safe = rt.where(finite, bound, inside)
    log_f, log_s = cdfs.logcdf(x, safe), cdfs.logccdf(x, safe)
    above = bound > 0
    return (
        rt.where(finite, log_f, rt.where(above, 0.0, -math.inf)),
        rt.where(finite, log_s, rt.where(above, -math.inf, 0.0)),
    )


# --- helpers -----------------------------------------------------------------------------


def _bound(x: Var, value: Any, default: float, side: str, dtype: str) -> Var:
    bound = as_var(default if value is None else value, context=f"truncate: {side}")
    if bound.type.kind not in "biuf":
        raise GraphTypeError(
            f"truncate: the {side} bound has dtype {bound.dtype}; expected a number"
        )
    drawn = [v for v in ancestors(bound) if is_draw(v)]
    if drawn:
        raise GraphTypeError(
            f"truncate: the {side} bound holds {describe(drawn[0])}; bounds must be "
            "parameters (numbers, arrays or Vars computed from no random draw)"
        )
    tail = x.type.shape[x.ndim - bound.ndim :] if bound.ndim <= x.ndim else None
    if tail is None or any(
        d is not None and d != 1 and e is not None and d != e
        for d, e in zip(bound.type.shape, tail, strict=True)
    ):
        raise ShapeError(
            f"truncate: the {side} bound ({bound.type}) would broadcast {describe(x)} "
            f"({x.type}) to more elements; give one bound per element or fewer"
        )
    return rt.cast(bound, dtype) if bound.type.kind != "f" else bound


def _below(x: Var, lower: Var) -> Var:
    """The point whose CDF is P(X < lower): ``lower`` itself, or ``ceil(lower) - 1`` for a
    discrete ``x`` (whose lower bound is included)."""
    return lower if x.type.kind == "f" else rt.ceil(lower) - 1


def _sides(x: Var, lower: Var, upper: Var) -> tuple[Var, Var, Var, Var, Var]:
    """``(log mass, upper side?, log F(below lower), log S(upper))``, and log S(below)."""
    log_f_low, log_s_low = log_cdfs(x, _below(x, rt.as_tensor(lower)))
    log_f_high, log_s_high = log_cdfs(x, upper)
    upper_side = log_f_low > _LOG_HALF
    mass = rt.where(
        upper_side,
        _log_diff_exp(log_s_low, log_s_high),
        _log_diff_exp(log_f_high, log_f_low),
    )
    return mass, upper_side, log_f_low, log_s_high, log_s_low


def _log_diff_exp(a: Var, b: Var) -> Var:
    """log(exp(a) - exp(b)) for a > b; -inf where a <= b or either is NaN (the discarded
    branch sees a safe -1)."""
    ok = a > b
    return rt.where(ok, a + rt.log1mexp(rt.where(ok, b - a, -1.0)), -math.inf)


def _sample(x: Var, lower: Var, upper: Var) -> Var:
    """A draw of the truncated distribution by inversion (see the module docstring)."""
    node = x.owner
    shape = x.type.shape
    size = shape if all(d is not None for d in shape) else rt.shape(x)
    dtype = x.dtype if x.type.kind == "f" else "float64"
    _, e = uniform(node.inputs[0], 0.0, 1.0, size=size, dtype=dtype)
    mass, upper_side, log_f_low, log_s_high, _ = _sides(x, lower, upper)
    log_u = rt.logaddexp(log_f_low, rt.log(e) + mass)  # F(lower) + e mass
    log_q = rt.logaddexp(log_s_high, rt.log1p(-e) + mass)  # S(upper) + (1 - e) mass
    from_below = cdfs.icdf(x, rt.exp(log_u))
    from_above = cdfs.icdf(x, -rt.expm1(log_q))
    if x.type.kind == "f" and hasattr(densities, node.op.name):
        from_above = _newton(x, from_above, log_q, lower, upper)
    return rt.where(upper_side, from_above, from_below)


def _newton(x: Var, start: Var, log_q: Var, lower: Var, upper: Var) -> Var:
    """Newton steps on log S(v) = log q from ``start`` (or ``lower`` where the quantile
    of 1 - q overflowed): exact where 1 - q rounds to 1. log S is concave or convex in a
    tail, so the steps converge monotonically after at most one overshoot; each stays in
    [lower, upper]."""
    node = x.owner
    density = getattr(densities, node.op.name)
    v = rt.clip(rt.where(rt.isfinite(start), start, lower), lower, upper)
    for _ in range(_NEWTON_STEPS):
        log_s = cdfs.logccdf(x, v)
        step = (log_s - log_q) * rt.exp(log_s - density(v, *node.inputs[2:]))
        v = rt.clip(v + rt.where(rt.isfinite(step), step, 0.0), lower, upper)
    return v


def _draws_with_key(sample: Var, key: Var) -> bool:
    """True when ``sample`` is computed from a uniform draw made with ``key`` (without
    looking through other draws)."""
    seen, stack = {sample}, [sample]
    while stack:
        owner = stack.pop().owner
        if owner is None:
            continue
        if isinstance(owner.op, RandomVariable):
            if isinstance(owner.op, UniformRV) and owner.inputs[0] is key:
                return True
            continue
        for inp in owner.inputs:
            if inp not in seen:
                seen.add(inp)
                stack.append(inp)
    return False
