"""XLA compile time of deep chains: catches lowering forms whose compile blows up with depth.

Run: ``make bench`` or ``.venv/bin/python bench/xla_depth.py [--quick] [--ops a,b] [--ks 25,100]``.

Each case is a K-step unrolled chain on a float64 vector of 4, ``y = step(y, k)``, with the
cost ``sum(y)`` and its gradient with respect to the input. Five systems build it:

- ``rewritekit``: the chain in ``rewritekit.tensor``, ``rk.grad`` of the cost, compiled by
  ``rk.function`` (JAX backend, ``rules="default"``);
- ``naive``: the hand-written JAX formula (``log1p(exp(v))`` for softplus), under
  ``jax.jit(jax.value_and_grad(...))``;
- ``library``: the same with ``jax.nn`` / ``jax.scipy`` where they have the function;
- ``unrolled``: rewritekit with ``roll=False`` (in ``rk.grad`` and ``rk.function``): the
  chain's steps stay unrolled, as before chains were rolled into scans;
- ``scan``: the naive step in a hand-written ``lax.scan`` (what rolling aims at).

For each system and K: "first" is everything up to the first result (what a user waits
for): for rewritekit building the graph, ``rk.grad`` and ``rk.function`` (its rewrite:
``build_s`` in the JSON), then the first call; "XLA" is the first call alone (trace, XLA
compile, run); "per call" the best of five means over repeated calls. Each
(case, system) runs in its own process, K ascending; a K that takes longer than the time
limit (``--timeout``, 60 s) is reported as ``> 60 s`` and the larger Ks are not run. The
growth is XLA(K=400) / XLA(K=100), and the same for "first": linear gives about 4.

Results: ``bench/results/xla_depth.json`` and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import json
import platform
import selectors
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "xla_depth.json"
SYSTEMS = ("rewritekit", "unrolled", "naive", "library", "scan")
#: the systems that build a case's step of another system: its own step is its source's
SOURCE = {"unrolled": "rewritekit", "scan": "naive"}

# --- the cases ----------------------------------------------------------------------------
# A case gives its step three times: over rewritekit.tensor (``rt``), as the naive JAX
# formula (``jnp``, ``jsp`` = jax.scipy.special), and with jax.nn / jax.scipy (None where
# JAX has no such function). ``k`` is the step index; the constants keep values moderate.

Step = Callable[[Any, int, Any], Any]


def _shift(k: int, m: int = 5) -> float:
    return 0.1 * (k % m) - 0.2


def _naive_lse(m: Any, v: Any) -> Any:
    return m.log(m.sum(m.exp(v)))


CASES: dict[str, dict[str, Step | None]] = {
    "softplus": {
        "rewritekit": lambda y, k, m: m.rt.softplus(y * 0.5 + _shift(k)) - 0.5,
        "naive": lambda y, k, m: m.jnp.log1p(m.jnp.exp(y * 0.5 + _shift(k))) - 0.5,
        "library": lambda y, k, m: m.nn.softplus(y * 0.5 + _shift(k)) - 0.5,
    },
    "log_sigmoid": {
        "rewritekit": lambda y, k, m: m.rt.log_sigmoid(y * 0.5 + _shift(k)) + 0.5,
        "naive": lambda y, k, m: -m.jnp.log1p(m.jnp.exp(-(y * 0.5 + _shift(k)))) + 0.5,
        "library": lambda y, k, m: m.nn.log_sigmoid(y * 0.5 + _shift(k)) + 0.5,
    },
    "sigmoid": {
        "rewritekit": lambda y, k, m: m.rt.sigmoid(y * 0.8 + _shift(k)) * 2 - 1,
        "naive": lambda y, k, m: 2 / (1 + m.jnp.exp(-(y * 0.8 + _shift(k)))) - 1,
        "library": lambda y, k, m: m.nn.sigmoid(y * 0.8 + _shift(k)) * 2 - 1,
    },
    "log1mexp": {
        "rewritekit": lambda y, k, m: m.rt.log1mexp(-(y * y) * 0.5 - 0.1 - _shift(k) ** 2) * 0.5,
        "naive": lambda y, k, m: (
            m.jnp.log(-m.jnp.expm1(-(y * y) * 0.5 - 0.1 - _shift(k) ** 2)) * 0.5
        ),
        "library": None,
    },
    "xlogy": {
        "rewritekit": lambda y, k, m: m.rt.xlogy(y, y * y + 1 + _shift(k) ** 2) * 0.5,
        "naive": lambda y, k, m: y * m.jnp.log(y * y + 1 + _shift(k) ** 2) * 0.5,
        "library": lambda y, k, m: m.jsp.xlogy(y, y * y + 1 + _shift(k) ** 2) * 0.5,
    },
    "logit": {
        "rewritekit": lambda y, k, m: m.rt.logit(0.5 + 0.4 * m.rt.tanh(y * 0.5 + _shift(k))),
        "naive": lambda y, k, m: m.jnp.log(
            (0.5 + 0.4 * m.jnp.tanh(y * 0.5 + _shift(k)))
            / (0.5 - 0.4 * m.jnp.tanh(y * 0.5 + _shift(k)))
        ),
        "library": lambda y, k, m: m.jsp.logit(0.5 + 0.4 * m.jnp.tanh(y * 0.5 + _shift(k))),
    },
    "erfcx": {
        "rewritekit": lambda y, k, m: m.rt.erfcx(y * 0.5 + _shift(k)) * 1.5,
        "naive": lambda y, k, m: (
            m.jnp.exp((y * 0.5 + _shift(k)) ** 2) * m.jsp.erfc(y * 0.5 + _shift(k)) * 1.5
        ),
        "library": None,
    },
    "log_erfc": {
        "rewritekit": lambda y, k, m: m.rt.log(m.rt.erfc(y * 0.5 + _shift(k))) + 0.5,
        "naive": lambda y, k, m: m.jnp.log(m.jsp.erfc(y * 0.5 + _shift(k))) + 0.5,
        "library": None,
    },
    "clip": {
        "rewritekit": lambda y, k, m: m.rt.clip(y * 1.5 + _shift(k), -1.0, 1.0),
        "naive": lambda y, k, m: m.jnp.minimum(m.jnp.maximum(y * 1.5 + _shift(k), -1.0), 1.0),
        "library": lambda y, k, m: m.jnp.clip(y * 1.5 + _shift(k), -1.0, 1.0),
    },
    "logaddexp": {
        "rewritekit": lambda y, k, m: m.rt.logaddexp(y, y * 0.3 + 1 + _shift(k)) * 0.5,
        "naive": lambda y, k, m: m.jnp.log(m.jnp.exp(y) + m.jnp.exp(y * 0.3 + 1 + _shift(k))) * 0.5,
        "library": lambda y, k, m: m.jnp.logaddexp(y, y * 0.3 + 1 + _shift(k)) * 0.5,
    },
    "logsumexp": {
        "rewritekit": lambda y, k, m: y * 0.5 + m.rt.logsumexp(y + _shift(k)) * 0.1,
        "naive": lambda y, k, m: y * 0.5 + _naive_lse(m.jnp, y + _shift(k)) * 0.1,
        "library": lambda y, k, m: y * 0.5 + m.jsp.logsumexp(y + _shift(k)) * 0.1,
    },
    "log_softmax": {
        "rewritekit": lambda y, k, m: m.rt.log_softmax(y * 0.5 + _shift(k)) * 0.3,
        "naive": lambda y, k, m: (
            (y * 0.5 + _shift(k) - _naive_lse(m.jnp, y * 0.5 + _shift(k))) * 0.3
        ),
        "library": lambda y, k, m: m.nn.log_softmax(y * 0.5 + _shift(k)) * 0.3,
    },
    "softmax": {
        "rewritekit": lambda y, k, m: m.rt.softmax(y * 2 + _shift(k)) * 2,
        "naive": lambda y, k, m: (
            m.jnp.exp(y * 2 + _shift(k)) / m.jnp.sum(m.jnp.exp(y * 2 + _shift(k))) * 2
        ),
        "library": lambda y, k, m: m.nn.softmax(y * 2 + _shift(k)) * 2,
    },
    # the mixes: what the default rules make of plain log/exp chains (W1, W5, the issue's)
    "mix_tanh_softplus": {  # log(1 + exp(y)) becomes softplus
        "rewritekit": lambda y, k, m: m.rt.tanh(y * 0.5 + k % 5) + m.rt.log(1 + m.rt.exp(y)),
        "naive": lambda y, k, m: m.jnp.tanh(y * 0.5 + k % 5) + m.jnp.log1p(m.jnp.exp(y)),
        "library": lambda y, k, m: m.jnp.tanh(y * 0.5 + k % 5) + m.nn.softplus(y),
    },
    "mix_logsigmoid_logaddexp": {
        "rewritekit": lambda y, k, m: (
            m.rt.log_sigmoid(y * 0.7 + k % 3) + m.rt.logaddexp(y, y * 0.3 + 1) * 0.5
        ),
        "naive": lambda y, k, m: (
            -m.jnp.log1p(m.jnp.exp(-(y * 0.7 + k % 3)))
            + m.jnp.log(m.jnp.exp(y) + m.jnp.exp(y * 0.3 + 1)) * 0.5
        ),
        "library": lambda y, k, m: (
            m.nn.log_sigmoid(y * 0.7 + k % 3) + m.jnp.logaddexp(y, y * 0.3 + 1) * 0.5
        ),
    },
    "mix_w1": {  # W1's step; log(1 + exp(y)) becomes softplus
        "rewritekit": lambda y, k, m: (
            0.5 * m.rt.log(1 + m.rt.exp(y)) + y / 2 - m.rt.exp(-y * y) * 0.1
        ),
        "naive": lambda y, k, m: 0.5 * m.jnp.log1p(m.jnp.exp(y)) + y / 2 - m.jnp.exp(-y * y) * 0.1,
        "library": lambda y, k, m: 0.5 * m.nn.softplus(y) + y / 2 - m.jnp.exp(-y * y) * 0.1,
    },
    "mix_w5": {  # W5's term as a step: softplus and sigmoid squared
        "rewritekit": lambda y, k, m: (
            m.rt.log(1 + m.rt.exp(y * 0.5 - k % 3)) + m.rt.sigmoid(y * 0.3) ** 2 - 0.5
        ),
        "naive": lambda y, k, m: (
            m.jnp.log1p(m.jnp.exp(y * 0.5 - k % 3)) + (1 / (1 + m.jnp.exp(-y * 0.3))) ** 2 - 0.5
        ),
        "library": lambda y, k, m: (
            m.nn.softplus(y * 0.5 - k % 3) + m.nn.sigmoid(y * 0.3) ** 2 - 0.5
        ),
    },
}

# --- one measurement (in a worker process) -------------------------------------------------


class _Modules:
    """The namespaces a step reads: ``rt``, ``jnp``, ``nn`` (jax.nn), ``jsp``."""

    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp
        import jax.scipy.special as jsp

        import rewritekit.tensor as rt

        self.rt, self.jnp, self.nn, self.jsp = rt, jnp, jax.nn, jsp


def _compile_rewritekit(
    step: Step, m: _Modules, steps: int, roll: bool = True
) -> Callable[[Any], Any]:
    import rewritekit as rk

    x = m.rt.vector("x", shape=(4,))
    y = x
    for k in range(steps):
        y = step(y, k, m)
    cost = m.rt.sum(y)
    grads = rk.grad(cost, [x], roll=roll)
    return rk.function([x], [cost, *grads], backend="jax", rules="default", roll=roll)


def _compile_unrolled(step: Step, m: _Modules, steps: int) -> Callable[[Any], Any]:
    return _compile_rewritekit(step, m, steps, roll=False)


def _compile_scan(step: Step, m: _Modules, steps: int) -> Callable[[Any], Any]:
    import jax

    def cost(x: Any) -> Any:
        y, _ = jax.lax.scan(lambda y, k: (step(y, k, m), None), x, m.jnp.arange(steps))
        return m.jnp.sum(y)

    return jax.jit(jax.value_and_grad(cost))


def _compile_jax(step: Step, m: _Modules, steps: int) -> Callable[[Any], Any]:
    import jax

    def cost(x: Any) -> Any:
        y = x
        for k in range(steps):
            y = step(y, k, m)
        return m.jnp.sum(y)

    return jax.jit(jax.value_and_grad(cost))


def _per_call(fn: Callable[[Any], Any], x: Any) -> float:
    """Seconds per call: the best of five means, each over about 20 ms of calls."""
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < 0.02 or calls < 3:
        fn(x)
        calls += 1
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn(x)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def _block(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    import jax

    return lambda x: jax.block_until_ready(fn(x))


def worker(case: str, system: str, ks: list[int]) -> None:
    """Measure ``case`` built by ``system`` at each K, one JSON line per K on stdout."""
    import jax

    jax.config.update("jax_enable_x64", True)  # a benchmark process: float64 throughout
    m = _Modules()
    jax.jit(lambda v: v + 1)(np.zeros(4))  # start the backend outside the timings
    step = CASES[case][SOURCE.get(system, system)]
    build = {
        "rewritekit": _compile_rewritekit,
        "unrolled": _compile_unrolled,
        "scan": _compile_scan,
    }.get(system, _compile_jax)
    x = np.linspace(-1.0, 1.0, 4)
    for steps in ks:
        start = time.perf_counter()
        fn = _block(build(step, m, steps))
        built = time.perf_counter()
        out = fn(x)
        end = time.perf_counter()
        row = {
            "k": steps,
            "first_s": end - start,
            "build_s": built - start,  # rewritekit: graph, rk.grad, rk.function's rewrite
            "xla_s": end - built,  # trace, XLA compile and the first call
            "per_call_s": _per_call(fn, x),
            "value": float(np.asarray(out[0])),
        }
        print(json.dumps(row), flush=True)


# --- the driver ----------------------------------------------------------------------------


def _run(case: str, system: str, ks: list[int], timeout: float) -> dict[int, dict[str, Any]]:
    """The worker's rows by K. A K past ``timeout`` seconds gets ``{"timeout": timeout}``, one
    whose worker failed ``{"error": its last line of stderr}``; the larger Ks are not run
    and get the same."""
    command = [sys.executable, __file__, "--worker", case, system, ",".join(map(str, ks))]
    with tempfile.TemporaryFile("w+") as errors:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
        rows = _read_rows(proc, len(ks), timeout)
        proc.kill()
        failed = proc.wait() not in (0, -9) and len(rows) < len(ks)
        errors.seek(0)
        last = (errors.read().strip().splitlines() or ["(no message)"])[-1]
    missing = {"error": last[:200]} if failed else {"timeout": timeout}
    return {steps: rows.get(steps, {"k": steps, **missing}) for steps in ks}


def _read_rows(proc: subprocess.Popen, count: int, timeout: float) -> dict[int, dict[str, Any]]:
    """Up to ``count`` JSON rows from ``proc``, each within ``timeout`` seconds of the last
    (the first has 30 s more, for the imports)."""
    assert proc.stdout is not None
    rows: dict[int, dict[str, Any]] = {}
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        for _ in range(count):
            deadline = time.monotonic() + timeout + (30 if not rows else 0)
            line = ""
            while not line and time.monotonic() < deadline:
                if sel.select(timeout=deadline - time.monotonic()):
                    line = proc.stdout.readline()
                    if not line:
                        break  # the worker ended
            if not line:
                break
            row = json.loads(line)
            rows[row["k"]] = row
    return rows


def _fmt(row: dict[str, Any] | None, key: str) -> str:
    if row is None:
        return "-"
    if "timeout" in row:
        return f"> {row['timeout']:.0f} s"
    if "error" in row:
        return "failed"
    value = row[key]
    return f"{value * 1e6:.1f} µs" if key == "per_call_s" else f"{value:.2f} s"


def _growth(rows: dict[int, dict[str, Any]], lo: int, hi: int, key: str) -> str:
    a, b = rows.get(lo, {}), rows.get(hi, {})
    if key in a and key in b:
        return f"{b[key] / a[key]:.1f}x"
    if key in a and "timeout" in b:
        return f"> {b['timeout'] / a[key]:.0f}x"
    return "-"


def table(results: dict[str, dict[str, dict[int, dict[str, Any]]]], ks: list[int]) -> str:
    """The Markdown table of ``results`` (case -> system -> K -> row)."""
    lo, hi = (100, 400) if {100, 400} <= set(ks) else (ks[0], ks[-1])
    heads = {"first_s": "first", "xla_s": "XLA", "per_call_s": "per call"}
    head = " | ".join(f"{name} K={k}" for name in heads.values() for k in ks)
    lines = [f"| case | system | {head} | XLA K={hi} / K={lo} | first K={hi} / K={lo} |"]
    lines.append("|---|---|" + "---:|" * (3 * len(ks) + 2))
    for case, by_system in results.items():
        for system, rows in by_system.items():
            cells = " | ".join(_fmt(rows.get(k), key) for key in heads for k in ks)
            growth = f"{_growth(rows, lo, hi, 'xla_s')} | {_growth(rows, lo, hi, 'first_s')}"
            lines.append(f"| {case} | {system} | {cells} | {growth} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="K = 25, 100; 30 s limit")
    parser.add_argument("--ops", help="comma-separated cases (default: all): " + ", ".join(CASES))
    parser.add_argument("--ks", help="comma-separated chain lengths (default 25,100,400)")
    parser.add_argument("--timeout", type=float, help="seconds per K (default 60; quick 30)")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="default: all five")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"default {RESULTS.name}")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        case, system, ks = args.worker
        worker(case, system, [int(k) for k in ks.split(",")])
        return
    ks = (
        [int(k) for k in args.ks.split(",")]
        if args.ks
        else [25, 100]
        if args.quick
        else [25, 100, 400]
    )
    timeout = args.timeout or (30.0 if args.quick else 60.0)
    cases = args.ops.split(",") if args.ops else list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f"--ops: unknown case(s) {unknown}; the cases are {list(CASES)}")
    results: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
    for case in cases:
        results[case] = {}
        for system in args.systems.split(","):
            if CASES[case].get(SOURCE.get(system, system)) is not None:
                results[case][system] = _run(case, system, ks, timeout)
                print(f"# {case} {system}: done", file=sys.stderr, flush=True)
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}")
    print(table(results, ks))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"machine": platform.machine(), "python": platform.python_version(), "ks": ks}
    args.out.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
