"""Per-call time of rk.function (JAX backend) against the same computation in jax.numpy + jax.jit.

Run: ``make bench`` or ``.venv/bin/python bench/runtime.py [--quick]``.

Each workload is written twice: with ``rewritekit.tensor`` and compiled by ``rk.function``
(rules=None: this measures lowering and call overhead, not rewriting), and by hand with
``jax.numpy`` under ``jax.jit``. Both run in float64 (x64 enabled for the hand-written
side, as a user of float64 JAX would). Times are the best of several repeats of a timed
loop, per call, including ``block_until_ready``; the three variants are timed in
interleaved rounds. ``trust_input`` skips argument checks; their cost per input is timed
on its own (``CompiledFunction.check_arguments``).
"""

from __future__ import annotations

import argparse
import platform
import timeit
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import rewritekit as rk
import rewritekit.tensor as rt

jax.config.update("jax_enable_x64", True)  # the hand-written baseline computes in float64


def per_call(fns: list[Callable[..., Any]], args: tuple[Any, ...], budget: float) -> list[float]:
    """Best per-call seconds of each function, timed in interleaved rounds.

    Interleaving (A, B, C, A, B, C, ...) and keeping each one's best round makes the
    comparison robust to the machine's drift, which is larger than the µs differences.
    """
    timers = []
    for fn in fns:
        jax.block_until_ready(fn(*args))  # compile and warm up
        timers.append(timeit.Timer(lambda fn=fn: jax.block_until_ready(fn(*args))))
    number, elapsed = 1, 0.0
    while elapsed < budget / 10:
        elapsed = timers[0].timeit(number)
        if elapsed < budget / 10:
            number *= 4
    best = [float("inf")] * len(fns)
    for _ in range(9):
        for i, timer in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number) / number)
    return best


def check_cost(f: rk.CompiledFunction, args: tuple[Any, ...]) -> float:
    """Seconds per input of ``f``'s argument checks alone."""
    number = max(1, 20000 // len(args))
    best = min(timeit.repeat(lambda: f.check_arguments(*args), number=number, repeat=7))
    return best / number / len(args)


def elemwise(n: int) -> dict[str, Any]:
    x, s = rt.vector("x"), rt.scalar("s")
    y = rt.exp(x) * s + rt.log1p(x * x)

    def hand(xv: jax.Array, sv: jax.Array) -> jax.Array:
        return jnp.exp(xv) * sv + jnp.log1p(xv * xv)

    args = (np.linspace(-1.0, 1.0, n), np.float64(0.5))
    return {"inputs": [x, s], "output": y, "hand": hand, "args": args}


def matmul(n: int) -> dict[str, Any]:
    a, b = rt.matrix("a"), rt.matrix("b")
    y = rt.tanh(a @ b + 1.0)

    def hand(av: jax.Array, bv: jax.Array) -> jax.Array:
        return jnp.tanh(av @ bv + 1.0)

    rng = np.random.default_rng(0)
    args = (rng.standard_normal((n, n)), rng.standard_normal((n, n)))
    return {"inputs": [a, b], "output": y, "hand": hand, "args": args}


def many_scalars(n: int) -> dict[str, Any]:
    xs = [rt.scalar(f"x{i}") for i in range(n)]
    y = xs[0]
    for i, x in enumerate(xs[1:], start=1):
        y = y + x * float(i)

    def hand(*values: jax.Array) -> jax.Array:
        total = values[0]
        for i, v in enumerate(values[1:], start=1):
            total = total + v * float(i)
        return total

    args = tuple(np.float64(i) for i in range(n))
    return {"inputs": xs, "output": y, "hand": hand, "args": args}


WORKLOADS: dict[str, Callable[[], dict[str, Any]]] = {
    "elemwise, 10 elements (2 inputs)": lambda: elemwise(10),
    "elemwise, 10^6 elements (2 inputs)": lambda: elemwise(10**6),
    "tanh(A @ B + 1), 512x512 (2 inputs)": lambda: matmul(512),
    "sum of 100 scalar inputs": lambda: many_scalars(100),
    "sum of 1000 scalar inputs": lambda: many_scalars(1000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter timing loops")
    args = parser.parse_args()
    budget = 0.2 if args.quick else 1.0
    print(f"python {platform.python_version()}, jax {jax.__version__}, {jax.devices()[0]}")
    print()
    print(
        "| workload | hand-written jax.jit (µs) | rk.function (µs) | ratio "
        "| rk, trust_input (µs) | ratio | checks per input (µs) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, make in WORKLOADS.items():
        w = make()
        hand = jax.jit(w["hand"])
        f = rk.function(w["inputs"], w["output"], rules=None)
        trusted = rk.function(w["inputs"], w["output"], rules=None, trust_input=True)
        t_hand, t_rk, t_trust = per_call([hand, f, trusted], w["args"], budget)
        per_input = check_cost(f, w["args"])
        print(
            f"| {name} | {t_hand * 1e6:,.1f} | {t_rk * 1e6:,.1f} | {t_rk / t_hand:.2f} "
            f"| {t_trust * 1e6:,.1f} | {t_trust / t_hand:.2f} | {per_input * 1e6:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
