"""posteriordb's latent-structure models (``bench/posteriordb_models.py``): Gaussian
processes (a Poisson GLM with a log link, a GP regression), a two-component normal mixture
whose indicator is summed out, and an LKJ prior on a correlation (dogs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import gammaln
from posteriordb_core import (
    LOG_2PI,
    Model,
    bounded,
    constrained,
    normal_lpdf,
    positive,
    value_var,
)

import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt

# --- Gaussian processes: a Poisson GLM with a log link, and a GP regression -------------


def _gp_cov(x: Any, alpha: Any, rho: Any, lib: Any) -> Any:
    """Stan's ``gp_exp_quad_cov``: alpha^2 exp(-(x_i - x_j)^2 / (2 rho^2))."""
    d = x[:, None] - x[None, :]
    return alpha**2 * lib.exp(-(d**2) / (2.0 * rho**2))


def gp_pois_regr(data: dict) -> Model:
    """Stan's gp_pois_regr: k ~ Poisson(exp(f)), f = cholesky(K(x; alpha, rho)) f_tilde."""
    x, n = data["x"] * 1.0, int(data["N"])
    k, rho = rr.gamma(rr.key("key"), 25.0, 1.0 / 4.0)  # Stan's gamma(25, rate 4)
    k, alpha = rr.halfnormal(k, 2.0)
    k, f_tilde = rr.normal(k, 0.0, 1.0, size=(n,))
    cov = _gp_cov(x, alpha, rho, rt) + 1e-10 * np.eye(n)
    f = rt.linalg.cholesky(cov) @ f_tilde
    k, counts = rr.poisson(k, rt.exp(f))
    v = {n_: value_var(x_, n_) for n_, x_ in (("rho", rho), ("alpha", alpha), ("f_tilde", f_tilde))}
    values = {rho: v["rho"], alpha: v["alpha"], f_tilde: v["f_tilde"], counts: data["k"]}
    rho_c, alpha_c = constrained(rho, v["rho"]), constrained(alpha, v["alpha"])
    cov_v = _gp_cov(x, alpha_c, rho_c, rt) + 1e-10 * np.eye(n)
    params = {"rho": rho_c, "alpha": alpha_c, "f": rt.linalg.cholesky(cov_v) @ v["f_tilde"]}
    return Model(values, list(v.values()), params)


def gp_pois_regr_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``gp_pois_regr`` by hand (``jax.numpy``) on the same flat layout."""
    x, counts = data["x"] * 1.0, data["k"]
    rho, jac_rho = positive(p["rho"])
    alpha, jac_alpha = positive(p["alpha"])
    cov = _gp_cov(x, alpha, rho, jnp) + 1e-10 * jnp.eye(len(x))
    f = jnp.linalg.cholesky(cov) @ p["f_tilde"]
    gamma = 24.0 * jnp.log(rho) - 4.0 * rho  # gamma(25, 4) without its constant
    poisson = jnp.sum(counts * f - jnp.exp(f) - gammaln(counts + 1.0))
    return (
        gamma
        + jac_rho
        + normal_lpdf(alpha, 0.0, 2.0)
        + jac_alpha
        + normal_lpdf(p["f_tilde"], 0.0, 1.0)
        + poisson
    )


def gp_pois_regr_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``gp_pois_regr`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist

    x, counts = data["x"] * 1.0, data["k"]

    def model() -> None:
        rho = numpyro.sample("rho", dist.Gamma(25.0, 4.0))
        alpha = numpyro.sample("alpha", dist.HalfNormal(2.0))
        f_tilde = numpyro.sample("f_tilde", dist.Normal(0.0, 1.0).expand([len(x)]))
        cov = _gp_cov(x, alpha, rho, jnp) + 1e-10 * jnp.eye(len(x))
        f = numpyro.deterministic("f", jnp.linalg.cholesky(cov) @ f_tilde)
        numpyro.sample("k", dist.Poisson(jnp.exp(f)), obs=counts)

    return model


def gp_regr(data: dict) -> Model:
    """Stan's gp_regr: y ~ MultivariateNormal(0, K(x; alpha, rho) + sigma I)."""
    x, n = data["x"] * 1.0, int(data["N"])
    k, rho = rr.gamma(rr.key("key"), 25.0, 1.0 / 4.0)
    k, alpha = rr.halfnormal(k, 2.0)
    k, sigma = rr.halfnormal(k, 1.0)
    cov = _gp_cov(x, alpha, rho, rt) + sigma * np.eye(n)  # Stan adds sigma, not sigma^2
    k, y = rr.multivariate_normal(k, np.zeros(n), cov)
    v = {n_: value_var(x_, n_) for n_, x_ in (("rho", rho), ("alpha", alpha), ("sigma", sigma))}
    values = {rho: v["rho"], alpha: v["alpha"], sigma: v["sigma"], y: data["y"] * 1.0}
    params = {"rho": constrained(rho, v["rho"]), "alpha": constrained(alpha, v["alpha"])}
    params["sigma"] = constrained(sigma, v["sigma"])
    return Model(values, list(v.values()), params)


def _mvn_lpdf(y: Any, cov: Any) -> jax.Array:
    """log N(y; 0, cov) through the Cholesky factor."""
    chol = jnp.linalg.cholesky(cov)
    z = jax.scipy.linalg.solve_triangular(chol, y, lower=True)
    return -0.5 * z @ z - jnp.sum(jnp.log(jnp.diag(chol))) - 0.5 * len(y) * LOG_2PI


def gp_regr_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``gp_regr`` by hand (``jax.numpy``) on the same flat layout."""
    x, y = data["x"] * 1.0, data["y"] * 1.0
    rho, jac_rho = positive(p["rho"])
    alpha, jac_alpha = positive(p["alpha"])
    sigma, jac_sigma = positive(p["sigma"])
    cov = _gp_cov(x, alpha, rho, jnp) + sigma * jnp.eye(len(x))
    return (
        24.0 * jnp.log(rho)
        - 4.0 * rho
        + normal_lpdf(alpha, 0.0, 2.0)
        + normal_lpdf(sigma, 0.0, 1.0)
        + jac_rho
        + jac_alpha
        + jac_sigma
        + _mvn_lpdf(y, cov)
    )


def gp_regr_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``gp_regr`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist

    x, y = data["x"] * 1.0, data["y"] * 1.0

    def model() -> None:
        rho = numpyro.sample("rho", dist.Gamma(25.0, 4.0))
        alpha = numpyro.sample("alpha", dist.HalfNormal(2.0))
        sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
        cov = _gp_cov(x, alpha, rho, jnp) + sigma * jnp.eye(len(x))
        numpyro.sample("y", dist.MultivariateNormal(jnp.zeros(len(x)), cov), obs=y)

    return model


# --- a two-component normal mixture, its component indicator summed out --------------------


def gauss_mix(data: dict) -> Model:
    """Stan's low_dim_gauss_mix: y_n ~ theta Normal(mu_1, sigma_1) + (1 - theta) Normal(mu_2,
    sigma_2)."""
    y = data["y"] * 1.0
    k, mu = rr.normal(rr.key("key"), 0.0, 2.0, size=(2,))
    k, sigma = rr.halfnormal(k, 2.0, size=(2,))
    k, theta = rr.beta(k, 5.0, 5.0)
    k, first = rr.bernoulli(k, theta, size=y.shape)  # Stan's log_mix: theta weighs mu[1]
    k, obs = rr.normal(k, rt.where(first, mu[0], mu[1]), rt.where(first, sigma[0], sigma[1]))
    v = {"mu": rt.vector("mu", shape=(2,)), "sigma": value_var(sigma, "sigma")}
    v["theta"] = value_var(theta, "theta")
    values = {mu: v["mu"], sigma: v["sigma"], theta: v["theta"], obs: y}
    params = {
        "mu": rl.transforms.ordered.backward(v["mu"]),
        "sigma": constrained(sigma, v["sigma"]),
    }
    params["theta"] = constrained(theta, v["theta"])
    return Model(values, list(v.values()), params, transforms={mu: rl.transforms.ordered})


def gauss_mix_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``gauss_mix`` by hand (``jax.numpy``) on the same flat layout."""
    y = data["y"] * 1.0
    mu = jnp.cumsum(jnp.concatenate([p["mu"][:1], jnp.exp(p["mu"][1:])]))
    sigma, jac_sigma = positive(p["sigma"])
    theta, jac_theta = bounded(p["theta"], 0.0, 1.0)
    first = jnp.log(theta) - 0.5 * ((y - mu[0]) / sigma[0]) ** 2 - jnp.log(sigma[0])
    second = jnp.log1p(-theta) - 0.5 * ((y - mu[1]) / sigma[1]) ** 2 - jnp.log(sigma[1])
    return (
        normal_lpdf(sigma, 0.0, 2.0)
        + jac_sigma
        + normal_lpdf(mu, 0.0, 2.0)
        + jnp.sum(p["mu"][1:])
        + 4.0 * jnp.log(theta)
        + 4.0 * jnp.log1p(-theta)
        + jac_theta
        + jnp.sum(jnp.logaddexp(first, second) - 0.5 * LOG_2PI)
    )


def gauss_mix_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``gauss_mix`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    y = data["y"] * 1.0

    def model() -> None:
        mu = numpyro.sample("mu", dist.ImproperUniform(constraints.ordered_vector, (), (2,)))
        numpyro.factor("mu_prior", dist.Normal(0.0, 2.0).log_prob(mu).sum())
        sigma = numpyro.sample("sigma", dist.HalfNormal(2.0).expand([2]))
        theta = numpyro.sample("theta", dist.Beta(5.0, 5.0))
        weights = dist.Categorical(probs=jnp.stack([theta, 1.0 - theta]))
        numpyro.sample("y", dist.MixtureSameFamily(weights, dist.Normal(mu, sigma)), obs=y)

    return model


# --- dogs (non-hierarchical): an LKJ prior on the correlation of two logit coefficients ----


def _dogs_history(data: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, prev_shock, prev_avoid)``: each dog's shocks and avoidances before trial t."""
    y = np.asarray(data["y"])
    before = np.concatenate([np.zeros_like(y[:, :1]), np.cumsum(y, axis=1)[:, :-1]], axis=1)
    trials = np.arange(y.shape[1])
    return y, before * 1.0, (trials - before) * 1.0


def dogs(data: dict) -> Model:
    """Stan's dogs_nonhierarchical: y_jt ~ Bernoulli(a_j^shocks b_j^avoidances), (logit a,
    logit b) correlated (LKJ)."""
    y, prev_shock, prev_avoid = _dogs_history(data)
    k, mu = rr.logistic(rr.key("key"), 0.0, 1.0, size=(2,))
    k, sigma = rr.halfnormal(k, 1.0, size=(2,))
    k, chol = rr.lkj_cholesky(k, 2, 2.0)
    k, z = rr.normal(k, 0.0, 1.0, size=(y.shape[0], 2))
    logit_ab = mu + z @ (sigma[:, None] * chol)  # Stan's z * diag_pre_multiply(sigma, L)
    log_p = prev_shock * rt.log_sigmoid(logit_ab[:, :1]) + prev_avoid * rt.log_sigmoid(
        logit_ab[:, 1:]
    )
    k, obs = rr.bernoulli(k, rt.exp(log_p))  # p = a^prev_shock b^prev_avoid
    v = {
        "mu_logit_ab": value_var(mu, "mu_logit_ab"),
        "sigma_logit_ab": value_var(sigma, "sigma_logit_ab"),
    }
    v["L_logit_ab"] = rt.vector("L_logit_ab", shape=(1,))
    v["z"] = value_var(z, "z")
    values = {mu: v["mu_logit_ab"], sigma: v["sigma_logit_ab"], chol: v["L_logit_ab"], z: v["z"]}
    values[obs] = y
    params = {
        "mu_logit_ab": v["mu_logit_ab"],
        "sigma_logit_ab": constrained(sigma, v["sigma_logit_ab"]),
    }
    params["L_logit_ab"] = rl.transforms.cholesky_corr.backward(v["L_logit_ab"])
    transforms = {chol: rl.transforms.cholesky_corr}
    return Model(values, list(v.values()), params, transforms=transforms)


def dogs_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``dogs`` by hand (``jax.numpy``) on the same flat layout."""
    y, prev_shock, prev_avoid = _dogs_history(data)
    mu = p["mu_logit_ab"]
    sigma, jac_sigma = positive(p["sigma_logit_ab"])
    t = jnp.tanh(p["L_logit_ab"][0])  # Stan's cholesky_factor_corr[2]: one partial correlation
    chol = jnp.array([[1.0, 0.0], [t, jnp.sqrt(1.0 - t**2)]])
    jac_chol = jnp.log1p(-(t**2))
    # lkj_corr_cholesky(L | eta) = sum_(k=2..K) (K - k + 2 eta - 2) log L_kk: 2 log L_22 here
    lkj = 2.0 * jnp.log(chol[1, 1])
    logit_ab = mu + p["z"] @ (sigma[:, None] * chol)
    log_p = prev_shock * jax.nn.log_sigmoid(logit_ab[:, :1]) + prev_avoid * jax.nn.log_sigmoid(
        logit_ab[:, 1:]
    )
    log_p_of_0 = jnp.where(y == 1, -1.0, log_p)  # p = 1 where y = 1 on the first trial
    bernoulli = jnp.where(y == 1, log_p, jnp.log(-jnp.expm1(log_p_of_0)))
    logistic = jnp.sum(-mu - 2.0 * jax.nn.softplus(-mu))
    return (
        jnp.sum(bernoulli)
        + logistic
        + normal_lpdf(sigma, 0.0, 1.0)
        + jac_sigma
        + lkj
        + jac_chol
        + normal_lpdf(p["z"], 0.0, 1.0)
    )


def dogs_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``dogs`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist

    y, prev_shock, prev_avoid = _dogs_history(data)

    def model() -> None:
        mu = numpyro.sample("mu_logit_ab", dist.Logistic(0.0, 1.0).expand([2]))
        sigma = numpyro.sample("sigma_logit_ab", dist.HalfNormal(1.0).expand([2]))
        chol = numpyro.sample("L_logit_ab", dist.LKJCholesky(2, 2.0))
        z = numpyro.sample("z", dist.Normal(0.0, 1.0).expand([y.shape[0], 2]))
        logit_ab = mu + z @ (sigma[:, None] * chol)
        log_p = prev_shock * jax.nn.log_sigmoid(logit_ab[:, :1])
        log_p = log_p + prev_avoid * jax.nn.log_sigmoid(logit_ab[:, 1:])
        numpyro.sample("y", dist.Bernoulli(probs=jnp.exp(log_p)), obs=y)

    return model
