"""Eight schools (non-centred), end to end: a model written with ``rewritekit.random``, its
log-density derived by ``rewritekit.logprob``, compiled to JAX with its gradient, sampled
with BlackJAX NUTS, and checked against NumPyro's NUTS on the same model.

Run: ``.venv/bin/python examples/eight_schools.py [--warmup 1000] [--samples 1000]
[--chains 4] [--seed 0] [--no-compare] [--all-chains]`` (needs the ``examples`` extra:
blackjax, numpyro).

The model (Rubin 1981; the non-centred form of Stan's and PyMC's examples)::

    mu ~ Normal(0, 5)                theta = mu + tau * theta_tilde
    tau ~ HalfCauchy(5)              y ~ Normal(theta, sigma)   (observed)
    theta_tilde ~ Normal(0, 1) x 8

The posterior means are about mu 4.4 and tau 3.6.
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
from rewritekit.ir import Var

Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


@dataclass(frozen=True)
class Model:
    """The model's graph: the key input and the random variables drawn from it."""

    key: Var
    mu: Var
    tau: Var
    theta_tilde: Var
    theta: Var
    y: Var


def model(sigma: np.ndarray = SIGMA) -> Model:
    """The generative model, one explicit key threaded through every draw.

    Example:
        >>> m = model()
        >>> m.y.type
        TensorType(dtype='float64', shape=(8,))
    """
    key = rr.key("key")
    k, mu = rr.normal(key, 0.0, 5.0)
    k, tau = rr.halfcauchy(k, 5.0)
    k, theta_tilde = rr.normal(k, 0.0, 1.0, size=(len(sigma),))
    theta = mu + tau * theta_tilde
    k, y = rr.normal(k, theta, sigma)
    return Model(key, mu, tau, theta_tilde, theta, y)


def forward_sampler(m: Model) -> rk.CompiledFunction:
    """Prior-predictive draws: ``f(rr.seed(n)) -> [mu, tau, theta, y]``, the same for the same key.

    Example:
        >>> mu, tau, theta, y = forward_sampler(model())(rr.seed(1))
    """
    return rk.function([m.key], [m.mu, m.tau, m.theta, m.y])


@dataclass(frozen=True)
class Density:
    """The compiled posterior density on one flat unconstrained vector.

    Attributes:
        packing: how ``[mu, log(tau), theta_tilde]`` sit in the flat vector (length 10).
        logp_grad: ``flat -> [logp, d logp / d flat]`` (JAX backend).
        constrained: ``flat -> [mu, tau]``, tau mapped back with its transform.
    """

    packing: rl.Packing
    logp_grad: rk.CompiledFunction
    constrained: rk.CompiledFunction


def density_graph(m: Model, y: np.ndarray = Y) -> tuple[rl.Packing, Var, Var, list[Var]]:
    """The joint log-density of ``m`` given ``y`` as graphs of one flat vector.

    Returns:
        ``(packing, logp, grad, [mu, tau])``: ``packing.flat`` holds
        ``[mu, log(tau), theta_tilde]`` (tau on the log scale, its default transform);
        ``grad`` is d logp / d flat; ``mu`` and ``tau`` are mapped back to their scale.
    """
    mu_v, tau_v = rt.scalar("mu"), rt.scalar("tau")
    theta_v = rt.tensor("theta_tilde", shape=m.theta_tilde.type.shape)
    values = {m.mu: mu_v, m.tau: tau_v, m.theta_tilde: theta_v, m.y: y}
    logp = rl.joint_logprob(values, transforms="default")  # tau_v now means log(tau)
    packing = rl.flatten_values([mu_v, tau_v, theta_v])
    flat_logp = packing.substitute(logp)
    tau = rl.default_transform(m.tau).backward(tau_v)
    back = [packing.substitute(mu_v), packing.substitute(tau)]
    return packing, flat_logp, rk.grad(flat_logp, packing.flat), back


def density(m: Model, y: np.ndarray = Y) -> Density:
    """``density_graph`` compiled (JAX backend).

    Example:
        >>> d = density(model())
        >>> logp, grad = d.logp_grad(np.zeros(10))
    """
    packing, logp, grad, back = density_graph(m, y)
    logp_grad = rk.function([packing.flat], [logp, grad])
    return Density(packing, logp_grad, rk.function([packing.flat], back))


def chains_density(m: Model, y: np.ndarray = Y, chains: int | None = None) -> rk.CompiledFunction:
    """Every chain's log-density and gradient in one call: ``flats (C, 10) -> [logp (C,),
    grad (C, 10)]``, ``rk.vectorize`` of the one-chain graphs over a leading chain axis
    (``chains``: a static number of chains, or None for any).

    Example:
        >>> f = chains_density(model())
        >>> logps, grads = f(np.zeros((4, 10)))
    """
    packing, logp, grad, _ = density_graph(m, y)
    flats = rt.matrix("flats", shape=(chains, packing.size))
    return rk.function([flats], rk.vectorize([logp, grad], {packing.flat: flats}))


def jax_logdensity(d: Density) -> Any:
    """``flat -> logp`` as a JAX function whose gradient is rewritekit's symbolic one.

    BlackJAX differentiates the log-density with ``jax.grad``; the custom VJP hands it the
    gradient graph ``rk.grad`` built (and the rules stabilized) instead of tracing again.
    """
    fn = d.logp_grad.jax_fn

    @jax.custom_vjp
    def logdensity(flat: jax.Array) -> jax.Array:
        return fn(flat)[0]

    def forward(flat: jax.Array) -> tuple[jax.Array, jax.Array]:
        value, grad = fn(flat)
        return value, grad

    def backward(grad: jax.Array, cotangent: jax.Array) -> tuple[jax.Array]:
        return (cotangent * grad,)

    logdensity.defvjp(forward, backward)
    return logdensity


def hand_logp(flat: jax.Array, y: np.ndarray = Y, sigma: np.ndarray = SIGMA) -> jax.Array:
    """The same log-density written by hand with ``jax.numpy`` (the reference for tests and
    ``bench/ppl.py``): ``flat = [mu, log(tau), theta_tilde x 8]``."""
    mu, log_tau, theta_tilde = flat[0], flat[1], flat[2:]
    tau = jnp.exp(log_tau)
    half_cauchy = jnp.log(2.0 / np.pi) - np.log(5.0) - jnp.log1p((tau / 5.0) ** 2) + log_tau
    return (
        normal_logpdf(mu, 0.0, 5.0)
        + half_cauchy
        + normal_logpdf(theta_tilde, 0.0, 1.0).sum()
        + normal_logpdf(y, mu + tau * theta_tilde, sigma).sum()
    )


def normal_logpdf(x: Any, loc: Any, scale: Any) -> jax.Array:
    """log N(x; loc, scale), elementwise, in jax.numpy (the hand-written references)."""
    return -0.5 * ((x - loc) / scale) ** 2 - jnp.log(scale) - 0.5 * np.log(2.0 * np.pi)


def nuts(
    logdensity: Any, dim: int, num_warmup: int, num_samples: int, chains: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """BlackJAX NUTS with Stan's window adaptation, ``chains`` chains under ``jax.vmap``.

    Chains start uniformly in [-2, 2] on the unconstrained scale (Stan's default).

    Returns:
        The draws, shape ``(chains, num_samples, dim)``, and the divergent-transition flags,
        shape ``(chains, num_samples)``.
    """
    import blackjax

    warmup = blackjax.window_adaptation(blackjax.nuts, logdensity)

    def one_chain(warm_key: jax.Array, sample_key: jax.Array, start: jax.Array) -> Any:
        (state, parameters), _ = warmup.run(warm_key, start, num_steps=num_warmup)
        kernel = blackjax.nuts(logdensity, **parameters).step

        def step(state: Any, key: jax.Array) -> tuple[Any, Any]:
            state, info = kernel(key, state)
            return state, (state.position, info.is_divergent)

        _, draws = jax.lax.scan(step, state, jax.random.split(sample_key, num_samples))
        return draws

    init_key, warm_key, sample_key = jax.random.split(jax.random.key(seed), 3)
    start = jax.random.uniform(init_key, (chains, dim), minval=-2.0, maxval=2.0)
    run = jax.jit(jax.vmap(one_chain))
    positions, divergent = run(
        jax.random.split(warm_key, chains), jax.random.split(sample_key, chains), start
    )
    return np.asarray(positions), np.asarray(divergent)


def numpyro_nuts(num_warmup: int, num_samples: int, chains: int, seed: int) -> dict[str, Any]:
    """The same model in NumPyro, sampled with its NUTS (vectorized chains)."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    def eight_schools() -> None:
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
        theta_tilde = numpyro.sample("theta_tilde", dist.Normal(0.0, 1.0).expand([len(Y)]))
        numpyro.sample("y", dist.Normal(mu + tau * theta_tilde, SIGMA), obs=Y)

    mcmc = MCMC(
        NUTS(eight_schools),
        num_warmup=num_warmup,
        num_samples=num_samples,
        num_chains=chains,
        chain_method="vectorized",
        progress_bar=False,
    )
    mcmc.run(jax.random.key(seed))
    draws = mcmc.get_samples(group_by_chain=True)
    return {name: np.asarray(draws[name]) for name in ("mu", "tau")}


def summarize(draws: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Posterior mean and standard deviation of each named array of draws."""
    return {name: {"mean": float(np.mean(v)), "sd": float(np.std(v))} for name, v in draws.items()}


def main(
    num_warmup: int = 1000,
    num_samples: int = 1000,
    chains: int = 4,
    seed: int = 0,
    compare: bool = True,
    all_chains: bool = False,
) -> dict[str, Any]:
    """Sample the posterior with BlackJAX (and NumPyro, if ``compare``) and print summaries.

    Returns:
        ``{"rewritekit": {"mu": {"mean", "sd"}, "tau": {...}}, "divergences": n,
        "prior_draw": {...}, "numpyro": {...} (if compare), "seconds": {...}}``.
    """
    m = model()
    mu0, tau0, _, y0 = forward_sampler(m)(rr.seed(seed))
    print(f"a prior-predictive draw: mu {mu0:.3g}, tau {tau0:.3g}, y {np.round(y0, 1)}")
    if all_chains:  # every chain's density at Stan-like starting points, in one call
        starts = np.random.default_rng(seed).uniform(-2.0, 2.0, size=(chains, 10))
        logps, _ = chains_density(m, chains=chains)(starts)
        print(f"log-density at the {chains} chains' starting points: {np.round(logps, 3)}")
    seconds = {}
    with jax.enable_x64(True):  # f.jax_fn follows the caller's setting: the model is float64
        t0 = time.perf_counter()
        d = density(m)
        positions, divergent = nuts(
            jax_logdensity(d), d.packing.size, num_warmup, num_samples, chains, seed
        )
        seconds["rewritekit + blackjax"] = time.perf_counter() - t0
        mu, tau = jax.vmap(d.constrained.jax_fn)(positions.reshape(-1, d.packing.size))
    result: dict[str, Any] = {
        "rewritekit": summarize({"mu": np.asarray(mu), "tau": np.asarray(tau)}),
        "divergences": int(divergent.sum()),
        "prior_draw": {"mu": float(mu0), "tau": float(tau0)},
        "seconds": seconds,
    }
    if compare:
        with jax.enable_x64(True):
            t0 = time.perf_counter()
            result["numpyro"] = summarize(numpyro_nuts(num_warmup, num_samples, chains, seed))
            seconds["numpyro"] = time.perf_counter() - t0
    _print(result, chains, num_samples)
    return result


def _print(result: dict[str, Any], chains: int, num_samples: int) -> None:
    systems = [s for s in ("rewritekit", "numpyro") if s in result]
    print(f"posterior, {chains} chains x {num_samples} draws (mean / sd):")
    print("| parameter | " + " | ".join(systems) + " |")
    print("|---|" + "---:|" * len(systems))
    for name in ("mu", "tau"):
        cells = [f"{result[s][name]['mean']:.2f} / {result[s][name]['sd']:.2f}" for s in systems]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"divergent transitions (rewritekit + blackjax): {result['divergences']}")
    print("wall time (s): " + ", ".join(f"{k} {v:.1f}" for k, v in result["seconds"].items()))


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=1000, help="adaptation steps per chain")
    parser.add_argument("--samples", type=int, default=1000, help="draws per chain")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-compare", action="store_true", help="skip the NumPyro run")
    parser.add_argument(
        "--all-chains",
        action="store_true",
        help="also evaluate every chain's density in one call (rk.vectorize)",
    )
    args = parser.parse_args()
    main(
        args.warmup,
        args.samples,
        args.chains,
        args.seed,
        compare=not args.no_compare,
        all_chains=args.all_chains,
    )


if __name__ == "__main__":
    _cli()
