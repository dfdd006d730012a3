"""Build, toposort and replace over chains and wide graphs; print a markdown table.

Run: ``make bench`` or ``.venv/bin/python bench/ir_build.py [--sizes 1000 10000 ...]``.

- chain: ``exp(exp(...exp(x)))``, N nodes deep; replace swaps the leaf, so every node is
  rebuilt (the worst case for replace).
- wide: N products ``x_i * x_j`` of about sqrt(N) scalar inputs, all outputs; replace swaps
  one input, so only the ~2 sqrt(N) products that read it are rebuilt.

Rates are nodes of the graph per second of wall time (one core; the garbage collector on,
as users run). Memory is what stays allocated per node after the build (tracemalloc, in a
separate run, since tracing slows the build).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import rewritekit as rk
import rewritekit.tensor as rt
from rewritekit.ir import Var


def chain(n: int) -> tuple[list[Var], Var]:
    x = rt.vector("x")
    y = x
    for _ in range(n):
        y = rt.exp(y)
    return [y], x


def wide(n: int) -> tuple[list[Var], Var]:
    m = math.isqrt(2 * n) + 1
    xs = [rt.scalar(f"x{i}") for i in range(m)]
    outs: list[Var] = []
    for i in range(m):
        for j in range(i, m):
            if len(outs) == n:
                return outs, xs[0]
            outs.append(xs[i] * xs[j])
    return outs, xs[0]


SHAPES: dict[str, Callable[[int], tuple[list[Var], Var]]] = {"chain": chain, "wide": wide}


def timed(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def measure(shape: str, n: int) -> dict[str, float]:
    build = SHAPES[shape]
    gc.collect()
    t_build, (outs, leaf) = timed(build, n)
    t_topo, order = timed(rk.toposort, outs)
    assert len(order) == n
    del order
    new_leaf = rt.vector("z") if leaf.ndim else rt.scalar("z")
    before = rk.intern_stats().applies_created
    t_replace, new_outs = timed(rk.replace, outs, {leaf: new_leaf})
    rebuilt = rk.intern_stats().applies_created - before
    del outs, new_outs, leaf
    gc.collect()

    tracemalloc.start()
    start_bytes = tracemalloc.get_traced_memory()[0]
    outs, leaf = build(n)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - start_bytes
    tracemalloc.stop()
    del outs, leaf
    gc.collect()
    return {
        "build_s": t_build,
        "topo_s": t_topo,
        "replace_s": t_replace,
        "rebuilt": rebuilt,
        "bytes_per_node": held / n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10**3, 10**4, 10**5, 10**6])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--one", nargs=2, metavar=("SHAPE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # a single measurement, in its own process
        print(json.dumps(measure(args.one[0], int(args.one[1]))))
        return
    print(f"python {platform.python_version()} on {platform.machine()}")
    print()
    print(
        "| graph | nodes | build (nodes/s) | toposort (nodes/s) | build + toposort (s) "
        "| replace one leaf (s) | nodes rebuilt | bytes/node |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for shape in args.shapes:
        for n in args.sizes:
            # Each size runs in a fresh process, so no run pays for freeing the last one.
            run = subprocess.run(
                [sys.executable, __file__, "--one", shape, str(n)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(run.stdout)
            print(
                f"| {shape} | {n:,} | {n / r['build_s']:,.0f} | {n / r['topo_s']:,.0f} "
                f"| {r['build_s'] + r['topo_s']:.2f} | {r['replace_s']:.3f} "
                f"| {r['rebuilt']:,} | {r['bytes_per_node']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
