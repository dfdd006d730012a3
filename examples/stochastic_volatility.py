"""Stochastic volatility, end to end: a time-series model written with ``rk.scan`` (the
key threaded through the carry with the log-volatility), its log-density derived by
``rewritekit.logprob`` (a scan over the steps), compiled to JAX with its gradient, sampled
with BlackJAX NUTS, and checked against NumPyro's NUTS on the same model and data.

Run from the repository root (the sampler helpers come from ``examples.eight_schools``):
``.venv/bin/python -m examples.stochastic_volatility [--steps 500] [--warmup 1000]
[--samples 1000] [--chains 4] [--seed 0] [--no-compare]`` (needs the ``examples`` extra:
blackjax, numpyro).

The model, for daily returns in percent (Kim, Shephard and Chib 1998)::

    mu ~ Normal(0, 5)        h_0 ~ Normal(mu, sigma / sqrt(1 - phi^2))
    phi ~ Uniform(-1, 1)     h_t ~ Normal(mu + phi (h_{t-1} - mu), sigma)
    sigma ~ HalfNormal(1)    y_t ~ Normal(0, exp(h_t / 2))   (observed), t = 1..T

written in its non-centred form: the scan draws ``eps_t ~ Normal(0, 1)`` and computes
``h_t = mu + phi (h_{t-1} - mu) + sigma eps_t`` (``h_0`` from ``eps_0`` likewise), and the
sampler moves on the ``eps``. The centred form (``h_t`` drawn, its path the value) has the
same posterior, and a density that the loop rules turn into array operations, but NUTS
mixes badly on it (docs/ppl.md, "Time series").

The returns are drawn from the model itself with the ``TRUE`` parameters (an S&P-like
series: about 0.8 % daily volatility, persistent, calm and turbulent stretches) and a
fixed seed, by the compiled forward sampler on the NumPy backend.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt
from examples.eight_schools import jax_logdensity, normal_logpdf, nuts, summarize
from rewritekit.ir import Var

TRUE = {"mu": -0.5, "phi": 0.95, "sigma": 0.25}
PARAMETERS = ("mu", "phi", "sigma")


@dataclass(frozen=True)
class Model:
    """The model's graph: the key input and the random quantities drawn from it."""

    key: Var
    mu: Var
    phi: Var
    sigma: Var
    eps0: Var  # h_0 = mu + sigma / sqrt(1 - phi^2) eps0
    eps: Var  # the innovations eps_1..eps_T: stacked draws of the scan
    h: Var  # the log-volatilities h_1..h_T (computed from them)
    y: Var  # the returns y_1..y_T: stacked draws of the scan


def series(key: Var, mu: Any, phi: Any, sigma: Any, steps: int) -> tuple[Var, ...]:
    """``(eps0, eps, h, y)`` given the parameters: a scan draws ``eps_t`` and ``y_t`` at
    each step, its carry the key and ``h_{t-1}``; ``h_0`` is from the stationary
    distribution of the AR(1) path."""
    k, eps0 = rr.normal(key, 0.0, 1.0)
    h0 = mu + sigma / rt.sqrt(1.0 - phi**2) * eps0

    def step(carry: tuple[Var, Var], _: None) -> tuple[tuple[Var, Var], tuple[Var, ...]]:
        k, h_prev = carry
        k, eps = rr.normal(k, 0.0, 1.0)
        h = mu + phi * (h_prev - mu) + sigma * eps
        k, y = rr.normal(k, 0.0, rt.exp(h / 2.0))
        return (k, h), (eps, h, y)

    _, (eps, h, y) = rk.scan(step, (k, h0), length=steps)
    return eps0, eps, h, y


def model(steps: int) -> Model:
    """The generative model: the three parameters drawn from their priors, then ``series``.

    Example:
        >>> m = model(500)
        >>> m.y.type
        TensorType(dtype='float64', shape=(500,))
    """
    key = rr.key("key")
    k, mu = rr.normal(key, 0.0, 5.0)
    k, phi = rr.uniform(k, -1.0, 1.0)
    k, sigma = rr.halfnormal(k, 1.0)
    return Model(key, mu, phi, sigma, *series(k, mu, phi, sigma, steps))


def simulate(steps: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Returns and log-volatilities drawn with the ``TRUE`` parameters (NumPy backend, whose
    draws do not change with the JAX version).

    Example:
        >>> y, h = simulate(500, seed=0)
        >>> y.shape
        (500,)
    """
    key = rr.key("key")
    *_, h, y = series(key, *(TRUE[name] for name in PARAMETERS), steps)
    y_draw, h_draw = rk.function([key], [y, h], backend="numpy")(rr.seed(seed))
    return np.asarray(y_draw), np.asarray(h_draw)


@dataclass(frozen=True)
class Density:
    """The compiled posterior density on one flat unconstrained vector.

    Attributes:
        packing: how ``[mu, phi, sigma, eps0, eps]`` sit in the flat vector (``phi`` on
            the log-odds scale of (-1, 1), ``sigma`` on the log scale).
        logp_grad: ``flat -> [logp, d logp / d flat]`` (JAX backend).
        constrained: ``flat -> [mu, phi, sigma]``, mapped back with their transforms.
    """

    packing: rl.Packing
    logp_grad: rk.CompiledFunction
    constrained: rk.CompiledFunction


def density_graph(m: Model, y: np.ndarray) -> tuple[rl.Packing, Var, Var, list[Var]]:
    """The joint log-density of ``m`` given the returns ``y``, as graphs of one flat vector.

    Returns:
        ``(packing, logp, grad, [mu, phi, sigma])``: the parameters on their own scale.
    """
    steps = m.eps.type.shape[0]
    names = ("mu", "phi", "sigma", "eps0")
    scalars = {name: rt.scalar(name) for name in names}
    eps_v = rt.tensor("eps", shape=(steps,))
    values = {getattr(m, name): scalars[name] for name in names}
    values.update({m.eps: eps_v, m.y: y})
    logp = rl.joint_logprob(values, transforms="default")  # phi, sigma: unconstrained
    packing = rl.flatten_values([*scalars.values(), eps_v])
    back = [
        scalars["mu"],
        rl.default_transform(m.phi).backward(scalars["phi"]),
        rl.default_transform(m.sigma).backward(scalars["sigma"]),
    ]
    flat_logp = packing.substitute(logp)
    return packing, flat_logp, rk.grad(flat_logp, packing.flat), packing.substitute(back)


def density(m: Model, y: np.ndarray) -> Density:
    """``density_graph`` compiled (JAX backend).

    Example:
        >>> d = density(model(500), simulate(500)[0])
        >>> logp, grad = d.logp_grad(np.zeros(d.packing.size))
    """
    packing, logp, grad, back = density_graph(m, y)
    logp_grad = rk.function([packing.flat], [logp, grad])
    return Density(packing, logp_grad, rk.function([packing.flat], back))


def hand_logp(flat: jax.Array, y: np.ndarray) -> jax.Array:
    """The same log-density written by hand with ``jax.numpy`` and ``lax.scan`` (the tests'
    reference): ``flat = [mu, logit((phi + 1) / 2), log(sigma), eps0, eps_1..eps_T]``."""
    mu, u, log_sigma, eps0, eps = flat[0], flat[1], flat[2], flat[3], flat[4:]
    phi = 2.0 * jax.nn.sigmoid(u) - 1.0
    sigma = jnp.exp(log_sigma)
    log_jacobians = np.log(2.0) + jax.nn.log_sigmoid(u) + jax.nn.log_sigmoid(-u) + log_sigma

    def step(h_prev: jax.Array, e: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = mu + phi * (h_prev - mu) + sigma * e
        return h, h

    _, h = jax.lax.scan(step, mu + sigma / jnp.sqrt(1.0 - phi**2) * eps0, eps)
    return (
        normal_logpdf(mu, 0.0, 5.0)
        - np.log(2.0)  # Uniform(-1, 1)
        + 0.5 * np.log(2.0 / np.pi)
        - 0.5 * sigma**2  # HalfNormal(1)
        + log_jacobians
        + normal_logpdf(eps0, 0.0, 1.0)
        + normal_logpdf(eps, 0.0, 1.0).sum()
        + normal_logpdf(y, 0.0, jnp.exp(h / 2.0)).sum()
    )


def numpyro_nuts(
    y: np.ndarray, num_warmup: int, num_samples: int, chains: int, seed: int
) -> tuple[dict[str, np.ndarray], int]:
    """The same model in NumPyro (its own ``scan`` over the steps, the same non-centred
    form), sampled with its NUTS (vectorized chains). Returns the draws of the parameters
    and the number of divergent transitions."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.contrib.control_flow import scan
    from numpyro.infer import MCMC, NUTS

    def stochastic_volatility(returns: np.ndarray) -> None:
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        phi = numpyro.sample("phi", dist.Uniform(-1.0, 1.0))
        sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
        eps0 = numpyro.sample("eps0", dist.Normal(0.0, 1.0))

        def step(h_prev: jax.Array, y_t: jax.Array) -> tuple[jax.Array, None]:
            eps = numpyro.sample("eps", dist.Normal(0.0, 1.0))
            h = mu + phi * (h_prev - mu) + sigma * eps
            numpyro.sample("y", dist.Normal(0.0, jnp.exp(h / 2.0)), obs=y_t)
            return h, None

        scan(step, mu + sigma / jnp.sqrt(1.0 - phi**2) * eps0, returns)

    mcmc = MCMC(
        NUTS(stochastic_volatility),
        num_warmup=num_warmup,
        num_samples=num_samples,
        num_chains=chains,
        chain_method="vectorized",
        progress_bar=False,
    )
    mcmc.run(jax.random.key(seed), y, extra_fields=("diverging",))
    draws = mcmc.get_samples(group_by_chain=True)
    divergences = int(np.asarray(mcmc.get_extra_fields()["diverging"]).sum())
    return {name: np.asarray(draws[name]) for name in PARAMETERS}, divergences


def main(
    steps: int = 500,
    num_warmup: int = 1000,
    num_samples: int = 1000,
    chains: int = 4,
    seed: int = 0,
    compare: bool = True,
) -> dict[str, Any]:
    """Simulate the returns, sample the posterior with BlackJAX (and NumPyro, if
    ``compare``), print the summaries and the comparison.

    Returns:
        ``{"rewritekit": {name: {"mean", "sd"}}, "divergences": n, "true": TRUE,
        "numpyro": {...}, "numpyro_divergences": n, "agree": bool (if compare),
        "seconds": {...}}``; ``agree``: every parameter's posterior means within 0.2
        posterior sd (NumPyro's) of each other.
    """
    y, _ = simulate(steps, seed)
    print(f"{steps} returns (%): sd {y.std():.2f}, largest |y| {np.abs(y).max():.2f}")
    m = model(steps)
    seconds = {}
    with jax.enable_x64(True):  # f.jax_fn follows the caller's setting: the model is float64
        t0 = time.perf_counter()
        d = density(m, y)
        positions, divergent = nuts(
            jax_logdensity(d), d.packing.size, num_warmup, num_samples, chains, seed
        )
        seconds["rewritekit + blackjax"] = time.perf_counter() - t0
        draws = jax.vmap(d.constrained.jax_fn)(positions.reshape(-1, d.packing.size))
    result: dict[str, Any] = {
        "rewritekit": summarize(dict(zip(PARAMETERS, map(np.asarray, draws), strict=True))),
        "divergences": int(divergent.sum()),
        "true": TRUE,
        "seconds": seconds,
    }
    if compare:
        with jax.enable_x64(True):
            t0 = time.perf_counter()
            theirs, divergences = numpyro_nuts(y, num_warmup, num_samples, chains, seed)
            seconds["numpyro"] = time.perf_counter() - t0
        result["numpyro"] = summarize(theirs)
        result["numpyro_divergences"] = divergences
        result["agree"] = all(_gap(result, name) <= 0.2 for name in PARAMETERS)
    _print(result, chains, num_samples)
    return result


def _gap(result: dict[str, Any], name: str) -> float:
    """|difference of the posterior means| in NumPyro's posterior sds."""
    ours, theirs = result["rewritekit"][name], result["numpyro"][name]
    return abs(ours["mean"] - theirs["mean"]) / theirs["sd"]


def _print(result: dict[str, Any], chains: int, num_samples: int) -> None:
    systems = [s for s in ("rewritekit", "numpyro") if s in result]
    print(f"posterior, {chains} chains x {num_samples} draws (mean / sd):")
    header = " | ".join(systems) + (" | difference / sd" if "numpyro" in result else "")
    print(f"| parameter | true | {header} |")
    print("|---|---:|" + "---:|" * (len(systems) + ("numpyro" in result)))
    for name in PARAMETERS:
        cells = [f"{result[s][name]['mean']:.3f} / {result[s][name]['sd']:.3f}" for s in systems]
        if "numpyro" in result:
            cells.append(f"{_gap(result, name):.3f}")
        print(f"| {name} | {TRUE[name]} | " + " | ".join(cells) + " |")
    print(f"divergent transitions (rewritekit + blackjax): {result['divergences']}")
    if "numpyro" in result:
        print(f"divergent transitions (numpyro): {result['numpyro_divergences']}")
        verdict = "agree" if result["agree"] else "DISAGREE"
        print(f"posterior means {verdict} within 0.2 posterior sd")
    print("wall time (s): " + ", ".join(f"{k} {v:.1f}" for k, v in result["seconds"].items()))


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500, help="length T of the series")
    parser.add_argument("--warmup", type=int, default=1000, help="adaptation steps per chain")
    parser.add_argument("--samples", type=int, default=1000, help="draws per chain")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-compare", action="store_true", help="skip the NumPyro run")
    args = parser.parse_args()
    main(args.steps, args.warmup, args.samples, args.chains, args.seed, not args.no_compare)


if __name__ == "__main__":
    _cli()
