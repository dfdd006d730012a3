"""Compile caches: rk.function's own (in a process) and JAX's persistent one (across).

Run: ``.venv/bin/python bench/compile_cache.py [--workload W5] [--size 1] [--json]``.

Each run is a fresh subprocess (``--worker``) that imports JAX and rewritekit's JAX
implementations before timing anything (as ``bench/compare.py`` does), builds the
workload's graph, and times:

- ``rk.function`` (rewrite + lowering; ``jax.jit`` is lazy) and the first call (JAX traces
  the lowered function to HLO, XLA compiles it or loads it from the persistent cache);
- a second ``rk.function`` of the identical graph (a hit of rk.function's compile
  cache) and its first call (no XLA work: the jitted callable is shared);
- ``rk.function(..., cache=False)`` of the same graph, for contrast (rewrite + lowering
  again; its first call would compile again, and is not timed), and, after
  ``clear_cache()``, a cached compile of it (a miss: the same, plus the copy of the
  rewritten graph over stand-in inputs that the cache entry holds); three of each,
  alternated, each after ``gc.collect()``, the medians reported.

Three processes run in turn: without JAX's persistent cache; with it on over an empty
temporary directory (cold); and again over the directory the cold run filled (warm). The
persistent cache is turned on as a user would, before the first compile::

    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _block(value: Any) -> Any:
    for item in value if isinstance(value, list) else [value]:
        item.block_until_ready()
    return value


def _timed(call: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def worker(name: str, size: int, cache_dir: str | None) -> dict[str, Any]:
    """Time one fresh process's compiles (see the module docstring)."""
    import jax

    if cache_dir is not None:
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    from compare import _preload
    from workloads import WORKLOADS

    import rewritekit as rk
    from rewritekit.compile import clear_cache

    _preload("rewritekit")
    workload = WORKLOADS[name]
    data = workload.data(size)
    inputs, outputs = workload.rewritekit(size)
    f, function_s = _timed(lambda: rk.function(inputs, outputs))
    _, first_call_s = _timed(lambda: _block(f(*data)))
    g, second_function_s = _timed(lambda: rk.function(inputs, outputs))
    _, second_first_call_s = _timed(lambda: _block(g(*data)))
    uncached, missed = [], []
    for _ in range(3):  # alternated, each after a collection, medians reported
        gc.collect()
        uncached.append(_timed(lambda: rk.function(inputs, outputs, cache=False))[1])
        clear_cache()
        gc.collect()
        missed.append(_timed(lambda: rk.function(inputs, outputs))[1])
    return {
        "function_s": function_s,
        "first_call_s": first_call_s,
        "second_function_s": second_function_s,
        "second_first_call_s": second_first_call_s,
        "uncached_function_s": statistics.median(uncached),
        "miss_function_s": statistics.median(missed),
        "shared": g._fn is f._fn,
    }


def _run(name: str, size: int, cache_dir: str | None, timeout: float) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", name, str(size), cache_dir or "-"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker failed ({' '.join(command)}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(name: str, size: int, timeout: float) -> dict[str, dict[str, Any]]:
    """The three fresh-process runs: no persistent cache, cold, warm."""
    results = {"no persistent cache": _run(name, size, None, timeout)}
    with tempfile.TemporaryDirectory(prefix="jax-cache-") as cache_dir:
        results["persistent cache, cold"] = _run(name, size, cache_dir, timeout)
        results["persistent cache, warm"] = _run(name, size, cache_dir, timeout)
        entries = sum(1 for p in Path(cache_dir).rglob("*") if p.is_file())
    results["persistent cache, warm"]["cache_files"] = entries
    return results


def report(name: str, results: dict[str, dict[str, Any]]) -> str:
    """A Markdown table of the runs."""
    lines = [
        f"| {name}, fresh process | `rk.function` (s) | first call (s) | "
        "second `rk.function` (ms) | its first call (ms) | `cache=False` again (s) | "
        "cached miss again (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run, r in results.items():
        lines.append(
            f"| {run} | {r['function_s']:.3f} | {r['first_call_s']:.2f} | "
            f"{r['second_function_s'] * 1e3:.3f} | {r['second_first_call_s'] * 1e3:.3f} | "
            f"{r['uncached_function_s']:.3f} | {r['miss_function_s']:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        name, size, cache_dir = sys.argv[2], int(sys.argv[3]), sys.argv[4]
        print(json.dumps(worker(name, size, None if cache_dir == "-" else cache_dir)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="W5")
    parser.add_argument("--size", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per process")
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args()
    results = measure(args.workload, args.size, args.timeout)
    print(json.dumps(results) if args.json else report(args.workload, results))


if __name__ == "__main__":
    main()
