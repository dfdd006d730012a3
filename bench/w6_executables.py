"""W6 per call without Python in the way: the compiled XLA executables of rewritekit's
GARCH(1,1) log-likelihood and gradient and of the hand-written ``lax.scan`` one, called
directly with device arrays, in interleaved rounds in one process.

Run: ``.venv/bin/python bench/w6_executables.py [--lengths 40 60 70 100 150 200 400]``
(about 1 minute). Prints the median over rounds of the mean time of 300 calls, in µs.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from typing import Any

import jax
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import workloads

import rewritekit as rk


def _median_us(fn: Any, data: list[Any], rounds: int = 7, calls: int = 300) -> float:
    for _ in range(100):
        jax.block_until_ready(fn(*data))
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            jax.block_until_ready(fn(*data))
        times.append((time.perf_counter() - start) / calls * 1e6)
    return float(np.median(times))


def executables(n: int) -> tuple[Any, Any, list[Any]]:
    """The two compiled executables for a series of length ``n``, and their inputs."""
    inputs, outputs = workloads._w6_rk(n)
    data = [jax.numpy.asarray(d) for d in workloads._w6_data(n)]
    ours = jax.jit(rk.function(inputs, outputs).jax_fn).lower(*data).compile()
    theirs = jax.jit(workloads._w6_jax(n)).lower(*data).compile()
    return ours, theirs, data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 60, 70, 100, 150, 200, 400])
    args = parser.parse_args()
    print("| T | rewritekit (µs) | hand-written lax.scan (µs) |\n|---:|---:|---:|")
    with jax.enable_x64(True):
        for n in args.lengths:
            ours, theirs, data = executables(n)
            print(f"| {n} | {_median_us(ours, data):.0f} | {_median_us(theirs, data):.0f} |")


if __name__ == "__main__":
    main()
