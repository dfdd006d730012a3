"""posteriordb's time series (``bench/posteriordb_models.py``): AR(K), ARMA(1, 1) and
GARCH(1, 1), each a scan that draws one value per step (the recurrences in the carry), and
a two-state HMM whose hidden chain the forward algorithm sums out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from posteriordb_core import (
    LOG_2PI,
    Model,
    bounded,
    cauchy_lpdf,
    constrained,
    flat,
    normal_lpdf,
    positive,
    value_var,
)

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from rewritekit.ir import Var

# --- AR(K): a time series, a window of the K previous values in the scan's carry ----------


def ark(data: dict) -> Model:
    """Stan's arK: y_t ~ Normal(alpha + sum_k beta_k y_(t-k), sigma) for t > K."""
    y, order = data["y"] * 1.0, int(data["K"])
    k, alpha = rr.normal(rr.key("key"), 0.0, 10.0)
    k, beta = rr.normal(k, 0.0, 10.0, size=(order,))
    k, sigma = rr.halfcauchy(k, 2.5)

    def step(carry: tuple, _: Any) -> tuple:
        k, window = carry  # window = y[t-1], ..., y[t-K]
        k, y_t = rr.normal(k, alpha + rt.sum(beta * window), sigma)
        return (k, rt.concatenate([rt.reshape(y_t, (1,)), window[:-1]])), y_t

    _, path = rk.scan(step, (k, y[order - 1 :: -1].copy()), length=len(y) - order)
    v = {"alpha": value_var(alpha, "alpha"), "beta": value_var(beta, "beta")}
    v["sigma"] = value_var(sigma, "sigma")
    values = {alpha: v["alpha"], beta: v["beta"], sigma: v["sigma"], path: y[order:]}
    params = {"alpha": v["alpha"], "beta": v["beta"], "sigma": constrained(sigma, v["sigma"])}
    return Model(values, list(v.values()), params)


def ark_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``ark`` by hand (``jax.numpy``) on the same flat layout."""
    y, order = data["y"] * 1.0, int(data["K"])
    sigma, jac = positive(p["sigma"])
    lags = np.stack([y[order - j : len(y) - j] for j in range(1, order + 1)], axis=1)
    return (
        normal_lpdf(p["alpha"], 0.0, 10.0)
        + normal_lpdf(p["beta"], 0.0, 10.0)
        + cauchy_lpdf(sigma, 0.0, 2.5)
        + jac
        + normal_lpdf(y[order:], p["alpha"] + lags @ p["beta"], sigma)
    )


def ark_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``ark`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist

    y, order = data["y"] * 1.0, int(data["K"])
    lags = np.stack([y[order - j : len(y) - j] for j in range(1, order + 1)], axis=1)

    def model() -> None:
        alpha = numpyro.sample("alpha", dist.Normal(0.0, 10.0))
        beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([order]))
        sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
        numpyro.sample("y", dist.Normal(alpha + lags @ beta, sigma), obs=y[order:])

    return model


# --- ARMA(1, 1): the error is carried (a true recurrence) ----------------------------------


def arma11(data: dict) -> Model:
    """Stan's arma11: y_t = mu + phi y_(t-1) + theta err_(t-1) + err_t, err ~ Normal(0, sigma)."""
    y = data["y"] * 1.0
    k, mu = rr.normal(rr.key("key"), 0.0, 10.0)
    k, phi = rr.normal(k, 0.0, 2.0)
    k, theta = rr.normal(k, 0.0, 2.0)
    k, sigma = rr.halfcauchy(k, 2.5)

    def step(carry: tuple, _: Any) -> tuple:
        k, y_prev, err_prev = carry
        nu = mu + phi * y_prev + theta * err_prev
        k, y_t = rr.normal(k, nu, sigma)  # err_t = y_t - nu_t ~ Normal(0, sigma)
        return (k, y_t, y_t - nu), y_t

    _, path = rk.scan(step, (k, mu, 0.0), length=len(y))  # nu_1 = mu + phi mu, err_0 = 0
    v = {n: value_var(x, n) for n, x in (("mu", mu), ("phi", phi), ("theta", theta))}
    v["sigma"] = value_var(sigma, "sigma")
    values = {mu: v["mu"], phi: v["phi"], theta: v["theta"], sigma: v["sigma"], path: y}
    params = {**v, "sigma": constrained(sigma, v["sigma"])}
    return Model(values, list(v.values()), params)


def _arma_errors(y: Any, mu: Any, phi: Any, theta: Any) -> jax.Array:
    def step(err_prev: Any, pair: Any) -> tuple:
        y_prev, y_t = pair
        err = y_t - (mu + phi * y_prev + theta * err_prev)
        return err, err

    y_prev = jnp.concatenate([jnp.reshape(mu, (1,)), y[:-1]])
    return jax.lax.scan(step, jnp.zeros_like(mu), (y_prev, y))[1]


def arma11_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``arma11`` by hand (``jax.numpy``) on the same flat layout."""
    sigma, jac = positive(p["sigma"])
    err = _arma_errors(data["y"] * 1.0, p["mu"], p["phi"], p["theta"])
    return (
        normal_lpdf(p["mu"], 0.0, 10.0)
        + normal_lpdf(p["phi"], 0.0, 2.0)
        + normal_lpdf(p["theta"], 0.0, 2.0)
        + cauchy_lpdf(sigma, 0.0, 2.5)
        + jac
        + normal_lpdf(err, 0.0, sigma)
    )


def arma11_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``arma11`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist

    y = data["y"] * 1.0

    def model() -> None:
        mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
        phi = numpyro.sample("phi", dist.Normal(0.0, 2.0))
        theta = numpyro.sample("theta", dist.Normal(0.0, 2.0))
        sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
        err = _arma_errors(y, mu, phi, theta)
        numpyro.factor("err", dist.Normal(0.0, sigma).log_prob(err).sum())

    return model


# --- GARCH(1, 1): the volatility is carried; flat priors, beta1 < 1 - alpha1 -------------


def garch11(data: dict) -> Model:
    """Stan's garch11: y_t ~ Normal(mu, sigma_t), sigma_t^2 = alpha0 + alpha1 (y_(t-1) - mu)^2
    + beta1 sigma_(t-1)^2."""
    y, sigma1 = data["y"] * 1.0, float(data["sigma1"])
    mu, mu_v, _ = flat("mu")
    alpha0, alpha0_v, jac0 = flat("alpha0", transform=rl.transforms.log)
    k, alpha1 = rr.uniform(rr.key("key"), 0.0, 1.0)
    alpha1_v = value_var(alpha1, "alpha1")
    alpha1_c = constrained(alpha1, alpha1_v)
    # beta1's upper bound is a parameter: Stan's Jacobian keeps log(1 - alpha1)
    beta1, beta1_v, jac1 = flat("beta1", transform=rl.transforms.interval(0.0, 1.0 - alpha1_c))
    k, y1 = rr.normal(k, mu, sigma1)

    def step(carry: tuple, _: Any) -> tuple:
        k, s_prev, y_prev = carry
        s = rt.sqrt(alpha0 + alpha1 * (y_prev - mu) ** 2 + beta1 * s_prev**2)
        k, y_t = rr.normal(k, mu, s)
        return (k, s, y_t), y_t

    _, path = rk.scan(step, (k, sigma1, y1), length=len(y) - 1)
    values = {alpha1: alpha1_v, y1: y[0], path: y[1:]}
    free = [mu_v, alpha0_v, alpha1_v, beta1_v]
    params = {"mu": mu, "alpha0": alpha0, "alpha1": alpha1_c, "beta1": beta1}
    return Model(values, free, params, extra=jac0 + jac1)


def _garch_scales(y: Any, sigma1: float, mu: Any, alpha0: Any, alpha1: Any, beta1: Any) -> Any:
    def step(s_prev: Any, y_prev: Any) -> tuple:
        s = jnp.sqrt(alpha0 + alpha1 * (y_prev - mu) ** 2 + beta1 * s_prev**2)
        return s, s

    rest = jax.lax.scan(step, jnp.asarray(sigma1, dtype=jnp.result_type(mu)), y[:-1])[1]
    return jnp.concatenate([jnp.full((1,), sigma1), rest])


def garch11_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``garch11`` by hand (``jax.numpy``) on the same flat layout."""
    y, sigma1 = data["y"] * 1.0, float(data["sigma1"])
    alpha0, jac0 = positive(p["alpha0"])
    alpha1, jac1 = bounded(p["alpha1"], 0.0, 1.0)
    beta1, jac2 = bounded(p["beta1"], 0.0, 1.0 - alpha1)
    s = _garch_scales(y, sigma1, p["mu"], alpha0, alpha1, beta1)
    return jac0 + jac1 + jac2 + normal_lpdf(y, p["mu"], s)


def garch11_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``garch11`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    y, sigma1 = data["y"] * 1.0, float(data["sigma1"])

    def model() -> None:
        mu = numpyro.sample("mu", dist.ImproperUniform(constraints.real, (), ()))
        alpha0 = numpyro.sample("alpha0", dist.ImproperUniform(constraints.positive, (), ()))
        alpha1 = numpyro.sample("alpha1", dist.Uniform(0.0, 1.0))
        # beta1 = (1 - alpha1) u, u in (0, 1), with Stan's Jacobian log(1 - alpha1): written
        # as ImproperUniform(interval(0, 1 - alpha1)), NumPyro's beta1 came out 1.3
        # reference sd off in this bench (its bound depends on another parameter)
        unit = numpyro.sample("beta1_unit", dist.ImproperUniform(constraints.unit_interval, (), ()))
        numpyro.factor("beta1_jacobian", jnp.log1p(-alpha1))
        beta1 = numpyro.deterministic("beta1", (1.0 - alpha1) * unit)
        s = _garch_scales(y, sigma1, mu, alpha0, alpha1, beta1)
        numpyro.sample("y", dist.Normal(mu, s), obs=y)

    return model


# --- an HMM: a 2-state hidden Markov chain summed out by the forward algorithm -------------


class PositiveOrdered(rl.transforms.Transform):
    """Stan's ``positive_ordered``: ``x = cumsum(exp(y))``, ``log|J| = sum(y)``."""

    name = "positive_ordered"
    event_ndim = 1

    def forward(self, x: Any) -> Var:
        x = rt.as_tensor(x)
        return rt.log(rt.concatenate([x[..., :1], x[..., 1:] - x[..., :-1]], axis=-1))

    def backward(self, y: Any) -> Var:
        return rt.cumsum(rt.exp(y), axis=-1)

    def log_jac_det(self, y: Any) -> Var:
        return rt.sum(y, axis=-1)


def _hmm_forward(emission: Any, log_theta: Any, lib: Any, scan: Callable) -> Any:
    """log p(y) of an HMM: ``emission[t, k] = log p(y_t | state k)``, ``log_theta[j, k] =
    log P(k after j)``, the first state's ``gamma_1 = emission[0]`` (Stan's program)."""

    def step(gamma: Any, e_t: Any) -> tuple:
        gamma = lib.logsumexp(gamma[:, None] + log_theta, axis=0) + e_t
        return gamma, gamma

    final, _ = scan(step, emission[0], emission[1:])
    return lib.logsumexp(final)


def hmm(data: dict) -> Model:
    """Stan's hmm_example: y_t ~ Normal(mu[z_t], 1), z a 2-state Markov chain (summed out)."""
    y = data["y"] * 1.0
    k, mu = rr.normal(rr.key("key"), np.array([3.0, 10.0]), 1.0)
    k, theta = rr.dirichlet(k, np.ones((2, 2)))  # Stan: no prior on the simplexes (uniform)
    v = {"mu": rt.vector("mu", shape=(2,)), "theta": value_var(theta, "theta")}
    mu_c, theta_c = PositiveOrdered().backward(v["mu"]), constrained(theta, v["theta"])
    emission = -0.5 * (y[:, None] - mu_c) ** 2 - 0.5 * LOG_2PI
    likelihood = _hmm_forward(emission, rt.log(theta_c), rt, rk.scan)
    params = {"theta1": theta_c[0], "theta2": theta_c[1], "mu": mu_c}
    transforms = {mu: PositiveOrdered()}
    return Model(
        {mu: v["mu"], theta: v["theta"]}, list(v.values()), params, transforms, [likelihood]
    )


def hmm_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``hmm`` by hand (``jax.numpy``) on the same flat layout."""
    y = data["y"] * 1.0
    mu, jac_mu = jnp.cumsum(jnp.exp(p["mu"])), jnp.sum(p["mu"])
    u = p["theta"][:, 0]  # each row a 2-simplex: [sigmoid(u), sigmoid(-u)]
    log_theta = jnp.stack([jax.nn.log_sigmoid(u), jax.nn.log_sigmoid(-u)], axis=1)
    jac_theta = jnp.sum(log_theta)
    emission = -0.5 * (y[:, None] - mu) ** 2 - 0.5 * LOG_2PI
    forward = _hmm_forward(emission, log_theta, jax.nn, jax.lax.scan)
    return normal_lpdf(mu, jnp.array([3.0, 10.0]), 1.0) + jac_mu + jac_theta + forward


def hmm_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``hmm`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    y = data["y"] * 1.0

    def model() -> None:
        mu = numpyro.sample(
            "mu", dist.ImproperUniform(constraints.positive_ordered_vector, (), (2,))
        )
        numpyro.factor("mu_prior", dist.Normal(jnp.array([3.0, 10.0]), 1.0).log_prob(mu).sum())
        theta = numpyro.sample("theta", dist.Dirichlet(jnp.ones((2, 2))))
        numpyro.deterministic("theta1", theta[0])
        numpyro.deterministic("theta2", theta[1])
        emission = -0.5 * (y[:, None] - mu) ** 2 - 0.5 * LOG_2PI
        numpyro.factor("y", _hmm_forward(emission, jnp.log(theta), jax.nn, jax.lax.scan))

    return model
