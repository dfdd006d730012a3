"""Log-CDFs, log-survival functions and quantiles of the continuous distributions (see
``rewritekit.logprob.cdfs``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.logprob.cdfs._common import (
    _INF,
    _LOG_2,
    _LOG_HALF,
    _SQRT_HALF,
    Pair,
    _finish,
    _from_logs,
    _inside,
    _log_diff_exp,
    _log_sides,
    _on_the_line,
    _quantile,
)
from rewritekit.logprob.densities._common import _floats

__all__ = ["PAIRS", "QUANTILES"]

# --- continuous --------------------------------------------------------------------------


def _normal(value: Any, loc: Any, scale: Any) -> Pair:
    """log Phi(z), log Phi(-z) with z = (x - loc) / scale (``log_ndtr``)."""
    value, loc, scale = _floats("normal", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    return _on_the_line(rt.log_ndtr(z), rt.log_ndtr(-z), scale > 0)


def _normal_icdf(q: Any, loc: Any, scale: Any) -> Var:
    """loc + scale ndtri(q)."""
    q, loc, scale = _floats("normal", q=q, loc=loc, scale=scale)
    return _quantile(loc + scale * rt.ndtri(q), q, scale > 0)


def _halfnormal(value: Any, scale: Any) -> Pair:
    """log erf(z / sqrt 2), log(2 Phi(-z)) with z = x / scale >= 0; below z = 1 the second
    as log1p(-erf(z / sqrt 2)), above it the first as log1mexp of the second."""
    value, scale = _floats("halfnormal", value=value, scale=scale)
    z = _inside(value / scale, 1.0, value > 0, value < _INF)
    near = z < 1  # erf(z / sqrt 2) < 0.69
    erf = rt.erf(rt.where(near, z, 0.5) * _SQRT_HALF)
    tail = _LOG_2 + rt.log_ndtr(-rt.where(near, 1.0, z))
    lc = rt.where(near, rt.log(erf), rt.log1mexp(tail))
    lu = rt.where(near, rt.log1p(-erf), tail)
    return _finish(lc, lu, value <= 0, rt.isposinf(value), scale > 0)


def _halfnormal_icdf(q: Any, scale: Any) -> Var:
    """scale sqrt(2) erfinv(q), as -scale ndtri((1 - q) / 2) above 1/2."""
    q, scale = _floats("halfnormal", q=q, scale=scale)
    lower = q < 0.5
    z = rt.where(
        lower,
        math.sqrt(2) * rt.erfinv(rt.where(lower, q, 0.25)),
        -rt.ndtri(0.5 * (1 - rt.where(lower, 0.75, q))),
    )
    return _quantile(scale * z, q, scale > 0)


def _cauchy_lower(z: Var) -> Var:
    """log P(Z <= z) = log(atan2(1, -z) / pi), as log1p(-atan2(1, z) / pi) above 0."""
    return rt.where(
        z < 0, rt.log(rt.arctan2(1.0, -z) / math.pi), rt.log1p(-rt.arctan2(1.0, z) / math.pi)
    )


def _cauchy(value: Any, loc: Any, scale: Any) -> Pair:
    """log(1/2 + atan(z) / pi) and its mirror, with z = (x - loc) / scale."""
    value, loc, scale = _floats("cauchy", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    return _on_the_line(_cauchy_lower(z), _cauchy_lower(-z), scale > 0)


def _cauchy_icdf(q: Any, loc: Any, scale: Any) -> Var:
    """loc + scale tan(pi (q - 1/2)), as -cot(pi q) and cot(pi (1 - q)) in the tails."""
    q, loc, scale = _floats("cauchy", q=q, loc=loc, scale=scale)
    z = rt.where(
        rt.abs(q - 0.5) < 0.25,
        rt.tan(math.pi * (q - 0.5)),
        rt.where(q < 0.5, -1 / rt.tan(math.pi * q), 1 / rt.tan(math.pi * (1 - q))),
    )
    return _quantile(loc + scale * z, q, scale > 0)


def _halfcauchy(value: Any, scale: Any) -> Pair:
    """log(2 atan(z) / pi), log(2 atan2(1, z) / pi) with z = x / scale >= 0."""
    value, scale = _floats("halfcauchy", value=value, scale=scale)
    z = _inside(value / scale, 1.0, value > 0)
    cdf, ccdf = rt.arctan(z) * (2 / math.pi), rt.arctan2(1.0, z) * (2 / math.pi)
    lc, lu = _log_sides(cdf, ccdf)
    return _finish(lc, lu, value <= 0, rt.isposinf(value), scale > 0)


def _halfcauchy_icdf(q: Any, scale: Any) -> Var:
    """scale tan(pi q / 2), as scale cot(pi (1 - q) / 2) above 1/2."""
    q, scale = _floats("halfcauchy", q=q, scale=scale)
    z = rt.where(q < 0.5, rt.tan(0.5 * math.pi * q), 1 / rt.tan(0.5 * math.pi * (1 - q)))
    return _quantile(scale * z, q, scale > 0)


def _exponential(value: Any, scale: Any) -> Pair:
    """log1mexp(-x / scale), -x / scale."""
    value, scale = _floats("exponential", value=value, scale=scale)
    z = _inside(value / scale, 1.0, value > 0, value < _INF)
    return _finish(rt.log1mexp(-z), -z, value <= 0, rt.isposinf(value), scale > 0)


def _exponential_icdf(q: Any, scale: Any) -> Var:
    """-scale log1p(-q)."""
    q, scale = _floats("exponential", q=q, scale=scale)
    return _quantile(-scale * rt.log1p(-q), q, scale > 0)


def _gamma_named(dist: str, value: Var, alpha: Var, scale: Var) -> Pair:
    z = _inside(value / scale, alpha, value > 0, value < _INF)
    lc, lu = _log_sides(rt.gammainc(alpha, z), rt.gammaincc(alpha, z))
    return _finish(lc, lu, value <= 0, rt.isposinf(value), alpha > 0, scale > 0)


def _gamma(value: Any, alpha: Any, scale: Any) -> Pair:
    """log gammainc(alpha, x / scale), log gammaincc(alpha, x / scale)."""
    return _gamma_named("gamma", *_floats("gamma", value=value, alpha=alpha, scale=scale))


def _gamma_icdf(q: Any, alpha: Any, scale: Any) -> Var:
    """scale gammaincinv(alpha, q)."""
    q, alpha, scale = _floats("gamma", q=q, alpha=alpha, scale=scale)
    return _quantile(scale * rt.gammaincinv(alpha, q), q, alpha > 0, scale > 0)


def _chisquare(value: Any, df: Any) -> Pair:
    """Gamma(df / 2, scale=2)."""
    value, df = _floats("chisquare", value=value, df=df)
    return _gamma_named("chisquare", value, df / 2, rt.full_like(df, 2.0))


def _chisquare_icdf(q: Any, df: Any) -> Var:
    """2 gammaincinv(df / 2, q)."""
    q, df = _floats("chisquare", q=q, df=df)
    return _quantile(2 * rt.gammaincinv(df / 2, q), q, df > 0)


def _inverse_gamma(value: Any, alpha: Any, scale: Any) -> Pair:
    """log gammaincc(alpha, scale / x), log gammainc(alpha, scale / x)."""
    value, alpha, scale = _floats("inverse_gamma", value=value, alpha=alpha, scale=scale)
    y = _inside(scale / value, alpha, value > 0, value < _INF)
    lc, lu = _log_sides(rt.gammaincc(alpha, y), rt.gammainc(alpha, y))
    return _finish(lc, lu, value <= 0, rt.isposinf(value), alpha > 0, scale > 0)


def _inverse_gamma_icdf(q: Any, alpha: Any, scale: Any) -> Var:
    """scale / gammaincinv(alpha, 1 - q)."""
    q, alpha, scale = _floats("inverse_gamma", q=q, alpha=alpha, scale=scale)
    return _quantile(scale / rt.gammaincinv(alpha, 1 - q), q, alpha > 0, scale > 0)


def _beta(value: Any, alpha: Any, beta: Any) -> Pair:
    """log betainc(alpha, beta, x), log betainc(beta, alpha, 1 - x)."""
    value, a, b = _floats("beta", value=value, alpha=alpha, beta=beta)
    x = _inside(value, 0.5, value > 0, value < 1)
    lc, lu = _log_sides(rt.betainc(a, b, x), rt.betainc(b, a, 1 - x))
    return _finish(lc, lu, value <= 0, value >= 1, a > 0, b > 0)


def _beta_icdf(q: Any, alpha: Any, beta: Any) -> Var:
    """betaincinv(alpha, beta, q)."""
    q, a, b = _floats("beta", q=q, alpha=alpha, beta=beta)
    return _quantile(rt.betaincinv(a, b, q), q, a > 0, b > 0)


def _uniform(value: Any, low: Any, high: Any) -> Pair:
    """log((x - low) / (high - low)), log((high - x) / (high - low))."""
    value, low, high = _floats("uniform", value=value, low=low, high=high)
    x = _inside(value, 0.5 * (low + high), value > low, value < high)
    lc, lu = _log_sides((x - low) / (high - low), (high - x) / (high - low))
    return _finish(lc, lu, value <= low, value >= high, low < high)


def _uniform_icdf(q: Any, low: Any, high: Any) -> Var:
    """low + q (high - low), as high - (1 - q) (high - low) above 1/2 (exact ends)."""
    q, low, high = _floats("uniform", q=q, low=low, high=high)
    width = high - low
    return _quantile(rt.where(q < 0.5, low + q * width, high - (1 - q) * width), q, low < high)


def _t_density_at_zero(df: Var) -> Var:
    """f(0) of Student's t: Gamma((df + 1) / 2) / (sqrt(df pi) Gamma(df / 2))."""
    return rt.exp(rt.gammaln(0.5 * (df + 1)) - rt.gammaln(0.5 * df) - 0.5 * rt.log(math.pi * df))


def _abs_t(df: Var, t: Var) -> Pair:
    """(P(|T| <= |t|), P(|T| > |t|)) for Student's t with ``df``, each exact: through
    betainc(1/2, df/2, t^2 / (df + t^2)) for t^2 < df, else betainc(df/2, 1/2, df / (df +
    t^2)); the discarded branch sees the safe 1/2. Below t^2 / df = 1e-20 the first is
    2 f(0) |t| (exact there, and without betainc's infinite slope at 0)."""
    r2 = rt.square(t / rt.sqrt(df))
    near, tiny = r2 < 1, r2 < 1e-20
    inner = rt.betainc(0.5, 0.5 * df, rt.where(near & ~tiny, r2 / (1 + r2), 0.5))
    inner = rt.where(tiny, 2 * _t_density_at_zero(df) * rt.abs(t), inner)
    outer = rt.betainc(0.5 * df, 0.5, rt.where(near, 0.5, 1 / (1 + r2)))
    return rt.where(near, inner, 1 - outer), rt.where(near, 1 - inner, outer)


def _abs_t_quantile(df: Var, p_in: Var, p_out: Var) -> Var:
    """The |t| with P(|T| <= |t|) = p_in = 1 - p_out (each given exactly)."""
    near = p_in < 0.5
    y = rt.betaincinv(0.5, 0.5 * df, rt.where(near, p_in, 0.5))
    x = rt.betaincinv(0.5 * df, 0.5, rt.where(near, 0.5, p_out))
    return rt.sqrt(df * rt.where(near, y / (1 - y), (1 - x) / x))


def _student_t(value: Any, df: Any, loc: Any, scale: Any) -> Pair:
    """log P(T <= z) with z = (x - loc) / scale, from the tail P(|T| > |z|) / 2; at z = 0,
    log(1/2) +- 2 f(0) z, whose derivative f(0) / F(0) the betainc form would give as
    0 * inf."""
    value, df, loc, scale = _floats("student_t", value=value, df=df, loc=loc, scale=scale)
    z = (value - loc) / scale
    zero = rt.equal(z, 0)
    _, p_out = _abs_t(df, rt.where(zero, 1.0, z))
    tail, rest = rt.log(0.5 * p_out), rt.log1p(-0.5 * p_out)
    slope = 2 * _t_density_at_zero(df) * z  # 0 at z = 0, with the derivative f(0) / F(0)
    lc = rt.where(zero, _LOG_HALF + slope, rt.where(z < 0, tail, rest))
    lu = rt.where(zero, _LOG_HALF - slope, rt.where(z < 0, rest, tail))
    return _on_the_line(lc, lu, df > 0, scale > 0)


def _student_t_icdf(q: Any, df: Any, loc: Any, scale: Any) -> Var:
    """loc + scale t_q, with |t_q| from ``betaincinv`` on the side where it is exact."""
    q, df, loc, scale = _floats("student_t", q=q, df=df, loc=loc, scale=scale)
    lower = q < 0.5
    p_out = rt.where(lower, 2 * q, 2 * (1 - q))
    p_in = rt.where(lower, 1 - 2 * q, 2 * q - 1)
    t = rt.where(lower, -1.0, 1.0) * _abs_t_quantile(df, p_in, p_out)
    return _quantile(loc + scale * t, q, df > 0, scale > 0)


def _half_student_t(value: Any, nu: Any, scale: Any) -> Pair:
    """log P(|T| <= x / scale), log P(|T| > x / scale)."""
    value, nu, scale = _floats("half_student_t", value=value, nu=nu, scale=scale)
    z = _inside(value / scale, 1.0, value > 0, value < _INF)
    lc, lu = _log_sides(*_abs_t(nu, z))
    return _finish(lc, lu, value <= 0, rt.isposinf(value), nu > 0, scale > 0)


def _half_student_t_icdf(q: Any, nu: Any, scale: Any) -> Var:
    """scale |t| with P(|T| <= |t|) = q."""
    q, nu, scale = _floats("half_student_t", q=q, nu=nu, scale=scale)
    return _quantile(scale * _abs_t_quantile(nu, q, 1 - q), q, nu > 0, scale > 0)


def _lognormal(value: Any, loc: Any, scale: Any) -> Pair:
    """log Phi(z), log Phi(-z) with z = (log x - loc) / scale."""
    value, loc, scale = _floats("lognormal", value=value, loc=loc, scale=scale)
    x = _inside(value, 1.0, value > 0)
    z = (rt.log(x) - loc) / scale
    return _finish(rt.log_ndtr(z), rt.log_ndtr(-z), value <= 0, rt.isposinf(value), scale > 0)


def _lognormal_icdf(q: Any, loc: Any, scale: Any) -> Var:
    """exp(loc + scale ndtri(q))."""
    q, loc, scale = _floats("lognormal", q=q, loc=loc, scale=scale)
    return _quantile(rt.exp(loc + scale * rt.ndtri(q)), q, scale > 0)


def _laplace_lower(z: Var) -> Var:
    """log P(Z <= z) = z - log 2 below 0, log1p(-exp(-z) / 2) above."""
    above = rt.where(z < 0, 0.0, z)
    return rt.where(z < 0, z - _LOG_2, rt.log1p(-0.5 * rt.exp(-above)))


def _laplace(value: Any, loc: Any, scale: Any) -> Pair:
    """The two exponential tails, with z = (x - loc) / scale."""
    value, loc, scale = _floats("laplace", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    return _on_the_line(_laplace_lower(z), _laplace_lower(-z), scale > 0)


def _laplace_icdf(q: Any, loc: Any, scale: Any) -> Var:
    """loc + scale log(2 q) below 1/2, loc - scale log(2 (1 - q)) above."""
    q, loc, scale = _floats("laplace", q=q, loc=loc, scale=scale)
    lower = q < 0.5
    z = rt.where(
        lower, rt.log(2 * rt.where(lower, q, 0.5)), -rt.log(2 * rt.where(lower, 0.5, 1 - q))
    )
    return _quantile(loc + scale * z, q, scale > 0)


def _logistic(value: Any, loc: Any, scale: Any) -> Pair:
    """-softplus(-z), -softplus(z) with z = (x - loc) / scale."""
    value, loc, scale = _floats("logistic", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    return _on_the_line(-rt.softplus(-z), -rt.softplus(z), scale > 0)


def _logistic_icdf(q: Any, loc: Any, scale: Any) -> Var:
    """loc + scale (log q - log1p(-q))."""
    q, loc, scale = _floats("logistic", q=q, loc=loc, scale=scale)
    return _quantile(loc + scale * (rt.log(q) - rt.log1p(-q)), q, scale > 0)


def _gumbel(value: Any, loc: Any, scale: Any) -> Pair:
    """-exp(-z), log1mexp(-exp(-z)) with z = (x - loc) / scale (SciPy's gumbel_r)."""
    value, loc, scale = _floats("gumbel", value=value, loc=loc, scale=scale)
    z = (value - loc) / scale
    # far below, exp(-z) = inf and P(X > x) = 1 anyway; 700 keeps the gradient finite
    lu = rt.log1mexp(-rt.exp(-rt.maximum(z, -700.0)))
    return _on_the_line(-rt.exp(-z), lu, scale > 0)


def _gumbel_icdf(q: Any, loc: Any, scale: Any) -> Var:
    """loc - scale log(-log q)."""
    q, loc, scale = _floats("gumbel", q=q, loc=loc, scale=scale)
    return _quantile(loc - scale * rt.log(-rt.log(q)), q, scale > 0)


def _weibull(value: Any, c: Any, scale: Any) -> Pair:
    """log1mexp(-(x / scale)**c), -(x / scale)**c (SciPy's weibull_min)."""
    value, c, scale = _floats("weibull", value=value, c=c, scale=scale)
    z = _inside(value / scale, 1.0, value > 0, value < _INF)
    log_power = c * rt.log(z)  # log((x / scale)**c)
    tiny = log_power < -30  # log(1 - exp(-t)) = log(t) - t/2 + ...: log(t) to 1e-15
    lc = rt.where(tiny, log_power, rt.log1mexp(-rt.exp(rt.where(tiny, 0.0, log_power))))
    return _finish(lc, -rt.exp(log_power), value <= 0, rt.isposinf(value), c > 0, scale > 0)


def _weibull_icdf(q: Any, c: Any, scale: Any) -> Var:
    """scale (-log1p(-q))**(1 / c)."""
    q, c, scale = _floats("weibull", q=q, c=c, scale=scale)
    return _quantile(scale * rt.power(-rt.log1p(-q), 1 / c), q, c > 0, scale > 0)


def _pareto(value: Any, b: Any, scale: Any) -> Pair:
    """log1mexp(lu), lu = -b log(x / scale) = -b log1p((x - scale) / scale)."""
    value, b, scale = _floats("pareto", value=value, b=b, scale=scale)
    x = _inside(value, 2 * scale, value > scale, value < _INF)
    lu = -b * rt.log1p((x - scale) / scale)
    return _finish(rt.log1mexp(lu), lu, value <= scale, rt.isposinf(value), b > 0, scale > 0)


def _pareto_icdf(q: Any, b: Any, scale: Any) -> Var:
    """scale exp(-log1p(-q) / b)."""
    q, b, scale = _floats("pareto", q=q, b=b, scale=scale)
    return _quantile(scale * rt.exp(-rt.log1p(-q) / b), q, b > 0, scale > 0)


def _log_mass(a: Var, b: Var) -> Var:
    """log(Phi(b) - Phi(a)) for a <= b, from the upper tails where a > 0 (exact where
    both are far out on either side); each branch sees a safe interval in the other's
    place."""
    upper = a > 0
    ua, ub = rt.where(upper, a, 1.0), rt.where(upper, b, 2.0)
    la, lb = rt.where(upper, -2.0, a), rt.where(upper, -1.0, b)
    return rt.where(
        upper,
        _log_diff_exp(rt.log_ndtr(-ua), rt.log_ndtr(-ub)),
        _log_diff_exp(rt.log_ndtr(lb), rt.log_ndtr(la)),
    )


def _truncated_normal(value: Any, loc: Any, scale: Any, lower: Any, upper: Any) -> Pair:
    """log((Phi(z) - Phi(a)) / (Phi(b) - Phi(a))) and the mirror, a and b the standardised
    bounds (SciPy's truncnorm)."""
    value, loc, scale, lower, upper = _floats(
        "truncated_normal", value=value, loc=loc, scale=scale, lower=lower, upper=upper
    )
    a, b = (lower - loc) / scale, (upper - loc) / scale
    z = _inside((value - loc) / scale, 0.5 * (a + b), value > lower, value < upper)
    z = rt.where(rt.isfinite(z), z, rt.where(rt.isfinite(a), a + 1, b - 1))
    total = _log_mass(a, b)
    lc, lu = _from_logs(_log_mass(a, z) - total, _log_mass(z, b) - total)
    return _finish(lc, lu, value <= lower, value >= upper, scale > 0, lower < upper)


def _truncated_normal_icdf(q: Any, loc: Any, scale: Any, lower: Any, upper: Any) -> Var:
    """loc + scale z_q with Phi(z_q) = (1 - q) Phi(a) + q Phi(b), through the upper tails
    where a > 0."""
    q, loc, scale, lower, upper = _floats(
        "truncated_normal", q=q, loc=loc, scale=scale, lower=lower, upper=upper
    )
    a, b = (lower - loc) / scale, (upper - loc) / scale
    # convex combinations: no cancellation where q is near 1 and the tail is far out
    low_side = rt.ndtri((1 - q) * rt.ndtr(a) + q * rt.ndtr(b))
    high_side = -rt.ndtri((1 - q) * rt.ndtr(-a) + q * rt.ndtr(-b))
    z = rt.clip(rt.where(a > 0, high_side, low_side), a, b)
    return _quantile(loc + scale * z, q, scale > 0, lower < upper)


def _wald(value: Any, mean: Any, scale: Any) -> Pair:
    """SciPy's invgauss(mean / scale, scale=scale): with m = mean / scale, y = x / scale,
    r1,2 = (y / m -+ 1) / sqrt(y): CDF = Phi(r1) + exp(2 / m) Phi(-r2), and above the mode
    of r1 (r1 > 0) the survival function exp(-r1**2 / 2) (erfcx(r1 / sqrt 2) - erfcx(r2 /
    sqrt 2)) / 2, whose two terms do not cancel in the far tail as the Phi form's do."""
    value, mean, scale = _floats("wald", value=value, mean=mean, scale=scale)
    m = mean / scale
    y = _inside(value / scale, m, value > 0, value < _INF)
    r1, r2 = (y / m - 1) / rt.sqrt(y), (y / m + 1) / rt.sqrt(y)
    second = 2 / m + rt.log_ndtr(-r2)
    lc = rt.logaddexp(rt.log_ndtr(r1), second)
    upper = r1 > 0
    s1, s2 = rt.where(upper, r1, 1.0), rt.where(upper, r2, 2.0)
    by_erfcx = rt.log(rt.erfcx(s1 * _SQRT_HALF) - rt.erfcx(s2 * _SQRT_HALF))
    lu = rt.where(
        upper,
        by_erfcx - 0.5 * rt.square(s1) - _LOG_2,
        _log_diff_exp(rt.log_ndtr(-rt.where(upper, -1.0, r1)), second),
    )
    lc, lu = _from_logs(lc, lu)
    return _finish(lc, lu, value <= 0, rt.isposinf(value), mean > 0, scale > 0)


#: name -> (value, *params) -> (log P(X <= x), log P(X > x))
PAIRS: dict[str, Callable[..., Pair]] = {
    "normal": _normal,
    "halfnormal": _halfnormal,
    "cauchy": _cauchy,
    "halfcauchy": _halfcauchy,
    "exponential": _exponential,
    "gamma": _gamma,
    "chisquare": _chisquare,
    "inverse_gamma": _inverse_gamma,
    "beta": _beta,
    "uniform": _uniform,
    "student_t": _student_t,
    "half_student_t": _half_student_t,
    "lognormal": _lognormal,
    "laplace": _laplace,
    "logistic": _logistic,
    "gumbel": _gumbel,
    "weibull": _weibull,
    "pareto": _pareto,
    "truncated_normal": _truncated_normal,
    "wald": _wald,
}
#: name -> (q, *params) -> the quantile
QUANTILES: dict[str, Callable[..., Var]] = {
    "normal": _normal_icdf,
    "halfnormal": _halfnormal_icdf,
    "cauchy": _cauchy_icdf,
    "halfcauchy": _halfcauchy_icdf,
    "exponential": _exponential_icdf,
    "gamma": _gamma_icdf,
    "chisquare": _chisquare_icdf,
    "inverse_gamma": _inverse_gamma_icdf,
    "beta": _beta_icdf,
    "uniform": _uniform_icdf,
    "student_t": _student_t_icdf,
    "half_student_t": _half_student_t_icdf,
    "lognormal": _lognormal_icdf,
    "laplace": _laplace_icdf,
    "logistic": _logistic_icdf,
    "gumbel": _gumbel_icdf,
    "weibull": _weibull_icdf,
    "pareto": _pareto_icdf,
    "truncated_normal": _truncated_normal_icdf,
}
