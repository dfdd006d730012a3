"""The default rewrite pipeline on a gradient graph (issue 6's workload W5).

Run: ``make bench`` or ``.venv/bin/python bench/pipeline.py [--quick]``.

W5: ``cost = sum_i log(1 + exp(x*w[i] - i)) + sigmoid(x*i)**2`` for i in range(N) (x a
scalar, w a vector), and its gradient with respect to x and w, differentiated as written
(``stabilize=False``). The graph of cost and gradients (about 8,000 Apply nodes for
N = 200; PyTensor 3.0.7 spends about 20 s rewriting it) is rewritten with
``rules="default"``; reported: nodes before and after, rules fired, attempts, and the
rewrite time (best of three, each on a freshly built graph, since the IR is hash-consed
and a rebuilt graph with the same inputs would reuse the previous run's nodes). Also:
``rk.grad`` with its default ``stabilize=True``, and the rewrite of the stabilized
gradient graph.
"""

from __future__ import annotations

import argparse
import gc
import platform
import time
from collections import Counter

from workloads import w5_cost

import rewritekit as rk
import rewritekit.tensor as rt


def w5(n: int) -> tuple[rk.Var, list[rk.Var]]:
    x, w = rt.scalar("x"), rt.vector("w", shape=(n,))
    return w5_cost(x, w, (rt.log, rt.exp, rt.sigmoid), terms=n), [x, w]


def best_of(
    runs: int, n: int, stabilize: bool
) -> tuple[float, float, int, int, rk.rules.RewriteTrace]:
    best_grad = best_rewrite = float("inf")
    for _ in range(runs):
        cost, wrt = w5(n)
        gc.collect()
        start = time.perf_counter()
        grads = rk.grad(cost, wrt, stabilize=stabilize)
        best_grad = min(best_grad, time.perf_counter() - start)
        outputs = [cost, *grads]
        gc.collect()
        start = time.perf_counter()
        rewritten, trace = rk.rewrite(outputs, "default", trace=True)
        best_rewrite = min(best_rewrite, time.perf_counter() - start)
    return best_grad, best_rewrite, len(rk.toposort(outputs)), len(rk.toposort(rewritten)), trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 50, one run")
    args = parser.parse_args()
    sizes, runs = ([50], 1) if args.quick else ([50, 200, 400], 3)
    print(
        f"# python {platform.python_version()}, {platform.machine()}, {len(rk.rules.default)} rules"
    )
    print("N    | grad  | nodes before | nodes after | fired | attempts | rewrite s | nodes/s")
    for n in sizes:
        for stabilize in (False, True):
            t_grad, t_rw, before, after, trace = best_of(runs, n, stabilize)
            print(
                f"{n:<4} | {'stab' if stabilize else 'raw ':5} | {before:12} | {after:11} | "
                f"{len(trace):5} | {trace.attempts:8} | {t_rw:9.3f} | {trace.nodes / t_rw:7.0f}"
            )
            if n == sizes[-1] and not stabilize:
                counts = Counter(e.rule for e in trace).most_common(8)
                print("     most fired: " + ", ".join(f"{r} x{k}" for r, k in counts))
            print(f"     rk.grad(stabilize={stabilize}): {t_grad:.3f} s")


if __name__ == "__main__":
    main()
