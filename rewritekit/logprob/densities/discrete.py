"""Log-pmfs of the discrete scalar distributions (see ``rewritekit.logprob.densities``)."""

from __future__ import annotations

import functools
from typing import Any

import rewritekit.tensor as rt
from rewritekit.ir import Var
from rewritekit.logprob.densities._common import (
    _check,
    _floats,
    _is_integer,
    _is_probability,
    _need_axes,
    _xlog1py,
)

__all__ = [
    "bernoulli",
    "bernoulli_logit",
    "bernoulli_probit",
    "beta_binomial",
    "binomial",
    "categorical",
    "discrete_uniform",
    "geometric",
    "negative_binomial",
    "ordered_logistic",
    "poisson",
    "zero_inflated_negative_binomial",
    "zero_inflated_poisson",
]


# --- discrete ----------------------------------------------------------------------------


def bernoulli(value: Any, p: Any) -> Var:
    """Bernoulli: ``log(p)`` at 1, ``log(1 - p)`` at 0.

    Support: x in {0, 1}; 0 <= p <= 1 (p = 1 at x = 1 gives 0, with a finite gradient).

    Example:
        >>> bernoulli(rt.vector("x", dtype="int64"), rt.scalar("p", dtype="float32")).dtype
        'float32'
    """
    value, p = _floats("bernoulli", value=value, p=p)
    logp = rt.xlogy(value, p) + _xlog1py(1 - value, -p)
    is_binary = rt.logical_or(rt.equal(value, 0), rt.equal(value, 1))
    return _check(logp, is_binary, _is_probability(p))


def bernoulli_logit(value: Any, logit: Any) -> Var:
    """Bernoulli with p = sigmoid(logit): ``log_sigmoid(logit)`` at 1,
    ``log_sigmoid(-logit)`` at 0 (exact for large |logit|: -800 at logit = 800, x = 0).

    Support: x in {0, 1}; real logit.

    Example:
        >>> bernoulli_logit(rt.vector("x"), rt.vector("logit")).type.shape
        (None,)
    """
    value, logit = _floats("bernoulli_logit", value=value, logit=logit)
    return _binary(value, rt.log_sigmoid(logit), rt.log_sigmoid(-logit))


def bernoulli_probit(value: Any, eta: Any) -> Var:
    """Bernoulli with p = ndtr(eta) (the probit link): ``log_ndtr(eta)`` at 1,
    ``log_ndtr(-eta)`` at 0 (exact in both tails: -804.6 at eta = 40, x = 0, where
    ``log(1 - ndtr(eta))`` is -inf). ``rl.logprob`` uses it for ``rr.bernoulli(key,
    rt.ndtr(eta))``.

    Support: x in {0, 1}; real eta.

    Example:
        >>> bernoulli_probit(rt.vector("x"), rt.vector("eta")).type.shape
        (None,)
    """
    value, eta = _floats("bernoulli_probit", value=value, eta=eta)
    return _binary(value, rt.log_ndtr(eta), rt.log_ndtr(-eta))


def _binary(value: Var, at_one: Var, at_zero: Var) -> Var:
    """``at_one`` at 1, ``at_zero`` at 0, -inf at any other value."""
    is_one = rt.equal(value, 1)
    return _check(rt.where(is_one, at_one, at_zero), rt.logical_or(is_one, rt.equal(value, 0)))


def poisson(value: Any, lam: Any) -> Var:
    """Poisson: ``x log(lam) - lam - gammaln(x + 1)`` (0 log 0 = 0: lam = 0 gives 0 at x = 0).

    Support: x in {0, 1, 2, ...}; lam >= 0.

    Example:
        >>> poisson(rt.vector("x", dtype="int64"), 3).dtype
        'float64'
    """
    value, lam = _floats("poisson", value=value, lam=lam)
    logp = rt.xlogy(value, lam) - lam - rt.gammaln(value + 1)
    return _check(logp, _is_integer(value), value >= 0, lam >= 0)


def binomial(value: Any, n: Any, p: Any) -> Var:
    """Binomial: ``log C(n, x) + x log(p) + (n - x) log(1 - p)``, with ``log C(n, x) =
    gammaln(n + 1) - gammaln(x + 1) - gammaln(n - x + 1)``.

    Support: x in {0, ..., n}; n in {0, 1, 2, ...}, 0 <= p <= 1.

    Example:
        >>> binomial(rt.vector("x", dtype="int64"), 10, rt.scalar("p")).type.shape
        (None,)
    """
    value, n, p = _floats("binomial", value=value, n=n, p=p)
    log_choose = rt.gammaln(n + 1) - rt.gammaln(value + 1) - rt.gammaln(n - value + 1)
    logp = log_choose + rt.xlogy(value, p) + _xlog1py(n - value, -p)
    in_range = rt.logical_and(value >= 0, value <= n)
    return _check(logp, _is_integer(value), in_range, _is_integer(n), _is_probability(p))


def categorical(value: Any, p: Any) -> Var:
    """Categorical over the last axis of ``p`` (K categories), normalised by its sum as in
    PyMC: ``log(p[..., x]) - log(sum(p[..., :]))``. The result's shape is the broadcast of
    x's shape and p's batch shape ``p.shape[:-1]``.

    Support: x in {0, ..., K - 1}; p >= 0 with a positive sum.

    Raises:
        ShapeError: ``p`` is 0-d.

    Example:
        >>> categorical(rt.vector("x", dtype="int64"), np.array([0.2, 0.3, 0.5])).type.shape
        (None,)
    """
    value, p = _floats("categorical", value=value, p=p)
    _need_axes("categorical", p=(p, 1))
    k = rt.shape_i(p, p.ndim - 1)
    one_hot = rt.equal(rt.expand_dims(value, -1), rt.arange(k))
    # the sum of the one chosen entry: exact, and no log(0) of a discarded p in the gradient
    chosen = rt.sum(rt.where(one_hot, p, 0), axis=-1)
    logp = rt.log(chosen) - rt.log(rt.sum(p, axis=-1))
    valid_p = rt.logical_and(rt.all(p >= 0, axis=-1), rt.any(p > 0, axis=-1))
    in_range = rt.logical_and(value >= 0, value < k)
    return _check(logp, _is_integer(value), in_range, valid_p)


# --- the counts of issue #18: SciPy's parameters, PyMC's where SciPy has none ---------

# Below this log P_count(0), P_count(0) leaves float64's normal range (zero_inflated_*)
_LOG_TINY = -708.0


def _log_negative_binomial(value: Var, n: Var, p: Var) -> Var:
    log_coeff = rt.gammaln(value + n) - rt.gammaln(n) - rt.gammaln(value + 1)
    return log_coeff + n * rt.log(p) + _xlog1py(value, -p)


def negative_binomial(value: Any, n: Any, p: Any) -> Var:
    """Negative binomial (``scipy.stats.nbinom(n, p)``), the failures before the n-th
    success: ``gammaln(x + n) - gammaln(n) - gammaln(x + 1) + n log(p) + x log(1 - p)``.

    Support: x in {0, 1, 2, ...}; n > 0 (real), 0 < p <= 1 (p = 1 gives 0 at x = 0).

    Example:
        >>> negative_binomial(rt.vector("x", dtype="int64"), 2.5, rt.scalar("p")).dtype
        'float64'
    """
    value, n, p = _floats("negative_binomial", value=value, n=n, p=p)
    logp = _log_negative_binomial(value, n, p)
    return _check(logp, _is_integer(value), value >= 0, n > 0, p > 0, p <= 1)


def geometric(value: Any, p: Any) -> Var:
    """Geometric (``scipy.stats.geom(p)``), the trials up to the first success:
    ``(x - 1) log(1 - p) + log(p)``.

    Support: x in {1, 2, 3, ...}; 0 < p <= 1 (p = 1 gives 0 at x = 1).

    Example:
        >>> geometric(rt.vector("x", dtype="int64"), 0.3).type.shape
        (None,)
    """
    value, p = _floats("geometric", value=value, p=p)
    logp = _xlog1py(value - 1, -p) + rt.log(p)
    return _check(logp, _is_integer(value), value >= 1, p > 0, p <= 1)


def beta_binomial(value: Any, n: Any, a: Any, b: Any) -> Var:
    """Beta-binomial (``scipy.stats.betabinom(n, a, b)``): ``log C(n, x) + betaln(x + a,
    n - x + b) - betaln(a, b)``, with ``log C(n, x) = -log(n + 1) - betaln(n - x + 1,
    x + 1)`` (SciPy's form).

    Support: x in {0, ..., n}; n in {0, 1, 2, ...}, a > 0, b > 0.

    Example:
        >>> beta_binomial(rt.vector("x", dtype="int64"), 10, 2.0, rt.scalar("b")).dtype
        'float64'
    """
    value, n, a, b = _floats("beta_binomial", value=value, n=n, a=a, b=b)
    log_choose = -rt.log1p(n) - rt.betaln(n - value + 1, value + 1)
    logp = log_choose + rt.betaln(value + a, n - value + b) - rt.betaln(a, b)
    in_range = rt.logical_and(value >= 0, value <= n)
    return _check(logp, _is_integer(value), in_range, _is_integer(n), a > 0, b > 0)


def discrete_uniform(value: Any, lower: Any, upper: Any) -> Var:
    """Discrete uniform on ``lower, ..., upper``, both included (``scipy.stats.randint(lower,
    upper + 1)``): ``-log(upper - lower + 1)``.

    Support: x in {lower, ..., upper}; lower and upper integers, lower <= upper.

    Example:
        >>> discrete_uniform(rt.vector("x", dtype="int64"), 1, 6).type.shape
        (None,)
    """
    value, lower, upper = _floats("discrete_uniform", value=value, lower=lower, upper=upper)
    logp = -rt.log(upper - lower + 1) + 0 * value  # + 0 * value: the value's shape
    in_range = rt.logical_and(value >= lower, value <= upper)
    integers = functools.reduce(rt.logical_and, map(_is_integer, (value, lower, upper)))
    return _check(logp, integers, in_range, lower <= upper)


def _zero_inflated(value: Var, psi: Var, log_count: Var, log_count_zero: Var) -> Var:
    """``log((1 - psi) [x = 0] + psi P(x))`` from ``log P(x)`` and ``log P(0)``.

    At 0, with q = 1 - P(0): ``log1p(-psi q)`` where psi q <= 1/2 (exact for small psi or
    q), else ``log((1 - psi) + psi P(0))`` (a sum of two terms >= 0, so exact too), and
    ``log P(0)`` at psi = 1 where P(0) underflows (there the gradient in psi is 0, not the
    true -(1 - P(0)) / P(0) below -1e307). Each branch sees only inputs it is finite for.
    """
    q = -rt.expm1(log_count_zero)
    small = psi * q <= 0.5
    underflows = rt.logical_and(rt.equal(psi, 1), log_count_zero < _LOG_TINY)
    psi_small = rt.where(small, psi, 0)
    psi_large = rt.where(rt.logical_or(small, underflows), 0.75, psi)
    at_large = rt.log((1 - psi_large) + psi_large * rt.exp(log_count_zero))
    at_zero = rt.where(
        small, rt.log1p(-psi_small * q), rt.where(underflows, log_count_zero, at_large)
    )
    is_zero = rt.equal(value, 0)
    psi_count = rt.where(is_zero, 1, psi)  # no log(0) of psi = 0 in the gradient at 0
    return rt.where(is_zero, at_zero, rt.log(psi_count) + log_count)


def zero_inflated_poisson(value: Any, psi: Any, rate: Any) -> Var:
    """Zero-inflated Poisson (PyMC's convention, psi the weight of the Poisson):
    ``log((1 - psi) + psi e^-rate)`` at 0, ``log(psi) + poisson(x, rate)`` above.

    Support: x in {0, 1, 2, ...}; 0 <= psi <= 1, rate >= 0.

    Example:
        >>> zero_inflated_poisson(rt.vector("x", dtype="int64"), 0.8, 3.0).type.shape
        (None,)
    """
    value, psi, rate = _floats("zero_inflated_poisson", value=value, psi=psi, rate=rate)
    log_count = rt.xlogy(value, rate) - rate - rt.gammaln(value + 1)
    logp = _zero_inflated(value, psi, log_count, -rate)
    return _check(logp, _is_integer(value), value >= 0, _is_probability(psi), rate >= 0)


def zero_inflated_negative_binomial(value: Any, psi: Any, n: Any, p: Any) -> Var:
    """Zero-inflated negative binomial (PyMC's convention, psi the weight of
    ``negative_binomial(n, p)``): ``log((1 - psi) + psi p^n)`` at 0, ``log(psi) +
    negative_binomial(x, n, p)`` above.

    Support: x in {0, 1, 2, ...}; 0 <= psi <= 1, n > 0, 0 < p <= 1.

    Example:
        >>> zero_inflated_negative_binomial(rt.vector("x"), 0.8, 2.0, 0.3).type.shape
        (None,)
    """
    value, psi, n, p = _floats("zero_inflated_negative_binomial", value=value, psi=psi, n=n, p=p)
    logp = _zero_inflated(value, psi, _log_negative_binomial(value, n, p), n * rt.log(p))
    valid = (_is_probability(psi), n > 0, p > 0, p <= 1)
    return _check(logp, _is_integer(value), value >= 0, *valid)


def ordered_logistic(value: Any, eta: Any, cutpoints: Any) -> Var:
    """Ordered logistic (PyMC's ``OrderedLogistic``) with the K cutpoints c on the last
    axis: ``log(sigmoid(eta - c[x-1]) - sigmoid(eta - c[x]))``, c[-1] = -inf, c[K] = +inf.
    Computed in log space, exact where the sigmoids round to 1: ``log_sigmoid(eta -
    c[x-1]) + log_sigmoid(c[x] - eta) + log1mexp(c[x-1] - c[x])``, each term present
    where its cutpoints are. The result's shape is the broadcast of x's, eta's and
    ``cutpoints.shape[:-1]``.

    Support: x in {0, ..., K}; real eta; cutpoints nondecreasing (equal ones give a
    category of probability 0).

    Raises:
        ShapeError: ``cutpoints`` is 0-d.

    Example:
        >>> ordered_logistic(rt.vector("x"), rt.vector("eta"), np.array([-1.0, 1.0])).ndim
        1
    """
    value, eta, c = _floats("ordered_logistic", value=value, eta=eta, cutpoints=cutpoints)
    _need_axes("ordered_logistic", cutpoints=(c, 1))
    k = rt.shape_i(c, c.ndim - 1)
    index, x = rt.arange(k), rt.expand_dims(value, -1)
    # the cutpoints on either side of x (0 where there is none: those terms are dropped)
    below = rt.sum(rt.where(rt.equal(x - 1, index), c, 0), axis=-1)
    above = rt.sum(rt.where(rt.equal(x, index), c, 0), axis=-1)
    has_below, has_above = value >= 1, value <= rt.cast(k, value.dtype) - 1
    both = rt.logical_and(has_below, has_above)
    logp = (
        rt.where(has_below, rt.log_sigmoid(eta - below), 0)
        + rt.where(has_above, rt.log_sigmoid(above - eta), 0)
        + rt.where(both, rt.log1mexp(rt.where(both, below - above, -1)), 0)
    )
    in_range = rt.logical_and(value >= 0, value <= rt.cast(k, value.dtype))
    ordered = rt.all(rt.diff(c, axis=-1) >= 0, axis=-1)
    return _check(logp, _is_integer(value), in_range, ordered)
