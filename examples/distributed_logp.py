"""A logistic-regression log-density and its gradient over data sharded across processes.

The same computation as the 8-device test of ``tests/test_sharding.py``, run as several
processes joined by ``jax.distributed.initialize``: each process holds the rows of the data
that its own devices hold, and every process runs the same compiled program on its local
devices; XLA's collectives (gloo on CPU) sum the partial results across processes.

Run on one machine (starts 2 worker processes with 2 CPU devices each, a 4-device mesh, and
checks that each prints the one-process value)::

    .venv/bin/python examples/distributed_logp.py [--num-processes 2] [--cpu-devices 2]

Across hosts, run one worker per host, each naming host 0 as the coordinator::

    python examples/distributed_logp.py --worker --coordinator HOST0 --port 12355 \\
        --num-processes NUM_HOSTS --process-id I   # I = 0 on HOST0, 1 .. NUM_HOSTS-1 elsewhere

Each worker prints one JSON line: its process id, the global device count, the value and
the gradient.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

import rewritekit as rk
import rewritekit.tensor as rt

ROWS, FEATURES = 4096, 5
TIMEOUT = 120.0  # seconds a launch waits for its workers


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The design matrix, the 0/1 outcomes and the weights, the same on every process.

    Example:
        >>> [a.shape for a in data()]
        [(4096, 5), (4096,), (5,)]
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, FEATURES))
    y = (rng.uniform(size=ROWS) < 0.5) * 1.0
    return X, y, rng.normal(size=FEATURES) * 0.1


def reference(seed: int = 0) -> tuple[float, np.ndarray]:
    """The log-density and its gradient in plain NumPy, in one process.

    Example:
        >>> value, grad = reference()
        >>> grad.shape
        (5,)
    """
    X, y, w = data(seed)
    logits = X @ w
    value = np.sum(y * logits - np.logaddexp(0.0, logits))
    return float(value), X.T @ (y - 1.0 / (1.0 + np.exp(-logits)))


def worker(process_id: int, num_processes: int, coordinator: str, cpu_devices: int) -> dict:
    """Join the other processes, evaluate the sharded log-density, and return this
    process's result (its value and gradient are the global ones, replicated)."""
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_num_cpu_devices", cpu_devices)  # CPU only; GPUs are as found
    jax.distributed.initialize(coordinator, num_processes=num_processes, process_id=process_id)

    # one mesh over every process's devices, process 0's first
    mesh = jax.make_mesh((jax.device_count(),), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
    rows, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    X, y, w = rt.matrix("X", shape=(ROWS, FEATURES)), rt.vector("y", shape=(ROWS,)), rt.vector("w")
    logits = rt.shard(X @ w, rows)
    logp = rt.sum(y * logits - rt.log1p(rt.exp(logits)))
    f = rk.function(
        [X, y, w],
        [logp, rk.grad(logp, w)],
        in_shardings=(rows, rows, replicated),
        out_shardings=replicated,
    )

    # this process's block of rows: the rows its devices hold in the mesh above
    X_all, y_all, w_all = data()
    block = ROWS // jax.process_count()
    mine = slice(jax.process_index() * block, (jax.process_index() + 1) * block)
    args = [
        jax.make_array_from_process_local_data(rows, X_all[mine], X_all.shape),
        jax.make_array_from_process_local_data(rows, y_all[mine], y_all.shape),
        jax.make_array_from_process_local_data(replicated, w_all),
    ]
    value, grad = f(*args)
    result = {
        "process": jax.process_index(),
        "devices": jax.device_count(),
        "local_devices": jax.local_device_count(),
        "logp": float(value),
        "grad": np.asarray(grad).tolist(),  # replicated: every process holds all of it
    }
    jax.distributed.shutdown()
    return result


def free_port() -> int:
    """A TCP port free on this machine now (bound to port 0, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(
    num_processes: int = 2, cpu_devices: int = 2, port: int | None = None, timeout: float = TIMEOUT
) -> list[dict[str, Any]]:
    """Start ``num_processes`` workers on this machine, wait for them (at most ``timeout``
    seconds) and return each one's JSON result, in process order.

    Raises:
        RuntimeError: a worker failed or timed out (its stderr's tail is in the message).
    """
    port = free_port() if port is None else port
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--port", str(port)]
    command += ["--num-processes", str(num_processes), "--cpu-devices", str(cpu_devices)]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory() as logs:  # files, not pipes: a full pipe would stall
        paths = [Path(logs, f"worker{i}") for i in range(num_processes)]
        workers = []
        for i, path in enumerate(paths):
            with open(f"{path}.out", "w") as out, open(f"{path}.err", "w") as err:
                argv = [*command, "--process-id", str(i)]
                workers.append(subprocess.Popen(argv, stdout=out, stderr=err, env=env))
        try:
            for w in workers:
                w.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            message = f"distributed_logp: the workers did not finish in {timeout} s"
            raise RuntimeError(message) from None
        finally:
            for w in workers:
                w.kill()
                w.wait()
        outputs = [(Path(f"{p}.out").read_text(), Path(f"{p}.err").read_text()) for p in paths]
    for i, (w, (_, err)) in enumerate(zip(workers, outputs, strict=True)):
        if w.returncode != 0:
            raise RuntimeError(
                f"distributed_logp: worker {i} exited {w.returncode}:\n{err[-2000:]}"
            )
    return [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]


def check(results: list[dict[str, Any]], rtol: float = 1e-12) -> None:
    """Raise ``ValueError`` unless every process's value and gradient are the NumPy ones."""
    value, grad = reference()
    for r in results:
        if abs(r["logp"] - value) > rtol * abs(value):
            raise ValueError(f"process {r['process']}: logp {r['logp']!r}, expected {value!r}")
        error = np.max(np.abs(np.asarray(r["grad"]) - grad))
        if error > rtol * max(1.0, np.max(np.abs(grad))):
            raise ValueError(f"process {r['process']}: gradient off by {error:.3g}")


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help="run one process (default: launch)")
    parser.add_argument("--process-id", type=int, default=0)
    parser.add_argument("--num-processes", type=int, default=2)
    parser.add_argument("--coordinator", default="127.0.0.1", help="host of process 0")
    parser.add_argument("--port", type=int, help="coordinator port (launch: a free one)")
    parser.add_argument("--cpu-devices", type=int, default=2, help="CPU devices per process")
    args = parser.parse_args()
    if args.worker:
        if args.port is None:
            parser.error("--worker needs --port, the same for every process")
        address = f"{args.coordinator}:{args.port}"
        print(json.dumps(worker(args.process_id, args.num_processes, address, args.cpu_devices)))
        return
    results = launch(args.num_processes, args.cpu_devices, args.port)
    check(results)
    for r in results:
        print(
            f"process {r['process']} ({r['local_devices']} of {r['devices']} devices): "
            f"logp {r['logp']:.12f}, grad {np.round(r['grad'], 6).tolist()}"
        )
    print(f"every process agrees with the one-process NumPy value {reference()[0]:.12f}")


if __name__ == "__main__":
    _cli()
