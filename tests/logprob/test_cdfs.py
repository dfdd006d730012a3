"""The log-CDFs, log-survival functions and quantiles of rewritekit.logprob.cdfs.

Oracles: scipy.stats, taken on the side where it is exact (``logcdf`` where the CDF is
below 1/2, else ``log1mexp(logsf)``, and the mirror), closed forms where SciPy rounds
(``1 - q`` in a quantile, ``log(x / scale)`` near a Pareto's scale), Python's ``decimal``
for the far tail of the Wald distribution, and central differences for gradients. Each
graph is compiled once per backend (module-level caches) and called on a grid per
distribution: its parameter sets times values in both far tails and at the support's
edges.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, getcontext
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import GraphTypeError
from rewritekit.logprob import cdfs
from rewritekit.testing import verify_grad

TOL = {"rtol": 1e-10, "atol": 1e-300}
INF = math.inf
# standardised values: both far tails, around 0, the infinities
Z = np.array([-INF, -1e10, -37, -10, -3, -1, -1e-8, 0, 1e-8, 0.5, 1, 3, 10, 37, 1e10, INF])
# positive supports: below, the edge 0, tiny, bulk, far out
P = np.array([-INF, -1, 0, 1e-300, 1e-20, 1e-8, 0.01, 0.5, 1, 2, 5, 30, 100, 700, 1e4, INF])
K = np.array([-INF, -1, -0.5, 0, 0.5, 1, 3, 10, 50, 100, 300, 1e4, INF])  # counts
Q = np.array([0, 1e-300, 1e-100, 1e-20, 1e-8, 0.01, 0.2, 0.5, 0.7, 0.99, 1 - 1e-8, 1 - 1e-14, 1])
# scipy.special.betaincinv (the NumPy backend's) gives NaN or 2.2e-308 for q ~ 1e-300, and
# SciPy's t.ppf -inf at 1e-300 for df = 3; the round trips check those quantiles instead
Q_BETAINCINV = Q[(Q == 0) | (Q >= 1e-20)]


def _log1mexp(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(x > -math.log(2), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _exact_sides(lc: np.ndarray, lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(logcdf, logccdf) from SciPy's pair, each side from the one whose probability is
    below 1/2 (where SciPy is exact; the other rounds to log(1 - tiny) = 0)."""
    half = math.log(0.5)
    return np.where(lc < half, lc, _log1mexp(lu)), np.where(lu < half, lu, _log1mexp(lc))


def _scipy_sides(dist: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with np.errstate(all="ignore"):
        return _exact_sides(dist.logcdf(x), dist.logsf(x))


def _half_t(nu: float, scale: float) -> Any:
    """P(|T| <= z) for the half Student's t (SciPy has none): a stand-in for a frozen
    distribution, from t's survival function and the incomplete-beta identity."""

    class HalfT:
        @staticmethod
        def logcdf(x):
            z = np.maximum(x / scale, 0)
            inner = sp.betainc(0.5, nu / 2, z**2 / (nu + z**2))
            return np.where(z > 1, np.log1p(-2 * st.t.sf(z, nu)), np.log(inner))

        @staticmethod
        def logsf(x):
            z = np.maximum(x / scale, 0)
            return math.log(2) + st.t.logsf(z, nu)

    return HalfT


def _zero_inflated(psi: float, count: Any) -> Any:
    """1 - psi + psi F(k) and psi Q(k), from the count distribution's SciPy sides."""

    class ZeroInflated:
        @staticmethod
        def logcdf(x):
            lc, _ = _scipy_sides(count, x)
            with np.errstate(divide="ignore"):
                out = np.logaddexp(np.log1p(-psi), np.log(psi) + lc)
            return np.where(x < 0, -INF, out)

        @staticmethod
        def logsf(x):
            _, lu = _scipy_sides(count, x)
            with np.errstate(divide="ignore"):
                return np.where(x < 0, 0.0, np.log(psi) + lu)

    return ZeroInflated


@dataclass(frozen=True)
class Case:
    """A distribution: its parameter sets, the SciPy twin of each, the values (a function
    of the parameters) and the probabilities its quantile is checked at."""

    params: tuple[tuple[float, ...], ...]
    scipy: Callable[..., Any]
    values: Callable[..., np.ndarray]
    q: np.ndarray = field(default_factory=lambda: Q)
    ppf: Callable[..., np.ndarray] | None = None  # (q, *params) where SciPy's ppf rounds


def _loc_scale(loc: float, scale: float, *_: float) -> np.ndarray:
    return loc + scale * Z


class _HalfNormal:
    """SciPy's halfnorm, with the survival function from its exact sides: log1p(-erf)
    near 0 and log(2) + norm.logsf in the tail (halfnorm.logsf rounds to 0 and -inf)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.logcdf = st.halfnorm(scale=scale).logcdf

    def logsf(self, x: np.ndarray) -> np.ndarray:
        z = np.maximum(x / self.scale, 0)
        near = np.log1p(-sp.erf(z * math.sqrt(0.5)))
        return np.where(z < 1, near, math.log(2) + st.norm.logsf(z))

    def ppf(self, q: np.ndarray) -> np.ndarray:
        # SciPy's ndtri((1 + q) / 2) rounds 1 + q: erfinv below 1/2, the exact 1 - q above
        lower = math.sqrt(2) * sp.erfinv(q)
        return self.scale * np.where(q < 0.5, lower, st.norm.isf((1 - q) / 2))


CASES = {
    "normal": Case(((1, 2), (-3, 0.5)), st.norm, _loc_scale),
    "halfnormal": Case(((2,),), _HalfNormal, lambda s: s * P),
    "cauchy": Case(((1, 2),), st.cauchy, _loc_scale, Q[Q <= 0.99]),
    "halfcauchy": Case(((2,),), lambda s: st.halfcauchy(scale=s), lambda s: s * P, Q[Q <= 0.99]),
    "exponential": Case(((2,),), lambda s: st.expon(scale=s), lambda s: s * P),
    "gamma": Case(
        ((0.5, 2), (3, 2), (50, 0.5)), lambda a, s: st.gamma(a, scale=s), lambda a, s: s * P
    ),
    "chisquare": Case(((1,), (5,)), st.chi2, lambda df: P),
    "inverse_gamma": Case(
        ((0.5, 2), (3, 2), (50, 0.5)),
        lambda a, s: st.invgamma(a, scale=s),
        lambda a, s: s * P,
        Q[Q >= 0.01],  # the quantile goes through 1 - q
    ),
    "beta": Case(
        ((0.5, 0.5), (2, 5), (30, 3)),
        st.beta,
        lambda a, b: np.array(
            [-1, 0, 1e-300, 1e-20, 1e-8, 0.1, 0.5, 0.9, 1 - 1e-8, 1 - 1e-15, 1, 2]
        ),
        Q_BETAINCINV,
    ),
    "uniform": Case(
        ((1, 3),),
        lambda low, high: st.uniform(low, high - low),
        lambda low, high: np.array([-INF, -1, 1, 1 + 1e-12, 1.5, 3 - 1e-12, 3, 4, INF]),
    ),
    "student_t": Case(
        ((0.5, 1, 2), (3, 1, 2), (30, 1, 2)), st.t, lambda df, loc, s: loc + s * Z, Q_BETAINCINV
    ),
    "half_student_t": Case(
        ((0.5, 2), (3, 2)),
        _half_t,
        lambda nu, s: s * P[P != 1e-300],  # z**2 underflows in the oracle: closed forms
        Q[(Q == 0) | (Q >= 0.01)],  # below, SciPy's t.isf((1 - q) / 2) rounds 1 - q
        ppf=lambda q, nu, s: s * st.t.isf((1 - q) / 2, nu),
    ),
    "lognormal": Case(
        ((0.5, 2),),
        lambda loc, s: st.lognorm(s, scale=math.exp(loc)),
        lambda loc, s: np.concatenate([[-1, 0], np.exp(Z[np.abs(Z) <= 37]), [INF]]),
    ),
    # SciPy's laplace gives -inf at z = -1e10 (test_far_tails_match_closed_forms)
    "laplace": Case(((1, 2),), st.laplace, lambda loc, s: loc + s * Z[np.abs(Z) != 1e10]),
    "logistic": Case(((1, 2),), st.logistic, _loc_scale),
    "gumbel": Case(((1, 2),), st.gumbel_r, _loc_scale),
    # SciPy's weibull_min.logcdf is -inf where (x / scale)**c underflows (closed forms)
    "weibull": Case(
        ((0.5, 2), (2, 2)),
        lambda c, s: st.weibull_min(c, scale=s),
        lambda c, s: s * P[P != 1e-300],
    ),
    "pareto": Case(
        ((3, 2),),
        lambda b, s: st.pareto(b, scale=s),
        lambda b, s: s * np.array([-INF, 0, 0.5, 1, 1.001, 1.1, 2, 11, 1e3, 1e10, INF]),
    ),
    "truncated_normal": Case(
        ((1, 2, -1, 5), (1, 2, 7, 11), (1, 2, -INF, -5), (1, 2, 5, INF)),
        lambda loc, s, lo, hi: st.truncnorm((lo - loc) / s, (hi - loc) / s, loc, s),
        _loc_scale,
        Q[(Q == 0) | (Q >= 1e-8)],  # Phi(a) + q (...) rounds q below Phi(a)'s precision
    ),
    "wald": Case(
        ((1, 2), (6, 2)),
        lambda mean, s: st.invgauss(mean / s, scale=s),
        lambda mean, s: s * P[P <= 700],  # farther out SciPy's logsf is off: see below
    ),
    "bernoulli": Case(
        ((0,), (0.3,), (1,)), st.bernoulli, lambda p: np.array([-INF, -1, 0, 0.5, 1, 1.5, INF])
    ),
    "bernoulli_logit": Case(
        ((-2,), (0,), (3,)),
        lambda logit: st.bernoulli(sp.expit(logit)),
        lambda logit: np.array([-INF, -1, 0, 0.5, 1, 1.5, INF]),
    ),
    "poisson": Case(((0,), (0.5,), (30,)), st.poisson, lambda lam: K),
    "binomial": Case(
        ((10, 0.3), (50, 1e-3), (50, 1 - 1e-3), (0, 0.5), (10, 0), (10, 1)),
        st.binom,
        lambda n, p: K,
    ),
    "negative_binomial": Case(((3, 0.3), (0.5, 0.9), (10, 1)), st.nbinom, lambda n, p: K),
    "geometric": Case(((0.3,), (1e-3,), (0.99,)), st.geom, lambda p: K),
    "discrete_uniform": Case(
        ((-1, 7), (3, 3)), lambda low, high: st.randint(low, high + 1), lambda low, high: K
    ),
    "zero_inflated_poisson": Case(
        ((0.7, 3), (1, 3), (0.2, 40)),
        lambda psi, rate: _zero_inflated(psi, st.poisson(rate)),
        lambda psi, rate: K,
    ),
    "zero_inflated_negative_binomial": Case(
        ((0.7, 3, 0.3), (0.4, 0.5, 0.9)),
        lambda psi, n, p: _zero_inflated(psi, st.nbinom(n, p)),
        lambda psi, n, p: K,
    ),
}
ARITY = {name: 1 + len(case.params[0]) for name, case in CASES.items()}


def _grid(name: str, quantiles: bool = False) -> list[np.ndarray]:
    """(values or q, *params) columns: every parameter set times the value grid."""
    case = CASES[name]
    columns: list[list[np.ndarray]] = [[] for _ in range(ARITY[name])]
    for params in case.params:
        first = case.q if quantiles else np.asarray(case.values(*params), dtype=float)
        columns[0].append(first)
        for i, p in enumerate(params):
            columns[i + 1].append(np.full(first.shape, float(p)))
    return [np.concatenate(c) for c in columns]


def _expected(name: str) -> tuple[np.ndarray, np.ndarray]:
    case = CASES[name]
    sides = [_scipy_sides(case.scipy(*params), case.values(*params)) for params in case.params]
    return np.concatenate([s[0] for s in sides]), np.concatenate([s[1] for s in sides])


def _expected_quantiles(name: str) -> np.ndarray:
    case = CASES[name]
    with np.errstate(all="ignore"):
        if case.ppf is not None:
            return np.concatenate([case.ppf(case.q, *params) for params in case.params])
        return np.concatenate([case.scipy(*params).ppf(case.q) for params in case.params])


def _vectors(name: str, prefix: str) -> list[Any]:
    return [rt.vector(f"{prefix}{name}{i}") for i in range(ARITY[name])]


# What the JAX comparison covers: every special function family once (log_ndtr and
# ndtri, erf and erfinv, arctan2 and tan, softplus, log1mexp, gammainc and gammaincc) on the
# distributions that use them most simply. All of ``CASES`` agreed on JAX to 1e-9 (50 s of
# XLA compiling on a loaded 2-core machine: over this file's time budget; gammaincinv,
# betainc, betaincinv and erfcx take ~1-2 s each).
JAX_NAMES = (
    "normal",
    "halfnormal",
    "cauchy",
    "exponential",
    "uniform",
    "poisson",
    "logistic",
    "gumbel",
    "weibull",
    "laplace",
)


@functools.cache
def _graph(names: tuple[str, ...]) -> tuple[list[Any], list[Any]]:
    """Every logcdf and logccdf of ``names``, then their icdf, on inputs of their own."""
    inputs, outputs = [], []
    for name in names:
        args = _vectors(name, "x")
        inputs += args
        outputs += [cdfs.LOGCDF[name](*args), cdfs.LOGCCDF[name](*args)]
    for name in _with_icdf(names):
        args = _vectors(name, "q")
        inputs += args
        outputs.append(cdfs.ICDF[name](*args))
    return inputs, outputs


def _with_icdf(names: tuple[str, ...]) -> list[str]:
    return [name for name in names if name in cdfs.ICDF]


@functools.cache
def _results(backend: str, names: tuple[str, ...] = tuple(CASES)) -> dict[str, list[Any]]:
    """name -> [logcdf, logccdf] and "icdf name" -> [icdf], on the grids."""
    points = [c for name in names for c in _grid(name)]
    points += [c for name in _with_icdf(names) for c in _grid(name, quantiles=True)]
    with np.errstate(all="ignore"):
        flat = [np.asarray(r) for r in rk.function(*_graph(names), backend=backend)(*points)]
    out = {name: flat[2 * i : 2 * i + 2] for i, name in enumerate(names)}
    start = 2 * len(names)
    out.update({f"icdf {name}": [flat[start + i]] for i, name in enumerate(_with_icdf(names))})
    return out


# --- against SciPy -----------------------------------------------------------------------


def test_the_tables_cover_the_same_distributions():
    assert set(cdfs.LOGCDF) == set(cdfs.LOGCCDF) == set(CASES)
    assert set(cdfs.ICDF) <= set(CASES)
    assert {"von_mises", "skew_normal", "beta_binomial"}.isdisjoint(cdfs.LOGCDF)


@pytest.mark.parametrize("name", CASES)
def test_logcdf_and_logccdf_match_scipy_in_both_tails(name):
    got_lc, got_lu = _results("numpy")[name]
    expected_lc, expected_lu = _expected(name)
    x = _grid(name)[0]
    np.testing.assert_allclose(got_lc, expected_lc, **TOL, err_msg=f"{name} logcdf at {x}")
    np.testing.assert_allclose(got_lu, expected_lu, **TOL, err_msg=f"{name} logccdf at {x}")
    assert not np.any(np.isnan(got_lc) | np.isnan(got_lu))  # outside the support too


@pytest.mark.parametrize("name", cdfs.ICDF)
def test_icdf_matches_scipy_ppf(name):
    (got,) = _results("numpy")[f"icdf {name}"]
    np.testing.assert_allclose(got, _expected_quantiles(name), **TOL, err_msg=name)


def test_jax_matches_numpy():
    numpy, jax = _results("numpy"), _results("jax", JAX_NAMES)
    assert len(jax) == len(JAX_NAMES) + len(_with_icdf(JAX_NAMES))
    for key, got in jax.items():
        for a, b in zip(got, numpy[key], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-300, err_msg=key)


# --- the far tails, against closed forms ---------------------------------------------------


def _decimal_wald_logsf(y: float, m: float) -> float:
    """log P(Y > y) of invgauss(m) in 60 digits: exp(-r1**2 / 2) (erfcx(r1 / sqrt 2) -
    erfcx(r2 / sqrt 2)) / 2, erfcx from its asymptotic series (r1 / sqrt 2 > 20 here)."""
    getcontext().prec = 60
    y_, m_, two = Decimal(y), Decimal(m), Decimal(2)
    sqrt_pi = Decimal("3.14159265358979323846264338327950288419716939937510582097494").sqrt()

    def erfcx(t: Decimal) -> Decimal:
        total, term, n = Decimal(0), Decimal(1), 0
        while abs(term) > Decimal(10) ** -55:
            total, n = total + term, n + 1
            term = -term * (2 * n - 1) / (2 * t * t)
        return total / (t * sqrt_pi)

    r1, r2 = (y_ / m_ - 1) / y_.sqrt(), (y_ / m_ + 1) / y_.sqrt()
    diff = erfcx(r1 / two.sqrt()) - erfcx(r2 / two.sqrt())
    return float(-(r1 * r1) / 2 + diff.ln() - two.ln())


def _asymptotic_log_ndtr(z: float) -> float:
    """log Phi(z) for z << 0 from Phi(z) ~ phi(z) / |z| (1 - 1/z^2 + 3/z^4 - 15/z^6)."""
    series = 1 - z**-2 + 3 * z**-4 - 15 * z**-6 + 105 * z**-8
    return -0.5 * z * z - math.log(-z * math.sqrt(2 * math.pi)) + math.log(series)


# (table, name, value, params, expected); ``expected`` is computed without the function
FAR_TAILS = [
    ("LOGCDF", "normal", -40.0, (0, 1), _asymptotic_log_ndtr(-40)),
    ("LOGCCDF", "normal", 81.0, (1, 2), _asymptotic_log_ndtr(-40)),
    ("LOGCCDF", "halfnormal", 2e-300, (2,), -math.sqrt(2 / math.pi) * 1e-300),
    ("LOGCCDF", "exponential", 3e4, (2,), -1.5e4),
    ("LOGCDF", "exponential", 2e-20, (2,), math.log(1e-20)),
    ("LOGCDF", "logistic", -800.0, (0, 1), -800.0),
    ("LOGCCDF", "logistic", 801.0, (1, 1), -800.0),
    ("LOGCDF", "laplace", -1e10, (0, 1), -1e10 - math.log(2)),
    ("LOGCCDF", "laplace", 2e10 + 1, (1, 2), -1e10 - math.log(2)),
    ("LOGCDF", "gumbel", -5.0, (0, 1), -math.exp(5)),
    ("LOGCCDF", "gumbel", 50.0, (0, 1), -50 - math.exp(-50) / 2),
    (
        "LOGCDF",
        "half_student_t",
        2e-300,
        (3, 2),
        math.log(4 / (math.pi * math.sqrt(3)) * 1e-300),
    ),  # 2 f(0) z
    ("LOGCDF", "weibull", 2e-300, (2, 2), 2 * math.log(1e-300)),
    ("LOGCCDF", "pareto", 2.00000002, (3, 2), float(-3 * Decimal.from_float(1.00000001).ln())),
    ("LOGCCDF", "wald", 2e10, (6, 2), _decimal_wald_logsf(1e10, 3)),
    ("LOGCCDF", "wald", 2e4, (1, 2), _decimal_wald_logsf(1e4, 0.5)),
    ("LOGCDF", "cauchy", -1e300, (0, 1), -math.log(math.pi) - math.log(1e300)),
    ("LOGCDF", "bernoulli_logit", 0.0, (800,), -800.0),
    # the quantiles beyond SciPy's ppf: cot(pi d) = 1 / (pi d) - pi d / 3 - ...
    ("ICDF", "cauchy", 1e-14, (1, 2), 1 - 2 / (math.pi * 1e-14)),
    ("ICDF", "halfcauchy", 1 - 2**-40, (2,), 2 * 2 / (math.pi * 2**-40)),
    ("ICDF", "halfnormal", 1e-300, (2,), 2 * math.sqrt(2 * math.pi) / 2 * 1e-300),
]


@functools.cache
def _far_tails_fn() -> Any:
    values = [
        getattr(cdfs, table)[name](rt.constant(x), *map(float, params))
        for table, name, x, params, _ in FAR_TAILS
    ]
    return rk.function([], values, backend="numpy")


def test_far_tails_match_closed_forms():
    """Where SciPy rounds to 0 or -inf, or is 1e-9 off (pareto near its scale, the Wald
    tail), the exact values."""
    got = _far_tails_fn()()
    for (table, name, x, _, expected), value in zip(FAR_TAILS, got, strict=True):
        np.testing.assert_allclose(value, expected, rtol=1e-13, err_msg=f"{table} {name} {x}")


# --- quantiles: round trips --------------------------------------------------------------

CONTINUOUS = [n for n in cdfs.ICDF if n not in {"bernoulli", "bernoulli_logit", "geometric"}]
CONTINUOUS.remove("discrete_uniform")
# tail probabilities whose quantile is far from the support's ends in float64
ROUND_TRIP_Q = np.array([0, 1, 1e-300, 1e-100, 1e-20, 1e-8, 0.01, 0.3, 0.5, 0.8, 0.99, 1 - 1e-8])


@functools.cache
def _round_trip_fn() -> tuple[Any, list[Any]]:
    inputs, outputs = [], []
    for name in CONTINUOUS:
        q, *params = _vectors(name, "r")
        x = cdfs.ICDF[name](q, *params)
        inputs += [q, *params]
        lc = cdfs.LOGCDF[name](x, *params)
        again = cdfs.ICDF[name](rt.exp(lc), *params)  # icdf(cdf(x)) = x
        outputs += [x, lc, cdfs.LOGCCDF[name](x, *params), again]
    return rk.function(inputs, outputs, backend="numpy"), inputs


def test_logcdf_of_icdf_gives_q_back():
    """log F(F^-1(q)) = log q, and log(1 - q) on the other side, to the precision the
    quantile's rounding leaves: |d log F / d log x| * eps, at most ~ 1e-11 here."""
    fn, _ = _round_trip_fn()
    points = []
    for name in CONTINUOUS:
        params = (0, 3) if name == "uniform" else CASES[name].params[-1]  # low + q w > low
        points += [ROUND_TRIP_Q, *(np.full(ROUND_TRIP_Q.shape, float(p)) for p in params)]
    results = fn(*points)
    for i, name in enumerate(CONTINUOUS):
        x, lc, lu, again = results[4 * i : 4 * i + 4]
        # leave out quantiles that overflow, or lie within 1e-6 of an end of the support (x
        # at q = 0 and 1): there x's own rounding moves F by more than 1e-9
        with np.errstate(invalid="ignore"):
            ends = np.abs(x[:, None] - x[None, :2]) <= 1e-6 * np.abs(x[:, None])
        keep = np.isfinite(x) & ~np.any(ends, axis=1)
        if name == "inverse_gamma":  # its quantile goes through 1 - q
            keep &= ROUND_TRIP_Q >= 0.01
        if name in {"beta", "student_t", "half_student_t"}:  # betaincinv: see Q_BETAINCINV
            keep &= ROUND_TRIP_Q >= 1e-100
        assert keep.sum() >= 6 and not np.any(keep[:2]), (name, x)
        with np.errstate(divide="ignore"):
            log_q = np.log(ROUND_TRIP_Q)
        np.testing.assert_allclose(lc[keep], log_q[keep], rtol=1e-9, err_msg=name)
        np.testing.assert_allclose(
            lu[keep], np.log1p(-ROUND_TRIP_Q[keep]), rtol=1e-9, atol=1e-300, err_msg=name
        )
        bulk = keep & (ROUND_TRIP_Q >= 0.01) & (ROUND_TRIP_Q <= 0.99)  # icdf's slope is mild
        np.testing.assert_allclose(again[bulk], x[bulk], rtol=1e-9, err_msg=name)


DISCRETE_ICDF = {
    "bernoulli": [(0.0,), (0.3,), (1.0,)],
    "bernoulli_logit": [(-2.0,), (30.0,)],
    "geometric": [(0.3,), (1e-3,), (0.99,)],
    "discrete_uniform": [(-1.0, 7.0), (3.0, 3.0)],
}


@functools.cache
def _discrete_icdf_fn() -> Any:
    inputs, outputs = [], []
    for name in DISCRETE_ICDF:
        q, *params = _vectors(name, "d")
        inputs += [q, *params]
        outputs.append(cdfs.ICDF[name](q, *params))
    return rk.function(inputs, outputs, backend="numpy")


def test_discrete_icdf_at_the_cdf_of_each_count_is_the_count():
    """The smallest k with F(k) >= q, at q = F(k) itself (SciPy's cdf), where rounding
    could step one count too far; for counts with F(k) < 1 (at q = 1 the quantile is the
    support's upper end, as SciPy's)."""
    points, counts = [], []
    for name, param_sets in DISCRETE_ICDF.items():
        ks, columns = [], [[] for _ in range(1 + len(param_sets[0]))]
        for params in param_sets:
            dist = CASES[name].scipy(*params)
            support = np.arange(dist.support()[0], min(dist.support()[1], 200) + 1)
            # counts with positive probability whose CDF differs from the one before in
            # float64 (far out 1 - 0.7**k rounds alike for several k) and is below 1
            steps = dist.cdf(support) > dist.cdf(support - 1)
            k = support[steps & (dist.cdf(support) < 1)]
            ks.append(k)
            q = dist.cdf(k)
            if name == "bernoulli_logit":  # F(0) = sigmoid(-logit), not 1 - (p rounded)
                q = np.full(k.shape, sp.expit(-params[0]))
            for column, value in zip(columns, (q, *params), strict=True):
                column.append(np.broadcast_to(value, k.shape))
        counts.append(np.concatenate(ks).astype(float))
        points += [np.concatenate(c).astype(float) for c in columns]
    for name, k, got in zip(DISCRETE_ICDF, counts, _discrete_icdf_fn()(*points), strict=True):
        assert k.size, name
        np.testing.assert_array_equal(got, k, err_msg=name)


# --- gradients -----------------------------------------------------------------------------

CONTINUOUS_CASES = [*CONTINUOUS, "wald"]


@functools.cache
def _value_grad_fn() -> Any:
    """d/dx of every continuous logcdf and logccdf (elementwise: the gradient of the sum)."""
    inputs, outputs = [], []
    for name in CONTINUOUS_CASES:
        x, *params = _vectors(name, "g")
        inputs += [x, *params]
        for table in (cdfs.LOGCDF, cdfs.LOGCCDF):
            out = table[name](x, *params)
            outputs += [out, rk.grad(rt.sum(out), x)]
    return rk.function(inputs, outputs, backend="numpy")


def test_value_gradients_are_finite_wherever_the_value_is():
    """At the grids' far tails, edges and outside the support (discarded branches only see
    safe inputs); -inf values may have any gradient."""
    points = [c for name in CONTINUOUS_CASES for c in _grid(name)]
    with np.errstate(all="ignore"):
        results = _value_grad_fn()(*points)
    for i, name in enumerate(CONTINUOUS_CASES):
        x = _grid(name)[0]
        for side in range(2):
            value, grad = results[4 * i + 2 * side : 4 * i + 2 * side + 2]
            # (a value of -1e299, the Wald's at x = 1e-300, has a slope that overflows)
            where = np.isfinite(x) & (np.abs(value) < 1e200)
            assert np.all(np.isfinite(grad[where])), (name, side, x[~np.isfinite(grad) & where])


# name -> a point inside the support, one array per argument (value, then parameters):
# every float argument is differentiated
GRAD_POINTS = {
    "normal": [(-3.0, 30.0), (1.0, 1.0), (2.0, 2.0)],
    "gamma": [(0.3, 40.0), (2.0, 2.0), (1.5, 1.5)],
    "truncated_normal": [(0.0, 8.0), (1.0, 1.0), (2.0, 2.0), (-1.0, -1.0), (9.0, 9.0)],
    "wald": [(0.5, 30.0), (3.0, 3.0), (2.0, 2.0)],
    "weibull": [(1e-3, 5.0), (1.5, 1.5), (2.0, 2.0)],
    "poisson": [(3.5, 40.5), (4.0, 20.0)],  # between counts: the step is flat there
    "gumbel": [(-2.0, 20.0), (1.0, 1.0), (2.0, 2.0)],
}


@pytest.mark.parametrize("name", GRAD_POINTS)
@pytest.mark.parametrize("table", ["LOGCDF", "LOGCCDF"])
def test_gradients_match_finite_differences(name, table):
    fn = getattr(cdfs, table)[name]
    verify_grad(fn, [np.array(p) for p in GRAD_POINTS[name]], rtol=1e-6)


def test_tail_gradients_match_the_hazard():
    """d/dz log Phi(z) = phi(z) / Phi(z) at z = -40 (and its mirror): finite and exact."""
    z = rt.vector("z")
    lc, lu = cdfs.LOGCDF["normal"](z, 0.0, 1.0), cdfs.LOGCCDF["normal"](z, 0.0, 1.0)
    fn = rk.function([z], [rk.grad(rt.sum(lc), z), rk.grad(rt.sum(lu), z)], backend="numpy")
    grid = np.array([-40.0, -5.0, 0.0, 5.0, 40.0])
    d_lc, d_lu = fn(grid)
    hazard = np.exp(st.norm.logpdf(grid) - st.norm.logcdf(grid))
    np.testing.assert_allclose(d_lc, hazard, rtol=1e-12)
    np.testing.assert_allclose(d_lu, -hazard[::-1], rtol=1e-12)


# --- dispatch on a draw --------------------------------------------------------------------


@functools.cache
def _dispatch_fn() -> tuple[Any, Any]:
    key = rr.key("key")
    loc, z, v = rt.scalar("loc"), rt.vector("z"), rt.vector("v")
    _, x = rr.normal(key, loc, 2.0, size=(3,))
    _, n = rr.poisson(key, 3.0)
    _, b = rr.bernoulli(key, rt.sigmoid(z))
    outputs = [
        cdfs.logcdf(x, 1.0),  # x's shape, the value broadcast
        cdfs.logccdf(x, v),
        cdfs.icdf(x, 0.25),
        cdfs.logcdf(n, v),
        cdfs.logcdf(b, 0.0),  # the logit form, exact at z = 800
        cdfs.logccdf(b, 0.0),
    ]
    return rk.function([loc, z, v], outputs, backend="numpy"), outputs


def test_dispatch_on_a_draw_matches_the_tables_and_has_the_draws_shape():
    fn, outputs = _dispatch_fn()
    assert outputs[0].type.shape == (3,) and outputs[2].type.shape == (3,)
    v = np.array([0.0, 5.0, 1e3])
    lc, lu, q, pois, b_lc, b_lu = fn(1.0, np.array([800.0, -800.0, 0.0]), v)
    np.testing.assert_allclose(lc, np.full(3, st.norm(1, 2).logcdf(1.0)), **TOL)
    np.testing.assert_allclose(lu, st.norm(1, 2).logsf(v), **TOL)
    np.testing.assert_allclose(q, np.full(3, st.norm(1, 2).ppf(0.25)), **TOL)
    np.testing.assert_allclose(pois, _scipy_sides(st.poisson(3), v)[0], **TOL)
    np.testing.assert_allclose(b_lc, [-800.0, -math.exp(-800), -math.log(2)], **TOL)
    np.testing.assert_allclose(b_lu, [-math.exp(-800), -800.0, -math.log(2)], **TOL)


def test_dtype_follows_the_float_arguments():
    x32 = rt.vector("x", dtype="float32")
    assert cdfs.LOGCDF["gamma"](x32, 2.0, 1.0).dtype == "float32"
    assert cdfs.ICDF["normal"](x32, np.float64(0.0), 1.0).dtype == "float64"
    k = rt.vector("k", dtype="int64")
    assert cdfs.LOGCCDF["poisson"](k, 3).dtype == "float64"
    _, x = rr.exponential(rr.key(), np.float32(2.0))
    assert cdfs.logcdf(x, 1.0).dtype == "float32"


def test_dispatch_errors_name_the_distribution():
    key = rr.key()
    _, cat = rr.categorical(key, np.array([0.2, 0.8]))
    _, pois = rr.poisson(key, 3.0)
    _, angle = rr.von_mises(key, 0.0, 1.0)
    with pytest.raises(GraphTypeError, match=r"rl\.logcdf: the von_mises draw has no closed-"):
        cdfs.logcdf(angle, 0.0)
    with pytest.raises(GraphTypeError, match=r"rl\.logcdf: the categorical draw has no closed-"):
        cdfs.logcdf(cat, 0.0)
    with pytest.raises(GraphTypeError, match=r"rl\.logccdf: the categorical draw has no"):
        cdfs.logccdf(cat, 0.0)
    with pytest.raises(GraphTypeError, match=r"rl\.icdf: the poisson draw has no closed-form"):
        cdfs.icdf(pois, 0.5)
    with pytest.raises(GraphTypeError, match=r"rl\.logcdf: x must be a random variable's draw"):
        cdfs.logcdf(rt.scalar("y"), 0.0)


def test_invalid_parameters_give_nan_and_the_support_never_does():
    v = rt.vector("v")
    fn = rk.function(
        [v],
        [
            cdfs.LOGCDF["normal"](v, 0.0, -1.0),
            cdfs.LOGCCDF["gamma"](v, 0.0, 1.0),
            cdfs.LOGCDF["binomial"](v, 2.5, 0.5),
            cdfs.ICDF["exponential"](v, 1.0),
            cdfs.LOGCDF["uniform"](v, 2.0, 1.0),
        ],
        backend="numpy",
    )
    bad_normal, bad_gamma, bad_binomial, q, bad_uniform = fn(np.array([-1.0, 0.5, 2.0]))
    assert np.all(np.isnan(bad_normal) & np.isnan(bad_gamma) & np.isnan(bad_binomial))
    assert np.all(np.isnan(bad_uniform))
    assert np.isnan(q[0]) and np.isnan(q[2]) and q[1] == math.log(2)
