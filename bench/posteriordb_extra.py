"""Four posteriors that posteriordb does not have (issue #18): a probit GLM, an ordinal
regression, a censored and a truncated normal likelihood, on data simulated once from known
parameters (``simulate``) and vendored as ``tests/data/posteriordb/sim-<name>.json``.

Each is written three ways as the posteriordb models are (``bench/posteriordb_models.py``
registers them): rewritekit's PPL, by hand in ``jax.numpy`` (exact log-space forms, for the
tests' differences), and in NumPyro, which is the bench's reference (no Stan reference
draws exist). Every JSON holds the parameters it was simulated from (``"true"``), the seed
and the generator (``"source"``); ``python bench/posteriordb_extra.py`` writes them again.

Example:
    >>> from posteriordb_core import load_data
    >>> data = load_data("sim-probit_glm")
    >>> data["X"].shape, data["true"]["beta"]
    ((200, 3), [-0.3, 0.8, -0.5])
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import log_ndtr
from posteriordb_core import DATA, Model, Posterior, constrained, normal_lpdf, positive, value_var

import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt

# --- the simulated data ----------------------------------------------------------------------


def _probit_data(rng: np.random.Generator) -> dict[str, Any]:
    """N = 200, an intercept and two standard-normal covariates, y ~ Bernoulli(Phi(X beta))."""
    beta = [-0.3, 0.8, -0.5]
    x = np.column_stack([np.ones(200), rng.standard_normal((200, 2))])
    eta = x @ beta
    y = (rng.standard_normal(200) < eta).astype(int)  # P(z < eta) = Phi(eta)
    return {"N": 200, "X": x, "y": y, "true": {"beta": beta}}


def _ordinal_data(rng: np.random.Generator) -> dict[str, Any]:
    """N = 200, two covariates, K = 4 classes: y = the number of cutpoints below
    X beta + Logistic(0, 1) noise."""
    beta, cutpoints = [1.0, -0.7], [-1.5, 0.0, 1.2]
    x = rng.standard_normal((200, 2))
    latent = x @ beta + rng.logistic(0.0, 1.0, 200)
    y = np.sum(latent[:, None] > np.asarray(cutpoints), axis=1)
    return {"N": 200, "K": 4, "X": x, "y": y, "true": {"beta": beta, "cutpoints": cutpoints}}


def _censored_data(rng: np.random.Generator) -> dict[str, Any]:
    """N = 100, y* ~ Normal(alpha + beta x, sigma), reported clipped to [lower, upper] (a
    detection limit below, saturation above)."""
    alpha, beta, sigma, lower, upper = 1.0, 0.3, 1.0, 1.3, 4.5
    x = rng.uniform(0.0, 10.0, 100)
    y = np.clip(alpha + beta * x + sigma * rng.standard_normal(100), lower, upper)
    true = {"alpha": alpha, "beta": beta, "sigma": sigma}
    return {"N": 100, "x": x, "y": y, "lower": lower, "upper": upper, "true": true}


def _truncated_data(rng: np.random.Generator) -> dict[str, Any]:
    """N = 100 draws of Normal(mu, sigma) kept where positive (rejection)."""
    mu, sigma = 0.5, 1.5
    y = np.empty(0)
    while len(y) < 100:
        draws = mu + sigma * rng.standard_normal(100)
        y = np.concatenate([y, draws[draws > 0.0]])
    return {"N": 100, "y": y[:100], "true": {"mu": mu, "sigma": sigma}}


SIMULATIONS = {
    "sim-probit_glm": (_probit_data, 20261101),
    "sim-ordinal": (_ordinal_data, 20261102),
    "sim-censored": (_censored_data, 20261103),
    "sim-truncated": (_truncated_data, 20261104),
}


def simulate(name: str) -> dict[str, Any]:
    """The data of ``name`` as vendored: simulated with ``numpy.random.default_rng(seed)``,
    floats rounded to 12 significant digits (the JSON stays small), lists for arrays.

    Example:
        >>> simulate("sim-truncated")["source"]
        'simulated by bench/posteriordb_extra.py, numpy.random.default_rng(20261104)'
    """
    make, seed = SIMULATIONS[name]
    data = make(np.random.default_rng(seed))
    out = {"source": f"simulated by bench/posteriordb_extra.py, numpy.random.default_rng({seed})"}
    for key, value in data.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            value = np.vectorize(lambda v: float(f"{v:.12g}"))(value)
        out[key] = value.tolist() if isinstance(value, np.ndarray) else value
    return out


# --- probit GLM: y ~ Bernoulli(Phi(X beta)) ---------------------------------------------------


def probit(data: dict) -> Model:
    """y ~ Bernoulli(ndtr(X beta)), beta ~ Normal(0, 2).

    The density ``joint_logprob`` finds is the Bernoulli's of p = ndtr(eta), ``xlogy(y, p)
    + (1 - y) log1p(-p)``, with no log-space form: exact to 1e-14 relative for |eta| <= 3
    (the data's range), about 1e-10 at |eta| = 5, -inf for y = 0 at eta > 8.3 (1 - p
    rounds to 0) and for y = 1 at eta < -37.5 (p underflows).
    """
    x = np.asarray(data["X"], float)
    k, beta = rr.normal(rr.key("key"), 0.0, 2.0, size=(x.shape[1],))
    k, y = rr.bernoulli(k, rt.ndtr(x @ beta))
    beta_v = value_var(beta, "beta")
    return Model({beta: beta_v, y: data["y"]}, [beta_v], {"beta": beta_v})


def _probit_loglik(beta: Any, data: dict) -> jax.Array:
    eta = jnp.asarray(data["X"], float) @ beta
    return jnp.sum(jnp.where(data["y"] == 1, log_ndtr(eta), log_ndtr(-eta)))


def probit_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``probit`` by hand: log Phi(eta) at 1, log Phi(-eta) at 0."""
    return normal_lpdf(p["beta"], 0.0, 2.0) + _probit_loglik(p["beta"], data)


def probit_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``probit`` in NumPyro (the likelihood in log space, as ``numpyro.factor``:
    ``Bernoulli(probs=ndtr(eta))`` rounds to -inf for y = 0 at eta > 8.3)."""
    import numpyro
    import numpyro.distributions as dist

    def model() -> None:
        beta = numpyro.sample("beta", dist.Normal(0.0, 2.0).expand([data["X"].shape[1]]))
        numpyro.factor("y", _probit_loglik(beta, data))

    return model


# --- ordinal regression: y ~ OrderedLogistic(X beta, cutpoints) -----------------------------


def ordinal(data: dict) -> Model:
    """y ~ OrderedLogistic(X beta, c), beta ~ Normal(0, 2.5), c ~ Normal(0, 5) ordered."""
    x = np.asarray(data["X"], float)
    k, beta = rr.normal(rr.key("key"), 0.0, 2.5, size=(x.shape[1],))
    k, cutpoints = rr.normal(k, 0.0, 5.0, size=(int(data["K"]) - 1,))
    k, y = rr.ordered_logistic(k, x @ beta, cutpoints)
    v = {"beta": value_var(beta, "beta"), "cutpoints": value_var(cutpoints, "cutpoints")}
    values = {beta: v["beta"], cutpoints: v["cutpoints"], y: data["y"]}
    params = {"beta": v["beta"], "cutpoints": rl.transforms.ordered.backward(v["cutpoints"])}
    return Model(values, list(v.values()), params, transforms={cutpoints: rl.transforms.ordered})


def _ordered(u: Any) -> tuple[jax.Array, jax.Array]:
    """``(cumsum(u[0], exp(u[1:])), log-Jacobian)``: Stan's ``ordered``."""
    return jnp.cumsum(jnp.concatenate([u[:1], jnp.exp(u[1:])])), jnp.sum(u[1:])


def ordinal_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``ordinal`` by hand: log(sigmoid(eta - c[y-1]) - sigmoid(eta - c[y]))."""
    cutpoints, jac = _ordered(p["cutpoints"])
    eta = jnp.asarray(data["X"], float) @ p["beta"]
    c = jnp.concatenate([jnp.array([-jnp.inf]), cutpoints, jnp.array([jnp.inf])])
    y = data["y"]
    probs = jax.nn.sigmoid(eta - c[y]) - jax.nn.sigmoid(eta - c[y + 1])
    return (
        normal_lpdf(p["beta"], 0.0, 2.5)
        + normal_lpdf(cutpoints, 0.0, 5.0)
        + jac
        + jnp.sum(jnp.log(probs))
    )


def ordinal_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``ordinal`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    x, n_cut = jnp.asarray(data["X"], float), int(data["K"]) - 1

    def model() -> None:
        beta = numpyro.sample("beta", dist.Normal(0.0, 2.5).expand([x.shape[1]]))
        ordered = dist.ImproperUniform(constraints.ordered_vector, (), (n_cut,))
        cutpoints = numpyro.sample("cutpoints", ordered)
        numpyro.factor("cutpoints_prior", dist.Normal(0.0, 5.0).log_prob(cutpoints).sum())
        numpyro.sample("y", dist.OrderedLogistic(x @ beta, cutpoints), obs=data["y"])

    return model


# --- censored normal regression: y = clip(y*, lower, upper) ----------------------------------


def censored(data: dict) -> Model:
    """y = clip(y*, lower, upper), y* ~ Normal(alpha + beta x, sigma); alpha, beta ~
    Normal(0, 5), sigma ~ HalfNormal(2)."""
    k, alpha = rr.normal(rr.key("key"), 0.0, 5.0)
    k, beta = rr.normal(k, 0.0, 5.0)
    k, sigma = rr.halfnormal(k, 2.0)
    k, latent = rr.normal(k, alpha + beta * data["x"], sigma)
    y = rt.clip(latent, data["lower"], data["upper"])
    v = {
        name: value_var(d, name) for name, d in (("alpha", alpha), ("beta", beta), ("sigma", sigma))
    }
    values = {alpha: v["alpha"], beta: v["beta"], sigma: v["sigma"], y: data["y"]}
    params = {"alpha": v["alpha"], "beta": v["beta"], "sigma": constrained(sigma, v["sigma"])}
    return Model(values, list(v.values()), params)


def _censored_loglik(alpha: Any, beta: Any, sigma: Any, data: dict) -> jax.Array:
    """log Phi((lower - mu) / sigma) at the lower limit, log Phi((mu - upper) / sigma) at the
    upper one, the normal density between."""
    y, mu = data["y"], alpha + beta * data["x"]
    inside = -0.5 * ((y - mu) / sigma) ** 2 - jnp.log(sigma) - 0.5 * np.log(2.0 * np.pi)
    below = log_ndtr((data["lower"] - mu) / sigma)
    above = log_ndtr((mu - data["upper"]) / sigma)
    where = jnp.where(y <= data["lower"], below, jnp.where(y >= data["upper"], above, inside))
    return jnp.sum(where)


def censored_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``censored`` by hand (``jax.numpy``) on the same flat layout."""
    sigma, jac = positive(p["sigma"])
    return (
        normal_lpdf(p["alpha"], 0.0, 5.0)
        + normal_lpdf(p["beta"], 0.0, 5.0)
        + normal_lpdf(sigma, 0.0, 2.0)
        + jac
        + _censored_loglik(p["alpha"], p["beta"], sigma, data)
    )


def censored_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``censored`` in NumPyro (the censored likelihood as ``numpyro.factor``)."""
    import numpyro
    import numpyro.distributions as dist

    def model() -> None:
        alpha = numpyro.sample("alpha", dist.Normal(0.0, 5.0))
        beta = numpyro.sample("beta", dist.Normal(0.0, 5.0))
        sigma = numpyro.sample("sigma", dist.HalfNormal(2.0))
        numpyro.factor("y", _censored_loglik(alpha, beta, sigma, data))

    return model


# --- truncated normal: y ~ Normal(mu, sigma) truncated to [0, inf) ---------------------------


def truncated(data: dict) -> Model:
    """y ~ Normal(mu, sigma) truncated to y >= 0; mu ~ Normal(0, 5), sigma ~ HalfNormal(5)."""
    k, mu = rr.normal(rr.key("key"), 0.0, 5.0)
    k, sigma = rr.halfnormal(k, 5.0)
    k, latent = rr.normal(k, mu, sigma, size=(int(data["N"]),))
    v = {"mu": value_var(mu, "mu"), "sigma": value_var(sigma, "sigma")}
    y = rl.truncate(latent, lower=0.0)
    values = {mu: v["mu"], sigma: v["sigma"], y: data["y"]}
    params = {"mu": v["mu"], "sigma": constrained(sigma, v["sigma"])}
    # y is observed: no transform (density_graph gives every draw its default one, here
    # lower_bound(0), which would read the data as unconstrained values)
    return Model(values, list(v.values()), params)


def truncated_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``truncated`` by hand: the normal's, less log P(Y >= 0) = log
    Phi(mu / sigma) per observation."""
    sigma, jac = positive(p["sigma"])
    mu, y = p["mu"], data["y"]
    return (
        normal_lpdf(mu, 0.0, 5.0)
        + normal_lpdf(sigma, 0.0, 5.0)
        + jac
        + normal_lpdf(y, mu, sigma)
        - len(y) * log_ndtr(mu / sigma)
    )


def truncated_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``truncated`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist

    def model() -> None:
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        sigma = numpyro.sample("sigma", dist.HalfNormal(5.0))
        numpyro.sample("y", dist.TruncatedNormal(mu, sigma, low=0.0), obs=data["y"])

    return model


def true_centre(data: dict) -> dict[str, Any]:
    """The tests' centre: the parameters the data were simulated from, unconstrained
    (``sigma``: its log; ``cutpoints``: the first and the logs of the gaps)."""
    centre = dict(data["true"])
    if "sigma" in centre:
        centre["sigma"] = np.log(centre["sigma"])
    if "cutpoints" in centre:
        c = np.asarray(centre["cutpoints"])
        centre["cutpoints"] = np.concatenate([c[:1], np.log(np.diff(c))])
    return centre


EXTRA = [
    Posterior(
        "sim-probit_glm",
        "GLM, probit link (simulated)",
        probit,
        probit_hand,
        probit_numpyro,
        true_centre,
    ),
    Posterior(
        "sim-ordinal",
        "ordinal logistic, K = 4 (simulated)",
        ordinal,
        ordinal_hand,
        ordinal_numpyro,
        true_centre,
    ),
    Posterior(
        "sim-censored",
        "censored normal regression (simulated)",
        censored,
        censored_hand,
        censored_numpyro,
        true_centre,
    ),
    Posterior(
        "sim-truncated",
        "truncated normal (simulated)",
        truncated,
        truncated_hand,
        truncated_numpyro,
        true_centre,
    ),
]


def main() -> None:
    """Write the four data files again (``tests/data/posteriordb/sim-*.json``)."""
    for name in SIMULATIONS:
        (DATA / f"{name}.json").write_text(json.dumps(simulate(name)) + "\n")


if __name__ == "__main__":
    main()
