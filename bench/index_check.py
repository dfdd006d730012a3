"""Per-call cost of the index checks (mode "raise") of compiled JAX functions.

Run: ``.venv/bin/python bench/index_check.py [--rounds 7] [--seconds 0.3]``.

Each workload is compiled four ways and timed per call, outputs waited for
(``block_until_ready``), in interleaved rounds (reported: the median round):

- ``checked``: ``rk.function`` of the graph as written, ``x[idx]`` (mode "raise": the call
  carries a failure flag out of XLA and reads it back before returning);
- ``clip``: the same graph with ``mode="clip"`` on every index (no check);
- ``jax_fn (fill)``: ``jax.jit`` of ``f.jax_fn`` of the checked graph, which reads mode
  "raise" as "fill" (no check, a mask per gather);
- ``jnp``: the same computation written by hand with ``jax.numpy`` and ``jax.jit``
  (``x[idx]``: JAX's own indexing, which clamps).

Workloads (float64; arguments are JAX arrays already on the device, and ``rk.function``
runs with ``trust_input=True`` so that argument checks do not blur the difference):

- W3: the MLP loss and gradient of ``bench/workloads.py``, which has no indexing: the
  checked and unchecked calls are the same code (a graph without indexing nodes in mode
  "raise" pays nothing);
- W3-labels: W3 with integer labels instead of one-hot rows, the loss reading
  ``log_p[arange(256), labels]`` (a gather, and a scatter-add in the gradient);
- gathers: ``x[i1] * x[i2] + x[i3]`` for ``x`` of 10^6 and three index vectors of 10^5
  random entries;
- scalar: ``x[i] * 2`` for ``x`` of 1000 and an integer scalar ``i``: the fixed cost of a
  call with a check (the flag read back, where the others return before XLA is done).

Also reported: the seconds to the first result (compile and first call) of each way.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

WAYS = ("checked", "clip", "jax_fn (fill)", "jnp")


def _mlp_labels(mode: str) -> tuple[list[Any], list[Any]]:
    from workloads import _SIZES

    import rewritekit as rk
    import rewritekit.tensor as rt

    X = rt.matrix("X", shape=(256, 784))
    labels = rt.vector("labels", dtype="int64", shape=(256,))
    params = []
    for k in range(3):
        params.append(rt.matrix(f"W{k + 1}", shape=(_SIZES[k], _SIZES[k + 1])))
        params.append(rt.vector(f"b{k + 1}", shape=(_SIZES[k + 1],)))
    h = X
    for k in range(3):
        h = h @ params[2 * k] + params[2 * k + 1]
        if k < 2:
            h = rt.tanh(h)
    log_p = h - rt.log(rt.sum(rt.exp(h), axis=1, keepdims=True))
    picked = rt.getitem(log_p, (rt.arange(256), labels), mode)
    loss = -rt.mean(picked)
    return [X, labels, *params], [loss, *rk.grad(loss, params)]


def _mlp_labels_jnp() -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def loss(params: list[Any], X: Any, labels: Any) -> Any:
        h = X
        for k in range(3):
            h = h @ params[2 * k] + params[2 * k + 1]
            if k < 2:
                h = jnp.tanh(h)
        log_p = h - jnp.log(jnp.sum(jnp.exp(h), axis=1, keepdims=True))
        return -jnp.mean(log_p[jnp.arange(256), labels])

    value_and_grad = jax.value_and_grad(loss)

    def f(X: Any, labels: Any, *params: Any) -> list[Any]:
        value, grads = value_and_grad(list(params), X, labels)
        return [value, *grads]

    return f


def _gathers(mode: str) -> tuple[list[Any], list[Any]]:
    import rewritekit.tensor as rt

    x = rt.vector("x", shape=(10**6,))
    ids = [rt.vector(f"i{k}", dtype="int64", shape=(10**5,)) for k in (1, 2, 3)]
    a, b, c = (rt.getitem(x, i, mode) for i in ids)
    return [x, *ids], [a * b + c]


def _gathers_jnp() -> Callable[..., Any]:
    return lambda x, i1, i2, i3: [x[i1] * x[i2] + x[i3]]


def _scalar(mode: str) -> tuple[list[Any], list[Any]]:
    import rewritekit.tensor as rt

    x, i = rt.vector("x", shape=(1000,)), rt.scalar("i", dtype="int64")
    return [x, i], [rt.getitem(x, i, mode) * 2]


def _w3(mode: str) -> tuple[list[Any], list[Any]]:
    from workloads import WORKLOADS

    return WORKLOADS["W3"].rewritekit(1)


def _data(name: str) -> list[np.ndarray]:
    from workloads import WORKLOADS

    rng = np.random.default_rng(20)
    if name == "W3":
        return WORKLOADS["W3"].data(1)
    if name == "W3-labels":
        X, Y, *params = WORKLOADS["W3"].data(1)
        return [X, np.argmax(Y, axis=1).astype(np.int64), *params]
    if name == "scalar":
        return [rng.normal(size=1000), np.int64(417)]
    x = rng.normal(size=10**6)
    return [x, *(rng.integers(0, 10**6, size=10**5) for _ in range(3))]


def _workloads() -> dict[str, tuple[Callable[[str], Any], Callable[[], Any]]]:
    from workloads import WORKLOADS

    return {
        "W3": (_w3, lambda: WORKLOADS["W3"].jax(1)),
        "W3-labels": (_mlp_labels, _mlp_labels_jnp),
        "gathers": (_gathers, _gathers_jnp),
        "scalar": (_scalar, lambda: lambda x, i: [x[i] * 2]),
    }


def _ways(build: Callable[[str], Any], hand: Callable[[], Any]) -> dict[str, Callable[..., Any]]:
    import jax

    import rewritekit as rk

    checked = rk.function(*build("raise"), trust_input=True, cache=False)
    clipped = rk.function(*build("clip"), trust_input=True, cache=False)
    return {
        "checked": checked,
        "clip": clipped,
        "jax_fn (fill)": jax.jit(checked.jax_fn),
        "jnp": jax.jit(hand()),
    }


def _wait(result: Any) -> None:
    for value in result if isinstance(result, list) else [result]:
        value.block_until_ready()


def measure(rounds: int, seconds: float) -> dict[str, dict[str, Any]]:
    """Per workload and way: seconds to the first result and per call (each round)."""
    import jax

    jax.config.update("jax_enable_x64", True)
    results: dict[str, dict[str, Any]] = {}
    for name, (build, hand) in _workloads().items():
        args = [jax.device_put(a) for a in _data(name)]
        ways = _ways(build, hand)
        first = {}
        for way, fn in ways.items():
            start = time.perf_counter()
            _wait(fn(*args))
            first[way] = time.perf_counter() - start
        values = {way: np.asarray(fn(*args)[0]) for way, fn in ways.items()}
        for way, value in values.items():  # all four compute the same
            np.testing.assert_allclose(value, values["jnp"], rtol=1e-9, err_msg=f"{name} {way}")
        number = max(1, int(seconds / min(first.values())))
        per_call: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(rounds):
            for way, fn in ways.items():
                start = time.perf_counter()
                for _ in range(number):
                    _wait(fn(*args))
                per_call[way].append((time.perf_counter() - start) / number)
        results[name] = {"first": first, "per_call": per_call}
    return results


def report(results: dict[str, dict[str, Any]]) -> str:
    """A Markdown table: µs per call (median round), ratio to ``jnp``, first call."""
    lines = [
        "| workload | way | µs per call (median) | vs `jnp` | vs `clip` | first call, s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, found in results.items():
        median = {way: statistics.median(t) for way, t in found["per_call"].items()}
        for way in WAYS:
            lines.append(
                f"| {name} | {way} | {median[way] * 1e6:,.1f} | "
                f"{median[way] / median['jnp']:.3f} | {median[way] / median['clip']:.3f} | "
                f"{found['first'][way]:.2f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=0.3, help="per way and round")
    options = parser.parse_args()
    print(report(measure(options.rounds, options.seconds)))


if __name__ == "__main__":
    main()
