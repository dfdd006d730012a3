"""How building a joint log-density scales with the number of random variables.

Run: ``.venv/bin/python bench/logprob_build.py``

A chain of N scalar normals, each the next one's mean (``x_i ~ Normal(x_(i-1), 1)``), all
drawn from one chain of keys: ``joint_logprob`` with a value per variable, then
``rk.grad`` of it. Every random variable's graph reaches all earlier ones through its key,
so any per-variable walk of the model would make this quadratic.
"""

from __future__ import annotations

import time

import rewritekit as rk
import rewritekit.logprob as rl
import rewritekit.random as rr
import rewritekit.tensor as rt


def chain(n: int) -> list[rk.Var]:
    key, draws, previous = rr.key(), [], 0.0
    for _ in range(n):
        key, previous = rr.normal(key, previous, 1.0)
        draws.append(previous)
    return draws


def main() -> None:
    print("| N | joint_logprob (s) | per variable (ms) | rk.grad (s) |")
    print("|---:|---:|---:|---:|")
    for n in (100, 400, 1600, 6400):
        draws = chain(n)
        values = {x: rt.scalar(f"v{i}") for i, x in enumerate(draws)}
        start = time.perf_counter()
        logp = rl.joint_logprob(values)
        built = time.perf_counter() - start
        start = time.perf_counter()
        rk.grad(logp, list(values.values()))
        differentiated = time.perf_counter() - start
        print(f"| {n} | {built:.3f} | {built / n * 1e3:.3f} | {differentiated:.3f} |")


if __name__ == "__main__":
    main()
