"""posteriordb posteriors sampled with NUTS: rewritekit's compiled density under BlackJAX
against the same model in NumPyro, both checked against posteriordb's reference draws.

Run: ``.venv/bin/python bench/posteriordb.py [--warmup 1000] [--samples 1000] [--chains 4]
[--seed 0] [--only NAME ...] [--no-numpyro]`` (the ``examples`` extra: blackjax, numpyro).

The models are ``bench/posteriordb_models.py`` (the data and the reference draws' mean and
sd per parameter are in ``tests/data/posteriordb``). Per posterior and system:

- *error*: ``max over parameters of |mean - reference mean| / reference sd`` (the parameter
  named); the target is 0.2. A posterior without reference draws is compared with the
  other system instead (NumPyro's mean and sd);
- *divergences*: divergent transitions after warm-up, all chains;
- *steps*: leapfrog steps (gradient evaluations) after warm-up, all chains: the sampling
  time per step compares the cost of one density and gradient, whatever the tree sizes;
- *compile*: for rewritekit, building the graph, ``rk.function`` (rewrite + lowering) and
  XLA's compile of the whole sampler (``jax.jit(...).lower(...).compile()``);
- *sampling*: running the compiled sampler;
- for NumPyro, *total*: ``MCMC.run`` (tracing, XLA's compile and sampling in one: a second
  run on the same ``MCMC`` object compiles again, so the two cannot be told apart).

BlackJAX: Stan's window adaptation (diagonal mass matrix), then NUTS; chains under
``jax.vmap`` start uniformly in [-2, 2] on the unconstrained scale, as Stan's do. NumPyro:
``NUTS`` with its defaults, ``chain_method="vectorized"``. Both run in float64.

Writes ``bench/results/posteriordb.json`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jax
import numpy as np

import rewritekit as rk

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import posteriordb_core as core  # noqa: E402  (bench/ is not a package)
import posteriordb_models as models  # noqa: E402

TARGET = 0.2


def logdensity_with_grad(logp_grad: Any) -> Any:
    """``flat -> logp`` whose JAX gradient is rewritekit's symbolic one (as
    ``examples/eight_schools.jax_logdensity``)."""
    fn = logp_grad.jax_fn

    @jax.custom_vjp
    def logdensity(flat: jax.Array) -> jax.Array:
        return fn(flat)[0]

    def forward(flat: jax.Array) -> tuple[jax.Array, jax.Array]:
        value, grad = fn(flat)
        return value, grad

    logdensity.defvjp(forward, lambda grad, cotangent: (cotangent * grad,))
    return logdensity


def blackjax_sampler(logdensity: Any, num_warmup: int, num_samples: int) -> Any:
    """``(warm keys, sample keys, starts) -> (positions, divergent, steps)``, chains under
    vmap (``steps``: each draw's leapfrog steps)."""
    import blackjax

    warmup = blackjax.window_adaptation(blackjax.nuts, logdensity)

    def one_chain(warm_key: jax.Array, sample_key: jax.Array, start: jax.Array) -> Any:
        (state, parameters), _ = warmup.run(warm_key, start, num_steps=num_warmup)
        kernel = blackjax.nuts(logdensity, **parameters).step

        def step(state: Any, key: jax.Array) -> tuple[Any, Any]:
            state, info = kernel(key, state)
            return state, (state.position, info.is_divergent, info.num_integration_steps)

        return jax.lax.scan(step, state, jax.random.split(sample_key, num_samples))[1]

    return jax.jit(jax.vmap(one_chain))


def run_rewritekit(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Build, compile and sample one posterior; the draws as Stan-named arrays."""
    posterior, data = models.posterior(name), core.load_data(name)
    t0 = time.perf_counter()
    packing, logp, params = core.density_graph(posterior, data)
    logp_grad = rk.function([packing.flat], [logp, rk.grad(logp, packing.flat)])
    constrained = rk.function([packing.flat], list(params.values()))
    sampler = blackjax_sampler(logdensity_with_grad(logp_grad), args.warmup, args.samples)
    init_key, warm_key, sample_key = jax.random.split(jax.random.key(args.seed), 3)
    inputs = (
        jax.random.split(warm_key, args.chains),
        jax.random.split(sample_key, args.chains),
        jax.random.uniform(init_key, (args.chains, packing.size), minval=-2.0, maxval=2.0),
    )
    compiled = sampler.lower(*inputs).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    positions, divergent, steps = jax.block_until_ready(compiled(*inputs))
    sampling_s = time.perf_counter() - t0
    flat = positions.reshape(-1, packing.size)
    values = jax.vmap(constrained.jax_fn)(flat)
    draws = {n: np.asarray(v) for n, v in zip(params, values, strict=True)}
    return {
        "draws": core.stan_names(draws, batch_ndim=1),
        "divergences": int(np.sum(divergent)),
        "steps": int(np.sum(steps)),
        "compile_s": compile_s,
        "sampling_s": sampling_s,
    }


def run_numpyro(name: str, args: argparse.Namespace, sites: list[str]) -> dict[str, Any]:
    """The NumPyro model under NumPyro's NUTS."""
    from numpyro.infer import MCMC, NUTS

    posterior, data = models.posterior(name), core.load_data(name)
    mcmc = MCMC(
        NUTS(posterior.numpyro(data)),
        num_warmup=args.warmup,
        num_samples=args.samples,
        num_chains=args.chains,
        chain_method="vectorized",
        progress_bar=False,
    )
    t0 = time.perf_counter()
    mcmc.run(jax.random.key(args.seed), extra_fields=("diverging", "num_steps"))
    found = jax.block_until_ready(mcmc.get_samples())
    total_s = time.perf_counter() - t0
    draws = {site: np.asarray(found[site]) for site in sites}
    return {
        "draws": core.stan_names(draws, batch_ndim=1),
        "divergences": int(np.sum(mcmc.get_extra_fields()["diverging"])),
        "steps": int(np.sum(mcmc.get_extra_fields()["num_steps"])),
        "total_s": total_s,
    }


def errors(draws: dict[str, np.ndarray], reference: dict[str, dict[str, float]]) -> dict:
    """``{parameter: |mean - reference mean| / reference sd}`` over the reference's names
    (but constants, such as a Cholesky factor's first diagonal entry: sd 0)."""
    return {
        k: abs(float(np.mean(draws[k])) - ref["mean"]) / ref["sd"]
        for k, ref in reference.items()
        if ref["sd"] > 0
    }


def summarize(draws: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """``{parameter: {"mean", "sd"}}`` of the draws."""
    return {k: {"mean": float(np.mean(v)), "sd": float(np.std(v))} for k, v in draws.items()}


def bench(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One posterior, both systems: errors, divergences and times."""
    posterior = models.posterior(name)
    result: dict[str, Any] = {"kind": posterior.kind, "reference": posterior.has_reference}
    found = {"rewritekit": run_rewritekit(name, args)}
    if not args.no_numpyro:
        sites = list(core.density_graph(posterior, core.load_data(name))[2])
        found["numpyro"] = run_numpyro(name, args, sites)
    if posterior.has_reference:
        reference = core.load_reference(name)
    elif "numpyro" in found:
        reference = summarize(found["numpyro"]["draws"])
    else:
        reference = None
    for system, run in found.items():
        row = {k: v for k, v in run.items() if k != "draws"}
        row["summary"] = summarize(run["draws"])
        if reference is not None:
            errs = errors(run["draws"], reference)
            worst = max(errs, key=errs.get)
            row["error"], row["worst"] = errs[worst], worst
        result[system] = row
    return result


def report(results: dict[str, dict[str, Any]]) -> str:
    """The results as a Markdown table, one row per posterior."""
    lines = [
        "| posterior | model | rewritekit: error (parameter) | div. | steps | compile (s) | "
        "sampling (s) | NumPyro: error (parameter) | div. | steps | total (s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        cells = [name, r["kind"]]
        for system in ("rewritekit", "numpyro"):
            row = r.get(system)
            if row is None:
                cells += ["-"] * (5 if system == "rewritekit" else 4)
                continue
            err = f"{row['error']:.3f} ({row['worst']})" if "error" in row else "-"
            if "error" in row and not r["reference"]:
                err = f"{err} vs NumPyro" if system == "rewritekit" else "(the reference)"
            elif "error" in row and row["error"] > TARGET:
                err = f"**{err}**"
            cells += [err, str(row["divergences"]), f"{row['steps'] / 1e3:.0f}k"]
            times = ("compile_s", "sampling_s") if system == "rewritekit" else ("total_s",)
            cells += [f"{row[t]:.1f}" for t in times]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    """Sample the posteriors named on the command line (all by default), print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=1000, help="adaptation steps per chain")
    parser.add_argument("--samples", type=int, default=1000, help="draws per chain")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these posteriors only")
    parser.add_argument("--no-numpyro", action="store_true", help="skip the NumPyro runs")
    parser.add_argument("--out", default=str(HERE / "results" / "posteriordb.json"))
    args = parser.parse_args()
    names = args.only or list(models.POSTERIORS)
    for name in names:
        models.posterior(name)  # an unknown name fails before any sampling
    results = {}
    with jax.enable_x64(True):
        for name in names:
            results[name] = bench(name, args)
            print(report({name: results[name]}).splitlines()[-1], flush=True)
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "device": str(jax.devices()[0]),
        "command": " ".join(["bench/posteriordb.py", *sys.argv[1:]]),
        "settings": {k: getattr(args, k) for k in ("warmup", "samples", "chains", "seed")},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    print(f"# {meta['date']}; {meta['device']}; {meta['command']}")
    print(report(results))
    failed = [n for n, r in results.items() if r["rewritekit"].get("error", 0.0) > TARGET]
    if failed:
        print(f"over {TARGET} reference sd: {', '.join(failed)}")


if __name__ == "__main__":
    main()
