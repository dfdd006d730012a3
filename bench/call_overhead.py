"""Per-call overhead of ``rk.function`` over the bare ``jax.jit`` callable.

Run: ``.venv/bin/python bench/call_overhead.py [--rounds 15] [--number 20000]``.

The graph is tiny (``x + 1`` on a float64 vector of 4, a static shape) so that the call
is all overhead; the argument is already a JAX float64 array of that shape (the fast path
of the argument checks). Timed, each as ``timeit`` of ``fn(a)``, in interleaved rounds
(reported: the best round's time per call, and the median over rounds of each round's
difference to the bare callable):

- ``jitted``: ``f.jitted``, the bare ``jax.jit`` callable (the floor);
- ``f._fn``: the backend's callable (64-bit switch only);
- ``f trust_input``: ``rk.function(..., trust_input=True)`` (no argument checks);
- ``f``: ``rk.function`` as a user calls it (argument checks, then the backend's callable).

Both with 64-bit JAX on for the whole process (``jax_enable_x64``) and off (rewritekit
then switches it on around each call; the bare callable is timed inside
``with jax.enable_x64(True):``, which a hot loop would hold once).
"""

from __future__ import annotations

import argparse
import json
import statistics
import timeit
from typing import Any


def _time(calls: dict[str, Any], arg: Any, rounds: int, number: int) -> dict[str, list[float]]:
    """Seconds per call of each callable, one figure per round, the callables interleaved
    within each round (so that a slow round is slow for all of them)."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            per = timeit.timeit("fn(a)", globals={"fn": fn, "a": arg}, number=number) / number
            times[name].append(per)
    return times


def measure(rounds: int, number: int) -> dict[str, dict[str, float]]:
    """Seconds per call of each way to call, with 64-bit JAX on and off."""
    import jax
    import jax.numpy as jnp

    import rewritekit as rk
    import rewritekit.tensor as rt

    x = rt.vector("x", shape=(4,))
    f = rk.function([x], x + 1)
    trusted = rk.function([x], x + 1, trust_input=True)
    with jax.enable_x64(True):
        a = jnp.arange(4.0)
        jitted = f.jitted  # read where 64-bit JAX is on
    calls = {"f": f, "f trust_input": trusted, "f._fn": f._fn}
    results = {}
    for x64 in (True, False):
        jax.config.update("jax_enable_x64", x64)
        for fn in [*calls.values(), jitted]:
            with jax.enable_x64(True):
                fn(a)  # compiled and warm
            fn(a)
        if x64:
            times = _time({"jitted": jitted, **calls}, a, rounds, number)
        else:  # the bare callable where a hot loop would hold 64-bit JAX on
            times = {}
            for _ in range(rounds):
                with jax.enable_x64(True):
                    bare = _time({"jitted": jitted}, a, 1, number)
                for name, figures in {**bare, **_time(calls, a, 1, number)}.items():
                    times.setdefault(name, []).extend(figures)
        results["x64 on" if x64 else "x64 off"] = times
    return results


def report(results: dict[str, dict[str, list[float]]]) -> str:
    """A Markdown table: µs per call (the best round), and the overhead over the bare
    callable (the median over rounds of each round's difference)."""
    lines = [
        "| 64-bit JAX | call | µs per call (best round) | over `jitted`, µs (median) |",
        "|---|---|---:|---:|",
    ]
    for setting, row in results.items():
        floor = row["jitted"]
        for name, figures in row.items():
            over = statistics.median(t - b for t, b in zip(figures, floor, strict=True))
            lines.append(f"| {setting} | `{name}` | {min(figures) * 1e6:.2f} | {over * 1e6:+.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--number", type=int, default=10000)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args()
    results = measure(args.rounds, args.number)
    print(json.dumps(results) if args.json else report(results))


if __name__ == "__main__":
    main()
