"""How building a joint log-density scales with the number of random variables.

Run: ``.venv/bin/python bench/logprob_build.py [--mixed]``

A chain of N scalar normals, each the next one's mean (``x_i ~ Normal(x_(i-1), 1)``), all
drawn from one chain of keys: ``joint_logprob`` with a value per variable, then
``rk.grad`` of it. Every random variable's graph reaches all earlier ones through its key,
so any per-variable walk of the model would make this quadratic.

``--mixed`` builds a model whose valued quantities cycle through five kinds the rules must
find: a normal (the chain), a half-normal (a composite: its density derived from ``abs``
of a normal), ``exp`` of a normal, the ``cumsum`` of three normals (a random walk), and the
``max`` of three i.i.d. normals (an order statistic); each reads the last chain normal.
"""

from __future__ import annotations

import sys
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


def mixed(n: int) -> list[rk.Var]:
    key, quantities, previous = rr.key(), [], 0.0
    for i in range(n):
        kind = i % 5
        if kind == 0:
            key, previous = rr.normal(key, previous, 1.0)
            quantities.append(previous)
        elif kind == 1:
            key, scale = rr.halfnormal(key, 1.0 + previous**2)
            quantities.append(scale)
        elif kind == 2:
            key, z = rr.normal(key, previous, 1.0)
            quantities.append(rt.exp(z))
        elif kind == 3:
            key, steps = rr.normal(key, previous, 1.0, size=(3,))
            quantities.append(rt.cumsum(steps))
        else:
            key, draws = rr.normal(key, previous, 1.0, size=(3,))
            quantities.append(rt.max(draws))
    return quantities


def main() -> None:
    model = mixed if "--mixed" in sys.argv else chain
    print("| N | joint_logprob (s) | per variable (ms) | rk.grad (s) |")
    print("|---:|---:|---:|---:|")
    for n in (100, 400, 1600, 6400):
        draws = model(n)
        values = {x: rt.tensor(f"v{i}", shape=(None,) * x.ndim) for i, x in enumerate(draws)}
        start = time.perf_counter()
        logp = rl.joint_logprob(values)
        built = time.perf_counter() - start
        start = time.perf_counter()
        rk.grad(logp, list(values.values()))
        differentiated = time.perf_counter() - start
        print(f"| {n} | {built:.3f} | {built / n * 1e3:.3f} | {differentiated:.3f} |")


if __name__ == "__main__":
    main()
