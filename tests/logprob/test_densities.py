"""The log-densities of rewritekit.logprob.densities against scipy.stats, JAX and each other.

Each graph is compiled once per backend (module-level caches) and called on batches of
points: hypothesis draws the points of the SciPy comparisons, a seeded generator those of
the JAX and gradient checks. One JAX compile covers every density; JAX compiles grow fast
with the graph, so its symbolic gradients are compiled for the small graph of EDGES only.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import jax.scipy.stats as jst
import mpmath
import numpy as np
import numpyro.distributions as npd
import pytest
import scipy.stats as st
from hypothesis import assume, given, settings
from hypothesis import strategies as hs
from hypothesis.extra import numpy as hnp

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.errors import DTypeError, ShapeError
from rewritekit.logprob import densities as d
from rewritekit.testing import verify_grad

TOL = {"rtol": 1e-12, "atol": 1e-12}
F32_TOL = {"rtol": 2e-5, "atol": 1e-5}


def _logit_oracle(x, logit):
    return np.where(x == 1, -np.logaddexp(0, -logit), -np.logaddexp(0, logit))


@dataclass(frozen=True)
class Case:
    """One elementwise density: where its arguments are drawn from (``(low, high)`` floats
    or a ``range`` of integers), ``build`` (drawn values -> a valid (value, *params) point;
    it may tie arguments together), the SciPy oracle, points outside the support or with
    invalid parameters, and its twin in jax.scipy.stats."""

    fn: Callable[..., Any]
    ranges: tuple[tuple[float, float] | range, ...]
    oracle: Callable[..., Any]
    invalid: tuple[tuple[float, ...], ...]
    build: Callable[..., tuple[Any, ...]] = field(default=lambda *a: a)
    jax_twin: Callable[..., Any] | None = None
    continuous: bool = True

    def strategy(self) -> hs.SearchStrategy:
        parts = [
            hs.integers(r.start, r.stop - 1) if isinstance(r, range) else hs.floats(*r)
            for r in self.ranges
        ]
        return hs.tuples(*parts).map(lambda t: self.build(*(float(v) for v in t)))

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        drawn = [
            rng.integers(r.start, r.stop, n) if isinstance(r, range) else rng.uniform(*r, n)
            for r in self.ranges
        ]
        return tuple(np.asarray(a, dtype=float) for a in self.build(*drawn))


def _mp_poisson(x, rate):
    return mpmath.exp(x * mpmath.log(rate) - rate - mpmath.loggamma(x + 1)) if rate else +(x == 0)


def _mp_nbinom(x, n, p):
    log_coeff = mpmath.loggamma(x + n) - mpmath.loggamma(n) - mpmath.loggamma(x + 1)
    return mpmath.exp(log_coeff + n * mpmath.log(p)) * (1 - p) ** x


def _zero_inflated_oracle(count_pmf: Callable[..., Any]) -> Callable[..., Any]:
    """log((1 - psi) [x = 0] + psi P(x)) in 50-digit arithmetic (SciPy has no such law)."""

    def one(x, psi, *params):
        with mpmath.workdps(50):
            x, psi, *params = (mpmath.mpf(float(a)) for a in (x, psi, *params))
            prob = (1 - psi) * (x == 0) + psi * count_pmf(x, *params)
            return float(mpmath.log(prob)) if prob > 0 else -math.inf

    return np.vectorize(one, otypes=[float])


def _jax_zero_inflated(log_count: Callable[..., Any]) -> Callable[..., Any]:
    def twin(x, psi, *params):
        at_zero = jnp.log((1 - psi) + psi * jnp.exp(log_count(0.0 * x, *params)))
        return jnp.where(x == 0, at_zero, jnp.log(psi) + log_count(x, *params))

    return twin


CASES = {
    "normal": Case(
        d.normal,
        ((-50, 50), (-10, 10), (0.1, 50)),
        st.norm.logpdf,
        ((0, 0, 0), (0, 0, -1), (0, 0, math.nan)),
        jax_twin=jst.norm.logpdf,
    ),
    "halfnormal": Case(
        d.halfnormal,
        ((0, 50), (0.1, 50)),
        lambda x, s: st.halfnorm.logpdf(x, scale=s),
        ((-0.5, 1), (1, 0), (1, -2)),
    ),
    "cauchy": Case(
        d.cauchy,
        ((-1e3, 1e3), (-10, 10), (0.1, 50)),
        st.cauchy.logpdf,
        ((0, 0, 0), (0, 0, -1)),
        jax_twin=jst.cauchy.logpdf,
    ),
    "halfcauchy": Case(
        d.halfcauchy,
        ((0, 1e3), (0.1, 50)),
        lambda x, s: st.halfcauchy.logpdf(x, scale=s),
        ((-1, 1), (1, 0)),
    ),
    "exponential": Case(
        d.exponential,
        ((0, 100), (0.1, 50)),
        lambda x, s: st.expon.logpdf(x, scale=s),
        ((-1, 1), (1, 0), (1, -1)),
        jax_twin=lambda x, s: jst.expon.logpdf(x, scale=s),
    ),
    "gamma": Case(
        d.gamma,
        ((0, 100), (0.1, 50), (0.1, 50)),
        lambda x, a, s: st.gamma.logpdf(x, a, scale=s),
        ((-1, 1, 1), (1, 0, 1), (1, -1, 1), (1, 1, 0)),
        jax_twin=lambda x, a, s: jst.gamma.logpdf(x, a, scale=s),
    ),
    "inverse_gamma": Case(
        d.inverse_gamma,
        ((1e-3, 100), (0.1, 50), (0.1, 50)),
        lambda x, a, s: st.invgamma.logpdf(x, a, scale=s),
        ((0, 1, 1), (-1, 1, 1), (1, 0, 1), (1, 1, 0)),
    ),
    "beta": Case(
        d.beta,
        ((0, 1), (0.1, 50), (0.1, 50)),
        st.beta.logpdf,
        ((-0.1, 1, 1), (1.1, 1, 1), (0.5, 0, 1), (0.5, 1, -1)),
        # not jst.beta.logpdf: its betaln's derivative is off by ~1e-8 for alpha, beta ~ 30
        jax_twin=lambda x, a, b: (
            jsp.xlogy(a - 1, x)
            + jsp.xlog1py(b - 1, -x)
            - (jsp.gammaln(a) + jsp.gammaln(b) - jsp.gammaln(a + b))
        ),
    ),
    "uniform": Case(
        d.uniform,
        ((0, 1), (-10, 10), (0.1, 50)),
        lambda x, low, high: st.uniform.logpdf(x, low, high - low),
        ((-0.1, 0, 1), (1.1, 0, 1), (0.5, 1, 1), (0.5, 2, 1)),
        build=lambda u, low, width: (low + u * width, low, low + width),
        jax_twin=lambda x, low, high: jst.uniform.logpdf(x, low, high - low),
    ),
    "student_t": Case(
        d.student_t,
        ((-50, 50), (0.1, 50), (-10, 10), (0.1, 50)),
        st.t.logpdf,
        ((0, 0, 0, 1), (0, -1, 0, 1), (0, 1, 0, 0)),
        jax_twin=jst.t.logpdf,
    ),
    "lognormal": Case(
        d.lognormal,
        ((1e-3, 100), (-3, 3), (0.1, 5)),
        lambda x, mu, s: st.lognorm.logpdf(x, s, scale=np.exp(mu)),
        ((0, 0, 1), (-1, 0, 1), (1, 0, 0)),
    ),
    "laplace": Case(
        d.laplace,
        ((-50, 50), (-10, 10), (0.1, 50)),
        st.laplace.logpdf,
        ((0, 0, 0), (0, 0, -1), (0, 0, math.nan)),
        jax_twin=jst.laplace.logpdf,
    ),
    "logistic": Case(
        d.logistic,
        ((-1e3, 1e3), (-10, 10), (0.1, 50)),
        st.logistic.logpdf,
        ((0, 0, 0), (0, 0, -1)),
        jax_twin=jst.logistic.logpdf,
    ),
    "gumbel": Case(
        d.gumbel,
        # z = (x - loc) / scale down to -600: exp(-z) = 4e260, its gradients still finite
        ((-50, 1e3), (-10, 10), (0.1, 50)),
        st.gumbel_r.logpdf,
        ((0, 0, 0), (0, 0, -1)),
        # not jst.gumbel_r.logpdf: jax.grad of it fails (its xlogy(-1, scale) meets a float0)
        jax_twin=lambda x, loc, s: -(x - loc) / s - jnp.exp(-(x - loc) / s) - jnp.log(s),
    ),
    "weibull": Case(
        d.weibull,
        ((0, 100), (0.1, 20), (0.1, 50)),
        lambda x, c, s: st.weibull_min.logpdf(x, c, scale=s),
        ((-1, 1, 1), (1, 0, 1), (1, -1, 1), (1, 1, 0)),
    ),
    "pareto": Case(
        d.pareto,
        ((0, 50), (0.1, 20), (0.1, 50)),
        lambda x, b, s: st.pareto.logpdf(x, b, scale=s),
        ((0.5, 1, 1), (2, 0, 1), (2, -1, 1), (2, 1, 0), (0.5, 1, -1)),
        build=lambda u, b, s: (s * (1 + u), b, s),
        jax_twin=lambda x, b, s: jst.pareto.logpdf(x, b, scale=s),
    ),
    "chisquare": Case(
        d.chisquare,
        ((0, 100), (0.1, 50)),
        st.chi2.logpdf,
        ((-1, 2), (1, 0), (1, -1)),
        jax_twin=jst.chi2.logpdf,
    ),
    "truncated_normal": Case(
        d.truncated_normal,
        # the bounds a, b = a + width in standard units: both far in one tail up to 60
        ((0, 1), (-10, 10), (0.1, 50), (-60, 60), (1e-3, 60)),
        lambda x, loc, s, lo, hi: st.truncnorm.logpdf(x, (lo - loc) / s, (hi - loc) / s, loc, s),
        (
            (-0.5, 0, 1, 0, 1),
            (1.5, 0, 1, 0, 1),
            (-41, 0, 1, -40, math.inf),
            (0.5, 0, 1, 1, 0),
            (1, 0, 1, 1, 1),
            (0.5, 0, 0, 0, 1),
            (0.5, 0, -1, 0, 1),
        ),
        build=lambda u, loc, s, a, w: (
            loc + s * (a + u * w),
            loc,
            s,
            loc + s * a,
            loc + s * (a + w),
        ),
        # not jst.truncnorm: its gradients are NaN far in the tails and at infinite bounds
    ),
    "von_mises": Case(
        d.von_mises,
        ((-math.pi, math.pi), (-10, 10), (0.01, 100)),
        lambda x, mu, kappa: st.vonmises.logpdf(x, kappa, loc=mu),
        ((0, 0, 0), (0, 0, -1), (math.inf, 0, 1), (math.nan, 0, 1)),
        build=lambda d_, mu, kappa: (mu + d_, mu, kappa),
        jax_twin=lambda x, mu, kappa: jst.vonmises.logpdf(x - mu, kappa),
    ),
    "skew_normal": Case(
        d.skew_normal,
        ((-50, 50), (-20, 20), (-10, 10), (0.1, 50)),
        st.skewnorm.logpdf,
        ((0, 1, 0, 0), (0, 1, 0, -1)),
    ),
    "wald": Case(
        d.wald,
        ((1e-3, 100), (0.1, 50), (0.1, 50)),
        lambda x, mean, s: st.invgauss.logpdf(x, mean / s, scale=s),
        ((0, 1, 1), (-1, 1, 1), (1, 0, 1), (1, -1, 1), (1, 1, 0)),
    ),
    "half_student_t": Case(
        d.half_student_t,
        ((0, 50), (0.1, 50), (0.1, 50)),
        lambda x, nu, s: math.log(2) + st.t.logpdf(x, nu, scale=s),
        ((-0.5, 1, 1), (1, 0, 1), (1, 1, 0)),
        jax_twin=lambda x, nu, s: math.log(2) + jst.t.logpdf(x, nu, scale=s),
    ),
    "bernoulli": Case(
        d.bernoulli,
        (range(2), (0, 1)),
        st.bernoulli.logpmf,
        ((2, 0.5), (-1, 0.5), (0.5, 0.5), (1, 1.5), (0, -0.1), (1, 0), (0, 1)),
        jax_twin=jst.bernoulli.logpmf,
        continuous=False,
    ),
    "bernoulli_logit": Case(
        d.bernoulli_logit,
        (range(2), (-50, 50)),
        _logit_oracle,
        ((2, 0), (0.5, 0), (-1, 0)),
        jax_twin=lambda x, logit: jnp.where(
            x == 1, jax.nn.log_sigmoid(logit), jax.nn.log_sigmoid(-logit)
        ),
        continuous=False,
    ),
    "poisson": Case(
        d.poisson,
        (range(101), (0, 50)),
        st.poisson.logpmf,
        ((-1, 1), (1.5, 1), (math.inf, 1), (1, -1), (1, 0)),
        jax_twin=jst.poisson.logpmf,
        continuous=False,
    ),
    "binomial": Case(
        d.binomial,
        ((0, 1), range(101), (0, 1)),
        st.binom.logpmf,
        ((-1, 5, 0.5), (6, 5, 0.5), (1.5, 5, 0.5), (1, 5.5, 0.5), (1, -1, 0.5), (1, 5, 1.5)),
        build=lambda u, n, p: (np.minimum(np.floor(u * (n + 1)), n), n, p),
        jax_twin=jst.binom.logpmf,
        continuous=False,
    ),
    "negative_binomial": Case(
        d.negative_binomial,
        (range(201), (0.1, 50), (0.05, 1)),
        st.nbinom.logpmf,
        ((-1, 2, 0.5), (1.5, 2, 0.5), (1, 0, 0.5), (1, -1, 0.5), (1, 2, 0), (1, 2, 1.5), (1, 2, 1)),
        jax_twin=jst.nbinom.logpmf,
        continuous=False,
    ),
    "geometric": Case(
        d.geometric,
        (range(1, 201), (0.01, 1)),
        st.geom.logpmf,
        ((0, 0.5), (1.5, 0.5), (-1, 0.5), (1, 0), (1, 1.5), (2, 1)),
        jax_twin=jst.geom.logpmf,
        continuous=False,
    ),
    "beta_binomial": Case(
        d.beta_binomial,
        ((0, 1), range(101), (0.1, 50), (0.1, 50)),
        st.betabinom.logpmf,
        ((-1, 5, 1, 1), (6, 5, 1, 1), (1.5, 5, 1, 1), (1, 5.5, 1, 1), (1, 5, 0, 1), (1, 5, 1, -1)),
        build=lambda u, n, a, b: (np.minimum(np.floor(u * (n + 1)), n), n, a, b),
        # gammaln, not jst.betabinom: its betaln's derivative is off by ~1e-8 (as jst.beta's)
        jax_twin=lambda x, n, a, b: (
            jsp.gammaln(n + 1)
            - jsp.gammaln(x + 1)
            - jsp.gammaln(n - x + 1)
            + jsp.gammaln(x + a)
            + jsp.gammaln(n - x + b)
            - jsp.gammaln(n + a + b)
            - jsp.gammaln(a)
            - jsp.gammaln(b)
            + jsp.gammaln(a + b)
        ),
        continuous=False,
    ),
    "discrete_uniform": Case(
        d.discrete_uniform,
        ((0, 1), range(-50, 50), range(50)),
        lambda x, low, high: st.randint.logpmf(x, low, high + 1),
        ((0.5, 0, 3), (-1, 0, 3), (4, 0, 3), (1, 0.5, 3), (1, 0, 3.5), (1, 3, 0)),
        build=lambda u, low, width: (
            low + np.minimum(np.floor(u * (width + 1)), width),
            low,
            low + width,
        ),
        jax_twin=lambda x, low, high: -jnp.log(high - low + 1) + 0 * x,
        continuous=False,
    ),
    "zero_inflated_poisson": Case(
        d.zero_inflated_poisson,
        (range(30), (0, 1), (0, 20)),
        _zero_inflated_oracle(_mp_poisson),
        (
            (-1, 0.5, 1),
            (1.5, 0.5, 1),
            (1, -0.1, 1),
            (1, 1.1, 1),
            (1, 0.5, -1),
            (1, 0, 1),
            (2, 0.5, 0),
        ),
        jax_twin=_jax_zero_inflated(jst.poisson.logpmf),
        continuous=False,
    ),
    "zero_inflated_negative_binomial": Case(
        d.zero_inflated_negative_binomial,
        (range(30), (0, 1), (0.1, 50), (0.05, 1)),
        _zero_inflated_oracle(_mp_nbinom),
        ((-1, 0.5, 1, 0.5), (0.5, 0.5, 1, 0.5), (1, 1.5, 1, 0.5), (1, 0.5, 0, 0.5), (1, 0.5, 1, 0)),
        jax_twin=_jax_zero_inflated(jst.nbinom.logpmf),
        continuous=False,
    ),
}
ARITY = {name: len(case.ranges) for name, case in CASES.items()}
MULTI = sum(ARITY.values())  # where the inputs of the multivariate densities start


def _vectors(name: str, dtype: str = "float64", prefix: str = "") -> list[Any]:
    return [rt.vector(f"{prefix}{name}{i}", dtype=dtype) for i in range(ARITY[name])]


@functools.cache
def _numpy_fn(name: str) -> Any:
    inputs = _vectors(name)
    return rk.function(inputs, CASES[name].fn(*inputs), backend="numpy")


def _columns(points: list[tuple[float, ...]]) -> list[np.ndarray]:
    return [np.array(column, dtype=float) for column in zip(*points, strict=True)]


# --- SciPy: values inside the support, -inf outside ---------------------------------------


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=30)
@given(data=hs.data())
def test_matches_scipy(name, data):
    case = CASES[name]
    columns = _columns(data.draw(hs.lists(case.strategy(), min_size=1, max_size=6)))
    with np.errstate(all="ignore"):
        expected = case.oracle(*columns)
    np.testing.assert_allclose(_numpy_fn(name)(*columns), expected, **TOL)


@functools.cache
def _with_gradients(name: str, rules: Any) -> Any:
    inputs = _vectors(name, prefix="g")
    logp = rt.sum(CASES[name].fn(*inputs))
    wrt = [v for v in inputs if v.type.kind == "f"]
    outputs = [logp, *rk.grad(logp, wrt, disconnected="zero")]
    return rk.function(inputs, outputs, backend="numpy", rules=rules)


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=15)
@given(data=hs.data())
def test_the_default_rules_keep_the_density_and_its_gradient(name, data):
    """Rewritten against unrewritten, value and gradient (continuous densities)."""
    columns = _columns(data.draw(hs.lists(CASES[name].strategy(), min_size=1, max_size=4)))
    with np.errstate(all="ignore"):
        written = _with_gradients(name, None)(*columns)
        rewritten = _with_gradients(name, "default")(*columns)
    for before, after in zip(written, rewritten, strict=True):
        np.testing.assert_allclose(after, before, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_outside_the_support_or_invalid_parameters_give_minus_inf(name):
    logp = _numpy_fn(name)(*_columns(list(CASES[name].invalid)))
    assert np.all(logp == -np.inf), logp


def test_edges_of_the_support_as_scipy():
    f = _numpy_fn("gamma")
    x, alpha, scale = np.zeros(3), np.array([0.5, 1.0, 2.0]), np.array([2.0, 2.0, 2.0])
    np.testing.assert_allclose(f(x, alpha, scale), [np.inf, -math.log(2.0), -np.inf])
    beta = _numpy_fn("beta")(
        np.array([0.0, 1.0, 0.0, 1.0]), np.array([1, 1, 0.5, 3.0]), np.array([2, 1, 2, 0.5])
    )
    np.testing.assert_allclose(
        beta, st.beta.logpdf([0.0, 1.0, 0.0, 1.0], [1, 1, 0.5, 3.0], [2, 1, 2, 0.5])
    )


def test_heavy_tails_do_not_overflow():
    x = np.array([1e200, -1e300])
    np.testing.assert_allclose(
        _numpy_fn("cauchy")(x, np.zeros(2), np.ones(2)), st.cauchy.logpdf(x), **TOL
    )
    # SciPy's t overflows here: log1p(x**2 / 3) = 2 log|x| - log(3) + log1p(3 / x**2)
    log1p_term = 2 * np.log(np.abs(x)) - math.log(3)
    expected = math.lgamma(2) - math.lgamma(1.5) - 0.5 * math.log(3 * math.pi) - 2 * log1p_term
    t = _numpy_fn("student_t")(x, np.full(2, 3.0), np.zeros(2), np.ones(2))
    np.testing.assert_allclose(t, expected, **TOL)


def _mp_log_phi(z: Any) -> Any:
    return -z * z / 2 - mpmath.log(2 * mpmath.pi) / 2


def _mp_truncated_normal(x: Any, loc: Any, scale: Any, lower: Any, upper: Any) -> Any:
    a, b = (lower - loc) / scale, (upper - loc) / scale
    # Phi(b) - Phi(a) as Phi(-a) - Phi(-b) above 0: the same number, without spending the
    # 50 digits on the leading 1s of Phi(40) and Phi(41)
    mass = mpmath.ncdf(-a) - mpmath.ncdf(-b) if a > 0 else mpmath.ncdf(b) - mpmath.ncdf(a)
    return _mp_log_phi((x - loc) / scale) - mpmath.log(scale) - mpmath.log(mass)


def _mp_student_t(x: Any, df: Any, scale: Any) -> Any:
    z = x / scale
    return (
        mpmath.loggamma((df + 1) / 2)
        - mpmath.loggamma(df / 2)
        - mpmath.log(df * mpmath.pi) / 2
        - (df + 1) / 2 * mpmath.log(1 + z * z / df)
        - mpmath.log(scale)
    )


# name -> ((value, *params) points far in the tails, the log-density in mpmath)
FAR_TAILS = {
    "truncated_normal": (
        (
            (40.5, 0, 1, 40, math.inf),  # lower = loc + 40 scale: Phi(-40) ~ 1e-350
            (40.01, 0, 1, 40, 40.02),  # a narrow interval out there
            (-47, 0, 1, -50, -45),
            (-55.5, 2, 0.5, -math.inf, -26),
        ),
        _mp_truncated_normal,
    ),
    "skew_normal": (
        ((10, -5, 0, 1), (-40, 5, 0, 1), (300, -1, 0, 0.5)),
        lambda x, a, loc, s: (
            mpmath.log(2)
            + _mp_log_phi((x - loc) / s)
            - mpmath.log(s)
            + mpmath.log(mpmath.ncdf(a * (x - loc) / s))
        ),
    ),
    "von_mises": (
        # kappa = 1e4 (I0 overflows float64 above 713); x outside [mu - pi, mu + pi] (periodic)
        ((0.201, 0.2, 1e4), (10, 0, 0.5), (-20, 3, 2), (0.2 + math.pi, 0.2, 800)),
        lambda x, mu, k: k * mpmath.cos(x - mu) - mpmath.log(2 * mpmath.pi * mpmath.besseli(0, k)),
    ),
    "gumbel": (
        ((-50, 10, 0.1), (1e4, 0, 1)),
        lambda x, loc, s: -(x - loc) / s - mpmath.exp(-(x - loc) / s) - mpmath.log(s),
    ),
    "logistic": (
        ((1000, 0, 1), (-1000, 0, 1), (3, 0, 1e-3)),
        lambda x, loc, s: (
            -(x - loc) / s - 2 * mpmath.log(1 + mpmath.exp(-(x - loc) / s)) - mpmath.log(s)
        ),
    ),
    "laplace": (
        ((1e300, 0, 1), (-1e5, 1, 1e-3)),
        lambda x, loc, s: -abs(x - loc) / s - mpmath.log(2 * s),
    ),
    "wald": (
        ((1e4, 1, 3), (1e-3, 5, 2), (1e-8, 1, 1)),
        lambda x, m, s: (
            (mpmath.log(s) - mpmath.log(2 * mpmath.pi * x**3)) / 2
            - s * (x - m) ** 2 / (2 * m**2 * x)
        ),
    ),
    "weibull": (
        ((1e3, 20, 0.5), (1e-300, 0.5, 1)),
        lambda x, c, s: mpmath.log(c / s) + (c - 1) * mpmath.log(x / s) - (x / s) ** c,
    ),
    "pareto": (((1e200, 2, 1),), lambda x, b, s: mpmath.log(b / s) - (b + 1) * mpmath.log(x / s)),
    "chisquare": (
        ((1e4, 3), (1e-300, 50)),
        lambda x, df: (
            (df / 2 - 1) * mpmath.log(x) - x / 2 - df / 2 * mpmath.log(2) - mpmath.loggamma(df / 2)
        ),
    ),
    "half_student_t": (
        ((1e150, 3, 1), (1e3, 0.5, 2)),
        lambda x, nu, s: mpmath.log(2) + _mp_student_t(x, nu, s),
    ),
}


@pytest.mark.parametrize("name", FAR_TAILS)
def test_far_tails_match_high_precision(name):
    points, oracle = FAR_TAILS[name]

    def one(*args: float) -> float:
        with mpmath.workdps(50):
            return float(oracle(*(mpmath.mpf(a) for a in args)))

    expected = [one(*point) for point in points]
    got = _numpy_fn(name)(*_columns(list(points)))
    np.testing.assert_allclose(got, expected, **TOL)


# --- categorical, multivariate normal, Dirichlet ---------------------------------------


@functools.cache
def _categorical_fn() -> Any:
    x, p = rt.vector("x"), rt.matrix("p")
    return rk.function([x, p], d.categorical(x, p), backend="numpy")


@settings(max_examples=30)
@given(data=hs.data())
def test_categorical_matches_normalised_p(data):
    n, k = data.draw(hs.integers(1, 5)), data.draw(hs.integers(1, 5))
    entry = hs.one_of(hs.just(0.0), hs.floats(0.01, 10))
    p = data.draw(hnp.arrays(np.float64, (n, k), elements=entry))
    assume(np.all(p.sum(-1) > 0))
    x = data.draw(hnp.arrays(np.int64, (n,), elements=hs.integers(0, k - 1)))
    with np.errstate(divide="ignore"):
        expected = np.log(p[np.arange(n), x] / p.sum(-1))
    np.testing.assert_allclose(_categorical_fn()(x.astype(float), p), expected, **TOL)


def test_categorical_outside_the_support_and_batch_shapes():
    p = np.array([[0.2, 0.8], [0.5, 0.5], [-0.1, 1.1], [0.0, 0.0]])
    f = _categorical_fn()
    for x in ([-1.0, 2.0, 0.0, 0.0], [0.5, 1.5, 1.0, 1.0]):
        assert np.all(f(np.array(x), p) == -np.inf)
    assert d.categorical(
        rt.tensor("x", shape=(2, 1), dtype="int64"), rt.matrix("p", shape=(3, 4))
    ).type.shape == (2, 3)
    g = rk.function(
        [x := rt.vector("x", dtype="int64")],
        d.categorical(x, np.array([1.0, 3.0])),
        backend="numpy",
    )
    np.testing.assert_allclose(g(np.array([0, 1, 1])), np.log([0.25, 0.75, 0.75]), **TOL)


@functools.cache
def _mvn_fn(batched: bool) -> Any:
    x = rt.matrix("x")
    mean, cov = (
        (rt.matrix("mean"), rt.tensor("cov", shape=(None, None, None)))
        if batched
        else (rt.vector("mean"), rt.matrix("cov"))
    )
    return rk.function([x, mean, cov], d.multivariate_normal(x, mean, cov), backend="numpy")


def _spd(a: np.ndarray) -> np.ndarray:
    return a @ np.swapaxes(a, -1, -2) + 0.5 * np.eye(a.shape[-1])


@settings(max_examples=20)
@given(data=hs.data())
def test_multivariate_normal_matches_scipy(data):
    n, k = data.draw(hs.integers(1, 4)), data.draw(hs.integers(1, 4))
    real = hs.floats(-3, 3)
    x = data.draw(hnp.arrays(np.float64, (n, k), elements=real))
    mean = data.draw(hnp.arrays(np.float64, (n, k), elements=real))
    cov = _spd(data.draw(hnp.arrays(np.float64, (n, k, k), elements=real)))
    expected = [st.multivariate_normal.logpdf(x[i], mean[i], cov[i]) for i in range(n)]
    np.testing.assert_allclose(_mvn_fn(True)(x, mean, cov), expected, **TOL)
    one = st.multivariate_normal.logpdf(x, mean[0], cov[0])
    np.testing.assert_allclose(_mvn_fn(False)(x, mean[0], cov[0]), np.atleast_1d(one), **TOL)


def test_multivariate_normal_with_a_cov_that_is_not_positive_definite_raises_on_numpy():
    with pytest.raises(np.linalg.LinAlgError):
        _mvn_fn(False)(np.zeros((1, 2)), np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]))


@functools.cache
def _dirichlet_fn() -> Any:
    x, alpha = rt.matrix("x"), rt.matrix("alpha")
    return rk.function([x, alpha], d.dirichlet(x, alpha), backend="numpy")


@settings(max_examples=30)
@given(data=hs.data())
def test_dirichlet_matches_scipy(data):
    n, k = data.draw(hs.integers(1, 4)), data.draw(hs.integers(2, 5))
    raw = data.draw(hnp.arrays(np.float64, (n, k), elements=hs.floats(0.01, 1)))
    alpha = data.draw(hnp.arrays(np.float64, (n, k), elements=hs.floats(0.1, 50)))
    x = raw / raw.sum(-1, keepdims=True)
    expected = [st.dirichlet.logpdf(x[i], alpha[i]) for i in range(n)]
    np.testing.assert_allclose(_dirichlet_fn()(x, alpha), expected, **TOL)


def test_dirichlet_support():
    x = np.array([[0.0, 0.5, 0.5]] * 3 + [[0.2, 0.2, 0.7], [-0.1, 0.6, 0.5], [0.2, 0.3, 0.5]])
    alpha = np.array([[0.5, 2, 2], [1, 2, 2], [2, 2, 2], [1, 1, 1], [1, 1, 1], [0, 1, 1]])
    logp = _dirichlet_fn()(x, alpha)
    assert logp[0] == np.inf and np.isfinite(logp[1]) and np.all(logp[2:] == -np.inf)
    np.testing.assert_allclose(logp[1], math.lgamma(5) - 2 * math.lgamma(2) + 2 * math.log(0.5))
    nearly = np.array([[0.2, 0.3, 0.5 + 5e-7]])  # within the float64 tolerance of 1e-6
    assert np.isfinite(_dirichlet_fn()(nearly, np.ones((1, 3))))


# --- multinomial, ordered logistic, LKJ Cholesky (issue #18) ----------------------------


@functools.cache
def _issue18_graph() -> tuple[list[Any], list[Any]]:
    """The three densities on inputs of their own (LKJ of any n: a dynamic shape)."""
    inputs = [
        *(rt.matrix("mn_x"), rt.vector("mn_n"), rt.matrix("mn_p")),
        *(rt.vector("ol_x"), rt.vector("ol_eta"), rt.matrix("ol_c")),
        *(rt.tensor("lkj_l", shape=(None, None, None)), rt.vector("lkj_eta")),
    ]
    logps = [
        d.multinomial(*inputs[:3]),
        d.ordered_logistic(*inputs[3:6]),
        d.lkj_cholesky(*inputs[6:]),
    ]
    return inputs, logps


@functools.cache
def _issue18_fn(backend: str, grads: bool = False) -> Any:
    inputs, logps = _issue18_graph()
    return rk.function(inputs, _with_grads(inputs, logps) if grads else logps, backend=backend)


def _multinomial(*args: np.ndarray) -> np.ndarray:
    return _issue18_fn("numpy")(*args, *_issue18_points(n=1)[3:])[0]


def _ordered_logistic(*args: np.ndarray) -> np.ndarray:
    points = _issue18_points(n=1)
    return _issue18_fn("numpy")(*points[:3], *args, *points[6:])[1]


def _lkj_cholesky(*args: np.ndarray) -> np.ndarray:
    return _issue18_fn("numpy")(*_issue18_points(n=1)[:6], *args)[2]


def _correlation_factor(a: np.ndarray) -> np.ndarray:
    """The Cholesky factor of the correlation matrix of ``a a^T + 0.5 I`` (a stack)."""
    cov = _spd(a)
    scale = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
    return np.linalg.cholesky(cov / scale[..., :, None] / scale[..., None, :])


def _issue18_points(seed: int = 0, n: int = 5) -> list[np.ndarray]:
    """Inputs of ``_issue18_graph`` inside every support (cutpoints 0.3 apart or more)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 6, (n, 4)).astype(float)
    cutpoints = np.cumsum(rng.uniform(0.3, 2.0, (n, 3)), axis=-1) - 2.0
    return [
        *(counts, counts.sum(-1), rng.uniform(0.1, 1.0, (n, 4))),
        *(rng.integers(0, 4, n).astype(float), rng.normal(0, 2, n), cutpoints),
        *(_correlation_factor(rng.normal(size=(n, 3, 3))), rng.uniform(0.3, 5.0, n)),
    ]


@settings(max_examples=20)
@given(data=hs.data())
def test_multinomial_matches_scipy(data):
    n, k = data.draw(hs.integers(1, 4)), data.draw(hs.integers(1, 5))
    x = data.draw(hnp.arrays(np.int64, (n, k), elements=hs.integers(0, 8))).astype(float)
    entry = hs.one_of(hs.just(0.0), hs.floats(0.01, 10))
    p = data.draw(hnp.arrays(np.float64, (n, k), elements=entry))
    assume(np.all(p.sum(-1) > 0))
    expected = [st.multinomial.logpmf(x[i], x[i].sum(), p[i] / p[i].sum()) for i in range(n)]
    f = rk.function(list(_issue18_graph()[0][:3]), _issue18_graph()[1][0], backend="numpy")
    np.testing.assert_allclose(f(x, x.sum(-1), p), expected, **TOL)


def test_multinomial_outside_the_support_gives_minus_inf():
    x = np.array([[1, 2, 3, 0], [1, 2, 3, 0], [-1, 2, 3, 2], [0.5, 1.5, 2, 2], [1, 1, 2, 2]])
    n = np.array([5, 6, 6, 6, 6.0])  # the first sums to 6, not 5
    p = np.array([[1, 1, 1, 1], [1, 1, 1, 1.0], [1, 1, 1, 1], [1, 1, 1, 1], [1, -1, 1, 1]])
    p[1] = 0.0  # no positive entry
    assert np.all(_multinomial(x, n, p) == -np.inf)
    assert d.multinomial(rt.matrix("x"), rt.vector("n"), rt.tensor("p", shape=(2, 1, 3))).ndim == 2


def _mp_ordered_logistic(x: float, eta: float, cutpoints: np.ndarray) -> float:
    """log(sigmoid(eta - c[x-1]) - sigmoid(eta - c[x])) in 60-digit arithmetic."""
    with mpmath.workdps(60):
        edges = [mpmath.mpf(-math.inf), *map(mpmath.mpf, cutpoints), mpmath.mpf(math.inf)]
        k, eta_ = int(x), mpmath.mpf(eta)
        prob = mpmath.sigmoid(eta_ - edges[k]) - mpmath.sigmoid(eta_ - edges[k + 1])
        return float(mpmath.log(prob)) if prob > 0 else -math.inf


@settings(max_examples=30)
@given(data=hs.data())
def test_ordered_logistic_matches_high_precision(data):
    """Far from the cutpoints too (|eta - c| up to 80), where both sigmoids round to 1."""
    n, k = data.draw(hs.integers(1, 5)), data.draw(hs.integers(1, 4))
    c = np.sort(data.draw(hnp.arrays(np.float64, (n, k), elements=hs.floats(-40, 40))), axis=-1)
    eta = data.draw(hnp.arrays(np.float64, (n,), elements=hs.floats(-40, 40)))
    x = data.draw(hnp.arrays(np.int64, (n,), elements=hs.integers(0, k))).astype(float)
    expected = [_mp_ordered_logistic(x[i], eta[i], c[i]) for i in range(n)]
    np.testing.assert_allclose(_ordered_logistic(x, eta, c), expected, **TOL)


def test_ordered_logistic_far_in_the_tails_and_outside_the_support():
    c = np.array([[-1.0, 0.2, 2.0]] * 4)
    x, eta = np.array([0.0, 1.0, 2.0, 3.0]), np.full(4, 40.0)
    # sigmoid(40 - c) rounds to 1 for every cutpoint: log(1 - 1) would be -inf
    expected = [_mp_ordered_logistic(x[i], eta[i], c[i]) for i in range(4)]
    np.testing.assert_allclose(_ordered_logistic(x, eta, c), expected, **TOL)
    # sigmoid(41) - sigmoid(39.8) = e^-39.8 (1 - e^-1.2), to a relative 1e-17
    np.testing.assert_allclose(expected[1], -39.8 + math.log1p(-math.exp(-1.2)), **TOL)
    bad_x, unsorted = np.array([-1.0, 4.0, 0.5, 1.0]), np.array([[-1, 0.2, 2.0]] * 3 + [[1, 0, 2]])
    assert np.all(_ordered_logistic(bad_x, np.zeros(4), unsorted) == -np.inf)


@pytest.mark.parametrize("dim", [2, 3, 5])
def test_lkj_cholesky_matches_numpyro(dim):
    """On random factors of random correlation matrices, eta from 0.1 to 20 (NumPyro's
    LKJCholesky under jax.jit: its eager ops compile one by one, for seconds)."""
    rng = np.random.default_rng(dim)
    factor = _correlation_factor(rng.normal(0, 2, (8, dim, dim)))
    eta = np.exp(rng.uniform(np.log(0.1), np.log(20), 8))
    with jax.enable_x64(True):
        expected = jax.jit(lambda f, e: npd.LKJCholesky(dim, e).log_prob(f))(factor, eta)
    np.testing.assert_allclose(_lkj_cholesky(factor, eta), np.asarray(expected), **TOL)


def test_lkj_cholesky_support_and_shapes():
    good = _correlation_factor(np.random.default_rng(1).normal(size=(6, 3, 3)))
    bad = good.copy()
    bad[0, 0, 1] = 0.1  # not lower triangular
    bad[1, 2] *= -1  # a negative diagonal entry
    bad[2, 1] *= 1.01  # a row not of unit length
    eta = np.array([1, 1, 1, 0, -1, 2.0])  # eta <= 0 is invalid
    logp = _lkj_cholesky(bad, eta)
    assert np.all(logp[:5] == -np.inf)
    np.testing.assert_allclose(logp[5], _lkj_cholesky(good[5:], eta[5:])[0], **TOL)
    np.testing.assert_array_equal(_lkj_cholesky(np.ones((2, 1, 1)), np.array([0.5, 3])), 0)
    with pytest.raises(ShapeError, match=r"lkj_cholesky: value must be square matrices"):
        d.lkj_cholesky(rt.tensor("L", shape=(2, 3)), 1.0)
    with pytest.raises(ShapeError, match=r"lkj_cholesky: value must have at least 2 axes"):
        d.lkj_cholesky(rt.vector("L"), 1.0)
    with pytest.raises(ShapeError, match=r"ordered_logistic: cutpoints must have at least 1"):
        d.ordered_logistic(rt.vector("x"), 0.0, rt.scalar("c"))
    with pytest.raises(ShapeError, match=r"multinomial: p must have at least 1 axis"):
        d.multinomial(rt.matrix("x"), 3, rt.scalar("p"))


def _issue18_twins(*args: Any) -> Any:
    """The three densities by JAX, NumPyro and the log of a difference of sigmoids (exact
    enough here: the points' cutpoints are 0.3 apart or more, |eta - c| < 12)."""
    mn_x, mn_n, mn_p, ol_x, ol_eta, ol_c, lkj_l, lkj_eta = args
    normalised = mn_p / jnp.sum(mn_p, -1, keepdims=True)
    counts, n = mn_x.astype(jnp.int64), mn_n.astype(jnp.int64)
    multinomial = jax.vmap(jst.multinomial.logpmf)(counts, n, normalised)  # row by row
    ends = jnp.full((*ol_x.shape, 1), jnp.inf)
    edges = jnp.concatenate([-ends, ol_c, ends], -1)
    k = ol_x.astype(int)[:, None]
    upper = jax.nn.sigmoid(ol_eta - jnp.take_along_axis(edges, k, -1)[:, 0])
    lower = jax.nn.sigmoid(ol_eta - jnp.take_along_axis(edges, k + 1, -1)[:, 0])
    lkj = npd.LKJCholesky(lkj_l.shape[-1], lkj_eta).log_prob(lkj_l)
    return jnp.sum(multinomial) + jnp.sum(jnp.log(upper - lower)) + jnp.sum(lkj)


def test_issue18_jax_matches_numpy_and_gradients_match_jax_grad():
    """Values and rk.grad on both backends, against jax.grad of the twins (not of the counts
    or categories, which have no derivative)."""
    points = _issue18_points(seed=2)
    expected = _issue18_fn("numpy", grads=True)(*points)
    got = _issue18_fn("jax", grads=True)(*points)
    for g, e in zip(got, expected, strict=True):
        assert np.all(np.isfinite(e))
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-10, atol=1e-12)
    with jax.enable_x64(True):
        twins = jax.jit(jax.grad(_issue18_twins, argnums=(2, 4, 5, 6, 7)))(*points)
    for i, twin in zip((2, 4, 5, 6, 7), twins, strict=True):
        np.testing.assert_allclose(expected[3 + i], twin, rtol=1e-9, atol=1e-12, err_msg=i)


def test_issue18_gradients_match_finite_differences():
    points = _issue18_points(seed=3, n=3)
    verify_grad(lambda p: d.multinomial(points[0], points[1], p), [points[2]])
    verify_grad(lambda eta, c: d.ordered_logistic(points[3], eta, c), points[4:6])
    verify_grad(lambda eta: d.lkj_cholesky(points[6], eta), [points[7]])
    x = np.array([0.0, 0.0, 3.0])  # both sides of the zero inflation
    verify_grad(
        lambda psi, rate: d.zero_inflated_poisson(x, psi, rate), [[0.3, 0.9, 0.5], [1e-3, 4.0, 2.0]]
    )
    verify_grad(
        lambda psi, n, p: d.zero_inflated_negative_binomial(x, psi, n, p),
        [[0.3, 0.9, 0.5], [2.0, 0.5, 3.0], [0.4, 0.9, 0.2]],
    )


# --- JAX and the edges of the support: one graph, compiled once per backend -------------

# name -> (value, *params) points on the edge of the support, and the log-densities there
EDGES = {
    "bernoulli_logit": (((0, 800), (1, -800)), (-800, -800)),
    "bernoulli": (((1, 1), (0, 0)), (0, 0)),
    "poisson": (((0, 0),), (0,)),
    "binomial": (((5, 5, 1), (0, 5, 0)), (0, 0)),
    "gamma": (((0, 1, 2),), (-math.log(2),)),
    "beta": (((0, 1, 3), (1, 2, 1)), (math.log(3), math.log(2))),
    "halfnormal": (((0, 1),), (0.5 * math.log(2 / math.pi),)),
    "exponential": (((0, 2),), (-math.log(2),)),
    "uniform": (((0, 0, 2), (2, 0, 2)), (-math.log(2), -math.log(2))),
    "weibull": (((0, 1, 2),), (-math.log(2),)),
    "chisquare": (((0, 2),), (-math.log(2),)),
    "pareto": (((2, 3, 2),), (math.log(1.5),)),
    # infinite bounds (the normal), and lower = loc + 40 scale: log Phi(-40) = -804.6
    "truncated_normal": (
        (
            (0.3, 0, 1, -math.inf, math.inf),
            (40.5, 0, 1, 40, math.inf),
            (-40.5, 0, 1, -math.inf, -40),
        ),
        (
            -0.5 * 0.3**2 - 0.5 * math.log(2 * math.pi),
            -0.5 * 40.5**2 - 0.5 * math.log(2 * math.pi) - float(mpmath.log(mpmath.ncdf(-40))),
            -0.5 * 40.5**2 - 0.5 * math.log(2 * math.pi) - float(mpmath.log(mpmath.ncdf(-40))),
        ),
    ),
    "negative_binomial": (((0, 2.5, 1),), (0,)),
    # psi = 1 with P(0) = e^-800 below the smallest float64; psi = 0 (all zeros)
    "zero_inflated_poisson": (((0, 1, 800), (0, 0, 3)), (-800, 0)),
}


@functools.cache
def _graph() -> tuple[list[Any], list[Any]]:
    """Every density on inputs of its own, then each EDGES density again."""
    inputs, logps = [], []
    for name, case in CASES.items():
        args = _vectors(name)
        inputs += args
        logps.append(case.fn(*args))
    cat_x, cat_p, x, mean, cov, bx, bmean, bcov, dir_x, dir_alpha = multivariate = [
        rt.vector("cat_x"),
        rt.matrix("cat_p"),
        rt.matrix("mvn_x"),
        rt.vector("mvn_mean"),
        rt.matrix("mvn_cov"),
        rt.matrix("bmvn_x"),
        rt.matrix("bmvn_mean"),
        rt.tensor("bmvn_cov", shape=(None, None, None)),
        rt.matrix("dir_x"),
        rt.matrix("dir_alpha"),
    ]
    inputs += multivariate
    logps += [
        d.categorical(cat_x, cat_p),
        d.multivariate_normal(x, mean, cov),
        d.multivariate_normal(bx, bmean, bcov),
        d.dirichlet(dir_x, dir_alpha),
    ]
    edge_inputs, edge_logps = _edge_graph()
    return inputs + edge_inputs, logps + edge_logps


@functools.cache
def _edge_graph() -> tuple[list[Any], list[Any]]:
    inputs, logps = [], []
    for name in EDGES:
        args = _vectors(name, prefix="edge_")
        inputs += args
        logps.append(CASES[name].fn(*args))
    return inputs, logps


def _with_grads(inputs: list[Any], logps: list[Any]) -> list[Any]:
    """The log-densities, then rk.grad of their total w.r.t. every input."""
    total = functools.reduce(lambda a, b: a + b, [rt.sum(logp) for logp in logps])
    return [*logps, *rk.grad(total, inputs, disconnected="zero")]


@functools.cache
def _all_fn(backend: str, grads: bool = False) -> Any:
    inputs, logps = _graph()
    return rk.function(inputs, _with_grads(inputs, logps) if grads else logps, backend=backend)


@functools.cache
def _edge_fn(backend: str) -> Any:
    inputs, logps = _edge_graph()
    return rk.function(inputs, _with_grads(inputs, logps), backend=backend)


def _points(seed: int = 0, n: int = 5) -> list[np.ndarray]:
    """Inputs of ``_graph``: points inside every support, away from its edges (so finite
    differences stay inside too), then the EDGES points."""
    rng = np.random.default_rng(seed)
    points = [a for case in CASES.values() for a in case.sample(rng, n)]
    raw = rng.uniform(0.1, 1.0, (n, 3))
    points += [rng.integers(0, 3, n).astype(float), rng.uniform(0.1, 1.0, (n, 3))]
    points += [rng.normal(size=(n, 3)), rng.normal(size=3), _spd(rng.normal(size=(3, 3)))]
    points += [rng.normal(size=(n, 3)), rng.normal(size=(n, 3)), _spd(rng.normal(size=(n, 3, 3)))]
    points += [raw / raw.sum(-1, keepdims=True), rng.uniform(0.5, 5.0, (n, 3))]
    return points + _edge_points()


def _edge_points() -> list[np.ndarray]:
    return [c for edge, _ in EDGES.values() for c in _columns(list(edge))]


# The edge inputs whose rk.grad holds d/dx xlogy(x, y) at y = 0, which is log(0) = -inf (the
# mathematical partial, as PyTensor and jax.scipy.special.xlogy give; docs/gradients.md),
# and the rows where it does: the observed value where p or lam is 0, the shape where x is 0.
LOG_OF_ZERO = {
    "edge_bernoulli0": [1],
    "edge_poisson0": [0],
    "edge_binomial0": [1],
    "edge_gamma1": [0],
    "edge_beta1": [0],
    "edge_weibull1": [0],
    "edge_chisquare1": [0],
}


def _log_of_zero(var: Any, grad: Any) -> np.ndarray:
    """Where ``grad``, the gradient of the edge input ``var``, is d/dx xlogy at y = 0."""
    return np.isin(np.arange(np.size(grad)), LOG_OF_ZERO.get(var.name, []))


def _check_edge_gradients(edge_grads: list[Any], label: str) -> None:
    """The must-have derivatives, from the gradients w.r.t. the inputs of ``_edge_graph``."""
    first = dict(zip(EDGES, _starts(list(EDGES)), strict=True))
    logit, p, lam = (
        np.asarray(edge_grads[first[n] + 1]) for n in ("bernoulli_logit", "bernoulli", "poisson")
    )
    assert logit.tolist() == [-1.0, 1.0], label  # at logit = 800 (x = 0), -800 (x = 1)
    assert p.tolist() == [1.0, -1.0], label  # d/dp log(p) at p = 1, log(1 - p) at p = 0
    assert lam.tolist() == [-1.0], label  # d/dlam at lam = 0, x = 0


def test_edges_give_exact_values_and_finite_gradients_on_both_backends():
    for backend in ("numpy", "jax"):
        results = [np.asarray(r) for r in _edge_fn(backend)(*_edge_points())]
        logps, grads = results[: len(EDGES)], results[len(EDGES) :]
        for (name, (_, expected)), logp in zip(EDGES.items(), logps, strict=True):
            np.testing.assert_allclose(logp, expected, **TOL, err_msg=f"{backend} {name}")
        for var, g in zip(_edge_graph()[0], grads, strict=True):
            at = _log_of_zero(var, g)
            assert np.all(np.isfinite(g[~at])) and np.all(g[at] == -np.inf), (backend, var, g)
        _check_edge_gradients(grads, backend)


def test_jax_matches_numpy():
    points = _points()
    for got, expected in zip(_all_fn("jax")(*points), _all_fn("numpy")(*points), strict=True):
        assert np.all(np.isfinite(expected))
        np.testing.assert_allclose(np.asarray(got), expected, **TOL)


def test_jax_grad_of_the_compiled_function_matches_rk_grad():
    points = _points(seed=1)
    expected = _all_fn("numpy", grads=True)(*points)[len(_graph()[1]) :]

    def total(*args: Any) -> Any:
        return sum(jnp.sum(logp) for logp in _all_fn("jax").jax_fn(*args))

    with jax.enable_x64(True):
        got = jax.jit(jax.grad(total, argnums=tuple(range(len(points)))))(*points)
    # except d/dx xlogy(x, y) at y = 0: -inf by rk.grad, 0 by jax.grad of the JAX lowering
    # (whose xlogy gives log only the inputs it is finite for)
    edges = _edge_graph()[0]
    skipped = [np.zeros(np.size(e), bool) for e in expected[: -len(edges)]]
    skipped += [_log_of_zero(v, e) for v, e in zip(edges, expected[-len(edges) :], strict=True)]
    for g, e, skip in zip(got, expected, skipped, strict=True):
        g, e = np.asarray(g).reshape(-1), np.asarray(e).reshape(-1)
        assert np.all(np.isfinite(e[~skip])) and np.all(e[skip] == -np.inf)
        np.testing.assert_allclose(g[~skip], e[~skip], rtol=1e-9, atol=1e-12)
    _check_edge_gradients(got[-len(_edge_points()) :], "jax.grad")


def test_jax_gives_nan_for_a_cov_that_is_not_positive_definite():
    points = _points()
    mvn = len(CASES) + 1  # the multivariate normal's log-density, and its cov input:
    points[MULTI + 4] = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert np.all(np.isnan(np.asarray(_all_fn("jax")(*points)[mvn])))


# --- gradients: against jax.scipy.stats, else finite differences -------------------------

TWINS = [name for name, case in CASES.items() if case.jax_twin is not None]


@functools.cache
def _twin_grads() -> Any:
    """rk.grad of the total of the densities that have JAX twins, w.r.t. every input."""
    inputs = [v for name in TWINS for v in _vectors(name)]
    mvn = [rt.matrix("mvn_x"), rt.vector("mvn_mean"), rt.matrix("mvn_cov")]
    dirichlet = [rt.matrix("dir_x"), rt.vector("dir_alpha")]
    logps = [
        CASES[n].fn(*inputs[i : i + ARITY[n]]) for n, i in zip(TWINS, _starts(TWINS), strict=True)
    ]
    logps += [d.multivariate_normal(*mvn), d.dirichlet(*dirichlet)]
    inputs += mvn + dirichlet
    return rk.function(inputs, _with_grads(inputs, logps)[len(logps) :], backend="numpy")


def _starts(names: list[str]) -> list[int]:
    return np.cumsum([0] + [ARITY[n] for n in names])[:-1].tolist()


def _twin_total(*args: Any) -> Any:
    total = 0.0
    for name, start in zip(TWINS, _starts(TWINS), strict=True):
        total += jnp.sum(CASES[name].jax_twin(*args[start : start + ARITY[name]]))
    x, mean, cov, dir_x, dir_alpha = args[-5:]
    total += jnp.sum(jst.multivariate_normal.logpdf(x, mean, cov))
    return total + jnp.sum(jst.dirichlet.logpdf(dir_x.T, dir_alpha))


def test_gradients_match_jax_scipy_stats():
    rng = np.random.default_rng(2)
    points = [a for name in TWINS for a in CASES[name].sample(rng, 4)]
    raw = rng.uniform(0.1, 1.0, (4, 3))
    points += [rng.normal(size=(4, 3)), rng.normal(size=3), _spd(rng.normal(size=(3, 3)))]
    points += [raw / raw.sum(-1, keepdims=True), rng.uniform(0.5, 5.0, 3)]
    expected = _twin_grads()(*points)
    with jax.enable_x64(True):
        got = jax.jit(jax.grad(_twin_total, argnums=tuple(range(len(points)))))(*points)
    labels = [(n, i) for n in TWINS for i in range(ARITY[n])] + [("multivariate", 1)] * 5
    for (name, i), g, e in zip(labels, got, expected, strict=True):
        if i > 0 or CASES[name].continuous:  # no derivative for a count
            np.testing.assert_allclose(e, g, rtol=1e-9, atol=1e-12, err_msg=f"{name}[{i}]")


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.jax_twin is None])
def test_gradients_match_finite_differences(name):
    verify_grad(CASES[name].fn, CASES[name].sample(np.random.default_rng(3), 3))


def test_categorical_gradient_matches_finite_differences():
    p = np.random.default_rng(4).uniform(0.1, 1.0, (3, 4))
    verify_grad(lambda p_: d.categorical(np.array([0, 3, 1]), p_), [p])


# --- dtypes and errors ------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_float32_graphs_stay_float32(name):
    assert CASES[name].fn(*_vectors(name, "float32")).dtype == "float32"


def test_float32_multivariate_graphs_stay_float32():
    x, p = rt.vector("x", dtype="int64"), rt.matrix("p", dtype="float32")
    assert d.categorical(x, p).dtype == "float32"
    x, m, c = (
        rt.matrix("x", dtype="float32"),
        rt.vector("m", dtype="float32"),
        rt.matrix("c", dtype="float32"),
    )
    assert d.multivariate_normal(x, m, c).dtype == "float32"
    assert d.dirichlet(x, np.full(3, 1.5, dtype=np.float32)).dtype == "float32"


@pytest.mark.parametrize(
    "name",
    [
        "normal",
        "gamma",
        "student_t",
        "binomial",
        "poisson",
        "von_mises",
        "skew_normal",
        "truncated_normal",
        "wald",
        "weibull",
    ],
)
def test_float32_values_match_scipy(name):
    """Discrete values as int64: the result is still float32."""
    case = CASES[name]
    dtypes = ["float32"] * ARITY[name]
    dtypes[0] = "float32" if case.continuous else "int64"
    inputs = [rt.vector(f"x{i}", dtype=dtype) for i, dtype in enumerate(dtypes)]
    f = rk.function(inputs, case.fn(*inputs), backend="numpy")
    points = case.sample(np.random.default_rng(5), 8)
    logp = f(*(a.astype(dtype) for a, dtype in zip(points, dtypes, strict=True)))
    assert logp.dtype == np.float32
    expected = case.oracle(
        *(a.astype(dtype).astype(float) for a, dtype in zip(points, dtypes, strict=True))
    )
    np.testing.assert_allclose(logp, expected, **F32_TOL)


def test_float32_dirichlet_tolerates_float32_rounding_of_the_sum():
    x = rt.matrix("x", dtype="float32")
    f = rk.function([x], d.dirichlet(x, np.full(3, 2.0, dtype=np.float32)), backend="numpy")
    value = np.array([[0.1, 0.2, 0.7 + 5e-5], [0.1, 0.2, 0.7 + 5e-3]], dtype=np.float32)
    logp = f(value)
    assert logp.dtype == np.float32 and np.isfinite(logp[0]) and logp[1] == -np.inf


def test_result_dtype_rule():
    ints, f32 = rt.vector("k", dtype="int64"), rt.scalar("lam", dtype="float32")
    assert d.poisson(ints, f32).dtype == "float32"  # integer values take the params' float
    assert d.poisson(ints, 3).dtype == "float64"  # no float at all
    assert d.bernoulli(rt.vector("b", dtype="bool"), f32).dtype == "float32"
    x32 = rt.vector("x", dtype="float32")
    assert d.normal(x32, 0.0, 1.0).dtype == "float32"  # Python numbers are weak
    assert d.normal(x32, np.zeros(3), 1.0).dtype == "float64"  # a float64 array is not
    assert d.gamma(x32, rt.scalar("a"), 1.0).dtype == "float64"


def test_errors_name_the_culprit():
    with pytest.raises(DTypeError, match="normal: scale has dtype complex128"):
        d.normal(rt.vector("x"), 0.0, rt.scalar("s", dtype="complex128"))
    with pytest.raises(ShapeError, match="categorical: p must have at least 1 axis"):
        d.categorical(rt.vector("x"), rt.scalar("p"))
    with pytest.raises(ShapeError, match="multivariate_normal: cov must have at least 2 axes"):
        d.multivariate_normal(rt.vector("x"), rt.vector("m"), rt.vector("c"))
    with pytest.raises(ShapeError, match="dirichlet: value must have at least 1 axis"):
        d.dirichlet(rt.scalar("x"), rt.vector("a"))
