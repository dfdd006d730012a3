"""Importing JAX code: the cost per jaxpr equation, and ``jax.jit(rk.optimize(fn))`` against
``jax.jit(fn)``.

Run: ``.venv/bin/python bench/jax_import.py [--detail] [--workloads W1:100,W3:1,W5:1]
[--repeat 3]`` (NumPyro, optax and Equinox come with the bench and test extras).

1. *Import*: for the NumPyro log-densities our PPL also has, optax's losses, an Equinox
   MLP and W1/W3/W5 of ``bench/workloads.py`` written in ``jax.numpy`` (W3 and W5 with
   ``jax.value_and_grad``, so their jaxprs hold JAX's backward pass), in float64: the
   trace (``jax.make_jaxpr``, JAX's own cost), then the import (``jaxpr_inputs`` and
   ``import_jaxpr``), the rewrite (``rewrite_for_lowering``: the default rules, then the
   loop pass) and the lowering to the pure JAX function (``JaxBackend().pure_function``),
   as ``rk.optimize`` does them (with the collector paused, as there); each the best of
   ``--repeat`` on a fresh import. The figure is the last three per equation, the
   equations counted through every inner jaxpr (``mapped_share``); the target is under
   50 µs. It is taken twice: as ``rk.optimize`` meets it (the functions imported one after
   another, the trace just before each import), and after ``gc.collect()`` before each
   trace, whose walk over every object of the process leaves the CPU caches cold (the
   column "after a full collection"). ``--detail`` lists every function. Unmapped
   primitives are kept as ``OpaqueJax`` nodes (``opaque=True``, here and in part 2), so
   the share mapped is a column.
2. *Calls*: for each workload, in a fresh process, the first call of
   ``jax.jit(rk.optimize(fn))`` (import, rewrite, lower, JAX trace, XLA compile) and of
   ``jax.jit(fn)`` (trace, compile), then the per-call time of both (best round of
   interleaved timed loops, ``bench/runtime.py``), their outputs checked against each
   other (relative to each output's largest entry).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from workloads import WORKLOADS

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.backends.jax import JaxBackend
from rewritekit.jaxpr import PRIMITIVES, import_jaxpr, jaxpr_inputs
from rewritekit.jaxpr.importer import _CALLS
from rewritekit.rules.library import rewrite_for_lowering

jax.config.update("jax_enable_x64", True)
DEFAULT = "W1:100,W3:1,W5:1"


def mapped_share(closed: Any) -> tuple[int, int, set[str]]:
    """``(mapped, total, unmapped names)`` over the equations of ``closed`` and of every
    jaxpr inside it (``jit``, custom derivatives, ``scan``, ``while``, ``cond``)."""
    mapped, total, unmapped, stack = 0, 0, set(), [closed.jaxpr]
    while stack:
        for eqn in stack.pop().eqns:
            total += 1
            if eqn.primitive.name in PRIMITIVES or eqn.primitive.name in _CALLS:
                mapped += 1
            else:
                unmapped.add(eqn.primitive.name)
            for value in eqn.params.values():
                for inner in value if isinstance(value, tuple) else (value,):
                    inner = getattr(inner, "jaxpr", inner)
                    if hasattr(inner, "eqns"):
                        stack.append(inner)
    return mapped, total, unmapped


# --- the functions ------------------------------------------------------------------------


def _a(*values: Any, dtype: str = "float64") -> np.ndarray:
    return np.asarray(values[0] if len(values) == 1 else values, dtype=dtype)


def densities() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """``name -> (lambda value, *params: dist(*params).log_prob(value), args)``."""
    import numpyro.distributions as nd

    def mvn(loc: Any, cov: Any) -> Any:
        return nd.MultivariateNormal(loc, covariance_matrix=cov)

    x, unit, ints = _a(-1.0, 0.3, 2.0), _a(0.1, 0.7), _a(0, 1, 1, dtype="int64")
    simplex, cov = _a(0.2, 0.5, 0.3), _a([2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5])
    table = {
        "normal": (nd.Normal, x, 0.5, 1.3),
        "halfnormal": (nd.HalfNormal, unit, 1.3),
        "cauchy": (nd.Cauchy, x, 0.5, 2.0),
        "halfcauchy": (nd.HalfCauchy, unit, 2.0),
        "exponential": (nd.Exponential, unit, 2.0),
        "gamma": (nd.Gamma, unit, 2.5, 1.5),
        "inverse_gamma": (nd.InverseGamma, unit, 2.5, 1.5),
        "beta": (nd.Beta, unit, 2.5, 1.5),
        "uniform": (nd.Uniform, unit, 0.0, 1.0),
        "student_t": (nd.StudentT, x, 3.5, 0.5, 2.0),
        "lognormal": (nd.LogNormal, unit, 0.5, 1.2),
        "bernoulli": (nd.BernoulliProbs, ints, 0.3),
        "bernoulli_logit": (nd.BernoulliLogits, ints, -0.4),
        "poisson": (nd.Poisson, ints, 2.5),
        "binomial": (nd.BinomialProbs, ints, 0.3, _a(7, dtype="int64")),
        "categorical": (nd.CategoricalProbs, _a(0, 2, dtype="int64"), simplex),
        "dirichlet": (nd.Dirichlet, simplex, _a(1.5, 2.0, 0.7)),
        "multivariate_normal": (mvn, simplex, _a(0.1, 0.0, -0.2), cov),
    }
    return {
        name: (lambda v, *p, d=dist: d(*p).log_prob(v), (value, *map(np.asarray, params)))
        for name, (dist, value, *params) in table.items()
    }


def losses() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """optax's losses at a batch of 4 (5 classes)."""
    import optax.losses as ol

    rng = np.random.default_rng(17)
    logits, pred, target = (rng.normal(size=(4, 5)) for _ in range(3))
    probs = np.exp(pred) / np.exp(pred).sum(axis=1, keepdims=True)
    labels, bits = _a(0, 3, 1, 4, dtype="int64"), np.tile(_a(0.0, 1.0, 1.0, 0.0, 1.0), (4, 1))
    names_by_args = [
        ((logits, bits), "sigmoid_binary_cross_entropy sigmoid_focal_loss sparsemax_loss"),
        ((logits, bits), "ranking_softmax_loss binary_dice_loss"),
        ((logits, probs), "softmax_cross_entropy safe_softmax_cross_entropy dice_loss"),
        ((logits, probs), "poly_loss_cross_entropy"),
        ((logits, labels), "softmax_cross_entropy_with_integer_labels multiclass_hinge_loss"),
        ((logits, labels), "multiclass_perceptron_loss multiclass_sparsemax_loss"),
        ((pred, target), "huber_loss l2_loss squared_error log_cosh"),
        ((pred, target), "cosine_similarity cosine_distance"),
        ((pred, np.sign(target)), "hinge_loss perceptron_loss"),
        ((np.log(probs), probs[::-1]), "kl_divergence generalized_kl_divergence"),
        ((np.log(probs), np.log(probs[::-1])), "kl_divergence_with_log_targets"),
        ((pred, target, logits), "triplet_margin_loss"),
        ((pred, _a(0, 0, 1, 1, dtype="int64")), "ntxent"),
    ]
    table = {
        name: (getattr(ol, name), args) for args, names in names_by_args for name in names.split()
    }
    ctc = (rng.normal(size=(2, 6, 4)), np.zeros((2, 6)), _a([1, 2, 0], [3, 1, 1], dtype="int64"))
    table["ctc_loss"] = (ol.ctc_loss, (*ctc, bits[:2, :3]))
    return table


def mlps() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """An Equinox MLP (4 -> 16 -> 16 -> 3, ReLU), weights as constants and as inputs."""
    import equinox as eqx

    model = eqx.nn.MLP(4, 3, 16, 2, key=jax.random.key(0))
    params, static = eqx.partition(model, eqx.is_array)
    x = np.random.default_rng(0).normal(size=4)
    return {
        "mlp (weights constant)": (lambda x: model(x), (x,)),
        "mlp (weights inputs)": (lambda p, x: eqx.combine(p, static)(x), (params, x)),
        "mlp, vmap over 256": (lambda x: jax.vmap(model)(x), (np.ones((256, 4)),)),
    }


def workloads(items: str) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    out = {}
    for item in items.split(","):
        name, n = item.split(":")
        out[f"{name}, N={n}"] = (WORKLOADS[name].jax(int(n)), tuple(WORKLOADS[name].data(int(n))))
    return out


# --- part 1: the import ---------------------------------------------------------------


def import_times(
    fn: Callable[..., Any], args: tuple[Any, ...], repeat: int, collect: bool = False
) -> dict[str, Any]:
    """Best seconds of each stage over ``repeat`` fresh imports (with ``collect``, each
    after a full ``gc.collect()``), and the equation counts."""
    best = {"trace": np.inf, "import": np.inf, "rewrite": np.inf, "lower": np.inf}
    for _ in range(repeat):
        if collect:
            gc.collect()
        gc.disable()  # as in rk.optimize's build
        try:
            t0 = time.perf_counter()
            closed = jax.make_jaxpr(lambda *a: fn(*a))(*args)  # a new function: a new trace
            t1 = time.perf_counter()
            inputs = jaxpr_inputs(closed.jaxpr)  # as rk.from_jax makes them
            outputs = import_jaxpr(closed.jaxpr, closed.consts, inputs, opaque=True)
            t2 = time.perf_counter()
            rewritten, _ = rewrite_for_lowering(outputs, "default", roll=False)
            t3 = time.perf_counter()
            JaxBackend().pure_function(inputs, rewritten)
            t4 = time.perf_counter()
        finally:
            gc.enable()
        for stage, seconds in zip(best, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            best[stage] = min(best[stage], seconds)
    mapped, total, _ = mapped_share(closed)
    return {**best, "eqns": total, "mapped": mapped}


Row = tuple[str, dict[str, Any], dict[str, Any]]  # name, as rk.optimize meets it, cold


def import_table(families: dict[str, dict[str, Any]], repeat: int, detail: bool) -> None:
    """Print the per-family summary (and with ``detail`` every function) of part 1."""
    rows: dict[str, list[Row]] = {}
    for family, table in families.items():
        for name, (fn, args) in table.items():
            try:
                warm = import_times(fn, args, repeat)
                cold = import_times(fn, args, repeat, collect=True)
            except Exception as exc:  # a function the importer cannot take: shown, not timed
                print(f"{family} / {name}: failed: {type(exc).__name__}: {exc}"[:300], flush=True)
                continue
            rows.setdefault(family, []).append((name, warm, cold))
    print(
        "| family | functions | equations | mapped | trace (ms) | import (ms) | rewrite (ms) "
        "| lower (ms) | µs per equation | after a full collection | slowest (µs per equation) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for family, found in rows.items():
        total = {
            k: sum(r[k] for _, r, _ in found)
            for k in ("trace", "import", "rewrite", "lower", "eqns", "mapped")
        }
        ours = total["import"] + total["rewrite"] + total["lower"]
        cold = sum(c["import"] + c["rewrite"] + c["lower"] for _, _, c in found)
        name, worst, _ = max(found, key=lambda row: _per_eqn(row[1]))
        print(
            f"| {family} | {len(found)} | {total['eqns']:,} "
            f"| {total['mapped'] / total['eqns']:.0%} "
            f"| {total['trace'] * 1e3:.1f} | {total['import'] * 1e3:.1f} "
            f"| {total['rewrite'] * 1e3:.1f} | {total['lower'] * 1e3:.1f} "
            f"| {ours / total['eqns'] * 1e6:.0f} | {cold / total['eqns'] * 1e6:.0f} "
            f"| {name}: {_per_eqn(worst):.0f} |",
            flush=True,
        )
    every = [row for found in rows.values() for row in found]
    eqns = sum(r["eqns"] for _, r, _ in every)
    print(
        f"\nAll {len(every)} functions, {eqns:,} equations: "
        f"{sum(_ours(r) for _, r, _ in every) / eqns * 1e6:.0f} µs an equation "
        f"({sum(_ours(c) for _, _, c in every) / eqns * 1e6:.0f} after a full collection)."
    )
    small = [row for row in every if row[1]["eqns"] <= 200]
    for label, which in (("", 1), (" after a full collection", 2)):
        if len(small) < 2:
            break
        # what a small function pays whatever its size, and per equation
        counts = np.array([row[which]["eqns"] for row in small], dtype=float)
        slope, fixed = np.polyfit(counts, np.array([_ours(row[which]) for row in small]), 1)
        print(
            f"Fitted over the {len(small)} functions of up to 200 equations{label}: "
            f"{fixed * 1e3:.2f} ms a function + {slope * 1e6:.1f} µs an equation."
        )
    if detail:
        print()
        print(
            "| function | equations | mapped | trace (ms) | import (ms) | rewrite (ms) "
            "| lower (ms) | µs per equation | after a full collection |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, r, c in every:
            print(
                f"| {name} | {r['eqns']} | {r['mapped'] / r['eqns']:.0%} "
                f"| {r['trace'] * 1e3:.1f} | {r['import'] * 1e3:.1f} "
                f"| {r['rewrite'] * 1e3:.1f} | {r['lower'] * 1e3:.1f} | {_per_eqn(r):.0f} "
                f"| {_per_eqn(c):.0f} |"
            )


def cold_probe() -> None:
    """What a full collection does to the next graph-building call: one ``rt.tensor``
    (a cached type, one new Var), median of 50, after nothing, after ``gc.collect()``, and
    after reading and after writing a 128 MB array (which leaves the CPU caches cold too)."""
    big = np.ones(16_000_000)
    befores = {
        "nothing": lambda: None,
        "gc.collect()": gc.collect,
        "reading 128 MB": big.sum,
        "writing 128 MB": lambda: big.fill(1.0),
    }
    cells = []
    for label, before in befores.items():
        times = []
        for _ in range(50):
            before()
            t0 = time.perf_counter()
            rt.tensor("x", shape=(4,), dtype="float64")
            times.append(time.perf_counter() - t0)
        cells.append(f"{label}: {statistics.median(times) * 1e6:.1f} µs")
    print(f"One rt.tensor after {'; '.join(cells)}.")


def _ours(row: dict[str, Any]) -> float:
    return row["import"] + row["rewrite"] + row["lower"]


def _per_eqn(row: dict[str, Any]) -> float:
    return _ours(row) / row["eqns"] * 1e6


# --- part 2: the calls ----------------------------------------------------------------


def worker(name: str, n: int, budget: float, roll: bool = True) -> None:
    """Time one workload's first calls and per-call times in this process; one JSON line."""
    from runtime import per_call

    v = rt.vector("v")  # warm-up: imports and JAX's first compile, paid by neither side
    rk.function([v], rt.sum(rt.exp(v)))(np.ones(3))
    jax.jit(lambda a: a.sum())(np.ones(3))
    ((fn, args),) = workloads(f"{name}:{n}").values()
    args = tuple(jax.numpy.asarray(a) for a in args)
    hand, ours = jax.jit(fn), jax.jit(rk.optimize(fn, opaque=True, roll=roll))
    t0 = time.perf_counter()
    expected = jax.block_until_ready(hand(*args))
    t1 = time.perf_counter()
    got = jax.block_until_ready(ours(*args))
    t2 = time.perf_counter()
    diff = max(
        float(np.max(np.abs(np.asarray(g) - e)) / max(np.max(np.abs(e)), 1e-300))
        for g, e in zip(got, map(np.asarray, expected), strict=True)
    )
    t_hand, t_ours = per_call([hand, ours], args, budget)
    mapped, eqns, _ = mapped_share(jax.make_jaxpr(fn)(*args))
    row = {
        "eqns": eqns,
        "mapped": mapped / eqns,
        "jax_first": t1 - t0,
        "rk_first": t2 - t1,
        "jax_call": t_hand,
        "rk_call": t_ours,
        "diff": diff,
    }
    print(json.dumps(row))


def call_table(items: str, repeat: int, budget: float) -> None:
    """Print part 2: one fresh process per workload and repeat, medians."""
    print(
        "| workload | equations | mapped | jax.jit(fn) first call (s) | jax.jit(rk.optimize(fn)) "
        "first call (s) | ratio | jax.jit(fn) per call (µs) | optimized per call (µs) | ratio "
        "| max rel. difference |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for item, roll in [(i, r) for i in items.split(",") for r in (False, True)]:
        name, n = item.split(":")
        runs = []
        for _ in range(repeat):
            flags = [] if roll else ["--no-roll"]
            done = subprocess.run(
                [sys.executable, __file__, "--worker", name, n, "--budget", str(budget), *flags],
                capture_output=True,
                text=True,
            )
            if done.returncode:
                raise RuntimeError(f"the {name} worker failed:\n{done.stderr[-2000:]}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(
            f"| {name}, N={n}{', roll=True' if roll else ''} | {med['eqns']:,} "
            f"| {med['mapped']:.0%} "
            f"| {med['jax_first']:.3f} | {med['rk_first']:.3f} "
            f"| {med['rk_first'] / med['jax_first']:.2f} | {med['jax_call'] * 1e6:,.1f} "
            f"| {med['rk_call'] * 1e6:,.1f} | {med['rk_call'] / med['jax_call']:.2f} "
            f"| {max(r['diff'] for r in runs):.1e} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=DEFAULT, help="NAME:N,... (default %(default)s)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="imports per function; processes per workload"
    )
    parser.add_argument("--budget", type=float, default=1.0, help="seconds of timed calls a side")
    parser.add_argument("--detail", action="store_true", help="list every function of part 1")
    parser.add_argument("--only", help="comma-separated function names of part 1 (default all)")
    parser.add_argument("--import-only", action="store_true", help="part 1 only")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--no-roll", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        worker(opts.worker[0], int(opts.worker[1]), opts.budget, roll=not opts.no_roll)
        return
    print(f"python {platform.python_version()}, jax {jax.__version__}, {jax.devices()[0]}")
    families = {
        "NumPyro log_prob": densities(),
        "optax losses": losses(),
        "Equinox MLP": mlps(),
        "W1/W3/W5 in jax.numpy": workloads(opts.workloads),
    }
    if opts.only:
        keep = set(opts.only.split(","))
        families = {f: {k: v for k, v in t.items() if k in keep} for f, t in families.items()}
        families = {f: t for f, t in families.items() if t}
    print()
    import_table(families, opts.repeat, opts.detail)
    print()
    cold_probe()
    if not opts.import_only:
        print()
        call_table(opts.workloads, opts.repeat, opts.budget)


if __name__ == "__main__":
    main()
