"""Rewrite-engine throughput: nodes per second, with 50 simple rules, on 10^3..10^5 nodes.

Run: ``make bench`` or ``.venv/bin/python bench/rewrite.py [--quick]``.

Two graphs of the same shape, a chain of steps (6 Apply nodes per step):

- *none match*: every rule's head Op occurs in the graph, but no left side matches, so the
  engine indexes, tries and rejects; this is the cost of running the pipeline over a graph
  that is already in normal form.
- *many match*: each step also holds ``x * 1``, ``exp(log(x))`` and ``0 + x``, which three
  of the rules remove (10 nodes and 3 rewrites per step).

Each time is the best of three runs, on a freshly built graph (so no memo carries over);
it also reports the number of rule attempts and the time per node with the kanren path
(``rewrite(..., kanren=True)``) on the smallest graph, for comparison.
"""

from __future__ import annotations

import argparse
import gc
import platform
import time
from collections.abc import Callable
from typing import Any

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.rules import RuleSet, lvar, rule

a, b = lvar("a"), lvar("b")


def fifty_rules() -> RuleSet:
    """50 plain rules: heads on the graph's Ops (add, multiply, sin, tanh, exp, log, ...)."""
    unary = [rt.sin, rt.cos, rt.tanh, rt.exp, rt.log, rt.sqrt, rt.negative, rt.abs]
    rules = [
        rule(a * 1, a, name="mul_one"),
        rule(rt.exp(rt.log(a)), a, name="exp_log"),
        rule(0 + a, a, name="add_zero"),
    ]
    for outer in unary:
        for inner in unary:
            if len(rules) == 47:
                break
            if outer is inner or (outer, inner) == (rt.exp, rt.log):
                continue
            if outer in (rt.sin, rt.tanh) and inner in (rt.sin, rt.tanh):
                continue  # these occur in the graph; keep the "none match" graph unmatched
            rules.append(
                rule(outer(inner(a)), inner(a), name=f"{outer.name}_{inner.name}")  # type: ignore[attr-defined]
            )
    rules += [
        rule(a * 0, a, name="mul_zero", when=lambda m: False),
        rule(a + (-b), a - b, name="add_neg"),
        rule(rt.log(1 + a), rt.log1p(a), name="log1p"),
    ]
    assert len(rules) == 50, len(rules)
    return RuleSet(rules, name="bench")


def chain(steps: int, matching: bool) -> rk.Var:
    """``steps`` steps of ``y = tanh(y * 1.5 + sin(y)) * 0.5 + y`` (6 Apply nodes a step);
    with ``matching``, each step also wraps ``y`` in ``0 + exp(log(y * 1))`` (4 more)."""
    y = rt.vector("x")
    for _ in range(steps):
        if matching:
            y = 0.0 + rt.exp(rt.log(y * 1.0))
        y = rt.tanh(y * 1.5 + rt.sin(y)) * 0.5 + y
    return y


def timed(fn: Callable[[], Any], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^3 and 10^4 nodes only")
    parser.add_argument("--kanren-nodes", type=int, default=1_000)
    args = parser.parse_args()
    rules = fifty_rules()
    sizes = [1_000, 10_000, 100_000] if not args.quick else [1_000, 10_000]
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    print("| graph | nodes | rewrites | rule attempts | time (s) | nodes/s | µs/node |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for matching in (False, True):
        for size in sizes:
            graph = chain(size // (10 if matching else 6), matching)
            nodes = len(rk.toposort(graph))
            result: list[Any] = []

            def run(graph: rk.Var = graph, result: list[Any] = result) -> None:
                result[:] = [rk.rewrite(graph, rules, trace=True)]

            seconds = timed(run)
            _, trace = result[0]
            label = "many match" if matching else "none match"
            print(
                f"| {label} | {nodes:,} | {len(trace):,} | {trace.attempts:,} | "
                f"{seconds:.3f} | {nodes / seconds:,.0f} | {1e6 * seconds / nodes:.2f} |"
            )
    graph = chain(args.kanren_nodes // 10, True)
    nodes = len(rk.toposort(graph))
    seconds = timed(lambda: rk.rewrite(graph, rules, kanren=True), repeats=1)
    compiled = timed(lambda: rk.rewrite(graph, rules))
    print(
        f"\nkanren path, many match, {nodes:,} nodes: {seconds:.3f} s "
        f"({1e6 * seconds / nodes:.1f} µs/node; compiled matchers {1e6 * compiled / nodes:.1f})"
    )


if __name__ == "__main__":
    main()
