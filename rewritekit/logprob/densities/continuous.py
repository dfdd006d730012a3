"""Log-densities of the continuous scalar distributions (see ``rewritekit.logprob.densities``)."""

from __future__ import annotations

import math
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.logprob.densities._common import (
    _HALF_LOG_2PI,
    _LOG_2,
    _LOG_2PI,
    _LOG_PI,
    _check,
    _floats,
    _is_probability,
    _log1p_square,
    _xlog1py,
)

__all__ = [
    "beta",
    "cauchy",
    "chisquare",
    "exponential",
    "gamma",
    "gumbel",
    "half_student_t",
    "halfcauchy",
    "halfnormal",
    "inverse_gamma",
    "laplace",
    "logistic",
    "lognormal",
    "normal",
    "pareto",
    "skew_normal",
    "student_t",
    "truncated_normal",
    "uniform",
    "von_mises",
    "wald",
    "weibull",
]


# --- continuous --------------------------------------------------------------------------


def normal(value: Any, loc: Any, scale: Any) -> Var:
    """Normal: ``-(x - loc)**2 / (2 scale**2) - log(scale) - log(2 pi) / 2``.

    Support: real x; scale > 0.

    Example:
        >>> normal(rt.vector("x"), 0.0, 1.0).type
        TensorType(dtype='float64', shape=(None,))
    """
    value, loc, scale = _floats("normal", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    return _check(-0.5 * rt.square(z) - _HALF_LOG_2PI - rt.log(scale), scale > 0)


def halfnormal(value: Any, scale: Any) -> Var:
    """Half-normal: ``log(2 / pi) / 2 - x**2 / (2 scale**2) - log(scale)``.

    Support: x >= 0; scale > 0.

    Example:
        >>> halfnormal(rt.scalar("x"), 2.0).dtype
        'float64'
    """
    value, scale = _floats("halfnormal", value=value, scale=scale)
    z = value / scale
    logp = 0.5 * math.log(2 / math.pi) - 0.5 * rt.square(z) - rt.log(scale)
    return _check(logp, value >= 0, scale > 0)


def cauchy(value: Any, loc: Any, scale: Any) -> Var:
    """Cauchy: ``-log(pi) - log(scale) - log(1 + ((x - loc) / scale)**2)``.

    Support: real x; scale > 0.

    Example:
        >>> cauchy(rt.vector("x"), rt.scalar("loc"), 1.0).type.shape
        (None,)
    """
    value, loc, scale = _floats("cauchy", value=value, loc=loc, scale=scale)
    logp = -_LOG_PI - rt.log(scale) - _log1p_square((value - loc) / scale)
    return _check(logp, scale > 0)


def halfcauchy(value: Any, scale: Any) -> Var:
    """Half-Cauchy: ``log(2 / pi) - log(scale) - log(1 + (x / scale)**2)``.

    Support: x >= 0; scale > 0.

    Example:
        >>> halfcauchy(rt.vector("x", dtype="float32"), 1.0).dtype
        'float32'
    """
    value, scale = _floats("halfcauchy", value=value, scale=scale)
    logp = math.log(2 / math.pi) - rt.log(scale) - _log1p_square(value / scale)
    return _check(logp, value >= 0, scale > 0)


def exponential(value: Any, scale: Any) -> Var:
    """Exponential with NumPy's ``scale`` (1 / rate): ``-x / scale - log(scale)``.

    Support: x >= 0; scale > 0.

    Example:
        >>> exponential(rt.vector("x"), rt.vector("scale")).type.shape
        (None,)
    """
    value, scale = _floats("exponential", value=value, scale=scale)
    return _check(-value / scale - rt.log(scale), value >= 0, scale > 0)


def gamma(value: Any, alpha: Any, scale: Any) -> Var:
    """Gamma (``scipy.stats.gamma(alpha, scale=scale)``), with z = x / scale:
    ``(alpha - 1) log(z) - z - gammaln(alpha) - log(scale)``.

    Support: x >= 0 (at 0: +inf, -log(scale) or -inf for alpha <, = or > 1); alpha > 0,
    scale > 0.

    Example:
        >>> gamma(rt.vector("x"), 2.0, rt.scalar("scale")).type.shape
        (None,)
    """
    value, alpha, scale = _floats("gamma", value=value, alpha=alpha, scale=scale)
    z = value / scale
    logp = rt.xlogy(alpha - 1, z) - z - rt.gammaln(alpha) - rt.log(scale)
    return _check(logp, value >= 0, alpha > 0, scale > 0)


def inverse_gamma(value: Any, alpha: Any, scale: Any) -> Var:
    """Inverse gamma (``scipy.stats.invgamma(alpha, scale=scale)``), with z = x / scale:
    ``-(alpha + 1) log(z) - 1 / z - gammaln(alpha) - log(scale)``.

    Support: x > 0; alpha > 0, scale > 0.

    Example:
        >>> inverse_gamma(rt.vector("x"), 3.0, 1.0).dtype
        'float64'
    """
    value, alpha, scale = _floats("inverse_gamma", value=value, alpha=alpha, scale=scale)
    z = value / scale
    logp = -(alpha + 1) * rt.log(z) - 1 / z - rt.gammaln(alpha) - rt.log(scale)
    return _check(logp, value > 0, alpha > 0, scale > 0)


def beta(value: Any, alpha: Any, beta: Any) -> Var:
    """Beta: ``(alpha - 1) log(x) + (beta - 1) log(1 - x) - log B(alpha, beta)``, with
    ``log B(a, b) = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    Support: 0 <= x <= 1 (at the ends: +inf, finite or -inf, as SciPy); alpha, beta > 0.

    Example:
        >>> beta(rt.vector("x"), 2.0, 5.0).type.shape
        (None,)
    """
    value, a, b = _floats("beta", value=value, alpha=alpha, beta=beta)
    log_beta_fn = rt.gammaln(a) + rt.gammaln(b) - rt.gammaln(a + b)
    logp = rt.xlogy(a - 1, value) + _xlog1py(b - 1, -value) - log_beta_fn
    return _check(logp, _is_probability(value), a > 0, b > 0)


def uniform(value: Any, low: Any, high: Any) -> Var:
    """Uniform: ``-log(high - low)``.

    Support: low <= x <= high; low < high.

    Example:
        >>> uniform(rt.vector("x"), 0.0, rt.scalar("high")).type.shape
        (None,)
    """
    value, low, high = _floats("uniform", value=value, low=low, high=high)
    # + 0 * value: the value's shape, and a zero gradient for it rather than a disconnected one
    logp = -rt.log(high - low) + 0 * value
    return _check(logp, value >= low, value <= high, low < high)


def student_t(value: Any, df: Any, loc: Any, scale: Any) -> Var:
    """Student's t (``scipy.stats.t(df, loc, scale)``), with z = (x - loc) / scale:
    ``gammaln((df + 1) / 2) - gammaln(df / 2) - log(df pi) / 2
    - (df + 1) / 2 log(1 + z**2 / df) - log(scale)``.

    Support: real x; df > 0 (finite), scale > 0.

    Example:
        >>> student_t(rt.vector("x"), 3.0, 0.0, 1.0).type.shape
        (None,)
    """
    value, df, loc, scale = _floats("student_t", value=value, df=df, loc=loc, scale=scale)
    z = (value - loc) / scale
    logp = (
        rt.gammaln(0.5 * (df + 1))
        - rt.gammaln(0.5 * df)
        - 0.5 * (rt.log(df) + _LOG_PI)
        - 0.5 * (df + 1) * _log1p_square(z / rt.sqrt(df))
        - rt.log(scale)
    )
    return _check(logp, df > 0, scale > 0)


def lognormal(value: Any, loc: Any, scale: Any) -> Var:
    """Log-normal, log(x) ~ Normal(loc, scale) (``scipy.stats.lognorm(scale,
    scale=exp(loc))``): ``normal(log(x), loc, scale) - log(x)``.

    Support: x > 0; scale > 0.

    Example:
        >>> lognormal(rt.vector("x"), 0.0, 1.0).dtype
        'float64'
    """
    value, loc, scale = _floats("lognormal", value=value, loc=loc, scale=scale)
    log_x = rt.log(value)
    z = (log_x - loc) / scale
    logp = -0.5 * rt.square(z) - _HALF_LOG_2PI - rt.log(scale) - log_x
    return _check(logp, value > 0, scale > 0)


# --- continuous distributions, issue #18 (SciPy's parameters) -----------------------------


def laplace(value: Any, loc: Any, scale: Any) -> Var:
    """Laplace: ``-|x - loc| / scale - log(2 scale)``.

    Support: real x; scale > 0.

    Example:
        >>> laplace(rt.vector("x"), 0.0, rt.scalar("scale")).type.shape
        (None,)
    """
    value, loc, scale = _floats("laplace", value=value, loc=loc, scale=scale)
    return _check(-rt.abs(value - loc) / scale - _LOG_2 - rt.log(scale), scale > 0)


def logistic(value: Any, loc: Any, scale: Any) -> Var:
    """Logistic (``scipy.stats.logistic(loc, scale)``), with z = (x - loc) / scale:
    ``-|z| - 2 log(1 + exp(-|z|)) - log(scale)`` (even in z, so exp never overflows).

    Support: real x; scale > 0.

    Example:
        >>> logistic(rt.vector("x"), 0.0, 1.0).dtype
        'float64'
    """
    value, loc, scale = _floats("logistic", value=value, loc=loc, scale=scale)
    minus_abs_z = -rt.abs((value - loc) / scale)
    logp = minus_abs_z - 2 * rt.log1p(rt.exp(minus_abs_z)) - rt.log(scale)
    return _check(logp, scale > 0)


def gumbel(value: Any, loc: Any, scale: Any) -> Var:
    """Gumbel of maxima (``scipy.stats.gumbel_r(loc, scale)``), with z = (x - loc) / scale:
    ``-z - exp(-z) - log(scale)`` (``-inf`` once exp(-z) overflows, far below loc).

    Support: real x; scale > 0.

    Example:
        >>> gumbel(rt.vector("x"), 0.0, 2.0).type.shape
        (None,)
    """
    value, loc, scale = _floats("gumbel", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    return _check(-z - rt.exp(-z) - rt.log(scale), scale > 0)


def weibull(value: Any, c: Any, scale: Any) -> Var:
    """Weibull (``scipy.stats.weibull_min(c, scale=scale)``), with z = x / scale:
    ``log(c) + (c - 1) log(z) - z**c - log(scale)``.

    Support: x >= 0 (at 0: +inf, -log(scale) or -inf for c <, = or > 1); c > 0, scale > 0.

    Example:
        >>> weibull(rt.vector("x"), 1.5, 2.0).type.shape
        (None,)
    """
    value, c, scale = _floats("weibull", value=value, c=c, scale=scale)
    z = value / scale
    positive = z > 0
    # z**c is 0 at z = 0; the safe base keeps log(0) out of its gradient in c there
    power = rt.where(positive, rt.power(rt.where(positive, z, 1), c), 0)
    logp = rt.log(c) + rt.xlogy(c - 1, z) - power - rt.log(scale)
    return _check(logp, value >= 0, c > 0, scale > 0)


def pareto(value: Any, b: Any, scale: Any) -> Var:
    """Pareto (``scipy.stats.pareto(b, scale=scale)``): ``log(b) - log(scale)
    - (b + 1) log(x / scale)``.

    Support: x >= scale; b > 0, scale > 0.

    Example:
        >>> pareto(rt.vector("x"), 3.0, 1.0).dtype
        'float64'
    """
    value, b, scale = _floats("pareto", value=value, b=b, scale=scale)
    logp = rt.log(b) - rt.log(scale) - (b + 1) * rt.log(value / scale)
    return _check(logp, value >= scale, b > 0, scale > 0)


def chisquare(value: Any, df: Any) -> Var:
    """Chi-square (``scipy.stats.chi2(df)``): ``(df/2 - 1) log(x) - x / 2
    - (df / 2) log(2) - gammaln(df / 2)``.

    Support: x >= 0 (at 0: +inf, -log(2) or -inf for df <, = or > 2); df > 0.

    Example:
        >>> chisquare(rt.vector("x"), 3.0).type.shape
        (None,)
    """
    value, df = _floats("chisquare", value=value, df=df)
    half = 0.5 * df
    logp = rt.xlogy(half - 1, value) - 0.5 * value - half * _LOG_2 - rt.gammaln(half)
    return _check(logp, value >= 0, df > 0)


def _standardized(bound: Var, loc: Var, scale: Var) -> Var:
    """(bound - loc) / scale, with an infinite bound kept as it is: no inf meets loc or
    scale, whose gradients would get 0 * inf = NaN from it."""
    infinite = rt.isinf(bound)
    return rt.where(infinite, bound, (rt.where(infinite, 0, bound) - loc) / scale)


def _log_ndtr(x: Var) -> Var:
    """log_ndtr(x), with its limits -inf and 0 at x = -inf and inf given by ``where``:
    log_ndtr's derivative is infinite at -inf."""
    infinite = rt.isinf(x)
    limit = rt.cast(rt.where(x > 0, 0.0, -math.inf), x.dtype)
    return rt.where(infinite, limit, rt.log_ndtr(rt.where(infinite, 0, x)))


def _log_normal_mass(a: Var, b: Var) -> Var:
    """log(Phi(b) - Phi(a)) for a < b, exact in both tails (a = 40, b = inf gives
    log_ndtr(-40) = -804.608): an interval mostly above 0 is mirrored below it, where
    Phi(b) - Phi(a) = Phi(-a) - Phi(-b) and log_ndtr keeps both ends' precision; then
    log Phi(hi) + log(1 - exp(log Phi(lo) - log Phi(hi)))."""
    flip = a + b > 0  # False for a = -inf, b = inf (NaN)
    log_lo = _log_ndtr(rt.where(flip, -b, a))
    log_hi = _log_ndtr(rt.where(flip, -a, b))
    return log_hi + rt.log1mexp(log_lo - log_hi)


def truncated_normal(value: Any, loc: Any, scale: Any, lower: Any, upper: Any) -> Var:
    """Normal(loc, scale) truncated to [lower, upper] (bounds on the x scale, either may
    be infinite; ``scipy.stats.truncnorm(a, b, loc, scale)`` with a = (lower - loc) /
    scale, b = (upper - loc) / scale): ``normal(x, loc, scale) - log(Phi(b) - Phi(a))``,
    with the normaliser in log space, exact when both bounds are far in one tail.

    Support: lower <= x <= upper; scale > 0, lower < upper.

    Example:
        >>> truncated_normal(rt.vector("x"), 0.0, 1.0, 0.0, math.inf).type.shape
        (None,)
    """
    value, loc, scale, lower, upper = _floats(
        "truncated_normal", value=value, loc=loc, scale=scale, lower=lower, upper=upper
    )
    a, b = _standardized(lower, loc, scale), _standardized(upper, loc, scale)
    z = (value - loc) / scale
    logp = -0.5 * rt.square(z) - _HALF_LOG_2PI - rt.log(scale) - _log_normal_mass(a, b)
    return _check(logp, value >= lower, value <= upper, lower < upper, scale > 0)


def von_mises(value: Any, mu: Any, kappa: Any) -> Var:
    """Von Mises (``scipy.stats.vonmises(kappa, loc=mu)``): ``kappa cos(x - mu)
    - log(2 pi I0(kappa))``, as ``-2 kappa sin((x - mu) / 2)**2 - log(i0e(kappa))
    - log(2 pi)`` (no I0 overflow, no cancellation at large kappa).

    Support: every finite x, periodic in x - mu as SciPy's (draws lie in [mu - pi,
    mu + pi]); kappa > 0.

    Example:
        >>> von_mises(rt.vector("x"), 0.0, 4.0).type.shape
        (None,)
    """
    value, mu, kappa = _floats("von_mises", value=value, mu=mu, kappa=kappa)
    logp = -2 * kappa * rt.square(rt.sin(0.5 * (value - mu))) - rt.log(rt.i0e(kappa)) - _LOG_2PI
    return _check(logp, rt.isfinite(value), kappa > 0)


def skew_normal(value: Any, a: Any, loc: Any, scale: Any) -> Var:
    """Skew normal (``scipy.stats.skewnorm(a, loc, scale)``), with z = (x - loc) / scale:
    ``log(2) + normal(z) + log_ndtr(a z) - log(scale)`` (log_ndtr: exact far in the tail).

    Support: real x; real a, scale > 0.

    Example:
        >>> skew_normal(rt.vector("x"), 4.0, 0.0, 1.0).dtype
        'float64'
    """
    value, a, loc, scale = _floats("skew_normal", value=value, a=a, loc=loc, scale=scale)
    z = (value - loc) / scale
    logp = _LOG_2 - 0.5 * rt.square(z) - _HALF_LOG_2PI + rt.log_ndtr(a * z) - rt.log(scale)
    return _check(logp, scale > 0)


def wald(value: Any, mean: Any, scale: Any) -> Var:
    """Wald, the inverse Gaussian with mean ``mean`` and shape lambda = ``scale``
    (``scipy.stats.invgauss(mean / scale, scale=scale)``): ``(log(scale) - log(2 pi)) / 2
    - 3 log(x) / 2 - scale ((x - mean) / mean)**2 / (2 x)``.

    Support: x > 0; mean > 0, scale > 0.

    Example:
        >>> wald(rt.vector("x"), 1.0, 3.0).type.shape
        (None,)
    """
    value, mean, scale = _floats("wald", value=value, mean=mean, scale=scale)
    logp = (
        0.5 * (rt.log(scale) - _LOG_2PI)
        - 1.5 * rt.log(value)
        - scale * rt.square((value - mean) / mean) / (2 * value)
    )
    return _check(logp, value > 0, mean > 0, scale > 0)


def half_student_t(value: Any, nu: Any, scale: Any) -> Var:
    """Half Student's t, |t_nu| * scale: ``log(2) + student_t(x, nu, 0, scale)``.

    Support: x >= 0; nu > 0 (finite), scale > 0.

    Example:
        >>> half_student_t(rt.vector("x"), 3.0, 1.0).type.shape
        (None,)
    """
    value, nu, scale = _floats("half_student_t", value=value, nu=nu, scale=scale)
    return _check(_LOG_2 + student_t(value, nu, 0.0, scale), value >= 0)
