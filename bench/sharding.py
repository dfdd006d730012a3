"""A logistic-regression log-density and its gradient over data sharded 8 ways (8 simulated
CPU devices) against the same ``rk.function`` on one device.

``.venv/bin/python bench/sharding.py [--rows 1000000] [--features 10] [--repeats 20]``

The graph is ``logp = sum(y * (X @ w) - log1p(exp(X @ w)))`` and ``rk.grad(logp, w)``, ``X``
of rows x features and ``y`` of 0/1, in float64. Three setups, each in a fresh process:

- **one device**: ``rk.function([X, y, w], [logp, grad])`` in a process with JAX's one CPU
  device, as a user without a mesh runs it;
- **one of 8 devices**: the same function in a process started with
  ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (everything on the first device),
  to tell the cost of splitting the CPU into 8 devices from the cost of sharding;
- **8 devices, sharded**: the same graph compiled with ``in_shardings`` that split the rows
  of ``X`` and ``y`` over a mesh of the 8 devices, ``w`` and the outputs replicated.

The data are placed on the devices (``jax.device_put``, timed as "put") before the first
call, so no call copies them. "rk.function" is the compile call (rewrite and lowering),
"first call" JAX's trace, XLA's compile and the first run; "per call" the median of
``--repeats`` calls after ``--warmup`` more, waited on with ``block_until_ready``. The
imports and a warm-up compile of a small function are paid before anything is timed.
The 8 simulated devices share the machine's cores: on a 2-core machine the sharded figure
says what sharding costs, not what 8 real devices would gain.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

DEVICES = 8
SETUPS = {
    "one device": ("single", 1),
    f"one of {DEVICES} devices": ("single", DEVICES),
    f"{DEVICES} devices, sharded": ("sharded", DEVICES),
}


def _data(rows: int, features: int) -> list[np.ndarray]:
    rng = np.random.default_rng(20261127)
    X = rng.normal(size=(rows, features))
    w_true = rng.normal(size=features) * 0.5
    y = (rng.uniform(size=rows) < 1 / (1 + np.exp(-X @ w_true))) * 1.0
    return [X, y, np.zeros(features) + 0.1]


def worker(mode: str, rows: int, features: int, warmup: int, repeats: int) -> dict:
    """One setup's figures: compile, first call and per-call times, and the outputs."""
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import rewritekit as rk
    import rewritekit.tensor as rt

    rk.function([v := rt.vector("v")], rt.sum(rt.exp(v)))(np.ones(3))  # warm-up, untimed
    data = _data(rows, features)
    X, y = rt.matrix("X", shape=(rows, features)), rt.vector("y", shape=(rows,))
    w = rt.vector("w", shape=(features,))
    logits = X @ w
    logp = rt.sum(y * logits - rt.log1p(rt.exp(logits)))
    outputs = [logp, rk.grad(logp, w)]
    options, places = {}, [jax.devices()[0]] * 3
    if mode == "sharded":
        mesh = jax.make_mesh((DEVICES,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
        by_rows, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
        places = [by_rows, by_rows, replicated]
        options = {"in_shardings": tuple(places), "out_shardings": replicated}

    start = time.perf_counter()
    with jax.enable_x64(True):
        placed = jax.block_until_ready(
            [jax.device_put(d, p) for d, p in zip(data, places, strict=True)]
        )
    put = time.perf_counter() - start

    start = time.perf_counter()
    f = rk.function([X, y, w], outputs, **options)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    value, grad = jax.block_until_ready(f(*placed))
    first = time.perf_counter() - start

    for _ in range(warmup):
        jax.block_until_ready(f(*placed))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(f(*placed))
        times.append(time.perf_counter() - start)
    return {
        "devices": len(placed[0].sharding.device_set),
        "jax_devices": len(jax.devices()),
        "put": put,
        "compile": compile_s,
        "first": first,
        "per_call": statistics.median(times),
        "logp": float(np.asarray(value)),
        "grad": np.asarray(grad).tolist(),
    }


def _run(setup: str, opts: argparse.Namespace) -> dict:
    mode, devices = SETUPS[setup]
    env = dict(os.environ)
    if devices > 1:
        flag = f"--xla_force_host_platform_device_count={devices}"
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {flag}".strip()
    command = [sys.executable, __file__, "--worker", mode]
    for name in ("rows", "features", "warmup", "repeats"):
        command += [f"--{name}", str(getattr(opts, name))]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"sharding bench: the {setup!r} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls after the first")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls (their median)")
    parser.add_argument("--worker", choices=("single", "sharded"), help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        row = worker(opts.worker, opts.rows, opts.features, opts.warmup, opts.repeats)
        print(json.dumps(row))
        return
    print(f"rows {opts.rows:,}, features {opts.features}, median of {opts.repeats} calls")
    print(
        "| setup | devices | put (s) | rk.function (s) | first call (s) | rk.function + first "
        "call (s) | per call (ms) | per call / one device | logp | agree |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    base = None
    for setup in SETUPS:
        row = _run(setup, opts)
        base = base or row
        gap = np.max(np.abs(np.subtract(row["grad"], base["grad"])))
        agree = abs(row["logp"] - base["logp"]) <= 1e-10 * abs(base["logp"]) and gap <= 1e-10 * (
            max(1.0, np.max(np.abs(base["grad"])))
        )
        print(
            f"| {setup} | {row['devices']} of {row['jax_devices']} | {row['put']:.3f} | "
            f"{row['compile']:.3f} | {row['first']:.3f} | {row['compile'] + row['first']:.3f} | "
            f"{row['per_call'] * 1e3:.2f} | {row['per_call'] / base['per_call']:.2f} | "
            f"{row['logp']:.6f} | {'yes' if agree else 'NO'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
