"""rewritekit against PyTensor and hand-written JAX, on the workloads W1-W6, in one run.

Run: ``make bench`` (installs the ``bench`` extra: pytensor, matplotlib), or
``.venv/bin/python bench/compare.py [--quick] [--workloads W1,W5] [--systems ...]``;
one workload alone: ``--workloads W6 --out bench/results/w6.json``.

Every (workload, size, system) is measured in a fresh subprocess (``--worker``), so no
system profits from another's imports, caches or jit cache. The systems:

- ``rewritekit``: ``rk.function(inputs, outputs)`` (rules="default", JAX backend);
- ``pytensor_jax``: ``pytensor.function(..., mode="JAX")``;
- ``pytensor_c``: ``pytensor.function(...)`` in PyTensor's default mode (C backend; its
  compiled-module cache in ~/.pytensor survives between runs, as for any user);
- ``jax``: the same formulas written with ``jax.numpy`` (``jax.value_and_grad`` where the
  workload has a gradient), ``jax.jit``.

Libraries are imported before anything is timed. Measured per run: graph construction,
compile (rewrite + lowering: the ``function`` call;
``jax.jit`` of a Python function is lazy and costs nothing here), the first call (where
JAX traces and XLA compiles), the median of at least 20 warm calls (each waited on with
``block_until_ready``), and Apply nodes before and after rewriting (for hand-written JAX,
the equations of its jaxpr). The outputs' sums are compared across systems as a check that
all four compute the same thing. A workload with a NumPy reference (W6) is checked
harder: each system's first-call outputs must match it to rtol 1e-8 before its warm calls
are timed, or the run fails. A failure (PyTensor's recursion limit, a timeout, a
disagreement) is recorded as such.

Writes ``bench/results/latest.json`` (or ``--out``) and, next to it,
``compile_time.png`` (compile time against graph size, W1-W5; not written when none of
them ran), and prints the table and the ratios.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SYSTEMS = ("rewritekit", "pytensor_jax", "pytensor_c", "jax")
QUICK_SIZES = {"W1": (10, 100), "W2": (10, 100), "W6": (100, 1000)}
PLOTTED = ("W1", "W2", "W3", "W4", "W5")  # W6's graph does not grow with N
RTOL = 1e-8  # against a workload's NumPy reference

sys.path.insert(0, str(HERE))


# --- the worker: one system, one workload, one size -----------------------------------


def _block(value: Any) -> Any:
    import jax

    return jax.block_until_ready(value)


def _checksum(values: Any) -> list[float]:
    import numpy as np

    values = values if isinstance(values, list | tuple) else [values]
    return [float(np.sum(np.asarray(v, dtype=np.float64))) for v in values]


def _check_reference(values: Any, expected: list[Any]) -> float:
    """The largest relative error of the outputs against the reference; raises if it is
    over ``RTOL`` (or the outputs differ in number or shape)."""
    import numpy as np

    values = values if isinstance(values, list | tuple) else [values]
    if len(values) != len(expected):
        raise AssertionError(f"{len(values)} outputs, the reference has {len(expected)}")
    worst = 0.0
    for i, (got, want) in enumerate(zip(values, expected, strict=True)):
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            raise AssertionError(f"output {i}: shape {got.shape}, reference {want.shape}")
        error = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))
        if not error <= RTOL:
            raise AssertionError(
                f"output {i} disagrees with the NumPy reference: relative error {error:.3g} "
                f"> {RTOL:g}"
            )
        worst = max(worst, error)
    return worst


def _per_call(call: Any, minimum: int = 20, budget: float = 1.0) -> tuple[float, int]:
    for _ in range(3):  # warm-up
        call()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < minimum or (time.perf_counter() - start < budget and len(times) < 500):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def _build_rewritekit(workload: Any, n: int, data: list[Any]) -> dict[str, Any]:
    import rewritekit as rk

    t0 = time.perf_counter()
    inputs, outputs = workload.rewritekit(n)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    f = rk.function(inputs, outputs)
    compile_s = time.perf_counter() - t0
    return {
        "build_s": build,
        "compile_s": compile_s,
        "nodes_before": len(rk.toposort(outputs)),
        "nodes_after": len(rk.toposort(f.graph)),
        "call": lambda: _block(f(*data)),
    }


def _build_pytensor(workload: Any, n: int, data: list[Any], mode: str | None) -> dict[str, Any]:
    import pytensor
    from pytensor.graph.traversal import applys_between

    t0 = time.perf_counter()
    inputs, outputs = workload.pytensor(n)
    build = time.perf_counter() - t0
    before = len(list(applys_between(inputs, outputs)))
    t0 = time.perf_counter()
    f = (
        pytensor.function(inputs, outputs, mode=mode)
        if mode
        else pytensor.function(inputs, outputs)
    )
    compile_s = time.perf_counter() - t0
    call = (lambda: _block(f(*data))) if mode == "JAX" else (lambda: f(*data))
    return {
        "build_s": build,
        "compile_s": compile_s,
        "nodes_before": before,
        "nodes_after": len(f.maker.fgraph.apply_nodes),
        "call": call,
    }


def _build_jax(workload: Any, n: int, data: list[Any]) -> dict[str, Any]:
    import jax

    jax.config.update("jax_enable_x64", True)
    t0 = time.perf_counter()
    fn = workload.jax(n)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    jitted = jax.jit(fn)
    compile_s = time.perf_counter() - t0
    return {
        "build_s": build,
        "compile_s": compile_s,
        "nodes_before": None,
        "nodes_after": None,
        "call": lambda: _block(jitted(*data)),
        "count": lambda: len(jax.make_jaxpr(fn)(*data).eqns),
    }


_PRELOAD = {
    "rewritekit": ["rewritekit.backends.jax", "rewritekit.backends.numpy"],
    "pytensor_jax": ["pytensor", "pytensor.link.jax"],
    "pytensor_c": ["pytensor"],
    "jax": [],
}


def _preload(system: str) -> None:
    """Import what the system needs before any timing: imports are a once-per-process cost,
    not part of compiling a graph (JAX alone takes about 0.5 s to import; rewritekit's
    constant folding evaluates with its NumPy backend)."""
    for module in ["jax", "jax.numpy", *_PRELOAD.get(system, [])]:
        importlib.import_module(module)
    if system == "rewritekit":  # the JAX implementations load on the first compile
        from rewritekit.tensor import OP_FAMILIES

        for family in OP_FAMILIES:
            importlib.import_module(f"rewritekit.backends.jax.{family}")


def worker(system: str, name: str, n: int) -> dict[str, Any]:
    """Measure one system on one workload size (run in its own process)."""
    from workloads import WORKLOADS

    workload = WORKLOADS[name]
    data = workload.data(n)
    expected = workload.reference(data) if workload.reference else None
    _preload(system)
    if system == "rewritekit":
        built = _build_rewritekit(workload, n, data)
    elif system == "pytensor_jax":
        built = _build_pytensor(workload, n, data, "JAX")
    elif system == "pytensor_c":
        built = _build_pytensor(workload, n, data, None)
    elif system == "jax":
        built = _build_jax(workload, n, data)
    else:
        raise SystemExit(f"unknown system {system!r}; known: {', '.join(SYSTEMS)}")
    call = built.pop("call")
    count = built.pop("count", None)
    t0 = time.perf_counter()
    values = call()
    built["first_call_s"] = time.perf_counter() - t0
    if expected is not None:  # before any warm call is timed
        built["max_rel_err"] = _check_reference(values, expected)
    built["per_call_s"], built["calls"] = _per_call(call)
    built["checksum"] = _checksum(values)
    if count is not None:
        built["nodes_before"] = count()
    return built


# --- the orchestrator ------------------------------------------------------------------


def _run(system: str, name: str, n: int, timeout: float) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", system, name, str(n)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        errors = [line for line in lines if "Error" in line.split(":", 1)[0]]
        last = (errors or lines or [f"exit code {done.returncode}"])[-1]
        return {"error": last[:200], "wall_s": time.perf_counter() - start}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - start
    return result


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {"python": platform.python_version()}
    for package in ("rewritekit", "jax", "jaxlib", "numpy", "pytensor"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return found


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def _fmt(value: Any, unit: float = 1.0, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value * unit:.{digits}g}"


def _ratio(a: Any, b: Any) -> str:
    if not a or not b:
        return "-"
    return f"{a / b:.3g}"


def report(rows: list[dict[str, Any]]) -> str:
    """The results table and the ratios, as Markdown."""
    lines = [
        "| workload | N | system | nodes before | after | build (s) | compile (s) | "
        "first call (s) | per call (ms) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(
                f"| {r['workload']} | {r['n']} | {r['system']} | failed: {r['error']} | | | | | |"
            )
            continue
        lines.append(
            f"| {r['workload']} | {r['n']} | {r['system']} | {_fmt(r['nodes_before'])} | "
            f"{_fmt(r['nodes_after'])} | {_fmt(r['build_s'])} | {_fmt(r['compile_s'])} | "
            f"{_fmt(r['first_call_s'])} | {_fmt(r['per_call_s'], 1e3)} |"
        )
    lines += [
        "",
        "| workload | N | compile: rk / PyTensor JAX | compile: rk / PyTensor C | "
        "compile + first call: rk / JAX first call | per call: rk / best of JAX, "
        "PyTensor JAX | outputs agree |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for key, group in _groups(rows).items():
        rk, ptj, ptc, jx = (group.get(s, {}) for s in SYSTEMS)
        best = [g["per_call_s"] for g in (jx, ptj) if "per_call_s" in g]
        rk_first = (rk.get("compile_s", 0) + rk.get("first_call_s", 0)) if rk else None
        lines.append(
            f"| {key[0]} | {key[1]} | {_ratio(rk.get('compile_s'), ptj.get('compile_s'))} | "
            f"{_ratio(rk.get('compile_s'), ptc.get('compile_s'))} | "
            f"{_ratio(rk_first, jx.get('first_call_s'))} | "
            f"{_ratio(rk.get('per_call_s'), min(best) if best else None)} | "
            f"{_agree(group)} |"
        )
    return "\n".join(lines)


def _groups(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, dict[str, Any]]]:
    groups: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["workload"], r["n"]), {})[r["system"]] = r
    return groups


def _agree(group: dict[str, dict[str, Any]]) -> str:
    sums = [r["checksum"] for r in group.values() if "checksum" in r]
    if len(sums) < 2:
        return "-"
    ref = sums[0]
    for other in sums[1:]:
        if len(other) != len(ref) or any(
            abs(a - b) > 1e-6 * max(1.0, abs(a)) for a, b in zip(ref, other, strict=True)
        ):
            return "**no**"
    return "yes"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Compile time against graph size (log-log), one line per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = {
        (r["workload"], r["n"]): r["nodes_before"]
        for r in rows
        if r["system"] == "rewritekit" and "nodes_before" in r and r["workload"] in PLOTTED
    }
    if not size:
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    panels = [
        ("compile (rewrite + lowering)", lambda r: r["compile_s"], SYSTEMS[:3]),
        (
            "compile + first call (XLA included)",
            lambda r: r["compile_s"] + r["first_call_s"],
            SYSTEMS,
        ),
    ]
    for ax, (title, value, systems) in zip(axes, panels, strict=True):
        for system in systems:
            points = sorted(
                (size[(r["workload"], r["n"])], value(r))
                for r in rows
                if r["system"] == system and "compile_s" in r and (r["workload"], r["n"]) in size
            )
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, ys, marker="o", label=system)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("graph size (rewritekit Apply nodes before rewriting)")
        ax.set_ylabel("seconds")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("W1-W5: compile time against graph size")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="W1/W2/W6 at small sizes only")
    parser.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6", help="comma-separated")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--out", default=str(RESULTS / "latest.json"))
    parser.add_argument("--worker", nargs=3, metavar=("SYSTEM", "WORKLOAD", "N"))
    args = parser.parse_args()
    if args.worker:
        system, name, n = args.worker
        print(json.dumps(worker(system, name, int(n))))
        return

    from workloads import WORKLOADS

    systems = [s for s in args.systems.split(",") if s]
    rows = []
    for name in args.workloads.split(","):
        workload = WORKLOADS[name]
        sizes = QUICK_SIZES.get(name, workload.sizes) if args.quick else workload.sizes
        for n in sizes:
            for system in systems:
                result = _run(system, name, n, args.timeout)
                row = {"workload": name, "title": workload.title, "n": n, "system": system}
                rows.append({**row, **result})
                status = result.get("error") or f"compile {result['compile_s']:.3f} s"
                print(f"{name} N={n} {system}: {status}", file=sys.stderr, flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "versions": _versions(),
        "command": " ".join(["bench/compare.py", *sys.argv[1:]]),
    }
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    plot(rows, out.parent / "compile_time.png")
    print(
        f"# {meta['date']}; {meta['machine']}; "
        + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    )
    print(report(rows))


if __name__ == "__main__":
    main()
