"""NumPy implementations of ``rewritekit.tensor.random``: ``numpy.random.Generator`` draws.

A key ``[k0, k1]`` seeds a ``SeedSequence``, which spawns two children: one gives the next
key, the other seeds the PCG64 generator of this draw. So the same key always gives the
same draw and the next key, and the two never share a stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special

from rewritekit.backends.common.arrays import batch_shape
from rewritekit.backends.lowering import NodeImpl, lower
from rewritekit.backends.numpy import _implement as _implement_node
from rewritekit.backends.numpy import numpy_funcify
from rewritekit.ir import Apply, Var
from rewritekit.tensor import random as rv
from rewritekit.tensor.custom_random import CustomRV


def _split(key: np.ndarray) -> tuple[np.ndarray, np.random.Generator]:
    sequence = np.random.SeedSequence([int(key[0]), int(key[1])])
    next_sequence, draw_sequence = sequence.spawn(2)
    next_key = next_sequence.generate_state(2, dtype=np.uint32)
    return next_key, np.random.Generator(np.random.PCG64(draw_sequence))


def _categorical(g: np.random.Generator, shape: tuple[int, ...], p: np.ndarray) -> Any:
    cdf = np.cumsum(p, axis=-1)
    cdf = cdf / cdf[..., -1:]
    u = g.random(shape)[..., None]
    k = np.sum(cdf <= u, axis=-1)
    return np.minimum(k, p.shape[-1] - 1)


def _multivariate_normal(
    g: np.random.Generator, shape: tuple[int, ...], mean: Any, cov: Any
) -> Any:
    chol = np.linalg.cholesky(cov)
    z = g.standard_normal(shape + mean.shape[-1:])
    return mean + np.einsum("...ij,...j->...i", chol, z)


def _dirichlet(g: np.random.Generator, shape: tuple[int, ...], alpha: Any) -> Any:
    weights = g.standard_gamma(np.broadcast_to(alpha, shape + alpha.shape[-1:]))
    return weights / np.sum(weights, axis=-1, keepdims=True)


# --- continuous distributions, issue #18 ----------------------------------------------------


def truncated_normal_quantile(
    xp: Any, log_ndtr: Callable[..., Any], ndtri_exp: Callable[..., Any], u: Any, a: Any, b: Any
) -> Any:
    """The quantile ``u`` in (0, 1] of the standard normal truncated to [a, b], over ``xp``.

    Inverse CDF in log space, exact in the far tails (a = 40 draws just above 40): an
    interval mostly above 0 is mirrored below it, where Phi(lo) <= Phi(hi) hold their
    relative precision as logs; then log(Phi(lo) + u (Phi(hi) - Phi(lo))) =
    log Phi(hi) + log(u + (1 - u) Phi(lo) / Phi(hi)), and ``ndtri_exp`` inverts log Phi.
    """
    flip = a + b > 0  # False for a = -inf, b = inf (NaN)
    lo, hi = xp.where(flip, -b, a), xp.where(flip, -a, b)
    log_lo, log_hi = log_ndtr(lo), log_ndtr(hi)
    z = ndtri_exp(log_hi + xp.log(u + (1 - u) * xp.exp(log_lo - log_hi)))
    z = xp.clip(z, lo, hi)  # rounding: a quantile stays in its interval
    return xp.where(flip, -z, z)


def _truncated_normal(
    g: np.random.Generator, s: tuple[int, ...], loc: Any, scale: Any, lower: Any, upper: Any
) -> Any:
    u = 1 - g.random(s)  # (0, 1]: u = 0 would be log(0) for an unbounded lower end
    a, b = (lower - loc) / scale, (upper - loc) / scale
    z = truncated_normal_quantile(np, special.log_ndtr, special.ndtri_exp, u, a, b)
    x = np.clip(loc + scale * z, lower, upper)
    return np.where((lower < upper) & (scale > 0), x, np.nan)  # as JAX: no exception


def skew_normal_standard(xp: Any, a: Any, z0: Any, z1: Any) -> Any:
    """delta |z0| + sqrt(1 - delta^2) z1 with delta = a / sqrt(1 + a^2), over ``xp``: for
    independent standard normals z0, z1 exactly SkewNormal(a) (Azzalini, 1985); the
    sqrt(1 + a^2) as hypot(1, a) stays finite for any a."""
    root = xp.hypot(1.0, a)
    return (a / root) * xp.abs(z0) + z1 / root


# --- discrete and multivariate distributions, issue #18 ------------------------------------


def _negative_binomial(g: np.random.Generator, s: tuple[int, ...], n: Any, p: Any) -> Any:
    # gamma-Poisson, as JAX's side: NumPy's negative_binomial rejects p = 1 (a sure 0)
    rate = g.standard_gamma(np.broadcast_to(n, s)) * ((1 - p) / p)
    return g.poisson(rate, s)


def _multinomial(g: np.random.Generator, s: tuple[int, ...], n: Any, p: Any) -> Any:
    p = np.broadcast_to(p / np.sum(p, axis=-1, keepdims=True), s + p.shape[-1:])
    return g.multinomial(np.broadcast_to(n, s).astype(np.int64), p)


def _ordered_logistic(g: np.random.Generator, s: tuple[int, ...], eta: Any, c: Any) -> Any:
    latent = eta + g.logistic(0.0, 1.0, s)
    return np.sum(c < latent[..., None], axis=-1)


def onion_cholesky(xp: Any, eta: Any, n: int, log_beta: Any, normal: Any) -> Any:
    """The onion method (Lewandowski, Kurowicka and Joe, 2009, section 3.2), over ``xp``:
    row i of L is sqrt(y_i) u_i, then sqrt(1 - y_i) on the diagonal, with u_i uniform on
    the unit sphere of R^i and y_i ~ Beta(i / 2, eta + (n - 2) / 2 - (i - 1) / 2).

    ``log_beta(a, b)`` draws ``(log y, log(1 - y))`` for y ~ Beta(a, b), of the shape of
    ``a`` and ``b`` (batch + (n - 1,)); ``normal(shape)`` draws standard normals; ``eta``
    has the batch shape.
    """
    i = np.arange(1, n, dtype=eta.dtype)  # the constants in eta's dtype (JAX casts no wider)
    a = xp.broadcast_to(i / 2, (*eta.shape, n - 1))
    log_y, log_rest = log_beta(a, eta[..., None] + (n - 1 - i) / 2)
    z = xp.tril(normal((*eta.shape, n, n)), -1)[..., 1:, :]
    u = z / xp.sqrt(xp.sum(z * z, axis=-1, keepdims=True))
    eye = np.eye(n, dtype=eta.dtype)
    first = xp.broadcast_to(eye[:1], (*eta.shape, 1, n))
    rows = xp.exp(log_y / 2)[..., None] * u + xp.exp(log_rest / 2)[..., None] * eye[1:]
    return xp.concatenate([first, rows], axis=-2)


def _lkj_cholesky(n: int) -> Callable[..., Any]:
    def sample(g: np.random.Generator, s: tuple[int, ...], eta: Any) -> Any:
        eta = np.broadcast_to(eta, s).astype(np.float64)  # NumPy draws Beta in float64

        def log_beta(a: Any, b: Any) -> tuple[Any, Any]:
            y = g.beta(a, b)
            return np.log(y), np.log1p(-y)

        return onion_cholesky(np, eta, n, log_beta, g.standard_normal)

    return sample


# (generator, batch shape, *params) -> draws of that batch shape (plus core axes)
SAMPLERS: dict[type[rv.RandomVariable], Callable[..., Any]] = {
    rv.NormalRV: lambda g, s, loc, scale: g.normal(loc, scale, s),
    rv.CauchyRV: lambda g, s, loc, scale: loc + scale * g.standard_cauchy(s),
    rv.HalfCauchyRV: lambda g, s, scale: scale * np.abs(g.standard_cauchy(s)),
    rv.ExponentialRV: lambda g, s, scale: g.exponential(scale, s),
    rv.GammaRV: lambda g, s, alpha, scale: g.gamma(alpha, scale, s),
    rv.InverseGammaRV: lambda g, s, alpha, scale: scale / g.gamma(alpha, 1.0, s),
    rv.BetaRV: lambda g, s, a, b: g.beta(a, b, s),
    rv.UniformRV: lambda g, s, low, high: low + (high - low) * g.random(s),
    rv.StudentTRV: lambda g, s, df, loc, scale: loc + scale * g.standard_t(df, s),
    rv.BernoulliRV: lambda g, s, p: g.random(s) < p,
    rv.BernoulliLogitRV: lambda g, s, logit: g.random(s) < special.expit(logit),
    rv.PoissonRV: lambda g, s, lam: g.poisson(lam, s),
    rv.BinomialRV: lambda g, s, n, p: g.binomial(n, p, s),
    rv.CategoricalRV: _categorical,
    rv.MultivariateNormalRV: _multivariate_normal,
    rv.DirichletRV: _dirichlet,
    rv.LaplaceRV: lambda g, s, loc, scale: g.laplace(loc, scale, s),
    rv.LogisticRV: lambda g, s, loc, scale: g.logistic(loc, scale, s),
    rv.GumbelRV: lambda g, s, loc, scale: g.gumbel(loc, scale, s),
    rv.WeibullRV: lambda g, s, c, scale: scale * g.weibull(c, s),
    # P(exp(E / b) > x) = P(E > b log x) = x^-b on x >= 1
    rv.ParetoRV: lambda g, s, b, scale: scale * np.exp(g.standard_exponential(s) / b),
    rv.ChiSquareRV: lambda g, s, df: g.chisquare(df, s),
    rv.TruncatedNormalRV: _truncated_normal,
    # NumPy's draws lie in [-pi, pi] around 0; SciPy's support is [mu - pi, mu + pi]
    rv.VonMisesRV: lambda g, s, mu, kappa: mu + g.vonmises(0.0, kappa, s),
    rv.SkewNormalRV: lambda g, s, a, loc, scale: (
        loc + scale * skew_normal_standard(np, a, g.standard_normal(s), g.standard_normal(s))
    ),
    rv.WaldRV: lambda g, s, mean, scale: g.wald(mean, scale, s),
    rv.HalfStudentTRV: lambda g, s, nu, scale: scale * np.abs(g.standard_t(nu, s)),
    rv.NegativeBinomialRV: _negative_binomial,
    rv.GeometricRV: lambda g, s, p: g.geometric(p, s),
    rv.BetaBinomialRV: lambda g, s, n, a, b: g.binomial(n, g.beta(a, b, s)),
    rv.DiscreteUniformRV: lambda g, s, lower, upper: g.integers(
        lower.astype(np.int64), upper.astype(np.int64), s, endpoint=True
    ),
    rv.ZeroInflatedPoissonRV: lambda g, s, psi, rate: (g.random(s) < psi) * g.poisson(rate, s),
    rv.ZeroInflatedNegativeBinomialRV: lambda g, s, psi, n, p: (
        (g.random(s) < psi) * _negative_binomial(g, s, n, p)
    ),
    rv.MultinomialRV: _multinomial,
    rv.OrderedLogisticRV: _ordered_logistic,
}


def _implement(op: rv.RandomVariable, node: Apply) -> Callable[..., Any]:
    sample = _lkj_cholesky(op.n) if isinstance(op, rv.LKJCholeskyRV) else SAMPLERS[type(op)]
    dtype = np.dtype(op.dtype)

    def run(key: Any, size: Any, *params: Any) -> tuple[np.ndarray, np.ndarray]:
        params = tuple(np.asarray(p) for p in params)
        next_key, generator = _split(np.asarray(key))
        with np.errstate(all="ignore"):
            draw = sample(generator, batch_shape(op, size, params), *params)
        return next_key, np.asarray(draw).astype(dtype, copy=False)

    return run


for _cls in [*SAMPLERS, rv.LKJCholeskyRV]:
    numpy_funcify.register(_cls, _implement)


def expanded(op: CustomRV, node: Apply, implement: NodeImpl) -> Callable[..., Any]:
    """A composite random variable: its sampling graph (``CustomRV.expand``: the core
    graph, broadcast or run per element) lowered with the backend's ``implement``."""
    inputs = [Var(v.type) for v in node.inputs]
    run = lower(inputs, op.expand(*inputs), implement)
    return lambda *args: tuple(run(*args))


@numpy_funcify.register(CustomRV)
def _custom(op: CustomRV, node: Apply) -> Callable[..., Any]:
    return expanded(op, node, _implement_node)


# --- keys: JAX's numbers (threefry2x32, the partitionable split JAX uses by default) -------


def threefry2x32(
    k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The Threefry-2x32 hash (20 rounds) of the counts ``(x1, x2)`` under the key
    ``(k1, k2)``, as JAX computes it: the bits behind ``split`` and ``fold_in``."""
    k1, k2 = np.uint32(k1), np.uint32(k2)
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
    x = [np.asarray(x1, np.uint32) + ks[0], np.asarray(x2, np.uint32) + ks[1]]
    with np.errstate(over="ignore"):
        for group in range(5):
            for r in rotations[group % 2]:
                x[0] = x[0] + x[1]
                x[1] = ((x[1] << np.uint32(r)) | (x[1] >> np.uint32(32 - r))) ^ x[0]
            x[0] = x[0] + ks[(group + 1) % 3]
            x[1] = x[1] + ks[(group + 2) % 3] + np.uint32(group + 1)
    return x[0], x[1]


@numpy_funcify.register(rv.SplitKey)
def _split_key(op: rv.SplitKey, node: Apply) -> Callable[..., Any]:
    def run(key: Any) -> np.ndarray:
        key = np.asarray(key, np.uint32)
        counts = np.arange(op.n, dtype=np.uint32)
        bits = threefry2x32(key[0], key[1], np.zeros_like(counts), counts)
        return np.stack(bits, axis=-1)

    return run


@numpy_funcify.register(rv.FoldIn)
def _fold_in(op: rv.FoldIn, node: Apply) -> Callable[..., Any]:
    def run(key: Any, data: Any) -> np.ndarray:
        key = np.asarray(key, np.uint32)
        count = np.array([np.asarray(data).astype(np.int64) & 0xFFFFFFFF], np.uint32)
        bits = threefry2x32(key[0], key[1], np.zeros(1, np.uint32), count)
        return np.concatenate(bits)

    return run
