"""posteriordb posteriors (github.com/stan-dev/posteriordb) written three ways: with
rewritekit's PPL (``rewritekit.random`` draws, ``rewritekit.logprob.joint_logprob`` with
the default transforms), by hand in ``jax.numpy``, and in NumPyro.

``tests/logprob/test_posteriordb.py`` checks the first against the second (log-density
differences between points); ``bench/posteriordb.py`` samples the first and the third with
NUTS and compares both with posteriordb's reference draws. The data and the reference
draws' per-parameter mean and sd are vendored in ``tests/data/posteriordb``.

Every model follows its Stan program's constrained parameters and their transforms
(``<lower=0>``: ``log``; ``<lower=a, upper=b>``: ``interval``; ``ordered``): the flat
vector holds the unconstrained values in the order of ``Model.free``, and the hand-written
density reads them from the same places. A Stan parameter with no prior statement (an
improper flat prior) is a plain input, not a draw (``flat``), with its transform's
log-Jacobian added, as Stan adds it; log-densities then agree with Stan's up to a constant.

Example:
    >>> from posteriordb_core import density_graph, load_data
    >>> posterior = POSTERIORS["eight_schools-eight_schools_noncentered"]
    >>> packing, logp, params = density_graph(posterior, load_data(posterior.name))
    >>> packing.names
    ('mu', 'tau', 'theta_trans')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import posteriordb_extra as extra
import posteriordb_latent as latent
import posteriordb_series as series
from posteriordb_core import (
    Model,
    Posterior,
    cauchy_lpdf,
    constrained,
    flat,
    normal_lpdf,
    positive,
    value_var,
)

import rewritekit.logprob as rl
import rewritekit.random as rr


def posterior(name: str) -> Posterior:
    """The posterior called ``name`` (posteriordb's ``<data>-<model>``).

    Raises:
        KeyError: no such posterior here (the message lists the known ones).
    """
    if name not in POSTERIORS:
        raise KeyError(f"posteriordb: no posterior {name!r} here; known: {', '.join(POSTERIORS)}")
    return POSTERIORS[name]


# --- eight schools (non-centred): hierarchical ---------------------------------------------


def eight_schools(data: dict) -> Model:
    """Stan's eight_schools_noncentered: theta = mu + tau theta_trans, y ~ Normal(theta, sigma)."""
    k, theta_trans = rr.normal(rr.key("key"), 0.0, 1.0, size=(int(data["J"]),))
    k, mu = rr.normal(k, 0.0, 5.0)
    k, tau = rr.halfcauchy(k, 5.0)
    theta = theta_trans * tau + mu
    k, y = rr.normal(k, theta, data["sigma"].astype(float))
    v = {"mu": value_var(mu, "mu"), "tau": value_var(tau, "tau")}
    v["theta_trans"] = value_var(theta_trans, "theta_trans")
    values = {theta_trans: v["theta_trans"], mu: v["mu"], tau: v["tau"], y: data["y"] * 1.0}
    tau_c = constrained(tau, v["tau"])
    return Model(
        values,
        [v["mu"], v["tau"], v["theta_trans"]],
        {"mu": v["mu"], "tau": tau_c, "theta": v["theta_trans"] * tau_c + v["mu"]},
    )


def eight_schools_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``eight_schools`` by hand (``jax.numpy``) on the same flat layout."""
    tau, jac = positive(p["tau"])
    theta = p["theta_trans"] * tau + p["mu"]
    return (
        normal_lpdf(p["theta_trans"], 0.0, 1.0)
        + normal_lpdf(data["y"], theta, data["sigma"])
        + normal_lpdf(p["mu"], 0.0, 5.0)
        + cauchy_lpdf(tau, 0.0, 5.0)
        + jac
    )


def eight_schools_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``eight_schools`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist

    def model() -> None:
        theta_trans = numpyro.sample("theta_trans", dist.Normal(0.0, 1.0).expand([data["J"]]))
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
        theta = numpyro.deterministic("theta", theta_trans * tau + mu)
        numpyro.sample("y", dist.Normal(theta, data["sigma"] * 1.0), obs=data["y"] * 1.0)

    return model


# --- linear regressions: flat or weak priors ------------------------------------------------


def _regression(
    design: np.ndarray, y: np.ndarray, beta_prior: Any, sigma_prior: str, scale: float
) -> Model:
    """``y ~ Normal(design @ beta, sigma)``. ``beta_prior``: ``None`` (flat) or
    ``(loc, scale)`` of a normal; ``sigma_prior``: ``"flat"``, ``"halfcauchy"`` or
    ``"halfnormal"`` with ``scale``."""
    k = rr.key("key")
    values, extra = {}, []
    if beta_prior is None:
        beta, beta_v, _ = flat("beta", shape=(design.shape[1],))
    else:
        k, beta = rr.normal(k, *beta_prior, size=(design.shape[1],))
        beta_v = values[beta] = value_var(beta, "beta")
    if sigma_prior == "flat":
        sigma, sigma_v, extra = flat("sigma", transform=rl.transforms.log)
        sigma_c = sigma
    else:
        sampler = rr.halfcauchy if sigma_prior == "halfcauchy" else rr.halfnormal
        k, sigma = sampler(k, scale)
        sigma_v = values[sigma] = value_var(sigma, "sigma")
        sigma_c = constrained(sigma, sigma_v)
    k, obs = rr.normal(k, design @ beta, sigma)
    values[obs] = y
    free = [beta_v, sigma_v]
    return Model(values, free, {"beta": beta_v, "sigma": sigma_c}, extra=extra)


def _regression_hand(p: dict, design: Any, y: Any, beta_prior: Any, sigma_prior: str, scale: float):
    sigma, jac = positive(p["sigma"])
    prior = jac
    if beta_prior is not None:
        prior = prior + normal_lpdf(p["beta"], *beta_prior)
    if sigma_prior == "halfcauchy":
        prior = prior + cauchy_lpdf(sigma, 0.0, scale)
    elif sigma_prior == "halfnormal":
        prior = prior + normal_lpdf(sigma, 0.0, scale)
    return prior + normal_lpdf(y, design @ p["beta"], sigma)


def _regression_numpyro(design: Any, y: Any, beta_prior: Any, sigma_prior: str, scale: float):
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    def model() -> None:
        if beta_prior is None:
            beta_dist = dist.ImproperUniform(constraints.real, (), (design.shape[1],))
        else:
            beta_dist = dist.Normal(*beta_prior).expand([design.shape[1]])
        beta = numpyro.sample("beta", beta_dist)
        if sigma_prior == "flat":
            sigma_dist = dist.ImproperUniform(constraints.positive, (), ())
        elif sigma_prior == "halfcauchy":
            sigma_dist = dist.HalfCauchy(scale)
        else:
            sigma_dist = dist.HalfNormal(scale)
        sigma = numpyro.sample("sigma", sigma_dist)
        numpyro.sample("y", dist.Normal(design @ beta, sigma), obs=y)

    return model


@dataclass(frozen=True)
class Regression:
    """A linear regression posterior: ``design(data) -> (X, y)`` and its priors."""

    design: Callable[[dict], tuple[np.ndarray, np.ndarray]]
    beta_prior: Any
    sigma_prior: str
    scale: float = 1.0

    def build(self, data: dict) -> Model:
        return _regression(*self.design(data), self.beta_prior, self.sigma_prior, self.scale)

    def hand(self, p: dict, data: dict) -> jax.Array:
        x, y = self.design(data)
        return _regression_hand(p, x, y, self.beta_prior, self.sigma_prior, self.scale)

    def numpyro(self, data: dict) -> Callable[[], None]:
        x, y = self.design(data)
        return _regression_numpyro(x, y, self.beta_prior, self.sigma_prior, self.scale)

    def centre(self, data: dict) -> dict[str, Any]:
        return _least_squares(*self.design(data))


def _least_squares(design: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """The least-squares fit ``{"beta", "sigma": log(residual sd)}``: near the posterior."""
    beta = np.linalg.lstsq(design, y, rcond=None)[0]
    return {"beta": beta, "sigma": np.log(np.std(y - design @ beta))}


def _columns(*columns: Any) -> np.ndarray:
    return np.stack(
        [np.broadcast_to(np.asarray(c, float), np.shape(columns[-1])) for c in columns], 1
    )


def _kidiq_interaction(data: dict) -> tuple[np.ndarray, np.ndarray]:
    hs, iq = data["mom_hs"], data["mom_iq"]
    return _columns(1.0, hs, iq, hs * iq), data["kid_score"] * 1.0


def _kidiq_momiq(data: dict) -> tuple[np.ndarray, np.ndarray]:
    return _columns(1.0, data["mom_iq"]), data["kid_score"] * 1.0


def _logmesquite_logvas(data: dict) -> tuple[np.ndarray, np.ndarray]:
    d1, d2 = data["diam1"], data["diam2"]
    columns = (
        1.0,
        np.log(d1 * d2 * data["canopy_height"]),
        np.log(d1 * d2),
        np.log(d1 / d2),
        np.log(data["total_height"]),
        np.log(data["density"]),
        data["group"],
    )
    return _columns(*columns), np.log(data["weight"])


def _logearn_height(data: dict) -> tuple[np.ndarray, np.ndarray]:
    return _columns(1.0, data["height"]), np.log(data["earn"])


def _blr(data: dict) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(data["X"], float), data["y"] * 1.0


REGRESSIONS = {
    "kidiq-kidscore_momiq": Regression(_kidiq_momiq, None, "halfcauchy", 2.5),
    "kidiq-kidscore_interaction": Regression(_kidiq_interaction, None, "halfcauchy", 2.5),
    "mesquite-logmesquite_logvas": Regression(_logmesquite_logvas, None, "flat"),
    "earnings-logearn_height": Regression(_logearn_height, None, "flat"),
    "sblrc-blr": Regression(_blr, (0.0, 10.0), "halfnormal", 10.0),
    "sblri-blr": Regression(_blr, (0.0, 10.0), "halfnormal", 10.0),
}


# --- Kilpisjärvi: a linear trend, normal priors, flat sigma ----------------------------------


def kilpisjarvi(data: dict) -> Model:
    """Stan's kilpisjarvi: y ~ Normal(alpha + beta x, sigma), sigma flat."""
    x, y = data["x"] * 1.0, data["y"] * 1.0
    k, alpha = rr.normal(rr.key("key"), data["pmualpha"], data["psalpha"])
    k, beta = rr.normal(k, data["pmubeta"], data["psbeta"])
    sigma, sigma_v, jac = flat("sigma", transform=rl.transforms.log)
    k, obs = rr.normal(k, alpha + beta * x, sigma)
    v = {"alpha": value_var(alpha, "alpha"), "beta": value_var(beta, "beta")}
    values = {alpha: v["alpha"], beta: v["beta"], obs: y}
    return Model(values, [*v.values(), sigma_v], {**v, "sigma": sigma}, extra=jac)


def kilpisjarvi_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``kilpisjarvi`` by hand (``jax.numpy``) on the same flat layout."""
    sigma, jac = positive(p["sigma"])
    return (
        normal_lpdf(p["alpha"], data["pmualpha"], data["psalpha"])
        + normal_lpdf(p["beta"], data["pmubeta"], data["psbeta"])
        + jac
        + normal_lpdf(data["y"] * 1.0, p["alpha"] + p["beta"] * data["x"], sigma)
    )


def kilpisjarvi_centre(data: dict) -> dict[str, Any]:
    """The least-squares line: the tests' centre for ``kilpisjarvi``."""
    fit = _least_squares(_columns(1.0, data["x"]), data["y"] * 1.0)
    return {"alpha": fit["beta"][0], "beta": fit["beta"][1], "sigma": fit["sigma"]}


def kilpisjarvi_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``kilpisjarvi`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    def model() -> None:
        alpha = numpyro.sample("alpha", dist.Normal(data["pmualpha"], data["psalpha"]))
        beta = numpyro.sample("beta", dist.Normal(data["pmubeta"], data["psbeta"]))
        sigma = numpyro.sample("sigma", dist.ImproperUniform(constraints.positive, (), ()))
        numpyro.sample("y", dist.Normal(alpha + beta * data["x"], sigma), obs=data["y"] * 1.0)

    return model


# --- a logit GLM (no reference draws in posteriordb): NES vote on income ---------------------


def nes_logit(data: dict) -> Model:
    """Stan's nes_logit_model: vote ~ BernoulliLogit(alpha + beta income), flat priors."""
    alpha, alpha_v, _ = flat("alpha")
    beta, beta_v, _ = flat("beta", shape=(1,))
    _, vote = rr.bernoulli(rr.key("key"), logit=alpha + data["income"] * beta[0])
    return Model({vote: data["vote"]}, [alpha_v, beta_v], {"alpha": alpha, "beta": beta})


def nes_logit_hand(p: dict, data: dict) -> jax.Array:
    """The density of ``nes_logit`` by hand (``jax.numpy``) on the same flat layout."""
    eta = p["alpha"] + data["income"] * p["beta"][0]
    return jnp.sum(data["vote"] * eta - jnp.logaddexp(0.0, eta))


def nes_logit_numpyro(data: dict) -> Callable[[], None]:
    """The model of ``nes_logit`` in NumPyro."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.distributions import constraints

    def model() -> None:
        alpha = numpyro.sample("alpha", dist.ImproperUniform(constraints.real, (), ()))
        beta = numpyro.sample("beta", dist.ImproperUniform(constraints.real, (), (1,)))
        eta = alpha + data["income"] * beta[0]
        numpyro.sample("vote", dist.BernoulliLogits(eta), obs=data["vote"])

    return model


POSTERIORS = {
    p.name: p
    for p in [
        Posterior(
            "eight_schools-eight_schools_noncentered",
            "hierarchical",
            eight_schools,
            eight_schools_hand,
            eight_schools_numpyro,
        ),
        Posterior("arK-arK", "time series, AR(5)", series.ark, series.ark_hand, series.ark_numpyro),
        Posterior(
            "arma-arma11",
            "time series, ARMA(1,1)",
            series.arma11,
            series.arma11_hand,
            series.arma11_numpyro,
        ),
        Posterior(
            "garch-garch11",
            "time series, GARCH(1,1)",
            series.garch11,
            series.garch11_hand,
            series.garch11_numpyro,
        ),
        Posterior(
            "gp_pois_regr-gp_pois_regr",
            "GLM, Poisson log link (latent GP)",
            latent.gp_pois_regr,
            latent.gp_pois_regr_hand,
            latent.gp_pois_regr_numpyro,
        ),
        Posterior(
            "gp_pois_regr-gp_regr",
            "GP regression",
            latent.gp_regr,
            latent.gp_regr_hand,
            latent.gp_regr_numpyro,
        ),
        *(
            Posterior(name, "linear regression", r.build, r.hand, r.numpyro, r.centre)
            for name, r in REGRESSIONS.items()
        ),
        Posterior(
            "kilpisjarvi_mod-kilpisjarvi",
            "linear regression",
            kilpisjarvi,
            kilpisjarvi_hand,
            kilpisjarvi_numpyro,
            kilpisjarvi_centre,
        ),
        Posterior(
            "low_dim_gauss_mix-low_dim_gauss_mix",
            "mixture (indicator summed out)",
            latent.gauss_mix,
            latent.gauss_mix_hand,
            latent.gauss_mix_numpyro,
        ),
        Posterior(
            "hmm_example-hmm_example",
            "HMM (states summed out)",
            series.hmm,
            series.hmm_hand,
            series.hmm_numpyro,
        ),
        Posterior(
            "dogs-dogs_nonhierarchical",
            "LKJ correlation, Bernoulli",
            latent.dogs,
            latent.dogs_hand,
            latent.dogs_numpyro,
        ),
        Posterior(
            "nes_logit_data-nes_logit_model",
            "GLM, logit link",
            nes_logit,
            nes_logit_hand,
            nes_logit_numpyro,
        ),
        *extra.EXTRA,  # simulated: a probit GLM, ordinal, censored and truncated likelihoods
    ]
}
