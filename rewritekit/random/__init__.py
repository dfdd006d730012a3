"""Random variables with explicit keys: ``import rewritekit.random as rr``.

Every sampler takes a key and returns ``(next_key, draw)``, as in JAX: no generator state
is hidden in the graph, so a compiled sampler called twice with the same key gives the
same draw, and the returned key gives fresh draws. Keys are ``uint32[2]`` arrays (JAX's raw
keys): ``rr.key()`` is a symbolic key input, ``rr.seed(n)`` a concrete one.

Example:
    >>> import rewritekit as rk
    >>> import rewritekit.random as rr
    >>> key = rr.key("key")
    >>> k, mu = rr.normal(key, 0.0, 5.0)
    >>> k, x = rr.normal(k, mu, 1.0, size=(3,))
    >>> f = rk.function([key], [k, x], backend="numpy")
    >>> next_key, draws = f(rr.seed(0))
    >>> draws.shape
    (3,)

Parameters broadcast as in NumPy. ``size`` is the batch shape of the draw (static, or
taken from symbolic shapes such as ``x.shape``); ``None`` draws the parameters' broadcast
shape. Multivariate distributions add their core axes after it (``multivariate_normal``
with ``size=(5,)`` and K = 3 draws shape ``(5, 3)``). Continuous draws take the float dtype
of their parameters (``dtype=`` overrides it); discrete draws are int64.

The NumPy backend draws with ``numpy.random.Generator`` (PCG64) seeded from the key, the
JAX backend with ``jax.random``: the same distribution, not the same numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rewritekit.errors import GraphTypeError
from rewritekit.ir import Var, as_var, constant
from rewritekit.random.composite import custom
from rewritekit.tensor import random as _rv
from rewritekit.tensor.arithmetic import abs as _abs
from rewritekit.tensor.random import KEY_TYPE, RandomVariable
from rewritekit.tensor.shapes import as_shape_vector, static_shape_of
from rewritekit.tensor.transcendental import exp as _exp

__all__ = [
    "KEY_TYPE",
    "RandomVariable",
    "bernoulli",
    "beta",
    "beta_binomial",
    "binomial",
    "categorical",
    "cauchy",
    "chisquare",
    "custom",
    "dirichlet",
    "discrete_uniform",
    "exponential",
    "fold_in",
    "gamma",
    "geometric",
    "gumbel",
    "half_student_t",
    "halfcauchy",
    "halfnormal",
    "inverse_gamma",
    "is_draw",
    "key",
    "laplace",
    "lkj_cholesky",
    "logistic",
    "lognormal",
    "multinomial",
    "multivariate_normal",
    "negative_binomial",
    "normal",
    "ordered_logistic",
    "pareto",
    "poisson",
    "seed",
    "skew_normal",
    "split",
    "student_t",
    "truncated_normal",
    "uniform",
    "von_mises",
    "wald",
    "weibull",
    "zero_inflated_negative_binomial",
    "zero_inflated_poisson",
]

Pair = tuple[Var, Var]


def key(name: str = "key") -> Var:
    """A symbolic key: a ``uint32[2]`` input Var.

    Example:
        >>> rr.key("k").type
        TensorType(dtype='uint32', shape=(2,))
    """
    return Var(KEY_TYPE, name)


def seed(n: int) -> np.ndarray:
    """A concrete key from an integer seed in [0, 2**63), the same array as
    ``jax.random.PRNGKey(n)``.

    Example:
        >>> rr.seed(42)
        array([ 0, 42], dtype=uint32)
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n < 2**63:
        raise GraphTypeError(f"seed: expected an int in [0, 2**63), got {n!r}")
    n = int(n)
    return np.array([n >> 32, n & 0xFFFFFFFF], dtype=np.uint32)


def split(rng_key: Any, n: int = 2) -> Var:
    """``n`` new keys from ``rng_key``, ``uint32[n, 2]``: ``jax.random.split``, with JAX's
    numbers on both backends (``keys[0]``, ``keys[1]``, ... are keys).

    Example:
        >>> keys = rr.split(rr.key("k"), 3)
        >>> keys.type, keys[0].type
        (TensorType(dtype='uint32', shape=(3, 2)), TensorType(dtype='uint32', shape=(2,)))
    """
    rng_key = as_var(rng_key, context="split: key")
    return _rv.SplitKey(n)(rng_key)


def fold_in(rng_key: Any, data: Any) -> Var:
    """A new key from ``rng_key`` and an integer ``data`` (its low 32 bits):
    ``jax.random.fold_in``, with JAX's numbers on both backends (a key per chain, per
    step, per example: ``fold_in(key, i)``).

    Example:
        >>> rr.fold_in(rr.key("k"), 7).type
        TensorType(dtype='uint32', shape=(2,))
    """
    rng_key = as_var(rng_key, context="fold_in: key")
    value = as_var(data, dtype="int64" if isinstance(data, int) else None, context="fold_in: data")
    return _rv.FoldIn()(rng_key, value)


def is_draw(var: Any) -> bool:
    """True when ``var`` is the draw (second output) of a random variable."""
    owner = getattr(var, "owner", None)
    return owner is not None and isinstance(owner.op, RandomVariable) and var.index == 1


def _draw(
    cls: type[RandomVariable],
    rng_key: Any,
    params: tuple[Any, ...],
    size: Any,
    dtype: Any,
    props: tuple[Any, ...] = (),
) -> Pair:
    rng_key = as_var(rng_key, context=f"{cls.name}: key")  # its type: infer_types checks
    out_dtype = _rv.draw_dtype(cls, params, dtype)
    inputs = [
        _rv.param_input(cls, name, value, out_dtype)
        for name, value in zip(cls.params, params, strict=True)
    ]
    if size is None:
        op, vector = cls(None, out_dtype, *props), constant(np.zeros(0, dtype=np.int64))
    else:
        vector = as_shape_vector(size, cls.name)
        op = cls(static_shape_of(vector), out_dtype, *props)
    return op(rng_key, vector, *inputs)


def normal(
    key: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from Normal(loc, scale).

    Example:
        >>> k, x = rr.normal(rr.key(), 0.0, 1.0, size=(3,))
        >>> x.type
        TensorType(dtype='float64', shape=(3,))
    """
    return _draw(_rv.NormalRV, key, (loc, scale), size, dtype)


def _folded(key: Var, scale: Var) -> Pair:
    key, z = normal(key, 0.0, scale)
    return key, _abs(z)


_halfnormal = custom(_folded, name="halfnormal", _builtin=True)


def halfnormal(key: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from |Normal(0, scale)|: a composite (``rr.custom``) of ``abs`` of a normal,
    whose density ``rewritekit.logprob`` derives from that graph."""
    return _halfnormal(key, scale, size=size, dtype=dtype)


def cauchy(
    key: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from Cauchy(loc, scale)."""
    return _draw(_rv.CauchyRV, key, (loc, scale), size, dtype)


def halfcauchy(key: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from |Cauchy(0, scale)|."""
    return _draw(_rv.HalfCauchyRV, key, (scale,), size, dtype)


def exponential(key: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from the exponential distribution with mean ``scale`` (NumPy's convention;
    the rate is 1 / scale)."""
    return _draw(_rv.ExponentialRV, key, (scale,), size, dtype)


def gamma(key: Any, alpha: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from Gamma(alpha, scale) (NumPy's ``gamma(shape, scale)``; mean alpha*scale)."""
    return _draw(_rv.GammaRV, key, (alpha, scale), size, dtype)


def inverse_gamma(
    key: Any, alpha: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from the inverse gamma distribution (SciPy's ``invgamma(alpha, scale=scale)``)."""
    return _draw(_rv.InverseGammaRV, key, (alpha, scale), size, dtype)


def beta(key: Any, alpha: Any, beta: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from Beta(alpha, beta)."""
    return _draw(_rv.BetaRV, key, (alpha, beta), size, dtype)


def uniform(
    key: Any, low: Any = 0.0, high: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from Uniform[low, high)."""
    return _draw(_rv.UniformRV, key, (low, high), size, dtype)


def student_t(
    key: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from Student's t with ``df`` degrees of freedom, ``loc + scale * t``."""
    return _draw(_rv.StudentTRV, key, (df, loc, scale), size, dtype)


def lognormal(
    key: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from exp(Normal(loc, scale)): a composite (``rr.custom``) of ``exp`` of a
    normal, whose density ``rewritekit.logprob`` derives from that graph."""
    return _lognormal(key, loc, scale, size=size, dtype=dtype)


def _exp_normal(key: Var, loc: Var, scale: Var) -> Pair:
    key, z = normal(key, loc, scale)
    return key, _exp(z)


_lognormal = custom(_exp_normal, name="lognormal", _builtin=True)


def bernoulli(
    key: Any, p: Any = None, *, logit: Any = None, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws 1 with probability ``p`` (or sigmoid(``logit``)), else 0; give exactly one.

    Example:
        >>> k, y = rr.bernoulli(rr.key(), logit=rt.vector("eta"))
        >>> y.dtype
        'int64'
    """
    if (p is None) == (logit is None):
        raise GraphTypeError("bernoulli: give exactly one of p and logit")
    if logit is not None:
        return _draw(_rv.BernoulliLogitRV, key, (logit,), size, dtype)
    return _draw(_rv.BernoulliRV, key, (p,), size, dtype)


def poisson(key: Any, lam: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from Poisson(lam)."""
    return _draw(_rv.PoissonRV, key, (lam,), size, dtype)


def binomial(key: Any, n: Any, p: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws the number of successes in ``n`` trials of probability ``p``."""
    return _draw(_rv.BinomialRV, key, (n, p), size, dtype)


def categorical(key: Any, p: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws an index k in [0, K) with probability p[..., k] (``p``'s last axis, normalised
    by its sum); the draw has ``p``'s batch shape ``p.shape[:-1]`` (or ``size``)."""
    return _draw(_rv.CategoricalRV, key, (p,), size, dtype)


def multivariate_normal(
    key: Any, mean: Any, cov: Any, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws K-vectors from the multivariate normal with ``mean[..., K]`` and covariance
    ``cov[..., K, K]`` (positive definite); the draw's shape is ``size + (K,)``."""
    return _draw(_rv.MultivariateNormalRV, key, (mean, cov), size, dtype)


def dirichlet(key: Any, alpha: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws points of the K-simplex with concentrations ``alpha[..., K]``."""
    return _draw(_rv.DirichletRV, key, (alpha,), size, dtype)


# --- continuous distributions, issue #18 (SciPy's parameters) -----------------------------


def laplace(
    key: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from Laplace(loc, scale), density exp(-|x - loc| / scale) / (2 scale); real x.

    Example:
        >>> rr.laplace(rr.key(), 0.0, 2.0, size=(3,))[1].type.shape
        (3,)
    """
    return _draw(_rv.LaplaceRV, key, (loc, scale), size, dtype)


def logistic(
    key: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from Logistic(loc, scale) (SciPy's ``logistic(loc, scale)``); real x.

    Example:
        >>> rr.logistic(rr.key(), 1.0, 0.5)[1].type.shape
        ()
    """
    return _draw(_rv.LogisticRV, key, (loc, scale), size, dtype)


def gumbel(
    key: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from the Gumbel distribution of maxima (SciPy's ``gumbel_r(loc, scale)``,
    NumPy's ``gumbel``); real x.

    Example:
        >>> rr.gumbel(rr.key(), 0.0, 1.0, size=(2,))[1].dtype
        'float64'
    """
    return _draw(_rv.GumbelRV, key, (loc, scale), size, dtype)


def weibull(key: Any, c: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from the Weibull distribution with shape ``c`` (SciPy's ``weibull_min(c,
    scale=scale)``, NumPy's ``scale * weibull(c)``); x >= 0.

    Example:
        >>> rr.weibull(rr.key(), 1.5, 2.0, size=(4,))[1].type.shape
        (4,)
    """
    return _draw(_rv.WeibullRV, key, (c, scale), size, dtype)


def pareto(key: Any, b: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from the Pareto distribution with tail index ``b`` (SciPy's ``pareto(b,
    scale=scale)``, density b scale^b / x^(b+1)); x >= scale. NumPy's ``pareto(b)`` is
    the Lomax distribution, ``rr.pareto(key, b) - 1``.

    Example:
        >>> rr.pareto(rr.key(), 3.0, 2.0)[1].dtype
        'float64'
    """
    return _draw(_rv.ParetoRV, key, (b, scale), size, dtype)


def chisquare(key: Any, df: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from the chi-square distribution with ``df`` > 0 degrees of freedom; x >= 0.

    Example:
        >>> rr.chisquare(rr.key(), 3.0, size=(5,))[1].type.shape
        (5,)
    """
    return _draw(_rv.ChiSquareRV, key, (df,), size, dtype)


def truncated_normal(
    key: Any,
    loc: Any = 0.0,
    scale: Any = 1.0,
    lower: Any = -math.inf,
    upper: Any = math.inf,
    *,
    size: Any = None,
    dtype: Any = None,
) -> Pair:
    """Draws from Normal(loc, scale) truncated to ``lower <= x <= upper`` (bounds on the x
    scale, either may be infinite; SciPy's ``truncnorm((lower - loc) / scale,
    (upper - loc) / scale, loc, scale)``). By the inverse CDF in log space: exact in the
    far tails too (``lower = loc + 40 * scale`` draws just above it).

    Example:
        >>> rr.truncated_normal(rr.key(), 0.0, 1.0, 0.0, size=(3,))[1].type.shape
        (3,)
    """
    return _draw(_rv.TruncatedNormalRV, key, (loc, scale, lower, upper), size, dtype)


def von_mises(key: Any, mu: Any, kappa: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws angles from the von Mises distribution with mean direction ``mu`` and
    concentration ``kappa`` >= 0 (SciPy's ``vonmises(kappa, loc=mu)``): the draws lie in
    [mu - pi, mu + pi] (NumPy's ``vonmises(mu, kappa)`` wraps them into [-pi, pi]).

    Example:
        >>> rr.von_mises(rr.key(), 0.5, 4.0, size=(2,))[1].type.shape
        (2,)
    """
    return _draw(_rv.VonMisesRV, key, (mu, kappa), size, dtype)


def skew_normal(
    key: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws from the skew normal with shape ``a`` (SciPy's ``skewnorm(a, loc, scale)``,
    density 2 phi(z) Phi(a z) / scale, z = (x - loc) / scale); real x.

    Example:
        >>> rr.skew_normal(rr.key(), 4.0, size=(3,))[1].type.shape
        (3,)
    """
    return _draw(_rv.SkewNormalRV, key, (a, loc, scale), size, dtype)


def wald(key: Any, mean: Any, scale: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws from the Wald (inverse Gaussian) distribution with mean ``mean`` and shape
    lambda = ``scale`` (NumPy's ``wald(mean, scale)``, SciPy's ``invgauss(mean / scale,
    scale=scale)``); x > 0.

    Example:
        >>> rr.wald(rr.key(), 1.0, 3.0, size=(2,))[1].type.shape
        (2,)
    """
    return _draw(_rv.WaldRV, key, (mean, scale), size, dtype)


def half_student_t(
    key: Any, nu: Any, scale: Any = 1.0, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws |t| * scale for Student's t with ``nu`` degrees of freedom; x >= 0.

    Example:
        >>> rr.half_student_t(rr.key(), 3.0, 2.0)[1].dtype
        'float64'
    """
    return _draw(_rv.HalfStudentTRV, key, (nu, scale), size, dtype)


# --- discrete and multivariate distributions, issue #18 -----------------------------------


def negative_binomial(key: Any, n: Any, p: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws the number of failures before the ``n``-th success in trials of probability
    ``p`` (SciPy's ``nbinom(n, p)``; n > 0 may be real, 0 < p <= 1).

    Example:
        >>> k, y = rr.negative_binomial(rr.key(), 3.5, 0.4, size=(2,))
        >>> y.type
        TensorType(dtype='int64', shape=(2,))
    """
    return _draw(_rv.NegativeBinomialRV, key, (n, p), size, dtype)


def geometric(key: Any, p: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws the number of trials of probability ``p`` up to and including the first
    success, k = 1, 2, ... (SciPy's ``geom(p)``; 0 < p <= 1).

    Example:
        >>> rr.geometric(rr.key(), 0.25)[1].dtype
        'int64'
    """
    return _draw(_rv.GeometricRV, key, (p,), size, dtype)


def multinomial(key: Any, n: Any, p: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws the counts of K categories in ``n`` trials with probabilities ``p[..., K]``
    (normalised by their sum, as ``categorical``); the draw's shape is ``size + (K,)`` (or
    the batch shape of ``n`` and ``p`` plus ``(K,)``) and its counts sum to n.

    Example:
        >>> rr.multinomial(rr.key(), 10, np.array([0.2, 0.3, 0.5]), size=(4,))[1].type.shape
        (4, 3)
    """
    return _draw(_rv.MultinomialRV, key, (n, p), size, dtype)


def beta_binomial(key: Any, n: Any, a: Any, b: Any, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws Binomial(n, q) with q ~ Beta(a, b) (SciPy's ``betabinom(n, a, b)``).

    Example:
        >>> rr.beta_binomial(rr.key(), 10, 2.0, 3.0, size=(5,))[1].type.shape
        (5,)
    """
    return _draw(_rv.BetaBinomialRV, key, (n, a, b), size, dtype)


def discrete_uniform(
    key: Any, lower: Any, upper: Any, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws integers uniformly from ``lower, ..., upper``, both included (SciPy's
    ``randint(lower, upper + 1)``).

    Example:
        >>> rr.discrete_uniform(rr.key(), 1, 6, size=(3,))[1].type
        TensorType(dtype='int64', shape=(3,))
    """
    return _draw(_rv.DiscreteUniformRV, key, (lower, upper), size, dtype)


def zero_inflated_poisson(
    key: Any, psi: Any, rate: Any, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws Poisson(``rate``) with probability ``psi``, else 0 (PyMC's convention: ``psi``
    is the probability of the count component).

    Example:
        >>> rr.zero_inflated_poisson(rr.key(), 0.7, 3.0, size=(2,))[1].type.shape
        (2,)
    """
    return _draw(_rv.ZeroInflatedPoissonRV, key, (psi, rate), size, dtype)


def zero_inflated_negative_binomial(
    key: Any, psi: Any, n: Any, p: Any, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws NegativeBinomial(``n``, ``p``) (as ``negative_binomial``) with probability
    ``psi``, else 0 (PyMC's convention).

    Example:
        >>> rr.zero_inflated_negative_binomial(rr.key(), 0.7, 2.0, 0.4)[1].dtype
        'int64'
    """
    return _draw(_rv.ZeroInflatedNegativeBinomialRV, key, (psi, n, p), size, dtype)


def ordered_logistic(
    key: Any, eta: Any, cutpoints: Any, *, size: Any = None, dtype: Any = None
) -> Pair:
    """Draws a category k in {0, ..., K} with P(k) = sigmoid(eta - c[k-1]) - sigmoid(eta -
    c[k]) for the K increasing ``cutpoints`` c on the last axis (PyMC's
    ``OrderedLogistic``): the number of cutpoints below eta + Logistic(0, 1) noise. The draw
    has the batch shape of ``eta`` and ``cutpoints.shape[:-1]`` (or ``size``).

    Example:
        >>> rr.ordered_logistic(rr.key(), rt.vector("eta"), np.array([-1.0, 0.5]))[1].type
        TensorType(dtype='int64', shape=(None,))
    """
    return _draw(_rv.OrderedLogisticRV, key, (eta, cutpoints), size, dtype)


def lkj_cholesky(key: Any, n: int, eta: Any = 1.0, *, size: Any = None, dtype: Any = None) -> Pair:
    """Draws the lower Cholesky factor L of an ``n`` x ``n`` correlation matrix whose
    density is LKJ(``eta``), proportional to det(L L^T)^(eta - 1) (eta > 0; 1 is uniform
    over correlation matrices), by the onion method. ``n`` is a static int; the draw's
    shape is ``size + (n, n)``.

    Example:
        >>> rr.lkj_cholesky(rr.key(), 3, 2.0, size=(5,))[1].type.shape
        (5, 3, 3)
    """
    return _draw(_rv.LKJCholeskyRV, key, (eta,), size, dtype, props=(n,))
