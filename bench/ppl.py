"""The PPL benchmark: the eight-schools log-density and its gradient, compiled by
rewritekit, against the same density hand-written in ``jax.numpy`` and against PyMC.

Run: ``.venv/bin/python bench/ppl.py [--quick] [--pymc-python PATH]``.

The model is ``examples/eight_schools.py`` (non-centred, tau on the log scale, one flat
float64 vector of 10 unconstrained values); the hand-written density is
``eight_schools.hand_logp`` under ``jax.jit(jax.value_and_grad(...))``.

(a) *Per call*, in this process: the hand-written function, ``jax.jit(f.jax_fn)`` (our
graph, jitted by the caller), ``f`` itself (``rk.function``: argument checks included)
and ``f`` with ``trust_input=True`` are called in interleaved rounds, each round the median
of many warm calls waited on with ``block_until_ready``; the table gives the median and
the best of the rounds' medians. On one point the arithmetic is a few µs and dispatch is
most of the time, so the first two are also timed on 1000 points under ``jax.vmap`` (as
1000 chains would call them).

(b) *Compile time*, each system in a fresh process with its libraries imported first (as
``bench/compare.py`` does): for rewritekit, building the graph (model, ``joint_logprob``,
packing, ``rk.grad``), ``rk.function`` (rewrite + lowering) and the first call (JAX's trace
and XLA's compile); for hand-written JAX, the first call (``jax.jit`` is lazy); for PyMC,
``model.compile_logp()`` and ``model.compile_dlogp()`` and their first calls, in PyTensor's
default (C) mode and in its JAX mode. PyTensor's compiled-module cache (``~/.pytensor``)
survives between runs, as for any user, so its C compile is cold only the first time.

PyMC (5.28) needs ``pytensor<2.39`` and so cannot share ``.venv`` with the ``bench``
extra's PyTensor 3; it runs with another interpreter, ``--pymc-python`` (default
``.venv-pymc/bin/python``; create it with ``python3 -m venv .venv-pymc &&
.venv-pymc/bin/pip install pymc "jax==<.venv's jax>"``). Without it, the PyMC rows are
skipped with a message. This file imports only the standard library at the top, so that
interpreter needs neither rewritekit nor the examples.

Writes ``bench/results/ppl.json`` and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DEFAULT_PYMC = ROOT / ".venv-pymc" / "bin" / "python"
SYSTEMS = ("rewritekit", "jax", "pymc_c", "pymc_jax")
HAND = "hand-written jax.jit(value_and_grad)"
Y = [28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0]
SIGMA = [15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0]


def _point() -> Any:
    """The reference point: mu 0, tau 5 (log 5 on the unconstrained scale), theta_tilde 0."""
    import numpy as np

    return np.concatenate([[0.0, np.log(5.0)], np.zeros(8)])


def _median_call(call: Any, minimum: int = 20, budget: float = 0.5) -> tuple[float, int]:
    """Median seconds of warm calls (at least ``minimum``, else until ``budget`` runs out)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < minimum or (time.perf_counter() - start < budget and len(times) < 2000):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def _preload(system: str) -> None:
    sys.path.insert(0, str(HERE))
    from compare import _preload as preload

    preload(system)


def _eight_schools() -> Any:
    sys.path.insert(0, str(ROOT))
    from examples import eight_schools

    return eight_schools


# --- (b) the workers: one system per process --------------------------------------------


def _worker_rewritekit() -> dict[str, Any]:
    import jax

    import rewritekit as rk

    es = _eight_schools()  # imports rewritekit.random and rewritekit.logprob
    _preload("rewritekit")  # and the JAX implementations, which load on a first compile
    t0 = time.perf_counter()
    graph = _density_graph(es, es.model())
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    f = rk.function(*graph)
    compile_s = time.perf_counter() - t0
    x = _point()
    t0 = time.perf_counter()
    value = jax.block_until_ready(f(x))
    first = time.perf_counter() - t0
    per_call, calls = _median_call(lambda: jax.block_until_ready(f(x)))
    return {
        "build_s": build,
        "compile_s": compile_s,
        "first_call_s": first,
        "per_call_s": per_call,
        "calls": calls,
        "nodes_before": len(rk.toposort(graph[1])),
        "nodes_after": len(rk.toposort(f.graph)),
        "values": _values(value),
    }


def _density_graph(es: Any, m: Any) -> tuple[list[Any], list[Any]]:
    """The inputs and outputs ``eight_schools.density`` compiles."""
    packing, logp, grad, _ = es.density_graph(m)
    return [packing.flat], [logp, grad]


def _worker_jax() -> dict[str, Any]:
    import jax

    jax.config.update("jax_enable_x64", True)  # the hand-written baseline computes in float64
    es = _eight_schools()
    fn = jax.jit(jax.value_and_grad(es.hand_logp))
    x = _point()
    t0 = time.perf_counter()
    value = jax.block_until_ready(fn(x))
    first = time.perf_counter() - t0
    per_call, calls = _median_call(lambda: jax.block_until_ready(fn(x)))
    return {
        "build_s": 0.0,
        "compile_s": 0.0,
        "first_call_s": first,
        "per_call_s": per_call,
        "calls": calls,
        "nodes_before": len(jax.make_jaxpr(jax.value_and_grad(es.hand_logp))(x).eqns),
        "values": _values(value),
    }


def _worker_pymc(mode: str | None) -> dict[str, Any]:
    import numpy as np
    import pymc as pm

    if mode == "JAX":
        import jax
        import pytensor.link.jax  # noqa: F401  (imports before timing)

        jax.config.update("jax_enable_x64", True)
    t0 = time.perf_counter()
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta_tilde = pm.Normal("theta_tilde", 0.0, 1.0, shape=8)
        pm.Normal("y", mu + tau * theta_tilde, np.array(SIGMA), observed=np.array(Y))
    build = time.perf_counter() - t0
    point = {"mu": np.array(0.0), "tau_log__": np.log(5.0), "theta_tilde": np.zeros(8)}
    found = {"build_s": build, "compile_s": 0.0, "first_call_s": 0.0, "per_call_s": 0.0}
    outputs = []
    for compile_name in ("compile_logp", "compile_dlogp"):
        t0 = time.perf_counter()
        fn = getattr(model, compile_name)(mode=mode)
        found["compile_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        outputs.append(fn(point))
        found["first_call_s"] += time.perf_counter() - t0
        per_call, found["calls"] = _median_call(lambda fn=fn: fn(point))
        found["per_call_s"] += per_call
    found["values"] = [float(outputs[0]), *map(float, np.ravel(outputs[1]))]
    return found


def _values(value: Any) -> list[float]:
    import numpy as np

    logp, grad = value
    return [float(logp), *map(float, np.ravel(grad))]


def worker(system: str) -> dict[str, Any]:
    """Measure one system's compile and call times (run in its own process)."""
    if system == "rewritekit":
        return _worker_rewritekit()
    if system == "jax":
        return _worker_jax()
    if system in ("pymc_c", "pymc_jax"):
        return _worker_pymc("JAX" if system == "pymc_jax" else None)
    raise SystemExit(f"unknown system {system!r}; known: {', '.join(SYSTEMS)}")


def _run(system: str, python: str, timeout: float, env: dict[str, str] | None = None) -> dict:
    command = [python, __file__, "--worker", system]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        errors = [line for line in lines if "Error" in line.split(":", 1)[0]]
        return {"error": (errors or lines or [f"exit code {done.returncode}"])[-1][:200]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _pymc_version(python: str) -> str | None:
    probe = "import importlib.metadata as m; print(m.version('pymc'), m.version('pytensor'))"
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


# --- (a) per call, interleaved in this process ------------------------------------------


def contenders() -> dict[str, tuple[dict[str, Any], Any]]:
    """``{group: ({name: callable}, argument)}``: one point, and a batch under ``jax.vmap``.

    A single point is a few µs of arithmetic, so its time is mostly dispatch; the batch of
    1000 points (as 1000 chains would be) measures the computation XLA compiled.
    """
    import jax
    import numpy as np

    import rewritekit as rk

    es = _eight_schools()
    inputs, outputs = _density_graph(es, es.model())
    f = rk.function(inputs, outputs)
    hand = jax.value_and_grad(es.hand_logp)
    single = {
        HAND: jax.jit(hand),
        "jax.jit(f.jax_fn)": jax.jit(f.jax_fn),
        "rk.function f": f,
        "f, trust_input": rk.function(inputs, outputs, trust_input=True),
    }
    batch = {HAND: jax.jit(jax.vmap(hand)), "jax.jit(f.jax_fn)": jax.jit(jax.vmap(f.jax_fn))}
    points = np.random.default_rng(0).normal(0.0, 1.0, size=(1000, 10))
    return {"one point": (single, _point()), "1000 points, jax.vmap": (batch, points)}


def per_call(rounds: int, calls: int) -> dict[str, dict[str, dict[str, float]]]:
    """Per-call seconds of each group's callables, in interleaved rounds: each round times
    ``calls`` calls of each callable in turn and keeps their median."""
    import jax

    jax.config.update("jax_enable_x64", True)
    found = {}
    for group, (fns, x) in contenders().items():
        for fn in fns.values():
            for _ in range(20):  # compile, then warm up
                jax.block_until_ready(fn(x))
        medians: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                times = []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    jax.block_until_ready(fn(x))
                    times.append(time.perf_counter() - t0)
                medians[name].append(statistics.median(times))
        found[group] = {
            name: {"median_s": statistics.median(m), "best_s": min(m), "rounds": len(m)}
            for name, m in medians.items()
        }
    return found


# --- report -------------------------------------------------------------------------------


def report(calls: dict[str, dict[str, dict[str, float]]], rows: dict[str, dict[str, Any]]) -> str:
    """Both tables as Markdown."""
    lines = [
        "| input | callable | per call, median of rounds (µs) | best round (µs) | "
        "ratio to hand-written (median) |",
        "|---|---|---:|---:|---:|",
    ]
    for group, found in calls.items():
        base = found[HAND]["median_s"]
        for name, c in found.items():
            lines.append(
                f"| {group} | {name} | {c['median_s'] * 1e6:.2f} | {c['best_s'] * 1e6:.2f} | "
                f"{c['median_s'] / base:.2f} |"
            )
    lines += [
        "",
        "| system | build (s) | compile (s) | first call (s) | compile + first call (s) | "
        "per call (µs) | logp at the reference point |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for system, r in rows.items():
        if "error" in r or "skipped" in r:
            lines.append(f"| {system} | {r.get('error') or r['skipped']} | | | | | |")
            continue
        lines.append(
            f"| {system} | {r['build_s']:.4f} | {r['compile_s']:.4f} | {r['first_call_s']:.4f} | "
            f"{r['compile_s'] + r['first_call_s']:.3f} | {r['per_call_s'] * 1e6:.1f} | "
            f"{r['values'][0]:.10f} |"
        )
    return "\n".join(lines)


def compile_rows(pymc_python: str, found: bool, timeout: float) -> dict[str, dict[str, Any]]:
    """(b): each system in a fresh process. PyMC's C mode runs twice on one fresh PyTensor
    compile directory: cold (it compiles C modules) and warm (it loads them)."""
    rows = {system: _run(system, sys.executable, timeout) for system in ("rewritekit", "jax")}
    if not found:
        skipped = f"skipped: {pymc_python} cannot import pymc (--pymc-python; see bench/ppl.py)"
        print(f"PyMC {skipped}", file=sys.stderr)
        return {**rows, "pymc_c": {"skipped": skipped}, "pymc_jax": {"skipped": skipped}}
    with tempfile.TemporaryDirectory(prefix="ppl-bench-pytensor-") as compiledir:
        env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={compiledir}"}
        rows["pymc_c, cold cache"] = _run("pymc_c", pymc_python, timeout, env)
        rows["pymc_c, warm cache"] = _run("pymc_c", pymc_python, timeout, env)
        rows["pymc_jax"] = _run("pymc_jax", pymc_python, timeout, env)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--pymc-python", default=str(DEFAULT_PYMC), help="a python with pymc")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per worker")
    parser.add_argument("--out", default=str(RESULTS / "ppl.json"))
    parser.add_argument("--worker", metavar="SYSTEM", help="measure one system (internal)")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return
    pymc = _pymc_version(args.pymc_python)
    rows = compile_rows(args.pymc_python, pymc is not None, args.timeout)
    calls = per_call(rounds=5 if args.quick else 15, calls=200 if args.quick else 1000)
    meta = _meta(pymc, args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"meta": meta, "per_call": calls, "compile": rows}
    out.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"# {meta['date']}; {meta['machine']}; {meta['versions']}")
    print(report(calls, rows))


def _meta(pymc: str | None, args: argparse.Namespace) -> dict[str, Any]:
    import platform
    from importlib.metadata import version

    import jax

    versions = {p: version(p) for p in ("rewritekit", "jax", "jaxlib", "numpy")}
    versions["python"] = platform.python_version()
    versions["pymc, its pytensor"] = pymc or "not found"
    sys.path.insert(0, str(HERE))
    from compare import _machine

    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "device": str(jax.devices()[0]),
        "versions": versions,
        "command": " ".join(["bench/ppl.py", *sys.argv[1:]]),
    }


if __name__ == "__main__":
    main()
