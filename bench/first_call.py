"""Where the first call goes: rewriting, tracing and XLA, for rewritekit and hand-written JAX.

``.venv/bin/python bench/first_call.py [--workloads W1:100,W2:1000] [--repeat 3]``

For each workload of ``bench/workloads.py`` (at the sizes given), in a fresh process:
``rk.function`` (check, rewrite, roll, lower), the JAX trace of the lowered function
(``jax.jit(...).lower``: our per-node implementations calling ``jax.numpy``/``lax``) and
XLA's compile (``.compile()``); for the hand-written JAX function its trace and its XLA
compile. Each figure is the median of ``--repeat`` fresh processes. The gradient of W3 and
W5 is built before timing (``rk.grad`` is the user's, not the compile's).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

DEFAULT = "W1:10,W1:100,W2:100,W2:1000,W3:1,W4:1,W5:1"


def worker(name: str, n: int) -> None:
    """Time one workload in this process; print one JSON line."""
    sys.path.insert(0, str(Path(__file__).parent))
    import jax
    import numpy as np
    from workloads import WORKLOADS

    import rewritekit as rk
    import rewritekit.tensor as rt

    jax.config.update("jax_enable_x64", True)
    v = rt.vector("v")  # warm-up: imports and JAX's first compile, paid by neither side
    rk.function([v], rt.sum(rt.exp(v)))(np.ones(3))
    jax.jit(lambda a: a.sum())(np.ones(3))

    workload = WORKLOADS[name]
    args = [jax.numpy.asarray(d) for d in workload.data(n)]
    inputs, outputs = workload.rewritekit(n)
    t0 = time.perf_counter()
    f = rk.function(inputs, outputs, cache=False)
    t1 = time.perf_counter()
    lowered = f.jitted.lower(*args)
    t2 = time.perf_counter()
    lowered.compile()
    t3 = time.perf_counter()
    hand = jax.jit(workload.jax(n))
    t4 = time.perf_counter()
    lowered_hand = hand.lower(*args)
    t5 = time.perf_counter()
    lowered_hand.compile()
    t6 = time.perf_counter()
    row = {
        "rewrite": t1 - t0,
        "trace": t2 - t1,
        "xla": t3 - t2,
        "jax_trace": t5 - t4,
        "jax_xla": t6 - t5,
    }
    print(json.dumps(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=DEFAULT, help="NAME:N,... (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per workload")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        worker(opts.worker[0], int(opts.worker[1]))
        return
    print(
        "| workload | N | rk.function | trace | XLA | rewritekit total | JAX trace | JAX XLA "
        "| JAX total | total / JAX |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for item in opts.workloads.split(","):
        name, n = item.split(":")
        rows = []
        for _ in range(opts.repeat):
            out = subprocess.run(
                [sys.executable, __file__, "--worker", name, n],
                capture_output=True,
                text=True,
                check=True,
            )
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        ours = med["rewrite"] + med["trace"] + med["xla"]
        theirs = med["jax_trace"] + med["jax_xla"]
        print(
            f"| {name} | {n} | {med['rewrite']:.3f} s | {med['trace']:.3f} s | "
            f"{med['xla']:.3f} s | {ours:.3f} s | {med['jax_trace']:.3f} s | "
            f"{med['jax_xla']:.3f} s | {theirs:.3f} s | {ours / theirs:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
