"""Tests of ``rewritekit.random``: distributions, keys, shapes, errors and rewriting.

The two backends draw different numbers from the same distribution, so each backend's
draws are tested against SciPy's distribution (KS and chi-square tests, moments within
several standard errors). One graph holds every distribution's draws, chained through one
key, and is compiled once per backend (a JAX sampler compile costs up to a second per
distribution). The seeds are fixed, so every test is deterministic.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from scipy import special, stats

import rewritekit as rk
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.errors import BroadcastError, DTypeError, GraphTypeError, ShapeError
from rewritekit.ir import TensorType
from rewritekit.tensor import random as rv

BACKENDS = ["numpy", "jax"]
N = 4000
SEED = 2024
P_MIN = 1e-3  # KS / chi-square p-values must exceed this
SE = 5.0  # moment tolerance, in standard errors

F32 = np.float32
CAT_P = np.array([0.2, 0.5, 0.3])
MVN_MEAN = np.array([1.0, -2.0, 0.5])
MVN_COV = np.array([[2.0, 0.8, -0.5], [0.8, 1.0, 0.3], [-0.5, 0.3, 1.5]])
DIR_ALPHA = np.array([1.0, 2.0, 3.0])


class _HalfStudentT(stats.rv_continuous):
    """|t_df|, which SciPy lacks: from SciPy's t, with its absolute moments
    E|t|^n = df^(n/2) Gamma((n+1)/2) Gamma((df-n)/2) / (sqrt(pi) Gamma(df/2)), n < df."""

    def _pdf(self, x, df):
        return 2 * stats.t.pdf(x, df)

    def _cdf(self, x, df):
        return 2 * stats.t.cdf(x, df) - 1

    def _munp(self, n, df):
        log_moment = (
            0.5 * n * np.log(df)
            + special.gammaln(0.5 * (n + 1))
            + special.gammaln(0.5 * (df - n))
            - special.gammaln(0.5 * df)
        )
        return np.exp(log_moment) / np.sqrt(np.pi)


HALF_STUDENT_T = _HalfStudentT(a=0.0, name="half_student_t")

# name -> (sampler of N draws from a key, SciPy reference)
CONTINUOUS = {
    "normal": (lambda k: rr.normal(k, 1.5, 2.0, size=(N,)), stats.norm(1.5, 2.0)),
    "halfnormal": (lambda k: rr.halfnormal(k, 2.0, size=(N,)), stats.halfnorm(scale=2.0)),
    "cauchy": (lambda k: rr.cauchy(k, 1.0, 2.0, size=(N,)), stats.cauchy(1.0, 2.0)),
    "halfcauchy": (lambda k: rr.halfcauchy(k, 2.0, size=(N,)), stats.halfcauchy(scale=2.0)),
    "exponential": (lambda k: rr.exponential(k, 2.0, size=(N,)), stats.expon(scale=2.0)),
    "gamma": (lambda k: rr.gamma(k, 2.5, scale=0.5, size=(N,)), stats.gamma(2.5, scale=0.5)),
    "inverse_gamma": (
        lambda k: rr.inverse_gamma(k, 5.0, 2.0, size=(N,)),
        stats.invgamma(5.0, scale=2.0),
    ),
    "beta": (lambda k: rr.beta(k, 2.0, 5.0, size=(N,)), stats.beta(2.0, 5.0)),
    "uniform": (lambda k: rr.uniform(k, -1.0, 3.0, size=(N,)), stats.uniform(-1.0, 4.0)),
    "student_t": (lambda k: rr.student_t(k, 4.0, 1.0, 2.0, size=(N,)), stats.t(4.0, 1.0, 2.0)),
    "lognormal": (
        lambda k: rr.lognormal(k, 0.5, 0.75, size=(N,)),
        stats.lognorm(0.75, scale=np.exp(0.5)),
    ),
    "laplace": (lambda k: rr.laplace(k, 1.0, 2.0, size=(N,)), stats.laplace(1.0, 2.0)),
    "logistic": (lambda k: rr.logistic(k, 1.0, 2.0, size=(N,)), stats.logistic(1.0, 2.0)),
    "gumbel": (lambda k: rr.gumbel(k, 1.0, 2.0, size=(N,)), stats.gumbel_r(1.0, 2.0)),
    "weibull": (
        lambda k: rr.weibull(k, 1.5, 2.0, size=(N,)),
        stats.weibull_min(1.5, scale=2.0),
    ),
    # b = 5: a finite 4th moment, for the variance's standard error
    "pareto": (lambda k: rr.pareto(k, 5.0, 2.0, size=(N,)), stats.pareto(5.0, scale=2.0)),
    "chisquare": (lambda k: rr.chisquare(k, 3.0, size=(N,)), stats.chi2(3.0)),
    "skew_normal": (
        lambda k: rr.skew_normal(k, -4.0, 1.0, 2.0, size=(N,)),
        stats.skewnorm(-4.0, 1.0, 2.0),
    ),
    "half_student_t": (
        lambda k: rr.half_student_t(k, 6.0, 2.0, size=(N,)),
        HALF_STUDENT_T(6.0, scale=2.0),
    ),
    # float32: by dtype=, and by float32 parameters (Python numbers stay weak)
    "normal_f32": (
        lambda k: rr.normal(k, -0.5, 3.0, size=(N,), dtype="float32"),
        stats.norm(-0.5, 3.0),
    ),
    "uniform_f32": (
        lambda k: rr.uniform(k, F32(0.5), F32(2.0), size=(N,)),
        stats.uniform(0.5, 1.5),
    ),
    # lower = 14: log Phi(-14) = -101 is below log(tiny) of float32 (the quantile's Newton steps)
    "truncated_normal_f32": (
        lambda k: rr.truncated_normal(k, F32(0.0), F32(1.0), F32(14.0), size=(N,)),
        stats.truncnorm(14.0, np.inf),
    ),
}
# name -> (sampler of (N, m) draws, {label: SciPy reference of column j}): m parameter sets
# in one draw, so one JAX compile (each of these samplers costs a second or more)
BATCHED = {
    "truncated_normal": (
        lambda k: rr.truncated_normal(
            k, 1.0, 2.0, np.array([0.0, 81.0, -np.inf]), np.array([4.0, np.inf, 0.0]), size=(N, 3)
        ),
        {
            "interval": stats.truncnorm(-0.5, 1.5, 1.0, 2.0),
            # lower = loc + 40 scale: Phi(-40) is below the smallest float64
            "far_tail": stats.truncnorm(40.0, np.inf, 1.0, 2.0),
            "below": stats.truncnorm(-np.inf, -0.5, 1.0, 2.0),
        },
    ),
    "wald": (
        lambda k: rr.wald(k, np.array([2.0, 50.0]), np.array([3.0, 0.5]), size=(N, 2)),
        {
            "": stats.invgauss(2.0 / 3.0, scale=3.0),
            # mean / scale = 100: the textbook root mean + ... (y - r) cancels here
            "skewed": stats.invgauss(100.0, scale=0.5),
        },
    ),
}
COLUMNS = [(name, j, label) for name, (_, refs) in BATCHED.items() for j, label in enumerate(refs)]
# name -> (sampler, mu, kappa) of von Mises draws (columns j of mu and kappa), tested by
# circular moments (SciPy's linear moments of vonmises integrate numerically, seconds each)
VM_MU, VM_KAPPA = np.array([2.5, -1.0, 0.5]), np.array([2.0, 0.05, 0.0])
CIRCULAR = {
    "von_mises": (lambda k: rr.von_mises(k, VM_MU, VM_KAPPA, size=(N, 3)), VM_MU, VM_KAPPA),
    "von_mises_f32": (
        lambda k: rr.von_mises(k, F32(-2.0), F32(8.0), size=(N,)),
        np.array([-2.0]),
        np.array([8.0]),
    ),
}
CIRCULAR_COLUMNS = [(name, j) for name, (_, mu, _) in CIRCULAR.items() for j in range(len(mu))]
OL_ETA, OL_CUTPOINTS = 0.5, np.array([-1.0, 0.2, 2.0])
MN_N, MN_P = 10, np.array([1.0, 2.0, 3.0, 4.0])  # unnormalised: normalised by its sum
LKJ_N, LKJ_ETA = 4, np.array([2.0, 0.7])  # one draw of both (a JAX beta sampler costs ~1 s)


def _zero_inflated(psi: float, count) -> stats.rv_discrete:
    """The law of ``count`` (a SciPy distribution on 0, 1, ...) with probability psi, else
    0, as a table over 0..199 (the tails dropped are below 1e-40 here)."""
    ks = np.arange(200)
    pmf = psi * count.pmf(ks) + (1 - psi) * (ks == 0)
    return stats.rv_discrete(values=(ks, pmf / pmf.sum()))


def _ordered_logistic(eta: float, cutpoints: np.ndarray) -> stats.rv_discrete:
    """P(k) = sigmoid(eta - c[k-1]) - sigmoid(eta - c[k]), c[-1] = -inf, c[K] = +inf."""
    edges = special.expit(eta - np.concatenate([[-np.inf], cutpoints, [np.inf]]))
    return stats.rv_discrete(values=(np.arange(len(cutpoints) + 1), -np.diff(edges)))


DISCRETE = {
    "bernoulli": (lambda k: rr.bernoulli(k, 0.3, size=(N,)), stats.bernoulli(0.3)),
    "bernoulli_logit": (
        lambda k: rr.bernoulli(k, logit=-0.5, size=(N,)),
        stats.bernoulli(special.expit(-0.5)),
    ),
    "poisson": (lambda k: rr.poisson(k, 3.5, size=(N,)), stats.poisson(3.5)),
    "binomial": (lambda k: rr.binomial(k, 12, 0.3, size=(N,)), stats.binom(12, 0.3)),
    "categorical": (
        lambda k: rr.categorical(k, CAT_P, size=(N,)),
        stats.rv_discrete(values=(np.arange(3), CAT_P)),
    ),
    # unnormalised p: normalised by its sum
    "categorical_unnormalised": (
        lambda k: rr.categorical(k, 10.0 * CAT_P, size=(N,)),
        stats.rv_discrete(values=(np.arange(3), CAT_P)),
    ),
    "negative_binomial": (
        lambda k: rr.negative_binomial(k, 3.5, 0.4, size=(N,)),
        stats.nbinom(3.5, 0.4),
    ),
    "geometric": (lambda k: rr.geometric(k, 0.3, size=(N,)), stats.geom(0.3)),
    "beta_binomial": (
        lambda k: rr.beta_binomial(k, 10, 2.0, 3.0, size=(N,)),
        stats.betabinom(10, 2.0, 3.0),
    ),
    "discrete_uniform": (
        lambda k: rr.discrete_uniform(k, -2, 3, size=(N,)),
        stats.randint(-2, 4),
    ),
    "zero_inflated_poisson": (
        lambda k: rr.zero_inflated_poisson(k, 0.7, 3.0, size=(N,)),
        _zero_inflated(0.7, stats.poisson(3.0)),
    ),
    "zero_inflated_negative_binomial": (
        lambda k: rr.zero_inflated_negative_binomial(k, 0.6, 2.0, 0.4, size=(N,)),
        _zero_inflated(0.6, stats.nbinom(2.0, 0.4)),
    ),
    "ordered_logistic": (
        lambda k: rr.ordered_logistic(k, OL_ETA, OL_CUTPOINTS, size=(N,)),
        _ordered_logistic(OL_ETA, OL_CUTPOINTS),
    ),
}
MULTIVARIATE = {
    "multivariate_normal": lambda k: rr.multivariate_normal(k, MVN_MEAN, MVN_COV, size=(N,)),
    "dirichlet": lambda k: rr.dirichlet(k, DIR_ALPHA, size=(N,)),
    # the same distribution as "normal", from a later key: must be independent of it
    "normal_again": lambda k: rr.normal(k, 1.5, 2.0, size=(N,)),
}
FLOAT32 = ["normal_f32", "uniform_f32", "truncated_normal_f32", "von_mises_f32"]
# multivariate draws with exact entries (counts; a Cholesky factor's first row and zeros)
STRUCTURED = {
    "multinomial": lambda k: rr.multinomial(k, MN_N, MN_P, size=(N,)),
    "lkj_cholesky": lambda k: rr.lkj_cholesky(k, LKJ_N, LKJ_ETA, size=(N, 2)),
}
# laws of a single value, at the edge of the parameters: every key gives that value (N
# draws: JAX compiles a sampler once per shape in a graph, ~1 s for a gamma sampler)
DEGENERATE = {
    "negative_binomial_p1": (lambda k: rr.negative_binomial(k, 2.5, 1.0, size=(N,)), 0),
    "geometric_p1": (lambda k: rr.geometric(k, 1.0, size=(N,)), 1),
    "zero_inflated_poisson_psi0": (lambda k: rr.zero_inflated_poisson(k, 0.0, 5.0, size=(N,)), 0),
}


def _build():
    """One graph: every sampler above, each fed the previous one's next key."""
    key = rr.key("key")
    samplers = {name: s for name, (s, _) in {**CONTINUOUS, **DISCRETE}.items()}
    samplers |= {name: s for name, (s, _, _) in CIRCULAR.items()}
    samplers |= {name: s for name, (s, _) in BATCHED.items()}
    k, draws = key, {}
    degenerate = {name: s for name, (s, _) in DEGENERATE.items()}
    for name, sample in {**samplers, **MULTIVARIATE, **STRUCTURED, **degenerate}.items():
        k, draws[name] = sample(k)
    return key, k, draws


KEY, LAST_KEY, DRAWS = _build()


@functools.cache
def sampler(backend: str):
    """The all-distributions sampler, compiled once per backend: key -> (key, *draws)."""
    return rk.function([KEY], [LAST_KEY, *DRAWS.values()], backend=backend)


@functools.cache
def draws(backend: str, seed: int = SEED) -> dict[str, np.ndarray]:
    """Every distribution's draws from ``rr.seed(seed)``, plus the returned key."""
    out = [np.asarray(o) for o in sampler(backend)(rr.seed(seed))]
    return {"next_key": out[0], **dict(zip(DRAWS, out[1:], strict=True))}


def _moments_ok(x: np.ndarray, ref) -> None:
    """The sample mean and variance lie within SE standard errors of ``ref``'s."""
    mean, var, _, kurt = (float(m) for m in ref.stats(moments="mvsk"))
    x = x.astype(np.float64)
    assert abs(x.mean() - mean) < SE * np.sqrt(var / len(x)), (x.mean(), mean)
    if np.isfinite(kurt):  # the sample variance's standard error needs a 4th moment
        se_var = var * np.sqrt(2.0 / (len(x) - 1) + kurt / len(x))
        assert abs(x.var(ddof=1) - var) < SE * se_var, (x.var(ddof=1), var)


def _chi2_pvalue(x: np.ndarray, ref) -> float:
    """Chi-square goodness of fit over the bins lo, ..., m-1 and a tail bin [m, inf): m is
    the first value with fewer than 5 draws expected above it (the tail bin expects >= 5)."""
    lo = int(ref.support()[0])
    m = lo + 1
    while len(x) * ref.sf(m) >= 5:
        m += 1
    ks = np.arange(lo, m)
    observed = np.append([np.sum(x == k) for k in ks], np.sum(x >= m))
    expected = len(x) * np.append(ref.pmf(ks), ref.sf(m - 1))
    assert observed.sum() == len(x), "draws outside the support"
    return stats.chisquare(observed, expected * len(x) / expected.sum()).pvalue


# --- distributions ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", CONTINUOUS)
def test_continuous_draws_follow_the_distribution(backend, name):
    x, ref = draws(backend)[name], CONTINUOUS[name][1]
    assert x.shape == (N,) and x.dtype == DRAWS[name].dtype
    _follows(x, ref)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "j", "label"), COLUMNS, ids=[f"{n}-{lb}" for n, _, lb in COLUMNS])
def test_batched_draws_follow_the_distribution(backend, name, j, label):
    x, ref = draws(backend)[name], BATCHED[name][1][label]
    assert x.shape == (N, len(BATCHED[name][1])) and x.dtype == DRAWS[name].dtype
    _follows(x[:, j], ref)


def _follows(x: np.ndarray, ref) -> None:
    """Finite draws in ``ref``'s support, KS against its CDF, and its moments."""
    assert np.all(np.isfinite(x))
    lo, hi = ref.support()
    assert np.all((x >= lo) & (x <= hi))
    assert stats.kstest(x, ref.cdf).pvalue > P_MIN
    if np.isfinite(ref.mean()):
        _moments_ok(x, ref)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("name", "j"), CIRCULAR_COLUMNS)
def test_von_mises_draws_follow_the_distribution(backend, name, j):
    """In [mu - pi, mu + pi] (SciPy's ``vonmises(kappa, loc=mu)``), KS against its CDF
    (uniform for kappa = 0), and the circular moments E cos(x - mu) = I1 / I0 (kappa) and
    E sin(x - mu) = 0, with Var cos = (1 + I2 / I0) / 2 - (I1 / I0)^2 and
    Var sin = (1 - I2 / I0) / 2."""
    x, mu, kappa = draws(backend)[name], CIRCULAR[name][1][j], CIRCULAR[name][2][j]
    assert x.shape[0] == N and x.dtype == DRAWS[name].dtype
    x = x.reshape(N, -1)[:, j].astype(np.float64)
    assert np.all(np.abs(x - mu) <= np.pi + 1e-6)
    ref = stats.vonmises(kappa, loc=mu) if kappa > 0 else stats.uniform(mu - np.pi, 2 * np.pi)
    assert stats.kstest(x, ref.cdf).pvalue > P_MIN
    r1 = special.i1e(kappa) / special.i0e(kappa)
    r2 = special.ive(2, kappa) / special.i0e(kappa)
    cos, sin = np.cos(x - mu), np.sin(x - mu)
    assert abs(cos.mean() - r1) < SE * np.sqrt((0.5 * (1 + r2) - r1**2) / N), (cos.mean(), r1)
    assert abs(sin.mean()) < SE * np.sqrt(0.5 * (1 - r2) / N), sin.mean()


@pytest.mark.parametrize("backend", BACKENDS)
def test_truncated_normal_with_invalid_parameters_draws_nan(backend):
    """lower >= upper or scale <= 0: NaN on both backends (JAX cannot raise), and infinite
    bounds on either side are valid."""
    key, scale, lower, upper = rr.key(), rt.vector("scale"), rt.vector("lower"), rt.vector("upper")
    _, x = rr.truncated_normal(key, 0.0, scale, lower, upper)
    f = rk.function([key, scale, lower, upper], x, backend=backend)
    columns = np.array([[1, 0, -1, 1, 1], [1, 1, 0, -np.inf, 2], [0, 1, 1, 3, np.inf]])
    got = np.asarray(f(rr.seed(0), *columns))
    assert np.all(np.isnan(got[:3])) and got[3] <= 3 and got[4] >= 2, got


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", FLOAT32)
def test_float32_draws_stay_float32(backend, name):
    assert DRAWS[name].dtype == "float32"
    assert draws(backend)[name].dtype == np.float32


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", DISCRETE)
def test_discrete_draws_follow_the_distribution(backend, name):
    x, ref = draws(backend)[name], DISCRETE[name][1]
    assert x.shape == (N,) and x.dtype == np.int64
    lo, hi = ref.support()
    assert np.all((x >= lo) & (x <= hi))
    assert _chi2_pvalue(x, ref) > P_MIN
    _moments_ok(x, ref)


@pytest.mark.parametrize("backend", BACKENDS)
def test_multivariate_normal_mean_and_covariance(backend):
    x = draws(backend)["multivariate_normal"]
    assert x.shape == (N, 3)
    se_mean = np.sqrt(np.diag(MVN_COV) / N)
    np.testing.assert_array_less(np.abs(x.mean(axis=0) - MVN_MEAN), SE * se_mean)
    # Var of a Gaussian sample covariance entry: (S_ii S_jj + S_ij^2) / N
    d = np.diag(MVN_COV)
    se_cov = np.sqrt((np.outer(d, d) + MVN_COV**2) / N)
    np.testing.assert_array_less(np.abs(np.cov(x, rowvar=False) - MVN_COV), SE * se_cov)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dirichlet_means_and_beta_marginals(backend):
    x = draws(backend)["dirichlet"]
    assert x.shape == (N, 3) and np.all(x >= 0)
    np.testing.assert_allclose(x.sum(axis=-1), 1.0, rtol=1e-12)
    total = DIR_ALPHA.sum()
    for i, a in enumerate(DIR_ALPHA):
        marginal = stats.beta(a, total - a)
        assert stats.kstest(x[:, i], marginal.cdf).pvalue > P_MIN, i
        _moments_ok(x[:, i], marginal)


@pytest.mark.parametrize("backend", BACKENDS)
def test_multinomial_counts_sum_to_n_with_binomial_marginals(backend):
    x = draws(backend)["multinomial"]
    assert x.shape == (N, 4) and x.dtype == np.int64 and np.all(x >= 0)
    np.testing.assert_array_equal(x.sum(axis=-1), MN_N)
    p = MN_P / MN_P.sum()
    for k in range(len(p)):
        marginal = stats.binom(MN_N, p[k])
        assert _chi2_pvalue(x[:, k], marginal) > P_MIN, k
        _moments_ok(x[:, k], marginal)
    # Cov(x_i, x_j) = n (p_i [i = j] - p_i p_j); standard errors from the products
    centred = x - x.mean(axis=0)
    products = centred[:, :, None] * centred[:, None, :]
    se = products.std(axis=0) / np.sqrt(N)
    expected = MN_N * (np.diag(p) - np.outer(p, p))
    np.testing.assert_array_less(np.abs(np.cov(x, rowvar=False) - expected), SE * se)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("which", range(len(LKJ_ETA)))
def test_lkj_cholesky_factors_have_beta_correlations(backend, which):
    """L is lower triangular with a positive diagonal and L L^T a correlation matrix whose
    entries r follow (r + 1) / 2 ~ Beta(b, b), b = eta - 1 + n / 2."""
    factor, eta = draws(backend)["lkj_cholesky"][:, which], LKJ_ETA[which]
    assert factor.shape == (N, LKJ_N, LKJ_N) and factor.dtype == np.float64
    assert np.all(np.triu(factor, 1) == 0)
    assert np.all(np.diagonal(factor, axis1=-2, axis2=-1) > 0)
    corr = factor @ np.swapaxes(factor, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-12)
    b = eta - 1 + LKJ_N / 2
    marginal = stats.beta(b, b)
    for i, j in zip(*np.triu_indices(LKJ_N, 1), strict=True):
        r = (corr[:, i, j] + 1) / 2
        assert stats.kstest(r, marginal.cdf).pvalue > P_MIN, (i, j)
        _moments_ok(r, marginal)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", DEGENERATE)
def test_degenerate_edges_of_the_parameters(backend, name):
    x = draws(backend)[name]
    assert x.dtype == np.int64
    np.testing.assert_array_equal(x, np.full(N, DEGENERATE[name][1]))


def test_discrete_and_multivariate_shapes():
    key = rr.key()
    _, counts = rr.multinomial(key, np.array([3, 5]), np.ones((4, 1, 3)))
    _, category = rr.ordered_logistic(key, np.zeros((2, 1)), np.sort(np.ones((3, 4))))
    _, factors = rr.lkj_cholesky(key, 3, np.ones(2), size=(4, 2))
    _, one = rr.lkj_cholesky(key, 1)
    assert counts.type.shape == (4, 2, 3) and category.type.shape == (2, 3)
    assert factors.type.shape == (4, 2, 3, 3) and one.type.shape == (1, 1)
    assert rr.multinomial(key, 5, np.ones(3), size=(2, 4))[1].type.shape == (2, 4, 3)
    f = rk.function([key], [counts, category, factors, one], backend="numpy")
    counts_, category_, factors_, one_ = f(rr.seed(0))
    np.testing.assert_array_equal(counts_.sum(axis=-1), np.broadcast_to([3, 5], (4, 2)))
    assert category_.shape == (2, 3) and np.all((category_ >= 0) & (category_ <= 4))
    assert factors_.shape == (4, 2, 3, 3) and one_.tolist() == [[1.0]]


@pytest.mark.parametrize("bad", [0, -2, 2.0, True, None])
def test_lkj_cholesky_needs_an_int_n(bad):
    with pytest.raises(ShapeError, match=r"lkj_cholesky: n must be an int >= 1 .*, got"):
        rr.lkj_cholesky(rr.key(), bad, 1.0)


def test_core_axes_of_the_parameters_are_required():
    with pytest.raises(ShapeError, match=r"multinomial: parameter 'p' needs at least 1 axes"):
        rr.multinomial(rr.key(), 5, 0.5)
    with pytest.raises(ShapeError, match=r"ordered_logistic: parameter 'cutpoints' needs"):
        rr.ordered_logistic(rr.key(), 0.0, 1.0)


# --- keys -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_key_gives_the_same_draws(backend):
    again = [np.asarray(o) for o in sampler(backend)(rr.seed(SEED))]
    first = draws(backend)
    for name, value in zip(first, again, strict=True):
        np.testing.assert_array_equal(value, first[name], err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_next_key_gives_fresh_draws(backend):
    first = draws(backend)
    key = first["next_key"]
    assert key.dtype == np.uint32 and key.shape == (2,)
    assert not np.array_equal(key, rr.seed(SEED))
    out = [np.asarray(o) for o in sampler(backend)(key)]
    assert not np.array_equal(out[0], key)
    for name, value in zip(DRAWS, out[1:], strict=True):
        if name in FLOAT32:  # float32 draws in a narrow tail may repeat a value by chance
            assert np.mean(value == first[name]) < 0.01, name
        elif name in CONTINUOUS or name in BATCHED or name in CIRCULAR or name in MULTIVARIATE:
            assert not np.any(value == first[name]), name
        elif name in DEGENERATE:
            np.testing.assert_array_equal(value, first[name], err_msg=name)
        else:
            assert not np.array_equal(value, first[name]), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_chained_keys_give_independent_draws(backend):
    x, y = draws(backend)["normal"], draws(backend)["normal_again"]
    assert abs(np.corrcoef(x, y)[0, 1]) < SE / np.sqrt(N)
    assert stats.ks_2samp(x, y).pvalue > P_MIN


@pytest.mark.parametrize("n", [0, 1, 42, 2**31 + 5, 2**32 - 1, 2**32, 2**40 + 7, 2**63 - 1])
def test_seed_is_jax_prngkey(n):
    key = rr.seed(n)
    assert key.dtype == np.uint32 and key.shape == (2,)
    with jax.enable_x64(True):
        np.testing.assert_array_equal(key, np.asarray(jax.random.PRNGKey(n)))


@pytest.mark.parametrize("bad", [-1, True, np.True_, 1.0, 2**63, "3", None])
def test_seed_rejects_non_integers_and_out_of_range(bad):
    with pytest.raises(GraphTypeError, match=r"seed: expected an int in \[0, 2\*\*63\), got"):
        rr.seed(bad)


def test_key_input():
    key = rr.key("k")
    assert key.type is rr.KEY_TYPE and key.type == TensorType("uint32", (2,))
    next_key, x = rr.normal(key, 0.0, 1.0)
    assert next_key.type is rr.KEY_TYPE
    assert rr.is_draw(x) and not rr.is_draw(next_key) and not rr.is_draw(key)


# --- shapes -----------------------------------------------------------------------------


def test_static_size_and_default_shape():
    key = rr.key()
    assert rr.normal(key, 0.0, 1.0, size=(2, 3))[1].type.shape == (2, 3)
    assert rr.normal(key, 0.0, 1.0)[1].type.shape == ()
    assert rr.categorical(key, np.ones((4, 3)))[1].type.shape == (4,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_size_from_a_symbolic_shape(backend):
    key, x = rr.key(), rt.vector("x")
    _, y = rr.normal(key, 0.0, 1.0, size=x.shape)
    assert y.type.shape == (None,)
    f = rk.function([key, x], y, backend=backend)
    assert np.shape(f(rr.seed(0), np.zeros(7))) == (7,)


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_broadcast(backend):
    key = rr.key()
    loc, scale = rt.tensor("loc", shape=(3, 1)), rt.vector("scale", shape=(4,))
    _, y = rr.normal(key, loc, scale)
    assert y.type.shape == (3, 4)
    f = rk.function([key, loc, scale], y, backend=backend)
    locs = np.array([[1.0], [2.0], [3.0]])
    # scale 0: every draw is its loc, so the values show how the parameters broadcast
    np.testing.assert_array_equal(f(rr.seed(0), locs, np.zeros(4)), np.tile(locs, (1, 4)))
    assert np.all(np.asarray(f(rr.seed(0), locs, np.ones(4))) != np.tile(locs, (1, 4)))


@pytest.mark.parametrize(
    ("loc_shape", "size", "message"),
    [
        ((3,), (4,), r"normal: size \(4,\) does not fit the parameters' batch shape \(3,\)"),
        ((3, 1), (2, 5), r"normal: size \(2, 5\) does not fit .* batch shape \(3, 1\)"),
        ((None, None), (3,), r"normal: size \(3,\) does not fit .* batch shape \(\?, \?\)"),
    ],
)
def test_size_the_parameters_do_not_broadcast_to(loc_shape, size, message):
    loc = rt.tensor("loc", shape=loc_shape)
    with pytest.raises(BroadcastError, match=message):
        rr.normal(rr.key(), loc, 1.0, size=size)


def test_parameters_that_do_not_broadcast():
    a, b = rt.vector("a", shape=(3,)), rt.vector("b", shape=(4,))
    with pytest.raises(BroadcastError, match=r"beta: parameters do not broadcast"):
        rr.beta(rr.key(), a, b)


def test_multivariate_core_axes():
    key = rr.key()
    assert rr.multivariate_normal(key, MVN_MEAN, MVN_COV, size=(5,))[1].type.shape == (5, 3)
    assert rr.multivariate_normal(key, np.zeros((2, 3)), MVN_COV)[1].type.shape == (2, 3)
    _, y = rr.multivariate_normal(key, np.zeros((2, 3)), MVN_COV, size=(4, 2))
    _, z = rr.dirichlet(key, np.ones((2, 3)))
    assert y.type.shape == (4, 2, 3) and z.type.shape == (2, 3)
    f = rk.function([key], [y, z], backend="numpy")
    assert [np.shape(v) for v in f(rr.seed(0))] == [(4, 2, 3), (2, 3)]
    with pytest.raises(ShapeError, match=r"multivariate_normal: mean .* and cov .* disagree"):
        rr.multivariate_normal(key, np.zeros(2), MVN_COV)


def test_size_depending_on_input_values():
    key, x = rr.key(), rt.vector("x")
    _, y = rr.normal(key, 0.0, 1.0, size=(rt.cast(rt.sum(x), "int64"),))
    f = rk.function([key, x], y, backend="numpy")
    assert f(rr.seed(0), np.array([2.0, 3.0])).shape == (5,)
    g = rk.function([key, x], y, backend="jax")
    with pytest.raises(ShapeError, match=r"normal: the size of a draw must be known when JAX"):
        g(rr.seed(0), np.array([2.0, 3.0]))


# --- errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_key",
    [rt.vector("k"), rt.tensor("k", shape=(3,), dtype="uint32"), np.zeros(2)],
    ids=["float_vector", "uint32_length_3", "float_array"],
)
def test_key_of_the_wrong_type(bad_key):
    with pytest.raises(DTypeError, match=r"normal: the key must be uint32\[2\] .* got"):
        rr.normal(bad_key, 0.0, 1.0)


@pytest.mark.parametrize("kwargs", [{"p": 0.3, "logit": 0.1}, {}], ids=["both", "neither"])
def test_bernoulli_needs_exactly_one_of_p_and_logit(kwargs):
    with pytest.raises(GraphTypeError, match="bernoulli: give exactly one of p and logit"):
        rr.bernoulli(rr.key(), **kwargs)


def test_dtype_of_the_wrong_kind():
    with pytest.raises(DTypeError, match="normal: dtype must be a float dtype, got int64"):
        rr.normal(rr.key(), 0.0, 1.0, dtype="int64")
    with pytest.raises(DTypeError, match="poisson: dtype must be an integer dtype, got float64"):
        rr.poisson(rr.key(), 1.0, dtype="float64")


def test_draw_dtype_follows_the_parameters():
    key = rr.key()
    loc = rt.scalar("loc", dtype="float32")
    assert rr.normal(key, loc, 2.0)[1].dtype == "float32"
    assert rr.normal(key, 0.0, 1.0)[1].dtype == "float64"
    assert rr.poisson(key, loc)[1].dtype == "int64"
    assert rr.poisson(key, loc, dtype="int32")[1].dtype == "int32"


def test_no_gradient_through_sampling():
    loc = rt.scalar("loc")
    _, x = rr.normal(rr.key(), loc, 1.0)
    with pytest.raises(
        GraphTypeError, match=r"normal: a random draw has no gradient .* through sampling.*logprob"
    ):
        rk.grad(x, loc)


# --- rewriting --------------------------------------------------------------------------


def test_default_rules_never_fold_a_draw():
    _, x = rr.normal(rr.seed(0), 0.0, 1.0, size=(3,))
    f = rk.function([], x, backend="numpy", rules="default")
    g = rk.function([], x, backend="jax", rules="default")
    for h in (f, g):
        assert any(isinstance(node.op, rv.NormalRV) for node in rk.toposort(h.graph))
    from_numpy, from_jax = np.asarray(f()), np.asarray(g())
    assert not np.any(from_numpy == from_jax)
    with jax.enable_x64(True):  # the JAX backend drew with jax.random, at run time
        expected = jax.random.normal(jax.random.split(jax.random.PRNGKey(0))[1], (3,))
    np.testing.assert_allclose(from_jax, np.asarray(expected), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_identical_calls_are_one_node(backend):
    key = rr.key()
    k1, x1 = rr.normal(key, 2.0, 1.0, size=(4,))
    k2, x2 = rr.normal(key, 2.0, 1.0, size=(4,))
    assert x1 is x2 and k1 is k2
    _, x3 = rr.normal(key, 2.0, 1.0, size=(5,))
    assert x3 is not x1
    a, b = rk.function([key], [x1, x2], backend=backend)(rr.seed(3))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_time_size_the_parameters_do_not_fit_is_an_error_naming_the_distribution(backend):
    key, x = rr.key(), rt.vector("x")
    _, draw = rr.normal(key, np.zeros(3), 1.0, size=x.shape)
    f = rk.function([key, x], draw, backend=backend)
    assert f(rr.seed(0), np.ones(3)).shape == (3,)
    with pytest.raises(ShapeError, match=r"normal: the parameters' batch shapes \(loc \(3,\)"):
        f(rr.seed(0), np.ones(4))
