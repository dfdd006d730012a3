"""Log-CDFs, log-survival functions and quantiles of the discrete distributions (see
``rewritekit.logprob.cdfs``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.logprob.cdfs._common import (
    _INF,
    Pair,
    _finish,
    _from_logs,
    _inside,
    _log_sides,
    _quantile,
)
from rewritekit.logprob.densities._common import _floats, _is_integer, _is_probability

__all__ = ["PAIRS", "QUANTILES"]

# --- discrete ----------------------------------------------------------------------------


def _bernoulli_logs(value: Var, log_p: Var, log_1mp: Var, *valid: Var) -> Pair:
    k = rt.floor(value)
    zero = rt.equal(k, 0)
    lc = rt.where(zero, log_1mp, 0.0)
    lu = rt.where(zero, log_p, -_INF)
    return _finish(lc, lu, k < 0, k >= 1, *valid)


def _bernoulli(value: Any, p: Any) -> Pair:
    """log(1 - p), log(p) at 0 <= x < 1."""
    value, p = _floats("bernoulli", value=value, p=p)
    return _bernoulli_logs(value, rt.log(p), rt.log1p(-p), _is_probability(p))


def _bernoulli_logit(value: Any, logit: Any) -> Pair:
    """log_sigmoid(-logit), log_sigmoid(logit) at 0 <= x < 1."""
    value, logit = _floats("bernoulli_logit", value=value, logit=logit)
    return _bernoulli_logs(value, rt.log_sigmoid(logit), rt.log_sigmoid(-logit))


def _bernoulli_icdf(q: Any, p: Any) -> Var:
    """-1 at q = 0 and 1 at q = 1 (SciPy's ppf), else 0 for q <= 1 - p and 1 above."""
    q, p = _floats("bernoulli", q=q, p=p)
    out = rt.where(rt.equal(q, 0), -1.0, rt.where((q <= 1 - p) & (q < 1), 0.0, 1.0))
    return _quantile(out, q, _is_probability(p))


def _bernoulli_logit_icdf(q: Any, logit: Any) -> Var:
    """As bernoulli, with 1 - p = sigmoid(-logit)."""
    q, logit = _floats("bernoulli_logit", q=q, logit=logit)
    zero = rt.logical_and(q <= rt.sigmoid(-logit), q < 1)
    out = rt.where(rt.equal(q, 0), -1.0, rt.where(zero, 0.0, 1.0))
    return _quantile(out, q)


def _poisson_logs(k: Var, lam: Var) -> Pair:
    # P(X <= k) = gammaincc(k + 1, lam), P(X > k) = gammainc(k + 1, lam)
    return _log_sides(rt.gammaincc(k + 1, lam), rt.gammainc(k + 1, lam))


def _counts(value: Var) -> tuple[Var, Var, Var]:
    """(floor(x) where 0 <= x < inf else 0, below, above): a count's CDF argument."""
    k = rt.floor(value)
    safe = _inside(k, 0.0, k >= 0, k < _INF)
    return safe, k < 0, rt.isposinf(k)


def _poisson(value: Any, lam: Any) -> Pair:
    """log gammaincc(k + 1, lam), log gammainc(k + 1, lam), k = floor(x)."""
    value, lam = _floats("poisson", value=value, lam=lam)
    k, below, above = _counts(value)
    return _finish(*_poisson_logs(k, lam), below, above, lam >= 0)


def _binomial(value: Any, n: Any, p: Any) -> Pair:
    """log betainc(n - k, k + 1, 1 - p), log betainc(k + 1, n - k, p), k = floor(x)."""
    value, n, p = _floats("binomial", value=value, n=n, p=p)
    k = rt.floor(value)
    inside = rt.logical_and(k >= 0, k < n)
    ks, ns = rt.where(inside, k, 0.0), rt.where(inside, n, 1.0)
    lc, lu = _log_sides(rt.betainc(ns - ks, ks + 1, 1 - p), rt.betainc(ks + 1, ns - ks, p))
    valid = (_is_integer(n), n >= 0, _is_probability(p))
    return _finish(lc, lu, k < 0, k >= n, *valid)


def _negative_binomial_logs(k: Var, n: Var, p: Var) -> Pair:
    # failures before the n-th success: P(X <= k) = betainc(n, k + 1, p)
    return _log_sides(rt.betainc(n, k + 1, p), rt.betainc(k + 1, n, 1 - p))


def _negative_binomial(value: Any, n: Any, p: Any) -> Pair:
    """log betainc(n, k + 1, p), log betainc(k + 1, n, 1 - p), k = floor(x) (nbinom)."""
    value, n, p = _floats("negative_binomial", value=value, n=n, p=p)
    k, below, above = _counts(value)
    lc, lu = _negative_binomial_logs(k, n, p)
    return _finish(lc, lu, below, above, n > 0, p > 0, p <= 1)


def _geometric(value: Any, p: Any) -> Pair:
    """log1mexp(k log1p(-p)), k log1p(-p), k = floor(x) >= 1 (SciPy's geom)."""
    value, p = _floats("geometric", value=value, p=p)
    k = rt.floor(value)
    ks = _inside(k, 1.0, k >= 1, k < _INF)
    lu = ks * rt.log1p(-p)
    return _finish(rt.log1mexp(lu), lu, k < 1, rt.isposinf(k), p > 0, p <= 1)


def _geometric_icdf(q: Any, p: Any) -> Var:
    """ceil(log1p(-q) / log1p(-p)), less one where rounding overshot; 0 at q = 0."""
    q, p = _floats("geometric", q=q, p=p)
    log_1mp = rt.log1p(-p)
    k = rt.maximum(rt.ceil(rt.log1p(-q) / log_1mp), 1.0)
    fits = -rt.expm1((k - 1) * log_1mp) >= q  # the CDF at k - 1 already reaches q
    k = rt.where(rt.logical_and(fits, k > 1), k - 1, k)
    return _quantile(rt.where(rt.equal(q, 0), 0.0, k), q, p > 0, p <= 1)


def _discrete_uniform(value: Any, lower: Any, upper: Any) -> Pair:
    """log((k - lower + 1) / N), log((upper - k) / N), N = upper - lower + 1."""
    value, lower, upper = _floats("discrete_uniform", value=value, lower=lower, upper=upper)
    k = rt.floor(value)
    ks = _inside(k, lower, k >= lower, k < upper)
    count = upper - lower + 1
    lc, lu = _log_sides((ks - lower + 1) / count, (upper - ks) / count)
    valid = (_is_integer(lower), _is_integer(upper), lower <= upper)
    return _finish(lc, lu, k < lower, k >= upper, *valid)


def _discrete_uniform_icdf(q: Any, lower: Any, upper: Any) -> Var:
    """lower - 1 + ceil(q N), less one where rounding overshot (SciPy's randint.ppf)."""
    q, lower, upper = _floats("discrete_uniform", q=q, lower=lower, upper=upper)
    count = upper - lower + 1
    k = lower - 1 + rt.ceil(q * count)
    k = rt.where((k - lower) / count >= q, k - 1, k)  # the CDF at k - 1 already reaches q
    k = rt.clip(k, lower - 1, upper)
    valid = (_is_integer(lower), _is_integer(upper), lower <= upper)
    return _quantile(k, q, *valid)


def _zero_inflated(log_psi: Var, log_1mpsi: Var, counts: Pair) -> Pair:
    """P(X <= k) = 1 - psi + psi F(k), P(X > k) = psi Q(k), each side exact."""
    lc_count, lu_count = counts
    return _from_logs(rt.logaddexp(log_1mpsi, log_psi + lc_count), log_psi + lu_count)


def _zero_inflated_poisson(value: Any, psi: Any, rate: Any) -> Pair:
    """A Poisson(rate) with probability psi, else 0."""
    value, psi, rate = _floats("zero_inflated_poisson", value=value, psi=psi, rate=rate)
    k, below, above = _counts(value)
    lc, lu = _zero_inflated(rt.log(psi), rt.log1p(-psi), _poisson_logs(k, rate))
    return _finish(lc, lu, below, above, _is_probability(psi), rate >= 0)


def _zero_inflated_negative_binomial(value: Any, psi: Any, n: Any, p: Any) -> Pair:
    """A NegativeBinomial(n, p) with probability psi, else 0."""
    value, psi, n, p = _floats("zero_inflated_negative_binomial", value=value, psi=psi, n=n, p=p)
    k, below, above = _counts(value)
    lc, lu = _zero_inflated(rt.log(psi), rt.log1p(-psi), _negative_binomial_logs(k, n, p))
    return _finish(lc, lu, below, above, _is_probability(psi), n > 0, p > 0, p <= 1)


#: name -> (value, *params) -> (log P(X <= x), log P(X > x))
PAIRS: dict[str, Callable[..., Pair]] = {
    "bernoulli": _bernoulli,
    "bernoulli_logit": _bernoulli_logit,
    "poisson": _poisson,
    "binomial": _binomial,
    "negative_binomial": _negative_binomial,
    "geometric": _geometric,
    "discrete_uniform": _discrete_uniform,
    "zero_inflated_poisson": _zero_inflated_poisson,
    "zero_inflated_negative_binomial": _zero_inflated_negative_binomial,
}
#: name -> (q, *params) -> the quantile
QUANTILES: dict[str, Callable[..., Var]] = {
    "bernoulli": _bernoulli_icdf,
    "bernoulli_logit": _bernoulli_logit_icdf,
    "geometric": _geometric_icdf,
    "discrete_uniform": _discrete_uniform_icdf,
}
