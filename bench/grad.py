"""Gradient construction: size of the backward graph and time to build it.

Run: ``make bench`` or ``.venv/bin/python bench/grad.py [--quick]``.

- W1 chains (the benchmark suite's elementwise workload): ``y = x``, repeated N times
  ``y = 0.5*log(1 + exp(y)) + y/2 - exp(-y*y)*0.1``, cost ``sum(y)``; N in 10^2..10^4.
- The MLP loss of the benchmark suite's W3 (784-512-512-10, tanh, softmax cross-entropy
  written with exp/log/sum), gradients with respect to all six parameters.

For each: forward Apply nodes, nodes of forward + gradient graph together, their ratio,
and the time ``rk.grad(..., stabilize=False)`` takes (best of three, on a fresh graph each
time; the forward graph is built outside the timing). A linear backward graph has a
constant ratio. (The stabilize rewrite that ``rk.grad`` runs by default is measured in
``bench/pipeline.py``.)
"""

from __future__ import annotations

import argparse
import gc
import platform
import time
from collections.abc import Callable

from workloads import w1_step

import rewritekit as rk
import rewritekit.tensor as rt


def w1(steps: int) -> tuple[rk.Var, list[rk.Var]]:
    x = rt.vector("x")
    y = x
    for _ in range(steps):
        y = w1_step(y, rt.log, rt.exp)
    return rt.sum(y), [x]


def mlp() -> tuple[rk.Var, list[rk.Var]]:
    X, Y = rt.matrix("X", shape=(256, 784)), rt.matrix("Y", shape=(256, 10))
    sizes = [784, 512, 512, 10]
    Ws = [rt.matrix(f"W{i}", shape=(sizes[i], sizes[i + 1])) for i in range(3)]
    bs = [rt.vector(f"b{i}", shape=(sizes[i + 1],)) for i in range(3)]
    h = X
    for i in range(3):
        h = h @ Ws[i] + bs[i]
        if i < 2:
            h = rt.tanh(h)
    log_p = h - rt.log(rt.sum(rt.exp(h), axis=1, keepdims=True))
    return -rt.mean(rt.sum(Y * log_p, axis=1)), [*Ws, *bs]


def measure(build: Callable[[], tuple[rk.Var, list[rk.Var]]]) -> tuple[int, int, float]:
    best = float("inf")
    total = forward = 0
    for _ in range(3):
        cost, wrt = build()
        gc.collect()
        start = time.perf_counter()
        grads = rk.grad(cost, wrt, stabilize=False)
        best = min(best, time.perf_counter() - start)
        forward = len(rk.toposort(cost))
        total = len(rk.toposort([cost, *grads]))
    return forward, total, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N up to 10^3 only")
    args = parser.parse_args()
    steps = [100, 1_000] if args.quick else [100, 1_000, 10_000]
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    print("| graph | forward nodes | with gradient | ratio | rk.grad (s) | µs/forward node |")
    print("|---|---:|---:|---:|---:|---:|")
    cases = [(f"W1, N={n:,}", lambda n=n: w1(n)) for n in steps] + [("MLP loss (W3)", mlp)]
    for label, build in cases:
        forward, total, seconds = measure(build)
        print(
            f"| {label} | {forward:,} | {total:,} | {total / forward:.2f} | {seconds:.3f} | "
            f"{1e6 * seconds / forward:.1f} |"
        )


if __name__ == "__main__":
    main()
