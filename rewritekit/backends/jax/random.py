"""JAX implementations of ``rewritekit.tensor.random``: ``jax.random`` draws.

A key is a raw ``uint32[2]`` key; ``jax.random.split`` gives the next key and this draw's
key. The size must be static when JAX traces the graph (a constant, or computed from
static shapes such as ``x.shape``); a size that depends on input values is an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from rewritekit.backends.common.arrays import batch_shape
from rewritekit.backends.jax import _implement as _implement_node
from rewritekit.backends.jax import jax_funcify
from rewritekit.backends.numpy.random import (
    expanded,
    onion_cholesky,
    skew_normal_standard,
    truncated_normal_quantile,
)
from rewritekit.errors import ShapeError
from rewritekit.ir import Apply
from rewritekit.tensor import random as rv
from rewritekit.tensor.custom_random import CustomRV

jr = jax.random


def _categorical(k: Any, s: tuple, dt: Any, p: Any) -> Any:
    return jr.categorical(k, jnp.log(p), axis=-1, shape=s)


def _multivariate_normal(k: Any, s: tuple, dt: Any, mean: Any, cov: Any) -> Any:
    chol = jnp.linalg.cholesky(cov)
    z = jr.normal(k, s + mean.shape[-1:], dt)
    return mean + jnp.einsum("...ij,...j->...i", chol, z)


def _dirichlet(k: Any, s: tuple, dt: Any, alpha: Any) -> Any:
    return jr.dirichlet(k, alpha, s, dt)


# --- continuous distributions, issue #18 ----------------------------------------------------

_LOG_2PI = math.log(2 * math.pi)


def _ndtri_exp(lp: Any) -> Any:
    """The standard normal quantile of exp(lp), lp <= 0 (SciPy's ``ndtri_exp``, which
    jax.scipy.special lacks): -ndtri(-expm1(lp)) above log(1/2), ndtri(exp(lp)) down to
    where exp(lp) is a normal float, below that four Newton steps on log_ndtr(x) = lp from
    the tail's asymptote x^2 = t - log(t) - log(2 pi), t = -2 lp (log_ndtr is nearly
    quadratic there, and the start is within ~0.1: the steps converge quadratically)."""
    floor = math.log(float(jnp.finfo(lp.dtype).tiny)) + 1
    t = -2 * jnp.minimum(lp, floor)
    x = -jnp.sqrt(t - jnp.log(t) - _LOG_2PI)
    for _ in range(4):
        log_cdf = jsp.log_ndtr(x)
        # (log Phi(x) - lp) / (d/dx log Phi(x)), with d/dx log Phi = phi(x) / Phi(x)
        x = x - (log_cdf - lp) * jnp.exp(log_cdf + 0.5 * x * x + 0.5 * _LOG_2PI)
    middle = jsp.ndtri(jnp.exp(lp))
    upper = -jsp.ndtri(-jnp.expm1(lp))
    return jnp.where(lp > -math.log(2), upper, jnp.where(lp > floor, middle, x))


def _truncated_normal(
    k: Any, s: tuple, dt: Any, loc: Any, scale: Any, lower: Any, upper: Any
) -> Any:
    # u >= tiny: u = 0 would be log(0) for an unbounded lower end
    u = jr.uniform(k, s, dt, minval=jnp.finfo(dt).tiny, maxval=1.0)
    a, b = (lower - loc) / scale, (upper - loc) / scale
    z = truncated_normal_quantile(jnp, jsp.log_ndtr, _ndtri_exp, u, a, b)
    x = jnp.clip(loc + scale * z, lower, upper)
    return jnp.where((lower < upper) & (scale > 0), x, jnp.nan)


def _von_mises(k: Any, s: tuple, dt: Any, mu: Any, kappa: Any) -> Any:
    """Best and Fisher's (1979) rejection sampler (NumPy's), over the whole batch in one
    ``while_loop`` that runs until every element has accepted, as NumPyro's ``VonMises``.

    Each round accepts with probability >= 0.65, so the cap of 100 rounds leaves an element
    unaccepted (then NaN) with probability < 1e-45. rho = 2 kappa / (r + sqrt(2 r)) is
    (r - sqrt(2 r)) / (2 kappa) without its cancellation at small kappa; a kappa below
    sqrt(tiny) (1e-154 in float64) runs as sqrt(tiny), so that rho stays a normal float (XLA
    flushes subnormals to 0) and s = 1 / kappa finite: the angles uniform on [-pi, pi].
    """
    kappa = jnp.broadcast_to(jnp.asarray(kappa, dt), s)
    conc = jnp.maximum(kappa, math.sqrt(float(jnp.finfo(dt).tiny)))
    r = 1 + jnp.sqrt(1 + 4 * conc * conc)
    rho = 2 * conc / (r + jnp.sqrt(2 * r))
    s_ = (1 + rho * rho) / (2 * rho)

    def more(state: tuple) -> Any:
        i, _, done, _, _ = state
        return (i < 100) & ~jnp.all(done)

    def round_(state: tuple) -> tuple:
        i, key, done, w, sign = state
        key, k_u, k_v = jr.split(key, 3)
        u = jr.uniform(k_u, s, dt, minval=-1.0, maxval=1.0)
        v = jr.uniform(k_v, s, dt)
        z = jnp.cos(jnp.pi * u)
        w_new = (1 + s_ * z) / (s_ + z)
        y = conc * (s_ - w_new)
        accept = ~done & ((y * (2 - y) >= v) | (jnp.log(y / v) + 1 >= y))
        w = jnp.where(accept, w_new, w)
        sign = jnp.where(accept, jnp.where(u < 0, -1, 1).astype(dt), sign)
        return i + 1, key, done | accept, w, sign

    start = (0, k, jnp.zeros(s, bool), jnp.zeros(s, dt), jnp.ones(s, dt))
    _, _, done, w, sign = jax.lax.while_loop(more, round_, start)
    angle = sign * jnp.arccos(jnp.clip(w, -1, 1))  # rounding may put w just outside
    return jnp.where(done & (kappa >= 0), mu + angle, jnp.nan)


def _skew_normal(k: Any, s: tuple, dt: Any, a: Any, loc: Any, scale: Any) -> Any:
    z = jr.normal(k, (2, *s), dt)
    return loc + scale * skew_normal_standard(jnp, a, z[0], z[1])


def _wald(k: Any, s: tuple, dt: Any, mean: Any, scale: Any) -> Any:
    """Michael, Schucany and Haas's (1976) transformation, as NumPy's ``wald``, with the
    smaller root mean + mean / (2 scale) (y - r) written without its cancellation:
    mean (r - y) / (r + y) = 4 scale mean y / (y + r)^2, for y = mean z^2 and
    r = sqrt(y^2 + 4 scale y); it is kept with probability mean / (mean + x), else
    mean^2 / x. (jax.random.wald has no shape parameter, and cancels.)"""
    k_z, k_u = jr.split(k)
    z, u = jr.normal(k_z, s, dt), jr.uniform(k_u, s, dt)
    y = mean * z * z
    r = jnp.hypot(y, 2 * jnp.sqrt(scale * y))
    x = jnp.where(y > 0, 4 * scale * mean * (y / (y + r)) / (y + r), mean)
    return jnp.where(u <= mean / (mean + x), x, mean * (mean / x))


# --- discrete and multivariate distributions, issue #18 ------------------------------------


def _negative_binomial(k: Any, s: tuple, dt: Any, n: Any, p: Any) -> Any:
    k_gamma, k_poisson = jr.split(k)
    return jr.poisson(k_poisson, jr.gamma(k_gamma, n, s, dt) * ((1 - p) / p), s)


def _zero_inflated(count: Callable[..., Any]) -> Callable[..., Any]:
    """The sampler of ``count`` (key, shape, dtype, *params) kept with probability psi."""

    def sample(k: Any, s: tuple, dt: Any, psi: Any, *params: Any) -> Any:
        k_coin, k_count = jr.split(k)
        return jnp.where(jr.uniform(k_coin, s, dt) < psi, count(k_count, s, dt, *params), 0)

    return sample


def _beta_binomial(k: Any, s: tuple, dt: Any, n: Any, a: Any, b: Any) -> Any:
    k_beta, k_binomial = jr.split(k)
    return jr.binomial(k_binomial, n, jr.beta(k_beta, a, b, s, dt), s, dt)


def _multinomial(k: Any, s: tuple, dt: Any, n: Any, p: Any) -> Any:
    p = jnp.broadcast_to(p / jnp.sum(p, axis=-1, keepdims=True), s + p.shape[-1:])
    return jr.multinomial(k, jnp.broadcast_to(n, s), p, dtype=dt)  # p's shape: s + (K,)


def _ordered_logistic(k: Any, s: tuple, dt: Any, eta: Any, c: Any) -> Any:
    latent = eta + jr.logistic(k, s, dt)
    return jnp.sum(c < latent[..., None], axis=-1)


def _lkj_cholesky(n: int) -> Callable[..., Any]:
    def sample(k: Any, s: tuple, dt: Any, eta: Any) -> Any:
        k_beta, k_normal = jr.split(k)

        def log_beta(a: Any, b: Any) -> tuple[Any, Any]:
            # Beta from two log-gammas, in one sampler (a JAX gamma sampler costs ~1 s to
            # compile): exact in log space where a gamma draw of a small b underflows
            logs = jr.loggamma(k_beta, jnp.stack([a, jnp.broadcast_to(b, a.shape)]), dtype=dt)
            total = jnp.logaddexp(logs[0], logs[1])
            return logs[0] - total, logs[1] - total

        eta = jnp.broadcast_to(eta, s).astype(dt)
        return onion_cholesky(jnp, eta, n, log_beta, lambda shape: jr.normal(k_normal, shape, dt))

    return sample


# (key, batch shape, float dtype, *params) -> draws of that batch shape (plus core axes)
SAMPLERS: dict[type[rv.RandomVariable], Callable[..., Any]] = {
    rv.NormalRV: lambda k, s, dt, loc, scale: loc + scale * jr.normal(k, s, dt),
    rv.CauchyRV: lambda k, s, dt, loc, scale: loc + scale * jr.cauchy(k, s, dt),
    rv.HalfCauchyRV: lambda k, s, dt, scale: scale * jnp.abs(jr.cauchy(k, s, dt)),
    rv.ExponentialRV: lambda k, s, dt, scale: scale * jr.exponential(k, s, dt),
    rv.GammaRV: lambda k, s, dt, alpha, scale: scale * jr.gamma(k, alpha, s, dt),
    rv.InverseGammaRV: lambda k, s, dt, alpha, scale: scale / jr.gamma(k, alpha, s, dt),
    rv.BetaRV: lambda k, s, dt, a, b: jr.beta(k, a, b, s, dt),
    rv.UniformRV: lambda k, s, dt, low, high: low + (high - low) * jr.uniform(k, s, dt),
    rv.StudentTRV: lambda k, s, dt, df, loc, scale: loc + scale * jr.t(k, df, s, dt),
    rv.BernoulliRV: lambda k, s, dt, p: jr.uniform(k, s, dt) < p,
    rv.BernoulliLogitRV: lambda k, s, dt, logit: jr.uniform(k, s, dt) < jax.nn.sigmoid(logit),
    rv.PoissonRV: lambda k, s, dt, lam: jr.poisson(k, lam, s),
    rv.BinomialRV: lambda k, s, dt, n, p: jr.binomial(k, n, p, s, dt),
    rv.CategoricalRV: _categorical,
    rv.MultivariateNormalRV: _multivariate_normal,
    rv.DirichletRV: _dirichlet,
    rv.LaplaceRV: lambda k, s, dt, loc, scale: loc + scale * jr.laplace(k, s, dt),
    rv.LogisticRV: lambda k, s, dt, loc, scale: loc + scale * jr.logistic(k, s, dt),
    rv.GumbelRV: lambda k, s, dt, loc, scale: loc + scale * jr.gumbel(k, s, dt),
    rv.WeibullRV: lambda k, s, dt, c, scale: jr.weibull_min(k, scale, c, s, dt),
    rv.ParetoRV: lambda k, s, dt, b, scale: scale * jr.pareto(k, b, s, dt),
    rv.ChiSquareRV: lambda k, s, dt, df: jr.chisquare(k, df, s, dt),
    rv.TruncatedNormalRV: _truncated_normal,
    rv.VonMisesRV: _von_mises,
    rv.SkewNormalRV: _skew_normal,
    rv.WaldRV: _wald,
    rv.HalfStudentTRV: lambda k, s, dt, nu, scale: scale * jnp.abs(jr.t(k, nu, s, dt)),
    rv.NegativeBinomialRV: _negative_binomial,
    rv.GeometricRV: lambda k, s, dt, p: jr.geometric(k, p, s),
    rv.BetaBinomialRV: _beta_binomial,
    rv.DiscreteUniformRV: lambda k, s, dt, lower, upper: jr.randint(k, s, lower, upper + 1),
    rv.ZeroInflatedPoissonRV: _zero_inflated(lambda k, s, dt, rate: jr.poisson(k, rate, s)),
    rv.ZeroInflatedNegativeBinomialRV: _zero_inflated(_negative_binomial),
    rv.MultinomialRV: _multinomial,
    rv.OrderedLogisticRV: _ordered_logistic,
}


def _batch_shape(op: rv.RandomVariable, size: Any, params: tuple[Any, ...]) -> tuple:
    if op.size is not None and not isinstance(size, (np.ndarray, np.generic)):
        raise ShapeError(
            f"{op.name}: the size of a draw must be known when JAX traces the graph (a "
            "constant, or computed from static shapes); this one depends on input values"
        )
    return batch_shape(op, size, params)


def _implement(op: rv.RandomVariable, node: Apply) -> Callable[..., Any]:
    sample = _lkj_cholesky(op.n) if isinstance(op, rv.LKJCholeskyRV) else SAMPLERS[type(op)]
    dtype = np.dtype(op.dtype)
    # the float dtype the sampler computes in: the draw's, or the parameters' for ints
    work = (
        dtype if op.kind == "f" else np.result_type(*(i.dtype for i in node.inputs[2:]), np.float32)
    )

    def run(key: Any, size: Any, *params: Any) -> tuple[Any, Any]:
        keys = jr.split(jnp.asarray(key, dtype=jnp.uint32))
        params = tuple(jnp.asarray(p) for p in params)
        draw = sample(keys[1], _batch_shape(op, size, params), work, *params)
        return keys[0], jnp.asarray(draw).astype(dtype)

    return run


for _cls in [*SAMPLERS, rv.LKJCholeskyRV]:
    jax_funcify.register(_cls, _implement)


@jax_funcify.register(CustomRV)
def _custom(op: CustomRV, node: Apply) -> Callable[..., Any]:
    return expanded(op, node, _implement_node)


@jax_funcify.register(rv.SplitKey)
def _split_key(op: rv.SplitKey, node: Apply) -> Callable[..., Any]:
    return lambda key: jax.random.split(jnp.asarray(key, dtype=jnp.uint32), op.n)


@jax_funcify.register(rv.FoldIn)
def _fold_in(op: rv.FoldIn, node: Apply) -> Callable[..., Any]:
    # the data's low 32 bits, as uint32 (XLA's conversion keeps them; so does NumPy's side)
    def run(key: Any, data: Any) -> Any:
        wrapped = jnp.asarray(data).astype(jnp.uint32)
        return jax.random.fold_in(jnp.asarray(key, dtype=jnp.uint32), wrapped)

    return run
